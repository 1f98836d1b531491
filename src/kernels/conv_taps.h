/*
 * conv_taps.h — which filter taps of one output pixel fall inside the image, and the image
 * pixel under a tap: the ISA-independent part of the hybrid depthwise kernels
 * (avx2/hybrid.c, neon/hybrid.c), and their scalar channel tail, kept in one place so that every
 * ISA walks the taps alike.
 */
#ifndef WICK_KERNELS_CONV_TAPS_H
#define WICK_KERNELS_CONV_TAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernels.h"

/* The taps of one output pixel that fall inside the image: rows ky_begin..ky_end-1 and columns
 * kx_begin..kx_end-1 of the filter (the taps outside add nothing); iy0 and ix0 are the image
 * row and column of tap (0, 0), which may lie outside. */
typedef struct wick_conv_taps {
  int64_t iy0, ix0;
  int32_t ky_begin, ky_end, kx_begin, kx_end;
} wick_conv_taps;

/* The taps k in [*begin, *end) of a filter axis with `taps` taps whose image index
 * start + k * dilation lies in [0, size). */
static inline void wick_conv_axis_taps(int64_t start, int32_t dilation, int32_t taps, int64_t size,
                                       int32_t *begin, int32_t *end) {
  int32_t k0 = 0, k1 = taps;
  while (k0 < taps && start + (int64_t)k0 * dilation < 0) k0++;
  while (k1 > k0 && start + (int64_t)(k1 - 1) * dilation >= size) k1--;
  *begin = k0;
  *end = k1;
}

static inline wick_conv_taps wick_conv_pixel_taps(const wick_conv_shape *s, int32_t oy,
                                                  int32_t ox) {
  wick_conv_taps t;
  t.iy0 = (int64_t)oy * s->stride_h - s->pad_top;
  t.ix0 = (int64_t)ox * s->stride_w - s->pad_left;
  wick_conv_axis_taps(t.iy0, s->dilation_h, s->k_h, s->in_h, &t.ky_begin, &t.ky_end);
  wick_conv_axis_taps(t.ix0, s->dilation_w, s->k_w, s->in_w, &t.kx_begin, &t.kx_end);
  return t;
}

/* The image pixel (row * in_w + column) under tap (ky, kx). */
static inline int64_t wick_conv_tap_pixel(const wick_conv_shape *s, const wick_conv_taps *t,
                                          int32_t ky, int32_t kx) {
  return (t->iy0 + (int64_t)ky * s->dilation_h) * s->in_w + t->ix0 + (int64_t)kx * s->dilation_w;
}

/* One output channel of a hybrid depthwise pixel, as the reference's scalar code computes it:
 * the int32 sum of w * (x - input_offset) over the taps inside the image (wrapping as uint32),
 * then the float rescale in the op's order, the bias and the clamp. The vector kernels use it
 * for the channels past their last full vector. */
static inline float wick_hybrid_dw_channel(const wick_conv_shape *s, const wick_conv_taps *t,
                                           const int8_t *filter, const int8_t *input, int64_t c,
                                           int64_t ch, int32_t input_offset,
                                           const float *filter_scales, float input_scale,
                                           bool conv_rescale, const float *bias, float lo,
                                           float hi) {
  uint32_t acc = 0;
  for (int32_t ky = t->ky_begin; ky < t->ky_end; ky++) {
    for (int32_t kx = t->kx_begin; kx < t->kx_end; kx++) {
      const int32_t w = filter[((int64_t)ky * s->k_w + kx) * c + ch];
      acc += (uint32_t)(w * ((int32_t)input[wick_conv_tap_pixel(s, t, ky, kx) * c + ch] -
                             input_offset));
    }
  }
  float y = conv_rescale ? (float)(int32_t)acc * filter_scales[ch] * input_scale
                         : (float)(int32_t)acc * (filter_scales[ch] * input_scale);
  if (bias) y += bias[ch];
  return y < lo ? lo : (y > hi ? hi : y);
}

#endif /* WICK_KERNELS_CONV_TAPS_H */
