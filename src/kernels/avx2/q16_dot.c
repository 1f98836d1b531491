/*
 * avx2/q16_dot.c — q16.h's exact int16 x int16 dot product (the int16 BATCH_MATMUL's int64
 * sum) for AVX2: VPMADDWD adds two products into an int32 lane, exactly except when both
 * are (-32768)^2 = 2^30, whose sum 2^31 wraps to INT32_MIN (every other sum lies in
 * [-2^31 + 2^16, 2^31)); so the lanes are widened into int64 sums as they come and each
 * INT32_MIN lane counts 2^32 more. Compiled with -mavx2.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q16.h"

int64_t wick_q16_dot__avx2(size_t k, const int16_t *x, const int16_t *w) {
  __m256i acc = _mm256_setzero_si256();
  const __m256i wrapped = _mm256_set1_epi32(INT32_MIN);
  int64_t fixes = 0;
  size_t i = 0;
  for (; i < k; i += 16) {
    __m256i xv, wv;
    if (k - i >= 16) {
      xv = _mm256_loadu_si256((const __m256i *)(const void *)(x + i));
      wv = _mm256_loadu_si256((const __m256i *)(const void *)(w + i));
    } else { /* the tail, zero-filled (zeros add nothing) */
      int16_t tx[16] = {0}, tw[16] = {0};
      memcpy(tx, x + i, (k - i) * sizeof(int16_t));
      memcpy(tw, w + i, (k - i) * sizeof(int16_t));
      xv = _mm256_loadu_si256((const __m256i *)(const void *)tx);
      wv = _mm256_loadu_si256((const __m256i *)(const void *)tw);
    }
    const __m256i p = _mm256_madd_epi16(xv, wv);
    acc = _mm256_add_epi64(acc, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(p)));
    acc = _mm256_add_epi64(acc, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(p, 1)));
    const int m = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(p, wrapped)));
    fixes += __builtin_popcount((unsigned)m);
  }
  int64_t lanes[4];
  _mm256_storeu_si256((__m256i *)(void *)lanes, acc);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + fixes * ((int64_t)1 << 32);
}
