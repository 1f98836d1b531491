/*
 * avx512vnni/q8_elementwise.c — int8 ADD / SUB and MUL of two equally
 * shaped runs of elements (the op splits channel broadcasts into rows) for
 * AVX-512, 16 elements per step: the reference's arithmetic (quantized.c,
 * qadd_one and qmul_body) lane by lane — offsets, the left shift, each
 * input's multiplier, the sum or product, the output multiplier, zero point
 * and clamp — so the results are bit-exact (the multiplications by
 * fixed-point multipliers fused as in q8_requant.h's q8_mbqm64; four
 * vectors clamped and narrowed together).
 */
#include "kernels/avx512vnni/q8_requant.h"

/* The output zero point added and before the clamp: 16 int32 results. */
Q8_INLINE __m512i add16(__m128i a8, __m128i b8, const wick_qadd_params *p, bool subtract,
                        const q8_rq64 *m1, const q8_rq64 *m2, const q8_rq64 *mo) {
  const __m128i ls = _mm_cvtsi32_si128(p->left_shift);
  const __m512i a = _mm512_cvtepi8_epi32(a8), b = _mm512_cvtepi8_epi32(b8);
  const __m512i x = _mm512_sll_epi32(_mm512_add_epi32(a, _mm512_set1_epi32(p->input1_offset)), ls);
  const __m512i y = _mm512_sll_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(p->input2_offset)), ls);
  const __m512i sx = q8_mbqm64(x, m1), sy = q8_mbqm64(y, m2);
  const __m512i raw = subtract ? _mm512_sub_epi32(sx, sy) : _mm512_add_epi32(sx, sy);
  return q8_requant64(raw, mo);
}

Q8_INLINE __m128i load16(const int8_t *p) {
  return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* 64 elements per step (four vectors narrowed together), then 16 at a time. */
void wick_q8_add_ukernel__avx512vnni(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                     const wick_qadd_params *p, bool subtract) {
  const q8_rq64 m1 = q8_rq64_set(p->input1_multiplier, p->input1_shift, 0, -128, 127);
  const q8_rq64 m2 = q8_rq64_set(p->input2_multiplier, p->input2_shift, 0, -128, 127);
  const q8_rq64 mo =
      q8_rq64_set(p->output_multiplier, p->output_shift, p->output_offset, p->act_min, p->act_max);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i v[4];
    for (size_t j = 0; j < 4; j++)
      v[j] = add16(load16(a + i + 16 * j), load16(b + i + 16 * j), p, subtract, &m1, &m2, &mo);
    _mm512_storeu_si512(out + i, q8_narrow64_x4(v[0], v[1], v[2], v[3], &mo));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i v = add16(_mm_maskz_loadu_epi8(m, a + i), _mm_maskz_loadu_epi8(m, b + i), p,
                            subtract, &m1, &m2, &mo);
    _mm_mask_storeu_epi8(out + i, m, q8_narrow64(v, &mo));
  }
}

/* The output zero point added and before the clamp: 16 int32 results. */
Q8_INLINE __m512i mul16(__m128i a8, __m128i b8, const wick_qmul_params *p, const q8_rq64 *mo) {
  const __m512i x = _mm512_add_epi32(_mm512_cvtepi8_epi32(a8), _mm512_set1_epi32(p->input1_offset));
  const __m512i y = _mm512_add_epi32(_mm512_cvtepi8_epi32(b8), _mm512_set1_epi32(p->input2_offset));
  return q8_requant64(_mm512_mullo_epi32(x, y), mo);
}

void wick_q8_mul_ukernel__avx512vnni(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                     const wick_qmul_params *p) {
  const q8_rq64 mo =
      q8_rq64_set(p->output_multiplier, p->output_shift, p->output_offset, p->act_min, p->act_max);
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i v[4];
    for (size_t j = 0; j < 4; j++)
      v[j] = mul16(load16(a + i + 16 * j), load16(b + i + 16 * j), p, &mo);
    _mm512_storeu_si512(out + i, q8_narrow64_x4(v[0], v[1], v[2], v[3], &mo));
  }
  for (; i < n; i += 16) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i v = mul16(_mm_maskz_loadu_epi8(m, a + i), _mm_maskz_loadu_epi8(m, b + i), p, &mo);
    _mm_mask_storeu_epi8(out + i, m, q8_narrow64(v, &mo));
  }
}
