/*
 * avx2/q8_softmax.c — q8_softmax.c's 8-bit SOFTMAX rows for AVX2. Rows of up
 * to BLOCK_COLS elements (attention's, 32 to a few hundred) go in blocks of
 * BLOCK_ROWS:
 *
 *   1. per row: the maximum (VPMAXSB / VPMAXUB, overlapping loads, then
 *      across the lanes), the exps[d] of every element (one gather per 8,
 *      kept in a block buffer) and the row sum of their sums[d] terms,
 *      computed from the exps (sums[d] = rdivpot(exps[d], 12), and exps are
 *      >= 0: (e + 2^11) >> 12 unsigned) instead of gathered a second time;
 *   2. the reference's reciprocal (wick_q_softmax_row_scale) of the block's
 *      8 sums at once: gemmlowp's Newton-Raphson one_over_one_plus_x on 8
 *      lanes (SRDHM as two 64-bit products per vector, saturating shifts as
 *      compares and blends), the rest scalar;
 *   3. per row, per element the reference's two roundings fused into one,
 *      floor((S * exps[d] + K) / 2^sh) as two 64-bit unsigned products per
 *      vector (even and odd lanes), + the output minimum, clamped, 32
 *      outputs per store.
 *
 * Longer rows run one at a time with a second gather of the sums (no
 * buffer). Exact for S >= 0, which every row shorter than 4096 elements
 * has; a row whose scale comes out negative runs the reference kernel.
 * Compiled with -mavx2.
 */
#include <immintrin.h>
#include <string.h>

#include "kernels/q8.h"

#define INLINE static inline __attribute__((always_inline))
#define BLOCK_ROWS 8
#define BLOCK_COLS 256

/* 8 inputs widened to int32 lanes. */
INLINE __m256i load8(const uint8_t *p, bool u8) {
  const __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
  return u8 ? _mm256_cvtepu8_epi32(v) : _mm256_cvtepi8_epi32(v);
}

INLINE __m128i max16(__m128i a, __m128i b, bool u8) {
  return u8 ? _mm_max_epu8(a, b) : _mm_max_epi8(a, b);
}

/* The row's maximum: whole vectors, the last one overlapping the one before (a maximum may
 * see an element twice), then across the lanes. */
INLINE int32_t row_max(const uint8_t *x, size_t cols, bool u8) {
  if (cols < 16) {
    int32_t max = u8 ? 0 : -128;
    for (size_t c = 0; c < cols; c++) {
      const int32_t v = u8 ? x[c] : (int8_t)x[c];
      max = v > max ? v : max;
    }
    return max;
  }
  __m128i m;
  if (cols >= 32) {
    __m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(x + cols - 32));
    for (size_t c = 0; c + 32 < cols; c += 32) {
      const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + c));
      w = u8 ? _mm256_max_epu8(w, v) : _mm256_max_epi8(w, v);
    }
    m = max16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1), u8);
  } else {
    m = max16(_mm_loadu_si128((const __m128i *)(const void *)x),
              _mm_loadu_si128((const __m128i *)(const void *)(x + cols - 16)), u8);
  }
  m = max16(m, _mm_srli_si128(m, 8), u8);
  m = max16(m, _mm_srli_si128(m, 4), u8);
  m = max16(m, _mm_srli_si128(m, 2), u8);
  m = max16(m, _mm_srli_si128(m, 1), u8);
  const int32_t b = _mm_cvtsi128_si32(m) & 0xFF;
  return u8 ? b : (int32_t)(int8_t)b;
}

/* 8 outputs (int32 lanes) of exps e: floor((s * e + k) / 2^sh) + omin, at most omax. */
INLINE __m256i outputs8(__m256i e, __m256i s, __m256i k, __m128i sh, __m256i omin, __m256i omax) {
  const __m256i even = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(e, s), k), sh);
  const __m256i odd =
      _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(e, 32), s), k), sh);
  const __m256i v = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  return _mm256_min_epi32(_mm256_add_epi32(v, omin), omax);
}

/* ---- the reciprocal on 8 lanes (reference/quantized_activations.c's one_over_one_plus_x) */

/* gemmlowp's SaturatingRoundingDoublingHighMul: the reference's (a*b + nudge) / 2^31, truncated,
 * is floor((a*b + 2^30) / 2^31) for either sign of a*b; bits 31..62 of the 64-bit sum. The one
 * quotient that does not fit (a = b = INT32_MIN) comes out INT32_MIN, flipped to INT32_MAX. */
INLINE __m256i srdhm8(__m256i a, __m256i b) {
  const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, b), nudge), 31);
  const __m256i odd = _mm256_slli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), nudge),
      1);
  const __m256i min = _mm256_set1_epi32(INT32_MIN);
  const __m256i both_min = _mm256_and_si256(_mm256_cmpeq_epi32(a, min), _mm256_cmpeq_epi32(b, min));
  return _mm256_xor_si256(_mm256_blend_epi32(even, odd, 0xAA), both_min);
}

