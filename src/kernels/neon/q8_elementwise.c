/*
 * neon/q8_elementwise.c — int8 and int16 ADD / SUB and MUL, and int8
 * SQUARED_DIFFERENCE, of two equally shaped runs of elements (the op splits
 * broadcasts into runs), and the requantization of int16 elements (QUANTIZE)
 * for AArch64 Advanced SIMD, 16 elements per step in four int32x4 vectors:
 * the reference's arithmetic (quantized.c: qadd_one, qmul_body,
 * wick_q_squared_difference_i8__reference, requant_body) lane by lane —
 * offsets, the left shift, each input's multiplier, the sum, difference,
 * product or squared difference (int32 products wrap, as the reference's),
 * the output multiplier, zero point and clamp — with neon/q8_requant.h's
 * fixed-point stage (SQRDMULH, then a rounding shift), so the results are
 * bit-exact. Both AArch64 int8 tables use these (no dot products here). Also the column
 * sums of 8-bit rows (MEAN / SUM over a global average pool's H, W).
 *
 * ADD's left shift (20 for int8, 15 for int16, 7 for SQUARED_DIFFERENCE)
 * and an input multiplier's own left shift are one shift by their sum
 * capped at 32: (x << a) << b wraps to x << (a + b) mod 2^32 for a + b < 32,
 * and both give 0 from 32 on, as the reference's two shifts do.
 */
#include "kernels/neon/q8_requant.h"

/* mbqm's constants for one multiplier and shift in every lane, after a left shift of `pre`
 * (ADD's left shift; 0 otherwise). */
Q8_INLINE q8_rq4 rq_set(int32_t multiplier, int32_t shift, int32_t pre) {
  int32_t ls = pre + (shift > 0 ? shift : 0), rs = shift > 0 ? 0 : -shift;
  ls = ls > 32 ? 32 : ls;
  rs = rs > 63 ? 63 : rs;
  q8_rq4 q;
  q.m = vdupq_n_s32(multiplier);
  q.ls = vdupq_n_s32(ls);
  q.neg_rs = vdupq_n_s32(-rs);
  return q;
}

/* ADD, SUB, MUL or SQUARED_DIFFERENCE: a constant at every call, so the always-inline runs
 * below fold to one. */
typedef enum binary_op { OP_ADD, OP_SUB, OP_MUL, OP_SQUARED_DIFFERENCE } binary_op;

/* The op's constants (MUL uses only mo, off1 and off2). */
typedef struct binary_consts {
  q8_rq4 m1, m2, mo;
  int32x4_t off1, off2, zp, lo, hi;
} binary_consts;

Q8_INLINE void add_consts_set(binary_consts *k, const wick_qadd_params *p) {
  k->m1 = rq_set(p->input1_multiplier, p->input1_shift, p->left_shift);
  k->m2 = rq_set(p->input2_multiplier, p->input2_shift, p->left_shift);
  k->mo = rq_set(p->output_multiplier, p->output_shift, 0);
  k->off1 = vdupq_n_s32(p->input1_offset);
  k->off2 = vdupq_n_s32(p->input2_offset);
  k->zp = vdupq_n_s32(p->output_offset);
  k->lo = vdupq_n_s32(p->act_min);
  k->hi = vdupq_n_s32(p->act_max);
}

/* MUL's constants; m1 and m2 stay unset (MUL does not read them). */
Q8_INLINE void mul_consts_set(binary_consts *k, const wick_qmul_params *p) {
  k->mo = rq_set(p->output_multiplier, p->output_shift, 0);
  k->off1 = vdupq_n_s32(p->input1_offset);
  k->off2 = vdupq_n_s32(p->input2_offset);
  k->zp = vdupq_n_s32(p->output_offset);
  k->lo = vdupq_n_s32(p->act_min);
  k->hi = vdupq_n_s32(p->act_max);
}

/* 4 results of ADD / SUB / MUL / SQUARED_DIFFERENCE, clamped (int32 lanes). */
Q8_INLINE int32x4_t binary4(int32x4_t a, int32x4_t b, const binary_consts *k, binary_op op) {
  const int32x4_t x = vaddq_s32(a, k->off1), y = vaddq_s32(b, k->off2);
  int32x4_t raw;
  if (op == OP_MUL) {
    raw = vmulq_s32(x, y);
  } else {
    const int32x4_t sx = q8_mbqm4(x, &k->m1), sy = q8_mbqm4(y, &k->m2);
    if (op == OP_SQUARED_DIFFERENCE) {
      const int32x4_t diff = vsubq_s32(sx, sy);
      raw = vmulq_s32(diff, diff);
    } else {
      raw = op == OP_SUB ? vsubq_s32(sx, sy) : vaddq_s32(sx, sy);
    }
  }
  const int32x4_t v = vaddq_s32(q8_mbqm4(raw, &k->mo), k->zp);
  return vminq_s32(vmaxq_s32(v, k->lo), k->hi);
}

