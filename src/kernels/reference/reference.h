/*
 * reference.h — the portable scalar kernels: the executable specification of
 * every operator's arithmetic.
 *
 * Kernels work on raw pointers, shapes and strides. They know nothing of
 * TFLite or the graph, they cannot fail (their op's prepare checked every
 * size), and they are written to be obviously correct rather than fast: the
 * optimized kernels in src/kernels/<isa>/ are tested against them.
 *
 * Layouts: activations NHWC; CONV_2D filters OHWI; DEPTHWISE_CONV_2D filters
 * [1, H, W, C*M]; FULLY_CONNECTED weights [out, in] (row-major).
 */
#ifndef WICK_KERNELS_REFERENCE_H
#define WICK_KERNELS_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wick/wick.h"

/* ---- elementwise binary with broadcasting ---- */

/* The arithmetic ops, then the comparisons and logical ops: one record each in
 * binary_ops.inc, which states each op's formula (its KERNEL). */
typedef enum wick_binary_op {
#define WICK_BINARY_F32(NAME, ...) WICK_BINARY_##NAME,
#include "kernels/reference/binary_ops.inc"
} wick_binary_op;

typedef enum wick_compare_op {
#define WICK_COMPARE(NAME, ...) WICK_COMPARE_##NAME,
#define WICK_LOGICAL(NAME, ...) WICK_COMPARE_##NAME, /* bool only */
#include "kernels/reference/binary_ops.inc"
} wick_compare_op;

/* A broadcast iteration space: `dims` of the output and the element strides
 * of each operand in it (0 on broadcast dimensions). */
typedef struct wick_broadcast {
  int32_t rank;
  int32_t dims[WICK_MAX_RANK];
  int64_t a_strides[WICK_MAX_RANK];
  int64_t b_strides[WICK_MAX_RANK];
} wick_broadcast;

/* out = clamp(a op b, lo, hi). Float division by zero follows IEEE. */
void wick_f32_binary__reference(wick_binary_op op, const wick_broadcast *bc, const float *a,
                                const float *b, float *out, float lo, float hi);
/* Integer variants: the op checked that no divisor is zero before calling.
 * Overflow wraps (two's complement), as in LiteRT. */
void wick_i32_binary__reference(wick_binary_op op, const wick_broadcast *bc, const int32_t *a,
                                const int32_t *b, int32_t *out, int32_t lo, int32_t hi);
void wick_i64_binary__reference(wick_binary_op op, const wick_broadcast *bc, const int64_t *a,
                                const int64_t *b, int64_t *out);
/* Comparisons and logical ops write bools. `type` is the operand type. */
void wick_compare__reference(wick_compare_op op, wick_dtype type, const wick_broadcast *bc,
                             const void *a, const void *b, bool *out);
/* BITWISE_XOR on the bit patterns of `elem_size`-byte integers (1, 2 or 4):
 * signed and unsigned types give the same bits. */
void wick_bitwise_xor__reference(size_t elem_size, const wick_broadcast *bc, const void *a,
                                 const void *b, void *out);
/* ATAN2 on same-shape operands: out[i] = atan2(y[i], x[i]) (C's atan2f /
 * atan2, as LiteRT's std::atan2). */
void wick_f32_atan2__reference(int64_t n, const float *y, const float *x, float *out);
void wick_f64_atan2__reference(int64_t n, const double *y, const double *x, double *out);

/* ---- convolution family (float) ---- */

typedef struct wick_conv_shape {
  int32_t batch, in_h, in_w, in_c;
  int32_t out_h, out_w, out_c;
  int32_t k_h, k_w;
  int32_t stride_h, stride_w, dilation_h, dilation_w;
  int32_t pad_top, pad_left;
  int32_t groups;     /* CONV_2D: in_c / filter's input channels */
  int32_t multiplier; /* DEPTHWISE_CONV_2D: out_c / in_c */
} wick_conv_shape;

/* The interior output columns [*lo, *hi) of a convolution row: those whose
 * taps x*stride_w - pad_left + kx*dilation_w (kx < k_w) all lie inside
 * [0, in_w), so the optimized kernels read them without bounds checks.
 * 0 <= *lo <= *hi <= out_w; an empty range when no column is interior. */
static inline void wick_conv_interior_columns(const wick_conv_shape *s, int32_t *lo, int32_t *hi) {
  const int64_t sw = s->stride_w, pl = s->pad_left;
  const int64_t last = (int64_t)s->in_w - 1 + pl - (int64_t)(s->k_w - 1) * s->dilation_w;
  int64_t x_lo = pl > 0 ? (pl + sw - 1) / sw : 0, x_hi = last >= 0 ? last / sw + 1 : 0;
  if (x_hi > s->out_w) x_hi = s->out_w;
  if (x_lo > s->out_w) x_lo = s->out_w;
  if (x_hi < x_lo) x_hi = x_lo;
  *lo = (int32_t)x_lo;
  *hi = (int32_t)x_hi;
}

/* out[n,y,x,o] = clamp(bias[o] + sum filter[o,ky,kx,i] * in[n, y*s-p+ky*d, x*s-p+kx*d, g*ci+i]) */
void wick_f32_conv2d__reference(const wick_conv_shape *s, const float *input, const float *filter,
                                const float *bias, float *output, float lo, float hi);
/* out[n,y,x,c*M+m] = clamp(bias + sum filter[0,ky,kx,c*M+m] * in[n, .., .., c]) */
void wick_f32_depthwise_conv2d__reference(const wick_conv_shape *s, const float *input,
                                          const float *filter, const float *bias, float *output,
                                          float lo, float hi);

/* CONV_3D / CONV_3D_TRANSPOSE on NDHWC. in_* and out_* are the op's input
 * and output; pad_* the leading padding of the forward conv (input -> output
 * for CONV_3D, output -> input for the transpose). */
typedef struct wick_conv3d_shape {
  int32_t batch, in_d, in_h, in_w, in_c;
  int32_t out_d, out_h, out_w, out_c;
  int32_t k_d, k_h, k_w;
  int32_t stride_d, stride_h, stride_w, dilation_d, dilation_h, dilation_w;
  int32_t pad_front, pad_top, pad_left;
} wick_conv3d_shape;
/* CONV_3D, filter [k_d, k_h, k_w, in_c, out_c]: out[n,z,y,x,o] = clamp(sum
 * in[n, z*s-p+kz*d, .., .., i] * filter[kz,ky,kx,i,o] + bias[o]). */
