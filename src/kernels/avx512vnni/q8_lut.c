/*
 * avx512vnni/q8_lut.c — 8-bit table lookups (int8/uint8 LOGISTIC, TANH,
 * GELU, RSQRT: out[i] = lut[(uint8)in[i]]) with AVX-512 VBMI, 64 bytes per
 * step: two VPERMI2B lookups into 128-entry halves of the table, chosen by
 * each byte's top bit. Called only when q8_select.c saw VBMI (which this
 * file also compiles for, on top of its folder's flags). Also the lookup of
 * int16 answers (lut16) on AVX-512 BW.
 */
#include <immintrin.h>

#include "kernels/q8.h"

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void wick_q8_lut8__avx512vbmi(
    size_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out) {
  const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
  const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
  size_t i = 0;
  for (; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - i)) - 1);
    const __m512i x = _mm512_maskz_loadu_epi8(m, in + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, x, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, x, t3);
    _mm512_mask_storeu_epi8(out + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi));
  }
}

/* out[i] = lut[(uint8)in[i]] as int16 (QUANTIZE from an 8-bit input to int16), 32 elements per
 * step: the bytes widened to word indices, four VPERMI2W lookups into 64-entry quarters of the
 * table, the quarter chosen by index bits 6 and 7. AVX-512 BW (every VNNI table has it). */
void wick_q8_lut16__avx512vnni(size_t n, const int16_t lut[256], const uint8_t *in, int16_t *out) {
  __m512i t[8];
  for (int q = 0; q < 8; q++) t[q] = _mm512_loadu_si512(lut + 32 * q);
  const __m512i bit6 = _mm512_set1_epi16(0x40), bit7 = _mm512_set1_epi16(0x80);
  for (size_t i = 0; i < n; i += 32) {
    const __mmask32 m = n - i >= 32 ? ~(__mmask32)0 : (((__mmask32)1 << (n - i)) - 1);
    const __m512i x = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m, in + i));
    const __m512i q0 = _mm512_permutex2var_epi16(t[0], x, t[1]);
    const __m512i q1 = _mm512_permutex2var_epi16(t[2], x, t[3]);
    const __m512i q2 = _mm512_permutex2var_epi16(t[4], x, t[5]);
    const __m512i q3 = _mm512_permutex2var_epi16(t[6], x, t[7]);
    const __mmask32 b6 = _mm512_test_epi16_mask(x, bit6), b7 = _mm512_test_epi16_mask(x, bit7);
    const __m512i lo = _mm512_mask_blend_epi16(b6, q0, q1);
    const __m512i hi = _mm512_mask_blend_epi16(b6, q2, q3);
    _mm512_mask_storeu_epi16(out + i, m, _mm512_mask_blend_epi16(b7, lo, hi));
  }
}
