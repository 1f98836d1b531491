/*
 * template/dwconv.h — DEPTHWISE_CONV_2D (multiplier 1) written once in the
 * vector vocabulary of <isa>/simd.h and compiled per ISA: avx512/dwconv.c,
 * avx2/dwconv.c and neon/dwconv.c include their simd.h, define DW_BLOCK_K3 /
 * DW_BLOCK_K5 (output pixels per register block) and then this file.
 *
 * Three entry points (kernels.h, wick_f32_dwconv_fn), each computing the
 * output rows [row_begin, row_end) of the flattened batch x out_h rows, so a
 * thread pool can split an op into independent row ranges:
 *
 *   dwconv3x3, dwconv5x5   square filters, dilation 1, strides 1 or 2 in each
 *                          direction; register-blocked as below.
 *   dwconv                 any filter size, stride and dilation: blocks of 4
 *                          output pixels, weights read from L1 per tap.
 *
 * Register blocking (3x3 / 5x5): loop order batch, output row, then either
 * VL-channel block and output column (narrow rows: bias and the K*K weight
 * vectors stay in registers for the whole row; on AVX2 the 5x5 weights spill
 * to L1) or column block and channel block (rows of >= 3 blocks of interior
 * pixels: each block consumes whole pixels while their cache lines are hot,
 * reloading the weights from L1). Columns whose taps all lie inside the input
 * run in blocks of P output pixels; each input vector is loaded once per
 * block and feeds every output pixel it touches (up to K at stride 1):
 *
 *     input row ky:   c0  c1  c2  c3  c4  c5 ...     (one VL-channel vector each)
 *     out x0 taps     c0  c1  c2
 *     out x1 taps         c1  c2  c3
 *
 * A row of n >= P interior pixels runs floor(n/P) blocks plus one block moved
 * back to end at the last pixel (it recomputes a few pixels with identical
 * results: cheaper than narrower tails); shorter rows use half blocks the same
 * way, then single pixels. Border columns (padding) run one pixel at a time
 * over their valid taps only, 4 channel vectors at once (dw_borders: 4 FMA
 * chains; on 4x4 and 8x8 maps most pixels are border pixels); input rows
 * outside the image are skipped (never read).
 * Full channel blocks use plain loads and stores; the last partial block is
 * masked (masked loads never fault on masked-off lanes). Packed weights
 * (kernels.h) are zero-padded to VL channels.
 *
 * Epilogue: clamp to [lo, hi] (the fused activation) on the store, then, when
 * args->post is set, that activation runs in place over each finished output
 * row while it is still in L1 (graph-level fusion of SiLU, hard-swish, ...).
 *
 * Accumulation order per output: bias, then taps in (ky, kx) order with one
 * FMA each — the reference's order, up to FMA's single rounding.
 */
#include "kernels/kernels.h"

#define KMAX 5

/* Wide-row pixel blocks (row_by_pixel): by default the same as the
 * narrow-row ones, with all weights held in registers. */
#ifndef DW_WIDE_BLOCK_K3
#define DW_WIDE_BLOCK_K3 DW_BLOCK_K3
#endif
#ifndef DW_WIDE_BLOCK_K5
#define DW_WIDE_BLOCK_K5 DW_BLOCK_K5
#endif
#define ALWAYS_INLINE static inline __attribute__((always_inline))

typedef struct dw_weights {
  vf bias, k[KMAX * KMAX];
} dw_weights;

/* One output row: its input rows (rows[ky] is read only if valid[ky]). */
typedef struct row_args {
  const float *rows[KMAX];
  bool valid[KMAX];
  float *out; /* output pixel 0 of the row */
  size_t cs;  /* pixel stride (channels) */
  ptrdiff_t in_w, pad_left;
  size_t out_w, x_lo, x_hi; /* interior columns [x_lo, x_hi) */
} row_args;

ALWAYS_INLINE vf ld(bool MASKED, const float *p, vmask m) {
  return MASKED ? vloadm(p, m) : vload(p);
}

