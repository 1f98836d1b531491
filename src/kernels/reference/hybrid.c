/*
 * hybrid.c — reference kernels of the hybrid ops: float32 activations, int8
 * symmetric weights (TFLite's dynamic-range quantization).
 *
 * As LiteRT's EvalHybrid for FULLY_CONNECTED: each input row is quantized at
 * run time — symmetric: int8 in [-127, 127] with scale max|x| / 127 (a zero
 * row gives zeros and scale 1), values round-half-away(x * 127 / max|x|);
 * asymmetric (asymmetric_quantize_inputs): LiteRT's AsymmetricQuantizeFloats
 * below, and the int32 dot product then loses zero point * the weight row's
 * sum. The int32 dot product with each weight row is scaled back in float by
 * (row scale * weight scale) — per-tensor weights fold their scale into the
 * row scale first, per-channel weights multiply it per output — and added to
 * the bias (or 0); the fused activation clamps last.
 * Next: src/ops/fully_connected.c (the operator).
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

float wick_hybrid_symmetric_params(float lo, float hi, float *inverse) {
  const float range = fmaxf(fabsf(lo), fabsf(hi));
  if (range == 0.0f) return 0.0f;
  *inverse = 127.0f / range;
  return range / 127.0f;
}

void wick_hybrid_quantize_values__reference(int64_t k, const float *x, int8_t *q, float inverse,
                                            float offset, float qmin) {
  for (int64_t i = 0; i < k; i++) {
    float r = roundf(offset + x[i] * inverse);
    if (r != r) r = 0.0f; /* NaN (NaN/Inf inputs) reads as 0: casting NaN is undefined */
    r = r < qmin ? qmin : (r > 127.0f ? 127.0f : r);
    q[i] = (int8_t)r;
  }
}

float wick_hybrid_quantize_row__reference(int64_t k, const float *x, int8_t *q) {
  float lo = 0.0f, hi = 0.0f;
  if (k > 0) lo = hi = x[0];
  for (int64_t i = 1; i < k; i++) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  float inverse;
  const float scale = wick_hybrid_symmetric_params(lo, hi, &inverse);
  if (scale == 0.0f) {
    if (k > 0) memset(q, 0, (size_t)k);
    return 1.0f;
  }
  wick_hybrid_quantize_values__reference(k, x, q, inverse, 0.0f, -127.0f);
  return scale;
}

void wick_hybrid_fully_connected__reference(int64_t m, int64_t n, int64_t k, const float *input,
                                            const int8_t *weights, const float *weight_scales,
                                            bool per_channel, bool asymmetric, const float *bias,
                                            int8_t *scratch, float *output, float lo, float hi) {
  for (int64_t r = 0; r < m; r++) {
    int32_t offset = 0;
    float scale =
        asymmetric ? wick_hybrid_quantize_asymmetric__reference(k, input + r * k, scratch, &offset)
                   : wick_hybrid_quantize_row__reference(k, input + r * k, scratch);
    if (!per_channel) scale *= weight_scales[0];
    float *out = output + r * n;
    for (int64_t c = 0; c < n; c++) {
      const int8_t *w = weights + c * k;
      uint32_t dot = 0, row_sum = 0; /* int32 sums that wrap past 2^31 like LiteRT's */
      for (int64_t i = 0; i < k; i++) {
        dot += (uint32_t)((int32_t)w[i] * (int32_t)scratch[i]);
        row_sum += (uint32_t)(int32_t)w[i];
      }
      dot -= row_sum * (uint32_t)offset;
      const float s = per_channel ? scale * weight_scales[c] : scale;
      float y = bias ? bias[c] : 0.0f;
      y += (float)(int32_t)dot * s;
      out[c] = y < lo ? lo : (y > hi ? hi : y);
    }
  }
}

void wick_hybrid_dots__reference(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                                 int32_t *c, size_t ldc) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      uint32_t dot = 0; /* wraps like LiteRT's int32 sums */
      for (size_t p = 0; p < k; p++)
        dot += (uint32_t)((int32_t)a[i * k + p] * (int32_t)b[j * k + p]);
      c[i * ldc + j] = (int32_t)dot;
    }
}

