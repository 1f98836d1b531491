/*
 * quantized.c — reference kernels on quantized integers (int8, legacy uint8,
 * int16 activations): the executable specification, bit-exact with LiteRT's
 * reference kernels (its BUILTIN_REF resolver).
 *
 * Fixed-point arithmetic ("double rounding", FORMAT.md):
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
 * Next: src/ops/quantization.c (the parameters), the src/ops files named
 * *_quantized.c (the operators).
 */
#include <math.h>
#include <string.h>

#include "kernels/reference/reference.h"

#define INLINE static inline __attribute__((always_inline))

/* ---------------------------------------------------------------- primitives */

INLINE int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
INLINE int32_t add32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
INLINE int32_t sub32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

INLINE int32_t srdhm(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* In 64 bits so any exponent a file's scales can produce (RSQRT's LUT shifts
 * by its output shift - 20: up to 50, found by fuzz_mutate_model) is defined;
 * identical to the 32-bit form for e < 32. */
INLINE int32_t rdivpot(int32_t x, int32_t e) {
  if (e > 62) e = 62;
  int64_t mask = ((int64_t)1 << e) - 1;
  int64_t remainder = (int64_t)x & mask;
  int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> e) + (remainder > threshold ? 1 : 0));
}

INLINE int32_t mbqm(int32_t x, int32_t m, int32_t s) {
  int32_t left = s > 0 ? s : 0, right = s > 0 ? 0 : -s;
  uint32_t shifted = left >= 32 ? 0u : (uint32_t)x << left; /* wraps, as LiteRT's int32 shift */
  return rdivpot(srdhm((int32_t)shifted, m), right);
}

INLINE int32_t mbqm64(int64_t x, int32_t m, int32_t s) {
  int32_t reduced = m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
  int32_t total = 15 - s; /* the op keeps s in [-31, 14] */
  uint64_t v = (uint64_t)x * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (total - 1));
  return wrap32((int64_t)v >> total);
}

INLINE int32_t clamp32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

int32_t wick_q_srdhm(int32_t a, int32_t b) { return srdhm(a, b); }
int32_t wick_q_rounding_divide_by_pot(int32_t x, int32_t exponent) { return rdivpot(x, exponent); }
int32_t wick_q_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift) {
  return mbqm(x, multiplier, shift);
}
int32_t wick_q_multiply_by_quantized_multiplier_i64(int64_t x, int32_t multiplier,
                                                    int32_t shift) {
  return mbqm64(x, multiplier, shift);
}

/* Loads element i of a quantized (or int32) array as int32. */
INLINE int32_t ld(wick_dtype t, const void *p, int64_t i) {
  switch (t) {
    case WICK_DTYPE_INT8: return ((const int8_t *)p)[i];
    case WICK_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case WICK_DTYPE_INT16: return ((const int16_t *)p)[i];
    case WICK_DTYPE_INT32: return ((const int32_t *)p)[i];
    default: return 0;
  }
}

/* Stores v (already inside the type's range) at element i. */
INLINE void st(wick_dtype t, void *p, int64_t i, int32_t v) {
  switch (t) {
    case WICK_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case WICK_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case WICK_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case WICK_DTYPE_INT32: ((int32_t *)p)[i] = v; break;
    default: break;
  }
}

INLINE void type_range(wick_dtype t, int32_t *lo, int32_t *hi) {
  switch (t) {
    case WICK_DTYPE_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case WICK_DTYPE_UINT8: *lo = 0; *hi = UINT8_MAX; break;
    case WICK_DTYPE_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    default: *lo = INT32_MIN; *hi = INT32_MAX; break;
  }
}

/* Calls one instantiation of BODY per activation type: int8 (int8 filter),
 * uint8 (uint8 filter), int16 (int8 filter). */
