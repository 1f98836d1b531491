/*
 * unidirectional_sequence_lstm.c — UNIDIRECTIONAL_SEQUENCE_LSTM, float32 and
 * integer (LiteRT's 8x8_16 scheme: int8 input, weights and output state,
 * int16 cell state, int32 biases).
 *
 * Operands (LiteRT's "full" LSTM numbering): 0 input [batch, time, in] (or
 * [time, batch, in] with time_major, or [batch, in]); 1-4 input-to-gate
 * weights (i, f, c, o) [cell, in]; 5-8 recurrent weights [cell, out];
 * 9-11 peephole weights; 12-15 gate biases; 16-17 projection; 18 output
 * state and 19 cell state (variable tensors, updated in place); 20-23 layer
 * norm coefficients. The input gate's weights and bias are absent together
 * for CIFG. Five intermediate tensors carry the calibrated scales; without
 * layer norm only the fifth (the hidden state) is read.
 *
 * Prepare computes what LiteRT computes (float arithmetic where it uses
 * float): per gate the multipliers s_w * s_in / 2^-12 and s_r * s_h / 2^-12,
 * the biases with -zp * row sums folded in (weights must be constant), the
 * hidden multiplier 2^-15 / s_hidden * 2^-15, the cell scale (a power of two,
 * 2^-15 .. 2^-9) and the quantized cell clip, and starts the output state at
 * its zero point as LiteRT's variable-tensor reset does. The time loop is
 * here, the cell in src/kernels/reference/lstm.c.
 *
 * The float path takes float32 everywhere and the op's activation (NONE,
 * RELU, RELU_N1_TO_1, RELU6, TANH) for the cell gate and the output.
 *
 * Not implemented (refused with the reason): hybrid LSTMs (float input, int8
 * weights), int16 activations, peephole, projection, layer normalization,
 * per-channel weights.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

enum {
  IN = 0,
  W_I = 1,
  R_I = 5,
  PEEP = 9,
  BIAS_I = 12,
  PROJ_W = 16,
  PROJ_B = 17,
  OUT_STATE = 18,
  CELL_STATE = 19,
  LN = 20
};

typedef struct lstm_data {
  wick_qlstm_params q;
  wick_f32_lstm_params f;
  int64_t batch, time;
  bool time_major, is_float;
} lstm_data;

/* The float path: every operand float32, the activation one LiteRT applies. */
static wick_status float_prepare(wick_op_ctx *ctx, lstm_data *d, const wick_tensor *hs,
                                 const wick_tensor *cs) {
  wick_f32_lstm_params *f = &d->f;
  const wick_qlstm_params *q = &d->q;
  f->n_input = q->n_input;
  f->n_cell = q->n_cell;
  f->n_output = q->n_output;
  f->cifg = q->cifg;
  WICK_CHECK_SUPPORTED(ctx, hs->type == WICK_DTYPE_FLOAT32 && cs->type == WICK_DTYPE_FLOAT32,
                       "float LSTM states must be float32, not %s and %s",
                       wick_dtype_name(hs->type), wick_dtype_name(cs->type));
  for (int g = q->cifg ? 1 : 0; g < 4; g++) {
    const int idx[3] = {W_I + g, R_I + g, BIAS_I + g};
    const int64_t cols[3] = {q->n_input, q->n_output, 0};
    const float *ptr[3];
    for (int k = 0; k < 3; k++) {
      wick_tensor *t;
      WICK_TRY(wick_require_input(ctx, (size_t)idx[k], &t));
      WICK_CHECK_SUPPORTED(ctx, t->type == WICK_DTYPE_FLOAT32,
                           "input %d has type %s: hybrid LSTMs are not supported", idx[k],
                           wick_dtype_name(t->type));
      if (k < 2)
        WICK_CHECK(ctx, t->rank == 2 && t->dims[0] == q->n_cell && t->dims[1] == cols[k],
                   "weights (input %d) must be [%lld, %lld]", idx[k], (long long)q->n_cell,
                   (long long)cols[k]);
      else
        WICK_CHECK(ctx, wick_tensor_elements(t) == q->n_cell,
                   "gate bias (input %d) must have %lld values", idx[k], (long long)q->n_cell);
      ptr[k] = t->data;
    }
    f->input_weights[g] = ptr[0];
    f->recurrent_weights[g] = ptr[1];
    f->bias[g] = ptr[2];
  }
  const wick_activation act = ctx->params->lstm.activation;
  WICK_CHECK_SUPPORTED(ctx, act != WICK_ACT_SIGN_BIT, "activation SIGN_BIT is not supported");
  f->activation = (int32_t)act;
  f->cell_clip = ctx->params->lstm.cell_clip > 0.0f ? ctx->params->lstm.cell_clip : 0.0f;
  d->is_float = true;
  return WICK_OK;
}

