/*
 * op_sweep/elementwise.c — the op sweep's cases for the elementwise ops: binary (float and
 * quantized), unary, PRELU, the comparisons and logical ops, the other binary ops
 * (tests/unit/test_op_sweep.c describes the sweep; op_sweep/sweep.h the harness they use).
 */
#include "op_sweep/sweep.h"

/* ---------------------------------------------------------------- elementwise binary */

typedef struct shape_pair {
  const char *name;
  int32_t a[4], b[4];
  size_t ra, rb;
} shape_pair;

static const shape_pair binary_shapes[] = {
    {"same [2,3,5,7]", {2, 3, 5, 7}, {2, 3, 5, 7}, 4, 4},
    {"row [2,5,37]+[37]", {2, 5, 37}, {37}, 3, 1},
    {"scalar [3,41]+[]", {3, 41}, {0}, 2, 0},
    {"scalar first [1]+[3,41]", {1}, {3, 41}, 1, 2},
    {"general [2,1,7]+[2,5,1]", {2, 1, 7}, {2, 5, 1}, 3, 3},
    {"inner [4,6,1]+[4,6,9]", {4, 6, 1}, {4, 6, 9}, 3, 3},
    /* inner runs long enough for the int8 kernels' planned broadcasts */
    {"per row [3,7,40]+[3,7,1]", {3, 7, 40}, {3, 7, 1}, 3, 3},
    {"per row first [5,1]+[5,33]", {5, 1}, {5, 33}, 2, 2},
    {"outer [3,1,40]+[3,5,40]", {3, 1, 40}, {3, 5, 40}, 3, 3},
};
#define NUM_BINARY_SHAPES (sizeof binary_shapes / sizeof binary_shapes[0])

typedef struct binary_op {
  const char *name;
  int32_t code;
  uint8_t opt; /* OPT_NONE: no options table */
  bool exact;  /* the vectorized kernels are bit-identical to the reference */
  double b_lo, b_hi, a_lo, a_hi;
} binary_op;

static void binary_case(const binary_op *bo, const shape_pair *sp, int act, wick_dtype type) {
  sweep_case c;
  case_begin(&c, bo->name, bo->exact ? EXACT : TOL_FLOAT, "%s %s%s", wick_dtype_name(type),
             sp->name, act_names[act]);
  int32_t ins[2] = {input(&c, type, sp->a, sp->ra, NULL, bo->a_lo, bo->a_hi),
                    input(&c, type, sp->b, sp->rb, NULL, bo->b_lo, bo->b_hi)};
  output(&c, type == WICK_DTYPE_BOOL ? WICK_DTYPE_BOOL : type, NULL);
  op(&c, bo->code, ins, 2, bo->opt, bo->opt ? opt_i8(&c, (int8_t)act) : NULL);
  run_case(&c);
}

/* The records' RESULT (binary_ops.inc, unary_ops.inc): bit for bit, or within TOL_FLOAT;
 * OPTIONS (binary_ops.inc): the options table. */
enum { RESULT_EXACT = 1, RESULT_APPROX = 0 };
#define OPTIONS_ACTIVATION(NAME) OPT_##NAME
#define OPTIONS_NONE(NAME) OPT_NONE

/* The float ops with vector kernels: each also runs on the broadcasts the vector drivers plan
 * (all of binary_shapes; the others on its first three). */
static bool has_binary_vector_kernel(int32_t code) {
  return code == WICK_BUILTIN_ADD || code == WICK_BUILTIN_SUB || code == WICK_BUILTIN_MUL ||
         code == WICK_BUILTIN_DIV || code == WICK_BUILTIN_MAXIMUM || code == WICK_BUILTIN_MINIMUM ||
         code == WICK_BUILTIN_SQUARED_DIFFERENCE;
}

