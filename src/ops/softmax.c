/*
 * softmax.c — SOFTMAX over the last axis (float32): exp(beta*(x-max))/sum.
 * Quantized inputs go to activations_quantized.c. The vectorized kernel
 * (src/kernels/template/elementwise.h) runs unless the reference is forced.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

static wick_status softmax_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_FLOAT32,
                       "input type %s: wick runs this op on float32 only so far",
                       wick_dtype_name(in->type));
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  wick_op_set_data(ctx, kern && kern->softmax ? (void *)kern : NULL);
  wick_op_set_kernel(ctx, wick_op_data(ctx) ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_REFERENCE, NULL);
  return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims);
}

/* Rows [begin, end), each normalized on its own (split over the threads). */
typedef struct softmax_job {
  const wick_f32_kernels *kern;
  size_t cols;
  float beta;
  const float *in;
  float *out;
} softmax_job;

static void softmax_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const softmax_job *j = arg;
  j->kern->softmax(j->cols, j->beta, j->in, j->out, begin, end);
}

static wick_status softmax_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_invoke_quantized(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  int64_t cols = in->dims[in->rank - 1];
  int64_t rows = cols ? wick_tensor_elements(in) / cols : 0;
  const wick_f32_kernels *kern = wick_op_data(ctx);
  if (kern != NULL) {
    softmax_job j = {kern, (size_t)cols, ctx->params->beta, in->data, wick_op_output(ctx, 0)->data};
    return wick_parallel_range(ctx, (size_t)rows, (uint64_t)cols * 16, softmax_rows, &j);
  }
  wick_f32_softmax__reference(rows, cols, ctx->params->beta, in->data,
                              wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

const wick_op_def wick_op_softmax = {"SOFTMAX",       WICK_BUILTIN_SOFTMAX, 3,
                                     softmax_prepare, softmax_invoke,       0};