ALWAYS_INLINE void st(bool MASKED, float *p, vmask m, vf v, vf vlo, vf vhi) {
  v = vmin(vhi, vmax(vlo, v));
  if (MASKED)
    vstorem(p, m, v);
  else
    vstore(p, v);
}

/* P interior output pixels starting at column x. */
ALWAYS_INLINE void dw_block(size_t K, size_t P, size_t SW, bool MASKED, const row_args *r,
                            size_t c0, const dw_weights *w, vmask m, vf vlo, vf vhi, size_t x) {
  vf acc[8];
#pragma GCC unroll 8
  for (size_t o = 0; o < P; o++) acc[o] = w->bias;
  const size_t ix0 = x * SW - (size_t)r->pad_left; /* >= 0 for interior columns */
#pragma GCC unroll 5
  for (size_t ky = 0; ky < K; ky++) {
    if (!r->valid[ky]) continue;
    const float *p = r->rows[ky] + ix0 * r->cs + c0;
#pragma GCC unroll 32
    for (size_t j = 0; j < (P - 1) * SW + K; j++) {
      const vf v = ld(MASKED, p, m);
      p += r->cs;
#pragma GCC unroll 8
      for (size_t o = 0; o < P; o++)
        if (j >= o * SW && j - o * SW < K) acc[o] = vfma(v, w->k[ky * K + j - o * SW], acc[o]);
    }
  }
#pragma GCC unroll 8
  for (size_t o = 0; o < P; o++) st(MASKED, r->out + (x + o) * r->cs + c0, m, acc[o], vlo, vhi);
}

/* One border output pixel x, G channel vectors from c0 at once (wb: the packed block of c0,
 * blocks `stride` floats apart): G independent FMA chains, where one vector alone would wait
 * out the FMA latency at each tap — on small maps (4x4, 8x8) most pixels are border pixels.
 * Only the taps inside the input are visited: the valid columns [kx_lo, kx_hi) are computed
 * once, rows outside the image are skipped. Same order per output as dw_block (bias, then the
 * valid taps in (ky, kx) order), so the same bits. MASKED only with G = 1 (the tail block). */
ALWAYS_INLINE void dw_pixel_group(size_t K, size_t G, size_t SW, bool MASKED, const row_args *r,
                                  size_t c0, const float *wb, size_t stride, vmask m, vf vlo,
                                  vf vhi, size_t x) {
  vf acc[4];
  const ptrdiff_t ix0 = (ptrdiff_t)(x * SW) - r->pad_left;
  const size_t kx_lo = ix0 < 0 ? (size_t)-ix0 : 0;
  const ptrdiff_t right = r->in_w - ix0; /* columns left in the input from ix0 */
  const size_t kx_hi = right <= 0 ? 0 : (size_t)right < K ? (size_t)right : K;
#pragma GCC unroll 4
  for (size_t g = 0; g < G; g++) acc[g] = vload(wb + g * stride);
  for (size_t ky = 0; ky < K && kx_lo < kx_hi; ky++) {
    if (!r->valid[ky]) continue;
    const float *p = r->rows[ky] + (size_t)(ix0 + (ptrdiff_t)kx_lo) * r->cs + c0;
    const float *wk = wb + (1 + ky * K) * VL;
    for (size_t kx = kx_lo; kx < kx_hi; kx++, p += r->cs) {
#pragma GCC unroll 4
      for (size_t g = 0; g < G; g++)
        acc[g] = vfma(ld(MASKED, p + g * VL, m), vload(wk + g * stride + kx * VL), acc[g]);
    }
  }
#pragma GCC unroll 4
  for (size_t g = 0; g < G; g++) st(MASKED, r->out + x * r->cs + c0 + g * VL, m, acc[g], vlo, vhi);
}

/* dw_pixel_group over the border columns [0, x_lo) and [x_hi, out_w) of a row. */
ALWAYS_INLINE void border_columns(size_t K, size_t G, size_t SW, bool MASKED, const row_args *r,
                                  size_t c0, const float *wb, size_t stride, vmask m, vf vlo,
                                  vf vhi) {
  for (size_t x = 0; x < r->x_lo; x++)
    dw_pixel_group(K, G, SW, MASKED, r, c0, wb, stride, m, vlo, vhi, x);
  for (size_t x = r->x_hi; x < r->out_w; x++)
    dw_pixel_group(K, G, SW, MASKED, r, c0, wb, stride, m, vlo, vhi, x);
}

