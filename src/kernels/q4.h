/*
 * q4.h — kernels of FULLY_CONNECTED with blockwise int4 weights (TFLite's
 * BlockwiseQuantization, as LiteRT runs it on CPU: XNNPACK's "qd8 x qb4w"):
 * each float input row quantized at run time to int8 with its own scale and
 * zero point (wick_q4_quantize_row), laid out for the kernel once per row
 * (prepare), then per output and block the exact int32 sum of
 * (x - zero point) * w over the block (sums); the op scales each block's sum
 * by the block's scale in float.
 *
 * Weights: [n, k] int4, two a byte, element 2j in the low nibble, row c at
 * byte c * k / 2 (k even). Block sums are exact: |x - zp| <= 255, |w| <= 8.
 * Every kernel returns the same integers, so results do not depend on the ISA.
 */
#ifndef WICK_KERNELS_Q4_H
#define WICK_KERNELS_Q4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WICK_Q4_API __attribute__((visibility("hidden")))

/* Quantizes a row of k floats as XNNPACK's dynamic (qd8) quantization does: the range
 * [min(0, min x), max(0, max x)] over int8 [-128, 127], the zero point nudged to an integer,
 * values round-to-nearest-even(x / scale) + zero point, clamped. Writes x_q - zero point as
 * int16 to `out`, the zero point to *zero_point, and returns the scale (1 for an all-zero
 * row). NaN inputs read as 0. */
WICK_Q4_API float wick_q4_quantize_row(size_t k, const float *x, int16_t *out, int32_t *zero_point);
/* The step between wick_q4_quantize_row's range and its values, shared by its vector forms:
 * from the row's range [lo, hi] (holding 0), 1 / the scale and the zero point (asymmetric
 * int8, the zero point from the end whose rounding error is smaller; NaN, from an infinite
 * range, -> -128). */
WICK_Q4_API void wick_q4_row_params(float lo, float hi, float *inverse, float *zero_point);

/* Rounds a float scale to bfloat16 (nearest, ties to even): LiteRT's CPU kernel keeps block
 * scales in bfloat16. */
WICK_Q4_API float wick_q4_bf16_round(float x);

/* A block-sum kernel and the row layout it reads. */
typedef struct wick_q4_kernel {
  const char *isa; /* "avx2", "neondot", "neon", "reference" */
  /* bytes of one prepared row of k values in blocks of bs (a multiple of 64) */
  size_t (*row_bytes)(size_t k, size_t bs);
  /* lays out a quantized row: xd = x_q - zero point (k values), zp the zero point */
  void (*prepare)(size_t k, size_t bs, const int16_t *xd, int32_t zp, void *row);
  /* For prepared rows i < m (row i at rows + i * row_stride bytes) and weight rows c < cols
   * (k / 2 bytes each, row c at w4 + c * k / 2): sums[(i * (k / bs) + b) * cols + c] = sum
   * over p in block b of xd[i][p] * w_c[p]. */
  void (*sums)(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride, size_t cols,
               const uint8_t *w4, int32_t *sums);
  /* The GEMM form (several rows: prefill), NULL when the kernel has none. A group of
   * WICK_Q4_GROUP consecutive weight rows (outputs) is unpacked once (`unpack`: into
   * `unpacked_bytes(k, bs)` bytes), then `gemm` computes the finished outputs of rows i < m
   * <= WICK_Q4_GEMM_ROWS for those outputs t < WICK_Q4_GROUP, as the op's float code does
   * after the block sums (src/ops/fully_connected.c, blockwise_columns):
   *   acc = 0; for each block b in order: acc += (float)sum_b * scales[b * WICK_Q4_GROUP + t];
   *   y = acc * row_scales[i] + (bias ? bias[t] : 0.0f); out[i * out_stride + t] =
   *   y < lo ? lo : (y > hi ? hi : y)
   * with every product and sum rounded to float on its own (no FMA): bit-identical. */
  size_t (*unpacked_bytes)(size_t k, size_t bs);
  void (*unpack)(size_t k, size_t bs, const uint8_t *w4, void *unpacked);
  void (*gemm)(size_t m, size_t k, size_t bs, const void *rows, size_t row_stride,
               const float *row_scales, const void *unpacked, const float *scales,
               const float *bias, float lo, float hi, float *out, size_t out_stride);
  /* The one-row form (decode), NULL when the kernel has none: the finished outputs of one
   * prepared row for a group of WICK_Q4_GROUP consecutive weight rows read where they lie
   * (row t at w4 + t * k / 2; no unpacking), the same values as `gemm` with m = 1:
   * out[t] for t < WICK_Q4_GROUP. */
  void (*gemv)(size_t k, size_t bs, const void *row, float row_scale, const uint8_t *w4,
               const float *scales, const float *bias, float lo, float hi, float *out);
  /* wick_q4_quantize_row on vectors (the same outputs), NULL: that function */
  float (*quantize_row)(size_t k, const float *x, int16_t *out, int32_t *zero_point);
} wick_q4_kernel;

/* Outputs of one unpacked group, and the most rows one gemm call takes. */
#define WICK_Q4_GROUP 8
#define WICK_Q4_GEMM_ROWS 8

