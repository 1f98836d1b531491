/*
 * avx2/dwconv.c — DEPTHWISE_CONV_2D 3x3 (multiplier 1, dilation 1, strides 1
 * or 2, any padding) for AVX2 + FMA.
 *
 * The scheme of avx512/dwconv.c with 8-channel blocks and 4-pixel blocks:
 * narrow rows keep the nine weight vectors in registers per channel block
 * (9 weights + 4 accumulators + 1 input + clamp bounds = the 16 ymm
 * registers), wide rows (>= 24 interior pixels) walk pixel blocks outer and
 * channel blocks inner; interior columns run 4 output pixels per pass (the
 * last block moved back to end at the last pixel), border columns one pixel
 * at a time with bounds checks, rows outside the input are skipped. Full channel
 * blocks use plain loads and stores; only the last partial block uses
 * vmaskmov (which never faults on masked-off lanes).
 */
#include <immintrin.h>

#include "kernels/kernels.h"

#define CR 8
#define ALWAYS_INLINE static inline __attribute__((always_inline))

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

typedef struct weights {
  __m256 bias, k[9];
} weights;

typedef struct row_args {
  const float *rows[3];
  bool valid[3];
  float *out;
  size_t cs;
  ptrdiff_t in_w, pad_left;
  size_t out_w, x_lo, x_hi;
} row_args;

ALWAYS_INLINE __m256 load(bool MASKED, const float *p, __m256i m) {
  return MASKED ? _mm256_maskload_ps(p, m) : _mm256_loadu_ps(p);
}

ALWAYS_INLINE void store(bool MASKED, float *p, __m256i m, __m256 v, __m256 vlo, __m256 vhi) {
  v = _mm256_min_ps(vhi, _mm256_max_ps(vlo, v));
  if (MASKED)
    _mm256_maskstore_ps(p, m, v);
  else
    _mm256_storeu_ps(p, v);
}

ALWAYS_INLINE void block(size_t P, size_t SW, bool MASKED, const row_args *r, size_t c0,
                         const weights *w, __m256i m, __m256 vlo, __m256 vhi, size_t x) {
  __m256 acc[4];
#pragma GCC unroll 4
  for (size_t o = 0; o < P; o++) acc[o] = w->bias;
  const size_t ix0 = x * SW - (size_t)r->pad_left;
#pragma GCC unroll 3
  for (size_t ky = 0; ky < 3; ky++) {
    if (!r->valid[ky]) continue;
    const float *p = r->rows[ky] + ix0 * r->cs + c0;
#pragma GCC unroll 16
    for (size_t j = 0; j < (P - 1) * SW + 3; j++) {
      const __m256 v = load(MASKED, p, m);
      p += r->cs;
#pragma GCC unroll 4
      for (size_t o = 0; o < P; o++)
        if (j >= o * SW && j - o * SW < 3)
          acc[o] = _mm256_fmadd_ps(v, w->k[ky * 3 + j - o * SW], acc[o]);
    }
  }
#pragma GCC unroll 4
  for (size_t o = 0; o < P; o++) store(MASKED, r->out + (x + o) * r->cs + c0, m, acc[o], vlo, vhi);
}

ALWAYS_INLINE void pixel(size_t SW, bool MASKED, const row_args *r, size_t c0, const weights *w,
                         __m256i m, __m256 vlo, __m256 vhi, size_t x) {
  __m256 acc = w->bias;
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - r->pad_left;
  for (size_t ky = 0; ky < 3; ky++) {
    if (!r->valid[ky]) continue;
    for (size_t kx = 0; kx < 3; kx++) {
      const ptrdiff_t ix = ix0 + (ptrdiff_t)kx;
      if (ix < 0 || ix >= r->in_w) continue;
      acc = _mm256_fmadd_ps(load(MASKED, r->rows[ky] + (size_t)ix * r->cs + c0, m),
                            w->k[ky * 3 + kx], acc);
    }
  }
  store(MASKED, r->out + x * r->cs + c0, m, acc, vlo, vhi);
}

ALWAYS_INLINE weights load_weights(const float *wb) {
  weights w;
  w.bias = _mm256_loadu_ps(wb);
  for (size_t t = 0; t < 9; t++) w.k[t] = _mm256_loadu_ps(wb + (t + 1) * CR);
  return w;
}

ALWAYS_INLINE __m256i tail_mask(size_t left) {
  return _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (left < CR ? left : CR)));
}