/* x * 2^e saturated to int32 (the reference's sat_shl), e in [1, 30]. */
INLINE __m256i sat_shl8(__m256i x, int e) {
  const __m256i threshold = _mm256_set1_epi32((int32_t)(((int64_t)1 << (31 - e)) - 1));
  const __m256i over = _mm256_cmpgt_epi32(x, threshold);
  const __m256i under = _mm256_cmpgt_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), threshold), x);
  __m256i r = _mm256_sll_epi32(x, _mm_cvtsi32_si128(e));
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(INT32_MAX), over);
  return _mm256_blendv_epi8(r, _mm256_set1_epi32(INT32_MIN), under);
}

/* 1 / (1 + a) for a in [0, 1), Q0.31, Newton-Raphson as the reference (wrapping adds). */
INLINE __m256i one_over_one_plus_x8(__m256i a) {
  const __m256i min = _mm256_set1_epi32(INT32_MIN);
  /* (a + INT32_MAX + sign) / 2: (a + 2^31) / 2 from the biased value, -1 for a = INT32_MIN */
  const __m256i half_denominator =
      _mm256_or_si256(_mm256_srli_epi32(_mm256_xor_si256(a, min), 1), _mm256_cmpeq_epi32(a, min));
  __m256i x = _mm256_add_epi32(_mm256_set1_epi32(1515870810),
                               srdhm8(half_denominator, _mm256_set1_epi32(-1010580540)));
  for (int i = 0; i < 3; i++) {
    const __m256i one_minus =
        _mm256_sub_epi32(_mm256_set1_epi32(1 << 29), srdhm8(half_denominator, x));
    x = _mm256_add_epi32(x, sat_shl8(srdhm8(x, one_minus), 2));
  }
  return sat_shl8(x, 1);
}

/* wick_q_softmax_row_scale of 8 row sums. */
INLINE void row_scales8(const uint32_t sum[BLOCK_ROWS], int32_t out_bits, int32_t scale[BLOCK_ROWS],
                        int32_t exponent[BLOCK_ROWS]) {
  int32_t a[BLOCK_ROWS];
  for (int i = 0; i < BLOCK_ROWS; i++) {
    const int32_t headroom_plus_one = sum[i] == 0 ? 32 : __builtin_clz(sum[i]);
    a[i] = (int32_t)(((uint64_t)sum[i] << headroom_plus_one) - ((uint64_t)1 << 31));
    exponent[i] = 12 - headroom_plus_one + 31 - out_bits;
  }
  _mm256_storeu_si256((__m256i *)(void *)scale,
                      one_over_one_plus_x8(_mm256_loadu_si256((const __m256i *)(const void *)a)));
  for (int i = 0; i < BLOCK_ROWS; i++) {
    if (exponent[i] > 31) scale[i] = exponent[i] = 0; /* see wick_q_softmax_row_scale */
    if (exponent[i] < 0) exponent[i] = 0;
  }
}

/* ---- rows */

/* Narrows 8 outputs and stores them (8 bytes, or 16 for int16). */
INLINE void store8(__m256i v, wick_dtype out_t, uint8_t *o) {
  const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  if (out_t == WICK_DTYPE_INT16)
    _mm_storeu_si128((__m128i *)(void *)o, p16);
  else
    _mm_storel_epi64((__m128i *)(void *)o, out_t == WICK_DTYPE_UINT8 ? _mm_packus_epi16(p16, p16)
                                                                     : _mm_packs_epi16(p16, p16));
}

