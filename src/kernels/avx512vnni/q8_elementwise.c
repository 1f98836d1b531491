/*
 * avx512vnni/q8_elementwise.c — int8 ADD / SUB and MUL of two equally
 * shaped runs of elements (the op splits channel broadcasts into rows) for
 * AVX-512, 16 elements per step: the reference's arithmetic (quantized.c,
 * qadd_one and qmul_body) lane by lane — offsets, the left shift, each
 * input's multiplier, the sum or product, the output multiplier, zero point
 * and clamp — so the results are bit-exact.
 */
#include "kernels/avx512vnni/q8_requant.h"

Q8_INLINE __m512i add16(__m512i a, __m512i b, const wick_qadd_params *p, bool subtract,
                        const q8_multiplier *m1, const q8_multiplier *m2,
                        const q8_multiplier *mo) {
  const __m128i ls = _mm_cvtsi32_si128(p->left_shift);
  const __m512i x = _mm512_sll_epi32(_mm512_add_epi32(a, _mm512_set1_epi32(p->input1_offset)), ls);
  const __m512i y = _mm512_sll_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(p->input2_offset)), ls);
  const __m512i sx = q8_mbqm1(x, m1), sy = q8_mbqm1(y, m2);
  const __m512i raw = subtract ? _mm512_sub_epi32(sx, sy) : _mm512_add_epi32(sx, sy);
  __m512i v = _mm512_add_epi32(q8_mbqm1(raw, mo), _mm512_set1_epi32(p->output_offset));
  v = _mm512_max_epi32(v, _mm512_set1_epi32(p->act_min));
  return _mm512_min_epi32(v, _mm512_set1_epi32(p->act_max));
}

void wick_q8_add_ukernel__avx512vnni(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                     const wick_qadd_params *p, bool subtract) {
  const q8_multiplier m1 = q8_multiplier_set(p->input1_multiplier, p->input1_shift);
  const q8_multiplier m2 = q8_multiplier_set(p->input2_multiplier, p->input2_shift);
  const q8_multiplier mo = q8_multiplier_set(p->output_multiplier, p->output_shift);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i va = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
    const __m512i vb = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
    _mm_storeu_si128((__m128i *)(void *)(out + i),
                     _mm512_cvtepi32_epi8(add16(va, vb, p, subtract, &m1, &m2, &mo)));
  }
  if (i < n) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i va = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, a + i));
    const __m512i vb = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + i));
    _mm_mask_storeu_epi8(out + i, m, _mm512_cvtepi32_epi8(add16(va, vb, p, subtract, &m1, &m2, &mo)));
  }
}

Q8_INLINE __m512i mul16(__m512i a, __m512i b, const wick_qmul_params *p, const q8_multiplier *mo) {
  const __m512i x = _mm512_add_epi32(a, _mm512_set1_epi32(p->input1_offset));
  const __m512i y = _mm512_add_epi32(b, _mm512_set1_epi32(p->input2_offset));
  __m512i v = q8_mbqm1(_mm512_mullo_epi32(x, y), mo);
  v = _mm512_add_epi32(v, _mm512_set1_epi32(p->output_offset));
  v = _mm512_max_epi32(v, _mm512_set1_epi32(p->act_min));
  return _mm512_min_epi32(v, _mm512_set1_epi32(p->act_max));
}

void wick_q8_mul_ukernel__avx512vnni(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                     const wick_qmul_params *p) {
  const q8_multiplier mo = q8_multiplier_set(p->output_multiplier, p->output_shift);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i va = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
    const __m512i vb = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
    _mm_storeu_si128((__m128i *)(void *)(out + i), _mm512_cvtepi32_epi8(mul16(va, vb, p, &mo)));
  }
  if (i < n) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i va = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, a + i));
    const __m512i vb = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + i));
    _mm_mask_storeu_epi8(out + i, m, _mm512_cvtepi32_epi8(mul16(va, vb, p, &mo)));
  }
}
