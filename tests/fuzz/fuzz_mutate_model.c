/*
 * fuzz_mutate_model.c — structure-aware libFuzzer target for wick.
 *
 * Random bytes rarely get past the verifier, so this target mutates VALID
 * models in ways that keep the flatbuffer well formed: LLVMFuzzerCustomMutator
 * walks the input as a TFLite model (with the bounds-checked accessors of
 * src/format/flatbuffer.h and the schema's field ids, written out below) and
 * collects the positions of its *payload*: scalar fields (versions, types,
 * opcode and buffer indices, option values) and the elements of scalar
 * vectors (shapes, operator inputs/outputs, quantization scales and zero
 * points, signature tensor indices). It never touches an offset, a vtable or
 * a vector length, so the mutant still parses and reaches the semantic checks,
 * shape inference, prepare and the kernels. Each mutation rewrites one payload
 * slot with a value chosen for its meaning:
 *
 *   tensor index   -1, 0..num_tensors (one past the end), or anything
 *   shape dim      0..8, 2^k, INT32_MAX, -1, ...
 *   builtin code   any operator code (swaps the op under its inputs)
 *   options type   0..130 (pairs an op with another op's options table)
 *   other ints     0, ±1, ±small, 0x7FFFFFFF, 0x80000000, 0x40000001, ±delta
 *   floats         0, -0, 1, -1, NaN, ±Inf, 1e30, a denormal
 *
 * Options tables are walked generically: every present field is a scalar
 * whose width is the gap to the next field (at most 8 bytes); the few option
 * tables that hold vectors (RESHAPE new_shape, SQUEEZE squeeze_dims) are
 * known. One mutation in eight is plain byte-level (LLVMFuzzerMutate) to
 * keep some chaos; inputs that do not walk as a model are replaced by one of
 * the tiny valid models of tests/unit/tiny_model.h now and then, so the
 * target needs no seed corpus to make progress (though make_seeds.py's seeds
 * help a lot).
 *
 * The check of each input is the same as fuzz_model.c (fuzz_common.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/flatbuffer.h"
#include "fuzz_common.h"
#include "tiny_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  wick_fuzz_run(data, size);
  return 0;
}

/* ---------------------------------------------------------------- payload slots */

typedef enum slot_kind {
  SLOT_INT,          /* any integer */
  SLOT_FLOAT,        /* float32 */
  SLOT_TENSOR_INDEX, /* bound = tensor count of the subgraph */
  SLOT_DIM,          /* a shape dimension */
  SLOT_BUILTIN,      /* an operator code */
  SLOT_OPTIONS_TYPE, /* a builtin options union type */
  SLOT_INDEX,        /* some other index, bound = count */
  SLOT_OPTION4       /* a 4-byte option field: an int or a float (unknown which) */
} slot_kind;

typedef struct slot {
  uint32_t pos;
  uint8_t width; /* 1, 2, 4, 8 */
  uint8_t kind;
  uint32_t bound;
} slot;

typedef struct walker {
  const wick_fb *fb;
  slot *slots;
  size_t n, cap;
} walker;

static void add_slot(walker *w, size_t pos, size_t width, slot_kind kind, uint32_t bound) {
  if (pos + width > w->fb->size) return;
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 256;
    slot *s = realloc(w->slots, cap * sizeof *s);
    if (s == NULL) return;
    w->slots = s;
    w->cap = cap;
  }
  w->slots[w->n].pos = (uint32_t)pos;
  w->slots[w->n].width = (uint8_t)width;
  w->slots[w->n].kind = (uint8_t)kind;
  w->slots[w->n].bound = bound;
  w->n++;
}

/* Position of field `id` of a table, or 0 when absent. */
static size_t field_at(const wick_fb_table *t, int id) {
  size_t slot_off = 4 + 2 * (size_t)id;
  if (slot_off + 2 > t->vt_size) return 0;
  uint16_t off;
  memcpy(&off, t->fb->data + t->vtable + slot_off, 2);
  if (off == 0 || off >= t->size) return 0;
  return t->pos + off;
}

