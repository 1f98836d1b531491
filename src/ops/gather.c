/*
 * gather.c — GATHER, GATHER_ND and EMBEDDING_LOOKUP: copy rows chosen by an
 * index tensor. Any fixed-size element type; indices int16, int32 or int64.
 *
 *   GATHER(params, indices)        axis (negative counts from the end) and
 *                                  batch_dims (negative counts from the end
 *                                  of indices' rank; <= axis; the leading
 *                                  batch dims of params and indices agree).
 *                                  out = params[:axis] + indices[batch_dims:]
 *                                        + params[axis+1:]
 *   GATHER_ND(params, indices)     indices [..., depth], depth <= params'
 *                                  rank; out = indices[:-1] + params[depth:]
 *   SCATTER_ND(indices, updates, shape)
 *                                  the inverse of GATHER_ND into zeros of
 *                                  `shape` (int32 like indices, 1-D; a
 *                                  run-time shape defers the op): indices
 *                                  [..., depth], updates = indices[:-1] +
 *                                  shape[depth:]; duplicate indices add up
 *                                  (bool: OR), as in LiteRT. Updates float32,
 *                                  int8, uint8, int32, int64, bool (LiteRT's
 *                                  set). LiteRT checks only that the flat
 *                                  offset lies inside the output; wick checks
 *                                  every index against its dimension.
 *   EMBEDDING_LOOKUP(ids, values)  ids 1-D, values rank >= 2; a raw row copy,
 *                                  or, for int8 values with a float32 output,
 *                                  the "hybrid" lookup that dequantizes
 *                                  q * scale (per tensor, or per row with
 *                                  quantized_dimension 0; zero point 0).
 *
 * Every index must lie in [0, dim): a negative or too large index is a
 * malformed model when the indices are constant (checked at prepare) and
 * WICK_ERR_INVALID_INPUT at invoke when they are run-time data — never a
 * wrapped or clamped read. Indices are checked in full before any copying.
 */
#include "format/schema.h"
#include "ops/movement.h"

typedef struct gather_data {
  bool checked; /* indices were constant and checked at prepare */
} gather_data;

static bool is_index_type(wick_dtype t) {
  return t == WICK_DTYPE_INT16 || t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64;
}

/* Checks indices viewed as [rows, depth]: column k must be in [0, bound[k]). */
static wick_status check_indices(const wick_op_ctx *ctx, wick_status st, const wick_tensor *idx,
                                 int64_t rows, int32_t depth, const int64_t *bound) {
  for (int64_t r = 0; r < rows; r++) {
    for (int32_t k = 0; k < depth; k++) {
      int64_t v = wick_read_index__reference(idx->type, idx->data, r * depth + k);
      if (v < 0 || v >= bound[k])
        return wick_op_fail(ctx, st,
                            "index %lld (element %lld of the indices) is outside [0, %lld)",
                            (long long)v, (long long)(r * depth + k), (long long)bound[k]);
    }
  }
  return WICK_OK;
}

static gather_data *new_gather_data(wick_op_ctx *ctx, const wick_tensor *indices) {
  gather_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d != NULL) {
    d->checked = !movement_unknown(ctx, indices);
    wick_op_set_data(ctx, d);
  }
  return d;
}

/* ---------------------------------------------------------------- GATHER */

typedef struct gather_view {
  int32_t axis, batch_dims;
  int64_t batch, outer, axis_size, inner, count;
} gather_view;

