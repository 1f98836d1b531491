/*
 * main.c — the `wick` command-line tool: inspect, run and bench .tflite files,
 * and generate with LLM files (generate.c).
 *
 *   wick inspect m.tflite                    signatures, I/O, op histogram, memory, MACs
 *   wick run m.tflite [--input NAME=x.npy]… [--output-dir DIR]
 *   wick bench m.tflite [--threads N] [--runs N] [--warmup N] [--profile]
 *   wick generate llm.tflite --tokens 1,2,3 [--max-tokens N] [--temperature T] ...
 *
 * --memory-limit BYTES (every command) caps both the load
 * (wick_model_options.memory_limit_bytes) and the interpreter.
 * --weight-cache PATH (run, bench) keeps the packed weights in a file
 * (wick_interpreter_options.weight_cache_path) so later prepares skip packing.
 * --delegate NAME[:CONFIG] (every command, repeatable: priority order) hands
 * the operators a built-in delegate takes to it (wick_delegate_create; CONFIG
 * is its key=value;... settings); `inspect` then prints the partition plan
 * and, for each operator, where it runs and why. Delegate fallbacks are
 * logged to stderr.
 *
 * Exit status: 0 success, 1 model or runtime error, 2 usage error. Messages
 * go to stderr; results to stdout. (`wick convert` and `wick graph` are
 * provided by the Python package's `wick` command, which forwards the
 * commands here.)
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "generate.h"
#include "npy.h"
#include "wick/wick.h"

#define EXIT_MODEL 1
#define EXIT_USAGE 2

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long peak_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static void print_shape(FILE *f, const wick_tensor *t) {
  fputc('[', f);
  for (size_t d = 0; d < wick_tensor_rank(t); d++)
    fprintf(f, d ? ", %d" : "%d", wick_tensor_dim(t, d));
  fputc(']', f);
}

typedef struct common_args {
  const char *model;
  const char *signature;
  int threads;
  int reference;
  size_t memory_limit;      /* --memory-limit BYTES: caps the load and the interpreter (0: none) */
  const char *weight_cache; /* --weight-cache PATH: the packed-weight cache file (NULL: none) */
  const char *delegate_specs[WICK_MAX_DELEGATES]; /* --delegate NAME[:CONFIG], in order */
  size_t num_delegates;
  const char *nnapi_level; /* --nnapi-feature-level N: feature_level=N for --delegate nnapi */
} common_args;

/* The delegates of the running command: made by make_delegates, destroyed by main. */
static wick_delegate *delegates[WICK_MAX_DELEGATES];
static size_t num_delegates;

/* Delegate log lines worth a user's attention (fallbacks) go to stderr. */
static void log_to_stderr(void *user, wick_log_level level, const char *message) {
  (void)user;
  if (level >= WICK_LOG_WARNING) fprintf(stderr, "wick: %s\n", message);
}

/* Creates the delegates that --delegate named; prints the problem and returns nonzero. */
static int make_delegates(const common_args *c) {
  for (size_t i = 0; i < c->num_delegates; i++) {
    char name[64];
    const char *spec = c->delegate_specs[i], *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, spec, len);
    name[len] = 0;
    char config[512];
    snprintf(config, sizeof config, "%s", colon ? colon + 1 : "");
    if (c->nnapi_level != NULL && strcmp(name, "nnapi") == 0) {
      size_t at = strlen(config);
      snprintf(config + at, sizeof config - at, "%sfeature_level=%s", at ? ";" : "",
               c->nnapi_level);
    }
    wick_error_info err;
    wick_status st = wick_delegate_create(name, config, &err, &delegates[num_delegates]);
    if (st != WICK_OK) {
      fprintf(stderr, "wick: --delegate %s: %s\n", spec, err.message);
      return EXIT_USAGE;
    }
    if (strcmp(name, "nnapi") == 0) {
      const char *why = wick_nnapi_delegate_unavailable_reason(delegates[num_delegates]);
      if (*why)
        fprintf(stderr, "wick: nnapi: %s (everything runs on the CPU)\n", why);
      else
        fprintf(stderr, "wick: nnapi: feature level %lld%s\n",
                (long long)wick_nnapi_delegate_feature_level(delegates[num_delegates]),
                delegates[num_delegates]->plans_only
                    ? " (planning only: no NNAPI library, everything runs on the CPU)"
                    : "");
    }
    num_delegates++;
  }
  if (c->nnapi_level != NULL) {
    bool named = false;
    for (size_t i = 0; i < c->num_delegates; i++)
      named |= strncmp(c->delegate_specs[i], "nnapi", 5) == 0 &&
               (c->delegate_specs[i][5] == 0 || c->delegate_specs[i][5] == ':');
    if (!named) {
      fprintf(stderr, "wick: --nnapi-feature-level needs --delegate nnapi\n");
      return EXIT_USAGE;
    }
  }
  return 0;
}

