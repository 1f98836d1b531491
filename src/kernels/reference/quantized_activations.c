/*
 * quantized_activations.c — reference kernels of the quantized activations
 * and table-driven ops, bit-exact with LiteRT's reference kernels: SOFTMAX
 * (gemmlowp fixed point, the float exp table, int16 tables), 8-bit lookup
 * tables (built per op at prepare from the op's float function), int16
 * LOGISTIC / TANH, RSQRT's table, HARD_SWISH, int8 L2_NORMALIZATION. Arithmetic as
 * quantized.c.
 */
#include "kernels/reference/quantized_common.h"

/* ---------------------------------------------------------------- softmax (gemmlowp fixed point)
 */

/* Saturating multiply of a raw fixed-point value by 2^e, e > 0. */
INLINE int32_t sat_shl(int32_t x, int32_t e) {
  const int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}

/* exp(x) for x in [-1/4, 0), Q0.31 in and out (Taylor series around -1/8). */
static int32_t exp_on_interval(int32_t a) {
  const int32_t constant_term = 1895147668; /* exp(-1/8) */
  const int32_t one_third = 715827883;
  const int32_t x = add32(a, 1 << 28);
  const int32_t x2 = srdhm(x, x), x3 = srdhm(x2, x), x4 = srdhm(x2, x2);
  const int32_t x4_over_4 = rdivpot(x4, 2);
  const int32_t poly = rdivpot(add32(srdhm(add32(x4_over_4, x3), one_third), x2), 1);
  return add32(constant_term, srdhm(constant_term, add32(x, poly)));
}

/* exp(a) for a <= 0 with `int_bits` integer bits (Q int_bits . 31-int_bits),
 * returned in Q0.31: the fractional quarter by the Taylor series, the rest by
 * multiplying constants exp(-2^k) for each set bit. */
static int32_t exp_on_negative_values(int32_t a, int32_t int_bits) {
  static const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                         39332535,   720401,     242};
  const int32_t frac_bits = 31 - int_bits;
  const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod = sub32(a & mask, one_quarter);
  int32_t result = exp_on_interval(int_bits > 0 ? sat_shl(a_mod, int_bits) : a_mod);
  const int32_t remainder = sub32(a_mod, a);
  for (int32_t e = -2; e <= 4; e++) {
    if (int_bits > e) {
      const int32_t shift = frac_bits + e;
      if (remainder & (int32_t)((uint32_t)1 << shift)) result = srdhm(result, multipliers[e + 2]);
    }
  }
  if (int_bits > 5) {
    const int32_t clamp = -(1 << (36 - int_bits)); /* -32.0 */
    if (a < clamp) result = 0;
  }
  if (a == 0) result = INT32_MAX;
  return result;
}

/* 1 / (1 + x) for x in [0, 1), Q0.31 in and out (Newton-Raphson). */
static int32_t one_over_one_plus_x(int32_t a) {
  int64_t sum = (int64_t)a + INT32_MAX;
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t c48_17 = 1515870810, c_neg32_17 = -1010580540; /* Q2.29 */
  int32_t x = add32(c48_17, srdhm(half_denominator, c_neg32_17));
  for (int32_t i = 0; i < 3; i++) {
    const int32_t hdx = srdhm(half_denominator, x);
    const int32_t one_minus = sub32((int32_t)1 << 29, hdx);
    x = add32(x, sat_shl(srdhm(x, one_minus), 2));
  }
  return sat_shl(x, 1);
}

