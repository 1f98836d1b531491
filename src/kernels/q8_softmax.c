/*
 * q8_softmax.c — 8-bit SOFTMAX (int8 / uint8 input, gemmlowp fixed point as
 * the reference's wick_q_softmax__reference) through the op's tables of the
 * reference's exps (wick_q_softmax_tables, built once at prepare): an 8-bit
 * input differs from its row's maximum by d in [0, 255], so the reference's
 * per-element exp is exps[d] and its term of the row sum sums[d]. Per row:
 * the maximum, the sum of the sums[d] (wrapping int32, as the reference),
 * the reciprocal (wick_q_softmax_row_scale), then per element the
 * reference's two roundings fused into one:
 *
 *   rdivpot(srdhm(S, E), e) = floor((S*E + 2^30 + [e > 0] 2^(30+e)) / 2^(31+e))
 *
 * which holds for S, E >= 0 (E always: exps are >= 0; S for every row sum
 * below 2^31, i.e. rows shorter than 4096 elements — a row whose scale comes
 * out negative runs the reference kernel). Portable C; `q8.h`'s softmax
 * entry is the vectorized form of the same.
 */
#include <string.h>

#include "kernels/q8.h"

/* Rows [0, rows) of one (input, output) type pair. */
static void rows_body(const int32_t *exps, const int32_t *sums, const wick_qsoftmax_params *p,
                      wick_dtype in_t, wick_dtype out_t, size_t rows, size_t cols, const void *in,
                      void *out) {
  const bool u8 = in_t == WICK_DTYPE_UINT8;
  const int32_t omin =
      out_t == WICK_DTYPE_INT16 ? INT16_MIN : (out_t == WICK_DTYPE_UINT8 ? 0 : -128);
  const int32_t omax =
      out_t == WICK_DTYPE_INT16 ? INT16_MAX : (out_t == WICK_DTYPE_UINT8 ? 255 : 127);
  const int32_t out_bits = out_t == WICK_DTYPE_INT16 ? 16 : 8;
  const size_t osize = out_t == WICK_DTYPE_INT16 ? 2 : 1;
  for (size_t r = 0; r < rows; r++) {
    const uint8_t *ru = (const uint8_t *)in + r * cols;
    const int8_t *rs = (const int8_t *)in + r * cols;
    int32_t max = u8 ? 0 : -128;
    for (size_t c = 0; c < cols; c++) {
      const int32_t v = u8 ? ru[c] : rs[c];
      max = v > max ? v : max;
    }
    uint32_t sum = 0;
    for (size_t c = 0; c < cols; c++) sum += (uint32_t)sums[max - (u8 ? ru[c] : rs[c])];
    int32_t scale, e;
    wick_q_softmax_row_scale((int32_t)sum, out_bits, &scale, &e);
    void *ro = (uint8_t *)out + r * cols * osize;
    if (scale < 0) {
      wick_q_softmax__reference(in_t, out_t, 1, (int64_t)cols, p, u8 ? (const void *)ru : rs, ro);
      continue;
    }
    const uint64_t s = (uint64_t)scale;
    const uint64_t k = ((uint64_t)1 << 30) + (e > 0 ? (uint64_t)1 << (30 + e) : 0);
    const int32_t sh = 31 + e;
    for (size_t c = 0; c < cols; c++) {
      const uint64_t x = (uint64_t)(uint32_t)exps[max - (u8 ? ru[c] : rs[c])];
      int32_t v = (int32_t)((s * x + k) >> sh) + omin;
      v = v > omax ? omax : v;
      if (out_t == WICK_DTYPE_INT16) { /* (any alignment: a byte copy the compiler folds) */
        const int16_t h = (int16_t)v;
        memcpy((uint8_t *)ro + 2 * c, &h, sizeof h);
      } else if (out_t == WICK_DTYPE_UINT8)
        ((uint8_t *)ro)[c] = (uint8_t)v;
      else
        ((int8_t *)ro)[c] = (int8_t)v;
    }
  }
}

void wick_q8_softmax_rows(const int32_t exps[256], const int32_t sums[256],
                          const wick_qsoftmax_params *p, wick_dtype in_type, wick_dtype out_type,
                          size_t rows, size_t cols, const void *in, void *out) {
  /* one instance per output type, so each inner loop has a constant store */
  if (out_type == WICK_DTYPE_INT8)
    rows_body(exps, sums, p, in_type, WICK_DTYPE_INT8, rows, cols, in, out);
  else if (out_type == WICK_DTYPE_UINT8)
    rows_body(exps, sums, p, in_type, WICK_DTYPE_UINT8, rows, cols, in, out);
  else
    rows_body(exps, sums, p, in_type, WICK_DTYPE_INT16, rows, cols, in, out);
}
