/*
 * neon/q4_blocks.h — the AArch64 kernel of blockwise int4 FULLY_CONNECTED (q4.h), for blocks
 * of a multiple of 32 values, written once and compiled twice: by neondot/q4_blocks.c with
 * the ARMv8.2 dot-product extension and by neon/q4_blocks.c for plain Advanced SIMD (the
 * 16-byte step of neon/dot.h). The includer defines Q4_NAME(name), which appends its ISA
 * suffix.
 *
 * A prepared row holds x_q (int8, the quantized input with its zero point zp) with each 32
 * values reordered as [x0 x2 .. x30 | x1 x3 .. x31] (avx2/q4_blocks.c's order), then zp as
 * an int32. 16 weight bytes give the signed nibbles in that same order: the low nibbles
 * (shifted up 4 bits, then arithmetically down: even elements) and the high ones (an
 * arithmetic shift: odd elements), each in [-8, 7]. Per block
 *
 *     sum (x_q - zp) * w = sum x_q * w - zp * sum w,
 *
 * both sums exact in int32 (|x_q w| <= 1024): the first from dot steps of x_q against the
 * nibbles, the second from dot steps of the nibbles against ones, once per weight chunk for
 * up to four rows that share it. Four rows' lane vectors are reduced together (ADDP).
 *
 * The one-row form (gemv, decode: both builds) reads eight weight rows where they lie and
 * folds the zero point's term into each output's own accumulator: per 32 values three dot
 * steps, the even nibbles against the even x_q, the odd ones against the odd x_q, and
 * -(even + odd) (in [-14, 16]: int8) against zp. Six ADDPs per block leave output t's block
 * sum in lane t of two vectors; then the op's float steps (q4.h) on them.
 *
 * The GEMM form (prefill) unpacks a group of eight weight rows once with the outputs in the
 * lanes (see wick_q4_unpack below) and runs SDOT by element: each lane's four weights against
 * four x_q of a row selected by lane index, no horizontal reduction. Without SDOT: the four
 * x_q broadcast, then widening multiply-accumulates into int16 lanes, widened every 32 values
 * (gemm_rows of the plain build).
 * The float steps: the same operations in the same order as the op's code (no FMA: mul, then
 * add), the clamp by compare and select (the C expression's result on -0 and NaN as well),
 * so the same bits as the reference.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/neon/dot.h"
#include "kernels/q4.h"

#define Q4_INLINE static inline __attribute__((always_inline))

size_t Q4_NAME(wick_q4_row_bytes)(size_t k, size_t bs) {
  (void)bs;
  return (k + 4 + 63) / 64 * 64;
}

void Q4_NAME(wick_q4_prepare)(size_t k, size_t bs, const int16_t *xd, int32_t zp, void *row) {
  (void)bs;
  int8_t *x = row;
  for (size_t c = 0; c < k; c += 32)
    for (size_t j = 0; j < 16; j++) {
      x[c + j] = (int8_t)(xd[c + 2 * j] + zp);
      x[c + 16 + j] = (int8_t)(xd[c + 2 * j + 1] + zp);
    }
  memcpy(x + k, &zp, sizeof zp);
}

/* Rows [0, R) (R <= 4, row r at x0 + r * row_stride) against one weight row: writes
 * out[(r * nb + b) * cols] for every block b. */
