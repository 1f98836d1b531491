/*
 * delegate.c — the delegate mechanism of the core: which nodes go to which
 * delegate, the partitions and the execution order they need, preparing and
 * invoking partitions with automatic CPU fallback, the delegates' read-only
 * view of the graph, and the delegation report (wick.h, "delegates";
 * docs/delegates.md).
 *
 * Partitioning (wick_graph_partition), after every node was prepared for the
 * CPU. One sweep visits the nodes in file order, which is topological, and
 * gives each offered node to the first delegate, in priority order, that
 * accepts it: it joins one of that delegate's partitions when that keeps the
 * graph of "units" (each partition contracted to one node, every other node
 * on its own) acyclic, else it opens a new partition. All partitions, of all
 * delegates, grow in that one sweep, so every join is checked against what
 * every partition depends on. The test is on bit sets (at most
 * WICK_MAX_PARTITIONS = 64 partitions per graph):
 *
 *   dep[v]   the partitions node v depends on (through any path), excluding its own;
 *   pdep[p]  the partitions partition p depends on as a unit, kept transitively closed.
 *
 * The partitions some node u depends on, seen through contraction, are
 * closure(dep[u] | own(u)) = that set plus pdep of each of its members. Node v
 * may join p when no predecessor u outside p has p in that set: a path
 * p -> ... -> u -> v would leave p and come back. Joining adds those sets to
 * pdep[p] and to every partition that depends on p. Since no partition ever
 * depends on itself, the unit graph stays a DAG, and a topological order of
 * it (Kahn's algorithm, smallest file index first) with each partition's
 * nodes in file order is the execution order: every partition's nodes are
 * consecutive, every node still runs after what it reads. A partition below
 * its delegate's minimum size is dissolved and its nodes banned from that
 * delegate; the sweep then runs again from scratch, so a later delegate may
 * take them (at most 8 sweeps; after that small partitions just go to the
 * CPU: removing nodes never creates a cycle). Each delegate is asked about a
 * node once. When the 64 slots ran out, a plan of the 64 largest
 * partitions is tried (prefer_larger_partitions) and kept when it puts more
 * nodes on delegates.
 *
 * Predecessors are the producers of a node's inputs, plus, for a node that
 * keeps state across invokes (resource variables, CALL_ONCE, variable
 * tensors, control flow), the previous such node: their order is kept
 * although no tensor connects them. Such nodes are never offered.
 *
 * Fallback: every node keeps its CPU preparation (kernels, packed weights,
 * arena storage), so a partition that fails to prepare or to invoke runs its
 * nodes on the CPU in the same place of the order. Graph fusion (fuse.c)
 * leaves delegated nodes alone and PAD folding is off with delegates, so the
 * CPU form of a partition is exactly its nodes.
 *
 * The report's accessors, and its rows for the operators inside subgraphs,
 * are in delegation_report.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "format/flexbuffer.h"
#include "format/schema.h"

/* sizeof(wick_delegate) in its first version (through destroy). Fields appended later must be
 * read only when a delegate's struct_size covers them. */
#define DELEGATE_FIRST_SIZE (offsetof(wick_delegate, destroy) + sizeof(void (*)(wick_delegate *)))

void wick_interp_log(wick_interpreter *it, wick_log_level level, const char *fmt, ...) {
  if (it->options.log == NULL) return;
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(message, sizeof message, fmt, ap);
  va_end(ap);
  it->options.log(it->options.log_user, level, message);
}

