/*
 * hybrid.h — the GEMM form shared by the hybrid (dynamic-range) ops: float
 * rows quantized at run time as LiteRT does (symmetric, or asymmetric with a
 * zero point per row), their exact int32 dot products with constant int8
 * weights on the int8 GEMM microkernels (src/kernels/q8.h, raw output), and
 * an op-specific float rescale per block of sums, run by the thread that
 * computed the block. FULLY_CONNECTED and BATCH_MATMUL use it; the rescale
 * is the op's, because LiteRT's two ops subtract the zero point differently
 * (in int32 for FULLY_CONNECTED, in float for BATCH_MATMUL).
 */
#ifndef WICK_OPS_HYBRID_H
#define WICK_OPS_HYBRID_H

#include "kernels/kernels.h"
#include "kernels/q8.h"
#include "ops/op_common.h"
#include "ops/parallel.h"

typedef struct wick_hybrid_gemm {
  size_t m, n, k;
  const wick_q8_kernels *q8;
  const wick_f32_kernels *f32; /* the row quantization's vector kernels */
  const void *packed;          /* the weights, zero point 0 and no bias */
  uint32_t *weight_sums;       /* sum_k w[c][k] per output, wrapping (the zero point's term) */
  float *row_scales;           /* m */
  int32_t *row_offsets;        /* m: zero points (0 when symmetric) */
  /* scratch (the op's, shared with every other op: nothing lives across invokes): the m x k
   * quantized rows at 0, the rows prepared for the kernels at prepared_offset, the m x n
   * int32 sums at acc_offset */
  size_t prepared_offset, acc_offset;
  size_t scratch_bytes; /* all three */
  /* set by the op: its rows hold x + 128 (it wrote them so, where wick_hybrid_gemm_u8_rows
   * says the kernels take that form), and the run uses them without a preparation pass */
  bool rows_u8;
} wick_hybrid_gemm;

/* Whether the form's kernels take their rows as u8 x + 128 (VNNI; wick_q8_prepare_input's
 * sign flip for zero point 0). */
static inline bool wick_hybrid_gemm_u8_rows(const wick_hybrid_gemm *h) {
  return !h->q8->i16 && !h->q8->s8;
}

/* Prepares the form for m rows of k against n outputs whose constant int8 weights are w,
 * [n, k] row-major (FULLY_CONNECTED's layout) or, with w_kn, [k, n] (BATCH_MATMUL's rhs), in
 * packed slot `slot` of the node; requests its scratch. False (with nothing prepared) when
 * this CPU has no int8 GEMM kernels or the op runs the reference kernels: the op keeps its
 * other path. Fails only on memory. */
WICK_INTERNAL wick_status wick_hybrid_gemm_prepare(wick_op_ctx *ctx, wick_hybrid_gemm *h, size_t m,
                                                   size_t n, size_t k, const int8_t *w, bool w_kn,
                                                   uint32_t slot, bool *ready);

/* The m x k quantized rows in the op's scratch. */
static inline int8_t *wick_hybrid_gemm_rows(const wick_hybrid_gemm *h, void *scratch) {
  (void)h;
  return (int8_t *)scratch;
}

/* Quantizes row r (k floats) into the form's row r (in the op's scratch). */
WICK_INTERNAL void wick_hybrid_gemm_quantize(const wick_hybrid_gemm *h, void *scratch, size_t r,
                                             const float *row, bool asymmetric);

/* Quantizes n floats x as one asymmetric row (LiteRT's per-image quantization in the hybrid
 * CONV_2D) into q, with the range and the values split over the threads: bit-identical to
 * wick_hybrid_quantize_row(f32, n, x, q, true, offset) (serial when f32 is NULL). Returns the
 * scale in *scale. The range pass starts every part from 0, like the row's own start, so the
 * parts' minima and maxima combine to the row's exactly (a NaN never enters either). */
WICK_INTERNAL wick_status wick_hybrid_quantize_image(const wick_op_ctx *ctx,
                                                     const wick_f32_kernels *f32, size_t n,
                                                     const float *x, int8_t *q, float *scale,
                                                     int32_t *offset);

/* The int32 sums of every row against the weights, then finish(arg, m0, m1, n0, n1) per
 * block; the sums are at wick_hybrid_gemm_sums(h, scratch) (m x n). */
WICK_INTERNAL wick_status wick_hybrid_gemm_run(const wick_op_ctx *ctx, const wick_hybrid_gemm *h,
                                               wick_q8_raw_finish_fn finish, void *arg);
static inline const int32_t *wick_hybrid_gemm_sums(const wick_hybrid_gemm *h, const void *scratch) {
  return (const int32_t *)(const void *)((const uint8_t *)scratch + h->acc_offset);
}

#endif
