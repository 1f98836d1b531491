/*
 * avx512vnni/q8_gemm.c — int8 GEMM and indirect-GEMM microkernels for
 * AVX-512 VNNI (VPDPBUSD): 7x32c4 (the main tile) and 1x32c4 (single rows),
 * each also in a "u8" form whose A rows already hold x + 128 (and a 4-row u8
 * form for row tails and short M: 7 rows would compute up to 3 wasted ones) (the caller
 * flipped the sign bits once per operator: the XOR below is one vector
 * instruction per row per 4 k, a third of the VPDPBUSD count, paid again for
 * every 32 output channels).
 * Compiled with -mavx512f/vl/bw/dq/vnni; called only when q8_select.c saw
 * those features.
 *
 * Per NR = 32 panel (layout in q8.h) the 7 x 32 int32 tile lives in 14 zmm
 * accumulators started from the panel's corrected bias. Per group of 4 k
 * the kernel loads the two 64-byte weight vectors (and prefetches the two
 * cache lines WEIGHT_PREFETCH_BYTES ahead), and, for each row,
 * broadcasts the row's 4 bytes, flips their sign bits (x + 128 as u8) and
 * issues one VPDPBUSD per weight vector. A last group shorter than 4 reads
 * only the bytes that exist (zero weights pad it), except in the u8
 * indirect kernels, whose rows are padded (q8.h) and read 4 bytes. Then the output stage of
 * q8_requant.h, and masked stores past nc. Rows past mr repeat the last
 * valid row (same input, same output pointer), as in the fp32 kernels.
 */
#include "kernels/avx512vnni/q8_requant.h"

#define MAX_MR 7
#define TILE_MR 7 /* rows per indirection tile (the table's mr), whatever the kernel's MR */
#define NV 2
#define NR (16 * NV)
/* Bytes ahead of the current weight group that the K loop prefetches into L1
 * (8 groups: a 3x3x512 conv's 147 KB panel exceeds L1 and is streamed from
 * L2 / L3 by every row tile; the hardware prefetchers alone left ResNet-18's
 * 7x7x512 convs at ~360 GOP/s) */
#define WEIGHT_PREFETCH_BYTES 1024

Q8_INLINE uint32_t load4(const int8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

Q8_INLINE uint32_t load_tail(const int8_t *p, size_t n) {
  /* n in 1..3: byte loads (a variable-size memcpy would be a call) */
  const uint8_t *b = (const uint8_t *)p;
  uint32_t v = b[0];
  if (n > 1) v |= (uint32_t)b[1] << 8;
  if (n > 2) v |= (uint32_t)b[2] << 16;
  return v;
}

/* acc[i][v] += (a_i[0 .. kc) + 128) . w over one tap; w advances past it.
 * FLIP: a holds int8 x, flipped here to x + 128; else a already holds
 * x + 128 as u8 (wick_q8_flip_sign, done once per operator). HALF: only the
 * panel's first 16 columns are wanted (nc <= 16: an operator with 16 output
 * channels, or the last panel of 48 or 112): acc[i][1] is left alone, half the
 * VPDPBUSDs (the store never reads it). */
Q8_INLINE void accumulate(size_t MR, bool FLIP, bool PADDED, bool HALF, const int8_t *const *ap,
                          size_t kc, const int8_t **wp, __m512i acc[][NV]) {
  const __m512i flip = _mm512_set1_epi32(FLIP ? (int32_t)0x80808080u : 0);
  const int8_t *w = *wp;
  size_t k = 0;
#pragma GCC unroll 2
  for (; k + 4 <= kc; k += 4) {
    const __m512i w0 = _mm512_loadu_si512(w);
    const __m512i w1 = HALF ? w0 : _mm512_loadu_si512(w + 64);
    /* may point past the panels: prefetches never fault */
    _mm_prefetch((const char *)w + WEIGHT_PREFETCH_BYTES, _MM_HINT_T0);
    _mm_prefetch((const char *)w + WEIGHT_PREFETCH_BYTES + 64, _MM_HINT_T0);
    w += 4 * NR;
#pragma GCC unroll 7
    for (size_t i = 0; i < MR; i++) {
      __m512i a = _mm512_set1_epi32((int32_t)load4(ap[i] + k));
      if (FLIP) a = _mm512_xor_si512(a, flip);
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], a, w0);
      if (!HALF) acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], a, w1);
    }
  }
  if (k < kc) {
    const __m512i w0 = _mm512_loadu_si512(w);
    const __m512i w1 = HALF ? w0 : _mm512_loadu_si512(w + 64);
    w += 4 * NR;
    for (size_t i = 0; i < MR; i++) {
      /* PADDED rows have 3 readable bytes past kc: read 4, zero weights
       * cancel the extra ones (a 3-channel image's conv reads only tails) */
      __m512i a =
          _mm512_set1_epi32((int32_t)(PADDED ? load4(ap[i] + k) : load_tail(ap[i] + k, kc - k)));
      if (FLIP) a = _mm512_xor_si512(a, flip);
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], a, w0);
      if (!HALF) acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], a, w1);
    }
  }
  *wp = w;
}

