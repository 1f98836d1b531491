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
 * Depthwise packed weights, one block per CR channels (zero-padded), for a
 * kh x kw filter:
 *     [ bias[CR] ][ tap (0,0)[CR] ][ (0,1) ] ... [ (kh-1,kw-1)[CR] ]   (kh*kw+1)*CR floats
 *
 * Most kernels beyond the GEMM microkernels are written once in
 * template/dwconv.h and template/elementwise.h over a small vector vocabulary
 * (<isa>/simd.h) and compiled per ISA. Kernels that walk a tensor take a
 * [begin, end) range of rows or elements so a thread pool can split them.
 * NULL entries in a table mean the op runs its reference kernel.
 *
 * Next: select.c (which ISA), gemm_driver.c (tiling), elementwise_driver.c
 * (broadcast shapes), template/, avx512/, avx2/, neon/.
 */
#ifndef WICK_KERNELS_KERNELS_H
#define WICK_KERNELS_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/reference/movement.h"
#include "kernels/reference/reference.h"
#include "kernels/split.h"

#define WICK_KERNEL_API __attribute__((visibility("hidden")))

/* c[mr x nc] = clamp(bias + a[mr x kc] * w, lo, hi), nc any size (the kernel
 * walks NR-wide panels of `w`); mr <= MR. a rows are a_stride floats apart,
 * c rows c_stride floats apart. Unaligned pointers are fine. */
typedef void (*wick_f32_gemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, const float *a,
                                         size_t a_stride, const float *w, float *c, size_t c_stride,
                                         float lo, float hi);
/* c[mr x nc] = clamp(a[mr x kc] * b, lo, hi) with b [kc, nc] read where it lies (rows
 * b_stride floats apart, no packing, no bias): the same products, in the same order, as the
 * main GEMM tile's `gemm` / `gemm_1` on b packed with a zero bias (so the same bits); nc a
 * multiple of NR (whole panels only). The fused attention reads the key/value cache with it. */
typedef void (*wick_f32_gemm_inplace_fn)(size_t mr, size_t nc, size_t kc, const float *a,
                                         size_t a_stride, const float *b, size_t b_stride, float *c,
                                         size_t c_stride, float lo, float hi);
/* Same through an indirection tile: `a` holds ks * MR row pointers (tap-major),
 * each to kc floats; w panels hold ks * kc rows. */
typedef void (*wick_f32_igemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, size_t ks,
                                          const float *const *a, const float *w, float *c,
                                          size_t c_stride, float lo, float hi);
/* out[i] = f(in[i]) for i < n; in-place allowed. */
typedef void (*wick_f32_unary_fn)(size_t n, const float *in, float *out);
/* out[i] = clamp(a op b, lo, hi) for i < n, in one of three forms (a scalar
 * operand is read from its pointer); in-place allowed. */
typedef void (*wick_f32_binary_fn)(size_t n, const float *a, const float *b, float *out, float lo,
                                   float hi);

/* DEPTHWISE_CONV_2D with multiplier 1 over an NHWC tensor; `weights` packed
 * by wick_f32_dwconv_pack with the table's dw_cr. Output = clamp(conv, lo,
 * hi), then post (when not NULL) in place over each finished output row. */
typedef struct wick_f32_dwconv_args {
  const wick_conv_shape *shape;
  const float *input, *weights;
  float *output;
  float lo, hi;
  wick_f32_unary_fn post;
} wick_f32_dwconv_args;
/* Computes output rows [row_begin, row_end) of the batch * out_h rows. */
typedef void (*wick_f32_dwconv_fn)(const wick_f32_dwconv_args *a, size_t row_begin, size_t row_end);

/* Winograd F(4x4, 3x3) transforms (template/winograd.h) over tiles
 * [tile_begin, tile_end) of the batch x tiles_h x tiles_w grid of 4x4
 * output blocks: input windows -> V planes, GEMM results M -> clamped
 * output pixels. Plane xi (0..35) starts xi * plane floats in. */
typedef void (*wick_f32_winograd_input_fn)(const wick_conv_shape *s, size_t tiles_h, size_t tiles_w,
                                           const float *input, size_t tile_begin, size_t tile_end,
                                           float *v, size_t plane);
typedef void (*wick_f32_winograd_output_fn)(const wick_conv_shape *s, size_t tiles_h,
                                            size_t tiles_w, const float *m, size_t plane,
                                            const float *bias, size_t tile_begin, size_t tile_end,
                                            float *output, float lo, float hi);

/* The vectorized unary ops (wick_f32_kernels.unary); error bounds in
 * template/elementwise.h. */
typedef enum wick_f32_unary_kind {
  WICK_F32_RELU,
  WICK_F32_RELU6,
  WICK_F32_RELU_N1_TO_1,
  WICK_F32_RELU_0_TO_1,
  WICK_F32_LOGISTIC,
  WICK_F32_SILU, /* x * logistic(x) */
  WICK_F32_TANH,
  WICK_F32_EXP,
  WICK_F32_HARD_SWISH,
  WICK_F32_GELU,      /* erf form */
  WICK_F32_GELU_TANH, /* tanh approximation */
  WICK_F32_NEG,
  WICK_F32_ABS,
  WICK_F32_UNARY_COUNT
} wick_f32_unary_kind;

