/*
 * avx2/q4_blocks.c — the AVX2 kernel of blockwise int4 FULLY_CONNECTED
 * (q4.h), for blocks of a multiple of 32 values.
 *
 * A prepared row holds x_q (int8, the quantized input with its zero point
 * zp) with each 32 values reordered as [x0 x2 .. x30 | x1 x3 .. x31], then
 * one int32 per block, -8 * sum over the block of (x_q - zp), then zp. 16
 * weight bytes broadcast to both halves of a register, the high half shifted
 * by 4, masked to nibbles and XORed with 8 give u = w + 8 in [0, 15] in that
 * same order: low nibbles (even elements), then high nibbles (odd ones).
 * VPMADDUBSW multiplies u (unsigned) by x_q and by zp; their difference is
 * pairs of u * (x_q - zp), |.| <= 2 * 15 * 255 (exact in int16); VPMADDWD
 * widens to int32. So a block's lanes sum to sum u * (x_q - zp), and
 *     sum (x_q - zp) * w = sum u * (x_q - zp) - 8 * sum (x_q - zp),
 * the second term being the row's per-block correction. Eight blocks' lane
 * vectors are reduced together (VPHADDD) into one vector of eight sums;
 * four rows share each unpacked weight chunk (prefill).
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/q4.h"

size_t wick_q4_row_bytes__avx2(size_t k, size_t bs) {
  return (k + 4 * (k / bs) + 4 + 63) / 64 * 64;
}

static inline int32_t hsum(__m256i v);

/* On vectors: per 32 values, x_q = xd + zp (in [-128, 127]) split into the even and odd
 * elements (SRAI of the int32 lanes), packed to bytes (within 128-bit halves) and put in
 * order by one VPERMD; the block sums of xd by VPMADDWD. */
void wick_q4_prepare__avx2(size_t k, size_t bs, const int16_t *xd, int32_t zp, void *row) {
  int8_t *x = row;
  const size_t nb = k / bs;
  int32_t *corr = (int32_t *)(void *)(x + k); /* (k is a multiple of 32: aligned) */
  const __m256i zpv = _mm256_set1_epi16((int16_t)zp), ones = _mm256_set1_epi16(1);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    __m256i total = _mm256_setzero_si256();
    for (const size_t end = c + bs; c < end; c += 32) {
      const __m256i d0 = _mm256_loadu_si256((const __m256i *)(const void *)(xd + c));
      const __m256i d1 = _mm256_loadu_si256((const __m256i *)(const void *)(xd + c + 16));
      total = _mm256_add_epi32(total, _mm256_add_epi32(_mm256_madd_epi16(d0, ones),
                                                       _mm256_madd_epi16(d1, ones)));
      const __m256i q0 = _mm256_add_epi16(d0, zpv), q1 = _mm256_add_epi16(d1, zpv);
      const __m256i even = _mm256_packs_epi32(_mm256_srai_epi32(_mm256_slli_epi32(q0, 16), 16),
                                              _mm256_srai_epi32(_mm256_slli_epi32(q1, 16), 16));
      const __m256i odd = _mm256_packs_epi32(_mm256_srai_epi32(q0, 16), _mm256_srai_epi32(q1, 16));
      /* dwords: half 0 holds the even elements 0-6, 16-22, the odd 1-7, 17-23; half 1 the
       * even 8-14, 24-30, the odd 9-15, 25-31: VPERMD puts them in order */
      _mm256_storeu_si256((__m256i *)(void *)(x + c),
                          _mm256_permutevar8x32_epi32(_mm256_packs_epi16(even, odd), order));
    }
    corr[b] = -8 * hsum(total);
  }
  corr[nb] = zp;
}

static inline int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

/* The lanes of one block: sum u * (x_q - zp) over it, spread over 8 int32 lanes. */
static inline __m256i block(const int8_t *x, const uint8_t *w, size_t bs, __m256i zpv) {
  const __m256i shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
  const __m256i mask = _mm256_set1_epi8(15), eight = _mm256_set1_epi8(8);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc = _mm256_setzero_si256();
  for (size_t p = 0; p < bs; p += 32) {
    const __m256i bytes =
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(w + p / 2)));
    const __m256i u =
        _mm256_xor_si256(_mm256_and_si256(_mm256_srlv_epi32(bytes, shift), mask), eight);
    const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)(x + p));
    const __m256i d = _mm256_sub_epi16(_mm256_maddubs_epi16(u, xv), _mm256_maddubs_epi16(u, zpv));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(d, ones));
  }
  return acc;
}

