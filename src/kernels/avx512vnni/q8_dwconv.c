/*
 * avx512vnni/q8_dwconv.c — int8 DEPTHWISE_CONV_2D (multiplier 1) for
 * AVX-512 VNNI: 16 channels per vector, one int32 lane per channel.
 *
 * Each tap sign-extends 16 input bytes to int32 lanes and adds x * w with
 * one VPDPWSSD (the packed weight lane is (uint16)w, so the sign half of the
 * input multiplies a zero; q8.h). Taps outside the input read the input
 * zero point instead, which the packed bias' cancels exactly (q8.h), so
 * every output sums all taps as the reference sums the in-bounds ones.
 *
 * Rows of 3x3 and 5x5 filters with dilation 1 and stride 1 or 2 run in
 * blocks of P output pixels (8 for 3x3, 4 for 5x5; then one block of 4 for
 * a remainder of 4 or more, and a last block of 4 moved back to end at the
 * row's last pixel, recomputing a few pixels with identical results): each
 * input vector is loaded and widened once per block and feeds every output
 * it touches. Blocks that reach into the left or right padding (BORDER)
 * check each input column and read the zero point outside; the others load
 * unchecked. Other sizes, dilations and strides run one pixel at a time with
 * bounds checks. Loop order: batch, output row, 16-channel block, columns;
 * the tail block is masked.
 */
#include "kernels/avx512vnni/q8_requant.h"

#define CR 16

typedef struct dw_row {
  const wick_conv_shape *s;
  const int8_t *input; /* batch item n */
  int8_t *out;         /* output row */
  int32_t y;           /* output row index */
  __m512i vzp;
} dw_row;

Q8_INLINE __m512i load_x(bool MASKED, const int8_t *p, __mmask16 m) {
  const __m128i b =
      MASKED ? _mm_maskz_loadu_epi8(m, p) : _mm_loadu_si128((const __m128i *)(const void *)p);
  return _mm512_cvtepi8_epi32(b);
}

Q8_INLINE void store16(bool MASKED, __m128i v, int8_t *p, __mmask16 m) {
  if (MASKED)
    _mm_mask_storeu_epi8(p, m, v);
  else
    _mm_storeu_si128((__m128i *)(void *)p, v);
}

/* One output pixel, any filter, with bounds checks. */
Q8_INLINE void pixel(bool MASKED, const dw_row *r, size_t c0, const int32_t *h, __mmask16 m,
                     const q8_rq64 *q, int32_t x) {
  const wick_conv_shape *s = r->s;
  const int32_t *wt = h + WICK_Q8_HEADER * CR;
  __m512i acc = _mm512_loadu_si512(h);
  for (int32_t ky = 0; ky < s->k_h; ky++) {
    /* 64-bit: a huge dilation times a tap index overflows int32 (regression
     * int8-depthwise-dilation-int32-overflow.tflite); the reference does the same. */
    const int64_t iy = (int64_t)r->y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
    const bool vy = iy >= 0 && iy < s->in_h;
    for (int32_t kx = 0; kx < s->k_w; kx++, wt += CR) {
      const int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
      __m512i v = r->vzp;
      if (vy && ix >= 0 && ix < s->in_w)
        v = load_x(MASKED, r->input + ((int64_t)iy * s->in_w + ix) * s->in_c + c0, m);
      acc = _mm512_dpwssd_epi32(acc, v, _mm512_loadu_si512(wt));
    }
  }
  store16(MASKED, q8_narrow64(q8_requant64(acc, q), q), r->out + (int64_t)x * s->out_c + c0, m);
}

/* P pixels from column x of a K x K filter, dilation 1, stride SW; BORDER:
 * some of the input columns may lie outside the image. */
