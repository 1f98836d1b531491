/*
 * avx512vnni/q4_blocks.c — the GEMM form (prefill) of blockwise int4 FULLY_CONNECTED
 * (q4.h) with VPDPBUSD on 256-bit vectors (AVX-512 VNNI + VL): the AVX2 kernel's layouts
 * (avx2/q4_blocks.c: its prepared rows and its unpacked groups, outputs in the vector
 * lanes), its row quantization, unpacking and one-row form; only the inner product differs.
 *
 * Per 32 values and row, eight VPDPBUSDs of the unpacked u = w + 8 (unsigned bytes, four per
 * lane) against four x_q broadcast to every lane add each lane's four products straight into
 * int32: no int16 pairs and no widening step, the same exact sums. Each row's accumulator
 * starts the block at the terms that do not depend on x_q — -zp * (the lane's sum of u) and
 * the row's correction -8 * sum (x_q - zp) — so that the inner loop only accumulates:
 *     sum (x_q - zp) * w = sum u * x_q - zp * sum u - 8 * sum (x_q - zp).
 * With the 32 vector registers of AVX-512, eight rows share each unpacked chunk (the AVX2
 * kernel: four). Then the float steps of q4.h on the eight lanes, in the same order: the same
 * bits as the AVX2 and reference kernels.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q4.h"

static inline __m256i broadcast4(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

__attribute__((always_inline)) static inline void gemm_rows(size_t MR, size_t k, size_t bs,
                                                            const int8_t *x0, size_t row_stride,
                                                            const float *row_scales,
                                                            const uint8_t *u, const float *scales,
                                                            const float *bias, float lo, float hi,
                                                            float *out, size_t out_stride) {
  const size_t nb = k / bs;
  const int32_t *usum = (const int32_t *)(const void *)(u + WICK_Q4_GROUP * k);
  const int8_t *x[WICK_Q4_GEMM_ROWS];
  const int32_t *corr[WICK_Q4_GEMM_ROWS];
  __m256i neg_zp[WICK_Q4_GEMM_ROWS];
  __m256 acc[WICK_Q4_GEMM_ROWS];
  for (size_t r = 0; r < MR; r++) {
    x[r] = x0 + r * row_stride;
    corr[r] = (const int32_t *)(const void *)(x[r] + k);
    neg_zp[r] = _mm256_set1_epi32(-corr[r][nb]);
    acc[r] = _mm256_setzero_ps();
  }
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    const __m256i us = _mm256_loadu_si256((const __m256i *)(const void *)(usum + b * 8));
    __m256i sum[WICK_Q4_GEMM_ROWS];
    for (size_t r = 0; r < MR; r++)
      sum[r] = _mm256_add_epi32(_mm256_mullo_epi32(us, neg_zp[r]), _mm256_set1_epi32(corr[r][b]));
    for (const size_t end = c + bs; c < end; c += 32) {
      const uint8_t *uc = u + c / 32 * 256;
#pragma GCC unroll 4
      for (size_t g = 0; g < 4; g++) {
        const __m256i ue = _mm256_loadu_si256((const __m256i *)(const void *)(uc + 64 * g));
        const __m256i uo = _mm256_loadu_si256((const __m256i *)(const void *)(uc + 64 * g + 32));
#pragma GCC unroll 8
        for (size_t r = 0; r < MR; r++) {
          sum[r] = _mm256_dpbusd_epi32(sum[r], ue, broadcast4(x[r] + c + 4 * g));
          sum[r] = _mm256_dpbusd_epi32(sum[r], uo, broadcast4(x[r] + c + 16 + 4 * g));
        }
        /* (keeps the compiler from hoisting the next steps' loads, as in the AVX2 kernel) */
        for (size_t r = 0; r < MR; r++) __asm__("" : "+v"(sum[r]));
      }
    }
    const __m256 scale = _mm256_loadu_ps(scales + b * WICK_Q4_GROUP);
    for (size_t r = 0; r < MR; r++) {
      acc[r] = _mm256_add_ps(acc[r], _mm256_mul_ps(_mm256_cvtepi32_ps(sum[r]), scale));
    }
  }
  const __m256 vb = bias != NULL ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t r = 0; r < MR; r++) {
    /* y < lo ? lo : (y > hi ? hi : y): MAX/MIN return their second operand (y) on NaN and on
     * equal values */
    const __m256 y = _mm256_add_ps(_mm256_mul_ps(acc[r], _mm256_set1_ps(row_scales[r])), vb);
    _mm256_storeu_ps(out + r * out_stride, _mm256_min_ps(vhi, _mm256_max_ps(vlo, y)));
  }
}

void wick_q4_gemm__avx512vnni(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                              const float *row_scales, const void *unpacked, const float *scales,
                              const float *bias, float lo, float hi, float *out,
                              size_t out_stride) {
  const int8_t *x = rows;
#define Q4_VNNI_ROWS(MR)                                                               \
  gemm_rows(MR, k, bs, x, row_stride, row_scales, unpacked, scales, bias, lo, hi, out, \
            out_stride);                                                               \
  break
  switch (m) {
    case 1: Q4_VNNI_ROWS(1);
    case 2: Q4_VNNI_ROWS(2);
    case 3: Q4_VNNI_ROWS(3);
    case 4: Q4_VNNI_ROWS(4);
    case 5: Q4_VNNI_ROWS(5);
    case 6: Q4_VNNI_ROWS(6);
    case 7: Q4_VNNI_ROWS(7);
    default: Q4_VNNI_ROWS(8);
  }
#undef Q4_VNNI_ROWS
}
