/*
 * interpreter.c — create, prepare and invoke an interpreter; resize its inputs.
 *
 * An interpreter owns one wick_graph for the subgraph of its signature, and
 * child graphs for operators that run other subgraphs. Preparing a graph:
 *
 *   1. tensors take their shapes from the file (inputs keep user resizes);
 *      constants point into the model (copied when misaligned, and when small
 *      and in the file wick mapped: see in_model_mapping);
 *   2. each node resolves its op by (builtin code, version) and runs the op's
 *      prepare, which checks everything and sets output shapes. A node whose
 *      inputs are all known (constants, or outputs of folded nodes) is run
 *      right away and its outputs become constants ("folding": shape
 *      arithmetic, weight dequantization). A node whose output shape depends
 *      on run-time data is marked dynamic: it is prepared again at invoke,
 *      and so is everything downstream of it;
 *   3. with delegates, delegate.c offers the nodes to them and forms the
 *      partitions and the execution order (every node stays prepared for the
 *      CPU: the fallback); fuse.c fuses what runs on the CPU;
 *   4. plan.c packs the remaining tensors into one arena by lifetime, and
 *      each delegate prepares its partitions.
 *
 * Invoke then only runs kernels (and delegate partitions, rerun on the CPU when
 * they fail), checking the cancel flag between nodes.
 * What an op calls on the core (inputs, outputs, memory, errors) is in
 * op_ctx.c; what a caller reads back (sizes, profiles, tensors) is in accessors.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "format/schema.h"

WICK_INTERNAL wick_status wick_plan_arena(wick_graph *graph, size_t *arena_size);

/* ---------------------------------------------------------------- errors */

static wick_status interp_fail(wick_interpreter *it, wick_status st, const char *fmt, ...)
    WICK_PRINTF(3, 4);
static wick_status interp_fail(wick_interpreter *it, wick_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(it->error, sizeof it->error, fmt, ap);
  va_end(ap);
  return st;
}

static void list_free_all(wick_mem *mem, wick_alloc_list *list) {
  for (size_t i = 0; i < list->count; i++) wick_mem_free(mem, list->items[i]);
  list->count = 0;
}

static void *list_alloc(wick_mem *mem, wick_alloc_list *list, size_t size, bool zero) {
  if (list->count == list->cap) {
    size_t cap = list->cap ? list->cap * 2 : 16;
    void **items = wick_mem_alloc(mem, cap * sizeof(void *));
    if (items == NULL) return NULL;
    if (list->count) memcpy(items, list->items, list->count * sizeof(void *));
    wick_mem_free(mem, list->items);
    list->items = items;
    list->cap = cap;
  }
  void *p = wick_mem_alloc(mem, size ? size : 1);
  if (p == NULL) return NULL;
  if (zero) memset(p, 0, size);
  list->items[list->count++] = p;
  return p;
}

/* Allocations of a graph: until the next prepare, or, for dynamic nodes
 * prepared during invoke, until the next invoke. */
void *wick_graph_alloc(wick_graph *g, size_t size, bool zero) {
  return list_alloc(&g->interp->mem, g->in_invoke ? &g->invoke_allocs : &g->prepared_allocs, size,
                    zero);
}

static void *graph_alloc(wick_graph *g, size_t size) { return wick_graph_alloc(g, size, true); }

/* ---------------------------------------------------------------- graphs */

static void graph_destroy(wick_graph *g);

static void graph_reset(wick_graph *g) {
  wick_mem *mem = &g->interp->mem;
  wick_graph_free_partitions(g); /* the delegates' states first: they may point into g */
  for (uint32_t i = 0; i < g->info->num_operators; i++) {
    wick_node *n = &g->nodes[i];
    for (int c = 0; c < 2; c++) {
      graph_destroy(n->child[c]);
      n->child[c] = NULL;
    }
    n->user_data = NULL;
    n->scratch_bytes = 0;
    n->macs = 0;
    n->kernel_kind = WICK_KERNEL_UNMARKED;
    n->kernel_name = NULL;
    n->folded = false;
    n->dynamic = false;
    n->fused = false;
    n->stateful = false;
    memset(&n->fusion, 0, sizeof n->fusion);
    n->partition = -1;
    n->delegation_why = NULL;
  }
  list_free_all(mem, &g->prepared_allocs);
  list_free_all(mem, &g->invoke_allocs);
  g->report_rows = NULL; /* (in prepared_allocs) */
  g->num_report_rows = 0;
  memset(g->packed_chunks, 0, sizeof g->packed_chunks);
  g->packed_slack = 0;
  g->dropped_bytes = 0;
  for (uint32_t i = 0; i < g->info->num_tensors; i++) {
    wick_tensor *t = &g->tensors[i];
    if (t->alloc == WICK_ALLOC_DYNAMIC) wick_mem_free(mem, t->data);
    t->data = NULL;
    t->alloc = WICK_ALLOC_NONE;
    t->capacity = 0;
    t->known = false;
  }
  wick_mem_free(mem, g->arena);
  g->arena = NULL;
  g->arena_size = 0;
  g->prepared = false;
}

static void graph_destroy(wick_graph *g) {
  if (g == NULL) return;
  wick_mem *mem = &g->interp->mem;
  graph_reset(g);
  wick_mem_free(mem, g->prepared_allocs.items);
  wick_mem_free(mem, g->invoke_allocs.items);
  wick_mem_free(mem, g->tensors);
  wick_mem_free(mem, g->nodes);
  g->interp->num_graphs--;
  wick_mem_free(mem, g);
}

