/*
 * tiny_model.h — a tiny FlatBuffers/TFLite builder for C tests and fuzzers.
 *
 * Lets a test assemble a .tflite file byte by byte without Python or the
 * flatbuffers library, so the malformed-input tests never depend on files
 * outside the project. Header-only (static functions); no wick internals.
 *
 * Model: build a tree of nodes (tables, scalar vectors, table vectors,
 * strings), then tm_finish() lays it out FRONT TO BACK:
 *
 *     [u32 root offset]["TFL3"] [vtable][table] [its children ...] ...
 *
 * Each table is written right after its vtable (so its soffset is positive)
 * and every child is written after its parent, so every uoffset points
 * forward as the format requires. A node referenced twice is written once
 * and shared (both references must come before it: true for the items of
 * one table vector, whose slots are all written before any item). Tables start 8-byte aligned,
 * scalar fields are aligned to their size, vectors of 8-byte elements have their elements
 * 8-aligned, byte vectors (buffer data) 16-aligned. Nothing is shared or
 * deduplicated: the result is simple, valid and easy to reason about when a
 * test patches bytes in it (tm_pos() tells where a node landed).
 *
 * The TFLite helpers at the bottom (tm_tensor, tm_operator, tm_model ...)
 * know the schema's field ids; they are deliberately independent of
 * src/format/schema.h so a mistake there cannot hide in both. The DAG models
 * at the very bottom (tm_dag_model, tm_dag_evaluate) are the random graphs of
 * ADD / MUL / SUB that test_interpreter.c and test_delegate.c build.
 *
 * Memory: every node belongs to its tm_builder; tm_free() releases all.
 * Errors (out of memory) abort: this is test code.
 */
#ifndef WICK_TESTS_TINY_MODEL_H
#define WICK_TESTS_TINY_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TM_MAX_FIELDS 16

enum { TM_TABLE, TM_VEC, TM_TVEC, TM_STR };

typedef struct tm_node tm_node;

typedef struct tm_field {
  int id;
  int is_ref;
  unsigned size; /* scalar byte width */
  uint64_t bits; /* scalar value, little-endian low bytes */
  tm_node *ref;
  size_t at; /* position of the field, set by tm_finish */
} tm_field;

struct tm_node {
  int kind;
  tm_field fields[TM_MAX_FIELDS];
  int nfields;
  uint8_t *data;   /* TM_VEC / TM_STR payload */
  size_t len;      /* element count */
  size_t esize;    /* element size */
  size_t align;    /* payload alignment (TM_VEC) */
  tm_node **items; /* TM_TVEC */
  size_t pos;      /* where the node landed (table start / vector length word), set by tm_finish */
  int emitted;     /* already written: later references share it (FlatBuffers allows that) */
};

typedef struct tm_builder {
  tm_node **nodes;
  size_t nnodes, cap;
  uint8_t *buf;
  size_t size, bufcap;
} tm_builder;

static inline void *tm_xalloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (p == NULL) {
    fprintf(stderr, "tiny_model: out of memory\n");
    abort();
  }
  return p;
}

static inline tm_builder *tm_new(void) { return (tm_builder *)tm_xalloc(sizeof(tm_builder)); }

static inline void tm_free(tm_builder *b) {
  if (b == NULL) return;
  for (size_t i = 0; i < b->nnodes; i++) {
    free(b->nodes[i]->data);
    free(b->nodes[i]->items);
    free(b->nodes[i]);
  }
  free(b->nodes);
  free(b->buf);
  free(b);
}

static inline tm_node *tm_node_new(tm_builder *b, int kind) {
  if (b->nnodes == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 64;
    tm_node **n = (tm_node **)realloc(b->nodes, b->cap * sizeof *n);
    if (n == NULL) abort();
    b->nodes = n;
  }
  tm_node *node = (tm_node *)tm_xalloc(sizeof *node);
  node->kind = kind;
  b->nodes[b->nnodes++] = node;
  return node;
}

/* ---------------------------------------------------------------- building the tree */

static inline tm_node *tm_table(tm_builder *b) { return tm_node_new(b, TM_TABLE); }

static inline void tm_scalar(tm_node *t, int id, unsigned size, uint64_t bits) {
  if (t->nfields == TM_MAX_FIELDS) abort();
  tm_field *f = &t->fields[t->nfields++];
  f->id = id;
  f->size = size;
  f->bits = bits;
}
static inline void tm_u8(tm_node *t, int id, uint8_t v) { tm_scalar(t, id, 1, v); }
static inline void tm_i8(tm_node *t, int id, int8_t v) { tm_scalar(t, id, 1, (uint8_t)v); }
static inline void tm_i32(tm_node *t, int id, int32_t v) { tm_scalar(t, id, 4, (uint32_t)v); }
static inline void tm_u32(tm_node *t, int id, uint32_t v) { tm_scalar(t, id, 4, v); }
static inline void tm_u64(tm_node *t, int id, uint64_t v) { tm_scalar(t, id, 8, v); }
static inline void tm_f32(tm_node *t, int id, float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  tm_scalar(t, id, 4, u);
}

static inline void tm_ref(tm_node *t, int id, tm_node *child) {
  if (t->nfields == TM_MAX_FIELDS) abort();
  tm_field *f = &t->fields[t->nfields++];
  f->id = id;
  f->is_ref = 1;
  f->size = 4;
  f->ref = child;
}

