/*
 * avx2/q8_dwconv.c — int8 DEPTHWISE_CONV_2D (multiplier 1) for AVX2 (no
 * AVX-512, no VNNI): 8 channels per vector, one int32 lane per channel.
 * Compiled with -mavx2.
 *
 * The packed weights are the depthwise blocks of q8.h with CR = 8 (the avx2
 * table's dw_cr): each weight an int32 lane holding (uint16)w. Each tap
 * sign-extends 8 input bytes to int32 lanes (low half x, high half its
 * sign), and one VPMADDWD with the weight lane gives x * w + sign * 0 = x * w
 * exactly, added to the int32 accumulator. Taps outside the input read the
 * input zero point instead, which the packed bias' cancels exactly (q8.h),
 * so every output sums all taps as the reference sums the in-bounds ones;
 * sums are exact int32, so results equal the reference byte for byte. The
 * output stage is avx2/q8_requant.h's fused one (the AVX2 GEMM's).
 *
 * Rows of 3x3 and 5x5 filters with dilation 1 and stride 1 or 2 run in
 * blocks of P output pixels (8 for 3x3, 4 for 5x5; then one block of 4 for
 * a remainder of 4 or more, and a last block of 4 moved back to end at the
 * row's last pixel, recomputing a few pixels with identical results): each
 * input vector is loaded and widened once per block and feeds every output
 * it touches (P accumulators + input + weight fit AVX2's 16 registers).
 * Blocks that reach into the left or right padding (BORDER) check each
 * input column and read the zero point outside; the others load unchecked.
 * Other sizes, dilations and strides run one pixel at a time with bounds
 * checks. Loop order: batch, output row, 8-channel block, columns; a tail
 * block of fewer than 8 channels goes through small copies (no byte masks
 * on AVX2).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/avx2/simd.h"
#include "kernels/q8.h"
#include "kernels/avx2/q8_requant.h"

#define CR 8

typedef struct dw_row {
  const wick_conv_shape *s;
  const int8_t *input; /* batch item n */
  int8_t *out;         /* output row */
  int32_t y;           /* output row index */
  size_t nc;           /* channels of this block (<= CR) */
  __m256i vzp;
} dw_row;

/* 8 input bytes (the first nc when TAIL) sign-extended to int32 lanes. */
SIMD_INLINE __m256i load_x(bool TAIL, const int8_t *p, size_t nc) {
  if (TAIL) {
    int8_t tmp[16] = {0};
    memcpy(tmp, p, nc);
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)tmp));
  }
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

/* 8 requantized int32 lanes (inside int8 after the clamp) as 8 bytes. */
SIMD_INLINE void store8(bool TAIL, __m256i v, int8_t *p, size_t nc) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i b = _mm_packs_epi16(w, w);
  if (TAIL) {
    int8_t tmp[16];
    _mm_storeu_si128((__m128i *)(void *)tmp, b);
    memcpy(p, tmp, nc);
  } else {
    _mm_storel_epi64((__m128i *)(void *)p, b);
  }
}

SIMD_INLINE __m256i madd(__m256i acc, __m256i x, const int32_t *w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, vi_load(w)));
}

/* One output pixel, any filter, with bounds checks. */
SIMD_INLINE void pixel(bool TAIL, const dw_row *r, size_t c0, const int32_t *h, const q8_rq8 *q,
                       int32_t x) {
  const wick_conv_shape *s = r->s;
  const int32_t *wt = h + WICK_Q8_HEADER * CR;
  __m256i acc = vi_load(h);
  for (int32_t ky = 0; ky < s->k_h; ky++) {
    /* 64-bit: a huge dilation times a tap index overflows int32 (as in the
     * AVX-512 kernel and the reference). */
    const int64_t iy = (int64_t)r->y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
    const bool vy = iy >= 0 && iy < s->in_h;
    for (int32_t kx = 0; kx < s->k_w; kx++, wt += CR) {
      const int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
      __m256i v = r->vzp;
      if (vy && ix >= 0 && ix < s->in_w)
        v = load_x(TAIL, r->input + ((int64_t)iy * s->in_w + ix) * s->in_c + c0, r->nc);
      acc = madd(acc, v, wt);
    }
  }
  store8(TAIL, q8_rq8_apply(acc, q), r->out + (int64_t)x * s->out_c + c0, r->nc);
}

