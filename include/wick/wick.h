/*
 * wick.h — the one public header of libwick, the wick runtime for .tflite models.
 *
 * wick loads any standard TFLite flatbuffer (from TensorFlow's converter, from
 * litert-torch, or from wick's own converter), verifies it as untrusted input,
 * and runs it on the CPU. This header is the manual: every function states its
 * errors and the lifetime of every pointer it takes or returns.
 *
 * The three phases
 *   1. load     wick_model_load_file / wick_model_load_buffer parse and verify the
 *               whole file. The model is immutable afterwards and may be shared by
 *               any number of interpreters on any number of threads.
 *   2. prepare  wick_interpreter_create binds one signature (or subgraph 0),
 *               resolves every operator by (code, version), infers shapes, picks
 *               kernels and plans activation memory. Resizing an input prepares
 *               again.
 *   3. invoke   wick_interpreter_invoke runs the graph on the input tensors.
 *
 * Delegates (accelerators such as Android's NNAPI) take parts of the graph
 * at prepare; whatever they decline or fail at runs on the CPU kernels, never
 * as an error. See "delegates" below and docs/delegates.md.
 *
 * Threading: a wick_model is safe to use from many threads at once. A
 * wick_interpreter is used by one thread at a time, except for
 * wick_interpreter_cancel, which any thread may call at any time.
 *
 * Errors: every fallible call returns wick_status. Object-creating calls fill an
 * optional caller-owned wick_error_info with a message naming the problem;
 * later calls on an interpreter leave their message in
 * wick_interpreter_last_error(). The library never prints, aborts or exits on
 * input it does not control; there is no global mutable state.
 *
 * Environment variables (read at wick_interpreter_create; for debugging and
 * measuring, never needed in production):
 *   WICK_FORCE_REFERENCE=1  the portable reference kernels everywhere, no graph
 *                           fusion (as options.force_reference_kernels = 1)
 *   WICK_NO_FUSION=1        no graph fusion (activations, residual adds and
 *                           normalizations run as their own operators)
 *   WICK_NO_IN_PLACE=1      no in-place aliasing of operator outputs
 *   WICK_NO_WINOGRAD=1      no Winograd 3x3 convolution
 *   WICK_MAX_ISA=name       cap the kernel instruction set at name (one of
 *                           reference, avx2, avx512, avx512vnni, avx512amx on
 *                           x86-64; reference, neon, neondot on AArch64); read
 *                           once, at the first interpreter of the process
 * Outputs are the same at every setting except rounding-level differences
 * between kernel sets (bit-identical for integer models).
 *
 * Typical use:
 *
 *     wick_error_info err;
 *     wick_model *model;
 *     if (wick_model_load_file("m.tflite", NULL, &err, &model) != WICK_OK)
 *       fprintf(stderr, "%s\n", err.message);
 *     wick_interpreter *it;
 *     wick_interpreter_create(model, NULL, NULL, &err, &it);
 *     wick_tensor_copy_from(wick_interpreter_input(it, 0), pixels, nbytes);
 *     wick_interpreter_invoke(it);
 *     const float *logits = wick_tensor_data(wick_interpreter_output(it, 0));
 *     wick_interpreter_destroy(it);
 *     wick_model_destroy(model);
 */
#ifndef WICK_WICK_H
#define WICK_WICK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define WICK_API
#else
#define WICK_API __attribute__((visibility("default")))
#endif

#define WICK_VERSION_STRING "0.1.0"

/* Status codes. Numbers are explicit and append-only. */
typedef enum wick_status {
  WICK_OK = 0,
  WICK_ERR_INVALID_ARGUMENT = 1, /* the caller passed something wrong (NULL, bad index) */
  WICK_ERR_MALFORMED_MODEL = 2,  /* the file is not a valid TFLite model */
  WICK_ERR_UNSUPPORTED_OP = 3,   /* an operator (or op version, or type) wick does not run */
  WICK_ERR_OUT_OF_MEMORY = 4,    /* allocation failed or the memory cap was reached */
  WICK_ERR_IO = 5,               /* the file could not be opened, mapped or read */
  WICK_ERR_CANCELLED = 6,        /* wick_interpreter_cancel() stopped an invoke */
  WICK_ERR_INVALID_INPUT = 7     /* a run-time value is out of range (gather index, shape tensor) */
} wick_status;

/* Element types. The numbers are those of the TFLite schema's TensorType. */
typedef enum wick_dtype {
  WICK_DTYPE_FLOAT32 = 0,
  WICK_DTYPE_FLOAT16 = 1,
  WICK_DTYPE_INT32 = 2,
  WICK_DTYPE_UINT8 = 3,
  WICK_DTYPE_INT64 = 4,
  WICK_DTYPE_STRING = 5,
  WICK_DTYPE_BOOL = 6,
  WICK_DTYPE_INT16 = 7,
  WICK_DTYPE_COMPLEX64 = 8,
  WICK_DTYPE_INT8 = 9,
  WICK_DTYPE_FLOAT64 = 10,
  /* A handle to a resource variable (the output of a VAR_HANDLE operator):
   * one int32 id private to the interpreter. Not a value to compute with. */
  WICK_DTYPE_RESOURCE = 13
} wick_dtype;

typedef enum wick_log_level {
  WICK_LOG_DEBUG = 0,
  WICK_LOG_INFO = 1,
  WICK_LOG_WARNING = 2,
  WICK_LOG_ERROR = 3
} wick_log_level;

/* The largest tensor rank wick accepts. Files with a larger rank are refused. */
#define WICK_MAX_RANK 8

typedef struct wick_model wick_model;
typedef struct wick_interpreter wick_interpreter;
typedef struct wick_tensor wick_tensor;
typedef struct wick_delegate wick_delegate; /* see "delegates" below */

/* A message for calls that have no object yet to hold one. Caller-owned. */
typedef struct wick_error_info {
  char message[512];
} wick_error_info;

/* Optional allocation callbacks. `alloc` returns memory aligned to at least
 * `alignment` (a power of two, at most 64) or NULL; `free` accepts NULL. Both
 * may be called from any thread that uses the object they were given to. */
typedef struct wick_allocator {
  void *(*alloc)(void *user, size_t size, size_t alignment);
  void (*free)(void *user, void *ptr);
  void *user;
} wick_allocator;

/* Optional log callback; `message` is borrowed for the duration of the call. */
typedef void (*wick_log_fn)(void *user, wick_log_level level, const char *message);

/* ---------------------------------------------------------------- status */

/* A static, human-readable name for a status ("malformed model"). Never NULL. */
WICK_API const char *wick_status_string(wick_status status);

/* The library version, e.g. "0.1.0". Static storage. */
WICK_API const char *wick_version(void);

/* ----------------------------------------------------------------- options */

