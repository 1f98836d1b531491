/*
 * template/winograd.h — the input and output transforms of the Winograd
 * F(4x4, 3x3) convolution, written once in the vector vocabulary of
 * <isa>/simd.h and compiled per ISA (avx512/winograd.c, avx2/winograd.c,
 * neon/winograd.c).
 * The driver and the filter transform are in src/kernels/winograd.c; the
 * algorithm, its matrices and its error bound in docs/architecture.md.
 *
 * Both transforms walk tiles [tile_begin, tile_end) of the flattened
 * batch x tiles_h x tiles_w grid and vectorize over channels (VL at a time;
 * the last partial block masked). Each applies its 1-D transform along x
 * (rows of the tile) into a 6x6 block on the stack, then along y.
 *
 *   input:  V[xi][t][c] = (B^T d B)[xi] for the 6x6 input window d of tile t
 *           (input pixels outside the image read as zeros: the padding);
 *   output: y = clamp(bias + A^T M A, lo, hi) for the 6x6 GEMM results M of
 *           tile t, stored where the 4x4 block lies inside the output.
 *
 * Plane xi of V (M) starts xi * plane floats after v (m); tile rows are
 * in_c (out_c) floats apart. Every value is computed by the same operations
 * whatever the tile range: results do not depend on how tiles are split.
 */
#include "kernels/kernels.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* B^T d for one 6-vector (d0..d5 -> t0..t5). */
ALWAYS_INLINE void input_1d(const vf d[6], vf t[6]) {
  const vf four = vset1(4.0f), five = vset1(5.0f), two = vset1(2.0f);
  const vf d4_d2 = vsub(d[4], d[2]);                /* d4 - d2 */
  const vf d3_d1 = vsub(d[3], d[1]);                /* d3 - d1 */
  t[0] = vfnma(five, d[2], vfma(four, d[0], d[4])); /* 4 d0 - 5 d2 + d4 */
  const vf a = vfnma(four, d[2], d[4]);             /* d4 - 4 d2 */
  const vf b = vfnma(four, d[1], d[3]);             /* d3 - 4 d1 */
  t[1] = vadd(a, b);                                /* -4 d1 - 4 d2 + d3 + d4 */
  t[2] = vsub(a, b);                                /* 4 d1 - 4 d2 - d3 + d4 */
  t[3] = vfma(two, d3_d1, d4_d2);                   /* -2 d1 - d2 + 2 d3 + d4 */
  t[4] = vfnma(two, d3_d1, d4_d2);                  /* 2 d1 - d2 - 2 d3 + d4 */
  t[5] = vfnma(five, d[3], vfma(four, d[1], d[5])); /* 4 d1 - 5 d3 + d5 */
}

/* A^T m for one 6-vector (m0..m5 -> o0..o3). */
ALWAYS_INLINE void output_1d(const vf m[6], vf o[4]) {
  const vf s12 = vadd(m[1], m[2]), d12 = vsub(m[1], m[2]);
  const vf s34 = vadd(m[3], m[4]), d34 = vsub(m[3], m[4]);
  o[0] = vadd(vadd(m[0], s12), s34);
  o[1] = vfma(vset1(2.0f), d34, d12);
  o[2] = vfma(vset1(4.0f), s34, s12);
  o[3] = vadd(vfma(vset1(8.0f), d34, d12), m[5]);
}

/* Where tile t lies: image n, top-left output pixel (oy, ox). */
ALWAYS_INLINE void tile_origin(size_t t, size_t tiles_h, size_t tiles_w, size_t *n, size_t *oy,
                               size_t *ox) {
  const size_t per_image = tiles_h * tiles_w, r = t % per_image;
  *n = t / per_image;
  *oy = r / tiles_w * 4;
  *ox = r % tiles_w * 4;
}