/* 16 int8 results from 16 elements of a and b. */
Q8_INLINE int8x16_t binary16(const int8_t *a, const int8_t *b, const binary_consts *k,
                             binary_op op) {
  const int8x16_t va = vld1q_s8(a), vb = vld1q_s8(b);
  const int16x8_t al = vmovl_s8(vget_low_s8(va)), ah = vmovl_high_s8(va);
  const int16x8_t bl = vmovl_s8(vget_low_s8(vb)), bh = vmovl_high_s8(vb);
  const int32x4_t v0 = binary4(vmovl_s16(vget_low_s16(al)), vmovl_s16(vget_low_s16(bl)), k, op);
  const int32x4_t v1 = binary4(vmovl_high_s16(al), vmovl_high_s16(bl), k, op);
  const int32x4_t v2 = binary4(vmovl_s16(vget_low_s16(ah)), vmovl_s16(vget_low_s16(bh)), k, op);
  const int32x4_t v3 = binary4(vmovl_high_s16(ah), vmovl_high_s16(bh), k, op);
  return q8_narrow16(v0, v1, v2, v3);
}

/* 16 elements per step, the tail through small copies. */
Q8_INLINE void binary_run(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                          const binary_consts *k, binary_op op) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) vst1q_s8(out + i, binary16(a + i, b + i, k, op));
  if (i < n) {
    int8_t ta[16] = {0}, tb[16] = {0};
    memcpy(ta, a + i, n - i);
    memcpy(tb, b + i, n - i);
    q8_store_n(out + i, binary16(ta, tb, k, op), n - i);
  }
}

void wick_q8_add_ukernel__neon(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                               const wick_qadd_params *p, bool subtract) {
  binary_consts k;
  add_consts_set(&k, p);
  if (subtract)
    binary_run(n, a, b, out, &k, OP_SUB);
  else
    binary_run(n, a, b, out, &k, OP_ADD);
}

void wick_q8_mul_ukernel__neon(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                               const wick_qmul_params *p) {
  binary_consts k;
  mul_consts_set(&k, p);
  binary_run(n, a, b, out, &k, OP_MUL);
}

/* 16 uint8 MUL results: the int8 path's arithmetic on zero-extended bytes, narrowed with an
 * unsigned saturation (the clamp already holds them inside [0, 255]). */
Q8_INLINE uint8x16_t mul16_u8(const uint8_t *a, const uint8_t *b, const binary_consts *k) {
  const uint8x16_t va = vld1q_u8(a), vb = vld1q_u8(b);
  const int16x8_t al = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(va)));
  const int16x8_t ah = vreinterpretq_s16_u16(vmovl_high_u8(va));
  const int16x8_t bl = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vb)));
  const int16x8_t bh = vreinterpretq_s16_u16(vmovl_high_u8(vb));
  const int32x4_t v0 = binary4(vmovl_s16(vget_low_s16(al)), vmovl_s16(vget_low_s16(bl)), k, OP_MUL);
  const int32x4_t v1 = binary4(vmovl_high_s16(al), vmovl_high_s16(bl), k, OP_MUL);
  const int32x4_t v2 = binary4(vmovl_s16(vget_low_s16(ah)), vmovl_s16(vget_low_s16(bh)), k, OP_MUL);
  const int32x4_t v3 = binary4(vmovl_high_s16(ah), vmovl_high_s16(bh), k, OP_MUL);
  return vcombine_u8(vqmovun_s16(vcombine_s16(vqmovn_s32(v0), vqmovn_s32(v1))),
                     vqmovun_s16(vcombine_s16(vqmovn_s32(v2), vqmovn_s32(v3))));
}

void wick_q8_mul_u8_ukernel__neon(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                                  const wick_qmul_params *p) {
  binary_consts k;
  mul_consts_set(&k, p);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) vst1q_u8(out + i, mul16_u8(a + i, b + i, &k));
  if (i < n) {
    uint8_t ta[16] = {0}, tb[16] = {0}, to[16];
    memcpy(ta, a + i, n - i);
    memcpy(tb, b + i, n - i);
    vst1q_u8(to, mul16_u8(ta, tb, &k));
    memcpy(out + i, to, n - i);
  }
}

