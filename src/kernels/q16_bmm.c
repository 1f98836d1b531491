/*
 * q16_bmm.c — int16 BATCH_MATMUL rows (int16 lhs; int8 or int16 rhs; zero
 * points 0) in exact integer arithmetic the compiler vectorizes, bit-exact
 * with wick_q_batch_matmul_rows__reference: each output is the exact int64
 * sum of its k products (int16 x int8 in blocks of 256 exact int32 partial
 * sums, int16 x int16 in int64), requantized by the reference's own
 * wick_q_multiply_by_quantized_multiplier_i64, + zero point, clamped. The lhs row (adj_x) and the
 * batch's rhs as [n, k] rows (unless adj_y already has them) are gathered
 * into the caller's work buffer, the rhs once per batch.
 */
#include "kernels/q16.h"

#define BLOCK 256 /* int16 x int8 products (|p| <= 2^22): 256 of them stay below 2^31 */

/* Element (j, p) of the batch's rhs at `r` (widened), as the reference indexes it. */
static inline int32_t rhs_at(bool wide, const void *r, int64_t j, int64_t p, int64_t n, int64_t k,
                             bool adj_y) {
  const int64_t i = adj_y ? j * k + p : p * n + j;
  return wide ? ((const int16_t *)r)[i] : ((const int8_t *)r)[i];
}

static int64_t dot8(const int16_t *x, const int16_t *w, int64_t k) {
  int64_t total = 0;
  for (int64_t b = 0; b < k; b += BLOCK) {
    const int64_t e = k - b < BLOCK ? k : b + BLOCK;
    int32_t part = 0;
    for (int64_t i = b; i < e; i++) part += (int32_t)x[i] * (int32_t)w[i];
    total += part;
  }
  return total;
}

static int64_t dot16(const int16_t *x, const int16_t *w, int64_t k) {
  int64_t total = 0;
  for (int64_t i = 0; i < k; i++) total += (int64_t)((int32_t)x[i] * (int32_t)w[i]);
  return total;
}

size_t wick_q16_batch_matmul_work(const wick_batch_matmul_shape *s) {
  return (size_t)(s->k + s->n * s->k) * sizeof(int16_t);
}

void wick_q16_batch_matmul_rows(wick_dtype rhs_type, const wick_batch_matmul_shape *s,
                                const wick_qbmm_params *p, const int16_t *lhs, const void *rhs,
                                int16_t *out, int64_t row_begin, int64_t row_end, void *work) {
  const int64_t m = s->m, n = s->n, k = s->k;
  if (m == 0 || row_begin >= row_end) return;
  const bool wide = rhs_type == WICK_DTYPE_INT16;
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
    if (ro != packed_ro) {
      const void *r = wide ? (const void *)((const int16_t *)rhs + ro)
                           : (const void *)((const int8_t *)rhs + ro);
      for (int64_t j = 0; j < n; j++)
        for (int64_t q = 0; q < k; q++)
          w[j * k + q] = (int16_t)rhs_at(wide, r, j, q, n, k, s->adj_y);
      packed_ro = ro;
    }
    for (int64_t q = 0; q < k; q++) x[q] = lhs[lo + (s->adj_x ? q * m + i : i * k + q)];
    int16_t *o = out + row * n;
    for (int64_t j = 0; j < n; j++) {
      const int64_t acc = wide ? dot16(x, w + j * k, k) : dot8(x, w + j * k, k);
      int32_t v = wick_q_multiply_by_quantized_multiplier_i64(acc, p->multiplier, p->shift);
      v = (int32_t)((uint32_t)v + (uint32_t)p->output_offset);
      v = v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
      o[j] = (int16_t)v;
    }
  }
}