void sweep_binary_float(void) {
  /* every float binary arithmetic op, as its record in binary_ops.inc draws it */
  static const binary_op ops[] = {
#define WICK_BINARY_F32(NAME, name, KERNEL, VERSION, FLAGS, TYPES, OPTIONS, A_LO, A_HI, B_LO, \
                        B_HI, RESULT, ...)                                                    \
  {#NAME, WICK_BUILTIN_##NAME, OPTIONS_##OPTIONS(NAME), RESULT_##RESULT, B_LO, B_HI, A_LO, A_HI},
#include "kernels/reference/binary_ops.inc"
  };
  const binary_op *add = NULL, *mul = NULL;
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    const size_t shapes = has_binary_vector_kernel(ops[o].code) ? NUM_BINARY_SHAPES : 3;
    for (size_t s = 0; s < shapes; s++)
      binary_case(&ops[o], &binary_shapes[s], ACT_NONE, WICK_DTYPE_FLOAT32);
    if (ops[o].opt != OPT_NONE) {
      binary_case(&ops[o], &binary_shapes[0], ACT_RELU6, WICK_DTYPE_FLOAT32);
      binary_case(&ops[o], &binary_shapes[1], ACT_RELU, WICK_DTYPE_FLOAT32);
      binary_case(&ops[o], &binary_shapes[2], ACT_RELU_N1_TO_1, WICK_DTYPE_FLOAT32);
    }
    if (ops[o].code == WICK_BUILTIN_ADD) add = &ops[o];
    if (ops[o].code == WICK_BUILTIN_MUL) mul = &ops[o];
  }
  /* large enough to be split over the threads */
  static const shape_pair large = {"large [4,256,300]", {4, 256, 300}, {4, 256, 300}, 3, 3};
  binary_case(add, &large, ACT_NONE, WICK_DTYPE_FLOAT32);
  binary_case(mul, &large, ACT_RELU, WICK_DTYPE_FLOAT32);
}

static void qbinary_case(const char *name, int32_t code, uint8_t opt, wick_dtype t,
                         const shape_pair *sp, int act, qparams a, qparams b, qparams out,
                         const char *note) {
  sweep_case c;
  case_begin(&c, name, EXACT, "%s %s%s%s", wick_dtype_name(t), sp->name, act_names[act], note);
  int32_t ins[2] = {input(&c, t, sp->a, sp->ra, q(&c, a.scale, a.zero_point), FULL, 0),
                    input(&c, t, sp->b, sp->rb, q(&c, b.scale, b.zero_point), FULL, 0)};
  output(&c, t, q(&c, out.scale, out.zero_point));
  op(&c, code, ins, 2, opt, opt ? opt_i8(&c, (int8_t)act) : NULL);
  run_case(&c);
}

void sweep_binary_quantized(void) {
  static const struct {
    const char *name;
    int32_t code;
    uint8_t opt;
  } arith[] = {{"ADD", WICK_BUILTIN_ADD, OPT_ADD},
               {"SUB", WICK_BUILTIN_SUB, OPT_SUB},
               {"MUL", WICK_BUILTIN_MUL, OPT_MUL}};
  for (size_t o = 0; o < 3; o++) {
    const bool mul = arith[o].code == WICK_BUILTIN_MUL;
    const qparams a8 = {0.05f, 3}, b8 = {0.03f, -7}, o8 = {mul ? 0.2f : 0.08f, -2};
    const qparams au = {0.05f, 128}, bu = {0.03f, 120}, ou = {mul ? 0.2f : 0.08f, 130};
    const qparams a16 = {0.0004f, 0}, b16 = {0.0003f, 0}, o16 = {mul ? 0.004f : 0.0008f, 0};
    for (size_t s = 0; s < NUM_BINARY_SHAPES; s++) {
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT8, &binary_shapes[s],
                   ACT_NONE, a8, b8, o8, "");
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_UINT8, &binary_shapes[s],
                   ACT_NONE, au, bu, ou, "");
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT16, &binary_shapes[s],
                   ACT_NONE, a16, b16, o16, "");
    }
    qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT8, &binary_shapes[0],
                 ACT_RELU6, a8, b8, o8, "");
    qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT8, &binary_shapes[1],
                 ACT_RELU, a8, b8, o8, "");
    qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_UINT8, &binary_shapes[2],
                 ACT_RELU6, au, bu, ou, "");
    if (!mul) { /* power-of-two int16 scales: LiteRT's LSTM path */
      const qparams p1 = {1.0f / 2048, 0}, p2 = {1.0f / 4096, 0};
      qbinary_case(arith[o].name, arith[o].code, arith[o].opt, WICK_DTYPE_INT16, &binary_shapes[0],
                   ACT_NONE, p1, p2, p1, " pot scales");
    }
  }
  static const shape_pair large = {"large [4,256,300]", {4, 256, 300}, {4, 256, 300}, 3, 3};
  qbinary_case("ADD", WICK_BUILTIN_ADD, OPT_ADD, WICK_DTYPE_INT8, &large, ACT_NONE,
               (qparams){0.05f, 3}, (qparams){0.03f, -7}, (qparams){0.08f, -2}, "");
  qbinary_case("MUL", WICK_BUILTIN_MUL, OPT_MUL, WICK_DTYPE_INT8, &large, ACT_NONE,
               (qparams){0.05f, 3}, (qparams){0.03f, -7}, (qparams){0.2f, -2}, "");
  /* MAXIMUM / MINIMUM compare the raw values: operands quantized like the output */
  static const struct {
    const char *name;
    int32_t code;
  } minmax[] = {{"MAXIMUM", WICK_BUILTIN_MAXIMUM}, {"MINIMUM", WICK_BUILTIN_MINIMUM}};
  for (size_t o = 0; o < 2; o++)
    for (size_t s = 0; s < NUM_BINARY_SHAPES; s += 1) {
      const qparams p = {0.05f, 3};
      qbinary_case(minmax[o].name, minmax[o].code, OPT_NONE, WICK_DTYPE_INT8, &binary_shapes[s],
                   ACT_NONE, p, p, p, "");
      if (s < 2)
        qbinary_case(minmax[o].name, minmax[o].code, OPT_NONE, WICK_DTYPE_INT16, &binary_shapes[s],
                     ACT_NONE, (qparams){0.001f, 0}, (qparams){0.001f, 0}, (qparams){0.001f, 0},
                     "");
    }
  for (size_t s = 0; s < NUM_BINARY_SHAPES; s++)
    qbinary_case("SQUARED_DIFFERENCE", WICK_BUILTIN_SQUARED_DIFFERENCE, OPT_NONE, WICK_DTYPE_INT8,
                 &binary_shapes[s], ACT_NONE, (qparams){0.05f, 3}, (qparams){0.04f, -7},
                 (qparams){0.65f, -128}, "");
}

