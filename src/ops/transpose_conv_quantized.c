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
 * The reference kernel runs over output rows split across the interpreter's
 * threads (ops/parallel.h), which also lets a cancelled invoke stop between
 * them.
 * Next: wick_q_transpose_conv2d__reference in src/kernels/reference/quantized.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
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

typedef struct qtconv_job {
  const qtconv_data *d;
  wick_dtype type;
  const uint8_t *in;
  const void *filter, *bias;
  uint8_t *out;
} qtconv_job;

/* Output rows [y0, y1) of image n. */
static void qtconv_rows(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread) {
  (void)thread;
  const qtconv_job *j = arg;
  const wick_conv_shape *s = &j->d->shape;
  const wick_conv_shape r = wick_tconv_shape_rows(s, y0, y1);
  const size_t esize = wick_dtype_size(j->type);
  const uint8_t *in = j->in + (size_t)n * s->in_h * s->in_w * s->in_c * esize;
  uint8_t *out = j->out + ((size_t)n * s->out_h + (size_t)y0) * s->out_w * s->out_c * esize;
  wick_q_transpose_conv2d__reference(j->type, &r, &j->d->params, in, j->filter, j->bias,
                                     j->d->acc64, out);
}

wick_status wick_tconv_invoke_quantized(wick_op_ctx *ctx) {
  const qtconv_data *d = ctx->node->user_data;
  const wick_conv_shape *s = &d->shape;
  wick_tensor *in = wick_op_input(ctx, 2), *bias = wick_op_input(ctx, 3);
  qtconv_job j = {d,           in->type, in->data, wick_op_input(ctx, 1)->data,
                  bias ? bias->data : NULL, wick_op_output(ctx, 0)->data};
  uint64_t rows = (uint64_t)s->batch * (uint64_t)s->out_h;
  return wick_parallel_rows(ctx, s->batch, s->out_h, rows ? ctx->node->macs / rows : 0,
                            wick_rows_splittable(s->in_h, s->out_h, s->stride_h, s->pad_top),
                            qtconv_rows, &j);
}
