/*
 * internal.h — the runtime's shared internal types: checked arithmetic, memory
 * accounting, the verified model, the interpreter's graphs, and the interface
 * every operator implements.
 *
 * Data moves one way: bytes -> wick_model (built by src/format/reader.c,
 * immutable afterwards) -> wick_graph (one per prepared subgraph, owned by an
 * interpreter) -> invoke. All validation of untrusted input happens in load
 * and prepare; invoke checks only data-dependent values.
 *
 * Next: interpreter.c (prepare/invoke), src/ops/op_table.inc (the op registry).
 */
#ifndef WICK_CORE_INTERNAL_H
#define WICK_CORE_INTERNAL_H

#include "core/op_api.h"
#include "format/model.h"

/* Reads a caller's option struct (wick_model_options, wick_interpreter_options:
 * `what` names it) by its leading struct_size into `out`, which holds the
 * defaults: the fields the caller's struct covers are copied, the others keep
 * their defaults, and out's struct_size becomes `ours`. A struct_size below
 * `first_version_size`, or a nonzero byte past `ours`, is
 * WICK_ERR_INVALID_ARGUMENT with the reason in `message` (options.c). */
WICK_INTERNAL wick_status wick_read_options(const void *caller, size_t first_version_size,
                                            size_t ours, void *out, const char *what, char *message,
                                            size_t message_size);

/* ---------------------------------------------------------------- runtime graphs */

/* A list of blocks freed together. */
typedef struct wick_alloc_list {
  void **items;
  size_t count, cap;
} wick_alloc_list;

struct wick_node {
  const wick_operator_info *op;
  const wick_op_def *def;
  uint32_t index;  /* operator index in the subgraph */
  void *user_data; /* op-private, allocated with wick_node_alloc */
  size_t scratch_bytes;
  uint64_t macs;
  uint8_t kernel_kind;     /* a wick_kernel_kind, recorded by the op's prepare */
  const char *kernel_name; /* its short name (a string literal), or NULL */
  uint64_t time_ns;
  wick_op_thread_stats threads; /* of the last profiled invoke */
  bool folded;                  /* computed at prepare; skipped at invoke */
  bool dynamic;                 /* prepared again at invoke (data-dependent shapes) */
  bool fused;                   /* another node's epilogue does its work; skipped at invoke */
  bool stateful; /* reads or writes interpreter state (wick_op_mark_stateful): never folded */
  wick_node_fusion fusion;
  wick_graph *child[2];          /* subgraphs this node runs (composite, control flow) */
  int32_t partition;             /* index into the graph's partitions, -1: none (delegate.c) */
  const char *delegation_why;    /* why it is not on a delegate (graph memory), NULL: "" */
  const char **delegation_notes; /* per delegate (index in the interpreter's list): the note it
                                   left when it took the node (graph memory), or NULL */
};

/* A group of nodes one delegate runs as a step (src/core/delegate.c). */
typedef struct wick_partition {
  wick_delegate *delegate;
  wick_delegate_partition desc; /* nodes, inputs, outputs: graph memory */
  void *state;                  /* the delegate's, from prepare_partition */
  uint32_t start, end;          /* positions [start, end) of its nodes in the graph's order */
  bool active;                  /* prepared by the delegate and not failed: it runs there */
  char why[192];                /* why it runs on the CPU after all ("" while active) */
} wick_partition;

/* A row of the delegation report below the bound subgraph (delegation_report.c): an operator
 * inside a subgraph that an operator runs. Graph memory of the bound subgraph. */
typedef struct wick_report_row {
  int32_t parent;       /* the row of the operator running this subgraph */
  int32_t top;          /* the bound subgraph's operator it is nested in */
  uint32_t subgraph;    /* the model's subgraph */
  uint32_t op;          /* its index there */
  const char *role;     /* "then", "body", ... (static) */
  const char *name;     /* the operator's name (static or the model's) */
  const wick_graph *in; /* the prepared graph holding it, or NULL (read only while building) */
  bool folded;          /* computed at prepare */
  const char *cpu_why;  /* its reason when its top operator is in no partition */
  const char *note;     /* the note of its top partition's delegate for it, or NULL */
} wick_report_row;