static wick_status weights(wick_op_ctx *ctx, int idx, int64_t rows, int64_t cols, float *scale) {
  wick_tensor *t;
  WICK_TRY(wick_require_input(ctx, (size_t)idx, &t));
  WICK_CHECK_SUPPORTED(ctx, t->type == WICK_DTYPE_INT8, "weights (input %d) must be int8, not %s",
                       idx, wick_dtype_name(t->type));
  WICK_CHECK(ctx, t->rank == 2 && t->dims[0] == rows && t->dims[1] == cols,
             "weights (input %d) must be [%lld, %lld]", idx, (long long)rows, (long long)cols);
  WICK_CHECK_SUPPORTED(ctx, wick_input_known(ctx, (size_t)idx),
                       "weights (input %d) must be constant", idx);
  wick_qparams q;
  WICK_TRY(wick_quant_params(ctx, t, "the weights", false, &q));
  *scale = q.scale;
  return WICK_OK;
}

/* bias[r] + zp * sum_c w[r, c] (LiteRT's precomputed zero-point term). */
static int32_t *effective_bias(wick_op_ctx *ctx, const wick_tensor *w, const wick_tensor *bias,
                               int32_t zp) {
  const int64_t rows = w->dims[0], cols = w->dims[1];
  int32_t *out = wick_op_alloc(ctx, (size_t)(rows > 0 ? rows : 1) * sizeof(int32_t));
  if (out == NULL) return NULL;
  const int8_t *wd = w->data;
  for (int64_t r = 0; r < rows; r++) {
    uint32_t sum = 0;
    for (int64_t c = 0; c < cols; c++) sum += (uint32_t)(int32_t)wd[r * cols + c];
    uint32_t b = bias ? (uint32_t)((const int32_t *)bias->data)[r] : 0u;
    out[r] = (int32_t)(b + sum * (uint32_t)zp);
  }
  return out;
}