#define DISPATCH_ACT(type, CALL)                                                  \
  do {                                                                            \
    switch (type) {                                                               \
      case WICK_DTYPE_INT8: CALL(WICK_DTYPE_INT8, WICK_DTYPE_INT8); break;        \
      case WICK_DTYPE_UINT8: CALL(WICK_DTYPE_UINT8, WICK_DTYPE_UINT8); break;     \
      case WICK_DTYPE_INT16: CALL(WICK_DTYPE_INT16, WICK_DTYPE_INT8); break;      \
      default: break;                                                             \
    }                                                                             \
  } while (0)

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
              const int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
              if (ix < 0 || ix >= s->in_w) continue;
              const int64_t ib = (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c +
                                 (int64_t)g * cin_g;
              const int64_t wb = (((int64_t)oc * s->k_h + ky) * s->k_w + kx) * cin_g;
              for (int32_t i = 0; i < cin_g; i++) {
                const int32_t prod = (ld(w_t, filter, wb + i) + fo) * (ld(in_t, input, ib + i) + io);
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

void wick_q_conv2d__reference(wick_dtype type, const wick_conv_shape *s,
                              const wick_qconv_params *p, const void *input, const void *filter,
                              const void *bias, bool bias64, void *output) {
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
              const int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
              if (iy < 0 || iy >= s->in_h) continue;
              for (int32_t kx = 0; kx < s->k_w; kx++) {
                const int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
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
                const int32_t prod = (ld(w_t, filter, wb + i) + fo) * (ld(in_t, input, ib + i) + io);
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
      int32_t v = scaled <= -2147483648.0 ? INT32_MIN
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
    qbmm_body(WICK_DTYPE_INT16, WICK_DTYPE_INT16, s, p, acc64, lhs, rhs, out, row_begin,
              row_end);
}

/* ---------------------------------------------------------------- broadcast binary */

/* Calls BODY(ia, ib, io) for every output element of `bc` (row-major). */
#define QBROADCAST_LOOP(bc, BODY)                                                 \
  do {                                                                            \
    int32_t r_ = (bc)->rank;                                                      \
    if (r_ == 0) {                                                                \
      BODY(0, 0, 0);                                                              \
      break;                                                                      \
    }                                                                             \
    int64_t idx_[WICK_MAX_RANK] = {0};                                            \
    int64_t inner_ = (bc)->dims[r_ - 1];                                          \
    int64_t sa_ = (bc)->a_strides[r_ - 1], sb_ = (bc)->b_strides[r_ - 1];         \
    int64_t outer_ = 1;                                                           \
    for (int32_t d_ = 0; d_ < r_ - 1; d_++) outer_ *= (bc)->dims[d_];             \
    if (inner_ == 0) break;                                                       \
    int64_t io_ = 0;                                                              \
    for (int64_t o_ = 0; o_ < outer_; o_++) {                                     \
      int64_t ba_ = 0, bb_ = 0;                                                   \
      for (int32_t d_ = 0; d_ < r_ - 1; d_++) {                                   \
        ba_ += idx_[d_] * (bc)->a_strides[d_];                                    \
        bb_ += idx_[d_] * (bc)->b_strides[d_];                                    \
      }                                                                           \
      for (int64_t i_ = 0; i_ < inner_; i_++, io_++)                              \
        BODY(ba_ + i_ * sa_, bb_ + i_ * sb_, io_);                                \
      for (int32_t d_ = r_ - 2; d_ >= 0; d_--) {                                  \
        if (++idx_[d_] < (bc)->dims[d_]) break;                                   \
        idx_[d_] = 0;                                                             \
      }                                                                           \
    }                                                                             \
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
#define SQDIFF_BODY(ia, ib, io)                                                            \
  do {                                                                                     \
    const int32_t x_ = (int32_t)((uint32_t)(a[ia] + p->input1_offset) << p->left_shift);  \
    const int32_t y_ = (int32_t)((uint32_t)(b[ib] + p->input2_offset) << p->left_shift);  \
    const int32_t diff_ = sub32(mbqm(x_, p->input1_multiplier, p->input1_shift),           \
                                mbqm(y_, p->input2_multiplier, p->input2_shift));          \
    const int32_t sq_ = wrap32((int64_t)diff_ * diff_);                                    \
    const int32_t v_ = add32(mbqm(sq_, p->output_multiplier, p->output_shift), p->output_offset); \
    out[io] = (int8_t)clamp32(v_, p->act_min, p->act_max);                                 \
  } while (0)
  QBROADCAST_LOOP(bc, SQDIFF_BODY);
#undef SQDIFF_BODY
}

/* int16 power-of-two scales (LSTM style): ADD rescales the input whose shift
 * is negative by a rounding right shift and adds with int16 saturation; SUB
 * shifts both and subtracts in 32 bits. Then the activation clamp. */
void wick_q_add_pot_i16__reference(bool subtract, const wick_broadcast *bc, int32_t shift1,
                                   int32_t shift2, int32_t act_min, int32_t act_max,
                                   const int16_t *a, const int16_t *b, int16_t *out) {
#define POT_BODY(ia, ib, io)                                                         \
  do {                                                                               \
    int32_t x_ = rdivpot(a[ia], -shift1), y_ = rdivpot(b[ib], -shift2);              \
    int32_t v_ = subtract ? x_ - y_ : clamp32(x_ + y_, INT16_MIN, INT16_MAX);        \
    out[io] = (int16_t)clamp32(v_, act_min, act_max);                                \
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
              acc = add32(acc, ld(t, in, (((int64_t)n * s->in_h + iy) * s->in_w + ix) *
                                             s->channels + c));
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

/* ---------------------------------------------------------------- softmax (gemmlowp fixed point) */

/* Saturating multiply of a raw fixed-point value by 2^e, e > 0. */
INLINE int32_t sat_shl(int32_t x, int32_t e) {
  const int32_t threshold = (int32_t)(((int64_t)1 << (31 - e)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << e);
}

/* exp(x) for x in [-1/4, 0), Q0.31 in and out (Taylor series around -1/8). */
static int32_t exp_on_interval(int32_t a) {
  const int32_t constant_term = 1895147668; /* exp(-1/8) */
  const int32_t one_third = 715827883;
  const int32_t x = add32(a, 1 << 28);
  const int32_t x2 = srdhm(x, x), x3 = srdhm(x2, x), x4 = srdhm(x2, x2);
  const int32_t x4_over_4 = rdivpot(x4, 2);
  const int32_t poly = rdivpot(add32(srdhm(add32(x4_over_4, x3), one_third), x2), 1);
  return add32(constant_term, srdhm(constant_term, add32(x, poly)));
}

/* exp(a) for a <= 0 with `int_bits` integer bits (Q int_bits . 31-int_bits),
 * returned in Q0.31: the fractional quarter by the Taylor series, the rest by
 * multiplying constants exp(-2^k) for each set bit. */
static int32_t exp_on_negative_values(int32_t a, int32_t int_bits) {
  static const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                         39332535,   720401,     242};
  const int32_t frac_bits = 31 - int_bits;
  const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod = sub32(a & mask, one_quarter);
  int32_t result = exp_on_interval(int_bits > 0 ? sat_shl(a_mod, int_bits) : a_mod);
  const int32_t remainder = sub32(a_mod, a);
  for (int32_t e = -2; e <= 4; e++) {
    if (int_bits > e) {
      const int32_t shift = frac_bits + e;
      if (remainder & (int32_t)((uint32_t)1 << shift)) result = srdhm(result, multipliers[e + 2]);
    }
  }
  if (int_bits > 5) {
    const int32_t clamp = -(1 << (36 - int_bits)); /* -32.0 */
    if (a < clamp) result = 0;
  }
  if (a == 0) result = INT32_MAX;
  return result;
}

/* 1 / (1 + x) for x in [0, 1), Q0.31 in and out (Newton-Raphson). */
static int32_t one_over_one_plus_x(int32_t a) {
  int64_t sum = (int64_t)a + INT32_MAX;
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t c48_17 = 1515870810, c_neg32_17 = -1010580540; /* Q2.29 */
  int32_t x = add32(c48_17, srdhm(half_denominator, c_neg32_17));
  for (int32_t i = 0; i < 3; i++) {
    const int32_t hdx = srdhm(half_denominator, x);
    const int32_t one_minus = sub32((int32_t)1 << 29, hdx);
    x = add32(x, sat_shl(srdhm(x, one_minus), 2));
  }
  return sat_shl(x, 1);
}

/* Softmax of one row: exps of rescaled differences from the row maximum,
 * their sum in Q12.19, its reciprocal, and each output rounded to the
 * output type's 1/2^bits scale (offset by the type's minimum). */
INLINE void softmax_body(wick_dtype in_t, wick_dtype out_t, int64_t rows, int64_t cols,
                         const wick_qsoftmax_params *p, const void *in, void *out) {
  int32_t omin, omax;
  type_range(out_t, &omin, &omax);
  const int32_t out_bits = out_t == WICK_DTYPE_INT16 ? 16 : 8;
  for (int64_t r = 0; r < rows; r++) {
    const int64_t base = r * cols;
    int32_t max_in_row;
    type_range(in_t, &max_in_row, &(int32_t){0});
    for (int64_t c = 0; c < cols; c++) {
      int32_t v = ld(in_t, in, base + c);
      if (v > max_in_row) max_in_row = v;
    }
    int32_t sum = 0; /* Q12.19 */
    for (int64_t c = 0; c < cols; c++) {
      const int32_t diff = ld(in_t, in, base + c) - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t scaled =
            srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        sum = add32(sum, rdivpot(exp_on_negative_values(scaled, 5), 12));
      }
    }
    const int32_t headroom_plus_one = sum == 0 ? 32 : __builtin_clz((uint32_t)sum);
    const int32_t bits_over_unit = 12 - headroom_plus_one;
    const int32_t shifted_sum_minus_one =
        (int32_t)(((uint64_t)(uint32_t)sum << headroom_plus_one) - ((uint64_t)1 << 31));
    const int32_t shifted_scale = one_over_one_plus_x(shifted_sum_minus_one);
    int32_t exponent = bits_over_unit + 31 - out_bits;
    exponent = exponent < 0 ? 0 : (exponent > 31 ? 31 : exponent);
    for (int64_t c = 0; c < cols; c++) {
      const int32_t diff = ld(in_t, in, base + c) - max_in_row;
      int32_t v = omin;
      if (diff >= p->diff_min) {
        const int32_t scaled =
            srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        const int32_t e = exp_on_negative_values(scaled, 5);
        v = clamp32(add32(rdivpot(srdhm(shifted_scale, e), exponent), omin), omin, omax);
      }
      st(out_t, out, base + c, v);
    }
  }
}

void wick_q_softmax__reference(wick_dtype in_type, wick_dtype out_type, int64_t rows, int64_t cols,
                               const wick_qsoftmax_params *p, const void *in, void *out) {
#define SM(IT, OT)                                         \
  if (in_type == IT && out_type == OT) {                   \
    softmax_body(IT, OT, rows, cols, p, in, out);          \
    return;                                                \
  }
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT8)
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT16)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_UINT8)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_INT16)
#undef SM
}

