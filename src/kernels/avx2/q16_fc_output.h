/*
 * avx2/q16_fc_output.h — the output stage of the 16x8 FULLY_CONNECTED kernels (q16.h) on
 * x86: one row's 16 int64 column totals (bias included) to int16, as the reference: the
 * total as a double, times the column's scale, rounded half away from zero (truncate, then
 * +-1 when the exact remainder reaches 0.5), saturated to int32, + zero point (wrapping),
 * clamped. int64 -> double is exact on the vector path for |t| < 2^51 (the bits of
 * 2^52 + 2^51 + t); a row with a larger total (no real layer has one) takes the scalar
 * formula. Included by avx2/q16_fc.c and avx512vnni/q16_fc.c (both compiled with -mavx2).
 */
#ifndef WICK_KERNELS_AVX2_Q16_FC_OUTPUT_H
#define WICK_KERNELS_AVX2_Q16_FC_OUTPUT_H

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/q16.h"

#define Q16_OUT_INLINE static inline __attribute__((always_inline))

/* The reference's double rounding of 4 exact doubles: int32 lanes, saturated. */
Q16_OUT_INLINE __m128i q16_round4(__m256d v, const double *scale) {
  const __m256d x = _mm256_mul_pd(v, _mm256_loadu_pd(scale));
  __m256d t = _mm256_round_pd(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256d d = _mm256_sub_pd(x, t), one = _mm256_set1_pd(1.0);
  t = _mm256_add_pd(t, _mm256_and_pd(_mm256_cmp_pd(d, _mm256_set1_pd(0.5), _CMP_GE_OQ), one));
  t = _mm256_sub_pd(t, _mm256_and_pd(_mm256_cmp_pd(d, _mm256_set1_pd(-0.5), _CMP_LE_OQ), one));
  t = _mm256_min_pd(_mm256_max_pd(t, _mm256_set1_pd(-2147483648.0)), _mm256_set1_pd(2147483647.0));
  return _mm256_cvttpd_epi32(t);
}

/* One column's output from its total, as the reference (scalar). */
static inline int16_t q16_finish_one(int64_t total, double scale, const wick_q16_fc_args *a) {
  const double scaled = round((double)total * scale);
  int32_t v = scaled <= -2147483648.0  ? INT32_MIN
              : scaled >= 2147483647.0 ? INT32_MAX
                                       : (int32_t)scaled;
  v = (int32_t)((uint32_t)v + (uint32_t)a->zero_point);
  return (int16_t)(v < a->lo ? a->lo : (v > a->hi ? a->hi : v));
}

/* Stores one row's nc <= 16 outputs from its totals t[0..3] (4 int64 columns each, bias in). */
Q16_OUT_INLINE void q16_store_row(const __m256i t[4], const double *scale,
                                  const wick_q16_fc_args *a, int16_t *out, size_t nc) {
  const __m256i half = _mm256_set1_epi64x((int64_t)1 << 51);
  const __m256i over =
      _mm256_or_si256(_mm256_or_si256(_mm256_add_epi64(t[0], half), _mm256_add_epi64(t[1], half)),
                      _mm256_or_si256(_mm256_add_epi64(t[2], half), _mm256_add_epi64(t[3], half)));
  int16_t res[WICK_Q16_NR];
  if (_mm256_testz_si256(over, _mm256_set1_epi64x((int64_t)(~(uint64_t)0 << 52)))) {
    /* every t + 2^51 in [0, 2^52): the bits of 2^52 + 2^51 + t are that double */
    const __m256i magic_i = _mm256_set1_epi64x(0x4338000000000000);
    const __m256d magic_d = _mm256_castsi256_pd(magic_i);
    __m128i q[4];
    for (int v = 0; v < 4; v++)
      q[v] =
          q16_round4(_mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(t[v], magic_i)), magic_d),
                     scale + 4 * v);
    const __m256i zp = _mm256_set1_epi32(a->zero_point);
    const __m256i lo = _mm256_set1_epi32(a->lo), hi = _mm256_set1_epi32(a->hi);
    __m256i v0 = _mm256_add_epi32(_mm256_set_m128i(q[1], q[0]), zp);
    __m256i v1 = _mm256_add_epi32(_mm256_set_m128i(q[3], q[2]), zp);
    v0 = _mm256_min_epi32(_mm256_max_epi32(v0, lo), hi);
    v1 = _mm256_min_epi32(_mm256_max_epi32(v1, lo), hi);
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
    if (nc == WICK_Q16_NR) {
      _mm256_storeu_si256((__m256i *)(void *)out, p);
      return;
    }
    _mm256_storeu_si256((__m256i *)(void *)res, p);
  } else {
    int64_t tot[WICK_Q16_NR];
    for (int v = 0; v < 4; v++) _mm256_storeu_si256((__m256i *)(void *)(tot + 4 * v), t[v]);
    for (size_t c = 0; c < nc; c++) res[c] = q16_finish_one(tot[c], scale[c], a);
  }
  memcpy(out, res, nc * sizeof(int16_t));
}

#endif
