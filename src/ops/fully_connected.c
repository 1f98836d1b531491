/*
 * fully_connected.c — FULLY_CONNECTED (float32; quantized inputs go to
 * fully_connected_quantized.c).
 *
 * Input [..., K] is read as [M, K] with M = elements / K; weights [N, K];
 * optional bias [N]. Output [M, N], or the input's leading dims + [N] with
 * keep_num_dims. Only the default weights format is accepted.
 *
 * Hybrid (dynamic-range) form: float32 input and output, int8 symmetric
 * weights with one scale or one per output row, float32 bias: input rows are
 * quantized at run time, symmetric or (asymmetric_quantize_inputs, TensorFlow's
 * dynamic-range default) asymmetric (src/kernels/reference/hybrid.c, as LiteRT's
 * EvalHybrid). With constant weights it runs the GEMM form of ops/hybrid.h
 * (the int8 GEMM microkernels, then the float rescale per block), else the
 * reference kernel.
 *
 * Blockwise int4 form (TFLite's BlockwiseQuantization): float32 input and
 * output, constant int4 weights [N, K] in blocks of block_size along K, one
 * float16/float32 scale per block in a tensor the quantization details name,
 * float32 bias. There is no reference kernel in LiteRT (its reference
 * resolver outputs zeros); its CPU path is XNNPACK's qd8 x qb4w, and wick
 * computes what that computes: each input row quantized at run time to int8
 * with a zero point (kernels/q4.h), the block scales rounded to bfloat16,
 * per output the exact int32 sum of each block, then in float
 * acc += sum_b * scale_b over the blocks in order, y = acc * row scale +
 * bias. The weights are read where they lie in the file (no packed copy);
 * with several input rows (prefill) each group of eight outputs' weights is
 * unpacked once into per-thread scratch for the kernel's GEMM form; one row
 * (decode) runs the kernel's one-row form on the weights as they lie (kernel
 * name "blockwise int4 gemv"), the same values.
 *
 * Kernels: when the weights (and bias) are known at prepare and the CPU has
 * an optimized GEMM (src/kernels/select.c), prepare packs them once and
 * invoke runs the GEMM; otherwise (or with force_reference) the reference
 * kernel runs. Both split over the interpreter's threads (GEMM tasks, or
 * rows of the input), each output computed as on one thread.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/hybrid.h"
#include "ops/parallel.h"
#include "ops/quantization.h"
#include "kernels/q4.h"

typedef struct fc_data {
  int64_t m, n, k;
  float lo, hi;
  const wick_f32_gemm_kernel *kern; /* NULL: reference */
  float *packed;                    /* weights + bias, layout in kernels.h */
  bool hybrid, per_channel;         /* int8 weights, float activations */
  const float *weight_scales;       /* hybrid: n scales, or 1 */
  int8_t *scratch;                  /* hybrid reference: one quantized input row */
  /* hybrid with constant weights (not forced to the reference kernel): the GEMM form of
   * ops/hybrid.h; otherwise the reference kernel */
  bool hybrid_gemm;
  wick_hybrid_gemm h;
  /* blockwise int4 weights (q4 != NULL) */
  const wick_q4_kernel *q4;
  size_t block_size, num_blocks; /* per output row */
  const uint8_t *w4;             /* [n, k / 2] in the file */
  /* rounded to bfloat16, in groups of Q4_COLS outputs: output g * Q4_COLS + t, block b at
   * [(g * num_blocks + b) * Q4_COLS + t] (0 past n) */
  const float *block_scales;
  float *q4_row_scales; /* m */
  /* scratch: k int16 (a row being quantized), m prepared rows of q4_row_stride bytes, then
   * per-thread block sums, then (the GEMM form) per thread one group's unpacked weights */
  size_t q4_row_stride, q4_rows_offset, q4_sums_offset;
  bool q4_gemm; /* several rows and a kernel with the GEMM form */
  size_t q4_unpacked_offset, q4_unpacked_stride;
} fc_data;