/* One row's outputs from its exps e[0 .. cols) (e: loaded), and the row's scale. */
INLINE void row_outputs(const int32_t *e, size_t cols, int32_t scale, int32_t exponent,
                        wick_dtype out_t, __m256i omin, __m256i omax, int32_t lo, int32_t hi,
                        uint8_t *o) {
  const size_t osize = out_t == WICK_DTYPE_INT16 ? 2 : 1;
  const uint64_t k64 = ((uint64_t)1 << 30) + (exponent > 0 ? (uint64_t)1 << (30 + exponent) : 0);
  const __m256i s = _mm256_set1_epi64x(scale), k = _mm256_set1_epi64x((int64_t)k64);
  const __m128i sh = _mm_cvtsi32_si128(31 + exponent);
  size_t c = 0;
#define EXPS(i) _mm256_loadu_si256((const __m256i *)(const void *)(e + c + 8 * (i)))
  if (out_t != WICK_DTYPE_INT16)
    for (; c + 32 <= cols; c += 32) { /* 32 bytes per store */
      const __m256i v0 = outputs8(EXPS(0), s, k, sh, omin, omax);
      const __m256i v1 = outputs8(EXPS(1), s, k, sh, omin, omax);
      const __m256i v2 = outputs8(EXPS(2), s, k, sh, omin, omax);
      const __m256i v3 = outputs8(EXPS(3), s, k, sh, omin, omax);
      const __m256i p01 = _mm256_packs_epi32(v0, v1), p23 = _mm256_packs_epi32(v2, v3);
      const __m256i b =
          out_t == WICK_DTYPE_UINT8 ? _mm256_packus_epi16(p01, p23) : _mm256_packs_epi16(p01, p23);
      _mm256_storeu_si256((__m256i *)(void *)(o + c),
                          _mm256_permutevar8x32_epi32(b,
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    }
  for (; c + 8 <= cols; c += 8)
    store8(outputs8(EXPS(0), s, k, sh, omin, omax), out_t, o + c * osize);
#undef EXPS
  for (; c < cols; c++) {
    int32_t v =
        (int32_t)(((uint64_t)(uint32_t)scale * (uint32_t)e[c] + k64) >> (31 + exponent)) + lo;
    v = v > hi ? hi : v;
    if (out_t == WICK_DTYPE_INT16) {
      const int16_t h = (int16_t)v;
      memcpy(o + 2 * c, &h, sizeof h);
    } else {
      o[c] = (uint8_t)v;
    }
  }
}

/* Rows of at most BLOCK_COLS elements, BLOCK_ROWS at a time. */
INLINE void short_rows(const int32_t *exps, const wick_qsoftmax_params *p, wick_dtype in_t,
                       wick_dtype out_t, size_t rows, size_t cols, const void *in, void *out) {
  const bool u8 = in_t == WICK_DTYPE_UINT8, wide = out_t == WICK_DTYPE_INT16;
  const int32_t lo = wide ? INT16_MIN : (out_t == WICK_DTYPE_UINT8 ? 0 : -128);
  const int32_t hi = wide ? INT16_MAX : (out_t == WICK_DTYPE_UINT8 ? 255 : 127);
  const size_t osize = wide ? 2 : 1;
  const __m256i omin = _mm256_set1_epi32(lo), omax = _mm256_set1_epi32(hi);
  const __m256i half = _mm256_set1_epi32(1 << 11);
  int32_t block[BLOCK_ROWS * BLOCK_COLS]; /* the block's exps, row i at i * cols */
  for (size_t r0 = 0; r0 < rows; r0 += BLOCK_ROWS) {
    const size_t nb = rows - r0 < BLOCK_ROWS ? rows - r0 : BLOCK_ROWS;
    uint32_t sum[BLOCK_ROWS] = {0};
    for (size_t i = 0; i < nb; i++) {
      const uint8_t *x = (const uint8_t *)in + (r0 + i) * cols;
      int32_t *e = block + i * cols;
      const int32_t max = row_max(x, cols, u8);
      const __m256i vmax = _mm256_set1_epi32(max);
      __m256i acc = _mm256_setzero_si256();
      size_t c = 0;
      for (; c + 8 <= cols; c += 8) {
        const __m256i v = _mm256_i32gather_epi32(exps, _mm256_sub_epi32(vmax, load8(x + c, u8)), 4);
        _mm256_storeu_si256((__m256i *)(void *)(e + c), v);
        acc = _mm256_add_epi32(acc, _mm256_srli_epi32(_mm256_add_epi32(v, half), 12));
      }
      __m128i a4 = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
      a4 = _mm_add_epi32(a4, _mm_shuffle_epi32(a4, 0x4E));
      a4 = _mm_add_epi32(a4, _mm_shuffle_epi32(a4, 0xB1));
      uint32_t s = (uint32_t)_mm_cvtsi128_si32(a4);
      for (; c < cols; c++) {
        e[c] = exps[max - (u8 ? x[c] : (int8_t)x[c])];
        s += ((uint32_t)e[c] + (1u << 11)) >> 12;
      }
      sum[i] = s;
    }
    int32_t scale[BLOCK_ROWS], exponent[BLOCK_ROWS];
    row_scales8(sum, wide ? 16 : 8, scale, exponent);
    for (size_t i = 0; i < nb; i++) {
      const uint8_t *x = (const uint8_t *)in + (r0 + i) * cols;
      uint8_t *o = (uint8_t *)out + (r0 + i) * cols * osize;
      if (scale[i] < 0)
        wick_q_softmax__reference(in_t, out_t, 1, (int64_t)cols, p, x, o);
      else
        row_outputs(block + i * cols, cols, scale[i], exponent[i], out_t, omin, omax, lo, hi, o);
    }
  }
}

/* Rows of any length, one at a time: the sums gathered, then the exps a second time. */
INLINE void long_rows(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
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
    int32_t chunk[256];
    for (size_t c0 = 0; c0 < cols; c0 += 256) {
      const size_t n = cols - c0 < 256 ? cols - c0 : 256;
      for (c = 0; c + 8 <= n; c += 8)
        _mm256_storeu_si256((__m256i *)(void *)(chunk + c),
                            _mm256_i32gather_epi32(exps,
                                                   _mm256_sub_epi32(vmax, load8(x + c0 + c, u8)),
                                                   4));
      for (; c < n; c++) chunk[c] = exps[max - (u8 ? x[c0 + c] : (int8_t)x[c0 + c])];
      row_outputs(chunk, n, scale, e, out_t, omin, omax, lo, hi, o + c0 * osize);
    }
  }
}

INLINE void rows_body(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
                      wick_dtype in_t, wick_dtype out_t, size_t rows, size_t cols, const void *in,
                      void *out) {
  if (cols <= BLOCK_COLS)
    short_rows(exps, p, in_t, out_t, rows, cols, in, out);
  else
    long_rows(exps, sums, p, in_t, out_t, rows, cols, in, out);
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
