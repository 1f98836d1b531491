/*
 * avx2/q4_blocks.c — block sums of blockwise int4 FULLY_CONNECTED (q4.h) on
 * AVX2: 16 weight bytes (32 int4) are split into nibbles, interleaved back
 * into element order, sign-extended to int16 and multiplied with the int16
 * input pairwise into int32 (VPMADDWD, exact: |x| <= 255, |w| <= 8); up to
 * four input rows share each unpacked weight chunk. Blocks that are not a
 * multiple of 32 values go to the reference loop.
 */
#include <immintrin.h>

#include "kernels/q4.h"

static inline int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/* 32 weights from 16 bytes as two vectors of 16 int16, in element order. */
static inline void unpack32(const uint8_t *w, __m256i *w0, __m256i *w1) {
  const __m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)w);
  const __m128i mask = _mm_set1_epi8(15), eight = _mm_set1_epi8(8);
  __m128i lo = _mm_and_si128(bytes, mask);
  __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
  lo = _mm_sub_epi8(_mm_xor_si128(lo, eight), eight); /* sign-extend the nibble */
  hi = _mm_sub_epi8(_mm_xor_si128(hi, eight), eight);
  *w0 = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(lo, hi)); /* elements 0..15 */
  *w1 = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(lo, hi)); /* elements 16..31 */
}

static inline __m256i load16(const int16_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

void wick_q4_block_sums__avx2(size_t m, size_t k, size_t bs, const int16_t *x, const uint8_t *w4,
                              int32_t *sums) {
  if (bs % 32 != 0) {
    wick_q4_block_sums__reference(m, k, bs, x, w4, sums);
    return;
  }
  const size_t nb = k / bs;
  size_t i = 0;
  for (; i + 4 <= m; i += 4) {
    const int16_t *x0 = x + i * k, *x1 = x0 + k, *x2 = x1 + k, *x3 = x2 + k;
    for (size_t b = 0; b < nb; b++) {
      __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
      for (size_t p = b * bs; p < (b + 1) * bs; p += 32) {
        __m256i w0, w1;
        unpack32(w4 + p / 2, &w0, &w1);
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(load16(x0 + p), w0));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(load16(x0 + p + 16), w1));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(load16(x1 + p), w0));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(load16(x1 + p + 16), w1));
        s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(load16(x2 + p), w0));
        s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(load16(x2 + p + 16), w1));
        s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(load16(x3 + p), w0));
        s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(load16(x3 + p + 16), w1));
      }
      sums[i * nb + b] = hsum(s0);
      sums[(i + 1) * nb + b] = hsum(s1);
      sums[(i + 2) * nb + b] = hsum(s2);
      sums[(i + 3) * nb + b] = hsum(s3);
    }
  }
  for (; i < m; i++) {
    const int16_t *xi = x + i * k;
    for (size_t b = 0; b < nb; b++) {
      __m256i s = _mm256_setzero_si256(), t = s;
      for (size_t p = b * bs; p < (b + 1) * bs; p += 32) {
        __m256i w0, w1;
        unpack32(w4 + p / 2, &w0, &w1);
        s = _mm256_add_epi32(s, _mm256_madd_epi16(load16(xi + p), w0));
        t = _mm256_add_epi32(t, _mm256_madd_epi16(load16(xi + p + 16), w1));
      }
      sums[i * nb + b] = hsum(_mm256_add_epi32(s, t));
    }
  }
}
