/*
 * quantization.c — quantization parameters, requantization multipliers and
 * quantized activation ranges, shared by the quantized operators.
 *
 * Everything here mirrors LiteRT's kernel_util / quantization_util facts
 * (docs/format.md): where LiteRT computes in float (activation bounds, CheckedLog2)
 * wick computes in float too, and where it computes in double wick does the
 * same, so the integer parameters come out identical.
 * Next: src/kernels/reference/quantized.c (the arithmetic that uses them).
 */
#include "ops/quantization.h"

bool wick_quant_is_q_type(wick_dtype t) {
  return t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 || t == WICK_DTYPE_INT16;
}

bool wick_quant_routed(const wick_op_ctx *ctx, size_t i) {
  const wick_tensor *t = wick_op_input(ctx, i);
  return t != NULL && wick_quant_is_q_type(t->type) && t->info != NULL && t->info->quant.count > 0;
}

void wick_quant_type_range(wick_dtype t, int32_t *lo, int32_t *hi) {
  switch (t) {
    case WICK_DTYPE_INT8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      return;
    case WICK_DTYPE_UINT8:
      *lo = 0;
      *hi = UINT8_MAX;
      return;
    case WICK_DTYPE_INT16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return;
    default:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return;
  }
}

static bool finite_positive(float s) { return s > 0.0f && s <= 3.4028234663852886e38f; }

wick_status wick_quant_params(const wick_op_ctx *ctx, const wick_tensor *t, const char *what,
                              bool allow_per_channel, wick_qparams *out) {
  const wick_quant *q = t->info != NULL ? &t->info->quant : NULL;
  WICK_CHECK(ctx, q != NULL && q->count > 0, "%s (%s) has no quantization parameters", what,
             wick_dtype_name(t->type));
  WICK_CHECK_SUPPORTED(ctx, q->count == 1 || allow_per_channel,
                       "%s has %u per-channel scales; this op takes per-tensor parameters", what,
                       q->count);
  float s = q->scale[0];
  int64_t zp = q->zero_point[0];
  WICK_CHECK(ctx, finite_positive(s), "%s: scale %g must be positive and finite", what, (double)s);
  int32_t lo, hi;
  wick_quant_type_range(t->type, &lo, &hi);
  WICK_CHECK(ctx, zp >= lo && zp <= hi, "%s: zero point %lld is outside the %s range", what,
             (long long)zp, wick_dtype_name(t->type));
  out->scale = s;
  out->zero_point = (int32_t)zp;
  return WICK_OK;
}

void wick_quantize_multiplier(double m, int32_t *multiplier, int32_t *shift) {
  if (!(m > 0.0)) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  int e = 0;
  double q = frexp(m, &e);
  /* round() rounds half away from zero, like TfLiteRound. q in [0.5, 1). */
  int64_t fixed = (int64_t)round(q * 2147483648.0);
  if (fixed == ((int64_t)1 << 31)) {
    fixed /= 2;
    e++;
  }
  if (e < -31) {
    fixed = 0;
    e = 0;
  }
  *multiplier = (int32_t)fixed;
  *shift = e;
}

wick_status wick_quant_multiplier(const wick_op_ctx *ctx, double m, int32_t max_shift,
                                  const char *what, int32_t *multiplier, int32_t *shift) {
  WICK_CHECK(ctx, m >= 0.0 && m <= 1e300, "%s: requantization multiplier %g is not finite", what,
             m);
  wick_quantize_multiplier(m, multiplier, shift);
  WICK_CHECK_SUPPORTED(ctx, *shift <= max_shift,
                       "%s: requantization multiplier %g is too large (2^%d; at most 2^%d)", what,
                       m, (int)*shift, (int)max_shift);
  return WICK_OK;
}

/* zero_point + (int32)roundf(f / scale), in float as LiteRT. */
static wick_status quantize_bound(const wick_op_ctx *ctx, wick_qparams q, float f, int32_t *out) {
  float t = roundf(f / q.scale);
  WICK_CHECK(ctx, t >= -2147483648.0f && t < 2147483648.0f,
             "activation bound %g does not fit the output scale %g", (double)f, (double)q.scale);
  int64_t v = (int64_t)q.zero_point + (int64_t)t;
  *out = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : (int32_t)v);
  return WICK_OK;
}

