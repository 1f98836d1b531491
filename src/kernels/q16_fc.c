/*
 * q16_fc.c — the portable parts of q16.h's 16x8 FULLY_CONNECTED: the rows
 * on widened weights (dot products in blocks of 256 int16 x int16 products,
 * exact in int32, then the reference's double requantization) and the
 * weight packing of the per-ISA kernels.
 */
#include <math.h>

#include "kernels/q16.h"

void wick_q16_fully_connected_rows(int64_t r0, int64_t r1, int64_t n, int64_t k,
                                   const wick_qfc_params *p, const int16_t *input,
                                   const int16_t *w16, const void *bias, bool acc64,
                                   int16_t *output) {
  for (int64_t r = r0; r < r1; r++) {
    const int16_t *x = input + r * k;
    for (int64_t c = 0; c < n; c++) {
      const int16_t *w = w16 + c * k;
      int64_t total = wick_q16_dot_exact(x, w, k);
      double acc;
      if (acc64) {
        if (bias) total += ((const int64_t *)bias)[c];
        acc = (double)total;
      } else { /* the reference's wrapping int32 accumulator */
        uint32_t acc32 = (uint32_t)(uint64_t)total;
        if (bias) acc32 += (uint32_t)((const int32_t *)bias)[c];
        acc = (double)(int32_t)acc32;
      }
      const double scaled = round(acc * p->scale[c]);
      int32_t v = scaled <= -2147483648.0  ? INT32_MIN
                  : scaled >= 2147483647.0 ? INT32_MAX
                                           : (int32_t)scaled;
      v = (int32_t)((uint32_t)v + (uint32_t)p->output_offset);
      v = v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
      output[r * n + c] = (int16_t)v;
    }
  }
}

bool wick_q16_fc_packed_size(size_t n, size_t k, size_t *elems_out) {
  const size_t panels = n / WICK_Q16_NR + (n % WICK_Q16_NR != 0);
  const size_t pairs = k / 2 + (k % 2);
  if (pairs > SIZE_MAX / 2 / WICK_Q16_NR || panels > SIZE_MAX / (2 * WICK_Q16_NR * pairs))
    return false;
  *elems_out = panels * WICK_Q16_NR * 2 * pairs;
  return true;
}

void wick_q16_fc_pack(size_t n, size_t k, const int8_t *w, int16_t *packed) {
  const size_t pairs = k / 2 + (k % 2);
  for (size_t c0 = 0; c0 < n; c0 += WICK_Q16_NR)
    for (size_t g = 0; g < pairs; g++)
      for (size_t j = 0; j < WICK_Q16_NR; j++)
        for (size_t h = 0; h < 2; h++) {
          const size_t c = c0 + j, i = 2 * g + h;
          *packed++ = c < n && i < k ? w[c * k + i] : 0;
        }
}
