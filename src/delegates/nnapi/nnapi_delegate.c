/*
 * nnapi_delegate.c — the "nnapi" delegate: runs partitions of a graph through
 * Android's Neural Networks API, opened at run time (nnapi_library.c), with
 * the operator mapping of nnapi_ops.c.
 *
 *   supports_node      the mapping's decision at the runtime's (or the capped)
 *                      feature level, with its reason; with no usable runtime
 *                      every operator is declined with why ("NNAPI is not
 *                      available: ...").
 *   prepare_partition  one ANeuralNetworksModel per partition: the partition's
 *                      inputs and outputs are the model's, constants are
 *                      operand values (referenced in place: they stay valid
 *                      until free_partition), everything else an internal
 *                      operand; then relaxed fp16 (28+, opt-in), a compilation
 *                      (for the chosen device at 29+), the preference, finish.
 *   invoke_partition   an execution per invoke: inputs and outputs bound to
 *                      the graph's tensor memory (stable between prepares),
 *                      compute (29+) or startCompute + wait.
 * Every NNAPI failure is a prepare or invoke failure with the call and its
 * result code, which wick turns into a CPU fallback (docs/delegates.md).
 *
 * Planning (plan_level=N): no library is opened; supports_node decides as a
 * level-N runtime would, and prepare_partition declines every partition with
 * what it would run as (wick_delegate.plans_only), so the model runs on the
 * CPU and the report is the plan.
 *
 * State: the delegate holds the opened library and options (read-only after
 * create); each partition's model and compilation live in its state, so one
 * delegate serves interpreters on several threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_internal.h"

typedef struct nnapi_delegate {
  wick_delegate base; /* first: the callbacks get &base */
  nnapi_library lib;
  int relaxed_fp16;
  int preference;  /* -1: NNAPI's default */
  char *ops;       /* ",NAME,NAME," to offer, or NULL for all */
  char *cache_dir; /* compilation caching (29+), or NULL */
} nnapi_delegate;

typedef struct nnapi_partition {
  ANeuralNetworksModel *model;
  ANeuralNetworksModel **models; /* the models `model` refers to (IF, WHILE), freed after it */
  size_t num_models;
  ANeuralNetworksCompilation *compilation;
  int32_t *inputs, *outputs; /* graph tensors, in model order */
  size_t num_inputs, num_outputs;
  void **kept;
  size_t num_kept;
} nnapi_partition;

static nnapi_delegate *self_of(wick_delegate *d) { return (nnapi_delegate *)(void *)d; }

/* Four FNV-1a lanes from different starting points: a fingerprint of the model
 * as built, for NNAPI's compilation cache token (not cryptographic: the cache
 * directory is the application's own, as NNAPI requires). */
void wick_nnapi_hash(nnapi_builder *b, const void *data, size_t size) {
  if (!b->hashing || data == NULL) return;
  const uint8_t *p = data;
  for (size_t i = 0; i < size; i++)
    for (int k = 0; k < 4; k++) b->hash[k] = (b->hash[k] ^ p[i]) * 0x100000001b3ULL;
}

/* The 32-byte token: each lane mixed (splitmix64's finalizer), little-endian. */
static void cache_token(const nnapi_builder *b,
                        uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN]) {
  for (int k = 0; k < 4; k++) {
    uint64_t z = b->hash[k] + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    for (int j = 0; j < 8; j++) token[8 * k + j] = (uint8_t)(z >> (8 * j));
  }
}

void *wick_nnapi_keep(nnapi_builder *b, size_t size) {
  if (b->num_kept == b->cap_kept) {
    size_t cap = b->cap_kept ? 2 * b->cap_kept : 64;
    void **grown = realloc(b->kept, cap * sizeof *grown);
    if (grown == NULL) return NULL;
    b->kept = grown;
    b->cap_kept = cap;
  }
  void *p = calloc(1, size ? size : 1);
  if (p != NULL) b->kept[b->num_kept++] = p;
  return p;
}

