/*
 * pad.c — PAD and PADV2: constant padding, any fixed-size type.
 *
 * paddings is an int32/int64 [rank, 2] tensor of (before, after) counts, all
 * >= 0. PAD fills with zero (the zero point for quantized tensors); PADV2
 * fills with its scalar third input. Implementation: the output is viewed
 * as rows that end at the innermost padded dimension `top` (everything inside
 * it is one contiguous run in both tensors: a whole W x C row of an NHWC
 * image padded in H and W). Each row is written once — filled, or filled
 * around a copy of its input run — and the rows are split over the
 * interpreter's threads. When only the innermost dimension is padded (channel
 * padding), a task fills its rows at once and copies the input runs in.
 */
#include "format/schema.h"
#include "ops/op_common.h"

typedef struct pad_data {
  int32_t before[WICK_MAX_RANK];
} pad_data;

static wick_status pad_prepare(wick_op_ctx *ctx) {
  bool v2 = wick_op_builtin(ctx) == WICK_BUILTIN_PADV2;
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
    if (size > INT32_MAX) return wick_op_fail(ctx, bad, "padded dimension %d overflows", i);
    d->before[i] = (int32_t)b;
    dims[i] = (int32_t)size;
  }
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, in->type, in->rank, dims);
}

typedef struct pad_job {
  const pad_data *d;
  const wick_tensor *in, *out;
  int32_t top;   /* innermost padded dimension (0 if none) */
  int64_t inner; /* elements inside `top`: equal in input and output */
  size_t esize;
  uint8_t fill[8];
  bool byte_fill;  /* every byte of the fill value is fill[0] */
  bool inner_only; /* only the innermost dimension is padded (pad_inner_rows) */
} pad_job;

static void fill_elements(const pad_job *j, uint8_t *p, int64_t n) {
  if (j->byte_fill) {
    memset(p, j->fill[0], (size_t)n * j->esize);
  } else {
    for (int64_t i = 0; i < n; i++) memcpy(p + (size_t)i * j->esize, j->fill, j->esize);
  }
}

/* Rows [begin, end) when only the innermost dimension is padded (MediaPipe's channel padding
 * in front of a residual ADD: 8 channels to 16): row r is input row r. The block is filled at
 * once, then each row's input run copied in — a fixed-size copy for the common run lengths,
 * where a call per row would cost more than the bytes. */
static void pad_inner_rows(const pad_job *j, size_t begin, size_t end) {
  const size_t es = j->esize, last = (size_t)j->out->dims[j->top] * es;
  const size_t run = (size_t)j->in->dims[j->top] * es, lead = (size_t)j->d->before[j->top] * es;
  const uint8_t *src = (const uint8_t *)j->in->data + begin * run;
  uint8_t *dst = (uint8_t *)j->out->data + begin * last + lead;
  fill_elements(j, (uint8_t *)j->out->data + begin * last, (int64_t)((end - begin) * (last / es)));
  const size_t rows = end - begin;
  switch (run) {
    case 16:
      for (size_t r = 0; r < rows; r++) memcpy(dst + r * last, src + r * 16, 16);
      break;
    case 32:
      for (size_t r = 0; r < rows; r++) memcpy(dst + r * last, src + r * 32, 32);
      break;
    case 64:
      for (size_t r = 0; r < rows; r++) memcpy(dst + r * last, src + r * 64, 64);
      break;
    default:
      for (size_t r = 0; r < rows; r++) memcpy(dst + r * last, src + r * run, run);
  }
}

/* Output rows [begin, end) of the [dims before top, dims[top] * inner] view. */
static void pad_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const pad_job *j = arg;
  if (j->inner_only) {
    pad_inner_rows(j, begin, end);
    return;
  }
  const wick_tensor *in = j->in, *out = j->out;
  const int32_t top = j->top;
  const int64_t last = out->dims[top] * j->inner, in_last = in->dims[top] * j->inner;
  const int64_t lead = j->d->before[top] * j->inner;
  const size_t es = j->esize;
  int64_t idx[WICK_MAX_RANK] = {0}; /* output index of row `begin` */
  size_t rest = begin;
  for (int32_t i = top - 1; i >= 0; i--) {
    idx[i] = (int64_t)(rest % (size_t)out->dims[i]);
    rest /= (size_t)out->dims[i];
  }
  const uint8_t *src = in->data;
  uint8_t *dst = out->data;
  for (size_t r = begin; r < end; r++) {
    uint8_t *row = dst + r * (size_t)last * es;
    bool inside = in_last > 0;
    int64_t src_row = 0;
    for (int32_t i = 0; i < top && inside; i++) {
      int64_t k = idx[i] - j->d->before[i];
      if (k < 0 || k >= in->dims[i]) inside = false;
      src_row = src_row * in->dims[i] + k;
    }
    if (!inside) {
      fill_elements(j, row, last);
    } else {
      fill_elements(j, row, lead);
      memcpy(row + (size_t)lead * es, src + (size_t)(src_row * in_last) * es, (size_t)in_last * es);
      fill_elements(j, row + (size_t)(lead + in_last) * es, last - lead - in_last);
    }
    for (int32_t i = top - 1; i >= 0; i--) {
      if (++idx[i] < out->dims[i]) break;
      idx[i] = 0;
    }
  }
}

static wick_status pad_invoke(wick_op_ctx *ctx) {
  const pad_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  wick_tensor *value = wick_op_input(ctx, 2);
  pad_job j = {d, in, out, 0, 1, wick_dtype_size(in->type), {0}, true, false};
  /* Fill value: PADV2's scalar, else zero or the zero point. */
  if (value) {
    memcpy(j.fill, value->data, j.esize);
  } else if (in->info->quant.count > 0) {
    int64_t zp = in->info->quant.zero_point[0];
    if (in->type == WICK_DTYPE_INT8) j.fill[0] = (uint8_t)(int8_t)zp;
    if (in->type == WICK_DTYPE_UINT8) j.fill[0] = (uint8_t)zp;
    if (in->type == WICK_DTYPE_INT16) {
      int16_t z = (int16_t)zp;
      memcpy(j.fill, &z, 2);
    }
  }
  for (size_t i = 1; i < j.esize; i++) j.byte_fill = j.byte_fill && j.fill[i] == j.fill[0];
  if (out->rank == 0) {
    memcpy(out->data, in->data, j.esize);
    return WICK_OK;
  }
  int64_t total = wick_tensor_elements(out);
  if (total == 0) return WICK_OK;
  j.top = out->rank - 1;
  while (j.top > 0 && out->dims[j.top] == in->dims[j.top]) j.top--;
  for (int32_t i = j.top + 1; i < out->rank; i++) j.inner *= out->dims[i];
  j.inner_only = j.top == out->rank - 1 && in->dims[j.top] > 0;
  for (int32_t i = 0; i < j.top && j.inner_only; i++) j.inner_only = out->dims[i] == in->dims[i];
  int64_t row = out->dims[j.top] * j.inner;
  return wick_parallel_range(ctx, (size_t)(total / row), (uint64_t)row * 4, pad_rows, &j);
}

/* Version 5 only adds bool, which the byte-generic kernel already handles. */
const wick_op_def wick_op_pad = {"PAD", WICK_BUILTIN_PAD, 5, pad_prepare, pad_invoke, 0};
const wick_op_def wick_op_padv2 = {"PADV2", WICK_BUILTIN_PADV2, 5, pad_prepare, pad_invoke, 0};
