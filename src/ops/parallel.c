/*
 * parallel.c — the operator-side splits of parallel.h: GEMM tasks and output
 * rows of NHWC spatial ops, both handed to wick_parallel_for.
 */
#include <string.h>

#include "ops/parallel.h"

#include "kernels/q8.h"
#include "kernels/reference/movement.h"

/* Work units per copied element (a GEMM multiply-add is one): copies run at
 * a few elements per nanosecond. */
#define COPY_WORK_PER_ELEMENT 4

static void gemm_task(void *arg, size_t task, size_t thread) {
  (void)thread;
  wick_f32_gemm_run_task(arg, task);
}

/* Work units per weight of a matrix product with few rows: the product streams its weights
 * from memory once per call and is bound by that, not by its arithmetic (an int8 weight read
 * at ~13 GB/s costs about as much as 8 multiply-adds on cached data). */
#define WEIGHT_READ_WORK 8

/* The work of an m x n x k product: m * n * k multiply-accumulates, but at least
 * WEIGHT_READ_WORK per weight (an LLM decode step's one-row products are big jobs though their
 * m * n * k is small); saturating, never 0. */
static uint64_t gemm_work(size_t m, size_t n, size_t k) {
  uint64_t w;
  const uint64_t rows = m > WEIGHT_READ_WORK ? (uint64_t)m : WEIGHT_READ_WORK;
  if (__builtin_mul_overflow(rows, (uint64_t)n, &w) ||
      __builtin_mul_overflow(w, (uint64_t)(k ? k : 1), &w))
    return UINT64_MAX;
  return w ? w : 1;
}

wick_status wick_op_run_gemm_tasks(const wick_op_ctx *ctx, const wick_f32_gemm_tasks *t,
                                   size_t n_tasks) {
  return wick_parallel_for_work(ctx, n_tasks, gemm_work(t->m, t->n, t->k), gemm_task,
                                (void *)(uintptr_t)t);
}

typedef struct q8_gemm_job {
  wick_q8_gemm_split split;
  const wick_q8_kernels *kern;
  size_t k;
  const int8_t *a;
  int32_t a_zero_point;
  int8_t *prepared;
  bool rows_prepared; /* false: each task prepares its rows */
  const void *packed;
  int8_t *c;
  const wick_q8_output *o;
  wick_q8_raw_finish_fn finish; /* raw output: rescales each task's block */
  void *finish_arg;
} q8_gemm_job;

static void q8_gemm_task(void *arg, size_t task, size_t thread) {
  (void)thread;
  const q8_gemm_job *j = arg;
  size_t m0, m1, n0, n1;
  wick_q8_gemm_split_task(&j->split, task, &m0, &m1, &n0, &n1);
  const size_t ib = wick_q8_input_bytes(j->kern), stride = j->k * ib;
  if (!j->rows_prepared)
    wick_q8_prepare_input(j->kern, (m1 - m0) * j->k, j->a + m0 * j->k, j->a_zero_point,
                          j->prepared + m0 * stride);
  const size_t c_stride = j->split.n * (j->o->raw ? sizeof(int32_t) : 1);
  wick_q8_gemm_cols(j->kern, m0, m1, n0, n1, j->split.n, j->k, j->prepared, stride, true, j->packed,
                    j->c, c_stride, j->o);
  if (j->finish != NULL) j->finish(j->finish_arg, m0, m1, n0, n1);
}

typedef struct prepare_job {
  const wick_q8_kernels *kern;
  const int8_t *a;
  int32_t zero_point;
  int8_t *prepared;
} prepare_job;

#define PREPARE_BLOCK 64 /* input elements per unit */

static void prepare_range(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const prepare_job *j = arg;
  const size_t ib = wick_q8_input_bytes(j->kern);
  wick_q8_prepare_input(j->kern, (end - begin) * PREPARE_BLOCK, j->a + begin * PREPARE_BLOCK,
                        j->zero_point, j->prepared + begin * PREPARE_BLOCK * ib);
}

/* All m x k input elements prepared at once (a split that cuts columns: every task reads
 * every row), split over the threads: the conversion is elementwise, so any split gives the
 * same bytes. */
