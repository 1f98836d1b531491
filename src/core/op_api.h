/*
 * op_api.h — the operator interface: the only core header an op may include
 * (scripts/check_layers.py). An op sees its context (wick_op_ctx: the decoded
 * options, and through functions its inputs, outputs, private data, memory,
 * scratch, threads, errors, child graphs and fusion record), its record
 * (wick_op_def: name, code, versions, flags) and the tensors it reads and
 * writes. The graph and the node are opaque: what the core may assume about an
 * op is in the op's flags, and what an op may ask of the core is below.
 * Implemented by src/core/op_ctx.c and the core; the op tables by
 * src/ops/registry.c.
 */
#ifndef WICK_CORE_OP_API_H
#define WICK_CORE_OP_API_H

#include <stdatomic.h>

#include "base/base.h"
#include "format/model.h"

typedef struct wick_graph wick_graph;
typedef struct wick_node wick_node;
typedef struct wick_op_def wick_op_def;

typedef enum wick_alloc_kind {
  WICK_ALLOC_NONE = 0,   /* no storage (absent, or not yet sized) */
  WICK_ALLOC_CONSTANT,   /* points at the model's bytes (read-only) */
  WICK_ALLOC_ARENA,      /* planned activation arena */
  WICK_ALLOC_PERSISTENT, /* owned: folded constants, realigned constants, variables */
  WICK_ALLOC_DYNAMIC     /* owned, (re)sized at invoke: data-dependent shapes */
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
  bool known;      /* data is known at prepare time (constant or folded) */
  size_t capacity; /* bytes owned, for PERSISTENT/DYNAMIC */
  size_t arena_offset;
};

/* What graph-level fusion (src/core/fuse.c) folded into a node. All zero:
 * nothing. The node still computes its own op, then, in its epilogue:
 * `activation` (1 + a wick_f32_unary_kind of src/kernels/kernels.h), or
 * adds tensor `residual - 1` and clamps to [lo, hi] (a folded ADD); its
 * output 0 is then tensor `output` (the last fused node's output).
 * A folded PAD in front of a convolution: input 0 is tensor `input - 1`
 * (the PAD's input) and `pad` (top, bottom, left, right) is the PAD's
 * explicit padding, added to the convolution's own (wick_conv_spatial). */
/* A decomposed layer normalization over the trailing `inner` elements of
 * each row, recognized by fuse.c and run as one kernel (src/ops/fused.c)
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

/* A scaled dot-product attention over a key/value cache (fuse.c, fuse_attention), run by its
 * first BATCH_MATMUL node (src/ops/attention.c) over the key positions the mask leaves
 * visible:
 *   s = BATCH_MATMUL(q [B..., M, d], kt [B..., d, S])   (the node itself)
 *   s = step(s) for each of `steps`                      (Gemma 2's soft-capping: DIV, TANH, MUL)
 *   z = ADD(s, mask [..., M or 1, S])                    (either operand order)
 *   p = SOFTMAX(z, beta)
 *   o = BATCH_MATMUL(p, v [B..., S, dv])                 (the node's redirected output 0)
 * with RESHAPE-like nodes that keep rows of S anywhere between the two BATCH_MATMULs and in
 * front of v. Each step: kind UNARY applies vectorized unary `unary` (a wick_f32_unary_kind);
 * MUL / DIV apply the binary kernel with the one-element constant `value` (MUL's operand order
 * in `scalar_first`). */