/* Both option structs open with `struct_size`: sizeof the struct as the caller
 * compiled it. Take options from wick_model_options_default() /
 * wick_interpreter_options_default(), which set it, then change fields. New
 * fields are only ever appended, so a library reads the fields a caller's
 * struct_size covers and gives the rest their defaults. A struct_size smaller
 * than the first version's (0: a struct not made by the _default function), or
 * larger than this library's with a nonzero byte past the fields it knows (a
 * caller built against a newer wick.h asking for something this library cannot
 * do), fails the call with WICK_ERR_INVALID_ARGUMENT and a message saying so. */

/* ----------------------------------------------------------------- model */

typedef struct wick_model_options {
  size_t struct_size;       /* sizeof(wick_model_options); see "options" above */
  wick_allocator allocator; /* all fields NULL: malloc/free */
  wick_log_fn log;          /* NULL: silent. Called on the loading thread: INFO when a
                               load succeeds (size, subgraphs, signatures, table bytes),
                               ERROR with the message of a load that failed verification */
  void *log_user;
  /* For wick_model_load_buffer: 1 copies the bytes so the caller may free them
   * right after the call; 0 (default) borrows them, and they must outlive the
   * model and every interpreter made from it. */
  int copy_buffer;
  /* 0: no caller cap. Otherwise the most bytes the model may allocate, counted
   * on every allocation it makes, checked before each one and held for its
   * lifetime: the model object, the copy made by copy_buffer, and the decoded
   * tables (subgraphs, tensors, operators, options, quantization, signatures)
   * and the whole file mapping of wick_model_load_file (a file bigger than
   * the cap is never mapped). Not counted: a borrowed buffer (the caller's
   * memory). Going over it fails the load with WICK_ERR_OUT_OF_MEMORY. Interpreters have their own
   * cap (wick_interpreter_options.memory_limit_bytes). */
  size_t memory_limit_bytes;
} wick_model_options;

WICK_API wick_model_options wick_model_options_default(void);

/* Loads and verifies a model file. The file is memory-mapped and its weights
 * are read in place; the mapping lives as long as the model.
 * options: borrowed for the call, may be NULL. error: may be NULL.
 * On failure *model_out is NULL and error->message names the problem
 * (for a malformed file: the table, field and index). Whatever
 * options->memory_limit_bytes says, the decoded tables may take at most
 * 16 MiB + 32 x the file size (real models need far less than 1 x); a file
 * that needs more, or more than the caller's cap, fails with
 * WICK_ERR_OUT_OF_MEMORY. */
WICK_API wick_status wick_model_load_file(const char *path, const wick_model_options *options,
                                          wick_error_info *error, wick_model **model_out);

/* Loads and verifies a model from memory. See copy_buffer in the options for
 * the lifetime of `data`. */
WICK_API wick_status wick_model_load_buffer(const void *data, size_t size,
                                            const wick_model_options *options,
                                            wick_error_info *error, wick_model **model_out);

/* Destroys a model. Every interpreter made from it must be destroyed first.
 * NULL is a no-op. */
WICK_API void wick_model_destroy(wick_model *model);

/* The model's description string, or "" — owned by the model. */
WICK_API const char *wick_model_description(const wick_model *model);
WICK_API size_t wick_model_subgraph_count(const wick_model *model);
WICK_API size_t wick_model_signature_count(const wick_model *model);
/* The key of signature i (e.g. "serving_default"), or NULL if i is out of
 * range. Owned by the model. */
WICK_API const char *wick_model_signature_key(const wick_model *model, size_t i);

/* The operators of subgraph `subgraph` as the file lists them, readable without an
 * interpreter (so a tool can show a model whose interpreter cannot be created).
 * wick_model_op_count: 0 when `subgraph` is out of range. wick_model_op_name: the builtin
 * name ("CONV_2D") or a custom operator's code, NULL when out of range; owned by the model.
 * wick_model_op_version: the operator's version, 0 when out of range.
 * wick_model_op_supported: 1 when this wick build has the operator at that version, else 0
 * with the reason in `why` (if not NULL; always terminated when why_size > 0). Types, shapes
 * and options are checked later, when an interpreter prepares the operator. */
WICK_API size_t wick_model_op_count(const wick_model *model, size_t subgraph);
WICK_API const char *wick_model_op_name(const wick_model *model, size_t subgraph, size_t i);
WICK_API int wick_model_op_version(const wick_model *model, size_t subgraph, size_t i);
WICK_API int wick_model_op_supported(const wick_model *model, size_t subgraph, size_t i, char *why,
                                     size_t why_size);

/* ----------------------------------------------------------- interpreter */

typedef struct wick_interpreter_options {
  size_t struct_size; /* sizeof(wick_interpreter_options); see "options" above */
  /* Threads that compute an invoke, the calling thread included. 1 (the
   * default), 0: the calling thread only. N > 1: N - 1 worker threads are
   * started with the interpreter and joined by wick_interpreter_destroy;
   * large operators are split over them. Negative: one per online CPU. At
   * most 64. Outputs are bit-identical for every value. Each worker's stack
   * (512 KiB) counts against memory_limit_bytes. */
  int num_threads;
  size_t memory_limit_bytes;   /* 0: no cap. Counts every allocation the interpreter makes */
  int force_reference_kernels; /* 1: use the portable reference kernels everywhere (and no
                                  graph fusion). The environment variable WICK_FORCE_REFERENCE=1
                                  does the same; WICK_NO_FUSION=1 only turns graph fusion off,
                                  WICK_NO_WINOGRAD=1 only the Winograd 3x3 convolution */
  wick_allocator allocator;    /* all fields NULL: malloc/free */
  wick_log_fn log;             /* NULL: silent. Called on the creating thread during create
                                  and resize (the weight cache's outcome, each delegate's
                                  partition plan and fallbacks), and on the invoking thread
                                  when a delegate's partition fails and reruns on the CPU */
  void *log_user;
  /* NULL (default): no cache. Otherwise a file for the packed weights (the
   * constant weights re-laid out for this CPU's kernels at prepare, most of
   * the cold start). When the file holds a valid cache written by this build
   * of wick for this model and these kernels, prepare maps it and uses it
   * instead of packing; otherwise prepare packs and then (re)writes the file
   * (atomically, through a temporary file renamed over it). A missing,
   * damaged or mismatched file is never an error and is never used: every
   * size, key and checksum is checked first. The mapping counts against
   * memory_limit_bytes, lives as long as the interpreter and, as with the
   * model file, the file must not be truncated meanwhile (replacing it by
   * rename is fine). Like the model, the file decides the weights: keep it
   * where only trusted writers can write. Borrowed for the call (copied).
   * See wick_interpreter_weight_cache_state. */
  const char *weight_cache_path;
  /* NULL (default): the interpreter has its own resource variables and
   * CALL_ONCE state. Otherwise an interpreter of the same model whose resource
   * variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE) and CALL_ONCE
   * state this one uses instead: a variable named by the same key is one
   * variable for both, whatever signature each runs, as for LiteRT's signature
   * runners of one interpreter. This is how the signatures of one stateful
   * model (an LLM's prefill_N and decode with a KV cache in variables) see the
   * same state. It also borrows the weights the interpreter named here packed
   * for its kernels wherever the packing is the same (fully connected weights
   * so far), so the signatures' common weights are held once; for that, the
   * interpreter named here refuses resize_input(s) (WICK_ERR_INVALID_ARGUMENT)
   * while interpreters share its state. It must outlive this one and must
   * not itself share another's (name the first one); interpreters sharing
   * state are used by one thread at a time between them (no create or invoke
   * of one during an invoke of another). Values are allocated from, and count
   * against the memory_limit_bytes of, the interpreter named here.
   * reset_variables on any of them clears the shared state (and its own
   * variable tensors). Errors: WICK_ERR_INVALID_ARGUMENT for an interpreter of
   * another model or one that itself shares another's state. */
  wick_interpreter *share_variables_with;
  /* NULL / 0 (default): everything runs on the CPU. Otherwise `num_delegates`
   * delegates (see "delegates" below), highest priority first: at prepare
   * each, in this order, is offered the operators no earlier one took. The
   * array is borrowed for the call (copied); every delegate must outlive the
   * interpreter. Errors: WICK_ERR_INVALID_ARGUMENT for a NULL array with a
   * nonzero count, a NULL entry, more than WICK_MAX_DELEGATES, or a delegate
   * struct this library cannot read (struct_size, a NULL name or callback). */
  wick_delegate *const *delegates;
  size_t num_delegates;
} wick_interpreter_options;