Q4_INLINE void rows_sums(size_t R, size_t k, size_t bs, const int8_t *x0, size_t row_stride,
                         const uint8_t *w4, int32_t *out, size_t cols) {
  const size_t nb = k / bs;
  const int8_t *x[4];
  int32_t zp[4] = {0, 0, 0, 0};
  for (size_t r = 0; r < 4; r++) {
    x[r] = x0 + (r < R ? r : 0) * row_stride;
    if (r < R) memcpy(&zp[r], x[r] + k, sizeof zp[r]);
  }
  const int32x4_t vzp = vld1q_s32(zp);
  const int8x16_t ones = vdupq_n_s8(1);
  for (size_t b = 0; b < nb; b++) {
    int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0, ws = a0;
    for (size_t p = b * bs; p < (b + 1) * bs; p += 32) {
      const int8x16_t bytes = vld1q_s8((const int8_t *)w4 + p / 2);
      const int8x16_t even = vshrq_n_s8(vshlq_n_s8(bytes, 4), 4), odd = vshrq_n_s8(bytes, 4);
      ws = wick_neon_dot16(wick_neon_dot16(ws, even, ones), odd, ones);
      a0 = wick_neon_dot16(wick_neon_dot16(a0, even, vld1q_s8(x[0] + p)), odd,
                           vld1q_s8(x[0] + p + 16));
      if (R > 1)
        a1 = wick_neon_dot16(wick_neon_dot16(a1, even, vld1q_s8(x[1] + p)), odd,
                             vld1q_s8(x[1] + p + 16));
      if (R > 2)
        a2 = wick_neon_dot16(wick_neon_dot16(a2, even, vld1q_s8(x[2] + p)), odd,
                             vld1q_s8(x[2] + p + 16));
      if (R > 3)
        a3 = wick_neon_dot16(wick_neon_dot16(a3, even, vld1q_s8(x[3] + p)), odd,
                             vld1q_s8(x[3] + p + 16));
    }
    /* the four rows' sums in one vector, minus zp * sum w */
    const int32x4_t sums = vpaddq_s32(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3));
    const int32x4_t v = vmlsq_s32(sums, vzp, vdupq_n_s32(vaddvq_s32(ws)));
    out[b * cols] = vgetq_lane_s32(v, 0);
    if (R > 1) out[(nb + b) * cols] = vgetq_lane_s32(v, 1);
    if (R > 2) out[(2 * nb + b) * cols] = vgetq_lane_s32(v, 2);
    if (R > 3) out[(3 * nb + b) * cols] = vgetq_lane_s32(v, 3);
  }
}

void Q4_NAME(wick_q4_sums)(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                           size_t cols, const uint8_t *w4, int32_t *sums) {
  const size_t nb = k / bs;
  const int8_t *x = rows;
  for (size_t col = 0; col < cols; col++, w4 += k / 2) {
    size_t i = 0;
    for (; i + 4 <= m; i += 4)
      rows_sums(4, k, bs, x + i * row_stride, row_stride, w4, sums + i * nb * cols + col, cols);
    switch (m - i) {
      case 1:
        rows_sums(1, k, bs, x + i * row_stride, row_stride, w4, sums + i * nb * cols + col, cols);
        break;
      case 2:
        rows_sums(2, k, bs, x + i * row_stride, row_stride, w4, sums + i * nb * cols + col, cols);
        break;
      case 3:
        rows_sums(3, k, bs, x + i * row_stride, row_stride, w4, sums + i * nb * cols + col, cols);
        break;
      default: break;
    }
  }
}

/* The op's last float steps on eight outputs (q4.h): y = acc * row scale + bias, then
 * y < lo ? lo : (y > hi ? hi : y), stored at out. */
Q4_INLINE void finish_outputs(float32x4_t acc0, float32x4_t acc1, float row_scale,
                              const float *bias, float lo, float hi, float *out) {
  const float32x4_t rs = vdupq_n_f32(row_scale), vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  const float32x4_t b0 = bias != NULL ? vld1q_f32(bias) : vdupq_n_f32(0.0f);
  const float32x4_t b1 = bias != NULL ? vld1q_f32(bias + 4) : vdupq_n_f32(0.0f);
  float32x4_t y0 = vaddq_f32(vmulq_f32(acc0, rs), b0), y1 = vaddq_f32(vmulq_f32(acc1, rs), b1);
  y0 = vbslq_f32(vcgtq_f32(y0, vhi), vhi, y0);
  y1 = vbslq_f32(vcgtq_f32(y1, vhi), vhi, y1);
  y0 = vbslq_f32(vcltq_f32(y0, vlo), vlo, y0);
  y1 = vbslq_f32(vcltq_f32(y1, vlo), vlo, y1);
  vst1q_f32(out, y0);
  vst1q_f32(out + 4, y1);
}

/* acc += (float)sum * scale on four lanes: a product, then a sum (no FMA), as the op. */
Q4_INLINE float32x4_t add_scaled(float32x4_t acc, int32x4_t sum, const float *scale) {
  return vaddq_f32(acc, vmulq_f32(vcvtq_f32_s32(sum), vld1q_f32(scale)));
}

/* The group GEMV_PREFETCH groups ahead is prefetched (eight rows read 16 bytes at a time are
 * short streams; PRFM past the weights does not fault). */