/* Four rows at once, two blocks at a time: each weight chunk is unpacked once for the four
 * rows; the eight lane vectors (row r, block b + t at 2r + t) are reduced together. Writes
 * out[(r * nb + b) * cols]. */
static void four_rows(size_t k, size_t bs, const int8_t *x0, size_t row_stride, const uint8_t *w4,
                      int32_t *out, size_t cols) {
  const size_t nb = k / bs;
  const __m256i shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);
  const __m256i mask = _mm256_set1_epi8(15), eight = _mm256_set1_epi8(8);
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t *x[4] = {x0, x0 + row_stride, x0 + 2 * row_stride, x0 + 3 * row_stride};
  const int32_t *corr[4];
  __m256i zpv[4];
  for (int r = 0; r < 4; r++) {
    corr[r] = (const int32_t *)(const void *)(x[r] + k);
    zpv[r] = _mm256_set1_epi8((int8_t)corr[r][nb]);
  }
  size_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    __m256i a[8];
    for (int i = 0; i < 8; i++) a[i] = _mm256_setzero_si256();
    for (int t = 0; t < 2; t++)
      for (size_t p = (b + t) * bs; p < (b + t + 1) * bs; p += 32) {
        const __m256i bytes = _mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)(const void *)(w4 + p / 2)));
        const __m256i u =
            _mm256_xor_si256(_mm256_and_si256(_mm256_srlv_epi32(bytes, shift), mask), eight);
        for (int r = 0; r < 4; r++) {
          const __m256i xv = _mm256_loadu_si256((const __m256i *)(const void *)(x[r] + p));
          const __m256i d =
              _mm256_sub_epi16(_mm256_maddubs_epi16(u, xv), _mm256_maddubs_epi16(u, zpv[r]));
          a[2 * r + t] = _mm256_add_epi32(a[2 * r + t], _mm256_madd_epi16(d, ones));
        }
      }
    const __m256i h0 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(a[0], a[1]), _mm256_hadd_epi32(a[2], a[3]));
    const __m256i h1 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(a[4], a[5]), _mm256_hadd_epi32(a[6], a[7]));
    int32_t total[8];
    _mm256_storeu_si256((__m256i *)(void *)total,
                        _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                                         _mm256_permute2x128_si256(h0, h1, 0x31)));
    for (int r = 0; r < 4; r++) {
      out[(r * nb + b) * cols] = total[2 * r] + corr[r][b];
      out[(r * nb + b + 1) * cols] = total[2 * r + 1] + corr[r][b + 1];
    }
  }
  for (; b < nb; b++)
    for (int r = 0; r < 4; r++)
      out[(r * nb + b) * cols] =
          hsum(block(x[r] + b * bs, w4 + b * bs / 2, bs, zpv[r])) + corr[r][b];
}

/* One row: eight blocks at a time, reduced together. Writes out[b * cols]. */
static void one_row(size_t k, size_t bs, const int8_t *x, const uint8_t *w4, int32_t *out,
                    size_t cols) {
  const size_t nb = k / bs;
  const int32_t *corr = (const int32_t *)(const void *)(x + k);
  const __m256i zpv = _mm256_set1_epi8((int8_t)corr[nb]);
  size_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    const int8_t *xb = x + b * bs;
    const uint8_t *wb = w4 + b * bs / 2;
    const __m256i a0 = block(xb, wb, bs, zpv), a1 = block(xb + bs, wb + bs / 2, bs, zpv);
    const __m256i a2 = block(xb + 2 * bs, wb + bs, bs, zpv);
    const __m256i a3 = block(xb + 3 * bs, wb + 3 * bs / 2, bs, zpv);
    const __m256i a4 = block(xb + 4 * bs, wb + 2 * bs, bs, zpv);
    const __m256i a5 = block(xb + 5 * bs, wb + 5 * bs / 2, bs, zpv);
    const __m256i a6 = block(xb + 6 * bs, wb + 3 * bs, bs, zpv);
    const __m256i a7 = block(xb + 7 * bs, wb + 7 * bs / 2, bs, zpv);
    const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
    const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(a4, a5), _mm256_hadd_epi32(a6, a7));
    const __m256i total = _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
                                           _mm256_permute2x128_si256(h0, h1, 0x31));
    int32_t v[8];
    _mm256_storeu_si256((__m256i *)(void *)v,
                        _mm256_add_epi32(total, _mm256_loadu_si256(
                                                    (const __m256i *)(const void *)(corr + b))));
    for (int t = 0; t < 8; t++) out[(b + t) * cols] = v[t];
  }
  for (; b < nb; b++) out[b * cols] = hsum(block(x + b * bs, w4 + b * bs / 2, bs, zpv)) + corr[b];
}

