/*
 * avx2/q8_softmax.c — q8_softmax.c's 8-bit SOFTMAX rows for AVX2, 8
 * elements per vector: the row maximum (VPMAXSB / VPMAXUB), the row sum of
 * the op's sums[d] table (gathered, wrapping int32 lanes), the reference's
 * reciprocal (wick_q_softmax_row_scale, scalar), then per element the fused
 * roundings floor((S * exps[d] + K) / 2^sh) as two 64-bit unsigned products
 * per vector (even and odd lanes), + the output minimum, clamped. Exact for
 * S >= 0, which every row shorter than 4096 elements has; a row whose scale
 * comes out negative runs the reference kernel. Compiled with -mavx2.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))

/* 8 inputs widened to int32 lanes. */
INLINE __m256i load8(const uint8_t *p, bool u8) {
  const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
  return u8 ? _mm256_cvtepu8_epi32(v) : _mm256_cvtepi8_epi32(v);
}

/* The row's maximum. */
INLINE int32_t row_max(const uint8_t *x, size_t cols, bool u8) {
  int32_t max = u8 ? 0 : -128;
  size_t c = 0;
  if (cols >= 32) {
    __m256i m = _mm256_loadu_si256((const __m256i *)(const void *)x);
    for (c = 32; c + 32 <= cols; c += 32) {
      const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + c));
      m = u8 ? _mm256_max_epu8(m, v) : _mm256_max_epi8(m, v);
    }
    uint8_t lanes[32];
    _mm256_storeu_si256((__m256i *)(void *)lanes, m);
    for (int i = 0; i < 32; i++) {
      const int32_t v = u8 ? lanes[i] : (int8_t)lanes[i];
      max = v > max ? v : max;
    }
  }
  for (; c < cols; c++) {
    const int32_t v = u8 ? x[c] : (int8_t)x[c];
    max = v > max ? v : max;
  }
  return max;
}

/* 8 outputs (int32 lanes) of elements with differences d from the maximum. */
INLINE __m256i outputs8(__m256i d, const int32_t *exps, __m256i s, __m256i k, __m128i sh,
                        __m256i omin, __m256i omax) {
  const __m256i e = _mm256_i32gather_epi32(exps, d, 4);
  const __m256i even = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(e, s), k), sh);
  const __m256i odd =
      _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(e, 32), s), k), sh);
  const __m256i v = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  return _mm256_min_epi32(_mm256_add_epi32(v, omin), omax);
}

INLINE void rows_body(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
                      wick_dtype in_t, wick_dtype out_t, size_t rows, size_t cols, const void *in,
                      void *out) {
  const bool u8 = in_t == WICK_DTYPE_UINT8, wide = out_t == WICK_DTYPE_INT16;
  const int32_t lo = wide ? INT16_MIN : (out_t == WICK_DTYPE_UINT8 ? 0 : -128);
  const int32_t hi = wide ? INT16_MAX : (out_t == WICK_DTYPE_UINT8 ? 255 : 127);
  const size_t osize = wide ? 2 : 1;
  const __m256i omin = _mm256_set1_epi32(lo), omax = _mm256_set1_epi32(hi);
  for (size_t r = 0; r < rows; r++) {
    const uint8_t *x = (const uint8_t *)in + r * cols;
    uint8_t *o = (uint8_t *)out + r * cols * osize;
    const int32_t max = row_max(x, cols, u8);
    const __m256i vmax = _mm256_set1_epi32(max);
    __m256i acc = _mm256_setzero_si256();
    size_t c = 0;
    for (; c + 8 <= cols; c += 8)
      acc = _mm256_add_epi32(acc,
                             _mm256_i32gather_epi32(sums, _mm256_sub_epi32(vmax, load8(x + c, u8)),
                                                    4));
    uint32_t lanes[8], sum = 0;
    _mm256_storeu_si256((__m256i *)(void *)lanes, acc);
    for (int i = 0; i < 8; i++) sum += lanes[i];
    for (; c < cols; c++) sum += (uint32_t)sums[max - (u8 ? x[c] : (int8_t)x[c])];
    int32_t scale, e;
    wick_q_softmax_row_scale((int32_t)sum, wide ? 16 : 8, &scale, &e);
    if (scale < 0) {
      wick_q_softmax__reference(in_t, out_t, 1, (int64_t)cols, p, x, o);
      continue;
    }
    const __m256i s = _mm256_set1_epi64x(scale);
    const __m256i k =
        _mm256_set1_epi64x((int64_t)(((uint64_t)1 << 30) + (e > 0 ? (uint64_t)1 << (30 + e) : 0)));
    const __m128i sh = _mm_cvtsi32_si128(31 + e);
    for (c = 0; c < cols; c += 8) {
      uint8_t t[8] = {0};
      const size_t n = cols - c < 8 ? cols - c : 8;
      const uint8_t *src = x + c;
      if (n < 8) { /* the tail: padded with the maximum (d = 0), outputs dropped */
        memset(t, (int)(uint8_t)max, 8);
        memcpy(t, x + c, n);
        src = t;
      }
      const __m256i v =
          outputs8(_mm256_sub_epi32(vmax, load8(src, u8)), exps, s, k, sh, omin, omax);
      const __m128i p16 =
          _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
      if (wide) {
        int16_t w[8];
        _mm_storeu_si128((__m128i *)(void *)w, p16);
        memcpy(o + c * 2, w, n * 2);
      } else {
        uint8_t b[16];
        _mm_storeu_si128((__m128i *)(void *)b, out_t == WICK_DTYPE_UINT8
                                                   ? _mm_packus_epi16(p16, p16)
                                                   : _mm_packs_epi16(p16, p16));
        memcpy(o + c, b, n);
      }
    }
  }
}

void wick_q8_softmax_rows__avx2(const int32_t exps[256], const int32_t sums[256],
                                const wick_qsoftmax_params *p, wick_dtype in_type,
                                wick_dtype out_type, size_t rows, size_t cols, const void *in,
                                void *out) {
  if (out_type == WICK_DTYPE_INT8)
    rows_body(exps, sums, p, in_type, WICK_DTYPE_INT8, rows, cols, in, out);
  else if (out_type == WICK_DTYPE_UINT8)
    rows_body(exps, sums, p, in_type, WICK_DTYPE_UINT8, rows, cols, in, out);
  else
    rows_body(exps, sums, p, in_type, WICK_DTYPE_INT16, rows, cols, in, out);
}
