/*
 * nnapi_map.h — what the TFLite -> NNAPI mapping's files share: the context of
 * one operator's mapping (map_ctx), the operand type it chose (nn_type), the
 * DECLINE / NEED_LEVEL exits, and the helpers of nnapi_operands.c that read the
 * operator and emit NNAPI operands and operations. nnapi_ops.c holds the
 * per-family mappings that use them.
 *
 * Every helper that emits needs c->b (a model builder); the deciding ones
 * never touch it.
 */
#ifndef WICK_DELEGATES_NNAPI_NNAPI_MAP_H
#define WICK_DELEGATES_NNAPI_NNAPI_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "delegates/nnapi/nnapi_internal.h"

typedef struct map_ctx {
  const nnapi_library *lib;
  const wick_delegate_graph *g;
  size_t node;
  nnapi_builder *b; /* NULL: only decide */
  char *why;
  size_t why_size;
  int64_t level;
  const char *op;    /* the TFLite name, for messages */
  bool allow_scalar; /* rank-0 tensors pass as [1] (elementwise operators, reshapes) */
  bool allow_bool;   /* bool tensors pass as TENSOR_BOOL8 (29: comparisons, logic, SELECT) */
} map_ctx;

#define DECLINE(...)                            \
  do {                                          \
    snprintf(c->why, c->why_size, __VA_ARGS__); \
    return false;                               \
  } while (0)

/* An accepted operator's note for the delegation report (wick_delegate.notes): how NNAPI runs
 * it when that is not the operator itself, and how close it is. Left in why on success. */
#define NOTE(...) snprintf(c->why, c->why_size, __VA_ARGS__)

#define NEED_LEVEL(lv, what)                                               \
  do {                                                                     \
    if (c->level < (lv))                                                   \
      DECLINE("%s needs NNAPI feature level %d (%s %s)", what, (int)(lv),  \
              c->lib->planning ? "the plan is for" : "the runtime offers", \
              wick_nnapi_level_name(c->level));                            \
  } while (0)

/* An NNAPI operand type as this mapping chose it. */
typedef struct nn_type {
  int32_t code;
  float scale;
  int32_t zp;
} nn_type;

/* ---- reading the operator (deciding) */

/* Graph tensor t (NULL when t < 0), the node's input / output tensor indices. */
const wick_tensor *nn_tensor(const map_ctx *c, int32_t t);
int32_t nn_in_index(const map_ctx *c, size_t i);
int32_t nn_out_index(const map_ctx *c, size_t i);
size_t nn_rank(const wick_tensor *t);
int32_t nn_dim(const wick_tensor *t, size_t i);
/* QUANT8_ASYMM or QUANT8_ASYMM_SIGNED. */
bool nn_is_quant8(int32_t code);
/* The NNAPI type of an activation-like tensor (float32, uint8 or int8 per
 * tensor; int32 when allow_int32; bool from 29 when c->allow_bool), rank 1..4
 * with every dimension > 0. */
bool nn_value_type(map_ctx *c, int32_t index, const char *what, bool allow_int32, nn_type *out);
bool nn_same_quant(const nn_type *a, const nn_type *b);
/* TFLite fused activation -> FuseCode (TANH and SIGN_BIT declined). */
bool nn_fuse_code(map_ctx *c, int32_t *code);
/* An integer option of the node, or dflt when it has none. */
int nn_option_int(const map_ctx *c, wick_op_option o, int dflt);
/* The node's first input and its output: their indices and NNAPI types (nn_value_type). */
bool nn_in_out_types(map_ctx *c, bool allow_int32, int32_t *ii, int32_t *oi, nn_type *in,
                     nn_type *out);
/* The types of an elementwise operator's two inputs and output (rank-0 operands pass as [1]). */
bool nn_binary_types(map_ctx *c, nn_type *a, nn_type *b, nn_type *out);

/* ---- emitting (c->b set); an operand id, or -1 with the reason in c->why */

int32_t nn_scalar_i32(map_ctx *c, int32_t v);
int32_t nn_scalar_f32(map_ctx *c, float v);
int32_t nn_scalar_bool(map_ctx *c, bool v);
/* A constant tensor the mapping makes up (shapes, axes, paddings, zero biases). */
int32_t nn_const_tensor(map_ctx *c, nn_type type, const uint32_t *dims, uint32_t rank,
                        const void *data, size_t size);
int32_t nn_const_i32_vector(map_ctx *c, const int32_t *v, uint32_t n);
/* An operand with no graph tensor behind it (between two NNAPI operations). */
int32_t nn_temp_operand(map_ctx *c, nn_type type, const uint32_t *dims, uint32_t rank);
/* The operand of graph tensor t, added on first use (nn_graph_operand_as: with the type
 * `as`, a bias's scale as NNAPI requires it). */
