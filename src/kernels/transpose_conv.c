/*
 * transpose_conv.c — the second half of the GEMM form of TRANSPOSE_CONV
 * (portable C; the first half is an ordinary GEMM, gemm_driver.c).
 *
 * The GEMM multiplies every input pixel by the filter seen as a matrix of
 * (tap, output channel) rows, giving each pixel's contribution through each
 * tap: cols[pixel][ky * k_w + kx][o] = sum_i input[pixel][i] * filter[o][ky][kx][i].
 * The gather here then sums, for each output pixel, the contributions of the
 * taps that reach it (the same taps as the reference kernel's gather form,
 * src/kernels/reference/transpose_conv.c), adds the bias and clamps. Each
 * output is written once, taps in (ky, kx) order, so the result does not
 * depend on how rows are split over threads.
 */
#include "kernels/kernels.h"

/* The taps of output coordinate o along an axis: tap k reaches o from input i when
 * i * stride = o + pad - k, so they are k = r, r + stride, ... (r = (o + pad) mod stride) with
 * i = q, q - 1, ... (q = (o + pad) div stride), while 0 <= i < in and k < taps: the same taps,
 * in the same increasing order, as wick_tconv_source_index over every k. An axis_walk steps
 * o by one without dividing. */
typedef struct axis_walk {
  int64_t r, q; /* of o + pad, when it is >= 0 */
  int64_t t;    /* o + pad */
  int32_t stride, taps, in;
} axis_walk;

static inline axis_walk axis_start(int32_t o, int32_t pad, int32_t stride, int32_t taps,
                                   int32_t in) {
  axis_walk w = {0, 0, (int64_t)o + pad, stride, taps, in};
  if (w.t >= 0) w.r = w.t % stride, w.q = w.t / stride;
  return w;
}

static inline void axis_step(axis_walk *w) {
  if (++w->t < 0) return;
  if (w->t == 0) {
    w->r = 0, w->q = 0;
  } else if (++w->r == w->stride) {
    w->r = 0, w->q++;
  }
}

/* The count of taps at w's coordinate; *first_k, *first_i the first. */
static inline int32_t axis_taps(const axis_walk *w, int32_t *first_k, int64_t *first_i) {
  if (w->t < 0) return 0;
  int64_t k = w->r, i = w->q;
  if (i >= w->in) { /* skip the taps whose input lies past the end */
    const int64_t skip = i - w->in + 1;
    k += skip * w->stride;
    i -= skip;
  }
  if (k >= w->taps || i < 0) return 0;
  *first_k = (int32_t)k;
  *first_i = i;
  const int64_t by_k = (w->taps - 1 - k) / w->stride + 1, by_i = i + 1;
  return (int32_t)(by_k < by_i ? by_k : by_i);
}

/* What every output pixel of one gather call shares. */
typedef struct gather_ctx {
  const wick_conv_shape *s;
  const float *cols, *bias;
  size_t pixel_floats;
  int32_t col_row0;
  float lo, hi;
} gather_ctx;

/* One output pixel of c channels: the sum of its ny x nx taps' contributions (taps from (ky0,
 * kx0), inputs from (iy0, ix0) down), taps in (ky, kx) order, 0 with none, plus the bias,
 * clamped. Always inlined: the call with c = 1 (segmentation masks) drops the channel loops. */
static inline __attribute__((always_inline)) void gather_pixel(const gather_ctx *g, int32_t ky0,
                                                               int64_t iy0, int32_t ny, int32_t kx0,
                                                               int64_t ix0, int32_t nx, size_t c,
                                                               float *restrict out) {
  const wick_conv_shape *s = g->s;
  bool first = true;
  for (int32_t a = 0; a < ny && nx; a++) {
    const size_t ky = (size_t)ky0 + (size_t)a * (size_t)s->stride_h;
    const size_t row = (size_t)(iy0 - a - g->col_row0) * (size_t)s->in_w;
    for (int32_t b = 0; b < nx; b++) {
      const size_t kx = (size_t)kx0 + (size_t)b * (size_t)s->stride_w;
      const float *restrict src =
          g->cols + (row + (size_t)(ix0 - b)) * g->pixel_floats + (ky * (size_t)s->k_w + kx) * c;
      if (first)
        for (size_t o = 0; o < c; o++) out[o] = src[o];
      else
        for (size_t o = 0; o < c; o++) out[o] += src[o];
      first = false;
    }
  }
  if (first)
    for (size_t o = 0; o < c; o++) out[o] = 0.0f;
  if (g->bias)
    for (size_t o = 0; o < c; o++) out[o] += g->bias[o];
  for (size_t o = 0; o < c; o++) {
    float v = out[o];
    out[o] = v < g->lo ? g->lo : (v > g->hi ? g->hi : v);
  }
}

