/*
 * avx2/gemm.c — fp32 GEMM and indirect-GEMM microkernels, 6x16 and 1x16, for
 * AVX2 + FMA (compiled with -mavx2 -mfma; called only when select.c saw both).
 *
 * Same scheme as avx512/gemm.c: the 6 x 16 output tile lives in 12 ymm
 * accumulators started from the panel's bias; per k step two weight vectors
 * are loaded and each A row's element is broadcast into two FMAs (12 + 2 + 1
 * of the 16 ymm registers). Rows past mr repeat the last valid row; columns
 * past nc are computed on zero padding and not stored, except that a last
 * panel with at most 8 live columns computes only its first 8 (same bits). The clamp keeps NaN
 * (x is the second operand of max/min).
 */
#include <immintrin.h>

#include "kernels/avx2/simd.h"
#include "kernels/kernels.h"

#define NR 16
#define ALWAYS_INLINE static inline __attribute__((always_inline))

#define ACCUMULATE(MR, ap, kc, w, acc) ACCUMULATE_STEP(MR, ap, kc, w, NR, acc)

/* The same with the k rows of w `step` floats apart (the packed panels: NR). */
#define ACCUMULATE_STEP(MR, ap, kc, w, step, acc)                    \
  do {                                                               \
    _Pragma("GCC unroll 4") for (size_t k_ = 0; k_ < (kc); k_++) {   \
      const __m256 w0_ = _mm256_loadu_ps(w);                         \
      const __m256 w1_ = _mm256_loadu_ps((w) + 8);                   \
      (w) += (step);                                                 \
      _Pragma("GCC unroll 8") for (size_t i_ = 0; i_ < (MR); i_++) { \
        const __m256 a_ = _mm256_broadcast_ss((ap)[i_] + k_);        \
        (acc)[i_][0] = _mm256_fmadd_ps(a_, w0_, (acc)[i_][0]);       \
        (acc)[i_][1] = _mm256_fmadd_ps(a_, w1_, (acc)[i_][1]);       \
      }                                                              \
    }                                                                \
  } while (0)

/* A last panel with at most 8 live columns (N = 24, 40, 72, 1000, ...):
 * only its first weight vector, MR FMAs per k step instead of 2 MR. With
 * one accumulator per row that would be MR chains, too few to cover FMA
 * latency, so even k steps go to acc[i][0] (started from the bias) and odd
 * ones to acc[i][1] (from 0), added at the end: a fixed order for any thread
 * count. The half tiles are separate functions (half_gemm_6, half_igemm_6)
 * so the full-panel loop keeps its registers. */
#define ACCUMULATE_HALF(MR, ap, kc, w, acc)                                                        \
  do {                                                                                             \
    size_t k_ = 0;                                                                                 \
    _Pragma("GCC unroll 2") for (; k_ + 2 <= (kc); k_ += 2) {                                      \
      const __m256 w0_ = _mm256_loadu_ps(w), w1_ = _mm256_loadu_ps((w) + NR);                      \
      (w) += 2 * NR;                                                                               \
      _Pragma("GCC unroll 8") for (size_t i_ = 0; i_ < (MR); i_++) {                               \
        (acc)[i_][0] = _mm256_fmadd_ps(_mm256_broadcast_ss((ap)[i_] + k_), w0_, (acc)[i_][0]);     \
        (acc)[i_][1] = _mm256_fmadd_ps(_mm256_broadcast_ss((ap)[i_] + k_ + 1), w1_, (acc)[i_][1]); \
      }                                                                                            \
    }                                                                                              \
    if (k_ < (kc)) {                                                                               \
      const __m256 w0_ = _mm256_loadu_ps(w);                                                       \
      (w) += NR;                                                                                   \
      _Pragma("GCC unroll 8") for (size_t i_ = 0; i_ < (MR); i_++)(acc)[i_][0] =                   \
          _mm256_fmadd_ps(_mm256_broadcast_ss((ap)[i_] + k_), w0_, (acc)[i_][0]);                  \
    }                                                                                              \
  } while (0)

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
  } else { /* plain partial stores (avx2/simd.h: masked stores are slow on AMD) */
    const size_t n0 = nc >= 8 ? 8 : nc, n1 = nc > 8 ? nc - 8 : 0;
    for (size_t i = MR; i-- > 0;) {
      wick_avx2_store_first(cp[i], clamp(acc[i][0], vlo, vhi), n0);
      wick_avx2_store_first(cp[i] + 8, clamp(acc[i][1], vlo, vhi), n1);
    }
  }
}

