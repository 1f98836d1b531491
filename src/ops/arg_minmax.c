/*
 * arg_minmax.c — ARG_MAX and ARG_MIN.
 *
 * Inputs: the data (float32, int32, int64, int8, uint8 or bool; quantized
 * int8/uint8 work unchanged because a positive scale keeps the order) and the
 * axis (int32/int64, one value, may be negative). The output drops the axis
 * and holds int32 or int64 indices as the output_type option says (the
 * declared output type must agree). Ties pick the first index. The axis is
 * data: a non-constant axis is read at invoke (the node is prepared again).
 *
 * Next: src/kernels/reference/arg_minmax.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"

typedef struct arg_data {
  int64_t outer, axis, inner;
} arg_data;

static wick_status arg_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *axis;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &axis));
  wick_dtype t = in->type;
  WICK_CHECK_SUPPORTED(ctx,
                       t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64 ||
                           t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 || t == WICK_DTYPE_BOOL,
                       "input type %s is not supported", wick_dtype_name(t));
  WICK_CHECK(ctx, wick_is_int_index_type(axis->type), "axis must be int32 or int64, not %s",
             wick_dtype_name(axis->type));
  WICK_CHECK(ctx, wick_tensor_elements(axis) == 1, "axis must hold one value, not %lld",
             (long long)wick_tensor_elements(axis));
  wick_dtype out_type = (wick_dtype)ctx->params->out_type;
  WICK_CHECK(ctx, out_type == WICK_DTYPE_INT32 || out_type == WICK_DTYPE_INT64,
             "output_type must be int32 or int64, not %s", wick_dtype_name(out_type));
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  if (!axis->known && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  int64_t raw = wick_read_int(axis, 0);
  int32_t ax;
  if (raw < -in->rank || raw >= in->rank)
    return wick_op_fail(ctx, axis->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT,
                        "axis %lld is outside rank %d", (long long)raw, in->rank);
  WICK_TRY(wick_normalize_axis(ctx, raw, in->rank, &ax));
  arg_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->outer = d->inner = 1;
  int32_t dims[WICK_MAX_RANK], rank = 0;
  bool ok = true;
  for (int32_t i = 0; i < in->rank; i++) {
    if (i < ax) ok = ok && wick_mul_i64(d->outer, in->dims[i], &d->outer);
    if (i > ax) ok = ok && wick_mul_i64(d->inner, in->dims[i], &d->inner);
    if (i != ax) dims[rank++] = in->dims[i];
  }
  d->axis = in->dims[ax];
  WICK_CHECK(ctx, ok, "output element count overflows");
  WICK_CHECK(ctx, d->axis > 0 || d->outer == 0 || d->inner == 0,
             "cannot take the index of an extreme along axis %d, which is empty", ax);
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, out_type, rank, dims);
}

static wick_status arg_invoke(wick_op_ctx *ctx) {
  const arg_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (d->axis == 0) return WICK_OK; /* empty output (checked in prepare) */
  wick_arg_minmax__reference(wick_op_builtin(ctx) == WICK_BUILTIN_ARG_MAX, in->type, d->outer,
                             d->axis, d->inner, in->data, out->type, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_arg_max = {"ARG_MAX",   WICK_BUILTIN_ARG_MAX, 3,
                                     arg_prepare, arg_invoke,           WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_arg_min = {"ARG_MIN",   WICK_BUILTIN_ARG_MIN, 3,
                                     arg_prepare, arg_invoke,           WICK_OP_REFERENCE_KERNELS};
