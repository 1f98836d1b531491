/*
 * neon/q8_requant.h — the output stage of the AArch64 int8 kernels, four
 * int32 lanes per vector (included by neon/q8_gemm.h and neon/q8_dwconv.c;
 * plain Advanced SIMD, so both the NEON and the NEON dot-product builds use
 * it). Bit-exact with the reference kernels' scalar arithmetic
 * (src/kernels/reference/quantized.c):
 *
 *   x << ls      SSHL: wraps like the reference's uint32 shift, and gives 0
 *                for ls >= 32 as the reference does (ls capped at 32 so the
 *                shift byte cannot wrap).
 *   srdhm(x, m)  SQRDMULH: sat((2*x*m + 2^31) >> 32) = floor((x*m + 2^30) /
 *                2^31), which equals the reference's truncated, nudged
 *                quotient; the one overflow (INT32_MIN squared) saturates to
 *                INT32_MAX in both.
 *   rdivpot(r, e) SRSHL by -e rounds half up; subtracting 1 from negative r
 *                first (when e > 0) turns that into half away from zero:
 *                floor((r - 1 + 2^(e-1)) / 2^e) = q + (rem > 2^(e-1)) for
 *                r = q*2^e + rem, the reference's threshold for r < 0. The
 *                subtraction saturates only at r = INT32_MIN, which srdhm
 *                never returns for m >= 0. e is capped at 63 (the result is
 *                0 or -1 from 32 on in both; SRSHL's shift is one signed byte).
 *   FULLY_CONNECTED: (double)acc * scale, truncated, +-1 when the remainder
 *                is at least one half (half away from zero), saturated to
 *                int32 — the reference's steps in float64x2 lanes.
 * Then + output zero point (wrapping) and the clamp.
 */
#ifndef WICK_KERNELS_NEON_Q8_REQUANT_H
#define WICK_KERNELS_NEON_Q8_REQUANT_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/q8.h"

#define Q8_INLINE static inline __attribute__((always_inline))

/* The requantization of four channels, loaded once per panel or block. */
typedef struct q8_rq4 {
  int32x4_t m, ls, neg_rs;
} q8_rq4;

/* `h` points at the four lanes' bias' in a packed header whose rows (bias,
 * multiplier, odd multiplier, left shift, right shift) are `stride` int32
 * apart (q8.h). */
Q8_INLINE q8_rq4 q8_rq4_load(const int32_t *h, size_t stride) {
  q8_rq4 q;
  q.m = vld1q_s32(h + stride);
  q.ls = vminq_s32(vld1q_s32(h + 3 * stride), vdupq_n_s32(32));
  q.neg_rs = vnegq_s32(vminq_s32(vld1q_s32(h + 4 * stride), vdupq_n_s32(63)));
  return q;
}

/* + zero point (wrapping), clamp to [lo, hi]. */
Q8_INLINE int32x4_t q8_clamp4(int32x4_t v, const wick_q8_output *o) {
  v = vaddq_s32(v, vdupq_n_s32(o->zero_point));
  return vminq_s32(vmaxq_s32(v, vdupq_n_s32(o->lo)), vdupq_n_s32(o->hi));
}

/* mbqm(x, m, s) lane by lane (no zero point). */
Q8_INLINE int32x4_t q8_mbqm4(int32x4_t x, const q8_rq4 *q) {
  x = vqrdmulhq_s32(vshlq_s32(x, q->ls), q->m);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, q->neg_rs), 31);
  return vrshlq_s32(vqaddq_s32(x, fixup), q->neg_rs);
}

/* The fixed-point requantization, + zero point, clamped: int32 lanes. */
Q8_INLINE int32x4_t q8_requant4(int32x4_t x, const q8_rq4 *q, const wick_q8_output *o) {
  return q8_clamp4(q8_mbqm4(x, q), o);
}

/* FULLY_CONNECTED's double rounding of two accumulators. */
Q8_INLINE int64x2_t q8_round_fc2(int64x2_t acc, const double *scale) {
  const float64x2_t x = vmulq_f64(vcvtq_f64_s64(acc), vld1q_f64(scale));
  float64x2_t t = vrndq_f64(x); /* toward zero */
  const float64x2_t d = vsubq_f64(x, t), one = vdupq_n_f64(1.0);
  t = vaddq_f64(t, vreinterpretq_f64_u64(
                       vandq_u64(vcgeq_f64(d, vdupq_n_f64(0.5)), vreinterpretq_u64_f64(one))));
  t = vsubq_f64(t, vreinterpretq_f64_u64(
                       vandq_u64(vcleq_f64(d, vdupq_n_f64(-0.5)), vreinterpretq_u64_f64(one))));
  t = vminq_f64(vmaxq_f64(t, vdupq_n_f64(-2147483648.0)), vdupq_n_f64(2147483647.0));
  return vcvtq_s64_f64(t);
}

/* FULLY_CONNECTED's requantization of four accumulators (`scale` has four
 * readable entries), + zero point, clamped. */
Q8_INLINE int32x4_t q8_requant_fc4(int32x4_t x, const double *scale, const wick_q8_output *o) {
  const int64x2_t lo = q8_round_fc2(vmovl_s32(vget_low_s32(x)), scale);
  const int64x2_t hi = q8_round_fc2(vmovl_high_s32(x), scale + 2);
  return q8_clamp4(vcombine_s32(vmovn_s64(lo), vmovn_s64(hi)), o);
}

/* Four clamped int32 vectors (inside int8) -> 16 int8 in order. */
Q8_INLINE int8x16_t q8_narrow16(int32x4_t v0, int32x4_t v1, int32x4_t v2, int32x4_t v3) {
  const int16x8_t a = vcombine_s16(vmovn_s32(v0), vmovn_s32(v1));
  const int16x8_t b = vcombine_s16(vmovn_s32(v2), vmovn_s32(v3));
  return vcombine_s8(vmovn_s16(a), vmovn_s16(b));
}

/* Stores the first n (<= 16) bytes of v. */
Q8_INLINE void q8_store_n(int8_t *p, int8x16_t v, size_t n) {
  if (n >= 16) {
    vst1q_s8(p, v);
    return;
  }
  int8_t tmp[16];
  vst1q_s8(tmp, v);
  memcpy(p, tmp, n);
}

#endif /* WICK_KERNELS_NEON_Q8_REQUANT_H */
