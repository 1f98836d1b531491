/*
 * normalization.c — LOG_SOFTMAX and L2_NORMALIZATION (float32), both over the
 * last axis; the output has the input's shape.
 *
 * L2_NORMALIZATION divides by max(sqrt(sum x^2), 1e-6): LiteRT's fixed
 * epsilon, so an all-zero row gives zeros. LiteRT refuses a fused activation
 * on it (its kernels never implemented one); so does wick.
 *
 * Next: src/kernels/reference/normalization.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"

#define L2_EPSILON 1e-6f

static wick_status rowwise_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_FLOAT32,
                       "input type %s: wick runs this op on float32 only so far",
                       wick_dtype_name(in->type));
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  if (wick_op_builtin(ctx) == WICK_BUILTIN_L2_NORMALIZATION)
    WICK_CHECK_SUPPORTED(ctx, ctx->params->activation == WICK_ACT_NONE,
                         "fused activation %d is not supported (LiteRT refuses it too)",
                         (int)ctx->params->activation);
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
  wick_f32_l2_normalize__reference(rows, cols, L2_EPSILON, in->data, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

const wick_op_def wick_op_log_softmax = {
    "LOG_SOFTMAX",   WICK_BUILTIN_LOG_SOFTMAX, 2,
    rowwise_prepare, log_softmax_invoke,       WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_l2_normalization = {
    "L2_NORMALIZATION", WICK_BUILTIN_L2_NORMALIZATION, 2, rowwise_prepare,
    l2_norm_invoke,     WICK_OP_REFERENCE_KERNELS};
