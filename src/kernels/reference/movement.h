/*
 * movement.h — reference kernels for data-movement operators: they copy
 * elements and never look at them, so one byte-generic kernel serves every
 * fixed-size type (element size `esize` = 1, 2, 4 or 8 bytes).
 *
 * The workhorse is the strided copy: TRANSPOSE, SLICE, STRIDED_SLICE,
 * REVERSE_V2, BROADCAST_TO, TILE, SPLIT, SPLIT_V, PACK, UNPACK,
 * DEPTH_TO_SPACE, SPACE_TO_DEPTH and DYNAMIC_UPDATE_SLICE are each one
 * wick_copy_plan (an affine map from an output index to a source and a
 * destination element offset). GATHER, GATHER_ND, SELECT and MIRROR_PAD have
 * their own kernels because their maps are not affine.
 *
 * Like every reference kernel these cannot fail: the operator's prepare (or
 * invoke, for data-dependent indices) proved every offset in bounds.
 * Next: src/ops/transpose.c (the simplest user of a plan).
 */
#ifndef WICK_KERNELS_REFERENCE_MOVEMENT_H
#define WICK_KERNELS_REFERENCE_MOVEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wick/wick.h"

/* TILE views a rank-r output as 2r dimensions. */
#define WICK_COPY_MAX_RANK (2 * WICK_MAX_RANK)

/* For every index (i0..i{rank-1}) of the iteration space `dims`:
 *
 *   dst[dst_offset + sum i_k * dst_strides[k]] = src[src_offset + sum i_k * src_strides[k]]
 *
 * Offsets and strides count elements; source strides may be 0 (broadcast)
 * or negative (reversal). Rank 0 copies one element. */
typedef struct wick_copy_plan {
  int32_t rank;
  int64_t dims[WICK_COPY_MAX_RANK];
  int64_t src_strides[WICK_COPY_MAX_RANK];
  int64_t dst_strides[WICK_COPY_MAX_RANK];
  int64_t src_offset, dst_offset;
} wick_copy_plan;

/* Fills dst_strides with the row-major strides of `dims` (a dense output). */
void wick_copy_plan_dense_dst(wick_copy_plan *p);
/* Drops size-1 dimensions and merges neighbours that are contiguous in both
 * source and destination; the map is unchanged. */
void wick_copy_plan_simplify(wick_copy_plan *p);
void wick_strided_copy__reference(size_t esize, const wick_copy_plan *p, const void *src,
                                  void *dst);

/* GATHER. params is viewed as [batch, outer, axis_size, inner], indices as
 * [batch, count] (int16, int32 or int64, every value in [0, axis_size)), and
 * out as [batch, outer, count, inner]. */
void wick_gather__reference(size_t esize, int64_t batch, int64_t outer, int64_t axis_size,
                            int64_t inner, int64_t count, const void *params, wick_dtype index_type,
                            const void *indices, void *out);

/* GATHER_ND. indices is [count, depth] (int16/int32/int64, validated);
 * index row r selects the slice of `slice` elements at element offset
 * sum_k indices[r, k] * strides[k] of params. out is [count, slice]. */
void wick_gather_nd__reference(size_t esize, int64_t count, int32_t depth, const int64_t *strides,
                               int64_t slice, const void *params, wick_dtype index_type,
                               const void *indices, void *out);

/* SCATTER_ND. out (out_elements of `type`) is zeroed, then for each index
 * row r (indices [count, depth], int16/int32/int64, validated) the `slice`
 * elements of updates row r are added at element offset
 * sum_k indices[r, k] * strides[k]: duplicates accumulate, in row order
 * (float sums round in that order; integers wrap; bool ORs). `type`:
 * float32, int8, uint8, int16, int32, int64, bool. */
void wick_scatter_nd__reference(wick_dtype type, int64_t count, int32_t depth,
                                const int64_t *strides, int64_t slice, int64_t out_elements,
                                wick_dtype index_type, const void *indices, const void *updates,
                                void *out);

/* EMBEDDING_LOOKUP's hybrid form: out[r, c] = (float)(values[ids[r], c] *
 * scale), the product taken in double as LiteRT does; scale is scales[0],
 * or scales[ids[r]] when per_row. ids (int32/int64) were validated. */
void wick_i8_embedding_hybrid__reference(int64_t count, int64_t cols, wick_dtype index_type,
                                         const void *ids, const int8_t *values, const float *scales,
                                         bool per_row, float *out);

/* Reads element i of an int16/int32/int64 index tensor. */
int64_t wick_read_index__reference(wick_dtype index_type, const void *indices, int64_t i);

/* SELECT / SELECT_V2: out = cond ? x : y over a broadcast iteration space
 * (strides in elements, 0 on broadcast dimensions). */
typedef struct wick_select_shape {
  int32_t rank;
  int64_t dims[WICK_MAX_RANK];
  int64_t cond_strides[WICK_MAX_RANK];
  int64_t x_strides[WICK_MAX_RANK];
  int64_t y_strides[WICK_MAX_RANK];
} wick_select_shape;

void wick_select__reference(size_t esize, const wick_select_shape *s, const bool *cond,
                            const void *x, const void *y, void *out);

/* MIRROR_PAD. Output index o along dimension k maps to input index
 *   o < b          : REFLECT b - o          SYMMETRIC b - 1 - o
 *   o >= b + d     : REFLECT 2d + b - 2 - o  SYMMETRIC 2d + b - 1 - o
 *   otherwise      : o - b
 * where b = before[k], d = in_dims[k]; prepare guarantees b and the after
 * padding are < d (REFLECT) or <= d (SYMMETRIC). */
void wick_mirror_pad__reference(size_t esize, int32_t rank, const int32_t *in_dims,
                                const int32_t *before, const int32_t *out_dims, bool symmetric,
                                const void *in, void *out);

/* FILL: `count` copies of the `esize`-byte value. */
void wick_fill__reference(size_t esize, int64_t count, const void *value, void *out);

/* RANGE: out[i] = start + i * delta. The float variant accumulates
 * (value += delta) like LiteRT, so results match it bit for bit. */
void wick_f32_range__reference(float start, float delta, int64_t count, float *out);
void wick_i32_range__reference(int32_t start, int32_t delta, int64_t count, int32_t *out);
void wick_i64_range__reference(int64_t start, int64_t delta, int64_t count, int64_t *out);

#endif /* WICK_KERNELS_REFERENCE_MOVEMENT_H */
