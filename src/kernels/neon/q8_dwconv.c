/*
 * neon/q8_dwconv.c — int8 DEPTHWISE_CONV_2D (multiplier 1, any filter size,
 * stride, dilation and padding) for AArch64 Advanced SIMD: 16 channels per
 * step, four int32x4 accumulators. Both AArch64 int8 tables use it (no
 * dot products here: one channel per lane).
 *
 * Per output pixel and tap the 16 input bytes are widened to int16 and
 * multiplied into the accumulators with SMLAL / SMLAL2 (exact, wrapping like
 * the reference's int32 sums). The packed weights (q8.h, the VNNI depthwise
 * layout: each weight an int32 holding (uint16)w) are narrowed to int16 by
 * taking the even halves (UZP1). Taps outside the input read the input zero
 * point, which the packed bias' cancels (q8.h), so every output sums all
 * taps as the reference sums the in-bounds ones. Pixels whose taps all lie
 * inside the input skip the bounds checks. A last block of fewer than 16
 * channels goes through staging copies. Then neon/q8_requant.h.
 */
#include "kernels/neon/q8_requant.h"

#define CR 16

typedef struct dw_row {
  const wick_conv_shape *s;
  const int8_t *input; /* batch item n */
  int8_t *out;         /* output row */
  int32_t y;           /* output row index */
  int16x8_t vzp;       /* the input zero point in every lane */
  size_t c0, cols;     /* this channel block: first channel, live channels */
  const int32_t *h;    /* its packed header, the taps follow */
  q8_rq4 rq[4];
} dw_row;

/* 16 input channels from p, widened (the live ones only when PARTIAL). */
Q8_INLINE void load_x(bool PARTIAL, const int8_t *p, size_t cols, int16x8_t *lo, int16x8_t *hi) {
  int8x16_t b;
  if (PARTIAL) {
    int8_t tmp[CR] = {0};
    memcpy(tmp, p, cols);
    b = vld1q_s8(tmp);
  } else {
    b = vld1q_s8(p);
  }
  *lo = vmovl_s8(vget_low_s8(b));
  *hi = vmovl_high_s8(b);
}

/* The 16 weights of one tap as int16: the even halves of their int32. */
Q8_INLINE void load_w(const int32_t *wt, int16x8_t *lo, int16x8_t *hi) {
  *lo = vuzp1q_s16(vreinterpretq_s16_s32(vld1q_s32(wt)), vreinterpretq_s16_s32(vld1q_s32(wt + 4)));
  *hi = vuzp1q_s16(vreinterpretq_s16_s32(vld1q_s32(wt + 8)),
                   vreinterpretq_s16_s32(vld1q_s32(wt + 12)));
}

/* One output pixel of one channel block; BORDER: check every tap. */
Q8_INLINE void pixel(bool PARTIAL, bool BORDER, const dw_row *r, const wick_q8_output *o,
                     int32_t x) {
  const wick_conv_shape *s = r->s;
  const int32_t *wt = r->h + WICK_Q8_HEADER * CR;
  int32x4_t acc[4];
  for (size_t v = 0; v < 4; v++) acc[v] = vld1q_s32(r->h + 4 * v);
  for (int32_t ky = 0; ky < s->k_h; ky++) {
    /* 64-bit: a huge dilation times a tap index overflows int32 (as in the
     * reference and the AVX-512 kernel) */
    const int64_t iy = (int64_t)r->y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
    const bool vy = !BORDER || (iy >= 0 && iy < s->in_h);
    for (int32_t kx = 0; kx < s->k_w; kx++, wt += CR) {
      const int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
      int16x8_t x0 = r->vzp, x1 = r->vzp, w0, w1;
      if (vy && (!BORDER || (ix >= 0 && ix < s->in_w)))
        load_x(PARTIAL, r->input + (iy * s->in_w + ix) * s->in_c + (int64_t)r->c0, r->cols, &x0,
               &x1);
      load_w(wt, &w0, &w1);
      acc[0] = vmlal_s16(acc[0], vget_low_s16(x0), vget_low_s16(w0));
      acc[1] = vmlal_high_s16(acc[1], x0, w0);
      acc[2] = vmlal_s16(acc[2], vget_low_s16(x1), vget_low_s16(w1));
      acc[3] = vmlal_high_s16(acc[3], x1, w1);
    }
  }
  for (size_t v = 0; v < 4; v++) acc[v] = q8_requant4(acc[v], &r->rq[v], o);
  q8_store_n(r->out + (int64_t)x * s->out_c + (int64_t)r->c0,
             q8_narrow16(acc[0], acc[1], acc[2], acc[3]), r->cols);
}

/* One channel block of the row: the pixels in [x_lo, x_hi) unchecked when
 * the row's taps are all inside the input (row_inside). */
Q8_INLINE void row_block(bool PARTIAL, const dw_row *r, const wick_q8_output *o, bool row_inside,
                         int32_t x_lo, int32_t x_hi) {
  const int32_t ow = r->s->out_w;
  if (!row_inside) {
    for (int32_t x = 0; x < ow; x++) pixel(PARTIAL, true, r, o, x);
    return;
  }
  int32_t x = 0;
  for (; x < x_lo; x++) pixel(PARTIAL, true, r, o, x);
  for (; x < x_hi; x++) pixel(PARTIAL, false, r, o, x);
  for (; x < ow; x++) pixel(PARTIAL, true, r, o, x);
}

void wick_q8_dwconv_ukernel__neon(const wick_conv_shape *s, int32_t zp, const int8_t *input,
                                  const void *w, int8_t *output, const wick_q8_output *o,
                                  int32_t y0, int32_t y1) {
  const int64_t span_h = (int64_t)(s->k_h - 1) * s->dilation_h;
  int32_t x_lo, x_hi;
  wick_conv_interior_columns(s, &x_lo, &x_hi);
  const size_t c = (size_t)s->in_c;
  const size_t block_words = (WICK_Q8_HEADER + (size_t)s->k_h * (size_t)s->k_w) * CR;
  dw_row r;
  r.s = s;
  r.vzp = vdupq_n_s16((int16_t)zp);
  for (int32_t n = 0; n < s->batch; n++) {
    r.input = input + (int64_t)n * s->in_h * s->in_w * s->in_c;
    for (int32_t y = y0; y < y1; y++) {
      const int64_t iy0 = (int64_t)y * s->stride_h - s->pad_top;
      const bool row_inside = iy0 >= 0 && iy0 + span_h < s->in_h;
      r.y = y;
      r.out = output + (((int64_t)n * s->out_h + y) * s->out_w) * s->out_c;
      r.h = w;
      for (r.c0 = 0; r.c0 < c; r.c0 += CR, r.h += block_words) {
        r.cols = c - r.c0 < CR ? c - r.c0 : CR;
        for (size_t v = 0; v < 4; v++) r.rq[v] = q8_rq4_load(r.h + 4 * v, CR);
        if (r.cols == CR)
          row_block(false, &r, o, row_inside, x_lo, x_hi);
        else
          row_block(true, &r, o, row_inside, x_lo, x_hi);
      }
    }
  }
}
