/*
 * batch_matmul_quantized.c — quantized BATCH_MATMUL: int8 x int8 -> int8,
 * int16 x int8 -> int16 and int16 x int16 -> int16 (zero points 0 for
 * int16), adj_x / adj_y and broadcast batch dims as the float op.
 *
 * Reached from batch_matmul.c when the lhs is a quantized activation. As
 * LiteRT's reference kernel: one multiplier for the whole op,
 * (s_lhs * s_rhs computed in float) / s_out. int8 sums in 32 bits, int16 in
 * 64 bits with the int64 requantization. No fused activation (full output
 * range). Refused: a per-channel quantized rhs (LiteRT has no per-channel
 * integer BATCH_MATMUL: it reads such a tensor's per-tensor scale as 0 and
 * outputs zeros, e.g. on litert-torch's w8a16 einsum test file), and the
 * int8 x int8 -> int32 variant (raw sums).
 *
 * int8 x int8 runs on the int8 GEMM microkernels (src/kernels/q8.h) when the
 * CPU has them: per output batch, the rhs matrix is packed as GEMM weights
 * (wick_q8_bmm_pack: adj_y or not, its zero point subtracted in the AVX2
 * layout, which holds int16 pairs when it is not 0; the int8 layouts of
 * VNNI / NEON take only a zero point 0, so on x86 a nonzero one runs the
 * AVX2 table, which every AVX-512 CPU also runs) with the op's multiplier
 * in every column, the lhs rows (adj_x: gathered) are prepared as for
 * FULLY_CONNECTED, and the GEMM's fixed-point output stage is the
 * reference's mbqm: bit-exact. Tasks are runs of
 * (batch, row part) units over the threads, each thread packing into its
 * own scratch (a broadcast rhs is packed once per run). An int16 lhs, and
 * int8 shapes the GEMM path leaves, run src/kernels/q16_bmm.c's exact rows
 * (portable C the compiler vectorizes; a rhs of more than 2^22 elements per
 * batch stays on the reference).
 * Everything else (forced reference, NEON with a nonzero rhs zero point)
 * runs the reference kernel over output rows split across the
 * interpreter's threads (which also lets a cancelled invoke stop between
 * them).
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct qbmm_data {
  wick_batch_matmul_shape shape;
  wick_qbmm_params params;
  bool acc64;
  /* int8 on the GEMM microkernels (kern non-NULL) */
  const wick_q8_kernels *kern;
  size_t batches, parts; /* units = batches x parts (row parts of whole tiles) */
  int32_t *mult, *shift; /* the op's multiplier and shift for each of the n columns */
  wick_q8_output out;    /* zero point and range */
  size_t packed_bytes, prepared_bytes, gathered_bytes, thread_bytes; /* scratch per thread */
  size_t work16; /* int16 lhs on wick_q16_batch_matmul_rows: its work bytes per thread; 0: no */
  wick_q16_dot_fn dot16; /* ... its int16 x int16 sums on the int8 table's kernel, or NULL */
} qbmm_data;

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

