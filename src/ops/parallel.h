/*
 * parallel.h — how operators split their work over the interpreter's threads
 * (on top of wick_parallel_for, src/core/op_api.h).
 *
 * Two splits cover the hot ops:
 *   - GEMM-shaped work (FULLY_CONNECTED, 1x1 and indirect-GEMM CONV_2D) runs
 *     the tasks of a wick_f32_gemm_tasks (src/kernels/gemm_driver.c);
 *   - NHWC spatial ops (depthwise and reference convolutions, pooling) split
 *     their output rows: a task computes rows [y0, y1) of one image by calling
 *     the whole-tensor kernel on a sub-shape (batch 1, out_h = y1 - y0, the
 *     top padding moved by y0 * stride_h) whose pointers start at that image
 *     and that output row. Kernels compute each output row from the shape's
 *     columns and channels only, so results do not depend on the split.
 *   - strided copies (TRANSPOSE, SLICE, TILE, ...) split the copy plan's
 *     outermost dimension;
 *   - elementwise kernels split their elements (64-aligned chunks).
 * Every split depends on the shape alone, never on the thread count.
 */
#ifndef WICK_OPS_PARALLEL_H
#define WICK_OPS_PARALLEL_H

#include "core/op_api.h"
#include "kernels/kernels.h"

/* Runs the n_tasks tasks of `t` on the interpreter's threads. */
WICK_INTERNAL wick_status wick_op_run_gemm_tasks(const wick_op_ctx *ctx,
                                                 const wick_f32_gemm_tasks *t, size_t n_tasks);

/* Runs a strided copy (kernels/reference/movement.h) split along the plan's
 * outermost dimension: every element is copied once, by exactly one task. */
struct wick_copy_plan;
WICK_INTERNAL wick_status wick_parallel_strided_copy(const wick_op_ctx *ctx, size_t esize,
                                                     const struct wick_copy_plan *plan,
                                                     const void *src, void *dst);

/* Elements [e0, e1) of an elementwise job. */
typedef void (*wick_elements_fn)(void *arg, size_t e0, size_t e1);

/* Runs fn over elements [0, n) in chunks that start at multiples of 64
 * elements (so every element runs the same vector code as in one call). */
WICK_INTERNAL wick_status wick_parallel_elements(const wick_op_ctx *ctx, size_t n,
                                                 wick_elements_fn fn, void *arg);

/* Elementwise float kernels (kernels.h) split over the threads in chunks
 * that start at multiples of 64 elements, so every element runs the same
 * vector code as in one call. */
WICK_INTERNAL wick_status wick_parallel_f32_unary(const wick_op_ctx *ctx, wick_f32_unary_fn fn,
                                                  size_t n, const float *in, float *out);
WICK_INTERNAL wick_status wick_parallel_f32_binary(const wick_op_ctx *ctx,
                                                   const wick_f32_binary_fn forms[3],
                                                   const wick_f32_binary_plan *plan, const float *a,
                                                   const float *b, float *out, float lo, float hi);

/* Work units per multiply-accumulate of a depthwise convolution: it loads
 * an input and a weight per MAC where a GEMM reuses them from registers, and
 * runs about 3-4x fewer MACs per nanosecond (MobileNetV2: ~20 against ~65 per
 * core). Scaling by this keeps its tasks near WICK_TASK_GRAIN of time, so the
 * 7x7 and 14x14 layers still split. */
#define WICK_DEPTHWISE_WORK_PER_MAC 4

/* c[m x n] = requant(a[m x k] * W) for the int8 GEMM paths (1x1
 * CONV_2D, FULLY_CONNECTED) in the tasks of wick_q8_gemm_split: each task
 * prepares its own rows of `a` into `prepared` (scratch of m * k input
 * elements) unless the split cuts columns, when all rows are prepared first. */
struct wick_q8_kernels;
struct wick_q8_output;
WICK_INTERNAL wick_status wick_parallel_q8_gemm(const wick_op_ctx *ctx,
                                                const struct wick_q8_kernels *kern, size_t m,
                                                size_t n, size_t k, const int8_t *a,
                                                int32_t a_zero_point, int8_t *prepared,
                                                const void *packed, int8_t *c,
                                                const struct wick_q8_output *o);
/* The hybrid ops' form: acc[m x n] (int32) = a[m x k] . W exactly (W packed with zero point 0
 * and no bias), then finish(finish_arg, m0, m1, n0, n1) on each task's block, on the thread
 * that computed it (rescaling it to float while it is in cache). a_prepared: a already holds
 * the kernels' input (wick_q8_prepare_input's bytes for zero point 0), used as it is. */
typedef void (*wick_q8_raw_finish_fn)(void *arg, size_t m0, size_t m1, size_t n0, size_t n1);
WICK_INTERNAL wick_status wick_parallel_q8_gemm_raw(const wick_op_ctx *ctx,
                                                    const struct wick_q8_kernels *kern, size_t m,
                                                    size_t n, size_t k, const int8_t *a,
                                                    bool a_prepared, int8_t *prepared,
                                                    const void *packed, int32_t *acc,
                                                    wick_q8_raw_finish_fn finish, void *finish_arg);

/* Rows [y0, y1) of image n. */
typedef void (*wick_rows_fn)(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread);

/* Runs fn over all batch * out_h output rows, in tasks of whole rows of at
 * least WICK_TASK_GRAIN work (work_per_row each). When `splittable` is false
 * (see wick_rows_splittable) each image is one task. */
WICK_INTERNAL wick_status wick_parallel_rows(const wick_op_ctx *ctx, int32_t batch, int32_t out_h,
                                             uint64_t work_per_row, bool splittable,
                                             wick_rows_fn fn, void *arg);

/* True when moving the top padding by up to out_h * stride_h keeps every row
 * coordinate the kernels compute (in 32 bits for the vector kernels) far from
 * overflow. False for absurd file-given strides and paddings: then one task
 * per image runs the original shape. */
static inline bool wick_rows_splittable(int32_t in_h, int32_t out_h, int32_t stride_h,
                                        int32_t pad_top) {
  int64_t reach = (int64_t)out_h * stride_h + (int64_t)in_h +
                  (pad_top < 0 ? -(int64_t)pad_top : (int64_t)pad_top);
  return stride_h > 0 && reach < ((int64_t)1 << 28);
}

/* Sub-shapes for rows [y0, y1) of one image. */
static inline wick_conv_shape wick_conv_shape_rows(const wick_conv_shape *s, int32_t y0,
                                                   int32_t y1) {
  wick_conv_shape r = *s;
  r.batch = 1;
  r.out_h = y1 - y0;
  r.pad_top = s->pad_top - y0 * s->stride_h;
  return r;
}

/* The same for TRANSPOSE_CONV, whose output rows play the part of a
 * convolution's input rows: output row y0 becomes row 0 by moving the
 * padding the other way. */
static inline wick_conv_shape wick_tconv_shape_rows(const wick_conv_shape *s, int32_t y0,
                                                    int32_t y1) {
  wick_conv_shape r = *s;
  r.batch = 1;
  r.out_h = y1 - y0;
  r.pad_top = s->pad_top + y0;
  return r;
}

static inline wick_pool_shape wick_pool_shape_rows(const wick_pool_shape *s, int32_t y0,
                                                   int32_t y1) {
  wick_pool_shape r = *s;
  r.batch = 1;
  r.out_h = y1 - y0;
  r.pad_top = s->pad_top - y0 * s->stride_h;
  return r;
}

#endif /* WICK_OPS_PARALLEL_H */