/* ---------------------------------------------------------------- softmax (float exp table) */

void wick_q_softmax_table_populate(float input_scale, float beta, float table[256]) {
  const float scale = -input_scale * beta; /* in float, as LiteRT */
  for (int32_t v = 0; v < 256; v++) table[255 - v] = expf(scale * (float)v);
}

/* Softmax of one row through the table: exp(x - max) is table[255 + x - max];
 * the float sum in column order, its reciprocal times 1/output scale, each
 * product rounded (half away from zero; uint8: +0.5 truncated) plus the zero
 * point, clamped. */
INLINE void softmax_table_body(wick_dtype in_t, wick_dtype out_t, int64_t rows, int64_t cols,
                               const float *table, float out_scale, int32_t out_zp,
                               const void *in, void *out) {
  int32_t omin, omax;
  type_range(out_t, &omin, &omax);
  for (int64_t r = 0; r < rows; r++) {
    const int64_t base = r * cols;
    int32_t max_in_row;
    type_range(in_t, &max_in_row, &(int32_t){0});
    for (int64_t c = 0; c < cols; c++) {
      const int32_t v = ld(in_t, in, base + c);
      if (v > max_in_row) max_in_row = v;
    }
    const float *t = table + 255 - max_in_row; /* t[x] for x in [max - 255, max] */
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; c++) sum += t[ld(in_t, in, base + c)];
    const float inverse = 1.0f / (sum * out_scale);
    for (int64_t c = 0; c < cols; c++) {
      const float p = t[ld(in_t, in, base + c)] * inverse;
      const int32_t q = out_t == WICK_DTYPE_UINT8 ? (int32_t)(p + 0.5f) : (int32_t)roundf(p);
      st(out_t, out, base + c, clamp32(q + out_zp, omin, omax));
    }
  }
}