void wick_q_softmax_row_scale(int32_t sum, int32_t out_bits, int32_t *scale, int32_t *exponent) {
  const int32_t headroom_plus_one = sum == 0 ? 32 : __builtin_clz((uint32_t)sum);
  const int32_t bits_over_unit = 12 - headroom_plus_one;
  const int32_t shifted_sum_minus_one =
      (int32_t)(((uint64_t)(uint32_t)sum << headroom_plus_one) - ((uint64_t)1 << 31));
  *scale = one_over_one_plus_x(shifted_sum_minus_one);
  const int32_t e = bits_over_unit + 31 - out_bits;
  *exponent = e < 0 ? 0 : e;
  if (e > 31) {
    /* A row whose exps sum to 512 or more (long rows of close values) with an 8-bit output:
     * every output is (scale * exp, below 2^31) rounded-divided by 2^32 or more, which is 0.
     * LiteRT's reference kernel aborts on such a row and its default kernel outputs 0. */
    *scale = 0;
    *exponent = 0;
  }
}

void wick_q_softmax_tables(const wick_qsoftmax_params *p, int32_t exps[256], int32_t sums[256]) {
  for (int32_t d = 0; d < 256; d++) {
    exps[d] = sums[d] = 0;
    if (-d >= p->diff_min) {
      const int32_t scaled =
          srdhm((int32_t)((uint32_t)-d << p->input_left_shift), p->input_multiplier);
      exps[d] = exp_on_negative_values(scaled, 5);
      sums[d] = rdivpot(exps[d], 12);
    }
  }
}

/* Softmax of one row: exps of rescaled differences from the row maximum,
 * their sum in Q12.19, its reciprocal, and each output rounded to the
 * output type's 1/2^bits scale (offset by the type's minimum). */
INLINE void softmax_body(wick_dtype in_t, wick_dtype out_t, int64_t rows, int64_t cols,
                         const wick_qsoftmax_params *p, const void *in, void *out) {
  int32_t omin, omax;
  type_range(out_t, &omin, &omax);
  const int32_t out_bits = out_t == WICK_DTYPE_INT16 ? 16 : 8;
  for (int64_t r = 0; r < rows; r++) {
    const int64_t base = r * cols;
    int32_t max_in_row;
    type_range(in_t, &max_in_row, &(int32_t){0});
    for (int64_t c = 0; c < cols; c++) {
      int32_t v = ld(in_t, in, base + c);
      if (v > max_in_row) max_in_row = v;
    }
    int32_t sum = 0; /* Q12.19 */
    for (int64_t c = 0; c < cols; c++) {
      const int32_t diff = ld(in_t, in, base + c) - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t scaled =
            srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        sum = add32(sum, rdivpot(exp_on_negative_values(scaled, 5), 12));
      }
    }
    int32_t shifted_scale, exponent;
    wick_q_softmax_row_scale(sum, out_bits, &shifted_scale, &exponent);
    for (int64_t c = 0; c < cols; c++) {
      const int32_t diff = ld(in_t, in, base + c) - max_in_row;
      int32_t v = omin;
      if (diff >= p->diff_min) {
        const int32_t scaled =
            srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        const int32_t e = exp_on_negative_values(scaled, 5);
        v = clamp32(add32(rdivpot(srdhm(shifted_scale, e), exponent), omin), omin, omax);
      }
      st(out_t, out, base + c, v);
    }
  }
}

void wick_q_softmax__reference(wick_dtype in_type, wick_dtype out_type, int64_t rows, int64_t cols,
                               const wick_qsoftmax_params *p, const void *in, void *out) {
#define SM(IT, OT)                                \
  if (in_type == IT && out_type == OT) {          \
    softmax_body(IT, OT, rows, cols, p, in, out); \
    return;                                       \
  }
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT8)
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT16)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_UINT8)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_INT16)
#undef SM
}

/* ---------------------------------------------------------------- softmax (float exp table) */

void wick_q_softmax_table_populate(float input_scale, float beta, float table[256]) {
  const float scale = -input_scale * beta; /* in float, as LiteRT */
  for (int32_t v = 0; v < 256; v++) table[255 - v] = expf(scale * (float)v);
}

/* Softmax of one row through the table: exp(x - max) is table[255 + x - max];
 * the float sum in column order, its reciprocal times 1/output scale, each
 * product rounded (half away from zero; uint8: +0.5 truncated) plus the zero
 * point, clamped. */
