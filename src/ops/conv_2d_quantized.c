/*
 * conv_2d_quantized.c — quantized CONV_2D and DEPTHWISE_CONV_2D.
 *
 * Reached from conv_2d.c when the input is a quantized activation
 * (wick_quant_routed). Three schemes, as LiteRT:
 *   int8   activations, int8 symmetric weights (per-channel along the output
 *          channels, or per-tensor), int32 bias;
 *   uint8  legacy: uint8 asymmetric per-tensor weights, int32 bias, one
 *          multiplier from the float product s_in * s_w (LiteRT's
 *          GetQuantizedConvolutionMultipler), bias scale checked within 2%;
 *   int16  activations with zero points 0 ("16x8"), int8 weights, int32 or
 *          int64 bias (int64: 64-bit accumulation and LiteRT's int64
 *          requantization).
 * Shapes, padding, groups and dilation as the float op (conv_2d.c);
 * multipliers per output channel come from src/ops/quantization.c and the
 * arithmetic from src/kernels/reference/quantized.c.
 *
 * Optimized int8 kernels (src/kernels/q8.h, bit-exact with the reference):
 * prepare packs a constant int8 filter once when the CPU has them. CONV_2D
 * with groups 1: a 1x1, stride-1, unpadded conv is a GEMM over the
 * [N*H*W, Cin] input, any other an indirect GEMM (padding taps read a row of
 * the input zero point); on CPUs with AMX-INT8 every CONV_2D with groups 1
 * and dilation 1 along W (1x1 GEMMs included) runs on AMX tiles instead
 * (q8.h, "AMX convolutions": rows gathered per 32-pixel block, split over
 * the threads in blocks and 32-channel panels). DEPTHWISE_CONV_2D with multiplier 1: any filter
 * size, stride, dilation and padding. Everything else (uint8, int16,
 * grouped convs, depthwise multipliers > 1, filters computed at run time,
 * force_reference) runs the reference kernels.
 *
 * Threads (ops/parallel.h): the GEMM paths split their row tiles, the
 * depthwise path its output rows, into tasks that depend on the shape only,
 * so results are the same for any thread count.
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

/* AMX tiles run ~3x the MACs per ns of the VNNI kernels, and a task
 * re-reads its panels' weights: tasks of 8x the grain's MACs. */
#define WICK_Q8_AMX_TASK_SCALE 8
/* At most this many 32-pixel blocks: two tasks, each all of them and half
 * of the panels, so each weight is read once (ResNet's 7x7 layers: 2
 * blocks; more tasks would each gather all the rows again, 295 KB there). */
#define WICK_Q8_AMX_FEW_BLOCKS 4

/* The tasks of an AMX conv (wick_q8_gemm_split's fields, rows in blocks of
 * WICK_Q8_AMX_MB): runs of blocks, or with few blocks runs of panels. */
static size_t amx_split_init(wick_q8_gemm_split *sp, const wick_conv_shape *s) {
  const size_t m = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w, n = (size_t)s->out_c;
  const uint64_t k = (uint64_t)s->k_h * (uint64_t)s->k_w * (uint64_t)s->in_c;
  const uint64_t grain = WICK_TASK_GRAIN * WICK_Q8_AMX_TASK_SCALE;
  *sp = (wick_q8_gemm_split){
      .m = m, .n = n, .mr = WICK_Q8_AMX_MB, .nr = 32, .row_tasks = 1, .col_parts = 1};
  sp->tiles = m / WICK_Q8_AMX_MB + (m % WICK_Q8_AMX_MB != 0);
  sp->panels = n / 32 + (n % 32 != 0);
  if (sp->tiles <= WICK_Q8_AMX_FEW_BLOCKS)
    sp->col_parts = wick_split_count(sp->panels, (uint64_t)m * 32 * k, grain) > 1 ? 2 : 1;
  else
    sp->row_tasks = wick_split_count(sp->tiles, (uint64_t)WICK_Q8_AMX_MB * n * k, grain);
  return sp->row_tasks * sp->col_parts;
}