/* Sets the interpreter options' delegate list from make_delegates. */
static void use_delegates(wick_interpreter_options *o) {
  o->delegates = delegates;
  o->num_delegates = num_delegates;
  if (num_delegates > 0) o->log = log_to_stderr;
}

/* Parses flags shared by all commands; returns 1 if argv[*i] was consumed. */
static int parse_common(int argc, char **argv, int *i, common_args *c) {
  if (strcmp(argv[*i], "--signature") == 0 && *i + 1 < argc) {
    c->signature = argv[++*i];
    return 1;
  }
  if (strcmp(argv[*i], "--threads") == 0 && *i + 1 < argc) {
    c->threads = atoi(argv[++*i]);
    return 1;
  }
  if (strcmp(argv[*i], "--reference") == 0) {
    c->reference = 1;
    return 1;
  }
  if (strcmp(argv[*i], "--memory-limit") == 0 && *i + 1 < argc) {
    c->memory_limit = (size_t)strtoull(argv[++*i], NULL, 10);
    return 1;
  }
  if (strcmp(argv[*i], "--weight-cache") == 0 && *i + 1 < argc) {
    c->weight_cache = argv[++*i];
    return 1;
  }
  if (strcmp(argv[*i], "--delegate") == 0 && *i + 1 < argc) {
    if (c->num_delegates == WICK_MAX_DELEGATES) {
      fprintf(stderr, "wick: at most %d --delegate flags\n", WICK_MAX_DELEGATES);
      exit(EXIT_USAGE);
    }
    c->delegate_specs[c->num_delegates++] = argv[++*i];
    return 1;
  }
  if (strcmp(argv[*i], "--nnapi-feature-level") == 0 && *i + 1 < argc) {
    c->nnapi_level = argv[++*i];
    return 1;
  }
  if (argv[*i][0] != '-' && c->model == NULL) {
    c->model = argv[*i];
    return 1;
  }
  return 0;
}

static int open_model(const common_args *c, wick_model **model, wick_interpreter **interp,
                      double *load_ms, double *prepare_ms) {
  wick_error_info err;
  double t0 = now_ms();
  if (make_delegates(c)) return EXIT_USAGE;
  wick_model_options mo = wick_model_options_default();
  mo.memory_limit_bytes = c->memory_limit;
  wick_status st = wick_model_load_file(c->model, &mo, &err, model);
  double t1 = now_ms();
  if (st != WICK_OK) {
    fprintf(stderr, "wick: %s: %s: %s\n", c->model, wick_status_string(st), err.message);
    return EXIT_MODEL;
  }
  wick_interpreter_options o = wick_interpreter_options_default();
  o.num_threads = c->threads != 0 ? c->threads : 1; /* -1: one per CPU */
  o.force_reference_kernels = c->reference;
  o.memory_limit_bytes = c->memory_limit;
  o.weight_cache_path = c->weight_cache;
  use_delegates(&o);
  st = wick_interpreter_create(*model, c->signature, &o, &err, interp);
  double t2 = now_ms();
  if (st != WICK_OK) {
    fprintf(stderr, "wick: %s: %s: %s\n", c->model, wick_status_string(st), err.message);
    wick_model_destroy(*model);
    *model = NULL;
    return EXIT_MODEL;
  }
  if (load_ms) *load_ms = t1 - t0;
  if (prepare_ms) *prepare_ms = t2 - t1;
  return 0;
}

/* Deterministic inputs: xorshift64*, floats uniform in [-1, 1), ints in [0, 4). */
static void fill_random(wick_tensor *t, uint64_t *state) {
  size_t n = wick_tensor_byte_size(t);
  wick_dtype dt = wick_tensor_dtype(t);
  size_t es = wick_dtype_size(dt);
  unsigned char *p = wick_tensor_mutable_data(t);
  if (p == NULL || es == 0) return;
  for (size_t i = 0; i < n / es; i++) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    uint64_t r = *state * 2685821657736338717ull;
    double u = (double)(r >> 11) / 9007199254740992.0;
    switch (dt) {
      case WICK_DTYPE_FLOAT32: ((float *)p)[i] = (float)(2.0 * u - 1.0); break;
      case WICK_DTYPE_FLOAT64: ((double *)p)[i] = 2.0 * u - 1.0; break;
      case WICK_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)(r % 4); break;
      case WICK_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)(r % 4); break;
      case WICK_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)(r & 0xff); break;
      case WICK_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)(r & 0xff); break;
      case WICK_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)(r & 0xffff); break;
      case WICK_DTYPE_BOOL: ((unsigned char *)p)[i] = (unsigned char)(r & 1); break;
      default: memset(p + i * es, 0, es); break;
    }
  }
}

/* ---------------------------------------------------------------- inspect */

