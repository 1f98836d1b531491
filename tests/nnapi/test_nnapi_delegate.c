/*
 * test_nnapi_delegate.c — runs models through wick's NNAPI delegate against
 * the test NNAPI implementation (libwick_test_nnapi.so, this folder) and
 * compares every output with a CPU-only run of the same inputs.
 *
 * Models: every .tflite of $WICK_SHARED_MODELS and, when the real-file corpus
 * is built, Keras' MobileNetV2 fp32 and int8 (~/.cache/wick/corpus/keras).
 * For each model, at feature levels 27, 28, 29, 30, 31 and 1000008:
 *   - outputs equal the CPU-only run within 1e-5 * max(1, |ref|) for float
 *     outputs (the test runtime sums in its own order) and bit for bit for
 *     integer outputs (its integer arithmetic is TFLite's);
 *   - no partition failed: what the delegate accepted, the runtime took (the
 *     test runtime counts every call it rejected and every call of a function
 *     the level lacks: both must stay 0);
 *   - every operator not on the delegate has a reason;
 *   - Keras MobileNetV2 fp32 runs as one partition at every level (27: its
 *     MEAN as AVERAGE_POOL_2D), the uint8 MobileNetV2 of the shared models
 *     as one partition from 27.
 * Planning: plan_level=N with a library path that does not exist takes
 * exactly the operators, in the same partitions, that the delegate took from
 * the level-N test runtime; everything runs on the CPU (bit-identical), and the
 * report says "planned only: would run on NNAPI ..." for them.
 * Fallback: with no NNAPI library, and with each NNAPI function failing on
 * every call (WICK_TEST_NNAPI_FAIL), outputs are bit-identical to CPU-only
 * and nothing runs on the delegate; with each failing once, the first
 * partition built falls back and the outputs stay within the tolerance.
 * A model the CPU cannot run is reported and skipped (not a failure).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wick/wick.h"

static int failures;
/* $WICK_TEST_FAST, or a cross build run under an emulator: levels 27 and 30 only, no corpus
 * files, the fallback runs on the smallest models only. */
static bool fast;

#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) {                  \
      failures++;                   \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");                 \
    }                               \
  } while (0)

static long (*rejections)(void), (*misuses)(void), (*executions)(void);
static const char *(*last_error)(void);
static void (*reset_counters)(void);

typedef struct outputs {
  size_t count;
  void *data[16];
  size_t size[16];
  wick_dtype type[16];
} outputs;

static void free_outputs(outputs *o) {
  for (size_t i = 0; i < o->count; i++) free(o->data[i]);
  memset(o, 0, sizeof *o);
}

static uint32_t rng = 12345;
static uint32_t next_random(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

/* Fills input i with values from a fixed sequence (restart rng for the same values). */
static void fill_inputs(wick_interpreter *it) {
  rng = 12345;
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    void *p = wick_tensor_mutable_data(t);
    size_t n = wick_tensor_byte_size(t), es = wick_dtype_size(wick_tensor_dtype(t));
    if (p == NULL || es == 0) continue;
    for (size_t k = 0; k < n / es; k++) {
      switch (wick_tensor_dtype(t)) {
        case WICK_DTYPE_FLOAT32:
          ((float *)p)[k] = (float)(next_random() % 2001) / 1000.0f - 1;
          break;
        case WICK_DTYPE_INT32: ((int32_t *)p)[k] = (int32_t)(next_random() % 4); break;
        case WICK_DTYPE_INT64: ((int64_t *)p)[k] = (int64_t)(next_random() % 4); break;
        case WICK_DTYPE_BOOL: ((uint8_t *)p)[k] = (uint8_t)(next_random() & 1); break;
        default: memset((char *)p + k * es, (int)(next_random() & 0xff), es); break;
      }
    }
  }
}

