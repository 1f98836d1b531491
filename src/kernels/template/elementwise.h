/*
 * template/elementwise.h — vectorized elementwise kernels written once in the
 * vocabulary of <isa>/simd.h and compiled per ISA (avx512/elementwise.c,
 * avx2/elementwise.c, neon/elementwise.c): unary activations and transcendentals, binary
 * arithmetic in three operand forms, softmax rows and mid-axis sums.
 *
 * Every kernel works on a contiguous range and can run in place (out == in):
 * a thread pool splits them by element or row ranges.
 *
 * Exact ops (bit-identical to the reference kernels, NaN and -0 included):
 * RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1, HARD_SWISH, NEG, ABS, ADD, SUB, MUL, DIV,
 * MAXIMUM, MINIMUM, SQUARED_DIFFERENCE (and the clamp of a fused activation),
 * MAX_POOL_2D and AVERAGE_POOL_2D (same taps, same order, same division).
 *
 * Transcendentals — error bounds against the reference kernels (libm in
 * float, GELU in double), measured over sweeps of [-200, 200] plus special
 * values and enforced by tests/unit/test_kernels.c (test_unary); "ulp" is the
 * distance in representable floats, results below FLT_MIN (denormals) may
 * instead differ by up to 2^-126 in absolute terms:
 *
 *   EXP        exp(x) = 2^n * p(r), n = round(x / ln2), r = x - n ln2
 *              (Cody-Waite, two constants), p the degree-7 Taylor-like
 *              minimax of Cephes' expf; scaled by vscale2. <= 3 ulp;
 *              overflow to +inf above 88.72284, 0 below -103.97, NaN -> NaN.
 *   LOGISTIC   e = exp(-|x|) (on AVX-512 from a 16-entry table of 2^(i/16) and
 *              a cubic, v_exp_nonpositive); (x >= 0 ? 1 : e) / (1 + e), one division;
 *              LiteRT's cutoffs kept: x < -9 -> exp(x), x > 16.619 -> 1.
 *              <= 4 ulp.
 *   SILU       x * LOGISTIC(x) (the LOGISTIC + MUL pattern fused). <= 5 ulp
 *              against the two reference kernels run one after the other;
 *              below x = -87.3 LOGISTIC(x) is a denormal in both, and the
 *              results differ by up to |x| * 2^-148.
 *   TANH       |x| < 0.625: odd polynomial (Cephes tanhf); else
 *              sign(x) (1 - 2 / (exp(2|x|) + 1)). <= 4 ulp.
 *   GELU       x * Phi(x) with Phi(x) = erfc(-x/sqrt2)/2 from the
 *              Numerical Recipes erfc (fractional error < 1.2e-7 for all
 *              arguments): erfc(z) = t exp(-z^2 + P(t)), t = 1/(1 + z/2);
 *              z^2 = x^2/2 is carried exactly (FMA residual) so large |x|
 *              keep full relative accuracy. <= 16 ulp.
 *   GELU_TANH  x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3) (the
 *              tanh form rewritten without cancellation). The float rounding
 *              of u is amplified by |2u| for negative x: bound 16 ulp +
 *              |2u| * 2^-21 relative. The reference's own double
 *              1 + tanh(u) is off by up to 2^-53 (it cancels to 0 below
 *              x = -5.5); there results may differ by |x| 2^-52 absolute,
 *              wick's being the accurate ones.
 *
 * Softmax and the sums reassociate the reference's sequential float sums
 * (lane-wise partial sums): results differ by rounding only.
 */
#include <math.h>

#include "kernels/kernels.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---------------------------------------------------------------- transcendentals */