static void scalar(walker *w, const wick_fb_table *t, int id, size_t width, slot_kind kind,
                   uint32_t bound) {
  size_t p = field_at(t, id);
  if (p && p + width <= t->pos + t->size) add_slot(w, p, width, kind, bound);
}

static void vector(walker *w, const wick_fb_table *t, int id, size_t esize, slot_kind kind,
                   uint32_t bound) {
  wick_fb_vector v;
  if (wick_fb_vector_field(t, id, esize, &v) <= 0) return;
  for (uint32_t i = 0; i < v.len && i < 4096; i++)
    add_slot(w, v.pos + esize * i, esize, kind, bound);
}

/* Options tables: every present field is a scalar as wide as the gap to the
 * next field. Vectors are known for the two option tables that have one. */
static void options(walker *w, const wick_fb_table *op, uint8_t type) {
  wick_fb_table t;
  if (wick_fb_table_field(op, 4, &t) <= 0) return;
  if (type == 17 || type == 30) { /* ReshapeOptions.new_shape, SqueezeOptions.squeeze_dims */
    vector(w, &t, 0, 4, type == 17 ? SLOT_DIM : SLOT_INT, 0);
    return;
  }
  size_t nfields = (t.vt_size - 4) / 2;
  for (size_t i = 0; i < nfields && i < 64; i++) {
    size_t p = field_at(&t, (int)i);
    if (!p) continue;
    size_t end = t.pos + t.size;
    for (size_t j = 0; j < nfields && j < 64; j++) {
      size_t q = field_at(&t, (int)j);
      if (q > p && q < end) end = q;
    }
    size_t width = end - p;
    width = width >= 8 ? 8 : width >= 4 ? 4 : width >= 2 ? 2 : 1;
    if (p % width) width = 1;
    add_slot(w, p, width, width == 4 ? SLOT_OPTION4 : SLOT_INT, 0);
  }
}

