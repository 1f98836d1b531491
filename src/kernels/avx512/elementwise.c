/*
 * avx512/elementwise.c — the elementwise kernels of template/elementwise.h
 * (activations, transcendentals, binary arithmetic, softmax, sums) and
 * of template/quantize.h (float <-> 8-bit QUANTIZE / DEQUANTIZE) for
 * AVX-512F, 16 floats per vector.
 */
#include "kernels/avx512/simd.h"

#include "kernels/template/elementwise.h"
#include "kernels/template/quantize.h"
#include "kernels/template/resize.h"