void wick_q_softmax_table__reference(wick_dtype in_type, wick_dtype out_type, int64_t rows,
                                     int64_t cols, const float table[256], float out_scale,
                                     int32_t out_zp, const void *in, void *out) {
#define SM(IT, OT)                                                                   \
  if (in_type == IT && out_type == OT) {                                             \
    softmax_table_body(IT, OT, rows, cols, table, out_scale, out_zp, in, out);       \
    return;                                                                          \
  }
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT8)
  SM(WICK_DTYPE_INT8, WICK_DTYPE_INT16)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_UINT8)
  SM(WICK_DTYPE_UINT8, WICK_DTYPE_INT16)
#undef SM
}

/* ---------------------------------------------------------------- int16 softmax (tables) */

/* LiteRT's 513-entry int16 table of f over the int16 input range (computed in
 * double): 512 samples, each biased by half the error of linear
 * interpolation at its midpoint, plus the end point. */
void wick_q_lut16_populate(wick_q_lut16_fn fn, double in_scale, int32_t in_zp, double out_scale,
                           int32_t out_zp, int16_t lut[513]) {
  const double input_min = in_scale * (double)(INT16_MIN - in_zp);
  const double input_max = in_scale * (double)(INT16_MAX - in_zp);
  const double output_min = out_scale * (double)(INT16_MIN - out_zp);
  const double output_max = out_scale * (double)(INT16_MAX - out_zp);
  const double step = (input_max - input_min) / 512.0, half_step = step / 2.0;
  const double inv = 65536.0 / (output_max - output_min);
#define LUT_F(v) (fn == WICK_Q_LUT16_EXP ? exp(v) : 1.0 / (1.0 + (v)))
#define LUT_CLAMP(v) ((int16_t)((v) < -32768.0 ? -32768.0 : ((v) > 32767.0 ? 32767.0 : (v))))
  for (int32_t i = 0; i < 512; i++) {
    const double val = LUT_F(input_min + i * step);
    const double val_mid = LUT_F(input_min + i * step + half_step);
    const double val_next = LUT_F(input_min + (i + 1) * step);
    const double sample = round(val * inv);
    const double interp = round((val_next * inv + round(val * inv)) / 2.0);
    const double mid = round(val_mid * inv);
    const double bias = round((interp - mid) / 2.0);
    lut[i] = LUT_CLAMP(sample - bias);
  }
  lut[512] = LUT_CLAMP(round(LUT_F(input_max) * inv));
#undef LUT_F
#undef LUT_CLAMP
}

