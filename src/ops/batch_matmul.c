/*
 * batch_matmul.c — BATCH_MATMUL (float32; quantized inputs go to
 * batch_matmul_quantized.c).
 *
 * lhs [..., M, K] (or [..., K, M] with adj_x), rhs [..., K, N] (or [..., N, K]
 * with adj_y), ranks 2..WICK_MAX_RANK (LiteRT stops at 5 or 6), possibly
 * different. The batch dims (all but the last two) broadcast numpy-style after
 * aligning the ranks on the right; output [broadcast batch..., M, N], rank =
 * the larger input rank.
 *
 * Next: src/kernels/reference/batch_matmul.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

static wick_status bmm_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_bmm_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b;
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  WICK_CHECK_SUPPORTED(ctx, a->type == WICK_DTYPE_FLOAT32 && b->type == WICK_DTYPE_FLOAT32,
                       "inputs are %s and %s; wick runs BATCH_MATMUL on float32 only so far",
                       wick_dtype_name(a->type), wick_dtype_name(b->type));
  WICK_CHECK(ctx, a->rank >= 2 && b->rank >= 2, "inputs must have rank >= 2 (ranks %d and %d)",
             a->rank, b->rank);
  bool adj_x = ctx->params->adj_x, adj_y = ctx->params->adj_y;
  int32_t ra = a->rank, rb = b->rank;
  int64_t m = adj_x ? a->dims[ra - 1] : a->dims[ra - 2];
  int64_t ka = adj_x ? a->dims[ra - 2] : a->dims[ra - 1];
  int64_t kb = adj_y ? b->dims[rb - 1] : b->dims[rb - 2];
  int64_t n = adj_y ? b->dims[rb - 2] : b->dims[rb - 1];
  WICK_CHECK(ctx, ka == kb, "inner dimensions differ: lhs gives %lld, rhs gives %lld",
             (long long)ka, (long long)kb);
  wick_batch_matmul_shape *s = wick_op_alloc(ctx, sizeof *s);
  if (s == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  int32_t rank = ra > rb ? ra : rb;
  s->batch_rank = rank - 2;
  s->m = m;
  s->n = n;
  s->k = ka;
  s->adj_x = adj_x;
  s->adj_y = adj_y;
  /* Batch strides in elements; a broadcast (size-1 or missing) dim gets 0. */
  int64_t sa = m * ka, sb = ka * n;
  for (int32_t i = rank - 3; i >= 0; i--) {
    int32_t ia = i - (rank - ra), ib = i - (rank - rb);
    int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    WICK_CHECK(ctx, da == db || da == 1 || db == 1,
               "batch dimension %d does not broadcast (%d and %d)", i, da, db);
    s->batch_dims[i] = da == 1 ? db : da;
    s->lhs_strides[i] = da == 1 ? 0 : sa;
    s->rhs_strides[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank - 2; i++) dims[i] = s->batch_dims[i];
  dims[rank - 2] = (int32_t)m;
  dims[rank - 1] = (int32_t)n;
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, rank, dims));
  ctx->node->macs = (uint64_t)wick_shape_elements(rank, dims) * (uint64_t)ka;
  ctx->node->user_data = s;
  return WICK_OK;
}

typedef struct bmm_job {
  const wick_batch_matmul_shape *s;
  const float *lhs, *rhs;
  float *out;
} bmm_job;

static void bmm_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const bmm_job *j = arg;
  wick_f32_batch_matmul_rows__reference(j->s, j->lhs, j->rhs, j->out, (int64_t)begin,
                                        (int64_t)end);
}

static wick_status bmm_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_bmm_invoke_quantized(ctx);
  const wick_batch_matmul_shape *s = ctx->node->user_data;
  bmm_job j = {s, wick_op_input(ctx, 0)->data, wick_op_input(ctx, 1)->data,
               wick_op_output(ctx, 0)->data};
  /* Output rows (batches x m) split over the threads. */
  uint64_t rows = (uint64_t)s->m;
  for (int32_t d = 0; d < s->batch_rank; d++) rows *= (uint64_t)s->batch_dims[d];
  return wick_parallel_range(ctx, (size_t)rows, (uint64_t)s->n * (uint64_t)s->k, bmm_rows, &j);
}

const wick_op_def wick_op_batch_matmul = {"BATCH_MATMUL", WICK_BUILTIN_BATCH_MATMUL, 4,
                                          bmm_prepare, bmm_invoke};
