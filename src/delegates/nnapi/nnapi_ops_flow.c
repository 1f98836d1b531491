/*
 * nnapi_ops_flow.c — TFLite's IF and WHILE as NNAPI's IF and WHILE (feature
 * level 30), whose branches, condition and body are other NNAPI models passed
 * as MODEL operands (ANeuralNetworksModel_setOperandValueFromModel).
 *
 *   IF(cond, x...)   -> IF(cond, then_model, else_model, x...): NNAPI's
 *                       condition is a TENSOR_BOOL8 of shape [1] (TFLite's
 *                       one-element bool, a scalar passing as [1]).
 *   WHILE(x...)      -> WHILE(cond_model, body_model, x...): every loop
 *                       variable is an input-output operand (NNAPI's m = all,
 *                       k = n = 0); the cond model returns one bool [1].
 *
 * The subgraphs come from the delegate API (wick_delegate_graph_node_subgraph),
 * prepared for the node's input shapes. Each is built as its own model: its
 * inputs and outputs are the subgraph's, operators computed at prepare are
 * left out (their outputs are constants), and every other operator must map
 * exactly at the level (the same decision as anywhere: wick_nnapi_map_node,
 * nested IF / WHILE included) — otherwise the whole IF or WHILE is declined
 * with the inner operator's reason. NNAPI's rules for referenced models are
 * checked when deciding: each subgraph input and output has the type,
 * quantization and shape of the operation's operand it stands for. A model
 * output cannot be a model input or a constant in NNAPI, and one operand is
 * one output: a subgraph output that is its input (a loop variable the body
 * passes through), a constant, or an output already listed is first copied
 * by an exact identity — RESHAPE to its own shape (float32, 8-bit), ADD of a
 * constant 0 (int32), LOGICAL_AND with itself (bool).
 *
 * What NNAPI adds: a WHILE loop on NNAPI is bounded by the execution's loop
 * timeout (2 s by default, ANeuralNetworksExecution_setLoopTimeout): a loop
 * running longer fails the execution, and the partition reruns on the CPU.
 * Nodes whose output shapes change at invoke (an IF whose branches give other
 * shapes, a body that grows a loop variable) are never offered (wick.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_map.h"

enum { TFL_IF = 118, TFL_WHILE = 119 };

/* The NNAPI type and [1]-for-scalar shape of tensor t of graph g, as a subgraph or the node
 * passes it (nn_value_type with scalars, int32 and bool allowed). */
typedef struct io_type {
  nn_type type;
  uint32_t dims[4];
  uint32_t rank;
} io_type;

static bool io_type_of(map_ctx *c, const wick_delegate_graph *g, int32_t t, const char *what,
                       io_type *out) {
  map_ctx in_g = *c;
  in_g.g = g;
  in_g.allow_scalar = true;
  in_g.allow_bool = true;
  if (!nn_value_type(&in_g, t, what, true, &out->type)) return false;
  out->rank = nn_dims_of(&in_g, t, out->dims);
  return true;
}

