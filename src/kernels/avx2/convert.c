/*
 * avx2/convert.c — float16 -> float32 for AVX2 (the kernel tables' f16_to_f32; the AVX-512
 * table uses it too): float16 DEQUANTIZE of constant weights, folded at prepare.
 *
 * Integer arithmetic on the bits, 8 elements per step, the same result as wick_f16_to_f32
 * (reference/cast.c) bit for bit: F16C's VCVTPH2PS is not used because it quiets a signaling
 * NaN where the reference keeps every payload bit, and because AVX2 alone (no F16C flag to
 * detect) does it at memory speed anyway. The magnitude bits shifted into place and the
 * exponent rebiased by 112 give every normal number; an exponent of 31 (inf, NaN) gets 112
 * more (exponent 255, mantissa kept); an exponent of 0 (zero, subnormal) becomes
 * 2^-14 * (1 + m / 1024) - 2^-14 = m * 2^-24, an exact float subtraction. The sign goes back
 * last, so -0 stays -0.
 */
#include <immintrin.h>

#include "kernels/kernels.h"
#include "kernels/reference/reference.h"

void wick_f16_to_f32__avx2(size_t n, const uint16_t *in, float *out) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fff), sign_bit = _mm256_set1_epi32(0x8000);
  const __m256i exponent = _mm256_set1_epi32(0x7c00 << 13), rebias = _mm256_set1_epi32(112 << 23);
  const __m256i one = _mm256_set1_epi32(1 << 23), zero = _mm256_setzero_si256();
  const __m256 two_m14 = _mm256_castsi256_ps(_mm256_set1_epi32(113 << 23)); /* 2^-14 */
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i h =
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(in + i)));
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(h, sign_bit), 16);
    __m256i o = _mm256_slli_epi32(_mm256_and_si256(h, magnitude), 13);
    const __m256i e = _mm256_and_si256(o, exponent);
    o = _mm256_add_epi32(o, rebias);
    o = _mm256_add_epi32(o, _mm256_and_si256(_mm256_cmpeq_epi32(e, exponent), rebias));
    const __m256 small = _mm256_sub_ps(_mm256_castsi256_ps(_mm256_add_epi32(o, one)), two_m14);
    const __m256 r = _mm256_blendv_ps(_mm256_castsi256_ps(o), small,
                                      _mm256_castsi256_ps(_mm256_cmpeq_epi32(e, zero)));
    _mm256_storeu_ps(out + i, _mm256_or_ps(r, _mm256_castsi256_ps(sign)));
  }
  for (; i < n; i++) out[i] = wick_f16_to_f32(in[i]);
}
