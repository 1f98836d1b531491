/*
 * template/quantize.h — QUANTIZE float32 -> int8 / uint8 and DEQUANTIZE
 * int8 / uint8 -> float32 with one scale and zero point, written in the
 * vocabulary of <isa>/simd.h and compiled per ISA (included by
 * avx512/elementwise.c and avx2/elementwise.c after template/elementwise.h,
 * and by neon/quantize.c).
 *
 * Bit-identical to src/kernels/reference/quantize.c when |zero_point| <=
 * WICK_QUANTIZE8_MAX_ZERO_POINT (kernels.h; callers check):
 *
 *   quantize    y = x / scale (the same IEEE float division); roundf(y) as
 *               t = trunc(y) adjusted by +-1 when the fraction y - t (exact
 *               in float) is >= 0.5 in magnitude; NaN -> 0; then t + zp in
 *               float, which is exact whenever the result lies inside the
 *               8- or 16-bit range (|t + zp| < 2^24) and otherwise rounds to a value
 *               just as far outside it, so the clamp to [lo, hi] saturates
 *               like the reference's double arithmetic (±inf included).
 *   dequantize  scale * (float)(q - zp): q - zp is exact in float and the
 *               one float multiply rounds the exact product, as the
 *               reference's exact double product rounded to float does.
 */
#include "kernels/kernels.h"

#define QUANTIZE_INLINE static inline __attribute__((always_inline))

QUANTIZE_INLINE vf quantize_lanes(vf x, vf scale, vf zp, vf lo, vf hi) {
  const vf y = vdiv(x, scale);
  vf t = vtrunc(y);
  const vf frac = vsub(y, t); /* NaN for NaN and ±inf */
  t = vadd(t, vselect(vge(frac, vset1(0.5f)), vset1(1.0f), vzero()));
  t = vsub(t, vselect(vle(frac, vset1(-0.5f)), vset1(1.0f), vzero()));
  t = vselect(visnan(t), vzero(), t);
  return vmin(hi, vmax(lo, vadd(t, zp)));
}

void ISA_SUFFIX(wick_f32_quantize8)(size_t n, const float *in, void *out, float scale,
                                    int32_t zero_point, bool is_unsigned) {
  const vf vs = vset1(scale), vzp = vset1((float)zero_point);
  const vf lo = vset1(is_unsigned ? 0.0f : -128.0f), hi = vset1(is_unsigned ? 255.0f : 127.0f);
  uint8_t *dst = out;
  size_t i = 0;
  for (; i + 2 * VL <= n; i += 2 * VL) {
    const vf a = quantize_lanes(vload(in + i), vs, vzp, lo, hi);
    const vf b = quantize_lanes(vload(in + i + VL), vs, vzp, lo, hi);
    vstore_bytes(dst + i, a, VL);
    vstore_bytes(dst + i + VL, b, VL);
  }
  for (; i < n; i += VL) {
    const size_t k = n - i < VL ? n - i : VL;
    const vf v = quantize_lanes(vloadm(in + i, vmask_tail(k)), vs, vzp, lo, hi);
    vstore_bytes(dst + i, v, k);
  }
}

/* The hybrid ops' row range: *lo = x < *lo ? x : *lo (and *hi alike) over the row, per lane
 * (four vectors of lanes) then across lanes — the reference's sequential loop gives the same (min
 * and max are order-free; a NaN never replaces a value, and a NaN start stays). */
void ISA_SUFFIX(wick_f32_row_range)(size_t n, const float *in, float *lo, float *hi) {
  vf vlo = vset1(*lo), vhi = vset1(*hi);
  size_t i = 0;
  if (n >= 4 * VL) { /* four independent pairs: one compare-select chain was latency-bound */
    vf lo1 = vlo, hi1 = vhi, lo2 = vlo, hi2 = vhi, lo3 = vlo, hi3 = vhi;
    for (; i + 4 * VL <= n; i += 4 * VL) {
      const vf x0 = vload(in + i), x1 = vload(in + i + VL);
      const vf x2 = vload(in + i + 2 * VL), x3 = vload(in + i + 3 * VL);
      vlo = vselect(vlt(x0, vlo), x0, vlo);
      vhi = vselect(vlt(vhi, x0), x0, vhi);
      lo1 = vselect(vlt(x1, lo1), x1, lo1);
      hi1 = vselect(vlt(hi1, x1), x1, hi1);
      lo2 = vselect(vlt(x2, lo2), x2, lo2);
      hi2 = vselect(vlt(hi2, x2), x2, hi2);
      lo3 = vselect(vlt(x3, lo3), x3, lo3);
      hi3 = vselect(vlt(hi3, x3), x3, hi3);
    }
    vlo = vselect(vlt(lo1, vlo), lo1, vlo);
    vlo = vselect(vlt(lo2, vlo), lo2, vlo);
    vlo = vselect(vlt(lo3, vlo), lo3, vlo);
    vhi = vselect(vlt(vhi, hi1), hi1, vhi);
    vhi = vselect(vlt(vhi, hi2), hi2, vhi);
    vhi = vselect(vlt(vhi, hi3), hi3, vhi);
  }
  for (; i + VL <= n; i += VL) {
    const vf x = vload(in + i);
    vlo = vselect(vlt(x, vlo), x, vlo);
    vhi = vselect(vlt(vhi, x), x, vhi);
  }
  float l[VL], h[VL];
  vstore(l, vlo);
  vstore(h, vhi);
  float rl = *lo, rh = *hi;
  for (size_t j = 0; j < VL; j++) {
    rl = l[j] < rl ? l[j] : rl;
    rh = h[j] > rh ? h[j] : rh;
  }
  for (; i < n; i++) {
    rl = in[i] < rl ? in[i] : rl;
    rh = in[i] > rh ? in[i] : rh;
  }
  *lo = rl, *hi = rh;
}