bool wick_nnapi_adopt(nnapi_builder *to, nnapi_builder *from) {
  if (to->num_kept + from->num_kept > to->cap_kept) {
    size_t cap = to->num_kept + from->num_kept + 64;
    void **grown = realloc(to->kept, cap * sizeof *grown);
    if (grown == NULL) return false;
    to->kept = grown;
    to->cap_kept = cap;
  }
  size_t models = to->num_models + from->num_models + 1; /* and from's own model */
  if (models > to->cap_models) {
    ANeuralNetworksModel **grown = realloc(to->models, (models + 8) * sizeof *grown);
    if (grown == NULL) return false;
    to->models = grown;
    to->cap_models = models + 8;
  }
  /* (empty lists may be NULL: memcpy takes no NULL even for 0 bytes) */
  if (from->num_kept > 0)
    memcpy(to->kept + to->num_kept, from->kept, from->num_kept * sizeof *from->kept);
  to->num_kept += from->num_kept;
  if (from->num_models > 0)
    memcpy(to->models + to->num_models, from->models, from->num_models * sizeof *from->models);
  to->num_models += from->num_models;
  if (from->model != NULL) to->models[to->num_models++] = from->model;
  free(from->kept);
  free(from->models);
  from->kept = NULL;
  from->models = NULL;
  from->model = NULL;
  from->num_kept = from->cap_kept = from->num_models = from->cap_models = 0;
  return true;
}

void wick_nnapi_builder_free(nnapi_builder *b) {
  if (b->model != NULL) b->lib->fn.ANeuralNetworksModel_free(b->model);
  for (size_t i = b->num_models; i > 0; i--) b->lib->fn.ANeuralNetworksModel_free(b->models[i - 1]);
  for (size_t i = 0; i < b->num_kept; i++) free(b->kept[i]);
  free(b->kept);
  free(b->models);
  b->model = NULL;
  b->kept = NULL;
  b->models = NULL;
  b->num_kept = b->cap_kept = b->num_models = b->cap_models = 0;
}

static int supports_node(wick_delegate *self, const wick_delegate_graph *graph, size_t node,
                         char *why, size_t why_size) {
  nnapi_delegate *d = self_of(self);
  if (d->lib.unavailable[0]) {
    snprintf(why, why_size, "%s", d->lib.unavailable);
    return 0;
  }
  if (d->ops != NULL) {
    const char *name = wick_delegate_graph_node_name(graph, node);
    char key[80];
    snprintf(key, sizeof key, ",%s,", name ? name : "?");
    if (strstr(d->ops, key) == NULL) {
      snprintf(why, why_size, "%s is not in the ops= list", name ? name : "?");
      return 0;
    }
  }
  return wick_nnapi_map_node(&d->lib, graph, node, NULL, why, why_size) ? 1 : 0;
}

static void free_partition(wick_delegate *self, void *state) {
  nnapi_delegate *d = self_of(self);
  nnapi_partition *p = state;
  if (p == NULL) return;
  if (p->compilation) d->lib.fn.ANeuralNetworksCompilation_free(p->compilation);
  if (p->model) d->lib.fn.ANeuralNetworksModel_free(p->model);
  /* referenced models after the model referring to them, innermost last */
  for (size_t i = p->num_models; i > 0; i--) d->lib.fn.ANeuralNetworksModel_free(p->models[i - 1]);
  free(p->models);
  for (size_t i = 0; i < p->num_kept; i++) free(p->kept[i]);
  free(p->kept);
  free(p->inputs);
  free(p->outputs);
  free(p);
}

#define FAIL(...)                         \
  do {                                    \
    snprintf(why, why_size, __VA_ARGS__); \
    goto fail;                            \
  } while (0)

