/*
 * avx2/hybrid.c — the hybrid (dynamic-range) ops' vector kernels for AVX2,
 * the kernel tables' `hybrid_dwconv` and `hybrid_rescale`. Compiled with
 * -mavx2 -mfma; the AVX-512 table uses them too.
 *
 * hybrid_dwconv: the DEPTHWISE_CONV_2D rows (int8 filter, the float image
 * quantized to int8 per image; multiplier 1), bit-identical to wick_hybrid_depthwise_rows
 * (reference/hybrid.c). Filters of up to 26 taps run the paired form on every full block of
 * 16 channels (hdw_paired below: two taps per madd, the zero point taken out once per pixel);
 * the other channels and larger filters run hdw_pixels: for each output pixel and each block
 * of 16 channels, every in-bounds tap
 * sign-extends 16 image bytes and 16 filter bytes to int16, subtracts the
 * image's zero point (|x - o| <= 255) and multiplies in 16 bits (|w| <= 128,
 * so |w * (x - o)| <= 32640 fits int16 exactly), then widens the products
 * to two int32 accumulators held in registers. int32 additions wrap like
 * the reference's uint32 sums, and a wrapping sum does not depend on the
 * order. The float stage is the reference's expression, operation by
 * operation (C11 mode keeps the compiler from fusing the multiply and the
 * add): acc * s_w * s_in (conv_rescale) or acc * (s_w * s_in), plus the
 * bias, then y > hi ? hi : y and y < lo ? lo : y, NaN kept as the
 * reference keeps it. Channel remainders: one block of 8, then scalar code.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/conv_taps.h"
#include "kernels/kernels.h"

typedef struct hdw_finish {
  const float *scales; /* per channel */
  __m256 input_scale, lo, hi;
  const float *bias; /* may be NULL */
  bool conv_rescale;
  float input_scale_1, lo_1, hi_1; /* the same, for the scalar tail */
} hdw_finish;

/* The float stage of 8 channels starting at channel c. */
static inline void finish8(const hdw_finish *f, __m256i acc, int64_t c, float *out) {
  const __m256 s = _mm256_loadu_ps(f->scales + c);
  __m256 y = _mm256_cvtepi32_ps(acc);
  y = f->conv_rescale ? _mm256_mul_ps(_mm256_mul_ps(y, s), f->input_scale)
                      : _mm256_mul_ps(y, _mm256_mul_ps(s, f->input_scale));
  if (f->bias != NULL) y = _mm256_add_ps(y, _mm256_loadu_ps(f->bias + c));
  /* min(hi, y) = hi < y ? hi : y and max(lo, t) = lo > t ? lo : t: NaN passes through */
  _mm256_storeu_ps(out + c, _mm256_max_ps(f->lo, _mm256_min_ps(f->hi, y)));
}

/* Channels [ch_begin, c) of rows [y0, y1), pixel by pixel: blocks of 16, one of 8, then the
 * scalar tail. */
static void hdw_pixels(const wick_conv_shape *s, const int8_t *input, int32_t input_offset,
                       const int8_t *filter, const hdw_finish *fp, float *output, int32_t y0,
                       int32_t y1, int64_t ch_begin) {
  const int64_t c = s->out_c;
  const hdw_finish f = *fp;
  const __m256i offset16 = _mm256_set1_epi16((int16_t)input_offset);
  const __m128i offset8 = _mm_set1_epi16((int16_t)input_offset);
  for (int32_t oy = y0; oy < y1; oy++)
    for (int32_t ox = 0; ox < s->out_w; ox++) {
      float *out = output + ((int64_t)oy * s->out_w + ox) * c;
      const wick_conv_taps t = wick_conv_pixel_taps(s, oy, ox);
      int64_t ch = ch_begin;
      for (; ch + 16 <= c; ch += 16) {
        __m256i acc_lo = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
        for (int32_t ky = t.ky_begin; ky < t.ky_end; ky++) {
          for (int32_t kx = t.kx_begin; kx < t.kx_end; kx++) {
            const int8_t *px = input + wick_conv_tap_pixel(s, &t, ky, kx) * c + ch;
            const int8_t *w = filter + ((int64_t)ky * s->k_w + kx) * c + ch;
            const __m256i x = _mm256_sub_epi16(
                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)px)), offset16);
            const __m256i p = _mm256_mullo_epi16(
                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w)), x);
            acc_lo = _mm256_add_epi32(acc_lo, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(p)));
            acc_hi =
                _mm256_add_epi32(acc_hi, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(p, 1)));
          }
        }
        finish8(&f, acc_lo, ch, out);
        finish8(&f, acc_hi, ch + 8, out);
      }
      if (ch + 8 <= c) {
        __m256i acc = _mm256_setzero_si256();
        for (int32_t ky = t.ky_begin; ky < t.ky_end; ky++) {
          for (int32_t kx = t.kx_begin; kx < t.kx_end; kx++) {
            const int8_t *px = input + wick_conv_tap_pixel(s, &t, ky, kx) * c + ch;
            const int8_t *w = filter + ((int64_t)ky * s->k_w + kx) * c + ch;
            const __m128i x =
                _mm_sub_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)px)),
                              offset8);
            const __m128i p = _mm_mullo_epi16(
                _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)w)), x);
            acc = _mm256_add_epi32(acc, _mm256_cvtepi16_epi32(p));
          }
        }
        finish8(&f, acc, ch, out);
        ch += 8;
      }
      for (; ch < c; ch++)
        out[ch] = wick_hybrid_dw_channel(s, &t, filter, input, c, ch, input_offset, f.scales,
                                         f.input_scale_1, f.conv_rescale, f.bias, f.lo_1, f.hi_1);
    }
}

