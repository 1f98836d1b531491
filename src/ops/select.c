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
 * broadcast dim), run by wick_select__reference. The optimized path walks
 * the same iteration with its dimensions merged where every operand steps
 * through them as one (MiniLM's [4, 12, 32, 32] scores with a [4, 1, 32, 32]
 * mask: rows of 1024) and hands rows of bytes to the CPU's vector blend
 * (kernels.h's select8).
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "ops/movement.h"

typedef struct select_data {
  wick_select_shape shape;  /* the broadcast iteration (the reference kernel's) */
  wick_select_shape merged; /* the same with dimensions merged (select_rows) */
  wick_select8_fn select8;  /* byte rows: the vector blend, or NULL */
} select_data;

/* Whether outer dimension a and inner dimension b of s are one walk for every operand. */
static bool walk_as_one(const wick_select_shape *s, int32_t a, int32_t b) {
  return s->cond_strides[a] == s->cond_strides[b] * s->dims[b] &&
         s->x_strides[a] == s->x_strides[b] * s->dims[b] &&
         s->y_strides[a] == s->y_strides[b] * s->dims[b];
}

/* s with its dimensions of size 1 dropped and neighbours merged where walk_as_one. */
static void merge_dims(const wick_select_shape *s, wick_select_shape *m) {
  memset(m, 0, sizeof *m);
  int32_t r = 0;
  for (int32_t k = 0; k < s->rank; k++) {
    if (s->dims[k] == 1) continue;
    m->dims[r] = s->dims[k];
    m->cond_strides[r] = s->cond_strides[k];
    m->x_strides[r] = s->x_strides[k];
    m->y_strides[r] = s->y_strides[k];
    if (r > 0 && walk_as_one(m, r - 1, r)) {
      m->dims[r - 1] *= m->dims[r];
      m->cond_strides[r - 1] = m->cond_strides[r];
      m->x_strides[r - 1] = m->x_strides[r];
      m->y_strides[r - 1] = m->y_strides[r];
    } else {
      r++;
    }
  }
  if (r == 0 && s->rank > 0) { /* every dimension 1: one element */
    m->dims[0] = 1;
    r = 1;
  }
  m->rank = r;
}

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
  select_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  memset(d, 0, sizeof *d);
  wick_op_set_data(ctx, d);
  wick_select_shape *s = &d->shape;
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
  merge_dims(s, &d->merged);
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  if (kern != NULL && wick_dtype_size(x->type) == 1) d->select8 = kern->select8;
  if (d->select8 != NULL) wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "byte blend rows");
  return wick_op_set_output(ctx, 0, x->type, rank, dims);
}

static wick_status select_invoke(wick_op_ctx *ctx) {
  const select_data *d = wick_op_data(ctx);
  wick_tensor *cond = wick_op_input(ctx, 0), *x = wick_op_input(ctx, 1);
  wick_tensor *y = wick_op_input(ctx, 2), *out = wick_op_output(ctx, 0);
  if (out->bytes == 0) return WICK_OK;
  if (!wick_op_force_reference(ctx)) { /* row-wise walk, same copies (src/kernels/logical.c) */
    wick_select_rows(wick_dtype_size(x->type), &d->merged, cond->data, x->data, y->data, out->data,
                     d->select8);
    return WICK_OK;
  }
  wick_select__reference(wick_dtype_size(x->type), &d->shape, cond->data, x->data, y->data,
                         out->data);
  return WICK_OK;
}

const wick_op_def wick_op_select = {"SELECT",       WICK_BUILTIN_SELECT, 4,
                                    select_prepare, select_invoke,       0};
const wick_op_def wick_op_select_v2 = {"SELECT_V2",    WICK_BUILTIN_SELECT_V2, 2,
                                       select_prepare, select_invoke,          0};
