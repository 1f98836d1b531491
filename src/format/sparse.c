/*
 * sparse.c — the dense form of a sparse constant (the schema's
 * SparsityParameters, decoded and verified by src/format/reader.c; the layout
 * is described at wick_sparsity in format/model.h). DENSIFY
 * (src/ops/densify.c) and sparse FULLY_CONNECTED weights (interpreter.c)
 * use it, both at prepare.
 */
#include <string.h>

#include "format/model.h"

/* Visits level `l` under position `parent` of the level above; `offset` is
 * the dense element index the levels above contribute. The load checks make
 * every index < its level's extent, so offset stays inside the tensor, and
 * the last level's positions are exactly 0 .. num_values - 1. Recursion depth
 * is at most 2 * WICK_MAX_RANK. */
static void walk(const wick_sparsity *s, int32_t l, uint64_t parent, int64_t offset,
                 const uint8_t *src, size_t esize, uint8_t *dst) {
  if (l == s->num_levels) {
    memcpy(dst + (size_t)offset * esize, src + (size_t)parent * esize, esize);
    return;
  }
  const wick_sparse_level *lv = &s->levels[l];
  if (!lv->csr) {
    for (int32_t i = 0; i < lv->extent; i++)
      walk(s, l + 1, parent * (uint64_t)lv->extent + (uint64_t)i, offset + i * lv->stride, src,
           esize, dst);
    return;
  }
  uint32_t begin = wick_sparse_entry(lv->segments, lv->segment_width, parent);
  uint32_t end = wick_sparse_entry(lv->segments, lv->segment_width, parent + 1);
  for (uint32_t j = begin; j < end; j++) {
    int64_t index = wick_sparse_entry(lv->indices, lv->index_width, j);
    walk(s, l + 1, j, offset + index * lv->stride, src, esize, dst);
  }
}

void wick_sparse_densify(const wick_tensor_info *info, size_t esize, void *dst) {
  int64_t n = wick_shape_elements(info->rank, info->dims);
  memset(dst, 0, (size_t)n * esize);
  /* No elements: nothing is stored, and the dense levels above a zero-sized
   * one could still count up to 2^40 positions. */
  if (n == 0) return;
  walk(info->sparsity, 0, 0, 0, info->data, esize, dst);
}
