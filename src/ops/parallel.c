/*
 * parallel.c — the operator-side splits of parallel.h: GEMM tasks and output
 * rows of NHWC spatial ops, both handed to wick_parallel_for.
 */
#include "ops/parallel.h"

#include "kernels/reference/movement.h"

/* Work units per copied element (a GEMM multiply-add is one): copies run at
 * a few elements per nanosecond. */
#define COPY_WORK_PER_ELEMENT 4

static void gemm_task(void *arg, size_t task, size_t thread) {
  (void)thread;
  wick_f32_gemm_run_task(arg, task);
}

wick_status wick_op_run_gemm_tasks(const wick_op_ctx *ctx, const wick_f32_gemm_tasks *t,
                                   size_t n_tasks) {
  return wick_parallel_for(ctx, n_tasks, gemm_task, (void *)(uintptr_t)t);
}

typedef struct rows_job {
  wick_rows_fn fn;
  void *arg;
  size_t out_h, rows_per_task, tasks_per_image;
} rows_job;

static void rows_task(void *p, size_t task, size_t thread) {
  const rows_job *j = p;
  size_t n = task / j->tasks_per_image, y0 = task % j->tasks_per_image * j->rows_per_task;
  size_t y1 = j->out_h - y0 < j->rows_per_task ? j->out_h : y0 + j->rows_per_task;
  j->fn(j->arg, (int32_t)n, (int32_t)y0, (int32_t)y1, thread);
}

wick_status wick_parallel_rows(const wick_op_ctx *ctx, int32_t batch, int32_t out_h,
                               uint64_t work_per_row, bool splittable, wick_rows_fn fn,
                               void *arg) {
  if (batch <= 0 || out_h <= 0) return WICK_OK;
  rows_job j = {fn, arg, (size_t)out_h, (size_t)out_h, 1};
  if (splittable) {
    /* Tasks never straddle two images: per image, runs of whole rows. */
    j.rows_per_task = wick_parallel_units_per_task((size_t)out_h, work_per_row);
    j.tasks_per_image = (j.out_h + j.rows_per_task - 1) / j.rows_per_task;
  }
  return wick_parallel_for(ctx, (size_t)batch * j.tasks_per_image, rows_task, &j);
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
  copy_job j = {esize,
                !wick_op_force_reference(ctx) && wick_strided_copy_is_transpose(plan), plan,
                src, dst};
  return wick_parallel_range(ctx, (size_t)plan->dims[0], per_slice, copy_range, &j);
}
