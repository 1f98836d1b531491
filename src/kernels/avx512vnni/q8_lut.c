/*
 * avx512vnni/q8_lut.c — 8-bit table lookups (int8/uint8 LOGISTIC, TANH,
 * GELU, RSQRT: out[i] = lut[(uint8)in[i]]) with AVX-512 VBMI, 64 bytes per
 * step: two VPERMI2B lookups into 128-entry halves of the table, chosen by
 * each byte's top bit. Called only when q8_select.c saw VBMI (which this
 * file also compiles for, on top of its folder's flags).
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