/* The vectorized binary ops and their operand forms. */
typedef enum wick_f32_binary_kind {
  WICK_F32_ADD,
  WICK_F32_SUB,
  WICK_F32_MUL,
  WICK_F32_DIV,
  WICK_F32_MAXIMUM,
  WICK_F32_MINIMUM,
  WICK_F32_SQUARED_DIFFERENCE,
  WICK_F32_BINARY_COUNT
} wick_f32_binary_kind;
enum { WICK_F32_VV, WICK_F32_VS, WICK_F32_SV };

/* MAX_POOL_2D / AVERAGE_POOL_2D over an NHWC tensor, the reference's
 * signature and results (bit-identical); ops split them by output rows. */
typedef void (*wick_f32_pool_fn)(const wick_pool_shape *s, const float *in, float *out, float lo,
                                 float hi);

/* Softmax of rows [row_begin, row_end), each `cols` floats. */
typedef void (*wick_f32_softmax_fn)(size_t cols, float beta, const float *in, float *out,
                                    size_t row_begin, size_t row_end);
/* out[o, i] = scale * sum_r in[o, r, i] over [outer, mid, inner], o in
 * [outer_begin, outer_end). */
typedef void (*wick_f32_sum_mid_fn)(size_t mid, size_t inner, float scale, const float *in,
                                    float *out, size_t outer_begin, size_t outer_end);

/* QUANTIZE float32 -> int8 (is_unsigned false) or uint8 of n elements with
 * one scale and zero point, bit-identical to wick_quantize__reference
 * (x / scale in float, round half away from zero, NaN -> 0, saturation);
 * only for |zero_point| <= WICK_QUANTIZE8_MAX_ZERO_POINT, where the float
 * sum r + zero_point is exact or saturates anyway (template/quantize.h). */
typedef void (*wick_f32_quantize8_fn)(size_t n, const float *in, void *out, float scale,
                                      int32_t zero_point, bool is_unsigned);
/* DEQUANTIZE int8 / uint8 -> float32 of n elements, bit-identical to
 * wick_dequantize__reference under the same zero point bound. */
typedef void (*wick_f32_dequantize8_fn)(size_t n, const void *in, float *out, float scale,
                                        int32_t zero_point, bool is_unsigned);
#define WICK_QUANTIZE8_MAX_ZERO_POINT 65536
/* The same two for int16 (bit-identical under the same zero point bound). */
typedef void (*wick_f32_quantize16_fn)(size_t n, const float *in, int16_t *out, float scale,
                                       int32_t zero_point);
typedef void (*wick_f32_dequantize16_fn)(size_t n, const int16_t *in, float *out, float scale,
                                         int32_t zero_point);
/* The hybrid ops' input rows (template/quantize.h): the range of a row from the starting
 * *lo / *hi, and its quantized values, bit-identical to reference/hybrid.c. */
typedef void (*wick_f32_row_range_fn)(size_t n, const float *in, float *lo, float *hi);
typedef void (*wick_f32_hybrid_quantize_fn)(size_t n, const float *in, int8_t *out, float inverse,
                                            float offset, float qmin);
/* Output rows [y0, y1) of one image of a hybrid DEPTHWISE_CONV_2D with multiplier 1 (int8
 * image with zero point input_offset and scale input_scale, int8 filter [kh * kw, c] with a
 * scale per channel), bit-identical to wick_hybrid_depthwise_rows (reference/hybrid.c, which
 * says what conv_rescale means); the sums live in registers, so no scratch. */
typedef void (*wick_hybrid_dwconv_fn)(const wick_conv_shape *s, const int8_t *input,
                                      int32_t input_offset, float input_scale, const int8_t *filter,
                                      const float *filter_scales, bool conv_rescale,
                                      const float *bias, float *output, float lo, float hi,
                                      int32_t y0, int32_t y1);
/* One row of a hybrid GEMM's float rescale: for c < n, dot = acc[c] - weight_sums[c] * offset
 * (wrapping in 32 bits; weight_sums NULL: no term), then
 *   conv_order (CONV_2D):        y = (float)dot * weight_scales[c] * row_scale, + bias[c];
 *   else (FULLY_CONNECTED, BMM): y = (bias ? bias[c] : 0.0f) + (float)dot * s, with
 *                                s = row_scale * weight_scales[c], or row_scale when
 *                                weight_scales is NULL (one scale, folded in by the caller);
 * out[c] = y < lo ? lo : (y > hi ? hi : y). Bit-identical to that scalar code. */
typedef void (*wick_hybrid_rescale_fn)(size_t n, const int32_t *acc, const uint32_t *weight_sums,
                                       uint32_t offset, const float *weight_scales, float row_scale,
                                       bool conv_order, const float *bias, float lo, float hi,
                                       float *out);

/* PRELU over n elements, one alpha each: out = x >= 0 ? x : x * alpha (in place allowed),
 * bit-identical to wick_f32_prelu_channels. */
typedef void (*wick_f32_prelu_fn)(size_t n, const float *x, const float *alpha, float *out);
/* out[i] = the float16 bits in[i] as float32 (n elements), bit-identical to wick_f16_to_f32
 * (reference/cast.c: exact, NaN payloads kept): float16 DEQUANTIZE, folded at prepare. */
typedef void (*wick_f16_to_f32_fn)(size_t n, const uint16_t *in, float *out);
/* RESIZE_BILINEAR (float32) output rows [row_begin, row_end) of the batch x out_h rows,
 * bit-identical to wick_f32_resize_bilinear_rows__reference (template/resize.h). */
typedef void (*wick_f32_resize_bilinear_fn)(const wick_resize_shape *s, const float *in, float *out,
                                            int64_t row_begin, int64_t row_end);

