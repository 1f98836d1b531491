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
 * reused. The op checked all shapes; this cannot fail.
 */
#include "kernels/reference/reference.h"

void wick_f32_batch_matmul__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                      const float *rhs, float *out) {
  int64_t batches = 1;
  for (int32_t d = 0; d < s->batch_rank; d++) batches *= s->batch_dims[d];
  int64_t m = s->m, n = s->n, k = s->k;
  int64_t idx[WICK_MAX_RANK] = {0};
  for (int64_t b = 0; b < batches; b++) {
    int64_t lo = 0, ro = 0;
    for (int32_t d = 0; d < s->batch_rank; d++) {
      lo += idx[d] * s->lhs_strides[d];
      ro += idx[d] * s->rhs_strides[d];
    }
    const float *l = lhs + lo, *r = rhs + ro;
    float *o = out + b * m * n;
    for (int64_t i = 0; i < m; i++)
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
