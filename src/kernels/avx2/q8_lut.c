/*
 * avx2/q8_lut.c — 8-bit table lookups (int8/uint8 LOGISTIC, TANH, GELU,
 * the tabulated HARD_SWISH / LEAKY_RELU, 8-bit requantization:
 * out[i] = lut[(uint8)in[i]]) with AVX2, 32 bytes per step: the table as 16
 * rows of 16 bytes, each row looked up by the bytes' low nibble (VPSHUFB)
 * and kept where the byte's high nibble names that row (compare, blend).
 * For CPUs without AVX-512 VBMI. Compiled with -mavx2.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))

/* 32 lookups: rows[h] holds lut[16h .. 16h + 15] in both 128-bit lanes. */
INLINE __m256i lookup32(__m256i x, const __m256i rows[16]) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i lo = _mm256_and_si256(x, nibble);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble);
  __m256i r = _mm256_shuffle_epi8(rows[0], lo);
  for (int h = 1; h < 16; h++)
    r = _mm256_blendv_epi8(r, _mm256_shuffle_epi8(rows[h], lo),
                           _mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)h)));
  return r;
}

void wick_q8_lut8__avx2(size_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out) {
  __m256i rows[16];
  for (int h = 0; h < 16; h++)
    rows[h] =
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(lut + 16 * h)));
  size_t i = 0;
  for (; i + 64 <= n; i += 64) { /* two independent blend chains */
    const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(in + i));
    const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(in + i + 32));
    _mm256_storeu_si256((__m256i *)(void *)(out + i), lookup32(x0, rows));
    _mm256_storeu_si256((__m256i *)(void *)(out + i + 32), lookup32(x1, rows));
  }
  for (; i < n; i += 32) {
    uint8_t t[32] = {0}, r[32];
    const size_t k = n - i < 32 ? n - i : 32;
    memcpy(t, in + i, k);
    _mm256_storeu_si256((__m256i *)(void *)r,
                        lookup32(_mm256_loadu_si256((const __m256i *)(const void *)t), rows));
    memcpy(out + i, r, k);
  }
}
