/*
 * avx512/dwconv.c — DEPTHWISE_CONV_2D for AVX-512F: template/dwconv.h with
 * 16-channel vectors. 3x3 keeps its 9 weights + bias + 8 accumulators in
 * registers; 5x5 keeps 25 weights + bias + 4 accumulators (31 of the 32 zmm).
 */
#include "kernels/avx512/simd.h"

#define DW_BLOCK_K3 8
#define DW_BLOCK_K5 4

#include "kernels/template/dwconv.h"
