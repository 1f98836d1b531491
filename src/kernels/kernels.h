/*
 * kernels.h — the optimized fp32 kernels: microkernel signatures, the table
 * select.c fills from the CPU's features, weight packing, and the drivers
 * that tile an operator over a microkernel.
 *
 * Like the reference kernels, everything here works on raw pointers and
 * sizes, knows nothing of TFLite, and cannot fail: the op's prepare checked
 * every size. Every microkernel is tested against the reference kernels in
 * tests/unit/test_kernels.c on edge shapes for every ISA the host has.
 *
 * Packed GEMM weights (one panel per NR output channels, zero-padded past N):
 *
 *     panel j:  [ bias[j*NR .. j*NR+NR) ][ k=0: w[j*NR .. +NR, 0] ][ k=1 ... ][ k=K-1 ]
 *               <------ NR floats ----->  <------------ K rows of NR floats ---------->
 *
 * For convolutions K = kh * kw * cin (tap-major, channel-minor: the order of
 * an OHWI filter row), so FULLY_CONNECTED [N, K] and CONV_2D [Cout, kh, kw,
 * cin] pack with the same function.
 *
 * Indirect GEMM ("igemm") reads its rows through an indirection buffer: for
 * each tile of MR output pixels and each of the ks filter taps, MR pointers to
 * kc input channels (or to a zero row for padding taps):
 *
 *     ind[(tile * ks + tap) * MR + row] -> input pixel of (tile*MR + row, tap)
 *
 * Depthwise 3x3 packed weights, one block per CR channels (zero-padded):
 *     [ bias[CR] ][ tap (0,0)[CR] ][ (0,1) ] ... [ (2,2)[CR] ]      10*CR floats
 *
 * Next: select.c (which ISA), gemm_driver.c (tiling), avx512/, avx2/, neon/.
 */
#ifndef WICK_KERNELS_KERNELS_H
#define WICK_KERNELS_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/reference/reference.h"

#define WICK_KERNEL_API __attribute__((visibility("hidden")))

/* c[mr x nc] = clamp(bias + a[mr x kc] * w, lo, hi), nc any size (the kernel
 * walks NR-wide panels of `w`); mr <= MR. a rows are a_stride floats apart,
 * c rows c_stride floats apart. Unaligned pointers are fine. */
typedef void (*wick_f32_gemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, const float *a,
                                         size_t a_stride, const float *w, float *c,
                                         size_t c_stride, float lo, float hi);
/* Same through an indirection tile: `a` holds ks * MR row pointers (tap-major),
 * each to kc floats; w panels hold ks * kc rows. */
typedef void (*wick_f32_igemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, size_t ks,
                                          const float *const *a, const float *w, float *c,
                                          size_t c_stride, float lo, float hi);
/* DEPTHWISE_CONV_2D with a 3x3 filter, multiplier 1, dilation 1 and strides
 * in {1, 2}, over a whole NHWC tensor; `w` packed as above with the table's
 * dw_cr. */
typedef void (*wick_f32_dwconv3x3_fn)(const wick_conv_shape *s, const float *input,
                                      const float *w, float *output, float lo, float hi);

/* One GEMM tile shape: its microkernels share MR, NR and the packing. */
typedef struct wick_f32_gemm_kernel {
  size_t mr, nr;
  wick_f32_gemm_ukernel_fn gemm;   /* MR x NR */
  wick_f32_gemm_ukernel_fn gemm_1; /* 1 x NR: single rows (FULLY_CONNECTED, tails) */
  wick_f32_igemm_ukernel_fn igemm; /* MR x NR */
} wick_f32_gemm_kernel;

typedef struct wick_f32_kernels {
  const char *isa;                  /* "avx512", "avx2", "neon" */
  wick_f32_gemm_kernel gemm;        /* the main tile */
  wick_f32_gemm_kernel gemm_narrow; /* for N <= its nr (fewer padding lanes); nr 0: none */
  size_t dw_cr;
  wick_f32_dwconv3x3_fn dwconv3x3;
} wick_f32_kernels;