struct wick_graph {
  wick_interpreter *interp;
  const wick_subgraph_info *info;
  uint32_t subgraph_index;
  int depth; /* nesting depth of child graphs */
  wick_tensor *tensors;
  wick_node *nodes;
  uint8_t *arena;
  size_t arena_size;
  wick_alloc_list prepared_allocs; /* freed when the graph is prepared again */
  /* Open huge-page chunks (blocks in prepared_allocs) that packed weights
   * are carved from (wick_op_alloc_packed). Reset by prepare. */
  struct wick_packed_chunk {
    uint8_t *next;
    size_t left;
  } packed_chunks[2];
  size_t packed_slack; /* chunk bytes not carved: allocated, but never touched */
  /* During prepare_nodes: per tensor, the input slots of nodes that may still read it (not
   * released by wick_graph_release_input; graph inputs and outputs count one more), or NULL. */
  uint32_t *readers;
  size_t
      dropped_bytes; /* folded or realigned constants given back after every reader packed them */
  wick_alloc_list invoke_allocs; /* made by dynamic nodes at invoke; freed next invoke */
  bool in_invoke;
  uint32_t num_inputs, num_outputs;
  int32_t *inputs, *outputs; /* tensor indices */
  bool prepared;
  /* With delegate partitions: the execution order (position -> node index) and its
   * inverse, in which every partition's nodes are consecutive; NULL: file order. */
  uint32_t *order, *position;
  wick_partition *partitions;
  uint32_t num_partitions;
  /* The bound subgraph's report rows after its own operators (delegation_report.c). */
  wick_report_row *report_rows;
  uint32_t num_report_rows;
};

/* The node that runs at position `pos` of g's execution order, and the position of node i. */
static inline uint32_t wick_graph_node_at(const wick_graph *g, uint32_t pos) {
  return g->order ? g->order[pos] : pos;
}
static inline uint32_t wick_graph_position(const wick_graph *g, uint32_t node) {
  return g->position ? g->position[node] : node;
}

/* ---------------------------------------------------------------- threads (thread_pool.c) */

typedef struct wick_thread_pool wick_thread_pool;

/* num_threads <= 1: *pool_out = NULL (everything runs on the caller); < 0:
 * one per online CPU. Clamped to WICK_MAX_THREADS. If the OS refuses a
 * thread, the pool runs with the ones it got. */
WICK_INTERNAL wick_status wick_thread_pool_create(wick_mem *mem, int num_threads,
                                                  wick_thread_pool **pool_out);
/* Stops and joins the workers; NULL is a no-op. */
WICK_INTERNAL void wick_thread_pool_destroy(wick_thread_pool *pool);
/* Threads that run tasks, the caller included (1 for NULL). */
WICK_INTERNAL size_t wick_thread_pool_threads(const wick_thread_pool *pool);
/* Runs fn(arg, t, thread) for every t in [0, n_tasks) on the pool and the
 * caller, returning when all are done. Stops claiming tasks once *cancel
 * (may be NULL) is non-zero and then returns false after the running ones
 * finish. n_tasks <= 1, a NULL pool, or a call from inside a task runs
 * inline in task order; so does a job of less than WICK_WAKE_MIN_WORK `work`
 * (the job's work units, WICK_TASK_GRAIN per task when 0) while every worker
 * sleeps: waking one costs more than it can save there (thread_pool.c). */
WICK_INTERNAL bool wick_thread_pool_run(wick_thread_pool *pool, size_t n_tasks, uint64_t work,
                                        wick_task_fn fn, void *arg, const atomic_int *cancel);

/* What the pool did since the last wick_thread_pool_take_stats, counted only
 * while profiling is on (wick_thread_pool_set_profiling): jobs run on the
 * threads, their tasks, the caller's wall time from publishing each job to
 * its last task finishing, and the time each thread spent inside tasks. */
typedef struct wick_pool_stats {
  uint64_t jobs, tasks, parallel_ns;
  uint64_t busy_ns[WICK_MAX_THREADS];
} wick_pool_stats;
WICK_INTERNAL void wick_thread_pool_set_profiling(wick_thread_pool *pool, bool enabled);
/* Copies the counters into *out (zeros for a NULL pool) and resets them. */
WICK_INTERNAL void wick_thread_pool_take_stats(wick_thread_pool *pool, wick_pool_stats *out);

/* ---------------------------------------------------------------- weight cache (weight_cache.c) */

/* One packed buffer in the cache file: its key (subgraph, node, slot), the
 * op's layout word, and where its bytes lie. Written to the file as is. */
typedef struct wick_cache_entry {
  uint32_t subgraph, node, slot, layout;
  uint64_t offset, bytes, checksum;
} wick_cache_entry;

/* A buffer packed during this prepare, to be written to the file. */
typedef struct wick_cache_record {
  wick_cache_entry key;
  const void *data;
} wick_cache_record;

typedef struct wick_weight_cache {
  char *path; /* NULL: no cache */
  wick_weight_cache_state state;
  char message[320];
  uint64_t build_id, kernel_id, model_size, model_hash;
  uint8_t *map; /* the validated file, or NULL */
  size_t map_size;
  const wick_cache_entry *entries; /* in the map, sorted by key */
  uint32_t num_entries;
  size_t hits;
  bool recording; /* no valid file: packed buffers are recorded, then written */
  wick_cache_record *records;
  size_t num_records, cap_records;
} wick_weight_cache;