/* Interpolated lookup: 9 high bits index, 7 low bits interpolate. */
static inline int16_t lut16(int16_t v, const int16_t lut[513]) {
  const int32_t index = 256 + (v >> 7);
  const int32_t offset = v & 0x7f;
  const int32_t base = lut[index], slope = lut[index + 1] - lut[index];
  return (int16_t)(base + ((slope * offset + 64) >> 7));
}

void wick_q_softmax_i16__reference(int64_t rows, int64_t cols, int32_t multiplier, int32_t shift,
                                   const int16_t exp_lut[513], const int16_t recip_lut[513],
                                   const int16_t *in, int16_t *out) {
  for (int64_t r = 0; r < rows; r++) {
    const int16_t *x = in + r * cols;
    int16_t *y = out + r * cols;
    int16_t max_in_row = INT16_MIN;
    for (int64_t c = 0; c < cols; c++)
      if (x[c] > max_in_row) max_in_row = x[c];
    uint32_t sum = 0; /* Q16.15 */
    for (int64_t c = 0; c < cols; c++) {
      const int32_t scaled = mbqm((int32_t)x[c] - max_in_row, multiplier, shift);
      y[c] = lut16((int16_t)clamp32(add32(scaled, 32767), INT16_MIN, INT16_MAX), exp_lut);
      sum += (uint32_t)(int32_t)y[c];
    }
    int32_t headroom_plus_one = sum == 0 ? 32 : __builtin_clz(sum);
    if (headroom_plus_one < 1) headroom_plus_one = 1;
    const int32_t shifted_sum =
        (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int32_t sym = shifted_sum - ((1 << 15) + (1 << 16));
    const int16_t recip = lut16((int16_t)clamp32(sym, INT16_MIN, INT16_MAX), recip_lut);
    const int32_t right_shift = 31 - headroom_plus_one;
    const int64_t round_add = right_shift > 0 ? (int64_t)1 << (right_shift - 1) : 0;
    for (int64_t c = 0; c < cols; c++) {
      const int32_t v = (int32_t)(((int64_t)y[c] * recip + round_add) >> right_shift);
      y[c] = (int16_t)clamp32(v, 0, 32767);
    }
  }
}

/* ---------------------------------------------------------------- lookup tables */

void wick_q_lut8_populate(wick_dtype type, wick_q_lut_fn fn, float in_scale, int32_t in_zp,
                          float out_scale, int32_t out_zp, uint8_t lut[256]) {
  int32_t lo, hi;
  type_range(type, &lo, &hi);
  const float inverse_scale = 1.0f / out_scale;
  for (int32_t v = lo; v <= hi; v++) {
    const float x = in_scale * (float)(v - in_zp);
    float y;
    switch (fn) {
      case WICK_Q_LUT_LOGISTIC: y = 1.0f / (1.0f + expf(-x)); break;
      case WICK_Q_LUT_TANH: y = tanhf(x); break;
      case WICK_Q_LUT_GELU: y = 0.5f * x * erfcf(x * (float)-0.70710678118654752440); break;
      default: { /* WICK_Q_LUT_GELU_APPROX; sqrt(2/pi) rounded to float as LiteRT */
        const float k = (float)(1.12837916709551257390 * 0.70710678118654752440);
        y = 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
        break;
      }
    }
    float r = roundf(y * inverse_scale) + (float)out_zp;
    /* LiteRT converts without a range check; the clamp keeps wick defined.
     * NaN (extreme scales: GELU's -inf * erfc(+inf)) reads as y = 0. */
    if (r != r) r = (float)out_zp;
    int32_t q = r <= (float)lo ? lo : (r >= (float)hi ? hi : (int32_t)r);
    lut[(uint8_t)v] = (uint8_t)q;
  }
}

void wick_q_lut8__reference(int64_t n, const uint8_t lut[256], const uint8_t *in, uint8_t *out) {
  for (int64_t i = 0; i < n; i++) out[i] = lut[in[i]];
}

/* ---------------------------------------------------------------- int16 LOGISTIC, TANH */

bool wick_q_checked_log2(double x, int32_t *log2_rounded) {
  const double l = log(x) * (1.0 / log(2.0)), r = round(l);
  *log2_rounded = (int32_t)r;
  return fabs(l - r) < 1e-3;
}

bool wick_q16_sigmoid_rescale(double in_scale, bool tanh, int32_t *multiplier, int32_t *shift) {
  if (!(in_scale > 0.0) || in_scale > 1e6) return false;
  int32_t log2_scale;
  const bool pot = wick_q_checked_log2(in_scale, &log2_scale);
  const int32_t pot_shift = 12 + log2_scale; /* 15 - 3 integer bits + log2(scale) */
  if (pot && (pot_shift == 0 || (tanh && pot_shift == 1))) {
    *multiplier = 3 << pot_shift; /* the kernel's "power of two" case: shift 0 */
    *shift = 0;
    return true;
  }
  double m = in_scale * 4096.0 * 3.0; /* to steps of 1 / (3 * 4096) */
  int32_t s = 0;
  while (m <= 32767.0 / 2.0 && s <= 30) {
    s++;
    m *= 2.0;
  }
  const int64_t round_half = s > 0 ? (int64_t)1 << (s - 1) : 0;
  /* below ~4e-14 the multiplier truncates to 0, which LiteRT's kernel misreads as
   * its power-of-two case (and overflows a shift) */
  if (m < 1.0 || m * 32768.0 + (double)round_half > (double)INT32_MAX) return false;
  *multiplier = (int32_t)m; /* truncated, as LiteRT */
  *shift = s;
  return true;
}

/* sigmoid(i / 24) in unsigned 0.16 fixed point, each node lowered by half the
 * sag of the chord to the next node (so linear interpolation errs evenly on
 * both sides), rounded; the last node is the 16-bit maximum. These are the
 * values of LiteRT's table: checked exhaustively against its reference kernels
 * on every int16 input (tests/python/ops/test_quantized_ops.py). The rounding
 * margin is >= 0.004, far from any libm's last-bit differences. */
void wick_q16_sigmoid_table(uint16_t table[256]) {
  for (int i = 0; i < 255; i++) {
    const double a = i / 24.0, b = (i + 1) / 24.0;
    const double sa = 1.0 / (1.0 + exp(-a)), sb = 1.0 / (1.0 + exp(-b));
    const double sag = (sa + sb) / 2.0 - 1.0 / (1.0 + exp(-(a + b) / 2.0));
    table[i] = (uint16_t)floor(65536.0 * (sa - sag / 2.0) + 0.5);
  }
  table[255] = 65535;
}

/* x * multiplier, rounded, >> shift: the input in steps of 1/12288. */
static inline int32_t sigmoid_input(int16_t x, int32_t multiplier, int32_t shift) {
  const int32_t round_half = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  return (int32_t)(((int64_t)x * multiplier + round_half) >> shift);
}

void wick_q16_logistic__reference(int64_t n, const uint16_t table[256], int32_t multiplier,
                                  int32_t shift, const int16_t *in, int16_t *out) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t x = sigmoid_input(in[i], multiplier, shift);
    const uint32_t ax = x < 0 ? (uint32_t)-(int64_t)x : (uint32_t)x;
    const uint32_t node = ax >> 9; /* 512 steps of 1/12288 = 1/24 per table node */
    uint32_t r;                    /* sigmoid(|x|) in 0.25 fixed point */
    if (node >= 255) {
      r = 0x7FFFu << 10;
    } else {
      const uint32_t a = table[node], b = table[node + 1];
      r = (a << 9) + (ax & 0x1FF) * (b - a);
    }
    /* sigmoid(-x) = 1 - sigmoid(x); then to 0.15 with rounding */
    r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
    out[i] = (int16_t)(r >> 10);
  }
}

