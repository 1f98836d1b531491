/*
 * avx512/dwconv.c — DEPTHWISE_CONV_2D 3x3 (multiplier 1, dilation 1, strides
 * 1 or 2, any padding) for AVX-512F.
 *
 * Loop order: batch, output row, 16-channel block, output column. For one
 * row and channel block the nine weight vectors and the bias stay in
 * registers; the columns whose taps are all inside the input run in blocks
 * of 8 (then 4, then 1) output pixels, each input vector loaded once and
 * used by every output pixel it touches (up to 3 at stride 1):
 *
 *     input row ky:   c0  c1  c2  c3  c4  c5 ...     (one 16-channel vector each)
 *     out x0 taps     c0  c1  c2
 *     out x1 taps         c1  c2  c3
 *
 * Border columns (padding) run one pixel at a time with bounds checks, and
 * input rows outside the image are skipped (never read). The last channel
 * block is masked on load and store, so nothing past C is touched. Packed
 * weights (kernels.h) are zero-padded to 16 channels.
 *
 * Accumulation order: bias, then taps in (ky, kx) order, one FMA each — the
 * reference's order, except for FMA's single rounding.
 */
#include <immintrin.h>

#include "kernels/kernels.h"

#define CR 16
#define ALWAYS_INLINE static inline __attribute__((always_inline))

typedef struct dw_ctx {
  const float *rows[3]; /* input row ky (only valid rows are read) */
  bool valid[3];
  float *out;           /* output row */
  size_t c;             /* channels (pixel stride) */
  ptrdiff_t in_w, pad_left;
  __m512 vlo, vhi;
} dw_ctx;

/* P interior output pixels from column x, all taps in bounds. */
ALWAYS_INLINE void dw_block(size_t P, size_t SW, const dw_ctx *d, size_t c0, __mmask16 mask,
                            const __m512 *wk, __m512 bias, size_t x) {
  __m512 acc[8];
  for (size_t o = 0; o < P; o++) acc[o] = bias;
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - d->pad_left;
  for (size_t ky = 0; ky < 3; ky++) {
    if (!d->valid[ky]) continue;
    const float *r = d->rows[ky] + ix0 * (ptrdiff_t)d->c + (ptrdiff_t)c0;
    for (size_t j = 0; j < (P - 1) * SW + 3; j++) {
      const __m512 v = _mm512_maskz_loadu_ps(mask, r + j * d->c);
      for (size_t o = 0; o < P; o++) {
        if (j >= o * SW && j - o * SW < 3) acc[o] = _mm512_fmadd_ps(v, wk[ky * 3 + j - o * SW], acc[o]);
      }
    }
  }
  for (size_t o = 0; o < P; o++)
    _mm512_mask_storeu_ps(d->out + (x + o) * d->c + c0, mask,
                          _mm512_min_ps(d->vhi, _mm512_max_ps(d->vlo, acc[o])));
}

/* One output pixel at column x with bounds checks on the columns. */
ALWAYS_INLINE void dw_border(size_t SW, const dw_ctx *d, size_t c0, __mmask16 mask,
                             const __m512 *wk, __m512 bias, size_t x) {
  __m512 acc = bias;
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - d->pad_left;
  for (size_t ky = 0; ky < 3; ky++) {
    if (!d->valid[ky]) continue;
    for (ptrdiff_t kx = 0; kx < 3; kx++) {
      ptrdiff_t ix = ix0 + kx;
      if (ix < 0 || ix >= d->in_w) continue;
      const __m512 v = _mm512_maskz_loadu_ps(mask, d->rows[ky] + ix * (ptrdiff_t)d->c + (ptrdiff_t)c0);
      acc = _mm512_fmadd_ps(v, wk[ky * 3 + (size_t)kx], acc);
    }
  }
  _mm512_mask_storeu_ps(d->out + x * d->c + c0, mask,
                        _mm512_min_ps(d->vhi, _mm512_max_ps(d->vlo, acc)));
}

ALWAYS_INLINE void dw_row(size_t SW, const dw_ctx *d, const float *w, size_t out_w, size_t x_lo,
                          size_t x_hi) {
  for (size_t c0 = 0; c0 < d->c; c0 += CR) {
    const size_t left = d->c - c0;
    const __mmask16 mask = left >= CR ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u);
    const float *wb = w + c0 / CR * 10 * CR;
    const __m512 bias = _mm512_loadu_ps(wb);
    __m512 wk[9];
    for (size_t t = 0; t < 9; t++) wk[t] = _mm512_loadu_ps(wb + (t + 1) * CR);
    for (size_t x = 0; x < x_lo; x++) dw_border(SW, d, c0, mask, wk, bias, x);
    size_t x = x_lo;
    for (; x + 8 <= x_hi; x += 8) dw_block(8, SW, d, c0, mask, wk, bias, x);
    for (; x + 4 <= x_hi; x += 4) dw_block(4, SW, d, c0, mask, wk, bias, x);
    for (; x < x_hi; x++) dw_block(1, SW, d, c0, mask, wk, bias, x);
    for (x = x_hi; x < out_w; x++) dw_border(SW, d, c0, mask, wk, bias, x);
  }
}

static void dw_row_s1(const dw_ctx *d, const float *w, size_t out_w, size_t x_lo, size_t x_hi) {
  dw_row(1, d, w, out_w, x_lo, x_hi);
}
static void dw_row_s2(const dw_ctx *d, const float *w, size_t out_w, size_t x_lo, size_t x_hi) {
  dw_row(2, d, w, out_w, x_lo, x_hi);
}

void wick_f32_dwconv3x3_ukernel__avx512(const wick_conv_shape *s, const float *input,
                                        const float *w, float *output, float lo, float hi) {
  const size_t c = (size_t)s->in_c, sw = (size_t)s->stride_w, out_w = (size_t)s->out_w;
  const ptrdiff_t pl = s->pad_left, in_w = s->in_w;
  /* Interior columns: x*sw - pl >= 0 and x*sw - pl + 2 <= in_w - 1. */
  size_t x_lo = pl > 0 ? ((size_t)pl + sw - 1) / sw : 0, x_hi = 0;
  if (in_w + pl >= 3) x_hi = (size_t)(in_w - 3 + pl) / sw + 1;
  if (x_hi > out_w) x_hi = out_w;
  if (x_lo > out_w) x_lo = out_w;
  if (x_hi < x_lo) x_hi = x_lo;
  dw_ctx d;
  d.c = c;
  d.in_w = in_w;
  d.pad_left = pl;
  d.vlo = _mm512_set1_ps(lo);
  d.vhi = _mm512_set1_ps(hi);
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++) {
      for (int32_t ky = 0; ky < 3; ky++) {
        int32_t iy = y * s->stride_h - s->pad_top + ky;
        d.valid[ky] = iy >= 0 && iy < s->in_h;
        d.rows[ky] = d.valid[ky] ? input + (((int64_t)n * s->in_h + iy) * s->in_w) * (int64_t)c
                                 : input;
      }
      d.out = output + (((int64_t)n * s->out_h + y) * s->out_w) * (int64_t)c;
      if (sw == 1)
        dw_row_s1(&d, w, out_w, x_lo, x_hi);
      else
        dw_row_s2(&d, w, out_w, x_lo, x_hi);
    }
}