/* P pixels from column x of a K x K filter, dilation 1, stride SW; BORDER:
 * some of the input columns may lie outside the image. */
SIMD_INLINE void block(size_t P, size_t K, size_t SW, bool TAIL, bool BORDER, const dw_row *r,
                       size_t c0, const int32_t *h, const q8_rq8 *rq, int32_t x) {
  const wick_conv_shape *s = r->s;
  const int32_t *wt = h + WICK_Q8_HEADER * CR;
  __m256i acc[8];
  const __m256i b = vi_load(h);
  for (size_t q = 0; q < P; q++) acc[q] = b;
  const int64_t ix0 = (int64_t)x * (int64_t)SW - s->pad_left;
  for (size_t ky = 0; ky < K; ky++) {
    const int64_t iy = (int64_t)r->y * s->stride_h - s->pad_top + (int64_t)ky;
    const int32_t *wr = wt + ky * K * CR;
    if (iy < 0 || iy >= s->in_h) {
      for (size_t kx = 0; kx < K; kx++)
        for (size_t q = 0; q < P; q++) acc[q] = madd(acc[q], r->vzp, wr + kx * CR);
      continue;
    }
    const int8_t *row = r->input + (int64_t)iy * s->in_w * s->in_c + c0;
#pragma GCC unroll 32
    for (size_t j = 0; j < (P - 1) * SW + K; j++) {
      const int64_t ix = ix0 + (int64_t)j;
      const __m256i v =
          BORDER && (ix < 0 || ix >= s->in_w) ? r->vzp : load_x(TAIL, row + ix * s->in_c, r->nc);
#pragma GCC unroll 8
      for (size_t q = 0; q < P; q++)
        if (j >= q * SW && j - q * SW < K) acc[q] = madd(acc[q], v, wr + (j - q * SW) * CR);
    }
  }
  int8_t *out = r->out + (int64_t)x * s->out_c + c0;
  for (size_t q = 0; q < P; q++)
    store8(TAIL, q8_rq8_apply(acc[q], rq), out + (int64_t)q * s->out_c, r->nc);
}

/* A block of P pixels from column x, the unchecked variant when its input
 * columns are all inside [x_lo, x_hi) (the interior output columns). */
SIMD_INLINE void block_at(size_t P, size_t K, size_t SW, bool TAIL, const dw_row *r, size_t c0,
                          const int32_t *h, const q8_rq8 *rq, int32_t x, int32_t x_lo,
                          int32_t x_hi) {
  if (x >= x_lo && x + (int32_t)P <= x_hi)
    block(P, K, SW, TAIL, false, r, c0, h, rq, x);
  else
    block(P, K, SW, TAIL, true, r, c0, h, rq, x);
}

/* One channel block of one output row. */
SIMD_INLINE void row_block(size_t K, size_t SW, bool TAIL, const dw_row *r, size_t c0,
                           const int32_t *h, const wick_q8_output *o, int32_t x_lo, int32_t x_hi) {
  const int32_t P = K == 3 ? 8 : 4;
  const int32_t ow = r->s->out_w;
  const q8_rq8 rq = q8_rq8_load(h, CR, o);
  const q8_rq8 *q = &rq;
  int32_t x = 0;
  for (; x + P <= ow; x += P) block_at((size_t)P, K, SW, TAIL, r, c0, h, q, x, x_lo, x_hi);
  if (P == 8 && ow - x >= 4) {
    block_at(4, K, SW, TAIL, r, c0, h, q, x, x_lo, x_hi);
    x += 4;
  }
  if (x < ow && ow >= 4) {
    block_at(4, K, SW, TAIL, r, c0, h, q, ow - 4, x_lo, x_hi);
  } else {
    for (; x < ow; x++) block_at(1, K, SW, TAIL, r, c0, h, q, x, x_lo, x_hi);
  }
}

