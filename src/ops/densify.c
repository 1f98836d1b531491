/*
 * densify.c — DENSIFY: the dense form of a sparse constant (Tensor.sparsity,
 * verified at load by src/format/reader.c), with the input's shape and type.
 *
 * Any element type works: stored values are copied as bytes, and elements
 * that are not stored read as zero bytes (float 0, integer 0 — not the zero
 * point, as in LiteRT). The input is a constant, so the interpreter folds
 * the node at prepare: the dense output becomes a constant for the ops that
 * read it (in real files a DEQUANTIZE of fp16 weights, then a convolution).
 * A dense input (no sparsity) is copied unchanged.
 * Next: src/format/sparse.c (the densify walk).
 */
#include <string.h>

#include "format/schema.h"
#include "ops/op_common.h"

static wick_status densify_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  WICK_CHECK_SUPPORTED(ctx, wick_dtype_size(in->type) != 0, "input type %s is not supported",
                       wick_dtype_name(in->type));
  const wick_tensor_info *info = in->info;
  WICK_CHECK_SUPPORTED(ctx, info->sparsity == NULL || info->data != NULL,
                       "input 0 (%s) is sparse but holds no constant data", info->name);
  return wick_op_set_output(ctx, 0, in->type, in->rank, in->dims);
}

static wick_status densify_invoke(wick_op_ctx *ctx) {
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (in->info->sparsity != NULL)
    wick_sparse_densify(in->info, wick_dtype_size(in->type), out->data);
  else
    memcpy(out->data, in->data, out->bytes);
  return WICK_OK;
}

const wick_op_def wick_op_densify = {"DENSIFY",       WICK_BUILTIN_DENSIFY, 1,
                                     densify_prepare, densify_invoke,       0};