INLINE void softmax_table_body(wick_dtype in_t, wick_dtype out_t, int64_t rows, int64_t cols,
                               const float *table, float out_scale, int32_t out_zp, const void *in,
                               void *out) {
  int32_t omin, omax;
  type_range(out_t, &omin, &omax);
  for (int64_t r = 0; r < rows; r++) {
    const int64_t base = r * cols;
    int32_t max_in_row;
    type_range(in_t, &max_in_row, &(int32_t){0});
    for (int64_t c = 0; c < cols; c++) {
      const int32_t v = ld(in_t, in, base + c);
      if (v > max_in_row) max_in_row = v;
    }
    const float *t = table + 255 - max_in_row; /* t[x] for x in [max - 255, max] */
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; c++) sum += t[ld(in_t, in, base + c)];
    const float inverse = 1.0f / (sum * out_scale);
    for (int64_t c = 0; c < cols; c++) {
      const float p = t[ld(in_t, in, base + c)] * inverse;
      const int32_t q = out_t == WICK_DTYPE_UINT8 ? (int32_t)(p + 0.5f) : (int32_t)roundf(p);
      st(out_t, out, base + c, clamp32(q + out_zp, omin, omax));
    }
  }
}

void wick_q_softmax_table__reference(wick_dtype in_type, wick_dtype out_type, int64_t rows,
                                     int64_t cols, const float table[256], float out_scale,
                                     int32_t out_zp, const void *in, void *out) {
#define SM(IT, OT)                                                             \
  if (in_type == IT && out_type == OT) {                                       \
    softmax_table_body(IT, OT, rows, cols, table, out_scale, out_zp, in, out); \
    return;                                                                    \
  }
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT8)
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT16)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_UINT8)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_INT16)
#undef SM
}

/* ---------------------------------------------------------------- int16 softmax (tables) */

/* LiteRT's 513-entry int16 table of f over the int16 input range (computed in
 * double): 512 samples, each biased by half the error of linear
 * interpolation at its midpoint, plus the end point. */
void wick_q_lut16_populate(wick_q_lut16_fn fn, double in_scale, int32_t in_zp, double out_scale,
                           int32_t out_zp, int16_t lut[513]) {
  const double input_min = in_scale * (double)(INT16_MIN - in_zp);
  const double input_max = in_scale * (double)(INT16_MAX - in_zp);
  const double output_min = out_scale * (double)(INT16_MIN - out_zp);
  const double output_max = out_scale * (double)(INT16_MAX - out_zp);
  const double step = (input_max - input_min) / 512.0, half_step = step / 2.0;
  const double inv = 65536.0 / (output_max - output_min);
#define LUT_F(v) (fn == WICK_Q_LUT16_EXP ? exp(v) : 1.0 / (1.0 + (v)))
#define LUT_CLAMP(v) ((int16_t)((v) < -32768.0 ? -32768.0 : ((v) > 32767.0 ? 32767.0 : (v))))
  for (int32_t i = 0; i < 512; i++) {
    const double val = LUT_F(input_min + i * step);
    const double val_mid = LUT_F(input_min + i * step + half_step);
    const double val_next = LUT_F(input_min + (i + 1) * step);
    const double sample = round(val * inv);
    const double interp = round((val_next * inv + round(val * inv)) / 2.0);
    const double mid = round(val_mid * inv);
    const double bias = round((interp - mid) / 2.0);
    lut[i] = LUT_CLAMP(sample - bias);
  }
  lut[512] = LUT_CLAMP(round(LUT_F(input_max) * inv));
#undef LUT_F
#undef LUT_CLAMP
}

/* Interpolated lookup: 9 high bits index, 7 low bits interpolate. */
static inline int16_t lut16(int16_t v, const int16_t lut[513]) {
  const int32_t index = 256 + (v >> 7);
  const int32_t offset = v & 0x7f;
  const int32_t base = lut[index], slope = lut[index + 1] - lut[index];
  return (int16_t)(base + ((slope * offset + 64) >> 7));
}

