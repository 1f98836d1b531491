/*
 * reduce_quantized.c — quantized MEAN and SUM (int8, uint8, int16), and
 * REDUCE_MAX / REDUCE_MIN on the raw values (output quantized like the input).
 *
 * Reached from reduce.c when the input is a quantized activation. Axes as
 * the float op (int32/int64, negative allowed, repeats ignored, deferred to
 * invoke when fed at run time). As LiteRT's reference kernel: the values are
 * summed in int32 per output, the input zero point times the count is
 * subtracted, and the result is requantized by s_in / s_out; for MEAN the
 * 1/count is folded into that multiplier (multiplier * 2^k / count with
 * k = floor(log2 count), at most 32, the shift lowered by k).
 * int8 / uint8 / int16 MEAN/SUM over one contiguous block of axes (a global
 * average pool's H, W; a layer norm's last axis) takes a blocked loop (outer
 * x reduced x inner, the inner run summed as a vector, or each output's
 * contiguous run when the last axis is reduced) with the same int32 sums
 * and requantization; 8-bit rows (the reduced block followed by other axes: a
 * global average pool's H, W) on the column-sum kernels of src/kernels/q8.h.
 * Next: src/kernels/reference/quantized.c (wick_q_reduce_sum__reference).
 */
#include "format/schema.h"
#include "kernels/q8.h"
#include "kernels/reference/reference.h"
#include "ops/quantization.h"

typedef struct qreduce_data {
  bool reduced[WICK_MAX_RANK];
  wick_qreduce_params params;
} qreduce_data;

/* The types the blocked sums take. */
static bool blocked_type(wick_dtype t) {
  return t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 || t == WICK_DTYPE_INT16;
}

/* The column-sum kernel for an 8-bit tensor summed over rows of `inner` > 1 elements (a global
 * average pool's H, W), or NULL (int16, the last axis reduced, or no kernel on this CPU). */
static wick_q8_colsum_fn colsum_kernel(wick_dtype t, int64_t inner) {
  if ((t != WICK_DTYPE_INT8 && t != WICK_DTYPE_UINT8) || inner <= 1) return NULL;
  const wick_q8_kernels *k = wick_q8_kernels_select(false);
  return k != NULL ? k->colsum : NULL;
}

