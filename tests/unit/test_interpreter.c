/*
 * test_interpreter.c — the interpreter and the arena planner, through the
 * public API on models built in the test (tiny_model.h):
 *
 *   - random DAGs of ADD/MUL/SUB whose results are checked against a direct
 *     evaluation: if the planner let two live tensors share memory, some
 *     output would be wrong;
 *   - a long chain reuses memory: its arena stays at two activations plus
 *     the input and output, not one per operator;
 *   - the memory cap: a cap below the need fails cleanly with
 *     WICK_ERR_OUT_OF_MEMORY, a cap at the reported need works;
 *   - cancellation: a cancel before invoke makes it return WICK_ERR_CANCELLED,
 *     and the next invoke runs normally;
 *   - several interpreters over one model give identical results;
 *   - resizing one input keeps the values already written to the others
 *     (and a failed resize keeps them all), under an allocator that fills
 *     every new block with NaN bytes so a lost value cannot pass by luck;
 *   - option structs are read by their struct_size: an older (smaller) struct
 *     works with defaults for the rest, a zero or too-small size and a newer
 *     struct asking for something unknown fail with a message; the model's
 *     log callback hears the load;
 *   - share_variables_with: two signatures run by two interpreters see one
 *     resource variable only when the second shares the first's state; reset
 *     through either clears it; another model's interpreter, or one that
 *     itself shares, is refused; a sharer borrows the owner's packed
 *     FULLY_CONNECTED weights (same outputs, no second copy), and the owner
 *     refuses a resize while it has sharers;
 *   - a model loaded from its file gives back the file pages of the weights it packed (their
 *     mapping's resident size drops below the weights' bytes) and computes what the same bytes
 *     loaded from a buffer compute, before and after a resize prepares it again; float16
 *     weights folded to float32 at prepare lose that copy once packed (same outputs);
 *   - the op tables agree with op_table.inc's lines and the schema's codes.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "tiny_model.h"
#include "wick/wick.h"

static int failures = 0, checks = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    checks++;                                              \
    if (!(cond)) {                                         \
      failures++;                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

enum { N = 64 }; /* elements per activation */

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_u32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static void random_dag(tm_dag *d) {
  static const int ops[3] = {TM_OP_ADD, TM_OP_MUL, TM_OP_SUB};
  d->nops = 4 + (int)(next_u32() % 24);
  for (int i = 0; i < d->nops; i++) {
    d->op[i] = ops[next_u32() % 3];
    /* Operands among the last `span` values: mostly recent ones (short
     * lifetimes), sometimes any earlier one (long lifetimes). */
    int span = (next_u32() % 4 == 0) ? i + 1 : (i + 1 < 3 ? i + 1 : 3);
    d->a[i] = i - (int)(next_u32() % (uint32_t)span);
    d->b[i] = i - (int)(next_u32() % (uint32_t)span);
  }
  d->nout = 1 + (int)(next_u32() % 3);
  d->outs[0] = d->nops; /* the last result is always an output */
  for (int i = 1; i < d->nout; i++) d->outs[i] = 1 + (int)(next_u32() % (uint32_t)d->nops);
}

static void run_dag_case(int which) {
  tm_dag d;
  random_dag(&d);
  size_t size;
  uint8_t *bytes = tm_dag_model(&d, N, &size);
  wick_error_info err;
  wick_model *model;
  wick_interpreter *it;
  wick_status st = wick_model_load_buffer(bytes, size, NULL, &err, &model);
  CHECK(st == WICK_OK, "dag %d: load: %s", which, err.message);
  if (st != WICK_OK) {
    free(bytes);
    return;
  }
  st = wick_interpreter_create(model, NULL, NULL, &err, &it);
  CHECK(st == WICK_OK, "dag %d: create: %s", which, err.message);
  if (st == WICK_OK) {
    float x[N];
    /* Values near 1 keep products finite over long chains. */
    for (int k = 0; k < N; k++) x[k] = 1.0f + (float)((int)(next_u32() % 200) - 100) / 1000.0f;
    static float vals[TM_DAG_MAX_OPS + 1][N];
    tm_dag_evaluate(&d, x, N, vals[0]);
    CHECK(wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x) == WICK_OK,
          "dag %d: copy input", which);
    st = wick_interpreter_invoke(it);
    CHECK(st == WICK_OK, "dag %d: invoke: %s", which, wick_interpreter_last_error(it));
    for (int o = 0; o < d.nout && st == WICK_OK; o++) {
      const float *got = wick_tensor_data(wick_interpreter_output(it, (size_t)o));
      const float *want = vals[d.outs[o]];
      int bad = -1;
      for (int k = 0; k < N; k++)
        if (!(got[k] == want[k] || (isnan(got[k]) && isnan(want[k])))) bad = k;
      CHECK(bad < 0, "dag %d (%d ops): output %d element %d: got %g want %g", which, d.nops, o, bad,
            bad >= 0 ? (double)got[bad] : 0.0, bad >= 0 ? (double)want[bad] : 0.0);
    }
    wick_interpreter_destroy(it);
  }
  wick_model_destroy(model);
  free(bytes);
}

