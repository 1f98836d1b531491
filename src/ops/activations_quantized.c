/*
 * activations_quantized.c — quantized SOFTMAX, LOGISTIC, TANH, HARD_SWISH,
 * the RELU family (RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1), LEAKY_RELU, GELU
 * and PRELU.
 *
 * Reached from softmax.c, elementwise_unary.c and activations.c when the input is a
 * quantized activation. Output shape = input shape. As LiteRT's reference
 * kernels:
 *   SOFTMAX     int8 -> int8 (output 1/256, -128) or int16; uint8 -> uint8 or
 *               int16: gemmlowp fixed-point exp and reciprocal, with the input
 *               scale and beta folded into a multiplier > 1 and a cut-off
 *               diff_min below which exp() counts as 0. Where that multiplier
 *               would be <= 1 (a tiny input scale; LiteRT's reference kernel
 *               aborts): LiteRT's default kernel, a float table of exp over
 *               the 256 input steps and a float normalisation.
 *   LOGISTIC,   int8/uint8: a 256-entry table of the float function
 *   TANH        evaluated at every input value (LOGISTIC's output scale must
 *               be 1/256).
 *   HARD_SWISH  int8/uint8: LiteRT's 16-bit fixed-point formulation; outside
 *               forced reference kernels it runs as the table of its 256
 *               answers (so do 8-bit LEAKY_RELU and the RELU family):
 *               bit-exact by construction.
 *   RELU...     requantize by s_in / s_out (computed in float), clamp to the
 *               quantized bounds. RELU and RELU6 also take int16; 8-bit ones
 *               run as the table of their 256 answers (not when forced).
 *   LEAKY_RELU  two multipliers, s_in / s_out and s_in * alpha / s_out (float),
 *               the sign of a negative alpha kept apart.
 *   GELU        int8/uint8: a 256-entry table (exact or tanh approximation).
 *   RSQRT       int16: LiteRT's interpolated 513-entry table of 1/sqrt (in
 *               float); int8: a 256-entry table built with LiteRT's fixed-point inverse
 *               square root and multiplier 1 / (sqrt(s_in) s_out) (float
 *               product, double reciprocal), read by the 8-bit table kernel
 *               after one pass for the smallest input; inputs below the zero
 *               point (negative reals) fail at invoke, as LiteRT.
 *   PRELU       int8/uint8 with a quantized alpha broadcast into the input:
 *               s_in / s_out for x >= 0, s_in * s_alpha / s_out otherwise.
 *   int16 SOFTMAX: LiteRT's interpolated 513-entry tables (exp over [-10, 0],
 *               1/(1+x)) built in double at prepare.
 *   swish       an 8-bit LOGISTIC whose output only MUL(x, LOGISTIC(x)) reads (fuse.c): one
 *               table of the MUL's reference answers for x's 256 values, written to the MUL's
 *               output (bit-exact by construction; wick_q8_swish_invoke).
 *   int16 LOGISTIC, TANH: the input rescaled to steps of 1/12288 and a
 *               256-node sigmoid table interpolated linearly (output scale
 *               2^-15, zero points 0), as LiteRT's reference kernels.
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct qact_data {
  int32_t builtin;
  wick_qsoftmax_params softmax;
  float *softmax_table;          /* SOFTMAX in its float-table form, else NULL */
  int32_t *softmax_exps;         /* 8-bit fixed-point SOFTMAX: the reference's exps[256], sums[256]
                                  * (wick_q_softmax_tables) for softmax_fn, or NULL */
  wick_q8_softmax_fn softmax_fn; /* the int8 table's kernel, else wick_q8_softmax_rows */
  float softmax_out_scale;
  int16_t *exp_lut, *recip_lut; /* int16 SOFTMAX */
  int16_t *rsqrt_lut;           /* int16 RSQRT */
  uint8_t lut[256];
  uint8_t swish_lut[256]; /* a fused 8-bit swish (wick_q8_swish_invoke), once swish_ready */
  bool swish_ready;
  bool tabulated; /* 8-bit HARD_SWISH / LEAKY_RELU: `lut` holds the reference's 256 answers */
  uint16_t sigmoid16[256]; /* int16 LOGISTIC / TANH */
  int32_t sigmoid16_mult, sigmoid16_shift;
  int32_t sigmoid32[256];         /* ... the table widened for the kernel */
  wick_q16_sigmoid_fn sigmoid_fn; /* the kernel, or NULL: the reference */
  wick_qhard_swish_params hard_swish;
  int32_t in_zp, out_zp, multiplier, shift, lo, hi; /* RELU family */
  wick_qleaky_params leaky;
} qact_data;

