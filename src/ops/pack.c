/*
 * pack.c — PACK and UNPACK: stack N equal tensors along a new axis, and the
 * inverse. Any fixed-size type.
 *
 *   PACK    values_count must equal the number of inputs; every input has
 *           the first one's type and shape; axis in [-(rank+1), rank].
 *           Output rank + 1 is capped at WICK_MAX_RANK.
 *   UNPACK  axis in [-rank, rank); the number of outputs (and num) must be
 *           the size of that axis; each output drops the axis.
 *
 * Viewing the packed tensor as [outer, N, inner], input k is the block at
 * row k: one axis-block copy per input (or output).
 */
#include "format/schema.h"
#include "ops/movement.h"

static wick_status pack_prepare(wick_op_ctx *ctx) {
  size_t n = wick_op_num_inputs(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, WICK_MAX_OP_INPUTS, 1));
  WICK_CHECK(ctx, ctx->params->count == (int32_t)n, "values_count is %d but the op has %zu inputs",
             ctx->params->count, n);
  wick_tensor *first;
  WICK_TRY(wick_require_input(ctx, 0, &first));
  WICK_TRY(movement_check_type(ctx, first, "input"));
  for (size_t k = 1; k < n; k++) {
    wick_tensor *t;
    WICK_TRY(wick_require_input(ctx, k, &t));
    WICK_CHECK(ctx, t->type == first->type, "input %zu is %s, input 0 is %s", k,
               wick_dtype_name(t->type), wick_dtype_name(first->type));
    bool same = t->rank == first->rank;
    for (int32_t i = 0; same && i < t->rank; i++) same = t->dims[i] == first->dims[i];
    WICK_CHECK(ctx, same, "input %zu's shape differs from input 0's", k);
  }
  int32_t rank = first->rank;
  WICK_CHECK(ctx, rank < WICK_MAX_RANK, "output rank %d exceeds wick's maximum %d", rank + 1,
             WICK_MAX_RANK);
  int32_t axis;
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, rank + 1, &axis));
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0, j = 0; i <= rank; i++) dims[i] = i == axis ? (int32_t)n : first->dims[j++];
  return wick_op_set_output(ctx, 0, first->type, rank + 1, dims);
}

static wick_status pack_invoke(wick_op_ctx *ctx) {
  wick_tensor *out = wick_op_output(ctx, 0);
  size_t n = wick_op_num_inputs(ctx);
  int32_t axis;
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, out->rank, &axis));
  int64_t outer, inner;
  movement_outer_inner(out->dims, out->rank, axis, &outer, &inner);
  size_t esize = wick_dtype_size(out->type);
  for (size_t k = 0; k < n; k++)
    movement_copy_axis_block(esize, outer, inner, 1, 0, wick_op_input(ctx, k)->data, (int64_t)n,
                             (int64_t)k, out->data, 1);
  return WICK_OK;
}

static wick_status unpack_prepare(wick_op_ctx *ctx) {
  size_t n = wick_op_num_outputs(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, 1, n));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  WICK_CHECK(ctx, in->rank > 0, "input must have rank >= 1");
  int32_t axis;
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, in->rank, &axis));
  WICK_CHECK(ctx, (int64_t)n == in->dims[axis] && ctx->params->count == in->dims[axis],
             "dimension %d has size %d but num is %d and the op has %zu outputs", axis,
             in->dims[axis], ctx->params->count, n);
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0, j = 0; i < in->rank; i++)
    if (i != axis) dims[j++] = in->dims[i];
  for (size_t k = 0; k < n; k++) WICK_TRY(wick_op_set_output(ctx, k, in->type, in->rank - 1, dims));
  return WICK_OK;
}

static wick_status unpack_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0);
  int32_t axis;
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, in->rank, &axis));
  int64_t outer, inner;
  movement_outer_inner(in->dims, in->rank, axis, &outer, &inner);
  size_t esize = wick_dtype_size(in->type);
  for (size_t k = 0; k < wick_op_num_outputs(ctx); k++)
    movement_copy_axis_block(esize, outer, inner, in->dims[axis], (int64_t)k, in->data, 1, 0,
                             wick_op_output(ctx, k)->data, 1);
  return WICK_OK;
}

const wick_op_def wick_op_pack = {"PACK", WICK_BUILTIN_PACK, 4, pack_prepare, pack_invoke, 0};
const wick_op_def wick_op_unpack = {"UNPACK",       WICK_BUILTIN_UNPACK, 5,
                                    unpack_prepare, unpack_invoke,       0};
