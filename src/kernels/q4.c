/*
 * q4.c — the portable parts of the blockwise int4 FULLY_CONNECTED kernels
 * (q4.h): the dynamic row quantization, bfloat16 rounding of block scales,
 * the reference kernel and the choice of kernel (on x86-64 AVX2, its GEMM form on AVX-512
 * VNNI where the CPU has it; on AArch64 NEON with the
 * dot-product extension, else plain NEON; blocks of a multiple of 32 values).
 */
#include "kernels/q4.h"

#include <math.h>
#include <string.h>

#include "kernels/cpu.h"

void wick_q4_row_params(float lo, float hi, float *inverse, float *zero_point) {
  const float qmin = -128.0f, qmax = 127.0f;
  const float inv = lo == hi ? 1.0f : (qmax - qmin) / (hi - lo);
  const float lo_scaled = lo * inv, hi_scaled = hi * inv;
  float zp = (qmin + lo_scaled) + (qmax + hi_scaled) > 0.0f ? qmin - lo_scaled : qmax - hi_scaled;
  zp = fminf(fmaxf(zp, qmin), qmax); /* NaN (an infinite range) -> qmin */
  *inverse = inv;
  *zero_point = rintf(zp);
}

float wick_q4_quantize_row(size_t k, const float *x, int16_t *out, int32_t *zero_point_out) {
  float lo = 0.0f, hi = 0.0f; /* the range always holds 0 */
  for (size_t i = 0; i < k; i++) {
    lo = fminf(lo, x[i]); /* fminf/fmaxf skip NaN */
    hi = fmaxf(hi, x[i]);
  }
  float inverse, zp;
  wick_q4_row_params(lo, hi, &inverse, &zp);
  const float below = -128.0f - zp, above = 127.0f - zp;
  for (size_t i = 0; i < k; i++) {
    float v = x[i] * inverse;
    if (v != v) v = 0.0f;
    v = v < below ? below : (v > above ? above : v);
    out[i] = (int16_t)rintf(v); /* x_q - zero point, in [-255, 255] */
  }
  *zero_point_out = (int32_t)zp;
  return 1.0f / inverse;
}

float wick_q4_bf16_round(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) return x; /* inf, NaN: kept */
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  memcpy(&x, &u, sizeof x);
  return x;
}

static inline int32_t low_nibble(uint8_t b) { return (int32_t)(b & 15u) - ((b & 8u) ? 16 : 0); }
static inline int32_t high_nibble(uint8_t b) { return (int32_t)(b >> 4) - ((b & 128u) ? 16 : 0); }

static size_t row_bytes_reference(size_t k, size_t bs) {
  (void)bs;
  return (k * sizeof(int16_t) + 63) / 64 * 64;
}

static void prepare_reference(size_t k, size_t bs, const int16_t *xd, int32_t zp, void *row) {
  (void)bs, (void)zp;
  memcpy(row, xd, k * sizeof *xd);
}

static void sums_reference(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
                           size_t cols, const uint8_t *w4, int32_t *sums) {
  const size_t nb = k / bs;
  for (size_t c = 0; c < cols; c++, w4 += k / 2)
    for (size_t i = 0; i < m; i++) {
      const int16_t *xi = (const int16_t *)(const void *)((const uint8_t *)rows + i * row_stride);
      for (size_t b = 0; b < nb; b++) {
        int32_t s = 0;
        for (size_t p = b * bs; p < (b + 1) * bs; p += 2) {
          const uint8_t byte = w4[p / 2];
          s += (int32_t)xi[p] * low_nibble(byte) + (int32_t)xi[p + 1] * high_nibble(byte);
        }
        sums[(i * nb + b) * cols + c] = s;
      }
    }
}

static const wick_q4_kernel reference_kernel = {
    "reference", row_bytes_reference, prepare_reference, sums_reference, NULL, NULL, NULL, NULL,
    NULL};

const wick_q4_kernel *wick_q4_kernel_reference(void) { return &reference_kernel; }

