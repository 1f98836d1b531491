/*
 * delegation_report.c — the delegation report (wick.h, "delegates";
 * docs/delegates.md, "The report"): where each operator runs and why not on
 * a delegate, for the bound subgraph's operators (kept on the nodes by
 * delegate.c's partitioning) and for the operators inside the subgraphs they
 * run (IF, WHILE, CALL_ONCE, STABLEHLO_COMPOSITE), as rows.
 *
 * Rows [0, n) are the bound subgraph's n operators. The others are built
 * after partitioning (wick_graph_build_report), breadth first: scanning the
 * rows in order, an operator that runs subgraphs appends the operators of
 * each (first subgraph, then second) as a block, so every row comes after its
 * parent's and a subgraph's operators are consecutive. The subgraphs come
 * from the model (the operator's subgraph indices), so operators prepared
 * only at invoke (under a dynamic node) are listed too; where the subgraph
 * was prepared (a child graph of the node), its node says whether it was
 * computed at prepare or why no delegate may run it, and the delegates are
 * asked about it (supports_node with the subgraph as the graph: for the report
 * only). A DAG of subgraph calls can fan out, so at most WICK_MAX_GRAPHS
 * subgraphs and MAX_INNER_ROWS rows are listed, cut in the same place by
 * both passes (they visit the same subgraphs in the same order).
 *
 * An inner operator runs where the bound subgraph's operator it is nested in
 * ("top") runs — a delegate takes control flow whole — so its delegate,
 * partition and fallback reason are read from the top's partition when
 * asked (a partition that fails at invoke changes them); only its reason on
 * the CPU and its note are kept in the row. Strings live in the bound
 * subgraph's graph memory (until its next prepare), never in a child graph's
 * (a dynamic node prepares its child graphs again at invoke).
 */
#include <stdio.h>
#include <string.h>

#include "core/internal.h"
#include "format/schema.h"

/* ---------------------------------------------------------------- building */

/* What subgraph `b` of an operator is to it. */
static const char *role_of(int32_t builtin, int b) {
  switch (builtin) {
    case WICK_BUILTIN_IF: return b ? "else" : "then";
    case WICK_BUILTIN_WHILE: return b ? "body" : "cond";
    case WICK_BUILTIN_CALL_ONCE: return "init";
    case WICK_BUILTIN_STABLEHLO_COMPOSITE: return "decomposition";
    default: return "subgraph";
  }
}

static const char *op_name_of(const wick_operator_info *op) {
  if (op->builtin == WICK_BUILTIN_CUSTOM && op->custom_name != NULL) return op->custom_name;
  return wick_builtin_name(op->builtin);
}

/* Rows below the bound subgraph's at most: subgraphs under a dynamic operator are prepared (and
 * their instances counted against WICK_MAX_GRAPHS) only at invoke, so a hostile file could ask
 * for WICK_MAX_GRAPHS copies of a huge subgraph here. The first subgraph that would pass the
 * cap ends the listing. */
#define MAX_INNER_ROWS 65536u

/* A subgraph to list: the operator at `parent` runs it as its subgraph `branch`. */
typedef struct expansion {
  uint32_t subgraph;
  int32_t parent;
  uint8_t branch;
} expansion;

typedef struct walker {
  wick_graph *g; /* the bound subgraph */
  expansion *queue;
  uint32_t queued;
  wick_report_row *rows; /* NULL: count only */
  uint32_t count;        /* rows below the bound subgraph's */
} walker;

/* Queues the subgraphs that operator `op` (at row `row`) runs. */
static void queue_children(walker *w, const wick_operator_info *op, int32_t row) {
  const wick_model *m = w->g->interp->model;
  for (int b = 0; b < 2; b++) {
    int32_t s = op->params.subgraph[b];
    if (s < 0 || (uint32_t)s >= m->num_subgraphs || w->queued >= WICK_MAX_GRAPHS) continue;
    w->queue[w->queued++] = (expansion){(uint32_t)s, row, (uint8_t)b};
  }
}

/* The prepared child graph of the operator at `row` for its subgraph `branch`, or NULL. */
static const wick_graph *child_of(const walker *w, int32_t row, int branch, uint32_t subgraph) {
  uint32_t n = w->g->info->num_operators;
  const wick_graph *in = (uint32_t)row < n ? w->g : w->rows[(uint32_t)row - n].in;
  uint32_t k = (uint32_t)row < n ? (uint32_t)row : w->rows[(uint32_t)row - n].op;
  if (in == NULL) return NULL;
  const wick_graph *c = in->nodes[k].child[branch];
  return c != NULL && c->subgraph_index == subgraph && c->prepared ? c : NULL;
}

