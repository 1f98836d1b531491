/*
 * neon/dwconv.c — DEPTHWISE_CONV_2D for AArch64 NEON: template/dwconv.h with
 * 4-channel vectors (neon/simd.h; partial channel blocks go through a
 * staging copy). 3x3: 9 weights + 4 accumulators + 1 input + bias + the
 * clamp bounds fit the 32 vector registers; 5x5 spills a few weights.
 */
#include "kernels/neon/simd.h"

#define DW_BLOCK_K3 4
#define DW_BLOCK_K5 4

#include "kernels/template/dwconv.h"
