/*
 * q8.h — the optimized int8 kernels (signed 8-bit activations, symmetric
 * int8 weights, int32 bias, per-channel requantization): microkernel
 * signatures, the table q8_select.c fills from the CPU's features, weight
 * packing (q8_pack.c) and the drivers that tile an operator over a
 * microkernel (q8_driver.c).
 *
 * Results are bit-exact with the reference kernels
 * (src/kernels/reference/quantized.c): accumulation is exact int32 (wrapping
 * like the reference), and the requantization is the same fixed-point
 * "double rounding" (CONV_2D, DEPTHWISE_CONV_2D) or the same double-precision
 * rounding (FULLY_CONNECTED), vectorized. tests/unit/test_q8_kernels.c checks
 * every kernel against the reference on edge shapes for every ISA the host
 * has. Like the fp32 kernels these work on raw pointers, cannot fail, and
 * cover only int8 with int8 weights whose zero points are 0; ops fall back to
 * the reference kernels for everything else (uint8, int16, asymmetric
 * weights, grouped convs, depthwise multipliers other than 1).
 *
 * The unsigned trick (VPDPBUSD multiplies u8 by s8): activations are read as
 * u8 = x + 128 (x XOR 0x80), and the packed bias absorbs the difference:
 *
 *     sum_k w[k] * (x[k] - zp) = sum_k w[k] * (x[k] + 128) - (128 + zp) * sum_k w[k]
 *
 * so bias' = bias - (128 + zp) * sum_k w[k] (mod 2^32) is computed at pack
 * time. Padding taps of a convolution read a row filled with zp, which adds
 * w * (zp + 128) and is cancelled by the same correction: every output sums
 * all K products, exactly as the reference sums only the in-bounds ones.
 *
 * Packed GEMM weights, one panel per NR output channels (zero-padded past N);
 * K is taps x kc4 where kc4 = kc rounded up to 4 (padding bytes are zero
 * weights, so whatever the kernel reads past kc adds nothing):
 *
 *   panel j: [ header: 5 x NR int32 ][ tap 0: kc4/4 groups ][ tap 1 ] ... [ tap taps-1 ]
 *   header:  bias'[NR] multiplier[NR] multiplier_odd[NR] left_shift[NR] right_shift[NR]
 *   group g: NR x 4 bytes, channel j's 4 bytes w[j][4g .. 4g+3] together (the
 *            int32 lane layout VPDPBUSD wants)
 *
 * multiplier_odd[j] = multiplier[j | 1] (so that a 64-bit even/odd multiply
 * needs no shuffle), left/right shifts are max(shift, 0) and max(-shift, 0).
 * FULLY_CONNECTED packs the same way with the fixed-point fields unused and
 * requantizes with a separate per-channel double scale (its reference does).
 *
 * Packed depthwise weights, one block per DW_CR channels (zero-padded):
 *
 *   [ header: 5 x CR int32 as above, bias' = bias - zp * sum_taps w ]
 *   [ tap 0: CR int32 ][ tap 1 ] ... [ tap kh*kw-1 ]
 *
 * Each weight is stored as int32 (uint16)w: VPDPWSSD on the sign-extended
 * input (low half x, high half its sign) then adds x * w + sign * 0.
 *
 * AVX2 (the table's i16 flag): the GEMM input is int16 x - zp, prepared once
 * per operator (wick_q8_prepare_input), so the bias is not corrected and
 * padding rows are zeros; weights are int8 pairs, kc rounded up to 2, that the
 * kernels sign-extend to int16 in registers:
 *
 *   panel j: [ header: 5 x NR int32 ][ tap 0: kc2/2 pairs ] ... ;  pair g: NR x 2 int8
 *
 * (channel j's bytes w[j][2g], w[j][2g + 1] together). A BATCH_MATMUL rhs
 * with a zero point (wick_q8_bmm_pack) holds rhs - zp, which needs 9 bits:
 * the same layout with int16 pairs, run with wick_q8_output.w16.
 *
 * NEON (the table's s8 flag; AArch64 SDOT multiplies s8 by s8, so no
 * unsigned trick): the GEMM input stays int8 x (prepared = copied), padding
 * rows hold zp, the bias is corrected by zp alone,
 *
 *     bias' = bias - zp * sum_k w[k]
 *
 * and the weights are packed as for VNNI (int8 in groups of 4 per channel).
 * Depthwise blocks are the same as VNNI's (the kernel narrows the int32
 * weights to int16). The AVX2 depthwise blocks are VNNI's layout with
 * CR = 8 (one 256-bit vector of int32 lanes; VPMADDWD on the sign-extended
 * input adds x * w exactly, as VPDPWSSD does).
 */
#ifndef WICK_KERNELS_Q8_H
#define WICK_KERNELS_Q8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/q16.h"
#include "kernels/reference/reference.h"
#include "kernels/split.h"

#define WICK_Q8_API __attribute__((visibility("hidden")))

/* int32 words of a GEMM panel header / a depthwise block header, per channel. */
#define WICK_Q8_HEADER 5

/* The output stage of one call. */
typedef struct wick_q8_output {
  int32_t zero_point;     /* added after the multiplier */
  int32_t lo, hi;         /* clamp (fused activation, inside int8) */
  const double *fc_scale; /* NULL: the packed fixed-point multipliers; else
                           * FULLY_CONNECTED's double scale per column of
                           * this call (column 0 = the first column of c) */
  const int64_t *rq64;    /* NULL, or the fused requantization's constants
                           * (wick_q8_rq64_prepare) from the first column of
                           * this call on: the AVX-512 and AVX2 GEMM tiles
                           * then skip deriving them per tile */
  bool raw;               /* GEMM kernels only (not igemm): no output stage; `c` is
                           * int32 memory that receives the sums bias' included,
                           * c_stride counts bytes, and the driver's column
                           * offsets are scaled by 4 (the hybrid ops, which
                           * rescale in float; pack them with zero point 0 and
                           * no bias so the sums are exactly sum_k a * w) */
  bool w16;               /* GEMM kernels of an i16 table only: the weights are
                           * int16 pairs (wick_q8_bmm_w16), not int8 pairs */
} wick_q8_output;

