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
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  WICK_CHECK(ctx, filter->rank == 4, "weights must have rank 4 (OHWI), not %d", filter->rank);
  WICK_CHECK(ctx, oshape->type == WICK_DTYPE_INT32, "output_shape must be int32, not %s",
             wick_dtype_name(oshape->type));
  WICK_CHECK(ctx, oshape->rank == 1 && oshape->dims[0] == 4,
             "output_shape must be a 1-D tensor of 4 values");
  WICK_CHECK(ctx, filter->dims[3] == in->dims[3],
             "weights have %d input channels but the input has %d", filter->dims[3],
             in->dims[3]);
  const wick_conv_params *p = &ctx->params->conv;
  WICK_CHECK(ctx, p->stride_h > 0 && p->stride_w > 0, "strides %d x %d must be positive",
             p->stride_h, p->stride_w);
  qtconv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_conv_shape *s = &d->shape;
  s->batch = in->dims[0];
  s->in_h = in->dims[1];
  s->in_w = in->dims[2];
  s->in_c = in->dims[3];
  s->out_c = filter->dims[0];
  s->k_h = filter->dims[1];
  s->k_w = filter->dims[2];
  s->stride_h = p->stride_h;
  s->stride_w = p->stride_w;
  s->dilation_h = s->dilation_w = 1;
  s->groups = s->multiplier = 1;
  WICK_TRY(wick_conv_quant_params(ctx, in, filter, bias, out, s->out_c, 0, p->activation,
                                  &d->params, &d->acc64));

  if (!oshape->known && !ctx->graph->in_invoke) return WICK_STATUS_DEFER;
  const wick_status bad = oshape->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  const int32_t *want = oshape->data;
  if (want[0] != s->batch || want[3] != s->out_c || want[1] < 0 || want[2] < 0)
    return wick_op_fail(ctx, bad,
                        "output_shape [%d,%d,%d,%d] disagrees with batch %d and %d output "
                        "channels or has a negative dimension",
                        want[0], want[1], want[2], want[3], s->batch, s->out_c);
  s->out_h = want[1];
  s->out_w = want[2];
  int32_t fwd_h, fwd_w;
  WICK_TRY(wick_conv_output_size(ctx, p->padding, s->out_h, s->k_h, s->stride_h, 1, &fwd_h,
                                 &s->pad_top));
  WICK_TRY(wick_conv_output_size(ctx, p->padding, s->out_w, s->k_w, s->stride_w, 1, &fwd_w,
                                 &s->pad_left));
  if (fwd_h != s->in_h || fwd_w != s->in_w)
    return wick_op_fail(ctx, bad,
                        "output_shape %dx%d does not match the input %dx%d (a forward conv "
                        "maps it to %dx%d)",
                        s->out_h, s->out_w, s->in_h, s->in_w, fwd_h, fwd_w);
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->out_c};
  WICK_TRY(wick_op_set_output(ctx, 0, in->type, 4, dims));
  ctx->node->macs = (uint64_t)wick_tensor_elements(in) * (uint64_t)s->out_c *
                    (uint64_t)s->k_h * (uint64_t)s->k_w;
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