#define GEMV_PREFETCH 4
void Q4_NAME(wick_q4_gemv)(size_t k, size_t bs, const void *row, float row_scale, const uint8_t *w4,
                           const float *scales, const float *bias, float lo, float hi, float *out) {
  const size_t ks = k / 2, nb = k / bs;
  const int8_t *x = row;
  int32_t zp;
  memcpy(&zp, x + k, sizeof zp);
  const int8x16_t zpv = vdupq_n_s8((int8_t)zp);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = acc0;
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    int32x4_t a[WICK_Q4_GROUP];
    for (size_t t = 0; t < WICK_Q4_GROUP; t++) a[t] = vdupq_n_s32(0);
    for (const size_t end = c + bs; c < end; c += 32) {
      const int8x16_t xe = vld1q_s8(x + c), xo = vld1q_s8(x + c + 16);
      const uint8_t *w = w4 + c / 2;
      const uint8_t *ahead = w4 + GEMV_PREFETCH * WICK_Q4_GROUP * ks + c * 4;
      __builtin_prefetch(ahead);
      __builtin_prefetch(ahead + 64);
#pragma GCC unroll 8
      for (size_t t = 0; t < WICK_Q4_GROUP; t++) {
        const int8x16_t bytes = vld1q_s8((const int8_t *)w + t * ks);
        const int8x16_t even = vshrq_n_s8(vshlq_n_s8(bytes, 4), 4), odd = vshrq_n_s8(bytes, 4);
        a[t] = wick_neon_dot16(wick_neon_dot16(a[t], even, xe), odd, xo);
        a[t] = wick_neon_dot16(a[t], vnegq_s8(vaddq_s8(even, odd)), zpv);
      }
    }
    const int32x4_t s0 = vpaddq_s32(vpaddq_s32(a[0], a[1]), vpaddq_s32(a[2], a[3]));
    const int32x4_t s1 = vpaddq_s32(vpaddq_s32(a[4], a[5]), vpaddq_s32(a[6], a[7]));
    acc0 = add_scaled(acc0, s0, scales + b * WICK_Q4_GROUP);
    acc1 = add_scaled(acc1, s1, scales + b * WICK_Q4_GROUP + 4);
  }
  finish_outputs(acc0, acc1, row_scale, bias, lo, hi, out);
}

/* ---------------------------------------------------------------- the GEMM form (prefill)
 *
 * A group's unpacked weights: per 32 values (a prepared row's chunk: even elements at
 * positions 0-15, odd ones at 16-31) eight groups g of four positions 4g .. 4g + 3, each two
 * 16-byte vectors (outputs 0-3, then 4-7) whose int32 lane o holds output o's four signed
 * nibbles at those positions: SDOT by element against the row's 16 x_q of one half, lane
 * g % 4 selecting the four x_q, adds them to output o's int32 lane. After the 8 k bytes, per
 * block the eight outputs' sums of w (int32), for the zero point's term:
 *     sum (x_q - zp) * w = sum x_q * w - zp * sum w.
 */
size_t Q4_NAME(wick_q4_unpacked_bytes)(size_t k, size_t bs) {
  return WICK_Q4_GROUP * k + WICK_Q4_GROUP * sizeof(int32_t) * (k / bs);
}

/* 4 x 4 transpose of int32 words: out[q] lane r = in[r] lane q. */
Q4_INLINE void transpose4(const int8x16_t in[4], int8x16_t out[4]) {
  const int32x4_t r0 = vreinterpretq_s32_s8(in[0]), r1 = vreinterpretq_s32_s8(in[1]);
  const int32x4_t r2 = vreinterpretq_s32_s8(in[2]), r3 = vreinterpretq_s32_s8(in[3]);
  const int64x2_t t0 = vreinterpretq_s64_s32(vtrn1q_s32(r0, r1));
  const int64x2_t t1 = vreinterpretq_s64_s32(vtrn2q_s32(r0, r1));
  const int64x2_t t2 = vreinterpretq_s64_s32(vtrn1q_s32(r2, r3));
  const int64x2_t t3 = vreinterpretq_s64_s32(vtrn2q_s32(r2, r3));
  out[0] = vreinterpretq_s8_s64(vtrn1q_s64(t0, t2));
  out[1] = vreinterpretq_s8_s64(vtrn1q_s64(t1, t3));
  out[2] = vreinterpretq_s8_s64(vtrn2q_s64(t0, t2));
  out[3] = vreinterpretq_s8_s64(vtrn2q_s64(t1, t3));
}

