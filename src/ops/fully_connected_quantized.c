/*
 * fully_connected_quantized.c — quantized FULLY_CONNECTED.
 *
 * Reached from fully_connected.c when the input is a quantized activation.
 * Schemes as LiteRT: int8 activations with int8 weights (per-tensor, whose
 * zero point is applied for backward compatibility, or per-channel along
 * dimension 0, symmetric), legacy uint8 with uint8 weights, and int16
 * activations (zero points 0) with int8 weights and an int32 or int64 bias
 * (64-bit accumulation unless the bias is int32). The bias is optional.
 *
 * Requantization: LiteRT's reference FULLY_CONNECTED (since 2025) multiplies
 * the accumulator by s_in * s_w[o] / s_out in double and rounds, instead of
 * the Q31 fixed-point multiplier the other ops use; wick's reference does the
 * same so that it stays bit-exact with LiteRT's reference kernels (its
 * optimized kernels may differ by one step from both).
 * Shapes (keep_num_dims, row count) as the float op.
 *
 * Optimized int8 kernels (src/kernels/q8.h): int8 activations with constant
 * int8 weights whose zero point is 0 run the packed GEMM with the same
 * double requantization, bit-exact with the reference, its row tiles split
 * over the interpreter's threads. int16 activations with constant symmetric
 * int8 weights (the 16x8 scheme) run the int8 table's fc16 kernel
 * (src/kernels/q16.h: weights packed as int16 pairs, VPMADDWD on AVX2) in
 * tiles split over the threads as the int8 GEMM's, or without one the
 * portable rows on the weights widened to int16 once; both bit-exact with
 * the reference.
 * Everything else runs the reference kernel.
 */
#include "format/schema.h"
#include "kernels/q16.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct qfc_data {
  int64_t m, n, k;
  wick_qfc_params params;
  bool acc64;
  const wick_q8_kernels *kern; /* NULL: the reference kernel */
  void *packed;
  wick_q8_output out;
  int16_t *w16;        /* 16x8 portable: the weights widened to int16 [n, k], or NULL */
  wick_q16_fc_fn fc16; /* 16x8 on packed weights (q16.h), or NULL */
  const int16_t *packed16;
  wick_q16_fc_args args16;
} qfc_data;

/* The 16x8 kernel's packed weights and padded bias / scale; false when out of memory. */
static wick_status choose_fc16(wick_op_ctx *ctx, qfc_data *d, const wick_q8_kernels *kern,
                               const wick_tensor *w, const wick_tensor *bias) {
  const size_t n = (size_t)d->n, padded = (n + WICK_Q16_NR - 1) / WICK_Q16_NR * WICK_Q16_NR;
  size_t elems;
  if (!wick_q16_fc_packed_size(n, (size_t)d->k, &elems) || elems > SIZE_MAX / sizeof(int16_t))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed weights size overflows");
  bool cached;
  int16_t *packed = wick_op_packed(ctx, 1, WICK_Q16_NR, elems * sizeof(int16_t), &cached);
  double *scale = wick_op_alloc(ctx, padded * sizeof(double));
  int64_t *bias64 = d->acc64 ? wick_op_alloc(ctx, padded * sizeof(int64_t)) : NULL;
  int32_t *bias32 = d->acc64 ? NULL : wick_op_alloc(ctx, padded * sizeof(int32_t));
  if (packed == NULL || scale == NULL || (bias64 == NULL && bias32 == NULL))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the weights");
  if (!cached) wick_q16_fc_pack(n, (size_t)d->k, w->data, packed);
  for (size_t c = 0; c < padded; c++) {
    scale[c] = c < n ? d->params.scale[c] : 0.0;
    if (d->acc64)
      bias64[c] = bias && c < n ? ((const int64_t *)bias->data)[c] : 0;
    else
      bias32[c] = bias && c < n ? ((const int32_t *)bias->data)[c] : 0;
  }
  d->packed16 = packed;
  d->args16 = (wick_q16_fc_args){
      d->acc64,          bias64,           bias32, scale, d->params.output_offset,
      d->params.act_min, d->params.act_max};
  d->fc16 = kern->fc16;
  return WICK_OK;
}

