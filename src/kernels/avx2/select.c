/*
 * avx2/select.c — SELECT / SELECT_V2 on bytes (kernels.h, wick_select8_fn):
 * 32 elements per step, the condition bytes compared with zero (VPCMPEQB)
 * and the result blended from x and y (VPBLENDVB; a scalar operand is one
 * broadcast byte); the tail in scalar code. Exact: every byte is a copy.
 * Compiled with -mavx2.
 */
#include <immintrin.h>

#include "kernels/kernels.h"

void wick_select8__avx2(size_t n, const bool *cond, const uint8_t *x, bool x_scalar,
                        const uint8_t *y, bool y_scalar, uint8_t *out) {
  const uint8_t *c = (const uint8_t *)cond;
  const __m256i zero = _mm256_setzero_si256();
  const __m256i xs = _mm256_set1_epi8((char)x[0]), ys = _mm256_set1_epi8((char)y[0]);
  size_t e = 0;
  for (; e + 32 <= n; e += 32) {
    const __m256i is_false =
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(c + e)), zero);
    const __m256i xv = x_scalar ? xs : _mm256_loadu_si256((const __m256i *)(const void *)(x + e));
    const __m256i yv = y_scalar ? ys : _mm256_loadu_si256((const __m256i *)(const void *)(y + e));
    _mm256_storeu_si256((__m256i *)(void *)(out + e), _mm256_blendv_epi8(xv, yv, is_false));
  }
  for (; e < n; e++) out[e] = c[e] ? x[x_scalar ? 0 : e] : y[y_scalar ? 0 : e];
}