wick_status wick_delegates_adopt(wick_interpreter *it, const wick_interpreter_options *o) {
  it->delegates = NULL;
  it->num_delegates = 0;
  if (o->num_delegates == 0) return WICK_OK;
  if (o->delegates == NULL || o->num_delegates > WICK_MAX_DELEGATES) {
    wick_format_message(it->error, sizeof it->error,
                        o->delegates == NULL ? "options.delegates is NULL but num_delegates is %zu"
                                             : "options.num_delegates is %zu, more than %d",
                        o->num_delegates, WICK_MAX_DELEGATES);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < o->num_delegates; i++) {
    const wick_delegate *d = o->delegates[i];
    const char *problem = NULL;
    if (d == NULL)
      problem = "is NULL";
    else if (d->struct_size < DELEGATE_FIRST_SIZE)
      problem = "has a struct_size smaller than the first wick_delegate";
    else if (d->name == NULL || d->name[0] == 0)
      problem = "has no name";
    else if (!d->supports_node || !d->prepare_partition || !d->invoke_partition ||
             !d->free_partition)
      problem =
          "lacks a callback (supports_node, prepare_partition, invoke_partition and "
          "free_partition are required)";
    if (problem) {
      wick_format_message(it->error, sizeof it->error, "options.delegates[%zu] %s", i, problem);
      return WICK_ERR_INVALID_ARGUMENT;
    }
  }
  it->delegates = wick_mem_alloc(&it->mem, o->num_delegates * sizeof(wick_delegate *));
  if (it->delegates == NULL) {
    wick_format_message(it->error, sizeof it->error, "out of memory");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  memcpy(it->delegates, o->delegates, o->num_delegates * sizeof(wick_delegate *));
  it->num_delegates = o->num_delegates;
  return WICK_OK;
}

/* ---------------------------------------------------------------- partitioning */

/* An IF or WHILE: a delegate may take it whole, reading its subgraphs
 * (wick_delegate_graph_node_subgraph). */
static bool control_flow(const wick_node *n) {
  return (n->op->builtin == WICK_BUILTIN_IF || n->op->builtin == WICK_BUILTIN_WHILE) &&
         n->child[0] != NULL && n->child[1] != NULL;
}

const char *wick_node_not_offered(const wick_graph *g, const wick_node *n) {
  if (n->folded) return "computed at prepare";
  if (n->dynamic) return "output shape known only at invoke";
  if (n->stateful) return "keeps state across invokes";
  if (n->child[0] != NULL && !control_flow(n)) return "runs subgraphs (they stay on the CPU)";
  for (uint32_t k = 0; k < n->op->num_inputs; k++)
    if (n->op->inputs[k] >= 0 && g->tensors[n->op->inputs[k]].info->is_variable)
      return "keeps state across invokes (variable tensor)";
  for (uint32_t k = 0; k < n->op->num_outputs; k++)
    if (g->tensors[n->op->outputs[k]].info->is_variable)
      return "keeps state across invokes (variable tensor)";
  return NULL;
}

/* "[2, 3]" */
static void shape_text(const wick_tensor *t, char *out, size_t size) {
  size_t at = 0;
  out[0] = 0;
  at += (size_t)snprintf(out, size, "[");
  for (int32_t d = 0; d < t->rank && at < size; d++)
    at += (size_t)snprintf(out + at, size - at, "%s%d", d ? ", " : "", (int)t->dims[d]);
  if (at < size) snprintf(out + at, size - at, "]");
}

/* Why a dynamic IF or WHILE knows its output shape only at invoke, from its prepared
 * subgraphs (control_flow.c sizes the outputs at prepare when both branches give the same
 * static shapes, or when the body maps the loop variables' shapes to themselves). */
static void dynamic_control_flow_why(const wick_node *n, char *out, size_t size) {
  const char *base = "output shape known only at invoke";
  bool is_if = n->op->builtin == WICK_BUILTIN_IF;
  const wick_graph *a = n->child[0], *b = n->child[1];
  if (a == NULL || b == NULL || !a->prepared || !b->prepared) {
    wick_format_message(out, size, "%s (its inputs' shapes are known only at invoke)", base);
    return;
  }
  const wick_graph *body = b;
  for (uint32_t i = 0; i < n->op->num_outputs; i++) {
    if (is_if) {
      if (i >= a->num_outputs || i >= b->num_outputs) break;
      const wick_tensor *ta = &a->tensors[a->outputs[i]], *tb = &b->tensors[b->outputs[i]];
      for (int k = 0; k < 2; k++) {
        const wick_tensor *t = k ? tb : ta;
        if (t->alloc == WICK_ALLOC_NONE) {
          wick_format_message(out, size,
                              "%s (the %s subgraph's output %u has a shape known only at invoke)",
                              base, k ? "else" : "then", i);
          return;
        }
      }
      bool same = ta->rank == tb->rank;
      for (int32_t d = 0; same && d < ta->rank; d++) same = ta->dims[d] == tb->dims[d];
      if (!same) {
        char sa[96], sb[96];
        shape_text(ta, sa, sizeof sa);
        shape_text(tb, sb, sizeof sb);
        wick_format_message(out, size,
                            "%s (the then and else subgraphs give output %u different shapes, "
                            "%s and %s)",
                            base, i, sa, sb);
        return;
      }
    } else {
      if (i >= body->num_outputs || i >= body->num_inputs) break;
      const wick_tensor *in = &body->tensors[body->inputs[i]];
      const wick_tensor *t = &body->tensors[body->outputs[i]];
      if (t->alloc == WICK_ALLOC_NONE) {
        wick_format_message(out, size, "%s (the body's output %u has a shape known only at invoke)",
                            base, i);
        return;
      }
      bool same = t->rank == in->rank;
      for (int32_t d = 0; same && d < t->rank; d++) same = t->dims[d] == in->dims[d];
      if (!same) {
        char si[96], so[96];
        shape_text(in, si, sizeof si);
        shape_text(t, so, sizeof so);
        wick_format_message(out, size, "%s (the body changes loop variable %u from %s to %s)", base,
                            i, si, so);
        return;
      }
    }
  }
  wick_format_message(out, size, "%s", base);
}

const char *wick_node_offer_why(wick_graph *owner, const wick_graph *g, const wick_node *n) {
  const char *why = wick_node_not_offered(g, n);
  if (why == NULL || n->folded || !n->dynamic ||
      (n->op->builtin != WICK_BUILTIN_IF && n->op->builtin != WICK_BUILTIN_WHILE))
    return why;
  char detail[320];
  dynamic_control_flow_why(n, detail, sizeof detail);
  size_t len = strlen(detail) + 1;
  char *kept = wick_graph_alloc(owner, len, false);
  if (kept == NULL) return why; /* the short form */
  memcpy(kept, detail, len);
  return kept;
}

/* A node whose place in the order matters beyond its tensors (see the top): it keeps
 * state, runs subgraphs (which may), or is prepared at invoke. */
static bool ordered(const wick_graph *g, const wick_node *n) {
  if (n->folded) return false;
  return n->stateful || n->child[0] != NULL || n->dynamic || wick_node_not_offered(g, n) != NULL;
}

typedef struct partitioner {
  wick_graph *g;
  uint32_t n;
  int32_t *producer;     /* per tensor: the node writing it, -1 */
  int32_t *prev_ordered; /* per node: the previous ordered node when it is ordered, else -1 */
  uint64_t *dep;         /* per node */
  int32_t *part;         /* per node: partition slot, -1 */
  uint8_t *asked, *accepted, *banned; /* per node: bit di for delegate di */
  bool *capped;                       /* per node: accepted, but no partition slot was left */
  uint64_t pdep[WICK_MAX_PARTITIONS];
  uint32_t size[WICK_MAX_PARTITIONS];
  uint32_t delegate[WICK_MAX_PARTITIONS];
  bool alive[WICK_MAX_PARTITIONS];
  uint32_t slots; /* partition slots used */
} partitioner;

static uint64_t closure(const partitioner *P, uint64_t mask) {
  uint64_t out = mask;
  for (uint32_t q = 0; q < P->slots; q++)
    if (mask & (1ull << q)) out |= P->pdep[q];
  return out;
}

/* The partitions node u depends on through contraction, its own included. */
static uint64_t seen_from(const partitioner *P, uint32_t u) {
  uint64_t own = P->part[u] >= 0 ? 1ull << P->part[u] : 0;
  return closure(P, P->dep[u] | own);
}

/* Calls fn(P, u, arg) for every predecessor u of v; stops when fn returns false. */
typedef bool (*pred_fn)(const partitioner *P, uint32_t u, void *arg);
static bool each_pred(const partitioner *P, uint32_t v, pred_fn fn, void *arg) {
  const wick_node *n = &P->g->nodes[v];
  for (uint32_t k = 0; k < n->op->num_inputs; k++) {
    int32_t t = n->op->inputs[k];
    /* (the reader verified that tensors are written once, before they are read; only a
     * variable tensor is read before its writer, and both nodes are ordered nodes) */
    if (t >= 0 && P->producer[t] >= 0 && (uint32_t)P->producer[t] < v &&
        !fn(P, (uint32_t)P->producer[t], arg))
      return false;
  }
  if (P->prev_ordered[v] >= 0 && !fn(P, (uint32_t)P->prev_ordered[v], arg)) return false;
  return true;
}

static bool add_dep(const partitioner *P, uint32_t u, void *arg) {
  *(uint64_t *)arg |= seen_from(P, u);
  return true;
}

/* What v's predecessors see, for the join test: the partitions each group of them sees
 * through contraction (their own included), grouped by the partition they are in. */
typedef struct pred_view {
  uint64_t outside;                      /* seen by predecessors in no partition */
  uint64_t by_part[WICK_MAX_PARTITIONS]; /* seen by the predecessors in partition r */
  uint64_t feeds;                        /* partitions holding a predecessor */
} pred_view;

static bool view_pred(const partitioner *P, uint32_t u, void *arg) {
  pred_view *w = arg;
  uint64_t seen = seen_from(P, u);
  if (P->part[u] < 0) {
    w->outside |= seen;
  } else {
    w->by_part[P->part[u]] |= seen;
    w->feeds |= 1ull << P->part[u];
  }
  return true;
}

/* v may join q when no predecessor outside q sees q (a path q -> ... -> u -> v). */
static bool may_join(const pred_view *w, uint32_t q) {
  uint64_t bit = 1ull << q, seen = w->outside;
  for (uint32_t r = 0; r < WICK_MAX_PARTITIONS; r++)
    if (r != q && (w->feeds >> r & 1)) seen |= w->by_part[r];
  return (seen & bit) == 0;
}

/* Records a reason on node v (appended to any earlier one, "; " between). */
static void note(wick_graph *g, wick_node *n, const char *fmt, ...) WICK_PRINTF(3, 4);
static void note(wick_graph *g, wick_node *n, const char *fmt, ...) {
  char add[224];
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(add, sizeof add, fmt, ap);
  va_end(ap);
  size_t old = n->delegation_why ? strlen(n->delegation_why) : 0;
  size_t len = old + (old ? 2 : 0) + strlen(add) + 1;
  char *s = wick_graph_alloc(g, len, false);
  if (s == NULL) return; /* the report loses a reason; nothing else depends on it */
  snprintf(s, len, "%s%s%s", old ? n->delegation_why : "", old ? "; " : "", add);
  n->delegation_why = s;
}

/* Whether delegate di takes node v: asked once, the reason kept when it declines. */
static bool accepts(partitioner *P, uint32_t v, uint32_t di) {
  uint8_t bit = (uint8_t)(1u << di);
  if (!(P->asked[v] & bit)) {
    wick_graph *g = P->g;
    wick_delegate *d = g->interp->delegates[di];
    char why[192] = "";
    P->asked[v] |= bit;
    if (d->supports_node(d, (const wick_delegate_graph *)g, v, why, sizeof why)) {
      P->accepted[v] |= bit;
      why[sizeof why - 1] = 0;
      wick_node *n = &g->nodes[v];
      /* (a failed allocation loses the note, nothing else) */
      if (wick_delegate_keeps_notes(d) && why[0]) {
        if (n->delegation_notes == NULL)
          n->delegation_notes =
              wick_graph_alloc(g, g->interp->num_delegates * sizeof(const char *), true);
        size_t len = strlen(why) + 1;
        char *kept = n->delegation_notes ? wick_graph_alloc(g, len, false) : NULL;
        if (kept != NULL) {
          memcpy(kept, why, len);
          n->delegation_notes[di] = kept;
        }
      }
    } else {
      why[sizeof why - 1] = 0;
      note(g, &g->nodes[v], "%s: %s", d->name, why[0] ? why : "declined");
    }
  }
  return (P->accepted[v] & bit) != 0;
}

/* Puts v into a partition of delegate di (see the top); false when none may take it and no
 * slot is left for a new one. */
static bool join(partitioner *P, uint32_t v, uint32_t di, uint64_t deps) {
  pred_view w;
  w.outside = w.feeds = 0;
  for (uint32_t r = 0; r < P->slots; r++) w.by_part[r] = 0;
  each_pred(P, v, view_pred, &w);
  int32_t best = -1;
  bool best_has_pred = false;
  for (uint32_t q = 0; q < P->slots; q++) {
    if (!P->alive[q] || P->delegate[q] != di || !may_join(&w, q)) continue;
    /* prefer a partition that feeds v, then the most recent one */
    bool has_pred = (w.feeds >> q & 1) != 0;
    if (best < 0 || has_pred || !best_has_pred) {
      best = (int32_t)q;
      best_has_pred = has_pred;
    }
  }
  if (best < 0) {
    if (P->slots == WICK_MAX_PARTITIONS) return false;
    best = (int32_t)P->slots++;
    P->pdep[best] = 0;
    P->size[best] = 0;
    P->delegate[best] = di;
    P->alive[best] = true;
  }
  /* v joins: best now depends on what v's outside predecessors see, and so does every
   * partition that depends on best. */
  P->part[v] = best;
  P->size[best]++;
  uint64_t bit = 1ull << best, add = closure(P, deps & ~bit) & ~bit;
  P->pdep[best] |= add;
  for (uint32_t r = 0; r < P->slots; r++)
    if (P->pdep[r] & bit) P->pdep[r] |= P->pdep[best];
  return true;
}

/* One sweep over the nodes in file order: each offered node goes to the first delegate, in
 * priority order, that accepts it (and is not banned from it) and has a partition for it.
 * All partitions grow in this one topological sweep, so every join is checked against every
 * partition's final dependencies. */
static void sweep(partitioner *P) {
  wick_graph *g = P->g;
  P->slots = 0;
  for (uint32_t v = 0; v < P->n; v++) {
    P->part[v] = -1;
    P->capped[v] = false;
  }
  for (uint32_t v = 0; v < P->n; v++) {
    uint64_t deps = 0;
    each_pred(P, v, add_dep, &deps);
    P->dep[v] = deps;
    if (wick_node_not_offered(g, &g->nodes[v]) != NULL) continue;
    for (uint32_t di = 0; di < g->interp->num_delegates && P->part[v] < 0; di++) {
      if ((P->banned[v] >> di & 1) || !accepts(P, v, di)) continue;
      if (!join(P, v, di, deps)) P->capped[v] = true;
    }
  }
}

/* Dissolves the partitions below their delegate's minimum: their nodes are banned from that
 * delegate (with the reason), so that the next sweep may give them to a later one. Returns
 * whether any was dissolved. */
static bool dissolve_small(partitioner *P) {
  wick_graph *g = P->g;
  bool any = false;
  for (uint32_t q = 0; q < P->slots; q++) {
    wick_delegate *d = g->interp->delegates[P->delegate[q]];
    size_t min = d->min_partition_nodes;
    if (!P->alive[q] || P->size[q] >= min) continue;
    P->alive[q] = false;
    any = true;
    for (uint32_t v = 0; v < P->n; v++)
      if (P->part[v] == (int32_t)q) {
        P->part[v] = -1;
        P->banned[v] |= (uint8_t)(1u << P->delegate[q]);
        note(g, &g->nodes[v], "%s: partition of %u node%s, below its minimum of %zu", d->name,
             P->size[q], P->size[q] == 1 ? "" : "s", min);
      }
  }
  return any;
}

/* Nodes on delegates after a sweep. */
static uint32_t delegated(const partitioner *P) {
  uint32_t total = 0;
  for (uint32_t q = 0; q < P->slots; q++)
    if (P->alive[q]) total += P->size[q];
  return total;
}

static bool any_capped(const partitioner *P) {
  for (uint32_t v = 0; v < P->n; v++)
    if (P->capped[v] && P->part[v] < 0) return true;
  return false;
}

/* What a sweep changes, saved so that a worse result can be undone. */
typedef struct partition_state {
  int32_t *part;
  uint64_t *dep;
  uint8_t *banned;
  bool *capped;
  const char **why;
  uint64_t pdep[WICK_MAX_PARTITIONS];
  uint32_t size[WICK_MAX_PARTITIONS], delegate[WICK_MAX_PARTITIONS];
  bool alive[WICK_MAX_PARTITIONS];
  uint32_t slots;
} partition_state;

static void save_state(const partitioner *P, partition_state *s) {
  memcpy(s->part, P->part, P->n * sizeof *s->part);
  memcpy(s->dep, P->dep, P->n * sizeof *s->dep);
  memcpy(s->banned, P->banned, P->n);
  memcpy(s->capped, P->capped, P->n * sizeof *s->capped);
  for (uint32_t v = 0; v < P->n; v++) s->why[v] = P->g->nodes[v].delegation_why;
  memcpy(s->pdep, P->pdep, sizeof s->pdep);
  memcpy(s->size, P->size, sizeof s->size);
  memcpy(s->delegate, P->delegate, sizeof s->delegate);
  memcpy(s->alive, P->alive, sizeof s->alive);
  s->slots = P->slots;
}

static void restore_state(partitioner *P, const partition_state *s) {
  memcpy(P->part, s->part, P->n * sizeof *s->part);
  memcpy(P->dep, s->dep, P->n * sizeof *s->dep);
  memcpy(P->banned, s->banned, P->n);
  memcpy(P->capped, s->capped, P->n * sizeof *s->capped);
  for (uint32_t v = 0; v < P->n; v++) P->g->nodes[v].delegation_why = s->why[v];
  memcpy(P->pdep, s->pdep, sizeof s->pdep);
  memcpy(P->size, s->size, sizeof s->size);
  memcpy(P->delegate, s->delegate, sizeof s->delegate);
  memcpy(P->alive, s->alive, sizeof s->alive);
  P->slots = s->slots;
}

/* The cap of WICK_MAX_PARTITIONS: the sweep opens partitions in file order, so small ones early
 * in the graph can use up the slots that larger ones later would need. When nodes were capped:
 * a second sweep, with the nodes of the first plan's partitions banned, groups the capped
 * nodes into partitions of their own; of both plans' partitions the WICK_MAX_PARTITIONS
 * largest are chosen (the earlier of equal sizes), the nodes of the others banned from their
 * delegate with the reason, and the graph swept again (the sweep checks every join as ever).
 * That plan is kept when it puts more nodes on delegates, else the first is restored. */
static void prefer_larger_partitions(partitioner *P) {
  if (!any_capped(P)) return;
  wick_graph *g = P->g;
  uint32_t n = P->n, before = delegated(P);
  partition_state *s = wick_graph_alloc(g, sizeof *s, false);
  int32_t *group = wick_graph_alloc(g, n * sizeof(int32_t), false); /* per node, -1 */
  if (s == NULL || group == NULL) return; /* out of memory: the first plan stands */
  s->part = wick_graph_alloc(g, n * sizeof *s->part, false);
  s->dep = wick_graph_alloc(g, n * sizeof *s->dep, false);
  s->banned = wick_graph_alloc(g, n, false);
  s->capped = wick_graph_alloc(g, n * sizeof *s->capped, false);
  s->why = wick_graph_alloc(g, n * sizeof *s->why, false);
  if (!s->part || !s->dep || !s->banned || !s->capped || !s->why) return;
  save_state(P, s);
  /* the groups: the first plan's partitions (0..63), the capped nodes' (64..127) */
  enum { GROUPS = 2 * WICK_MAX_PARTITIONS };
  uint32_t size[GROUPS] = {0}, first[GROUPS], gdelegate[GROUPS];
  for (uint32_t q = 0; q < GROUPS; q++) first[q] = UINT32_MAX;
  for (uint32_t v = 0; v < n; v++) {
    group[v] = P->part[v];
    if (P->part[v] >= 0) P->banned[v] |= (uint8_t)(1u << P->delegate[P->part[v]]);
  }
  for (uint32_t q = 0; q < P->slots; q++) gdelegate[q] = P->delegate[q];
  sweep(P);
  for (uint32_t q = 0; q < P->slots; q++) gdelegate[WICK_MAX_PARTITIONS + q] = P->delegate[q];
  for (uint32_t v = 0; v < n; v++) {
    if (P->part[v] >= 0) group[v] = WICK_MAX_PARTITIONS + P->part[v];
    if (group[v] < 0) continue;
    size[group[v]]++;
    if (first[group[v]] == UINT32_MAX) first[group[v]] = v;
  }
  restore_state(P, s);
  /* keep the WICK_MAX_PARTITIONS largest groups (the earlier first node among equal sizes) */
  bool keep[GROUPS] = {false};
  for (uint32_t k = 0; k < WICK_MAX_PARTITIONS; k++) {
    int32_t best = -1;
    for (uint32_t q = 0; q < GROUPS; q++)
      if (size[q] > 0 && !keep[q] &&
          (best < 0 || size[q] > size[best] || (size[q] == size[best] && first[q] < first[best])))
        best = (int32_t)q;
    if (best < 0) break;
    keep[best] = true;
  }
  for (uint32_t v = 0; v < n; v++) {
    int32_t q = group[v];
    if (q < 0 || keep[q]) continue;
    wick_delegate *d = g->interp->delegates[gdelegate[q]];
    P->banned[v] |= (uint8_t)(1u << gdelegate[q]);
    note(g, &g->nodes[v],
         "%s: a partition of %u node%s, given up for larger ones (at most %d partitions per "
         "graph)",
         d->name, size[q], size[q] == 1 ? "" : "s", WICK_MAX_PARTITIONS);
  }
  sweep(P);
  for (int again = 1; dissolve_small(P) && again < 8; again++) sweep(P);
  if (delegated(P) <= before) restore_state(P, s);
}

/* A binary min-heap of unit keys (smallest file index first). */
typedef struct heap {
  uint64_t *items; /* key << 32 | unit */
  uint32_t count;
} heap;

static void heap_push(heap *h, uint64_t x) {
  uint32_t i = h->count++;
  while (i > 0 && h->items[(i - 1) / 2] > x) {
    h->items[i] = h->items[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->items[i] = x;
}

static uint64_t heap_pop(heap *h) {
  uint64_t top = h->items[0], x = h->items[--h->count];
  uint32_t i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->count) break;
    if (c + 1 < h->count && h->items[c + 1] < h->items[c]) c++;
    if (h->items[c] >= x) break;
    h->items[i] = h->items[c];
    i = c;
  }
  h->items[i] = x;
  return top;
}

typedef struct edge_count {
  uint32_t *unit_of; /* per node */
  uint32_t *count;   /* per unit: edges out (first pass) */
  uint32_t *indeg;   /* per unit */
  uint32_t *start;   /* CSR of edges out, per unit */
  uint32_t *targets;
  bool fill;
  uint32_t v;
} edge_count;

static bool count_edge(const partitioner *P, uint32_t u, void *arg) {
  (void)P;
  edge_count *e = arg;
  uint32_t from = e->unit_of[u], to = e->unit_of[e->v];
  if (from == to) return true;
  if (e->fill) {
    e->targets[e->start[from] + e->count[from]++] = to;
  } else {
    e->count[from]++;
    e->indeg[to]++;
  }
  return true;
}

/* The execution order of the unit graph (see the top); false when out of memory or (an
 * internal error) not every node was ordered. */
static bool make_order(partitioner *P, const int32_t *slot_to_id, uint32_t num_partitions) {
  wick_graph *g = P->g;
  uint32_t n = P->n, units = n + num_partitions;
  edge_count e = {0};
  e.unit_of = wick_graph_alloc(g, n * sizeof(uint32_t), false);
  e.count = wick_graph_alloc(g, units * sizeof(uint32_t), true);
  e.indeg = wick_graph_alloc(g, units * sizeof(uint32_t), true);
  e.start = wick_graph_alloc(g, (units + 1) * sizeof(uint32_t), false);
  uint32_t *first = wick_graph_alloc(g, units * sizeof(uint32_t), false);
  heap h = {wick_graph_alloc(g, units * sizeof(uint64_t), false), 0};
  g->order = wick_graph_alloc(g, n * sizeof(uint32_t), false);
  g->position = wick_graph_alloc(g, n * sizeof(uint32_t), false);
  if (!e.unit_of || !e.count || !e.indeg || !e.start || !first || !h.items || !g->order ||
      !g->position)
    return false;
  for (uint32_t u = 0; u < units; u++) first[u] = UINT32_MAX;
  for (uint32_t v = 0; v < n; v++) {
    e.unit_of[v] = P->part[v] >= 0 ? n + (uint32_t)slot_to_id[P->part[v]] : v;
    if (first[e.unit_of[v]] == UINT32_MAX) first[e.unit_of[v]] = v;
  }
  for (e.v = 0; e.v < n; e.v++) each_pred(P, e.v, count_edge, &e);
  uint64_t total = 0;
  for (uint32_t u = 0; u < units; u++) {
    e.start[u] = (uint32_t)total;
    total += e.count[u];
    e.count[u] = 0;
  }
  /* (edges come from node inputs, so they fit 32 bits and, on 32-bit hosts, size_t) */
  if (total > UINT32_MAX || total > SIZE_MAX / sizeof(uint32_t)) return false;
  e.start[units] = (uint32_t)total;
  e.targets = wick_graph_alloc(g, (size_t)(total ? total : 1) * sizeof(uint32_t), false);
  if (e.targets == NULL) return false;
  e.fill = true;
  for (e.v = 0; e.v < n; e.v++) each_pred(P, e.v, count_edge, &e);
  for (uint32_t u = 0; u < units; u++)
    if (first[u] != UINT32_MAX && e.indeg[u] == 0) heap_push(&h, (uint64_t)first[u] << 32 | u);
  uint32_t pos = 0;
  while (h.count > 0) {
    uint32_t u = (uint32_t)heap_pop(&h);
    if (u < n) {
      g->order[pos++] = u;
    } else {
      wick_partition *p = &g->partitions[u - n];
      p->start = pos;
      for (uint32_t v = first[u]; v < n; v++)
        if (e.unit_of[v] == u) g->order[pos++] = v;
      p->end = pos;
    }
    for (uint32_t k = e.start[u]; k < e.start[u + 1]; k++)
      if (--e.indeg[e.targets[k]] == 0) {
        uint32_t t = e.targets[k];
        heap_push(&h, (uint64_t)first[t] << 32 | t);
      }
  }
  if (pos != n) return false;
  for (uint32_t i = 0; i < n; i++) g->position[g->order[i]] = i;
  return true;
}

/* Everything on the CPU: the state before partitioning. */
static void undo_partitions(wick_graph *g) {
  for (uint32_t v = 0; v < g->info->num_operators; v++) g->nodes[v].partition = -1;
  g->partitions = NULL;
  g->num_partitions = 0;
  g->order = g->position = NULL;
}

/* Everything on the CPU, every node with the reason, and a log line. */
static void give_up(wick_graph *g, const char *why) {
  undo_partitions(g);
  for (uint32_t v = 0; v < g->info->num_operators; v++) g->nodes[v].delegation_why = why;
  wick_interp_log(g->interp, WICK_LOG_WARNING, "delegates: %s; everything runs on the CPU", why);
}

void wick_graph_partition(wick_graph *g) {
  wick_interpreter *it = g->interp;
  if (it->num_delegates == 0) return;
  uint32_t n = g->info->num_operators, nt = g->info->num_tensors;
  if (g->depth > 0) {
    for (uint32_t v = 0; v < n; v++) g->nodes[v].delegation_why = "in a subgraph of control flow";
    return;
  }
  if (n == 0) return;
  partitioner P;
  memset(&P, 0, sizeof P);
  P.g = g;
  P.n = n;
  P.producer = wick_graph_alloc(g, (nt ? nt : 1) * sizeof(int32_t), false);
  P.prev_ordered = wick_graph_alloc(g, n * sizeof(int32_t), false);
  P.dep = wick_graph_alloc(g, n * sizeof(uint64_t), true);
  P.part = wick_graph_alloc(g, n * sizeof(int32_t), false);
  P.asked = wick_graph_alloc(g, n, true);
  P.accepted = wick_graph_alloc(g, n, true);
  P.banned = wick_graph_alloc(g, n, true);
  P.capped = wick_graph_alloc(g, n * sizeof(bool), true);
  if (!P.producer || !P.prev_ordered || !P.dep || !P.part || !P.asked || !P.accepted || !P.banned ||
      !P.capped) {
    give_up(g, "out of memory partitioning the graph");
    return;
  }
  for (uint32_t t = 0; t < nt; t++) P.producer[t] = -1;
  int32_t last_ordered = -1;
  for (uint32_t v = 0; v < n; v++) {
    const wick_node *node = &g->nodes[v];
    P.part[v] = -1;
    for (uint32_t k = 0; k < node->op->num_outputs; k++)
      P.producer[node->op->outputs[k]] = (int32_t)v;
    P.prev_ordered[v] = -1;
    if (ordered(g, node)) {
      P.prev_ordered[v] = last_ordered;
      last_ordered = (int32_t)v;
    }
    const char *why = wick_node_offer_why(g, g, node);
    g->nodes[v].delegation_why = why;
    g->nodes[v].delegation_notes = NULL;
  }
  /* Sweep until no partition is below its minimum: a dissolved partition's nodes are banned
   * from its delegate and a new sweep may give them to a later one (every sweep starts from
   * scratch, so each stays one checked topological pass). Each round bans at least one node
   * from a delegate; after MAX_ROUNDS the small partitions just go to the CPU (removing
   * nodes from a partition never creates a cycle). */
  enum { MAX_ROUNDS = 8 };
  sweep(&P);
  for (int round = 1; dissolve_small(&P) && round < MAX_ROUNDS; round++) sweep(&P);
  prefer_larger_partitions(&P);
  for (uint32_t v = 0; v < n; v++)
    if (P.capped[v] && P.part[v] < 0)
      note(g, &g->nodes[v], "accepted, but the graph already has %d partitions",
           WICK_MAX_PARTITIONS);

  /* Number the surviving partitions by their first node. */
  int32_t slot_to_id[WICK_MAX_PARTITIONS];
  uint32_t count = 0;
  for (uint32_t q = 0; q < WICK_MAX_PARTITIONS; q++) slot_to_id[q] = -1;
  for (uint32_t v = 0; v < n; v++)
    if (P.part[v] >= 0 && slot_to_id[P.part[v]] < 0) slot_to_id[P.part[v]] = (int32_t)count++;
  if (count == 0) return;
  g->partitions = wick_graph_alloc(g, count * sizeof(wick_partition), true);
  if (g->partitions == NULL) {
    give_up(g, "out of memory partitioning the graph");
    return;
  }
  g->num_partitions = count;
  for (uint32_t q = 0; q < P.slots; q++)
    if (slot_to_id[q] >= 0) {
      wick_partition *p = &g->partitions[slot_to_id[q]];
      p->delegate = it->delegates[P.delegate[q]];
      p->desc.num_nodes = P.size[q];
    }
  for (uint32_t v = 0; v < n; v++) {
    g->nodes[v].partition = P.part[v] >= 0 ? slot_to_id[P.part[v]] : -1;
    if (g->nodes[v].partition >= 0) g->nodes[v].delegation_why = NULL;
  }
  if (!make_order(&P, slot_to_id, count)) /* out of memory (a cycle would be a bug) */
    give_up(g, "could not order the partitions (out of memory)");
}

/* ---------------------------------------------------------------- prepare and invoke */

/* Fills p->desc: its nodes in order, the tensors it reads from outside (not constants) and
 * the tensors read outside it. `mark` holds a stamp per tensor. */
static bool describe(wick_graph *g, uint32_t id, uint32_t *mark, const int32_t *producer_part) {
  wick_partition *p = &g->partitions[id];
  uint32_t count = p->end - p->start, nin = 0, nout = 0;
  size_t *nodes = wick_graph_alloc(g, count * sizeof(size_t), false);
  if (nodes == NULL) return false;
  for (uint32_t i = 0; i < count; i++) nodes[i] = g->order[p->start + i];
  /* inputs: read by a member, produced elsewhere, not constant */
  uint32_t stamp = 2 * id + 1, cap_in = 0, cap_out = 0;
  for (uint32_t i = 0; i < count; i++) cap_in += g->nodes[nodes[i]].op->num_inputs;
  for (uint32_t i = 0; i < count; i++) cap_out += g->nodes[nodes[i]].op->num_outputs;
  int32_t *inputs = wick_graph_alloc(g, (cap_in ? cap_in : 1) * sizeof(int32_t), false);
  int32_t *outputs = wick_graph_alloc(g, (cap_out ? cap_out : 1) * sizeof(int32_t), false);
  if (inputs == NULL || outputs == NULL) return false;
  for (uint32_t i = 0; i < count; i++) {
    const wick_node *n = &g->nodes[nodes[i]];
    for (uint32_t k = 0; k < n->op->num_inputs; k++) {
      int32_t t = n->op->inputs[k];
      if (t < 0 || producer_part[t] == (int32_t)id || g->tensors[t].known || mark[t] == stamp)
        continue;
      mark[t] = stamp;
      inputs[nin++] = t;
    }
  }
  stamp++;
  for (uint32_t v = 0; v < g->info->num_operators; v++) {
    const wick_node *n = &g->nodes[v];
    if (n->partition == (int32_t)id || n->folded) continue;
    for (uint32_t k = 0; k < n->op->num_inputs; k++) {
      int32_t t = n->op->inputs[k];
      if (t < 0 || producer_part[t] != (int32_t)id || mark[t] == stamp) continue;
      mark[t] = stamp;
      outputs[nout++] = t;
    }
  }
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    int32_t t = g->outputs[i];
    if (producer_part[t] != (int32_t)id || mark[t] == stamp) continue;
    mark[t] = stamp;
    outputs[nout++] = t;
  }
  p->desc.struct_size = sizeof p->desc;
  p->desc.id = id;
  p->desc.nodes = nodes;
  p->desc.num_nodes = count;
  p->desc.inputs = inputs;
  p->desc.num_inputs = nin;
  p->desc.outputs = outputs;
  p->desc.num_outputs = nout;
  return true;
}