void ISA_SUFFIX(wick_f32_winograd_input)(const wick_conv_shape *s, size_t tiles_h, size_t tiles_w,
                                         const float *input, size_t tile_begin, size_t tile_end,
                                         float *v, size_t plane) {
  const size_t in_c = (size_t)s->in_c;
  for (size_t t = tile_begin; t < tile_end; t++) {
    size_t n, oy, ox;
    tile_origin(t, tiles_h, tiles_w, &n, &oy, &ox);
    const float *px[6][6]; /* each window pixel, NULL outside the image */
    for (size_t i = 0; i < 6; i++) {
      const ptrdiff_t iy = (ptrdiff_t)oy - s->pad_top + (ptrdiff_t)i;
      for (size_t j = 0; j < 6; j++) {
        const ptrdiff_t ix = (ptrdiff_t)ox - s->pad_left + (ptrdiff_t)j;
        px[i][j] =
            iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w
                ? input + ((n * (size_t)s->in_h + (size_t)iy) * (size_t)s->in_w + (size_t)ix) * in_c
                : NULL;
      }
    }
    float *vt = v + (t - tile_begin) * in_c;
    for (size_t c = 0; c < in_c; c += VL) {
      const vmask m = vmask_tail(in_c - c);
      const bool full = in_c - c >= VL;
      vf rows[6][6]; /* B^T applied along x: rows[i][k] */
      for (size_t i = 0; i < 6; i++) {
        vf d[6];
        for (size_t j = 0; j < 6; j++)
          d[j] = px[i][j] == NULL ? vzero() : full ? vload(px[i][j] + c) : vloadm(px[i][j] + c, m);
        input_1d(d, rows[i]);
      }
      for (size_t k = 0; k < 6; k++) {
        vf col[6], out[6];
        for (size_t i = 0; i < 6; i++) col[i] = rows[i][k];
        input_1d(col, out);
        for (size_t l = 0; l < 6; l++) {
          float *dst = vt + (l * 6 + k) * plane + c;
          if (full)
            vstore(dst, out[l]);
          else
            vstorem(dst, m, out[l]);
        }
      }
    }
  }
}

void ISA_SUFFIX(wick_f32_winograd_output)(const wick_conv_shape *s, size_t tiles_h, size_t tiles_w,
                                          const float *mt, size_t plane, const float *bias,
                                          size_t tile_begin, size_t tile_end, float *output,
                                          float lo, float hi) {
  const size_t out_c = (size_t)s->out_c;
  const vf vlo = vset1(lo), vhi = vset1(hi);
  for (size_t t = tile_begin; t < tile_end; t++) {
    size_t n, oy, ox;
    tile_origin(t, tiles_h, tiles_w, &n, &oy, &ox);
    const size_t rows = (size_t)s->out_h - oy < 4 ? (size_t)s->out_h - oy : 4;
    const size_t cols = (size_t)s->out_w - ox < 4 ? (size_t)s->out_w - ox : 4;
    float *out = output + ((n * (size_t)s->out_h + oy) * (size_t)s->out_w + ox) * out_c;
    const float *src = mt + (t - tile_begin) * out_c;
    for (size_t c = 0; c < out_c; c += VL) {
      const vmask m = vmask_tail(out_c - c);
      const bool full = out_c - c >= VL;
      vf part[6][4]; /* A^T applied along x: part[l][q] */
      for (size_t l = 0; l < 6; l++) {
        vf r[6];
        for (size_t k = 0; k < 6; k++) {
          const float *p = src + (l * 6 + k) * plane + c;
          r[k] = full ? vload(p) : vloadm(p, m);
        }
        output_1d(r, part[l]);
      }
      const vf b = full ? vload(bias + c) : vloadm(bias + c, m);
      for (size_t q = 0; q < cols; q++) {
        vf col[6], y[4];
        for (size_t l = 0; l < 6; l++) col[l] = part[l][q];
        output_1d(col, y);
        for (size_t p = 0; p < rows; p++) {
          /* vmax(lo, x): a NaN result passes through the clamp */
          const vf r = vmin(vhi, vmax(vlo, vadd(b, y[p])));
          float *dst = out + (p * (size_t)s->out_w + q) * out_c + c;
          if (full)
            vstore(dst, r);
          else
            vstorem(dst, m, r);
        }
      }
    }
  }
}