/* Both passes: the rows in order (filled when w->rows is set), their count in w->count. */
static void walk(walker *w) {
  const wick_model *m = w->g->interp->model;
  uint32_t n = w->g->info->num_operators;
  w->queued = 0;
  w->count = 0;
  for (uint32_t v = 0; v < n; v++) queue_children(w, w->g->nodes[v].op, (int32_t)v);
  for (uint32_t q = 0; q < w->queued; q++) {
    expansion e = w->queue[q];
    const wick_subgraph_info *sub = &m->subgraphs[e.subgraph];
    if (sub->num_operators > MAX_INNER_ROWS - w->count) break; /* (the same in both passes) */
    const wick_graph *in = w->rows ? child_of(w, e.parent, e.branch, e.subgraph) : NULL;
    for (uint32_t k = 0; k < sub->num_operators; k++) {
      int32_t row = (int32_t)(n + w->count++);
      if (w->rows) {
        wick_report_row *r = &w->rows[(uint32_t)row - n];
        const wick_operator_info *parent_op =
            (uint32_t)e.parent < n ? w->g->nodes[e.parent].op
                                   : &m->subgraphs[w->rows[(uint32_t)e.parent - n].subgraph]
                                          .operators[w->rows[(uint32_t)e.parent - n].op];
        memset(r, 0, sizeof *r);
        r->parent = e.parent;
        r->top = (uint32_t)e.parent < n ? e.parent : w->rows[(uint32_t)e.parent - n].top;
        r->subgraph = e.subgraph;
        r->op = k;
        r->role = role_of(parent_op->builtin, e.branch);
        r->name = op_name_of(&sub->operators[k]);
        r->in = in;
      }
      queue_children(w, &sub->operators[k], row);
    }
  }
}

/* A copy of `text` in the bound subgraph's memory; NULL when out of memory. */
static const char *kept(wick_graph *g, const char *text) {
  size_t len = strlen(text) + 1;
  char *s = wick_graph_alloc(g, len, false);
  if (s != NULL) memcpy(s, text, len);
  return s;
}

/* The delegates' view of row r's operator: the note of the top's delegate, or its reason on
 * the CPU (where it is, then what keeps it off each delegate on its own). */
static void explain(wick_graph *g, wick_report_row *r) {
  wick_interpreter *it = g->interp;
  const wick_node *node = r->in ? &r->in->nodes[r->op] : NULL;
  r->folded = node != NULL && node->folded;
  if (it->num_delegates == 0 || r->folded) return;
  const wick_delegate_graph *view = (const wick_delegate_graph *)r->in;
  const char *restriction = node ? wick_node_offer_why(g, r->in, node) : NULL;
  int32_t part = g->nodes[r->top].partition;
  char why[192];
  if (part >= 0) {
    wick_delegate *d = g->partitions[part].delegate;
    why[0] = 0;
    if (node != NULL && restriction == NULL && wick_delegate_keeps_notes(d) &&
        d->supports_node(d, view, r->op, why, sizeof why)) {
      why[sizeof why - 1] = 0;
      if (why[0]) r->note = kept(g, why);
    }
    return;
  }
  uint32_t n = g->info->num_operators;
  const char *parent_name = (uint32_t)r->parent < n ? op_name_of(g->nodes[r->parent].op)
                                                    : g->report_rows[(uint32_t)r->parent - n].name;
  char text[1024];
  size_t at = (size_t)snprintf(text, sizeof text,
                               "in the %s subgraph of %s (row %d), which runs on the CPU", r->role,
                               parent_name, (int)r->parent);
  if (restriction != NULL) {
    if (at < sizeof text) snprintf(text + at, sizeof text - at, "; %s", restriction);
  } else if (node != NULL) {
    for (size_t di = 0; di < it->num_delegates && at < sizeof text; di++) {
      wick_delegate *d = it->delegates[di];
      why[0] = 0;
      if (d->supports_node(d, view, r->op, why, sizeof why)) continue;
      why[sizeof why - 1] = 0;
      at += (size_t)snprintf(text + at, sizeof text - at, "; %s: %s", d->name,
                             why[0] ? why : "declined");
    }
  }
  r->cpu_why = kept(g, text);
}