/* SELECT / SELECT_V2 on bytes (int8, uint8, bool), one run of n elements:
 * out[e] = cond[e] ? x[x_scalar ? 0 : e] : y[y_scalar ? 0 : e], a condition byte being true when
 * nonzero (a bytewise blend). */
typedef void (*wick_select8_fn)(size_t n, const bool *cond, const uint8_t *x, bool x_scalar,
                                const uint8_t *y, bool y_scalar, uint8_t *out);

/* Rows of the largest GEMM tile (MR) with row-tail kernels; tails are indexed by row count. */
#define WICK_GEMM_TAIL_ROWS 16

/* One GEMM tile shape: its microkernels share MR, NR and the packing. */
typedef struct wick_f32_gemm_kernel {
  size_t mr, nr;
  wick_f32_gemm_ukernel_fn gemm;   /* MR x NR */
  wick_f32_gemm_ukernel_fn gemm_1; /* 1 x NR: single rows (FULLY_CONNECTED, tails) */
  wick_f32_igemm_ukernel_fn igemm; /* MR x NR */
  /* Optional tiles of fewer rows for a row tile of 2 <= rows < MR (the last one of m):
   * tail_gemm[rows] / tail_igemm[rows], when not NULL, compute up to their own row count
   * (>= rows) without the FMAs of MR - rows repeated rows. Each row's sums are formed in the
   * same order as in gemm / igemm, so outputs are bit-identical to theirs; tail_igemm reads the
   * indirection of an MR-row tile (MR pointers per tap). */
  wick_f32_gemm_ukernel_fn tail_gemm[WICK_GEMM_TAIL_ROWS];
  wick_f32_igemm_ukernel_fn tail_igemm[WICK_GEMM_TAIL_ROWS];
} wick_f32_gemm_kernel;

typedef struct wick_f32_kernels {
  const char *isa;                  /* "avx512", "avx2", "neon" */
  wick_f32_gemm_kernel gemm;        /* the main tile */
  wick_f32_gemm_kernel gemm_narrow; /* for N <= its nr (fewer padding lanes); nr 0: none */
  size_t dw_cr;
  wick_f32_dwconv_fn dwconv3x3;              /* 3x3, dilation 1, strides 1-2 */
  wick_f32_dwconv_fn dwconv5x5;              /* 5x5, dilation 1, strides 1-2 */
  wick_f32_dwconv_fn dwconv;                 /* any size, stride, dilation */
  wick_f32_winograd_input_fn winograd_input; /* NULL: no Winograd convolution */
  wick_f32_winograd_output_fn winograd_output;
  wick_f32_unary_fn unary[WICK_F32_UNARY_COUNT];
  wick_f32_binary_fn binary[WICK_F32_BINARY_COUNT][3];
  wick_f32_softmax_fn softmax;
  wick_f32_sum_mid_fn sum_mid;
  wick_f32_pool_fn max_pool, average_pool;
  wick_f32_quantize8_fn quantize8;
  wick_f32_dequantize8_fn dequantize8;
  wick_f32_quantize16_fn quantize16;
  wick_f32_dequantize16_fn dequantize16;
  wick_f32_row_range_fn row_range;
  wick_f32_hybrid_quantize_fn hybrid_quantize;
  wick_hybrid_dwconv_fn hybrid_dwconv;         /* NULL: the portable rows */
  wick_hybrid_rescale_fn hybrid_rescale;       /* NULL: the ops' scalar loops */
  wick_f32_resize_bilinear_fn resize_bilinear; /* NULL: the reference rows */
  wick_f32_prelu_fn prelu;                     /* NULL: wick_f32_prelu_channels */
  wick_f16_to_f32_fn f16_to_f32;               /* NULL: wick_f16_to_f32 per element */
  /* `gemm`'s MR x NR and 1 x NR tiles on an unpacked b (wick_f32_gemm_inplace_fn); NULL:
   * none (callers pack) */
  wick_f32_gemm_inplace_fn gemm_inplace, gemm_inplace_1;
  wick_select8_fn select8; /* NULL: the portable rows */
} wick_f32_kernels;

/* The best kernels for this CPU, or NULL when the reference kernels must run
 * (forced, or no supported ISA). The table is static and immutable. */
WICK_KERNEL_API const wick_f32_kernels *wick_f32_kernels_select(bool force_reference);
/* The kernels of one ISA ("avx512", "avx2", "neon") if the host can run them, else
 * NULL (tests and benchmarks). */
WICK_KERNEL_API const wick_f32_kernels *wick_f32_kernels_for_isa(const char *isa);
/* The inventory of kernel tables compiled for this architecture, best first: entry i of
 * wick_f32_kernels_count() (NULL past the end); *runnable (may be NULL) tells whether this CPU
 * (within WICK_MAX_ISA) can run it. Selection, the kernel tests and bench_kernels walk it. */
WICK_KERNEL_API size_t wick_f32_kernels_count(void);
WICK_KERNEL_API const wick_f32_kernels *wick_f32_kernels_at(size_t i, bool *runnable);
/* The GEMM tile to use for n output columns (the narrow one when it fits). */
WICK_KERNEL_API const wick_f32_gemm_kernel *wick_f32_gemm_kernel_for(const wick_f32_kernels *k,
                                                                     size_t n);

/* ---- hybrid ops (hybrid_driver.c) ---- */

