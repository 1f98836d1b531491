/*
 * avx512/gemm.c — fp32 GEMM and indirect-GEMM microkernels for AVX-512F
 * (compiled with -mavx512f -mavx512vl -mfma; called only when select.c saw
 * those features): 7x32 (the main tile), 1x32 (single rows), and 14x16 for
 * narrow outputs (N <= 16, where a 32-wide tile would compute half padding); and the
 * 7x32 / 1x32 tiles on an unpacked b (the fused attention reads its key/value cache with them).
 *
 * One call computes an mr x nc block of C (mr <= MR, nc any size): for each
 * NR-wide panel of packed weights (layout in kernels.h) it keeps the MR x NR
 * output tile in MR * NR/16 zmm accumulators, starts them from the panel's
 * bias, and per k step loads the NR/16 weight vectors and broadcasts one
 * element of each A row into an FMA with each (7x32: 14 accumulators + 2
 * weights + 1 broadcast; 14x16: 14 + 1 + 1). The k loop is unrolled by 4
 * (measured ~15% faster than not unrolled for K >= 64). The clamp (fused
 * activation) runs on the accumulators before the store; columns past nc
 * are computed on zero padding and masked off at the store.
 *
 * A last 32-wide panel with at most 16 columns left (N = 40, 48, 72, 144, 240) runs its
 * first 16 columns only. The 1x32 kernel walks 4 whole panels at once (8 chains: a single-row GEMV
 * reads each weight once, at the load rate, not the FMA latency), with no software
 * prefetch: on Zen 4 the hardware prefetchers stream the 4 panels alone, and prefetching
 * 4 KB ahead cut a 49152 x 576 GEMV from ~26 to ~21 GB/s (ROW_PREFETCH=1024 restores it). Neither
 * changes any output's chain of FMAs: the same bits.
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

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define MAX_MR 14

/* The k loop of one tap: acc[i][v] += a_i[k] * w[k][16v .. 16v+15], k < kc. */
#define ACCUMULATE(MR, NV, ap, kc, w, acc) ACCUMULATE_STEP(MR, NV, ap, kc, w, 16 * (NV), acc)

/* The same with the k rows of w `step` floats apart (the packed panels: NR). */
#define ACCUMULATE_STEP(MR, NV, ap, kc, w, step, acc)                               \
  do {                                                                              \
    _Pragma("GCC unroll 4") for (size_t k_ = 0; k_ < (kc); k_++) {                  \
      __m512 w_[2];                                                                 \
      for (size_t v_ = 0; v_ < (NV); v_++) w_[v_] = _mm512_loadu_ps((w) + 16 * v_); \
      (w) += (step);                                                                \
      _Pragma("GCC unroll 16") for (size_t i_ = 0; i_ < (MR); i_++) {               \
        const __m512 a_ = _mm512_set1_ps((ap)[i_][k_]);                             \
        for (size_t v_ = 0; v_ < (NV); v_++)                                        \
          (acc)[i_][v_] = _mm512_fmadd_ps(a_, w_[v_], (acc)[i_][v_]);               \
      }                                                                             \
    }                                                                               \
  } while (0)

ALWAYS_INLINE void init_tile(size_t MR, size_t NV, __m512 acc[][2], const float *w) {
  for (size_t v = 0; v < NV; v++) {
    const __m512 b = _mm512_loadu_ps(w + 16 * v);
    for (size_t i = 0; i < MR; i++) acc[i][v] = b;
  }
}

ALWAYS_INLINE void store_tile(size_t MR, size_t NV, __m512 acc[][2], float *const *cp, size_t nc,
                              __m512 vlo, __m512 vhi) {
  if (nc >= 16 * NV) {
    for (size_t i = MR; i-- > 0;)
      for (size_t v = 0; v < NV; v++)
        _mm512_storeu_ps(cp[i] + 16 * v, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[i][v])));
  } else {
    __mmask16 m[2];
    for (size_t v = 0; v < NV; v++) {
      const size_t left = nc > 16 * v ? nc - 16 * v : 0;
      m[v] = (__mmask16)(left >= 16 ? 0xffffu : (1u << left) - 1u);
    }
    for (size_t i = MR; i-- > 0;)
      for (size_t v = 0; v < NV; v++)
        _mm512_mask_storeu_ps(cp[i] + 16 * v, m[v],
                              _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[i][v])));
  }
}

