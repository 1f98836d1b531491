/*
 * elementwise_binary.c — ADD SUB MUL DIV MAXIMUM MINIMUM POW SQUARED_DIFFERENCE
 * FLOOR_DIV FLOOR_MOD, the comparisons (EQUAL ... GREATER_EQUAL) and
 * LOGICAL_AND / LOGICAL_OR, BITWISE_XOR: two inputs, numpy broadcasting, one
 * output. ATAN2 (same shapes only, as LiteRT) is at the end.
 *
 * Types: float32, int32 and int64 for arithmetic (int64 only without a fused
 * activation), and complex64 for MUL (no activation; LiteRT runs it, TF's
 * converter emits it for complex products such as a spectrum times a phase); comparisons also take
 * int8/uint8/int16/bool. Quantized int8/uint8 comparisons compare the inputs rescaled by their
 * own scales as LiteRT does (wick_q_compare__reference: scales below 1; an int8 tensor without
 * parameters compares raw values, where LiteRT aborts). int16 compares raw values without
 * quantization (LiteRT rescales quantized int16 in EQUAL/NOT_EQUAL only: refused). EQUAL runs
 * version 5 (int16 in the current converter's rule; verified raw against LiteRT). Integer
 * division by zero is a run-time input error (checked at invoke),
 * never UB. BITWISE_XOR: int8, uint8, int16, int32 (LiteRT's uint16/uint32 are not wick types).
 * ATAN2: float32, float64. Quantized ADD/SUB/MUL (int8, uint8, int16) are in
 * elementwise_quantized.c.
 *
 * Float32 ADD SUB MUL DIV MAXIMUM MINIMUM SQUARED_DIFFERENCE run the
 * vectorized kernels (bit-identical to the reference) when the broadcast
 * collapses to three loops (src/kernels/elementwise_driver.c), decided at
 * prepare; the rest runs the reference kernels.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct binary_data {
  wick_broadcast bc;
  const wick_f32_binary_fn *fast; /* the op's three kernel forms, or NULL: reference */
  bool compare_rows;              /* comparisons: run wick_f32_compare_plan on `plan` */
  bool compare_quantized;         /* int8/uint8 comparisons of rescaled values: `q` */
  wick_qcompare_params q;
  wick_f32_binary_plan plan;
} binary_data;

static wick_status prepare_broadcast(wick_op_ctx *ctx, wick_dtype out_type, bool same_type) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *a, *b;
  WICK_TRY(wick_require_input(ctx, 0, &a));
  WICK_TRY(wick_require_input(ctx, 1, &b));
  if (same_type)
    WICK_CHECK(ctx, a->type == b->type, "input types differ (%s and %s)", wick_dtype_name(a->type),
               wick_dtype_name(b->type));
  binary_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  WICK_TRY(wick_broadcast_shapes(ctx, a, b, &d->bc.rank, d->bc.dims));
  wick_broadcast_strides(a, d->bc.rank, d->bc.dims, d->bc.a_strides);
  wick_broadcast_strides(b, d->bc.rank, d->bc.dims, d->bc.b_strides);
  wick_op_set_data(ctx, d);
  return wick_op_set_output(ctx, 0, out_type, d->bc.rank, d->bc.dims);
}

/* ---------------------------------------------------------------- arithmetic */

static wick_binary_op arith_op(int32_t builtin) {
  switch (builtin) {
    case WICK_BUILTIN_ADD: return WICK_BINARY_ADD;
    case WICK_BUILTIN_SUB: return WICK_BINARY_SUB;
    case WICK_BUILTIN_MUL: return WICK_BINARY_MUL;
    case WICK_BUILTIN_DIV: return WICK_BINARY_DIV;
    case WICK_BUILTIN_MAXIMUM: return WICK_BINARY_MAXIMUM;
    case WICK_BUILTIN_MINIMUM: return WICK_BINARY_MINIMUM;
    case WICK_BUILTIN_POW: return WICK_BINARY_POW;
    case WICK_BUILTIN_SQUARED_DIFFERENCE: return WICK_BINARY_SQUARED_DIFFERENCE;
    case WICK_BUILTIN_FLOOR_DIV: return WICK_BINARY_FLOOR_DIV;
    default: return WICK_BINARY_FLOOR_MOD;
  }
}

