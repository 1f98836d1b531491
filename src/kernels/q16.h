/*
 * q16.h — kernels for int16 activations with int8 weights (TFLite's 16x8
 * scheme), in exact integer arithmetic: bit-exact with the reference kernels
 * of src/kernels/reference/quantized.c.
 *
 * Portable: wick_q16_fully_connected_rows, on the weights widened to int16
 * (written so that the compiler vectorizes its 16-bit multiply-adds).
 * Per ISA (the fc16 entry of the int8 kernel tables, q8.h): a GEMM
 * microkernel on packed weights, q16_fc_pack's layout, one panel per
 * WICK_Q16_NR output channels (zero-padded past n), k rounded up to 2:
 *
 *   panel j: [ pair 0: NR x 2 int16 ][ pair 1 ] ... [ pair ceil(k/2)-1 ]
 *   pair g:  channel c's w[c][2g], w[c][2g+1] together (a zero past k)
 *
 * which is the int32 lane layout VPMADDWD and VPDPWSSD want (NEON's SMLAL keeps the two
 * products in neighbouring lanes and adds them at the end): one multiply-add adds two
 * exact products (|x w| <= 2^22) into a lane, so a lane holds the exact sum
 * of WICK_Q16_BLOCK_PAIRS pairs (< 2^31) before it must be widened to 64
 * bits. With a 64-bit accumulator (an int64 bias, or none) the kernels sum
 * such blocks in int64, exactly the reference's total; with an int32 bias
 * they keep wrapping int32 lanes, as the reference's int32 accumulator does.
 */
#ifndef WICK_KERNELS_Q16_H
#define WICK_KERNELS_Q16_H

#include "kernels/reference/reference.h"

#define WICK_Q16_API __attribute__((visibility("hidden")))

/* Output channels per packed panel; rows per tile of the kernels (the unit of a thread split). */
#define WICK_Q16_NR 16
#define WICK_Q16_MR 4
/* Pairs of products one int32 lane sums exactly: 255 * 2 * 2^22 < 2^31. */
#define WICK_Q16_BLOCK_PAIRS 255

/* The exact sum of x[i] * w[i] for i < k, |x[i] w[i]| <= 2^22 (int16 by int8-range values): partial
 * sums of 256 products are exact in 32 bits and add up in 64. A loop the compiler vectorizes. */
static inline int64_t wick_q16_dot_exact(const int16_t *x, const int16_t *w, int64_t k) {
  int64_t total = 0;
  for (int64_t b = 0; b < k; b += 256) {
    const int64_t e = k - b < 256 ? k : b + 256;
    int32_t part = 0;
    for (int64_t i = b; i < e; i++) part += (int32_t)x[i] * (int32_t)w[i];
    total += part;
  }
  return total;
}

/* Rows [r0, r1) of a 16x8 FULLY_CONNECTED: out[r][c] as wick_q_fully_connected__reference with
 * input and filter offsets 0, the int8 weights widened to int16 (w16 [n, k]). Partial sums of
 * 256 products (|x w| <= 2^22) are exact in 32 bits and add up in 64; without acc64 the
 * total wraps to 32 bits as the reference's (and LiteRT's) int32 accumulator does. */
WICK_Q16_API void wick_q16_fully_connected_rows(int64_t r0, int64_t r1, int64_t n, int64_t k,
                                                const wick_qfc_params *p, const int16_t *input,
                                                const int16_t *w16, const void *bias, bool acc64,
                                                int16_t *output);

/* The exact sum of x[i] * w[i] for i < k, int16 by int16 (the int16 x int16 BATCH_MATMUL's
 * int64 accumulator): the dot16 entry of the int8 kernel tables (q8.h). */
typedef int64_t (*wick_q16_dot_fn)(size_t k, const int16_t *x, const int16_t *w);
WICK_Q16_API int64_t wick_q16_dot__avx2(size_t k, const int16_t *x, const int16_t *w);
WICK_Q16_API int64_t wick_q16_dot__avx512vnni(size_t k, const int16_t *x, const int16_t *w);

/* Quantized BATCH_MATMUL rows (q16_bmm.c): output rows [row_begin, row_end) of the batches * m
 * rows as wick_q_batch_matmul_rows__reference for an int16 lhs with an int8 or int16 rhs (zero
 * points 0), or int8 x int8 (any zero points), using `work` (wick_q16_batch_matmul_work bytes,
 * per thread); int16 x int16 sums on `dot16` when not NULL (else a portable loop), reading
 * operands in place when their k elements are contiguous. */
WICK_Q16_API size_t wick_q16_batch_matmul_work(const wick_batch_matmul_shape *s);
WICK_Q16_API void wick_q16_batch_matmul_rows(wick_dtype lhs_type, wick_dtype rhs_type,
                                             const wick_batch_matmul_shape *s,
                                             const wick_qbmm_params *p, const void *lhs,
                                             const void *rhs, void *out, int64_t row_begin,
                                             int64_t row_end, void *work, wick_q16_dot_fn dot16);

/* The output stage of a packed 16x8 FULLY_CONNECTED: per column (n rounded up to WICK_Q16_NR
 * readable entries, zeros past n) the bias and FULLY_CONNECTED's double scale; then the zero
 * point and the clamp, as the reference. */
typedef struct wick_q16_fc_args {
  bool acc64;            /* 64-bit sums (int64 bias or none); else wrapping int32 */
  const int64_t *bias64; /* acc64: the bias (zeros without one) */
  const int32_t *bias32; /* !acc64: the bias (zeros without one) */
  const double *scale;
  int32_t zero_point, lo, hi;
} wick_q16_fc_args;

/* Columns [n0, n1) (n0 a multiple of WICK_Q16_NR) of out[m x n] (rows n apart) for input rows
 * in[m x k] (k apart) against weights packed for n columns. */
typedef void (*wick_q16_fc_fn)(size_t m, size_t n0, size_t n1, size_t n, size_t k,
                               const int16_t *in, const int16_t *packed, const wick_q16_fc_args *a,
                               int16_t *out);

/* int16 elements of the packed weights for n outputs of k inputs; false on overflow. */
WICK_Q16_API bool wick_q16_fc_packed_size(size_t n, size_t k, size_t *elems_out);
/* Packs w [n, k] int8 (row-major) in the layout above. */
WICK_Q16_API void wick_q16_fc_pack(size_t n, size_t k, const int8_t *w, int16_t *packed);

WICK_Q16_API void wick_q16_fc__avx2(size_t m, size_t n0, size_t n1, size_t n, size_t k,
                                    const int16_t *in, const int16_t *packed,
                                    const wick_q16_fc_args *a, int16_t *out);
WICK_Q16_API void wick_q16_fc__avx512vnni(size_t m, size_t n0, size_t n1, size_t n, size_t k,
                                          const int16_t *in, const int16_t *packed,
                                          const wick_q16_fc_args *a, int16_t *out);
WICK_Q16_API void wick_q16_fc__neon(size_t m, size_t n0, size_t n1, size_t n, size_t k,
                                    const int16_t *in, const int16_t *packed,
                                    const wick_q16_fc_args *a, int16_t *out);

#endif
