/*
 * test_q8_kernels.c — every optimized int8 kernel (src/kernels/q8.h) against
 * the int8 reference kernels (src/kernels/reference/quantized.c), which are
 * bit-exact with LiteRT's reference kernels. The optimized kernels must be
 * bit-exact too, so every comparison is exact equality.
 *
 * Shapes cover tile remainders (rows past MR, columns past NR, K not a
 * multiple of 4), odd channel counts, strides, dilations, padding with a
 * nonzero input zero point, per-channel multipliers with negative and
 * positive shifts, extreme zero points, clamps (fused activations), tiny and
 * MobileNet-sized layers. Data are seeded pseudo-random bytes, plus runs of
 * -128/127 that push the int32 accumulators far out.
 *
 * Run: build/tests/unit/test_q8_kernels (ctest runs it); WICK_MAX_ISA=avx2 or
 * neon hides the better tables, none shows the reference-only configuration
 * (then every ISA is skipped). On AArch64 (make test-aarch64, under qemu)
 * both tables run when the emulated CPU has SDOT (-cpu max, the default);
 * QEMU_CPU=cortex-a53 runs the plain NEON one alone.
 * Scaffolding shared with test_kernels.c: kernel_test.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/q8.h"

#define KERNEL_TEST_SEED 0x2545f4914f6cdd1du
#include "kernel_test.h"

static uint32_t next(void) { return (uint32_t)(rng_step() >> 33); }

static int32_t irand(int32_t lo, int32_t hi) {
  return lo + (int32_t)(next() % (uint32_t)(hi - lo + 1));
}

/* Random int8 data; every 7th buffer saturates (all -128 / 127 runs). */
static int8_t *rand_i8(size_t n, bool extreme) {
  int8_t *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++)
    p[i] = extreme ? (int8_t)((next() & 1) ? 127 : -128) : (int8_t)irand(-128, 127);
  return p;
}

/* A requantization multiplier in [2^30, 2^31). */
static int32_t rand_multiplier(void) { return (int32_t)((1u << 30) + (next() & 0x3fffffffu)); }

static int8_t *rand_w8(size_t n) {
  int8_t *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) p[i] = (int8_t)irand(-127, 127);
  return p;
}

/* Per-channel requantization parameters: multipliers in [2^30, 2^31), shifts
 * mostly negative (a real multiplier below 1), some positive. */
typedef struct qparams {
  int32_t *mult, *shift, *bias;
  double *scale;
  wick_qconv_params conv;
  wick_qfc_params fc;
  wick_q8_output out;
  int64_t *rq64; /* the fused requantization's constants, or NULL */
} qparams;

static void make_params(qparams *q, size_t n, int32_t k_total, int32_t zp_in, int act) {
  q->mult = malloc((n + 64) * sizeof(int32_t));
  q->shift = malloc((n + 64) * sizeof(int32_t));
  q->bias = malloc((n + 64) * sizeof(int32_t));
  q->scale = calloc(n + 64, sizeof(double));
  const int32_t base = -(int32_t)(log2((double)k_total + 1) / 2) - 5;
  for (size_t c = 0; c < n; c++) {
    q->mult[c] = rand_multiplier();
    q->shift[c] = base + irand(-3, 3);
    if (c % 11 == 5) q->shift[c] = irand(0, 2);
    if (c % 13 == 7) q->shift[c] = -31;
    q->bias[c] = irand(-200000, 200000);
    /* edges of the fused requantization: srdhm ties (odd x times 2^30),
     * a zero and the largest multiplier, accumulators near the int32 ends */
    if (c % 7 == 2) q->mult[c] = 1 << 30;
    if (c % 19 == 11) q->mult[c] = c % 2 ? 0 : INT32_MAX;
    if (c % 17 == 3)
      q->bias[c] = c % 2 ? INT32_MAX - irand(0, 1 << 20) : INT32_MIN + irand(0, 1 << 20);
    q->scale[c] = ldexp((double)q->mult[c], q->shift[c] - 31);
  }
  const int32_t zp_out = irand(-128, 127);
  int32_t lo = -128, hi = 127;
  if (act == 1) lo = zp_out; /* RELU */
  if (act == 2) {            /* RELU6-like */
    lo = zp_out;
    hi = zp_out + 60 > 127 ? 127 : zp_out + 60;
  }
  q->conv = (wick_qconv_params){-zp_in, 0, zp_out, q->mult, q->shift, lo, hi};
  q->fc = (wick_qfc_params){-zp_in, 0, zp_out, q->scale, lo, hi};
  q->out = (wick_q8_output){zp_out, lo, hi, NULL, NULL, false, false};
  /* every other parameter set also has the per-operator constants of the
   * fused requantization (the GEMM tiles' other output path, as conv ops use) */
  static unsigned calls;
  q->rq64 = NULL;
  if (calls++ % 2) {
    q->rq64 = malloc(wick_q8_rq64_words(n) * sizeof(int64_t));
    wick_q8_rq64_prepare(n, q->shift, q->rq64);
    q->out.rq64 = q->rq64;
  }
}

static void free_params(qparams *q) {
  free(q->mult), free(q->shift), free(q->bias), free(q->scale), free(q->rq64);
}

static void compare(const char *what, const int8_t *got, const int8_t *ref, size_t n) {
  checks++;
  for (size_t i = 0; i < n; i++)
    if (got[i] != ref[i]) {
      fail("%s: [%zu] got %d want %d", what, i, got[i], ref[i]);
      return;
    }
}

/* An output buffer of n bytes between two guard bytes: the output is at +1. */
static int8_t *guarded_output(size_t n) {
  int8_t *p = malloc(n + 2);
  p[0] = p[n + 1] = 99;
  return p;
}

/* Compares the n bytes inside a guarded_output with ref, then the guards. */
static void compare_guarded(const char *what, const int8_t *guarded, const int8_t *ref, size_t n) {
  compare(what, guarded + 1, ref, n);
  check_guards(what, guarded[0] == 99 && guarded[n + 1] == 99);
}

static void *aligned(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) abort();
  return p;
}

/* ------------------------------------------------------------------ GEMM (1x1 conv, FC) */

static void test_gemm_shape(const wick_q8_kernels *kern, size_t m, size_t n, size_t k, bool fc,
                            int act, bool with_bias) {
  const int32_t zp = irand(-128, 127);
  int8_t *a = rand_i8(m * k, (m + n + k) % 7 == 0), *w = rand_w8(n * k);
  qparams q;
  make_params(&q, n, (int32_t)k, zp, act);
  size_t bytes;
  if (!wick_q8_gemm_packed_size(kern, n, 1, k, &bytes)) abort();
  void *packed = aligned(bytes);
  wick_q8_gemm_pack(kern, n, 1, k, w, with_bias ? q.bias : NULL, zp, fc ? NULL : q.mult,
                    fc ? NULL : q.shift, packed);
  int8_t *got = guarded_output(m * n), *ref = malloc(m * n + 1);
  if (fc) {
    q.out.fc_scale = q.scale;
    wick_q_fully_connected__reference(WICK_DTYPE_INT8, (int64_t)m, (int64_t)n, (int64_t)k, &q.fc, a,
                                      w, with_bias ? q.bias : NULL, false, ref);
  } else {
    wick_conv_shape s = {1, 1, (int32_t)m, (int32_t)k, 1, (int32_t)m, (int32_t)n, 1, 1,
                         1, 1, 1,          1,          0, 0,          1,          1};
    wick_q_conv2d__reference(WICK_DTYPE_INT8, &s, &q.conv, a, w, with_bias ? q.bias : NULL, false,
                             ref);
  }
  /* raw int8 rows (not AVX2), then rows prepared beforehand
   * (wick_q8_prepare_input); two calls over row ranges each, as a thread
   * split would make */
  const size_t split = m / 2, ib = wick_q8_input_bytes(kern);
  int8_t *flipped = malloc(m * k * ib + 1);
  wick_q8_prepare_input(kern, m * k, a, zp, flipped);
  char what[160];
  for (int u8 = kern->i16 ? 1 : 0; u8 <= 1; u8++) {
    memset(got + 1, 0x55, m * n);
    wick_q8_gemm(kern, 0, split, n, k, u8 ? flipped : a, u8 ? k * ib : k, u8, packed, got + 1, n,
                 &q.out);
    wick_q8_gemm(kern, split, m, n, k, u8 ? flipped : a, u8 ? k * ib : k, u8, packed, got + 1, n,
                 &q.out);
    snprintf(what, sizeof what, "%s %s%s m=%zu n=%zu k=%zu act=%d bias=%d", kern->isa,
             fc ? "fc" : "gemm", u8 ? " (prepared input)" : "", m, n, k, act, with_bias);
    compare(what, got + 1, ref, m * n);
  }
  free(flipped);
  check_guards(what, got[0] == 99 && got[m * n + 1] == 99);
  free(a), free(w), free(packed), free(got), free(ref);
  free_params(&q);
}

