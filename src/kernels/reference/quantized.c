/*
 * quantized.c — reference kernels on quantized integers (int8, legacy uint8,
 * int16 activations): the executable specification, bit-exact with LiteRT's
 * reference kernels (its BUILTIN_REF resolver).
 *
 * Fixed-point arithmetic ("double rounding", docs/format.md):
 *   srdhm(a, b)   = saturating rounding doubling high multiply: (a*b + nudge)
 *                   / 2^31 truncated, nudge = 2^30 (a*b >= 0) or 1 - 2^30;
 *                   srdhm(INT32_MIN, INT32_MIN) = INT32_MAX.
 *   rdivpot(x, e) = x / 2^e rounded to nearest, ties away from zero.
 *   mbqm(x, m, s) = rdivpot(srdhm(x * 2^max(s,0), m), max(-s,0)).
 * The 64-bit variant (16x8 convs with int64 bias) first rounds the Q31
 * multiplier to Q15, then does one rounding shift (LiteRT's int64 overload).
 * Integer overflow wraps (two's complement) wherever LiteRT's int32
 * arithmetic would: accumulators use unsigned arithmetic to stay defined.
 *
 * Layouts as the float kernels (reference.h): NHWC activations, OHWI conv
 * filters, [1, H, W, C*M] depthwise filters, [out, in] FC weights.
 *
 * Type-generic kernels take the element type as a wick_dtype; each public
 * kernel dispatches once to an always-inlined body instantiated with a
 * constant type, so the per-element load/store switch folds away.
 * The activations and table-driven ops are in quantized_activations.c.
 * Next: src/ops/quantization.c (the parameters), the src/ops files named
 * *_quantized.c (the operators).
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/quantized_common.h"

/* ---------------------------------------------------------------- primitives
 * (the inline forms are in quantized_common.h) */

int32_t wick_q_srdhm(int32_t a, int32_t b) { return srdhm(a, b); }
int32_t wick_q_rounding_divide_by_pot(int32_t x, int32_t exponent) { return rdivpot(x, exponent); }
int32_t wick_q_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift) {
  return mbqm(x, multiplier, shift);
}
int32_t wick_q_multiply_by_quantized_multiplier_i64(int64_t x, int32_t multiplier, int32_t shift) {
  return mbqm64(x, multiplier, shift);
}

/* Requantizes one accumulator of output channel c and stores it. */
INLINE void conv_store(wick_dtype t, const wick_qconv_params *p, bool bias64, uint32_t acc32,
                       int64_t acc64, const void *bias, int32_t c, void *out, int64_t o) {
  int32_t v;
  if (bias64) {
    if (bias) acc64 += ((const int64_t *)bias)[c];
    v = mbqm64(acc64, p->multiplier[c], p->shift[c]);
  } else {
    if (bias) acc32 += (uint32_t)((const int32_t *)bias)[c];
    v = mbqm((int32_t)acc32, p->multiplier[c], p->shift[c]);
  }
  v = add32(v, p->output_offset);
  st(t, out, o, clamp32(v, p->act_min, p->act_max));
}

/* ---------------------------------------------------------------- convolution */

/* out[n,y,x,o] = requant(bias[o] + sum (w + filter_offset) * (in + input_offset))
 * over the in-bounds taps of group g = o / (out_c / groups). */
INLINE void conv_body(wick_dtype in_t, wick_dtype w_t, const wick_conv_shape *s,
                      const wick_qconv_params *p, const void *input, const void *filter,
                      const void *bias, bool bias64, void *output) {
  const int32_t cin_g = s->in_c / s->groups, cout_g = s->out_c / s->groups;
  const int32_t io = p->input_offset, fo = p->filter_offset;
  int64_t o = 0;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t oc = 0; oc < s->out_c; oc++, o++) {
          const int32_t g = oc / cout_g;
          uint32_t acc32 = 0;
          int64_t acc64 = 0;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            const int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
            if (iy < 0 || iy >= s->in_h) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              const int64_t ix =
                  (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
              if (ix < 0 || ix >= s->in_w) continue;
              const int64_t ib =
                  (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c + (int64_t)g * cin_g;
              const int64_t wb = (((int64_t)oc * s->k_h + ky) * s->k_w + kx) * cin_g;
              for (int32_t i = 0; i < cin_g; i++) {
                const int32_t prod =
                    (ld(w_t, filter, wb + i) + fo) * (ld(in_t, input, ib + i) + io);
                if (bias64)
                  acc64 += prod;
                else
                  acc32 += (uint32_t)prod;
              }
            }
          }
          conv_store(in_t, p, bias64, acc32, acc64, bias, oc, output, o);
        }
}

void wick_q_conv2d__reference(wick_dtype type, const wick_conv_shape *s, const wick_qconv_params *p,
                              const void *input, const void *filter, const void *bias, bool bias64,
                              void *output) {
#define CONV_CALL(IT, WT) conv_body(IT, WT, s, p, input, filter, bias, bias64, output)
  DISPATCH_ACT(type, CONV_CALL);
#undef CONV_CALL
}

