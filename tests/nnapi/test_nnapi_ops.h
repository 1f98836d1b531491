/*
 * test_nnapi_ops.h — what the operation files of the test NNAPI runtime share
 * (test_nnapi_ops.c, test_nnapi_ops_logic.c): the FAIL / BAD / TRY exits of an
 * operation phase, reading operands and their data, quantized loads and
 * stores, the type, parameter and shape checks, numpy broadcasting and
 * constant int32 vectors.
 */
#ifndef WICK_TESTS_NNAPI_TEST_NNAPI_OPS_H
#define WICK_TESTS_NNAPI_TEST_NNAPI_OPS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_nnapi.h"

#define FAIL(code, ...)                         \
  do {                                          \
    snprintf(c->msg, c->msg_size, __VA_ARGS__); \
    return code;                                \
  } while (0)
#define BAD(...) FAIL(ANEURALNETWORKS_BAD_DATA, __VA_ARGS__)
#define TRY(x)                                               \
  do {                                                       \
    int status_ = (x);                                       \
    if (status_ != ANEURALNETWORKS_NO_ERROR) return status_; \
  } while (0)

static inline const nn_operand *IN(const nn_ctx *c, uint32_t i) {
  return &c->m->operands[c->op->ins[i]];
}
static inline const nn_operand *OUT(const nn_ctx *c, uint32_t i) {
  return &c->m->operands[c->op->outs[i]];
}
static inline const void *in_data(const nn_ctx *c, uint32_t i) { return c->buf[c->op->ins[i]]; }
static inline void *out_data(const nn_ctx *c, uint32_t i) { return c->buf[c->op->outs[i]]; }

