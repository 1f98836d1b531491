/*
 * parallel.c — the operator-side splits of parallel.h: GEMM tasks and output
 * rows of NHWC spatial ops, both handed to wick_parallel_for.
 */
#include "ops/parallel.h"

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