/* out[n,y,x,c*M+m] = requant(bias + sum (w[0,ky,kx,c*M+m] + fo) * (in[..,c] + io)) */
INLINE void dwconv_body(wick_dtype in_t, wick_dtype w_t, const wick_conv_shape *s,
                        const wick_qconv_params *p, const void *input, const void *filter,
                        const void *bias, bool bias64, void *output) {
  const int32_t io = p->input_offset, fo = p->filter_offset;
  int64_t o = 0;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t c = 0; c < s->in_c; c++)
          for (int32_t m = 0; m < s->multiplier; m++, o++) {
            const int32_t oc = c * s->multiplier + m;
            uint32_t acc32 = 0;
            int64_t acc64 = 0;
            for (int32_t ky = 0; ky < s->k_h; ky++) {
              const int64_t iy =
                  (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
              if (iy < 0 || iy >= s->in_h) continue;
              for (int32_t kx = 0; kx < s->k_w; kx++) {
                const int64_t ix =
                    (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
                if (ix < 0 || ix >= s->in_w) continue;
                const int64_t ii = (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c + c;
                const int64_t wi = ((int64_t)ky * s->k_w + kx) * s->out_c + oc;
                const int32_t prod = (ld(w_t, filter, wi) + fo) * (ld(in_t, input, ii) + io);
                if (bias64)
                  acc64 += prod;
                else
                  acc32 += (uint32_t)prod;
              }
            }
            conv_store(in_t, p, bias64, acc32, acc64, bias, oc, output, o);
          }
}

void wick_q_depthwise_conv2d__reference(wick_dtype type, const wick_conv_shape *s,
                                        const wick_qconv_params *p, const void *input,
                                        const void *filter, const void *bias, bool bias64,
                                        void *output) {
#define DW_CALL(IT, WT) dwconv_body(IT, WT, s, p, input, filter, bias, bias64, output)
  DISPATCH_ACT(type, DW_CALL);
#undef DW_CALL
}

/* TRANSPOSE_CONV in gather form (see transpose_conv.c for the float one):
 * output (y, x) sums the taps whose source y + pad - ky is a multiple of the
 * stride inside the input (wick_tconv_source_index). Integer sums do not
 * depend on the order, so this equals LiteRT's scatter form bit for bit. */
INLINE void tconv_body(wick_dtype in_t, wick_dtype w_t, const wick_conv_shape *s,
                       const wick_qconv_params *p, const void *input, const void *filter,
                       const void *bias, bool acc64, void *output) {
  const int32_t io = p->input_offset, fo = p->filter_offset;
  int64_t o = 0;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t oc = 0; oc < s->out_c; oc++, o++) {
          uint32_t acc32 = 0;
          int64_t acc64v = 0;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            const int32_t iy = wick_tconv_source_index(y, ky, s->pad_top, s->stride_h, s->in_h);
            if (iy < 0) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              const int32_t ix = wick_tconv_source_index(x, kx, s->pad_left, s->stride_w, s->in_w);
              if (ix < 0) continue;
              const int64_t ib = (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c;
              const int64_t wb = (((int64_t)oc * s->k_h + ky) * s->k_w + kx) * s->in_c;
              for (int32_t i = 0; i < s->in_c; i++) {
                const int32_t prod =
                    (ld(w_t, filter, wb + i) + fo) * (ld(in_t, input, ib + i) + io);
                if (acc64)
                  acc64v += prod;
                else
                  acc32 += (uint32_t)prod;
              }
            }
          }
          conv_store(in_t, p, acc64, acc32, acc64v, bias, oc, output, o);
        }
}

void wick_q_transpose_conv2d__reference(wick_dtype type, const wick_conv_shape *s,
                                        const wick_qconv_params *p, const void *input,
                                        const void *filter, const void *bias, bool acc64,
                                        void *output) {
#define TC_CALL(IT, WT) tconv_body(IT, WT, s, p, input, filter, bias, acc64, output)
  DISPATCH_ACT(type, TC_CALL);
#undef TC_CALL
}

/* ---------------------------------------------------------------- fully connected */

/* LiteRT's reference FULLY_CONNECTED requantizes in double:
 * out = clamp((int32)round(acc * scale[o]) + output_offset). */
INLINE void fc_body(wick_dtype in_t, wick_dtype w_t, int64_t m, int64_t n, int64_t k,
                    const wick_qfc_params *p, const void *input, const void *weights,
                    const void *bias, bool bias64, void *output) {
  const int32_t io = p->input_offset, fo = p->filter_offset;
  for (int64_t r = 0; r < m; r++)
    for (int64_t c = 0; c < n; c++) {
      uint32_t acc32 = 0;
      int64_t acc64 = 0;
      for (int64_t i = 0; i < k; i++) {
        const int32_t prod = (ld(w_t, weights, c * k + i) + fo) * (ld(in_t, input, r * k + i) + io);
        if (bias64)
          acc64 += prod;
        else
          acc32 += (uint32_t)prod;
      }
      double acc;
      if (bias64) {
        if (bias) acc64 += ((const int64_t *)bias)[c];
        acc = (double)acc64;
      } else {
        if (bias) acc32 += (uint32_t)((const int32_t *)bias)[c];
        acc = (double)(int32_t)acc32;
      }
      double scaled = round(acc * p->scale[c]);
      /* LiteRT casts without a range check; wick saturates first. */
      int32_t v = scaled <= -2147483648.0  ? INT32_MIN
                  : scaled >= 2147483647.0 ? INT32_MAX
                                           : (int32_t)scaled;
      v = add32(v, p->output_offset);
      st(in_t, output, r * n + c, clamp32(v, p->act_min, p->act_max));
    }
}

