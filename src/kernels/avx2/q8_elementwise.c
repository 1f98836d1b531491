/*
 * avx2/q8_elementwise.c — int8 and int16 ADD / SUB and MUL, and int8
 * SQUARED_DIFFERENCE, of two equally shaped runs of elements (the op splits
 * broadcasts into runs), and the requantization of int16 elements (QUANTIZE)
 * for AVX2, 8 elements per vector: the reference's arithmetic (quantized.c,
 * qadd_one, qmul_body and wick_q_squared_difference_i8__reference) lane by
 * lane — offsets, the left shift, each input's multiplier, the sum,
 * difference, product or squared difference (int32 products wrap, as the
 * reference's), the output multiplier, zero point and clamp — with
 * template/q8_requant.h's fixed-point stage (q8_mbqm, the AVX2 GEMM's), so
 * the results are bit-exact. int8 MUL multiplies 16-bit factors and requantizes with
 * avx2/q8_requant.h's fused stage. The int8 / uint8 ADD / SUB of the add8 entries
 * take each input's rescale in 32-bit arithmetic instead (q8.h,
 * wick_q8_rescale8) and the sum's requantization fused (avx2/q8_requant.h).
 * Also the column sums of 8-bit rows (MEAN / SUM over a global average pool's H, W).
 * Compiled with -mavx2.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/avx2/q8_requant.h"
#include "kernels/avx2/simd.h"
#include "kernels/q8.h"
#include "kernels/template/q8_requant.h"

/* 8 int16 sign-extended to int32 lanes. */
SIMD_INLINE __m256i load8_16(const int16_t *p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* Two vectors of 8 clamped results (inside int16) as 16 int16 in order. */
SIMD_INLINE __m256i narrow16_16(__m256i v0, __m256i v1) {
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
}

/* 8 bytes sign-extended to int32 lanes. */
SIMD_INLINE __m256i load8(const int8_t *p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

/* Two vectors of 8 clamped results (inside int8) as 16 bytes in order. */
SIMD_INLINE __m128i narrow16(__m256i v0, __m256i v1) {
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_setzero_si256());
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* The first n < 16 elements of a and b, zero-filled, into ta and tb. */
SIMD_INLINE void copy_tail(size_t n, const int8_t *a, const int8_t *b, int8_t ta[16],
                           int8_t tb[16]) {
  memset(ta, 0, 16), memset(tb, 0, 16);
  memcpy(ta, a, n), memcpy(tb, b, n);
}

/* ADD, SUB, MUL or SQUARED_DIFFERENCE: a constant at every call, so the always-inline runs
 * below fold to one. */
typedef enum binary_op { OP_ADD, OP_SUB, OP_MUL, OP_SQUARED_DIFFERENCE } binary_op;

/* The op's constants (MUL uses only mo, off1 and off2). */
typedef struct binary_consts {
  q8_rq m1, m2, mo;
  __m256i off1, off2;
  __m128i ls;
} binary_consts;

SIMD_INLINE void add_consts_set(binary_consts *k, const wick_qadd_params *p) {
  k->m1 = q8_rq_set(p->input1_multiplier, p->input1_shift, 0, INT32_MIN, INT32_MAX);
  k->m2 = q8_rq_set(p->input2_multiplier, p->input2_shift, 0, INT32_MIN, INT32_MAX);
  k->mo =
      q8_rq_set(p->output_multiplier, p->output_shift, p->output_offset, p->act_min, p->act_max);
  k->off1 = _mm256_set1_epi32(p->input1_offset);
  k->off2 = _mm256_set1_epi32(p->input2_offset);
  k->ls = _mm_cvtsi32_si128(p->left_shift);
}

/* MUL's constants; the others stay unset (MUL does not read them). */
SIMD_INLINE void mul_consts_set(binary_consts *k, const wick_qmul_params *p) {
  k->mo =
      q8_rq_set(p->output_multiplier, p->output_shift, p->output_offset, p->act_min, p->act_max);
  k->off1 = _mm256_set1_epi32(p->input1_offset);
  k->off2 = _mm256_set1_epi32(p->input2_offset);
}

/* 8 results of ADD / SUB / MUL / SQUARED_DIFFERENCE, clamped (int32 lanes; MUL's product and
 * the squared difference wrap like the reference's). */
SIMD_INLINE __m256i binary8(__m256i a, __m256i b, const binary_consts *k, binary_op op) {
  if (op == OP_MUL) {
    const __m256i x = _mm256_add_epi32(a, k->off1), y = _mm256_add_epi32(b, k->off2);
    return q8_requant_i32(_mm256_mullo_epi32(x, y), &k->mo);
  }
  const __m256i x = _mm256_sll_epi32(_mm256_add_epi32(a, k->off1), k->ls);
  const __m256i y = _mm256_sll_epi32(_mm256_add_epi32(b, k->off2), k->ls);
  const __m256i sx = q8_mbqm(x, &k->m1), sy = q8_mbqm(y, &k->m2);
  if (op == OP_SQUARED_DIFFERENCE) {
    const __m256i diff = _mm256_sub_epi32(sx, sy);
    return q8_requant_i32(_mm256_mullo_epi32(diff, diff), &k->mo);
  }
  return q8_requant_i32(op == OP_SUB ? _mm256_sub_epi32(sx, sy) : _mm256_add_epi32(sx, sy), &k->mo);
}

/* 16 elements per step (two vectors narrowed together), the tail through
 * small copies. */
SIMD_INLINE void binary_run(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                            const binary_consts *k, binary_op op) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v0 = binary8(load8(a + i), load8(b + i), k, op);
    const __m256i v1 = binary8(load8(a + i + 8), load8(b + i + 8), k, op);
    _mm_storeu_si128((__m128i *)(void *)(out + i), narrow16(v0, v1));
  }
  if (i < n) {
    int8_t ta[16], tb[16], to[16];
    copy_tail(n - i, a + i, b + i, ta, tb);
    const __m256i v0 = binary8(load8(ta), load8(tb), k, op);
    const __m256i v1 = binary8(load8(ta + 8), load8(tb + 8), k, op);
    _mm_storeu_si128((__m128i *)(void *)to, narrow16(v0, v1));
    memcpy(out + i, to, n - i);
  }
}