/* LiteRT's AsymmetricQuantizeFloats: the range [min(x, 0), max(x, 0)] onto [-128, 127]
 * (its width in float, scale and zero point in double, the zero point nudged into range and
 * rounded), values round-half-away(offset + x / scale) computed in float; a zero range gives
 * zeros, scale 1, offset 0. */
float wick_hybrid_asymmetric_params(float lo, float hi, int32_t *offset) {
  const double rmin = lo, rmax = hi;
  /* the range in float, then double (as the LiteRT release the tests run:
   * (double)(rmax - rmin) and the float difference round differently) */
  const double scale = (double)(hi - lo) / 255.0;
  const double zp_from_min = -128.0 - rmin / scale, zp_from_max = 127.0 - rmax / scale;
  const double err_min = 128.0 + fabs(rmin / scale), err_max = 127.0 + fabs(rmax / scale);
  const double zp = err_min < err_max ? zp_from_min : zp_from_max;
  *offset = zp <= -128.0 ? -128 : (zp >= 127.0 ? 127 : (int32_t)round(zp));
  return (float)scale;
}

float wick_hybrid_quantize_asymmetric__reference(int64_t n, const float *x, int8_t *q,
                                                 int32_t *offset) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  if (lo == hi) {
    if (n > 0) memset(q, 0, (size_t)n);
    *offset = 0;
    return 1.0f;
  }
  const float scale_f = wick_hybrid_asymmetric_params(lo, hi, offset);
  wick_hybrid_quantize_values__reference(n, x, q, 1.0f / scale_f, (float)*offset, -128.0f);
  return scale_f;
}

void wick_hybrid_conv2d__reference(const wick_conv_shape *s, bool depthwise, const int8_t *input,
                                   int32_t input_offset, float input_scale, const int8_t *filter,
                                   const float *filter_scales, const float *bias, float *output,
                                   float lo, float hi) {
  const int32_t groups = depthwise || s->groups < 1 ? 1 : s->groups;
  const int32_t taps_c = depthwise ? 1 : s->in_c / groups, per_group = s->out_c / groups;
  for (int32_t oy = 0; oy < s->out_h; oy++)
    for (int32_t ox = 0; ox < s->out_w; ox++)
      for (int32_t o = 0; o < s->out_c; o++) {
        const int64_t group_c = depthwise ? 0 : (int64_t)(o / per_group) * taps_c;
        /* int32 sums that wrap (as LiteRT's, without C's undefined overflow);
         * coordinates in 64 bits: a file's stride and dilation can be huge */
        uint32_t sum = 0;
        for (int32_t ky = 0; ky < s->k_h; ky++) {
          const int64_t iy = (int64_t)oy * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
          if (iy < 0 || iy >= s->in_h) continue;
          for (int32_t kx = 0; kx < s->k_w; kx++) {
            const int64_t ix =
                (int64_t)ox * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
            if (ix < 0 || ix >= s->in_w) continue;
            const int8_t *px = input + (iy * s->in_w + ix) * s->in_c + group_c;
            if (depthwise) {
              const int32_t w = filter[((int64_t)ky * s->k_w + kx) * s->out_c + o];
              sum += (uint32_t)(w * ((int32_t)px[o / s->multiplier] - input_offset));
            } else {
              const int8_t *f = filter + (((int64_t)o * s->k_h + ky) * s->k_w + kx) * taps_c;
              for (int32_t i = 0; i < taps_c; i++)
                sum += (uint32_t)((int32_t)f[i] * ((int32_t)px[i] - input_offset));
            }
          }
        }
        const int32_t acc = (int32_t)sum;
        /* LiteRT's association: conv (acc * s_w) * s_in; depthwise acc * (s_w * s_in) */
        float y = depthwise ? (float)acc * (filter_scales[o] * input_scale)
                            : (float)acc * filter_scales[o] * input_scale;
        if (bias) y += bias[o];
        output[((int64_t)oy * s->out_w + ox) * s->out_c + o] = y < lo ? lo : (y > hi ? hi : y);
      }
}

