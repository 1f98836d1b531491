/*
 * cumsum.c — reference CUMSUM over the middle axis of an [outer, axis, inner]
 * view. For each (outer, inner) line the running sum is carried in the
 * element type, visiting the axis forwards (or backwards when `reverse`);
 * `exclusive` writes the sum before adding the current element, so the first
 * element visited becomes 0. Integer sums wrap (two's complement) rather than
 * overflow.
 */
#include "kernels/reference/reference.h"

#define CUMSUM_LOOP(T, ADD)                             \
  do {                                                  \
    const T *x = (const T *)in;                         \
    T *y = (T *)out;                                    \
    for (int64_t o = 0; o < outer; o++)                 \
      for (int64_t i = 0; i < inner; i++) {             \
        int64_t base = o * axis * inner + i;            \
        T acc = 0;                                      \
        for (int64_t step = 0; step < axis; step++) {   \
          int64_t a = reverse ? axis - 1 - step : step; \
          int64_t at = base + a * inner;                \
          if (exclusive) {                              \
            T v = x[at];                                \
            y[at] = acc;                                \
            acc = ADD(acc, v);                          \
          } else {                                      \
            acc = ADD(acc, x[at]);                      \
            y[at] = acc;                                \
          }                                             \
        }                                               \
      }                                                 \
  } while (0)

#define ADD_F(a, b) ((a) + (b))
#define ADD_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))

void wick_cumsum__reference(wick_dtype type, int64_t outer, int64_t axis, int64_t inner,
                            bool exclusive, bool reverse, const void *in, void *out) {
  switch (type) {
    case WICK_DTYPE_FLOAT32: CUMSUM_LOOP(float, ADD_F); break;
    case WICK_DTYPE_INT32: CUMSUM_LOOP(int32_t, ADD_I32); break;
    case WICK_DTYPE_INT64: CUMSUM_LOOP(int64_t, ADD_I64); break;
    default: break;
  }
}
