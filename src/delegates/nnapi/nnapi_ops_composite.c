/*
 * nnapi_ops_composite.c — TFLite operators the NNAPI delegate builds from
 * several NNAPI operations, because the level has no single one for them
 * (conventions and helpers: nnapi_ops.c, nnapi_map.h):
 *
 * BATCH_MATMUL (float32). NNAPI's BATCH_MATMUL is feature level 6 (1000006)
 * and takes the same batch dimensions on both sides; there it is used as is.
 * Below it (and for a second operand shared by every batch) the product is a
 * DEPTHWISE_CONV_2D whose filter is the second operand — NNAPI takes a
 * filter computed at run time like any other operand:
 *
 *   one matrix Y [K, N] for every batch of X [B, M, K]:
 *     input  X viewed as [1, B*M*K, 1, 1] (one channel; row m of batch b at
 *            rows (b*M + m)*K .. +K-1)
 *     filter Y viewed as [1, K, 1, N] (filter height K, multiplier N)
 *     bias   zeros [N]; VALID, stride K down the height, 1 across
 *     output [1, B*M, 1, N]: element (b*M + m, n) = sum_k X[b, m, k] Y[k, n]
 *   B batches of both, X [B, M, K] and Y [B, K, N] (TRANSPOSEs: at 27 the
 *   EMBEDDING_LOOKUP form of nn_transposed):
 *     input  X transposed to [M, K, B], viewed as [1, M*K, 1, B] (B channels)
 *     filter Y transposed to [K, B, N], viewed as [1, K, 1, B*N] (multiplier N)
 *     output [1, M, 1, B*N] = [M, B, N], transposed back to [B, M, N].
 * Each output element is the same dot product as TFLite's (its K products
 * summed, then + 0: the sum's order aside, exact; a NaN or infinity spreads
 * exactly as in the product). adj_x / adj_y are TRANSPOSEs of the operand,
 * or, for a constant second operand, its filter written transposed here. A
 * constant second operand whose batches are all the same matrix is "one
 * matrix". Every form is level 27 (operands of at most NN_LOOKUP_MAX_ROWS
 * elements when a TRANSPOSE is needed below 28).
 *
 * GELU (float32). NNAPI has no GELU at any level.
 *   approximate (tanh form, 27): TFLite's formula op by op in float,
 *     0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as MUL, ADD, TANH;
 *     equal to the exact formula within rounding: the one cancellation,
 *     1 + tanh(u) for negative x, costs at most |x| 2^-24 absolute.
 *   erf form (29: ABS, EXP, DIV, SELECT): x Phi(x), Phi(x) = 1 - q for
 *     x >= 0 and q below, q = erfc(|x|/sqrt2)/2 from the Numerical Recipes
 *     erfc (t = 1/(1 + z/2), erfc(z) = t exp(-z^2 + P(t)), fractional error
 *     below 1.2e-7 for every z: the formula of wick's own vectorized GELU
 *     kernel, which carries z^2 exactly where this rounds it). Simulated in
 *     float32 against the exact GELU: at most 1.4e-7 x max(1, |GELU|), and
 *     1.8e-5 relative at worst where the value is below 1e-30 (x near
 *     -11.6); +inf gives +inf, -inf NaN (as TFLite's
 *     0.5 x erfc(-x/sqrt2)), NaN NaN. Below 29 it is declined.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_map.h"

static const nn_type F32 = {ANEURALNETWORKS_TENSOR_FLOAT32, 0, 0};

/* ------------------------------------------------------------ BATCH_MATMUL */

typedef struct bmm_plan {
  int32_t xi, yi, oi;
  uint32_t rx, ry;
  int64_t bx, by, m, k, n;
  bool adj_x, adj_y;
  bool native;     /* NNAPI's BATCH_MATMUL (feature level 6) */
  bool shared;     /* one matrix of Y for every batch of X */
  bool y_constant; /* the filter is written here from Y's data */
} bmm_plan;

/* Whether constant Y's batches (by of them, k*n floats each) are all one matrix. */
static bool batches_identical(const wick_tensor *y, int64_t by, int64_t per) {
  const char *d = wick_tensor_data(y);
  size_t bytes = (size_t)per * sizeof(float);
  for (int64_t b = 1; b < by; b++)
    if (memcmp(d, d + (size_t)b * bytes, bytes) != 0) return false;
  return true;
}

