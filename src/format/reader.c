/*
 * reader.c — turns the bytes of a .tflite file into a verified wick_model.
 *
 * Two passes over the model, both before any other code sees it:
 *   1. structure: every table, vector and string is reached only through the
 *      bounds-checked accessors of flatbuffer.h and decoded into plain C
 *      arrays (tensors, operators, signatures) allocated from the model's bump
 *      allocator. Constant data is not copied: tensors point into the file.
 *   2. semantics: operator codes and versions, tensor and buffer indices,
 *      constant byte sizes (checked 64-bit arithmetic), quantization arrays,
 *      topological order, no tensor both input and output of one op, and an
 *      acyclic graph of subgraph references.
 * Every failure names the table, field and index: "subgraphs[0].tensors[12].shape".
 */
#include <inttypes.h>
#include <string.h>

#include "format/model.h"
#include "format/flatbuffer.h"
#include "format/schema.h"

/* Decoding options of one operator: src/format/options.c. */
WICK_INTERNAL int wick_format_read_options(const wick_fb_table *op_table, int32_t builtin,
                                           wick_op_params *params, char *what, size_t what_size);
WICK_INTERNAL void wick_params_defaults(wick_op_params *params);

typedef struct reader {
  wick_model *model;
  wick_fb fb;
  char *error;
  size_t error_size;
  uint32_t num_buffers;
  const uint8_t **buffer_data; /* per buffer: bytes or NULL */
  size_t *buffer_size;
  uint32_t num_opcodes;
  wick_opcode *opcodes;
} reader;

static wick_status fail(reader *r, const char *fmt, ...) WICK_PRINTF(2, 3);
static wick_status fail(reader *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  wick_vformat_message(r->error, r->error_size, fmt, ap);
  va_end(ap);
  return WICK_ERR_MALFORMED_MODEL;
}

static void *zalloc(reader *r, size_t count, size_t size) {
  size_t bytes;
  if (!wick_mul_size(count, size, &bytes)) return NULL;
  void *p = wick_bump_alloc(&r->model->bump, bytes ? bytes : 1);
  if (p) memset(p, 0, bytes);
  return p;
}

#define ALLOC(r, ptr, count)                                                           \
  do {                                                                                 \
    (ptr) = zalloc((r), (count), sizeof(*(ptr)));                                      \
    if ((ptr) == NULL) {                                                               \
      wick_format_message((r)->error, (r)->error_size, "out of memory reading model"); \
      return WICK_ERR_OUT_OF_MEMORY;                                                   \
    }                                                                                  \
  } while (0)

static const char *opt_string(reader *r, const wick_fb_table *t, int id, const char *what,
                              wick_status *st) {
  const char *s = "";
  int rc = wick_fb_string_field(t, id, &s, NULL);
  if (rc < 0) *st = fail(r, "%s: string is out of bounds or not NUL-terminated", what);
  return rc > 0 ? s : "";
}

/* Reads an optional int32 vector field into a freshly allocated array. */
static wick_status read_i32_vector(reader *r, const wick_fb_table *t, int id, const char *what,
                                   int32_t **out, uint32_t *count) {
  wick_fb_vector v;
  int rc = wick_fb_vector_field(t, id, 4, &v);
  *out = NULL;
  *count = 0;
  if (rc < 0) return fail(r, "%s: vector is out of bounds", what);
  if (rc == 0) return WICK_OK;
  ALLOC(r, *out, v.len);
  for (uint32_t i = 0; i < v.len; i++) (*out)[i] = wick_fb_vec_i32(&v, i);
  *count = v.len;
  return WICK_OK;
}

/* ---------------------------------------------------------------- buffers & opcodes */

static wick_status read_buffers(reader *r, const wick_fb_table *root) {
  wick_fb_vector v;
  int rc = wick_fb_vector_field(root, MODEL_BUFFERS, 4, &v);
  if (rc < 0) return fail(r, "Model.buffers: vector is out of bounds");
  r->num_buffers = rc > 0 ? v.len : 0;
  ALLOC(r, r->buffer_data, r->num_buffers);
  ALLOC(r, r->buffer_size, r->num_buffers);
  for (uint32_t i = 0; i < r->num_buffers; i++) {
    wick_fb_table b;
    if (wick_fb_vec_table(&v, i, &b) < 0) return fail(r, "Model.buffers[%u]: bad table offset", i);
    wick_fb_vector data;
    rc = wick_fb_vector_field(&b, BUFFER_DATA, 1, &data);
    if (rc < 0) return fail(r, "Model.buffers[%u].data: vector is out of bounds", i);
    uint64_t offset = 0, size = 0;
    if (!wick_fb_u64(&b, BUFFER_OFFSET, 0, &offset) || !wick_fb_u64(&b, BUFFER_SIZE, 0, &size))
      return fail(r, "Model.buffers[%u]: offset/size field is malformed", i);
    if (rc > 0 && data.len > 0) {
      r->buffer_data[i] = r->fb.data + data.pos;
      r->buffer_size[i] = data.len;
    } else if (offset > 1) {
      /* Data stored after the flatbuffer (files over 2 GB); offset counts
       * from the start of the file. Written to avoid offset + size overflow. */
      if (offset > r->fb.size || size > r->fb.size - offset)
        return fail(r,
                    "Model.buffers[%u]: offset %" PRIu64 " + size %" PRIu64
                    " lies outside the %zu-byte file",
                    i, offset, size, r->fb.size);
      r->buffer_data[i] = r->fb.data + offset;
      r->buffer_size[i] = (size_t)size;
    }
  }
  return WICK_OK;
}

/* Model.metadata: name and bytes of each entry whose buffer exists. */
static wick_status read_metadata(reader *r, const wick_fb_table *root) {
  wick_fb_vector v;
  int rc = wick_fb_vector_field(root, MODEL_METADATA, 4, &v);
  if (rc < 0) return fail(r, "Model.metadata: vector is out of bounds");
  uint32_t n = rc > 0 ? v.len : 0;
  wick_model *m = r->model;
  ALLOC(r, m->metadata, n);
  m->num_metadata = 0;
  for (uint32_t i = 0; i < n; i++) {
    wick_fb_table t;
    uint32_t buffer;
    if (wick_fb_vec_table(&v, i, &t) < 0 || !wick_fb_u32(&t, METADATA_BUFFER, 0, &buffer))
      return fail(r, "Model.metadata[%u]: malformed table", i);
    wick_status st = WICK_OK;
    char what[48];
    wick_format_message(what, sizeof what, "Model.metadata[%u].name", i);
    const char *name = opt_string(r, &t, METADATA_NAME, what, &st);
    if (st != WICK_OK) return st;
    if (buffer >= r->num_buffers) continue;
    wick_metadata_info *e = &m->metadata[m->num_metadata++];
    e->name = name ? name : "";
    e->data = r->buffer_data[buffer];
    e->size = e->data ? r->buffer_size[buffer] : 0;
  }
  return WICK_OK;
}

