/*
 * topk.c — TOPK_V2: the k largest entries of each row (the last axis) and
 * their indices, largest first, ties by the smaller index (LiteRT's order).
 *
 * Inputs: the data (float32, uint8, int8, int16, int32, int64, rank >= 1;
 * quantized types keep their order under a positive scale) and k (int32 or
 * int16, one value). Outputs: values [..., k] of the input's type and
 * indices [..., k], int32 or int16 as the file declares them (int16 only
 * when every index fits). k must lie in [0, last dimension]: a constant k outside is a
 * malformed model, a run-time k (the op is prepared again at invoke) an
 * invalid input.
 *
 * Next: src/kernels/reference/topk.c.
 */
#include "format/schema.h"
#include "kernels/reference/reference.h"
#include "ops/movement.h"

static wick_status topk_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 2));
  wick_tensor *in, *k_t;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &k_t));
  wick_dtype t = in->type;
  WICK_CHECK_SUPPORTED(ctx,
                       t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_UINT8 || t == WICK_DTYPE_INT8 ||
                           t == WICK_DTYPE_INT16 || t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64,
                       "input type %s is not supported", wick_dtype_name(t));
  WICK_CHECK(ctx, k_t->type == WICK_DTYPE_INT32 || k_t->type == WICK_DTYPE_INT16,
             "k must be int32 or int16, not %s", wick_dtype_name(k_t->type));
  wick_tensor *idx_out = wick_op_output(ctx, 1);
  WICK_CHECK(ctx, idx_out != NULL, "output 1 is missing");
  wick_dtype index_type = idx_out->type;
  WICK_CHECK(ctx, index_type == WICK_DTYPE_INT32 || index_type == WICK_DTYPE_INT16,
             "the indices output must be int32 or int16, not %s", wick_dtype_name(index_type));
  WICK_CHECK(ctx, wick_tensor_elements(k_t) == 1, "k must hold one value, not %lld",
             (long long)wick_tensor_elements(k_t));
  WICK_CHECK(ctx, in->rank >= 1, "input must have rank >= 1");
  if (movement_unknown(ctx, k_t)) return WICK_STATUS_DEFER;
  int64_t k = wick_read_int(k_t, 0);
  int32_t row_size = in->dims[in->rank - 1];
  WICK_CHECK_VALUE(ctx, k >= 0 && k <= row_size, "k = %lld is outside [0, %d] (the last dimension)",
                   (long long)k, row_size);
  WICK_CHECK(ctx, index_type != WICK_DTYPE_INT16 || row_size <= INT16_MAX + 1,
             "int16 indices cannot number a last dimension of %d", row_size);
  int32_t dims[WICK_MAX_RANK];
  memcpy(dims, in->dims, sizeof dims);
  dims[in->rank - 1] = (int32_t)k;
  wick_op_request_scratch(ctx, 2 * (size_t)row_size * sizeof(int32_t));
  WICK_TRY(wick_op_set_output(ctx, 0, t, in->rank, dims));
  return wick_op_set_output(ctx, 1, index_type, in->rank, dims);
}

static wick_status topk_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0);
  wick_tensor *values = wick_op_output(ctx, 0), *indices = wick_op_output(ctx, 1);
  int32_t row_size = in->dims[in->rank - 1], k = values->dims[values->rank - 1];
  if (k == 0) return WICK_OK;
  int64_t rows = wick_tensor_elements(in) / row_size;
  wick_topk__reference(in->type, rows, row_size, k, in->data, values->data, indices->type,
                       indices->data, wick_op_scratch(ctx));
  return WICK_OK;
}

const wick_op_def wick_op_topk_v2 = {"TOPK_V2",    WICK_BUILTIN_TOPK_V2, 3,
                                     topk_prepare, topk_invoke,          WICK_OP_REFERENCE_KERNELS};
