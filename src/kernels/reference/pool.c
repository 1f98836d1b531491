/*
 * pool.c — reference AVERAGE_POOL_2D, MAX_POOL_2D (NHWC float) and SOFTMAX.
 *
 * Average pooling divides by the number of in-bounds taps (TFLite semantics;
 * PyTorch's count_include_pad is the converter's business).
 */
#include <math.h>

#include "kernels/reference/reference.h"

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

static void pool(const wick_pool_shape *s, const float *in, float *out, float lo, float hi,
                 bool is_max) {
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++) {
        /* The window's top-left corner in input coordinates (64-bit: stride
         * and padding come from the file), then the taps inside the input:
         * the loops never visit the (possibly billions of) outside taps. */
        int64_t y0 = (int64_t)y * s->stride_h - s->pad_top;
        int64_t x0 = (int64_t)x * s->stride_w - s->pad_left;
        int64_t ky_lo = y0 < 0 ? -y0 : 0, kx_lo = x0 < 0 ? -x0 : 0;
        int64_t ky_hi = s->in_h - y0 < s->k_h ? s->in_h - y0 : s->k_h;
        int64_t kx_hi = s->in_w - x0 < s->k_w ? s->in_w - x0 : s->k_w;
        for (int32_t c = 0; c < s->channels; c++) {
          float acc = is_max ? -INFINITY : 0.0f;
          int64_t count = 0;
          for (int64_t ky = ky_lo; ky < ky_hi; ky++) {
            int64_t iy = y0 + ky;
            for (int64_t kx = kx_lo; kx < kx_hi; kx++) {
              int64_t ix = x0 + kx;
              float v = in[(((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->channels + c];
              if (is_max)
                acc = v > acc ? v : acc;
              else
                acc += v;
              count++;
            }
          }
          if (!is_max) acc = count ? acc / (float)count : 0.0f;
          out[(((int64_t)n * s->out_h + y) * s->out_w + x) * s->channels + c] = clampf(acc, lo, hi);
        }
      }
}

void wick_f32_average_pool__reference(const wick_pool_shape *s, const float *in, float *out,
                                      float lo, float hi) {
  pool(s, in, out, lo, hi, false);
}

void wick_f32_max_pool__reference(const wick_pool_shape *s, const float *in, float *out, float lo,
                                  float hi) {
  pool(s, in, out, lo, hi, true);
}

void wick_f32_softmax__reference(int64_t rows, int64_t cols, float beta, const float *in,
                                 float *out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *x = in + r * cols;
    float *y = out + r * cols;
    float mx = -INFINITY;
    for (int64_t c = 0; c < cols; c++) mx = x[c] > mx ? x[c] : mx;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; c++) {
      y[c] = expf(beta * (x[c] - mx));
      sum += y[c];
    }
    float inv = 1.0f / sum;
    for (int64_t c = 0; c < cols; c++) y[c] *= inv;
  }
}
