/*
 * neon/q8_dots.h — int8 dot products for the hybrid (dynamic-range) ops, q8.h's `dots`:
 * c[i, j] = sum_k a[i, k] * b[j, k] as int32 (wrapping), a and b row-major int8. Written
 * once and compiled twice: by neondot/q8_dots.c with the ARMv8.2 dot-product extension
 * and by neon/q8_dots.c for plain Advanced SIMD (the 16-byte step of neon/dot.h; int32
 * lanes wrap as the reference's sums do, in any order). The includer defines Q8_NAME(name),
 * which appends its ISA suffix.
 *
 * Four rows of a share each 16-byte load of b; the lanes are summed across (ADDV) and the
 * k tail (k % 16 values) is scalar.
 */
#include <arm_neon.h>

#include "kernels/neon/dot.h"
#include "kernels/q8.h"

#define DOTS_INLINE static inline __attribute__((always_inline))
#define dot16 wick_neon_dot16

/* The wrapping sum of the four lanes. */
DOTS_INLINE uint32_t lanes_sum(int32x4_t v) { return vaddvq_u32(vreinterpretq_u32_s32(v)); }

void Q8_NAME(wick_q8_dots)(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                           int32_t *c, size_t ldc) {
  const size_t k16 = k / 16 * 16;
  for (size_t j = 0; j < n; j++) {
    const int8_t *bj = b + j * k;
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
      const int8_t *a0 = a + i * k;
      int32x4_t s0 = vdupq_n_s32(0), s1 = s0, s2 = s0, s3 = s0;
      for (size_t p = 0; p < k16; p += 16) {
        const int8x16_t w = vld1q_s8(bj + p);
        s0 = dot16(s0, vld1q_s8(a0 + p), w);
        s1 = dot16(s1, vld1q_s8(a0 + k + p), w);
        s2 = dot16(s2, vld1q_s8(a0 + 2 * k + p), w);
        s3 = dot16(s3, vld1q_s8(a0 + 3 * k + p), w);
      }
      uint32_t t[4] = {lanes_sum(s0), lanes_sum(s1), lanes_sum(s2), lanes_sum(s3)};
      for (size_t p = k16; p < k; p++)
        for (size_t r = 0; r < 4; r++) t[r] += (uint32_t)((int32_t)a0[r * k + p] * (int32_t)bj[p]);
      for (size_t r = 0; r < 4; r++) c[(i + r) * ldc + j] = (int32_t)t[r];
    }
    for (; i < m; i++) {
      const int8_t *ai = a + i * k;
      int32x4_t s = vdupq_n_s32(0);
      for (size_t p = 0; p < k16; p += 16) s = dot16(s, vld1q_s8(ai + p), vld1q_s8(bj + p));
      uint32_t t = lanes_sum(s);
      for (size_t p = k16; p < k; p++) t += (uint32_t)((int32_t)ai[p] * (int32_t)bj[p]);
      c[i * ldc + j] = (int32_t)t;
    }
  }
}