void wick_q16_tanh__reference(int64_t n, const uint16_t table[256], int32_t multiplier,
                              int32_t shift, const int16_t *in, int16_t *out) {
  for (int64_t i = 0; i < n; i++) {
    const int32_t x = sigmoid_input(in[i], multiplier, shift);
    const uint32_t ax = x < 0 ? (uint32_t)-(int64_t)x : (uint32_t)x;
    const uint32_t node = ax >> 8; /* tanh(x) = 2 sigmoid(2x) - 1: twice the step */
    int32_t r;                     /* sigmoid(2|x|) in 0.24 fixed point */
    if (node >= 255) {
      r = 0xFFFF << 8;
    } else {
      const int32_t a = table[node], b = table[node + 1];
      r = (a << 8) + (int32_t)(ax & 0xFF) * (b - a);
    }
    r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    /* floor division by 2^8 (an arithmetic shift in LiteRT) */
    out[i] = (int16_t)(r >= 0 ? r >> 8 : -((-r + 255) >> 8));
  }
}

/* LiteRT's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1: 1/sqrt(x)
 * as multiplier * 2^shift, by five Newton-Raphson steps in gemmlowp's
 * FixedPoint<int32, 3> (products are rounding doubling high multiplies, the
 * rescales saturating shifts, the subtraction of raw values plain). */