/* c[mr x nc] = requant(a[mr x kc] * W + bias'), mr <= MR, nc any size. */
typedef void (*wick_q8_gemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                        size_t a_stride, const void *w, int8_t *c, size_t c_stride,
                                        const wick_q8_output *o);
/* The same through an indirection tile of ks * MR row pointers (tap-major),
 * each to kc bytes. */
typedef void (*wick_q8_igemm_ukernel_fn)(size_t mr, size_t nc, size_t kc, size_t ks,
                                         const int8_t *const *a, const void *w, int8_t *c,
                                         size_t c_stride, const wick_q8_output *o);
/* DEPTHWISE_CONV_2D (multiplier 1, any kernel size, stride, dilation and
 * padding) over output rows [y0, y1) of every batch item; `zp` is the input
 * zero point, `w` packed as above with the table's dw_cr. */
typedef void (*wick_q8_dwconv_fn)(const wick_conv_shape *s, int32_t zp, const int8_t *input,
                                  const void *w, int8_t *output, const wick_q8_output *o,
                                  int32_t y0, int32_t y1);

/* out[i] = ADD/SUB of a[i], b[i] (n elements, equal shapes), arithmetic and
 * parameters as wick_q_add__reference. */
typedef void (*wick_q8_add_fn)(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                               const wick_qadd_params *p, bool subtract);

/* out[i] = int8 SQUARED_DIFFERENCE of a[i], b[i] (n elements, equal shapes), arithmetic and
 * parameters as wick_q_squared_difference_i8__reference. */
typedef void (*wick_q8_squared_difference_fn)(size_t n, const int8_t *a, const int8_t *b,
                                              int8_t *out, const wick_qadd_params *p);

/* The same for int16 elements (the 16x8 scheme's ADD / SUB / MUL). */
typedef void (*wick_q16_add_fn)(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                const wick_qadd_params *p, bool subtract);
typedef void (*wick_q16_mul_fn)(size_t n, const int16_t *a, const int16_t *b, int16_t *out,
                                const wick_qmul_params *p);

/* QUANTIZE between integer types (wick_q_requantize__reference's parameters). */
typedef struct wick_q_requant_params {
  int32_t in_zp, out_zp, multiplier, shift, lo, hi;
} wick_q_requant_params;
/* n int16 elements requantized to int8 (out16 false) or int16. */
typedef void (*wick_q16_requant_fn)(size_t n, const int16_t *in, void *out, bool out16,
                                    const wick_q_requant_params *p);

/* int16 LOGISTIC (tanh false) / TANH of n elements as wick_q16_logistic__reference /
 * wick_q16_tanh__reference, the sigmoid table widened to int32. */
typedef void (*wick_q16_sigmoid_fn)(size_t n, const int32_t table[256], int32_t multiplier,
                                    int32_t shift, bool tanh, const int16_t *in, int16_t *out);

/* 8-bit SOFTMAX rows, as wick_q8_softmax_rows (q8_softmax.c). */
typedef void (*wick_q8_softmax_fn)(const int32_t exps[256], const int32_t sums[256],
                                   const wick_qsoftmax_params *p, wick_dtype in_type,
                                   wick_dtype out_type, size_t rows, size_t cols, const void *in,
                                   void *out);

/* out[i] = lut[in[i]] (n bytes), as wick_q_lut8__reference. */
typedef void (*wick_q8_lut8_fn)(size_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out);

/* out[i] = lut[in[i]] (n bytes in, int16 out): QUANTIZE from an 8-bit input to int16 on the
 * table of the reference's 256 answers. */
typedef void (*wick_q8_lut16_fn)(size_t n, const int16_t lut[256], const uint8_t *in, int16_t *out);

/* out[i] = MUL of a[i], b[i], as wick_q_mul__reference. */
typedef void (*wick_q8_mul_fn)(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                               const wick_qmul_params *p);
/* The same for uint8 elements (wick_q_mul__reference of WICK_DTYPE_UINT8). */
typedef void (*wick_q8_mul_u8_fn)(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                                  const wick_qmul_params *p);

/* sums[j] = the sum over r < rows of x[r * stride + j], j < cols: int8 values (u8 false) or uint8,
 * in int32 wrapping as the reference's uint32 sums (MEAN / SUM over the rows: a global average
 * pool's H, W). */
typedef void (*wick_q8_colsum_fn)(size_t rows, size_t cols, size_t stride, const uint8_t *x,
                                  bool u8, int32_t *sums);
/* out[i] = clamp(mbqm(in[i] - in_zp, multiplier, shift) + out_zp, lo, hi) as int8 (u8 false) or
 * uint8 bytes, as wick_q_requantize__reference from int32; shift in [-31, 30]. */
typedef void (*wick_q8_requant32_fn)(size_t n, const int32_t *in, int32_t in_zp, int32_t multiplier,
                                     int32_t shift, int32_t out_zp, int32_t lo, int32_t hi, bool u8,
                                     uint8_t *out);

/* ---- 8-bit ADD / SUB with each input's rescale in 32-bit arithmetic (q8_rescale.c) ----
 *
 * LiteRT's 8-bit ADD / SUB (wick_q_add__reference) rescales each input x = v + offset
 * (|x| <= 255 for int8 and uint8) as mbqm(x << left_shift, m, s) with s <= 0: a 64-bit product
 * per element, then adds the two and requantizes the sum (a third one). Both roundings of an
 * input's rescale fold into one floor (as in avx2/q8_requant.h), and with k = 31 - left_shift
 * - s, q = m >> k and rho = m mod 2^k that floor splits into
 *
 *     T(x) = x * q + ((x * rho + c - (x < 0 ? cneg : 0)) >> k)     (arithmetic shift)
 *
 * where c and cneg carry srdhm's nudge and rdivpot's half. Whenever nothing in it leaves int32
 * this is two 32-bit multiplies instead of a 64-bit product with rounding: for left_shift 20
 * always when the input's shift is -12 or more (its scale at least 2^-11 times the other
 * input's: the common case), for some multipliers and zero points down to shift -19, never
 * below. wick_q8_rescale8_make derives the constants and checks all 256 values an input
 * can hold against the reference's mbqm (the oracle), so a kernel that uses them is exact by
 * construction; otherwise it returns false and the op keeps its other kernels. The sum's
 * requantization stays the full fixed-point one (its operand has up to 29 bits). */
