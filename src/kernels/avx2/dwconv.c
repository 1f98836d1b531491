/*
 * avx2/dwconv.c — DEPTHWISE_CONV_2D 3x3 (multiplier 1, dilation 1, strides 1
 * or 2, any padding) for AVX2 + FMA.
 *
 * The scheme of avx512/dwconv.c with 8-channel blocks: per output row and
 * channel block the nine weight vectors stay in registers, interior columns
 * run 4 output pixels per pass (9 weights + 4 accumulators + 1 input of the
 * 16 ymm registers), border columns one pixel at a time with bounds checks,
 * rows outside the input are skipped. Full channel blocks use plain loads and
 * stores; only the last partial block uses vmaskmov (slower on some CPUs).
 */
#include <immintrin.h>

#include "kernels/kernels.h"

#define CR 8
#define ALWAYS_INLINE static inline __attribute__((always_inline))

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

typedef struct dw_ctx {
  const float *rows[3];
  bool valid[3];
  float *out;
  size_t c;
  ptrdiff_t in_w, pad_left;
  float lo, hi;
} dw_ctx;

ALWAYS_INLINE __m256 load(bool MASKED, const float *p, __m256i mask) {
  return MASKED ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

ALWAYS_INLINE void store(bool MASKED, float *p, __m256i mask, __m256 v, const dw_ctx *d) {
  v = _mm256_min_ps(_mm256_set1_ps(d->hi), _mm256_max_ps(_mm256_set1_ps(d->lo), v));
  if (MASKED)
    _mm256_maskstore_ps(p, mask, v);
  else
    _mm256_storeu_ps(p, v);
}

ALWAYS_INLINE void dw_block(size_t P, size_t SW, bool MASKED, const dw_ctx *d, size_t c0,
                            __m256i mask, const __m256 *wk, const float *bias, size_t x) {
  __m256 acc[4];
  for (size_t o = 0; o < P; o++) acc[o] = _mm256_loadu_ps(bias);
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - d->pad_left;
  for (size_t ky = 0; ky < 3; ky++) {
    if (!d->valid[ky]) continue;
    const float *r = d->rows[ky] + ix0 * (ptrdiff_t)d->c + (ptrdiff_t)c0;
    for (size_t j = 0; j < (P - 1) * SW + 3; j++) {
      const __m256 v = load(MASKED, r + j * d->c, mask);
      for (size_t o = 0; o < P; o++)
        if (j >= o * SW && j - o * SW < 3)
          acc[o] = _mm256_fmadd_ps(v, wk[ky * 3 + j - o * SW], acc[o]);
    }
  }
  for (size_t o = 0; o < P; o++) store(MASKED, d->out + (x + o) * d->c + c0, mask, acc[o], d);
}

ALWAYS_INLINE void dw_border(size_t SW, bool MASKED, const dw_ctx *d, size_t c0, __m256i mask,
                             const __m256 *wk, const float *bias, size_t x) {
  __m256 acc = _mm256_loadu_ps(bias);
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - d->pad_left;
  for (size_t ky = 0; ky < 3; ky++) {
    if (!d->valid[ky]) continue;
    for (ptrdiff_t kx = 0; kx < 3; kx++) {
      ptrdiff_t ix = ix0 + kx;
      if (ix < 0 || ix >= d->in_w) continue;
      const __m256 v =
          load(MASKED, d->rows[ky] + ix * (ptrdiff_t)d->c + (ptrdiff_t)c0, mask);
      acc = _mm256_fmadd_ps(v, wk[ky * 3 + (size_t)kx], acc);
    }
  }
  store(MASKED, d->out + x * d->c + c0, mask, acc, d);
}

ALWAYS_INLINE void dw_block_columns(size_t SW, bool MASKED, const dw_ctx *d, const float *wb,
                                    size_t c0, __m256i mask, size_t out_w, size_t x_lo,
                                    size_t x_hi) {
  __m256 wk[9];
  for (size_t t = 0; t < 9; t++) wk[t] = _mm256_loadu_ps(wb + (t + 1) * CR);
  for (size_t x = 0; x < x_lo; x++) dw_border(SW, MASKED, d, c0, mask, wk, wb, x);
  size_t x = x_lo;
  for (; x + 4 <= x_hi; x += 4) dw_block(4, SW, MASKED, d, c0, mask, wk, wb, x);
  for (; x < x_hi; x++) dw_block(1, SW, MASKED, d, c0, mask, wk, wb, x);
  for (x = x_hi; x < out_w; x++) dw_border(SW, MASKED, d, c0, mask, wk, wb, x);
}

ALWAYS_INLINE void dw_row(size_t SW, const dw_ctx *d, const float *w, size_t out_w, size_t x_lo,
                          size_t x_hi) {
  const __m256i all = _mm256_set1_epi32(-1);
  size_t c0 = 0;
  for (; c0 + CR <= d->c; c0 += CR)
    dw_block_columns(SW, false, d, w + c0 / CR * 10 * CR, c0, all, out_w, x_lo, x_hi);
  if (c0 < d->c) {
    const __m256i mask = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (d->c - c0)));
    dw_block_columns(SW, true, d, w + c0 / CR * 10 * CR, c0, mask, out_w, x_lo, x_hi);
  }
}

static void dw_row_s1(const dw_ctx *d, const float *w, size_t out_w, size_t x_lo, size_t x_hi) {
  dw_row(1, d, w, out_w, x_lo, x_hi);
}
static void dw_row_s2(const dw_ctx *d, const float *w, size_t out_w, size_t x_lo, size_t x_hi) {
  dw_row(2, d, w, out_w, x_lo, x_hi);
}

void wick_f32_dwconv3x3_ukernel__avx2(const wick_conv_shape *s, const float *input,
                                      const float *w, float *output, float lo, float hi) {
  const size_t c = (size_t)s->in_c, sw = (size_t)s->stride_w, out_w = (size_t)s->out_w;
  const ptrdiff_t pl = s->pad_left, in_w = s->in_w;
  size_t x_lo = pl > 0 ? ((size_t)pl + sw - 1) / sw : 0, x_hi = 0;
  if (in_w + pl >= 3) x_hi = (size_t)(in_w - 3 + pl) / sw + 1;
  if (x_hi > out_w) x_hi = out_w;
  if (x_lo > out_w) x_lo = out_w;
  if (x_hi < x_lo) x_hi = x_lo;
  dw_ctx d;
  d.c = c;
  d.in_w = in_w;
  d.pad_left = pl;
  d.lo = lo;
  d.hi = hi;
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