/* A fast non-cryptographic 64-bit hash (checksums, the model's identity). */
WICK_INTERNAL uint64_t wick_hash64(const void *data, size_t size, uint64_t seed);
/* Before the first prepare: keeps `path`, and maps and checks the file if it
 * is there. Only running out of memory is an error; a missing, damaged or
 * mismatched file just means packing as usual (the state says which). */
WICK_INTERNAL wick_status wick_weight_cache_open(wick_interpreter *it, const char *path);
/* After the first prepare: writes the file when there was no valid one. */
WICK_INTERNAL void wick_weight_cache_finish_prepare(wick_interpreter *it);
/* Unmaps and frees; after the graphs that point into the map are gone. */
WICK_INTERNAL void wick_weight_cache_close(wick_interpreter *it);

struct wick_interpreter {
  const wick_model *model;
  wick_mem mem;
  wick_interpreter_options options;
  wick_thread_pool *pool; /* NULL: one thread */
  bool invoking;          /* in wick_interpreter_invoke: cancellation applies */
  const wick_signature_info *signature;
  wick_graph *main;
  void *scratch;
  size_t scratch_size;
  atomic_int cancelled;
  uint32_t num_graphs; /* live graph instances, capped at WICK_MAX_GRAPHS */
  bool profiling;
  bool force_reference;
  bool no_fusion;   /* WICK_NO_FUSION=1 (or force_reference): every node runs on its own */
  bool no_in_place; /* WICK_NO_IN_PLACE=1 (or no_fusion): every output its own storage (plan.c) */
  bool no_winograd; /* WICK_NO_WINOGRAD=1: 3x3 convolutions stay on the indirect GEMM */
  /* WICK_NO_ATTENTION_FUSION=1: attention over a cache runs as its nodes (fuse.c) */
  bool no_attention_fusion;
  wick_weight_cache cache;
  wick_variables variables; /* resource variables (variables.c); unused when state_owner */
  uint8_t *init_done;       /* per subgraph: CALL_ONCE ran it (allocated on first use) */
  /* NULL, or the interpreter whose variables and init_done this one uses
   * (options.share_variables_with; variables.c reaches them through it), and
   * whose packed weights it borrows (wick_op_packed_shared). */
  wick_interpreter *state_owner;
  uint32_t sharers; /* live interpreters whose state_owner this is */
  /* This interpreter's wick_op_packed_shared buffers (keys and pointers into its graphs'
   * memory), rebuilt at every prepare of the main graph. */
  struct wick_shared_pack *shared_packs;
  uint32_t num_shared_packs, cap_shared_packs;
  wick_delegate **delegates; /* options.delegates, copied; num_delegates of them */
  size_t num_delegates;
  char error[512];
};

/* ---------------------------------------------------------------- delegates (delegate.c) */

/* Checks options.delegates and copies the list into it; INVALID_ARGUMENT with the reason
 * in it->error. */
WICK_INTERNAL wick_status wick_delegates_adopt(wick_interpreter *it,
                                               const wick_interpreter_options *o);
/* After the nodes are prepared for the CPU (before fusion and planning): offers nodes to
 * the delegates, forms partitions and the execution order. Never fails: when out of memory
 * everything stays on the CPU (with a log line). */
WICK_INTERNAL void wick_graph_partition(wick_graph *g);
/* After planning: each delegate prepares its partitions (failures fall back, logged). */
WICK_INTERNAL void wick_graph_prepare_partitions(wick_graph *g);
/* Frees the delegates' partition states (before the graph's memory goes). */
WICK_INTERNAL void wick_graph_free_partitions(wick_graph *g);
/* Runs partition p at invoke. true: it ran on its delegate; false: its nodes must run on
 * the CPU (a failure was logged, and the partition is off until the next prepare).
 * *status is WICK_ERR_CANCELLED when the delegate stopped on a cancel. */
WICK_INTERNAL bool wick_partition_invoke(wick_graph *g, wick_partition *p, wick_status *status);
/* 1 for a delegate that only plans (wick_delegate.plans_only, appended after destroy). */
static inline bool wick_delegate_plans_only(const wick_delegate *d) {
  return d->struct_size >= offsetof(wick_delegate, plans_only) + sizeof d->plans_only &&
         d->plans_only != 0;
}
/* 1 for a delegate that leaves notes on the nodes it takes (wick_delegate.notes, appended). */
static inline bool wick_delegate_keeps_notes(const wick_delegate *d) {
  return d->struct_size >= offsetof(wick_delegate, notes) + sizeof d->notes && d->notes != 0;
}
/* Why node n of g is never offered to a delegate, or NULL when it is (delegate.c); static. */
WICK_INTERNAL const char *wick_node_not_offered(const wick_graph *g, const wick_node *n);
/* The same for the report: a dynamic IF's or WHILE's says which output and why (the branches'
 * shapes, the loop variable the body changes), in `owner`'s graph memory. */
