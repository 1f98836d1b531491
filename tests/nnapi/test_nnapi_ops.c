/*
 * test_nnapi_ops.c — the operations of wick's test NNAPI implementation, each
 * in three phases (test_nnapi.h):
 *
 *   NN_CHECK_TYPES   at addOperation: the operand count, the operand types
 *                    the operation takes at the configured feature level
 *                    (as the NDK reference lists them: "since API level N"),
 *                    and the quantization rules it states (output scale >
 *                    input scale x filter scale before 29, LOGISTIC's 1/256,
 *                    the same scale and zero point where it says so, ...);
 *   NN_CHECK_SHAPES  at finish: the values of the scalar parameters and every
 *                    output's declared shape against the shape the operation
 *                    computes;
 *   NN_RUN           the computation, in plain C.
 *
 * Arithmetic: float32 in float, accumulating in a fixed loop order (results
 * may differ from wick's kernels in the last bits: the tests allow 1e-5
 * relative). 8-bit operations follow the integer arithmetic of Android's NNAPI
 * CPU reference (TFLite's reference kernels): accumulate in int32, requantize
 * with a Q31 multiplier and a shift (rounding half away from zero), add the
 * output zero point and clamp to the fused activation's range; FULLY_CONNECTED
 * rescales its accumulator in double; ADD/SUB scale both sides to 2^20 steps;
 * quantized SOFTMAX uses the gemmlowp fixed-point exp and reciprocal; LOGISTIC
 * and TANH evaluate the float function per input value; PRELU forms its two
 * real multipliers in double and MUL divides the float product of its input
 * scales by the output scale in double, as that CPU path does (TFLite: both in
 * float). Written here, not
 * taken from wick: a wick kernel bug and a test-runtime bug would have to be
 * the same bug to hide.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_nnapi_ops.h"

/* ---------------------------------------------------------------- fixed point */

static void quantize_multiplier(double m, int32_t *q, int32_t *shift) {
  if (!(m > 0)) {
    *q = 0;
    *shift = 0;
    return;
  }
  int e;
  double f = frexp(m, &e);
  int64_t fixed = (int64_t)round(f * 2147483648.0);
  if (fixed == ((int64_t)1 << 31)) {
    fixed /= 2;
    e++;
  }
  if (e < -31) {
    fixed = 0;
    e = 0;
  }
  *q = (int32_t)fixed;
  *shift = e;
}

/* (a * b * 2) / 2^32 rounded to nearest (gemmlowp's
 * SaturatingRoundingDoublingHighMul). */
static int32_t high_mul(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));
}

/* x / 2^e rounded to nearest, ties away from zero. */
static int32_t div_pot(int32_t x, int e) {
  if (e <= 0) return x;
  int64_t mask = ((int64_t)1 << e) - 1, rem = (int64_t)x & mask;
  int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> e) + (rem > threshold ? 1 : 0));
}

static int32_t requantize(int32_t x, int32_t q, int32_t shift) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  int32_t shifted = (int32_t)((uint32_t)x << left);
  return div_pot(high_mul(shifted, q), right);
}