/* Quantizes one float row of k values to int8 as LiteRT's hybrid kernels do (symmetric, or
 * asymmetric with *offset its zero point; 0 when symmetric) and returns its scale; f32 NULL:
 * the reference kernels. Bit-identical either way. */
WICK_KERNEL_API float wick_hybrid_quantize_row(const wick_f32_kernels *f32, size_t k,
                                               const float *x, int8_t *q, bool asymmetric,
                                               int32_t *offset);

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
/* Packs, with zero bias, the n rows of a matrix whose row g * group_rows + j
 * (j < group_rows) starts at w + j * row_stride + g * group_stride: for
 * TRANSPOSE_CONV, the OHWI filter as rows (tap, output channel). */
WICK_KERNEL_API void wick_f32_gemm_pack_grouped(size_t n, size_t k, size_t nr, const float *w,
                                                size_t group_rows, size_t row_stride,
                                                size_t group_stride, float *packed);
/* Packs the right operand of a matmul, w [k, n] row-major (any alignment),
 * with zero bias: the same layout as wick_f32_gemm_pack of its transpose. */
WICK_KERNEL_API void wick_f32_gemm_pack_kn(size_t n, size_t k, size_t nr, const float *w,
                                           float *packed);
/* The same for the first n columns of a matrix whose k rows are row_stride floats apart. */
WICK_KERNEL_API void wick_f32_gemm_pack_kn_strided(size_t n, size_t k, size_t nr, const float *w,
                                                   size_t row_stride, float *packed);
/* Packs a depthwise filter [1, kh, kw, c] (taps = kh * kw) and bias [c]
 * (NULL: zeros) into ceil(c/cr) blocks of (taps + 1) * cr floats. */
WICK_KERNEL_API void wick_f32_dwconv_pack(size_t c, size_t cr, size_t taps, const float *w,
                                          const float *bias, float *packed);

/* ---- TRANSPOSE_CONV in GEMM form (transpose_conv.c, portable) ---- */

/* Output rows [y0, y1) of one image (`output` points at row y0) from `cols`:
 * the GEMM of the image's input rows from col_row0 on with the filter packed
 * as (tap, output channel) rows (wick_f32_gemm_pack_grouped), one row of
 * k_h * k_w * out_c floats per input pixel. Sums the taps reaching each
 * output pixel, adds `bias` (NULL: none) and clamps to [lo, hi]. */
WICK_KERNEL_API void wick_f32_tconv_gather(const wick_conv_shape *s, const float *cols,
                                           int32_t col_row0, const float *bias, int32_t y0,
                                           int32_t y1, float *output, float lo, float hi);
/* Input rows [*first, *last] of one image that output rows [y0, y1) read
 * (*first > *last: none). */
WICK_KERNEL_API void wick_tconv_input_rows(const wick_conv_shape *s, int32_t y0, int32_t y1,
                                           int32_t *first, int32_t *last);

/* ---- transposes (transpose.c, portable) ---- */

/* True when the (simplified) plan's two innermost dimensions swap: source
 * contiguous along the second-to-last, destination along the last. */
WICK_KERNEL_API bool wick_strided_copy_is_transpose(const wick_copy_plan *p);
/* wick_strided_copy__reference for such plans, in blocked 2-D tiles. */
WICK_KERNEL_API void wick_strided_copy_transpose(size_t esize, const wick_copy_plan *p,
                                                 const void *src, void *dst);

/* ---- elementwise drivers (elementwise_driver.c) ---- */

/* A broadcast collapsed to three loops [d0, d1, d2]: the innermost runs one
 * kernel call of the given form; the outer two advance each operand by its
 * strides (elements; 0 = broadcast). */
typedef struct wick_f32_binary_plan {
  size_t dims[3], a_strides[3], b_strides[3];
  int form; /* WICK_F32_VV, _VS, _SV */
} wick_f32_binary_plan;
/* false when the broadcast needs more than three loops (use the reference). */
WICK_KERNEL_API bool wick_f32_binary_plan_make(const wick_broadcast *bc,
                                               wick_f32_binary_plan *plan);
/* out = clamp(a op b) over the plan, with the op's three forms. */
WICK_KERNEL_API void wick_f32_binary_run(const wick_f32_binary_fn forms[3],
                                         const wick_f32_binary_plan *plan, const float *a,
                                         const float *b, float *out, float lo, float hi);
/* A reduction as [outer, mid, inner] with `mid` reduced; false when the
 * reduced axes (ignoring size-1 axes) are not one contiguous run. */
WICK_KERNEL_API bool wick_f32_reduce_plan_make(int32_t rank, const int32_t *dims,
                                               const bool *reduced, size_t *outer, size_t *mid,
                                               size_t *inner);

/* ---- comparisons, boolean reductions, select (logical.c, portable) ---- */

/* out = a op b (float comparisons) over a binary plan; false for logical ops. */
WICK_KERNEL_API bool wick_f32_compare_plan(wick_compare_op op, const wick_f32_binary_plan *p,
                                           const float *a, const float *b, bool *out);
/* REDUCE_ANY (is_any) / REDUCE_ALL of the middle axis of [outer, mid, inner] bools. */
WICK_KERNEL_API void wick_bool_reduce_mid(bool is_any, size_t outer, size_t mid, size_t inner,
                                          const bool *in, bool *out);
/* wick_select__reference walking rows (a per-row condition copies whole rows); byte elements
 * with a condition per element and unit-stride or scalar x and y run on select8 when it is not
 * NULL. */