static wick_status prepare_all_rows(const wick_op_ctx *ctx, const wick_q8_kernels *kern,
                                    size_t count, const int8_t *a, int32_t zero_point,
                                    int8_t *prepared) {
  prepare_job j = {kern, a, zero_point, prepared};
  const size_t whole = count / PREPARE_BLOCK, tail = count % PREPARE_BLOCK;
  wick_status st =
      wick_parallel_range(ctx, whole, PREPARE_BLOCK * COPY_WORK_PER_ELEMENT, prepare_range, &j);
  if (st != WICK_OK) return st;
  if (tail != 0)
    wick_q8_prepare_input(kern, tail, a + whole * PREPARE_BLOCK, zero_point,
                          prepared + whole * PREPARE_BLOCK * wick_q8_input_bytes(kern));
  return WICK_OK;
}

wick_status wick_parallel_q8_gemm(const wick_op_ctx *ctx, const wick_q8_kernels *kern, size_t m,
                                  size_t n, size_t k, const int8_t *a, int32_t a_zero_point,
                                  int8_t *prepared, const void *packed, int8_t *c,
                                  const wick_q8_output *o) {
  q8_gemm_job j = {.kern = kern,
                   .k = k,
                   .a = a,
                   .a_zero_point = a_zero_point,
                   .prepared = prepared,
                   .packed = packed,
                   .c = c,
                   .o = o};
  const size_t tasks = wick_q8_gemm_split_init(&j.split, kern, m, n, k, WICK_TASK_GRAIN);
  if (j.split.col_parts > 1) { /* few rows (the split cut columns): prepare them once */
    wick_status st = prepare_all_rows(ctx, kern, m * k, a, a_zero_point, prepared);
    if (st != WICK_OK) return st;
    j.rows_prepared = true;
  }
  return wick_parallel_for_work(ctx, tasks, gemm_work(m, n, k), q8_gemm_task, &j);
}

wick_status wick_parallel_q8_gemm_raw(const wick_op_ctx *ctx, const wick_q8_kernels *kern, size_t m,
                                      size_t n, size_t k, const int8_t *a, bool a_prepared,
                                      int8_t *prepared, const void *packed, int32_t *acc,
                                      wick_q8_raw_finish_fn finish, void *finish_arg) {
  static const wick_q8_output raw = {.raw = true};
  q8_gemm_job j = {.kern = kern,
                   .k = k,
                   .a = a,
                   .prepared = prepared,
                   .packed = packed,
                   .c = (int8_t *)(void *)acc,
                   .o = &raw,
                   .finish = finish,
                   .finish_arg = finish_arg};
  const size_t tasks = wick_q8_gemm_split_init(&j.split, kern, m, n, k, WICK_TASK_GRAIN);
  if (a_prepared) {
    j.prepared = (int8_t *)(uintptr_t)a; /* read only */
    j.rows_prepared = true;
  } else if (j.split.col_parts > 1) {
    wick_status st = prepare_all_rows(ctx, kern, m * k, a, 0, prepared);
    if (st != WICK_OK) return st;
    j.rows_prepared = true;
  }
  return wick_parallel_for_work(ctx, tasks, gemm_work(m, n, k), q8_gemm_task, &j);
}

typedef struct rows_job {
  wick_rows_fn fn;
  void *arg;
  size_t out_h, tasks_per_image;
} rows_job;

static void rows_task(void *p, size_t task, size_t thread) {
  const rows_job *j = p;
  const size_t n = task / j->tasks_per_image, t = task % j->tasks_per_image;
  const size_t y0 = wick_split_begin(j->out_h, j->tasks_per_image, t);
  const size_t y1 = wick_split_begin(j->out_h, j->tasks_per_image, t + 1);
  j->fn(j->arg, (int32_t)n, (int32_t)y0, (int32_t)y1, thread);
}

