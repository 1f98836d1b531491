/*
 * flatbuffer.c — the bounds-checked FlatBuffers reader described in flatbuffer.h.
 *
 * Invariant: no function reads a byte it has not first proven to lie inside
 * fb->data[0, fb->size). All position arithmetic is done in uint64_t, so it
 * cannot wrap on 32-bit hosts either.
 */
#include "format/flatbuffer.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "wick reads little-endian FlatBuffers by memcpy and needs a little-endian host"
#endif

static uint16_t rd_u16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint32_t rd_u32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* True when [pos, pos + len) lies inside the buffer. */
static bool in_bounds(const wick_fb *fb, uint64_t pos, uint64_t len) {
  return pos <= fb->size && len <= fb->size - pos;
}

/* Follows the forward uoffset stored at `at` (must be 4-aligned). */
static bool follow_uoffset(const wick_fb *fb, uint64_t at, uint64_t *target) {
  if (at % 4 != 0 || !in_bounds(fb, at, 4)) return false;
  uint32_t off = rd_u32(fb->data + at);
  if (off == 0) return false;
  uint64_t t = at + off;
  if (t >= fb->size) return false;
  *target = t;
  return true;
}

static bool table_at(const wick_fb *fb, uint64_t pos, wick_fb_table *out) {
  if (pos % 4 != 0 || !in_bounds(fb, pos, 4)) return false;
  int32_t soff = (int32_t)rd_u32(fb->data + pos);
  int64_t vt = (int64_t)pos - (int64_t)soff;
  if (vt < 0 || vt % 2 != 0 || !in_bounds(fb, (uint64_t)vt, 4)) return false;
  uint16_t vt_size = rd_u16(fb->data + vt);
  uint16_t tbl_size = rd_u16(fb->data + vt + 2);
  if (vt_size < 4 || vt_size % 2 != 0 || !in_bounds(fb, (uint64_t)vt, vt_size)) return false;
  if (tbl_size < 4 || !in_bounds(fb, pos, tbl_size)) return false;
  out->fb = fb;
  out->pos = (size_t)pos;
  out->vtable = (size_t)vt;
  out->vt_size = vt_size;
  out->size = tbl_size;
  return true;
}

int wick_fb_root(const wick_fb *fb, const char *identifier, wick_fb_table *root_out) {
  if (fb->data == NULL || fb->size < 8) return -1;
  if (identifier != NULL && memcmp(fb->data + 4, identifier, 4) != 0) return -1;
  uint64_t pos;
  if (!follow_uoffset(fb, 0, &pos)) return -1;
  return table_at(fb, pos, root_out) ? 1 : -1;
}

/* Locates field `id` of width `width`: 1 present (*pos set), 0 absent, -1 malformed. */
static int field_pos(const wick_fb_table *t, int id, size_t width, uint64_t *pos) {
  if (id < 0) return 0;
  uint64_t slot = 4 + 2 * (uint64_t)id;
  if (slot + 2 > t->vt_size) return 0;
  uint16_t off = rd_u16(t->fb->data + t->vtable + slot);
  if (off == 0) return 0;
  if ((uint64_t)off + width > t->size) return -1;
  uint64_t p = (uint64_t)t->pos + off;
  if (width > 1 && p % (width > 4 ? 4 : width) != 0) return -1;
  *pos = p;
  return 1;
}

#define SCALAR_GETTER(fn, type)                                   \
  bool fn(const wick_fb_table *t, int id, type dflt, type *out) { \
    uint64_t p;                                                   \
    int r = field_pos(t, id, sizeof(type), &p);                   \
    if (r < 0) return false;                                      \
    if (r == 0) {                                                 \
      *out = dflt;                                                \
      return true;                                                \
    }                                                             \
    memcpy(out, t->fb->data + p, sizeof(type));                   \
    return true;                                                  \
  }