static wick_status gather_view_of(wick_op_ctx *ctx, const wick_tensor *params,
                                  const wick_tensor *indices, gather_view *v) {
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, params->rank, &v->axis));
  WICK_CHECK(ctx, params->rank > 0, "params must have rank >= 1");
  int64_t bd = ctx->params->batch_dims;
  if (bd < 0) bd += indices->rank;
  WICK_CHECK(ctx, bd >= 0 && bd <= indices->rank && bd <= v->axis,
             "batch_dims %d must be in [0, min(axis %d, indices rank %d)]", ctx->params->batch_dims,
             v->axis, indices->rank);
  v->batch_dims = (int32_t)bd;
  v->batch = v->outer = v->inner = v->count = 1;
  for (int32_t i = 0; i < v->batch_dims; i++) {
    WICK_CHECK(ctx, params->dims[i] == indices->dims[i],
               "batch dimension %d differs: params %d, indices %d", i, params->dims[i],
               indices->dims[i]);
    v->batch *= params->dims[i];
  }
  for (int32_t i = v->batch_dims; i < v->axis; i++) v->outer *= params->dims[i];
  for (int32_t i = v->axis + 1; i < params->rank; i++) v->inner *= params->dims[i];
  for (int32_t i = v->batch_dims; i < indices->rank; i++) v->count *= indices->dims[i];
  v->axis_size = params->dims[v->axis];
  return WICK_OK;
}

static wick_status gather_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *params, *indices;
  WICK_TRY(wick_require_input(ctx, 0, &params));
  WICK_TRY(wick_require_input(ctx, 1, &indices));
  WICK_TRY(movement_check_type(ctx, params, "params"));
  WICK_CHECK(ctx, is_index_type(indices->type), "indices must be int16, int32 or int64, not %s",
             wick_dtype_name(indices->type));
  gather_view v;
  WICK_TRY(gather_view_of(ctx, params, indices, &v));
  int32_t rank = params->rank - 1 + indices->rank - v.batch_dims;
  WICK_CHECK(ctx, rank <= WICK_MAX_RANK, "output rank %d exceeds wick's maximum %d", rank,
             WICK_MAX_RANK);
  int32_t dims[WICK_MAX_RANK], r = 0;
  for (int32_t i = 0; i < v.axis; i++) dims[r++] = params->dims[i];
  for (int32_t i = v.batch_dims; i < indices->rank; i++) dims[r++] = indices->dims[i];
  for (int32_t i = v.axis + 1; i < params->rank; i++) dims[r++] = params->dims[i];
  if (new_gather_data(ctx, indices) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  if (!movement_unknown(ctx, indices))
    WICK_TRY(check_indices(ctx, movement_value_status(ctx), indices, v.batch * v.count, 1,
                           &v.axis_size));
  return wick_op_set_output(ctx, 0, params->type, rank, dims);
}

static wick_status gather_invoke(wick_op_ctx *ctx) {
  const gather_data *d = wick_op_data(ctx);
  wick_tensor *params = wick_op_input(ctx, 0), *indices = wick_op_input(ctx, 1);
  wick_tensor *out = wick_op_output(ctx, 0);
  gather_view v;
  WICK_TRY(gather_view_of(ctx, params, indices, &v));
  if (!d->checked)
    WICK_TRY(
        check_indices(ctx, WICK_ERR_INVALID_INPUT, indices, v.batch * v.count, 1, &v.axis_size));
  if (out->bytes == 0) return WICK_OK;
  wick_gather__reference(wick_dtype_size(params->type), v.batch, v.outer, v.axis_size, v.inner,
                         v.count, params->data, indices->type, indices->data, out->data);
  return WICK_OK;
}

/* ---------------------------------------------------------------- GATHER_ND */

typedef struct gather_nd_view {
  int32_t depth;
  int64_t rows, slice;
  int64_t strides[WICK_MAX_RANK], bounds[WICK_MAX_RANK];
} gather_nd_view;

static wick_status gather_nd_view_of(wick_op_ctx *ctx, const wick_tensor *params,
                                     const wick_tensor *indices, gather_nd_view *v) {
  WICK_CHECK(ctx, indices->rank >= 1, "indices must have rank >= 1");
  int32_t depth = indices->dims[indices->rank - 1];
  WICK_CHECK(ctx, depth <= params->rank,
             "indices' last dimension (%d) is larger than params' rank %d", depth, params->rank);
  v->depth = depth;
  movement_strides(params->rank, params->dims, v->strides);
  for (int32_t k = 0; k < depth; k++) v->bounds[k] = params->dims[k];
  v->rows = 1;
  for (int32_t i = 0; i < indices->rank - 1; i++) v->rows *= indices->dims[i];
  v->slice = 1;
  for (int32_t i = depth; i < params->rank; i++) v->slice *= params->dims[i];
  return WICK_OK;
}