/* Runs `model` with `delegate` (NULL: CPU only); outputs copied to *out. */
static wick_status run(const wick_model *model, wick_delegate *delegate, outputs *out,
                       wick_interpreter **keep, char *why, size_t why_size) {
  wick_interpreter_options o = wick_interpreter_options_default();
  wick_delegate *list[1] = {delegate};
  if (delegate) {
    o.delegates = list;
    o.num_delegates = 1;
  }
  o.num_threads = 1;
  wick_error_info err;
  wick_interpreter *it = NULL;
  wick_status s = wick_interpreter_create(model, NULL, &o, &err, &it);
  if (s != WICK_OK) {
    snprintf(why, why_size, "%s", err.message);
    return s;
  }
  fill_inputs(it);
  for (int k = 0; k < 2 && s == WICK_OK; k++) s = wick_interpreter_invoke(it); /* twice: reuse */
  if (s != WICK_OK) {
    snprintf(why, why_size, "%s", wick_interpreter_last_error(it));
    wick_interpreter_destroy(it);
    return s;
  }
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < wick_interpreter_output_count(it) && i < 16; i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    out->size[i] = wick_tensor_byte_size(t);
    out->type[i] = wick_tensor_dtype(t);
    out->data[i] = malloc(out->size[i] + 1);
    memcpy(out->data[i], wick_tensor_data(t), out->size[i]);
    out->count++;
  }
  if (keep)
    *keep = it;
  else
    wick_interpreter_destroy(it);
  return WICK_OK;
}

/* 0 when equal (bit for bit, or within the float tolerance when `tolerant`). */
static int compare(const outputs *ref, const outputs *got, bool tolerant, char *why, size_t n) {
  if (ref->count != got->count) return snprintf(why, n, "output counts differ"), 1;
  for (size_t i = 0; i < ref->count; i++) {
    if (ref->size[i] != got->size[i]) return snprintf(why, n, "output %zu sizes differ", i), 1;
    if (!tolerant || ref->type[i] != WICK_DTYPE_FLOAT32) {
      if (memcmp(ref->data[i], got->data[i], ref->size[i]) != 0)
        return snprintf(why, n, "output %zu differs (bit-exact expected)", i), 1;
      continue;
    }
    const float *a = ref->data[i], *b = got->data[i];
    for (size_t k = 0; k < ref->size[i] / 4; k++) {
      double tol = 1e-5 * fmax(1.0, fabs((double)a[k]));
      if (!(fabs((double)a[k] - (double)b[k]) <= tol) && !(isnan(a[k]) && isnan(b[k])))
        return snprintf(why, n, "output %zu[%zu]: %.9g vs CPU %.9g (tolerance %.3g)", i, k,
                        (double)b[k], (double)a[k], tol),
               1;
    }
  }
  return 0;
}

static wick_delegate *make_nnapi(const char *library, const char *extra) {
  char config[400];
  snprintf(config, sizeof config, "library=%s%s%s", library, extra ? ";" : "", extra ? extra : "");
  wick_error_info err;
  wick_delegate *d = NULL;
  if (wick_delegate_create("nnapi", config, &err, &d) != WICK_OK) {
    CHECK(0, "wick_delegate_create(nnapi, %s): %s", config, err.message);
    return NULL;
  }
  return d;
}

/* Planning at `level` (plan_level, library path that does not exist: nothing is
 * opened) must take exactly what the delegate took against the test runtime of
 * that level (interpreter `real`), in the same partitions, with everything
 * running on the CPU: outputs bit-identical to CPU-only (`ref`). */
