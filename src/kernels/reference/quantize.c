/*
 * quantize.c — reference affine quantization kernels: DEQUANTIZE (int8,
 * uint8, int16 -> float32) and QUANTIZE (float32 -> int8, uint8, int16),
 * per-tensor or per-channel.
 *
 * Layout: the tensor is viewed as [outer, channels, inner] (row-major), the
 * channel axis being the quantized dimension; per-tensor is channels = 1.
 *
 *   dequantize  real = scale[c] * (q - zp[c])      product in double, one
 *               rounding to float (exact for |q - zp| < 2^29, so equal to
 *               LiteRT's float and double formulations)
 *   quantize    q = clamp(round(x / scale[c]) + zp[c], type range)
 *               x / scale in float and round half away from zero (roundf),
 *               as LiteRT's reference AffineQuantize; the sum and clamp in
 *               double so huge values and ±inf saturate instead of hitting
 *               an undefined float->int conversion; NaN counts as 0.
 *
 * Next: src/ops/quantize.c (parameter checks), cast.c (float16 inputs).
 */
#include <math.h>

#include "kernels/reference/reference.h"

static double read_q(wick_dtype type, const void *p, int64_t i) {
  switch (type) {
    case WICK_DTYPE_INT8: return ((const int8_t *)p)[i];
    case WICK_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    default: return ((const int16_t *)p)[i];
  }
}

void wick_dequantize__reference(wick_dtype type, const wick_quant_layout *q, const void *in,
                                float *out) {
  int64_t i = 0;
  for (int64_t o = 0; o < q->outer; o++)
    for (int64_t c = 0; c < q->channels; c++) {
      double scale = q->scale[c], zp = q->zero_point[c];
      for (int64_t k = 0; k < q->inner; k++, i++)
        out[i] = (float)(scale * (read_q(type, in, i) - zp));
    }
}

void wick_quantize__reference(wick_dtype type, const wick_quant_layout *q, const float *in,
                              void *out) {
  double lo = type == WICK_DTYPE_INT8 ? INT8_MIN : type == WICK_DTYPE_UINT8 ? 0 : INT16_MIN;
  double hi = type == WICK_DTYPE_INT8 ? INT8_MAX : type == WICK_DTYPE_UINT8 ? UINT8_MAX : INT16_MAX;
  int64_t i = 0;
  for (int64_t o = 0; o < q->outer; o++)
    for (int64_t c = 0; c < q->channels; c++) {
      float scale = q->scale[c];
      double zp = q->zero_point[c];
      for (int64_t k = 0; k < q->inner; k++, i++) {
        float r = roundf(in[i] / scale);
        double v = (r != r ? 0.0 : (double)r) + zp;
        v = v < lo ? lo : (v > hi ? hi : v);
        switch (type) {
          case WICK_DTYPE_INT8: ((int8_t *)out)[i] = (int8_t)v; break;
          case WICK_DTYPE_UINT8: ((uint8_t *)out)[i] = (uint8_t)v; break;
          default: ((int16_t *)out)[i] = (int16_t)v; break;
        }
      }
    }
}
