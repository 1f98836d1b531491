/*
 * avx2/gemm.c — fp32 GEMM and indirect-GEMM microkernels, 6x16 and 1x16, for
 * AVX2 + FMA (compiled with -mavx2 -mfma; called only when select.c saw both).
 *
 * Same scheme as avx512/gemm.c: the 6 x 16 output tile lives in 12 ymm
 * accumulators started from the panel's bias; per k step two weight vectors
 * are loaded and each A row's element is broadcast into two FMAs (12 + 2 + 1
 * of the 16 ymm registers). Rows past mr repeat the last valid row; columns
 * past nc are computed on zero padding and not stored. The clamp keeps NaN
 * (x is the second operand of max/min).
 */
#include <immintrin.h>

#include "kernels/kernels.h"

#define NR 16
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#define ACCUMULATE(MR, ap, kc, w, acc)                                   \
  do {                                                                   \
    _Pragma("GCC unroll 4") for (size_t k_ = 0; k_ < (kc); k_++) {                             \
      const __m256 w0_ = _mm256_loadu_ps(w);                             \
      const __m256 w1_ = _mm256_loadu_ps((w) + 8);                       \
      (w) += NR;                                                         \
      _Pragma("GCC unroll 8") for (size_t i_ = 0; i_ < (MR); i_++) {     \
        const __m256 a_ = _mm256_broadcast_ss((ap)[i_] + k_);            \
        (acc)[i_][0] = _mm256_fmadd_ps(a_, w0_, (acc)[i_][0]);           \
        (acc)[i_][1] = _mm256_fmadd_ps(a_, w1_, (acc)[i_][1]);           \
      }                                                                  \
    }                                                                    \
  } while (0)

/* mask_table + 8 - n: the first n lanes set. */
static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

ALWAYS_INLINE __m256 clamp(__m256 x, __m256 vlo, __m256 vhi) {
  return _mm256_min_ps(vhi, _mm256_max_ps(vlo, x));
}

ALWAYS_INLINE void store_tile(size_t MR, __m256 acc[][2], float *const *cp, size_t nc, __m256 vlo,
                              __m256 vhi) {
  if (nc >= NR) {
    for (size_t i = MR; i-- > 0;) {
      _mm256_storeu_ps(cp[i], clamp(acc[i][0], vlo, vhi));
      _mm256_storeu_ps(cp[i] + 8, clamp(acc[i][1], vlo, vhi));
    }
  } else {
    const __m256i m0 = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (nc >= 8 ? 8 : nc)));
    const __m256i m1 = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (nc > 8 ? nc - 8 : 0)));
    for (size_t i = MR; i-- > 0;) {
      _mm256_maskstore_ps(cp[i], m0, clamp(acc[i][0], vlo, vhi));
      _mm256_maskstore_ps(cp[i] + 8, m1, clamp(acc[i][1], vlo, vhi));
    }
  }
}

ALWAYS_INLINE void gemm_body(size_t MR, size_t mr, size_t nc, size_t kc, const float *a,
                             size_t a_stride, const float *w, float *c, size_t c_stride, float lo,
                             float hi) {
  const float *ap[8];
  float *cp[8];
  ap[0] = a;
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) {
    ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (;;) {
    __m256 acc[8][2];
    const __m256 b0 = _mm256_loadu_ps(w), b1 = _mm256_loadu_ps(w + 8);
    w += NR;
    for (size_t i = 0; i < MR; i++) {
      acc[i][0] = b0;
      acc[i][1] = b1;
    }
    ACCUMULATE(MR, ap, kc, w, acc);
    store_tile(MR, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

ALWAYS_INLINE void igemm_body(size_t MR, size_t mr, size_t nc, size_t kc, size_t ks,
                              const float *const *a, const float *w, float *c, size_t c_stride,
                              float lo, float hi) {
  float *cp[8];
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (;;) {
    __m256 acc[8][2];
    const __m256 b0 = _mm256_loadu_ps(w), b1 = _mm256_loadu_ps(w + 8);
    w += NR;
    for (size_t i = 0; i < MR; i++) {
      acc[i][0] = b0;
      acc[i][1] = b1;
    }
    const float *const *ind = a;
    for (size_t p = 0; p < ks; p++) {
      const float *ap[8];
      ap[0] = ind[0];
      for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
      ind += MR;
      ACCUMULATE(MR, ap, kc, w, acc);
    }
    store_tile(MR, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

void wick_f32_gemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc, const float *a,
                                      size_t a_stride, const float *w, float *c, size_t c_stride,
                                      float lo, float hi) {
  gemm_body(6, mr, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_gemm_ukernel_1x16__avx2(size_t mr, size_t nc, size_t kc, const float *a,
                                      size_t a_stride, const float *w, float *c, size_t c_stride,
                                      float lo, float hi) {
  (void)mr;
  gemm_body(1, 1, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_igemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc, size_t ks,
                                       const float *const *a, const float *w, float *c,
                                       size_t c_stride, float lo, float hi) {
  igemm_body(6, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);
}