#define WICK_ATTENTION_MAX_STEPS 4
typedef enum wick_attention_step_kind {
  WICK_ATTENTION_UNARY,
  WICK_ATTENTION_MUL,
  WICK_ATTENTION_DIV
} wick_attention_step_kind;
typedef struct wick_attention_fusion {
  bool on;
  bool mask_first; /* ADD(mask, s) rather than ADD(s, mask) */
  bool inplace;    /* the kernels read the cache where it lies (wick_f32_attention.inplace) */
  /* tensors: the mask; the scores as the ADD sees them (a view of [B..., M, S] rows: the mask
   * broadcasts to it); the values' bytes, [B, S, dv] (the tensor the second BATCH_MATMUL's
   * operand is a RESHAPE of, if it is) */
  int32_t mask, view, values;
  size_t batches, m, d, s, dv; /* B (the product of q's batch dims), M, d, S, dv */
  float beta;                  /* SOFTMAX's */
  int32_t num_steps;
  struct {
    wick_attention_step_kind kind;
    int32_t unary;
    bool scalar_first;
    float value;
  } steps[WICK_ATTENTION_MAX_STEPS];
} wick_attention_fusion;

/* A per-channel affine (fuse.c, fuse_channel_affine: TensorFlow's BatchNormalization where
 * it could not fold into a convolution, e.g. after DenseNet's CONCATENATION):
 *   t = MUL(x, scale) (the node itself), y = ADD(t, shift) with ADD's clamp [lo, hi]
 * run by the MUL node in one pass (src/ops/fused.c), y its redirected output 0. scale and
 * shift: constant tensors of `channels` floats, x's last dimension; scale_first / shift_first
 * keep the file's operand orders. */
typedef struct wick_affine_fusion {
  bool on;
  bool scale_first, shift_first;
  int32_t input, scale, shift;
  size_t channels;
  float lo, hi;
} wick_affine_fusion;

typedef struct wick_node_fusion {
  bool redirected;
  int32_t output;
  int32_t activation;
  int32_t residual;
  float lo, hi;
  /* an elementwise float ADD / SUB / MUL / DIV without an activation whose output only a
   * RELU-family node reads: that node's clamp [lo, hi] folded into the op's own (fuse.c,
   * fuse_binary_clamp); the node stays elementwise (it may still run in place) */
  bool clamp;
  int32_t prelu; /* != 0: then PRELU with the constant alpha tensor `prelu - 1` (one per channel) */
  int32_t input;
  int32_t pad[4];
  wick_norm_fusion norm; /* form != NONE: the node runs it instead of its own op */
  /* != 0: the node runs vectorized unary `unary - 1` (a wick_f32_unary_kind)
   * on tensor `unary_input` instead of its own op (a decomposed GELU) */
  int32_t unary;
  int32_t unary_input;
  wick_attention_fusion attention; /* on: the node runs it instead of its own op */
  /* != 0: an 8-bit LOGISTIC node whose output (tensor `q8_swish_sigmoid`) only a MUL of it and
   * the LOGISTIC's input reads (swish: x * sigmoid(x), the sigmoid first when
   * `q8_swish_sigmoid_first`) runs the MUL's answers for x's 256 values as one table and writes
   * the MUL's output (redirected); `q8_swish - 1` is the MUL's fused activation (a
   * wick_activation). src/ops/activations_quantized.c, wick_q8_swish_invoke. */
  int32_t q8_swish;
  int32_t q8_swish_sigmoid;
  bool q8_swish_sigmoid_first;
  wick_affine_fusion affine; /* on: the node runs it instead of its own op */
} wick_node_fusion;

/* One task of a parallel loop. `thread` in [0, threads) names the OS thread
 * running it (0 = the caller of invoke), e.g. to pick per-thread scratch. */
typedef void (*wick_task_fn)(void *arg, size_t task, size_t thread);
/* A range [begin, end) of work units (wick_parallel_range). */
typedef void (*wick_range_fn)(void *arg, size_t begin, size_t end, size_t thread);

/* Work below which splitting is not worth a task, in multiply-accumulates
 * (or comparable element operations): ~2-5 us of one core. */
