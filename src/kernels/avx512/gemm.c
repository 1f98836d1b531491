/*
 * avx512/gemm.c — fp32 GEMM and indirect-GEMM microkernels, 7x32 and 1x32,
 * for AVX-512F (compiled with -mavx512f -mavx512vl -mfma; called only when
 * select.c saw those features).
 *
 * One call computes an mr x nc block of C (mr <= MR, nc any size): for each
 * 32-wide panel of packed weights (layout in kernels.h) it keeps the MR x 32
 * output tile in 2*MR zmm accumulators, starts them from the panel's bias,
 * and per k step loads two weight vectors and broadcasts one element of each
 * A row into an FMA. The clamp (fused activation) runs on the accumulators
 * before the store; columns past nc are computed on zero padding and masked
 * off at the store.
 *
 * Rows past mr repeat the last valid row (same input, same output pointer),
 * so one code path serves every mr; they cost FMAs but store nothing new.
 *
 * Clamp and NaN: max(lo, x) then min(hi, x) with x as the SECOND operand,
 * which the instructions return when either operand is NaN, so NaN passes
 * through as in the reference kernels.
 */
#include <immintrin.h>

#include "kernels/kernels.h"

#define NR 32
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* The k loop of one tap: acc[i][0..1] += a_i[k] * w[k][0..31], k < kc. */
#define ACCUMULATE(MR, ap, kc, w, acc)                                   \
  do {                                                                   \
    _Pragma("GCC unroll 4") for (size_t k_ = 0; k_ < (kc); k_++) {                             \
      const __m512 w0_ = _mm512_loadu_ps(w);                             \
      const __m512 w1_ = _mm512_loadu_ps((w) + 16);                      \
      (w) += NR;                                                         \
      _Pragma("GCC unroll 8") for (size_t i_ = 0; i_ < (MR); i_++) {     \
        const __m512 a_ = _mm512_set1_ps((ap)[i_][k_]);                  \
        (acc)[i_][0] = _mm512_fmadd_ps(a_, w0_, (acc)[i_][0]);           \
        (acc)[i_][1] = _mm512_fmadd_ps(a_, w1_, (acc)[i_][1]);           \
      }                                                                  \
    }                                                                    \
  } while (0)

ALWAYS_INLINE void store_tile(size_t MR, __m512 acc[][2], float *const *cp, size_t nc, __m512 vlo,
                              __m512 vhi) {
  if (nc >= NR) {
    for (size_t i = MR; i-- > 0;) {
      _mm512_storeu_ps(cp[i], _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[i][0])));
      _mm512_storeu_ps(cp[i] + 16, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[i][1])));
    }
  } else {
    const __mmask16 m0 = nc >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nc) - 1u);
    const __mmask16 m1 = nc > 16 ? (__mmask16)((1u << (nc - 16)) - 1u) : (__mmask16)0;
    for (size_t i = MR; i-- > 0;) {
      _mm512_mask_storeu_ps(cp[i], m0, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[i][0])));
      _mm512_mask_storeu_ps(cp[i] + 16, m1, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[i][1])));
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
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (;;) {
    __m512 acc[8][2];
    const __m512 b0 = _mm512_loadu_ps(w), b1 = _mm512_loadu_ps(w + 16);
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
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (;;) {
    __m512 acc[8][2];
    const __m512 b0 = _mm512_loadu_ps(w), b1 = _mm512_loadu_ps(w + 16);
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

void wick_f32_gemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *w, float *c,
                                        size_t c_stride, float lo, float hi) {
  gemm_body(7, mr, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_gemm_ukernel_1x32__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *w, float *c,
                                        size_t c_stride, float lo, float hi) {
  (void)mr;
  gemm_body(1, 1, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_igemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc, size_t ks,
                                         const float *const *a, const float *w, float *c,
                                         size_t c_stride, float lo, float hi) {
  igemm_body(7, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);
}