static bool bmm_decide(map_ctx *c, bmm_plan *p) {
  nn_type a, b, out;
  p->xi = nn_in_index(c, 0);
  p->yi = nn_in_index(c, 1);
  p->oi = nn_out_index(c, 0);
  if (!nn_value_type(c, p->xi, "first input", false, &a) ||
      !nn_value_type(c, p->yi, "second input", false, &b) ||
      !nn_value_type(c, p->oi, "output", false, &out))
    return false;
  if (a.code != ANEURALNETWORKS_TENSOR_FLOAT32 || b.code != a.code || out.code != a.code)
    DECLINE(
        "quantized BATCH_MATMUL (NNAPI's, feature level 6, takes int8 but its reference "
        "does not state how it requantizes; TFLite uses one multiplier from the float "
        "product of the scales)");
  const wick_tensor *x = nn_tensor(c, p->xi), *y = nn_tensor(c, p->yi), *o = nn_tensor(c, p->oi);
  p->rx = (uint32_t)nn_rank(x);
  p->ry = (uint32_t)nn_rank(y);
  uint32_t ro = (uint32_t)nn_rank(o);
  if (p->rx < 2 || p->ry < 2) DECLINE("%s of a rank-1 operand", c->op);
  p->adj_x = nn_option_int(c, WICK_OPTION_ADJ_X, 0) != 0;
  p->adj_y = nn_option_int(c, WICK_OPTION_ADJ_Y, 0) != 0;
  p->m = nn_dim(x, p->rx - (p->adj_x ? 1 : 2));
  p->k = nn_dim(x, p->rx - (p->adj_x ? 2 : 1));
  int64_t ky = nn_dim(y, p->ry - (p->adj_y ? 1 : 2));
  p->n = nn_dim(y, p->ry - (p->adj_y ? 2 : 1));
  if (ky != p->k)
    DECLINE("%s inner dimensions %lld and %lld", c->op, (long long)p->k, (long long)ky);
  if (ro < 2 || nn_dim(o, ro - 2) != p->m || nn_dim(o, ro - 1) != p->n)
    DECLINE("%s output shape is not [..., %lld, %lld]", c->op, (long long)p->m, (long long)p->n);
  p->bx = p->by = 1;
  for (uint32_t d = 0; d + 2 < p->rx; d++) p->bx *= nn_dim(x, d);
  for (uint32_t d = 0; d + 2 < p->ry; d++) p->by *= nn_dim(y, d);
  int64_t bo = 1;
  for (uint32_t d = 0; d + 2 < ro; d++) bo *= nn_dim(o, d);
  bool same_batches = p->rx == p->ry;
  for (uint32_t d = 0; same_batches && d + 2 < p->rx; d++)
    same_batches = nn_dim(x, d) == nn_dim(y, d);
  p->y_constant = wick_tensor_is_constant(y) && wick_tensor_data(y) != NULL;
  p->shared =
      bo == p->bx &&
      (p->by == 1 || (p->y_constant && p->by == p->bx && batches_identical(y, p->by, p->k * p->n)));
  if (!same_batches && !p->shared)
    DECLINE(
        "%s batch dimensions that broadcast (other than a second operand shared by "
        "every batch)",
        c->op);
  /* every view must fit NNAPI's int32 dimensions */
  if (p->bx * p->m * p->k > INT32_MAX || p->by * p->k * p->n > INT32_MAX ||
      p->bx * p->m * p->n > INT32_MAX)
    DECLINE("%s too large for NNAPI's dimensions", c->op);
  p->native = c->level >= NNAPI_LEVEL_6 && same_batches && p->rx <= 4 && ro == p->rx;
  if (p->native) return true;
  /* the TRANSPOSEs (28) are EMBEDDING_LOOKUPs at 27 (nn_transposed), up to a size */
  bool transposes = p->shared ? p->adj_x || (p->adj_y && !p->y_constant) : true;
  if (transposes && c->level < 28 &&
      (p->bx * p->m * p->k > NN_LOOKUP_MAX_ROWS || p->by * p->k * p->n > NN_LOOKUP_MAX_ROWS ||
       p->bx * p->m * p->n > NN_LOOKUP_MAX_ROWS))
    NEED_LEVEL(28, "BATCH_MATMUL of operands this large with TRANSPOSEs");
  return true;
}

/* The filter from constant Y: [1, K, 1, batches*N], element (k, b*N + n) = Y[b][k][n]
 * (Y[b][n][k] when adj_y). */
