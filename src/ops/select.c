/*
 * select.c — SELECT and SELECT_V2: out = condition ? x : y, elementwise.
 * condition is bool; x and y share any fixed-size type.
 *
 *   SELECT     x and y have the same shape (the output's); condition has
 *              that shape too, or is a scalar (picks all of x or all of y),
 *              or is 1-D with x's first dim (picks whole rows).
 *   SELECT_V2  numpy broadcasting among all three operands.
 *
 * Both reduce to one broadcast iteration with per-operand strides (0 on a
 * broadcast dim), run by wick_select__reference.
 */
#include "format/schema.h"
#include "ops/movement.h"

static wick_status select_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 3, 1));
  wick_tensor *cond, *x, *y;
  WICK_TRY(wick_require_input(ctx, 0, &cond));
  WICK_TRY(wick_require_input(ctx, 1, &x));
  WICK_TRY(wick_require_input(ctx, 2, &y));
  WICK_CHECK(ctx, cond->type == WICK_DTYPE_BOOL, "condition must be bool, not %s",
             wick_dtype_name(cond->type));
  WICK_TRY(movement_check_type(ctx, x, "x"));
  WICK_CHECK(ctx, y->type == x->type, "x is %s but y is %s", wick_dtype_name(x->type),
             wick_dtype_name(y->type));
  wick_select_shape *s = wick_op_alloc(ctx, sizeof *s);
  if (s == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  memset(s, 0, sizeof *s);
  wick_op_set_data(ctx, s);
  int32_t rank = 0, dims[WICK_MAX_RANK];
  if (wick_op_builtin(ctx) == WICK_BUILTIN_SELECT_V2) {
    WICK_TRY(wick_broadcast_shapes(ctx, x, y, &rank, dims));
    wick_tensor xy;
    memset(&xy, 0, sizeof xy);
    xy.rank = rank;
    memcpy(xy.dims, dims, sizeof dims);
    WICK_TRY(wick_broadcast_shapes(ctx, cond, &xy, &rank, dims));
  } else {
    bool same = x->rank == y->rank;
    for (int32_t i = 0; same && i < x->rank; i++) same = x->dims[i] == y->dims[i];
    WICK_CHECK(ctx, same, "x and y must have the same shape");
    bool cond_same = cond->rank == x->rank;
    for (int32_t i = 0; cond_same && i < x->rank; i++) cond_same = cond->dims[i] == x->dims[i];
    bool rows = cond->rank == 1 && x->rank >= 1 && cond->dims[0] == x->dims[0];
    WICK_CHECK(ctx, cond_same || rows || cond->rank == 0,
               "condition must have x's shape, be a scalar, or be 1-D of x's first dimension");
    rank = x->rank;
    memcpy(dims, x->dims, sizeof dims);
  }
  s->rank = rank;
  for (int32_t i = 0; i < rank; i++) s->dims[i] = dims[i];
  wick_broadcast_strides(x, rank, dims, s->x_strides);
  wick_broadcast_strides(y, rank, dims, s->y_strides);
  if (cond->rank == 1 && rank > 1 && wick_op_builtin(ctx) == WICK_BUILTIN_SELECT) {
    s->cond_strides[0] = cond->dims[0] == 1 ? 0 : 1; /* one value per row */
  } else {
    wick_broadcast_strides(cond, rank, dims, s->cond_strides);
  }
  return wick_op_set_output(ctx, 0, x->type, rank, dims);
}

static wick_status select_invoke(wick_op_ctx *ctx) {
  const wick_select_shape *s = wick_op_data(ctx);
  wick_tensor *cond = wick_op_input(ctx, 0), *x = wick_op_input(ctx, 1);
  wick_tensor *y = wick_op_input(ctx, 2), *out = wick_op_output(ctx, 0);
  if (out->bytes == 0) return WICK_OK;
  if (!wick_op_force_reference(ctx)) { /* row-wise walk, same copies (src/kernels/logical.c) */
    wick_select_rows(wick_dtype_size(x->type), s, cond->data, x->data, y->data, out->data);
    return WICK_OK;
  }
  wick_select__reference(wick_dtype_size(x->type), s, cond->data, x->data, y->data, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_select = {"SELECT",       WICK_BUILTIN_SELECT, 4,
                                    select_prepare, select_invoke,       0};
const wick_op_def wick_op_select_v2 = {"SELECT_V2",    WICK_BUILTIN_SELECT_V2, 2,
                                       select_prepare, select_invoke,          0};