static wick_status read_opcodes(reader *r, const wick_fb_table *root) {
  wick_fb_vector v;
  int rc = wick_fb_vector_field(root, MODEL_OPERATOR_CODES, 4, &v);
  if (rc < 0) return fail(r, "Model.operator_codes: vector is out of bounds");
  r->num_opcodes = rc > 0 ? v.len : 0;
  ALLOC(r, r->opcodes, r->num_opcodes);
  for (uint32_t i = 0; i < r->num_opcodes; i++) {
    wick_fb_table t;
    if (wick_fb_vec_table(&v, i, &t) < 0)
      return fail(r, "Model.operator_codes[%u]: bad table offset", i);
    int8_t deprecated;
    int32_t builtin, version;
    if (!wick_fb_i8(&t, OPCODE_DEPRECATED_BUILTIN, 0, &deprecated) ||
        !wick_fb_i32(&t, OPCODE_BUILTIN, 0, &builtin) ||
        !wick_fb_i32(&t, OPCODE_VERSION, 1, &version))
      return fail(r, "Model.operator_codes[%u]: malformed scalar field", i);
    int32_t code = builtin > deprecated ? builtin : deprecated;
    if (code < 0) return fail(r, "Model.operator_codes[%u]: negative builtin code %d", i, code);
    if (version < 1) return fail(r, "Model.operator_codes[%u]: version %d < 1", i, version);
    wick_status st = WICK_OK;
    char what[64];
    wick_format_message(what, sizeof what, "Model.operator_codes[%u].custom_code", i);
    const char *custom = opt_string(r, &t, OPCODE_CUSTOM, what, &st);
    if (st != WICK_OK) return st;
    r->opcodes[i].builtin = code;
    r->opcodes[i].version = version;
    r->opcodes[i].custom_name = code == WICK_BUILTIN_CUSTOM ? custom : NULL;
  }
  return WICK_OK;
}

/* ---------------------------------------------------------------- tensors */

static size_t dtype_size_or_zero(int32_t type) {
  return ((type >= 0 && type <= WICK_DTYPE_FLOAT64) || type == WICK_DTYPE_RESOURCE)
             ? wick_dtype_size((wick_dtype)type)
             : 0;
}

static wick_status read_quantization(reader *r, const wick_fb_table *q, wick_tensor_info *t,
                                     uint32_t sg, uint32_t ti) {
  wick_fb_vector scale, zp;
  int rs = wick_fb_vector_field(q, QUANT_SCALE, 4, &scale);
  int rz = wick_fb_vector_field(q, QUANT_ZERO_POINT, 8, &zp);
  int32_t qdim;
  if (rs < 0 || rz < 0 || !wick_fb_i32(q, QUANT_QUANTIZED_DIMENSION, 0, &qdim))
    return fail(r, "subgraphs[%u].tensors[%u].quantization: malformed field", sg, ti);
  uint32_t n = rs > 0 ? scale.len : 0;
  uint32_t nz = rz > 0 ? zp.len : 0;
  uint8_t details_type;
  if (!wick_fb_u8(q, QUANT_DETAILS_TYPE, 0, &details_type))
    return fail(r, "subgraphs[%u].tensors[%u].quantization.details_type: malformed", sg, ti);
  t->quant.block_zero_points = -1;
  if (details_type == QUANT_DETAILS_BLOCKWISE) {
    /* Checked against the subgraph's tensors once all are read (check_blockwise). */
    wick_fb_table bq;
    int rb = wick_fb_table_field(q, QUANT_DETAILS, &bq);
    int32_t scales, zero_points, block_size;
    /* (absent fields take the schema's default, 0: tensor 0) */
    if (rb <= 0 || !wick_fb_i32(&bq, BLOCKWISE_SCALES, 0, &scales) ||
        !wick_fb_i32(&bq, BLOCKWISE_ZERO_POINTS, 0, &zero_points) ||
        !wick_fb_i32(&bq, BLOCKWISE_BLOCK_SIZE, 0, &block_size))
      return fail(r, "subgraphs[%u].tensors[%u].quantization.details: malformed blockwise table",
                  sg, ti);
    if (block_size <= 0)
      return fail(r,
                  "subgraphs[%u].tensors[%u].quantization: blockwise block_size %d is not "
                  "positive",
                  sg, ti, block_size);
    if (n != 0)
      return fail(r, "subgraphs[%u].tensors[%u].quantization: both scales and blockwise details",
                  sg, ti);
    t->quant.block_size = block_size;
    t->quant.block_scales = scales;
    t->quant.block_zero_points = zero_points;
    return WICK_OK;
  }
  if (n == 0) return WICK_OK; /* min/max only, or custom details: not quantized for us */
  if (nz != 0 && nz != n)
    return fail(r, "subgraphs[%u].tensors[%u].quantization: %u scales but %u zero points", sg, ti,
                n, nz);
  if (n > 1 && t->rank == 1 && (int64_t)t->dims[0] == (int64_t)n) {
    qdim = 0; /* old converters leave a stale quantized_dimension on 1-D biases */
  }
  if (n > 1) {
    if (qdim < 0 || qdim >= t->rank)
      return fail(r,
                  "subgraphs[%u].tensors[%u].quantization.quantized_dimension %d is outside "
                  "rank %d",
                  sg, ti, qdim, t->rank);
    if ((int64_t)t->dims[qdim] != (int64_t)n)
      return fail(r,
                  "subgraphs[%u].tensors[%u].quantization: %u scales for dimension %d of size %d",
                  sg, ti, n, qdim, t->dims[qdim]);
  }
  t->quant.count = n;
  t->quant.quantized_dimension = n > 1 ? qdim : 0;
  ALLOC(r, t->quant.scale, n);
  ALLOC(r, t->quant.zero_point, n);
  for (uint32_t i = 0; i < n; i++) {
    t->quant.scale[i] = wick_fb_vec_f32(&scale, i);
    t->quant.zero_point[i] = nz ? wick_fb_vec_i64(&zp, i) : 0;
  }
  return WICK_OK;
}