wick_status wick_parallel_rows(const wick_op_ctx *ctx, int32_t batch, int32_t out_h,
                               uint64_t work_per_row, bool splittable, wick_rows_fn fn, void *arg) {
  if (batch <= 0 || out_h <= 0) return WICK_OK;
  rows_job j = {fn, arg, (size_t)out_h, 1};
  /* Tasks never straddle two images: per image, runs of whole rows. */
  if (splittable) j.tasks_per_image = wick_split_count(j.out_h, work_per_row, WICK_TASK_GRAIN);
  uint64_t work;
  if (__builtin_mul_overflow((uint64_t)batch * (uint64_t)out_h, work_per_row, &work))
    work = UINT64_MAX;
  return wick_parallel_for_work(ctx, (size_t)batch * j.tasks_per_image, work ? work : 1, rows_task,
                                &j);
}

typedef struct copy_job {
  size_t esize;
  bool transpose; /* the blocked 2-D transpose kernel (src/kernels/transpose.c) */
  const wick_copy_plan *plan;
  const void *src;
  void *dst;
} copy_job;

static void copy_range(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const copy_job *j = arg;
  wick_copy_plan p = *j->plan;
  p.dims[0] = (int64_t)(end - begin);
  p.src_offset += (int64_t)begin * p.src_strides[0];
  p.dst_offset += (int64_t)begin * p.dst_strides[0];
  if (j->transpose)
    wick_strided_copy_transpose(j->esize, &p, j->src, j->dst);
  else
    wick_strided_copy__reference(j->esize, &p, j->src, j->dst);
}

wick_status wick_parallel_strided_copy(const wick_op_ctx *ctx, size_t esize,
                                       const wick_copy_plan *plan, const void *src, void *dst) {
  if (plan->rank == 0) {
    wick_strided_copy__reference(esize, plan, src, dst);
    return WICK_OK;
  }
  for (int32_t k = 0; k < plan->rank; k++)
    if (plan->dims[k] <= 0) return WICK_OK;
  uint64_t per_slice = COPY_WORK_PER_ELEMENT;
  for (int32_t k = 1; k < plan->rank; k++) {
    if (__builtin_mul_overflow(per_slice, (uint64_t)plan->dims[k], &per_slice)) {
      per_slice = UINT64_MAX;
      break;
    }
  }
  copy_job j = {esize, !wick_op_force_reference(ctx) && wick_strided_copy_is_transpose(plan), plan,
                src, dst};
  return wick_parallel_range(ctx, (size_t)plan->dims[0], per_slice, copy_range, &j);
}

/* ---- elementwise ---- */

#define CHUNK 4096 /* elements per unit: a multiple of every vector width */
#define ELEMENTWISE_WORK_PER_ELEMENT 16

typedef struct elements_job {
  wick_elements_fn fn;
  void *arg;
  size_t n;
} elements_job;

static void elements_range(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const elements_job *j = arg;
  j->fn(j->arg, begin * CHUNK, end * CHUNK < j->n ? end * CHUNK : j->n);
}

wick_status wick_parallel_elements(const wick_op_ctx *ctx, size_t n, wick_elements_fn fn,
                                   void *arg) {
  if (n == 0) return WICK_OK;
  elements_job j = {fn, arg, n};
  return wick_parallel_range(ctx, n / CHUNK + (n % CHUNK != 0),
                             (uint64_t)CHUNK * ELEMENTWISE_WORK_PER_ELEMENT, elements_range, &j);
}

typedef struct unary_job {
  wick_f32_unary_fn fn;
  const float *in;
  float *out;
} unary_job;

static void unary_elements(void *arg, size_t e0, size_t e1) {
  const unary_job *j = arg;
  j->fn(e1 - e0, j->in + e0, j->out + e0);
}

wick_status wick_parallel_f32_unary(const wick_op_ctx *ctx, wick_f32_unary_fn fn, size_t n,
                                    const float *in, float *out) {
  unary_job j = {fn, in, out};
  return wick_parallel_elements(ctx, n, unary_elements, &j);
}

typedef struct binary_job {
  wick_f32_binary_fn fn;
  const wick_f32_binary_plan *p;
  const float *a, *b;
  float *out;
  float lo, hi;
  size_t chunks; /* per inner row */
  size_t repeat; /* > 1: rows per call of a small per-channel broadcast (see repeated_rows) */
} binary_job;

/* Floats of the stack buffer a small broadcast operand is repeated into. */
#define REPEAT_FLOATS 1024

