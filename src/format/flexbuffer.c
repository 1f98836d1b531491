/*
 * flexbuffer.c — the bounds-checked FlexBuffers map reader of flexbuffer.h
 * (custom operators' options). Nothing is read before its position and width
 * are checked against the buffer; offsets may only point backward.
 */
#include "format/flexbuffer.h"

#include <string.h>

/* FlexBuffers value types used here (flexbuffers.h, enum Type). */
enum {
  FLEX_NULL = 0,
  FLEX_INT = 1,
  FLEX_UINT = 2,
  FLEX_FLOAT = 3,
  FLEX_INDIRECT_INT = 6,
  FLEX_INDIRECT_UINT = 7,
  FLEX_INDIRECT_FLOAT = 8,
  FLEX_MAP = 9,
  FLEX_BOOL = 26
};

static bool valid_width(uint64_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }

/* Unsigned little-endian value of `width` bytes at `pos`. */
static bool read_uint(const uint8_t *data, size_t size, size_t pos, size_t width, uint64_t *out) {
  if (!valid_width(width) || pos > size || size - pos < width) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < width; i++) v |= (uint64_t)data[pos + i] << (8 * i);
  *out = v;
  return true;
}

static bool read_int(const uint8_t *data, size_t size, size_t pos, size_t width, int64_t *out) {
  uint64_t u;
  if (!read_uint(data, size, pos, width, &u)) return false;
  if (width < 8 && (u >> (8 * width - 1)) & 1) u |= ~(uint64_t)0 << (8 * width); /* sign */
  memcpy(out, &u, sizeof *out);
  return true;
}

static bool read_float(const uint8_t *data, size_t size, size_t pos, size_t width, double *out) {
  uint64_t u;
  if ((width != 4 && width != 8) || !read_uint(data, size, pos, width, &u)) return false;
  if (width == 4) {
    uint32_t u32 = (uint32_t)u;
    float f;
    memcpy(&f, &u32, sizeof f);
    *out = f;
  } else {
    memcpy(out, &u, sizeof *out);
  }
  return true;
}

/* The target of the backward offset stored at `pos` (width bytes). */
static bool follow(const uint8_t *data, size_t size, size_t pos, size_t width, size_t *out) {
  uint64_t off;
  if (!read_uint(data, size, pos, width, &off) || off > pos) return false;
  *out = pos - (size_t)off;
  return true;
}

wick_flex_status wick_flex_root_map(const uint8_t *data, size_t size, wick_flex_map *out) {
  memset(out, 0, sizeof *out);
  if (data == NULL || size < 3) return WICK_FLEX_MALFORMED;
  const size_t root_width = data[size - 1];
  const uint8_t packed = data[size - 2];
  if (!valid_width(root_width) || size - 2 < root_width) return WICK_FLEX_MALFORMED;
  if (packed >> 2 != FLEX_MAP) return WICK_FLEX_WRONG_TYPE;
  const size_t w = (size_t)1 << (packed & 3);
  size_t map;
  if (!follow(data, size, size - 2 - root_width, root_width, &map)) return WICK_FLEX_MALFORMED;
  /* Header: [keys offset][keys width][count], W bytes each, just before the values. */
  if (map < 3 * w) return WICK_FLEX_MALFORMED;
  uint64_t count, key_width;
  size_t keys;
  if (!read_uint(data, size, map - w, w, &count) ||
      !read_uint(data, size, map - 2 * w, w, &key_width) || !valid_width(key_width) ||
      !follow(data, size, map - 3 * w, w, &keys))
    return WICK_FLEX_MALFORMED;
  /* Values then one type byte each: count * (w + 1) bytes from the map. */
  if (count > size || (size - map) / (w + 1) < count) return WICK_FLEX_MALFORMED;
  /* Keys: [count] then count offsets of key_width bytes. */
  uint64_t key_count;
  const size_t kw = (size_t)key_width; /* (1, 2, 4 or 8: valid_width above) */
  if (keys < kw || !read_uint(data, size, keys - kw, kw, &key_count) || key_count != count ||
      (size - keys) / kw < count)
    return WICK_FLEX_MALFORMED;
  out->data = data;
  out->size = size;
  out->values = map;
  out->keys = keys;
  out->count = (size_t)count;
  out->width = (uint8_t)w;
  out->key_width = (uint8_t)key_width;
  return WICK_FLEX_OK;
}