void wick_q8_add_ukernel__avx2(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                               const wick_qadd_params *p, bool subtract) {
  binary_consts k;
  add_consts_set(&k, p);
  if (subtract)
    binary_run(n, a, b, out, &k, OP_SUB);
  else
    binary_run(n, a, b, out, &k, OP_ADD);
}

/* The requantization of one multiplier and shift (>= -31) for every lane, avx2/q8_requant.h's
 * fused form. */
SIMD_INLINE q8_rq8 rq8_uniform(int32_t multiplier, int32_t shift, int32_t zp, int32_t lo,
                               int32_t hi) {
  int32_t h[5 * 8]; /* q8_rq8_load's header rows: bias (unused), multiplier, odd multiplier,
                     * left shift, right shift */
  for (int i = 0; i < 8; i++) {
    h[i] = 0;
    h[8 + i] = h[16 + i] = multiplier;
    h[24 + i] = shift > 0 ? shift : 0;
    h[32 + i] = shift > 0 ? 0 : -shift;
  }
  wick_q8_output o;
  memset(&o, 0, sizeof o);
  o.zero_point = zp;
  o.lo = lo;
  o.hi = hi;
  return q8_rq8_load(h, 8, &o);
}

/* 16 MUL results as bytes: (a + off1)(b + off2) with 16-bit factors (|a + off1| <= 255) and
 * their exact 32-bit products (VPMULLW, VPMULHW interleaved: elements 0-3 | 8-11 and 4-7 |
 * 12-15, which the two packs put back in order), requantized by the fused stage (bit-exact
 * with the reference's mbqm: the product wraps nowhere, a left shift wraps as the
 * reference's). int8, or uint8 when u8. */
