/*
 * test_nnapi.c — the C API of wick's test NNAPI implementation
 * (libwick_test_nnapi.so): a Linux library exporting the NNAPI functions the
 * delegate calls, written from the NDK reference, so that the NNAPI delegate
 * can be tested without a phone.
 *
 * It behaves like a runtime of the feature level in
 * $WICK_TEST_NNAPI_FEATURE_LEVEL (default 1000008):
 *   - validation: every call checks its arguments and the object's state as
 *     the reference describes (NULLs, indices, a finished model, an
 *     unfinished compilation, lengths that do not match an operand, ...);
 *     operand types and operations the level lacks are rejected at
 *     addOperand / addOperation, each operation's inputs and outputs are
 *     checked against its signature at that level (test_nnapi_ops.c) and its
 *     shapes at finish. A function newer than the level is a misuse: a real
 *     runtime of that level does not export it (it returns BAD_STATE here and
 *     counts the misuse).
 *   - computation: each operation in plain C (test_nnapi_ops.c).
 *   - fault injection: $WICK_TEST_NNAPI_FAIL="Function:N[,Function:N...]"
 *     makes the first N calls of each named function fail with OP_FAILED
 *     ("Function:*" every call). Counters restart when the variable changes.
 *   - for tests: wick_test_nnapi_rejections() counts calls rejected by
 *     validation, wick_test_nnapi_misuses() calls of functions the level
 *     lacks, wick_test_nnapi_last_error() says why the last one was
 *     rejected, wick_test_nnapi_executions() counts computations.
 * Two devices (29+): "wick-test-cpu" (CPU) and "wick-test-npu" (ACCELERATOR),
 * both computing with the same code.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "test_nnapi.h"

#define EXPORT __attribute__((visibility("default")))

/* Every function, declared from the list the delegate resolves (nnapi_types.h):
 * a signature here that differs from the delegate's does not compile. */
#define WICK_NNAPI_DECLARE(name, ret, params, level) EXPORT ret name params;
WICK_NNAPI_FUNCTIONS(WICK_NNAPI_DECLARE)
#undef WICK_NNAPI_DECLARE

/* ---------------------------------------------------------------- state for tests */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long rejections, misuses, executions, cache_calls;
static uint8_t cache_token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
static char last_error[512];

EXPORT long wick_test_nnapi_rejections(void);
EXPORT long wick_test_nnapi_misuses(void);
EXPORT long wick_test_nnapi_executions(void);
EXPORT const char *wick_test_nnapi_last_error(void);
EXPORT void wick_test_nnapi_reset_counters(void);
EXPORT long wick_test_nnapi_cache_calls(void);
EXPORT void wick_test_nnapi_last_cache_token(uint8_t *out);

long wick_test_nnapi_rejections(void) { return rejections; }
long wick_test_nnapi_misuses(void) { return misuses; }
long wick_test_nnapi_executions(void) { return executions; }
const char *wick_test_nnapi_last_error(void) { return last_error; }
long wick_test_nnapi_cache_calls(void) { return cache_calls; }
void wick_test_nnapi_last_cache_token(uint8_t *out) {
  memcpy(out, cache_token, sizeof cache_token);
}
void wick_test_nnapi_reset_counters(void) {
  pthread_mutex_lock(&lock);
  rejections = misuses = executions = cache_calls = 0;
  last_error[0] = 0;
  pthread_mutex_unlock(&lock);
}

static int reject(int code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int reject(int code, const char *fn, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&lock);
  rejections++;
  snprintf(last_error, sizeof last_error, "%s: %s", fn, msg);
  pthread_mutex_unlock(&lock);
  if (getenv("WICK_TEST_NNAPI_VERBOSE")) fprintf(stderr, "test NNAPI: %s: %s\n", fn, msg);
  return code;
}

static int64_t level(void) {
  const char *v = getenv("WICK_TEST_NNAPI_FEATURE_LEVEL");
  if (v == NULL || *v == 0) return NNAPI_LEVEL_8;
  return strtoll(v, NULL, 10);
}

/* A function the configured level does not have: a real runtime of that level
 * would not export it. */
static bool lacks(const char *fn, int64_t since) {
  if (level() >= since) return false;
  pthread_mutex_lock(&lock);
  misuses++;
  snprintf(last_error, sizeof last_error,
           "%s: called at feature level %lld (it is a level-%lld "
           "function)",
           fn, (long long)level(), (long long)since);
  pthread_mutex_unlock(&lock);
  if (getenv("WICK_TEST_NNAPI_VERBOSE")) fprintf(stderr, "test NNAPI: %s\n", last_error);
  return true;
}

/* ---------------------------------------------------------------- fault injection */

#define MAX_FAULTS 16
static char fault_spec[512];
static struct {
  char name[96];
  long left; /* -1: always */
} faults[MAX_FAULTS];
static int num_faults;

