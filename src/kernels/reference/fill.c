/*
 * fill.c — reference FILL and RANGE (movement.h).
 */
#include <string.h>

#include "kernels/reference/movement.h"

void wick_fill__reference(size_t esize, int64_t count, const void *value, void *out) {
  uint8_t *o = out;
  for (int64_t i = 0; i < count; i++) memcpy(o + i * (int64_t)esize, value, esize);
}

void wick_f32_range__reference(float start, float delta, int64_t count, float *out) {
  float v = start; /* accumulated, as LiteRT does */
  for (int64_t i = 0; i < count; i++) {
    out[i] = v;
    v += delta;
  }
}

/* Integer ranges: start + i * delta computed with wrapping unsigned
 * arithmetic; the op checked every value lies between start and limit, so
 * the result is exact and no signed overflow can occur. */
void wick_i32_range__reference(int32_t start, int32_t delta, int64_t count, int32_t *out) {
  for (int64_t i = 0; i < count; i++)
    out[i] = (int32_t)(int64_t)((uint64_t)(int64_t)start + (uint64_t)i * (uint64_t)(int64_t)delta);
}

void wick_i64_range__reference(int64_t start, int64_t delta, int64_t count, int64_t *out) {
  for (int64_t i = 0; i < count; i++)
    out[i] = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta);
}