static int32_t bmm_constant_filter(map_ctx *c, const bmm_plan *p, int64_t batches) {
  const float *y = wick_tensor_data(nn_tensor(c, p->yi));
  size_t count = (size_t)(p->k * batches * p->n);
  float *f = malloc(count * sizeof *f);
  if (f == NULL) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    return -1;
  }
  for (int64_t kk = 0; kk < p->k; kk++)
    for (int64_t b = 0; b < batches; b++)
      for (int64_t nn = 0; nn < p->n; nn++)
        f[(kk * batches + b) * p->n + nn] =
            y[b * p->k * p->n + (p->adj_y ? nn * p->k + kk : kk * p->n + nn)];
  uint32_t dims[4] = {1, (uint32_t)p->k, 1, (uint32_t)(batches * p->n)};
  int32_t id = nn_const_tensor(c, F32, dims, 4, f, count * sizeof *f);
  free(f);
  return id;
}

/* DEPTHWISE_CONV_2D of in [1, rows*K, 1, C] by filter [1, K, 1, C*N] (stride K): [1, rows, 1,
 * C*N]. */
static int32_t bmm_depthwise(map_ctx *c, const bmm_plan *p, int32_t in, int32_t filter,
                             int64_t rows, int64_t channels) {
  size_t nb = (size_t)(channels * p->n);
  float *zeros = calloc(nb, sizeof *zeros);
  if (zeros == NULL) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    return -1;
  }
  uint32_t bias_dims[1] = {(uint32_t)nb};
  int32_t ops[11];
  size_t n = 0;
  ops[n++] = in;
  ops[n++] = filter;
  ops[n++] = nn_const_tensor(c, F32, bias_dims, 1, zeros, nb * sizeof *zeros);
  free(zeros);
  for (int k = 0; k < 4; k++) ops[n++] = nn_scalar_i32(c, 0); /* no padding */
  ops[n++] = nn_scalar_i32(c, 1);                             /* stride across */
  ops[n++] = nn_scalar_i32(c, (int32_t)p->k);                 /* stride down: one row of X */
  ops[n++] = nn_scalar_i32(c, (int32_t)p->n);                 /* the multiplier */
  ops[n++] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  uint32_t out_dims[4] = {1, (uint32_t)rows, 1, (uint32_t)nb};
  int32_t out = nn_temp_operand(c, F32, out_dims, 4);
  return nn_operation(c, ANEURALNETWORKS_DEPTHWISE_CONV_2D, ops, n, &out, 1) ? out : -1;
}

/* The product `t` reshaped to the BATCH_MATMUL's output shape, written to its output. */
static bool bmm_reshape_to_output(map_ctx *c, const bmm_plan *p, int32_t t) {
  uint32_t od[4];
  uint32_t orank = nn_dims_of(c, p->oi, od);
  int32_t shape[4];
  for (uint32_t d = 0; d < orank; d++) shape[d] = (int32_t)od[d];
  int32_t ops[2];
  ops[0] = t;
  ops[1] = nn_const_i32_vector(c, shape, orank);
  return nn_operation_to(c, ANEURALNETWORKS_RESHAPE, ops, 2, p->oi);
}

static bool bmm_emit_shared(map_ctx *c, const bmm_plan *p) {
  /* X as rows of K: [B, M, K] (transposed from [B, K, M] when adj_x), flat */
  int32_t x = nn_graph_operand(c, p->xi);
  if (p->adj_x) {
    uint32_t v3[3] = {(uint32_t)p->bx, (uint32_t)p->k, (uint32_t)p->m};
    const int32_t perm[3] = {0, 2, 1};
    x = nn_transposed(c, nn_reshaped(c, x, F32, v3, 3), F32, v3, 3, perm);
  }
  uint32_t in_dims[4] = {1, (uint32_t)(p->bx * p->m * p->k), 1, 1};
  int32_t in = nn_reshaped(c, x, F32, in_dims, 4);
  int32_t filter;
  uint32_t f_dims[4] = {1, (uint32_t)p->k, 1, (uint32_t)p->n};
  if (p->y_constant) {
    filter = bmm_constant_filter(c, p, 1);
  } else if (p->adj_y) { /* Y [N, K] -> [K, N] */
    uint32_t v2[2] = {(uint32_t)p->n, (uint32_t)p->k};
    const int32_t perm[2] = {1, 0};
    int32_t t =
        nn_transposed(c, nn_reshaped(c, nn_graph_operand(c, p->yi), F32, v2, 2), F32, v2, 2, perm);
    filter = nn_reshaped(c, t, F32, f_dims, 4);
  } else {
    filter = nn_reshaped(c, nn_graph_operand(c, p->yi), F32, f_dims, 4);
  }
  return bmm_reshape_to_output(c, p, bmm_depthwise(c, p, in, filter, p->bx * p->m, 1));
}

