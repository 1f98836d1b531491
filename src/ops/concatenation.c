/*
 * concatenation.c — CONCATENATION along one axis, any fixed-size type.
 *
 * Every input has the output's rank and type and equal dims except on the
 * axis; the axis sum is computed in checked 64-bit arithmetic. Quantized
 * inputs share the output's scale and zero point here; 8-bit inputs quantized
 * differently are requantized by concatenation_quantized.c. The output's
 * outer rows (the dims before the axis) are split over the interpreter's
 * threads.
 */
#include "format/schema.h"
#include "ops/op_common.h"
#include "ops/quantization.h"

static bool same_quant(const wick_tensor *a, const wick_tensor *b) {
  const wick_quant *x = &a->info->quant, *y = &b->info->quant;
  if (x->count != y->count) return false;
  for (uint32_t i = 0; i < x->count; i++)
    if (x->scale[i] != y->scale[i] || x->zero_point[i] != y->zero_point[i]) return false;
  return true;
}

static wick_status concat_prepare(wick_op_ctx *ctx) {
  if (wick_concat_needs_requantize(ctx)) return wick_concat_prepare_quantized(ctx);
  size_t n = wick_op_num_inputs(ctx);
  WICK_TRY(wick_check_arity(ctx, 1, WICK_MAX_OP_INPUTS, 1));
  wick_tensor *first;
  WICK_TRY(wick_require_input(ctx, 0, &first));
  int32_t axis;
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, first->rank, &axis));
  WICK_CHECK(ctx, first->rank >= 1, "inputs must have rank >= 1");
  int32_t dims[WICK_MAX_RANK];
  memcpy(dims, first->dims, sizeof dims);
  int64_t sum = 0;
  wick_tensor *out = wick_op_output(ctx, 0);
  for (size_t i = 0; i < n; i++) {
    wick_tensor *t;
    WICK_TRY(wick_require_input(ctx, i, &t));
    WICK_CHECK(ctx, t->type == first->type, "input %zu has type %s, input 0 %s", i,
               wick_dtype_name(t->type), wick_dtype_name(first->type));
    WICK_CHECK(ctx, t->rank == first->rank, "input %zu has rank %d, input 0 rank %d", i, t->rank,
               first->rank);
    for (int32_t d = 0; d < t->rank; d++)
      WICK_CHECK(ctx, d == axis || t->dims[d] == first->dims[d],
                 "input %zu differs from input 0 in dimension %d (%d vs %d)", i, d, t->dims[d],
                 first->dims[d]);
    WICK_CHECK_SUPPORTED(ctx, same_quant(t, out),
                         "input %zu is quantized differently from the output", i);
    sum += t->dims[axis];
    WICK_CHECK(ctx, sum <= INT32_MAX, "the concatenated dimension overflows");
  }
  float lo, hi;
  WICK_TRY(wick_activation_range_f32(ctx, ctx->params->activation, &lo, &hi));
  WICK_CHECK_SUPPORTED(ctx, ctx->params->activation == WICK_ACT_NONE,
                       "fused activations on CONCATENATION are not supported");
  dims[axis] = (int32_t)sum;
  return wick_op_set_output(ctx, 0, first->type, first->rank, dims);
}

typedef struct concat_job {
  const wick_op_ctx *ctx;
  size_t n, out_row;
  int64_t outer;
  size_t esize;
} concat_job;

/* Outer rows [begin, end): every input's slice of each, in input order. */
static void concat_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const concat_job *j = arg;
  uint8_t *dst = wick_op_output(j->ctx, 0)->data;
  size_t offset = 0;
  for (size_t i = 0; i < j->n; i++) {
    wick_tensor *t = wick_op_input(j->ctx, i);
    size_t row = (size_t)(wick_tensor_elements(t) / j->outer) * j->esize;
    const uint8_t *src = t->data;
    for (size_t o = begin; o < end && row; o++)
      memcpy(dst + o * j->out_row + offset, src + o * row, row);
    offset += row;
  }
}

static wick_status concat_invoke(wick_op_ctx *ctx) {
  if (wick_concat_needs_requantize(ctx)) return wick_concat_invoke_quantized(ctx);
  wick_tensor *out = wick_op_output(ctx, 0);
  int32_t axis;
  WICK_TRY(wick_normalize_axis(ctx, ctx->params->axis, out->rank, &axis));
  int64_t outer = 1;
  for (int32_t d = 0; d < axis; d++) outer *= out->dims[d];
  if (outer == 0 || out->bytes == 0) return WICK_OK;
  concat_job j = {ctx, wick_op_num_inputs(ctx), out->bytes / (size_t)outer, outer,
                  wick_dtype_size(out->type)};
  /* ~4 work units per element copied (parallel.c's copies use the same). */
  return wick_parallel_range(ctx, (size_t)outer, (uint64_t)(j.out_row / j.esize) * 4, concat_rows,
                             &j);
}

const wick_op_def wick_op_concatenation = {
    "CONCATENATION", WICK_BUILTIN_CONCATENATION, 4, concat_prepare, concat_invoke, 0};