/* Every subgraph's operator histogram as the file lists it, each kind marked when this
 * build has no kernel for it (and why). */
static void print_model_ops(const wick_model *model) {
  for (size_t sg = 0; sg < wick_model_subgraph_count(model); sg++) {
    size_t n = wick_model_op_count(model, sg);
    printf("operators    %zu (subgraph %zu, as the file lists them)\n", n, sg);
    for (size_t i = 0; i < n; i++) {
      const char *name = wick_model_op_name(model, sg, i);
      int version = wick_model_op_version(model, sg, i);
      size_t first = 0, count = 0;
      while (first < i && !(strcmp(wick_model_op_name(model, sg, first), name) == 0 &&
                            wick_model_op_version(model, sg, first) == version))
        first++;
      if (first < i) continue; /* counted at its first occurrence */
      for (size_t k = i; k < n; k++)
        if (strcmp(wick_model_op_name(model, sg, k), name) == 0 &&
            wick_model_op_version(model, sg, k) == version)
          count++;
      char why[200];
      if (wick_model_op_supported(model, sg, i, why, sizeof why))
        printf("  %-28s %zu\n", name, count);
      else
        printf("  %-28s %zu   UNSUPPORTED (v%d): %s\n", name, count, version, why);
    }
  }
}

/* One placement line of the report (row `r`), then the rows of the subgraphs it runs, indented
 * under it ("then: ADD"). first/count: each row's block of children (NULL: none listed). */
static void print_placement(const wick_interpreter *it, size_t r, int depth, const size_t *first,
                            const size_t *count) {
  wick_delegation_row row = {.struct_size = sizeof row};
  if (wick_interpreter_delegation_row(it, r, &row) != WICK_OK) return;
  char where[96], name[160];
  if (row.delegate)
    snprintf(where, sizeof where, "%s #%d", row.delegate, row.partition);
  else
    snprintf(where, sizeof where, "cpu");
  snprintf(name, sizeof name, "%*s%s%s%s", 2 * depth, "", row.role, row.role[0] ? ": " : "",
           row.op_name);
  printf("  %4zu  %-24s %-16s %s%s%s\n", r, name, where, row.reason, row.note[0] ? "note: " : "",
         row.note);
  if (first == NULL || count == NULL || depth >= 32) return;
  for (size_t k = 0; k < count[r]; k++) print_placement(it, first[r] + k, depth + 1, first, count);
}

/* The partition plan: each partition's operators, then every operator's place and reason
 * (and of the operators inside subgraphs, under the operator running them). */
static void print_delegation(const wick_interpreter *it) {
  size_t nops = wick_interpreter_op_count(it), parts = wick_interpreter_partition_count(it);
  size_t delegated = 0;
  for (size_t i = 0; i < nops; i++) delegated += wick_interpreter_op_delegate(it, i) != NULL;
  size_t rows = wick_interpreter_delegation_row_count(it), inner_on = 0;
  for (size_t r = nops; r < rows; r++) {
    wick_delegation_row row = {.struct_size = sizeof row};
    inner_on += wick_interpreter_delegation_row(it, r, &row) == WICK_OK && row.delegate != NULL;
  }
  printf("delegation   %zu of %zu operators on delegates, %zu partition%s", delegated, nops, parts,
         parts == 1 ? "" : "s");
  if (rows > nops) printf("; inside subgraphs, %zu of %zu", inner_on, rows - nops);
  printf("\n");
  for (size_t p = 0; p < parts; p++) {
    const char *on = NULL, *why = "";
    size_t count = 0;
    for (size_t i = 0; i < nops; i++)
      if (wick_interpreter_op_partition(it, i) == (int)p) {
        if (count++ == 0) {
          on = wick_interpreter_op_delegate(it, i);
          why = wick_interpreter_op_delegation_reason(it, i);
        }
      }
    printf("  partition %zu: %zu operator%s on %s%s%s\n   ", p, count, count == 1 ? "" : "s",
           on ? on : "the CPU", on ? "" : " — ", on ? "" : why);
    for (size_t i = 0; i < nops; i++)
      if (wick_interpreter_op_partition(it, i) == (int)p)
        printf(" %zu:%s", i, wick_interpreter_op_name(it, i));
    printf("\n");
  }
  printf("placement\n");
  /* the rows inside subgraphs: each parent's children are one block (wick.h) */
  size_t *first = calloc(rows ? rows : 1, sizeof *first),
         *count = calloc(rows ? rows : 1, sizeof *count);
  for (size_t r = nops; r < rows && first && count; r++) {
    wick_delegation_row row = {.struct_size = sizeof row};
    if (wick_interpreter_delegation_row(it, r, &row) != WICK_OK || row.parent < 0) continue;
    if (count[row.parent]++ == 0) first[row.parent] = r;
  }
  for (size_t i = 0; i < nops; i++) print_placement(it, i, 0, first, count);
  free(first);
  free(count);
}

