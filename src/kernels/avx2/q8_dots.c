/*
 * avx2/q8_dots.c — int8 dot products for the hybrid (dynamic-range) ops:
 * c[i, j] = sum_k a[i, k] * b[j, k] as int32 (wrapping), a and b row-major int8.
 *
 * 16 bytes of each operand are sign-extended to int16 and multiplied pairwise
 * into int32 by VPMADDWD (exact: |a*b + a*b| < 2^15 * 2^8), summed in int32
 * lanes (wrapping as the reference does); four rows of a share each load of
 * b; the k tail is scalar.
 */
#include <immintrin.h>

#include "kernels/q8.h"

static inline __m256i widen(const int8_t *p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}

static inline uint32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return (uint32_t)_mm_cvtsi128_si32(s);
}

void wick_q8_dots__avx2(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b, int32_t *c,
                        size_t ldc) {
  const size_t k16 = k / 16 * 16;
  for (size_t j = 0; j < n; j++) {
    const int8_t *bj = b + j * k;
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
      const int8_t *a0 = a + i * k;
      __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
      for (size_t p = 0; p < k16; p += 16) {
        const __m256i w = widen(bj + p);
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(widen(a0 + p), w));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(widen(a0 + k + p), w));
        s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(widen(a0 + 2 * k + p), w));
        s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(widen(a0 + 3 * k + p), w));
      }
      uint32_t t[4] = {hsum(s0), hsum(s1), hsum(s2), hsum(s3)};
      for (size_t p = k16; p < k; p++)
        for (size_t r = 0; r < 4; r++) t[r] += (uint32_t)((int32_t)a0[r * k + p] * (int32_t)bj[p]);
      for (size_t r = 0; r < 4; r++) c[(i + r) * ldc + j] = (int32_t)t[r];
    }
    for (; i < m; i++) {
      const int8_t *ai = a + i * k;
      __m256i s = _mm256_setzero_si256();
      for (size_t p = 0; p < k16; p += 16)
        s = _mm256_add_epi32(s, _mm256_madd_epi16(widen(ai + p), widen(bj + p)));
      uint32_t t = hsum(s);
      for (size_t p = k16; p < k; p++) t += (uint32_t)((int32_t)ai[p] * (int32_t)bj[p]);
      c[i * ldc + j] = (int32_t)t;
    }
  }
}