static bool bmm_emit_batched(map_ctx *c, const bmm_plan *p) {
  const uint32_t B = (uint32_t)p->bx, M = (uint32_t)p->m, K = (uint32_t)p->k, N = (uint32_t)p->n;
  /* X [B, M, K] (or [B, K, M]) -> [M, K, B] -> [1, M*K, 1, B] */
  uint32_t xv[3] = {B, p->adj_x ? K : M, p->adj_x ? M : K};
  const int32_t xperm_plain[3] = {1, 2, 0}, xperm_adj[3] = {2, 1, 0};
  int32_t x = nn_reshaped(c, nn_graph_operand(c, p->xi), F32, xv, 3);
  x = nn_transposed(c, x, F32, xv, 3, p->adj_x ? xperm_adj : xperm_plain);
  uint32_t in_dims[4] = {1, M * K, 1, B};
  int32_t in = nn_reshaped(c, x, F32, in_dims, 4);
  /* Y [B, K, N] (or [B, N, K]) -> [K, B, N] -> [1, K, 1, B*N] */
  int32_t filter;
  if (p->y_constant) {
    filter = bmm_constant_filter(c, p, p->bx);
  } else {
    uint32_t yv[3] = {B, p->adj_y ? N : K, p->adj_y ? K : N};
    const int32_t yperm_plain[3] = {1, 0, 2}, yperm_adj[3] = {2, 0, 1};
    int32_t y = nn_reshaped(c, nn_graph_operand(c, p->yi), F32, yv, 3);
    y = nn_transposed(c, y, F32, yv, 3, p->adj_y ? yperm_adj : yperm_plain);
    uint32_t f_dims[4] = {1, K, 1, B * N};
    filter = nn_reshaped(c, y, F32, f_dims, 4);
  }
  int32_t prod = bmm_depthwise(c, p, in, filter, p->m, p->bx);
  /* [1, M, 1, B*N] = [M, B, N] -> [B, M, N] -> the output's shape */
  uint32_t mbn[3] = {M, B, N};
  const int32_t back[3] = {1, 0, 2};
  return bmm_reshape_to_output(c, p,
                               nn_transposed(c, nn_reshaped(c, prod, F32, mbn, 3), F32, mbn, 3,
                                             back));
}

bool nn_map_batch_matmul(map_ctx *c) {
  bmm_plan p;
  memset(&p, 0, sizeof p);
  if (!bmm_decide(c, &p)) return false;
  if (!p.native)
    NOTE(
        "composed: DEPTHWISE_CONV_2D with the second operand as its filter%s (NNAPI's "
        "BATCH_MATMUL is feature level 6); the same dot products, summed in the "
        "convolution's order",
        p.shared ? "" : " between TRANSPOSEs");
  if (c->b == NULL) return true;
  if (p.native) {
    int32_t ops[4];
    ops[0] = nn_graph_operand(c, p.xi);
    ops[1] = nn_graph_operand(c, p.yi);
    ops[2] = nn_scalar_bool(c, p.adj_x);
    ops[3] = nn_scalar_bool(c, p.adj_y);
    return nn_operation_to(c, ANEURALNETWORKS_BATCH_MATMUL, ops, 4, p.oi);
  }
  return p.shared ? bmm_emit_shared(c, &p) : bmm_emit_batched(c, &p);
}

/* ------------------------------------------------------------ GELU */

/* GELU's tanh form, TFLite's float formula one operation at a time. */
static bool gelu_tanh(map_ctx *c, int32_t x, const uint32_t *d, uint32_t r, int32_t oi) {
  int32_t t = nn_elementwise(c, ANEURALNETWORKS_MUL, x, nn_const_f32(c, 0.044715f), F32, d, r);
  t = nn_elementwise(c, ANEURALNETWORKS_MUL, t, x, F32, d, r);
  t = nn_elementwise(c, ANEURALNETWORKS_MUL, t, x, F32, d, r); /* 0.044715 x^3 */
  t = nn_elementwise(c, ANEURALNETWORKS_ADD, x, t, F32, d, r);
  t = nn_elementwise(c, ANEURALNETWORKS_MUL, t, nn_const_f32(c, 0.7978845608028654f), F32, d, r);
  int32_t th = nn_temp_operand(c, F32, d, r);
  if (!nn_operation(c, ANEURALNETWORKS_TANH, &t, 1, &th, 1)) return false;
  int32_t one_plus = nn_elementwise(c, ANEURALNETWORKS_ADD, th, nn_const_f32(c, 1.0f), F32, d, r);
  int32_t half_x = nn_elementwise(c, ANEURALNETWORKS_MUL, x, nn_const_f32(c, 0.5f), F32, d, r);
  int32_t ops[3];
  ops[0] = half_x;
  ops[1] = one_plus;
  ops[2] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  return nn_operation_to(c, ANEURALNETWORKS_MUL, ops, 3, oi);
}

