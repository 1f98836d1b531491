/*
 * op_ctx.c — the op context: everything an operator calls on the core while
 * it prepares and runs (src/ops/op_common.h declares it). Inputs and outputs
 * (through a fused node's redirections), output shapes (checked for rank,
 * negative dims and size overflow), memory for the op's prepared data and
 * packed weights, scratch, kernel-selection switches, errors that name the
 * operator, and cancellation.
 */
#include <stdarg.h>
#include <string.h>

#include "core/internal.h"
#include "format/schema.h"

wick_status wick_op_fail(const wick_op_ctx *ctx, wick_status status, const char *fmt, ...) {
  wick_interpreter *it = ctx->graph->interp;
  char detail[400];
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(detail, sizeof detail, fmt, ap);
  va_end(ap);
  const wick_operator_info *op = ctx->node->op;
  const char *name = op->builtin == WICK_BUILTIN_CUSTOM && op->custom_name
                         ? op->custom_name
                         : wick_builtin_name(op->builtin);
  if (ctx->graph->subgraph_index == 0)
    wick_format_message(it->error, sizeof it->error, "%s (operator %u): %s", name, ctx->node->index,
                        detail);
  else
    wick_format_message(it->error, sizeof it->error, "%s (subgraph %u, operator %u): %s", name,
                        ctx->graph->subgraph_index, ctx->node->index, detail);
  return status;
}

/* ---------------------------------------------------------------- op context helpers */

const uint8_t *wick_op_custom_options(const wick_op_ctx *ctx, size_t *size_out) {
  const wick_operator_info *op = ctx->node->op;
  *size_out = op->custom_options ? op->custom_options_size : 0;
  return op->custom_options;
}

size_t wick_op_num_inputs(const wick_op_ctx *ctx) { return ctx->node->op->num_inputs; }
size_t wick_op_num_outputs(const wick_op_ctx *ctx) { return ctx->node->op->num_outputs; }

int32_t wick_node_input_index(const wick_node *n, uint32_t i) {
  return i == 0 && n->fusion.input > 0 ? n->fusion.input - 1 : n->op->inputs[i];
}

wick_tensor *wick_op_input(const wick_op_ctx *ctx, size_t i) {
  const wick_operator_info *op = ctx->node->op;
  if (i >= op->num_inputs || op->inputs[i] < 0) return NULL;
  return &ctx->graph->tensors[wick_node_input_index(ctx->node, (uint32_t)i)];
}

int32_t wick_node_output_index(const wick_node *n, uint32_t i) {
  return i == 0 && n->fusion.redirected ? n->fusion.output : n->op->outputs[i];
}

wick_tensor *wick_op_output(const wick_op_ctx *ctx, size_t i) {
  const wick_operator_info *op = ctx->node->op;
  if (i >= op->num_outputs) return NULL;
  return &ctx->graph->tensors[wick_node_output_index(ctx->node, (uint32_t)i)];
}

wick_status wick_check_shape(int32_t rank, const int32_t *dims, wick_dtype type, size_t *bytes,
                             char *why, size_t why_size) {
  if (rank < 0 || rank > WICK_MAX_RANK) {
    wick_format_message(why, why_size, "rank %d is outside [0, %d]", rank, WICK_MAX_RANK);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  /* Capped: the product of the non-zero dims (so strides computed from the
   * shape fit in 64 bits even when a zero dim makes the element count 0). */
  int64_t n = 1, span = 1;
  for (int32_t i = 0; i < rank; i++) {
    if (dims[i] < 0) {
      wick_format_message(why, why_size, "dimension %d is negative (%d)", i, dims[i]);
      return WICK_ERR_INVALID_ARGUMENT;
    }
    if (!wick_mul_i64(span, dims[i] ? dims[i] : 1, &span) || span > WICK_MAX_ELEMENTS) {
      wick_format_message(why, why_size, "element count overflows");
      return WICK_ERR_INVALID_ARGUMENT;
    }
    n *= dims[i]; /* |n| <= span */
  }
  size_t esize = wick_dtype_size(type);
  if (esize == 0) {
    wick_format_message(why, why_size, "type %s has no fixed element size", wick_dtype_name(type));
    return WICK_ERR_UNSUPPORTED_OP;
  }
  if ((uint64_t)n > SIZE_MAX / esize) {
    wick_format_message(why, why_size, "byte size overflows size_t");
    return WICK_ERR_OUT_OF_MEMORY;
  }
  *bytes = (size_t)n * esize;
  return WICK_OK;
}

wick_status wick_op_set_output(const wick_op_ctx *ctx, size_t i, wick_dtype type, int32_t rank,
                               const int32_t *dims) {
  wick_tensor *t = wick_op_output(ctx, i);
  if (t == NULL) return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL, "output %zu is missing", i);
  if ((int32_t)t->type != (int32_t)type)
    return wick_op_fail(ctx, WICK_ERR_MALFORMED_MODEL,
                        "output %zu (%s) is declared %s but the op produces %s", i, t->name,
                        wick_dtype_name(t->type), wick_dtype_name(type));
  char why[128];
  size_t bytes;
  wick_status st = wick_check_shape(rank, dims, type, &bytes, why, sizeof why);
  if (st != WICK_OK) return wick_op_fail(ctx, st, "output %zu (%s): %s", i, t->name, why);
  t->rank = rank;
  if (rank > 0) memcpy(t->dims, dims, (size_t)rank * sizeof(int32_t));
  t->bytes = bytes;
  return WICK_OK;
}