void Q4_NAME(wick_q4_unpack)(size_t k, size_t bs, const uint8_t *w4, void *unpacked) {
  const size_t ks = k / 2;
  int8_t *u = unpacked;
  int32_t *usum = (int32_t *)(void *)(u + WICK_Q4_GROUP * k);
  int32x4_t block_sum[2] = {vdupq_n_s32(0), vdupq_n_s32(0)};
  for (size_t c = 0; c < k; c += 32) {
    const uint8_t *w = w4 + c / 2;
    if (c % 128 == 0) /* the next group's rows, a cache line of each (the op unpacks
                       * consecutive groups; PRFM past the weights does not fault) */
      for (size_t j = 0; j < WICK_Q4_GROUP; j++) __builtin_prefetch(w + (WICK_Q4_GROUP + j) * ks);
    int8x16_t nib[2][WICK_Q4_GROUP]; /* [even, odd][output] */
    for (size_t t = 0; t < WICK_Q4_GROUP; t++) {
      const int8x16_t bytes = vld1q_s8((const int8_t *)w + t * ks);
      nib[0][t] = vshrq_n_s8(vshlq_n_s8(bytes, 4), 4);
      nib[1][t] = vshrq_n_s8(bytes, 4);
    }
    int8_t *uc = u + c / 32 * 256;
    for (size_t h = 0; h < 2; h++) {
      int16x8_t s = vdupq_n_s16(0); /* per output, pairs of its nibbles: |.| <= 128 */
      for (size_t part = 0; part < 2; part++) {
        int8x16_t g[4];
        transpose4(&nib[part][4 * h], g);
        for (size_t q = 0; q < 4; q++) {
          vst1q_s8(uc + (4 * part + q) * 32 + 16 * h, g[q]);
          s = vpadalq_s8(s, g[q]);
        }
      }
      block_sum[h] = vpadalq_s16(block_sum[h], s);
    }
    if ((c + 32) % bs == 0) {
      int32_t *at = usum + ((c + 32) / bs - 1) * WICK_Q4_GROUP;
      vst1q_s32(at, block_sum[0]);
      vst1q_s32(at + 4, block_sum[1]);
      block_sum[0] = block_sum[1] = vdupq_n_s32(0);
    }
  }
}

#ifdef __ARM_FEATURE_DOTPROD
/* Rows i < MR (at most WICK_Q4_GEMM_ROWS) of one group: per row two int32 accumulators
 * (outputs 0-3, 4-7) started at -zp * sum w for the block, then per half chunk the row's 16
 * x_q and, per group of four positions, two weight vectors against them by element. With
 * eight rows: 16 accumulators, 8 x_q vectors, 2 weights. The float accumulators are touched
 * once per block and live in memory. */
