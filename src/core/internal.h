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

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/params.h"
#include "wick/wick.h"

#define WICK_INTERNAL __attribute__((visibility("hidden")))
#define WICK_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Caps on what a file may ask for. */
#define WICK_MAX_SUBGRAPHS 4096
#define WICK_MAX_TENSORS (1u << 22)
#define WICK_MAX_OPERATORS (1u << 22)
#define WICK_MAX_OP_INPUTS 1024
#define WICK_MAX_ELEMENTS ((int64_t)1 << 40) /* per tensor; bytes must also fit size_t */
#define WICK_MAX_NESTING 16                  /* subgraphs calling subgraphs */
#define WICK_MAX_GRAPHS 4096 /* graph instances per interpreter: a DAG of calls can fan out */
#define WICK_MAX_THREADS 64  /* options.num_threads above this is clamped */

/* Internal status: prepare cannot know an output shape until the inputs hold
 * data (the op is re-prepared at invoke). Never returned to users. */
#define WICK_STATUS_DEFER ((wick_status)100)

/* ---------------------------------------------------------------- checked arithmetic */

static inline bool wick_mul_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool wick_add_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool wick_mul_size(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool wick_add_size(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline size_t wick_align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

/* ---------------------------------------------------------------- memory */

/* Every allocation of a model or an interpreter goes through one wick_mem,
 * which applies the user's allocator and memory cap. Blocks are 64-byte
 * aligned. */
typedef struct wick_mem {
  wick_allocator allocator;
  size_t limit; /* 0 = none */
  size_t used;
  size_t peak;
} wick_mem;

/* With the default allocator (memory.c), blocks of at least this size (the
 * activation arena, large packed weights) start on a 2 MiB boundary, so a
 * system that backs memory with transparent huge pages on its own
 * (THP "always") can map them with 2 MiB pages. wick does not advise
 * MADV_HUGEPAGE: with the common defrag=madvise setting that advice makes page
 * faults compact memory synchronously, and on a busy machine DistilBERT's
 * prepare then took 2.5-3.6 s instead of 0.12-0.7 s (and 1 in 8 MobileNetV3
 * cold starts stalled ~25 ms), more than the ~2 ms of faults it saves. */
#define WICK_HUGE_BLOCK ((size_t)2 << 20)

WICK_INTERNAL void wick_mem_init(wick_mem *mem, const wick_allocator *allocator, size_t limit);
/* True for the default allocator with no cap: small packed buffers are then
 * grouped into WICK_HUGE_BLOCK-aligned chunks (fewer blocks, fewer faults). */
WICK_INTERNAL bool wick_mem_huge_blocks(const wick_mem *mem);
/* Returns the whole 4 KiB pages inside [start, start + bytes) of a default-
 * allocator block to the OS (they read as zero when touched again): the
 * unused tail of a huge page that a packed-weight chunk touched. */
WICK_INTERNAL void wick_mem_drop_pages(void *start, size_t bytes);
WICK_INTERNAL void *wick_mem_alloc(wick_mem *mem, size_t size);
WICK_INTERNAL void *wick_mem_calloc(wick_mem *mem, size_t count, size_t size);
WICK_INTERNAL void wick_mem_free(wick_mem *mem, void *ptr);
/* Counts `bytes` the runtime holds outside wick_mem (worker thread stacks)
 * against the cap; false when the cap would be exceeded. */
WICK_INTERNAL bool wick_mem_charge(wick_mem *mem, size_t bytes);
WICK_INTERNAL void wick_mem_discharge(wick_mem *mem, size_t bytes);

/* ---------------------------------------------------------------- errors */

/* Formats into a fixed buffer; never fails, truncates. */
WICK_INTERNAL void wick_format_message(char *buf, size_t size, const char *fmt, ...)
    WICK_PRINTF(3, 4);
WICK_INTERNAL void wick_vformat_message(char *buf, size_t size, const char *fmt, va_list ap);

/* Reads a caller's option struct (wick_model_options, wick_interpreter_options:
 * `what` names it) by its leading struct_size into `out`, which holds the
 * defaults: the fields the caller's struct covers are copied, the others keep
 * their defaults, and out's struct_size becomes `ours`. A struct_size below
 * `first_version_size`, or a nonzero byte past `ours`, is
 * WICK_ERR_INVALID_ARGUMENT with the reason in `message` (options.c). */
WICK_INTERNAL wick_status wick_read_options(const void *caller, size_t first_version_size,
                                            size_t ours, void *out, const char *what,
                                            char *message, size_t message_size);

/* ---------------------------------------------------------------- the verified model */

typedef struct wick_quant {
  uint32_t count; /* 0: not quantized */
  float *scale;
  int64_t *zero_point;
  int32_t quantized_dimension;
} wick_quant;

/* Sparse storage of a constant (the schema's SparsityParameters), verified
 * by src/format/reader.c. The stored values are the non-zero elements visited
 * level by level: levels 0 .. rank-1 walk the tensor's dims in the file's
 * traversal order (a blocked dim walks its block count), the levels after
 * them walk the blocks' own dims. A DENSE level visits every index below its
 * extent; a SPARSE_CSR level visits, for parent position p, the indices
 * indices[segments[p] .. segments[p + 1]). Positions number the visited
 * entries of a level in order; the last level's position is the index of
 * the stored value. Verified: every index < extent, segments start at 0,
 * never decrease and end at the index count, and the values fill the buffer
 * exactly. Densified by wick_sparse_densify (src/core/sparse.c). */
typedef struct wick_sparse_level {
  bool csr;         /* SPARSE_CSR; else DENSE */
  int32_t extent;   /* indices along this level */
  int64_t stride;   /* dense elements one index step moves (row-major) */
  uint8_t segment_width, index_width; /* bytes per entry: 1, 2 or 4 (little-endian) */
  uint32_t num_segments, num_indices;
  const uint8_t *segments, *indices; /* in the file; CSR only */
} wick_sparse_level;

typedef struct wick_sparsity {
  int32_t num_levels; /* rank + blocked dims */
  wick_sparse_level levels[2 * WICK_MAX_RANK];
  int64_t num_values; /* stored values */
} wick_sparsity;

/* Entry i of a little-endian index vector of `width` bytes per entry. */
static inline uint32_t wick_sparse_entry(const uint8_t *p, uint8_t width, uint64_t i) {
  const uint8_t *q = p + i * width;
  uint32_t v = q[0];
  if (width >= 2) v |= (uint32_t)q[1] << 8;
  if (width == 4) v |= (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
  return v;
}

typedef struct wick_tensor_info {
  const char *name; /* never NULL ("" when the file has none) */
  int32_t type;     /* the schema's TensorType (a wick_dtype when known) */
  int32_t rank;
  int32_t dims[WICK_MAX_RANK];
  int32_t dims_signature[WICK_MAX_RANK]; /* -1 marks a dynamic dim; = dims if absent */
  uint32_t buffer;
  const uint8_t *data; /* constant bytes in the file, or NULL */
  size_t data_size;
  wick_quant quant;
  bool is_variable;
  /* Sparse storage (NULL: dense). `data` then holds num_values elements;
   * only DENSIFY and FULLY_CONNECTED weights read such a tensor. */
  const wick_sparsity *sparsity;
} wick_tensor_info;

typedef struct wick_opcode {
  int32_t builtin; /* max(deprecated_builtin_code, builtin_code) */
  int32_t version;
  const char *custom_name; /* NULL unless CUSTOM */
} wick_opcode;

typedef struct wick_operator_info {
  int32_t builtin;
  int32_t version;
  const char *custom_name;
  uint32_t num_inputs, num_outputs, num_intermediates;
  int32_t *inputs; /* -1 = optional input absent */
  int32_t *outputs;
  int32_t *intermediates;
  wick_op_params params;
  const uint8_t *custom_options;
  size_t custom_options_size;
} wick_operator_info;

typedef struct wick_subgraph_info {
  const char *name;
  uint32_t num_tensors, num_inputs, num_outputs, num_operators;
  wick_tensor_info *tensors;
  int32_t *inputs;
  int32_t *outputs;
  wick_operator_info *operators;
} wick_subgraph_info;

typedef struct wick_signature_info {
  const char *key;
  uint32_t subgraph;
  uint32_t num_inputs, num_outputs;
  const char **input_names;
  int32_t *input_tensors; /* tensor indices in the subgraph */
  const char **output_names;
  int32_t *output_tensors;
} wick_signature_info;

/* A bump allocator for the model's decoded tables: chunks freed together. */
typedef struct wick_bump {
  wick_mem *mem;
  void *chunks; /* linked list */
  uint8_t *cur;
  size_t left;
} wick_bump;

WICK_INTERNAL void *wick_bump_alloc(wick_bump *bump, size_t size);
WICK_INTERNAL void wick_bump_release(wick_bump *bump);

struct wick_model {
  wick_mem mem;
  wick_bump bump;
  wick_log_fn log;
  void *log_user;
  const uint8_t *bytes; /* the whole file */
  size_t size;
  void *owned_copy;  /* bytes copied by wick_model_load_buffer(copy_buffer=1) */
  void *mapping;     /* mmap of wick_model_load_file */
  size_t mapping_size;
  const char *description;
  uint32_t num_subgraphs, num_signatures;
  wick_subgraph_info *subgraphs;
  wick_signature_info *signatures;
};

/* Parses and verifies `bytes`, filling `model` (whose mem/bump are ready).
 * On failure writes a message naming table, field and index into `error`. */
WICK_INTERNAL wick_status wick_format_read_model(wick_model *model, char *error, size_t error_size);

/* Writes the dense form of a sparse constant (info->sparsity and info->data
 * set, verified at load) into `dst`: wick_shape_elements(info) elements of
 * `esize` bytes, zeros where nothing is stored. Any element size works: values
 * are copied as bytes. */
WICK_INTERNAL void wick_sparse_densify(const wick_tensor_info *info, size_t esize, void *dst);

/* Name of a builtin operator code ("CONV_2D"), or "UNKNOWN". */
WICK_INTERNAL const char *wick_builtin_name(int32_t code);

/* ---------------------------------------------------------------- runtime graphs */

typedef enum wick_alloc_kind {
  WICK_ALLOC_NONE = 0,     /* no storage (absent, or not yet sized) */
  WICK_ALLOC_CONSTANT,     /* points at the model's bytes (read-only) */
  WICK_ALLOC_ARENA,        /* planned activation arena */
  WICK_ALLOC_PERSISTENT,   /* owned: folded constants, realigned constants, variables */
  WICK_ALLOC_DYNAMIC       /* owned, (re)sized at invoke: data-dependent shapes */
} wick_alloc_kind;

struct wick_tensor {
  const wick_tensor_info *info;
  const char *name; /* signature name for graph inputs/outputs, else info->name */
  wick_dtype type;
  int32_t rank;
  int32_t dims[WICK_MAX_RANK];
  size_t bytes;
  void *data;
  wick_alloc_kind alloc;
  bool known; /* data is known at prepare time (constant or folded) */
  size_t capacity; /* bytes owned, for PERSISTENT/DYNAMIC */
  size_t arena_offset;
};

typedef struct wick_op_def wick_op_def;
typedef struct wick_graph wick_graph;

/* A list of blocks freed together. */
typedef struct wick_alloc_list {
  void **items;
  size_t count, cap;
} wick_alloc_list;

/* What graph-level fusion (src/core/fuse.c) folded into a node. All zero:
 * nothing. The node still computes its own op, then, in its epilogue:
 * `activation` (1 + a wick_f32_unary_kind of src/kernels/kernels.h), or
 * adds tensor `residual - 1` and clamps to [lo, hi] (a folded ADD); its
 * output 0 is then tensor `output` (the last fused node's output).
 * A folded PAD in front of a convolution: input 0 is tensor `input - 1`
 * (the PAD's input) and `pad` (top, bottom, left, right) is the PAD's
 * explicit padding, added to the convolution's own (wick_conv_spatial). */
/* A decomposed layer normalization over the trailing `inner` elements of
 * each row, recognized by fuse.c and run as one kernel (src/ops/fused_norm.c)
 * by the MEAN node that starts it, in the order of operations of the form
 * it was written in:
 *   CENTERED (wick's converter, torch):  d = x - mean;
 *     y = d * rsqrt(mean(d * d) + eps) [* gamma] [+ beta]
 *   SCALED (TensorFlow's converter, Keras): s = rsqrt(mean((x - mean)^2) + eps) [* gamma];
 *     y = x * s + ((-mean) * s [+ beta])
 * gamma, beta: constant tensors of `inner` elements, -1 when absent. */
typedef enum wick_norm_form { WICK_NORM_NONE, WICK_NORM_CENTERED, WICK_NORM_SCALED } wick_norm_form;
typedef struct wick_norm_fusion {
  wick_norm_form form;
  int32_t gamma, beta;
  float eps;
  size_t inner;
} wick_norm_fusion;

typedef struct wick_node_fusion {
  bool redirected;
  int32_t output;
  int32_t activation;
  int32_t residual;
  float lo, hi;
  int32_t input;
  int32_t pad[4];
  wick_norm_fusion norm; /* form != NONE: the node runs it instead of its own op */
  /* != 0: the node runs vectorized unary `unary - 1` (a wick_f32_unary_kind)
   * on tensor `unary_input` instead of its own op (a decomposed GELU) */
  int32_t unary;
  int32_t unary_input;
} wick_node_fusion;

typedef struct wick_node {
  const wick_operator_info *op;
  const wick_op_def *def;
  uint32_t index; /* operator index in the subgraph */
  void *user_data; /* op-private, allocated with wick_node_alloc */
  size_t scratch_bytes;
  uint64_t macs;
  uint64_t time_ns;
  wick_op_thread_stats threads; /* of the last profiled invoke */
  bool folded;   /* computed at prepare; skipped at invoke */
  bool dynamic;  /* prepared again at invoke (data-dependent shapes) */
  bool fused;    /* another node's epilogue does its work; skipped at invoke */
  bool stateful; /* reads or writes interpreter state (wick_op_mark_stateful): never folded */
  wick_node_fusion fusion;
  wick_graph *child[2]; /* subgraphs this node runs (composite, control flow) */
} wick_node;

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
  wick_alloc_list invoke_allocs;   /* made by dynamic nodes at invoke; freed next invoke */
  bool in_invoke;
  uint32_t num_inputs, num_outputs;
  int32_t *inputs, *outputs; /* tensor indices */
  bool prepared;
};

/* ---------------------------------------------------------------- threads (thread_pool.c) */

/* One task of a parallel loop. `thread` in [0, threads) names the OS thread
 * running it (0 = the caller of invoke), e.g. to pick per-thread scratch. */
typedef void (*wick_task_fn)(void *arg, size_t task, size_t thread);
/* A range [begin, end) of work units (wick_parallel_range). */
typedef void (*wick_range_fn)(void *arg, size_t begin, size_t end, size_t thread);

/* Work below which splitting is not worth a task, in multiply-accumulates
 * (or comparable element operations): ~2-5 us of one core. */
#define WICK_TASK_GRAIN ((uint64_t)1 << 18)

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
 * inline in task order. */
WICK_INTERNAL bool wick_thread_pool_run(wick_thread_pool *pool, size_t n_tasks, wick_task_fn fn,
                                        void *arg, const atomic_int *cancel);

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

/* ---------------------------------------------------------------- resource variables (variables.c) */

/* A resource variable: VAR_HANDLE names it by (container, shared_name) from
 * the file, ASSIGN_VARIABLE stores a copy of a tensor in it, READ_VARIABLE
 * copies it out. One table per interpreter, shared by all of its graphs (an
 * init subgraph run by CALL_ONCE assigns what the main graph reads). A
 * variable's id is its index in the table; ids are handed out at prepare and
 * stay valid for the interpreter's life (wick_interpreter_reset_variables
 * clears values, not ids). The value takes the type and shape of the last
 * assignment, as in LiteRT; its storage counts against the memory cap. */
typedef struct wick_op_ctx wick_op_ctx;

typedef struct wick_variable {
  const char *container, *shared_name; /* point into the model */
  size_t container_len, shared_name_len;
  bool assigned;
  wick_dtype type;
  int32_t rank;
  int32_t dims[WICK_MAX_RANK];
  size_t bytes;
  void *data; /* a wick_mem block of max(bytes, 1) while assigned, else NULL */
} wick_variable;

/* At most this many distinct variables per interpreter (each VAR_HANDLE key). */
#define WICK_MAX_VARIABLES (1u << 20)

typedef struct wick_variables {
  wick_variable *items;
  uint32_t count, cap;
  uint32_t *slots; /* open-addressing hash of the keys: id + 1, 0 = empty */
  uint32_t num_slots; /* a power of two, > 2 * count; 0 before the first variable */
} wick_variables;

/* The id of the variable named (container, shared_name), registered when new.
 * Fails (naming ctx's op) when out of memory or past WICK_MAX_VARIABLES. */
WICK_INTERNAL wick_status wick_variable_handle(const wick_op_ctx *ctx, const char *container,
                                               size_t container_len, const char *shared_name,
                                               size_t shared_name_len, int32_t *id_out);
/* Variable `id` of ctx's interpreter, or NULL when no variable has that id. */
WICK_INTERNAL wick_variable *wick_variable_at(const wick_op_ctx *ctx, int32_t id);
/* Stores a copy of `value` (type, shape and bytes) in variable `v`. Fails only
 * when out of memory; the old value is kept then. */
WICK_INTERNAL wick_status wick_variable_assign(const wick_op_ctx *ctx, wick_variable *v,
                                               const wick_tensor *value);
/* Drops every variable's value (ids stay) and re-arms every CALL_ONCE. */
WICK_INTERNAL void wick_variables_clear(wick_interpreter *it);
/* Frees the table. */
WICK_INTERNAL void wick_variables_destroy(wick_interpreter *it);
/* CALL_ONCE: reserve (at prepare; fails only when out of memory) the flags;
 * whether init subgraph `subgraph` has run since create or the last reset,
 * and marking it so. */
WICK_INTERNAL wick_status wick_call_once_reserve(const wick_op_ctx *ctx);
WICK_INTERNAL bool wick_call_once_done(const wick_op_ctx *ctx, uint32_t subgraph);
WICK_INTERNAL void wick_call_once_mark(const wick_op_ctx *ctx, uint32_t subgraph);

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
  bool no_fusion; /* WICK_NO_FUSION=1 (or force_reference): every node runs on its own */
  bool no_in_place; /* WICK_NO_IN_PLACE=1 (or no_fusion): every output its own storage (plan.c) */
  bool no_winograd; /* WICK_NO_WINOGRAD=1: 3x3 convolutions stay on the indirect GEMM */
  wick_weight_cache cache;
  wick_variables variables;  /* resource variables (variables.c); unused when state_owner */
  uint8_t *init_done;        /* per subgraph: CALL_ONCE ran it (allocated on first use) */
  /* NULL, or the interpreter whose variables and init_done this one uses
   * (options.share_variables_with; variables.c reaches them through it), and
   * whose packed weights it borrows (wick_op_packed_shared). */
  wick_interpreter *state_owner;
  uint32_t sharers; /* live interpreters whose state_owner this is */
  /* This interpreter's wick_op_packed_shared buffers (keys and pointers into its graphs'
   * memory), rebuilt at every prepare of the main graph. */
  struct wick_shared_pack *shared_packs;
  uint32_t num_shared_packs, cap_shared_packs;
  char error[512];
};

/* ---------------------------------------------------------------- the operator interface */

/* Passed to an op's prepare and invoke. */
typedef struct wick_op_ctx {
  wick_graph *graph;
  wick_node *node;
  const wick_op_params *params;
} wick_op_ctx;

struct wick_op_def {
  const char *name;
  int32_t builtin;
  int32_t max_version;
  /* Checks inputs and options, sets output shapes with wick_op_set_output,
   * requests scratch, allocates op data. May return WICK_STATUS_DEFER when
   * an output shape depends on input values not known yet. */
  wick_status (*prepare)(wick_op_ctx *ctx);
  /* Computes the outputs. Fails only on data-dependent values. */
  wick_status (*invoke)(wick_op_ctx *ctx);
};

/* Whether an op's outputs depend on its inputs' shapes only, never their values (SHAPE):
 * such a node is folded at prepare whenever those shapes are static, as if its inputs were
 * constants (src/ops/registry.c). */
WICK_INTERNAL bool wick_op_reads_shapes_only(const wick_op_def *def);

/* Finds the op definition for a builtin code, or NULL (src/ops/registry.c). */
WICK_INTERNAL const wick_op_def *wick_op_find(int32_t builtin);
/* Finds the definition of a custom operator by its custom code, or NULL
 * (src/ops/custom_op_table.inc). */
WICK_INTERNAL const wick_op_def *wick_op_find_custom(const char *custom_code);
/* The definition that runs `op` (builtin or custom), or NULL with the reason in `why`:
 * an unknown builtin or custom code, or a version newer than wick implements. */
WICK_INTERNAL const wick_op_def *wick_op_lookup(const wick_operator_info *op, char *why,
                                                size_t why_size);
/* Iterates over the op table; returns NULL past the end. */
WICK_INTERNAL const wick_op_def *wick_op_at(size_t i);

/* Op helpers (src/core/op_ctx.c). */
WICK_INTERNAL size_t wick_op_num_inputs(const wick_op_ctx *ctx);
WICK_INTERNAL size_t wick_op_num_outputs(const wick_op_ctx *ctx);
/* Input i, or NULL when absent (-1) or i is past the end. */
WICK_INTERNAL wick_tensor *wick_op_input(const wick_op_ctx *ctx, size_t i);
WICK_INTERNAL wick_tensor *wick_op_output(const wick_op_ctx *ctx, size_t i);
/* The node's custom_options bytes (NULL and 0 when it has none). */
WICK_INTERNAL const uint8_t *wick_op_custom_options(const wick_op_ctx *ctx, size_t *size_out);
/* Records "<OP> (operator N): <message>" and returns `status`. */
WICK_INTERNAL wick_status wick_op_fail(const wick_op_ctx *ctx, wick_status status, const char *fmt,
                                       ...) WICK_PRINTF(3, 4);
/* Sets output i's shape (checked: rank cap, dims >= 0, element/byte count
 * caps) and checks its declared type equals `type`. */
WICK_INTERNAL wick_status wick_op_set_output(const wick_op_ctx *ctx, size_t i, wick_dtype type,
                                             int32_t rank, const int32_t *dims);
/* Memory that lives until the next prepare of this graph; NULL on OOM. */
WICK_INTERNAL void *wick_op_alloc(const wick_op_ctx *ctx, size_t size);
/* Memory for packed weights until the next prepare: not zeroed, 64-byte
 * aligned, carved from huge-page chunks when wick_mem_huge_blocks. */
WICK_INTERNAL void *wick_op_alloc_packed(const wick_op_ctx *ctx, size_t size);
/* Storage for packed constant data of this node: weights re-laid out for a
 * kernel, read-only once filled, with no pointers inside. `slot` numbers the
 * node's packed buffers; `layout` names the layout (e.g. the panel width).
 * When the weight cache holds the buffer, returns its bytes with *from_cache
 * set: the caller must not write them. Otherwise returns fresh uninitialized
 * memory that the caller packs completely (the cache file written after
 * prepare then holds it). NULL when out of memory. */
/* As wick_op_packed, for packed data that is a function of the source
 * buffers `sources[0..num_sources)` (constant data in the model: weights,
 * bias; at most 2), the numbers `params[0..num_params)` (their shapes; at
 * most 4), the node's operator, `slot`, `layout` and `bytes` alone —
 * nothing else of the node. An interpreter that shares another's state
 * (options.share_variables_with) then borrows that interpreter's buffer for
 * the same key instead of packing its own copy (*from_cache set: read-only),
 * so the signatures of one model hold their common weights once. Every
 * interpreter records its buffers for that (weight_cache.c). */
WICK_INTERNAL void *wick_op_packed_shared(const wick_op_ctx *ctx, const void *const *sources,
                                          size_t num_sources, const int64_t *params,
                                          size_t num_params, uint32_t slot, uint32_t layout,
                                          size_t bytes, bool *from_cache);
WICK_INTERNAL void *wick_op_packed(const wick_op_ctx *ctx, uint32_t slot, uint32_t layout,
                                   size_t bytes, bool *from_cache);
/* Marks ctx's node as reading or writing state that lives across invokes
 * (resource variables, CALL_ONCE): it is never folded at prepare, even when
 * every input is known, and runs at every invoke. Call from prepare. */
WICK_INTERNAL void wick_op_mark_stateful(const wick_op_ctx *ctx);
/* Asks for `bytes` of scratch, valid during invoke via wick_op_scratch. */
WICK_INTERNAL void wick_op_request_scratch(const wick_op_ctx *ctx, size_t bytes);
WICK_INTERNAL void *wick_op_scratch(const wick_op_ctx *ctx);
/* True when the user asked for the reference kernels. */
WICK_INTERNAL bool wick_op_force_reference(const wick_op_ctx *ctx);
/* False when WICK_NO_WINOGRAD=1 turned the Winograd convolution off. */
WICK_INTERNAL bool wick_op_winograd_allowed(const wick_op_ctx *ctx);
/* The tensor of output i that this node writes (fusion may redirect 0). */
WICK_INTERNAL int32_t wick_node_output_index(const wick_node *n, uint32_t i);
/* The tensor input i reads (-1: absent; a folded PAD redirects 0). */
WICK_INTERNAL int32_t wick_node_input_index(const wick_node *n, uint32_t i);

/* Graph-level fusion after prepare (src/core/fuse.c): folds activations and
 * residual adds into the epilogue of the conv / depthwise / fully connected
 * node that produces their input. */
WICK_INTERNAL void wick_graph_fuse(wick_graph *g);
/* True when ctx->node runs a pattern fuse.c replaced (fusion.norm or
 * fusion.unary) instead of its own op; wick_fused_invoke runs it
 * (src/ops/fused.c). */
static inline bool wick_node_runs_fused(const wick_node *n) {
  return n->fusion.norm.form != WICK_NORM_NONE || n->fusion.unary != 0;
}
WICK_INTERNAL wick_status wick_fused_invoke(const wick_op_ctx *ctx);

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

/* Parallel loops for op invoke (src/core/thread_pool.c; docs/architecture.md,
 * "Threads"). Runs fn(arg, task, thread) for task in [0, n_tasks) on the
 * interpreter's threads, the calling thread included, and returns when all
 * are done. Tasks must write disjoint outputs and compute each output the
 * same way whichever task or thread runs it, so results are bit-identical
 * for any thread count: split by shape, never by wick_op_num_threads().
 * Between tasks the cancel flag is checked; a cancelled loop returns
 * WICK_ERR_CANCELLED (with the op's message) after the running tasks end,
 * and invoke must return that status. One task (or one thread) runs inline. */
WICK_INTERNAL wick_status wick_parallel_for(const wick_op_ctx *ctx, size_t n_tasks,
                                            wick_task_fn fn, void *arg);
/* Splits [0, units) into consecutive ranges of about WICK_TASK_GRAIN work
 * (work_per_unit each; an even number of ranges whose sizes differ by at most
 * one unit, src/kernels/split.h) and runs fn on each range as above. The
 * split depends only on `units` and `work_per_unit`. */
WICK_INTERNAL wick_status wick_parallel_range(const wick_op_ctx *ctx, size_t units,
                                              uint64_t work_per_unit, wick_range_fn fn,
                                              void *arg);
/* Threads of this interpreter, the caller included (>= 1). For sizing
 * per-thread scratch only, never for splitting work. */
WICK_INTERNAL size_t wick_op_num_threads(const wick_op_ctx *ctx);

/* Element count of a shape (caller guarantees the shape was checked). */
WICK_INTERNAL int64_t wick_shape_elements(int32_t rank, const int32_t *dims);
static inline int64_t wick_tensor_elements(const wick_tensor *t) {
  return wick_shape_elements(t->rank, t->dims);
}

/* Child graphs for ops that run subgraphs (STABLEHLO_COMPOSITE, IF, WHILE):
 * a new instance of `subgraph` in the node's child slot `slot` (0 or 1),
 * replacing any graph there. Checks the index, the nesting depth and the
 * interpreter's cap on graph instances. */
WICK_INTERNAL wick_status wick_graph_create_child(const wick_op_ctx *ctx, uint32_t subgraph,
                                                  int slot, wick_graph **child_out);
/* Gives input i of a child graph a shape and prepares it. */
WICK_INTERNAL wick_status wick_graph_prepare_with_inputs(wick_graph *graph, const wick_op_ctx *ctx,
                                                         wick_tensor *const *inputs, size_t n);
WICK_INTERNAL wick_status wick_graph_invoke(wick_graph *graph);
/* For a dynamic node (prepared again at invoke) that learns an output's shape
 * only while it runs (IF, WHILE): sets output i's shape, checked as
 * wick_op_set_output, and gives it storage of that size. */
WICK_INTERNAL wick_status wick_op_resize_output(const wick_op_ctx *ctx, size_t i, int32_t rank,
                                                const int32_t *dims);
/* True once the caller asked to cancel the running invoke. */
WICK_INTERNAL bool wick_op_cancelled(const wick_op_ctx *ctx);

#endif /* WICK_CORE_INTERNAL_H */
