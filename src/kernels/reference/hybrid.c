/*
 * hybrid.c — reference kernels of the hybrid ops: float32 activations, int8
 * symmetric weights (TFLite's dynamic-range quantization).
 *
 * As LiteRT's EvalHybrid for FULLY_CONNECTED (symmetric input quantization):
 * each input row is quantized at run time to int8 in [-127, 127] with scale
 * max|x| / 127 (a zero row gives zeros and scale 1), values
 * round-half-away(x * 127 / max|x|); the int32 dot product with each weight row
 * is scaled back in float by (row scale * weight scale) — per-tensor weights
 * fold their scale into the row scale first, per-channel weights multiply it
 * per output — and added to the bias (or 0); the fused activation clamps last.
 * Next: src/ops/fully_connected.c (the operator).
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

float wick_hybrid_quantize_row__reference(int64_t k, const float *x, int8_t *q) {
  float lo = 0.0f, hi = 0.0f;
  if (k > 0) lo = hi = x[0];
  for (int64_t i = 1; i < k; i++) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float range = fmaxf(fabsf(lo), fabsf(hi));
  if (range == 0.0f) {
    if (k > 0) memset(q, 0, (size_t)k);
    return 1.0f;
  }
  const float inverse = 127.0f / range;
  for (int64_t i = 0; i < k; i++) {
    float r = roundf(x[i] * inverse);
    r = r < -127.0f ? -127.0f : (r > 127.0f ? 127.0f : r);
    q[i] = (int8_t)r;
  }
  return range / 127.0f;
}

void wick_hybrid_fully_connected__reference(int64_t m, int64_t n, int64_t k, const float *input,
                                            const int8_t *weights, const float *weight_scales,
                                            bool per_channel, const float *bias, int8_t *scratch,
                                            float *output, float lo, float hi) {
  for (int64_t r = 0; r < m; r++) {
    float scale = wick_hybrid_quantize_row__reference(k, input + r * k, scratch);
    if (!per_channel) scale *= weight_scales[0];
    float *out = output + r * n;
    for (int64_t c = 0; c < n; c++) {
      const int8_t *w = weights + c * k;
      int32_t dot = 0;
      for (int64_t i = 0; i < k; i++) dot += (int32_t)w[i] * (int32_t)scratch[i];
      const float s = per_channel ? scale * weight_scales[c] : scale;
      float y = bias ? bias[c] : 0.0f;
      y += (float)dot * s;
      out[c] = y < lo ? lo : (y > hi ? hi : y);
    }
  }
}
