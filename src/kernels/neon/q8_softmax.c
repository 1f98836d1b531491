/*
 * neon/q8_softmax.c — q8_softmax.c's 8-bit SOFTMAX rows for AArch64 Advanced
 * SIMD (avx2/q8_softmax.c's counterpart): the row maximum 16 bytes at a time
 * (SMAX / UMAX, then across the lanes), the differences d = max - x as bytes
 * (in [0, 255]: a byte subtraction modulo 256 is exact), the row sum of the
 * op's sums[d] table (NEON has no gather: table loads, wrapping uint32 sums
 * as the reference's), the reference's reciprocal (wick_q_softmax_row_scale,
 * scalar), then per element the fused roundings floor((S * exps[d] + K) /
 * 2^sh) as 64-bit unsigned products (UMULL / UMULL2) and shifts, + the
 * output minimum, clamped, narrowed. Exact for S >= 0, which every row
 * shorter than 4096 elements has; a row whose scale comes out negative runs
 * the reference kernel. Both AArch64 int8 tables use it.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))

/* The row's maximum (as int32: the byte read signed, or unsigned when u8). */
INLINE int32_t row_max(const uint8_t *x, size_t cols, bool u8) {
  int32_t max = u8 ? 0 : -128;
  size_t c = 0;
  if (cols >= 16) {
    if (u8) {
      uint8x16_t m = vld1q_u8(x);
      for (c = 16; c + 16 <= cols; c += 16) m = vmaxq_u8(m, vld1q_u8(x + c));
      max = vmaxvq_u8(m);
    } else {
      int8x16_t m = vld1q_s8((const int8_t *)x);
      for (c = 16; c + 16 <= cols; c += 16) m = vmaxq_s8(m, vld1q_s8((const int8_t *)x + c));
      max = vmaxvq_s8(m);
    }
  }
  for (; c < cols; c++) {
    const int32_t v = u8 ? x[c] : (int8_t)x[c];
    max = v > max ? v : max;
  }
  return max;
}

/* 4 outputs (int32 lanes) of exps e: floor((s * e + k) / 2^sh) + omin, at most omax. */
INLINE int32x4_t outputs4(uint32x4_t e, uint32x2_t s, uint64x2_t k, int64x2_t neg_sh,
                          int32x4_t omin, int32x4_t omax) {
  const uint64x2_t lo = vshlq_u64(vaddq_u64(vmull_u32(vget_low_u32(e), s), k), neg_sh);
  const uint64x2_t hi = vshlq_u64(vaddq_u64(vmull_u32(vget_high_u32(e), s), k), neg_sh);
  const int32x4_t v = vreinterpretq_s32_u32(vcombine_u32(vmovn_u64(lo), vmovn_u64(hi)));
  return vminq_s32(vaddq_s32(v, omin), omax);
}

/* exps[d[0..3]] as one vector. */
INLINE uint32x4_t gather4(const int32_t *exps, const uint8_t *d) {
  const uint32_t e[4] = {(uint32_t)exps[d[0]], (uint32_t)exps[d[1]], (uint32_t)exps[d[2]],
                         (uint32_t)exps[d[3]]};
  return vld1q_u32(e);
}

INLINE void rows_body(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
                      wick_dtype in_t, wick_dtype out_t, size_t rows, size_t cols, const void *in,
                      void *out) {
  const bool u8 = in_t == WICK_DTYPE_UINT8, wide = out_t == WICK_DTYPE_INT16;
  const int32_t lo = wide ? INT16_MIN : (out_t == WICK_DTYPE_UINT8 ? 0 : -128);
  const int32_t hi = wide ? INT16_MAX : (out_t == WICK_DTYPE_UINT8 ? 255 : 127);
  const size_t osize = wide ? 2 : 1;
  const int32x4_t omin = vdupq_n_s32(lo), omax = vdupq_n_s32(hi);
  for (size_t r = 0; r < rows; r++) {
    const uint8_t *x = (const uint8_t *)in + r * cols;
    uint8_t *o = (uint8_t *)out + r * cols * osize;
    const int32_t max = row_max(x, cols, u8);
    const uint8x16_t vmax = vdupq_n_u8((uint8_t)max);
    uint32_t sum = 0;
    for (size_t c = 0; c < cols; c++) sum += (uint32_t)sums[max - (u8 ? x[c] : (int8_t)x[c])];
    int32_t scale, e;
    wick_q_softmax_row_scale((int32_t)sum, wide ? 16 : 8, &scale, &e);
    if (scale < 0) {
      wick_q_softmax__reference(in_t, out_t, 1, (int64_t)cols, p, x, o);
      continue;
    }
    const uint32x2_t s = vdup_n_u32((uint32_t)scale);
    const uint64x2_t k = vdupq_n_u64(((uint64_t)1 << 30) + (e > 0 ? (uint64_t)1 << (30 + e) : 0));
    const int64x2_t neg_sh = vdupq_n_s64(-(31 + e));
    for (size_t c = 0; c < cols; c += 16) {
      const size_t n = cols - c < 16 ? cols - c : 16;
      uint8_t t[16], d[16];
      const uint8_t *src = x + c;
      if (n < 16) { /* the tail: padded with the maximum (d = 0), outputs dropped */
        memset(t, (int)(uint8_t)max, 16);
        memcpy(t, x + c, n);
        src = t;
      }
      vst1q_u8(d, vsubq_u8(vmax, vld1q_u8(src)));
      const int32x4_t v0 = outputs4(gather4(exps, d), s, k, neg_sh, omin, omax);
      const int32x4_t v1 = outputs4(gather4(exps, d + 4), s, k, neg_sh, omin, omax);
      const int32x4_t v2 = outputs4(gather4(exps, d + 8), s, k, neg_sh, omin, omax);
      const int32x4_t v3 = outputs4(gather4(exps, d + 12), s, k, neg_sh, omin, omax);
      const int16x8_t h0 = vcombine_s16(vqmovn_s32(v0), vqmovn_s32(v1));
      const int16x8_t h1 = vcombine_s16(vqmovn_s32(v2), vqmovn_s32(v3));
      if (wide) {
        int16_t w[16];
        vst1q_s16(w, h0);
        vst1q_s16(w + 8, h1);
        memcpy(o + c * 2, w, n * 2);
      } else {
        uint8_t b[16];
        if (out_t == WICK_DTYPE_UINT8)
          vst1q_u8(b, vcombine_u8(vqmovun_s16(h0), vqmovun_s16(h1)));
        else
          vst1q_s8((int8_t *)b, vcombine_s8(vqmovn_s16(h0), vqmovn_s16(h1)));
        memcpy(o + c, b, n);
      }
    }
  }
}

void wick_q8_softmax_rows__neon(const int32_t exps[256], const int32_t sums[256],
                                const wick_qsoftmax_params *p, wick_dtype in_type,
                                wick_dtype out_type, size_t rows, size_t cols, const void *in,
                                void *out) {
  if (out_type == WICK_DTYPE_INT8)
    rows_body(exps, sums, p, in_type, WICK_DTYPE_INT8, rows, cols, in, out);
  else if (out_type == WICK_DTYPE_UINT8)
    rows_body(exps, sums, p, in_type, WICK_DTYPE_UINT8, rows, cols, in, out);
  else
    rows_body(exps, sums, p, in_type, WICK_DTYPE_INT16, rows, cols, in, out);
}
