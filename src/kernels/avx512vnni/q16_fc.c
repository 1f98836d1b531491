/*
 * avx512vnni/q16_fc.c — q16.h's 16x8 FULLY_CONNECTED kernel for AVX-512 VNNI (int16
 * activations, int8 weights packed as int16 pairs). Compiled with -mavx512f/vl/bw/dq/vnni.
 *
 * A packed pair of 16 channels (w[c][2g], w[c][2g + 1] per int32 lane) is one zmm, which
 * VPDPWSSD multiplies by a row's broadcast input pair and adds into the lane: the two
 * exact products and the wrapping 32-bit sum of avx2/q16_fc.c's VPMADDWD + VPADDD, in one
 * instruction over twice the lanes. Tiles of up to 8 rows x 32 columns (two panels, 16
 * accumulators): per pair of inputs, two weight loads, one broadcast per row and two
 * VPDPWSSD per row. As in the AVX2 kernel, lanes hold at most WICK_Q16_BLOCK_PAIRS pairs
 * (exact) before they are widened into 64-bit totals (an int64 bias, or none); with an
 * int32 bias they keep wrapping over the whole row, as the reference's int32 accumulator
 * does. The output stage (bias included) is avx2/q16_fc_output.h.
 *
 * The weights are walked in column blocks of about L2_BLOCK_BYTES that every row tile of
 * the call uses before the next block is read.
 */
#include "kernels/avx2/q16_fc_output.h"

#define INLINE static inline __attribute__((always_inline))
#define MR 8
#define NR WICK_Q16_NR
#define L2_BLOCK_BYTES ((size_t)256 * 1024)

INLINE uint32_t load_pair(const int16_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

INLINE uint32_t load_one(const int16_t *p) { return (uint16_t)*p; }

/* Row i's step: its inputs 2g, 2g+1 broadcast as one int32, times each panel's pair. */
#define ROW_STEP(i, LOAD)                                                \
  do {                                                                   \
    if (R > (i)) {                                                       \
      const __m512i a_ = _mm512_set1_epi32((int32_t)LOAD(x[i] + 2 * g)); \
      c##i##0 = _mm512_dpwssd_epi32(c##i##0, a_, w0);                    \
      if (P > 1) c##i##1 = _mm512_dpwssd_epi32(c##i##1, a_, w1);         \
    }                                                                    \
  } while (0)
#define ALL_ROWS(LOAD) \
  ROW_STEP(0, LOAD);   \
  ROW_STEP(1, LOAD);   \
  ROW_STEP(2, LOAD);   \
  ROW_STEP(3, LOAD);   \
  ROW_STEP(4, LOAD);   \
  ROW_STEP(5, LOAD);   \
  ROW_STEP(6, LOAD);   \
  ROW_STEP(7, LOAD)

/* acc[i][p] = int32 sums over pairs [g0, g1) of row i against panel p (w: panel 0 at pair 0;
 * panel 1 `panel` elements further). Named locals, not an array, in the loop. */
INLINE void block_sums(size_t R, size_t P, const int16_t *const *x, size_t k, size_t g0, size_t g1,
                       const int16_t *w, size_t panel, __m512i acc[][2]) {
  const __m512i z = _mm512_setzero_si512();
  __m512i c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
  __m512i c40 = z, c41 = z, c50 = z, c51 = z, c60 = z, c61 = z, c70 = z, c71 = z;
  const size_t full = 2 * g1 <= k ? g1 : g1 - 1; /* pairs with both inputs inside k */
  const int16_t *wa = w + g0 * 2 * NR, *wb = wa + panel;
  size_t g = g0;
  for (; g < full; g++, wa += 2 * NR, wb += 2 * NR) {
    const __m512i w0 = _mm512_loadu_si512(wa);
    const __m512i w1 = P > 1 ? _mm512_loadu_si512(wb) : z;
    ALL_ROWS(load_pair);
  }
  if (g < g1) { /* the last input of an odd k (its weight pair ends in a zero) */
    const __m512i w0 = _mm512_loadu_si512(wa);
    const __m512i w1 = P > 1 ? _mm512_loadu_si512(wb) : z;
    ALL_ROWS(load_one);
  }
  const __m512i c[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},
                            {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}};
  for (size_t i = 0; i < R; i++) {
    acc[i][0] = c[i][0];
    if (P > 1) acc[i][1] = c[i][1];
  }
}
#undef ALL_ROWS
#undef ROW_STEP

