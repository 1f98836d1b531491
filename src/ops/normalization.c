/*
 * normalization.c — LOG_SOFTMAX and L2_NORMALIZATION (float32), both over the
 * last axis; the output has the input's shape.
 *
 * L2_NORMALIZATION divides by max(sqrt(sum x^2), 1e-6): LiteRT's fixed
 * epsilon, so an all-zero row gives zeros. LiteRT refuses a fused activation
 * on it (its kernels never implemented one); so does wick. int8
 * L2_NORMALIZATION (version 2) is LiteRT's integer kernel: the output scale
 * must be 1/128 and its zero point 0, as LiteRT requires
 * (wick_q_l2_normalize_i8__reference).
 *
 * Next: src/kernels/reference/normalization.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

#define L2_EPSILON 1e-6f

/* int8 L2_NORMALIZATION: the input zero point (op data). */
static wick_status l2_norm_i8_prepare(wick_op_ctx *ctx, const wick_tensor *in) {
  wick_tensor *out = wick_op_output(ctx, 0);
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, out->type == WICK_DTYPE_INT8,
                       "output type %s with int8 input is not supported",
                       wick_dtype_name(out->type));
  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "input 0", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  WICK_CHECK_SUPPORTED(ctx, qo.scale == 1.0f / 128.0f && qo.zero_point == 0,
                       "int8 output must have scale 1/128 and zero point 0 (LiteRT's kernel "
                       "requires it), not %g and %d",
                       (double)qo.scale, (int)qo.zero_point);
  int32_t *zp = wick_op_alloc(ctx, sizeof *zp);
  if (zp == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  *zp = qi.zero_point;
  wick_op_set_data(ctx, zp);
  return wick_op_set_output(ctx, 0, WICK_DTYPE_INT8, in->rank, in->dims);
}

static wick_status rowwise_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  const bool l2 = wick_op_builtin(ctx) == WICK_BUILTIN_L2_NORMALIZATION;
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_FLOAT32 || (l2 && in->type == WICK_DTYPE_INT8),
                       "input type %s: wick runs this op on float32%s only so far",
                       wick_dtype_name(in->type), l2 ? " and int8" : "");
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  if (l2)
    WICK_CHECK_SUPPORTED(ctx, ctx->params->activation == WICK_ACT_NONE,
                         "fused activation %d is not supported (LiteRT refuses it too)",
                         (int)ctx->params->activation);
  if (in->type == WICK_DTYPE_INT8) return l2_norm_i8_prepare(ctx, in);
  return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims);
}

static void rows_cols(const wick_tensor *in, int64_t *rows, int64_t *cols) {
  *cols = in->dims[in->rank - 1];
  *rows = *cols ? wick_tensor_elements(in) / *cols : 0;
}

static wick_status log_softmax_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0);
  int64_t rows, cols;
  rows_cols(in, &rows, &cols);
  wick_f32_log_softmax__reference(rows, cols, in->data, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

static wick_status l2_norm_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0);
  int64_t rows, cols;
  rows_cols(in, &rows, &cols);
  if (in->type == WICK_DTYPE_INT8) {
    const int32_t *zp = wick_op_data(ctx);
    wick_q_l2_normalize_i8__reference(rows, cols, *zp, in->data, wick_op_output(ctx, 0)->data);
    return WICK_OK;
  }
  wick_f32_l2_normalize__reference(rows, cols, L2_EPSILON, in->data, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

const wick_op_def wick_op_log_softmax = {
    "LOG_SOFTMAX",   WICK_BUILTIN_LOG_SOFTMAX, 2,
    rowwise_prepare, log_softmax_invoke,       WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_l2_normalization = {
    "L2_NORMALIZATION", WICK_BUILTIN_L2_NORMALIZATION, 2, rowwise_prepare,
    l2_norm_invoke,     WICK_OP_REFERENCE_KERNELS};