/* Packs the weights for the optimized kernels when they apply. */
static wick_status choose_kernels(wick_op_ctx *ctx, qfc_data *d, const wick_tensor *in,
                                  const wick_tensor *w, const wick_tensor *bias) {
  d->kern = NULL;
  d->w16 = NULL;
  d->fc16 = NULL;
  if (in->type == WICK_DTYPE_INT16 && d->params.filter_offset == 0 && d->params.input_offset == 0 &&
      !wick_op_force_reference(ctx) && wick_input_known(ctx, 1) &&
      (bias == NULL || wick_input_known(ctx, 2))) {
    const wick_q8_kernels *kern = wick_q8_kernels_select(false);
    if (kern != NULL && kern->fc16 != NULL && d->m > 0 && d->n > 0)
      return choose_fc16(ctx, d, kern, w, bias);
    size_t count, bytes;
    if (!wick_mul_size((size_t)d->n, (size_t)d->k, &count) ||
        !wick_mul_size(count, sizeof(int16_t), &bytes))
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "widened weights size overflows");
    if ((d->w16 = wick_op_alloc(ctx, bytes ? bytes : 1)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory widening the weights");
    const int8_t *w8 = w->data;
    for (size_t i = 0; i < count; i++) d->w16[i] = w8[i];
    return WICK_OK;
  }
  if (in->type != WICK_DTYPE_INT8 || d->acc64 || d->params.filter_offset != 0) return WICK_OK;
  const wick_q8_kernels *kern = wick_q8_kernels_select(wick_op_force_reference(ctx));
  if (kern == NULL || !wick_input_known(ctx, 1) || d->m == 0 || d->n == 0) return WICK_OK;
  if (bias != NULL && !wick_input_known(ctx, 2)) return WICK_OK;
  size_t bytes, padded = ((size_t)d->n + kern->nr - 1) / kern->nr * kern->nr;
  if (!wick_q8_gemm_packed_size(kern, (size_t)d->n, 1, (size_t)d->k, &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed weights size overflows");
  double *scale = wick_op_alloc(ctx, padded * sizeof(double));
  bool cached;
  if ((d->packed = wick_op_packed(ctx, 0, (uint32_t)kern->nr, bytes, &cached)) == NULL ||
      scale == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the weights");
  for (size_t c = 0; c < padded; c++) scale[c] = c < (size_t)d->n ? d->params.scale[c] : 0.0;
  if (!cached)
    wick_q8_gemm_pack(kern, (size_t)d->n, 1, (size_t)d->k, w->data, bias ? bias->data : NULL,
                      -d->params.input_offset, NULL, NULL, d->packed);
  d->out = (wick_q8_output){
      d->params.output_offset, d->params.act_min, d->params.act_max, scale, NULL, false, false};
  size_t scratch; /* the input prepared once per invoke (wick_q8_prepare_input) */
  if (!wick_mul_size((size_t)d->m, (size_t)d->k * wick_q8_input_bytes(kern), &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  d->kern = kern;
  return WICK_OK;
}

wick_status wick_fc_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 3, 1));
  wick_tensor *in, *w, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &w));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  wick_tensor *bias = wick_op_input(ctx, 2);
  const wick_fully_connected_params *p = &ctx->params->fc;
  const wick_dtype t = in->type;
  const wick_dtype want_w = t == WICK_DTYPE_UINT8 ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
  WICK_CHECK_SUPPORTED(ctx, w->type == want_w, "%s activations need %s weights, not %s",
                       wick_dtype_name(t), wick_dtype_name(want_w), wick_dtype_name(w->type));
  WICK_CHECK_SUPPORTED(ctx, out->type == t, "output type %s with %s input is not supported",
                       wick_dtype_name(out->type), wick_dtype_name(t));
  WICK_CHECK_SUPPORTED(ctx, p->weights_format == 0, "weights format %d is not supported",
                       p->weights_format);
  WICK_CHECK(ctx, w->rank == 2, "weights must have rank 2, not %d", w->rank);
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  qfc_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->n = w->dims[0];
  d->k = w->dims[1];
  int64_t total = wick_tensor_elements(in);
  WICK_CHECK(ctx, d->k > 0 && total % d->k == 0,
             "input of %lld elements does not split into rows of %lld", (long long)total,
             (long long)d->k);
  d->m = total / d->k;

  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  if (t == WICK_DTYPE_INT16)
    WICK_CHECK_SUPPORTED(ctx, qi.zero_point == 0 && qo.zero_point == 0,
                         "int16 activations must have zero points 0 (input %d, output %d)",
                         (int)qi.zero_point, (int)qo.zero_point);
  const float *ws;
  WICK_TRY(wick_quant_filter_scales(ctx, w, (int32_t)d->n, 0, &ws));
  const wick_quant *wq = &w->info->quant;
  const bool per_channel = wq->count > 1;
  WICK_CHECK_SUPPORTED(ctx, !per_channel || t != WICK_DTYPE_UINT8,
                       "uint8 weights must be quantized per tensor");
  d->params.filter_offset = 0;
  if (per_channel) {
    for (uint32_t i = 0; i < wq->count; i++)
      WICK_CHECK_SUPPORTED(ctx, wq->zero_point[i] == 0,
                           "per-channel weights must be symmetric (zero point %lld in row %u)",
                           (long long)wq->zero_point[i], i);
  } else {
    int32_t lo, hi;
    wick_quant_type_range(w->type, &lo, &hi);
    WICK_CHECK(ctx, wq->zero_point[0] >= lo && wq->zero_point[0] <= hi,
               "weights zero point %lld is outside %s", (long long)wq->zero_point[0],
               wick_dtype_name(w->type));
    d->params.filter_offset = -(int32_t)wq->zero_point[0];
  }

  d->acc64 = t == WICK_DTYPE_INT16;
  if (bias) {
    bool ok =
        bias->type == WICK_DTYPE_INT32 || (t == WICK_DTYPE_INT16 && bias->type == WICK_DTYPE_INT64);
    WICK_CHECK(ctx, ok, "bias type %s does not fit %s activations (int32%s)",
               wick_dtype_name(bias->type), wick_dtype_name(t),
               t == WICK_DTYPE_INT16 ? " or int64" : "");
    WICK_CHECK(ctx, wick_tensor_elements(bias) == d->n, "bias has %lld elements for %lld outputs",
               (long long)wick_tensor_elements(bias), (long long)d->n);
    d->acc64 = bias->type == WICK_DTYPE_INT64;
    const wick_quant *bq = bias->info ? &bias->info->quant : NULL;
    if (!per_channel && bq && bq->count > 0) {
      /* LiteRT's check that the bias scale is s_in * s_w (within 2% of s_out). */
      double product = (double)qi.scale * (double)ws[0];
      double diff = fabs(product - (double)bq->scale[0]);
      WICK_CHECK(ctx, diff / (double)qo.scale <= 0.02,
                 "bias scale %g differs from input scale * weights scale %g", (double)bq->scale[0],
                 product);
    }
  }
  double *scale = wick_op_alloc(ctx, (size_t)(d->n > 0 ? d->n : 1) * sizeof(double));
  if (scale == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t c = 0; c < d->n; c++) scale[c] = (double)qi.scale * (double)ws[c] / (double)qo.scale;
  d->params.scale = scale;
  d->params.input_offset = -qi.zero_point;
  d->params.output_offset = qo.zero_point;
  WICK_TRY(wick_quant_activation_range(ctx, p->activation, t, qo, &d->params.act_min,
                                       &d->params.act_max));

  int32_t dims[WICK_MAX_RANK];
  int32_t rank;
  if (p->keep_num_dims) {
    WICK_CHECK(ctx, in->dims[in->rank - 1] == d->k,
               "keep_num_dims needs the last input dim (%d) to equal K (%lld)",
               in->dims[in->rank - 1], (long long)d->k);
    rank = in->rank;
    memcpy(dims, in->dims, sizeof(int32_t) * (size_t)rank);
    dims[rank - 1] = (int32_t)d->n;
  } else {
    rank = 2;
    WICK_CHECK(ctx, d->m <= INT32_MAX, "too many rows");
    dims[0] = (int32_t)d->m;
    dims[1] = (int32_t)d->n;
  }
  wick_op_set_macs(ctx, (uint64_t)d->m * (uint64_t)d->n * (uint64_t)d->k);
  wick_op_set_data(ctx, d);
  WICK_TRY(choose_kernels(ctx, d, in, w, bias));
  if (d->kern != NULL || d->fc16 != NULL) { /* packed copies of the weights and the bias */
    wick_op_release_input(ctx, 1);
    wick_op_release_input(ctx, 2);
  }
  if (d->kern != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q8 gemm");
  else if (d->fc16 != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "16x8 gemm");
  else if (d->w16 != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "16x8 rows");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(in->type));
  return wick_op_set_output(ctx, 0, t, rank, dims);
}

/* 16x8 rows [begin, end), on the thread that runs the range. */
typedef struct q16_job {
  const qfc_data *d;
  const int16_t *in;
  const void *bias;
  int16_t *out;
} q16_job;

static void q16_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const q16_job *j = arg;
  const qfc_data *d = j->d;
  wick_q16_fully_connected_rows((int64_t)begin, (int64_t)end, d->n, d->k, &d->params, j->in, d->w16,
                                j->bias, d->acc64, j->out);
}

