/*
 * avx2/q8_requant.h — the fixed-point output stage of the AVX2 int8
 * GEMM and depthwise kernels with both roundings fused into one 64-bit
 * floor (included by this folder's q8 files only; compiled with -mavx2).
 * Bit-exact with template/q8_requant.h's q8_requant_i32 (and so with the
 * reference's rdivpot(srdhm(x << ls, m), e)), in fewer instructions:
 *
 *   rdivpot(srdhm(x, m), e) = floor((x*m + 2^30 + h*2^31) / 2^(31+e)),
 *   h = 0 (e = 0), 2^(e-1) (x*m >= 0), 2^(e-1) - 1 (x*m < 0)
 *
 * (the derivation is avx512vnni/q8_requant.h's q8_rq64). AVX2 has no 64-bit
 * arithmetic shift, so the constant also carries 2^62: the biased sum
 * x*m + c + 2^62 lies in [0, 2^64) (|x*m| < 2^62, e <= 31: the ops give
 * shifts below -31 a zero multiplier), a logical shift floors it exactly,
 * and the bias comes out as 2^(31-e), folded into the zero point added
 * afterwards (mod 2^32). Per 8 lanes: two 64-bit products (even lanes, and
 * the odd lanes moved down), a constant picked by the product's sign
 * (VBLENDVPD reads the sign bit), an add and a variable shift each, one
 * blend back to int32 lanes, the zero point and the clamp.
 */
#ifndef WICK_KERNELS_AVX2_Q8_REQUANT_H
#define WICK_KERNELS_AVX2_Q8_REQUANT_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/q8.h"

#define Q8A_INLINE static inline __attribute__((always_inline))

/* The requantization of 8 channels, loaded once for many vectors. */
typedef struct q8_rq8 {
  __m256i m, m_odd, ls;            /* int32 lanes (m_odd: even lanes) */
  __m256i c_even, cn_even, s_even; /* 64-bit: constant if x*m >= 0, if < 0, shift */
  __m256i c_odd, cn_odd, s_odd;
  __m256i zp_adj; /* zero point - 2^(31-e), int32 lanes */
  __m256i lo, hi;
  bool any_left_shift;
} q8_rq8;

/* The 64-bit constants for right shifts rs (64-bit lanes, 0..31). */
Q8A_INLINE void q8_rq8_constants(__m256i rs, __m256i *c, __m256i *cn, __m256i *sh) {
  const __m256i positive = _mm256_cmpgt_epi64(rs, _mm256_setzero_si256());
  const __m256i base = _mm256_set1_epi64x(((int64_t)1 << 62) + ((int64_t)1 << 30));
  const __m256i extra =
      _mm256_and_si256(positive,
                       _mm256_sllv_epi64(_mm256_set1_epi64x((int64_t)1 << 30), rs)); /* 2^(30+e) */
  *c = _mm256_add_epi64(base, extra);
  *cn = _mm256_sub_epi64(*c, _mm256_and_si256(positive, _mm256_set1_epi64x((int64_t)1 << 31)));
  *sh = _mm256_add_epi64(rs, _mm256_set1_epi64x(31));
}

/* 8 channels from a packed header: `h` at their bias' row, rows `stride`
 * int32 apart (bias, multiplier, odd multiplier, left shift, right shift). */
Q8A_INLINE q8_rq8 q8_rq8_load(const int32_t *h, size_t stride, const wick_q8_output *o) {
  q8_rq8 q;
  q.m = _mm256_loadu_si256((const __m256i *)(const void *)(h + stride));
  q.m_odd = _mm256_loadu_si256((const __m256i *)(const void *)(h + 2 * stride));
  q.ls = _mm256_loadu_si256((const __m256i *)(const void *)(h + 3 * stride));
  const __m256i rs = _mm256_loadu_si256((const __m256i *)(const void *)(h + 4 * stride));
  q8_rq8_constants(_mm256_and_si256(rs, _mm256_set1_epi64x(0xffffffff)), &q.c_even, &q.cn_even,
                   &q.s_even);
  q8_rq8_constants(_mm256_srli_epi64(rs, 32), &q.c_odd, &q.cn_odd, &q.s_odd);
  const __m256i bias =
      _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(_mm256_set1_epi32(31), rs));
  q.zp_adj = _mm256_sub_epi32(_mm256_set1_epi32(o->zero_point), bias);
  q.lo = _mm256_set1_epi32(o->lo);
  q.hi = _mm256_set1_epi32(o->hi);
  q.any_left_shift = !_mm256_testz_si256(q.ls, q.ls);
  return q;
}