static void test_chain_reuses_memory(void) {
  tm_dag d = {0};
  d.nops = 24;
  for (int i = 0; i < d.nops; i++) {
    d.op[i] = TM_OP_ADD;
    d.a[i] = i; /* previous result */
    d.b[i] = i;
  }
  d.nout = 1;
  d.outs[0] = d.nops;
  size_t size;
  uint8_t *bytes = tm_dag_model(&d, N, &size);
  wick_error_info err;
  wick_model *model;
  wick_interpreter *it;
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &model) == WICK_OK, "chain load: %s",
        err.message);
  CHECK(wick_interpreter_create(model, NULL, NULL, &err, &it) == WICK_OK, "chain create: %s",
        err.message);
  size_t arena = wick_interpreter_arena_bytes(it);
  size_t one = N * sizeof(float);
  /* input, output and two ping-pong intermediates at most (64-byte aligned). */
  CHECK(arena <= 4 * one, "chain arena %zu bytes > 4 activations of %zu", arena, one);
  CHECK(arena >= 2 * one, "chain arena %zu bytes is too small to be right", arena);

  float x[N], want[N];
  for (int k = 0; k < N; k++) x[k] = (float)k / 64.0f, want[k] = x[k] * (float)(1 << 24);
  wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x);

  /* Cancellation: a cancel before invoke stops it; the next invoke runs. */
  wick_interpreter_cancel(it);
  CHECK(wick_interpreter_invoke(it) == WICK_ERR_CANCELLED, "cancelled invoke did not stop");
  CHECK(strstr(wick_interpreter_last_error(it), "cancel") != NULL, "cancel message: %s",
        wick_interpreter_last_error(it));
  CHECK(wick_interpreter_invoke(it) == WICK_OK, "invoke after cancel: %s",
        wick_interpreter_last_error(it));
  const float *got = wick_tensor_data(wick_interpreter_output(it, 0));
  CHECK(memcmp(got, want, sizeof want) == 0, "chain result differs");

  /* The kernel each op runs: a float ADD of equal shapes records its path ("optimized", or
   * "reference" on a CPU without vector kernels); the forced reference kernels say so. */
  for (size_t i = 0; i < wick_interpreter_op_count(it); i++) {
    const char *kind = wick_interpreter_op_kernel(it, i);
    CHECK(kind != NULL && (strcmp(kind, "optimized") == 0 || strcmp(kind, "reference") == 0),
          "op %zu kernel %s", i, kind ? kind : "(null)");
    CHECK(wick_interpreter_op_kernel_name(it, i) != NULL, "op %zu kernel name NULL", i);
  }
  CHECK(wick_interpreter_op_kernel(it, 9999) == NULL &&
            wick_interpreter_op_kernel_name(it, 9999) == NULL &&
            wick_interpreter_op_kernel(NULL, 0) == NULL,
        "op_kernel out of range must be NULL");
  {
    wick_interpreter_options ro = wick_interpreter_options_default();
    ro.force_reference_kernels = 1;
    wick_interpreter *ref;
    CHECK(wick_interpreter_create(model, NULL, &ro, &err, &ref) == WICK_OK, "reference: %s",
          err.message);
    if (ref) {
      CHECK(strcmp(wick_interpreter_op_kernel(ref, 0), "reference") == 0,
            "forced reference kernels, op 0 reports %s", wick_interpreter_op_kernel(ref, 0));
      wick_interpreter_destroy(ref);
    }
  }

  /* The memory cap: far too small fails cleanly; generous works. */
  wick_interpreter_options o = wick_interpreter_options_default();
  wick_interpreter *capped;
  o.memory_limit_bytes = 512;
  CHECK(wick_interpreter_create(model, NULL, &o, &err, &capped) == WICK_ERR_OUT_OF_MEMORY,
        "a 512-byte cap should fail");
  CHECK(capped == NULL && err.message[0] != 0, "failed create must set NULL and a message");
  o.memory_limit_bytes = 1 << 20;
  CHECK(wick_interpreter_create(model, NULL, &o, &err, &capped) == WICK_OK, "1 MiB cap: %s",
        err.message);
  if (capped) {
    wick_tensor_copy_from(wick_interpreter_input(capped, 0), x, sizeof x);
    CHECK(wick_interpreter_invoke(capped) == WICK_OK, "capped invoke");
    CHECK(memcmp(wick_tensor_data(wick_interpreter_output(capped, 0)), want, sizeof want) == 0,
          "two interpreters over one model disagree");
    wick_interpreter_destroy(capped);
  }
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  free(bytes);
}

/* wick_model_options.memory_limit_bytes: caps below what the model needs fail
 * with WICK_ERR_OUT_OF_MEMORY naming the cap, caps from some threshold up
 * succeed (monotonic), the copy made by copy_buffer counts, and the file
 * path honours the cap too. */
/* Writes a model's bytes to a new file named after the template `path` (its XXXXXX replaced),
 * counting a failure; true when the file holds the model. */
static bool write_temp_model(char *path, const uint8_t *bytes, size_t size) {
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return false;
  const bool written = write(fd, bytes, size) == (ssize_t)size;
  CHECK(written, "write temp model");
  close(fd);
  return true;
}

static void test_model_load_cap(void) {
  tm_dag d = {0};
  d.nops = 24;
  for (int i = 0; i < d.nops; i++) d.op[i] = TM_OP_ADD, d.a[i] = i, d.b[i] = i;
  d.nout = 1;
  d.outs[0] = d.nops;
  size_t size;
  uint8_t *bytes = tm_dag_model(&d, N, &size);
  wick_error_info err;
  wick_model *model = NULL;
  wick_model_options mo = wick_model_options_default();
  CHECK(mo.memory_limit_bytes == 0, "default load cap must be 0 (none)");

  /* The smallest cap that loads, found by bisection; everything below fails cleanly. */
  size_t lo = 1, hi = (size_t)1 << 20; /* lo fails, hi loads */
  mo.memory_limit_bytes = lo;
  CHECK(wick_model_load_buffer(bytes, size, &mo, &err, &model) == WICK_ERR_OUT_OF_MEMORY,
        "a 1-byte load cap should fail");
  CHECK(model == NULL && strstr(err.message, "memory_limit_bytes (1)") != NULL,
        "1-byte cap: model %p, message \"%s\"", (void *)model, err.message);
  mo.memory_limit_bytes = hi;
  CHECK(wick_model_load_buffer(bytes, size, &mo, &err, &model) == WICK_OK, "1 MiB load cap: %s",
        err.message);
  wick_model_destroy(model);
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    mo.memory_limit_bytes = mid;
    model = NULL;
    wick_status st = wick_model_load_buffer(bytes, size, &mo, &err, &model);
    if (st == WICK_OK) {
      hi = mid;
      wick_model_destroy(model);
    } else {
      CHECK(st == WICK_ERR_OUT_OF_MEMORY && model == NULL &&
                strstr(err.message, "memory_limit_bytes") != NULL,
            "cap %zu: %s: %s", mid, wick_status_string(st), err.message);
      lo = mid;
    }
  }
  size_t need = hi;
  CHECK(need > 1024, "a model with 25 tensors and 24 operators loads in %zu bytes?", need);
  for (size_t cap = need - 64; cap < need + 64; cap += 8) { /* monotonic around the threshold */
    mo.memory_limit_bytes = cap;
    model = NULL;
    wick_status st = wick_model_load_buffer(bytes, size, &mo, &err, &model);
    CHECK((st == WICK_OK) == (cap >= need), "cap %zu (threshold %zu): %s", cap, need,
          wick_status_string(st));
    wick_model_destroy(model);
  }

  /* A model loaded under its cap runs. */
  mo.memory_limit_bytes = need;
  model = NULL;
  CHECK(wick_model_load_buffer(bytes, size, &mo, &err, &model) == WICK_OK, "load at cap: %s",
        err.message);
  wick_interpreter *it = NULL;
  CHECK(model && wick_interpreter_create(model, NULL, NULL, &err, &it) == WICK_OK,
        "create after a capped load: %s", err.message);
  if (it) CHECK(wick_interpreter_invoke(it) == WICK_OK, "invoke after a capped load");
  wick_interpreter_destroy(it);
  wick_model_destroy(model);

  /* copy_buffer: the copy counts against the same cap. */
  mo.copy_buffer = 1;
  model = NULL;
  CHECK(wick_model_load_buffer(bytes, size, &mo, &err, &model) == WICK_ERR_OUT_OF_MEMORY,
        "copy_buffer at the no-copy threshold should not fit");
  CHECK(strstr(err.message, "memory_limit_bytes") != NULL, "copy message: %s", err.message);
  mo.memory_limit_bytes = need + size + 64;
  CHECK(wick_model_load_buffer(bytes, size, &mo, &err, &model) == WICK_OK,
        "copy_buffer with room for the copy: %s", err.message);
  wick_model_destroy(model);
  mo.copy_buffer = 0;

  /* The file path: the mapping counts like the copy (threshold need + size). */
  char path[] = "/tmp/wick-test-load-cap-XXXXXX";
  if (write_temp_model(path, bytes, size)) {
    mo.memory_limit_bytes = need;
    model = NULL;
    CHECK(wick_model_load_file(path, &mo, &err, &model) == WICK_ERR_OUT_OF_MEMORY,
          "file load without room for the mapping should fail");
    CHECK(strstr(err.message, "memory_limit_bytes") != NULL, "file message: %s", err.message);
    mo.memory_limit_bytes = size - 1;
    CHECK(wick_model_load_file(path, &mo, &err, &model) == WICK_ERR_OUT_OF_MEMORY,
          "a file bigger than the cap should fail: %s", err.message);
    mo.memory_limit_bytes = need + size;
    CHECK(wick_model_load_file(path, &mo, &err, &model) == WICK_OK, "file load at cap: %s",
          err.message);
    wick_model_destroy(model);
    unlink(path);
  }
  printf("model load cap: %zu bytes needed for a %zu-byte file\n", need, size);
  free(bytes);
}