/* The border columns of a row, every channel: groups of 4 channel vectors (their weights stay
 * in L1 across the row's border pixels), then single vectors, then the masked tail. */
ALWAYS_INLINE void dw_borders(size_t K, size_t SW, const row_args *r, const float *w, float lo,
                              float hi) {
  if (r->x_lo == 0 && r->x_hi == r->out_w) return;
  const vf vlo = vset1(lo), vhi = vset1(hi);
  const size_t stride = (K * K + 1) * VL, full = r->cs / VL * VL;
  size_t c0 = 0;
  for (; c0 + 4 * VL <= full; c0 += 4 * VL)
    border_columns(K, 4, SW, false, r, c0, w + c0 / VL * stride, stride, vmask_all(), vlo, vhi);
  for (; c0 < full; c0 += VL)
    border_columns(K, 1, SW, false, r, c0, w + c0 / VL * stride, stride, vmask_all(), vlo, vhi);
  if (full < r->cs)
    border_columns(K, 1, SW, true, r, full, w + full / VL * stride, stride,
                   vmask_tail(r->cs - full), vlo, vhi);
}

ALWAYS_INLINE dw_weights load_weights(size_t K, const float *wb) {
  dw_weights w;
  w.bias = vload(wb);
#pragma GCC unroll 25
  for (size_t t = 0; t < K * K; t++) w.k[t] = vload(wb + (t + 1) * VL);
  return w;
}

/* Narrow rows, interior columns: channel block outer, weights loaded once per block (the
 * border columns: dw_borders). */
ALWAYS_INLINE void row_by_channel(size_t K, size_t P, size_t SW, bool MASKED, const row_args *r,
                                  size_t c0, const float *wb, vmask m, float lo, float hi) {
  const size_t n = r->x_hi - r->x_lo, H = P / 2;
  if (n == 0) return;
  const dw_weights w = load_weights(K, wb);
  const vf vlo = vset1(lo), vhi = vset1(hi);
  if (n >= P) {
    size_t x = r->x_lo;
    for (; x + P <= r->x_hi; x += P) dw_block(K, P, SW, MASKED, r, c0, &w, m, vlo, vhi, x);
    if (x < r->x_hi) dw_block(K, P, SW, MASKED, r, c0, &w, m, vlo, vhi, r->x_hi - P);
  } else if (H >= 2 && n >= H) {
    dw_block(K, H, SW, MASKED, r, c0, &w, m, vlo, vhi, r->x_lo);
    if (n > H) dw_block(K, H, SW, MASKED, r, c0, &w, m, vlo, vhi, r->x_hi - H);
  } else {
    for (size_t x = r->x_lo; x < r->x_hi; x++)
      dw_block(K, 1, SW, MASKED, r, c0, &w, m, vlo, vhi, x);
  }
}

/* P interior output pixels from column x like dw_block, but reading the
 * weights one filter row (K vectors) at a time from the packed block wb:
 * K + P + 1 vector registers instead of K*K + P + 1, so with 16 registers
 * (AVX2) a block can hold 8 accumulators — 8 independent FMA chains, enough
 * to cover FMA latency x 2 pipes — where the all-weights-in-registers form
 * fits only 4. Same order per output (bias, taps in (ky, kx) order). */
