/*
 * resource_variables.c — VAR_HANDLE, ASSIGN_VARIABLE, READ_VARIABLE: the
 * operators TensorFlow's converter writes for tf.Variable state (streaming
 * models, counters, caches), on the interpreter's variable table
 * (src/core/variables.c).
 *
 *   VAR_HANDLE()               -> h   a RESOURCE tensor holding the id of the
 *                                     variable keyed by the options'
 *                                     (container, shared_name); the same key in
 *                                     any subgraph gives the same variable.
 *   ASSIGN_VARIABLE(h, value)  ->     stores a copy of value; the variable takes
 *                                     value's type and shape (a later assignment
 *                                     may change both, as in LiteRT).
 *   READ_VARIABLE(h)           -> y   copies the current value out; fails when
 *                                     the variable was never assigned.
 *
 * Prepare checks arity and types: a handle is one RESOURCE element that no
 * constant or variable tensor supplies (ids are the interpreter's, never the
 * file's). VAR_HANDLE
 * registers its key at prepare and folds to a constant id; ASSIGN_VARIABLE
 * and READ_VARIABLE are stateful (wick_op_mark_stateful): never folded, run at
 * every invoke. A READ_VARIABLE output whose shape the file declares static
 * (no -1 in shape_signature) is sized at prepare, so the nodes after it are
 * planned once; invoke then requires the variable to hold that shape. An
 * output with a dynamic shape is sized at invoke from the variable (a dynamic
 * node). The handle's id, the variable's existence, type and shape are run-time
 * values: they fail with WICK_ERR_INVALID_INPUT.
 *
 * Next: src/ops/control_flow.c (CALL_ONCE), src/core/variables.c.
 */
#include <stdio.h>
#include <string.h>

#include "format/schema.h"
#include "ops/op_common.h"

/* Input i: a resource handle (one RESOURCE element, not from a constant). */
static wick_status require_handle(const wick_op_ctx *ctx, size_t i, wick_tensor **out) {
  WICK_TRY(wick_require_input(ctx, i, out));
  const wick_tensor *h = *out;
  WICK_CHECK(ctx, h->type == WICK_DTYPE_RESOURCE,
             "input %zu must be a resource handle (from VAR_HANDLE), not %s", i,
             wick_dtype_name(h->type));
  WICK_CHECK(ctx, wick_tensor_elements(h) == 1,
             "input %zu (a resource handle) holds %lld elements, not 1", i,
             (long long)wick_tensor_elements(h));
  WICK_CHECK(ctx, h->info->data == NULL && !h->info->is_variable,
             "input %zu is a constant or variable resource tensor; handles must come from "
             "VAR_HANDLE",
             i);
  return WICK_OK;
}

/* A type a variable can hold: fixed-size values, not strings or handles. */
static bool value_type(wick_dtype t) { return wick_dtype_size(t) != 0 && t != WICK_DTYPE_RESOURCE; }

/* The variable a handle names (run-time: the id is data). */
static wick_status handle_variable(const wick_op_ctx *ctx, const wick_tensor *h,
                                   wick_variable **out) {
  int32_t id;
  memcpy(&id, h->data, sizeof id);
  *out = wick_variable_at(ctx, id);
  if (*out == NULL)
    return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT, "resource handle %d names no variable", id);
  return WICK_OK;
}

static void shape_text(int32_t rank, const int32_t *dims, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  n += (size_t)snprintf(buf + n, size - n, "[");
  for (int32_t d = 0; d < rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? ", %d" : "%d", dims[d]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

/* The variable input 0 names, which must hold a value of `type`. */
static wick_status assigned_variable(const wick_op_ctx *ctx, wick_dtype type,
                                     const wick_variable **out) {
  wick_variable *v;
  WICK_TRY(handle_variable(ctx, wick_op_input(ctx, 0), &v));
  if (!v->assigned)
    return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                        "variable \"%s\" is read before any assignment", v->shared_name);
  if (v->type != type)
    return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                        "variable \"%s\" holds %s, but the output is %s", v->shared_name,
                        wick_dtype_name(v->type), wick_dtype_name(type));
  *out = v;
  return WICK_OK;
}

/* ---------------------------------------------------------------- VAR_HANDLE */

