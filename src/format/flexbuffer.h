/*
 * flexbuffer.h — bounds-checked reading of the FlexBuffers map that carries a
 * custom operator's options (Operator.custom_options with
 * custom_options_format FLEXBUFFERS), e.g. TFLite_Detection_PostProcess's.
 *
 * Only what option maps need: the root must be a map; its values are read by
 * key as integers, floats or booleans (inline or through an indirect offset).
 * The bytes are untrusted: every offset, width, count and type is checked
 * before it is used, all position arithmetic is overflow-checked, and key
 * strings must end inside the buffer.
 *
 * Layout reminders (little-endian; W = a parent's byte width, 1/2/4/8):
 *
 *     buffer end:  [root value (W bytes)][root packed type][W]
 *     packed type: (type << 2) | log2(child byte width)
 *     offsets:     unsigned, W bytes, pointing BACKWARD: target = here - offset
 *     map:         [keys offset][keys byte width][count] | values[count] | types[count]
 *                  (header words and values are W bytes each; a type is one byte)
 *     keys:        a typed vector of KEY: [count] | offsets to NUL-terminated strings
 */
#ifndef WICK_FORMAT_FLEXBUFFER_H
#define WICK_FORMAT_FLEXBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wick_flex_map {
  const uint8_t *data;
  size_t size;
  size_t values;     /* first value */
  size_t keys;       /* first key offset */
  size_t count;      /* entries */
  uint8_t width;     /* byte width of values and header words */
  uint8_t key_width; /* byte width of the key offsets */
} wick_flex_map;

/* What the readers answer. */
typedef enum wick_flex_status {
  WICK_FLEX_OK = 1,
  WICK_FLEX_ABSENT = 0,     /* no such key, or its value is null */
  WICK_FLEX_MALFORMED = -1, /* a bad offset, width, count or string */
  WICK_FLEX_WRONG_TYPE = -2 /* present but not of a type the reader converts */
} wick_flex_status;

/* Opens the root of `size` bytes at `data` as a map. */
wick_flex_status wick_flex_root_map(const uint8_t *data, size_t size, wick_flex_map *out);

/* Value of `key`: INT, UINT or BOOL (and INDIRECT_INT/UINT) as an integer
 * (a UINT above INT64_MAX is MALFORMED); FLOAT, INT or UINT (and the indirect
 * ones) as a double; BOOL, INT or UINT as a boolean (non-zero = true). */
wick_flex_status wick_flex_map_int(const wick_flex_map *m, const char *key, int64_t *out);
wick_flex_status wick_flex_map_float(const wick_flex_map *m, const char *key, double *out);
wick_flex_status wick_flex_map_bool(const wick_flex_map *m, const char *key, bool *out);

#endif /* WICK_FORMAT_FLEXBUFFER_H */
