/*
 * neon/q4_blocks.c — the blockwise int4 FULLY_CONNECTED kernel (neon/q4_blocks.h) for AArch64
 * CPUs without the dot-product extension: widening multiplies and pairwise adds.
 */
#define Q4_NAME(name) name##__neon
#include "kernels/neon/q4_blocks.h"