int32_t nn_graph_operand_as(map_ctx *c, int32_t t, const nn_type *as);
int32_t nn_graph_operand(map_ctx *c, int32_t t);
/* Adds operation `code` (false when an operand failed or the call did). */
bool nn_operation(map_ctx *c, int32_t code, const int32_t *ins, size_t nin, const int32_t *outs,
                  size_t nout);
/* Adds operation `code` whose one output is graph tensor oi (its operand added after the
 * inputs'). */
bool nn_operation_to(map_ctx *c, int32_t code, const int32_t *ins, size_t nin, int32_t oi);
/* The shape of graph tensor t as NNAPI operands carry it: its dims, rank-0 as [1]. */
uint32_t nn_dims_of(const map_ctx *c, int32_t t, uint32_t dims[4]);
/* Operand `in` RESHAPEd to dims (a temporary of `type`); -1 on failure. */
int32_t nn_reshaped(map_ctx *c, int32_t in, nn_type type, const uint32_t *dims, uint32_t rank);
/* TRANSPOSE of operand `in` (shape dims, rank r) by perm: NNAPI's TRANSPOSE from 28; at 27,
 * exactly, RESHAPE to [rows, inner] (inner: the trailing axes perm keeps in place), an
 * EMBEDDING_LOOKUP (27) of the rows in their permuted order, RESHAPE — a copy of every element
 * (float32, int32, uint8). nn_transpose_ok decides (at 27 at most NN_LOOKUP_MAX_ROWS rows,
 * else "<what> needs NNAPI feature level 28"); nn_transpose_into writes operand `out`,
 * nn_transposed a new temporary. */
#define NN_LOOKUP_MAX_ROWS (1u << 20)
bool nn_transpose_ok(map_ctx *c, nn_type type, const uint32_t *dims, uint32_t r,
                     const int32_t *perm, const char *what);
bool nn_transpose_into(map_ctx *c, int32_t in, nn_type type, const uint32_t *dims, uint32_t r,
                       const int32_t *perm, int32_t out);
int32_t nn_transposed(map_ctx *c, int32_t in, nn_type type, const uint32_t *dims, uint32_t r,
                      const int32_t *perm);
/* A float32 constant [1] holding v (a broadcast operand of ADD / MUL / DIV / SUB). */
int32_t nn_const_f32(map_ctx *c, float v);
/* An elementwise operation of two operands into a new temporary of `type` and dims (ADD, MUL,
 * SUB, DIV take a FuseCode NONE third input); -1 on failure. */
int32_t nn_elementwise(map_ctx *c, int32_t code, int32_t a, int32_t b, nn_type type,
                       const uint32_t *dims, uint32_t rank);

/* ---- the operator families of nnapi_ops_composite.c and nnapi_ops_logic.c */

/* BATCH_MATMUL: NNAPI's own from feature level 6; below it, exactly, as DEPTHWISE_CONV_2D
 * with the second operand as the filter (27; TRANSPOSEs around it for several batches or an
 * adjoint, 28). */
bool nn_map_batch_matmul(map_ctx *c);
/* GELU: the tanh form op by op (27), the erf form through erfc's rational bound (29). */
bool nn_map_gelu(map_ctx *c);
/* EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL (29). */
bool nn_map_comparison(map_ctx *c, int32_t code);
/* LOGICAL_AND LOGICAL_OR LOGICAL_NOT (29). */
bool nn_map_logical(map_ctx *c, int32_t code);
/* REDUCE_ANY REDUCE_ALL (bool) and SUM (float) (29). */
bool nn_map_reduce(map_ctx *c, int32_t code);
/* SELECT, SELECT_V2 (29): NNAPI's SELECT with each operand broadcast first. */
bool nn_map_select(map_ctx *c, bool v2);
/* BROADCAST_TO (29): TILE (LOGICAL_AND with a constant true for bool). */
bool nn_map_broadcast_to(map_ctx *c);
/* IF and WHILE (30): NNAPI's IF / WHILE with each subgraph built as a referenced model
 * (nnapi_ops_flow.c). */
bool nn_map_control_flow(map_ctx *c, bool is_while);
/* The custom TFLite_Detection_PostProcess (29): DETECTION_POSTPROCESSING and two CASTs, where
 * the fields mean the same (nnapi_ops_detection.c). */
bool nn_map_detection_postprocess(map_ctx *c);

#endif /* WICK_DELEGATES_NNAPI_NNAPI_MAP_H */
