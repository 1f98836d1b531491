/*
 * test_malformed.c — the untrusted-file promise, checked on many bad files.
 *
 * The promise (SECURITY.md): for ANY byte string, load -> create -> invoke
 * either succeeds or returns an error status with a non-empty message; never
 * an out-of-bounds access, UB, abort or hang. This test checks it two ways:
 *
 *  1. Systematic mutations of valid models — two built here with
 *     tiny_model.h (so the test never depends on files outside the project)
 *     and every real file in $WICK_SHARED_MODELS (skipped with a message
 *     when absent): every truncation length, every single-bit flip, and
 *     every 4-byte-aligned word overwritten with an out-of-range offset
 *     (0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, size, size - 1). Small files
 *     get every case; large files get a deterministic spread (positions
 *     visited in a stride permutation) within a time budget per model, so
 *     the runtime stays bounded as ops are added and more mutants run to
 *     invoke. Word overwrites and most bit flips target the flatbuffer
 *     structure, not the bytes of constant tensors (found by loading the
 *     model and skipping every tensor's data range).
 *  2. Targeted malformations asserting the exact status and message text
 *     (8-byte file, identifier, version, Buffer.offset+size wraparound,
 *     index ranges, byte sizes, rank, aliasing, subgraph cycles, dataflow,
 *     per-axis quantization), plus the regression inputs of
 *     tests/fuzz/regressions/ (every file there must load/run cleanly).
 *
 * Every other case runs with the test delegate "reference" (src/delegates/reference.c; in
 * every third of those its first partition invoke fails), so partitioning and the CPU
 * fallback see the hostile files too, and one case in 64 with the NNAPI delegate against
 * the library $WICK_NNAPI_LIBRARY names (ctest: the test NNAPI implementation of
 * tests/nnapi/; without it the delegate declines everything), so its mapping, its model
 * building and that runtime see them as well; the WHILE model's mutants run a second time
 * all with the NNAPI delegate (its IF / WHILE as referenced models).
 *
 * Run under ASan+UBSan (-DWICK_SANITIZE=address,undefined) for the real
 * value: any crash prints the case being run, and the mutated bytes are
 * written to /tmp/wick-malformed-crash.tflite for replay (add it to
 * tests/fuzz/regressions/ once fixed). WICK_MALFORMED_BUDGET_MS overrides
 * the per-model time budget of each mutation family.
 */
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/internal.h"
#include "untrusted_run.h"
#include "tiny_model.h"
#include "wick/wick.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#if SANITIZED
void __sanitizer_set_death_callback(void (*callback)(void));
#endif

/* ---------------------------------------------------------------- bookkeeping */

static long g_cases, g_loaded, g_created, g_invoked, g_failures, g_targeted, g_skipped_heavy;

/* The case being run, for the crash handler: a description and the bytes. */
static char g_case[256];
static const uint8_t *g_case_bytes;
static size_t g_case_size;

static void dump_case(void) {
  /* Only async-signal-safe calls: this also runs from a signal handler. */
  static const char head[] = "\n*** test_malformed crashed while running: ";
  static const char tail[] = "\n*** mutated bytes written to /tmp/wick-malformed-crash.tflite\n";
  ssize_t ignored = write(2, head, sizeof head - 1);
  ignored = write(2, g_case, strlen(g_case));
  if (g_case_bytes) {
    int fd = open("/tmp/wick-malformed-crash.tflite", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ignored = write(fd, g_case_bytes, g_case_size);
      close(fd);
      ignored = write(2, tail, sizeof tail - 1);
    }
  }
  (void)ignored;
}