/* The vectorized kernel of a float op, or -1. */
static int vector_kind(int32_t builtin) {
  switch (builtin) {
    case WICK_BUILTIN_ADD: return WICK_F32_ADD;
    case WICK_BUILTIN_SUB: return WICK_F32_SUB;
    case WICK_BUILTIN_MUL: return WICK_F32_MUL;
    case WICK_BUILTIN_DIV: return WICK_F32_DIV;
    case WICK_BUILTIN_MAXIMUM: return WICK_F32_MAXIMUM;
    case WICK_BUILTIN_MINIMUM: return WICK_F32_MINIMUM;
    case WICK_BUILTIN_SQUARED_DIFFERENCE: return WICK_F32_SQUARED_DIFFERENCE;
    default: return -1;
  }
}

static bool has_activation(int32_t builtin) {
  return builtin == WICK_BUILTIN_ADD || builtin == WICK_BUILTIN_SUB ||
         builtin == WICK_BUILTIN_MUL || builtin == WICK_BUILTIN_DIV;
}

static wick_status arith_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_binary_prepare_quantized(ctx);
  wick_tensor *a = wick_op_input(ctx, 0);
  WICK_CHECK(ctx, a != NULL, "input 0 is required but absent");
  wick_dtype t = a->type;
  int32_t builtin = wick_op_builtin(ctx);
  WICK_CHECK_SUPPORTED(ctx,
                       t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64 ||
                           (t == WICK_DTYPE_COMPLEX64 && builtin == WICK_BUILTIN_MUL),
                       "input type %s is not supported (float32, int32, int64; complex64 for MUL)",
                       wick_dtype_name(t));
  wick_activation act = has_activation(builtin) ? ctx->params->activation : WICK_ACT_NONE;
  float lo, hi;
  WICK_TRY(wick_activation_range_f32(ctx, act, &lo, &hi));
  WICK_CHECK_SUPPORTED(ctx,
                       (t != WICK_DTYPE_INT64 && t != WICK_DTYPE_COMPLEX64) || act == WICK_ACT_NONE,
                       "%s with a fused activation is not supported", wick_dtype_name(t));
  WICK_TRY(prepare_broadcast(ctx, t, true));
  binary_data *d = wick_op_data(ctx);
  d->fast = NULL;
  d->compare_rows = false;
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  int kind = vector_kind(builtin);
  if (t == WICK_DTYPE_FLOAT32 && kern != NULL && kind >= 0 && kern->binary[kind][0] != NULL &&
      wick_f32_binary_plan_make(&d->bc, &d->plan))
    d->fast = kern->binary[kind];
  if (d->fast != NULL)
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, NULL);
  else /* why: another type, an op without a vector kernel, or a broadcast of > 3 loops */
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       t != WICK_DTYPE_FLOAT32 ? wick_dtype_name(t)
                       : kind < 0              ? NULL
                                               : "broadcast");
  return WICK_OK;
}

static bool int_divisor_has_zero(const wick_tensor *b) {
  int64_t n = wick_tensor_elements(b);
  for (int64_t i = 0; i < n; i++)
    if (wick_read_int(b, i) == 0) return true;
  return false;
}

static int32_t clamp_bound_i32(float v) {
  if (v <= (float)INT32_MIN) return INT32_MIN;
  if (v >= (float)INT32_MAX) return INT32_MAX;
  return (int32_t)v;
}

