/*
 * resize.c — RESIZE_BILINEAR (float32; quantized inputs go to
 * resize_quantized.c) and RESIZE_NEAREST_NEIGHBOR (float32,
 * int8/16/32/64, uint8, bool: it only copies pixels, so quantized tensors
 * pass through with their parameters).
 *
 * Inputs: the image [N, H, W, C] and the size (int32 [2]: new height, width).
 * Options align_corners and half_pixel_centers (RESIZE_BILINEAR refuses both
 * at once, as LiteRT does). The size is data: when it is not a constant the
 * node is prepared again at invoke. Sizes must be positive, and a non-empty
 * output needs a non-empty image to sample from.
 *
 * Next: src/kernels/reference/resize.c (the coordinate formulas).
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

/* The shape, and the vector bilinear rows (NULL: the reference's). */
typedef struct resize_data {
  wick_resize_shape shape;
  wick_f32_resize_bilinear_fn bilinear;
} resize_data;

static wick_status resize_prepare(wick_op_ctx *ctx) {
  if (wick_op_builtin(ctx) == WICK_BUILTIN_RESIZE_BILINEAR && wick_quant_routed(ctx, 0))
    return wick_resize_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *size;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &size));
  bool bilinear = wick_op_builtin(ctx) == WICK_BUILTIN_RESIZE_BILINEAR;
  wick_dtype t = in->type;
  if (bilinear) {
    WICK_CHECK_SUPPORTED(ctx, t == WICK_DTYPE_FLOAT32,
                         "input type %s: wick runs RESIZE_BILINEAR on float32 only so far",
                         wick_dtype_name(t));
    WICK_CHECK(ctx, !(ctx->params->align_corners && ctx->params->half_pixel_centers),
               "align_corners and half_pixel_centers cannot both be set");
  } else {
    WICK_CHECK_SUPPORTED(ctx,
                         t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 ||
                             t == WICK_DTYPE_INT16 || t == WICK_DTYPE_INT32 ||
                             t == WICK_DTYPE_INT64 || t == WICK_DTYPE_BOOL,
                         "input type %s is not supported", wick_dtype_name(t));
  }
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  WICK_CHECK(ctx, size->type == WICK_DTYPE_INT32, "size must be int32, not %s",
             wick_dtype_name(size->type));
  WICK_CHECK(ctx, size->rank == 1 && size->dims[0] == 2,
             "size must be a 1-D tensor of 2 values (height, width)");
  if (!size->known && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  const int32_t *hw = size->data;
  wick_status bad = size->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  if (hw[0] <= 0 || hw[1] <= 0)
    return wick_op_fail(ctx, bad, "size %dx%d must be positive", hw[0], hw[1]);
  resize_data *r = wick_op_alloc(ctx, sizeof *r);
  if (r == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_resize_shape *s = &r->shape;
  s->batch = in->dims[0];
  s->in_h = in->dims[1];
  s->in_w = in->dims[2];
  s->channels = in->dims[3];
  s->out_h = hw[0];
  s->out_w = hw[1];
  s->align_corners = ctx->params->align_corners;
  s->half_pixel_centers = ctx->params->half_pixel_centers;
  if (s->batch > 0 && s->channels > 0)
    WICK_CHECK(ctx, s->in_h > 0 && s->in_w > 0, "cannot resize an empty %dx%d image to %dx%d",
               s->in_h, s->in_w, s->out_h, s->out_w);
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->channels};
  WICK_TRY(wick_op_set_output(ctx, 0, t, 4, dims));
  wick_op_set_data(ctx, r);
  /* bilinear split over output rows (vector rows where the CPU has them), nearest a copy per
   * pixel */
  const wick_f32_kernels *k =
      bilinear ? wick_f32_kernels_select(wick_op_force_reference(ctx)) : NULL;
  r->bilinear = k != NULL ? k->resize_bilinear : NULL;
  wick_op_set_kernel(ctx, r->bilinear != NULL ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_REFERENCE,
                     bilinear ? "rows" : NULL);
  return WICK_OK;
}

typedef struct bilinear_job {
  const resize_data *r;
  const float *in;
  float *out;
} bilinear_job;

static void bilinear_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const bilinear_job *j = arg;
  if (j->r->bilinear != NULL)
    j->r->bilinear(&j->r->shape, j->in, j->out, (int64_t)begin, (int64_t)end);
  else
    wick_f32_resize_bilinear_rows__reference(&j->r->shape, j->in, j->out, (int64_t)begin,
                                             (int64_t)end);
}

/* Float: output rows split over the threads (each row's values do not depend on the split). */
static wick_status bilinear_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_resize_invoke_quantized(ctx);
  const resize_data *r = wick_op_data(ctx);
  const wick_resize_shape *s = &r->shape;
  bilinear_job j = {r, wick_op_input(ctx, 0)->data, wick_op_output(ctx, 0)->data};
  const uint64_t work_per_row = (uint64_t)s->out_w * (uint64_t)s->channels * 4;
  return wick_parallel_range(ctx, (size_t)s->batch * (size_t)s->out_h, work_per_row, bilinear_rows,
                             &j);
}

static wick_status nearest_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0);
  const resize_data *r = wick_op_data(ctx);
  wick_resize_nearest__reference(&r->shape, wick_dtype_size(in->type), in->data,
                                 wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

const wick_op_def wick_op_resize_bilinear = {
    "RESIZE_BILINEAR", WICK_BUILTIN_RESIZE_BILINEAR, 4, resize_prepare, bilinear_invoke, 0};
const wick_op_def wick_op_resize_nearest_neighbor = {"RESIZE_NEAREST_NEIGHBOR",
                                                     WICK_BUILTIN_RESIZE_NEAREST_NEIGHBOR,
                                                     4,
                                                     resize_prepare,
                                                     nearest_invoke,
                                                     0};