ALWAYS_INLINE void dw_block_rowwise(size_t K, size_t P, size_t SW, bool MASKED, const row_args *r,
                                    size_t c0, const float *wb, vmask m, vf vlo, vf vhi, size_t x) {
  vf acc[8];
  const vf bias = vload(wb);
#pragma GCC unroll 8
  for (size_t o = 0; o < P; o++) acc[o] = bias;
  const size_t ix0 = x * SW - (size_t)r->pad_left; /* >= 0 for interior columns */
#pragma GCC unroll 5
  for (size_t ky = 0; ky < K; ky++) {
    if (!r->valid[ky]) continue;
    vf wk[KMAX];
#pragma GCC unroll 5
    for (size_t kx = 0; kx < K; kx++) wk[kx] = vload(wb + (1 + ky * K + kx) * VL);
    const float *p = r->rows[ky] + ix0 * r->cs + c0;
#pragma GCC unroll 32
    for (size_t j = 0; j < (P - 1) * SW + K; j++) {
      const vf v = ld(MASKED, p, m);
      p += r->cs;
#pragma GCC unroll 8
      for (size_t o = 0; o < P; o++)
        if (j >= o * SW && j - o * SW < K) acc[o] = vfma(v, wk[j - o * SW], acc[o]);
    }
  }
#pragma GCC unroll 8
  for (size_t o = 0; o < P; o++) st(MASKED, r->out + (x + o) * r->cs + c0, m, acc[o], vlo, vhi);
}

/* The interior columns [x, x + P) of a wide row, every channel block. */
ALWAYS_INLINE void wide_columns(size_t K, size_t P, size_t SW, bool ROWWISE, const row_args *r,
                                const float *w, vf vlo, vf vhi, size_t x) {
  const size_t full = r->cs / VL * VL, stride = (K * K + 1) * VL;
  for (size_t c0 = 0; c0 < full; c0 += VL) {
    if (ROWWISE) {
      dw_block_rowwise(K, P, SW, false, r, c0, w + c0 / VL * stride, vmask_all(), vlo, vhi, x);
    } else {
      const dw_weights wt = load_weights(K, w + c0 / VL * stride);
      dw_block(K, P, SW, false, r, c0, &wt, vmask_all(), vlo, vhi, x);
    }
  }
  if (full < r->cs) {
    const vmask m = vmask_tail(r->cs - full);
    if (ROWWISE) {
      dw_block_rowwise(K, P, SW, true, r, full, w + full / VL * stride, m, vlo, vhi, x);
    } else {
      const dw_weights wt = load_weights(K, w + full / VL * stride);
      dw_block(K, P, SW, true, r, full, &wt, m, vlo, vhi, x);
    }
  }
}

/* Wide rows: pixel block outer, channel blocks inner, so each block consumes
 * whole pixels (all their cache lines) while they are hot; the weights are
 * reloaded per block from L1. Blocks of PW pixels (DW_WIDE_BLOCK_K*: wider
 * than P where the ISA reads the weights row by row, see dw_block_rowwise)
 * while they fit, then of P, the last one moved back to end at the last
 * interior pixel (the caller guarantees >= 3P interior pixels). */
ALWAYS_INLINE void row_by_pixel(size_t K, size_t P, size_t PW, size_t SW, const row_args *r,
                                const float *w, float lo, float hi) {
  const vf vlo = vset1(lo), vhi = vset1(hi);
  const bool rowwise = PW != P;
  size_t x = r->x_lo;
  while (x < r->x_hi) {
    const size_t left = r->x_hi - x;
    if (rowwise && left >= PW) {
      wide_columns(K, PW, SW, true, r, w, vlo, vhi, x);
      x += PW;
    } else if (left >= P) {
      wide_columns(K, P, SW, false, r, w, vlo, vhi, x);
      x += P;
    } else {
      wide_columns(K, P, SW, false, r, w, vlo, vhi, r->x_hi - P);
      x = r->x_hi;
    }
  }
  dw_borders(K, SW, r, w, lo, hi);
}

ALWAYS_INLINE void dw_row(size_t K, size_t P, size_t PW, size_t SW, const row_args *r,
                          const float *w, float lo, float hi) {
  if (r->x_hi - r->x_lo >= 3 * P) {
    row_by_pixel(K, P, PW, SW, r, w, lo, hi);
    return;
  }
  const size_t stride = (K * K + 1) * VL;
  size_t c0 = 0;
  for (; c0 + VL <= r->cs; c0 += VL)
    row_by_channel(K, P, SW, false, r, c0, w + c0 / VL * stride, vmask_all(), lo, hi);
  if (c0 < r->cs)
    row_by_channel(K, P, SW, true, r, c0, w + c0 / VL * stride, vmask_tail(r->cs - c0), lo, hi);
  dw_borders(K, SW, r, w, lo, hi);
}