static wick_status arith_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_binary_invoke_quantized(ctx);
  const binary_data *d = wick_op_data(ctx);
  wick_tensor *a = wick_op_input(ctx, 0), *b = wick_op_input(ctx, 1), *o = wick_op_output(ctx, 0);
  int32_t builtin = wick_op_builtin(ctx);
  wick_binary_op op = arith_op(builtin);
  wick_activation act = has_activation(builtin) ? ctx->params->activation : WICK_ACT_NONE;
  float lo, hi;
  WICK_TRY(wick_activation_range_f32(ctx, act, &lo, &hi));
  bool divides =
      op == WICK_BINARY_DIV || op == WICK_BINARY_FLOOR_DIV || op == WICK_BINARY_FLOOR_MOD;
  switch (a->type) {
    case WICK_DTYPE_FLOAT32:
      if (d->fast)
        return wick_parallel_f32_binary(ctx, d->fast, &d->plan, a->data, b->data, o->data, lo, hi);
      wick_f32_binary__reference(op, &d->bc, a->data, b->data, o->data, lo, hi);
      return WICK_OK;
    case WICK_DTYPE_INT32:
      if (divides && int_divisor_has_zero(b))
        return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT, "integer division by zero");
      wick_i32_binary__reference(op, &d->bc, a->data, b->data, o->data, clamp_bound_i32(lo),
                                 clamp_bound_i32(hi));
      return WICK_OK;
    case WICK_DTYPE_INT64:
      if (divides && int_divisor_has_zero(b))
        return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT, "integer division by zero");
      wick_i64_binary__reference(op, &d->bc, a->data, b->data, o->data);
      return WICK_OK;
    case WICK_DTYPE_COMPLEX64: /* MUL only (prepare) */
      wick_c64_mul__reference(&d->bc, a->data, b->data, o->data);
      return WICK_OK;
    default: return wick_op_fail(ctx, WICK_ERR_UNSUPPORTED_OP, "unsupported type");
  }
}

#define ARITH_OP(sym, NAME, maxv, flags) \
  const wick_op_def sym = {#NAME, WICK_BUILTIN_##NAME, maxv, arith_prepare, arith_invoke, flags};

/* WICK_OP_ELEMENTWISE: every kernel of these (float, integer, quantized; vectorized and
 * reference) reads element i of each input only to compute element i. */
ARITH_OP(wick_op_add, ADD, 5, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_sub, SUB, 5, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_mul, MUL, 7, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_div, DIV, 2, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_maximum, MAXIMUM, 4, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_minimum, MINIMUM, 4, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_pow, POW, 1, 0)
ARITH_OP(wick_op_squared_difference, SQUARED_DIFFERENCE, 2, WICK_OP_ELEMENTWISE)
ARITH_OP(wick_op_floor_div, FLOOR_DIV, 3, 0)
ARITH_OP(wick_op_floor_mod, FLOOR_MOD, 2, 0)

/* ---------------------------------------------------------------- comparisons */

static wick_compare_op compare_op(int32_t builtin) {
  switch (builtin) {
    case WICK_BUILTIN_EQUAL: return WICK_COMPARE_EQUAL;
    case WICK_BUILTIN_NOT_EQUAL: return WICK_COMPARE_NOT_EQUAL;
    case WICK_BUILTIN_LESS: return WICK_COMPARE_LESS;
    case WICK_BUILTIN_LESS_EQUAL: return WICK_COMPARE_LESS_EQUAL;
    case WICK_BUILTIN_GREATER: return WICK_COMPARE_GREATER;
    case WICK_BUILTIN_GREATER_EQUAL: return WICK_COMPARE_GREATER_EQUAL;
    case WICK_BUILTIN_LOGICAL_AND: return WICK_COMPARE_LOGICAL_AND;
    default: return WICK_COMPARE_LOGICAL_OR;
  }
}

/* LiteRT's scaled comparison: each input scale as a Q31 multiplier with shift <= 0 (LiteRT's
 * integer rescale is defined only there), the inputs shifted left 8 bits. */
static wick_status compare_quantized_prepare(wick_op_ctx *ctx, binary_data *d) {
  wick_qparams q1, q2;
  WICK_TRY(wick_quant_params(ctx, wick_op_input(ctx, 0), "input 0", false, &q1));
  WICK_TRY(wick_quant_params(ctx, wick_op_input(ctx, 1), "input 1", false, &q2));
  d->q.left_shift = 8;
  d->q.input1_offset = -q1.zero_point;
  d->q.input2_offset = -q2.zero_point;
  WICK_TRY(wick_quant_multiplier(ctx, (double)q1.scale, 0, "input 0's scale",
                                 &d->q.input1_multiplier, &d->q.input1_shift));
  WICK_TRY(wick_quant_multiplier(ctx, (double)q2.scale, 0, "input 1's scale",
                                 &d->q.input2_multiplier, &d->q.input2_shift));
  d->compare_quantized = true;
  d->compare_rows = false;
  wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, "quantized");
  return WICK_OK;
}