/* An allocator whose fresh blocks hold 0xFF bytes (a float NaN), so a
 * tensor read before anything was written to it cannot look right by luck. */
static void *poison_alloc(void *user, size_t size, size_t alignment) {
  (void)user;
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1))
    return NULL;
  memset(p, 0xFF, size);
  return p;
}
static void poison_free(void *user, void *p) {
  (void)user;
  free(p);
}

/* out = x + y with x, y float [-1, N] (a dynamic batch dimension, declared
 * [1, N]). */
static uint8_t *build_dynamic_add(size_t *size) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t shape[2] = {1, N}, sig[2] = {-1, N};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, shape, 2);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, shape, 2);
  int32_t out = tm_g_tensor(&g, "out", TM_F32, shape, 2);
  for (int32_t t = x; t <= out; t++) tm_ref(g.tensors[t], 7, tm_vec_i32(b, sig, 2));
  tm_node *o = tm_table(b);
  tm_i8(o, 0, 0);
  int32_t in[2] = {x, y}, outs[1] = {out};
  tm_g_op(&g, TM_OP_ADD, in, 2, outs, 1, 11, o);
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, in, 2, outs, 1, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size);
  tm_free(b);
  return bytes;
}

/* Resizing input 1 re-prepares and re-plans the arena the inputs live in:
 * the value written to input 0 before must survive it. The Python binding
 * resizes and writes the inputs in turn, so this lost input 0 of every
 * dynamic-batch model fed a new batch size (garbage, or a gather index
 * error, depending on the new plan). */
static void test_resize_keeps_inputs(void) {
  size_t size;
  uint8_t *bytes = build_dynamic_add(&size);
  wick_error_info err;
  wick_model *model = NULL;
  wick_interpreter *it = NULL;
  wick_interpreter_options o = wick_interpreter_options_default();
  o.allocator.alloc = poison_alloc;
  o.allocator.free = poison_free;
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &model) == WICK_OK, "load: %s",
        err.message);
  CHECK(model && wick_interpreter_create(model, NULL, &o, &err, &it) == WICK_OK, "create: %s",
        err.message);
  if (it == NULL) {
    wick_model_destroy(model);
    free(bytes);
    return;
  }
  float x[2 * N], y[2 * N], want[2 * N];
  for (int k = 0; k < 2 * N; k++) x[k] = tm_val(k), y[k] = (float)k, want[k] = x[k] + y[k];
  const int32_t two[2] = {2, N}, three[2] = {3, N};
  CHECK(wick_interpreter_resize_input(it, 0, two, 2) == WICK_OK, "resize x: %s",
        wick_interpreter_last_error(it));
  CHECK(wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x) == WICK_OK, "write x");
  CHECK(wick_interpreter_resize_input(it, 1, two, 2) == WICK_OK, "resize y: %s",
        wick_interpreter_last_error(it));
  CHECK(memcmp(wick_tensor_data(wick_interpreter_input(it, 0)), x, sizeof x) == 0,
        "resizing y lost the value of x");
  CHECK(wick_tensor_copy_from(wick_interpreter_input(it, 1), y, sizeof y) == WICK_OK, "write y");
  CHECK(wick_interpreter_invoke(it) == WICK_OK, "invoke: %s", wick_interpreter_last_error(it));
  const wick_tensor *out = wick_interpreter_output(it, 0);
  CHECK(wick_tensor_byte_size(out) == sizeof want &&
            memcmp(wick_tensor_data(out), want, sizeof want) == 0,
        "x + y after resizing both differs");

  /* [3, N] + [2, N] does not broadcast: the resize fails, the interpreter
   * goes back to [2, N] and both inputs keep their values. */
  CHECK(wick_interpreter_resize_input(it, 0, three, 2) != WICK_OK, "[3,N] + [2,N] should fail");
  CHECK(wick_interpreter_invoke(it) == WICK_OK, "invoke after a failed resize: %s",
        wick_interpreter_last_error(it));
  out = wick_interpreter_output(it, 0);
  CHECK(wick_tensor_byte_size(out) == sizeof want &&
            memcmp(wick_tensor_data(out), want, sizeof want) == 0,
        "x + y after a failed resize differs");

  /* ... but resized together they do: one prepare at [3, N] + [3, N]. */
  float x3[3 * N], y3[3 * N];
  for (int k = 0; k < 3 * N; k++) x3[k] = (float)k, y3[k] = 1.0f;
  const size_t both[2] = {0, 1}, ranks[2] = {2, 2};
  const int32_t *const dims3[2] = {three, three};
  CHECK(wick_interpreter_resize_inputs(it, 2, both, dims3, ranks) == WICK_OK,
        "resize x and y together: %s", wick_interpreter_last_error(it));
  CHECK(wick_tensor_copy_from(wick_interpreter_input(it, 0), x3, sizeof x3) == WICK_OK &&
            wick_tensor_copy_from(wick_interpreter_input(it, 1), y3, sizeof y3) == WICK_OK,
        "write x and y at [3, N]");
  CHECK(wick_interpreter_invoke(it) == WICK_OK, "invoke at [3, N]: %s",
        wick_interpreter_last_error(it));
  out = wick_interpreter_output(it, 0);
  CHECK(wick_tensor_byte_size(out) == sizeof x3 &&
            ((const float *)wick_tensor_data(out))[3 * N - 1] == (float)(3 * N),
        "x + y at [3, N] differs");
  const size_t bad_index[1] = {7};
  CHECK(wick_interpreter_resize_inputs(it, 1, bad_index, dims3, ranks) == WICK_ERR_INVALID_ARGUMENT,
        "resize_inputs of a missing input should be an invalid argument");
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  free(bytes);
}