/* `planned`: a planning delegate declined the partition at prepare, by design: no failure, no
 * warning. */
static void fall_back(wick_graph *g, wick_partition *p, const char *what, const char *why,
                      bool planned) {
  if (planned)
    wick_format_message(p->why, sizeof p->why, "%s: planned only: %s", p->delegate->name,
                        why[0] ? why : "no reason given");
  else
    wick_format_message(p->why, sizeof p->why, "%s: %s failed: %s", p->delegate->name, what,
                        why[0] ? why : "no reason given");
  p->active = false;
  wick_interp_log(g->interp, planned ? WICK_LOG_INFO : WICK_LOG_WARNING,
                  "partition %zu (%zu node%s) runs on the CPU: %s", p->desc.id, p->desc.num_nodes,
                  p->desc.num_nodes == 1 ? "" : "s", p->why);
}

void wick_graph_prepare_partitions(wick_graph *g) {
  if (g->num_partitions == 0) return;
  uint32_t nt = g->info->num_tensors ? g->info->num_tensors : 1;
  uint32_t *mark = wick_mem_calloc(&g->interp->mem, nt, sizeof(uint32_t));
  int32_t *producer_part = wick_mem_alloc(&g->interp->mem, nt * sizeof(int32_t));
  bool ok = mark != NULL && producer_part != NULL;
  if (ok) {
    for (uint32_t t = 0; t < nt; t++) producer_part[t] = -1;
    for (uint32_t v = 0; v < g->info->num_operators; v++) {
      const wick_node *n = &g->nodes[v];
      for (uint32_t k = 0; k < n->op->num_outputs && n->partition >= 0; k++)
        producer_part[n->op->outputs[k]] = n->partition;
    }
  }
  size_t delegated = 0;
  for (uint32_t id = 0; id < g->num_partitions; id++) {
    wick_partition *p = &g->partitions[id];
    p->desc.id = id;
    if (!ok || !describe(g, id, mark, producer_part)) {
      fall_back(g, p, "prepare", "out of memory describing the partition", false);
      ok = false;
      continue;
    }
    char why[192] = "";
    void *state = NULL;
    wick_status st = p->delegate->prepare_partition(p->delegate, (const wick_delegate_graph *)g,
                                                    &p->desc, &state, why, sizeof why);
    why[sizeof why - 1] = 0;
    if (st != WICK_OK) {
      if (state != NULL) p->delegate->free_partition(p->delegate, state);
      fall_back(g, p, "prepare", why, wick_delegate_plans_only(p->delegate));
      continue;
    }
    p->state = state;
    p->active = true;
    delegated += p->desc.num_nodes;
    wick_interp_log(g->interp, WICK_LOG_INFO,
                    "partition %u: %zu nodes on %s (%zu inputs, %zu outputs)", id,
                    p->desc.num_nodes, p->delegate->name, p->desc.num_inputs, p->desc.num_outputs);
  }
  wick_interp_log(g->interp, WICK_LOG_INFO,
                  "delegates: %zu of %u operators in %u partitions run on delegates", delegated,
                  g->info->num_operators, g->num_partitions);
  wick_mem_free(&g->interp->mem, mark);
  wick_mem_free(&g->interp->mem, producer_part);
}