static void on_signal(int sig) {
  dump_case();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_crash_reporting(void) {
#if SANITIZED
  __sanitizer_set_death_callback(dump_case);
#else
  signal(SIGSEGV, on_signal);
  signal(SIGBUS, on_signal);
  signal(SIGFPE, on_signal);
  signal(SIGILL, on_signal);
#endif
  signal(SIGABRT, on_signal);
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#define FAIL(...)                                        \
  do {                                                   \
    g_failures++;                                        \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fputc('\n', stderr);                                 \
  } while (0)

static bool valid_error(wick_status st) { return st >= WICK_ERR_INVALID_ARGUMENT && st <= 7; }

/* A file may legitimately loop forever (WHILE with a condition that stays
 * true): not a crash. The promise there is that invoke can be cancelled, so
 * every invoke runs under a watchdog that cancels it after WATCHDOG_MS
 * (untrusted_run.h). */
#define WATCHDOG_MS 1000
static long g_cancelled;
/* 1 while mutating a control-flow file for the NNAPI delegate: every case runs with it, so its
 * IF / WHILE mapping (referenced models) sees a whole family of mutants, not one in 64. */
static int g_all_nnapi;

static wick_status invoke_watched(wick_interpreter *it) {
  bool cancelled = false;
  wick_status st = wick_invoke_watched(it, WATCHDOG_MS, &cancelled);
  if (cancelled) g_cancelled++;
  return st;
}

/* ---------------------------------------------------------------- the promise, on one input */

/* Loads, creates and invokes `data` (a private, exactly-sized heap copy, so
 * ASan sees any read past the end). Checks that each phase either succeeds or
 * fails with a known status and a message. Returns the last phase reached:
 * 0 load failed, 1 create failed, 2 invoke failed, 3 all succeeded. */
static int run_promise(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) abort();
  if (size) memcpy(copy, data, size);
  g_case_bytes = copy;
  g_case_size = size;
  g_cases++;
  int phase = 0;
  wick_error_info err;
  memset(&err, 0x7F, sizeof err); /* a stale message must not pass for a real one */
  err.message[sizeof err.message - 1] = 0;
  wick_model *model = NULL;
  wick_status st = wick_model_load_buffer(copy, size, NULL, &err, &model);
  if (st != WICK_OK) {
    if (!valid_error(st)) FAIL("%s: load returned unknown status %d", g_case, (int)st);
    if (model != NULL) FAIL("%s: load failed but set the model", g_case);
    if (err.message[0] == 0 || (unsigned char)err.message[0] == 0x7F)
      FAIL("%s: load failed (%s) without a message", g_case, wick_status_string(st));
    goto out;
  }
  g_loaded++;
  phase = 1;
  wick_interpreter_options opt = wick_interpreter_options_default();
  opt.memory_limit_bytes = (size_t)256 << 20;
  static wick_delegate *delegate; /* made once, kept for the process */
  if (delegate == NULL && wick_delegate_create("reference", NULL, NULL, &delegate) != WICK_OK)
    abort();
  static wick_delegate *nnapi; /* likewise */
  if (nnapi == NULL && wick_delegate_create("nnapi", NULL, NULL, &nnapi) != WICK_OK) abort();
  /* one case in 64 (1 in 4 took the test from 43 to 522 s: building and computing each NNAPI
   * model in the test runtime costs ~40 plain cases), or every one under g_all_nnapi */
  if (g_all_nnapi || g_cases % 64 == 1) {
    opt.delegates = &nnapi;
    opt.num_delegates = 1;
  }
  if (!g_all_nnapi && g_cases % 2 == 0) {
    if (g_cases % 6 == 0) { /* the first partition invoke fails and reruns on the CPU */
      wick_delegate_destroy(delegate);
      if (wick_delegate_create("reference", "fail_invoke=1", NULL, &delegate) != WICK_OK) abort();
    }
    opt.delegates = &delegate;
    opt.num_delegates = 1;
  }
  wick_interpreter *it = NULL;
  memset(&err, 0x7F, sizeof err);
  err.message[sizeof err.message - 1] = 0;
  st = wick_interpreter_create(model, NULL, &opt, &err, &it);
  if (st != WICK_OK) {
    if (!valid_error(st)) FAIL("%s: create returned unknown status %d", g_case, (int)st);
    if (it != NULL) FAIL("%s: create failed but set the interpreter", g_case);
    if (err.message[0] == 0 || (unsigned char)err.message[0] == 0x7F)
      FAIL("%s: create failed (%s) without a message", g_case, wick_status_string(st));
    wick_model_destroy(model);
    goto out;
  }
  g_created++;
  phase = 2;
  /* A mutant may legitimately ask for billions of multiply-accumulates
   * within the memory cap: slow, not wrong. Skip invoking those. */
  if (wick_total_macs(it) > (SANITIZED ? 200000000u : 1000000000u)) {
    g_skipped_heavy++;
    wick_interpreter_destroy(it);
    wick_model_destroy(model);
    goto out;
  }
  wick_zero_inputs(it); /* an input may refuse (a constant one): fine */
  st = invoke_watched(it);
  if (st != WICK_OK) {
    if (!valid_error(st)) FAIL("%s: invoke returned unknown status %d", g_case, (int)st);
    if (wick_interpreter_last_error(it)[0] == 0)
      FAIL("%s: invoke failed (%s) without a message", g_case, wick_status_string(st));
  } else {
    g_invoked++;
    phase = 3;
    wick_read_outputs(it); /* a bogus pointer or size shows up here */
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
out:
  g_case_bytes = NULL;
  free(copy);
  return phase;
}

/* ---------------------------------------------------------------- systematic mutations */

/* Which bytes of a valid model are constant-tensor data (not structure). */
static uint8_t *data_mask(const uint8_t *bytes, size_t size) {
  uint8_t *mask = calloc(1, size ? size : 1);
  if (mask == NULL) abort();
  wick_model *m = NULL;
  if (wick_model_load_buffer(bytes, size, NULL, NULL, &m) != WICK_OK) return mask;
  for (uint32_t s = 0; s < m->num_subgraphs; s++) {
    const wick_subgraph_info *g = &m->subgraphs[s];
    for (uint32_t t = 0; t < g->num_tensors; t++) {
      const wick_tensor_info *ti = &g->tensors[t];
      if (ti->data == NULL) continue;
      size_t start = (size_t)(ti->data - bytes);
      for (size_t k = 0; k < ti->data_size && start + k < size; k++) mask[start + k] = 1;
    }
  }
  wick_model_destroy(m);
  return mask;
}

/* Visits 0..n-1 in a fixed scattered order (a stride coprime with n), so a
 * run cut short by the time budget still covers the whole file evenly. */
static size_t scatter_stride(size_t n) {
  static const size_t primes[] = {7919, 7907, 7901, 7883, 104729};
  for (size_t i = 0; i < sizeof primes / sizeof primes[0]; i++)
    if (n % primes[i] != 0) return primes[i] % (n ? n : 1) ? primes[i] : 1;
  return 1;
}

typedef struct family_result {
  size_t total, done;
  long reached[4];
} family_result;

static uint64_t g_budget_ms;

static void report(const char *model, const char *family, const family_result *r) {
  printf(
      "  %-44s %-10s %7zu/%-7zu cases  load-fail %ld  create-fail %ld  invoke-fail %ld  ran "
      "%ld%s\n",
      model, family, r->done, r->total, r->reached[0], r->reached[1], r->reached[2], r->reached[3],
      r->done < r->total ? "  (budget)" : "");
}

static void mutate_model(const char *name, const uint8_t *bytes, size_t size) {
  uint8_t *work = malloc(size);
  if (work == NULL) abort();
  memcpy(work, bytes, size);
  uint8_t *mask = data_mask(bytes, size);
  size_t nstruct = 0;
  for (size_t i = 0; i < size; i++) nstruct += !mask[i];

  /* The unmodified model itself. */
  snprintf(g_case, sizeof g_case, "%s: unmodified", name);
  int base = run_promise(bytes, size);
  printf("  %-44s %zu bytes (%zu structure), unmodified: %s\n", name, size, nstruct,
         base == 3   ? "runs"
         : base == 2 ? "invoke fails"
         : base == 1 ? "create fails"
                     : "load fails");

  /* 1. Truncations: every length, in scattered order. */
  family_result r;
  memset(&r, 0, sizeof r);
  r.total = size;
  uint64_t t0 = now_ms();
  size_t stride = scatter_stride(size);
  for (size_t k = 0; k < size; k++) {
    size_t len = (k * stride) % size;
    snprintf(g_case, sizeof g_case, "%s: truncated to %zu bytes", name, len);
    r.reached[run_promise(bytes, len)]++;
    r.done++;
    if (now_ms() - t0 > g_budget_ms) break;
  }
  report(name, "truncate", &r);

  /* 2. Single-bit flips: structure bits first (scattered), then data bits. */
  memset(&r, 0, sizeof r);
  r.total = 8 * size;
  t0 = now_ms();
  for (int pass = 0; pass < 2; pass++) {
    size_t nbits = 8 * size;
    stride = scatter_stride(nbits);
    for (size_t k = 0; k < nbits; k++) {
      size_t bit = (k * stride) % nbits, pos = bit / 8;
      if (mask[pos] != pass) continue;
      work[pos] ^= (uint8_t)(1u << (bit % 8));
      snprintf(g_case, sizeof g_case, "%s: bit %zu of byte %zu flipped", name, bit % 8, pos);
      r.reached[run_promise(work, size)]++;
      work[pos] = bytes[pos];
      r.done++;
      if (now_ms() - t0 > g_budget_ms) break;
    }
    if (now_ms() - t0 > g_budget_ms) break;
  }
  report(name, "bit-flip", &r);

  /* 3. Every aligned structure word set to an out-of-range offset. */
  const uint32_t values[6] = {0,           0xFFFFFFFFu,    0x7FFFFFFFu,
                              0x80000000u, (uint32_t)size, (uint32_t)size - 1};
  memset(&r, 0, sizeof r);
  size_t nwords = size / 4;
  for (size_t w = 0; w < nwords; w++) r.total += mask[4 * w] ? 0 : 6;
  t0 = now_ms();
  stride = scatter_stride(nwords);
  for (size_t k = 0; k < nwords; k++) {
    size_t pos = 4 * ((k * stride) % nwords);
    if (mask[pos]) continue;
    for (int v = 0; v < 6; v++) {
      memcpy(work + pos, &values[v], 4);
      snprintf(g_case, sizeof g_case, "%s: word at %zu set to 0x%08x", name, pos,
               (unsigned)values[v]);
      r.reached[run_promise(work, size)]++;
      memcpy(work + pos, bytes + pos, 4);
      r.done++;
    }
    if (now_ms() - t0 > g_budget_ms) break;
  }
  report(name, "offsets", &r);
  free(mask);
  free(work);
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf == NULL || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted list of regular files in `dir` ending in `suffix` (NULL: any). */
static size_t list_dir(const char *dir, const char *suffix, char ***out) {
  *out = NULL;
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  size_t n = 0, cap = 0;
  char **names = NULL;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    size_t len = strlen(e->d_name);
    if (suffix && (len < strlen(suffix) || strcmp(e->d_name + len - strlen(suffix), suffix)))
      continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 32;
      names = realloc(names, cap * sizeof *names);
      if (names == NULL) abort();
    }
    names[n] = malloc(strlen(dir) + len + 2);
    if (names[n] == NULL) abort();
    sprintf(names[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  *out = names;
  return n;
}

/* ---------------------------------------------------------------- targeted cases */

/* A minimal model (x[1,4] + k[4] -> y[1,4] by ADD) with knobs that break one
 * thing each. Defaults give a valid model. */
typedef struct knobs {
  uint32_t version;      /* 3 */
  uint32_t k_buffer;     /* 1: the buffer index of constant k */
  size_t k_bytes;        /* 16: bytes in k's buffer */
  int k_rank;            /* 1 */
  int32_t add_in1;       /* 1 (k): ADD's second input index */
  uint32_t opcode_index; /* 0 */
  bool both_io;          /* ADD writes its own input x */
  bool unwritten;        /* ADD reads tensor 3 (never written) */
  bool buffer_external;  /* buffer 1 uses offset/size instead of data */
  uint64_t buf_offset, buf_size;
  int self_call;        /* 1: STABLEHLO_COMPOSITE calls its own subgraph; 2: WHILE; 3: A->B->A;
                           4: WHILE whose cond subgraph index (5) is out of range */
  size_t k_scales;      /* 0: k unquantized; else that many scales on dim 0 */
  size_t k_zero_points; /* zero points (when k_scales) */
  int32_t sig_input;    /* -1: no signature; else the tensor its input "x" names */
  bool k_is_input;      /* the constant k is also listed as a subgraph input */
} knobs;

static knobs default_knobs(void) {
  knobs k;
  memset(&k, 0, sizeof k);
  k.version = 3;
  k.k_buffer = 1;
  k.k_bytes = 16;
  k.k_rank = 1;
  k.add_in1 = 1;
  k.sig_input = -1;
  return k;
}

static uint8_t *build_knobs(const knobs *kn, size_t *size) {
  tm_builder *b = tm_new();
  float kv[64];
  for (int i = 0; i < 64; i++) kv[i] = (float)i;
  tm_node *bufs[2];
  bufs[0] = tm_buffer(b, NULL, 0);
  if (kn->buffer_external) {
    bufs[1] = tm_table(b);
    tm_u64(bufs[1], 1, kn->buf_offset);
    tm_u64(bufs[1], 2, kn->buf_size);
  } else {
    bufs[1] = tm_buffer(b, kv, kn->k_bytes);
  }
  int32_t s_x[2] = {1, 4}, s_k[9] = {4, 1, 1, 1, 1, 1, 1, 1, 1};
  tm_node *quant = NULL;
  if (kn->k_scales) {
    float sc[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t zp[8] = {0};
    quant = tm_table(b);
    tm_ref(quant, 2, tm_vec_f32(b, sc, kn->k_scales));
    if (kn->k_zero_points) tm_ref(quant, 3, tm_vec_i64(b, zp, kn->k_zero_points));
    tm_i32(quant, 6, 0);
  }
  tm_node *tensors[4];
  tensors[0] = tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL);
  tensors[1] = tm_tensor(b, "k", TM_F32, s_k, (size_t)kn->k_rank, kn->k_buffer, quant);
  if (kn->k_is_input) { /* a dynamic dim, so only wick's constant check refuses a resize */
    int32_t dyn[1] = {-1};
    tm_ref(tensors[1], 7, tm_vec_i32(b, dyn, 1));
  }
  tensors[2] = tm_tensor(b, "y", TM_F32, s_x, 2, 0, NULL);
  tensors[3] = tm_tensor(b, "never_written", TM_F32, s_x, 2, 0, NULL);
  tm_node *opcodes[3] = {tm_opcode(b, 0, 1), tm_opcode(b, 206, 1), tm_opcode(b, 119, 1)};
  int32_t in[2] = {kn->unwritten ? 3 : 0, kn->add_in1};
  int32_t out[1] = {kn->both_io ? 0 : 2};
  tm_node *ops[2];
  size_t nops = 1;
  ops[0] = tm_operator(b, kn->opcode_index, in, 2, out, 1, 0, NULL);
  tm_node *sgs[2];
  size_t nsg = 1;
  int32_t gin[1] = {0}, gout[1] = {2};
  if (kn->self_call) {
    /* Subgraph 0: ADD, then an op that runs a subgraph. */
    int32_t cin[1] = {2}, cout[1] = {3};
    if (kn->self_call == 2 || kn->self_call == 4) {
      tm_node *o = tm_table(b); /* WhileOptions: cond 0, body 1 */
      tm_i32(o, 0, kn->self_call == 4 ? 5 : 0);
      tm_i32(o, 1, 0);
      ops[1] = tm_operator(b, 2, cin, 1, cout, 1, 93, o);
    } else {
      tm_node *o = tm_table(b); /* StableHLOCompositeOptions: name 0, decomposition 1 */
      tm_ref(o, 0, tm_str(b, "loop"));
      tm_i32(o, 1, kn->self_call == 3 ? 1 : 0);
      ops[1] = tm_operator(b, 1, cin, 1, cout, 1, 0, NULL);
      tm_u8(ops[1], 11, 21);
      tm_ref(ops[1], 12, o);
    }
    nops = 2;
    gout[0] = 3;
  }
  int32_t gin2[2] = {0, 1};
  sgs[0] = tm_subgraph(b, tensors, 4, kn->k_is_input ? gin2 : gin, kn->k_is_input ? 2 : 1, gout, 1,
                       ops, nops);
  if (kn->self_call == 3) {
    /* Subgraph 1 calls subgraph 0 back. */
    tm_node *t1[2] = {tm_tensor(b, "a", TM_F32, s_x, 2, 0, NULL),
                      tm_tensor(b, "b", TM_F32, s_x, 2, 0, NULL)};
    tm_node *o = tm_table(b);
    tm_i32(o, 1, 0);
    int32_t i1[1] = {0}, o1[1] = {1};
    tm_node *op = tm_operator(b, 1, i1, 1, o1, 1, 0, NULL);
    tm_u8(op, 11, 21);
    tm_ref(op, 12, o);
    sgs[1] = tm_subgraph(b, t1, 2, i1, 1, o1, 1, &op, 1);
    nsg = 2;
  }
  tm_node *sig = NULL;
  if (kn->sig_input >= 0) {
    const char *in_names[1] = {"x"}, *out_names[1] = {"y"};
    uint32_t in_t[1] = {(uint32_t)kn->sig_input}, out_t[1] = {(uint32_t)gout[0]};
    sig = tm_signature(b, "serving_default", 0, in_names, in_t, 1, out_names, out_t, 1);
  }
  tm_node *model = tm_model(b, kn->version, opcodes, 3, sgs, nsg, bufs, 2, &sig, sig ? 1 : 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size);
  tm_free(b);
  return bytes;
}

/* Loads (and, if that works, creates) and checks the status and message. */
static void expect(const char *what, const uint8_t *bytes, size_t size, int phase, wick_status want,
                   const char *needle) {
  g_targeted++;
  snprintf(g_case, sizeof g_case, "targeted: %s", what);
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) abort();
  if (size) memcpy(copy, bytes, size);
  g_case_bytes = copy;
  g_case_size = size;
  wick_error_info err;
  err.message[0] = 0;
  wick_model *m = NULL;
  wick_status st = wick_model_load_buffer(copy, size, NULL, &err, &m);
  const char *msg = err.message;
  wick_interpreter *it = NULL;
  int got_phase = 0;
  if (st == WICK_OK) {
    got_phase = 1;
    st = wick_interpreter_create(m, NULL, NULL, &err, &it);
    if (st == WICK_OK) {
      got_phase = 2;
      st = wick_interpreter_invoke(it);
      msg = wick_interpreter_last_error(it);
      if (st == WICK_OK) got_phase = 3;
    }
  }
  if (got_phase != phase || st != want || strstr(msg, needle) == NULL)
    FAIL("%s: expected %s at phase %d with \"%s\"; got %s at phase %d: \"%s\"", what,
         wick_status_string(want), phase, needle, wick_status_string(st), got_phase, msg);
  else
    printf("  ok  %-40s %s\n", what, msg[0] ? msg : "(no error)");
  wick_interpreter_destroy(it);
  wick_model_destroy(m);
  g_case_bytes = NULL;
  free(copy);
}

static void expect_knobs(const char *what, const knobs *k, int phase, wick_status want,
                         const char *needle) {
  size_t size;
  uint8_t *bytes = build_knobs(k, &size);
  expect(what, bytes, size, phase, want, needle);
  free(bytes);
}

/* A graph input that the file also gives constant data: callers write inputs
 * (wick_tensor_data or copy_from), so the interpreter must hand out a private
 * copy, never the file's bytes (a read-only mapping for load_file); and the
 * input's shape cannot change, since the data has a fixed size. */
static void constant_input_case(void) {
  g_targeted++;
  snprintf(g_case, sizeof g_case, "targeted: constant graph input");
  knobs k = default_knobs();
  k.k_is_input = true;
  size_t size;
  uint8_t *bytes = build_knobs(&k, &size);
  char path[] = "/tmp/wick-test-malformed-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, bytes, size) != (ssize_t)size) {
    FAIL("cannot write %s", path);
    free(bytes);
    return;
  }
  close(fd);
  free(bytes);
  wick_error_info err;
  wick_model *m = NULL;
  wick_interpreter *it = NULL;
  if (wick_model_load_file(path, NULL, &err, &m) != WICK_OK ||
      wick_interpreter_create(m, NULL, NULL, &err, &it) != WICK_OK) {
    FAIL("constant graph input: %s", err.message);
  } else {
    wick_tensor *t = wick_interpreter_input(it, 1);
    float *p = wick_tensor_mutable_data(t);
    if (wick_interpreter_input_count(it) != 2 || p == NULL || wick_tensor_byte_size(t) != 16) {
      FAIL("constant graph input: unexpected input 1");
    } else {
      memset(p, 0, 16); /* writes a private copy; the file mapping is read-only */
      float ones[4] = {1, 1, 1, 1};
      if (wick_tensor_copy_from(t, ones, sizeof ones) != WICK_OK)
        FAIL("constant graph input: copy_from refused");
      int32_t dims[1] = {8};
      wick_status st = wick_interpreter_resize_input(it, 1, dims, 1);
      if (st != WICK_ERR_INVALID_ARGUMENT ||
          !strstr(wick_interpreter_last_error(it), "holds constant data in the file"))
        FAIL("constant graph input: resize gave %s: %s", wick_status_string(st),
             wick_interpreter_last_error(it));
      else if (wick_interpreter_invoke(it) != WICK_OK)
        FAIL("constant graph input: invoke after a refused resize: %s",
             wick_interpreter_last_error(it));
      else
        printf("  ok  %-40s %s\n", "constant graph input (written, resized)",
               wick_interpreter_last_error(it));
    }
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(m);
  unlink(path);
}

/* Bool inputs: callers may write any byte; kernels must never load a C bool
 * that is not 0 or 1 (UB). Any non-zero byte means true. */
static void bool_input_case(void) {
  g_targeted++;
  snprintf(g_case, sizeof g_case, "targeted: bool input bytes 0, 1, 2, 255");
  tm_builder *b = tm_new();
  int32_t shape[1] = {4}, in[2] = {0, 0}, out[1] = {1}, gin[1] = {0}, gout[1] = {1};
  tm_node *buf = tm_buffer(b, NULL, 0);
  tm_node *tensors[2] = {tm_tensor(b, "x", TM_BOOL, shape, 1, 0, NULL),
                         tm_tensor(b, "y", TM_BOOL, shape, 1, 0, NULL)};
  tm_node *code = tm_opcode(b, 84, 1); /* LOGICAL_OR(x, x) */
  tm_node *op = tm_operator(b, 0, in, 2, out, 1, 0, NULL);
  tm_node *sg = tm_subgraph(b, tensors, 2, gin, 1, gout, 1, &op, 1);
  tm_node *model = tm_model(b, 3, &code, 1, &sg, 1, &buf, 1, NULL, 0);
  size_t size;
  uint8_t *bytes = tm_finish(b, model, "TFL3", &size);
  tm_free(b);
  wick_error_info err;
  wick_model *m = NULL;
  wick_interpreter *it = NULL;
  if (wick_model_load_buffer(bytes, size, NULL, &err, &m) != WICK_OK ||
      wick_interpreter_create(m, NULL, NULL, &err, &it) != WICK_OK) {
    FAIL("bool input: %s", err.message);
  } else {
    const uint8_t x[4] = {0, 1, 2, 255};
    uint8_t y[4] = {9, 9, 9, 9};
    if (wick_tensor_copy_from(wick_interpreter_input(it, 0), x, 4) != WICK_OK ||
        wick_interpreter_invoke(it) != WICK_OK ||
        wick_tensor_copy_to(wick_interpreter_output(it, 0), y, 4) != WICK_OK)
      FAIL("bool input: %s", wick_interpreter_last_error(it));
    else if (y[0] != 0 || y[1] != 1 || y[2] != 1 || y[3] != 1)
      FAIL("bool input: LOGICAL_OR gave %u %u %u %u", y[0], y[1], y[2], y[3]);
    else
      printf("  ok  %-40s %s\n", "bool input bytes 0, 1, 2, 255",
             "read as false, true, true, true");
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(m);
  free(bytes);
}

/* One operator table shared by 200,000 entries of the operators vector: 800
 * KB of file that a naive reader decodes into ~900 MB (each entry copies the
 * 1,024-entry inputs vector). The load budget must stop it, fast. */
static void shared_table_case(void) {
  g_targeted++;
  snprintf(g_case, sizeof g_case, "targeted: one operator table shared 200000 times");
  tm_builder *b = tm_new();
  int32_t shape[1] = {4}, ins[1024] = {0}, out[1] = {1}, gin[1] = {0}, gout[1] = {1};
  tm_node *buf = tm_buffer(b, NULL, 0);
  tm_node *tensors[2] = {tm_tensor(b, "x", TM_F32, shape, 1, 0, NULL),
                         tm_tensor(b, "y", TM_F32, shape, 1, 0, NULL)};
  tm_node *code = tm_opcode(b, 106, 1); /* ADD_N */
  tm_node *op = tm_operator(b, 0, ins, 1024, out, 1, 0, NULL);
  enum { N = 200000 };
  tm_node **ops = malloc(N * sizeof *ops);
  if (ops == NULL) abort();
  for (size_t i = 0; i < N; i++) ops[i] = op;
  tm_node *sg = tm_subgraph(b, tensors, 2, gin, 1, gout, 1, ops, N);
  tm_node *model = tm_model(b, 3, &code, 1, &sg, 1, &buf, 1, NULL, 0);
  size_t size;
  uint8_t *bytes = tm_finish(b, model, "TFL3", &size);
  tm_free(b);
  free(ops);
  uint64_t t0 = now_ms();
  wick_error_info err;
  wick_model *m = NULL;
  wick_status st = wick_model_load_buffer(bytes, size, NULL, &err, &m);
  uint64_t ms = now_ms() - t0;
  if (st != WICK_ERR_OUT_OF_MEMORY || !strstr(err.message, "its tables may take at most"))
    FAIL("shared table: expected the load budget to refuse it; got %s: %s", wick_status_string(st),
         st ? err.message : "");
  else if (ms > (SANITIZED ? 10000u : 2000u))
    FAIL("shared table: refused, but only after %llu ms", (unsigned long long)ms);
  else
    printf("  ok  %-40s %s (%zu-byte file, %llu ms)\n", "one operator table shared 200000x",
           err.message, size, (unsigned long long)ms);
  wick_model_destroy(m);
  m = NULL;
  /* A caller cap above the budget does not lift it; one below it binds first. */
  wick_model_options mo = wick_model_options_default();
  mo.memory_limit_bytes = SIZE_MAX; /* ((size_t)1 << 40 does not fit 32 bits) */
  st = wick_model_load_buffer(bytes, size, &mo, &err, &m);
  if (st != WICK_ERR_OUT_OF_MEMORY || !strstr(err.message, "its tables may take at most"))
    FAIL("shared table, SIZE_MAX cap: expected the load budget to refuse it; got %s: %s",
         wick_status_string(st), st ? err.message : "");
  wick_model_destroy(m);
  m = NULL;
  mo.memory_limit_bytes = (size_t)1 << 20;
  st = wick_model_load_buffer(bytes, size, &mo, &err, &m);
  if (st != WICK_ERR_OUT_OF_MEMORY || !strstr(err.message, "memory_limit_bytes (1048576)"))
    FAIL("shared table, 1 MiB cap: expected the caller's cap to refuse it; got %s: %s",
         wick_status_string(st), st ? err.message : "");
  else
    printf("  ok  %-40s %s\n", "  ... with a 1 MiB load cap", err.message);
  wick_model_destroy(m);
  free(bytes);
}

/* RESHAPE to rank 9, through the shape tensor or through the new_shape
 * option: TFLite once wrote past its dims array here (docs/reliability.md). */
static void reshape_rank_case(bool via_option) {
  tm_builder *b = tm_new();
  int32_t s_x[2] = {1, 1}, s_shape[1] = {9}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  tm_node *bufs[2] = {tm_buffer(b, NULL, 0), tm_buffer(b, nine, sizeof nine)};
  tm_node *tensors[3] = {tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL),
                         tm_tensor(b, "shape", TM_I32, s_shape, 1, 1, NULL),
                         tm_tensor(b, "y", TM_F32, s_x, 2, 0, NULL)};
  tm_node *code = tm_opcode(b, 22, 1);
  int32_t in[2] = {0, 1}, out[1] = {2}, gin[1] = {0}, gout[1] = {2};
  tm_node *opts = tm_table(b); /* ReshapeOptions.new_shape */
  tm_ref(opts, 0, tm_vec_i32(b, nine, 9));
  tm_node *op = tm_operator(b, 0, in, via_option ? 1 : 2, out, 1, via_option ? 17 : 0,
                            via_option ? opts : NULL);
  tm_node *sg = tm_subgraph(b, tensors, 3, gin, 1, gout, 1, &op, 1);
  tm_node *model = tm_model(b, 3, &code, 1, &sg, 1, bufs, 2, NULL, 0);
  size_t size;
  uint8_t *bytes = tm_finish(b, model, "TFL3", &size);
  tm_free(b);
  if (via_option)
    expect("RESHAPE new_shape option of rank 9", bytes, size, 0, WICK_ERR_MALFORMED_MODEL,
           "subgraphs[0].operators[0] (RESHAPE): builtin options: field new_shape is malformed");
  else
    expect("RESHAPE shape tensor of rank 9", bytes, size, 1, WICK_ERR_MALFORMED_MODEL,
           "RESHAPE (operator 0): new rank 9 exceeds wick's maximum 8");
  free(bytes);
}

/* One operator: y = OP(x, c) with x a float graph input of shape `sx` and c
 * an int32 constant (omitted when nc is 0). */
static void one_op_case(const char *what, int32_t builtin, const int32_t *sx, size_t rx,
                        const int32_t *c, size_t nc, int phase, wick_status want,
                        const char *needle) {
  tm_builder *b = tm_new();
  int32_t s_c[1] = {(int32_t)nc}, s_y[1] = {1};
  tm_node *bufs[2] = {tm_buffer(b, NULL, 0), tm_buffer(b, c, nc * sizeof *c)};
  tm_node *tensors[3] = {tm_tensor(b, "x", TM_F32, sx, rx, 0, NULL),
                         tm_tensor(b, "c", TM_I32, s_c, 1, 1, NULL),
                         tm_tensor(b, "y", TM_F32, s_y, 1, 0, NULL)};
  tm_node *code = tm_opcode(b, builtin, 1);
  int32_t in[2] = {0, 1}, out[1] = {2}, gin[1] = {0}, gout[1] = {2};
  tm_node *op = tm_operator(b, 0, in, nc ? 2 : 1, out, 1, 0, NULL);
  tm_node *sg = tm_subgraph(b, tensors, 3, gin, 1, gout, 1, &op, 1);
  tm_node *model = tm_model(b, 3, &code, 1, &sg, 1, bufs, 2, NULL, 0);
  size_t size;
  uint8_t *bytes = tm_finish(b, model, "TFL3", &size);
  tm_free(b);
  expect(what, bytes, size, phase, want, needle);
  free(bytes);
}

/* Shapes whose element count is fine but whose row-major strides overflow
 * int64: found by fuzz_input_values (BROADCAST_TO to [1717920863,
 * 1953264993, 3] overflowed the copy plan's strides before any count check),
 * and the zero-dim variants, where a 0 makes the element count 0 while the
 * other dims still multiply past 2^63. */
static void stride_overflow_cases(void) {
  const int32_t M = INT32_MAX, x13[2] = {1, 3}, ones8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  const int32_t big[3] = {1717920863, 1953264993, 3};
  one_op_case("BROADCAST_TO to [1.7e9, 1.9e9, 3]", 130, x13, 2, big, 3, 1, WICK_ERR_MALFORMED_MODEL,
              "BROADCAST_TO (operator 0): the broadcast element count");
  const int32_t zero_then_big[8] = {0, M, M, M, M, M, M, 3};
  one_op_case("BROADCAST_TO to [0, 2^31-1 x6, 3]", 130, x13, 2, zero_then_big, 8, 1,
              WICK_ERR_MALFORMED_MODEL, "BROADCAST_TO (operator 0): the broadcast element count");
  const int32_t zero_mult[8] = {0, M, M, M, M, M, M, M};
  one_op_case("TILE multiples [0, 2^31-1 x7]", 69, ones8, 8, zero_mult, 8, 1,
              WICK_ERR_MALFORMED_MODEL, "TILE (operator 0): the tiled element count overflows");
  const int32_t zero_dim_shape[3] = {0, M, M};
  one_op_case("tensor shape [0, 2^31-1, 2^31-1]", 101 /* ABS; the load refuses first */,
              zero_dim_shape, 3, NULL, 0, 0, WICK_ERR_MALFORMED_MODEL,
              "subgraphs[0].tensors[0].shape: element count overflows");
}

/* ---------------------------------------------------------------- one case per bug class */
/* docs/reliability.md's bug classes (division by zero, out-of-bounds, null dereference,
 * integer overflow in sizes, unbounded allocation/loop, uninitialised reads,
 * misaligned reads), each as a small one-operator file that asserts its own
 * error. Graph inputs are the op inputs without data; they are filled from
 * `in` (bytes, in order) so run-time values can be tested too. */

static tm_node *opts_i32(tm_builder *b, int n, const int32_t *ids, const int32_t *vals) {
  tm_node *t = tm_table(b);
  for (int i = 0; i < n; i++) tm_i32(t, ids[i], vals[i]);
  return t;
}

/* Finishes a one-subgraph model whose inputs are `gin` and outputs `gout`. */
static uint8_t *graph_finish(tm_graph *g, const int32_t *gin, size_t nin, const int32_t *gout,
                             size_t nout, size_t *size) {
  tm_node *sg = tm_subgraph(g->b, g->tensors, g->nt, gin, nin, gout, nout, g->ops, g->nops);
  tm_node *model = tm_model(g->b, 3, g->opcodes, g->nopc, &sg, 1, g->buffers, g->nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(g->b, model, "TFL3", size);
  tm_free(g->b);
  return bytes;
}

/* Load, create (64 MiB cap) and invoke with the inputs filled from `in`;
 * expects `want` at `phase` (0 load, 1 create, 2 invoke, 3 ran) with `needle`
 * in the message. On success copies output 0 into `out` (when not NULL). */
static void expect_run_out(const char *what, uint8_t *bytes, size_t size, const void *in,
                           size_t in_bytes, int phase, wick_status want, const char *needle,
                           void *out, size_t out_bytes) {
  g_targeted++;
  snprintf(g_case, sizeof g_case, "targeted: %s", what);
  wick_error_info err;
  err.message[0] = 0;
  wick_model *m = NULL;
  wick_interpreter *it = NULL;
  int got = 0;
  const char *msg = err.message;
  wick_status st = wick_model_load_buffer(bytes, size, NULL, &err, &m);
  if (st == WICK_OK) {
    got = 1;
    wick_interpreter_options o = wick_interpreter_options_default();
    o.memory_limit_bytes = (size_t)64 << 20;
    st = wick_interpreter_create(m, NULL, &o, &err, &it);
  }
  if (st == WICK_OK) {
    got = 2;
    const uint8_t *p = in;
    for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
      wick_tensor *t = wick_interpreter_input(it, i);
      size_t n = wick_tensor_byte_size(t);
      if (n > in_bytes) n = in_bytes;
      if (n) wick_tensor_copy_from(t, p, n);
      p += n, in_bytes -= n;
    }
    st = wick_interpreter_invoke(it);
    msg = wick_interpreter_last_error(it);
    if (st == WICK_OK) {
      got = 3;
      if (out) wick_tensor_copy_to(wick_interpreter_output(it, 0), out, out_bytes);
    }
  }
  if (got != phase || st != want || strstr(msg, needle) == NULL)
    FAIL("%s: expected %s at phase %d with \"%s\"; got %s at phase %d: \"%s\"", what,
         wick_status_string(want), phase, needle, wick_status_string(st), got, msg);
  else
    printf("  ok  %-40s %s\n", what, msg[0] ? msg : "(no error)");
  wick_interpreter_destroy(it);
  wick_model_destroy(m);
  free(bytes);
}

static void expect_run(const char *what, uint8_t *bytes, size_t size, const void *in,
                       size_t in_bytes, int phase, wick_status want, const char *needle) {
  expect_run_out(what, bytes, size, in, in_bytes, phase, want, needle, NULL, 0);
}

enum {
  OPT_CONV = 1,
  OPT_POOL = 5,
  OPT_FC = 8,
  OPT_CONCAT = 10,
  OPT_SPACE_TO_DEPTH = 19,
  OPT_GATHER = 23,
  OPT_SPLIT = 35
};
enum {
  OP_ADD = 0,
  OP_CONCATENATION = 2,
  OP_CONV_2D = 3,
  OP_FULLY_CONNECTED = 9,
  OP_MAX_POOL_2D = 17,
  OP_SPACE_TO_DEPTH = 26,
  OP_SVDF = 27,
  OP_GATHER = 36,
  OP_DIV = 42,
  OP_STRIDED_SLICE = 45,
  OP_SPLIT = 49,
  OP_RANGE = 96
};

enum {
  SP_OK,
  SP_UINT8,
  SP_SEGMENT,
  SP_INDEX,
  SP_VALUES,
  SP_SEGMENT_COUNT,
  SP_NEGATIVE,
  SP_FORMAT,
  SP_ORDER,
  SP_BLOCK,
  SP_DENSE_SIZE,
  SP_NO_INDICES,
  SP_ADD_READS
};

/* One SparseIndexVector union member of DimensionMetadata (type field id, value id + 1). */
static void sparse_index_vector(tm_builder *b, tm_node *dm, int id, const int32_t *v, size_t n,
                                bool as_uint8) {
  tm_node *vec = tm_table(b);
  if (as_uint8) {
    uint8_t u[8];
    for (size_t i = 0; i < n; i++) u[i] = (uint8_t)v[i];
    tm_ref(vec, 0, tm_vec(b, u, n, 1, 4));
  } else {
    tm_ref(vec, 0, tm_vec_i32(b, v, n));
  }
  tm_u8(dm, id, as_uint8 ? 3 : 1); /* Uint8Vector / Int32Vector */
  tm_ref(dm, id + 1, vec);
}

/* x[2,4] + DENSIFY(k) -> y, where k is the [2,4] constant [[0,0,1,0],[2,0,0,3]] stored as
 * level 0 DENSE (2 rows), level 1 SPARSE_CSR (segments [0,1,3], indices [2,0,3], values
 * 1,2,3); `variant` breaks one part of that (SP_ADD_READS: ADD reads k itself). */
static uint8_t *sparse_model(int variant, size_t *size) {
  tm_graph g;
  tm_graph_init(&g, tm_new());
  int32_t shape[2] = {2, 4};
  float values[4] = {1, 2, 3, 0};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, shape, 2);
  int32_t k = tm_g_const(&g, "k", TM_F32, shape, 2, values,
                         (variant == SP_VALUES ? 4 : 3) * sizeof(float), NULL);
  int32_t order[3] = {0, 1, 2}, segments[3] = {0, 1, 3}, indices[3] = {2, 0, 3};
  if (variant == SP_ORDER) order[1] = 0;
  if (variant == SP_SEGMENT) segments[1] = 9;
  if (variant == SP_INDEX) indices[1] = 4;
  if (variant == SP_NEGATIVE) indices[0] = -1;
  int levels = variant == SP_BLOCK ? 3 : 2;
  tm_node *dms[3];
  for (int l = 0; l < levels; l++) {
    tm_node *dm = dms[l] = tm_table(g.b);
    if (l == 1) {
      tm_i8(dm, 0, 1); /* SPARSE_CSR */
      sparse_index_vector(g.b, dm, 2, segments, variant == SP_SEGMENT_COUNT ? 2 : 3,
                          variant == SP_UINT8);
      if (variant != SP_NO_INDICES)
        sparse_index_vector(g.b, dm, 4, indices, 3, variant == SP_UINT8);
    } else {
      tm_i8(dm, 0, variant == SP_FORMAT ? 7 : 0); /* DENSE */
      tm_i32(dm, 1, l == 2 ? 3 : variant == SP_DENSE_SIZE ? 5 : 2);
    }
  }
  tm_node *sparsity = tm_table(g.b);
  tm_ref(sparsity, 0, tm_vec_i32(g.b, order, (size_t)levels)); /* traversal_order */
  if (variant == SP_BLOCK) {
    int32_t block_map[1] = {1};
    tm_ref(sparsity, 1, tm_vec_i32(g.b, block_map, 1));
  }
  tm_ref(sparsity, 2, tm_tvec(g.b, dms, (size_t)levels)); /* dim_metadata */
  tm_ref(g.tensors[k], 6, sparsity);
  int32_t kd = k;
  if (variant != SP_ADD_READS) {
    kd = tm_g_tensor(&g, "k_dense", TM_F32, shape, 2);
    tm_g_op(&g, 124 /* DENSIFY */, &k, 1, &kd, 1, 0, NULL);
  }
  int32_t y = tm_g_tensor(&g, "y", TM_F32, shape, 2), ins[2] = {x, kd};
  tm_g_op(&g, OP_ADD, ins, 2, &y, 1, 0, NULL);
  return graph_finish(&g, &x, 1, &y, 1, size);
}

/* x[1,4,4,2] -CONV_2D (3 filters 1x1, bias)-> y, with options and bias size given. */
static uint8_t *conv_model(int32_t stride, size_t bias_n, size_t *size) {
  tm_graph g;
  tm_graph_init(&g, tm_new());
  int32_t s_x[4] = {1, 4, 4, 2}, s_w[4] = {3, 1, 1, 2}, s_b[1] = {(int32_t)bias_n};
  float w[6] = {1, 2, 3, 4, 5, 6}, bias[8] = {0};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 4);
  int32_t tw = tm_g_const(&g, "w", TM_F32, s_w, 4, w, sizeof w, NULL);
  int32_t tb = tm_g_const(&g, "b", TM_F32, s_b, 1, bias, bias_n * sizeof(float), NULL);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 4);
  int32_t ins[3] = {x, tw, tb}, outs[1] = {y}, ids[3] = {0, 1, 2}, vals[3] = {1, stride, stride};
  tm_g_op(&g, OP_CONV_2D, ins, 3, outs, 1, OPT_CONV, opts_i32(g.b, 3, ids, vals));
  return graph_finish(&g, &x, 1, &y, 1, size);
}