void wick_q_fully_connected__reference(wick_dtype type, int64_t m, int64_t n, int64_t k,
                                       const wick_qfc_params *p, const void *input,
                                       const void *weights, const void *bias, bool bias64,
                                       void *output) {
#define FC_CALL(IT, WT) fc_body(IT, WT, m, n, k, p, input, weights, bias, bias64, output)
  DISPATCH_ACT(type, FC_CALL);
#undef FC_CALL
}

/* ---------------------------------------------------------------- batch matmul */

/* out[b][i][j] = requant(sum_p (L(b,i,p) + lhs_offset) * (R(b,p,j) + rhs_offset)),
 * indexing as wick_f32_batch_matmul__reference; one multiplier for the op.
 * Output rows [row_begin, row_end) of the batches * m rows. */
INLINE void qbmm_body(wick_dtype lt, wick_dtype rt, const wick_batch_matmul_shape *s,
                      const wick_qbmm_params *p, bool acc64, const void *lhs, const void *rhs,
                      void *out, int64_t row_begin, int64_t row_end) {
  const int64_t m = s->m, n = s->n, k = s->k;
  if (m == 0 || row_begin >= row_end) return;
  int64_t b = row_begin / m, i = row_begin % m;
  int64_t idx[WICK_MAX_RANK] = {0}; /* the batch multi-index of b */
  for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
    idx[d] = b % s->batch_dims[d];
    b /= s->batch_dims[d];
  }
  b = row_begin / m;
  for (int64_t row = row_begin; row < row_end; b++, i = 0) {
    int64_t lo = 0, ro = 0;
    for (int32_t d = 0; d < s->batch_rank; d++) {
      lo += idx[d] * s->lhs_strides[d];
      ro += idx[d] * s->rhs_strides[d];
    }
    const int64_t ob = b * m * n;
    for (; i < m && row < row_end; i++, row++)
      for (int64_t j = 0; j < n; j++) {
        uint32_t acc32 = 0;
        int64_t acc64v = 0;
        for (int64_t q = 0; q < k; q++) {
          const int32_t a = ld(lt, lhs, lo + (s->adj_x ? q * m + i : i * k + q)) + p->lhs_offset;
          const int32_t c = ld(rt, rhs, ro + (s->adj_y ? j * k + q : q * n + j)) + p->rhs_offset;
          if (acc64)
            acc64v += (int64_t)a * c;
          else
            acc32 += (uint32_t)(a * c);
        }
        int32_t v = acc64 ? mbqm64(acc64v, p->multiplier, p->shift)
                          : mbqm((int32_t)acc32, p->multiplier, p->shift);
        v = add32(v, p->output_offset);
        st(lt, out, ob + i * n + j, clamp32(v, p->act_min, p->act_max));
      }
    for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
      if (++idx[d] < s->batch_dims[d]) break;
      idx[d] = 0;
    }
  }
}

void wick_q_batch_matmul_rows__reference(wick_dtype lhs_type, wick_dtype rhs_type,
                                         const wick_batch_matmul_shape *s,
                                         const wick_qbmm_params *p, bool acc64, const void *lhs,
                                         const void *rhs, void *out, int64_t row_begin,
                                         int64_t row_end) {
  if (lhs_type == WICK_DTYPE_INT8 && rhs_type == WICK_DTYPE_INT8)
    qbmm_body(WICK_DTYPE_INT8, WICK_DTYPE_INT8, s, p, acc64, lhs, rhs, out, row_begin, row_end);
  else if (lhs_type == WICK_DTYPE_INT16 && rhs_type == WICK_DTYPE_INT8)
    qbmm_body(WICK_DTYPE_INT16, WICK_DTYPE_INT8, s, p, acc64, lhs, rhs, out, row_begin, row_end);
  else if (lhs_type == WICK_DTYPE_INT16 && rhs_type == WICK_DTYPE_INT16)
    qbmm_body(WICK_DTYPE_INT16, WICK_DTYPE_INT16, s, p, acc64, lhs, rhs, out, row_begin, row_end);
}

/* ---------------------------------------------------------------- broadcast binary */

/* Calls BODY(ia, ib, io) for every output element of `bc` (row-major). */
#define QBROADCAST_LOOP(bc, BODY)                                                               \
  do {                                                                                          \
    int32_t r_ = (bc)->rank;                                                                    \
    if (r_ == 0) {                                                                              \
      BODY(0, 0, 0);                                                                            \
      break;                                                                                    \
    }                                                                                           \
    int64_t idx_[WICK_MAX_RANK] = {0};                                                          \
    int64_t inner_ = (bc)->dims[r_ - 1];                                                        \
    int64_t sa_ = (bc)->a_strides[r_ - 1], sb_ = (bc)->b_strides[r_ - 1];                       \
    int64_t outer_ = 1;                                                                         \
    for (int32_t d_ = 0; d_ < r_ - 1; d_++) outer_ *= (bc)->dims[d_];                           \
    if (inner_ == 0) break;                                                                     \
    int64_t io_ = 0;                                                                            \
    for (int64_t o_ = 0; o_ < outer_; o_++) {                                                   \
      int64_t ba_ = 0, bb_ = 0;                                                                 \
      for (int32_t d_ = 0; d_ < r_ - 1; d_++) {                                                 \
        ba_ += idx_[d_] * (bc)->a_strides[d_];                                                  \
        bb_ += idx_[d_] * (bc)->b_strides[d_];                                                  \
      }                                                                                         \
      for (int64_t i_ = 0; i_ < inner_; i_++, io_++) BODY(ba_ + i_ * sa_, bb_ + i_ * sb_, io_); \
      for (int32_t d_ = r_ - 2; d_ >= 0; d_--) {                                                \
        if (++idx_[d_] < (bc)->dims[d_]) break;                                                 \
        idx_[d_] = 0;                                                                           \
      }                                                                                         \
    }                                                                                           \
  } while (0)

