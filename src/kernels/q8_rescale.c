/*
 * q8_rescale.c — the constants of the 32-bit form of an 8-bit ADD / SUB input's rescale
 * (q8.h, wick_q8_rescale8), checked value by value against the reference's fixed-point
 * multiply (the oracle), and that form applied to one value.
 *
 * The rescale is mbqm(x << L, m, s), x = v + offset, s <= 0 (r = -s), m >= 0. As in
 * quantized.c, srdhm(X, m) = floor((X * m + 2^30) / 2^31) for every X (the saturating case
 * needs m = INT32_MIN) and rdivpot(R, r) = floor((R + 2^(r-1) - [R < 0]) / 2^r) for r >= 1, so
 * for L <= 30
 *
 *     T(x) = floor((x * m + 2^(30-L) + h * 2^(31-L)) / 2^k),   k = 31 - L + r,
 *     h = 2^(r-1) - [R < 0] (r >= 1), 0 (r = 0),
 *
 * and with m = q * 2^k + rho (0 <= rho < 2^k) the multiple of 2^k leaves the floor:
 * T(x) = x * q + floor((x * rho + c - [x < 0] * cneg) / 2^k) with c = 2^(30-L) + 2^(r-1) *
 * 2^(31-L) and cneg = 2^(31-L) (0 for r = 0). R < 0 exactly when x < 0 for a normalized m
 * (>= 2^30); the check below covers every other case (a zero multiplier, say) by refusing.
 */
#include "kernels/q8.h"

/* The kernels' arithmetic in 64 bits: false when an int32 step would leave int32. */
static bool apply_checked(const wick_q8_rescale8 *r, int32_t v, int32_t *out) {
  const int64_t x = (int64_t)v + r->offset;
  int64_t p = x * r->rho;
  const bool fits = p >= INT32_MIN && p <= INT32_MAX;
  p += r->c;
  const bool fits_c = p >= INT32_MIN && p <= INT32_MAX;
  if (x < 0) p -= r->cneg;
  const int64_t xq = x * r->q;
  const int64_t t = xq + (p >> r->k); /* >> of a negative int64: arithmetic (C11 6.5.7 leaves it
                                       * implementation-defined; GCC and Clang define it so) */
  *out = (int32_t)t;
  return fits && fits_c && p >= INT32_MIN && p <= INT32_MAX && xq >= INT32_MIN && xq <= INT32_MAX &&
         t >= INT32_MIN && t <= INT32_MAX;
}

bool wick_q8_rescale8_make(int32_t offset, int32_t multiplier, int32_t shift, int32_t left_shift,
                           bool u8, wick_q8_rescale8 *r) {
  if (shift > 0 || shift < -31 || multiplier < 0 || left_shift < 1 || left_shift > 30) return false;
  const int32_t rs = -shift, k = 31 - left_shift + rs;
  if (k > 30) return false;
  r->offset = offset;
  r->k = k;
  r->q = multiplier >> k;
  r->rho = multiplier & (int32_t)(((uint32_t)1 << k) - 1);
  const int64_t c =
      ((int64_t)1 << (30 - left_shift)) + (rs >= 1 ? (int64_t)1 << (rs - 1 + 31 - left_shift) : 0);
  if (c > INT32_MAX) return false;
  r->c = (int32_t)c;
  r->cneg = rs >= 1 ? (int32_t)1 << (31 - left_shift) : 0;
  const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  for (int32_t v = lo; v <= hi; v++) {
    const int32_t x = v + offset;
    int32_t t;
    if (!apply_checked(r, v, &t)) return false;
    const int32_t shifted = (int32_t)((uint32_t)x << left_shift);
    if (t != wick_q_multiply_by_quantized_multiplier(shifted, multiplier, shift)) return false;
  }
  return true;
}

int32_t wick_q8_rescale8_apply(const wick_q8_rescale8 *r, int32_t v) {
  int32_t t;
  (void)apply_checked(r, v, &t);
  return t;
}