/* Rows and outputs of block sums one kernel call computes: the float sums of Q4_COLS outputs
 * then run side by side (independent chains; each output's sum in block order). The GEMM form
 * (q4.h) works on groups of the same Q4_COLS outputs. */
#define Q4_ROWS 4
#define Q4_COLS WICK_Q4_GROUP

/* The blockwise int4 form: checks the weights' quantization and scales, converts the scales
 * once (shared by the interpreters of one model), sizes the scratch. */
static wick_status blockwise_prepare(wick_op_ctx *ctx, fc_data *d, const wick_tensor *w) {
  const wick_quant *q = &w->info->quant;
  WICK_CHECK_SUPPORTED(ctx, w->info->type == SCHEMA_TYPE_INT4,
                       "blockwise quantized weights of type %s: wick runs int4 only",
                       wick_dtype_name(w->type));
  WICK_CHECK_SUPPORTED(ctx, q->block_zero_points < 0,
                       "blockwise int4 weights with zero points (tensor %d): wick runs symmetric "
                       "blocks only",
                       q->block_zero_points);
  WICK_CHECK_SUPPORTED(ctx, wick_input_known(ctx, 1), "blockwise int4 weights must be constant");
  WICK_CHECK(ctx, d->k % 2 == 0 && q->block_size % 2 == 0,
             "int4 weights need an even K (%lld) and block size (%d)", (long long)d->k,
             q->block_size);
  const wick_tensor *st = wick_op_graph_tensor(ctx, q->block_scales);
  /* (shape, type and constness verified by the reader) */
  WICK_CHECK(ctx, st != NULL && st->data != NULL, "blockwise scales tensor %d has no data",
             q->block_scales);
  d->block_size = (size_t)q->block_size;
  d->num_blocks = (size_t)d->k / d->block_size;
  d->w4 = w->data;
  const size_t groups = ((size_t)d->n + Q4_COLS - 1) / Q4_COLS, nb = d->num_blocks;
  size_t count;
  if (!wick_mul_size(groups * Q4_COLS, nb, &count) || count > SIZE_MAX / sizeof(float))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "block scales size overflows");
  bool cached;
  const void *sources[1] = {st->data};
  const int64_t shape[3] = {d->n, (int64_t)d->num_blocks, st->type};
  float *scales = wick_op_packed_shared(ctx, sources, 1, shape, 3, 1, 0x62663138u /* "bf18" */,
                                        count * sizeof(float), &cached);
  if (scales == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  if (!cached)
    for (size_t c = 0; c < groups * Q4_COLS; c++)
      for (size_t b = 0; b < nb; b++) {
        const size_t i = c * nb + b; /* in the file: [n, nb] */
        float v = 0.0f;
        if (c < (size_t)d->n)
          v = st->type == WICK_DTYPE_FLOAT16 ? wick_f16_to_f32(((const uint16_t *)st->data)[i])
                                             : ((const float *)st->data)[i];
        scales[((c / Q4_COLS) * nb + b) * Q4_COLS + c % Q4_COLS] = wick_q4_bf16_round(v);
      }
  for (size_t i = 0; i < count; i++)
    WICK_CHECK(ctx, isfinite(scales[i]), "block scale %zu is not finite", i);
  d->block_scales = scales;
  d->q4_row_scales = wick_op_alloc(ctx, (size_t)(d->m > 0 ? d->m : 1) * sizeof(float));
  if (d->q4_row_scales == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->q4 = wick_q4_kernel_select(wick_op_force_reference(ctx), d->block_size);
  size_t temp, rows, sums, scratch, unpacked = 0;
  d->q4_row_stride = d->q4->row_bytes((size_t)d->k, d->block_size);
  d->q4_gemm = d->m >= 2 && d->q4->gemm != NULL;
  if (d->q4_gemm)
    d->q4_unpacked_stride = (d->q4->unpacked_bytes((size_t)d->k, d->block_size) + 63) & ~(size_t)63;
  if (!wick_mul_size((size_t)d->k, sizeof(int16_t), &temp) || !wick_add_size(temp, 63, &temp) ||
      !wick_mul_size((size_t)d->m, d->q4_row_stride, &rows) ||
      !wick_mul_size(wick_op_num_threads(ctx), Q4_ROWS * Q4_COLS * d->num_blocks * sizeof(int32_t),
                     &sums) ||
      (d->q4_gemm && !wick_mul_size(wick_op_num_threads(ctx), d->q4_unpacked_stride, &unpacked)) ||
      !wick_add_size(temp & ~(size_t)63, rows, &rows) || !wick_add_size(rows, sums, &scratch) ||
      !wick_add_size(scratch, 63, &scratch) ||
      !wick_add_size(scratch & ~(size_t)63, unpacked, &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  d->q4_rows_offset = temp & ~(size_t)63;
  d->q4_sums_offset = rows;
  d->q4_unpacked_offset = (rows + sums + 63) & ~(size_t)63;
  wick_op_request_scratch(ctx, scratch);
  return WICK_OK;
}

typedef struct blockwise_job {
  const fc_data *d;
  const uint8_t *rows; /* m prepared rows */
  const float *bias;
  float *out;
  uint8_t *scratch;
} blockwise_job;

/* Outputs [c0, c1) of every row (c0 a multiple of Q4_COLS): the block sums of up to Q4_ROWS
 * rows x Q4_COLS outputs at a time, then each output's float sum over its blocks in order
 * (acc += sum_b * scale_b), the outputs of a group side by side. With several rows and a
 * kernel that has the GEMM form (q4.h), a whole group of Q4_COLS outputs is unpacked once and
 * its outputs finished by the kernel, which computes the same values. */
static void blockwise_columns(void *arg, size_t c0, size_t c1, size_t thread) {
  const blockwise_job *j = arg;
  const fc_data *d = j->d;
  const size_t m = (size_t)d->m, n = (size_t)d->n, k = (size_t)d->k, nb = d->num_blocks;
  int32_t *sums =
      (int32_t *)(void *)(j->scratch + d->q4_sums_offset) + thread * Q4_ROWS * Q4_COLS * nb;
  c0 *= Q4_COLS, c1 = c1 * Q4_COLS < n ? c1 * Q4_COLS : n; /* (units are groups) */
  for (size_t c = c0; c < c1; c += Q4_COLS) {
    const size_t cols = c1 - c < Q4_COLS ? c1 - c : Q4_COLS;
    const float *scale = d->block_scales + (c / Q4_COLS) * nb * Q4_COLS;
    if (m == 1 && d->q4->gemv != NULL && cols == Q4_COLS) { /* the one-row form (q4.h) */
      d->q4->gemv(k, d->block_size, j->rows, d->q4_row_scales[0], d->w4 + c * (k / 2), scale,
                  j->bias ? j->bias + c : NULL, d->lo, d->hi, j->out + c);
      continue;
    }
    if (d->q4_gemm && cols == Q4_COLS) { /* the GEMM form: the same values (q4.h) */
      uint8_t *unpacked = j->scratch + d->q4_unpacked_offset + thread * d->q4_unpacked_stride;
      d->q4->unpack(k, d->block_size, d->w4 + c * (k / 2), unpacked);
      for (size_t r0 = 0; r0 < m; r0 += WICK_Q4_GEMM_ROWS) {
        const size_t rows = m - r0 < WICK_Q4_GEMM_ROWS ? m - r0 : WICK_Q4_GEMM_ROWS;
        d->q4->gemm(rows, k, d->block_size, j->rows + r0 * d->q4_row_stride, d->q4_row_stride,
                    d->q4_row_scales + r0, unpacked, scale, j->bias ? j->bias + c : NULL, d->lo,
                    d->hi, j->out + r0 * n + c, n);
      }
      continue;
    }
    for (size_t r0 = 0; r0 < m; r0 += Q4_ROWS) {
      const size_t rows = m - r0 < Q4_ROWS ? m - r0 : Q4_ROWS;
      d->q4->sums(rows, k, d->block_size, j->rows + r0 * d->q4_row_stride, d->q4_row_stride, cols,
                  d->w4 + c * (k / 2), sums);
      for (size_t r = 0; r < rows; r++) {
        float acc[Q4_COLS] = {0};
        const int32_t *row = sums + r * nb * cols;
        if (cols == Q4_COLS) /* (a fixed count: the compiler vectorizes it) */
          for (size_t b = 0; b < nb; b++)
            for (size_t t = 0; t < Q4_COLS; t++)
              acc[t] += (float)row[b * Q4_COLS + t] * scale[b * Q4_COLS + t];
        else
          for (size_t b = 0; b < nb; b++)
            for (size_t t = 0; t < cols; t++)
              acc[t] += (float)row[b * cols + t] * scale[b * Q4_COLS + t];
        for (size_t t = 0; t < cols; t++) {
          float y = acc[t] * d->q4_row_scales[r0 + r] + (j->bias ? j->bias[c + t] : 0.0f);
          j->out[(r0 + r) * n + c + t] = y < d->lo ? d->lo : (y > d->hi ? d->hi : y);
        }
      }
    }
  }
}

static wick_status blockwise_run(wick_op_ctx *ctx, const fc_data *d) {
  const float *in = wick_op_input(ctx, 0)->data;
  uint8_t *scratch = wick_op_scratch(ctx);
  int16_t *temp = (int16_t *)(void *)scratch;
  uint8_t *rows = scratch + d->q4_rows_offset;
  const size_t k = (size_t)d->k;
  for (size_t r = 0; r < (size_t)d->m; r++) {
    int32_t zp;
    d->q4_row_scales[r] = d->q4->quantize_row != NULL
                              ? d->q4->quantize_row(k, in + r * k, temp, &zp)
                              : wick_q4_quantize_row(k, in + r * k, temp, &zp);
    d->q4->prepare(k, d->block_size, temp, zp, rows + r * d->q4_row_stride);
  }
  wick_tensor *b = wick_op_input(ctx, 2);
  blockwise_job j = {d, rows, b ? b->data : NULL, wick_op_output(ctx, 0)->data, scratch};
  const size_t groups = ((size_t)d->n + Q4_COLS - 1) / Q4_COLS;
  /* (at least 4 units per int4 weight: a decode step's one row streams the weights from
   * memory, as gemm_work in parallel.c counts it) */
  const uint64_t work_rows = d->m > 4 ? (uint64_t)d->m : 4;
  return wick_parallel_range(ctx, groups, work_rows * (uint64_t)d->k * Q4_COLS, blockwise_columns,
                             &j);
}

/* The int8 weights of the hybrid form: symmetric, one scale or one per row. */
static wick_status hybrid_prepare(wick_op_ctx *ctx, fc_data *d, const wick_tensor *w) {
  const wick_quant *q = w->info != NULL ? &w->info->quant : NULL;
  WICK_CHECK_SUPPORTED(ctx, q != NULL && q->count > 0,
                       "float32 input with int8 weights without quantization parameters (the "
                       "hybrid form needs scales)");
  d->per_channel = q->count > 1;
  if (d->per_channel)
    WICK_CHECK(ctx, q->count == (uint32_t)d->n && q->quantized_dimension == 0,
               "int8 weights have %u scales on dimension %d; expected 1 or %lld on dimension 0",
               q->count, q->quantized_dimension, (long long)d->n);
  for (uint32_t i = 0; i < q->count; i++) {
    WICK_CHECK(ctx, q->zero_point[i] == 0, "int8 weights must be symmetric (zero point 0)");
    WICK_CHECK(ctx, isfinite(q->scale[i]) && q->scale[i] >= 0.0f,
               "weight scale %u is not a finite non-negative number", i);
  }
  d->weight_scales = q->scale;
  d->hybrid = true;
  d->scratch = wick_op_alloc(ctx, d->k > 0 ? (size_t)d->k : 1);
  if (d->scratch == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  if (!wick_input_known(ctx, 1)) return WICK_OK;
  return wick_hybrid_gemm_prepare(ctx, &d->h, (size_t)d->m, (size_t)d->n, (size_t)d->k, w->data,
                                  false, 0, &d->hybrid_gemm);
}

/* The float rescale of one block of the GEMM form's int32 sums, as the reference does it. */
typedef struct hybrid_gemm_job {
  const fc_data *d;
  const float *bias;
  float *out;
  const int32_t *acc; /* m x n */
} hybrid_gemm_job;

static void hybrid_gemm_finish(void *arg, size_t m0, size_t m1, size_t n0, size_t n1) {
  const hybrid_gemm_job *j = arg;
  const fc_data *d = j->d;
  const wick_hybrid_gemm *h = &d->h;
  const size_t n = h->n;
  for (size_t r = m0; r < m1; r++) {
    const uint32_t offset = (uint32_t)h->row_offsets[r];
    const float row_scale =
        d->per_channel ? h->row_scales[r] : h->row_scales[r] * d->weight_scales[0];
    const int32_t *acc = j->acc + r * n;
    float *out = j->out + r * n;
    if (h->f32 != NULL && h->f32->hybrid_rescale != NULL) {
      h->f32->hybrid_rescale(n1 - n0, acc + n0, h->weight_sums + n0, offset,
                             d->per_channel ? d->weight_scales + n0 : NULL, row_scale, false,
                             j->bias ? j->bias + n0 : NULL, d->lo, d->hi, out + n0);
      continue;
    }
    for (size_t c = n0; c < n1; c++) {
      const uint32_t dot = (uint32_t)acc[c] - h->weight_sums[c] * offset;
      const float s = d->per_channel ? row_scale * d->weight_scales[c] : row_scale;
      float y = j->bias ? j->bias[c] : 0.0f;
      y += (float)(int32_t)dot * s;
      out[c] = y < d->lo ? d->lo : (y > d->hi ? d->hi : y);
    }
  }
}

/* The GEMM form: rows quantized as the reference does, then the sums and the rescale. */
static wick_status hybrid_run(wick_op_ctx *ctx, const fc_data *d) {
  const bool asymmetric = ctx->params->fc.asymmetric_quantize_inputs;
  const float *in = wick_op_input(ctx, 0)->data;
  for (size_t r = 0; r < d->h.m; r++)
    wick_hybrid_gemm_quantize(&d->h, wick_op_scratch(ctx), r, in + r * d->h.k, asymmetric);
  wick_tensor *b = wick_op_input(ctx, 2);
  int32_t *acc = (int32_t *)(void *)((uint8_t *)wick_op_scratch(ctx) + d->h.acc_offset);
  hybrid_gemm_job g = {d, b ? b->data : NULL, wick_op_output(ctx, 0)->data, acc};
  return wick_hybrid_gemm_run(ctx, &d->h, hybrid_gemm_finish, &g);
}

static wick_status choose_kernels(wick_op_ctx *ctx, fc_data *d) {
  d->kern = NULL;
  const wick_f32_kernels *all = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (all == NULL || !wick_input_known(ctx, 1) || d->m == 0 || d->n == 0) return WICK_OK;
  const wick_f32_gemm_kernel *kern = wick_f32_gemm_kernel_for(all, (size_t)d->n);
  wick_tensor *bias = wick_op_input(ctx, 2);
  if (bias != NULL && !wick_input_known(ctx, 2)) return WICK_OK;
  size_t floats, bytes;
  if (!wick_f32_gemm_packed_size_checked((size_t)d->n, (size_t)d->k, kern->nr, &floats) ||
      !wick_mul_size(floats, sizeof(float), &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed weights size overflows");
  bool cached;
  /* The packed bytes are a function of the weights, the bias, n, k and the panel width
   * alone: the signatures of one model that share state hold one copy
   * (wick_op_packed_shared). */
  const void *sources[2] = {wick_op_input(ctx, 1)->data, bias ? bias->data : NULL};
  const int64_t shape[2] = {d->n, d->k};
  if ((d->packed = wick_op_packed_shared(ctx, sources, 2, shape, 2, 0, (uint32_t)kern->nr, bytes,
                                         &cached)) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the weights");
  if (!cached)
    wick_f32_gemm_pack((size_t)d->n, (size_t)d->k, kern->nr, wick_op_input(ctx, 1)->data,
                       bias ? bias->data : NULL, d->packed);
  d->kern = kern;
  return WICK_OK;
}

static wick_status fc_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_fc_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 2, 3, 1));
  wick_tensor *in, *w;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &w));
  wick_tensor *bias = wick_op_input(ctx, 2);
  const wick_fully_connected_params *p = &ctx->params->fc;
  const bool blockwise = w->info != NULL && w->info->quant.block_size > 0;
  const bool hybrid = in->type == WICK_DTYPE_FLOAT32 && w->type == WICK_DTYPE_INT8 && !blockwise;
  WICK_CHECK_SUPPORTED(ctx,
                       in->type == WICK_DTYPE_FLOAT32 &&
                           (w->type == WICK_DTYPE_FLOAT32 || hybrid || blockwise) &&
                           (!bias || bias->type == WICK_DTYPE_FLOAT32),
                       "input %s / weights %s: wick runs this op on float32 only so far",
                       wick_dtype_name(in->type), wick_dtype_name(w->type));
  WICK_CHECK_SUPPORTED(ctx, p->weights_format == 0, "weights format %d is not supported",
                       p->weights_format);
  WICK_CHECK(ctx, w->rank == 2, "weights must have rank 2, not %d", w->rank);
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  fc_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->n = w->dims[0];
  d->k = w->dims[1];
  int64_t total = wick_tensor_elements(in);
  WICK_CHECK(ctx, d->k > 0 && total % d->k == 0,
             "input of %lld elements does not split into rows of %lld", (long long)total,
             (long long)d->k);
  d->m = total / d->k;
  if (bias)
    WICK_CHECK(ctx, wick_tensor_elements(bias) == d->n, "bias has %lld elements for %lld outputs",
               (long long)wick_tensor_elements(bias), (long long)d->n);
  WICK_TRY(wick_activation_range_f32(ctx, p->activation, &d->lo, &d->hi));
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
  /* Unsigned: m*n*k of unchecked shapes can exceed int64 (signed overflow is UB). */
  wick_op_set_macs(ctx, (uint64_t)d->m * (uint64_t)d->n * (uint64_t)d->k);
  wick_op_set_data(ctx, d);
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, rank, dims));
  if (blockwise) {
    WICK_TRY(blockwise_prepare(ctx, d, w));
    wick_op_set_kernel(ctx,
                       d->q4 == wick_q4_kernel_reference() ? WICK_KERNEL_GENERIC
                                                           : WICK_KERNEL_OPTIMIZED,
                       d->m == 1 && d->q4->gemv != NULL ? "blockwise int4 gemv" : "blockwise int4");
    return WICK_OK;
  }
  if (hybrid) {
    WICK_TRY(hybrid_prepare(ctx, d, w));
    if (d->hybrid_gemm) {
      wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "hybrid gemm");
      wick_op_release_input(ctx, 1); /* the packed copy holds them */
    } else
      wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "hybrid");
    return WICK_OK;
  }
  WICK_TRY(choose_kernels(ctx, d));
  if (d->kern != NULL) {
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, d->m == 1 ? "gemv" : "gemm");
    wick_op_release_input(ctx, 1); /* the packed copy holds the weights and the bias */
    wick_op_release_input(ctx, 2);
  } else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       wick_input_known(ctx, 1) ? NULL : "weights not constant");
  return WICK_OK;
}

