/*
 * q8_select.c — picks the optimized int8 kernels for this CPU (cpu.c), or
 * none: on x86-64 AMX-INT8 with AVX-512 VNNI (convolutions on tiles), else
 * AVX-512 VNNI (with F, VL, BW, DQ), else AVX2 (a NULL entry sends the op
 * to its reference kernel); on AArch64 NEON with the
 * dot-product extension (SDOT), else plain NEON (the two share everything but
 * the GEMM kernels); else NULL.
 * WICK_MAX_ISA=avx512vnni|avx512|avx2|neon|reference hides the better ones (cpu.h).
 */
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/q8.h"

#if defined(__x86_64__) || defined(_M_X64)
#define WICK_HAVE_X86_KERNELS 1

/* The AVX-512 VNNI kernels (the amx table adds its convolutions to them). */
#define AVX512VNNI_ENTRIES                                                                         \
  .mr = 7, .nr = 32, .gemm = wick_q8_gemm_ukernel_7x32c4__avx512vnni,                              \
  .gemm_1 = wick_q8_gemm_ukernel_1x32c4__avx512vnni,                                               \
  .gemm_u8 = wick_q8_gemm_u8_ukernel_7x32c4__avx512vnni,                                           \
  .gemm_u8_1 = wick_q8_gemm_u8_ukernel_1x32c4__avx512vnni,                                         \
  .gemm_u8_4 = wick_q8_gemm_u8_ukernel_4x32c4__avx512vnni,                                         \
  .igemm = wick_q8_igemm_ukernel_7x32c4__avx512vnni,                                               \
  .igemm_u8 = wick_q8_igemm_u8_ukernel_7x32c4__avx512vnni,                                         \
  .igemm_u8_4 = wick_q8_igemm_u8_ukernel_4x32c4__avx512vnni, .dw_cr = 16,                          \
  .dwconv = wick_q8_dwconv_ukernel__avx512vnni, .add = wick_q8_add_ukernel__avx512vnni,            \
  .mul = wick_q8_mul_ukernel__avx512vnni, .dots = wick_q8_dots__avx512vnni,                        \
  .squared_difference = wick_q8_squared_difference_ukernel__avx2, .fc16 = wick_q16_fc__avx512vnni, \
  .add16 = wick_q16_add_ukernel__avx512vnni, .mul16 = wick_q16_mul_ukernel__avx512vnni,            \
  .requant16 = wick_q16_requant_ukernel__avx512vnni, .sigmoid16 = wick_q16_sigmoid__avx512vnni,    \
  .softmax8 = wick_q8_softmax_rows__avx2, .colsum = wick_q8_colsum__avx2,                          \
  .requant32 = wick_q8_requant32__avx2, .mul_u8 = wick_q8_mul_u8_ukernel__avx2,                    \
  .add8 = wick_q8_add8_ukernel__avx2, .add8_rescaled = wick_q8_add8_rescaled_ukernel__avx2,        \
  .lut16 = wick_q8_lut16__avx512vnni, .dot16 = wick_q16_dot__avx512vnni

static const wick_q8_kernels avx512vnni_kernels = {.isa = "avx512vnni", AVX512VNNI_ENTRIES};

#ifdef WICK_HAVE_AMX
/* AMX-INT8: convolutions on tiles (avx512amx/q8_conv.c); the rest VNNI. */
static const wick_q8_kernels avx512amx_kernels = {.isa = "avx512amx",
                                                  AVX512VNNI_ENTRIES,
                                                  .conv_amx = wick_q8_conv_amx__avx512amx};
#endif

/* AVX2: GEMM-shaped ops (int16 input, VPMADDWD), depthwise convs (8
 * channels per vector, VPMADDWD per tap), ADD / SUB, MUL and SQUARED_DIFFERENCE, 16x8
 * FULLY_CONNECTED, int16 ADD / SUB / MUL, QUANTIZE, LOGISTIC and TANH, 8-bit SOFTMAX (also the
 * AVX-512 tables' 16-bit kernels and SQUARED_DIFFERENCE). */
