/*
 * avx2/winograd.c — the Winograd F(4x4, 3x3) input and output transforms
 * for AVX2 + FMA: template/winograd.h with 8-channel vectors.
 */
#include "kernels/avx2/simd.h"

#include "kernels/template/winograd.h"