/* p(r) of exp(x) = 2^n p(r), r = x - n ln2 (Cody-Waite, two constants). */
ALWAYS_INLINE vf v_exp_poly(vf x, vf n) {
  vf r = vfnma(n, vset1(0.693359375f), x);
  r = vfnma(n, vset1(-2.12194440e-4f), r);
  vf p = vset1(1.9875691500e-4f);
  p = vfma(p, r, vset1(1.3981999507e-3f));
  p = vfma(p, r, vset1(8.3334519073e-3f));
  p = vfma(p, r, vset1(4.1665795894e-2f));
  p = vfma(p, r, vset1(1.6666665459e-1f));
  p = vfma(p, r, vset1(5.0000001201e-1f));
  p = vfma(p, vmul(r, r), r);
  return vadd(p, vset1(1.0f));
}

/* Where vscale2 is a single instruction (AVX-512's VSCALEFPS, exact for
 * every n: overflow, denormal results and NaN included) exp is the general
 * path below for every vector. Elsewhere n = round(x / ln2) comes from
 * adding 1.5 * 2^23 (nearest-even, the same integer as vround), so when every
 * lane's n is in [-126, 127] (x in about [-87.3, 88.0]: nearly always) 2^n is
 * that sum's bits shifted into the exponent field and the result is one exact
 * product p * 2^n; other vectors (overflow, denormal results, clamping) take
 * the general path with vscale2. All give the same bits wherever they apply. */
ALWAYS_INLINE vf v_exp(vf x) {
#ifndef SIMD_SCALE2_IS_CHEAP
  const vf magic = vset1(12582912.0f);
  const vf t = vadd(vmul(x, vset1(1.44269504088896341f)), magic);
  const vf n = vsub(t, magic);
  if (!vany(vor(vlt(n, vset1(-126.0f)), vgt(n, vset1(127.0f)))))
    return vmul(v_exp_poly(x, n), vpow2_magic(t)); /* NaN lanes stay NaN */
#endif
  x = vmin(vset1(89.0f), vmax(vset1(-104.0f), x)); /* NaN passes both */
  const vf nc = vround(vmul(x, vset1(1.44269504088896341f)));
  return vscale2(v_exp_poly(x, nc), nc);
}

#ifdef SIMD_HAS_LUT16
/* 2^(i/16), i = 0..15, rounded to float. */
static const float exp2_sixteenths[16] = {1.000000000e+00f, 1.044273734e+00f, 1.090507746e+00f,
                                          1.138788581e+00f, 1.189207077e+00f, 1.241857767e+00f,
                                          1.296839595e+00f, 1.354255557e+00f, 1.414213538e+00f,
                                          1.476826191e+00f, 1.542210817e+00f, 1.610490322e+00f,
                                          1.681792855e+00f, 1.756252170e+00f, 1.834008098e+00f,
                                          1.915206552e+00f};

/* exp(x) for x <= 0 (or NaN) where simd.h has a 16-entry table lookup (AVX-512's VPERMPS):
 * n = round(x * 16 / ln2) (the 1.5 * 2^23 bias leaves n in the sum's low bits, which pick the
 * table entry 2^((n mod 16) / 16)), r = x - n ln2/16 (Cody-Waite, two constants) in
 * [-ln2/32, ln2/32], exp(r) = 1 + r + r^2/2 + r^3/6 (the next term is below 2^-26 there),
 * scaled by 2^floor(n / 16) (VSCALEFPS: exact, denormal results included). Fewer operations
 * than the degree-7 polynomial over [-ln2/2, ln2/2] (SILU's exp is most of its time), and
 * within about 1 ulp. */
ALWAYS_INLINE vf v_exp_nonpositive(vf x) {
  x = vmax(vset1(-104.0f), x); /* NaN passes */
  const vf magic = vset1(12582912.0f);
  const vf t = vfma(x, vset1(23.0831203f), magic);
  const vf n = vsub(t, magic);
  vf r = vfnma(n, vset1(0.693359375f / 16.0f), x);
  r = vfnma(n, vset1(-2.12194440e-4f / 16.0f), r);
  const vf entry = vlut16(t, vload_table16(exp2_sixteenths));
  const vf q = vfma(vfma(vset1(0.16666667f), r, vset1(0.5f)), vmul(r, r), r); /* exp(r) - 1 */
  return vscale2(vfma(entry, q, entry), vmul(n, vset1(0.0625f)));
}
#else
/* v_exp for x <= 0 (or NaN): the same bits without the checks that only x > 0 can fail (the
 * range test's n > 127, the clamp at 89). */