/* ---------------------------------------------------------------- elementwise unary */

typedef struct unary_op {
  const char *name;
  int32_t code;
  bool exact;
  double lo, hi;
} unary_op;

static void unary_case(const unary_op *u, wick_dtype t, const int32_t *shape, size_t rank,
                       const char *shape_name) {
  sweep_case c;
  case_begin(&c, u->name, u->exact ? EXACT : TOL_FLOAT, "%s %s", wick_dtype_name(t), shape_name);
  int32_t in = input(&c, t, shape, rank, NULL, u->lo, u->hi);
  output(&c, t, NULL);
  op(&c, u->code, &in, 1, OPT_NONE, NULL);
  run_case(&c);
}

/* The ops with vector kernels: each also runs on a short tail ([1,5]). */
static bool has_vector_kernel(const char *name) {
  static const char *const vector_ops[] = {"RELU",       "RELU6",    "RELU_N1_TO_1", "RELU_0_TO_1",
                                           "HARD_SWISH", "LOGISTIC", "TANH",         "EXP",
                                           "NEG",        "ABS"};
  for (size_t i = 0; i < sizeof vector_ops / sizeof vector_ops[0]; i++)
    if (strcmp(name, vector_ops[i]) == 0) return true;
  return false;
}

void sweep_unary(void) {
  /* every float unary math op, as its record in unary_ops.inc draws it */
  static const unary_op ops[] = {
#define WICK_UNARY_F32(NAME, name, KERNEL, VERSION, FLAGS, TYPES, LO, HI, RESULT, ...) \
  {#NAME, WICK_BUILTIN_##NAME, RESULT_##RESULT, LO, HI},
#include "kernels/reference/unary_ops.inc"
#undef WICK_UNARY_F32
  };
  const unary_op *relu = NULL, *logistic = NULL;
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    unary_case(&ops[o], WICK_DTYPE_FLOAT32, S(3, 37), "[3,37]");
    if (has_vector_kernel(ops[o].name)) unary_case(&ops[o], WICK_DTYPE_FLOAT32, S(1, 5), "[1,5]");
    if (ops[o].code == WICK_BUILTIN_RELU) relu = &ops[o];
    if (ops[o].code == WICK_BUILTIN_LOGISTIC) logistic = &ops[o];
  }
  unary_case(relu, WICK_DTYPE_FLOAT32, S(2, 400, 400), "large [2,400,400]");
  unary_case(logistic, WICK_DTYPE_FLOAT32, S(2, 400, 400), "large [2,400,400]");
  static const unary_op int_ops[] = {{"ABS", WICK_BUILTIN_ABS, true, -1000, 1000},
                                     {"NEG", WICK_BUILTIN_NEG, true, -1000, 1000}};
  for (size_t o = 0; o < sizeof int_ops / sizeof int_ops[0]; o++)
    unary_case(&int_ops[o], WICK_DTYPE_INT32, S(3, 37), "[3,37]");
  /* activations with options */
  for (int approximate = 0; approximate < 2; approximate++) {
    sweep_case c;
    case_begin(&c, "GELU", TOL_FLOAT, "float32 [3,37]%s", approximate ? " approximate" : "");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -6, 6);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_GELU, &in, 1, OPT_GELU, opt_i8(&c, (int8_t)approximate));
    run_case(&c);
  }
  {
    sweep_case c;
    case_begin(&c, "LEAKY_RELU", EXACT, "float32 [3,37] alpha 0.2");
    int32_t in = input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -6, 6);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_LEAKY_RELU, &in, 1, OPT_LEAKY_RELU, opt_f32(&c, 0.2f));
    run_case(&c);
  }
}