Q8_INLINE void block(size_t P, size_t K, size_t SW, bool MASKED, bool BORDER, const dw_row *r,
                     size_t c0, const int32_t *h, __mmask16 m, const q8_rq64 *rq, int32_t x) {
  const wick_conv_shape *s = r->s;
  const int32_t *wt = h + WICK_Q8_HEADER * CR;
  __m512i acc[8];
  const __m512i b = _mm512_loadu_si512(h);
  for (size_t q = 0; q < P; q++) acc[q] = b;
  const int64_t ix0 = (int64_t)x * (int64_t)SW - s->pad_left;
  for (size_t ky = 0; ky < K; ky++) {
    const int64_t iy = (int64_t)r->y * s->stride_h - s->pad_top + (int64_t)ky;
    const int32_t *wr = wt + ky * K * CR;
    if (iy < 0 || iy >= s->in_h) {
      for (size_t kx = 0; kx < K; kx++) {
        const __m512i wk = _mm512_loadu_si512(wr + kx * CR);
        for (size_t q = 0; q < P; q++) acc[q] = _mm512_dpwssd_epi32(acc[q], r->vzp, wk);
      }
      continue;
    }
    const int8_t *row = r->input + (int64_t)iy * s->in_w * s->in_c + c0;
#pragma GCC unroll 32
    for (size_t j = 0; j < (P - 1) * SW + K; j++) {
      const int64_t ix = ix0 + (int64_t)j;
      const __m512i v =
          BORDER && (ix < 0 || ix >= s->in_w) ? r->vzp : load_x(MASKED, row + ix * s->in_c, m);
#pragma GCC unroll 8
      for (size_t q = 0; q < P; q++)
        if (j >= q * SW && j - q * SW < K)
          acc[q] = _mm512_dpwssd_epi32(acc[q], v, _mm512_loadu_si512(wr + (j - q * SW) * CR));
    }
  }
  for (size_t q = 0; q < P; q++) acc[q] = q8_requant64(acc[q], rq);
  int8_t *out = r->out + (int64_t)x * s->out_c + c0;
  if (P == 1) {
    store16(MASKED, q8_narrow64(acc[0], rq), out, m);
    return;
  }
  for (size_t q = 0; q + 4 <= P; q += 4) {
    const __m512i bytes = q8_narrow64_x4(acc[q], acc[q + 1], acc[q + 2], acc[q + 3], rq);
    store16(MASKED, _mm512_castsi512_si128(bytes), out + (int64_t)q * s->out_c, m);
    store16(MASKED, _mm512_extracti32x4_epi32(bytes, 1), out + (int64_t)(q + 1) * s->out_c, m);
    store16(MASKED, _mm512_extracti32x4_epi32(bytes, 2), out + (int64_t)(q + 2) * s->out_c, m);
    store16(MASKED, _mm512_extracti32x4_epi32(bytes, 3), out + (int64_t)(q + 3) * s->out_c, m);
  }
}

/* A block of P pixels from column x, the unchecked variant when its input
 * columns are all inside [x_lo, x_hi) (the interior output columns). */
Q8_INLINE void block_at(size_t P, size_t K, size_t SW, bool MASKED, const dw_row *r, size_t c0,
                        const int32_t *h, __mmask16 m, const q8_rq64 *rq, int32_t x, int32_t x_lo,
                        int32_t x_hi) {
  if (x >= x_lo && x + (int32_t)P <= x_hi)
    block(P, K, SW, MASKED, false, r, c0, h, m, rq, x);
  else
    block(P, K, SW, MASKED, true, r, c0, h, m, rq, x);
}

/* One channel block of one output row. */
Q8_INLINE void row_block(size_t K, size_t SW, bool MASKED, const dw_row *r, size_t c0,
                         const int32_t *h, __mmask16 m, const wick_q8_output *o, int32_t x_lo,
                         int32_t x_hi) {
  const int32_t P = K == 3 ? 8 : 4;
  const int32_t ow = r->s->out_w;
  const q8_rq64 rq = q8_rq64_load(h, CR, NULL, o);
  const q8_rq64 *q = &rq;
  int32_t x = 0;
  for (; x + P <= ow; x += P) block_at((size_t)P, K, SW, MASKED, r, c0, h, m, q, x, x_lo, x_hi);
  if (P == 8 && ow - x >= 4) {
    block_at(4, K, SW, MASKED, r, c0, h, m, q, x, x_lo, x_hi);
    x += 4;
  }
  if (x < ow && ow >= 4) {
    block_at(4, K, SW, MASKED, r, c0, h, m, q, ow - 4, x_lo, x_hi);
  } else {
    for (; x < ow; x++) block_at(1, K, SW, MASKED, r, c0, h, m, q, x, x_lo, x_hi);
  }
}

