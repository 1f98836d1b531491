/*
 * control_flow.c — IF, WHILE and CALL_ONCE: operators that run other
 * subgraphs, on the child-graph machinery that STABLEHLO_COMPOSITE uses
 * (src/core/interpreter.c).
 *
 *   IF(cond, x...)  runs then_subgraph_index when cond (a bool holding one
 *                   value) is true, else else_subgraph_index, on x...; the
 *                   node's outputs are the branch's outputs.
 *   WHILE(x...)     state = x; while cond_subgraph(state) (one bool, shape []
 *                   or [1]): state = body_subgraph(state); outputs = state.
 *   CALL_ONCE()     runs init_subgraph_index (no inputs, no outputs) on the
 *                   interpreter's first invoke, and again only after
 *                   wick_interpreter_reset_variables. Whether it ran is kept
 *                   per init subgraph for the whole interpreter (as LiteRT's
 *                   initialization status), so two CALL_ONCE nodes naming one
 *                   init subgraph run it once. TensorFlow's converter writes it
 *                   to assign tf.Variable initial values (resource_variables.c).
 *
 * Prepare checks everything the file says: both subgraph indices exist (the
 * reader already refused cycles and nesting deeper than WICK_MAX_NESTING;
 * wick_graph_create_child checks depth and instance count again), WHILE's
 * cond and body differ, every subgraph takes as many inputs and returns as
 * many outputs as the node needs, with the same types, and reads them as
 * activations (no constant or variable subgraph inputs). Both branches, and
 * the cond and body, are prepared with the node's input shapes: a branch
 * that cannot run on them fails the model even if it is never taken.
 *
 * Shapes. IF outputs are sized at prepare when both branches give the same
 * static shapes; WHILE outputs when the body maps its input shapes to
 * themselves. Otherwise the node is dynamic: prepare returns
 * WICK_STATUS_DEFER, is called again at invoke, and invoke sizes the outputs
 * after running the subgraphs (wick_op_resize_output). A WHILE body may
 * change the shapes of the loop variables at every iteration, as in LiteRT;
 * the cond and body graphs are prepared again whenever the shapes they were
 * prepared for differ from the current state.
 *
 * WHILE checks the interpreter's cancel flag before every iteration: the
 * number of iterations is data and unbounded (as in LiteRT), and a loop whose
 * cond is a constant true over an empty body touches no other check.
 * Recursion is bounded by the nesting cap: a WHILE in a body is one more
 * graph level, never a call the file can repeat.
 *
 * Next: src/ops/composite.c, src/core/interpreter.c (child graphs).
 */
#include "format/schema.h"
#include "ops/op_common.h"

/* The node's inputs (IF: without the condition) and outputs, collected at
 * prepare for the child graphs' prepare and for invoke. */
typedef struct flow_data {
  size_t n_in, n_out;
  wick_tensor **in;
  wick_tensor **out;
} flow_data;

