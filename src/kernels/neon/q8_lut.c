/*
 * neon/q8_lut.c — 8-bit table lookups (int8/uint8 LOGISTIC, TANH, GELU,
 * the tabulated HARD_SWISH / LEAKY_RELU, 8-bit requantization:
 * out[i] = lut[(uint8)in[i]]) for AArch64 Advanced SIMD, 16 bytes per
 * lookup: the table as four 64-byte quarters in four registers each, the
 * first quarter looked up by TBL (indices past 63 give 0), the other three
 * by TBX on the index minus 64, 128, 192 (out-of-range indices, the bytes of
 * the other quarters, leave their lanes alone). Exact, like any lookup.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/q8.h"

static inline __attribute__((always_inline)) uint8x16_t lookup16(uint8x16_t x,
                                                                 const uint8x16x4_t t[4]) {
  const uint8x16_t quarter = vdupq_n_u8(64);
  uint8x16_t r = vqtbl4q_u8(t[0], x);
  x = vsubq_u8(x, quarter);
  r = vqtbx4q_u8(r, t[1], x);
  x = vsubq_u8(x, quarter);
  r = vqtbx4q_u8(r, t[2], x);
  x = vsubq_u8(x, quarter);
  return vqtbx4q_u8(r, t[3], x);
}

void wick_q8_lut8__neon(size_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out) {
  uint8x16x4_t t[4];
  for (int q = 0; q < 4; q++) t[q] = vld1q_u8_x4(lut + 64 * q);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) { /* two independent chains */
    const uint8x16_t x0 = vld1q_u8(in + i), x1 = vld1q_u8(in + i + 16);
    vst1q_u8(out + i, lookup16(x0, t));
    vst1q_u8(out + i + 16, lookup16(x1, t));
  }
  for (; i < n; i += 16) {
    uint8_t b[16] = {0}, r[16];
    const size_t k = n - i < 16 ? n - i : 16;
    memcpy(b, in + i, k);
    vst1q_u8(r, lookup16(vld1q_u8(b), t));
    memcpy(out + i, r, k);
  }
}