static void walk_model(walker *w) {
  wick_fb_table root;
  if (wick_fb_root(w->fb, NULL, &root) <= 0) return;
  scalar(w, &root, 0, 4, SLOT_INT, 0); /* version */
  wick_fb_vector codes, subgraphs, buffers, sigs;
  uint32_t ncodes = 0, nbuffers = 0, nsubgraphs = 0;
  if (wick_fb_vector_field(&root, 1, 4, &codes) > 0) {
    ncodes = codes.len;
    for (uint32_t i = 0; i < codes.len && i < 1024; i++) {
      wick_fb_table c;
      if (wick_fb_vec_table(&codes, i, &c) <= 0) continue;
      scalar(w, &c, 0, 1, SLOT_BUILTIN, 0); /* deprecated_builtin_code */
      scalar(w, &c, 2, 4, SLOT_INT, 0);     /* version */
      scalar(w, &c, 3, 4, SLOT_BUILTIN, 0); /* builtin_code */
    }
  }
  if (wick_fb_vector_field(&root, 4, 4, &buffers) > 0) {
    nbuffers = buffers.len;
    for (uint32_t i = 0; i < buffers.len && i < 4096; i++) {
      wick_fb_table b;
      if (wick_fb_vec_table(&buffers, i, &b) <= 0) continue;
      scalar(w, &b, 1, 8, SLOT_INT, 0); /* offset */
      scalar(w, &b, 2, 8, SLOT_INT, 0); /* size */
      wick_fb_vector data;              /* a few bytes of small constants (shape tensors, axes) */
      if (wick_fb_vector_field(&b, 0, 1, &data) > 0 && data.len <= 64)
        for (uint32_t k = 0; k + 4 <= data.len; k += 4) add_slot(w, data.pos + k, 4, SLOT_INT, 0);
    }
  }
  if (wick_fb_vector_field(&root, 2, 4, &subgraphs) > 0) {
    nsubgraphs = subgraphs.len;
    for (uint32_t s = 0; s < subgraphs.len && s < 64; s++) {
      wick_fb_table g;
      if (wick_fb_vec_table(&subgraphs, s, &g) <= 0) continue;
      wick_fb_vector tensors, ops;
      uint32_t nt = wick_fb_vector_field(&g, 0, 4, &tensors) > 0 ? tensors.len : 0;
      vector(w, &g, 1, 4, SLOT_TENSOR_INDEX, nt);
      vector(w, &g, 2, 4, SLOT_TENSOR_INDEX, nt);
      for (uint32_t i = 0; i < nt && i < 4096; i++) {
        wick_fb_table t;
        if (wick_fb_vec_table(&tensors, i, &t) <= 0) continue;
        vector(w, &t, 0, 4, SLOT_DIM, 0);          /* shape */
        scalar(w, &t, 1, 1, SLOT_INDEX, 18);       /* type */
        scalar(w, &t, 2, 4, SLOT_INDEX, nbuffers); /* buffer */
        scalar(w, &t, 5, 1, SLOT_INT, 0);          /* is_variable */
        vector(w, &t, 7, 4, SLOT_DIM, 0);          /* shape_signature */
        wick_fb_table q;
        if (wick_fb_table_field(&t, 4, &q) > 0) {
          vector(w, &q, 2, 4, SLOT_FLOAT, 0); /* scale */
          vector(w, &q, 3, 8, SLOT_INT, 0);   /* zero_point */
          scalar(w, &q, 6, 4, SLOT_INDEX, 8); /* quantized_dimension */
        }
      }
      if (wick_fb_vector_field(&g, 3, 4, &ops) > 0) {
        for (uint32_t i = 0; i < ops.len && i < 4096; i++) {
          wick_fb_table op;
          if (wick_fb_vec_table(&ops, i, &op) <= 0) continue;
          scalar(w, &op, 0, 4, SLOT_INDEX, ncodes); /* opcode_index */
          vector(w, &op, 1, 4, SLOT_TENSOR_INDEX, nt);
          vector(w, &op, 2, 4, SLOT_TENSOR_INDEX, nt);
          vector(w, &op, 8, 4, SLOT_TENSOR_INDEX, nt); /* intermediates */
          uint8_t type = 0;
          size_t tp = field_at(&op, 3);
          if (tp) type = w->fb->data[tp];
          scalar(w, &op, 3, 1, SLOT_OPTIONS_TYPE, 0);
          options(w, &op, type);
          wick_fb_table o2; /* StableHLOCompositeOptions: decomposition_subgraph_index */
          if (wick_fb_table_field(&op, 12, &o2) > 0) scalar(w, &o2, 1, 4, SLOT_INDEX, nsubgraphs);
        }
      }
    }
  }
  if (wick_fb_vector_field(&root, 7, 4, &sigs) > 0) {
    for (uint32_t i = 0; i < sigs.len && i < 64; i++) {
      wick_fb_table sg;
      if (wick_fb_vec_table(&sigs, i, &sg) <= 0) continue;
      scalar(w, &sg, 4, 4, SLOT_INDEX, nsubgraphs);
      for (int io = 0; io < 2; io++) {
        wick_fb_vector maps;
        if (wick_fb_vector_field(&sg, io, 4, &maps) <= 0) continue;
        for (uint32_t k = 0; k < maps.len && k < 256; k++) {
          wick_fb_table tm;
          if (wick_fb_vec_table(&maps, k, &tm) > 0) scalar(w, &tm, 1, 4, SLOT_INT, 0);
        }
      }
    }
  }
}

/* ---------------------------------------------------------------- choosing values */

