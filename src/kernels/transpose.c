/*
 * transpose.c — the blocked 2-D transpose behind TRANSPOSE (and every
 * strided copy whose two innermost dimensions swap): portable C, no ISA.
 *
 * After wick_copy_plan_simplify, the common layout permutations end in two
 * dimensions [A, B] where the source is contiguous along A and the
 * destination along B: NCHW <-> NHWC ([C, HW] <-> [HW, C]), ShuffleNet's
 * channel shuffle ([HW, 2, C/2] -> [HW, C/2, 2]), attention head splits.
 * The reference copies such a plan B elements at a time with strided reads
 * (a row per outer step: 2 elements for the channel shuffle). Here each outer
 * step copies the whole A x B tile in blocks of 16 A-rows: 16 contiguous
 * reads per B, writes landing in the same 16 destination rows while they are
 * in L1. Results are identical to the reference (a copy).
 */
#include <string.h>

#include "kernels/kernels.h"

#define BLOCK 16

bool wick_strided_copy_is_transpose(const wick_copy_plan *p) {
  const int32_t r = p->rank;
  return r >= 2 && p->src_strides[r - 2] == 1 && p->dst_strides[r - 1] == 1 &&
         p->src_strides[r - 1] != 1 && p->dims[r - 1] > 1;
}

#define TILE(T)                                                            \
  do {                                                                     \
    const T *s_ = (const T *)s;                                            \
    T *d_ = (T *)d;                                                        \
    for (int64_t a0 = 0; a0 < na; a0 += BLOCK) {                           \
      const int64_t a1 = na - a0 < BLOCK ? na : a0 + BLOCK;                \
      for (int64_t b = 0; b < nb; b++)                                     \
        for (int64_t a = a0; a < a1; a++) d_[a * da + b] = s_[a + b * sb]; \
    }                                                                      \
  } while (0)

/* Interleaves NB planes of T (NB = 2..4, source rows sb apart) into
 * contiguous groups of NB: an image's few channels going NCHW -> NHWC
 * (bytes for uint8 images, floats for fp32 ones). A fixed group size and no
 * blocking let the compiler vectorize the interleave or at least keep it to
 * NB streaming reads and one sequential write stream (the blocked loop
 * writes one element every NB, block row by block row: 1x3x224x224 fp32
 * took ~100-200 us that way, ~4% of MobileNetV3-Small). */
#define INTERLEAVE(T, NB)                                                   \
  do {                                                                      \
    const T *s_ = (const T *)s;                                             \
    T *d_ = (T *)d;                                                         \
    for (int64_t a = 0; a < na; a++)                                        \
      for (int64_t b = 0; b < (NB); b++) d_[a * (NB) + b] = s_[a + b * sb]; \
  } while (0)

static void tile(size_t esize, const uint8_t *s, uint8_t *d, int64_t na, int64_t nb, int64_t sb,
                 int64_t da) {
  if ((esize == 1 || esize == 4) && da == nb && nb >= 2 && nb <= 4) {
    if (esize == 1) {
      if (nb == 2) INTERLEAVE(uint8_t, 2);
      if (nb == 3) INTERLEAVE(uint8_t, 3);
      if (nb == 4) INTERLEAVE(uint8_t, 4);
    } else {
      if (nb == 2) INTERLEAVE(uint32_t, 2);
      if (nb == 3) INTERLEAVE(uint32_t, 3);
      if (nb == 4) INTERLEAVE(uint32_t, 4);
    }
    return;
  }
  switch (esize) {
    case 1: TILE(uint8_t); break;
    case 2: TILE(uint16_t); break;
    case 4: TILE(uint32_t); break;
    case 8: TILE(uint64_t); break;
    default:
      for (int64_t a = 0; a < na; a++)
        for (int64_t b = 0; b < nb; b++)
          memcpy(d + (a * da + b) * (int64_t)esize, s + (a + b * sb) * (int64_t)esize, esize);
  }
}

void wick_strided_copy_transpose(size_t esize, const wick_copy_plan *p, const void *src,
                                 void *dst) {
  const int32_t r = p->rank;
  for (int32_t k = 0; k < r; k++)
    if (p->dims[k] == 0) return;
  const uint8_t *s = (const uint8_t *)src + p->src_offset * (int64_t)esize;
  uint8_t *d = (uint8_t *)dst + p->dst_offset * (int64_t)esize;
  const int64_t na = p->dims[r - 2], nb = p->dims[r - 1];
  const int64_t sb = p->src_strides[r - 1], da = p->dst_strides[r - 2];
  int64_t outer = 1;
  for (int32_t k = 0; k < r - 2; k++) outer *= p->dims[k];
  int64_t idx[WICK_COPY_MAX_RANK] = {0};
  int64_t so = 0, dof = 0;
  for (int64_t o = 0; o < outer; o++) {
    tile(esize, s + so * (int64_t)esize, d + dof * (int64_t)esize, na, nb, sb, da);
    for (int32_t k = r - 3; k >= 0; k--) {
      so += p->src_strides[k];
      dof += p->dst_strides[k];
      if (++idx[k] < p->dims[k]) break;
      so -= p->src_strides[k] * p->dims[k];
      dof -= p->dst_strides[k] * p->dims[k];
      idx[k] = 0;
    }
  }
}
