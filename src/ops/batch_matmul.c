/*
 * batch_matmul.c — BATCH_MATMUL (float32; quantized inputs go to
 * batch_matmul_quantized.c).
 *
 * lhs [..., M, K] (or [..., K, M] with adj_x), rhs [..., K, N] (or [..., N, K]
 * with adj_y), ranks 2..WICK_MAX_RANK (LiteRT stops at 5 or 6), possibly
 * different. The batch dims (all but the last two) broadcast numpy-style after
 * aligning the ranks on the right; output [broadcast batch..., M, N], rank =
 * the larger input rank.
 *
 * Hybrid (dynamic-range) form: float32 lhs and output, int8 symmetric rhs
 * with one scale or one per output column (the rhs's N dimension): each lhs
 * row is quantized at run time, symmetric or with asymmetric_quantize_inputs
 * asymmetric, as LiteRT's EvalHybrid (src/kernels/reference/hybrid.c). A
 * constant rhs shared by every batch, with no adj_x and no broadcast lhs
 * (the attention projections of TF's and wick's dynamic-range encoders),
 * runs the GEMM form of ops/hybrid.h: all batches' rows against the packed
 * rhs, then the reference's float rescale per block; anything else runs the
 * reference kernel split over output rows.
 *
 * Kernels: without adj_x, and when the CPU has optimized GEMM kernels, each
 * batch is a GEMM on them (src/kernels/gemm_driver.c): the right operands are
 * packed once — at prepare when they are constant, else at the start of each
 * invoke into scratch (one packing per distinct rhs matrix, split over the
 * threads) — and the tasks (batch x column block x row tiles) run on the
 * interpreter's threads. adj_x and force_reference run the reference kernel,
 * split over output rows. Either way each output is computed as on one
 * thread.
 *
 * Next: src/kernels/reference/batch_matmul.c.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/hybrid.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct bmm_data {
  wick_batch_matmul_shape s;
  const wick_f32_gemm_kernel *kern; /* NULL: reference */
  size_t batches, rhs_batches;      /* output batches; distinct rhs matrices */
  size_t packed_floats;             /* per rhs matrix */
  float *packed;                    /* packed at prepare (constant rhs), else NULL: scratch */
  bool hybrid, per_channel;         /* int8 rhs, float lhs */
  const float *rhs_scales;          /* hybrid: n scales, or 1 */
  size_t row_bytes;                 /* hybrid: per-thread scratch (k floats + k int8) */
  bool hybrid_gemm;                 /* hybrid on the GEMM form (h), else the reference */
  wick_hybrid_gemm h;               /* m = batches x m rows of the lhs */
} bmm_data;

/* Element offsets of output batch b's operands (row-major batch index). */
static void batch_offsets(const wick_batch_matmul_shape *s, size_t b, int64_t *lo, int64_t *ro) {
  *lo = *ro = 0;
  for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
    int64_t i = (int64_t)(b % (size_t)s->batch_dims[d]);
    b /= (size_t)s->batch_dims[d];
    *lo += i * s->lhs_strides[d];
    *ro += i * s->rhs_strides[d];
  }
}

static void pack_rhs(const bmm_data *d, const float *rhs, size_t i, float *packed) {
  const wick_batch_matmul_shape *s = &d->s;
  const float *w = rhs + (int64_t)i * s->k * s->n;
  float *dst = packed + i * d->packed_floats;
  if (s->adj_y) /* rhs [N, K]: the weights layout of FULLY_CONNECTED */
    wick_f32_gemm_pack((size_t)s->n, (size_t)s->k, d->kern->nr, w, NULL, dst);
  else
    wick_f32_gemm_pack_kn((size_t)s->n, (size_t)s->k, d->kern->nr, w, dst);
}

