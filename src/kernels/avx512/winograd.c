/*
 * avx512/winograd.c — the Winograd F(4x4, 3x3) input and output transforms
 * for AVX-512F: template/winograd.h with 16-channel vectors.
 */
#include "kernels/avx512/simd.h"

#include "kernels/template/winograd.h"
