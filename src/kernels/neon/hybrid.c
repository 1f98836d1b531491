/*
 * neon/hybrid.c — the hybrid (dynamic-range) ops' vector kernels for AArch64
 * NEON, the kernel table's `hybrid_dwconv` and `hybrid_rescale` (avx2/hybrid.c's
 * counterparts, bit-identical to the same scalar code).
 *
 * hybrid_dwconv: the DEPTHWISE_CONV_2D rows (int8 filter, the float image
 * quantized to int8 per image; multiplier 1), bit-identical to wick_hybrid_depthwise_rows
 * (reference/hybrid.c): for each output pixel and each block of 16 channels, every in-bounds tap
 * widens 16 image bytes and 16 filter bytes to int16, subtracts the image's zero point
 * (|x - o| <= 255) and multiplies into four int32 accumulators held in registers (SMLAL /
 * SMLAL2: exact products, |w (x - o)| <= 32640). int32 additions wrap like the reference's
 * uint32 sums, and a wrapping sum does not depend on the order. The float stage is the
 * reference's expression, operation by operation (C11 mode keeps the compiler from fusing
 * the multiply and the add): acc * s_w * s_in (conv_rescale) or acc * (s_w * s_in), plus the
 * bias, then y < lo ? lo : (y > hi ? hi : y) as compares and selects (NaN kept as the
 * reference keeps it). Channel remainders: one block of 8, then scalar code.
 *
 * hybrid_rescale: the float rescale of one row of a hybrid GEMM's int32 sums (kernels.h
 * gives both orders), 4 columns per vector: the zero-point term wraps in 32 bits (MLS) as the
 * scalar code's uint32 arithmetic does, then the scalar expression's float operations one by
 * one, the missing bias of the FULLY_CONNECTED order included as the scalar code's 0.0f + ...
 */
#include <arm_neon.h>

#include "kernels/conv_taps.h"
#include "kernels/kernels.h"

#define INLINE static inline __attribute__((always_inline))

/* y < lo ? lo : (y > hi ? hi : y), lane by lane. */
INLINE float32x4_t clamp4(float32x4_t y, float32x4_t lo, float32x4_t hi) {
  const float32x4_t t = vbslq_f32(vcgtq_f32(y, hi), hi, y);
  return vbslq_f32(vcltq_f32(y, lo), lo, t);
}

typedef struct hdw_finish {
  const float *scales; /* per channel */
  float32x4_t input_scale, lo, hi;
  const float *bias; /* may be NULL */
  bool conv_rescale;
} hdw_finish;

/* The float stage of 4 channels starting at channel c. */
INLINE void finish4(const hdw_finish *f, int32x4_t acc, int64_t c, float *out) {
  const float32x4_t s = vld1q_f32(f->scales + c);
  float32x4_t y = vcvtq_f32_s32(acc);
  y = f->conv_rescale ? vmulq_f32(vmulq_f32(y, s), f->input_scale)
                      : vmulq_f32(y, vmulq_f32(s, f->input_scale));
  if (f->bias != NULL) y = vaddq_f32(y, vld1q_f32(f->bias + c));
  vst1q_f32(out + c, clamp4(y, f->lo, f->hi));
}

