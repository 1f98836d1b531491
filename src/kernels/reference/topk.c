/*
 * topk.c — reference TOPK_V2: the k largest elements of each row, largest
 * first; equal values keep their order (the smaller index first), as LiteRT's
 * TopContainer. NaN compares neither larger nor smaller than anything, so
 * rows holding NaN have no defined order (LiteRT's is unspecified too).
 *
 * Each row's indices are merge-sorted (bottom-up, stable) with the scratch
 * the op requested: 2 * row_size int32. O(n log n) per row, no recursion.
 */
#include <string.h>

#include "kernels/reference/reference.h"

/* True when element a of the row ranks before element b. */
typedef bool (*topk_before_fn)(const void *row, int32_t a, int32_t b);

#define TOPK_BEFORE(NAME, T)                                \
  static bool NAME(const void *row, int32_t a, int32_t b) { \
    const T *v = (const T *)row;                            \
    if (v[b] < v[a]) return true;                           \
    if (v[a] < v[b]) return false;                          \
    return a < b;                                           \
  }
TOPK_BEFORE(before_f32, float)
TOPK_BEFORE(before_u8, uint8_t)
TOPK_BEFORE(before_i8, int8_t)
TOPK_BEFORE(before_i16, int16_t)
TOPK_BEFORE(before_i32, int32_t)
TOPK_BEFORE(before_i64, int64_t)
#undef TOPK_BEFORE

/* Stable bottom-up merge sort of idx[0..n) with tmp[0..n); returns the
 * buffer holding the result. */
static int32_t *merge_sort(const void *row, topk_before_fn before, int32_t n, int32_t *idx,
                           int32_t *tmp) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = before(row, idx[j], idx[i]) ? idx[j++] : idx[i++];
      while (i < mid) tmp[o++] = idx[i++];
      while (j < hi) tmp[o++] = idx[j++];
    }
    int32_t *swap = idx;
    idx = tmp;
    tmp = swap;
  }
  return idx;
}

void wick_topk__reference(wick_dtype type, int64_t rows, int32_t row_size, int32_t k,
                          const void *in, void *values, wick_dtype index_type, void *indices,
                          int32_t *scratch) {
  topk_before_fn before;
  switch (type) {
    case WICK_DTYPE_FLOAT32: before = before_f32; break;
    case WICK_DTYPE_UINT8: before = before_u8; break;
    case WICK_DTYPE_INT8: before = before_i8; break;
    case WICK_DTYPE_INT16: before = before_i16; break;
    case WICK_DTYPE_INT32: before = before_i32; break;
    case WICK_DTYPE_INT64: before = before_i64; break;
    default: return;
  }
  size_t esize = wick_dtype_size(type);
  const uint8_t *src = in;
  uint8_t *dst = values;
  for (int64_t r = 0; r < rows; r++) {
    const uint8_t *row = src + (size_t)r * (size_t)row_size * esize;
    for (int32_t i = 0; i < row_size; i++) scratch[i] = i;
    const int32_t *sorted = merge_sort(row, before, row_size, scratch, scratch + row_size);
    for (int32_t j = 0; j < k; j++) {
      if (index_type == WICK_DTYPE_INT16)
        ((int16_t *)indices)[r * k + j] = (int16_t)sorted[j];
      else
        ((int32_t *)indices)[r * k + j] = sorted[j];
      memcpy(dst + ((size_t)r * (size_t)k + (size_t)j) * esize, row + (size_t)sorted[j] * esize,
             esize);
    }
  }
}
