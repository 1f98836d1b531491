/*
 * quantized_common.h — the fixed-point primitives and type-generic helpers
 * shared by the quantized reference kernels (quantized.c, quantized_activations.c);
 * private to src/kernels/reference. The arithmetic is specified at the top of
 * quantized.c.
 */
#ifndef WICK_KERNELS_REFERENCE_QUANTIZED_COMMON_H
#define WICK_KERNELS_REFERENCE_QUANTIZED_COMMON_H

#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

#define INLINE static inline __attribute__((always_inline))

INLINE int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
INLINE int32_t add32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
INLINE int32_t sub32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

INLINE int32_t srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* In 64 bits so any exponent a file's scales can produce (RSQRT's LUT shifts
 * by its output shift - 20: up to 50, found by fuzz_mutate_model) is defined;
 * identical to the 32-bit form for e < 32. */
INLINE int32_t rdivpot(int32_t x, int32_t e) {
  if (e > 62) e = 62;
  int64_t mask = ((int64_t)1 << e) - 1;
  int64_t remainder = (int64_t)x & mask;
  int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> e) + (remainder > threshold ? 1 : 0));
}

INLINE int32_t mbqm(int32_t x, int32_t m, int32_t s) {
  int32_t left = s > 0 ? s : 0, right = s > 0 ? 0 : -s;
  uint32_t shifted = left >= 32 ? 0u : (uint32_t)x << left; /* wraps, as LiteRT's int32 shift */
  return rdivpot(srdhm((int32_t)shifted, m), right);
}

INLINE int32_t mbqm64(int64_t x, int32_t m, int32_t s) {
  int32_t reduced = m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
  int32_t total = 15 - s; /* the op keeps s in [-31, 14] */
  uint64_t v = (uint64_t)x * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (total - 1));
  return wrap32((int64_t)v >> total);
}

INLINE int32_t clamp32(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/* Loads element i of a quantized (or int32) array as int32. */
INLINE int32_t ld(wick_dtype t, const void *p, int64_t i) {
  switch (t) {
    case WICK_DTYPE_INT8: return ((const int8_t *)p)[i];
    case WICK_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case WICK_DTYPE_INT16: return ((const int16_t *)p)[i];
    case WICK_DTYPE_INT32: return ((const int32_t *)p)[i];
    default: return 0;
  }
}

/* Stores v (already inside the type's range) at element i. */
INLINE void st(wick_dtype t, void *p, int64_t i, int32_t v) {
  switch (t) {
    case WICK_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case WICK_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case WICK_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case WICK_DTYPE_INT32: ((int32_t *)p)[i] = v; break;
    default: break;
  }
}

INLINE void type_range(wick_dtype t, int32_t *lo, int32_t *hi) {
  switch (t) {
    case WICK_DTYPE_INT8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      break;
    case WICK_DTYPE_UINT8:
      *lo = 0;
      *hi = UINT8_MAX;
      break;
    case WICK_DTYPE_INT16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      break;
    default:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      break;
  }
}

/* Calls one instantiation of BODY per activation type: int8 (int8 filter),
 * uint8 (uint8 filter), int16 (int8 filter). */
#define DISPATCH_ACT(type, CALL)                                              \
  do {                                                                        \
    switch (type) {                                                           \
      case WICK_DTYPE_INT8: CALL(WICK_DTYPE_INT8, WICK_DTYPE_INT8); break;    \
      case WICK_DTYPE_UINT8: CALL(WICK_DTYPE_UINT8, WICK_DTYPE_UINT8); break; \
      case WICK_DTYPE_INT16: CALL(WICK_DTYPE_INT16, WICK_DTYPE_INT8); break;  \
      default: break;                                                         \
    }                                                                         \
  } while (0)

#endif