WICK_KERNEL_API void wick_select_rows(size_t esize, const wick_select_shape *s, const bool *cond,
                                      const void *x, const void *y, void *out,
                                      wick_select8_fn select8);
/* The portable form of the select8 kernels (logical.c). */
WICK_KERNEL_API void wick_select8(size_t n, const bool *cond, const uint8_t *x, bool x_scalar,
                                  const uint8_t *y, bool y_scalar, uint8_t *out);

/* ---- drivers (gemm_driver.c) ---- */

/* What runs on each finished output tile after the clamp (graph-level
 * fusion, src/core/fuse.c): act in place, then + residual (laid out like the
 * output, same row stride) clamped to [lo, hi], then PRELU with alpha[c] for
 * an element of channel c (its index in the output modulo channels). NULL
 * members: skipped. */
typedef struct wick_f32_epilogue {
  wick_f32_unary_fn act;
  const float *residual;
  wick_f32_binary_fn add; /* the VV add kernel, when residual is set */
  float lo, hi;
  const float *alpha; /* PRELU's, `channels` values */
  size_t channels;
  wick_f32_prelu_fn prelu; /* its vector kernel (NULL: portable code) */
} wick_f32_epilogue;
/* Runs `ep` on rows x cols at c (row stride `stride`); the residual is read
 * at the same position relative to its base as c is to the output's
 * (`offset` elements from the output's start). */
WICK_KERNEL_API void wick_f32_epilogue_run(const wick_f32_epilogue *ep, size_t rows, size_t cols,
                                           float *c, size_t stride, size_t offset);

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
  const wick_f32_epilogue *ep; /* NULL (init's default), or run on each tile after the clamp */
  size_t nb, col_blocks, tiles, row_tasks; /* the split (split.h deals the tiles) */
} wick_f32_gemm_tasks;

/* Sets up c[m x n] = clamp(a[m x k] * W + bias) as tasks of at least `grain`
 * multiply-accumulates each (UINT64_MAX: one task per column block); returns
 * the task count (0 when m or n is 0). The split depends only on the shape. */
WICK_KERNEL_API size_t wick_f32_gemm_tasks_init(wick_f32_gemm_tasks *t,
                                                const wick_f32_gemm_kernel *kern, size_t m,
                                                size_t n, size_t k, const float *a, size_t a_stride,
                                                const float *packed, float *c, size_t c_stride,
                                                float lo, float hi, uint64_t grain);
/* The same for CONV_2D (groups == 1) through an indirection buffer. */
WICK_KERNEL_API size_t wick_f32_conv_igemm_tasks_init(wick_f32_gemm_tasks *t,
                                                      const wick_f32_gemm_kernel *kern,
                                                      const wick_conv_shape *s,
                                                      const float *const *ind, const float *packed,
                                                      float *output, float lo, float hi,
                                                      uint64_t grain);
/* Runs task `task` (< the count init returned). */
WICK_KERNEL_API void wick_f32_gemm_run_task(const wick_f32_gemm_tasks *t, size_t task);

/* c[m x n] = clamp(a[m x k] * W + bias) with W packed by wick_f32_gemm_pack,
 * on the calling thread (all tasks in order). */
WICK_KERNEL_API void wick_f32_gemm(const wick_f32_gemm_kernel *kern, size_t m, size_t n, size_t k,
                                   const float *a, size_t a_stride, const float *packed, float *c,
                                   size_t c_stride, float lo, float hi);

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

/* ---- fused attention over a key/value cache (attention.c) ---- */

/* One scaled dot-product attention, softmax(f(q kt) + mask) v, per batch b < batches:
 * q [m, d], kt [d, s] (the keys transposed), v [s, dv], run by src/ops/attention.c (the
 * pattern: src/core/fuse.c) over the first e key positions of each tile of `rows` query rows,
 * e covering every position the mask leaves visible to them. The products are the GEMM
 * microkernels' that the two BATCH_MATMULs run on their own (`scores` = the kernel for s
 * columns, `values` = the one for dv), so the visible positions get the same bits. Scratch
 * (`bytes`, 64-byte aligned parts): per batch the extent of each tile then the largest
 * (size_t), per batch the packed keys (s columns of d) and values (s rows of dv), and per
 * thread one tile of scores (rows x s floats). Each tile also starts at the first position
 * any of its rows sees (rounded down to the alignment; per batch the smallest when packed):
 * a sliding-window layer computes its window, not the positions before it. With
 * k->gemm_inplace (AVX2, AVX-512, NEON) and whole panels (dv and s multiples of NR, both using the
 * main tile), nothing is packed: the kernels read the keys and values where they lie. */
typedef struct wick_f32_attention {
  const wick_f32_kernels *k;
  const wick_f32_gemm_kernel *scores, *values;
  size_t batches, m, d, s, dv;
  size_t rows;                       /* query rows per tile: scores->mr */
  size_t tiles;                      /* per batch: ceil(m / rows) */
  size_t align;                      /* extents are multiples of it (or s): see attention.c */
  bool inplace;                      /* the cache read where it lies (k->gemm_inplace): no
                                      * packing, no keys / values scratch */
  size_t keys_floats, values_floats; /* packed, per batch (0 in place) */
  size_t extents_at, keys_at, values_at, scores_at, bytes;
} wick_f32_attention;
/* Fills `a` for `threads` threads; false when a size overflows. */
WICK_KERNEL_API bool wick_f32_attention_init(wick_f32_attention *a, const wick_f32_kernels *k,
                                             size_t batches, size_t m, size_t d, size_t s,
                                             size_t dv, size_t threads);
