/*
 * avx2/elementwise.c — the elementwise kernels of template/elementwise.h
 * (activations, transcendentals, binary arithmetic, softmax, sums) and
 * of template/quantize.h (float <-> 8-bit QUANTIZE / DEQUANTIZE) for
 * AVX2 + FMA, 8 floats per vector.
 */
#include "kernels/avx2/simd.h"

#include "kernels/template/elementwise.h"
#include "kernels/template/quantize.h"
#include "kernels/template/resize.h"
