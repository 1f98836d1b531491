/*
 * elementwise_binary.c — ADD SUB MUL DIV MAXIMUM MINIMUM POW SQUARED_DIFFERENCE
 * FLOOR_DIV FLOOR_MOD, the comparisons (EQUAL ... GREATER_EQUAL) and
 * LOGICAL_AND / LOGICAL_OR, BITWISE_XOR: two inputs, numpy broadcasting, one
 * output. ATAN2 (same shapes only, as LiteRT) is at the end.
 *
 * The arithmetic, comparison and logical ops are the records of
 * src/kernels/reference/binary_ops.inc: their op records, accepted types,
 * fused activation and kernel selectors here are derived from its lines; one
 * prepare and one invoke serve each family.
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

enum {
  T_F32 = 1 << 0,
  T_I32 = 1 << 1,
  T_I64 = 1 << 2,
  T_C64 = 1 << 3 /* complex64 */
};

typedef struct arith_entry {
  int32_t builtin;
  wick_binary_op op;
  unsigned types;
  const char *type_list; /* for messages */
  bool activation;       /* the options hold a fused activation */
} arith_entry;

/* binary_ops.inc's TYPES: the accepted element types and how messages list them. */
#define TYPES_F32 T_F32, "float32"
#define TYPES_F32_I32_I64 T_F32 | T_I32 | T_I64, "float32, int32, int64; complex64 for MUL"
#define TYPES_F32_I32_I64_C64 T_F32 | T_I32 | T_I64 | T_C64, "float32, int32, int64, complex64"
/* and OPTIONS */
#define OPTIONS_ACTIVATION true
#define OPTIONS_NONE false

static const arith_entry arith_table[] = {
#define WICK_BINARY_F32(NAME, name, KERNEL, VERSION, FLAGS, TYPES, OPTIONS, ...) \
  {WICK_BUILTIN_##NAME, WICK_BINARY_##NAME, TYPES_##TYPES, OPTIONS_##OPTIONS},
#include "kernels/reference/binary_ops.inc"
};

static const arith_entry *find_arith(int32_t builtin) {
  for (size_t i = 0; i < sizeof arith_table / sizeof arith_table[0]; i++)
    if (arith_table[i].builtin == builtin) return &arith_table[i];
  return NULL;
}

static unsigned arith_type_bit(wick_dtype t) {
  switch (t) {
    case WICK_DTYPE_FLOAT32: return T_F32;
    case WICK_DTYPE_INT32: return T_I32;
    case WICK_DTYPE_INT64: return T_I64;
    case WICK_DTYPE_COMPLEX64: return T_C64;
    default: return 0;
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

static wick_status arith_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_binary_prepare_quantized(ctx);
  const arith_entry *e = find_arith(wick_op_builtin(ctx));
  WICK_CHECK(ctx, e != NULL, "not an elementwise binary op");
  wick_tensor *a = wick_op_input(ctx, 0);
  WICK_CHECK(ctx, a != NULL, "input 0 is required but absent");
  wick_dtype t = a->type;
  int32_t builtin = e->builtin;
  WICK_CHECK_SUPPORTED(ctx, (arith_type_bit(t) & e->types) != 0,
                       "input type %s is not supported (%s)", wick_dtype_name(t), e->type_list);
  wick_activation act = e->activation ? ctx->params->activation : WICK_ACT_NONE;
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
  const arith_entry *e = find_arith(wick_op_builtin(ctx));
  wick_binary_op op = e->op;
  wick_activation act = e->activation ? ctx->params->activation : WICK_ACT_NONE;
  float lo, hi;
  WICK_TRY(wick_activation_range_f32(ctx, act, &lo, &hi));
  const wick_node_fusion *fu = wick_op_fusion(ctx);
  if (fu->clamp) /* the RELU-family node after it (fuse.c; float only) */
    lo = fu->lo, hi = fu->hi;
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

/* WICK_OP_ELEMENTWISE (the record's FLAGS): every kernel of the op (float, integer, quantized;
 * vectorized and reference) reads element i of each input only to compute element i. */
#define ARITH_OP(sym, NAME, maxv, flags) \
  const wick_op_def sym = {#NAME, WICK_BUILTIN_##NAME, maxv, arith_prepare, arith_invoke, flags};
#define WICK_BINARY_F32(NAME, name, KERNEL, VERSION, FLAGS, ...) \
  ARITH_OP(wick_op_##name, NAME, VERSION, FLAGS)
#include "kernels/reference/binary_ops.inc"

/* ---------------------------------------------------------------- comparisons */

typedef struct compare_entry {
  int32_t builtin;
  wick_compare_op op;
  bool logical; /* bool inputs only */
} compare_entry;

static const compare_entry compare_table[] = {
#define WICK_COMPARE(NAME, ...) {WICK_BUILTIN_##NAME, WICK_COMPARE_##NAME, false},
#define WICK_LOGICAL(NAME, ...) {WICK_BUILTIN_##NAME, WICK_COMPARE_##NAME, true},
#include "kernels/reference/binary_ops.inc"
};

static const compare_entry *find_compare(int32_t builtin) {
  for (size_t i = 0; i < sizeof compare_table / sizeof compare_table[0]; i++)
    if (compare_table[i].builtin == builtin) return &compare_table[i];
  return NULL;
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
  const compare_entry *e = find_compare(wick_op_builtin(ctx));
  WICK_CHECK(ctx, e != NULL, "not a comparison or logical op");
  wick_tensor *a = wick_op_input(ctx, 0);
  WICK_CHECK(ctx, a != NULL, "input 0 is required but absent");
  bool logical = e->logical;
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
  const wick_compare_op op = find_compare(wick_op_builtin(ctx))->op;
  if (d->compare_quantized) {
    wick_q_compare__reference(op, a->type, &d->bc, &d->q, a->data, b->data, o->data);
    return WICK_OK;
  }
  if (d->compare_rows && wick_f32_compare_plan(op, &d->plan, a->data, b->data, o->data))
    return WICK_OK;
  wick_compare__reference(op, a->type, &d->bc, a->data, b->data, o->data);
  return WICK_OK;
}

/* The comparisons and logical ops of binary_ops.inc (FLAGS 0: their output is bool). */
#define COMPARE_OP(sym, NAME, maxv) \
  const wick_op_def sym = {#NAME, WICK_BUILTIN_##NAME, maxv, compare_prepare, compare_invoke, 0};
#define WICK_COMPARE(NAME, name, KERNEL, VERSION, ...) COMPARE_OP(wick_op_##name, NAME, VERSION)
#define WICK_LOGICAL WICK_COMPARE
#include "kernels/reference/binary_ops.inc"

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