/* Chooses the GEMM path if it applies; packs a constant rhs. */
static wick_status choose_kernels(wick_op_ctx *ctx, bmm_data *d, const wick_tensor *b) {
  const wick_batch_matmul_shape *s = &d->s;
  d->kern = NULL;
  const wick_f32_kernels *all = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (all == NULL || s->adj_x || s->m == 0 || s->n == 0 || s->k == 0) return WICK_OK;
  size_t batches = 1;
  for (int32_t i = 0; i < s->batch_rank; i++) batches *= (size_t)s->batch_dims[i];
  if (batches == 0) return WICK_OK;
  const wick_f32_gemm_kernel *kern = wick_f32_gemm_kernel_for(all, (size_t)s->n);
  size_t floats, bytes;
  d->rhs_batches = (size_t)(wick_tensor_elements(b) / (s->k * s->n));
  if (!wick_f32_gemm_packed_size_checked((size_t)s->n, (size_t)s->k, kern->nr, &floats) ||
      !wick_mul_size(floats, d->rhs_batches, &bytes) ||
      !wick_mul_size(bytes, sizeof(float), &bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "packed operand size overflows");
  d->kern = kern;
  d->batches = batches;
  d->packed_floats = floats;
  d->packed = NULL;
  if (wick_input_known(ctx, 1)) {
    bool cached;
    uint32_t layout = (uint32_t)kern->nr | (s->adj_y ? 0u : 1u << 16); /* pack_rhs's two forms */
    if ((d->packed = wick_op_packed(ctx, 0, layout, bytes, &cached)) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the rhs");
    if (!cached)
      for (size_t i = 0; i < d->rhs_batches; i++) pack_rhs(d, b->data, i, d->packed);
    wick_op_release_input(ctx, 1); /* the packed copy holds it */
  } else {
    wick_op_request_scratch(ctx, bytes);
  }
  return WICK_OK;
}

/* The int8 rhs of the hybrid form: symmetric, one scale or one per column
 * (on the rhs's N dimension: the last one, or the one before with adj_y). */
static wick_status hybrid_prepare(wick_op_ctx *ctx, bmm_data *d, const wick_tensor *b) {
  const wick_quant *q = b->info != NULL ? &b->info->quant : NULL;
  WICK_CHECK_SUPPORTED(ctx, q != NULL && q->count > 0,
                       "float32 lhs with an int8 rhs without quantization parameters (the "
                       "hybrid form needs scales)");
  const int32_t n_axis = d->s.adj_y ? b->rank - 2 : b->rank - 1;
  d->per_channel = q->count > 1;
  if (d->per_channel)
    WICK_CHECK(ctx, q->count == (uint32_t)d->s.n && q->quantized_dimension == n_axis,
               "the int8 rhs has %u scales on dimension %d; expected 1 or %lld on dimension %d",
               q->count, q->quantized_dimension, (long long)d->s.n, n_axis);
  for (uint32_t i = 0; i < q->count; i++) {
    WICK_CHECK(ctx, q->zero_point[i] == 0, "the int8 rhs must be symmetric (zero point 0)");
    WICK_CHECK(ctx, isfinite(q->scale[i]) && q->scale[i] >= 0.0f,
               "rhs scale %u is not a finite non-negative number", i);
  }
  d->hybrid = true;
  d->rhs_scales = q->scale;
  const wick_batch_matmul_shape *s = &d->s;
  size_t batches = 1;
  for (int32_t i = 0; i < s->batch_rank; i++) batches *= (size_t)s->batch_dims[i];
  const wick_tensor *a = wick_op_input(ctx, 0);
  const bool one_rhs = wick_tensor_elements(b) == s->k * s->n;
  const bool lhs_rows =
      (uint64_t)wick_tensor_elements(a) == (uint64_t)batches * (uint64_t)(s->m * s->k);
  if (!s->adj_x && one_rhs && lhs_rows && wick_input_known(ctx, 1) && s->k > 0) {
    WICK_TRY(wick_hybrid_gemm_prepare(ctx, &d->h, batches * (size_t)s->m, (size_t)s->n,
                                      (size_t)s->k, b->data, !s->adj_y, 0, &d->hybrid_gemm));
    if (d->hybrid_gemm) {
      wick_op_release_input(ctx, 1); /* the packed copy holds it */
      return WICK_OK;
    }
  }
  size_t row_bytes;
  if (!wick_mul_size((size_t)d->s.k, sizeof(float) + 1, &row_bytes))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  d->row_bytes = (row_bytes + 15) & ~(size_t)15;
  size_t scratch;
  if (!wick_mul_size(d->row_bytes, wick_op_num_threads(ctx), &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  return WICK_OK;
}

static wick_status bmm_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_bmm_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b;
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  const bool hybrid = a->type == WICK_DTYPE_FLOAT32 && b->type == WICK_DTYPE_INT8;
  WICK_CHECK_SUPPORTED(ctx,
                       a->type == WICK_DTYPE_FLOAT32 && (b->type == WICK_DTYPE_FLOAT32 || hybrid),
                       "inputs are %s and %s; wick runs BATCH_MATMUL on float32 only so far "
                       "(and on float32 x int8, the hybrid form)",
                       wick_dtype_name(a->type), wick_dtype_name(b->type));
  WICK_CHECK(ctx, a->rank >= 2 && b->rank >= 2, "inputs must have rank >= 2 (ranks %d and %d)",
             a->rank, b->rank);
  bool adj_x = ctx->params->adj_x, adj_y = ctx->params->adj_y;
  int32_t ra = a->rank, rb = b->rank;
  int64_t m = adj_x ? a->dims[ra - 1] : a->dims[ra - 2];
  int64_t ka = adj_x ? a->dims[ra - 2] : a->dims[ra - 1];
  int64_t kb = adj_y ? b->dims[rb - 1] : b->dims[rb - 2];
  int64_t n = adj_y ? b->dims[rb - 2] : b->dims[rb - 1];
  WICK_CHECK(ctx, ka == kb, "inner dimensions differ: lhs gives %lld, rhs gives %lld",
             (long long)ka, (long long)kb);
  bmm_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_batch_matmul_shape *s = &d->s;
  int32_t rank = ra > rb ? ra : rb;
  s->batch_rank = rank - 2;
  s->m = m;
  s->n = n;
  s->k = ka;
  s->adj_x = adj_x;
  s->adj_y = adj_y;
  /* Batch strides in elements; a broadcast (size-1 or missing) dim gets 0. */
  int64_t sa = m * ka, sb = ka * n;
  for (int32_t i = rank - 3; i >= 0; i--) {
    int32_t ia = i - (rank - ra), ib = i - (rank - rb);
    int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    WICK_CHECK(ctx, da == db || da == 1 || db == 1,
               "batch dimension %d does not broadcast (%d and %d)", i, da, db);
    s->batch_dims[i] = da == 1 ? db : da;
    s->lhs_strides[i] = da == 1 ? 0 : sa;
    s->rhs_strides[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank - 2; i++) dims[i] = s->batch_dims[i];
  dims[rank - 2] = (int32_t)m;
  dims[rank - 1] = (int32_t)n;
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, rank, dims));
  wick_op_set_macs(ctx, (uint64_t)wick_shape_elements(rank, dims) * (uint64_t)ka);
  wick_op_set_data(ctx, d);
  if (hybrid) {
    WICK_TRY(hybrid_prepare(ctx, d, b));
    if (d->hybrid_gemm)
      wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "hybrid gemm");
    else
      wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "hybrid");
    return WICK_OK;
  }
  WICK_TRY(choose_kernels(ctx, d, b));
  if (d->kern != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "gemm");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, adj_x ? "adj_x" : NULL);
  return WICK_OK;
}

