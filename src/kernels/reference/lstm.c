/*
 * lstm.c — reference LSTM cells: float32, and integer (LiteRT's "8x8_16"
 * scheme: int8 inputs, weights and output state, int16 gates and cell
 * state), the integer one bit-exact with LiteRT's reference kernels.
 *
 * Float step: gate = act(b + W x + R h) (sigmoid for i, f, o; the op's
 * activation for c), cell = f * cell + i * c (clipped when clip > 0; CIFG:
 * i = 1 - f), h = o * act(cell).
 *
 * Integer step:
 * One step for n_batch rows (gates i, f, c, o; sizes n_cell, n_output):
 *   gate = clamp16(mbqm(x * W + b_x, m_x) + mbqm(h * R + b_h, m_h))   (Q3.12)
 *   i, f, o = sigmoid(gate) (Q0.15); c = tanh(gate) (Q0.15)
 *   cell  = sat16(rdivpot(f * cell, 15) + rdivpot(i * c, 30 + cell_scale)),
 *           then clipped to [-clip, clip] when clip > 0
 *           (CIFG: i = 1 - f, with 1 = 32767)
 *   h     = clamp8(mbqm(o * tanh(cell), m_hidden) + zp_hidden)
 * where the biases b_x, b_h already carry -zp * row sums of the weights
 * (computed by the op) and cell_scale = log2 of the cell state's scale.
 *
 * sigmoid and tanh are gemmlowp's 16-bit fixed-point functions (a Taylor
 * series for exp on [-1/4, 0), a barrel shifter of exp(-2^k) constants, and
 * Newton-Raphson division), rewritten here on int16 raw values: every
 * addition of raw values wraps in 16 bits except the marked saturating ones,
 * as gemmlowp's FixedPoint<int16_t, N> does.
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

/* ---------------------------------------------------------------- 16-bit fixed point */

static inline int16_t w16(int32_t v) { return (int16_t)(uint16_t)(uint32_t)v; }
static inline int16_t sat16(int32_t v) {
  return (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
}

static inline int16_t srdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t ab = (int32_t)a * (int32_t)b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}

static inline int16_t rdivpot16(int16_t x, int32_t e) {
  return (int16_t)wick_q_rounding_divide_by_pot(x, e);
}

/* A gemmlowp int32 fixed-point constant on 16 bits: rounding shift by 16. */
static inline int16_t k16(int32_t raw32) {
  return (int16_t)wick_q_rounding_divide_by_pot(raw32, 16);
}

/* Saturating multiply by 2^e (e > 0) of a 16-bit raw value. */
static inline int16_t sat_shl16(int16_t x, int32_t e) {
  const int32_t threshold = (1 << (15 - e)) - 1;
  if (x > threshold) return INT16_MAX;
  if (x < -threshold) return INT16_MIN;
  return w16((int32_t)x * (1 << e));
}

/* Rescale between integer-bit counts: src -> dst. */
static inline int16_t rescale16(int16_t x, int32_t src_bits, int32_t dst_bits) {
  const int32_t e = src_bits - dst_bits;
  if (e > 0) return sat_shl16(x, e);
  if (e < 0) return rdivpot16(x, -e);
  return x;
}

