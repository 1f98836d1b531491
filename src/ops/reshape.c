/*
 * reshape.c — RESHAPE: same bytes, new shape.
 *
 * The new shape comes from the shape input (int32/int64, 1-D) when present,
 * else from the new_shape option. An empty shape input means a scalar, as in
 * LiteRT; only when the input does not hold exactly one element (LiteRT then
 * fails) does wick fall back to new_shape, which legacy converters paired
 * with a dummy empty shape tensor. One dimension may be -1 (inferred). When
 * the shape input is only known at run time the op is prepared at invoke, and
 * bad values fail then with WICK_ERR_INVALID_INPUT. The rank is capped at
 * WICK_MAX_RANK before anything is written.
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
  int64_t total = wick_tensor_elements(in), known = 1;
  /* Values read from a run-time shape tensor are input errors, not model errors. */
  wick_status bad = WICK_ERR_MALFORMED_MODEL;
  bool legacy_empty = shape != NULL && shape->rank == 1 && shape->dims[0] == 0 &&
                      ctx->params->int_list.present && total != 1;
  if (shape != NULL && !legacy_empty) {
    WICK_CHECK(ctx, wick_is_int_index_type(shape->type), "shape input must be int32 or int64");
    int64_t n = wick_tensor_elements(shape);
    /* An empty constant has no bytes (data stays NULL): nothing to wait for. */
    if (n > 0 && shape->data == NULL) return WICK_STATUS_DEFER;
    WICK_CHECK(ctx, shape->rank <= 1, "shape input must be 1-D, not rank %d", shape->rank);
    WICK_CHECK(ctx, n <= WICK_MAX_RANK, "new rank %lld exceeds wick's maximum %d", (long long)n,
               WICK_MAX_RANK);
    if (!shape->known) bad = WICK_ERR_INVALID_INPUT;
    rank = (int32_t)n;
    for (int32_t i = 0; i < rank; i++) want[i] = wick_read_int(shape, i);
  } else {
    const wick_int_list *l = &ctx->params->int_list;
    WICK_CHECK(ctx, l->present || shape != NULL, "has neither a shape input nor new_shape");
    rank = l->count;
    for (int32_t i = 0; i < rank; i++) want[i] = l->values[i];
  }
#define VALUE_CHECK(cond, ...)                               \
  do {                                                       \
    if (!(cond)) return wick_op_fail(ctx, bad, __VA_ARGS__); \
  } while (0)
  int32_t infer = -1;
  for (int32_t i = 0; i < rank; i++) {
    if (want[i] == -1) {
      VALUE_CHECK(infer < 0, "new shape has more than one -1");
      infer = i;
      continue;
    }
    VALUE_CHECK(want[i] >= 0 && want[i] <= INT32_MAX, "new shape dimension %d is %lld", i,
                (long long)want[i]);
    VALUE_CHECK(wick_mul_i64(known, want[i], &known) && known <= WICK_MAX_ELEMENTS,
                "new shape's element count overflows");
  }
  if (infer >= 0) {
    VALUE_CHECK(known > 0 && total % known == 0,
                "cannot infer the -1 dimension: %lld elements into blocks of %lld",
                (long long)total, (long long)known);
    want[infer] = total / known;
    known = total;
  }
  VALUE_CHECK(known == total, "cannot reshape %lld elements into %lld", (long long)total,
              (long long)known);
#undef VALUE_CHECK
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank; i++) dims[i] = (int32_t)want[i];
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

static wick_status reshape_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (out->data != in->data && in->bytes) memcpy(out->data, in->data, in->bytes);
  return WICK_OK;
}

const wick_op_def wick_op_reshape = {"RESHAPE",       WICK_BUILTIN_RESHAPE, 1,
                                     reshape_prepare, reshape_invoke,       WICK_OP_ALIAS};
