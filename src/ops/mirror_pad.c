/*
 * mirror_pad.c — MIRROR_PAD: pad by reflecting the input, any fixed-size
 * type.
 *
 * paddings is an int32/int64 [rank, 2] tensor of (before, after) counts,
 * all >= 0. REFLECT (mode 0) mirrors without repeating the edge, so each
 * count must be < the dim; SYMMETRIC (mode 1) repeats the edge, so each
 * count must be <= the dim. (A dim of size 0 takes no padding.) A run-time
 * paddings tensor defers the op to invoke. Kernel: mirror_pad.c in
 * src/kernels/reference, which maps every output index back into the input.
 */
#include "format/schema.h"
#include "ops/movement.h"

typedef struct mirror_pad_data {
  int32_t before[WICK_MAX_RANK];
} mirror_pad_data;

static wick_status mirror_pad_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *pads;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &pads));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int32_t mode = ctx->params->mode;
  WICK_CHECK(ctx, mode == 0 || mode == 1, "mode %d is neither REFLECT (0) nor SYMMETRIC (1)", mode);
  WICK_CHECK(ctx, wick_is_int_index_type(pads->type), "paddings must be int32 or int64");
  WICK_CHECK(ctx, pads->rank == 2 && pads->dims[0] == in->rank && pads->dims[1] == 2,
             "paddings must be [%d, 2]", in->rank);
  if (movement_unknown(ctx, pads)) return WICK_STATUS_DEFER;
  mirror_pad_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < in->rank; i++) {
    int64_t dim = in->dims[i], limit = mode == 0 ? dim - 1 : dim;
    for (int k = 0; k < 2; k++) {
      int64_t v = wick_read_int(pads, 2 * i + k);
      WICK_CHECK_VALUE(ctx, v >= 0 && (v == 0 || v <= limit),
                       "%s padding %lld of dimension %d (size %lld) must be in [0, %lld] for %s",
                       k ? "after" : "before", (long long)v, i, (long long)dim,
                       (long long)(limit > 0 ? limit : 0), mode == 0 ? "REFLECT" : "SYMMETRIC");
    }
    int64_t b = wick_read_int(pads, 2 * i), a = wick_read_int(pads, 2 * i + 1);
    int64_t size = dim + b + a; /* each term <= dim < 2^31 */
    WICK_CHECK(ctx, size <= INT32_MAX, "padded dimension %d overflows", i);
    d->before[i] = (int32_t)b;
    dims[i] = (int32_t)size;
  }
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, in->type, in->rank, dims);
}

static wick_status mirror_pad_invoke(wick_op_ctx *ctx) {
  const mirror_pad_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (out->bytes == 0) return WICK_OK;
  wick_mirror_pad__reference(wick_dtype_size(in->type), in->rank, in->dims, d->before, out->dims,
                             ctx->params->mode == 1, in->data, out->data);
  return WICK_OK;
}

const wick_op_def wick_op_mirror_pad = {
    "MIRROR_PAD",       WICK_BUILTIN_MIRROR_PAD, 3,
    mirror_pad_prepare, mirror_pad_invoke,       WICK_OP_REFERENCE_KERNELS};