WICK_API wick_interpreter_options wick_interpreter_options_default(void);

/* Creates an interpreter for one signature of the model and prepares it.
 * signature_key: NULL selects the first signature, or subgraph 0 when the file
 * has no signatures. The model must outlive the interpreter. options: borrowed
 * for the call, may be NULL. On failure *interpreter_out is NULL, nothing is
 * left allocated, the model is unchanged, and error->message names the
 * operator, its index and the problem. Errors:
 *   WICK_ERR_INVALID_ARGUMENT  NULL model or interpreter_out, no signature
 *                              called signature_key, an options struct_size
 *                              this library cannot read
 *   WICK_ERR_UNSUPPORTED_OP    an operator, version, type combination, option
 *                              or shape wick does not run (valid for TFLite)
 *   WICK_ERR_MALFORMED_MODEL   a fact only prepare can check is inconsistent
 *                              (shapes that cannot broadcast, a constant of
 *                              the wrong size for its operator)
 *   WICK_ERR_INVALID_INPUT     a constant shape or index tensor out of range
 *   WICK_ERR_OUT_OF_MEMORY     allocation failed or memory_limit_bytes reached
 * Neither a weight cache that cannot be read or written nor a worker thread
 * that cannot be started is an error (packing / fewer threads instead). */
WICK_API wick_status wick_interpreter_create(const wick_model *model, const char *signature_key,
                                             const wick_interpreter_options *options,
                                             wick_error_info *error,
                                             wick_interpreter **interpreter_out);

/* NULL is a no-op. */
WICK_API void wick_interpreter_destroy(wick_interpreter *interpreter);

/* The message of the last failed call on this interpreter ("" if none). Owned
 * by the interpreter, valid until its next call. */
WICK_API const char *wick_interpreter_last_error(const wick_interpreter *interpreter);

WICK_API size_t wick_interpreter_input_count(const wick_interpreter *interpreter);
WICK_API size_t wick_interpreter_output_count(const wick_interpreter *interpreter);

/* Input/output tensor i, or NULL if out of range. The handle is owned by the
 * interpreter and stays valid until it is destroyed; the tensor's data pointer
 * and shape may change when the interpreter is prepared again. */
WICK_API wick_tensor *wick_interpreter_input(wick_interpreter *interpreter, size_t i);
WICK_API const wick_tensor *wick_interpreter_output(const wick_interpreter *interpreter, size_t i);

/* Position of the input/output called `name` (the signature's name when there
 * is a signature, else the tensor's name), or -1. */
WICK_API int wick_interpreter_input_index(const wick_interpreter *interpreter, const char *name);
WICK_API int wick_interpreter_output_index(const wick_interpreter *interpreter, const char *name);

/* Gives input i a new shape and prepares the interpreter again. Dimensions
 * that the model declares fixed must keep their size. `dims` is borrowed for
 * the call. Data pointers may change, but the other inputs keep the values
 * written to them (so inputs may be resized and written one after another);
 * input i keeps its values only if its shape is unchanged — write it after
 * the resize. Errors: WICK_ERR_INVALID_ARGUMENT (NULL interpreter, i out of
 * range, a rank other than the input's, a negative dimension or a fixed one
 * changed, other interpreters sharing this one's state (see
 * share_variables_with): checked before anything changes), and every error of
 * wick_interpreter_create's prepare for the new shapes. A failed resize leaves
 * the interpreter as it was — previous shapes, all values, usable for invoke —
 * with the reason in wick_interpreter_last_error(). Not during an invoke. */
WICK_API wick_status wick_interpreter_resize_input(wick_interpreter *interpreter, size_t i,
                                                   const int32_t *dims, size_t rank);
/* Resizes several inputs at once and prepares the interpreter once: input indices[k] takes
 * the shape dims[k] of rank ranks[k] (k < count). Use it when inputs share a dimension (a
 * batch of ids and its mask): resized one at a time, the prepare between the two resizes sees
 * mismatched shapes and may fail. Same rules and errors as wick_interpreter_resize_input
 * (WICK_ERR_INVALID_ARGUMENT for a bad index, rank or fixed dimension, checked before anything
 * changes; an error of the new prepare leaves every input's previous shape and value). */
WICK_API wick_status wick_interpreter_resize_inputs(wick_interpreter *interpreter, size_t count,
                                                    const size_t *indices,
                                                    const int32_t *const *dims,
                                                    const size_t *ranks);

/* Runs the graph. Inputs keep their values; outputs are overwritten.
 * Errors: WICK_ERR_INVALID_ARGUMENT (NULL), WICK_ERR_CANCELLED (see
 * wick_interpreter_cancel), WICK_ERR_INVALID_INPUT (a value read at run time
 * is out of range: a gather index, a shape tensor, a variable read below),
 * WICK_ERR_OUT_OF_MEMORY (a tensor whose shape is known only at invoke, or a
 * variable assignment, would pass memory_limit_bytes). After a failure the
 * reason is in wick_interpreter_last_error(), outputs are unspecified, the
 * state below is as far as the operators that ran left it, and the
 * interpreter stays usable: the next invoke runs the whole graph again.
 * State persists from one invoke to the next: the model's variable tensors
 * (LSTM/SVDF state), its resource variables (tf.Variable state: VAR_HANDLE,
 * ASSIGN_VARIABLE, READ_VARIABLE, shared by all subgraphs of the
 * interpreter) and whether CALL_ONCE operators have run their init subgraph
 * (they run it on the first invoke only). Resizing an input keeps resource
 * variables and CALL_ONCE state but zeroes variable tensors. A variable's
 * value takes the type and shape of its last assignment and counts against
 * memory_limit_bytes (an assignment over the cap fails with
 * WICK_ERR_OUT_OF_MEMORY and keeps the old value). A variable that a graph
 * reads, updates in place and assigns back (an LLM's KV cache: READ_VARIABLE,
 * DYNAMIC_UPDATE_SLICE, ASSIGN_VARIABLE) is updated in its own storage
 * without copies; it keeps its size from the first prepare that sees the
 * pattern, and an assignment of another size fails with
 * WICK_ERR_INVALID_INPUT. Reading a resource
 * variable that was never assigned, or whose type differs from the
 * READ_VARIABLE output's, or whose shape differs from an output shape the
 * file declares static, fails with WICK_ERR_INVALID_INPUT. */