/* 16 int32 lanes -> two vectors of 8 int64 (lanes 0..7, 8..15). */
INLINE void widen(__m512i v, __m512i *lo, __m512i *hi) {
  *lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v));
  *hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1));
}

/* Rows [0, R) x columns [c, c + nc) (nc <= P * 16) of the output; w is column c's panel. */
INLINE void tile(size_t R, size_t P, const int16_t *in, size_t k, const int16_t *w, size_t panel,
                 size_t c, size_t nc, const wick_q16_fc_args *a, int16_t *out, size_t n) {
  const int16_t *x[MR];
  for (size_t i = 0; i < R; i++) x[i] = in + i * k;
  const size_t pairs = k / 2 + (k % 2);
  __m512i acc[MR][2], t[MR][2][2]; /* t[row][panel]: int64 totals of columns 0..7, 8..15 */
  if (!a->acc64) {                 /* wrapping int32 sums + int32 bias, as the reference */
    block_sums(R, P, x, k, 0, pairs, w, panel, acc);
    for (size_t p = 0; p < P; p++) {
      const __m512i b = _mm512_loadu_si512(a->bias32 + c + p * NR);
      for (size_t i = 0; i < R; i++)
        widen(_mm512_add_epi32(acc[i][p], b), &t[i][p][0], &t[i][p][1]);
    }
  } else {
    for (size_t p = 0; p < P; p++)
      for (size_t i = 0; i < R; i++) {
        t[i][p][0] = _mm512_loadu_si512(a->bias64 + c + p * NR);
        t[i][p][1] = _mm512_loadu_si512(a->bias64 + c + p * NR + 8);
      }
    for (size_t g0 = 0; g0 < pairs; g0 += WICK_Q16_BLOCK_PAIRS) {
      const size_t g1 = pairs - g0 < WICK_Q16_BLOCK_PAIRS ? pairs : g0 + WICK_Q16_BLOCK_PAIRS;
      block_sums(R, P, x, k, g0, g1, w, panel, acc);
      for (size_t p = 0; p < P; p++)
        for (size_t i = 0; i < R; i++) {
          __m512i lo, hi;
          widen(acc[i][p], &lo, &hi);
          t[i][p][0] = _mm512_add_epi64(t[i][p][0], lo);
          t[i][p][1] = _mm512_add_epi64(t[i][p][1], hi);
        }
    }
  }
  for (size_t p = 0; p < P; p++) {
    const size_t cp = c + p * NR, np = nc - p * NR < NR ? nc - p * NR : NR;
    for (size_t i = 0; i < R; i++) {
      const __m256i q[4] = {_mm512_castsi512_si256(t[i][p][0]),
                            _mm512_extracti64x4_epi64(t[i][p][0], 1),
                            _mm512_castsi512_si256(t[i][p][1]),
                            _mm512_extracti64x4_epi64(t[i][p][1], 1)};
      q16_store_row(q, a->scale + cp, a, out + i * n + cp, np);
    }
  }
}

#define TILE_ROWS(P)                                               \
  switch (m - r < MR ? m - r : MR) {                               \
    case 1: tile(1, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    case 2: tile(2, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    case 3: tile(3, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    case 4: tile(4, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    case 5: tile(5, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    case 6: tile(6, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    case 7: tile(7, P, rows, k, w, panel, c, nc, a, o, n); break;  \
    default: tile(8, P, rows, k, w, panel, c, nc, a, o, n); break; \
  }

void wick_q16_fc__avx512vnni(size_t m, size_t n0, size_t n1, size_t n, size_t k, const int16_t *in,
                             const int16_t *packed, const wick_q16_fc_args *a, int16_t *out) {
  const size_t panel = (k / 2 + (k % 2)) * 2 * NR;                       /* int16 elements */
  size_t block = L2_BLOCK_BYTES / (panel * sizeof(int16_t) + 1) / 2 * 2; /* whole tile pairs */
  if (block < 2) block = 2;
  for (size_t b0 = n0; b0 < n1; b0 += block * NR) {
    const size_t b1 = n1 - b0 < block * NR ? n1 : b0 + block * NR;
    for (size_t r = 0; r < m; r += MR) {
      const int16_t *rows = in + r * k;
      int16_t *o = out + r * n;
      for (size_t c = b0; c < b1; c += 2 * NR) {
        const int16_t *w = packed + c / NR * panel;
        const size_t nc = b1 - c < 2 * NR ? b1 - c : 2 * NR;
        if (nc > NR) {
          TILE_ROWS(2)
        } else {
          TILE_ROWS(1)
        }
      }
    }
  }
}
