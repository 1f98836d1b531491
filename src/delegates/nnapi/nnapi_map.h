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
} map_ctx;

#define DECLINE(...)                            \
  do {                                          \
    snprintf(c->why, c->why_size, __VA_ARGS__); \
    return false;                               \
  } while (0)

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
 * tensor; int32 when allow_int32), rank 1..4 with every dimension > 0. */
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

#endif /* WICK_DELEGATES_NNAPI_NNAPI_MAP_H */