ALWAYS_INLINE vf v_exp_nonpositive(vf x) {
#ifndef SIMD_SCALE2_IS_CHEAP
  const vf magic = vset1(12582912.0f);
  const vf t = vadd(vmul(x, vset1(1.44269504088896341f)), magic);
  const vf n = vsub(t, magic);
  if (!vany(vlt(n, vset1(-126.0f)))) return vmul(v_exp_poly(x, n), vpow2_magic(t));
#endif
  x = vmax(vset1(-104.0f), x); /* NaN passes */
  const vf nc = vround(vmul(x, vset1(1.44269504088896341f)));
  return vscale2(v_exp_poly(x, nc), nc);
}
#endif

/* -|x| (NaN stays NaN): one instruction where simd.h defines vnegabs. */
#ifndef SIMD_HAS_NEGABS
ALWAYS_INLINE vf vnegabs(vf x) { return vneg(vabs(x)); }
#endif

/* LiteRT's logistic: exp(x) below -9, 1 above 16.619..., else 1/(1+exp(-x)). e = exp(-|x|)
 * comes from v_exp_nonpositive (SILU and LOGISTIC are ~18% of EfficientNet-B0's time). */
ALWAYS_INLINE vf v_logistic(vf x) {
  const vf e = v_exp_nonpositive(vnegabs(x));
  const vf one = vset1(1.0f);
  vf r = vdiv(vselect(vge(x, vzero()), one, e), vadd(one, e));
  r = vselect(vlt(x, vset1(-9.0f)), e, r);
  return vselect(vgt(x, vset1(16.619047164916992188f)), one, r);
}

ALWAYS_INLINE vf v_tanh(vf x) {
  const vf ax = vabs(x);
  const vf z = vmul(x, x);
  vf p = vset1(-5.70498872745e-3f);
  p = vfma(p, z, vset1(2.06390887954e-2f));
  p = vfma(p, z, vset1(-5.37397155531e-2f));
  p = vfma(p, z, vset1(1.33314422036e-1f));
  p = vfma(p, z, vset1(-3.33332819422e-1f));
  const vf small = vfma(vmul(p, z), x, x);
  const vf e = v_exp(vadd(ax, ax));
  const vf big = vsub(vset1(1.0f), vdiv(vset1(2.0f), vadd(e, vset1(1.0f))));
  return vcopysign(vselect(vlt(ax, vset1(0.625f)), small, big), x); /* tanh(-0) = -0 */
}

/* x * Phi(x), Phi(x) = erfc(-x / sqrt2) / 2. */
ALWAYS_INLINE vf v_gelu(vf x) {
  const vf ax = vabs(x);
  const vf z = vmul(ax, vset1(0.70710678118654752f));
  const vf t = vdiv(vset1(1.0f), vfma(z, vset1(0.5f), vset1(1.0f)));
  vf p = vset1(0.17087277f);
  p = vfma(p, t, vset1(-0.82215223f));
  p = vfma(p, t, vset1(1.48851587f));
  p = vfma(p, t, vset1(-1.13520398f));
  p = vfma(p, t, vset1(0.27886807f));
  p = vfma(p, t, vset1(-0.18628806f));
  p = vfma(p, t, vset1(0.09678418f));
  p = vfma(p, t, vset1(0.37409196f));
  p = vfma(p, t, vset1(1.00002368f));
  p = vfma(p, t, vset1(-1.26551223f));
  /* z^2 = x^2 / 2 = (x2 + x2e) / 2 exactly. */
  const vf x2 = vmul(ax, ax);
  const vf x2e = vfma(ax, ax, vneg(x2));
  const vf half = vset1(0.5f);
  const vf e = vmul(v_exp(vneg(vmul(x2, half))), v_exp(vfnma(x2e, half, p)));
  vf q = vmul(vmul(t, e), half); /* erfc(|x|/sqrt2) / 2 = Phi(-|x|) */
  q = vselect(vgt(ax, vset1(40.0f)), vzero(), q);
  const vf phi = vselect(vge(x, vzero()), vsub(vset1(1.0f), q), q);
  return vmul(x, phi);
}

