/*
 * elementwise_unary.c — one-input, one-output elementwise ops without
 * options: the unary math ops of src/kernels/reference/unary_ops.inc (RELU
 * ... SIGN: their records here are derived from its lines), LOGICAL_NOT and
 * ZEROS_LIKE.
 *
 * One prepare and one invoke serve them all, driven by the table below: the
 * kernel op, the element types the op accepts (those LiteRT accepts for the
 * non-quantized op) and the newest version implemented. Output = input shape
 * and type. Quantized (int8/uint8/int16 with scales) variants are refused at
 * prepare with the type named, except the quantized LOGISTIC, TANH,
 * HARD_SWISH and RELU family, which activations_quantized.c implements.
 *
 * Float32 RELU RELU6 RELU_N1_TO_1 RELU_0_TO_1 LOGISTIC TANH HARD_SWISH EXP
 * NEG ABS run the vectorized kernels chosen at prepare (error bounds of the
 * transcendentals in src/kernels/template/elementwise.h; the others are
 * exact).
 *
 * Where wick's float results are defined for special inputs (NaN, ±inf, ±0,
 * LOG of a negative, ...) see reference.h, wick_unary_op.
 * Next: src/kernels/reference/unary.c; parameterized activations
 * (LEAKY_RELU, PRELU, GELU) live in activations.c.
 */
#include "format/schema.h"
#include "kernels/kernels.h"
#include "kernels/reference/reference.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

enum {
  T_F32 = 1 << 0,
  T_I16 = 1 << 1, /* non-quantized int16 only */
  T_I32 = 1 << 2,
  T_I64 = 1 << 3,
  T_BOOL = 1 << 4
};

typedef enum kind { K_MATH, K_NOT, K_ZEROS } kind;

typedef struct unary_entry {
  int32_t builtin;
  kind kind;
  wick_unary_op op;
  unsigned types;
  const char *type_list; /* for messages */
} unary_entry;

/* unary_ops.inc's TYPES: the accepted element types and how messages list them. */
#define TYPES_F32 T_F32, "float32"
#define TYPES_F32_I16_I32 T_F32 | T_I16 | T_I32, "float32, int16, int32"
#define TYPES_F32_I32 T_F32 | T_I32, "float32, int32"
#define TYPES_F32_I32_I64 T_F32 | T_I32 | T_I64, "float32, int32, int64"

static const unary_entry table[] = {
#define WICK_UNARY_F32(NAME, name, KERNEL, VERSION, FLAGS, TYPES, ...) \
  {WICK_BUILTIN_##NAME, K_MATH, WICK_UNARY_##NAME, TYPES_##TYPES},
#include "kernels/reference/unary_ops.inc"
#undef WICK_UNARY_F32
    {WICK_BUILTIN_LOGICAL_NOT, K_NOT, WICK_UNARY_NEG, T_BOOL, "bool"},
    {WICK_BUILTIN_ZEROS_LIKE, K_ZEROS, WICK_UNARY_NEG, T_F32 | T_I32 | T_I64,
     "float32, int32, int64"},
};

static const unary_entry *find_entry(int32_t builtin) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].builtin == builtin) return &table[i];
  return NULL;
}

/* The vectorized kernel of a float op, or -1. */
static int vector_kind(wick_unary_op op) {
  switch (op) {
    case WICK_UNARY_RELU: return WICK_F32_RELU;
    case WICK_UNARY_RELU6: return WICK_F32_RELU6;
    case WICK_UNARY_RELU_N1_TO_1: return WICK_F32_RELU_N1_TO_1;
    case WICK_UNARY_RELU_0_TO_1: return WICK_F32_RELU_0_TO_1;
    case WICK_UNARY_LOGISTIC: return WICK_F32_LOGISTIC;
    case WICK_UNARY_TANH: return WICK_F32_TANH;
    case WICK_UNARY_HARD_SWISH: return WICK_F32_HARD_SWISH;
    case WICK_UNARY_EXP: return WICK_F32_EXP;
    case WICK_UNARY_NEG: return WICK_F32_NEG;
    case WICK_UNARY_ABS: return WICK_F32_ABS;
    default: return -1;
  }
}

