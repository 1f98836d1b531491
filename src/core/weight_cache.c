/*
 * weight_cache.c — the optional packed-weight cache file
 * (wick_interpreter_options.weight_cache_path).
 *
 * Prepare re-lays constant weights out for the optimized kernels ("packing",
 * src/kernels/pack.c, q8_pack.c): a few milliseconds per model, most of the
 * cold start. With a cache path, the first prepare records every packed
 * buffer (wick_op_packed) and then writes them all to the file; a later
 * prepare of the same model by the same wick build on the same kernels maps
 * the file and hands its bytes to the ops instead of packing.
 *
 * The file is untrusted input. Layout (host byte order; the magic doubles as
 * the byte-order mark):
 *
 *   header  (HEADER_BYTES)  magic, format version, build id hash, model size
 *                           and content hash, kernel id hash, entry count,
 *                           file size, table checksum, header checksum
 *   table   entry_count x wick_cache_entry, sorted by (subgraph, node, slot)
 *   data    each entry's bytes at a 64-byte-aligned offset
 *
 * Opening checks everything before any byte is used: sizes and offsets stay
 * inside the file, keys are strictly increasing, and every entry's checksum
 * matches. Anything off rejects the whole file: the ops pack as usual and
 * the file is rewritten (atomically: a temporary file renamed over it). The
 * checks catch damage and mismatches, not forgery: like the model itself, a
 * file crafted with valid checksums decides the weights but cannot make wick
 * read outside the mapping. As with the model file, the mapping requires that
 * nobody truncates the file while an interpreter uses it (rename is fine).
 *
 * Also here: the packed buffers that interpreters sharing state
 * (options.share_variables_with) share by what determines their bytes
 * (wick_op_packed_shared), independent of subgraph and node.
 */
#define _GNU_SOURCE 1 /* dl_iterate_phdr */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"

#if defined(__ELF__)
#include <link.h>
#define WICK_HAVE_BUILD_ID 1
#endif

#define CACHE_MAGIC 0x31435757u /* "WWC1" read as a little-endian u32 */
#define CACHE_FORMAT 1u
#define HEADER_BYTES 128u
#define DATA_ALIGN 64u

typedef struct cache_header {
  uint32_t magic, format;
  uint64_t build_id, model_size, model_hash, kernel_id;
  uint32_t entry_count, reserved;
  uint64_t file_size, table_checksum, header_checksum; /* over the bytes before it */
} cache_header;

_Static_assert(sizeof(cache_header) <= HEADER_BYTES, "cache header outgrew its slot");
_Static_assert(sizeof(wick_cache_entry) == 40, "cache entries are written as raw structs");

/* ---------------------------------------------------------------- hashing */

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* A fast non-cryptographic 64-bit hash: 8 independent multiply-rotate lanes
 * over 64-byte blocks (several bytes per cycle), folded with the length. */
uint64_t wick_hash64(const void *data, size_t size, uint64_t seed) {
  static const uint64_t k1 = 0x9E3779B97F4A7C15u, k2 = 0xC2B2AE3D27D4EB4Fu;
  const uint8_t *p = data;
  uint64_t lane[8];
  for (int i = 0; i < 8; i++) lane[i] = seed + k1 * (uint64_t)(i + 1);
  size_t blocks = size / 64;
  for (size_t b = 0; b < blocks; b++, p += 64)
    for (int i = 0; i < 8; i++) lane[i] = rotl64((lane[i] ^ load64(p + 8 * i)) * k2, 29);
  uint64_t h = seed ^ (uint64_t)size * k1;
  for (int i = 0; i < 8; i++) h = rotl64((h ^ lane[i]) * k1, 31) * k2;
  size_t left = size % 64;
  for (size_t i = 0; i < left; i++) h = (h ^ p[i]) * k1;
  h ^= h >> 33;
  h *= k2;
  h ^= h >> 29;
  return h;
}

/* ---------------------------------------------------------------- identities */

#ifdef WICK_HAVE_BUILD_ID
typedef struct build_id_search {
  uintptr_t address; /* of code in this library */
  uint64_t hash;
  bool found;
} build_id_search;

static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  build_id_search *s = arg;
  bool ours = false;
  for (int i = 0; i < info->dlpi_phnum && !ours; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    ours = ph->p_type == PT_LOAD && s->address >= start && s->address - start < ph->p_memsz;
  }
  if (!ours) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) note;
      memcpy(&note, p, sizeof note);
      size_t name = wick_align_up(note.n_namesz, 4), desc = wick_align_up(note.n_descsz, 4);
      const uint8_t *body = p + sizeof note;
      if (name > (size_t)(end - body) || desc > (size_t)(end - body) - name) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && memcmp(body, "GNU", 4) == 0) {
        s->hash = wick_hash64(body + name, note.n_descsz, CACHE_FORMAT);
        s->found = true;
        return 1;
      }
      p = body + name + desc;
    }
  }
  return 1; /* our object, without a build id */
}