SIMD_INLINE __m128i mul16_step(const uint8_t *a, const uint8_t *b, __m256i off1, __m256i off2,
                               const q8_rq8 *mo, bool u8) {
  const __m128i va = _mm_loadu_si128((const __m128i *)(const void *)a);
  const __m128i vb = _mm_loadu_si128((const __m128i *)(const void *)b);
  const __m256i x =
      _mm256_add_epi16(u8 ? _mm256_cvtepu8_epi16(va) : _mm256_cvtepi8_epi16(va), off1);
  const __m256i y =
      _mm256_add_epi16(u8 ? _mm256_cvtepu8_epi16(vb) : _mm256_cvtepi8_epi16(vb), off2);
  const __m256i lo = _mm256_mullo_epi16(x, y), hi = _mm256_mulhi_epi16(x, y);
  const __m256i v0 = q8_rq8_apply(_mm256_unpacklo_epi16(lo, hi), mo);
  const __m256i v1 = q8_rq8_apply(_mm256_unpackhi_epi16(lo, hi), mo);
  const __m256i w = _mm256_packs_epi32(v0, v1); /* int16, in order */
  const __m128i w0 = _mm256_castsi256_si128(w), w1 = _mm256_extracti128_si256(w, 1);
  return u8 ? _mm_packus_epi16(w0, w1) : _mm_packs_epi16(w0, w1);
}

SIMD_INLINE void mul_run(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                         const wick_qmul_params *p, bool u8) {
  const q8_rq8 mo =
      rq8_uniform(p->output_multiplier, p->output_shift, p->output_offset, p->act_min, p->act_max);
  const __m256i off1 = _mm256_set1_epi16((int16_t)p->input1_offset);
  const __m256i off2 = _mm256_set1_epi16((int16_t)p->input2_offset);
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128((__m128i *)(void *)(out + i), mul16_step(a + i, b + i, off1, off2, &mo, u8));
  if (i < n) {
    uint8_t ta[16] = {0}, tb[16] = {0}, to[16];
    memcpy(ta, a + i, n - i), memcpy(tb, b + i, n - i);
    _mm_storeu_si128((__m128i *)(void *)to, mul16_step(ta, tb, off1, off2, &mo, u8));
    memcpy(out + i, to, n - i);
  }
}

void wick_q8_mul_ukernel__avx2(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                               const wick_qmul_params *p) {
  mul_run(n, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)out, p, false);
}

void wick_q8_mul_u8_ukernel__avx2(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                                  const wick_qmul_params *p) {
  mul_run(n, a, b, out, p, true);
}

void wick_q8_squared_difference_ukernel__avx2(size_t n, const int8_t *a, const int8_t *b,
                                              int8_t *out, const wick_qadd_params *p) {
  binary_consts k;
  add_consts_set(&k, p);
  binary_run(n, a, b, out, &k, OP_SQUARED_DIFFERENCE);
}

/* ---- int8 / uint8 ADD / SUB with 32-bit input rescales (q8.h, wick_q8_rescale8) ----
 * Each input's rescale is two 32-bit multiplies, a sign correction and a shift; the sum's
 * requantization is avx2/q8_requant.h's fused one (one 64-bit floor per lane), bit-exact with
 * the reference's double rounding. On an AMD Zen 3 (MiniLM's [4, 32, 384], CPU time per
 * element): 0.42 ns for a residual ADD against 0.77 with the kernels above, 0.30 against a
 * rescaled row or scalar (the larger-scale input's rescale is then x * 2^19 alone); AVX2
 * gathers from 256-entry tables of T were slower still (0.98 ns: Zen 3's VPGATHERDD). */

typedef struct rescale8 {
  __m256i offset, q, rho, c, cneg;
  __m128i k;
} rescale8;

SIMD_INLINE rescale8 rescale8_set(const wick_q8_rescale8 *r) {
  rescale8 t;
  t.offset = _mm256_set1_epi32(r->offset);
  t.q = _mm256_set1_epi32(r->q);
  t.rho = _mm256_set1_epi32(r->rho);
  t.c = _mm256_set1_epi32(r->c);
  t.cneg = _mm256_set1_epi32(r->cneg);
  t.k = _mm_cvtsi32_si128(r->k);
  return t;
}

/* T(v) of 8 int32 lanes: x * q + ((x * rho + c - (x < 0 ? cneg : 0)) >> k), x = v + offset;
 * `simple` (rescale8_simple) drops the second term, which is then 0. */
SIMD_INLINE __m256i rescale8_apply(__m256i v, const rescale8 *t, bool simple) {
  const __m256i x = _mm256_add_epi32(v, t->offset);
  if (simple) return _mm256_mullo_epi32(x, t->q);
  __m256i p = _mm256_add_epi32(_mm256_mullo_epi32(x, t->rho), t->c);
  p = _mm256_sub_epi32(p, _mm256_and_si256(_mm256_srai_epi32(x, 31), t->cneg));
  return _mm256_add_epi32(_mm256_mullo_epi32(x, t->q), _mm256_sra_epi32(p, t->k));
}

