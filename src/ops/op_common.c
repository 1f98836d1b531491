/*
 * op_common.c — implementations of the shared operator helpers (op_common.h).
 */
#include "ops/op_common.h"

#include "ops/parallel.h"

#include <stdio.h>

#include <inttypes.h>

wick_status wick_check_arity(const wick_op_ctx *ctx, size_t min_in, size_t max_in, size_t n_out) {
  size_t ni = wick_op_num_inputs(ctx), no = wick_op_num_outputs(ctx);
  WICK_CHECK(ctx, ni >= min_in && ni <= max_in, "takes %zu..%zu inputs, the file gives %zu", min_in,
             max_in, ni);
  WICK_CHECK(ctx, no == n_out, "has %zu outputs, the file gives %zu", n_out, no);
  return WICK_OK;
}

wick_status wick_require_input(const wick_op_ctx *ctx, size_t i, wick_tensor **out) {
  *out = wick_op_input(ctx, i);
  WICK_CHECK(ctx, *out != NULL, "input %zu is required but absent", i);
  return WICK_OK;
}

bool wick_input_known(const wick_op_ctx *ctx, size_t i) {
  wick_tensor *t = wick_op_input(ctx, i);
  return t != NULL && t->known && t->data != NULL;
}

static void shape_string(const wick_tensor *t, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  n += (size_t)snprintf(buf + n, size - n, "[");
  for (int32_t i = 0; i < t->rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, i ? ",%d" : "%d", t->dims[i]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

wick_status wick_broadcast_shapes(const wick_op_ctx *ctx, const wick_tensor *a,
                                  const wick_tensor *b, int32_t *rank_out, int32_t *dims_out) {
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  for (int32_t i = 0; i < rank; i++) {
    int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char sa[96], sb[96];
      shape_string(a, sa, sizeof sa);
      shape_string(b, sb, sizeof sb);
      return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "shapes %s and %s do not broadcast", sa,
                          sb);
    }
    dims_out[i] = da == 1 ? db : da;
  }
  *rank_out = rank;
  return WICK_OK;
}

void wick_broadcast_strides(const wick_tensor *t, int32_t rank, const int32_t *out_dims,
                            int64_t *strides) {
  (void)out_dims;
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; i--) {
    int32_t it = i - (rank - t->rank);
    int32_t d = it >= 0 ? t->dims[it] : 1;
    strides[i] = d == 1 ? 0 : s; /* a size-1 dim repeats: stride 0 */
    s *= d;
  }
}

wick_status wick_normalize_axis(const wick_op_ctx *ctx, int64_t axis, int32_t rank, int32_t *out) {
  int64_t a = axis < 0 ? axis + rank : axis;
  WICK_CHECK(ctx, a >= 0 && a < (rank > 0 ? rank : 1), "axis %" PRId64 " is outside rank %d", axis,
             rank);
  *out = (int32_t)a;
  return WICK_OK;
}

wick_status wick_conv_output_size(const wick_op_ctx *ctx, wick_padding padding, int32_t in,
                                  int32_t filter, int32_t stride, int32_t dilation, int32_t *out,
                                  int32_t *pad_before) {
  WICK_CHECK(ctx, stride > 0, "stride %d must be positive", stride);
  WICK_CHECK(ctx, dilation > 0, "dilation %d must be positive", dilation);
  WICK_CHECK(ctx, filter > 0, "filter size %d must be positive", filter);
  int64_t eff = (int64_t)(filter - 1) * dilation + 1;
  int64_t o;
  if (padding == WICK_PADDING_SAME) {
    o = ((int64_t)in + stride - 1) / stride;
    int64_t total = (o - 1) * stride + eff - in;
    if (total < 0) total = 0;
    *pad_before = (int32_t)(total / 2);
  } else if (padding == WICK_PADDING_VALID) {
    o = in >= eff ? (in - eff) / stride + 1 : 0;
    *pad_before = 0;
  } else {
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "unknown padding %d", (int)padding);
  }
  WICK_CHECK(ctx, o <= INT32_MAX, "output size overflows");
  *out = (int32_t)o;
  return WICK_OK;
}

/* One dimension of wick_conv_spatial: `before`/`after` are a folded PAD's counts. */
static wick_status conv_dimension(const wick_op_ctx *ctx, wick_padding padding, int32_t in,
                                  int32_t before, int32_t after, int32_t filter, int32_t stride,
                                  int32_t dilation, int32_t *out, int32_t *pad_before) {
  int64_t padded = (int64_t)in + before + after;
  WICK_CHECK(ctx, padded <= INT32_MAX, "padded input size overflows");
  int32_t own = 0;
  WICK_TRY(
      wick_conv_output_size(ctx, padding, (int32_t)padded, filter, stride, dilation, out, &own));
  WICK_CHECK(ctx, (int64_t)own + before <= INT32_MAX, "padding overflows");
  *pad_before = own + before;
  return WICK_OK;
}

