/*
 * neon/q8_gemm.h — the AArch64 int8 GEMM and indirect-GEMM microkernels
 * (4x16c4 and 1x16c4), written once and compiled twice: by
 * neondot/q8_gemm.c with the ARMv8.2 dot-product extension (SDOT) and by
 * neon/q8_gemm.c for plain Advanced SIMD, which spells each SDOT as two
 * widening multiplies and two pairwise adds (exact: products of int8 fit
 * int16, pairs of them int32). The includer defines Q8_NAME(name), which
 * appends its ISA suffix.
 *
 * Layout (q8.h, "NEON"): the input is plain int8 x (wick_q8_prepare_input
 * copies it; padding taps read a row of zp), the packed bias is corrected by
 * zp * sum w, the weights are int8 in groups of 4 per channel — SDOT's lane
 * layout, so one 16-byte weight vector holds 4 channels x 4 k.
 *
 * Per NR = 16 panel the MR x 16 int32 tile lives in MR x 4 accumulators
 * (4x16: 16 registers, plus 4 for A and 4 for weights) started from the
 * panel's corrected bias. The k loop loads 16 bytes of each row and feeds
 * them four k at a time to lane-indexed SDOTs; the last kc % 16 go 4 at a
 * time from broadcast words, a group shorter than 4 from byte loads (zero
 * weights pad it). Then neon/q8_requant.h's output stage and a 16-byte store
 * per row (a staging copy past nc). Rows past mr repeat the last valid row
 * (same input, same output pointer), as in the other kernels.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/neon/q8_requant.h"
#include "kernels/q8.h"

#define MAX_MR 4
#define TILE_MR 4 /* rows per indirection tile (the table's mr) */
#define NV 4
#define NR (4 * NV)

#ifdef __ARM_FEATURE_DOTPROD
/* acc += per int32 lane, the dot product of its 4 bytes of w and of a. */
Q8_INLINE int32x4_t dot4(int32x4_t acc, int8x16_t w, int8x16_t a) { return vdotq_s32(acc, w, a); }
/* The same with a's 4-byte lane L broadcast (L a constant). */
#define DOT4_LANE(acc, w, a, L) vdotq_laneq_s32(acc, w, a, L)
#else
Q8_INLINE int32x4_t dot4(int32x4_t acc, int8x16_t w, int8x16_t a) {
  const int16x8_t p0 = vmull_s8(vget_low_s8(w), vget_low_s8(a));
  const int16x8_t p1 = vmull_high_s8(w, a);
  return vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(p0), vpaddlq_s16(p1)));
}
#define DOT4_LANE(acc, w, a, L) \
  dot4(acc, w, vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(a), L)))
#endif