static void row_k3_s1(const row_args *r, const float *w, float lo, float hi) {
  dw_row(3, DW_BLOCK_K3, DW_WIDE_BLOCK_K3, 1, r, w, lo, hi);
}
static void row_k3_s2(const row_args *r, const float *w, float lo, float hi) {
  dw_row(3, DW_BLOCK_K3, DW_WIDE_BLOCK_K3, 2, r, w, lo, hi);
}
static void row_k5_s1(const row_args *r, const float *w, float lo, float hi) {
  dw_row(5, DW_BLOCK_K5, DW_WIDE_BLOCK_K5, 1, r, w, lo, hi);
}
static void row_k5_s2(const row_args *r, const float *w, float lo, float hi) {
  dw_row(5, DW_BLOCK_K5, DW_WIDE_BLOCK_K5, 2, r, w, lo, hi);
}

/* Interior columns [*lo, *hi) of the shape's rows, as size_t. */
static void interior_columns(const wick_conv_shape *s, size_t *lo, size_t *hi) {
  int32_t x_lo, x_hi;
  wick_conv_interior_columns(s, &x_lo, &x_hi);
  *lo = (size_t)x_lo;
  *hi = (size_t)x_hi;
}

static void run_square(size_t K, const wick_f32_dwconv_args *a, size_t row_begin, size_t row_end) {
  const wick_conv_shape *s = a->shape;
  const size_t c = (size_t)s->in_c, sw = (size_t)s->stride_w, out_w = (size_t)s->out_w;
  row_args r;
  r.cs = c;
  r.in_w = s->in_w;
  r.pad_left = s->pad_left;
  r.out_w = out_w;
  interior_columns(s, &r.x_lo, &r.x_hi);
  void (*row_fn)(const row_args *, const float *, float, float) =
      K == 3 ? (sw == 1 ? row_k3_s1 : row_k3_s2) : (sw == 1 ? row_k5_s1 : row_k5_s2);
  for (size_t row = row_begin; row < row_end; row++) {
    const size_t n = row / (size_t)s->out_h, y = row % (size_t)s->out_h;
    for (size_t ky = 0; ky < K; ky++) {
      const ptrdiff_t iy = (ptrdiff_t)(y * (size_t)s->stride_h) - s->pad_top + (ptrdiff_t)ky;
      r.valid[ky] = iy >= 0 && iy < s->in_h;
      r.rows[ky] = r.valid[ky]
                       ? a->input + ((n * (size_t)s->in_h + (size_t)iy) * (size_t)s->in_w) * c
                       : a->input;
    }
    r.out = a->output + ((n * (size_t)s->out_h + y) * out_w) * c;
    row_fn(&r, a->weights, a->lo, a->hi);
    if (a->post) a->post(out_w * c, r.out, r.out);
  }
}

void ISA_SUFFIX(wick_f32_dwconv3x3_ukernel)(const wick_f32_dwconv_args *a, size_t row_begin,
                                            size_t row_end) {
  run_square(3, a, row_begin, row_end);
}

void ISA_SUFFIX(wick_f32_dwconv5x5_ukernel)(const wick_f32_dwconv_args *a, size_t row_begin,
                                            size_t row_end) {
  run_square(5, a, row_begin, row_end);
}

/* ---- any filter size, stride and dilation ---- */

typedef struct gen_row {
  const float *in; /* input image n */
  const float *w;  /* packed weights */
  float *out;      /* output row */
  size_t cs, kh, kw, sw, dw, out_w, x_lo, x_hi;
  ptrdiff_t in_w, pad_left, iy0; /* input row of ky = 0 */
  size_t dh, in_h;
} gen_row;

