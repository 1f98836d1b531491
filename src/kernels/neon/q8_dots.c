/*
 * neon/q8_dots.c — the hybrid ops' int8 dot products (neon/q8_dots.h) for AArch64 CPUs
 * without the dot-product extension: widening multiplies and pairwise adds.
 */
#define Q8_NAME(name) name##__neon
#include "kernels/neon/q8_dots.h"