static void test_gemm(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t ms[] = {1, 2, 6, 7, 8, 15, 50};
  static const size_t ns[] = {1, 5, 16, 17, 32, 33, 64, 100};
  static const size_t ks[] = {1, 2, 3, 4, 5, 8, 17, 64, 129};
  int act = 0;
  for (size_t i = 0; i < 7; i++)
    for (size_t j = 0; j < 8; j++)
      for (size_t l = 0; l < 9; l++) {
        test_gemm_shape(kern, ms[i], ns[j], ks[l], false, act, (i + j + l) % 4 != 0);
        test_gemm_shape(kern, ms[i], ns[j], ks[l], true, act, (i + j + l) % 5 != 0);
        act = (act + 1) % 3;
      }
  /* MobileNetV2 expand, classifier, several column blocks */
  static const struct {
    size_t m, n, k;
    bool fc;
    int act;
  } models[] = {{196, 576, 96, false, 2}, {1, 1000, 1280, true, 0}, {3, 3000, 40, false, 0}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    test_gemm_shape(kern, models[i].m, models[i].n, models[i].k, models[i].fc, models[i].act, true);
  printf("%s gemm / fc: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ CONV_2D (igemm), DEPTHWISE */

/* "<isa> <kind> n=.. .. zp=.. act=..": a conv case, for failure messages. */
static void describe(char *buf, size_t size, const char *isa, const char *kind,
                     const wick_conv_shape *s, int32_t zp, int act) {
  char label[64];
  snprintf(label, sizeof label, "%s %s", isa, kind);
  describe_shape(buf, size, label, s);
  const size_t len = strlen(buf);
  snprintf(buf + len, size - len, " zp=%d act=%d", zp, act);
}

static void test_conv_shape(const void *arg, const wick_conv_shape *s, int act) {
  const wick_q8_kernels *kern = arg;
  if (s->out_h <= 0 || s->out_w <= 0) return;
  const size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  const size_t out_n = (size_t)s->batch * s->out_h * s->out_w * s->out_c;
  const size_t taps = (size_t)s->k_h * s->k_w, kc = (size_t)s->in_c;
  const int32_t zp = act == 0 ? irand(-128, 127) : (act == 1 ? -128 : 127);
  int8_t *in = rand_i8(in_n, out_n % 7 == 3), *f = rand_w8((size_t)s->out_c * taps * kc);
  qparams q;
  make_params(&q, (size_t)s->out_c, (int32_t)(taps * kc), zp, act);
  size_t bytes, count;
  if (!wick_q8_gemm_packed_size(kern, (size_t)s->out_c, taps, kc, &bytes)) abort();
  void *packed = aligned(bytes);
  wick_q8_gemm_pack(kern, (size_t)s->out_c, taps, kc, f, q.bias, zp, q.mult, q.shift, packed);
  if (!wick_q8_conv_indirection_size(s, kern->mr, &count)) abort();
  const int8_t **ind = malloc(count * sizeof(int8_t *));
  const size_t kc4 = (kc + 3) & ~(size_t)3, ib = wick_q8_input_bytes(kern);
  int8_t *zero = malloc(wick_q8_zero_row_bytes(kern, kc) + kc4),
         *flipped = malloc(in_n * ib + WICK_Q8_ROW_PAD);
  int8_t *got = malloc(out_n), *ref = malloc(out_n);
  wick_q_conv2d__reference(WICK_DTYPE_INT8, s, &q.conv, in, f, q.bias, false, ref);
  const size_t tiles = wick_q8_conv_tiles(s, kern->mr);
  char what[200];
  /* raw int8 rows (zero row = zp; not AVX2), then prepared rows (zero row
   * from wick_q8_zero_row) */
  wick_q8_prepare_input(kern, in_n, in, zp, flipped);
  for (int u8 = kern->i16 ? 1 : 0; u8 <= 1; u8++) {
    if (u8)
      wick_q8_zero_row(kern, kc, zp, zero);
    else
      memset(zero, zp, kc4);
    wick_q8_conv_indirection_init(s, kern->mr, u8 ? flipped : in, u8 ? ib : 1, zero, ind);
    memset(got, 0x55, out_n);
    wick_q8_conv_igemm(kern, s, ind, u8, packed, got, &q.out, 0, tiles / 2);
    wick_q8_conv_igemm(kern, s, ind, u8, packed, got, &q.out, tiles / 2, tiles);
    describe(what, sizeof what, kern->isa, u8 ? "conv (prepared input)" : "conv", s, zp, act);
    compare(what, got, ref, out_n);
  }
  free(flipped);
  free(in), free(f), free(packed), free(ind), free(zero), free(got), free(ref);
  free_params(&q);
}

static void test_conv(const wick_q8_kernels *kern) {
  const int before = failures;
  static const int32_t chans[5] = {1, 3, 4, 17, 33};
  conv_sweep(chans, test_conv_shape, kern);
  /* long K (panels far larger than L1, read ahead by the kernels' prefetch):
   * ResNet-18's 3x3 layers at 7x7x512 and 14x14x256, and a depth that is not
   * a multiple of 4 */
  static const conv_case long_k[] = {{1, 7, 7, 512, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                     {1, 14, 14, 256, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},
                                     {1, 9, 8, 509, 33, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 2}};
  for (size_t i = 0; i < sizeof long_k / sizeof long_k[0]; i++) {
    wick_conv_shape s;
    case_shape(&long_k[i], false, &s);
    test_conv_shape(kern, &s, long_k[i].act);
  }
  printf("%s conv (igemm %zux%zu): %s\n", kern->isa, kern->mr, kern->nr, verdict(before));
}

/* ------------------------------------------------------------------ TRANSPOSE_CONV (phases) */

/* One int8 TRANSPOSE_CONV on the phase form against the reference kernel,
 * its tiles run in two calls, into a guarded output. Output size as
 * TensorFlow gives it: in * stride (SAME, padding half the overlap) or
 * (in - 1) * stride + k (VALID). */
static void test_tconv_shape(const wick_q8_kernels *kern, int32_t batch, int32_t in_h, int32_t in_w,
                             int32_t in_c, int32_t out_c, int32_t k_h, int32_t k_w, int32_t s_h,
                             int32_t s_w, bool same, int act) {
  wick_conv_shape s = {.batch = batch,
                       .in_h = in_h,
                       .in_w = in_w,
                       .in_c = in_c,
                       .out_c = out_c,
                       .k_h = k_h,
                       .k_w = k_w,
                       .stride_h = s_h,
                       .stride_w = s_w,
                       .dilation_h = 1,
                       .dilation_w = 1,
                       .groups = 1,
                       .multiplier = 1};
  s.out_h = same ? in_h * s_h : (in_h - 1) * s_h + k_h;
  s.out_w = same ? in_w * s_w : (in_w - 1) * s_w + k_w;
  const int32_t over_h = (in_h - 1) * s_h + k_h - s.out_h;
  const int32_t over_w = (in_w - 1) * s_w + k_w - s.out_w;
  s.pad_top = over_h > 0 ? over_h / 2 : 0;
  s.pad_left = over_w > 0 ? over_w / 2 : 0;
  if (!wick_q8_tconv_supported(&s)) return;
  const size_t in_n = (size_t)batch * in_h * in_w * in_c;
  const size_t out_n = (size_t)batch * s.out_h * s.out_w * out_c;
  const size_t taps = (size_t)k_h * k_w, kc = (size_t)in_c;
  const int32_t zp = act == 0 ? irand(-128, 127) : (act == 1 ? -128 : 127);
  int8_t *in = rand_i8(in_n, out_n % 7 == 3), *f = rand_w8((size_t)out_c * taps * kc);
  qparams q;
  make_params(&q, (size_t)out_c, (int32_t)(taps * kc), zp, act);
  size_t packed_bytes, sub_bytes, tiles, pointers;
  if (!wick_q8_tconv_sizes(kern, &s, &packed_bytes, &sub_bytes, &tiles, &pointers)) abort();
  void *packed = aligned(packed_bytes);
  int8_t *sub = malloc(sub_bytes);
  wick_q8_tconv_pack(kern, &s, f, q.bias, zp, q.mult, q.shift, sub, packed);
  const size_t ib = wick_q8_input_bytes(kern);
  int8_t *prepared = malloc(in_n * ib + WICK_Q8_ROW_PAD);
  int8_t *zero = malloc(wick_q8_zero_row_bytes(kern, kc));
  wick_q8_tconv_tile *tile = malloc(tiles * sizeof *tile);
  const int8_t **ind = malloc(pointers * sizeof *ind);
  wick_q8_prepare_input(kern, in_n, in, zp, prepared);
  wick_q8_zero_row(kern, kc, zp, zero);
  wick_q8_tconv_indirection_init(kern, &s, prepared, ib, zero, tile, ind);
  int8_t *got = guarded_output(out_n), *ref = malloc(out_n);
  wick_q_transpose_conv2d__reference(WICK_DTYPE_INT8, &s, &q.conv, in, f, q.bias, false, ref);
  memset(got + 1, 0x55, out_n);
  wick_q8_tconv_run(kern, &s, tile, ind, packed, got + 1, &q.out, 0, tiles / 2);
  wick_q8_tconv_run(kern, &s, tile, ind, packed, got + 1, &q.out, tiles / 2, tiles);
  char what[200];
  describe(what, sizeof what, kern->isa, "transpose conv", &s, zp, act);
  compare_guarded(what, got, ref, out_n);
  free(in), free(f), free(packed), free(sub), free(prepared), free(zero), free(tile), free(ind);
  free(got), free(ref);
  free_params(&q);
}

static void test_tconv(const wick_q8_kernels *kern) {
  const int before = failures;
  static const int32_t chans[4] = {1, 3, 17, 40};
  for (int same = 0; same <= 1; same++)
    for (size_t ci = 0; ci < 4; ci++)
      for (int32_t k = 1; k <= 5; k++)
        for (int32_t st = 1; st <= 3 && st <= k; st++) {
          const int32_t c = chans[ci];
          test_tconv_shape(kern, 1 + (k == 3), 1 + k % 4, 2 + 3 * (int32_t)ci, c, chans[3 - ci], k,
                           k, st, st, same, (k + st) % 3);
        }
  /* unequal filter sides and strides, rows of many tiles */
  test_tconv_shape(kern, 1, 3, 21, 16, 24, 4, 3, 2, 3, true, 0);
  test_tconv_shape(kern, 2, 5, 2, 9, 5, 2, 5, 1, 2, false, 1);
  test_tconv_shape(kern, 1, 7, 30, 64, 33, 4, 4, 2, 2, true, 2);
  printf("%s transpose conv (phases): %s\n", kern->isa, verdict(before));
}

/* One AMX conv (kern->conv_amx) against the reference: all of it in one
 * call, then in four tasks cut at a block and at a panel boundary, into a
 * work buffer full of stale bytes. */
static void test_amx_shape(const void *arg, const wick_conv_shape *s, int act) {
  const wick_q8_kernels *kern = arg;
  /* every shape the kernel can run, also those below WICK_Q8_AMX_MIN_K that
   * ops send to the VNNI kernels */
  if (s->out_h <= 0 || s->out_w <= 0 || s->groups != 1 || s->dilation_w != 1) return;
  const size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  const size_t pixels = (size_t)s->batch * s->out_h * s->out_w, n = (size_t)s->out_c;
  const size_t out_n = pixels * n;
  const int32_t zp = act == 0 ? irand(-128, 127) : (act == 1 ? -128 : 127);
  size_t taps, kc, bytes;
  wick_q8_conv_amx_pack_dims(s, &taps, &kc);
  int8_t *in = rand_i8(in_n, out_n % 7 == 3), *f = rand_w8(n * taps * kc);
  qparams q;
  make_params(&q, n, (int32_t)(taps * kc), zp, act);
  if (!wick_q8_gemm_packed_size(kern, n, taps, kc, &bytes)) abort();
  void *packed = aligned(bytes);
  /* OHWI [n][k_h][k_w * in_c]: the GEMM weights of k_h taps */
  wick_q8_gemm_pack(kern, n, taps, kc, f, q.bias, zp, q.mult, q.shift, packed);
  const size_t work_bytes = wick_q8_conv_amx_work_bytes(s);
  uint8_t *work = aligned(work_bytes);
  memset(work, 0x5a, work_bytes);
  int8_t *ref = malloc(out_n), *got = guarded_output(out_n);
  wick_q_conv2d__reference(WICK_DTYPE_INT8, s, &q.conv, in, f, q.bias, false, ref);
  char what[200];
  describe(what, sizeof what, kern->isa, "conv (amx)", s, zp, act);
  memset(got + 1, 0x55, out_n);
  kern->conv_amx(s, in, zp, packed, got + 1, &q.out, 0, pixels, 0, n, work);
  compare_guarded(what, got, ref, out_n);
  const size_t blocks = (pixels + WICK_Q8_AMX_MB - 1) / WICK_Q8_AMX_MB;
  const size_t mcut = blocks / 2 * WICK_Q8_AMX_MB, ncut = (n + 63) / 64 * 32;
  const size_t ms[3] = {0, mcut, pixels}, ns[3] = {0, ncut < n ? ncut : n, n};
  memset(got + 1, 0x55, out_n);
  for (size_t i = 0; i < 2; i++)
    for (size_t j = 0; j < 2; j++)
      kern->conv_amx(s, in, zp, packed, got + 1, &q.out, ms[i], ms[i + 1], ns[j], ns[j + 1], work);
  describe(what, sizeof what, kern->isa, "conv (amx, 4 tasks)", s, zp, act);
  compare_guarded(what, got, ref, out_n);
  free(in), free(f), free(packed), free(work), free(ref), free(got);
  free_params(&q);
}

static void test_conv_amx(const wick_q8_kernels *kern) {
  const int before = failures;
  static const int32_t chans[5] = {1, 3, 4, 17, 64};
  conv_sweep(chans, test_amx_shape, kern);
  /* ResNet-18's stem (3 channels, 7x7 stride 2, SAME) on a small image, its
   * 3x3 layers (long K), 1x1 stride-2 downsampling, more pixels than one
   * gathered group, a depth that is not a multiple of 4, out_c past a panel */
  static const conv_case cases[] = {{1, 30, 27, 3, 64, 7, 7, 2, 2, 1, 1, 2, 3, 2, 3, 1},
                                    {1, 7, 7, 512, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                    {1, 14, 14, 256, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},
                                    {1, 9, 8, 509, 33, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 2},
                                    {1, 13, 13, 64, 128, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 0},
                                    {2, 41, 43, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                    {1, 3, 70, 5, 65, 3, 5, 1, 3, 2, 1, 1, 1, 2, 2, 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    wick_conv_shape s;
    case_shape(&cases[i], false, &s);
    test_amx_shape(kern, &s, cases[i].act);
  }
  printf("%s conv (amx %dx32 blocks): %s\n", kern->isa, WICK_Q8_AMX_MB, verdict(before));
}

static void test_dw_shape(const wick_q8_kernels *kern, const wick_conv_shape *s, int act) {
  if (s->out_h <= 0 || s->out_w <= 0) return;
  const size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  const size_t out_n = (size_t)s->batch * s->out_h * s->out_w * s->out_c;
  const size_t taps = (size_t)s->k_h * s->k_w, c = (size_t)s->out_c;
  const int32_t zp = act == 2 ? 127 : irand(-128, 127);
  int8_t *in = rand_i8(in_n, in_n % 7 == 1), *f = rand_w8(taps * c);
  qparams q;
  make_params(&q, c, (int32_t)taps, zp, act);
  size_t bytes;
  if (!wick_q8_dwconv_packed_size(c, taps, kern->dw_cr, &bytes)) abort();
  void *packed = aligned(bytes);
  wick_q8_dwconv_pack(c, taps, kern->dw_cr, f, q.bias, zp, q.mult, q.shift, packed);
  int8_t *got = guarded_output(out_n), *ref = malloc(out_n);
  wick_q_depthwise_conv2d__reference(WICK_DTYPE_INT8, s, &q.conv, in, f, q.bias, false, ref);
  kern->dwconv(s, zp, in, packed, got + 1, &q.out, 0, s->out_h / 2);
  kern->dwconv(s, zp, in, packed, got + 1, &q.out, s->out_h / 2, s->out_h);
  char what[200];
  describe(what, sizeof what, kern->isa, "dwconv", s, zp, act);
  compare_guarded(what, got, ref, out_n);
  free(in), free(f), free(packed), free(got), free(ref);
  free_params(&q);
}

static void test_dwconv(const wick_q8_kernels *kern) {
  const int before = failures;
  static const int32_t chans[] = {1, 3, 15, 16, 17, 33, 64};
  static const int32_t sides[] = {1, 2, 3, 5, 8, 9, 13, 20};
  static const int32_t ks[][3] = {{3, 3, 1}, {5, 5, 1}, {3, 3, 2}, {2, 2, 1}, {7, 7, 1}, {1, 3, 1}};
  static const int32_t before_pad[] = {0, 1, 0, 2}, after_pad[] = {0, 1, 1, 0};
  wick_conv_shape s;
  int act = 0;
  for (size_t ic = 0; ic < 7; ic++)
    for (size_t ih = 0; ih < 8; ih++)
      for (size_t kk = 0; kk < 6; kk++)
        for (int32_t st = 1; st <= 2; st++)
          for (int32_t pad = 0; pad < 4; pad++) {
            const int32_t h = sides[ih], w = sides[(ih + ic + (size_t)pad) % 8];
            const int32_t kh = ks[kk][0], kw = ks[kk][1], d = ks[kk][2];
            const int32_t p = kh == 5 ? 2 * pad / 2 + pad % 2 : pad;
            make_shape(&s, ic % 3 == 0 ? 2 : 1, h, w, chans[ic], chans[ic], kh, kw, st,
                       (ih % 2) ? st : 3 - st, d, d, before_pad[p % 4], after_pad[p % 4],
                       before_pad[(p + (size_t)st) % 4], after_pad[(p + (size_t)st) % 4]);
            s.groups = s.in_c;
            test_dw_shape(kern, &s, act);
            act = (act + 1) % 3;
          }
  /* wide rows, channel tails, MobileNetV2 shapes */
  static const conv_case models[] = {{1, 4, 61, 33, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0},
                                     {1, 6, 40, 40, 40, 5, 5, 2, 2, 1, 1, 1, 2, 1, 2, 1},
                                     {1, 112, 112, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
                                     {1, 113, 113, 96, 96, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 2}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    case_shape(&models[i], true, &s);
    test_dw_shape(kern, &s, models[i].act);
  }
  /* every channel count 1..40 (the 8- and 16-channel blocks and every
   * tail) on the blocked 3x3 / 5x5 paths, strides 1 and 2, padding, a
   * dilation, a non-square filter and a row shorter than a block */
  static const int32_t sweep[][7] = {/* kh, kw, stride, dilation, pad, h, w */
                                     {3, 3, 1, 1, 1, 5, 13}, {3, 3, 2, 1, 1, 6, 11},
                                     {5, 5, 1, 1, 2, 6, 9},  {5, 5, 2, 1, 2, 7, 10},
                                     {3, 3, 1, 2, 2, 6, 7},  {2, 3, 1, 1, 0, 4, 3}};
  for (int32_t c = 1; c <= 40; c++)
    for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++) {
      const int32_t *v = sweep[i];
      make_shape(&s, 1, v[5], v[6], c, c, v[0], v[1], v[2], v[2], v[3], v[3], v[4], v[4], v[4],
                 v[4]);
      s.groups = s.in_c;
      test_dw_shape(kern, &s, act);
      act = (act + 1) % 3;
    }
  printf("%s dwconv: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ ADD / SUB */

static void test_add(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t sizes[] = {1, 5, 7, 8, 9, 15, 16, 17, 31, 33, 40, 64, 100, 1000, 75264};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int sub = 0; sub <= 1; sub++) {
      const size_t n = sizes[i];
      int8_t *a = rand_i8(n, i % 4 == 3), *b = rand_i8(n, false);
      int8_t *got = guarded_output(n), *ref = malloc(n);
      wick_qadd_params p;
      p.input1_offset = -irand(-128, 127);
      p.input2_offset = -irand(-128, 127);
      p.output_offset = irand(-128, 127);
      p.left_shift = 20;
      p.input1_multiplier = rand_multiplier();
      p.input2_multiplier = rand_multiplier();
      p.input1_shift = i % 2 ? 0 : -irand(0, 4);
      p.input2_shift = i % 2 ? -irand(0, 4) : 0;
      p.output_multiplier = rand_multiplier();
      p.output_shift = i == 2 ? 2 : -irand(12, 22);
      p.act_min = sub ? -128 : p.output_offset;
      p.act_max = 127;
      wick_broadcast bc;
      const int32_t dims = (int32_t)n;
      make_broadcast(&bc, 1, &dims, 1, &dims);
      wick_q_add__reference(WICK_DTYPE_INT8, sub, &bc, &p, a, b, ref);
      kern->add(n, a, b, got + 1, &p, sub);
      char what[100];
      snprintf(what, sizeof what, "%s %s n=%zu", kern->isa, sub ? "sub" : "add", n);
      compare_guarded(what, got, ref, n);
      free(a), free(b), free(got), free(ref);
    }
  printf("%s add / sub: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ 8-bit ADD / SUB, 32-bit
 * input rescales */

/* The exact 32-bit form of an input's rescale exists for every multiplier, offset and type
 * with input shifts 0 .. -12 (left shift 20, as ADD's), and each form the kernels get is
 * checked by wick_q8_rescale8_make itself; here its claim is re-checked value by value. */
static void test_rescale8_forms(void) {
  const int before = failures;
  for (int trial = 0; trial < 2000; trial++) {
    const bool u8 = trial % 2;
    const int32_t zp = u8 ? irand(0, 255) : irand(-128, 127);
    const int32_t m = trial % 7 == 0 ? (int32_t)1 << 30 : rand_multiplier();
    const int32_t shift = trial % 5 == 0 ? -12 : -irand(0, 12);
    wick_q8_rescale8 r;
    checks++;
    if (!wick_q8_rescale8_make(-zp, m, shift, 20, u8, &r)) {
      fail("rescale8: no exact form for m=%d shift=%d zp=%d", m, shift, zp);
      continue;
    }
    for (int32_t v = u8 ? 0 : -128; v <= (u8 ? 255 : 127); v++) {
      const int32_t want =
          wick_q_multiply_by_quantized_multiplier((int32_t)((uint32_t)(v - zp) << 20), m, shift);
      if (wick_q8_rescale8_apply(&r, v) != want) {
        fail("rescale8: m=%d shift=%d zp=%d v=%d: %d, want %d", m, shift, zp, v,
             wick_q8_rescale8_apply(&r, v), want);
        break;
      }
    }
  }
  /* shifts far below the 32-bit range are refused, not approximated */
  wick_q8_rescale8 r;
  checks++;
  if (wick_q8_rescale8_make(3, rand_multiplier(), -20, 20, false, &r))
    fail("rescale8: shift -20 accepted");
  printf("rescale8 forms: %s\n", verdict(before));
}

/* kern->add8 and kern->add8_rescaled against wick_q_add__reference on int8 and uint8 runs:
 * ADD and SUB, every tail length, offsets over the whole type, output shifts from a left
 * shift to -31, activation clamps; the rescaled forms with a row (stride 1) and a scalar
 * (stride 0), the bytes as either input. */
static void test_add8(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t sizes[] = {1, 5, 8, 15, 16, 17, 31, 33, 64, 100, 1000, 49152};
  int cases = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int variant = 0; variant < 8; variant++) {
      const size_t n = sizes[i];
      const bool u8 = variant & 1, sub = variant & 2, scalar = variant & 4;
      const wick_dtype type = u8 ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
      const int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
      uint8_t *a = malloc(n), *b = malloc(n), *ref = malloc(n);
      int8_t *got = guarded_output(n);
      int32_t *r = malloc(n * sizeof *r);
      const int32_t b0 = irand(lo, hi);
      for (size_t e = 0; e < n; e++) {
        a[e] = (uint8_t)irand(lo, hi);
        b[e] = (uint8_t)(scalar ? b0 : irand(lo, hi));
      }
      if (i % 5 == 4) /* saturating runs */
        for (size_t e = 0; e < n; e++) a[e] = (uint8_t)((e & 1) ? hi : lo);
      wick_qadd_params p;
      p.input1_offset = -irand(lo, hi);
      p.input2_offset = -irand(lo, hi);
      p.output_offset = irand(lo, hi);
      p.left_shift = 20;
      /* the input with the larger scale has multiplier 2^30, shift 0 (a kernel's "simple"
       * rescale); `larger` 2: neither (not from an op, but the kernels take it) */
      const int larger = (int)(i + (size_t)variant) % 3;
      p.input1_multiplier = larger == 0 ? (int32_t)1 << 30 : rand_multiplier();
      p.input2_multiplier = larger == 1 ? (int32_t)1 << 30 : rand_multiplier();
      p.input1_shift = larger == 0 ? 0 : -irand(0, 9);
      p.input2_shift = larger == 1 ? 0 : -irand(0, 9);
      p.output_multiplier = rand_multiplier();
      p.output_shift = variant == 5 ? 2 : (variant == 6 ? -31 : -irand(10, 22));
      p.act_min = variant == 3 ? p.output_offset : lo;
      p.act_max = variant == 7 ? (p.output_offset + hi) / 2 : hi;
      if (p.act_max < p.act_min) p.act_max = p.act_min;
      wick_q8_add8_params k;
      memset(&k, 0, sizeof k);
      if (!wick_q8_rescale8_make(p.input1_offset, p.input1_multiplier, p.input1_shift, 20, u8,
                                 &k.in[0]) ||
          !wick_q8_rescale8_make(p.input2_offset, p.input2_multiplier, p.input2_shift, 20, u8,
                                 &k.in[1])) {
        fail("add8: no exact form (n=%zu variant %d)", n, variant);
        goto next;
      }
      k.subtract = sub;
      k.u8 = u8;
      k.output_multiplier = p.output_multiplier;
      k.output_shift = p.output_shift;
      k.output_offset = p.output_offset;
      k.act_min = p.act_min;
      k.act_max = p.act_max;
      wick_broadcast bc;
      const int32_t dims = (int32_t)n;
      make_broadcast(&bc, 1, &dims, 1, &dims);
      wick_q_add__reference(type, sub, &bc, &p, a, b, ref);
      char what[120];
      snprintf(what, sizeof what, "%s add8 %s %s n=%zu variant %d", kern->isa,
               u8 ? "uint8" : "int8", sub ? "sub" : "add", n, variant);
      kern->add8(n, a, b, (uint8_t *)got + 1, &k);
      compare_guarded(what, got, (const int8_t *)ref, n);
      /* the bytes as input 0, input 1 rescaled (negated for SUB) */
      for (size_t e = 0; e < n; e++) {
        const int32_t t = wick_q8_rescale8_apply(&k.in[1], u8 ? b[e] : (int8_t)b[e]);
        r[e] = sub ? (int32_t)(0u - (uint32_t)t) : t;
      }
      wick_q8_add8_params k0 = k;
      k0.subtract = false;
      memset(got, 99, n + 2);
      kern->add8_rescaled(n, a, r, scalar ? 0 : 1, (uint8_t *)got + 1, &k0);
      snprintf(what, sizeof what, "%s add8_rescaled %s %s n=%zu variant %d, bytes first", kern->isa,
               u8 ? "uint8" : "int8", sub ? "sub" : "add", n, variant);
      compare_guarded(what, got, (const int8_t *)ref, n);
      /* the bytes as input 1, input 0 rescaled: the kernel's first operand is input 1 */
      if (!scalar) {
        for (size_t e = 0; e < n; e++)
          r[e] = wick_q8_rescale8_apply(&k.in[0], u8 ? a[e] : (int8_t)a[e]);
        wick_q8_add8_params k1 = k;
        k1.in[0] = k.in[1];
        memset(got, 99, n + 2);
        kern->add8_rescaled(n, b, r, 1, (uint8_t *)got + 1, &k1);
        snprintf(what, sizeof what, "%s add8_rescaled %s %s n=%zu variant %d, bytes second",
                 kern->isa, u8 ? "uint8" : "int8", sub ? "sub" : "add", n, variant);
        compare_guarded(what, got, (const int8_t *)ref, n);
      }
      cases++;
    next:
      free(a), free(b), free(ref), free(got), free(r);
    }
  printf("%s add8 / add8_rescaled (%d cases): %s\n", kern->isa, cases, verdict(before));
}

/* ------------------------------------------------------------------ MUL */

/* Sizes around the vector steps, then the extremes: zero points -128 and 127 (factors of
 * +-255), shifts 0, -31 and a left shift that wraps the product, multipliers 2^30 and
 * INT32_MAX. */
static void test_mul(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t sizes[] = {1, 7, 8, 9, 15, 16, 17, 31, 40, 100, 4097, 33, 64, 65, 250};
  static const int32_t extreme_shifts[] = {0, -31, 20, -30};
  for (int u8 = 0; u8 < (kern->mul_u8 ? 2 : 1); u8++)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      const size_t n = sizes[i];
      const bool extreme = i >= 11;
      int8_t *a = rand_i8(n, i % 3 == 2), *b = rand_i8(n, i % 3 == 2);
      int8_t *got = guarded_output(n), *ref = malloc(n);
      wick_qmul_params p;
      /* zero points: int8 -128 .. 127, uint8 0 .. 255 (offsets their negatives) */
      const int32_t zlo = u8 ? 0 : -128, zhi = u8 ? 255 : 127;
      p.input1_offset = extreme ? -(i % 2 ? zlo : zhi) : -irand(zlo, zhi);
      p.input2_offset = extreme ? -(i % 2 ? zhi : zlo) : -irand(zlo, zhi);
      p.output_offset = irand(zlo, zhi);
      p.output_multiplier = extreme && i % 2 ? INT32_MAX : (extreme ? 1 << 30 : rand_multiplier());
      p.output_shift = extreme ? extreme_shifts[i - 11] : (i == 1 ? 1 : -irand(6, 16));
      p.act_min = i % 2 ? p.output_offset : zlo;
      p.act_max = zhi;
      wick_broadcast bc;
      const int32_t dims = (int32_t)n;
      make_broadcast(&bc, 1, &dims, 1, &dims);
      wick_q_mul__reference(u8 ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8, &bc, &p, a, b, ref);
      if (u8)
        kern->mul_u8(n, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)got + 1, &p);
      else
        kern->mul(n, a, b, got + 1, &p);
      char what[100];
      snprintf(what, sizeof what, "%s mul %s n=%zu", kern->isa, u8 ? "uint8" : "int8", n);
      compare_guarded(what, got, ref, n);
      free(a), free(b), free(got), free(ref);
    }
  printf("%s mul: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ column sums */

/* Against the scalar sums: rows around the 256-row blocks of the 16-bit partial sums (all
 * extreme values too: 300 rows of 255 or of -128), columns in steps of 32 and 16 and single
 * ones, a row stride wider than the columns. */
static void test_colsum(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t shapes[][3] = {{1, 1, 1},     {3, 16, 16},      {256, 32, 40}, {257, 48, 48},
                                     {300, 53, 64}, {1000, 144, 150}, {5, 7, 9},     {513, 96, 96}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int u8 = 0; u8 < 2; u8++) {
      const size_t rows = shapes[i][0], cols = shapes[i][1], stride = shapes[i][2];
      uint8_t *x = (uint8_t *)rand_i8(rows * stride, false);
      if (i == 4 || i == 7) /* the extremes: 255 (uint8), -128 (int8) or 127 */
        for (size_t k = 0; k < rows * stride; k++) x[k] = u8 ? 255 : (i == 4 ? 0x80 : 0x7f);
      int32_t *got = malloc((cols + 2) * sizeof *got), *ref = malloc(cols * sizeof *ref);
      got[0] = got[cols + 1] = 99;
      for (size_t j = 0; j < cols; j++) {
        uint32_t sum = 0;
        for (size_t r = 0; r < rows; r++)
          sum += u8 ? x[r * stride + j] : (uint32_t)(int32_t)(int8_t)x[r * stride + j];
        ref[j] = (int32_t)sum;
      }
      kern->colsum(rows, cols, stride, x, u8 != 0, got + 1);
      char what[100];
      snprintf(what, sizeof what, "%s colsum %s rows=%zu cols=%zu", kern->isa,
               u8 ? "uint8" : "int8", rows, cols);
      checks++;
      if (memcmp(got + 1, ref, cols * sizeof *ref) != 0) fail("%s: sums differ", what);
      check_guards(what, got[0] == 99 && got[cols + 1] == 99);
      free(x), free(got), free(ref);
    }
  printf("%s colsum: %s\n", kern->isa, verdict(before));
}

/* int32 sums requantized to 8 bits against the reference: shifts from -31 to 30 (left shifts
 * wrap), sums near the int32 ends, lengths around the 16-lane steps. */
static void test_requant32(const wick_q8_kernels *kern) {
  const int before = failures;
  static const int32_t shifts[] = {-31, -20, -9, -1, 0, 3, 30};
  static const size_t sizes[] = {1, 15, 16, 17, 40, 333};
  for (size_t si = 0; si < sizeof shifts / sizeof shifts[0]; si++)
    for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni++)
      for (int u8 = 0; u8 < 2; u8++) {
        const size_t n = sizes[ni];
        int32_t *in = malloc(n * sizeof *in);
        for (size_t i = 0; i < n; i++)
          in[i] = i % 5 == 0 ? (i % 2 ? INT32_MAX - (int32_t)i : INT32_MIN + (int32_t)i)
                             : (int32_t)(next() % 200001) - 100000;
        const int32_t in_zp = irand(-1000, 1000), out_zp = u8 ? irand(0, 255) : irand(-128, 127);
        const int32_t lo = u8 ? irand(0, 40) : irand(-128, -90), hi = u8 ? 255 : 127;
        const int32_t m = si % 2 ? INT32_MAX : rand_multiplier();
        uint8_t *ref = malloc(n);
        int8_t *got = guarded_output(n);
        wick_q_requantize__reference(WICK_DTYPE_INT32, u8 ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8,
                                     (int64_t)n, in_zp, out_zp, m, shifts[si], lo, hi, in, ref);
        kern->requant32(n, in, in_zp, m, shifts[si], out_zp, lo, hi, u8 != 0, (uint8_t *)got + 1);
        char what[100];
        snprintf(what, sizeof what, "%s requant32 %s shift %d n=%zu", kern->isa,
                 u8 ? "uint8" : "int8", (int)shifts[si], n);
        compare_guarded(what, got, (const int8_t *)ref, n);
        free(in), free(ref), free(got);
      }
  printf("%s requant32: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ SQUARED_DIFFERENCE */

/* kern->squared_difference against the reference over every pair of int8 inputs (a 65536-element
 * run: a = i mod 256, b = i / 256) for several parameter sets — SQUARED_DIFFERENCE's own (left
 * shift 7, input multipliers up to 1/2, output multipliers far below 1), a positive input shift
 * whose differences square past int32 (the product wraps, as the reference's) and an output
 * shift that saturates most results — then random runs of every tail length. */
static void test_squared_difference(const wick_q8_kernels *kern) {
  const int before = failures;
  enum { PAIRS = 256 * 256 };
  int8_t *a = malloc(PAIRS), *b = malloc(PAIRS), *got = guarded_output(PAIRS), *ref = malloc(PAIRS);
  for (size_t i = 0; i < PAIRS; i++) a[i] = (int8_t)(i & 255), b[i] = (int8_t)(i >> 8);
  /* input1 multiplier, shift, input2 multiplier, shift, output multiplier, shift */
  static const int32_t sets[][6] = {
      {1 << 30, 0, 1 << 30, 0, 1 << 30, -14},             /* equal scales, real out 2^-15 */
      {1 << 30, 0, 1546188227, -1, 1288490189, -11},      /* input 2 finer */
      {1932735283, -3, 1 << 30, 0, 2147483520, -20},      /* input 1 finer, out near 2^-20 */
      {2147483647, 1, 1 << 30, 0, 1717986918, -23},       /* wraps: |diff| up to 81600 */
      {1 << 30, 0, 1 << 30, 0, 2147483647, -1},           /* nearly every result clamps */
      {1234567891, -2, 1987654321, -5, 1111111111, -31}}; /* the smallest output shift */
  wick_broadcast bc;
  const int32_t dims = PAIRS;
  make_broadcast(&bc, 1, &dims, 1, &dims);
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
    wick_qadd_params p = {.left_shift = 7, .act_min = -128, .act_max = 127};
    p.input1_multiplier = sets[s][0], p.input1_shift = sets[s][1];
    p.input2_multiplier = sets[s][2], p.input2_shift = sets[s][3];
    p.output_multiplier = sets[s][4], p.output_shift = sets[s][5];
    p.input1_offset = s % 2 ? 0 : -irand(-128, 127);
    p.input2_offset = -irand(-128, 127);
    p.output_offset = s % 3 ? irand(-128, 127) : -128;
    wick_q_squared_difference_i8__reference(&bc, &p, a, b, ref);
    kern->squared_difference(PAIRS, a, b, got + 1, &p);
    char what[100];
    snprintf(what, sizeof what, "%s squared_difference all pairs, set %zu", kern->isa, s);
    compare_guarded(what, got, ref, PAIRS);
  }
  free(a), free(b), free(got), free(ref);
  for (size_t n = 1; n <= 40; n++) {
    int8_t *x = rand_i8(n, n % 7 == 3), *y = rand_i8(n, false);
    int8_t *out = guarded_output(n), *want = malloc(n);
    wick_qadd_params p = {.left_shift = 7, .act_min = -128, .act_max = 127};
    p.input1_multiplier = rand_multiplier(), p.input1_shift = -irand(0, 3);
    p.input2_multiplier = rand_multiplier(), p.input2_shift = -irand(0, 3);
    p.output_multiplier = rand_multiplier(), p.output_shift = -irand(8, 20);
    p.input1_offset = -irand(-128, 127), p.input2_offset = -irand(-128, 127);
    p.output_offset = irand(-128, 127);
    wick_broadcast rbc;
    const int32_t rd = (int32_t)n;
    make_broadcast(&rbc, 1, &rd, 1, &rd);
    wick_q_squared_difference_i8__reference(&rbc, &p, x, y, want);
    kern->squared_difference(n, x, y, out + 1, &p);
    char what[100];
    snprintf(what, sizeof what, "%s squared_difference n=%zu", kern->isa, n);
    compare_guarded(what, out, want, n);
    free(x), free(y), free(out), free(want);
  }
  printf("%s squared_difference: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ int16 ADD / SUB / MUL */

/* kern->add16 / mul16 against the reference on int16 runs (zero points 0 as the 16x8 scheme,
 * left shift 15; extremes in every third buffer), with clamps inside int16. */
static void test_elementwise16(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t sizes[] = {1, 7, 8, 15, 16, 17, 33, 384, 1000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int kind = 0; kind < 3; kind++) {
      const size_t n = sizes[i];
      int16_t *a = malloc(n * 2), *b = malloc(n * 2), *ref = malloc(n * 2);
      int16_t *got = malloc(n * 2 + 4);
      for (size_t e = 0; e < n; e++) {
        a[e] = i % 3 == 2 ? (int16_t)(next() & 1 ? 32767 : -32768) : (int16_t)irand(-32768, 32767);
        b[e] = (int16_t)irand(-32768, 32767);
      }
      got[0] = got[n + 1] = 0x5555;
      const int32_t lo = i % 2 ? -32768 : irand(-32768, 0), hi = i % 4 ? 32767 : irand(0, 32767);
      wick_broadcast bc;
      const int32_t dims = (int32_t)n;
      make_broadcast(&bc, 1, &dims, 1, &dims);
      if (kind < 2) {
        wick_qadd_params p = {0};
        p.left_shift = 15;
        p.input1_multiplier = rand_multiplier();
        p.input2_multiplier = rand_multiplier();
        p.input1_shift = i % 2 ? 0 : -irand(0, 4);
        p.input2_shift = i % 2 ? -irand(0, 4) : 0;
        p.output_multiplier = rand_multiplier();
        p.output_shift = i == 2 ? 1 : -irand(12, 16);
        p.act_min = lo, p.act_max = hi;
        wick_q_add__reference(WICK_DTYPE_INT16, kind == 1, &bc, &p, a, b, ref);
        kern->add16(n, a, b, got + 1, &p, kind == 1);
      } else {
        wick_qmul_params p = {0};
        p.output_multiplier = rand_multiplier();
        p.output_shift = i == 1 ? 1 : -irand(12, 18);
        p.act_min = lo, p.act_max = hi;
        wick_q_mul__reference(WICK_DTYPE_INT16, &bc, &p, a, b, ref);
        kern->mul16(n, a, b, got + 1, &p);
      }
      checks++;
      for (size_t e = 0; e < n; e++)
        if (got[e + 1] != ref[e]) {
          fail("%s int16 %s n=%zu: [%zu] got %d want %d", kern->isa,
               kind == 0 ? "add" : (kind == 1 ? "sub" : "mul"), n, e, got[e + 1], ref[e]);
          break;
        }
      check_guards("int16 elementwise", got[0] == 0x5555 && got[n + 1] == 0x5555);
      free(a), free(b), free(ref), free(got);
    }
  printf("%s int16 add / sub / mul: %s\n", kern->isa, verdict(before));
}

/* kern->add16 on every int16 value of each input (65536-element runs, the other input a
 * permutation), for input multipliers and shifts at the ends of their ranges: the 32-bit
 * input rescale of the AVX-512 kernel (avx512vnni/q8_elementwise.c) must equal the
 * reference's 64-bit mbqm for every value. */
static void test_add16_every_value(const wick_q8_kernels *kern) {
  const int before = failures;
  enum { ALL = 65536 };
  int16_t *a = malloc(ALL * 2), *b = malloc(ALL * 2), *ref = malloc(ALL * 2);
  int16_t *got = malloc(ALL * 2 + 4);
  for (int i = 0; i < ALL; i++) {
    a[i] = (int16_t)(i - 32768);
    b[i] = (int16_t)((int32_t)(((uint32_t)i * 40503u) % ALL) - 32768); /* odd: a permutation */
  }
  static const int32_t mults[] = {1 << 30, INT32_MAX, 1518500250, 1073774592, 2147450879, 0};
  static const int32_t shifts[] = {0, -1, -2, -14, -15, -29, -30};
  const int32_t dims = ALL;
  wick_broadcast bc;
  make_broadcast(&bc, 1, &dims, 1, &dims);
  for (size_t mi = 0; mi < sizeof mults / sizeof mults[0]; mi++)
    for (size_t si = 0; si < sizeof shifts / sizeof shifts[0]; si++)
      for (int sub = 0; sub < 2; sub++) {
        wick_qadd_params p = {0};
        p.left_shift = 15;
        p.input1_multiplier = mults[mi];
        p.input1_shift = shifts[si];
        p.input2_multiplier = mults[(mi + 2) % (sizeof mults / sizeof mults[0])];
        p.input2_shift = shifts[(si + 3) % (sizeof shifts / sizeof shifts[0])];
        p.output_multiplier = 1 << 30;
        p.output_shift = si % 2 ? -1 : 0; /* the rescaled sums stay visible in int16 */
        p.act_min = -32768, p.act_max = 32767;
        wick_q_add__reference(WICK_DTYPE_INT16, sub, &bc, &p, a, b, ref);
        got[0] = got[ALL + 1] = 0x5555;
        kern->add16(ALL - 7, a, b, got + 1, &p, sub);
        kern->add16(7, a + ALL - 7, b + ALL - 7, got + 1 + ALL - 7, &p, sub);
        checks++;
        for (int e = 0; e < ALL; e++)
          if (got[e + 1] != ref[e]) {
            fail("%s int16 %s m1=%d s1=%d m2=%d s2=%d: a=%d b=%d got %d want %d", kern->isa,
                 sub ? "sub" : "add", p.input1_multiplier, p.input1_shift, p.input2_multiplier,
                 p.input2_shift, a[e], b[e], got[e + 1], ref[e]);
            break;
          }
        check_guards("int16 add every value", got[0] == 0x5555 && got[ALL + 1] == 0x5555);
      }
  free(a), free(b), free(ref), free(got);
  printf("%s int16 add / sub on every value: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ QUANTIZE from int16 */

/* kern->requant16 against wick_q_requantize__reference on every int16 input (a 65536-element
 * run cut into a body and a 5-element tail), to int8 and to int16, for multipliers below and
 * above 1 (negative and positive shifts, one that shifts every product out), input and output
 * zero points at both ends, and clamps inside the output type. */
static void test_requant16(const wick_q8_kernels *kern) {
  const int before = failures;
  enum { ALL = 65536 };
  int16_t *in = malloc(ALL * 2), *ref = malloc(ALL * 2 + 4), *got = malloc(ALL * 2 + 4);
  for (int i = 0; i < ALL; i++) in[i] = (int16_t)(i - 32768);
  /* multiplier, shift, input zero point, output zero point */
  static const int32_t sets[][4] = {{1 << 30, 0, 0, 0},           {1518500250, -7, 0, 0},
                                    {2147483647, -16, -5, 3},     {1288490189, 1, 0, -128},
                                    {1717986918, -1, 32767, 127}, {1073741824, -31, 0, 0},
                                    {1987654321, 3, -32768, 100}, {1234567891, -40, 7, -7}};
  for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++)
    for (int out16 = 0; out16 <= 1; out16++) {
      const int32_t *q = sets[si];
      const int32_t lo = out16 ? (si % 2 ? -32768 : -1000) : (si % 2 ? -128 : -20);
      const int32_t hi = out16 ? (si % 3 ? 32767 : 2000) : (si % 3 ? 127 : 90);
      const int32_t zp = out16 ? q[3] * 200 : q[3];
      const wick_q_requant_params p = {q[2], zp, q[0], q[1], lo, hi};
      const wick_dtype out_type = out16 ? WICK_DTYPE_INT16 : WICK_DTYPE_INT8;
      const size_t os = out16 ? 2 : 1;
      memset(got, 0x55, ALL * 2 + 4);
      memset(ref, 0x55, ALL * 2 + 4);
      wick_q_requantize__reference(WICK_DTYPE_INT16, out_type, ALL, p.in_zp, p.out_zp, p.multiplier,
                                   p.shift, lo, hi, in, (uint8_t *)ref + os);
      kern->requant16(ALL - 5, in, (uint8_t *)got + os, out16 != 0, &p);
      kern->requant16(5, in + ALL - 5, (uint8_t *)got + os + (ALL - 5) * os, out16 != 0, &p);
      checks++;
      if (memcmp(got, ref, (ALL + 2) * os) != 0) {
        size_t i = 0;
        while (((uint8_t *)got)[i] == ((uint8_t *)ref)[i]) i++;
        fail("%s requant16 set %zu to %s: byte %zu differs (input %d)", kern->isa, si,
             out16 ? "int16" : "int8", i, i >= os ? in[(i - os) / os] : 0);
      }
    }
  free(in), free(ref), free(got);
  printf("%s int16 quantize: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ int16 LOGISTIC / TANH */

/* kern->sigmoid16 against the reference on every int16 input, for power-of-two input scales
 * (the kernel's shift-0 case), ordinary ones and extremes of the rescale's range. */
static void test_sigmoid16(const wick_q8_kernels *kern) {
  const int before = failures;
  static const double scales[] = {1.0 / 4096, 1.0 / 8192, 0.001, 0.0003, 3.1e-5, 0.01, 0.7, 2e-9};
  uint16_t table16[256];
  int32_t table[256];
  wick_q16_sigmoid_table(table16);
  for (int i = 0; i < 256; i++) table[i] = table16[i];
  int16_t *in = malloc(65536 * 2), *ref = malloc(65536 * 2), *got = malloc(65536 * 2);
  for (int i = 0; i < 65536; i++) in[i] = (int16_t)(i - 32768);
  for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
    for (int tanh = 0; tanh <= 1; tanh++) {
      int32_t m, sh;
      if (!wick_q16_sigmoid_rescale(scales[si], tanh, &m, &sh)) continue;
      (tanh ? wick_q16_tanh__reference : wick_q16_logistic__reference)(65536, table16, m, sh, in,
                                                                       ref);
      kern->sigmoid16(65536 - 3, table, m, sh, tanh, in, got); /* a tail too */
      kern->sigmoid16(3, table, m, sh, tanh, in + 65533, got + 65533);
      checks++;
      for (int i = 0; i < 65536; i++)
        if (got[i] != ref[i]) {
          fail("%s int16 %s scale %g: input %d got %d want %d", kern->isa,
               tanh ? "tanh" : "logistic", scales[si], in[i], got[i], ref[i]);
          break;
        }
    }
  free(in), free(ref), free(got);
  printf("%s int16 logistic / tanh: %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ BATCH_MATMUL rhs packing */

/* wick_q8_bmm_pack (a run-time rhs, adj_y or not) equals wick_q8_gemm_pack of the same matrix
 * gathered as [n, k] rows, byte for byte, for every table of the inventory: packing is portable
 * C, so the layouts of ISAs this CPU lacks (VNNI, AMX, NEON) are checked here too (rhs zero
 * point 0; the AVX2 layout's nonzero one is the op sweep's). */
static void test_bmm_pack(void) {
  const int before = failures;
  static const size_t shapes[][2] = {{1, 1}, {5, 3}, {16, 32}, {17, 33}, {40, 7}, {64, 64}};
  for (size_t t = 0; t < wick_q8_kernels_count(); t++) {
    const wick_q8_kernels *kern = wick_q8_kernels_at(t, NULL);
    for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++)
      for (int adj_y = 0; adj_y <= 1; adj_y++) {
        const size_t n = shapes[h][0], k = shapes[h][1];
        int8_t *rhs = rand_i8(n * k, h % 3 == 2), *gathered = malloc(n * k);
        for (size_t j = 0; j < n; j++)
          for (size_t q = 0; q < k; q++) gathered[j * k + q] = rhs[adj_y ? j * k + q : q * n + j];
        int32_t *mult = malloc(n * sizeof(int32_t)), *shift = malloc(n * sizeof(int32_t));
        const int32_t m = rand_multiplier(), sh = -irand(0, 20), zp = irand(-128, 127);
        for (size_t j = 0; j < n; j++) mult[j] = m, shift[j] = sh;
        size_t bytes;
        if (!wick_q8_gemm_packed_size(kern, n, 1, k, &bytes)) abort();
        uint8_t *want = aligned(bytes), *got = aligned(bytes);
        memset(want, 0xA5, bytes), memset(got, 0x5A, bytes);
        wick_q8_gemm_pack(kern, n, 1, k, gathered, NULL, zp, mult, shift, want);
        wick_q8_bmm_pack(kern, n, k, rhs, adj_y ? k : 1, adj_y ? 1 : n, 0, zp, mult, shift, got);
        checks++;
        if (memcmp(want, got, bytes) != 0)
          fail("%s bmm pack n=%zu k=%zu adj_y=%d differs from the GEMM packing", kern->isa, n, k,
               adj_y);
        free(rhs), free(gathered), free(mult), free(shift), free(want), free(got);
      }
  }
  printf("bmm rhs packing (every table): %s\n", verdict(before));
}

/* The GEMM on a BATCH_MATMUL rhs packed with a zero point on an i16 table (int16 pairs of
 * rhs - zp, up to 9 bits; wick_q8_output.w16) against the reference BATCH_MATMUL: adj_y or
 * not, zero points at the ends so that rhs - zp spans [-255, 255], k odd and even, column
 * counts around the panel width, two row ranges as a thread split makes. */
static void test_bmm_w16(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t shapes[][3] = {{1, 1, 1},    {5, 17, 3},   {7, 33, 64},
                                     {4, 16, 129}, {9, 40, 255}, {2, 100, 1000}};
  for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++)
    for (int adj_y = 0; adj_y <= 1; adj_y++) {
      const size_t m = shapes[h][0], n = shapes[h][1], k = shapes[h][2];
      int8_t *lhs = rand_i8(m * k, h % 2 == 1), *rhs = rand_i8(n * k, true);
      const int32_t zl = irand(-128, 127), zr = h % 2 ? 127 : -128, zo = irand(-128, 127);
      int32_t mult = rand_multiplier(), shift = -irand(8, 14);
      wick_qbmm_params p = {-zl, -zr, zo, mult, shift, -128, 127};
      wick_batch_matmul_shape s;
      memset(&s, 0, sizeof s);
      s.m = (int64_t)m, s.n = (int64_t)n, s.k = (int64_t)k, s.adj_y = adj_y != 0;
      int8_t *ref = malloc(m * n), *got = guarded_output(m * n);
      wick_q_batch_matmul_rows__reference(WICK_DTYPE_INT8, WICK_DTYPE_INT8, &s, &p, false, lhs, rhs,
                                          ref, 0, (int64_t)m);
      int32_t *mults = malloc(n * sizeof(int32_t)), *shifts = malloc(n * sizeof(int32_t));
      for (size_t j = 0; j < n; j++) mults[j] = mult, shifts[j] = shift;
      int64_t *rq64 = malloc(wick_q8_rq64_words(n) * sizeof(int64_t));
      wick_q8_rq64_prepare(n, shifts, rq64);
      size_t bytes;
      if (!wick_q8_bmm_w16(kern, zr) || !wick_q8_bmm_packed_size(kern, n, k, zr, &bytes)) abort();
      void *packed = aligned(bytes);
      wick_q8_bmm_pack(kern, n, k, rhs, adj_y ? k : 1, adj_y ? 1 : n, zr, zl, mults, shifts,
                       packed);
      const size_t ib = wick_q8_input_bytes(kern);
      int8_t *prepared = malloc(m * k * ib + WICK_Q8_ROW_PAD);
      wick_q8_prepare_input(kern, m * k, lhs, zl, prepared);
      for (int fused = 0; fused <= 1; fused++) { /* the plain and the fused requantization */
        const wick_q8_output o = {zo, -128, 127, NULL, fused ? rq64 : NULL, false, true};
        memset(got + 1, 0x55, m * n);
        wick_q8_gemm(kern, 0, m / 2, n, k, prepared, k * ib, true, packed, got + 1, n, &o);
        wick_q8_gemm(kern, m / 2, m, n, k, prepared, k * ib, true, packed, got + 1, n, &o);
        char what[128];
        snprintf(what, sizeof what, "%s bmm w16 m=%zu n=%zu k=%zu adj_y=%d fused=%d", kern->isa, m,
                 n, k, adj_y, fused);
        compare_guarded(what, got, ref, m * n);
      }
      free(lhs), free(rhs), free(ref), free(got), free(mults), free(shifts), free(rq64);
      free(packed), free(prepared);
    }
  printf("%s bmm gemm on int16 pairs (rhs zero point): %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ hybrid dot products */

/* kern->dots against the portable loop: every m (4-row blocks and the rest), k around the
 * 16- and 64-byte steps, extreme values, and a k long enough (140000 x 128 x 128 > 2^31) that
 * the int32 sums wrap as the reference's. */
static void test_dots(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t shapes[][3] = {{1, 1, 1},    {3, 5, 15},    {4, 7, 16}, {5, 33, 17},
                                     {9, 3, 63},   {8, 2, 64},    {7, 4, 65}, {13, 9, 384},
                                     {2, 3, 1000}, {4, 1, 140000}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const size_t m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
    const bool extreme = i % 3 == 2 || k == 140000;
    int8_t *a = rand_i8(m * k, extreme), *b = rand_i8(n * k, extreme);
    if (k == 140000)
      for (size_t p = 0; p < m * k; p++) a[p] = -128, b[p % (n * k)] = -128;
    const size_t ldc = n + 2;
    int32_t *got = calloc(m * ldc, sizeof(int32_t)), *ref = calloc(m * ldc, sizeof(int32_t));
    wick_hybrid_dots__reference(m, n, k, a, b, ref, ldc);
    kern->dots(m, n, k, a, b, got, ldc);
    checks++;
    for (size_t r = 0; r < m; r++)
      for (size_t c = 0; c < ldc; c++)
        if (got[r * ldc + c] != ref[r * ldc + c]) {
          fail("%s dots m=%zu n=%zu k=%zu: [%zu, %zu] got %d want %d", kern->isa, m, n, k, r, c,
               got[r * ldc + c], ref[r * ldc + c]);
          r = m;
          break;
        }
    free(a), free(b), free(got), free(ref);
  }
  printf("%s hybrid dots: %s\n", kern->isa, verdict(before));
}

/* The raw GEMM output (wick_q8_output.raw, the hybrid ops): weights packed with zero point 0
 * and no bias, the int32 sums of prepared rows against the portable dot loop, over two row
 * ranges and two column ranges (a thread split), with the int32 stride of the full width. */
static void test_gemm_raw(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t shapes[][3] = {{1, 1, 1},      {3, 5, 15},    {7, 33, 17},     {8, 64, 64},
                                     {15, 100, 129}, {50, 17, 384}, {32, 1536, 384}, {2, 3000, 40}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const size_t m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
    int8_t *a = rand_i8(m * k, i % 3 == 2), *w = rand_w8(n * k);
    size_t bytes;
    if (!wick_q8_gemm_packed_size(kern, n, 1, k, &bytes)) abort();
    void *packed = aligned(bytes);
    wick_q8_gemm_pack(kern, n, 1, k, w, NULL, 0, NULL, NULL, packed);
    const size_t ib = wick_q8_input_bytes(kern);
    int8_t *prepared = malloc(m * k * ib + 1);
    wick_q8_prepare_input(kern, m * k, a, 0, prepared);
    int32_t *got = malloc((m * n + 2) * sizeof(int32_t)), *ref = malloc(m * n * sizeof(int32_t));
    for (size_t p = 0; p < m * n + 2; p++) got[p] = 0x55555555;
    wick_hybrid_dots__reference(m, n, k, a, w, ref, n);
    const wick_q8_output o = {.raw = true};
    const size_t ms = m / 2, ns = n / kern->nr / 2 * kern->nr;
    const size_t rows[3] = {0, ms, m}, cols[3] = {0, ns, n};
    for (size_t r = 0; r < 2; r++)
      for (size_t c = 0; c < 2; c++)
        if (rows[r] < rows[r + 1] && cols[c] < cols[c + 1])
          wick_q8_gemm_cols(kern, rows[r], rows[r + 1], cols[c], cols[c + 1], n, k, prepared,
                            k * ib, true, packed, (int8_t *)(void *)(got + 1), n * sizeof(int32_t),
                            &o);
    checks++;
    if (got[0] != 0x55555555 || got[m * n + 1] != 0x55555555)
      fail("%s raw gemm m=%zu n=%zu k=%zu wrote outside its output", kern->isa, m, n, k);
    for (size_t p = 0; p < m * n; p++)
      if (got[p + 1] != ref[p]) {
        fail("%s raw gemm m=%zu n=%zu k=%zu: [%zu, %zu] got %d want %d", kern->isa, m, n, k, p / n,
             p % n, got[p + 1], ref[p]);
        break;
      }
    free(a), free(w), free(packed), free(prepared), free(got), free(ref);
  }
  printf("%s raw gemm (hybrid): %s\n", kern->isa, verdict(before));
}

/* ------------------------------------------------------------------ 16x8 FULLY_CONNECTED */

/* One 16x8 case: int16 rows against int8 weights, int64 bias (or int32: wrapping sums), the
 * reference's double scale per column, an int16 clamp; the kernel over two row ranges and two
 * column ranges (a thread split) against the reference. `extreme`: every input -32768 and every
 * weight -128 (sums beyond int32 at k > 512: the 64-bit blocks), `huge_bias`: biases past 2^51
 * (the scalar output path). The portable rows (wick_q16_fully_connected_rows) run it too. */
static void test_fc16_shape(const wick_q8_kernels *kern, size_t m, size_t n, size_t k, bool acc64,
                            bool with_bias, bool extreme, bool huge_bias) {
  int16_t *a = malloc((m * k + 1) * sizeof(int16_t));
  int8_t *w = malloc(n * k + 1);
  for (size_t i = 0; i < m * k; i++)
    a[i] = extreme ? INT16_MIN
                   : (int16_t)(i % 23 == 5 ? (next() & 1 ? 32767 : -32768) : irand(-32768, 32767));
  for (size_t i = 0; i < n * k; i++) w[i] = extreme ? (int8_t)-128 : (int8_t)irand(-128, 127);
  const size_t padded = (n + WICK_Q16_NR - 1) / WICK_Q16_NR * WICK_Q16_NR;
  int64_t *b64 = calloc(padded, sizeof(int64_t));
  int32_t *b32 = calloc(padded, sizeof(int32_t));
  double *scale = calloc(padded, sizeof(double));
  for (size_t c = 0; c < n; c++) {
    if (with_bias) {
      b64[c] = huge_bias && c % 3 == 1 ? (next() & 1 ? 1 : -1) * ((int64_t)1 << 52)
                                       : irand(-(1 << 24), 1 << 24);
      b32[c] = c % 9 == 4 ? INT32_MAX - irand(0, 1 << 20) : irand(-(1 << 24), 1 << 24);
    }
    /* scales that put typical sums around the int16 range, some tiny, some saturating */
    scale[c] = ldexp(1.0 + (double)(next() % 1000) / 1000.0,
                     -(int)(log2((double)k) / 2) - 14 + irand(-2, 2));
    if (c % 7 == 3) scale[c] = 0.5; /* ties of the rounding */
  }
  const int32_t lo = irand(0, 3) == 0 ? -1000 : -32768, hi = irand(0, 3) == 0 ? 2000 : 32767;
  const wick_qfc_params fc = {0, 0, 0, scale, lo, hi};
  const void *bias = with_bias ? (acc64 ? (const void *)b64 : (const void *)b32) : NULL;
  int16_t *ref = malloc((m * n + 1) * sizeof(int16_t)),
          *got = malloc((m * n + 2) * sizeof(int16_t));
  wick_q_fully_connected__reference(WICK_DTYPE_INT16, (int64_t)m, (int64_t)n, (int64_t)k, &fc, a, w,
                                    bias, acc64, ref);
  char what[160];
  snprintf(what, sizeof what, "%s fc16 m=%zu n=%zu k=%zu acc64=%d bias=%d extreme=%d huge=%d",
           kern ? kern->isa : "portable", m, n, k, acc64, with_bias, extreme, huge_bias);
  for (size_t i = 0; i < m * n + 2; i++) got[i] = 0x5555;
  if (kern != NULL) {
    size_t elems;
    if (!wick_q16_fc_packed_size(n, k, &elems)) abort();
    int16_t *packed = aligned(elems * sizeof(int16_t));
    wick_q16_fc_pack(n, k, w, packed);
    const wick_q16_fc_args args = {acc64, b64, b32, scale, 0, lo, hi};
    const size_t ms = m / 2, ns = n / WICK_Q16_NR / 2 * WICK_Q16_NR;
    const size_t rows[3] = {0, ms, m}, cols[3] = {0, ns, n};
    for (size_t r = 0; r < 2; r++)
      for (size_t c = 0; c < 2; c++)
        if (rows[r] < rows[r + 1] && cols[c] < cols[c + 1])
          kern->fc16(rows[r + 1] - rows[r], cols[c], cols[c + 1], n, k, a + rows[r] * k, packed,
                     &args, got + 1 + rows[r] * n);
    free(packed);
  } else {
    int16_t *w16 = malloc((n * k + 1) * sizeof(int16_t));
    for (size_t i = 0; i < n * k; i++) w16[i] = w[i];
    wick_q16_fully_connected_rows(0, (int64_t)m, (int64_t)n, (int64_t)k, &fc, a, w16, bias, acc64,
                                  got + 1);
    free(w16);
  }
  checks++;
  for (size_t i = 0; i < m * n; i++)
    if (got[i + 1] != ref[i]) {
      fail("%s: [%zu, %zu] got %d want %d", what, i / n, i % n, got[i + 1], ref[i]);
      break;
    }
  check_guards(what, got[0] == 0x5555 && got[m * n + 1] == 0x5555);
  free(a), free(w), free(b64), free(b32), free(scale), free(ref), free(got);
}

/* kern NULL: the portable rows. */
static void test_fc16(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t ms[] = {1, 3, 4, 5, 9};
  static const size_t ns[] = {1, 15, 16, 17, 40};
  static const size_t ks[] = {1, 2, 3, 31, 510, 511, 512, 1023};
  int v = 0;
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
      for (size_t l = 0; l < sizeof ks / sizeof ks[0]; l++, v++)
        test_fc16_shape(kern, ms[i], ns[j], ks[l], v % 4 != 1, v % 5 != 2, v % 11 == 6,
                        v % 13 == 3);
  static const size_t models[][3] = {{128, 1536, 384}, {128, 384, 1536}, {7, 33, 2000}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    for (int extreme = 0; extreme <= 1; extreme++)
      test_fc16_shape(kern, models[i][0], models[i][1], models[i][2], true, true, extreme, false);
  test_fc16_shape(kern, 6, 20, 1536, false, true, true, false); /* int32 sums that wrap */
  printf("%s 16x8 fc: %s\n", kern ? kern->isa : "portable", verdict(before));
}

/* ------------------------------------------------------------------ 8-bit SOFTMAX (portable) */

/* The op's parameters for input scale * beta = `real_scale` (as activations_quantized.c:
 * LiteRT's PreprocessSoftmaxScaling with 5 integer bits). */
static wick_qsoftmax_params softmax_params(double real_scale) {
  double real = real_scale * (double)(1 << 26);
  if (real > 2147483647.0) real = 2147483647.0;
  int e;
  const double f = frexp(real, &e);
  int64_t fixed = (int64_t)round(f * 2147483648.0);
  if (fixed == ((int64_t)1 << 31)) fixed /= 2, e++;
  wick_qsoftmax_params p = {(int32_t)fixed, e, 0};
  p.diff_min = -(int32_t)floor(31.0 * (double)((int64_t)1 << 26) / (double)((int64_t)1 << e));
  return p;
}

static void test_softmax(const char *name, wick_q8_softmax_fn fn) {
  const int before = failures;
  static const double scales[] = {0.02, 0.1, 0.004, 1.5, 0.0625};
  /* blocks of 8 short rows and their remainders, row tails, the longest short row and one past */
  static const size_t shapes[][2] = {{1, 1},    {3, 3},   {48, 32}, {5, 37},  {2, 1000},
                                     {2, 5000}, {13, 8},  {17, 16}, {9, 31},  {20, 12},
                                     {10, 256}, {3, 257}, {11, 64}, {7, 100}, {12, 47}};
  static const wick_dtype pairs[][2] = {{WICK_DTYPE_INT8, WICK_DTYPE_INT8},
                                        {WICK_DTYPE_INT8, WICK_DTYPE_INT16},
                                        {WICK_DTYPE_UINT8, WICK_DTYPE_UINT8},
                                        {WICK_DTYPE_UINT8, WICK_DTYPE_INT16}};
  int32_t exps[256], sums[256];
  for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
    const wick_qsoftmax_params p = softmax_params(scales[si]);
    wick_q_softmax_tables(&p, exps, sums);
    for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++)
      for (size_t t = 0; t < 4; t++) {
        const size_t rows = shapes[h][0], cols = shapes[h][1], n = rows * cols;
        const size_t os = pairs[t][1] == WICK_DTYPE_INT16 ? 2 : 1;
        /* random bytes; rows of 5000 nearly constant (their sums wrap in int32: the reference
         * fallback), every third buffer in a narrow band */
        int8_t *in = rand_i8(n, false);
        for (size_t i = 0; i < n; i++)
          if (cols == 5000 || (si + h) % 3 == 0) in[i] = (int8_t)(in[i] & 3);
        uint8_t *ref = malloc(n * os + 1), *got = malloc(n * os + 2);
        got[0] = got[n * os + 1] = 99;
        wick_q_softmax__reference(pairs[t][0], pairs[t][1], (int64_t)rows, (int64_t)cols, &p, in,
                                  ref);
        fn(exps, sums, &p, pairs[t][0], pairs[t][1], rows, cols, in, got + 1);
        char what[120];
        snprintf(what, sizeof what, "%s softmax %s -> %s %zux%zu scale %g", name,
                 wick_dtype_name(pairs[t][0]), wick_dtype_name(pairs[t][1]), rows, cols,
                 scales[si]);
        compare_guarded(what, (const int8_t *)got, (const int8_t *)ref, n * os);
        free(in), free(ref), free(got);
      }
  }
  printf("%s 8-bit softmax: %s\n", name, verdict(before));
}

/* ------------------------------------------------------------------ pools (portable) */

static void test_pool(void) {
  const int before = failures;
  for (int i = 0; i < 200; i++) {
    wick_pool_shape s;
    s.batch = irand(1, 2), s.in_h = irand(1, 9), s.in_w = irand(1, 9), s.channels = irand(1, 40);
    s.k_h = irand(1, 4), s.k_w = irand(1, 4), s.stride_h = irand(1, 3), s.stride_w = irand(1, 3);
    s.pad_top = irand(0, s.k_h - 1), s.pad_left = irand(0, s.k_w - 1);
    if (i % 25 == 7) { /* windows of more than 64 taps (the int32 MAX_POOL path) */
      s.k_h = s.k_w = 9, s.in_h = irand(9, 12), s.in_w = irand(9, 12);
      s.pad_top = s.pad_left = irand(0, 3);
    }
    s.out_h = (s.in_h + 2 * s.pad_top - s.k_h) / s.stride_h + 1;
    s.out_w = (s.in_w + 2 * s.pad_left - s.k_w) / s.stride_w + 1;
    if (s.out_h <= 0 || s.out_w <= 0) continue;
    const size_t in_n = (size_t)s.batch * s.in_h * s.in_w * s.channels;
    const size_t out_n = (size_t)s.batch * s.out_h * s.out_w * s.channels;
    int8_t *in = rand_i8(in_n, i % 9 == 4), *got = malloc(out_n), *ref = malloc(out_n);
    int32_t *acc = malloc((size_t)s.channels * sizeof(int32_t));
    const int32_t lo = i % 3 ? -128 : irand(-128, 0), hi = i % 4 ? 127 : irand(0, 127);
    for (int is_max = 0; is_max <= 1; is_max++) {
      if (is_max)
        wick_q_max_pool__reference(WICK_DTYPE_INT8, &s, in, ref, lo, hi);
      else
        wick_q_average_pool__reference(WICK_DTYPE_INT8, &s, in, ref, lo, hi);
      wick_q8_pool(is_max, &s, in, got, lo, hi, acc);
      char what[120];
      snprintf(what, sizeof what, "%s pool %dx%dx%d k%dx%d s%d,%d pad %d,%d",
               is_max ? "max" : "avg", s.in_h, s.in_w, s.channels, s.k_h, s.k_w, s.stride_h,
               s.stride_w, s.pad_top, s.pad_left);
      compare(what, got, ref, out_n);
    }
    free(in), free(got), free(ref), free(acc);
  }
  printf("portable int8 pools: %s\n", verdict(before));
}

/* ------------------------------------------------------------------ 8-bit tables */

static void test_lut8_fn(const char *isa, wick_q8_lut8_fn fn) {
  const int before = failures;
  uint8_t lut[256];
  for (int i = 0; i < 256; i++) lut[i] = (uint8_t)next();
  static const size_t sizes[] = {1, 31, 32, 33, 63, 64, 65, 200, 4099};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const size_t n = sizes[i];
    uint8_t *in = (uint8_t *)rand_i8(n, false), *ref = malloc(n);
    if (n == 4099)
      for (size_t e = 0; e < 256; e++) in[e] = (uint8_t)e; /* every byte */
    int8_t *got = guarded_output(n);
    wick_q_lut8__reference((int64_t)n, lut, in, ref);
    fn(n, lut, in, (uint8_t *)(got + 1));
    char what[64];
    snprintf(what, sizeof what, "lut8 (%s) n=%zu", isa, n);
    compare_guarded(what, got, (int8_t *)ref, n);
    free(in), free(ref), free(got);
  }
  printf("lut8 (%s): %s\n", isa, verdict(before));
}

/* kern->lut16 (8-bit QUANTIZE to int16 on a table) against the scalar lookup, every byte
 * value, every tail length around the 32-element step; guards past both ends. */
static void test_lut16(const wick_q8_kernels *kern) {
  const int before = failures;
  int16_t lut[256];
  for (int i = 0; i < 256; i++) lut[i] = (int16_t)next();
  lut[0] = INT16_MIN, lut[255] = INT16_MAX;
  static const size_t sizes[] = {1, 31, 32, 33, 63, 64, 65, 200, 4099};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const size_t n = sizes[i];
    uint8_t *in = (uint8_t *)rand_i8(n, false);
    if (n == 4099)
      for (size_t e = 0; e < 256; e++) in[e] = (uint8_t)e; /* every byte */
    int16_t *got = malloc((n + 2) * sizeof(int16_t));
    got[0] = got[n + 1] = 0x5555;
    kern->lut16(n, lut, in, got + 1);
    checks++;
    for (size_t e = 0; e < n; e++)
      if (got[e + 1] != lut[in[e]]) {
        fail("%s lut16 n=%zu: [%zu] got %d want %d", kern->isa, n, e, got[e + 1], lut[in[e]]);
        break;
      }
    check_guards("lut16", got[0] == 0x5555 && got[n + 1] == 0x5555);
    free(in), free(got);
  }
  printf("%s lut16: %s\n", kern->isa, verdict(before));
}

/* kern->dot16 (int16 x int16 BATCH_MATMUL sums) against the exact int64 sum: random values,
 * all -32768 (every VPMADDWD pair wraps: 2^31), mixed extremes, every length around the vector
 * steps; unaligned starts. */
static void test_dot16(const wick_q8_kernels *kern) {
  const int before = failures;
  static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 384, 1000, 4099};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (int form = 0; form < 3; form++) {
      const size_t k = sizes[si];
      int16_t *x = malloc((k + 1) * sizeof(int16_t)), *w = malloc((k + 1) * sizeof(int16_t));
      int64_t want = 0;
      for (size_t i = 0; i < k; i++) {
        const int16_t a = form == 1   ? INT16_MIN
                          : form == 2 ? (int16_t)(next() & 1 ? INT16_MIN : INT16_MAX)
                                      : (int16_t)irand(-32768, 32767);
        const int16_t b = form == 1   ? INT16_MIN
                          : form == 2 ? (int16_t)(next() & 1 ? INT16_MIN : INT16_MAX)
                                      : (int16_t)irand(-32768, 32767);
        x[i] = a, w[i] = b;
        want += (int64_t)a * b;
      }
      const int64_t got = kern->dot16(k, x, w);
      checks++;
      if (got != want)
        fail("%s dot16 k=%zu form %d: got %lld want %lld", kern->isa, k, form, (long long)got,
             (long long)want);
      free(x), free(w);
    }
  printf("%s int16 dot: %s\n", kern->isa, verdict(before));
}

/* Every 8-bit table lookup this CPU runs (the selection's best, and AVX2 under it). */
static void test_lut8(void) {
  const wick_q8_lut8_fn best = wick_q8_lut8_select(false);
  if (best == NULL) {
    printf("lut8: skipped (no vector table lookup for this CPU)\n");
    return;
  }
#if defined(__x86_64__) || defined(_M_X64)
  if (best != wick_q8_lut8__avx2) test_lut8_fn("avx512vbmi", best);
  test_lut8_fn("avx2", wick_q8_lut8__avx2); /* selected whenever AVX2 is there */
#else
  test_lut8_fn("best", best);
#endif
}

/* ------------------------------------------------------------------ main */

int main(void) {
  checks++;
  if (wick_q8_kernels_select(true) != NULL)
    fail("forcing the reference kernels still selected optimized ones");
  test_pool();
  test_lut8();
  test_fc16(NULL);
  test_softmax("portable", wick_q8_softmax_rows);
  test_bmm_pack();
  test_rescale8_forms();
  const wick_q8_kernels *best = wick_q8_kernels_select(false);
  printf("selected: %s\n", best ? best->isa : "reference");
#if defined(__aarch64__) && defined(__linux__)
  /* AArch64: the dot-product kernels exactly when the CPU has SDOT (e.g.
   * qemu -cpu max), else the plain NEON ones (-cpu cortex-a53, or capped by
   * WICK_MAX_ISA=neon). */
  checks++;
  const char *want = (wick_cpu_features() & WICK_CPU_NEON_DOT) ? "neondot" : "neon";
  if (getenv("WICK_MAX_ISA") == NULL && (best == NULL || strcmp(best->isa, want) != 0))
    fail("AArch64 host but the expected int8 kernels were not selected");
#endif
  /* every table of the inventory this CPU runs */
  for (size_t i = 0; i < wick_q8_kernels_count(); i++) {
    bool runnable;
    const wick_q8_kernels *kern = wick_q8_kernels_at(i, &runnable);
    if (!runnable) {
      printf("%s: skipped (this CPU lacks it)\n", kern->isa);
      continue;
    }
    test_gemm(kern);
    test_conv(kern);
    test_tconv(kern);
    if (kern->conv_amx) test_conv_amx(kern);
    if (kern->dwconv) test_dwconv(kern);
    if (kern->add) test_add(kern);
    if (kern->add8) test_add8(kern);
    if (kern->mul) test_mul(kern);
    if (kern->squared_difference) test_squared_difference(kern);
    if (kern->dots) test_dots(kern);
    test_gemm_raw(kern);
    if (kern->i16) test_bmm_w16(kern);
    if (kern->fc16) test_fc16(kern);
    if (kern->add16 && kern->mul16) test_elementwise16(kern);
    if (kern->add16) test_add16_every_value(kern);
    if (kern->sigmoid16) test_sigmoid16(kern);
    if (kern->requant16) test_requant16(kern);
    if (kern->softmax8) test_softmax(kern->isa, kern->softmax8);
    if (kern->colsum) test_colsum(kern);
    if (kern->requant32) test_requant32(kern);
    if (kern->lut16) test_lut16(kern);
    if (kern->dot16) test_dot16(kern);
  }
  return finish();
}