#if defined(__x86_64__) || defined(_M_X64)
static const wick_q4_kernel avx2_kernel = {"avx2",
                                           wick_q4_row_bytes__avx2,
                                           wick_q4_prepare__avx2,
                                           wick_q4_sums__avx2,
                                           wick_q4_unpacked_bytes__avx2,
                                           wick_q4_unpack__avx2,
                                           wick_q4_gemm__avx2,
                                           wick_q4_gemv__avx2,
                                           wick_q4_quantize_row__avx2};
/* the same with the GEMM form on VPDPBUSD */
static const wick_q4_kernel avx512vnni_kernel = {"avx512vnni",
                                                 wick_q4_row_bytes__avx2,
                                                 wick_q4_prepare__avx2,
                                                 wick_q4_sums__avx2,
                                                 wick_q4_unpacked_bytes__avx2,
                                                 wick_q4_unpack__avx2,
                                                 wick_q4_gemm__avx512vnni,
                                                 wick_q4_gemv__avx2,
                                                 wick_q4_quantize_row__avx2};
#endif

const wick_q4_kernel *wick_q4_kernel_avx512vnni(void) {
#if defined(__x86_64__) || defined(_M_X64)
  /* (the flags its folder is compiled with: CMakeLists.txt) */
  const uint32_t needs = WICK_CPU_AVX2 | WICK_CPU_FMA | WICK_CPU_AVX512F | WICK_CPU_AVX512VL |
                         WICK_CPU_AVX512BW | WICK_CPU_AVX512DQ | WICK_CPU_AVX512VNNI;
  if ((wick_cpu_features() & needs) == needs) return &avx512vnni_kernel;
#endif
  return NULL;
}

const wick_q4_kernel *wick_q4_kernel_avx2(void) {
#if defined(__x86_64__) || defined(_M_X64)
  if (wick_cpu_features() & WICK_CPU_AVX2) return &avx2_kernel;
#endif
  return NULL;
}

#if defined(__aarch64__)
/* (designated: neither has a vector row quantization, NULL) */
static const wick_q4_kernel neon_kernel = {.isa = "neon",
                                           .row_bytes = wick_q4_row_bytes__neon,
                                           .prepare = wick_q4_prepare__neon,
                                           .sums = wick_q4_sums__neon,
                                           .unpacked_bytes = wick_q4_unpacked_bytes__neon,
                                           .unpack = wick_q4_unpack__neon,
                                           .gemm = wick_q4_gemm__neon,
                                           .gemv = wick_q4_gemv__neon};
static const wick_q4_kernel neondot_kernel = {.isa = "neondot",
                                              .row_bytes = wick_q4_row_bytes__neondot,
                                              .prepare = wick_q4_prepare__neondot,
                                              .sums = wick_q4_sums__neondot,
                                              .unpacked_bytes = wick_q4_unpacked_bytes__neondot,
                                              .unpack = wick_q4_unpack__neondot,
                                              .gemm = wick_q4_gemm__neondot,
                                              .gemv = wick_q4_gemv__neondot};
#endif

const wick_q4_kernel *wick_q4_kernel_neon(void) {
#if defined(__aarch64__)
  if (wick_cpu_features() & WICK_CPU_NEON) return &neon_kernel;
#endif
  return NULL;
}

const wick_q4_kernel *wick_q4_kernel_neondot(void) {
#if defined(__aarch64__)
  if (wick_cpu_features() & WICK_CPU_NEON_DOT) return &neondot_kernel;
#endif
  return NULL;
}

const wick_q4_kernel *wick_q4_kernel_select(bool force_reference, size_t bs) {
  if (force_reference || bs % 32 != 0) return &reference_kernel;
  const wick_q4_kernel *best = wick_q4_kernel_avx512vnni();
  if (best == NULL) best = wick_q4_kernel_avx2();
  if (best == NULL) best = wick_q4_kernel_neondot();
  if (best == NULL) best = wick_q4_kernel_neon();
  return best != NULL ? best : &reference_kernel;
}
