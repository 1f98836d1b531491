/*
 * base.h — the base layer every other part of the runtime builds on: symbol
 * visibility, the runtime's limits, checked size arithmetic, memory accounting
 * (wick_mem: the user's allocator and cap; a bump allocator for tables freed
 * together), status names and message formatting. It includes only the public
 * header. Layers: base <- format <- core <- ops; kernels stand alone
 * (scripts/check_layers.py enforces it).
 */
#ifndef WICK_BASE_BASE_H
#define WICK_BASE_BASE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wick/wick.h"

#define WICK_INTERNAL __attribute__((visibility("hidden")))
#define WICK_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Caps on what a file may ask for. */
#define WICK_MAX_SUBGRAPHS 4096
#define WICK_MAX_TENSORS (1u << 22)
#define WICK_MAX_OPERATORS (1u << 22)
#define WICK_MAX_OP_INPUTS 1024
#define WICK_MAX_ELEMENTS ((int64_t)1 << 40) /* per tensor; bytes must also fit size_t */
#define WICK_MAX_NESTING 16                  /* subgraphs calling subgraphs */
#define WICK_MAX_GRAPHS 4096 /* graph instances per interpreter: a DAG of calls can fan out */
#define WICK_MAX_THREADS 64  /* options.num_threads above this is clamped */

/* Internal status: prepare cannot know an output shape until the inputs hold
 * data (the op is re-prepared at invoke). Never returned to users. */
#define WICK_STATUS_DEFER ((wick_status)100)

/* ---------------------------------------------------------------- checked arithmetic */

static inline bool wick_mul_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool wick_add_i64(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool wick_mul_size(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool wick_add_size(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline size_t wick_align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

/* ---------------------------------------------------------------- memory */

/* Every allocation of a model or an interpreter goes through one wick_mem,
 * which applies the user's allocator and memory cap. Blocks are 64-byte
 * aligned. */
typedef struct wick_mem {
  wick_allocator allocator;
  size_t limit; /* 0 = none */
  size_t used;
  size_t peak;
} wick_mem;

/* With the default allocator (memory.c), blocks of at least this size (the
 * activation arena, large packed weights) start on a 2 MiB boundary, so a
 * system that backs memory with transparent huge pages on its own
 * (THP "always") can map them with 2 MiB pages. wick does not advise
 * MADV_HUGEPAGE: with the common defrag=madvise setting that advice makes page
 * faults compact memory synchronously, and on a busy machine DistilBERT's
 * prepare then took 2.5-3.6 s instead of 0.12-0.7 s (and 1 in 8 MobileNetV3
 * cold starts stalled ~25 ms), more than the ~2 ms of faults it saves. */
#define WICK_HUGE_BLOCK ((size_t)2 << 20)

WICK_INTERNAL void wick_mem_init(wick_mem *mem, const wick_allocator *allocator, size_t limit);
/* True for the default allocator with no cap: small packed buffers are then
 * grouped into WICK_HUGE_BLOCK-aligned chunks (fewer blocks, fewer faults). */
WICK_INTERNAL bool wick_mem_huge_blocks(const wick_mem *mem);
/* Returns the whole 4 KiB pages inside [start, start + bytes) of a default-
 * allocator block to the OS (they read as zero when touched again): the
 * unused tail of a huge page that a packed-weight chunk touched. */
WICK_INTERNAL void wick_mem_drop_pages(void *start, size_t bytes);
/* Memory about to be written in full (packed weights, a folded constant): its pages are
 * faulted in by one system call (MADV_POPULATE_WRITE, Linux 5.14 and later; elsewhere
 * nothing happens and the writes fault them in as usual), a third cheaper than a fault per
 * 4 KiB page on a virtual machine (91 MB: 50 against 75 ms). Whole pages only. */
WICK_INTERNAL void wick_mem_prefault(void *start, size_t bytes);
WICK_INTERNAL void *wick_mem_alloc(wick_mem *mem, size_t size);
WICK_INTERNAL void *wick_mem_calloc(wick_mem *mem, size_t count, size_t size);
WICK_INTERNAL void wick_mem_free(wick_mem *mem, void *ptr);
/* Counts `bytes` the runtime holds outside wick_mem (worker thread stacks)
 * against the cap; false when the cap would be exceeded. */
WICK_INTERNAL bool wick_mem_charge(wick_mem *mem, size_t bytes);
WICK_INTERNAL void wick_mem_discharge(wick_mem *mem, size_t bytes);

/* ---------------------------------------------------------------- errors */

/* Formats into a fixed buffer; never fails, truncates. */
WICK_INTERNAL void wick_format_message(char *buf, size_t size, const char *fmt, ...)
    WICK_PRINTF(3, 4);
WICK_INTERNAL void wick_vformat_message(char *buf, size_t size, const char *fmt, va_list ap);

/* A bump allocator for the model's decoded tables: chunks freed together. */
typedef struct wick_bump {
  wick_mem *mem;
  void *chunks; /* linked list */
  uint8_t *cur;
  size_t left;
} wick_bump;

WICK_INTERNAL void *wick_bump_alloc(wick_bump *bump, size_t size);
WICK_INTERNAL void wick_bump_release(wick_bump *bump);

/* Element count of a shape (caller guarantees the shape was checked). */
WICK_INTERNAL int64_t wick_shape_elements(int32_t rank, const int32_t *dims);

#endif /* WICK_BASE_BASE_H */
