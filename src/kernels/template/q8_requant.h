/*
 * template/q8_requant.h — the per-lane output stage of the int8 GEMM kernels
 * written once over the integer vocabulary of <isa>/simd.h (vi, vd, ...):
 * included by avx2/q8_gemm.c (8 lanes) and avx512vnni/q8_requant.h (16 lanes,
 * with avx512/simd.h). Bit-exact with the reference kernels' scalar
 * arithmetic (src/kernels/reference/quantized.c):
 *
 *   srdhm(x, m) = (x*m + 2^30) / 2^31 truncated toward zero with the nudge
 *                 1 - 2^30 for negative products; both cases equal
 *                 floor((x*m + 2^30) / 2^31), which is what the 64-bit even
 *                 / odd lane products compute here (m >= 0, and x = m =
 *                 INT32_MIN, the saturating case, cannot occur).
 *   rdivpot(r, e) = (r >> e) + (r & mask > (mask >> 1) + (r < 0)),
 *                 mask = 2^e - 1, lane by lane with variable shifts.
 *   FULLY_CONNECTED: (double)acc * scale rounded half away from zero
 *                 (trunc, then +-1 when the exact remainder is >= 0.5),
 *                 saturated to int32.
 * Then + output zero point (wrapping) and the clamp; the includer narrows.
 *
 * Sign tests are compares, and the left shift runs only when a lane has
 * one. The lane moves around the 64-bit products (vi_odd_to_even,
 * vi_shr31_pairs) are the ISA's: shuffles on AVX-512, where every shift runs
 * on one port (which the multiply-adds also need), shifts on AVX2.
 */
#include "kernels/q8.h"

/* The per-lane requantization of VL channels, loaded once and kept in
 * registers while many pixels use it (int8 stores may alias anything, so a
 * compiler would otherwise reload it after every store). */
typedef struct q8_rq {
  vi m, m_odd, ls, rs, mask, half;
  vi zp, lo, hi;
  bool any_left_shift; /* some lane has ls > 0 (rare: multipliers >= 1) */
} q8_rq;

/* `h` points at the lanes' bias' row of a packed-weight header whose rows
 * (bias, multiplier, odd multiplier, left shift, right shift) are `stride`
 * int32 apart. */
SIMD_INLINE q8_rq q8_rq_load(const int32_t *h, size_t stride, const wick_q8_output *o) {
  q8_rq q;
  q.m = vi_load(h + stride);
  q.m_odd = vi_load(h + 2 * stride);
  q.ls = vi_load(h + 3 * stride);
  q.rs = vi_load(h + 4 * stride);
  q.mask = vi_sub(vi_sllv(vi_set1(1), q.rs), vi_set1(1));
  q.half = vi_shr1(q.mask);
  q.zp = vi_set1(o->zero_point);
  q.lo = vi_set1(o->lo);
  q.hi = vi_set1(o->hi);
  q.any_left_shift = vi_any(q.ls);
  return q;
}

/* One multiplier and shift (the reference's mbqm(x, multiplier, shift)) for
 * every lane, output zero point zp and clamp [lo, hi]: ADD, MUL. */
SIMD_INLINE q8_rq q8_rq_set(int32_t multiplier, int32_t shift, int32_t zp, int32_t lo, int32_t hi) {
  q8_rq q;
  q.m = q.m_odd = vi_set1(multiplier);
  q.ls = vi_set1(shift > 0 ? shift : 0);
  q.rs = vi_set1(shift > 0 ? 0 : -shift);
  q.mask = vi_sub(vi_sllv(vi_set1(1), q.rs), vi_set1(1));
  q.half = vi_shr1(q.mask);
  q.zp = vi_set1(zp);
  q.lo = vi_set1(lo);
  q.hi = vi_set1(hi);
  q.any_left_shift = shift > 0;
  return q;
}

/* rdivpot(srdhm(x << ls, m), rs): int32 lanes, no zero point, no clamp. */
SIMD_INLINE vi q8_mbqm(vi x, const q8_rq *q) {
  if (q->any_left_shift) x = vi_sllv(x, q->ls);
  const vi round = vi_set1_64((int64_t)1 << 30);
  const vi even = vi_add64(vi_mul_even(x, q->m), round);
  const vi odd = vi_add64(vi_mul_even(vi_odd_to_even(x), q->m_odd), round);
  const vi r = vi_shr31_pairs(even, odd); /* srdhm */
  const vi rem = vi_and(r, q->mask);
  const vi thr = vi_inc_where(q->half, vi_lt_zero(r));
  return vi_inc_where(vi_srav(r, q->rs), vi_gt(rem, thr));
}

/* rdivpot(srdhm(x << ls, m), rs) + zero point, clamped: int32 lanes. */
SIMD_INLINE vi q8_requant_i32(vi x, const q8_rq *q) {
  const vi v = vi_add(q8_mbqm(x, q), q->zp);
  return vi_min(vi_max(v, q->lo), q->hi);
}

/* FULLY_CONNECTED's double rounding of VL/2 accumulators. */
SIMD_INLINE vih q8_round_fc_half(vih acc, const double *scale) {
  const vd x = vd_mul(vd_from_vih(acc), vd_load(scale));
  vd t = vd_trunc(x);
  const vd d = vd_sub(x, t), one = vd_set1(1.0);
  t = vd_add_where(t, vd_ge(d, vd_set1(0.5)), one);
  t = vd_sub_where(t, vd_le(d, vd_set1(-0.5)), one);
  t = vd_min(vd_max(t, vd_set1(-2147483648.0)), vd_set1(2147483647.0));
  return vih_from_vd(t);
}

/* FULLY_CONNECTED's double requantization of VL accumulators (`scale` has
 * VL readable entries; the caller pads): int32 lanes, before q8_clamp. */
SIMD_INLINE vi q8_requant_fc(vi x, const double *scale) {
  return vi_join(q8_round_fc_half(vi_low_half(x), scale),
                 q8_round_fc_half(vi_high_half(x), scale + VL / 2));
}

/* + zero point (wrapping), clamp to the output range. */
SIMD_INLINE vi q8_clamp(vi v, const wick_q8_output *o) {
  v = vi_add(v, vi_set1(o->zero_point));
  v = vi_max(v, vi_set1(o->lo));
  return vi_min(v, vi_set1(o->hi));
}
