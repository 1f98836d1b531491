/*
 * neon/q16_fc.c — q16.h's 16x8 FULLY_CONNECTED kernel for AArch64 Advanced
 * SIMD (int16 activations, int8 weights packed as int16 pairs: q16.h's
 * layout, avx2/q16_fc.c's counterpart). Both AArch64 int8 tables use it.
 *
 * Tiles of 2 rows x 16 columns: per pair of inputs, the row's two inputs
 * broadcast as one int32 (int16 lanes x0 x1 x0 x1 ...), and per 4 columns
 * one SMLAL and one SMLAL2 against the pair's weights (w[c][2g] w[c][2g+1]
 * for 2 columns a half), so each int32 lane sums one of the two products of
 * its column: at most WICK_Q16_BLOCK_PAIRS products of |x w| <= 2^22, and
 * the pairwise add (ADDP) of a column's two lanes at most 510 of them,
 * < 2^31: exact. With a 64-bit accumulator (an int64 bias, or none) those
 * block sums are widened into int64 totals; with an int32 bias the lanes
 * keep wrapping over the whole row, as the reference's int32 accumulator
 * does. 16 accumulators per 2 rows, 4 weight registers, 2 input registers.
 *
 * The output stage is the reference's: total + bias converted to double
 * (SCVTF rounds as the C conversion does), times the column's scale,
 * rounded half away from zero, saturated to int32 (neon/q8_requant.h's
 * q8_round_fc2), + zero point (wrapping), clamped, narrowed.
 *
 * The weights are walked in column blocks of about L2_BLOCK_BYTES that every
 * row tile of the call uses before the next block is read.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/neon/q8_requant.h"
#include "kernels/q16.h"

#define INLINE static inline __attribute__((always_inline))
#define MR 2
#define NR WICK_Q16_NR
#define L2_BLOCK_BYTES ((size_t)160 * 1024)

/* Inputs 2g, 2g+1 of a row as int16 lanes x0 x1 x0 x1 ... */
INLINE int16x8_t load_pair(const int16_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return vreinterpretq_s16_s32(vdupq_n_s32(v));
}

/* The last input of an odd k: x0 0 x0 0 ... */
INLINE int16x8_t load_one(const int16_t *p) {
  return vreinterpretq_s16_s32(vdupq_n_s32((int32_t)(uint16_t)*p));
}

/* One row's step on the pair's weights w0..w3 (4 columns each). */
#define ROW_STEP(i, LOAD, a)                         \
  do {                                               \
    if (R > (i)) {                                   \
      const int16x8_t x_ = LOAD(x[i] + 2 * g);       \
      const int16x4_t xl_ = vget_low_s16(x_);        \
      a##0 = vmlal_s16(a##0, vget_low_s16(w0), xl_); \
      a##1 = vmlal_high_s16(a##1, w0, x_);           \
      a##2 = vmlal_s16(a##2, vget_low_s16(w1), xl_); \
      a##3 = vmlal_high_s16(a##3, w1, x_);           \
      a##4 = vmlal_s16(a##4, vget_low_s16(w2), xl_); \
      a##5 = vmlal_high_s16(a##5, w2, x_);           \
      a##6 = vmlal_s16(a##6, vget_low_s16(w3), xl_); \
      a##7 = vmlal_high_s16(a##7, w3, x_);           \
    }                                                \
  } while (0)

/* acc[i][0..3] = int32 sums over pairs [g0, g1) of row i against the panel `w` (at pair 0),
 * columns 4j..4j+3 in acc[i][j]. */
INLINE void block_sums(size_t R, const int16_t *const *x, size_t k, size_t g0, size_t g1,
                       const int16_t *w, int32x4_t acc[][4]) {
  const int32x4_t z = vdupq_n_s32(0);
  int32x4_t p0 = z, p1 = z, p2 = z, p3 = z, p4 = z, p5 = z, p6 = z, p7 = z;
  int32x4_t q0 = z, q1 = z, q2 = z, q3 = z, q4 = z, q5 = z, q6 = z, q7 = z;
  const size_t full = 2 * g1 <= k ? g1 : g1 - 1; /* pairs with both inputs inside k */
  size_t g = g0;
  w += g0 * 2 * NR;
  for (; g < full; g++, w += 2 * NR) {
    const int16x8_t w0 = vld1q_s16(w), w1 = vld1q_s16(w + 8);
    const int16x8_t w2 = vld1q_s16(w + 16), w3 = vld1q_s16(w + 24);
    ROW_STEP(0, load_pair, p);
    ROW_STEP(1, load_pair, q);
  }
  if (g < g1) { /* the last input of an odd k (its weight pair ends in a zero) */
    const int16x8_t w0 = vld1q_s16(w), w1 = vld1q_s16(w + 8);
    const int16x8_t w2 = vld1q_s16(w + 16), w3 = vld1q_s16(w + 24);
    ROW_STEP(0, load_one, p);
    ROW_STEP(1, load_one, q);
  }
  acc[0][0] = vpaddq_s32(p0, p1), acc[0][1] = vpaddq_s32(p2, p3);
  acc[0][2] = vpaddq_s32(p4, p5), acc[0][3] = vpaddq_s32(p6, p7);
  if (R > 1) {
    acc[1][0] = vpaddq_s32(q0, q1), acc[1][1] = vpaddq_s32(q2, q3);
    acc[1][2] = vpaddq_s32(q4, q5), acc[1][3] = vpaddq_s32(q6, q7);
  }
}
#undef ROW_STEP