void wick_f32_conv3d__reference(const wick_conv3d_shape *s, const float *input, const float *filter,
                                const float *bias, float *output, float lo, float hi);
/* CONV_3D_TRANSPOSE, filter [k_d, k_h, k_w, out_c, in_c]: each input pixel
 * (n,z,y,x) adds sum_i in[.., i] * filter[kz,ky,kx,o,i] at output
 * (z*s-p+kz*d, ..); then bias and clamp. */
void wick_f32_conv3d_transpose__reference(const wick_conv3d_shape *s, const float *input,
                                          const float *filter, const float *bias, float *output,
                                          float lo, float hi);

/* out[m, n] = clamp(bias[n] + sum_k in[m, k] * w[n, k]) */
void wick_f32_fully_connected__reference(int64_t m, int64_t n, int64_t k, const float *input,
                                         const float *weights, const float *bias, float *output,
                                         float lo, float hi);

/* ---- hybrid: float activations, int8 symmetric weights (hybrid.c) ---- */

/* x[k] -> q[k] int8 in [-127, 127] with scale max|x| / 127 (returned; 1 for a
 * zero row), LiteRT's SymmetricQuantizeFloats. */
float wick_hybrid_quantize_row__reference(int64_t k, const float *x, int8_t *q);
/* The two halves of a row's quantization, for kernels that find the row's range and quantize
 * it with vector code: the symmetric scale of the range [lo, hi] (0 for a zero range, else
 * max(|lo|, |hi|) / 127 with *inverse = 127 / that), the asymmetric scale and zero point
 * (AsymmetricQuantizeFloats, for lo != hi), and the values: q = clamp(roundf(offset + x *
 * inverse), qmin, 127), NaN -> 0 (offset 0 and qmin -127 for the symmetric form). */
float wick_hybrid_symmetric_params(float lo, float hi, float *inverse);
float wick_hybrid_asymmetric_params(float lo, float hi, int32_t *offset);
void wick_hybrid_quantize_values__reference(int64_t k, const float *x, int8_t *q, float inverse,
                                            float offset, float qmin);
/* c[i * ldc + j] = sum_p a[i * k + p] * b[j * k + p] (int8 rows; int32 sums that wrap): the
 * portable form of the q8 `dots` kernels (q8.h). */
void wick_hybrid_dots__reference(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b,
                                 int32_t *c, size_t ldc);
/* out[m, n] = clamp(bias[n] + (sum_k q(in)[m, k] * w[n, k]) * s_row[m] * s_w[n or 0]);
 * `scratch` holds k int8. `asymmetric` (the option asymmetric_quantize_inputs, TensorFlow's
 * dynamic-range default): each row quantized by wick_hybrid_quantize_asymmetric__reference
 * with its zero point `o`, and the int32 sum corrected by - o * (sum_k w[n, k]) (wrapping),
 * as LiteRT's EvalHybrid. */
void wick_hybrid_fully_connected__reference(int64_t m, int64_t n, int64_t k, const float *input,
                                            const int8_t *weights, const float *weight_scales,
                                            bool per_channel, bool asymmetric, const float *bias,
                                            int8_t *scratch, float *output, float lo, float hi);

/* Output rows [y0, y1) of one image of a hybrid DEPTHWISE_CONV_2D, the same values as
 * wick_hybrid_conv2d__reference (integer sums in another order, the same float rescale) with
 * the channels innermost, so the compiler vectorizes them; `acc` holds out_c uint32.
 * conv_rescale: rescale as CONV_2D does, (acc * s_w) * s_in (a grouped CONV_2D with one
 * channel per group, its filter transposed to the depthwise layout); else acc * (s_w * s_in). */
void wick_hybrid_depthwise_rows(const wick_conv_shape *s, const int8_t *input, int32_t input_offset,
                                float input_scale, const int8_t *filter, const float *filter_scales,
                                bool conv_rescale, const float *bias, float *output, float lo,
                                float hi, int32_t y0, int32_t y1, uint32_t *acc);

/* LiteRT's AsymmetricQuantizeFloats over x[n] (one batch of a hybrid conv):
 * q int8, returns the scale, *offset the zero point. */
float wick_hybrid_quantize_asymmetric__reference(int64_t n, const float *x, int8_t *q,
                                                 int32_t *offset);
/* One image of a hybrid CONV_2D (any groups) or DEPTHWISE_CONV_2D (LiteRT's
 * HybridConvPerChannel / DepthwiseConvHybridPerChannel): int32 sums of
 * w * (q - offset) over in-bounds taps, times the filter's per-channel scale
 * and the input scale in float, plus bias, clamped. */
void wick_hybrid_conv2d__reference(const wick_conv_shape *s, bool depthwise, const int8_t *input,
                                   int32_t input_offset, float input_scale, const int8_t *filter,
                                   const float *filter_scales, const float *bias, float *output,
                                   float lo, float hi);

/* ---- pooling (float, NHWC) ---- */

typedef struct wick_pool_shape {
  int32_t batch, in_h, in_w, channels, out_h, out_w;
  int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
} wick_pool_shape;

/* Average counts in-bounds taps only (TFLite semantics). */
void wick_f32_average_pool__reference(const wick_pool_shape *s, const float *in, float *out,
                                      float lo, float hi);
void wick_f32_max_pool__reference(const wick_pool_shape *s, const float *in, float *out, float lo,
                                  float hi);

/* ---- softmax over the last axis: out = exp(beta*(x - max)) / sum ---- */
void wick_f32_softmax__reference(int64_t rows, int64_t cols, float beta, const float *in,
                                 float *out);

/* ---- reductions ---- */

typedef enum wick_reduce_op {
  WICK_REDUCE_SUM,
  WICK_REDUCE_MEAN,
  WICK_REDUCE_MAX,
  WICK_REDUCE_MIN,
  WICK_REDUCE_PROD,
  WICK_REDUCE_ANY, /* bool */
  WICK_REDUCE_ALL  /* bool */
} wick_reduce_op;

/* Reduces `in` (shape dims[rank]) over the axes with reduced[axis] true into
 * `out` (the kept dims, row-major).
 * `type` is float32, int32, int64 or bool (ANY/ALL). */
void wick_reduce__reference(wick_reduce_op op, wick_dtype type, int32_t rank, const int32_t *dims,
                            const bool *reduced, const void *in, void *out);

/* ---- compute ops: transpose conv, batch matmul, arg min/max, normalization, cumsum, resize ----
 */