static int cmd_inspect(int argc, char **argv) {
  common_args c = {0};
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf(
          "usage: wick inspect MODEL.tflite [--signature KEY] [--memory-limit BYTES]\n"
          "                    [--delegate NAME[:KEY=VALUE;...]]... [--nnapi-feature-level N]\n\n"
          "Prints the model's signatures, inputs and outputs, an operator histogram,\n"
          "memory (file, arena, persistent) and the multiply-accumulate count.\n"
          "--memory-limit caps what loading and the interpreter may each allocate.\n"
          "--delegate (repeatable, highest priority first) offers the operators to a\n"
          "built-in delegate and prints the partition plan: where each operator runs,\n"
          "and why not on a delegate. Delegates: reference (a test delegate) and nnapi\n"
          "(Android's Neural Networks API, opened at run time; settings feature_level=N,\n"
          "library=PATH, relaxed_fp16=0|1, preference=low_power|fast_single_answer|\n"
          "sustained_speed, device=NAME, ops=NAME,..., cache_dir=PATH).\n"
          "--nnapi-feature-level N uses only what NNAPI level N (27 = Android 8.1 ... 31,\n"
          "1000006 ...) has.\n");
      return 0;
    }
    if (!parse_common(argc, argv, &i, &c)) {
      fprintf(stderr, "wick inspect: unknown argument %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (!c.model) {
    fprintf(stderr, "wick inspect: missing MODEL.tflite (see --help)\n");
    return EXIT_USAGE;
  }
  if (make_delegates(&c)) return EXIT_USAGE;
  wick_model *model;
  wick_error_info err;
  wick_model_options mo = wick_model_options_default();
  mo.memory_limit_bytes = c.memory_limit;
  wick_status status = wick_model_load_file(c.model, &mo, &err, &model);
  if (status != WICK_OK) {
    fprintf(stderr, "wick: %s: %s: %s\n", c.model, wick_status_string(status), err.message);
    return EXIT_MODEL;
  }
  struct stat st;
  long long file_size = stat(c.model, &st) == 0 ? (long long)st.st_size : -1;
  printf("model        %s (%lld bytes)\n", c.model, file_size);
  const char *desc = wick_model_description(model);
  if (desc[0]) printf("description  %s\n", desc);
  printf("subgraphs    %zu\n", wick_model_subgraph_count(model));
  size_t ns = wick_model_signature_count(model);
  printf("signatures   %zu", ns);
  for (size_t i = 0; i < ns; i++)
    printf("%s%s", i ? ", " : "  (", wick_model_signature_key(model, i));
  printf("%s\n", ns ? ")" : "");
  wick_interpreter_options o = wick_interpreter_options_default();
  o.memory_limit_bytes = c.memory_limit;
  use_delegates(&o);
  wick_interpreter *it;
  status = wick_interpreter_create(model, c.signature, &o, &err, &it);
  if (status != WICK_OK) {
    /* Everything the file says still prints: the operator list is what a user needs most
     * when an operator stops the interpreter. */
    print_model_ops(model);
    fprintf(stderr, "wick: %s: %s: %s\n", c.model, wick_status_string(status), err.message);
    wick_model_destroy(model);
    return EXIT_MODEL;
  }
  printf("inputs\n");
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    const wick_tensor *t = wick_interpreter_input(it, i);
    float scale;
    int64_t zp;
    printf("  %-28s %-8s ", wick_tensor_name(t), wick_dtype_name(wick_tensor_dtype(t)));
    print_shape(stdout, t);
    if (wick_tensor_quantization(t, &scale, &zp))
      printf("  scale=%g zero_point=%lld", scale, (long long)zp);
    printf("\n");
  }
  printf("outputs\n");
  for (size_t i = 0; i < wick_interpreter_output_count(it); i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    printf("  %-28s %-8s ", wick_tensor_name(t), wick_dtype_name(wick_tensor_dtype(t)));
    print_shape(stdout, t);
    printf("\n");
  }
  size_t nops = wick_interpreter_op_count(it);
  const char *names[256];
  int counts[256];
  size_t distinct = 0;
  uint64_t macs = 0;
  for (size_t i = 0; i < nops; i++) {
    const char *name = wick_interpreter_op_name(it, i);
    macs += wick_interpreter_op_macs(it, i);
    size_t k = 0;
    while (k < distinct && strcmp(names[k], name) != 0) k++;
    if (k == distinct && distinct < 256) {
      names[distinct] = name;
      counts[distinct++] = 0;
    }
    if (k < 256) counts[k]++;
  }
  printf("operators    %zu\n", nops);
  for (size_t k = 0; k < distinct; k++) printf("  %-28s %d\n", names[k], counts[k]);
  printf("arena        %zu bytes\n", wick_interpreter_arena_bytes(it));
  printf("persistent   %zu bytes\n", wick_interpreter_persistent_bytes(it));
  printf("MACs         %llu (%.1f M)\n", (unsigned long long)macs, (double)macs / 1e6);
  if (num_delegates > 0) print_delegation(it);
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  return 0;
}

