/*
 * conv3d.c — reference CONV_3D and CONV_3D_TRANSPOSE (float32, NDHWC).
 *
 * CONV_3D is a direct loop over the output; taps outside the input are
 * skipped (zero padding). CONV_3D_TRANSPOSE is its adjoint in scatter form:
 * every input pixel adds input * filter into the output taps it reaches,
 * then the bias is added and the activation applied, as LiteRT's reference
 * kernel. Tap coordinates are computed in 64 bits (strides and dilations
 * come from the file).
 */
#include <string.h>

#include "kernels/reference/reference.h"

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

void wick_f32_conv3d__reference(const wick_conv3d_shape *s, const float *input, const float *filter,
                                const float *bias, float *output, float lo, float hi) {
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t z = 0; z < s->out_d; z++)
      for (int32_t y = 0; y < s->out_h; y++)
        for (int32_t x = 0; x < s->out_w; x++) {
          float *out =
              output + ((((int64_t)n * s->out_d + z) * s->out_h + y) * s->out_w + x) * s->out_c;
          for (int32_t o = 0; o < s->out_c; o++) {
            float acc = 0.0f;
            for (int32_t kz = 0; kz < s->k_d; kz++) {
              int64_t iz = (int64_t)z * s->stride_d - s->pad_front + (int64_t)kz * s->dilation_d;
              if (iz < 0 || iz >= s->in_d) continue;
              for (int32_t ky = 0; ky < s->k_h; ky++) {
                int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
                if (iy < 0 || iy >= s->in_h) continue;
                for (int32_t kx = 0; kx < s->k_w; kx++) {
                  int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
                  if (ix < 0 || ix >= s->in_w) continue;
                  const float *in =
                      input +
                      ((((int64_t)n * s->in_d + iz) * s->in_h + iy) * s->in_w + ix) * s->in_c;
                  const float *w =
                      filter + ((((int64_t)kz * s->k_h + ky) * s->k_w + kx) * s->in_c) * s->out_c +
                      o;
                  for (int32_t i = 0; i < s->in_c; i++) acc += in[i] * w[(int64_t)i * s->out_c];
                }
              }
            }
            out[o] = clampf(acc + (bias ? bias[o] : 0.0f), lo, hi);
          }
        }
}

void wick_f32_conv3d_transpose__reference(const wick_conv3d_shape *s, const float *input,
                                          const float *filter, const float *bias, float *output,
                                          float lo, float hi) {
  int64_t out_pixels = (int64_t)s->batch * s->out_d * s->out_h * s->out_w;
  memset(output, 0, (size_t)(out_pixels * s->out_c) * sizeof(float));
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t z = 0; z < s->in_d; z++)
      for (int32_t y = 0; y < s->in_h; y++)
        for (int32_t x = 0; x < s->in_w; x++) {
          const float *in =
              input + ((((int64_t)n * s->in_d + z) * s->in_h + y) * s->in_w + x) * s->in_c;
          for (int32_t kz = 0; kz < s->k_d; kz++) {
            int64_t oz = (int64_t)z * s->stride_d - s->pad_front + (int64_t)kz * s->dilation_d;
            if (oz < 0 || oz >= s->out_d) continue;
            for (int32_t ky = 0; ky < s->k_h; ky++) {
              int64_t oy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
              if (oy < 0 || oy >= s->out_h) continue;
              for (int32_t kx = 0; kx < s->k_w; kx++) {
                int64_t ox = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
                if (ox < 0 || ox >= s->out_w) continue;
                float *out =
                    output +
                    ((((int64_t)n * s->out_d + oz) * s->out_h + oy) * s->out_w + ox) * s->out_c;
                /* filter [k_d, k_h, k_w, out_c, in_c] */
                const float *w =
                    filter + (((int64_t)kz * s->k_h + ky) * s->k_w + kx) * s->out_c * s->in_c;
                for (int32_t o = 0; o < s->out_c; o++) {
                  float acc = 0.0f;
                  for (int32_t i = 0; i < s->in_c; i++) acc += in[i] * w[(int64_t)o * s->in_c + i];
                  out[o] += acc;
                }
              }
            }
          }
        }
  for (int64_t p = 0; p < out_pixels; p++)
    for (int32_t o = 0; o < s->out_c; o++) {
      float *v = &output[p * s->out_c + o];
      *v = clampf(*v + (bias ? bias[o] : 0.0f), lo, hi);
    }
}