void wick_q4_sums__avx2(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                        size_t cols, const uint8_t *w4, int32_t *sums) {
  const size_t nb = k / bs;
  const int8_t *x = rows;
  for (size_t col = 0; col < cols; col++, w4 += k / 2) {
    size_t i = 0;
    for (; i + 4 <= m; i += 4)
      four_rows(k, bs, x + i * row_stride, row_stride, w4, sums + i * nb * cols + col, cols);
    for (; i < m; i++) one_row(k, bs, x + i * row_stride, w4, sums + i * nb * cols + col, cols);
  }
}

/* ---------------------------------------------------------------- the GEMM form (prefill)
 *
 * Outputs in lanes: lane j of every vector belongs to output j of a group of eight. A group's
 * weights are unpacked once (wick_q4_unpack__avx2) into, per 32 values, four pairs of vectors:
 * for each 8 values (dword g of each weight row's 16 bytes, the rows transposed into the eight
 * lanes) u = w + 8 of the even elements (low nibbles) and of the odd ones (high nibbles), four
 * bytes per lane; then per block the lanes' sums of u. A prepared row's 32 values hold the even
 * elements' x_q in bytes 0-15 and the odd ones' in 16-31, so the four x_q that meet a lane's
 * even bytes are one dword, broadcast to all lanes: VPMADDUBSW(u, x) sums u * x_q pairs into
 * int16 (8 per lane over 32 values, each pair within 2 * 15 * 128: at most 30720), VPMADDWD
 * widens. Per block and lane:
 *     sum (x_q - zp) * w = sum u * x_q - zp * sum u - 8 * sum (x_q - zp)
 * (the last term is the row's correction), exact in int32; then the float steps of the op
 * (q4.h: acc += (float)sum * scale, then acc * row scale + bias, clamped) on the eight lanes.
 */

size_t wick_q4_unpacked_bytes__avx2(size_t k, size_t bs) {
  return WICK_Q4_GROUP * k + WICK_Q4_GROUP * sizeof(int32_t) * (k / bs);
}

/* [a's 16 bytes | b's 16 bytes] */
static inline __m256i load_pair(const uint8_t *a, const uint8_t *b) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(
                                     _mm_loadu_si128((const __m128i *)(const void *)a)),
                                 _mm_loadu_si128((const __m128i *)(const void *)b), 1);
}

void wick_q4_unpack__avx2(size_t k, size_t bs, const uint8_t *w4, void *unpacked) {
  const size_t ks = k / 2;
  uint8_t *u = unpacked;
  int32_t *usum = (int32_t *)(void *)(u + WICK_Q4_GROUP * k);
  const __m256i flip = _mm256_set1_epi8((char)0x88), low = _mm256_set1_epi8(15);
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  __m256i block_sum = _mm256_setzero_si256();
  for (size_t c = 0; c < k; c += 32) {
    const uint8_t *w = w4 + c / 2;
    if (c % 128 == 0) /* the next group's rows (the op unpacks consecutive groups), a cache line
                       * of each at a time: eight rows read 16 bytes at a time are short streams
                       * that the hardware prefetchers pick up late (as in the one-row form);
                       * prefetches past the weights do not fault */
      for (size_t j = 0; j < WICK_Q4_GROUP; j++)
        _mm_prefetch((const char *)((uintptr_t)w + (WICK_Q4_GROUP + j) * ks), _MM_HINT_T0);
    /* rows j and j + 4 in the two halves; then the 4 x 4 dword transpose in each half: v[g]
     * holds dword g (values 8g .. 8g + 7) of row j in lane j */
    const __m256i a0 = load_pair(w, w + 4 * ks), a1 = load_pair(w + ks, w + 5 * ks);
    const __m256i a2 = load_pair(w + 2 * ks, w + 6 * ks), a3 = load_pair(w + 3 * ks, w + 7 * ks);
    const __m256i t0 = _mm256_unpacklo_epi32(a0, a1), t1 = _mm256_unpackhi_epi32(a0, a1);
    const __m256i t2 = _mm256_unpacklo_epi32(a2, a3), t3 = _mm256_unpackhi_epi32(a2, a3);
    const __m256i v[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                          _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
    __m256i s = _mm256_setzero_si256(); /* u summed per byte over the 32 values: <= 120 */
    for (int g = 0; g < 4; g++) {
      const __m256i x = _mm256_xor_si256(v[g], flip);
      const __m256i lo = _mm256_and_si256(x, low);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);
      _mm256_storeu_si256((__m256i *)(void *)(u + c / 32 * 256 + 64 * g), lo);
      _mm256_storeu_si256((__m256i *)(void *)(u + c / 32 * 256 + 64 * g + 32), hi);
      s = _mm256_add_epi8(s, _mm256_add_epi8(lo, hi));
    }
    block_sum =
        _mm256_add_epi32(block_sum, _mm256_madd_epi16(_mm256_maddubs_epi16(s, ones8), ones16));
    if ((c + 32) % bs == 0) {
      _mm256_storeu_si256((__m256i *)(void *)(usum + (c + 32) / bs * WICK_Q4_GROUP - WICK_Q4_GROUP),
                          block_sum);
      block_sum = _mm256_setzero_si256();
    }
  }
}