Q8_INLINE void init_tile(size_t MR, const int8_t *w, __m512i acc[][NV]) {
  const int32_t *h = (const int32_t *)(const void *)w;
  for (size_t v = 0; v < NV; v++) {
    const __m512i b = _mm512_loadu_si512(h + 16 * v);
    for (size_t i = 0; i < MR; i++) acc[i][v] = b;
  }
}

Q8_INLINE void store_tile(size_t MR, __m512i acc[][NV], const int8_t *w, int8_t *const *cp,
                          size_t nc, const wick_q8_output *o, const double *fc_scale,
                          const int64_t *rq64) {
  const int32_t *h = (const int32_t *)(const void *)w;
  __m128i res[MAX_MR][NV];
  size_t nv = 0;
  for (size_t v = 0; v < NV && nc > 16 * v; v++, nv++) {
    if (fc_scale) {
      for (size_t i = 0; i < MR; i++)
        res[i][v] = q8_finish(q8_requant_fc(acc[i][v], fc_scale + 16 * v), o);
    } else if (rq64 != NULL) {
      /* the fused form, its constants prepared per operator */
      const q8_rq64 q = q8_rq64_load(h + 16 * v, NR, rq64 + WICK_Q8_RQ64_WORDS * v, o);
      size_t i = 0;
      for (; i + 4 <= MR; i += 4) {
        const __m512i b =
            q8_narrow64_x4(q8_requant64(acc[i][v], &q), q8_requant64(acc[i + 1][v], &q),
                           q8_requant64(acc[i + 2][v], &q), q8_requant64(acc[i + 3][v], &q), &q);
        res[i][v] = _mm512_castsi512_si128(b);
        res[i + 1][v] = _mm512_extracti32x4_epi32(b, 1);
        res[i + 2][v] = _mm512_extracti32x4_epi32(b, 2);
        res[i + 3][v] = _mm512_extracti32x4_epi32(b, 3);
      }
      for (; i < MR; i++) res[i][v] = q8_narrow64(q8_requant64(acc[i][v], &q), &q);
    } else {
      const q8_rq q = q8_rq_load(h + 16 * v, NR, o);
      for (size_t i = 0; i < MR; i++) res[i][v] = q8_requant_rq(acc[i][v], &q);
    }
  }
  /* all results first, then the stores (which may alias anything) */
  if (nc >= NR) {
    for (size_t i = MR; i-- > 0;)
      for (size_t v = 0; v < NV; v++)
        _mm_storeu_si128((__m128i *)(void *)(cp[i] + 16 * v), res[i][v]);
  } else {
    for (size_t i = MR; i-- > 0;)
      for (size_t v = 0; v < nv; v++) q8_store16(cp[i] + 16 * v, res[i][v], nc - 16 * v);
  }
}

/* The raw output stage (wick_q8_output.raw): the int32 sums themselves. */
Q8_INLINE void store_raw(size_t MR, __m512i acc[][NV], int8_t *const *cp, size_t nc) {
  for (size_t i = MR; i-- > 0;)
    for (size_t v = 0; v < NV && nc > 16 * v; v++) {
      int32_t *p = (int32_t *)(void *)cp[i] + 16 * v;
      const size_t left = nc - 16 * v;
      if (left >= 16)
        _mm512_storeu_si512(p, acc[i][v]);
      else
        _mm512_mask_storeu_epi32(p, (__mmask16)((1u << left) - 1), acc[i][v]);
    }
}

