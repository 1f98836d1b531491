/*
 * avx512vnni/q8_dots.c — int8 dot products for the hybrid (dynamic-range) ops:
 * c[i, j] = sum_k a[i, k] * b[j, k] as int32 (wrapping), a and b row-major int8.
 *
 * VPDPBUSD multiplies u8 by s8, so a is read as a + 128 (XOR 0x80) and the
 * extra 128 * sum_k b[j, k] is subtracted at the end (the same sum, taken by
 * VPDPBUSD of ones against b): exact modulo 2^32, like the reference's
 * wrapping sums. Four rows of a share each 64-byte load of b; k tails use
 * masked loads (zeros add nothing).
 */
#include <immintrin.h>

#include "kernels/q8.h"

static inline __m512i load_tail(const int8_t *p, size_t n) {
  const __mmask64 m = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
  return _mm512_maskz_loadu_epi8(m, p);
}

static inline int32_t hsum(__m512i v) { return _mm512_reduce_add_epi32(v); }

void wick_q8_dots__avx512vnni(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                              int32_t *c, size_t ldc) {
  const __m512i flip = _mm512_set1_epi8((char)0x80), ones = _mm512_set1_epi8(1);
  for (size_t j = 0; j < n; j++) {
    const int8_t *bj = b + j * k;
    __m512i bsum = _mm512_setzero_si512();
    for (size_t p = 0; p < k; p += 64)
      bsum = _mm512_dpbusd_epi32(bsum, ones, load_tail(bj + p, k - p));
    const int32_t correction = (int32_t)(128u * (uint32_t)hsum(bsum));
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
      __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
      const int8_t *a0 = a + i * k;
      for (size_t p = 0; p < k; p += 64) {
        const size_t left = k - p;
        const __m512i w = load_tail(bj + p, left);
        s0 = _mm512_dpbusd_epi32(s0, _mm512_xor_si512(load_tail(a0 + p, left), flip), w);
        s1 = _mm512_dpbusd_epi32(s1, _mm512_xor_si512(load_tail(a0 + k + p, left), flip), w);
        s2 = _mm512_dpbusd_epi32(s2, _mm512_xor_si512(load_tail(a0 + 2 * k + p, left), flip), w);
        s3 = _mm512_dpbusd_epi32(s3, _mm512_xor_si512(load_tail(a0 + 3 * k + p, left), flip), w);
      }
      /* (a tail's masked zeros became 128 after the flip: times a zero weight, nothing) */
      c[i * ldc + j] = (int32_t)((uint32_t)hsum(s0) - (uint32_t)correction);
      c[(i + 1) * ldc + j] = (int32_t)((uint32_t)hsum(s1) - (uint32_t)correction);
      c[(i + 2) * ldc + j] = (int32_t)((uint32_t)hsum(s2) - (uint32_t)correction);
      c[(i + 3) * ldc + j] = (int32_t)((uint32_t)hsum(s3) - (uint32_t)correction);
    }
    for (; i < m; i++) {
      __m512i s = _mm512_setzero_si512();
      for (size_t p = 0; p < k; p += 64)
        s = _mm512_dpbusd_epi32(s, _mm512_xor_si512(load_tail(a + i * k + p, k - p), flip),
                                load_tail(bj + p, k - p));
      c[i * ldc + j] = (int32_t)((uint32_t)hsum(s) - (uint32_t)correction);
    }
  }
}
