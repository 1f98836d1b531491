/*
 * plan.c — the activation memory planner.
 *
 * Every tensor that needs storage for this prepare (not a constant, not
 * folded, not a variable, not dynamic) gets an offset in one arena. Times are
 * positions in the graph's execution order (wick_graph_node_at: the file's,
 * unless delegate partitions reordered it, src/core/delegate.c). A
 * tensor's lifetime runs from the node that writes it (graph inputs: before
 * the first node) to the last node that reads it (graph outputs, and graph
 * inputs too: to the end, so that inputs keep their values across invokes
 * as wick.h promises). Placement is greedy by size: largest first, each at
 * the lowest 64-byte-aligned offset that overlaps no already-placed tensor whose
 * lifetime intersects its own. This is the classic greedy-by-size planner;
 * it is O(n^2) in the tensor count, which stays cheap for real models.
 *
 * In place: an elementwise node (its record has WICK_OP_ELEMENTWISE) whose input x dies at that
 * node — no later reader, not a graph input or output — writes its output y
 * over x when both have the same shape and type. y joins x's storage group:
 * the group is placed once, as one span from the first member's producer to
 * the last member's last reader, so a chain such as ADD -> RELU -> MUL costs
 * one buffer, not three, and the node's writes go to lines its reads just
 * brought into cache. This is safe because every kernel of those ops reads
 * element i of x only to compute element i of y, and reads it before writing
 * it (vector loops, masked tails, chunks split across threads by index).
 * RESHAPE, SQUEEZE and EXPAND_DIMS (WICK_OP_ALIAS) join their input's group
 * whenever the bytes are the same (any shapes): their copy then has nothing
 * to do. DYNAMIC_UPDATE_SLICE (WICK_OP_UPDATES_INPUT0) writes over its operand (input 0
 * only, same rule as elementwise): its kernel skips the copy of the operand
 * and writes only the update's box — an LLM's KV cache update then costs the
 * new rows, not the whole cache. And when such a group starts at a
 * READ_VARIABLE and is assigned back to the same variable (bindable_group),
 * it lives in the variable's own storage instead of the arena: the read and
 * the write-back copy nothing. WICK_NO_IN_PLACE=1 turns it off, and so does anything that turns
 * fusion off (WICK_NO_FUSION=1, forced reference kernels).
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define ARENA_ALIGN 64

typedef struct span {
  uint32_t tensor;
  int32_t first, last;
  size_t size, offset;
} span;

static int by_size_desc(const void *a, const void *b) {
  const span *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return x->tensor < y->tensor ? -1 : (x->tensor > y->tensor);
}

/* Sort placed spans by offset for the gap search. */
static int by_offset(const void *a, const void *b) {
  const span *const *x = a, *const *y = b;
  if ((*x)->offset != (*y)->offset) return (*x)->offset < (*y)->offset ? -1 : 1;
  return 0;
}

WICK_INTERNAL wick_status wick_plan_arena(wick_graph *g, size_t *arena_size);

/* Does tensor t get arena storage in this plan? */
static bool planned(const wick_graph *g, const int32_t *first, uint32_t t) {
  const wick_tensor *x = &g->tensors[t];
  if (x->alloc != WICK_ALLOC_NONE || x->known || first[t] == INT32_MAX) return false;
  return first[t] < 0 || !g->nodes[wick_graph_node_at(g, (uint32_t)first[t])].dynamic;
}

