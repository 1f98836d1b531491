/*
 * q4.h — kernels of FULLY_CONNECTED with blockwise int4 weights (TFLite's
 * BlockwiseQuantization, as LiteRT runs it on CPU: XNNPACK's "qd8 x qb4w"):
 * each float input row quantized at run time to int8 with its own scale and
 * zero point (wick_q4_quantize_row), then per output and block the exact
 * int32 sum of (x - zero point) * w over the block (the block-sum kernels
 * below); the op scales each block's sum by the block's scale in float.
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
 * int16 to `out` and returns the scale (1 for an all-zero row). NaN inputs read as 0. */
WICK_Q4_API float wick_q4_quantize_row(size_t k, const float *x, int16_t *out);

/* Rounds a float scale to bfloat16 (nearest, ties to even): LiteRT's CPU kernel keeps block
 * scales in bfloat16. */
WICK_Q4_API float wick_q4_bf16_round(float x);

/* For rows i < m of x (int16, row stride k) and one weight row w4 (k / 2 bytes), the block
 * sums sums[i * (k / bs) + b] = sum over p in block b (bs values) of x[i][p] * w[p].
 * bs is even and divides k. */
typedef void (*wick_q4_block_sums_fn)(size_t m, size_t k, size_t bs, const int16_t *x,
                                      const uint8_t *w4, int32_t *sums);

WICK_Q4_API void wick_q4_block_sums__reference(size_t m, size_t k, size_t bs, const int16_t *x,
                                               const uint8_t *w4, int32_t *sums);
WICK_Q4_API void wick_q4_block_sums__avx2(size_t m, size_t k, size_t bs, const int16_t *x,
                                          const uint8_t *w4, int32_t *sums);

/* The best block-sum kernel for this CPU (the reference when forced or none is better), and
 * its name ("avx2", "reference"). */
WICK_Q4_API wick_q4_block_sums_fn wick_q4_block_sums_select(bool force_reference, const char **isa);

#endif /* WICK_KERNELS_Q4_H */
