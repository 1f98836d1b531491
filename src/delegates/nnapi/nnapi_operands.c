/*
 * nnapi_operands.c — the helpers of the TFLite -> NNAPI mapping (nnapi_map.h):
 * reading an operator's tensors, types and options as NNAPI would take them,
 * and emitting NNAPI operands (scalars, made-up constants, graph tensors with
 * their quantization and values) and operations into the model being built.
 * The per-family mappings that use them are in nnapi_ops.c, whose opening
 * comment states the conventions (types, per-channel filters, biases).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_map.h"

const wick_tensor *nn_tensor(const map_ctx *c, int32_t t) {
  return t < 0 ? NULL : wick_delegate_graph_tensor(c->g, t);
}
int32_t nn_in_index(const map_ctx *c, size_t i) {
  return wick_delegate_graph_node_input(c->g, c->node, i);
}
int32_t nn_out_index(const map_ctx *c, size_t i) {
  return wick_delegate_graph_node_output(c->g, c->node, i);
}
size_t nn_rank(const wick_tensor *t) { return wick_tensor_rank(t); }
int32_t nn_dim(const wick_tensor *t, size_t i) { return wick_tensor_dim(t, i); }

bool nn_is_quant8(int32_t code) {
  return code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ||
         code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
}

/* The NNAPI type of an activation-like tensor (float32, uint8 or int8 per
 * tensor; int32 when allow_int32), rank 1..4 with every dimension > 0. */
bool nn_value_type(map_ctx *c, int32_t index, const char *what, bool allow_int32, nn_type *out) {
  const wick_tensor *t = nn_tensor(c, index);
  if (t == NULL) DECLINE("%s %s is absent", c->op, what);
  size_t r = nn_rank(t);
  if ((r < 1 && !c->allow_scalar) || r > 4)
    DECLINE("%s %s has rank %zu (NNAPI tensors here: rank 1 to 4)", c->op, what, r);
  for (size_t d = 0; d < r; d++)
    if (nn_dim(t, d) <= 0) DECLINE("%s %s has an empty dimension", c->op, what);
  wick_dtype dt = wick_tensor_dtype(t);
  size_t qn = wick_tensor_quantization_count(t);
  float scale = 0;
  int64_t zp = 0;
  if (qn == 1) wick_tensor_quantization_at(t, 0, &scale, &zp);
  out->scale = 0;
  out->zp = 0;
  if (dt == WICK_DTYPE_FLOAT32 && qn == 0) {
    out->code = ANEURALNETWORKS_TENSOR_FLOAT32;
  } else if (dt == WICK_DTYPE_UINT8 && qn == 1) {
    if (!(scale > 0) || zp < 0 || zp > 255)
      DECLINE("%s %s: uint8 scale %g / zero point %lld outside NNAPI's range", c->op, what,
              (double)scale, (long long)zp);
    *out = (nn_type){ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, scale, (int32_t)zp};
  } else if (dt == WICK_DTYPE_INT8 && qn == 1) {
    NEED_LEVEL(30, "a signed int8 tensor");
    if (!(scale > 0) || zp < -128 || zp > 127)
      DECLINE("%s %s: int8 scale %g / zero point %lld outside NNAPI's range", c->op, what,
              (double)scale, (long long)zp);
    *out = (nn_type){ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED, scale, (int32_t)zp};
  } else if (dt == WICK_DTYPE_INT32 && qn == 0 && allow_int32) {
    out->code = ANEURALNETWORKS_TENSOR_INT32;
  } else if (dt == WICK_DTYPE_BOOL && qn == 0 && c->allow_bool) {
    NEED_LEVEL(29, "a bool tensor");
    out->code = ANEURALNETWORKS_TENSOR_BOOL8;
  } else {
    DECLINE("%s %s is %s%s (NNAPI takes float32, uint8 and, from level 30, int8 here)", c->op, what,
            qn > 1 ? "per-channel " : "", wick_dtype_name(dt));
  }
  return true;
}

bool nn_same_quant(const nn_type *a, const nn_type *b) {
  return a->code == b->code && a->scale == b->scale && a->zp == b->zp;
}

/* TFLite fused activation -> FuseCode. */
bool nn_fuse_code(map_ctx *c, int32_t *code) {
  double v = 0;
  *code = ANEURALNETWORKS_FUSED_NONE;
  if (!wick_delegate_graph_node_option(c->g, c->node, WICK_OPTION_FUSED_ACTIVATION, &v))
    return true;
  if (v < 0 || v > 3)
    DECLINE("%s with a fused %s (NNAPI fuses only RELU, RELU1, RELU6)", c->op,
            v == 4 ? "TANH" : "SIGN_BIT");
  *code = (int32_t)v;
  return true;
}