#define WICK_TASK_GRAIN ((uint64_t)1 << 18)
/* Work below which a job does not wake sleeping worker threads (it runs on the threads that
 * are awake, or inline on the caller): ~5-10 us of one core, about what waking a sleeping
 * thread (an interrupt to a halted vCPU on a VM) and waiting for its last task cost. MediaPipe's
 * hand_recrop ran 1.4x slower at 2 threads than at 1 on a 2-vCPU VM: its serial PRELU / PAD /
 * pool ops let the worker fall asleep, and each of ~15 small split ops paid the hand-off. A
 * worker that is awake (spinning between jobs) still takes its share of every job. At 8 grains
 * most of MobileNetV3Small's convolutions counted as small and ran on one thread whenever the
 * worker had fallen asleep (wick / LiteRT at 2 threads, interleaved: 1.45-1.59 at 8 grains,
 * 0.99-1.00 at 2; hand_recrop 1.24-1.57 -> 0.64-0.80). */
#define WICK_WAKE_MIN_WORK (WICK_TASK_GRAIN * 2)

/* ---------------------------------------------------------------- resource variables (variables.c)
 */

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
  /* Tensors of a plan point at `data` (wick_variable_bind): it keeps its block and size
   * from then on (an assignment of another size fails; a reset keeps the block). */
  bool bound;
} wick_variable;

/* At most this many distinct variables per interpreter (each VAR_HANDLE key). */
#define WICK_MAX_VARIABLES (1u << 20)

