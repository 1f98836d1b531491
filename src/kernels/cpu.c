/*
 * cpu.c — CPU feature detection (x86-64: CPUID + XGETBV; AArch64: the
 * kernel's hwcaps from getauxval; elsewhere: none).
 *
 * The rules, from the Intel SDM and AMD APM:
 *   AVX family usable  <=> CPUID.1:ECX.OSXSAVE[27] and XCR0 has SSE|AVX state (bits 1,2)
 *   AVX2               <=> that and CPUID.(7,0):EBX[5];  FMA <=> CPUID.1:ECX[12]
 *   AVX-512 usable     <=> that and XCR0 has opmask|ZMM_Hi256|Hi16_ZMM state (bits 5,6,7)
 *   AVX512F/DQ/BW/VL   <=> CPUID.(7,0):EBX[16]/[17]/[30]/[31];  VNNI <=> CPUID.(7,0):ECX[11]
 *   AVX512_VBMI        <=> CPUID.(7,0):ECX[1]
 *   AVX512_BF16        <=> CPUID.(7,1):EAX[5]
 *   AMX-INT8 usable    <=> CPUID.(7,0):EDX[24] (tiles) and EDX[25] (int8), XCR0 has
 *                          XTILECFG|XTILEDATA state (bits 17,18), and on Linux the process was
 *                          granted the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM: Linux
 *                          enables it per process; a first tile instruction without it is
 *                          SIGILL). The request is made here, once per detection.
 *
 * The cache is one _Atomic word: 0 means "not computed yet", otherwise the
 * flags with bit 31 set. Two threads racing on the first call compute the same
 * value and store it twice, which is harmless.
 */
#include "kernels/cpu.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* Asks Linux for the AMX tile data state (XFEATURE_XTILEDATA = 18); true
 * when granted (idempotent, process-wide). The raw system call
 * (arch_prctl = 158 on x86-64): the C library's syscall() is outside the
 * POSIX feature set this file is built with. */
static bool request_amx(void) {
#if defined(__linux__) && defined(__x86_64__)
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(158L), "D"(0x1023L /* ARCH_REQ_XCOMP_PERM */), "S"(18L)
                   : "rcx", "r11", "memory");
  return ret == 0;
#else
  return false;
#endif
}

static uint64_t read_xcr0(void) {
  uint32_t eax, edx;
  /* xgetbv with ecx = 0; encoded as bytes so no -mxsave is needed. */
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t)edx << 32) | eax;
}

uint32_t wick_cpu_detect(void) {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return 0;
  unsigned max_leaf = eax;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  const unsigned ecx1 = ecx;
  if (!(ecx1 & (1u << 27)) || !(ecx1 & (1u << 28))) return 0; /* OSXSAVE, AVX */
  uint64_t xcr0 = read_xcr0();
  if ((xcr0 & 0x6) != 0x6) return 0; /* the OS does not save YMM state */
  if (max_leaf < 7) return 0;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const unsigned max_sub7 = eax, ebx7 = ebx, ecx7 = ecx, edx7 = edx;
  uint32_t f = 0;
  if (ebx7 & (1u << 5)) f |= WICK_CPU_AVX2;
  if (ecx1 & (1u << 12)) f |= WICK_CPU_FMA;
  if ((xcr0 & 0xe0) == 0xe0) {
    if (ebx7 & (1u << 16)) f |= WICK_CPU_AVX512F;
    if (ebx7 & (1u << 17)) f |= WICK_CPU_AVX512DQ;
    if (ebx7 & (1u << 30)) f |= WICK_CPU_AVX512BW;
    if (ebx7 & (1u << 31)) f |= WICK_CPU_AVX512VL;
    if (ecx7 & (1u << 11)) f |= WICK_CPU_AVX512VNNI;
    if (ecx7 & (1u << 1)) f |= WICK_CPU_AVX512VBMI;
    if (max_sub7 >= 1) {
      __cpuid_count(7, 1, eax, ebx, ecx, edx);
      if (eax & (1u << 5)) f |= WICK_CPU_AVX512BF16;
    }
    const uint64_t tile_state = (uint64_t)3 << 17;
    if ((edx7 & (3u << 24)) == (3u << 24) && (xcr0 & tile_state) == tile_state && request_amx())
      f |= WICK_CPU_AMX_INT8;
    if (!(f & WICK_CPU_AVX512F))
      f &= ~(uint32_t)(WICK_CPU_AVX512DQ | WICK_CPU_AVX512BW | WICK_CPU_AVX512VL |
                       WICK_CPU_AVX512VNNI | WICK_CPU_AVX512BF16 | WICK_CPU_AVX512VBMI |
                       WICK_CPU_AMX_INT8);
  }
  return f;
}
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>

/* From the kernel's uapi asm/hwcap.h (stable ABI; spelled out so the build
 * does not depend on the C library's copy). */
