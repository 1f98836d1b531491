/*
 * nnapi_ops_logic.c — the NNAPI delegate's mapping of comparisons, logical
 * operators, SELECT and the boolean and sum reductions, all NNAPI feature
 * level 29 (conventions and helpers: nnapi_ops.c, nnapi_map.h). Bool tensors
 * are TENSOR_BOOL8 (one byte, 0 or 1, as wick stores them).
 *
 *   EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL: float32, int32,
 *     bool (EQUAL / NOT_EQUAL), and 8-bit inputs quantized alike (their
 *     stored values then order as their real values do, so TFLite's and
 *     NNAPI's comparisons agree; inputs quantized differently are declined:
 *     TFLite rescales them in fixed point, NNAPI compares real values);
 *     numpy broadcasting on both sides. IEEE comparisons (NaN unordered,
 *     -0 == +0) on both sides.
 *   LOGICAL_AND LOGICAL_OR (broadcasting) LOGICAL_NOT.
 *   REDUCE_ANY REDUCE_ALL (bool) and SUM (float: the sum's order aside,
 *     exact) over constant axes, keep_dims as TFLite's.
 *   SELECT, SELECT_V2: NNAPI's SELECT takes three operands of one shape, so
 *     an operand that broadcasts is first brought to the output's shape
 *     exactly: a bool condition by LOGICAL_AND with a constant true tensor
 *     holding the broadcast dimensions (x AND true = x), a value by TILE
 *     (after a RESHAPE to the output's rank). SELECT's 1-D condition of rows
 *     is declined (NNAPI reshapes no bool tensor, and LOGICAL_AND aligns
 *     dimensions from the right).
 *     8-bit values need x, y and the output quantized alike (TFLite copies
 *     the stored values; NNAPI would requantize otherwise).
 *   BROADCAST_TO: the same broadcast into the output (TILE, or LOGICAL_AND
 *     for bool).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_map.h"

static const nn_type BOOL8 = {ANEURALNETWORKS_TENSOR_BOOL8, 0, 0};

/* Output dims of numpy broadcasting of a and b, checked against the graph's output. */
static bool broadcasts_to_output(map_ctx *c, int32_t ai, int32_t bi, int32_t oi) {
  const wick_tensor *ta = nn_tensor(c, ai), *tb = nn_tensor(c, bi), *to = nn_tensor(c, oi);
  size_t ra = nn_rank(ta), rb = nn_rank(tb), ro = nn_rank(to);
  if (ra > ro || rb > ro) DECLINE("%s output rank below an input's", c->op);
  for (size_t k = 0; k < ro; k++) {
    int da = k < ro - ra ? 1 : nn_dim(ta, k - (ro - ra)),
        db = k < ro - rb ? 1 : nn_dim(tb, k - (ro - rb));
    int want = da > db ? da : db;
    if ((da != db && da != 1 && db != 1) || nn_dim(to, k) != want)
      DECLINE("%s shapes do not broadcast as NNAPI does", c->op);
  }
  return true;
}

bool nn_map_comparison(map_ctx *c, int32_t code) {
  nn_type a, b, out;
  c->allow_scalar = true;
  c->allow_bool = true;
  int32_t ai = nn_in_index(c, 0), bi = nn_in_index(c, 1), oi = nn_out_index(c, 0);
  if (!nn_value_type(c, ai, "first input", true, &a) ||
      !nn_value_type(c, bi, "second input", true, &b))
    return false;
  if (a.code != b.code) DECLINE("%s input types differ", c->op);
  if (nn_is_quant8(a.code) && !nn_same_quant(&a, &b))
    DECLINE(
        "%s of 8-bit inputs quantized differently (TFLite rescales in fixed point, NNAPI "
        "compares real values)",
        c->op);
  if (a.code == ANEURALNETWORKS_TENSOR_BOOL8 && code != ANEURALNETWORKS_EQUAL &&
      code != ANEURALNETWORKS_NOT_EQUAL)
    DECLINE("%s of bool tensors", c->op);
  NEED_LEVEL(29, c->op);
  if (!nn_value_type(c, oi, "output", false, &out)) return false;
  if (out.code != ANEURALNETWORKS_TENSOR_BOOL8) DECLINE("%s output is not bool", c->op);
  if (!broadcasts_to_output(c, ai, bi, oi)) return false;
  if (c->b == NULL) return true;
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, ai);
  ops[1] = nn_graph_operand(c, bi);
  return nn_operation_to(c, code, ops, 2, oi);
}

bool nn_map_logical(map_ctx *c, int32_t code) {
  NEED_LEVEL(29, c->op);
  c->allow_scalar = true;
  c->allow_bool = true;
  bool unary = code == ANEURALNETWORKS_LOGICAL_NOT;
  size_t n = unary ? 1 : 2;
  int32_t oi = nn_out_index(c, 0);
  nn_type t;
  for (size_t i = 0; i < n; i++) {
    if (!nn_value_type(c, nn_in_index(c, i), "input", false, &t)) return false;
    if (t.code != ANEURALNETWORKS_TENSOR_BOOL8) DECLINE("%s of non-bool tensors", c->op);
  }
  if (!nn_value_type(c, oi, "output", false, &t)) return false;
  if (t.code != ANEURALNETWORKS_TENSOR_BOOL8) DECLINE("%s output is not bool", c->op);
  if (!unary && !broadcasts_to_output(c, nn_in_index(c, 0), nn_in_index(c, 1), oi)) return false;
  if (c->b == NULL) return true;
  int32_t ops[2];
  for (size_t i = 0; i < n; i++) ops[i] = nn_graph_operand(c, nn_in_index(c, i));
  return nn_operation_to(c, code, ops, n, oi);
}