wick_status wick_reduce_prepare_quantized(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *axes, *out = wick_op_output(ctx, 0);
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &axes));
  WICK_CHECK(ctx, out != NULL, "output is absent");
  const int32_t builtin = wick_op_builtin(ctx);
  const bool maxmin = builtin == WICK_BUILTIN_REDUCE_MAX || builtin == WICK_BUILTIN_REDUCE_MIN;
  WICK_CHECK_SUPPORTED(ctx, builtin == WICK_BUILTIN_MEAN || builtin == WICK_BUILTIN_SUM || maxmin,
                       "input type quantized %s is not supported", wick_dtype_name(in->type));
  WICK_CHECK(ctx, out->type == in->type, "output type %s differs from the input's %s",
             wick_dtype_name(out->type), wick_dtype_name(in->type));
  WICK_CHECK(ctx, wick_is_int_index_type(axes->type), "axes must be int32 or int64");
  int64_t n = wick_tensor_elements(axes);
  if (n > 0 && axes->data == NULL) return WICK_STATUS_DEFER;
  qreduce_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  wick_status bad = axes->known ? WICK_ERR_MALFORMED_MODEL : WICK_ERR_INVALID_INPUT;
  for (int64_t i = 0; i < n; i++) {
    int64_t a = wick_read_int(axes, i);
    if (a < -(int64_t)in->rank || a >= (in->rank > 0 ? in->rank : 1))
      return wick_op_fail(ctx, bad, "axis %lld is outside rank %d", (long long)a, in->rank);
    if (in->rank > 0) d->reduced[a < 0 ? a + in->rank : a] = true;
  }
  int32_t dims[WICK_MAX_RANK], rank = 0;
  int64_t count = 1, outputs = 1;
  for (int32_t i = 0; i < in->rank; i++) {
    if (d->reduced[i]) count *= in->dims[i];
    if (!d->reduced[i]) {
      dims[rank++] = in->dims[i];
      outputs *= in->dims[i];
    } else if (ctx->params->keep_dims) {
      dims[rank++] = 1;
    }
  }

  wick_qparams qi, qo;
  WICK_TRY(wick_quant_params(ctx, in, "the input", false, &qi));
  WICK_TRY(wick_quant_params(ctx, out, "the output", false, &qo));
  if (in->type == WICK_DTYPE_INT16)
    WICK_CHECK_SUPPORTED(ctx, qi.zero_point == 0 && qo.zero_point == 0,
                         "int16 operands must have zero points 0");
  wick_op_set_data(ctx, d);
  if (maxmin) {
    /* Raw values, as LiteRT: only valid when nothing needs requantizing. */
    WICK_CHECK_SUPPORTED(ctx, qi.scale == qo.scale && qi.zero_point == qo.zero_point,
                         "an output quantized differently from the input is not supported");
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, wick_dtype_name(in->type));
    return wick_op_set_output(ctx, 0, in->type, rank, dims);
  }
  int32_t m, s;
  WICK_TRY(
      wick_quant_multiplier(ctx, (double)qi.scale / (double)qo.scale, 62, "the output", &m, &s));
  if (builtin == WICK_BUILTIN_MEAN && count > 0) {
    int32_t k = 63 - __builtin_clzll((unsigned long long)count);
    if (k > 32) k = 32;
    if (k > 31 + s) k = 31 + s;
    m = (int32_t)(((int64_t)m << k) / count);
    s -= k;
  }
  WICK_CHECK_SUPPORTED(ctx, s <= 30, "requantization multiplier s_in / s_out is too large (2^%d)",
                       (int)s);
  d->params = (wick_qreduce_params){qi.zero_point, qo.zero_point, m, s};
  size_t scratch;
  if (!wick_mul_size((size_t)outputs, sizeof(int32_t), &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "scratch size overflows");
  wick_op_request_scratch(ctx, scratch);
  wick_op_set_data(ctx, d);
  /* reduce_blocked's test, on the shape: int8 over one contiguous block of axes */
  int32_t blocks = 0;
  for (int32_t i = 0; i < in->rank; i++) blocks += d->reduced[i] && (i == 0 || !d->reduced[i - 1]);
  int64_t inner = 1; /* after the reduced block */
  for (int32_t i = in->rank - 1; i >= 0 && !d->reduced[i]; i--) inner *= in->dims[i];
  const bool blocked = blocked_type(in->type) && blocks == 1 && !wick_op_force_reference(ctx) &&
                       count > 0 && outputs > 0;
  if (blocked && colsum_kernel(in->type, inner) != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, "q8 column sums");
  else if (blocked)
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "blocked sums");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       blocks == 1 ? wick_dtype_name(in->type) : "axes");
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

/* Columns per task unit of the blocked sum, and work units per summed
 * element (the int32 column sums run at a few elements per nanosecond, the
 * column-sum kernels at tens). */
#define REDUCE_COLUMNS 64
#define REDUCE_WORK_PER_ELEMENT 16
#define REDUCE_KERNEL_WORK_PER_ELEMENT 2

typedef struct blocked_job {
  const wick_qreduce_params *p;
  wick_dtype type;
  const void *x;
  void *out;
  int32_t *sums; /* one per output; tasks own disjoint outputs */
  int64_t count, inner, chunks;
  wick_q8_colsum_fn colsum;       /* 8-bit, inner > 1: the column sums' kernel (NULL: the loop) */
  wick_q8_requant32_fn requant32; /* with colsum: the sums' requantization, or NULL */
} blocked_job;

/* Element i of x as int32 (int8, uint8 or int16: a constant per instance below). */
static inline int32_t load_q(wick_dtype t, const void *x, int64_t i) {
  return t == WICK_DTYPE_INT16   ? ((const int16_t *)x)[i]
         : t == WICK_DTYPE_UINT8 ? ((const uint8_t *)x)[i]
                                 : ((const int8_t *)x)[i];
}

