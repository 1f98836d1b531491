/*
 * neon/simd.h — the vector vocabulary of src/kernels/template/ for AArch64
 * NEON (4 floats), as far as template/dwconv.h and template/quantize.h need
 * it (the elementwise template is not built for NEON). Same names and semantics as
 * avx512/simd.h (read that first), with two differences:
 *
 *   vmask   NEON has no masked loads or stores: a vmask is the number of
 *           lanes of a partial block, and vloadm / vstorem go through a
 *           4-float staging copy (channel counts in real models are almost
 *           always multiples of 4; the path exists for correctness).
 *   vmax / vmin are FMAX / FMIN: a NaN in either operand propagates (the
 *           templates only rely on a NaN in the second one passing through).
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
SIMD_INLINE vf vmax(vf a, vf b) { return vmaxq_f32(a, b); }
SIMD_INLINE vf vmin(vf a, vf b) { return vminq_f32(a, b); }

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
/* n <= VL int8 or uint8 values as floats (lanes past n: 0). */
SIMD_INLINE vf vload_bytes(const void *p, size_t n, bool is_unsigned) {
  uint8_t tmp[8] = {0};
  memcpy(tmp, p, n < VL ? n : VL);
  const uint8x8_t b = vld1_u8(tmp);
  const int16x8_t w =
      is_unsigned ? vreinterpretq_s16_u16(vmovl_u8(b)) : vmovl_s8(vreinterpret_s8_u8(b));
  return vcvtq_f32_s32(vmovl_s16(vget_low_s16(w)));
}

#endif /* WICK_KERNELS_NEON_SIMD_H */