static bool inject(const char *fn) {
  const char *spec = getenv("WICK_TEST_NNAPI_FAIL");
  if (spec == NULL) spec = "";
  bool fail = false;
  pthread_mutex_lock(&lock);
  if (strcmp(spec, fault_spec) != 0) { /* a new setting: parse it, counters restart */
    snprintf(fault_spec, sizeof fault_spec, "%s", spec);
    num_faults = 0;
    for (const char *s = spec; *s && num_faults < MAX_FAULTS;) {
      const char *end = strchr(s, ',');
      size_t len = end ? (size_t)(end - s) : strlen(s);
      const char *colon = memchr(s, ':', len);
      size_t name_len = colon ? (size_t)(colon - s) : len;
      if (name_len > 0 && name_len < sizeof faults[0].name) {
        memcpy(faults[num_faults].name, s, name_len);
        faults[num_faults].name[name_len] = 0;
        faults[num_faults].left = !colon || colon[1] == '*' ? -1 : strtol(colon + 1, NULL, 10);
        num_faults++;
      }
      s = end ? end + 1 : s + len;
    }
  }
  for (int i = 0; i < num_faults; i++) {
    if (strcmp(faults[i].name, fn) != 0 || faults[i].left == 0) continue;
    if (faults[i].left > 0) faults[i].left--;
    fail = true;
  }
  pthread_mutex_unlock(&lock);
  return fail;
}

#define ENTER(since)                                              \
  do {                                                            \
    if (lacks(__func__, since)) return ANEURALNETWORKS_BAD_STATE; \
    if (inject(__func__)) return ANEURALNETWORKS_OP_FAILED;       \
  } while (0)
#define REJECT(code, ...) return reject(code, __func__, __VA_ARGS__)

/* ---------------------------------------------------------------- operands */

size_t nn_element_size(int32_t type) {
  switch (type) {
    case ANEURALNETWORKS_TENSOR_FLOAT32:
    case ANEURALNETWORKS_TENSOR_INT32: return 4;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED:
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM:
    case ANEURALNETWORKS_TENSOR_BOOL8: return 1;
    case ANEURALNETWORKS_TENSOR_FLOAT16:
    case ANEURALNETWORKS_TENSOR_QUANT16_SYMM:
    case ANEURALNETWORKS_TENSOR_QUANT16_ASYMM: return 2;
    default: return 0;
  }
}

static size_t scalar_size(int32_t type) {
  switch (type) {
    case ANEURALNETWORKS_FLOAT32:
    case ANEURALNETWORKS_INT32:
    case ANEURALNETWORKS_UINT32: return 4;
    case ANEURALNETWORKS_BOOL: return 1;
    case ANEURALNETWORKS_FLOAT16: return 2;
    default: return 0;
  }
}

size_t nn_operand_bytes(const nn_operand *o) {
  if (o->rank == 0) return scalar_size(o->type);
  size_t n = nn_element_size(o->type);
  for (uint32_t d = 0; d < o->rank; d++) n *= o->dims[d];
  return n;
}

static int64_t type_level(int32_t type) {
  if (type >= ANEURALNETWORKS_FLOAT32 && type <= ANEURALNETWORKS_TENSOR_QUANT8_ASYMM) return 27;
  if (type >= ANEURALNETWORKS_BOOL && type <= ANEURALNETWORKS_TENSOR_QUANT8_SYMM) return 29;
  if (type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED || type == ANEURALNETWORKS_MODEL)
    return 30;
  return 0;
}

/* ---------------------------------------------------------------- memory */

struct ANeuralNetworksMemory {
  void *data;
  size_t size;
};

