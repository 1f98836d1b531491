/*
 * variables.c — an interpreter's resource variables and CALL_ONCE state.
 *
 * TensorFlow's converter turns tf.Variable state into VAR_HANDLE (a handle
 * named by container and shared_name), ASSIGN_VARIABLE and READ_VARIABLE,
 * plus a CALL_ONCE that runs an init subgraph assigning the initial values
 * (src/ops/resource_variables.c, src/ops/control_flow.c). As in LiteRT, the
 * variables belong to the interpreter, not to a subgraph: every graph that
 * names the same key reaches the same variable, and values persist across
 * invokes until wick_interpreter_reset_variables. An interpreter created with
 * options.share_variables_with (its state_owner) keeps no table of its own: every
 * function here works on the owner's table, CALL_ONCE flags and memory, so the
 * signatures of one model run by several interpreters share their state.
 *
 * The table maps keys to ids (indices into `items`) through an
 * open-addressing hash, so a file with a million VAR_HANDLE nodes costs a
 * million lookups, not a million scans. Values are wick_mem blocks: they
 * count against the interpreter's memory cap.
 *
 * Next: src/ops/resource_variables.c (the operators), interpreter.c (reset).
 */
#include <string.h>

#include "core/internal.h"

static uint64_t key_hash(const char *c, size_t c_len, const char *n, size_t n_len) {
  return wick_hash64(n, n_len, wick_hash64(c, c_len, 0x76617269u) ^ c_len);
}

static bool key_equal(const wick_variable *v, const char *c, size_t c_len, const char *n,
                      size_t n_len) {
  return v->container_len == c_len && v->shared_name_len == n_len &&
         memcmp(v->container, c, c_len) == 0 && memcmp(v->shared_name, n, n_len) == 0;
}

/* Rebuilds the hash with `num_slots` slots (a power of two > 2 * count). */
/* The interpreter holding `it`'s variables: its state owner, or itself. */
static wick_interpreter *state_of(wick_interpreter *it) {
  return it->state_owner != NULL ? it->state_owner : it;
}

static bool rehash(wick_interpreter *it, uint32_t num_slots) {
  wick_variables *t = &it->variables;
  uint32_t *slots = wick_mem_calloc(&it->mem, num_slots, sizeof *slots);
  if (slots == NULL) return false;
  for (uint32_t id = 0; id < t->count; id++) {
    const wick_variable *v = &t->items[id];
    uint64_t h = key_hash(v->container, v->container_len, v->shared_name, v->shared_name_len);
    uint32_t s = (uint32_t)h & (num_slots - 1);
    while (slots[s] != 0) s = (s + 1) & (num_slots - 1);
    slots[s] = id + 1;
  }
  wick_mem_free(&it->mem, t->slots);
  t->slots = slots;
  t->num_slots = num_slots;
  return true;
}