static wick_status gather_nd_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *params, *indices;
  WICK_TRY(wick_require_input(ctx, 0, &params));
  WICK_TRY(wick_require_input(ctx, 1, &indices));
  WICK_TRY(movement_check_type(ctx, params, "params"));
  WICK_CHECK(ctx, is_index_type(indices->type), "indices must be int16, int32 or int64, not %s",
             wick_dtype_name(indices->type));
  gather_nd_view v;
  WICK_TRY(gather_nd_view_of(ctx, params, indices, &v));
  int32_t rank = indices->rank - 1 + params->rank - v.depth;
  WICK_CHECK(ctx, rank <= WICK_MAX_RANK, "output rank %d exceeds wick's maximum %d", rank,
             WICK_MAX_RANK);
  int32_t dims[WICK_MAX_RANK], r = 0;
  for (int32_t i = 0; i < indices->rank - 1; i++) dims[r++] = indices->dims[i];
  for (int32_t i = v.depth; i < params->rank; i++) dims[r++] = params->dims[i];
  if (new_gather_data(ctx, indices) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  if (!movement_unknown(ctx, indices))
    WICK_TRY(check_indices(ctx, movement_value_status(ctx), indices, v.rows, v.depth, v.bounds));
  return wick_op_set_output(ctx, 0, params->type, rank, dims);
}

static wick_status gather_nd_invoke(wick_op_ctx *ctx) {
  const gather_data *d = wick_op_data(ctx);
  wick_tensor *params = wick_op_input(ctx, 0), *indices = wick_op_input(ctx, 1);
  wick_tensor *out = wick_op_output(ctx, 0);
  gather_nd_view v;
  WICK_TRY(gather_nd_view_of(ctx, params, indices, &v));
  if (!d->checked)
    WICK_TRY(check_indices(ctx, WICK_ERR_INVALID_INPUT, indices, v.rows, v.depth, v.bounds));
  if (out->bytes == 0) return WICK_OK;
  wick_gather_nd__reference(wick_dtype_size(params->type), v.rows, v.depth, v.strides, v.slice,
                            params->data, indices->type, indices->data, out->data);
  return WICK_OK;
}

/* ---------------------------------------------------------------- SCATTER_ND */

/* SCATTER_ND's geometry, recomputed at invoke from the (final) shapes. */
static wick_status scatter_nd_view_of(wick_op_ctx *ctx, const wick_tensor *indices,
                                      const wick_tensor *updates, const wick_tensor *out,
                                      gather_nd_view *v) {
  WICK_CHECK(ctx, indices->rank >= 1, "indices must have rank >= 1");
  int32_t outer = indices->rank - 1, depth = indices->dims[outer];
  WICK_CHECK(ctx, depth <= out->rank, "indices' last dimension (%d) exceeds the output rank %d",
             depth, out->rank);
  WICK_CHECK(ctx, updates->rank == outer + out->rank - depth,
             "updates have rank %d; indices %d-D with depth %d into a rank-%d output need %d",
             updates->rank, indices->rank, depth, out->rank, outer + out->rank - depth);
  for (int32_t i = 0; i < outer; i++)
    WICK_CHECK(ctx, updates->dims[i] == indices->dims[i],
               "updates dimension %d is %d but indices dimension %d is %d", i, updates->dims[i], i,
               indices->dims[i]);
  for (int32_t i = depth; i < out->rank; i++)
    WICK_CHECK(ctx, updates->dims[outer + i - depth] == out->dims[i],
               "updates dimension %d is %d but the output shape has %d there", outer + i - depth,
               updates->dims[outer + i - depth], out->dims[i]);
  v->depth = depth;
  movement_strides(out->rank, out->dims, v->strides);
  for (int32_t k = 0; k < depth; k++) v->bounds[k] = out->dims[k];
  v->rows = 1;
  for (int32_t i = 0; i < outer; i++) v->rows *= indices->dims[i];
  v->slice = 1;
  for (int32_t i = depth; i < out->rank; i++) v->slice *= out->dims[i];
  return WICK_OK;
}

