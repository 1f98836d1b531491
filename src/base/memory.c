/*
 * memory.c — accounted allocation (wick_mem) and the bump allocator that
 * holds a model's decoded tables.
 *
 * Every block carries a 64-byte header recording its size, so the cap can be
 * enforced and released exactly and every block is 64-byte aligned (enough
 * for any vector ISA). The cap is checked before each allocation.
 */
#define _DEFAULT_SOURCE 1 /* madvise, MADV_DONTNEED, MADV_POPULATE_WRITE */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/base.h"

#define HEADER 64

/* Large blocks: see WICK_HUGE_BLOCK in internal.h. */
static void *default_alloc(void *user, size_t size, size_t alignment) {
  (void)user;
  void *p = NULL;
  bool huge = size >= WICK_HUGE_BLOCK;
  if (posix_memalign(&p, huge ? WICK_HUGE_BLOCK : alignment, size) != 0) return NULL;
  return p;
}

bool wick_mem_huge_blocks(const wick_mem *mem) {
  return mem->allocator.alloc == default_alloc && mem->limit == 0;
}

void wick_mem_drop_pages(void *start, size_t bytes) {
  uintptr_t page = 4096, begin = ((uintptr_t)start + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)start + bytes) & ~(page - 1);
#ifdef MADV_DONTNEED
  if (end > begin) (void)madvise((void *)begin, end - begin, MADV_DONTNEED);
#else
  (void)begin;
  (void)end;
#endif
}

void wick_mem_prefault(void *start, size_t bytes) {
  uintptr_t page = 4096, begin = ((uintptr_t)start + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)start + bytes) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
  if (end > begin) (void)madvise((void *)begin, end - begin, MADV_POPULATE_WRITE);
#else
  (void)begin;
  (void)end;
#endif
}

static void default_free(void *user, void *ptr) {
  (void)user;
  free(ptr);
}

void wick_mem_init(wick_mem *mem, const wick_allocator *allocator, size_t limit) {
  memset(mem, 0, sizeof *mem);
  if (allocator && allocator->alloc && allocator->free) {
    mem->allocator = *allocator;
  } else {
    mem->allocator.alloc = default_alloc;
    mem->allocator.free = default_free;
  }
  mem->limit = limit;
}

void *wick_mem_alloc(wick_mem *mem, size_t size) {
  size_t total;
  if (!wick_add_size(size, HEADER, &total)) return NULL;
  if (mem->limit != 0 && (total > mem->limit || mem->used > mem->limit - total)) return NULL;
  uint8_t *p = mem->allocator.alloc(mem->allocator.user, total, HEADER);
  if (p == NULL) return NULL;
  memcpy(p, &total, sizeof total);
  mem->used += total;
  if (mem->used > mem->peak) mem->peak = mem->used;
  return p + HEADER;
}

void *wick_mem_calloc(wick_mem *mem, size_t count, size_t size) {
  size_t bytes;
  if (!wick_mul_size(count, size, &bytes)) return NULL;
  void *p = wick_mem_alloc(mem, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

void wick_mem_free(wick_mem *mem, void *ptr) {
  if (ptr == NULL) return;
  uint8_t *base = (uint8_t *)ptr - HEADER;
  size_t total;
  memcpy(&total, base, sizeof total);
  mem->used -= total;
  mem->allocator.free(mem->allocator.user, base);
}

bool wick_mem_charge(wick_mem *mem, size_t bytes) {
  if (mem->limit != 0 && (bytes > mem->limit || mem->used > mem->limit - bytes)) return false;
  mem->used += bytes;
  if (mem->used > mem->peak) mem->peak = mem->used;
  return true;
}

void wick_mem_discharge(wick_mem *mem, size_t bytes) { mem->used -= bytes; }

/* Bump chunks: [next pointer][payload ...]. */
#define BUMP_CHUNK (64 * 1024)

void *wick_bump_alloc(wick_bump *bump, size_t size) {
  size = wick_align_up(size, 16);
  if (size > bump->left) {
    size_t payload = size > BUMP_CHUNK ? size : BUMP_CHUNK;
    uint8_t *chunk = wick_mem_alloc(bump->mem, payload + 16);
    if (chunk == NULL) return NULL;
    memcpy(chunk, &bump->chunks, sizeof(void *));
    bump->chunks = chunk;
    bump->cur = chunk + 16;
    bump->left = payload;
  }
  void *p = bump->cur;
  bump->cur += size;
  bump->left -= size;
  return p;
}

void wick_bump_release(wick_bump *bump) {
  void *chunk = bump->chunks;
  while (chunk) {
    void *next;
    memcpy(&next, chunk, sizeof next);
    wick_mem_free(bump->mem, chunk);
    chunk = next;
  }
  bump->chunks = NULL;
  bump->cur = NULL;
  bump->left = 0;
}