/* T(x) = x * q exactly: rho 0, no sign correction and 0 <= c < 2^k. This is the input with the
 * larger scale (multiplier 2^30, shift 0: T(x) = x * 2^19), so every ADD / SUB has one. */
static bool rescale8_simple(const wick_q8_rescale8 *r) {
  return r->rho == 0 && r->cneg == 0 && r->c >= 0 && r->k < 31 && r->c < ((int32_t)1 << r->k);
}

/* The sum's requantization: one multiplier and shift (>= -31) for every lane. */
SIMD_INLINE q8_rq8 add8_output(const wick_q8_add8_params *p) {
  return rq8_uniform(p->output_multiplier, p->output_shift, p->output_offset, p->act_min,
                     p->act_max);
}

/* 8 elements (int8 or uint8) widened to int32 lanes. */
SIMD_INLINE __m256i load8_u(const uint8_t *p, bool u8) {
  const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
  return u8 ? _mm256_cvtepu8_epi32(v) : _mm256_cvtepi8_epi32(v);
}

/* 16 clamped results (inside the element type) stored as bytes. */
SIMD_INLINE void store16_u(uint8_t *out, __m256i v0, __m256i v1, bool u8) {
  if (!u8) {
    _mm_storeu_si128((__m128i *)(void *)out, narrow16(v0, v1));
    return;
  }
  const __m256i p = _mm256_packus_epi16(_mm256_packs_epi32(v0, v1), _mm256_setzero_si256());
  _mm_storeu_si128((__m128i *)(void *)out,
                   _mm256_castsi256_si128(
                       _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))));
}

SIMD_INLINE __m256i add8_sum(__m256i a, __m256i b, bool subtract) {
  return subtract ? _mm256_sub_epi32(a, b) : _mm256_add_epi32(a, b);
}

/* 16 elements, both operands bytes (rescaled here). */
SIMD_INLINE void add8_step(const uint8_t *a, const uint8_t *b, uint8_t *out, const rescale8 *t0,
                           const rescale8 *t1, const q8_rq8 *mo, bool u8, bool subtract,
                           bool simple0, bool simple1) {
  const __m256i s0 = add8_sum(rescale8_apply(load8_u(a, u8), t0, simple0),
                              rescale8_apply(load8_u(b, u8), t1, simple1), subtract);
  const __m256i s1 = add8_sum(rescale8_apply(load8_u(a + 8, u8), t0, simple0),
                              rescale8_apply(load8_u(b + 8, u8), t1, simple1), subtract);
  store16_u(out, q8_rq8_apply(s0, mo), q8_rq8_apply(s1, mo), u8);
}

/* 16 elements per step, the tail through copies. */
SIMD_INLINE void add8_run(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                          const wick_q8_add8_params *p, bool u8, bool subtract, bool simple0,
                          bool simple1) {
  const rescale8 t0 = rescale8_set(&p->in[0]), t1 = rescale8_set(&p->in[1]);
  const q8_rq8 mo = add8_output(p);
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    add8_step(a + i, b + i, out + i, &t0, &t1, &mo, u8, subtract, simple0, simple1);
  if (i < n) {
    uint8_t ta[16] = {0}, tb[16] = {0}, to[16];
    memcpy(ta, a + i, n - i), memcpy(tb, b + i, n - i);
    add8_step(ta, tb, to, &t0, &t1, &mo, u8, subtract, simple0, simple1);
    memcpy(out + i, to, n - i);
  }
}

/* One instantiation per element type, op and simple input (both simple: the first). */
#define ADD8_RUN(U8, SUB)                               \
  do {                                                  \
    if (simple0)                                        \
      add8_run(n, a, b, out, p, U8, SUB, true, false);  \
    else if (simple1)                                   \
      add8_run(n, a, b, out, p, U8, SUB, false, true);  \
    else                                                \
      add8_run(n, a, b, out, p, U8, SUB, false, false); \
  } while (0)