typedef struct wick_q8_rescale8 {
  int32_t offset, q, rho, c, cneg, k;
} wick_q8_rescale8;

typedef struct wick_q8_add8_params {
  wick_q8_rescale8 in[2]; /* the rescales of the kernel's first and second operand */
  bool subtract;          /* SUB: the second term enters the sum negated */
  bool u8;                /* uint8 elements (else int8) */
  int32_t output_multiplier, output_shift; /* output_shift >= -31 */
  int32_t output_offset, act_min, act_max;
} wick_q8_add8_params;

/* out[i] = clamp(output_offset + mbqm(T0(a[i]) +- T1(b[i]), output multiplier, shift)) for n
 * elements: ADD / SUB of equal runs, bit-exact with wick_q_add__reference. */
typedef void (*wick_q8_add8_fn)(size_t n, const uint8_t *a, const uint8_t *b, uint8_t *out,
                                const wick_q8_add8_params *p);
/* The same when one operand is already rescaled: the sum is T0(a[i]) + r[i * r_stride], or
 * r[i * r_stride] - T0(a[i]) for SUB (r_stride 0: one value for the run, a broadcast scalar;
 * 1: a row); in[1] is not read. */
typedef void (*wick_q8_add8_rescaled_fn)(size_t n, const uint8_t *a, const int32_t *r,
                                         size_t r_stride, uint8_t *out,
                                         const wick_q8_add8_params *p);

/* The rescale of an 8-bit input (u8: uint8 values, else int8) with zero point -offset as
 * T above, or false when the 32-bit form is not exact for every value (see above). */
WICK_Q8_API bool wick_q8_rescale8_make(int32_t offset, int32_t multiplier, int32_t shift,
                                       int32_t left_shift, bool u8, wick_q8_rescale8 *r);
/* T(v) of one value v (the kernels' arithmetic, scalar). */
WICK_Q8_API int32_t wick_q8_rescale8_apply(const wick_q8_rescale8 *r, int32_t v);

/* CONV_2D on AMX tiles (wick_q8_conv_amx below): output pixels [m0, m1) (m0
 * a multiple of WICK_Q8_AMX_MB) and channels [n0, n1) (n0 a multiple of nr,
 * n1 one too or out_c). `input` is the raw int8 input (read exactly: the
 * gathers flip it to x + 128), `zp` its zero point, `work`
 * wick_q8_conv_amx_work_bytes(s) bytes of this thread's scratch. */
typedef void (*wick_q8_conv_amx_fn)(const wick_conv_shape *s, const int8_t *input, int32_t zp,
                                    const void *packed, int8_t *output, const wick_q8_output *o,
                                    size_t m0, size_t m1, size_t n0, size_t n1, void *work);

/* int8 dot products of the hybrid (dynamic-range) ops: c[i * ldc + j] = sum_p a[i * k + p] *
 * b[j * k + p] for i < m, j < n, as int32 sums that wrap (the reference's). */
typedef void (*wick_q8_dots_fn)(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                                int32_t *c, size_t ldc);

typedef struct wick_q8_kernels {
  const char *isa; /* "avx512amx", "avx512vnni", "avx2", "neondot", "neon" */
  size_t mr, nr;
  bool i16; /* GEMM input prepared as int16 x - zp, weights as int8 pairs (AVX2);
             * else u8 x + 128 and int8 weights in 4-groups (VNNI) */
  bool s8;  /* GEMM input int8 x, bias corrected by zp only (NEON); with
             * neither flag, the VNNI layout */
  wick_q8_gemm_ukernel_fn gemm;        /* MR x NR */
  wick_q8_gemm_ukernel_fn gemm_1;      /* one row */
  wick_q8_gemm_ukernel_fn gemm_u8;     /* MR x NR, A prepared by wick_q8_prepare_input */
  wick_q8_gemm_ukernel_fn gemm_u8_1;   /* one row of that */
  wick_q8_gemm_ukernel_fn gemm_u8_4;   /* up to 4 rows of that */
  wick_q8_igemm_ukernel_fn igemm;      /* MR x NR */
  wick_q8_igemm_ukernel_fn igemm_u8;   /* rows hold x + 128 followed by at least
                                        * WICK_Q8_ROW_PAD readable bytes (any values) */
  wick_q8_igemm_ukernel_fn igemm_u8_4; /* up to 4 rows of a tile (still MR pointers per
                                        * tap; rows padded as for igemm_u8) */
  size_t dw_cr;
  wick_q8_dwconv_fn dwconv;
  wick_q8_add_fn add;
  wick_q8_mul_fn mul;
  wick_q8_mul_u8_fn mul_u8;               /* uint8 MUL (NULL: the reference) */
  wick_q8_add8_fn add8;                   /* int8 / uint8 ADD / SUB, 32-bit input rescales */
  wick_q8_add8_rescaled_fn add8_rescaled; /* the same against a rescaled operand (both or
                                           * neither; NULL: int8 runs `add`, uint8 the
                                           * reference) */
  wick_q8_squared_difference_fn squared_difference; /* int8 (NULL: the reference) */
  wick_q8_conv_amx_fn conv_amx;                     /* AMX-INT8 (avx512amx table only) */
  wick_q8_dots_fn dots;           /* hybrid FULLY_CONNECTED (NULL: the portable loop) */
  wick_q16_fc_fn fc16;            /* 16x8 FULLY_CONNECTED (q16.h; NULL: the portable rows) */
  wick_q16_add_fn add16;          /* int16 ADD / SUB (NULL: the reference) */
  wick_q16_mul_fn mul16;          /* int16 MUL (NULL: the reference) */
  wick_q16_requant_fn requant16;  /* QUANTIZE int16 -> int8 / int16 (NULL: the reference) */
  wick_q16_sigmoid_fn sigmoid16;  /* int16 LOGISTIC / TANH (NULL: the reference) */
  wick_q8_softmax_fn softmax8;    /* 8-bit SOFTMAX rows (NULL: the portable ones) */
  wick_q8_colsum_fn colsum;       /* 8-bit MEAN / SUM over rows (NULL: the portable loop) */
  wick_q8_requant32_fn requant32; /* int32 sums to 8-bit (NULL: the reference) */
  wick_q8_lut16_fn lut16;         /* 8-bit -> int16 table QUANTIZE (NULL: a scalar loop) */
  wick_q16_dot_fn dot16;          /* int16 x int16 BATCH_MATMUL sums (NULL: a portable loop) */
} wick_q8_kernels;