WICK_API wick_status wick_interpreter_invoke(wick_interpreter *interpreter);

/* Returns the interpreter's state to what wick_interpreter_create left, so
 * that the next invoke gives what the first invoke of a fresh interpreter
 * gives: every resource variable loses its value (its memory is freed), every
 * CALL_ONCE runs its init subgraph again on the next invoke, and variable
 * tensors return to zero (to the zero point when quantized). Inputs keep
 * their values and shapes; nothing is prepared again. (LiteRT's
 * reset_all_variables resets only the variable tensors.) With
 * share_variables_with, the resource variables and CALL_ONCE state cleared
 * are those shared by all the interpreters involved. Cannot fail except
 * WICK_ERR_INVALID_ARGUMENT for a NULL interpreter. Not during an invoke. */
WICK_API wick_status wick_interpreter_reset_variables(wick_interpreter *interpreter);

/* Asks a running (or the next) invoke to stop; it then returns
 * WICK_ERR_CANCELLED. Safe to call from any thread. A running invoke stops
 * between operators, inside a large operator between its tasks (a few
 * milliseconds of work at most on the optimized kernels), and before every
 * WHILE iteration and LSTM sequence step. */
WICK_API void wick_interpreter_cancel(wick_interpreter *interpreter);

/* What the weight cache (wick_interpreter_options.weight_cache_path) did at
 * create. Numbers are explicit and append-only. */
typedef enum wick_weight_cache_state {
  WICK_WEIGHT_CACHE_UNUSED = 0,   /* no weight_cache_path */
  WICK_WEIGHT_CACHE_LOADED = 1,   /* a valid file: the packed weights came from it */
  WICK_WEIGHT_CACHE_WRITTEN = 2,  /* no file yet: packed, and wrote it */
  WICK_WEIGHT_CACHE_REJECTED = 3, /* the file was damaged or did not match: packed, and
                                     rewrote it */
  WICK_WEIGHT_CACHE_FAILED = 4    /* packed; the file could not be written (see the message) */
} wick_weight_cache_state;

WICK_API wick_weight_cache_state
wick_interpreter_weight_cache_state(const wick_interpreter *interpreter);
/* Packed buffers taken from the cache file so far (0 unless LOADED). */
WICK_API size_t wick_interpreter_weight_cache_hits(const wick_interpreter *interpreter);
/* What happened, and why a file was rejected ("" when unused). Owned by the
 * interpreter. Also sent to the log callback (INFO, or WARNING when the file
 * was rejected or could not be written). */
WICK_API const char *wick_interpreter_weight_cache_message(const wick_interpreter *interpreter);

/* Bytes of the planned activation arena, and of persistent memory (op data,
 * packed weights, folded constants). */
WICK_API size_t wick_interpreter_arena_bytes(const wick_interpreter *interpreter);
WICK_API size_t wick_interpreter_persistent_bytes(const wick_interpreter *interpreter);

/* Per-operator view for profiling and inspection of the bound subgraph. */
WICK_API size_t wick_interpreter_op_count(const wick_interpreter *interpreter);
/* Name of operator i ("CONV_2D"), or NULL if out of range. Static storage. */
WICK_API const char *wick_interpreter_op_name(const wick_interpreter *interpreter, size_t i);
/* 1 enables per-operator timing in invoke; then op_time_ns(i) is the time
 * operator i took in the last invoke (a delegate's partition: the whole
 * partition's time on its first operator, 0 on the others). */
WICK_API void wick_interpreter_set_profiling(wick_interpreter *interpreter, int enabled);
WICK_API uint64_t wick_interpreter_op_time_ns(const wick_interpreter *interpreter, size_t i);
/* How operator i used the threads in the last profiled invoke: parallel jobs
 * and their tasks, the wall time spent in those jobs (the rest of its time
 * ran on the calling thread alone), and the busiest thread's and all
 * threads' time inside tasks. All zero with one thread. */
typedef struct wick_op_thread_stats {
  uint64_t jobs, tasks;
  uint64_t parallel_ns;
  uint64_t busy_max_ns, busy_sum_ns;
} wick_op_thread_stats;
WICK_API wick_op_thread_stats wick_interpreter_op_thread_stats(const wick_interpreter *interpreter,
                                                               size_t i);
/* Multiply-accumulates operator i performs in one invoke (0 for ops without). An attention
 * over a key/value cache that runs as one kernel (kernel name "attention") does work that
 * depends on the cache positions its mask leaves visible: its count is the last invoke's. */
WICK_API uint64_t wick_interpreter_op_macs(const wick_interpreter *interpreter, size_t i);
/* The kind of kernel operator i runs, chosen when it was prepared (an operator
 * whose shapes depend on input values is prepared at every invoke): "optimized"
 * (vectorized or blocked for this CPU), "generic" (portable C, not a kernel
 * written for the ISA), "reference" (the scalar reference kernels: correct,
 * slow), "folded" (computed once at prepare; does not run), "fused" (another
 * operator does its work), "delegated" (a delegate runs it: see
 * wick_interpreter_op_delegate), or "unmarked" (the operator does not say).
 * NULL if out of range. Static storage. */
WICK_API const char *wick_interpreter_op_kernel(const wick_interpreter *interpreter, size_t i);
/* A short name of that kernel or path ("igemm", "winograd", "dwconv3x3",
 * "grouped", ... ; the delegate's name for "delegated"), "" when there is none;
 * NULL if out of range. Static storage (the delegate's name: owned by it). */
WICK_API const char *wick_interpreter_op_kernel_name(const wick_interpreter *interpreter, size_t i);
/* The first output tensor of operator i, or NULL. */
WICK_API const wick_tensor *wick_interpreter_op_output(const wick_interpreter *interpreter,
                                                       size_t i);

/* ---------------------------------------------------------------- tensor */

