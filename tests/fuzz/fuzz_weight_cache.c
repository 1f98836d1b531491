/*
 * fuzz_weight_cache.c — libFuzzer target: fuzzed packed-weight cache files
 * (wick_interpreter_options.weight_cache_path, src/core/weight_cache.c)
 * against fixed valid models.
 *
 * The cache file is untrusted input like the model: whatever its bytes, create
 * must succeed with a cache state and message, and the interpreter must run.
 * Each model (CACHE_MODELS in tests/fuzz/make_seeds.py, compiled in through
 * the generated cache_models.h) packs weights at prepare. At start-up the
 * target lets wick write each model's valid cache file (the "template") and
 * records the model's outputs without a cache. An input is
 *
 *   byte 0   model = byte % model count (the list is append-only)
 *   byte 1   flags:
 *            bit 0 PATCH      the file is the template with the rest XORed onto
 *                             it (so [model, flags] alone is the valid file and
 *                             seeds survive rebuilds); else the rest verbatim
 *            bit 1 IDENTITY   copy the build id, model size and hash and kernel
 *                             id from the template (a mismatch there is only
 *                             ever a rejection)
 *            bit 2 CHECKSUMS  recompute every in-file entry's checksum, the
 *                             table checksum, the recorded file size and the
 *                             header checksum, so mutations get past them to
 *                             the structural checks and to the ops that use
 *                             the entries (a crafted file has valid checksums)
 *            bit 3 TRUNCATE   with PATCH, the file ends where the rest ends
 *   rest     the bytes
 *
 * The file is written to a private directory (under /dev/shm when there is
 * one) and an interpreter is created with it. The checks:
 *   * create returns OK (a cache file never fails create), the state is
 *     LOADED, REJECTED or FAILED and comes with a message;
 *   * the file equal to the template loads, serves every packed buffer from
 *     the file, and gives the outputs of a run without a cache bit for bit;
 *   * a rejected file leaves the ops to pack for themselves: the outputs
 *     again equal the cache-free ones, and the file wick rewrote then loads;
 *   * a loaded file that differs may change the weights (it decides them, as
 *     the model does) but invoke still ends in OK or a known error with a
 *     message, and every output reads back in full.
 * Anything else aborts so libFuzzer records the input. The header offsets
 * below mirror weight_cache.c; start-up checks that fixing up the template
 * changes nothing, so a format change cannot silently blind the target.
 *
 * Build and run: tests/fuzz/run.sh (it generates cache_models.h and seeds).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_models.h"
#include "core/internal.h" /* wick_hash64, wick_cache_entry */
#include "fuzz_common.h"

#define MODEL_COUNT (sizeof wick_cache_models / sizeof wick_cache_models[0])

/* The file layout of weight_cache.c (cache_header, HEADER_BYTES). */
enum {
  HDR_IDENTITY = 8, /* build_id, model_size, model_hash, kernel_id: 4 x u64 */
  HDR_IDENTITY_END = 40,
  HDR_ENTRY_COUNT = 40, /* u32 */
  HDR_FILE_SIZE = 48,   /* u64 */
  HDR_TABLE_CHECKSUM = 56,
  HDR_CHECKSUM = 64, /* over the bytes before it */
  HEADER_BYTES = 128
};

enum { FLAG_PATCH = 1, FLAG_IDENTITY = 2, FLAG_CHECKSUMS = 4, FLAG_TRUNCATE = 8 };

typedef struct outputs {
  size_t count;
  size_t bytes[16];
  uint8_t *data[16];
} outputs;

typedef struct cache_model {
  wick_model *model;
  uint8_t *template_file; /* the valid cache file wick wrote */
  size_t template_size;
  size_t template_hits; /* packed buffers it serves */
  outputs reference;    /* the outputs without a cache */
} cache_model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cache_model g_models[MODEL_COUNT];
static char g_path[256];

static void fail(const char *what, size_t k, const char *detail) {
  fprintf(stderr, "promise broken: weight cache of model %s: %s (%s)\n", wick_cache_models[k].name,
          what, detail ? detail : "");
  abort();
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, sizeof v); }

/* Deterministic small input values (weights matter, so not zeros). */
static void fill_inputs(wick_interpreter *it) {
  for (size_t i = 0; i < wick_interpreter_input_count(it); i++) {
    wick_tensor *t = wick_interpreter_input(it, i);
    size_t n = wick_tensor_byte_size(t);
    uint8_t *buf = malloc(n ? n : 1);
    if (buf == NULL) abort();
    for (size_t b = 0; b < n; b++) buf[b] = (uint8_t)((b * 7 + 3) & 0x3F);
    (void)wick_tensor_copy_from(t, buf, n);
    free(buf);
  }
}

