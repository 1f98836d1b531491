/*
 * avx512vnni/q16_activations.c — int16 LOGISTIC and TANH for AVX-512 (the VNNI tables;
 * BW for the word permutes), 32 elements per step: avx2/q16_activations.c's arithmetic
 * (wick_q16_logistic__reference / wick_q16_tanh__reference lane by lane: the input rescaled
 * to steps of 1/12288 in 32-bit lanes, the node and its neighbour from the table, the linear
 * interpolation in wrapping 32-bit lanes, the saturated top, the odd symmetry, the final
 * shift), with the two table reads as register lookups instead of gathers: the table's
 * 256 uint16 values (and the same shifted by one node) live in 8 zmm each, and the 32
 * nodes of a step, packed into words, index them by four VPERMI2W and a choice of quarter
 * by bits 6 and 7. The words come back into the 32-bit lanes in the order the pack put
 * them (unpack low / high per 128-bit lane). Compiled with its folder's flags.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))

/* table[idx] for 32 word indices < 256, the table as 8 vectors of 32 words. */
INLINE __m512i lookup(const __m512i t[8], __m512i idx) {
  const __m512i q0 = _mm512_permutex2var_epi16(t[0], idx, t[1]);
  const __m512i q1 = _mm512_permutex2var_epi16(t[2], idx, t[3]);
  const __m512i q2 = _mm512_permutex2var_epi16(t[4], idx, t[5]);
  const __m512i q3 = _mm512_permutex2var_epi16(t[6], idx, t[7]);
  const __mmask32 b6 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x40));
  const __mmask32 b7 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x80));
  return _mm512_mask_blend_epi16(b7, _mm512_mask_blend_epi16(b6, q0, q1),
                                 _mm512_mask_blend_epi16(b6, q2, q3));
}

/* The per-lane parts of 16 inputs: rescaled x, its interpolation fraction, the node (at most
 * 254) and whether it is past the table. */
typedef struct lanes {
  __m512i x, frac, at;
  __mmask16 top;
} lanes;

INLINE lanes prepare(__m512i xin, __m512i m, __m512i half, __m128i shift, bool tanh) {
  lanes l;
  l.x = _mm512_sra_epi32(_mm512_add_epi32(_mm512_mullo_epi32(xin, m), half), shift);
  const __m512i ax = _mm512_abs_epi32(l.x);
  const __m512i node = tanh ? _mm512_srli_epi32(ax, 8) : _mm512_srli_epi32(ax, 9);
  l.top = _mm512_cmpgt_epi32_mask(node, _mm512_set1_epi32(254));
  l.at = _mm512_min_epi32(node, _mm512_set1_epi32(254));
  l.frac = _mm512_and_si512(ax, _mm512_set1_epi32(tanh ? 0xFF : 0x1FF));
  return l;
}

/* 16 results (int32 lanes inside int16) from the lanes and their table values a, b. */
INLINE __m512i finish(const lanes *l, __m512i a, __m512i b, bool tanh) {
  __m512i r = _mm512_add_epi32(tanh ? _mm512_slli_epi32(a, 8) : _mm512_slli_epi32(a, 9),
                               _mm512_mullo_epi32(l->frac, _mm512_sub_epi32(b, a)));
  r = _mm512_mask_mov_epi32(r, l->top, _mm512_set1_epi32(tanh ? 0xFFFF << 8 : 0x7FFF << 10));
  const __mmask16 negative = _mm512_cmplt_epi32_mask(l->x, _mm512_setzero_si512());
  if (tanh) {
    const __m512i pos = _mm512_add_epi32(r, _mm512_set1_epi32(-(1 << 23) + (1 << 7)));
    const __m512i neg = _mm512_sub_epi32(_mm512_set1_epi32((1 << 23) + (1 << 7) - 1), r);
    return _mm512_srai_epi32(_mm512_mask_blend_epi32(negative, pos, neg), 8); /* floor */
  }
  const __m512i pos = _mm512_add_epi32(r, _mm512_set1_epi32(1 << 9));
  const __m512i neg = _mm512_sub_epi32(_mm512_set1_epi32((1 << 25) + (1 << 9) - 1), r);
  return _mm512_srli_epi32(_mm512_mask_blend_epi32(negative, pos, neg), 10);
}

INLINE void run(size_t n, const __m512i ta[8], const __m512i tb[8], int32_t multiplier,
                int32_t shift, const int16_t *in, int16_t *out, bool tanh) {
  const __m512i m = _mm512_set1_epi32(multiplier);
  const __m512i half = _mm512_set1_epi32(shift > 0 ? 1 << (shift - 1) : 0);
  const __m128i sh = _mm_cvtsi32_si128(shift);
  const __m512i zero = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 32) {
    const size_t k = n - i < 32 ? n - i : 32;
    const __mmask32 mask = k == 32 ? ~(__mmask32)0 : (((__mmask32)1 << k) - 1);
    const __m512i v = _mm512_maskz_loadu_epi16(mask, in + i);
    const lanes l0 = prepare(_mm512_cvtepi16_epi32(_mm512_castsi512_si256(v)), m, half, sh, tanh);
    const lanes l1 =
        prepare(_mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(v, 1)), m, half, sh, tanh);
    /* per 128-bit lane j: words 0-3 = l0's lanes 4j..4j+3, words 4-7 = l1's */
    const __m512i idx = _mm512_packus_epi32(l0.at, l1.at);
    const __m512i a = lookup(ta, idx), b = lookup(tb, idx);
    const __m512i r0 =
        finish(&l0, _mm512_unpacklo_epi16(a, zero), _mm512_unpacklo_epi16(b, zero), tanh);
    const __m512i r1 =
        finish(&l1, _mm512_unpackhi_epi16(a, zero), _mm512_unpackhi_epi16(b, zero), tanh);
    _mm256_mask_storeu_epi16(out + i, (__mmask16)mask, _mm512_cvtepi32_epi16(r0));
    _mm256_mask_storeu_epi16(out + i + 16, (__mmask16)(mask >> 16), _mm512_cvtepi32_epi16(r1));
  }
}

void wick_q16_sigmoid__avx512vnni(size_t n, const int32_t table[256], int32_t multiplier,
                                  int32_t shift, bool tanh, const int16_t *in, int16_t *out) {
  /* the table's values (uint16, here as words) and the same one node on: b = table[node + 1] */
  int16_t words[2][256];
  for (int i = 0; i < 256; i++) {
    words[0][i] = (int16_t)(uint16_t)table[i];
    words[1][i] = i < 255 ? (int16_t)(uint16_t)table[i + 1] : 0;
  }
  __m512i ta[8], tb[8];
  for (int q = 0; q < 8; q++) {
    ta[q] = _mm512_loadu_si512(words[0] + 32 * q);
    tb[q] = _mm512_loadu_si512(words[1] + 32 * q);
  }
  if (tanh)
    run(n, ta, tb, multiplier, shift, in, out, true);
  else
    run(n, ta, tb, multiplier, shift, in, out, false);
}