static inline tm_node *tm_vec(tm_builder *b, const void *data, size_t count, size_t esize,
                              size_t align) {
  tm_node *v = tm_node_new(b, TM_VEC);
  v->data = (uint8_t *)tm_xalloc(count * esize);
  if (count) memcpy(v->data, data, count * esize);
  v->len = count;
  v->esize = esize;
  v->align = align;
  return v;
}
static inline tm_node *tm_vec_i32(tm_builder *b, const int32_t *v, size_t n) {
  return tm_vec(b, v, n, 4, 4);
}
static inline tm_node *tm_vec_f32(tm_builder *b, const float *v, size_t n) {
  return tm_vec(b, v, n, 4, 4);
}
static inline tm_node *tm_vec_i64(tm_builder *b, const int64_t *v, size_t n) {
  return tm_vec(b, v, n, 8, 8);
}
static inline tm_node *tm_bytes(tm_builder *b, const void *v, size_t n) {
  return tm_vec(b, v, n, 1, 16);
}

static inline tm_node *tm_str(tm_builder *b, const char *s) {
  tm_node *v = tm_node_new(b, TM_STR);
  v->len = strlen(s);
  v->data = (uint8_t *)tm_xalloc(v->len + 1);
  memcpy(v->data, s, v->len + 1);
  v->esize = 1;
  return v;
}

static inline tm_node *tm_tvec(tm_builder *b, tm_node *const *items, size_t n) {
  tm_node *v = tm_node_new(b, TM_TVEC);
  v->items = (tm_node **)tm_xalloc(n * sizeof(tm_node *));
  if (n) memcpy(v->items, items, n * sizeof(tm_node *));
  v->len = n;
  return v;
}

/* ---------------------------------------------------------------- serializing */

static inline void tm_reserve(tm_builder *b, size_t more) {
  if (b->size + more <= b->bufcap) return;
  size_t cap = b->bufcap ? b->bufcap : 1024;
  while (cap < b->size + more) cap *= 2;
  uint8_t *p = (uint8_t *)realloc(b->buf, cap);
  if (p == NULL) abort();
  memset(p + b->bufcap, 0, cap - b->bufcap);
  b->buf = p;
  b->bufcap = cap;
}

static inline void tm_put(tm_builder *b, const void *p, size_t n) {
  tm_reserve(b, n);
  memcpy(b->buf + b->size, p, n);
  b->size += n;
}

static inline void tm_pad_to(tm_builder *b, size_t align, size_t phase) {
  /* Pads until (size + phase) % align == 0. */
  static const uint8_t zero[16] = {0};
  while ((b->size + phase) % align != 0) tm_put(b, zero, 1);
}

static inline void tm_put_u16(tm_builder *b, uint16_t v) { tm_put(b, &v, 2); }
static inline void tm_put_u32(tm_builder *b, uint32_t v) { tm_put(b, &v, 4); }

static inline void tm_patch_u32(tm_builder *b, size_t at, uint32_t v) {
  memcpy(b->buf + at, &v, 4);
}

static inline size_t tm_emit(tm_builder *b, tm_node *n);

static inline size_t tm_emit_table(tm_builder *b, tm_node *t) {
  /* Lay out fields by descending width after the 4-byte soffset. */
  size_t offs[TM_MAX_FIELDS];
  size_t cur = 4;
  int max_id = -1;
  for (unsigned width = 8; width >= 1; width /= 2) {
    for (int i = 0; i < t->nfields; i++) {
      if (t->fields[i].size != width) continue;
      while (cur % width) cur++;
      offs[i] = cur;
      cur += width;
    }
  }
  size_t table_size = cur;
  for (int i = 0; i < t->nfields; i++)
    if (t->fields[i].id > max_id) max_id = t->fields[i].id;
  size_t vt_size = 4 + 2 * (size_t)(max_id + 1);
  /* vtable (2-aligned), then the table 8-aligned after it. */
  tm_pad_to(b, 2, 0);
  size_t vt = b->size;
  tm_put_u16(b, (uint16_t)vt_size);
  tm_put_u16(b, (uint16_t)table_size);
  for (int id = 0; id <= max_id; id++) {
    uint16_t o = 0;
    for (int i = 0; i < t->nfields; i++)
      if (t->fields[i].id == id) o = (uint16_t)offs[i];
    tm_put_u16(b, o);
  }
  tm_pad_to(b, 8, 0);
  size_t pos = b->size;
  tm_reserve(b, table_size);
  memset(b->buf + pos, 0, table_size);
  b->size += table_size;
  int32_t soff = (int32_t)(pos - vt);
  memcpy(b->buf + pos, &soff, 4);
  for (int i = 0; i < t->nfields; i++) {
    t->fields[i].at = pos + offs[i];
    if (!t->fields[i].is_ref) memcpy(b->buf + pos + offs[i], &t->fields[i].bits, t->fields[i].size);
  }
  t->pos = pos;
  for (int i = 0; i < t->nfields; i++) {
    if (!t->fields[i].is_ref) continue;
    size_t child = tm_emit(b, t->fields[i].ref);
    tm_patch_u32(b, t->fields[i].at, (uint32_t)(child - t->fields[i].at));
  }
  return pos;
}