static inline __m256i broadcast4(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

/* Rows i < MR (at most four) of one group. Register budget (16 vectors): per row the block's
 * int32 sum and the int16 pairs of the current 32 values, plus the weights, the broadcast x_q
 * and a product; each row's float accumulator is touched once per block and lives in memory
 * (keeping it in registers as well made the compiler spill the inner loop's vectors). The
 * sum starts the block at the row's terms that do not depend on x_q (-zp * sum u and the
 * correction), so that the inner loop only adds. */
__attribute__((always_inline)) static inline void gemm_rows(size_t MR, size_t k, size_t bs,
                                                            const int8_t *x0, size_t row_stride,
                                                            const float *row_scales,
                                                            const uint8_t *u, const float *scales,
                                                            const float *bias, float lo, float hi,
                                                            float *out, size_t out_stride) {
  const size_t nb = k / bs;
  const int32_t *usum = (const int32_t *)(const void *)(u + WICK_Q4_GROUP * k);
  const __m256i ones16 = _mm256_set1_epi16(1);
  const int8_t *x[4];
  const int32_t *corr[4];
  int32_t neg_zp[4];
  float acc[4][WICK_Q4_GROUP];
  for (size_t r = 0; r < MR; r++) {
    x[r] = x0 + r * row_stride;
    corr[r] = (const int32_t *)(const void *)(x[r] + k);
    neg_zp[r] = -corr[r][nb];
    _mm256_storeu_ps(acc[r], _mm256_setzero_ps());
  }
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    const __m256i us = _mm256_loadu_si256((const __m256i *)(const void *)(usum + b * 8));
    __m256i sum[4];
    for (size_t r = 0; r < MR; r++)
      sum[r] = _mm256_add_epi32(_mm256_mullo_epi32(us, _mm256_set1_epi32(neg_zp[r])),
                                _mm256_set1_epi32(corr[r][b]));
    for (const size_t end = c + bs; c < end; c += 32) {
      const uint8_t *uc = u + c / 32 * 256;
      __m256i pairs[4]; /* int16: at most 16 products u * x_q, |.| <= 16 * 15 * 128 */
      for (size_t r = 0; r < MR; r++) pairs[r] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (size_t h = 0; h < 8; h++) { /* dword g = h / 2 of the even (h even) or odd x_q */
        const __m256i uv = _mm256_loadu_si256((const __m256i *)(const void *)(uc + 32 * h));
        const size_t at = c + (h % 2 ? 16 : 0) + 4 * (h / 2);
#pragma GCC unroll 4
        for (size_t r = 0; r < MR; r++)
          pairs[r] = _mm256_add_epi16(pairs[r], _mm256_maddubs_epi16(uv, broadcast4(x[r] + at)));
        /* (keeps the compiler from hoisting the next steps' loads: with them in flight it ran
         * out of registers and spilled the accumulators) */
        for (size_t r = 0; r < MR; r++) __asm__("" : "+x"(pairs[r]));
      }
      for (size_t r = 0; r < MR; r++)
        sum[r] = _mm256_add_epi32(sum[r], _mm256_madd_epi16(pairs[r], ones16));
    }
    const __m256 scale = _mm256_loadu_ps(scales + b * WICK_Q4_GROUP);
    for (size_t r = 0; r < MR; r++)
      _mm256_storeu_ps(acc[r], _mm256_add_ps(_mm256_loadu_ps(acc[r]),
                                             _mm256_mul_ps(_mm256_cvtepi32_ps(sum[r]), scale)));
  }
  const __m256 vb = bias != NULL ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (size_t r = 0; r < MR; r++) {
    /* y < lo ? lo : (y > hi ? hi : y): MAX/MIN return their second operand (y) on NaN and on
     * equal values */
    const __m256 y =
        _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(acc[r]), _mm256_set1_ps(row_scales[r])), vb);
    _mm256_storeu_ps(out + r * out_stride, _mm256_min_ps(vhi, _mm256_max_ps(vlo, y)));
  }
}