/* Stores one row's nc <= 16 outputs from its totals t[0..7] (2 int64 columns each, bias in). */
INLINE void store_row(const int64x2_t t[8], const double *scale, const wick_q16_fc_args *a,
                      int16_t *out, size_t nc) {
  const int32x4_t zp = vdupq_n_s32(a->zero_point);
  const int32x4_t lo = vdupq_n_s32(a->lo), hi = vdupq_n_s32(a->hi);
  int16x4_t h[4];
  for (int v = 0; v < 4; v++) {
    const int64x2_t r0 = q8_round_fc2(t[2 * v], scale + 4 * v);
    const int64x2_t r1 = q8_round_fc2(t[2 * v + 1], scale + 4 * v + 2);
    int32x4_t q = vaddq_s32(vcombine_s32(vmovn_s64(r0), vmovn_s64(r1)), zp);
    q = vminq_s32(vmaxq_s32(q, lo), hi);
    h[v] = vqmovn_s32(q);
  }
  const int16x8_t v0 = vcombine_s16(h[0], h[1]), v1 = vcombine_s16(h[2], h[3]);
  if (nc == NR) {
    vst1q_s16(out, v0);
    vst1q_s16(out + 8, v1);
    return;
  }
  int16_t res[NR];
  vst1q_s16(res, v0);
  vst1q_s16(res + 8, v1);
  memcpy(out, res, nc * sizeof(int16_t));
}

/* Rows [0, R) x columns [c, c + nc) (nc <= 16) of the output; w is the columns' panel. */
INLINE void tile(size_t R, const int16_t *in, size_t k, const int16_t *w, size_t c, size_t nc,
                 const wick_q16_fc_args *a, int16_t *out, size_t n) {
  const int16_t *x[MR];
  for (size_t i = 0; i < R; i++) x[i] = in + i * k;
  const size_t pairs = k / 2 + (k % 2);
  int32x4_t acc[MR][4];
  int64x2_t t[MR][8];
  if (!a->acc64) { /* wrapping int32 sums + int32 bias, as the reference */
    block_sums(R, x, k, 0, pairs, w, acc);
    for (size_t i = 0; i < R; i++)
      for (int j = 0; j < 4; j++) {
        const int32x4_t s = vaddq_s32(acc[i][j], vld1q_s32(a->bias32 + c + 4 * j));
        t[i][2 * j] = vmovl_s32(vget_low_s32(s));
        t[i][2 * j + 1] = vmovl_high_s32(s);
      }
  } else {
    for (size_t i = 0; i < R; i++)
      for (int v = 0; v < 8; v++) t[i][v] = vld1q_s64(a->bias64 + c + 2 * v);
    for (size_t g0 = 0; g0 < pairs; g0 += WICK_Q16_BLOCK_PAIRS) {
      const size_t g1 = pairs - g0 < WICK_Q16_BLOCK_PAIRS ? pairs : g0 + WICK_Q16_BLOCK_PAIRS;
      block_sums(R, x, k, g0, g1, w, acc);
      for (size_t i = 0; i < R; i++)
        for (int j = 0; j < 4; j++) {
          t[i][2 * j] = vaddw_s32(t[i][2 * j], vget_low_s32(acc[i][j]));
          t[i][2 * j + 1] = vaddw_high_s32(t[i][2 * j + 1], acc[i][j]);
        }
    }
  }
  for (size_t i = 0; i < R; i++) store_row(t[i], a->scale + c, a, out + i * n + c, nc);
}

void wick_q16_fc__neon(size_t m, size_t n0, size_t n1, size_t n, size_t k, const int16_t *in,
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
        if (m - r < MR)
          tile(1, rows, k, w, c, nc, a, o, n);
        else
          tile(2, rows, k, w, c, nc, a, o, n);
      }
    }
  }
}
