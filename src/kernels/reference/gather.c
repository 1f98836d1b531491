/*
 * gather.c — reference GATHER and GATHER_ND (movement.h).
 *
 * Both copy whole contiguous slices: GATHER the `inner` elements after the
 * gathered axis, GATHER_ND the trailing `slice` elements of params. Every
 * index was checked against its dimension by the op before the call.
 */
#include <string.h>

#include "kernels/reference/movement.h"

int64_t wick_read_index__reference(wick_dtype index_type, const void *indices, int64_t i) {
  switch (index_type) {
    case WICK_DTYPE_INT16: {
      int16_t v;
      memcpy(&v, (const uint8_t *)indices + i * 2, 2);
      return v;
    }
    case WICK_DTYPE_INT64: {
      int64_t v;
      memcpy(&v, (const uint8_t *)indices + i * 8, 8);
      return v;
    }
    default: {
      int32_t v;
      memcpy(&v, (const uint8_t *)indices + i * 4, 4);
      return v;
    }
  }
}

void wick_gather__reference(size_t esize, int64_t batch, int64_t outer, int64_t axis_size,
                            int64_t inner, int64_t count, const void *params,
                            wick_dtype index_type, const void *indices, void *out) {
  const uint8_t *p = params;
  uint8_t *o = out;
  size_t row = (size_t)inner * esize;
  for (int64_t b = 0; b < batch; b++) {
    for (int64_t u = 0; u < outer; u++) {
      const uint8_t *base = p + ((b * outer + u) * axis_size * inner) * (int64_t)esize;
      for (int64_t c = 0; c < count; c++) {
        int64_t ix = wick_read_index__reference(index_type, indices, b * count + c);
        memcpy(o, base + (ix * inner) * (int64_t)esize, row);
        o += row;
      }
    }
  }
}

void wick_gather_nd__reference(size_t esize, int64_t count, int32_t depth, const int64_t *strides,
                               int64_t slice, const void *params, wick_dtype index_type,
                               const void *indices, void *out) {
  const uint8_t *p = params;
  uint8_t *o = out;
  size_t row = (size_t)slice * esize;
  for (int64_t r = 0; r < count; r++) {
    int64_t off = 0;
    for (int32_t k = 0; k < depth; k++)
      off += wick_read_index__reference(index_type, indices, r * depth + k) * strides[k];
    memcpy(o, p + off * (int64_t)esize, row);
    o += row;
  }
}

void wick_i8_embedding_hybrid__reference(int64_t count, int64_t cols, wick_dtype index_type,
                                         const void *ids, const int8_t *values,
                                         const float *scales, bool per_row, float *out) {
  for (int64_t r = 0; r < count; r++) {
    int64_t row = wick_read_index__reference(index_type, ids, r);
    double scale = per_row ? (double)scales[row] : (double)scales[0];
    const int8_t *src = values + row * cols;
    for (int64_t c = 0; c < cols; c++) out[r * cols + c] = (float)((double)src[c] * scale);
  }
}