/* The linker's build id of the object holding this code: it changes with
 * every change to wick's code, so a cache never outlives the packing code
 * that wrote it. False when there is none (then the cache stays off). */
static bool wick_build_id(uint64_t *out) {
  build_id_search s = {(uintptr_t)&wick_build_id, 0, false};
  dl_iterate_phdr(find_build_id, &s);
  *out = s.hash;
  return s.found;
}
#else
static bool wick_build_id(uint64_t *out) { /* not an ELF platform: no build id to key by */
  *out = 0;
  return false;
}
#endif

/* The kernels that decide packed layouts on this CPU. */
static uint64_t kernel_id(bool force_reference) {
  const wick_f32_kernels *f = wick_f32_kernels_select(force_reference);
  const wick_q8_kernels *q = wick_q8_kernels_select(force_reference);
  char id[128];
  wick_format_message(id, sizeof id, "f32=%s q8=%s ptr=%zu", f ? f->isa : "-", q ? q->isa : "-",
                      sizeof(void *));
  return wick_hash64(id, strlen(id), CACHE_FORMAT);
}

/* ---------------------------------------------------------------- state */

static void cache_note(wick_interpreter *it, wick_weight_cache_state state, const char *fmt, ...)
    WICK_PRINTF(3, 4);
static void cache_note(wick_interpreter *it, wick_weight_cache_state state, const char *fmt, ...) {
  wick_weight_cache *c = &it->cache;
  c->state = state;
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(c->message, sizeof c->message, fmt, ap);
  va_end(ap);
  if (it->options.log)
    it->options.log(it->options.log_user,
                    state == WICK_WEIGHT_CACHE_LOADED || state == WICK_WEIGHT_CACHE_WRITTEN
                        ? WICK_LOG_INFO
                        : WICK_LOG_WARNING,
                    c->message);
}

static void cache_unmap(wick_interpreter *it) {
  wick_weight_cache *c = &it->cache;
  if (c->map == NULL) return;
  munmap(c->map, c->map_size);
  wick_mem_discharge(&it->mem, c->map_size);
  c->map = NULL;
  c->map_size = 0;
  c->entries = NULL;
  c->num_entries = 0;
}

static int key_compare(const wick_cache_entry *a, const wick_cache_entry *b) {
  if (a->subgraph != b->subgraph) return a->subgraph < b->subgraph ? -1 : 1;
  if (a->node != b->node) return a->node < b->node ? -1 : 1;
  if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
  return 0;
}

/* Checks a mapped file; NULL when it is valid, else why not. */
static const char *cache_check(const wick_weight_cache *c, const uint8_t *map, size_t size) {
  if (size < HEADER_BYTES) return "it is shorter than its header";
  cache_header h;
  memcpy(&h, map, sizeof h);
  if (h.magic != CACHE_MAGIC) return "it is not a wick weight cache (bad magic or byte order)";
  if (h.format != CACHE_FORMAT) return "it has another format version";
  if (h.header_checksum != wick_hash64(map, offsetof(cache_header, header_checksum), 0))
    return "its header checksum does not match";
  for (size_t i = sizeof h; i < HEADER_BYTES; i++)
    if (map[i] != 0) return "its header's unused bytes are not zero";
  if (h.build_id != c->build_id) return "another build of wick wrote it";
  if (h.kernel_id != c->kernel_id) return "it was packed for other kernels (CPU or options)";
  if (h.model_size != c->model_size || h.model_hash != c->model_hash)
    return "it belongs to another model";
  if (h.file_size != size) return "its size differs from the size it records (truncated?)";
  size_t table_bytes;
  if (!wick_mul_size(h.entry_count, sizeof(wick_cache_entry), &table_bytes) ||
      table_bytes > size - HEADER_BYTES)
    return "its entry table overruns the file";
  const uint8_t *table = map + HEADER_BYTES;
  if (h.table_checksum != wick_hash64(table, table_bytes, 0))
    return "its entry table checksum does not match";
  const size_t data_start = HEADER_BYTES + table_bytes;
  for (uint32_t i = 0; i < h.entry_count; i++) {
    wick_cache_entry e;
    memcpy(&e, table + (size_t)i * sizeof e, sizeof e);
    if (i > 0) {
      wick_cache_entry prev;
      memcpy(&prev, table + (size_t)(i - 1) * sizeof e, sizeof e);
      if (key_compare(&prev, &e) >= 0) return "its entries are not in strictly increasing order";
    }
    if (e.offset % DATA_ALIGN != 0 || e.offset < data_start || e.offset > size ||
        e.bytes > size - e.offset)
      return "an entry lies outside the file";
    if (e.checksum != wick_hash64(map + e.offset, (size_t)e.bytes, 0))
      return "an entry's checksum does not match";
  }
  return NULL;
}

