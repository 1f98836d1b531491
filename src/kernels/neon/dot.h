/*
 * neon/dot.h — the 16-byte int8 dot step of the AArch64 kernels written once for two
 * builds (neon/q8_dots.h, neon/q4_blocks.h): with the ARMv8.2 dot-product extension
 * (__ARM_FEATURE_DOTPROD: the neondot/ folder's flags) one SDOT; without it two widening
 * multiplies (SMULL / SMULL2: products of int8 fit int16) and two pairwise adds into the
 * int32 lanes (SADALP). Either way each int32 lane gains the exact sum of four products
 * (wrapping, as int32 sums do, in any order).
 */
#ifndef WICK_KERNELS_NEON_DOT_H
#define WICK_KERNELS_NEON_DOT_H

#include <arm_neon.h>

#ifdef __ARM_FEATURE_DOTPROD
static inline __attribute__((always_inline)) int32x4_t wick_neon_dot16(int32x4_t acc, int8x16_t a,
                                                                       int8x16_t b) {
  return vdotq_s32(acc, a, b);
}
#else
static inline __attribute__((always_inline)) int32x4_t wick_neon_dot16(int32x4_t acc, int8x16_t a,
                                                                       int8x16_t b) {
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
  return vpadalq_s16(acc, vmull_high_s8(a, b));
}
#endif

#endif /* WICK_KERNELS_NEON_DOT_H */
