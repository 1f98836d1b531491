/*
 * neon/elementwise.c — the elementwise kernels of template/elementwise.h
 * (activations, transcendentals, binary arithmetic in its three operand
 * forms, softmax, sums, max / average pools, PRELU) and of template/resize.h
 * (RESIZE_BILINEAR) for AArch64 NEON, 4 floats per vector (neon/simd.h). The
 * exact ops are bit-identical to the reference kernels and the
 * transcendentals keep the template's error bounds, as on x86 (the same
 * formulas; FMLA rounds once like VFMADD).
 */
#include "kernels/neon/simd.h"

#include "kernels/template/elementwise.h"
#include "kernels/template/resize.h"