EXPORT int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                              ANeuralNetworksMemory **memory) {
  ENTER(27);
  if (memory == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "memory is NULL");
  *memory = NULL;
  if (size == 0) REJECT(ANEURALNETWORKS_BAD_DATA, "size 0");
  void *p = mmap(NULL, size, protect, MAP_SHARED, fd, (off_t)offset);
  if (p == MAP_FAILED) REJECT(ANEURALNETWORKS_BAD_DATA, "mmap failed: %s", strerror(errno));
  ANeuralNetworksMemory *m = calloc(1, sizeof *m);
  if (m == NULL) {
    munmap(p, size);
    return ANEURALNETWORKS_OUT_OF_MEMORY;
  }
  m->data = p;
  m->size = size;
  *memory = m;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT void ANeuralNetworksMemory_free(ANeuralNetworksMemory *memory) {
  if (memory == NULL) return;
  munmap(memory->data, memory->size);
  free(memory);
}

/* ---------------------------------------------------------------- model */

EXPORT int ANeuralNetworksModel_create(ANeuralNetworksModel **model) {
  ENTER(27);
  if (model == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "model is NULL");
  *model = calloc(1, sizeof **model);
  return *model ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
}

EXPORT void ANeuralNetworksModel_free(ANeuralNetworksModel *model) {
  if (model == NULL) return;
  if (model->compilations > 0)
    reject(ANEURALNETWORKS_BAD_STATE, __func__, "freed while %d compilation(s) use it",
           model->compilations);
  for (uint32_t i = 0; i < model->num_operands; i++) {
    free(model->operands[i].owned);
    free(model->operands[i].channel_scales);
  }
  free(model->operands);
  free(model->ops);
  free(model->inputs);
  free(model->outputs);
  free(model->order);
  free(model);
}

EXPORT int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *model,
                                           const ANeuralNetworksOperandType *type) {
  ENTER(27);
  if (model == NULL || type == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  int64_t since = type_level(type->type);
  if (since == 0) REJECT(ANEURALNETWORKS_BAD_DATA, "unknown operand type %d", (int)type->type);
  if (since > level())
    REJECT(ANEURALNETWORKS_BAD_DATA, "operand type %d needs feature level %lld (this is %lld)",
           (int)type->type, (long long)since, (long long)level());
  bool tensor = nn_element_size(type->type) != 0 || type->type == ANEURALNETWORKS_TENSOR_INT32;
  if (!tensor && type->dimensionCount != 0)
    REJECT(ANEURALNETWORKS_BAD_DATA, "a scalar type with %u dimensions", type->dimensionCount);
  if (tensor && (type->dimensionCount == 0 || type->dimensionCount > NN_MAX_RANK))
    REJECT(ANEURALNETWORKS_BAD_DATA, "a tensor of rank %u (the test runtime: 1 to 4)",
           type->dimensionCount);
  if (type->dimensionCount > 0 && type->dimensions == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "dimensions is NULL");
  for (uint32_t d = 0; d < type->dimensionCount; d++)
    if (type->dimensions[d] == 0)
      REJECT(ANEURALNETWORKS_BAD_DATA, "unspecified dimension %u (the test runtime needs all)", d);
  switch (type->type) {
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM:
      if (!(type->scale > 0) || type->zeroPoint < 0 || type->zeroPoint > 255)
        REJECT(ANEURALNETWORKS_BAD_DATA, "QUANT8_ASYMM scale %g zero point %d", (double)type->scale,
               (int)type->zeroPoint);
      break;
    case ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED:
      if (!(type->scale > 0) || type->zeroPoint < -128 || type->zeroPoint > 127)
        REJECT(ANEURALNETWORKS_BAD_DATA, "QUANT8_ASYMM_SIGNED scale %g zero point %d",
               (double)type->scale, (int)type->zeroPoint);
      break;
    case ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL:
      if (type->scale != 0 || type->zeroPoint != 0)
        REJECT(ANEURALNETWORKS_BAD_DATA, "a per-channel operand with scale/zero point set");
      break;
    case ANEURALNETWORKS_TENSOR_INT32:
      if (type->scale < 0 || type->zeroPoint != 0)
        REJECT(ANEURALNETWORKS_BAD_DATA, "TENSOR_INT32 scale %g zero point %d", (double)type->scale,
               (int)type->zeroPoint);
      break;
    case ANEURALNETWORKS_TENSOR_FLOAT32:
    case ANEURALNETWORKS_FLOAT32:
    case ANEURALNETWORKS_INT32:
    case ANEURALNETWORKS_UINT32:
    case ANEURALNETWORKS_BOOL:
      if (type->scale != 0 || type->zeroPoint != 0)
        REJECT(ANEURALNETWORKS_BAD_DATA, "type %d with a scale or zero point", (int)type->type);
      break;
    default: break;
  }
  if (model->num_operands == model->cap_operands) {
    uint32_t cap = model->cap_operands ? 2 * model->cap_operands : 64;
    nn_operand *grown = realloc(model->operands, cap * sizeof *grown);
    if (grown == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
    model->operands = grown;
    model->cap_operands = cap;
  }
  nn_operand *o = &model->operands[model->num_operands++];
  memset(o, 0, sizeof *o);
  o->type = type->type;
  o->rank = type->dimensionCount;
  for (uint32_t d = 0; d < o->rank; d++) o->dims[d] = type->dimensions[d];
  o->scale = type->scale;
  o->zp = type->zeroPoint;
  o->kind = NN_TEMP;
  return ANEURALNETWORKS_NO_ERROR;
}

static nn_operand *operand_at(ANeuralNetworksModel *model, int32_t index) {
  return index >= 0 && (uint32_t)index < model->num_operands ? &model->operands[index] : NULL;
}

EXPORT int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *model, int32_t index,
                                                const void *buffer, size_t length) {
  ENTER(27);
  if (model == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "model is NULL");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  nn_operand *o = operand_at(model, index);
  if (o == NULL) REJECT(ANEURALNETWORKS_BAD_DATA, "operand %d does not exist", (int)index);
  if (buffer == NULL) REJECT(ANEURALNETWORKS_BAD_DATA, "no-value operands are not used by wick");
  if (o->type == ANEURALNETWORKS_MODEL)
    REJECT(ANEURALNETWORKS_BAD_DATA, "operand %d is a MODEL: setOperandValueFromModel sets it",
           (int)index);
  if (length != nn_operand_bytes(o))
    REJECT(ANEURALNETWORKS_BAD_DATA, "operand %d: %zu bytes for an operand of %zu", (int)index,
           length, nn_operand_bytes(o));
  free(o->owned);
  o->owned = NULL;
  if (length <= ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES) {
    o->owned = malloc(length ? length : 1);
    if (o->owned == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
    memcpy(o->owned, buffer, length);
    o->value = o->owned;
  } else {
    o->value = buffer; /* referenced: the caller keeps it valid while the model is used */
  }
  o->length = length;
  o->kind = NN_CONST;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *model,
                                                          int32_t index,
                                                          const ANeuralNetworksMemory *memory,
                                                          size_t offset, size_t length) {
  ENTER(27);
  if (model == NULL || memory == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (offset > memory->size || length > memory->size - offset)
    REJECT(ANEURALNETWORKS_BAD_DATA, "range outside the memory");
  nn_operand *o = operand_at(model, index);
  if (o == NULL || length != nn_operand_bytes(o))
    REJECT(ANEURALNETWORKS_BAD_DATA, "operand %d missing or of another size", (int)index);
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  free(o->owned);
  o->owned = NULL;
  o->value = (const char *)memory->data + offset;
  o->length = length;
  o->kind = NN_CONST;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksModel_setOperandValueFromModel(ANeuralNetworksModel *model, int32_t index,
                                                         const ANeuralNetworksModel *value) {
  ENTER(30);
  if (model == NULL || value == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  if (!value->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the referenced model is not finished");
  if (value == model) REJECT(ANEURALNETWORKS_BAD_DATA, "a model refers to itself");
  nn_operand *o = operand_at(model, index);
  if (o == NULL || o->type != ANEURALNETWORKS_MODEL)
    REJECT(ANEURALNETWORKS_BAD_DATA, "operand %d is not of type MODEL", (int)index);
  free(o->owned);
  o->owned = NULL;
  o->ref = value;
  o->value = value;
  o->length = 0;
  o->kind = NN_CONST;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel *model, int32_t index,
    const ANeuralNetworksSymmPerChannelQuantParams *channelQuant) {
  ENTER(29);
  if (model == NULL || channelQuant == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  nn_operand *o = operand_at(model, index);
  if (o == NULL || o->type != ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL)
    REJECT(ANEURALNETWORKS_BAD_DATA, "operand %d is not TENSOR_QUANT8_SYMM_PER_CHANNEL",
           (int)index);
  if (channelQuant->channelDim >= o->rank ||
      channelQuant->scaleCount != o->dims[channelQuant->channelDim] || channelQuant->scales == NULL)
    REJECT(ANEURALNETWORKS_BAD_DATA, "channel dim %u with %u scales does not fit the operand",
           channelQuant->channelDim, channelQuant->scaleCount);
  float *scales = malloc(channelQuant->scaleCount * sizeof(float));
  if (scales == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < channelQuant->scaleCount; i++) {
    if (!(channelQuant->scales[i] > 0)) {
      free(scales);
      REJECT(ANEURALNETWORKS_BAD_DATA, "channel scale %u is %g", i,
             (double)channelQuant->scales[i]);
    }
    scales[i] = channelQuant->scales[i];
  }
  free(o->channel_scales);
  o->channel_scales = scales;
  o->channel_dim = channelQuant->channelDim;
  o->channel_count = channelQuant->scaleCount;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *model,
                                             ANeuralNetworksOperationType type, uint32_t inputCount,
                                             const uint32_t *inputs, uint32_t outputCount,
                                             const uint32_t *outputs) {
  ENTER(27);
  if (model == NULL || (inputCount && inputs == NULL) || (outputCount && outputs == NULL))
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  int64_t since = nn_operation_level(type);
  if (since == 0)
    REJECT(ANEURALNETWORKS_BAD_DATA, "operation %d is unknown to the test runtime", (int)type);
  if (since > level())
    REJECT(ANEURALNETWORKS_BAD_DATA, "operation %d needs feature level %lld (this is %lld)",
           (int)type, (long long)since, (long long)level());
  nn_operation op = {type, inputCount, outputCount, {0}, {0}};
  if (inputCount > 24 || outputCount < 1 || outputCount > NN_MAX_OUTPUTS)
    REJECT(ANEURALNETWORKS_BAD_DATA, "operation %d with %u inputs and %u outputs", (int)type,
           inputCount, outputCount);
  for (uint32_t i = 0; i < inputCount; i++) {
    if (inputs[i] >= model->num_operands)
      REJECT(ANEURALNETWORKS_BAD_DATA, "input operand %u does not exist", inputs[i]);
    op.ins[i] = inputs[i];
  }
  for (uint32_t i = 0; i < outputCount; i++) {
    if (outputs[i] >= model->num_operands)
      REJECT(ANEURALNETWORKS_BAD_DATA, "output operand %u does not exist", outputs[i]);
    if (model->operands[outputs[i]].kind == NN_CONST)
      REJECT(ANEURALNETWORKS_BAD_DATA, "output operand %u has a value", outputs[i]);
    op.outs[i] = outputs[i];
  }
  char msg[300] = "";
  nn_ctx c = {model, &op, level(), NN_CHECK_TYPES, NULL, msg, sizeof msg};
  int status = nn_operation_phase(&c);
  if (status != ANEURALNETWORKS_NO_ERROR) return reject(status, __func__, "%s", msg);
  if (model->num_ops == model->cap_ops) {
    uint32_t cap = model->cap_ops ? 2 * model->cap_ops : 32;
    nn_operation *grown = realloc(model->ops, cap * sizeof *grown);
    if (grown == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
    model->ops = grown;
    model->cap_ops = cap;
  }
  model->ops[model->num_ops++] = op;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *model,
                                                         uint32_t inputCount,
                                                         const uint32_t *inputs,
                                                         uint32_t outputCount,
                                                         const uint32_t *outputs) {
  ENTER(27);
  if (model == NULL || (inputCount && inputs == NULL) || (outputCount && outputs == NULL))
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  if (outputCount == 0) REJECT(ANEURALNETWORKS_BAD_DATA, "a model without outputs");
  uint32_t *in = malloc((inputCount + 1) * sizeof *in), *out = malloc(outputCount * sizeof *out);
  if (in == NULL || out == NULL) {
    free(in);
    free(out);
    return ANEURALNETWORKS_OUT_OF_MEMORY;
  }
  for (uint32_t k = 0; k < inputCount + outputCount; k++) {
    uint32_t i = k < inputCount ? inputs[k] : outputs[k - inputCount];
    if (i >= model->num_operands || model->operands[i].kind != NN_TEMP) {
      free(in);
      free(out);
      REJECT(ANEURALNETWORKS_BAD_DATA,
             "operand %u cannot be a model %s (missing, a constant or "
             "listed twice)",
             i, k < inputCount ? "input" : "output");
    }
    model->operands[i].kind = k < inputCount ? NN_INPUT : NN_OUTPUT;
    if (k < inputCount)
      in[k] = i;
    else
      out[k - inputCount] = i;
  }
  free(model->inputs);
  free(model->outputs);
  model->inputs = in;
  model->outputs = out;
  model->num_inputs = inputCount;
  model->num_outputs = outputCount;
  model->identified = true;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *model,
                                                                 bool allow) {
  ENTER(28);
  if (model == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "model is NULL");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is finished");
  model->relaxed = allow; /* allowed, not required: the test runtime computes in float32 */
  return ANEURALNETWORKS_NO_ERROR;
}

/* Orders the operations so that each runs after the producers of its inputs;
 * checks every operand is defined once and every output produced. */
static int order_operations(ANeuralNetworksModel *m, char *msg, size_t size) {
  uint32_t n = m->num_ops;
  int32_t *producer = malloc((m->num_operands + 1) * sizeof *producer);
  uint32_t *pending = calloc(n + 1, sizeof *pending);
  m->order = malloc((n + 1) * sizeof *m->order);
  bool *done = calloc(n + 1, sizeof *done);
  int status = ANEURALNETWORKS_NO_ERROR;
  if (producer == NULL || pending == NULL || m->order == NULL || done == NULL) {
    status = ANEURALNETWORKS_OUT_OF_MEMORY;
    goto out;
  }
  for (uint32_t i = 0; i < m->num_operands; i++) producer[i] = -1;
  for (uint32_t k = 0; k < n; k++)
    for (uint32_t j = 0; j < m->ops[k].nout; j++) {
      uint32_t o = m->ops[k].outs[j];
      if (producer[o] >= 0 || m->operands[o].kind == NN_INPUT) {
        snprintf(msg, size, "operand %u is written twice", o);
        status = ANEURALNETWORKS_BAD_DATA;
        goto out;
      }
      producer[o] = (int32_t)k;
    }
  for (uint32_t i = 0; i < m->num_operands; i++) {
    const nn_operand *o = &m->operands[i];
    if ((o->kind == NN_TEMP || o->kind == NN_OUTPUT) && producer[i] < 0) {
      bool used = o->kind == NN_OUTPUT;
      for (uint32_t k = 0; k < n && !used; k++)
        for (uint32_t j = 0; j < m->ops[k].nin; j++) used |= m->ops[k].ins[j] == i;
      if (used) {
        snprintf(msg, size, "operand %u is read but has no value, producer or model input", i);
        status = ANEURALNETWORKS_BAD_DATA;
        goto out;
      }
    }
  }
  /* repeatedly take an operation whose inputs are all available */
  for (uint32_t placed = 0; placed < n;) {
    bool progress = false;
    for (uint32_t k = 0; k < n; k++) {
      if (done[k]) continue;
      bool ready = true;
      for (uint32_t j = 0; j < m->ops[k].nin && ready; j++) {
        int32_t p = producer[m->ops[k].ins[j]];
        ready = p < 0 || done[p];
      }
      if (!ready) continue;
      done[k] = true;
      m->order[placed++] = k;
      progress = true;
    }
    if (!progress) {
      snprintf(msg, size, "the operations form a cycle");
      status = ANEURALNETWORKS_BAD_DATA;
      goto out;
    }
  }
out:
  free(producer);
  free(pending);
  free(done);
  return status;
}

EXPORT int ANeuralNetworksModel_finish(ANeuralNetworksModel *model) {
  ENTER(27);
  if (model == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "model is NULL");
  if (model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "finished twice");
  if (!model->identified) REJECT(ANEURALNETWORKS_BAD_DATA, "inputs and outputs not identified");
  for (uint32_t i = 0; i < model->num_operands; i++) {
    const nn_operand *o = &model->operands[i];
    if (o->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL && o->channel_scales == NULL)
      REJECT(ANEURALNETWORKS_BAD_DATA, "per-channel operand %u without channel parameters", i);
  }
  char msg[300] = "";
  int status = order_operations(model, msg, sizeof msg);
  if (status != ANEURALNETWORKS_NO_ERROR) return reject(status, __func__, "%s", msg);
  for (uint32_t k = 0; k < model->num_ops; k++) {
    nn_ctx c = {model,     &model->ops[model->order[k]], level(), NN_CHECK_SHAPES, NULL, msg,
                sizeof msg};
    status = nn_operation_phase(&c);
    if (status != ANEURALNETWORKS_NO_ERROR) return reject(status, __func__, "%s", msg);
  }
  model->finished = true;
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- devices */

struct ANeuralNetworksDevice {
  const char *name;
  int32_t type;
};
static const ANeuralNetworksDevice devices[2] = {{"wick-test-cpu", ANEURALNETWORKS_DEVICE_CPU},
                                                 {"wick-test-npu",
                                                  ANEURALNETWORKS_DEVICE_ACCELERATOR}};

EXPORT int ANeuralNetworks_getDeviceCount(uint32_t *numDevices) {
  ENTER(29);
  if (numDevices == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "numDevices is NULL");
  *numDevices = 2;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice **device) {
  ENTER(29);
  if (device == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "device is NULL");
  if (devIndex >= 2) REJECT(ANEURALNETWORKS_BAD_DATA, "device %u does not exist", devIndex);
  *device = (ANeuralNetworksDevice *)&devices[devIndex];
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *device, const char **name) {
  ENTER(29);
  if (device == NULL || name == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *name = device->name;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *device, int32_t *type) {
  ENTER(29);
  if (device == NULL || type == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *type = device->type;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *device,
                                                 int64_t *featureLevel) {
  ENTER(29);
  if (device == NULL || featureLevel == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *featureLevel = level();
  return ANEURALNETWORKS_NO_ERROR;
}

/* The runtime's level. A real runtime has this function from level 31 on;
 * the test runtime exports it at every level (it cannot hide a symbol), and
 * answers the configured level. */
EXPORT int64_t ANeuralNetworks_getRuntimeFeatureLevel(void) { return level(); }

/* ---------------------------------------------------------------- compilation */

struct ANeuralNetworksCompilation {
  ANeuralNetworksModel *model;
  bool finished;
  int32_t preference;
  const ANeuralNetworksDevice *device;
  int executions; /* live executions */
};

static int compilation_new(ANeuralNetworksModel *model, const ANeuralNetworksDevice *device,
                           ANeuralNetworksCompilation **compilation) {
  ANeuralNetworksCompilation *c = calloc(1, sizeof *c);
  if (c == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
  c->model = model;
  c->preference = ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER;
  c->device = device;
  model->compilations++;
  *compilation = c;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksCompilation_create(ANeuralNetworksModel *model,
                                             ANeuralNetworksCompilation **compilation) {
  ENTER(27);
  if (model == NULL || compilation == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *compilation = NULL;
  if (!model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is not finished");
  return compilation_new(model, NULL, compilation);
}

EXPORT int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *model,
                                                       const ANeuralNetworksDevice *const *devs,
                                                       uint32_t numDevices,
                                                       ANeuralNetworksCompilation **compilation) {
  ENTER(29);
  if (model == NULL || devs == NULL || compilation == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *compilation = NULL;
  if (!model->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the model is not finished");
  if (numDevices == 0) REJECT(ANEURALNETWORKS_BAD_DATA, "no devices");
  for (uint32_t i = 0; i < numDevices; i++)
    if (devs[i] != &devices[0] && devs[i] != &devices[1])
      REJECT(ANEURALNETWORKS_BAD_DATA, "device %u is not one of this runtime's", i);
  return compilation_new(model, devs[0], compilation);
}

EXPORT void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *compilation) {
  if (compilation == NULL) return;
  if (compilation->executions > 0)
    reject(ANEURALNETWORKS_BAD_STATE, __func__, "freed while %d execution(s) use it",
           compilation->executions);
  compilation->model->compilations--;
  free(compilation);
}

EXPORT int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *compilation,
                                                    int32_t preference) {
  ENTER(27);
  if (compilation == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "compilation is NULL");
  if (compilation->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the compilation is finished");
  if (preference < ANEURALNETWORKS_PREFER_LOW_POWER ||
      preference > ANEURALNETWORKS_PREFER_SUSTAINED_SPEED)
    REJECT(ANEURALNETWORKS_BAD_DATA, "preference %d", (int)preference);
  compilation->preference = preference;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation *compilation,
                                                 const char *cacheDir, const uint8_t *token) {
  ENTER(29);
  if (compilation == NULL || cacheDir == NULL || token == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (compilation->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the compilation is finished");
  pthread_mutex_lock(&lock); /* the test runtime caches nothing; tests read the token */
  cache_calls++;
  memcpy(cache_token, token, sizeof cache_token);
  pthread_mutex_unlock(&lock);
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *compilation) {
  ENTER(27);
  if (compilation == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "compilation is NULL");
  if (compilation->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "finished twice");
  compilation->finished = true;
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- execution */

struct ANeuralNetworksExecution {
  ANeuralNetworksCompilation *compilation;
  const void **inputs;
  void **outputs;
  bool started;
};

struct ANeuralNetworksEvent {
  int status;
};

EXPORT int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *compilation,
                                           ANeuralNetworksExecution **execution) {
  ENTER(27);
  if (compilation == NULL || execution == NULL)
    REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *execution = NULL;
  if (!compilation->finished) REJECT(ANEURALNETWORKS_BAD_STATE, "the compilation is not finished");
  ANeuralNetworksExecution *e = calloc(1, sizeof *e);
  const ANeuralNetworksModel *m = compilation->model;
  if (e == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
  e->inputs = calloc(m->num_inputs + 1, sizeof *e->inputs);
  e->outputs = calloc(m->num_outputs + 1, sizeof *e->outputs);
  if (e->inputs == NULL || e->outputs == NULL) {
    free(e->inputs);
    free(e->outputs);
    free(e);
    return ANEURALNETWORKS_OUT_OF_MEMORY;
  }
  e->compilation = compilation;
  compilation->executions++;
  *execution = e;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT void ANeuralNetworksExecution_free(ANeuralNetworksExecution *execution) {
  if (execution == NULL) return;
  execution->compilation->executions--;
  free(execution->inputs);
  free(execution->outputs);
  free(execution);
}

/* The operand type given with setInput/setOutput must match the model's. */
static bool same_type(const nn_operand *o, const ANeuralNetworksOperandType *t) {
  if (t == NULL) return true;
  if (t->type != o->type || t->dimensionCount != o->rank || t->scale != o->scale ||
      t->zeroPoint != o->zp)
    return false;
  for (uint32_t d = 0; d < o->rank; d++)
    if (t->dimensions[d] != o->dims[d]) return false;
  return true;
}

EXPORT int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *execution, int32_t index,
                                             const ANeuralNetworksOperandType *type,
                                             const void *buffer, size_t length) {
  ENTER(27);
  if (execution == NULL || buffer == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (execution->started) REJECT(ANEURALNETWORKS_BAD_STATE, "the execution has started");
  const ANeuralNetworksModel *m = execution->compilation->model;
  if (index < 0 || (uint32_t)index >= m->num_inputs)
    REJECT(ANEURALNETWORKS_BAD_DATA, "input %d does not exist", (int)index);
  const nn_operand *o = &m->operands[m->inputs[index]];
  if (!same_type(o, type)) REJECT(ANEURALNETWORKS_BAD_DATA, "input %d: another type", (int)index);
  if (length != nn_operand_bytes(o))
    REJECT(ANEURALNETWORKS_BAD_DATA, "input %d: %zu bytes for %zu", (int)index, length,
           nn_operand_bytes(o));
  execution->inputs[index] = buffer;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *execution, int32_t index,
                                              const ANeuralNetworksOperandType *type, void *buffer,
                                              size_t length) {
  ENTER(27);
  if (execution == NULL || buffer == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  if (execution->started) REJECT(ANEURALNETWORKS_BAD_STATE, "the execution has started");
  const ANeuralNetworksModel *m = execution->compilation->model;
  if (index < 0 || (uint32_t)index >= m->num_outputs)
    REJECT(ANEURALNETWORKS_BAD_DATA, "output %d does not exist", (int)index);
  const nn_operand *o = &m->operands[m->outputs[index]];
  if (!same_type(o, type)) REJECT(ANEURALNETWORKS_BAD_DATA, "output %d: another type", (int)index);
  if (length < nn_operand_bytes(o))
    REJECT(ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE, "output %d: %zu bytes for %zu", (int)index,
           length, nn_operand_bytes(o));
  execution->outputs[index] = buffer;
  return ANEURALNETWORKS_NO_ERROR;
}

/* Runs the model: temporaries in fresh buffers, every operation in order. */
static int run(ANeuralNetworksExecution *e, const char *fn) {
  const ANeuralNetworksModel *m = e->compilation->model;
  if (e->started) return reject(ANEURALNETWORKS_BAD_STATE, fn, "an execution computes once");
  for (uint32_t i = 0; i < m->num_inputs; i++)
    if (e->inputs[i] == NULL) return reject(ANEURALNETWORKS_BAD_DATA, fn, "input %u not set", i);
  for (uint32_t i = 0; i < m->num_outputs; i++)
    if (e->outputs[i] == NULL) return reject(ANEURALNETWORKS_BAD_DATA, fn, "output %u not set", i);
  e->started = true;
  char msg[300] = "";
  int status = nn_execute(m, e->inputs, e->outputs, level(), msg, sizeof msg);
  if (status != ANEURALNETWORKS_NO_ERROR && status != ANEURALNETWORKS_OUT_OF_MEMORY)
    reject(status, fn, "%s", msg);
  pthread_mutex_lock(&lock);
  executions++;
  pthread_mutex_unlock(&lock);
  return status;
}

int nn_execute(const ANeuralNetworksModel *m, const void *const *inputs, void *const *outputs,
               int64_t at_level, char *msg, size_t msg_size) {
  void **buf = calloc(m->num_operands + 1, sizeof *buf);
  void **temps = calloc(m->num_operands + 1, sizeof *temps);
  int status = ANEURALNETWORKS_NO_ERROR;
  if (buf == NULL || temps == NULL) {
    status = ANEURALNETWORKS_OUT_OF_MEMORY;
    goto out;
  }
  for (uint32_t i = 0; i < m->num_operands; i++) {
    const nn_operand *o = &m->operands[i];
    if (o->kind == NN_CONST) {
      buf[i] = (void *)o->value;
    } else if (o->kind == NN_TEMP) {
      temps[i] = calloc(1, nn_operand_bytes(o) + 1);
      if (temps[i] == NULL) {
        status = ANEURALNETWORKS_OUT_OF_MEMORY;
        goto out;
      }
      buf[i] = temps[i];
    }
  }
  for (uint32_t i = 0; i < m->num_inputs; i++) buf[m->inputs[i]] = (void *)inputs[i];
  for (uint32_t i = 0; i < m->num_outputs; i++) buf[m->outputs[i]] = outputs[i];
  for (uint32_t k = 0; k < m->num_ops && status == ANEURALNETWORKS_NO_ERROR; k++) {
    nn_ctx c = {m, &m->ops[m->order[k]], at_level, NN_RUN, buf, msg, msg_size};
    status = nn_operation_phase(&c);
  }
out:
  for (uint32_t i = 0; temps != NULL && i < m->num_operands; i++) free(temps[i]);
  free(temps);
  free(buf);
  return status;
}

EXPORT int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *execution) {
  ENTER(29);
  if (execution == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "execution is NULL");
  return run(execution, __func__);
}

EXPORT int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *execution,
                                                 ANeuralNetworksEvent **event) {
  ENTER(27);
  if (execution == NULL || event == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "NULL argument");
  *event = NULL;
  ANeuralNetworksEvent *ev = calloc(1, sizeof *ev);
  if (ev == NULL) return ANEURALNETWORKS_OUT_OF_MEMORY;
  ev->status = run(execution, __func__); /* computed now; the event reports it */
  *event = ev;
  return ANEURALNETWORKS_NO_ERROR;
}

EXPORT int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event) {
  ENTER(27);
  if (event == NULL) REJECT(ANEURALNETWORKS_UNEXPECTED_NULL, "event is NULL");
  return event->status;
}

EXPORT void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event) { free(event); }