void wick_graph_free_partitions(wick_graph *g) {
  for (uint32_t id = 0; id < g->num_partitions; id++) {
    wick_partition *p = &g->partitions[id];
    if (p->state != NULL) p->delegate->free_partition(p->delegate, p->state);
    p->state = NULL;
  }
  undo_partitions(g);
}

bool wick_partition_invoke(wick_graph *g, wick_partition *p, wick_status *status) {
  *status = WICK_OK;
  char why[192] = "";
  wick_status st = p->delegate->invoke_partition(p->delegate, (const wick_delegate_graph *)g,
                                                 p->state, why, sizeof why);
  why[sizeof why - 1] = 0;
  if (st == WICK_OK) return true;
  if (st == WICK_ERR_CANCELLED && atomic_load(&g->interp->cancelled)) {
    *status = WICK_ERR_CANCELLED;
    return false;
  }
  fall_back(g, p, "invoke", why, false);
  return false;
}

/* ---------------------------------------------------------------- the delegate's view */

static const wick_graph *view(const wick_delegate_graph *graph) {
  return (const wick_graph *)(const void *)graph;
}

static const wick_node *view_node(const wick_delegate_graph *graph, size_t node) {
  const wick_graph *g = view(graph);
  if (g == NULL || node >= g->info->num_operators) return NULL;
  return &g->nodes[node];
}

