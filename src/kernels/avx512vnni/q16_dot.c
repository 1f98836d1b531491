/*
 * avx512vnni/q16_dot.c — q16.h's exact int16 x int16 dot product for AVX-512 (BW): the AVX2
 * kernel's arithmetic (avx2/q16_dot.c: VPMADDWD pairs widened into int64 sums, each pair
 * that wrapped to INT32_MIN — both products 2^30 — counted 2^32 more) on 32 elements per
 * step, the tail through masked loads. Compiled with its folder's flags.
 */
#include <immintrin.h>

#include "kernels/q16.h"

int64_t wick_q16_dot__avx512vnni(size_t k, const int16_t *x, const int16_t *w) {
  __m512i acc = _mm512_setzero_si512();
  const __m512i wrapped = _mm512_set1_epi32(INT32_MIN);
  int64_t fixes = 0;
  for (size_t i = 0; i < k; i += 32) {
    const __mmask32 m = k - i >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << (k - i)) - 1);
    const __m512i p =
        _mm512_madd_epi16(_mm512_maskz_loadu_epi16(m, x + i), _mm512_maskz_loadu_epi16(m, w + i));
    acc = _mm512_add_epi64(acc, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(p)));
    acc = _mm512_add_epi64(acc, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(p, 1)));
    fixes += __builtin_popcount((unsigned)_mm512_cmpeq_epi32_mask(p, wrapped));
  }
  return _mm512_reduce_add_epi64(acc) + fixes * ((int64_t)1 << 32);
}