/* The hybrid ops' row quantization, bit-identical to wick_hybrid_quantize_values__reference:
 * y = offset + x * inverse (one multiply, one add: no fused multiply-add), roundf(y) as in
 * quantize_lanes, NaN -> 0, clamped to [qmin, 127]. */
QUANTIZE_INLINE vf hybrid_quantize_lanes(vf x, vf vinv, vf vo, vf lo, vf hi) {
  const vf y = vadd(vo, vmul(x, vinv));
  vf t = vtrunc(y);
  const vf frac = vsub(y, t);
  t = vadd(t, vselect(vge(frac, vset1(0.5f)), vset1(1.0f), vzero()));
  t = vsub(t, vselect(vle(frac, vset1(-0.5f)), vset1(1.0f), vzero()));
  t = vselect(visnan(t), vzero(), t);
  return vmin(hi, vmax(lo, t));
}

void ISA_SUFFIX(wick_f32_hybrid_quantize)(size_t n, const float *in, int8_t *out, float inverse,
                                          float offset, float qmin) {
  const vf vinv = vset1(inverse), vo = vset1(offset), lo = vset1(qmin), hi = vset1(127.0f);
  size_t i = 0;
#ifdef SIMD_HAS_STORE_INT8X4 /* four vectors per store */
  for (; i + 4 * VL <= n; i += 4 * VL)
    vstore_int8x4(out + i, hybrid_quantize_lanes(vload(in + i), vinv, vo, lo, hi),
                  hybrid_quantize_lanes(vload(in + i + VL), vinv, vo, lo, hi),
                  hybrid_quantize_lanes(vload(in + i + 2 * VL), vinv, vo, lo, hi),
                  hybrid_quantize_lanes(vload(in + i + 3 * VL), vinv, vo, lo, hi));
#endif
  for (; i < n; i += VL) {
    const size_t k = n - i < VL ? n - i : VL;
    const vf x = k == VL ? vload(in + i) : vloadm(in + i, vmask_tail(k));
    vstore_bytes(out + i, hybrid_quantize_lanes(x, vinv, vo, lo, hi), k);
  }
}

void ISA_SUFFIX(wick_f32_dequantize8)(size_t n, const void *in, float *out, float scale,
                                      int32_t zero_point, bool is_unsigned) {
  const vf vs = vset1(scale), vzp = vset1((float)zero_point);
  const uint8_t *src = in;
  for (size_t i = 0; i < n; i += VL) {
    const size_t k = n - i < VL ? n - i : VL;
    const vf v = vmul(vs, vsub(vload_bytes(src + i, k, is_unsigned), vzp));
    if (k == VL)
      vstore(out + i, v);
    else
      vstorem(out + i, vmask_tail(k), v);
  }
}

/* The same two for int16 (zero point bound as above). */
void ISA_SUFFIX(wick_f32_quantize16)(size_t n, const float *in, int16_t *out, float scale,
                                     int32_t zero_point) {
  const vf vs = vset1(scale), vzp = vset1((float)zero_point);
  const vf lo = vset1(-32768.0f), hi = vset1(32767.0f);
  size_t i = 0;
  for (; i + VL <= n; i += VL)
    vstore_i16(out + i, quantize_lanes(vload(in + i), vs, vzp, lo, hi), VL);
  if (i < n) {
    const size_t k = n - i;
    vstore_i16(out + i, quantize_lanes(vloadm(in + i, vmask_tail(k)), vs, vzp, lo, hi), k);
  }
}

void ISA_SUFFIX(wick_f32_dequantize16)(size_t n, const int16_t *in, float *out, float scale,
                                       int32_t zero_point) {
  const vf vs = vset1(scale), vzp = vset1((float)zero_point);
  for (size_t i = 0; i < n; i += VL) {
    const size_t k = n - i < VL ? n - i : VL;
    const vf v = vmul(vs, vsub(vload_i16(in + i, k), vzp));
    if (k == VL)
      vstore(out + i, v);
    else
      vstorem(out + i, vmask_tail(k), v);
  }
}
