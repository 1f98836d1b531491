/*
 * conv_3d.c — CONV_3D and CONV_3D_TRANSPOSE (float32, NDHWC, as LiteRT).
 *
 *   CONV_3D(input [N,D,H,W,Cin], filter [kd,kh,kw,Cin,Cout], bias [Cout]?)
 *       -> [N, oD, oH, oW, Cout]; strides, dilations and SAME/VALID padding per
 *       spatial axis (the same formula as CONV_2D), a fused activation. No
 *       groups: the filter's input channels equal the input's.
 *   CONV_3D_TRANSPOSE(output_shape int32 [5], filter [kd,kh,kw,Cout,Cin],
 *       input [N,D,H,W,Cin], bias [Cout]?) -> output_shape. The padding is that
 *       of the forward conv mapping the output back to the input; as for
 *       TRANSPOSE_CONV, wick requires output_shape to be consistent (batch,
 *       channels, and a forward conv of the output giving exactly the input's
 *       D x H x W). A run-time output_shape defers the op to invoke.
 *
 * CONV_3D splits its output depth planes over the threads (ops/parallel.h's
 * row split, one plane per row), so a huge one also stops between planes
 * when the invoke is cancelled; CONV_3D_TRANSPOSE scatters every input
 * pixel into overlapping output planes and runs as one call.
 *
 * Next: src/kernels/reference/conv3d.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/movement.h"
#include "ops/parallel.h"

typedef struct conv3d_data {
  wick_conv3d_shape shape;
  float lo, hi;
} conv3d_data;

/* The checks both ops share; fills the data's strides, dilations, kernel
 * size and activation range. */
static wick_status conv3d_common(wick_op_ctx *ctx, const wick_tensor *in, const wick_tensor *filter,
                                 const wick_tensor *bias, int32_t out_c, conv3d_data **out) {
  WICK_TRY(wick_require_float32(ctx, in, "the input"));
  WICK_TRY(wick_require_float32(ctx, filter, "the filter"));
  if (bias) WICK_TRY(wick_require_float32(ctx, bias, "the bias"));
  WICK_CHECK(ctx, in->rank == 5, "input must have rank 5 (NDHWC), not %d", in->rank);
  WICK_CHECK(ctx, filter->rank == 5, "filter must have rank 5, not %d", filter->rank);
  WICK_TRY(wick_check_bias_length(ctx, bias, out_c));
  const wick_conv_params *p = &ctx->params->conv;
  conv3d_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_activation_range_f32(ctx, p->activation, &d->lo, &d->hi));
  wick_conv3d_shape *s = &d->shape;
  s->batch = in->dims[0];
  s->in_d = in->dims[1];
  s->in_h = in->dims[2];
  s->in_w = in->dims[3];
  s->in_c = in->dims[4];
  s->out_c = out_c;
  s->k_d = filter->dims[0];
  s->k_h = filter->dims[1];
  s->k_w = filter->dims[2];
  s->stride_d = p->stride_d;
  s->stride_h = p->stride_h;
  s->stride_w = p->stride_w;
  s->dilation_d = p->dilation_d;
  s->dilation_h = p->dilation_h;
  s->dilation_w = p->dilation_w;
  wick_op_set_data(ctx, d);
  *out = d;
  return WICK_OK;
}

/* The output size and leading padding of the forward conv on each spatial
 * axis (depth, height, width). CONV_3D: from the input's size. The
 * transpose (`transposed`): the forward conv maps the op's output back to its
 * input, so the output's size (from output_shape) must give exactly the
 * input's. */