static int32_t sat_shift_left(int32_t x, int k) {
  int64_t v = (int64_t)x * ((int64_t)1 << k);
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out (a fourth-order Taylor series
 * around -1/8). */
static int32_t exp_quarter(int32_t a) {
  const int32_t exp_minus_eighth = 1895147668, one_third = 715827883;
  int32_t x = a + (1 << 28);
  int32_t x2 = high_mul(x, x), x3 = high_mul(x2, x), x4 = high_mul(x2, x2);
  int32_t x4_over_4 = div_pot(x4, 2);
  int32_t poly = div_pot(high_mul(x4_over_4 + x3, one_third) + x2, 1);
  return exp_minus_eighth + high_mul(exp_minus_eighth, x + poly);
}

/* exp(a) for a <= 0 given with `int_bits` integer bits; Q0.31 result. */
static int32_t exp_negative(int32_t a, int int_bits) {
  const int frac = 31 - int_bits;
  const int32_t quarter = 1 << (frac - 2), mask = quarter - 1;
  int32_t a_mod = (a & mask) - quarter;
  int32_t result = exp_quarter(sat_shift_left(a_mod, int_bits));
  int32_t remainder = a_mod - a;
  static const int32_t factor[7] = {1672461947, 1302514674, 790015084, 290630308,
                                    39332535,   720401,     242};
  for (int k = -2; k <= 4; k++) {
    if (int_bits <= k) continue;
    int shift = frac + k;
    if (shift < 0 || shift > 30) continue;
    if (remainder & (1 << shift)) result = high_mul(result, factor[k + 2]);
  }
  if (int_bits > 5) {
    int32_t clamp = -(1 << (36 - int_bits));
    if (a < clamp) result = 0;
  }
  return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + a) for a in [0, 1), Q0.31 in and out (Newton-Raphson). */
static int32_t one_over_one_plus(int32_t a) {
  int64_t s = (int64_t)a + INT32_MAX;
  int32_t half_den = (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
  const int32_t c48_17 = 1515870810, cm32_17 = -1010580540; /* Q2.29 */
  int32_t x = c48_17 + high_mul(half_den, cm32_17);
  for (int i = 0; i < 3; i++) {
    int32_t hdx = high_mul(half_den, x);
    int32_t one_minus = (1 << 29) - hdx;
    x = x + sat_shift_left(high_mul(x, one_minus), 2);
  }
  return sat_shift_left(x, 1);
}

/* ---------------------------------------------------------------- helpers */

static int fuse_ok(nn_ctx *c, uint32_t i, int32_t *fuse) {
  TRY(get_i32(c, i, fuse));
  if (*fuse < 0 || *fuse > 3) BAD("operation %d: fuse code %d", (int)c->op->type, (int)*fuse);
  return ANEURALNETWORKS_NO_ERROR;
}

static void float_range(int32_t fuse, float *lo, float *hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  if (fuse == 1) *lo = 0;
  if (fuse == 2) *lo = -1, *hi = 1;
  if (fuse == 3) *lo = 0, *hi = 6;
}

static void quant_range(const nn_operand *o, int32_t fuse, int32_t *lo, int32_t *hi) {
  qrange(o, lo, hi);
  int32_t zero = o->zp;
  if (fuse == 1 || fuse == 3) *lo = zero > *lo ? zero : *lo;
  if (fuse == 2) {
    int32_t l = float_to_int(roundf(-1.0f / o->scale) + (float)o->zp, INT32_MIN / 2, INT32_MAX / 2,
                             o->zp),
            h = float_to_int(roundf(1.0f / o->scale) + (float)o->zp, INT32_MIN / 2, INT32_MAX / 2,
                             o->zp);
    *lo = l > *lo ? l : *lo;
    *hi = h < *hi ? h : *hi;
  }
  if (fuse == 3) {
    int32_t h =
        float_to_int(roundf(6.0f / o->scale) + (float)o->zp, INT32_MIN / 2, INT32_MAX / 2, o->zp);
    *hi = h < *hi ? h : *hi;
  }
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---------------------------------------------------------------- convolution */

typedef struct conv_params {
  int32_t pl, pr, pt, pb, sw, sh, mult, fuse, dw, dh;
} conv_params;

/* Implicit padding (NNAPI's SAME/VALID) as explicit. */
static void implicit_padding(int32_t scheme, uint32_t in, uint32_t k, int32_t stride,
                             int32_t dilation, int32_t *before, int32_t *after) {
  *before = *after = 0;
  if (scheme != ANEURALNETWORKS_PADDING_SAME) return;
  int64_t eff = (int64_t)(k - 1) * dilation + 1, out = ((int64_t)in + stride - 1) / stride;
  int64_t total = (out - 1) * stride + eff - in;
  if (total < 0) total = 0;
  *before = (int32_t)(total / 2);
  *after = (int32_t)(total - total / 2);
}

/* Reads CONV_2D / DEPTHWISE_CONV_2D / pool parameters from either signature.
 * `first` is the index of the first parameter; `kw`, `kh` the filter size. */
static int conv_read(nn_ctx *c, bool depthwise, bool pool, conv_params *p, uint32_t *kw,
                     uint32_t *kh) {
  uint32_t n = c->op->nin, first = pool ? 1 : 3, probe = depthwise ? 8 : 7;
  /* the implicit form has a BOOL (layout) where the explicit one has an INT32 */
  bool implicit = pool ? n == 7 || n == 8
                       : n == probe || (n > probe && IN(c, probe)->type == ANEURALNETWORKS_BOOL);
  memset(p, 0, sizeof *p);
  p->dw = p->dh = 1;
  p->mult = 1;
  uint32_t i = first;
  int32_t scheme = 0;
  if (implicit) {
    TRY(get_i32(c, i++, &scheme));
    if (scheme != ANEURALNETWORKS_PADDING_SAME && scheme != ANEURALNETWORKS_PADDING_VALID)
      BAD("padding scheme %d", (int)scheme);
  } else {
    TRY(get_i32(c, i++, &p->pl));
    TRY(get_i32(c, i++, &p->pr));
    TRY(get_i32(c, i++, &p->pt));
    TRY(get_i32(c, i++, &p->pb));
  }
  TRY(get_i32(c, i++, &p->sw));
  TRY(get_i32(c, i++, &p->sh));
  if (pool) {
    int32_t fw, fh;
    TRY(get_i32(c, i++, &fw));
    TRY(get_i32(c, i++, &fh));
    if (fw < 1 || fh < 1) BAD("filter %dx%d", (int)fw, (int)fh);
    *kw = (uint32_t)fw;
    *kh = (uint32_t)fh;
  }
  if (depthwise) TRY(get_i32(c, i++, &p->mult));
  TRY(fuse_ok(c, i++, &p->fuse));
  if (i < n) {
    bool nchw;
    TRY(get_bool(c, i++, &nchw));
    if (nchw) FAIL(ANEURALNETWORKS_OP_FAILED, "NCHW is not implemented by the test runtime");
  }
  if (i + 1 < n) {
    TRY(get_i32(c, i++, &p->dw));
    TRY(get_i32(c, i++, &p->dh));
  }
  if (p->sw < 1 || p->sh < 1 || p->dw < 1 || p->dh < 1 || p->mult < 1)
    BAD("stride, dilation or multiplier below 1");
  if (p->pl < 0 || p->pr < 0 || p->pt < 0 || p->pb < 0) BAD("negative padding");
  if (implicit) {
    implicit_padding(scheme, IN(c, 0)->dims[2], *kw, p->sw, p->dw, &p->pl, &p->pr);
    implicit_padding(scheme, IN(c, 0)->dims[1], *kh, p->sh, p->dh, &p->pt, &p->pb);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int conv_types(nn_ctx *c, bool depthwise) {
  uint32_t n = c->op->nin;
  bool ok = depthwise ? (n == 8 || n == 9 || n == 11 || n == 12 || n == 14)
                      : (n == 7 || n == 8 || n == 10 || n == 11 || n == 13);
  if (!ok) BAD("%s with %u inputs", depthwise ? "DEPTHWISE_CONV_2D" : "CONV_2D", n);
  const nn_operand *x = IN(c, 0), *f = IN(c, 1), *b = IN(c, 2), *y = OUT(c, 0);
  TRY(value_type(c, x, "input", 27));
  TRY(same_type_as(c, x, y, false));
  if (x->rank != 4 || f->rank != 4 || y->rank != 4 || b->rank != 1) BAD("conv ranks");
  bool implicit =
      n == (depthwise ? 8u : 7u) || IN(c, depthwise ? 8 : 7)->type == ANEURALNETWORKS_BOOL;
  uint32_t plain = implicit ? (depthwise ? 8 : 7) : (depthwise ? 11 : 10);
  for (uint32_t i = 3; i < plain; i++) TRY(scalar_type(c, i, ANEURALNETWORKS_INT32));
  if (n > plain) {
    if (c->level < 29) BAD("the layout and dilation parameters need feature level 29");
    TRY(scalar_type(c, plain, ANEURALNETWORKS_BOOL));
    for (uint32_t i = plain + 1; i < n; i++) TRY(scalar_type(c, i, ANEURALNETWORKS_INT32));
  }
  if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
    if (f->type != x->type || b->type != x->type) BAD("float conv with other filter/bias types");
    return ANEURALNETWORKS_NO_ERROR;
  }
  if (b->type != ANEURALNETWORKS_TENSOR_INT32) BAD("quantized conv bias must be TENSOR_INT32");
  if (f->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    if (c->level < 29) BAD("per-channel filters need feature level 29");
    if (b->scale != 0) BAD("a per-channel conv's bias scale must be 0");
    return ANEURALNETWORKS_NO_ERROR;
  }
  if (f->type != x->type) BAD("conv filter type %d with input type %d", (int)f->type, (int)x->type);
  float product = x->scale * f->scale;
  if (fabsf(b->scale - product) > 1e-6f * product)
    BAD("bias scale %g is not input scale x filter scale %g", (double)b->scale, (double)product);
  if (c->level < 29 && !((double)y->scale > (double)product))
    BAD("before feature level 29 the output scale must exceed input scale x filter scale");
  return ANEURALNETWORKS_NO_ERROR;
}

static int conv(nn_ctx *c, bool depthwise) {
  if (c->phase == NN_CHECK_TYPES) return conv_types(c, depthwise);
  const nn_operand *x = IN(c, 0), *f = IN(c, 1), *b = IN(c, 2), *y = OUT(c, 0);
  conv_params p;
  uint32_t kw = f->dims[2], kh = f->dims[1];
  TRY(conv_read(c, depthwise, false, &p, &kw, &kh));
  uint32_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
  uint32_t OC = depthwise ? f->dims[3] : f->dims[0];
  if (depthwise ? (f->dims[0] != 1 || OC != C * (uint32_t)p.mult) : f->dims[3] != C)
    BAD("filter shape does not match the input channels");
  if (b->dims[0] != OC) BAD("bias size %u for %u outputs", b->dims[0], OC);
  if (f->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL &&
      f->channel_dim != (depthwise ? 3u : 0u))
    BAD("per-channel filter channel dim %u", f->channel_dim);
  int64_t effh = (int64_t)(kh - 1) * p.dh + 1, effw = (int64_t)(kw - 1) * p.dw + 1;
  if (H + p.pt + p.pb < effh || W + p.pl + p.pr < effw) BAD("the filter exceeds the padded input");
  uint32_t OH = (uint32_t)((H + p.pt + p.pb - effh) / p.sh + 1);
  uint32_t OW = (uint32_t)((W + p.pl + p.pr - effw) / p.sw + 1);
  uint32_t dims[4] = {N, OH, OW, OC};
  TRY(expect_dims(c, y, dims, 4));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;

  const void *xd = in_data(c, 0), *fd = in_data(c, 1), *bd = in_data(c, 2);
  void *yd = out_data(c, 0);
  bool quant = x->type != ANEURALNETWORKS_TENSOR_FLOAT32;
  float flo, fhi;
  int32_t qlo = 0, qhi = 0;
  float_range(p.fuse, &flo, &fhi);
  if (quant) quant_range(y, p.fuse, &qlo, &qhi);
  for (uint32_t n = 0; n < N; n++)
    for (uint32_t oy = 0; oy < OH; oy++)
      for (uint32_t ox = 0; ox < OW; ox++)
        for (uint32_t oc = 0; oc < OC; oc++) {
          float facc = 0;
          int32_t qacc = 0;
          uint32_t ic0 = depthwise ? oc / (uint32_t)p.mult : 0, ic1 = depthwise ? ic0 + 1 : C;
          for (uint32_t ky = 0; ky < kh; ky++) {
            int64_t iy = (int64_t)oy * p.sh - p.pt + (int64_t)ky * p.dh;
            if (iy < 0 || iy >= H) continue;
            for (uint32_t kx = 0; kx < kw; kx++) {
              int64_t ix = (int64_t)ox * p.sw - p.pl + (int64_t)kx * p.dw;
              if (ix < 0 || ix >= W) continue;
              for (uint32_t ic = ic0; ic < ic1; ic++) {
                size_t xi = (((size_t)n * H + (size_t)iy) * W + (size_t)ix) * C + ic;
                size_t fi = depthwise ? ((size_t)ky * kw + kx) * OC + oc
                                      : (((size_t)oc * kh + ky) * kw + kx) * C + ic;
                if (!quant) {
                  facc += ((const float *)xd)[xi] * ((const float *)fd)[fi];
                } else {
                  int32_t fv = f->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL
                                   ? ((const int8_t *)fd)[fi]
                                   : ldq(f, fd, fi) - f->zp;
                  qacc += (ldq(x, xd, xi) - x->zp) * fv;
                }
              }
            }
          }
          size_t yi = (((size_t)n * OH + oy) * OW + ox) * OC + oc;
          if (!quant) {
            ((float *)yd)[yi] = clampf(facc + ((const float *)bd)[oc], flo, fhi);
            continue;
          }
          qacc += ((const int32_t *)bd)[oc];
          double real;
          /* uint8 input, per-channel filter: as Android 10's reference CPU path, the float
           * product input scale x channel scale divided in double (TFLite: all in double) */
          if (f->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL &&
              x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM)
            real = (double)(x->scale * f->channel_scales[oc]) / (double)y->scale;
          else if (f->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL)
            real = (double)x->scale * (double)f->channel_scales[oc] / (double)y->scale;
          else if (x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM) /* the legacy float product */
            real = (double)(x->scale * f->scale) / (double)y->scale;
          else
            real = (double)x->scale * (double)f->scale / (double)y->scale;
          int32_t m, s;
          quantize_multiplier(real, &m, &s);
          stq(y, yd, yi, clampi(requantize(qacc, m, s) + y->zp, qlo, qhi));
        }
  return ANEURALNETWORKS_NO_ERROR;
}

static int fully_connected(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *w = c->op->nin > 1 ? IN(c, 1) : NULL,
                   *b = c->op->nin > 2 ? IN(c, 2) : NULL, *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 4) BAD("FULLY_CONNECTED with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 27));
    TRY(same_type_as(c, x, y, false));
    TRY(scalar_type(c, 3, ANEURALNETWORKS_INT32));
    if (x->rank < 2 || w->rank != 2 || b->rank != 1 || y->rank != 2) BAD("FULLY_CONNECTED ranks");
    if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
      if (w->type != x->type || b->type != x->type) BAD("float FC with other weight/bias types");
      return ANEURALNETWORKS_NO_ERROR;
    }
    if (w->type != x->type || b->type != ANEURALNETWORKS_TENSOR_INT32)
      BAD("quantized FC weights/bias types");
    float product = x->scale * w->scale;
    if (fabsf(b->scale - product) > 1e-6f * product)
      BAD("bias scale %g is not input scale x weights scale %g", (double)b->scale, (double)product);
    if (c->level < 29 && !((double)y->scale > (double)product))
      BAD("before feature level 29 the output scale must exceed input scale x weights scale");
    return ANEURALNETWORKS_NO_ERROR;
  }
  int32_t fuse;
  TRY(fuse_ok(c, 3, &fuse));
  uint32_t units = w->dims[0], size = w->dims[1];
  size_t total = count_of(x);
  if (size == 0 || total % size) BAD("input size %u does not divide %zu", size, total);
  uint32_t batch = (uint32_t)(total / size);
  if (b->dims[0] != units) BAD("bias size");
  uint32_t dims[2] = {batch, units};
  TRY(expect_dims(c, y, dims, 2));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const void *xd = in_data(c, 0), *wd = in_data(c, 1), *bd = in_data(c, 2);
  void *yd = out_data(c, 0);
  bool quant = x->type != ANEURALNETWORKS_TENSOR_FLOAT32;
  float flo, fhi;
  int32_t qlo = 0, qhi = 0;
  float_range(fuse, &flo, &fhi);
  if (quant) quant_range(y, fuse, &qlo, &qhi);
  double scale = quant ? (double)x->scale * (double)w->scale / (double)y->scale : 0;
  for (uint32_t r = 0; r < batch; r++)
    for (uint32_t u = 0; u < units; u++) {
      if (!quant) {
        float acc = 0;
        for (uint32_t k = 0; k < size; k++)
          acc +=
              ((const float *)xd)[(size_t)r * size + k] * ((const float *)wd)[(size_t)u * size + k];
        ((float *)yd)[(size_t)r * units + u] = clampf(acc + ((const float *)bd)[u], flo, fhi);
      } else {
        int32_t acc = ((const int32_t *)bd)[u];
        for (uint32_t k = 0; k < size; k++)
          acc += (ldq(x, xd, (size_t)r * size + k) - x->zp) *
                 (ldq(w, wd, (size_t)u * size + k) - w->zp);
        /* the accumulator rescaled in double and rounded (TFLite's reference) */
        int32_t v = (int32_t)round((double)acc * scale) + y->zp;
        stq(y, yd, (size_t)r * units + u, clampi(v, qlo, qhi));
      }
    }
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- elementwise */

static int binary(nn_ctx *c) {
  const int32_t type = c->op->type;
  const nn_operand *a = IN(c, 0), *b = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 3) BAD("binary operation with %u inputs", c->op->nin);
    if (a->type == ANEURALNETWORKS_TENSOR_INT32 && type != ANEURALNETWORKS_DIV) {
      /* int32 ADD, SUB, MUL: feature level 30 (NNAPI feature level 4), no fused activation */
      if (c->level < 30) BAD("operation %d on TENSOR_INT32 needs feature level 30", (int)type);
      TRY(same_type_as(c, a, b, false));
      TRY(same_type_as(c, a, y, false));
      TRY(scalar_type(c, 2, ANEURALNETWORKS_INT32));
      int32_t fuse;
      TRY(get_i32(c, 2, &fuse));
      if (fuse != ANEURALNETWORKS_FUSED_NONE)
        BAD("operation %d on TENSOR_INT32 with a fused activation", (int)type);
      return ANEURALNETWORKS_NO_ERROR;
    }
    /* DIV: float32 here (int32 at 30 is not used); SUB's uint8 form is 29 */
    TRY(value_type(c, a, "input",
                   type == ANEURALNETWORKS_DIV   ? 0
                   : type == ANEURALNETWORKS_SUB ? 29
                                                 : 27));
    TRY(same_type_as(c, a, b, false));
    TRY(same_type_as(c, a, y, false));
    TRY(scalar_type(c, 2, ANEURALNETWORKS_INT32));
    if (type == ANEURALNETWORKS_MUL && q8(a->type) &&
        !((double)y->scale > (double)a->scale * (double)b->scale))
      BAD("quantized MUL needs output scale > input1 scale x input2 scale");
    return ANEURALNETWORKS_NO_ERROR;
  }
  int32_t fuse;
  TRY(fuse_ok(c, 2, &fuse));
  uint32_t dims[4], rank;
  TRY(broadcast_dims(c, a, b, dims, &rank));
  TRY(expect_dims(c, y, dims, rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const void *ad = in_data(c, 0), *bd = in_data(c, 1);
  void *yd = out_data(c, 0);
  size_t total = count_of(y);
  float flo, fhi;
  float_range(fuse, &flo, &fhi);
  int32_t qlo = 0, qhi = 0, m1 = 0, s1 = 0, m2 = 0, s2 = 0, mo = 0, so = 0;
  if (q8(a->type)) {
    quant_range(y, fuse, &qlo, &qhi);
    if (type == ANEURALNETWORKS_MUL) {
      /* as NNAPI's reference CPU path: the float product of the input scales, divided by
       * the output scale in double (TFLite: all in float) */
      quantize_multiplier((double)(a->scale * b->scale) / (double)y->scale, &mo, &so);
    } else { /* both sides on 2^20 steps of twice the larger input scale */
      double twice_max = (double)(2.0f * (a->scale > b->scale ? a->scale : b->scale));
      quantize_multiplier((double)a->scale / twice_max, &m1, &s1);
      quantize_multiplier((double)b->scale / twice_max, &m2, &s2);
      quantize_multiplier(twice_max / (double)((float)(1 << 20) * y->scale), &mo, &so);
    }
  }
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0; e < total; e++) {
    size_t ia = bc_offset(a, idx, rank), ib = bc_offset(b, idx, rank);
    if (a->type == ANEURALNETWORKS_TENSOR_INT32) { /* two's complement wrap-around */
      uint32_t va = (uint32_t)((const int32_t *)ad)[ia], vb = (uint32_t)((const int32_t *)bd)[ib];
      uint32_t r = type == ANEURALNETWORKS_ADD   ? va + vb
                   : type == ANEURALNETWORKS_SUB ? va - vb
                                                 : va * vb;
      ((int32_t *)yd)[e] = (int32_t)r;
    } else if (a->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
      float va = ((const float *)ad)[ia], vb = ((const float *)bd)[ib];
      float r = type == ANEURALNETWORKS_ADD   ? va + vb
                : type == ANEURALNETWORKS_SUB ? va - vb
                : type == ANEURALNETWORKS_DIV ? va / vb
                                              : va * vb;
      ((float *)yd)[e] = clampf(r, flo, fhi);
    } else {
      int32_t va = ldq(a, ad, ia) - a->zp, vb = ldq(b, bd, ib) - b->zp, r;
      if (type == ANEURALNETWORKS_MUL) {
        r = requantize(va * vb, mo, so) + y->zp;
      } else {
        int32_t sa = requantize(va * (1 << 20), m1, s1), sb = requantize(vb * (1 << 20), m2, s2);
        r = requantize(type == ANEURALNETWORKS_ADD ? sa + sb : sa - sb, mo, so) + y->zp;
      }
      stq(y, yd, e, clampi(r, qlo, qhi));
    }
    for (int k = (int)rank - 1; k >= 0; k--) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int unary(nn_ctx *c) {
  const int32_t type = c->op->type;
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 1) BAD("operation %d with %u inputs", (int)type, c->op->nin);
    int64_t q8u = type == ANEURALNETWORKS_TANH ? 29 : type == ANEURALNETWORKS_HARD_SWISH ? 0 : 27;
    TRY(value_type(c, x, "input", q8u));
    bool u8 = x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
    if (type == ANEURALNETWORKS_LOGISTIC && q8(x->type)) {
      TRY(same_type_as(c, x, y, false));
      if (y->scale != 1.0f / 256 || y->zp != (u8 ? 0 : -128))
        BAD("quantized LOGISTIC output must be scale 1/256, zero point %d", u8 ? 0 : -128);
    } else if (type == ANEURALNETWORKS_TANH && q8(x->type)) {
      TRY(same_type_as(c, x, y, false));
      if (y->scale != 1.0f / 128 || y->zp != (u8 ? 128 : 0))
        BAD("quantized TANH output must be scale 1/128, zero point %d", u8 ? 128 : 0);
    } else {
      TRY(same_type_as(c, x, y, true));
    }
    return ANEURALNETWORKS_NO_ERROR;
  }
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const void *xd = in_data(c, 0);
  void *yd = out_data(c, 0);
  size_t n = count_of(x);
  for (size_t i = 0; i < n; i++) {
    float v = x->type == ANEURALNETWORKS_TENSOR_FLOAT32 ? ((const float *)xd)[i]
                                                        : x->scale * (float)(ldq(x, xd, i) - x->zp);
    if (q8(x->type) && (type == ANEURALNETWORKS_RELU || type == ANEURALNETWORKS_RELU1 ||
                        type == ANEURALNETWORKS_RELU6)) {
      int32_t lo, hi;
      quant_range(y, type - ANEURALNETWORKS_RELU + 1, &lo, &hi); /* RELU=1, RELU1=2, RELU6=3 */
      stq(y, yd, i, clampi(ldq(x, xd, i), lo, hi));
      continue;
    }
    float r;
    switch (type) {
      case ANEURALNETWORKS_RELU: r = v > 0 ? v : 0; break;
      case ANEURALNETWORKS_RELU1: r = clampf(v, -1, 1); break;
      case ANEURALNETWORKS_RELU6: r = clampf(v, 0, 6); break;
      case ANEURALNETWORKS_LOGISTIC: r = 1.0f / (1.0f + expf(-v)); break;
      case ANEURALNETWORKS_TANH: r = tanhf(v); break;
      default: r = v * clampf(v + 3, 0, 6) / 6; break; /* HARD_SWISH */
    }
    if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
      ((float *)yd)[i] = r;
    } else { /* the float function at this input value, rounded to the output's step */
      int32_t lo, hi;
      qrange(y, &lo, &hi);
      float q = roundf(r * (1.0f / y->scale)) + (float)y->zp;
      stq(y, yd, i, float_to_int(q, lo, hi, y->zp));
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- pooling */

static int pool(nn_ctx *c) {
  const bool average = c->op->type == ANEURALNETWORKS_AVERAGE_POOL_2D;
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  uint32_t n = c->op->nin;
  if (c->phase == NN_CHECK_TYPES) {
    if (n != 7 && n != 8 && n != 10 && n != 11) BAD("pool with %u inputs", n);
    TRY(value_type(c, x, "input", 27));
    TRY(same_type_as(c, x, y, true));
    if (x->rank != 4) BAD("pool on rank %u", x->rank);
    uint32_t plain = n <= 8 ? 7 : 10;
    for (uint32_t i = 1; i < plain; i++) TRY(scalar_type(c, i, ANEURALNETWORKS_INT32));
    if (n > plain) TRY(scalar_type(c, plain, ANEURALNETWORKS_BOOL));
    return ANEURALNETWORKS_NO_ERROR;
  }
  conv_params p;
  uint32_t kw = 0, kh = 0;
  TRY(conv_read(c, false, true, &p, &kw, &kh));
  uint32_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
  if (H + p.pt + p.pb < kh || W + p.pl + p.pr < kw) BAD("the filter exceeds the padded input");
  uint32_t OH = (H + p.pt + p.pb - kh) / p.sh + 1, OW = (W + p.pl + p.pr - kw) / p.sw + 1;
  uint32_t dims[4] = {N, OH, OW, C};
  TRY(expect_dims(c, y, dims, 4));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const void *xd = in_data(c, 0);
  void *yd = out_data(c, 0);
  bool quant = q8(x->type);
  float flo, fhi;
  int32_t qlo = 0, qhi = 0;
  float_range(p.fuse, &flo, &fhi);
  if (quant) quant_range(y, p.fuse, &qlo, &qhi);
  for (uint32_t b = 0; b < N; b++)
    for (uint32_t oy = 0; oy < OH; oy++)
      for (uint32_t ox = 0; ox < OW; ox++)
        for (uint32_t ch = 0; ch < C; ch++) {
          float fsum = 0, fmax = -INFINITY;
          int32_t qsum = 0, qmax = INT32_MIN, count = 0;
          /* the window clamped to the input: a huge filter over a small input
           * costs its valid taps only */
          int64_t y0 = (int64_t)oy * p.sh - p.pt, x0 = (int64_t)ox * p.sw - p.pl;
          int64_t iy0 = y0 < 0 ? 0 : y0, iy1 = y0 + kh < (int64_t)H ? y0 + kh : (int64_t)H;
          int64_t ix0 = x0 < 0 ? 0 : x0, ix1 = x0 + kw < (int64_t)W ? x0 + kw : (int64_t)W;
          for (int64_t iy = iy0; iy < iy1; iy++) {
            for (int64_t ix = ix0; ix < ix1; ix++) {
              size_t xi = (((size_t)b * H + (size_t)iy) * W + (size_t)ix) * C + ch;
              count++;
              if (!quant) {
                float v = ((const float *)xd)[xi];
                fsum += v;
                fmax = v > fmax ? v : fmax;
              } else {
                int32_t v = ldq(x, xd, xi);
                qsum += v;
                qmax = v > qmax ? v : qmax;
              }
            }
          }
          size_t yi = (((size_t)b * OH + oy) * OW + ox) * C + ch;
          if (!quant) {
            float r = average ? (count ? fsum / (float)count : 0) : fmax;
            ((float *)yd)[yi] = clampf(r, flo, fhi);
          } else {
            /* the average rounded half away from zero over the window's valid taps */
            int32_t r = average ? (count == 0 ? 0
                                   : qsum > 0 ? (qsum + count / 2) / count
                                              : (qsum - count / 2) / count)
                                : qmax;
            stq(y, yd, yi, clampi(r, qlo, qhi));
          }
        }
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- shapes and data movement */

static int reshape(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("RESHAPE with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 27));
    TRY(same_type_as(c, x, y, true));
    if (IN(c, 1)->type != ANEURALNETWORKS_TENSOR_INT32 || IN(c, 1)->rank != 1)
      BAD("RESHAPE shape must be a 1-D TENSOR_INT32");
    return ANEURALNETWORKS_NO_ERROR;
  }
  const nn_operand *s = IN(c, 1);
  if (s->kind != NN_CONST) FAIL(ANEURALNETWORKS_OP_FAILED, "run-time shapes are not implemented");
  const int32_t *shape = s->value;
  uint32_t dims[4], r = s->dims[0];
  if (r > 4) BAD("RESHAPE to rank %u", r);
  size_t known = 1;
  int unknown = -1;
  for (uint32_t d = 0; d < r; d++) {
    if (shape[d] == -1 && unknown < 0) {
      unknown = (int)d;
      continue;
    }
    if (shape[d] <= 0) BAD("RESHAPE dimension %d", (int)shape[d]);
    dims[d] = (uint32_t)shape[d];
    known *= dims[d];
  }
  if (unknown >= 0) dims[unknown] = (uint32_t)(count_of(x) / known), known *= dims[unknown];
  if (known != count_of(x)) BAD("RESHAPE changes the element count");
  TRY(expect_dims(c, y, dims, r));
  if (c->phase == NN_RUN) memcpy(out_data(c, 0), in_data(c, 0), nn_operand_bytes(x));
  return ANEURALNETWORKS_NO_ERROR;
}

static int softmax(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2 && !(c->op->nin == 3 && c->level >= 29))
      BAD("SOFTMAX with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 27));
    TRY(same_type_as(c, x, y, false));
    TRY(scalar_type(c, 1, ANEURALNETWORKS_FLOAT32));
    if (c->op->nin == 3) TRY(scalar_type(c, 2, ANEURALNETWORKS_INT32));
    if (c->level < 29 && x->rank != 2 && x->rank != 4)
      BAD("SOFTMAX on rank %u needs feature level 29", x->rank);
    if (q8(x->type)) {
      bool u8 = x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
      if (y->scale != 1.0f / 256 || y->zp != (u8 ? 0 : -128))
        BAD("quantized SOFTMAX output must be scale 1/256, zero point %d", u8 ? 0 : -128);
    }
    return ANEURALNETWORKS_NO_ERROR;
  }
  float beta;
  TRY(get_f32(c, 1, &beta));
  if (!(beta > 0)) BAD("SOFTMAX beta %g", (double)beta);
  int32_t axis = -1;
  if (c->op->nin == 3) TRY(get_i32(c, 2, &axis));
  if (axis != -1 && axis != (int32_t)x->rank - 1)
    FAIL(ANEURALNETWORKS_OP_FAILED, "SOFTMAX on another axis than the last is not implemented");
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const void *xd = in_data(c, 0);
  void *yd = out_data(c, 0);
  size_t depth = x->dims[x->rank - 1], rows = count_of(x) / depth;
  if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
    for (size_t r = 0; r < rows; r++) {
      const float *in = (const float *)xd + r * depth;
      float *out = (float *)yd + r * depth;
      float mx = in[0], sum = 0;
      for (size_t i = 1; i < depth; i++) mx = in[i] > mx ? in[i] : mx;
      for (size_t i = 0; i < depth; i++) sum += out[i] = expf((in[i] - mx) * beta);
      for (size_t i = 0; i < depth; i++) out[i] /= sum;
    }
    return ANEURALNETWORKS_NO_ERROR;
  }
  /* gemmlowp fixed point: differences scaled by beta into Q5.26, exps summed
   * in Q12.19, one reciprocal per row */
  double real = (double)beta * (double)x->scale * (double)(1 << 26);
  if (real > 2147483647.0) real = 2147483647.0;
  if (!(real > 1.0))
    FAIL(ANEURALNETWORKS_OP_FAILED,
         "quantized SOFTMAX with beta x input scale below 2^-26 is "
         "not implemented by the test runtime");
  int32_t mult, left;
  quantize_multiplier(real, &mult, &left);
  int32_t diff_min = -(int32_t)floor(31.0 * (double)(1 << 26) / (double)((int64_t)1 << left));
  int32_t lo, hi;
  qrange(y, &lo, &hi);
  for (size_t r = 0; r < rows; r++) {
    int32_t mx = INT32_MIN;
    for (size_t i = 0; i < depth; i++) {
      int32_t v = ldq(x, xd, r * depth + i);
      mx = v > mx ? v : mx;
    }
    int32_t sum = 0;
    for (size_t i = 0; i < depth; i++) {
      int32_t diff = ldq(x, xd, r * depth + i) - mx;
      if (diff < diff_min) continue;
      int32_t scaled = high_mul((int32_t)((uint32_t)diff << left), mult);
      sum += div_pot(exp_negative(scaled, 5), 12);
    }
    int headroom = __builtin_clz((uint32_t)sum);
    int bits_over_unit = 12 - headroom;
    int32_t shifted = (int32_t)(((uint32_t)sum << headroom) - ((uint32_t)1 << 31));
    int32_t reciprocal = one_over_one_plus(shifted);
    for (size_t i = 0; i < depth; i++) {
      int32_t diff = ldq(x, xd, r * depth + i) - mx, v = lo;
      if (diff >= diff_min) {
        int32_t scaled = high_mul((int32_t)((uint32_t)diff << left), mult);
        int32_t e = exp_negative(scaled, 5);
        v = div_pot(high_mul(reciprocal, e), bits_over_unit + 31 - 8) + lo;
      }
      stq(y, yd, r * depth + i, clampi(v, lo, hi));
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int concatenation(nn_ctx *c) {
  uint32_t n = c->op->nin;
  const nn_operand *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (n < 2) BAD("CONCATENATION with %u inputs", n);
    TRY(scalar_type(c, n - 1, ANEURALNETWORKS_INT32));
    for (uint32_t i = 0; i + 1 < n; i++) {
      TRY(value_type(c, IN(c, i), "input", 27));
      TRY(same_type_as(c, IN(c, i), y,
                       c->level < 29 && y->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM));
    }
    return ANEURALNETWORKS_NO_ERROR;
  }
  int32_t axis;
  TRY(get_i32(c, n - 1, &axis));
  const nn_operand *x0 = IN(c, 0);
  if (axis < 0) axis += (int32_t)x0->rank;
  if (axis < 0 || axis >= (int32_t)x0->rank) BAD("CONCATENATION axis %d", (int)axis);
  uint32_t dims[4];
  memcpy(dims, x0->dims, sizeof dims);
  dims[axis] = 0;
  for (uint32_t i = 0; i + 1 < n; i++) {
    const nn_operand *x = IN(c, i);
    if (x->rank != x0->rank) BAD("CONCATENATION ranks differ");
    for (uint32_t d = 0; d < x->rank; d++)
      if (d != (uint32_t)axis && x->dims[d] != x0->dims[d]) BAD("CONCATENATION shapes differ");
    dims[axis] += x->dims[axis];
  }
  TRY(expect_dims(c, y, dims, x0->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; d++) outer *= dims[d];
  for (uint32_t d = (uint32_t)axis + 1; d < x0->rank; d++) inner *= dims[d];
  size_t es = nn_element_size(y->type), at = 0;
  for (uint32_t i = 0; i + 1 < n; i++) {
    const nn_operand *x = IN(c, i);
    size_t chunk = x->dims[axis] * inner;
    const void *xd = in_data(c, i);
    for (size_t o = 0; o < outer; o++) {
      size_t dst = o * dims[axis] * inner + at;
      if (!q8(y->type) || (x->scale == y->scale && x->zp == y->zp)) {
        memcpy((char *)out_data(c, 0) + dst * es, (const char *)xd + o * chunk * es, chunk * es);
        continue;
      }
      /* requantized in float, as TFLite's concatenation with scaling */
      const float scale = x->scale * (1.0f / y->scale), bias = -(float)x->zp * scale;
      int32_t lo, hi;
      qrange(y, &lo, &hi);
      for (size_t k = 0; k < chunk; k++) {
        float r = roundf((float)ldq(x, xd, o * chunk + k) * scale + bias) + (float)y->zp;
        stq(y, out_data(c, 0), dst + k, float_to_int(r, lo, hi, y->zp));
      }
    }
    at += chunk;
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int mean(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *axes = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 3) BAD("MEAN with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 28));
    TRY(same_type_as(c, x, y, true));
    if (axes->type != ANEURALNETWORKS_TENSOR_INT32 || axes->rank != 1) BAD("MEAN axes type");
    TRY(scalar_type(c, 2, ANEURALNETWORKS_INT32));
    return ANEURALNETWORKS_NO_ERROR;
  }
  if (axes->kind != NN_CONST) FAIL(ANEURALNETWORKS_OP_FAILED, "run-time axes are not implemented");
  int32_t keep;
  TRY(get_i32(c, 2, &keep));
  bool reduced[4] = {false, false, false, false};
  const int32_t *ax = axes->value;
  for (uint32_t k = 0; k < axes->dims[0]; k++) {
    int32_t a = ax[k] < 0 ? ax[k] + (int32_t)x->rank : ax[k];
    if (a < 0 || a >= (int32_t)x->rank) BAD("MEAN axis %d", (int)ax[k]);
    reduced[a] = true;
  }
  uint32_t dims[4], r = 0;
  size_t count = 1;
  for (uint32_t d = 0; d < x->rank; d++) {
    if (reduced[d]) count *= x->dims[d];
    if (!reduced[d])
      dims[r++] = x->dims[d];
    else if (keep > 0)
      dims[r++] = 1;
  }
  if (r == 0) dims[r++] = 1;
  TRY(expect_dims(c, y, dims, r));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t outs = count_of(y), total = count_of(x);
  float *fsum = calloc(outs, sizeof *fsum);
  int32_t *qsums = calloc(outs, sizeof *qsums);
  if (fsum == NULL || qsums == NULL) {
    free(fsum);
    free(qsums);
    return ANEURALNETWORKS_OUT_OF_MEMORY;
  }
  const void *xd = in_data(c, 0);
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0; e < total; e++) {
    size_t o = 0;
    for (uint32_t d = 0; d < x->rank; d++)
      if (!reduced[d]) o = o * x->dims[d] + idx[d];
    if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32)
      fsum[o] += ((const float *)xd)[e];
    else
      qsums[o] += ldq(x, xd, e);
    for (int d = (int)x->rank - 1; d >= 0; d--) {
      if (++idx[d] < x->dims[d]) break;
      idx[d] = 0;
    }
  }
  void *yd = out_data(c, 0);
  if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
    for (size_t o = 0; o < outs; o++) ((float *)yd)[o] = fsum[o] / (float)count;
  } else {
    /* the mean requantized with 1/count folded into the multiplier
     * (TFLite's integer MEAN): multiplier x 2^k / count, shift lowered by k */
    int32_t m, s, lo, hi;
    quantize_multiplier((double)x->scale / (double)y->scale, &m, &s);
    int32_t k = 63 - __builtin_clzll((unsigned long long)count);
    if (k > 32) k = 32;
    if (k > 31 + s) k = 31 + s;
    m = (int32_t)(((int64_t)m << k) / (int64_t)count);
    s -= k;
    qrange(y, &lo, &hi);
    for (size_t o = 0; o < outs; o++) {
      int32_t shifted = (int32_t)((int64_t)qsums[o] - (int64_t)x->zp * (int64_t)count);
      stq(y, yd, o, clampi(requantize(shifted, m, s) + y->zp, lo, hi));
    }
  }
  free(fsum);
  free(qsums);
  return ANEURALNETWORKS_NO_ERROR;
}

static int pad(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *pads = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("PAD with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 28));
    TRY(same_type_as(c, x, y, true));
    if (pads->type != ANEURALNETWORKS_TENSOR_INT32 || pads->rank != 2 || pads->dims[1] != 2 ||
        pads->dims[0] != x->rank)
      BAD("PAD paddings must be a [rank, 2] TENSOR_INT32");
    return ANEURALNETWORKS_NO_ERROR;
  }
  if (pads->kind != NN_CONST) FAIL(ANEURALNETWORKS_OP_FAILED, "run-time paddings: not implemented");
  const int32_t *pd = pads->value;
  uint32_t dims[4];
  for (uint32_t d = 0; d < x->rank; d++) {
    if (pd[2 * d] < 0 || pd[2 * d + 1] < 0) BAD("negative padding");
    dims[d] = x->dims[d] + (uint32_t)pd[2 * d] + (uint32_t)pd[2 * d + 1];
  }
  TRY(expect_dims(c, y, dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t es = nn_element_size(y->type), total = count_of(y);
  char *yd = out_data(c, 0);
  const char *xd = in_data(c, 0);
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0; e < total; e++) {
    bool inside = true;
    size_t xi = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
      int64_t v = (int64_t)idx[d] - pd[2 * d];
      inside = inside && v >= 0 && v < x->dims[d];
      xi = xi * x->dims[d] + (size_t)(v < 0 ? 0 : v);
    }
    if (inside)
      memcpy(yd + e * es, xd + xi * es, es);
    else if (q8(y->type))
      stq(y, yd, e, y->zp); /* the logical zero */
    else
      memset(yd + e * es, 0, es);
    for (int d = (int)x->rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int resize(nn_ctx *c) {
  const bool nearest = c->op->type == ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR;
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  uint32_t n = c->op->nin;
  if (c->phase == NN_CHECK_TYPES) {
    if (n < 3 || n > 6 || (n > 3 && c->level < 29) || (n > 4 && c->level < 30) ||
        (nearest && n < 4))
      BAD("RESIZE with %u inputs at feature level %lld", n, (long long)c->level);
    TRY(value_type(c, x, "input", 29));
    TRY(same_type_as(c, x, y, true));
    if (x->rank != 4) BAD("RESIZE on rank %u", x->rank);
    TRY(scalar_type(c, 1, ANEURALNETWORKS_INT32)); /* resizing by shape only here */
    TRY(scalar_type(c, 2, ANEURALNETWORKS_INT32));
    for (uint32_t i = 3; i < n; i++) TRY(scalar_type(c, i, ANEURALNETWORKS_BOOL));
    return ANEURALNETWORKS_NO_ERROR;
  }
  int32_t ow, oh;
  bool nchw = false, align = false, half = false;
  TRY(get_i32(c, 1, &ow));
  TRY(get_i32(c, 2, &oh));
  if (n > 3) TRY(get_bool(c, 3, &nchw));
  if (n > 4) TRY(get_bool(c, 4, &align));
  if (n > 5) TRY(get_bool(c, 5, &half));
  if (nchw) FAIL(ANEURALNETWORKS_OP_FAILED, "NCHW is not implemented by the test runtime");
  if (align && half) BAD("align_corners and half_pixel_centers together");
  if (ow < 1 || oh < 1) BAD("RESIZE to %dx%d", (int)ow, (int)oh);
  uint32_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
  uint32_t dims[4] = {N, (uint32_t)oh, (uint32_t)ow, C};
  TRY(expect_dims(c, y, dims, 4));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  if (!nearest && x->type != ANEURALNETWORKS_TENSOR_FLOAT32)
    FAIL(ANEURALNETWORKS_OP_FAILED,
         "quantized RESIZE_BILINEAR is not implemented by the test "
         "runtime");
  float hs = align && oh > 1 ? (float)(H - 1) / (float)(oh - 1) : (float)H / (float)oh;
  float ws = align && ow > 1 ? (float)(W - 1) / (float)(ow - 1) : (float)W / (float)ow;
  const void *xd = in_data(c, 0);
  void *yd = out_data(c, 0);
  size_t es = nn_element_size(x->type);
  for (uint32_t b = 0; b < N; b++)
    for (uint32_t oy = 0; oy < (uint32_t)oh; oy++)
      for (uint32_t ox = 0; ox < (uint32_t)ow; ox++) {
        size_t yi = (((size_t)b * (uint32_t)oh + oy) * (uint32_t)ow + ox) * C;
        if (nearest) {
          float fy = half ? ((float)oy + 0.5f) * hs : (float)oy * hs;
          float fx = half ? ((float)ox + 0.5f) * ws : (float)ox * ws;
          int64_t iy = align ? (int64_t)roundf(fy) : (int64_t)floorf(fy);
          int64_t ix = align ? (int64_t)roundf(fx) : (int64_t)floorf(fx);
          iy = iy < (int64_t)H - 1 ? iy : (int64_t)H - 1;
          ix = ix < (int64_t)W - 1 ? ix : (int64_t)W - 1;
          size_t xi = (((size_t)b * H + (size_t)iy) * W + (size_t)ix) * C;
          memcpy((char *)yd + yi * es, (const char *)xd + xi * es, C * es);
          continue;
        }
        float fy = half ? ((float)oy + 0.5f) * hs - 0.5f : (float)oy * hs;
        float fx = half ? ((float)ox + 0.5f) * ws - 0.5f : (float)ox * ws;
        int64_t y0 = (int64_t)floorf(fy), x0 = (int64_t)floorf(fx);
        float dy = fy - (float)y0, dx = fx - (float)x0;
        int64_t y0c = y0 < 0 ? 0 : y0, x0c = x0 < 0 ? 0 : x0;
        int64_t y1 = y0 + 1 < (int64_t)H ? y0 + 1 : (int64_t)H - 1;
        int64_t x1 = x0 + 1 < (int64_t)W ? x0 + 1 : (int64_t)W - 1;
        for (uint32_t ch = 0; ch < C; ch++) {
          const float *f = xd;
#define AT(yy, xx) f[(((size_t)b * H + (size_t)(yy)) * W + (size_t)(xx)) * C + ch]
          float v = AT(y0c, x0c) * (1 - dy) * (1 - dx) + AT(y0c, x1) * (1 - dy) * dx +
                    AT(y1, x0c) * dy * (1 - dx) + AT(y1, x1) * dy * dx;
#undef AT
          ((float *)yd)[yi + ch] = v;
        }
      }
  return ANEURALNETWORKS_NO_ERROR;
}

static int quantize_op(nn_ctx *c) {
  const bool to_q = c->op->type == ANEURALNETWORKS_QUANTIZE;
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 1) BAD("(DE)QUANTIZE with %u inputs", c->op->nin);
    const nn_operand *qo = to_q ? y : x, *fo = to_q ? x : y;
    if (fo->type != ANEURALNETWORKS_TENSOR_FLOAT32)
      BAD("(DE)QUANTIZE float side type %d", (int)fo->type);
    TRY(value_type(c, qo, "quantized side", 27));
    if (!q8(qo->type)) BAD("(DE)QUANTIZE quantized side type %d", (int)qo->type);
    return ANEURALNETWORKS_NO_ERROR;
  }
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t n = count_of(x);
  const void *xd = in_data(c, 0);
  void *yd = out_data(c, 0);
  int32_t lo, hi;
  for (size_t i = 0; i < n; i++) {
    if (!to_q) {
      ((float *)yd)[i] = (float)(ldq(x, xd, i) - x->zp) * x->scale;
      continue;
    }
    qrange(y, &lo, &hi);
    float r = roundf(((const float *)xd)[i] / y->scale) + (float)y->zp;
    stq(y, yd, i, float_to_int(r, lo, hi, y->zp));
  }
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- more data movement, math */

/* ABS EXP LOG NEG RSQRT SIN SQRT: float32, element by element. */
static int float_unary(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 1) BAD("operation %d with %u inputs", (int)c->op->type, c->op->nin);
    if (x->type != ANEURALNETWORKS_TENSOR_FLOAT32)
      BAD("operation %d takes float32 here", (int)c->op->type);
    return same_type_as(c, x, y, false);
  }
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const float *in = in_data(c, 0);
  float *out = out_data(c, 0);
  for (size_t i = 0, n = count_of(x); i < n; i++) {
    float v = in[i];
    switch (c->op->type) {
      case ANEURALNETWORKS_ABS: out[i] = fabsf(v); break;
      case ANEURALNETWORKS_EXP: out[i] = expf(v); break;
      case ANEURALNETWORKS_LOG: out[i] = logf(v); break;
      case ANEURALNETWORKS_NEG: out[i] = -v; break;
      case ANEURALNETWORKS_RSQRT: out[i] = 1.0f / sqrtf(v); break;
      case ANEURALNETWORKS_SIN: out[i] = sinf(v); break;
      default: out[i] = sqrtf(v); break;
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

static int minmax(nn_ctx *c) {
  const bool maximum = c->op->type == ANEURALNETWORKS_MAXIMUM;
  const nn_operand *a = IN(c, 0), *b = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("MAXIMUM/MINIMUM with %u inputs", c->op->nin);
    TRY(value_type(c, a, "input", 29));
    TRY(same_type_as(c, a, b, false));
    return same_type_as(c, a, y, false);
  }
  uint32_t dims[4], rank;
  TRY(broadcast_dims(c, a, b, dims, &rank));
  TRY(expect_dims(c, y, dims, rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0, n = count_of(y); e < n; e++) {
    size_t ia = bc_offset(a, idx, rank), ib = bc_offset(b, idx, rank);
    if (a->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
      float va = ((const float *)in_data(c, 0))[ia], vb = ((const float *)in_data(c, 1))[ib];
      ((float *)out_data(c, 0))[e] = maximum ? (va > vb ? va : vb) : (va < vb ? va : vb);
    } else { /* the real values compared, requantized to the output */
      float va = a->scale * (float)(ldq(a, in_data(c, 0), ia) - a->zp);
      float vb = b->scale * (float)(ldq(b, in_data(c, 1), ib) - b->zp);
      float r = maximum ? (va > vb ? va : vb) : (va < vb ? va : vb);
      int32_t lo, hi;
      qrange(y, &lo, &hi);
      stq(y, out_data(c, 0), e, float_to_int(roundf(r / y->scale) + (float)y->zp, lo, hi, y->zp));
    }
    for (int k = (int)rank - 1; k >= 0; k--) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

/* PRELU (29): x >= 0 ? x : x * alpha, the two broadcast numpy-style. 8-bit as Android's NNAPI
 * CPU path: the real multipliers in double (input / output; the float product input x alpha,
 * then / output), each quantized to Q31 and a shift. */
static int prelu(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *a = IN(c, 1), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2) BAD("PRELU with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 29));
    TRY(same_type_as(c, x, a, false));
    return same_type_as(c, x, y, false);
  }
  uint32_t dims[4], rank;
  TRY(broadcast_dims(c, x, a, dims, &rank));
  TRY(expect_dims(c, y, dims, rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  int32_t mp = 0, sp = 0, mn = 0, sn = 0, lo = 0, hi = 0;
  if (q8(x->type)) {
    quantize_multiplier((double)x->scale / (double)y->scale, &mp, &sp);
    quantize_multiplier((double)(x->scale * a->scale) / (double)y->scale, &mn, &sn);
    qrange(y, &lo, &hi);
  }
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0, n = count_of(y); e < n; e++) {
    size_t ix = bc_offset(x, idx, rank), ia = bc_offset(a, idx, rank);
    if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32) {
      float v = ((const float *)in_data(c, 0))[ix], al = ((const float *)in_data(c, 1))[ia];
      ((float *)out_data(c, 0))[e] = v >= 0.0f ? v : v * al;
    } else {
      int32_t v = ldq(x, in_data(c, 0), ix) - x->zp, r;
      if (v >= 0)
        r = requantize(v, mp, sp);
      else
        r = requantize(v * (ldq(a, in_data(c, 1), ia) - a->zp), mn, sn);
      stq(y, out_data(c, 0), e, clampi(r + y->zp, lo, hi));
    }
    for (int k = (int)rank - 1; k >= 0; k--) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
  return ANEURALNETWORKS_NO_ERROR;
}

/* The output (dims, x's rank, row-major) from elements of input x: output index (i_0, i_1, ...)
 * takes input element first + sum of i_d * step[d]. TRANSPOSE and SLICE. */
static void copy_elements(nn_ctx *c, const nn_operand *x, const uint32_t *dims, size_t first,
                          const size_t *step) {
  const size_t es = nn_element_size(x->type);
  uint32_t idx[4] = {0, 0, 0, 0};
  for (size_t e = 0, n = count_of(OUT(c, 0)); e < n; e++) {
    size_t src = first;
    for (uint32_t d = 0; d < x->rank; d++) src += idx[d] * step[d];
    memcpy((char *)out_data(c, 0) + e * es, (const char *)in_data(c, 0) + src * es, es);
    for (int d = (int)x->rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
}

static int transpose(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2)
      BAD("TRANSPOSE with %u inputs (the test runtime needs the permutation)", c->op->nin);
    TRY(value_type(c, x, "input", 28));
    return same_type_as(c, x, y, true);
  }
  const int32_t *perm;
  TRY(const_vector(c, 1, x->rank, &perm));
  uint32_t dims[4];
  bool seen[4] = {false, false, false, false};
  for (uint32_t d = 0; d < x->rank; d++) {
    if (perm[d] < 0 || perm[d] >= (int32_t)x->rank || seen[perm[d]]) BAD("TRANSPOSE permutation");
    seen[perm[d]] = true;
    dims[d] = x->dims[perm[d]];
  }
  TRY(expect_dims(c, y, dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t xs[4] = {0, 0, 0, 0}, step[4];
  strides_of(x->dims, x->rank, xs);
  for (uint32_t d = 0; d < x->rank; d++) step[d] = xs[perm[d]];
  copy_elements(c, x, dims, 0, step);
  return ANEURALNETWORKS_NO_ERROR;
}

static int slice(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 3) BAD("SLICE with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 29));
    return same_type_as(c, x, y, true);
  }
  const int32_t *begin, *size;
  TRY(const_vector(c, 1, x->rank, &begin));
  TRY(const_vector(c, 2, x->rank, &size));
  uint32_t dims[4];
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t sz = size[d] == -1 ? (int64_t)x->dims[d] - begin[d] : size[d];
    if (begin[d] < 0 || sz < 1 || begin[d] + sz > x->dims[d]) BAD("SLICE out of range");
    dims[d] = (uint32_t)sz;
  }
  TRY(expect_dims(c, y, dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t xs[4] = {0, 0, 0, 0}, first = 0;
  strides_of(x->dims, x->rank, xs);
  for (uint32_t d = 0; d < x->rank; d++) first += (size_t)begin[d] * xs[d];
  copy_elements(c, x, dims, first, xs);
  return ANEURALNETWORKS_NO_ERROR;
}

/* STRIDED_SLICE (28) as the NDK describes it: per axis, begin and end (negative: from the end;
 * begin_mask / end_mask: the fullest range in the stride's direction), clamped to the axis
 * ([0, dim] for a positive stride, [-1, dim - 1] for a negative one), then every stride-th
 * element from begin while short of end; a shrunk axis takes the element at begin (a slice of
 * size 1 is required) and is dropped; all shrunk: the output is [1]. */
static int strided_slice(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 7) BAD("STRIDED_SLICE with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 28));
    for (uint32_t i = 4; i < 7; i++) TRY(scalar_type(c, i, ANEURALNETWORKS_INT32));
    return same_type_as(c, x, y, true);
  }
  const int32_t *begin, *end, *strides;
  int32_t begin_mask, end_mask, shrink_mask;
  TRY(const_vector(c, 1, x->rank, &begin));
  TRY(const_vector(c, 2, x->rank, &end));
  TRY(const_vector(c, 3, x->rank, &strides));
  TRY(get_i32(c, 4, &begin_mask));
  TRY(get_i32(c, 5, &end_mask));
  TRY(get_i32(c, 6, &shrink_mask));
  uint32_t dims[4], counts[4], rank = 0;
  int64_t first[4];
  for (uint32_t d = 0; d < x->rank; d++) {
    int64_t size = x->dims[d], s = strides[d];
    if (s == 0) BAD("STRIDED_SLICE stride 0");
    int64_t b = (begin_mask >> d) & 1 ? (s > 0 ? 0 : size - 1) : begin[d];
    int64_t e = (end_mask >> d) & 1 ? (s > 0 ? size : -1) : end[d];
    if (!((begin_mask >> d) & 1) && b < 0) b += size;
    if (!((end_mask >> d) & 1) && e < 0) e += size;
    int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? size : size - 1;
    b = b < lo ? lo : b > hi ? hi : b;
    e = e < lo ? lo : e > hi ? hi : e;
    int64_t span = s > 0 ? e - b : b - e, m = s > 0 ? s : -s;
    int64_t count = span > 0 ? (span + m - 1) / m : 0;
    if ((shrink_mask >> d) & 1) {
      if (count != 1 || b < 0 || b >= size)
        BAD("STRIDED_SLICE shrinks axis %u of a slice not of size 1", d);
    } else {
      if (count < 1) BAD("STRIDED_SLICE: an empty output");
      dims[rank++] = (uint32_t)count;
    }
    counts[d] = (uint32_t)count;
    first[d] = b;
  }
  if (rank == 0) dims[rank++] = 1;
  TRY(expect_dims(c, y, dims, rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t xs[4] = {0, 0, 0, 0}, step[4] = {0, 0, 0, 0}, start = 0;
  strides_of(x->dims, x->rank, xs);
  for (uint32_t d = 0; d < x->rank; d++) {
    start += (size_t)first[d] * xs[d];
    step[d] = (size_t)((int64_t)xs[d] * strides[d]); /* negative strides wrap, as size_t adds */
  }
  copy_elements(c, x, counts, start, step);
  return ANEURALNETWORKS_NO_ERROR;
}

static int space_depth(nn_ctx *c) {
  const bool to_depth = c->op->type == ANEURALNETWORKS_SPACE_TO_DEPTH;
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 2 && !(c->op->nin == 3 && c->level >= 29))
      BAD("SPACE_TO_DEPTH/DEPTH_TO_SPACE with %u inputs", c->op->nin);
    TRY(value_type(c, x, "input", 27));
    if (x->rank != 4) BAD("SPACE_TO_DEPTH/DEPTH_TO_SPACE on rank %u", x->rank);
    TRY(scalar_type(c, 1, ANEURALNETWORKS_INT32));
    return same_type_as(c, x, y, true);
  }
  int32_t b;
  TRY(get_i32(c, 1, &b));
  uint32_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3], B = (uint32_t)b;
  if (b < 1 || (to_depth ? (H % B || W % B) : C % (B * B))) BAD("block size %d", (int)b);
  uint32_t dims[4] = {N, to_depth ? H / B : H * B, to_depth ? W / B : W * B,
                      to_depth ? C * B * B : C / (B * B)};
  TRY(expect_dims(c, y, dims, 4));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t es = nn_element_size(x->type);
  /* walk the space side: (n, h, w, c) of the tall tensor <-> its depth position */
  const nn_operand *tall = to_depth ? x : y;
  uint32_t TH = tall->dims[1], TW = tall->dims[2], TC = tall->dims[3];
  for (uint32_t n = 0; n < N; n++)
    for (uint32_t h = 0; h < TH; h++)
      for (uint32_t w = 0; w < TW; w++)
        for (uint32_t ch = 0; ch < TC; ch++) {
          size_t ti = (((size_t)n * TH + h) * TW + w) * TC + ch;
          uint32_t dh = h / B, dw = w / B, dc = ((h % B) * B + (w % B)) * TC + ch;
          size_t di = (((size_t)n * (TH / B) + dh) * (TW / B) + dw) * (TC * B * B) + dc;
          if (to_depth)
            memcpy((char *)out_data(c, 0) + di * es, (const char *)in_data(c, 0) + ti * es, es);
          else
            memcpy((char *)out_data(c, 0) + ti * es, (const char *)in_data(c, 0) + di * es, es);
        }
  return ANEURALNETWORKS_NO_ERROR;
}

/* L2_NORMALIZATION: float32 of rank 4 over the depth at 27 (other ranks, the
 * axis input and 8-bit forms are 29 and are not used here); the reference
 * formula x / sqrt(sum(x^2)), no epsilon. */
static int l2_normalization(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 1) BAD("L2_NORMALIZATION with %u inputs (the axis input is 29)", c->op->nin);
    if (x->type != ANEURALNETWORKS_TENSOR_FLOAT32)
      BAD("L2_NORMALIZATION takes float32 here (8-bit: 29)");
    if (x->rank != 4 && c->level < 29) BAD("L2_NORMALIZATION on rank %u before 29", x->rank);
    return same_type_as(c, x, y, false);
  }
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const float *in = in_data(c, 0);
  float *out = out_data(c, 0);
  size_t depth = x->rank ? x->dims[x->rank - 1] : 1, rows = depth ? count_of(x) / depth : 0;
  for (size_t r = 0; r < rows; r++) {
    const float *v = in + r * depth;
    float sum = 0;
    for (size_t k = 0; k < depth; k++) sum += v[k] * v[k];
    float norm = sqrtf(sum);
    for (size_t k = 0; k < depth; k++) out[r * depth + k] = v[k] / norm;
  }
  return ANEURALNETWORKS_NO_ERROR;
}

/* ---------------------------------------------------------------- dispatch */

int64_t nn_operation_level(int32_t type) {
  switch (type) {
    case ANEURALNETWORKS_ADD:
    case ANEURALNETWORKS_AVERAGE_POOL_2D:
    case ANEURALNETWORKS_CONCATENATION:
    case ANEURALNETWORKS_CONV_2D:
    case ANEURALNETWORKS_DEPTHWISE_CONV_2D:
    case ANEURALNETWORKS_DEQUANTIZE:
    case ANEURALNETWORKS_FULLY_CONNECTED:
    case ANEURALNETWORKS_L2_NORMALIZATION:
    case ANEURALNETWORKS_LOGISTIC:
    case ANEURALNETWORKS_MAX_POOL_2D:
    case ANEURALNETWORKS_MUL:
    case ANEURALNETWORKS_RELU:
    case ANEURALNETWORKS_RELU1:
    case ANEURALNETWORKS_RELU6:
    case ANEURALNETWORKS_RESHAPE:
    case ANEURALNETWORKS_RESIZE_BILINEAR:
    case ANEURALNETWORKS_SOFTMAX:
    case ANEURALNETWORKS_TANH:
    case ANEURALNETWORKS_SPACE_TO_DEPTH:
    case ANEURALNETWORKS_DEPTH_TO_SPACE: return 27;
    case ANEURALNETWORKS_TRANSPOSE:
    case ANEURALNETWORKS_STRIDED_SLICE: return 28;
    case ANEURALNETWORKS_ABS:
    case ANEURALNETWORKS_EXP:
    case ANEURALNETWORKS_LOG:
    case ANEURALNETWORKS_NEG:
    case ANEURALNETWORKS_RSQRT:
    case ANEURALNETWORKS_SIN:
    case ANEURALNETWORKS_SQRT:
    case ANEURALNETWORKS_MAXIMUM:
    case ANEURALNETWORKS_MINIMUM:
    case ANEURALNETWORKS_PRELU:
    case ANEURALNETWORKS_SLICE: return 29;
    case ANEURALNETWORKS_DIV:
    case ANEURALNETWORKS_MEAN:
    case ANEURALNETWORKS_PAD:
    case ANEURALNETWORKS_SUB: return 28;
    case ANEURALNETWORKS_QUANTIZE:
    case ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR: return 29;
    case ANEURALNETWORKS_HARD_SWISH: return 30;
    default: return nn_logic_operation_level(type);
  }
}

int nn_operation_phase(nn_ctx *c) {
  for (uint32_t i = 0; i < c->op->nout; i++)
    if (c->phase == NN_CHECK_TYPES && OUT(c, i)->rank == 0)
      BAD("operation %d: a scalar output", (int)c->op->type);
  bool several_outputs = c->op->type == ANEURALNETWORKS_IF ||
                         c->op->type == ANEURALNETWORKS_WHILE ||
                         c->op->type == ANEURALNETWORKS_DETECTION_POSTPROCESSING;
  if (c->phase == NN_CHECK_TYPES && c->op->nout != 1 && !several_outputs)
    BAD("operation %d with %u outputs", (int)c->op->type, c->op->nout);
  if (c->phase == NN_CHECK_TYPES && c->op->nin == 0)
    BAD("operation %d without inputs", (int)c->op->type);
  switch (c->op->type) {
    case ANEURALNETWORKS_CONV_2D: return conv(c, false);
    case ANEURALNETWORKS_DEPTHWISE_CONV_2D: return conv(c, true);
    case ANEURALNETWORKS_FULLY_CONNECTED: return fully_connected(c);
    case ANEURALNETWORKS_ADD:
    case ANEURALNETWORKS_SUB:
    case ANEURALNETWORKS_DIV:
    case ANEURALNETWORKS_MUL: return binary(c);
    case ANEURALNETWORKS_L2_NORMALIZATION: return l2_normalization(c);
    case ANEURALNETWORKS_RELU:
    case ANEURALNETWORKS_RELU1:
    case ANEURALNETWORKS_RELU6:
    case ANEURALNETWORKS_LOGISTIC:
    case ANEURALNETWORKS_TANH:
    case ANEURALNETWORKS_HARD_SWISH: return unary(c);
    case ANEURALNETWORKS_AVERAGE_POOL_2D:
    case ANEURALNETWORKS_MAX_POOL_2D: return pool(c);
    case ANEURALNETWORKS_RESHAPE: return reshape(c);
    case ANEURALNETWORKS_SOFTMAX: return softmax(c);
    case ANEURALNETWORKS_CONCATENATION: return concatenation(c);
    case ANEURALNETWORKS_MEAN: return mean(c);
    case ANEURALNETWORKS_PAD: return pad(c);
    case ANEURALNETWORKS_RESIZE_BILINEAR:
    case ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR: return resize(c);
    case ANEURALNETWORKS_QUANTIZE:
    case ANEURALNETWORKS_DEQUANTIZE: return quantize_op(c);
    case ANEURALNETWORKS_ABS:
    case ANEURALNETWORKS_EXP:
    case ANEURALNETWORKS_LOG:
    case ANEURALNETWORKS_NEG:
    case ANEURALNETWORKS_RSQRT:
    case ANEURALNETWORKS_SIN:
    case ANEURALNETWORKS_SQRT: return float_unary(c);
    case ANEURALNETWORKS_MAXIMUM:
    case ANEURALNETWORKS_MINIMUM: return minmax(c);
    case ANEURALNETWORKS_PRELU: return prelu(c);
    case ANEURALNETWORKS_TRANSPOSE: return transpose(c);
    case ANEURALNETWORKS_SLICE: return slice(c);
    case ANEURALNETWORKS_STRIDED_SLICE: return strided_slice(c);
    case ANEURALNETWORKS_SPACE_TO_DEPTH:
    case ANEURALNETWORKS_DEPTH_TO_SPACE: return space_depth(c);
    default: return nn_logic_operation_phase(c);
  }
}