static bool same_layout(const wick_tensor *a, const wick_tensor *b) {
  if (a->type != b->type || a->rank != b->rank || a->bytes != b->bytes) return false;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* group[t]: the root of the storage group t belongs to (itself when none) —
 * always the root, since a new member joins its input's root; the root's
 * lifetime grows to cover each member's. */
static void share_in_place(const wick_graph *g, int32_t *first, int32_t *last, uint32_t *group) {
  for (uint32_t oi = 0; oi < g->info->num_operators; oi++) { /* oi: a position */
    const wick_node *n = &g->nodes[wick_graph_node_at(g, oi)];
    const wick_node_fusion *f = &n->fusion;
    /* (a delegate's node: its delegate writes its outputs, perhaps before reading all of
     * its inputs) */
    if (n->fused || n->folded || n->dynamic || (f->redirected && !f->clamp) || f->activation ||
        f->residual || wick_node_runs_fused(n) || n->op->num_outputs != 1 || n->partition >= 0)
      continue;
    const bool alias = wick_op_has(n->def, WICK_OP_ALIAS);
    const bool update = wick_op_has(n->def, WICK_OP_UPDATES_INPUT0);
    if (!alias && !update && !wick_op_has(n->def, WICK_OP_ELEMENTWISE)) continue;
    const int32_t y = wick_node_output_index(n, 0);
    if (y < 0 || !planned(g, first, (uint32_t)y) || first[y] != (int32_t)oi) continue;
    for (uint32_t k = 0; k < (alias || update ? 1u : 2u) && k < n->op->num_inputs; k++) {
      const int32_t x = wick_node_input_index(n, k);
      const wick_tensor *tx = &g->tensors[x >= 0 ? x : 0], *ty = &g->tensors[y];
      const bool fits =
          alias ? tx->type == ty->type && tx->bytes == ty->bytes : same_layout(tx, ty);
      if (x < 0 || x == y || !planned(g, first, (uint32_t)x) || first[x] < 0 ||
          last[x] != (int32_t)oi || !fits)
        continue;
      const uint32_t root = group[x];
      group[y] = root;
      if (last[root] < last[y]) last[root] = last[y];
      break;
    }
  }
}

/* The variable id a resource-handle input holds when it is known at prepare (a folded
 * VAR_HANDLE), else -1. */
static int32_t known_handle(const wick_graph *g, int32_t t) {
  if (t < 0 || !g->tensors[t].known || g->tensors[t].data == NULL) return -1;
  int32_t id;
  memcpy(&id, g->tensors[t].data, sizeof id);
  return id;
}

/* A cache update in place in its variable. The group rooted at the output x of
 * READ_VARIABLE node r (h) may live in the variable's own storage, so that
 * neither the read nor the write-back copies it, when the copy semantics
 * cannot tell: every other member is written by an update-in-place op
 * (DYNAMIC_UPDATE_SLICE) or is an alias; exactly one ASSIGN_VARIABLE(h, m)
 * with m in the group comes after every such writer; nothing else in the
 * graph reads or writes h, runs subgraphs (control flow, CALL_ONCE, a
 * composite) after r; no member is a graph input or output. The read and the
 * assignment then find their data already in place (resource_variables.c,
 * variables.c). The ops are known by their records' flags: WICK_OP_READS_VARIABLE,
 * WICK_OP_ASSIGNS_VARIABLE, WICK_OP_RUNS_SUBGRAPHS, WICK_OP_UPDATES_INPUT0,
 * WICK_OP_ALIAS. */
static void *bindable_group(wick_graph *g, uint32_t r, const uint32_t *group) {
  const wick_node *rn = &g->nodes[wick_graph_node_at(g, r)]; /* r, oi: positions */
  const int32_t x = wick_node_output_index(rn, 0);
  const int32_t id = known_handle(g, wick_node_input_index(rn, 0));
  if (x < 0 || id < 0 || group[x] != (uint32_t)x) return NULL;
  int32_t last_writer = (int32_t)r, assign = -1;
  for (uint32_t oi = 0; oi < g->info->num_operators; oi++) {
    const wick_node *n = &g->nodes[wick_graph_node_at(g, oi)];
    const bool reads = wick_op_has(n->def, WICK_OP_READS_VARIABLE);
    if (oi == r || n->folded) continue;
    if (reads || wick_op_has(n->def, WICK_OP_ASSIGNS_VARIABLE)) {
      if (known_handle(g, wick_node_input_index(n, 0)) != id) {
        if (known_handle(g, wick_node_input_index(n, 0)) < 0) return NULL; /* unknown: any */
        continue;
      }
      if (reads || assign >= 0 || oi < r) return NULL;
      const int32_t value = wick_node_input_index(n, 1);
      if (value < 0 || group[value] != (uint32_t)x) return NULL;
      assign = (int32_t)oi;
      continue;
    }
    if (oi > r && wick_op_has(n->def, WICK_OP_RUNS_SUBGRAPHS)) return NULL;
    for (uint32_t k = 0; k < n->op->num_outputs; k++) {
      const int32_t t = wick_node_output_index(n, k);
      if (t < 0 || group[t] != (uint32_t)x) continue;
      if (n->fused || n->partition >= 0 ||
          !(wick_op_has(n->def, WICK_OP_UPDATES_INPUT0) || wick_op_has(n->def, WICK_OP_ALIAS)))
        return NULL;
      if (wick_op_has(n->def, WICK_OP_UPDATES_INPUT0)) last_writer = (int32_t)oi;
    }
  }
  if (assign < last_writer) return NULL;
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (group[g->inputs[i]] == (uint32_t)x) return NULL;
  for (uint32_t i = 0; i < g->num_outputs; i++)
    if (group[g->outputs[i]] == (uint32_t)x) return NULL;
  return wick_variable_bind(g, id, &g->tensors[x]);
}

wick_status wick_plan_arena(wick_graph *g, size_t *arena_size) {
  wick_mem *mem = &g->interp->mem;
  uint32_t nt = g->info->num_tensors, no = g->info->num_operators;
  int32_t *first = wick_mem_alloc(mem, (nt ? nt : 1) * sizeof(int32_t));
  int32_t *last = wick_mem_alloc(mem, (nt ? nt : 1) * sizeof(int32_t));
  span *spans = wick_mem_alloc(mem, (nt ? nt : 1) * sizeof(span));
  /* placed[0, num_placed) and, after it, scratch room for the conflict list */
  span **placed = wick_mem_alloc(mem, (2 * (size_t)nt + 1) * sizeof(span *));
  uint32_t *group = wick_mem_alloc(mem, (nt ? nt : 1) * sizeof(uint32_t));
  void **bound = wick_mem_calloc(mem, nt ? nt : 1, sizeof(void *)); /* root -> variable data */
  wick_status st = WICK_OK;
  if (!first || !last || !spans || !placed || !group || !bound) {
    st = WICK_ERR_OUT_OF_MEMORY;
    goto done;
  }
  for (uint32_t i = 0; i < nt; i++) {
    first[i] = INT32_MAX;
    last[i] = -1;
  }
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    first[g->inputs[i]] = -1;
    last[g->inputs[i]] = -1;
  }
  /* Times are positions in the execution order (the file's, unless delegate partitions
   * changed it). */
  for (uint32_t oi = 0; oi < no; oi++) {
    const wick_node *node = &g->nodes[wick_graph_node_at(g, oi)];
    const wick_operator_info *op = node->op;
    /* A fused node writes nothing (its producer writes the redirected
     * output, or a folded PAD's output is never materialized); its reads
     * still count at its own position, which is after the producer's:
     * conservative for the producer's epilogue inputs. */
    uint32_t num_out = node->fused ? 0 : op->num_outputs;
    for (uint32_t k = 0; k < num_out; k++) {
      int32_t t = wick_node_output_index(node, k);
      if (first[t] > (int32_t)oi) first[t] = (int32_t)oi;
    }
    for (uint32_t k = 0; k < op->num_inputs; k++) {
      int32_t t = wick_node_input_index(node, k); /* a folded PAD's reader reads its input */
      if (t >= 0 && last[t] < (int32_t)oi) last[t] = (int32_t)oi;
    }
    for (uint32_t k = 0; k < num_out; k++) {
      int32_t t = wick_node_output_index(node, k);
      if (last[t] < (int32_t)oi) last[t] = (int32_t)oi;
    }
  }
  for (uint32_t i = 0; i < g->num_outputs; i++) last[g->outputs[i]] = (int32_t)no;
  for (uint32_t i = 0; i < g->num_inputs; i++) last[g->inputs[i]] = (int32_t)no;

  for (uint32_t i = 0; i < nt; i++) group[i] = i;
  if (!g->interp->no_in_place) {
    share_in_place(g, first, last, group);
    for (uint32_t oi = 0; oi < no; oi++) {
      const wick_node *n = &g->nodes[wick_graph_node_at(g, oi)];
      if (!wick_op_has(n->def, WICK_OP_READS_VARIABLE) || n->folded || n->dynamic) continue;
      const int32_t x = wick_node_output_index(n, 0);
      if (x >= 0 && planned(g, first, (uint32_t)x)) bound[x] = bindable_group(g, oi, group);
    }
  }

  uint32_t n = 0;
  for (uint32_t i = 0; i < nt; i++) {
    /* never written (unused), not in the arena, stored in its group's root, or in a
     * variable */
    if (!planned(g, first, i) || group[i] != i || bound[i] != NULL) continue;
    const wick_tensor *t = &g->tensors[i];
    spans[n].tensor = i;
    spans[n].first = first[i];
    spans[n].last = last[i] < first[i] ? first[i] : last[i];
    spans[n].size = wick_align_up(t->bytes ? t->bytes : 1, ARENA_ALIGN);
    spans[n].offset = 0;
    n++;
  }
  qsort(spans, n, sizeof(span), by_size_desc);

  size_t total = 0;
  uint32_t num_placed = 0;
  for (uint32_t i = 0; i < n; i++) {
    span *s = &spans[i];
    /* Collect placed spans whose lifetimes intersect, sorted by offset. */
    uint32_t m = 0;
    span **conflicts = placed + num_placed;
    for (uint32_t j = 0; j < num_placed; j++) {
      span *p = placed[j];
      if (p->first <= s->last && s->first <= p->last) conflicts[m++] = p;
    }
    qsort(conflicts, m, sizeof(span *), by_offset);
    size_t offset = 0;
    for (uint32_t j = 0; j < m; j++) {
      if (conflicts[j]->offset >= offset + s->size) break;
      size_t end = conflicts[j]->offset + conflicts[j]->size;
      if (end > offset) offset = end;
    }
    s->offset = offset;
    if (offset + s->size > total) total = offset + s->size;
    placed[num_placed++] = s;
  }

  g->arena = NULL;
  if (total > 0) {
    g->arena = wick_mem_alloc(mem, total);
    if (g->arena == NULL) {
      st = WICK_ERR_OUT_OF_MEMORY;
      goto done;
    }
  }
  g->arena_size = total;
  for (uint32_t i = 0; i < n; i++) {
    wick_tensor *t = &g->tensors[spans[i].tensor];
    t->data = g->arena + spans[i].offset;
    t->arena_offset = spans[i].offset;
  }
  for (uint32_t i = 0; i < nt; i++) {
    if (!planned(g, first, i)) continue;
    wick_tensor *t = &g->tensors[i];
    const wick_tensor *root = &g->tensors[group[i]];
    t->data = bound[group[i]] != NULL ? bound[group[i]] : root->data;
    t->arena_offset = root->arena_offset;
    t->alloc = WICK_ALLOC_ARENA;
  }
  *arena_size = total;
done:
  if (st == WICK_ERR_OUT_OF_MEMORY)
    wick_format_message(g->interp->error, sizeof g->interp->error,
                        "out of memory planning the activation arena");
  wick_mem_free(mem, first);
  wick_mem_free(mem, last);
  wick_mem_free(mem, spans);
  wick_mem_free(mem, placed);
  wick_mem_free(mem, group);
  wick_mem_free(mem, bound);
  return st;
}