void wick_hybrid_depthwise_rows(const wick_conv_shape *s, const int8_t *input, int32_t input_offset,
                                float input_scale, const int8_t *filter, const float *filter_scales,
                                bool conv_rescale, const float *bias, float *output, float lo,
                                float hi, int32_t y0, int32_t y1, uint32_t *acc) {
  const int64_t c = s->out_c, m = s->multiplier;
  for (int32_t oy = y0; oy < y1; oy++)
    for (int32_t ox = 0; ox < s->out_w; ox++) {
      for (int64_t o = 0; o < c; o++) acc[o] = 0;
      for (int32_t ky = 0; ky < s->k_h; ky++) {
        const int64_t iy = (int64_t)oy * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
        if (iy < 0 || iy >= s->in_h) continue;
        for (int32_t kx = 0; kx < s->k_w; kx++) {
          const int64_t ix = (int64_t)ox * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
          if (ix < 0 || ix >= s->in_w) continue;
          const int8_t *px = input + (iy * s->in_w + ix) * s->in_c;
          const int8_t *w = filter + ((int64_t)ky * s->k_w + kx) * c;
          if (m ==
              1) /* the channel loop the compiler vectorizes: |w * (x - offset)| <= 128 * 255
                  * fits int16, so the products are 16-bit multiplies (SSE2 has no 32-bit one) */
            for (int64_t o = 0; o < c; o++)
              acc[o] +=
                  (uint32_t)(int32_t)(int16_t)((int16_t)w[o] *
                                               (int16_t)((int16_t)px[o] - (int16_t)input_offset));
          else
            for (int64_t o = 0; o < c; o++)
              acc[o] += (uint32_t)((int32_t)w[o] * ((int32_t)px[o / m] - input_offset));
        }
      }
      float *out = output + ((int64_t)oy * s->out_w + ox) * c;
      for (int64_t o = 0; o < c; o++) {
        float y = conv_rescale ? (float)(int32_t)acc[o] * filter_scales[o] * input_scale
                               : (float)(int32_t)acc[o] * (filter_scales[o] * input_scale);
        if (bias) y += bias[o];
        out[o] = y < lo ? lo : (y > hi ? hi : y);
      }
    }
}

/* LiteRT's `total -= row_sum * offset` with an int32 total and a float
 * offset: computed in float, converted back toward zero (saturated here,
 * where C++ leaves an out-of-range conversion undefined). */
int32_t wick_hybrid_subtract_offset(int32_t total, int32_t column_sum, int32_t offset) {
  const float v = (float)total - (float)column_sum * (float)offset;
  if (!(v > -2147483648.0f)) return INT32_MIN;
  if (v >= 2147483648.0f) return INT32_MAX;
  return (int32_t)v;
}

void wick_hybrid_batch_matmul_rows__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                              const int8_t *rhs, const float *rhs_scales,
                                              bool per_channel, bool asymmetric, float *row,
                                              int8_t *q, float *out, int64_t row_begin,
                                              int64_t row_end) {
  const int64_t m = s->m, n = s->n, k = s->k;
  for (int64_t r = row_begin; r < row_end; r++) {
    /* The batch (row-major over the broadcast batch dims) and its operands. */
    int64_t b = r / m, lo = 0, ro = 0;
    const int64_t i = r % m;
    for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
      const int64_t idx = b % s->batch_dims[d];
      b /= s->batch_dims[d];
      lo += idx * s->lhs_strides[d];
      ro += idx * s->rhs_strides[d];
    }
    const float *l = lhs + lo;
    const int8_t *w = rhs + ro;
    for (int64_t p = 0; p < k; p++) row[p] = s->adj_x ? l[p * m + i] : l[i * k + p];
    int32_t offset = 0;
    const float row_scale = asymmetric
                                ? wick_hybrid_quantize_asymmetric__reference(k, row, q, &offset)
                                : wick_hybrid_quantize_row__reference(k, row, q);
    float *o = out + r * n;
    for (int64_t j = 0; j < n; j++) {
      int32_t total = 0, column_sum = 0;
      for (int64_t p = 0; p < k; p++) {
        const int32_t v = s->adj_y ? w[j * k + p] : w[p * n + j];
        total = (int32_t)((uint32_t)total + (uint32_t)((int32_t)q[p] * v)); /* wraps */
        column_sum += v;
      }
      if (asymmetric) total = wick_hybrid_subtract_offset(total, column_sum, offset);
      float y = 0.0f;
      y += (float)total * (row_scale * rhs_scales[per_channel ? j : 0]);
      o[j] = y;
    }
  }
}