wick_status wick_conv_spatial(const wick_op_ctx *ctx, wick_padding padding, wick_conv_shape *s) {
  const int32_t *pad = wick_op_fusion(ctx)->pad; /* top, bottom, left, right; zeros if none */
  WICK_TRY(conv_dimension(ctx, padding, s->in_h, pad[0], pad[1], s->k_h, s->stride_h, s->dilation_h,
                          &s->out_h, &s->pad_top));
  return conv_dimension(ctx, padding, s->in_w, pad[2], pad[3], s->k_w, s->stride_w, s->dilation_w,
                        &s->out_w, &s->pad_left);
}

wick_status wick_pool_spatial(const wick_op_ctx *ctx, wick_padding padding, wick_pool_shape *s) {
  const int32_t *pad = wick_op_fusion(ctx)->pad; /* a folded PAD: MAX_POOL_2D only (fuse.c) */
  WICK_TRY(conv_dimension(ctx, padding, s->in_h, pad[0], pad[1], s->k_h, s->stride_h, 1, &s->out_h,
                          &s->pad_top));
  return conv_dimension(ctx, padding, s->in_w, pad[2], pad[3], s->k_w, s->stride_w, 1, &s->out_w,
                        &s->pad_left);
}

wick_status wick_require_float32(const wick_op_ctx *ctx, const wick_tensor *t, const char *what) {
  WICK_CHECK_SUPPORTED(ctx, t->type == WICK_DTYPE_FLOAT32,
                       "%s has type %s; wick runs this op on float32 only so far", what,
                       wick_dtype_name(t->type));
  return WICK_OK;
}

wick_status wick_check_bias_length(const wick_op_ctx *ctx, const wick_tensor *bias, int32_t out_c) {
  if (bias)
    WICK_CHECK(ctx, wick_tensor_elements(bias) == out_c,
               "bias has %lld elements for %d output channels",
               (long long)wick_tensor_elements(bias), out_c);
  return WICK_OK;
}

/* The sizes every 2-D conv shape takes from an NHWC input and an [_, kh, kw, _]
 * filter, and the strides and dilations of the op's options. */
static void conv2d_fill_sizes(const wick_op_ctx *ctx, const wick_tensor *in,
                              const wick_tensor *filter, wick_conv_shape *s) {
  const wick_conv_params *p = &ctx->params->conv;
  s->batch = in->dims[0];
  s->in_h = in->dims[1];
  s->in_w = in->dims[2];
  s->in_c = in->dims[3];
  s->k_h = filter->dims[1];
  s->k_w = filter->dims[2];
  s->stride_h = p->stride_h;
  s->stride_w = p->stride_w;
  s->dilation_h = p->dilation_h;
  s->dilation_w = p->dilation_w;
}

wick_status wick_conv2d_geometry(const wick_op_ctx *ctx, const wick_tensor *in,
                                 const wick_tensor *filter, const wick_tensor *bias, bool depthwise,
                                 wick_conv_shape *s) {
  const wick_conv_params *p = &ctx->params->conv;
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  WICK_CHECK(ctx, filter->rank == 4, "filter must have rank 4, not %d", filter->rank);
  conv2d_fill_sizes(ctx, in, filter, s);
  if (depthwise) {
    WICK_CHECK(ctx, filter->dims[0] == 1, "depthwise filter must be [1, H, W, C*M]");
    s->out_c = filter->dims[3];
    WICK_CHECK(ctx, s->in_c > 0 && s->out_c % s->in_c == 0,
               "filter depth %d is not a multiple of the input depth %d", s->out_c, s->in_c);
    s->multiplier = s->out_c / s->in_c;
    s->groups = s->in_c;
  } else {
    s->out_c = filter->dims[0];
    int32_t fc = filter->dims[3];
    /* in_c > 0 too: an empty input depth would make zero groups (a division by zero below). */
    WICK_CHECK(ctx, fc > 0 && s->in_c > 0 && s->in_c % fc == 0,
               "input depth %d is not a positive multiple of the filter depth %d", s->in_c, fc);
    s->groups = s->in_c / fc;
    WICK_CHECK(ctx, s->out_c % s->groups == 0, "%d output channels do not split into %d groups",
               s->out_c, s->groups);
    s->multiplier = 1;
  }
  WICK_TRY(wick_check_bias_length(ctx, bias, s->out_c));
  return wick_conv_spatial(ctx, p->padding, s);
}

wick_status wick_conv2d_set_output(const wick_op_ctx *ctx, const wick_conv_shape *s, bool depthwise,
                                   wick_dtype type) {
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->out_c};
  WICK_TRY(wick_op_set_output(ctx, 0, type, 4, dims));
  int64_t taps = (int64_t)s->k_h * s->k_w * (depthwise ? 1 : s->in_c / s->groups);
  wick_op_set_macs(ctx, (uint64_t)wick_shape_elements(4, dims) * (uint64_t)taps);
  return WICK_OK;
}