Q4_INLINE void gemm_rows(size_t MR, size_t k, size_t bs, const int8_t *x0, size_t row_stride,
                         const float *row_scales, const int8_t *u, const float *scales,
                         const float *bias, float lo, float hi, float *out, size_t out_stride) {
  const size_t nb = k / bs;
  const int32_t *usum = (const int32_t *)(const void *)(u + WICK_Q4_GROUP * k);
  const int8_t *x[WICK_Q4_GEMM_ROWS];
  int32x4_t neg_zp[WICK_Q4_GEMM_ROWS];
  float acc[WICK_Q4_GEMM_ROWS][WICK_Q4_GROUP];
  for (size_t r = 0; r < MR; r++) {
    int32_t zp;
    x[r] = x0 + r * row_stride;
    memcpy(&zp, x[r] + k, sizeof zp);
    neg_zp[r] = vdupq_n_s32(-zp);
    vst1q_f32(acc[r], vdupq_n_f32(0.0f));
    vst1q_f32(acc[r] + 4, vdupq_n_f32(0.0f));
  }
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    const int32x4_t us0 = vld1q_s32(usum + b * WICK_Q4_GROUP);
    const int32x4_t us1 = vld1q_s32(usum + b * WICK_Q4_GROUP + 4);
    int32x4_t sum[WICK_Q4_GEMM_ROWS][2];
    for (size_t r = 0; r < MR; r++) {
      sum[r][0] = vmulq_s32(us0, neg_zp[r]);
      sum[r][1] = vmulq_s32(us1, neg_zp[r]);
    }
    for (const size_t end = c + bs; c < end; c += 32) {
      const int8_t *uc = u + c / 32 * 256;
      for (size_t half = 0; half < 2; half++) {
        int8x16_t xv[WICK_Q4_GEMM_ROWS];
#pragma GCC unroll 8
        for (size_t r = 0; r < MR; r++) xv[r] = vld1q_s8(x[r] + c + 16 * half);
        const int8_t *ug = uc + half * 128;
#define Q4_GEMM_GROUP(L)                                                               \
  do {                                                                                 \
    const int8x16_t w0_ = vld1q_s8(ug + 32 * (L)), w1_ = vld1q_s8(ug + 32 * (L) + 16); \
    _Pragma("GCC unroll 8") for (size_t r = 0; r < MR; r++) {                          \
      sum[r][0] = vdotq_laneq_s32(sum[r][0], w0_, xv[r], L);                           \
      sum[r][1] = vdotq_laneq_s32(sum[r][1], w1_, xv[r], L);                           \
    }                                                                                  \
    /* (keeps the accumulators in registers: GCC otherwise spilled most of eight rows' \
     * to the stack every chunk) */                                                    \
    for (size_t r = 0; r < MR; r++) __asm__("" : "+w"(sum[r][0]), "+w"(sum[r][1]));    \
  } while (0)
        Q4_GEMM_GROUP(0);
        Q4_GEMM_GROUP(1);
        Q4_GEMM_GROUP(2);
        Q4_GEMM_GROUP(3);
#undef Q4_GEMM_GROUP
      }
    }
    const float *scale = scales + b * WICK_Q4_GROUP;
    for (size_t r = 0; r < MR; r++) {
      vst1q_f32(acc[r], add_scaled(vld1q_f32(acc[r]), sum[r][0], scale));
      vst1q_f32(acc[r] + 4, add_scaled(vld1q_f32(acc[r] + 4), sum[r][1], scale + 4));
    }
  }
  for (size_t r = 0; r < MR; r++)
    finish_outputs(vld1q_f32(acc[r]), vld1q_f32(acc[r] + 4), row_scales[r], bias, lo, hi,
                   out + r * out_stride);
}

/* GCC's scheduling before register allocation hoisted every weight load of a chunk ahead of
 * the dot steps and spilled eight rows' accumulators (24 stack accesses per 32 values);
 * without it, 5. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-schedule-insns")))
#endif
void Q4_NAME(wick_q4_gemm)(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                           const float *row_scales, const void *unpacked, const float *scales,
                           const float *bias, float lo, float hi, float *out, size_t out_stride) {
  const int8_t *x = rows;
  const int8_t *u = unpacked;
#define Q4_NEON_ROWS(MR)                                                                     \
  gemm_rows(MR, k, bs, x, row_stride, row_scales, u, scales, bias, lo, hi, out, out_stride); \
  break
  switch (m) {
    case 1: Q4_NEON_ROWS(1);
    case 2: Q4_NEON_ROWS(2);
    case 3: Q4_NEON_ROWS(3);
    case 4: Q4_NEON_ROWS(4);
    case 5: Q4_NEON_ROWS(5);
    case 6: Q4_NEON_ROWS(6);
    case 7: Q4_NEON_ROWS(7);
    default: Q4_NEON_ROWS(8);
  }
#undef Q4_NEON_ROWS
}
#else /* plain NEON */
/* Rows i < MR (1 or 2) of one group without SDOT: per group of four positions the row's four
 * x_q broadcast (DUP by element), then widening multiply-accumulates (SMLAL, SMLAL2) of the
 * two weight vectors' halves into int16 lanes (output o, position j of the four), each lane
 * gaining one product per group: eight per 32 values, |.| <= 8 * 1024, exact; per 32 values
 * SADALP widens the pairs into int32 (output o's two halves), and at the end of the block one
 * ADDP per four outputs leaves output o in lane o. Per row: 8 int16 and 8 int32 accumulators;
 * two rows share each weight load. Then the float steps as in the dot-product build. */