void wick_q8_squared_difference_ukernel__neon(size_t n, const int8_t *a, const int8_t *b,
                                              int8_t *out, const wick_qadd_params *p) {
  binary_consts k;
  add_consts_set(&k, p);
  binary_run(n, a, b, out, &k, OP_SQUARED_DIFFERENCE);
}

/* ---- int16 (zero points 0 in the 16x8 scheme, but any offsets work) ---- */

/* Two vectors of 4 clamped results (inside int16) as 8 int16 in order. */
Q8_INLINE int16x8_t narrow8_16(int32x4_t v0, int32x4_t v1) {
  return vcombine_s16(vqmovn_s32(v0), vqmovn_s32(v1));
}

/* 8 int16 results from 8 elements of a and b. */
Q8_INLINE int16x8_t binary8_16(const int16_t *a, const int16_t *b, const binary_consts *k,
                               binary_op op) {
  const int16x8_t va = vld1q_s16(a), vb = vld1q_s16(b);
  const int32x4_t v0 = binary4(vmovl_s16(vget_low_s16(va)), vmovl_s16(vget_low_s16(vb)), k, op);
  const int32x4_t v1 = binary4(vmovl_high_s16(va), vmovl_high_s16(vb), k, op);
  return narrow8_16(v0, v1);
}

Q8_INLINE void binary_run16(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                            const binary_consts *k, binary_op op) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    vst1q_s16(out + i, binary8_16(a + i, b + i, k, op));
    vst1q_s16(out + i + 8, binary8_16(a + i + 8, b + i + 8, k, op));
  }
  for (; i < n; i += 8) {
    int16_t ta[8] = {0}, tb[8] = {0}, to[8];
    const size_t c = n - i < 8 ? n - i : 8;
    memcpy(ta, a + i, c * 2);
    memcpy(tb, b + i, c * 2);
    vst1q_s16(to, binary8_16(ta, tb, k, op));
    memcpy(out + i, to, c * 2);
  }
}

void wick_q16_add_ukernel__neon(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                const wick_qadd_params *p, bool subtract) {
  binary_consts k;
  add_consts_set(&k, p);
  if (subtract)
    binary_run16(n, a, b, out, &k, OP_SUB);
  else
    binary_run16(n, a, b, out, &k, OP_ADD);
}

void wick_q16_mul_ukernel__neon(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                const wick_qmul_params *p) {
  binary_consts k;
  mul_consts_set(&k, p);
  binary_run16(n, a, b, out, &k, OP_MUL);
}

/* QUANTIZE from int16: clamp(mbqm(x - in_zp) + out_zp) to int8 (out16 false) or int16. */
Q8_INLINE int16x8_t requant8(int16x8_t x, const q8_rq4 *q, int32x4_t in_zp, int32x4_t out_zp,
                             int32x4_t lo, int32x4_t hi) {
  int32x4_t v0 = vaddq_s32(q8_mbqm4(vsubq_s32(vmovl_s16(vget_low_s16(x)), in_zp), q), out_zp);
  int32x4_t v1 = vaddq_s32(q8_mbqm4(vsubq_s32(vmovl_high_s16(x), in_zp), q), out_zp);
  v0 = vminq_s32(vmaxq_s32(v0, lo), hi);
  v1 = vminq_s32(vmaxq_s32(v1, lo), hi);
  return narrow8_16(v0, v1);
}

void wick_q16_requant_ukernel__neon(size_t n, const int16_t *in, void *out, bool out16,
                                    const wick_q_requant_params *p) {
  const q8_rq4 q = rq_set(p->multiplier, p->shift, 0);
  const int32x4_t in_zp = vdupq_n_s32(p->in_zp), out_zp = vdupq_n_s32(p->out_zp);
  const int32x4_t lo = vdupq_n_s32(p->lo), hi = vdupq_n_s32(p->hi);
  int8_t *o8 = out;
  int16_t *o16 = out;
  for (size_t i = 0; i < n; i += 16) {
    int16_t t[16] = {0};
    const size_t c = n - i < 16 ? n - i : 16;
    const int16_t *src = in + i;
    if (c < 16) {
      memcpy(t, in + i, c * 2);
      src = t;
    }
    const int16x8_t r0 = requant8(vld1q_s16(src), &q, in_zp, out_zp, lo, hi);
    const int16x8_t r1 = requant8(vld1q_s16(src + 8), &q, in_zp, out_zp, lo, hi);
    if (out16) {
      int16_t *dst = c < 16 ? t : o16 + i;
      vst1q_s16(dst, r0);
      vst1q_s16(dst + 8, r1);
      if (c < 16) memcpy(o16 + i, t, c * 2);
    } else {
      q8_store_n(o8 + i, vcombine_s8(vqmovn_s16(r0), vqmovn_s16(r1)), c);
    }
  }
}