typedef struct log_record {
  int calls;
  wick_log_level level;
  char last[256];
} log_record;

static void record_log(void *user, wick_log_level level, const char *message) {
  log_record *r = user;
  r->calls++;
  r->level = level;
  snprintf(r->last, sizeof r->last, "%s", message);
}

static void test_option_struct_size(void) {
  tm_dag d = {0};
  d.nops = 1;
  d.nout = 1;
  d.outs[0] = 1;
  size_t size;
  uint8_t *bytes = tm_dag_model(&d, N, &size);
  wick_error_info err;
  wick_model *model = NULL;

  wick_model_options mo = wick_model_options_default();
  CHECK(mo.struct_size == sizeof mo, "model options default struct_size %zu", mo.struct_size);
  log_record log = {0};
  mo.log = record_log;
  mo.log_user = &log;
  CHECK(wick_model_load_buffer(bytes, size, &mo, &err, &model) == WICK_OK, "load: %s", err.message);
  CHECK(log.calls == 1 && log.level == WICK_LOG_INFO && strstr(log.last, "loaded") != NULL,
        "load log: %d calls, \"%s\"", log.calls, log.last);
  wick_model *bad = NULL;
  CHECK(wick_model_load_buffer("not a model", 11, &mo, &err, &bad) == WICK_ERR_MALFORMED_MODEL &&
            log.level == WICK_LOG_ERROR && strcmp(log.last, err.message) == 0,
        "failed load log: \"%s\" vs \"%s\"", log.last, err.message);

  wick_model_options zero;
  memset(&zero, 0, sizeof zero);
  CHECK(wick_model_load_buffer(bytes, size, &zero, &err, &bad) == WICK_ERR_INVALID_ARGUMENT &&
            bad == NULL && strstr(err.message, "struct_size is 0") != NULL,
        "zeroed model options: %s", err.message);

  /* A newer caller: a bigger struct whose extra bytes are zero works, a set one fails. */
  struct {
    wick_interpreter_options known;
    int future_field;
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.known = wick_interpreter_options_default();
  newer.known.struct_size = sizeof newer;
  wick_interpreter *it = NULL;
  CHECK(wick_interpreter_create(model, NULL, &newer.known, &err, &it) == WICK_OK,
        "newer options, unknown fields zero: %s", err.message);
  wick_interpreter_destroy(it);
  it = NULL;
  newer.future_field = 1;
  CHECK(wick_interpreter_create(model, NULL, &newer.known, &err, &it) ==
                WICK_ERR_INVALID_ARGUMENT &&
            it == NULL && strstr(err.message, "newer wick.h") != NULL,
        "newer options, unknown field set: %s", err.message);

  /* An older caller whose struct ends before weight_cache_path is too small. */
  wick_interpreter_options older = wick_interpreter_options_default();
  older.struct_size = offsetof(wick_interpreter_options, weight_cache_path);
  CHECK(wick_interpreter_create(model, NULL, &older, &err, &it) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(err.message, "first version") != NULL,
        "too-small options: %s", err.message);

  /* Constants are never handed out writable; inputs are. */
  older = wick_interpreter_options_default();
  CHECK(wick_interpreter_create(model, NULL, &older, &err, &it) == WICK_OK, "create: %s",
        err.message);
  wick_tensor *in = wick_interpreter_input(it, 0);
  CHECK(wick_tensor_mutable_data(in) != NULL &&
            wick_tensor_mutable_data(in) == wick_tensor_data(in),
        "an input's mutable data is its data");
  CHECK(wick_tensor_mutable_data(NULL) == NULL && wick_tensor_data(NULL) == NULL,
        "NULL tensors have no data");
  wick_interpreter_destroy(it);
  wick_model_destroy(model);
  free(bytes);
}

/* Two signatures over one resource variable "kv":
 *   "write" (subgraph 0): x[2] -> ASSIGN_VARIABLE(VAR_HANDLE("kv"), x)
 *   "read"  (subgraph 1):         READ_VARIABLE(VAR_HANDLE("kv")) -> v[2] */
static uint8_t *build_variable_signatures(size_t *size_out) {
  enum { VAR_HANDLE = 142, READ_VARIABLE = 143, ASSIGN_VARIABLE = 144, OPT_VAR_HANDLE = 111 };
  enum { TM_RESOURCE = 13 };
  tm_builder *b = tm_new();
  tm_node *opcodes[3] = {tm_opcode(b, VAR_HANDLE, 1), tm_opcode(b, ASSIGN_VARIABLE, 1),
                         tm_opcode(b, READ_VARIABLE, 1)};
  int32_t s2[1] = {2};
  tm_node *subgraphs[2], *sigs[2];
  for (int k = 0; k < 2; k++) {
    tm_node *handle_options = tm_table(b); /* VarHandleOptions { container 0, shared_name 1 } */
    tm_ref(handle_options, 1, tm_str(b, "kv"));
    tm_node *tensors[2] = {tm_tensor(b, k == 0 ? "x" : "v", TM_F32, s2, 1, 0, NULL),
                           tm_tensor(b, "handle", TM_RESOURCE, NULL, 0, 0, NULL)};
    int32_t value[1] = {0}, handle[1] = {1}, both[2] = {1, 0};
    tm_node *ops[2] = {tm_operator(b, 0, NULL, 0, handle, 1, OPT_VAR_HANDLE, handle_options),
                       k == 0 ? tm_operator(b, 1, both, 2, NULL, 0, 0, NULL)
                              : tm_operator(b, 2, handle, 1, value, 1, 0, NULL)};
    subgraphs[k] = tm_subgraph(b, tensors, 2, value, k == 0 ? 1 : 0, value, k == 0 ? 0 : 1, ops, 2);
    const char *name[1] = {k == 0 ? "x" : "v"};
    uint32_t tensor[1] = {0};
    sigs[k] = k == 0 ? tm_signature(b, "write", 0, name, tensor, 1, NULL, NULL, 0)
                     : tm_signature(b, "read", 1, NULL, NULL, 0, name, tensor, 1);
  }
  tm_node *buffers[1] = {tm_buffer(b, NULL, 0)};
  tm_node *model = tm_model(b, 3, opcodes, 3, subgraphs, 2, buffers, 1, sigs, 2);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

static void test_share_variables(void) {
  size_t size;
  uint8_t *bytes = build_variable_signatures(&size);
  wick_error_info err;
  wick_model *model = NULL, *other = NULL;
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &model) == WICK_OK, "load: %s",
        err.message);
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &other) == WICK_OK, "load: %s",
        err.message);
  wick_interpreter *writer = NULL, *own = NULL, *shared = NULL, *bad = NULL;
  CHECK(wick_interpreter_create(model, "write", NULL, &err, &writer) == WICK_OK, "write: %s",
        err.message);
  CHECK(wick_interpreter_create(model, "read", NULL, &err, &own) == WICK_OK, "read: %s",
        err.message);
  wick_interpreter_options o = wick_interpreter_options_default();
  o.share_variables_with = writer;
  CHECK(wick_interpreter_create(model, "read", &o, &err, &shared) == WICK_OK, "shared read: %s",
        err.message);
  if (writer == NULL || own == NULL || shared == NULL) goto done;

  const float x[2] = {1.5f, -2.0f};
  float v[2] = {0, 0};
  CHECK(wick_tensor_copy_from(wick_interpreter_input(writer, 0), x, sizeof x) == WICK_OK, "x");
  CHECK(wick_interpreter_invoke(writer) == WICK_OK, "write: %s",
        wick_interpreter_last_error(writer));
  /* Its own variables: never assigned. */
  CHECK(wick_interpreter_invoke(own) == WICK_ERR_INVALID_INPUT &&
            strstr(wick_interpreter_last_error(own), "before any assignment") != NULL,
        "unshared read: %s", wick_interpreter_last_error(own));
  /* The writer's variables: the value written. */
  CHECK(wick_interpreter_invoke(shared) == WICK_OK, "shared read: %s",
        wick_interpreter_last_error(shared));
  CHECK(wick_tensor_copy_to(wick_interpreter_output(shared, 0), v, sizeof v) == WICK_OK &&
            v[0] == x[0] && v[1] == x[1],
        "shared read gave %g %g", (double)v[0], (double)v[1]);
  /* A reset through the sharer clears the shared state. */
  CHECK(wick_interpreter_reset_variables(shared) == WICK_OK, "reset");
  CHECK(wick_interpreter_invoke(shared) == WICK_ERR_INVALID_INPUT, "read after reset: %s",
        wick_interpreter_last_error(shared));
  CHECK(wick_interpreter_invoke(writer) == WICK_OK && wick_interpreter_invoke(shared) == WICK_OK,
        "write and read again: %s", wick_interpreter_last_error(shared));

  /* Refused: a sharer as the owner, an interpreter of another model. */
  o.share_variables_with = shared;
  CHECK(wick_interpreter_create(model, "read", &o, &err, &bad) == WICK_ERR_INVALID_ARGUMENT &&
            bad == NULL && strstr(err.message, "itself shares") != NULL,
        "sharing a sharer: %s", err.message);
  o.share_variables_with = writer;
  CHECK(wick_interpreter_create(other, "read", &o, &err, &bad) == WICK_ERR_INVALID_ARGUMENT &&
            bad == NULL && strstr(err.message, "another model") != NULL,
        "sharing across models: %s", err.message);