/* ---------------------------------------------------------------- sparsity */

/* One SparseIndexVector of a SPARSE_CSR level (union type field `type_id`,
 * value field `id`): the width of its entries and where they lie. Int32
 * entries must be >= 0 (they are read back as uint32). */
static wick_status read_index_vector(reader *r, const wick_fb_table *dm, int type_id, int id,
                                     const char *what, uint32_t l, const char *field,
                                     wick_sparse_level *lv, bool segments) {
  uint8_t type;
  if (!wick_fb_u8(dm, type_id, 0, &type))
    return fail(r, "%s.dim_metadata[%u].%s_type: malformed", what, l, field);
  wick_fb_table vt;
  int rc = wick_fb_table_field(dm, id, &vt);
  if (rc < 0) return fail(r, "%s.dim_metadata[%u].%s: bad table offset", what, l, field);
  if (rc == 0 || type == 0)
    return fail(r, "%s.dim_metadata[%u].%s is absent (a SPARSE_CSR level needs it)", what, l,
                field);
  uint8_t width = type == INDEX_VECTOR_INT32    ? 4
                  : type == INDEX_VECTOR_UINT16 ? 2
                  : type == INDEX_VECTOR_UINT8  ? 1
                                                : 0;
  if (width == 0)
    return fail(r,
                "%s.dim_metadata[%u].%s_type %u is not Int32Vector (1), Uint16Vector (2) or "
                "Uint8Vector (3)",
                what, l, field, type);
  wick_fb_vector v;
  rc = wick_fb_vector_field(&vt, INDEX_VECTOR_VALUES, width, &v);
  if (rc < 0)
    return fail(r, "%s.dim_metadata[%u].%s.values: vector is out of bounds", what, l, field);
  uint32_t n = rc > 0 ? v.len : 0;
  const uint8_t *data = rc > 0 ? r->fb.data + v.pos : NULL;
  if (width == 4)
    for (uint32_t i = 0; i < n; i++)
      if (wick_fb_vec_i32(&v, i) < 0)
        return fail(r, "%s.dim_metadata[%u].%s.values[%u] is negative (%d)", what, l, field, i,
                    wick_fb_vec_i32(&v, i));
  if (segments) {
    lv->segment_width = width;
    lv->num_segments = n;
    lv->segments = data;
  } else {
    lv->index_width = width;
    lv->num_indices = n;
    lv->indices = data;
  }
  return WICK_OK;
}

/* Tensor.sparsity: decodes and verifies the levels (see wick_sparsity in
 * format/model.h). traversal_order lists the tensor's dims first, then its
 * block dims (block k blocks dim block_map[k] by dim_metadata's dense_size at
 * the level that walks it); each blocked dim must divide by its block size;
 * a DENSE level's dense_size is its extent; a SPARSE_CSR level has one
 * segment per position of the level above plus one, segments start at 0,
 * never decrease and end at the index count, and every index is below the
 * level's extent (dense_size is unused there, as in LiteRT). */