/* Quantized activations: input (type, params), output params. */
typedef struct qunary {
  const char *name;
  int32_t code;
  wick_dtype type;
  qparams in, out;
  double lo, hi; /* input range in steps (FULL: the type's) */
} qunary;

void sweep_unary_quantized(void) {
  const float s15 = 1.0f / 32768;
  const qunary ops[] = {
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, WICK_DTYPE_INT8, {0.06f, 5}, {1.0f / 256, -128}, FULL, 0},
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, WICK_DTYPE_UINT8, {0.06f, 128}, {1.0f / 256, 0}, FULL, 0},
      {"LOGISTIC", WICK_BUILTIN_LOGISTIC, WICK_DTYPE_INT16, {1.0f / 4096, 0}, {s15, 0}, FULL, 0},
      {"TANH", WICK_BUILTIN_TANH, WICK_DTYPE_INT8, {0.03f, -4}, {1.0f / 128, 0}, FULL, 0},
      {"TANH", WICK_BUILTIN_TANH, WICK_DTYPE_UINT8, {0.03f, 128}, {1.0f / 128, 128}, FULL, 0},
      {"TANH", WICK_BUILTIN_TANH, WICK_DTYPE_INT16, {1.0f / 8192, 0}, {s15, 0}, FULL, 0},
      {"HARD_SWISH", WICK_BUILTIN_HARD_SWISH, WICK_DTYPE_INT8, {0.05f, 3}, {0.03f, -90}, FULL, 0},
      {"HARD_SWISH", WICK_BUILTIN_HARD_SWISH, WICK_DTYPE_UINT8, {0.05f, 128}, {0.03f, 40}, FULL, 0},
      {"RELU", WICK_BUILTIN_RELU, WICK_DTYPE_INT8, {0.05f, 4}, {0.03f, -100}, FULL, 0},
      {"RELU", WICK_BUILTIN_RELU, WICK_DTYPE_UINT8, {0.05f, 128}, {0.03f, 20}, FULL, 0},
      {"RELU", WICK_BUILTIN_RELU, WICK_DTYPE_INT16, {0.001f, 0}, {0.0008f, 0}, FULL, 0},
      {"RELU6", WICK_BUILTIN_RELU6, WICK_DTYPE_INT8, {0.06f, -2}, {0.03f, -110}, FULL, 0},
      {"RELU6", WICK_BUILTIN_RELU6, WICK_DTYPE_UINT8, {0.06f, 120}, {0.03f, 30}, FULL, 0},
      {"RELU6", WICK_BUILTIN_RELU6, WICK_DTYPE_INT16, {0.0003f, 0}, {0.0002f, 0}, FULL, 0},
      {"RELU_N1_TO_1",
       WICK_BUILTIN_RELU_N1_TO_1,
       WICK_DTYPE_INT8,
       {0.02f, 1},
       {1.0f / 127, 0},
       FULL,
       0},
      {"RELU_0_TO_1",
       WICK_BUILTIN_RELU_0_TO_1,
       WICK_DTYPE_INT8,
       {0.02f, 1},
       {1.0f / 200, -100},
       FULL,
       0},
      {"RSQRT", WICK_BUILTIN_RSQRT, WICK_DTYPE_INT8, {0.05f, -100}, {0.02f, -128}, -99, 127},
      {"RSQRT", WICK_BUILTIN_RSQRT, WICK_DTYPE_INT16, {0.001f, 0}, {0.001f, 0}, 1, 32767},
  };
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    const qunary *u = &ops[o];
    sweep_case c;
    case_begin(&c, u->name, EXACT, "%s [3,37]", wick_dtype_name(u->type));
    int32_t in = input(&c, u->type, S(3, 37), q(&c, u->in.scale, u->in.zero_point), u->lo, u->hi);
    output(&c, u->type, q(&c, u->out.scale, u->out.zero_point));
    op(&c, u->code, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
  /* a large int8 table op: the 8-bit lookup kernels */
  {
    sweep_case c;
    case_begin(&c, "LOGISTIC", EXACT, "int8 large [2,400,400]");
    int32_t in = input(&c, WICK_DTYPE_INT8, S(2, 400, 400), q(&c, 0.06f, 5), FULL, 0);
    output(&c, WICK_DTYPE_INT8, q(&c, 1.0f / 256, -128));
    op(&c, WICK_BUILTIN_LOGISTIC, &in, 1, OPT_NONE, NULL);
    run_case(&c);
  }
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    const int64_t z = t ? 128 : 0;
    for (int approximate = 0; approximate < 2; approximate++) {
      sweep_case c;
      case_begin(&c, "GELU", EXACT, "%s [3,37]%s", wick_dtype_name(type),
                 approximate ? " approximate" : "");
      int32_t in = input(&c, type, S(3, 37), q(&c, 0.04f, z + 2), FULL, 0);
      output(&c, type, q(&c, 0.03f, z - 40));
      op(&c, WICK_BUILTIN_GELU, &in, 1, OPT_GELU, opt_i8(&c, (int8_t)approximate));
      run_case(&c);
    }
    sweep_case c;
    case_begin(&c, "LEAKY_RELU", EXACT, "%s [3,37] alpha 0.2", wick_dtype_name(type));
    int32_t in = input(&c, type, S(3, 37), q(&c, 0.04f, z + 2), FULL, 0);
    output(&c, type, q(&c, 0.03f, z - 20));
    op(&c, WICK_BUILTIN_LEAKY_RELU, &in, 1, OPT_LEAKY_RELU, opt_f32(&c, 0.2f));
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- PRELU */

void sweep_prelu(void) {
  static const struct {
    const char *name;
    int32_t alpha[3];
    size_t rank;
  } alphas[] = {{"alpha [9]", {9}, 1},
                {"alpha [1,1,9]", {1, 1, 9}, 3},
                {"alpha [5,7,9]", {5, 7, 9}, 3}};
  for (size_t a = 0; a < 3; a++) {
    sweep_case c;
    case_begin(&c, "PRELU", EXACT, "float32 [2,5,7,9] %s", alphas[a].name);
    int32_t ins[2];
    ins[0] = input(&c, WICK_DTYPE_FLOAT32, S(2, 5, 7, 9), NULL, -3, 3);
    ins[1] =
        random_constant(&c, WICK_DTYPE_FLOAT32, alphas[a].alpha, alphas[a].rank, NULL, -0.5, 0.5);
    output(&c, WICK_DTYPE_FLOAT32, NULL);
    op(&c, WICK_BUILTIN_PRELU, ins, 2, OPT_NONE, NULL);
    run_case(&c);
  }
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    const int64_t z = t ? 128 : 0;
    sweep_case c;
    case_begin(&c, "PRELU", EXACT, "%s [2,5,7,9] alpha [9]", wick_dtype_name(type));
    int32_t ins[2];
    ins[0] = input(&c, type, S(2, 5, 7, 9), q(&c, 0.05f, z + 3), FULL, 0);
    ins[1] = random_constant(&c, type, S(9), q(&c, 0.004f, z - 10), FULL, 0);
    output(&c, type, q(&c, 0.04f, z - 30));
    op(&c, WICK_BUILTIN_PRELU, ins, 2, OPT_NONE, NULL);
    run_case(&c);
  }
}