SCALAR_GETTER(wick_fb_u8, uint8_t)
SCALAR_GETTER(wick_fb_i8, int8_t)
SCALAR_GETTER(wick_fb_i32, int32_t)
SCALAR_GETTER(wick_fb_u32, uint32_t)
SCALAR_GETTER(wick_fb_i64, int64_t)
SCALAR_GETTER(wick_fb_u64, uint64_t)
SCALAR_GETTER(wick_fb_f32, float)

int wick_fb_table_field(const wick_fb_table *t, int id, wick_fb_table *out) {
  uint64_t p, target;
  int r = field_pos(t, id, 4, &p);
  if (r <= 0) return r;
  if (!follow_uoffset(t->fb, p, &target)) return -1;
  return table_at(t->fb, target, out) ? 1 : -1;
}

static bool vector_at(const wick_fb *fb, uint64_t pos, size_t elem_size, wick_fb_vector *out) {
  if (pos % 4 != 0 || !in_bounds(fb, pos, 4)) return false;
  uint32_t len = rd_u32(fb->data + pos);
  uint64_t bytes = (uint64_t)len * (uint64_t)elem_size; /* < 2^32 * 8: no overflow */
  if (!in_bounds(fb, pos + 4, bytes)) return false;
  out->fb = fb;
  out->pos = (size_t)(pos + 4);
  out->len = len;
  return true;
}

int wick_fb_vector_field(const wick_fb_table *t, int id, size_t elem_size, wick_fb_vector *out) {
  uint64_t p, target;
  int r = field_pos(t, id, 4, &p);
  if (r <= 0) return r;
  if (!follow_uoffset(t->fb, p, &target)) return -1;
  return vector_at(t->fb, target, elem_size, out) ? 1 : -1;
}

static bool string_at(const wick_fb *fb, uint64_t pos, const char **out, size_t *len_out) {
  wick_fb_vector v;
  if (!vector_at(fb, pos, 1, &v)) return false;
  if (!in_bounds(fb, v.pos, (uint64_t)v.len + 1)) return false;
  if (fb->data[v.pos + v.len] != 0) return false;
  *out = (const char *)(fb->data + v.pos);
  if (len_out) *len_out = v.len;
  return true;
}

int wick_fb_string_field(const wick_fb_table *t, int id, const char **out, size_t *len_out) {
  uint64_t p, target;
  int r = field_pos(t, id, 4, &p);
  if (r <= 0) return r;
  if (!follow_uoffset(t->fb, p, &target)) return -1;
  return string_at(t->fb, target, out, len_out) ? 1 : -1;
}

uint8_t wick_fb_vec_u8(const wick_fb_vector *v, uint32_t i) { return v->fb->data[v->pos + i]; }

int32_t wick_fb_vec_i32(const wick_fb_vector *v, uint32_t i) {
  int32_t x;
  memcpy(&x, v->fb->data + v->pos + 4 * (size_t)i, sizeof x);
  return x;
}

int64_t wick_fb_vec_i64(const wick_fb_vector *v, uint32_t i) {
  int64_t x;
  memcpy(&x, v->fb->data + v->pos + 8 * (size_t)i, sizeof x);
  return x;
}

float wick_fb_vec_f32(const wick_fb_vector *v, uint32_t i) {
  float x;
  memcpy(&x, v->fb->data + v->pos + 4 * (size_t)i, sizeof x);
  return x;
}

int wick_fb_vec_table(const wick_fb_vector *v, uint32_t i, wick_fb_table *out) {
  uint64_t target;
  if (i >= v->len) return -1;
  if (!follow_uoffset(v->fb, (uint64_t)v->pos + 4 * (uint64_t)i, &target)) return -1;
  return table_at(v->fb, target, out) ? 1 : -1;
}

int wick_fb_vec_string(const wick_fb_vector *v, uint32_t i, const char **out, size_t *len_out) {
  uint64_t target;
  if (i >= v->len) return -1;
  if (!follow_uoffset(v->fb, (uint64_t)v->pos + 4 * (uint64_t)i, &target)) return -1;
  return string_at(v->fb, target, out, len_out) ? 1 : -1;
}