/* (rows by four: one call takes up to WICK_Q4_GEMM_ROWS) */
void wick_q4_gemm__avx2(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                        const float *row_scales, const void *unpacked, const float *scales,
                        const float *bias, float lo, float hi, float *out, size_t out_stride) {
  const int8_t *x = rows;
  for (size_t r0 = 0; r0 < m; r0 += 4) {
    const int8_t *xr = x + r0 * row_stride;
    float *o = out + r0 * out_stride;
    switch (m - r0) {
      case 1:
        gemm_rows(1, k, bs, xr, row_stride, row_scales + r0, unpacked, scales, bias, lo, hi, o,
                  out_stride);
        break;
      case 2:
        gemm_rows(2, k, bs, xr, row_stride, row_scales + r0, unpacked, scales, bias, lo, hi, o,
                  out_stride);
        break;
      case 3:
        gemm_rows(3, k, bs, xr, row_stride, row_scales + r0, unpacked, scales, bias, lo, hi, o,
                  out_stride);
        break;
      default:
        gemm_rows(4, k, bs, xr, row_stride, row_scales + r0, unpacked, scales, bias, lo, hi, o,
                  out_stride);
        break;
    }
  }
}

/* ---------------------------------------------------------------- the one-row form (decode)
 *
 * One prepared row against a group of eight outputs read where they lie, no unpacking: per 32
 * values, rows j and j + 4's 16 bytes share a register (j < 4), u = w + 8 of their low nibbles
 * (even elements) meets the row's even x_q (bytes 0-15, broadcast to both halves) and the high
 * nibbles the odd ones; VPMADDUBSW of the nibble sums u_even + u_odd (<= 30) by zp subtracts
 * the zero point's term in the same int16 lanes (|.| <= 2 * 3840 + 2 * 30 * 128 = 15360), and
 * VPMADDWD widens: four lanes per output and half. At the end of a block three VPHADDDs leave
 * output t's block sum in lane t (the lanes of register j: output j in 0-3, j + 4 in 4-7),
 * plus the row's correction -8 * sum (x_q - zp). The float steps are gemm_rows' for one row:
 * the same integers, the same float operations in the same order, so the same bits.
 *
 * The caller walks the groups in order (the op: consecutive groups of a thread's range), so
 * the kernel prefetches the weights of the group GEMV_PREFETCH groups ahead: eight rows read
 * 16 bytes at a time are eight short streams that the hardware prefetchers pick up late (on
 * SmolLM2's layers, 288 bytes each); with the prefetch a decode-sized matrix streamed from
 * memory ran at ~12.8 GB/s instead of ~8 (best of runs on the shared 2-core EPYC VM).
 * Prefetches past the weights do not fault.
 */
#define GEMV_PREFETCH 4
void wick_q4_gemv__avx2(size_t k, size_t bs, const void *row, float row_scale, const uint8_t *w4,
                        const float *scales, const float *bias, float lo, float hi, float *out) {
  const size_t ks = k / 2, nb = k / bs;
  const int8_t *x = row;
  const int32_t *corr = (const int32_t *)(const void *)(x + k);
  const __m256i zpv = _mm256_set1_epi8((int8_t)corr[nb]);
  const __m256i flip = _mm256_set1_epi8((char)0x88), low = _mm256_set1_epi8(15);
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  size_t c = 0;
  for (size_t b = 0; b < nb; b++) {
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    for (const size_t end = c + bs; c < end; c += 32) {
      const __m256i xe =
          _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(x + c)));
      const __m256i xo =
          _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(x + c + 16)));
      const uint8_t *w = w4 + c / 2;
      /* the group GEMV_PREFETCH groups ahead, 128 of its 4k bytes per 32 values */
      const uintptr_t ahead = (uintptr_t)w4 + GEMV_PREFETCH * 8 * ks + c * 4; /* (may be past
                                                                               * the end) */
      _mm_prefetch((const char *)ahead, _MM_HINT_T0);
      _mm_prefetch((const char *)(ahead + 64), _MM_HINT_T0);
