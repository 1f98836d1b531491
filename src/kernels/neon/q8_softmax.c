/*
 * neon/q8_softmax.c — q8_softmax.c's 8-bit SOFTMAX rows for AArch64 Advanced
 * SIMD (avx2/q8_softmax.c's counterpart): the row maximum 16 bytes at a time
 * (SMAX / UMAX, then across the lanes), the differences d = max - x as bytes
 * (in [0, 255]: a byte subtraction modulo 256 is exact), the exps[d] by table
 * loads (NEON has no gather), then per element the fused roundings
 * floor((S * exps[d] + K) / 2^sh) as 64-bit unsigned products (UMULL /
 * UMULL2) and shifts, + the output minimum, clamped, narrowed. Rows of up to
 * BLOCK_COLS elements go in blocks of BLOCK_ROWS, their exps kept in a
 * buffer: each row's sum from them (sums[d] = rdivpot(exps[d], 12) =
 * (e + 2^11) >> 12 for e >= 0), and the block's reciprocals by the
 * reference's Newton-Raphson on 4 lanes (SQRDMULH is gemmlowp's SRDHM, SQSHL
 * its saturating shift). Longer rows sum the sums[d] table and reload the
 * exps. Exact for S >= 0, which every row shorter than 4096 elements has; a
 * row whose scale comes out negative runs the reference kernel. Both AArch64
 * int8 tables use it.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))
#define BLOCK_ROWS 8
#define BLOCK_COLS 256

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

/* 1 / (1 + a) for a in [0, 1), Q0.31, on 4 lanes: the reference's one_over_one_plus_x. */
INLINE int32x4_t one_over_one_plus_x4(int32x4_t a) {
  /* (a + INT32_MAX + sign) / 2: (a + 2^31) / 2 from the biased value, -1 for a = INT32_MIN */
  const uint32x4_t biased = veorq_u32(vreinterpretq_u32_s32(a), vdupq_n_u32(0x80000000u));
  const int32x4_t half_denominator = vreinterpretq_s32_u32(
      vorrq_u32(vshrq_n_u32(biased, 1), vceqq_s32(a, vdupq_n_s32(INT32_MIN))));
  int32x4_t x =
      vaddq_s32(vdupq_n_s32(1515870810), vqrdmulhq_s32(half_denominator, vdupq_n_s32(-1010580540)));
  for (int i = 0; i < 3; i++) {
    const int32x4_t one_minus = vsubq_s32(vdupq_n_s32(1 << 29), vqrdmulhq_s32(half_denominator, x));
    x = vaddq_s32(x, vqshlq_n_s32(vqrdmulhq_s32(x, one_minus), 2));
  }
  return vqshlq_n_s32(x, 1);
}

/* wick_q_softmax_row_scale of 8 row sums. */
INLINE void row_scales8(const uint32_t sum[BLOCK_ROWS], int32_t out_bits, int32_t scale[BLOCK_ROWS],
                        int32_t exponent[BLOCK_ROWS]) {
  int32_t a[BLOCK_ROWS];
  for (int i = 0; i < BLOCK_ROWS; i++) {
    const int32_t headroom_plus_one = sum[i] == 0 ? 32 : __builtin_clz(sum[i]);
    a[i] = (int32_t)(((uint64_t)sum[i] << headroom_plus_one) - ((uint64_t)1 << 31));
    exponent[i] = 12 - headroom_plus_one + 31 - out_bits;
  }
  vst1q_s32(scale, one_over_one_plus_x4(vld1q_s32(a)));
  vst1q_s32(scale + 4, one_over_one_plus_x4(vld1q_s32(a + 4)));
  for (int i = 0; i < BLOCK_ROWS; i++) {
    if (exponent[i] > 31) scale[i] = exponent[i] = 0; /* see wick_q_softmax_row_scale */
    if (exponent[i] < 0) exponent[i] = 0;
  }
}

