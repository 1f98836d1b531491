/*
 * pool_2d.c — AVERAGE_POOL_2D and MAX_POOL_2D (float32, NHWC; quantized inputs
 * go to pool_2d_quantized.c). Output rows are split over the interpreter's
 * threads (ops/parallel.h). The vectorized kernels (bit-identical to the
 * reference) run unless the reference kernels are forced.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct pool_data {
  wick_pool_shape shape;
  float lo, hi;
  wick_f32_pool_fn max_pool, average_pool; /* reference when NULL */
} pool_data;

static wick_status pool_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_pool_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_FLOAT32,
                       "input type %s: wick runs this op on float32 only so far",
                       wick_dtype_name(in->type));
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  const wick_pool_params *p = &ctx->params->pool;
  pool_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_pool_shape *s = &d->shape;
  s->batch = in->dims[0];
  s->in_h = in->dims[1];
  s->in_w = in->dims[2];
  s->channels = in->dims[3];
  s->k_h = p->filter_h;
  s->k_w = p->filter_w;
  s->stride_h = p->stride_h;
  s->stride_w = p->stride_w;
  WICK_TRY(wick_pool_spatial(ctx, p->padding, s));
  WICK_TRY(wick_activation_range_f32(ctx, p->activation, &d->lo, &d->hi));
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  d->max_pool = kern && kern->max_pool ? kern->max_pool : wick_f32_max_pool__reference;
  d->average_pool =
      kern && kern->average_pool ? kern->average_pool : wick_f32_average_pool__reference;
  const bool is_max = wick_op_builtin(ctx) == WICK_BUILTIN_MAX_POOL_2D;
  const bool optimized = is_max ? d->max_pool != wick_f32_max_pool__reference
                                : d->average_pool != wick_f32_average_pool__reference;
  wick_op_set_kernel(ctx, optimized ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_REFERENCE, NULL);
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->channels};
  wick_op_set_data(ctx, d);
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 4, dims));
  /* Work, for profiling and for callers that bound cost: each output visits
   * the part of its window inside the input (at most k x in per axis). The
   * element count is capped by set_output; saturate the product. */
  uint64_t wh = (uint64_t)(s->k_h < s->in_h ? s->k_h : s->in_h);
  uint64_t ww = (uint64_t)(s->k_w < s->in_w ? s->k_w : s->in_w);
  uint64_t taps = wh * ww, macs; /* each < 2^31: no overflow */
  if (__builtin_mul_overflow((uint64_t)wick_shape_elements(4, dims), taps, &macs))
    macs = UINT64_MAX;
  wick_op_set_macs(ctx, macs);
  return WICK_OK;
}

typedef struct pool_job {
  const pool_data *d;
  bool is_max;
  const float *in;
  float *out;
} pool_job;

/* Output rows [y0, y1) of image n (ops/parallel.h). */
static void pool_rows(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread) {
  (void)thread;
  const pool_job *j = arg;
  const wick_pool_shape *s = &j->d->shape;
  const wick_pool_shape r = wick_pool_shape_rows(s, y0, y1);
  const float *in = j->in + (int64_t)n * s->in_h * s->in_w * s->channels;
  float *out = j->out + ((int64_t)n * s->out_h + y0) * s->out_w * s->channels;
  (j->is_max ? j->d->max_pool : j->d->average_pool)(&r, in, out, j->d->lo, j->d->hi);
}

static wick_status pool_run(wick_op_ctx *ctx, bool is_max) {
  const pool_data *d = wick_op_data(ctx);
  const wick_pool_shape *s = &d->shape;
  pool_job j = {d, is_max, wick_op_input(ctx, 0)->data, wick_op_output(ctx, 0)->data};
  uint64_t rows = (uint64_t)s->batch * (uint64_t)s->out_h;
  uint64_t per_row = rows ? wick_op_macs(ctx) / rows : 0;
  return wick_parallel_rows(ctx, s->batch, s->out_h, per_row,
                            wick_rows_splittable(s->in_h, s->out_h, s->stride_h, s->pad_top),
                            pool_rows, &j);
}

static wick_status average_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_pool_invoke_quantized(ctx);
  return pool_run(ctx, false);
}

static wick_status max_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_pool_invoke_quantized(ctx);
  return pool_run(ctx, true);
}

const wick_op_def wick_op_average_pool_2d = {
    "AVERAGE_POOL_2D", WICK_BUILTIN_AVERAGE_POOL_2D, 3, pool_prepare, average_invoke, 0};
const wick_op_def wick_op_max_pool_2d = {
    "MAX_POOL_2D", WICK_BUILTIN_MAX_POOL_2D, 3, pool_prepare, max_invoke, 0};