ALWAYS_INLINE void gemm_body(size_t MR, size_t NV, size_t mr, size_t nc, size_t kc, const float *a,
                             size_t a_stride, const float *w, float *c, size_t c_stride, float lo,
                             float hi) {
  const size_t NR = 16 * NV;
  const float *ap[MAX_MR];
  float *cp[MAX_MR];
  ap[0] = a;
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) {
    ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (;;) {
    __m512 acc[MAX_MR][2];
    if (NV == 2 && nc <= 16) {
      /* a last panel at most half used (N = 40, 48, 72, 144, 240): its first 16 columns
       * only, k rows still NR apart; the same chains, without the FMAs of the padding */
      init_tile(MR, 1, acc, w);
      w += NR;
      ACCUMULATE_STEP(MR, 1, ap, kc, w, NR, acc);
      store_tile(MR, 1, acc, cp, nc, vlo, vhi);
      break;
    }
    init_tile(MR, NV, acc, w);
    w += NR;
    ACCUMULATE(MR, NV, ap, kc, w, acc);
    store_tile(MR, NV, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

/* IND: pointers per tap in the indirection (the MR of the tile it was built for: a row-tail
 * kernel reads the first MR of each tap's IND). */
ALWAYS_INLINE void igemm_body(size_t MR, size_t NV, size_t IND, size_t mr, size_t nc, size_t kc,
                              size_t ks, const float *const *a, const float *w, float *c,
                              size_t c_stride, float lo, float hi) {
  const size_t NR = 16 * NV;
  float *cp[MAX_MR];
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (;;) {
    __m512 acc[MAX_MR][2];
    const float *const *ind = a;
    if (NV == 2 && nc <= 16) { /* a last panel at most half used: as in gemm_body */
      init_tile(MR, 1, acc, w);
      w += NR;
      for (size_t p = 0; p < ks; p++) {
        const float *ap[MAX_MR];
        ap[0] = ind[0];
        for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
        ind += IND;
        ACCUMULATE_STEP(MR, 1, ap, kc, w, NR, acc);
      }
      store_tile(MR, 1, acc, cp, nc, vlo, vhi);
      break;
    }
    init_tile(MR, NV, acc, w);
    w += NR;
    for (size_t p = 0; p < ks; p++) {
      const float *ap[MAX_MR];
      ap[0] = ind[0];
      for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
      ind += IND;
      ACCUMULATE(MR, NV, ap, kc, w, acc);
    }
    store_tile(MR, NV, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

void wick_f32_gemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *w, float *c, size_t c_stride,
                                        float lo, float hi) {
  gemm_body(7, 2, mr, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

/* One row over ROW_PANELS whole 32-wide panels at once (a single-row GEMV: FULLY_CONNECTED,
 * 1x1 convolutions on a 1x1 map): 2 * ROW_PANELS independent FMA chains instead of gemm_body's
 * 2, so the loop runs at the weights' load rate instead of the FMA latency. Each output is still
 * one chain from its bias over k in k order: the bits of gemm_body(1, 2, ...). */
#define ROW_PANELS 4
#ifndef ROW_PREFETCH
#define ROW_PREFETCH 0
#endif
ALWAYS_INLINE void row_panels_body(size_t kc, const float *a, const float *w, float *c, __m512 vlo,
                                   __m512 vhi) {
  const size_t panel = (kc + 1) * 32;
  __m512 acc[ROW_PANELS][2];
  for (size_t p = 0; p < ROW_PANELS; p++) {
    acc[p][0] = _mm512_loadu_ps(w + p * panel);
    acc[p][1] = _mm512_loadu_ps(w + p * panel + 16);
  }
  w += 32;
  _Pragma("GCC unroll 2") for (size_t k = 0; k < kc; k++) {
    const __m512 a_ = _mm512_set1_ps(a[k]);
    for (size_t p = 0; p < ROW_PANELS; p++) {
#if ROW_PREFETCH > 0
      _mm_prefetch((const char *)(w + p * panel + ROW_PREFETCH), _MM_HINT_T0);
      _mm_prefetch((const char *)(w + p * panel + ROW_PREFETCH + 16), _MM_HINT_T0);
#endif
      acc[p][0] = _mm512_fmadd_ps(a_, _mm512_loadu_ps(w + p * panel), acc[p][0]);
      acc[p][1] = _mm512_fmadd_ps(a_, _mm512_loadu_ps(w + p * panel + 16), acc[p][1]);
    }
    w += 32;
  }
  for (size_t p = 0; p < ROW_PANELS; p++) {
    _mm512_storeu_ps(c + 32 * p, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[p][0])));
    _mm512_storeu_ps(c + 32 * p + 16, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[p][1])));
  }
}

void wick_f32_gemm_ukernel_1x32__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *w, float *c, size_t c_stride,
                                        float lo, float hi) {
  (void)mr;
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const size_t group = ROW_PANELS * 32;
  while (nc > group) { /* whole panels, and some left for gemm_body (it needs nc > 0) */
    row_panels_body(kc, a, w, c, vlo, vhi);
    w += ROW_PANELS * (kc + 1) * 32;
    c += group;
    nc -= group;
  }
  gemm_body(1, 2, 1, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

/* The MR x 32 tile on an unpacked b (kernels.h, wick_f32_gemm_inplace_fn): gemm_body's
 * accumulation started from +0 (a packed zero bias) with the k rows b_stride apart, whole
 * panels only. MR is the call's own row count: every output is one chain of FMAs over k in
 * k order whatever the tile's height (as in the row tails), so the 7x32 tile, its tails and
 * the 1x32 kernel give the same bits, and a decode step's few query rows per key/value head
 * (3 on SmolLM2) compute no repeated rows. */
ALWAYS_INLINE void inplace_body(size_t MR, size_t nc, size_t kc, const float *a, size_t a_stride,
                                const float *b, size_t b_stride, float *c, size_t c_stride,
                                float lo, float hi) {
  const float *ap[MAX_MR];
  float *cp[MAX_MR];
  for (size_t i = 0; i < MR; i++) {
    ap[i] = a + i * a_stride;
    cp[i] = c + i * c_stride;
  }
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (size_t j = 0; j + 32 <= nc; j += 32) {
    __m512 acc[MAX_MR][2];
    for (size_t i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    const float *w = b + j;
    ACCUMULATE_STEP(MR, 2, ap, kc, w, b_stride, acc);
    store_tile(MR, 2, acc, cp, 32, vlo, vhi);
    for (size_t i = 0; i < MR; i++) cp[i] += 32;
  }
}

void wick_f32_gemm_inplace_7x32__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *b, size_t b_stride, float *c,
                                        size_t c_stride, float lo, float hi) {
  switch (mr) {
    case 1: inplace_body(1, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 2: inplace_body(2, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 3: inplace_body(3, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 4: inplace_body(4, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 5: inplace_body(5, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 6: inplace_body(6, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    default: inplace_body(7, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
  }
}

/* The one-row kernel on an unpacked b: wick_f32_gemm_ukernel_1x32__avx512's two chains. */
void wick_f32_gemm_inplace_1x32__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *b, size_t b_stride, float *c,
                                        size_t c_stride, float lo, float hi) {
  (void)mr;
  inplace_body(1, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi);
}

void wick_f32_igemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc, size_t ks,
                                         const float *const *a, const float *w, float *c,
                                         size_t c_stride, float lo, float hi) {
  igemm_body(7, 2, 7, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);
}

void wick_f32_gemm_ukernel_14x16__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                         size_t a_stride, const float *w, float *c, size_t c_stride,
                                         float lo, float hi) {
  gemm_body(14, 1, mr, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_gemm_ukernel_1x16__avx512(size_t mr, size_t nc, size_t kc, const float *a,
                                        size_t a_stride, const float *w, float *c, size_t c_stride,
                                        float lo, float hi) {
  (void)mr;
  gemm_body(1, 1, 1, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_igemm_ukernel_14x16__avx512(size_t mr, size_t nc, size_t kc, size_t ks,
                                          const float *const *a, const float *w, float *c,
                                          size_t c_stride, float lo, float hi) {
  igemm_body(14, 1, 14, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);
}

/* Row tails (kernels.h, wick_f32_gemm_kernel.tail_gemm): the same bodies with fewer rows, so a
 * last row tile of m % MR rows skips the FMAs of the repeated rows (M = 16, a 4x4 map: tiles of
 * 7, 7 and 2 rows, the last at 2/7 of a full tile's FMAs instead of all of them); each row's
 * accumulation is the full tile's, bit for bit. On cores that run a 512-bit FMA per cycle
 * (Zen 4) 4 accumulators already cover the FMA latency; the 2-row tiles have 4 (x32) or 2 (x16). */
#define GEMM_TAIL(R, NV, NR, S)                                                                    \
  void wick_f32_gemm_ukernel_##R##x##NR##__avx512(size_t mr, size_t nc, size_t kc, const float *a, \
                                                  size_t a_stride, const float *w, float *c,       \
                                                  size_t c_stride, float lo, float hi) {           \
    gemm_body(R, NV, mr, nc, kc, a, a_stride, w, c, c_stride, lo, hi);                             \
  }                                                                                                \
  void wick_f32_igemm_ukernel_##R##x##NR##s##S##__avx512(size_t mr, size_t nc, size_t kc,          \
                                                         size_t ks, const float *const *a,         \
                                                         const float *w, float *c,                 \
                                                         size_t c_stride, float lo, float hi) {    \
    igemm_body(R, NV, S, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);                               \
  }
GEMM_TAIL(2, 2, 32, 7)
GEMM_TAIL(3, 2, 32, 7)
GEMM_TAIL(4, 2, 32, 7)
GEMM_TAIL(5, 2, 32, 7)
GEMM_TAIL(6, 2, 32, 7)
GEMM_TAIL(2, 1, 16, 14)
GEMM_TAIL(4, 1, 16, 14)
GEMM_TAIL(7, 1, 16, 14)
GEMM_TAIL(10, 1, 16, 14)