typedef struct bmm_job {
  const bmm_data *d;
  const float *lhs, *rhs;
  float *out, *packed;
  wick_f32_gemm_tasks t; /* the split of one batch (pointers filled per task) */
  size_t tasks_per_batch;
  const int8_t *hybrid_rhs; /* hybrid: the int8 rhs */
  uint8_t *scratch;         /* hybrid: one row buffer per thread */
  bool asymmetric;          /* hybrid: asymmetric_quantize_inputs */
} bmm_job;

static void reference_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const bmm_job *j = arg;
  wick_f32_batch_matmul_rows__reference(&j->d->s, j->lhs, j->rhs, j->out, (int64_t)begin,
                                        (int64_t)end);
}

static void hybrid_rows(void *arg, size_t begin, size_t end, size_t thread) {
  const bmm_job *j = arg;
  const bmm_data *d = j->d;
  float *row = (float *)(void *)(j->scratch + thread * d->row_bytes);
  int8_t *q = (int8_t *)(row + d->s.k);
  wick_hybrid_batch_matmul_rows__reference(&d->s, j->lhs, j->hybrid_rhs, d->rhs_scales,
                                           d->per_channel, j->asymmetric, row, q, j->out,
                                           (int64_t)begin, (int64_t)end);
}

static void pack_task(void *arg, size_t i, size_t thread) {
  (void)thread;
  const bmm_job *j = arg;
  pack_rhs(j->d, j->rhs, i, j->packed);
}

static void gemm_task(void *arg, size_t task, size_t thread) {
  (void)thread;
  const bmm_job *j = arg;
  const wick_batch_matmul_shape *s = &j->d->s;
  size_t b = task / j->tasks_per_batch;
  int64_t lo, ro;
  batch_offsets(s, b, &lo, &ro);
  wick_f32_gemm_tasks t = j->t;
  t.a = j->lhs + lo;
  t.packed = j->packed + (size_t)(ro / (s->k * s->n)) * j->d->packed_floats;
  t.c = j->out + (int64_t)b * s->m * s->n;
  wick_f32_gemm_run_task(&t, task % j->tasks_per_batch);
}