int nn_option_int(const map_ctx *c, wick_op_option o, int dflt) {
  double v;
  return wick_delegate_graph_node_option(c->g, c->node, o, &v) ? (int)v : dflt;
}

/* ------------------------------------------------------------ emitting */

static bool call_ok(map_ctx *c, int status, const char *call) {
  if (status == ANEURALNETWORKS_NO_ERROR) return true;
  c->b->failed_call = 1;
  DECLINE("%s failed (NNAPI result %d) building %s", call, status, c->op);
}

static int32_t add_operand(map_ctx *c, const ANeuralNetworksOperandType *type) {
  nnapi_builder *b = c->b;
  wick_nnapi_hash(b, &type->type, sizeof type->type);
  wick_nnapi_hash(b, &type->dimensionCount, sizeof type->dimensionCount);
  if (type->dimensionCount)
    wick_nnapi_hash(b, type->dimensions, type->dimensionCount * sizeof(uint32_t));
  wick_nnapi_hash(b, &type->scale, sizeof type->scale);
  wick_nnapi_hash(b, &type->zeroPoint, sizeof type->zeroPoint);
  if (!call_ok(c, b->lib->fn.ANeuralNetworksModel_addOperand(b->model, type),
               "ANeuralNetworksModel_addOperand"))
    return -1;
  return (int32_t)b->next_operand++;
}

static int32_t scalar(map_ctx *c, int32_t code, const void *value, size_t size) {
  ANeuralNetworksOperandType t = {code, 0, NULL, 0.0f, 0};
  int32_t id = add_operand(c, &t);
  if (id < 0) return -1;
  wick_nnapi_hash(c->b, value, size);
  if (!call_ok(c, c->b->lib->fn.ANeuralNetworksModel_setOperandValue(c->b->model, id, value, size),
               "ANeuralNetworksModel_setOperandValue"))
    return -1;
  return id;
}
int32_t nn_scalar_i32(map_ctx *c, int32_t v) {
  return scalar(c, ANEURALNETWORKS_INT32, &v, sizeof v);
}
int32_t nn_scalar_f32(map_ctx *c, float v) {
  return scalar(c, ANEURALNETWORKS_FLOAT32, &v, sizeof v);
}
int32_t nn_scalar_bool(map_ctx *c, bool v) {
  uint8_t byte = v ? 1 : 0;
  return scalar(c, ANEURALNETWORKS_BOOL, &byte, 1);
}

/* A constant tensor the mapping makes up (shapes, axes, paddings, zero biases). */
int32_t nn_const_tensor(map_ctx *c, nn_type type, const uint32_t *dims, uint32_t rank,
                        const void *data, size_t size) {
  uint32_t *kept_dims = wick_nnapi_keep(c->b, rank * sizeof(uint32_t) + 1);
  void *kept = wick_nnapi_keep(c->b, size + 1);
  if (kept_dims == NULL || kept == NULL) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    return -1;
  }
  memcpy(kept_dims, dims, rank * sizeof(uint32_t));
  memcpy(kept, data, size);
  ANeuralNetworksOperandType t = {type.code, rank, kept_dims, type.scale, type.zp};
  int32_t id = add_operand(c, &t);
  if (id < 0) return -1;
  wick_nnapi_hash(c->b, kept, size);
  if (!call_ok(c, c->b->lib->fn.ANeuralNetworksModel_setOperandValue(c->b->model, id, kept, size),
               "ANeuralNetworksModel_setOperandValue"))
    return -1;
  return id;
}

int32_t nn_const_i32_vector(map_ctx *c, const int32_t *v, uint32_t n) {
  return nn_const_tensor(c, (nn_type){ANEURALNETWORKS_TENSOR_INT32, 0, 0}, &n, 1, v,
                         n * sizeof(int32_t));
}

/* An operand with no graph tensor behind it (between two NNAPI operations). */
int32_t nn_temp_operand(map_ctx *c, nn_type type, const uint32_t *dims, uint32_t rank) {
  uint32_t *kept_dims = wick_nnapi_keep(c->b, rank * sizeof(uint32_t) + 1);
  if (kept_dims == NULL) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    return -1;
  }
  memcpy(kept_dims, dims, rank * sizeof(uint32_t));
  ANeuralNetworksOperandType t = {type.code, rank, kept_dims, type.scale, type.zp};
  return add_operand(c, &t);
}

