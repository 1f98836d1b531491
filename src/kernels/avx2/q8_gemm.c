/*
 * avx2/q8_gemm.c — int8 GEMM and indirect-GEMM microkernels for AVX2
 * (4x16c2, 1x16c2), for CPUs without AVX-512 VNNI. Compiled with -mavx2.
 *
 * VPMADDUBSW (u8 x s8 pairs into saturating int16) could overflow with
 * 255 * 127 * 2, so these kernels widen instead: the operator converts its
 * input once to int16 x - zp (wick_q8_prepare_input; padding taps read a
 * row of zeros), the weights are packed as int8 pairs (q8.h, "AVX2") that
 * each step sign-extends to int16 in registers (VPMOVSXBW from a 16-byte
 * load: half the packed bytes of int16 pairs, for one shuffle per 8 products),
 * and each VPMADDWD adds two exact products (at most 2 * 255 * 128) into an
 * int32 lane. No bias correction is needed. A BATCH_MATMUL rhs with a zero
 * point is packed as int16 pairs instead (rhs - zp needs 9 bits;
 * wick_q8_output.w16), loaded as they are. The output stage is the
 * fused one of avx2/q8_requant.h (FULLY_CONNECTED's double rounding:
 * template/q8_requant.h over avx2/simd.h).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/avx2/simd.h"
#include "kernels/q8.h"
#include "kernels/template/q8_requant.h"
#include "kernels/avx2/q8_requant.h"

#define INLINE static inline __attribute__((always_inline))
#define MAX_MR 4
#define TILE_MR 4
#define NR 16

INLINE uint32_t load_pair(const int16_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

INLINE uint32_t load_one(const int16_t *p) { return (uint16_t)*p; }

/* Row i's step: a = its next pair of inputs (int16 x2) broadcast,
 * acc0/acc1 += a . w0 / a . w1. */
#define ROW_STEP(i, LOAD, acc0, acc1)                                 \
  do {                                                                \
    if (MR > (i)) {                                                   \
      const __m256i a_ = _mm256_set1_epi32((int32_t)LOAD(ap[i] + k)); \
      acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(a_, w0));       \
      acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(a_, w1));       \
    }                                                                 \
  } while (0)

/* The NR weights of one pair step as int16 pairs (channels 0-7, then 8-15): int8 pairs
 * sign-extended (w16 false) or int16 pairs loaded; *w advances past them. */
INLINE void load_weights(bool w16, const int8_t **w, __m256i *w0, __m256i *w1) {
  if (w16) {
    *w0 = _mm256_loadu_si256((const __m256i *)(const void *)*w);
    *w1 = _mm256_loadu_si256((const __m256i *)(const void *)(*w + 32));
    *w += 4 * NR;
  } else {
    *w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)*w));
    *w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(*w + 16)));
    *w += 2 * NR;
  }
}

/* acc[i][v] += a_i[0 .. kc) . w over one tap (pairs); w advances. The
 * accumulators live in named locals for the loop: as an array, GCC 12
 * spills one of them to the stack and the store-to-load round trip on it
 * then paces the whole loop (about half the VPMADDWD rate). */
INLINE void accumulate(size_t MR, bool w16, const int16_t *const *ap, size_t kc, const int8_t **wp,
                       __m256i acc[][2]) {
  const int8_t *w = *wp;
  const __m256i zero = _mm256_setzero_si256();
  __m256i c00 = acc[0][0], c01 = acc[0][1];
  __m256i c10 = MR > 1 ? acc[1][0] : zero, c11 = MR > 1 ? acc[1][1] : zero;
  __m256i c20 = MR > 2 ? acc[2][0] : zero, c21 = MR > 2 ? acc[2][1] : zero;
  __m256i c30 = MR > 3 ? acc[3][0] : zero, c31 = MR > 3 ? acc[3][1] : zero;
  size_t k = 0;
  for (; k + 2 <= kc; k += 2) {
    __m256i w0, w1;
    load_weights(w16, &w, &w0, &w1);
    ROW_STEP(0, load_pair, c00, c01);
    ROW_STEP(1, load_pair, c10, c11);
    ROW_STEP(2, load_pair, c20, c21);
    ROW_STEP(3, load_pair, c30, c31);
  }
  if (k < kc) {
    __m256i w0, w1;
    load_weights(w16, &w, &w0, &w1);
    ROW_STEP(0, load_one, c00, c01);
    ROW_STEP(1, load_one, c10, c11);
    ROW_STEP(2, load_one, c20, c21);
    ROW_STEP(3, load_one, c30, c31);
  }
  acc[0][0] = c00, acc[0][1] = c01;
  if (MR > 1) acc[1][0] = c10, acc[1][1] = c11;
  if (MR > 2) acc[2][0] = c20, acc[2][1] = c21;
  if (MR > 3) acc[3][0] = c30, acc[3][1] = c31;
  *wp = w;
}
#undef ROW_STEP