/* Bytes the u8 indirect kernels may read past a row's kc bytes (their
 * callers allocate the prepared input that much larger). */
#define WICK_Q8_ROW_PAD 4

/* The best 8-bit table lookup for this CPU (AVX-512 VBMI, else AVX2; NEON on AArch64), or
 * NULL. */
WICK_Q8_API wick_q8_lut8_fn wick_q8_lut8_select(bool force_reference);

/* The best int8 kernels for this CPU, or NULL (forced reference, or no
 * supported ISA). Static and immutable. */
WICK_Q8_API const wick_q8_kernels *wick_q8_kernels_select(bool force_reference);
/* The kernels of one ISA if the host can run them, else NULL. */
WICK_Q8_API const wick_q8_kernels *wick_q8_kernels_for_isa(const char *isa);
/* The inventory of int8 kernel tables compiled for this architecture, best first: entry i of
 * wick_q8_kernels_count() (NULL past the end); *runnable (may be NULL) tells whether this CPU
 * (within WICK_MAX_ISA) can run it. */
WICK_Q8_API size_t wick_q8_kernels_count(void);
WICK_Q8_API const wick_q8_kernels *wick_q8_kernels_at(size_t i, bool *runnable);

/* ---- packing (q8_pack.c) ---- */

/* Bytes of packed GEMM weights for n outputs of `taps` x kc inputs in the
 * layout of `k`; false on overflow. */
WICK_Q8_API bool wick_q8_gemm_packed_size(const wick_q8_kernels *k, size_t n, size_t taps,
                                          size_t kc, size_t *bytes_out);
/* Packs w [n, taps * kc] (row-major, OHWI for convs), bias [n] (NULL:
 * zeros), the input zero point and per-channel multiplier/shift (NULL: FC,
 * fields left 0) for the kernels `k`. */
WICK_Q8_API void wick_q8_gemm_pack(const wick_q8_kernels *k, size_t n, size_t taps, size_t kc,
                                   const int8_t *w, const int32_t *bias, int32_t input_zero_point,
                                   const int32_t *multiplier, const int32_t *shift, void *packed);
/* Whether wick_q8_bmm_pack stores int16 pairs: on an i16 table (AVX2) with a rhs zero point,
 * whose rhs - zp needs 9 bits. The GEMM then runs with wick_q8_output.w16. */
static inline bool wick_q8_bmm_w16(const wick_q8_kernels *k, int32_t rhs_zero_point) {
  return k->i16 && rhs_zero_point != 0;
}
/* Bytes of wick_q8_bmm_pack's output: wick_q8_gemm_packed_size(kern, n, 1, k), with int16
 * pairs when wick_q8_bmm_w16; false on overflow. */
WICK_Q8_API bool wick_q8_bmm_packed_size(const wick_q8_kernels *kern, size_t n, size_t k,
                                         int32_t rhs_zero_point, size_t *bytes_out);
/* Packs the rhs of one int8 BATCH_MATMUL (an activation: packed at invoke) as GEMM weights
 * of n columns and k inputs in the layout of `k`: column j's input p is
 * rhs[j * stride_j + p * stride_p] (adj_y: stride_j = k, stride_p = 1; else 1 and n), no bias,
 * the requantization `multiplier` / `shift` per column (the op's one repeated). The i16 layout
 * (AVX2) holds rhs - rhs_zero_point: int8 pairs when it is 0 (as wick_q8_gemm_pack), else
 * int16 pairs (wick_q8_bmm_w16); the int8 layouts need rhs_zero_point 0 and correct the bias
 * for the lhs's zero point as wick_q8_gemm_pack does. wick_q8_bmm_packed_size bytes. */
WICK_Q8_API void wick_q8_bmm_pack(const wick_q8_kernels *kern, size_t n, size_t k,
                                  const int8_t *rhs, size_t stride_j, size_t stride_p,
                                  int32_t rhs_zero_point, int32_t lhs_zero_point,
                                  const int32_t *multiplier, const int32_t *shift, void *packed);
/* Bytes per input element after wick_q8_prepare_input (1 or 2). */
static inline size_t wick_q8_input_bytes(const wick_q8_kernels *k) { return k->i16 ? 2 : 1; }
/* Converts n input bytes for the GEMM kernels of `k`: x + 128 as u8 (VNNI),
 * int16 x - zp (AVX2) or x unchanged (NEON). */
WICK_Q8_API void wick_q8_prepare_input(const wick_q8_kernels *k, size_t n, const int8_t *in,
                                       int32_t zp, void *out);
/* Bytes of the row padding taps read (kc prepared elements, rounded up). */
WICK_Q8_API size_t wick_q8_zero_row_bytes(const wick_q8_kernels *k, size_t kc);
/* Fills that row: the prepared form of the zero point. */
WICK_Q8_API void wick_q8_zero_row(const wick_q8_kernels *k, size_t kc, int32_t zp, void *row);
/* The per-channel constants of the fused requantization (the AVX-512
 * kernels' q8_rq64, avx512vnni/q8_requant.h) for n channels with these
 * shifts: per 16 channels, WICK_Q8_RQ64_WORDS int64 = six rows of 8 (the
 * constant c, the negative correction d and the shift s, each for the even
 * then the odd channels of the 16). */