/* ---------------------------------------------------------------- run */

static void safe_name(const char *in, char *out, size_t size) {
  size_t j = 0;
  for (size_t i = 0; in[i] && j + 1 < size; i++) {
    char ch = in[i];
    out[j++] = (ch == '/' || ch == ':' || ch == ' ' || ch == '\\') ? '_' : ch;
  }
  out[j] = 0;
  if (j == 0) snprintf(out, size, "output");
}

static int set_input_from_npy(wick_interpreter *it, const char *spec) {
  const char *eq = strchr(spec, '=');
  char name[256];
  const char *path = spec;
  int index = 0;
  if (eq) {
    size_t len = (size_t)(eq - spec);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, spec, len);
    name[len] = 0;
    path = eq + 1;
    index = wick_interpreter_input_index(it, name);
    if (index < 0) {
      char *end;
      long v = strtol(name, &end, 10);
      if (*end == 0) index = (int)v;
    }
    if (index < 0 || (size_t)index >= wick_interpreter_input_count(it)) {
      fprintf(stderr, "wick run: the model has no input named %s\n", name);
      return EXIT_USAGE;
    }
  }
  npy_array a;
  char err[512];
  if (npy_read(path, &a, err, sizeof err) != 0) {
    fprintf(stderr, "wick run: %s\n", err);
    return EXIT_USAGE;
  }
  wick_tensor *t = wick_interpreter_input(it, (size_t)index);
  if (a.dtype != wick_tensor_dtype(t)) {
    fprintf(stderr, "wick run: %s is %s but input %s is %s\n", path, wick_dtype_name(a.dtype),
            wick_tensor_name(t), wick_dtype_name(wick_tensor_dtype(t)));
    npy_free(&a);
    return EXIT_USAGE;
  }
  int same = (size_t)a.rank == wick_tensor_rank(t);
  for (int d = 0; same && d < a.rank; d++) same = a.dims[d] == wick_tensor_dim(t, (size_t)d);
  if (!same) {
    int32_t dims[WICK_MAX_RANK];
    for (int d = 0; d < a.rank; d++) dims[d] = (int32_t)a.dims[d];
    wick_status st = wick_interpreter_resize_input(it, (size_t)index, dims, (size_t)a.rank);
    if (st != WICK_OK) {
      fprintf(stderr, "wick run: cannot use %s for input %s: %s\n", path, wick_tensor_name(t),
              wick_interpreter_last_error(it));
      npy_free(&a);
      return EXIT_MODEL;
    }
    t = wick_interpreter_input(it, (size_t)index);
  }
  wick_status st = wick_tensor_copy_from(t, a.data, a.bytes);
  npy_free(&a);
  if (st != WICK_OK) {
    fprintf(stderr, "wick run: %s does not fit input %s\n", path, wick_tensor_name(t));
    return EXIT_USAGE;
  }
  return 0;
}