/* ---------------------------------------------------------------- the other ops
 * Most run the reference kernels on every set; they are here so that a path added later
 * (or a portable fast path: comparisons by rows, SELECT's row walk, REDUCE_ANY's byte rows,
 * the strided copies of the movement ops) is compared from its first day. */

void sweep_compare_logical(void) {
  typedef struct named_op {
    const char *name;
    int32_t code;
  } named_op;
  /* the comparisons and the logical ops of binary_ops.inc */
  static const named_op ops[] = {
#define WICK_COMPARE(NAME, ...) {#NAME, WICK_BUILTIN_##NAME},
#include "kernels/reference/binary_ops.inc"
  };
  static const named_op logical[] = {
#define WICK_LOGICAL(NAME, ...) {#NAME, WICK_BUILTIN_##NAME},
#include "kernels/reference/binary_ops.inc"
  };
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t s = 0; s < 3; s++)
      for (int t = 0; t < 3; t++) {
        const wick_dtype type = t == 0   ? WICK_DTYPE_FLOAT32
                                : t == 1 ? WICK_DTYPE_INT32
                                         : WICK_DTYPE_INT8;
        if (t == 2 && s != 0) continue;
        const shape_pair *sp = &binary_shapes[s];
        sweep_case c;
        case_begin(&c, ops[o].name, EXACT, "%s %s", wick_dtype_name(type), sp->name);
        /* a few distinct values, so that equality happens */
        /* int8 without quantization: wick compares raw int8, not quantized values */
        int32_t ins[2] = {input(&c, type, sp->a, sp->ra, NULL, -3, 3),
                          input(&c, type, sp->b, sp->rb, NULL, -3, 3)};
        output(&c, WICK_DTYPE_BOOL, NULL);
        op(&c, ops[o].code, ins, 2, OPT_NONE, NULL);
        run_case(&c);
      }
  /* quantized int8 / uint8: both inputs rescaled by their own scales before the comparison
   * (LiteRT's scaled comparison); values near each other so that ties happen */
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int t = 0; t < 2; t++)
      for (size_t s = 0; s < 2; s++) {
        const wick_dtype type = t == 0 ? WICK_DTYPE_INT8 : WICK_DTYPE_UINT8;
        const int32_t zp = t == 0 ? -3 : 125;
        const shape_pair *sp = &binary_shapes[s];
        sweep_case c;
        case_begin(&c, ops[o].name, EXACT, "%s quantized %s", wick_dtype_name(type), sp->name);
        int32_t ins[2] = {input(&c, type, sp->a, sp->ra, q(&c, 0.05f, zp), zp - 8, zp + 8),
                          input(&c, type, sp->b, sp->rb, q(&c, 0.1f, zp + 2), zp - 2, zp + 6)};
        output(&c, WICK_DTYPE_BOOL, NULL);
        op(&c, ops[o].code, ins, 2, OPT_NONE, NULL);
        run_case(&c);
      }
  for (size_t o = 0; o < sizeof logical / sizeof logical[0]; o++)
    for (size_t s = 0; s < 3; s++) {
      const shape_pair *sp = &binary_shapes[s];
      sweep_case c;
      case_begin(&c, logical[o].name, EXACT, "bool %s", sp->name);
      int32_t ins[2] = {input(&c, WICK_DTYPE_BOOL, sp->a, sp->ra, NULL, 0, 1),
                        input(&c, WICK_DTYPE_BOOL, sp->b, sp->rb, NULL, 0, 1)};
      output(&c, WICK_DTYPE_BOOL, NULL);
      op(&c, logical[o].code, ins, 2, OPT_NONE, NULL);
      run_case(&c);
    }
  sweep_case c;
  case_begin(&c, "LOGICAL_NOT", EXACT, "bool [3,37]");
  int32_t in = input(&c, WICK_DTYPE_BOOL, S(3, 37), NULL, 0, 1);
  output(&c, WICK_DTYPE_BOOL, NULL);
  op(&c, WICK_BUILTIN_LOGICAL_NOT, &in, 1, OPT_NONE, NULL);
  run_case(&c);
  for (int v2 = 0; v2 < 2; v2++)
    for (int t = 0; t < 2; t++) {
      const wick_dtype type = t ? WICK_DTYPE_INT8 : WICK_DTYPE_FLOAT32;
      case_begin(&c, v2 ? "SELECT_V2" : "SELECT", EXACT, "%s %s", wick_dtype_name(type),
                 v2 ? "cond [37] x [2,5,37] y [5,1]" : "[2,5,37]");
      int32_t ins[3];
      ins[0] = v2 ? input(&c, WICK_DTYPE_BOOL, S(37), NULL, 0, 1)
                  : input(&c, WICK_DTYPE_BOOL, S(2, 5, 37), NULL, 0, 1);
      ins[1] = input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
      ins[2] = v2 ? input(&c, type, S(5, 1), quant_for(&c, type), lo_for(type), 2)
                  : input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
      output(&c, type, quant_for(&c, type));
      op(&c, v2 ? WICK_BUILTIN_SELECT_V2 : WICK_BUILTIN_SELECT, ins, 3, OPT_NONE, NULL);
      run_case(&c);
    }
  /* the row walk's other forms: strided x (broadcast over the last dim), int16 elements */
  for (int t = 0; t < 2; t++) {
    const wick_dtype type = t ? WICK_DTYPE_INT16 : WICK_DTYPE_INT8;
    case_begin(&c, "SELECT_V2", EXACT, "%s cond [2,5,37] x [2,5,1] y [2,5,37]",
               wick_dtype_name(type));
    int32_t ins[3];
    ins[0] = input(&c, WICK_DTYPE_BOOL, S(2, 5, 37), NULL, 0, 1);
    ins[1] = input(&c, type, S(2, 5, 1), quant_for(&c, type), lo_for(type), 2);
    ins[2] = input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
    output(&c, type, quant_for(&c, type));
    op(&c, WICK_BUILTIN_SELECT_V2, ins, 3, OPT_NONE, NULL);
    run_case(&c);
    case_begin(&c, "SELECT_V2", EXACT, "%s cond [2,1,37] x [2,5,37] y [2,5,37]",
               wick_dtype_name(type));
    ins[0] = input(&c, WICK_DTYPE_BOOL, S(2, 1, 37), NULL, 0, 1);
    ins[1] = input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
    ins[2] = input(&c, type, S(2, 5, 37), quant_for(&c, type), lo_for(type), 2);
    output(&c, type, quant_for(&c, type));
    op(&c, WICK_BUILTIN_SELECT_V2, ins, 3, OPT_NONE, NULL);
    run_case(&c);
  }
}