Q4_INLINE void gemm_rows(size_t MR, size_t k, size_t bs, const int8_t *x0, size_t row_stride,
                         const float *row_scales, const int8_t *u, const float *scales,
                         const float *bias, float lo, float hi, float *out, size_t out_stride) {
  const size_t nb = k / bs;
  const int32_t *usum = (const int32_t *)(const void *)(u + WICK_Q4_GROUP * k);
  const int8_t *x[2];
  int32x4_t neg_zp[2];
  float32x4_t acc[2][2];
  for (size_t r = 0; r < MR; r++) {
    int32_t zp;
    x[r] = x0 + r * row_stride;
    memcpy(&zp, x[r] + k, sizeof zp);
    neg_zp[r] = vdupq_n_s32(-zp);
    acc[r][0] = acc[r][1] = vdupq_n_f32(0.0f);
  }
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    int32x4_t wide[2][2][2]; /* [row][outputs 0-3, 4-7][low, high half of the weights] */
    for (size_t r = 0; r < MR; r++)
      for (size_t h = 0; h < 2; h++) wide[r][h][0] = wide[r][h][1] = vdupq_n_s32(0);
    for (const size_t end = c + bs; c < end; c += 32) {
      const int8_t *uc = u + c / 32 * 256;
      int16x8_t narrow[2][2][2];
      for (size_t r = 0; r < MR; r++)
        for (size_t h = 0; h < 2; h++) narrow[r][h][0] = narrow[r][h][1] = vdupq_n_s16(0);
      for (size_t half = 0; half < 2; half++) {
        int32x4_t xv[2];
        for (size_t r = 0; r < MR; r++)
          xv[r] = vreinterpretq_s32_s8(vld1q_s8(x[r] + c + 16 * half));
        const int8_t *ug = uc + half * 128;
#define Q4_GEMM_GROUP(L)                                                               \
  do {                                                                                 \
    const int8x16_t w0_ = vld1q_s8(ug + 32 * (L)), w1_ = vld1q_s8(ug + 32 * (L) + 16); \
    for (size_t r = 0; r < MR; r++) {                                                  \
      const int8x16_t xd_ = vreinterpretq_s8_s32(vdupq_laneq_s32(xv[r], L));           \
      narrow[r][0][0] = vmlal_s8(narrow[r][0][0], vget_low_s8(w0_), vget_low_s8(xd_)); \
      narrow[r][0][1] = vmlal_high_s8(narrow[r][0][1], w0_, xd_);                      \
      narrow[r][1][0] = vmlal_s8(narrow[r][1][0], vget_low_s8(w1_), vget_low_s8(xd_)); \
      narrow[r][1][1] = vmlal_high_s8(narrow[r][1][1], w1_, xd_);                      \
    }                                                                                  \
  } while (0)
        Q4_GEMM_GROUP(0);
        Q4_GEMM_GROUP(1);
        Q4_GEMM_GROUP(2);
        Q4_GEMM_GROUP(3);
#undef Q4_GEMM_GROUP
      }
      for (size_t r = 0; r < MR; r++)
        for (size_t h = 0; h < 2; h++) {
          wide[r][h][0] = vpadalq_s16(wide[r][h][0], narrow[r][h][0]);
          wide[r][h][1] = vpadalq_s16(wide[r][h][1], narrow[r][h][1]);
        }
    }
    const float *scale = scales + b * WICK_Q4_GROUP;
    for (size_t r = 0; r < MR; r++)
      for (size_t h = 0; h < 2; h++) {
        const int32x4_t us = vld1q_s32(usum + b * WICK_Q4_GROUP + 4 * h);
        const int32x4_t sum =
            vaddq_s32(vpaddq_s32(wide[r][h][0], wide[r][h][1]), vmulq_s32(us, neg_zp[r]));
        acc[r][h] = add_scaled(acc[r][h], sum, scale + 4 * h);
      }
  }
  for (size_t r = 0; r < MR; r++)
    finish_outputs(acc[r][0], acc[r][1], row_scales[r], bias, lo, hi, out + r * out_stride);
}

void Q4_NAME(wick_q4_gemm)(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                           const float *row_scales, const void *unpacked, const float *scales,
                           const float *bias, float lo, float hi, float *out, size_t out_stride) {
  const int8_t *x = rows;
  const int8_t *u = unpacked;
  size_t r = 0;
  for (; r + 2 <= m; r += 2)
    gemm_rows(2, k, bs, x + r * row_stride, row_stride, row_scales + r, u, scales, bias, lo, hi,
              out + r * out_stride, out_stride);
  if (r < m)
    gemm_rows(1, k, bs, x + r * row_stride, row_stride, row_scales + r, u, scales, bias, lo, hi,
              out + r * out_stride, out_stride);
}
#endif /* __ARM_FEATURE_DOTPROD */