Q8_INLINE void row_generic(bool MASKED, const dw_row *r, size_t c0, const int32_t *h, __mmask16 m,
                           const wick_q8_output *o) {
  const q8_rq64 q = q8_rq64_load(h, CR, NULL, o);
  for (int32_t x = 0; x < r->s->out_w; x++) pixel(MASKED, r, c0, h, m, &q, x);
}

/* Every channel block of one row with filter K x K and stride SW (K = 0:
 * the generic per-pixel path). */
Q8_INLINE void row(size_t K, size_t SW, const dw_row *r, const void *w, const wick_q8_output *o,
                   int32_t x_lo, int32_t x_hi) {
  const size_t c = (size_t)r->s->in_c;
  const size_t block_words = (WICK_Q8_HEADER + (size_t)r->s->k_h * (size_t)r->s->k_w) * CR;
  const int32_t *h = w;
  size_t c0 = 0;
  for (; c0 + CR <= c; c0 += CR, h += block_words) {
    if (K == 0)
      row_generic(false, r, c0, h, (__mmask16)0xffff, o);
    else
      row_block(K, SW, false, r, c0, h, (__mmask16)0xffff, o, x_lo, x_hi);
  }
  if (c0 < c) {
    const __mmask16 m = q8_mask16(c - c0);
    if (K == 0)
      row_generic(true, r, c0, h, m, o);
    else
      row_block(K, SW, true, r, c0, h, m, o, x_lo, x_hi);
  }
}

static void row_3x3s1(const dw_row *r, const void *w, const wick_q8_output *o, int32_t lo,
                      int32_t hi) {
  row(3, 1, r, w, o, lo, hi);
}
static void row_3x3s2(const dw_row *r, const void *w, const wick_q8_output *o, int32_t lo,
                      int32_t hi) {
  row(3, 2, r, w, o, lo, hi);
}
static void row_5x5s1(const dw_row *r, const void *w, const wick_q8_output *o, int32_t lo,
                      int32_t hi) {
  row(5, 1, r, w, o, lo, hi);
}
static void row_5x5s2(const dw_row *r, const void *w, const wick_q8_output *o, int32_t lo,
                      int32_t hi) {
  row(5, 2, r, w, o, lo, hi);
}
static void row_any(const dw_row *r, const void *w, const wick_q8_output *o, int32_t lo,
                    int32_t hi) {
  row(0, 1, r, w, o, lo, hi);
}

void wick_q8_dwconv_ukernel__avx512vnni(const wick_conv_shape *s, int32_t zp, const int8_t *input,
                                        const void *w, int8_t *output, const wick_q8_output *o,
                                        int32_t y0, int32_t y1) {
  void (*fn)(const dw_row *, const void *, const wick_q8_output *, int32_t, int32_t) = row_any;
  const bool square = s->k_h == s->k_w && s->dilation_h == 1 && s->dilation_w == 1 &&
                      s->stride_w >= 1 && s->stride_w <= 2;
  if (square && s->k_h == 3) fn = s->stride_w == 1 ? row_3x3s1 : row_3x3s2;
  if (square && s->k_h == 5) fn = s->stride_w == 1 ? row_5x5s1 : row_5x5s2;
  int32_t x_lo, x_hi;
  wick_conv_interior_columns(s, &x_lo, &x_hi);
  dw_row r;
  r.s = s;
  r.vzp = _mm512_set1_epi32(zp);
  for (int32_t n = 0; n < s->batch; n++) {
    r.input = input + (int64_t)n * s->in_h * s->in_w * s->in_c;
    for (int32_t y = y0; y < y1; y++) {
      r.y = y;
      r.out = output + (((int64_t)n * s->out_h + y) * s->out_w) * s->out_c;
      fn(&r, w, o, x_lo, x_hi);
    }
  }
}