void wick_q8_add8_ukernel__avx2(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                                const wick_q8_add8_params *p) {
  const bool simple0 = rescale8_simple(&p->in[0]), simple1 = rescale8_simple(&p->in[1]);
  if (p->u8 && p->subtract)
    ADD8_RUN(true, true);
  else if (p->u8)
    ADD8_RUN(true, false);
  else if (p->subtract)
    ADD8_RUN(false, true);
  else
    ADD8_RUN(false, false);
}
#undef ADD8_RUN

/* T0(a) + r, or r - T0(a) for SUB (the bytes are then its second operand). */
SIMD_INLINE __m256i add8_rescaled_sum(__m256i a, const rescale8 *t0, __m256i r, bool subtract,
                                      bool simple) {
  const __m256i t = rescale8_apply(a, t0, simple);
  return subtract ? _mm256_sub_epi32(r, t) : _mm256_add_epi32(t, r);
}

/* 16 elements, one operand bytes, the other rescaled int32 values (a row, or one value:
 * stride 0). */
SIMD_INLINE void add8_rescaled_step(const uint8_t *a, const int32_t *r, size_t r_stride,
                                    uint8_t *out, const rescale8 *t0, const q8_rq8 *mo, bool u8,
                                    bool subtract, bool simple) {
  const __m256i r0 =
      r_stride ? _mm256_loadu_si256((const __m256i *)(const void *)r) : _mm256_set1_epi32(*r);
  const __m256i r1 = r_stride ? _mm256_loadu_si256((const __m256i *)(const void *)(r + 8)) : r0;
  const __m256i s0 = add8_rescaled_sum(load8_u(a, u8), t0, r0, subtract, simple);
  const __m256i s1 = add8_rescaled_sum(load8_u(a + 8, u8), t0, r1, subtract, simple);
  store16_u(out, q8_rq8_apply(s0, mo), q8_rq8_apply(s1, mo), u8);
}

SIMD_INLINE void add8_rescaled_run(size_t n, const uint8_t *a, const int32_t *r, size_t r_stride,
                                   uint8_t *out, const wick_q8_add8_params *p, bool u8,
                                   bool subtract, bool simple) {
  const rescale8 t0 = rescale8_set(&p->in[0]);
  const q8_rq8 mo = add8_output(p);
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    add8_rescaled_step(a + i, r + i * r_stride, r_stride, out + i, &t0, &mo, u8, subtract, simple);
  if (i < n) {
    uint8_t ta[16] = {0}, to[16];
    int32_t tr[16] = {0};
    memcpy(ta, a + i, n - i);
    if (r_stride)
      memcpy(tr, r + i, (n - i) * sizeof *r);
    else
      tr[0] = r[0];
    add8_rescaled_step(ta, tr, r_stride, to, &t0, &mo, u8, subtract, simple);
    memcpy(out + i, to, n - i);
  }
}

#define ADD8_RESCALED_RUN(U8, SUB)                                  \
  do {                                                              \
    if (simple)                                                     \
      add8_rescaled_run(n, a, r, r_stride, out, p, U8, SUB, true);  \
    else                                                            \
      add8_rescaled_run(n, a, r, r_stride, out, p, U8, SUB, false); \
  } while (0)

void wick_q8_add8_rescaled_ukernel__avx2(size_t n, const uint8_t *a, const int32_t *r,
                                         size_t r_stride, uint8_t *out,
                                         const wick_q8_add8_params *p) {
  const bool simple = rescale8_simple(&p->in[0]);
  if (p->u8 && p->subtract)
    ADD8_RESCALED_RUN(true, true);
  else if (p->u8)
    ADD8_RESCALED_RUN(true, false);
  else if (p->subtract)
    ADD8_RESCALED_RUN(false, true);
  else
    ADD8_RESCALED_RUN(false, false);
}
#undef ADD8_RESCALED_RUN

/* ---- int16 (zero points 0 in the 16x8 scheme, but any offsets work) ---- */

/* The first n < 16 elements of a and b, zero-filled, into ta and tb. */
SIMD_INLINE void copy_tail16(size_t n, const int16_t *a, const int16_t *b, int16_t ta[16],
                             int16_t tb[16]) {
  memset(ta, 0, 32), memset(tb, 0, 32);
  memcpy(ta, a, n * 2), memcpy(tb, b, n * 2);
}

