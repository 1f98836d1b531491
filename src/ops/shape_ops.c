/*
 * shape_ops.c — operators that make or relabel shapes: SQUEEZE, EXPAND_DIMS,
 * SHAPE, FILL, RANGE.
 *
 *   SQUEEZE      drops the size-1 dims named by squeeze_dims (all of them
 *                when the option is empty); naming a dim that is not 1 is an
 *                error. Same bytes, new shape.
 *   EXPAND_DIMS  inserts a 1 at `axis` (input 1, int32/int64 scalar, in
 *                [-rank-1, rank]; deferred when not known at prepare).
 *   SHAPE        writes the input's dims as int32 or int64 (out_type).
 *   FILL         output of shape `dims` (input 0, 1-D int32/int64, every
 *                value >= 0; deferred when run-time) filled with the scalar
 *                `value` (input 1), whose type is the output's.
 *   RANGE        start, limit, delta: scalars of one type (float32, int32,
 *                int64). delta 0, or a delta pointing away from limit, is an
 *                error; the size is computed without overflow (unsigned
 *                magnitudes for integers, LiteRT's float formula for floats)
 *                and capped at INT32_MAX elements before anything is sized.
 *
 * Invariants: outputs never alias inputs, except SQUEEZE and EXPAND_DIMS whose output may
 * share its input's storage (plan.c); kernels are in
 * src/kernels/reference/fill.c.
 */
#include "format/schema.h"
#include "ops/movement.h"

/* Invoke of the ops whose output holds exactly the input's bytes (SQUEEZE and EXPAND_DIMS
 * usually share their input's storage: src/core/plan.c, WICK_OP_ALIAS; then nothing to copy). */
static wick_status copy_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (out->data != in->data && out->bytes) memcpy(out->data, in->data, out->bytes);
  return WICK_OK;
}

/* ---------------------------------------------------------------- SQUEEZE */

static wick_status squeeze_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  const wick_int_list *l = &ctx->params->int_list;
  bool drop[WICK_MAX_RANK] = {false};
  if (l->count == 0) {
    for (int32_t i = 0; i < in->rank; i++) drop[i] = in->dims[i] == 1;
  } else {
    for (int32_t k = 0; k < l->count; k++) {
      int32_t a;
      WICK_TRY(wick_normalize_axis(ctx, l->values[k], in->rank, &a));
      WICK_CHECK(ctx, in->rank > 0 && in->dims[a] == 1,
                 "squeeze_dims names dimension %d, which has size %d, not 1", l->values[k],
                 in->rank > 0 ? in->dims[a] : 0);
      drop[a] = true;
    }
  }
  int32_t dims[WICK_MAX_RANK], rank = 0;
  for (int32_t i = 0; i < in->rank; i++)
    if (!drop[i]) dims[rank++] = in->dims[i];
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

/* ---------------------------------------------------------------- EXPAND_DIMS */

static wick_status expand_dims_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *axis;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &axis));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  WICK_CHECK(ctx, wick_is_int_index_type(axis->type), "axis must be int32 or int64, not %s",
             wick_dtype_name(axis->type));
  WICK_CHECK(ctx, wick_tensor_elements(axis) == 1, "axis must hold exactly one value, not %lld",
             (long long)wick_tensor_elements(axis));
  if (movement_unknown(ctx, axis)) return WICK_STATUS_DEFER;
  int64_t a = wick_read_int(axis, 0);
  WICK_CHECK_VALUE(ctx, a >= -(int64_t)in->rank - 1 && a <= in->rank,
                   "axis %lld is outside [%d, %d]", (long long)a, -in->rank - 1, in->rank);
  if (a < 0) a += in->rank + 1;
  WICK_CHECK(ctx, in->rank < WICK_MAX_RANK, "output rank %d exceeds wick's maximum %d",
             in->rank + 1, WICK_MAX_RANK);
  int32_t dims[WICK_MAX_RANK], rank = 0;
  for (int32_t i = 0; i <= in->rank; i++) {
    if (i == a) dims[rank++] = 1;
    if (i < in->rank) dims[rank++] = in->dims[i];
  }
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