SIMD_INLINE void row_generic(bool TAIL, const dw_row *r, size_t c0, const int32_t *h,
                             const wick_q8_output *o) {
  const q8_rq8 q = q8_rq8_load(h, CR, o);
  for (int32_t x = 0; x < r->s->out_w; x++) pixel(TAIL, r, c0, h, &q, x);
}

/* Every channel block of one row with filter K x K and stride SW (K = 0:
 * the generic per-pixel path). */
SIMD_INLINE void row(size_t K, size_t SW, dw_row *r, const void *w, const wick_q8_output *o,
                     int32_t x_lo, int32_t x_hi) {
  const size_t c = (size_t)r->s->in_c;
  const size_t block_words = (WICK_Q8_HEADER + (size_t)r->s->k_h * (size_t)r->s->k_w) * CR;
  const int32_t *h = w;
  size_t c0 = 0;
  r->nc = CR;
  for (; c0 + CR <= c; c0 += CR, h += block_words) {
    if (K == 0)
      row_generic(false, r, c0, h, o);
    else
      row_block(K, SW, false, r, c0, h, o, x_lo, x_hi);
  }
  if (c0 < c) {
    r->nc = c - c0;
    if (K == 0)
      row_generic(true, r, c0, h, o);
    else
      row_block(K, SW, true, r, c0, h, o, x_lo, x_hi);
  }
}

typedef void (*row_fn)(dw_row *, const void *, const wick_q8_output *, int32_t, int32_t);
static void row_3x3s1(dw_row *r, const void *w, const wick_q8_output *o, int32_t lo, int32_t hi) {
  row(3, 1, r, w, o, lo, hi);
}
static void row_3x3s2(dw_row *r, const void *w, const wick_q8_output *o, int32_t lo, int32_t hi) {
  row(3, 2, r, w, o, lo, hi);
}
static void row_5x5s1(dw_row *r, const void *w, const wick_q8_output *o, int32_t lo, int32_t hi) {
  row(5, 1, r, w, o, lo, hi);
}
static void row_5x5s2(dw_row *r, const void *w, const wick_q8_output *o, int32_t lo, int32_t hi) {
  row(5, 2, r, w, o, lo, hi);
}
static void row_any(dw_row *r, const void *w, const wick_q8_output *o, int32_t lo, int32_t hi) {
  row(0, 1, r, w, o, lo, hi);
}

void wick_q8_dwconv_ukernel__avx2(const wick_conv_shape *s, int32_t zp, const int8_t *input,
                                  const void *w, int8_t *output, const wick_q8_output *o,
                                  int32_t y0, int32_t y1) {
  row_fn fn = row_any;
  const bool square = s->k_h == s->k_w && s->dilation_h == 1 && s->dilation_w == 1 &&
                      s->stride_w >= 1 && s->stride_w <= 2;
  if (square && s->k_h == 3) fn = s->stride_w == 1 ? row_3x3s1 : row_3x3s2;
  if (square && s->k_h == 5) fn = s->stride_w == 1 ? row_5x5s1 : row_5x5s2;
  int32_t x_lo, x_hi;
  wick_conv_interior_columns(s, &x_lo, &x_hi);
  dw_row r;
  r.s = s;
  r.nc = CR;
  r.vzp = _mm256_set1_epi32(zp);
  for (int32_t n = 0; n < s->batch; n++) {
    r.input = input + (int64_t)n * s->in_h * s->in_w * s->in_c;
    for (int32_t y = y0; y < y1; y++) {
      r.y = y;
      r.out = output + (((int64_t)n * s->out_h + y) * s->out_w) * s->out_c;
      fn(&r, w, o, x_lo, x_hi);
    }
  }
}