/* ---------------------------------------------------------------- open */

wick_status wick_weight_cache_open(wick_interpreter *it, const char *path) {
  wick_weight_cache *c = &it->cache;
  size_t len = strlen(path);
  if ((c->path = wick_mem_alloc(&it->mem, len + 1)) == NULL) return WICK_ERR_OUT_OF_MEMORY;
  memcpy(c->path, path, len + 1);
  if (!wick_build_id(&c->build_id)) {
    cache_note(it, WICK_WEIGHT_CACHE_FAILED,
               "off: this wick build has no build id to key the file by");
    return WICK_OK;
  }
  c->kernel_id = kernel_id(it->force_reference);
  c->model_size = it->model->size;
  c->model_hash = wick_hash64(it->model->bytes, it->model->size, 0);
  c->recording = true;

  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      cache_note(it, WICK_WEIGHT_CACHE_WRITTEN, "%s: no file yet", path);
    } else {
      cache_note(it, WICK_WEIGHT_CACHE_REJECTED, "%s: cannot open it (%s)", path, strerror(errno));
    }
    return WICK_OK;
  }
  struct stat st;
  const char *why = NULL;
  void *map = MAP_FAILED;
  size_t size = 0;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
    why = "it is not a regular file";
  } else if ((uint64_t)st.st_size > SIZE_MAX) {
    why = "it is too large";
  } else if ((size = (size_t)st.st_size) < HEADER_BYTES) {
    why = "it is shorter than its header";
  } else if (!wick_mem_charge(&it->mem, size)) {
    why = "mapping it would exceed the interpreter's memory limit";
  } else {
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE; /* every byte is read by the checks below */
#endif
    map = mmap(NULL, size, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED) {
      wick_mem_discharge(&it->mem, size);
      why = "it cannot be mapped";
    }
  }
  close(fd);
  if (why == NULL) {
    c->map = map;
    c->map_size = size;
    why = cache_check(c, map, size);
  }
  if (why != NULL) {
    cache_unmap(it);
    cache_note(it, WICK_WEIGHT_CACHE_REJECTED, "%s rejected: %s", path, why);
    return WICK_OK;
  }
  cache_header h;
  memcpy(&h, c->map, sizeof h);
  c->entries = (const wick_cache_entry *)(c->map + HEADER_BYTES); /* 8-aligned: HEADER_BYTES */
  c->num_entries = h.entry_count;
  c->recording = false;
  cache_note(it, WICK_WEIGHT_CACHE_LOADED, "%s: %u packed buffers loaded", path, h.entry_count);
  return WICK_OK;
}

/* ---------------------------------------------------------------- lookup and record */

