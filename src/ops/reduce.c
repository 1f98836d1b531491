/*
 * reduce.c — MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD REDUCE_ANY REDUCE_ALL.
 *
 * The axes input (int32/int64, any shape, negative axes allowed, repeats
 * ignored; empty reduces nothing) must be known at prepare or the op is
 * prepared at invoke, where a bad axis is an input error.
 * keep_dims keeps reduced axes as size 1.
 * Quantized MEAN/SUM are in reduce_quantized.c. Float MEAN/SUM over one
 * contiguous run of axes (global average pooling, last-axis means) run the
 * vectorized mid-axis sum (src/kernels/elementwise_driver.c) chosen at
 * prepare; it reassociates the reference's sequential sum.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

typedef struct reduce_data {
  bool reduced[WICK_MAX_RANK];
  wick_f32_sum_mid_fn sum_mid; /* NULL: reference */
  bool bool_rows;              /* REDUCE_ANY / REDUCE_ALL over one run of axes (logical.c) */
  size_t outer, mid, inner;
} reduce_data;

static wick_reduce_op reduce_op(int32_t builtin) {
  switch (builtin) {
    case WICK_BUILTIN_SUM: return WICK_REDUCE_SUM;
    case WICK_BUILTIN_MEAN: return WICK_REDUCE_MEAN;
    case WICK_BUILTIN_REDUCE_MAX: return WICK_REDUCE_MAX;
    case WICK_BUILTIN_REDUCE_MIN: return WICK_REDUCE_MIN;
    case WICK_BUILTIN_REDUCE_PROD: return WICK_REDUCE_PROD;
    case WICK_BUILTIN_REDUCE_ANY: return WICK_REDUCE_ANY;
    default: return WICK_REDUCE_ALL;
  }
}

static wick_status reduce_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_reduce_prepare_quantized(ctx);
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *axes;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &axes));
  wick_reduce_op op = reduce_op(wick_op_builtin(ctx));
  bool logical = op == WICK_REDUCE_ANY || op == WICK_REDUCE_ALL;
  if (logical) {
    WICK_CHECK(ctx, in->type == WICK_DTYPE_BOOL, "input must be bool");
  } else {
    WICK_CHECK_SUPPORTED(ctx,
                         in->type == WICK_DTYPE_FLOAT32 || in->type == WICK_DTYPE_INT32 ||
                             in->type == WICK_DTYPE_INT64,
                         "input type %s is not supported", wick_dtype_name(in->type));
  }
  WICK_CHECK(ctx, wick_is_int_index_type(axes->type), "axes must be int32 or int64");
  int64_t n = wick_tensor_elements(axes);
  /* An empty constant has no bytes (data stays NULL): it reduces nothing. */
  if (n > 0 && axes->data == NULL) return WICK_STATUS_DEFER;
  reduce_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  /* Axes fed at run time are input errors, not model errors. */
  wick_status bad = axes->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  for (int64_t i = 0; i < n; i++) {
    int64_t a = wick_read_int(axes, i);
    if (a < -(int64_t)in->rank || a >= (in->rank > 0 ? in->rank : 1))
      return wick_op_fail(ctx, bad, "axis %lld is outside rank %d", (long long)a, in->rank);
    if (in->rank > 0) d->reduced[a < 0 ? a + in->rank : a] = true;
  }
  int32_t dims[WICK_MAX_RANK], rank = 0;
  for (int32_t i = 0; i < in->rank; i++) {
    if (!d->reduced[i])
      dims[rank++] = in->dims[i];
    else if (ctx->params->keep_dims)
      dims[rank++] = 1;
  }
  wick_op_set_data(ctx, d);
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  d->sum_mid = NULL;
  d->bool_rows =
      logical && !wick_op_force_reference(ctx) &&
      wick_f32_reduce_plan_make(in->rank, in->dims, d->reduced, &d->outer, &d->mid, &d->inner);
  if (kern != NULL && in->type == WICK_DTYPE_FLOAT32 &&
      (op == WICK_REDUCE_SUM || op == WICK_REDUCE_MEAN) &&
      wick_f32_reduce_plan_make(in->rank, in->dims, d->reduced, &d->outer, &d->mid, &d->inner) &&
      d->mid > 0)
    d->sum_mid = kern->sum_mid;
  if (d->sum_mid != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "sum rows");
  else if (d->bool_rows)
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "rows");
  else /* why: another op (MAX, MIN, PROD), another type, or axes that do not collapse */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       in->type != WICK_DTYPE_FLOAT32 && !logical ? wick_dtype_name(in->type)
                                                                  : NULL);
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

typedef struct sum_job {
  const reduce_data *d;
  float scale;
  const float *in;
  float *out;
} sum_job;

static void sum_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const sum_job *j = arg;
  j->d->sum_mid(j->d->mid, j->d->inner, j->scale, j->in, j->out, begin, end);
}

static wick_status reduce_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_reduce_invoke_quantized(ctx);
  const reduce_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  if (d->bool_rows) {
    wick_bool_reduce_mid(wick_op_builtin(ctx) == WICK_BUILTIN_REDUCE_ANY, d->outer, d->mid,
                         d->inner, in->data, wick_op_output(ctx, 0)->data);
    return WICK_OK;
  }
  if (d->sum_mid) {
    const bool mean = wick_op_builtin(ctx) == WICK_BUILTIN_MEAN;
    /* Outer slices split over the threads; each output's sum keeps its order. */
    sum_job j = {d, mean ? 1.0f / (float)d->mid : 1.0f, in->data, wick_op_output(ctx, 0)->data};
    return wick_parallel_range(ctx, d->outer, (uint64_t)d->mid * (uint64_t)d->inner, sum_rows, &j);
  }
  wick_reduce__reference(reduce_op(wick_op_builtin(ctx)), in->type, in->rank, in->dims, d->reduced,
                         in->data, wick_op_output(ctx, 0)->data);
  return WICK_OK;
}

#define REDUCE_OP(sym, NAME, maxv) \
  const wick_op_def sym = {#NAME, WICK_BUILTIN_##NAME, maxv, reduce_prepare, reduce_invoke, 0};

REDUCE_OP(wick_op_mean, MEAN, 3)
REDUCE_OP(wick_op_sum, SUM, 2)
REDUCE_OP(wick_op_reduce_max, REDUCE_MAX, 3)
REDUCE_OP(wick_op_reduce_min, REDUCE_MIN, 3)
REDUCE_OP(wick_op_reduce_prod, REDUCE_PROD, 2)
REDUCE_OP(wick_op_reduce_any, REDUCE_ANY, 1)
REDUCE_OP(wick_op_reduce_all, REDUCE_ALL, 1)
