/*
 * q16.h — portable kernels for int16 activations with int8 weights (TFLite's
 * 16x8 scheme), in exact integer arithmetic written so that the compiler
 * vectorizes it (16-bit multiply-adds into 32-bit partial sums): bit-exact
 * with the reference kernels of src/kernels/reference/quantized.c.
 */
#ifndef WICK_KERNELS_Q16_H
#define WICK_KERNELS_Q16_H

#include "kernels/reference/reference.h"

#define WICK_Q16_API __attribute__((visibility("hidden")))

/* Rows [r0, r1) of a 16x8 FULLY_CONNECTED: out[r][c] as wick_q_fully_connected__reference with
 * input and filter offsets 0, the int8 weights widened to int16 (w16 [n, k]). Partial sums of
 * 256 products (|x w| <= 2^22) are exact in 32 bits and add up in 64; without acc64 the
 * total wraps to 32 bits as the reference's (and LiteRT's) int32 accumulator does. */
WICK_Q16_API void wick_q16_fully_connected_rows(int64_t r0, int64_t r1, int64_t n, int64_t k,
                                                const wick_qfc_params *p, const int16_t *input,
                                                const int16_t *w16, const void *bias, bool acc64,
                                                int16_t *output);

#endif