ALWAYS_INLINE vf v_gelu_tanh(vf x) {
  const vf x2 = vmul(x, x);
  const vf u =
      vmul(vmul(x, vset1(0.79788456080286535588f)), vfma(x2, vset1(0.044715f), vset1(1.0f)));
  const vf e = v_exp(vmul(u, vset1(-2.0f)));
  return vdiv(x, vadd(vset1(1.0f), e));
}

ALWAYS_INLINE vf v_hard_swish(vf x) {
  vf r = vadd(x, vset1(3.0f));
  r = vmin(vset1(6.0f), vmax(vzero(), r)); /* NaN passes, as the reference's compare chain */
  return vdiv(vmul(x, r), vset1(6.0f));
}

/* ---------------------------------------------------------------- unary */

#define UNARY_KERNEL(NAME, EXPR)                                 \
  void ISA_SUFFIX(NAME)(size_t n, const float *in, float *out) { \
    size_t i = 0;                                                \
    for (; i + 2 * VL <= n; i += 2 * VL) {                       \
      vf x = vload(in + i), y = vload(in + i + VL);              \
      vf rx, ry;                                                 \
      {                                                          \
        const vf v = x;                                          \
        rx = (EXPR);                                             \
      }                                                          \
      {                                                          \
        const vf v = y;                                          \
        ry = (EXPR);                                             \
      }                                                          \
      vstore(out + i, rx);                                       \
      vstore(out + i + VL, ry);                                  \
    }                                                            \
    for (; i < n; i += VL) {                                     \
      const vmask m = vmask_tail(n - i);                         \
      const vf v = vloadm(in + i, m);                            \
      vstorem(out + i, m, (EXPR));                               \
    }                                                            \
  }

/* RELU: x < 0 ? 0 : x = vmax(0, x) (x second: NaN and -0 pass). */
UNARY_KERNEL(wick_f32_relu, vmax(vzero(), v))
UNARY_KERNEL(wick_f32_relu6, vmin(vset1(6.0f), vmax(vzero(), v)))
UNARY_KERNEL(wick_f32_relu_n1_to_1, vmin(vset1(1.0f), vmax(vset1(-1.0f), v)))
UNARY_KERNEL(wick_f32_relu_0_to_1, vmin(vset1(1.0f), vmax(vzero(), v)))
UNARY_KERNEL(wick_f32_logistic, v_logistic(v))
UNARY_KERNEL(wick_f32_silu, vmul(v, v_logistic(v)))
UNARY_KERNEL(wick_f32_tanh, v_tanh(v))
UNARY_KERNEL(wick_f32_exp, v_exp(v))
UNARY_KERNEL(wick_f32_hard_swish, v_hard_swish(v))
UNARY_KERNEL(wick_f32_gelu, v_gelu(v))
UNARY_KERNEL(wick_f32_gelu_tanh, v_gelu_tanh(v))
/* NEG and ABS flip or clear the sign bit, as the reference's -x and fabsf (NaN included). */
UNARY_KERNEL(wick_f32_neg, vneg(v))
UNARY_KERNEL(wick_f32_abs, vabs(v))

/* ---------------------------------------------------------------- binary */

/* The reference's MAXIMUM/MINIMUM: NaN if either is NaN, else a > b ? a : b
 * (= the instruction, which returns b when a is NaN; patched). */
ALWAYS_INLINE vf v_maximum(vf a, vf b) { return vselect(visnan(a), a, vmax(a, b)); }
ALWAYS_INLINE vf v_minimum(vf a, vf b) { return vselect(visnan(a), a, vmin(a, b)); }
ALWAYS_INLINE vf v_sqdiff(vf a, vf b) {
  const vf d = vsub(a, b);
  return vmul(d, d);
}

