/*
 * neon/q8_gemm.c — the int8 GEMM microkernels (neon/q8_gemm.h) for AArch64
 * CPUs without the dot-product extension: plain Advanced SIMD, SDOT spelled
 * as widening multiplies and pairwise adds.
 */
#define Q8_NAME(name) name##__neon
#include "kernels/neon/q8_gemm.h"
