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