/* The best kernels for this CPU, or NULL when the reference kernels must run
 * (forced, or no supported ISA). The table is static and immutable. */
WICK_KERNEL_API const wick_f32_kernels *wick_f32_kernels_select(bool force_reference);
/* The kernels of one ISA ("avx512", "avx2", "neon") if the host can run them, else
 * NULL (tests and benchmarks). */
WICK_KERNEL_API const wick_f32_kernels *wick_f32_kernels_for_isa(const char *isa);
/* The GEMM tile to use for n output columns (the narrow one when it fits). */
WICK_KERNEL_API const wick_f32_gemm_kernel *wick_f32_gemm_kernel_for(const wick_f32_kernels *k,
                                                                     size_t n);

/* ---- packing (pack.c) ---- */

/* Floats of the packed GEMM weights for n outputs of k inputs. The caller
 * checked that the product fits size_t (wick_f32_gemm_packed_size_checked). */
WICK_KERNEL_API size_t wick_f32_gemm_packed_size(size_t n, size_t k, size_t nr);
/* false when the size overflows size_t. */
WICK_KERNEL_API bool wick_f32_gemm_packed_size_checked(size_t n, size_t k, size_t nr,
                                                       size_t *floats_out);
/* Packs w [n, k] (row-major, any alignment) and bias [n] (NULL: zeros). */
WICK_KERNEL_API void wick_f32_gemm_pack(size_t n, size_t k, size_t nr, const float *w,
                                        const float *bias, float *packed);
/* Packs the right operand of a matmul, w [k, n] row-major (any alignment),
 * with zero bias: the same layout as wick_f32_gemm_pack of its transpose. */
WICK_KERNEL_API void wick_f32_gemm_pack_kn(size_t n, size_t k, size_t nr, const float *w,
                                           float *packed);
/* Packs a depthwise 3x3 filter [1, 3, 3, c] and bias [c] (NULL: zeros) into
 * ceil(c/cr) blocks of 10*cr floats. */
WICK_KERNEL_API void wick_f32_dwconv3x3_pack(size_t c, size_t cr, const float *w,
                                             const float *bias, float *packed);

/* ---- drivers (gemm_driver.c) ---- */

/* A GEMM or an indirect-GEMM convolution cut into independent tasks: task i
 * computes one column block of the output over a run of MR-row tiles.
 * Filled by the *_tasks_init functions; read-only afterwards, so any number
 * of threads may run its tasks at once. */
typedef struct wick_f32_gemm_tasks {
  const wick_f32_gemm_kernel *kern;
  size_t m, n, k;
  const float *a; /* GEMM rows, a_stride floats apart (NULL for igemm) */
  size_t a_stride;
  const float *const *ind; /* igemm indirection buffer (NULL for GEMM) */
  size_t kc, taps;         /* igemm: channels per tap, taps */
  const float *packed;
  float *c;
  size_t c_stride;
  float lo, hi;
  size_t nb, col_blocks, tiles, tiles_per_task, row_tasks; /* the split */
} wick_f32_gemm_tasks;

/* Sets up c[m x n] = clamp(a[m x k] * W + bias) as tasks of at least `grain`
 * multiply-accumulates each (UINT64_MAX: one task per column block); returns
 * the task count (0 when m or n is 0). The split depends only on the shape. */
WICK_KERNEL_API size_t wick_f32_gemm_tasks_init(wick_f32_gemm_tasks *t,
                                                const wick_f32_gemm_kernel *kern, size_t m,
                                                size_t n, size_t k, const float *a,
                                                size_t a_stride, const float *packed, float *c,
                                                size_t c_stride, float lo, float hi,
                                                uint64_t grain);
/* The same for CONV_2D (groups == 1) through an indirection buffer. */
WICK_KERNEL_API size_t wick_f32_conv_igemm_tasks_init(wick_f32_gemm_tasks *t,
                                                      const wick_f32_gemm_kernel *kern,
                                                      const wick_conv_shape *s,
                                                      const float *const *ind,
                                                      const float *packed, float *output,
                                                      float lo, float hi, uint64_t grain);