/* A task of the 16x8 kernel: a block of rows and columns (wick_q8_gemm_split). */
typedef struct fc16_job {
  const qfc_data *d;
  wick_q8_gemm_split split;
  const int16_t *in;
  int16_t *out;
} fc16_job;

static void fc16_task(void *arg, size_t t, size_t thread) {
  (void)thread;
  const fc16_job *j = arg;
  const qfc_data *d = j->d;
  size_t m0, m1, n0, n1;
  wick_q8_gemm_split_task(&j->split, t, &m0, &m1, &n0, &n1);
  d->fc16(m1 - m0, n0, n1, (size_t)d->n, (size_t)d->k, j->in + m0 * (size_t)d->k, d->packed16,
          &d->args16, j->out + m0 * (size_t)d->n);
}

wick_status wick_fc_invoke_quantized(wick_op_ctx *ctx) {
  const qfc_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *bias = wick_op_input(ctx, 2);
  if (d->fc16 != NULL) {
    static const wick_q8_kernels tile = {.mr = WICK_Q16_MR, .nr = WICK_Q16_NR};
    fc16_job j = {.d = d, .in = in->data, .out = wick_op_output(ctx, 0)->data};
    const size_t tasks = wick_q8_gemm_split_init(&j.split, &tile, (size_t)d->m, (size_t)d->n,
                                                 (size_t)d->k, WICK_TASK_GRAIN);
    return wick_parallel_for(ctx, tasks, fc16_task, &j);
  }
  if (d->w16 != NULL) {
    q16_job j = {d, in->data, bias ? bias->data : NULL, wick_op_output(ctx, 0)->data};
    return wick_parallel_range(ctx, (size_t)d->m, (uint64_t)d->n * (uint64_t)d->k, q16_rows, &j);
  }
  if (d->kern != NULL) {
    return wick_parallel_q8_gemm(ctx, d->kern, (size_t)d->m, (size_t)d->n, (size_t)d->k, in->data,
                                 -d->params.input_offset, wick_op_scratch(ctx), d->packed,
                                 wick_op_output(ctx, 0)->data, &d->out);
  }
  wick_q_fully_connected__reference(in->type, d->m, d->n, d->k, &d->params, in->data,
                                    wick_op_input(ctx, 1)->data, bias ? bias->data : NULL, d->acc64,
                                    wick_op_output(ctx, 0)->data);
  return WICK_OK;
}