typedef struct wick_variables {
  wick_variable *items;
  uint32_t count, cap;
  uint32_t *slots;    /* open-addressing hash of the keys: id + 1, 0 = empty */
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
/* The storage of variable `id` of g's interpreter for tensors that are to
 * live in it (plan.c: a READ_VARIABLE whose value is updated in place and
 * assigned back): allocated with `like`'s size when the variable has none,
 * marked bound. NULL when the variable holds another size or type, or out
 * of memory. */
WICK_INTERNAL void *wick_variable_bind(wick_graph *g, int32_t id, const wick_tensor *like);
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

/* ---------------------------------------------------------------- the operator interface */

/* Passed to an op's prepare and invoke. */
typedef struct wick_op_ctx {
  wick_graph *graph;
  wick_node *node;
  const wick_op_params *params;
} wick_op_ctx;

/* What the core may assume about an op: the flags of its record (wick_op_def.flags). The core's
 * per-op decisions (in place, aliasing, folding, epilogues, variable binding) read these; it names
 * ops only in rules about the graph around several of them (docs/architecture.md lists where). */
enum {
  /* Every kernel reads element i of inputs 0 and 1 only to compute output element i, and
   * before writing it: the output may overwrite an input of its shape and type (plan.c). */
  WICK_OP_ELEMENTWISE = 1u << 0,
  /* The output is input 0's bytes under another shape: it may share them (plan.c). */
  WICK_OP_ALIAS = 1u << 1,
  /* The output is input 0 with a part overwritten: it may be written over input 0 of its shape
   * and type, and the kernel then skips copying the operand (plan.c). */
  WICK_OP_UPDATES_INPUT0 = 1u << 3,
  /* The outputs depend on the inputs' shapes only, never their values (SHAPE): the node is
   * folded at prepare whenever those shapes are static (interpreter.c). */
  WICK_OP_READS_SHAPES_ONLY = 1u << 2,
  /* The op has only the scalar reference kernels: its nodes report WICK_KERNEL_REFERENCE
   * unless their prepare records another kind (wick_op_set_kernel). Informational. */
  WICK_OP_REFERENCE_KERNELS = 1u << 4,
  /* The op's float32 kernels apply a fused epilogue to output 0 while it is in cache
   * (wick_node.fusion: an activation, a residual add, a PRELU, each as its record below says):
   * fuse.c may fold the single-input nodes that follow into it. */
  WICK_OP_TAKES_EPILOGUE = 1u << 5,
  /* out = in0 + in1 clamped by the node's fused activation: on float32 operands of one shape
   * it may join a producer's epilogue as the residual add (fuse.c). */
  WICK_OP_EPILOGUE_RESIDUAL = 1u << 6,
  /* out = in0 >= 0 ? in0 : in0 * in1, as the epilogue's PRELU step computes it (bit for bit):
   * with in1 a constant per channel it may join an epilogue, last (fuse.c). */
  WICK_OP_EPILOGUE_PRELU = 1u << 7,
  /* Input 0 is a resource handle and output 0 the variable's value (READ_VARIABLE): the planner
   * may give output 0's in-place group the variable's own storage (wick_variable_bind), and the
   * kernel then finds the value already there (plan.c). */
  WICK_OP_READS_VARIABLE = 1u << 8,
  /* Input 0 is a resource handle and input 1 the value stored in it (ASSIGN_VARIABLE): when the
   * value lives in the variable's storage the kernel skips the copy (plan.c). */
  WICK_OP_ASSIGNS_VARIABLE = 1u << 9,
  /* The op runs subgraphs of the model (IF, WHILE, CALL_ONCE, STABLEHLO_COMPOSITE), which may
   * read or assign any variable: the planner binds no variable across it (plan.c). */
  WICK_OP_RUNS_SUBGRAPHS = 1u << 10,
};

/* The flags of an op that computes on its one float32 input what the vectorized unary kernel
 * `kind` (wick_f32_unary_kind, src/kernels/kernels.h) computes: it may join a producer's
 * epilogue as that activation (fuse.c). Bits 16-23 of the flags hold 1 + kind. */
#define WICK_OP_EPILOGUE(kind) ((uint32_t)(1 + (kind)) << 16)
/* As WICK_OP_EPILOGUE, for the nodes of the op whose `approximate` option is set (GELU's tanh
 * form); the op must then carry WICK_OP_EPILOGUE too. Bits 24-31. */
#define WICK_OP_EPILOGUE_APPROXIMATE(kind) ((uint32_t)(1 + (kind)) << 24)

/* One record per op: everything the core knows about it. */
struct wick_op_def {
  const char *name; /* the schema's BuiltinOperator name, or the custom code */
  int32_t builtin;
  int32_t max_version;
  /* Checks inputs and options, sets output shapes with wick_op_set_output,
   * requests scratch, allocates op data. May return WICK_STATUS_DEFER when
   * an output shape depends on input values not known yet. */
  wick_status (*prepare)(wick_op_ctx *ctx);
  /* Computes the outputs. Fails only on data-dependent values. */
  wick_status (*invoke)(wick_op_ctx *ctx);
  uint32_t flags; /* WICK_OP_* */
};

static inline bool wick_op_has(const wick_op_def *def, uint32_t flag) {
  return def != NULL && (def->flags & flag) != 0;
}

/* The vectorized unary kernel (a wick_f32_unary_kind) that computes what a node of `def` with
 * `params` computes, when it may join an epilogue (WICK_OP_EPILOGUE); -1 otherwise. */
static inline int wick_op_epilogue_kind(const wick_op_def *def, const wick_op_params *params) {
  if (def == NULL) return -1;
  uint32_t approximate = (def->flags >> 24) & 0xffu;
  if (approximate != 0 && params != NULL && params->approximate) return (int)approximate - 1;
  return (int)((def->flags >> 16) & 0xffu) - 1;
}

/* Checks the op tables against the schema: each builtin entry's name and code agree with
 * op_table.inc's line and schema.h, the table is sorted by name without duplicates, every
 * entry has prepare, invoke and a version >= 1, and no flags contradict. False with the first
 * problem in `why` (src/ops/registry.c; run by the C unit tests and, in debug builds, on the
 * first lookup). */
WICK_INTERNAL bool wick_op_tables_check(char *why, size_t why_size);

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
/* Prepare, after packing input i (a constant) into wick_op_packed memory: the node reads
 * its bytes no more. Where they lie in the model file that wick mapped itself, their pages go
 * back to the OS, so the packed copy does not sit beside the file's (the data stay valid:
 * anything that reads them later, wick_tensor_data included, reads them back from the file).
 * Does nothing for a caller's buffer, a copy, a small or absent tensor, or at invoke. */
WICK_INTERNAL void wick_op_release_input(const wick_op_ctx *ctx, size_t i);
/* Marks ctx's node as reading or writing state that lives across invokes
 * (resource variables, CALL_ONCE): it is never folded at prepare, even when
 * every input is known, and runs at every invoke. Call from prepare. */
WICK_INTERNAL void wick_op_mark_stateful(const wick_op_ctx *ctx);
/* Asks for `bytes` of scratch, valid during invoke via wick_op_scratch. */
WICK_INTERNAL void wick_op_request_scratch(const wick_op_ctx *ctx, size_t bytes);
WICK_INTERNAL void *wick_op_scratch(const wick_op_ctx *ctx);
/* Which kind of kernel a node runs, recorded by its op at prepare (wick_op_set_kernel) and
 * shown by wick_interpreter_op_kernel and `wick bench --profile`, so that a slow path a file
 * hits shows. A node whose op records nothing is UNMARKED. */
typedef enum wick_kernel_kind {
  WICK_KERNEL_UNMARKED = 0,
  WICK_KERNEL_OPTIMIZED, /* vectorized or blocked for this CPU's ISA (src/kernels/<isa>) */
  WICK_KERNEL_GENERIC,   /* portable C that is not the reference kernel (no ISA kernel) */
  WICK_KERNEL_REFERENCE  /* the scalar reference kernels (src/kernels/reference) */
} wick_kernel_kind;
/* Records the kernel ctx's node runs: its kind, and a short name of the path ("igemm",
 * "winograd", "broadcast"; a string literal: it is kept, not copied; NULL for none). The last
 * call of a prepare wins; every prepare starts from UNMARKED. */
WICK_INTERNAL void wick_op_set_kernel(const wick_op_ctx *ctx, wick_kernel_kind kind,
                                      const char *name);
/* True when the user asked for the reference kernels. */
WICK_INTERNAL bool wick_op_force_reference(const wick_op_ctx *ctx);
/* False when WICK_NO_WINOGRAD=1 turned the Winograd convolution off. */
WICK_INTERNAL bool wick_op_winograd_allowed(const wick_op_ctx *ctx);

/* The node as an op sees it. */
/* The op's private data (set at prepare; NULL before). */
WICK_INTERNAL void *wick_op_data(const wick_op_ctx *ctx);
WICK_INTERNAL void wick_op_set_data(const wick_op_ctx *ctx, void *data);
/* The operator's builtin code (WICK_BUILTIN_CUSTOM for custom ops). */
WICK_INTERNAL int32_t wick_op_builtin(const wick_op_ctx *ctx);
/* Multiply-accumulates (or comparable work) of one invoke: set at prepare for profiles and
 * for splitting work over threads. */
WICK_INTERNAL void wick_op_set_macs(const wick_op_ctx *ctx, uint64_t macs);
WICK_INTERNAL uint64_t wick_op_macs(const wick_op_ctx *ctx);
/* True while the graph runs (an op prepared again at invoke, or its invoke), false while the
 * interpreter prepares. */
WICK_INTERNAL bool wick_op_in_invoke(const wick_op_ctx *ctx);
/* True when the node is prepared again at every invoke (an output shape depends on data). */
WICK_INTERNAL bool wick_op_dynamic(const wick_op_ctx *ctx);
/* The index of the subgraph this node belongs to. */
WICK_INTERNAL uint32_t wick_op_subgraph_index(const wick_op_ctx *ctx);
/* Intermediate tensor i of the operator (LSTM's hidden state), or NULL when the file has none
 * there (or it is out of range). */
WICK_INTERNAL wick_tensor *wick_op_intermediate(const wick_op_ctx *ctx, size_t i);
/* Any tensor of the node's graph by index (a fused epilogue's residual), or NULL. */
WICK_INTERNAL wick_tensor *wick_op_graph_tensor(const wick_op_ctx *ctx, int32_t index);
/* What fuse.c folded into this node (all zero: nothing); see wick_node_fusion. */
WICK_INTERNAL const wick_node_fusion *wick_op_fusion(const wick_op_ctx *ctx);
/* The child graph in slot 0 or 1 (IF's branches, WHILE's cond/body, a composite's body), or
 * NULL before wick_graph_create_child made it. */
WICK_INTERNAL wick_graph *wick_op_child(const wick_op_ctx *ctx, int slot);
/* A child graph as an op sees it: its subgraph index, and its input and output tensors. */
WICK_INTERNAL uint32_t wick_graph_subgraph(const wick_graph *g);
WICK_INTERNAL uint32_t wick_graph_num_inputs(const wick_graph *g);
WICK_INTERNAL uint32_t wick_graph_num_outputs(const wick_graph *g);
WICK_INTERNAL wick_tensor *wick_graph_input(const wick_graph *g, size_t i);
WICK_INTERNAL wick_tensor *wick_graph_output(const wick_graph *g, size_t i);

/* Runs the pattern fuse.c put on this node (its fusion record's norm, unary or attention)
 * instead of its own op (src/ops/fused.c). */
WICK_INTERNAL wick_status wick_fused_invoke(const wick_op_ctx *ctx);

/* Parallel loops for op invoke (src/core/thread_pool.c; docs/architecture.md,
 * "Threads"). Runs fn(arg, task, thread) for task in [0, n_tasks) on the
 * interpreter's threads, the calling thread included, and returns when all
 * are done. Tasks must write disjoint outputs and compute each output the
 * same way whichever task or thread runs it, so results are bit-identical
 * for any thread count: split by shape, never by wick_op_num_threads().
 * Between tasks the cancel flag is checked; a cancelled loop returns
 * WICK_ERR_CANCELLED (with the op's message) after the running tasks end,
 * and invoke must return that status. One task (or one thread) runs inline. */
WICK_INTERNAL wick_status wick_parallel_for(const wick_op_ctx *ctx, size_t n_tasks, wick_task_fn fn,
                                            void *arg);
/* The same with the job's total work (work units as WICK_TASK_GRAIN counts them; 0: unknown,
 * taken as WICK_TASK_GRAIN per task), which decides whether sleeping workers are woken for it
 * (WICK_WAKE_MIN_WORK). Which thread runs a task never changes its result. */
WICK_INTERNAL wick_status wick_parallel_for_work(const wick_op_ctx *ctx, size_t n_tasks,
                                                 uint64_t work, wick_task_fn fn, void *arg);
/* Splits [0, units) into consecutive ranges of about WICK_TASK_GRAIN work
 * (work_per_unit each; an even number of ranges whose sizes differ by at most
 * one unit, src/kernels/split.h) and runs fn on each range as above. The
 * split depends only on `units` and `work_per_unit`. */
WICK_INTERNAL wick_status wick_parallel_range(const wick_op_ctx *ctx, size_t units,
                                              uint64_t work_per_unit, wick_range_fn fn, void *arg);
/* Threads of this interpreter, the caller included (>= 1). For sizing
 * per-thread scratch only, never for splitting work. */
WICK_INTERNAL size_t wick_op_num_threads(const wick_op_ctx *ctx);

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

/* Element i of an int32 or int64 tensor (indices, shapes, axes), as int64. */
static inline int64_t wick_read_int(const wick_tensor *t, int64_t i) {
  if (t->type == WICK_DTYPE_INT64) return ((const int64_t *)t->data)[i];
  return ((const int32_t *)t->data)[i];
}
/* The integer types that index tensors: int32 and int64. */
static inline bool wick_is_int_index_type(wick_dtype t) {
  return t == WICK_DTYPE_INT32 || t == WICK_DTYPE_INT64;
}

#endif /* WICK_CORE_OP_API_H */