/* Compares key i with `key`: 1 equal, 0 different, -1 malformed. */
static int key_equals(const wick_flex_map *m, size_t i, const char *key) {
  size_t str;
  if (!follow(m->data, m->size, m->keys + i * m->key_width, m->key_width, &str)) return -1;
  const uint8_t *end = memchr(m->data + str, 0, m->size - str);
  if (end == NULL) return -1;
  return strcmp((const char *)(m->data + str), key) == 0;
}

/* Finds `key`: its value's position, type and child width. */
static wick_flex_status find(const wick_flex_map *m, const char *key, size_t *pos, int *type,
                             size_t *child_width) {
  if (m->data == NULL) return WICK_FLEX_MALFORMED;
  for (size_t i = 0; i < m->count; i++) {
    int eq = key_equals(m, i, key);
    if (eq < 0) return WICK_FLEX_MALFORMED;
    if (!eq) continue;
    const uint8_t packed = m->data[m->values + m->count * m->width + i]; /* checked at open */
    *pos = m->values + i * m->width;
    *type = packed >> 2;
    *child_width = (size_t)1 << (packed & 3);
    return *type == FLEX_NULL ? WICK_FLEX_ABSENT : WICK_FLEX_OK;
  }
  return WICK_FLEX_ABSENT;
}

/* A numeric value: *is_float says which of *i / *f holds it. */
static wick_flex_status number(const wick_flex_map *m, const char *key, bool allow_float,
                               bool allow_bool, int64_t *i, double *f, bool *is_float) {
  size_t pos, cw;
  int type;
  wick_flex_status st = find(m, key, &pos, &type, &cw);
  if (st != WICK_FLEX_OK) return st;
  size_t w = m->width;
  if (type == FLEX_INDIRECT_INT || type == FLEX_INDIRECT_UINT || type == FLEX_INDIRECT_FLOAT) {
    if (!follow(m->data, m->size, pos, w, &pos)) return WICK_FLEX_MALFORMED;
    w = cw;
    type = type == FLEX_INDIRECT_INT    ? FLEX_INT
           : type == FLEX_INDIRECT_UINT ? FLEX_UINT
                                        : FLEX_FLOAT;
  }
  *is_float = false;
  switch (type) {
    case FLEX_INT:
      return read_int(m->data, m->size, pos, w, i) ? WICK_FLEX_OK : WICK_FLEX_MALFORMED;
    case FLEX_BOOL:
    case FLEX_UINT: {
      if (type == FLEX_BOOL && !allow_bool) return WICK_FLEX_WRONG_TYPE;
      uint64_t u;
      if (!read_uint(m->data, m->size, pos, w, &u) || u > (uint64_t)INT64_MAX)
        return WICK_FLEX_MALFORMED;
      *i = (int64_t)u;
      return WICK_FLEX_OK;
    }
    case FLEX_FLOAT:
      if (!allow_float) return WICK_FLEX_WRONG_TYPE;
      *is_float = true;
      return read_float(m->data, m->size, pos, w, f) ? WICK_FLEX_OK : WICK_FLEX_MALFORMED;
    default: return WICK_FLEX_WRONG_TYPE;
  }
}

wick_flex_status wick_flex_map_int(const wick_flex_map *m, const char *key, int64_t *out) {
  double f;
  bool is_float;
  return number(m, key, false, true, out, &f, &is_float);
}

wick_flex_status wick_flex_map_float(const wick_flex_map *m, const char *key, double *out) {
  int64_t i;
  bool is_float;
  wick_flex_status st = number(m, key, true, false, &i, out, &is_float);
  if (st == WICK_FLEX_OK && !is_float) *out = (double)i;
  return st;
}

wick_flex_status wick_flex_map_bool(const wick_flex_map *m, const char *key, bool *out) {
  int64_t i;
  double f;
  bool is_float;
  wick_flex_status st = number(m, key, false, true, &i, &f, &is_float);
  if (st == WICK_FLEX_OK) *out = i != 0;
  return st;
}