static int cmd_run(int argc, char **argv) {
  common_args c = {0};
  const char *inputs[64];
  int ninputs = 0;
  const char *outdir = NULL;
  uint64_t seed = 1;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf(
          "usage: wick run MODEL.tflite [--input NAME=x.npy]... [--output-dir DIR]\n"
          "                [--signature KEY] [--threads N] [--seed N] [--reference]\n"
          "                [--memory-limit BYTES] [--weight-cache PATH]\n"
          "                [--delegate NAME[:KEY=VALUE;...]]... [--nnapi-feature-level N]\n\n"
          "Runs the model once. Inputs not given are filled with seeded random values\n"
          "(floats uniform in [-1, 1)). Outputs are written to DIR/<name>.npy when\n"
          "--output-dir is given; a summary of each output is printed.\n"
          "--weight-cache keeps the packed weights in PATH: written by the first run,\n"
          "read by later ones instead of packing (checked; rewritten if it does not\n"
          "match).\n"
          "--delegate hands what a built-in delegate takes to it (see `wick inspect\n"
          "--help`); fallbacks to the CPU are logged to stderr.\n");
      return 0;
    }
    if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) {
      if (ninputs < 64) inputs[ninputs++] = argv[++i];
    } else if (strcmp(argv[i], "--output-dir") == 0 && i + 1 < argc) {
      outdir = argv[++i];
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (!parse_common(argc, argv, &i, &c)) {
      fprintf(stderr, "wick run: unknown argument %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (!c.model) {
    fprintf(stderr, "wick run: missing MODEL.tflite (see --help)\n");
    return EXIT_USAGE;
  }
  wick_model *model;
  wick_interpreter *it;
  int rc = open_model(&c, &model, &it, NULL, NULL);
  if (rc) return rc;
  if (c.weight_cache)
    fprintf(stderr, "wick run: weight cache %s\n", wick_interpreter_weight_cache_message(it));
  /* Random values first (so an input given as .npy, which may resize, wins). */
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++)
    fill_random(wick_interpreter_input(it, i), &state);
  for (int k = 0; k < ninputs && rc == 0; k++) rc = set_input_from_npy(it, inputs[k]);
  if (rc == 0) {
    wick_status st = wick_interpreter_invoke(it);
    if (st != WICK_OK) {
      fprintf(stderr, "wick run: %s: %s\n", wick_status_string(st),
              wick_interpreter_last_error(it));
      rc = EXIT_MODEL;
    }
  }
  if (rc == 0 && outdir) {
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "wick run: cannot create %s: %s\n", outdir, strerror(errno));
      rc = EXIT_USAGE;
    }
  }
  for (size_t i = 0; rc == 0 && i < wick_interpreter_output_count(it); i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    printf("%-28s %-8s ", wick_tensor_name(t), wick_dtype_name(wick_tensor_dtype(t)));
    print_shape(stdout, t);
    if (wick_tensor_dtype(t) == WICK_DTYPE_FLOAT32 && wick_tensor_byte_size(t) > 0) {
      const float *v = wick_tensor_data(t);
      size_t n = wick_tensor_byte_size(t) / 4, arg = 0;
      double sum = 0;
      for (size_t k = 0; k < n; k++) {
        sum += v[k];
        if (v[k] > v[arg]) arg = k;
      }
      printf("  mean=%.6g argmax=%zu max=%.6g", sum / (double)n, arg, (double)v[arg]);
    }
    printf("\n");
    if (outdir) {
      char name[256], path[1024], err[512];
      safe_name(wick_tensor_name(t), name, sizeof name);
      snprintf(path, sizeof path, "%s/%s.npy", outdir, name);
      int32_t dims[WICK_MAX_RANK];
      for (size_t d = 0; d < wick_tensor_rank(t); d++) dims[d] = wick_tensor_dim(t, d);
      if (npy_write(path, wick_tensor_dtype(t), (int)wick_tensor_rank(t), dims, wick_tensor_data(t),
                    wick_tensor_byte_size(t), err, sizeof err) != 0) {
        fprintf(stderr, "wick run: %s\n", err);
        rc = EXIT_MODEL;
      }
    }
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  return rc;
}

/* ---------------------------------------------------------------- bench */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* How the profiled operators (each at its fastest run) used the threads:
 * time outside parallel jobs (on the calling thread alone), and inside them
 * the busiest thread's task time against the mean (the imbalance) and the
 * rest of the jobs' wall time (dispatch, wake-up and the final wait). */
static void print_thread_summary(size_t n, const uint64_t *best,
                                 const wick_op_thread_stats *threads, int nthreads) {
  uint64_t serial = 0, parallel = 0, busy_max = 0, busy_sum = 0, jobs = 0, tasks = 0;
  for (size_t i = 0; i < n; i++) {
    const wick_op_thread_stats *t = &threads[i];
    serial += best[i] > t->parallel_ns ? best[i] - t->parallel_ns : 0;
    parallel += t->parallel_ns;
    busy_max += t->busy_max_ns;
    busy_sum += t->busy_sum_ns;
    jobs += t->jobs;
    tasks += t->tasks;
  }
  const double mean = (double)busy_sum / nthreads;
  printf("serial       %.3f ms (outside parallel jobs)\n", (double)serial / 1e6);
  printf(
      "in jobs      %.3f ms: %llu jobs, %llu tasks; busiest thread %.3f ms, mean %.3f ms "
      "(imbalance %.2f), dispatch+wait %.3f ms\n",
      (double)parallel / 1e6, (unsigned long long)jobs, (unsigned long long)tasks,
      (double)busy_max / 1e6, mean / 1e6, mean > 0 ? (double)busy_max / mean : 0.0,
      parallel > busy_max ? (double)(parallel - busy_max) / 1e6 : 0.0);
}

