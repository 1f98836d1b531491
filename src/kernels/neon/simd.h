/*
 * neon/simd.h — the vector vocabulary of src/kernels/template/ for AArch64
 * NEON (4 floats): template/dwconv.h, template/quantize.h, template/elementwise.h,
 * template/resize.h and template/winograd.h are compiled with it. Same names and
 * semantics as avx512/simd.h (read that first), with one difference:
 *
 *   vmask   NEON has no masked loads or stores: a vmask is the number of
 *           lanes of a partial block, and vloadm / vstorem go through a
 *           4-float staging copy (channel counts in real models are almost
 *           always multiples of 4; the path exists for correctness).
 *
 * vmax / vmin keep the x86 instructions' semantics the templates are written
 * for (vmax(a, b) = a > b ? a : b: a NaN in either operand returns b, and
 * max(0, -0) is -0), a compare and a bit select: FMAX / FMIN would return NaN
 * for a NaN in either operand and order -0 below +0, so RELU(-0), a max pool
 * over NaN or a softmax row's NaN-skipping maximum would differ from the
 * reference kernels.
 *
 * Included only by this folder's .c files (NEON is part of the AArch64 base
 * ISA: no flags needed).
 */
#ifndef WICK_KERNELS_NEON_SIMD_H
#define WICK_KERNELS_NEON_SIMD_H

#include <arm_neon.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VL 4
#define ISA_SUFFIX(name) name##__neon
#define SIMD_INLINE static inline __attribute__((always_inline))

typedef float32x4_t vf;
typedef size_t vmask; /* lanes of a partial block, VL for a full one */