#define WICK_HWCAP_ASIMD (1ul << 1)
#define WICK_HWCAP_ASIMDDP (1ul << 20)

uint32_t wick_cpu_detect(void) {
  const unsigned long hw = getauxval(AT_HWCAP);
  uint32_t f = 0;
  if (hw & WICK_HWCAP_ASIMD) f |= WICK_CPU_NEON;
  if ((hw & WICK_HWCAP_ASIMDDP) && (f & WICK_CPU_NEON)) f |= WICK_CPU_NEON_DOT;
  return f;
}
#else
uint32_t wick_cpu_detect(void) { return 0; }
#endif

/* The ISA levels, lowest first: what WICK_MAX_ISA names and test_op_sweep runs. A level keeps
 * the flags its kernels use (and those of the levels below) and needs the flags select.c /
 * q8_select.c ask for before they pick its tables. */
#define WICK_CPU_X86_AVX512                                                                  \
  (WICK_CPU_AVX2 | WICK_CPU_FMA | WICK_CPU_AVX512F | WICK_CPU_AVX512VL | WICK_CPU_AVX512BW | \
   WICK_CPU_AVX512DQ)
static const wick_cpu_level levels[] = {
    {"reference", 0, 0},
#if defined(__x86_64__) || defined(__i386__)
    {"avx2", WICK_CPU_AVX2 | WICK_CPU_FMA, WICK_CPU_AVX2 | WICK_CPU_FMA},
    {"avx512", WICK_CPU_X86_AVX512, WICK_CPU_X86_AVX512},
    {"avx512vnni", WICK_CPU_X86_AVX512 | WICK_CPU_AVX512VNNI, ~(uint32_t)WICK_CPU_AMX_INT8},
    {"avx512amx", WICK_CPU_X86_AVX512 | WICK_CPU_AVX512VNNI | WICK_CPU_AMX_INT8, ~(uint32_t)0},
#elif defined(__aarch64__)
    {"neon", WICK_CPU_NEON, WICK_CPU_NEON},
    {"neondot", WICK_CPU_NEON | WICK_CPU_NEON_DOT, ~(uint32_t)0},
#endif
};

const wick_cpu_level *wick_cpu_level_at(size_t i) {
  return i < sizeof levels / sizeof levels[0] ? &levels[i] : NULL;
}

const wick_cpu_level *wick_cpu_level_named(const char *name) {
  if (strcmp(name, "none") == 0) return &levels[0]; /* the older name of "reference" */
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (strcmp(name, levels[i].name) == 0) return &levels[i];
  return NULL;
}

static uint32_t apply_cap(uint32_t f) {
  const char *cap = getenv("WICK_MAX_ISA");
  const wick_cpu_level *level = cap != NULL ? wick_cpu_level_named(cap) : NULL;
  return level != NULL ? f & level->keeps : f;
}

#define COMPUTED (1u << 31)
static _Atomic uint32_t cached_features; /* zero-initialized: not computed */

uint32_t wick_cpu_features(void) {
  uint32_t v = atomic_load_explicit(&cached_features, memory_order_acquire);
  if (v == 0) {
    v = apply_cap(wick_cpu_detect()) | COMPUTED;
    atomic_store_explicit(&cached_features, v, memory_order_release);
  }
  return v & ~COMPUTED;
}

void wick_cpu_set_features_for_testing(uint32_t features) {
  atomic_store_explicit(&cached_features, (features & ~COMPUTED) | COMPUTED, memory_order_release);
}

void wick_cpu_describe(uint32_t features, char *buf, unsigned size) {
  static const struct {
    uint32_t bit;
    const char *name;
  } names[] = {{WICK_CPU_AVX2, "avx2"},
               {WICK_CPU_FMA, "fma"},
               {WICK_CPU_AVX512F, "avx512f"},
               {WICK_CPU_AVX512VL, "avx512vl"},
               {WICK_CPU_AVX512BW, "avx512bw"},
               {WICK_CPU_AVX512DQ, "avx512dq"},
               {WICK_CPU_AVX512VNNI, "avx512vnni"},
               {WICK_CPU_AVX512BF16, "avx512bf16"},
               {WICK_CPU_AVX512VBMI, "avx512vbmi"},
               {WICK_CPU_AMX_INT8, "amx-int8"},
               {WICK_CPU_NEON, "neon"},
               {WICK_CPU_NEON_DOT, "neon-dot"}};
  if (size == 0) return;
  buf[0] = 0;
  size_t used = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!(features & names[i].bit)) continue;
    size_t len = strlen(names[i].name) + (used ? 1 : 0);
    if (used + len + 1 > size) break;
    if (used) buf[used++] = ' ';
    memcpy(buf + used, names[i].name, strlen(names[i].name) + 1);
    used += strlen(names[i].name);
  }
}
