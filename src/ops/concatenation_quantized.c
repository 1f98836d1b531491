/*
 * concatenation_quantized.c — CONCATENATION of 8-bit quantized inputs whose
 * scale or zero point differ from the output's: each such input is
 * requantized while it is copied.
 *
 * Reached from concatenation.c when wick_concat_needs_requantize() holds
 * (inputs with the output's parameters are plain copies there). The
 * arithmetic is LiteRT's ConcatenationWithScaling for uint8, in float:
 * out = clamp((int32)roundf(q * s + b) + z_out) with s = s_in * (1 / s_out)
 * and b = -z_in * s. LiteRT refuses int8 inputs quantized differently from
 * the output; wick applies the same formula to int8 (clamped to int8).
 * Shape rules as the plain op: equal rank and type, equal dims off the axis,
 * the axis sum checked, no fused activation.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

typedef struct qconcat_data {
  int32_t axis;
  float out_scale;
  int32_t out_zp;
} qconcat_data;

static bool same_params(const wick_tensor *t, const wick_tensor *out) {
  const wick_quant *a = &t->info->quant, *b = &out->info->quant;
  return a->count == b->count && a->count > 0 && a->scale[0] == b->scale[0] &&
         a->zero_point[0] == b->zero_point[0];
}

bool wick_concat_needs_requantize(const wick_op_ctx *ctx) {
  const wick_tensor *out = wick_op_output(ctx, 0);
  if (out == NULL || (out->type != WICK_DTYPE_INT8 && out->type != WICK_DTYPE_UINT8) ||
      out->info == NULL || out->info->quant.count == 0)
    return false;
  for (size_t i = 0; i < wick_op_num_inputs(ctx); i++) {
    const wick_tensor *t = wick_op_input(ctx, i);
    if (t == NULL || t->type != out->type || t->info == NULL) return false;
    if (t->info->quant.count > 0 && !same_params(t, out)) return true;
  }
  return false;
}

wick_status wick_concat_prepare_quantized(wick_op_ctx *ctx) {
  size_t n = wick_op_num_inputs(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, WICK_MAX_OP_INPUTS, 1));
  wick_tensor *first, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &first));
  WICK_CHECK(ctx, first->rank >= 1, "inputs must have rank >= 1");
  qconcat_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, first->rank, &d->axis));
  WICK_CHECK_SUPPORTED(ctx, ctx->params->activation == WICK_ACT_NONE,
                       "fused activations on CONCATENATION are not supported");
  wick_qparams qo;
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  d->out_scale = qo.scale;
  d->out_zp = qo.zero_point;
  int32_t dims[WICK_MAX_RANK];
  memcpy(dims, first->dims, sizeof dims);
  int64_t sum = 0;
  bool rescaled = false;
  for (size_t i = 0; i < n; i++) {
    wick_tensor *t;
    WICK_TRY(wick_require_input(ctx, i, &t));
    WICK_CHECK(ctx, t->type == first->type, "input %zu has type %s, input 0 %s", i,
               wick_dtype_name(t->type), wick_dtype_name(first->type));
    WICK_CHECK(ctx, t->rank == first->rank, "input %zu has rank %d, input 0 rank %d", i, t->rank,
               first->rank);
    for (int32_t k = 0; k < t->rank; k++)
      WICK_CHECK(ctx, k == d->axis || t->dims[k] == first->dims[k],
                 "input %zu differs from input 0 in dimension %d (%d vs %d)", i, k, t->dims[k],
                 first->dims[k]);
    wick_qparams q;
    WICK_TRY(wick_quant_params(ctx, t, "an input", false, &q));
    rescaled = rescaled || q.scale != qo.scale || q.zero_point != qo.zero_point;
    sum += t->dims[d->axis];
    WICK_CHECK(ctx, sum <= INT32_MAX, "the concatenated dimension overflows");
  }
  dims[d->axis] = (int32_t)sum;
  wick_op_set_data(ctx, d);
  if (rescaled) /* an input quantized differently: the reference rescale, element by element */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "rescale");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "copy");
  return wick_op_set_output(ctx, 0, first->type, first->rank, dims);
}

wick_status wick_concat_invoke_quantized(wick_op_ctx *ctx) {
  const qconcat_data *d = wick_op_data(ctx);
  size_t n = wick_op_num_inputs(ctx);
  wick_tensor *out = wick_op_output(ctx, 0);
  int64_t outer = 1, inner = 1;
  for (int32_t k = 0; k < d->axis; k++) outer *= out->dims[k];
  for (int32_t k = d->axis + 1; k < out->rank; k++) inner *= out->dims[k];
  const float inverse = 1.0f / d->out_scale;
  uint8_t *dst = out->data; /* 8-bit elements */
  for (int64_t o = 0; o < outer; o++) {
    for (size_t i = 0; i < n; i++) {
      const wick_tensor *t = wick_op_input(ctx, i);
      const int64_t chunk = (int64_t)t->dims[d->axis] * inner;
      const uint8_t *src = (const uint8_t *)t->data + o * chunk;
      const wick_quant *q = &t->info->quant;
      if (q->scale[0] == d->out_scale && q->zero_point[0] == d->out_zp) {
        if (chunk > 0) memcpy(dst, src, (size_t)chunk);
      } else {
        const float scale = q->scale[0] * inverse;
        const float bias = (float)-q->zero_point[0] * scale;
        wick_q_rescale8__reference(t->type, chunk, scale, bias, d->out_zp, src, dst);
      }
      dst += chunk;
    }
  }
  return WICK_OK;
}