Q8_INLINE int8x16_t broadcast4(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

Q8_INLINE int8x16_t broadcast_tail(const int8_t *p, size_t n) {
  /* n in 1..3: byte loads (a variable-size memcpy would be a call) */
  const uint8_t *b = (const uint8_t *)p;
  uint32_t v = b[0];
  if (n > 1) v |= (uint32_t)b[1] << 8;
  if (n > 2) v |= (uint32_t)b[2] << 16;
  return vreinterpretq_s8_u32(vdupq_n_u32(v));
}

/* One group of 4 k: acc[i][v] += a[i] . (the 4 weight vectors at w). */
#define Q8_GROUP(MR, acc, w, a, L)                                  \
  do {                                                              \
    const int8x16_t w0_ = vld1q_s8(w), w1_ = vld1q_s8(w + 16);      \
    const int8x16_t w2_ = vld1q_s8(w + 32), w3_ = vld1q_s8(w + 48); \
    w += 4 * NR;                                                    \
    for (size_t i_ = 0; i_ < MR; i_++) {                            \
      acc[i_][0] = DOT4_LANE(acc[i_][0], w0_, a[i_], L);            \
      acc[i_][1] = DOT4_LANE(acc[i_][1], w1_, a[i_], L);            \
      acc[i_][2] = DOT4_LANE(acc[i_][2], w2_, a[i_], L);            \
      acc[i_][3] = DOT4_LANE(acc[i_][3], w3_, a[i_], L);            \
    }                                                               \
  } while (0)

/* acc[i][v] += a_i[0 .. kc) . w over one tap; w advances past it. */
Q8_INLINE void accumulate(size_t MR, const int8_t *const *ap, size_t kc, const int8_t **wp,
                          int32x4_t acc[][NV]) {
  const int8_t *w = *wp;
  int8x16_t a[MAX_MR];
  size_t k = 0;
  for (; k + 16 <= kc; k += 16) {
    for (size_t i = 0; i < MR; i++) a[i] = vld1q_s8(ap[i] + k);
    Q8_GROUP(MR, acc, w, a, 0);
    Q8_GROUP(MR, acc, w, a, 1);
    Q8_GROUP(MR, acc, w, a, 2);
    Q8_GROUP(MR, acc, w, a, 3);
  }
  for (; k < kc; k += 4) {
    for (size_t i = 0; i < MR; i++)
      a[i] = kc - k >= 4 ? broadcast4(ap[i] + k) : broadcast_tail(ap[i] + k, kc - k);
    Q8_GROUP(MR, acc, w, a, 0);
  }
  *wp = w;
}

Q8_INLINE void init_tile(size_t MR, const int8_t *w, int32x4_t acc[][NV]) {
  const int32_t *h = (const int32_t *)(const void *)w;
  for (size_t v = 0; v < NV; v++) {
    const int32x4_t b = vld1q_s32(h + 4 * v);
    for (size_t i = 0; i < MR; i++) acc[i][v] = b;
  }
}

Q8_INLINE void store_tile(size_t MR, int32x4_t acc[][NV], const int8_t *w, int8_t *const *cp,
                          size_t nc, const wick_q8_output *o, const double *fc_scale) {
  const int32_t *h = (const int32_t *)(const void *)w;
  for (size_t v = 0; v < NV; v++) {
    if (fc_scale) {
      for (size_t i = 0; i < MR; i++) acc[i][v] = q8_requant_fc4(acc[i][v], fc_scale + 4 * v, o);
    } else {
      const q8_rq4 q = q8_rq4_load(h + 4 * v, NR);
      for (size_t i = 0; i < MR; i++) acc[i][v] = q8_requant4(acc[i][v], &q, o);
    }
  }
  /* all results first, then the stores (which may alias anything) */
  int8x16_t res[MAX_MR];
  for (size_t i = 0; i < MR; i++) res[i] = q8_narrow16(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
  for (size_t i = MR; i-- > 0;) q8_store_n(cp[i], res[i], nc);
}

/* The raw output stage (wick_q8_output.raw): the int32 sums themselves. */
Q8_INLINE void store_raw(size_t MR, int32x4_t acc[][NV], int8_t *const *cp, size_t nc) {
  for (size_t i = MR; i-- > 0;) {
    int32_t *p = (int32_t *)(void *)cp[i];
    if (nc >= NR) {
      for (size_t v = 0; v < NV; v++) vst1q_s32(p + 4 * v, acc[i][v]);
    } else {
      int32_t tmp[NR];
      for (size_t v = 0; v < NV; v++) vst1q_s32(tmp + 4 * v, acc[i][v]);
      memcpy(p, tmp, nc * sizeof(int32_t));
    }
  }
}

Q8_INLINE void gemm_body(size_t MR, size_t mr, size_t nc, size_t kc, const int8_t *a,
                         size_t a_stride, const void *wv, int8_t *c, size_t c_stride,
                         const wick_q8_output *o) {
  const int8_t *ap[MAX_MR];
  int8_t *cp[MAX_MR];
  ap[0] = a;
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) {
    ap[i] = i < mr ? ap[i - 1] + a_stride : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  const int8_t *w = wv;
  const double *fc_scale = o->fc_scale;
  for (;;) {
    int32x4_t acc[MAX_MR][NV];
    const int8_t *header = w;
    init_tile(MR, w, acc);
    w += 4 * WICK_Q8_HEADER * NR;
    accumulate(MR, ap, kc, &w, acc);
    if (o->raw)
      store_raw(MR, acc, cp, nc);
    else
      store_tile(MR, acc, header, cp, nc, o, fc_scale);
    if (nc <= NR) break;
    nc -= NR;
    if (fc_scale) fc_scale += NR;
    for (size_t i = 0; i < MR; i++) cp[i] += o->raw ? 4 * NR : NR;
  }
}

Q8_INLINE void igemm_body(size_t MR, size_t mr, size_t nc, size_t kc, size_t ks,
                          const int8_t *const *a, const void *wv, int8_t *c, size_t c_stride,
                          const wick_q8_output *o) {
  int8_t *cp[MAX_MR];
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  const int8_t *w = wv;
  const double *fc_scale = o->fc_scale;
  for (;;) {
    int32x4_t acc[MAX_MR][NV];
    const int8_t *header = w;
    init_tile(MR, w, acc);
    w += 4 * WICK_Q8_HEADER * NR;
    const int8_t *const *ind = a;
    for (size_t p = 0; p < ks; p++) {
      const int8_t *ap[MAX_MR];
      ap[0] = ind[0];
      for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
      ind += TILE_MR;
      accumulate(MR, ap, kc, &w, acc);
    }
    store_tile(MR, acc, header, cp, nc, o, fc_scale);
    if (nc <= NR) break;
    nc -= NR;
    if (fc_scale) fc_scale += NR;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

void Q8_NAME(wick_q8_gemm_ukernel_4x16c4)(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                          size_t a_stride, const void *w, int8_t *c,
                                          size_t c_stride, const wick_q8_output *o) {
  gemm_body(4, mr, nc, kc, a, a_stride, w, c, c_stride, o);
}

void Q8_NAME(wick_q8_gemm_ukernel_1x16c4)(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                          size_t a_stride, const void *w, int8_t *c,
                                          size_t c_stride, const wick_q8_output *o) {
  (void)mr;
  gemm_body(1, 1, nc, kc, a, a_stride, w, c, c_stride, o);
}

void Q8_NAME(wick_q8_igemm_ukernel_4x16c4)(size_t mr, size_t nc, size_t kc, size_t ks,
                                           const int8_t *const *a, const void *w, int8_t *c,
                                           size_t c_stride, const wick_q8_output *o) {
  igemm_body(4, mr, nc, kc, ks, a, w, c, c_stride, o);
}
