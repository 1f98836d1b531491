/*
 * composite.c — STABLEHLO_COMPOSITE: runs the subgraph named by the
 * decomposition_subgraph_index option (litert-torch emits composites for
 * SDPA, RMSNorm, GELU, ...; the decomposition is their exact meaning).
 *
 * Prepare makes (or reuses) the node's child graph, gives its inputs the
 * shapes of this node's inputs, prepares it, and takes each output's shape
 * from the child's output tensor. Invoke copies the input bytes into the
 * child's inputs, runs the child, and copies its outputs back.
 *
 * Invariants: every child input is a plain activation (not a constant or a
 * variable) whose byte size equals this node's input; every child output has
 * storage after the child's prepare (outputs whose shape the child can only
 * learn at run time are refused); the reader has checked that subgraph calls
 * form a DAG within WICK_MAX_NESTING, and wick_graph_create_child checks the
 * depth again.
 *
 * Next: src/core/interpreter.c (child graphs), src/format/options.c.
 */
#include "format/schema.h"
#include "ops/op_common.h"

static wick_status composite_prepare(wick_op_ctx *ctx) {
  size_t ni = wick_op_num_inputs(ctx), no = wick_op_num_outputs(ctx);
  WICK_CHECK(ctx, ni <= WICK_MAX_OP_INPUTS, "has %zu inputs", ni);
  int32_t idx = ctx->params->subgraph[0];
  WICK_CHECK(ctx, idx >= 0, "has no decomposition subgraph");
  wick_tensor *stack_inputs[16];
  wick_tensor **inputs = stack_inputs;
  if (ni > 16) {
    inputs = wick_op_alloc(ctx, ni * sizeof *inputs);
    if (inputs == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (size_t i = 0; i < ni; i++) WICK_TRY(wick_require_input(ctx, i, &inputs[i]));

  /* A node prepared again at invoke keeps its child graph (re-prepared). */
  wick_graph *child = wick_op_child(ctx, 0);
  if (child != NULL && wick_graph_subgraph(child) != (uint32_t)idx) child = NULL;
  if (child == NULL) WICK_TRY(wick_graph_create_child(ctx, (uint32_t)idx, 0, &child));
  WICK_CHECK(ctx, wick_graph_num_outputs(child) == no, "has %zu outputs but subgraph %d returns %u",
             no, idx, wick_graph_num_outputs(child));
  for (uint32_t i = 0; i < wick_graph_num_inputs(child); i++) {
    const wick_tensor *t = wick_graph_input(child, i);
    WICK_CHECK(ctx, t->info->data == NULL && !t->info->is_variable,
               "input %u of subgraph %d is a constant or a variable", i, idx);
  }
  WICK_TRY(wick_graph_prepare_with_inputs(child, ctx, inputs, ni));
  for (size_t i = 0; i < ni; i++) {
    const wick_tensor *t = wick_graph_input(child, i);
    WICK_CHECK(ctx, t->bytes == inputs[i]->bytes,
               "input %zu: subgraph %d reads it as %zu bytes, the node passes %zu", i, idx,
               t->bytes, inputs[i]->bytes);
  }
  for (size_t i = 0; i < no; i++) {
    const wick_tensor *t = wick_graph_output(child, i);
    WICK_CHECK_SUPPORTED(ctx, t->data != NULL || t->bytes == 0,
                         "output %zu of subgraph %d has a shape known only at run time", i, idx);
    WICK_TRY(wick_op_set_output(ctx, i, t->type, t->rank, t->dims));
  }
  return WICK_OK;
}

static wick_status composite_invoke(wick_op_ctx *ctx) {
  wick_graph *child = wick_op_child(ctx, 0);
  size_t ni = wick_op_num_inputs(ctx), no = wick_op_num_outputs(ctx);
  for (size_t i = 0; i < ni; i++) {
    wick_tensor *src = wick_op_input(ctx, i), *dst = wick_graph_input(child, i);
    if (src->bytes) memcpy(dst->data, src->data, src->bytes);
  }
  WICK_TRY(wick_graph_invoke(child));
  for (size_t i = 0; i < no; i++) {
    wick_tensor *src = wick_graph_output(child, i), *dst = wick_op_output(ctx, i);
    if (src->bytes) memcpy(dst->data, src->data, src->bytes);
  }
  return WICK_OK;
}

const wick_op_def wick_op_stablehlo_composite = {
    "STABLEHLO_COMPOSITE", WICK_BUILTIN_STABLEHLO_COMPOSITE, 1, composite_prepare, composite_invoke,
    WICK_OP_RUNS_SUBGRAPHS};
