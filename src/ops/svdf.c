/*
 * svdf.c — SVDF, a fully connected layer factored into a feature filter and
 * a time filter over a memory of past activations (keyword spotting).
 *
 * Inputs: input [batch, input_size], weights_feature [filters, input_size],
 * weights_time [filters, memory], optional bias [filters / rank], state
 * [batch, filters * memory] (a variable tensor the op updates in place).
 * Output [batch, filters / rank]. Option rank > 0 divides filters.
 * Types as LiteRT: all float32 (the fused activation applies; TANH and
 * SIGN_BIT are refused), or the integer scheme int8 input, int8
 * weights_feature, int16 weights_time, int32 bias, int16 state, int8 output
 * (per-tensor parameters; the state symmetric), with multipliers
 * s_in * s_wf / s_state and s_state * s_wt / s_out computed in float as
 * LiteRT. LiteRT's integer kernel requires RELU and does not apply it (the
 * output's quantization carries the range): wick accepts NONE or RELU there
 * and applies neither. Hybrid (float input, int8 weights) and the int8-state
 * variant of TFLite Micro are refused with the types named.
 * Next: src/kernels/reference/svdf.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

typedef struct svdf_data {
  wick_svdf_shape shape;
  bool integer;
  wick_qsvdf_params q;
  float lo, hi;
} svdf_data;

static wick_status check_rank2(const wick_op_ctx *ctx, const wick_tensor *t, const char *what) {
  WICK_CHECK(ctx, t->rank == 2, "%s must have rank 2, not %d", what, t->rank);
  return WICK_OK;
}

static wick_status integer_params(wick_op_ctx *ctx, svdf_data *d, const wick_tensor *in,
                                  const wick_tensor *wf, const wick_tensor *wt,
                                  const wick_tensor *bias, const wick_tensor *state,
                                  const wick_tensor *out) {
  WICK_CHECK_SUPPORTED(
      ctx,
      wf->type == WICK_DTYPE_INT8 && wt->type == WICK_DTYPE_INT16 &&
          state->type == WICK_DTYPE_INT16 && out->type == WICK_DTYPE_INT8 &&
          (!bias || bias->type == WICK_DTYPE_INT32),
      "integer SVDF needs int8 weights_feature, int16 weights_time and state, int32 bias and "
      "an int8 output (got %s, %s, %s, %s, %s)",
      wick_dtype_name(wf->type), wick_dtype_name(wt->type), wick_dtype_name(state->type),
      bias ? wick_dtype_name(bias->type) : "no bias", wick_dtype_name(out->type));
  wick_qparams qi, qwf, qwt, qs, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, wf, "weights_feature", false, &qwf));
  WICK_TRY(wick_quant_params(ctx, wt, "weights_time", false, &qwt));
  WICK_TRY(wick_quant_params(ctx, state, "the state", false, &qs));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  WICK_CHECK_SUPPORTED(ctx, qs.zero_point == 0, "the state must have zero point 0");
  const float s1 = qi.scale * qwf.scale / qs.scale; /* float, as LiteRT */
  const float s2 = qs.scale * qwt.scale / qo.scale;
  WICK_TRY(
      wick_quant_multiplier(ctx, (double)s1, 30, "the state", &d->q.multiplier1, &d->q.shift1));
  WICK_TRY(
      wick_quant_multiplier(ctx, (double)s2, 30, "the output", &d->q.multiplier2, &d->q.shift2));
  d->q.input_zero_point = qi.zero_point;
  d->q.output_zero_point = qo.zero_point;
  d->integer = true;
  return WICK_OK;
}