/* TRANSPOSE_CONV, gather form. `s` describes the op's input (in_*) and output
 * (out_*), the filter OHWI [out_c, k_h, k_w, in_c], strides and the leading
 * padding of the equivalent forward conv (output -> input). out[n,y,x,o] =
 * clamp(bias[o] + sum in[n,iy,ix,i] * filter[o,ky,kx,i]) over the taps with
 * y = iy*stride_h - pad_top + ky (likewise x). groups/dilation are unused (1). */
/* The input coordinate feeding TRANSPOSE_CONV output coordinate `o` through
 * tap `k` (o + pad - k a non-negative multiple of the stride, divided by it,
 * below in_size), or -1. */
static inline int32_t wick_tconv_source_index(int32_t o, int32_t k, int32_t pad, int32_t stride,
                                              int32_t in_size) {
  int64_t t = (int64_t)o + pad - k;
  if (t < 0 || t % stride != 0) return -1;
  t /= stride;
  return t < in_size ? (int32_t)t : -1;
}
void wick_f32_transpose_conv2d__reference(const wick_conv_shape *s, const float *input,
                                          const float *filter, const float *bias, float *output,
                                          float lo, float hi);

/* BATCH_MATMUL over broadcast batch dims. lhs batch b is [m, k] ([k, m] when
 * adj_x), rhs batch b is [k, n] ([n, k] when adj_y); out batch b is [m, n].
 * The batch index space is batch_dims[batch_rank] (row-major); each operand's
 * batch offset advances by its stride (in elements, 0 on broadcast dims). */
typedef struct wick_batch_matmul_shape {
  int32_t batch_rank;
  int32_t batch_dims[WICK_MAX_RANK];
  int64_t lhs_strides[WICK_MAX_RANK];
  int64_t rhs_strides[WICK_MAX_RANK];
  int64_t m, n, k;
  bool adj_x, adj_y;
} wick_batch_matmul_shape;
void wick_f32_batch_matmul__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                      const float *rhs, float *out);
/* Output rows [row_begin, row_end) of the batches * m rows. */
void wick_f32_batch_matmul_rows__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                           const float *rhs, float *out, int64_t row_begin,
                                           int64_t row_end);
/* BATCH_MATMUL's asymmetric correction, as LiteRT's `total -= column_sum * offset` with a
 * float offset: computed in float, converted toward zero (saturated, where C++ leaves an
 * out-of-range conversion undefined). */
int32_t wick_hybrid_subtract_offset(int32_t total, int32_t column_sum, int32_t offset);
/* Hybrid BATCH_MATMUL (LiteRT's EvalHybrid), output rows [row_begin,
 * row_end) of the batches x m rows, shapes as wick_f32_batch_matmul__reference
 * (float lhs, int8 rhs): each lhs row of k values is quantized at run time,
 * symmetric (wick_hybrid_quantize_row__reference) or with `asymmetric`
 * LiteRT's AsymmetricQuantizeFloats (wick_hybrid_quantize_asymmetric__reference),
 * whose offset times the rhs column's sum is subtracted from the int32 dot
 * product in float and truncated; then out = dot * (row scale * rhs scale of
 * column j, or the one scale) in float. `row` holds k floats, `q` k int8. */
void wick_hybrid_batch_matmul_rows__reference(const wick_batch_matmul_shape *s, const float *lhs,
                                              const int8_t *rhs, const float *rhs_scales,
                                              bool per_channel, bool asymmetric, float *row,
                                              int8_t *q, float *out, int64_t row_begin,
                                              int64_t row_end);

/* ARG_MAX / ARG_MIN over the middle axis of [outer, axis, inner] (axis >= 1).
 * The first index wins ties; a strict comparison means NaNs are skipped unless
 * they come first (as in LiteRT). `in_type`: float32, int32, int64, int8,
 * uint8, bool; `out_type`: int32 or int64. */
void wick_arg_minmax__reference(bool is_max, wick_dtype in_type, int64_t outer, int64_t axis,
                                int64_t inner, const void *in, wick_dtype out_type, void *out);

/* TOPK_V2 over rows of `row_size`: the k largest of each row, largest first,
 * ties by the smaller index (LiteRT's order). `type`: float32, uint8, int8,
 * int16, int32, int64. values [rows, k] of `type`, indices [rows, k] of
 * `index_type` (int32, or int16 when row_size <= 32768); scratch holds
 * 2 * row_size int32. */
void wick_topk__reference(wick_dtype type, int64_t rows, int32_t row_size, int32_t k,
                          const void *in, void *values, wick_dtype index_type, void *indices,
                          int32_t *scratch);

/* LOG_SOFTMAX over rows of `cols`: out = x - max - log(sum exp(x - max)). */
void wick_f32_log_softmax__reference(int64_t rows, int64_t cols, const float *in, float *out);
/* L2_NORMALIZATION over rows: out = x / max(sqrt(sum x^2), epsilon). */
void wick_f32_l2_normalize__reference(int64_t rows, int64_t cols, float epsilon, const float *in,
                                      float *out);

/* CUMSUM over the middle axis of [outer, axis, inner]; `type` float32, int32
 * or int64 (integers wrap). exclusive: each sum leaves out its own element;
 * reverse: sums run from the end. */
void wick_cumsum__reference(wick_dtype type, int64_t outer, int64_t axis, int64_t inner,
                            bool exclusive, bool reverse, const void *in, void *out);

/* RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR on NHWC. The op computes the
 * source coordinate scales (LiteRT's float formulas, see resize.c). */
typedef struct wick_resize_shape {
  int32_t batch, in_h, in_w, channels, out_h, out_w;
  bool align_corners, half_pixel_centers;
} wick_resize_shape;
void wick_f32_resize_bilinear__reference(const wick_resize_shape *s, const float *in, float *out);
/* Output rows [row_begin, row_end) of the batch x out_h rows (the same values as one call). */
void wick_f32_resize_bilinear_rows__reference(const wick_resize_shape *s, const float *in,
                                              float *out, int64_t row_begin, int64_t row_end);
/* The pieces of the bilinear formulas that optimized kernels share: an axis' scale, and the
 * taps lo, hi of output coordinate v with the weight `frac` of hi (the reference's values:
 * row o = p(lo) * (1 - frac) ... as wick_f32_resize_bilinear_rows__reference sums them). */