static wick_status compare_prepare(wick_op_ctx *ctx) {
  wick_tensor *a = wick_op_input(ctx, 0);
  WICK_CHECK(ctx, a != NULL, "input 0 is required but absent");
  wick_compare_op op = compare_op(wick_op_builtin(ctx));
  bool logical = op == WICK_COMPARE_LOGICAL_AND || op == WICK_COMPARE_LOGICAL_OR;
  wick_dtype t = a->type;
  if (logical) {
    WICK_CHECK(ctx, t == WICK_DTYPE_BOOL, "inputs must be bool, not %s", wick_dtype_name(t));
  } else {
    WICK_CHECK_SUPPORTED(ctx,
                         t == WICK_DTYPE_FLOAT32 || t == WICK_DTYPE_INT32 ||
                             t == WICK_DTYPE_INT64 || t == WICK_DTYPE_BOOL ||
                             t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 ||
                             (t == WICK_DTYPE_INT16 && a->info->quant.count == 0),
                         "input type %s%s is not supported", wick_dtype_name(t),
                         t == WICK_DTYPE_INT16 ? " with quantization" : "");
  }
  WICK_TRY(prepare_broadcast(ctx, WICK_DTYPE_BOOL, true));
  binary_data *d = wick_op_data(ctx);
  d->fast = NULL;
  d->compare_quantized = false;
  if (!logical && (t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8) &&
      (a->info->quant.count > 0 || wick_op_input(ctx, 1)->info->quant.count > 0))
    return compare_quantized_prepare(ctx, d);
  /* float comparisons walk rows of the collapsed broadcast (src/kernels/logical.c) */
  d->compare_rows = t == WICK_DTYPE_FLOAT32 && !logical && !wick_op_force_reference(ctx) &&
                    wick_f32_binary_plan_make(&d->bc, &d->plan);
  if (d->compare_rows) /* rows of the collapsed broadcast (src/kernels/logical.c) */
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "rows");
  else
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE, NULL);
  return WICK_OK;
}

static wick_status compare_invoke(wick_op_ctx *ctx) {
  const binary_data *d = wick_op_data(ctx);
  wick_tensor *a = wick_op_input(ctx, 0), *b = wick_op_input(ctx, 1), *o = wick_op_output(ctx, 0);
  if (d->compare_quantized) {
    wick_q_compare__reference(compare_op(wick_op_builtin(ctx)), a->type, &d->bc, &d->q, a->data,
                              b->data, o->data);
    return WICK_OK;
  }
  if (d->compare_rows &&
      wick_f32_compare_plan(compare_op(wick_op_builtin(ctx)), &d->plan, a->data, b->data, o->data))
    return WICK_OK;
  wick_compare__reference(compare_op(wick_op_builtin(ctx)), a->type, &d->bc, a->data, b->data,
                          o->data);
  return WICK_OK;
}

