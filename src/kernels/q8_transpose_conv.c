/*
 * q8_transpose_conv.c — int8 TRANSPOSE_CONV on the indirect-GEMM
 * microkernels (layouts in q8.h), as stride_h x stride_w sub-convolutions.
 *
 * Output pixel (y, x) is reached by the taps ky = ry + a * stride_h and
 * kx = rx + b * stride_w, where ry = (y + pad_top) mod stride_h and
 * rx = (x + pad_left) mod stride_w, reading input pixel
 * ((y + pad_top - ky) / stride_h, (x + pad_left - kx) / stride_w). So the
 * output pixels of one phase (ry, rx) form an ordinary convolution with the
 * sub-filter of those taps: each phase's sub-filter is packed as a GEMM of
 * its own, and each output pixel's whole sum comes from its phase alone,
 * then is requantized exactly as the reference does (int32 sums wrap the
 * same in any order; taps outside the input read the zero-point row, which
 * the packed bias cancels, q8.h).
 *
 * A tile is up to MR output pixels of one phase in one output row: x, x +
 * stride_w, ..., so consecutive rows of the tile's output are stride_w *
 * out_c bytes apart, the microkernels' c_stride.
 */
#include "kernels/q8.h"

/* Taps of a phase along one axis: r, r + stride, ... below k (r < stride <= k). */
static inline size_t phase_taps(int32_t k, int32_t stride, int32_t r) {
  return (size_t)((k - r + stride - 1) / stride);
}

/* (v + pad) mod stride for v >= 0, pad >= 0. */
static inline int32_t phase_of(int32_t v, int32_t pad, int32_t stride) {
  return (int32_t)(((int64_t)v + pad) % stride);
}

bool wick_q8_tconv_supported(const wick_conv_shape *s) {
  return s->stride_h <= s->k_h && s->stride_w <= s->k_w && s->pad_top >= 0 && s->pad_left >= 0 &&
         (int64_t)s->stride_h * s->stride_w <= WICK_Q8_TCONV_MAX_PHASES;
}

bool wick_q8_tconv_sizes(const wick_q8_kernels *kern, const wick_conv_shape *s,
                         size_t *packed_bytes, size_t *filter_scratch, size_t *tiles,
                         size_t *pointers) {
  const size_t mr = kern->mr, kc = (size_t)s->in_c, n = (size_t)s->out_c;
  size_t packed = 0, most = 0, count = 0, ptrs = 0, bytes, per_row_ptrs = 0, row_tiles = 0;
  for (int32_t ry = 0; ry < s->stride_h; ry++)
    for (int32_t rx = 0; rx < s->stride_w; rx++) {
      const size_t taps = phase_taps(s->k_h, s->stride_h, ry) * phase_taps(s->k_w, s->stride_w, rx);
      if (!wick_q8_gemm_packed_size(kern, n, taps, kc, &bytes) ||
          __builtin_add_overflow(packed, bytes, &packed))
        return false;
      if (taps > most) most = taps;
    }
  /* Tiles and pointers per output row depend on the row's phase only. */
  for (int32_t y = 0; y < s->out_h && y < s->stride_h; y++) {
    const size_t th = phase_taps(s->k_h, s->stride_h, phase_of(y, s->pad_top, s->stride_h));
    const size_t rows = (size_t)((s->out_h - 1 - y) / s->stride_h + 1); /* rows of this phase */
    per_row_ptrs = 0;
    row_tiles = 0;
    for (int32_t rx = 0; rx < s->stride_w; rx++) {
      const int32_t x0 =
          (int32_t)((((int64_t)rx - s->pad_left) % s->stride_w + s->stride_w) % s->stride_w);
      if (x0 >= s->out_w) continue;
      const size_t xs = (size_t)((s->out_w - 1 - x0) / s->stride_w + 1);
      const size_t t = xs / mr + (xs % mr != 0);
      const size_t tw = phase_taps(s->k_w, s->stride_w, rx);
      row_tiles += t;
      per_row_ptrs += t * mr * th * tw;
    }
    size_t img_tiles, img_ptrs;
    if (__builtin_mul_overflow(row_tiles, rows, &img_tiles) ||
        __builtin_mul_overflow(per_row_ptrs, rows, &img_ptrs) ||
        __builtin_add_overflow(count, img_tiles, &count) ||
        __builtin_add_overflow(ptrs, img_ptrs, &ptrs))
      return false;
  }
  if (__builtin_mul_overflow(count, (size_t)s->batch, &count) ||
      __builtin_mul_overflow(ptrs, (size_t)s->batch, &ptrs) ||
      __builtin_mul_overflow(most, kc * n, &most))
    return false;
  *packed_bytes = packed;
  *filter_scratch = most;
  *tiles = count;
  *pointers = ptrs;
  return true;
}

