/*
 * split.c — SPLIT and SPLIT_V: cut the input along one axis into consecutive
 * pieces, one per output. Any fixed-size type.
 *
 *   SPLIT(axis, input)              axis is INPUT 0 (an int32/int64 scalar),
 *                                   num_splits > 0 equal pieces (the axis
 *                                   size must divide; never divide by an
 *                                   unchecked num_splits).
 *   SPLIT_V(input, size_splits, axis)  size_splits (1-D int32/int64, one
 *                                   entry per output) may hold one -1 (the
 *                                   rest of the axis); the sizes must add up
 *                                   to the axis size exactly.
 *
 * The number of outputs must equal num_splits. axis and size_splits that
 * are run-time tensors defer the op to invoke. The piece sizes live in the
 * node's user data; invoke copies each piece with one axis-block copy.
 */
#include "format/schema.h"
#include "ops/movement.h"

typedef struct split_data {
  int32_t axis;
  int32_t *sizes; /* one per output */
} split_data;

static wick_status read_axis(wick_op_ctx *ctx, const wick_tensor *axis, const wick_tensor *in,
                             int32_t *out) {
  WICK_CHECK(ctx, wick_is_int_index_type(axis->type), "axis must be int32 or int64, not %s",
             wick_dtype_name(axis->type));
  WICK_CHECK(ctx, wick_tensor_elements(axis) == 1, "axis must hold one value, not %lld",
             (long long)wick_tensor_elements(axis));
  int64_t a = wick_read_int(axis, 0);
  WICK_CHECK_VALUE(ctx, in->rank > 0 && a >= -in->rank && a < in->rank,
                   "axis %lld is outside rank %d", (long long)a, in->rank);
  *out = (int32_t)(a < 0 ? a + in->rank : a);
  return WICK_OK;
}

static wick_status set_outputs(wick_op_ctx *ctx, const wick_tensor *in, split_data *d) {
  size_t n = wick_op_num_outputs(ctx);
  int32_t dims[WICK_MAX_RANK];
  memcpy(dims, in->dims, sizeof dims);
  for (size_t k = 0; k < n; k++) {
    dims[d->axis] = d->sizes[k];
    WICK_TRY(wick_op_set_output(ctx, k, in->type, in->rank, dims));
  }
  wick_op_set_data(ctx, d);
  return WICK_OK;
}

static split_data *new_data(wick_op_ctx *ctx, size_t n) {
  split_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return NULL;
  d->sizes = wick_op_alloc(ctx, n * sizeof(int32_t));
  return d->sizes ? d : NULL;
}

static wick_status split_prepare(wick_op_ctx *ctx) {
  int32_t num = ctx->params->count;
  WICK_CHECK(ctx, num > 0, "num_splits must be positive, not %d", num);
  WICK_TRY(wick_check_arity(ctx, 2, 2, (size_t)num));
  wick_tensor *axis, *in;
  WICK_TRY(wick_require_input(ctx, 0, &axis));
  WICK_TRY(wick_require_input(ctx, 1, &in));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  WICK_CHECK(ctx, wick_is_int_index_type(axis->type), "axis must be int32 or int64, not %s",
             wick_dtype_name(axis->type));
  if (movement_unknown(ctx, axis)) return WICK_STATUS_DEFER;
  split_data *d = new_data(ctx, (size_t)num);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(read_axis(ctx, axis, in, &d->axis));
  int32_t size = in->dims[d->axis];
  WICK_CHECK_VALUE(ctx, size % num == 0,
                   "dimension %d of size %d does not split into %d equal pieces", d->axis, size,
                   num);
  for (int32_t k = 0; k < num; k++) d->sizes[k] = size / num;
  return set_outputs(ctx, in, d);
}

static wick_status split_v_prepare(wick_op_ctx *ctx) {
  int32_t num = ctx->params->count;
  WICK_CHECK(ctx, num > 0, "num_splits must be positive, not %d", num);
  WICK_TRY(wick_check_arity(ctx, 3, 3, (size_t)num));
  wick_tensor *in, *splits, *axis;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &splits));
  WICK_TRY(wick_require_input(ctx, 2, &axis));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t ns = 0;
  WICK_TRY(movement_int_vector(ctx, splits, "size_splits", &ns));
  WICK_CHECK(ctx, ns == num, "size_splits has %lld entries for %d outputs", (long long)ns, num);
  WICK_CHECK(ctx, wick_is_int_index_type(axis->type), "axis must be int32 or int64, not %s",
             wick_dtype_name(axis->type));
  if (movement_unknown(ctx, axis) || movement_unknown(ctx, splits)) return WICK_STATUS_DEFER;
  split_data *d = new_data(ctx, (size_t)num);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(read_axis(ctx, axis, in, &d->axis));
  int64_t size = in->dims[d->axis], sum = 0;
  int32_t infer = -1;
  for (int32_t k = 0; k < num; k++) {
    int64_t v = wick_read_int(splits, k);
    if (v == -1) {
      WICK_CHECK_VALUE(ctx, infer < 0, "size_splits has more than one -1");
      infer = k;
      continue;
    }
    WICK_CHECK_VALUE(ctx, v >= 0 && v <= size, "size_splits[%d] = %lld is not a valid size", k,
                     (long long)v);
    sum += v; /* <= num * size: no overflow */
    d->sizes[k] = (int32_t)v;
  }
  if (infer >= 0) {
    WICK_CHECK_VALUE(ctx, sum <= size, "size_splits add up to %lld, more than dimension %d (%lld)",
                     (long long)sum, d->axis, (long long)size);
    d->sizes[infer] = (int32_t)(size - sum);
  } else {
    WICK_CHECK_VALUE(ctx, sum == size, "size_splits add up to %lld, not dimension %d (%lld)",
                     (long long)sum, d->axis, (long long)size);
  }
  return set_outputs(ctx, in, d);
}

static wick_status split_invoke(wick_op_ctx *ctx) {
  const split_data *d = wick_op_data(ctx);
  bool v = wick_op_builtin(ctx) == WICK_BUILTIN_SPLIT_V;
  wick_tensor *in = wick_op_input(ctx, v ? 0 : 1);
  int64_t outer, inner;
  movement_outer_inner(in->dims, in->rank, d->axis, &outer, &inner);
  size_t esize = wick_dtype_size(in->type);
  int64_t start = 0;
  for (size_t k = 0; k < wick_op_num_outputs(ctx); k++) {
    wick_tensor *out = wick_op_output(ctx, k);
    movement_copy_axis_block(esize, outer, inner, in->dims[d->axis], start, in->data, d->sizes[k],
                             0, out->data, d->sizes[k]);
    start += d->sizes[k];
  }
  return WICK_OK;
}

const wick_op_def wick_op_split = {"SPLIT", WICK_BUILTIN_SPLIT, 4, split_prepare, split_invoke, 0};
const wick_op_def wick_op_split_v = {"SPLIT_V",       WICK_BUILTIN_SPLIT_V, 2,
                                     split_v_prepare, split_invoke,         0};