/* One row's outputs from its exps e[0 .. cols) and the row's scale. */
INLINE void row_outputs(const int32_t *e, size_t cols, int32_t scale, int32_t exponent,
                        wick_dtype out_t, int32x4_t omin, int32x4_t omax, int32_t lo, int32_t hi,
                        uint8_t *o) {
  const uint64_t k64 = ((uint64_t)1 << 30) + (exponent > 0 ? (uint64_t)1 << (30 + exponent) : 0);
  const uint32x2_t s = vdup_n_u32((uint32_t)scale);
  const uint64x2_t k = vdupq_n_u64(k64);
  const int64x2_t neg_sh = vdupq_n_s64(-(31 + exponent));
  const uint32_t *eu = (const uint32_t *)(const void *)e;
  size_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    const int32x4_t v0 = outputs4(vld1q_u32(eu + c), s, k, neg_sh, omin, omax);
    const int32x4_t v1 = outputs4(vld1q_u32(eu + c + 4), s, k, neg_sh, omin, omax);
    const int32x4_t v2 = outputs4(vld1q_u32(eu + c + 8), s, k, neg_sh, omin, omax);
    const int32x4_t v3 = outputs4(vld1q_u32(eu + c + 12), s, k, neg_sh, omin, omax);
    const int16x8_t h0 = vcombine_s16(vqmovn_s32(v0), vqmovn_s32(v1));
    const int16x8_t h1 = vcombine_s16(vqmovn_s32(v2), vqmovn_s32(v3));
    if (out_t == WICK_DTYPE_INT16) {
      vst1q_s16((int16_t *)(void *)(o + 2 * c), h0);
      vst1q_s16((int16_t *)(void *)(o + 2 * c + 16), h1);
    } else if (out_t == WICK_DTYPE_UINT8) {
      vst1q_u8(o + c, vcombine_u8(vqmovun_s16(h0), vqmovun_s16(h1)));
    } else {
      vst1q_s8((int8_t *)(void *)(o + c), vcombine_s8(vqmovn_s16(h0), vqmovn_s16(h1)));
    }
  }
  for (; c < cols; c++) {
    int32_t v = (int32_t)(((uint64_t)(uint32_t)scale * eu[c] + k64) >> (31 + exponent)) + lo;
    v = v > hi ? hi : v;
    if (out_t == WICK_DTYPE_INT16) {
      const int16_t h = (int16_t)v;
      memcpy(o + 2 * c, &h, sizeof h);
    } else {
      o[c] = (uint8_t)v;
    }
  }
}

/* Rows of at most BLOCK_COLS elements, BLOCK_ROWS at a time. */
INLINE void short_rows(const int32_t *exps, const wick_qsoftmax_params *p, wick_dtype in_t,
                       wick_dtype out_t, size_t rows, size_t cols, const void *in, void *out) {
  const bool u8 = in_t == WICK_DTYPE_UINT8, wide = out_t == WICK_DTYPE_INT16;
  const int32_t lo = wide ? INT16_MIN : (out_t == WICK_DTYPE_UINT8 ? 0 : -128);
  const int32_t hi = wide ? INT16_MAX : (out_t == WICK_DTYPE_UINT8 ? 255 : 127);
  const size_t osize = wide ? 2 : 1;
  const int32x4_t omin = vdupq_n_s32(lo), omax = vdupq_n_s32(hi);
  int32_t block[BLOCK_ROWS * BLOCK_COLS]; /* the block's exps, row i at i * cols */
  for (size_t r0 = 0; r0 < rows; r0 += BLOCK_ROWS) {
    const size_t nb = rows - r0 < BLOCK_ROWS ? rows - r0 : BLOCK_ROWS;
    uint32_t sum[BLOCK_ROWS] = {0};
    for (size_t i = 0; i < nb; i++) {
      const uint8_t *x = (const uint8_t *)in + (r0 + i) * cols;
      int32_t *e = block + i * cols;
      const int32_t max = row_max(x, cols, u8);
      const uint8x16_t vmax = vdupq_n_u8((uint8_t)max);
      size_t c = 0;
      for (; c + 16 <= cols; c += 16) {
        uint8_t d[16];
        vst1q_u8(d, vsubq_u8(vmax, vld1q_u8(x + c)));
        for (int j = 0; j < 16; j++) e[c + (size_t)j] = exps[d[j]];
      }
      for (; c < cols; c++) e[c] = exps[max - (u8 ? x[c] : (int8_t)x[c])];
      const uint32_t *eu = (const uint32_t *)(const void *)e;
      const uint32x4_t half = vdupq_n_u32(1u << 11);
      uint32x4_t acc = vdupq_n_u32(0);
      for (c = 0; c + 4 <= cols; c += 4)
        acc = vaddq_u32(acc, vshrq_n_u32(vaddq_u32(vld1q_u32(eu + c), half), 12));
      uint32_t s = vaddvq_u32(acc);
      for (; c < cols; c++) s += (eu[c] + (1u << 11)) >> 12;
      sum[i] = s;
    }
    int32_t scale[BLOCK_ROWS], exponent[BLOCK_ROWS];
    row_scales8(sum, wide ? 16 : 8, scale, exponent);
    for (size_t i = 0; i < nb; i++) {
      const uint8_t *x = (const uint8_t *)in + (r0 + i) * cols;
      uint8_t *o = (uint8_t *)out + (r0 + i) * cols * osize;
      if (scale[i] < 0)
        wick_q_softmax__reference(in_t, out_t, 1, (int64_t)cols, p, x, o);
      else
        row_outputs(block + i * cols, cols, scale[i], exponent[i], out_t, omin, omax, lo, hi, o);
    }
  }
}

INLINE void long_rows(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
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

INLINE void rows_body(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
                      wick_dtype in_t, wick_dtype out_t, size_t rows, size_t cols, const void *in,
                      void *out) {
  if (cols <= BLOCK_COLS)
    short_rows(exps, p, in_t, out_t, rows, cols, in, out);
  else
    long_rows(exps, sums, p, in_t, out_t, rows, cols, in, out);
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