static wick_status scatter_nd_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 3, 1));
  wick_tensor *indices, *updates, *shape;
  WICK_TRY(wick_require_input(ctx, 0, &indices));
  WICK_TRY(wick_require_input(ctx, 1, &updates));
  WICK_TRY(wick_require_input(ctx, 2, &shape));
  wick_dtype t = updates->type;
  WICK_CHECK_SUPPORTED(ctx,
                       t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 ||
                           t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64 || t == WICK_DTYPE_BOOL,
                       "updates of type %s are not supported", wick_dtype_name(t));
  WICK_CHECK_SUPPORTED(ctx, indices->type == WICK_DTYPE_INT32, "indices must be int32, not %s",
                       wick_dtype_name(indices->type));
  WICK_CHECK(ctx, shape->type == indices->type, "shape (%s) and indices (%s) must have one type",
             wick_dtype_name(shape->type), wick_dtype_name(indices->type));
  WICK_CHECK(ctx, shape->rank == 1, "shape must be 1-D, not rank %d", shape->rank);
  WICK_CHECK(ctx, shape->dims[0] >= 1 && shape->dims[0] <= WICK_MAX_RANK,
             "shape has %d entries; the output rank must be in [1, %d]", shape->dims[0],
             WICK_MAX_RANK);
  if (movement_unknown(ctx, shape)) return WICK_STATUS_DEFER;
  int32_t rank = shape->dims[0], dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < rank; i++) {
    int64_t d = wick_read_int(shape, i);
    WICK_CHECK_VALUE(ctx, d >= 0 && d <= INT32_MAX, "shape[%d] = %lld is not a valid size", i,
                     (long long)d);
    dims[i] = (int32_t)d;
  }
  WICK_TRY(wick_op_set_output(ctx, 0, t, rank, dims));
  gather_nd_view v;
  WICK_TRY(scatter_nd_view_of(ctx, indices, updates, wick_op_output(ctx, 0), &v));
  if (new_gather_data(ctx, indices) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  if (!movement_unknown(ctx, indices))
    WICK_TRY(check_indices(ctx, movement_value_status(ctx), indices, v.rows, v.depth, v.bounds));
  return WICK_OK;
}

static wick_status scatter_nd_invoke(wick_op_ctx *ctx) {
  const gather_data *d = wick_op_data(ctx);
  wick_tensor *indices = wick_op_input(ctx, 0), *updates = wick_op_input(ctx, 1);
  wick_tensor *out = wick_op_output(ctx, 0);
  gather_nd_view v;
  WICK_TRY(scatter_nd_view_of(ctx, indices, updates, out, &v));
  if (!d->checked)
    WICK_TRY(check_indices(ctx, WICK_ERR_INVALID_INPUT, indices, v.rows, v.depth, v.bounds));
  if (out->bytes == 0) return WICK_OK;
  wick_scatter_nd__reference(out->type, v.rows, v.depth, v.strides, v.slice,
                             wick_tensor_elements(out), indices->type, indices->data, updates->data,
                             out->data);
  return WICK_OK;
}

/* ---------------------------------------------------------------- EMBEDDING_LOOKUP */

static bool embedding_is_hybrid(const wick_tensor *values, const wick_tensor *out) {
  return values->type != out->type;
}