/* The same with the 64-bit constants taken from `k`, the per-operator ones
 * of wick_q8_rq64_prepare (its group of 16 channels holding these 8, `half`
 * 0 for the group's channels 0..7, 1 for 8..15: their even channels are
 * 64-bit lanes 4*half .. 4*half+3 of each even row, their odd ones the same
 * lanes of each odd row). The GEMM tiles load these once per tile, so the
 * derivation above (about 25 instructions per 8 channels) is skipped. */
Q8A_INLINE q8_rq8 q8_rq8_load_prepared(const int32_t *h, size_t stride, const int64_t *k,
                                       size_t half, const wick_q8_output *o) {
  q8_rq8 q;
  q.m = _mm256_loadu_si256((const __m256i *)(const void *)(h + stride));
  q.m_odd = _mm256_loadu_si256((const __m256i *)(const void *)(h + 2 * stride));
  q.ls = _mm256_loadu_si256((const __m256i *)(const void *)(h + 3 * stride));
  const __m256i rs = _mm256_loadu_si256((const __m256i *)(const void *)(h + 4 * stride));
  const int64_t *g = k + 4 * half;
  const __m256i bias62 = _mm256_set1_epi64x((int64_t)1 << 62);
  q.c_even = _mm256_add_epi64(bias62, _mm256_loadu_si256((const __m256i *)(const void *)g));
  q.c_odd = _mm256_add_epi64(bias62, _mm256_loadu_si256((const __m256i *)(const void *)(g + 8)));
  q.cn_even =
      _mm256_sub_epi64(q.c_even, _mm256_loadu_si256((const __m256i *)(const void *)(g + 16)));
  q.cn_odd = _mm256_sub_epi64(q.c_odd, _mm256_loadu_si256((const __m256i *)(const void *)(g + 24)));
  q.s_even = _mm256_loadu_si256((const __m256i *)(const void *)(g + 32));
  q.s_odd = _mm256_loadu_si256((const __m256i *)(const void *)(g + 40));
  const __m256i bias =
      _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(_mm256_set1_epi32(31), rs));
  q.zp_adj = _mm256_sub_epi32(_mm256_set1_epi32(o->zero_point), bias);
  q.lo = _mm256_set1_epi32(o->lo);
  q.hi = _mm256_set1_epi32(o->hi);
  q.any_left_shift = !_mm256_testz_si256(q.ls, q.ls);
  return q;
}

/* floor((p + c) / 2^sh) + 2^(31-e) in the low 32 bits of each 64-bit lane,
 * p = x * m (the even int32 lanes of x and m). */
Q8A_INLINE __m256i q8_rq8_half(__m256i x, __m256i m, __m256i c, __m256i cn, __m256i sh) {
  const __m256i p = _mm256_mul_epi32(x, m);
  const __m256i k = _mm256_castpd_si256(
      _mm256_blendv_pd(_mm256_castsi256_pd(c), _mm256_castsi256_pd(cn), _mm256_castsi256_pd(p)));
  return _mm256_srlv_epi64(_mm256_add_epi64(p, k), sh);
}

/* rdivpot(srdhm(x << ls, m), rs) + zero point, not clamped: int32 lanes
 * (mod 2^32; the callers saturate and clamp after narrowing). */
Q8A_INLINE __m256i q8_rq8_apply_unclamped(__m256i x, const q8_rq8 *q) {
  if (q->any_left_shift) x = _mm256_sllv_epi32(x, q->ls);
  const __m256i even = q8_rq8_half(x, q->m, q->c_even, q->cn_even, q->s_even);
  const __m256i odd =
      q8_rq8_half(_mm256_srli_epi64(x, 32), q->m_odd, q->c_odd, q->cn_odd, q->s_odd);
  const __m256i r = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  return _mm256_add_epi32(r, q->zp_adj);
}

/* The same, clamped: the value of template/q8_requant.h's q8_requant_i32. */
Q8A_INLINE __m256i q8_rq8_apply(__m256i x, const q8_rq8 *q) {
  const __m256i v = q8_rq8_apply_unclamped(x, q);
  return _mm256_min_epi32(_mm256_max_epi32(v, q->lo), q->hi);
}

#endif /* WICK_KERNELS_AVX2_Q8_REQUANT_H */