#define WICK_Q8_RQ64_WORDS 48
static inline size_t wick_q8_rq64_words(size_t n) { return (n + 15) / 16 * WICK_Q8_RQ64_WORDS; }
WICK_Q8_API void wick_q8_rq64_prepare(size_t n, const int32_t *shift, int64_t *out);
/* Bytes of packed depthwise weights for c channels and `taps` taps. */
WICK_Q8_API bool wick_q8_dwconv_packed_size(size_t c, size_t taps, size_t cr, size_t *bytes_out);
/* Packs a depthwise filter [1, kh, kw, c] (taps = kh * kw). */
WICK_Q8_API void wick_q8_dwconv_pack(size_t c, size_t taps, size_t cr, const int8_t *w,
                                     const int32_t *bias, int32_t input_zero_point,
                                     const int32_t *multiplier, const int32_t *shift, void *packed);

/* ---- drivers (q8_driver.c) ---- */

/* Rows [m0, m1) of c[m x n] = requant(a[m x k] * W) with W packed by
 * wick_q8_gemm_pack (taps 1, kc = k). a_u8: `a` holds x + 128
 * (wick_q8_flip_sign), which saves the kernels a sign flip per load. */
WICK_Q8_API void wick_q8_gemm(const wick_q8_kernels *kern, size_t m0, size_t m1, size_t n, size_t k,
                              const int8_t *a, size_t a_stride, bool a_u8, const void *packed,
                              int8_t *c, size_t c_stride, const wick_q8_output *o);
/* The same for columns [n0, n1) only: n0 a multiple of kern->nr, n1 one too
 * or n. Each output is computed by the same microkernel call as in the full
 * GEMM, so any column split gives the same bytes. */
WICK_Q8_API void wick_q8_gemm_cols(const wick_q8_kernels *kern, size_t m0, size_t m1, size_t n0,
                                   size_t n1, size_t n, size_t k, const int8_t *a, size_t a_stride,
                                   bool a_u8, const void *packed, int8_t *c, size_t c_stride,
                                   const wick_q8_output *o);

/* How a GEMM's int8 tasks split it (split.h): row tasks of whole MR tiles;
 * when those are too few for an even count (7x7 convolutions: 49 rows,
 * FULLY_CONNECTED with one row), the columns are cut too, at NR panels.
 * Task t covers column part t / row_tasks and row task t % row_tasks. */
typedef struct wick_q8_gemm_split {
  size_t m, n, mr, nr, tiles, row_tasks, panels, col_parts;
} wick_q8_gemm_split;
/* Fills *sp and returns the task count (0 for an empty GEMM). */
WICK_Q8_API size_t wick_q8_gemm_split_init(wick_q8_gemm_split *sp, const wick_q8_kernels *kern,
                                           size_t m, size_t n, size_t k, uint64_t grain);
/* Rows [*m0, *m1) and columns [*n0, *n1) of task t. */
WICK_Q8_API void wick_q8_gemm_split_task(const wick_q8_gemm_split *sp, size_t t, size_t *m0,
                                         size_t *m1, size_t *n0, size_t *n1);
/* out[i] = in[i] + 128 as u8 (the sign bit flipped), n bytes. */
WICK_Q8_API void wick_q8_flip_sign(size_t n, const int8_t *in, int8_t *out);

/* Pointers in the indirection buffer of an int8 CONV_2D (as the fp32 one,
 * kernels.h); false on overflow. */
WICK_Q8_API bool wick_q8_conv_indirection_size(const wick_conv_shape *s, size_t mr,
                                               size_t *count_out);
/* Fills it over `input` (elements of elem_bytes each); padding taps point
 * at `zero_row`. */
WICK_Q8_API void wick_q8_conv_indirection_init(const wick_conv_shape *s, size_t mr,
                                               const void *input, size_t elem_bytes,
                                               const void *zero_row, const int8_t **ind);
/* Row tiles [t0, t1) of a CONV_2D (groups 1) through the indirection buffer.
 * a_u8: the rows it points to (zero row included) hold x + 128. */
WICK_Q8_API void wick_q8_conv_igemm(const wick_q8_kernels *kern, const wick_conv_shape *s,
                                    const int8_t *const *ind, bool a_u8, const void *packed,
                                    int8_t *output, const wick_q8_output *o, size_t t0, size_t t1);
/* Row tiles of a conv: ceil(batch * out_h * out_w / mr). */
WICK_Q8_API size_t wick_q8_conv_tiles(const wick_conv_shape *s, size_t mr);

/* ---- TRANSPOSE_CONV (q8_transpose_conv.c) ----
 *
 * stride_h x stride_w sub-convolutions ("phases") on the indirect-GEMM
 * microkernels: the filter packed once per phase (wick_q8_gemm_pack of the
 * phase's taps, phases in order (ry, rx), one after the other), and tiles of
 * up to MR output pixels of one phase in one output row. */
#define WICK_Q8_TCONV_MAX_PHASES 64
typedef struct wick_q8_tconv_tile {
  size_t ind;    /* first of its taps * MR pointers in the indirection buffer */
  size_t out;    /* its first output element */
  size_t packed; /* its phase's packed filter (bytes from the start) */
  uint32_t rows, taps;
} wick_q8_tconv_tile;
/* True for shapes the phase form covers: every phase has a tap (strides at
 * most the filter size), padding >= 0, at most WICK_Q8_TCONV_MAX_PHASES. */
WICK_Q8_API bool wick_q8_tconv_supported(const wick_conv_shape *s);
/* Packed filter bytes, bytes of scratch for one phase's sub-filter, tiles,
 * indirection pointers; false on overflow. */
WICK_Q8_API bool wick_q8_tconv_sizes(const wick_q8_kernels *kern, const wick_conv_shape *s,
                                     size_t *packed_bytes, size_t *filter_scratch, size_t *tiles,
                                     size_t *pointers);
