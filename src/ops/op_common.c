/*
 * op_common.c — implementations of the shared operator helpers (op_common.h).
 */
#include "ops/op_common.h"

#include <stdio.h>

#include <inttypes.h>

wick_status wick_check_arity(const wick_op_ctx *ctx, size_t min_in, size_t max_in, size_t n_out) {
  size_t ni = wick_op_num_inputs(ctx), no = wick_op_num_outputs(ctx);
  WICK_CHECK(ctx, ni >= min_in && ni <= max_in, "takes %zu..%zu inputs, the file gives %zu",
             min_in, max_in, ni);
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
  WICK_CHECK(ctx, a >= 0 && a < (rank > 0 ? rank : 1), "axis %" PRId64 " is outside rank %d",
             axis, rank);
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
  WICK_TRY(wick_conv_output_size(ctx, padding, (int32_t)padded, filter, stride, dilation, out,
                                 &own));
  WICK_CHECK(ctx, (int64_t)own + before <= INT32_MAX, "padding overflows");
  *pad_before = own + before;
  return WICK_OK;
}

wick_status wick_conv_spatial(const wick_op_ctx *ctx, wick_padding padding, wick_conv_shape *s) {
  const int32_t *pad = ctx->node->fusion.pad; /* top, bottom, left, right; zeros if none */
  WICK_TRY(conv_dimension(ctx, padding, s->in_h, pad[0], pad[1], s->k_h, s->stride_h,
                          s->dilation_h, &s->out_h, &s->pad_top));
  return conv_dimension(ctx, padding, s->in_w, pad[2], pad[3], s->k_w, s->stride_w, s->dilation_w,
                        &s->out_w, &s->pad_left);
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

int64_t wick_read_int(const wick_tensor *t, int64_t i) {
  if (t->type == WICK_DTYPE_INT64) return ((const int64_t *)t->data)[i];
  return ((const int32_t *)t->data)[i];
}

bool wick_is_int_index_type(wick_dtype t) {
  return t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64;
}

bool wick_op_fused_epilogue(const wick_op_ctx *ctx, wick_f32_epilogue *ep) {
  memset(ep, 0, sizeof *ep);
  const wick_node_fusion *fu = &ctx->node->fusion;
  if (fu->activation == 0 && fu->residual == 0) return false;
  /* fusion runs only when optimized kernels exist (interpreter.c) */
  const wick_f32_kernels *k = wick_f32_kernels_select(false);
  if (k == NULL) return false;
  if (fu->activation > 0) ep->act = k->unary[fu->activation - 1];
  if (fu->residual > 0) {
    ep->residual = ctx->graph->tensors[fu->residual - 1].data;
    ep->add = k->binary[WICK_F32_ADD][WICK_F32_VV];
    ep->lo = fu->lo;
    ep->hi = fu->hi;
  }
  return true;
}

void wick_op_run_fused_epilogue(const wick_op_ctx *ctx) {
  wick_f32_epilogue ep;
  if (!wick_op_fused_epilogue(ctx, &ep)) return;
  wick_tensor *o = wick_op_output(ctx, 0);
  size_t n = (size_t)wick_tensor_elements(o);
  wick_f32_epilogue_run(&ep, 1, n, o->data, n, 0);
}