size_t wick_delegate_graph_node_count(const wick_delegate_graph *graph) {
  return graph ? view(graph)->info->num_operators : 0;
}

int32_t wick_delegate_graph_node_builtin(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  return n ? n->op->builtin : -1;
}

const char *wick_delegate_graph_node_name(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  if (n == NULL) return NULL;
  if (n->op->builtin == WICK_BUILTIN_CUSTOM && n->op->custom_name != NULL)
    return n->op->custom_name;
  return wick_builtin_name(n->op->builtin);
}

int wick_delegate_graph_node_version(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  return n ? n->op->version : 0;
}

size_t wick_delegate_graph_node_input_count(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  return n ? n->op->num_inputs : 0;
}

int32_t wick_delegate_graph_node_input(const wick_delegate_graph *graph, size_t node, size_t i) {
  const wick_node *n = view_node(graph, node);
  return n && i < n->op->num_inputs ? n->op->inputs[i] : -1;
}

size_t wick_delegate_graph_node_output_count(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  return n ? n->op->num_outputs : 0;
}

int32_t wick_delegate_graph_node_output(const wick_delegate_graph *graph, size_t node, size_t i) {
  const wick_node *n = view_node(graph, node);
  return n && i < n->op->num_outputs ? n->op->outputs[i] : -1;
}