typedef enum qconv_path {
  QCONV_REFERENCE,
  QCONV_GEMM,
  QCONV_IGEMM,
  QCONV_AMX,
  QCONV_DW
} qconv_path;

typedef struct qconv_data {
  wick_conv_shape shape;
  wick_qconv_params params;
  bool depthwise, acc64;
  qconv_path path;
  const wick_q8_kernels *kern;
  wick_q8_output out;
  void *packed;
  int8_t *zero_row;      /* the prepared zero point, read by padding taps (igemm) */
  const int8_t **ind;    /* indirection buffer (igemm), into the flipped input */
  const void *ind_input; /* the scratch address `ind` points into */
  size_t work_bytes;     /* AMX: one thread's work buffer in scratch, 64-aligned */
} qconv_data;

/* Filter zero points: all 0 for int8 weights; one in [0, 255] for uint8. */
static wick_status check_filter_zero_points(wick_op_ctx *ctx, const wick_tensor *filter,
                                            int32_t *filter_offset) {
  const wick_quant *q = &filter->info->quant;
  if (filter->type == WICK_DTYPE_UINT8) {
    int64_t zp = q->zero_point[0];
    WICK_CHECK(ctx, zp >= 0 && zp <= 255, "filter zero point %lld is outside uint8", (long long)zp);
    *filter_offset = -(int32_t)zp;
    return WICK_OK;
  }
  for (uint32_t i = 0; i < q->count; i++)
    WICK_CHECK_SUPPORTED(ctx, q->zero_point[i] == 0,
                         "int8 weights must be symmetric (zero point %lld in channel %u)",
                         (long long)q->zero_point[i], i);
  *filter_offset = 0;
  return WICK_OK;
}

