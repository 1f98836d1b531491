/*
 * batch_matmul_quantized.c — quantized BATCH_MATMUL: int8 x int8 -> int8,
 * int16 x int8 -> int16 and int16 x int16 -> int16 (zero points 0 for
 * int16), adj_x / adj_y and broadcast batch dims as the float op.
 *
 * Reached from batch_matmul.c when the lhs is a quantized activation. As
 * LiteRT's reference kernel: one multiplier for the whole op,
 * (s_lhs * s_rhs computed in float) / s_out. int8 sums in 32 bits, int16 in
 * 64 bits with the int64 requantization. No fused activation (full output
 * range). Refused: a per-channel quantized rhs (LiteRT has no per-channel
 * integer BATCH_MATMUL: it reads such a tensor's per-tensor scale as 0 and
 * outputs zeros, e.g. on litert-torch's w8a16 einsum test file), and the
 * int8 x int8 -> int32 variant (raw sums). The reference kernel runs over
 * output rows split across the interpreter's threads (which also lets a
 * cancelled invoke stop between them).
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct qbmm_data {
  wick_batch_matmul_shape shape;
  wick_qbmm_params params;
  bool acc64;
} qbmm_data;

wick_status wick_bmm_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  const bool ok =
      (a->type == WICK_DTYPE_INT8 && b->type == WICK_DTYPE_INT8) ||
      (a->type == WICK_DTYPE_INT16 && (b->type == WICK_DTYPE_INT8 || b->type == WICK_DTYPE_INT16));
  WICK_CHECK_SUPPORTED(ctx, ok, "quantized inputs %s and %s are not supported",
                       wick_dtype_name(a->type), wick_dtype_name(b->type));
  WICK_CHECK_SUPPORTED(ctx, out->type == a->type, "output type %s with %s inputs is not supported",
                       wick_dtype_name(out->type), wick_dtype_name(a->type));
  WICK_CHECK(ctx, a->rank >= 2 && b->rank >= 2, "inputs must have rank >= 2 (ranks %d and %d)",
             a->rank, b->rank);
  qbmm_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_batch_matmul_shape *s = &d->shape;
  const bool adj_x = ctx->params->adj_x, adj_y = ctx->params->adj_y;
  const int32_t ra = a->rank, rb = b->rank;
  const int64_t m = adj_x ? a->dims[ra - 1] : a->dims[ra - 2];
  const int64_t ka = adj_x ? a->dims[ra - 2] : a->dims[ra - 1];
  const int64_t kb = adj_y ? b->dims[rb - 1] : b->dims[rb - 2];
  const int64_t n = adj_y ? b->dims[rb - 2] : b->dims[rb - 1];
  WICK_CHECK(ctx, ka == kb, "inner dimensions differ: lhs gives %lld, rhs gives %lld",
             (long long)ka, (long long)kb);
  const int32_t rank = ra > rb ? ra : rb;
  s->batch_rank = rank - 2;
  s->m = m;
  s->n = n;
  s->k = ka;
  s->adj_x = adj_x;
  s->adj_y = adj_y;
  int64_t sa = m * ka, sb = ka * n;
  for (int32_t i = rank - 3; i >= 0; i--) {
    const int32_t ia = i - (rank - ra), ib = i - (rank - rb);
    const int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    WICK_CHECK(ctx, da == db || da == 1 || db == 1,
               "batch dimension %d does not broadcast (%d and %d)", i, da, db);
    s->batch_dims[i] = da == 1 ? db : da;
    s->lhs_strides[i] = da == 1 ? 0 : sa;
    s->rhs_strides[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }

  wick_qparams ql, qr, qo;
  WICK_TRY(wick_quant_params(ctx, a, "the lhs", false, &ql));
  WICK_CHECK_SUPPORTED(ctx, b->info == NULL || b->info->quant.count <= 1,
                       "a per-channel quantized rhs (%u scales) is not supported (LiteRT has no "
                       "per-channel integer BATCH_MATMUL and outputs zeros for it)",
                       b->info ? b->info->quant.count : 0u);
  WICK_TRY(wick_quant_params(ctx, b, "the rhs", false, &qr));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  d->acc64 = a->type == WICK_DTYPE_INT16;
  if (d->acc64)
    WICK_CHECK_SUPPORTED(ctx, ql.zero_point == 0 && qr.zero_point == 0 && qo.zero_point == 0,
                         "int16 operands must have zero points 0");
  wick_qbmm_params *p = &d->params;
  WICK_TRY(wick_quant_multiplier(ctx, (double)(ql.scale * qr.scale) / (double)qo.scale,
                                 d->acc64 ? 14 : 30, "the output", &p->multiplier, &p->shift));
  p->lhs_offset = -ql.zero_point;
  p->rhs_offset = -qr.zero_point;
  p->output_offset = qo.zero_point;
  wick_quant_type_range(out->type, &p->act_min, &p->act_max);

  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank - 2; i++) dims[i] = s->batch_dims[i];
  dims[rank - 2] = (int32_t)m;
  dims[rank - 1] = (int32_t)n;
  WICK_TRY(wick_op_set_output(ctx, 0, out->type, rank, dims));
  wick_op_set_macs(ctx, (uint64_t)wick_shape_elements(rank, dims) * (uint64_t)ka);
  wick_op_set_data(ctx, d);
  wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "rows"); /* split over rows, scalar */
  return WICK_OK;
}

typedef struct qbmm_job {
  const qbmm_data *d;
  const wick_tensor *lhs, *rhs;
  void *out;
} qbmm_job;

static void qbmm_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const qbmm_job *j = arg;
  wick_q_batch_matmul_rows__reference(j->lhs->type, j->rhs->type, &j->d->shape, &j->d->params,
                                      j->d->acc64, j->lhs->data, j->rhs->data, j->out,
                                      (int64_t)begin, (int64_t)end);
}

wick_status wick_bmm_invoke_quantized(wick_op_ctx *ctx) {
  const qbmm_data *d = wick_op_data(ctx);
  const wick_batch_matmul_shape *s = &d->shape;
  qbmm_job j = {d, wick_op_input(ctx, 0), wick_op_input(ctx, 1), wick_op_output(ctx, 0)->data};
  uint64_t rows = (uint64_t)s->m;
  for (int32_t i = 0; i < s->batch_rank; i++) rows *= (uint64_t)s->batch_dims[i];
  return wick_parallel_range(ctx, (size_t)rows, (uint64_t)s->n * (uint64_t)s->k, qbmm_rows, &j);
}