static wick_status prepare_partition(wick_delegate *self, const wick_delegate_graph *graph,
                                     const wick_delegate_partition *partition, void **state_out,
                                     char *why, size_t why_size) {
  nnapi_delegate *d = self_of(self);
  const nnapi_functions *fn = &d->lib.fn;
  *state_out = NULL;
  if (d->lib.unavailable[0]) {
    snprintf(why, why_size, "%s", d->lib.unavailable);
    return WICK_ERR_UNSUPPORTED_OP;
  }
  if (d->lib.planning) { /* plans_only: the report shows the partition; the CPU runs it */
    snprintf(why, why_size,
             "would run on NNAPI at feature level %s (a partition of %zu operator%s)",
             wick_nnapi_level_name(d->lib.level), partition->num_nodes,
             partition->num_nodes == 1 ? "" : "s");
    return WICK_ERR_UNSUPPORTED_OP;
  }
  nnapi_builder b = {0};
  b.lib = &d->lib;
  b.graph = graph;
  b.why = why;
  b.why_size = why_size;
  b.num_tensors = wick_delegate_graph_tensor_count(graph);
  b.relaxed = d->relaxed_fp16 && d->lib.level >= 28 &&
              fn->ANeuralNetworksModel_relaxComputationFloat32toFloat16 != NULL;
  bool caching = d->cache_dir != NULL && d->lib.level >= 29 &&
                 fn->ANeuralNetworksCompilation_setCaching != NULL;
  if (caching) {
    b.hashing = true;
    for (int k = 0; k < 4; k++)
      b.hash[k] = 0xcbf29ce484222325ULL ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1));
  }
  nnapi_partition *p = calloc(1, sizeof *p);
  b.operand_of = malloc((b.num_tensors ? b.num_tensors : 1) * sizeof *b.operand_of);
  uint32_t *model_in = malloc((partition->num_inputs + 1) * sizeof *model_in);
  uint32_t *model_out = malloc((partition->num_outputs + 1) * sizeof *model_out);
  if (p == NULL || b.operand_of == NULL || model_in == NULL || model_out == NULL)
    FAIL("out of memory");
  for (size_t i = 0; i < b.num_tensors; i++) b.operand_of[i] = -1;
  p->inputs = malloc((partition->num_inputs + 1) * sizeof *p->inputs);
  p->outputs = malloc((partition->num_outputs + 1) * sizeof *p->outputs);
  if (p->inputs == NULL || p->outputs == NULL) FAIL("out of memory");
  int status = fn->ANeuralNetworksModel_create(&b.model);
  if (status != ANEURALNETWORKS_NO_ERROR || b.model == NULL)
    FAIL("ANeuralNetworksModel_create failed (NNAPI result %d)", status);
  p->model = b.model;
  /* the partition's inputs first (so their operands exist in the right order),
   * then every operator */
  for (size_t i = 0; i < partition->num_inputs; i++) {
    int32_t id = wick_nnapi_tensor_operand(&b, partition->inputs[i]);
    if (id < 0) goto fail;
    model_in[i] = (uint32_t)id;
    p->inputs[i] = partition->inputs[i];
  }
  p->num_inputs = partition->num_inputs;
  for (size_t k = 0; k < partition->num_nodes; k++)
    if (!wick_nnapi_map_node(&d->lib, graph, partition->nodes[k], &b, why, why_size)) goto fail;
  for (size_t i = 0; i < partition->num_outputs; i++) {
    int32_t t = partition->outputs[i];
    if (t < 0 || (size_t)t >= b.num_tensors || b.operand_of[t] < 0)
      FAIL("partition output %d was not built", (int)t);
    model_out[i] = (uint32_t)b.operand_of[t];
    p->outputs[i] = t;
  }
  p->num_outputs = partition->num_outputs;
  wick_nnapi_hash(&b, model_in, p->num_inputs * sizeof *model_in);
  wick_nnapi_hash(&b, model_out, p->num_outputs * sizeof *model_out);
  wick_nnapi_hash(&b, &d->relaxed_fp16, sizeof d->relaxed_fp16);
  wick_nnapi_hash(&b, &d->preference, sizeof d->preference);
  wick_nnapi_hash(&b, &d->lib.level, sizeof d->lib.level);
  /* the device by name, not by pointer: a token must stay the same from run to run */
  wick_nnapi_hash(&b, d->lib.device_name, strlen(d->lib.device_name));
  status =
      fn->ANeuralNetworksModel_identifyInputsAndOutputs(b.model, (uint32_t)p->num_inputs, model_in,
                                                        (uint32_t)p->num_outputs, model_out);
  if (status != ANEURALNETWORKS_NO_ERROR)
    FAIL("ANeuralNetworksModel_identifyInputsAndOutputs failed (NNAPI result %d)", status);
  if (b.relaxed) {
    status = fn->ANeuralNetworksModel_relaxComputationFloat32toFloat16(b.model, true);
    if (status != ANEURALNETWORKS_NO_ERROR)
      FAIL("ANeuralNetworksModel_relaxComputationFloat32toFloat16 failed (NNAPI result %d)",
           status);
  }
  status = fn->ANeuralNetworksModel_finish(b.model);
  if (status != ANEURALNETWORKS_NO_ERROR)
    FAIL("ANeuralNetworksModel_finish failed (NNAPI result %d)", status);
  if (d->lib.device != NULL) {
    status = fn->ANeuralNetworksCompilation_createForDevices(b.model, &d->lib.device, 1,
                                                             &p->compilation);
    if (status != ANEURALNETWORKS_NO_ERROR)
      FAIL("ANeuralNetworksCompilation_createForDevices failed (NNAPI result %d)", status);
  } else {
    status = fn->ANeuralNetworksCompilation_create(b.model, &p->compilation);
    if (status != ANEURALNETWORKS_NO_ERROR)
      FAIL("ANeuralNetworksCompilation_create failed (NNAPI result %d)", status);
  }
  if (d->preference >= 0) {
    status = fn->ANeuralNetworksCompilation_setPreference(p->compilation, d->preference);
    if (status != ANEURALNETWORKS_NO_ERROR)
      FAIL("ANeuralNetworksCompilation_setPreference failed (NNAPI result %d)", status);
  }
  if (caching) {
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
    cache_token(&b, token);
    status = fn->ANeuralNetworksCompilation_setCaching(p->compilation, d->cache_dir, token);
    if (status != ANEURALNETWORKS_NO_ERROR)
      FAIL("ANeuralNetworksCompilation_setCaching failed (NNAPI result %d)", status);
  }
  status = fn->ANeuralNetworksCompilation_finish(p->compilation);
  if (status != ANEURALNETWORKS_NO_ERROR)
    FAIL("ANeuralNetworksCompilation_finish failed (NNAPI result %d)", status);
  p->kept = b.kept;
  p->num_kept = b.num_kept;
  p->models = b.models;
  p->num_models = b.num_models;
  free(b.operand_of);
  free(model_in);
  free(model_out);
  *state_out = p;
  return WICK_OK;