static wick_status var_handle_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 0, 0, 1));
  wick_tensor *out = wick_op_output(ctx, 0);
  WICK_CHECK(ctx, out->type == WICK_DTYPE_RESOURCE, "output 0 must be a resource tensor, not %s",
             wick_dtype_name(out->type));
  int32_t *id = wick_op_alloc(ctx, sizeof *id);
  if (id == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  const wick_var_handle_params *p = &ctx->params->var;
  WICK_TRY(wick_variable_handle(ctx, p->container, p->container_len, p->shared_name,
                                p->shared_name_len, id));
  wick_op_set_data(ctx, id);
  /* One id, whatever shape the file declares (as LiteRT). */
  return wick_op_set_output(ctx, 0, WICK_DTYPE_RESOURCE, 0, NULL);
}

static wick_status var_handle_invoke(wick_op_ctx *ctx) {
  memcpy(wick_op_output(ctx, 0)->data, wick_op_data(ctx), sizeof(int32_t));
  return WICK_OK;
}

/* ---------------------------------------------------------------- ASSIGN_VARIABLE */

static wick_status assign_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 0));
  wick_tensor *h, *value;
  WICK_TRY(require_handle(ctx, 0, &h));
  WICK_TRY(wick_require_input(ctx, 1, &value));
  WICK_CHECK_SUPPORTED(ctx, value_type(value->type), "cannot store a %s tensor in a variable",
                       wick_dtype_name(value->type));
  wick_op_mark_stateful(ctx);
  return WICK_OK;
}

static wick_status assign_invoke(wick_op_ctx *ctx) {
  wick_variable *v;
  WICK_TRY(handle_variable(ctx, wick_op_input(ctx, 0), &v));
  return wick_variable_assign(ctx, v, wick_op_input(ctx, 1));
}

/* ---------------------------------------------------------------- READ_VARIABLE */

static wick_status read_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *h;
  WICK_TRY(require_handle(ctx, 0, &h));
  wick_tensor *out = wick_op_output(ctx, 0);
  WICK_CHECK_SUPPORTED(ctx, value_type(out->type), "cannot read a variable into a %s tensor",
                       wick_dtype_name(out->type));
  wick_op_mark_stateful(ctx);
  const wick_tensor_info *info = out->info;
  bool declared = true;
  for (int32_t d = 0; d < info->rank; d++) declared = declared && info->dims_signature[d] >= 0;
  if (declared) return wick_op_set_output(ctx, 0, out->type, info->rank, info->dims);
  if (!wick_op_in_invoke(ctx)) return WICK_STATUS_DEFER;
  const wick_variable *v;
  WICK_TRY(assigned_variable(ctx, out->type, &v));
  return wick_op_set_output(ctx, 0, v->type, v->rank, v->dims);
}

static wick_status read_invoke(wick_op_ctx *ctx) {
  wick_tensor *out = wick_op_output(ctx, 0);
  const wick_variable *v;
  WICK_TRY(assigned_variable(ctx, out->type, &v));
  bool same = v->rank == out->rank;
  for (int32_t d = 0; same && d < v->rank; d++) same = v->dims[d] == out->dims[d];
  if (!same) {
    char held[96], declared[96];
    shape_text(v->rank, v->dims, held, sizeof held);
    shape_text(out->rank, out->dims, declared, sizeof declared);
    return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                        "variable \"%s\" holds shape %s, but the file declares the output %s",
                        v->shared_name, held, declared);
  }
  /* (the output may live in the variable itself: plan.c's in-place cache update) */
  if (v->bytes && out->data != v->data) memcpy(out->data, v->data, v->bytes);
  return WICK_OK;
}

const wick_op_def wick_op_var_handle = {"VAR_HANDLE",       WICK_BUILTIN_VAR_HANDLE, 1,
                                        var_handle_prepare, var_handle_invoke,       0};
const wick_op_def wick_op_assign_variable = {
    "ASSIGN_VARIABLE", WICK_BUILTIN_ASSIGN_VARIABLE, 1, assign_prepare,
    assign_invoke,     WICK_OP_ASSIGNS_VARIABLE};
const wick_op_def wick_op_read_variable = {
    "READ_VARIABLE", WICK_BUILTIN_READ_VARIABLE, 1, read_prepare,
    read_invoke,     WICK_OP_READS_VARIABLE};