/* The columns [0, e) of a mask row of s values that hold every position it leaves visible
 * (the return value: e - 1 is the last column not masked, a value above -FLT_MAX or NaN) and
 * in *start the first such column (the positions before it can be skipped: a sliding
 * window's), reading each value once. e = s and start = 0 when the row cannot be cut: no column
 * visible, or a visible value below -2^126 (see attention.c). */
WICK_KERNEL_API size_t wick_f32_attention_row_span(const float *mask, size_t s, size_t *start);
/* An extent rounded up to a multiple of a->align, at most s. */
WICK_KERNEL_API size_t wick_f32_attention_round(const wick_f32_attention *a, size_t e);
/* Packs batch b's key columns and value rows [start, e) (kt: d rows of s, v: s rows of dv)
 * into `keys` and `values` (the scratch parts of batch b). */
WICK_KERNEL_API void wick_f32_attention_pack(const wick_f32_attention *a, const float *kt,
                                             const float *v, size_t start, size_t e, float *keys,
                                             float *values);

/* ---- Winograd F(4x4, 3x3) convolution (winograd.c) ---- */

/* True when CONV_2D `s` can run as Winograd F(4x4, 3x3) on `k`: a 3x3 filter,
 * stride 1, dilation 1, groups 1, and k has the transforms. Whether it is
 * faster than the indirect GEMM is the op's choice (conv_2d.c). */
WICK_KERNEL_API bool wick_f32_winograd_supported(const wick_f32_kernels *k,
                                                 const wick_conv_shape *s);
/* Floats of the packed transformed filter (layout in winograd.c) for GEMM
 * panels `nr` wide; false on overflow. */
WICK_KERNEL_API bool wick_f32_winograd_packed_size(const wick_conv_shape *s, size_t nr,
                                                   size_t *floats_out);
/* Transforms an OHWI 3x3 filter (in double precision, rounded once) and
 * packs it with the bias (NULL: zeros). */
WICK_KERNEL_API void wick_f32_winograd_pack(const wick_conv_shape *s, size_t nr,
                                            const float *filter, const float *bias, float *packed);

/* A Winograd convolution cut into tasks of `block` consecutive tiles (the
 * last one shorter); each task transforms its tiles' inputs into the
 * running thread's scratch, runs 36 GEMMs [tiles x in_c] x [in_c x out_c]
 * and transforms the results into the output, then runs `ep` on them. The
 * split depends on the shape only: results are bit-identical for any
 * thread count. */
typedef struct wick_f32_winograd_tasks {
  const wick_f32_kernels *kern;
  const wick_f32_gemm_kernel *gemm;
  const wick_conv_shape *s;
  size_t tiles_h, tiles_w, tiles, block, tasks;
  const float *input, *packed;
  float *output;
  float lo, hi;
  const wick_f32_epilogue *ep; /* NULL, or run on each finished tile */
  float *scratch;              /* scratch_floats per thread */
  size_t scratch_floats;
} wick_f32_winograd_tasks;

/* Fills the split of `s` over `gemm` (everything but the pointers); false
 * when the scratch size overflows. */
WICK_KERNEL_API bool wick_f32_winograd_plan(wick_f32_winograd_tasks *t,
                                            const wick_f32_kernels *kern,
                                            const wick_f32_gemm_kernel *gemm,
                                            const wick_conv_shape *s);
/* Task `task` on thread `thread` (its scratch). */
WICK_KERNEL_API void wick_f32_winograd_run_task(const wick_f32_winograd_tasks *t, size_t task,
                                                size_t thread);

/* ---- microkernels, one set per ISA folder ---- */