/* ADD/SUB: each input, offset and shifted left, is scaled to a common scale
 * (twice the larger input scale), summed, and requantized to the output. */
INLINE int32_t qadd_one(const wick_qadd_params *p, bool subtract, int32_t a, int32_t b) {
  const int32_t x = (int32_t)((uint32_t)add32(a, p->input1_offset) << p->left_shift);
  const int32_t y = (int32_t)((uint32_t)add32(b, p->input2_offset) << p->left_shift);
  const int32_t sx = mbqm(x, p->input1_multiplier, p->input1_shift);
  const int32_t sy = mbqm(y, p->input2_multiplier, p->input2_shift);
  const int32_t raw = subtract ? sub32(sx, sy) : add32(sx, sy);
  const int32_t v = add32(mbqm(raw, p->output_multiplier, p->output_shift), p->output_offset);
  return clamp32(v, p->act_min, p->act_max);
}

INLINE void qadd_body(wick_dtype t, bool subtract, const wick_broadcast *bc,
                      const wick_qadd_params *p, const void *a, const void *b, void *out) {
#define QADD_BODY(ia, ib, io) st(t, out, io, qadd_one(p, subtract, ld(t, a, ia), ld(t, b, ib)))
  QBROADCAST_LOOP(bc, QADD_BODY);
#undef QADD_BODY
}

void wick_q_add__reference(wick_dtype type, bool subtract, const wick_broadcast *bc,
                           const wick_qadd_params *p, const void *a, const void *b, void *out) {
#define ADD_CALL(IT, WT) qadd_body(IT, subtract, bc, p, a, b, out)
  DISPATCH_ACT(type, ADD_CALL);
#undef ADD_CALL
}

void wick_q_squared_difference_i8__reference(const wick_broadcast *bc, const wick_qadd_params *p,
                                             const int8_t *a, const int8_t *b, int8_t *out) {
#define SQDIFF_BODY(ia, ib, io)                                                                   \
  do {                                                                                            \
    const int32_t x_ = (int32_t)((uint32_t)(a[ia] + p->input1_offset) << p->left_shift);          \
    const int32_t y_ = (int32_t)((uint32_t)(b[ib] + p->input2_offset) << p->left_shift);          \
    const int32_t diff_ = sub32(mbqm(x_, p->input1_multiplier, p->input1_shift),                  \
                                mbqm(y_, p->input2_multiplier, p->input2_shift));                 \
    const int32_t sq_ = wrap32((int64_t)diff_ * diff_);                                           \
    const int32_t v_ = add32(mbqm(sq_, p->output_multiplier, p->output_shift), p->output_offset); \
    out[io] = (int8_t)clamp32(v_, p->act_min, p->act_max);                                        \
  } while (0)
  QBROADCAST_LOOP(bc, SQDIFF_BODY);
#undef SQDIFF_BODY
}

/* Comparisons of int8 / uint8: each input, offset and shifted left 8 bits, is scaled by its own
 * scale (a multiplier below 1: shift <= 0), and the two scaled values are compared. */
INLINE bool qcompare_one(wick_compare_op op, const wick_qcompare_params *p, int32_t a, int32_t b) {
  const int32_t x = mbqm((int32_t)((uint32_t)add32(a, p->input1_offset) << p->left_shift),
                         p->input1_multiplier, p->input1_shift);
  const int32_t y = mbqm((int32_t)((uint32_t)add32(b, p->input2_offset) << p->left_shift),
                         p->input2_multiplier, p->input2_shift);
  switch (op) { /* each comparison's KERNEL in binary_ops.inc */
#define WICK_COMPARE(NAME, name, KERNEL, ...) \
  case WICK_COMPARE_##NAME: return KERNEL;
    /* one case per comparison record */
#include "kernels/reference/binary_ops.inc"
    default: return false; /* (the logical ops take bools, never quantized values) */
  }
}

INLINE void qcompare_body(wick_dtype t, wick_compare_op op, const wick_broadcast *bc,
                          const wick_qcompare_params *p, const void *a, const void *b, bool *out) {
#define QCMP_BODY(ia, ib, io) out[io] = qcompare_one(op, p, ld(t, a, ia), ld(t, b, ib))
  QBROADCAST_LOOP(bc, QCMP_BODY);
#undef QCMP_BODY
}

void wick_q_compare__reference(wick_compare_op op, wick_dtype type, const wick_broadcast *bc,
                               const wick_qcompare_params *p, const void *a, const void *b,
                               bool *out) {
  if (type == WICK_DTYPE_INT8)
    qcompare_body(WICK_DTYPE_INT8, op, bc, p, a, b, out);
  else if (type == WICK_DTYPE_UINT8)
    qcompare_body(WICK_DTYPE_UINT8, op, bc, p, a, b, out);
}

