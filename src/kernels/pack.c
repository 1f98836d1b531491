/*
 * pack.c — weight packing for the optimized fp32 kernels (layouts in
 * kernels.h). Runs once at prepare; sources may be only 4-byte aligned (the
 * model's mapped bytes) and are read as floats, never as wider types.
 *
 * Packing is most of prepare's own work (ViT-Tiny: 5.7 M weights; the scalar
 * transpose took ~7 instructions a float). On x86-64, full GEMM panels are
 * transposed in 4x4 blocks of SSE registers (baseline on x86-64: no CPU
 * check needed), ~1 instruction a float; the bytes are the same.
 */
#include <string.h>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

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

/* The rows of a matrix to pack: row r = g * group_rows + j starts at
 * w + j * row_stride + g * group_stride (one group: a plain row-major matrix). */
typedef struct pack_rows {
  const float *w;
  size_t group_rows, row_stride, group_stride;
} pack_rows;

static inline const float *pack_row(const pack_rows *r, size_t row) {
  return r->w + (row % r->group_rows) * r->row_stride + (row / r->group_rows) * r->group_stride;
}

/* Columns [0, k4) of a full panel (nr rows of w from row j0, nr % 4 == 0;
 * k4 % 4 == 0), transposed into `packed` (stride nr). */
static void pack_full_panel_blocks(const pack_rows *r, size_t j0, size_t k4, size_t nr,
                                   float *packed) {
#if defined(__SSE2__)
  for (size_t j = 0; j < nr; j += 4) {
    const float *s0 = pack_row(r, j0 + j), *s1 = pack_row(r, j0 + j + 1),
                *s2 = pack_row(r, j0 + j + 2), *s3 = pack_row(r, j0 + j + 3);
    float *d = packed + j;
    for (size_t p = 0; p < k4; p += 4, d += 4 * nr) {
      __m128 r0 = _mm_loadu_ps(s0 + p), r1 = _mm_loadu_ps(s1 + p), r2 = _mm_loadu_ps(s2 + p),
             r3 = _mm_loadu_ps(s3 + p);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(d, r0);
      _mm_storeu_ps(d + nr, r1);
      _mm_storeu_ps(d + 2 * nr, r2);
      _mm_storeu_ps(d + 3 * nr, r3);
    }
  }
#else
  for (size_t j = 0; j < nr; j++) {
    const float *s = pack_row(r, j0 + j);
    for (size_t p = 0; p < k4; p++) packed[p * nr + j] = s[p];
  }
#endif
}

static void pack_gemm_rows(size_t n, size_t k, size_t nr, const pack_rows *r, const float *bias,
                           float *packed) {
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    size_t cols = n - j0 < nr ? n - j0 : nr;
    for (size_t j = 0; j < nr; j++) packed[j] = (j < cols && bias) ? bias[j0 + j] : 0.0f;
    packed += nr;
    size_t first = 0; /* columns already packed by the block transpose */
    if (cols == nr && nr % 4 == 0) {
      first = k & ~(size_t)3;
      pack_full_panel_blocks(r, j0, first, nr, packed);
      packed += first * nr;
    }
    for (size_t j = 0; j < cols; j++) {
      const float *s = pack_row(r, j0 + j);
      for (size_t p = first; p < k; p++) packed[(p - first) * nr + j] = s[p];
    }
    for (size_t p = first; p < k; p++)
      for (size_t j = cols; j < nr; j++) packed[(p - first) * nr + j] = 0.0f;
    packed += (k - first) * nr;
  }
}

void wick_f32_gemm_pack(size_t n, size_t k, size_t nr, const float *w, const float *bias,
                        float *packed) {
  pack_rows r = {w, n > 0 ? n : 1, k, 0};
  pack_gemm_rows(n, k, nr, &r, bias, packed);
}

void wick_f32_gemm_pack_grouped(size_t n, size_t k, size_t nr, const float *w, size_t group_rows,
                                size_t row_stride, size_t group_stride, float *packed) {
  pack_rows r = {w, group_rows, row_stride, group_stride};
  pack_gemm_rows(n, k, nr, &r, NULL, packed);
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
  wick_f32_gemm_pack_kn_strided(n, k, nr, w, n, packed);
}

void wick_f32_gemm_pack_kn_strided(size_t n, size_t k, size_t nr, const float *w, size_t row_stride,
                                   float *packed) {
  for (size_t j0 = 0; j0 < n; j0 += nr) {
    size_t cols = n - j0 < nr ? n - j0 : nr;
    memset(packed, 0, nr * sizeof(float)); /* no bias */
    packed += nr;
    for (size_t p = 0; p < k; p++) {
      memcpy(packed, w + p * row_stride + j0, cols * sizeof(float));
      for (size_t j = cols; j < nr; j++) packed[j] = 0.0f;
      packed += nr;
    }
  }
}
