/*
 * dynamic_update_slice.c — DYNAMIC_UPDATE_SLICE(operand, update, start):
 * the output is the operand with `update` written over the box that starts
 * at `start`. Any fixed-size type; start is int32/int64, one per dim.
 *
 * update has the operand's type and rank and no larger dims. Like LiteRT
 * (and XLA), each start index is clamped into [0, dim - update_dim] so the
 * box always fits: start values are never an error, and they decide only
 * where the copy lands, so a run-time start is simply read at invoke.
 * Invoke copies the operand, then the update as one strided copy.
 */
#include "format/schema.h"
#include "ops/movement.h"

static wick_status dus_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 3, 1));
  wick_tensor *operand, *update, *start;
  WICK_TRY(wick_require_input(ctx, 0, &operand));
  WICK_TRY(wick_require_input(ctx, 1, &update));
  WICK_TRY(wick_require_input(ctx, 2, &start));
  WICK_TRY(movement_check_type(ctx, operand, "operand"));
  WICK_CHECK(ctx, update->type == operand->type, "update is %s but the operand is %s",
             wick_dtype_name(update->type), wick_dtype_name(operand->type));
  WICK_CHECK(ctx, update->rank == operand->rank, "update has rank %d, the operand %d", update->rank,
             operand->rank);
  for (int32_t i = 0; i < operand->rank; i++)
    WICK_CHECK(ctx, update->dims[i] <= operand->dims[i],
               "update dimension %d (%d) is larger than the operand's (%d)", i, update->dims[i],
               operand->dims[i]);
  int64_t n = 0;
  WICK_TRY(movement_int_vector(ctx, start, "start_indices", &n));
  WICK_CHECK(ctx, n == operand->rank, "start_indices has %lld entries for rank %d", (long long)n,
             operand->rank);
  return wick_op_set_output(ctx, 0, operand->type, operand->rank, operand->dims);
}

static wick_status dus_invoke(wick_op_ctx *ctx) {
  wick_tensor *operand = wick_op_input(ctx, 0), *update = wick_op_input(ctx, 1);
  wick_tensor *start = wick_op_input(ctx, 2), *out = wick_op_output(ctx, 0);
  if (out->bytes == 0) return WICK_OK;
  if (out->data != operand->data) memcpy(out->data, operand->data, out->bytes);
  if (update->bytes == 0) return WICK_OK;
  int64_t strides[WICK_MAX_RANK];
  movement_strides(out->rank, out->dims, strides);
  wick_copy_plan p;
  memset(&p, 0, sizeof p);
  p.rank = out->rank;
  for (int32_t i = 0; i < out->rank; i++) {
    int64_t s = wick_read_int(start, i), hi = (int64_t)out->dims[i] - update->dims[i];
    s = s < 0 ? 0 : (s > hi ? hi : s);
    p.dims[i] = update->dims[i];
    p.dst_strides[i] = strides[i];
    p.dst_offset += s * strides[i];
  }
  movement_strides(update->rank, update->dims, p.src_strides);
  wick_copy_plan_simplify(&p);
  wick_strided_copy__reference(wick_dtype_size(out->type), &p, update->data, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_dynamic_update_slice = {
    "DYNAMIC_UPDATE_SLICE", WICK_BUILTIN_DYNAMIC_UPDATE_SLICE, 6, dus_prepare, dus_invoke,
    WICK_OP_UPDATES_INPUT0};
