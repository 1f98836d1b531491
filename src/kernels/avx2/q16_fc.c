/*
 * avx2/q16_fc.c — q16.h's 16x8 FULLY_CONNECTED kernel for AVX2 (int16
 * activations, int8 weights packed as int16 pairs). Compiled with -mavx2.
 *
 * Tiles of 4 rows x 16 columns: per pair of inputs, one broadcast per row
 * and one VPMADDWD per row and 8 columns, into int32 lanes that hold at
 * most WICK_Q16_BLOCK_PAIRS pairs (exact) before they are widened into
 * 64-bit totals (an int64 bias); with an int32 bias the lanes keep wrapping
 * over the whole row, as the reference's int32 accumulator does.
 *
 * The output stage (bias included) is avx2/q16_fc_output.h.
 *
 * The weights are walked in column blocks of about L2_BLOCK_BYTES that every
 * row tile of the call uses before the next block is read.
 */
#include "kernels/avx2/q16_fc_output.h"

#define INLINE static inline __attribute__((always_inline))
#define MR 4
#define NR WICK_Q16_NR
#define L2_BLOCK_BYTES ((size_t)160 * 1024)

INLINE uint32_t load_pair(const int16_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

INLINE uint32_t load_one(const int16_t *p) { return (uint16_t)*p; }

INLINE __m256i load256(const int16_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

/* Row i's step: its inputs 2g, 2g+1 broadcast as one int32, times the pair's weights. */
#define ROW_STEP(i, LOAD, acc0, acc1)                                    \
  do {                                                                   \
    if (R > (i)) {                                                       \
      const __m256i a_ = _mm256_set1_epi32((int32_t)LOAD(x[i] + 2 * g)); \
      acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(a_, w0));          \
      acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(a_, w1));          \
    }                                                                    \
  } while (0)

/* acc[i][0..1] = int32 sums over pairs [g0, g1) of row i against the panel `w` (at pair 0),
 * channels 0..7 and 8..15. Named locals, not an array, in the loop (see avx2/q8_gemm.c). */
INLINE void block_sums(size_t R, const int16_t *const *x, size_t k, size_t g0, size_t g1,
                       const int16_t *w, __m256i acc[][2]) {
  const __m256i z = _mm256_setzero_si256();
  __m256i c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
  const size_t full = 2 * g1 <= k ? g1 : g1 - 1; /* pairs with both inputs inside k */
  size_t g = g0;
  w += g0 * 2 * NR;
  for (; g < full; g++, w += 2 * NR) {
    const __m256i w0 = load256(w), w1 = load256(w + 16);
    ROW_STEP(0, load_pair, c00, c01);
    ROW_STEP(1, load_pair, c10, c11);
    ROW_STEP(2, load_pair, c20, c21);
    ROW_STEP(3, load_pair, c30, c31);
  }
  if (g < g1) { /* the last input of an odd k (its weight pair ends in a zero) */
    const __m256i w0 = load256(w), w1 = load256(w + 16);
    ROW_STEP(0, load_one, c00, c01);
    ROW_STEP(1, load_one, c10, c11);
    ROW_STEP(2, load_one, c20, c21);
    ROW_STEP(3, load_one, c30, c31);
  }
  acc[0][0] = c00, acc[0][1] = c01;
  if (R > 1) acc[1][0] = c10, acc[1][1] = c11;
  if (R > 2) acc[2][0] = c20, acc[2][1] = c21;
  if (R > 3) acc[3][0] = c30, acc[3][1] = c31;
}
#undef ROW_STEP

/* 8 int32 lanes -> two vectors of 4 int64 (lanes 0..3, 4..7). */
INLINE void widen(__m256i v, __m256i *lo, __m256i *hi) {
  *lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v));
  *hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1));
}

/* Rows [0, R) x columns [c, c + nc) (nc <= 16) of the output; w is the columns' panel. */
INLINE void tile(size_t R, const int16_t *in, size_t k, const int16_t *w, size_t c, size_t nc,
                 const wick_q16_fc_args *a, int16_t *out, size_t n) {
  const int16_t *x[MR];
  for (size_t i = 0; i < R; i++) x[i] = in + i * k;
  const size_t pairs = k / 2 + (k % 2);
  __m256i acc[MR][2], t[MR][4];
  if (!a->acc64) { /* wrapping int32 sums + int32 bias, as the reference */
    block_sums(R, x, k, 0, pairs, w, acc);
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(a->bias32 + c));
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(a->bias32 + c + 8));
    for (size_t i = 0; i < R; i++) {
      widen(_mm256_add_epi32(acc[i][0], b0), &t[i][0], &t[i][1]);
      widen(_mm256_add_epi32(acc[i][1], b1), &t[i][2], &t[i][3]);
    }
  } else {
    for (size_t i = 0; i < R; i++)
      for (int v = 0; v < 4; v++)
        t[i][v] = _mm256_loadu_si256((const __m256i *)(const void *)(a->bias64 + c + 4 * v));
    for (size_t g0 = 0; g0 < pairs; g0 += WICK_Q16_BLOCK_PAIRS) {
      const size_t g1 = pairs - g0 < WICK_Q16_BLOCK_PAIRS ? pairs : g0 + WICK_Q16_BLOCK_PAIRS;
      block_sums(R, x, k, g0, g1, w, acc);
      for (size_t i = 0; i < R; i++) {
        __m256i l0, h0, l1, h1;
        widen(acc[i][0], &l0, &h0);
        widen(acc[i][1], &l1, &h1);
        t[i][0] = _mm256_add_epi64(t[i][0], l0);
        t[i][1] = _mm256_add_epi64(t[i][1], h0);
        t[i][2] = _mm256_add_epi64(t[i][2], l1);
        t[i][3] = _mm256_add_epi64(t[i][3], h1);
      }
    }
  }
  for (size_t i = 0; i < R; i++) q16_store_row(t[i], a->scale + c, a, out + i * n + c, nc);
}

void wick_q16_fc__avx2(size_t m, size_t n0, size_t n1, size_t n, size_t k, const int16_t *in,
                       const int16_t *packed, const wick_q16_fc_args *a, int16_t *out) {
  const size_t panel = (k / 2 + (k % 2)) * 2 * NR; /* int16 elements */
  size_t block = L2_BLOCK_BYTES / (panel * sizeof(int16_t) + 1);
  if (block == 0) block = 1;
  for (size_t b0 = n0; b0 < n1; b0 += block * NR) {
    const size_t b1 = n1 - b0 < block * NR ? n1 : b0 + block * NR;
    for (size_t r = 0; r < m; r += MR) {
      const int16_t *rows = in + r * k;
      int16_t *o = out + r * n;
      for (size_t c = b0; c < b1; c += NR) {
        const int16_t *w = packed + c / NR * panel;
        const size_t nc = b1 - c < NR ? b1 - c : NR;
        switch (m - r < MR ? m - r : MR) {
          case 1: tile(1, rows, k, w, c, nc, a, o, n); break;
          case 2: tile(2, rows, k, w, c, nc, a, o, n); break;
          case 3: tile(3, rows, k, w, c, nc, a, o, n); break;
          default: tile(4, rows, k, w, c, nc, a, o, n); break;
        }
      }
    }
  }
}