/* int16 power-of-two scales (LSTM style): ADD rescales the input whose shift
 * is negative by a rounding right shift and adds with int16 saturation; SUB
 * shifts both and subtracts in 32 bits. Then the activation clamp. */
void wick_q_add_pot_i16__reference(bool subtract, const wick_broadcast *bc, int32_t shift1,
                                   int32_t shift2, int32_t act_min, int32_t act_max,
                                   const int16_t *a, const int16_t *b, int16_t *out) {
#define POT_BODY(ia, ib, io)                                                  \
  do {                                                                        \
    int32_t x_ = rdivpot(a[ia], -shift1), y_ = rdivpot(b[ib], -shift2);       \
    int32_t v_ = subtract ? x_ - y_ : clamp32(x_ + y_, INT16_MIN, INT16_MAX); \
    out[io] = (int16_t)clamp32(v_, act_min, act_max);                         \
  } while (0)
  QBROADCAST_LOOP(bc, POT_BODY);
#undef POT_BODY
}

/* MUL: out = clamp(output_offset + mbqm((a + o1) * (b + o2), m, s)). */
INLINE void qmul_body(wick_dtype t, const wick_broadcast *bc, const wick_qmul_params *p,
                      const void *a, const void *b, void *out) {
#define QMUL_BODY(ia, ib, io)                                                        \
  do {                                                                               \
    const int32_t x_ = ld(t, a, ia) + p->input1_offset;                              \
    const int32_t y_ = ld(t, b, ib) + p->input2_offset;                              \
    const int32_t prod_ = wrap32((int64_t)x_ * y_);                                  \
    const int32_t v_ =                                                               \
        add32(p->output_offset, mbqm(prod_, p->output_multiplier, p->output_shift)); \
    st(t, out, io, clamp32(v_, p->act_min, p->act_max));                             \
  } while (0)
  QBROADCAST_LOOP(bc, QMUL_BODY);
#undef QMUL_BODY
}

void wick_q_mul__reference(wick_dtype type, const wick_broadcast *bc, const wick_qmul_params *p,
                           const void *a, const void *b, void *out) {
#define MUL_CALL(IT, WT) qmul_body(IT, bc, p, a, b, out)
  DISPATCH_ACT(type, MUL_CALL);
#undef MUL_CALL
}

/* ---------------------------------------------------------------- pooling */

/* Average over the in-bounds taps, rounded half away from zero by integer
 * division: (sum +- count/2) / count. A window with no in-bounds tap (which
 * SAME/VALID padding never produce) gives 0 before the clamp. */
INLINE void avgpool_body(wick_dtype t, const wick_pool_shape *s, const void *in, void *out,
                         int32_t lo, int32_t hi) {
  int64_t o = 0;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t c = 0; c < s->channels; c++, o++) {
          /* Taps clamped to the input in 64-bit: a huge filter costs nothing. */
          const int64_t y0 = (int64_t)y * s->stride_h - s->pad_top;
          const int64_t x0 = (int64_t)x * s->stride_w - s->pad_left;
          const int64_t ky0 = y0 < 0 ? -y0 : 0, kx0 = x0 < 0 ? -x0 : 0;
          const int64_t ky1 = s->in_h - y0 < s->k_h ? s->in_h - y0 : s->k_h;
          const int64_t kx1 = s->in_w - x0 < s->k_w ? s->in_w - x0 : s->k_w;
          int32_t acc = 0; /* wraps like LiteRT's int32 sum */
          int64_t count = 0;
          for (int64_t ky = ky0; ky < ky1; ky++) {
            const int64_t iy = y0 + ky;
            for (int64_t kx = kx0; kx < kx1; kx++) {
              const int64_t ix = x0 + kx;
              acc = add32(acc, ld(t, in,
                                  (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->channels + c));
              count++;
            }
          }
          int32_t v = 0;
          if (count > 0)
            v = (int32_t)(acc > 0 ? ((int64_t)acc + count / 2) / count
                                  : ((int64_t)acc - count / 2) / count);
          st(t, out, o, clamp32(v, lo, hi));
        }
}

void wick_q_average_pool__reference(wick_dtype type, const wick_pool_shape *s, const void *in,
                                    void *out, int32_t lo, int32_t hi) {
#define AVG_CALL(IT, WT) avgpool_body(IT, s, in, out, lo, hi)
  DISPATCH_ACT(type, AVG_CALL);
#undef AVG_CALL
}

INLINE void maxpool_body(wick_dtype t, const wick_pool_shape *s, const void *in, void *out,
                         int32_t lo, int32_t hi) {
  int32_t tmin, tmax;
  type_range(t, &tmin, &tmax);
  int64_t o = 0;
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t c = 0; c < s->channels; c++, o++) {
          /* Taps clamped to the input in 64-bit: a huge filter costs nothing. */
          const int64_t y0 = (int64_t)y * s->stride_h - s->pad_top;
          const int64_t x0 = (int64_t)x * s->stride_w - s->pad_left;
          const int64_t ky0 = y0 < 0 ? -y0 : 0, kx0 = x0 < 0 ? -x0 : 0;
          const int64_t ky1 = s->in_h - y0 < s->k_h ? s->in_h - y0 : s->k_h;
          const int64_t kx1 = s->in_w - x0 < s->k_w ? s->in_w - x0 : s->k_w;
          int32_t m = tmin;
          for (int64_t ky = ky0; ky < ky1; ky++) {
            const int64_t iy = y0 + ky;
            for (int64_t kx = kx0; kx < kx1; kx++) {
              const int64_t ix = x0 + kx;
              int32_t v = ld(t, in, (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->channels + c);
              if (v > m) m = v;
            }
          }
          st(t, out, o, clamp32(m, lo, hi));
        }
}