wick_status wick_variable_handle(const wick_op_ctx *ctx, const char *container,
                                 size_t container_len, const char *shared_name,
                                 size_t shared_name_len, int32_t *id_out) {
  wick_interpreter *it = state_of(ctx->graph->interp);
  wick_variables *t = &it->variables;
  uint64_t h = key_hash(container, container_len, shared_name, shared_name_len);
  if (t->num_slots != 0) {
    for (uint32_t s = (uint32_t)h & (t->num_slots - 1);; s = (s + 1) & (t->num_slots - 1)) {
      uint32_t id = t->slots[s];
      if (id == 0) break;
      if (key_equal(&t->items[id - 1], container, container_len, shared_name, shared_name_len)) {
        *id_out = (int32_t)(id - 1);
        return WICK_OK;
      }
    }
  }
  if (t->count >= WICK_MAX_VARIABLES)
    return wick_op_fail(ctx, WICK_ERR_UNSUPPORTED_OP, "the model names more than %u variables",
                        WICK_MAX_VARIABLES);
  if (t->count == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 8;
    wick_variable *items = wick_mem_calloc(&it->mem, cap, sizeof *items);
    if (items == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
    if (t->count) memcpy(items, t->items, t->count * sizeof *items);
    wick_mem_free(&it->mem, t->items);
    t->items = items;
    t->cap = cap;
  }
  /* Keep the hash at most half full (count + 1 after this insertion). */
  if ((uint64_t)(t->count + 1) * 2 >= t->num_slots &&
      !rehash(it, t->num_slots ? t->num_slots * 2 : 16))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  uint32_t id = t->count++;
  wick_variable *v = &t->items[id];
  memset(v, 0, sizeof *v);
  v->container = container;
  v->container_len = container_len;
  v->shared_name = shared_name;
  v->shared_name_len = shared_name_len;
  uint32_t s = (uint32_t)h & (t->num_slots - 1);
  while (t->slots[s] != 0) s = (s + 1) & (t->num_slots - 1);
  t->slots[s] = id + 1;
  *id_out = (int32_t)id;
  return WICK_OK;
}

wick_variable *wick_variable_at(const wick_op_ctx *ctx, int32_t id) {
  wick_variables *t = &state_of(ctx->graph->interp)->variables;
  return id >= 0 && (uint32_t)id < t->count ? &t->items[id] : NULL;
}

void *wick_variable_bind(wick_graph *g, int32_t id, const wick_tensor *like) {
  wick_interpreter *it = state_of(g->interp);
  wick_variables *t = &it->variables;
  if (id < 0 || (uint32_t)id >= t->count) return NULL;
  wick_variable *v = &t->items[id];
  if (v->data == NULL) {
    v->data = wick_mem_alloc(&it->mem, like->bytes ? like->bytes : 1);
    if (v->data == NULL) return NULL;
    v->bytes = like->bytes;
    v->type = like->type;
    v->rank = like->rank;
    memcpy(v->dims, like->dims, sizeof v->dims);
    v->assigned = false;
  } else if (v->bytes != like->bytes || v->type != like->type) {
    return NULL;
  }
  v->bound = true;
  return v->data;
}

wick_status wick_variable_assign(const wick_op_ctx *ctx, wick_variable *v,
                                 const wick_tensor *value) {
  wick_mem *mem = &state_of(ctx->graph->interp)->mem;
  if (v->bound && v->bytes != value->bytes)
    return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                        "variable \"%s\" is updated in place by the model's readers: it keeps "
                        "its %zu bytes, not %zu",
                        v->shared_name, v->bytes, value->bytes);
  if (v->data == NULL || v->bytes != value->bytes) {
    /* The new block first: on failure the old value stays. */
    void *p = wick_mem_alloc(mem, value->bytes ? value->bytes : 1);
    if (p == NULL)
      return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY,
                          "out of memory storing %zu bytes in variable \"%s\"", value->bytes,
                          v->shared_name);
    wick_mem_free(mem, v->data);
    v->data = p;
  }
  /* (value already in place: a bound variable's storage group assigned back) */
  if (value->bytes && value->data != v->data) memcpy(v->data, value->data, value->bytes);
  v->bytes = value->bytes;
  v->type = value->type;
  v->rank = value->rank;
  memcpy(v->dims, value->dims, sizeof v->dims);
  v->assigned = true;
  return WICK_OK;
}

/* Every value dropped; bound variables keep their block (plans point at it) unless `all`. */
static void clear_values(wick_interpreter *it, bool all) {
  wick_variables *t = &it->variables;
  for (uint32_t id = 0; id < t->count; id++) {
    wick_variable *v = &t->items[id];
    v->assigned = false;
    if (v->bound && !all) continue;
    wick_mem_free(&it->mem, v->data);
    v->data = NULL;
    v->bytes = 0;
    v->bound = false;
  }
}

void wick_variables_clear(wick_interpreter *it) {
  it = state_of(it);
  clear_values(it, false);
  if (it->init_done) memset(it->init_done, 0, it->model->num_subgraphs);
}

void wick_variables_destroy(wick_interpreter *it) {
  if (it->state_owner != NULL) return; /* the owner's, freed with it */
  clear_values(it, true);
  wick_variables *t = &it->variables;
  wick_mem_free(&it->mem, t->items);
  wick_mem_free(&it->mem, t->slots);
  memset(t, 0, sizeof *t);
  wick_mem_free(&it->mem, it->init_done);
  it->init_done = NULL;
}

wick_status wick_call_once_reserve(const wick_op_ctx *ctx) {
  wick_interpreter *it = state_of(ctx->graph->interp);
  if (it->init_done != NULL) return WICK_OK;
  it->init_done = wick_mem_calloc(&it->mem, it->model->num_subgraphs, 1);
  if (it->init_done == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  return WICK_OK;
}

bool wick_call_once_done(const wick_op_ctx *ctx, uint32_t subgraph) {
  const wick_interpreter *it = state_of(ctx->graph->interp);
  return it->init_done != NULL && subgraph < it->model->num_subgraphs && it->init_done[subgraph];
}

void wick_call_once_mark(const wick_op_ctx *ctx, uint32_t subgraph) {
  wick_interpreter *it = state_of(ctx->graph->interp);
  if (it->init_done != NULL && subgraph < it->model->num_subgraphs) it->init_done[subgraph] = 1;
}
