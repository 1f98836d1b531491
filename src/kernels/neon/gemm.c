/*
 * neon/gemm.c — fp32 GEMM and indirect-GEMM microkernels for AArch64 NEON
 * (Advanced SIMD is part of the AArch64 base ISA, so no extra compile flags):
 * 8x8 (the main tile) and 1x8 (single rows: FULLY_CONNECTED, tails).
 *
 * One call computes an mr x nc block of C (mr <= MR, nc any size): for each
 * 8-wide panel of packed weights (layout in kernels.h) the MR x 8 output tile
 * lives in MR * 2 q-register accumulators, starts from the panel's bias, and
 * the k loop runs four steps at a time: one 4-float load per A row, then for
 * each of the four k the two weight vectors and a by-lane FMA per row
 * (8x8: 16 accumulators + 8 A vectors + 2 weights = 26 of the 32 registers).
 * The last kc % 4 steps broadcast one A element per row.
 *
 * Rows past mr repeat the last valid row (same input, same output pointer),
 * so one code path serves every mr. Columns past nc are computed on the zero
 * padding of the panel and not stored.
 *
 * Clamp and NaN: vmaxq/vminq return NaN when either operand is NaN, so NaN
 * passes through as in the reference kernels.
 *
 * In place (wick_f32_gemm_inplace_fn: the fused attention reads the key/value cache where it
 * lies): the same chains on an unpacked b, k rows b_stride apart, each output one FMA chain
 * over k in k order from +0 (a packed zero bias), so the same bits as the 8x8 and 1x8 kernels
 * on packed panels. The tile takes only the call's rows (a decode step's few query rows per
 * key/value head compute no repeated rows) and, with fewer rows, several panels at once:
 * 1-2 rows x 32 columns, 3-4 x 16, 5-8 x 8 (at most 16 accumulators, 8 weight vectors).
 */
#include <arm_neon.h>

#include "kernels/kernels.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define NR 8
#define MAX_MR 8

ALWAYS_INLINE float32x4_t clamp(float32x4_t v, float32x4_t vlo, float32x4_t vhi) {
  return vminq_f32(vmaxq_f32(v, vlo), vhi);
}

/* Stores the first nc (< 8 allowed) columns of one accumulator row pair. */
ALWAYS_INLINE void store_row(float *c, size_t nc, float32x4_t lo4, float32x4_t hi4) {
  if (nc >= 8) {
    vst1q_f32(c, lo4);
    vst1q_f32(c + 4, hi4);
    return;
  }
  if (nc >= 4) {
    vst1q_f32(c, lo4);
    c += 4;
    nc -= 4;
    lo4 = hi4;
  }
  float32x2_t half = vget_low_f32(lo4);
  if (nc >= 2) {
    vst1_f32(c, half);
    c += 2;
    nc -= 2;
    half = vget_high_f32(lo4);
  }
  if (nc >= 1) vst1_lane_f32(c, half, 0);
}

/* acc[i] += a_i[0..kc) * w[0..kc) for the MR rows ap[]; advances w by kc panel rows. */
ALWAYS_INLINE const float *accumulate(size_t MR, const float *const *ap, size_t kc, const float *w,
                                      float32x4_t acc[][2]) {
  size_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    float32x4_t a[MAX_MR];
#pragma GCC unroll 8
    for (size_t i = 0; i < MR; i++) a[i] = vld1q_f32(ap[i] + k);
#define WICK_NEON_STEP(L)                                       \
  do {                                                          \
    const float32x4_t w0 = vld1q_f32(w), w1 = vld1q_f32(w + 4); \
    w += NR;                                                    \
    _Pragma("GCC unroll 8") for (size_t i = 0; i < MR; i++) {   \
      acc[i][0] = vfmaq_laneq_f32(acc[i][0], w0, a[i], L);      \
      acc[i][1] = vfmaq_laneq_f32(acc[i][1], w1, a[i], L);      \
    }                                                           \
  } while (0)
    WICK_NEON_STEP(0);
    WICK_NEON_STEP(1);
    WICK_NEON_STEP(2);
    WICK_NEON_STEP(3);
#undef WICK_NEON_STEP
  }
  for (; k < kc; k++) {
    const float32x4_t w0 = vld1q_f32(w), w1 = vld1q_f32(w + 4);
    w += NR;
#pragma GCC unroll 8
    for (size_t i = 0; i < MR; i++) {
      const float32x4_t a = vld1q_dup_f32(ap[i] + k);
      acc[i][0] = vfmaq_f32(acc[i][0], a, w0);
      acc[i][1] = vfmaq_f32(acc[i][1], a, w1);
    }
  }
  return w;
}