/* Packs the OHWI filter w per phase (sub: filter_scratch bytes); bias and
 * requantization as wick_q8_gemm_pack. */
WICK_Q8_API void wick_q8_tconv_pack(const wick_q8_kernels *kern, const wick_conv_shape *s,
                                    const int8_t *w, const int32_t *bias, int32_t input_zero_point,
                                    const int32_t *multiplier, const int32_t *shift, int8_t *sub,
                                    void *packed);
/* Fills the tiles and their indirection pointers over the prepared input
 * (wick_q8_prepare_input; elem_bytes per element); taps outside the input
 * point at zero_row (wick_q8_zero_row). */
WICK_Q8_API void wick_q8_tconv_indirection_init(const wick_q8_kernels *kern,
                                                const wick_conv_shape *s, const void *input,
                                                size_t elem_bytes, const void *zero_row,
                                                wick_q8_tconv_tile *tiles, const int8_t **ind);
/* Tiles [t0, t1). */
WICK_Q8_API void wick_q8_tconv_run(const wick_q8_kernels *kern, const wick_conv_shape *s,
                                   const wick_q8_tconv_tile *tiles, const int8_t *const *ind,
                                   const void *packed, int8_t *output, const wick_q8_output *o,
                                   size_t t0, size_t t1);

/* ---- AMX convolutions (kern->conv_amx) ----
 *
 * Per block of WICK_Q8_AMX_MB output pixels the kernel gathers each pixel's
 * receptive field into a row of a work buffer: per filter row ky, the
 * k_w * in_c input bytes under it (one run of the NHWC input when the
 * dilation along W is 1; places outside the image hold the zero point),
 * rounded up to 4, then zeros up to a multiple of 64 bytes, all flipped to
 * x + 128 on the way (the VNNI kernels' unsigned trick). Those rows are
 * the A tiles of TDPBUSD (16 rows x 64 bytes); the filter is packed as a
 * GEMM (wick_q8_gemm_pack) with taps = k_h and kc = k_w * in_c, whose
 * 4-byte groups, 128 bytes per group for NR = 32 channels, are the B tiles
 * (16 groups at a stride of 128 bytes, +64 for channels 16..31). The last
 * K step may read up to 15 groups past a panel: the packed size of the amx
 * table has WICK_Q8_AMX_SLACK zero bytes at the end. Sums are exact int32,
 * so results equal the VNNI kernels' and the reference's byte for byte,
 * whatever the blocking or the task split. */
#define WICK_Q8_AMX_MB 32
#define WICK_Q8_AMX_SLACK ((size_t)2048)
/* True when kern has AMX kernels and they take this conv (groups 1,
 * dilation along W 1, k_h * k_w * in_c >= WICK_Q8_AMX_MIN_K). */
#define WICK_Q8_AMX_MIN_K 64
WICK_Q8_API bool wick_q8_conv_amx_supported(const wick_q8_kernels *kern, const wick_conv_shape *s);
/* The packing of such a conv: taps = k_h, kc = k_w * in_c. */
WICK_Q8_API void wick_q8_conv_amx_pack_dims(const wick_conv_shape *s, size_t *taps, size_t *kc);
/* Bytes of a gathered row (the A row stride): k_h * round4(k_w * in_c)
 * rounded up to 64. */
WICK_Q8_API size_t wick_q8_conv_amx_row_bytes(const wick_conv_shape *s);
/* Blocks of WICK_Q8_AMX_MB pixels gathered at once (so a K-long panel of
 * weights is read once for all of them; about WICK_Q8_AMX_GATHER_BYTES). */
WICK_Q8_API size_t wick_q8_conv_amx_group(const wick_conv_shape *s);
/* Bytes of one thread's work buffer (a multiple of 64; 64-aligned use). */
WICK_Q8_API size_t wick_q8_conv_amx_work_bytes(const wick_conv_shape *s);

/* ---- portable kernels (q8_pool.c, q8_softmax.c) ---- */

/* 8-bit SOFTMAX rows (int8 / uint8 in; int8, uint8 or int16 out, as the reference's pairs)
 * through the op's tables (wick_q_softmax_tables of p), bit-exact with
 * wick_q_softmax__reference. */
WICK_Q8_API void wick_q8_softmax_rows(const int32_t exps[256], const int32_t sums[256],
                                      const wick_qsoftmax_params *p, wick_dtype in_type,
                                      wick_dtype out_type, size_t rows, size_t cols, const void *in,
                                      void *out);

/* int8 AVERAGE_POOL_2D / MAX_POOL_2D (arithmetic as the reference kernels),
 * clamp [lo, hi]; `acc` holds s->channels int32. */
WICK_Q8_API void wick_q8_pool(bool is_max, const wick_pool_shape *s, const int8_t *in, int8_t *out,
                              int32_t lo, int32_t hi, int32_t *acc);

/* ---- microkernels, one set per ISA folder ---- */

WICK_Q8_API void wick_q8_gemm_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                         const int8_t *a, size_t a_stride,
                                                         const void *w, int8_t *c, size_t c_stride,
                                                         const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_ukernel_1x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                         const int8_t *a, size_t a_stride,
                                                         const void *w, int8_t *c, size_t c_stride,
                                                         const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_u8_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                            const int8_t *a, size_t a_stride,
                                                            const void *w, int8_t *c,
                                                            size_t c_stride,
                                                            const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_u8_ukernel_1x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                            const int8_t *a, size_t a_stride,
                                                            const void *w, int8_t *c,
                                                            size_t c_stride,
                                                            const wick_q8_output *o);
WICK_Q8_API void wick_q8_igemm_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                          size_t ks, const int8_t *const *a,
                                                          const void *w, int8_t *c, size_t c_stride,
                                                          const wick_q8_output *o);
