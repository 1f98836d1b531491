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
 * Kernels: with constant weights and an optimized GEMM (src/kernels/select.c),
 * prepare packs the filter as a matrix of (tap, output channel) columns; invoke
 * then multiplies input rows by it into scratch (one GEMM: every input pixel's
 * contribution through every tap) and gathers each output pixel's taps from
 * there (wick_f32_tconv_gather, src/kernels/transpose_conv.c). Output rows go
 * in rounds whose GEMM result fits TCONV_ROUND_BYTES; a round recomputes the
 * few input rows it shares with the previous one. Otherwise (weights fed at
 * run time, no optimized GEMM, force_reference) the reference kernel runs.
 * Both split over the interpreter's threads by shape alone (GEMM tasks and
 * output rows), so results do not depend on the thread count, and both stop
 * between tasks when the invoke is cancelled.
 *
 * Convolution2DTransposeBias (a MediaPipe custom op, run by LiteRT's XNNPACK
 * delegate) is the same float op with other operands and options: input
 * [N, H, W, Cin], weights [Cout, kh, kw, Cin], bias [Cout], no output_shape
 * (the output is H * stride for SAME, (H - 1) * stride + kh for VALID, as
 * XNNPACK's deconvolution computes it) and no activation. Its custom_options
 * are MediaPipe's raw TfLiteTransposeConvParams: int32 padding (1 SAME,
 * 2 VALID), stride_width, stride_height, little-endian; longer structs (newer
 * headers append fields) are read for these three only, as XNNPACK does.
 *
 * Next: src/kernels/reference/transpose_conv.c (the gather-form kernel).
 */
#include <string.h>

#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

/* Scratch for one round's GEMM result, unless a single output row needs more:
 * large enough that the rows a round recomputes are a few percent of the work,
 * small enough to stay in the last-level cache. */
#define TCONV_ROUND_BYTES ((size_t)4 << 20)

typedef struct tconv_data {
  wick_conv_shape shape;
  float lo, hi;
  const wick_f32_gemm_kernel *kern; /* NULL: the reference kernel */
  float *packed;                    /* the filter as (tap, output channel) columns */
  size_t cols_per_pixel;            /* k_h * k_w * out_c: one GEMM row */
  int32_t round_rows;               /* output rows per GEMM + gather round */
  uint8_t input_slot, bias_slot;    /* operand positions of the input and the bias */
} tconv_data;

/* The end of the round of output rows that starts at row y. */
static inline int32_t round_end(const tconv_data *d, int64_t y) {
  return y + d->round_rows < d->shape.out_h ? (int32_t)(y + d->round_rows) : d->shape.out_h;
}

/* Output rows per round and the scratch they need, or false on overflow. */
static bool plan_rounds(tconv_data *d, size_t *scratch_bytes) {
  const wick_conv_shape *s = &d->shape;
  size_t row_bytes;
  if (__builtin_mul_overflow((size_t)s->in_w, d->cols_per_pixel * sizeof(float), &row_bytes))
    return false;
  /* R output rows read at most (R + k_h - 2) / stride + 1 input rows. */
  int64_t fit = row_bytes ? (int64_t)(TCONV_ROUND_BYTES / row_bytes) : s->in_h;
  int64_t rows = (fit - 1) * s->stride_h - s->k_h + 2;
  d->round_rows = (int32_t)(rows < 1 ? 1 : (rows > s->out_h ? s->out_h : rows));
  int32_t most = 0;
  for (int64_t y = 0; y < s->out_h; y += d->round_rows) {
    int32_t first, last, y0 = (int32_t)y, y1 = round_end(d, y);
    wick_tconv_input_rows(s, y0, y1, &first, &last);
    if (last - first + 1 > most) most = last - first + 1;
  }
  return !__builtin_mul_overflow((size_t)most, row_bytes, scratch_bytes);
}

