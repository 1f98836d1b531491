/*
 * q16_bmm.c — quantized BATCH_MATMUL rows in exact integer arithmetic the
 * compiler vectorizes, bit-exact with wick_q_batch_matmul_rows__reference:
 * int16 lhs (int8 or int16 rhs, zero points 0): each output is the exact
 * int64 sum of its k products (int16 x int8 in blocks of 256 exact int32
 * partial sums, int16 x int16 in int64), requantized by the reference's own
 * wick_q_multiply_by_quantized_multiplier_i64; int8 x int8 (the shapes the
 * GEMM path leaves, such as a dot product per batch): the operands minus
 * their zero points as int16, the reference's wrapping int32 sum and 32-bit
 * requantization. Then + zero point, clamped. The lhs row (adj_x) and the
 * batch's rhs as [n, k] rows (unless adj_y already has them) are gathered
 * into the caller's work buffer, the rhs once per batch; int16 x int16 with a
 * table's dot16 kernel (q16.h) reads contiguous operands in place.
 */
#include "kernels/q16.h"

/* dst[i] = src[i * stride] + offset for i < count, src int8 or int16 (wide); the unit-stride
 * forms vectorize. */
static void widen(int16_t *dst, const void *src, bool wide, int64_t count, int64_t stride,
                  int32_t offset) {
  if (wide) {
    const int16_t *s = src;
    if (stride == 1)
      for (int64_t i = 0; i < count; i++) dst[i] = (int16_t)(s[i] + offset);
    else
      for (int64_t i = 0; i < count; i++) dst[i] = (int16_t)(s[i * stride] + offset);
  } else {
    const int8_t *s = src;
    if (stride == 1)
      for (int64_t i = 0; i < count; i++) dst[i] = (int16_t)(s[i] + offset);
    else
      for (int64_t i = 0; i < count; i++) dst[i] = (int16_t)(s[i * stride] + offset);
  }
}

static int64_t dot16_portable(const int16_t *x, const int16_t *w, int64_t k) {
  int64_t total = 0;
  for (int64_t i = 0; i < k; i++) total += (int64_t)((int32_t)x[i] * (int32_t)w[i]);
  return total;
}

/* 8-bit operands with their zero points removed (|x|, |w| <= 255): the reference's wrapping
 * int32 sum. */
static int32_t dot_wrap(const int16_t *x, const int16_t *w, int64_t k) {
  uint32_t total = 0;
  for (int64_t i = 0; i < k; i++) total += (uint32_t)((int32_t)x[i] * (int32_t)w[i]);
  return (int32_t)total;
}

size_t wick_q16_batch_matmul_work(const wick_batch_matmul_shape *s) {
  return (size_t)(s->k + s->n * s->k) * sizeof(int16_t);
}

void wick_q16_batch_matmul_rows(wick_dtype lhs_type, wick_dtype rhs_type,
                                const wick_batch_matmul_shape *s, const wick_qbmm_params *p,
                                const void *lhs, const void *rhs, void *out, int64_t row_begin,
                                int64_t row_end, void *work, wick_q16_dot_fn dot16) {
  const int64_t m = s->m, n = s->n, k = s->k;
  if (m == 0 || row_begin >= row_end) return;
  const bool wide = rhs_type == WICK_DTYPE_INT16, narrow = lhs_type == WICK_DTYPE_INT8;
  if (!wide || narrow) dot16 = NULL;
  /* int16 x int16 on the kernel: operands whose k elements are contiguous and need no offset
   * are read where they lie */
  const bool lhs_in_place = dot16 != NULL && !s->adj_x && p->lhs_offset == 0;
  const bool rhs_in_place = dot16 != NULL && (s->adj_y || n == 1) && p->rhs_offset == 0;
  int16_t *x = work, *w = x + k;
  int64_t packed_ro = -1;
  for (int64_t row = row_begin; row < row_end; row++) {
    const int64_t b = row / m, i = row % m;
    int64_t lo = 0, ro = 0, rest = b; /* the batch's element offsets */
    for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
      const int64_t idx = rest % s->batch_dims[d];
      rest /= s->batch_dims[d];
      lo += idx * s->lhs_strides[d];
      ro += idx * s->rhs_strides[d];
    }
    const int16_t *wr = w; /* the batch's rhs columns, k apart */
    if (rhs_in_place) {
      wr = (const int16_t *)rhs + ro;
    } else if (ro != packed_ro) { /* column j of the rhs: k from j * k (adj_y) or j, n apart */
      const size_t rb = wide ? 2 : 1;
      for (int64_t j = 0; j < n; j++)
        widen(w + j * k, (const uint8_t *)rhs + (size_t)(ro + (s->adj_y ? j * k : j)) * rb, wide, k,
              s->adj_y ? 1 : n, p->rhs_offset);
      packed_ro = ro;
    }
    const size_t lb = narrow ? 1 : 2; /* row i of the lhs: from i * k, or i with m apart (adj_x) */
    const int16_t *xr = x;
    if (lhs_in_place)
      xr = (const int16_t *)lhs + lo + i * k;
    else
      widen(x, (const uint8_t *)lhs + (size_t)(lo + (s->adj_x ? i : i * k)) * lb, !narrow, k,
            s->adj_x ? m : 1, p->lhs_offset);
    for (int64_t j = 0; j < n; j++) {
      int32_t v;
      if (dot16 != NULL)
        v = wick_q_multiply_by_quantized_multiplier_i64(dot16((size_t)k, xr, wr + j * k),
                                                        p->multiplier, p->shift);
      else if (narrow)
        v = wick_q_multiply_by_quantized_multiplier(dot_wrap(x, w + j * k, k), p->multiplier,
                                                    p->shift);
      else
        v = wick_q_multiply_by_quantized_multiplier_i64(wide ? dot16_portable(x, w + j * k, k)
                                                             : wick_q16_dot_exact(x, w + j * k, k),
                                                        p->multiplier, p->shift);
      v = (int32_t)((uint32_t)v + (uint32_t)p->output_offset);
      v = v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
      if (narrow)
        ((int8_t *)out)[row * n + j] = (int8_t)v;
      else
        ((int16_t *)out)[row * n + j] = (int16_t)v;
    }
  }
}
