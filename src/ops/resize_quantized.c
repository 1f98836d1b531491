/*
 * resize_quantized.c — quantized RESIZE_BILINEAR (int8, int16, legacy
 * uint8), NHWC.
 *
 * Reached from resize.c when the image is a quantized activation. The values
 * are interpolated as they are, so the output must carry the input's scale
 * and zero point (as converters write it; LiteRT does not requantize
 * either). Size handling as the float op: int32 [2], positive, read at
 * invoke when it is not a constant; align_corners and half_pixel_centers
 * not both. Arithmetic: wick_q_resize_bilinear__reference.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

wick_status wick_resize_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *size, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &size));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK(ctx, !(ctx->params->align_corners && ctx->params->half_pixel_centers),
             "align_corners and half_pixel_centers cannot both be set");
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  WICK_CHECK(ctx, size->type == WICK_DTYPE_INT32, "size must be int32, not %s",
             wick_dtype_name(size->type));
  WICK_CHECK(ctx, size->rank == 1 && size->dims[0] == 2,
             "size must be a 1-D tensor of 2 values (height, width)");
  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  WICK_CHECK_SUPPORTED(ctx, qi.scale == qo.scale && qi.zero_point == qo.zero_point,
                       "an output quantized differently from the input is not supported");
  if (!size->known && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  const int32_t *hw = size->data;
  const wick_status bad = size->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  if (hw[0] <= 0 || hw[1] <= 0)
    return wick_op_fail(ctx, bad, "size %dx%d must be positive", hw[0], hw[1]);
  /* The integer kernel scales coordinates by 1024 in 32 bits. */
  if (hw[0] > (1 << 20) || hw[1] > (1 << 20) || in->dims[1] > (1 << 20) || in->dims[2] > (1 << 20))
    return wick_op_fail(ctx, WICK_ERR_UNSUPPORTED_OP, "sizes above 2^20 are not supported");
  wick_resize_shape *s = wick_op_alloc(ctx, sizeof *s);
  if (s == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  s->batch = in->dims[0];
  s->in_h = in->dims[1];
  s->in_w = in->dims[2];
  s->channels = in->dims[3];
  s->out_h = hw[0];
  s->out_w = hw[1];
  s->align_corners = ctx->params->align_corners;
  s->half_pixel_centers = ctx->params->half_pixel_centers;
  if (s->batch > 0 && s->channels > 0)
    WICK_CHECK(ctx, s->in_h > 0 && s->in_w > 0, "cannot resize an empty %dx%d image to %dx%d",
               s->in_h, s->in_w, s->out_h, s->out_w);
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->channels};
  WICK_TRY(wick_op_set_output(ctx, 0, in->type, 4, dims));
  wick_op_set_data(ctx, s);
  wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(in->type));
  return WICK_OK;
}

wick_status wick_resize_invoke_quantized(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0);
  wick_q_resize_bilinear__reference(in->type, wick_op_data(ctx), in->data,
                                    wick_op_output(ctx, 0)->data);
  return WICK_OK;
}