static inline size_t tm_emit(tm_builder *b, tm_node *n) {
  if (n->emitted) return n->pos;
  n->emitted = 1;
  switch (n->kind) {
    case TM_TABLE: return tm_emit_table(b, n);
    case TM_VEC: {
      size_t a = n->align < 4 ? 4 : n->align;
      tm_pad_to(b, a, 4); /* elements start aligned */
      n->pos = b->size;
      tm_put_u32(b, (uint32_t)n->len);
      tm_put(b, n->data, n->len * n->esize);
      return n->pos;
    }
    case TM_STR:
      tm_pad_to(b, 4, 0);
      n->pos = b->size;
      tm_put_u32(b, (uint32_t)n->len);
      tm_put(b, n->data, n->len + 1);
      return n->pos;
    default: { /* TM_TVEC */
      tm_pad_to(b, 4, 0);
      n->pos = b->size;
      tm_put_u32(b, (uint32_t)n->len);
      size_t slots = b->size;
      for (size_t i = 0; i < n->len; i++) tm_put_u32(b, 0);
      for (size_t i = 0; i < n->len; i++) {
        size_t child = tm_emit(b, n->items[i]);
        tm_patch_u32(b, slots + 4 * i, (uint32_t)(child - (slots + 4 * i)));
      }
      return n->pos;
    }
  }
}

/* Serializes the tree under `root` with a 4-byte identifier (may be NULL).
 * Returns a malloc'd copy (caller frees) and its size. The builder keeps the
 * node positions (tm_node.pos, tm_field.at) for patching. */
static inline uint8_t *tm_finish(tm_builder *b, tm_node *root, const char *ident,
                                 size_t *size_out) {
  b->size = 0;
  for (size_t i = 0; i < b->nnodes; i++) b->nodes[i]->emitted = 0;
  tm_put_u32(b, 0);
  tm_put(b, ident ? ident : "\0\0\0\0", 4);
  size_t r = tm_emit(b, root);
  tm_patch_u32(b, 0, (uint32_t)r);
  tm_pad_to(b, 16, 0);
  uint8_t *out = (uint8_t *)tm_xalloc(b->size);
  memcpy(out, b->buf, b->size);
  *size_out = b->size;
  return out;
}

/* Position of scalar/reference field `id` of table `t` after tm_finish, or 0. */
static inline size_t tm_field_pos(const tm_node *t, int id) {
  for (int i = 0; i < t->nfields; i++)
    if (t->fields[i].id == id) return t->fields[i].at;
  return 0;
}

/* ---------------------------------------------------------------- TFLite tables */

/* TensorType numbers. */
enum {
  TM_F32 = 0,
  TM_F16 = 1,
  TM_I32 = 2,
  TM_U8 = 3,
  TM_I64 = 4,
  TM_BOOL = 6,
  TM_I16 = 7,
  TM_I8 = 9
};

/* Buffer { data: [ubyte] (0), offset: ulong (1), size: ulong (2) } */
static inline tm_node *tm_buffer(tm_builder *b, const void *data, size_t n) {
  tm_node *t = tm_table(b);
  if (n) tm_ref(t, 0, tm_bytes(b, data, n));
  return t;
}

/* QuantizationParameters { min 0, max 1, scale 2, zero_point 3, details_type 4, details 5,
 * quantized_dimension 6 } */
static inline tm_node *tm_quant(tm_builder *b, const float *scale, const int64_t *zp, size_t n,
                                int32_t qdim) {
  tm_node *t = tm_table(b);
  tm_ref(t, 2, tm_vec_f32(b, scale, n));
  if (zp) tm_ref(t, 3, tm_vec_i64(b, zp, n));
  if (qdim) tm_i32(t, 6, qdim);
  return t;
}

/* Tensor { shape 0, type 1, buffer 2, name 3, quantization 4, is_variable 5, sparsity 6,
 * shape_signature 7 } */
static inline tm_node *tm_tensor(tm_builder *b, const char *name, int type, const int32_t *shape,
                                 size_t rank, uint32_t buffer, tm_node *quant) {
  tm_node *t = tm_table(b);
  tm_ref(t, 0, tm_vec_i32(b, shape, rank));
  tm_i8(t, 1, (int8_t)type);
  if (buffer) tm_u32(t, 2, buffer);
  tm_ref(t, 3, tm_str(b, name));
  if (quant) tm_ref(t, 4, quant);
  return t;
}

/* OperatorCode { deprecated_builtin_code 0 (byte), custom_code 1, version 2, builtin_code 3 } */
static inline tm_node *tm_opcode(tm_builder *b, int32_t builtin, int32_t version) {
  tm_node *t = tm_table(b);
  tm_i8(t, 0, (int8_t)(builtin < 127 ? builtin : 127));
  tm_i32(t, 2, version);
  tm_i32(t, 3, builtin);
  return t;
}

/* Operator { opcode_index 0, inputs 1, outputs 2, builtin_options_type 3, builtin_options 4,
 * ..., builtin_options_2_type 11, builtin_options_2 12 } */