/* Runs task `task` (< the count init returned). */
WICK_KERNEL_API void wick_f32_gemm_run_task(const wick_f32_gemm_tasks *t, size_t task);

/* c[m x n] = clamp(a[m x k] * W + bias) with W packed by wick_f32_gemm_pack,
 * on the calling thread (all tasks in order). */
WICK_KERNEL_API void wick_f32_gemm(const wick_f32_gemm_kernel *kern, size_t m, size_t n, size_t k,
                                   const float *a, size_t a_stride, const float *packed,
                                   float *c, size_t c_stride, float lo, float hi);

/* Pointers in the indirection buffer of a CONV_2D (groups == 1) with `mr`-row
 * tiles: ceil(batch*out_h*out_w / mr) * mr * k_h * k_w. false on overflow. */
WICK_KERNEL_API bool wick_f32_conv_indirection_size(const wick_conv_shape *s, size_t mr,
                                                    size_t *count_out);
/* Fills the indirection buffer for `input`; padding taps point at `zero`
 * (in_c zero floats). Slots past the last pixel repeat it. */
WICK_KERNEL_API void wick_f32_conv_indirection_init(const wick_conv_shape *s, size_t mr,
                                                    const float *input, const float *zero,
                                                    const float **ind);
/* CONV_2D (groups == 1) through the indirection buffer; W packed with
 * K = k_h * k_w * in_c. */
WICK_KERNEL_API void wick_f32_conv_igemm(const wick_f32_gemm_kernel *kern, const wick_conv_shape *s,
                                         const float *const *ind, const float *packed,
                                         float *output, float lo, float hi);

/* ---- microkernels, one set per ISA folder ---- */

WICK_KERNEL_API void wick_f32_gemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *w, float *c,
                                                        size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x32__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *w, float *c,
                                                        size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc,
                                                         size_t ks, const float *const *a,
                                                         const float *w, float *c,
                                                         size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_14x16__avx512(size_t mr, size_t nc, size_t kc,
                                                         const float *a, size_t a_stride,
                                                         const float *w, float *c,
                                                         size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x16__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *w, float *c,
                                                        size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_14x16__avx512(size_t mr, size_t nc, size_t kc,
                                                          size_t ks, const float *const *a,
                                                          const float *w, float *c,
                                                          size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_dwconv3x3_ukernel__avx512(const wick_conv_shape *s,
                                                        const float *input, const float *w,
                                                        float *output, float lo, float hi);

WICK_KERNEL_API void wick_f32_gemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc,
                                                      const float *a, size_t a_stride,
                                                      const float *w, float *c, size_t c_stride,
                                                      float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x16__avx2(size_t mr, size_t nc, size_t kc,
                                                      const float *a, size_t a_stride,
                                                      const float *w, float *c, size_t c_stride,
                                                      float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc, size_t ks,
                                                       const float *const *a, const float *w,
                                                       float *c, size_t c_stride, float lo,
                                                       float hi);
WICK_KERNEL_API void wick_f32_dwconv3x3_ukernel__avx2(const wick_conv_shape *s,
                                                      const float *input, const float *w,
                                                      float *output, float lo, float hi);

WICK_KERNEL_API void wick_f32_gemm_ukernel_8x8__neon(size_t mr, size_t nc, size_t kc,
                                                     const float *a, size_t a_stride,
                                                     const float *w, float *c, size_t c_stride,
                                                     float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x8__neon(size_t mr, size_t nc, size_t kc,
                                                     const float *a, size_t a_stride,
                                                     const float *w, float *c, size_t c_stride,
                                                     float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_8x8__neon(size_t mr, size_t nc, size_t kc, size_t ks,
                                                      const float *const *a, const float *w,
                                                      float *c, size_t c_stride, float lo,
                                                      float hi);
WICK_KERNEL_API void wick_f32_dwconv3x3_ukernel__neon(const wick_conv_shape *s,
                                                      const float *input, const float *w,
                                                      float *output, float lo, float hi);

#endif /* WICK_KERNELS_KERNELS_H */