done:
  wick_interpreter_destroy(shared); /* sharers first: the owner outlives them */
  wick_interpreter_destroy(own);
  wick_interpreter_destroy(writer);
  wick_model_destroy(other);
  wick_model_destroy(model);
  free(bytes);
}

/* Two signatures over one FULLY_CONNECTED weight buffer (K = 96, N = 80, with bias):
 *   "one"  (subgraph 0): x[1, K] -> y[1, N]
 *   "four" (subgraph 1): x[4, K] -> y[4, N]   (the same weights and bias buffers) */
enum { FC_K = 96, FC_N = 80 };
static uint8_t *build_fc_signatures(size_t *size_out) {
  static float w[FC_N * FC_K], bias[FC_N];
  for (int i = 0; i < FC_N * FC_K; i++) w[i] = tm_val(i);
  for (int i = 0; i < FC_N; i++) bias[i] = tm_val(3 * i + 1);
  tm_builder *b = tm_new();
  tm_node *opcodes[1] = {tm_opcode(b, 9, 1)};
  tm_node *buffers[3] = {tm_buffer(b, NULL, 0), tm_buffer(b, w, sizeof w),
                         tm_buffer(b, bias, sizeof bias)};
  tm_node *subgraphs[2], *sigs[2];
  for (int k = 0; k < 2; k++) {
    int32_t rows = k == 0 ? 1 : 4, s_x[2] = {rows, FC_K}, s_y[2] = {rows, FC_N};
    int32_t s_w[2] = {FC_N, FC_K}, s_b[1] = {FC_N};
    tm_node *tensors[4] = {tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL),
                           tm_tensor(b, "w", TM_F32, s_w, 2, 1, NULL),
                           tm_tensor(b, "b", TM_F32, s_b, 1, 2, NULL),
                           tm_tensor(b, "y", TM_F32, s_y, 2, 0, NULL)};
    tm_node *o = tm_table(b); /* FullyConnectedOptions (type 8), all defaults */
    int32_t ins[3] = {0, 1, 2}, outs[1] = {3};
    tm_node *ops[1] = {tm_operator(b, 0, ins, 3, outs, 1, 8, o)};
    subgraphs[k] = tm_subgraph(b, tensors, 4, ins, 1, outs, 1, ops, 1);
    const char *in_name[1] = {"x"}, *out_name[1] = {"y"};
    uint32_t in_t[1] = {0}, out_t[1] = {3};
    sigs[k] =
        tm_signature(b, k == 0 ? "one" : "four", (uint32_t)k, in_name, in_t, 1, out_name, out_t, 1);
  }
  tm_node *model = tm_model(b, 3, opcodes, 1, subgraphs, 2, buffers, 3, sigs, 2);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

