/*
 * batch_matmul.c — reference BATCH_MATMUL (float).
 *
 * For every batch index (row-major over the broadcast batch dims) one plain
 * matrix product, accumulating over k in order:
 *
 *   out[b][i][j] = sum_p L(b, i, p) * R(b, p, j)
 *   L(b, i, p) = lhs[b][i][p]  or lhs[b][p][i] when adj_x   (lhs matrix m x k)
 *   R(b, p, j) = rhs[b][p][j]  or rhs[b][j][p] when adj_y   (rhs matrix k x n)
 *
 * A broadcast batch dim has stride 0 in its operand, so the same matrix is
 * reused. The op checked all shapes; this cannot fail. The _rows variant
 * computes output rows [row_begin, row_end) of the batches x m rows (threads
 * split on rows; each element is the same sum either way).
 */
#include "kernels/reference/reference.h"

void wick_f32_batch_matmul_rows__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                           const float *rhs, float *out, int64_t row_begin,
                                           int64_t row_end) {
  int64_t m = s->m, n = s->n, k = s->k;
  if (m == 0 || row_begin >= row_end) return;
  int64_t b = row_begin / m, i = row_begin % m;
  /* The batch multi-index of b (row-major over batch_dims). */
  int64_t idx[WICK_MAX_RANK] = {0};
  for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
    idx[d] = b % s->batch_dims[d];
    b /= s->batch_dims[d];
  }
  b = row_begin / m;
  for (int64_t row = row_begin; row < row_end; b++, i = 0) {
    int64_t lo = 0, ro = 0;
    for (int32_t d = 0; d < s->batch_rank; d++) {
      lo += idx[d] * s->lhs_strides[d];
      ro += idx[d] * s->rhs_strides[d];
    }
    const float *l = lhs + lo, *r = rhs + ro;
    float *o = out + b * m * n;
    for (; i < m && row < row_end; i++, row++)
      for (int64_t j = 0; j < n; j++) {
        float acc = 0.0f;
        for (int64_t p = 0; p < k; p++) {
          float a = s->adj_x ? l[p * m + i] : l[i * k + p];
          float c = s->adj_y ? r[j * k + p] : r[p * n + j];
          acc += a * c;
        }
        o[i * n + j] = acc;
      }
    for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
      if (++idx[d] < s->batch_dims[d]) break;
      idx[d] = 0;
    }
  }
}

void wick_f32_batch_matmul__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                      const float *rhs, float *out) {
  int64_t batches = 1;
  for (int32_t d = 0; d < s->batch_rank; d++) batches *= s->batch_dims[d];
  wick_f32_batch_matmul_rows__reference(s, lhs, rhs, out, 0, batches * s->m);
}
