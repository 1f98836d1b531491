/*
 * pad.c — PAD and PADV2: constant padding, any fixed-size type.
 *
 * paddings is an int32/int64 [rank, 2] tensor of (before, after) counts, all
 * >= 0. PAD fills with zero (the zero point for quantized tensors); PADV2
 * fills with its scalar third input. Implementation: fill the output, then
 * copy the input into place in runs as long as the padding allows.
 */
#include "format/schema.h"
#include "ops/op_common.h"

typedef struct pad_data {
  int32_t before[WICK_MAX_RANK];
} pad_data;

static wick_status pad_prepare(wick_op_ctx *ctx) {
  bool v2 = ctx->node->op->builtin == WICK_BUILTIN_PADV2;
  WICK_TRY(wick_check_arity(ctx, 2, v2 ? 3 : 2, 1));
  wick_tensor *in, *pads;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &pads));
  WICK_CHECK(ctx, wick_dtype_size(in->type) > 0, "input type %s has no fixed size",
             wick_dtype_name(in->type));
  WICK_CHECK(ctx, wick_is_int_index_type(pads->type), "paddings must be int32 or int64");
  WICK_CHECK(ctx, pads->rank == 2 && pads->dims[0] == in->rank && pads->dims[1] == 2,
             "paddings must be [%d, 2]", in->rank);
  wick_tensor *value = wick_op_input(ctx, 2);
  if (value) {
    WICK_CHECK(ctx, value->type == in->type && wick_tensor_elements(value) == 1,
               "the pad value must be a scalar of the input's type");
  }
  if (in->rank > 0 && pads->data == NULL) return WICK_STATUS_DEFER;
  pad_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  /* Paddings fed at run time are input errors, not model errors. */
  wick_status bad = pads->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  int32_t dims[WICK_MAX_RANK];
  for (int32_t i = 0; i < in->rank; i++) {
    int64_t b = wick_read_int(pads, 2 * i), a = wick_read_int(pads, 2 * i + 1);
    if (b < 0 || a < 0)
      return wick_op_fail(ctx, bad, "padding of dimension %d is negative (%lld, %lld)", i,
                          (long long)b, (long long)a);
    int64_t size = (int64_t)in->dims[i] + b + a;
    if (size > INT32_MAX)
      return wick_op_fail(ctx, bad, "padded dimension %d overflows", i);
    d->before[i] = (int32_t)b;
    dims[i] = (int32_t)size;
  }
  ctx->node->user_data = d;
  return wick_op_set_output(ctx, 0, in->type, in->rank, dims);
}

static wick_status pad_invoke(wick_op_ctx *ctx) {
  const pad_data *d = ctx->node->user_data;
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  wick_tensor *value = wick_op_input(ctx, 2);
  size_t esize = wick_dtype_size(in->type);
  int64_t total = wick_tensor_elements(out);
  uint8_t *dst = out->data;
  /* Fill value: PADV2's scalar, else zero or the zero point. */
  uint8_t fill[8] = {0};
  if (value) {
    memcpy(fill, value->data, esize);
  } else if (in->info->quant.count > 0) {
    int64_t zp = in->info->quant.zero_point[0];
    if (in->type == WICK_DTYPE_INT8) fill[0] = (uint8_t)(int8_t)zp;
    if (in->type == WICK_DTYPE_UINT8) fill[0] = (uint8_t)zp;
    if (in->type == WICK_DTYPE_INT16) {
      int16_t z = (int16_t)zp;
      memcpy(fill, &z, 2);
    }
  }
  bool zero = true;
  for (size_t i = 0; i < esize; i++) zero = zero && fill[i] == 0;
  if (zero || esize == 1) {
    memset(dst, fill[0], out->bytes);
  } else {
    for (int64_t i = 0; i < total; i++) memcpy(dst + (size_t)i * esize, fill, esize);
  }
  int32_t rank = in->rank;
  int64_t in_total = wick_tensor_elements(in);
  if (in_total == 0) return WICK_OK;
  if (rank == 0) {
    memcpy(dst, in->data, esize);
    return WICK_OK;
  }
  /* Row-major strides of the output. */
  int64_t ostride[WICK_MAX_RANK];
  ostride[rank - 1] = 1;
  for (int32_t i = rank - 2; i >= 0; i--) ostride[i] = ostride[i + 1] * out->dims[i + 1];
  /* Rows: everything from the innermost padded dimension `top` inward is one
   * contiguous run in both tensors (e.g. a whole W x C row of an NHWC image
   * padded in H and W), so copy runs of that size. */
  int32_t top = rank - 1;
  while (top > 0 && out->dims[top] == in->dims[top]) top--;
  int64_t row = 1;
  for (int32_t i = top; i < rank; i++) row *= in->dims[i];
  int64_t rows = in_total / row;
  int64_t idx[WICK_MAX_RANK] = {0};
  const uint8_t *src = in->data;
  for (int64_t r = 0; r < rows; r++) {
    int64_t o = d->before[top] * ostride[top];
    for (int32_t i = 0; i < top; i++) o += (idx[i] + d->before[i]) * ostride[i];
    memcpy(dst + (size_t)o * esize, src + (size_t)(r * row) * esize, (size_t)row * esize);
    for (int32_t i = top - 1; i >= 0; i--) {
      if (++idx[i] < in->dims[i]) break;
      idx[i] = 0;
    }
  }
  return WICK_OK;
}

/* Version 5 only adds bool, which the byte-generic kernel already handles. */
const wick_op_def wick_op_pad = {"PAD", WICK_BUILTIN_PAD, 5, pad_prepare, pad_invoke};
const wick_op_def wick_op_padv2 = {"PADV2", WICK_BUILTIN_PADV2, 5, pad_prepare, pad_invoke};