WICK_KERNEL_API void wick_f32_gemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *w, float *c, size_t c_stride,
                                                        float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x32__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *w, float *c, size_t c_stride,
                                                        float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_inplace_7x32__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *b, size_t b_stride, float *c,
                                                        size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_inplace_1x32__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *b, size_t b_stride, float *c,
                                                        size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_7x32__avx512(size_t mr, size_t nc, size_t kc, size_t ks,
                                                         const float *const *a, const float *w,
                                                         float *c, size_t c_stride, float lo,
                                                         float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_14x16__avx512(size_t mr, size_t nc, size_t kc,
                                                         const float *a, size_t a_stride,
                                                         const float *w, float *c, size_t c_stride,
                                                         float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x16__avx512(size_t mr, size_t nc, size_t kc,
                                                        const float *a, size_t a_stride,
                                                        const float *w, float *c, size_t c_stride,
                                                        float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_14x16__avx512(size_t mr, size_t nc, size_t kc,
                                                          size_t ks, const float *const *a,
                                                          const float *w, float *c, size_t c_stride,
                                                          float lo, float hi);
/* The row tails of the 7x32 and 14x16 tiles (wick_f32_gemm_kernel.tail_gemm): R x 32 and
 * R x 16 tiles; the igemm ones read an indirection of 7 (s7) or 14 (s14) pointers per tap. */
#define WICK_AVX512_GEMM_TAIL(R, NR, S)                                                            \
  WICK_KERNEL_API void wick_f32_gemm_ukernel_##R##x##NR##__avx512(size_t mr, size_t nc, size_t kc, \
                                                                  const float *a, size_t a_stride, \
                                                                  const float *w, float *c,        \
                                                                  size_t c_stride, float lo,       \
                                                                  float hi);                       \
  WICK_KERNEL_API void wick_f32_igemm_ukernel_##R##x##NR##s##S##__avx512(                          \
      size_t mr, size_t nc, size_t kc, size_t ks, const float *const *a, const float *w, float *c, \
      size_t c_stride, float lo, float hi);
WICK_AVX512_GEMM_TAIL(2, 32, 7)
WICK_AVX512_GEMM_TAIL(3, 32, 7)
WICK_AVX512_GEMM_TAIL(4, 32, 7)
WICK_AVX512_GEMM_TAIL(5, 32, 7)
WICK_AVX512_GEMM_TAIL(6, 32, 7)
WICK_AVX512_GEMM_TAIL(2, 16, 14)
WICK_AVX512_GEMM_TAIL(4, 16, 14)
WICK_AVX512_GEMM_TAIL(7, 16, 14)
WICK_AVX512_GEMM_TAIL(10, 16, 14)
#undef WICK_AVX512_GEMM_TAIL

WICK_KERNEL_API void wick_f32_gemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc,
                                                      const float *a, size_t a_stride,
                                                      const float *w, float *c, size_t c_stride,
                                                      float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x16__avx2(size_t mr, size_t nc, size_t kc,
                                                      const float *a, size_t a_stride,
                                                      const float *w, float *c, size_t c_stride,
                                                      float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_inplace_6x16__avx2(size_t mr, size_t nc, size_t kc,
                                                      const float *a, size_t a_stride,
                                                      const float *b, size_t b_stride, float *c,
                                                      size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_inplace_1x16__avx2(size_t mr, size_t nc, size_t kc,
                                                      const float *a, size_t a_stride,
                                                      const float *b, size_t b_stride, float *c,
                                                      size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_6x16__avx2(size_t mr, size_t nc, size_t kc, size_t ks,
                                                       const float *const *a, const float *w,
                                                       float *c, size_t c_stride, float lo,
                                                       float hi);

/* The template kernels (template/dwconv.h, template/elementwise.h), per ISA. */
#define WICK_DECLARE_TEMPLATE_KERNELS(ISA)                                                        \
  WICK_KERNEL_API void wick_f32_dwconv3x3_ukernel__##ISA(const wick_f32_dwconv_args *, size_t,    \
                                                         size_t);                                 \
  WICK_KERNEL_API void wick_f32_dwconv5x5_ukernel__##ISA(const wick_f32_dwconv_args *, size_t,    \
                                                         size_t);                                 \
  WICK_KERNEL_API void wick_f32_dwconv_ukernel__##ISA(const wick_f32_dwconv_args *, size_t,       \
                                                      size_t);                                    \
  WICK_KERNEL_API void wick_f32_winograd_input__##ISA(const wick_conv_shape *, size_t, size_t,    \
                                                      const float *, size_t, size_t, float *,     \
                                                      size_t);                                    \
  WICK_KERNEL_API void wick_f32_winograd_output__##ISA(const wick_conv_shape *, size_t, size_t,   \
                                                       const float *, size_t, const float *,      \
                                                       size_t, size_t, float *, float, float);    \
  WICK_KERNEL_API void wick_f32_relu__##ISA(size_t, const float *, float *);                      \
  WICK_KERNEL_API void wick_f32_relu6__##ISA(size_t, const float *, float *);                     \
  WICK_KERNEL_API void wick_f32_relu_n1_to_1__##ISA(size_t, const float *, float *);              \
  WICK_KERNEL_API void wick_f32_relu_0_to_1__##ISA(size_t, const float *, float *);               \
  WICK_KERNEL_API void wick_f32_logistic__##ISA(size_t, const float *, float *);                  \
  WICK_KERNEL_API void wick_f32_silu__##ISA(size_t, const float *, float *);                      \
  WICK_KERNEL_API void wick_f32_tanh__##ISA(size_t, const float *, float *);                      \
  WICK_KERNEL_API void wick_f32_exp__##ISA(size_t, const float *, float *);                       \
  WICK_KERNEL_API void wick_f32_hard_swish__##ISA(size_t, const float *, float *);                \
  WICK_KERNEL_API void wick_f32_gelu__##ISA(size_t, const float *, float *);                      \
  WICK_KERNEL_API void wick_f32_gelu_tanh__##ISA(size_t, const float *, float *);                 \
  WICK_KERNEL_API void wick_f32_neg__##ISA(size_t, const float *, float *);                       \
  WICK_KERNEL_API void wick_f32_abs__##ISA(size_t, const float *, float *);                       \
  WICK_DECLARE_BINARY(add, ISA)                                                                   \
  WICK_DECLARE_BINARY(sub, ISA)                                                                   \
  WICK_DECLARE_BINARY(mul, ISA)                                                                   \
  WICK_DECLARE_BINARY(div, ISA)                                                                   \
  WICK_DECLARE_BINARY(maximum, ISA)                                                               \
  WICK_DECLARE_BINARY(minimum, ISA)                                                               \
  WICK_DECLARE_BINARY(sqdiff, ISA)                                                                \
  WICK_KERNEL_API void wick_f32_softmax__##ISA(size_t, float, const float *, float *, size_t,     \
                                               size_t);                                           \
  WICK_KERNEL_API void wick_f32_sum_mid__##ISA(size_t, size_t, float, const float *, float *,     \
                                               size_t, size_t);                                   \
  WICK_KERNEL_API void wick_f32_max_pool__##ISA(const wick_pool_shape *, const float *, float *,  \
                                                float, float);                                    \
  WICK_KERNEL_API void wick_f32_average_pool__##ISA(const wick_pool_shape *, const float *,       \
                                                    float *, float, float);                       \
  WICK_KERNEL_API void wick_f32_quantize8__##ISA(size_t, const float *, void *, float, int32_t,   \
                                                 bool);                                           \
  WICK_KERNEL_API void wick_f32_dequantize8__##ISA(size_t, const void *, float *, float, int32_t, \
                                                   bool);                                         \
  WICK_KERNEL_API void wick_f32_quantize16__##ISA(size_t, const float *, int16_t *, float,        \
                                                  int32_t);                                       \
  WICK_KERNEL_API void wick_f32_dequantize16__##ISA(size_t, const int16_t *, float *, float,      \
                                                    int32_t);                                     \
  WICK_KERNEL_API void wick_f32_row_range__##ISA(size_t, const float *, float *, float *);        \
  WICK_KERNEL_API void wick_f32_hybrid_quantize__##ISA(size_t, const float *, int8_t *, float,    \
                                                       float, float);                             \
  WICK_KERNEL_API void wick_f32_prelu__##ISA(size_t, const float *, const float *, float *);      \
  WICK_KERNEL_API void wick_f32_resize_bilinear__##ISA(const wick_resize_shape *, const float *,  \
                                                       float *, int64_t, int64_t);