static wick_status read_sparsity(reader *r, const wick_fb_table *sp, wick_tensor_info *t,
                                 const char *what) {
  wick_fb_vector order, bmap, dmv;
  int ro = wick_fb_vector_field(sp, SPARSITY_TRAVERSAL_ORDER, 4, &order);
  int rb = wick_fb_vector_field(sp, SPARSITY_BLOCK_MAP, 4, &bmap);
  int rd = wick_fb_vector_field(sp, SPARSITY_DIM_METADATA, 4, &dmv);
  if (ro < 0 || rb < 0 || rd < 0)
    return fail(r, "%s.%s: vector is out of bounds", what,
                ro < 0   ? "traversal_order"
                : rb < 0 ? "block_map"
                         : "dim_metadata");
  int32_t rank = t->rank;
  uint32_t nb = rb > 0 ? bmap.len : 0, no = ro > 0 ? order.len : 0, nd = rd > 0 ? dmv.len : 0;
  if (nb > (uint32_t)rank)
    return fail(r, "%s.block_map has %u entries for a tensor of rank %d", what, nb, rank);
  uint32_t nl = (uint32_t)rank + nb;
  if (no != nl)
    return fail(r, "%s.traversal_order has %u entries; rank %d plus %u blocked dims needs %u", what,
                no, rank, nb, nl);
  if (nd != nl)
    return fail(r, "%s.dim_metadata has %u entries; rank %d plus %u blocked dims needs %u", what,
                nd, rank, nb, nl);

  wick_sparsity *s;
  ALLOC(r, s, 1);
  s->num_levels = (int32_t)nl;
  int32_t block_dim[WICK_MAX_RANK];  /* dim that block k blocks */
  int32_t block_size[WICK_MAX_RANK]; /* per dim; 0 = not blocked */
  int32_t level_of[2 * WICK_MAX_RANK];
  bool seen[2 * WICK_MAX_RANK];
  memset(block_size, 0, sizeof block_size);
  memset(seen, 0, sizeof seen);
  for (uint32_t k = 0; k < nb; k++) {
    int32_t d = wick_fb_vec_i32(&bmap, k);
    if (d < 0 || d >= rank)
      return fail(r, "%s.block_map[%u] = %d is not a dim of the rank-%d tensor", what, k, d, rank);
    for (uint32_t j = 0; j < k; j++)
      if (block_dim[j] == d)
        return fail(r, "%s.block_map[%u]: dim %d is blocked twice", what, k, d);
    block_dim[k] = d;
  }
  for (uint32_t l = 0; l < nl; l++) {
    int32_t v = wick_fb_vec_i32(&order, l);
    bool ok = l < (uint32_t)rank ? (v >= 0 && v < rank) : (v >= rank && v < (int32_t)nl);
    if (!ok)
      return fail(r,
                  "%s.traversal_order[%u] = %d: the first %d entries must be the tensor's dims "
                  "(0..%d), the others its block dims (%d..%u)",
                  what, l, v, rank, rank - 1, rank, nl - 1);
    if (seen[v]) return fail(r, "%s.traversal_order[%u]: %d appears twice", what, l, v);
    seen[v] = true;
    level_of[l] = v;
  }
  /* Block sizes first: the levels of the blocked dims need them. */
  for (uint32_t l = (uint32_t)rank; l < nl; l++) {
    wick_fb_table dm;
    int32_t size;
    if (wick_fb_vec_table(&dmv, l, &dm) < 0 || !wick_fb_i32(&dm, DIMMETA_DENSE_SIZE, 0, &size))
      return fail(r, "%s.dim_metadata[%u]: malformed table", what, l);
    if (size < 1)
      return fail(r, "%s.dim_metadata[%u].dense_size %d: a block size must be >= 1", what, l, size);
    block_size[block_dim[level_of[l] - rank]] = size;
  }
  int64_t dstride[WICK_MAX_RANK], acc = 1; /* row-major; <= the span checked at shape */
  for (int32_t d = rank - 1; d >= 0; d--) {
    dstride[d] = acc;
    acc *= t->dims[d] ? t->dims[d] : 1;
  }
  int64_t positions = 1; /* of the level above; 1 for the root */
  for (uint32_t l = 0; l < nl; l++) {
    wick_sparse_level *lv = &s->levels[l];
    int32_t v = level_of[l];
    if (l < (uint32_t)rank) {
      int32_t bsz = block_size[v];
      lv->extent = t->dims[v];
      lv->stride = dstride[v];
      if (bsz > 0) {
        if (lv->extent % bsz != 0)
          return fail(r, "%s: dim %d of size %d is not a multiple of its block size %d", what, v,
                      lv->extent, bsz);
        lv->extent /= bsz;
        lv->stride *= bsz; /* <= the dim's stride times its size */
      }
    } else {
      int32_t d = block_dim[v - rank];
      lv->extent = block_size[d];
      lv->stride = dstride[d];
    }
    wick_fb_table dm;
    int8_t format;
    int32_t dense_size;
    if (wick_fb_vec_table(&dmv, l, &dm) < 0 || !wick_fb_i8(&dm, DIMMETA_FORMAT, 0, &format) ||
        !wick_fb_i32(&dm, DIMMETA_DENSE_SIZE, 0, &dense_size))
      return fail(r, "%s.dim_metadata[%u]: malformed table", what, l);
    if (format == DIMENSION_DENSE) {
      if (dense_size != lv->extent)
        return fail(r, "%s.dim_metadata[%u].dense_size %d differs from the level's size %d", what,
                    l, dense_size, lv->extent);
      if (!wick_mul_i64(positions, lv->extent, &positions) || positions > WICK_MAX_ELEMENTS)
        return fail(r, "%s.dim_metadata[%u]: the stored element count overflows", what, l);
      continue;
    }
    if (format != DIMENSION_SPARSE_CSR)
      return fail(r, "%s.dim_metadata[%u].format %d is neither DENSE (0) nor SPARSE_CSR (1)", what,
                  l, format);
    lv->csr = true;
    wick_status st;
    if ((st = read_index_vector(r, &dm, DIMMETA_SEGMENTS_TYPE, DIMMETA_SEGMENTS, what, l,
                                "array_segments", lv, true)) ||
        (st = read_index_vector(r, &dm, DIMMETA_INDICES_TYPE, DIMMETA_INDICES, what, l,
                                "array_indices", lv, false)))
      return st;
    if ((int64_t)lv->num_segments != positions + 1)
      return fail(r,
                  "%s.dim_metadata[%u].array_segments has %u entries; the level above has %" PRId64
                  " positions, so it needs %" PRId64,
                  what, l, lv->num_segments, positions, positions + 1);
    uint32_t prev = wick_sparse_entry(lv->segments, lv->segment_width, 0);
    if (prev != 0)
      return fail(r, "%s.dim_metadata[%u].array_segments[0] is %u, not 0", what, l, prev);
    for (uint32_t i = 1; i < lv->num_segments; i++) {
      uint32_t x = wick_sparse_entry(lv->segments, lv->segment_width, i);
      if (x < prev || x > lv->num_indices)
        return fail(r,
                    "%s.dim_metadata[%u].array_segments[%u] = %u is out of range (previous %u, "
                    "%u indices)",
                    what, l, i, x, prev, lv->num_indices);
      prev = x;
    }
    if (prev != lv->num_indices)
      return fail(r, "%s.dim_metadata[%u].array_segments ends at %u but there are %u indices", what,
                  l, prev, lv->num_indices);
    for (uint32_t i = 0; i < lv->num_indices; i++) {
      uint32_t x = wick_sparse_entry(lv->indices, lv->index_width, i);
      if (x >= (uint32_t)lv->extent)
        return fail(r, "%s.dim_metadata[%u].array_indices[%u] = %u is beyond the level's size %d",
                    what, l, i, x, lv->extent);
    }
    positions = lv->num_indices;
  }
  s->num_values = positions;
  t->sparsity = s;
  return WICK_OK;
}