void *wick_op_alloc(const wick_op_ctx *ctx, size_t size) {
  return wick_graph_alloc(ctx->graph, size, true);
}

/* A model's packed weights are dozens to hundreds of buffers, most below
 * 2 MiB. Buffers up to 1 MiB are carved first-fit from two open 8 MiB,
 * 2 MiB-aligned chunks (one allocation instead of dozens; where the system
 * backs memory with transparent huge pages itself, a few 2 MiB faults instead
 * of thousands of 4 KiB ones); when neither has room, the fuller one is
 * replaced by a new chunk. Untouched pages take no memory, and after prepare
 * the open chunks' tails are returned to the OS (release_packed_tails), so
 * the waste is the tail of each replaced chunk (< 1 MiB). Larger buffers, a
 * memory cap or a caller's allocator: a block of their own, as wick_op_alloc. */
#define PACKED_CHUNK (4 * WICK_HUGE_BLOCK - 64) /* + wick_mem's header: 8 MiB */
#define PACKED_CARVED_MAX ((size_t)1 << 20)

/* Packed buffers are written in full right away: prefaulted (wick_mem_prefault) from this
 * size on, with the default allocator. */
#define PACKED_PREFAULT_MIN ((size_t)64 << 10)

static void *carve_packed(wick_graph *g, size_t size);

void *wick_op_alloc_packed(const wick_op_ctx *ctx, size_t size) {
  wick_graph *g = ctx->graph;
  size = wick_align_up(size ? size : 1, 64);
  if (g->in_invoke || !wick_mem_huge_blocks(&g->interp->mem))
    return wick_graph_alloc(g, size, false);
  void *p = size > PACKED_CARVED_MAX ? wick_graph_alloc(g, size, false) : carve_packed(g, size);
  if (p != NULL && size >= PACKED_PREFAULT_MIN) wick_mem_prefault(p, size);
  return p;
}

/* A buffer of `size` (a multiple of 64, at most PACKED_CARVED_MAX) from the open chunks. */
static void *carve_packed(wick_graph *g, size_t size) {
  const size_t n = sizeof g->packed_chunks / sizeof g->packed_chunks[0];
  size_t fullest = 0;
  for (size_t i = 0; i < n; i++) {
    struct wick_packed_chunk *c = &g->packed_chunks[i];
    if (c->left >= size) {
      void *p = c->next;
      c->next += size;
      c->left -= size;
      g->packed_slack -= size;
      return p;
    }
    if (c->left < g->packed_chunks[fullest].left) fullest = i;
  }
  uint8_t *chunk = wick_graph_alloc(g, PACKED_CHUNK, false);
  if (chunk == NULL) return NULL;
  g->packed_chunks[fullest] = (struct wick_packed_chunk){chunk + size, PACKED_CHUNK - size};
  g->packed_slack += PACKED_CHUNK - size;
  return chunk;
}

/* Below this many bytes a constant keeps its pages: the system call would cost more than the
 * memory is worth (and its first and last pages, shared with neighbours, stay anyway). */
#define RELEASE_MIN_BYTES ((size_t)64 << 10)

void wick_graph_release_input(wick_graph *g, int32_t index) {
  if (index < 0 || (uint32_t)index >= g->info->num_tensors) return;
  wick_tensor *t = &g->tensors[index];
  if (t->data == NULL) return;
  if (t->alloc == WICK_ALLOC_CONSTANT) {
    const wick_model *m = g->interp->model;
    if (m->mapping == NULL) return;
    const uintptr_t p = (uintptr_t)t->data, base = (uintptr_t)m->mapping;
    if (p < base || p - base >= m->mapping_size) return;
    size_t bytes = t->bytes;
    if (bytes > m->mapping_size - (p - base)) bytes = m->mapping_size - (p - base);
    if (bytes >= RELEASE_MIN_BYTES) wick_mem_drop_pages(t->data, bytes);
    return;
  }
  if (t->alloc != WICK_ALLOC_PERSISTENT || g->readers == NULL || g->readers[index] == 0) return;
  if (--g->readers[index] > 0 || t->info->is_variable || g->interp->num_delegates > 0 ||
      !wick_mem_huge_blocks(&g->interp->mem) || t->bytes < RELEASE_MIN_BYTES)
    return;
  /* every reader is done with it: the block stays in the graph's list (freed at the next
   * prepare), its pages go */
  wick_mem_drop_pages(t->data, t->bytes);
  g->dropped_bytes += t->capacity;
  t->data = NULL;
  t->alloc = WICK_ALLOC_NONE;
  t->capacity = 0;
}

