/*
 * requantize.c — QUANTIZE with an integer input: requantization from one
 * scale and zero point to another.
 *
 * Reached from quantize.c when the input is not float32. The type pairs are
 * LiteRT's: int8/uint8 -> int8/uint8/int16, int16 -> int8/int16/int32,
 * int32 -> int8/int16; per-tensor parameters on both sides (int16 -> int16
 * with zero points 0). out = clamp(mbqm(q - z_in, M, s) + z_out) with M, s
 * from s_in / s_out (double), the output type's range as the clamp.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

typedef struct requant_data {
  int32_t in_zp, out_zp, multiplier, shift, lo, hi;
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
  wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, NULL);
  return wick_op_set_output(ctx, 0, out->type, in->rank, in->dims);
}

wick_status wick_requantize_invoke(wick_op_ctx *ctx) {
  const requant_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  wick_q_requantize__reference(in->type, out->type, wick_tensor_elements(in), d->in_zp, d->out_zp,
                               d->multiplier, d->shift, d->lo, d->hi, in->data, out->data);
  return WICK_OK;
}