/* Chooses the GEMM path for int8 x int8 when it applies; sizes its per-thread scratch. */
static wick_status choose_q8(wick_op_ctx *ctx, qbmm_data *d, const wick_tensor *a) {
  const wick_batch_matmul_shape *s = &d->shape;
  d->kern = NULL;
  if (a->type != WICK_DTYPE_INT8 || s->m == 0 || s->n == 0 || s->k == 0) return WICK_OK;
  const wick_q8_kernels *kern = wick_q8_kernels_select(wick_op_force_reference(ctx));
  if (kern != NULL && !kern->i16 && d->params.rhs_offset != 0)
    kern = wick_q8_kernels_for_isa("avx2"); /* rhs - zp needs the int16 layout */
  if (kern == NULL || (!kern->i16 && d->params.rhs_offset != 0)) return WICK_OK;
  size_t batches = 1;
  for (int32_t i = 0; i < s->batch_rank; i++) batches *= (size_t)s->batch_dims[i];
  if (batches == 0) return WICK_OK;
  const size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k;
  /* Packing a rhs matrix costs about a scalar multiply-add per packed weight (n rounded up to
   * whole panels), as many as the reference kernel spends per output; below two outputs per
   * packed column (layer norm's [1, k] x [k, 1] per row) the reference is faster. */
  const size_t panel_cols = (n + kern->nr - 1) / kern->nr * kern->nr;
  if (m * n < 2 * panel_cols) return WICK_OK;
  size_t packed, prepared, gathered, total;
  if (!wick_q8_bmm_packed_size(kern, n, k, -d->params.rhs_offset, &packed) ||
      !wick_mul_size(m, k * wick_q8_input_bytes(kern) + WICK_Q8_ROW_PAD, &prepared) ||
      !wick_mul_size(m, k, &gathered) || packed > SIZE_MAX / 4 || prepared > SIZE_MAX / 4 ||
      gathered > SIZE_MAX / 4 ||
      !wick_mul_size(align64(packed) + align64(prepared) + align64(s->adj_x ? gathered : 0),
                     wick_op_num_threads(ctx), &total))
    return WICK_OK; /* too large for scratch: the reference kernel */
  d->mult = wick_op_alloc(ctx, n * sizeof(int32_t));
  d->shift = wick_op_alloc(ctx, n * sizeof(int32_t));
  if (d->mult == NULL || d->shift == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (size_t j = 0; j < n; j++) d->mult[j] = d->params.multiplier, d->shift[j] = d->params.shift;
  int64_t *rq64 = wick_op_alloc(ctx, wick_q8_rq64_words(n) * sizeof(int64_t));
  if (rq64 == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_q8_rq64_prepare(n, d->shift, rq64); /* the tiles' fused requantization constants */
  d->out = (wick_q8_output){d->params.output_offset,
                            d->params.act_min,
                            d->params.act_max,
                            NULL,
                            rq64,
                            false,
                            wick_q8_bmm_w16(kern, -d->params.rhs_offset)};
  const size_t tiles = (m + kern->mr - 1) / kern->mr;
  d->parts = wick_split_count(tiles, (uint64_t)kern->mr * n * k, WICK_TASK_GRAIN);
  d->batches = batches;
  d->packed_bytes = align64(packed);
  d->prepared_bytes = align64(prepared);
  d->gathered_bytes = s->adj_x ? align64(gathered) : 0;
  d->thread_bytes = d->packed_bytes + d->prepared_bytes + d->gathered_bytes;
  wick_op_request_scratch(ctx, total + 64);
  d->kern = kern;
  return WICK_OK;
}

wick_status wick_bmm_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  const bool ok =
      (a->type == WICK_DTYPE_INT8 && b->type == WICK_DTYPE_INT8) ||
      (a->type == WICK_DTYPE_INT16 && (b->type == WICK_DTYPE_INT8 || b->type == WICK_DTYPE_INT16));
  WICK_CHECK_SUPPORTED(ctx, ok, "quantized inputs %s and %s are not supported",
                       wick_dtype_name(a->type), wick_dtype_name(b->type));
  WICK_CHECK_SUPPORTED(ctx, out->type == a->type, "output type %s with %s inputs is not supported",
                       wick_dtype_name(out->type), wick_dtype_name(a->type));
  WICK_CHECK(ctx, a->rank >= 2 && b->rank >= 2, "inputs must have rank >= 2 (ranks %d and %d)",
             a->rank, b->rank);
  qbmm_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_batch_matmul_shape *s = &d->shape;
  const bool adj_x = ctx->params->adj_x, adj_y = ctx->params->adj_y;
  const int32_t ra = a->rank, rb = b->rank;
  const int64_t m = adj_x ? a->dims[ra - 1] : a->dims[ra - 2];
  const int64_t ka = adj_x ? a->dims[ra - 2] : a->dims[ra - 1];
  const int64_t kb = adj_y ? b->dims[rb - 1] : b->dims[rb - 2];
  const int64_t n = adj_y ? b->dims[rb - 2] : b->dims[rb - 1];
  WICK_CHECK(ctx, ka == kb, "inner dimensions differ: lhs gives %lld, rhs gives %lld",
             (long long)ka, (long long)kb);
  const int32_t rank = ra > rb ? ra : rb;
  s->batch_rank = rank - 2;
  s->m = m;
  s->n = n;
  s->k = ka;
  s->adj_x = adj_x;
  s->adj_y = adj_y;
  int64_t sa = m * ka, sb = ka * n;
  for (int32_t i = rank - 3; i >= 0; i--) {
    const int32_t ia = i - (rank - ra), ib = i - (rank - rb);
    const int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    WICK_CHECK(ctx, da == db || da == 1 || db == 1,
               "batch dimension %d does not broadcast (%d and %d)", i, da, db);
    s->batch_dims[i] = da == 1 ? db : da;
    s->lhs_strides[i] = da == 1 ? 0 : sa;
    s->rhs_strides[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }

  wick_qparams ql, qr, qo;
  WICK_TRY(wick_quant_params(ctx, a, "the lhs", false, &ql));
  WICK_CHECK_SUPPORTED(ctx, b->info == NULL || b->info->quant.count <= 1,
                       "a per-channel quantized rhs (%u scales) is not supported (LiteRT has no "
                       "per-channel integer BATCH_MATMUL and outputs zeros for it)",
                       b->info ? b->info->quant.count : 0u);
  WICK_TRY(wick_quant_params(ctx, b, "the rhs", false, &qr));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  d->acc64 = a->type == WICK_DTYPE_INT16;
  if (d->acc64)
    WICK_CHECK_SUPPORTED(ctx, ql.zero_point == 0 && qr.zero_point == 0 && qo.zero_point == 0,
                         "int16 operands must have zero points 0");
  wick_qbmm_params *p = &d->params;
  WICK_TRY(wick_quant_multiplier(ctx, (double)(ql.scale * qr.scale) / (double)qo.scale,
                                 d->acc64 ? 14 : 30, "the output", &p->multiplier, &p->shift));
  p->lhs_offset = -ql.zero_point;
  p->rhs_offset = -qr.zero_point;
  p->output_offset = qo.zero_point;
  wick_quant_type_range(out->type, &p->act_min, &p->act_max);

  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank - 2; i++) dims[i] = s->batch_dims[i];
  dims[rank - 2] = (int32_t)m;
  dims[rank - 1] = (int32_t)n;
  WICK_TRY(wick_op_set_output(ctx, 0, out->type, rank, dims));
  wick_op_set_macs(ctx, (uint64_t)wick_shape_elements(rank, dims) * (uint64_t)ka);
  wick_op_set_data(ctx, d);
  WICK_TRY(choose_q8(ctx, d, a));
  d->work16 = 0;
  if (d->kern == NULL && !wick_op_force_reference(ctx) && s->n * s->k <= ((int64_t)1 << 22)) {
    size_t total;
    d->work16 = (wick_q16_batch_matmul_work(s) + 63) & ~(size_t)63;
    if (wick_mul_size(d->work16, wick_op_num_threads(ctx), &total))
      wick_op_request_scratch(ctx, total);
    else
      d->work16 = 0;
  }
  const wick_q8_kernels *k8 = wick_q8_kernels_select(wick_op_force_reference(ctx));
  d->dot16 =
      d->work16 != 0 && k8 != NULL && a->type == WICK_DTYPE_INT16 && b->type == WICK_DTYPE_INT16
          ? k8->dot16
          : NULL;
  if (d->kern != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q8 gemm");
  else if (d->dot16 != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "exact rows, q16 dot");
  else if (d->work16 != 0)
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "exact rows");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "rows"); /* split over rows, scalar */
  return WICK_OK;
}

