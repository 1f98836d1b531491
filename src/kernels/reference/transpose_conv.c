/*
 * transpose_conv.c — reference TRANSPOSE_CONV (float), written in gather form.
 *
 * A transpose conv scatters every input pixel through the filter into the
 * output: input (iy, ix) feeds output (iy*stride - pad + ky, ...). Here each
 * output pixel gathers instead, visiting the taps (ky, kx) whose source
 * position y + pad - ky is a non-negative multiple of the stride inside the
 * input. Gathering writes every output element exactly once (no zeroing, no
 * read-modify-write) and fixes the summation order (ky, kx, input channel),
 * so results do not depend on threading. The bias is added after the sum and
 * the fused activation clamps last, as LiteRT does.
 *
 *   input  [N, in_h,  in_w,  in_c]
 *   filter [out_c, k_h, k_w, in_c]   (OHWI)
 *   output [N, out_h, out_w, out_c]
 */
#include "kernels/reference/reference.h"

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

void wick_f32_transpose_conv2d__reference(const wick_conv_shape *s, const float *input,
                                          const float *filter, const float *bias, float *output,
                                          float lo, float hi) {
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++) {
        float *out = output + (((int64_t)n * s->out_h + y) * s->out_w + x) * s->out_c;
        for (int32_t o = 0; o < s->out_c; o++) {
          float acc = 0.0f;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            int32_t iy = wick_tconv_source_index(y, ky, s->pad_top, s->stride_h, s->in_h);
            if (iy < 0) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              int32_t ix = wick_tconv_source_index(x, kx, s->pad_left, s->stride_w, s->in_w);
              if (ix < 0) continue;
              const float *in = input + (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c;
              const float *w = filter + (((int64_t)o * s->k_h + ky) * s->k_w + kx) * s->in_c;
              for (int32_t i = 0; i < s->in_c; i++) acc += in[i] * w[i];
            }
          }
          if (bias) acc += bias[o];
          out[o] = clampf(acc, lo, hi);
        }
      }
}