wick_status wick_tconv_geometry(const wick_op_ctx *ctx, const wick_tensor *oshape,
                                const wick_tensor *filter, const wick_tensor *in,
                                wick_conv_shape *s) {
  WICK_CHECK(ctx, in->rank == 4, "input must have rank 4 (NHWC), not %d", in->rank);
  WICK_CHECK(ctx, filter->rank == 4, "weights must have rank 4 (OHWI), not %d", filter->rank);
  if (oshape != NULL) {
    WICK_CHECK(ctx, oshape->type == WICK_DTYPE_INT32, "output_shape must be int32, not %s",
               wick_dtype_name(oshape->type));
    WICK_CHECK(ctx, oshape->rank == 1 && oshape->dims[0] == 4,
               "output_shape must be a 1-D tensor of 4 values");
  }
  WICK_CHECK(ctx, filter->dims[3] == in->dims[3],
             "weights have %d input channels but the input has %d", filter->dims[3], in->dims[3]);
  const wick_conv_params *p = &ctx->params->conv;
  WICK_CHECK(ctx, p->stride_h > 0 && p->stride_w > 0, "strides %d x %d must be positive",
             p->stride_h, p->stride_w);
  conv2d_fill_sizes(ctx, in, filter, s);
  s->out_c = filter->dims[0];
  s->dilation_h = s->dilation_w = 1; /* TRANSPOSE_CONV has no dilation option */
  s->groups = s->multiplier = 1;
  return WICK_OK;
}

wick_status wick_tconv_output(const wick_op_ctx *ctx, const wick_tensor *oshape,
                              const wick_tensor *in, wick_dtype type, wick_conv_shape *s) {
  if (!oshape->known && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  const wick_status bad = oshape->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  return wick_tconv_output_dims(ctx, oshape->data, bad, in, type, s);
}

wick_status wick_tconv_output_dims(const wick_op_ctx *ctx, const int32_t *want, wick_status bad,
                                   const wick_tensor *in, wick_dtype type, wick_conv_shape *s) {
  const wick_conv_params *p = &ctx->params->conv;
  int32_t implied[4];
  if (want == NULL) {
    int64_t h = p->padding == WICK_PADDING_SAME ? (int64_t)s->in_h * s->stride_h
                                                : ((int64_t)s->in_h - 1) * s->stride_h + s->k_h;
    int64_t w = p->padding == WICK_PADDING_SAME ? (int64_t)s->in_w * s->stride_w
                                                : ((int64_t)s->in_w - 1) * s->stride_w + s->k_w;
    WICK_CHECK(ctx, h >= 0 && h <= INT32_MAX && w >= 0 && w <= INT32_MAX,
               "output size overflows (input %dx%d, strides %dx%d)", s->in_h, s->in_w, s->stride_h,
               s->stride_w);
    if (s->in_h == 0) h = 0; /* an empty input maps to an empty output */
    if (s->in_w == 0) w = 0;
    implied[0] = s->batch;
    implied[1] = (int32_t)h;
    implied[2] = (int32_t)w;
    implied[3] = s->out_c;
    want = implied;
  }
  if (want[0] != s->batch || want[3] != s->out_c)
    return wick_op_fail(ctx, bad,
                        "output_shape [%d,%d,%d,%d] disagrees with batch %d and %d output "
                        "channels",
                        want[0], want[1], want[2], want[3], s->batch, s->out_c);
  if (want[1] < 0 || want[2] < 0)
    return wick_op_fail(ctx, bad, "output_shape [%d,%d,%d,%d] has a negative dimension", want[0],
                        want[1], want[2], want[3]);
  s->out_h = want[1];
  s->out_w = want[2];
  int32_t fwd_h, fwd_w;
  WICK_TRY(wick_conv_output_size(ctx, p->padding, s->out_h, s->k_h, s->stride_h, 1, &fwd_h,
                                 &s->pad_top));
  WICK_TRY(wick_conv_output_size(ctx, p->padding, s->out_w, s->k_w, s->stride_w, 1, &fwd_w,
                                 &s->pad_left));
  if (fwd_h != s->in_h || fwd_w != s->in_w)
    return wick_op_fail(ctx, bad,
                        "output_shape %dx%d does not match the input %dx%d: a %s conv with a "
                        "%dx%d filter and strides %dx%d maps it to %dx%d",
                        s->out_h, s->out_w, s->in_h, s->in_w,
                        p->padding == WICK_PADDING_SAME ? "SAME" : "VALID", s->k_h, s->k_w,
                        s->stride_h, s->stride_w, fwd_h, fwd_w);
  int32_t dims[4] = {s->batch, s->out_h, s->out_w, s->out_c};
  WICK_TRY(wick_op_set_output(ctx, 0, type, 4, dims));
  wick_op_set_macs(ctx, (uint64_t)wick_tensor_elements(in) * (uint64_t)s->out_c * (uint64_t)s->k_h *
                            (uint64_t)s->k_w);
  return WICK_OK;
}

wick_status wick_activation_range_f32(const wick_op_ctx *ctx, wick_activation act, float *lo,
                                      float *hi) {
  switch (act) {
    case WICK_ACT_NONE:
    case WICK_ACT_TANH: /* ignored by conv/elementwise kernels, as in LiteRT */
    case WICK_ACT_SIGN_BIT:
      *lo = -INFINITY;
      *hi = INFINITY;
      return WICK_OK;
    case WICK_ACT_RELU:
      *lo = 0.0f;
      *hi = INFINITY;
      return WICK_OK;
    case WICK_ACT_RELU_N1_TO_1:
      *lo = -1.0f;
      *hi = 1.0f;
      return WICK_OK;
    case WICK_ACT_RELU6:
      *lo = 0.0f;
      *hi = 6.0f;
      return WICK_OK;
  }
  return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "unknown fused activation %d", (int)act);
}