WICK_INTERNAL const char *wick_node_offer_why(wick_graph *owner, const wick_graph *g,
                                              const wick_node *n);
/* After partitioning the bound subgraph: the report rows of the operators inside the
 * subgraphs its operators run (delegation_report.c). Never fails: out of memory, the rows
 * are left out. */
WICK_INTERNAL void wick_graph_build_report(wick_graph *g);
/* Sends a message to options.log. */
WICK_INTERNAL void wick_interp_log(wick_interpreter *it, wick_log_level level, const char *fmt, ...)
    WICK_PRINTF(3, 4);

/* The tensor of output i that node n writes (fusion may redirect 0). */
WICK_INTERNAL int32_t wick_node_output_index(const wick_node *n, uint32_t i);
/* The tensor input i of node n reads (-1: absent; a folded PAD redirects 0). */
WICK_INTERNAL int32_t wick_node_input_index(const wick_node *n, uint32_t i);
/* Checks a shape (rank in [0, WICK_MAX_RANK], dims >= 0, the element count
 * and byte size representable) and gives its byte size; otherwise a status
 * and the reason in `why`. */
WICK_INTERNAL wick_status wick_check_shape(int32_t rank, const int32_t *dims, wick_dtype type,
                                           size_t *bytes, char *why, size_t why_size);
/* Memory of a graph (interpreter.c): until the next prepare, or, for dynamic
 * nodes prepared during invoke, until the next invoke; zeroed if `zero`. */
WICK_INTERNAL void *wick_graph_alloc(wick_graph *g, size_t size, bool zero);
/* Prepare: a node read input tensor `index` for the last time (it packed it, or it was folded).
 * A constant in the model file that wick mapped itself gives its pages back to the OS
 * (MADV_DONTNEED on a read-only private file mapping: whatever reads them later reads them back
 * from the file, so the data stay valid). A folded or realigned constant (wick's own memory)
 * whose every reader has released it loses its storage (pages dropped, data NULL: "no
 * storage"), unless delegates may still read it, a caller's allocator or a memory cap owns
 * the memory, or it is a graph input, output or variable. Small tensors keep their pages. */
WICK_INTERNAL void wick_graph_release_input(wick_graph *g, int32_t index);
/* Allocates (or grows) a dynamic tensor's storage at invoke. */
WICK_INTERNAL wick_status wick_graph_ensure_dynamic(wick_graph *g, wick_tensor *t);

/* Graph-level fusion after prepare (src/core/fuse.c): folds activations and
 * residual adds into the epilogue of the conv / depthwise / fully connected
 * node that produces their input. */
WICK_INTERNAL void wick_graph_fuse(wick_graph *g);
/* True when ctx->node runs a pattern fuse.c replaced (fusion.norm,
 * fusion.unary or fusion.attention) instead of its own op; wick_fused_invoke
 * runs it (src/ops/fused.c). */
static inline bool wick_node_runs_fused(const wick_node *n) {
  return n->fusion.norm.form != WICK_NORM_NONE || n->fusion.unary != 0 || n->fusion.attention.on ||
         n->fusion.q8_swish != 0 || n->fusion.affine.on;
}

/* PAD folding during prepare (src/core/fuse.c). create: before the first
 * node's prepare; NULL when the graph has no PAD/PADV2 (or out of memory):
 * then nothing folds. fold: just before a node's prepare; when the node is a
 * CONV_2D / DEPTHWISE_CONV_2D / MAX_POOL_2D whose input 0 is the private output of a PAD
 * that pads only H and W with the value implicit padding means, marks the
 * PAD fused and points the node at the PAD's input (wick_node_fusion).
 * unfold: undoes that (the node's prepare deferred). */
typedef struct wick_pad_folder wick_pad_folder;
WICK_INTERNAL wick_pad_folder *wick_pad_folder_create(wick_graph *g);
WICK_INTERNAL void wick_pad_folder_fold(wick_pad_folder *f, wick_node *n);
WICK_INTERNAL void wick_pad_folder_unfold(wick_pad_folder *f, wick_node *n);
WICK_INTERNAL void wick_pad_folder_destroy(wick_pad_folder *f);

#endif /* WICK_CORE_INTERNAL_H */