static inline tm_node *tm_operator(tm_builder *b, uint32_t opcode, const int32_t *ins, size_t nin,
                                   const int32_t *outs, size_t nout, uint8_t opt_type,
                                   tm_node *opts) {
  tm_node *t = tm_table(b);
  tm_u32(t, 0, opcode);
  tm_ref(t, 1, tm_vec_i32(b, ins, nin));
  tm_ref(t, 2, tm_vec_i32(b, outs, nout));
  if (opt_type) {
    tm_u8(t, 3, opt_type);
    if (opts) tm_ref(t, 4, opts);
  }
  return t;
}

/* SubGraph { tensors 0, inputs 1, outputs 2, operators 3, name 4 } */
static inline tm_node *tm_subgraph(tm_builder *b, tm_node *const *tensors, size_t nt,
                                   const int32_t *ins, size_t nin, const int32_t *outs, size_t nout,
                                   tm_node *const *ops, size_t nops) {
  tm_node *t = tm_table(b);
  tm_ref(t, 0, tm_tvec(b, tensors, nt));
  tm_ref(t, 1, tm_vec_i32(b, ins, nin));
  tm_ref(t, 2, tm_vec_i32(b, outs, nout));
  tm_ref(t, 3, tm_tvec(b, ops, nops));
  tm_ref(t, 4, tm_str(b, "main"));
  return t;
}

/* TensorMap { name 0, tensor_index 1 }; SignatureDef { inputs 0, outputs 1, signature_key 2,
 * subgraph_index 4 } */
static inline tm_node *tm_signature(tm_builder *b, const char *key, uint32_t subgraph,
                                    const char *const *in_names, const uint32_t *in_tensors,
                                    size_t nin, const char *const *out_names,
                                    const uint32_t *out_tensors, size_t nout) {
  tm_node *ins[16], *outs[16];
  if (nin > 16 || nout > 16) abort();
  for (size_t i = 0; i < nin; i++) {
    ins[i] = tm_table(b);
    tm_ref(ins[i], 0, tm_str(b, in_names[i]));
    tm_u32(ins[i], 1, in_tensors[i]);
  }
  for (size_t i = 0; i < nout; i++) {
    outs[i] = tm_table(b);
    tm_ref(outs[i], 0, tm_str(b, out_names[i]));
    tm_u32(outs[i], 1, out_tensors[i]);
  }
  tm_node *t = tm_table(b);
  tm_ref(t, 0, tm_tvec(b, ins, nin));
  tm_ref(t, 1, tm_tvec(b, outs, nout));
  tm_ref(t, 2, tm_str(b, key));
  if (subgraph) tm_u32(t, 4, subgraph);
  return t;
}

/* Model { version 0, operator_codes 1, subgraphs 2, description 3, buffers 4, metadata_buffer 5,
 * metadata 6, signature_defs 7 } */
static inline tm_node *tm_model(tm_builder *b, uint32_t version, tm_node *const *opcodes,
                                size_t nopc, tm_node *const *subgraphs, size_t nsg,
                                tm_node *const *buffers, size_t nbuf, tm_node *const *sigs,
                                size_t nsig) {
  tm_node *t = tm_table(b);
  tm_u32(t, 0, version);
  tm_ref(t, 1, tm_tvec(b, opcodes, nopc));
  tm_ref(t, 2, tm_tvec(b, subgraphs, nsg));
  tm_ref(t, 3, tm_str(b, "tiny"));
  tm_ref(t, 4, tm_tvec(b, buffers, nbuf));
  if (nsig) tm_ref(t, 7, tm_tvec(b, sigs, nsig));
  return t;
}

/* ---------------------------------------------------------------- ready-made valid models */

/* Accumulates the tensors, buffers, opcodes and operators of one subgraph. */
typedef struct tm_graph {
  tm_builder *b;
  tm_node *tensors[64], *ops[32], *buffers[64], *opcodes[32];
  size_t nt, nops, nbuf, nopc;
  int32_t opc_builtin[32];
} tm_graph;

static inline void tm_graph_init(tm_graph *g, tm_builder *b) {
  memset(g, 0, sizeof *g);
  g->b = b;
  g->buffers[g->nbuf++] = tm_buffer(b, NULL, 0); /* buffer 0: the empty sentinel */
}

/* An activation tensor (no data); returns its index. */
static inline int32_t tm_g_tensor(tm_graph *g, const char *name, int type, const int32_t *shape,
                                  size_t rank) {
  g->tensors[g->nt] = tm_tensor(g->b, name, type, shape, rank, 0, NULL);
  return (int32_t)g->nt++;
}

/* A constant tensor owning a new buffer; returns its index. */
static inline int32_t tm_g_const(tm_graph *g, const char *name, int type, const int32_t *shape,
                                 size_t rank, const void *data, size_t bytes, tm_node *quant) {
  g->buffers[g->nbuf] = tm_buffer(g->b, data, bytes);
  g->tensors[g->nt] = tm_tensor(g->b, name, type, shape, rank, (uint32_t)g->nbuf, quant);
  g->nbuf++;
  return (int32_t)g->nt++;
}

static inline uint32_t tm_g_opcode(tm_graph *g, int32_t builtin, int32_t version) {
  for (size_t i = 0; i < g->nopc; i++)
    if (g->opc_builtin[i] == builtin) return (uint32_t)i;
  g->opc_builtin[g->nopc] = builtin;
  g->opcodes[g->nopc] = tm_opcode(g->b, builtin, version);
  return (uint32_t)g->nopc++;
}