static wick_graph *graph_new(wick_interpreter *it, uint32_t subgraph, int depth) {
  const wick_subgraph_info *info = &it->model->subgraphs[subgraph];
  wick_graph *g = wick_mem_calloc(&it->mem, 1, sizeof *g);
  if (g == NULL) return NULL;
  g->interp = it;
  g->info = info;
  g->subgraph_index = subgraph;
  g->depth = depth;
  g->tensors =
      wick_mem_calloc(&it->mem, info->num_tensors ? info->num_tensors : 1, sizeof(wick_tensor));
  g->nodes =
      wick_mem_calloc(&it->mem, info->num_operators ? info->num_operators : 1, sizeof(wick_node));
  if (g->tensors == NULL || g->nodes == NULL) {
    wick_mem_free(&it->mem, g->tensors);
    wick_mem_free(&it->mem, g->nodes);
    wick_mem_free(&it->mem, g);
    return NULL;
  }
  it->num_graphs++;
  for (uint32_t i = 0; i < info->num_tensors; i++) {
    wick_tensor *t = &g->tensors[i];
    t->info = &info->tensors[i];
    t->name = t->info->name;
    t->type = (wick_dtype)t->info->type;
    t->rank = t->info->rank;
    memcpy(t->dims, t->info->dims, sizeof t->dims);
  }
  for (uint32_t i = 0; i < info->num_operators; i++) {
    g->nodes[i].op = &info->operators[i];
    g->nodes[i].index = i;
    g->nodes[i].partition = -1;
  }
  g->num_inputs = info->num_inputs;
  g->inputs = info->inputs;
  g->num_outputs = info->num_outputs;
  g->outputs = info->outputs;
  return g;
}

/* Storage for a tensor owned by the graph (persistent for this prepare): zeroed, or, when the
 * caller writes all of it right away (`written`: a copy, a folded op's output, which an op
 * writes in full as it does into the arena), large ones prefaulted instead. */
static wick_status give_storage(wick_graph *g, wick_tensor *t, wick_alloc_kind kind, bool written) {
  const bool prefault =
      written && t->bytes >= ((size_t)64 << 10) && wick_mem_huge_blocks(&g->interp->mem);
  void *p = wick_graph_alloc(g, t->bytes, !prefault);
  if (p != NULL && prefault) wick_mem_prefault(p, t->bytes);
  if (p == NULL)
    return interp_fail(g->interp, WICK_ERR_OUT_OF_MEMORY,
                       "out of memory allocating %zu bytes for tensor %s", t->bytes, t->name);
  t->data = p;
  t->alloc = kind;
  t->capacity = t->bytes;
  return WICK_OK;
}

/* A variable (state) tensor starts at real value 0: zero bytes for floats,
 * the zero point for quantized integers (as LiteRT resets them). */
static void reset_variable(wick_tensor *t) {
  const wick_quant *q = &t->info->quant;
  int64_t zp = q->count > 0 ? q->zero_point[0] : 0;
  size_t n = wick_dtype_size(t->type) ? t->bytes / wick_dtype_size(t->type) : 0;
  if (zp == 0 || n == 0) return; /* storage is already zeroed */
  if (t->type == WICK_DTYPE_INT8) {
    memset(t->data, (int)(int8_t)zp, n);
  } else if (t->type == WICK_DTYPE_UINT8) {
    memset(t->data, (int)(uint8_t)zp, n);
  } else if (t->type == WICK_DTYPE_INT16) {
    int16_t *d = t->data;
    for (size_t i = 0; i < n; i++) d[i] = (int16_t)zp;
  }
}

/* Whether input i of `op` may be a sparse tensor: DENSIFY's input, and the
 * constant weights of FULLY_CONNECTED (densified by prepare_tensors, where
 * LiteRT runs a sparse kernel). Every other op refuses sparse inputs, as
 * most of LiteRT's do. */
static bool reads_sparse(const wick_operator_info *op, uint32_t i, const wick_tensor_info *t) {
  if (op->builtin == WICK_BUILTIN_DENSIFY) return i == 0;
  return op->builtin == WICK_BUILTIN_FULLY_CONNECTED && i == 1 && t->data != NULL;
}

/* Constants under this size that lie in the model file wick mapped are copied into the
 * interpreter's memory when bound. An op that reads such a constant at invoke (an RMSNorm
 * weight, a mask) would fault in the file page it lies on, and a kernel that caches the file
 * in large folios maps the whole folio on that fault (Linux 6.18 on ext4: 2 MiB per RMSNorm
 * weight of a few KiB, ~120 MB of SmolLM2-135M's file back in memory after the packing gave
 * it up). The copies cost what the constants weigh. */
#define SMALL_CONSTANT_COPY_BYTES ((size_t)16 << 10)

static bool in_model_mapping(const wick_model *m, const void *data) {
  const uintptr_t p = (uintptr_t)data, base = (uintptr_t)m->mapping;
  return m->mapping != NULL && p >= base && p - base < m->mapping_size;
}