void wick_op_release_input(const wick_op_ctx *ctx, size_t i) {
  if (ctx->graph->in_invoke || i >= ctx->node->op->num_inputs) return;
  wick_graph_release_input(ctx->graph, ctx->node->op->inputs[i]);
}

void wick_op_mark_stateful(const wick_op_ctx *ctx) { ctx->node->stateful = true; }

void wick_op_request_scratch(const wick_op_ctx *ctx, size_t bytes) {
  if (bytes > ctx->node->scratch_bytes) ctx->node->scratch_bytes = bytes;
}

void *wick_op_scratch(const wick_op_ctx *ctx) { return ctx->graph->interp->scratch; }

bool wick_op_force_reference(const wick_op_ctx *ctx) { return ctx->graph->interp->force_reference; }
bool wick_op_winograd_allowed(const wick_op_ctx *ctx) { return !ctx->graph->interp->no_winograd; }

wick_status wick_op_resize_output(const wick_op_ctx *ctx, size_t i, int32_t rank,
                                  const int32_t *dims) {
  wick_tensor *t = wick_op_output(ctx, i);
  if (t == NULL || !ctx->node->dynamic || t->alloc == WICK_ALLOC_ARENA ||
      t->alloc == WICK_ALLOC_CONSTANT || t->alloc == WICK_ALLOC_PERSISTENT)
    return wick_op_fail(ctx, WICK_ERR_INVALID_ARGUMENT,
                        "internal: output %zu cannot be resized while running", i);
  wick_status st = wick_op_set_output(ctx, i, t->type, rank, dims);
  if (st != WICK_OK) return st;
  return wick_graph_ensure_dynamic(ctx->graph, t);
}

bool wick_op_cancelled(const wick_op_ctx *ctx) {
  return atomic_load_explicit(&ctx->graph->interp->cancelled, memory_order_relaxed) != 0;
}

void *wick_op_data(const wick_op_ctx *ctx) { return ctx->node->user_data; }
void wick_op_set_data(const wick_op_ctx *ctx, void *data) { ctx->node->user_data = data; }
int32_t wick_op_builtin(const wick_op_ctx *ctx) { return ctx->node->op->builtin; }
void wick_op_set_macs(const wick_op_ctx *ctx, uint64_t macs) { ctx->node->macs = macs; }
void wick_op_set_kernel(const wick_op_ctx *ctx, wick_kernel_kind kind, const char *name) {
  ctx->node->kernel_kind = (uint8_t)kind;
  ctx->node->kernel_name = name;
}
uint64_t wick_op_macs(const wick_op_ctx *ctx) { return ctx->node->macs; }
bool wick_op_in_invoke(const wick_op_ctx *ctx) { return ctx->graph->in_invoke; }
bool wick_op_dynamic(const wick_op_ctx *ctx) { return ctx->node->dynamic; }
uint32_t wick_op_subgraph_index(const wick_op_ctx *ctx) { return ctx->graph->subgraph_index; }

wick_tensor *wick_op_intermediate(const wick_op_ctx *ctx, size_t i) {
  const wick_operator_info *op = ctx->node->op;
  if (i >= op->num_intermediates) return NULL;
  return wick_op_graph_tensor(ctx, op->intermediates[i]);
}

wick_tensor *wick_op_graph_tensor(const wick_op_ctx *ctx, int32_t index) {
  if (index < 0 || (uint32_t)index >= ctx->graph->info->num_tensors) return NULL;
  return &ctx->graph->tensors[index];
}

const wick_node_fusion *wick_op_fusion(const wick_op_ctx *ctx) { return &ctx->node->fusion; }

wick_graph *wick_op_child(const wick_op_ctx *ctx, int slot) {
  return slot == 0 || slot == 1 ? ctx->node->child[slot] : NULL;
}

uint32_t wick_graph_subgraph(const wick_graph *g) { return g->subgraph_index; }
uint32_t wick_graph_num_inputs(const wick_graph *g) { return g->num_inputs; }
uint32_t wick_graph_num_outputs(const wick_graph *g) { return g->num_outputs; }
wick_tensor *wick_graph_input(const wick_graph *g, size_t i) { return &g->tensors[g->inputs[i]]; }
wick_tensor *wick_graph_output(const wick_graph *g, size_t i) { return &g->tensors[g->outputs[i]]; }