fail:
  if (why[0] == 0) snprintf(why, why_size, "building the NNAPI model failed");
  if (p != NULL) {
    p->kept = b.kept;
    p->num_kept = b.num_kept;
    p->models = b.models;
    p->num_models = b.num_models;
    p->model = b.model;
    free_partition(self, p);
  } else {
    wick_nnapi_builder_free(&b);
  }
  free(b.operand_of);
  free(model_in);
  free(model_out);
  return WICK_ERR_UNSUPPORTED_OP;
}

static wick_status invoke_partition(wick_delegate *self, const wick_delegate_graph *graph,
                                    void *state, char *why, size_t why_size) {
  nnapi_delegate *d = self_of(self);
  const nnapi_functions *fn = &d->lib.fn;
  nnapi_partition *p = state;
  if (wick_delegate_graph_cancelled(graph)) return WICK_ERR_CANCELLED;
  ANeuralNetworksExecution *e = NULL;
  int status = fn->ANeuralNetworksExecution_create(p->compilation, &e);
  if (status != ANEURALNETWORKS_NO_ERROR || e == NULL) {
    snprintf(why, why_size, "ANeuralNetworksExecution_create failed (NNAPI result %d)", status);
    return WICK_ERR_INVALID_INPUT;
  }
  wick_status result = WICK_OK;
  for (size_t i = 0; i < p->num_inputs && result == WICK_OK; i++) {
    const wick_tensor *t = wick_delegate_graph_tensor(graph, p->inputs[i]);
    status = fn->ANeuralNetworksExecution_setInput(e, (int32_t)i, NULL, wick_tensor_data(t),
                                                   wick_tensor_byte_size(t));
    if (status != ANEURALNETWORKS_NO_ERROR) {
      snprintf(why, why_size, "ANeuralNetworksExecution_setInput %zu failed (NNAPI result %d)", i,
               status);
      result = WICK_ERR_INVALID_INPUT;
    }
  }
  for (size_t i = 0; i < p->num_outputs && result == WICK_OK; i++) {
    wick_tensor *t = wick_delegate_graph_tensor(graph, p->outputs[i]);
    status =
        fn->ANeuralNetworksExecution_setOutput(e, (int32_t)i, NULL, wick_tensor_mutable_data(t),
                                               wick_tensor_byte_size(t));
    if (status != ANEURALNETWORKS_NO_ERROR) {
      snprintf(why, why_size, "ANeuralNetworksExecution_setOutput %zu failed (NNAPI result %d)", i,
               status);
      result = WICK_ERR_INVALID_INPUT;
    }
  }
  if (result == WICK_OK) {
    if (d->lib.level >= 29 && fn->ANeuralNetworksExecution_compute != NULL) {
      status = fn->ANeuralNetworksExecution_compute(e);
      if (status != ANEURALNETWORKS_NO_ERROR) {
        snprintf(why, why_size, "ANeuralNetworksExecution_compute failed (NNAPI result %d)",
                 status);
        result = WICK_ERR_INVALID_INPUT;
      }
    } else {
      ANeuralNetworksEvent *event = NULL;
      status = fn->ANeuralNetworksExecution_startCompute(e, &event);
      if (status != ANEURALNETWORKS_NO_ERROR) {
        snprintf(why, why_size, "ANeuralNetworksExecution_startCompute failed (NNAPI result %d)",
                 status);
        result = WICK_ERR_INVALID_INPUT;
      } else {
        status = fn->ANeuralNetworksEvent_wait(event);
        if (status != ANEURALNETWORKS_NO_ERROR) {
          snprintf(why, why_size, "ANeuralNetworksEvent_wait failed (NNAPI result %d)", status);
          result = WICK_ERR_INVALID_INPUT;
        }
      }
      if (event != NULL) fn->ANeuralNetworksEvent_free(event);
    }
  }
  fn->ANeuralNetworksExecution_free(e);
  return result;
}

