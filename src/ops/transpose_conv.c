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
 * (the node is prepared again then).
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

static wick_status check_float(const wick_op_ctx *ctx, const wick_tensor *t, const char *what) {
  WICK_CHECK_SUPPORTED(ctx, t->type == WICK_DTYPE_FLOAT32,
                       "%s has type %s; wick runs TRANSPOSE_CONV on float32 only so far", what,
                       wick_dtype_name(t->type));
  return WICK_OK;
}

static wick_status tconv_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 2)) return wick_tconv_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 3, 4, 1));
  wick_tensor *oshape, *filter, *in;
  WICK_TRY(wick_require_input(ctx, 0, &oshape));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  WICK_TRY(wick_require_input(ctx, 2, &in));
  wick_tensor *bias = wick_op_input(ctx, 3);
  WICK_TRY(check_float(ctx, in, "the input"));
  WICK_TRY(check_float(ctx, filter, "the weights"));
  if (bias) WICK_TRY(check_float(ctx, bias, "the bias"));
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
  tconv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_activation_range_f32(ctx, p->activation, &d->lo, &d->hi));
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
  if (bias)
    WICK_CHECK(ctx, wick_tensor_elements(bias) == s->out_c,
               "bias has %lld elements for %d output channels",
               (long long)wick_tensor_elements(bias), s->out_c);

  /* The output shape is data: read it now if known, else at invoke. */
  if (!oshape->known && !ctx->graph->in_invoke) return WICK_STATUS_DEFER;
  const int32_t *want = oshape->data;
  if (want[0] != s->batch || want[3] != s->out_c)
    return wick_op_fail(ctx, oshape->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT,
                        "output_shape [%d,%d,%d,%d] disagrees with batch %d and %d output "
                        "channels",
                        want[0], want[1], want[2], want[3], s->batch, s->out_c);
  if (want[1] < 0 || want[2] < 0)
    return wick_op_fail(ctx, oshape->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT,
                        "output_shape [%d,%d,%d,%d] has a negative dimension", want[0], want[1],
                        want[2], want[3]);
  s->out_h = want[1];
  s->out_w = want[2];
  int32_t fwd_h, fwd_w;
  WICK_TRY(wick_conv_output_size(ctx, p->padding, s->out_h, s->k_h, s->stride_h, 1, &fwd_h,
                                 &s->pad_top));
  WICK_TRY(wick_conv_output_size(ctx, p->padding, s->out_w, s->k_w, s->stride_w, 1, &fwd_w,
                                 &s->pad_left));
  if (fwd_h != s->in_h || fwd_w != s->in_w)
    return wick_op_fail(ctx, oshape->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT,
                        "output_shape %dx%d does not match the input %dx%d: a %s conv with a "
                        "%dx%d filter and strides %dx%d maps it to %dx%d",
                        s->out_h, s->out_w, s->in_h, s->in_w,
                        p->padding == WICK_PADDING_SAME ? "SAME" : "VALID", s->k_h, s->k_w,
                        s->stride_h, s->stride_w, fwd_h, fwd_w);
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->out_c};
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 4, dims));
  ctx->node->macs = (uint64_t)wick_tensor_elements(in) * (uint64_t)s->out_c *
                    (uint64_t)s->k_h * (uint64_t)s->k_w;
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
