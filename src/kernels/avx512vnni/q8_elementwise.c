/*
 * avx512vnni/q8_elementwise.c — int8 ADD / SUB and MUL of two equally
 * shaped runs of elements (the op splits channel broadcasts into rows) for
 * AVX-512, 16 elements per step (and their int16 forms, with QUANTIZE from
 * int16): the reference's arithmetic (quantized.c,
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

/* ---- int16 (the 16x8 scheme's ADD / SUB / MUL and QUANTIZE from int16) ----
 * The same arithmetic on 16 int16 lanes widened to int32 (|x| <= 2^15, so the left shift of
 * 15 stays inside int32 as in the reference); the result clamped in int32 and narrowed.
 * q8_rq64's fused floor is checked for shifts in [-31, 30]: parameters outside that range (which no
 * real scale produces) run the AVX2 kernels. */

static bool shift_ok(int32_t shift) { return shift >= -31 && shift <= 30; }

Q8_INLINE __m512i load16_i16(const int16_t *p) {
  return _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p));
}

Q8_INLINE __m512i load16_i16_tail(const int16_t *p, __mmask16 m) {
  return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, p));
}

/* Clamp 16 int32 lanes to [lo, hi] (inside int16) and narrow. */
Q8_INLINE __m256i clamp16(__m512i v, __m512i lo, __m512i hi) {
  return _mm512_cvtepi32_epi16(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi));
}

/* ADD / SUB of 16 widened lanes, before the clamp. */
Q8_INLINE __m512i add_i16(__m512i a, __m512i b, __m512i off1, __m512i off2, __m128i ls,
                          bool subtract, const q8_rq64 *m1, const q8_rq64 *m2, const q8_rq64 *mo) {
  const __m512i x = _mm512_sll_epi32(_mm512_add_epi32(a, off1), ls);
  const __m512i y = _mm512_sll_epi32(_mm512_add_epi32(b, off2), ls);
  const __m512i sx = q8_mbqm64(x, m1), sy = q8_mbqm64(y, m2);
  return q8_requant64(subtract ? _mm512_sub_epi32(sx, sy) : _mm512_add_epi32(sx, sy), mo);
}

/* An int16 input's rescale in 32-bit lanes (the 16x8 scheme's ADD / SUB: zero points 0, left
 * shift 15, the input's shift -e with 0 <= e <= 30, multiplier m >= 0). q8_rq64's fused floor
 * of mbqm(x * 2^15, m, -e) is floor((x*m*2^15 + 2^30 + h*2^31) / 2^(31+e)), h = 0 (e = 0),
 * 2^(e-1) (x >= 0) or 2^(e-1) - 1 (x < 0). Dividing through by 2^15 and splitting
 * m = mh * 2^16 + ml (mh < 2^15, ml < 2^16), that is
 *
 *     floor((x*mh + h + floor((x*ml + 2^15) / 2^16)) / 2^e)
 *
 * (nested floor divisions) where |x*mh| < 2^30, x*ml + 2^15 stays inside int32 and the sum
 * below 2^30 + 2^29 + 2^15: every step exact in int32 lanes, no 64-bit products. */
typedef struct rescale16 {
  __m512i mh, ml, h;
  __m128i e;
  bool round; /* e > 0: h and the negative correction apply */
} rescale16;

static bool rescale16_ok(int32_t multiplier, int32_t shift) {
  return multiplier >= 0 && shift <= 0 && shift >= -30;
}

Q8_INLINE rescale16 rescale16_set(int32_t multiplier, int32_t shift) {
  rescale16 r;
  r.mh = _mm512_set1_epi32(multiplier >> 16);
  r.ml = _mm512_set1_epi32(multiplier & 0xFFFF);
  r.h = _mm512_set1_epi32(shift < 0 ? 1 << (-shift - 1) : 0);
  r.e = _mm_cvtsi32_si128(-shift);
  r.round = shift < 0;
  return r;
}

Q8_INLINE __m512i rescale16_apply(__m512i x, const rescale16 *r) {
  const __m512i e =
      _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(x, r->ml), _mm512_set1_epi32(1 << 15)),
                        16);
  __m512i s = _mm512_add_epi32(_mm512_mullo_epi32(x, r->mh), e);
  if (!r->round) return s;
  s = _mm512_add_epi32(s, r->h);
  s = _mm512_mask_sub_epi32(s, _mm512_movepi32_mask(x), s, _mm512_set1_epi32(1));
  return _mm512_sra_epi32(s, r->e);
}

/* ADD / SUB on rescale16 (both inputs), the sum's requantization as add_i16's. */
Q8_INLINE __m512i add_i16_32(__m512i a, __m512i b, bool subtract, const rescale16 *r1,
                             const rescale16 *r2, const q8_rq64 *mo) {
  const __m512i sx = rescale16_apply(a, r1), sy = rescale16_apply(b, r2);
  return q8_requant64(subtract ? _mm512_sub_epi32(sx, sy) : _mm512_add_epi32(sx, sy), mo);
}