static const wick_q8_kernels avx2_kernels = {
    .isa = "avx2",
    .mr = 4,
    .nr = 16,
    .i16 = true,
    .gemm_u8 = wick_q8_gemm_i16_ukernel_4x16c2__avx2,
    .gemm_u8_1 = wick_q8_gemm_i16_ukernel_1x16c2__avx2,
    .igemm_u8 = wick_q8_igemm_i16_ukernel_4x16c2__avx2,
    .dw_cr = 8,
    .dwconv = wick_q8_dwconv_ukernel__avx2,
    .add = wick_q8_add_ukernel__avx2,
    .mul = wick_q8_mul_ukernel__avx2,
    .mul_u8 = wick_q8_mul_u8_ukernel__avx2,
    .add8 = wick_q8_add8_ukernel__avx2,
    .add8_rescaled = wick_q8_add8_rescaled_ukernel__avx2,
    .squared_difference = wick_q8_squared_difference_ukernel__avx2,
    .dots = wick_q8_dots__avx2,
    .fc16 = wick_q16_fc__avx2,
    .add16 = wick_q16_add_ukernel__avx2,
    .mul16 = wick_q16_mul_ukernel__avx2,
    .requant16 = wick_q16_requant_ukernel__avx2,
    .sigmoid16 = wick_q16_sigmoid__avx2,
    .softmax8 = wick_q8_softmax_rows__avx2,
    .colsum = wick_q8_colsum__avx2,
    .requant32 = wick_q8_requant32__avx2,
    .dot16 = wick_q16_dot__avx2,
};

static const uint32_t avx512vnni_needs = WICK_CPU_AVX512F | WICK_CPU_AVX512VL | WICK_CPU_AVX512BW |
                                         WICK_CPU_AVX512DQ | WICK_CPU_AVX512VNNI | WICK_CPU_AVX2;
#endif

#if defined(__aarch64__)
#define WICK_HAVE_NEON_KERNELS 1

/* What both AArch64 tables share (plain Advanced SIMD): depthwise convs, ADD / SUB, MUL (int8
 * and uint8) and SQUARED_DIFFERENCE, int16 ADD / SUB / MUL, QUANTIZE from int16, 16x8
 * FULLY_CONNECTED, int16 LOGISTIC and TANH, 8-bit SOFTMAX, 8-bit MEAN's column sums and their
 * requantization. */
#define NEON_ENTRIES                                                           \
  .dwconv = wick_q8_dwconv_ukernel__neon, .add = wick_q8_add_ukernel__neon,    \
  .mul = wick_q8_mul_ukernel__neon,                                            \
  .squared_difference = wick_q8_squared_difference_ukernel__neon,              \
  .add16 = wick_q16_add_ukernel__neon, .mul16 = wick_q16_mul_ukernel__neon,    \
  .requant16 = wick_q16_requant_ukernel__neon, .fc16 = wick_q16_fc__neon,      \
  .sigmoid16 = wick_q16_sigmoid__neon, .softmax8 = wick_q8_softmax_rows__neon, \
  .colsum = wick_q8_colsum__neon, .requant32 = wick_q8_requant32__neon,        \
  .mul_u8 = wick_q8_mul_u8_ukernel__neon

/* GEMM-shaped ops (the input stays int8: s8, q8.h) and the hybrid ops' dot products on
 * SDOT, and NEON_ENTRIES. */
static const wick_q8_kernels neondot_kernels = {
    .isa = "neondot",
    .mr = 4,
    .nr = 16,
    .s8 = true,
    .gemm = wick_q8_gemm_ukernel_4x16c4__neondot,
    .gemm_1 = wick_q8_gemm_ukernel_1x16c4__neondot,
    .gemm_u8 = wick_q8_gemm_ukernel_4x16c4__neondot,
    .gemm_u8_1 = wick_q8_gemm_ukernel_1x16c4__neondot,
    .igemm = wick_q8_igemm_ukernel_4x16c4__neondot,
    .igemm_u8 = wick_q8_igemm_ukernel_4x16c4__neondot,
    .dots = wick_q8_dots__neondot,
    .dw_cr = 16,
    NEON_ENTRIES,
};

