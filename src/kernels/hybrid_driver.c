/*
 * hybrid_driver.c — the run-time quantization of one input row of a hybrid
 * (dynamic-range) op on the vector kernels of kernels.h: the row's range,
 * LiteRT's scale and zero point from it (reference/hybrid.c computes both
 * the same way), then the values. Bit-identical to
 * wick_hybrid_quantize_row__reference / _asymmetric__reference.
 */
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/reference/reference.h"

float wick_hybrid_quantize_row(const wick_f32_kernels *f32, size_t k, const float *x, int8_t *q,
                               bool asymmetric, int32_t *offset) {
  *offset = 0;
  if (f32 == NULL)
    return asymmetric ? wick_hybrid_quantize_asymmetric__reference((int64_t)k, x, q, offset)
                      : wick_hybrid_quantize_row__reference((int64_t)k, x, q);
  if (asymmetric) {
    float lo = 0.0f, hi = 0.0f;
    f32->row_range(k, x, &lo, &hi);
    if (lo == hi) {
      memset(q, 0, k);
      return 1.0f;
    }
    const float scale = wick_hybrid_asymmetric_params(lo, hi, offset);
    f32->hybrid_quantize(k, x, q, 1.0f / scale, (float)*offset, -128.0f);
    return scale;
  }
  float lo = k > 0 ? x[0] : 0.0f, hi = lo, inverse = 0.0f;
  f32->row_range(k, x, &lo, &hi);
  const float scale = wick_hybrid_symmetric_params(lo, hi, &inverse);
  if (scale == 0.0f) {
    memset(q, 0, k);
    return 1.0f;
  }
  f32->hybrid_quantize(k, x, q, inverse, 0.0f, -127.0f);
  return scale;
}
