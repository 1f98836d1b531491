/*
 * transpose_conv_quantized.c — quantized TRANSPOSE_CONV (int8 per-channel,
 * uint8 per-tensor, int16 activations with int32 or int64 bias).
 *
 * Reached from transpose_conv.c when the input (operand 2) is a quantized
 * activation. Shapes as the float op: output_shape (int32 [4], read at
 * invoke when fed at run time) must agree with the batch, the output
 * channels and, through the forward conv of the same padding, the input's
 * height and width. Requantization as CONV_2D (wick_conv_quant_params).
 * The fused activation is applied from the file's option; LiteRT's quantized
 * kernel reads it through the wrong options struct (so it effectively clamps
 * to the full range): files converted by TensorFlow carry NONE there.
 * Next: wick_q_transpose_conv2d__reference in src/kernels/reference/quantized.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

typedef struct qtconv_data {
  wick_conv_shape shape;
  wick_qconv_params params;
  bool acc64;
} qtconv_data;

wick_status wick_tconv_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 4, 1));
  wick_tensor *oshape, *filter, *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &oshape));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  WICK_TRY(wick_require_input(ctx, 2, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  wick_tensor *bias = wick_op_input(ctx, 3);
  wick_conv_shape shape;
  WICK_TRY(wick_tconv_geometry(ctx, oshape, filter, in, &shape));
  qtconv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->shape = shape;
  WICK_TRY(wick_conv_quant_params(ctx, in, filter, bias, out, shape.out_c, 0,
                                  ctx->params->conv.activation, &d->params, &d->acc64));
  WICK_TRY(wick_tconv_output(ctx, oshape, in, in->type, &d->shape));
  ctx->node->user_data = d;
  return WICK_OK;
}

wick_status wick_tconv_invoke_quantized(wick_op_ctx *ctx) {
  const qtconv_data *d = ctx->node->user_data;
  wick_tensor *in = wick_op_input(ctx, 2), *bias = wick_op_input(ctx, 3);
  wick_q_transpose_conv2d__reference(in->type, &d->shape, &d->params, in->data,
                                     wick_op_input(ctx, 1)->data, bias ? bias->data : NULL,
                                     d->acc64, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}