/* The same kernels without SDOT (widening multiplies). */
static const wick_q8_kernels neon_kernels = {
    .isa = "neon",
    .mr = 4,
    .nr = 16,
    .s8 = true,
    .gemm = wick_q8_gemm_ukernel_4x16c4__neon,
    .gemm_1 = wick_q8_gemm_ukernel_1x16c4__neon,
    .gemm_u8 = wick_q8_gemm_ukernel_4x16c4__neon,
    .gemm_u8_1 = wick_q8_gemm_ukernel_1x16c4__neon,
    .igemm = wick_q8_igemm_ukernel_4x16c4__neon,
    .igemm_u8 = wick_q8_igemm_ukernel_4x16c4__neon,
    .dots = wick_q8_dots__neon,
    .dw_cr = 16,
    NEON_ENTRIES,
};
#endif

/* The inventory: every kernel table compiled for this architecture, best first, with the CPU
 * features it needs. Selection, the kernel tests and bench_kernels all walk it. */
static const struct {
  const wick_q8_kernels *kernels;
  uint32_t needs;
} inventory[] = {
#ifdef WICK_HAVE_X86_KERNELS
#ifdef WICK_HAVE_AMX
    {&avx512amx_kernels, avx512vnni_needs | WICK_CPU_AMX_INT8},
#endif
    {&avx512vnni_kernels, avx512vnni_needs},
    {&avx2_kernels, WICK_CPU_AVX2},
#elif defined(WICK_HAVE_NEON_KERNELS)
    {&neondot_kernels, WICK_CPU_NEON_DOT},
    {&neon_kernels, WICK_CPU_NEON},
#endif
    {NULL, 0}, /* (keeps the array non-empty on other architectures) */
};

/* (a variable, not a macro: a build without kernel tables compares with 0 without warnings) */
static const size_t inventory_size = sizeof inventory / sizeof inventory[0] - 1;

size_t wick_q8_kernels_count(void) { return inventory_size; }

const wick_q8_kernels *wick_q8_kernels_at(size_t i, bool *runnable) {
  if (i >= inventory_size) return NULL;
  if (runnable != NULL)
    *runnable = (wick_cpu_features() & inventory[i].needs) == inventory[i].needs;
  return inventory[i].kernels;
}

const wick_q8_kernels *wick_q8_kernels_for_isa(const char *isa) {
  for (size_t i = 0; i < inventory_size; i++) {
    bool runnable;
    const wick_q8_kernels *k = wick_q8_kernels_at(i, &runnable);
    if (runnable && strcmp(k->isa, isa) == 0) return k;
  }
  return NULL;
}

wick_q8_lut8_fn wick_q8_lut8_select(bool force_reference) {
#ifdef WICK_HAVE_X86_KERNELS
  const uint32_t needs = WICK_CPU_AVX512F | WICK_CPU_AVX512BW | WICK_CPU_AVX512VBMI;
  if (!force_reference && (wick_cpu_features() & needs) == needs) return wick_q8_lut8__avx512vbmi;
  if (!force_reference && (wick_cpu_features() & WICK_CPU_AVX2)) return wick_q8_lut8__avx2;
#elif defined(WICK_HAVE_NEON_KERNELS)
  if (!force_reference && (wick_cpu_features() & WICK_CPU_NEON)) return wick_q8_lut8__neon;
#else
  (void)force_reference;
#endif
  return NULL;
}

const wick_q8_kernels *wick_q8_kernels_select(bool force_reference) {
  if (force_reference) return NULL;
  for (size_t i = 0; i < inventory_size; i++) {
    bool runnable;
    const wick_q8_kernels *k = wick_q8_kernels_at(i, &runnable);
    if (runnable) return k;
  }
  return NULL;
}