/* GELU's erf form: x Phi(x) with the Numerical Recipes erfc (see the top). */
static bool gelu_erf(map_ctx *c, int32_t x, const uint32_t *d, uint32_t r, int32_t oi) {
  static const float coef[10] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f,
                                 0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f,
                                 1.00002368f, -1.26551223f};
  const nn_type boolean = {ANEURALNETWORKS_TENSOR_BOOL8, 0, 0};
  int32_t ax = nn_temp_operand(c, F32, d, r);
  if (!nn_operation(c, ANEURALNETWORKS_ABS, &x, 1, &ax, 1)) return false;
  int32_t z =
      nn_elementwise(c, ANEURALNETWORKS_MUL, ax, nn_const_f32(c, 0.70710678118654752f), F32, d, r);
  int32_t den = nn_elementwise(c, ANEURALNETWORKS_MUL, z, nn_const_f32(c, 0.5f), F32, d, r);
  den = nn_elementwise(c, ANEURALNETWORKS_ADD, den, nn_const_f32(c, 1.0f), F32, d, r);
  int32_t t = nn_elementwise(c, ANEURALNETWORKS_DIV, nn_const_f32(c, 1.0f), den, F32, d, r);
  int32_t p = nn_elementwise(c, ANEURALNETWORKS_MUL, t, nn_const_f32(c, coef[0]), F32, d, r);
  for (int i = 1; i < 10; i++) {
    p = nn_elementwise(c, ANEURALNETWORKS_ADD, p, nn_const_f32(c, coef[i]), F32, d, r);
    if (i < 9) p = nn_elementwise(c, ANEURALNETWORKS_MUL, p, t, F32, d, r);
  }
  int32_t z2 = nn_elementwise(c, ANEURALNETWORKS_MUL, z, z, F32, d, r);
  int32_t arg = nn_elementwise(c, ANEURALNETWORKS_SUB, p, z2, F32, d, r);
  int32_t e = nn_temp_operand(c, F32, d, r);
  if (!nn_operation(c, ANEURALNETWORKS_EXP, &arg, 1, &e, 1)) return false;
  int32_t q = nn_elementwise(c, ANEURALNETWORKS_MUL, t, e, F32, d, r);
  q = nn_elementwise(c, ANEURALNETWORKS_MUL, q, nn_const_f32(c, 0.5f), F32, d, r); /* Phi(-|x|) */
  int32_t upper = nn_elementwise(c, ANEURALNETWORKS_SUB, nn_const_f32(c, 1.0f), q, F32, d, r);
  int32_t nonneg =
      nn_elementwise(c, ANEURALNETWORKS_GREATER_EQUAL, x, nn_const_f32(c, 0.0f), boolean, d, r);
  int32_t sel[3] = {nonneg, upper, q};
  int32_t phi = nn_temp_operand(c, F32, d, r);
  if (!nn_operation(c, ANEURALNETWORKS_SELECT, sel, 3, &phi, 1)) return false;
  int32_t ops[3];
  ops[0] = x;
  ops[1] = phi;
  ops[2] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  return nn_operation_to(c, ANEURALNETWORKS_MUL, ops, 3, oi);
}

bool nn_map_gelu(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  c->allow_scalar = true;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (in.code != ANEURALNETWORKS_TENSOR_FLOAT32 || out.code != in.code)
    DECLINE("quantized GELU (no NNAPI form)");
  bool approximate = nn_option_int(c, WICK_OPTION_APPROXIMATE, 0) != 0;
  if (!approximate)
    NEED_LEVEL(29, "GELU's erf form (built from ABS, EXP, DIV and SELECT: NNAPI has no erf)");
  if (approximate)
    NOTE(
        "composed (NNAPI has no GELU): TFLite's tanh formula as MUL, ADD, TANH; within "
        "1.5e-7 x max(1, |GELU|) of the exact formula (float32, measured on [-20, 20])");
  else
    NOTE(
        "composed (NNAPI has no GELU or erf): x Phi(x) with the Numerical Recipes erfc (ABS, "
        "EXP, DIV, SUB, MUL, ADD, GREATER_EQUAL, SELECT); within 1.4e-7 x max(1, |GELU|) of "
        "the exact GELU (float32, measured on [-20, 20])");
  if (c->b == NULL) return true;
  uint32_t d[4];
  uint32_t r = nn_dims_of(c, ii, d);
  int32_t x = nn_graph_operand(c, ii);
  return approximate ? gelu_tanh(c, x, d, r, oi) : gelu_erf(c, x, d, r, oi);
}