/* All tensor handles are owned by their interpreter. */
WICK_API const char *wick_tensor_name(const wick_tensor *tensor);
WICK_API wick_dtype wick_tensor_dtype(const wick_tensor *tensor);
WICK_API size_t wick_tensor_rank(const wick_tensor *tensor);
/* Dimension i, or -1 if i >= rank. */
WICK_API int32_t wick_tensor_dim(const wick_tensor *tensor, size_t i);
WICK_API size_t wick_tensor_byte_size(const wick_tensor *tensor);
/* The tensor's bytes, row-major, to read; NULL for a NULL tensor or one with
 * no storage. The pointer stays valid until the interpreter is prepared again
 * (create, resize_input(s)) or destroyed — and, for a tensor whose shape is
 * only known at invoke (an output that depends on input values, or anything
 * after such an operator), until the next invoke, which may reallocate it:
 * take it again after every invoke. Output data is valid after a successful
 * invoke; after a failed one it is unspecified. A constant that prepare computed
 * (a folded operator's output, e.g. float16 weights dequantized) and that every
 * operator reading it has packed into its own layout has no storage left (NULL),
 * unless the interpreter has delegates, a memory cap or a caller's allocator. */
WICK_API const void *wick_tensor_data(const wick_tensor *tensor);
/* The same bytes, to write (an input's values before invoke). NULL for a NULL
 * tensor, one with no storage, or a constant (weights are read-only: they may
 * be the file's read-only mapping). Same lifetime as wick_tensor_data. */
WICK_API void *wick_tensor_mutable_data(wick_tensor *tensor);
/* Per-tensor quantization (scale, zero point); returns 0 if the tensor is not
 * quantized per tensor. */
WICK_API int wick_tensor_quantization(const wick_tensor *tensor, float *scale_out,
                                      int64_t *zero_point_out);
/* All of a tensor's quantization: the number of (scale, zero point) pairs (0: not
 * quantized, 1: per tensor, else one per slice along wick_tensor_quantization_axis),
 * and pair i (returns 0, leaving the outputs alone, when i is out of range). */
WICK_API size_t wick_tensor_quantization_count(const wick_tensor *tensor);
WICK_API int32_t wick_tensor_quantization_axis(const wick_tensor *tensor);
WICK_API int wick_tensor_quantization_at(const wick_tensor *tensor, size_t i, float *scale_out,
                                         int64_t *zero_point_out);
/* 1 when the tensor's values are fixed at prepare (the file's constants, and
 * tensors wick computed from them at prepare), else 0. */
WICK_API int wick_tensor_is_constant(const wick_tensor *tensor);
/* Copies `size` bytes into / out of the tensor; size must equal
 * wick_tensor_byte_size(). WICK_ERR_INVALID_ARGUMENT (and nothing copied)
 * for a NULL tensor, NULL data with a nonzero size, another size, a tensor
 * with no storage, or copy_from into a constant. */
WICK_API wick_status wick_tensor_copy_from(wick_tensor *tensor, const void *data, size_t size);
WICK_API wick_status wick_tensor_copy_to(const wick_tensor *tensor, void *data, size_t size);

/* The bytes of the model's metadata entry `name` (Model.metadata: e.g. "wick_llm", written
 * by wick.llm.convert, or TensorFlow's "min_runtime_version"), or NULL when the model has no
 * entry of that name or its buffer is empty (the first entry of that name counts). *size_out
 * (may be NULL) gets the byte count, 0 with NULL. The bytes are the file's, unverified
 * (parse them as untrusted input), and live as long as the model. */
WICK_API const void *wick_model_metadata(const wick_model *model, const char *name,
                                         size_t *size_out);

/* Element size of a dtype in bytes, 0 for variable-size types. */
WICK_API size_t wick_dtype_size(wick_dtype dtype);
/* "float32", "int8", ... Static storage, never NULL. */
WICK_API const char *wick_dtype_name(wick_dtype dtype);

/* ------------------------------------------------------------- delegates */

/* A delegate runs parts of a graph somewhere else than wick's CPU kernels (an
 * NPU or GPU through NNAPI, Vulkan, a vendor library). It is a plain struct of
 * callbacks, filled by whoever implements it (wick's built-in delegates come
 * from wick_delegate_create); an interpreter takes a list of them in
 * wick_interpreter_options.delegates.
 *
 * At prepare (create, resize) the interpreter first prepares every operator
 * for the CPU, as without delegates, then:
 *   1. offers each operator that runs at invoke (not computed at prepare, no
 *      shape that depends on input values, no state kept across invokes) to
 *      the delegates in priority order; supports_node says yes, or no with
 *      a reason;
 *   2. groups each delegate's accepted operators into the largest partitions
 *      that keep a valid execution order: a partition runs as one step, so no
 *      path may leave it through an operator outside it and come back in. At
 *      most WICK_MAX_PARTITIONS per graph; a partition with fewer operators
 *      than the delegate's min_partition_nodes runs on the CPU (a later
 *      delegate may take those operators);
 *   3. calls prepare_partition for each partition.
 * At invoke a prepared partition runs through invoke_partition; everything
 * else runs on the CPU kernels. Fallback is automatic and never an error: an
 * operator no delegate takes, a partition whose prepare fails and a partition
 * whose invoke fails run on the CPU (after an invoke failure, in the same
 * invoke and in every later one until the next prepare), each with a log line
 * (options.log). The CPU kernels of every operator are prepared either way,
 * so a model wick's CPU cannot run fails at create even when a delegate would
 * take the operator. wick_interpreter_op_delegate and its neighbours report
 * where each operator runs and why.
 *
 * Only the graph of the interpreter's signature is offered; a delegate may
 * take an IF or WHILE as a whole, reading its subgraphs through
 * wick_delegate_graph_node_subgraph (below); otherwise they run on the CPU.
 *
 * Threads and memory: callbacks run on the thread that called create, resize
 * or invoke. A delegate used by several interpreters must allow calls from
 * their threads at once (keep per-interpreter state in the partition state).
 * Memory a delegate allocates itself is not counted against the interpreter's
 * memory_limit_bytes; wick_delegate_graph_alloc is. A delegate may poll
 * wick_delegate_graph_cancelled during a long invoke and return
 * WICK_ERR_CANCELLED, which the invoke returns (the only delegate status that
 * is not a fallback). */

/* The graph as a delegate sees it during its callbacks: the operators and
 * tensors of the interpreter's bound subgraph, by index. Borrowed: valid
 * from prepare_partition until free_partition of any partition of it. */
typedef struct wick_delegate_graph wick_delegate_graph;

#define WICK_MAX_DELEGATES 8
#define WICK_MAX_PARTITIONS 64

/* One partition, as prepare_partition receives it. Owned by the interpreter,
 * valid until free_partition is called for this partition. */
typedef struct wick_delegate_partition {
  size_t struct_size; /* sizeof(wick_delegate_partition) of the library */
  size_t id;          /* its number in the interpreter's report (0, 1, ...) */
  /* The operator indices, in the order they run on the CPU (ascending). */
  const size_t *nodes;
  size_t num_nodes;
  /* Tensors the partition reads but does not compute, and that are not
   * constants (wick_tensor_is_constant): graph inputs and other operators'
   * outputs. Read them at every invoke. */
  const int32_t *inputs;
  size_t num_inputs;
  /* Tensors the partition computes that something else reads (an operator
   * outside it, or the caller: graph outputs). invoke_partition must write
   * every one of them; tensors only the partition reads need not exist. */
  const int32_t *outputs;
  size_t num_outputs;
} wick_delegate_partition;