/* out = clamp(a op b): VV both vectors, VS b a scalar, SV a a scalar. */
#define BINARY_KERNELS(NAME, EXPR)                                                              \
  void ISA_SUFFIX(wick_f32_##NAME##_vv)(size_t n, const float *pa, const float *pb, float *out, \
                                        float lo, float hi) {                                   \
    const vf vlo = vset1(lo), vhi = vset1(hi);                                                  \
    size_t i = 0;                                                                               \
    for (; i + VL <= n; i += VL) {                                                              \
      const vf a = vload(pa + i), b = vload(pb + i);                                            \
      vstore(out + i, vmin(vhi, vmax(vlo, (EXPR))));                                            \
    }                                                                                           \
    if (i < n) {                                                                                \
      const vmask m = vmask_tail(n - i);                                                        \
      const vf a = vloadm(pa + i, m), b = vloadm(pb + i, m);                                    \
      vstorem(out + i, m, vmin(vhi, vmax(vlo, (EXPR))));                                        \
    }                                                                                           \
  }                                                                                             \
  void ISA_SUFFIX(wick_f32_##NAME##_vs)(size_t n, const float *pa, const float *pb, float *out, \
                                        float lo, float hi) {                                   \
    const vf vlo = vset1(lo), vhi = vset1(hi), b = vset1(*pb);                                  \
    size_t i = 0;                                                                               \
    for (; i + VL <= n; i += VL) {                                                              \
      const vf a = vload(pa + i);                                                               \
      vstore(out + i, vmin(vhi, vmax(vlo, (EXPR))));                                            \
    }                                                                                           \
    if (i < n) {                                                                                \
      const vmask m = vmask_tail(n - i);                                                        \
      const vf a = vloadm(pa + i, m);                                                           \
      vstorem(out + i, m, vmin(vhi, vmax(vlo, (EXPR))));                                        \
    }                                                                                           \
  }                                                                                             \
  void ISA_SUFFIX(wick_f32_##NAME##_sv)(size_t n, const float *pa, const float *pb, float *out, \
                                        float lo, float hi) {                                   \
    const vf vlo = vset1(lo), vhi = vset1(hi), a = vset1(*pa);                                  \
    size_t i = 0;                                                                               \
    for (; i + VL <= n; i += VL) {                                                              \
      const vf b = vload(pb + i);                                                               \
      vstore(out + i, vmin(vhi, vmax(vlo, (EXPR))));                                            \
    }                                                                                           \
    if (i < n) {                                                                                \
      const vmask m = vmask_tail(n - i);                                                        \
      const vf b = vloadm(pb + i, m);                                                           \
      vstorem(out + i, m, vmin(vhi, vmax(vlo, (EXPR))));                                        \
    }                                                                                           \
  }

BINARY_KERNELS(add, vadd(a, b))
BINARY_KERNELS(sub, vsub(a, b))
BINARY_KERNELS(mul, vmul(a, b))
BINARY_KERNELS(div, vdiv(a, b))
BINARY_KERNELS(maximum, v_maximum(a, b))
BINARY_KERNELS(minimum, v_minimum(a, b))
BINARY_KERNELS(sqdiff, v_sqdiff(a, b))

/* ---------------------------------------------------------------- rows */

/* Softmax over each of rows [row_begin, row_end) of `cols` floats: y =
 * exp(beta (x - max)) / sum, as wick_f32_softmax__reference (max skips NaN,
 * the sum is multiplied by its reciprocal). */