static wick_status lstm_prepare(wick_op_ctx *ctx) {
  const size_t n_in = wick_op_num_inputs(ctx);
  WICK_CHECK(ctx, n_in == 20 || n_in == 24, "expects 20 or 24 inputs, not %zu", n_in);
  WICK_TRY(wick_check_arity(ctx, 20, 24, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0), *hs, *cs;
  WICK_TRY(wick_require_input(ctx, IN, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_INT8 || in->type == WICK_DTYPE_FLOAT32,
                       "input type %s is not supported (float32 and int8)",
                       wick_dtype_name(in->type));
  for (int i = PEEP; i < PEEP + 3; i++)
    WICK_CHECK_SUPPORTED(ctx, wick_op_input(ctx, (size_t)i) == NULL,
                         "peephole connections are not supported");
  WICK_CHECK_SUPPORTED(ctx,
                       wick_op_input(ctx, PROJ_W) == NULL && wick_op_input(ctx, PROJ_B) == NULL,
                       "projection is not supported");
  for (size_t i = LN; i < n_in; i++)
    WICK_CHECK_SUPPORTED(ctx, wick_op_input(ctx, i) == NULL,
                         "layer normalization is not supported");
  WICK_CHECK(ctx, in->rank == 2 || in->rank == 3, "input must have rank 2 or 3, not %d", in->rank);

  lstm_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_qlstm_params *q = &d->q;
  const wick_lstm_params *p = &ctx->params->lstm;
  d->time_major = p->time_major;
  if (in->rank == 2) {
    d->time = 1;
    d->batch = in->dims[0];
  } else {
    d->time = p->time_major ? in->dims[0] : in->dims[1];
    d->batch = p->time_major ? in->dims[1] : in->dims[0];
  }
  q->n_input = in->dims[in->rank - 1];
  wick_tensor *w_o, *r_o;
  WICK_TRY(wick_require_input(ctx, W_I + 3, &w_o));
  WICK_TRY(wick_require_input(ctx, R_I + 3, &r_o));
  WICK_CHECK(ctx, w_o->rank == 2 && r_o->rank == 2, "weights must have rank 2");
  q->n_cell = w_o->dims[0];
  q->n_output = r_o->dims[1];
  WICK_CHECK_SUPPORTED(ctx, q->n_output == q->n_cell,
                       "output size %lld differs from the cell size %lld (projection)",
                       (long long)q->n_output, (long long)q->n_cell);
  q->cifg = wick_op_input(ctx, W_I) == NULL;
  WICK_CHECK(ctx,
             q->cifg == (wick_op_input(ctx, R_I) == NULL) &&
                 q->cifg == (wick_op_input(ctx, BIAS_I) == NULL),
             "the input gate's weights and bias must be all present or all absent (CIFG)");

  WICK_TRY(wick_require_input(ctx, OUT_STATE, &hs));
  WICK_TRY(wick_require_input(ctx, CELL_STATE, &cs));
  WICK_CHECK(ctx, hs->info->is_variable && cs->info->is_variable,
             "the output and cell states (inputs 18, 19) must be variable tensors");
  int64_t want;
  WICK_CHECK(ctx,
             wick_mul_i64(d->batch, q->n_output, &want) && wick_tensor_elements(hs) == want &&
                 wick_tensor_elements(cs) == want,
             "states must hold batch * cells = %lld values", (long long)want);
  const int64_t step_batch = d->time_major ? d->batch : 1;
  int32_t dims[WICK_MAX_RANK];
  memcpy(dims, in->dims, sizeof(int32_t) * (size_t)in->rank);
  dims[in->rank - 1] = (int32_t)q->n_output;
  wick_op_set_macs(ctx, (uint64_t)d->batch * (uint64_t)d->time * 4u * (uint64_t)q->n_cell *
                            ((uint64_t)q->n_input + (uint64_t)q->n_output));
  wick_op_set_data(ctx, d);
  size_t scratch;
  if (!wick_mul_size((size_t)step_batch, (size_t)q->n_cell, &scratch) ||
      !wick_mul_size(scratch, 4 * sizeof(float), &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  if (in->type == WICK_DTYPE_FLOAT32) {
    WICK_TRY(float_prepare(ctx, d, hs, cs));
    return wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, dims);
  }
  WICK_CHECK_SUPPORTED(ctx, hs->type == WICK_DTYPE_INT8 && cs->type == WICK_DTYPE_INT16,
                       "states must be int8 (output) and int16 (cell), not %s and %s",
                       wick_dtype_name(hs->type), wick_dtype_name(cs->type));
  WICK_CHECK_SUPPORTED(ctx, out->type == WICK_DTYPE_INT8, "output type %s is not supported",
                       wick_dtype_name(out->type));
  const wick_tensor *hidden = wick_op_intermediate(ctx, 4);
  WICK_CHECK(ctx, hidden != NULL && wick_op_intermediate(ctx, 5) == NULL,
             "the integer LSTM needs 5 intermediate tensors (the 5th, the hidden state, valid)");
  wick_qparams qi, qh, qc, qhid;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, hs, "the output state", false, &qh));
  WICK_TRY(wick_quant_params(ctx, cs, "the cell state", false, &qc));
  const wick_quant *hq = hidden->info ? &hidden->info->quant : NULL;
  WICK_CHECK(ctx, hq && hq->count > 0 && hq->scale[0] > 0.0f && hq->scale[0] < 3.4e38f,
             "intermediate 4 (the hidden state) needs a positive scale");
  WICK_CHECK(ctx, hq->zero_point[0] >= INT8_MIN && hq->zero_point[0] <= INT8_MAX,
             "the hidden state's zero point %lld is outside int8", (long long)hq->zero_point[0]);
  qhid.scale = hq->scale[0];
  qhid.zero_point = (int32_t)hq->zero_point[0];
  WICK_CHECK_SUPPORTED(ctx,
                       wick_quant_checked_log2(qc.scale, &q->cell_scale) && q->cell_scale >= -15 &&
                           q->cell_scale <= -9,
                       "the cell state's scale %g must be a power of two in [2^-15, 2^-9]",
                       (double)qc.scale);

  const float gate_scale = 1.0f / 4096.0f; /* Q3.12 gate inputs */
  for (int g = q->cifg ? 1 : 0; g < 4; g++) {
    float ws, rs;
    WICK_TRY(weights(ctx, W_I + g, q->n_cell, q->n_input, &ws));
    WICK_TRY(weights(ctx, R_I + g, q->n_cell, q->n_output, &rs));
    wick_tensor *bias;
    WICK_TRY(wick_require_input(ctx, (size_t)(BIAS_I + g), &bias));
    WICK_CHECK(ctx, bias->type == WICK_DTYPE_INT32 && wick_tensor_elements(bias) == q->n_cell,
               "gate bias (input %d) must be int32 with %lld values", BIAS_I + g,
               (long long)q->n_cell);
    WICK_CHECK_SUPPORTED(ctx, wick_input_known(ctx, (size_t)(BIAS_I + g)),
                         "gate bias (input %d) must be constant", BIAS_I + g);
    wick_qlstm_gate *gate = &q->gates[g];
    const float ex = ws * qi.scale / gate_scale, eh = rs * qh.scale / gate_scale;
    WICK_TRY(wick_quant_multiplier(ctx, (double)ex, 30, "a gate", &gate->input_multiplier,
                                   &gate->input_shift));
    WICK_TRY(wick_quant_multiplier(ctx, (double)eh, 30, "a gate", &gate->recurrent_multiplier,
                                   &gate->recurrent_shift));
    wick_tensor *w = wick_op_input(ctx, (size_t)(W_I + g)),
                *r = wick_op_input(ctx, (size_t)(R_I + g));
    gate->input_weights = w->data;
    gate->recurrent_weights = r->data;
    gate->input_bias = effective_bias(ctx, w, bias, -qi.zero_point);
    gate->recurrent_bias = effective_bias(ctx, r, NULL, -qh.zero_point);
    if (gate->input_bias == NULL || gate->recurrent_bias == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  }
  const float hidden_scale = (float)(1.0 / 32768.0 / (double)qhid.scale / 32768.0);
  WICK_TRY(wick_quant_multiplier(ctx, (double)hidden_scale, 30, "the hidden state",
                                 &q->hidden_multiplier, &q->hidden_shift));
  q->hidden_zero_point = qhid.zero_point;
  q->cell_clip = 0;
  if (p->cell_clip > 0.0f) {
    float c = p->cell_clip / qc.scale;
    c = c < -32768.0f ? -32768.0f : (c > 32767.0f ? 32767.0f : c);
    q->cell_clip = (int16_t)c;
  }

  /* LiteRT resets int8 variable tensors to their zero point (real 0), where
   * wick's allocator zeroes the bytes: start the output state at its zero
   * point. (Prepare runs again after a resize, which resets states anyway.) */
  if (hs->data != NULL && hs->bytes > 0) memset(hs->data, (int8_t)qh.zero_point, hs->bytes);
  return wick_op_set_output(ctx, 0, WICK_DTYPE_INT8, in->rank, dims);
}

/* The sequence runs as one task (each step needs the previous one), so the
 * cancel flag is checked before every step, as WHILE does per iteration: a
 * file may ask for millions of steps. */
static wick_status check_cancel(wick_op_ctx *ctx, int64_t step) {
  if (!wick_op_cancelled(ctx)) return WICK_OK;
  return wick_op_fail(ctx, WICK_ERR_CANCELLED, "invoke was cancelled at LSTM step %lld",
                      (long long)step);
}

static wick_status float_invoke(wick_op_ctx *ctx, const lstm_data *d) {
  const wick_f32_lstm_params *f = &d->f;
  const float *x = wick_op_input(ctx, IN)->data;
  float *h = wick_op_input(ctx, OUT_STATE)->data, *c = wick_op_input(ctx, CELL_STATE)->data;
  float *y = wick_op_output(ctx, 0)->data, *scratch = wick_op_scratch(ctx);
  if (d->time_major) {
    for (int64_t t = 0; t < d->time; t++) {
      WICK_TRY(check_cancel(ctx, t));
      wick_f32_lstm_step__reference(f, d->batch, x + t * d->batch * f->n_input, h, c,
                                    y + t * d->batch * f->n_output, scratch);
    }
  } else {
    for (int64_t b = 0; b < d->batch; b++)
      for (int64_t t = 0; t < d->time; t++) {
        WICK_TRY(check_cancel(ctx, b * d->time + t));
        wick_f32_lstm_step__reference(f, 1, x + (b * d->time + t) * f->n_input, h + b * f->n_output,
                                      c + b * f->n_cell, y + (b * d->time + t) * f->n_output,
                                      scratch);
      }
  }
  return WICK_OK;
}

static wick_status lstm_invoke(wick_op_ctx *ctx) {
  const lstm_data *d = wick_op_data(ctx);
  if (d->is_float) return float_invoke(ctx, d);
  const wick_qlstm_params *q = &d->q;
  const int8_t *x = wick_op_input(ctx, IN)->data;
  int8_t *h = wick_op_input(ctx, OUT_STATE)->data, *y = wick_op_output(ctx, 0)->data;
  int16_t *c = wick_op_input(ctx, CELL_STATE)->data;
  int16_t *scratch = wick_op_scratch(ctx);
  if (d->time_major) {
    for (int64_t t = 0; t < d->time; t++) {
      WICK_TRY(check_cancel(ctx, t));
      wick_q_lstm_step__reference(q, d->batch, x + t * d->batch * q->n_input, h, c,
                                  y + t * d->batch * q->n_output, scratch);
    }
  } else {
    for (int64_t b = 0; b < d->batch; b++)
      for (int64_t t = 0; t < d->time; t++) {
        WICK_TRY(check_cancel(ctx, b * d->time + t));
        wick_q_lstm_step__reference(q, 1, x + (b * d->time + t) * q->n_input, h + b * q->n_output,
                                    c + b * q->n_cell, y + (b * d->time + t) * q->n_output,
                                    scratch);
      }
  }
  return WICK_OK;
}

/* v2/v3: hybrid (refused by type at prepare); v4 diagonal recurrent weights
 * and v5 int16 activations are not implemented. */
const wick_op_def wick_op_unidirectional_sequence_lstm = {"UNIDIRECTIONAL_SEQUENCE_LSTM",
                                                          WICK_BUILTIN_UNIDIRECTIONAL_SEQUENCE_LSTM,
                                                          3,
                                                          lstm_prepare,
                                                          lstm_invoke,
                                                          WICK_OP_REFERENCE_KERNELS};