#define WICK_DECLARE_BINARY(OP, ISA)                                                            \
  WICK_KERNEL_API void wick_f32_##OP##_vv__##ISA(size_t, const float *, const float *, float *, \
                                                 float, float);                                 \
  WICK_KERNEL_API void wick_f32_##OP##_vs__##ISA(size_t, const float *, const float *, float *, \
                                                 float, float);                                 \
  WICK_KERNEL_API void wick_f32_##OP##_sv__##ISA(size_t, const float *, const float *, float *, \
                                                 float, float);

WICK_DECLARE_TEMPLATE_KERNELS(avx512)
WICK_DECLARE_TEMPLATE_KERNELS(avx2)
/* avx2/select.c (the AVX-512 table uses it too) */
WICK_KERNEL_API void wick_select8__avx2(size_t n, const bool *cond, const uint8_t *x, bool x_scalar,
                                        const uint8_t *y, bool y_scalar, uint8_t *out);
/* avx2/convert.c (the AVX-512 table uses it too) */
WICK_KERNEL_API void wick_f16_to_f32__avx2(size_t n, const uint16_t *in, float *out);

/* avx2/hybrid.c (the AVX-512 table uses them too) */
WICK_KERNEL_API void wick_hybrid_dwconv__avx2(const wick_conv_shape *s, const int8_t *input,
                                              int32_t input_offset, float input_scale,
                                              const int8_t *filter, const float *filter_scales,
                                              bool conv_rescale, const float *bias, float *output,
                                              float lo, float hi, int32_t y0, int32_t y1);
WICK_KERNEL_API void wick_hybrid_rescale__avx2(size_t n, const int32_t *acc,
                                               const uint32_t *weight_sums, uint32_t offset,
                                               const float *weight_scales, float row_scale,
                                               bool conv_order, const float *bias, float lo,
                                               float hi, float *out);

WICK_KERNEL_API void wick_f32_gemm_ukernel_8x8__neon(size_t mr, size_t nc, size_t kc,
                                                     const float *a, size_t a_stride,
                                                     const float *w, float *c, size_t c_stride,
                                                     float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_ukernel_1x8__neon(size_t mr, size_t nc, size_t kc,
                                                     const float *a, size_t a_stride,
                                                     const float *w, float *c, size_t c_stride,
                                                     float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_inplace_8x8__neon(size_t mr, size_t nc, size_t kc,
                                                     const float *a, size_t a_stride,
                                                     const float *b, size_t b_stride, float *c,
                                                     size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_gemm_inplace_1x8__neon(size_t mr, size_t nc, size_t kc,
                                                     const float *a, size_t a_stride,
                                                     const float *b, size_t b_stride, float *c,
                                                     size_t c_stride, float lo, float hi);
WICK_KERNEL_API void wick_f32_igemm_ukernel_8x8__neon(size_t mr, size_t nc, size_t kc, size_t ks,
                                                      const float *const *a, const float *w,
                                                      float *c, size_t c_stride, float lo,
                                                      float hi);
/* neon/dwconv.c, neon/winograd.c, neon/quantize.c, neon/elementwise.c (4-float vectors) */
WICK_DECLARE_TEMPLATE_KERNELS(neon)
/* neon/select.c */
WICK_KERNEL_API void wick_select8__neon(size_t n, const bool *cond, const uint8_t *x, bool x_scalar,
                                        const uint8_t *y, bool y_scalar, uint8_t *out);
/* neon/hybrid.c */
WICK_KERNEL_API void wick_hybrid_dwconv__neon(const wick_conv_shape *s, const int8_t *input,
                                              int32_t input_offset, float input_scale,
                                              const int8_t *filter, const float *filter_scales,
                                              bool conv_rescale, const float *bias, float *output,
                                              float lo, float hi, int32_t y0, int32_t y1);
WICK_KERNEL_API void wick_hybrid_rescale__neon(size_t n, const int32_t *acc,
                                               const uint32_t *weight_sums, uint32_t offset,
                                               const float *weight_scales, float row_scale,
                                               bool conv_order, const float *bias, float lo,
                                               float hi, float *out);

#endif /* WICK_KERNELS_KERNELS_H */