/* The paired form: channels in chunks of HDW_CHUNK. Per chunk the filter is packed once into
 * int16 pairs of taps (tap 2p and 2p + 1 of a channel side by side, a zero weight after an odd
 * last tap), so that one madd multiplies two taps of 8 channels and adds them in int32. The
 * image is not shifted by its zero point tap by tap: a tap outside the image reads a row of
 * zero points instead (pad), every pixel sums w * x over all taps, and the sum then loses
 * zero point * (sum of the channel's weights). Over the taps inside that is
 * sum w * x - zp * sum w = sum w * (x - zp), the reference's sum; outside, w * zp - w * zp = 0.
 * All of it is int32 arithmetic that wraps, so it equals the reference's uint32 sum exactly. */
#define HDW_CHUNK 128    /* channels per chunk (a multiple of 16) */
#define HDW_MAX_PAIRS 13 /* up to 26 taps (5x5) on the paired form */

static void hdw_paired(const wick_conv_shape *s, const int8_t *input, int32_t input_offset,
                       const int8_t *filter, const hdw_finish *f, float *output, int32_t y0,
                       int32_t y1, int64_t c16) {
  const int64_t c = s->out_c;
  const int32_t taps = s->k_h * s->k_w, pairs = (taps + 1) / 2;
  _Alignas(32) int16_t packed[HDW_MAX_PAIRS * HDW_CHUNK * 2];
  _Alignas(32) int32_t correction[HDW_CHUNK]; /* zp * sum of the channel's weights (wraps) */
  int8_t pad[HDW_CHUNK];
  const int8_t *tap[2 * HDW_MAX_PAIRS];
  memset(pad, (int)(int8_t)input_offset, sizeof pad);
  for (int64_t c0 = 0; c0 < c16; c0 += HDW_CHUNK) {
    const int64_t cn = c16 - c0 < HDW_CHUNK ? c16 - c0 : HDW_CHUNK;
    const __m256i ones = _mm256_set1_epi16(1), zp = _mm256_set1_epi32(input_offset);
    for (int64_t ch = 0; ch < cn; ch += 16) {
      __m256i sum_lo = _mm256_setzero_si256(), sum_hi = _mm256_setzero_si256();
      for (int32_t p = 0; p < pairs; p++) {
        const int8_t *w = filter + (int64_t)(2 * p) * c + c0 + ch;
        const __m128i w0 = _mm_loadu_si128((const __m128i *)(const void *)w);
        const __m128i w1 = 2 * p + 1 < taps
                               ? _mm_loadu_si128((const __m128i *)(const void *)(w + c))
                               : _mm_setzero_si128();
        const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(w0, w1));
        const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(w0, w1));
        _mm256_store_si256((__m256i *)(void *)(packed + (p * cn + ch) * 2), lo);
        _mm256_store_si256((__m256i *)(void *)(packed + (p * cn + ch) * 2 + 16), hi);
        sum_lo = _mm256_add_epi32(sum_lo, _mm256_madd_epi16(lo, ones));
        sum_hi = _mm256_add_epi32(sum_hi, _mm256_madd_epi16(hi, ones));
      }
      _mm256_store_si256((__m256i *)(void *)(correction + ch), _mm256_mullo_epi32(sum_lo, zp));
      _mm256_store_si256((__m256i *)(void *)(correction + ch + 8), _mm256_mullo_epi32(sum_hi, zp));
    }
    for (int32_t oy = y0; oy < y1; oy++)
      for (int32_t ox = 0; ox < s->out_w; ox++) {
        const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_top;
        const int64_t ix0 = (int64_t)ox * s->stride_w - s->pad_left;
        for (int32_t ky = 0; ky < s->k_h; ky++) {
          const int64_t iy = iy0 + (int64_t)ky * s->dilation_h;
          const bool row_in = iy >= 0 && iy < s->in_h;
          for (int32_t kx = 0; kx < s->k_w; kx++) {
            const int64_t ix = ix0 + (int64_t)kx * s->dilation_w;
            tap[ky * s->k_w + kx] =
                row_in && ix >= 0 && ix < s->in_w ? input + (iy * s->in_w + ix) * c + c0 : pad;
          }
        }
        if (taps & 1) tap[taps] = tap[taps - 1]; /* its weight is 0 */
        float *out = output + ((int64_t)oy * s->out_w + ox) * c + c0;
        for (int64_t b = 0; b < cn; b += 16) {
          __m256i acc_lo = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
          const int16_t *w = packed + b * 2;
          for (int32_t p = 0; p < pairs; p++, w += cn * 2) {
            const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(tap[2 * p] + b));
            const __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(tap[2 * p + 1] + b));
            const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x0, x1));
            const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x0, x1));
            acc_lo = _mm256_add_epi32(
                acc_lo, _mm256_madd_epi16(lo, _mm256_load_si256((const __m256i *)(const void *)w)));
            acc_hi = _mm256_add_epi32(
                acc_hi,
                _mm256_madd_epi16(hi, _mm256_load_si256((const __m256i *)(const void *)(w + 16))));
          }
          acc_lo =
              _mm256_sub_epi32(acc_lo,
                               _mm256_load_si256((const __m256i *)(const void *)(correction + b)));
          acc_hi =
              _mm256_sub_epi32(acc_hi, _mm256_load_si256(
                                           (const __m256i *)(const void *)(correction + b + 8)));
          finish8(f, acc_lo, c0 + b, out - c0);
          finish8(f, acc_hi, c0 + b + 8, out - c0);
        }
      }
  }
}