/* The operand of graph tensor t, added on first use with the type the rules of
 * nn_value_type give (per-channel int8 filters and int32 biases as described at
 * the top), or `as` when given (a bias: the scale NNAPI requires). */
int32_t nn_graph_operand_as(map_ctx *c, int32_t t, const nn_type *as) {
  nnapi_builder *b = c->b;
  if (t < 0 || (size_t)t >= b->num_tensors) {
    snprintf(c->why, c->why_size, "%s refers to tensor %d, outside the graph", c->op, (int)t);
    return -1;
  }
  if (b->operand_of[t] >= 0) return b->operand_of[t];
  const wick_tensor *x = nn_tensor(c, t);
  size_t r = nn_rank(x), qn = wick_tensor_quantization_count(x);
  uint32_t *dims = wick_nnapi_keep(b, (r ? r : 1) * sizeof(uint32_t));
  if (dims == NULL) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    return -1;
  }
  for (size_t d = 0; d < r; d++) dims[d] = (uint32_t)nn_dim(x, d);
  if (r == 0) { /* a scalar is the one-element tensor [1]: same bytes, same broadcasting */
    dims[0] = 1;
    r = 1;
  }
  ANeuralNetworksOperandType type = {0, (uint32_t)r, dims, 0.0f, 0};
  float scale = 0;
  int64_t zp = 0;
  if (qn >= 1) wick_tensor_quantization_at(x, 0, &scale, &zp);
  bool per_channel = false;
  switch (wick_tensor_dtype(x)) {
    case WICK_DTYPE_FLOAT32: type.type = ANEURALNETWORKS_TENSOR_FLOAT32; break;
    case WICK_DTYPE_UINT8:
      type = (ANeuralNetworksOperandType){ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, (uint32_t)r, dims,
                                          scale, (int32_t)zp};
      break;
    case WICK_DTYPE_INT8:
      per_channel = qn > 1;
      type =
          (ANeuralNetworksOperandType){per_channel ? ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL
                                                   : ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED,
                                       (uint32_t)r, dims, per_channel ? 0.0f : scale,
                                       per_channel ? 0 : (int32_t)zp};
      break;
    case WICK_DTYPE_INT32: type.type = ANEURALNETWORKS_TENSOR_INT32; break;
    case WICK_DTYPE_BOOL: type.type = ANEURALNETWORKS_TENSOR_BOOL8; break;
    case WICK_DTYPE_FLOAT16: type.type = ANEURALNETWORKS_TENSOR_FLOAT16; break; /* 29 */
    default:
      snprintf(c->why, c->why_size, "%s: tensor type %s has no NNAPI operand here", c->op,
               wick_dtype_name(wick_tensor_dtype(x)));
      return -1;
  }
  if (as != NULL) {
    type.type = as->code;
    type.scale = as->scale;
    type.zeroPoint = as->zp;
  }
  int32_t id = add_operand(c, &type);
  if (id < 0) return -1;
  if (per_channel) {
    float *scales = wick_nnapi_keep(b, qn * sizeof(float));
    if (scales == NULL) {
      snprintf(c->why, c->why_size, "out of memory building %s", c->op);
      return -1;
    }
    for (size_t k = 0; k < qn; k++) wick_tensor_quantization_at(x, k, &scales[k], &zp);
    ANeuralNetworksSymmPerChannelQuantParams pc = {(uint32_t)wick_tensor_quantization_axis(x),
                                                   (uint32_t)qn, scales};
    wick_nnapi_hash(b, scales, qn * sizeof(float));
    if (b->lib->fn.ANeuralNetworksModel_setOperandSymmPerChannelQuantParams == NULL) {
      snprintf(c->why, c->why_size, "the NNAPI library lacks setOperandSymmPerChannelQuantParams");
      return -1;
    }
    if (!call_ok(c,
                 b->lib->fn.ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(b->model, id,
                                                                                     &pc),
                 "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"))
      return -1;
  }
  if (wick_tensor_is_constant(x)) {
    const void *data = wick_tensor_data(x);
    if (data == NULL) {
      snprintf(c->why, c->why_size, "%s: a constant without data", c->op);
      return -1;
    }
    /* the graph's constants stay valid until free_partition, as NNAPI needs for
     * values over 128 bytes, which it references instead of copying */
    wick_nnapi_hash(b, data, wick_tensor_byte_size(x));
    if (!call_ok(c,
                 b->lib->fn.ANeuralNetworksModel_setOperandValue(b->model, id, data,
                                                                 wick_tensor_byte_size(x)),
                 "ANeuralNetworksModel_setOperandValue"))
      return -1;
  }
  b->operand_of[t] = id;
  return id;
}