SIMD_INLINE void binary_run16(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                              const binary_consts *k, binary_op op) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v0 = binary8(load8_16(a + i), load8_16(b + i), k, op);
    const __m256i v1 = binary8(load8_16(a + i + 8), load8_16(b + i + 8), k, op);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), narrow16_16(v0, v1));
  }
  if (i < n) {
    int16_t ta[16], tb[16], to[16];
    copy_tail16(n - i, a + i, b + i, ta, tb);
    const __m256i v0 = binary8(load8_16(ta), load8_16(tb), k, op);
    const __m256i v1 = binary8(load8_16(ta + 8), load8_16(tb + 8), k, op);
    _mm256_storeu_si256((__m256i *)(void *)to, narrow16_16(v0, v1));
    memcpy(out + i, to, (n - i) * 2);
  }
}

/* An int16 input's rescale in 32-bit lanes for the 16x8 scheme's ADD / SUB (zero points 0, left
 * shift 15, shift -e with 0 <= e <= 30, multiplier m >= 0): the fused floor of mbqm(x * 2^15, m,
 * -e) divided through by 2^15, m split into 16-bit halves mh, ml,
 *
 *     floor((x*mh + h + floor((x*ml + 2^15) / 2^16)) / 2^e),  h = 0 (e = 0), 2^(e-1) - (x < 0)
 *
 * every step exact in int32 (the derivation in avx512vnni/q8_elementwise.c). */
typedef struct rescale16 {
  __m256i mh, ml, h;
  __m128i e;
  bool round; /* e > 0 */
} rescale16;

static bool rescale16_ok(int32_t multiplier, int32_t shift) {
  return multiplier >= 0 && shift <= 0 && shift >= -30;
}

SIMD_INLINE rescale16 rescale16_set(int32_t multiplier, int32_t shift) {
  rescale16 r;
  r.mh = _mm256_set1_epi32(multiplier >> 16);
  r.ml = _mm256_set1_epi32(multiplier & 0xFFFF);
  r.h = _mm256_set1_epi32(shift < 0 ? 1 << (-shift - 1) : 0);
  r.e = _mm_cvtsi32_si128(-shift);
  r.round = shift < 0;
  return r;
}

SIMD_INLINE __m256i rescale16_apply(__m256i x, const rescale16 *r) {
  const __m256i e =
      _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(x, r->ml), _mm256_set1_epi32(1 << 15)),
                        16);
  __m256i s = _mm256_add_epi32(_mm256_mullo_epi32(x, r->mh), e);
  if (!r->round) return s;
  s = _mm256_add_epi32(s, _mm256_add_epi32(r->h, _mm256_srai_epi32(x, 31))); /* - (x < 0) */
  return _mm256_sra_epi32(s, r->e);
}

SIMD_INLINE __m256i add8_32(__m256i a, __m256i b, const rescale16 *r1, const rescale16 *r2,
                            const q8_rq *mo, bool subtract) {
  const __m256i sx = rescale16_apply(a, r1), sy = rescale16_apply(b, r2);
  return q8_requant_i32(subtract ? _mm256_sub_epi32(sx, sy) : _mm256_add_epi32(sx, sy), mo);
}

SIMD_INLINE void add16_run32(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                             const wick_qadd_params *p, bool subtract) {
  const rescale16 r1 = rescale16_set(p->input1_multiplier, p->input1_shift);
  const rescale16 r2 = rescale16_set(p->input2_multiplier, p->input2_shift);
  const q8_rq mo =
      q8_rq_set(p->output_multiplier, p->output_shift, p->output_offset, p->act_min, p->act_max);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v0 = add8_32(load8_16(a + i), load8_16(b + i), &r1, &r2, &mo, subtract);
    const __m256i v1 = add8_32(load8_16(a + i + 8), load8_16(b + i + 8), &r1, &r2, &mo, subtract);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), narrow16_16(v0, v1));
  }
  if (i < n) {
    int16_t ta[16], tb[16], to[16];
    copy_tail16(n - i, a + i, b + i, ta, tb);
    const __m256i v0 = add8_32(load8_16(ta), load8_16(tb), &r1, &r2, &mo, subtract);
    const __m256i v1 = add8_32(load8_16(ta + 8), load8_16(tb + 8), &r1, &r2, &mo, subtract);
    _mm256_storeu_si256((__m256i *)(void *)to, narrow16_16(v0, v1));
    memcpy(out + i, to, (n - i) * 2);
  }
}

