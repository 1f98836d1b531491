/*
 * flatbuffer.h — bounds-checked reading of FlatBuffers, the container of .tflite.
 *
 * Every accessor here verifies what it touches before reading it: offsets are
 * aligned, non-zero, inside the buffer and computed without overflow; a vtable
 * is even-sized, at least 4 bytes and inside the buffer; a field lies inside
 * its table; a vector's byte length is computed in 64 bits; a string's NUL is
 * inside the buffer. Nothing here knows the TFLite schema (see schema.h).
 *
 * Layout reminders (all little-endian):
 *
 *     table:   [int32 soffset to vtable][fields ...]      vtable = table - soffset
 *     vtable:  [u16 vtable bytes][u16 table bytes][u16 field 0 offset][u16 field 1] ...
 *     vector:  [u32 count][elements ...]                   reached through a forward u32 offset
 *     string:  a byte vector followed by a NUL
 *
 * Calls returning `int` answer 1 (present), 0 (absent: use the default) or
 * -1 (present but malformed). Scalars are read with memcpy, so no access is
 * ever misaligned even when the file is.
 */
#ifndef WICK_FORMAT_FLATBUFFER_H
#define WICK_FORMAT_FLATBUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wick_fb {
  const uint8_t *data;
  size_t size;
} wick_fb;

typedef struct wick_fb_table {
  const wick_fb *fb;
  size_t pos;       /* start of the table (its soffset) */
  size_t vtable;    /* start of its vtable */
  uint16_t vt_size; /* bytes in the vtable */
  uint16_t size;    /* bytes in the table */
} wick_fb_table;

typedef struct wick_fb_vector {
  const wick_fb *fb;
  size_t pos;   /* first element */
  uint32_t len; /* element count */
} wick_fb_vector;

/* Reads the root table and checks the 4-byte file identifier (may be NULL). */
int wick_fb_root(const wick_fb *fb, const char *identifier, wick_fb_table *root_out);

/* Scalar fields; `out` receives `dflt` when the field is absent. Returns 0 if
 * the field is malformed (outside its table or misaligned), else 1. */
bool wick_fb_u8(const wick_fb_table *t, int id, uint8_t dflt, uint8_t *out);
bool wick_fb_i8(const wick_fb_table *t, int id, int8_t dflt, int8_t *out);
bool wick_fb_i32(const wick_fb_table *t, int id, int32_t dflt, int32_t *out);
bool wick_fb_u32(const wick_fb_table *t, int id, uint32_t dflt, uint32_t *out);
bool wick_fb_i64(const wick_fb_table *t, int id, int64_t dflt, int64_t *out);
bool wick_fb_u64(const wick_fb_table *t, int id, uint64_t dflt, uint64_t *out);
bool wick_fb_f32(const wick_fb_table *t, int id, float dflt, float *out);

/* Reference fields. */
int wick_fb_table_field(const wick_fb_table *t, int id, wick_fb_table *out);
int wick_fb_vector_field(const wick_fb_table *t, int id, size_t elem_size, wick_fb_vector *out);
/* A NUL-terminated string inside the buffer; *out points into the buffer. */
int wick_fb_string_field(const wick_fb_table *t, int id, const char **out, size_t *len_out);

/* Elements of a vector whose bounds were checked by wick_fb_vector_field. */
uint8_t wick_fb_vec_u8(const wick_fb_vector *v, uint32_t i);
int32_t wick_fb_vec_i32(const wick_fb_vector *v, uint32_t i);
int64_t wick_fb_vec_i64(const wick_fb_vector *v, uint32_t i);
float wick_fb_vec_f32(const wick_fb_vector *v, uint32_t i);
/* Element i of a vector of tables (1 present, -1 malformed). */
int wick_fb_vec_table(const wick_fb_vector *v, uint32_t i, wick_fb_table *out);
/* Element i of a vector of strings. */
int wick_fb_vec_string(const wick_fb_vector *v, uint32_t i, const char **out, size_t *len_out);

#endif /* WICK_FORMAT_FLATBUFFER_H */