int32_t nn_graph_operand(map_ctx *c, int32_t t) { return nn_graph_operand_as(c, t, NULL); }

int32_t wick_nnapi_tensor_operand(nnapi_builder *b, int32_t t) {
  map_ctx ctx = {b->lib,        b->graph,      0,     b,    b->why, b->why_size,
                 b->lib->level, "a partition", false, false};
  return nn_graph_operand(&ctx, t);
}

bool nn_operation(map_ctx *c, int32_t code, const int32_t *ins, size_t nin, const int32_t *outs,
                  size_t nout) {
  uint32_t in_u[24], out_u[16];
  if (nin > 24 || nout > 16) DECLINE("%s: too many operands", c->op);
  for (size_t i = 0; i < nin; i++) {
    if (ins[i] < 0) return false;
    in_u[i] = (uint32_t)ins[i];
  }
  for (size_t i = 0; i < nout; i++) {
    if (outs[i] < 0) return false;
    out_u[i] = (uint32_t)outs[i];
  }
  wick_nnapi_hash(c->b, &code, sizeof code);
  wick_nnapi_hash(c->b, in_u, nin * sizeof(uint32_t));
  wick_nnapi_hash(c->b, out_u, nout * sizeof(uint32_t));
  return call_ok(c,
                 c->b->lib->fn.ANeuralNetworksModel_addOperation(c->b->model, code, (uint32_t)nin,
                                                                 in_u, (uint32_t)nout, out_u),
                 "ANeuralNetworksModel_addOperation");
}

/* Adds operation `code` of inputs ins[0..nin) whose one output is graph tensor oi (its operand
 * added after the inputs'). */
bool nn_operation_to(map_ctx *c, int32_t code, const int32_t *ins, size_t nin, int32_t oi) {
  int32_t o = nn_graph_operand(c, oi);
  return nn_operation(c, code, ins, nin, &o, 1);
}

/* The node's first input and its output: their indices and NNAPI types (nn_value_type). */
bool nn_in_out_types(map_ctx *c, bool allow_int32, int32_t *ii, int32_t *oi, nn_type *in,
                     nn_type *out) {
  *ii = nn_in_index(c, 0), *oi = nn_out_index(c, 0);
  return nn_value_type(c, *ii, "input", allow_int32, in) &&
         nn_value_type(c, *oi, "output", allow_int32, out);
}

/* The types of an elementwise operator's two inputs and output (rank-0 operands pass as [1]). */
bool nn_binary_types(map_ctx *c, nn_type *a, nn_type *b, nn_type *out) {
  c->allow_scalar = true;
  return nn_value_type(c, nn_in_index(c, 0), "first input", false, a) &&
         nn_value_type(c, nn_in_index(c, 1), "second input", false, b) &&
         nn_value_type(c, nn_out_index(c, 0), "output", false, out);
}

uint32_t nn_dims_of(const map_ctx *c, int32_t t, uint32_t dims[4]) {
  const wick_tensor *x = nn_tensor(c, t);
  uint32_t r = (uint32_t)nn_rank(x);
  for (uint32_t d = 0; d < r && d < 4; d++) dims[d] = (uint32_t)nn_dim(x, d);
  if (r == 0) dims[r++] = 1;
  return r;
}

int32_t nn_reshaped(map_ctx *c, int32_t in, nn_type type, const uint32_t *dims, uint32_t rank) {
  int32_t shape[4];
  for (uint32_t d = 0; d < rank; d++) shape[d] = (int32_t)dims[d];
  int32_t ops[2];
  ops[0] = in;
  ops[1] = nn_const_i32_vector(c, shape, rank);
  int32_t out = nn_temp_operand(c, type, dims, rank);
  return nn_operation(c, ANEURALNETWORKS_RESHAPE, ops, 2, &out, 1) ? out : -1;
}

/* The rows of TRANSPOSE's level-27 form: the axes before the longest suffix `perm` keeps in
 * place (their product), *inner the elements of that suffix. */
static uint64_t lookup_rows(const uint32_t *dims, uint32_t r, const int32_t *perm,
                            uint64_t *inner) {
  uint32_t t = r;
  while (t > 0 && perm[t - 1] == (int32_t)(t - 1)) t--;
  uint64_t rows = 1;
  *inner = 1;
  for (uint32_t d = 0; d < r; d++) {
    if (d < t)
      rows *= dims[d];
    else
      *inner *= dims[d];
  }
  return rows;
}