struct wick_delegate {
  size_t struct_size; /* sizeof(wick_delegate) as its implementer compiled it */
  /* Shown in logs and the report ("nnapi"). Must outlive the delegate. */
  const char *name;
  void *user; /* the implementer's own data */
  /* Partitions with fewer operators run on the CPU; 0 and 1: any size. */
  size_t min_partition_nodes;
  /* 1 when the delegate can run operator `node` of `graph` as it stands
   * (types and shapes are prepared; constant data is readable). Otherwise 0
   * and a short reason in `why` (why_size > 0; "op", "version", "type",
   * "shape", a feature level: it is shown to users as is). Also asked, for
   * the report only, about the operators inside the subgraphs an operator
   * runs, with that subgraph as `graph` (wick_interpreter_delegation_row). */
  int (*supports_node)(wick_delegate *self, const wick_delegate_graph *graph, size_t node,
                       char *why, size_t why_size);
  /* Builds what the delegate needs to run `partition` and returns it in
   * *state_out. Anything but WICK_OK (with a reason in `why`) puts the
   * partition on the CPU. */
  wick_status (*prepare_partition)(wick_delegate *self, const wick_delegate_graph *graph,
                                   const wick_delegate_partition *partition, void **state_out,
                                   char *why, size_t why_size);
  /* Runs the partition: reads its inputs and writes its outputs through
   * wick_delegate_graph_tensor (data pointers are stable from
   * prepare_partition to free_partition). WICK_OK, WICK_ERR_CANCELLED, or
   * another status with a reason in `why`: then the partition's operators
   * rerun on the CPU, and do from then on until the next prepare. */
  wick_status (*invoke_partition)(wick_delegate *self, const wick_delegate_graph *graph,
                                  void *state, char *why, size_t why_size);
  /* Frees a state prepare_partition returned (at the next prepare and at
   * wick_interpreter_destroy). */
  void (*free_partition)(wick_delegate *self, void *state);
  /* Frees the delegate itself (wick_delegate_destroy). NULL: nothing to free. */
  void (*destroy)(wick_delegate *self);
  /* Appended (read when struct_size covers it). 1: the delegate only plans —
   * it answers supports_node as usual but declines every partition at
   * prepare_partition, giving in `why` what the partition would run as
   * ("would run on NNAPI at feature level 27"). The partition runs on the
   * CPU; the report says "<name>: planned only: <why>" (not "prepare
   * failed"), and the log line is INFO, not WARNING. 0: a working delegate. */
  int plans_only;
  /* Appended (read when struct_size covers it). 1: when supports_node
   * returns 1 it may leave a note in `why` — how it runs the operator when
   * that is not the operator itself, and how close it is ("composed of EXP,
   * DIV, ...: within 1.4e-7 x max(1, |value|)") — which the report keeps for
   * the operator while it runs on the delegate
   * (wick_interpreter_op_delegation_note). 0: `why` is ignored on a yes. */
  int notes;
};

/* What a delegate may read of the graph. Out-of-range indices give 0, -1 or
 * NULL as stated. Node indices are those of the file (wick_interpreter_op_*). */
WICK_API size_t wick_delegate_graph_node_count(const wick_delegate_graph *graph);
/* The operator's builtin code (the TFLite schema's BuiltinOperator number;
 * 32 = CUSTOM), or -1. */
WICK_API int32_t wick_delegate_graph_node_builtin(const wick_delegate_graph *graph, size_t node);
/* "CONV_2D", or a custom operator's code; NULL when out of range. Owned by the model. */
WICK_API const char *wick_delegate_graph_node_name(const wick_delegate_graph *graph, size_t node);
WICK_API int wick_delegate_graph_node_version(const wick_delegate_graph *graph, size_t node);
WICK_API size_t wick_delegate_graph_node_input_count(const wick_delegate_graph *graph, size_t node);
/* The tensor index of input i, -1 for an absent optional input (or out of range). */
WICK_API int32_t wick_delegate_graph_node_input(const wick_delegate_graph *graph, size_t node,
                                                size_t i);
WICK_API size_t wick_delegate_graph_node_output_count(const wick_delegate_graph *graph,
                                                      size_t node);
WICK_API int32_t wick_delegate_graph_node_output(const wick_delegate_graph *graph, size_t node,
                                                 size_t i);
/* Tensor `index` of the graph, or NULL. Read its type, shape, quantization,
 * constness and (constant) data with the wick_tensor_* calls; at invoke write
 * an output with wick_tensor_mutable_data. Owned by the interpreter. */
WICK_API wick_tensor *wick_delegate_graph_tensor(const wick_delegate_graph *graph, int32_t index);
WICK_API size_t wick_delegate_graph_tensor_count(const wick_delegate_graph *graph);

/* An operator's options, by name. Numbers are explicit and append-only. */
typedef enum wick_op_option {
  WICK_OPTION_FUSED_ACTIVATION =
      0,                   /* 0 none, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH, 5 SIGN_BIT */
  WICK_OPTION_PADDING = 1, /* 0 SAME, 1 VALID */
  WICK_OPTION_STRIDE_W = 2,
  WICK_OPTION_STRIDE_H = 3,
  WICK_OPTION_DILATION_W = 4,
  WICK_OPTION_DILATION_H = 5,
  WICK_OPTION_DEPTH_MULTIPLIER = 6,
  WICK_OPTION_FILTER_W = 7, /* pools */
  WICK_OPTION_FILTER_H = 8,
  WICK_OPTION_AXIS = 9,           /* CONCATENATION GATHER PACK UNPACK */
  WICK_OPTION_KEEP_DIMS = 10,     /* reductions; FULLY_CONNECTED keep_num_dims */
  WICK_OPTION_BETA = 11,          /* SOFTMAX */
  WICK_OPTION_ALPHA = 12,         /* LEAKY_RELU */
  WICK_OPTION_ALIGN_CORNERS = 13, /* RESIZE_* */
  WICK_OPTION_HALF_PIXEL_CENTERS = 14,
  WICK_OPTION_WEIGHTS_FORMAT = 15, /* FULLY_CONNECTED: 0 default */
  WICK_OPTION_ADJ_X = 16,          /* BATCH_MATMUL */
  WICK_OPTION_ADJ_Y = 17,
  WICK_OPTION_NUM_SPLITS = 18,  /* SPLIT SPLIT_V; PACK values_count; UNPACK num */
  WICK_OPTION_BLOCK_SIZE = 19,  /* SPACE_TO_DEPTH DEPTH_TO_SPACE */
  WICK_OPTION_APPROXIMATE = 20, /* GELU */
  WICK_OPTION_BEGIN_MASK = 21,  /* STRIDED_SLICE: the bit masks, and offset (0 / 1) */
  WICK_OPTION_END_MASK = 22,
  WICK_OPTION_ELLIPSIS_MASK = 23,
  WICK_OPTION_NEW_AXIS_MASK = 24,
  WICK_OPTION_SHRINK_AXIS_MASK = 25,
  WICK_OPTION_OFFSET = 26
} wick_op_option;

