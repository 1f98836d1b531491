/*
 * template/resize.h — RESIZE_BILINEAR (float32, NHWC) in the vocabulary of
 * <isa>/simd.h, compiled per ISA (included by avx512/elementwise.c,
 * avx2/elementwise.c and neon/elementwise.c): the kernel tables' `resize_bilinear`.
 *
 * Bit-identical to wick_f32_resize_bilinear_rows__reference: the same taps
 * and weights (wick_resize_bilinear_taps), and per channel the reference's
 * expression p00 * (1 - dy) * (1 - dx) + p10 * dy * (1 - dx)
 * + p01 * (1 - dy) * dx + p11 * dy * dx, multiplied and summed left to
 * right in separate vector operations (no fused multiply-add), VL channels
 * at a time. The columns' taps are computed once per block of columns and
 * reused by every row of the range, instead of once per pixel.
 */
#include "kernels/kernels.h"

#define RESIZE_COLUMNS 128 /* columns whose taps one block holds (stack: 1.5 KB) */

void ISA_SUFFIX(wick_f32_resize_bilinear)(const wick_resize_shape *s, const float *in, float *out,
                                          int64_t row_begin, int64_t row_end) {
  const float sy = wick_resize_axis_scale(s->in_h, s->out_h, s->align_corners);
  const float sx = wick_resize_axis_scale(s->in_w, s->out_w, s->align_corners);
  const size_t c_n = (size_t)s->channels;
  int32_t x0s[RESIZE_COLUMNS], x1s[RESIZE_COLUMNS];
  float dxs[RESIZE_COLUMNS];
  for (int32_t xb = 0; xb < s->out_w; xb += RESIZE_COLUMNS) {
    const int32_t xn = s->out_w - xb < RESIZE_COLUMNS ? s->out_w - xb : RESIZE_COLUMNS;
    for (int32_t i = 0; i < xn; i++)
      wick_resize_bilinear_taps(xb + i, sx, s->half_pixel_centers, s->in_w, &x0s[i], &x1s[i],
                                &dxs[i]);
    for (int64_t row = row_begin; row < row_end; row++) {
      const int64_t n = row / s->out_h;
      const int32_t y = (int32_t)(row % s->out_h);
      const float *img = in + (size_t)n * (size_t)s->in_h * (size_t)s->in_w * c_n;
      int32_t y0, y1;
      float dy;
      wick_resize_bilinear_taps(y, sy, s->half_pixel_centers, s->in_h, &y0, &y1, &dy);
      const float *r0 = img + (size_t)y0 * (size_t)s->in_w * c_n;
      const float *r1 = img + (size_t)y1 * (size_t)s->in_w * c_n;
      const vf vdy = vset1(dy), vndy = vset1(1 - dy);
      for (int32_t i = 0; i < xn; i++) {
        const float dx = dxs[i];
        const vf vdx = vset1(dx), vndx = vset1(1 - dx);
        const float *p00 = r0 + (size_t)x0s[i] * c_n, *p01 = r0 + (size_t)x1s[i] * c_n;
        const float *p10 = r1 + (size_t)x0s[i] * c_n, *p11 = r1 + (size_t)x1s[i] * c_n;
        float *o = out + ((size_t)row * (size_t)s->out_w + (size_t)(xb + i)) * c_n;
        size_t c = 0;
        for (; c + VL <= c_n; c += VL) {
          vf v = vmul(vmul(vload(p00 + c), vndy), vndx);
          v = vadd(v, vmul(vmul(vload(p10 + c), vdy), vndx));
          v = vadd(v, vmul(vmul(vload(p01 + c), vndy), vdx));
          v = vadd(v, vmul(vmul(vload(p11 + c), vdy), vdx));
          vstore(o + c, v);
        }
        if (c < c_n) {
          const vmask m = vmask_tail(c_n - c);
          vf v = vmul(vmul(vloadm(p00 + c, m), vndy), vndx);
          v = vadd(v, vmul(vmul(vloadm(p10 + c, m), vdy), vndx));
          v = vadd(v, vmul(vmul(vloadm(p01 + c, m), vndy), vdx));
          v = vadd(v, vmul(vmul(vloadm(p11 + c, m), vdy), vdx));
          vstorem(o + c, m, v);
        }
      }
    }
  }
}