float wick_resize_axis_scale(int32_t in, int32_t out, bool align_corners);
void wick_resize_bilinear_taps(int32_t v, float scale, bool half_pixel, int32_t in, int32_t *lo,
                               int32_t *hi, float *frac);
/* Copies whole pixels of `elem_size`-byte elements. */
void wick_resize_nearest__reference(const wick_resize_shape *s, size_t elem_size, const void *in,
                                    void *out);

/* ---- unary elementwise and activations (unary.c) ----
 * Float semantics follow LiteRT's reference kernels and IEEE-754 (no flush
 * of denormals): NaN propagates through every op except SIGN's integer types;
 * -0 keeps its sign where the formula keeps it (RELU(-0) = -0, NEG(0) = -0).
 * LOG(x<0) = NaN, LOG(±0) = -inf, SQRT(x<0) = NaN, RSQRT(±0) = ±inf.
 * Each op's formula is its KERNEL in unary_ops.inc. */
typedef enum wick_unary_op {
#define WICK_UNARY_F32(NAME, ...) WICK_UNARY_##NAME,
#include "kernels/reference/unary_ops.inc" /* the ops and their formulas, one line each */
#undef WICK_UNARY_F32
} wick_unary_op;

/* out[i] = op(in[i]) for i < n. `out` may equal `in`. */
void wick_f32_unary__reference(wick_unary_op op, int64_t n, const float *in, float *out);
/* Integer variants for ABS, NEG and SIGN (other ops copy). Two's complement
 * wraps: ABS(MIN) = NEG(MIN) = MIN, as in LiteRT. */
void wick_i16_unary__reference(wick_unary_op op, int64_t n, const int16_t *in, int16_t *out);
void wick_i32_unary__reference(wick_unary_op op, int64_t n, const int32_t *in, int32_t *out);
void wick_i64_unary__reference(wick_unary_op op, int64_t n, const int64_t *in, int64_t *out);
/* out = !in (any non-zero byte is true); writes 0/1. */
void wick_bool_not__reference(int64_t n, const bool *in, bool *out);
/* out = x > 0 ? x : alpha * x */
void wick_f32_leaky_relu__reference(int64_t n, float alpha, const float *in, float *out);
/* exact: x/2 * erfc(-x/sqrt2); approximate: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
 * Both evaluated in double and rounded once. */
void wick_f32_gelu__reference(int64_t n, bool approximate, const float *in, float *out);
/* PRELU's select, x >= 0 ? x : x * alpha, as a bit select: the compiler branched on the sign,
 * and random signs mispredict half the time; a loop of it vectorizes. */
static inline float wick_f32_prelu_select(float x, float alpha) {
  const float scaled = x * alpha;
  uint32_t xb, sb;
  memcpy(&xb, &x, sizeof xb);
  memcpy(&sb, &scaled, sizeof sb);
  const uint32_t keep = 0u - (uint32_t)(x >= 0.0f), bits = (xb & keep) | (sb & ~keep);
  float y;
  memcpy(&y, &bits, sizeof y);
  return y;
}
/* PRELU whose alpha varies along the last dimension only (`channels` values; 1: a scalar):
 * rows x channels, the same select as the reference (x >= 0 ? x : x * alpha), in a loop the
 * compiler vectorizes (wick_f32_prelu_select). */
void wick_f32_prelu_channels(int64_t rows, int64_t channels, const float *restrict in,
                             const float *restrict alpha, float *restrict out);
/* out = x >= 0 ? x : x * alpha, alpha broadcast into the output (= input)
 * shape: operand a of `bc` is the input, b is alpha. */
void wick_f32_prelu__reference(const wick_broadcast *bc, const float *in, const float *alpha,
                               float *out);

/* ---- element type conversion (cast.c) ----
 * Types: float32, float16, float64, int8, uint8, int16, int32, int64, bool.
 * Integer -> integer wraps (keeps the low bits); anything -> bool is x != 0
 * (NaN -> true); bool -> number is 0/1. Float -> integer truncates toward
 * zero and saturates to the type's range, with NaN -> 0 (LiteRT 2.x gives
 * the type's maximum for NaN; its older kernels were undefined there).
 * To float16: round to nearest even, overflow to ±inf, NaN stays NaN;
 * integers and float64 go through float32 first, as LiteRT's Eigen::half. */
uint16_t wick_f32_to_f16(float x);
float wick_f16_to_f32(uint16_t h);
/* Converts n elements. `from` == `to` copies. */
void wick_cast__reference(wick_dtype from, wick_dtype to, int64_t n, const void *in, void *out);

/* ---- affine (de)quantization (quantize.c) ----
 * A tensor seen as [outer, channels, inner] with one (scale, zero_point) per
 * channel; per-tensor parameters are channels = 1. real = scale * (q - zp). */
typedef struct wick_quant_layout {
  int64_t outer, channels, inner;
  const float *scale;        /* channels entries */
  const int32_t *zero_point; /* channels entries */
} wick_quant_layout;

/* `type` int8, uint8 or int16: out = (float)(scale * (q - zp)), one rounding. */
void wick_dequantize__reference(wick_dtype type, const wick_quant_layout *q, const void *in,
                                float *out);
/* `type` int8, uint8 or int16: q = clamp(round_half_away(x / scale) + zp),
 * with x / scale in float as LiteRT's reference kernel. Saturates (±inf and
 * huge values clamp); NaN quantizes as 0.0 (to clamp(zp)). Scales are > 0. */
void wick_quantize__reference(wick_dtype type, const wick_quant_layout *q, const float *in,
                              void *out);

/* ---- quantized int8 / uint8 / int16 kernels (quantized.c) ----
 * Bit-exact with LiteRT's reference kernels. Requantization uses a Q31
 * multiplier and a power-of-two shift (> 0: left) from
 * src/ops/quantization.c, applied with "double rounding": a saturating
 * rounding doubling high multiply, then a rounding right shift (ties away
 * from zero). `type` is the activation type: int8 (int8 weights), uint8
 * (uint8 weights, asymmetric), int16 (int8 weights, "16x8"). */
int32_t wick_q_srdhm(int32_t a, int32_t b);
int32_t wick_q_rounding_divide_by_pot(int32_t x, int32_t exponent); /* exponent in [0, 31] */
int32_t wick_q_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift);
/* LiteRT's int64 overload: multiplier rounded to Q15, one rounding shift;
 * shift in [-31, 14]. */
int32_t wick_q_multiply_by_quantized_multiplier_i64(int64_t x, int32_t multiplier, int32_t shift);

