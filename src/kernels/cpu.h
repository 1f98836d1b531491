/*
 * cpu.h — which instruction sets this CPU (and its operating system) can run.
 *
 * wick_cpu_features() returns a bit set of WICK_CPU_* flags (x86-64 from
 * CPUID/XGETBV, AArch64 from the kernel's hwcaps). It is computed on
 * first use and cached in one atomic word, so it is safe to call from any
 * thread; the value never changes afterwards (it is the only global in the
 * kernels layer, and it is immutable once set). A flag is set only when the
 * CPU reports the instructions AND the OS saves the registers they use
 * (XGETBV), so a set flag means "safe to execute".
 *
 * WICK_MAX_ISA (read once, on first use) caps the set at one of the ISA levels below, for
 * testing and for comparing code paths on one machine: on x86-64 "reference" (everything
 * hidden: no optimized kernels, the reference kernels run; "none" is an older name for it),
 * "avx2" (AVX2 + FMA), "avx512" (hides VNNI, VBMI, BF16 and AMX), "avx512vnni" (hides AMX),
 * "avx512amx" (hides nothing); on AArch64 "reference", "neon" (hides the dot-product
 * extension), "neondot". Unknown values are ignored.
 *
 * Next: select.c (kernels chosen from these flags).
 */
#ifndef WICK_KERNELS_CPU_H
#define WICK_KERNELS_CPU_H

#include <stddef.h>
#include <stdint.h>

enum {
  WICK_CPU_AVX2 = 1u << 0,
  WICK_CPU_FMA = 1u << 1,
  WICK_CPU_AVX512F = 1u << 2,
  WICK_CPU_AVX512VL = 1u << 3,
  WICK_CPU_AVX512BW = 1u << 4,
  WICK_CPU_AVX512DQ = 1u << 5,
  WICK_CPU_AVX512VNNI = 1u << 6,
  WICK_CPU_AVX512BF16 = 1u << 7,
  WICK_CPU_NEON = 1u << 8,        /* AArch64 Advanced SIMD (HWCAP_ASIMD) */
  WICK_CPU_NEON_DOT = 1u << 9,    /* AArch64 SDOT/UDOT (HWCAP_ASIMDDP) */
  WICK_CPU_AVX512VBMI = 1u << 10, /* VPERMB / VPERMI2B (byte table lookups) */
  WICK_CPU_AMX_INT8 = 1u << 11    /* AMX tiles with TDPBUSD, and (Linux) the process may use them */
};

/* The flags of the host, capped by WICK_MAX_ISA; cached after the first call. */
__attribute__((visibility("hidden"))) uint32_t wick_cpu_features(void);
/* The flags of the host, uncapped and uncached (CPUID + XGETBV each call). */
__attribute__((visibility("hidden"))) uint32_t wick_cpu_detect(void);
/* One ISA level (cpu.c's list, lowest first): its WICK_MAX_ISA name, the flags the host needs
 * for its kernels to be picked, and the flags a cap at this level keeps. */
typedef struct wick_cpu_level {
  const char *name;
  uint32_t needs;
  uint32_t keeps;
} wick_cpu_level;
/* Level i of this build's target, or NULL past the end; level 0 is "reference". */
__attribute__((visibility("hidden"))) const wick_cpu_level *wick_cpu_level_at(size_t i);
/* The level WICK_MAX_ISA=name selects, or NULL for an unknown name. */
__attribute__((visibility("hidden"))) const wick_cpu_level *wick_cpu_level_named(const char *name);
/* Tests only (tests/unit/test_op_sweep.c): replaces the cached flags, so interpreters created
 * afterwards pick the kernels of `features` (pass a subset of wick_cpu_features()'s first
 * value: a flag the host lacks would select instructions it cannot run). The one exception to
 * "never changes afterwards": call it only while no other thread creates an interpreter. */
__attribute__((visibility("hidden"))) void wick_cpu_set_features_for_testing(uint32_t features);
/* Writes a space-separated list of the flag names in `features` ("" if none). */
__attribute__((visibility("hidden"))) void wick_cpu_describe(uint32_t features, char *buf,
                                                             unsigned size);

#endif /* WICK_KERNELS_CPU_H */