void wick_q8_tconv_pack(const wick_q8_kernels *kern, const wick_conv_shape *s, const int8_t *w,
                        const int32_t *bias, int32_t input_zero_point, const int32_t *multiplier,
                        const int32_t *shift, int8_t *sub, void *packed) {
  const size_t kc = (size_t)s->in_c, n = (size_t)s->out_c;
  uint8_t *out = packed;
  for (int32_t ry = 0; ry < s->stride_h; ry++)
    for (int32_t rx = 0; rx < s->stride_w; rx++) {
      const size_t th = phase_taps(s->k_h, s->stride_h, ry);
      const size_t tw = phase_taps(s->k_w, s->stride_w, rx), taps = th * tw;
      /* The sub-filter [n, th, tw, kc]: taps ky = ry + a * stride_h, kx = rx + b * stride_w. */
      int8_t *d = sub;
      for (size_t o = 0; o < n; o++)
        for (size_t a = 0; a < th; a++)
          for (size_t b = 0; b < tw; b++, d += kc) {
            const size_t ky = (size_t)ry + a * (size_t)s->stride_h;
            const size_t kx = (size_t)rx + b * (size_t)s->stride_w;
            const int8_t *src = w + ((o * (size_t)s->k_h + ky) * (size_t)s->k_w + kx) * kc;
            for (size_t i = 0; i < kc; i++) d[i] = src[i];
          }
      wick_q8_gemm_pack(kern, n, taps, kc, sub, bias, input_zero_point, multiplier, shift, out);
      size_t bytes;
      wick_q8_gemm_packed_size(kern, n, taps, kc, &bytes); /* checked by wick_q8_tconv_sizes */
      out += bytes;
    }
}

void wick_q8_tconv_indirection_init(const wick_q8_kernels *kern, const wick_conv_shape *s,
                                    const void *input, size_t elem_bytes, const void *zero_row,
                                    wick_q8_tconv_tile *tiles, const int8_t **ind) {
  const size_t mr = kern->mr, kc = (size_t)s->in_c, n = (size_t)s->out_c;
  /* Packed offset of each phase, in phase order (ry, rx). */
  size_t phase_packed[WICK_Q8_TCONV_MAX_PHASES], off = 0, bytes;
  for (int32_t ry = 0; ry < s->stride_h; ry++)
    for (int32_t rx = 0; rx < s->stride_w; rx++) {
      const size_t taps = phase_taps(s->k_h, s->stride_h, ry) * phase_taps(s->k_w, s->stride_w, rx);
      phase_packed[ry * s->stride_w + rx] = off;
      wick_q8_gemm_packed_size(kern, n, taps, kc, &bytes);
      off += bytes;
    }
  const int8_t *in = input;
  const int64_t pixel_bytes = (int64_t)kc * (int64_t)elem_bytes;
  size_t t = 0, p = 0;
  for (int32_t img = 0; img < s->batch; img++)
    for (int32_t y = 0; y < s->out_h; y++) {
      const int32_t ry = phase_of(y, s->pad_top, s->stride_h);
      const size_t th = phase_taps(s->k_h, s->stride_h, ry);
      for (int32_t rx = 0; rx < s->stride_w; rx++) {
        const int32_t x0 =
            (int32_t)((((int64_t)rx - s->pad_left) % s->stride_w + s->stride_w) % s->stride_w);
        if (x0 >= s->out_w) continue;
        const size_t tw = phase_taps(s->k_w, s->stride_w, rx), taps = th * tw;
        const size_t xs = (size_t)((s->out_w - 1 - x0) / s->stride_w + 1);
        for (size_t i0 = 0; i0 < xs; i0 += mr, t++) {
          const size_t rows = xs - i0 < mr ? xs - i0 : mr;
          const int32_t x_first = x0 + (int32_t)i0 * s->stride_w;
          tiles[t] = (wick_q8_tconv_tile){.ind = p,
                                          .out = ((((size_t)img * (size_t)s->out_h + (size_t)y) *
                                                   (size_t)s->out_w) +
                                                  (size_t)x_first) *
                                                 n,
                                          .packed = phase_packed[ry * s->stride_w + rx],
                                          .rows = (uint32_t)rows,
                                          .taps = (uint32_t)taps};
          for (size_t a = 0; a < th; a++) {
            /* y + pad_top - ky is a multiple of the stride by the choice of ry. */
            const int64_t iy =
                ((int64_t)y + s->pad_top - ry - (int64_t)a * s->stride_h) / s->stride_h;
            for (size_t b = 0; b < tw; b++)
              for (size_t r = 0; r < mr; r++) {
                /* Rows past the tile's last pixel repeat it (the kernels may read them). */
                const int64_t x = x_first + (int64_t)(r < rows ? r : rows - 1) * s->stride_w;
                const int64_t ix = (x + s->pad_left - rx - (int64_t)b * s->stride_w) / s->stride_w;
                const int8_t *ptr = zero_row;
                if (iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w)
                  ptr = in + (((int64_t)img * s->in_h + iy) * s->in_w + ix) * pixel_bytes;
                ind[p + (a * tw + b) * mr + r] = ptr;
              }
          }
          p += taps * mr;
        }
      }
    }
}

void wick_q8_tconv_run(const wick_q8_kernels *kern, const wick_conv_shape *s,
                       const wick_q8_tconv_tile *tiles, const int8_t *const *ind,
                       const void *packed, int8_t *output, const wick_q8_output *o, size_t t0,
                       size_t t1) {
  const size_t n = (size_t)s->out_c, kc = (size_t)s->in_c;
  const size_t c_stride = (size_t)s->stride_w * n;
  for (size_t t = t0; t < t1; t++) {
    const wick_q8_tconv_tile *tile = &tiles[t];
    const wick_q8_igemm_ukernel_fn f =
        tile->rows <= 4 && kern->igemm_u8_4 ? kern->igemm_u8_4 : kern->igemm_u8;
    f(tile->rows, n, kc, tile->taps, ind + tile->ind, (const uint8_t *)packed + tile->packed,
      output + tile->out, c_stride, o);
  }
}
