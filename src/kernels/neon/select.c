/*
 * neon/select.c — SELECT / SELECT_V2 on bytes (kernels.h, wick_select8_fn):
 * 16 elements per step, the condition bytes compared with zero (CMEQ) and
 * the result picked bit by bit from y and x (BSL; a scalar operand is one
 * duplicated byte); the tail in scalar code. Exact: every byte is a copy.
 */
#include <arm_neon.h>

#include "kernels/kernels.h"

void wick_select8__neon(size_t n, const bool *cond, const uint8_t *x, bool x_scalar,
                        const uint8_t *y, bool y_scalar, uint8_t *out) {
  const uint8_t *c = (const uint8_t *)cond;
  const uint8x16_t xs = vdupq_n_u8(x[0]), ys = vdupq_n_u8(y[0]);
  size_t e = 0;
  for (; e + 16 <= n; e += 16) {
    const uint8x16_t is_false = vceqq_u8(vld1q_u8(c + e), vdupq_n_u8(0));
    const uint8x16_t xv = x_scalar ? xs : vld1q_u8(x + e);
    const uint8x16_t yv = y_scalar ? ys : vld1q_u8(y + e);
    vst1q_u8(out + e, vbslq_u8(is_false, yv, xv));
  }
  for (; e < n; e++) out[e] = c[e] ? x[x_scalar ? 0 : e] : y[y_scalar ? 0 : e];
}