/* The GEMM form when the weights are constant and the CPU has a GEMM. */
static wick_status choose_kernels(wick_op_ctx *ctx, tconv_data *d) {
  d->kern = NULL;
  const wick_conv_shape *s = &d->shape;
  const wick_f32_kernels *all = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (all == NULL || !wick_input_known(ctx, 1) || s->in_c == 0 || s->out_c == 0 || s->out_h == 0 ||
      s->out_w == 0)
    return WICK_OK;
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w, in_c = (size_t)s->in_c;
  size_t floats, bytes, scratch;
  if (__builtin_mul_overflow(taps, (size_t)s->out_c, &d->cols_per_pixel) ||
      !plan_rounds(d, &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "the GEMM scratch size overflows");
  const wick_f32_gemm_kernel *kern = wick_f32_gemm_kernel_for(all, d->cols_per_pixel);
  if (!wick_f32_gemm_packed_size_checked(d->cols_per_pixel, in_c, kern->nr, &floats) ||
      !wick_mul_size(floats, sizeof(float), &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed weights size overflows");
  bool cached;
  if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->nr, bytes, &cached)) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the weights");
  if (!cached)
    wick_f32_gemm_pack_grouped(d->cols_per_pixel, in_c, kern->nr, wick_op_input(ctx, 1)->data,
                               (size_t)s->out_c, taps * in_c, in_c, d->packed);
  wick_op_request_scratch(ctx, scratch);
  d->kern = kern;
  return WICK_OK;
}

/* The float op: weights are input 1, the input and the (optional) bias are
 * inputs input_slot and bias_slot; ctx->params->conv holds padding, strides
 * and activation. oshape NULL: the output size the padding implies. */
static wick_status float_prepare(wick_op_ctx *ctx, const wick_tensor *oshape, size_t input_slot,
                                 size_t bias_slot) {
  wick_tensor *filter, *in;
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  WICK_TRY(wick_require_input(ctx, input_slot, &in));
  wick_tensor *bias = wick_op_input(ctx, bias_slot);
  WICK_TRY(wick_require_float32(ctx, in, "the input"));
  WICK_TRY(wick_require_float32(ctx, filter, "the weights"));
  if (bias) WICK_TRY(wick_require_float32(ctx, bias, "the bias"));
  wick_conv_shape shape;
  WICK_TRY(wick_tconv_geometry(ctx, oshape, filter, in, &shape));
  tconv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_activation_range_f32(ctx, ctx->params->conv.activation, &d->lo, &d->hi));
  d->shape = shape;
  d->input_slot = (uint8_t)input_slot;
  d->bias_slot = (uint8_t)bias_slot;
  WICK_TRY(wick_check_bias_length(ctx, bias, shape.out_c));
  /* The output shape is data: read it now if known, else at invoke. */
  if (oshape != NULL)
    WICK_TRY(wick_tconv_output(ctx, oshape, in, WICK_DTYPE_FLOAT32, &d->shape));
  else
    WICK_TRY(wick_tconv_output_dims(ctx, NULL, WICK_ERR_MALFORMED_MODEL, in, WICK_DTYPE_FLOAT32,
                                    &d->shape));
  wick_op_set_data(ctx, d);
  WICK_TRY(choose_kernels(ctx, d));
  if (d->kern != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "gemm + gather");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, NULL);
  return WICK_OK;
}

static wick_status tconv_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 2)) return wick_tconv_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 3, 4, 1));
  wick_tensor *oshape;
  WICK_TRY(wick_require_input(ctx, 0, &oshape));
  return float_prepare(ctx, oshape, 2, 3);
}

typedef struct tconv_job {
  const tconv_data *d;
  const float *in, *filter, *bias;
  float *cols, *out;           /* cols: scratch for the GEMM form's result */
  int32_t image, y0, col_row0; /* the GEMM form's round */
} tconv_job;

/* Rows [y0 + begin, y0 + end) of the round's image from its GEMM result. */
static void gather_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const tconv_job *j = arg;
  const wick_conv_shape *s = &j->d->shape;
  int32_t y0 = j->y0 + (int32_t)begin, y1 = j->y0 + (int32_t)end;
  float *out = j->out + (((int64_t)j->image * s->out_h + y0) * s->out_w) * s->out_c;
  wick_f32_tconv_gather(s, j->cols, j->col_row0, j->bias, y0, y1, out, j->d->lo, j->d->hi);
}

static wick_status gemm_invoke(const wick_op_ctx *ctx, tconv_job *j) {
  const tconv_data *d = j->d;
  const wick_conv_shape *s = &d->shape;
  const size_t in_c = (size_t)s->in_c, n = d->cols_per_pixel;
  /* Adds per output element: about the taps that reach it. */
  uint64_t taps = (uint64_t)s->k_h * (uint64_t)s->k_w, reach = (uint64_t)s->stride_h * s->stride_w;
  uint64_t per_row = (uint64_t)s->out_w * (uint64_t)s->out_c * (taps / reach + 1);
  for (j->image = 0; j->image < s->batch; j->image++)
    for (int64_t y = 0; y < s->out_h; y += d->round_rows) {
      int32_t y1 = round_end(d, y), last;
      j->y0 = (int32_t)y;
      wick_tconv_input_rows(s, j->y0, y1, &j->col_row0, &last);
      if (j->col_row0 <= last) {
        wick_f32_gemm_tasks t;
        size_t m = (size_t)(last - j->col_row0 + 1) * (size_t)s->in_w;
        const float *a = j->in + (((int64_t)j->image * s->in_h + j->col_row0) * s->in_w) * s->in_c;
        size_t tasks = wick_f32_gemm_tasks_init(&t, d->kern, m, n, in_c, a, in_c, d->packed,
                                                j->cols, n, -INFINITY, INFINITY, WICK_TASK_GRAIN);
        WICK_TRY(wick_op_run_gemm_tasks(ctx, &t, tasks));
      }
      WICK_TRY(wick_parallel_range(ctx, (size_t)(y1 - j->y0), per_row, gather_rows, j));
    }
  return WICK_OK;
}