/* Element offsets of output batch b's operands (row-major batch index). */
static void batch_offsets(const wick_batch_matmul_shape *s, size_t b, int64_t *lo, int64_t *ro) {
  *lo = *ro = 0;
  for (int32_t i = s->batch_rank - 1; i >= 0; i--) {
    const int64_t idx = (int64_t)(b % (size_t)s->batch_dims[i]);
    b /= (size_t)s->batch_dims[i];
    *lo += idx * s->lhs_strides[i];
    *ro += idx * s->rhs_strides[i];
  }
}

typedef struct q8_job {
  const qbmm_data *d;
  const int8_t *lhs, *rhs;
  int8_t *out;
  uint8_t *scratch; /* 64-aligned, thread_bytes per thread */
} q8_job;

/* Units [begin, end): unit u is row part u % parts of output batch u / parts. */
static void q8_units(void *arg, size_t begin, size_t end, size_t thread) {
  const q8_job *j = arg;
  const qbmm_data *d = j->d;
  const wick_batch_matmul_shape *s = &d->shape;
  const wick_q8_kernels *kern = d->kern;
  const size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k, ib = wick_q8_input_bytes(kern);
  uint8_t *mine = j->scratch + thread * d->thread_bytes;
  void *packed = mine;
  int8_t *prepared = (int8_t *)(mine + d->packed_bytes);
  int8_t *gathered = (int8_t *)(mine + d->packed_bytes + d->prepared_bytes);
  const size_t tiles = (m + kern->mr - 1) / kern->mr;
  int64_t packed_ro = -1; /* the rhs offset the packed buffer holds */
  for (size_t u = begin; u < end; u++) {
    const size_t b = u / d->parts, part = u % d->parts;
    int64_t lo, ro;
    batch_offsets(s, b, &lo, &ro);
    if (ro != packed_ro) {
      wick_q8_bmm_pack(kern, n, k, j->rhs + ro, s->adj_y ? k : 1, s->adj_y ? 1 : n,
                       -d->params.rhs_offset, -d->params.lhs_offset, d->mult, d->shift, packed);
      packed_ro = ro;
    }
    const size_t r0 = wick_split_begin(tiles, d->parts, part) * kern->mr;
    size_t r1 = wick_split_begin(tiles, d->parts, part + 1) * kern->mr;
    if (r1 > m) r1 = m;
    const int8_t *rows = j->lhs + lo + (int64_t)(r0 * k);
    if (s->adj_x) { /* lhs [k, m]: gather rows r0..r1 */
      for (size_t i = r0; i < r1; i++)
        for (size_t p = 0; p < k; p++)
          gathered[(i - r0) * k + p] = j->lhs[lo + (int64_t)(p * m + i)];
      rows = gathered;
    }
    wick_q8_prepare_input(kern, (r1 - r0) * k, rows, -d->params.lhs_offset, prepared);
    wick_q8_gemm(kern, 0, r1 - r0, n, k, prepared, k * ib, true, packed, j->out + (b * m + r0) * n,
                 n, &d->out);
  }
}