static wick_status svdf_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 5, 5, 1));
  wick_tensor *in, *wf, *wt, *state, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &wf));
  WICK_TRY(wick_require_input(ctx, 2, &wt));
  WICK_TRY(wick_require_input(ctx, 4, &state));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  wick_tensor *bias = wick_op_input(ctx, 3);
  WICK_TRY(check_rank2(ctx, in, "the input"));
  WICK_TRY(check_rank2(ctx, wf, "weights_feature"));
  WICK_TRY(check_rank2(ctx, wt, "weights_time"));
  WICK_TRY(check_rank2(ctx, state, "the state"));
  WICK_CHECK(ctx, state->info != NULL && state->info->is_variable,
             "the state (input 4) must be a variable tensor");
  svdf_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_svdf_shape *s = &d->shape;
  s->batch = in->dims[0];
  s->input_size = in->dims[1];
  s->filters = wf->dims[0];
  s->memory = wt->dims[1];
  s->rank = ctx->params->count;
  WICK_CHECK(ctx, s->rank > 0 && s->filters % s->rank == 0,
             "rank %lld must be positive and divide the %lld filters", (long long)s->rank,
             (long long)s->filters);
  const int64_t units = s->filters / s->rank;
  WICK_CHECK(ctx, wf->dims[1] == s->input_size,
             "weights_feature has %d columns for an input of %lld features", wf->dims[1],
             (long long)s->input_size);
  WICK_CHECK(ctx, wt->dims[0] == s->filters, "weights_time has %d rows for %lld filters",
             wt->dims[0], (long long)s->filters);
  WICK_CHECK(ctx, s->memory > 0, "weights_time has an empty memory dimension");
  int64_t state_cols;
  WICK_CHECK(ctx,
             wick_mul_i64(s->memory, s->filters, &state_cols) && state->dims[0] == s->batch &&
                 state->dims[1] == state_cols,
             "the state is [%d, %d], expected [%lld, %lld * %lld]", state->dims[0], state->dims[1],
             (long long)s->batch, (long long)s->memory, (long long)s->filters);
  if (bias)
    WICK_CHECK(ctx, wick_tensor_elements(bias) == units, "bias has %lld elements for %lld units",
               (long long)wick_tensor_elements(bias), (long long)units);

  if (in->type == WICK_DTYPE_FLOAT32) {
    WICK_CHECK_SUPPORTED(ctx,
                         wf->type == WICK_DTYPE_FLOAT32 && wt->type == WICK_DTYPE_FLOAT32 &&
                             state->type == WICK_DTYPE_FLOAT32 &&
                             (!bias || bias->type == WICK_DTYPE_FLOAT32),
                         "float SVDF with %s weights_feature (hybrid) is not supported",
                         wick_dtype_name(wf->type));
    const wick_activation act = ctx->params->activation;
    WICK_CHECK_SUPPORTED(ctx, act != WICK_ACT_TANH && act != WICK_ACT_SIGN_BIT,
                         "fused activation %d is not supported on SVDF", (int)act);
    WICK_TRY(wick_activation_range_f32(ctx, act, &d->lo, &d->hi));
    d->integer = false;
  } else {
    WICK_CHECK_SUPPORTED(ctx, in->type == WICK_DTYPE_INT8, "input type %s is not supported",
                         wick_dtype_name(in->type));
    WICK_CHECK_SUPPORTED(ctx,
                         ctx->params->activation == WICK_ACT_NONE ||
                             ctx->params->activation == WICK_ACT_RELU,
                         "integer SVDF takes NONE or RELU (not applied, as LiteRT), not %d",
                         (int)ctx->params->activation);
    WICK_TRY(integer_params(ctx, d, in, wf, wt, bias, state, out));
  }
  size_t scratch;
  if (!wick_mul_size((size_t)s->batch, (size_t)s->filters, &scratch) ||
      !wick_mul_size(scratch, 4, &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  WICK_CHECK(ctx, units <= INT32_MAX, "too many units");
  int32_t dims[2] = {in->dims[0], (int32_t)units};
  wick_op_set_macs(ctx, (uint64_t)s->batch * (uint64_t)s->filters *
                            ((uint64_t)s->input_size + (uint64_t)s->memory));
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, d->integer ? WICK_DTYPE_INT8 : WICK_DTYPE_FLOAT32, 2, dims);
}

static wick_status svdf_invoke(wick_op_ctx *ctx) {
  const svdf_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *wf = wick_op_input(ctx, 1), *wt = wick_op_input(ctx, 2),
              *bias = wick_op_input(ctx, 3), *state = wick_op_input(ctx, 4),
              *out = wick_op_output(ctx, 0);
  const void *b = bias ? bias->data : NULL;
  if (d->integer)
    wick_q_svdf__reference(&d->shape, &d->q, in->data, wf->data, wt->data, b, state->data,
                           wick_op_scratch(ctx), out->data);
  else
    wick_f32_svdf__reference(&d->shape, in->data, wf->data, wt->data, b, state->data,
                             wick_op_scratch(ctx), out->data, d->lo, d->hi);
  return WICK_OK;
}

/* v2 hybrid int8 weights and v4 hybrid asymmetric inputs (both refused at
 * prepare by type), v3 the integer scheme. */
const wick_op_def wick_op_svdf = {"SVDF",       WICK_BUILTIN_SVDF, 4,
                                  svdf_prepare, svdf_invoke,       WICK_OP_REFERENCE_KERNELS};