bool wick_op_fused_epilogue(const wick_op_ctx *ctx, wick_f32_epilogue *ep) {
  memset(ep, 0, sizeof *ep);
  const wick_node_fusion *fu = wick_op_fusion(ctx);
  if (fu->activation == 0 && fu->residual == 0 && fu->prelu == 0) return false;
  /* fusion runs only when optimized kernels exist (interpreter.c) */
  const wick_f32_kernels *k = wick_f32_kernels_select(false);
  if (k == NULL) return false;
  if (fu->activation > 0) ep->act = k->unary[fu->activation - 1];
  if (fu->residual > 0) {
    ep->residual = wick_op_graph_tensor(ctx, fu->residual - 1)->data;
    ep->add = k->binary[WICK_F32_ADD][WICK_F32_VV];
    ep->lo = fu->lo;
    ep->hi = fu->hi;
  }
  if (fu->prelu > 0) {
    const wick_tensor *alpha = wick_op_graph_tensor(ctx, fu->prelu - 1);
    ep->alpha = alpha->data;
    ep->channels = (size_t)alpha->dims[alpha->rank - 1];
    ep->prelu = k->prelu;
  }
  return true;
}

typedef struct epilogue_job {
  wick_f32_epilogue ep;
  float *out;
} epilogue_job;

static void epilogue_elements(void *arg, size_t e0, size_t e1) {
  const epilogue_job *j = arg;
  wick_f32_epilogue_run(&j->ep, 1, e1 - e0, j->out + e0, e1 - e0, e0);
}

wick_status wick_op_run_fused_epilogue(const wick_op_ctx *ctx) {
  epilogue_job j;
  if (!wick_op_fused_epilogue(ctx, &j.ep)) return WICK_OK;
  wick_tensor *o = wick_op_output(ctx, 0);
  j.out = o->data;
  return wick_parallel_elements(ctx, (size_t)wick_tensor_elements(o), epilogue_elements, &j);
}

wick_status wick_op_flex_options(const wick_op_ctx *ctx, wick_flex_map *m) {
  size_t size;
  const uint8_t *bytes = wick_op_custom_options(ctx, &size);
  const wick_flex_status st = wick_flex_root_map(bytes, size, m);
  if (st == WICK_FLEX_WRONG_TYPE)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "custom_options must be a FlexBuffers map");
  if (st != WICK_FLEX_OK)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "custom_options (%zu bytes) are not a well-formed FlexBuffers map", size);
  return WICK_OK;
}

wick_status wick_op_flex_fail(const wick_op_ctx *ctx, const char *key, wick_flex_status st) {
  if (st == WICK_FLEX_ABSENT)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "custom_options lack \"%s\"", key);
  if (st == WICK_FLEX_WRONG_TYPE)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "custom_options \"%s\" is not a number of the expected kind", key);
  return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                      "custom_options are malformed FlexBuffers (reading \"%s\")", key);
}

wick_status wick_op_flex_int32(const wick_op_ctx *ctx, const wick_flex_map *m, const char *key,
                               int64_t dflt, int32_t *out) {
  int64_t v;
  const wick_flex_status st = wick_flex_map_int(m, key, &v);
  if (st == WICK_FLEX_ABSENT && dflt >= 0)
    v = dflt;
  else if (st != WICK_FLEX_OK)
    return wick_op_flex_fail(ctx, key, st);
  WICK_CHECK(ctx, v >= INT32_MIN && v <= INT32_MAX, "custom_options \"%s\" = %lld is out of range",
             key, (long long)v);
  *out = (int32_t)v;
  return WICK_OK;
}