/* [M, C] op [C] (or [C] op [M, C]) with a small C — squeeze-excite gating at
 * 56x56x16, a bias over few channels: one kernel call per C-element row is
 * mostly call and loop overhead. The rewinding operand is copied `repeat`
 * times into a buffer, so one call covers `repeat` consecutive rows of the
 * dense operand and the output. Every element sees the same operation on the
 * same values: results are identical to the row-by-row loop. */
static void repeated_rows(const binary_job *j, size_t begin, size_t end) {
  const wick_f32_binary_plan *p = j->p;
  const size_t inner = p->dims[2], mid = p->dims[1];
  const bool b_rewinds = p->b_strides[1] == 0;
  float repeated[REPEAT_FLOATS];
  size_t filled_for = SIZE_MAX; /* the outer index whose broadcast row is in `repeated` */
  for (size_t u = begin; u < end;) {
    size_t i = u / mid, k = u % mid;
    size_t rows = end - u;
    if (rows > mid - k) rows = mid - k;
    if (rows > j->repeat) rows = j->repeat;
    const float *a = j->a + i * p->a_strides[0] + k * p->a_strides[1];
    const float *b = j->b + i * p->b_strides[0] + k * p->b_strides[1];
    if (filled_for != i) {
      for (size_t r = 0; r < j->repeat; r++)
        memcpy(repeated + r * inner, b_rewinds ? b : a, inner * sizeof *repeated);
      filled_for = i;
    }
    j->fn(rows * inner, b_rewinds ? a : repeated, b_rewinds ? repeated : b, j->out + u * inner,
          j->lo, j->hi);
    u += rows;
  }
}

/* How many rows repeated_rows may cover per call: 0 when the plan is not a
 * small per-channel broadcast over dense rows. */
static size_t rows_per_call(const wick_f32_binary_plan *p) {
  size_t inner = p->dims[2];
  if (p->form != WICK_F32_VV || p->dims[1] < 2 || inner == 0 || inner * 4 > REPEAT_FLOATS) return 0;
  bool b_rewinds = p->a_strides[1] == inner && p->b_strides[1] == 0;
  bool a_rewinds = p->a_strides[1] == 0 && p->b_strides[1] == inner;
  return b_rewinds || a_rewinds ? REPEAT_FLOATS / inner : 0;
}

/* Units are (row, chunk of the row's `inner` elements). */
static void binary_range(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const binary_job *j = arg;
  if (j->repeat > 1) {
    repeated_rows(j, begin, end);
    return;
  }
  const wick_f32_binary_plan *p = j->p;
  const size_t inner = p->dims[2];
  for (size_t u = begin; u < end; u++) {
    size_t row = u / j->chunks, c0 = u % j->chunks * CHUNK;
    size_t len = inner - c0 < CHUNK ? inner - c0 : CHUNK;
    size_t i = row / p->dims[1], k = row % p->dims[1];
    size_t ia = i * p->a_strides[0] + k * p->a_strides[1];
    size_t ib = i * p->b_strides[0] + k * p->b_strides[1];
    /* A scalar operand (VS: b, SV: a) is read from its pointer: no chunk offset. */
    if (p->form != WICK_F32_SV) ia += c0;
    if (p->form != WICK_F32_VS) ib += c0;
    j->fn(len, j->a + ia, j->b + ib, j->out + row * inner + c0, j->lo, j->hi);
  }
}

wick_status wick_parallel_f32_binary(const wick_op_ctx *ctx, const wick_f32_binary_fn forms[3],
                                     const wick_f32_binary_plan *plan, const float *a,
                                     const float *b, float *out, float lo, float hi) {
  size_t rows = plan->dims[0] * plan->dims[1], inner = plan->dims[2];
  if (rows == 0 || inner == 0) return WICK_OK;
  binary_job j = {forms[plan->form],  plan, a, b, out, lo, hi, inner / CHUNK + (inner % CHUNK != 0),
                  rows_per_call(plan)};
  uint64_t work = (uint64_t)(inner < CHUNK ? inner : CHUNK) * ELEMENTWISE_WORK_PER_ELEMENT;
  return wick_parallel_range(ctx, rows * j.chunks, work, binary_range, &j);
}
