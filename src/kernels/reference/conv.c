/*
 * conv.c — reference CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (float).
 *
 * Direct loops over the output; taps outside the input are skipped (zero
 * padding). Tap coordinates are computed in 64 bits: strides and dilations
 * come from the file and y*stride + ky*dilation can exceed int32.
 * Accumulation order is fixed (ky, kx, input channel), so results
 * do not depend on threading.
 */
#include "kernels/reference/reference.h"

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

void wick_f32_conv2d__reference(const wick_conv_shape *s, const float *input, const float *filter,
                                const float *bias, float *output, float lo, float hi) {
  int32_t cin_g = s->in_c / s->groups;   /* input channels per group */
  int32_t cout_g = s->out_c / s->groups; /* output channels per group */
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++) {
        float *out = output + (((int64_t)n * s->out_h + y) * s->out_w + x) * s->out_c;
        for (int32_t o = 0; o < s->out_c; o++) {
          int32_t g = o / cout_g;
          float acc = bias ? bias[o] : 0.0f;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
            if (iy < 0 || iy >= s->in_h) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
              if (ix < 0 || ix >= s->in_w) continue;
              const float *in = input + (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c +
                                (int64_t)g * cin_g;
              const float *w = filter + (((int64_t)o * s->k_h + ky) * s->k_w + kx) * cin_g;
              for (int32_t i = 0; i < cin_g; i++) acc += in[i] * w[i];
            }
          }
          out[o] = clampf(acc, lo, hi);
        }
      }
}

void wick_f32_depthwise_conv2d__reference(const wick_conv_shape *s, const float *input,
                                          const float *filter, const float *bias, float *output,
                                          float lo, float hi) {
  int32_t m = s->multiplier;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++) {
        float *out = output + (((int64_t)n * s->out_h + y) * s->out_w + x) * s->out_c;
        for (int32_t oc = 0; oc < s->out_c; oc++) {
          int32_t ic = oc / m;
          float acc = bias ? bias[oc] : 0.0f;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
            if (iy < 0 || iy >= s->in_h) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
              if (ix < 0 || ix >= s->in_w) continue;
              float v = input[(((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c + ic];
              acc += v * filter[((int64_t)ky * s->k_w + kx) * s->out_c + oc];
            }
          }
          out[oc] = clampf(acc, lo, hi);
        }
      }
}

void wick_f32_fully_connected__reference(int64_t m, int64_t n, int64_t k, const float *input,
                                         const float *weights, const float *bias, float *output,
                                         float lo, float hi) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = bias ? bias[j] : 0.0f;
      const float *a = input + i * k, *w = weights + j * k;
      for (int64_t p = 0; p < k; p++) acc += a[p] * w[p];
      output[i * n + j] = clampf(acc, lo, hi);
    }
}