SIMD_INLINE vmask vmask_tail(size_t n) { return n < VL ? n : VL; }
SIMD_INLINE vmask vmask_all(void) { return VL; }
SIMD_INLINE vf vload(const float *p) { return vld1q_f32(p); }
SIMD_INLINE vf vloadm(const float *p, vmask m) {
  if (m >= VL) return vld1q_f32(p);
  float tmp[VL] = {0};
  memcpy(tmp, p, m * sizeof(float));
  return vld1q_f32(tmp);
}
SIMD_INLINE void vstore(float *p, vf v) { vst1q_f32(p, v); }
SIMD_INLINE void vstorem(float *p, vmask m, vf v) {
  if (m >= VL) {
    vst1q_f32(p, v);
    return;
  }
  float tmp[VL];
  vst1q_f32(tmp, v);
  memcpy(p, tmp, m * sizeof(float));
}
SIMD_INLINE vf vset1(float x) { return vdupq_n_f32(x); }
SIMD_INLINE vf vfma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); } /* a*b + c */
SIMD_INLINE vf vmax(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
SIMD_INLINE vf vmin(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }

/* ---- template/quantize.h ---- */

typedef uint32x4_t vbool; /* all-ones lanes where true */

SIMD_INLINE vf vzero(void) { return vdupq_n_f32(0.0f); }
SIMD_INLINE vf vadd(vf a, vf b) { return vaddq_f32(a, b); }
SIMD_INLINE vf vsub(vf a, vf b) { return vsubq_f32(a, b); }
SIMD_INLINE vf vmul(vf a, vf b) { return vmulq_f32(a, b); }
SIMD_INLINE vf vdiv(vf a, vf b) { return vdivq_f32(a, b); }
/* Round toward zero. */
SIMD_INLINE vf vtrunc(vf a) { return vrndq_f32(a); }
/* Ordered compares: false when either operand is NaN. */
SIMD_INLINE vbool vge(vf a, vf b) { return vcgeq_f32(a, b); }
SIMD_INLINE vbool vle(vf a, vf b) { return vcleq_f32(a, b); }
SIMD_INLINE vbool vlt(vf a, vf b) { return vcltq_f32(a, b); }
SIMD_INLINE vbool visnan(vf a) { return vmvnq_u32(vceqq_f32(a, a)); }
SIMD_INLINE vf vselect(vbool c, vf t, vf f) { return vbslq_f32(c, t, f); }
/* The first n <= VL lanes of v (integral, in [-128, 255]) stored as the low
 * bytes of their int32 values: int8 or uint8 alike. */
SIMD_INLINE void vstore_bytes(void *p, vf v, size_t n) {
  const int16x4_t h = vmovn_s32(vcvtnq_s32_f32(v));
  uint8_t tmp[8];
  vst1_u8(tmp, vreinterpret_u8_s8(vmovn_s16(vcombine_s16(h, h))));
  memcpy(p, tmp, n < VL ? n : VL);
}
/* The first n <= VL lanes (integral, inside int16) as int16. */
SIMD_INLINE void vstore_i16(int16_t *p, vf v, size_t n) {
  const int16x4_t h = vmovn_s32(vcvtnq_s32_f32(v));
  if (n >= VL) {
    vst1_s16(p, h);
  } else {
    int16_t tmp[4];
    vst1_s16(tmp, h);
    memcpy(p, tmp, n * sizeof(int16_t));
  }
}
/* n <= VL int16 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_i16(const int16_t *p, size_t n) {
  int16_t tmp[4] = {0};
  memcpy(tmp, p, (n < VL ? n : VL) * sizeof(int16_t));
  return vcvtq_f32_s32(vmovl_s16(vld1_s16(tmp)));
}
/* n <= VL int8 or uint8 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_bytes(const void *p, size_t n, bool is_unsigned) {
  uint8_t tmp[8] = {0};
  memcpy(tmp, p, n < VL ? n : VL);
  const uint8x8_t b = vld1_u8(tmp);
  const int16x8_t w =
      is_unsigned ? vreinterpretq_s16_u16(vmovl_u8(b)) : vmovl_s8(vreinterpret_s8_u8(b));
  return vcvtq_f32_s32(vmovl_s16(vget_low_s16(w)));
}

/* ---- template/elementwise.h, template/resize.h, template/winograd.h ---- */

SIMD_INLINE vf vfnma(vf a, vf b, vf c) { return vfmsq_f32(c, a, b); } /* c - a*b */
SIMD_INLINE vf vabs(vf a) { return vabsq_f32(a); }                    /* clears the sign bit */
SIMD_INLINE vf vneg(vf a) { return vnegq_f32(a); }                    /* flips the sign bit */
SIMD_INLINE vf vsqrt(vf a) { return vsqrtq_f32(a); }
/* Round to nearest, ties to even. */
SIMD_INLINE vf vround(vf a) { return vrndnq_f32(a); }
/* v * 2^n for integral n, as two exact power-of-two factors 2^n1 * 2^n2 (avx2/simd.h's
 * vscale2: n clamped to [-250, 250], n1 = floor(n/2), n2 = n - n1, each a normal float), so
 * the result is rounded once whenever v * 2^n1 is normal: always for exp's |v| in [0.5, 2].
 * NaN stays NaN. */
SIMD_INLINE vf vscale2(vf v, vf n) {
  n = vminq_f32(vdupq_n_f32(250.0f), vmaxq_f32(vdupq_n_f32(-250.0f), n));
  const int32x4_t ni = vcvtnq_s32_f32(n);
  const int32x4_t n1 = vshrq_n_s32(ni, 1);
  const int32x4_t n2 = vsubq_s32(ni, n1);
  const int32x4_t bias = vdupq_n_s32(127);
  const vf s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
  const vf s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
  return vmulq_f32(vmulq_f32(v, s1), s2);
}
/* Sign bit of `s` on the magnitude of `m`. */
SIMD_INLINE vf vcopysign(vf m, vf s) { return vbslq_f32(vdupq_n_u32(0x80000000u), s, m); }
SIMD_INLINE vbool vgt(vf a, vf b) { return vcgtq_f32(a, b); }
SIMD_INLINE vbool vor(vbool a, vbool b) { return vorrq_u32(a, b); }
SIMD_INLINE bool vany(vbool a) { return vmaxvq_u32(a) != 0; }
/* 2^n for t = n + 1.5 * 2^23 (float) with integral n in [-126, 127]: t's
 * low mantissa bits are 2^22 + n, and (bits + 127) << 23 keeps n + 127 as
 * the exponent field. */
SIMD_INLINE vf vpow2_magic(vf t) {
  return vreinterpretq_f32_s32(
      vshlq_n_s32(vaddq_s32(vreinterpretq_s32_f32(t), vdupq_n_s32(127)), 23));
}
SIMD_INLINE float vreduce_add(vf a) { return vaddvq_f32(a); }
SIMD_INLINE float vreduce_max(vf a) { return vmaxvq_f32(a); }

#endif /* WICK_KERNELS_NEON_SIMD_H */
