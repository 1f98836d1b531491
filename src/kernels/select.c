/*
 * select.c — picks the optimized kernels for this CPU (cpu.c), or none.
 *
 * Order of preference on x86-64: AVX-512 (F + VL, with FMA), then AVX2 + FMA;
 * on AArch64: NEON. NULL tells the op to run its reference kernel. The tables are
 * static const: selection has no state of its own. Ops call this at prepare
 * and keep the pointer (see src/ops/conv_2d.c, fully_connected.c).
 *
 * Adding an ISA: a folder src/kernels/<isa>/ with its compile flags in
 * CMakeLists.txt, its prototypes in kernels.h, and a table here in the
 * inventory (best first); the kernel tests and bench_kernels walk the
 * inventory, so they cover it without naming it.
 */
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/kernels.h"

/* The kernels of template/elementwise.h, template/quantize.h and template/resize.h. */
#define ELEMENTWISE_KERNELS(ISA)                                                              \
  .unary = {[WICK_F32_RELU] = wick_f32_relu__##ISA,                                           \
            [WICK_F32_RELU6] = wick_f32_relu6__##ISA,                                         \
            [WICK_F32_RELU_N1_TO_1] = wick_f32_relu_n1_to_1__##ISA,                           \
            [WICK_F32_RELU_0_TO_1] = wick_f32_relu_0_to_1__##ISA,                             \
            [WICK_F32_LOGISTIC] = wick_f32_logistic__##ISA,                                   \
            [WICK_F32_SILU] = wick_f32_silu__##ISA,                                           \
            [WICK_F32_TANH] = wick_f32_tanh__##ISA,                                           \
            [WICK_F32_EXP] = wick_f32_exp__##ISA,                                             \
            [WICK_F32_HARD_SWISH] = wick_f32_hard_swish__##ISA,                               \
            [WICK_F32_GELU] = wick_f32_gelu__##ISA,                                           \
            [WICK_F32_GELU_TANH] = wick_f32_gelu_tanh__##ISA,                                 \
            [WICK_F32_NEG] = wick_f32_neg__##ISA,                                             \
            [WICK_F32_ABS] = wick_f32_abs__##ISA},                                            \
  .binary = {[WICK_F32_ADD] = BINARY_FORMS(add, ISA),                                         \
             [WICK_F32_SUB] = BINARY_FORMS(sub, ISA),                                         \
             [WICK_F32_MUL] = BINARY_FORMS(mul, ISA),                                         \
             [WICK_F32_DIV] = BINARY_FORMS(div, ISA),                                         \
             [WICK_F32_MAXIMUM] = BINARY_FORMS(maximum, ISA),                                 \
             [WICK_F32_MINIMUM] = BINARY_FORMS(minimum, ISA),                                 \
             [WICK_F32_SQUARED_DIFFERENCE] = BINARY_FORMS(sqdiff, ISA)},                      \
  .softmax = wick_f32_softmax__##ISA, .sum_mid = wick_f32_sum_mid__##ISA,                     \
  .max_pool = wick_f32_max_pool__##ISA, .average_pool = wick_f32_average_pool__##ISA,         \
  .quantize8 = wick_f32_quantize8__##ISA, .dequantize8 = wick_f32_dequantize8__##ISA,         \
  .quantize16 = wick_f32_quantize16__##ISA, .dequantize16 = wick_f32_dequantize16__##ISA,     \
  .row_range = wick_f32_row_range__##ISA, .hybrid_quantize = wick_f32_hybrid_quantize__##ISA, \
  .resize_bilinear = wick_f32_resize_bilinear__##ISA, .prelu = wick_f32_prelu__##ISA
#define BINARY_FORMS(OP, ISA) \
  { wick_f32_##OP##_vv__##ISA, wick_f32_##OP##_vs__##ISA, wick_f32_##OP##_sv__##ISA }

#if defined(__x86_64__) || defined(_M_X64)
#define WICK_HAVE_X86_KERNELS 1

#define TEMPLATE_KERNELS(ISA)                                                                     \
  .dwconv3x3 = wick_f32_dwconv3x3_ukernel__##ISA, .dwconv5x5 = wick_f32_dwconv5x5_ukernel__##ISA, \
  .dwconv = wick_f32_dwconv_ukernel__##ISA, .winograd_input = wick_f32_winograd_input__##ISA,     \
  .winograd_output = wick_f32_winograd_output__##ISA, ELEMENTWISE_KERNELS(ISA),                   \
  .hybrid_dwconv = wick_hybrid_dwconv__avx2, .hybrid_rescale = wick_hybrid_rescale__avx2,         \
  .f16_to_f32 = wick_f16_to_f32__avx2, .select8 = wick_select8__avx2

static const wick_f32_kernels avx512_kernels = {
    .isa = "avx512",
    /* Row tails of 2-6 rows (kernels.h): 4x4 maps (M = 16 = 7 + 7 + 2) ran their last tile at
     * the cost of 7 rows. */
    .gemm = {7, 32, wick_f32_gemm_ukernel_7x32__avx512, wick_f32_gemm_ukernel_1x32__avx512,
             wick_f32_igemm_ukernel_7x32__avx512,
             .tail_gemm = {[2] = wick_f32_gemm_ukernel_2x32__avx512,
                           [3] = wick_f32_gemm_ukernel_3x32__avx512,
                           [4] = wick_f32_gemm_ukernel_4x32__avx512,
                           [5] = wick_f32_gemm_ukernel_5x32__avx512,
                           [6] = wick_f32_gemm_ukernel_6x32__avx512},
             .tail_igemm = {[2] = wick_f32_igemm_ukernel_2x32s7__avx512,
                            [3] = wick_f32_igemm_ukernel_3x32s7__avx512,
                            [4] = wick_f32_igemm_ukernel_4x32s7__avx512,
                            [5] = wick_f32_igemm_ukernel_5x32s7__avx512,
                            [6] = wick_f32_igemm_ukernel_6x32s7__avx512}},
    /* N <= 16: 14x16 keeps 14 accumulators busy without 16 lanes of padding
     * (measured ~100 vs ~75 GFLOP/s on MobileNetV2's 112x112x32 -> 16). */
    .gemm_narrow = {14, 16, wick_f32_gemm_ukernel_14x16__avx512, wick_f32_gemm_ukernel_1x16__avx512,
                    wick_f32_igemm_ukernel_14x16__avx512,
                    .tail_gemm = {[2] = wick_f32_gemm_ukernel_2x16__avx512,
                                  [3] = wick_f32_gemm_ukernel_4x16__avx512,
                                  [4] = wick_f32_gemm_ukernel_4x16__avx512,
                                  [5] = wick_f32_gemm_ukernel_7x16__avx512,
                                  [6] = wick_f32_gemm_ukernel_7x16__avx512,
                                  [7] = wick_f32_gemm_ukernel_7x16__avx512,
                                  [8] = wick_f32_gemm_ukernel_10x16__avx512,
                                  [9] = wick_f32_gemm_ukernel_10x16__avx512,
                                  [10] = wick_f32_gemm_ukernel_10x16__avx512},
                    .tail_igemm = {[2] = wick_f32_igemm_ukernel_2x16s14__avx512,
                                   [3] = wick_f32_igemm_ukernel_4x16s14__avx512,
                                   [4] = wick_f32_igemm_ukernel_4x16s14__avx512,
                                   [5] = wick_f32_igemm_ukernel_7x16s14__avx512,
                                   [6] = wick_f32_igemm_ukernel_7x16s14__avx512,
                                   [7] = wick_f32_igemm_ukernel_7x16s14__avx512,
                                   [8] = wick_f32_igemm_ukernel_10x16s14__avx512,
                                   [9] = wick_f32_igemm_ukernel_10x16s14__avx512,
                                   [10] = wick_f32_igemm_ukernel_10x16s14__avx512}},
    .dw_cr = 16,
    TEMPLATE_KERNELS(avx512),
    .gemm_inplace = wick_f32_gemm_inplace_7x32__avx512,
    .gemm_inplace_1 = wick_f32_gemm_inplace_1x32__avx512,
};

static const wick_f32_kernels avx2_kernels = {
    .isa = "avx2",
    .gemm = {6, 16, wick_f32_gemm_ukernel_6x16__avx2, wick_f32_gemm_ukernel_1x16__avx2,
             wick_f32_igemm_ukernel_6x16__avx2},
    .gemm_narrow = {0, 0, NULL, NULL, NULL},
    .dw_cr = 8,
    TEMPLATE_KERNELS(avx2),
    .gemm_inplace = wick_f32_gemm_inplace_6x16__avx2,
    .gemm_inplace_1 = wick_f32_gemm_inplace_1x16__avx2,
};

static const uint32_t avx512_needs =
    WICK_CPU_AVX512F | WICK_CPU_AVX512VL | WICK_CPU_AVX2 | WICK_CPU_FMA;
static const uint32_t avx2_needs = WICK_CPU_AVX2 | WICK_CPU_FMA;
#endif

#if defined(__aarch64__)
#define WICK_HAVE_NEON_KERNELS 1

static const wick_f32_kernels neon_kernels = {
    .isa = "neon",
    .gemm = {8, 8, wick_f32_gemm_ukernel_8x8__neon, wick_f32_gemm_ukernel_1x8__neon,
             wick_f32_igemm_ukernel_8x8__neon},
    .gemm_narrow = {0, 0, NULL, NULL, NULL},
    .dw_cr = 4,
    .dwconv3x3 = wick_f32_dwconv3x3_ukernel__neon,
    .dwconv5x5 = wick_f32_dwconv5x5_ukernel__neon,
    .dwconv = wick_f32_dwconv_ukernel__neon,
    .winograd_input = wick_f32_winograd_input__neon,
    .winograd_output = wick_f32_winograd_output__neon,
    ELEMENTWISE_KERNELS(neon),
    .hybrid_dwconv = wick_hybrid_dwconv__neon,
    .hybrid_rescale = wick_hybrid_rescale__neon,
    .select8 = wick_select8__neon,
    .gemm_inplace = wick_f32_gemm_inplace_8x8__neon,
    .gemm_inplace_1 = wick_f32_gemm_inplace_1x8__neon,
};
#endif

/* The inventory: every kernel table compiled for this architecture, best first, with the CPU
 * features it needs. Selection, the kernel tests and bench_kernels all walk it. */
static const struct {
  const wick_f32_kernels *kernels;
  uint32_t needs;
} inventory[] = {
#ifdef WICK_HAVE_X86_KERNELS
    {&avx512_kernels, avx512_needs},
    {&avx2_kernels, avx2_needs},
#endif
#ifdef WICK_HAVE_NEON_KERNELS
    {&neon_kernels, WICK_CPU_NEON},
#endif
    {NULL, 0}, /* (keeps the array non-empty on other architectures) */
};

/* (a variable, not a macro: a build without kernel tables compares with 0 without warnings) */
static const size_t inventory_size = sizeof inventory / sizeof inventory[0] - 1;

size_t wick_f32_kernels_count(void) { return inventory_size; }

const wick_f32_kernels *wick_f32_kernels_at(size_t i, bool *runnable) {
  if (i >= inventory_size) return NULL;
  if (runnable != NULL)
    *runnable = (wick_cpu_features() & inventory[i].needs) == inventory[i].needs;
  return inventory[i].kernels;
}

const wick_f32_kernels *wick_f32_kernels_for_isa(const char *isa) {
  for (size_t i = 0; i < inventory_size; i++) {
    bool runnable;
    const wick_f32_kernels *k = wick_f32_kernels_at(i, &runnable);
    if (runnable && strcmp(k->isa, isa) == 0) return k;
  }
  return NULL;
}

const wick_f32_kernels *wick_f32_kernels_select(bool force_reference) {
  if (force_reference) return NULL;
  for (size_t i = 0; i < inventory_size; i++) {
    bool runnable;
    const wick_f32_kernels *k = wick_f32_kernels_at(i, &runnable);
    if (runnable) return k;
  }
  return NULL;
}

const wick_f32_gemm_kernel *wick_f32_gemm_kernel_for(const wick_f32_kernels *k, size_t n) {
  return k->gemm_narrow.nr != 0 && n <= k->gemm_narrow.nr ? &k->gemm_narrow : &k->gemm;
}