Q8_INLINE void add16_run32(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                           const wick_qadd_params *p, bool subtract) {
  const rescale16 r1 = rescale16_set(p->input1_multiplier, p->input1_shift);
  const rescale16 r2 = rescale16_set(p->input2_multiplier, p->input2_shift);
  const q8_rq64 mo = q8_rq64_set(p->output_multiplier, p->output_shift, p->output_offset, 0, 0);
  const __m512i lo = _mm512_set1_epi32(p->act_min), hi = _mm512_set1_epi32(p->act_max);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i v = add_i16_32(load16_i16(a + i), load16_i16(b + i), subtract, &r1, &r2, &mo);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), clamp16(v, lo, hi));
  }
  if (i < n) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i v =
        add_i16_32(load16_i16_tail(a + i, m), load16_i16_tail(b + i, m), subtract, &r1, &r2, &mo);
    _mm256_mask_storeu_epi16(out + i, m, clamp16(v, lo, hi));
  }
}

Q8_INLINE void add16_run(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                         const wick_qadd_params *p, bool subtract) {
  const q8_rq64 m1 = q8_rq64_set(p->input1_multiplier, p->input1_shift, 0, 0, 0);
  const q8_rq64 m2 = q8_rq64_set(p->input2_multiplier, p->input2_shift, 0, 0, 0);
  const q8_rq64 mo = q8_rq64_set(p->output_multiplier, p->output_shift, p->output_offset, 0, 0);
  const __m512i off1 = _mm512_set1_epi32(p->input1_offset);
  const __m512i off2 = _mm512_set1_epi32(p->input2_offset);
  const __m512i lo = _mm512_set1_epi32(p->act_min), hi = _mm512_set1_epi32(p->act_max);
  const __m128i ls = _mm_cvtsi32_si128(p->left_shift);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i v =
        add_i16(load16_i16(a + i), load16_i16(b + i), off1, off2, ls, subtract, &m1, &m2, &mo);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), clamp16(v, lo, hi));
  }
  if (i < n) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i v = add_i16(load16_i16_tail(a + i, m), load16_i16_tail(b + i, m), off1, off2, ls,
                              subtract, &m1, &m2, &mo);
    _mm256_mask_storeu_epi16(out + i, m, clamp16(v, lo, hi));
  }
}

void wick_q16_add_ukernel__avx512vnni(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                      const wick_qadd_params *p, bool subtract) {
  if (!shift_ok(p->input1_shift) || !shift_ok(p->input2_shift) || !shift_ok(p->output_shift))
    wick_q16_add_ukernel__avx2(n, a, b, out, p, subtract);
  else if (p->left_shift == 15 && p->input1_offset == 0 && p->input2_offset == 0 &&
           rescale16_ok(p->input1_multiplier, p->input1_shift) &&
           rescale16_ok(p->input2_multiplier, p->input2_shift))
    subtract ? add16_run32(n, a, b, out, p, true) : add16_run32(n, a, b, out, p, false);
  else if (subtract)
    add16_run(n, a, b, out, p, true);
  else
    add16_run(n, a, b, out, p, false);
}

Q8_INLINE __m512i mul_i16(__m512i a, __m512i b, __m512i off1, __m512i off2, const q8_rq64 *mo) {
  return q8_requant64(_mm512_mullo_epi32(_mm512_add_epi32(a, off1), _mm512_add_epi32(b, off2)), mo);
}

void wick_q16_mul_ukernel__avx512vnni(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                      const wick_qmul_params *p) {
  if (!shift_ok(p->output_shift)) {
    wick_q16_mul_ukernel__avx2(n, a, b, out, p);
    return;
  }
  const q8_rq64 mo = q8_rq64_set(p->output_multiplier, p->output_shift, p->output_offset, 0, 0);
  const __m512i off1 = _mm512_set1_epi32(p->input1_offset);
  const __m512i off2 = _mm512_set1_epi32(p->input2_offset);
  const __m512i lo = _mm512_set1_epi32(p->act_min), hi = _mm512_set1_epi32(p->act_max);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i v = mul_i16(load16_i16(a + i), load16_i16(b + i), off1, off2, &mo);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), clamp16(v, lo, hi));
  }
  if (i < n) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i v =
        mul_i16(load16_i16_tail(a + i, m), load16_i16_tail(b + i, m), off1, off2, &mo);
    _mm256_mask_storeu_epi16(out + i, m, clamp16(v, lo, hi));
  }
}

/* QUANTIZE from int16: clamp(mbqm(x - in_zp) + out_zp) to int8 (out16 false) or int16. */
void wick_q16_requant_ukernel__avx512vnni(size_t n, const int16_t *in, void *out, bool out16,
                                          const wick_q_requant_params *p) {
  if (!shift_ok(p->shift)) {
    wick_q16_requant_ukernel__avx2(n, in, out, out16, p);
    return;
  }
  const q8_rq64 q = q8_rq64_set(p->multiplier, p->shift, p->out_zp, 0, 0);
  const __m512i zp = _mm512_set1_epi32(p->in_zp);
  const __m512i lo = _mm512_set1_epi32(p->lo), hi = _mm512_set1_epi32(p->hi);
  int8_t *o8 = out;
  int16_t *o16 = out;
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 m = q8_mask16(n - i);
    const __m512i x = n - i >= 16 ? load16_i16(in + i) : load16_i16_tail(in + i, m);
    const __m512i v =
        _mm512_min_epi32(_mm512_max_epi32(q8_requant64(_mm512_sub_epi32(x, zp), &q), lo), hi);
    if (out16)
      _mm256_mask_storeu_epi16(o16 + i, m, _mm512_cvtepi32_epi16(v));
    else
      _mm_mask_storeu_epi8(o8 + i, m, _mm512_cvtepi32_epi8(v));
  }
}
