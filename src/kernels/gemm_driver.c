/*
 * gemm_driver.c — tiles FULLY_CONNECTED / 1x1 convolutions (GEMM) and general
 * convolutions (indirect GEMM) over the microkernels chosen by select.c.
 *
 * Loop order: output channels in blocks whose packed weights fit in about
 * half of L2 (so every row tile re-reads them from L2, not L3), then row
 * tiles of MR, and the microkernel walks the block's NR-wide panels. A row
 * tile of A (MR x K) stays in L1 across the panels.
 *
 * The indirection buffer of a convolution (layout in kernels.h) depends on
 * the input's address; the op rebuilds it when that address changes.
 *
 * TODO: the indirection buffer costs k_h * k_w pointers per output pixel and
 * lives as long as the prepared graph: ~1 MB for MobileNetV2's first conv,
 * 5 MB for ResNet-50's 7x7 stem, but ~19 MB per 3x3 conv at 512x512. Large
 * inputs want the pointers of one row tile built at invoke into scratch
 * (cheap next to the tile's K x N FMAs unless cin and N are tiny).
 */
#include "kernels/kernels.h"

/* Bytes of packed weights a column block may hold (L2 is 1 MiB per core on
 * the reference machine, 256 KiB-2 MiB on most others). */
#define BLOCK_BYTES ((size_t)384 * 1024)

static size_t column_block(size_t n, size_t k, size_t nr) {
  size_t panel_bytes = (k + 1) * nr * sizeof(float);
  size_t panels = BLOCK_BYTES / panel_bytes;
  if (panels < 1) panels = 1;
  size_t nb = panels * nr;
  if (nb >= n) return n;
  /* Even blocks: avoid a thin last block. */
  size_t blocks = (n + nb - 1) / nb;
  size_t per = (n + blocks - 1) / blocks;
  return (per + nr - 1) / nr * nr;
}

void wick_f32_gemm(const wick_f32_gemm_kernel *kern, size_t m, size_t n, size_t k, const float *a,
                   size_t a_stride, const float *packed, float *c, size_t c_stride, float lo,
                   float hi) {
  const size_t mr = kern->mr, nr = kern->nr;
  const size_t nb = column_block(n, k, nr);
  const size_t panel = (k + 1) * nr;
  for (size_t n0 = 0; n0 < n; n0 += nb) {
    size_t nc = n - n0 < nb ? n - n0 : nb;
    const float *w = packed + n0 / nr * panel;
    for (size_t m0 = 0; m0 < m; m0 += mr) {
      size_t rows = m - m0 < mr ? m - m0 : mr;
      wick_f32_gemm_ukernel_fn fn = rows == 1 ? kern->gemm_1 : kern->gemm;
      fn(rows, nc, k, a + m0 * a_stride, a_stride, w, c + m0 * c_stride + n0, c_stride, lo, hi);
    }
  }
}

bool wick_f32_conv_indirection_size(const wick_conv_shape *s, size_t mr, size_t *count_out) {
  size_t pixels, tiles, taps, count;
  if (__builtin_mul_overflow((size_t)s->batch, (size_t)s->out_h, &pixels) ||
      __builtin_mul_overflow(pixels, (size_t)s->out_w, &pixels))
    return false;
  tiles = pixels / mr + (pixels % mr != 0);
  if (__builtin_mul_overflow((size_t)s->k_h, (size_t)s->k_w, &taps) ||
      __builtin_mul_overflow(tiles, mr, &count) || __builtin_mul_overflow(count, taps, &count))
    return false;
  *count_out = count;
  return true;
}

void wick_f32_conv_indirection_init(const wick_conv_shape *s, size_t mr, const float *input,
                                    const float *zero, const float **ind) {
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w;
  const size_t pixels = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w;
  const size_t tiles = pixels / mr + (pixels % mr != 0);
  for (size_t t = 0; t < tiles; t++) {
    for (size_t r = 0; r < mr; r++) {
      size_t pix = t * mr + r < pixels ? t * mr + r : pixels - 1;
      size_t x = pix % (size_t)s->out_w, rest = pix / (size_t)s->out_w;
      size_t y = rest % (size_t)s->out_h, n = rest / (size_t)s->out_h;
      for (size_t ky = 0; ky < (size_t)s->k_h; ky++) {
        int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
        for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
          int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
          const float *p = zero;
          if (iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w)
            p = input + (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c;
          ind[(t * taps + ky * (size_t)s->k_w + kx) * mr + r] = p;
        }
      }
    }
  }
}

void wick_f32_conv_igemm(const wick_f32_gemm_kernel *kern, const wick_conv_shape *s,
                         const float *const *ind, const float *packed, float *output, float lo,
                         float hi) {
  const size_t mr = kern->mr, nr = kern->nr;
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w, kc = (size_t)s->in_c;
  const size_t n = (size_t)s->out_c, k = taps * kc;
  const size_t pixels = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w;
  const size_t nb = column_block(n, k, nr);
  const size_t panel = (k + 1) * nr;
  for (size_t n0 = 0; n0 < n; n0 += nb) {
    size_t nc = n - n0 < nb ? n - n0 : nb;
    const float *w = packed + n0 / nr * panel;
    for (size_t m0 = 0, t = 0; m0 < pixels; m0 += mr, t++) {
      size_t rows = pixels - m0 < mr ? pixels - m0 : mr;
      kern->igemm(rows, nc, kc, taps, ind + t * taps * mr, w, output + m0 * n + n0, n, lo, hi);
    }
  }
}
