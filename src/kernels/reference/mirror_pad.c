/*
 * mirror_pad.c — reference MIRROR_PAD (movement.h).
 *
 * Each output element is found by mapping its index through every
 * dimension's reflection (formula in movement.h); the input offset is then
 * the row-major offset of the mapped index. Simple, O(rank) per element.
 */
#include <string.h>

#include "kernels/reference/movement.h"

static int64_t mirror(int64_t o, int64_t b, int64_t d, bool symmetric) {
  if (o < b) return symmetric ? b - 1 - o : b - o;
  if (o >= b + d) return symmetric ? 2 * d + b - 1 - o : 2 * d + b - 2 - o;
  return o - b;
}

void wick_mirror_pad__reference(size_t esize, int32_t rank, const int32_t *in_dims,
                                const int32_t *before, const int32_t *out_dims, bool symmetric,
                                const void *in, void *out) {
  const uint8_t *src = in;
  uint8_t *dst = out;
  int64_t total = 1;
  for (int32_t k = 0; k < rank; k++) total *= out_dims[k];
  int64_t in_strides[WICK_MAX_RANK];
  int64_t s = 1;
  for (int32_t k = rank - 1; k >= 0; k--) {
    in_strides[k] = s;
    s *= in_dims[k];
  }
  int64_t idx[WICK_MAX_RANK] = {0};
  for (int64_t e = 0; e < total; e++) {
    int64_t off = 0;
    for (int32_t k = 0; k < rank; k++)
      off += mirror(idx[k], before[k], in_dims[k], symmetric) * in_strides[k];
    memcpy(dst + e * (int64_t)esize, src + off * (int64_t)esize, esize);
    for (int32_t k = rank - 1; k >= 0; k--) {
      if (++idx[k] < out_dims[k]) break;
      idx[k] = 0;
    }
  }
}