wick_tensor *wick_delegate_graph_tensor(const wick_delegate_graph *graph, int32_t index) {
  const wick_graph *g = view(graph);
  if (g == NULL || index < 0 || (uint32_t)index >= g->info->num_tensors) return NULL;
  return &g->tensors[index];
}

size_t wick_delegate_graph_tensor_count(const wick_delegate_graph *graph) {
  return graph ? view(graph)->info->num_tensors : 0;
}

size_t wick_delegate_graph_input_count(const wick_delegate_graph *graph) {
  return graph ? view(graph)->num_inputs : 0;
}

int32_t wick_delegate_graph_input(const wick_delegate_graph *graph, size_t i) {
  const wick_graph *g = view(graph);
  return g && i < g->num_inputs ? g->inputs[i] : -1;
}

size_t wick_delegate_graph_output_count(const wick_delegate_graph *graph) {
  return graph ? view(graph)->num_outputs : 0;
}

int32_t wick_delegate_graph_output(const wick_delegate_graph *graph, size_t i) {
  const wick_graph *g = view(graph);
  return g && i < g->num_outputs ? g->outputs[i] : -1;
}

size_t wick_delegate_graph_node_subgraph_count(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  return n && control_flow(n) ? 2 : 0;
}

const wick_delegate_graph *wick_delegate_graph_node_subgraph(const wick_delegate_graph *graph,
                                                             size_t node, size_t i) {
  const wick_node *n = view_node(graph, node);
  if (n == NULL || !control_flow(n) || i >= 2) return NULL;
  return (const wick_delegate_graph *)n->child[i];
}

