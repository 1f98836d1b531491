/*
 * unary.c — reference kernels for elementwise unary math and activations:
 * the wick_unary_op table (RELU ... SIGN), LEAKY_RELU, GELU, PRELU, and
 * LOGICAL_NOT.
 *
 * Semantics are LiteRT's reference kernels on IEEE-754 floats, element by
 * element, with no flush of denormals (LiteRT's default XNNPACK kernels flush
 * them and may differ in the last bits of transcendental functions; see
 * tests/python/ops/test_unary.py). The exact formula of each op, including
 * how it treats NaN and -0, is its KERNEL in unary_ops.inc (the record each
 * unary math op is derived from); reference.h states the common rules.
 * Every kernel reads in[i] before writing out[i], so in-place use is safe.
 *
 * Next: src/ops/elementwise_unary.c and src/ops/activations.c (types, shapes).
 */
#include <math.h>

#include "kernels/reference/reference.h"

/* Round to nearest, ties to even, without depending on the FP rounding mode.
 * |x| >= 2^23 (and inf/NaN) is already integral. x - floor(x) is exact here. */
static float round_half_even(float x) {
  if (!(fabsf(x) < 8388608.0f)) return x;
  float r = floorf(x);
  float d = x - r;
  if (d > 0.5f || (d == 0.5f && fmodf(r, 2.0f) != 0.0f)) r += 1.0f;
  return copysignf(r, x); /* -0.4 rounds to -0, as rint does */
}

/* LiteRT's reference logistic: saturates early instead of trusting exp() at
 * the ends of the range. */
static float logistic(float x) {
  const float cutoff_upper = 16.619047164916992188f;
  const float cutoff_lower = -9.0f;
  if (x > cutoff_upper) return 1.0f;
  if (x < cutoff_lower) return expf(x);
  return 1.0f / (1.0f + expf(-x));
}

static float hard_swish(float x) {
  float r = x + 3.0f;
  r = r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r);
  return x * r / 6.0f; /* (x * r) / 6, left to right as LiteRT */
}

static float sign_f32(float x) {
  if (x != x) return x;
  return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
}

/* One loop per op, so the switch is outside the element loop. */
#define F32_LOOP(EXPR)                \
  do {                                \
    for (int64_t i = 0; i < n; i++) { \
      float x = in[i];                \
      out[i] = (EXPR);                \
    }                                 \
  } while (0)

void wick_f32_unary__reference(wick_unary_op op, int64_t n, const float *in, float *out) {
  switch (op) {
#define WICK_UNARY_F32(NAME, name, KERNEL, ...) \
  case WICK_UNARY_##NAME:                       \
    F32_LOOP(KERNEL);                           \
    return;
#include "kernels/reference/unary_ops.inc"
#undef WICK_UNARY_F32
  }
  F32_LOOP(x); /* not reached: every op is handled above */
}

/* Integer ABS/NEG negate in the unsigned type, so MIN wraps to MIN instead of
 * overflowing (undefined in C). */
#define INT_UNARY(NAME, T, UT)                                        \
  void NAME(wick_unary_op op, int64_t n, const T *in, T *out) {       \
    for (int64_t i = 0; i < n; i++) {                                 \
      T x = in[i];                                                    \
      T neg = (T)(UT)(0u - (UT)x);                                    \
      switch (op) {                                                   \
        case WICK_UNARY_ABS: out[i] = x < 0 ? neg : x; break;         \
        case WICK_UNARY_NEG: out[i] = neg; break;                     \
        case WICK_UNARY_SIGN: out[i] = (T)((x > 0) - (x < 0)); break; \
        default: out[i] = x; break;                                   \
      }                                                               \
    }                                                                 \
  }

INT_UNARY(wick_i16_unary__reference, int16_t, uint16_t)
INT_UNARY(wick_i32_unary__reference, int32_t, uint32_t)
INT_UNARY(wick_i64_unary__reference, int64_t, uint64_t)

void wick_bool_not__reference(int64_t n, const bool *in, bool *out) {
  /* Read bytes, not bools: a file may store any non-zero byte as true. */
  const uint8_t *b = (const uint8_t *)in;
  for (int64_t i = 0; i < n; i++) out[i] = b[i] == 0;
}

void wick_f32_leaky_relu__reference(int64_t n, float alpha, const float *in, float *out) {
  for (int64_t i = 0; i < n; i++) {
    float x = in[i];
    out[i] = x > 0.0f ? x : x * alpha;
  }
}

void wick_f32_gelu__reference(int64_t n, bool approximate, const float *in, float *out) {
  /* sqrt(2/pi) and 1/sqrt(2) to double precision. */
  const double k_sqrt_2_over_pi = 0.79788456080286535588;
  const double k_sqrt_half = 0.70710678118654752440;
  for (int64_t i = 0; i < n; i++) {
    double x = in[i];
    double y;
    if (approximate)
      y = 0.5 * x * (1.0 + tanh(k_sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
    else
      y = 0.5 * x * erfc(-x * k_sqrt_half); /* = x/2 (1 + erf(x/sqrt2)), no cancellation */
    out[i] = (float)y;
  }
}

void wick_f32_prelu_channels(int64_t rows, int64_t channels, const float *restrict in,
                             const float *restrict alpha, float *restrict out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *x = in + r * channels;
    float *y = out + r * channels;
    for (int64_t c = 0; c < channels; c++) y[c] = wick_f32_prelu_select(x[c], alpha[c]);
  }
}

void wick_f32_prelu__reference(const wick_broadcast *bc, const float *in, const float *alpha,
                               float *out) {
  int32_t r = bc->rank;
  int64_t total = 1;
  for (int32_t d = 0; d < r; d++) total *= bc->dims[d];
  /* Walk the output in row-major order; `ia` follows alpha's strides. */
  int64_t idx[WICK_MAX_RANK] = {0};
  int64_t ia = 0;
  for (int64_t i = 0; i < total; i++) {
    float x = in[i]; /* the input has the output's shape */
    out[i] = x >= 0.0f ? x : x * alpha[ia];
    for (int32_t d = r - 1; d >= 0; d--) {
      ia += bc->b_strides[d];
      if (++idx[d] < bc->dims[d]) break;
      ia -= bc->b_strides[d] * bc->dims[d];
      idx[d] = 0;
    }
  }
}
