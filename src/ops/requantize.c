/*
 * requantize.c — QUANTIZE with an integer input: requantization from one
 * scale and zero point to another.
 *
 * Reached from quantize.c when the input is not float32. The type pairs are
 * LiteRT's: int8/uint8 -> int8/uint8/int16, int16 -> int8/int16/int32,
 * int32 -> int8/int16; per-tensor parameters on both sides (int16 -> int16
 * with zero points 0). out = clamp(mbqm(q - z_in, M, s) + z_out) with M, s
 * from s_in / s_out (double), the output type's range as the clamp.
 *
 * Faster paths (unless the reference is forced): an 8-bit input has 256
 * values, so the op is the table of the reference's 256 answers (bit-exact
 * by construction; the vector byte or int16 lookup when the CPU has one); int16 to
 * int8 / int16 runs the int8 table's requant16 kernel (the same fixed-point
 * arithmetic, vectorized). Both split the elements over the threads.
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct requant_data {
  int32_t in_zp, out_zp, multiplier, shift, lo, hi;
  bool tabulated;                /* 8-bit input: the reference's answers for every input byte */
  uint8_t table8[256];           /* ... as bytes (8-bit output) */
  int16_t table16[256];          /* ... as int16 (int16 output) */
  wick_q8_lut8_fn lut8;          /* the vector byte lookup, or NULL */
  wick_q8_lut16_fn lut16;        /* the vector int16 lookup, or NULL */
  wick_q16_requant_fn requant16; /* int16 input on a kernel, or NULL */
  wick_q_requant_params p;
} requant_data;

static bool pair_supported(wick_dtype in, wick_dtype out) {
  switch (in) {
    case WICK_DTYPE_INT8:
    case WICK_DTYPE_UINT8:
      return out == WICK_DTYPE_INT8 || out == WICK_DTYPE_UINT8 || out == WICK_DTYPE_INT16;
    case WICK_DTYPE_INT16:
      return out == WICK_DTYPE_INT8 || out == WICK_DTYPE_INT16 || out == WICK_DTYPE_INT32;
    case WICK_DTYPE_INT32: return out == WICK_DTYPE_INT8 || out == WICK_DTYPE_INT16;
    default: return false;
  }
}

wick_status wick_requantize_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, pair_supported(in->type, out->type),
                       "requantizing %s to %s is not supported", wick_dtype_name(in->type),
                       wick_dtype_name(out->type));
  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  if (in->type == WICK_DTYPE_INT16 && out->type == WICK_DTYPE_INT16)
    WICK_CHECK_SUPPORTED(ctx, qi.zero_point == 0 && qo.zero_point == 0,
                         "int16 to int16 needs zero points 0");
  requant_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_quant_multiplier(ctx, (double)qi.scale / (double)qo.scale, 30, "the output",
                                 &d->multiplier, &d->shift));
  d->in_zp = qi.zero_point;
  d->out_zp = qo.zero_point;
  wick_quant_type_range(out->type, &d->lo, &d->hi);
  wick_op_set_data(ctx, d);
  const bool force = wick_op_force_reference(ctx);
  const bool in8 = in->type == WICK_DTYPE_INT8 || in->type == WICK_DTYPE_UINT8;
  const wick_q8_kernels *kern = wick_q8_kernels_select(force);
  d->p = (wick_q_requant_params){d->in_zp, d->out_zp, d->multiplier, d->shift, d->lo, d->hi};
  if (!force && in8) {
    uint8_t every[256];
    for (int i = 0; i < 256; i++) every[i] = (uint8_t)i;
    const bool wide = out->type == WICK_DTYPE_INT16;
    wick_q_requantize__reference(in->type, out->type, 256, d->in_zp, d->out_zp, d->multiplier,
                                 d->shift, d->lo, d->hi, every,
                                 wide ? (void *)d->table16 : (void *)d->table8);
    d->tabulated = true;
    d->lut8 = wide ? NULL : wick_q8_lut8_select(false);
    d->lut16 = wide && kern != NULL ? kern->lut16 : NULL;
    wick_op_set_kernel(ctx, d->lut8 || d->lut16 ? WICK_KERNEL_OPTIMIZED : WICK_KERNEL_GENERIC,
                       "table");
  } else if (in->type == WICK_DTYPE_INT16 && out->type != WICK_DTYPE_INT32 && kern != NULL &&
             kern->requant16 != NULL) {
    d->requant16 = kern->requant16;
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q16");
  } else {
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, NULL);
  }
  return wick_op_set_output(ctx, 0, out->type, in->rank, in->dims);
}

/* Elements [e0, e1) on the table or the int16 kernel. */
typedef struct requant_job {
  const requant_data *d;
  const void *in;
  void *out;
  bool out16;
} requant_job;

static void requant_elements(void *arg, size_t e0, size_t e1) {
  const requant_job *j = arg;
  const requant_data *d = j->d;
  const size_t n = e1 - e0;
  if (d->requant16 != NULL) {
    d->requant16(n, (const int16_t *)j->in + e0, (uint8_t *)j->out + e0 * (j->out16 ? 2 : 1),
                 j->out16, &d->p);
  } else if (j->out16 && d->lut16 != NULL) {
    d->lut16(n, d->table16, (const uint8_t *)j->in + e0, (int16_t *)j->out + e0);
  } else if (j->out16) {
    const uint8_t *in = (const uint8_t *)j->in + e0;
    int16_t *out = (int16_t *)j->out + e0;
    for (size_t i = 0; i < n; i++) out[i] = d->table16[in[i]];
  } else if (d->lut8 != NULL) {
    d->lut8(n, d->table8, (const uint8_t *)j->in + e0, (uint8_t *)j->out + e0);
  } else {
    const uint8_t *in = (const uint8_t *)j->in + e0;
    uint8_t *out = (uint8_t *)j->out + e0;
    for (size_t i = 0; i < n; i++) out[i] = d->table8[in[i]];
  }
}

wick_status wick_requantize_invoke(wick_op_ctx *ctx) {
  const requant_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (d->tabulated || d->requant16 != NULL) {
    requant_job j = {d, in->data, out->data, out->type == WICK_DTYPE_INT16};
    return wick_parallel_elements(ctx, (size_t)wick_tensor_elements(in), requant_elements, &j);
  }
  wick_q_requantize__reference(in->type, out->type, wick_tensor_elements(in), d->in_zp, d->out_zp,
                               d->multiplier, d->shift, d->lo, d->hi, in->data, out->data);
  return WICK_OK;
}