/* ---- column sums of 8-bit rows (q8.h, wick_q8_colsum_fn) ----
 * Each byte biased to unsigned (int8: x ^ 0x80 = x + 128) and added widening into uint16 lanes
 * (UADDW), which hold 256 rows of 255 exactly; every 256 rows the lanes go into the int32 sums.
 * The bias, 128 per row, comes off at the end (mod 2^32, as the reference's wrapping sums). */
void wick_q8_colsum__neon(size_t rows, size_t cols, size_t stride, const uint8_t *x, bool u8,
                          int32_t *sums) {
  const uint32_t bias_total = u8 ? 0u : (uint32_t)rows * 128u;
  const uint8x16_t bias = vdupq_n_u8(u8 ? 0 : 0x80);
  const uint32x4_t unbias = vdupq_n_u32(bias_total);
  size_t j = 0;
  for (; j + 16 <= cols; j += 16) {
    uint32x4_t s0 = vdupq_n_u32(0), s1 = s0, s2 = s0, s3 = s0;
    for (size_t r0 = 0; r0 < rows; r0 += 256) {
      const size_t r1 = rows - r0 < 256 ? rows : r0 + 256;
      uint16x8_t lo = vdupq_n_u16(0), hi = lo;
      for (size_t r = r0; r < r1; r++) {
        const uint8x16_t v = veorq_u8(vld1q_u8(x + r * stride + j), bias);
        lo = vaddw_u8(lo, vget_low_u8(v));
        hi = vaddw_high_u8(hi, v);
      }
      s0 = vaddw_u16(s0, vget_low_u16(lo));
      s1 = vaddw_high_u16(s1, lo);
      s2 = vaddw_u16(s2, vget_low_u16(hi));
      s3 = vaddw_high_u16(s3, hi);
    }
    vst1q_s32(sums + j, vreinterpretq_s32_u32(vsubq_u32(s0, unbias)));
    vst1q_s32(sums + j + 4, vreinterpretq_s32_u32(vsubq_u32(s1, unbias)));
    vst1q_s32(sums + j + 8, vreinterpretq_s32_u32(vsubq_u32(s2, unbias)));
    vst1q_s32(sums + j + 12, vreinterpretq_s32_u32(vsubq_u32(s3, unbias)));
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

/* The requantization of int32 sums (MEAN / SUM's finish), 16 per step: the fixed-point stage
 * of the kernels above, + zero point, clamp, narrowed to int8 or (u8) uint8. */
Q8_INLINE int32x4_t requant32_4(const int32_t *in, int32x4_t zp, const q8_rq4 *q, int32x4_t ozp,
                                int32x4_t lo, int32x4_t hi) {
  const int32x4_t v = vaddq_s32(q8_mbqm4(vsubq_s32(vld1q_s32(in), zp), q), ozp);
  return vminq_s32(vmaxq_s32(v, lo), hi);
}

void wick_q8_requant32__neon(size_t n, const int32_t *in, int32_t in_zp, int32_t multiplier,
                             int32_t shift, int32_t out_zp, int32_t lo, int32_t hi, bool u8,
                             uint8_t *out) {
  const q8_rq4 q = rq_set(multiplier, shift, 0);
  const int32x4_t zp = vdupq_n_s32(in_zp), ozp = vdupq_n_s32(out_zp);
  const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
  for (size_t i = 0; i < n; i += 16) {
    int32_t t[16] = {0};
    const int32_t *src = in + i;
    if (n - i < 16) {
      memcpy(t, in + i, (n - i) * sizeof *t);
      src = t;
    }
    const int16x8_t w0 = vcombine_s16(vqmovn_s32(requant32_4(src, zp, &q, ozp, vlo, vhi)),
                                      vqmovn_s32(requant32_4(src + 4, zp, &q, ozp, vlo, vhi)));
    const int16x8_t w1 = vcombine_s16(vqmovn_s32(requant32_4(src + 8, zp, &q, ozp, vlo, vhi)),
                                      vqmovn_s32(requant32_4(src + 12, zp, &q, ozp, vlo, vhi)));
    const uint8x16_t b = u8 ? vcombine_u8(vqmovun_s16(w0), vqmovun_s16(w1))
                            : vreinterpretq_u8_s8(vcombine_s8(vqmovn_s16(w0), vqmovn_s16(w1)));
    if (n - i >= 16) {
      vst1q_u8(out + i, b);
    } else {
      uint8_t r[16];
      vst1q_u8(r, b);
      memcpy(out + i, r, n - i);
    }
  }
}