bool nn_map_reduce(map_ctx *c, int32_t code) {
  int32_t ii, oi;
  nn_type in, out;
  NEED_LEVEL(29, c->op);
  c->allow_scalar = true;
  c->allow_bool = true;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (nn_rank(nn_tensor(c, ii)) == 0) DECLINE("%s of a scalar", c->op);
  bool sum = code == ANEURALNETWORKS_REDUCE_SUM;
  int32_t want = sum ? ANEURALNETWORKS_TENSOR_FLOAT32 : ANEURALNETWORKS_TENSOR_BOOL8;
  if (in.code != want || out.code != want)
    DECLINE("%s of %s (NNAPI here: %s)", c->op, sum ? "integers" : "non-bool tensors",
            sum ? "float32" : "bool");
  const wick_tensor *axes = nn_tensor(c, nn_in_index(c, 1));
  if (axes == NULL || !wick_tensor_is_constant(axes) ||
      wick_tensor_dtype(axes) != WICK_DTYPE_INT32 || wick_tensor_data(axes) == NULL)
    DECLINE("%s with run-time or non-int32 axes (NNAPI here: constant int32)", c->op);
  size_t n = wick_tensor_byte_size(axes) / 4;
  const int32_t *ax = wick_tensor_data(axes);
  int r = (int)nn_rank(nn_tensor(c, ii));
  if (n == 0) DECLINE("%s over no axes", c->op);
  for (size_t k = 0; k < n; k++)
    if (ax[k] < -r || ax[k] >= r) DECLINE("%s axis %d out of range", c->op, (int)ax[k]);
  if (c->b == NULL) return true;
  int32_t ops[3];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_const_i32_vector(c, ax, (uint32_t)n);
  /* keep_dims from the shapes (the delegate API gives REDUCE_ANY / REDUCE_ALL no options):
   * reducing at least one axis without keep_dims lowers the rank */
  ops[2] = nn_scalar_bool(c, nn_rank(nn_tensor(c, oi)) == (size_t)r);
  return nn_operation_to(c, code, ops, 3, oi);
}

/* Tensor t's dims aligned to the output's rank `ro`, numpy's way (1s in front). */
static void aligned_dims(map_ctx *c, int32_t t, uint32_t ro, uint32_t *dims) {
  uint32_t own[4];
  uint32_t r = nn_dims_of(c, t, own);
  if (nn_rank(nn_tensor(c, t)) == 0) r = 0;
  for (uint32_t k = 0; k < ro; k++) dims[k] = 1;
  for (uint32_t k = 0; k < r; k++) dims[ro - r + k] = own[k];
}

/* Graph tensor t (type `type`) brought to the output's dims od (rank ro): itself, or
 * broadcast — a bool tensor by LOGICAL_AND with a constant true of rank ro holding the
 * dimensions it lacks (NNAPI reshapes no bool tensor; LOGICAL_AND broadcasts numpy's way), a
 * value by RESHAPE to rank ro and TILE. */
static int32_t broadcast_operand(map_ctx *c, int32_t t, nn_type type, const uint32_t *od,
                                 uint32_t ro, int32_t oi) {
  uint32_t ad[4], own[4];
  aligned_dims(c, t, ro, ad);
  uint32_t r = nn_dims_of(c, t, own);
  bool same_shape = r == ro, full = true;
  for (uint32_t k = 0; k < ro; k++) {
    if (same_shape && own[k] != od[k]) same_shape = false;
    if (ad[k] != od[k]) full = false;
  }
  int32_t id = nn_graph_operand(c, t);
  if (same_shape && oi < 0) return id;
  if (type.code == ANEURALNETWORKS_TENSOR_BOOL8) {
    uint32_t td[4];
    size_t count = 1;
    for (uint32_t k = 0; k < ro; k++) {
      td[k] = ad[k] == 1 ? od[k] : 1;
      count *= td[k];
    }
    uint8_t *ones = malloc(count);
    if (ones == NULL) {
      snprintf(c->why, c->why_size, "out of memory building %s", c->op);
      return -1;
    }
    memset(ones, 1, count);
    int32_t truth = nn_const_tensor(c, BOOL8, td, ro, ones, count);
    free(ones);
    int32_t ops[2] = {id, truth};
    int32_t out = oi >= 0 ? nn_graph_operand(c, oi) : nn_temp_operand(c, BOOL8, od, ro);
    return nn_operation(c, ANEURALNETWORKS_LOGICAL_AND, ops, 2, &out, 1) ? out : -1;
  }
  if (full) {
    if (oi < 0) return nn_reshaped(c, id, type, ad, ro);
    int32_t shape[4];
    for (uint32_t k = 0; k < ro; k++) shape[k] = (int32_t)ad[k];
    int32_t rs[2];
    rs[0] = id;
    rs[1] = nn_const_i32_vector(c, shape, ro);
    return nn_operation_to(c, ANEURALNETWORKS_RESHAPE, rs, 2, oi) ? oi : -1;
  }
  if (r != ro) id = nn_reshaped(c, id, type, ad, ro);
  int32_t mult[4];
  for (uint32_t k = 0; k < ro; k++) mult[k] = (int32_t)(od[k] / ad[k]);
  int32_t ops[2];
  ops[0] = id;
  ops[1] = nn_const_i32_vector(c, mult, ro);
  int32_t out = oi >= 0 ? nn_graph_operand(c, oi) : nn_temp_operand(c, type, od, ro);
  return nn_operation(c, ANEURALNETWORKS_TILE, ops, 2, &out, 1) ? out : -1;
}

