/*
 * avx2/dwconv.c — DEPTHWISE_CONV_2D for AVX2 + FMA: template/dwconv.h with
 * 8-channel vectors. 3x3: 9 weights + 4 accumulators + 1 input + the clamp
 * bounds = the 16 ymm registers; 5x5 reads most weights from L1 (memory
 * operands of the FMAs).
 */
#include "kernels/avx2/simd.h"

#define DW_BLOCK_K3 4
#define DW_BLOCK_K5 4
#define DW_WIDE_BLOCK_K3 8
#define DW_WIDE_BLOCK_K5 6

#include "kernels/template/dwconv.h"