static wick_status read_tensor(reader *r, const wick_fb_table *tt, wick_tensor_info *t, uint32_t sg,
                               uint32_t ti) {
  wick_status st = WICK_OK;
  char what[96];
  wick_format_message(what, sizeof what, "subgraphs[%u].tensors[%u].name", sg, ti);
  t->name = opt_string(r, tt, TENSOR_NAME, what, &st);
  if (st != WICK_OK) return st;

  int8_t type;
  uint32_t buffer;
  uint8_t is_var;
  if (!wick_fb_i8(tt, TENSOR_TYPE, 0, &type) || !wick_fb_u32(tt, TENSOR_BUFFER, 0, &buffer) ||
      !wick_fb_u8(tt, TENSOR_IS_VARIABLE, 0, &is_var))
    return fail(r, "subgraphs[%u].tensors[%u]: malformed scalar field", sg, ti);
  t->type = type;
  t->is_variable = is_var != 0;

  wick_fb_vector shape;
  int rc = wick_fb_vector_field(tt, TENSOR_SHAPE, 4, &shape);
  if (rc < 0) return fail(r, "subgraphs[%u].tensors[%u].shape: vector is out of bounds", sg, ti);
  uint32_t rank = rc > 0 ? shape.len : 0;
  if (rank > WICK_MAX_RANK)
    return fail(r, "subgraphs[%u].tensors[%u].shape: rank %u exceeds wick's maximum %d", sg, ti,
                rank, WICK_MAX_RANK);
  t->rank = (int32_t)rank;
  /* The cap bounds the product of the NON-ZERO dims: a zero dim makes the
   * element count 0, but [0, 2^31-1, 2^31-1, ...] would still overflow the
   * row-major strides that ops compute from the shape. */
  int64_t elements = 1, span = 1;
  for (uint32_t d = 0; d < rank; d++) {
    int32_t dim = wick_fb_vec_i32(&shape, d);
    if (dim < 0)
      return fail(r, "subgraphs[%u].tensors[%u].shape[%u] is negative (%d)", sg, ti, d, dim);
    t->dims[d] = dim;
    t->dims_signature[d] = dim;
    if (!wick_mul_i64(span, dim ? dim : 1, &span) || span > WICK_MAX_ELEMENTS)
      return fail(r, "subgraphs[%u].tensors[%u].shape: element count overflows", sg, ti);
    elements *= dim; /* |elements| <= span */
  }
  wick_fb_vector sig;
  rc = wick_fb_vector_field(tt, TENSOR_SHAPE_SIGNATURE, 4, &sig);
  if (rc < 0)
    return fail(r, "subgraphs[%u].tensors[%u].shape_signature: vector is out of bounds", sg, ti);
  if (rc > 0 && sig.len == rank) {
    for (uint32_t d = 0; d < rank; d++) {
      int32_t dim = wick_fb_vec_i32(&sig, d);
      if (dim < -1)
        return fail(r, "subgraphs[%u].tensors[%u].shape_signature[%u] is %d", sg, ti, d, dim);
      t->dims_signature[d] = dim;
    }
  }

  /* Sparsity before the buffer: it decides how many values the buffer holds. */
  wick_fb_table sub;
  rc = wick_fb_table_field(tt, TENSOR_SPARSITY, &sub);
  if (rc < 0) return fail(r, "subgraphs[%u].tensors[%u].sparsity: bad table offset", sg, ti);
  if (rc > 0) {
    char sp_what[160];
    wick_format_message(sp_what, sizeof sp_what, "subgraphs[%u].tensors[%u] (%s).sparsity", sg, ti,
                        t->name);
    if ((st = read_sparsity(r, &sub, t, sp_what))) return st;
  }

  if (buffer >= r->num_buffers && !(buffer == 0 && r->num_buffers == 0))
    return fail(r, "subgraphs[%u].tensors[%u].buffer %u is out of range (%u buffers)", sg, ti,
                buffer, r->num_buffers);
  t->buffer = buffer;
  if (buffer != 0 && r->buffer_data[buffer] != NULL) {
    t->data = r->buffer_data[buffer];
    t->data_size = r->buffer_size[buffer];
    size_t esize = dtype_size_or_zero(type);
    /* int4: two values a byte (ops read (elements + 1) / 2 bytes); never sparse for us */
    if (type == SCHEMA_TYPE_INT4 &&
        (t->sparsity != NULL || (uint64_t)(elements + 1) / 2 != t->data_size))
      return fail(r,
                  "subgraphs[%u].tensors[%u] (%s): int4 constant buffer %u holds %zu bytes but "
                  "the shape needs %" PRId64 " (two values a byte%s)",
                  sg, ti, t->name, buffer, t->data_size, (elements + 1) / 2,
                  t->sparsity != NULL ? "; sparse int4 is not read" : "");
    if (esize != 0 && t->sparsity != NULL) {
      int64_t expect, stored = t->sparsity->num_values;
      if (!wick_mul_i64(stored, (int64_t)esize, &expect) || (uint64_t)expect != t->data_size)
        return fail(r,
                    "subgraphs[%u].tensors[%u] (%s): constant buffer %u holds %zu bytes but the "
                    "sparsity metadata stores %" PRId64 " values of %zu bytes",
                    sg, ti, t->name, buffer, t->data_size, stored, esize);
    } else if (esize != 0) {
      int64_t expect;
      if (!wick_mul_i64(elements, (int64_t)esize, &expect) || (uint64_t)expect != t->data_size)
        return fail(r,
                    "subgraphs[%u].tensors[%u] (%s): constant buffer %u holds %zu bytes but the "
                    "shape needs %" PRId64 " elements of %zu bytes",
                    sg, ti, t->name, buffer, t->data_size, elements, esize);
    }
    /* Kernels read bool constants as C bools: only 0 and 1 are values. */
    if (type == WICK_DTYPE_BOOL) {
      for (size_t k = 0; k < t->data_size; k++)
        if (t->data[k] > 1)
          return fail(r,
                      "subgraphs[%u].tensors[%u] (%s): bool constant holds %u at element %zu "
                      "(must be 0 or 1)",
                      sg, ti, t->name, t->data[k], k);
    }
  }

  /* A sparse constant that stores no value (all zeros) has an empty buffer;
   * it is still a constant (data points at the file, 0 bytes). LiteRT's
   * DENSIFY refuses it as non-constant; its dense form is all zeros. */
  if (t->sparsity != NULL && buffer != 0 && t->data == NULL && t->sparsity->num_values == 0) {
    t->data = r->fb.data;
    t->data_size = 0;
  }
  rc = wick_fb_table_field(tt, TENSOR_QUANTIZATION, &sub);
  if (rc < 0) return fail(r, "subgraphs[%u].tensors[%u].quantization: bad table offset", sg, ti);
  if (rc > 0) return read_quantization(r, &sub, t, sg, ti);
  return WICK_OK;
}

/* ---------------------------------------------------------------- operators */