/* CONV_2D / DEPTHWISE_CONV_2D. acc = sum (w + filter_offset) * (x + input_offset)
 * (+ bias), out = clamp(mbqm(acc, multiplier[o], shift[o]) + output_offset).
 * acc64: accumulate in 64 bits with an int64 bias (16x8 with int64 bias);
 * otherwise 32 bits (wrapping) with an int32 bias. bias may be NULL. */
typedef struct wick_qconv_params {
  int32_t input_offset;      /* -input zero point */
  int32_t filter_offset;     /* -filter zero point (uint8; 0 for int8 weights) */
  int32_t output_offset;     /* output zero point */
  const int32_t *multiplier; /* per output channel */
  const int32_t *shift;      /* per output channel */
  int32_t act_min, act_max;
} wick_qconv_params;
void wick_q_conv2d__reference(wick_dtype type, const wick_conv_shape *s, const wick_qconv_params *p,
                              const void *input, const void *filter, const void *bias, bool acc64,
                              void *output);
void wick_q_depthwise_conv2d__reference(wick_dtype type, const wick_conv_shape *s,
                                        const wick_qconv_params *p, const void *input,
                                        const void *filter, const void *bias, bool acc64,
                                        void *output);

/* TRANSPOSE_CONV, shapes as wick_f32_transpose_conv2d__reference (filter
 * OHWI [out_c, k_h, k_w, in_c]), arithmetic and requantization as the conv. */
void wick_q_transpose_conv2d__reference(wick_dtype type, const wick_conv_shape *s,
                                        const wick_qconv_params *p, const void *input,
                                        const void *filter, const void *bias, bool acc64,
                                        void *output);

/* FULLY_CONNECTED, input [m, k], weights [n, k]. LiteRT's reference kernel
 * requantizes in double: out = clamp((int32)round(acc * scale[o]) +
 * output_offset) with scale[o] = s_in * s_w[o] / s_out. */
typedef struct wick_qfc_params {
  int32_t input_offset, filter_offset, output_offset;
  const double *scale; /* per output channel */
  int32_t act_min, act_max;
} wick_qfc_params;
void wick_q_fully_connected__reference(wick_dtype type, int64_t m, int64_t n, int64_t k,
                                       const wick_qfc_params *p, const void *input,
                                       const void *weights, const void *bias, bool acc64,
                                       void *output);

/* BATCH_MATMUL on quantized operands (lhs/rhs: int8/int8, int16/int8,
 * int16/int16; output the lhs type), shapes as wick_f32_batch_matmul__reference.
 * acc64: 64-bit sums and the int64 requantization (int16 lhs). */
typedef struct wick_qbmm_params {
  int32_t lhs_offset, rhs_offset, output_offset; /* -zp_lhs, -zp_rhs, zp_out */
  int32_t multiplier, shift;
  int32_t act_min, act_max;
} wick_qbmm_params;
/* Output rows [row_begin, row_end) of the batches * m rows. */
void wick_q_batch_matmul_rows__reference(wick_dtype lhs_type, wick_dtype rhs_type,
                                         const wick_batch_matmul_shape *s,
                                         const wick_qbmm_params *p, bool acc64, const void *lhs,
                                         const void *rhs, void *out, int64_t row_begin,
                                         int64_t row_end);

/* ADD / SUB (general scales): inputs offset, shifted left by left_shift (20
 * for 8-bit, 15 for int16), scaled by their multipliers, added (subtracted),
 * requantized to the output, clamped. */
typedef struct wick_qadd_params {
  int32_t input1_offset, input2_offset, output_offset;
  int32_t left_shift;
  int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
} wick_qadd_params;
void wick_q_add__reference(wick_dtype type, bool subtract, const wick_broadcast *bc,
                           const wick_qadd_params *p, const void *a, const void *b, void *out);
/* int8 SQUARED_DIFFERENCE: both inputs rescaled as ADD (left_shift 7), the
 * difference squared in 32 bits, requantized to the output, clamped to
 * [act_min, act_max]. */
void wick_q_squared_difference_i8__reference(const wick_broadcast *bc, const wick_qadd_params *p,
                                             const int8_t *a, const int8_t *b, int8_t *out);
/* int16 ADD/SUB with power-of-two scales and zero points 0: shift1/shift2
 * (<= 0) are log2(s_in / s_out). */
void wick_q_add_pot_i16__reference(bool subtract, const wick_broadcast *bc, int32_t shift1,
                                   int32_t shift2, int32_t act_min, int32_t act_max,
                                   const int16_t *a, const int16_t *b, int16_t *out);
/* EQUAL ... GREATER_EQUAL on int8 / uint8 (LiteRT's comparison with scaling): each input is
 * offset, shifted left by left_shift (8) and multiplied by its own scale's Q31 multiplier
 * (shift <= 0: the scales are below 1); the scaled values are compared. `op` is not a logical
 * op. */
typedef struct wick_qcompare_params {
  int32_t input1_offset, input2_offset; /* -zero points */
  int32_t left_shift;
  int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
} wick_qcompare_params;
void wick_q_compare__reference(wick_compare_op op, wick_dtype type, const wick_broadcast *bc,
                               const wick_qcompare_params *p, const void *a, const void *b,
                               bool *out);
/* MUL: out = clamp(output_offset + mbqm((a + o1) * (b + o2), multiplier, shift)). */
typedef struct wick_qmul_params {
  int32_t input1_offset, input2_offset, output_offset;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
} wick_qmul_params;
void wick_q_mul__reference(wick_dtype type, const wick_broadcast *bc, const wick_qmul_params *p,
                           const void *a, const void *b, void *out);

/* Pools on quantized values (output parameters = input parameters). The
 * average rounds half away from zero over the in-bounds taps. */
void wick_q_average_pool__reference(wick_dtype type, const wick_pool_shape *s, const void *in,
                                    void *out, int32_t lo, int32_t hi);
void wick_q_max_pool__reference(wick_dtype type, const wick_pool_shape *s, const void *in,
                                void *out, int32_t lo, int32_t hi);

/* SOFTMAX over rows (gemmlowp fixed point): int8 -> int8/int16, uint8 ->
 * uint8/int16. Output scale 1/2^bits, offset by the output type's minimum. */
typedef struct wick_qsoftmax_params {
  int32_t input_multiplier, input_left_shift, diff_min;
} wick_qsoftmax_params;
void wick_q_softmax__reference(wick_dtype in_type, wick_dtype out_type, int64_t rows, int64_t cols,
                               const wick_qsoftmax_params *p, const void *in, void *out);