static void test_share_packed_weights(void) {
  size_t size;
  uint8_t *bytes = build_fc_signatures(&size);
  wick_error_info err;
  wick_model *model = NULL;
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &model) == WICK_OK, "load: %s",
        err.message);
  wick_interpreter *owner = NULL, *sharer = NULL, *alone = NULL;
  CHECK(wick_interpreter_create(model, "one", NULL, &err, &owner) == WICK_OK, "one: %s",
        err.message);
  CHECK(wick_interpreter_create(model, "four", NULL, &err, &alone) == WICK_OK, "four: %s",
        err.message);
  wick_interpreter_options o = wick_interpreter_options_default();
  o.share_variables_with = owner;
  CHECK(wick_interpreter_create(model, "four", &o, &err, &sharer) == WICK_OK, "shared four: %s",
        err.message);
  if (owner == NULL || sharer == NULL || alone == NULL) goto done;

  /* Same outputs as an interpreter that packed its own copy. */
  float x[4 * FC_K], y_shared[4 * FC_N], y_alone[4 * FC_N];
  for (int i = 0; i < 4 * FC_K; i++) x[i] = tm_val(7 * i + 2);
  CHECK(wick_tensor_copy_from(wick_interpreter_input(sharer, 0), x, sizeof x) == WICK_OK &&
            wick_tensor_copy_from(wick_interpreter_input(alone, 0), x, sizeof x) == WICK_OK,
        "inputs");
  CHECK(wick_interpreter_invoke(sharer) == WICK_OK && wick_interpreter_invoke(alone) == WICK_OK,
        "invoke: %s", wick_interpreter_last_error(sharer));
  CHECK(wick_tensor_copy_to(wick_interpreter_output(sharer, 0), y_shared, sizeof y_shared) ==
                WICK_OK &&
            wick_tensor_copy_to(wick_interpreter_output(alone, 0), y_alone, sizeof y_alone) ==
                WICK_OK &&
            memcmp(y_shared, y_alone, sizeof y_alone) == 0,
        "a sharer's outputs differ from an unshared interpreter's");
  /* Where the optimized kernels pack (not on the reference kernels), the sharer holds no copy. */
  size_t packed = (size_t)FC_N * FC_K * sizeof(float);
  size_t p_alone = wick_interpreter_persistent_bytes(alone);
  size_t p_sharer = wick_interpreter_persistent_bytes(sharer);
  printf("packed weights: %zu bytes; persistent: alone %zu, sharer %zu\n", packed, p_alone,
         p_sharer);
  if (p_alone >= packed)
    CHECK(p_sharer + packed <= p_alone, "sharer persistent %zu, alone %zu (packed %zu)", p_sharer,
          p_alone, packed);

  /* The owner's packed weights are in use: no resize until the sharer is gone. */
  int32_t dims[2] = {1, FC_K}; /* the same shape: a resize prepares again all the same */
  CHECK(wick_interpreter_resize_input(owner, 0, dims, 2) == WICK_ERR_INVALID_ARGUMENT &&
            strstr(wick_interpreter_last_error(owner), "share this one's") != NULL,
        "owner resize with a sharer: %s", wick_interpreter_last_error(owner));
  wick_interpreter_destroy(sharer);
  sharer = NULL;
  CHECK(wick_interpreter_resize_input(owner, 0, dims, 2) == WICK_OK, "owner resize: %s",
        wick_interpreter_last_error(owner));
done:
  wick_interpreter_destroy(sharer);
  wick_interpreter_destroy(alone);
  wick_interpreter_destroy(owner);
  wick_model_destroy(model);
  free(bytes);
}

/* One FULLY_CONNECTED x[rows, K] -> y[rows, N] with 256 KiB of float weights (far above the
 * size under which constants keep their pages). */
enum { BIG_K = 256, BIG_N = 256 };
static uint8_t *build_big_fc(size_t *size_out) {
  static float w[BIG_N * BIG_K], bias[BIG_N];
  for (int i = 0; i < BIG_N * BIG_K; i++) w[i] = tm_val(i);
  for (int i = 0; i < BIG_N; i++) bias[i] = tm_val(5 * i + 2);
  tm_builder *b = tm_new();
  tm_node *opcodes[1] = {tm_opcode(b, 9, 1)};
  tm_node *buffers[3] = {tm_buffer(b, NULL, 0), tm_buffer(b, w, sizeof w),
                         tm_buffer(b, bias, sizeof bias)};
  int32_t s_x[2] = {2, BIG_K}, s_y[2] = {2, BIG_N}, s_w[2] = {BIG_N, BIG_K}, s_b[1] = {BIG_N};
  tm_node *tensors[4] = {tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL),
                         tm_tensor(b, "w", TM_F32, s_w, 2, 1, NULL),
                         tm_tensor(b, "b", TM_F32, s_b, 1, 2, NULL),
                         tm_tensor(b, "y", TM_F32, s_y, 2, 0, NULL)};
  int32_t ins[3] = {0, 1, 2}, outs[1] = {3};
  tm_node *ops[1] = {tm_operator(b, 0, ins, 3, outs, 1, 8, tm_table(b))};
  tm_node *subgraphs[1] = {tm_subgraph(b, tensors, 4, ins, 1, outs, 1, ops, 1)};
  tm_node *model = tm_model(b, 3, opcodes, 1, subgraphs, 1, buffers, 3, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* Resident KiB of the mapping of `path` in this process (/proc/self/smaps), or -1. */
static long mapping_rss_kib(const char *path) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (f == NULL) return -1;
  char line[512];
  long rss = -1;
  bool in_map = false;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strchr(line, '-') != NULL && strchr(line, ':') != NULL && line[0] != ' ' &&
        strncmp(line, "Rss:", 4) != 0 && strstr(line, " kB") == NULL)
      in_map = strstr(line, path) != NULL; /* a mapping's header line */
    long kib;
    if (in_map && sscanf(line, "Rss: %ld kB", &kib) == 1) rss = rss < 0 ? kib : rss + kib;
  }
  fclose(f);
  return rss;
}