void wick_q_softmax_i16__reference(int64_t rows, int64_t cols, int32_t multiplier, int32_t shift,
                                   const int16_t exp_lut[513], const int16_t recip_lut[513],
                                   const int16_t *in, int16_t *out) {
  for (int64_t r = 0; r < rows; r++) {
    const int16_t *x = in + r * cols;
    int16_t *y = out + r * cols;
    int16_t max_in_row = INT16_MIN;
    for (int64_t c = 0; c < cols; c++)
      if (x[c] > max_in_row) max_in_row = x[c];
    uint32_t sum = 0; /* Q16.15 */
    for (int64_t c = 0; c < cols; c++) {
      const int32_t scaled = mbqm((int32_t)x[c] - max_in_row, multiplier, shift);
      y[c] = lut16((int16_t)clamp32(add32(scaled, 32767), INT16_MIN, INT16_MAX), exp_lut);
      sum += (uint32_t)(int32_t)y[c];
    }
    int32_t headroom_plus_one = sum == 0 ? 32 : __builtin_clz(sum);
    if (headroom_plus_one < 1) headroom_plus_one = 1;
    const int32_t shifted_sum =
        (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int32_t sym = shifted_sum - ((1 << 15) + (1 << 16));
    const int16_t recip = lut16((int16_t)clamp32(sym, INT16_MIN, INT16_MAX), recip_lut);
    const int32_t right_shift = 31 - headroom_plus_one;
    const int64_t round_add = right_shift > 0 ? (int64_t)1 << (right_shift - 1) : 0;
    for (int64_t c = 0; c < cols; c++) {
      const int32_t v = (int32_t)(((int64_t)y[c] * recip + round_add) >> right_shift);
      y[c] = (int16_t)clamp32(v, 0, 32767);
    }
  }
}

/* ---------------------------------------------------------------- lookup tables */

void wick_q_lut8_populate(wick_dtype type, wick_q_lut_fn fn, float in_scale, int32_t in_zp,
                          float out_scale, int32_t out_zp, uint8_t lut[256]) {
  int32_t lo, hi;
  type_range(type, &lo, &hi);
  const float inverse_scale = 1.0f / out_scale;
  for (int32_t v = lo; v <= hi; v++) {
    const float x = in_scale * (float)(v - in_zp);
    float y;
    switch (fn) {
      case WICK_Q_LUT_LOGISTIC: y = 1.0f / (1.0f + expf(-x)); break;
      case WICK_Q_LUT_TANH: y = tanhf(x); break;
      case WICK_Q_LUT_GELU: y = 0.5f * x * erfcf(x * (float)-0.70710678118654752440); break;
      default: { /* WICK_Q_LUT_GELU_APPROX; sqrt(2/pi) rounded to float as LiteRT */
        const float k = (float)(1.12837916709551257390 * 0.70710678118654752440);
        y = 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
        break;
      }
    }
    float r = roundf(y * inverse_scale) + (float)out_zp;
    /* LiteRT converts without a range check; the clamp keeps wick defined.
     * NaN (extreme scales: GELU's -inf * erfc(+inf)) reads as y = 0. */
    if (r != r) r = (float)out_zp;
    int32_t q = r <= (float)lo ? lo : (r >= (float)hi ? hi : (int32_t)r);
    lut[(uint8_t)v] = (uint8_t)q;
  }
}

void wick_q_lut8__reference(int64_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out) {
  for (int64_t i = 0; i < n; i++) out[i] = lut[in[i]];
}

/* ---------------------------------------------------------------- int16 LOGISTIC, TANH */

bool wick_q_checked_log2(double x, int32_t *log2_rounded) {
  const double l = log(x) * (1.0 / log(2.0)), r = round(l);
  *log2_rounded = (int32_t)r;
  return fabs(l - r) < 1e-3;
}

bool wick_q16_sigmoid_rescale(double in_scale, bool tanh, int32_t *multiplier, int32_t *shift) {
  if (!(in_scale > 0.0) || in_scale > 1e6) return false;
  int32_t log2_scale;
  const bool pot = wick_q_checked_log2(in_scale, &log2_scale);
  const int32_t pot_shift = 12 + log2_scale; /* 15 - 3 integer bits + log2(scale) */
  if (pot && (pot_shift == 0 || (tanh && pot_shift == 1))) {
    *multiplier = 3 << pot_shift; /* the kernel's "power of two" case: shift 0 */
    *shift = 0;
    return true;
  }
  double m = in_scale * 4096.0 * 3.0; /* to steps of 1 / (3 * 4096) */
  int32_t s = 0;
  while (m <= 32767.0 / 2.0 && s <= 30) {
    s++;
    m *= 2.0;
  }
  const int64_t round_half = s > 0 ? (int64_t)1 << (s - 1) : 0;
  /* below ~4e-14 the multiplier truncates to 0, which LiteRT's kernel misreads as
   * its power-of-two case (and overflows a shift) */
  if (m < 1.0 || m * 32768.0 + (double)round_half > (double)INT32_MAX) return false;
  *multiplier = (int32_t)m; /* truncated, as LiteRT */
  *shift = s;
  return true;
}

/* sigmoid(i / 24) in unsigned 0.16 fixed point, each node lowered by half the
 * sag of the chord to the next node (so linear interpolation errs evenly on
 * both sides), rounded; the last node is the 16-bit maximum. These are the
 * values of LiteRT's table: checked exhaustively against its reference kernels
 * on every int16 input (tests/python/ops/test_quantized_ops.py). The rounding
 * margin is >= 0.004, far from any libm's last-bit differences. */
void wick_q16_sigmoid_table(uint16_t table[256]) {
  for (int i = 0; i < 255; i++) {
    const double a = i / 24.0, b = (i + 1) / 24.0;
    const double sa = 1.0 / (1.0 + exp(-a)), sb = 1.0 / (1.0 + exp(-b));
    const double sag = (sa + sb) / 2.0 - 1.0 / (1.0 + exp(-(a + b) / 2.0));
    table[i] = (uint16_t)floor(65536.0 * (sa - sag / 2.0) + 0.5);
  }
  table[255] = 65535;
}

/* x * multiplier, rounded, >> shift: the input in steps of 1/12288. */
static inline int32_t sigmoid_input(int16_t x, int32_t multiplier, int32_t shift) {
  const int32_t round_half = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  return (int32_t)(((int64_t)x * multiplier + round_half) >> shift);
}

void wick_q16_logistic__reference(int64_t n, const uint16_t table[256], int32_t multiplier,
                                  int32_t shift, const int16_t *in, int16_t *out) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t x = sigmoid_input(in[i], multiplier, shift);
    const uint32_t ax = x < 0 ? (uint32_t) - (int64_t)x : (uint32_t)x;
    const uint32_t node = ax >> 9; /* 512 steps of 1/12288 = 1/24 per table node */
    uint32_t r;                    /* sigmoid(|x|) in 0.25 fixed point */
    if (node >= 255) {
      r = 0x7FFFu << 10;
    } else {
      const uint32_t a = table[node], b = table[node + 1];
      r = (a << 9) + (ax & 0x1FF) * (b - a);
    }
    /* sigmoid(-x) = 1 - sigmoid(x); then to 0.15 with rounding */
    r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
    out[i] = (int16_t)(r >> 10);
  }
}