void wick_f32_tconv_gather(const wick_conv_shape *s, const float *cols, int32_t col_row0,
                           const float *bias, int32_t y0, int32_t y1, float *output, float lo,
                           float hi) {
  const size_t c = (size_t)s->out_c, taps = (size_t)s->k_h * (size_t)s->k_w;
  const size_t pixel_floats = taps * c;
  /* Columns in tiles: output column x = ix * stride + kx takes exactly tap kx of input ix
   * (the 2x2 stride-2 upsampling of segmentation decoders) */
  const bool tiled_columns = s->k_w == s->stride_w && s->pad_left == 0 &&
                             (int64_t)s->out_w == (int64_t)s->in_w * s->stride_w;
  const gather_ctx g = {s, cols, bias, pixel_floats, col_row0, lo, hi};
  axis_walk wy = axis_start(y0, s->pad_top, s->stride_h, s->k_h, s->in_h);
  for (int32_t y = y0; y < y1; y++, axis_step(&wy)) {
    int32_t ky0 = 0;
    int64_t iy0 = 0;
    const int32_t ny = axis_taps(&wy, &ky0, &iy0);
    if (ny == 1 && tiled_columns) {          /* each output pixel of the row has exactly one tap */
      const size_t run = (size_t)s->k_w * c; /* taps kx = 0.. of one input pixel, contiguous */
      const float *src =
          cols + (size_t)(iy0 - col_row0) * (size_t)s->in_w * pixel_floats + (size_t)ky0 * run;
      float *out = output + (size_t)(y - y0) * (size_t)s->out_w * c;
      for (int32_t ix = 0; ix < s->in_w; ix++, src += pixel_floats, out += run)
        for (size_t i = 0, o = 0; i < run; i++, o = o + 1 == c ? 0 : o + 1) {
          float v = src[i];
          if (bias) v += bias[o];
          out[i] = v < lo ? lo : (v > hi ? hi : v);
        }
      continue;
    }
    axis_walk wx = axis_start(0, s->pad_left, s->stride_w, s->k_w, s->in_w);
    for (int32_t x = 0; x < s->out_w; x++, axis_step(&wx)) {
      float *restrict out = output + ((size_t)(y - y0) * (size_t)s->out_w + (size_t)x) * c;
      int32_t kx0 = 0;
      int64_t ix0 = 0;
      const int32_t nx = ny ? axis_taps(&wx, &kx0, &ix0) : 0;
      if (c == 1) /* one channel (segmentation masks) */
        gather_pixel(&g, ky0, iy0, ny, kx0, ix0, nx, 1, out);
      else
        gather_pixel(&g, ky0, iy0, ny, kx0, ix0, nx, c, out);
    }
  }
}

static inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void wick_tconv_input_rows(const wick_conv_shape *s, int32_t y0, int32_t y1, int32_t *first,
                           int32_t *last) {
  /* Output row y reads input row iy through tap ky when iy * stride = y + pad - ky. */
  int64_t lo = -floor_div(-((int64_t)y0 + s->pad_top - (s->k_h - 1)), s->stride_h); /* ceil */
  int64_t hi = floor_div((int64_t)y1 - 1 + s->pad_top, s->stride_h);
  if (lo < 0) lo = 0;
  if (hi > (int64_t)s->in_h - 1) hi = (int64_t)s->in_h - 1;
  if (lo > hi) lo = hi + 1;
  *first = (int32_t)lo;
  *last = (int32_t)hi;
}
