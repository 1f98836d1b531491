/*
 * neon/quantize.c — QUANTIZE float32 -> int8 / uint8 and DEQUANTIZE back
 * for AArch64 NEON: template/quantize.h over neon/simd.h (4 lanes),
 * bit-identical to the reference kernels like the x86 builds of the template.
 */
#include "kernels/neon/simd.h"

#include "kernels/template/quantize.h"
