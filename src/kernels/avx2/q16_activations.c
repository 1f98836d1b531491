/*
 * avx2/q16_activations.c — int16 LOGISTIC and TANH for AVX2, 8 elements per
 * vector, the reference's arithmetic (wick_q16_logistic__reference /
 * wick_q16_tanh__reference) lane by lane: the input rescaled to steps of
 * 1/12288 (x * multiplier + half >> shift: the op's multipliers keep
 * 32768 * multiplier + half inside int32, so 32-bit lanes are exact), the
 * table node and its neighbour gathered from the table widened to int32,
 * the linear interpolation in wrapping 32-bit lanes (as the reference's
 * uint32 / int32 arithmetic), the saturated top, the odd symmetry and the
 * final shift. Compiled with -mavx2.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))

/* 8 results (int32 lanes inside int16) from 8 inputs. */
INLINE __m256i sigmoid8(__m256i xin, const int32_t *table, __m256i m, __m256i half, __m128i shift,
                        bool tanh) {
  const __m256i x = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(xin, m), half), shift);
  const __m256i ax = _mm256_abs_epi32(x);
  const __m256i node = tanh ? _mm256_srli_epi32(ax, 8) : _mm256_srli_epi32(ax, 9);
  const __m256i top = _mm256_cmpgt_epi32(node, _mm256_set1_epi32(254));
  const __m256i at = _mm256_min_epi32(node, _mm256_set1_epi32(254));
  const __m256i a = _mm256_i32gather_epi32(table, at, 4);
  const __m256i b = _mm256_i32gather_epi32(table + 1, at, 4);
  const __m256i frac = _mm256_and_si256(ax, _mm256_set1_epi32(tanh ? 0xFF : 0x1FF));
  __m256i r = _mm256_add_epi32(tanh ? _mm256_slli_epi32(a, 8) : _mm256_slli_epi32(a, 9),
                               _mm256_mullo_epi32(frac, _mm256_sub_epi32(b, a)));
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(tanh ? 0xFFFF << 8 : 0x7FFF << 10), top);
  const __m256i negative = _mm256_cmpgt_epi32(_mm256_setzero_si256(), x);
  if (tanh) {
    const __m256i pos = _mm256_add_epi32(r, _mm256_set1_epi32(-(1 << 23) + (1 << 7)));
    const __m256i neg = _mm256_sub_epi32(_mm256_set1_epi32((1 << 23) + (1 << 7) - 1), r);
    return _mm256_srai_epi32(_mm256_blendv_epi8(pos, neg, negative), 8); /* floor division */
  }
  const __m256i pos = _mm256_add_epi32(r, _mm256_set1_epi32(1 << 9));
  const __m256i neg = _mm256_sub_epi32(_mm256_set1_epi32((1 << 25) + (1 << 9) - 1), r);
  return _mm256_srli_epi32(_mm256_blendv_epi8(pos, neg, negative), 10);
}

INLINE __m256i load16(const int16_t *p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
}

INLINE void run(size_t n, const int32_t *table, int32_t multiplier, int32_t shift,
                const int16_t *in, int16_t *out, bool tanh) {
  const __m256i m = _mm256_set1_epi32(multiplier);
  const __m256i half = _mm256_set1_epi32(shift > 0 ? 1 << (shift - 1) : 0);
  const __m128i sh = _mm_cvtsi32_si128(shift);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v0 = sigmoid8(load16(in + i), table, m, half, sh, tanh);
    const __m256i v1 = sigmoid8(load16(in + i + 8), table, m, half, sh, tanh);
    _mm256_storeu_si256((__m256i *)(void *)(out + i),
                        _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8));
  }
  if (i < n) {
    int16_t t[16] = {0}, r[16];
    memcpy(t, in + i, (n - i) * 2);
    const __m256i v0 = sigmoid8(load16(t), table, m, half, sh, tanh);
    const __m256i v1 = sigmoid8(load16(t + 8), table, m, half, sh, tanh);
    _mm256_storeu_si256((__m256i *)(void *)r,
                        _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8));
    memcpy(out + i, r, (n - i) * 2);
  }
}

void wick_q16_sigmoid__avx2(size_t n, const int32_t table[256], int32_t multiplier, int32_t shift,
                            bool tanh, const int16_t *in, int16_t *out) {
  if (tanh)
    run(n, table, multiplier, shift, in, out, true);
  else
    run(n, table, multiplier, shift, in, out, false);
}