static wick_status read_operator(reader *r, const wick_fb_table *ot, wick_subgraph_info *g,
                                 uint32_t sg, uint32_t oi) {
  wick_operator_info *op = &g->operators[oi];
  uint32_t opcode_index;
  if (!wick_fb_u32(ot, OPERATOR_OPCODE_INDEX, 0, &opcode_index))
    return fail(r, "subgraphs[%u].operators[%u].opcode_index: malformed", sg, oi);
  if (opcode_index >= r->num_opcodes)
    return fail(r, "subgraphs[%u].operators[%u].opcode_index %u is out of range (%u codes)", sg, oi,
                opcode_index, r->num_opcodes);
  const wick_opcode *code = &r->opcodes[opcode_index];
  op->builtin = code->builtin;
  op->version = code->version;
  op->custom_name = code->custom_name;

  char what[96];
  wick_status st;
  wick_format_message(what, sizeof what, "subgraphs[%u].operators[%u].inputs", sg, oi);
  if ((st = read_i32_vector(r, ot, OPERATOR_INPUTS, what, &op->inputs, &op->num_inputs))) return st;
  wick_format_message(what, sizeof what, "subgraphs[%u].operators[%u].outputs", sg, oi);
  if ((st = read_i32_vector(r, ot, OPERATOR_OUTPUTS, what, &op->outputs, &op->num_outputs)))
    return st;
  wick_format_message(what, sizeof what, "subgraphs[%u].operators[%u].intermediates", sg, oi);
  if ((st = read_i32_vector(r, ot, OPERATOR_INTERMEDIATES, what, &op->intermediates,
                            &op->num_intermediates)))
    return st;
  if (op->num_inputs > WICK_MAX_OP_INPUTS || op->num_outputs > WICK_MAX_OP_INPUTS)
    return fail(r, "subgraphs[%u].operators[%u]: %u inputs / %u outputs exceed the cap of %d", sg,
                oi, op->num_inputs, op->num_outputs, WICK_MAX_OP_INPUTS);
  for (uint32_t i = 0; i < op->num_inputs; i++) {
    int32_t x = op->inputs[i];
    if (x < -1 || x >= (int32_t)g->num_tensors)
      return fail(r, "subgraphs[%u].operators[%u].inputs[%u] = %d is out of range (%u tensors)", sg,
                  oi, i, x, g->num_tensors);
  }
  for (uint32_t i = 0; i < op->num_outputs; i++) {
    int32_t x = op->outputs[i];
    if (x < 0 || x >= (int32_t)g->num_tensors)
      return fail(r, "subgraphs[%u].operators[%u].outputs[%u] = %d is out of range (%u tensors)",
                  sg, oi, i, x, g->num_tensors);
  }
  for (uint32_t i = 0; i < op->num_intermediates; i++) {
    int32_t x = op->intermediates[i];
    if (x < 0 || x >= (int32_t)g->num_tensors)
      return fail(r, "subgraphs[%u].operators[%u].intermediates[%u] = %d is out of range", sg, oi,
                  i, x);
  }

  wick_fb_vector custom;
  int rc = wick_fb_vector_field(ot, OPERATOR_CUSTOM_OPTIONS, 1, &custom);
  if (rc < 0) return fail(r, "subgraphs[%u].operators[%u].custom_options: out of bounds", sg, oi);
  if (rc > 0) {
    op->custom_options = r->fb.data + custom.pos;
    op->custom_options_size = custom.len;
  }

  wick_params_defaults(&op->params);
  char detail[160];
  detail[0] = 0;
  if (!wick_format_read_options(ot, op->builtin, &op->params, detail, sizeof detail))
    return fail(r, "subgraphs[%u].operators[%u] (%s): builtin options: %s", sg, oi,
                wick_builtin_name(op->builtin), detail);
  return WICK_OK;
}

/* ---------------------------------------------------------------- subgraphs */

static wick_status check_blockwise(reader *r, const wick_subgraph_info *g, uint32_t sg);

static wick_status read_subgraph(reader *r, const wick_fb_table *st_, wick_subgraph_info *g,
                                 uint32_t sg) {
  wick_status st = WICK_OK;
  char what[64];
  wick_format_message(what, sizeof what, "subgraphs[%u].name", sg);
  g->name = opt_string(r, st_, SUBGRAPH_NAME, what, &st);
  if (st != WICK_OK) return st;

  wick_fb_vector tv;
  int rc = wick_fb_vector_field(st_, SUBGRAPH_TENSORS, 4, &tv);
  if (rc < 0) return fail(r, "subgraphs[%u].tensors: vector is out of bounds", sg);
  g->num_tensors = rc > 0 ? tv.len : 0;
  if (g->num_tensors > WICK_MAX_TENSORS)
    return fail(r, "subgraphs[%u]: %u tensors exceed the cap of %u", sg, g->num_tensors,
                WICK_MAX_TENSORS);
  ALLOC(r, g->tensors, g->num_tensors);
  for (uint32_t i = 0; i < g->num_tensors; i++) {
    wick_fb_table tt;
    if (wick_fb_vec_table(&tv, i, &tt) < 0)
      return fail(r, "subgraphs[%u].tensors[%u]: bad table offset", sg, i);
    if ((st = read_tensor(r, &tt, &g->tensors[i], sg, i))) return st;
  }
  if ((st = check_blockwise(r, g, sg))) return st;

  wick_format_message(what, sizeof what, "subgraphs[%u].inputs", sg);
  if ((st = read_i32_vector(r, st_, SUBGRAPH_INPUTS, what, &g->inputs, &g->num_inputs))) return st;
  wick_format_message(what, sizeof what, "subgraphs[%u].outputs", sg);
  if ((st = read_i32_vector(r, st_, SUBGRAPH_OUTPUTS, what, &g->outputs, &g->num_outputs)))
    return st;
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i] < 0 || g->inputs[i] >= (int32_t)g->num_tensors)
      return fail(r, "subgraphs[%u].inputs[%u] = %d is out of range", sg, i, g->inputs[i]);
  for (uint32_t i = 0; i < g->num_outputs; i++)
    if (g->outputs[i] < 0 || g->outputs[i] >= (int32_t)g->num_tensors)
      return fail(r, "subgraphs[%u].outputs[%u] = %d is out of range", sg, i, g->outputs[i]);

  wick_fb_vector ov;
  rc = wick_fb_vector_field(st_, SUBGRAPH_OPERATORS, 4, &ov);
  if (rc < 0) return fail(r, "subgraphs[%u].operators: vector is out of bounds", sg);
  g->num_operators = rc > 0 ? ov.len : 0;
  if (g->num_operators > WICK_MAX_OPERATORS)
    return fail(r, "subgraphs[%u]: %u operators exceed the cap", sg, g->num_operators);
  ALLOC(r, g->operators, g->num_operators);
  for (uint32_t i = 0; i < g->num_operators; i++) {
    wick_fb_table ot;
    if (wick_fb_vec_table(&ov, i, &ot) < 0)
      return fail(r, "subgraphs[%u].operators[%u]: bad table offset", sg, i);
    if ((st = read_operator(r, &ot, g, sg, i))) return st;
  }
  return WICK_OK;
}

/* Blockwise quantization details (read_quantization) against the subgraph's
 * tensors: the scales tensor is a float16 or float32 constant holding one
 * scale per block, [leading dims..., last dim / block_size]; the zero points
 * index is -1 or in range. */