static bool same_io(const io_type *a, const io_type *b) {
  if (!nn_same_quant(&a->type, &b->type) || a->rank != b->rank) return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* Whether subgraph `sub` (called `role`) maps: every operator that runs maps at the level,
 * and its inputs / outputs match `ins` / `outs` (the operation's operands it stands for). */
static bool subgraph_maps(map_ctx *c, const wick_delegate_graph *sub, const char *role,
                          const io_type *ins, size_t n_in, const io_type *outs, size_t n_out,
                          char *note, size_t note_size) {
  if (sub == NULL) DECLINE("%s has no %s subgraph", c->op, role);
  if (wick_delegate_graph_input_count(sub) != n_in ||
      wick_delegate_graph_output_count(sub) != n_out)
    DECLINE("%s's %s subgraph takes %zu inputs and returns %zu (NNAPI: %zu and %zu)", c->op, role,
            wick_delegate_graph_input_count(sub), wick_delegate_graph_output_count(sub), n_in,
            n_out);
  for (size_t i = 0; i < n_in + n_out; i++) {
    bool input = i < n_in;
    int32_t t =
        input ? wick_delegate_graph_input(sub, i) : wick_delegate_graph_output(sub, i - n_in);
    io_type got;
    if (!io_type_of(c, sub, t, input ? "subgraph input" : "subgraph output", &got)) return false;
    if (!same_io(&got, input ? &ins[i] : &outs[i - n_in]))
      DECLINE(
          "%s's %s subgraph %s %zu differs in type, quantization or shape from the "
          "operation's (NNAPI requires them equal)",
          c->op, role, input ? "input" : "output", input ? i : i - n_in);
  }
  char inner[160];
  size_t nodes = wick_delegate_graph_node_count(sub);
  for (size_t k = 0; k < nodes; k++) {
    const char *restriction = wick_delegate_graph_node_restriction(sub, k);
    if (restriction == NULL) DECLINE("%s's %s subgraph: operator %zu is missing", c->op, role, k);
    if (strcmp(restriction, "computed at prepare") == 0) continue;
    const char *name = wick_delegate_graph_node_name(sub, k);
    if (restriction[0])
      DECLINE("%s's %s subgraph: %s (operator %zu) %s", c->op, role, name ? name : "?", k,
              restriction);
    inner[0] = 0;
    if (!wick_nnapi_map_node(c->lib, sub, k, NULL, inner, sizeof inner))
      DECLINE("%s's %s subgraph: %s", c->op, role, inner);
    if (inner[0] && note[0] == 0) /* the first inner operator's note, for the report */
      snprintf(note, note_size, "; in the %s subgraph, %s: %s", role, name ? name : "?", inner);
  }
  return true;
}

/* ------------------------------------------------------------ building */

static bool call_ok(map_ctx *c, int status, const char *call) {
  if (status == ANEURALNETWORKS_NO_ERROR) return true;
  c->b->failed_call = 1;
  DECLINE("%s failed (NNAPI result %d) building %s", call, status, c->op);
}

/* An exact copy of operand `in` (graph tensor t of the model `sc` builds) in a new operand. */
static int32_t identity(map_ctx *sc, int32_t t, int32_t in) {
  io_type io;
  if (!io_type_of(sc, sc->g, t, "subgraph output", &io)) return -1;
  int32_t out = nn_temp_operand(sc, io.type, io.dims, io.rank);
  int32_t ops[3];
  ops[0] = in;
  switch (io.type.code) {
    case ANEURALNETWORKS_TENSOR_INT32: {
      const uint32_t one = 1;
      int32_t zero = 0;
      ops[1] = nn_const_tensor(sc, io.type, &one, 1, &zero, sizeof zero);
      ops[2] = nn_scalar_i32(sc, ANEURALNETWORKS_FUSED_NONE);
      return nn_operation(sc, ANEURALNETWORKS_ADD, ops, 3, &out, 1) ? out : -1;
    }
    case ANEURALNETWORKS_TENSOR_BOOL8:
      ops[1] = in;
      return nn_operation(sc, ANEURALNETWORKS_LOGICAL_AND, ops, 2, &out, 1) ? out : -1;
    default: {
      int32_t shape[4];
      for (uint32_t d = 0; d < io.rank; d++) shape[d] = (int32_t)io.dims[d];
      ops[1] = nn_const_i32_vector(sc, shape, io.rank);
      return nn_operation(sc, ANEURALNETWORKS_RESHAPE, ops, 2, &out, 1) ? out : -1;
    }
  }
}

/* Builds subgraph `sub` as a finished NNAPI model and adds it to the model being built as a
 * MODEL operand; its operand id, or -1 with the reason. */
static int32_t subgraph_operand(map_ctx *c, const wick_delegate_graph *sub) {
  nnapi_builder *b = c->b;
  const nnapi_functions *fn = &b->lib->fn;
  if (fn->ANeuralNetworksModel_setOperandValueFromModel == NULL) {
    snprintf(c->why, c->why_size, "the NNAPI library lacks setOperandValueFromModel");
    return -1;
  }
  nnapi_builder sb;
  memset(&sb, 0, sizeof sb);
  sb.lib = b->lib;
  sb.graph = sub;
  sb.why = c->why;
  sb.why_size = c->why_size;
  sb.num_tensors = wick_delegate_graph_tensor_count(sub);
  sb.hashing = b->hashing;
  memcpy(sb.hash, b->hash, sizeof sb.hash);
  sb.relaxed = b->relaxed;
  size_t n_in = wick_delegate_graph_input_count(sub), n_out = wick_delegate_graph_output_count(sub);
  sb.operand_of = malloc((sb.num_tensors ? sb.num_tensors : 1) * sizeof *sb.operand_of);
  uint32_t *ins = malloc((n_in + 1) * sizeof *ins), *outs = malloc((n_out + 1) * sizeof *outs);
  bool *listed = calloc(sb.num_tensors ? sb.num_tensors : 1, sizeof *listed);
  int32_t id = -1;
  map_ctx sc = *c;
  sc.g = sub;
  sc.b = &sb;
  sc.allow_scalar = true;
  sc.allow_bool = true;
  if (sb.operand_of == NULL || ins == NULL || outs == NULL || listed == NULL) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    goto done;
  }
  for (size_t i = 0; i < sb.num_tensors; i++) sb.operand_of[i] = -1;
  if (!call_ok(c, fn->ANeuralNetworksModel_create(&sb.model), "ANeuralNetworksModel_create"))
    goto done;
  for (size_t i = 0; i < n_in; i++) {
    int32_t t = wick_delegate_graph_input(sub, i);
    int32_t op = nn_graph_operand(&sc, t);
    if (op < 0) goto done;
    ins[i] = (uint32_t)op;
    listed[t] = true;
  }
  size_t nodes = wick_delegate_graph_node_count(sub);
  for (size_t k = 0; k < nodes; k++) {
    const char *restriction = wick_delegate_graph_node_restriction(sub, k);
    if (restriction != NULL && strcmp(restriction, "computed at prepare") == 0) continue;
    if (!wick_nnapi_map_node(b->lib, sub, k, &sb, c->why, c->why_size)) goto done;
  }
  for (size_t i = 0; i < n_out; i++) {
    int32_t t = wick_delegate_graph_output(sub, i);
    int32_t op = nn_graph_operand(&sc, t); /* a constant's operand, if nothing made it yet */
    if (op < 0) goto done;
    if (listed[t] || wick_tensor_is_constant(wick_delegate_graph_tensor(sub, t))) {
      op = identity(&sc, t, op);
      if (op < 0) goto done;
    }
    listed[t] = true;
    outs[i] = (uint32_t)op;
  }
  wick_nnapi_hash(&sb, ins, n_in * sizeof *ins);
  wick_nnapi_hash(&sb, outs, n_out * sizeof *outs);
  if (!call_ok(c,
               fn->ANeuralNetworksModel_identifyInputsAndOutputs(sb.model, (uint32_t)n_in, ins,
                                                                 (uint32_t)n_out, outs),
               "ANeuralNetworksModel_identifyInputsAndOutputs"))
    goto done;
  if (sb.relaxed &&
      !call_ok(c, fn->ANeuralNetworksModel_relaxComputationFloat32toFloat16(sb.model, true),
               "ANeuralNetworksModel_relaxComputationFloat32toFloat16"))
    goto done;
  if (!call_ok(c, fn->ANeuralNetworksModel_finish(sb.model), "ANeuralNetworksModel_finish"))
    goto done;
  memcpy(b->hash, sb.hash, sizeof b->hash);
  ANeuralNetworksModel *made = sb.model;
  if (!wick_nnapi_adopt(b, &sb)) {
    snprintf(c->why, c->why_size, "out of memory building %s", c->op);
    goto done;
  }
  ANeuralNetworksOperandType type = {ANEURALNETWORKS_MODEL, 0, NULL, 0.0f, 0};
  int32_t model_type = ANEURALNETWORKS_MODEL;
  wick_nnapi_hash(b, &model_type, sizeof model_type);
  if (!call_ok(c, fn->ANeuralNetworksModel_addOperand(b->model, &type),
               "ANeuralNetworksModel_addOperand"))
    goto done;
  int32_t operand = (int32_t)b->next_operand++;
  if (!call_ok(c, fn->ANeuralNetworksModel_setOperandValueFromModel(b->model, operand, made),
               "ANeuralNetworksModel_setOperandValueFromModel"))
    goto done;
  id = operand;
done:
  wick_nnapi_builder_free(&sb); /* what was adopted is no longer sb's */
  free(sb.operand_of);
  free(ins);
  free(outs);
  free(listed);
  return id;
}

/* ------------------------------------------------------------ the mapping */

bool nn_map_control_flow(map_ctx *c, bool is_while) {
  NEED_LEVEL(30, is_while ? "WHILE (NNAPI's WHILE)" : "IF (NNAPI's IF)");
  const wick_delegate_graph *g = c->g;
  if (wick_delegate_graph_node_subgraph_count(g, c->node) != 2)
    DECLINE("%s without its two subgraphs", c->op);
  size_t nin = wick_delegate_graph_node_input_count(g, c->node);
  size_t nout = wick_delegate_graph_node_output_count(g, c->node);
  size_t first = is_while ? 0 : 1; /* IF's input 0 is the condition */
  if (nin < first || nin - first > 20 || nout > 16 || nout == 0)
    DECLINE("%s with %zu inputs and %zu outputs (the delegate: up to 20 and 16)", c->op, nin, nout);
  if (!is_while) {
    const wick_tensor *cond = nn_tensor(c, nn_in_index(c, 0));
    if (cond == NULL || wick_tensor_dtype(cond) != WICK_DTYPE_BOOL || nn_rank(cond) > 1 ||
        (nn_rank(cond) == 1 && nn_dim(cond, 0) != 1))
      DECLINE("IF whose condition is not one bool of shape [] or [1] (NNAPI: [1])");
  }
  io_type ins[20], outs[16], cond_out;
  char inner[200] = "";
  for (size_t i = 0; i < nin - first; i++)
    if (!io_type_of(c, g, nn_in_index(c, first + i), "input", &ins[i])) return false;
  for (size_t i = 0; i < nout; i++)
    if (!io_type_of(c, g, nn_out_index(c, i), "output", &outs[i])) return false;
  const wick_delegate_graph *sub0 = wick_delegate_graph_node_subgraph(g, c->node, 0);
  const wick_delegate_graph *sub1 = wick_delegate_graph_node_subgraph(g, c->node, 1);
  if (is_while) {
    if (nin != nout) DECLINE("WHILE with %zu inputs and %zu outputs", nin, nout);
    for (size_t i = 0; i < nin; i++)
      if (!same_io(&ins[i], &outs[i]))
        DECLINE("WHILE whose output %zu differs from loop variable %zu (NNAPI: the same)", i, i);
    cond_out = (io_type){{ANEURALNETWORKS_TENSOR_BOOL8, 0, 0}, {1, 0, 0, 0}, 1};
    const wick_tensor *r =
        sub0 ? wick_delegate_graph_tensor(sub0, wick_delegate_graph_output(sub0, 0)) : NULL;
    if (r != NULL && nn_rank(r) > 1)
      DECLINE("WHILE whose cond returns a bool of rank %zu", nn_rank(r));
    if (!subgraph_maps(c, sub0, "cond", ins, nin, &cond_out, 1, inner, sizeof inner) ||
        !subgraph_maps(c, sub1, "body", ins, nin, outs, nout, inner, sizeof inner))
      return false;
  } else {
    if (!subgraph_maps(c, sub0, "then", ins, nin - 1, outs, nout, inner, sizeof inner) ||
        !subgraph_maps(c, sub1, "else", ins, nin - 1, outs, nout, inner, sizeof inner))
      return false;
  }
  NOTE("NNAPI %s with its %s as NNAPI models%s", is_while ? "WHILE" : "IF",
       is_while ? "cond and body" : "branches", inner);
  if (c->b == NULL) return true;
  int32_t ops[23], out_ops[16];
  size_t n = 0;
  if (!is_while) ops[n++] = nn_graph_operand(c, nn_in_index(c, 0));
  ops[n++] = subgraph_operand(c, sub0);
  if (ops[n - 1] < 0) return false;
  ops[n++] = subgraph_operand(c, sub1);
  if (ops[n - 1] < 0) return false;
  for (size_t i = first; i < nin; i++) ops[n++] = nn_graph_operand(c, nn_in_index(c, i));
  for (size_t i = 0; i < nout; i++) out_ops[i] = nn_graph_operand(c, nn_out_index(c, i));
  return nn_operation(c, is_while ? ANEURALNETWORKS_WHILE : ANEURALNETWORKS_IF, ops, n, out_ops,
                      nout);
}
