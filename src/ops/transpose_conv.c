/*
 * transpose_conv.c — TRANSPOSE_CONV (float32; quantized inputs go to
 * transpose_conv_quantized.c).
 *
 * Inputs: output_shape (int32 [4]), weights OHWI [Cout, kh, kw, Cin], input
 * [N, H, W, Cin], optional bias [Cout]. Output [N, oH, oW, Cout] as given by
 * output_shape. Padding is that of the forward conv that maps the output back
 * to the input (LiteRT computes it the same way): SAME takes
 * floor(total/2) before, total = max(0, (H-1)*stride + k - oH).
 *
 * Invariants checked in prepare: output_shape is consistent with the input,
 * i.e. output_shape[0] = N, output_shape[3] = Cout, and the forward conv of
 * the requested oH x oW (with this padding, stride, filter) has exactly H x W
 * pixels. (LiteRT trusts output_shape; every file TensorFlow writes satisfies
 * this, and refusing inconsistent shapes keeps the kernel's index arithmetic
 * in one well-defined case.) A non-constant output_shape is read at invoke
 * (the node is prepared again then). These checks and the geometry are
 * wick_tconv_geometry / wick_tconv_output (op_common.c), shared with
 * transpose_conv_quantized.c.
 *
 * Next: src/kernels/reference/transpose_conv.c (the gather-form kernel).
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

typedef struct tconv_data {
  wick_conv_shape shape;
  float lo, hi;
} tconv_data;

static wick_status tconv_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 2)) return wick_tconv_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 3, 4, 1));
  wick_tensor *oshape, *filter, *in;
  WICK_TRY(wick_require_input(ctx, 0, &oshape));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  WICK_TRY(wick_require_input(ctx, 2, &in));
  wick_tensor *bias = wick_op_input(ctx, 3);
  WICK_TRY(wick_require_float32(ctx, in, "the input"));
  WICK_TRY(wick_require_float32(ctx, filter, "the weights"));
  if (bias) WICK_TRY(wick_require_float32(ctx, bias, "the bias"));
  wick_conv_shape shape;
  WICK_TRY(wick_tconv_geometry(ctx, oshape, filter, in, &shape));
  tconv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_activation_range_f32(ctx, ctx->params->conv.activation, &d->lo, &d->hi));
  d->shape = shape;
  WICK_TRY(wick_check_bias_length(ctx, bias, shape.out_c));
  /* The output shape is data: read it now if known, else at invoke. */
  WICK_TRY(wick_tconv_output(ctx, oshape, in, WICK_DTYPE_FLOAT32, &d->shape));
  ctx->node->user_data = d;
  return WICK_OK;
}

static wick_status tconv_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 2)) return wick_tconv_invoke_quantized(ctx);
  const tconv_data *d = ctx->node->user_data;
  wick_tensor *bias = wick_op_input(ctx, 3);
  wick_f32_transpose_conv2d__reference(&d->shape, wick_op_input(ctx, 2)->data,
                                       wick_op_input(ctx, 1)->data, bias ? bias->data : NULL,
                                       wick_op_output(ctx, 0)->data, d->lo, d->hi);
  return WICK_OK;
}

const wick_op_def wick_op_transpose_conv = {"TRANSPOSE_CONV", WICK_BUILTIN_TRANSPOSE_CONV, 5,
                                            tconv_prepare, tconv_invoke};