/* The best kernel for blocks of bs values on this CPU (bs even, > 0); the reference when
 * forced or when no other takes bs. */
WICK_Q4_API const wick_q4_kernel *wick_q4_kernel_select(bool force_reference, size_t bs);
/* The reference kernel (rows: xd as int16). */
WICK_Q4_API const wick_q4_kernel *wick_q4_kernel_reference(void);
/* The AVX2 kernel (blocks of a multiple of 32 values), NULL on other CPUs or architectures. */
WICK_Q4_API const wick_q4_kernel *wick_q4_kernel_avx2(void);
/* The AVX2 kernel with the GEMM form on AVX-512 VNNI (VPDPBUSD on 256-bit vectors, eight
 * rows per unpacked chunk), NULL on CPUs without AVX-512 VNNI + VL. */
WICK_Q4_API const wick_q4_kernel *wick_q4_kernel_avx512vnni(void);
/* The AArch64 kernels (blocks of a multiple of 32 values; neondot with SDOT; both with the GEMM
 * and one-row forms), NULL on other
 * CPUs or architectures (or, for neondot, without the dot-product extension). */
WICK_Q4_API const wick_q4_kernel *wick_q4_kernel_neon(void);
WICK_Q4_API const wick_q4_kernel *wick_q4_kernel_neondot(void);

/* (defined in avx2/q4_blocks.c) */
WICK_Q4_API size_t wick_q4_row_bytes__avx2(size_t k, size_t bs);
WICK_Q4_API void wick_q4_prepare__avx2(size_t k, size_t bs, const int16_t *xd, int32_t zp,
                                       void *row);
WICK_Q4_API void wick_q4_sums__avx2(size_t m, size_t k, size_t bs, const void *rows,
                                    size_t row_stride, size_t cols, const uint8_t *w4,
                                    int32_t *sums);
WICK_Q4_API size_t wick_q4_unpacked_bytes__avx2(size_t k, size_t bs);
WICK_Q4_API void wick_q4_unpack__avx2(size_t k, size_t bs, const uint8_t *w4, void *unpacked);
WICK_Q4_API void wick_q4_gemm__avx2(size_t m, size_t k, size_t bs, const void *rows,
                                    size_t row_stride, const float *row_scales,
                                    const void *unpacked, const float *scales, const float *bias,
                                    float lo, float hi, float *out, size_t out_stride);
WICK_Q4_API float wick_q4_quantize_row__avx2(size_t k, const float *x, int16_t *out,
                                             int32_t *zero_point);
WICK_Q4_API void wick_q4_gemv__avx2(size_t k, size_t bs, const void *row, float row_scale,
                                    const uint8_t *w4, const float *scales, const float *bias,
                                    float lo, float hi, float *out);

/* (defined in avx512vnni/q4_blocks.c) */
WICK_Q4_API void wick_q4_gemm__avx512vnni(size_t m, size_t k, size_t bs, const void *rows,
                                          size_t row_stride, const float *row_scales,
                                          const void *unpacked, const float *scales,
                                          const float *bias, float lo, float hi, float *out,
                                          size_t out_stride);

/* (defined in neon/q4_blocks.c and neondot/q4_blocks.c: neon/q4_blocks.h) */
#define WICK_DECLARE_Q4_NEON(ISA)                                                                 \
  WICK_Q4_API size_t wick_q4_row_bytes__##ISA(size_t k, size_t bs);                               \
  WICK_Q4_API void wick_q4_prepare__##ISA(size_t k, size_t bs, const int16_t *xd, int32_t zp,     \
                                          void *row);                                             \
  WICK_Q4_API void wick_q4_sums__##ISA(size_t m, size_t k, size_t bs, const void *rows,           \
                                       size_t row_stride, size_t cols, const uint8_t *w4,         \
                                       int32_t *sums);                                            \
  WICK_Q4_API void wick_q4_gemv__##ISA(size_t k, size_t bs, const void *row, float row_scale,     \
                                       const uint8_t *w4, const float *scales, const float *bias, \
                                       float lo, float hi, float *out);
WICK_DECLARE_Q4_NEON(neon)
WICK_DECLARE_Q4_NEON(neondot)
/* the GEMM form (neon/q4_blocks.h: SDOT by element, or widening multiplies without it) */
#define WICK_DECLARE_Q4_NEON_GEMM(ISA)                                                            \
  WICK_Q4_API size_t wick_q4_unpacked_bytes__##ISA(size_t k, size_t bs);                          \
  WICK_Q4_API void wick_q4_unpack__##ISA(size_t k, size_t bs, const uint8_t *w4, void *unpacked); \
  WICK_Q4_API void wick_q4_gemm__##ISA(size_t m, size_t k, size_t bs, const void *rows,           \
                                       size_t row_stride, const float *row_scales,                \
                                       const void *unpacked, const float *scales,                 \
                                       const float *bias, float lo, float hi, float *out,         \
                                       size_t out_stride);
WICK_DECLARE_Q4_NEON_GEMM(neon)
WICK_DECLARE_Q4_NEON_GEMM(neondot)

#endif /* WICK_KERNELS_Q4_H */