static void read_outputs(const wick_interpreter *it, outputs *out) {
  out->count = wick_interpreter_output_count(it);
  if (out->count > sizeof out->data / sizeof out->data[0]) abort();
  for (size_t i = 0; i < out->count; i++) {
    const wick_tensor *t = wick_interpreter_output(it, i);
    out->bytes[i] = wick_tensor_byte_size(t);
    out->data[i] = malloc(out->bytes[i] ? out->bytes[i] : 1);
    if (out->data[i] == NULL) abort();
    if (wick_tensor_copy_to(t, out->data[i], out->bytes[i]) != WICK_OK) abort();
  }
}

static bool same_outputs(const outputs *a, const outputs *b) {
  if (a->count != b->count) return false;
  for (size_t i = 0; i < a->count; i++)
    if (a->bytes[i] != b->bytes[i] || memcmp(a->data[i], b->data[i], a->bytes[i]) != 0)
      return false;
  return true;
}

static void free_outputs(outputs *out) {
  for (size_t i = 0; i < out->count; i++) free(out->data[i]);
  out->count = 0;
}

static wick_interpreter *create(size_t k, const char *cache_path) {
  wick_interpreter_options opt = wick_interpreter_options_default();
  opt.memory_limit_bytes = (size_t)64 << 20;
  opt.weight_cache_path = cache_path;
  wick_error_info err;
  err.message[0] = 0;
  wick_interpreter *it = NULL;
  wick_status st = wick_interpreter_create(g_models[k].model, NULL, &opt, &err, &it);
  if (st != WICK_OK) fail("create failed", k, err.message);
  return it;
}

static bool write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return false;
  bool ok = size == 0 || fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf != NULL && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return buf;
}

/* FLAG_IDENTITY and FLAG_CHECKSUMS, applied to `file` in place. */
static void fix_up(uint8_t *file, size_t size, uint8_t flags, const cache_model *m) {
  if ((flags & FLAG_IDENTITY) && size >= HDR_IDENTITY_END && m->template_size >= HDR_IDENTITY_END)
    memcpy(file + HDR_IDENTITY, m->template_file + HDR_IDENTITY, HDR_IDENTITY_END - HDR_IDENTITY);
  if (!(flags & FLAG_CHECKSUMS) || size < HEADER_BYTES) return;
  uint32_t count;
  memcpy(&count, file + HDR_ENTRY_COUNT, sizeof count);
  size_t room = (size - HEADER_BYTES) / sizeof(wick_cache_entry);
  size_t n = count < room ? count : room;
  for (size_t i = 0; i < n; i++) {
    uint8_t *e = file + HEADER_BYTES + i * sizeof(wick_cache_entry);
    uint64_t offset = get64(e + offsetof(wick_cache_entry, offset));
    uint64_t bytes = get64(e + offsetof(wick_cache_entry, bytes));
    if (offset <= size && bytes <= size - offset)
      put64(e + offsetof(wick_cache_entry, checksum), wick_hash64(file + offset, (size_t)bytes, 0));
  }
  if (count <= room)
    put64(file + HDR_TABLE_CHECKSUM,
          wick_hash64(file + HEADER_BYTES, count * sizeof(wick_cache_entry), 0));
  put64(file + HDR_FILE_SIZE, size);
  put64(file + HDR_CHECKSUM, wick_hash64(file, HDR_CHECKSUM, 0));
}