void ISA_SUFFIX(wick_f32_softmax)(size_t cols, float beta, const float *in, float *out,
                                  size_t row_begin, size_t row_end) {
  const vf vbeta = vset1(beta);
  for (size_t r = row_begin; r < row_end; r++) {
    const float *x = in + r * cols;
    float *y = out + r * cols;
    vf vm = vset1(-INFINITY);
    size_t c = 0;
    for (; c + VL <= cols; c += VL) vm = vmax(vload(x + c), vm);
    float mx = vreduce_max(vm);
    for (; c < cols; c++) mx = x[c] > mx ? x[c] : mx;
    const vf vmx = vset1(mx);
    for (c = 0; c < cols; c += VL) {
      const vmask m = vmask_tail(cols - c);
      vstorem(y + c, m, v_exp(vmul(vbeta, vsub(vloadm(x + c, m), vmx))));
    }
    vf vs = vzero();
    for (c = 0; c + VL <= cols; c += VL) vs = vadd(vs, vload(y + c));
    float sum = vreduce_add(vs);
    for (; c < cols; c++) sum += y[c];
    const vf inv = vset1(1.0f / sum);
    for (c = 0; c < cols; c += VL) {
      const vmask m = vmask_tail(cols - c);
      vstorem(y + c, m, vmul(vloadm(y + c, m), inv));
    }
  }
}

/* out[o, i] = scale * sum_r in[o, r, i] for o in [outer_begin, outer_end):
 * the reduction of the middle axis of [outer, mid, inner] (MEAN / SUM over
 * spatial axes: inner = channels; over the last axis: inner = 1). */
void ISA_SUFFIX(wick_f32_sum_mid)(size_t mid, size_t inner, float scale, const float *in,
                                  float *out, size_t outer_begin, size_t outer_end) {
  const vf vscale = vset1(scale);
  for (size_t o = outer_begin; o < outer_end; o++) {
    const float *x = in + o * mid * inner;
    float *y = out + o * inner;
    if (inner == 1) {
      vf a0 = vzero(), a1 = vzero();
      size_t r = 0;
      for (; r + 2 * VL <= mid; r += 2 * VL) {
        a0 = vadd(a0, vload(x + r));
        a1 = vadd(a1, vload(x + r + VL));
      }
      if (r + VL <= mid) {
        a0 = vadd(a0, vload(x + r));
        r += VL;
      }
      if (r < mid) a1 = vadd(a1, vloadm(x + r, vmask_tail(mid - r)));
      *y = vreduce_add(vadd(a0, a1)) * scale;
      continue;
    }
    size_t i = 0;
    for (; i + 4 * VL <= inner; i += 4 * VL) {
      vf a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
      for (size_t r = 0; r < mid; r++) {
        const float *p = x + r * inner + i;
        a0 = vadd(a0, vload(p));
        a1 = vadd(a1, vload(p + VL));
        a2 = vadd(a2, vload(p + 2 * VL));
        a3 = vadd(a3, vload(p + 3 * VL));
      }
      vstore(y + i, vmul(a0, vscale));
      vstore(y + i + VL, vmul(a1, vscale));
      vstore(y + i + 2 * VL, vmul(a2, vscale));
      vstore(y + i + 3 * VL, vmul(a3, vscale));
    }
    for (; i < inner; i += VL) {
      const vmask m = vmask_tail(inner - i);
      vf a0 = vzero(), a1 = vzero();
      size_t r = 0;
      for (; r + 2 <= mid; r += 2) {
        a0 = vadd(a0, vloadm(x + r * inner + i, m));
        a1 = vadd(a1, vloadm(x + (r + 1) * inner + i, m));
      }
      if (r < mid) a0 = vadd(a0, vloadm(x + r * inner + i, m));
      vstorem(y + i, m, vmul(vadd(a0, a1), vscale));
    }
  }
}

/* ---------------------------------------------------------------- pooling */

/* MAX_POOL_2D / AVERAGE_POOL_2D over a whole NHWC tensor (or the sub-shape of
 * some output rows, ops/parallel.h), vectorized over channels: for each
 * output pixel the in-bounds taps in (ky, kx) order, as the reference. */