static inline tm_node *tm_g_op(tm_graph *g, int32_t builtin, const int32_t *ins, size_t nin,
                               const int32_t *outs, size_t nout, uint8_t opt_type, tm_node *opts) {
  uint32_t code = tm_g_opcode(g, builtin, 1);
  tm_node *op = tm_operator(g->b, code, ins, nin, outs, nout, opt_type, opts);
  g->ops[g->nops++] = op;
  return op;
}

static inline float tm_val(int i) { return (float)((i * 37) % 19 - 9) / 8.0f; }

/* A float CNN-ish chain exercising most of the ops wick has today:
 *   x[1,4,4,2] -CONV_2D(relu)-> c[1,4,4,3] -MAX_POOL 2x2-> p[1,2,2,3] -RESHAPE-> r[1,12]
 *   -FULLY_CONNECTED-> f[1,4] -ADD k-> a[1,4] -SOFTMAX-> y[1,4]
 *   c -MEAN(1,2)-> m[1,3] -PAD 1-> pm[3,5] -CONCATENATION(axis 0, pm, pm)-> cc[6,5]
 *   x -DEPTHWISE_CONV_2D(x2)-> d[1,4,4,4] -AVERAGE_POOL 2x2-> ap[1,2,2,4]
 * Outputs y, cc, ap, named by the signature "serving_default". */