wick_status wick_quant_activation_range(const wick_op_ctx *ctx, wick_activation act,
                                        wick_dtype type, wick_qparams out, int32_t *lo,
                                        int32_t *hi) {
  int32_t qmin, qmax, v = 0;
  wick_quant_type_range(type, &qmin, &qmax);
  *lo = qmin;
  *hi = qmax;
  switch (act) {
    case WICK_ACT_NONE:
    case WICK_ACT_TANH:
    case WICK_ACT_SIGN_BIT: return WICK_OK;
    case WICK_ACT_RELU:
      WICK_TRY(quantize_bound(ctx, out, 0.0f, &v));
      if (v > *lo) *lo = v;
      return WICK_OK;
    case WICK_ACT_RELU6:
      WICK_TRY(quantize_bound(ctx, out, 0.0f, &v));
      if (v > *lo) *lo = v;
      WICK_TRY(quantize_bound(ctx, out, 6.0f, &v));
      if (v < *hi) *hi = v;
      return WICK_OK;
    case WICK_ACT_RELU_N1_TO_1:
      WICK_TRY(quantize_bound(ctx, out, -1.0f, &v));
      if (v > *lo) *lo = v;
      WICK_TRY(quantize_bound(ctx, out, 1.0f, &v));
      if (v < *hi) *hi = v;
      return WICK_OK;
  }
  return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "unknown fused activation %d", (int)act);
}

wick_status wick_quant_filter_scales(const wick_op_ctx *ctx, const wick_tensor *filter,
                                     int32_t channels, int32_t axis, const float **scales) {
  const wick_quant *q = filter->info != NULL ? &filter->info->quant : NULL;
  WICK_CHECK(ctx, q != NULL && q->count > 0, "the filter (%s) has no quantization parameters",
             wick_dtype_name(filter->type));
  if (q->count > 1) {
    WICK_CHECK(ctx, (int64_t)q->count == channels,
               "the filter has %u per-channel scales for %d output channels", q->count, channels);
    WICK_CHECK(ctx, q->quantized_dimension == axis,
               "the filter is quantized along dimension %d; per-channel scales must follow the "
               "output channels (dimension %d)",
               q->quantized_dimension, axis);
  }
  float *s = wick_op_alloc(ctx, (size_t)(channels > 0 ? channels : 1) * sizeof(float));
  if (s == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t c = 0; c < channels; c++) {
    float v = q->scale[q->count > 1 ? c : 0];
    WICK_CHECK(ctx, v >= 0.0f && v <= 3.4028234663852886e38f,
               "filter scale %g (channel %d) must be finite and >= 0", (double)v, c);
    s[c] = v;
  }
  *scales = s;
  return WICK_OK;
}

wick_status wick_quant_channel_multipliers(const wick_op_ctx *ctx, float in_scale,
                                           const float *filter_scales, int32_t channels,
                                           float out_scale, int32_t max_shift, int32_t **multiplier,
                                           int32_t **shift) {
  size_t n = (size_t)(channels > 0 ? channels : 1);
  int32_t *m = wick_op_alloc(ctx, n * sizeof(int32_t));
  int32_t *s = wick_op_alloc(ctx, n * sizeof(int32_t));
  if (m == NULL || s == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t c = 0; c < channels; c++) {
    double real = (double)in_scale * (double)filter_scales[c] / (double)out_scale;
    WICK_TRY(wick_quant_multiplier(ctx, real, max_shift, "output channel", &m[c], &s[c]));
  }
  *multiplier = m;
  *shift = s;
  return WICK_OK;
}

bool wick_quant_checked_log2(float x, int32_t *log2) {
  float l = logf(x) * (1.0f / logf(2.0f));
  float r = roundf(l);
  *log2 = (int32_t)r;
  return fabsf(l - r) < 1e-3f;
}