ALWAYS_INLINE void pool_pixel(bool IS_MAX, bool MASKED, const float *in, size_t in_w, size_t cs,
                              int64_t y0, int64_t x0, int64_t ky_lo, int64_t ky_hi, int64_t kx_lo,
                              int64_t kx_hi, float *out, size_t c0, vmask m, vf vlo, vf vhi) {
  vf acc = IS_MAX ? vset1(-INFINITY) : vzero();
  for (int64_t ky = ky_lo; ky < ky_hi; ky++) {
    const float *row = in + (size_t)(y0 + ky) * in_w * cs + c0;
    for (int64_t kx = kx_lo; kx < kx_hi; kx++) {
      const float *p = row + (size_t)(x0 + kx) * cs;
      const vf v = MASKED ? vloadm(p, m) : vload(p);
      acc = IS_MAX ? vmax(v, acc) : vadd(acc, v); /* v > acc ? v : acc, as the reference */
    }
  }
  if (!IS_MAX) {
    const int64_t count = (ky_hi - ky_lo) * (kx_hi - kx_lo);
    acc = count > 0 ? vdiv(acc, vset1((float)count)) : vzero();
  }
  acc = vmin(vhi, vmax(vlo, acc));
  if (MASKED)
    vstorem(out + c0, m, acc);
  else
    vstore(out + c0, acc);
}

ALWAYS_INLINE void pool(bool IS_MAX, const wick_pool_shape *s, const float *in, float *out,
                        float lo, float hi) {
  const size_t cs = (size_t)s->channels, in_w = (size_t)s->in_w;
  const vf vlo = vset1(lo), vhi = vset1(hi);
  for (int64_t n = 0; n < s->batch; n++) {
    const float *img = in + (size_t)n * (size_t)s->in_h * in_w * cs;
    for (int64_t y = 0; y < s->out_h; y++) {
      const int64_t y0 = y * s->stride_h - s->pad_top;
      const int64_t ky_lo = y0 < 0 ? -y0 : 0;
      const int64_t ky_hi = s->in_h - y0 < s->k_h ? s->in_h - y0 : s->k_h;
      for (int64_t x = 0; x < s->out_w; x++) {
        const int64_t x0 = x * s->stride_w - s->pad_left;
        const int64_t kx_lo = x0 < 0 ? -x0 : 0;
        const int64_t kx_hi = s->in_w - x0 < s->k_w ? s->in_w - x0 : s->k_w;
        float *o =
            out + (((size_t)n * (size_t)s->out_h + (size_t)y) * (size_t)s->out_w + (size_t)x) * cs;
        size_t c0 = 0;
        for (; c0 + VL <= cs; c0 += VL)
          pool_pixel(IS_MAX, false, img, in_w, cs, y0, x0, ky_lo, ky_hi, kx_lo, kx_hi, o, c0,
                     vmask_all(), vlo, vhi);
        if (c0 < cs)
          pool_pixel(IS_MAX, true, img, in_w, cs, y0, x0, ky_lo, ky_hi, kx_lo, kx_hi, o, c0,
                     vmask_tail(cs - c0), vlo, vhi);
      }
    }
  }
}

void ISA_SUFFIX(wick_f32_max_pool)(const wick_pool_shape *s, const float *in, float *out, float lo,
                                   float hi) {
  pool(true, s, in, out, lo, hi);
}

void ISA_SUFFIX(wick_f32_average_pool)(const wick_pool_shape *s, const float *in, float *out,
                                       float lo, float hi) {
  pool(false, s, in, out, lo, hi);
}

/* PRELU over n elements with one alpha each: out = x >= 0 ? x : x * alpha (in place allowed),
 * bit-identical to wick_f32_prelu_channels (the same multiply; NaN fails the test and takes
 * x * alpha, -0 passes it). */
void ISA_SUFFIX(wick_f32_prelu)(size_t n, const float *x, const float *alpha, float *out) {
  size_t i = 0;
  for (; i + VL <= n; i += VL) {
    const vf v = vload(x + i);
    vstore(out + i, vselect(vge(v, vzero()), v, vmul(v, vload(alpha + i))));
  }
  if (i < n) {
    const vmask m = vmask_tail(n - i);
    const vf v = vloadm(x + i, m);
    vstorem(out + i, m, vselect(vge(v, vzero()), v, vmul(v, vloadm(alpha + i, m))));
  }
}