void wick_hybrid_dwconv__neon(const wick_conv_shape *s, const int8_t *input, int32_t input_offset,
                              float input_scale, const int8_t *filter, const float *filter_scales,
                              bool conv_rescale, const float *bias, float *output, float lo,
                              float hi, int32_t y0, int32_t y1) {
  const int64_t c = s->out_c;
  const hdw_finish f = {
      filter_scales, vdupq_n_f32(input_scale), vdupq_n_f32(lo), vdupq_n_f32(hi), bias,
      conv_rescale};
  const int16x8_t offset = vdupq_n_s16((int16_t)input_offset);
  for (int32_t oy = y0; oy < y1; oy++)
    for (int32_t ox = 0; ox < s->out_w; ox++) {
      float *out = output + ((int64_t)oy * s->out_w + ox) * c;
      const wick_conv_taps t = wick_conv_pixel_taps(s, oy, ox);
      int64_t ch = 0;
      for (; ch + 16 <= c; ch += 16) {
        int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
        for (int32_t ky = t.ky_begin; ky < t.ky_end; ky++) {
          for (int32_t kx = t.kx_begin; kx < t.kx_end; kx++) {
            const int8x16_t px = vld1q_s8(input + wick_conv_tap_pixel(s, &t, ky, kx) * c + ch);
            const int8x16_t w = vld1q_s8(filter + ((int64_t)ky * s->k_w + kx) * c + ch);
            const int16x8_t xl = vsubq_s16(vmovl_s8(vget_low_s8(px)), offset);
            const int16x8_t xh = vsubq_s16(vmovl_high_s8(px), offset);
            const int16x8_t wl = vmovl_s8(vget_low_s8(w)), wh = vmovl_high_s8(w);
            a0 = vmlal_s16(a0, vget_low_s16(wl), vget_low_s16(xl));
            a1 = vmlal_high_s16(a1, wl, xl);
            a2 = vmlal_s16(a2, vget_low_s16(wh), vget_low_s16(xh));
            a3 = vmlal_high_s16(a3, wh, xh);
          }
        }
        finish4(&f, a0, ch, out);
        finish4(&f, a1, ch + 4, out);
        finish4(&f, a2, ch + 8, out);
        finish4(&f, a3, ch + 12, out);
      }
      if (ch + 8 <= c) {
        int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
        for (int32_t ky = t.ky_begin; ky < t.ky_end; ky++) {
          for (int32_t kx = t.kx_begin; kx < t.kx_end; kx++) {
            const int8x8_t px = vld1_s8(input + wick_conv_tap_pixel(s, &t, ky, kx) * c + ch);
            const int8x8_t w = vld1_s8(filter + ((int64_t)ky * s->k_w + kx) * c + ch);
            const int16x8_t x = vsubq_s16(vmovl_s8(px), offset);
            const int16x8_t w16 = vmovl_s8(w);
            a0 = vmlal_s16(a0, vget_low_s16(w16), vget_low_s16(x));
            a1 = vmlal_high_s16(a1, w16, x);
          }
        }
        finish4(&f, a0, ch, out);
        finish4(&f, a1, ch + 4, out);
        ch += 8;
      }
      for (; ch < c; ch++)
        out[ch] = wick_hybrid_dw_channel(s, &t, filter, input, c, ch, input_offset, filter_scales,
                                         input_scale, conv_rescale, bias, lo, hi);
    }
}

void wick_hybrid_rescale__neon(size_t n, const int32_t *acc, const uint32_t *weight_sums,
                               uint32_t offset, const float *weight_scales, float row_scale,
                               bool conv_order, const float *bias, float lo, float hi, float *out) {
  const float32x4_t vrow = vdupq_n_f32(row_scale), vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  const int32x4_t voff = vdupq_n_s32((int32_t)offset);
  size_t c = 0;
  for (; c + 4 <= n; c += 4) {
    int32x4_t dot = vld1q_s32(acc + c);
    if (weight_sums != NULL)
      dot = vmlsq_s32(dot, vreinterpretq_s32_u32(vld1q_u32(weight_sums + c)), voff);
    const float32x4_t d = vcvtq_f32_s32(dot);
    float32x4_t y;
    if (conv_order) {
      y = vmulq_f32(vmulq_f32(d, vld1q_f32(weight_scales + c)), vrow);
      if (bias != NULL) y = vaddq_f32(y, vld1q_f32(bias + c));
    } else {
      const float32x4_t s =
          weight_scales != NULL ? vmulq_f32(vrow, vld1q_f32(weight_scales + c)) : vrow;
      y = vaddq_f32(bias != NULL ? vld1q_f32(bias + c) : vdupq_n_f32(0.0f), vmulq_f32(d, s));
    }
    vst1q_f32(out + c, clamp4(y, vlo, vhi));
  }
  for (; c < n; c++) {
    const uint32_t u = (uint32_t)acc[c] - (weight_sums != NULL ? weight_sums[c] * offset : 0u);
    const float d = (float)(int32_t)u;
    float y;
    if (conv_order) {
      y = d * weight_scales[c] * row_scale;
      if (bias != NULL) y += bias[c];
    } else {
      y = bias != NULL ? bias[c] : 0.0f;
      y += d * (weight_scales != NULL ? row_scale * weight_scales[c] : row_scale);
    }
    out[c] = y < lo ? lo : (y > hi ? hi : y);
  }
}