static inline int16_t rounding_half_sum16(int16_t a, int16_t b) {
  const int32_t sum = (int32_t)a + (int32_t)b;
  return (int16_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/* exp(x) for x in [-1/4, 0), Q0.15. */
static int16_t exp_interval16(int16_t a) {
  const int16_t constant_term = k16(1895147668), one_third = k16(715827883);
  const int16_t x = w16(a + (1 << 12));
  const int16_t x2 = srdhm16(x, x), x3 = srdhm16(x2, x), x4 = srdhm16(x2, x2);
  const int16_t x4_over_4 = rdivpot16(x4, 2);
  const int16_t poly = rdivpot16(w16(srdhm16(w16(x4_over_4 + x3), one_third) + x2), 1);
  return sat16((int32_t)constant_term + srdhm16(constant_term, w16(x + poly)));
}

/* exp(a) for a <= 0 with `bits` integer bits, Q0.15 result. */
static int16_t exp_negative16(int16_t a, int32_t bits) {
  static const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                         39332535,   720401,     242};
  const int32_t frac = 15 - bits;
  const int16_t one_quarter = (int16_t)(1 << (frac - 2));
  const int16_t mask = (int16_t)(one_quarter - 1);
  const int16_t a_mod = w16((a & mask) - one_quarter);
  int16_t result = exp_interval16(rescale16(a_mod, bits, 0));
  const int16_t remainder = w16(a_mod - a);
  for (int32_t e = -2; e <= 4; e++) {
    if (bits > e && (remainder & (1 << (frac + e))))
      result = srdhm16(result, k16(multipliers[e + 2]));
  }
  if (bits > 5) {
    const int16_t clamp = k16(-(1 << (36 - bits))); /* -32.0 */
    if (a < clamp) result = 0;
  }
  if (a == 0) result = INT16_MAX;
  return result;
}

/* 1 / (1 + x) for x in (0, 1), Q0.15 in and out. */
static int16_t one_over_one_plus16(int16_t a) {
  const int16_t half_denominator = rounding_half_sum16(a, INT16_MAX);
  const int16_t c48_17 = k16(1515870810), c_neg32_17 = k16(-1010580540); /* Q2.13 */
  int16_t x = w16(c48_17 + srdhm16(half_denominator, c_neg32_17));
  for (int32_t i = 0; i < 3; i++) {
    const int16_t hdx = srdhm16(half_denominator, x);
    const int16_t one_minus = w16((1 << 13) - hdx);
    x = w16(x + rescale16(srdhm16(x, one_minus), 4, 2));
  }
  return rescale16(x, 1, 0); /* ExactMulByPot<-1>: Q2.13 read as Q1.14 */
}

/* (1 - x) / (1 + x) for x in (0, 1), Q0.15 in and out. */
static int16_t one_minus_over_one_plus16(int16_t a) {
  const int16_t half_denominator = rounding_half_sum16(a, INT16_MAX);
  const int16_t c48_17 = k16(1515870810), c_neg32_17 = k16(-1010580540);
  int16_t x = w16(c48_17 + srdhm16(half_denominator, c_neg32_17));
  for (int32_t i = 0; i < 3; i++) {
    const int16_t hdx = srdhm16(half_denominator, x);
    const int16_t one_minus = w16((1 << 13) - hdx);
    x = w16(x + rescale16(srdhm16(x, one_minus), 4, 2));
  }
  return rescale16(w16(x - (1 << 13)), 2, 0);
}

int16_t wick_q_logistic16(int16_t a, int32_t bits) {
  if (a == 0) return 1 << 14; /* one half */
  const int16_t abs_a = a > 0 ? a : w16(-a);
  const int16_t positive = one_over_one_plus16(exp_negative16(w16(-abs_a), bits));
  return a > 0 ? positive : w16(INT16_MAX - positive);
}

int16_t wick_q_tanh16(int16_t a, int32_t bits) {
  if (a == 0) return 0;
  const int16_t n = a < 0 ? a : w16(-a);
  /* ExactMulByPot<1>: the same raw value with one more integer bit. */
  const int16_t t = one_minus_over_one_plus16(exp_negative16(n, bits + 1));
  return a < 0 ? w16(-t) : t;
}

/* ---------------------------------------------------------------- the cell */

/* gate[b, r] = clamp16(gate[b, r] + mbqm(bias[r] + sum_c x[b, c] * w[r, c], m, s)) */
static void matmul_accumulate(const int8_t *x, const int32_t *bias, const int8_t *w, int32_t m,
                              int32_t s, int64_t n_batch, int64_t n_in, int64_t n_out,
                              int16_t *gate) {
  for (int64_t b = 0; b < n_batch; b++)
    for (int64_t r = 0; r < n_out; r++) {
      uint32_t acc = (uint32_t)bias[r];
      for (int64_t c = 0; c < n_in; c++)
        acc += (uint32_t)((int32_t)x[b * n_in + c] * (int32_t)w[r * n_in + c]);
      int32_t v = wick_q_multiply_by_quantized_multiplier((int32_t)acc, m, s);
      v = (int32_t)((uint32_t)v + (uint32_t)gate[b * n_out + r]);
      gate[b * n_out + r] = sat16(v);
    }
}

static void compute_gate(const wick_qlstm_params *p, const wick_qlstm_gate *g, const int8_t *x,
                         const int8_t *h, int64_t n_batch, bool tanh_gate, int16_t *gate) {
  const int64_t n = n_batch * p->n_cell;
  memset(gate, 0, (size_t)n * sizeof(int16_t));
  matmul_accumulate(x, g->input_bias, g->input_weights, g->input_multiplier, g->input_shift,
                    n_batch, p->n_input, p->n_cell, gate);
  matmul_accumulate(h, g->recurrent_bias, g->recurrent_weights, g->recurrent_multiplier,
                    g->recurrent_shift, n_batch, p->n_output, p->n_cell, gate);
  for (int64_t i = 0; i < n; i++)
    gate[i] = tanh_gate ? wick_q_tanh16(gate[i], 3) : wick_q_logistic16(gate[i], 3);
}

void wick_q_lstm_step__reference(const wick_qlstm_params *p, int64_t n_batch, const int8_t *x,
                                 int8_t *output_state, int16_t *cell_state, int8_t *output,
                                 int16_t *scratch) {
  const int64_t n = n_batch * p->n_cell;
  int16_t *ig = scratch, *fg = scratch + n, *cg = scratch + 2 * n, *og = scratch + 3 * n;
  if (!p->cifg) compute_gate(p, &p->gates[0], x, output_state, n_batch, false, ig);
  compute_gate(p, &p->gates[1], x, output_state, n_batch, false, fg);
  compute_gate(p, &p->gates[2], x, output_state, n_batch, true, cg);
  /* cell = f * cell >> 15 + i * c >> (30 + cell_scale), saturating */
  for (int64_t i = 0; i < n; i++) {
    const int16_t kept = (int16_t)wick_q_rounding_divide_by_pot((int32_t)fg[i] * cell_state[i], 15);
    const int16_t in_gate = p->cifg ? w16(INT16_MAX - fg[i]) : ig[i];
    const int16_t added =
        (int16_t)wick_q_rounding_divide_by_pot((int32_t)in_gate * cg[i], 30 + p->cell_scale);
    int16_t v = sat16((int32_t)kept + added);
    if (p->cell_clip > 0)
      v = v > p->cell_clip ? p->cell_clip : (v < -p->cell_clip ? (int16_t)-p->cell_clip : v);
    cell_state[i] = v;
  }
  compute_gate(p, &p->gates[3], x, output_state, n_batch, false, og);
  /* h = clamp8(mbqm(o * tanh(cell), m, s) + zp) */
  for (int64_t i = 0; i < n; i++) {
    const int16_t t = wick_q_tanh16(cell_state[i], 15 + p->cell_scale);
    int32_t v = wick_q_multiply_by_quantized_multiplier((int32_t)og[i] * t, p->hidden_multiplier,
                                                        p->hidden_shift);
    v += p->hidden_zero_point;
    output_state[i] = (int8_t)(v < INT8_MIN ? INT8_MIN : (v > INT8_MAX ? INT8_MAX : v));
  }
  memcpy(output, output_state, (size_t)(n_batch * p->n_output));
}

/* ---------------------------------------------------------------- float cell */

/* act: the schema's ActivationFunctionType (1 RELU, 2 RELU_N1_TO_1, 3 RELU6,
 * 4 TANH; anything else is the identity). */
static float apply_act(int32_t act, float x) {
  switch (act) {
    case 1: return x < 0.0f ? 0.0f : x;
    case 2: return x < -1.0f ? -1.0f : (x > 1.0f ? 1.0f : x);
    case 3: return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
    case 4: return tanhf(x);
    default: return x;
  }
}

static float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

static void f32_gate(const wick_f32_lstm_params *p, int g, const float *x, const float *h,
                     int64_t n_batch, float *gate) {
  for (int64_t b = 0; b < n_batch; b++)
    for (int64_t r = 0; r < p->n_cell; r++) {
      float acc = p->bias[g][r];
      const float *w = p->input_weights[g] + r * p->n_input, *xb = x + b * p->n_input;
      for (int64_t c = 0; c < p->n_input; c++) acc += w[c] * xb[c];
      const float *rw = p->recurrent_weights[g] + r * p->n_output, *hb = h + b * p->n_output;
      for (int64_t c = 0; c < p->n_output; c++) acc += rw[c] * hb[c];
      gate[b * p->n_cell + r] = g == 2 ? apply_act(p->activation, acc) : sigmoidf(acc);
    }
}

void wick_f32_lstm_step__reference(const wick_f32_lstm_params *p, int64_t n_batch, const float *x,
                                   float *output_state, float *cell_state, float *output,
                                   float *scratch) {
  const int64_t n = n_batch * p->n_cell;
  float *ig = scratch, *fg = scratch + n, *cg = scratch + 2 * n, *og = scratch + 3 * n;
  if (!p->cifg) f32_gate(p, 0, x, output_state, n_batch, ig);
  f32_gate(p, 1, x, output_state, n_batch, fg);
  f32_gate(p, 2, x, output_state, n_batch, cg);
  f32_gate(p, 3, x, output_state, n_batch, og);
  for (int64_t i = 0; i < n; i++) {
    float v = fg[i] * cell_state[i] + cg[i] * (p->cifg ? 1.0f - fg[i] : ig[i]);
    if (p->cell_clip > 0.0f)
      v = v > p->cell_clip ? p->cell_clip : (v < -p->cell_clip ? -p->cell_clip : v);
    cell_state[i] = v;
  }
  for (int64_t i = 0; i < n; i++) output_state[i] = og[i] * apply_act(p->activation, cell_state[i]);
  memcpy(output, output_state, (size_t)(n_batch * p->n_output) * sizeof(float));
}
