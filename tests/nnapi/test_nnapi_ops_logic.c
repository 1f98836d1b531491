/*
 * test_nnapi_ops_logic.c — more operations of wick's test NNAPI runtime, in the
 * three phases of test_nnapi_ops.c (types at addOperation, shapes at finish,
 * the computation), written from the NDK reference:
 *
 *   EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL (29)
 *       BOOL8, FLOAT32, INT32, QUANT8_ASYMM (QUANT8_ASYMM_SIGNED 30) inputs of
 *       one type, numpy broadcasting, a BOOL8 output; 8-bit inputs compare
 *       their real values (scale x (q - zero point)), so inputs quantized
 *       differently compare as numbers;
 *   LOGICAL_AND LOGICAL_OR (broadcasting) LOGICAL_NOT (29): BOOL8;
 *   REDUCE_ANY REDUCE_ALL (BOOL8), REDUCE_SUM (FLOAT32) (29): constant axes,
 *       a BOOL keep_dims; all axes reduced without keep_dims gives [1];
 *       REDUCE_SUM adds in index order;
 *   SELECT (29): a BOOL8 condition and two values of one shape (no
 *       broadcasting); 8-bit values are requantized to the output's scale;
 *   TILE (29): constant multiples;
 *   EMBEDDING_LOOKUP (27): output row i is row lookups[i] of the values
 *       (FLOAT32, INT32, QUANT8_ASYMM; QUANT8_ASYMM_SIGNED 30; rank >= 2,
 *       the output quantized as them); an index out of range fails;
 *   BATCH_MATMUL (feature level 6, 1000006): FLOAT32 of rank 2 to 4, the
 *       same batch dimensions on both sides, optional adj_x / adj_y; each
 *       output element a dot product summed in index order.
 *
 * A BOOL8 element is true when nonzero; the runtime writes 1 and 0.
 */
#include "test_nnapi_ops.h"

static bool is_compare(int32_t type) {
  switch (type) {
    case ANEURALNETWORKS_EQUAL:
    case ANEURALNETWORKS_NOT_EQUAL:
    case ANEURALNETWORKS_LESS:
    case ANEURALNETWORKS_LESS_EQUAL:
    case ANEURALNETWORKS_GREATER:
    case ANEURALNETWORKS_GREATER_EQUAL: return true;
    default: return false;
  }
}

/* Steps the row-major index idx over dims (rank). */
static void next_index(uint32_t *idx, const uint32_t *dims, uint32_t rank) {
  for (int k = (int)rank - 1; k >= 0; k--) {
    if (++idx[k] < dims[k]) break;
    idx[k] = 0;
  }
}

/* The value of element i of a FLOAT32, INT32, BOOL8 or 8-bit operand as a
 * double (8-bit: its real value). */
static double value_at(const nn_operand *o, const void *p, size_t i) {
  switch (o->type) {
    case ANEURALNETWORKS_TENSOR_FLOAT32: return ((const float *)p)[i];
    case ANEURALNETWORKS_TENSOR_INT32: return ((const int32_t *)p)[i];
    case ANEURALNETWORKS_TENSOR_BOOL8: return ((const uint8_t *)p)[i] != 0;
    default: return (double)o->scale * (double)(ldq(o, p, i) - o->zp);
  }
}