static void inv_sqrt_multiplier_exp(int32_t x, int32_t *multiplier, int32_t *shift) {
  if (x <= 1) {
    *multiplier = INT32_MAX;
    *shift = 0;
    return;
  }
  int32_t s = 11;
  while (x >= (1 << 29)) {
    x /= 4;
    s++;
  }
  const int32_t max_left_shift_bits = __builtin_clz((uint32_t)x) - 1;
  const int32_t left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  s -= left_shift_bit_pairs;
  x = (int32_t)((uint32_t)x << (2 * left_shift_bit_pairs));
  const int32_t half_input = rdivpot(x >> 1, 1);
  const int32_t half_three = (1 << 28) + (1 << 27);
  int32_t r = 1 << 28; /* 1.0 in Q3.28 */
  for (int i = 0; i < 5; i++) {
    const int32_t r3 = sat_shl(srdhm(srdhm(r, r), r), 6);
    r = sat_shl(sub32(srdhm(half_three, r), srdhm(half_input, r3)), 3);
  }
  r = srdhm(r, 1518500250); /* sqrt(2)/2 in Q0.31 */
  if (s < 0) {
    r = (int32_t)((uint32_t)r << -s);
    s = 0;
  }
  *multiplier = r;
  *shift = -s;
}

void wick_q_rsqrt_lut8_populate(int32_t in_zp, int32_t out_multiplier, int32_t out_shift,
                                int32_t out_zp, uint8_t lut[256]) {
  const int32_t k_shift = 20;
  for (int32_t v = INT8_MIN; v <= INT8_MAX; v++) {
    const int32_t value = v - in_zp;
    int32_t q = INT8_MAX;
    if (value > 0) {
      int32_t m, sh;
      inv_sqrt_multiplier_exp(value, &m, &sh);
      const int32_t data = mbqm(1, m, sh + k_shift);
      q = clamp32(mbqm(data, out_multiplier, out_shift - k_shift) + out_zp, INT8_MIN, INT8_MAX);
    }
    lut[(uint8_t)v] = (uint8_t)(int8_t)q;
  }
}

/* ---------------------------------------------------------------- hard swish */

INLINE int16_t sat16(int64_t v) {
  return (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
}

INLINE int16_t srdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t ab = (int32_t)a * (int32_t)b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}

/* Rounding down (toward zero) variant: SQDMULH. */
INLINE int16_t sdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  return (int16_t)(((int32_t)a * (int32_t)b) / (1 << 15));
}

/* LiteRT's 16-bit fixed-point hard swish: x * relu6(x + 3) / 6 with the
 * input on a hi-res scale (x << 7), a "reluish" factor in [0, 1] and a final
 * rounding shift to the output scale. */
INLINE void hard_swish_body(wick_dtype t, int64_t n, const wick_qhard_swish_params *p,
                            const void *in, void *out) {
  int32_t tmin, tmax;
  type_range(t, &tmin, &tmax);
  for (int64_t i = 0; i < n; i++) {
    const int16_t x = (int16_t)(ld(t, in, i) - p->input_zero_point);
    const int16_t hires = (int16_t)(x * (1 << 7));
    const int16_t preshift = srdhm16(hires, p->output_multiplier_fixedpoint_int16);
    int16_t reluish = hires;
    if (p->reluish_multiplier_exponent > 0)
      reluish = sat16((int64_t)reluish * ((int64_t)1 << (p->reluish_multiplier_exponent - 1)));
    reluish = srdhm16(reluish, p->reluish_multiplier_fixedpoint_int16);
    if (p->reluish_multiplier_exponent > 0) reluish = sat16((int64_t)reluish * 2);
    if (p->reluish_multiplier_exponent < 0)
      reluish = (int16_t)rdivpot(reluish, -p->reluish_multiplier_exponent);
    reluish = (int16_t)((reluish + (1 << 15)) >> 1);
    const int16_t pre_out = sdhm16(reluish, preshift);
    int32_t v = (int16_t)rdivpot(pre_out, -p->output_multiplier_exponent);
    v = (int16_t)(v + p->output_zero_point);
    st(t, out, i, clamp32(v, tmin, tmax));
  }
}

