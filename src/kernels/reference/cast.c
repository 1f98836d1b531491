/*
 * cast.c — reference element type conversion (CAST, float16 DEQUANTIZE) and
 * the float16 <-> float32 bit conversions.
 *
 * Every conversion goes through one of two carriers: integers and bools are
 * read as int64, floats as double (exact for float16/float32/float64). The
 * rules (see reference.h for the full list):
 *
 *   integer -> integer   keep the low bits (two's complement wrap)
 *   float   -> integer   truncate toward zero, saturate to [MIN, MAX],
 *                        NaN -> 0. Defined here on purpose: C leaves
 *                        out-of-range float->int conversion undefined, and
 *                        LiteRT 2.x returns MAX for NaN.
 *   any     -> bool      x != 0 (so NaN -> true)
 *   bool    -> any       0 or 1 (any non-zero byte reads as true)
 *   -> float16           round to nearest even via wick_f32_to_f16; from
 *                        int/float64 through float32 first (as Eigen::half)
 *
 * Float16 encoding: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
 * Next: src/ops/cast.c (type checks), quantize.c (float16 DEQUANTIZE).
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

float wick_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    /* zero or subnormal: mant * 2^-24, exact in float32 */
    float v = (float)mant * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31)
    bits = sign | 0x7f800000u | (mant << 13); /* inf, or NaN keeping its payload */
  else
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t wick_f32_to_f16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* quiet NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (and inf): inf */
  if (a < 0x38800000u) {
    /* below 2^-14: a float16 subnormal (or zero), mantissa = |x| * 2^24
     * rounded to nearest even; 1024 becomes the smallest normal, which is
     * exactly the right encoding. The scaling by 2^24 is exact. */
    float v = fabsf(x) * 16777216.0f;
    float r = floorf(v);
    float d = v - r;
    if (d > 0.5f || (d == 0.5f && fmodf(r, 2.0f) != 0.0f)) r += 1.0f;
    return (uint16_t)(sign | (uint16_t)r);
  }
  /* normal: rebias the exponent, keep 10 mantissa bits, round the 13 dropped
   * bits to nearest even (a carry into the exponent is correct as is). */
  uint32_t h = ((a >> 23) - 112u) << 10 | ((a >> 13) & 0x3ffu);
  uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
  return (uint16_t)(sign | h);
}

static bool is_float(wick_dtype t) {
  return t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_FLOAT16 || t == WICK_DTYPE_FLOAT64;
}

static double read_float(wick_dtype t, const void *p, int64_t i) {
  switch (t) {
    case WICK_DTYPE_FLOAT16: return wick_f16_to_f32(((const uint16_t *)p)[i]);
    case WICK_DTYPE_FLOAT64: return ((const double *)p)[i];
    default: return ((const float *)p)[i];
  }
}

static int64_t read_int(wick_dtype t, const void *p, int64_t i) {
  switch (t) {
    case WICK_DTYPE_INT8: return ((const int8_t *)p)[i];
    case WICK_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case WICK_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case WICK_DTYPE_INT16: return ((const int16_t *)p)[i];
    case WICK_DTYPE_INT32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
  }
}

/* Saturating float -> integer in [lo, hi]; NaN -> 0. The bounds compare
 * exactly: lo and hi + 1 are exact doubles (hi + 1 = 2^63 for int64). */
static int64_t sat_int(double d, int64_t lo, int64_t hi) {
  if (d != d) return 0;
  if (d <= (double)lo) return lo;
  double top = hi == INT64_MAX ? 9223372036854775808.0 : (double)hi + 1.0;
  if (d >= top) return hi;
  return (int64_t)d; /* lo < d < hi + 1: defined, truncates toward zero */
}

/* Writes integer v (already in range when it came from a float) to `to`. */
static void write_int(wick_dtype to, void *p, int64_t i, int64_t v) {
  switch (to) {
    case WICK_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case WICK_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
    case WICK_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case WICK_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
  }
}

static void int_range(wick_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
    case WICK_DTYPE_INT8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      return;
    case WICK_DTYPE_UINT8:
      *lo = 0;
      *hi = UINT8_MAX;
      return;
    case WICK_DTYPE_INT16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return;
    case WICK_DTYPE_INT32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return;
    default:
      *lo = INT64_MIN;
      *hi = INT64_MAX;
      return;
  }
}

static void write_float(wick_dtype to, void *p, int64_t i, double d) {
  switch (to) {
    case WICK_DTYPE_FLOAT64: ((double *)p)[i] = d; break;
    case WICK_DTYPE_FLOAT16: ((uint16_t *)p)[i] = wick_f32_to_f16((float)d); break;
    default: ((float *)p)[i] = (float)d; break;
  }
}

void wick_cast__reference(wick_dtype from, wick_dtype to, int64_t n, const void *in, void *out) {
  if (from == to) {
    if (n > 0) memcpy(out, in, (size_t)n * wick_dtype_size(from));
    return;
  }
  if (to == WICK_DTYPE_BOOL) {
    for (int64_t i = 0; i < n; i++)
      ((bool *)out)[i] =
          is_float(from) ? read_float(from, in, i) != 0.0 : read_int(from, in, i) != 0;
    return;
  }
  if (is_float(from)) {
    if (is_float(to)) {
      for (int64_t i = 0; i < n; i++) write_float(to, out, i, read_float(from, in, i));
    } else {
      int64_t lo, hi;
      int_range(to, &lo, &hi);
      for (int64_t i = 0; i < n; i++)
        write_int(to, out, i, sat_int(read_float(from, in, i), lo, hi));
    }
    return;
  }
  if (is_float(to)) {
    /* Each conversion rounds once from the integer (C's (float)int64 is
     * correctly rounded); float16 goes through float32 like Eigen::half. */
    for (int64_t i = 0; i < n; i++) {
      int64_t v = read_int(from, in, i);
      if (to == WICK_DTYPE_FLOAT64)
        ((double *)out)[i] = (double)v;
      else if (to == WICK_DTYPE_FLOAT16)
        ((uint16_t *)out)[i] = wick_f32_to_f16((float)v);
      else
        ((float *)out)[i] = (float)v;
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) write_int(to, out, i, read_int(from, in, i));
}