static void destroy(wick_delegate *self) {
  nnapi_delegate *d = self_of(self);
  wick_nnapi_library_close(&d->lib);
  free(d->ops);
  free(d->cache_dir);
  free(d);
}

wick_nnapi_delegate_options wick_nnapi_delegate_options_default(void) {
  wick_nnapi_delegate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.preference = -1;
  return o;
}

wick_status wick_nnapi_delegate_create(const wick_nnapi_delegate_options *options,
                                       wick_error_info *error, wick_delegate **delegate_out) {
  if (error) error->message[0] = 0;
  if (delegate_out == NULL) return WICK_ERR_INVALID_ARGUMENT;
  *delegate_out = NULL;
  wick_nnapi_delegate_options o = wick_nnapi_delegate_options_default();
  if (options != NULL) {
    if (options->struct_size < offsetof(wick_nnapi_delegate_options, cache_dir) + sizeof(char *) ||
        options->struct_size > sizeof o) {
      if (error)
        snprintf(error->message, sizeof error->message,
                 "wick_nnapi_delegate_options.struct_size %zu is not one this library knows",
                 options->struct_size);
      return WICK_ERR_INVALID_ARGUMENT;
    }
    memcpy(&o, options, options->struct_size);
  }
  if (o.feature_level != 0 && o.feature_level < 27) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "NNAPI feature level %lld: the first is 27 (Android 8.1)",
               (long long)o.feature_level);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  if (o.plan_level < 0 || (o.plan_level != 0 && o.plan_level < 27)) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "NNAPI plan level %lld: the first feature level is 27 (Android 8.1)",
               (long long)o.plan_level);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  if (o.preference < -1 || o.preference > ANEURALNETWORKS_PREFER_SUSTAINED_SPEED) {
    if (error)
      snprintf(error->message, sizeof error->message,
               "NNAPI preference %d: -1 (default), 0 (low power), 1 (fast single answer) or 2 "
               "(sustained speed)",
               o.preference);
    return WICK_ERR_INVALID_ARGUMENT;
  }
  nnapi_delegate *d = calloc(1, sizeof *d);
  if (d == NULL) return WICK_ERR_OUT_OF_MEMORY;
  d->base.struct_size = sizeof d->base;
  d->base.name = "nnapi";
  d->base.user = NULL;
  d->base.min_partition_nodes = o.min_partition_nodes;
  d->base.supports_node = supports_node;
  d->base.prepare_partition = prepare_partition;
  d->base.invoke_partition = invoke_partition;
  d->base.free_partition = free_partition;
  d->base.destroy = destroy;
  d->base.notes = 1; /* composed operators say so in the report (nnapi_map.h, NOTE) */
  if (o.ops != NULL) {
    size_t len = strlen(o.ops);
    d->ops = malloc(len + 3);
    if (d->ops == NULL) {
      free(d);
      return WICK_ERR_OUT_OF_MEMORY;
    }
    snprintf(d->ops, len + 3, ",%s,", o.ops);
  }
  if (o.cache_dir != NULL && *o.cache_dir) {
    size_t len = strlen(o.cache_dir);
    d->cache_dir = malloc(len + 1);
    if (d->cache_dir == NULL) {
      free(d->ops);
      free(d);
      return WICK_ERR_OUT_OF_MEMORY;
    }
    memcpy(d->cache_dir, o.cache_dir, len + 1);
  }
  d->relaxed_fp16 = o.relaxed_fp16;
  d->preference = o.preference;
  if (o.plan_level > 0) {
    int64_t level =
        o.feature_level > 0 && o.feature_level < o.plan_level ? o.feature_level : o.plan_level;
    wick_nnapi_library_plan(&d->lib, level, o.device);
    d->base.plans_only = 1;
  } else {
    wick_nnapi_library_open(&d->lib, o.library, o.feature_level, o.device);
  }
  *delegate_out = &d->base;
  return WICK_OK;
}

int64_t wick_nnapi_delegate_feature_level(const wick_delegate *delegate) {
  if (delegate == NULL || delegate->destroy != destroy) return 0;
  const nnapi_delegate *d = (const nnapi_delegate *)(const void *)delegate;
  return d->lib.unavailable[0] ? 0 : d->lib.level;
}

const char *wick_nnapi_delegate_unavailable_reason(const wick_delegate *delegate) {
  if (delegate == NULL || delegate->destroy != destroy) return "not an NNAPI delegate";
  const nnapi_delegate *d = (const nnapi_delegate *)(const void *)delegate;
  return d->lib.unavailable;
}