/* ---------------------------------------------------------------- SHAPE */

static wick_status shape_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  int32_t t = ctx->params->out_type;
  WICK_CHECK(ctx, t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64,
             "out_type must be int32 or int64, not %s", wick_dtype_name((wick_dtype)t));
  int32_t dims[1] = {in->rank};
  return wick_op_set_output(ctx, 0, (wick_dtype)t, 1, dims);
}

static wick_status shape_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  for (int32_t i = 0; i < in->rank; i++) {
    if (out->type == WICK_DTYPE_INT64)
      ((int64_t *)out->data)[i] = in->dims[i];
    else
      ((int32_t *)out->data)[i] = in->dims[i];
  }
  return WICK_OK;
}

/* ---------------------------------------------------------------- FILL */

static wick_status fill_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *shape, *value;
  WICK_TRY(wick_require_input(ctx, 0, &shape));
  WICK_TRY(wick_require_input(ctx, 1, &value));
  WICK_TRY(movement_check_type(ctx, value, "value"));
  WICK_CHECK(ctx, value->rank == 0, "value must be a scalar, not rank %d", value->rank);
  int64_t n = 0;
  WICK_TRY(movement_int_vector(ctx, shape, "dims", &n));
  WICK_CHECK(ctx, n <= WICK_MAX_RANK, "dims has %lld entries; wick's maximum rank is %d",
             (long long)n, WICK_MAX_RANK);
  if (movement_unknown(ctx, shape)) return WICK_STATUS_DEFER;
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < (int32_t)n; i++) {
    int64_t d = wick_read_int(shape, i);
    WICK_CHECK_VALUE(ctx, d >= 0 && d <= INT32_MAX, "dims[%d] = %lld is not a valid size", i,
                     (long long)d);
    dims[i] = (int32_t)d;
  }
  return wick_op_set_output(ctx, 0, value->type, (int32_t)n, dims);
}

static wick_status fill_invoke(wick_op_ctx *ctx) {
  wick_tensor *value = wick_op_input(ctx, 1), *out = wick_op_output(ctx, 0);
  if (out->bytes)
    wick_fill__reference(wick_dtype_size(out->type), wick_tensor_elements(out), value->data,
                         out->data);
  return WICK_OK;
}

/* ---------------------------------------------------------------- RANGE */

static int64_t read_i64(const wick_tensor *t) {
  int64_t v;
  memcpy(&v, t->data, sizeof v);
  return v;
}

static int32_t read_i32(const wick_tensor *t) {
  int32_t v;
  memcpy(&v, t->data, sizeof v);
  return v;
}

static float read_f32(const wick_tensor *t) {
  float v;
  memcpy(&v, t->data, sizeof v);
  return v;
}

/* Element count of an integer range, from exact unsigned magnitudes. */
static wick_status int_range_size(wick_op_ctx *ctx, int64_t start, int64_t limit, int64_t delta,
                                  int64_t *size) {
  WICK_CHECK_VALUE(ctx, delta != 0, "delta is 0");
  WICK_CHECK_VALUE(ctx, (start <= limit && delta > 0) || (start >= limit && delta < 0),
                   "delta %lld moves away from limit %lld (start %lld)", (long long)delta,
                   (long long)limit, (long long)start);
  uint64_t span =
      start <= limit ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
  uint64_t step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
  uint64_t n = span / step + (span % step != 0);
  WICK_CHECK_VALUE(ctx, n <= INT32_MAX, "the range has %llu elements, more than %d",
                   (unsigned long long)n, INT32_MAX);
  *size = (int64_t)n;
  return WICK_OK;
}