static const wick_cache_entry *cache_find(const wick_weight_cache *c, const wick_cache_entry *key) {
  size_t lo = 0, hi = c->num_entries;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int cmp = key_compare(&c->entries[mid], key);
    if (cmp == 0) return &c->entries[mid];
    if (cmp < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static bool cache_record(wick_interpreter *it, const wick_cache_entry *key, const void *data) {
  wick_weight_cache *c = &it->cache;
  if (c->num_records == c->cap_records) {
    size_t cap = c->cap_records ? c->cap_records * 2 : 64;
    wick_cache_record *r = wick_mem_alloc(&it->mem, cap * sizeof *r);
    if (r == NULL) return false;
    if (c->num_records) memcpy(r, c->records, c->num_records * sizeof *r);
    wick_mem_free(&it->mem, c->records);
    c->records = r;
    c->cap_records = cap;
  }
  c->records[c->num_records++] = (wick_cache_record){*key, data};
  return true;
}

void *wick_op_packed(const wick_op_ctx *ctx, uint32_t slot, uint32_t layout, size_t bytes,
                     bool *from_cache) {
  wick_interpreter *it = ctx->graph->interp;
  wick_weight_cache *c = &it->cache;
  *from_cache = false;
  wick_cache_entry key = {ctx->graph->subgraph_index, ctx->node->index, slot, layout, 0, bytes, 0};
  if (c->map != NULL && !ctx->graph->in_invoke) {
    const wick_cache_entry *e = cache_find(c, &key);
    if (e != NULL && e->layout == layout && e->bytes == bytes) {
      c->hits++;
      *from_cache = true;
      return c->map + e->offset;
    }
  }
  /* Packed by the op and read-only afterwards: not zeroed first. */
  void *p = wick_op_alloc_packed(ctx, bytes);
  if (p != NULL && c->recording && !ctx->graph->in_invoke && !cache_record(it, &key, p))
    c->recording = false; /* out of memory for the list: write no file */
  return p;
}

/* ---------------------------------------------------------------- shared packs */

/* A packed buffer by what determines its bytes (wick_op_packed_shared). */
struct wick_shared_pack {
  int32_t builtin;
  uint32_t slot, layout, num_sources, num_params;
  const void *sources[2];
  int64_t params[4];
  size_t bytes;
  void *data;
};

static bool same_pack(const struct wick_shared_pack *e, const struct wick_shared_pack *k) {
  if (e->builtin != k->builtin || e->slot != k->slot || e->layout != k->layout ||
      e->bytes != k->bytes || e->num_sources != k->num_sources || e->num_params != k->num_params)
    return false;
  for (uint32_t i = 0; i < k->num_sources; i++)
    if (e->sources[i] != k->sources[i]) return false;
  for (uint32_t i = 0; i < k->num_params; i++)
    if (e->params[i] != k->params[i]) return false;
  return true;
}

void *wick_op_packed_shared(const wick_op_ctx *ctx, const void *const *sources, size_t num_sources,
                            const int64_t *params, size_t num_params, uint32_t slot,
                            uint32_t layout, size_t bytes, bool *from_cache) {
  wick_interpreter *it = ctx->graph->interp;
  struct wick_shared_pack key;
  memset(&key, 0, sizeof key);
  key.builtin = ctx->node->op->builtin;
  key.slot = slot;
  key.layout = layout;
  key.bytes = bytes;
  key.num_sources = num_sources <= 2 ? (uint32_t)num_sources : 0;
  for (uint32_t i = 0; i < key.num_sources; i++) key.sources[i] = sources[i];
  key.num_params = num_params <= 4 ? (uint32_t)num_params : 0;
  for (uint32_t i = 0; i < key.num_params; i++) key.params[i] = params[i];
  if (num_sources > 2 || num_params > 4 || ctx->graph->in_invoke)
    return wick_op_packed(ctx, slot, layout, bytes, from_cache);
  const wick_interpreter *owner = it->state_owner;
  for (uint32_t i = 0; owner != NULL && i < owner->num_shared_packs; i++)
    if (same_pack(&owner->shared_packs[i], &key)) {
      *from_cache = true;
      return owner->shared_packs[i].data;
    }
  void *p = wick_op_packed(ctx, slot, layout, bytes, from_cache);
  /* Recorded for sharers: buffers of the main graph, which live until its next prepare
   * (which an interpreter with sharers refuses). */
  if (p == NULL || ctx->graph != it->main) return p;
  if (it->num_shared_packs == it->cap_shared_packs) {
    uint32_t cap = it->cap_shared_packs ? it->cap_shared_packs * 2 : 64;
    struct wick_shared_pack *grown = wick_mem_alloc(&it->mem, cap * sizeof *grown);
    if (grown == NULL) return p; /* not recorded: a sharer packs its own copy */
    if (it->num_shared_packs) memcpy(grown, it->shared_packs, it->num_shared_packs * sizeof *grown);
    wick_mem_free(&it->mem, it->shared_packs);
    it->shared_packs = grown;
    it->cap_shared_packs = cap;
  }
  key.data = p;
  it->shared_packs[it->num_shared_packs++] = key;
  return p;
}

/* ---------------------------------------------------------------- write */

static int record_compare(const void *a, const void *b) {
  return key_compare(&((const wick_cache_record *)a)->key, &((const wick_cache_record *)b)->key);
}

static bool write_all(FILE *f, const void *data, size_t size) {
  return size == 0 || fwrite(data, 1, size, f) == size;
}

static const char *cache_write_file(wick_mem *mem, wick_weight_cache *c, const char *tmp) {
  /* Sort, drop repeated keys (one subgraph run by several nodes), lay out. */
  if (c->num_records > 1) /* records is NULL when nothing was packed */
    qsort(c->records, c->num_records, sizeof *c->records, record_compare);
  size_t n = 0;
  for (size_t i = 0; i < c->num_records; i++)
    if (n == 0 || key_compare(&c->records[n - 1].key, &c->records[i].key) != 0)
      c->records[n++] = c->records[i];
  c->num_records = n;
  if (n > UINT32_MAX) return "too many packed buffers";
  size_t offset = wick_align_up(HEADER_BYTES + n * sizeof(wick_cache_entry), DATA_ALIGN);
  for (size_t i = 0; i < n; i++) {
    wick_cache_entry *e = &c->records[i].key;
    e->offset = offset;
    e->checksum = wick_hash64(c->records[i].data, (size_t)e->bytes, 0);
    offset = wick_align_up(offset + (size_t)e->bytes, DATA_ALIGN);
  }
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) return strerror(errno);
  uint8_t header[HEADER_BYTES] = {0};
  cache_header h = {CACHE_MAGIC,
                    CACHE_FORMAT,
                    c->build_id,
                    c->model_size,
                    c->model_hash,
                    c->kernel_id,
                    (uint32_t)n,
                    0,
                    offset,
                    0,
                    0};
  bool ok = true;
  uint64_t table_hash = 0;
  {
    /* the table as written: the keys, one after another */
    /* zeroed and charged to the interpreter's cap like every other allocation */
    wick_cache_entry *table = wick_mem_calloc(mem, n ? n : 1, sizeof *table);
    if (table == NULL) {
      fclose(f);
      return "out of memory";
    }
    for (size_t i = 0; i < n; i++) table[i] = c->records[i].key;
    table_hash = wick_hash64(table, n * sizeof *table, 0);
    h.table_checksum = table_hash;
    memcpy(header, &h, sizeof h);
    h.header_checksum = wick_hash64(header, offsetof(cache_header, header_checksum), 0);
    memcpy(header, &h, sizeof h);
    ok = write_all(f, header, sizeof header) && write_all(f, table, n * sizeof *table);
    wick_mem_free(mem, table);
  }
  static const uint8_t zeros[DATA_ALIGN] = {0};
  size_t at = HEADER_BYTES + n * sizeof(wick_cache_entry);
  for (size_t i = 0; ok && i < n; i++) {
    const wick_cache_entry *e = &c->records[i].key;
    ok = write_all(f, zeros, (size_t)e->offset - at) &&
         write_all(f, c->records[i].data, (size_t)e->bytes);
    at = (size_t)e->offset + (size_t)e->bytes;
  }
  ok = ok && write_all(f, zeros, offset - at);
  if (fclose(f) != 0) ok = false;
  return ok ? NULL : "write failed";
}

void wick_weight_cache_finish_prepare(wick_interpreter *it) {
  wick_weight_cache *c = &it->cache;
  if (!c->recording) return;
  c->recording = false;
  /* A name of its own per process and interpreter; rename is atomic, so a
   * concurrent reader sees the old file or the new one, never a mix. */
  char tmp[4200];
  int len = snprintf(tmp, sizeof tmp, "%s.%ld.%p.tmp", c->path, (long)getpid(), (void *)it);
  const char *why = len < 0 || (size_t)len >= sizeof tmp ? "path too long" : NULL;
  if (why == NULL) why = cache_write_file(&it->mem, c, tmp);
  if (why == NULL && rename(tmp, c->path) != 0) why = strerror(errno);
  if (why != NULL) {
    if (len > 0 && (size_t)len < sizeof tmp) remove(tmp);
    cache_note(it, WICK_WEIGHT_CACHE_FAILED, "%s: could not write it: %s", c->path, why);
  } else {
    char previous[200];
    wick_format_message(previous, sizeof previous, "%s", c->message);
    cache_note(it, c->state, "%s; wrote %zu packed buffers", previous, c->num_records);
  }
  wick_mem_free(&it->mem, c->records);
  c->records = NULL;
  c->num_records = c->cap_records = 0;
}

void wick_weight_cache_close(wick_interpreter *it) {
  wick_weight_cache *c = &it->cache;
  cache_unmap(it);
  wick_mem_free(&it->mem, c->records);
  wick_mem_free(&it->mem, c->path);
  c->records = NULL;
  c->path = NULL;
}

/* ---------------------------------------------------------------- public */

wick_weight_cache_state wick_interpreter_weight_cache_state(const wick_interpreter *it) {
  return it ? it->cache.state : WICK_WEIGHT_CACHE_UNUSED;
}

size_t wick_interpreter_weight_cache_hits(const wick_interpreter *it) {
  return it ? it->cache.hits : 0;
}

const char *wick_interpreter_weight_cache_message(const wick_interpreter *it) {
  return it ? it->cache.message : "";
}