static int cmd_bench(int argc, char **argv) {
  common_args c = {0};
  int runs = 50, warmup = 5, profile = 0;
  const char *trace = NULL;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf(
          "usage: wick bench MODEL.tflite [--threads N] [--runs N] [--warmup N]\n"
          "                  [--signature KEY] [--reference] [--profile] [--trace FILE.json]\n"
          "                  [--memory-limit BYTES] [--weight-cache PATH]\n"
          "                  [--delegate NAME[:KEY=VALUE;...]]... [--nnapi-feature-level N]\n\n"
          "Times load, prepare and the first run, then `runs` invokes after `warmup`:\n"
          "min, median and p90 latency, and peak resident memory. --profile adds a\n"
          "per-operator table (each operator's fastest of --runs profiled runs, and the\n"
          "kernel it runs: `! reference` or `! generic` marks a slow path) and\n"
          "their sum; --trace writes those times as a Chrome trace. --weight-cache\n"
          "keeps the packed weights in PATH (see `wick run --help`); the line\n"
          "`weight cache` says whether prepare read it or wrote it.\n");
      return 0;
    }
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--profile") == 0) {
      profile = 1;
    } else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace = argv[++i];
      profile = 1;
    } else if (!parse_common(argc, argv, &i, &c)) {
      fprintf(stderr, "wick bench: unknown argument %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  if (!c.model || runs < 1 || warmup < 0) {
    fprintf(stderr, "wick bench: need MODEL.tflite and --runs >= 1 (see --help)\n");
    return EXIT_USAGE;
  }
  wick_model *model;
  wick_interpreter *it;
  double load_ms = 0, prepare_ms = 0;
  int rc = open_model(&c, &model, &it, &load_ms, &prepare_ms);
  if (rc) return rc;
  if (num_delegates > 0) {
    size_t nops = wick_interpreter_op_count(it), on = 0;
    for (size_t i = 0; i < nops; i++) on += wick_interpreter_op_delegate(it, i) != NULL;
    printf(
        "delegation   %zu of %zu operators on delegates, %zu partitions (see wick inspect "
        "--delegate)\n",
        on, nops, wick_interpreter_partition_count(it));
  }
  uint64_t state = 0x9E3779B97F4A7C16ull;
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++)
    fill_random(wick_interpreter_input(it, i), &state);
  double t0 = now_ms();
  wick_status st = wick_interpreter_invoke(it);
  double first_ms = now_ms() - t0;
  double *times = calloc((size_t)runs, sizeof(double));
  for (int i = 0; st == WICK_OK && i < warmup; i++) st = wick_interpreter_invoke(it);
  for (int i = 0; st == WICK_OK && i < runs; i++) {
    double s = now_ms();
    st = wick_interpreter_invoke(it);
    times[i] = now_ms() - s;
  }
  if (st != WICK_OK) {
    fprintf(stderr, "wick bench: %s: %s\n", wick_status_string(st),
            wick_interpreter_last_error(it));
    free(times);
    wick_interpreter_destroy(it);
    wick_model_destroy(model);
    return EXIT_MODEL;
  }
  qsort(times, (size_t)runs, sizeof(double), cmp_double);
  double median = times[runs / 2], p90 = times[(int)((runs - 1) * 0.9)];
  printf("model        %s\n", c.model);
  printf("threads      %d\n", c.threads != 0 ? c.threads : 1);
  printf("load         %.3f ms\n", load_ms);
  printf("prepare      %.3f ms\n", prepare_ms);
  printf("first run    %.3f ms\n", first_ms);
  printf("cold start   %.3f ms (load + prepare + first run)\n", load_ms + prepare_ms + first_ms);
  if (c.weight_cache) printf("weight cache %s\n", wick_interpreter_weight_cache_message(it));
  printf("runs         %d (after %d warm-up)\n", runs, warmup);
  printf("min          %.3f ms\n", times[0]);
  printf("median       %.3f ms\n", median);
  printf("p90          %.3f ms\n", p90);
  printf("arena        %zu bytes\n", wick_interpreter_arena_bytes(it));
  printf("peak RSS     %ld KiB\n", peak_rss_kb());
  free(times);

  if (profile) {
    /* Each operator's fastest of `runs` profiled invokes: on a shared machine
     * single runs are dominated by preemption, the per-op minimum is not. */
    wick_interpreter_set_profiling(it, 1);
    size_t n = wick_interpreter_op_count(it);
    uint64_t *best = calloc(n ? n : 1, sizeof *best);
    wick_op_thread_stats *best_threads = calloc(n ? n : 1, sizeof *best_threads);
    if (best == NULL || best_threads == NULL) {
      free(best);
      free(best_threads);
      fprintf(stderr, "wick bench: out of memory\n");
      wick_interpreter_destroy(it);
      wick_model_destroy(model);
      return EXIT_MODEL;
    }
    for (int r = 0; r < runs; r++) {
      wick_interpreter_invoke(it);
      for (size_t i = 0; i < n; i++) {
        uint64_t ns = wick_interpreter_op_time_ns(it, i);
        if (r == 0 || ns < best[i]) {
          best[i] = ns;
          best_threads[i] = wick_interpreter_op_thread_stats(it, i);
        }
      }
    }
    const int nthreads = c.threads > 1 ? c.threads : 1;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += best[i];
    printf(
        "per-op min   %.3f ms (sum over operators of each one's fastest of %d profiled "
        "runs)\n",
        (double)total / 1e6, runs);
    if (nthreads > 1) print_thread_summary(n, best, best_threads, nthreads);
    /* The operators on a slow path: the reference kernels or generic scalar code. */
    uint64_t slow_ns = 0;
    size_t slow_ops = 0;
    for (size_t i = 0; i < n; i++) {
      const char *kind = wick_interpreter_op_kernel(it, i);
      if (strcmp(kind, "reference") == 0 || strcmp(kind, "generic") == 0) {
        slow_ns += best[i];
        slow_ops++;
      }
    }
    printf(
        "slow paths   %.3f ms (%.1f%%) in %zu operators on reference or generic kernels "
        "(marked ! below)\n",
        (double)slow_ns / 1e6, total ? 100.0 * (double)slow_ns / (double)total : 0.0, slow_ops);
    printf("\n%-5s %-24s %-22s %10s %7s %9s", "#", "op", "output", "time(us)", "share", "GFLOP/s");
    if (nthreads > 1) printf(" %6s %8s %6s", "tasks", "serial%", "imbal");
    printf("  %s\n", "kernel");
    for (size_t i = 0; i < n; i++) {
      uint64_t ns = best[i];
      uint64_t macs = wick_interpreter_op_macs(it, i);
      char shape[64] = "";
      const wick_tensor *o = wick_interpreter_op_output(it, i);
      size_t k = 0;
      for (size_t d = 0; o && d < wick_tensor_rank(o) && k < sizeof shape; d++)
        k += (size_t)snprintf(shape + k, sizeof shape - k, d ? "x%d" : "%d", wick_tensor_dim(o, d));
      printf("%-5zu %-24s %-22s %10.1f %6.1f%% %9.2f", i, wick_interpreter_op_name(it, i), shape,
             (double)ns / 1e3, total ? 100.0 * (double)ns / (double)total : 0.0,
             ns ? 2.0 * (double)macs / (double)ns : 0.0);
      if (nthreads > 1) {
        const wick_op_thread_stats *t = &best_threads[i];
        double serial = ns > t->parallel_ns ? (double)(ns - t->parallel_ns) : 0.0;
        printf(" %6llu %7.1f%% %6.2f", (unsigned long long)t->tasks,
               ns ? 100.0 * serial / (double)ns : 0.0,
               t->busy_sum_ns ? (double)t->busy_max_ns * nthreads / (double)t->busy_sum_ns : 0.0);
      }
      const char *kind = wick_interpreter_op_kernel(it, i);
      const char *kname = wick_interpreter_op_kernel_name(it, i);
      const int slow = strcmp(kind, "reference") == 0 || strcmp(kind, "generic") == 0;
      printf("  %s%s%s%s%s\n", slow ? "! " : "", kind, kname[0] ? " (" : "", kname,
             kname[0] ? ")" : "");
    }
    if (trace) {
      FILE *f = fopen(trace, "w");
      if (!f) {
        fprintf(stderr, "wick bench: cannot write %s\n", trace);
        rc = EXIT_USAGE;
      } else {
        fprintf(f, "{\"traceEvents\":[\n");
        double ts = 0;
        for (size_t i = 0; i < n; i++) {
          double dur = (double)best[i] / 1e3;
          fprintf(f,
                  "%s{\"name\":\"%s\",\"cat\":\"op\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
                  "\"pid\":1,\"tid\":1,\"args\":{\"index\":%zu}}",
                  i ? ",\n" : "", wick_interpreter_op_name(it, i), ts, dur, i);
          ts += dur;
        }
        fprintf(f, "\n]}\n");
        fclose(f);
      }
    }
    free(best);
    free(best_threads);
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  return rc;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: wick COMMAND [ARGS]\n\n"
          "commands:\n"
          "  inspect MODEL.tflite   signatures, inputs/outputs, ops, memory, MACs\n"
          "  run MODEL.tflite       run once on .npy or seeded random inputs\n"
          "  bench MODEL.tflite     latency, cold start and memory\n"
          "  generate LLM.tflite    token generation with a wick.llm file\n"
          "  version                print the version\n\n"
          "`wick COMMAND --help` describes each command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    printf("wick %s\n", wick_version());
    return 0;
  }
  int rc = -1;
  if (strcmp(cmd, "inspect") == 0) rc = cmd_inspect(argc, argv);
  if (strcmp(cmd, "run") == 0) rc = cmd_run(argc, argv);
  if (strcmp(cmd, "bench") == 0) rc = cmd_bench(argc, argv);
  if (strcmp(cmd, "generate") == 0) rc = wick_cmd_generate(argc, argv);
  for (size_t i = 0; i < num_delegates; i++) wick_delegate_destroy(delegates[i]);
  if (rc >= 0) return rc;
  fprintf(stderr, "wick: unknown command %s\n", cmd);
  usage(stderr);
  return EXIT_USAGE;
}
