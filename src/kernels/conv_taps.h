/*
 * conv_taps.h — which filter taps of one output pixel fall inside the image, and the image
 * pixel under a tap: the ISA-independent part of the hybrid depthwise kernels
 * (avx2/hybrid.c, neon/hybrid.c), kept in one place so that every ISA walks the taps alike.
 */
#ifndef WICK_KERNELS_CONV_TAPS_H
#define WICK_KERNELS_CONV_TAPS_H

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

#endif /* WICK_KERNELS_CONV_TAPS_H */
