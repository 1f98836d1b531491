/*
 * neon/q16_activations.c — int16 LOGISTIC and TANH for AArch64 Advanced SIMD
 * (avx2/q16_activations.c's counterpart), 4 elements per vector, the
 * reference's arithmetic (wick_q16_logistic__reference /
 * wick_q16_tanh__reference) lane by lane: the input rescaled to steps of
 * 1/12288 (x * multiplier + half >> shift: the op's multipliers keep
 * 32768 * multiplier + half inside int32, so 32-bit lanes are exact), the
 * table node and its neighbour loaded from the table widened to int32 (NEON
 * has no gather: one load per lane), the linear interpolation in wrapping
 * 32-bit lanes (as the reference's uint32 / int32 arithmetic), the saturated
 * top, the odd symmetry and the final shift. Both AArch64 int8 tables use it.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))

/* table[i[0..3]] as one vector. */
INLINE int32x4_t gather4(const int32_t *table, uint32x4_t i) {
  const int32_t v[4] = {table[vgetq_lane_u32(i, 0)], table[vgetq_lane_u32(i, 1)],
                        table[vgetq_lane_u32(i, 2)], table[vgetq_lane_u32(i, 3)]};
  return vld1q_s32(v);
}

/* 4 results (int32 lanes inside int16) from 4 inputs. */
INLINE int32x4_t sigmoid4(int32x4_t xin, const int32_t *table, int32x4_t m, int32x4_t half,
                          int32x4_t neg_shift, bool tanh) {
  const int32x4_t x = vshlq_s32(vaddq_s32(vmulq_s32(xin, m), half), neg_shift);
  const uint32x4_t ax = vreinterpretq_u32_s32(vabsq_s32(x)); /* |INT32_MIN| = 2^31 unsigned */
  const uint32x4_t node = tanh ? vshrq_n_u32(ax, 8) : vshrq_n_u32(ax, 9);
  const uint32x4_t top = vcgtq_u32(node, vdupq_n_u32(254));
  const uint32x4_t at = vminq_u32(node, vdupq_n_u32(254));
  const int32x4_t a = gather4(table, at);
  const int32x4_t b = gather4(table + 1, at);
  const int32x4_t frac = vreinterpretq_s32_u32(vandq_u32(ax, vdupq_n_u32(tanh ? 0xFF : 0x1FF)));
  int32x4_t r = vmlaq_s32(tanh ? vshlq_n_s32(a, 8) : vshlq_n_s32(a, 9), frac, vsubq_s32(b, a));
  r = vbslq_s32(top, vdupq_n_s32(tanh ? 0xFFFF << 8 : 0x7FFF << 10), r);
  const uint32x4_t negative = vcltq_s32(x, vdupq_n_s32(0));
  if (tanh) {
    const int32x4_t pos = vaddq_s32(r, vdupq_n_s32(-(1 << 23) + (1 << 7)));
    const int32x4_t neg = vsubq_s32(vdupq_n_s32((1 << 23) + (1 << 7) - 1), r);
    return vshrq_n_s32(vbslq_s32(negative, neg, pos), 8); /* floor division */
  }
  const int32x4_t pos = vaddq_s32(r, vdupq_n_s32(1 << 9));
  const int32x4_t neg = vsubq_s32(vdupq_n_s32((1 << 25) + (1 << 9) - 1), r);
  return vreinterpretq_s32_u32(
      vshrq_n_u32(vreinterpretq_u32_s32(vbslq_s32(negative, neg, pos)), 10));
}

/* 8 results from 8 inputs. */
INLINE int16x8_t sigmoid8(int16x8_t v, const int32_t *table, int32x4_t m, int32x4_t half,
                          int32x4_t neg_shift, bool tanh) {
  const int32x4_t lo = sigmoid4(vmovl_s16(vget_low_s16(v)), table, m, half, neg_shift, tanh);
  const int32x4_t hi = sigmoid4(vmovl_high_s16(v), table, m, half, neg_shift, tanh);
  return vcombine_s16(vqmovn_s32(lo), vqmovn_s32(hi));
}

INLINE void run(size_t n, const int32_t *table, int32_t multiplier, int32_t shift,
                const int16_t *in, int16_t *out, bool tanh) {
  const int32x4_t m = vdupq_n_s32(multiplier);
  const int32x4_t half = vdupq_n_s32(shift > 0 ? 1 << (shift - 1) : 0);
  const int32x4_t neg_shift = vdupq_n_s32(-shift);
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    vst1q_s16(out + i, sigmoid8(vld1q_s16(in + i), table, m, half, neg_shift, tanh));
  if (i < n) {
    int16_t t[8] = {0}, r[8];
    memcpy(t, in + i, (n - i) * 2);
    vst1q_s16(r, sigmoid8(vld1q_s16(t), table, m, half, neg_shift, tanh));
    memcpy(out + i, r, (n - i) * 2);
  }
}

void wick_q16_sigmoid__neon(size_t n, const int32_t table[256], int32_t multiplier, int32_t shift,
                            bool tanh, const int16_t *in, int16_t *out) {
  if (tanh)
    run(n, table, multiplier, shift, in, out, true);
  else
    run(n, table, multiplier, shift, in, out, false);
}