/* Runs it on rows x[rows, K] and copies y out. */
static bool run_big_fc(wick_interpreter *it, int rows, float *y) {
  float x[2 * BIG_K];
  for (int i = 0; i < rows * BIG_K; i++) x[i] = tm_val(3 * i + 1);
  return wick_tensor_copy_from(wick_interpreter_input(it, 0), x,
                               (size_t)rows * BIG_K * sizeof(float)) == WICK_OK &&
         wick_interpreter_invoke(it) == WICK_OK &&
         wick_tensor_copy_to(wick_interpreter_output(it, 0), y,
                             (size_t)rows * BIG_N * sizeof(float)) == WICK_OK;
}

static void test_file_pages_released(void) {
  size_t size;
  uint8_t *bytes = build_big_fc(&size);
  char path[] = "/tmp/wick-test-release-XXXXXX";
  if (!write_temp_model(path, bytes, size)) {
    free(bytes);
    return;
  }
  wick_error_info err;
  wick_model *from_file = NULL, *from_buffer = NULL;
  wick_interpreter *it = NULL, *ref = NULL;
  CHECK(wick_model_load_file(path, NULL, &err, &from_file) == WICK_OK, "load file: %s",
        err.message);
  CHECK(wick_model_load_buffer(bytes, size, NULL, &err, &from_buffer) == WICK_OK, "load buffer: %s",
        err.message);
  if (from_file == NULL || from_buffer == NULL) goto done;
  CHECK(wick_interpreter_create(from_file, NULL, NULL, &err, &it) == WICK_OK, "file: %s",
        err.message);
  CHECK(wick_interpreter_create(from_buffer, NULL, NULL, &err, &ref) == WICK_OK, "buffer: %s",
        err.message);
  if (it == NULL || ref == NULL) goto done;
  const long weights_kib = (long)(sizeof(float) * BIG_N * BIG_K / 1024);
  const long rss = mapping_rss_kib(path);
  const bool packed = strcmp(wick_interpreter_op_kernel(it, 0), "optimized") == 0;
  if (rss < 0)
    printf("file pages: not checked (no /proc/self/smaps on this system)\n");
  else if (!packed)
    printf("file pages: not checked (the FULLY_CONNECTED runs the %s kernel: nothing packed)\n",
           wick_interpreter_op_kernel(it, 0));
  else
    CHECK(rss < weights_kib / 2,
          "the mapping holds %ld KiB after prepare; the packed weights "
          "are %ld KiB and their file pages should be gone",
          rss, weights_kib);
  printf("file pages after prepare: %ld KiB resident of a %zu KiB file (weights %ld KiB)\n", rss,
         size / 1024, weights_kib);
  float y[2 * BIG_N], want[2 * BIG_N];
  for (int pass = 0; pass < 2; pass++) { /* the second after a resize: prepared again */
    const int rows = 2;
    if (pass) { /* (the same shape: a resize prepares again all the same) */
      int32_t dims[2] = {rows, BIG_K};
      CHECK(wick_interpreter_resize_input(it, 0, dims, 2) == WICK_OK &&
                wick_interpreter_resize_input(ref, 0, dims, 2) == WICK_OK,
            "resize: %s", wick_interpreter_last_error(it));
    }
    CHECK(run_big_fc(it, rows, y) && run_big_fc(ref, rows, want), "invoke: %s",
          wick_interpreter_last_error(it));
    CHECK(memcmp(y, want, (size_t)rows * BIG_N * sizeof(float)) == 0,
          "pass %d: the file-loaded model's outputs differ from the buffer-loaded one's", pass);
  }
done:
  wick_interpreter_destroy(it);
  wick_interpreter_destroy(ref);
  wick_model_destroy(from_file);
  wick_model_destroy(from_buffer);
  unlink(path);
  free(bytes);
}

/* x[512, 16] -ADD big[512, 16] (32 KiB)-> t -ADD small[16] (64 bytes)-> y, from a file: the small
 * constant is copied out of the file mapping when bound (an invoke reading it in place would
 * fault in the file page it lies on: a whole 2 MiB folio on Linux 6.18 with ext4), the big one
 * stays in place; the outputs are those of the same model loaded from a buffer. */
static void test_small_constants_copied(void) {
  enum { ROWS = 512, COLS = 16 };
  static float big[ROWS * COLS], small[COLS], x[ROWS * COLS], y[ROWS * COLS], want[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) big[i] = tm_val(i), x[i] = tm_val(3 * i + 1);
  for (int i = 0; i < COLS; i++) small[i] = tm_val(7 * i + 2);
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t s_x[2] = {ROWS, COLS}, s_c[1] = {COLS};
  int32_t xi = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t bi = tm_g_const(&g, "big", TM_F32, s_x, 2, big, sizeof big, NULL);
  int32_t si = tm_g_const(&g, "small", TM_F32, s_c, 1, small, sizeof small, NULL);
  int32_t ti = tm_g_tensor(&g, "t", TM_F32, s_x, 2), yi = tm_g_tensor(&g, "y", TM_F32, s_x, 2);
  int32_t in1[2] = {xi, bi}, in2[2] = {ti, si};
  tm_g_op(&g, 0, in1, 2, &ti, 1, 0, NULL); /* ADD */
  tm_g_op(&g, 0, in2, 2, &yi, 1, 0, NULL);
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, &xi, 1, &yi, 1, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  size_t size;
  uint8_t *bytes = tm_finish(b, model, "TFL3", &size);
  tm_free(b);
  char path[] = "/tmp/wick-test-small-XXXXXX";
  if (!write_temp_model(path, bytes, size)) {
    free(bytes);
    return;
  }
  wick_error_info err;
  wick_model *from_file = NULL, *from_buffer = NULL;
  wick_interpreter *it = NULL, *ref = NULL;
  CHECK(wick_model_load_file(path, NULL, &err, &from_file) == WICK_OK &&
            wick_model_load_buffer(bytes, size, NULL, &err, &from_buffer) == WICK_OK,
        "load: %s", err.message);
  if (from_file == NULL || from_buffer == NULL) goto done;
  CHECK(wick_interpreter_create(from_file, NULL, NULL, &err, &it) == WICK_OK &&
            wick_interpreter_create(from_buffer, NULL, NULL, &err, &ref) == WICK_OK,
        "create: %s", err.message);
  if (it == NULL || ref == NULL) goto done;
  const uintptr_t base = (uintptr_t)from_file->mapping;
  const uintptr_t p_small = (uintptr_t)it->main->tensors[si].data;
  const uintptr_t p_big = (uintptr_t)it->main->tensors[bi].data;
  CHECK(base != 0, "the file-loaded model is not mapped");
  CHECK(p_small != 0 && (p_small < base || p_small - base >= from_file->mapping_size),
        "the 64-byte constant still points into the file mapping");
  CHECK(p_big >= base && p_big - base < from_file->mapping_size,
        "the 32 KiB constant was copied out of the file mapping");
  CHECK(wick_tensor_copy_from(wick_interpreter_input(it, 0), x, sizeof x) == WICK_OK &&
            wick_tensor_copy_from(wick_interpreter_input(ref, 0), x, sizeof x) == WICK_OK &&
            wick_interpreter_invoke(it) == WICK_OK && wick_interpreter_invoke(ref) == WICK_OK &&
            wick_tensor_copy_to(wick_interpreter_output(it, 0), y, sizeof y) == WICK_OK &&
            wick_tensor_copy_to(wick_interpreter_output(ref, 0), want, sizeof want) == WICK_OK,
        "invoke: %s", wick_interpreter_last_error(it));
  CHECK(memcmp(y, want, sizeof y) == 0, "the file-loaded model's outputs differ");
  for (int i = 0; i < ROWS * COLS; i++)
    if (y[i] != (x[i] + big[i]) + small[i % COLS]) {
      CHECK(false, "y[%d] = %g, want %g", i, (double)y[i],
            (double)((x[i] + big[i]) + small[i % COLS]));
      break;
    }
done:
  wick_interpreter_destroy(it);
  wick_interpreter_destroy(ref);
  wick_model_destroy(from_file);
  wick_model_destroy(from_buffer);
  unlink(path);
  free(bytes);
}