wick_status wick_conv_quant_params(wick_op_ctx *ctx, const wick_tensor *in,
                                   const wick_tensor *filter, const wick_tensor *bias,
                                   const wick_tensor *out, int32_t out_c, int32_t filter_axis,
                                   wick_activation activation, wick_qconv_params *p, bool *acc64) {
  const wick_dtype t = in->type;
  const wick_dtype want_w = t == WICK_DTYPE_UINT8 ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
  WICK_CHECK_SUPPORTED(ctx, filter->type == want_w, "%s activations need %s weights, not %s",
                       wick_dtype_name(t), wick_dtype_name(want_w), wick_dtype_name(filter->type));
  WICK_CHECK(ctx, out->type == t, "output type %s differs from the input's %s",
             wick_dtype_name(out->type), wick_dtype_name(t));
  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  if (t == WICK_DTYPE_INT16)
    WICK_CHECK_SUPPORTED(ctx, qi.zero_point == 0 && qo.zero_point == 0,
                         "int16 activations must have zero points 0 (input %d, output %d)",
                         (int)qi.zero_point, (int)qo.zero_point);
  const float *fscales;
  WICK_TRY(wick_quant_filter_scales(ctx, filter, out_c, filter_axis, &fscales));
  WICK_TRY(check_filter_zero_points(ctx, filter, &p->filter_offset));

  *acc64 = false;
  if (bias) {
    bool ok =
        bias->type == WICK_DTYPE_INT32 || (t == WICK_DTYPE_INT16 && bias->type == WICK_DTYPE_INT64);
    WICK_CHECK(ctx, ok, "bias type %s does not fit %s activations (int32%s)",
               wick_dtype_name(bias->type), wick_dtype_name(t),
               t == WICK_DTYPE_INT16 ? " or int64" : "");
    WICK_CHECK(ctx, wick_tensor_elements(bias) == out_c,
               "bias has %lld elements for %d output channels",
               (long long)wick_tensor_elements(bias), out_c);
    const wick_quant *bq = bias->info ? &bias->info->quant : NULL;
    WICK_CHECK(ctx, !bq || bq->count == 0 || bq->zero_point[0] == 0, "bias zero point must be 0");
    *acc64 = bias->type == WICK_DTYPE_INT64;
  } else if (t == WICK_DTYPE_INT16) {
    *acc64 = true; /* LiteRT's default 16x8 accumulator */
  }
  const int32_t max_shift = *acc64 ? 14 : 30;

  if (t == WICK_DTYPE_UINT8) {
    WICK_CHECK_SUPPORTED(ctx, filter->info->quant.count == 1,
                         "uint8 weights must be quantized per tensor");
    /* LiteRT's legacy multiplier: the product of the scales in float. */
    double product = (double)(qi.scale * fscales[0]);
    if (bias && bias->info && bias->info->quant.count > 0) {
      double diff = fabs(product - (double)bias->info->quant.scale[0]);
      WICK_CHECK(ctx, diff / (double)qo.scale <= 0.02,
                 "bias scale %g differs from input scale * filter scale %g",
                 (double)bias->info->quant.scale[0], product);
    }
    int32_t *m = wick_op_alloc(ctx, (size_t)(out_c > 0 ? out_c : 1) * sizeof(int32_t));
    int32_t *sh = wick_op_alloc(ctx, (size_t)(out_c > 0 ? out_c : 1) * sizeof(int32_t));
    if (m == NULL || sh == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t m0, s0;
    WICK_TRY(
        wick_quant_multiplier(ctx, product / (double)qo.scale, max_shift, "the output", &m0, &s0));
    for (int32_t c = 0; c < out_c; c++) {
      m[c] = m0;
      sh[c] = s0;
    }
    p->multiplier = m;
    p->shift = sh;
  } else {
    int32_t *m, *sh;
    WICK_TRY(wick_quant_channel_multipliers(ctx, qi.scale, fscales, out_c, qo.scale, max_shift, &m,
                                            &sh));
    p->multiplier = m;
    p->shift = sh;
  }
  p->input_offset = -qi.zero_point;
  p->output_offset = qo.zero_point;
  return wick_quant_activation_range(ctx, activation, t, qo, &p->act_min, &p->act_max);
}

/* The fused requantization's constants of the AVX-512 and AVX2 GEMM tiles, once. */
wick_status wick_conv_q8_output(const wick_op_ctx *ctx, const wick_qconv_params *p, size_t out_c,
                                bool fused_constants, wick_q8_output *out) {
  *out = (wick_q8_output){p->output_offset, p->act_min, p->act_max, NULL, NULL, false, false};
  if (fused_constants) {
    int64_t *rq64 = wick_op_alloc(ctx, wick_q8_rq64_words(out_c) * sizeof(int64_t));
    if (rq64 == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    wick_q8_rq64_prepare(out_c, p->shift, rq64);
    out->rq64 = rq64;
  }
  return WICK_OK;
}

static wick_status prepare_output(wick_op_ctx *ctx, qconv_data *d, const wick_q8_kernels *kern) {
  WICK_TRY(wick_conv_q8_output(ctx, &d->params, (size_t)d->shape.out_c,
                               d->path != QCONV_DW && !kern->s8, &d->out));
  d->kern = kern;
  return WICK_OK;
}

/* AMX (q8.h): the filter packed per filter row, scratch for one work
 * buffer per thread. */
static wick_status choose_amx(wick_op_ctx *ctx, qconv_data *d, const wick_q8_kernels *kern,
                              const int8_t *w, const int32_t *b) {
  const wick_conv_shape *s = &d->shape;
  size_t taps, kc, bytes;
  wick_q8_conv_amx_pack_dims(s, &taps, &kc);
  if (!wick_q8_gemm_packed_size(kern, (size_t)s->out_c, taps, kc, &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter size overflows");
  bool cached;
  if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->nr, bytes, &cached)) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
  if (!cached)
    wick_q8_gemm_pack(kern, (size_t)s->out_c, taps, kc, w, b, -d->params.input_offset,
                      d->params.multiplier, d->params.shift, d->packed);
  size_t scratch;
  d->work_bytes = wick_q8_conv_amx_work_bytes(s);
  /* + 64: the work buffers start at a 64-byte boundary */
  if (!wick_mul_size(d->work_bytes, wick_op_num_threads(ctx), &scratch) ||
      !wick_add_size(scratch, 64, &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  d->path = QCONV_AMX;
  return prepare_output(ctx, d, kern);
}

/* Chooses and packs an optimized int8 path, or leaves QCONV_REFERENCE. */
static wick_status choose_kernels(wick_op_ctx *ctx, qconv_data *d, const wick_tensor *in,
                                  const wick_tensor *filter, const wick_tensor *bias) {
  const wick_conv_shape *s = &d->shape;
  d->path = QCONV_REFERENCE;
  if (in->type != WICK_DTYPE_INT8 || d->acc64 || d->params.filter_offset != 0) return WICK_OK;
  const wick_q8_kernels *kern = wick_q8_kernels_select(wick_op_force_reference(ctx));
  if (kern == NULL || !wick_input_known(ctx, 1)) return WICK_OK;
  if (bias != NULL && !wick_input_known(ctx, 2)) return WICK_OK;
  if ((int64_t)s->batch * s->out_h * s->out_w == 0 || s->out_c == 0 || s->k_h == 0 || s->k_w == 0)
    return WICK_OK;
  const int8_t *w = filter->data;
  const int32_t *b = bias ? bias->data : NULL;
  const int32_t zp = -d->params.input_offset;
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w, c = (size_t)s->out_c;
  size_t bytes;
  if (d->depthwise) {
    if (s->multiplier != 1 || kern->dwconv == NULL) return WICK_OK;
    if (!wick_q8_dwconv_packed_size(c, taps, kern->dw_cr, &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter size overflows");
    bool cached;
    if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->dw_cr, bytes, &cached)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
    if (!cached)
      wick_q8_dwconv_pack(c, taps, kern->dw_cr, w, b, zp, d->params.multiplier, d->params.shift,
                          d->packed);
    d->path = QCONV_DW;
  } else {
    /* one input and one output channel per group (ConvNeXt's 7x7 as TensorFlow writes it): a
     * depthwise convolution once the filter [C, kh, kw, 1] is transposed to [kh, kw, C]; the
     * sums and the per-channel requantization are the grouped reference's */
    const bool channelwise = s->groups > 1 && s->groups == s->in_c && s->out_c == s->groups;
    if (channelwise && kern->dwconv != NULL) {
      if (!wick_q8_dwconv_packed_size(c, taps, kern->dw_cr, &bytes))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter size overflows");
      bool cached;
      if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->dw_cr, bytes, &cached)) == NULL)
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
      if (!cached) {
        size_t n;
        int8_t *t;
        if (!wick_mul_size(taps, c, &n) || (t = wick_op_alloc(ctx, n)) == NULL)
          return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t o = 0; o < c; o++)
          for (size_t i = 0; i < taps; i++) t[i * c + o] = w[o * taps + i];
        wick_q8_dwconv_pack(c, taps, kern->dw_cr, t, b, zp, d->params.multiplier, d->params.shift,
                            d->packed);
      }
      d->shape.multiplier = 1;
      d->path = QCONV_DW;
      return prepare_output(ctx, d, kern);
    }
    if (s->groups != 1) return WICK_OK;
    if (wick_q8_conv_amx_supported(kern, s)) return choose_amx(ctx, d, kern, w, b);
    const size_t kc = (size_t)s->in_c;
    if (!wick_q8_gemm_packed_size(kern, c, taps, kc, &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed filter size overflows");
    bool cached;
    if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->nr, bytes, &cached)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the filter");
    if (!cached)
      wick_q8_gemm_pack(kern, c, taps, kc, w, b, zp, d->params.multiplier, d->params.shift,
                        d->packed);
    const size_t ib = wick_q8_input_bytes(kern);
    if (taps == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_top == 0 && s->pad_left == 0 &&
        s->out_h == s->in_h && s->out_w == s->in_w) {
      d->path = QCONV_GEMM;
      /* the input prepared once per invoke (wick_q8_prepare_input) */
      size_t scratch;
      if (!wick_mul_size((size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w, kc * ib, &scratch))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
      wick_op_request_scratch(ctx, scratch);
    } else {
      size_t count;
      if (!wick_q8_conv_indirection_size(s, kern->mr, &count) ||
          !wick_mul_size(count, sizeof(int8_t *), &bytes))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "indirection buffer size overflows");
      d->zero_row = wick_op_alloc(ctx, wick_q8_zero_row_bytes(kern, kc));
      d->ind = wick_op_alloc(ctx, bytes);
      if (d->zero_row == NULL || d->ind == NULL)
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory (indirection buffer)");
      /* the kernels read the input prepared in scratch (x + 128, or x - zp),
       * up to WICK_Q8_ROW_PAD bytes past its last row */
      wick_q8_zero_row(kern, kc, zp, d->zero_row);
      size_t scratch;
      if (!wick_mul_size((size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w, kc * ib, &scratch))
        return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
      wick_op_request_scratch(ctx, scratch + WICK_Q8_ROW_PAD);
      d->ind_input = NULL;
      d->path = QCONV_IGEMM;
    }
  }
  return prepare_output(ctx, d, kern);
}

wick_status wick_conv_prepare_quantized(wick_op_ctx *ctx, bool depthwise) {
  WICK_TRY(wick_check_arity(ctx, 2, 3, 1));
  wick_tensor *in, *filter, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  wick_tensor *bias = wick_op_input(ctx, 2);
  qconv_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->depthwise = depthwise;
  wick_conv_shape *s = &d->shape;
  WICK_TRY(wick_conv2d_geometry(ctx, in, filter, NULL, depthwise, s));
  WICK_TRY(wick_conv_quant_params(ctx, in, filter, bias, out, s->out_c, depthwise ? 3 : 0,
                                  ctx->params->conv.activation, &d->params, &d->acc64));
  WICK_TRY(wick_conv2d_set_output(ctx, s, depthwise, in->type));
  wick_op_set_data(ctx, d);
  WICK_TRY(choose_kernels(ctx, d, in, filter, bias));
  static const char *const names[] = {[QCONV_REFERENCE] = NULL,
                                      [QCONV_GEMM] = "q8 gemm",
                                      [QCONV_IGEMM] = "q8 igemm",
                                      [QCONV_AMX] = "q8 amx",
                                      [QCONV_DW] = "q8 dwconv"};
  if (d->path == QCONV_REFERENCE) /* why: another type, int16, a filter zero point, groups */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       !depthwise && s->groups != 1      ? "grouped"
                       : depthwise && s->multiplier != 1 ? "multiplier"
                                                         : wick_dtype_name(in->type));
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, names[d->path]);
  if (d->path != QCONV_REFERENCE) { /* the packed copy holds the filter and the bias */
    wick_op_release_input(ctx, 1);
    wick_op_release_input(ctx, 2);
  }
  return WICK_OK;
}

/* One invoke's arguments, shared by the tasks. */
typedef struct qconv_job {
  const qconv_data *d;
  const int8_t *in;
  int8_t *out, *flipped;
} qconv_job;

static void igemm_tiles(void *arg, size_t t0, size_t t1, size_t thread) {
  (void)thread;
  const qconv_job *j = arg;
  wick_q8_conv_igemm(j->d->kern, &j->d->shape, j->d->ind, true, j->d->packed, j->out, &j->d->out,
                     t0, t1);
}

typedef struct qconv_amx_job {
  const qconv_data *d;
  wick_q8_gemm_split split;
  const int8_t *input;
  int8_t *out;
  uint8_t *work; /* 64-aligned, d->work_bytes per thread */
} qconv_amx_job;

static void amx_task(void *arg, size_t task, size_t thread) {
  const qconv_amx_job *j = arg;
  const qconv_data *d = j->d;
  size_t m0, m1, n0, n1;
  wick_q8_gemm_split_task(&j->split, task, &m0, &m1, &n0, &n1);
  d->kern->conv_amx(&d->shape, j->input, -d->params.input_offset, d->packed, j->out, &d->out, m0,
                    m1, n0, n1, j->work + thread * d->work_bytes);
}

static void dw_rows(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread) {
  (void)thread;
  const qconv_job *j = arg;
  const wick_conv_shape *s = &j->d->shape;
  wick_conv_shape one = *s;
  one.batch = 1;
  j->d->kern->dwconv(&one, -j->d->params.input_offset,
                     j->in + (int64_t)n * s->in_h * s->in_w * s->in_c, j->d->packed,
                     j->out + (int64_t)n * s->out_h * s->out_w * s->out_c, &j->d->out, y0, y1);
}

wick_status wick_conv_invoke_quantized(wick_op_ctx *ctx) {
  qconv_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *bias = wick_op_input(ctx, 2);
  const wick_conv_shape *s = &d->shape;
  int8_t *out8 = wick_op_output(ctx, 0)->data;
  qconv_job j = {d, in->data, out8, NULL};
  const uint64_t macs_per_pixel = (uint64_t)s->out_c * (uint64_t)s->k_h * (uint64_t)s->k_w *
                                  (d->depthwise ? 1u : (uint64_t)s->in_c);
  switch (d->path) {
    case QCONV_GEMM: {
      const size_t m = (size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w;
      return wick_parallel_q8_gemm(ctx, d->kern, m, (size_t)s->out_c, (size_t)s->in_c, in->data,
                                   -d->params.input_offset, wick_op_scratch(ctx), d->packed, out8,
                                   &d->out);
    }
    case QCONV_IGEMM: {
      /* one flip of the input, read k_h * k_w times by the kernels */
      int8_t *flipped = wick_op_scratch(ctx);
      wick_q8_prepare_input(d->kern,
                            (size_t)s->batch * (size_t)s->in_h * (size_t)s->in_w * (size_t)s->in_c,
                            in->data, -d->params.input_offset, flipped);
      if (d->ind_input != flipped) {
        wick_q8_conv_indirection_init(s, d->kern->mr, flipped, wick_q8_input_bytes(d->kern),
                                      d->zero_row, d->ind);
        d->ind_input = flipped;
      }
      return wick_parallel_range(ctx, wick_q8_conv_tiles(s, d->kern->mr),
                                 macs_per_pixel * d->kern->mr, igemm_tiles, &j);
    }
    case QCONV_AMX: {
      const uintptr_t work = ((uintptr_t)wick_op_scratch(ctx) + 63) & ~(uintptr_t)63;
      qconv_amx_job aj = {.d = d, .input = in->data, .out = out8, .work = (uint8_t *)work};
      return wick_parallel_for(ctx, amx_split_init(&aj.split, s), amx_task, &aj);
    }
    case QCONV_DW:
      return wick_parallel_rows(ctx, s->batch, s->out_h,
                                macs_per_pixel * WICK_DEPTHWISE_WORK_PER_MAC * (uint64_t)s->out_w,
                                true, dw_rows, &j);
    case QCONV_REFERENCE: break;
  }
  const void *b = bias ? bias->data : NULL;
  if (d->depthwise)
    wick_q_depthwise_conv2d__reference(in->type, &d->shape, &d->params, in->data,
                                       wick_op_input(ctx, 1)->data, b, d->acc64,
                                       wick_op_output(ctx, 0)->data);
  else
    wick_q_conv2d__reference(in->type, &d->shape, &d->params, in->data, wick_op_input(ctx, 1)->data,
                             b, d->acc64, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}
