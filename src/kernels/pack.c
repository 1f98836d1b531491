/*
 * pack.c — weight packing for the optimized fp32 kernels (layouts in
 * kernels.h). Runs once at prepare; sources may be only 4-byte aligned (the
 * model's mapped bytes) and are read as floats, never as wider types.
 */
#include <string.h>

#include "kernels/kernels.h"

bool wick_f32_gemm_packed_size_checked(size_t n, size_t k, size_t nr, size_t *floats_out) {
  size_t panels = n / nr + (n % nr != 0), per_panel, total;
  if (__builtin_add_overflow(k, (size_t)1, &per_panel) ||
      __builtin_mul_overflow(per_panel, nr, &per_panel) ||
      __builtin_mul_overflow(panels, per_panel, &total))
    return false;
  *floats_out = total;
  return true;
}

size_t wick_f32_gemm_packed_size(size_t n, size_t k, size_t nr) {
  return (n / nr + (n % nr != 0)) * (k + 1) * nr;
}

void wick_f32_gemm_pack(size_t n, size_t k, size_t nr, const float *w, const float *bias,
                        float *packed) {
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    size_t cols = n - j0 < nr ? n - j0 : nr;
    for (size_t j = 0; j < nr; j++) packed[j] = (j < cols && bias) ? bias[j0 + j] : 0.0f;
    packed += nr;
    for (size_t p = 0; p < k; p++) {
      for (size_t j = 0; j < cols; j++) packed[j] = w[(j0 + j) * k + p];
      for (size_t j = cols; j < nr; j++) packed[j] = 0.0f;
      packed += nr;
    }
  }
}

void wick_f32_dwconv_pack(size_t c, size_t cr, size_t taps, const float *w, const float *bias,
                          float *packed) {
  for (size_t c0 = 0; c0 < c; c0 += cr) {
    size_t cols = c - c0 < cr ? c - c0 : cr;
    for (size_t j = 0; j < cr; j++) packed[j] = (j < cols && bias) ? bias[c0 + j] : 0.0f;
    packed += cr;
    for (size_t t = 0; t < taps; t++) {
      for (size_t j = 0; j < cols; j++) packed[j] = w[t * c + c0 + j];
      for (size_t j = cols; j < cr; j++) packed[j] = 0.0f;
      packed += cr;
    }
  }
}

void wick_f32_gemm_pack_kn(size_t n, size_t k, size_t nr, const float *w, float *packed) {
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    size_t cols = n - j0 < nr ? n - j0 : nr;
    memset(packed, 0, nr * sizeof(float)); /* no bias */
    packed += nr;
    for (size_t p = 0; p < k; p++) {
      memcpy(packed, w + p * n + j0, cols * sizeof(float));
      for (size_t j = cols; j < nr; j++) packed[j] = 0.0f;
      packed += nr;
    }
  }
}