static inline uint8_t *tm_demo_chain(size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  float fw[3 * 2 * 2 * 2], fb[3], dw[3 * 3 * 4], db[4], w[4 * 12], wb[4], k[4];
  for (int i = 0; i < 24; i++) fw[i] = tm_val(i);
  for (int i = 0; i < 3; i++) fb[i] = tm_val(i + 50);
  for (int i = 0; i < 36; i++) dw[i] = tm_val(i + 7);
  for (int i = 0; i < 4; i++) db[i] = tm_val(i + 3);
  for (int i = 0; i < 48; i++) w[i] = tm_val(i + 11);
  for (int i = 0; i < 4; i++) wb[i] = tm_val(i + 5), k[i] = tm_val(i + 13);
  int32_t shape_data[2] = {1, 12}, axes[2] = {1, 2}, pads[4] = {1, 1, 1, 1};

  int32_t s_x[4] = {1, 4, 4, 2}, s_fw[4] = {3, 2, 2, 2}, s_3[1] = {3}, s_c[4] = {1, 4, 4, 3};
  int32_t s_p[4] = {1, 2, 2, 3}, s_2[1] = {2}, s_r[2] = {1, 12}, s_w[2] = {4, 12}, s_4[1] = {4};
  int32_t s_f[2] = {1, 4}, s_m[2] = {1, 3}, s_pads[2] = {2, 2}, s_pm[2] = {3, 5};
  int32_t s_cc[2] = {6, 5}, s_dw[4] = {1, 3, 3, 4}, s_d[4] = {1, 4, 4, 4}, s_ap[4] = {1, 2, 2, 4};

  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 4);
  int32_t tfw = tm_g_const(&g, "conv/filter", TM_F32, s_fw, 4, fw, sizeof fw, NULL);
  int32_t tfb = tm_g_const(&g, "conv/bias", TM_F32, s_3, 1, fb, sizeof fb, NULL);
  int32_t c = tm_g_tensor(&g, "c", TM_F32, s_c, 4);
  int32_t p = tm_g_tensor(&g, "p", TM_F32, s_p, 4);
  int32_t tshape = tm_g_const(&g, "shape", TM_I32, s_2, 1, shape_data, sizeof shape_data, NULL);
  int32_t r = tm_g_tensor(&g, "r", TM_F32, s_r, 2);
  int32_t tw = tm_g_const(&g, "fc/w", TM_F32, s_w, 2, w, sizeof w, NULL);
  int32_t twb = tm_g_const(&g, "fc/b", TM_F32, s_4, 1, wb, sizeof wb, NULL);
  int32_t f = tm_g_tensor(&g, "f", TM_F32, s_f, 2);
  int32_t tk = tm_g_const(&g, "k", TM_F32, s_4, 1, k, sizeof k, NULL);
  int32_t a = tm_g_tensor(&g, "a", TM_F32, s_f, 2);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_f, 2);
  int32_t taxes = tm_g_const(&g, "axes", TM_I32, s_2, 1, axes, sizeof axes, NULL);
  int32_t m = tm_g_tensor(&g, "m", TM_F32, s_m, 2);
  int32_t tpads = tm_g_const(&g, "pads", TM_I32, s_pads, 2, pads, sizeof pads, NULL);
  int32_t pm = tm_g_tensor(&g, "pm", TM_F32, s_pm, 2);
  int32_t cc = tm_g_tensor(&g, "cc", TM_F32, s_cc, 2);
  int32_t tdw = tm_g_const(&g, "dw/filter", TM_F32, s_dw, 4, dw, sizeof dw, NULL);
  int32_t tdb = tm_g_const(&g, "dw/bias", TM_F32, s_4, 1, db, sizeof db, NULL);
  int32_t d = tm_g_tensor(&g, "d", TM_F32, s_d, 4);
  int32_t ap = tm_g_tensor(&g, "ap", TM_F32, s_ap, 4);

  tm_node *o;
  { /* CONV_2D: Conv2DOptions type 1 */
    o = tm_table(b);
    tm_i8(o, 0, 0);
    tm_i32(o, 1, 1);
    tm_i32(o, 2, 1);
    tm_i8(o, 3, 1);
    tm_i32(o, 4, 1);
    tm_i32(o, 5, 1);
    int32_t in[3] = {x, tfw, tfb}, out[1] = {c};
    tm_g_op(&g, 3, in, 3, out, 1, 1, o);
  }
  { /* MAX_POOL_2D: Pool2DOptions type 5 */
    o = tm_table(b);
    tm_i8(o, 0, 1);
    tm_i32(o, 1, 2);
    tm_i32(o, 2, 2);
    tm_i32(o, 3, 2);
    tm_i32(o, 4, 2);
    tm_i8(o, 5, 0);
    int32_t in[1] = {c}, out[1] = {p};
    tm_g_op(&g, 17, in, 1, out, 1, 5, o);
  }
  { /* RESHAPE: ReshapeOptions type 17 */
    o = tm_table(b);
    tm_ref(o, 0, tm_vec_i32(b, shape_data, 2));
    int32_t in[2] = {p, tshape}, out[1] = {r};
    tm_g_op(&g, 22, in, 2, out, 1, 17, o);
  }
  { /* FULLY_CONNECTED: FullyConnectedOptions type 8 */
    o = tm_table(b);
    tm_i8(o, 0, 0);
    tm_i8(o, 1, 0);
    tm_u8(o, 2, 0);
    int32_t in[3] = {r, tw, twb}, out[1] = {f};
    tm_g_op(&g, 9, in, 3, out, 1, 8, o);
  }
  { /* ADD: AddOptions type 11 */
    o = tm_table(b);
    tm_i8(o, 0, 0);
    int32_t in[2] = {f, tk}, out[1] = {a};
    tm_g_op(&g, 0, in, 2, out, 1, 11, o);
  }
  { /* SOFTMAX: SoftmaxOptions type 9 */
    o = tm_table(b);
    tm_f32(o, 0, 1.0f);
    int32_t in[1] = {a}, out[1] = {y};
    tm_g_op(&g, 25, in, 1, out, 1, 9, o);
  }
  { /* MEAN: ReducerOptions type 27 */
    o = tm_table(b);
    tm_u8(o, 0, 0);
    int32_t in[2] = {c, taxes}, out[1] = {m};
    tm_g_op(&g, 40, in, 2, out, 1, 27, o);
  }
  { /* PAD: PadOptions type 22 */
    o = tm_table(b);
    int32_t in[2] = {m, tpads}, out[1] = {pm};
    tm_g_op(&g, 34, in, 2, out, 1, 22, o);
  }
  { /* CONCATENATION: ConcatenationOptions type 10 */
    o = tm_table(b);
    tm_i32(o, 0, 0);
    tm_i8(o, 1, 0);
    int32_t in[2] = {pm, pm}, out[1] = {cc};
    tm_g_op(&g, 2, in, 2, out, 1, 10, o);
  }
  { /* DEPTHWISE_CONV_2D: DepthwiseConv2DOptions type 2 */
    o = tm_table(b);
    tm_i8(o, 0, 0);
    tm_i32(o, 1, 1);
    tm_i32(o, 2, 1);
    tm_i32(o, 3, 2);
    tm_i8(o, 4, 0);
    tm_i32(o, 5, 1);
    tm_i32(o, 6, 1);
    int32_t in[3] = {x, tdw, tdb}, out[1] = {d};
    tm_g_op(&g, 4, in, 3, out, 1, 2, o);
  }
  { /* AVERAGE_POOL_2D */
    o = tm_table(b);
    tm_i8(o, 0, 1);
    tm_i32(o, 1, 2);
    tm_i32(o, 2, 2);
    tm_i32(o, 3, 2);
    tm_i32(o, 4, 2);
    tm_i8(o, 5, 0);
    int32_t in[1] = {d}, out[1] = {ap};
    tm_g_op(&g, 1, in, 1, out, 1, 5, o);
  }
  int32_t gin[1] = {x}, gout[3] = {y, cc, ap};
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 3, g.ops, g.nops);
  const char *in_names[1] = {"x"}, *out_names[3] = {"y", "cc", "ap"};
  uint32_t in_t[1] = {(uint32_t)x}, out_t[3] = {(uint32_t)y, (uint32_t)cc, (uint32_t)ap};
  tm_node *sig = tm_signature(b, "serving_default", 0, in_names, in_t, 1, out_names, out_t, 3);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, &sig, 1);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* Two subgraphs and quantization metadata:
 *   subgraph 0: w int8[4,2] (per-axis: 4 scales, dim 0) -DEQUANTIZE-> wf[4,2];
 *               x[1,2] -FULLY_CONNECTED(wf)-> f[1,4];
 *               f, k[1,4] -STABLEHLO_COMPOSITE("demo.add", decomposition 1)-> y[1,4]
 *   subgraph 1: a[1,4], b[1,4] -ADD-> out[1,4]
 * Loads everywhere; runs once wick has DEQUANTIZE and STABLEHLO_COMPOSITE. */
