/*
 * strided_copy.c — the reference strided copy (movement.h): one affine map
 * from an iteration index to a source and a destination element offset.
 *
 * Walk: an index counter over all dimensions but the innermost; for each
 * outer index the base offsets are recomputed, then the innermost row is
 * copied with one memcpy when both sides are contiguous (stride 1), else
 * element by element. wick_copy_plan_simplify first removes size-1
 * dimensions and fuses contiguous neighbours, so a transpose that moves
 * nothing or a slice of whole rows becomes a single memcpy.
 */
#include <string.h>

#include "kernels/reference/movement.h"

void wick_copy_plan_dense_dst(wick_copy_plan *p) {
  int64_t s = 1;
  for (int32_t k = p->rank - 1; k >= 0; k--) {
    p->dst_strides[k] = s;
    s *= p->dims[k];
  }
}

void wick_copy_plan_simplify(wick_copy_plan *p) {
  int32_t r = 0;
  for (int32_t k = 0; k < p->rank; k++) {
    if (p->dims[k] == 0) { /* empty: nothing to copy */
      p->rank = 1;
      p->dims[0] = 0;
      p->src_strides[0] = p->dst_strides[0] = 1;
      return;
    }
    if (p->dims[k] == 1) continue; /* index always 0: contributes nothing */
    p->dims[r] = p->dims[k];
    p->src_strides[r] = p->src_strides[k];
    p->dst_strides[r] = p->dst_strides[k];
    r++;
  }
  /* Fuse k into k-1 when stepping k-1 once equals stepping k dims[k] times. */
  int32_t w = 0;
  for (int32_t k = 0; k < r; k++) {
    if (w > 0 && p->src_strides[w - 1] == p->src_strides[k] * p->dims[k] &&
        p->dst_strides[w - 1] == p->dst_strides[k] * p->dims[k]) {
      p->dims[w - 1] *= p->dims[k];
      p->src_strides[w - 1] = p->src_strides[k];
      p->dst_strides[w - 1] = p->dst_strides[k];
      continue;
    }
    p->dims[w] = p->dims[k];
    p->src_strides[w] = p->src_strides[k];
    p->dst_strides[w] = p->dst_strides[k];
    w++;
  }
  p->rank = w;
}

/* Copies n elements of a fixed size with the given strides. The constant
 * memcpy sizes compile to single loads and stores. */
#define COPY_ROW(SIZE) \
  for (int64_t i = 0; i < n; i++) memcpy(d + (i * ds) * (SIZE), s + (i * ss) * (SIZE), SIZE)

static void copy_row(size_t esize, const uint8_t *s, int64_t ss, uint8_t *d, int64_t ds,
                     int64_t n) {
  if (ss == 1 && ds == 1) {
    memcpy(d, s, (size_t)n * esize);
    return;
  }
  switch (esize) {
    case 1: COPY_ROW(1); break;
    case 2: COPY_ROW(2); break;
    case 4: COPY_ROW(4); break;
    case 8: COPY_ROW(8); break;
    default:
      for (int64_t i = 0; i < n; i++)
        memcpy(d + (i * ds) * (int64_t)esize, s + (i * ss) * (int64_t)esize, esize);
      break;
  }
}

void wick_strided_copy__reference(size_t esize, const wick_copy_plan *p, const void *src,
                                  void *dst) {
  const uint8_t *s = (const uint8_t *)src + p->src_offset * (int64_t)esize;
  uint8_t *d = (uint8_t *)dst + p->dst_offset * (int64_t)esize;
  int32_t r = p->rank;
  if (r == 0) {
    memcpy(d, s, esize);
    return;
  }
  for (int32_t k = 0; k < r; k++)
    if (p->dims[k] == 0) return;
  int64_t inner = p->dims[r - 1];
  int64_t outer = 1;
  for (int32_t k = 0; k < r - 1; k++) outer *= p->dims[k];
  int64_t idx[WICK_COPY_MAX_RANK] = {0};
  int64_t so = 0, dof = 0; /* offsets of the current row */
  for (int64_t o = 0; o < outer; o++) {
    copy_row(esize, s + so * (int64_t)esize, p->src_strides[r - 1], d + dof * (int64_t)esize,
             p->dst_strides[r - 1], inner);
    /* Advance the counter, updating the row offsets incrementally. */
    for (int32_t k = r - 2; k >= 0; k--) {
      so += p->src_strides[k];
      dof += p->dst_strides[k];
      if (++idx[k] < p->dims[k]) break;
      so -= p->src_strides[k] * p->dims[k];
      dof -= p->dst_strides[k] * p->dims[k];
      idx[k] = 0;
    }
  }
}