/* Its pieces, for the faster kernels (src/kernels/q8.h): 8-bit inputs differ from their row's
 * maximum by d in [0, 255], so every exp the reference computes is exps[d] (Q0.31; 0 where
 * -d < diff_min, which the reference skips: the outputs and sums then come out the same), and
 * its term of the row's Q12.19 sum is sums[d]. */
void wick_q_softmax_tables(const wick_qsoftmax_params *p, int32_t exps[256], int32_t sums[256]);
/* The row's reciprocal from its sum (the wrapping int32 total of its sums[d]): the output of
 * an element is clamp(rdivpot(srdhm(*scale, exp), *exponent) + out_min, out_min, out_max). */
void wick_q_softmax_row_scale(int32_t sum, int32_t out_bits, int32_t *scale, int32_t *exponent);

/* SOFTMAX through a float table of exp (LiteRT's default int8/uint8 kernel), for the
 * input scales the fixed-point form cannot take (beta * input scale * 2^26 <= 1, where
 * LiteRT's reference kernel aborts): table[255 - v] = expf(-input_scale * beta * v);
 * the output uses the output tensor's scale and zero point. */
void wick_q_softmax_table_populate(float input_scale, float beta, float table[256]);
void wick_q_softmax_table__reference(wick_dtype in_type, wick_dtype out_type, int64_t rows,
                                     int64_t cols, const float table[256], float out_scale,
                                     int32_t out_zp, const void *in, void *out);

/* int16 SOFTMAX (zero points 0, output 1/32768): exp(x - max) through a table
 * over [-10, 0] (the input rescaled by multiplier/shift to 65535 steps of
 * 10/65535), the sum's reciprocal through a 1/(1+x) table, interpolated. */
typedef enum wick_q_lut16_fn { WICK_Q_LUT16_EXP, WICK_Q_LUT16_ONE_OVER_ONE_PLUS_X } wick_q_lut16_fn;
void wick_q_lut16_populate(wick_q_lut16_fn fn, double in_scale, int32_t in_zp, double out_scale,
                           int32_t out_zp, int16_t lut[513]);
void wick_q_softmax_i16__reference(int64_t rows, int64_t cols, int32_t multiplier, int32_t shift,
                                   const int16_t exp_lut[513], const int16_t recip_lut[513],
                                   const int16_t *in, int16_t *out);

/* 8-bit lookup tables (LOGISTIC, TANH): lut[(uint8)q] = quantized f(real(q)),
 * computed in float as LiteRT's LUTPopulate. */
typedef enum wick_q_lut_fn {
  WICK_Q_LUT_LOGISTIC,
  WICK_Q_LUT_TANH,
  WICK_Q_LUT_GELU,       /* x/2 erfc(-x/sqrt2), in float */
  WICK_Q_LUT_GELU_APPROX /* x/2 (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))), in float */
} wick_q_lut_fn;
void wick_q_lut8_populate(wick_dtype type, wick_q_lut_fn fn, float in_scale, int32_t in_zp,
                          float out_scale, int32_t out_zp, uint8_t lut[256]);
void wick_q_lut8__reference(int64_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out);
/* int16 LOGISTIC and TANH as LiteRT's reference kernels (zero points 0, output
 * scale 2^-15): the input is rescaled to steps of 1/12288 (x * multiplier,
 * rounded, >> shift) and sigmoid is interpolated linearly in `table`
 * (tanh(x) = 2 sigmoid(2x) - 1, with one more bit of input and of output).
 * wick_q16_sigmoid_rescale gives multiplier and shift for an input scale as
 * LiteRT's prepare does (a power-of-two scale of 2^-12, or 2^-11 for TANH,
 * takes 3 << shift exactly); false when x * multiplier would overflow int32
 * (scales above ~5) or the multiplier truncates to 0 (below ~4e-14): LiteRT's
 * own arithmetic overflows there. */
bool wick_q16_sigmoid_rescale(double in_scale, bool tanh, int32_t *multiplier, int32_t *shift);
/* True when log2(x) is within 1e-3 of an integer, which it stores (LiteRT's
 * CheckedLog2: the power-of-two test of its int16 scales). */
bool wick_q_checked_log2(double x, int32_t *log2_rounded);
void wick_q16_sigmoid_table(uint16_t table[256]);
void wick_q16_logistic__reference(int64_t n, const uint16_t table[256], int32_t multiplier,
                                  int32_t shift, const int16_t *in, int16_t *out);
void wick_q16_tanh__reference(int64_t n, const uint16_t table[256], int32_t multiplier,
                              int32_t shift, const int16_t *in, int16_t *out);
/* int8 RSQRT as LiteRT's RsqrtEvalQuantized: lut[(uint8)q] for q - in_zp > 0
 * (fixed-point inverse square root, then the output multiplier 1 / (sqrt(s_in)
 * s_out)); q == in_zp gives 127. Inputs below in_zp are the caller's error. */
/* int8 L2_NORMALIZATION over rows (LiteRT's integer kernel): per row, the sum of squares of
 * x - zero_point (32 bits, wrapping) gives 1/sqrt as a multiplier and shift (LiteRT's
 * GetInvSqrtQuantizedMultiplierExp); each element is mbqm(x - zero_point, multiplier,
 * shift + 7), clamped to int8: the output scale is 1/128, zero point 0. */
void wick_q_l2_normalize_i8__reference(int64_t rows, int64_t cols, int32_t zero_point,
                                       const int8_t *in, int8_t *out);
void wick_q_rsqrt_lut8_populate(int32_t in_zp, int32_t out_multiplier, int32_t out_shift,
                                int32_t out_zp, uint8_t lut[256]);

/* int16 RSQRT (zero points 0): LiteRT's 513-entry interpolated table of
 * 1/sqrt(x) (x <= 0 gives 32767 * out_scale) built in float arithmetic, and
 * the interpolated int16 table lookup every int16 table op shares. */
void wick_q_rsqrt_lut16_populate(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                                 int16_t lut[513]);
void wick_q_lut16__reference(int64_t n, const int16_t lut[513], const int16_t *in, int16_t *out);

