/*
 * resize.c — reference RESIZE_BILINEAR (float) and RESIZE_NEAREST_NEIGHBOR
 * (any element type) on NHWC tensors.
 *
 * Source coordinates follow LiteRT's float formulas exactly (so the chosen
 * pixels agree bit for bit):
 *
 *   scale = in / out, or (in - 1) / (out - 1) with align_corners and out > 1
 *   bilinear: src = (dst + 0.5) * scale - 0.5 with half_pixel_centers,
 *             else dst * scale;  lo = max(floor(src), 0),
 *             hi = min(ceil(src), in - 1), weight of hi = src - lo
 *   nearest:  src = (dst + offset) * scale, offset 0.5 with half_pixel_centers;
 *             index = round-half-away(src) with align_corners, else floor(src);
 *             clamped to [0, in - 1]
 *
 * The op guarantees in_h, in_w >= 1 whenever the output is not empty.
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

float wick_resize_axis_scale(int32_t in, int32_t out, bool align_corners) {
  if (align_corners && out > 1) return (float)(in - 1) / (float)(out - 1);
  return (float)in / (float)out;
}
#define axis_scale wick_resize_axis_scale

/* Bilinear source position of output coordinate `v`. */
static void bilinear_source(int32_t v, float scale, bool half_pixel, int32_t in, float *pos,
                            int32_t *lo, int32_t *hi) {
  float p = half_pixel ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
  float f = floorf(p), c = ceilf(p);
  *pos = p;
  /* both taps clamped: float rounding must never reach past the input */
  *lo = f > 0.0f ? (f < (float)(in - 1) ? (int32_t)f : in - 1) : 0;
  *hi = c < (float)(in - 1) ? (int32_t)c : in - 1;
}

void wick_f32_resize_bilinear_rows__reference(const wick_resize_shape *s, const float *in,
                                              float *out, int64_t row_begin, int64_t row_end) {
  const float sy = axis_scale(s->in_h, s->out_h, s->align_corners);
  const float sx = axis_scale(s->in_w, s->out_w, s->align_corners);
  const int64_t c_n = s->channels;
  for (int64_t row = row_begin; row < row_end; row++) {
    const int64_t n = row / s->out_h;
    const int32_t y = (int32_t)(row % s->out_h);
    const float *img = in + n * s->in_h * s->in_w * c_n;
    float py;
    int32_t y0, y1;
    bilinear_source(y, sy, s->half_pixel_centers, s->in_h, &py, &y0, &y1);
    const float dy = py - (float)y0;
    for (int32_t x = 0; x < s->out_w; x++) {
      float px;
      int32_t x0, x1;
      bilinear_source(x, sx, s->half_pixel_centers, s->in_w, &px, &x0, &x1);
      const float dx = px - (float)x0;
      const float *restrict p00 = img + ((int64_t)y0 * s->in_w + x0) * c_n;
      const float *restrict p10 = img + ((int64_t)y1 * s->in_w + x0) * c_n;
      const float *restrict p01 = img + ((int64_t)y0 * s->in_w + x1) * c_n;
      const float *restrict p11 = img + ((int64_t)y1 * s->in_w + x1) * c_n;
      float *restrict o = out + (row * s->out_w + x) * c_n;
      for (int64_t c = 0; c < c_n; c++)
        o[c] = p00[c] * (1 - dy) * (1 - dx) + p10[c] * dy * (1 - dx) + p01[c] * (1 - dy) * dx +
               p11[c] * dy * dx;
    }
  }
}

void wick_resize_bilinear_taps(int32_t v, float scale, bool half_pixel, int32_t in, int32_t *lo,
                               int32_t *hi, float *frac) {
  float p;
  bilinear_source(v, scale, half_pixel, in, &p, lo, hi);
  *frac = p - (float)*lo;
}

void wick_f32_resize_bilinear__reference(const wick_resize_shape *s, const float *in, float *out) {
  wick_f32_resize_bilinear_rows__reference(s, in, out, 0, (int64_t)s->batch * s->out_h);
}

static int32_t nearest_source(int32_t v, float scale, const wick_resize_shape *s, int32_t in) {
  float p = ((float)v + (s->half_pixel_centers ? 0.5f : 0.0f)) * scale;
  float r = s->align_corners ? roundf(p) : floorf(p);
  int32_t i = r < (float)(in - 1) ? (int32_t)r : in - 1;
  return i > 0 ? i : 0;
}

void wick_resize_nearest__reference(const wick_resize_shape *s, size_t elem_size, const void *in,
                                    void *out) {
  float sy = axis_scale(s->in_h, s->out_h, s->align_corners);
  float sx = axis_scale(s->in_w, s->out_w, s->align_corners);
  size_t pixel = (size_t)s->channels * elem_size;
  const uint8_t *src = in;
  uint8_t *dst = out;
  for (int32_t n = 0; n < s->batch; n++) {
    const uint8_t *img = src + (size_t)n * s->in_h * s->in_w * pixel;
    for (int32_t y = 0; y < s->out_h; y++) {
      const uint8_t *row = img + (size_t)nearest_source(y, sy, s, s->in_h) * s->in_w * pixel;
      for (int32_t x = 0; x < s->out_w; x++) {
        if (pixel) memcpy(dst, row + (size_t)nearest_source(x, sx, s, s->in_w) * pixel, pixel);
        dst += pixel;
      }
    }
  }
}