/* y = OP(x[shape_x] (graph input), c (int32 constant, or a graph input when
 * c_is_input)) with an options table of int32 fields. */
static uint8_t *binary_model(int32_t builtin, const int32_t *sx, size_t rx, int type,
                             const int32_t *c, const int32_t *sc, size_t rc, bool c_is_input,
                             uint8_t opt_type, int nopt, const int32_t *ids, const int32_t *vals,
                             size_t *size) {
  tm_graph g;
  tm_graph_init(&g, tm_new());
  size_t nc = 1;
  for (size_t i = 0; i < rc; i++) nc *= (size_t)sc[i];
  int32_t x = tm_g_tensor(&g, "x", type, sx, rx);
  int32_t k = c_is_input ? tm_g_tensor(&g, "c", TM_I32, sc, rc)
                         : tm_g_const(&g, "c", TM_I32, sc, rc, c, nc * 4, NULL);
  int32_t s_y[1] = {1};
  int32_t y = tm_g_tensor(&g, "y", type, s_y, 1);
  int32_t ins[2] = {x, k}, outs[1] = {y}, gin[2] = {x, k};
  tm_g_op(&g, builtin, ins, 2, outs, 1, opt_type, nopt ? opts_i32(g.b, nopt, ids, vals) : NULL);
  return graph_finish(&g, gin, c_is_input ? 2 : 1, &y, 1, size);
}