ALWAYS_INLINE void init_tile(size_t MR, float32x4_t acc[][2], const float *w) {
  const float32x4_t b0 = vld1q_f32(w), b1 = vld1q_f32(w + 4);
  for (size_t i = 0; i < MR; i++) {
    acc[i][0] = b0;
    acc[i][1] = b1;
  }
}

ALWAYS_INLINE void store_tile(size_t MR, float32x4_t acc[][2], float *const *cp, size_t nc,
                              float32x4_t vlo, float32x4_t vhi) {
  /* Highest row first: repeated rows share the last valid row's pointer. */
  for (size_t i = MR; i-- > 0;)
    store_row(cp[i], nc, clamp(acc[i][0], vlo, vhi), clamp(acc[i][1], vlo, vhi));
}

ALWAYS_INLINE void gemm_body(size_t MR, size_t mr, size_t nc, size_t kc, const float *a,
                             size_t a_stride, const float *w, float *c, size_t c_stride, float lo,
                             float hi) {
  const float *ap[MAX_MR];
  float *cp[MAX_MR];
  ap[0] = a;
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) {
    ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (;;) {
    float32x4_t acc[MAX_MR][2];
    init_tile(MR, acc, w);
    w = accumulate(MR, ap, kc, w + NR, acc);
    store_tile(MR, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

ALWAYS_INLINE void igemm_body(size_t MR, size_t mr, size_t nc, size_t kc, size_t ks,
                              const float *const *a, const float *w, float *c, size_t c_stride,
                              float lo, float hi) {
  float *cp[MAX_MR];
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (;;) {
    float32x4_t acc[MAX_MR][2];
    init_tile(MR, acc, w);
    w += NR;
    const float *const *ind = a;
    for (size_t p = 0; p < ks; p++) {
      const float *ap[MAX_MR];
      ap[0] = ind[0];
      for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
      ind += MR;
      w = accumulate(MR, ap, kc, w, acc);
    }
    store_tile(MR, acc, cp, nc, vlo, vhi);
    if (nc <= NR) break;
    nc -= NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

void wick_f32_gemm_ukernel_8x8__neon(size_t mr, size_t nc, size_t kc, const float *a,
                                     size_t a_stride, const float *w, float *c, size_t c_stride,
                                     float lo, float hi) {
  gemm_body(8, mr, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

void wick_f32_gemm_ukernel_1x8__neon(size_t mr, size_t nc, size_t kc, const float *a,
                                     size_t a_stride, const float *w, float *c, size_t c_stride,
                                     float lo, float hi) {
  (void)mr;
  gemm_body(1, 1, nc, kc, a, a_stride, w, c, c_stride, lo, hi);
}

/* Columns [j, j + 8 NP) of rows ap[0 .. MR) on an unpacked b (see the header). */
ALWAYS_INLINE void inplace_panels(size_t MR, size_t NP, size_t kc, const float *const *ap,
                                  const float *b, size_t b_stride, float *const *cp, size_t j,
                                  float32x4_t vlo, float32x4_t vhi) {
  float32x4_t acc[MAX_MR][8];
  for (size_t i = 0; i < MR; i++)
    for (size_t v = 0; v < 2 * NP; v++) acc[i][v] = vdupq_n_f32(0.0f);
  const float *w = b + j;
  size_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    float32x4_t a[MAX_MR];
#pragma GCC unroll 8
    for (size_t i = 0; i < MR; i++) a[i] = vld1q_f32(ap[i] + k);
#define WICK_NEON_INPLACE_STEP(L)                                                              \
  do {                                                                                         \
    float32x4_t wv_[8];                                                                        \
    _Pragma("GCC unroll 8") for (size_t v = 0; v < 2 * NP; v++) wv_[v] = vld1q_f32(w + 4 * v); \
    w += b_stride;                                                                             \
    _Pragma("GCC unroll 8") for (size_t i = 0; i < MR; i++)                                    \
        _Pragma("GCC unroll 8") for (size_t v = 0; v < 2 * NP; v++) acc[i][v] =                \
            vfmaq_laneq_f32(acc[i][v], wv_[v], a[i], L);                                       \
  } while (0)
    WICK_NEON_INPLACE_STEP(0);
    WICK_NEON_INPLACE_STEP(1);
    WICK_NEON_INPLACE_STEP(2);
    WICK_NEON_INPLACE_STEP(3);
#undef WICK_NEON_INPLACE_STEP
  }
  for (; k < kc; k++, w += b_stride) {
#pragma GCC unroll 8
    for (size_t i = 0; i < MR; i++) {
      const float32x4_t a = vld1q_dup_f32(ap[i] + k);
#pragma GCC unroll 8
      for (size_t v = 0; v < 2 * NP; v++) acc[i][v] = vfmaq_f32(acc[i][v], a, vld1q_f32(w + 4 * v));
    }
  }
  for (size_t i = MR; i-- > 0;)
    for (size_t v = 0; v < 2 * NP; v += 2)
      store_row(cp[i] + j + 4 * v, NR, clamp(acc[i][v], vlo, vhi), clamp(acc[i][v + 1], vlo, vhi));
}

/* The call's MR rows over nc columns (a multiple of 8): NP panels at a time, then one. */
ALWAYS_INLINE void inplace_body(size_t MR, size_t nc, size_t kc, const float *a, size_t a_stride,
                                const float *b, size_t b_stride, float *c, size_t c_stride,
                                float lo, float hi) {
  const size_t NP = MR <= 2 ? 4 : (MR <= 4 ? 2 : 1);
  const float *ap[MAX_MR];
  float *cp[MAX_MR];
  for (size_t i = 0; i < MR; i++) {
    ap[i] = a + i * a_stride;
    cp[i] = c + i * c_stride;
  }
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  size_t j = 0;
  for (; j + NP * NR <= nc; j += NP * NR)
    inplace_panels(MR, NP, kc, ap, b, b_stride, cp, j, vlo, vhi);
  for (; j + NR <= nc; j += NR) inplace_panels(MR, 1, kc, ap, b, b_stride, cp, j, vlo, vhi);
}

void wick_f32_gemm_inplace_8x8__neon(size_t mr, size_t nc, size_t kc, const float *a,
                                     size_t a_stride, const float *b, size_t b_stride, float *c,
                                     size_t c_stride, float lo, float hi) {
  switch (mr) {
    case 1: inplace_body(1, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 2: inplace_body(2, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 3: inplace_body(3, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 4: inplace_body(4, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 5: inplace_body(5, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 6: inplace_body(6, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    case 7: inplace_body(7, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
    default: inplace_body(8, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi); break;
  }
}

/* The one-row kernel on an unpacked b: wick_f32_gemm_ukernel_1x8__neon's chains. */
void wick_f32_gemm_inplace_1x8__neon(size_t mr, size_t nc, size_t kc, const float *a,
                                     size_t a_stride, const float *b, size_t b_stride, float *c,
                                     size_t c_stride, float lo, float hi) {
  (void)mr;
  inplace_body(1, nc, kc, a, a_stride, b, b_stride, c, c_stride, lo, hi);
}

void wick_f32_igemm_ukernel_8x8__neon(size_t mr, size_t nc, size_t kc, size_t ks,
                                      const float *const *a, const float *w, float *c,
                                      size_t c_stride, float lo, float hi) {
  igemm_body(8, mr, nc, kc, ks, a, w, c, c_stride, lo, hi);
}