static wick_status range_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 3, 1));
  wick_tensor *t[3];
  for (size_t i = 0; i < 3; i++) WICK_TRY(wick_require_input(ctx, i, &t[i]));
  wick_dtype type = t[0]->type;
  WICK_CHECK_SUPPORTED(ctx,
                       type == WICK_DTYPE_FLOAT32 || type == WICK_DTYPE_INT32 ||
                           type == WICK_DTYPE_INT64,
                       "type %s is not supported (float32, int32, int64)", wick_dtype_name(type));
  static const char *const names[3] = {"start", "limit", "delta"};
  for (size_t i = 0; i < 3; i++) {
    WICK_CHECK(ctx, t[i]->type == type, "%s is %s but start is %s", names[i],
               wick_dtype_name(t[i]->type), wick_dtype_name(type));
    WICK_CHECK(ctx, t[i]->rank == 0, "%s must be a scalar, not rank %d", names[i], t[i]->rank);
  }
  for (size_t i = 0; i < 3; i++)
    if (movement_unknown(ctx, t[i])) return WICK_STATUS_DEFER;
  int64_t size = 0;
  if (type == WICK_DTYPE_FLOAT32) {
    float start = read_f32(t[0]), limit = read_f32(t[1]), delta = read_f32(t[2]);
    WICK_CHECK_VALUE(ctx, isfinite(start) && isfinite(limit) && isfinite(delta),
                     "start, limit and delta must be finite");
    WICK_CHECK_VALUE(ctx, delta != 0.0f, "delta is 0");
    WICK_CHECK_VALUE(ctx, (start <= limit && delta > 0) || (start >= limit && delta < 0),
                     "delta %g moves away from limit %g (start %g)", (double)delta, (double)limit,
                     (double)start);
    /* LiteRT's size: ceil(|(limit - start) / delta|), evaluated in float. */
    float q = ceilf(fabsf((limit - start) / delta));
    WICK_CHECK_VALUE(ctx, isfinite(q) && q < 2147483648.0f, "the range has %g elements, too many",
                     (double)q);
    size = (int64_t)q;
  } else if (type == WICK_DTYPE_INT32) {
    WICK_TRY(int_range_size(ctx, read_i32(t[0]), read_i32(t[1]), read_i32(t[2]), &size));
  } else {
    WICK_TRY(int_range_size(ctx, read_i64(t[0]), read_i64(t[1]), read_i64(t[2]), &size));
  }
  int32_t dims[1] = {(int32_t)size};
  return wick_op_set_output(ctx, 0, type, 1, dims);
}

static wick_status range_invoke(wick_op_ctx *ctx) {
  wick_tensor *start = wick_op_input(ctx, 0), *delta = wick_op_input(ctx, 2);
  wick_tensor *out = wick_op_output(ctx, 0);
  int64_t n = out->dims[0];
  if (n == 0) return WICK_OK;
  if (out->type == WICK_DTYPE_FLOAT32)
    wick_f32_range__reference(read_f32(start), read_f32(delta), n, out->data);
  else if (out->type == WICK_DTYPE_INT32)
    wick_i32_range__reference(read_i32(start), read_i32(delta), n, out->data);
  else
    wick_i64_range__reference(read_i64(start), read_i64(delta), n, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_squeeze = {"SQUEEZE",       WICK_BUILTIN_SQUEEZE, 2,
                                     squeeze_prepare, copy_invoke,          WICK_OP_ALIAS};
const wick_op_def wick_op_expand_dims = {
    "EXPAND_DIMS", WICK_BUILTIN_EXPAND_DIMS, 1, expand_dims_prepare, copy_invoke, WICK_OP_ALIAS};
const wick_op_def wick_op_shape = {"SHAPE",       WICK_BUILTIN_SHAPE, 1,
                                   shape_prepare, shape_invoke,       WICK_OP_READS_SHAPES_ONLY};
const wick_op_def wick_op_fill = {"FILL", WICK_BUILTIN_FILL, 4, fill_prepare, fill_invoke, 0};
const wick_op_def wick_op_range = {"RANGE",       WICK_BUILTIN_RANGE, 2,
                                   range_prepare, range_invoke,       WICK_OP_REFERENCE_KERNELS};