const char *wick_delegate_graph_node_restriction(const wick_delegate_graph *graph, size_t node) {
  const wick_node *n = view_node(graph, node);
  if (n == NULL) return NULL;
  const char *why = wick_node_not_offered(view(graph), n);
  return why ? why : "";
}

int wick_delegate_graph_node_custom_option(const wick_delegate_graph *graph, size_t node,
                                           const char *key, double *value_out) {
  const wick_node *n = view_node(graph, node);
  if (n == NULL || key == NULL || value_out == NULL || n->op->builtin != WICK_BUILTIN_CUSTOM ||
      n->op->custom_options == NULL || n->op->custom_options_size == 0)
    return 0;
  wick_flex_map m;
  if (wick_flex_root_map(n->op->custom_options, n->op->custom_options_size, &m) != WICK_FLEX_OK)
    return 0;
  double v;
  bool b;
  if (wick_flex_map_float(&m, key, &v) == WICK_FLEX_OK) {
    *value_out = v;
    return 1;
  }
  if (wick_flex_map_bool(&m, key, &b) == WICK_FLEX_OK) {
    *value_out = b ? 1.0 : 0.0;
    return 1;
  }
  return 0;
}

void *wick_delegate_graph_alloc(const wick_delegate_graph *graph, size_t size) {
  if (graph == NULL) return NULL;
  return wick_graph_alloc((wick_graph *)(uintptr_t)view(graph), size, true);
}

int wick_delegate_graph_cancelled(const wick_delegate_graph *graph) {
  return graph && atomic_load(&view(graph)->interp->cancelled) ? 1 : 0;
}

/* Which option family an operator's options belong to. */
enum { FAM_NONE, FAM_CONV, FAM_DEPTHWISE, FAM_POOL, FAM_ACT, FAM_FC };