/* The reference's requantization of one output's sum, stored with its type's clamp. */
static inline void finish_q(wick_dtype t, const wick_qreduce_params *p, int64_t count, int32_t sum,
                            void *out, int64_t o) {
  const int32_t shifted = (int32_t)(uint32_t)((uint64_t)(int64_t)sum -
                                              (uint64_t)((int64_t)p->input_zero_point * count));
  int32_t v = wick_q_multiply_by_quantized_multiplier(shifted, p->multiplier, p->shift);
  v = (int32_t)((uint32_t)v + (uint32_t)p->output_zero_point);
  if (t == WICK_DTYPE_INT16)
    ((int16_t *)out)[o] = (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
  else if (t == WICK_DTYPE_UINT8)
    ((uint8_t *)out)[o] = (uint8_t)(v < 0 ? 0 : (v > UINT8_MAX ? UINT8_MAX : v));
  else
    ((int8_t *)out)[o] = (int8_t)(v < INT8_MIN ? INT8_MIN : (v > INT8_MAX ? INT8_MAX : v));
}

/* Units [u0, u1) of one element type. inner > 1: unit u is columns [c * REDUCE_COLUMNS, ...)
 * of outer o, u = o * chunks + c, summed row by row; inner == 1 (the last axis reduced): unit
 * u is output u, its count contiguous elements summed as one vector reduction. */
static inline void blocked_units(const blocked_job *b, wick_dtype t, size_t u0, size_t u1) {
  const wick_qreduce_params *p = b->p;
  if (b->inner == 1) {
    for (size_t u = u0; u < u1; u++) {
      uint32_t sum = 0;
      const int64_t base = (int64_t)u * b->count;
      for (int64_t r = 0; r < b->count; r++) sum += (uint32_t)load_q(t, b->x, base + r);
      finish_q(t, p, b->count, (int32_t)sum, b->out, (int64_t)u);
    }
    return;
  }
  for (size_t u = u0; u < u1; u++) {
    const int64_t o = (int64_t)u / b->chunks, j0 = (int64_t)u % b->chunks * REDUCE_COLUMNS;
    const int64_t j1 = b->inner - j0 < REDUCE_COLUMNS ? b->inner : j0 + REDUCE_COLUMNS;
    int32_t *sums = b->sums + o * b->inner; /* scratch holds one per output */
    if (b->colsum != NULL) {
      b->colsum((size_t)b->count, (size_t)(j1 - j0), (size_t)b->inner,
                (const uint8_t *)b->x + o * b->count * b->inner + j0, t == WICK_DTYPE_UINT8,
                sums + j0);
      /* finish_q's requantization in one call: (sum - zp * count) mod 2^32, then mbqm */
      const int32_t zp_count =
          (int32_t)(uint32_t)((uint64_t)(int64_t)p->input_zero_point * (uint64_t)b->count);
      const bool u8 = t == WICK_DTYPE_UINT8;
      if (b->requant32 != NULL && p->shift >= -31) {
        b->requant32((size_t)(j1 - j0), sums + j0, zp_count, p->multiplier, p->shift,
                     p->output_zero_point, u8 ? 0 : INT8_MIN, u8 ? UINT8_MAX : INT8_MAX, u8,
                     (uint8_t *)b->out + o * b->inner + j0);
        continue;
      }
      wick_q_requantize__reference(WICK_DTYPE_INT32, t, j1 - j0, zp_count, p->output_zero_point,
                                   p->multiplier, p->shift, u8 ? 0 : INT8_MIN,
                                   u8 ? UINT8_MAX : INT8_MAX, sums + j0,
                                   (uint8_t *)b->out + o * b->inner + j0);
      continue;
    }
    for (int64_t j = j0; j < j1; j++) sums[j] = 0;
    for (int64_t r = 0; r < b->count; r++) {
      const int64_t row = (o * b->count + r) * b->inner;
      for (int64_t j = j0; j < j1; j++)
        sums[j] = (int32_t)((uint32_t)sums[j] + (uint32_t)load_q(t, b->x, row + j));
    }
    for (int64_t j = j0; j < j1; j++) finish_q(t, p, b->count, sums[j], b->out, o * b->inner + j);
  }
}

static void reduce_blocked_units(void *arg, size_t u0, size_t u1, size_t thread) {
  (void)thread;
  const blocked_job *b = arg;
  if (b->type == WICK_DTYPE_INT16)
    blocked_units(b, WICK_DTYPE_INT16, u0, u1);
  else if (b->type == WICK_DTYPE_UINT8)
    blocked_units(b, WICK_DTYPE_UINT8, u0, u1);
  else
    blocked_units(b, WICK_DTYPE_INT8, u0, u1);
}

/* The blocked sum when the reduced axes are one contiguous run [r0, r1) of
 * an int8, uint8 or int16 tensor, split over the threads by outer index and
 * runs of REDUCE_COLUMNS inner columns (or by output, the last axis
 * reduced); false otherwise. Same arithmetic as the reference: int32 sums
 * (wrapping; order does not matter), minus zp * count, requantized. */
static bool reduce_blocked(const wick_op_ctx *ctx, const wick_tensor *in, const qreduce_data *d,
                           void *out, int32_t *sums, wick_status *st) {
  if (!blocked_type(in->type) || in->rank < 1) return false;
  int32_t r0 = -1, r1 = -1;
  for (int32_t i = 0; i < in->rank; i++) {
    if (!d->reduced[i]) continue;
    if (r0 < 0)
      r0 = i;
    else if (r1 != i)
      return false;
    r1 = i + 1;
  }
  if (r0 < 0) return false;
  int64_t outer = 1, count = 1, inner = 1;
  for (int32_t i = 0; i < r0; i++) outer *= in->dims[i];
  for (int32_t i = r0; i < r1; i++) count *= in->dims[i];
  for (int32_t i = r1; i < in->rank; i++) inner *= in->dims[i];
  if (outer * inner == 0 || count == 0) return false;
  blocked_job b = {&d->params,
                   in->type,
                   in->data,
                   out,
                   sums,
                   count,
                   inner,
                   inner / REDUCE_COLUMNS + (inner % REDUCE_COLUMNS != 0),
                   colsum_kernel(in->type, inner),
                   NULL};
  if (b.colsum != NULL) b.requant32 = wick_q8_kernels_select(false)->requant32;
  if (b.colsum != NULL)
    *st = wick_parallel_range(ctx, (size_t)(outer * b.chunks),
                              (uint64_t)count * REDUCE_COLUMNS * REDUCE_KERNEL_WORK_PER_ELEMENT,
                              reduce_blocked_units, &b);
  else if (inner == 1)
    *st = wick_parallel_range(ctx, (size_t)outer, (uint64_t)count * REDUCE_WORK_PER_ELEMENT,
                              reduce_blocked_units, &b);
  else
    *st = wick_parallel_range(ctx, (size_t)(outer * b.chunks),
                              (uint64_t)count * REDUCE_COLUMNS * REDUCE_WORK_PER_ELEMENT,
                              reduce_blocked_units, &b);
  return true;
}

wick_status wick_reduce_invoke_quantized(wick_op_ctx *ctx) {
  const qreduce_data *d = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0);
  const int32_t builtin = wick_op_builtin(ctx);
  if (builtin == WICK_BUILTIN_REDUCE_MAX || builtin == WICK_BUILTIN_REDUCE_MIN) {
    wick_q_reduce_maxmin__reference(in->type, builtin == WICK_BUILTIN_REDUCE_MAX, in->rank,
                                    in->dims, d->reduced, in->data, wick_op_output(ctx, 0)->data);
    return WICK_OK;
  }
  wick_status st = WICK_OK;
  if (!wick_op_force_reference(ctx) &&
      reduce_blocked(ctx, in, d, wick_op_output(ctx, 0)->data, wick_op_scratch(ctx), &st))
    return st;
  wick_q_reduce_sum__reference(in->type, in->rank, in->dims, d->reduced, &d->params, in->data,
                               wick_op_output(ctx, 0)->data, wick_op_scratch(ctx));
  return WICK_OK;
}
