/*
 * q8_pool.c — int8 AVERAGE_POOL_2D and MAX_POOL_2D with the channels as the
 * inner loop (portable C the compiler vectorizes), for any ISA. The same
 * arithmetic as the reference kernels (src/kernels/reference/quantized.c):
 * taps clamped to the input, int32 sums that wrap, the average rounded half
 * away from zero by integer division over the in-bounds taps, the clamp.
 * The reference walks one output element at a time and recomputes the
 * window for each channel; this walks each window once per pixel (MAX on
 * int8 directly in the output row).
 */
#include <string.h>

#include "kernels/q8.h"

/* MAX_POOL_2D of one pixel's window: the running maximum kept in the output
 * row itself as int8 (byte compares the compiler vectorizes 16 or more
 * lanes wide), then the clamp; an empty window is INT8_MIN clamped, as in
 * the reference. */
static void max_pixel(const int8_t *const *taps, int64_t count, int64_t c, int8_t lo, int8_t hi,
                      int8_t *o) {
  if (count == 0) {
    for (int64_t i = 0; i < c; i++) o[i] = INT8_MIN < lo ? lo : INT8_MIN;
    return;
  }
  memcpy(o, taps[0], (size_t)c);
  for (int64_t t = 1; t < count; t++) {
    const int8_t *p = taps[t];
    for (int64_t i = 0; i < c; i++) o[i] = p[i] > o[i] ? p[i] : o[i];
  }
  for (int64_t i = 0; i < c; i++) o[i] = o[i] < lo ? lo : (o[i] > hi ? hi : o[i]);
}

void wick_q8_pool(bool is_max, const wick_pool_shape *s, const int8_t *in, int8_t *out, int32_t lo,
                  int32_t hi, int32_t *acc) {
  const int64_t c = s->channels;
  /* int8 values: clamping to [lo, hi] equals clamping to its part inside int8 */
  const int8_t lo8 = (int8_t)(lo < INT8_MIN ? INT8_MIN : (lo > INT8_MAX ? INT8_MAX : lo));
  const int8_t hi8 = (int8_t)(hi < INT8_MIN ? INT8_MIN : (hi > INT8_MAX ? INT8_MAX : hi));
  enum { MAX_TAPS = 64 }; /* windows up to this size take the int8 max path */
  const bool small_window = (int64_t)s->k_h * s->k_w <= MAX_TAPS && lo <= hi;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++) {
        const int64_t y0 = (int64_t)y * s->stride_h - s->pad_top;
        const int64_t x0 = (int64_t)x * s->stride_w - s->pad_left;
        const int64_t ky0 = y0 < 0 ? -y0 : 0, kx0 = x0 < 0 ? -x0 : 0;
        const int64_t ky1 = s->in_h - y0 < s->k_h ? s->in_h - y0 : s->k_h;
        const int64_t kx1 = s->in_w - x0 < s->k_w ? s->in_w - x0 : s->k_w;
        int8_t *o = out + (((int64_t)n * s->out_h + y) * s->out_w + x) * c;
        if (is_max && small_window) {
          const int8_t *taps[MAX_TAPS];
          int64_t count = 0;
          for (int64_t ky = ky0; ky < ky1; ky++)
            for (int64_t kx = kx0; kx < kx1; kx++)
              taps[count++] = in + (((int64_t)n * s->in_h + y0 + ky) * s->in_w + x0 + kx) * c;
          max_pixel(taps, count, c, lo8, hi8, o);
          continue;
        }
        for (int64_t i = 0; i < c; i++) acc[i] = is_max ? INT8_MIN : 0;
        int64_t count = 0;
        for (int64_t ky = ky0; ky < ky1; ky++)
          for (int64_t kx = kx0; kx < kx1; kx++, count++) {
            const int8_t *p = in + (((int64_t)n * s->in_h + y0 + ky) * s->in_w + x0 + kx) * c;
            if (is_max) {
              for (int64_t i = 0; i < c; i++) acc[i] = p[i] > acc[i] ? p[i] : acc[i];
            } else {
              for (int64_t i = 0; i < c; i++)
                acc[i] = (int32_t)((uint32_t)acc[i] + (uint32_t)(int32_t)p[i]);
            }
          }
        for (int64_t i = 0; i < c; i++) {
          int32_t v = acc[i];
          if (!is_max)
            v = count == 0 ? 0
                           : (int32_t)(v > 0 ? ((int64_t)v + count / 2) / count
                                             : ((int64_t)v - count / 2) / count);
          o[i] = (int8_t)(v < lo ? lo : (v > hi ? hi : v));
        }
      }
}
