/*
 * neon/simd.h — the vector vocabulary of src/kernels/template/ for AArch64
 * NEON (4 floats), as far as template/dwconv.h needs it (the elementwise
 * template is not built for NEON). Same names and semantics as
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

#endif /* WICK_KERNELS_NEON_SIMD_H */