/* 1 and the value in *value_out (integers and booleans exactly) when operator
 * `node` has `option`; 0 when it does not (or out of range). */
WICK_API int wick_delegate_graph_node_option(const wick_delegate_graph *graph, size_t node,
                                             wick_op_option option, double *value_out);
/* Zeroed memory, 64-byte aligned, counted against the interpreter's
 * memory_limit_bytes, freed at the next prepare or destroy (after
 * free_partition); NULL when out of memory or over the cap. For
 * prepare_partition only. */
WICK_API void *wick_delegate_graph_alloc(const wick_delegate_graph *graph, size_t size);
/* 1 once wick_interpreter_cancel asked the running invoke to stop. */
WICK_API int wick_delegate_graph_cancelled(const wick_delegate_graph *graph);

/* Creates a built-in delegate by name ("reference", "nnapi"),
 * configured by `config` (NULL or "": defaults; else "key=value" pairs
 * separated by ';', documented per delegate in docs/delegates.md). Destroy it
 * with wick_delegate_destroy after every interpreter using it. Errors:
 * WICK_ERR_INVALID_ARGUMENT (NULL delegate_out or name, a name this build
 * does not have, a bad config: the message lists what is known),
 * WICK_ERR_OUT_OF_MEMORY. */
WICK_API wick_status wick_delegate_create(const char *name, const char *config,
                                          wick_error_info *error, wick_delegate **delegate_out);
/* Calls delegate->destroy. NULL is a no-op. */
WICK_API void wick_delegate_destroy(wick_delegate *delegate);
/* Names of the built-in delegates: i-th name, NULL past the end. Static storage. */
WICK_API const char *wick_delegate_builtin_name(size_t i);

/* The test delegate "reference" (src/delegates/reference.c) runs float32
 * ADD SUB MUL DIV MAXIMUM MINIMUM, RELU RELU6 RELU_N1_TO_1 LOGISTIC TANH,
 * FULLY_CONNECTED, SOFTMAX and the reshapes with wick's own reference kernels
 * on private buffers, to test the delegate machinery. Its options: */
typedef struct wick_reference_delegate_options {
  size_t struct_size;
  /* Comma-separated operator names it accepts ("ADD,RELU"); NULL: every
   * operator it implements. */
  const char *ops;
  /* Fault injection: the first N prepare_partition / invoke_partition calls
   * fail (counted over the delegate's life, over all its interpreters).
   * The environment variables WICK_REFERENCE_FAIL_PREPARE=N and
   * WICK_REFERENCE_FAIL_INVOKE=N, read at creation, set them too. */
  int fail_prepare;
  int fail_invoke;
  size_t min_partition_nodes; /* as wick_delegate.min_partition_nodes */
} wick_reference_delegate_options;

WICK_API wick_reference_delegate_options wick_reference_delegate_options_default(void);
/* options: borrowed for the call, may be NULL. Errors: WICK_ERR_INVALID_ARGUMENT
 * (NULL delegate_out, unreadable options, an op name it does not implement),
 * WICK_ERR_OUT_OF_MEMORY. */
WICK_API wick_status wick_reference_delegate_create(const wick_reference_delegate_options *options,
                                                    wick_error_info *error,
                                                    wick_delegate **delegate_out);

/* The NNAPI delegate "nnapi" (src/delegates/nnapi/, docs/nnapi.md) runs
 * partitions through Android's Neural Networks API, which it opens at run time
 * (dlopen; wick links nothing of it). Without a usable NNAPI runtime it is
 * still created and declines every operator with the reason, so the model runs
 * on the CPU. An operator is taken only where NNAPI at the runtime's feature
 * level expresses it exactly; the delegation report gives the reason for each
 * one it declines. Its options: */
typedef struct wick_nnapi_delegate_options {
  size_t struct_size;
  /* The library to open: NULL uses $WICK_NNAPI_LIBRARY, else
   * "libneuralnetworks.so". Borrowed for the call. */
  const char *library;
  /* Cap on the feature level used (27 = Android 8.1, 28, 29, 30, 31, then
   * 1000006...): only what that level has is used. 0: the runtime's level.
   * Never above the runtime's. */
  int64_t feature_level;
  /* 1: let NNAPI compute float32 in float16 precision (level 28+; results
   * then differ from the CPU's). */
  int relaxed_fp16;
  /* Execution preference: -1 NNAPI's default, 0 low power, 1 fast single
   * answer, 2 sustained speed. */
  int preference;
  /* Level 29+: compile for the device of this name only (NULL: NNAPI
   * chooses). A name the runtime lacks makes the delegate decline everything,
   * with the names it has in the reason. Borrowed for the call. */
  const char *device;
  size_t min_partition_nodes; /* as wick_delegate.min_partition_nodes */
  /* Comma-separated operator names to offer NNAPI ("CONV_2D,ADD"); NULL: all
   * it maps. For narrowing down a driver problem. Borrowed for the call. */
  const char *ops;
  /* Level 29+: a directory (the application's own, e.g. its code cache) where
   * NNAPI may keep compiled partitions between runs; each partition's token
   * is a fingerprint of the NNAPI model built for it. NULL: no caching.
   * Borrowed for the call. */
  const char *cache_dir;
  /* Appended. Planning: > 0 opens no library (no dlopen at all) and decides
   * which operators to take as a runtime of this feature level with one
   * device would (capped by feature_level when that is set), then declines
   * every partition at prepare (wick_delegate.plans_only): everything runs on
   * the CPU and the delegation report shows what the level would take —
   * "planned only: would run on NNAPI ..." — and why it declines the rest.
   * For converting a model for a device one does not have (wick.convert's
   * target="nnapi:27"). 0: use the runtime. */
  int64_t plan_level;
} wick_nnapi_delegate_options;

WICK_API wick_nnapi_delegate_options wick_nnapi_delegate_options_default(void);
/* options: borrowed for the call, may be NULL. Errors: WICK_ERR_INVALID_ARGUMENT
 * (NULL delegate_out, unreadable options, a level below 27, a bad preference),
 * WICK_ERR_OUT_OF_MEMORY. A missing NNAPI runtime is not an error. */
WICK_API wick_status wick_nnapi_delegate_create(const wick_nnapi_delegate_options *options,
                                                wick_error_info *error,
                                                wick_delegate **delegate_out);
/* The feature level an NNAPI delegate uses (after the cap), or 0 when NNAPI is
 * not usable (or `delegate` is not an NNAPI delegate). */
WICK_API int64_t wick_nnapi_delegate_feature_level(const wick_delegate *delegate);
/* Why NNAPI is not usable ("" when it is). Owned by the delegate. */
WICK_API const char *wick_nnapi_delegate_unavailable_reason(const wick_delegate *delegate);

/* Where operator i of the bound subgraph runs, as prepared: the name of the
 * delegate that runs it (owned by the delegate), or NULL for the CPU (also
 * when i is out of range). */