/* Two inputs and an output over numpy broadcasting: comparisons and LOGICAL_AND / OR. */
static int broadcast_binary(nn_ctx *c) {
  const int32_t type = c->op->type;
  const nn_operand *a = IN(c, 0), *b = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("operation %d with %u inputs", (int)type, c->op->nin);
    if (a->type != b->type) BAD("operation %d: input types differ", (int)type);
    if (y->type != ANEURALNETWORKS_TENSOR_BOOL8)
      BAD("operation %d: the output must be TENSOR_BOOL8", (int)type);
    if (!is_compare(type)) {
      if (a->type != ANEURALNETWORKS_TENSOR_BOOL8)
        BAD("LOGICAL_AND / LOGICAL_OR take TENSOR_BOOL8");
      return ANEURALNETWORKS_NO_ERROR;
    }
    if (a->type == ANEURALNETWORKS_TENSOR_BOOL8 || a->type == ANEURALNETWORKS_TENSOR_INT32)
      return ANEURALNETWORKS_NO_ERROR;
    return value_type(c, a, "input", 29);
  }
  uint32_t dims[4], rank;
  TRY(broadcast_dims(c, a, b, dims, &rank));
  TRY(expect_dims(c, y, dims, rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  uint32_t idx[4] = {0, 0, 0, 0};
  uint8_t *out = out_data(c, 0);
  for (size_t e = 0, n = count_of(y); e < n; e++) {
    double va = value_at(a, in_data(c, 0), bc_offset(a, idx, rank));
    double vb = value_at(b, in_data(c, 1), bc_offset(b, idx, rank));
    bool r;
    switch (type) {
      case ANEURALNETWORKS_EQUAL: r = va == vb; break;
      case ANEURALNETWORKS_NOT_EQUAL: r = va != vb; break;
      case ANEURALNETWORKS_LESS: r = va < vb; break;
      case ANEURALNETWORKS_LESS_EQUAL: r = va <= vb; break;
      case ANEURALNETWORKS_GREATER: r = va > vb; break;
      case ANEURALNETWORKS_GREATER_EQUAL: r = va >= vb; break;
      case ANEURALNETWORKS_LOGICAL_AND: r = va != 0 && vb != 0; break;
      default: r = va != 0 || vb != 0; break; /* LOGICAL_OR */
    }
    out[e] = r ? 1 : 0;
    next_index(idx, dims, rank);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int logical_not(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 1) BAD("LOGICAL_NOT with %u inputs", c->op->nin);
    if (x->type != ANEURALNETWORKS_TENSOR_BOOL8 || y->type != x->type)
      BAD("LOGICAL_NOT takes and gives TENSOR_BOOL8");
    return ANEURALNETWORKS_NO_ERROR;
  }
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const uint8_t *in = in_data(c, 0);
  uint8_t *out = out_data(c, 0);
  for (size_t i = 0, n = count_of(x); i < n; i++) out[i] = in[i] ? 0 : 1;
  return ANEURALNETWORKS_NO_ERROR;
}

static int reduce(nn_ctx *c) {
  const int32_t type = c->op->type;
  const nn_operand *x = IN(c, 0), *axes = IN(c, 1), *y = OUT(c, 0);
  const bool sum = type == ANEURALNETWORKS_REDUCE_SUM;
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 3) BAD("reduction with %u inputs", c->op->nin);
    int32_t want = sum ? ANEURALNETWORKS_TENSOR_FLOAT32 : ANEURALNETWORKS_TENSOR_BOOL8;
    if (x->type != want)
      BAD("operation %d takes %s here", (int)type, sum ? "TENSOR_FLOAT32" : "TENSOR_BOOL8");
    if (axes->type != ANEURALNETWORKS_TENSOR_INT32 || axes->rank != 1)
      BAD("the axes must be a 1-D TENSOR_INT32");
    TRY(scalar_type(c, 2, ANEURALNETWORKS_BOOL));
    return same_type_as(c, x, y, false);
  }
  const int32_t *ax;
  TRY(const_vector(c, 1, axes->dims[0], &ax));
  bool keep, reduced[4] = {false, false, false, false};
  TRY(get_bool(c, 2, &keep));
  for (uint32_t k = 0; k < axes->dims[0]; k++) {
    int32_t a = ax[k] < 0 ? ax[k] + (int32_t)x->rank : ax[k];
    if (a < 0 || a >= (int32_t)x->rank) BAD("axis %d out of range", (int)ax[k]);
    reduced[a] = true;
  }
  uint32_t dims[4], rank = 0, out_stride[4] = {0, 0, 0, 0};
  for (uint32_t d = 0; d < x->rank; d++)
    if (keep || !reduced[d]) dims[rank++] = reduced[d] ? 1 : x->dims[d];
  if (rank == 0) dims[rank++] = 1;
  TRY(expect_dims(c, y, dims, rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t s = 1; /* the output offset of each input dimension (0 where reduced) */
  for (int d = (int)x->rank - 1; d >= 0; d--) {
    out_stride[d] = reduced[d] ? 0 : (uint32_t)s;
    if (!reduced[d]) s *= x->dims[d];
  }
  size_t n_out = count_of(y);
  for (size_t o = 0; o < n_out; o++) {
    if (sum)
      ((float *)out_data(c, 0))[o] = 0.0f;
    else
      ((uint8_t *)out_data(c, 0))[o] = type == ANEURALNETWORKS_REDUCE_ALL ? 1 : 0;
  }
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0, n = count_of(x); e < n; e++) {
    size_t o = 0;
    for (uint32_t d = 0; d < x->rank; d++) o += (size_t)idx[d] * out_stride[d];
    if (sum) {
      ((float *)out_data(c, 0))[o] += ((const float *)in_data(c, 0))[e];
    } else {
      uint8_t v = ((const uint8_t *)in_data(c, 0))[e] != 0, *acc = (uint8_t *)out_data(c, 0) + o;
      *acc = type == ANEURALNETWORKS_REDUCE_ALL ? (*acc && v) : (*acc || v);
    }
    next_index(idx, x->dims, x->rank);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int select_op(nn_ctx *c) {
  const nn_operand *k = IN(c, 0), *a = IN(c, 1), *b = IN(c, 2), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 3) BAD("SELECT with %u inputs", c->op->nin);
    if (k->type != ANEURALNETWORKS_TENSOR_BOOL8) BAD("the SELECT condition must be TENSOR_BOOL8");
    if (a->type != ANEURALNETWORKS_TENSOR_INT32) TRY(value_type(c, a, "input", 29));
    TRY(same_type_as(c, a, b, false));
    return same_type_as(c, a, y, false);
  }
  TRY(expect_dims(c, a, k->dims, k->rank)); /* the same shape everywhere */
  TRY(expect_dims(c, b, k->dims, k->rank));
  TRY(expect_dims(c, y, k->dims, k->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const uint8_t *cond = in_data(c, 0);
  size_t es = nn_element_size(y->type);
  for (size_t i = 0, n = count_of(y); i < n; i++) {
    const nn_operand *from = cond[i] ? a : b;
    const void *src = in_data(c, cond[i] ? 1 : 2);
    if (q8(y->type) && (from->scale != y->scale || from->zp != y->zp)) {
      int32_t lo, hi;
      qrange(y, &lo, &hi);
      float r = roundf(from->scale * (float)(ldq(from, src, i) - from->zp) / y->scale);
      stq(y, out_data(c, 0), i, float_to_int(r + (float)y->zp, lo, hi, y->zp));
    } else {
      memcpy((char *)out_data(c, 0) + i * es, (const char *)src + i * es, es);
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int tile(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("TILE with %u inputs", c->op->nin);
    if (x->type != ANEURALNETWORKS_TENSOR_INT32) TRY(value_type(c, x, "input", 29));
    return same_type_as(c, x, y, true);
  }
  const int32_t *mult;
  TRY(const_vector(c, 1, x->rank, &mult));
  uint32_t dims[4];
  for (uint32_t d = 0; d < x->rank; d++) {
    if (mult[d] < 1) BAD("TILE multiple %d", (int)mult[d]);
    dims[d] = x->dims[d] * (uint32_t)mult[d];
  }
  TRY(expect_dims(c, y, dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t es = nn_element_size(x->type), xs[4] = {0, 0, 0, 0};
  strides_of(x->dims, x->rank, xs);
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0, n = count_of(y); e < n; e++) {
    size_t src = 0;
    for (uint32_t d = 0; d < x->rank; d++) src += (size_t)(idx[d] % x->dims[d]) * xs[d];
    memcpy((char *)out_data(c, 0) + e * es, (const char *)in_data(c, 0) + src * es, es);
    next_index(idx, dims, x->rank);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int batch_matmul(nn_ctx *c) {
  const nn_operand *a = IN(c, 0), *b = IN(c, 1), *y = OUT(c, 0);
  uint32_t n = c->op->nin;
  if (c->phase == NN_CHECK_TYPES) {
    if (n < 2 || n > 4) BAD("BATCH_MATMUL with %u inputs", n);
    if (a->type != ANEURALNETWORKS_TENSOR_FLOAT32)
      FAIL(ANEURALNETWORKS_OP_FAILED, "BATCH_MATMUL of type %d: the test runtime has float32",
           (int)a->type);
    TRY(same_type_as(c, a, b, false));
    TRY(same_type_as(c, a, y, false));
    for (uint32_t i = 2; i < n; i++) TRY(scalar_type(c, i, ANEURALNETWORKS_BOOL));
    if (a->rank < 2 || a->rank != b->rank) BAD("BATCH_MATMUL ranks %u and %u", a->rank, b->rank);
    return ANEURALNETWORKS_NO_ERROR;
  }
  bool adj_x = false, adj_y = false;
  if (n > 2) TRY(get_bool(c, 2, &adj_x));
  if (n > 3) TRY(get_bool(c, 3, &adj_y));
  uint32_t r = a->rank, batch = 1;
  for (uint32_t d = 0; d + 2 < r; d++) {
    if (a->dims[d] != b->dims[d]) BAD("BATCH_MATMUL batch dimensions differ");
    batch *= a->dims[d];
  }
  uint32_t M = adj_x ? a->dims[r - 1] : a->dims[r - 2], K = adj_x ? a->dims[r - 2] : a->dims[r - 1];
  uint32_t Kb = adj_y ? b->dims[r - 1] : b->dims[r - 2],
           N = adj_y ? b->dims[r - 2] : b->dims[r - 1];
  if (K != Kb) BAD("BATCH_MATMUL inner dimensions %u and %u", K, Kb);
  uint32_t dims[4];
  memcpy(dims, a->dims, sizeof dims);
  dims[r - 2] = M;
  dims[r - 1] = N;
  TRY(expect_dims(c, y, dims, r));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const float *x = in_data(c, 0), *w = in_data(c, 1);
  float *out = out_data(c, 0);
  for (uint32_t bt = 0; bt < batch; bt++)
    for (uint32_t i = 0; i < M; i++)
      for (uint32_t j = 0; j < N; j++) {
        float acc = 0;
        for (uint32_t k = 0; k < K; k++) {
          size_t xi = (size_t)bt * M * K + (adj_x ? (size_t)k * M + i : (size_t)i * K + k);
          size_t wi = (size_t)bt * K * N + (adj_y ? (size_t)j * K + k : (size_t)k * N + j);
          acc += x[xi] * w[wi];
        }
        out[((size_t)bt * M + i) * N + j] = acc;
      }
  return ANEURALNETWORKS_NO_ERROR;
}

static int embedding_lookup(nn_ctx *c) {
  const nn_operand *lk = IN(c, 0), *v = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("EMBEDDING_LOOKUP with %u inputs", c->op->nin);
    if (lk->type != ANEURALNETWORKS_TENSOR_INT32 || lk->rank != 1)
      BAD("EMBEDDING_LOOKUP: the lookups must be a 1-D TENSOR_INT32");
    if (v->type != ANEURALNETWORKS_TENSOR_INT32) TRY(value_type(c, v, "values", 27));
    if (v->rank < 2) BAD("EMBEDDING_LOOKUP: values of rank %u (from 2)", v->rank);
    return same_type_as(c, v, y, true);
  }
  uint32_t dims[NN_MAX_RANK];
  memcpy(dims, v->dims, sizeof dims);
  dims[0] = lk->dims[0];
  TRY(expect_dims(c, y, dims, v->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t row = nn_operand_bytes(v) / v->dims[0];
  const int32_t *idx = in_data(c, 0);
  for (uint32_t i = 0; i < lk->dims[0]; i++) {
    if (idx[i] < 0 || (uint32_t)idx[i] >= v->dims[0])
      FAIL(ANEURALNETWORKS_OP_FAILED, "EMBEDDING_LOOKUP: index %d of %u rows", (int)idx[i],
           v->dims[0]);
    memcpy((char *)out_data(c, 0) + (size_t)i * row, (const char *)in_data(c, 1) + idx[i] * row,
           row);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

int64_t nn_logic_operation_level(int32_t type) {
  if (is_compare(type)) return 29;
  switch (type) {
    case ANEURALNETWORKS_LOGICAL_AND:
    case ANEURALNETWORKS_LOGICAL_OR:
    case ANEURALNETWORKS_LOGICAL_NOT:
    case ANEURALNETWORKS_REDUCE_ANY:
    case ANEURALNETWORKS_REDUCE_ALL:
    case ANEURALNETWORKS_REDUCE_SUM:
    case ANEURALNETWORKS_SELECT:
    case ANEURALNETWORKS_TILE: return 29;
    case ANEURALNETWORKS_BATCH_MATMUL: return NNAPI_LEVEL_6;
    case ANEURALNETWORKS_EMBEDDING_LOOKUP: return 27;
    default: return nn_flow_operation_level(type);
  }
}

int nn_logic_operation_phase(nn_ctx *c) {
  if (is_compare(c->op->type)) return broadcast_binary(c);
  switch (c->op->type) {
    case ANEURALNETWORKS_LOGICAL_AND:
    case ANEURALNETWORKS_LOGICAL_OR: return broadcast_binary(c);
    case ANEURALNETWORKS_LOGICAL_NOT: return logical_not(c);
    case ANEURALNETWORKS_REDUCE_ANY:
    case ANEURALNETWORKS_REDUCE_ALL:
    case ANEURALNETWORKS_REDUCE_SUM: return reduce(c);
    case ANEURALNETWORKS_SELECT: return select_op(c);
    case ANEURALNETWORKS_TILE: return tile(c);
    case ANEURALNETWORKS_BATCH_MATMUL: return batch_matmul(c);
    case ANEURALNETWORKS_EMBEDDING_LOOKUP: return embedding_lookup(c);
    default: return nn_flow_operation_phase(c);
  }
}