WICK_Q8_API void wick_q8_igemm_u8_ukernel_7x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                             size_t ks, const int8_t *const *a,
                                                             const void *w, int8_t *c,
                                                             size_t c_stride,
                                                             const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_u8_ukernel_4x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                            const int8_t *a, size_t a_stride,
                                                            const void *w, int8_t *c,
                                                            size_t c_stride,
                                                            const wick_q8_output *o);
WICK_Q8_API void wick_q8_igemm_u8_ukernel_4x32c4__avx512vnni(size_t mr, size_t nc, size_t kc,
                                                             size_t ks, const int8_t *const *a,
                                                             const void *w, int8_t *c,
                                                             size_t c_stride,
                                                             const wick_q8_output *o);
WICK_Q8_API void wick_q8_dwconv_ukernel__avx512vnni(const wick_conv_shape *s, int32_t zp,
                                                    const int8_t *input, const void *w,
                                                    int8_t *output, const wick_q8_output *o,
                                                    int32_t y0, int32_t y1);

WICK_Q8_API void wick_q8_add_ukernel__avx512vnni(size_t n, const int8_t *a, const int8_t *b,
                                                 int8_t *out, const wick_qadd_params *p,
                                                 bool subtract);

WICK_Q8_API void wick_q8_mul_ukernel__avx512vnni(size_t n, const int8_t *a, const int8_t *b,
                                                 int8_t *out, const wick_qmul_params *p);

/* avx512vnni/q8_elementwise.c: int16 ADD / SUB, MUL and QUANTIZE from int16, 16 lanes. */
WICK_Q8_API void wick_q16_add_ukernel__avx512vnni(size_t n, const int16_t *a, const int16_t *b,
                                                  int16_t *out, const wick_qadd_params *p,
                                                  bool subtract);
WICK_Q8_API void wick_q16_mul_ukernel__avx512vnni(size_t n, const int16_t *a, const int16_t *b,
                                                  int16_t *out, const wick_qmul_params *p);
WICK_Q8_API void wick_q16_requant_ukernel__avx512vnni(size_t n, const int16_t *in, void *out,
                                                      bool out16, const wick_q_requant_params *p);