WICK_API const char *wick_interpreter_op_delegate(const wick_interpreter *interpreter, size_t i);
/* The partition it belongs to (see wick_delegate_partition.id), or -1. A
 * partition whose prepare or invoke failed keeps its number; its operators
 * then run on the CPU and wick_interpreter_op_delegate is NULL. */
WICK_API int wick_interpreter_op_partition(const wick_interpreter *interpreter, size_t i);
/* Why operator i does not run on a delegate ("" when it does, or when the
 * interpreter has no delegates): "computed at prepare", "dynamic shape",
 * "<delegate>: <its reason>" for a decline, "partition of 1 node, below
 * <delegate>'s minimum of 2", "<delegate>: prepare failed: ...",
 * "<delegate>: invoke failed: ...", ... Owned by the interpreter, valid
 * until its next prepare; NULL when i is out of range. */
WICK_API const char *wick_interpreter_op_delegation_reason(const wick_interpreter *interpreter,
                                                           size_t i);
/* Partitions made at the last prepare (those that fell back included). */
WICK_API size_t wick_interpreter_partition_count(const wick_interpreter *interpreter);

/* Appended to the delegate API.
 *
 * The graph's own inputs and outputs (tensor indices): those of the bound
 * subgraph for the graph a callback receives, a control-flow subgraph's for
 * one from wick_delegate_graph_node_subgraph. Out of range: -1. */
WICK_API size_t wick_delegate_graph_input_count(const wick_delegate_graph *graph);
WICK_API int32_t wick_delegate_graph_input(const wick_delegate_graph *graph, size_t i);
WICK_API size_t wick_delegate_graph_output_count(const wick_delegate_graph *graph);
WICK_API int32_t wick_delegate_graph_output(const wick_delegate_graph *graph, size_t i);
/* The subgraphs operator `node` runs, as prepared for this node's input
 * shapes: IF 2 (0 then, 1 else), WHILE 2 (0 cond, 1 body), 0 for other
 * operators. Each is a graph the same wick_delegate_graph_* functions read
 * (its nodes, tensors, options, inputs and outputs; nested control flow
 * through this function again), valid as long as the graph it came from;
 * NULL when out of range. A delegate that takes an IF or WHILE runs the
 * whole operator: the subgraphs' operators are not offered on their own.
 * IF and WHILE are offered when their output shapes are known at prepare
 * (not when a branch or a loop body changes them). */
WICK_API size_t wick_delegate_graph_node_subgraph_count(const wick_delegate_graph *graph,
                                                        size_t node);
WICK_API const wick_delegate_graph *wick_delegate_graph_node_subgraph(
    const wick_delegate_graph *graph, size_t node, size_t i);
/* How operator `node` runs on the CPU, for a delegate building a subgraph:
 * "" when it runs at every invoke (a delegate may take it), "computed at
 * prepare" (its outputs are constants: wick_tensor_is_constant; skip it), or
 * why no delegate may run it ("output shape known only at invoke", "keeps
 * state across invokes", ...). NULL when out of range. Static storage. */
WICK_API const char *wick_delegate_graph_node_restriction(const wick_delegate_graph *graph,
                                                          size_t node);
/* A custom operator's option by key (its options are a FlexBuffers map, as
 * TFLite_Detection_PostProcess's "max_detections", "use_regular_nms", ...):
 * 1 and the value (integers and booleans exactly, true as 1) when the map has
 * `key` as a number or a boolean; 0 otherwise (absent, another type, not a
 * custom operator, malformed options, out of range). */
WICK_API int wick_delegate_graph_node_custom_option(const wick_delegate_graph *graph, size_t node,
                                                    const char *key, double *value_out);
/* For an operator a delegate runs (or, for a plans_only delegate, would run),
 * the note that delegate's supports_node left (see wick_delegate.notes): how
 * it runs the operator when that is not the operator itself, and how close
 * that is. "" otherwise (on the CPU, no note); NULL when i is out of range.
 * Owned by the interpreter, valid until its next prepare. */
WICK_API const char *wick_interpreter_op_delegation_note(const wick_interpreter *interpreter,
                                                         size_t i);

/* The delegation report with the operators inside subgraphs, one row per
 * operator. Rows [0, wick_interpreter_op_count) are the bound subgraph's
 * operators (row i is operator i, reported as by the accessors above). After
 * them come the operators of the subgraphs that operators run — an IF's then
 * and else, a WHILE's cond and body, a CALL_ONCE's init, a
 * STABLEHLO_COMPOSITE's decomposition — each subgraph's operators together
 * in file order, after the row of the operator that runs them (nested ones
 * likewise; at most 4096 subgraphs and 65536 rows are listed). Such an operator:
 *   - runs where the bound subgraph's operator it is nested in runs: when a
 *     delegate runs that IF or WHILE (always whole), `delegate` names it,
 *     `partition` is that operator's and `note` is the delegate's note for
 *     the inner operator itself (its supports_node is asked, for the report
 *     only); when that partition fell back, `reason` is the partition's;
 *   - on the CPU otherwise, with the reason "in the <role> subgraph of <OP>
 *     (row R), which runs on the CPU", followed by what keeps it off each
 *     delegate on its own ("; nnapi: FLOOR has no NNAPI mapping": every
 *     delegate's supports_node is asked about it), or by why no delegate may
 *     run it ("; output shape known only at invoke");
 *   - "computed at prepare" when it was folded (it does not run).
 * With no delegates every reason is "". As of the last prepare. */
typedef struct wick_delegation_row {
  size_t struct_size; /* set by the caller: sizeof(wick_delegation_row); fields are appended */
  /* The row of the operator running this one's subgraph; -1 for rows < op_count. */
  int64_t parent;
  /* Which of its subgraphs: "then" "else" "cond" "body" "init" "decomposition"; "". */
  const char *role;
  size_t subgraph;      /* the model's subgraph holding it (as wick_model_op_name takes) */
  size_t op;            /* the operator's index in that subgraph */
  const char *op_name;  /* "ADD", or a custom operator's code */
  const char *delegate; /* the delegate running it, or NULL (the CPU) */
  int partition;        /* as wick_interpreter_op_partition; an inner operator: its top's */
  const char *reason;   /* why it is not on a delegate ("" when it is, or with no delegates) */
  const char *note;     /* the delegate's note for an operator it runs, else "" */
} wick_delegation_row;
WICK_API size_t wick_interpreter_delegation_row_count(const wick_interpreter *interpreter);
/* Fills *row_out (its struct_size set by the caller; only the fields it
 * covers are written) with row `row`. The strings are static, the model's,
 * the delegate's or the interpreter's (valid until its next prepare).
 * WICK_ERR_INVALID_ARGUMENT when row is out of range or row_out is NULL or
 * smaller than this first version of the struct. */
WICK_API wick_status wick_interpreter_delegation_row(const wick_interpreter *interpreter,
                                                     size_t row, wick_delegation_row *row_out);

#ifdef __cplusplus
}
#endif

#endif /* WICK_WICK_H */