void wick_q16_add_ukernel__avx2(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                const wick_qadd_params *p, bool subtract) {
  if (p->left_shift == 15 && p->input1_offset == 0 && p->input2_offset == 0 &&
      rescale16_ok(p->input1_multiplier, p->input1_shift) &&
      rescale16_ok(p->input2_multiplier, p->input2_shift)) {
    if (subtract)
      add16_run32(n, a, b, out, p, true);
    else
      add16_run32(n, a, b, out, p, false);
    return;
  }
  binary_consts k;
  add_consts_set(&k, p);
  if (subtract)
    binary_run16(n, a, b, out, &k, OP_SUB);
  else
    binary_run16(n, a, b, out, &k, OP_ADD);
}

void wick_q16_mul_ukernel__avx2(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                const wick_qmul_params *p) {
  binary_consts k;
  mul_consts_set(&k, p);
  binary_run16(n, a, b, out, &k, OP_MUL);
}

/* QUANTIZE from int16: clamp(mbqm(x - in_zp) + out_zp) to int8 (out16 false) or int16. */
void wick_q16_requant_ukernel__avx2(size_t n, const int16_t *in, void *out, bool out16,
                                    const wick_q_requant_params *p) {
  const q8_rq q = q8_rq_set(p->multiplier, p->shift, p->out_zp, p->lo, p->hi);
  const __m256i zp = _mm256_set1_epi32(p->in_zp);
  int8_t *o8 = out;
  int16_t *o16 = out;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v0 = q8_requant_i32(_mm256_sub_epi32(load8_16(in + i), zp), &q);
    const __m256i v1 = q8_requant_i32(_mm256_sub_epi32(load8_16(in + i + 8), zp), &q);
    if (out16)
      _mm256_storeu_si256((__m256i *)(void *)(o16 + i), narrow16_16(v0, v1));
    else
      _mm_storeu_si128((__m128i *)(void *)(o8 + i), narrow16(v0, v1));
  }
  if (i < n) {
    int16_t t[16] = {0};
    memcpy(t, in + i, (n - i) * 2);
    const __m256i v0 = q8_requant_i32(_mm256_sub_epi32(load8_16(t), zp), &q);
    const __m256i v1 = q8_requant_i32(_mm256_sub_epi32(load8_16(t + 8), zp), &q);
    if (out16) {
      int16_t r[16];
      _mm256_storeu_si256((__m256i *)(void *)r, narrow16_16(v0, v1));
      memcpy(o16 + i, r, (n - i) * 2);
    } else {
      int8_t r[16];
      _mm_storeu_si128((__m128i *)(void *)r, narrow16(v0, v1));
      memcpy(o8 + i, r, n - i);
    }
  }
}

/* ---- column sums of 8-bit rows (q8.h, wick_q8_colsum_fn) ----
 * Each byte biased to unsigned (int8: x ^ 0x80 = x + 128) and widened into uint16 lanes, which
 * hold 256 rows of 255 exactly; every 256 rows the lanes go into the int32 sums. The bias,
 * 128 per row, comes off at the end (mod 2^32, as the reference's wrapping sums). Per row of
 * 32 columns: a load, an xor, two unpacks and two adds. */

