/*
 * pool_2d_quantized.c — quantized AVERAGE_POOL_2D and MAX_POOL_2D (int8,
 * uint8, int16; NHWC).
 *
 * Reached from pool_2d.c when the input is a quantized activation. Pools
 * work on the quantized values directly: the output is meant to carry the
 * input's scale and zero point (LiteRT only asserts it in debug builds and
 * ignores the output's parameters except for the fused activation clamp,
 * which wick computes from the output's parameters as LiteRT does).
 * int8 runs wick_q8_pool (src/kernels/q8_pool.c: the same arithmetic, each
 * window walked once per pixel with the channels inner) unless the reference
 * kernels are forced. Output rows are split over the threads (ops/parallel.h)
 * as for float pools, so a huge pool also stops between row tasks when the
 * invoke is cancelled.
 * Next: src/kernels/reference/quantized.c.
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct qpool_data {
  wick_pool_shape shape;
  int32_t lo, hi;
} qpool_data;

wick_status wick_pool_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK(ctx, out->type == in->type, "output type %s differs from the input's %s",
             wick_dtype_name(out->type), wick_dtype_name(in->type));
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  const wick_pool_params *p = &ctx->params->pool;
  qpool_data *d = wick_op_alloc(ctx, sizeof *d);
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
  WICK_TRY(wick_quant_activation_range(ctx, p->activation, in->type, qo, &d->lo, &d->hi));
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->channels};
  wick_op_set_data(ctx, d);
  WICK_TRY(wick_op_set_output(ctx, 0, in->type, 4, dims));
  /* Work, as the float pool reports it: outputs x the in-input part of the
   * window (lets profilers and fuzzers see a legitimately heavy pool). */
  uint64_t wh = (uint64_t)(s->k_h < s->in_h ? s->k_h : s->in_h);
  uint64_t ww = (uint64_t)(s->k_w < s->in_w ? s->k_w : s->in_w);
  uint64_t taps = wh * ww, macs; /* each < 2^31: no overflow */
  if (__builtin_mul_overflow((uint64_t)wick_shape_elements(4, dims), taps, &macs))
    macs = UINT64_MAX;
  wick_op_set_macs(ctx, macs);
  /* wick_q8_pool's int32 accumulators: one row of channels per thread */
  size_t per_thread, scratch;
  if (!wick_mul_size((size_t)(s->channels > 0 ? s->channels : 1), sizeof(int32_t), &per_thread) ||
      !wick_mul_size(per_thread, wick_op_num_threads(ctx), &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  if (in->type == WICK_DTYPE_INT8 && !wick_op_force_reference(ctx)) /* wick_q8_pool */
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q8 pool");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(in->type));
  return WICK_OK;
}

typedef struct qpool_job {
  const qpool_data *d;
  bool is_max, optimized; /* optimized: int8 through wick_q8_pool */
  wick_dtype type;
  size_t esize;
  const uint8_t *in;
  uint8_t *out;
  int32_t *acc; /* channels int32 per thread */
} qpool_job;

/* Output rows [y0, y1) of image n (ops/parallel.h). */
static void qpool_rows(void *arg, int32_t n, int32_t y0, int32_t y1, size_t thread) {
  const qpool_job *j = arg;
  const wick_pool_shape *s = &j->d->shape;
  const wick_pool_shape r = wick_pool_shape_rows(s, y0, y1);
  const size_t pixel = (size_t)s->channels * j->esize; /* bytes */
  const uint8_t *in = j->in + (size_t)n * (size_t)s->in_h * (size_t)s->in_w * pixel;
  uint8_t *out = j->out + ((size_t)n * (size_t)s->out_h + (size_t)y0) * (size_t)s->out_w * pixel;
  if (j->optimized)
    wick_q8_pool(j->is_max, &r, (const int8_t *)in, (int8_t *)out, j->d->lo, j->d->hi,
                 j->acc + thread * (size_t)s->channels);
  else if (j->is_max)
    wick_q_max_pool__reference(j->type, &r, in, out, j->d->lo, j->d->hi);
  else
    wick_q_average_pool__reference(j->type, &r, in, out, j->d->lo, j->d->hi);
}

wick_status wick_pool_invoke_quantized(wick_op_ctx *ctx) {
  const qpool_data *d = wick_op_data(ctx);
  const wick_pool_shape *s = &d->shape;
  wick_tensor *in = wick_op_input(ctx, 0);
  qpool_job j;
  j.d = d;
  j.is_max = wick_op_builtin(ctx) == WICK_BUILTIN_MAX_POOL_2D;
  j.optimized = in->type == WICK_DTYPE_INT8 && !wick_op_force_reference(ctx);
  j.type = in->type;
  j.esize = wick_dtype_size(in->type);
  j.in = in->data;
  j.out = wick_op_output(ctx, 0)->data;
  j.acc = wick_op_scratch(ctx);
  uint64_t rows = (uint64_t)s->batch * (uint64_t)s->out_h;
  uint64_t per_row = rows ? wick_op_macs(ctx) / rows : 0;
  return wick_parallel_rows(ctx, s->batch, s->out_h, per_row,
                            wick_rows_splittable(s->in_h, s->out_h, s->stride_h, s->pad_top),
                            qpool_rows, &j);
}