WICK_Q8_API void wick_q8_gemm_i16_ukernel_4x16c2__avx2(size_t mr, size_t nc, size_t kc,
                                                       const int8_t *a, size_t a_stride,
                                                       const void *w, int8_t *c, size_t c_stride,
                                                       const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_i16_ukernel_1x16c2__avx2(size_t mr, size_t nc, size_t kc,
                                                       const int8_t *a, size_t a_stride,
                                                       const void *w, int8_t *c, size_t c_stride,
                                                       const wick_q8_output *o);
WICK_Q8_API void wick_q8_igemm_i16_ukernel_4x16c2__avx2(size_t mr, size_t nc, size_t kc, size_t ks,
                                                        const int8_t *const *a, const void *w,
                                                        int8_t *c, size_t c_stride,
                                                        const wick_q8_output *o);
WICK_Q8_API void wick_q16_add_ukernel__avx2(size_t n, const int16_t *a, const int16_t *b,
                                            int16_t *out, const wick_qadd_params *p, bool subtract);
WICK_Q8_API void wick_q16_mul_ukernel__avx2(size_t n, const int16_t *a, const int16_t *b,
                                            int16_t *out, const wick_qmul_params *p);
WICK_Q8_API void wick_q16_requant_ukernel__avx2(size_t n, const int16_t *in, void *out, bool out16,
                                                const wick_q_requant_params *p);
/* wick_q8_bmm_pack's weights of one whole 16-column panel of rhs rows (avx2/q8_gemm.c). */
WICK_Q8_API void wick_q8_bmm_pack_rows16__avx2(size_t k, const int8_t *rhs, size_t stride_p,
                                               int32_t rhs_zero_point, bool w16, void *packed);
WICK_Q8_API void wick_q8_requant32__avx2(size_t n, const int32_t *in, int32_t in_zp,
                                         int32_t multiplier, int32_t shift, int32_t out_zp,
                                         int32_t lo, int32_t hi, bool u8, uint8_t *out);
WICK_Q8_API void wick_q8_colsum__avx2(size_t rows, size_t cols, size_t stride, const uint8_t *x,
                                      bool u8, int32_t *sums);
WICK_Q8_API void wick_q8_softmax_rows__avx2(const int32_t exps[256], const int32_t sums[256],
                                            const wick_qsoftmax_params *p, wick_dtype in_type,
                                            wick_dtype out_type, size_t rows, size_t cols,
                                            const void *in, void *out);
WICK_Q8_API void wick_q8_lut8__avx2(size_t n, const uint8_t lut[256], const uint8_t *in,
                                    uint8_t *out);
WICK_Q8_API void wick_q16_sigmoid__avx2(size_t n, const int32_t table[256], int32_t multiplier,
                                        int32_t shift, bool tanh, const int16_t *in, int16_t *out);
/* Depthwise blocks of 8 channels (dw_cr 8), ADD / SUB, MUL and SQUARED_DIFFERENCE on 8 int32
 * lanes. */
WICK_Q8_API void wick_q8_dwconv_ukernel__avx2(const wick_conv_shape *s, int32_t zp,
                                              const int8_t *input, const void *w, int8_t *output,
                                              const wick_q8_output *o, int32_t y0, int32_t y1);
WICK_Q8_API void wick_q8_add_ukernel__avx2(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                           const wick_qadd_params *p, bool subtract);
WICK_Q8_API void wick_q8_mul_u8_ukernel__avx2(size_t n, const uint8_t *a, const uint8_t *b,
                                              uint8_t *out, const wick_qmul_params *p);
WICK_Q8_API void wick_q8_mul_ukernel__avx2(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                           const wick_qmul_params *p);
WICK_Q8_API void wick_q8_add8_ukernel__avx2(size_t n, const uint8_t *a, const uint8_t *b,
                                            uint8_t *out, const wick_q8_add8_params *p);
WICK_Q8_API void wick_q8_add8_rescaled_ukernel__avx2(size_t n, const uint8_t *a, const int32_t *r,
                                                     size_t r_stride, uint8_t *out,
                                                     const wick_q8_add8_params *p);
WICK_Q8_API void wick_q8_squared_difference_ukernel__avx2(size_t n, const int8_t *a,
                                                          const int8_t *b, int8_t *out,
                                                          const wick_qadd_params *p);

WICK_Q8_API void wick_q8_dots__avx512vnni(size_t m, size_t n, size_t k, const int8_t *a,
                                          const int8_t *b, int32_t *c, size_t ldc);
WICK_Q8_API void wick_q8_dots__avx2(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                                    int32_t *c, size_t ldc);

WICK_Q8_API void wick_q8_conv_amx__avx512amx(const wick_conv_shape *s, const int8_t *input,
                                             int32_t zp, const void *packed, int8_t *output,
                                             const wick_q8_output *o, size_t m0, size_t m1,
                                             size_t n0, size_t n1, void *work);

WICK_Q8_API void wick_q8_gemm_ukernel_4x16c4__neondot(size_t mr, size_t nc, size_t kc,
                                                      const int8_t *a, size_t a_stride,
                                                      const void *w, int8_t *c, size_t c_stride,
                                                      const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_ukernel_1x16c4__neondot(size_t mr, size_t nc, size_t kc,
                                                      const int8_t *a, size_t a_stride,
                                                      const void *w, int8_t *c, size_t c_stride,
                                                      const wick_q8_output *o);
WICK_Q8_API void wick_q8_igemm_ukernel_4x16c4__neondot(size_t mr, size_t nc, size_t kc, size_t ks,
                                                       const int8_t *const *a, const void *w,
                                                       int8_t *c, size_t c_stride,
                                                       const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_ukernel_4x16c4__neon(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                                   size_t a_stride, const void *w, int8_t *c,
                                                   size_t c_stride, const wick_q8_output *o);
WICK_Q8_API void wick_q8_gemm_ukernel_1x16c4__neon(size_t mr, size_t nc, size_t kc, const int8_t *a,
                                                   size_t a_stride, const void *w, int8_t *c,
                                                   size_t c_stride, const wick_q8_output *o);
WICK_Q8_API void wick_q8_igemm_ukernel_4x16c4__neon(size_t mr, size_t nc, size_t kc, size_t ks,
                                                    const int8_t *const *a, const void *w,
                                                    int8_t *c, size_t c_stride,
                                                    const wick_q8_output *o);

WICK_Q8_API void wick_q8_dwconv_ukernel__neon(const wick_conv_shape *s, int32_t zp,
                                              const int8_t *input, const void *w, int8_t *output,
                                              const wick_q8_output *o, int32_t y0, int32_t y1);

/* neon/: q8_elementwise.c, q8_lut.c, q16_activations.c, q8_softmax.c (both AArch64 tables);
 * neon/q8_dots.c, neondot/q8_dots.c */
WICK_Q8_API void wick_q8_add_ukernel__neon(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                           const wick_qadd_params *p, bool subtract);
WICK_Q8_API void wick_q8_mul_ukernel__neon(size_t n, const int8_t *a, const int8_t *b, int8_t *out,
                                           const wick_qmul_params *p);
WICK_Q8_API void wick_q8_squared_difference_ukernel__neon(size_t n, const int8_t *a,
                                                          const int8_t *b, int8_t *out,
                                                          const wick_qadd_params *p);
WICK_Q8_API void wick_q16_add_ukernel__neon(size_t n, const int16_t *a, const int16_t *b,
                                            int16_t *out, const wick_qadd_params *p, bool subtract);
WICK_Q8_API void wick_q16_mul_ukernel__neon(size_t n, const int16_t *a, const int16_t *b,
                                            int16_t *out, const wick_qmul_params *p);
WICK_Q8_API void wick_q16_requant_ukernel__neon(size_t n, const int16_t *in, void *out, bool out16,
                                                const wick_q_requant_params *p);
WICK_Q8_API void wick_q8_dots__neon(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                                    int32_t *c, size_t ldc);
WICK_Q8_API void wick_q8_dots__neondot(size_t m, size_t n, size_t k, const int8_t *a,
                                       const int8_t *b, int32_t *c, size_t ldc);
WICK_Q8_API void wick_q16_sigmoid__neon(size_t n, const int32_t table[256], int32_t multiplier,
                                        int32_t shift, bool tanh, const int16_t *in, int16_t *out);
WICK_Q8_API void wick_q8_mul_u8_ukernel__neon(size_t n, const uint8_t *a, const uint8_t *b,
                                              uint8_t *out, const wick_qmul_params *p);
WICK_Q8_API void wick_q8_requant32__neon(size_t n, const int32_t *in, int32_t in_zp,
                                         int32_t multiplier, int32_t shift, int32_t out_zp,
                                         int32_t lo, int32_t hi, bool u8, uint8_t *out);
WICK_Q8_API void wick_q8_colsum__neon(size_t rows, size_t cols, size_t stride, const uint8_t *x,
                                      bool u8, int32_t *sums);
WICK_Q8_API void wick_q8_softmax_rows__neon(const int32_t exps[256], const int32_t sums[256],
                                            const wick_qsoftmax_params *p, wick_dtype in_type,
                                            wick_dtype out_type, size_t rows, size_t cols,
                                            const void *in, void *out);
WICK_Q8_API void wick_q8_lut8__neon(size_t n, const uint8_t lut[256], const uint8_t *in,
                                    uint8_t *out);

WICK_Q8_API void wick_q16_sigmoid__avx512vnni(size_t n, const int32_t table[256],
                                              int32_t multiplier, int32_t shift, bool tanh,
                                              const int16_t *in, int16_t *out);
WICK_Q8_API void wick_q8_lut16__avx512vnni(size_t n, const int16_t lut[256], const uint8_t *in,
                                           int16_t *out);
WICK_Q8_API void wick_q8_lut8__avx512vbmi(size_t n, const uint8_t lut[256], const uint8_t *in,
                                          uint8_t *out);

#endif /* WICK_KERNELS_Q8_H */