static void set_up(void) {
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  char dir[200];
  snprintf(dir, sizeof dir, "%s/wick-fuzz-cache-XXXXXX", base);
  if (mkdtemp(dir) == NULL) abort();
  snprintf(g_path, sizeof g_path, "%s/cache", dir);
  size_t packing = 0;
  for (size_t k = 0; k < MODEL_COUNT; k++) {
    cache_model *m = &g_models[k];
    wick_error_info err;
    if (wick_model_load_buffer(wick_cache_models[k].data, wick_cache_models[k].size, NULL, &err,
                               &m->model) != WICK_OK)
      fail("does not load (fix make_seeds.py)", k, err.message);
    wick_interpreter *it = create(k, NULL);
    fill_inputs(it);
    if (wick_interpreter_invoke(it) != WICK_OK)
      fail("does not run", k, wick_interpreter_last_error(it));
    read_outputs(it, &m->reference);
    wick_interpreter_destroy(it);

    unlink(g_path);
    it = create(k, g_path);
    if (wick_interpreter_weight_cache_state(it) != WICK_WEIGHT_CACHE_WRITTEN)
      fail("no cache file written", k, wick_interpreter_weight_cache_message(it));
    wick_interpreter_destroy(it);
    m->template_file = read_file(g_path, &m->template_size);
    if (m->template_file == NULL || m->template_size < HEADER_BYTES) fail("unreadable", k, g_path);
    it = create(k, g_path);
    if (wick_interpreter_weight_cache_state(it) != WICK_WEIGHT_CACHE_LOADED)
      fail("its own file does not load", k, wick_interpreter_weight_cache_message(it));
    m->template_hits = wick_interpreter_weight_cache_hits(it);
    wick_interpreter_destroy(it);
    packing += m->template_hits > 0;
    uint8_t *copy = malloc(m->template_size);
    if (copy == NULL) abort();
    memcpy(copy, m->template_file, m->template_size);
    fix_up(copy, m->template_size, FLAG_IDENTITY | FLAG_CHECKSUMS, m);
    if (memcmp(copy, m->template_file, m->template_size) != 0)
      fail("the file layout changed: update the offsets in fuzz_weight_cache.c", k, NULL);
    free(copy);
  }
  if (packing == 0) {
    fprintf(stderr, "fuzz_weight_cache: no model packs weights (fix CACHE_MODELS)\n");
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool ready = false;
  if (!ready) {
    set_up();
    ready = true;
  }
  if (size < 2) return 0;
  size_t k = data[0] % MODEL_COUNT;
  uint8_t flags = data[1];
  data += 2, size -= 2;
  const cache_model *m = &g_models[k];

  size_t file_size = size;
  if ((flags & FLAG_PATCH) && !(flags & FLAG_TRUNCATE) && m->template_size > size)
    file_size = m->template_size;
  uint8_t *file = calloc(1, file_size ? file_size : 1);
  if (file == NULL) abort();
  if (flags & FLAG_PATCH) {
    memcpy(file, m->template_file, m->template_size < file_size ? m->template_size : file_size);
    for (size_t i = 0; i < size; i++) file[i] ^= data[i];
  } else if (size) {
    memcpy(file, data, size);
  }
  fix_up(file, file_size, flags, m);
  bool is_template =
      file_size == m->template_size && memcmp(file, m->template_file, file_size) == 0;
  if (!write_file(g_path, file, file_size)) abort(); /* the machine, not a finding */
  free(file);

  wick_interpreter *it = create(k, g_path);
  wick_weight_cache_state state = wick_interpreter_weight_cache_state(it);
  const char *message = wick_interpreter_weight_cache_message(it);
  if (message == NULL || message[0] == 0) fail("no message", k, NULL);
  if (state != WICK_WEIGHT_CACHE_LOADED && state != WICK_WEIGHT_CACHE_REJECTED &&
      state != WICK_WEIGHT_CACHE_FAILED)
    fail("unexpected state", k, message);
  size_t hits = wick_interpreter_weight_cache_hits(it);
  if (is_template && (state != WICK_WEIGHT_CACHE_LOADED || hits != m->template_hits))
    fail("the valid file was not used in full", k, message);
  if (state != WICK_WEIGHT_CACHE_LOADED && hits != 0) fail("hits from an unused file", k, message);

  fill_inputs(it);
  /* The models are tiny and loop-free: the watchdog only guards against a
   * mutant cache making an op spin. On a starved machine even a tiny invoke
   * can outlast a short budget, so it is generous, and an invoke it cancelled
   * is not a finding (found by the campaign at nice 19: the 100 ms of
   * wick_fuzz_invoke cancelled a valid file's BATCH_MATMUL). */
  bool cancelled = false;
  wick_status st = wick_invoke_watched(it, 10000, &cancelled);
  if (cancelled) {
    wick_interpreter_destroy(it);
    return 0;
  }
  if (st == WICK_OK) {
    outputs out;
    read_outputs(it, &out);
    bool same = same_outputs(&out, &m->reference);
    free_outputs(&out);
    if (!same && (is_template || state != WICK_WEIGHT_CACHE_LOADED))
      fail("outputs differ from a run without the cache", k, message);
  } else if (is_template || state != WICK_WEIGHT_CACHE_LOADED) {
    fail("invoke failed", k, wick_interpreter_last_error(it));
  } else if (!wick_fuzz_known_error(st) || wick_interpreter_last_error(it)[0] == 0) {
    wick_fuzz_die("invoke", st, wick_interpreter_last_error(it));
  }
  wick_interpreter_destroy(it);

  if (state == WICK_WEIGHT_CACHE_REJECTED) { /* the file wick rewrote is valid */
    it = create(k, g_path);
    state = wick_interpreter_weight_cache_state(it);
    if (state != WICK_WEIGHT_CACHE_LOADED ||
        wick_interpreter_weight_cache_hits(it) != m->template_hits)
      fail("the rewritten file does not load", k, wick_interpreter_weight_cache_message(it));
    wick_interpreter_destroy(it);
  }
  return 0;
}

#ifdef WICK_FUZZ_REPLAY_MAIN
#include "replay_main.h"
#endif