/* Narrow rows: channel block outer, weights loaded once per block. */
ALWAYS_INLINE void row_by_channel(size_t SW, bool MASKED, const row_args *r, size_t c0,
                                  const float *wb, __m256i m, float lo, float hi) {
  const weights w = load_weights(wb);
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t x = 0; x < r->x_lo; x++) pixel(SW, MASKED, r, c0, &w, m, vlo, vhi, x);
  if (r->x_hi - r->x_lo >= 4) {
    size_t x = r->x_lo;
    for (; x + 4 <= r->x_hi; x += 4) block(4, SW, MASKED, r, c0, &w, m, vlo, vhi, x);
    if (x < r->x_hi) block(4, SW, MASKED, r, c0, &w, m, vlo, vhi, r->x_hi - 4);
  } else {
    for (size_t x = r->x_lo; x < r->x_hi; x++) block(1, SW, MASKED, r, c0, &w, m, vlo, vhi, x);
  }
  for (size_t x = r->x_hi; x < r->out_w; x++) pixel(SW, MASKED, r, c0, &w, m, vlo, vhi, x);
}

/* Wide rows: pixel block outer, channel blocks inner (see avx512/dwconv.c). */
ALWAYS_INLINE void row_by_pixel(size_t SW, const row_args *r, const float *w, float lo,
                                float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256i all = _mm256_set1_epi32(-1);
  const size_t full = r->cs / CR * CR;
  const __m256i m = tail_mask(r->cs - full);
  for (size_t x = r->x_lo;; x += 4) {
    const size_t xb = x + 4 <= r->x_hi ? x : r->x_hi - 4;
    for (size_t c0 = 0; c0 < full; c0 += CR) {
      const weights wt = load_weights(w + c0 / CR * 10 * CR);
      block(4, SW, false, r, c0, &wt, all, vlo, vhi, xb);
    }
    if (full < r->cs) {
      const weights wt = load_weights(w + full / CR * 10 * CR);
      block(4, SW, true, r, full, &wt, m, vlo, vhi, xb);
    }
    if (x + 4 >= r->x_hi) break;
  }
  for (size_t c0 = 0; c0 < r->cs; c0 += CR) {
    const weights wt = load_weights(w + c0 / CR * 10 * CR);
    const __m256i mc = tail_mask(r->cs - c0);
    for (size_t x = 0; x < r->x_lo; x++) pixel(SW, true, r, c0, &wt, mc, vlo, vhi, x);
    for (size_t x = r->x_hi; x < r->out_w; x++) pixel(SW, true, r, c0, &wt, mc, vlo, vhi, x);
  }
}

ALWAYS_INLINE void row(size_t SW, const row_args *r, const float *w, float lo, float hi) {
  if (r->x_hi - r->x_lo >= 24) {
    row_by_pixel(SW, r, w, lo, hi);
    return;
  }
  const __m256i all = _mm256_set1_epi32(-1);
  size_t c0 = 0;
  for (; c0 + CR <= r->cs; c0 += CR)
    row_by_channel(SW, false, r, c0, w + c0 / CR * 10 * CR, all, lo, hi);
  if (c0 < r->cs)
    row_by_channel(SW, true, r, c0, w + c0 / CR * 10 * CR, tail_mask(r->cs - c0), lo, hi);
}

static void row_s1(const row_args *r, const float *w, float lo, float hi) { row(1, r, w, lo, hi); }
static void row_s2(const row_args *r, const float *w, float lo, float hi) { row(2, r, w, lo, hi); }

void wick_f32_dwconv3x3_ukernel__avx2(const wick_conv_shape *s, const float *input,
                                      const float *w, float *output, float lo, float hi) {
  const size_t c = (size_t)s->in_c, sw = (size_t)s->stride_w, out_w = (size_t)s->out_w;
  const ptrdiff_t pl = s->pad_left, in_w = s->in_w;
  size_t x_lo = pl > 0 ? ((size_t)pl + sw - 1) / sw : 0, x_hi = 0;
  if (in_w + pl >= 3) x_hi = (size_t)(in_w - 3 + pl) / sw + 1;
  if (x_hi > out_w) x_hi = out_w;
  if (x_lo > out_w) x_lo = out_w;
  if (x_hi < x_lo) x_hi = x_lo;
  row_args r;
  r.cs = c;
  r.in_w = in_w;
  r.pad_left = pl;
  r.out_w = out_w;
  r.x_lo = x_lo;
  r.x_hi = x_hi;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++) {
      const float *rows[3];
      for (int32_t ky = 0; ky < 3; ky++) {
        const int32_t iy = y * s->stride_h - s->pad_top + ky;
        r.valid[ky] = iy >= 0 && iy < s->in_h;
        rows[ky] = r.valid[ky] ? input + (((int64_t)n * s->in_h + iy) * s->in_w) * (int64_t)c
                               : input;
      }
      for (int k = 0; k < 3; k++) r.rows[k] = rows[k];
      r.out = output + (((int64_t)n * s->out_h + y) * s->out_w) * (int64_t)c;
      if (sw == 1)
        row_s1(&r, w, lo, hi);
      else
        row_s2(&r, w, lo, hi);
    }
}