static inline uint8_t *tm_demo_composite(size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g, h;
  tm_graph_init(&g, b);
  int8_t wq[8] = {1, -2, 3, -4, 5, -6, 7, -8};
  float scales[4] = {0.5f, 0.25f, 0.125f, 1.0f}, kv[4] = {1, 2, 3, 4};
  int64_t zps[4] = {0, 0, 0, 0};
  int32_t s_w[2] = {4, 2}, s_x[2] = {1, 2}, s_f[2] = {1, 4};
  int32_t w = tm_g_const(&g, "w", TM_I8, s_w, 2, wq, sizeof wq, tm_quant(b, scales, zps, 4, 0));
  int32_t wf = tm_g_tensor(&g, "wf", TM_F32, s_w, 2);
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t f = tm_g_tensor(&g, "f", TM_F32, s_f, 2);
  int32_t k = tm_g_const(&g, "k", TM_F32, s_f, 2, kv, sizeof kv, NULL);
  int32_t y = tm_g_tensor(&g, "y", TM_F32, s_f, 2);
  {
    int32_t in[1] = {w}, out[1] = {wf};
    tm_g_op(&g, 6, in, 1, out, 1, 0, NULL);
  }
  {
    tm_node *o = tm_table(b);
    tm_i8(o, 0, 0);
    int32_t in[2] = {x, wf}, out[1] = {f};
    tm_g_op(&g, 9, in, 2, out, 1, 8, o);
  }
  {
    tm_node *o = tm_table(b);
    tm_ref(o, 0, tm_str(b, "demo.add"));
    tm_i32(o, 1, 1);
    int32_t in[2] = {f, k}, out[1] = {y};
    tm_node *op = tm_g_op(&g, 206, in, 2, out, 1, 0, NULL);
    tm_u8(op, 11, 21);
    tm_ref(op, 12, o);
  }
  /* subgraph 1 shares the model's buffer and opcode lists with subgraph 0 */
  memset(&h, 0, sizeof h);
  h.b = b;
  h.tensors[h.nt++] = tm_tensor(b, "a", TM_F32, s_f, 2, 0, NULL);
  h.tensors[h.nt++] = tm_tensor(b, "b", TM_F32, s_f, 2, 0, NULL);
  h.tensors[h.nt++] = tm_tensor(b, "out", TM_F32, s_f, 2, 0, NULL);
  {
    uint32_t code = tm_g_opcode(&g, 0, 1);
    int32_t in[2] = {0, 1}, out[1] = {2};
    h.ops[h.nops++] = tm_operator(b, code, in, 2, out, 1, 0, NULL);
  }
  int32_t gin[1] = {x}, gout[1] = {y}, hin[2] = {0, 1}, hout[1] = {2};
  tm_node *sgs[2];
  sgs[0] = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  sgs[1] = tm_subgraph(b, h.tensors, h.nt, hin, 2, hout, 1, h.ops, h.nops);
  const char *in_names[1] = {"x"}, *out_names[1] = {"y"};
  uint32_t in_t[1] = {(uint32_t)x}, out_t[1] = {(uint32_t)y};
  tm_node *sig = tm_signature(b, "serving_default", 0, in_names, in_t, 1, out_names, out_t, 1);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, sgs, 2, g.buffers, g.nbuf, &sig, 1);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* A loop: three subgraphs sharing the model's buffers and opcodes.
 *   subgraph 0: i0 = 0, n = 3, step = 1 (int32 [] constants), x[1,4]
 *               -WHILE(cond 1, body 2)-> (i, n', step', y[1,4])
 *   subgraph 1 (cond): (i, n, step, x) -LESS(i, n)-> r bool []
 *   subgraph 2 (body): (i, n, step, x) -> (ADD(i, step), n, step, ADD(x, x))
 * y = x * 8. Mutations reach WHILE's subgraph indices, counts and types. */
