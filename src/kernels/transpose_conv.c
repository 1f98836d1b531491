/*
 * transpose_conv.c — the second half of the GEMM form of TRANSPOSE_CONV
 * (portable C; the first half is an ordinary GEMM, gemm_driver.c).
 *
 * The GEMM multiplies every input pixel by the filter seen as a matrix of
 * (tap, output channel) rows, giving each pixel's contribution through each
 * tap: cols[pixel][ky * k_w + kx][o] = sum_i input[pixel][i] * filter[o][ky][kx][i].
 * The gather here then sums, for each output pixel, the contributions of the
 * taps that reach it (the same taps as the reference kernel's gather form,
 * src/kernels/reference/transpose_conv.c), adds the bias and clamps. Each
 * output is written once, taps in (ky, kx) order, so the result does not
 * depend on how rows are split over threads.
 */
#include "kernels/kernels.h"

void wick_f32_tconv_gather(const wick_conv_shape *s, const float *cols, int32_t col_row0,
                           const float *bias, int32_t y0, int32_t y1, float *output, float lo,
                           float hi) {
  const size_t c = (size_t)s->out_c, taps = (size_t)s->k_h * (size_t)s->k_w;
  const size_t pixel_floats = taps * c;
  for (int32_t y = y0; y < y1; y++)
    for (int32_t x = 0; x < s->out_w; x++) {
      float *restrict out = output + ((size_t)(y - y0) * (size_t)s->out_w + (size_t)x) * c;
      bool first = true;
      for (int32_t ky = 0; ky < s->k_h; ky++) {
        int32_t iy = wick_tconv_source_index(y, ky, s->pad_top, s->stride_h, s->in_h);
        if (iy < 0) continue;
        for (int32_t kx = 0; kx < s->k_w; kx++) {
          int32_t ix = wick_tconv_source_index(x, kx, s->pad_left, s->stride_w, s->in_w);
          if (ix < 0) continue;
          const float *restrict src =
              cols + ((size_t)(iy - col_row0) * (size_t)s->in_w + (size_t)ix) * pixel_floats +
              ((size_t)ky * (size_t)s->k_w + (size_t)kx) * c;
          if (first)
            for (size_t o = 0; o < c; o++) out[o] = src[o];
          else
            for (size_t o = 0; o < c; o++) out[o] += src[o];
          first = false;
        }
      }
      if (first)
        for (size_t o = 0; o < c; o++) out[o] = 0.0f;
      if (bias)
        for (size_t o = 0; o < c; o++) out[o] += bias[o];
      for (size_t o = 0; o < c; o++) {
        float v = out[o];
        out[o] = v < lo ? lo : (v > hi ? hi : v);
      }
    }
}

static inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void wick_tconv_input_rows(const wick_conv_shape *s, int32_t y0, int32_t y1, int32_t *first,
                           int32_t *last) {
  /* Output row y reads input row iy through tap ky when iy * stride = y + pad - ky. */
  int64_t lo = -floor_div(-((int64_t)y0 + s->pad_top - (s->k_h - 1)), s->stride_h); /* ceil */
  int64_t hi = floor_div((int64_t)y1 - 1 + s->pad_top, s->stride_h);
  if (lo < 0) lo = 0;
  if (hi > (int64_t)s->in_h - 1) hi = (int64_t)s->in_h - 1;
  if (lo > hi) lo = hi + 1;
  *first = (int32_t)lo;
  *last = (int32_t)hi;
}