static wick_status conv3d_spatial(const wick_op_ctx *ctx, wick_conv3d_shape *s, bool transposed) {
  static const char *const axis[3] = {"depth", "height", "width"};
  int32_t *in_sp[3] = {&s->in_d, &s->in_h, &s->in_w};
  int32_t *out_sp[3] = {&s->out_d, &s->out_h, &s->out_w};
  int32_t *pads[3] = {&s->pad_front, &s->pad_top, &s->pad_left};
  const int32_t k[3] = {s->k_d, s->k_h, s->k_w}, st[3] = {s->stride_d, s->stride_h, s->stride_w};
  const int32_t dl[3] = {s->dilation_d, s->dilation_h, s->dilation_w};
  const wick_padding pad = ctx->params->conv.padding;
  for (int i = 0; i < 3; i++) {
    if (!transposed) {
      WICK_TRY(wick_conv_output_size(ctx, pad, *in_sp[i], k[i], st[i], dl[i], out_sp[i], pads[i]));
      continue;
    }
    int32_t fwd;
    WICK_TRY(wick_conv_output_size(ctx, pad, *out_sp[i], k[i], st[i], dl[i], &fwd, pads[i]));
    WICK_CHECK_VALUE(ctx, fwd == *in_sp[i],
                     "output %s %d does not map back to the input's %d with this filter, stride "
                     "and padding",
                     axis[i], *out_sp[i], *in_sp[i]);
  }
  return WICK_OK;
}

/* Multiply-accumulates, saturating (a mutant may ask for absurd sizes). */
static uint64_t count_macs(int64_t a, int64_t b, int64_t c) {
  uint64_t r;
  if (__builtin_mul_overflow((uint64_t)a, (uint64_t)b, &r) ||
      __builtin_mul_overflow(r, (uint64_t)c, &r))
    return UINT64_MAX;
  return r;
}

static wick_status conv3d_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 3, 1));
  wick_tensor *in, *filter;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  wick_tensor *bias = wick_op_input(ctx, 2);
  WICK_CHECK(ctx, filter->rank == 5, "filter must have rank 5, not %d", filter->rank);
  conv3d_data *d;
  WICK_TRY(conv3d_common(ctx, in, filter, bias, filter->dims[4], &d));
  wick_conv3d_shape *s = &d->shape;
  WICK_CHECK(ctx, filter->dims[3] == s->in_c,
             "filter has %d input channels but the input has %d (grouped 3-D convolution is "
             "not a TFLite op)",
             filter->dims[3], s->in_c);
  WICK_TRY(conv3d_spatial(ctx, s, false));
  int32_t dims[5] = {s->batch, s->out_d, s->out_h, s->out_w, s->out_c};
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 5, dims));
  wick_op_set_macs(ctx, count_macs(wick_shape_elements(5, dims), (int64_t)s->k_d * s->k_h * s->k_w,
                                   s->in_c));
  return WICK_OK;
}

typedef struct conv3d_job {
  const conv3d_data *d;
  const float *in, *filter, *bias;
  float *out;
} conv3d_job;

/* Output depth planes [z0, z1) of image n: the reference kernel on the
 * sub-shape of those planes (batch 1, the front padding moved by z0 planes). */
static void conv3d_planes(void *arg, int32_t n, int32_t z0, int32_t z1, size_t thread) {
  (void)thread;
  const conv3d_job *j = arg;
  const wick_conv3d_shape *s = &j->d->shape;
  wick_conv3d_shape r = *s;
  r.batch = 1;
  r.out_d = z1 - z0;
  r.pad_front = s->pad_front - z0 * s->stride_d;
  const size_t in_image = (size_t)s->in_d * (size_t)s->in_h * (size_t)s->in_w * (size_t)s->in_c;
  const size_t out_plane = (size_t)s->out_h * (size_t)s->out_w * (size_t)s->out_c;
  wick_f32_conv3d__reference(&r, j->in + (size_t)n * in_image, j->filter, j->bias,
                             j->out + ((size_t)n * (size_t)s->out_d + (size_t)z0) * out_plane,
                             j->d->lo, j->d->hi);
}

