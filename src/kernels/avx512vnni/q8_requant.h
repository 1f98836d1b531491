/*
 * q8_requant.h — the vectorized output stage shared by the AVX-512 int8
 * kernels (included by the files of this folder only; compiled with their
 * flags). Bit-exact with the reference kernels' scalar arithmetic
 * (src/kernels/reference/quantized.c), spelled out in
 * template/q8_requant.h: the per-lane form (q8_rq, q8_requant_i32,
 * FULLY_CONNECTED's q8_requant_fc, q8_clamp) is that template over
 * avx512/simd.h's integer vocabulary, shared with the AVX2 GEMM
 * (avx2/q8_gemm.c); this file adds the narrowing and what only AVX-512 can
 * do (64-bit arithmetic shifts, byte clamps).
 *
 * Two forms of the fixed-point stage: q8_rq / q8_requant_rq (srdhm, then
 * rdivpot; cheap to load: the GEMM tiles' fallback when the caller has no
 * prepared constants) and q8_rq64 / q8_mbqm64 (both roundings fused into one
 * 64-bit floor, fewer instructions per vector; its 64-bit constants are
 * derived per depthwise row block, set once for ADD / MUL, and prepared per
 * operator for the GEMM tiles, wick_q8_rq64_prepare).
 */
#ifndef WICK_KERNELS_AVX512VNNI_Q8_REQUANT_H
#define WICK_KERNELS_AVX512VNNI_Q8_REQUANT_H

#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/avx512/simd.h"
#include "kernels/q8.h"

#define Q8_INLINE static inline __attribute__((always_inline))

#include "kernels/template/q8_requant.h"

/* q8_requant_i32, narrowed: 16 int8. */
Q8_INLINE __m128i q8_requant_rq(__m512i x, const q8_rq *q) {
  return _mm512_cvtepi32_epi8(q8_requant_i32(x, q));
}

/* The same requantization for kernels that load the parameters once for
 * many vectors (depthwise rows): srdhm and rdivpot fused into one floor of
 * the 64-bit product,
 *
 *   rdivpot(srdhm(x, m), e) = floor((x*m + 2^30 + h*2^31) / 2^(31+e)),
 *   h = 0 (e = 0), 2^(e-1) (x >= 0), 2^(e-1) - 1 (x < 0)
 *
 * (floor((floor(a/b) + h)/c) = floor((a + h*b)/(b*c)); rdivpot rounds a
 * negative srdhm result down by one more, and srdhm is negative exactly
 * when x*m < -2^30; for -2^30 <= x*m < 0 both choices of h give 0, so the
 * sign of the product decides). Per 64-bit lane: multiply, add the
 * constant, subtract 2^31 where negative (e > 0), one arithmetic shift. */
typedef struct q8_rq64 {
  __m512i m, m_odd, ls;
  __m512i c_even, c_odd, d_even, d_odd, s_even, s_odd; /* 64-bit lanes */
  __m512i zp, lo8, hi8; /* lo8, hi8: the clamp bounds in every byte */
  bool any_left_shift;
} q8_rq64;

/* The 64-bit constants of channels whose right shifts are rs (64-bit lanes). */
Q8_INLINE void q8_rq64_constants(__m512i rs, __m512i *c, __m512i *d, __m512i *sh) {
  const __mmask8 positive = _mm512_cmpgt_epi64_mask(rs, _mm512_setzero_si512());
  const __m512i base = _mm512_set1_epi64((int64_t)1 << 30);
  *c = _mm512_mask_add_epi64(base, positive, base,
                             _mm512_sllv_epi64(base, rs)); /* 2^30 + 2^(30+e) */
  *d = _mm512_maskz_mov_epi64(positive, _mm512_set1_epi64((int64_t)1 << 31));
  *sh = _mm512_add_epi64(rs, _mm512_set1_epi64(31));
}

/* The parameters of 16 channels: multipliers and left shifts from a packed
 * header (`h` at the bias' row, rows `stride` int32 apart); the 64-bit
 * constants from `k` (WICK_Q8_RQ64_WORDS prepared by wick_q8_rq64_prepare)
 * or, when k is NULL, derived here from the header's right shifts. */
Q8_INLINE q8_rq64 q8_rq64_load(const int32_t *h, size_t stride, const int64_t *k,
                               const wick_q8_output *o) {
  q8_rq64 q;
  q.m = _mm512_loadu_si512(h + stride);
  q.m_odd = _mm512_loadu_si512(h + 2 * stride);
  q.ls = _mm512_loadu_si512(h + 3 * stride);
  if (k != NULL) {
    q.c_even = _mm512_loadu_si512(k), q.c_odd = _mm512_loadu_si512(k + 8);
    q.d_even = _mm512_loadu_si512(k + 16), q.d_odd = _mm512_loadu_si512(k + 24);
    q.s_even = _mm512_loadu_si512(k + 32), q.s_odd = _mm512_loadu_si512(k + 40);
  } else {
    const __m512i rs = _mm512_loadu_si512(h + 4 * stride);
    q8_rq64_constants(_mm512_and_si512(rs, _mm512_set1_epi64(0xffffffff)), &q.c_even, &q.d_even,
                      &q.s_even);
    q8_rq64_constants(_mm512_srli_epi64(rs, 32), &q.c_odd, &q.d_odd, &q.s_odd);
  }
  q.zp = _mm512_set1_epi32(o->zero_point);
  q.lo8 = _mm512_set1_epi8((char)o->lo);
  q.hi8 = _mm512_set1_epi8((char)o->hi);
  q.any_left_shift = _mm512_test_epi32_mask(q.ls, q.ls) != 0;
  return q;
}

