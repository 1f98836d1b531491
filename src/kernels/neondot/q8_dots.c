/*
 * neondot/q8_dots.c — the hybrid ops' int8 dot products (neon/q8_dots.h) with the ARMv8.2
 * dot-product extension (SDOT). Compiled with +dotprod (this folder's flags,
 * CMakeLists.txt); called only when q8_select.c saw HWCAP_ASIMDDP.
 */
#define Q8_NAME(name) name##__neondot
#include "kernels/neon/q8_dots.h"