bool nn_map_select(map_ctx *c, bool v2) {
  c->allow_scalar = true;
  c->allow_bool = true;
  int32_t ki = nn_in_index(c, 0), xi = nn_in_index(c, 1), yi = nn_in_index(c, 2),
          oi = nn_out_index(c, 0);
  if (!v2 && nn_rank(nn_tensor(c, ki)) == 1 && nn_rank(nn_tensor(c, xi)) > 1)
    DECLINE("%s by a 1-D condition of rows (NNAPI reshapes no bool tensor to align it)", c->op);
  NEED_LEVEL(29, c->op);
  nn_type k, x, y, out;
  if (!nn_value_type(c, ki, "condition", false, &k) ||
      !nn_value_type(c, xi, "first value", true, &x) ||
      !nn_value_type(c, yi, "second value", true, &y) ||
      !nn_value_type(c, oi, "output", true, &out))
    return false;
  if (k.code != ANEURALNETWORKS_TENSOR_BOOL8) DECLINE("%s condition is not bool", c->op);
  if (x.code == ANEURALNETWORKS_TENSOR_BOOL8) DECLINE("%s of bool values", c->op);
  if (!nn_same_quant(&x, &y) || !nn_same_quant(&x, &out))
    DECLINE("%s of values typed or quantized unlike the output", c->op);
  uint32_t od[4];
  uint32_t ro = nn_dims_of(c, oi, od);
  const int32_t ins[3] = {ki, xi, yi};
  for (int i = 0; i < 3; i++) {
    uint32_t ad[4];
    if (nn_rank(nn_tensor(c, ins[i])) > ro) DECLINE("%s output rank below an input's", c->op);
    aligned_dims(c, ins[i], ro, ad);
    for (uint32_t d = 0; d < ro; d++)
      if (ad[d] != od[d] && ad[d] != 1) DECLINE("%s shapes do not broadcast", c->op);
    uint32_t own[4];
    if (i > 0 && x.code == ANEURALNETWORKS_TENSOR_INT32 && nn_dims_of(c, ins[i], own) != ro &&
        c->level < NNAPI_LEVEL_6)
      DECLINE("%s of an int32 value of a lower rank (NNAPI reshapes int32 from feature level 6)",
              c->op);
  }
  if (c->b == NULL) return true;
  int32_t ops[3];
  ops[0] = broadcast_operand(c, ki, k, od, ro, -1);
  ops[1] = broadcast_operand(c, xi, x, od, ro, -1);
  ops[2] = broadcast_operand(c, yi, y, od, ro, -1);
  return nn_operation_to(c, ANEURALNETWORKS_SELECT, ops, 3, oi);
}

bool nn_map_broadcast_to(map_ctx *c) {
  NEED_LEVEL(29, "BROADCAST_TO (as TILE)");
  c->allow_scalar = true;
  c->allow_bool = true;
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, true, &ii, &oi, &in, &out)) return false;
  if (!nn_same_quant(&in, &out)) DECLINE("%s changes the type or quantization", c->op);
  uint32_t od[4], ad[4], own[4];
  uint32_t ro = nn_dims_of(c, oi, od), r = nn_dims_of(c, ii, own);
  if (nn_rank(nn_tensor(c, ii)) > ro) DECLINE("%s to a lower rank", c->op);
  aligned_dims(c, ii, ro, ad);
  bool full = true;
  for (uint32_t d = 0; d < ro; d++) {
    if (ad[d] != od[d] && ad[d] != 1) DECLINE("%s shapes do not broadcast", c->op);
    if (ad[d] != od[d]) full = false;
  }
  /* a value of another rank, or one already of the output's shape, takes a RESHAPE */
  if (in.code == ANEURALNETWORKS_TENSOR_INT32 && c->level < NNAPI_LEVEL_6 && (full || r != ro))
    DECLINE("%s of int32 taking a RESHAPE (NNAPI reshapes int32 from feature level 6)", c->op);
  if (c->b == NULL) return true;
  return broadcast_operand(c, ii, in, od, ro, oi) >= 0;
}