static inline uint8_t *tm_demo_while(size_t *size_out) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t zero = 0, three = 3, one = 1, s_x[2] = {1, 4};
  int32_t i0 = tm_g_const(&g, "i0", TM_I32, NULL, 0, &zero, 4, NULL);
  int32_t n = tm_g_const(&g, "n", TM_I32, NULL, 0, &three, 4, NULL);
  int32_t step = tm_g_const(&g, "step", TM_I32, NULL, 0, &one, 4, NULL);
  int32_t x = tm_g_tensor(&g, "x", TM_F32, s_x, 2);
  int32_t outs[4] = {tm_g_tensor(&g, "i", TM_I32, NULL, 0),
                     tm_g_tensor(&g, "n_out", TM_I32, NULL, 0),
                     tm_g_tensor(&g, "step_out", TM_I32, NULL, 0),
                     tm_g_tensor(&g, "y", TM_F32, s_x, 2)};
  {
    tm_node *o = tm_table(b); /* WhileOptions (type 93): cond 0, body 1 */
    tm_i32(o, 0, 1);
    tm_i32(o, 1, 2);
    int32_t in[4] = {i0, n, step, x};
    tm_g_op(&g, 119, in, 4, outs, 4, 93, o);
  }
  uint32_t less = tm_g_opcode(&g, 58, 1), add = tm_g_opcode(&g, 0, 1);
  tm_node *ct[5], *bt[6], *cop, *bops[2];
  ct[0] = tm_tensor(b, "i", TM_I32, NULL, 0, 0, NULL);
  ct[1] = tm_tensor(b, "n", TM_I32, NULL, 0, 0, NULL);
  ct[2] = tm_tensor(b, "step", TM_I32, NULL, 0, 0, NULL);
  ct[3] = tm_tensor(b, "x", TM_F32, s_x, 2, 0, NULL);
  ct[4] = tm_tensor(b, "r", TM_BOOL, NULL, 0, 0, NULL);
  {
    int32_t in[2] = {0, 1}, out[1] = {4};
    cop = tm_operator(b, less, in, 2, out, 1, 0, NULL);
  }
  for (int k = 0; k < 4; k++)
    bt[k] =
        tm_tensor(b, k == 3 ? "x" : "v", k == 3 ? TM_F32 : TM_I32, s_x, k == 3 ? 2 : 0, 0, NULL);
  bt[4] = tm_tensor(b, "i1", TM_I32, NULL, 0, 0, NULL);
  bt[5] = tm_tensor(b, "x1", TM_F32, s_x, 2, 0, NULL);
  {
    int32_t in[2] = {0, 2}, out[1] = {4};
    bops[0] = tm_operator(b, add, in, 2, out, 1, 0, NULL);
    int32_t in2[2] = {3, 3}, out2[1] = {5};
    bops[1] = tm_operator(b, add, in2, 2, out2, 1, 0, NULL);
  }
  int32_t gin[1] = {x}, gout[1] = {outs[3]}, vars[4] = {0, 1, 2, 3}, cout[1] = {4};
  int32_t bout[4] = {4, 1, 2, 5};
  tm_node *sgs[3];
  sgs[0] = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, 1, g.ops, g.nops);
  sgs[1] = tm_subgraph(b, ct, 5, vars, 4, cout, 1, &cop, 1);
  sgs[2] = tm_subgraph(b, bt, 6, vars, 4, bout, 4, bops, 2);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, sgs, 3, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size_out);
  tm_free(b);
  return bytes;
}

/* ---------------------------------------------------------------- DAG models of ADD / MUL / SUB */

enum { TM_OP_ADD = 0, TM_OP_MUL = 18, TM_OP_SUB = 41 }; /* their builtin codes */
enum { TM_DAG_MAX_OPS = 28 };

typedef struct tm_dag {
  int nops;
  /* op i's builtin code and operand indices (0 = x, j + 1 = the result of op j) */
  int op[TM_DAG_MAX_OPS], a[TM_DAG_MAX_OPS], b[TM_DAG_MAX_OPS];
  int nout, outs[4];
} tm_dag;

/* The model of d: tensor 0 = x, tensor i + 1 = result of op i, each float32[elements]; the
 * subgraph's outputs are d's outs. */
static inline uint8_t *tm_dag_model(const tm_dag *d, int32_t elements, size_t *size) {
  tm_builder *b = tm_new();
  tm_graph g;
  tm_graph_init(&g, b);
  int32_t shape[1] = {elements};
  int32_t t[TM_DAG_MAX_OPS + 1];
  t[0] = tm_g_tensor(&g, "x", TM_F32, shape, 1);
  for (int i = 0; i < d->nops; i++) {
    char name[16];
    snprintf(name, sizeof name, "t%d", i);
    t[i + 1] = tm_g_tensor(&g, name, TM_F32, shape, 1);
  }
  for (int i = 0; i < d->nops; i++) {
    tm_node *o = tm_table(b);
    tm_i8(o, 0, 0); /* fused activation NONE */
    int32_t in[2] = {t[d->a[i]], t[d->b[i]]}, out[1] = {t[i + 1]};
    uint8_t opt_type = d->op[i] == TM_OP_ADD ? 11 : d->op[i] == TM_OP_MUL ? 21 : 28;
    tm_g_op(&g, d->op[i], in, 2, out, 1, opt_type, o);
  }
  int32_t gin[1] = {t[0]}, gout[4];
  for (int i = 0; i < d->nout; i++) gout[i] = t[d->outs[i]];
  tm_node *sg = tm_subgraph(b, g.tensors, g.nt, gin, 1, gout, (size_t)d->nout, g.ops, g.nops);
  tm_node *model = tm_model(b, 3, g.opcodes, g.nopc, &sg, 1, g.buffers, g.nbuf, NULL, 0);
  uint8_t *bytes = tm_finish(b, model, "TFL3", size);
  tm_free(b);
  return bytes;
}

/* d evaluated directly in float32 from x (`elements` values): vals holds nops + 1 rows of
 * `elements`, row i being tensor i. */
static inline void tm_dag_evaluate(const tm_dag *d, const float *x, size_t elements, float *vals) {
  memcpy(vals, x, elements * sizeof *vals);
  for (int i = 0; i < d->nops; i++)
    for (size_t k = 0; k < elements; k++) {
      float p = vals[(size_t)d->a[i] * elements + k], q = vals[(size_t)d->b[i] * elements + k];
      vals[(size_t)(i + 1) * elements + k] = d->op[i] == TM_OP_ADD   ? p + q
                                             : d->op[i] == TM_OP_MUL ? p * q
                                                                     : p - q;
    }
}

#endif /* WICK_TESTS_TINY_MODEL_H */
