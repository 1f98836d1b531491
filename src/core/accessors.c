/*
 * accessors.c — what a caller reads back from an interpreter after prepare and
 * invoke: its memory sizes, each operator's name, kernel, time, MACs and thread
 * counts (wick bench --profile, the bindings' profile()), and the public
 * wick_tensor_* accessors.
 *
 * Read-only: nothing here prepares or runs anything (interpreter.c does).
 */
#include <string.h>

#include "core/internal.h"
#include "format/schema.h"

/* A size summed over a graph and its children. */
static size_t graph_total(const wick_graph *g, size_t (*of)(const wick_graph *)) {
  if (g == NULL) return 0;
  size_t total = of(g);
  for (uint32_t i = 0; i < g->info->num_operators; i++)
    for (int c = 0; c < 2; c++) total += graph_total(g->nodes[i].child[c], of);
  return total;
}

static size_t arena_of(const wick_graph *g) { return g->arena_size; }
/* Allocated but not resident: untouched chunk tails, dropped constants. */
static size_t packed_slack_of(const wick_graph *g) { return g->packed_slack + g->dropped_bytes; }

size_t wick_interpreter_arena_bytes(const wick_interpreter *it) {
  return it ? graph_total(it->main, arena_of) : 0;
}

size_t wick_interpreter_persistent_bytes(const wick_interpreter *it) {
  if (it == NULL) return 0;
  /* The untouched tails of the packed-weight chunks are address space only. */
  size_t other =
      wick_interpreter_arena_bytes(it) + it->scratch_size + graph_total(it->main, packed_slack_of);
  return it->mem.used > other ? it->mem.used - other : 0;
}

size_t wick_interpreter_op_count(const wick_interpreter *it) {
  return it ? it->main->info->num_operators : 0;
}

const char *wick_interpreter_op_name(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_operator_info *op = it->main->nodes[i].op;
  if (op->builtin == WICK_BUILTIN_CUSTOM && op->custom_name != NULL) return op->custom_name;
  return wick_builtin_name(op->builtin);
}

void wick_interpreter_set_profiling(wick_interpreter *it, int enabled) {
  if (it == NULL) return;
  it->profiling = enabled != 0;
  wick_thread_pool_set_profiling(it->pool, it->profiling);
}

wick_op_thread_stats wick_interpreter_op_thread_stats(const wick_interpreter *it, size_t i) {
  wick_op_thread_stats none = {0};
  if (it == NULL || i >= it->main->info->num_operators) return none;
  return it->main->nodes[i].threads;
}

uint64_t wick_interpreter_op_time_ns(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return 0;
  return it->main->nodes[i].time_ns;
}

uint64_t wick_interpreter_op_macs(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return 0;
  return it->main->nodes[i].macs;
}

const char *wick_interpreter_op_kernel(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_node *n = &it->main->nodes[i];
  if (n->folded) return "folded";
  if (n->fused) return "fused";
  if (wick_interpreter_op_delegate(it, i) != NULL) return "delegated";
  if (wick_node_runs_fused(n)) return "optimized"; /* src/ops/fused.c: the vectorized kernels */
  switch ((wick_kernel_kind)n->kernel_kind) {
    case WICK_KERNEL_OPTIMIZED: return "optimized";
    case WICK_KERNEL_GENERIC: return "generic";
    case WICK_KERNEL_REFERENCE: return "reference";
    default: return "unmarked";
  }
}

const char *wick_interpreter_op_kernel_name(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_node *n = &it->main->nodes[i];
  if (n->folded || n->fused) return "";
  const char *delegate = wick_interpreter_op_delegate(it, i);
  if (delegate != NULL) return delegate;
  if (n->fusion.norm.form != WICK_NORM_NONE) return "layer norm";
  if (n->fusion.unary != 0) return "fused unary";
  if (n->fusion.attention.on)
    return n->fusion.attention.inplace ? "attention in place" : "attention";
  if (n->fusion.q8_swish != 0) return "q8 swish table";
  if (n->fusion.affine.on) return "channel affine";
  return n->kernel_name != NULL ? n->kernel_name : "";
}

const wick_tensor *wick_interpreter_op_output(const wick_interpreter *it, size_t i) {
  if (it == NULL || i >= it->main->info->num_operators) return NULL;
  const wick_node *n = &it->main->nodes[i];
  if (n->op->num_outputs == 0) return NULL;
  return &it->main->tensors[n->op->outputs[0]];
}

/* ---------------------------------------------------------------- tensors */

const char *wick_tensor_name(const wick_tensor *t) { return t ? t->name : ""; }
wick_dtype wick_tensor_dtype(const wick_tensor *t) { return t ? t->type : WICK_DTYPE_FLOAT32; }
size_t wick_tensor_rank(const wick_tensor *t) { return t ? (size_t)t->rank : 0; }
int32_t wick_tensor_dim(const wick_tensor *t, size_t i) {
  return (t && i < (size_t)t->rank) ? t->dims[i] : -1;
}
size_t wick_tensor_byte_size(const wick_tensor *t) { return t ? t->bytes : 0; }
const void *wick_tensor_data(const wick_tensor *t) { return t ? t->data : NULL; }

void *wick_tensor_mutable_data(wick_tensor *t) {
  return t != NULL && t->alloc != WICK_ALLOC_CONSTANT ? t->data : NULL;
}

int wick_tensor_quantization(const wick_tensor *t, float *scale_out, int64_t *zero_point_out) {
  if (t == NULL || t->info->quant.count != 1) return 0;
  if (scale_out) *scale_out = t->info->quant.scale[0];
  if (zero_point_out) *zero_point_out = t->info->quant.zero_point[0];
  return 1;
}

size_t wick_tensor_quantization_count(const wick_tensor *t) {
  return t != NULL && t->info != NULL ? t->info->quant.count : 0;
}

int32_t wick_tensor_quantization_axis(const wick_tensor *t) {
  return t != NULL && t->info != NULL ? t->info->quant.quantized_dimension : 0;
}

int wick_tensor_quantization_at(const wick_tensor *t, size_t i, float *scale_out,
                                int64_t *zero_point_out) {
  if (t == NULL || t->info == NULL || i >= t->info->quant.count) return 0;
  if (scale_out) *scale_out = t->info->quant.scale[i];
  if (zero_point_out)
    *zero_point_out = t->info->quant.zero_point ? t->info->quant.zero_point[i] : 0;
  return 1;
}

int wick_tensor_is_constant(const wick_tensor *t) { return t != NULL && t->known ? 1 : 0; }

wick_status wick_tensor_copy_from(wick_tensor *t, const void *data, size_t size) {
  if (t == NULL || (data == NULL && size != 0)) return WICK_ERR_INVALID_ARGUMENT;
  if (size != t->bytes || t->data == NULL) return WICK_ERR_INVALID_ARGUMENT;
  if (t->alloc == WICK_ALLOC_CONSTANT) return WICK_ERR_INVALID_ARGUMENT;
  if (size) memcpy(t->data, data, size);
  return WICK_OK;
}

wick_status wick_tensor_copy_to(const wick_tensor *t, void *data, size_t size) {
  if (t == NULL || (data == NULL && size != 0)) return WICK_ERR_INVALID_ARGUMENT;
  if (size != t->bytes || (t->data == NULL && size != 0)) return WICK_ERR_INVALID_ARGUMENT;
  if (size) memcpy(data, t->data, size);
  return WICK_OK;
}