/* HARD_SWISH (int8/uint8), LiteRT's 16-bit fixed-point formulation. */
typedef struct wick_qhard_swish_params {
  int32_t input_zero_point, output_zero_point;
  int16_t output_multiplier_fixedpoint_int16, reluish_multiplier_fixedpoint_int16;
  int32_t output_multiplier_exponent, reluish_multiplier_exponent;
} wick_qhard_swish_params;
void wick_q_hard_swish__reference(wick_dtype type, int64_t n, const wick_qhard_swish_params *p,
                                  const void *in, void *out);

/* MEAN / SUM: int32 (wrapping) sums over the reduced axes into `scratch`
 * (one int32 per output), out = clamp(mbqm(sum - input_zero_point * count,
 * multiplier, shift) + output_zero_point). The op folds 1/count into the
 * multiplier for MEAN. An empty input gives zeros. */
typedef struct wick_qreduce_params {
  int32_t input_zero_point, output_zero_point, multiplier, shift;
} wick_qreduce_params;
void wick_q_reduce_sum__reference(wick_dtype type, int32_t rank, const int32_t *dims,
                                  const bool *reduced, const wick_qreduce_params *p, const void *in,
                                  void *out, int32_t *scratch);

/* QUANTIZE of an integer input and the quantized RELU family: out =
 * clamp(mbqm(q - in_zp, m, s) + out_zp, lo, hi), [lo, hi] inside the output
 * type. in: int8/uint8/int16/int32, out: int8/uint8/int16/int32. */
void wick_q_requantize__reference(wick_dtype in_type, wick_dtype out_type, int64_t n, int32_t in_zp,
                                  int32_t out_zp, int32_t multiplier, int32_t shift, int32_t lo,
                                  int32_t hi, const void *in, void *out);
/* CONCATENATION's float rescaling copy (8-bit): out = clamp((int32)roundf(q *
 * scale + bias) + out_zp). */
void wick_q_rescale8__reference(wick_dtype type, int64_t n, float scale, float bias, int32_t out_zp,
                                const void *in, void *out);

/* LEAKY_RELU: x = q - in_zp; out = out_zp + mbqm(x, identity) for x >= 0,
 * out_zp -/+ mbqm(x, |alpha|) otherwise (alpha_negative: subtract). */
typedef struct wick_qleaky_params {
  int32_t input_zero_point, output_zero_point;
  int32_t identity_multiplier, identity_shift, alpha_multiplier, alpha_shift;
  bool alpha_negative;
} wick_qleaky_params;
void wick_q_leaky_relu__reference(wick_dtype type, int64_t n, const wick_qleaky_params *p,
                                  const void *in, void *out);
/* PRELU with alpha broadcast (operand b of `bc`): x = q + input_offset;
 * x >= 0: mbqm(x, m1, s1); else mbqm(x * (alpha + alpha_offset), m2, s2);
 * plus output_offset, clamped to the type. */
typedef struct wick_qprelu_params {
  int32_t input_offset, alpha_offset, output_offset;
  int32_t multiplier1, shift1, multiplier2, shift2;
} wick_qprelu_params;
void wick_q_prelu__reference(wick_dtype type, const wick_broadcast *bc, const wick_qprelu_params *p,
                             const void *in, const void *alpha, void *out);
/* MAXIMUM / MINIMUM and REDUCE_MAX / REDUCE_MIN on the raw quantized values
 * (LiteRT does not requantize them). */
void wick_q_maximum_minimum__reference(wick_dtype type, bool is_max, const wick_broadcast *bc,
                                       const void *a, const void *b, void *out);
void wick_q_reduce_maxmin__reference(wick_dtype type, bool is_max, int32_t rank,
                                     const int32_t *dims, const bool *reduced, const void *in,
                                     void *out);

/* RESIZE_BILINEAR on quantized values (output parameters = input's), as
 * LiteRT: int8/int16 in integer arithmetic (1/1024 coordinates, rounding
 * half away from zero), uint8 with float weights (+ 0.5, truncated). */
void wick_q_resize_bilinear__reference(wick_dtype type, const wick_resize_shape *s, const void *in,
                                       void *out);

/* ---- SVDF (svdf.c): float, and int8 input / int16 state / int8 output ----
 * input [batch, input_size], weights_feature [filters, input_size],
 * weights_time [filters, memory], bias [filters / rank] (may be NULL),
 * state [batch, filters * memory] (updated in place), output
 * [batch, filters / rank]. scratch: batch * filters elements. */
typedef struct wick_svdf_shape {
  int64_t batch, input_size, filters, memory, rank;
} wick_svdf_shape;
void wick_f32_svdf__reference(const wick_svdf_shape *s, const float *input, const float *wf,
                              const float *wt, const float *bias, float *state, float *scratch,
                              float *output, float lo, float hi);
typedef struct wick_qsvdf_params {
  int32_t input_zero_point, output_zero_point;
  int32_t multiplier1, shift1; /* s_in * s_wf / s_state */
  int32_t multiplier2, shift2; /* s_state * s_wt / s_out */
} wick_qsvdf_params;
void wick_q_svdf__reference(const wick_svdf_shape *s, const wick_qsvdf_params *p,
                            const int8_t *input, const int8_t *wf, const int16_t *wt,
                            const int32_t *bias, int16_t *state, int32_t *scratch, int8_t *output);

/* ---- integer LSTM cell, LiteRT's 8x8_16 scheme (lstm.c) ----
 * Without peephole, projection or layer normalization; CIFG allowed. Gate
 * order i, f, c, o (gates[0] unused with CIFG). Biases carry the zero-point
 * corrections (bias - zp * row sums). Weights [n_cell, n_input] and
 * [n_cell, n_output]; states [n_batch, n_output] int8 and [n_batch, n_cell]
 * int16, updated in place; output [n_batch, n_output]; scratch: 4 * n_batch *
 * n_cell int16. */
typedef struct wick_qlstm_gate {
  const int8_t *input_weights, *recurrent_weights;
  const int32_t *input_bias, *recurrent_bias;
  int32_t input_multiplier, input_shift, recurrent_multiplier, recurrent_shift;
} wick_qlstm_gate;
typedef struct wick_qlstm_params {
  int64_t n_input, n_cell, n_output;
  bool cifg;
  wick_qlstm_gate gates[4];
  int32_t cell_scale; /* log2 of the cell state's scale, in [-15, -9] */
  int16_t cell_clip;  /* 0: none */
  int32_t hidden_multiplier, hidden_shift, hidden_zero_point;
} wick_qlstm_params;
void wick_q_lstm_step__reference(const wick_qlstm_params *p, int64_t n_batch, const int8_t *x,
                                 int8_t *output_state, int16_t *cell_state, int8_t *output,
                                 int16_t *scratch);