void sweep_binary_more(void) {
  /* (the float arithmetic ops are all in sweep_binary_float, from their records) */
  static const binary_op int_ops[] = {
      {"ADD", WICK_BUILTIN_ADD, OPT_ADD, true, -1000, 1000, -1000, 1000},
      {"SUB", WICK_BUILTIN_SUB, OPT_SUB, true, -1000, 1000, -1000, 1000},
      {"MUL", WICK_BUILTIN_MUL, OPT_MUL, true, -1000, 1000, -1000, 1000},
      {"MAXIMUM", WICK_BUILTIN_MAXIMUM, OPT_NONE, true, -1000, 1000, -1000, 1000},
      {"FLOOR_DIV", WICK_BUILTIN_FLOOR_DIV, OPT_NONE, true, 1, 30, -1000, 1000},
      {"FLOOR_MOD", WICK_BUILTIN_FLOOR_MOD, OPT_NONE, true, 1, 30, -1000, 1000},
      {"BITWISE_XOR", WICK_BUILTIN_BITWISE_XOR, OPT_NONE, true, -1000, 1000, -1000, 1000},
  };
  for (size_t o = 0; o < sizeof int_ops / sizeof int_ops[0]; o++)
    for (size_t s = 0; s < 2; s++)
      binary_case(&int_ops[o], &binary_shapes[s], ACT_NONE, WICK_DTYPE_INT32);
  sweep_case c;
  case_begin(&c, "ATAN2", TOL_FLOAT, "float32 [3,37]");
  int32_t ins[2] = {input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -2, 2),
                    input(&c, WICK_DTYPE_FLOAT32, S(3, 37), NULL, -2, 2)};
  output(&c, WICK_DTYPE_FLOAT32, NULL);
  op(&c, WICK_BUILTIN_ATAN2, ins, 2, OPT_NONE, NULL);
  run_case(&c);
}

/* One op over one float32 or int8 input and constant int32 operands. */