static uint32_t rng_next(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

static int64_t interesting_int(uint32_t *r, int64_t old) {
  static const int64_t special[] = {0,
                                    1,
                                    -1,
                                    2,
                                    3,
                                    4,
                                    7,
                                    8,
                                    16,
                                    127,
                                    128,
                                    255,
                                    256,
                                    32767,
                                    -128,
                                    0x7FFFFFFF,
                                    -0x7FFFFFFF - 1,
                                    0x40000001,
                                    0xFFFF,
                                    0x10000,
                                    0x7FFFFFFFFFFFFFFF,
                                    1 << 20};
  switch (rng_next(r) % 4) {
    case 0: return special[rng_next(r) % (sizeof special / sizeof special[0])];
    case 1: return (int64_t)((uint64_t)old + rng_next(r) % 9 - 4); /* wraps, no UB */
    case 2: return (int64_t)(rng_next(r) % 17) - 1;
    default: return (int64_t)rng_next(r) - (int64_t)(rng_next(r) % 2) * 0x80000000LL;
  }
}

static int64_t choose(uint32_t *r, const slot *s, int64_t old) {
  switch (s->kind) {
    case SLOT_TENSOR_INDEX:
    case SLOT_INDEX:
      if (rng_next(r) % 4 != 0) return (int64_t)(rng_next(r) % (s->bound + 2)) - 1;
      return interesting_int(r, old);
    case SLOT_DIM:
      if (rng_next(r) % 3 != 0) return (int64_t)(rng_next(r) % 9);
      return interesting_int(r, old);
    case SLOT_BUILTIN:
      return (int64_t)(rng_next(r) % (rng_next(r) % 8 ? 208 : 256)) - (rng_next(r) % 16 == 0);
    case SLOT_OPTIONS_TYPE: return (int64_t)(rng_next(r) % 131);
    default: return interesting_int(r, old);
  }
}

static float choose_float(uint32_t *r, float old) {
  static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e30f, -1e30f, 1e-40f, 65504.f};
  uint32_t k = rng_next(r) % 12;
  if (k < 9) return special[k];
  if (k == 9) return old * 2.0f;
  uint32_t bits = k == 10 ? 0x7FC00000u : 0x7F800000u | (rng_next(r) % 2 ? 0x80000000u : 0);
  float f;
  memcpy(&f, &bits, 4);
  return f; /* NaN or +-Inf */
}

static void write_int(uint8_t *p, size_t width, int64_t v) {
  uint64_t u = (uint64_t)v;
  memcpy(p, &u, width); /* little-endian: low bytes */
}

static int64_t read_int(const uint8_t *p, size_t width) {
  switch (width) {
    case 1: {
      int8_t v;
      memcpy(&v, p, 1);
      return v;
    }
    case 2: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  uint32_t r = seed ? seed : 0x9E3779B9u;
  wick_fb fb = {data, size};
  walker w = {&fb, NULL, 0, 0};
  if (size >= 8) walk_model(&w);
  if (w.n == 0) {
    free(w.slots);
    /* Not a model we can walk: sometimes start over from a tiny valid one. */
    if (rng_next(&r) % 2 == 0) {
      size_t n;
      uint8_t *m = rng_next(&r) % 2 ? tm_demo_chain(&n) : tm_demo_composite(&n);
      if (n <= max_size) {
        memcpy(data, m, n);
        free(m);
        return n;
      }
      free(m);
    }
    return LLVMFuzzerMutate(data, size, max_size);
  }
  if (rng_next(&r) % 8 == 0) {
    free(w.slots);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  /* 1 to 3 slot rewrites. */
  uint32_t count = 1 + rng_next(&r) % 3;
  for (uint32_t k = 0; k < count; k++) {
    const slot *s = &w.slots[rng_next(&r) % w.n];
    uint8_t *p = data + s->pos;
    if (s->width == 4 &&
        (s->kind == SLOT_FLOAT || (s->kind == SLOT_OPTION4 && rng_next(&r) % 4 == 0))) {
      float f;
      memcpy(&f, p, 4);
      f = choose_float(&r, f);
      memcpy(p, &f, 4);
    } else if (rng_next(&r) % 8 == 0) {
      p[rng_next(&r) % s->width] ^= (uint8_t)(1u << (rng_next(&r) % 8));
    } else {
      write_int(p, s->width, choose(&r, s, read_int(p, s->width)));
    }
  }
  free(w.slots);
  return size;
}

#ifdef WICK_FUZZ_REPLAY_MAIN
/* Without libFuzzer nothing mutates: replay only runs the inputs. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) {
  (void)data;
  (void)max_size;
  return size;
}
#include "replay_main.h"
#endif