static wick_status check_blockwise(reader *r, const wick_subgraph_info *g, uint32_t sg) {
  for (uint32_t i = 0; i < g->num_tensors; i++) {
    const wick_tensor_info *t = &g->tensors[i];
    const wick_quant *q = &t->quant;
    if (q->block_size == 0) continue;
    if (t->rank < 1 || t->dims[t->rank - 1] % q->block_size != 0)
      return fail(r,
                  "subgraphs[%u].tensors[%u] (%s): blockwise block_size %d does not divide the "
                  "last dimension (rank %d)",
                  sg, i, t->name, q->block_size, t->rank);
    if (q->block_scales < 0 || q->block_scales >= (int32_t)g->num_tensors)
      return fail(r, "subgraphs[%u].tensors[%u] (%s): blockwise scales tensor %d is out of range",
                  sg, i, t->name, q->block_scales);
    if (q->block_zero_points < -1 || q->block_zero_points >= (int32_t)g->num_tensors)
      return fail(r,
                  "subgraphs[%u].tensors[%u] (%s): blockwise zero points tensor %d is out of "
                  "range",
                  sg, i, t->name, q->block_zero_points);
    const wick_tensor_info *s = &g->tensors[q->block_scales];
    bool shape_ok = s->rank == t->rank;
    for (int32_t d = 0; shape_ok && d < t->rank; d++)
      shape_ok = s->dims[d] == (d + 1 < t->rank ? t->dims[d] : t->dims[d] / q->block_size);
    if ((s->type != WICK_DTYPE_FLOAT16 && s->type != WICK_DTYPE_FLOAT32) || s->data == NULL ||
        s->sparsity != NULL || !shape_ok)
      return fail(r,
                  "subgraphs[%u].tensors[%u] (%s): blockwise scales tensor %d (%s) must be a "
                  "dense float16 or float32 constant with one scale per block of %d",
                  sg, i, t->name, q->block_scales, s->name, q->block_size);
  }
  return WICK_OK;
}

/* Semantic checks of one subgraph: every tensor an operator reads is a
 * constant, a variable, a subgraph input, or written by an earlier operator;
 * no tensor is written twice; no operator reads what it writes. */
static wick_status check_dataflow(reader *r, const wick_subgraph_info *g, uint32_t sg) {
  int32_t *writer; /* operator that writes each tensor, -2 = graph input, -1 = none */
  ALLOC(r, writer, g->num_tensors);
  for (uint32_t i = 0; i < g->num_tensors; i++) writer[i] = -1;
  for (uint32_t i = 0; i < g->num_inputs; i++) writer[g->inputs[i]] = -2;
  for (uint32_t oi = 0; oi < g->num_operators; oi++) {
    const wick_operator_info *op = &g->operators[oi];
    for (uint32_t i = 0; i < op->num_inputs; i++) {
      int32_t x = op->inputs[i];
      if (x < 0) continue;
      const wick_tensor_info *t = &g->tensors[x];
      if (writer[x] == -1 && t->data == NULL && !t->is_variable) {
        /* An empty tensor with zero elements is a legal constant (e.g. an empty shape). */
        if (t->buffer != 0 && wick_shape_elements(t->rank, t->dims) == 0) continue;
        return fail(r,
                    "subgraphs[%u].operators[%u] (%s) reads tensor %d (%s) before any operator "
                    "writes it",
                    sg, oi, wick_builtin_name(op->builtin), x, t->name);
      }
      for (uint32_t o = 0; o < op->num_outputs; o++)
        if (op->outputs[o] == x)
          return fail(r,
                      "subgraphs[%u].operators[%u] (%s): tensor %d is both an input and an "
                      "output",
                      sg, oi, wick_builtin_name(op->builtin), x);
    }
    for (uint32_t o = 0; o < op->num_outputs; o++) {
      int32_t x = op->outputs[o];
      const wick_tensor_info *t = &g->tensors[x];
      if (writer[x] != -1 || t->data != NULL)
        return fail(r,
                    "subgraphs[%u].operators[%u] (%s) writes tensor %d (%s), which is already %s",
                    sg, oi, wick_builtin_name(op->builtin), x, t->name,
                    t->data ? "a constant" : (writer[x] == -2 ? "a subgraph input" : "written"));
      writer[x] = (int32_t)oi;
    }
  }
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    int32_t x = g->outputs[i];
    if (writer[x] == -1 && g->tensors[x].data == NULL && !g->tensors[x].is_variable)
      return fail(r, "subgraphs[%u].outputs[%u]: tensor %d (%s) is never written", sg, i, x,
                  g->tensors[x].name);
  }
  return WICK_OK;
}

/* Subgraph references form a DAG: no subgraph (transitively) runs itself, and
 * nesting stays under WICK_MAX_NESTING. Iterative DFS: no model-controlled
 * recursion depth. */
static wick_status check_subgraph_calls(reader *r) {
  wick_model *m = r->model;
  uint32_t n = m->num_subgraphs;
  uint8_t *state; /* 0 new, 1 on stack, 2 done */
  uint32_t *stack_sg, *stack_op;
  ALLOC(r, state, n);
  ALLOC(r, stack_sg, n);
  ALLOC(r, stack_op, n);
  for (uint32_t root = 0; root < n; root++) {
    if (state[root]) continue;
    uint32_t sp = 0;
    stack_sg[sp] = root;
    stack_op[sp] = 0;
    sp++;
    state[root] = 1;
    while (sp > 0) {
      uint32_t s = stack_sg[sp - 1];
      const wick_subgraph_info *g = &m->subgraphs[s];
      uint32_t k = stack_op[sp - 1]++; /* k: operator index * 2 + which child */
      uint32_t oi = k / 2;
      if (oi >= g->num_operators) {
        state[s] = 2;
        sp--;
        continue;
      }
      int32_t child = g->operators[oi].params.subgraph[k % 2];
      if (child < 0) continue;
      if ((uint32_t)child >= n)
        return fail(r, "subgraphs[%u].operators[%u] (%s) refers to subgraph %d of %u", s, oi,
                    wick_builtin_name(g->operators[oi].builtin), child, n);
      if (state[child] == 1)
        return fail(r, "subgraphs[%u].operators[%u] (%s): subgraph %d calls itself (a cycle)", s,
                    oi, wick_builtin_name(g->operators[oi].builtin), child);
      if (state[child] == 0) {
        if (sp >= WICK_MAX_NESTING)
          return fail(r, "subgraph calls nest deeper than %d", WICK_MAX_NESTING);
        state[child] = 1;
        stack_sg[sp] = (uint32_t)child;
        stack_op[sp] = 0;
        sp++;
      }
    }
  }
  return WICK_OK;
}

