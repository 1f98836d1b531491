/*
 * attention.c — the layout and the portable pieces of the fused attention over a key/value
 * cache (kernels.h: wick_f32_attention; the pattern is src/core/fuse.c's fuse_attention, the
 * op that runs it src/ops/attention.c).
 *
 * An LLM's decode step attends over the whole cache, max_seq_len positions, with an additive
 * mask hiding the positions not written yet: softmax(q kt + mask) v. The fused form computes
 * only the first e positions of each tile of query rows, e covering every position the mask
 * leaves visible to the tile's rows, so the step costs what the filled part of the cache
 * costs. It gives the bits the unfused BATCH_MATMUL, ADD, SOFTMAX, BATCH_MATMUL give:
 *
 * * A masked position (mask <= -FLT_MAX) has score + mask = -FLT_MAX (or -inf) for any score
 *   below 2^103 in magnitude — the one assumption: scores are finite and not absurd, true of
 *   any attention whose queries and keys are finite floats of sane size — and a visible one
 *   (mask >= -2^126) stays far above it. So the row maximum is a visible position's, and
 *   beta (>= 2^-100, checked when fusing) times (masked - max) is below -104, where the
 *   vectorized exp returns exactly +0: every masked position's probability is +0 in the full
 *   computation. Rows that break this (no visible position, a visible mask value below
 *   -2^126) are not cut (wick_f32_attention_row_span returns s).
 * * Scores: each output of the GEMM microkernel is its own chain of FMAs over k, whichever
 *   columns the call covers; a call's last panel with at most NR/2 live columns may take
 *   another path (avx2/gemm.c), so e is a multiple of the kernel's NR (or s itself).
 * * Softmax over e columns: the vector kernel's max is the same (above), its exps of the
 *   computed columns are elementwise, and its sum adds lane-wise partial sums of whole vectors
 *   then a scalar tail: with e a multiple of the vector length the lanes hold the same terms
 *   plus +0s, and the tail of the full row holds only +0s. So align is a multiple of 16 (the
 *   longest vector) and of NR.
 * * Probabilities times values over e rows instead of s: the terms dropped are +0 * v, and
 *   every microkernel adds its k terms to fixed accumulators in k order (the one-row kernels
 *   round-robin over k modulo 2 or 4, kept by e being a multiple of 16), so each accumulator
 *   sees the same nonzero terms in the same order and x + 0 = x.
 * * Starting at a column `start` > 0 (a tile whose rows see no position before it: a sliding
 *   window) drops leading positions of probability +0 the same way: start is a multiple of
 *   align, so the softmax's vector lanes and the one-row kernels' round-robin over k keep
 *   their assignment, every accumulator starts from +0 as before, and +0 + (+-0) = +0.
 * * Read in place (wick_f32_gemm_inplace_fn), the keys and values give the kernels the same
 *   operands in the same order as packed (a packed panel's zero bias is the +0 the in-place
 *   kernels start from).
 */
#include <float.h>
#include <string.h>

#include "kernels/kernels.h"

static bool mul_ok(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* Appends `bytes` at 64-byte alignment to a layout of *end bytes; false on overflow. */
static bool append(size_t *end, size_t bytes, size_t *at) {
  size_t start;
  if (__builtin_add_overflow(*end, (size_t)63, &start)) return false;
  start &= ~(size_t)63;
  *at = start;
  return !__builtin_add_overflow(start, bytes, end);
}

static size_t gcd(size_t a, size_t b) {
  while (b != 0) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

bool wick_f32_attention_init(wick_f32_attention *a, const wick_f32_kernels *k, size_t batches,
                             size_t m, size_t d, size_t s, size_t dv, size_t threads) {
  memset(a, 0, sizeof *a);
  if (k == NULL || batches == 0 || m == 0 || d == 0 || s == 0 || dv == 0 || threads == 0)
    return false;
  a->k = k;
  a->scores = wick_f32_gemm_kernel_for(k, s);
  a->values = wick_f32_gemm_kernel_for(k, dv);
  a->batches = batches, a->m = m, a->d = d, a->s = s, a->dv = dv;
  a->rows = a->scores->mr;
  a->tiles = (m + a->rows - 1) / a->rows;
  const size_t nr = a->scores->nr;
  a->align = nr / gcd(nr, 16) * 16;
  a->inplace = k->gemm_inplace != NULL && k->gemm_inplace_1 != NULL && a->scores == &k->gemm &&
               a->values == &k->gemm && s % nr == 0 && dv % nr == 0;
  size_t extents, keys, values, scores, end = 0;
  if (a->inplace) {
    a->keys_floats = a->values_floats = 0;
  } else if (!wick_f32_gemm_packed_size_checked(s, d, nr, &a->keys_floats) ||
             !wick_f32_gemm_packed_size_checked(dv, s, a->values->nr, &a->values_floats)) {
    return false;
  }
  /* per batch: the tiles' extents and the largest, then the tiles' starts and the smallest */
  if (!mul_ok(batches, 2 * (a->tiles + 1), &extents) ||
      !mul_ok(extents, sizeof(size_t), &extents) || !mul_ok(batches, a->keys_floats, &keys) ||
      !mul_ok(keys, sizeof(float), &keys) || !mul_ok(batches, a->values_floats, &values) ||
      !mul_ok(values, sizeof(float), &values) || !mul_ok(threads, a->rows, &scores) ||
      !mul_ok(scores, s, &scores) || !mul_ok(scores, sizeof(float), &scores))
    return false;
  if (!append(&end, extents, &a->extents_at) || !append(&end, keys, &a->keys_at) ||
      !append(&end, values, &a->values_at) || !append(&end, scores, &a->scores_at))
    return false;
  a->bytes = end;
  return true;
}

size_t wick_f32_attention_row_span(const float *mask, size_t s, size_t *start) {
  size_t first = 0;
  while (first < s && mask[first] <= -FLT_MAX) first++;
  *start = 0;
  if (first == s) return s; /* nothing visible: not cut */
  size_t e = s;
  while (mask[e - 1] <= -FLT_MAX) e--; /* (stops at first at the latest) */
  for (size_t c = first; c < e; c++)
    if (mask[c] < -0x1p126f && mask[c] > -FLT_MAX) return s;
  *start = first;
  return e;
}

size_t wick_f32_attention_round(const wick_f32_attention *a, size_t e) {
  if (e >= a->s) return a->s;
  e = (e + a->align - 1) / a->align * a->align;
  return e < a->s ? e : a->s;
}

void wick_f32_attention_pack(const wick_f32_attention *a, const float *kt, const float *v,
                             size_t start, size_t e, float *keys, float *values) {
  wick_f32_gemm_pack_kn_strided(e - start, a->d, a->scores->nr, kt + start, a->s, keys);
  wick_f32_gemm_pack_kn(a->dv, e - start, a->values->nr, v + start * a->dv, values);
}