void wick_q_max_pool__reference(wick_dtype type, const wick_pool_shape *s, const void *in,
                                void *out, int32_t lo, int32_t hi) {
#define MAX_CALL(IT, WT) maxpool_body(IT, s, in, out, lo, hi)
  DISPATCH_ACT(type, MAX_CALL);
#undef MAX_CALL
}

/* ---------------------------------------------------------------- reductions */

/* MEAN/SUM: int32 sums per output (wrapping), then
 * out = clamp(mbqm(sum - in_zp * count, m, s) + out_zp). */
INLINE void qreduce_body(wick_dtype t, int32_t rank, const int32_t *dims, const bool *reduced,
                         const void *in, void *out, int32_t *sums, const wick_qreduce_params *p) {
  int64_t out_stride[WICK_MAX_RANK];
  int64_t st_ = 1, total = 1;
  for (int32_t i = rank - 1; i >= 0; i--) {
    out_stride[i] = reduced[i] ? 0 : st_;
    if (!reduced[i]) st_ *= dims[i];
    total *= dims[i];
  }
  const int64_t out_count = st_;
  const int64_t count = out_count > 0 ? total / out_count : 0;
  int32_t tmin, tmax;
  type_range(t, &tmin, &tmax);
  for (int64_t o = 0; o < out_count; o++) sums[o] = 0;
  if (total == 0) {
    for (int64_t o = 0; o < out_count; o++) st(t, out, o, 0);
    return;
  }
  int64_t idx[WICK_MAX_RANK] = {0};
  for (int64_t e = 0; e < total; e++) {
    int64_t o = 0;
    for (int32_t d = 0; d < rank; d++) o += idx[d] * out_stride[d];
    sums[o] = add32(sums[o], ld(t, in, e));
    for (int32_t d = rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  for (int64_t o = 0; o < out_count; o++) {
    const int32_t shifted = wrap32((int64_t)sums[o] - (int64_t)p->input_zero_point * count);
    const int32_t v = add32(mbqm(shifted, p->multiplier, p->shift), p->output_zero_point);
    st(t, out, o, clamp32(v, tmin, tmax));
  }
}

void wick_q_reduce_sum__reference(wick_dtype type, int32_t rank, const int32_t *dims,
                                  const bool *reduced, const wick_qreduce_params *p, const void *in,
                                  void *out, int32_t *scratch) {
#define RED_CALL(IT, WT) qreduce_body(IT, rank, dims, reduced, in, out, scratch, p)
  DISPATCH_ACT(type, RED_CALL);
#undef RED_CALL
}

/* ---------------------------------------------------------------- requantization */

INLINE void requant_body(wick_dtype in_t, wick_dtype out_t, int64_t n, int32_t in_zp,
                         int32_t out_zp, int32_t m, int32_t s, int32_t lo, int32_t hi,
                         const void *in, void *out) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t x = sub32(ld(in_t, in, i), in_zp);
    st(out_t, out, i, clamp32(add32(mbqm(x, m, s), out_zp), lo, hi));
  }
}

void wick_q_requantize__reference(wick_dtype in_type, wick_dtype out_type, int64_t n, int32_t in_zp,
                                  int32_t out_zp, int32_t multiplier, int32_t shift, int32_t lo,
                                  int32_t hi, const void *in, void *out) {
#define RQ(IT, OT) requant_body(IT, OT, n, in_zp, out_zp, multiplier, shift, lo, hi, in, out)
#define RQ_OUT(IT)                                          \
  switch (out_type) {                                       \
    case WICK_DTYPE_INT8: RQ(IT, WICK_DTYPE_INT8); break;   \
    case WICK_DTYPE_UINT8: RQ(IT, WICK_DTYPE_UINT8); break; \
    case WICK_DTYPE_INT16: RQ(IT, WICK_DTYPE_INT16); break; \
    case WICK_DTYPE_INT32: RQ(IT, WICK_DTYPE_INT32); break; \
    default: break;                                         \
  }
  switch (in_type) {
    case WICK_DTYPE_INT8: RQ_OUT(WICK_DTYPE_INT8) break;
    case WICK_DTYPE_UINT8: RQ_OUT(WICK_DTYPE_UINT8) break;
    case WICK_DTYPE_INT16: RQ_OUT(WICK_DTYPE_INT16) break;
    case WICK_DTYPE_INT32: RQ_OUT(WICK_DTYPE_INT32) break;
    default: break;
  }
#undef RQ_OUT
#undef RQ
}

/* CONCATENATION's rescaling copy (LiteRT's ConcatenationWithScaling, in
 * float): out = clamp((int32)roundf(q * scale + bias) + out_zp). */
