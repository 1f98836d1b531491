/*
 * neondot/q8_gemm.c — the int8 GEMM microkernels (neon/q8_gemm.h) with the
 * ARMv8.2 dot-product extension (SDOT). Compiled with +dotprod (this
 * folder's flags, CMakeLists.txt); called only when q8_select.c saw
 * HWCAP_ASIMDDP.
 */
#define Q8_NAME(name) name##__neondot
#include "kernels/neon/q8_gemm.h"