/* Float LSTM cell, same layout (gate order i, f, c, o; gate 0 unused with
 * CIFG); `activation` for the cell gate and the output (NONE, RELU,
 * RELU_N1_TO_1, RELU6 or TANH); scratch: 4 * n_batch * n_cell floats. */
typedef struct wick_f32_lstm_params {
  int64_t n_input, n_cell, n_output;
  bool cifg;
  const float *input_weights[4], *recurrent_weights[4], *bias[4];
  int32_t activation; /* a wick_activation */
  float cell_clip;    /* 0: none */
} wick_f32_lstm_params;
void wick_f32_lstm_step__reference(const wick_f32_lstm_params *p, int64_t n_batch, const float *x,
                                   float *output_state, float *cell_state, float *output,
                                   float *scratch);
/* gemmlowp's 16-bit logistic and tanh of a raw value with `bits` integer
 * bits (Q bits.15-bits), results in Q0.15. */
int16_t wick_q_logistic16(int16_t a, int32_t bits);
int16_t wick_q_tanh16(int16_t a, int32_t bits);

/* ---- real FFT and complex64 element ops (fft.c) ----
 * Complex64 data is interleaved (re, im) float pairs. */
/* Doubles of `work` that wick_rfft2d__reference needs for these lengths
 * (the caller checks the arithmetic: it is below 4 * fft_h * (fft_w/2 + 1)
 * + 2 * fft_w + 2 * fft_h + 8). */
int64_t wick_rfft2d_work_doubles(int32_t fft_h, int32_t fft_w);
/* TFLite's RFFT2D over the last two dims of `slices` [in_h, in_w] float
 * slices: each is cropped or zero-padded to [fft_h, fft_w] (powers of two,
 * >= 1) and transformed; out holds `slices` [fft_h, fft_w/2 + 1] complex64
 * slices, X[u][v] = sum_{y,x} in[y][x] * exp(-2 pi i (u y / fft_h + v x / fft_w)).
 * Computed in double (LiteRT's kernel is double too) and rounded to float once. */
void wick_rfft2d__reference(int64_t slices, int32_t in_h, int32_t in_w, int32_t fft_h,
                            int32_t fft_w, const float *in, float *out, double *work);
typedef enum wick_complex_part {
  WICK_COMPLEX_REAL,
  WICK_COMPLEX_IMAG,
  WICK_COMPLEX_ABS /* hypotf: no overflow or underflow in the squares */
} wick_complex_part;
/* Complex64 MUL over a broadcast (binary.c): the textbook product in float,
 * (ar*br - ai*bi) + (ar*bi + ai*br) i, with no inf/NaN recovery. */
void wick_c64_mul__reference(const wick_broadcast *bc, const float *a, const float *b, float *out);
/* out[i] = part(in[i]) for n complex64 values. */
void wick_complex_part__reference(wick_complex_part part, int64_t n, const float *in, float *out);
/* The real 1-D DFT in double that the audio kernels share: w (n doubles)
 * gets exp(-2 pi i k / n) for k < n / 2 as (re, im) pairs; then
 * X[k] = sum_j x[j] exp(-2 pi i j k / n) for k <= n / 2 into X (n + 2
 * doubles, (re, im) pairs), n a power of two >= 1; z is n doubles of work. */
void wick_fft_twiddles_f64(int64_t n, double *w);
void wick_real_fft_f64(int64_t n, const double *x, const double *w, double *z, double *X);

/* ---- audio custom ops: AudioSpectrogram and Mfcc (audio.c) ---- */
/* The FFT length of a window: the least power of two >= window (<= 2^30). */
int32_t wick_spectrogram_fft_length(int32_t window);
/* Doubles of `work` that wick_spectrogram__reference needs: 5 * fft_length + 2
 * (the window, the padded frame, twiddles, FFT work and the spectrum). */
int64_t wick_spectrogram_work_doubles(int32_t window);
/* LiteRT's AudioSpectrogram. in: [samples, channels] float; out: [channels,
 * frames, fft_length/2 + 1] with frames = 1 + (samples - window) / stride
 * (the caller computes it; 0 when samples < window). Frame f of channel c is
 * samples [f * stride, f * stride + window) times the periodic Hann window
 * 0.5 - 0.5 cos(2 pi j / window), zero-padded to fft_length; each bin is
 * re^2 + im^2 of its DFT, computed in double and rounded to float, then
 * sqrtf of that float unless magnitude_squared. */
void wick_spectrogram__reference(int64_t samples, int64_t channels, int32_t window, int32_t stride,
                                 int64_t frames, bool magnitude_squared, const float *in,
                                 float *out, double *work);
typedef struct wick_mfcc_params {
  double lower, upper; /* frequency limits in Hz, 0 <= lower < upper */
  int32_t filterbank;  /* mel channels >= 1 */
  int32_t dct;         /* coefficients, 1 <= dct <= filterbank */
  double sample_rate;  /* > 0 */
} wick_mfcc_params;
/* Doubles of `work` that wick_mfcc__reference needs: dct * filterbank +
 * 2 * filterbank + 2 * bins + 1 (the caller checks the arithmetic). */
int64_t wick_mfcc_work_doubles(int32_t bins, int32_t filterbank, int32_t dct);
/* LiteRT's Mfcc on `frames` squared-magnitude spectra of `bins` (>= 2)
 * floats, `dct` floats out per frame. In double throughout, as LiteRT:
 * sqrt of each bin, a triangular mel filterbank (mel = 1127 log1p(f / 700),
 * filterbank + 1 centres spaced evenly between lower and upper, bins from
 * int(1.5 + lower / hz_per_bin) to int(upper / hz_per_bin) with hz_per_bin =
 * sample_rate / 2 / (bins - 1), DC excluded), log(max(x, 1e-12)), then the
 * DCT-II sqrt(2 / filterbank) sum_j x[j] cos(pi i (j + 0.5) / filterbank),
 * rounded to float. When upper / hz_per_bin reaches bins (upper at least
 * one bin above the Nyquist frequency) LiteRT's filterbank gives up and
 * every output is 0; so does this. */
void wick_mfcc__reference(const wick_mfcc_params *p, int64_t frames, int32_t bins, const float *in,
                          float *out, double *work);

#endif /* WICK_KERNELS_REFERENCE_H */