static void bug_class_cases(void) {
  const wick_status BAD = WICK_ERR_MALFORMED_MODEL, RUNTIME = WICK_ERR_INVALID_INPUT;
  size_t size;
  uint8_t *bytes;

  /* division by zero: a model-controlled divisor */
  bytes = conv_model(0, 3, &size);
  expect_run("div0: CONV_2D stride 0", bytes, size, NULL, 0, 1, BAD, "stride 0 must be positive");
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[4] = {1, 4, 4, 2};
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 4), y = tm_g_tensor(&g, "y", TM_F32, s_x, 4);
    int32_t ids[5] = {0, 1, 2, 3, 4}, vals[5] = {1, 1, 1, 0, 2};
    tm_g_op(&g, OP_MAX_POOL_2D, &x, 1, &y, 1, OPT_POOL, opts_i32(g.b, 5, ids, vals));
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("div0: MAX_POOL_2D filter width 0", bytes, size, NULL, 0, 1, BAD,
               "filter size 0 must be positive");
  }
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[4] = {1, 4, 4, 2};
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 4), y = tm_g_tensor(&g, "y", TM_F32, s_x, 4);
    int32_t ids[1] = {0}, vals[1] = {0};
    tm_g_op(&g, OP_SPACE_TO_DEPTH, &x, 1, &y, 1, OPT_SPACE_TO_DEPTH, opts_i32(g.b, 1, ids, vals));
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("div0: SPACE_TO_DEPTH block size 0", bytes, size, NULL, 0, 1, BAD,
               "block_size must be >= 1, not 0");
  }
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[2] = {2, 6}, s_0[1] = {1}, one[1] = {1};
    int32_t axis = tm_g_const(&g, "axis", TM_I32, s_0, 0, one, 4, NULL);
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2), y = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
    int32_t ins[2] = {axis, x}, ids[1] = {0}, vals[1] = {0};
    tm_g_op(&g, OP_SPLIT, ins, 2, &y, 1, OPT_SPLIT, opts_i32(g.b, 1, ids, vals));
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("div0: SPLIT num_splits 0", bytes, size, NULL, 0, 1, BAD,
               "num_splits must be positive, not 0");
  }
  {
    const int32_t s4[1] = {4}, in[8] = {7, 8, 9, 10, 1, 0, 2, 3}; /* x, then divisor */
    bytes = binary_model(OP_DIV, s4, 1, TM_I32, NULL, s4, 1, true, 0, 0, NULL, NULL, &size);
    expect_run("div0: int32 DIV by a run-time zero", bytes, size, in, sizeof in, 2, RUNTIME,
               "integer division by zero");
  }

  /* out of bounds: axes, indices, broadcast shapes, bias sizes */
  {
    const int32_t s_x[2] = {2, 3}, two[2] = {0, 1}, s2[1] = {2}, ids[1] = {0}, ax[1] = {5};
    bytes = binary_model(OP_CONCATENATION, s_x, 2, TM_F32, two, s2, 1, false, OPT_CONCAT, 1, ids,
                         ax, &size);
    /* (the second "input" is an int32 constant: the axis must be refused first or the
     * type mismatch named — either way a specific MALFORMED_MODEL, never a read) */
    expect_run("oob: CONCATENATION axis 5 of rank 2", bytes, size, NULL, 0, 1, BAD,
               "axis 5 is outside rank 2");
  }
  {
    const int32_t s_x[2] = {5, 3}, idx[2] = {1, -1}, s2[1] = {2}, ids[1] = {0}, ax[1] = {0};
    bytes =
        binary_model(OP_GATHER, s_x, 2, TM_F32, idx, s2, 1, false, OPT_GATHER, 1, ids, ax, &size);
    expect_run("oob: GATHER constant index -1", bytes, size, NULL, 0, 1, BAD,
               "index -1 (element 1 of the indices) is outside [0, 5)");
    float x[15] = {0};
    uint8_t in[15 * 4 + 8];
    const int32_t bad[2] = {4, 5};
    memcpy(in, x, sizeof x);
    memcpy(in + sizeof x, bad, sizeof bad);
    bytes =
        binary_model(OP_GATHER, s_x, 2, TM_F32, NULL, s2, 1, true, OPT_GATHER, 1, ids, ax, &size);
    expect_run("oob: GATHER run-time index 5 of 5 rows", bytes, size, in, sizeof in, 2, RUNTIME,
               "index 5 (element 1 of the indices) is outside [0, 5)");
    const int32_t ax9[1] = {9};
    bytes =
        binary_model(OP_GATHER, s_x, 2, TM_F32, idx, s2, 1, false, OPT_GATHER, 1, ids, ax9, &size);
    expect_run("oob: GATHER axis 9", bytes, size, NULL, 0, 1, BAD, "axis 9 is outside rank 2");
  }
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_a[2] = {2, 3}, s_b[1] = {4};
    int32_t a = tm_g_tensor(&g, "a", TM_F32, s_a, 2), c = tm_g_tensor(&g, "b", TM_F32, s_b, 1);
    int32_t y = tm_g_tensor(&g, "y", TM_F32, s_a, 2), ins[2] = {a, c};
    tm_g_op(&g, OP_ADD, ins, 2, &y, 1, 0, NULL);
    bytes = graph_finish(&g, ins, 2, &y, 1, &size);
    expect_run("oob: ADD of [2,3] and [4] (no broadcast)", bytes, size, NULL, 0, 1, BAD,
               "shapes [2,3] and [4] do not broadcast");
  }
  bytes = conv_model(1, 5, &size);
  expect_run("oob: CONV_2D bias of 5 for 3 filters", bytes, size, NULL, 0, 1, BAD,
             "bias has 5 elements for 3 output channels");
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[2] = {2, 6}, s_w[2] = {4, 6}, s_b[1] = {6}, s_y[2] = {2, 4};
    float w[24] = {0}, bias[6] = {0};
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
    int32_t tw = tm_g_const(&g, "w", TM_F32, s_w, 2, w, sizeof w, NULL);
    int32_t tb = tm_g_const(&g, "b", TM_F32, s_b, 1, bias, sizeof bias, NULL);
    int32_t y = tm_g_tensor(&g, "y", TM_F32, s_y, 2), ins[3] = {x, tw, tb};
    tm_g_op(&g, OP_FULLY_CONNECTED, ins, 3, &y, 1, 0, NULL);
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("oob: FULLY_CONNECTED bias of 6 for 4 units", bytes, size, NULL, 0, 1, BAD,
               "bias has 6 elements for 4 outputs");
  }
  {
    /* sparsity metadata (Tensor.sparsity, field 6): indices and segments must stay inside
     * the dense shape and the value buffer, or the densify walk would write or read out of
     * bounds; only DENSIFY (and FULLY_CONNECTED weights) may read a sparse tensor */
    static const float dense[8] = {0, 0, 1, 0, 2, 0, 0, 3}, zeros[8] = {0};
    float got[8] = {0};
    bytes = sparse_model(SP_OK, &size);
    expect_run_out("sparse: DENSIFY of a CSR constant", bytes, size, zeros, sizeof zeros, 3,
                   WICK_OK, "", got, sizeof got);
    if (memcmp(got, dense, sizeof dense) != 0) FAIL("sparse: DENSIFY output differs");
    memset(got, 0, sizeof got);
    bytes = sparse_model(SP_UINT8, &size);
    expect_run_out("sparse: DENSIFY, Uint8Vector indices", bytes, size, zeros, sizeof zeros, 3,
                   WICK_OK, "", got, sizeof got);
    if (memcmp(got, dense, sizeof dense) != 0) FAIL("sparse: DENSIFY (uint8) output differs");
    static const struct {
      int variant;
      const char *what, *needle;
    } cases[] = {
        {SP_SEGMENT, "oob: sparse segment out of range",
         "(k).sparsity.dim_metadata[1].array_segments[1] = 9 is out of range"},
        {SP_INDEX, "oob: sparse index beyond dense size",
         "(k).sparsity.dim_metadata[1].array_indices[1] = 4 is beyond the level's size 4"},
        {SP_VALUES, "oob: sparse value count mismatch",
         "holds 16 bytes but the sparsity metadata stores 3 values"},
        {SP_SEGMENT_COUNT, "oob: sparse segment count",
         "array_segments has 2 entries; the level above has 2 positions"},
        {SP_NEGATIVE, "oob: sparse negative Int32 index",
         "array_indices.values[0] is negative (-1)"},
        {SP_FORMAT, "oob: sparse level format 7", "dim_metadata[0].format 7 is neither DENSE"},
        {SP_ORDER, "oob: sparse traversal order repeats", "traversal_order[1]: 0 appears twice"},
        {SP_BLOCK, "oob: sparse block does not divide",
         "dim 1 of size 4 is not a multiple of its block size 3"},
        {SP_DENSE_SIZE, "oob: sparse DENSE level size",
         "dim_metadata[0].dense_size 5 differs from the level's size 2"},
        {SP_NO_INDICES, "oob: sparse CSR level without indices",
         "dim_metadata[1].array_indices is absent"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      bytes = sparse_model(cases[i].variant, &size);
      expect_run(cases[i].what, bytes, size, NULL, 0, 0, BAD, cases[i].needle);
    }
    bytes = sparse_model(SP_ADD_READS, &size);
    expect_run("sparse: ADD reads a sparse constant", bytes, size, NULL, 0, 1,
               WICK_ERR_UNSUPPORTED_OP,
               "input 1 (k) is a sparse tensor; wick reads sparse tensors only through DENSIFY");
  }

  /* null dereference: a read-only tensor whose buffer is empty; a missing variable input */
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    g.buffers[g.nbuf++] = tm_buffer(g.b, NULL, 0); /* buffer 1: exists, holds nothing */
    int32_t s_x[2] = {2, 6}, s_w[2] = {4, 6}, s_y[2] = {2, 4};
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
    g.tensors[g.nt] = tm_tensor(g.b, "w", TM_F32, s_w, 2, 1, NULL);
    int32_t tw = (int32_t)g.nt++;
    int32_t y = tm_g_tensor(&g, "y", TM_F32, s_y, 2), ins[3] = {x, tw, -1};
    tm_g_op(&g, OP_FULLY_CONNECTED, ins, 3, &y, 1, 0, NULL);
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("null: weights in an empty buffer", bytes, size, NULL, 0, 0, BAD,
               "reads tensor 1 (w) before any operator writes it");
  }
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[2] = {1, 3}, s_wf[2] = {4, 3}, s_wt[2] = {4, 2}, s_y[2] = {1, 4};
    float wf[12] = {0}, wt[8] = {0};
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
    int32_t f = tm_g_const(&g, "wf", TM_F32, s_wf, 2, wf, sizeof wf, NULL);
    int32_t t = tm_g_const(&g, "wt", TM_F32, s_wt, 2, wt, sizeof wt, NULL);
    int32_t y = tm_g_tensor(&g, "y", TM_F32, s_y, 2), ins[5] = {x, f, t, -1, -1};
    int32_t ids[1] = {0}, vals[1] = {1}; /* SVDFOptions.rank */
    tm_g_op(&g, OP_SVDF, ins, 5, &y, 1, 18, opts_i32(g.b, 1, ids, vals));
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("null: SVDF without its variable state", bytes, size, NULL, 0, 1, BAD,
               "required but absent");
  }

  /* integer overflow in sizes: concatenated dims summing past INT32_MAX */
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_a[2] = {0, 2000000000}, s_y[2] = {0, 1};
    int32_t a = tm_g_tensor(&g, "a", TM_F32, s_a, 2), c = tm_g_tensor(&g, "b", TM_F32, s_a, 2);
    int32_t y = tm_g_tensor(&g, "y", TM_F32, s_y, 2), ins[2] = {a, c};
    int32_t ids[1] = {0}, vals[1] = {1};
    tm_g_op(&g, OP_CONCATENATION, ins, 2, &y, 1, OPT_CONCAT, opts_i32(g.b, 1, ids, vals));
    bytes = graph_finish(&g, ins, 2, &y, 1, &size);
    expect_run("overflow: CONCATENATION dims 2e9 + 2e9", bytes, size, NULL, 0, 1, BAD,
               "the concatenated dimension overflows");
  }

  /* unbounded allocation / loop: an output sized by a model value, a slice stride of 0 */
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s0[1] = {1}, zero[1] = {0}, lim[1] = {2000000000}, one[1] = {1};
    int32_t a = tm_g_const(&g, "start", TM_I32, s0, 0, zero, 4, NULL);
    int32_t l = tm_g_const(&g, "limit", TM_I32, s0, 0, lim, 4, NULL);
    int32_t d = tm_g_const(&g, "delta", TM_I32, s0, 0, one, 4, NULL);
    int32_t y = tm_g_tensor(&g, "y", TM_I32, s0, 1), ins[3] = {a, l, d};
    tm_g_op(&g, OP_RANGE, ins, 3, &y, 1, 0, NULL);
    bytes = graph_finish(&g, NULL, 0, &y, 1, &size);
    /* 8e9 bytes: refused by the cap, or (32-bit size_t) as a size that cannot exist */
    expect_run("unbounded: RANGE of 2e9 under a 64 MiB cap", bytes, size, NULL, 0, 1,
               WICK_ERR_OUT_OF_MEMORY,
               sizeof(size_t) > 4 ? "out of memory allocating 8000000000 bytes"
                                  : "byte size overflows size_t");
  }
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[2] = {5, 6}, s2[1] = {2}, b0[2] = {0, 0}, e[2] = {5, 6}, st0[2] = {1, 0};
    int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
    int32_t tb = tm_g_const(&g, "begin", TM_I32, s2, 1, b0, 8, NULL);
    int32_t te = tm_g_const(&g, "end", TM_I32, s2, 1, e, 8, NULL);
    int32_t ts = tm_g_const(&g, "strides", TM_I32, s2, 1, st0, 8, NULL);
    int32_t y = tm_g_tensor(&g, "y", TM_F32, s_x, 2), ins[4] = {x, tb, te, ts};
    tm_g_op(&g, OP_STRIDED_SLICE, ins, 4, &y, 1, 0, NULL);
    bytes = graph_finish(&g, &x, 1, &y, 1, &size);
    expect_run("unbounded: STRIDED_SLICE stride 0", bytes, size, NULL, 0, 1, BAD,
               "strides[1] is 0");
  }

  /* uninitialised read: an int8 op whose tensors carry no quantization */
  {
    tm_graph g;
    tm_graph_init(&g, tm_new());
    int32_t s_x[2] = {2, 4};
    int32_t a = tm_g_tensor(&g, "a", TM_I8, s_x, 2), y = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
    g.ops[g.nops++] =
        tm_operator(g.b, tm_g_opcode(&g, 6 /* DEQUANTIZE */, 2), &a, 1, &y, 1, 0, NULL);
    bytes = graph_finish(&g, &a, 1, &y, 1, &size);
    expect_run("uninit: DEQUANTIZE of int8 without quantization", bytes, size, NULL, 0, 1, BAD,
               "input (int8) has no quantization parameters");
  }

  /* misaligned reads: a float constant at an odd file offset is copied, not read in place */
  {
    knobs k = default_knobs();
    k.buffer_external = true;
    k.buf_offset = 0;
    k.buf_size = 16;
    size_t base;
    uint8_t *probe = build_knobs(&k, &base);
    free(probe);
    k.buf_offset = ((base + 7) & ~(size_t)7) + 1; /* odd: misaligned for float */
    uint8_t *model = build_knobs(&k, &size);
    uint8_t *file = calloc(1, (size_t)k.buf_offset + 16);
    if (file == NULL) abort();
    memcpy(file, model, size);
    const float kv[4] = {10, 20, 30, 40}, x[4] = {1, 2, 3, 4};
    memcpy(file + k.buf_offset, kv, sizeof kv);
    free(model);
    float y[4] = {0};
    expect_run_out("misaligned float constant (offset odd)", file, (size_t)k.buf_offset + 16, x,
                   sizeof x, 3, WICK_OK, "", y, sizeof y);
    if (y[0] != 11 || y[1] != 22 || y[2] != 33 || y[3] != 44)
      FAIL("misaligned constant: x + k gave %g %g %g %g, want 11 22 33 44", y[0], y[1], y[2], y[3]);
  }
}

