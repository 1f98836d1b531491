/*
 * svdf.c — reference SVDF (singular value decomposition filter), float and
 * integer (LiteRT's int8 input / int16 state scheme).
 *
 * Per invoke, for each batch b and filter f (F filters, memory M, rank R,
 * U = F / R units):
 *   1. the state [B, F, M] shifts left by one element (the whole buffer, as
 *      LiteRT: the oldest value of each filter drops, the next filter's
 *      oldest slides into the previous filter's newest slot, which step 2
 *      overwrites);
 *   2. state[b, f, M-1] = feature(b, f) = sum_i wf[f, i] * x[b, i]
 *      (integer: (x - zp_in), requantized to the state by m1, clamped to int16);
 *   3. t(b, f) = sum_m wt[f, m] * state[b, f, m];
 *   4. out[b, u] = sum_{r<R} t(b, u*R + r) + bias[u]
 *      (float: then the fused activation; integer: requantized by m2 to the
 *      output, plus zp_out, clamped to int8; no fused activation, as LiteRT).
 * Sums run in index order; integer sums wrap in 32 bits.
 */
#include <string.h>

#include "kernels/reference/reference.h"

static inline float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

void wick_f32_svdf__reference(const wick_svdf_shape *s, const float *input, const float *wf,
                              const float *wt, const float *bias, float *state, float *scratch,
                              float *output, float lo, float hi) {
  const int64_t B = s->batch, F = s->filters, M = s->memory, I = s->input_size;
  const int64_t U = F / s->rank, total = B * F * M;
  if (total > 1) memmove(state, state + 1, (size_t)(total - 1) * sizeof(float));
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < F; f++) {
      float acc = 0.0f;
      for (int64_t i = 0; i < I; i++) acc += wf[f * I + i] * input[b * I + i];
      state[(b * F + f) * M + M - 1] = acc;
    }
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < F; f++) {
      float acc = 0.0f;
      for (int64_t m = 0; m < M; m++) acc += wt[f * M + m] * state[(b * F + f) * M + m];
      scratch[b * F + f] = acc;
    }
  for (int64_t b = 0; b < B; b++)
    for (int64_t u = 0; u < U; u++) {
      float acc = 0.0f;
      for (int64_t r = 0; r < s->rank; r++) acc += scratch[b * F + u * s->rank + r];
      if (bias) acc += bias[u];
      output[b * U + u] = clampf(acc, lo, hi);
    }
}

void wick_q_svdf__reference(const wick_svdf_shape *s, const wick_qsvdf_params *p,
                            const int8_t *input, const int8_t *wf, const int16_t *wt,
                            const int32_t *bias, int16_t *state, int32_t *scratch, int8_t *output) {
  const int64_t B = s->batch, F = s->filters, M = s->memory, I = s->input_size;
  const int64_t U = F / s->rank, total = B * F * M;
  if (total > 1) memmove(state, state + 1, (size_t)(total - 1) * sizeof(int16_t));
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < F; f++) {
      uint32_t acc = 0;
      for (int64_t i = 0; i < I; i++)
        acc +=
            (uint32_t)((int32_t)wf[f * I + i] * ((int32_t)input[b * I + i] - p->input_zero_point));
      int32_t v = wick_q_multiply_by_quantized_multiplier((int32_t)acc, p->multiplier1, p->shift1);
      v = v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v);
      state[(b * F + f) * M + M - 1] = (int16_t)v;
    }
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < F; f++) {
      uint32_t acc = 0;
      for (int64_t m = 0; m < M; m++)
        acc += (uint32_t)((int32_t)wt[f * M + m] * (int32_t)state[(b * F + f) * M + m]);
      scratch[b * F + f] = (int32_t)acc;
    }
  for (int64_t b = 0; b < B; b++)
    for (int64_t u = 0; u < U; u++) {
      uint32_t acc = 0;
      for (int64_t r = 0; r < s->rank; r++) acc += (uint32_t)scratch[b * F + u * s->rank + r];
      if (bias) acc += (uint32_t)bias[u];
      int32_t v = wick_q_multiply_by_quantized_multiplier((int32_t)acc, p->multiplier2, p->shift2);
      v = (int32_t)((uint32_t)v + (uint32_t)p->output_zero_point);
      v = v < INT8_MIN ? INT8_MIN : (v > INT8_MAX ? INT8_MAX : v);
      output[b * U + u] = (int8_t)v;
    }
}
