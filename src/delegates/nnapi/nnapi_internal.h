/*
 * nnapi_internal.h — what the files of the NNAPI delegate share:
 *
 *   nnapi_library.c   opens libneuralnetworks.so (dlopen), resolves the NNAPI
 *                     functions (dlsym), reads the feature level and devices;
 *   nnapi_ops.c       the TFLite -> NNAPI operation mapping: one function per
 *                     operator family that both decides (with a reason) and,
 *                     given a model builder, emits the NNAPI operands and
 *                     operation, so what is accepted and what is built can
 *                     never disagree; nnapi_ops_composite.c (BATCH_MATMUL,
 *                     GELU: several NNAPI operations each) and
 *                     nnapi_ops_logic.c (comparisons, logic, SELECT, boolean
 *                     and sum reductions), nnapi_ops_flow.c (IF, WHILE) and
 *                     nnapi_ops_detection.c (TFLite_Detection_PostProcess)
 *                     hold more families, and
 *                     nnapi_operands.c (nnapi_map.h) the helpers they all
 *                     share (types, operands);
 *   nnapi_delegate.c  the wick_delegate callbacks: supports_node,
 *                     prepare_partition (model, compilation), invoke_partition
 *                     (execution), and the constructors.
 *
 * The delegate sees wick's graph only through the public delegate API of
 * wick.h. All constants come from nnapi_types.h (the NDK reference).
 */
#ifndef WICK_DELEGATES_NNAPI_NNAPI_INTERNAL_H
#define WICK_DELEGATES_NNAPI_NNAPI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delegates/delegates.h"
#include "delegates/nnapi/nnapi_types.h"

/* The resolved NNAPI functions; NULL where the library lacks one. */
typedef struct nnapi_functions {
#define WICK_NNAPI_POINTER(name, ret, params, level) ret(*name) params;
  WICK_NNAPI_FUNCTIONS(WICK_NNAPI_POINTER)
#undef WICK_NNAPI_POINTER
} nnapi_functions;

/* An opened NNAPI runtime (or the reason there is none). Immutable once made. */
typedef struct nnapi_library {
  void *handle;                        /* dlopen handle, NULL when unavailable */
  nnapi_functions fn;                  /* resolved functions */
  int64_t runtime_level;               /* what the runtime reports (or implies) */
  int64_t level;                       /* the level the delegate targets: min(runtime, cap) */
  const ANeuralNetworksDevice *device; /* the device asked for by name (29+), or NULL */
  char device_name[64];                /* its name ("" without one) */
  char unavailable[200];               /* "" when usable, else why not */
  bool planning; /* no library: decisions as a runtime of `level` would make (plan_level) */
} nnapi_library;

/* Opens `path` (NULL: $WICK_NNAPI_LIBRARY, else "libneuralnetworks.so"), caps
 * the level at `cap` (0: none) and looks up `device` (NULL: none). Never fails:
 * an unusable runtime leaves the reason in lib->unavailable. */
void wick_nnapi_library_open(nnapi_library *lib, const char *path, int64_t cap, const char *device);
/* Planning: opens nothing (no dlopen); the library is a runtime of `level`
 * with one device (named `device` when given, from level 29) for the
 * decisions of nnapi_ops.c, and has no functions: nothing may be built. */
void wick_nnapi_library_plan(nnapi_library *lib, int64_t level, const char *device);
void wick_nnapi_library_close(nnapi_library *lib);
/* "27 (Android 8.1)" ... for messages. */
const char *wick_nnapi_level_name(int64_t level);

/* A model under construction for one partition. Memory the model references
 * (values over 128 bytes, per-channel scales, made-up constants) is owned by
 * the partition state through `keep`. */
typedef struct nnapi_builder {
  const nnapi_library *lib;
  const wick_delegate_graph *graph;
  ANeuralNetworksModel *model;
  int32_t *operand_of; /* graph tensor -> NNAPI operand, -1 if none yet */
  size_t num_tensors;
  uint32_t next_operand;
  void **kept; /* allocations to free with the partition */
  size_t num_kept, cap_kept;
  char *why;
  size_t why_size;
  int failed_call;  /* an NNAPI call failed: the reason is in why */
  bool hashing;     /* compilation caching: every call's arguments go into `hash` */
  uint64_t hash[4]; /* the model's fingerprint, the cache token (wick_nnapi_hash) */
  bool relaxed;     /* relaxComputationFloat32toFloat16 on this model and the ones it refers to */
  /* Models this one refers to (the subgraphs of IF and WHILE, nnapi_ops_flow.c), finished;
   * owned by the partition and freed after its model. */
  ANeuralNetworksModel **models;
  size_t num_models, cap_models;
} nnapi_builder;

/* Decides whether operator `node` maps exactly to NNAPI at the library's level
 * (b == NULL: only decide; else also emit it into b->model). Returns true, or
 * false with the reason in why. */
bool wick_nnapi_map_node(const nnapi_library *lib, const wick_delegate_graph *graph, size_t node,
                         nnapi_builder *b, char *why, size_t why_size);
/* The operand of graph tensor `t` in the model being built (adding it, and its
 * value when constant, on first use); -1 with the reason on failure. */
int32_t wick_nnapi_tensor_operand(nnapi_builder *b, int32_t t);
/* Adds `size` bytes to the builder's model fingerprint (when hashing). */
void wick_nnapi_hash(nnapi_builder *b, const void *data, size_t size);
/* Memory owned by the partition (freed with it); NULL when out of memory. */
void *wick_nnapi_keep(nnapi_builder *b, size_t size);
/* Moves what `from` (a referenced model's builder) owns — kept memory, referenced models — to
 * `to`, the model referring to it; false when out of memory (then `from` still owns it). */
bool wick_nnapi_adopt(nnapi_builder *to, nnapi_builder *from);
/* Frees what a builder owns (kept memory, referenced models, its model). */
void wick_nnapi_builder_free(nnapi_builder *b);

#endif /* WICK_DELEGATES_NNAPI_NNAPI_INTERNAL_H */
