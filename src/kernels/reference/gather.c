/*
 * gather.c — reference GATHER, GATHER_ND and SCATTER_ND (movement.h).
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
                            int64_t inner, int64_t count, const void *params, wick_dtype index_type,
                            const void *indices, void *out) {
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
                                         const void *ids, const int8_t *values, const float *scales,
                                         bool per_row, float *out) {
  for (int64_t r = 0; r < count; r++) {
    int64_t row = wick_read_index__reference(index_type, ids, r);
    double scale = per_row ? (double)scales[row] : (double)scales[0];
    const int8_t *src = values + row * cols;
    for (int64_t c = 0; c < cols; c++) out[r * cols + c] = (float)((double)src[c] * scale);
  }
}

/* Accumulates `slice` updates into out for every index row. */
#define SCATTER_ADD_FN(NAME, T, UT)                                                         \
  static void NAME(int64_t count, int32_t depth, const int64_t *strides, int64_t slice,     \
                   wick_dtype index_type, const void *indices, const T *updates, T *out) {  \
    for (int64_t r = 0; r < count; r++) {                                                   \
      int64_t off = 0;                                                                      \
      for (int32_t k = 0; k < depth; k++)                                                   \
        off += wick_read_index__reference(index_type, indices, r * depth + k) * strides[k]; \
      const T *u = updates + r * slice;                                                     \
      for (int64_t j = 0; j < slice; j++) out[off + j] = (T)((UT)out[off + j] + (UT)u[j]);  \
    }                                                                                       \
  }
SCATTER_ADD_FN(scatter_f32, float, float)
SCATTER_ADD_FN(scatter_i8, int8_t, uint8_t)
SCATTER_ADD_FN(scatter_u8, uint8_t, uint8_t)
SCATTER_ADD_FN(scatter_i16, int16_t, uint16_t)
SCATTER_ADD_FN(scatter_i32, int32_t, uint32_t)
SCATTER_ADD_FN(scatter_i64, int64_t, uint64_t)
#undef SCATTER_ADD_FN

static void scatter_bool(int64_t count, int32_t depth, const int64_t *strides, int64_t slice,
                         wick_dtype index_type, const void *indices, const bool *updates,
                         bool *out) {
  for (int64_t r = 0; r < count; r++) {
    int64_t off = 0;
    for (int32_t k = 0; k < depth; k++)
      off += wick_read_index__reference(index_type, indices, r * depth + k) * strides[k];
    for (int64_t j = 0; j < slice; j++) out[off + j] = out[off + j] || updates[r * slice + j];
  }
}

void wick_scatter_nd__reference(wick_dtype type, int64_t count, int32_t depth,
                                const int64_t *strides, int64_t slice, int64_t out_elements,
                                wick_dtype index_type, const void *indices, const void *updates,
                                void *out) {
  memset(out, 0, (size_t)out_elements * wick_dtype_size(type));
  switch (type) {
    case WICK_DTYPE_FLOAT32:
      scatter_f32(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    case WICK_DTYPE_INT8:
      scatter_i8(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    case WICK_DTYPE_UINT8:
      scatter_u8(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    case WICK_DTYPE_INT16:
      scatter_i16(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    case WICK_DTYPE_INT32:
      scatter_i32(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    case WICK_DTYPE_INT64:
      scatter_i64(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    case WICK_DTYPE_BOOL:
      scatter_bool(count, depth, strides, slice, index_type, indices, updates, out);
      break;
    default: break;
  }
}