void wick_q8_colsum__avx2(size_t rows, size_t cols, size_t stride, const uint8_t *x, bool u8,
                          int32_t *sums) {
  const uint32_t bias_total = u8 ? 0u : (uint32_t)rows * 128u;
  const __m256i bias = _mm256_set1_epi8(u8 ? 0 : (char)0x80), zero = _mm256_setzero_si256();
  const __m256i unbias = _mm256_set1_epi32((int32_t)bias_total);
  size_t j = 0;
  for (; j + 32 <= cols; j += 32) {
    __m256i s0 = zero, s1 = zero, s2 = zero, s3 = zero; /* columns 0-7, 8-15, 16-23, 24-31 */
    for (size_t r0 = 0; r0 < rows; r0 += 256) {
      const size_t r1 = rows - r0 < 256 ? rows : r0 + 256;
      __m256i lo = zero, hi = zero; /* columns 0-7 | 16-23 and 8-15 | 24-31 */
      for (size_t r = r0; r < r1; r++) {
        const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(
                                               (const __m256i *)(const void *)(x + r * stride + j)),
                                           bias);
        lo = _mm256_add_epi16(lo, _mm256_unpacklo_epi8(v, zero));
        hi = _mm256_add_epi16(hi, _mm256_unpackhi_epi8(v, zero));
      }
      const __m256i a = _mm256_permute2x128_si256(lo, hi, 0x20); /* columns 0-15 */
      const __m256i b = _mm256_permute2x128_si256(lo, hi, 0x31); /* columns 16-31 */
      s0 = _mm256_add_epi32(s0, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(a)));
      s1 = _mm256_add_epi32(s1, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(a, 1)));
      s2 = _mm256_add_epi32(s2, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(b)));
      s3 = _mm256_add_epi32(s3, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(b, 1)));
    }
    int32_t *o = sums + j;
    _mm256_storeu_si256((__m256i *)(void *)o, _mm256_sub_epi32(s0, unbias));
    _mm256_storeu_si256((__m256i *)(void *)(o + 8), _mm256_sub_epi32(s1, unbias));
    _mm256_storeu_si256((__m256i *)(void *)(o + 16), _mm256_sub_epi32(s2, unbias));
    _mm256_storeu_si256((__m256i *)(void *)(o + 24), _mm256_sub_epi32(s3, unbias));
  }
  if (j + 16 <= cols) {
    const __m128i bias16 = _mm256_castsi256_si128(bias), zero16 = _mm_setzero_si128();
    __m256i s0 = zero, s1 = zero;
    for (size_t r0 = 0; r0 < rows; r0 += 256) {
      const size_t r1 = rows - r0 < 256 ? rows : r0 + 256;
      __m128i lo = zero16, hi = zero16; /* columns 0-7, 8-15 */
      for (size_t r = r0; r < r1; r++) {
        const __m128i v =
            _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(x + r * stride + j)),
                          bias16);
        lo = _mm_add_epi16(lo, _mm_unpacklo_epi8(v, zero16));
        hi = _mm_add_epi16(hi, _mm_unpackhi_epi8(v, zero16));
      }
      s0 = _mm256_add_epi32(s0, _mm256_cvtepu16_epi32(lo));
      s1 = _mm256_add_epi32(s1, _mm256_cvtepu16_epi32(hi));
    }
    _mm256_storeu_si256((__m256i *)(void *)(sums + j), _mm256_sub_epi32(s0, unbias));
    _mm256_storeu_si256((__m256i *)(void *)(sums + j + 8), _mm256_sub_epi32(s1, unbias));
    j += 16;
  }
  for (; j < cols; j++) {
    uint32_t sum = 0;
    for (size_t r = 0; r < rows; r++) {
      const uint8_t v = x[r * stride + j];
      sum += u8 ? (uint32_t)v : (uint32_t)(int32_t)(int8_t)v;
    }
    sums[j] = (int32_t)sum;
  }
}

/* The requantization of int32 sums (MEAN / SUM's finish) with the fused stage, 16 per step. */
void wick_q8_requant32__avx2(size_t n, const int32_t *in, int32_t in_zp, int32_t multiplier,
                             int32_t shift, int32_t out_zp, int32_t lo, int32_t hi, bool u8,
                             uint8_t *out) {
  const q8_rq8 q = rq8_uniform(multiplier, shift, out_zp, lo, hi);
  const __m256i zp = _mm256_set1_epi32(in_zp);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(in + i));
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(in + i + 8));
    store16_u(out + i, q8_rq8_apply(_mm256_sub_epi32(a, zp), &q),
              q8_rq8_apply(_mm256_sub_epi32(b, zp), &q), u8);
  }
  if (i < n) {
    int32_t t[16] = {0};
    uint8_t r[16];
    memcpy(t, in + i, (n - i) * sizeof *t);
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)t);
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(t + 8));
    store16_u(r, q8_rq8_apply(_mm256_sub_epi32(a, zp), &q),
              q8_rq8_apply(_mm256_sub_epi32(b, zp), &q), u8);
    memcpy(out + i, r, n - i);
  }
}