static wick_status flow_data_new(wick_op_ctx *ctx, size_t first_input, flow_data **out) {
  size_t ni = wick_op_num_inputs(ctx), no = wick_op_num_outputs(ctx);
  flow_data *d = wick_op_alloc(ctx, sizeof *d);
  wick_tensor **ptrs = wick_op_alloc(ctx, (ni + no + 1) * sizeof *ptrs);
  if (d == NULL || ptrs == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  d->n_in = ni - first_input;
  d->n_out = no;
  d->in = ptrs;
  d->out = ptrs + d->n_in;
  for (size_t i = 0; i < d->n_in; i++)
    WICK_TRY(wick_require_input(ctx, first_input + i, &d->in[i]));
  for (size_t i = 0; i < no; i++) {
    d->out[i] = wick_op_output(ctx, i);
    WICK_CHECK(ctx, d->out[i] != NULL, "output %zu is missing", i);
  }
  wick_op_set_data(ctx, d);
  *out = d;
  return WICK_OK;
}

/* The node's child graph in `slot` for subgraph `index` (kept when the node
 * is prepared again), checked to take `n_in` activation inputs and return
 * `n_out` outputs, and prepared with the shapes of `inputs`. */
static wick_status child_prepared(wick_op_ctx *ctx, int slot, int32_t index, const char *role,
                                  wick_tensor *const *inputs, size_t n_in, size_t n_out,
                                  wick_graph **out) {
  WICK_CHECK(ctx, index >= 0, "has no %s subgraph (index %d)", role, index);
  wick_graph *g = wick_op_child(ctx, slot);
  if (g == NULL || wick_graph_subgraph(g) != (uint32_t)index)
    WICK_TRY(wick_graph_create_child(ctx, (uint32_t)index, slot, &g));
  WICK_CHECK(ctx, wick_graph_num_inputs(g) == n_in,
             "%s subgraph %d takes %u inputs; the node passes %zu", role, index,
             wick_graph_num_inputs(g), n_in);
  WICK_CHECK(ctx, wick_graph_num_outputs(g) == n_out,
             "%s subgraph %d returns %u outputs; the node needs %zu", role, index,
             wick_graph_num_outputs(g), n_out);
  for (uint32_t i = 0; i < wick_graph_num_inputs(g); i++) {
    const wick_tensor *t = wick_graph_input(g, i);
    WICK_CHECK(ctx, t->info->data == NULL && !t->info->is_variable,
               "input %u of %s subgraph %d is a constant or a variable", i, role, index);
  }
  WICK_TRY(wick_graph_prepare_with_inputs(g, ctx, inputs, n_in));
  *out = g;
  return WICK_OK;
}

static wick_tensor *child_input(const wick_graph *g, size_t i) { return wick_graph_input(g, i); }

static wick_tensor *child_output(const wick_graph *g, size_t i) { return wick_graph_output(g, i); }

/* A child tensor whose shape is fixed by prepare (it has storage now). */
static bool has_static_shape(const wick_tensor *t) { return t->alloc != WICK_ALLOC_NONE; }

static bool same_shape(const wick_tensor *a, const wick_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

/* Copies src's bytes into dst, which must be the same size (shapes were
 * matched by prepare, or by wick_op_resize_output just before). */
static wick_status copy_tensor(const wick_op_ctx *ctx, wick_tensor *dst, const wick_tensor *src) {
  if (dst->bytes != src->bytes)
    return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                        "a subgraph produced %zu bytes for %s, which holds %zu", src->bytes,
                        dst->name, dst->bytes);
  if (src->bytes) memcpy(dst->data, src->data, src->bytes);
  return WICK_OK;
}

/* ---------------------------------------------------------------- IF */

static wick_status if_prepare(wick_op_ctx *ctx) {
  WICK_CHECK(ctx, wick_op_num_inputs(ctx) >= 1, "needs the condition as input 0");
  wick_tensor *cond;
  WICK_TRY(wick_require_input(ctx, 0, &cond));
  WICK_CHECK(ctx, cond->type == WICK_DTYPE_BOOL && wick_tensor_elements(cond) == 1,
             "the condition must be one bool, not %s with %lld elements",
             wick_dtype_name(cond->type), (long long)wick_tensor_elements(cond));
  flow_data *d;
  WICK_TRY(flow_data_new(ctx, 1, &d));
  wick_graph *branch[2];
  static const char *const role[2] = {"then", "else"};
  for (int b = 0; b < 2; b++) {
    WICK_TRY(child_prepared(ctx, b, ctx->params->subgraph[b], role[b], d->in, d->n_in, d->n_out,
                            &branch[b]));
    for (size_t i = 0; i < d->n_out; i++) {
      const wick_tensor *t = child_output(branch[b], i);
      WICK_CHECK(ctx, t->type == d->out[i]->type,
                 "output %zu is declared %s but the %s subgraph returns %s", i,
                 wick_dtype_name(d->out[i]->type), role[b], wick_dtype_name(t->type));
    }
  }
  bool fixed = true;
  for (size_t i = 0; i < d->n_out; i++) {
    const wick_tensor *a = child_output(branch[0], i), *b = child_output(branch[1], i);
    fixed = fixed && has_static_shape(a) && has_static_shape(b) && same_shape(a, b);
  }
  if (!fixed && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  /* Dynamic: these shapes are provisional; invoke sets the taken branch's. */
  for (size_t i = 0; i < d->n_out; i++) {
    const wick_tensor *t = child_output(branch[0], i);
    WICK_TRY(wick_op_set_output(ctx, i, t->type, t->rank, t->dims));
  }
  return WICK_OK;
}

static wick_status if_invoke(wick_op_ctx *ctx) {
  const flow_data *d = wick_op_data(ctx);
  const wick_tensor *cond = wick_op_input(ctx, 0);
  bool taken = *(const uint8_t *)cond->data != 0;
  wick_graph *g = wick_op_child(ctx, taken ? 0 : 1);
  for (size_t i = 0; i < d->n_in; i++) WICK_TRY(copy_tensor(ctx, child_input(g, i), d->in[i]));
  WICK_TRY(wick_graph_invoke(g));
  for (size_t i = 0; i < d->n_out; i++) {
    const wick_tensor *src = child_output(g, i);
    if (wick_op_dynamic(ctx)) WICK_TRY(wick_op_resize_output(ctx, i, src->rank, src->dims));
    WICK_TRY(copy_tensor(ctx, d->out[i], src));
  }
  return WICK_OK;
}

/* ---------------------------------------------------------------- WHILE */

/* The cond subgraph's result: one bool, shape [] or [1] (as LiteRT). */
static wick_status cond_value(const wick_op_ctx *ctx, const wick_graph *cond, bool *value) {
  const wick_tensor *t = child_output(cond, 0);
  WICK_CHECK(ctx, t->type == WICK_DTYPE_BOOL && (t->rank == 0 || (t->rank == 1 && t->dims[0] == 1)),
             "the cond subgraph must return one bool of shape [] or [1], not %s of rank %d",
             wick_dtype_name(t->type), t->rank);
  if (value) *value = *(const uint8_t *)t->data != 0;
  return WICK_OK;
}

static wick_status while_prepare(wick_op_ctx *ctx) {
  size_t n = wick_op_num_inputs(ctx);
  WICK_CHECK(ctx, wick_op_num_outputs(ctx) == n, "has %zu inputs but %zu outputs", n,
             wick_op_num_outputs(ctx));
  int32_t cond_index = ctx->params->subgraph[0], body_index = ctx->params->subgraph[1];
  WICK_CHECK(ctx, cond_index != body_index, "cond and body are the same subgraph %d", cond_index);
  flow_data *d;
  WICK_TRY(flow_data_new(ctx, 0, &d));
  for (size_t i = 0; i < n; i++)
    WICK_CHECK(ctx, d->out[i]->type == d->in[i]->type,
               "output %zu is declared %s but loop variable %zu is %s", i,
               wick_dtype_name(d->out[i]->type), i, wick_dtype_name(d->in[i]->type));
  wick_graph *cond, *body;
  WICK_TRY(child_prepared(ctx, 0, cond_index, "cond", d->in, n, 1, &cond));
  WICK_CHECK(ctx, child_output(cond, 0)->type == WICK_DTYPE_BOOL,
             "the cond subgraph returns %s, not bool",
             wick_dtype_name(child_output(cond, 0)->type));
  if (has_static_shape(child_output(cond, 0))) WICK_TRY(cond_value(ctx, cond, NULL));
  WICK_TRY(child_prepared(ctx, 1, body_index, "body", d->in, n, n, &body));
  bool fixed = true;
  for (size_t i = 0; i < n; i++) {
    const wick_tensor *t = child_output(body, i);
    WICK_CHECK(ctx, t->type == d->in[i]->type,
               "the body returns %s for loop variable %zu, which is %s", wick_dtype_name(t->type),
               i, wick_dtype_name(d->in[i]->type));
    fixed = fixed && has_static_shape(t) && same_shape(t, d->in[i]);
  }
  if (!fixed && !wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  /* Dynamic: provisional shapes; invoke sets the final state's. */
  for (size_t i = 0; i < n; i++)
    WICK_TRY(wick_op_set_output(ctx, i, d->in[i]->type, d->in[i]->rank, d->in[i]->dims));
  return WICK_OK;
}

/* Prepares `g` again when the state's shapes differ from its inputs'. */
static wick_status follow_state(wick_op_ctx *ctx, wick_graph *g, const flow_data *d) {
  for (size_t i = 0; i < d->n_out; i++) {
    if (!same_shape(child_input(g, i), d->out[i]))
      return wick_graph_prepare_with_inputs(g, ctx, d->out, d->n_out);
  }
  return WICK_OK;
}

static wick_status while_invoke(wick_op_ctx *ctx) {
  const flow_data *d = wick_op_data(ctx);
  wick_graph *cond = wick_op_child(ctx, 0), *body = wick_op_child(ctx, 1);
  bool dynamic = wick_op_dynamic(ctx);
  /* The state lives in the node's outputs. */
  for (size_t i = 0; i < d->n_out; i++) {
    if (dynamic) WICK_TRY(wick_op_resize_output(ctx, i, d->in[i]->rank, d->in[i]->dims));
    WICK_TRY(copy_tensor(ctx, d->out[i], d->in[i]));
  }
  for (uint64_t iteration = 0;; iteration++) {
    if (wick_op_cancelled(ctx))
      return wick_op_fail(ctx, WICK_ERR_CANCELLED, "invoke was cancelled in loop iteration %llu",
                          (unsigned long long)iteration);
    if (dynamic) WICK_TRY(follow_state(ctx, cond, d));
    for (size_t i = 0; i < d->n_out; i++)
      WICK_TRY(copy_tensor(ctx, child_input(cond, i), d->out[i]));
    WICK_TRY(wick_graph_invoke(cond));
    bool again = false;
    WICK_TRY(cond_value(ctx, cond, &again));
    if (!again) return WICK_OK;
    if (dynamic) WICK_TRY(follow_state(ctx, body, d));
    for (size_t i = 0; i < d->n_out; i++)
      WICK_TRY(copy_tensor(ctx, child_input(body, i), d->out[i]));
    WICK_TRY(wick_graph_invoke(body));
    for (size_t i = 0; i < d->n_out; i++) {
      const wick_tensor *src = child_output(body, i);
      if (dynamic) WICK_TRY(wick_op_resize_output(ctx, i, src->rank, src->dims));
      WICK_TRY(copy_tensor(ctx, d->out[i], src));
    }
  }
}

/* ---------------------------------------------------------------- CALL_ONCE */

static wick_status call_once_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 0, 0, 0));
  int32_t index = ctx->params->subgraph[0];
  /* The reader refused cycles already; a node running its own subgraph would be one. */
  WICK_CHECK(ctx, index < 0 || (uint32_t)index != wick_op_subgraph_index(ctx),
             "the init subgraph %d is the subgraph the node is in", index);
  wick_graph *g;
  WICK_TRY(child_prepared(ctx, 0, index, "init", NULL, 0, 0, &g));
  WICK_TRY(wick_call_once_reserve(ctx));
  wick_op_mark_stateful(ctx);
  return WICK_OK;
}

static wick_status call_once_invoke(wick_op_ctx *ctx) {
  wick_graph *g = wick_op_child(ctx, 0);
  if (wick_call_once_done(ctx, wick_graph_subgraph(g))) return WICK_OK;
  WICK_TRY(wick_graph_invoke(g));
  wick_call_once_mark(ctx, wick_graph_subgraph(g));
  return WICK_OK;
}

const wick_op_def wick_op_call_once = {
    "CALL_ONCE",       WICK_BUILTIN_CALL_ONCE, 1,
    call_once_prepare, call_once_invoke,       WICK_OP_RUNS_SUBGRAPHS};
const wick_op_def wick_op_if = {"IF",       WICK_BUILTIN_IF, 1,
                                if_prepare, if_invoke,       WICK_OP_RUNS_SUBGRAPHS};
const wick_op_def wick_op_while = {"WHILE",       WICK_BUILTIN_WHILE, 1,
                                   while_prepare, while_invoke,       WICK_OP_RUNS_SUBGRAPHS};