/* The reference kernel over rows [begin, end) of the input (one row of
 * outputs each: the same sums as one call over all rows). */
typedef struct fc_job {
  const fc_data *d;
  const float *in, *w, *bias;
  float *out;
} fc_job;

static void fc_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const fc_job *j = arg;
  const fc_data *d = j->d;
  wick_f32_fully_connected__reference((int64_t)(end - begin), d->n, d->k,
                                      j->in + (int64_t)begin * d->k, j->w, j->bias,
                                      j->out + (int64_t)begin * d->n, d->lo, d->hi);
}

/* A fused activation / residual add (src/core/fuse.c) runs per GEMM tile, or
 * over the whole output after the reference and quantized-weight paths. */
static wick_status fc_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) {
    wick_status st = wick_fc_invoke_quantized(ctx);
    if (st == WICK_OK) st = wick_op_run_fused_epilogue(ctx);
    return st;
  }
  const fc_data *d = wick_op_data(ctx);
  if (d->q4 != NULL) {
    wick_status st = blockwise_run(ctx, d);
    return st == WICK_OK ? wick_op_run_fused_epilogue(ctx) : st;
  }
  if (d->hybrid && d->hybrid_gemm) {
    wick_status st = hybrid_run(ctx, d);
    return st == WICK_OK ? wick_op_run_fused_epilogue(ctx) : st;
  }
  if (d->hybrid) {
    wick_tensor *b = wick_op_input(ctx, 2);
    wick_hybrid_fully_connected__reference(d->m, d->n, d->k, wick_op_input(ctx, 0)->data,
                                           wick_op_input(ctx, 1)->data, d->weight_scales,
                                           d->per_channel,
                                           ctx->params->fc.asymmetric_quantize_inputs,
                                           b ? b->data : NULL, d->scratch,
                                           wick_op_output(ctx, 0)->data, d->lo, d->hi);
    return wick_op_run_fused_epilogue(ctx);
  }
  if (d->kern != NULL) {
    wick_f32_epilogue epilogue;
    wick_f32_gemm_tasks t;
    size_t tasks = wick_f32_gemm_tasks_init(&t, d->kern, (size_t)d->m, (size_t)d->n, (size_t)d->k,
                                            wick_op_input(ctx, 0)->data, (size_t)d->k, d->packed,
                                            wick_op_output(ctx, 0)->data, (size_t)d->n, d->lo,
                                            d->hi, WICK_TASK_GRAIN);
    t.ep = wick_op_fused_epilogue(ctx, &epilogue) ? &epilogue : NULL;
    return wick_op_run_gemm_tasks(ctx, &t, tasks);
  }
  wick_tensor *bias = wick_op_input(ctx, 2);
  fc_job j = {d, wick_op_input(ctx, 0)->data, wick_op_input(ctx, 1)->data, bias ? bias->data : NULL,
              wick_op_output(ctx, 0)->data};
  wick_status st =
      wick_parallel_range(ctx, (size_t)d->m, (uint64_t)d->n * (uint64_t)d->k, fc_rows, &j);
  if (st == WICK_OK) st = wick_op_run_fused_epilogue(ctx);
  return st;
}

const wick_op_def wick_op_fully_connected = {
    "FULLY_CONNECTED", WICK_BUILTIN_FULLY_CONNECTED, 12, fc_prepare,
    fc_invoke,         WICK_OP_TAKES_EPILOGUE};
