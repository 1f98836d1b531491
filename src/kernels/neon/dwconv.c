/*
 * neon/dwconv.c — DEPTHWISE_CONV_2D 3x3 (multiplier 1, dilation 1, strides
 * 1 or 2, any padding) for AArch64 NEON.
 *
 * The scheme of avx2/dwconv.c with 4-channel blocks: per output row and
 * channel block the bias and nine weight vectors stay in registers; interior
 * columns (all taps inside the input) run 4 output pixels per pass, each input
 * vector loaded once and fed to every output pixel it touches (the last block
 * is moved back to end at the last pixel; it recomputes identical values),
 * border columns run one pixel at a time with bounds checks, and input rows
 * outside the image are skipped (never read).
 *
 * NEON has no masked loads, so a last partial block of c % 4 channels goes
 * through a 4-float staging copy per load and store (channel counts in real
 * models are almost always multiples of 4; the path exists for correctness).
 * Packed weights (kernels.h) are zero-padded to 4 channels.
 *
 * Computes output rows [row_begin, row_end) of the batch * out_h rows, then
 * args->post (a fused activation) over each finished row.
 *
 * Accumulation order per output: bias, then taps in (ky, kx) order with one
 * FMA each — the reference's order, up to FMA's single rounding.
 */
#include <arm_neon.h>
#include <string.h>

#include "kernels/kernels.h"

#define CR 4
#define ALWAYS_INLINE static inline __attribute__((always_inline))

typedef struct weights {
  float32x4_t bias, k[9];
} weights;

/* One output row: its three input rows (rows[ky] is read only if valid[ky]). */
typedef struct row_args {
  const float *rows[3];
  bool valid[3];
  float *out;
  size_t cs; /* pixel stride (channels) */
  ptrdiff_t in_w, pad_left;
  size_t out_w, x_lo, x_hi; /* interior columns [x_lo, x_hi) */
} row_args;

/* `cols` < CR: a partial block. */
ALWAYS_INLINE float32x4_t load(size_t cols, const float *p) {
  if (cols >= CR) return vld1q_f32(p);
  float tmp[CR] = {0};
  memcpy(tmp, p, cols * sizeof(float));
  return vld1q_f32(tmp);
}

ALWAYS_INLINE void store(size_t cols, float *p, float32x4_t v, float32x4_t vlo, float32x4_t vhi) {
  v = vminq_f32(vmaxq_f32(v, vlo), vhi);
  if (cols >= CR) {
    vst1q_f32(p, v);
    return;
  }
  float tmp[CR];
  vst1q_f32(tmp, v);
  memcpy(p, tmp, cols * sizeof(float));
}

/* P output pixels from x on, all taps inside the input. */
ALWAYS_INLINE void block(size_t P, size_t SW, size_t cols, const row_args *r, size_t c0,
                         const weights *w, float32x4_t vlo, float32x4_t vhi, size_t x) {
  float32x4_t acc[4];
#pragma GCC unroll 4
  for (size_t o = 0; o < P; o++) acc[o] = w->bias;
  const size_t ix0 = x * SW - (size_t)r->pad_left;
#pragma GCC unroll 3
  for (size_t ky = 0; ky < 3; ky++) {
    if (!r->valid[ky]) continue;
    const float *p = r->rows[ky] + ix0 * r->cs + c0;
#pragma GCC unroll 16
    for (size_t j = 0; j < (P - 1) * SW + 3; j++) {
      const float32x4_t v = load(cols, p);
      p += r->cs;
#pragma GCC unroll 4
      for (size_t o = 0; o < P; o++)
        if (j >= o * SW && j - o * SW < 3) acc[o] = vfmaq_f32(acc[o], v, w->k[ky * 3 + j - o * SW]);
    }
  }
#pragma GCC unroll 4
  for (size_t o = 0; o < P; o++) store(cols, r->out + (x + o) * r->cs + c0, acc[o], vlo, vhi);
}

/* One output pixel with bounds checks (border columns). */
ALWAYS_INLINE void pixel(size_t SW, size_t cols, const row_args *r, size_t c0, const weights *w,
                         float32x4_t vlo, float32x4_t vhi, size_t x) {
  float32x4_t acc = w->bias;
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - r->pad_left;
  for (size_t ky = 0; ky < 3; ky++) {
    if (!r->valid[ky]) continue;
    for (size_t kx = 0; kx < 3; kx++) {
      const ptrdiff_t ix = ix0 + (ptrdiff_t)kx;
      if (ix < 0 || ix >= r->in_w) continue;
      acc = vfmaq_f32(acc, load(cols, r->rows[ky] + (size_t)ix * r->cs + c0), w->k[ky * 3 + kx]);
    }
  }
  store(cols, r->out + x * r->cs + c0, acc, vlo, vhi);
}

ALWAYS_INLINE void row_block(size_t SW, size_t cols, const row_args *r, size_t c0,
                             const float *wb, float lo, float hi) {
  weights w;
  w.bias = vld1q_f32(wb);
  for (size_t t = 0; t < 9; t++) w.k[t] = vld1q_f32(wb + (t + 1) * CR);
  const float32x4_t vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
  for (size_t x = 0; x < r->x_lo; x++) pixel(SW, cols, r, c0, &w, vlo, vhi, x);
  if (r->x_hi - r->x_lo >= 4) {
    size_t x = r->x_lo;
    for (; x + 4 <= r->x_hi; x += 4) block(4, SW, cols, r, c0, &w, vlo, vhi, x);
    if (x < r->x_hi) block(4, SW, cols, r, c0, &w, vlo, vhi, r->x_hi - 4);
  } else {
    for (size_t x = r->x_lo; x < r->x_hi; x++) block(1, SW, cols, r, c0, &w, vlo, vhi, x);
  }
  for (size_t x = r->x_hi; x < r->out_w; x++) pixel(SW, cols, r, c0, &w, vlo, vhi, x);
}

ALWAYS_INLINE void row(size_t SW, const row_args *r, const float *w, float lo, float hi) {
  size_t c0 = 0;
  for (; c0 + CR <= r->cs; c0 += CR) row_block(SW, CR, r, c0, w + c0 / CR * 10 * CR, lo, hi);
  if (c0 < r->cs) row_block(SW, r->cs - c0, r, c0, w + c0 / CR * 10 * CR, lo, hi);
}

static void row_s1(const row_args *r, const float *w, float lo, float hi) { row(1, r, w, lo, hi); }
static void row_s2(const row_args *r, const float *w, float lo, float hi) { row(2, r, w, lo, hi); }

void wick_f32_dwconv3x3_ukernel__neon(const wick_f32_dwconv_args *a, size_t row_begin,
                                      size_t row_end) {
  const wick_conv_shape *s = a->shape;
  const float *input = a->input, *w = a->weights;
  const float lo = a->lo, hi = a->hi;
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
  for (size_t row = row_begin; row < row_end; row++) {
    const int64_t n = (int64_t)(row / (size_t)s->out_h), y = (int64_t)(row % (size_t)s->out_h);
    for (int32_t ky = 0; ky < 3; ky++) {
      const int64_t iy = y * s->stride_h - s->pad_top + ky;
      r.valid[ky] = iy >= 0 && iy < s->in_h;
      r.rows[ky] = r.valid[ky] ? input + ((n * s->in_h + iy) * s->in_w) * (int64_t)c : input;
    }
    r.out = a->output + ((n * s->out_h + y) * s->out_w) * (int64_t)c;
    if (sw == 1)
      row_s1(&r, w, lo, hi);
    else
      row_s2(&r, w, lo, hi);
    if (a->post) a->post(out_w * c, r.out, r.out);
  }
}