void wick_hybrid_dwconv__avx2(const wick_conv_shape *s, const int8_t *input, int32_t input_offset,
                              float input_scale, const int8_t *filter, const float *filter_scales,
                              bool conv_rescale, const float *bias, float *output, float lo,
                              float hi, int32_t y0, int32_t y1) {
  const hdw_finish f = {filter_scales,
                        _mm256_set1_ps(input_scale),
                        _mm256_set1_ps(lo),
                        _mm256_set1_ps(hi),
                        bias,
                        conv_rescale,
                        input_scale,
                        lo,
                        hi};
  const int64_t c16 = s->out_c / 16 * 16;
  int64_t done = 0;
  if ((int64_t)s->k_h * s->k_w <= 2 * HDW_MAX_PAIRS && c16 > 0) {
    hdw_paired(s, input, input_offset, filter, &f, output, y0, y1, c16);
    done = c16;
  }
  if (done < s->out_c) hdw_pixels(s, input, input_offset, filter, &f, output, y0, y1, done);
}

/* hybrid_rescale: the float rescale of one row of a hybrid GEMM's int32 sums, bit-identical to
 * the ops' scalar loops (kernels.h gives both orders). The sums' zero-point term wraps in 32
 * bits as the scalar code's uint32 arithmetic does; the float operations are the scalar
 * expression's, one by one. */
void wick_hybrid_rescale__avx2(size_t n, const int32_t *acc, const uint32_t *weight_sums,
                               uint32_t offset, const float *weight_scales, float row_scale,
                               bool conv_order, const float *bias, float lo, float hi, float *out) {
  const __m256 vrow = _mm256_set1_ps(row_scale), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256i voff = _mm256_set1_epi32((int32_t)offset);
  size_t c = 0;
  for (; c + 8 <= n; c += 8) {
    __m256i dot = _mm256_loadu_si256((const __m256i *)(const void *)(acc + c));
    if (weight_sums != NULL)
      dot =
          _mm256_sub_epi32(dot,
                           _mm256_mullo_epi32(_mm256_loadu_si256(
                                                  (const __m256i *)(const void *)(weight_sums + c)),
                                              voff));
    const __m256 d = _mm256_cvtepi32_ps(dot);
    __m256 y;
    if (conv_order) {
      y = _mm256_mul_ps(_mm256_mul_ps(d, _mm256_loadu_ps(weight_scales + c)), vrow);
      if (bias != NULL) y = _mm256_add_ps(y, _mm256_loadu_ps(bias + c));
    } else {
      const __m256 s =
          weight_scales != NULL ? _mm256_mul_ps(vrow, _mm256_loadu_ps(weight_scales + c)) : vrow;
      y = _mm256_add_ps(bias != NULL ? _mm256_loadu_ps(bias + c) : _mm256_setzero_ps(),
                        _mm256_mul_ps(d, s));
    }
    _mm256_storeu_ps(out + c, _mm256_max_ps(vlo, _mm256_min_ps(vhi, y)));
  }
  for (; c < n; c++) {
    const uint32_t u = (uint32_t)acc[c] - (weight_sums != NULL ? weight_sums[c] * offset : 0u);
    const float d = (float)(int32_t)u;
    float y;
    if (conv_order) {
      y = d * weight_scales[c] * row_scale;
      if (bias != NULL) y += bias[c];
    } else {
      y = bias != NULL ? bias[c] : 0.0f;
      y += d * (weight_scales != NULL ? row_scale * weight_scales[c] : row_scale);
    }
    out[c] = y < lo ? lo : (y > hi ? hi : y);
  }
}
