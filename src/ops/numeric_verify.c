/*
 * numeric_verify.c — NumericVerify, the custom op TensorFlow's converter
 * inserts in "debug" quantized files (registered in LiteRT's
 * BuiltinOpResolver): it compares a quantized tensor with the float tensor
 * it stands for.
 *
 * Inputs: input int8, uint8 or int16 (per-tensor scale and zero point; none
 * reads as scale 0, zero point 0, as LiteRT's params do) or float16, and
 * ref float32 with as many elements. Output float32, the input's shape:
 * dequant(input) - ref in float, dequant = (float)(scale * (q - zero_point))
 * in double: bit-exact with LiteRT's reference resolver (its default kernels'
 * optimized Dequantize rounds in other steps, a few ulps apart).
 *
 * Options (FlexBuffers map, both optional as LiteRT reads a missing key as
 * 0 / false): tolerance (float) and log_if_failed (bool). With log_if_failed
 * and tolerance >= 0.1, an element with |diff| > tolerance * scale (in
 * float) fails the invoke (WICK_ERR_INVALID_INPUT, naming the element), as
 * LiteRT's kernel does; otherwise LiteRT only logs statistics, which wick
 * does not (the library never prints). LiteRT skips the work on later
 * invokes when the input is a constant, keeping its first output; wick
 * recomputes it (they differ only if ref changes between invokes).
 */
#include <math.h>
#include <string.h>

#include "format/flexbuffer.h"
#include "format/schema.h"
#include "ops/op_common.h"

typedef struct verify_data {
  float tolerance, scale;
  int32_t zero_point;
  bool log_if_failed;
  int64_t count;
} verify_data;

static wick_status verify_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  verify_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  memset(d, 0, sizeof *d);
  wick_flex_map m;
  WICK_TRY(wick_op_flex_options(ctx, &m));
  wick_flex_status st;
  double tolerance = 0.0;
  st = wick_flex_map_float(&m, "tolerance", &tolerance);
  if (st != WICK_FLEX_OK && st != WICK_FLEX_ABSENT) return wick_op_flex_fail(ctx, "tolerance", st);
  d->tolerance = (float)tolerance;
  st = wick_flex_map_bool(&m, "log_if_failed", &d->log_if_failed);
  if (st != WICK_FLEX_OK && st != WICK_FLEX_ABSENT)
    return wick_op_flex_fail(ctx, "log_if_failed", st);

  wick_tensor *in, *ref;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &ref));
  WICK_CHECK_SUPPORTED(ctx,
                       in->type == WICK_DTYPE_INT8 || in->type == WICK_DTYPE_UINT8 ||
                           in->type == WICK_DTYPE_INT16 || in->type == WICK_DTYPE_FLOAT16,
                       "the input must be int8, uint8, int16 or float16, not %s",
                       wick_dtype_name(in->type));
  WICK_CHECK(ctx, ref->type == WICK_DTYPE_FLOAT32, "ref must be float32, not %s",
             wick_dtype_name(ref->type));
  d->count = wick_tensor_elements(in);
  WICK_CHECK(ctx, wick_tensor_elements(ref) == d->count,
             "ref has %lld elements, the input %lld: they must match",
             (long long)wick_tensor_elements(ref), (long long)d->count);
  const wick_quant *q = &in->info->quant;
  WICK_CHECK_SUPPORTED(ctx, q->count <= 1,
                       "the input has %u scales: NumericVerify takes per-tensor quantization",
                       (unsigned)q->count);
  if (q->count == 1) {
    WICK_CHECK(ctx, q->zero_point[0] >= INT32_MIN && q->zero_point[0] <= INT32_MAX,
               "the input's zero point %lld is out of range", (long long)q->zero_point[0]);
    d->scale = q->scale[0];
    d->zero_point = (int32_t)q->zero_point[0];
  }
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, in->rank, in->dims));
  wick_op_set_data(ctx, d);
  return WICK_OK;
}

static wick_status verify_invoke(wick_op_ctx *ctx) {
  const verify_data *d = wick_op_data(ctx);
  const wick_tensor *in = wick_op_input(ctx, 0);
  const float *ref = wick_op_input(ctx, 1)->data;
  float *out = wick_op_output(ctx, 0)->data;
  if (d->count == 0) return WICK_OK;
  if (in->type == WICK_DTYPE_FLOAT16) {
    const uint16_t *h = in->data;
    for (int64_t i = 0; i < d->count; i++) out[i] = wick_f16_to_f32(h[i]);
  } else {
    const wick_quant_layout layout = {1, 1, d->count, &d->scale, &d->zero_point};
    wick_dequantize__reference(in->type, &layout, in->data, out);
  }
  const bool verify = d->log_if_failed && (double)d->tolerance >= 0.1;
  const float max_diff = d->tolerance * d->scale;
  for (int64_t i = 0; i < d->count; i++) {
    const float dequant = out[i];
    out[i] = dequant - ref[i];
    if (verify && fabsf(out[i]) > max_diff)
      return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                          "element %lld: |%g - %g| = %g exceeds tolerance %g x scale %g",
                          (long long)i, (double)ref[i], (double)dequant, (double)fabsf(out[i]),
                          (double)d->tolerance, (double)d->scale);
  }
  return WICK_OK;
}

const wick_op_def wick_op_numeric_verify = {
    "NumericVerify", WICK_BUILTIN_CUSTOM, 1,
    verify_prepare,  verify_invoke,       WICK_OP_REFERENCE_KERNELS};