/* A chain of `n` subgraphs, each but the last calling the next through a
 * STABLEHLO_COMPOSITE (the last adds), `total` subgraphs in all (the rest are
 * unused copies of the last). */
static uint8_t *composite_chain(int n, int total, size_t *size) {
  tm_builder *b = tm_new();
  int32_t s_x[1] = {4}, in[1] = {0}, out[1] = {1}, add_in[2] = {0, 0};
  tm_node *codes[2] = {tm_opcode(b, 0 /* ADD */, 1),
                       tm_opcode(b, 206 /* STABLEHLO_COMPOSITE */, 1)};
  tm_node *buf = tm_buffer(b, NULL, 0);
  tm_node **sgs = malloc((size_t)total * sizeof *sgs);
  if (sgs == NULL) abort();
  for (int i = 0; i < total; i++) {
    tm_node *t[2] = {tm_tensor(b, "x", TM_F32, s_x, 1, 0, NULL),
                     tm_tensor(b, "y", TM_F32, s_x, 1, 0, NULL)};
    tm_node *op;
    if (i + 1 < n) {
      tm_node *o = tm_table(b); /* StableHLOCompositeOptions: name 0, decomposition 1 */
      tm_ref(o, 0, tm_str(b, "nest"));
      tm_i32(o, 1, i + 1);
      op = tm_operator(b, 1, in, 1, out, 1, 0, NULL);
      tm_u8(op, 11, 21);
      tm_ref(op, 12, o);
    } else {
      op = tm_operator(b, 0, add_in, 2, out, 1, 0, NULL);
    }
    sgs[i] = tm_subgraph(b, t, 2, in, 1, out, 1, &op, 1);
  }
  tm_node *model = tm_model(b, 3, codes, 2, sgs, (size_t)total, &buf, 1, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size);
  tm_free(b);
  free(sgs);
  return bytes;
}