Q8_INLINE __m512i q8_rq64_half(__m512i x, __m512i m, __m512i c, __m512i d, __m512i sh) {
  const __m512i p = _mm512_mul_epi32(x, m);
  __m512i q = _mm512_add_epi64(p, c);
  q = _mm512_mask_sub_epi64(q, _mm512_movepi64_mask(p), q, d);
  return _mm512_srav_epi64(q, sh);
}

/* One multiplier and shift for every lane (ADD, MUL), with output zero
 * point zp and clamp [lo, hi] (inside int8). */
Q8_INLINE q8_rq64 q8_rq64_set(int32_t multiplier, int32_t shift, int32_t zp, int32_t lo,
                              int32_t hi) {
  q8_rq64 q;
  q.m = q.m_odd = _mm512_set1_epi32(multiplier);
  q.ls = _mm512_set1_epi32(shift > 0 ? shift : 0);
  q8_rq64_constants(_mm512_set1_epi64(shift > 0 ? 0 : -(int64_t)shift), &q.c_even, &q.d_even,
                    &q.s_even);
  q.c_odd = q.c_even, q.d_odd = q.d_even, q.s_odd = q.s_even;
  q.zp = _mm512_set1_epi32(zp);
  q.lo8 = _mm512_set1_epi8((char)lo);
  q.hi8 = _mm512_set1_epi8((char)hi);
  q.any_left_shift = shift > 0;
  return q;
}

/* mbqm(x, m, s) lane by lane with q8_rq64's parameters (no zero point). */
Q8_INLINE __m512i q8_mbqm64(__m512i x, const q8_rq64 *q) {
  if (q->any_left_shift) x = _mm512_sllv_epi32(x, q->ls);
  const __m512i even = q8_rq64_half(x, q->m, q->c_even, q->d_even, q->s_even);
  const __m512i odd =
      q8_rq64_half(_mm512_shuffle_epi32(x, _MM_PERM_DDBB), q->m_odd, q->c_odd, q->d_odd, q->s_odd);
  return _mm512_mask_shuffle_epi32(even, (__mmask16)0xAAAA, odd, _MM_PERM_CDAB);
}

/* q8_requant_rq's result (before the clamp and narrowing) with q8_rq64's
 * parameters: int32 lanes, + zero point (wrapping). */
Q8_INLINE __m512i q8_requant64(__m512i x, const q8_rq64 *q) {
  return _mm512_add_epi32(q8_mbqm64(x, q), q->zp);
}

/* Clamp and narrow one q8_requant64 result: saturating to int8 first, then
 * the byte clamp (lo, hi are inside int8, so the order does not matter). */
Q8_INLINE __m128i q8_narrow64(__m512i v, const q8_rq64 *q) {
  const __m128i b = _mm512_cvtsepi32_epi8(v);
  return _mm_min_epi8(_mm_max_epi8(b, _mm512_castsi512_si128(q->lo8)),
                      _mm512_castsi512_si128(q->hi8));
}

/* Four q8_requant64 results clamped and narrowed together: lane i of the
 * result holds the 16 bytes of v[i]. Saturating packs (16 then 8 bits,
 * 128-bit lane by lane), a dword transpose, one byte clamp. */
Q8_INLINE __m512i q8_narrow64_x4(__m512i v0, __m512i v1, __m512i v2, __m512i v3, const q8_rq64 *q) {
  const __m512i w = _mm512_packs_epi16(_mm512_packs_epi32(v0, v1), _mm512_packs_epi32(v2, v3));
  const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i b = _mm512_permutexvar_epi32(idx, w);
  return _mm512_min_epi8(_mm512_max_epi8(b, q->lo8), q->hi8);
}

/* + zero point, clamp, narrow: 16 int8. */
Q8_INLINE __m128i q8_finish(__m512i v, const wick_q8_output *o) {
  return _mm512_cvtepi32_epi8(q8_clamp(v, o));
}

Q8_INLINE __mmask16 q8_mask16(size_t n) { return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u); }

Q8_INLINE void q8_store16(int8_t *p, __m128i v, size_t n) {
  if (n >= 16)
    _mm_storeu_si128((__m128i *)(void *)p, v);
  else
    _mm_mask_storeu_epi8(p, q8_mask16(n), v);
}

#endif /* WICK_KERNELS_AVX512VNNI_Q8_REQUANT_H */