bool nn_transpose_ok(map_ctx *c, nn_type type, const uint32_t *dims, uint32_t r,
                     const int32_t *perm, const char *what) {
  if (c->level >= 28) return true;
  uint64_t inner, rows = lookup_rows(dims, r, perm, &inner);
  if (type.code != ANEURALNETWORKS_TENSOR_FLOAT32 && type.code != ANEURALNETWORKS_TENSOR_INT32 &&
      type.code != ANEURALNETWORKS_TENSOR_QUANT8_ASYMM)
    NEED_LEVEL(28, what);
  if (rows > NN_LOOKUP_MAX_ROWS) NEED_LEVEL(28, what);
  return true;
}

bool nn_transpose_into(map_ctx *c, int32_t in, nn_type type, const uint32_t *dims, uint32_t r,
                       const int32_t *perm, int32_t out) {
  uint32_t out_dims[4];
  for (uint32_t d = 0; d < r; d++) out_dims[d] = dims[perm[d]];
  int32_t ops[2];
  if (c->level >= 28) {
    ops[0] = in;
    ops[1] = nn_const_i32_vector(c, perm, r);
    return nn_operation(c, ANEURALNETWORKS_TRANSPOSE, ops, 2, &out, 1);
  }
  /* 27: EMBEDDING_LOOKUP of the [rows, inner] view by the permuted row numbers (a copy) */
  uint64_t inner, rows = lookup_rows(dims, r, perm, &inner);
  int32_t *index = malloc((size_t)rows * sizeof *index);
  if (index == NULL) DECLINE("out of memory building %s", c->op);
  uint32_t t = r;
  while (t > 0 && perm[t - 1] == (int32_t)(t - 1)) t--;
  uint64_t stride[4] = {0, 0, 0, 0}, s = 1;
  for (int d = (int)t - 1; d >= 0; d--) {
    stride[d] = s;
    s *= dims[d];
  }
  for (uint64_t o = 0; o < rows; o++) {
    uint64_t rest = o, row = 0;
    for (int k = (int)t - 1; k >= 0; k--) { /* output index j[k] over out_dims[0, t) */
      uint64_t j = rest % out_dims[k];
      rest /= out_dims[k];
      row += j * stride[perm[k]]; /* input axis perm[k] is at j */
    }
    index[o] = (int32_t)row;
  }
  const uint32_t view[2] = {(uint32_t)rows, (uint32_t)inner};
  ops[0] = nn_const_i32_vector(c, index, (uint32_t)rows);
  free(index);
  ops[1] = nn_reshaped(c, in, type, view, 2);
  int32_t looked = nn_temp_operand(c, type, view, 2);
  if (!nn_operation(c, ANEURALNETWORKS_EMBEDDING_LOOKUP, ops, 2, &looked, 1)) return false;
  int32_t shape[4];
  for (uint32_t d = 0; d < r; d++) shape[d] = (int32_t)out_dims[d];
  ops[0] = looked;
  ops[1] = nn_const_i32_vector(c, shape, r);
  return nn_operation(c, ANEURALNETWORKS_RESHAPE, ops, 2, &out, 1);
}

int32_t nn_transposed(map_ctx *c, int32_t in, nn_type type, const uint32_t *dims, uint32_t r,
                      const int32_t *perm) {
  uint32_t out_dims[4];
  for (uint32_t d = 0; d < r; d++) out_dims[d] = dims[perm[d]];
  int32_t out = nn_temp_operand(c, type, out_dims, r);
  if (out < 0) return -1;
  return nn_transpose_into(c, in, type, dims, r, perm, out) ? out : -1;
}

int32_t nn_const_f32(map_ctx *c, float v) {
  const uint32_t one = 1;
  return nn_const_tensor(c, (nn_type){ANEURALNETWORKS_TENSOR_FLOAT32, 0, 0}, &one, 1, &v, sizeof v);
}

int32_t nn_elementwise(map_ctx *c, int32_t code, int32_t a, int32_t b, nn_type type,
                       const uint32_t *dims, uint32_t rank) {
  bool fused = code == ANEURALNETWORKS_ADD || code == ANEURALNETWORKS_MUL ||
               code == ANEURALNETWORKS_SUB || code == ANEURALNETWORKS_DIV;
  int32_t ops[3];
  ops[0] = a;
  ops[1] = b;
  if (fused) ops[2] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  int32_t out = nn_temp_operand(c, type, dims, rank);
  return nn_operation(c, code, ops, fused ? 3 : 2, &out, 1) ? out : -1;
}
