/*
 * neon/winograd.c — the Winograd F(4x4, 3x3) input and output transforms
 * for AArch64 NEON: template/winograd.h with 4-channel vectors (neon/simd.h;
 * a last block of fewer than 4 channels goes through staging copies).
 */
#include "kernels/neon/simd.h"

#include "kernels/template/winograd.h"