static wick_status read_signatures(reader *r, const wick_fb_table *root) {
  wick_model *m = r->model;
  wick_fb_vector v;
  int rc = wick_fb_vector_field(root, MODEL_SIGNATURE_DEFS, 4, &v);
  if (rc < 0) return fail(r, "Model.signature_defs: vector is out of bounds");
  m->num_signatures = rc > 0 ? v.len : 0;
  ALLOC(r, m->signatures, m->num_signatures);
  /* Per tensor: how often the subgraph lists it and the signature has not
   * yet named it. Back to all zeros after each successful match. */
  uint32_t *pending, max_tensors = 0;
  for (uint32_t i = 0; i < m->num_subgraphs; i++)
    if (m->subgraphs[i].num_tensors > max_tensors) max_tensors = m->subgraphs[i].num_tensors;
  ALLOC(r, pending, max_tensors);
  for (uint32_t i = 0; i < m->num_signatures; i++) {
    wick_signature_info *s = &m->signatures[i];
    wick_fb_table t;
    if (wick_fb_vec_table(&v, i, &t) < 0)
      return fail(r, "Model.signature_defs[%u]: bad table offset", i);
    wick_status st = WICK_OK;
    char what[64];
    wick_format_message(what, sizeof what, "Model.signature_defs[%u].signature_key", i);
    s->key = opt_string(r, &t, SIGNATURE_KEY, what, &st);
    if (st) return st;
    if (!wick_fb_u32(&t, SIGNATURE_SUBGRAPH_INDEX, 0, &s->subgraph))
      return fail(r, "Model.signature_defs[%u].subgraph_index: malformed", i);
    if (s->subgraph >= m->num_subgraphs)
      return fail(r, "Model.signature_defs[%u].subgraph_index %u is out of range", i, s->subgraph);
    const wick_subgraph_info *g = &m->subgraphs[s->subgraph];
    for (int io = 0; io < 2; io++) {
      wick_fb_vector maps;
      rc = wick_fb_vector_field(&t, io == 0 ? SIGNATURE_INPUTS : SIGNATURE_OUTPUTS, 4, &maps);
      const char *which = io == 0 ? "inputs" : "outputs";
      if (rc < 0) return fail(r, "Model.signature_defs[%u].%s: vector is out of bounds", i, which);
      uint32_t n = rc > 0 ? maps.len : 0;
      const char **names;
      int32_t *tensors;
      ALLOC(r, names, n);
      ALLOC(r, tensors, n);
      for (uint32_t k = 0; k < n; k++) {
        wick_fb_table tm;
        uint32_t index;
        if (wick_fb_vec_table(&maps, k, &tm) < 0 ||
            !wick_fb_u32(&tm, TENSORMAP_TENSOR_INDEX, 0, &index))
          return fail(r, "Model.signature_defs[%u].%s[%u]: malformed TensorMap", i, which, k);
        wick_format_message(what, sizeof what, "Model.signature_defs[%u].%s[%u].name", i, which, k);
        names[k] = opt_string(r, &tm, TENSORMAP_NAME, what, &st);
        if (st) return st;
        if (index >= g->num_tensors)
          return fail(r, "Model.signature_defs[%u].%s[%u].tensor_index %u is out of range", i,
                      which, k, index);
        tensors[k] = (int32_t)index;
      }
      /* The signature must name exactly the subgraph's inputs (outputs), in
       * any order: the interpreter gives storage to the tensors the
       * signature names, so a subgraph input it left out would be read
       * without ever being allocated. */
      const int32_t *io_list = io == 0 ? g->inputs : g->outputs;
      uint32_t io_count = io == 0 ? g->num_inputs : g->num_outputs;
      if (n != io_count)
        return fail(r, "Model.signature_defs[%u] has %u %s but subgraph %u has %u", i, n, which,
                    s->subgraph, io_count);
      for (uint32_t k = 0; k < n; k++) pending[io_list[k]]++;
      for (uint32_t k = 0; k < n; k++) {
        if (pending[tensors[k]] == 0)
          return fail(r,
                      "Model.signature_defs[%u].%s[%u].tensor_index %d is not one of subgraph "
                      "%u's %s (or is named twice)",
                      i, which, k, tensors[k], s->subgraph, which);
        pending[tensors[k]]--;
      }
      if (io == 0) {
        s->num_inputs = n;
        s->input_names = names;
        s->input_tensors = tensors;
      } else {
        s->num_outputs = n;
        s->output_names = names;
        s->output_tensors = tensors;
      }
    }
  }
  return WICK_OK;
}

wick_status wick_format_read_model(wick_model *model, char *error, size_t error_size) {
  reader r;
  memset(&r, 0, sizeof r);
  r.model = model;
  r.fb.data = model->bytes;
  r.fb.size = model->size;
  r.error = error;
  r.error_size = error_size;

  wick_fb_table root;
  if (model->size < 8)
    return fail(&r, "file is %zu bytes, too short for a TFLite model", model->size);
  if (memcmp(model->bytes + 4, "TFL3", 4) != 0)
    return fail(&r, "file identifier is not \"TFL3\": not a TFLite model");
  if (wick_fb_root(&r.fb, "TFL3", &root) < 0)
    return fail(&r, "Model: root table offset is out of bounds");
  uint32_t version;
  if (!wick_fb_u32(&root, MODEL_VERSION, 0, &version)) return fail(&r, "Model.version: malformed");
  if (version != 3) return fail(&r, "Model.version is %u; wick reads schema version 3", version);

  wick_status st = WICK_OK;
  model->description = opt_string(&r, &root, MODEL_DESCRIPTION, "Model.description", &st);
  if (st) return st;
  if ((st = read_buffers(&r, &root))) return st;
  if ((st = read_metadata(&r, &root))) return st;
  if ((st = read_opcodes(&r, &root))) return st;

  wick_fb_vector sv;
  int rc = wick_fb_vector_field(&root, MODEL_SUBGRAPHS, 4, &sv);
  if (rc < 0) return fail(&r, "Model.subgraphs: vector is out of bounds");
  if (rc == 0 || sv.len == 0) return fail(&r, "Model.subgraphs: the model has no subgraph");
  if (sv.len > WICK_MAX_SUBGRAPHS)
    return fail(&r, "Model.subgraphs: %u subgraphs exceed the cap of %d", sv.len,
                WICK_MAX_SUBGRAPHS);
  model->num_subgraphs = sv.len;
  ALLOC(&r, model->subgraphs, sv.len);
  for (uint32_t i = 0; i < sv.len; i++) {
    wick_fb_table t;
    if (wick_fb_vec_table(&sv, i, &t) < 0)
      return fail(&r, "Model.subgraphs[%u]: bad table offset", i);
    if ((st = read_subgraph(&r, &t, &model->subgraphs[i], i))) return st;
  }
  for (uint32_t i = 0; i < sv.len; i++)
    if ((st = check_dataflow(&r, &model->subgraphs[i], i))) return st;
  if ((st = check_subgraph_calls(&r))) return st;
  return read_signatures(&r, &root);
}