/* A multiplier of either sign: LiteRT quantizes |m| and keeps the sign. */
static wick_status signed_multiplier(wick_op_ctx *ctx, float m, int32_t *mult, int32_t *shift,
                                     bool *negative) {
  *negative = m < 0.0f;
  return wick_quant_multiplier(ctx, (double)(m < 0.0f ? -m : m), 30, "the output", mult, shift);
}

static wick_status softmax_prepare(wick_op_ctx *ctx, qact_data *d, const wick_tensor *in,
                                   const wick_tensor *out, wick_qparams qi, wick_qparams qo) {
  const wick_dtype it = in->type, ot = out->type;
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  if (it == WICK_DTYPE_INT16) {
    WICK_CHECK_SUPPORTED(ctx, ot == WICK_DTYPE_INT16, "int16 input with %s output is not supported",
                         wick_dtype_name(ot));
    WICK_CHECK_SUPPORTED(ctx, qi.zero_point == 0 && qo.zero_point == 0,
                         "int16 operands must have zero points 0");
    WICK_CHECK(ctx, fabsf(qo.scale - 1.0f / 32768) <= 0.001f * 1.0f / 32768,
               "int16 output scale must be 1/32768, not %g", (double)qo.scale);
    d->exp_lut = wick_op_alloc(ctx, 513 * sizeof(int16_t));
    d->recip_lut = wick_op_alloc(ctx, 513 * sizeof(int16_t));
    if (d->exp_lut == NULL || d->recip_lut == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    /* exp over [-10, 0] and 1/(1+x) over [0, 1], as LiteRT's tables */
    wick_q_lut16_populate(WICK_Q_LUT16_EXP, 10.0 / 65535, INT16_MAX, 2.0 / 65535, 0, d->exp_lut);
    wick_q_lut16_populate(WICK_Q_LUT16_ONE_OVER_ONE_PLUS_X, 1.0 / 65535, INT16_MIN, 2.0 / 65535, 0,
                          d->recip_lut);
    const double rescale = (double)(qi.scale * ctx->params->beta) / (10.0 / 65535.0);
    return wick_quant_multiplier(ctx, rescale, 30, "the input", &d->softmax.input_multiplier,
                                 &d->softmax.input_left_shift);
  }
  WICK_CHECK_SUPPORTED(ctx, ot == it || ot == WICK_DTYPE_INT16,
                       "%s input with %s output is not supported", wick_dtype_name(it),
                       wick_dtype_name(ot));
  if (it == WICK_DTYPE_INT8 && ot == WICK_DTYPE_INT8) {
    WICK_CHECK(ctx, qo.zero_point == -128, "int8 output zero point must be -128, not %d",
               (int)qo.zero_point);
    WICK_CHECK(ctx, fabsf(qo.scale - 1.0f / 256) <= 0.001f * 1.0f / 256,
               "int8 output scale must be 1/256, not %g", (double)qo.scale);
  }
  /* LiteRT's PreprocessSoftmaxScaling with 5 integer bits. */
  double real = (double)ctx->params->beta * (double)qi.scale * (double)(1 << 26);
  if (real > 2147483647.0) real = 2147483647.0;
  if (!(real > 1.0)) {
    /* Too small a multiplier for the fixed-point form (LiteRT's reference kernel
     * aborts here; its default kernel, always a float exp table, runs): the table form. */
    WICK_CHECK(ctx, isfinite(qi.scale) && isfinite(ctx->params->beta) && qo.scale > 0.0f,
               "beta %g, input scale %g and output scale %g do not define a softmax",
               (double)ctx->params->beta, (double)qi.scale, (double)qo.scale);
    d->softmax_table = wick_op_alloc(ctx, 256 * sizeof(float));
    if (d->softmax_table == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    wick_q_softmax_table_populate(qi.scale, ctx->params->beta, d->softmax_table);
    d->softmax_out_scale = qo.scale;
    d->out_zp = qo.zero_point;
    return WICK_OK;
  }
  wick_quantize_multiplier(real, &d->softmax.input_multiplier, &d->softmax.input_left_shift);
  double radius =
      31.0 * (double)((int64_t)1 << 26) / (double)((int64_t)1 << d->softmax.input_left_shift);
  d->softmax.diff_min = -(int32_t)floor(radius);
  if (!wick_op_force_reference(ctx)) { /* the reference's 256 exps, for the table kernel */
    if ((d->softmax_exps = wick_op_alloc(ctx, 512 * sizeof(int32_t))) == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    wick_q_softmax_tables(&d->softmax, d->softmax_exps, d->softmax_exps + 256);
    const wick_q8_kernels *kern = wick_q8_kernels_select(false);
    d->softmax_fn = kern != NULL && kern->softmax8 != NULL ? kern->softmax8 : wick_q8_softmax_rows;
  }
  return WICK_OK;
}

static wick_status hard_swish_prepare(wick_op_ctx *ctx, qact_data *d, wick_dtype t, wick_qparams qi,
                                      wick_qparams qo) {
  WICK_CHECK_SUPPORTED(ctx, t != WICK_DTYPE_INT16, "int16 HARD_SWISH is not supported");
  wick_qhard_swish_params *p = &d->hard_swish;
  p->input_zero_point = qi.zero_point;
  p->output_zero_point = qo.zero_point;
  const float hires_input_scale = (1.0f / 128.0f) * qi.scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const float output_multiplier = hires_input_scale / qo.scale;
  const float reluish_multiplier = hires_input_scale / reluish_scale;
  int32_t m;
  WICK_TRY(wick_quant_multiplier(ctx, (double)output_multiplier, 0, "the output", &m,
                                 &p->output_multiplier_exponent));
  p->output_multiplier_fixedpoint_int16 =
      m >= INT32_MAX - (1 << 15) ? INT16_MAX : (int16_t)((m + (1 << 15)) >> 16);
  WICK_TRY(wick_quant_multiplier(ctx, (double)reluish_multiplier, 30, "the input", &m,
                                 &p->reluish_multiplier_exponent));
  p->reluish_multiplier_fixedpoint_int16 =
      m >= INT32_MAX - (1 << 15) ? INT16_MAX : (int16_t)((m + (1 << 15)) >> 16);
  return WICK_OK;
}

static wick_status relu_prepare(wick_op_ctx *ctx, qact_data *d, wick_dtype t, wick_qparams qi,
                                wick_qparams qo, float act_min, float act_max, bool has_max) {
  const float real = qi.scale / qo.scale; /* float division, as LiteRT */
  WICK_TRY(wick_quant_multiplier(ctx, (double)real, 30, "the output", &d->multiplier, &d->shift));
  int32_t tmin, tmax;
  wick_quant_type_range(t, &tmin, &tmax);
  float lo = roundf(act_min / qo.scale), hi = roundf(act_max / qo.scale);
  WICK_CHECK(ctx, fabsf(lo) < 2e9f && (!has_max || fabsf(hi) < 2e9f),
             "activation bounds do not fit the output scale %g", (double)qo.scale);
  int64_t l = (int64_t)qo.zero_point + (int64_t)lo;
  d->lo = l > tmin ? (int32_t)l : tmin;
  d->hi = tmax;
  if (has_max) {
    int64_t h = (int64_t)qo.zero_point + (int64_t)hi;
    d->hi = h < tmax ? (int32_t)h : tmax;
  }
  d->in_zp = qi.zero_point;
  d->out_zp = qo.zero_point;
  return WICK_OK;
}

wick_status wick_activation_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  const int32_t builtin = wick_op_builtin(ctx);
  const wick_dtype t = in->type;
  if (builtin != WICK_BUILTIN_SOFTMAX)
    WICK_CHECK(ctx, out->type == t, "output type %s differs from the input's %s",
               wick_dtype_name(out->type), wick_dtype_name(t));
  qact_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->builtin = builtin;
  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  const bool int16 = t == WICK_DTYPE_INT16;
  if (int16 && builtin != WICK_BUILTIN_SOFTMAX)
    WICK_CHECK_SUPPORTED(ctx, qi.zero_point == 0 && qo.zero_point == 0,
                         "int16 operands must have zero points 0");
  switch (builtin) {
    case WICK_BUILTIN_SOFTMAX: WICK_TRY(softmax_prepare(ctx, d, in, out, qi, qo)); break;
    case WICK_BUILTIN_LOGISTIC:
    case WICK_BUILTIN_TANH: {
      const bool logistic = builtin == WICK_BUILTIN_LOGISTIC;
      if (int16) {
        /* LOGISTIC: exactly 2^-15; TANH: within LiteRT's CheckedLog2 tolerance of it */
        int32_t out_log2 = 0;
        WICK_CHECK(ctx,
                   logistic ? qo.scale == 1.0f / 32768
                            : wick_q_checked_log2((double)qo.scale, &out_log2) && out_log2 == -15,
                   "int16 %s needs output scale 1/32768, not %g", logistic ? "LOGISTIC" : "TANH",
                   (double)qo.scale);
        WICK_CHECK_SUPPORTED(ctx,
                             wick_q16_sigmoid_rescale((double)qi.scale, !logistic,
                                                      &d->sigmoid16_mult, &d->sigmoid16_shift),
                             "int16 %s input scale %g is out of range (its fixed-point "
                             "rescale overflows)",
                             logistic ? "LOGISTIC" : "TANH", (double)qi.scale);
        wick_q16_sigmoid_table(d->sigmoid16);
        const wick_q8_kernels *kern = wick_q8_kernels_select(wick_op_force_reference(ctx));
        if (kern != NULL && kern->sigmoid16 != NULL) {
          for (int i = 0; i < 256; i++) d->sigmoid32[i] = d->sigmoid16[i];
          d->sigmoid_fn = kern->sigmoid16;
        }
        break;
      }
      if (logistic)
        WICK_CHECK(ctx, qo.scale == 1.0f / 256, "output scale must be 1/256, not %g",
                   (double)qo.scale);
      wick_q_lut8_populate(t, logistic ? WICK_Q_LUT_LOGISTIC : WICK_Q_LUT_TANH, qi.scale,
                           qi.zero_point, qo.scale, qo.zero_point, d->lut);
      break;
    }
    case WICK_BUILTIN_HARD_SWISH: WICK_TRY(hard_swish_prepare(ctx, d, t, qi, qo)); break;
    case WICK_BUILTIN_LEAKY_RELU: {
      wick_qleaky_params *l = &d->leaky;
      bool neg;
      /* float arithmetic, as LiteRT */
      WICK_TRY(signed_multiplier(ctx, qi.scale * ctx->params->alpha / qo.scale,
                                 &l->alpha_multiplier, &l->alpha_shift, &l->alpha_negative));
      WICK_TRY(signed_multiplier(ctx, qi.scale / qo.scale, &l->identity_multiplier,
                                 &l->identity_shift, &neg));
      l->input_zero_point = qi.zero_point;
      l->output_zero_point = qo.zero_point;
      break;
    }
    case WICK_BUILTIN_GELU:
      WICK_CHECK_SUPPORTED(ctx, !int16, "int16 GELU is not implemented yet");
      wick_q_lut8_populate(t, ctx->params->approximate ? WICK_Q_LUT_GELU_APPROX : WICK_Q_LUT_GELU,
                           qi.scale, qi.zero_point, qo.scale, qo.zero_point, d->lut);
      break;
    case WICK_BUILTIN_RSQRT: {
      WICK_CHECK_SUPPORTED(ctx, t == WICK_DTYPE_INT8 || int16,
                           "quantized RSQRT takes int8 or int16, not %s", wick_dtype_name(t));
      d->in_zp = qi.zero_point;
      if (int16) {
        d->rsqrt_lut = wick_op_alloc(ctx, 513 * sizeof(int16_t));
        if (d->rsqrt_lut == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
        wick_q_rsqrt_lut16_populate(qi.scale, qi.zero_point, qo.scale, qo.zero_point, d->rsqrt_lut);
        break;
      }
      const float denominator = sqrtf(qi.scale) * qo.scale;
      int32_t mult, shift;
      WICK_TRY(
          wick_quant_multiplier(ctx, 1.0 / (double)denominator, 30, "the output", &mult, &shift));
      d->in_zp = qi.zero_point;
      wick_q_rsqrt_lut8_populate(qi.zero_point, mult, shift, qo.zero_point, d->lut);
      break;
    }
    case WICK_BUILTIN_RELU: WICK_TRY(relu_prepare(ctx, d, t, qi, qo, 0.0f, 0.0f, false)); break;
    case WICK_BUILTIN_RELU6: WICK_TRY(relu_prepare(ctx, d, t, qi, qo, 0.0f, 6.0f, true)); break;
    case WICK_BUILTIN_RELU_N1_TO_1:
    case WICK_BUILTIN_RELU_0_TO_1:
      WICK_CHECK_SUPPORTED(ctx, !int16, "int16 input is not supported");
      WICK_TRY(relu_prepare(ctx, d, t, qi, qo, builtin == WICK_BUILTIN_RELU_0_TO_1 ? 0.0f : -1.0f,
                            1.0f, true));
      break;
    default:
      return wick_op_fail(ctx, WICK_ERR_UNSUPPORTED_OP, "input type quantized %s is not supported",
                          wick_dtype_name(t));
  }
  wick_op_set_data(ctx, d);
  /* An 8-bit input has 256 values: HARD_SWISH, LEAKY_RELU and the RELU family (8-bit in and
   * out) become a table of the reference kernel's own answers (bit-exact by construction),
   * read by the table kernels. The forced reference keeps the arithmetic, the specification. */
  const bool relu_family = builtin == WICK_BUILTIN_RELU || builtin == WICK_BUILTIN_RELU6 ||
                           builtin == WICK_BUILTIN_RELU_N1_TO_1 ||
                           builtin == WICK_BUILTIN_RELU_0_TO_1;
  if (!int16 && !wick_op_force_reference(ctx) &&
      (builtin == WICK_BUILTIN_HARD_SWISH || builtin == WICK_BUILTIN_LEAKY_RELU ||
       (relu_family && out->type == t))) {
    uint8_t every[256];
    for (int i = 0; i < 256; i++) every[i] = (uint8_t)i;
    if (builtin == WICK_BUILTIN_HARD_SWISH)
      wick_q_hard_swish__reference(t, 256, &d->hard_swish, every, d->lut);
    else if (builtin == WICK_BUILTIN_LEAKY_RELU)
      wick_q_leaky_relu__reference(t, 256, &d->leaky, every, d->lut);
    else
      wick_q_requantize__reference(t, t, 256, d->in_zp, d->out_zp, d->multiplier, d->shift, d->lo,
                                   d->hi, every, d->lut);
    d->tabulated = true;
  }
  const bool lut8 =
      !int16 && (builtin == WICK_BUILTIN_LOGISTIC || builtin == WICK_BUILTIN_TANH ||
                 builtin == WICK_BUILTIN_GELU || builtin == WICK_BUILTIN_RSQRT || d->tabulated);
  if (lut8 && wick_q8_lut8_select(wick_op_force_reference(ctx)) != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q8 table");
  else if (d->sigmoid_fn != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q16 table interpolation");
  else if (d->softmax_exps != NULL)
    wick_op_set_kernel(ctx,
                       d->softmax_fn == wick_q8_softmax_rows ? WICK_KERNEL_GENERIC
                                                             : WICK_KERNEL_OPTIMIZED,
                       "exp table rows");
  else if (d->tabulated)
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "table");
  else /* scalar: a table per element, or the fixed-point arithmetic */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(t));
  return wick_op_set_output(ctx, 0, out->type, in->rank, in->dims);
}

/* out[i] = lut[in[i]] over n bytes, on the vector table kernel when the CPU has one. */
static void run_table(const wick_op_ctx *ctx, const qact_data *d, int64_t n, const void *in,
                      void *out) {
  const wick_q8_lut8_fn lut = wick_q8_lut8_select(wick_op_force_reference(ctx));
  if (lut)
    lut((size_t)n, d->lut, in, out);
  else
    wick_q_lut8__reference(n, d->lut, in, out);
}

/* The smallest of n int8 values (127 when n is 0): biased to bytes so that the loop is an
 * unsigned minimum the compiler vectorizes (PMINUB, SSE2). */
static int32_t int8_min(int64_t n, const int8_t *in) {
  const uint8_t *u = (const uint8_t *)in;
  uint8_t lo = 255;
  for (int64_t i = 0; i < n; i++) {
    const uint8_t v = (uint8_t)(u[i] ^ 0x80u);
    lo = v < lo ? v : lo;
  }
  return (int32_t)lo - 128;
}

/* Rows [begin, end) of an 8-bit SOFTMAX on the table kernel. */
typedef struct softmax_job {
  const qact_data *d;
  wick_dtype in_type, out_type;
  size_t cols;
  const void *in;
  void *out;
} softmax_job;

static void softmax_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const softmax_job *j = arg;
  const size_t osize = j->out_type == WICK_DTYPE_INT16 ? 2 : 1;
  j->d->softmax_fn(j->d->softmax_exps, j->d->softmax_exps + 256, &j->d->softmax, j->in_type,
                   j->out_type, end - begin, j->cols, (const uint8_t *)j->in + begin * j->cols,
                   (uint8_t *)j->out + begin * j->cols * osize);
}

/* Elements [e0, e1) of an int16 LOGISTIC / TANH on the kernel. */
typedef struct sigmoid_job {
  const qact_data *d;
  bool tanh;
  const int16_t *in;
  int16_t *out;
} sigmoid_job;

static void sigmoid_elements(void *arg, size_t e0, size_t e1) {
  const sigmoid_job *j = arg;
  const qact_data *d = j->d;
  d->sigmoid_fn(e1 - e0, d->sigmoid32, d->sigmoid16_mult, d->sigmoid16_shift, j->tanh, j->in + e0,
                j->out + e0);
}

wick_status wick_activation_invoke_quantized(wick_op_ctx *ctx) {
  const qact_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  const int64_t n = wick_tensor_elements(in);
  switch (d->builtin) {
    case WICK_BUILTIN_SOFTMAX: {
      const int64_t cols = in->dims[in->rank - 1];
      const int64_t rows = cols ? n / cols : 0;
      if (in->type == WICK_DTYPE_INT16)
        wick_q_softmax_i16__reference(rows, cols, d->softmax.input_multiplier,
                                      d->softmax.input_left_shift, d->exp_lut, d->recip_lut,
                                      in->data, out->data);
      else if (d->softmax_exps != NULL) {
        softmax_job j = {d, in->type, out->type, (size_t)cols, in->data, out->data};
        return wick_parallel_range(ctx, (size_t)rows, (uint64_t)cols * 8, softmax_rows, &j);
      } else if (d->softmax_table != NULL)
        wick_q_softmax_table__reference(in->type, out->type, rows, cols, d->softmax_table,
                                        d->softmax_out_scale, d->out_zp, in->data, out->data);
      else
        wick_q_softmax__reference(in->type, out->type, rows, cols, &d->softmax, in->data,
                                  out->data);
      break;
    }
    case WICK_BUILTIN_RSQRT: {
      const bool wide = in->type == WICK_DTYPE_INT16;
      if (!wide && int8_min(n, in->data) >= d->in_zp) { /* the usual case: one vector pass */
        run_table(ctx, d, n, in->data, out->data);
        break;
      }
      for (int64_t i = 0; i < n; i++) {
        const int32_t v = wide ? ((const int16_t *)in->data)[i] : ((const int8_t *)in->data)[i];
        if (v < d->in_zp)
          return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                              "RSQRT is only defined for positive values (element %lld is %d, "
                              "below the zero point %d)",
                              (long long)i, (int)v, (int)d->in_zp);
      }
      wick_q_lut16__reference(n, d->rsqrt_lut, in->data, out->data);
      break;
    }
    case WICK_BUILTIN_LOGISTIC:
    case WICK_BUILTIN_TANH:
    case WICK_BUILTIN_GELU: {
      if (in->type == WICK_DTYPE_INT16 && d->sigmoid_fn != NULL) {
        sigmoid_job j = {d, d->builtin == WICK_BUILTIN_TANH, in->data, out->data};
        return wick_parallel_elements(ctx, (size_t)n, sigmoid_elements, &j);
      }
      if (in->type == WICK_DTYPE_INT16) { /* LOGISTIC, TANH */
        (d->builtin == WICK_BUILTIN_LOGISTIC
             ? wick_q16_logistic__reference
             : wick_q16_tanh__reference)(n, d->sigmoid16, d->sigmoid16_mult, d->sigmoid16_shift,
                                         in->data, out->data);
        break;
      }
      run_table(ctx, d, n, in->data, out->data);
      break;
    }
    case WICK_BUILTIN_LEAKY_RELU:
      if (d->tabulated)
        run_table(ctx, d, n, in->data, out->data);
      else
        wick_q_leaky_relu__reference(in->type, n, &d->leaky, in->data, out->data);
      break;
    case WICK_BUILTIN_HARD_SWISH:
      if (d->tabulated)
        run_table(ctx, d, n, in->data, out->data);
      else
        wick_q_hard_swish__reference(in->type, n, &d->hard_swish, in->data, out->data);
      break;
    default:
      if (d->tabulated) { /* the RELU family, 8-bit */
        run_table(ctx, d, n, in->data, out->data);
        break;
      }
      wick_q_requantize__reference(in->type, out->type, n, d->in_zp, d->out_zp, d->multiplier,
                                   d->shift, d->lo, d->hi, in->data, out->data);
      break;
  }
  return WICK_OK;
}

/* ---------------------------------------------------------------- 8-bit swish */

/* Elements [e0, e1) of a table lookup. */
typedef struct table_job {
  wick_q8_lut8_fn fn;
  const uint8_t *lut, *in;
  uint8_t *out;
} table_job;

static void table_elements(void *arg, size_t e0, size_t e1) {
  const table_job *j = arg;
  j->fn(e1 - e0, j->lut, j->in + e0, j->out + e0);
}

/* The MUL's answers for x's 256 values against their sigmoid (this node's own table), as the
 * MUL computes them (wick_q_mul__reference over the 256 pairs). Built on the first invoke after
 * prepare: fuse.c pairs the nodes after both prepared, and the MUL's prepare accepted the same
 * parameters. */
static wick_status swish_table(const wick_op_ctx *ctx, qact_data *d) {
  const wick_node_fusion *fu = wick_op_fusion(ctx);
  const wick_tensor *x = wick_op_input(ctx, 0), *o = wick_op_output(ctx, 0);
  const wick_tensor *s = wick_op_graph_tensor(ctx, fu->q8_swish_sigmoid);
  WICK_CHECK(ctx, s != NULL, "internal: the fused swish has no sigmoid tensor");
  wick_qparams qx, qs, qo;
  WICK_TRY(wick_quant_params(ctx, x, "the input", false, &qx));
  WICK_TRY(wick_quant_params(ctx, s, "the sigmoid", false, &qs));
  WICK_TRY(wick_quant_params(ctx, o, "the output", false, &qo));
  const bool sigmoid_first = fu->q8_swish_sigmoid_first;
  wick_qmul_params m;
  WICK_TRY(wick_qmul_params_make(ctx, sigmoid_first ? qs : qx, sigmoid_first ? qx : qs, qo,
                                 (wick_activation)(fu->q8_swish - 1), x->type, &m));
  uint8_t every[256];
  for (int i = 0; i < 256; i++) every[i] = (uint8_t)i;
  wick_broadcast bc;
  memset(&bc, 0, sizeof bc);
  bc.rank = 1;
  bc.dims[0] = 256;
  bc.a_strides[0] = bc.b_strides[0] = 1;
  wick_q_mul__reference(x->type, &bc, &m, sigmoid_first ? d->lut : every,
                        sigmoid_first ? every : d->lut, d->swish_lut);
  d->swish_ready = true;
  return WICK_OK;
}

wick_status wick_q8_swish_invoke(const wick_op_ctx *ctx) {
  qact_data *d = wick_op_data(ctx);
  if (!d->swish_ready) WICK_TRY(swish_table(ctx, d));
  const wick_tensor *in = wick_op_input(ctx, 0);
  wick_tensor *out = wick_op_output(ctx, 0);
  const size_t n = (size_t)wick_tensor_elements(in);
  const wick_q8_lut8_fn fn = wick_q8_lut8_select(false);
  if (fn == NULL) {
    wick_q_lut8__reference((int64_t)n, d->swish_lut, in->data, out->data);
    return WICK_OK;
  }
  table_job j = {fn, d->swish_lut, in->data, out->data};
  return wick_parallel_elements(ctx, n, table_elements, &j);
}

/* ---------------------------------------------------------------- PRELU */

typedef struct qprelu_data {
  wick_broadcast bc;
  wick_qprelu_params p;
} qprelu_data;

wick_status wick_prelu_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *alpha, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &alpha));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, in->type != WICK_DTYPE_INT16, "int16 PRELU is not supported");
  WICK_CHECK(ctx, alpha->type == in->type && out->type == in->type,
             "alpha and output must have the input's type %s", wick_dtype_name(in->type));
  qprelu_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_broadcast_shapes(ctx, in, alpha, &d->bc.rank, d->bc.dims));
  bool same = d->bc.rank == in->rank;
  for (int32_t i = 0; same && i < in->rank; i++) same = d->bc.dims[i] == in->dims[i];
  WICK_CHECK(ctx, same, "alpha (rank %d) must broadcast into the input's shape (rank %d)",
             alpha->rank, in->rank);
  wick_broadcast_strides(in, d->bc.rank, d->bc.dims, d->bc.a_strides);
  wick_broadcast_strides(alpha, d->bc.rank, d->bc.dims, d->bc.b_strides);
  wick_qparams qi, qa, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, alpha, "alpha", false, &qa));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  /* float arithmetic, as LiteRT */
  WICK_TRY(wick_quant_multiplier(ctx, (double)(qi.scale / qo.scale), 30, "the output",
                                 &d->p.multiplier1, &d->p.shift1));
  WICK_TRY(wick_quant_multiplier(ctx, (double)(qi.scale * qa.scale / qo.scale), 30, "the output",
                                 &d->p.multiplier2, &d->p.shift2));
  d->p.input_offset = -qi.zero_point;
  d->p.alpha_offset = -qa.zero_point;
  d->p.output_offset = qo.zero_point;
  wick_op_set_data(ctx, d);
  wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(in->type));
  return wick_op_set_output(ctx, 0, in->type, in->rank, in->dims);
}

wick_status wick_prelu_invoke_quantized(wick_op_ctx *ctx) {
  const qprelu_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  wick_q_prelu__reference(in->type, &d->bc, &d->p, in->data, wick_op_input(ctx, 1)->data,
                          wick_op_output(ctx, 0)->data);
  return WICK_OK;
}