/* P output pixels from column x (interior when CHECK is false). */
ALWAYS_INLINE void gen_block(size_t P, bool CHECK, bool MASKED, const gen_row *g, size_t c0,
                             vmask m, vf vlo, vf vhi, size_t x) {
  const float *wb = g->w + c0 / VL * (g->kh * g->kw + 1) * VL;
  vf acc[4];
#pragma GCC unroll 4
  for (size_t o = 0; o < P; o++) acc[o] = vload(wb);
  const ptrdiff_t ix0 = (ptrdiff_t)(x * g->sw) - g->pad_left;
  for (size_t ky = 0; ky < g->kh; ky++) {
    const ptrdiff_t iy = g->iy0 + (ptrdiff_t)(ky * g->dh);
    if (iy < 0 || iy >= (ptrdiff_t)g->in_h) continue;
    const float *row = g->in + (size_t)iy * (size_t)g->in_w * g->cs + c0;
    for (size_t kx = 0; kx < g->kw; kx++) {
      const vf wv = vload(wb + (1 + ky * g->kw + kx) * VL);
#pragma GCC unroll 4
      for (size_t o = 0; o < P; o++) {
        const ptrdiff_t ix = ix0 + (ptrdiff_t)(o * g->sw + kx * g->dw);
        if (CHECK && (ix < 0 || ix >= g->in_w)) continue;
        acc[o] = vfma(ld(MASKED, row + (size_t)ix * g->cs, m), wv, acc[o]);
      }
    }
  }
#pragma GCC unroll 4
  for (size_t o = 0; o < P; o++) st(MASKED, g->out + (x + o) * g->cs + c0, m, acc[o], vlo, vhi);
}

ALWAYS_INLINE void gen_channels(bool MASKED, const gen_row *g, size_t c0, vmask m, vf vlo, vf vhi) {
  for (size_t x = 0; x < g->x_lo; x++) gen_block(1, true, MASKED, g, c0, m, vlo, vhi, x);
  size_t x = g->x_lo;
  for (; x + 4 <= g->x_hi; x += 4) gen_block(4, false, MASKED, g, c0, m, vlo, vhi, x);
  for (; x < g->x_hi; x++) gen_block(1, false, MASKED, g, c0, m, vlo, vhi, x);
  for (x = g->x_hi; x < g->out_w; x++) gen_block(1, true, MASKED, g, c0, m, vlo, vhi, x);
}

void ISA_SUFFIX(wick_f32_dwconv_ukernel)(const wick_f32_dwconv_args *a, size_t row_begin,
                                         size_t row_end) {
  const wick_conv_shape *s = a->shape;
  gen_row g;
  g.w = a->weights;
  g.cs = (size_t)s->in_c;
  g.kh = (size_t)s->k_h;
  g.kw = (size_t)s->k_w;
  g.sw = (size_t)s->stride_w;
  g.dw = (size_t)s->dilation_w;
  g.dh = (size_t)s->dilation_h;
  g.out_w = (size_t)s->out_w;
  g.in_w = s->in_w;
  g.in_h = (size_t)s->in_h;
  g.pad_left = s->pad_left;
  interior_columns(s, &g.x_lo, &g.x_hi);
  const vf vlo = vset1(a->lo), vhi = vset1(a->hi);
  for (size_t row = row_begin; row < row_end; row++) {
    const size_t n = row / (size_t)s->out_h, y = row % (size_t)s->out_h;
    g.in = a->input + n * (size_t)s->in_h * (size_t)s->in_w * g.cs;
    g.iy0 = (ptrdiff_t)(y * (size_t)s->stride_h) - s->pad_top;
    g.out = a->output + ((n * (size_t)s->out_h + y) * g.out_w) * g.cs;
    size_t c0 = 0;
    for (; c0 + VL <= g.cs; c0 += VL) gen_channels(false, &g, c0, vmask_all(), vlo, vhi);
    if (c0 < g.cs) gen_channels(true, &g, c0, vmask_tail(g.cs - c0), vlo, vhi);
    if (a->post) a->post(g.out_w * g.cs, g.out, g.out);
  }
}
