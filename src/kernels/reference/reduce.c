/*
 * reduce.c — reference reductions (SUM MEAN MAX MIN PROD ANY ALL).
 *
 * Two passes: initialise every output to the op's identity, then walk the
 * input once in row-major order, adding each element into the output whose
 * index drops the reduced axes. MEAN divides by the reduced count at the end
 * (integers truncate toward zero). Float sums accumulate in float, in input
 * order, like LiteRT's reference kernel.
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

void wick_reduce__reference(wick_reduce_op op, wick_dtype type, int32_t rank, const int32_t *dims,
                            const bool *reduced, const void *in, void *out) {
  int64_t out_stride[WICK_MAX_RANK]; /* 0 on reduced axes */
  int64_t s = 1, total = 1, out_count = 1;
  for (int32_t i = rank - 1; i >= 0; i--) {
    out_stride[i] = reduced[i] ? 0 : s;
    if (!reduced[i]) s *= dims[i];
    total *= dims[i];
  }
  out_count = s;
  int64_t count = out_count ? total / out_count : 0; /* elements per output */
  int64_t idx[WICK_MAX_RANK] = {0};

#define REDUCE_LOOP(T, ACC_T, INIT, COMBINE, FINISH)                  \
  do {                                                                \
    const T *x = in;                                                  \
    T *y = out;                                                       \
    for (int64_t o = 0; o < out_count; o++) y[o] = (T)(INIT);         \
    for (int64_t e = 0; e < total; e++) {                             \
      int64_t o = 0;                                                  \
      for (int32_t d = 0; d < rank; d++) o += idx[d] * out_stride[d]; \
      ACC_T a = y[o], v = x[e];                                       \
      y[o] = (T)(COMBINE);                                            \
      for (int32_t d = rank - 1; d >= 0; d--) {                       \
        if (++idx[d] < dims[d]) break;                                \
        idx[d] = 0;                                                   \
      }                                                               \
    }                                                                 \
    for (int64_t o = 0; o < out_count; o++) {                         \
      T v = y[o];                                                     \
      y[o] = (T)(FINISH);                                             \
    }                                                                 \
  } while (0)

  switch (type) {
    case WICK_DTYPE_FLOAT32:
      if (op == WICK_REDUCE_SUM || op == WICK_REDUCE_MEAN) {
        REDUCE_LOOP(float, float, 0.0f, a + v, v);
        if (op == WICK_REDUCE_MEAN && count > 0) {
          float *y = out;
          for (int64_t o = 0; o < out_count; o++) y[o] /= (float)count;
        }
      } else if (op == WICK_REDUCE_MAX) {
        REDUCE_LOOP(float, float, -INFINITY, (v > a || v != v) ? v : a, v);
      } else if (op == WICK_REDUCE_MIN) {
        REDUCE_LOOP(float, float, INFINITY, (v < a || v != v) ? v : a, v);
      } else if (op == WICK_REDUCE_PROD) {
        REDUCE_LOOP(float, float, 1.0f, a *v, v);
      }
      break;
    case WICK_DTYPE_INT32:
      if (op == WICK_REDUCE_SUM || op == WICK_REDUCE_MEAN) {
        REDUCE_LOOP(int32_t, uint32_t, 0, a + v, v);
        if (op == WICK_REDUCE_MEAN && count > 0) {
          int32_t *y = out;
          for (int64_t o = 0; o < out_count; o++) y[o] = (int32_t)(y[o] / count);
        }
      } else if (op == WICK_REDUCE_MAX) {
        REDUCE_LOOP(int32_t, int32_t, INT32_MIN, v > a ? v : a, v);
      } else if (op == WICK_REDUCE_MIN) {
        REDUCE_LOOP(int32_t, int32_t, INT32_MAX, v < a ? v : a, v);
      } else if (op == WICK_REDUCE_PROD) {
        REDUCE_LOOP(int32_t, uint32_t, 1, a * v, v);
      }
      break;
    case WICK_DTYPE_INT64:
      if (op == WICK_REDUCE_SUM || op == WICK_REDUCE_MEAN) {
        REDUCE_LOOP(int64_t, uint64_t, 0, a + v, v);
        if (op == WICK_REDUCE_MEAN && count > 0) {
          int64_t *y = out;
          for (int64_t o = 0; o < out_count; o++) y[o] = y[o] / count;
        }
      } else if (op == WICK_REDUCE_MAX) {
        REDUCE_LOOP(int64_t, int64_t, INT64_MIN, v > a ? v : a, v);
      } else if (op == WICK_REDUCE_MIN) {
        REDUCE_LOOP(int64_t, int64_t, INT64_MAX, v < a ? v : a, v);
      } else if (op == WICK_REDUCE_PROD) {
        REDUCE_LOOP(int64_t, uint64_t, 1, a * v, v);
      }
      break;
    case WICK_DTYPE_BOOL:
      if (op == WICK_REDUCE_ANY) {
        REDUCE_LOOP(bool, bool, false, a || v, v);
      } else {
        REDUCE_LOOP(bool, bool, true, a &&v, v);
      }
      break;
    default: break;
  }
#undef REDUCE_LOOP
}