static wick_status conv3d_invoke(wick_op_ctx *ctx) {
  const conv3d_data *d = wick_op_data(ctx);
  const wick_conv3d_shape *s = &d->shape;
  const wick_tensor *bias = wick_op_input(ctx, 2);
  conv3d_job j = {d, wick_op_input(ctx, 0)->data, wick_op_input(ctx, 1)->data,
                  bias ? bias->data : NULL, wick_op_output(ctx, 0)->data};
  uint64_t planes = (uint64_t)s->batch * (uint64_t)s->out_d;
  uint64_t per_plane = planes ? wick_op_macs(ctx) / planes : 0;
  return wick_parallel_rows(ctx, s->batch, s->out_d, per_plane,
                            wick_rows_splittable(s->in_d, s->out_d, s->stride_d, s->pad_front),
                            conv3d_planes, &j);
}

static wick_status conv3d_transpose_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 4, 1));
  wick_tensor *oshape, *filter, *in;
  WICK_TRY(wick_require_input(ctx, 0, &oshape));
  WICK_TRY(wick_require_input(ctx, 1, &filter));
  WICK_TRY(wick_require_input(ctx, 2, &in));
  wick_tensor *bias = wick_op_input(ctx, 3);
  WICK_CHECK(ctx, oshape->type == WICK_DTYPE_INT32, "output_shape must be int32, not %s",
             wick_dtype_name(oshape->type));
  WICK_CHECK(ctx, oshape->rank == 1 && oshape->dims[0] == 5,
             "output_shape must be a 1-D tensor of 5 values");
  WICK_CHECK(ctx, filter->rank == 5, "filter must have rank 5, not %d", filter->rank);
  conv3d_data *d;
  WICK_TRY(conv3d_common(ctx, in, filter, bias, filter->dims[3], &d));
  wick_conv3d_shape *s = &d->shape;
  WICK_CHECK(ctx, filter->dims[4] == s->in_c, "filter has %d input channels but the input has %d",
             filter->dims[4], s->in_c);
  if (movement_unknown(ctx, oshape)) return WICK_STATUS_DEFER;
  int32_t dims[5];
  for (int32_t i = 0; i < 5; i++) {
    int64_t v = wick_read_int(oshape, i);
    WICK_CHECK_VALUE(ctx, v >= 0 && v <= INT32_MAX, "output_shape[%d] = %lld is not a valid size",
                     i, (long long)v);
    dims[i] = (int32_t)v;
  }
  WICK_CHECK_VALUE(ctx, dims[0] == s->batch, "output_shape has batch %d but the input has %d",
                   dims[0], s->batch);
  WICK_CHECK_VALUE(ctx, dims[4] == s->out_c,
                   "output_shape has %d channels but the filter has %d output channels", dims[4],
                   s->out_c);
  s->out_d = dims[1];
  s->out_h = dims[2];
  s->out_w = dims[3];
  WICK_TRY(conv3d_spatial(ctx, s, true));
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 5, dims));
  wick_op_set_macs(ctx, count_macs(wick_tensor_elements(in), (int64_t)s->k_d * s->k_h * s->k_w,
                                   s->out_c));
  return WICK_OK;
}

static wick_status conv3d_transpose_invoke(wick_op_ctx *ctx) {
  const conv3d_data *d = wick_op_data(ctx);
  const wick_tensor *bias = wick_op_input(ctx, 3);
  wick_f32_conv3d_transpose__reference(&d->shape, wick_op_input(ctx, 2)->data,
                                       wick_op_input(ctx, 1)->data, bias ? bias->data : NULL,
                                       wick_op_output(ctx, 0)->data, d->lo, d->hi);
  return WICK_OK;
}

const wick_op_def wick_op_conv_3d = {"CONV_3D",     WICK_BUILTIN_CONV_3D,     1, conv3d_prepare,
                                     conv3d_invoke, WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_conv_3d_transpose = {
    "CONV_3D_TRANSPOSE",      WICK_BUILTIN_CONV_3D_TRANSPOSE, 1,
    conv3d_transpose_prepare, conv3d_transpose_invoke,        WICK_OP_REFERENCE_KERNELS};