void wick_q16_tanh__reference(int64_t n, const uint16_t table[256], int32_t multiplier,
                              int32_t shift, const int16_t *in, int16_t *out) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t x = sigmoid_input(in[i], multiplier, shift);
    const uint32_t ax = x < 0 ? (uint32_t) - (int64_t)x : (uint32_t)x;
    const uint32_t node = ax >> 8; /* tanh(x) = 2 sigmoid(2x) - 1: twice the step */
    int32_t r;                     /* sigmoid(2|x|) in 0.24 fixed point */
    if (node >= 255) {
      r = 0xFFFF << 8;
    } else {
      const int32_t a = table[node], b = table[node + 1];
      r = (a << 8) + (int32_t)(ax & 0xFF) * (b - a);
    }
    r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    /* floor division by 2^8 (an arithmetic shift in LiteRT) */
    out[i] = (int16_t)(r >= 0 ? r >> 8 : -((-r + 255) >> 8));
  }
}

/* LiteRT's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1: 1/sqrt(x)
 * as multiplier * 2^shift, by five Newton-Raphson steps in gemmlowp's
 * FixedPoint<int32, 3> (products are rounding doubling high multiplies, the
 * rescales saturating shifts, the subtraction of raw values plain). */
static void inv_sqrt_multiplier_exp(int32_t x, int32_t *multiplier, int32_t *shift) {
  if (x <= 1) {
    *multiplier = INT32_MAX;
    *shift = 0;
    return;
  }
  int32_t s = 11;
  while (x >= (1 << 29)) {
    x /= 4;
    s++;
  }
  const int32_t max_left_shift_bits = __builtin_clz((uint32_t)x) - 1;
  const int32_t left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  s -= left_shift_bit_pairs;
  x = (int32_t)((uint32_t)x << (2 * left_shift_bit_pairs));
  const int32_t half_input = rdivpot(x >> 1, 1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t r = 1 << 28; /* 1.0 in Q3.28 */
  for (int i = 0; i < 5; i++) {
    const int32_t r3 = sat_shl(srdhm(srdhm(r, r), r), 6);
    r = sat_shl(sub32(srdhm(half_three, r), srdhm(half_input, r3)), 3);
  }
  r = srdhm(r, 1518500250); /* sqrt(2)/2 in Q0.31 */
  if (s < 0) {
    r = (int32_t)((uint32_t)r << -s);
    s = 0;
  }
  *multiplier = r;
  *shift = -s;
}

void wick_q_l2_normalize_i8__reference(int64_t rows, int64_t cols, int32_t zero_point,
                                       const int8_t *in, int8_t *out) {
  for (int64_t r = 0; r < rows; r++) {
    const int8_t *x = in + r * cols;
    int8_t *y = out + r * cols;
    int32_t acc = 0;
    for (int64_t c = 0; c < cols; c++) {
      const int32_t v = x[c] - zero_point;
      acc = add32(acc, v * v);
    }
    int32_t m, sh;
    inv_sqrt_multiplier_exp(acc, &m, &sh);
    for (int64_t c = 0; c < cols; c++)
      y[c] = (int8_t)clamp32(mbqm(x[c] - zero_point, m, sh + 7), INT8_MIN, INT8_MAX);
  }
}

void wick_q_rsqrt_lut8_populate(int32_t in_zp, int32_t out_multiplier, int32_t out_shift,
                                int32_t out_zp, uint8_t lut[256]) {
  const int32_t k_shift = 20;
  for (int32_t v = INT8_MIN; v <= INT8_MAX; v++) {
    const int32_t value = v - in_zp;
    int32_t q = INT8_MAX;
    if (value > 0) {
      int32_t m, sh;
      inv_sqrt_multiplier_exp(value, &m, &sh);
      const int32_t data = mbqm(1, m, sh + k_shift);
      q = clamp32(mbqm(data, out_multiplier, out_shift - k_shift) + out_zp, INT8_MIN, INT8_MAX);
    }
    lut[(uint8_t)v] = (uint8_t)(int8_t)q;
  }
}

/* LiteRT's LUTPopulate<int16_t> as its int16 RSQRT calls it: the same
 * interpolation-biased samples as the softmax tables, but every step in float
 * (the transform, the scales and the rounding are float there). */
static float rsqrt_or_max(float v, float out_scale) {
  return v <= 0.0f ? 32767.0f * out_scale : 1.0f / sqrtf(v);
}

void wick_q_rsqrt_lut16_populate(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                                 int16_t lut[513]) {
  const float input_min = in_scale * (float)(INT16_MIN - in_zp);
  const float input_max = in_scale * (float)(INT16_MAX - in_zp);
  const float output_min = out_scale * (float)(INT16_MIN - out_zp);
  const float output_max = out_scale * (float)(INT16_MAX - out_zp);
  const float step = (input_max - input_min) / 512.0f, half_step = step / 2.0f;
  const float inv = 65536.0f / (output_max - output_min);
#define LUT_CLAMP(v) ((int16_t)((v) < -32768.0f ? -32768.0f : ((v) > 32767.0f ? 32767.0f : (v))))
  for (int32_t i = 0; i < 512; i++) {
    const float val = rsqrt_or_max(input_min + (float)i * step, out_scale);
    const float val_mid = rsqrt_or_max(input_min + (float)i * step + half_step, out_scale);
    const float val_next = rsqrt_or_max(input_min + (float)(i + 1) * step, out_scale);
    const float sample = roundf(val * inv);
    const float interp = roundf((val_next * inv + roundf(val * inv)) / 2.0f);
    const float mid = roundf(val_mid * inv);
    const float bias = roundf((interp - mid) / 2.0f);
    lut[i] = LUT_CLAMP(sample - bias);
  }
  lut[512] = LUT_CLAMP(roundf(rsqrt_or_max(input_max, out_scale) * inv));
#undef LUT_CLAMP
}

void wick_q_lut16__reference(int64_t n, const int16_t lut[513], const int16_t *in, int16_t *out) {
  for (int64_t i = 0; i < n; i++) out[i] = lut16(in[i], lut);
}

/* ---------------------------------------------------------------- hard swish */

INLINE int16_t sat16(int64_t v) {
  return (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
}

INLINE int16_t srdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t ab = (int32_t)a * (int32_t)b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}

/* Rounding down (toward zero) variant: SQDMULH. */
INLINE int16_t sdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

/* LiteRT's 16-bit fixed-point hard swish: x * relu6(x + 3) / 6 with the
 * input on a hi-res scale (x << 7), a "reluish" factor in [0, 1] and a final
 * rounding shift to the output scale. */
INLINE void hard_swish_body(wick_dtype t, int64_t n, const wick_qhard_swish_params *p,
                            const void *in, void *out) {
  int32_t tmin, tmax;
  type_range(t, &tmin, &tmax);
  for (int64_t i = 0; i < n; i++) {
    const int16_t x = (int16_t)(ld(t, in, i) - p->input_zero_point);
    const int16_t hires = (int16_t)(x * (1 << 7));
    const int16_t preshift = srdhm16(hires, p->output_multiplier_fixedpoint_int16);
    int16_t reluish = hires;
    if (p->reluish_multiplier_exponent > 0)
      reluish = sat16((int64_t)reluish * ((int64_t)1 << (p->reluish_multiplier_exponent - 1)));
    reluish = srdhm16(reluish, p->reluish_multiplier_fixedpoint_int16);
    if (p->reluish_multiplier_exponent > 0) reluish = sat16((int64_t)reluish * 2);
    if (p->reluish_multiplier_exponent < 0)
      reluish = (int16_t)rdivpot(reluish, -p->reluish_multiplier_exponent);
    reluish = (int16_t)((reluish + (1 << 15)) >> 1);
    const int16_t pre_out = sdhm16(reluish, preshift);
    int32_t v = (int16_t)rdivpot(pre_out, -p->output_multiplier_exponent);
    v = (int16_t)(v + p->output_zero_point);
    st(t, out, i, clamp32(v, tmin, tmax));
  }
}

void wick_q_hard_swish__reference(wick_dtype type, int64_t n, const wick_qhard_swish_params *p,
                                  const void *in, void *out) {
#define HS_CALL(IT, WT) hard_swish_body(IT, n, p, in, out)
  DISPATCH_ACT(type, HS_CALL);
#undef HS_CALL
}