void wick_q_rescale8__reference(wick_dtype type, int64_t n, float scale, float bias, int32_t out_zp,
                                const void *in, void *out) {
  int32_t lo, hi;
  type_range(type, &lo, &hi);
  for (int64_t i = 0; i < n; i++) {
    const float x = (float)ld(type, in, i) * scale + bias;
    const float r = roundf(x);
    /* NaN (inf - inf from extreme scales and bias) reads as 0. */
    const int32_t q = r != r                ? 0
                      : r <= -2147483648.0f ? INT32_MIN
                                            : (r >= 2147483647.0f ? INT32_MAX : (int32_t)r);
    st(type, out, i, clamp32(add32(q, out_zp), lo, hi));
  }
}

/* ---------------------------------------------------------------- LEAKY_RELU, PRELU, MAX/MIN */

INLINE void leaky_body(wick_dtype t, int64_t n, const wick_qleaky_params *p, const void *in,
                       void *out) {
  int32_t lo, hi;
  type_range(t, &lo, &hi);
  for (int64_t i = 0; i < n; i++) {
    const int32_t x = ld(t, in, i) - p->input_zero_point;
    int32_t v = p->output_zero_point;
    if (x >= 0) {
      v = add32(v, mbqm(x, p->identity_multiplier, p->identity_shift));
    } else {
      const int32_t a = mbqm(x, p->alpha_multiplier, p->alpha_shift);
      v = p->alpha_negative ? sub32(v, a) : add32(v, a);
    }
    st(t, out, i, clamp32(v, lo, hi));
  }
}

void wick_q_leaky_relu__reference(wick_dtype type, int64_t n, const wick_qleaky_params *p,
                                  const void *in, void *out) {
#define LR_CALL(IT, WT) leaky_body(IT, n, p, in, out)
  DISPATCH_ACT(type, LR_CALL);
#undef LR_CALL
}

INLINE void prelu_body(wick_dtype t, const wick_broadcast *bc, const wick_qprelu_params *p,
                       const void *in, const void *alpha, void *out) {
  int32_t lo, hi;
  type_range(t, &lo, &hi);
#define PRELU_BODY(ia, ib, io)                                        \
  do {                                                                \
    const int32_t x_ = ld(t, in, ia) + p->input_offset;               \
    int32_t v_;                                                       \
    if (x_ >= 0) {                                                    \
      v_ = mbqm(x_, p->multiplier1, p->shift1);                       \
    } else {                                                          \
      const int32_t a_ = ld(t, alpha, ib) + p->alpha_offset;          \
      v_ = mbqm(wrap32((int64_t)x_ * a_), p->multiplier2, p->shift2); \
    }                                                                 \
    st(t, out, io, clamp32(add32(v_, p->output_offset), lo, hi));     \
  } while (0)
  QBROADCAST_LOOP(bc, PRELU_BODY);
#undef PRELU_BODY
}

void wick_q_prelu__reference(wick_dtype type, const wick_broadcast *bc, const wick_qprelu_params *p,
                             const void *in, const void *alpha, void *out) {
#define PR_CALL(IT, WT) prelu_body(IT, bc, p, in, alpha, out)
  DISPATCH_ACT(type, PR_CALL);
#undef PR_CALL
}

INLINE void maxmin_body(wick_dtype t, bool is_max, const wick_broadcast *bc, const void *a,
                        const void *b, void *out) {
#define MM_BODY(ia, ib, io)                                             \
  do {                                                                  \
    const int32_t x_ = ld(t, a, ia), y_ = ld(t, b, ib);                 \
    st(t, out, io, is_max ? (x_ > y_ ? x_ : y_) : (x_ < y_ ? x_ : y_)); \
  } while (0)
  QBROADCAST_LOOP(bc, MM_BODY);
#undef MM_BODY
}

void wick_q_maximum_minimum__reference(wick_dtype type, bool is_max, const wick_broadcast *bc,
                                       const void *a, const void *b, void *out) {
#define MM_CALL(IT, WT) maxmin_body(IT, is_max, bc, a, b, out)
  DISPATCH_ACT(type, MM_CALL);
#undef MM_CALL
}