static unsigned type_bit(const wick_tensor *t) {
  bool quantized = t->info != NULL && t->info->quant.count > 0;
  switch (t->type) {
    case WICK_DTYPE_FLOAT32: return T_F32;
    case WICK_DTYPE_INT16: return quantized ? 0 : T_I16;
    case WICK_DTYPE_INT32: return T_I32;
    case WICK_DTYPE_INT64: return T_I64;
    case WICK_DTYPE_BOOL: return T_BOOL;
    default: return 0;
  }
}

static wick_status unary_prepare(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_prepare_quantized(ctx);
  const unary_entry *e = find_entry(wick_op_builtin(ctx));
  WICK_CHECK(ctx, e != NULL, "not an elementwise unary op");
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  bool quantized = in->info != NULL && in->info->quant.count > 0;
  WICK_CHECK_SUPPORTED(ctx, (type_bit(in) & e->types) != 0, "input type %s%s is not supported (%s)",
                       quantized ? "quantized " : "", wick_dtype_name(in->type), e->type_list);
  wick_op_set_data(ctx, NULL);
  const wick_f32_kernels *kern = wick_f32_kernels_select(wick_op_force_reference(ctx));
  int vkind = vector_kind(e->op);
  if (in->type == WICK_DTYPE_FLOAT32 && e->kind == K_MATH && kern != NULL && vkind >= 0 &&
      kern->unary[vkind] != NULL) {
    wick_f32_unary_fn *fn = wick_op_alloc(ctx, sizeof *fn);
    if (fn == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    *fn = kern->unary[vkind];
    wick_op_set_data(ctx, fn);
    wick_op_set_kernel(ctx, WICK_KERNEL_OPTIMIZED, NULL);
  } else if (e->kind == K_ZEROS) {
    wick_op_set_kernel(ctx, WICK_KERNEL_GENERIC, "zeros");
  } else {
    wick_op_set_kernel(ctx, WICK_KERNEL_REFERENCE,
                       in->type != WICK_DTYPE_FLOAT32 ? wick_dtype_name(in->type) : NULL);
  }
  return wick_op_set_output(ctx, 0, in->type, in->rank, in->dims);
}

static wick_status unary_invoke(wick_op_ctx *ctx) {
  if (wick_quant_routed(ctx, 0)) return wick_activation_invoke_quantized(ctx);
  const unary_entry *e = find_entry(wick_op_builtin(ctx));
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  int64_t n = wick_tensor_elements(in);
  switch (e->kind) {
    case K_ZEROS:
      if (out->bytes > 0) memset(out->data, 0, out->bytes);
      return WICK_OK;
    case K_NOT: wick_bool_not__reference(n, in->data, out->data); return WICK_OK;
    case K_MATH: break;
  }
  switch (in->type) {
    case WICK_DTYPE_FLOAT32:
      if (wick_op_data(ctx)) {
        const wick_f32_unary_fn *fn = wick_op_data(ctx);
        return wick_parallel_f32_unary(ctx, *fn, (size_t)n, in->data, out->data);
      } else {
        wick_f32_unary__reference(e->op, n, in->data, out->data);
      }
      break;
    case WICK_DTYPE_INT16: wick_i16_unary__reference(e->op, n, in->data, out->data); break;
    case WICK_DTYPE_INT32: wick_i32_unary__reference(e->op, n, in->data, out->data); break;
    case WICK_DTYPE_INT64: wick_i64_unary__reference(e->op, n, in->data, out->data); break;
    default: return wick_op_fail(ctx, WICK_ERR_UNSUPPORTED_OP, "unsupported type");
  }
  return WICK_OK;
}

/* max versions: LiteRT's newest; versions that only add int8/int16
 * quantized kernels are accepted and refused by type at prepare.
 * WICK_OP_ELEMENTWISE: every kernel of the op (float, integer, quantized
 * tables) maps element i to element i. */
#define UNARY_OP(sym, NAME, maxv, flags) \
  const wick_op_def sym = {#NAME, WICK_BUILTIN_##NAME, maxv, unary_prepare, unary_invoke, flags};

#define WICK_UNARY_F32(NAME, name, KERNEL, VERSION, FLAGS, ...) \
  UNARY_OP(wick_op_##name, NAME, VERSION, FLAGS)
#include "kernels/reference/unary_ops.inc"
#undef WICK_UNARY_F32
UNARY_OP(wick_op_logical_not, LOGICAL_NOT, 1, 0)
UNARY_OP(wick_op_zeros_like, ZEROS_LIKE, 1, 0)