static int option_family(int32_t b) {
  switch (b) {
    case WICK_BUILTIN_CONV_2D:
    case WICK_BUILTIN_TRANSPOSE_CONV: return FAM_CONV;
    case WICK_BUILTIN_DEPTHWISE_CONV_2D: return FAM_DEPTHWISE;
    case WICK_BUILTIN_AVERAGE_POOL_2D:
    case WICK_BUILTIN_MAX_POOL_2D:
    case WICK_BUILTIN_L2_POOL_2D: return FAM_POOL;
    case WICK_BUILTIN_FULLY_CONNECTED: return FAM_FC;
    case WICK_BUILTIN_ADD:
    case WICK_BUILTIN_SUB:
    case WICK_BUILTIN_MUL:
    case WICK_BUILTIN_DIV:
    case WICK_BUILTIN_CONCATENATION:
    case WICK_BUILTIN_L2_NORMALIZATION: return FAM_ACT;
    default: return FAM_NONE;
  }
}

int wick_delegate_graph_node_option(const wick_delegate_graph *graph, size_t node,
                                    wick_op_option option, double *value_out) {
  const wick_node *n = view_node(graph, node);
  if (n == NULL || value_out == NULL) return 0;
  const wick_op_params *p = &n->op->params;
  int32_t b = n->op->builtin;
  int fam = option_family(b);
  bool conv = fam == FAM_CONV || fam == FAM_DEPTHWISE;
  double v;
  switch (option) {
    case WICK_OPTION_FUSED_ACTIVATION:
      if (conv && b != WICK_BUILTIN_TRANSPOSE_CONV)
        v = p->conv.activation;
      else if (fam == FAM_POOL)
        v = p->pool.activation;
      else if (fam == FAM_FC)
        v = p->fc.activation;
      else if (fam == FAM_ACT)
        v = p->activation;
      else
        return 0;
      break;
    case WICK_OPTION_PADDING:
      if (conv)
        v = p->conv.padding;
      else if (fam == FAM_POOL)
        v = p->pool.padding;
      else
        return 0;
      break;
    case WICK_OPTION_STRIDE_W:
    case WICK_OPTION_STRIDE_H: {
      bool w = option == WICK_OPTION_STRIDE_W;
      if (conv)
        v = w ? p->conv.stride_w : p->conv.stride_h;
      else if (fam == FAM_POOL)
        v = w ? p->pool.stride_w : p->pool.stride_h;
      else
        return 0;
      break;
    }
    case WICK_OPTION_DILATION_W:
    case WICK_OPTION_DILATION_H:
      if (!conv || b == WICK_BUILTIN_TRANSPOSE_CONV) return 0;
      v = option == WICK_OPTION_DILATION_W ? p->conv.dilation_w : p->conv.dilation_h;
      break;
    case WICK_OPTION_DEPTH_MULTIPLIER:
      if (fam != FAM_DEPTHWISE) return 0;
      v = p->conv.depth_multiplier;
      break;
    case WICK_OPTION_FILTER_W:
    case WICK_OPTION_FILTER_H:
      if (fam != FAM_POOL) return 0;
      v = option == WICK_OPTION_FILTER_W ? p->pool.filter_w : p->pool.filter_h;
      break;
    case WICK_OPTION_AXIS:
      if (b != WICK_BUILTIN_CONCATENATION && b != WICK_BUILTIN_GATHER && b != WICK_BUILTIN_PACK &&
          b != WICK_BUILTIN_UNPACK)
        return 0;
      v = p->axis;
      break;
    case WICK_OPTION_KEEP_DIMS:
      if (fam == FAM_FC)
        v = p->fc.keep_num_dims;
      else if (b == WICK_BUILTIN_MEAN || b == WICK_BUILTIN_SUM || b == WICK_BUILTIN_REDUCE_MAX ||
               b == WICK_BUILTIN_REDUCE_MIN || b == WICK_BUILTIN_REDUCE_PROD)
        v = p->keep_dims;
      else
        return 0;
      break;
    case WICK_OPTION_BETA:
      if (b != WICK_BUILTIN_SOFTMAX) return 0;
      v = p->beta;
      break;
    case WICK_OPTION_ALPHA:
      if (b != WICK_BUILTIN_LEAKY_RELU) return 0;
      v = p->alpha;
      break;
    case WICK_OPTION_ALIGN_CORNERS:
    case WICK_OPTION_HALF_PIXEL_CENTERS:
      if (b != WICK_BUILTIN_RESIZE_BILINEAR && b != WICK_BUILTIN_RESIZE_NEAREST_NEIGHBOR) return 0;
      v = option == WICK_OPTION_ALIGN_CORNERS ? p->align_corners : p->half_pixel_centers;
      break;
    case WICK_OPTION_WEIGHTS_FORMAT:
      if (fam != FAM_FC) return 0;
      v = p->fc.weights_format;
      break;
    case WICK_OPTION_ADJ_X:
    case WICK_OPTION_ADJ_Y:
      if (b != WICK_BUILTIN_BATCH_MATMUL) return 0;
      v = option == WICK_OPTION_ADJ_X ? p->adj_x : p->adj_y;
      break;
    case WICK_OPTION_NUM_SPLITS:
      if (b != WICK_BUILTIN_SPLIT && b != WICK_BUILTIN_SPLIT_V && b != WICK_BUILTIN_PACK &&
          b != WICK_BUILTIN_UNPACK)
        return 0;
      v = p->count;
      break;
    case WICK_OPTION_BLOCK_SIZE:
      if (b != WICK_BUILTIN_SPACE_TO_DEPTH && b != WICK_BUILTIN_DEPTH_TO_SPACE) return 0;
      v = p->block_size;
      break;
    case WICK_OPTION_APPROXIMATE:
      if (b != WICK_BUILTIN_GELU) return 0;
      v = p->approximate;
      break;
    case WICK_OPTION_BEGIN_MASK:
    case WICK_OPTION_END_MASK:
    case WICK_OPTION_ELLIPSIS_MASK:
    case WICK_OPTION_NEW_AXIS_MASK:
    case WICK_OPTION_SHRINK_AXIS_MASK:
    case WICK_OPTION_OFFSET: {
      if (b != WICK_BUILTIN_STRIDED_SLICE) return 0;
      const wick_strided_slice_params *s = &p->strided_slice;
      v = option == WICK_OPTION_BEGIN_MASK         ? s->begin_mask
          : option == WICK_OPTION_END_MASK         ? s->end_mask
          : option == WICK_OPTION_ELLIPSIS_MASK    ? s->ellipsis_mask
          : option == WICK_OPTION_NEW_AXIS_MASK    ? s->new_axis_mask
          : option == WICK_OPTION_SHRINK_AXIS_MASK ? s->shrink_axis_mask
                                                   : s->offset;
      break;
    }
    default: return 0;
  }
  *value_out = v;
  return 1;
}