void wick_q_hard_swish__reference(wick_dtype type, int64_t n, const wick_qhard_swish_params *p,
                                  const void *in, void *out) {
#define HS_CALL(IT, WT) hard_swish_body(IT, n, p, in, out)
  DISPATCH_ACT(type, HS_CALL);
#undef HS_CALL
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
                                  const bool *reduced, const wick_qreduce_params *p,
                                  const void *in, void *out, int32_t *scratch) {
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

void wick_q_requantize__reference(wick_dtype in_type, wick_dtype out_type, int64_t n,
                                  int32_t in_zp, int32_t out_zp, int32_t multiplier,
                                  int32_t shift, int32_t lo, int32_t hi, const void *in,
                                  void *out) {
#define RQ(IT, OT) requant_body(IT, OT, n, in_zp, out_zp, multiplier, shift, lo, hi, in, out)
#define RQ_OUT(IT)                                               \
  switch (out_type) {                                            \
    case WICK_DTYPE_INT8: RQ(IT, WICK_DTYPE_INT8); break;        \
    case WICK_DTYPE_UINT8: RQ(IT, WICK_DTYPE_UINT8); break;      \
    case WICK_DTYPE_INT16: RQ(IT, WICK_DTYPE_INT16); break;      \
    case WICK_DTYPE_INT32: RQ(IT, WICK_DTYPE_INT32); break;      \
    default: break;                                              \
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
void wick_q_rescale8__reference(wick_dtype type, int64_t n, float scale, float bias,
                                int32_t out_zp, const void *in, void *out) {
  int32_t lo, hi;
  type_range(type, &lo, &hi);
  for (int64_t i = 0; i < n; i++) {
    const float x = (float)ld(type, in, i) * scale + bias;
    const float r = roundf(x);
    /* NaN (inf - inf from extreme scales and bias) reads as 0. */
    const int32_t q = r != r ? 0
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
#define PRELU_BODY(ia, ib, io)                                                         \
  do {                                                                                 \
    const int32_t x_ = ld(t, in, ia) + p->input_offset;                                \
    int32_t v_;                                                                        \
    if (x_ >= 0) {                                                                     \
      v_ = mbqm(x_, p->multiplier1, p->shift1);                                        \
    } else {                                                                           \
      const int32_t a_ = ld(t, alpha, ib) + p->alpha_offset;                           \
      v_ = mbqm(wrap32((int64_t)x_ * a_), p->multiplier2, p->shift2);                  \
    }                                                                                  \
    st(t, out, io, clamp32(add32(v_, p->output_offset), lo, hi));                      \
  } while (0)
  QBROADCAST_LOOP(bc, PRELU_BODY);
#undef PRELU_BODY
}

void wick_q_prelu__reference(wick_dtype type, const wick_broadcast *bc,
                             const wick_qprelu_params *p, const void *in, const void *alpha,
                             void *out) {
#define PR_CALL(IT, WT) prelu_body(IT, bc, p, in, alpha, out)
  DISPATCH_ACT(type, PR_CALL);
#undef PR_CALL
}

INLINE void maxmin_body(wick_dtype t, bool is_max, const wick_broadcast *bc, const void *a,
                        const void *b, void *out) {
#define MM_BODY(ia, ib, io)                                                \
  do {                                                                     \
    const int32_t x_ = ld(t, a, ia), y_ = ld(t, b, ib);                    \
    st(t, out, io, is_max ? (x_ > y_ ? x_ : y_) : (x_ < y_ ? x_ : y_));    \
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
#define PIX(b_, y_, x_, c_) ld(t, in, (((int64_t)(b_) * ih + (y_)) * iw + (x_)) * c + (c_))
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

void wick_q_resize_bilinear__reference(wick_dtype type, const wick_resize_shape *s,
                                       const void *in, void *out) {
#define RB_CALL(IT, WT) resize_body(IT, s, in, out)
  DISPATCH_ACT(type, RB_CALL);
#undef RB_CALL
}