typedef struct qbmm_job {
  const wick_op_ctx *ctx;
  const qbmm_data *d;
  const wick_tensor *lhs, *rhs;
  void *out;
} qbmm_job;

static void q16_rows(void *arg, size_t begin, size_t end, size_t thread) {
  const qbmm_job *j = arg;
  uint8_t *work = (uint8_t *)wick_op_scratch(j->ctx) + thread * j->d->work16;
  wick_q16_batch_matmul_rows(j->lhs->type, j->rhs->type, &j->d->shape, &j->d->params, j->lhs->data,
                             j->rhs->data, j->out, (int64_t)begin, (int64_t)end, work, j->d->dot16);
}

static void qbmm_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const qbmm_job *j = arg;
  wick_q_batch_matmul_rows__reference(j->lhs->type, j->rhs->type, &j->d->shape, &j->d->params,
                                      j->d->acc64, j->lhs->data, j->rhs->data, j->out,
                                      (int64_t)begin, (int64_t)end);
}

wick_status wick_bmm_invoke_quantized(wick_op_ctx *ctx) {
  const qbmm_data *d = wick_op_data(ctx);
  const wick_batch_matmul_shape *s = &d->shape;
  if (d->kern != NULL) {
    uint8_t *scratch = wick_op_scratch(ctx);
    scratch += (64 - (uintptr_t)scratch % 64) % 64;
    q8_job q = {d, wick_op_input(ctx, 0)->data, wick_op_input(ctx, 1)->data,
                wick_op_output(ctx, 0)->data, scratch};
    return wick_parallel_range(ctx, d->batches * d->parts,
                               (uint64_t)s->m * (uint64_t)s->n * (uint64_t)s->k / d->parts,
                               q8_units, &q);
  }
  qbmm_job j = {ctx, d, wick_op_input(ctx, 0), wick_op_input(ctx, 1), wick_op_output(ctx, 0)->data};
  uint64_t rows = (uint64_t)s->m;
  for (int32_t i = 0; i < s->batch_rank; i++) rows *= (uint64_t)s->batch_dims[i];
  return wick_parallel_range(ctx, (size_t)rows, (uint64_t)s->n * (uint64_t)s->k,
                             d->work16 ? q16_rows : qbmm_rows, &j);
}