static wick_status prepare_tensors(wick_graph *g) {
  /* Which tensors are graph inputs: one pass, not a search per tensor (a
   * file may list a million inputs). Freed with the next prepare. */
  uint32_t nt = g->info->num_tensors;
  bool *is_input = graph_alloc(g, nt ? nt : 1);
  bool *densify = graph_alloc(g, nt ? nt : 1); /* sparse FULLY_CONNECTED weights */
  if (is_input == NULL || densify == NULL)
    return interp_fail(g->interp, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  for (uint32_t i = 0; i < g->num_inputs; i++) is_input[g->inputs[i]] = true;
  for (uint32_t k = 0; k < g->info->num_operators; k++) {
    const wick_operator_info *op = &g->info->operators[k];
    if (op->builtin == WICK_BUILTIN_FULLY_CONNECTED && op->num_inputs > 1 && op->inputs[1] >= 0 &&
        g->tensors[op->inputs[1]].info->sparsity != NULL)
      densify[op->inputs[1]] = true;
  }
  for (uint32_t i = 0; i < nt; i++) {
    wick_tensor *t = &g->tensors[i];
    const wick_tensor_info *info = t->info;
    if (!is_input[i]) {
      t->rank = info->rank;
      memcpy(t->dims, info->dims, sizeof t->dims);
    }
    size_t esize = wick_dtype_size(t->type);
    size_t bytes = 0;
    if (esize != 0) {
      char why[128];
      if (wick_check_shape(t->rank, t->dims, t->type, &bytes, why, sizeof why) != WICK_OK)
        return interp_fail(g->interp, WICK_ERR_MALFORMED_MODEL, "tensor %u (%s): %s", i, t->name,
                           why);
    }
    t->bytes = bytes;
    if (info->data != NULL) {
      t->known = true;
      bool reshaped = t->rank != info->rank ||
                      memcmp(t->dims, info->dims, (size_t)t->rank * sizeof(int32_t)) != 0;
      if (is_input[i] && reshaped)
        return interp_fail(g->interp, WICK_ERR_INVALID_ARGUMENT,
                           "input tensor %u (%s) holds constant data in the file, so its shape "
                           "cannot change",
                           i, t->name);
      if (info->sparsity != NULL) {
        if (is_input[i])
          return interp_fail(g->interp, WICK_ERR_UNSUPPORTED_OP,
                             "input tensor %u (%s) is a sparse constant; wick cannot feed it", i,
                             t->name);
        if (densify[i] && esize != 0) {
          wick_status st = give_storage(g, t, WICK_ALLOC_PERSISTENT, false);
          if (st) return st;
          wick_sparse_densify(info, esize, t->data);
        } else {
          /* Only DENSIFY reads it (through info): bytes are what is stored. */
          t->data = (void *)(uintptr_t)info->data;
          t->alloc = WICK_ALLOC_CONSTANT;
          t->bytes = info->data_size;
        }
        continue;
      }
      /* Constant buffers are often only 4-byte aligned: copy rather than
       * read wider types through a misaligned pointer. A graph input that
       * the file gives data is copied too: callers write inputs, and the
       * file's bytes may be a read-only mapping. (esize == 0: a string or
       * unknown type no op reads as numbers; it keeps pointing at the file.) */
      if (esize != 0 && (is_input[i] || (esize > 1 && ((uintptr_t)info->data % esize) != 0) ||
                         (info->data_size < SMALL_CONSTANT_COPY_BYTES &&
                          in_model_mapping(g->interp->model, info->data)))) {
        wick_status st = give_storage(g, t, WICK_ALLOC_PERSISTENT, info->data_size == t->bytes);
        if (st) return st;
        memcpy(t->data, info->data, info->data_size);
      } else {
        t->data = (void *)(uintptr_t)info->data;
        t->alloc = WICK_ALLOC_CONSTANT;
      }
    } else if (info->is_variable) {
      wick_status st = give_storage(g, t, WICK_ALLOC_PERSISTENT, false);
      if (st) return st;
      reset_variable(t);
    }
  }
  /* Copying the small constants faulted in the folios they lie on (most of the file, for an
   * LLM with a norm weight in each layer): give the mapping's pages back before the ops pack
   * the weights. It is a private read-only mapping of the file, so whatever reads it later
   * (the packing, an op reading a large constant in place) reads the same bytes back. */
  const wick_model *m = g->interp->model;
  if (m->mapping != NULL) wick_mem_drop_pages((void *)(uintptr_t)m->mapping, m->mapping_size);
  return WICK_OK;
}

wick_status wick_graph_ensure_dynamic(wick_graph *g, wick_tensor *t) {
  if (t->alloc == WICK_ALLOC_DYNAMIC && t->capacity >= t->bytes) return WICK_OK;
  wick_mem *mem = &g->interp->mem;
  if (t->alloc == WICK_ALLOC_DYNAMIC) wick_mem_free(mem, t->data);
  t->data = wick_mem_alloc(mem, t->bytes ? t->bytes : 1);
  if (t->data == NULL) {
    t->alloc = WICK_ALLOC_NONE;
    t->capacity = 0;
    return interp_fail(g->interp, WICK_ERR_OUT_OF_MEMORY,
                       "out of memory allocating %zu bytes for tensor %s", t->bytes, t->name);
  }
  t->alloc = WICK_ALLOC_DYNAMIC;
  t->capacity = t->bytes;
  return WICK_OK;
}

static wick_status resolve_op(wick_graph *g, wick_node *n) {
  const wick_operator_info *op = n->op;
  wick_op_ctx ctx = {g, n, &op->params};
  char why[200];
  const wick_op_def *def = wick_op_lookup(op, why, sizeof why);
  if (def == NULL) return wick_op_fail(&ctx, WICK_ERR_UNSUPPORTED_OP, "%s", why);
  for (uint32_t i = 0; i < op->num_inputs; i++) {
    const wick_tensor_info *t = op->inputs[i] >= 0 ? g->tensors[op->inputs[i]].info : NULL;
    if (t != NULL && t->sparsity != NULL && !reads_sparse(op, i, t))
      return wick_op_fail(&ctx, WICK_ERR_UNSUPPORTED_OP,
                          "input %u (%s) is a sparse tensor; wick reads sparse tensors only "
                          "through DENSIFY and as constant FULLY_CONNECTED weights",
                          i, t->name);
  }
  n->def = def;
  return WICK_OK;
}

static wick_status run_node(wick_graph *g, wick_node *n);

/* What a node reports before its prepare records a kernel (wick_op_set_kernel). */
static uint8_t default_kernel_kind(const wick_node *n) {
  return wick_op_has(n->def, WICK_OP_REFERENCE_KERNELS) ? WICK_KERNEL_REFERENCE
                                                        : WICK_KERNEL_UNMARKED;
}

/* One node of prepare_nodes: resolve, prepare (or mark dynamic), fold when
 * every input is known. */
static wick_status prepare_node(wick_graph *g, wick_node *n, bool *dynamic_tensor,
                                wick_pad_folder *pads) {
  wick_status st = resolve_op(g, n);
  if (st) return st;
  const wick_operator_info *op = n->op;
  bool deps_dynamic = false, all_known = true;
  for (uint32_t k = 0; k < op->num_inputs; k++) {
    int32_t x = op->inputs[k];
    if (x < 0) continue;
    if (dynamic_tensor[x]) deps_dynamic = true;
    if (!g->tensors[x].known) all_known = false;
  }
  wick_op_ctx ctx = {g, n, &op->params};
  if (!deps_dynamic) {
    if (pads) wick_pad_folder_fold(pads, n);
    n->kernel_kind = default_kernel_kind(n);
    n->kernel_name = NULL;
    st = n->def->prepare(&ctx);
    if (st == WICK_STATUS_DEFER) {
      if (pads) wick_pad_folder_unfold(pads, n);
      deps_dynamic = true;
    } else if (st != WICK_OK) {
      return st;
    }
  }
  if (deps_dynamic) {
    n->dynamic = true;
    for (uint32_t k = 0; k < op->num_outputs; k++) dynamic_tensor[op->outputs[k]] = true;
    return WICK_OK;
  }
  /* An output that already has storage is a variable tensor (given its
   * file shape by prepare_tensors); the op must not have grown it. */
  for (uint32_t k = 0; k < op->num_outputs; k++) {
    wick_tensor *t = &g->tensors[op->outputs[k]];
    if (t->alloc != WICK_ALLOC_NONE && t->bytes > t->capacity)
      return wick_op_fail(&ctx, WICK_ERR_MALFORMED_MODEL,
                          "output %u (%s) is a variable tensor of %zu bytes, but the op "
                          "produces %zu",
                          k, t->name, t->capacity, t->bytes);
  }
  bool stateful = false;
  for (uint32_t k = 0; k < op->num_inputs; k++)
    if (op->inputs[k] >= 0 && g->tensors[op->inputs[k]].info->is_variable) stateful = true;
  /* (a node that reads only its inputs' shapes, static here, folds like one on constants:
   * SHAPE in front of a RESHAPE would otherwise make everything after it dynamic) */
  if (wick_op_has(n->def, WICK_OP_READS_SHAPES_ONLY)) all_known = true;
  if (all_known && !stateful && !n->stateful && n->child[0] == NULL) {
    /* Fold: compute now, keep the result as a constant. */
    for (uint32_t k = 0; k < op->num_outputs; k++) {
      wick_tensor *t = &g->tensors[op->outputs[k]];
      if ((st = give_storage(g, t, WICK_ALLOC_PERSISTENT, true))) return st;
    }
    if ((st = run_node(g, n))) return st;
    for (uint32_t k = 0; k < op->num_outputs; k++) g->tensors[op->outputs[k]].known = true;
    n->folded = true;
    /* it never runs again: its constant inputs (a DEQUANTIZE's float16 weights) need not stay
     * resident beside the folded result */
    for (uint32_t k = 0; k < op->num_inputs; k++) wick_graph_release_input(g, op->inputs[k]);
  }
  return WICK_OK;
}

static wick_status prepare_nodes(wick_graph *g) {
  bool *dynamic_tensor = NULL; /* tensors whose shape is only known at invoke */
  uint32_t nt = g->info->num_tensors;
  dynamic_tensor = graph_alloc(g, nt ? nt : 1);
  if (dynamic_tensor == NULL)
    return interp_fail(g->interp, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  /* (no PAD folding with delegates: a delegate must see the PAD and its consumer as the
   * file has them) */
  wick_pad_folder *pads =
      g->interp->no_fusion || g->interp->num_delegates > 0 ? NULL : wick_pad_folder_create(g);
  /* who may still read each tensor (wick_graph_release_input) */
  g->readers = graph_alloc(g, (nt ? nt : 1) * sizeof(uint32_t));
  if (g->readers == NULL) {
    wick_pad_folder_destroy(pads);
    return interp_fail(g->interp, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (uint32_t i = 0; i < g->info->num_operators; i++)
    for (uint32_t k = 0; k < g->nodes[i].op->num_inputs; k++)
      if (g->nodes[i].op->inputs[k] >= 0) g->readers[g->nodes[i].op->inputs[k]]++;
  for (uint32_t i = 0; i < g->num_inputs; i++) g->readers[g->inputs[i]]++;
  for (uint32_t i = 0; i < g->num_outputs; i++) g->readers[g->outputs[i]]++;
  wick_status st = WICK_OK;
  for (uint32_t i = 0; i < g->info->num_operators && st == WICK_OK; i++)
    st = prepare_node(g, &g->nodes[i], dynamic_tensor, pads);
  wick_pad_folder_destroy(pads);
  g->readers = NULL;
  return st;
}

static wick_status size_scratch(wick_interpreter *it, wick_graph *g) {
  size_t need = 0;
  for (uint32_t i = 0; i < g->info->num_operators; i++)
    if (g->nodes[i].scratch_bytes > need) need = g->nodes[i].scratch_bytes;
  if (need <= it->scratch_size) return WICK_OK;
  wick_mem_free(&it->mem, it->scratch);
  it->scratch = wick_mem_alloc(&it->mem, need);
  it->scratch_size = it->scratch ? need : 0;
  if (it->scratch == NULL)
    return interp_fail(it, WICK_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes of scratch",
                       need);
  return WICK_OK;
}

/* After prepare no more weights are packed into the open chunks: their
 * untouched tails go back to the OS, including the part of the last touched
 * (possibly huge) page that holds nothing (up to 2 MiB of RSS otherwise). */
static void release_packed_tails(wick_graph *g) {
  for (size_t i = 0; i < sizeof g->packed_chunks / sizeof g->packed_chunks[0]; i++) {
    struct wick_packed_chunk *c = &g->packed_chunks[i];
    if (c->left > 0) wick_mem_drop_pages(c->next, c->left);
    c->next = NULL;
    c->left = 0; /* still counted in packed_slack: allocated, not resident */
  }
}

static wick_status graph_prepare(wick_graph *g) {
  graph_reset(g);
  if (g == g->interp->main) g->interp->num_shared_packs = 0; /* they pointed into g */
  wick_status st;
  if ((st = prepare_tensors(g))) return st;
  if ((st = prepare_nodes(g))) return st;
  release_packed_tails(g);
  wick_graph_partition(g);    /* delegate.c: which nodes run on delegates, and the order */
  wick_graph_build_report(g); /* delegation_report.c: the operators inside subgraphs */
  if (!g->interp->no_fusion) wick_graph_fuse(g);
  /* Scratch used while folding was sized by run_node; size again for invoke. */
  if ((st = size_scratch(g->interp, g))) return st;
  size_t arena_size = 0;
  if ((st = wick_plan_arena(g, &arena_size))) return st;
  wick_graph_prepare_partitions(g);
  g->prepared = true;
  return WICK_OK;
}

wick_status wick_graph_create_child(const wick_op_ctx *ctx, uint32_t subgraph, int slot,
                                    wick_graph **child_out) {
  wick_graph *g = ctx->graph;
  *child_out = NULL;
  if (subgraph >= g->interp->model->num_subgraphs)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "subgraph %u does not exist", subgraph);
  if (slot < 0 || slot > 1)
    return wick_op_fail(ctx, WICK_ERR_INVALID_ARGUMENT, "internal: child slot %d", slot);
  if (g->depth + 1 > WICK_MAX_NESTING)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "subgraphs nest deeper than %d",
                        WICK_MAX_NESTING);
  /* Subgraph calls form a DAG (checked at load), but a DAG can still fan
   * out exponentially (two calls per level, 16 levels): cap the instances. */
  if (g->interp->num_graphs >= WICK_MAX_GRAPHS)
    return wick_op_fail(ctx, WICK_ERR_UNSUPPORTED_OP,
                        "the model needs more than %d subgraph instances", WICK_MAX_GRAPHS);
  wick_graph *child = graph_new(g->interp, subgraph, g->depth + 1);
  if (child == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  graph_destroy(ctx->node->child[slot]);
  ctx->node->child[slot] = child;
  *child_out = child;
  return WICK_OK;
}

wick_status wick_graph_prepare_with_inputs(wick_graph *child, const wick_op_ctx *ctx,
                                           wick_tensor *const *inputs, size_t n) {
  if (n != child->num_inputs)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "passes %zu inputs to subgraph %u, which takes %u", n,
                        child->subgraph_index, child->num_inputs);
  for (size_t i = 0; i < n; i++) {
    wick_tensor *dst = &child->tensors[child->inputs[i]];
    if (inputs[i] == NULL || inputs[i]->type != dst->type)
      return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                          "input %zu does not match the type of subgraph %u's input", i,
                          child->subgraph_index);
    dst->rank = inputs[i]->rank;
    memcpy(dst->dims, inputs[i]->dims, sizeof dst->dims);
  }
  wick_status st = graph_prepare(child);
  if (st != WICK_OK) return st;
  for (uint32_t i = 0; i < child->info->num_operators; i++)
    if (child->nodes[i].scratch_bytes > ctx->node->scratch_bytes)
      ctx->node->scratch_bytes = child->nodes[i].scratch_bytes;
  return WICK_OK;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Moves what the thread pool counted while node n ran into n->threads. */
static void record_thread_stats(wick_interpreter *it, wick_node *n) {
  wick_pool_stats s;
  wick_thread_pool_take_stats(it->pool, &s);
  wick_op_thread_stats t = {.jobs = s.jobs, .tasks = s.tasks, .parallel_ns = s.parallel_ns};
  for (size_t k = 0; k < wick_thread_pool_threads(it->pool); k++) {
    t.busy_sum_ns += s.busy_ns[k];
    if (s.busy_ns[k] > t.busy_max_ns) t.busy_max_ns = s.busy_ns[k];
  }
  n->threads = t;
}

/* True when the node has outputs and every one of them is empty. A node that
 * runs subgraphs always runs: a dynamic IF or WHILE sizes its outputs only
 * while it runs. So does a stateful node (an empty READ_VARIABLE still
 * checks that its variable was assigned). */
static bool outputs_all_empty(const wick_graph *g, const wick_node *n) {
  if (n->op->num_outputs == 0 || n->child[0] != NULL || n->stateful) return false;
  for (uint32_t k = 0; k < n->op->num_outputs; k++)
    if (wick_tensor_elements(&g->tensors[n->op->outputs[k]]) != 0) return false;
  return true;
}

static wick_status run_node(wick_graph *g, wick_node *n) {
  /* Nothing to compute: an empty output may still have huge other dims
   * ([771751937, 0, 4, 18]), and kernels loop over the outer ones. */
  if (outputs_all_empty(g, n)) return WICK_OK;
  wick_op_ctx ctx = {g, n, &n->op->params};
  /* (only when this node needs more than there is: the scan over every node, run before each
   * node, was ~15 % of an LLM decode step, whose graph has ~1700 nodes) */
  if (n->scratch_bytes > g->interp->scratch_size) {
    wick_status st = size_scratch(g->interp, g);
    if (st) return st;
  }
  if (wick_node_runs_fused(n)) return wick_fused_invoke(&ctx);
  return n->def->invoke(&ctx);
}

wick_status wick_graph_invoke(wick_graph *g) {
  wick_interpreter *it = g->interp;
  if (!g->prepared) return interp_fail(it, WICK_ERR_INVALID_ARGUMENT, "the graph is not prepared");
  list_free_all(&it->mem, &g->invoke_allocs);
  for (uint32_t pos = 0; pos < g->info->num_operators; pos++) {
    uint32_t i = wick_graph_node_at(g, pos);
    wick_node *n = &g->nodes[i];
    wick_status st;
    if (n->partition >= 0 && g->partitions[n->partition].active &&
        pos == g->partitions[n->partition].start) {
      /* A delegate's partition runs as one step; when it fails, its nodes run on the CPU
       * below, from this position on (delegate.c). */
      wick_partition *p = &g->partitions[n->partition];
      if (atomic_load_explicit(&it->cancelled, memory_order_relaxed))
        return interp_fail(it, WICK_ERR_CANCELLED, "invoke was cancelled before operator %u", i);
      uint64_t t0 = it->profiling ? now_ns() : 0;
      if (wick_partition_invoke(g, p, &st)) {
        if (it->profiling) {
          for (uint32_t k = p->start; k < p->end; k++) g->nodes[g->order[k]].time_ns = 0;
          n->time_ns = now_ns() - t0;
        }
        pos = p->end - 1;
        continue;
      }
      if (st != WICK_OK)
        return interp_fail(it, st, "invoke was cancelled in partition %zu (%s)", p->desc.id,
                           p->delegate->name);
    }
    if (n->folded || n->fused) continue;
    if (atomic_load_explicit(&it->cancelled, memory_order_relaxed))
      return interp_fail(it, WICK_ERR_CANCELLED, "invoke was cancelled before operator %u", i);
    wick_op_ctx ctx = {g, n, &n->op->params};
    if (n->dynamic) {
      g->in_invoke = true;
      n->kernel_kind = default_kernel_kind(n);
      n->kernel_name = NULL;
      st = n->def->prepare(&ctx);
      g->in_invoke = false;
      if (st == WICK_STATUS_DEFER)
        return wick_op_fail(&ctx, WICK_ERR_INVALID_INPUT,
                            "output shape could not be computed from the input values");
      if (st != WICK_OK) return st;
      for (uint32_t k = 0; k < n->op->num_outputs; k++)
        if ((st = wick_graph_ensure_dynamic(g, &g->tensors[n->op->outputs[k]]))) return st;
    }
    uint64_t t0 = it->profiling ? now_ns() : 0;
    if ((st = run_node(g, n))) return st;
    if (it->profiling) {
      n->time_ns = now_ns() - t0;
      record_thread_stats(it, n);
    }
  }
  return WICK_OK;
}

/* ---------------------------------------------------------------- public API */

wick_interpreter_options wick_interpreter_options_default(void) {
  wick_interpreter_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = 1;
  return o;
}

/* The size of wick_interpreter_options in its first version (0.1): struct_size
 * through weight_cache_path. */
#define INTERPRETER_OPTIONS_FIRST_SIZE \
  (offsetof(wick_interpreter_options, weight_cache_path) + sizeof(const char *))

static const wick_signature_info *find_signature(const wick_model *m, const char *key) {
  if (key == NULL) return m->num_signatures ? &m->signatures[0] : NULL;
  for (uint32_t i = 0; i < m->num_signatures; i++)
    if (strcmp(m->signatures[i].key, key) == 0) return &m->signatures[i];
  return NULL;
}

wick_status wick_interpreter_create(const wick_model *model, const char *signature_key,
                                    const wick_interpreter_options *options, wick_error_info *error,
                                    wick_interpreter **interpreter_out) {
  if (interpreter_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *interpreter_out = NULL;
  if (error) error->message[0] = 0;
  if (model == NULL) {
    if (error) wick_format_message(error->message, sizeof error->message, "model is NULL");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  const wick_signature_info *sig = find_signature(model, signature_key);
  if (signature_key != NULL && sig == NULL) {
    if (error)
      wick_format_message(error->message, sizeof error->message,
                          "the model has no signature \"%s\"", signature_key);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  wick_interpreter_options o = wick_interpreter_options_default();
  if (options != NULL) {
    char message[256];
    wick_status rst = wick_read_options(options, INTERPRETER_OPTIONS_FIRST_SIZE, sizeof o, &o,
                                        "wick_interpreter_options", message, sizeof message);
    if (rst != WICK_OK) {
      if (error) wick_format_message(error->message, sizeof error->message, "%s", message);
      return rst;
    }
  }
  wick_interpreter *owner = o.share_variables_with;
  if (owner != NULL && (owner->model != model || owner->state_owner != NULL)) {
    if (error)
      wick_format_message(error->message, sizeof error->message,
                          owner->model != model
                              ? "share_variables_with names an interpreter of another model"
                              : "share_variables_with names an interpreter that itself shares "
                                "another's variables: name that one");
    return WICK_ERR_INVALID_ARGUMENT;
  }
  wick_mem mem;
  wick_mem_init(&mem, &o.allocator, o.memory_limit_bytes);
  wick_interpreter *it = wick_mem_calloc(&mem, 1, sizeof *it);
  if (it == NULL) {
    if (error) wick_format_message(error->message, sizeof error->message, "out of memory");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  it->mem = mem;
  it->model = model;
  it->options = o;
  it->signature = sig;
  it->state_owner = owner;
  it->options.share_variables_with = NULL; /* borrowed; state_owner holds it */
  if (owner != NULL) owner->sharers++;
  wick_status dst = wick_delegates_adopt(it, &o);
  it->options.delegates = it->delegates; /* the caller's array is borrowed */
  if (dst != WICK_OK) {
    if (error) wick_format_message(error->message, sizeof error->message, "%s", it->error);
    wick_interpreter_destroy(it);
    return dst;
  }
  const char *env = getenv("WICK_FORCE_REFERENCE");
  it->force_reference = o.force_reference_kernels || (env && env[0] == '1');
  env = getenv("WICK_NO_FUSION");
  it->no_fusion = it->force_reference || (env && env[0] == '1');
  env = getenv("WICK_NO_IN_PLACE");
  it->no_in_place = it->no_fusion || (env && env[0] == '1');
  env = getenv("WICK_NO_WINOGRAD");
  it->no_winograd = env && env[0] == '1';
  env = getenv("WICK_NO_ATTENTION_FUSION");
  it->no_attention_fusion = env && env[0] == '1';
  atomic_init(&it->cancelled, 0);

  uint32_t subgraph = sig ? sig->subgraph : 0;
  wick_status st = WICK_OK;
  if (o.weight_cache_path != NULL && o.weight_cache_path[0] != 0) {
    st = wick_weight_cache_open(it, o.weight_cache_path);
    it->options.weight_cache_path = it->cache.path; /* the caller's string is borrowed */
  } else {
    it->options.weight_cache_path = NULL;
  }
  if (st != WICK_OK) {
    st = interp_fail(it, st, "out of memory opening the weight cache");
  } else if ((st = wick_thread_pool_create(&it->mem, o.num_threads, &it->pool)) != WICK_OK) {
    st = interp_fail(it, st, "out of memory starting %d threads", o.num_threads);
  } else if ((it->main = graph_new(it, subgraph, 0)) == NULL) {
    st = interp_fail(it, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  } else if (sig) {
    /* A signature names and orders the inputs and outputs. */
    it->main->num_inputs = sig->num_inputs;
    it->main->inputs = sig->input_tensors;
    it->main->num_outputs = sig->num_outputs;
    it->main->outputs = sig->output_tensors;
    for (uint32_t i = 0; i < sig->num_inputs; i++)
      it->main->tensors[sig->input_tensors[i]].name = sig->input_names[i];
    for (uint32_t i = 0; i < sig->num_outputs; i++)
      it->main->tensors[sig->output_tensors[i]].name = sig->output_names[i];
  }
  if (st == WICK_OK) st = graph_prepare(it->main);
  if (st == WICK_OK) wick_weight_cache_finish_prepare(it);
  if (st != WICK_OK) {
    if (error) wick_format_message(error->message, sizeof error->message, "%s", it->error);
    wick_interpreter_destroy(it);
    return st;
  }
  *interpreter_out = it;
  return WICK_OK;
}

void wick_interpreter_destroy(wick_interpreter *it) {
  if (it == NULL) return;
  wick_thread_pool_destroy(it->pool);
  graph_destroy(it->main);
  wick_variables_destroy(it);
  if (it->state_owner != NULL) it->state_owner->sharers--;
  wick_mem_free(&it->mem, it->shared_packs);
  wick_mem_free(&it->mem, it->delegates);
  wick_weight_cache_close(it); /* the graphs pointed into its mapping */
  wick_mem_free(&it->mem, it->scratch);
  wick_mem mem = it->mem;
  wick_mem_free(&mem, it);
}

const char *wick_interpreter_last_error(const wick_interpreter *it) { return it ? it->error : ""; }

size_t wick_interpreter_input_count(const wick_interpreter *it) {
  return it ? it->main->num_inputs : 0;
}

size_t wick_interpreter_output_count(const wick_interpreter *it) {
  return it ? it->main->num_outputs : 0;
}

wick_tensor *wick_interpreter_input(wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->num_inputs) return NULL;
  return &it->main->tensors[it->main->inputs[i]];
}

const wick_tensor *wick_interpreter_output(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->num_outputs) return NULL;
  return &it->main->tensors[it->main->outputs[i]];
}

static int find_named(const wick_graph *g, const int32_t *list, uint32_t n, const char *name) {
  if (name == NULL) return -1;
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(g->tensors[list[i]].name, name) == 0) return (int)i;
  return -1;
}

int wick_interpreter_input_index(const wick_interpreter *it, const char *name) {
  return it ? find_named(it->main, it->main->inputs, it->main->num_inputs, name) : -1;
}

int wick_interpreter_output_index(const wick_interpreter *it, const char *name) {
  return it ? find_named(it->main, it->main->outputs, it->main->num_outputs, name) : -1;
}

/* Storage a caller writes through wick_tensor_copy_from. */
static bool writable(const wick_tensor *t) {
  return t->data != NULL && t->alloc != WICK_ALLOC_NONE && t->alloc != WICK_ALLOC_CONSTANT;
}

/* The graph inputs live in the activation arena, which a prepare frees and
 * plans anew (at a new address, with the inputs at new offsets). A resize
 * keeps the other inputs' values, as an invoke does: save_inputs copies
 * every input's shape and bytes out before the prepare, restore_inputs
 * copies the bytes back into each input whose shape is unchanged. Without
 * it, a caller that writes each input right after resizing it (the Python
 * binding does) ran on whatever the new arena held for the inputs written
 * earlier: out-of-range gather indices or silently wrong outputs, depending
 * on where the new plan happened to put them. */
typedef struct saved_input {
  int32_t rank, dims[WICK_MAX_RANK];
  size_t bytes; /* 0: nothing saved */
} saved_input;

static wick_status save_inputs(wick_interpreter *it, saved_input **saved_out) {
  const wick_graph *g = it->main;
  size_t total = 0;
  *saved_out = NULL;
  if (g->num_inputs == 0) return WICK_OK;
  bool ok = wick_mul_size(g->num_inputs, sizeof(saved_input), &total);
  for (uint32_t k = 0; k < g->num_inputs && ok; k++) {
    const wick_tensor *t = &g->tensors[g->inputs[k]];
    if (writable(t)) ok = wick_add_size(total, t->bytes, &total);
  }
  saved_input *saved = ok ? wick_mem_alloc(&it->mem, total) : NULL;
  if (saved == NULL)
    return interp_fail(it, WICK_ERR_OUT_OF_MEMORY,
                       "out of memory keeping the input values across the resize");
  uint8_t *at = (uint8_t *)(saved + g->num_inputs);
  for (uint32_t k = 0; k < g->num_inputs; k++) {
    const wick_tensor *t = &g->tensors[g->inputs[k]];
    saved[k].rank = t->rank;
    memcpy(saved[k].dims, t->dims, sizeof saved[k].dims);
    saved[k].bytes = writable(t) ? t->bytes : 0;
    if (saved[k].bytes) memcpy(at, t->data, saved[k].bytes);
    at += saved[k].bytes;
  }
  *saved_out = saved;
  return WICK_OK;
}

static void restore_inputs(wick_graph *g, const saved_input *saved) {
  if (saved == NULL) return;
  const uint8_t *at = (const uint8_t *)(saved + g->num_inputs);
  for (uint32_t k = 0; k < g->num_inputs; k++) {
    wick_tensor *t = &g->tensors[g->inputs[k]];
    if (saved[k].bytes && writable(t) && t->bytes == saved[k].bytes && t->rank == saved[k].rank &&
        memcmp(t->dims, saved[k].dims, (size_t)t->rank * sizeof t->dims[0]) == 0)
      memcpy(t->data, at, t->bytes);
    at += saved[k].bytes;
  }
}

/* Checks that input i may take `dims` (its rank, no negative sizes, fixed dimensions kept). */
static wick_status check_resize(wick_interpreter *it, size_t i, const int32_t *dims, size_t rank) {
  if (i >= it->main->num_inputs)
    return interp_fail(it, WICK_ERR_INVALID_ARGUMENT, "input %zu does not exist", i);
  const wick_tensor *t = &it->main->tensors[it->main->inputs[i]];
  if (rank > WICK_MAX_RANK || (rank > 0 && dims == NULL))
    return interp_fail(it, WICK_ERR_INVALID_ARGUMENT, "bad rank %zu", rank);
  if ((int32_t)rank != t->info->rank)
    return interp_fail(it, WICK_ERR_INVALID_ARGUMENT,
                       "input %s has rank %d; cannot resize it to rank %zu", t->name, t->info->rank,
                       rank);
  for (size_t d = 0; d < rank; d++) {
    if (dims[d] < 0)
      return interp_fail(it, WICK_ERR_INVALID_ARGUMENT, "dimension %zu is negative", d);
    if (t->info->dims_signature[d] != -1 && dims[d] != t->info->dims[d])
      return interp_fail(it, WICK_ERR_INVALID_ARGUMENT,
                         "input %s: dimension %zu is fixed at %d by the model (asked %d)", t->name,
                         d, t->info->dims[d], dims[d]);
  }
  return WICK_OK;
}

wick_status wick_interpreter_resize_inputs(wick_interpreter *it, size_t count,
                                           const size_t *indices, const int32_t *const *dims,
                                           const size_t *ranks) {
  if (it == NULL || (count > 0 && (indices == NULL || dims == NULL || ranks == NULL)))
    return WICK_ERR_INVALID_ARGUMENT;
  if (it->sharers > 0)
    return interp_fail(it, WICK_ERR_INVALID_ARGUMENT,
                       "%u interpreter(s) share this one's variables and packed weights "
                       "(share_variables_with): destroy them before resizing it",
                       it->sharers);
  for (size_t k = 0; k < count; k++) {
    wick_status st = check_resize(it, indices[k], dims[k], ranks[k]);
    if (st != WICK_OK) return st;
  }
  saved_input *values = NULL;
  wick_status st = save_inputs(it, &values);
  if (st != WICK_OK) return st;
  /* The previous shapes of every input: a failed prepare puts them all back. */
  int32_t(*old)[WICK_MAX_RANK] = wick_mem_alloc(&it->mem, (it->main->num_inputs + 1) * sizeof *old);
  if (old == NULL) {
    wick_mem_free(&it->mem, values);
    return interp_fail(it, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (uint32_t i = 0; i < it->main->num_inputs; i++)
    memcpy(old[i], it->main->tensors[it->main->inputs[i]].dims, sizeof old[i]);
  for (size_t k = 0; k < count; k++) {
    wick_tensor *t = &it->main->tensors[it->main->inputs[indices[k]]];
    for (size_t d = 0; d < ranks[k]; d++) t->dims[d] = dims[k][d];
  }
  st = graph_prepare(it->main);
  if (st == WICK_OK) {
    restore_inputs(it->main, values);
  } else {
    for (uint32_t i = 0; i < it->main->num_inputs; i++) /* leave the interpreter usable */
      memcpy(it->main->tensors[it->main->inputs[i]].dims, old[i], sizeof old[i]);
    char saved[sizeof it->error];
    memcpy(saved, it->error, sizeof saved);
    if (graph_prepare(it->main) == WICK_OK) {
      memcpy(it->error, saved, sizeof saved);
      restore_inputs(it->main, values);
    }
  }
  wick_mem_free(&it->mem, old);
  wick_mem_free(&it->mem, values);
  return st;
}

wick_status wick_interpreter_resize_input(wick_interpreter *it, size_t i, const int32_t *dims,
                                          size_t rank) {
  if (it == NULL) return WICK_ERR_INVALID_ARGUMENT;
  return wick_interpreter_resize_inputs(it, 1, &i, &dims, &rank);
}

wick_status wick_interpreter_invoke(wick_interpreter *it) {
  if (it == NULL) return WICK_ERR_INVALID_ARGUMENT;
  it->error[0] = 0;
  /* Callers may write any byte into a bool input; kernels read C bools,
   * where anything but 0 or 1 is undefined. Any non-zero byte means true. */
  for (uint32_t i = 0; i < it->main->num_inputs; i++) {
    wick_tensor *t = &it->main->tensors[it->main->inputs[i]];
    if (t->type != WICK_DTYPE_BOOL || t->data == NULL || t->alloc == WICK_ALLOC_CONSTANT) continue;
    uint8_t *p = t->data;
    for (size_t k = 0; k < t->bytes; k++) p[k] = p[k] != 0;
  }
  it->invoking = true;
  wick_status st = wick_graph_invoke(it->main);
  it->invoking = false;
  atomic_store(&it->cancelled, 0);
  return st;
}

/* Variable tensors of g and its children back to their initial value. */
static void reset_variable_tensors(wick_graph *g) {
  if (g == NULL) return;
  for (uint32_t i = 0; i < g->info->num_tensors; i++) {
    wick_tensor *t = &g->tensors[i];
    if (!t->info->is_variable || t->info->data != NULL || t->data == NULL) continue;
    if (t->bytes) memset(t->data, 0, t->bytes);
    reset_variable(t);
  }
  for (uint32_t i = 0; i < g->info->num_operators; i++)
    for (int c = 0; c < 2; c++) reset_variable_tensors(g->nodes[i].child[c]);
}

wick_status wick_interpreter_reset_variables(wick_interpreter *it) {
  if (it == NULL) return WICK_ERR_INVALID_ARGUMENT;
  it->error[0] = 0;
  wick_variables_clear(it);
  reset_variable_tensors(it->main);
  return WICK_OK;
}

void wick_interpreter_cancel(wick_interpreter *it) {
  if (it) atomic_store(&it->cancelled, 1);
}
