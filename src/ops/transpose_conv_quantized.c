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
 *
 * Kernels: int8 activations with a constant symmetric int8 filter run on the
 * int8 indirect-GEMM microkernels when the CPU has them, as stride_h x
 * stride_w sub-convolutions (src/kernels/q8_transpose_conv.c; bit-exact with
 * the reference), tiles split over the threads; everything else (uint8,
 * int16, run-time filters, strides above the filter size, force_reference)
 * runs the reference kernel over output rows split across the threads
 * (ops/parallel.h). Either way a cancelled invoke stops between tasks.
 * Next: wick_q_transpose_conv2d__reference in src/kernels/reference/quantized.c.
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct qtconv_data {
  wick_conv_shape shape;
  wick_qconv_params params;
  bool acc64;
  /* The phase form (NULL kern: the reference kernel). */
  const wick_q8_kernels *kern;
  wick_q8_output out;
  void *packed;
  int8_t *zero_row;          /* the prepared zero point, read by taps outside the input */
  wick_q8_tconv_tile *tiles; /* and their indirection pointers into the prepared input: */
  const int8_t **ind;
  const void *ind_input; /* the scratch address `ind` points into */
  size_t n_tiles;
} qtconv_data;

/* Chooses and packs the phase form, or leaves the reference kernel. */
static wick_status choose_kernels(wick_op_ctx *ctx, qtconv_data *d, const wick_tensor *in,
                                  const wick_tensor *bias) {
  const wick_conv_shape *s = &d->shape;
  d->kern = NULL;
  if (in->type != WICK_DTYPE_INT8 || d->acc64 || d->params.filter_offset != 0) return WICK_OK;
  const wick_q8_kernels *kern = wick_q8_kernels_select(wick_op_force_reference(ctx));
  if (kern == NULL || !wick_input_known(ctx, 1) || (bias != NULL && !wick_input_known(ctx, 3)))
    return WICK_OK;
  if ((int64_t)s->batch * s->out_h * s->out_w == 0 || s->out_c == 0 || s->in_c == 0 ||
      !wick_q8_tconv_supported(s))
    return WICK_OK;
  const int32_t zp = -d->params.input_offset;
  const size_t kc = (size_t)s->in_c;
  size_t packed_bytes, sub_bytes, pointers, tiles_bytes, ind_bytes, input_bytes;
  if (!wick_q8_tconv_sizes(kern, s, &packed_bytes, &sub_bytes, &d->n_tiles, &pointers) ||
      !wick_mul_size(d->n_tiles, sizeof(wick_q8_tconv_tile), &tiles_bytes) ||
      !wick_mul_size(pointers, sizeof(int8_t *), &ind_bytes) ||
      !wick_mul_size((size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w,
                     kc * wick_q8_input_bytes(kern), &input_bytes) ||
      !wick_add_size(input_bytes, WICK_Q8_ROW_PAD, &input_bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter or indirection size overflows");
  bool cached;
  if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->nr, packed_bytes, &cached)) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
  if (!cached) {
    int8_t *sub = wick_op_alloc(ctx, sub_bytes);
    if (sub == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    const wick_tensor *filter = wick_op_input(ctx, 1);
    wick_q8_tconv_pack(kern, s, filter->data, bias ? bias->data : NULL, zp, d->params.multiplier,
                       d->params.shift, sub, d->packed);
  }
  d->zero_row = wick_op_alloc(ctx, wick_q8_zero_row_bytes(kern, kc));
  d->tiles = wick_op_alloc(ctx, tiles_bytes);
  d->ind = wick_op_alloc(ctx, ind_bytes);
  if (d->zero_row == NULL || d->tiles == NULL || d->ind == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory (indirection buffer)");
  wick_q8_zero_row(kern, kc, zp, d->zero_row);
  d->ind_input = NULL;
  /* the input prepared in scratch, read up to WICK_Q8_ROW_PAD bytes past its end */
  wick_op_request_scratch(ctx, input_bytes);
  WICK_TRY(wick_conv_q8_output(ctx, &d->params, (size_t)s->out_c, !kern->s8, &d->out));
  d->kern = kern;
  return WICK_OK;
}

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
  wick_op_set_data(ctx, d);
  WICK_TRY(choose_kernels(ctx, d, in, bias));
  if (d->kern != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q8 phases");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(in->type));
  return WICK_OK;
}

typedef struct qtconv_job {
  qtconv_data *d;
  wick_dtype type;
  const uint8_t *in;
  const void *filter, *bias;
  uint8_t *out;
} qtconv_job;

/* Tiles [t0, t1) of the phase form. */
static void qtconv_tiles(void *arg, size_t t0, size_t t1, size_t thread) {
  (void)thread;
  const qtconv_job *j = arg;
  const qtconv_data *d = j->d;
  wick_q8_tconv_run(d->kern, &d->shape, d->tiles, d->ind, d->packed, (int8_t *)j->out, &d->out, t0,
                    t1);
}

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
  qtconv_data *d = wick_op_data(ctx);
  const wick_conv_shape *s = &d->shape;
  wick_tensor *in = wick_op_input(ctx, 2), *bias = wick_op_input(ctx, 3);
  qtconv_job j = {.d = d,
                  .type = in->type,
                  .in = in->data,
                  .filter = wick_op_input(ctx, 1)->data,
                  .bias = bias ? bias->data : NULL,
                  .out = wick_op_output(ctx, 0)->data};
  if (d->kern != NULL) {
    /* one flip of the input, read by every tap that reaches it */
    void *prepared = wick_op_scratch(ctx);
    wick_q8_prepare_input(d->kern,
                          (size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w * (size_t)s->in_c,
                          in->data, -d->params.input_offset, prepared);
    if (d->ind_input != prepared) {
      wick_q8_tconv_indirection_init(d->kern, s, prepared, wick_q8_input_bytes(d->kern),
                                     d->zero_row, d->tiles, d->ind);
      d->ind_input = prepared;
    }
    uint64_t per_tile = d->n_tiles ? wick_op_macs(ctx) / d->n_tiles : 0;
    return wick_parallel_range(ctx, d->n_tiles, per_tile ? per_tile : 1, qtconv_tiles, &j);
  }
  uint64_t rows = (uint64_t)s->batch * (uint64_t)s->out_h;
  return wick_parallel_rows(ctx, s->batch, s->out_h, rows ? wick_op_macs(ctx) / rows : 0,
                            wick_rows_splittable(s->in_h, s->out_h, s->stride_h, s->pad_top),
                            qtconv_rows, &j);
}