static wick_status embedding_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *ids, *values;
  WICK_TRY(wick_require_input(ctx, 0, &ids));
  WICK_TRY(wick_require_input(ctx, 1, &values));
  WICK_TRY(movement_check_type(ctx, values, "values"));
  WICK_CHECK(ctx, ids->type == WICK_DTYPE_INT32 || ids->type == WICK_DTYPE_INT64,
             "ids must be int32 or int64, not %s", wick_dtype_name(ids->type));
  WICK_CHECK(ctx, ids->rank == 1, "ids must be 1-D, not rank %d", ids->rank);
  WICK_CHECK(ctx, values->rank >= 2, "values must have rank >= 2, not %d", values->rank);
  wick_tensor *out = wick_op_output(ctx, 0);
  WICK_CHECK(ctx, out != NULL, "output 0 is missing");
  if (embedding_is_hybrid(values, out)) {
    WICK_CHECK_SUPPORTED(ctx, values->type == WICK_DTYPE_INT8 && out->type == WICK_DTYPE_FLOAT32,
                         "%s values with a %s output are not supported (raw copy needs equal "
                         "types; the hybrid lookup is int8 -> float32)",
                         wick_dtype_name(values->type), wick_dtype_name(out->type));
    const wick_quant *q = &values->info->quant;
    WICK_CHECK(ctx,
               q->count == 1 ||
                   (q->count == (uint32_t)values->dims[0] && q->quantized_dimension == 0),
               "hybrid values need one scale or one per row (quantized_dimension 0)");
    for (uint32_t i = 0; i < q->count; i++)
      WICK_CHECK(ctx, q->zero_point[i] == 0, "hybrid values must be symmetric (zero point 0)");
  }
  int32_t dims[WICK_MAX_RANK];
  memcpy(dims, values->dims, sizeof dims);
  dims[0] = ids->dims[0];
  if (new_gather_data(ctx, ids) == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  int64_t rows = values->dims[0];
  if (!movement_unknown(ctx, ids))
    WICK_TRY(check_indices(ctx, movement_value_status(ctx), ids, ids->dims[0], 1, &rows));
  return wick_op_set_output(ctx, 0, out->type, values->rank, dims);
}

static wick_status embedding_invoke(wick_op_ctx *ctx) {
  const gather_data *d = wick_op_data(ctx);
  wick_tensor *ids = wick_op_input(ctx, 0), *values = wick_op_input(ctx, 1);
  wick_tensor *out = wick_op_output(ctx, 0);
  int64_t rows = values->dims[0], count = ids->dims[0];
  if (!d->checked) WICK_TRY(check_indices(ctx, WICK_ERR_INVALID_INPUT, ids, count, 1, &rows));
  if (out->bytes == 0) return WICK_OK;
  int64_t cols = wick_tensor_elements(values) / (rows > 0 ? rows : 1);
  if (embedding_is_hybrid(values, out)) {
    const wick_quant *q = &values->info->quant;
    wick_i8_embedding_hybrid__reference(count, cols, ids->type, ids->data, values->data, q->scale,
                                        q->count > 1, out->data);
  } else {
    wick_gather__reference(wick_dtype_size(values->type), 1, 1, rows, cols, count, values->data,
                           ids->type, ids->data, out->data);
  }
  return WICK_OK;
}

const wick_op_def wick_op_gather = {"GATHER",       WICK_BUILTIN_GATHER, 7,
                                    gather_prepare, gather_invoke,       WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_gather_nd = {
    "GATHER_ND",       WICK_BUILTIN_GATHER_ND, 5,
    gather_nd_prepare, gather_nd_invoke,       WICK_OP_REFERENCE_KERNELS};
const wick_op_def wick_op_embedding_lookup = {
    "EMBEDDING_LOOKUP", WICK_BUILTIN_EMBEDDING_LOOKUP, 4, embedding_prepare, embedding_invoke, 0};
const wick_op_def wick_op_scatter_nd = {
    "SCATTER_ND",       WICK_BUILTIN_SCATTER_ND, 1,
    scatter_nd_prepare, scatter_nd_invoke,       WICK_OP_REFERENCE_KERNELS};