/* 16 int32 (two vectors, already inside int8) -> 16 int8 in order. */
INLINE __m128i narrow16(__m256i v0, __m256i v1) {
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_setzero_si256());
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* 16 int32 (two vectors, any values) -> 16 int8 in order, saturated to
 * int16 and then clamped to [lo, hi] (int8 bounds in int16 lanes): the
 * same bytes as clamping the int32 values, with half the min/max. */
INLINE __m128i narrow16_clamp(__m256i v0, __m256i v1, __m256i lo16, __m256i hi16) {
  const __m256i p16 = _mm256_min_epi16(_mm256_max_epi16(_mm256_packs_epi32(v0, v1), lo16), hi16);
  const __m256i p = _mm256_packs_epi16(p16, _mm256_setzero_si256());
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

/* rq64: NULL, or this panel's group of wick_q8_rq64_prepare's constants. */
INLINE void store_tile(size_t MR, __m256i acc[][2], const int8_t *w, int8_t *const *cp, size_t nc,
                       const wick_q8_output *o, const double *fc_scale, const int64_t *rq64) {
  const int32_t *h = (const int32_t *)(const void *)w;
  __m128i res[MAX_MR];
  if (fc_scale) {
    for (size_t i = 0; i < MR; i++)
      res[i] = narrow16(q8_clamp(q8_requant_fc(acc[i][0], fc_scale), o),
                        q8_clamp(q8_requant_fc(acc[i][1], fc_scale + 8), o));
  } else if (rq64) {
    const q8_rq8 q0 = q8_rq8_load_prepared(h, NR, rq64, 0, o);
    const q8_rq8 q1 = q8_rq8_load_prepared(h + 8, NR, rq64, 1, o);
    const __m256i lo16 = _mm256_set1_epi16((int16_t)o->lo);
    const __m256i hi16 = _mm256_set1_epi16((int16_t)o->hi);
    for (size_t i = 0; i < MR; i++)
      res[i] = narrow16_clamp(q8_rq8_apply_unclamped(acc[i][0], &q0),
                              q8_rq8_apply_unclamped(acc[i][1], &q1), lo16, hi16);
  } else {
    const q8_rq8 q0 = q8_rq8_load(h, NR, o), q1 = q8_rq8_load(h + 8, NR, o);
    for (size_t i = 0; i < MR; i++)
      res[i] = narrow16(q8_rq8_apply(acc[i][0], &q0), q8_rq8_apply(acc[i][1], &q1));
  }
  for (size_t i = MR; i-- > 0;) {
    if (nc >= NR) {
      _mm_storeu_si128((__m128i *)(void *)cp[i], res[i]);
    } else {
      int8_t tmp[16];
      _mm_storeu_si128((__m128i *)(void *)tmp, res[i]);
      memcpy(cp[i], tmp, nc);
    }
  }
}

INLINE void init_tile(size_t MR, const int8_t *w, __m256i acc[][2]) {
  const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)w);
  const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(w + 32));
  for (size_t i = 0; i < MR; i++) acc[i][0] = b0, acc[i][1] = b1;
}

/* The raw output stage (wick_q8_output.raw): the int32 sums themselves. */
INLINE void store_raw(size_t MR, __m256i acc[][2], int8_t *const *cp, size_t nc) {
  for (size_t i = MR; i-- > 0;) {
    int32_t *p = (int32_t *)(void *)cp[i];
    if (nc >= NR) {
      _mm256_storeu_si256((__m256i *)(void *)p, acc[i][0]);
      _mm256_storeu_si256((__m256i *)(void *)(p + 8), acc[i][1]);
    } else {
      int32_t tmp[NR];
      _mm256_storeu_si256((__m256i *)(void *)tmp, acc[i][0]);
      _mm256_storeu_si256((__m256i *)(void *)(tmp + 8), acc[i][1]);
      memcpy(p, tmp, nc * sizeof(int32_t));
    }
  }
}

/* Header: 5 x NR int32. */
#define HEADER_BYTES (4 * WICK_Q8_HEADER * NR)

INLINE void gemm_body(size_t MR, bool w16, size_t mr, size_t nc, size_t kc, const int8_t *a,
                      size_t a_stride, const void *wv, int8_t *c, size_t c_stride,
                      const wick_q8_output *o) {
  const int16_t *ap[MAX_MR];
  int8_t *cp[MAX_MR];
  ap[0] = (const int16_t *)(const void *)a;
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) {
    ap[i] =
        i < mr ? (const int16_t *)(const void *)((const int8_t *)(const void *)ap[i - 1] + a_stride)
               : ap[i - 1];
    cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  }
  const int8_t *w = wv;
  const double *fc_scale = o->fc_scale;
  const int64_t *rq64 = o->rq64;
  for (;;) {
    __m256i acc[MAX_MR][2];
    const int8_t *header = w;
    init_tile(MR, w, acc);
    w += HEADER_BYTES;
    accumulate(MR, w16, ap, kc, &w, acc);
    if (o->raw)
      store_raw(MR, acc, cp, nc);
    else
      store_tile(MR, acc, header, cp, nc, o, fc_scale, rq64);
    if (nc <= NR) break;
    nc -= NR;
    if (fc_scale) fc_scale += NR;
    if (rq64) rq64 += WICK_Q8_RQ64_WORDS;
    for (size_t i = 0; i < MR; i++) cp[i] += o->raw ? 4 * NR : NR;
  }
}

