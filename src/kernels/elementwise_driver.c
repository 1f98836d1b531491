/*
 * elementwise_driver.c — maps an op's broadcast shape onto the vectorized
 * binary kernels, and a reduction's axes onto the mid-axis sum.
 *
 * Binary: dimensions of size 1 are dropped and neighbours merged while both
 * operands stay contiguous across them (or both broadcast), which turns every
 * shape the benchmark models use into at most three loops:
 *
 *     same shape                 [n]            one VV call
 *     tensor op scalar           [n]            one VS / SV call
 *     [M, C] op [C] (per channel) [M, C]         M VV calls, b rewinds
 *     [M, C] op [M, 1] (per row)  [M, C]         M VS calls (layer norm)
 *     [N, HW, C] op [N, 1, C]     [N, HW, C]     squeeze-excite gating
 *
 * Anything that still needs more than three loops stays on the reference.
 *
 * Reduce: SUM/MEAN whose reduced axes form one contiguous run (after size-1
 * axes are dropped) are a sum over the middle axis of [outer, mid, inner]:
 * MEAN over H, W of NHWC (global average pool) and over the last axis.
 */
#include "kernels/kernels.h"

bool wick_f32_binary_plan_make(const wick_broadcast *bc, wick_f32_binary_plan *p) {
  int64_t dims[WICK_MAX_RANK], as[WICK_MAX_RANK], bs[WICK_MAX_RANK];
  int32_t r = 0;
  for (int32_t d = 0; d < bc->rank; d++) {
    if (bc->dims[d] == 1) continue;
    if (r > 0 && as[r - 1] == bc->a_strides[d] * bc->dims[d] &&
        bs[r - 1] == bc->b_strides[d] * bc->dims[d]) {
      /* merge into the previous dim: it keeps its outer stride scaled down */
      dims[r - 1] *= bc->dims[d];
      as[r - 1] = bc->a_strides[d];
      bs[r - 1] = bc->b_strides[d];
      continue;
    }
    dims[r] = bc->dims[d];
    as[r] = bc->a_strides[d];
    bs[r] = bc->b_strides[d];
    r++;
  }
  if (r == 0) {
    dims[0] = 1, as[0] = 1, bs[0] = 1;
    r = 1;
  }
  if (r > 3) return false;
  if (as[r - 1] == 1 && bs[r - 1] == 1)
    p->form = WICK_F32_VV;
  else if (as[r - 1] == 1 && bs[r - 1] == 0)
    p->form = WICK_F32_VS;
  else if (as[r - 1] == 0 && bs[r - 1] == 1)
    p->form = WICK_F32_SV;
  else
    return false;
  for (int32_t i = 0; i < 3; i++) {
    int32_t src = i - (3 - r);
    p->dims[i] = src >= 0 ? (size_t)dims[src] : 1;
    p->a_strides[i] = src >= 0 ? (size_t)as[src] : 0;
    p->b_strides[i] = src >= 0 ? (size_t)bs[src] : 0;
  }
  return true;
}

void wick_f32_binary_run(const wick_f32_binary_fn forms[3], const wick_f32_binary_plan *p,
                         const float *a, const float *b, float *out, float lo, float hi) {
  const wick_f32_binary_fn fn = forms[p->form];
  const size_t inner = p->dims[2];
  for (size_t i = 0; i < p->dims[0]; i++)
    for (size_t j = 0; j < p->dims[1]; j++) {
      const size_t ia = i * p->a_strides[0] + j * p->a_strides[1];
      const size_t ib = i * p->b_strides[0] + j * p->b_strides[1];
      fn(inner, a + ia, b + ib, out + (i * p->dims[1] + j) * inner, lo, hi);
    }
}

bool wick_f32_reduce_plan_make(int32_t rank, const int32_t *dims, const bool *reduced,
                               size_t *outer, size_t *mid, size_t *inner) {
  size_t o = 1, m = 1, in = 1;
  int phase = 0; /* 0: before the reduced run, 1: in it, 2: after it */
  for (int32_t d = 0; d < rank; d++) {
    if (dims[d] == 1) continue;
    if (reduced[d]) {
      if (phase == 2) return false;
      phase = 1;
      m *= (size_t)dims[d];
    } else if (phase == 0) {
      o *= (size_t)dims[d];
    } else {
      phase = 2;
      in *= (size_t)dims[d];
    }
  }
  *outer = o, *mid = m, *inner = in;
  return true;
}