/* Caps on nesting and subgraph count (docs/reliability.md, rule 5: no recursion whose
 * depth the model controls; bounded tables). */
static void nesting_cases(void) {
  size_t size;
  /* 16 subgraphs on the call stack (the root and 15 calls) is the maximum */
  uint8_t *bytes = composite_chain(16, 16, &size);
  expect("16 subgraphs nested by composite calls", bytes, size, 3, WICK_OK, "");
  free(bytes);
  bytes = composite_chain(17, 17, &size);
  expect("17 subgraphs nested by composite calls", bytes, size, 0, WICK_ERR_MALFORMED_MODEL,
         "subgraph calls nest deeper than 16");
  free(bytes);
  bytes = composite_chain(1, 4097, &size);
  expect("4097 subgraphs", bytes, size, 0, WICK_ERR_MALFORMED_MODEL,
         "Model.subgraphs: 4097 subgraphs exceed the cap of 4096");
  free(bytes);
}

static void targeted_cases(void) {
  printf("targeted malformations:\n");
  const wick_status BAD = WICK_ERR_MALFORMED_MODEL;
  knobs k = default_knobs();
  expect_knobs("valid baseline model", &k, 3, WICK_OK, "");

  static const uint8_t eight[8] = {8, 0, 0, 0, 'T', 'F', 'L', '3'};
  expect("8-byte file (root offset 8 + TFL3)", eight, 8, 0, BAD,
         "root table offset is out of bounds");
  static const uint8_t eight4[8] = {4, 0, 0, 0, 'T', 'F', 'L', '3'};
  expect("8-byte file (root offset 4 + TFL3)", eight4, 8, 0, BAD,
         "root table offset is out of bounds");
  static const uint8_t eight0[8] = {0, 0, 0, 0, 'T', 'F', 'L', '3'};
  expect("8-byte file (root offset 0 + TFL3)", eight0, 8, 0, BAD,
         "root table offset is out of bounds");
  expect("empty file", eight, 0, 0, BAD, "too short");
  expect("7-byte file", eight, 7, 0, BAD, "too short");

  {
    size_t size;
    uint8_t *bytes = build_knobs(&k, &size);
    memcpy(bytes + 4, "TFL2", 4);
    expect("wrong file identifier", bytes, size, 0, BAD, "file identifier is not \"TFL3\"");
    free(bytes);
  }
  k = default_knobs();
  k.version = 2;
  expect_knobs("Model.version 2", &k, 0, BAD, "Model.version is 2; wick reads schema version 3");
  k.version = 0xFFFFFFFFu;
  expect_knobs("Model.version 0xFFFFFFFF", &k, 0, BAD, "Model.version is 4294967295");

  k = default_knobs();
  k.buffer_external = true;
  k.buf_offset = 16;
  k.buf_size = UINT64_MAX - 7; /* offset + size wraps to 8 */
  expect_knobs("Buffer.offset+size wraps (size huge)", &k, 0, BAD,
               "Model.buffers[1]: offset 16 + size 18446744073709551608 lies outside");
  k.buf_offset = UINT64_MAX - 15;
  k.buf_size = 32; /* wraps to 16 */
  expect_knobs("Buffer.offset+size wraps (offset huge)", &k, 0, BAD,
               "Model.buffers[1]: offset 18446744073709551600 + size 32 lies outside");
  k.buf_offset = 8;
  k.buf_size = 16; /* legal: inside the file, but 16 bytes of whatever lies there */
  expect_knobs("Buffer.offset/size inside the file", &k, 3, WICK_OK, "");

  k = default_knobs();
  k.k_buffer = 99;
  expect_knobs("tensor buffer index out of range", &k, 0, BAD,
               "subgraphs[0].tensors[1].buffer 99 is out of range (2 buffers)");
  k = default_knobs();
  k.add_in1 = 77;
  expect_knobs("operator input index out of range", &k, 0, BAD,
               "subgraphs[0].operators[0].inputs[1] = 77 is out of range (4 tensors)");
  k.add_in1 = -2;
  expect_knobs("operator input index -2", &k, 0, BAD,
               "subgraphs[0].operators[0].inputs[1] = -2 is out of range");
  k.add_in1 = -1;
  expect_knobs("required input given as -1 (absent)", &k, 1, BAD,
               "ADD (operator 0): input 1 is required but absent");
  k = default_knobs();
  k.opcode_index = 5;
  expect_knobs("opcode index out of range", &k, 0, BAD,
               "subgraphs[0].operators[0].opcode_index 5 is out of range (3 codes)");
  k = default_knobs();
  k.k_bytes = 12;
  expect_knobs("constant byte size != shape x element size", &k, 0, BAD,
               "subgraphs[0].tensors[1] (k): constant buffer 1 holds 12 bytes but the shape "
               "needs 4 elements of 4 bytes");
  k.k_bytes = 20;
  expect_knobs("constant byte size too large", &k, 0, BAD, "holds 20 bytes");
  k = default_knobs();
  k.k_rank = 9;
  expect_knobs("rank 9", &k, 0, BAD,
               "subgraphs[0].tensors[1].shape: rank 9 exceeds wick's maximum 8");
  k.k_rank = 8; /* [4,1,1,1,1,1,1,1] broadcasts against [1,4]: legal */
  expect_knobs("rank 8 (the maximum) is accepted", &k, 3, WICK_OK, "");
  k = default_knobs();
  k.both_io = true;
  expect_knobs("tensor both input and output of one op", &k, 0, BAD,
               "subgraphs[0].operators[0] (ADD): tensor 0 is both an input and an output");
  k = default_knobs();
  k.self_call = 1;
  expect_knobs("STABLEHLO_COMPOSITE calls its own subgraph", &k, 0, BAD,
               "subgraphs[0].operators[1] (STABLEHLO_COMPOSITE): subgraph 0 calls itself");
  k.self_call = 2;
  expect_knobs("WHILE whose body is its own subgraph", &k, 0, BAD,
               "subgraphs[0].operators[1] (WHILE): subgraph 0 calls itself");
  k.self_call = 3;
  expect_knobs("subgraph 0 -> 1 -> 0 cycle", &k, 0, BAD, "subgraph 0 calls itself (a cycle)");
  k.self_call = 4;
  expect_knobs("WHILE cond subgraph index out of range", &k, 0, BAD,
               "subgraphs[0].operators[1] (WHILE) refers to subgraph 5 of 1");
  k = default_knobs();
  k.unwritten = true;
  expect_knobs("op reads a tensor never written", &k, 0, BAD,
               "subgraphs[0].operators[0] (ADD) reads tensor 3 (never_written) before any "
               "operator writes it");
  k = default_knobs();
  k.k_scales = 3;
  expect_knobs("per-axis quantization: 3 scales for 4 channels", &k, 0, BAD,
               "subgraphs[0].tensors[1].quantization: 3 scales for dimension 0 of size 4");
  k.k_scales = 4;
  k.k_zero_points = 2;
  expect_knobs("per-axis quantization: 4 scales, 2 zero points", &k, 0, BAD,
               "subgraphs[0].tensors[1].quantization: 4 scales but 2 zero points");
  k = default_knobs();
  k.sig_input = 0;
  expect_knobs("signature naming the subgraph input", &k, 3, WICK_OK, "");
  k.sig_input = 3;
  expect_knobs("signature input that is not a subgraph input", &k, 0, BAD,
               "Model.signature_defs[0].inputs[0].tensor_index 3 is not one of subgraph 0's "
               "inputs");
  {
    size_t size;
    uint8_t *bytes = tm_demo_while(&size);
    expect("tiny WHILE loop (3 iterations) runs", bytes, size, 3, WICK_OK, "");
    free(bytes);
  }
  constant_input_case();
  bool_input_case();
  shared_table_case();
  reshape_rank_case(false);
  reshape_rank_case(true);
  stride_overflow_cases();
  bug_class_cases();
  nesting_cases();
}