/* Stores the first nc <= 8 columns of a half-width tile. */
ALWAYS_INLINE void store_half(size_t MR, __m256 acc[][2], float *const *cp, size_t nc, __m256 vlo,
                              __m256 vhi) {
#pragma GCC unroll 8
  for (size_t i = 0; i < MR; i++) acc[i][0] = _mm256_add_ps(acc[i][0], acc[i][1]);
  if (nc == 8) {
#pragma GCC unroll 8
    for (size_t i = 0; i < MR; i++)
      _mm256_storeu_ps(cp[MR - 1 - i], clamp(acc[MR - 1 - i][0], vlo, vhi));
  } else {
#pragma GCC unroll 8
    for (size_t i = 0; i < MR; i++)
      wick_avx2_store_first(cp[MR - 1 - i], clamp(acc[MR - 1 - i][0], vlo, vhi), nc);
  }
}

/* The last panel (nc <= 8 live columns) of a 6-row GEMM tile. The bounds come as floats, not
 * vectors: a function with 256-bit arguments returns without VZEROUPPER, and its caller's tail
 * call to it then left the upper halves dirty for the SSE code after the kernel (measured: the
 * stall made a 16384 x 16 x 4 GEMM several times slower on an AMD EPYC). */
__attribute__((noinline)) static void half_gemm_6(size_t mr, size_t nc, size_t kc, const float *a,
                                                  size_t a_stride, const float *w, float *c,
                                                  size_t c_stride, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const float *ap[6];
  float *cp[6];
  ap[0] = a;
  cp[0] = c;
  for (size_t i = 1; i < 6; i++) {
    ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  __m256 acc[6][2];
  const __m256 b0 = _mm256_loadu_ps(w);
  w += NR;
  for (size_t i = 0; i < 6; i++) {
    acc[i][0] = b0;
    acc[i][1] = _mm256_setzero_ps();
  }
  ACCUMULATE_HALF(6, ap, kc, w, acc);
  store_half(6, acc, cp, nc, vlo, vhi);
}

/* The same for the indirect GEMM. */
__attribute__((noinline)) static void half_igemm_6(size_t mr, size_t nc, size_t kc, size_t ks,
                                                   const float *const *ind, const float *w,
                                                   float *c, size_t c_stride, float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  float *cp[6];
  cp[0] = c;
  for (size_t i = 1; i < 6; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  __m256 acc[6][2];
  const __m256 b0 = _mm256_loadu_ps(w);
  w += NR;
  for (size_t i = 0; i < 6; i++) {
    acc[i][0] = b0;
    acc[i][1] = _mm256_setzero_ps();
  }
  for (size_t p = 0; p < ks; p++) {
    const float *ap[6];
    ap[0] = ind[0];
    for (size_t i = 1; i < 6; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
    ind += 6;
    ACCUMULATE_HALF(6, ap, kc, w, acc);
  }
  store_half(6, acc, cp, nc, vlo, vhi);
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
    if (MR == 6 && nc <= NR / 2) {
      half_gemm_6(mr, nc, kc, a, a_stride, w, cp[0], c_stride, lo, hi);
      break;
    }
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
    if (MR == 6 && nc <= NR / 2) {
      half_igemm_6(mr, nc, kc, ks, a, w, cp[0], c_stride, lo, hi);
      break;
    }
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

/* One row of 16 sums over kc rows of w (w_stride apart): four round-robin pairs of
 * accumulators, s0 starting from (s00, s01), added pairwise at the end; the order depends on kc
 * alone. */
ALWAYS_INLINE void one_row_sums(const float *a, size_t kc, const float *w, size_t w_stride,
                                __m256 s00, __m256 s01, __m256 out[2]) {
  __m256 s[4][2];
  s[0][0] = s00;
  s[0][1] = s01;
  for (size_t i = 1; i < 4; i++) s[i][0] = s[i][1] = _mm256_setzero_ps();
  size_t k = 0;
  for (; k + 4 <= kc; k += 4) {
#pragma GCC unroll 4
    for (size_t i = 0; i < 4; i++) {
      const __m256 a_ = _mm256_broadcast_ss(a + k + i);
      s[i][0] = _mm256_fmadd_ps(a_, _mm256_loadu_ps(w), s[i][0]);
      s[i][1] = _mm256_fmadd_ps(a_, _mm256_loadu_ps(w + 8), s[i][1]);
      w += w_stride;
    }
  }
  for (size_t i = 0; k < kc; k++, i++) {
    const __m256 a_ = _mm256_broadcast_ss(a + k);
    s[i][0] = _mm256_fmadd_ps(a_, _mm256_loadu_ps(w), s[i][0]);
    s[i][1] = _mm256_fmadd_ps(a_, _mm256_loadu_ps(w + 8), s[i][1]);
    w += w_stride;
  }
  for (size_t j = 0; j < 2; j++)
    out[j] = _mm256_add_ps(_mm256_add_ps(s[0][j], s[1][j]), _mm256_add_ps(s[2][j], s[3][j]));
}

/* One row (FULLY_CONNECTED at batch 1, squeeze-excite 1x1 convolutions):
 * with a single row the 6x16 scheme has two accumulator chains, each FMA
 * waiting for the previous one (4 cycles of latency per k step). Here k
 * steps go round-robin to four pairs of accumulators (k % 4), eight
 * independent chains, summed as (s0 + s1) + (s2 + s3) at the end, so the
 * loop runs at the speed of its loads (~0.8x the time at K = 576-1280, N =
 * 1000; in a model the classifier's weights mostly come from L3 or memory).
 * s0 starts from the bias. The order depends on k alone: the same for any
 * thread count. */
void wick_f32_gemm_ukernel_1x16__avx2(size_t mr, size_t nc, size_t kc, const float *a,
                                      size_t a_stride, const float *w, float *c, size_t c_stride,
                                      float lo, float hi) {
  (void)mr, (void)a_stride, (void)c_stride;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (;;) {
    __m256 acc[1][2];
    one_row_sums(a, kc, w + NR, NR, _mm256_loadu_ps(w), _mm256_loadu_ps(w + 8), acc[0]);
    w += NR * (kc + 1);
    float *cp[1] = {c};
    store_tile(1, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    c += NR;
  }
}

/* The 6 x 16 tile on an unpacked b (kernels.h, wick_f32_gemm_inplace_fn): gemm_body's
 * accumulation started from +0 (a packed zero bias) with the k rows b_stride apart; whole
 * panels only, so never the half-panel path (which gemm_body takes for nc <= 8 alone). */
void wick_f32_gemm_inplace_6x16__avx2(size_t mr, size_t nc, size_t kc, const float *a,
                                      size_t a_stride, const float *b, size_t b_stride, float *c,
                                      size_t c_stride, float lo, float hi) {
  const float *ap[6];
  float *cp[6];
  ap[0] = a;
  cp[0] = c;
  for (size_t i = 1; i < 6; i++) {
    ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t j = 0; j + NR <= nc; j += NR) {
    __m256 acc[6][2];
    for (size_t i = 0; i < 6; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    const float *w = b + j;
    ACCUMULATE_STEP(6, ap, kc, w, b_stride, acc);
    store_tile(6, acc, cp, NR, vlo, vhi);
    for (size_t i = 0; i < 6; i++) cp[i] += NR;
  }
}

/* The one-row kernel on an unpacked b: wick_f32_gemm_ukernel_1x16__avx2's four round-robin
 * pairs of accumulators, s0 from +0. */
void wick_f32_gemm_inplace_1x16__avx2(size_t mr, size_t nc, size_t kc, const float *a,
                                      size_t a_stride, const float *b, size_t b_stride, float *c,
                                      size_t c_stride, float lo, float hi) {
  (void)mr, (void)a_stride, (void)c_stride;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t j = 0; j + NR <= nc; j += NR) {
    __m256 acc[1][2];
    one_row_sums(a, kc, b + j, b_stride, _mm256_setzero_ps(), _mm256_setzero_ps(), acc[0]);
    float *cp[1] = {c + j};
    store_tile(1, acc, cp, NR, vlo, vhi);
  }
}

void wick_f32_igemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc, size_t ks,
                                       const float *const *a, const float *w, float *c,
                                       size_t c_stride, float lo, float hi) {
  igemm_body(6, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);
}