/* The float rescale of one block of the GEMM form's sums, as the reference does it. */
typedef struct hybrid_gemm_job {
  const bmm_data *d;
  float *out;
  const int32_t *acc; /* (batches x m) x n */
  bool asymmetric;
} hybrid_gemm_job;

static void hybrid_gemm_finish(void *arg, size_t m0, size_t m1, size_t n0, size_t n1) {
  const hybrid_gemm_job *j = arg;
  const bmm_data *d = j->d;
  const wick_hybrid_gemm *h = &d->h;
  for (size_t r = m0; r < m1; r++) {
    const int32_t *acc = j->acc + r * h->n;
    float *out = j->out + r * h->n;
    if (!j->asymmetric && h->f32 != NULL && h->f32->hybrid_rescale != NULL) {
      /* 0 + total * (row scale * rhs scale): the FULLY_CONNECTED order without a bias */
      const float row_scale =
          d->per_channel ? h->row_scales[r] : h->row_scales[r] * d->rhs_scales[0];
      h->f32->hybrid_rescale(n1 - n0, acc + n0, NULL, 0, d->per_channel ? d->rhs_scales + n0 : NULL,
                             row_scale, false, NULL, -INFINITY, INFINITY, out + n0);
      continue;
    }
    for (size_t c = n0; c < n1; c++) {
      int32_t total = acc[c];
      if (j->asymmetric)
        total = wick_hybrid_subtract_offset(total, (int32_t)h->weight_sums[c], h->row_offsets[r]);
      float y = 0.0f;
      y += (float)total * (h->row_scales[r] * d->rhs_scales[d->per_channel ? c : 0]);
      out[c] = y;
    }
  }
}

static wick_status hybrid_gemm_run(wick_op_ctx *ctx, const bmm_data *d) {
  const bool asymmetric = ctx->params->asymmetric_inputs;
  const float *lhs = wick_op_input(ctx, 0)->data;
  for (size_t r = 0; r < d->h.m; r++)
    wick_hybrid_gemm_quantize(&d->h, wick_op_scratch(ctx), r, lhs + r * d->h.k, asymmetric);
  hybrid_gemm_job g = {d, wick_op_output(ctx, 0)->data,
                       wick_hybrid_gemm_sums(&d->h, wick_op_scratch(ctx)), asymmetric};
  return wick_hybrid_gemm_run(ctx, &d->h, hybrid_gemm_finish, &g);
}

static wick_status bmm_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_bmm_invoke_quantized(ctx);
  const bmm_data *d = wick_op_data(ctx);
  if (d->hybrid_gemm) return hybrid_gemm_run(ctx, d);
  const wick_batch_matmul_shape *s = &d->s;
  bmm_job j = {.d = d,
               .lhs = wick_op_input(ctx, 0)->data,
               .rhs = wick_op_input(ctx, 1)->data,
               .out = wick_op_output(ctx, 0)->data};
  if (d->kern == NULL) {
    /* Output rows (batches x m) split over the threads. */
    uint64_t rows = (uint64_t)s->m;
    for (int32_t i = 0; i < s->batch_rank; i++) rows *= (uint64_t)s->batch_dims[i];
    if (d->hybrid) {
      j.hybrid_rhs = wick_op_input(ctx, 1)->data;
      j.scratch = wick_op_scratch(ctx);
      j.asymmetric = ctx->params->asymmetric_inputs;
    }
    return wick_parallel_range(ctx, (size_t)rows, (uint64_t)s->n * (uint64_t)s->k,
                               d->hybrid ? hybrid_rows : reference_rows, &j);
  }
  j.packed = d->packed;
  if (j.packed == NULL) {
    j.packed = wick_op_scratch(ctx);
    WICK_TRY(wick_parallel_for(ctx, d->rhs_batches, pack_task, &j));
  }
  j.tasks_per_batch = wick_f32_gemm_tasks_init(&j.t, d->kern, (size_t)s->m, (size_t)s->n,
                                               (size_t)s->k, NULL, (size_t)s->k, NULL, NULL,
                                               (size_t)s->n, -INFINITY, INFINITY, WICK_TASK_GRAIN);
  return wick_parallel_for(ctx, d->batches * j.tasks_per_batch, gemm_task, &j);
}

const wick_op_def wick_op_batch_matmul = {
    "BATCH_MATMUL", WICK_BUILTIN_BATCH_MATMUL, 4, bmm_prepare, bmm_invoke, 0};