INLINE void igemm_body(size_t MR, size_t mr, size_t nc, size_t kc, size_t ks,
                       const int8_t *const *a, const void *wv, int8_t *c, size_t c_stride,
                       const wick_q8_output *o) {
  int8_t *cp[MAX_MR];
  cp[0] = c;
  for (size_t i = 1; i < MR; i++) cp[i] = i < mr ? cp[i - 1] + c_stride : cp[i - 1];
  const int8_t *w = wv;
  const double *fc_scale = o->fc_scale;
  const int64_t *rq64 = o->rq64;
  for (;;) {
    __m256i acc[MAX_MR][2];
    const int8_t *header = w;
    init_tile(MR, w, acc);
    w += HEADER_BYTES;
    const int8_t *const *ind = a;
    for (size_t p = 0; p < ks; p++) {
      const int16_t *ap[MAX_MR];
      ap[0] = (const int16_t *)(const void *)ind[0];
      for (size_t i = 1; i < MR; i++)
        ap[i] = i < mr ? (const int16_t *)(const void *)ind[i] : ap[i - 1];
      ind += TILE_MR;
      accumulate(MR, false, ap, kc, &w, acc);
    }
    store_tile(MR, acc, header, cp, nc, o, fc_scale, rq64);
    if (nc <= NR) break;
    nc -= NR;
    if (fc_scale) fc_scale += NR;
    if (rq64) rq64 += WICK_Q8_RQ64_WORDS;
    for (size_t i = 0; i < MR; i++) cp[i] += NR;
  }
}

void wick_q8_gemm_i16_ukernel_4x16c2__avx2(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                           size_t a_stride, const void *w, int8_t *c,
                                           size_t c_stride, const wick_q8_output *o) {
  if (o->w16)
    gemm_body(4, true, mr, nc, kc, a, a_stride, w, c, c_stride, o);
  else
    gemm_body(4, false, mr, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_gemm_i16_ukernel_1x16c2__avx2(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                           size_t a_stride, const void *w, int8_t *c,
                                           size_t c_stride, const wick_q8_output *o) {
  (void)mr;
  if (o->w16)
    gemm_body(1, true, 1, nc, kc, a, a_stride, w, c, c_stride, o);
  else
    gemm_body(1, false, 1, nc, kc, a, a_stride, w, c, c_stride, o);
}

void wick_q8_igemm_i16_ukernel_4x16c2__avx2(size_t mr, size_t nc, size_t kc, size_t ks,
                                            const int8_t *const *a, const void *w, int8_t *c,
                                            size_t c_stride, const wick_q8_output *o) {
  igemm_body(4, mr, nc, kc, ks, a, w, c, c_stride, o);
}

/* wick_q8_bmm_pack's weights (not the header) of one whole panel of 16 columns read from rhs
 * rows (column j's input p at rhs[p * stride_p + j]): per pair of inputs, the two rows'
 * 16 bytes interleaved (VPUNPCKLBW / HBW), or with a zero point (w16) both widened, zp
 * subtracted and interleaved as int16 (an odd k's last partner is 0 either way). */
void wick_q8_bmm_pack_rows16__avx2(size_t k, const int8_t *rhs, size_t stride_p,
                                   int32_t rhs_zero_point, bool w16, void *packed) {
  uint8_t *out = packed;
  const __m256i zp = _mm256_set1_epi16((int16_t)rhs_zero_point);
  for (size_t g = 0; g < k; g += 2) {
    const __m128i r0 = _mm_loadu_si128((const __m128i *)(const void *)(rhs + g * stride_p));
    const bool pair = g + 1 < k;
    const __m128i r1 =
        pair ? _mm_loadu_si128((const __m128i *)(const void *)(rhs + (g + 1) * stride_p))
             : _mm_setzero_si128();
    if (w16) {
      const __m256i a = _mm256_sub_epi16(_mm256_cvtepi8_epi16(r0), zp);
      const __m256i b =
          pair ? _mm256_sub_epi16(_mm256_cvtepi8_epi16(r1), zp) : _mm256_setzero_si256();
      /* lanes: lo = columns 0-3 | 8-11, hi = 4-7 | 12-15 */
      const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
      _mm256_storeu_si256((__m256i *)(void *)out, _mm256_permute2x128_si256(lo, hi, 0x20));
      _mm256_storeu_si256((__m256i *)(void *)(out + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
      out += 64;
    } else {
      _mm_storeu_si128((__m128i *)(void *)out, _mm_unpacklo_epi8(r0, r1));
      _mm_storeu_si128((__m128i *)(void *)(out + 16), _mm_unpackhi_epi8(r0, r1));
      out += 32;
    }
  }
}
