/*
 * reshape.c — RESHAPE: same bytes, new shape.
 *
 * The new shape comes from the shape input (int32/int64, 1-D) when present,
 * else from the new_shape option. One dimension may be -1 (inferred). When
 * the shape input is only known at run time the op is prepared at invoke.
 * The rank is capped at WICK_MAX_RANK before anything is written.
 */
#include "format/schema.h"
#include "ops/op_common.h"

static wick_status reshape_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 2, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  wick_tensor *shape = wick_op_input(ctx, 1);
  int64_t want[WICK_MAX_RANK];
  int32_t rank = 0;
  if (shape != NULL && !(shape->rank == 1 && shape->dims[0] == 0 && ctx->params->int_list.present)) {
    WICK_CHECK(ctx, wick_is_int_index_type(shape->type), "shape input must be int32 or int64");
    if (shape->data == NULL) return WICK_STATUS_DEFER;
    int64_t n = wick_tensor_elements(shape);
    WICK_CHECK(ctx, shape->rank <= 1, "shape input must be 1-D, not rank %d", shape->rank);
    WICK_CHECK(ctx, n <= WICK_MAX_RANK, "new rank %lld exceeds wick's maximum %d", (long long)n,
               WICK_MAX_RANK);
    rank = (int32_t)n;
    for (int32_t i = 0; i < rank; i++) want[i] = wick_read_int(shape, i);
  } else {
    const wick_int_list *l = &ctx->params->int_list;
    WICK_CHECK(ctx, l->present || shape != NULL, "has neither a shape input nor new_shape");
    rank = l->count;
    for (int32_t i = 0; i < rank; i++) want[i] = l->values[i];
  }
  int64_t total = wick_tensor_elements(in), known = 1;
  int32_t infer = -1;
  for (int32_t i = 0; i < rank; i++) {
    if (want[i] == -1) {
      WICK_CHECK(ctx, infer < 0, "new shape has more than one -1");
      infer = i;
      continue;
    }
    WICK_CHECK(ctx, want[i] >= 0 && want[i] <= INT32_MAX, "new shape dimension %d is %lld", i,
               (long long)want[i]);
    WICK_CHECK(ctx, wick_mul_i64(known, want[i], &known) && known <= WICK_MAX_ELEMENTS,
               "new shape's element count overflows");
  }
  if (infer >= 0) {
    WICK_CHECK(ctx, known > 0 && total % known == 0,
               "cannot infer the -1 dimension: %lld elements into blocks of %lld",
               (long long)total, (long long)known);
    want[infer] = total / known;
    known = total;
  }
  WICK_CHECK(ctx, known == total, "cannot reshape %lld elements into %lld", (long long)total,
             (long long)known);
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank; i++) dims[i] = (int32_t)want[i];
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

static wick_status reshape_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (out->data != in->data && in->bytes) memcpy(out->data, in->data, in->bytes);
  return WICK_OK;
}

const wick_op_def wick_op_reshape = {"RESHAPE", WICK_BUILTIN_RESHAPE, 1, reshape_prepare,
                                     reshape_invoke};
