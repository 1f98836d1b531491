/*
 * model.h — the verified model: what src/format/reader.c builds from a file's
 * bytes (tensors, operators with decoded options, subgraphs, signatures) and
 * nothing changes afterwards. The format layer: it knows the TFLite schema,
 * nothing about interpreters or ops.
 */
#ifndef WICK_FORMAT_MODEL_H
#define WICK_FORMAT_MODEL_H

#include "base/base.h"
#include "format/params.h"

/* ---------------------------------------------------------------- the verified model */

typedef struct wick_quant {
  uint32_t count; /* 0: not quantized */
  float *scale;
  int64_t *zero_point;
  int32_t quantized_dimension;
  /* TFLite's BlockwiseQuantization (quantization.details; then count is 0): the values in
   * blocks of block_size along the last dimension, block b of row r scaled by element
   * [r, b] of tensor `block_scales` of the same subgraph. block_size 0: not blockwise.
   * Verified at load: block_size > 0 divides the last dim; block_scales is a float16 or
   * float32 constant of shape [leading dims..., last dim / block_size]; block_zero_points
   * is -1 (absent: symmetric) or a tensor index in range (ops decide what they accept). */
  int32_t block_size;
  int32_t block_scales;
  int32_t block_zero_points;
} wick_quant;

/* Sparse storage of a constant (the schema's SparsityParameters), verified
 * by src/format/reader.c. The stored values are the non-zero elements visited
 * level by level: levels 0 .. rank-1 walk the tensor's dims in the file's
 * traversal order (a blocked dim walks its block count), the levels after
 * them walk the blocks' own dims. A DENSE level visits every index below its
 * extent; a SPARSE_CSR level visits, for parent position p, the indices
 * indices[segments[p] .. segments[p + 1]). Positions number the visited
 * entries of a level in order; the last level's position is the index of
 * the stored value. Verified: every index < extent, segments start at 0,
 * never decrease and end at the index count, and the values fill the buffer
 * exactly. Densified by wick_sparse_densify (src/format/sparse.c). */
typedef struct wick_sparse_level {
  bool csr;                           /* SPARSE_CSR; else DENSE */
  int32_t extent;                     /* indices along this level */
  int64_t stride;                     /* dense elements one index step moves (row-major) */
  uint8_t segment_width, index_width; /* bytes per entry: 1, 2 or 4 (little-endian) */
  uint32_t num_segments, num_indices;
  const uint8_t *segments, *indices; /* in the file; CSR only */
} wick_sparse_level;

typedef struct wick_sparsity {
  int32_t num_levels; /* rank + blocked dims */
  wick_sparse_level levels[2 * WICK_MAX_RANK];
  int64_t num_values; /* stored values */
} wick_sparsity;

/* Entry i of a little-endian index vector of `width` bytes per entry. */
static inline uint32_t wick_sparse_entry(const uint8_t *p, uint8_t width, uint64_t i) {
  const uint8_t *q = p + i * width;
  uint32_t v = q[0];
  if (width >= 2) v |= (uint32_t)q[1] << 8;
  if (width == 4) v |= (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
  return v;
}

typedef struct wick_tensor_info {
  const char *name; /* never NULL ("" when the file has none) */
  int32_t type;     /* the schema's TensorType (a wick_dtype when known) */
  int32_t rank;
  int32_t dims[WICK_MAX_RANK];
  int32_t dims_signature[WICK_MAX_RANK]; /* -1 marks a dynamic dim; = dims if absent */
  uint32_t buffer;
  const uint8_t *data; /* constant bytes in the file, or NULL */
  size_t data_size;
  wick_quant quant;
  bool is_variable;
  /* Sparse storage (NULL: dense). `data` then holds num_values elements;
   * only DENSIFY and FULLY_CONNECTED weights read such a tensor. */
  const wick_sparsity *sparsity;
} wick_tensor_info;

typedef struct wick_opcode {
  int32_t builtin; /* max(deprecated_builtin_code, builtin_code) */
  int32_t version;
  const char *custom_name; /* NULL unless CUSTOM */
} wick_opcode;

typedef struct wick_operator_info {
  int32_t builtin;
  int32_t version;
  const char *custom_name;
  uint32_t num_inputs, num_outputs, num_intermediates;
  int32_t *inputs; /* -1 = optional input absent */
  int32_t *outputs;
  int32_t *intermediates;
  wick_op_params params;
  const uint8_t *custom_options;
  size_t custom_options_size;
} wick_operator_info;

typedef struct wick_subgraph_info {
  const char *name;
  uint32_t num_tensors, num_inputs, num_outputs, num_operators;
  wick_tensor_info *tensors;
  int32_t *inputs;
  int32_t *outputs;
  wick_operator_info *operators;
} wick_subgraph_info;

typedef struct wick_signature_info {
  const char *key;
  uint32_t subgraph;
  uint32_t num_inputs, num_outputs;
  const char **input_names;
  int32_t *input_tensors; /* tensor indices in the subgraph */
  const char **output_names;
  int32_t *output_tensors;
} wick_signature_info;

/* One Model.metadata entry (name -> a buffer's bytes). Entries whose buffer
 * index is out of range are left out (wick reads no metadata it needs). */
typedef struct wick_metadata_info {
  const char *name;    /* "" when the entry has none */
  const uint8_t *data; /* in the file; NULL when the buffer is empty */
  size_t size;
} wick_metadata_info;

struct wick_model {
  wick_mem mem;
  wick_bump bump;
  wick_log_fn log;
  void *log_user;
  const uint8_t *bytes; /* the whole file */
  size_t size;
  void *owned_copy; /* bytes copied by wick_model_load_buffer(copy_buffer=1) */
  void *mapping;    /* mmap of wick_model_load_file */
  size_t mapping_size;
  const char *description;
  uint32_t num_subgraphs, num_signatures;
  wick_subgraph_info *subgraphs;
  wick_signature_info *signatures;
  uint32_t num_metadata;
  wick_metadata_info *metadata;
};

/* Parses and verifies `bytes`, filling `model` (whose mem/bump are ready).
 * On failure writes a message naming table, field and index into `error`. */
WICK_INTERNAL wick_status wick_format_read_model(wick_model *model, char *error, size_t error_size);

/* Writes the dense form of a sparse constant (info->sparsity and info->data
 * set, verified at load) into `dst`: wick_shape_elements(info) elements of
 * `esize` bytes, zeros where nothing is stored. Any element size works: values
 * are copied as bytes. */
WICK_INTERNAL void wick_sparse_densify(const wick_tensor_info *info, size_t esize, void *dst);

/* Name of a builtin operator code ("CONV_2D"), or "UNKNOWN". */
WICK_INTERNAL const char *wick_builtin_name(int32_t code);

#endif /* WICK_FORMAT_MODEL_H */