INLINE void rmaxmin_body(wick_dtype t, bool is_max, int32_t rank, const int32_t *dims,
                         const bool *reduced, const void *in, void *out) {
  int64_t out_stride[WICK_MAX_RANK];
  int64_t st_ = 1, total = 1;
  for (int32_t i = rank - 1; i >= 0; i--) {
    out_stride[i] = reduced[i] ? 0 : st_;
    if (!reduced[i]) st_ *= dims[i];
    total *= dims[i];
  }
  int32_t lo, hi;
  type_range(t, &lo, &hi);
  for (int64_t o = 0; o < st_; o++) st(t, out, o, is_max ? lo : hi);
  int64_t idx[WICK_MAX_RANK] = {0};
  for (int64_t e = 0; e < total; e++) {
    int64_t o = 0;
    for (int32_t d = 0; d < rank; d++) o += idx[d] * out_stride[d];
    const int32_t v = ld(t, in, e), cur = ld(t, out, o);
    if (is_max ? v > cur : v < cur) st(t, out, o, v);
    for (int32_t d = rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

void wick_q_reduce_maxmin__reference(wick_dtype type, bool is_max, int32_t rank,
                                     const int32_t *dims, const bool *reduced, const void *in,
                                     void *out) {
#define RM_CALL(IT, WT) rmaxmin_body(IT, is_max, rank, dims, reduced, in, out)
  DISPATCH_ACT(type, RM_CALL);
#undef RM_CALL
}

/* ---------------------------------------------------------------- RESIZE_BILINEAR */

/* int8 / int16: LiteRT's integer version (coordinates in 1/1024 steps,
 * weights products in 1/2^20, rounded half away from zero). */
static void interp_integer(int32_t v, int32_t scale_10, bool half_pixel, int32_t in_size,
                           int32_t *scaled, int32_t *lo, int32_t *hi) {
  *scaled = half_pixel ? v * scale_10 + scale_10 / 2 - (1 << 9) : v * scale_10;
  const int32_t down = *scaled / (1 << 10);
  /* The 10-bit scale is rounded, so for a large upscale (2 -> 2564 rows: 0.8
   * rounds to 1) the last rows land past the input; clamp both taps. */
  *lo = down <= 0 ? 0 : (down < in_size - 1 ? down : in_size - 1);
  const int32_t up = (*scaled + (1 << 10) - 1) / (1 << 10);
  *hi = up < in_size - 1 ? up : in_size - 1;
}

/* uint8: LiteRT's float version (float weights, + 0.5, truncated). */
static void interp_float(int32_t v, float scale, bool half_pixel, int32_t in_size, float *scaled,
                         int32_t *lo, int32_t *hi) {
  *scaled = half_pixel ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
  const int32_t fl = (int32_t)floorf(*scaled), ce = (int32_t)ceilf(*scaled);
  *lo = fl <= 0 ? 0 : (fl < in_size - 1 ? fl : in_size - 1);
  *hi = ce < in_size - 1 ? ce : in_size - 1;
}

INLINE void resize_body(wick_dtype t, const wick_resize_shape *s, const void *in, void *out) {
  const int32_t ih = s->in_h, iw = s->in_w, oh = s->out_h, ow = s->out_w, c = s->channels;
  int32_t hs10 = ((1 << 10) * ih + oh / 2) / oh, ws10 = ((1 << 10) * iw + ow / 2) / ow;
  float hsf = (float)ih / (float)oh, wsf = (float)iw / (float)ow;
  if (s->align_corners && oh > 1) {
    hs10 = ((1 << 10) * (ih - 1) + (oh - 1) / 2) / (oh - 1);
    hsf = (float)(ih - 1) / (float)(oh - 1);
  }
  if (s->align_corners && ow > 1) {
    ws10 = ((1 << 10) * (iw - 1) + (ow - 1) / 2) / (ow - 1);
    wsf = (float)(iw - 1) / (float)(ow - 1);
  }
#define PIX(b_, y_, x_, c_) ld(t, in, (((int64_t)(b_)*ih + (y_)) * iw + (x_)) * c + (c_))
  int64_t o = 0;
  for (int32_t b = 0; b < s->batch; b++)
    for (int32_t y = 0; y < oh; y++)
      for (int32_t x = 0; x < ow; x++) {
        if (t == WICK_DTYPE_UINT8) {
          float fy, fx;
          int32_t y0, y1, x0, x1;
          interp_float(y, hsf, s->half_pixel_centers, ih, &fy, &y0, &y1);
          interp_float(x, wsf, s->half_pixel_centers, iw, &fx, &x0, &x1);
          const float dy = fy - (float)y0, dx = fx - (float)x0;
          for (int32_t ch = 0; ch < c; ch++, o++) {
            const float v = (float)PIX(b, y0, x0, ch) * (1 - dy) * (1 - dx) +
                            (float)PIX(b, y1, x0, ch) * dy * (1 - dx) +
                            (float)PIX(b, y0, x1, ch) * (1 - dy) * dx +
                            (float)PIX(b, y1, x1, ch) * dy * dx + 0.5f;
            st(t, out, o, v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (int32_t)v));
          }
        } else {
          int32_t sy, sx, y0, y1, x0, x1;
          interp_integer(y, hs10, s->half_pixel_centers, ih, &sy, &y0, &y1);
          interp_integer(x, ws10, s->half_pixel_centers, iw, &sx, &x0, &x1);
          const int64_t fy = sy - (1 << 10) * y0, fx = sx - (1 << 10) * x0;
          for (int32_t ch = 0; ch < c; ch++, o++) {
            const int64_t v = (int64_t)PIX(b, y0, x0, ch) * ((1 << 10) - fy) * ((1 << 10) - fx) +
                              (int64_t)PIX(b, y1, x0, ch) * fy * ((1 << 10) - fx) +
                              (int64_t)PIX(b, y0, x1, ch) * ((1 << 10) - fy) * fx +
                              (int64_t)PIX(b, y1, x1, ch) * fy * fx;
            const int64_t r = v > 0 ? (1 << 19) : -(1 << 19);
            st(t, out, o, (int32_t)((v + r) / (1 << 20)));
          }
        }
      }
#undef PIX
}

void wick_q_resize_bilinear__reference(wick_dtype type, const wick_resize_shape *s, const void *in,
                                       void *out) {
#define RB_CALL(IT, WT) resize_body(IT, s, in, out)
  DISPATCH_ACT(type, RB_CALL);
#undef RB_CALL
}