void wick_graph_build_report(wick_graph *g) {
  g->report_rows = NULL;
  g->num_report_rows = 0;
  if (g->depth != 0) return;
  wick_mem *mem = &g->interp->mem;
  walker w;
  memset(&w, 0, sizeof w);
  w.g = g;
  w.queue = wick_mem_alloc(mem, WICK_MAX_GRAPHS * sizeof *w.queue);
  if (w.queue == NULL) return; /* the report lists the bound subgraph's operators only */
  walk(&w);
  if (w.count > 0) w.rows = wick_graph_alloc(g, w.count * sizeof *w.rows, true);
  if (w.rows != NULL) {
    walk(&w); /* the same expansions in the same order: the same count */
    g->report_rows = w.rows;
    g->num_report_rows = w.count;
    for (uint32_t i = 0; i < w.count; i++) explain(g, &w.rows[i]);
    for (uint32_t i = 0; i < w.count; i++) w.rows[i].in = NULL; /* not read after building */
  }
  wick_mem_free(mem, w.queue);
}

/* ---------------------------------------------------------------- the accessors */

const char *wick_interpreter_op_delegate(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_node *n = &it->main->nodes[i];
  if (n->partition < 0) return NULL;
  const wick_partition *p = &it->main->partitions[n->partition];
  return p->active ? p->delegate->name : NULL;
}

int wick_interpreter_op_partition(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return -1;
  return it->main->nodes[i].partition;
}

const char *wick_interpreter_op_delegation_note(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_node *n = &it->main->nodes[i];
  if (n->partition < 0 || n->delegation_notes == NULL) return "";
  const wick_partition *p = &it->main->partitions[n->partition];
  if (!p->active && !wick_delegate_plans_only(p->delegate)) return ""; /* fell back: on the CPU */
  for (size_t di = 0; di < it->num_delegates; di++)
    if (it->delegates[di] == p->delegate)
      return n->delegation_notes[di] ? n->delegation_notes[di] : "";
  return "";
}

const char *wick_interpreter_op_delegation_reason(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_node *n = &it->main->nodes[i];
  if (n->partition >= 0) return it->main->partitions[n->partition].why;
  if (it->num_delegates == 0) return "";
  return n->delegation_why ? n->delegation_why : "no delegate was asked";
}

size_t wick_interpreter_partition_count(const wick_interpreter *it) {
  return it ? it->main->num_partitions : 0;
}

size_t wick_interpreter_delegation_row_count(const wick_interpreter *it) {
  return it ? it->main->info->num_operators + it->main->num_report_rows : 0;
}

wick_status wick_interpreter_delegation_row(const wick_interpreter *it, size_t row,
                                            wick_delegation_row *row_out) {
  const size_t first_size = offsetof(wick_delegation_row, note) + sizeof row_out->note;
  if (it == NULL || row_out == NULL || row_out->struct_size < first_size ||
      row >= wick_interpreter_delegation_row_count(it))
    return WICK_ERR_INVALID_ARGUMENT;
  const wick_graph *g = it->main;
  uint32_t n = g->info->num_operators;
  wick_delegation_row out;
  memset(&out, 0, sizeof out);
  out.struct_size = row_out->struct_size;
  if (row < n) {
    out.parent = -1;
    out.role = "";
    out.subgraph = g->subgraph_index;
    out.op = row;
    out.op_name = wick_interpreter_op_name(it, row);
    out.delegate = wick_interpreter_op_delegate(it, row);
    out.partition = wick_interpreter_op_partition(it, row);
    out.reason = wick_interpreter_op_delegation_reason(it, row);
    out.note = wick_interpreter_op_delegation_note(it, row);
  } else {
    const wick_report_row *r = &g->report_rows[row - n];
    out.parent = r->parent;
    out.role = r->role;
    out.subgraph = r->subgraph;
    out.op = r->op;
    out.op_name = r->name;
    out.partition = -1;
    out.reason = "";
    out.note = "";
    int32_t part = g->nodes[r->top].partition;
    if (r->folded) {
      if (it->num_delegates > 0) out.reason = "computed at prepare";
    } else if (part >= 0) {
      const wick_partition *p = &g->partitions[part];
      out.partition = part;
      out.delegate = p->active ? p->delegate->name : NULL;
      out.reason = p->why;
      if ((p->active || wick_delegate_plans_only(p->delegate)) && r->note != NULL)
        out.note = r->note;
    } else if (it->num_delegates > 0) {
      out.reason = r->cpu_why ? r->cpu_why : "no delegate was asked";
    }
  }
  size_t size = row_out->struct_size < sizeof out ? row_out->struct_size : sizeof out;
  memcpy(row_out, &out, size);
  return WICK_OK;
}