/* x[2, K] -> FULLY_CONNECTED -> y[2, N] whose weights are float16 bits through a DEQUANTIZE
 * (folded at prepare), or the same values as float32 (the values are exact in float16). */
static uint8_t *build_f16_fc(bool f16, size_t *size_out) {
  static float w[BIG_N * BIG_K];
  static uint16_t w16[BIG_N * BIG_K];
  for (int i = 0; i < BIG_N * BIG_K; i++) {
    w[i] = tm_val(i); /* (i * 37 % 19 - 9) / 8: sign, exponent 0 or -1..-3, 3 mantissa bits */
    uint32_t bits;
    memcpy(&bits, &w[i], sizeof bits);
    w16[i] = w[i] == 0.0f
                 ? (uint16_t)((bits >> 16) & 0x8000u)
                 : (uint16_t)(((bits >> 16) & 0x8000u) | ((((bits >> 23) & 0xffu) - 112u) << 10) |
                              ((bits >> 13) & 0x3ffu));
  }
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t s_x[2] = {2, BIG_K}, s_y[2] = {2, BIG_N}, s_w[2] = {BIG_N, BIG_K};
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2), wf;
  if (f16) {
    int32_t wh = tm_g_const(&g, "w16", TM_F16, s_w, 2, w16, sizeof w16, NULL);
    wf = tm_g_tensor(&g, "w", TM_F32, s_w, 2);
    tm_g_op(&g, 6, &wh, 1, &wf, 1, 0, NULL); /* DEQUANTIZE */
  } else {
    wf = tm_g_const(&g, "w", TM_F32, s_w, 2, w, sizeof w, NULL);
  }
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_y, 2), ins[2] = {x, wf};
  tm_g_op(&g, 9, ins, 2, &y, 1, 8, tm_table(b)); /* FULLY_CONNECTED, no bias */
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, &x, 1, &y, 1, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* The float16 weights' folded float32 copy is dropped once the FULLY_CONNECTED has packed it
 * (the op's output then has no storage), with the outputs of the float32 model. */
static void test_folded_weights_dropped(void) {
  size_t size16, size32;
  uint8_t *bytes16 = build_f16_fc(true, &size16), *bytes32 = build_f16_fc(false, &size32);
  wick_error_info err;
  wick_model *m16 = NULL, *m32 = NULL;
  wick_interpreter *it16 = NULL, *it32 = NULL;
  CHECK(wick_model_load_buffer(bytes16, size16, NULL, &err, &m16) == WICK_OK &&
            wick_model_load_buffer(bytes32, size32, NULL, &err, &m32) == WICK_OK,
        "load: %s", err.message);
  if (m16 == NULL || m32 == NULL) goto done;
  CHECK(wick_interpreter_create(m16, NULL, NULL, &err, &it16) == WICK_OK &&
            wick_interpreter_create(m32, NULL, NULL, &err, &it32) == WICK_OK,
        "create: %s", err.message);
  if (it16 == NULL || it32 == NULL) goto done;
  CHECK(strcmp(wick_interpreter_op_kernel(it16, 0), "folded") == 0, "DEQUANTIZE runs: %s",
        wick_interpreter_op_kernel(it16, 0));
  const void *folded = wick_tensor_data(wick_interpreter_op_output(it16, 0));
  if (strcmp(wick_interpreter_op_kernel(it16, 1), "optimized") == 0)
    CHECK(folded == NULL, "the folded float32 weights are still held after the packing");
  else
    printf("folded weights: kept (the FULLY_CONNECTED runs the %s kernel, which reads them)\n",
           wick_interpreter_op_kernel(it16, 1));
  printf("float16 weights, persistent %zu bytes; float32 weights, %zu\n",
         wick_interpreter_persistent_bytes(it16), wick_interpreter_persistent_bytes(it32));
  float y16[2 * BIG_N], y32[2 * BIG_N];
  CHECK(run_big_fc(it16, 2, y16) && run_big_fc(it32, 2, y32), "invoke: %s",
        wick_interpreter_last_error(it16));
  CHECK(memcmp(y16, y32, sizeof y16) == 0, "float16 weights compute other outputs than float32");
done:
  wick_interpreter_destroy(it16);
  wick_interpreter_destroy(it32);
  wick_model_destroy(m16);
  wick_model_destroy(m32);
  free(bytes16);
  free(bytes32);
}

static void test_op_tables(void) {
  char why[256] = "";
  CHECK(wick_op_tables_check(why, sizeof why), "op tables: %s", why);
}

int main(void) {
  test_op_tables();
  for (int i = 0; i < 300; i++) run_dag_case(i);
  test_chain_reuses_memory();
  test_model_load_cap();
  test_resize_keeps_inputs();
  test_option_struct_size();
  test_share_variables();
  test_share_packed_weights();
  test_file_pages_released();
  test_small_constants_copied();
  test_folded_weights_dropped();
  wick_interpreter_destroy(NULL); /* no-ops */
  wick_model_destroy(NULL);
  CHECK(wick_interpreter_reset_variables(NULL) == WICK_ERR_INVALID_ARGUMENT,
        "reset_variables(NULL) should be an invalid argument");
  printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
