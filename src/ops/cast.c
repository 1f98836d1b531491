/*
 * cast.c — CAST: converts every element to the output tensor's declared
 * type, keeping the shape.
 *
 * Types (either side): float32, float16, float64, int8, uint8, int16, int32,
 * int64, bool. The output type is the output tensor's type, as in LiteRT
 * (CastOptions' in/out_data_type are informational and often absent). The
 * conversion rules — wrap between integers, saturate float -> integer with
 * NaN -> 0, != 0 to bool, round to nearest even to float16 — are stated in
 * src/kernels/reference/cast.c. Quantization parameters are ignored: CAST
 * converts stored values, it does not requantize (as LiteRT).
 * Next: src/kernels/reference/cast.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"

static bool cast_type_ok(wick_dtype t) {
  switch (t) {
    case WICK_DTYPE_FLOAT32:
    case WICK_DTYPE_FLOAT16:
    case WICK_DTYPE_FLOAT64:
    case WICK_DTYPE_INT8:
    case WICK_DTYPE_UINT8:
    case WICK_DTYPE_INT16:
    case WICK_DTYPE_INT32:
    case WICK_DTYPE_INT64:
    case WICK_DTYPE_BOOL: return true;
    default: return false;
  }
}

#define CAST_TYPES "float32, float16, float64, int8, uint8, int16, int32, int64, bool"

static wick_status cast_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, cast_type_ok(in->type),
                       "input type %s is not supported (" CAST_TYPES ")",
                       wick_dtype_name(in->type));
  WICK_CHECK_SUPPORTED(ctx, cast_type_ok(out->type),
                       "output type %s is not supported (" CAST_TYPES ")",
                       wick_dtype_name(out->type));
  return wick_op_set_output(ctx, 0, out->type, in->rank, in->dims);
}

static wick_status cast_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  wick_cast__reference(in->type, out->type, wick_tensor_elements(in), in->data, out->data);
  return WICK_OK;
}

/* v2 uint32, v3 int8, v4 uint16, v5 float16/float64; v6 (int4) and v7
 * (bfloat16) are not implemented. */
const wick_op_def wick_op_cast = {"CAST",       WICK_BUILTIN_CAST, 5,
                                  cast_prepare, cast_invoke,       WICK_OP_REFERENCE_KERNELS};