#define COMPARE_OP(sym, NAME, maxv) \
  const wick_op_def sym = {#NAME, WICK_BUILTIN_##NAME, maxv, compare_prepare, compare_invoke, 0};

COMPARE_OP(wick_op_equal, EQUAL, 5)
COMPARE_OP(wick_op_not_equal, NOT_EQUAL, 3)
COMPARE_OP(wick_op_less, LESS, 3)
COMPARE_OP(wick_op_less_equal, LESS_EQUAL, 2)
COMPARE_OP(wick_op_greater, GREATER, 2)
COMPARE_OP(wick_op_greater_equal, GREATER_EQUAL, 3)
COMPARE_OP(wick_op_logical_and, LOGICAL_AND, 1)
COMPARE_OP(wick_op_logical_or, LOGICAL_OR, 1)

/* ---------------------------------------------------------------- BITWISE_XOR */

static wick_status xor_prepare(wick_op_ctx *ctx) {
  wick_tensor *a = wick_op_input(ctx, 0);
  WICK_CHECK(ctx, a != NULL, "input 0 is required but absent");
  wick_dtype t = a->type;
  WICK_CHECK_SUPPORTED(ctx,
                       t == WICK_DTYPE_INT8 || t == WICK_DTYPE_UINT8 || t == WICK_DTYPE_INT16 ||
                           t == WICK_DTYPE_INT32,
                       "input type %s is not supported (int8, uint8, int16, int32)",
                       wick_dtype_name(t));
  return prepare_broadcast(ctx, t, true);
}

static wick_status xor_invoke(wick_op_ctx *ctx) {
  const binary_data *d = wick_op_data(ctx);
  wick_tensor *a = wick_op_input(ctx, 0), *b = wick_op_input(ctx, 1), *o = wick_op_output(ctx, 0);
  wick_bitwise_xor__reference(wick_dtype_size(a->type), &d->bc, a->data, b->data, o->data);
  return WICK_OK;
}

const wick_op_def wick_op_bitwise_xor = {
    "BITWISE_XOR", WICK_BUILTIN_BITWISE_XOR, 1, xor_prepare, xor_invoke, 0};

/* ---------------------------------------------------------------- ATAN2 */

/* atan2(y, x) elementwise. LiteRT checks only that the ranks agree and then
 * reads both operands as if they had y's shape; wick requires equal shapes. */
static wick_status atan2_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *y, *x;
  WICK_TRY(wick_require_input(ctx, 0, &y));
  WICK_TRY(wick_require_input(ctx, 1, &x));
  WICK_CHECK_SUPPORTED(ctx, y->type == WICK_DTYPE_FLOAT32 || y->type == WICK_DTYPE_FLOAT64,
                       "input type %s is not supported (float32, float64)",
                       wick_dtype_name(y->type));
  WICK_CHECK(ctx, x->type == y->type, "input types differ (%s and %s)", wick_dtype_name(y->type),
             wick_dtype_name(x->type));
  bool same = x->rank == y->rank;
  for (int32_t i = 0; same && i < y->rank; i++) same = x->dims[i] == y->dims[i];
  WICK_CHECK(ctx, same, "inputs must have the same shape (ATAN2 does not broadcast)");
  return wick_op_set_output(ctx, 0, y->type, y->rank, y->dims);
}

static wick_status atan2_invoke(wick_op_ctx *ctx) {
  wick_tensor *y = wick_op_input(ctx, 0), *x = wick_op_input(ctx, 1), *o = wick_op_output(ctx, 0);
  int64_t n = wick_tensor_elements(o);
  if (o->type == WICK_DTYPE_FLOAT32)
    wick_f32_atan2__reference(n, y->data, x->data, o->data);
  else
    wick_f64_atan2__reference(n, y->data, x->data, o->data);
  return WICK_OK;
}

const wick_op_def wick_op_atan2 = {"ATAN2", WICK_BUILTIN_ATAN2, 1, atan2_prepare, atan2_invoke, 0};