Q8_INLINE void gemm_body(size_t MR, bool FLIP, size_t mr, size_t nc, size_t kc, const int8_t *a,
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
  const int64_t *rq64 = o->rq64;
  for (;;) {
    __m512i acc[MAX_MR][NV];
    const int8_t *header = w;
    init_tile(MR, w, acc);
    w += 4 * WICK_Q8_HEADER * NR;
    if (nc <= 16)
      accumulate(MR, FLIP, false, true, ap, kc, &w, acc);
    else
      accumulate(MR, FLIP, false, false, ap, kc, &w, acc);
    if (o->raw)
      store_raw(MR, acc, cp, nc);
    else
      store_tile(MR, acc, header, cp, nc, o, fc_scale, rq64);
    if (nc <= NR) break;
    nc -= NR;
    if (fc_scale) fc_scale += NR;
    if (rq64) rq64 += NR / 16 * WICK_Q8_RQ64_WORDS;
    for (size_t i = 0; i < MR; i++) cp[i] += o->raw ? 4 * NR : NR;
  }
}

Q8_INLINE void igemm_body(size_t MR, bool FLIP, size_t mr, size_t nc, size_t kc, size_t ks,
                          const int8_t *const *a, const void *wv, int8_t *c, size_t c_stride,
                          const wick_q8_output *o) {
  int8_t *cp[MAX_MR];
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  const int8_t *w = wv;
  const double *fc_scale = o->fc_scale;
  const int64_t *rq64 = o->rq64;
  for (;;) {
    __m512i acc[MAX_MR][NV];
    const int8_t *header = w;
    init_tile(MR, w, acc);
    w += 4 * WICK_Q8_HEADER * NR;
    const int8_t *const *ind = a;
    const bool half = nc <= 16;
    for (size_t p = 0; p < ks; p++) {
      const int8_t *ap[MAX_MR];
      ap[0] = ind[0];
      for (size_t i = 1; i < MR; i++) ap[i] = i < mr ? ind[i] : ap[i - 1];
      ind += TILE_MR;
      if (half)
        accumulate(MR, FLIP, !FLIP, true, ap, kc, &w, acc);
      else
        accumulate(MR, FLIP, !FLIP, false, ap, kc, &w, acc);
    }
    store_tile(MR, acc, header, cp, nc, o, fc_scale, rq64);
    if (nc <= NR) break;
    nc -= NR;
    if (fc_scale) fc_scale += NR;
    if (rq64) rq64 += NR / 16 * WICK_Q8_RQ64_WORDS;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

void wick_q8_gemm_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                             size_t a_stride, const void *w, int8_t *c,
                                             size_t c_stride, const wick_q8_output *o) {
  gemm_body(7, true, mr, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_gemm_ukernel_1x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                             size_t a_stride, const void *w, int8_t *c,
                                             size_t c_stride, const wick_q8_output *o) {
  (void)mr;
  gemm_body(1, true, 1, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_gemm_u8_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                                size_t a_stride, const void *w, int8_t *c,
                                                size_t c_stride, const wick_q8_output *o) {
  gemm_body(7, false, mr, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_gemm_u8_ukernel_1x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                                size_t a_stride, const void *w, int8_t *c,
                                                size_t c_stride, const wick_q8_output *o) {
  (void)mr;
  gemm_body(1, false, 1, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_igemm_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, size_t ks,
                                              const int8_t *const *a, const void *w, int8_t *c,
                                              size_t c_stride, const wick_q8_output *o) {
  igemm_body(7, true, mr, nc, kc, ks, a, w, c, c_stride, o);
}

void wick_q8_gemm_u8_ukernel_4x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                                size_t a_stride, const void *w, int8_t *c,
                                                size_t c_stride, const wick_q8_output *o) {
  gemm_body(4, false, mr, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_igemm_u8_ukernel_4x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, size_t ks,
                                                 const int8_t *const *a, const void *w, int8_t *c,
                                                 size_t c_stride, const wick_q8_output *o) {
  igemm_body(4, false, mr, nc, kc, ks, a, w, c, c_stride, o);
}

void wick_q8_igemm_u8_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc, size_t ks,
                                                 const int8_t *const *a, const void *w, int8_t *c,
                                                 size_t c_stride, const wick_q8_output *o) {
  igemm_body(7, false, mr, nc, kc, ks, a, w, c, c_stride, o);
}