static inline bool q8(int32_t t) {
  return t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ||
         t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
}
static inline size_t count_of(const nn_operand *o) {
  size_t n = 1;
  for (uint32_t d = 0; d < o->rank; d++) n *= o->dims[d];
  return n;
}
static inline int32_t ldq(const nn_operand *o, const void *p, size_t i) {
  return o->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? ((const uint8_t *)p)[i]
                                                        : ((const int8_t *)p)[i];
}
static inline void stq(const nn_operand *o, void *p, size_t i, int32_t v) {
  if (o->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM)
    ((uint8_t *)p)[i] = (uint8_t)v;
  else
    ((int8_t *)p)[i] = (int8_t)v;
}
static inline void qrange(const nn_operand *o, int32_t *lo, int32_t *hi) {
  *lo = o->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 0 : -128;
  *hi = o->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 255 : 127;
}
static inline int32_t clampi(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* A float (already rounded) to an integer in [lo, hi] with no undefined
 * conversion: NaN (extreme scales of hostile files) gives `nan_value`. */
static inline int32_t float_to_int(float r, int32_t lo, int32_t hi, int32_t nan_value) {
  if (r != r) return nan_value;
  return r <= (float)lo ? lo : r >= (float)hi ? hi : (int32_t)r;
}

/* A value tensor of a type the operation takes at this level. */
static inline int value_type(nn_ctx *c, const nn_operand *o, const char *what, int64_t q8u_since) {
  switch (o->type) {
    case ANEURALNETWORKS_TENSOR_FLOAT32: return ANEURALNETWORKS_NO_ERROR;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
      if (q8u_since && c->level >= q8u_since) return ANEURALNETWORKS_NO_ERROR;
      break;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED:
      if (q8u_since && c->level >= 30) return ANEURALNETWORKS_NO_ERROR;
      break;
    default: break;
  }
  BAD("operation %d: %s of type %d is not supported at feature level %lld", (int)c->op->type, what,
      (int)o->type, (long long)c->level);
}

static inline int scalar_type(nn_ctx *c, uint32_t i, int32_t type) {
  if (IN(c, i)->type != type)
    BAD("operation %d: input %u must be of type %d, not %d", (int)c->op->type, i, (int)type,
        (int)IN(c, i)->type);
  if (type == ANEURALNETWORKS_BOOL && c->level < 29)
    BAD("operation %d: BOOL parameters need feature level 29", (int)c->op->type);
  return ANEURALNETWORKS_NO_ERROR;
}

static inline int scalar_value(nn_ctx *c, uint32_t i, const void **value) {
  const nn_operand *o = IN(c, i);
  if (o->kind != NN_CONST || o->value == NULL)
    BAD("operation %d: parameter %u must be a constant", (int)c->op->type, i);
  *value = o->value;
  return ANEURALNETWORKS_NO_ERROR;
}
static inline int get_i32(nn_ctx *c, uint32_t i, int32_t *v) {
  const void *p;
  TRY(scalar_value(c, i, &p));
  memcpy(v, p, 4);
  return ANEURALNETWORKS_NO_ERROR;
}
static inline int get_f32(nn_ctx *c, uint32_t i, float *v) {
  const void *p;
  TRY(scalar_value(c, i, &p));
  memcpy(v, p, 4);
  return ANEURALNETWORKS_NO_ERROR;
}
static inline int get_bool(nn_ctx *c, uint32_t i, bool *v) {
  const void *p;
  TRY(scalar_value(c, i, &p));
  *v = *(const uint8_t *)p != 0;
  return ANEURALNETWORKS_NO_ERROR;
}

static inline int same_type_as(nn_ctx *c, const nn_operand *a, const nn_operand *b,
                               bool same_quant) {
  if (a->type != b->type) BAD("operation %d: operand types differ", (int)c->op->type);
  if (same_quant && q8(a->type) && (a->scale != b->scale || a->zp != b->zp))
    BAD("operation %d: the output must keep the input's scale and zero point", (int)c->op->type);
  return ANEURALNETWORKS_NO_ERROR;
}

static inline int expect_dims(nn_ctx *c, const nn_operand *o, const uint32_t *dims, uint32_t rank) {
  bool ok = o->rank == rank;
  for (uint32_t d = 0; ok && d < rank; d++) ok = o->dims[d] == dims[d];
  if (!ok) {
    char got[64] = "", want[64] = "";
    for (uint32_t d = 0; d < o->rank; d++)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%u ", o->dims[d]);
    for (uint32_t d = 0; d < rank; d++)
      snprintf(want + strlen(want), sizeof want - strlen(want), "%u ", dims[d]);
    BAD("operation %d: output shape [%s] but the operation gives [%s]", (int)c->op->type, got,
        want);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static inline int broadcast_dims(nn_ctx *c, const nn_operand *a, const nn_operand *b,
                                 uint32_t *dims, uint32_t *rank) {
  *rank = a->rank > b->rank ? a->rank : b->rank;
  for (uint32_t k = 0; k < *rank; k++) {
    uint32_t da = k + a->rank >= *rank ? a->dims[k + a->rank - *rank] : 1;
    uint32_t db = k + b->rank >= *rank ? b->dims[k + b->rank - *rank] : 1;
    if (da != db && da != 1 && db != 1) BAD("dimensions %u and %u do not broadcast", da, db);
    dims[k] = da > db ? da : db;
  }
  return ANEURALNETWORKS_NO_ERROR;
}

/* Element offset in `o` of the output index `idx` (rank `rank`) under broadcasting. */
static inline size_t bc_offset(const nn_operand *o, const uint32_t *idx, uint32_t rank) {
  size_t off = 0;
  for (uint32_t k = 0; k < o->rank; k++) {
    uint32_t d = o->dims[k], i = idx[k + rank - o->rank];
    off = off * d + (d == 1 ? 0 : i);
  }
  return off;
}

/* Constant int32 vector input i of `n` values. */
static inline int const_vector(nn_ctx *c, uint32_t i, uint32_t n, const int32_t **v) {
  const nn_operand *o = IN(c, i);
  if (o->type != ANEURALNETWORKS_TENSOR_INT32 || o->rank != 1 || o->dims[0] != n)
    BAD("operation %d: input %u must be a [%u] TENSOR_INT32", (int)c->op->type, i, n);
  if (o->kind != NN_CONST) FAIL(ANEURALNETWORKS_OP_FAILED, "run-time parameters: not implemented");
  *v = o->value;
  return ANEURALNETWORKS_NO_ERROR;
}

static inline void strides_of(const uint32_t *dims, uint32_t rank, size_t *st) {
  size_t s = 1;
  for (int d = (int)rank - 1; d >= 0; d--) {
    st[d] = s;
    s *= dims[d];
  }
}

/* The operations of test_nnapi_ops_logic.c (comparisons, logical operations,
 * SELECT, TILE, the boolean and sum reductions, BATCH_MATMUL): the phase of
 * one, and the level it appeared at (0: not one of them). */
int nn_logic_operation_phase(nn_ctx *c);
int64_t nn_logic_operation_level(int32_t type);

#endif /* WICK_TESTS_NNAPI_TEST_NNAPI_OPS_H */
