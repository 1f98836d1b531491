/*
 * neondot/q4_blocks.c — the blockwise int4 FULLY_CONNECTED kernel (neon/q4_blocks.h) with the
 * ARMv8.2 dot-product extension (SDOT). Compiled with +dotprod (this folder's flags,
 * CMakeLists.txt); called only when q4.c saw HWCAP_ASIMDDP.
 */
#define Q4_NAME(name) name##__neondot
#include "kernels/neon/q4_blocks.h"