/* ---------------------------------------------------------------- regressions */

static void replay_regressions(void) {
  const char *dir = getenv("WICK_FUZZ_REGRESSIONS");
  if (dir == NULL) dir = "tests/fuzz/regressions";
  char **files;
  size_t n = list_dir(dir, NULL, &files);
  printf("regressions: %zu files in %s\n", n, dir);
  for (size_t i = 0; i < n; i++) {
    size_t size;
    uint8_t *bytes = read_file(files[i], &size);
    if (bytes == NULL) {
      FAIL("cannot read %s", files[i]);
    } else {
      snprintf(g_case, sizeof g_case, "regression %s", files[i]);
      int phase = run_promise(bytes, size);
      printf("  %-60s %s\n", files[i],
             phase == 3   ? "runs"
             : phase == 2 ? "invoke error"
             : phase == 1 ? "create error"
                          : "load error");
      free(bytes);
    }
    free(files[i]);
  }
  free(files);
}

/* ---------------------------------------------------------------- main */

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  install_crash_reporting();
  uint64_t start = now_ms();
  const char *budget = getenv("WICK_MALFORMED_BUDGET_MS");
  g_budget_ms = budget ? (uint64_t)strtoull(budget, NULL, 10) : (SANITIZED ? 2000 : 600);

  targeted_cases();
  replay_regressions();

  printf("mutations (budget %llu ms per model and family):\n", (unsigned long long)g_budget_ms);
  size_t size;
  uint8_t *bytes = tm_demo_chain(&size);
  mutate_model("tiny:chain", bytes, size);
  free(bytes);
  bytes = tm_demo_composite(&size);
  mutate_model("tiny:composite", bytes, size);
  free(bytes);
  bytes = tm_demo_while(&size);
  mutate_model("tiny:while", bytes, size);
  g_all_nnapi = 1; /* the same loop, every mutant through the NNAPI delegate's WHILE */
  mutate_model("tiny:while (all NNAPI)", bytes, size);
  g_all_nnapi = 0;
  free(bytes);
  bytes = sparse_model(SP_UINT8, &size); /* DENSIFY of a CSR constant, Uint8Vector indices */
  mutate_model("tiny:sparse", bytes, size);
  free(bytes);

  const char *dir = getenv("WICK_SHARED_MODELS");
  char **files = NULL;
  size_t n = dir ? list_dir(dir, ".tflite", &files) : 0;
  if (n == 0) {
    printf("  shared models: skipped (WICK_SHARED_MODELS %s%s)\n",
           dir ? "has no .tflite: " : "is unset", dir ? dir : "");
  }
  for (size_t i = 0; i < n; i++) {
    bytes = read_file(files[i], &size);
    if (bytes == NULL) {
      FAIL("cannot read %s", files[i]);
    } else {
      const char *base = strrchr(files[i], '/');
      mutate_model(base ? base + 1 : files[i], bytes, size);
      free(bytes);
    }
    free(files[i]);
  }
  free(files);

  printf(
      "test_malformed: %ld targeted, %ld mutated inputs (%ld loaded, %ld created, %ld ran, "
      "%ld too heavy to run, %ld cancelled after %d ms), %ld failures, %.1f s%s\n",
      g_targeted, g_cases, g_loaded, g_created, g_invoked, g_skipped_heavy, g_cancelled,
      WATCHDOG_MS, g_failures, (double)(now_ms() - start) / 1000.0,
      SANITIZED ? " (sanitized build)" : "");
  return g_failures ? 1 : 0;
}