#define Q4_GEMV_PAIR(j, s)                                                                     \
  do {                                                                                         \
    const __m256i u_ = _mm256_xor_si256(load_pair(w + (j)*ks, w + ((j) + 4) * ks), flip);      \
    const __m256i ue_ = _mm256_and_si256(u_, low);                                             \
    const __m256i uo_ = _mm256_and_si256(_mm256_srli_epi16(u_, 4), low);                       \
    const __m256i d_ = _mm256_sub_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(ue_, xe),        \
                                                         _mm256_maddubs_epi16(uo_, xo)),       \
                                        _mm256_maddubs_epi16(_mm256_add_epi8(ue_, uo_), zpv)); \
    s = _mm256_add_epi32(s, _mm256_madd_epi16(d_, ones16));                                    \
  } while (0)
      Q4_GEMV_PAIR(0, s0);
      Q4_GEMV_PAIR(1, s1);
      Q4_GEMV_PAIR(2, s2);
      Q4_GEMV_PAIR(3, s3);
#undef Q4_GEMV_PAIR
    }
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
    const __m256i total = _mm256_add_epi32(h, _mm256_set1_epi32(corr[b]));
    acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(total),
                                           _mm256_loadu_ps(scales + b * WICK_Q4_GROUP)));
  }
  const __m256 vb = bias != NULL ? _mm256_loadu_ps(bias) : _mm256_setzero_ps();
  const __m256 y = _mm256_add_ps(_mm256_mul_ps(acc, _mm256_set1_ps(row_scale)), vb);
  _mm256_storeu_ps(out, _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), y)));
}

/* wick_q4_quantize_row (q4.c) with the range and the rounding on vectors: MINPS / MAXPS with the
 * running bound as the second operand skip NaN as fminf / fmaxf do (min and max do not depend
 * on the order; a -0 bound instead of +0 changes no later value), the zero point is the same
 * scalar code, and each value is x * inverse, NaN -> 0, clamped, rounded to nearest even by
 * VCVTPS2DQ (the default rounding mode, as rintf) — the same int16 outputs. */
float wick_q4_quantize_row__avx2(size_t k, const float *x, int16_t *out, int32_t *zero_point_out) {
  __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= k; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    vlo = _mm256_min_ps(v, vlo);
    vhi = _mm256_max_ps(v, vhi);
  }
  float lanes_lo[8], lanes_hi[8];
  _mm256_storeu_ps(lanes_lo, vlo);
  _mm256_storeu_ps(lanes_hi, vhi);
  float lo = 0.0f, hi = 0.0f;
  for (size_t t = 0; t < 8; t++) {
    lo = fminf(lo, lanes_lo[t]);
    hi = fmaxf(hi, lanes_hi[t]);
  }
  for (; i < k; i++) {
    lo = fminf(lo, x[i]);
    hi = fmaxf(hi, x[i]);
  }
  float inverse, zp;
  wick_q4_row_params(lo, hi, &inverse, &zp);
  const float below = -128.0f - zp, above = 127.0f - zp;
  const __m256 vinv = _mm256_set1_ps(inverse);
  const __m256 vbelow = _mm256_set1_ps(below), vabove = _mm256_set1_ps(above);
  for (i = 0; i + 16 <= k; i += 16) {
    __m256i q[2];
    for (size_t h = 0; h < 2; h++) {
      __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * h), vinv);
      v = _mm256_andnot_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), v); /* NaN -> +0 */
      v = _mm256_min_ps(_mm256_max_ps(v, vbelow), vabove);
      q[h] = _mm256_cvtps_epi32(v);
    }
    /* (PACKSSDW works within 128-bit halves: put the quarters back in order) */
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8);
    _mm256_storeu_si256((__m256i *)(void *)(out + i), packed);
  }
  for (; i < k; i++) {
    float v = x[i] * inverse;
    if (v != v) v = 0.0f;
    v = v < below ? below : (v > above ? above : v);
    out[i] = (int16_t)rintf(v);
  }
  *zero_point_out = (int32_t)zp;
  return 1.0f / inverse;
}