/* Output rows [y0, y1) of image n with the reference kernel. */
static void reference_rows(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread) {
  (void)thread;
  const tconv_job *j = arg;
  const wick_conv_shape *s = &j->d->shape;
  const wick_conv_shape r = wick_tconv_shape_rows(s, y0, y1);
  const float *in = j->in + (int64_t)n * s->in_h * s->in_w * s->in_c;
  float *out = j->out + ((int64_t)n * s->out_h + y0) * s->out_w * s->out_c;
  wick_f32_transpose_conv2d__reference(&r, in, j->filter, j->bias, out, j->d->lo, j->d->hi);
}

static wick_status float_invoke(wick_op_ctx *ctx) {
  const tconv_data *d = wick_op_data(ctx);
  const wick_conv_shape *s = &d->shape;
  wick_tensor *bias = wick_op_input(ctx, d->bias_slot);
  tconv_job j = {.d = d,
                 .in = wick_op_input(ctx, d->input_slot)->data,
                 .filter = wick_op_input(ctx, 1)->data,
                 .bias = bias ? bias->data : NULL,
                 .cols = wick_op_scratch(ctx),
                 .out = wick_op_output(ctx, 0)->data};
  if (d->kern != NULL) return gemm_invoke(ctx, &j);
  uint64_t rows = (uint64_t)s->batch * (uint64_t)s->out_h;
  return wick_parallel_rows(ctx, s->batch, s->out_h, rows ? wick_op_macs(ctx) / rows : 0,
                            wick_rows_splittable(s->in_h, s->out_h, s->stride_h, s->pad_top),
                            reference_rows, &j);
}

static wick_status tconv_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 2)) return wick_tconv_invoke_quantized(ctx);
  return float_invoke(ctx);
}

/* Convolution2DTransposeBias: decodes the raw options struct into conv
 * params, then prepares the float op with input 0, weights 1, bias 2. */
static wick_status tconv_bias_prepare(wick_op_ctx *ctx) {
  size_t size;
  const uint8_t *opt = wick_op_custom_options(ctx, &size);
  if (size < 12)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "custom_options hold %zu bytes; the options struct (padding, "
                        "stride_width, stride_height as int32) needs 12",
                        size);
  int32_t v[3];
  for (int i = 0; i < 3; i++) {
    uint32_t u = (uint32_t)opt[4 * i] | (uint32_t)opt[4 * i + 1] << 8 |
                 (uint32_t)opt[4 * i + 2] << 16 | (uint32_t)opt[4 * i + 3] << 24;
    memcpy(&v[i], &u, sizeof u);
  }
  wick_op_params params;
  memset(&params, 0, sizeof params);
  if (v[0] == 1)
    params.conv.padding = WICK_PADDING_SAME;
  else if (v[0] == 2)
    params.conv.padding = WICK_PADDING_VALID;
  else
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "padding %d in custom_options is neither SAME (1) nor VALID (2)", v[0]);
  params.conv.stride_w = v[1];
  params.conv.stride_h = v[2];
  params.conv.dilation_w = params.conv.dilation_h = 1;
  params.conv.activation = WICK_ACT_NONE;
  wick_op_ctx c = {ctx->graph, ctx->node, &params};
  WICK_TRY(wick_check_arity(&c, 3, 3, 1));
  wick_tensor *bias;
  WICK_TRY(wick_require_input(&c, 2, &bias)); /* the bias is not optional here */
  return float_prepare(&c, NULL, 0, 2);
}

const wick_op_def wick_op_convolution_2d_transpose_bias = {
    "Convolution2DTransposeBias", WICK_BUILTIN_CUSTOM, 1, tconv_bias_prepare, float_invoke, 0};

const wick_op_def wick_op_transpose_conv = {
    "TRANSPOSE_CONV", WICK_BUILTIN_TRANSPOSE_CONV, 5, tconv_prepare, tconv_invoke, 0};
