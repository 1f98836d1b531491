/*
 * arg_minmax.c — reference ARG_MAX / ARG_MIN.
 *
 * The input is viewed as [outer, axis, inner]; for every (outer, inner) pair
 * the index along `axis` of the largest (smallest) value is written. The scan
 * keeps the first index on ties because it replaces the current best only on
 * a strict comparison; the same rule means a NaN is never chosen unless it is
 * the first element (then nothing compares past it), which is LiteRT's
 * behaviour.
 */
#include "kernels/reference/reference.h"

#define ARG_LOOP(T)                                      \
  do {                                                   \
    const T *x = (const T *)in;                          \
    for (int64_t o = 0; o < outer; o++)                  \
      for (int64_t i = 0; i < inner; i++) {              \
        const T *p = x + o * axis * inner + i;           \
        T best = p[0];                                   \
        int64_t at = 0;                                  \
        for (int64_t a = 1; a < axis; a++) {             \
          T v = p[a * inner];                            \
          if (is_max ? v > best : v < best) {            \
            best = v;                                    \
            at = a;                                      \
          }                                              \
        }                                                \
        if (out_type == WICK_DTYPE_INT64)                \
          ((int64_t *)out)[o * inner + i] = at;          \
        else                                             \
          ((int32_t *)out)[o * inner + i] = (int32_t)at; \
      }                                                  \
  } while (0)

void wick_arg_minmax__reference(bool is_max, wick_dtype in_type, int64_t outer, int64_t axis,
                                int64_t inner, const void *in, wick_dtype out_type, void *out) {
  switch (in_type) {
    case WICK_DTYPE_FLOAT32: ARG_LOOP(float); break;
    case WICK_DTYPE_INT32: ARG_LOOP(int32_t); break;
    case WICK_DTYPE_INT64: ARG_LOOP(int64_t); break;
    case WICK_DTYPE_INT8: ARG_LOOP(int8_t); break;
    case WICK_DTYPE_UINT8: ARG_LOOP(uint8_t); break;
    case WICK_DTYPE_BOOL: ARG_LOOP(uint8_t); break; /* bools are stored as 0/1 bytes */
    default: break;
  }
}