static void check_plan(const wick_model *model, const wick_interpreter *real, const char *level,
                       const char *name, const outputs *ref) {
  char extra[64];
  snprintf(extra, sizeof extra, "plan_level=%s", level);
  wick_delegate *d = make_nnapi("/nonexistent/libneuralnetworks.so", extra);
  if (d == NULL) return;
  CHECK(d->plans_only == 1, "a planning delegate says plans_only");
  CHECK(wick_nnapi_delegate_feature_level(d) == atol(level) &&
            !*wick_nnapi_delegate_unavailable_reason(d),
        "plan at %s: level %lld, unavailable \"%s\"", level,
        (long long)wick_nnapi_delegate_feature_level(d), wick_nnapi_delegate_unavailable_reason(d));
  outputs got;
  wick_interpreter *it = NULL;
  char why[512];
  if (run(model, d, &got, &it, why, sizeof why) != WICK_OK) {
    CHECK(0, "%s planned at %s: %s", name, level, why);
    wick_delegate_destroy(d);
    return;
  }
  CHECK(!compare(ref, &got, false, why, sizeof why), "%s planned at %s: %s", name, level, why);
  CHECK(wick_interpreter_partition_count(it) == wick_interpreter_partition_count(real),
        "%s planned at %s: %zu partitions, the runtime made %zu", name, level,
        wick_interpreter_partition_count(it), wick_interpreter_partition_count(real));
  size_t planned = 0;
  for (size_t i = 0; i < wick_interpreter_op_count(it); i++) {
    const char *reason = wick_interpreter_op_delegation_reason(it, i);
    bool taken = wick_interpreter_op_delegate(real, i) != NULL;
    CHECK(wick_interpreter_op_delegate(it, i) == NULL, "%s planned: operator %zu ran on NNAPI",
          name, i);
    CHECK(wick_interpreter_op_partition(it, i) == wick_interpreter_op_partition(real, i),
          "%s planned at %s: operator %zu (%s) in partition %d, the runtime's %d", name, level, i,
          wick_interpreter_op_name(it, i), wick_interpreter_op_partition(it, i),
          wick_interpreter_op_partition(real, i));
    if (taken) {
      planned++;
      CHECK(strncmp(reason, "nnapi: planned only: would run on NNAPI at feature level ", 57) == 0,
            "%s planned at %s: operator %zu: \"%s\"", name, level, i, reason);
    } else {
      CHECK(*reason && !strstr(reason, "failed") && !strstr(reason, "planned only"),
            "%s planned at %s: declined operator %zu: \"%s\"", name, level, i, reason);
    }
  }
  printf("%-44s level %-7s planned: %zu operators would run on nnapi\n", name, level, planned);
  wick_interpreter_destroy(it);
  wick_delegate_destroy(d);
  free_outputs(&got);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static void test_model(const char *path) {
  const char *name = base_name(path);
  wick_error_info err;
  wick_model *model = NULL;
  if (wick_model_load_file(path, NULL, &err, &model) != WICK_OK) {
    printf("skip %s: wick cannot load it (%s)\n", name, err.message);
    return;
  }
  outputs ref;
  char why[512];
  if (run(model, NULL, &ref, NULL, why, sizeof why) != WICK_OK) {
    printf("skip %s: the CPU does not run it (%s)\n", name, why);
    wick_model_destroy(model);
    return;
  }
  static const long all_levels[] = {27, 28, 29, 30, 31, 1000008}, fast_levels[] = {27, 30};
  const long *levels = fast ? fast_levels : all_levels;
  size_t num_levels = fast ? 2 : 6;
  for (size_t l = 0; l < num_levels; l++) {
    char level[16];
    snprintf(level, sizeof level, "%ld", levels[l]);
    setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", level, 1);
    reset_counters();
    wick_delegate *d = make_nnapi(WICK_TEST_NNAPI_LIBRARY, NULL);
    if (d == NULL) continue;
    CHECK(wick_nnapi_delegate_feature_level(d) == levels[l], "%s: the delegate reads level %lld",
          level, (long long)wick_nnapi_delegate_feature_level(d));
    outputs got;
    wick_interpreter *it = NULL;
    if (run(model, d, &got, &it, why, sizeof why) != WICK_OK) {
      CHECK(0, "%s at level %s: %s", name, level, why);
      wick_delegate_destroy(d);
      continue;
    }
    size_t ops = wick_interpreter_op_count(it), on = 0;
    for (size_t i = 0; i < ops; i++) {
      const char *reason = wick_interpreter_op_delegation_reason(it, i);
      if (wick_interpreter_op_delegate(it, i) != NULL) {
        on++;
        continue;
      }
      CHECK(reason && *reason, "%s level %s: operator %zu on the CPU without a reason", name, level,
            i);
      CHECK(!strstr(reason, "failed"), "%s level %s: operator %zu (%s): %s", name, level, i,
            wick_interpreter_op_name(it, i), reason);
    }
    size_t parts = wick_interpreter_partition_count(it);
    CHECK(rejections() == 0 && misuses() == 0,
          "%s level %s: the test runtime rejected %ld call(s), %ld misuse(s): %s", name, level,
          rejections(), misuses(), last_error());
    CHECK(on == 0 || executions() > 0, "%s level %s: nothing computed", name, level);
    int bad = compare(&ref, &got, true, why, sizeof why);
    CHECK(!bad, "%s level %s: %s", name, level, why);
    printf("%-44s level %-7s %3zu of %3zu operators on nnapi, %zu partition%s%s\n", name, level, on,
           ops, parts, parts == 1 ? "" : "s", bad ? "  MISMATCH" : "");
    if (strcmp(name, "MobileNetV2_fp32.tflite") == 0)
      CHECK(on == ops && parts == 1, "MobileNetV2 fp32 at level %s: %zu of %zu ops, %zu partitions",
            level, on, ops, parts);
    if (strcmp(name, "mobilenet_v2_quantized_1x3x224x224.tflite") == 0 && on > 0)
      CHECK(parts == 1, "uint8 MobileNetV2 at level %s: %zu partitions", level, parts);
    check_plan(model, it, level, name, &ref);
    wick_interpreter_destroy(it);
    wick_delegate_destroy(d);
    free_outputs(&got);
  }
  unsetenv("WICK_TEST_NNAPI_FEATURE_LEVEL");
  free_outputs(&ref);
  wick_model_destroy(model);
}

/* No library, and every NNAPI function failing (always, then once). */
static void test_fallback(const char *path) {
  static const char *functions[] = {"ANeuralNetworksModel_create",
                                    "ANeuralNetworksModel_addOperand",
                                    "ANeuralNetworksModel_setOperandValue",
                                    "ANeuralNetworksModel_addOperation",
                                    "ANeuralNetworksModel_identifyInputsAndOutputs",
                                    "ANeuralNetworksModel_finish",
                                    "ANeuralNetworksCompilation_create",
                                    "ANeuralNetworksCompilation_setPreference",
                                    "ANeuralNetworksCompilation_finish",
                                    "ANeuralNetworksExecution_create",
                                    "ANeuralNetworksExecution_setInput",
                                    "ANeuralNetworksExecution_setOutput",
                                    "ANeuralNetworksExecution_compute",
                                    "ANeuralNetworksExecution_startCompute",
                                    "ANeuralNetworksEvent_wait",
                                    "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams"};
  wick_error_info err;
  wick_model *model = NULL;
  if (wick_model_load_file(path, NULL, &err, &model) != WICK_OK) return;
  outputs ref, got;
  char why[512];
  if (run(model, NULL, &ref, NULL, why, sizeof why) != WICK_OK) {
    wick_model_destroy(model);
    return;
  }
  const char *name = base_name(path);
  /* no NNAPI library at all */
  wick_delegate *d = make_nnapi("/nonexistent/libneuralnetworks.so", NULL);
  CHECK(d && wick_nnapi_delegate_feature_level(d) == 0, "an absent library gives a level");
  wick_interpreter *it = NULL;
  if (d && run(model, d, &got, &it, why, sizeof why) == WICK_OK) {
    CHECK(!compare(&ref, &got, false, why, sizeof why), "%s without NNAPI: %s", name, why);
    for (size_t i = 0; i < wick_interpreter_op_count(it); i++)
      CHECK(wick_interpreter_op_delegate(it, i) == NULL &&
                strstr(wick_interpreter_op_delegation_reason(it, i), "not available"),
            "%s without NNAPI: operator %zu: %s", name, i,
            wick_interpreter_op_delegation_reason(it, i));
    wick_interpreter_destroy(it);
    free_outputs(&got);
  }
  wick_delegate_destroy(d);
  /* each function failing: always (everything on the CPU, bit-identical), once */
  for (int level = 27; level <= 30; level += 3) {
    char lv[8];
    snprintf(lv, sizeof lv, "%d", level);
    setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", lv, 1);
    for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++) {
      for (int always = 1; always >= 0; always--) {
        char spec[128];
        snprintf(spec, sizeof spec, "%s:%s", functions[f], always ? "*" : "1");
        setenv("WICK_TEST_NNAPI_FAIL", spec, 1);
        d = make_nnapi(WICK_TEST_NNAPI_LIBRARY, NULL);
        it = NULL;
        if (d == NULL || run(model, d, &got, &it, why, sizeof why) != WICK_OK) {
          CHECK(0, "%s with %s failing (level %d): %s", name, spec, level, why);
          wick_delegate_destroy(d);
          continue;
        }
        size_t on = 0;
        for (size_t i = 0; i < wick_interpreter_op_count(it); i++)
          on += wick_interpreter_op_delegate(it, i) != NULL;
        /* a failure at invoke keeps the partition's place in the report but
         * runs it on the CPU: bit-identical either way when every call fails */
        int bad = compare(&ref, &got, !always, why, sizeof why);
        CHECK(!bad, "%s with %s failing (level %d): %s", name, spec, level, why);
        wick_interpreter_destroy(it);
        wick_delegate_destroy(d);
        free_outputs(&got);
      }
    }
  }
  unsetenv("WICK_TEST_NNAPI_FAIL");
  unsetenv("WICK_TEST_NNAPI_FEATURE_LEVEL");
  printf("%-44s fallback: no library and %zu functions failing: ok\n", name,
         sizeof functions / sizeof functions[0]);
  free_outputs(&ref);
  wick_model_destroy(model);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(void) {
  void *lib = dlopen(WICK_TEST_NNAPI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("FAIL: cannot open the test NNAPI library %s: %s\n", WICK_TEST_NNAPI_LIBRARY, dlerror());
    return 1;
  }
  void *p;
#define SYM(var, name)             \
  p = dlsym(lib, name);            \
  memcpy(&var, &p, sizeof p);      \
  if (var == NULL) {               \
    printf("FAIL: no %s\n", name); \
    return 1;                      \
  }
  SYM(rejections, "wick_test_nnapi_rejections");
  SYM(misuses, "wick_test_nnapi_misuses");
  SYM(executions, "wick_test_nnapi_executions");
  SYM(last_error, "wick_test_nnapi_last_error");
  SYM(reset_counters, "wick_test_nnapi_reset_counters");
  unsetenv("WICK_TEST_NNAPI_FAIL");
  unsetenv("WICK_NNAPI_LIBRARY");
#ifdef WICK_TEST_NNAPI_FAST
  fast = true;
#endif
  if (getenv("WICK_TEST_FAST") && strcmp(getenv("WICK_TEST_FAST"), "1") == 0) fast = true;
  if (fast) printf("fast mode: levels 27 and 30, no corpus files\n");

  char *paths[256];
  size_t n = 0;
  const char *shared = getenv("WICK_SHARED_MODELS");
  DIR *dir = shared ? opendir(shared) : NULL;
  if (dir == NULL)
    printf("note: no shared models directory ($WICK_SHARED_MODELS=%s)\n",
           shared ? shared : "unset");
  for (struct dirent *e; dir && (e = readdir(dir)) != NULL && n < 250;) {
    size_t len = strlen(e->d_name);
    if (len < 7 || strcmp(e->d_name + len - 7, ".tflite") != 0) continue;
    paths[n] = malloc(strlen(shared) + len + 2);
    sprintf(paths[n++], "%s/%s", shared, e->d_name);
  }
  if (dir) closedir(dir);
  qsort(paths, n, sizeof *paths, by_name);
  const char *home = getenv("HOME");
  static const char *corpus[] = {"MobileNetV2_fp32.tflite", "MobileNetV2_int8.tflite"};
  for (size_t k = 0; home && !fast && k < 2; k++) {
    char path[512];
    snprintf(path, sizeof path, "%s/.cache/wick/corpus/keras/%s", home, corpus[k]);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
      printf("skip %s: the corpus is not built (python -m tests.corpus)\n", corpus[k]);
      continue;
    }
    fclose(f);
    paths[n] = malloc(strlen(path) + 1);
    strcpy(paths[n++], path);
  }
  for (size_t i = 0; i < n; i++) test_model(paths[i]);
  for (size_t i = 0; i < n; i++)
    if (strstr(paths[i], "conv8") || strstr(paths[i], "hello_world") ||
        (!fast && strstr(paths[i], "mobilenet_v2_quantized")))
      test_fallback(paths[i]);
  for (size_t i = 0; i < n; i++) free(paths[i]);
  printf("%s: %d failure%s\n", failures ? "FAILED" : "passed", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
