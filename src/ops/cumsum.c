/*
 * cumsum.c — CUMSUM (float32, int32, int64).
 *
 * Inputs: the data and the axis (int32/int64, one value, may be negative).
 * Options exclusive and reverse. The output has the input's shape. The axis
 * is data: a non-constant axis is read at invoke (the node is prepared
 * again then).
 *
 * Next: src/kernels/reference/cumsum.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"

typedef struct cumsum_data {
  int64_t outer, axis, inner;
} cumsum_data;

static wick_status cumsum_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *axis;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &axis));
  wick_dtype t = in->type;
  WICK_CHECK_SUPPORTED(ctx,
                       t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64,
                       "input type %s is not supported (float32, int32, int64)",
                       wick_dtype_name(t));
  WICK_CHECK(ctx, wick_is_int_index_type(axis->type), "axis must be int32 or int64, not %s",
             wick_dtype_name(axis->type));
  WICK_CHECK(ctx, wick_tensor_elements(axis) == 1, "axis must hold one value, not %lld",
             (long long)wick_tensor_elements(axis));
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  if (!axis->known && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  int64_t raw = wick_read_int(axis, 0);
  if (raw < -in->rank || raw >= in->rank)
    return wick_op_fail(ctx, axis->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT,
                        "axis %lld is outside rank %d", (long long)raw, in->rank);
  int32_t ax;
  WICK_TRY(wick_normalize_axis(ctx, raw, in->rank, &ax));
  cumsum_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  /* Every product below divides the (capped) element count, unless some
   * dim is 0, in which case the kernel runs no iterations at all. */
  d->outer = d->inner = 1;
  d->axis = in->dims[ax];
  bool empty = wick_tensor_elements(in) == 0;
  for (int32_t i = 0; i < in->rank && !empty; i++) {
    if (i < ax) d->outer *= in->dims[i];
    if (i > ax) d->inner *= in->dims[i];
  }
  if (empty) d->outer = d->axis = d->inner = 0;
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, t, in->rank, in->dims);
}

static wick_status cumsum_invoke(wick_op_ctx *ctx) {
  const cumsum_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  wick_cumsum__reference(in->type, d->outer, d->axis, d->inner, ctx->params->exclusive,
                         ctx->params->reverse, in->data, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

const wick_op_def wick_op_cumsum = {"CUMSUM",       WICK_BUILTIN_CUMSUM, 1,
                                    cumsum_prepare, cumsum_invoke,       WICK_OP_REFERENCE_KERNELS};
