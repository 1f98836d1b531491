/*
 * reverse.c — REVERSE_V2: reverse the input along the axes listed in the
 * axis tensor (int32/int64, 1-D; negative axes count from the end; an axis
 * may appear once). Any fixed-size type; the output shape is the input's.
 *
 * One strided copy: along a reversed dim the source starts at its last
 * element and steps by minus its stride. The axes decide only the copy, not
 * the shape, so a run-time axis tensor is read (and checked) at invoke
 * instead of deferring the op.
 */
#include "format/schema.h"
#include "ops/movement.h"

typedef struct reverse_data {
  wick_copy_plan plan;
  bool ready;
} reverse_data;

static wick_status reverse_plan(wick_op_ctx *ctx, wick_status vstatus, wick_copy_plan *p) {
  wick_tensor *in = wick_op_input(ctx, 0), *axis = wick_op_input(ctx, 1);
  int64_t strides[WICK_MAX_RANK];
  movement_strides(in->rank, in->dims, strides);
  bool flip[WICK_MAX_RANK] = {false};
  int64_t n = wick_tensor_elements(axis);
  for (int64_t k = 0; k < n; k++) {
    int64_t a = wick_read_int(axis, k);
    if (!(a >= -in->rank && a < in->rank))
      return wick_op_fail(ctx, vstatus, "axis %lld is outside rank %d", (long long)a, in->rank);
    if (a < 0) a += in->rank;
    if (flip[a]) return wick_op_fail(ctx, vstatus, "axis %lld appears twice", (long long)a);
    flip[a] = true;
  }
  memset(p, 0, sizeof *p);
  p->rank = in->rank;
  bool empty = wick_tensor_elements(in) == 0;
  for (int32_t i = 0; i < in->rank; i++) {
    p->dims[i] = in->dims[i];
    p->src_strides[i] = flip[i] ? -strides[i] : strides[i];
    if (flip[i] && !empty) p->src_offset += (int64_t)(in->dims[i] - 1) * strides[i];
  }
  wick_copy_plan_dense_dst(p);
  wick_copy_plan_simplify(p);
  return WICK_OK;
}

static wick_status reverse_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *axis;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &axis));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t n = 0;
  WICK_TRY(movement_int_vector(ctx, axis, "axis", &n));
  WICK_CHECK(ctx, n <= in->rank, "axis lists %lld axes for an input of rank %d", (long long)n,
             in->rank);
  reverse_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_op_set_data(ctx, d);
  d->ready = !movement_unknown(ctx, axis);
  if (d->ready) WICK_TRY(reverse_plan(ctx, movement_value_status(ctx), &d->plan));
  return wick_op_set_output(ctx, 0, in->type, in->rank, in->dims);
}

static wick_status reverse_invoke(wick_op_ctx *ctx) {
  reverse_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (!d->ready) WICK_TRY(reverse_plan(ctx, WICK_ERR_INVALID_INPUT, &d->plan));
  if (out->bytes == 0) return WICK_OK;
  wick_strided_copy__reference(wick_dtype_size(in->type), &d->plan, in->data, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_reverse_v2 = {"REVERSE_V2",    WICK_BUILTIN_REVERSE_V2, 3,
                                        reverse_prepare, reverse_invoke,          0};
