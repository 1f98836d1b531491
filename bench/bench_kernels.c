/*
 * bench_kernels.c — GFLOP/s of the optimized fp32 kernels on the GEMM,
 * convolution and depthwise shapes of MobileNetV2, EfficientNet-B0 (5x5) and
 * ResNet-50, next to the measured FMA peak of each ISA on this core, and
 * G elements/s of the elementwise kernels; then GOP/s of the int8 kernels
 * (src/kernels/q8.h) on the same shapes next to the measured VPDPBUSD peak
 * (OPs = 2 * MACs, as for floats). Built by CMake (target bench_kernels),
 * never run by ctest: timing is not a test.
 *
 *   build-<name>/bench_kernels [--isa avx512|avx2|avx512vnni] [--quick]
 *
 * Each line is the median of 7 repetitions, each repetition running the
 * kernel for at least 20 ms of thread CPU time (after one untimed warm-up).
 * FLOPs = 2 * MACs.
 * Machines are shared and noisy: compare medians from the same run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpu.h"
#include "kernels/kernels.h"
#include "kernels/q8.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Thread CPU time, not wall time: on a shared machine, time spent preempted
 * by other processes is not counted (a busy sibling hyperthread still is). */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int quick;

/* Median seconds per call of fn(arg). */
static double time_median(void (*fn)(void *), void *arg) {
  enum { REPS = 7 };
  double t[REPS];
  fn(arg);
  for (int r = 0; r < REPS; r++) {
    double t0 = now_s(), t1;
    long calls = 0;
    do {
      fn(arg);
      calls++;
      t1 = now_s();
    } while (t1 - t0 < (quick ? 0.003 : 0.02));
    t[r] = (t1 - t0) / (double)calls;
  }
  qsort(t, REPS, sizeof t[0], cmp_double);
  return t[REPS / 2];
}

/* ---------------------------------------------------------------- peak FMA throughput */

#if defined(__x86_64__)
/* 12 independent accumulator chains (FMA latency 4 x 2 pipes needs >= 8),
 * named so they stay in registers; the empty asm keeps the loop from being
 * folded. */
#define PEAK_BODY(T, FMA, C)                                                                   \
  T x0 = a, x1 = a, x2 = a, x3 = a, x4 = a, x5 = a, x6 = a, x7 = a, x8 = a, x9 = a, x10 = a,   \
    x11 = a;                                                                                   \
  for (long n = 0; n < iters; n++) {                                                           \
    x0 = FMA(x0, a, b), x1 = FMA(x1, a, b), x2 = FMA(x2, a, b), x3 = FMA(x3, a, b);            \
    x4 = FMA(x4, a, b), x5 = FMA(x5, a, b), x6 = FMA(x6, a, b), x7 = FMA(x7, a, b);            \
    x8 = FMA(x8, a, b), x9 = FMA(x9, a, b), x10 = FMA(x10, a, b), x11 = FMA(x11, a, b);        \
    __asm__ volatile("" : "+" C(x0), "+" C(x1), "+" C(x2), "+" C(x3), "+" C(x4), "+" C(x5));   \
    __asm__ volatile("" : "+" C(x6), "+" C(x7), "+" C(x8), "+" C(x9), "+" C(x10), "+" C(x11)); \
  }

__attribute__((target("avx512f,fma"), noinline)) static float peak_avx512(long iters) {
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  PEAK_BODY(__m512, _mm512_fmadd_ps, "v")
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(x0, x1), _mm512_add_ps(x2, x3)),
                           _mm512_add_ps(_mm512_add_ps(x4, x5), _mm512_add_ps(x6, x7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(x8, x9), _mm512_add_ps(x10, x11)));
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"), noinline)) static float peak_avx2(long iters) {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  PEAK_BODY(__m256, _mm256_fmadd_ps, "x")
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
                           _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}
/* 12 independent VPDPBUSD chains (64 u8 x s8 products each). */
__attribute__((target("avx512f,avx512vnni"), noinline)) static int32_t peak_vnni(long iters) {
  const __m512i a = _mm512_set1_epi32(0x01010101), b = _mm512_set1_epi32(0x01fe01fe);
  PEAK_BODY(__m512i, _mm512_dpbusd_epi32, "v")
  __m512i s =
      _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(x0, x1), _mm512_add_epi32(x2, x3)),
                       _mm512_add_epi32(_mm512_add_epi32(x4, x5), _mm512_add_epi32(x6, x7)));
  s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(x8, x9), _mm512_add_epi32(x10, x11)));
  return _mm512_reduce_add_epi32(s);
}

#endif

typedef struct peak_arg {
  bool avx512, vnni;
  float sink;
} peak_arg;

static void run_peak(void *p) {
  peak_arg *a = p;
#if defined(__x86_64__)
  if (a->vnni)
    a->sink += (float)peak_vnni(100000);
  else
    a->sink += a->avx512 ? peak_avx512(100000) : peak_avx2(100000);
#else
  (void)a;
#endif
}

static double measure_peak(const char *isa) {
  peak_arg a = {strcmp(isa, "avx512") == 0, strcmp(isa, "avx512vnni") == 0, 0.0f};
  double t = time_median(run_peak, &a);
  double flops = 100000.0 * 12 * (a.vnni ? 64 : a.avx512 ? 16 : 8) * 2.0;
  if (a.sink == 12345.0f) printf(" ");
  return flops / t * 1e-9;
}

/* ---------------------------------------------------------------- GEMM / conv / depthwise */

static float *rand_buf(size_t n) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64); /* like the arena */
  for (size_t i = 0; i < n; i++) p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return p;
}

typedef struct conv_arg {
  const wick_f32_kernels *kern;
  const wick_f32_gemm_kernel *gk;
  wick_conv_shape s;
  bool gemm, dw;
  float *in, *packed, *out;
  const float **ind;
} conv_arg;

static void run_conv(void *p) {
  conv_arg *a = p;
  const wick_conv_shape *s = &a->s;
  if (a->dw) {
    const wick_f32_dwconv_args args = {s, a->in, a->packed, a->out, 0.0f, 6.0f, NULL};
    wick_f32_dwconv_fn fn = s->k_h == 3   ? a->kern->dwconv3x3
                            : s->k_h == 5 ? a->kern->dwconv5x5
                                          : a->kern->dwconv;
    fn(&args, 0, (size_t)s->out_h);
  } else if (a->gemm)
    wick_f32_gemm(a->gk, (size_t)s->batch * s->in_h * s->in_w, s->out_c, s->in_c, a->in, s->in_c,
                  a->packed, a->out, s->out_c, 0.0f, 6.0f);
  else
    wick_f32_conv_igemm(a->gk, s, a->ind, a->packed, a->out, 0.0f, 6.0f);
}

/* A conv / depthwise layer: input hxwxcin, cout, k x k, stride, SAME padding. */
static void bench_layer(const wick_f32_kernels *kern, double peak, const char *model, int32_t h,
                        int32_t cin, int32_t cout, int32_t k, int32_t stride, bool dw) {
  conv_arg a;
  memset(&a, 0, sizeof a);
  a.kern = kern;
  wick_conv_shape *s = &a.s;
  s->batch = 1, s->in_h = s->in_w = h, s->in_c = cin, s->out_c = cout;
  s->k_h = s->k_w = k, s->stride_h = s->stride_w = stride, s->dilation_h = s->dilation_w = 1;
  s->out_h = s->out_w = (h + stride - 1) / stride;
  int32_t pad_total = (s->out_h - 1) * stride + k - h;
  if (pad_total < 0) pad_total = 0;
  s->pad_top = s->pad_left = pad_total / 2;
  s->groups = dw ? cin : 1, s->multiplier = 1;
  size_t kk = (size_t)k * k * (dw ? 1 : cin);
  a.in = rand_buf((size_t)h * h * cin);
  a.out = rand_buf((size_t)s->out_h * s->out_w * cout);
  float *w = rand_buf((size_t)cout * kk), *bias = rand_buf(cout);
  float *zero = NULL;
  a.dw = dw;
  a.gemm = !dw && k == 1 && stride == 1;
  if (dw) {
    size_t blocks = ((size_t)cout + kern->dw_cr - 1) / kern->dw_cr;
    a.packed = rand_buf(blocks * ((size_t)k * k + 1) * kern->dw_cr);
    wick_f32_dwconv_pack(cout, kern->dw_cr, (size_t)k * k, w, bias, a.packed);
  } else {
    a.gk = wick_f32_gemm_kernel_for(kern, (size_t)cout);
    a.packed = rand_buf(wick_f32_gemm_packed_size(cout, kk, a.gk->nr));
    wick_f32_gemm_pack(cout, kk, a.gk->nr, w, bias, a.packed);
    if (!a.gemm) {
      size_t count;
      wick_f32_conv_indirection_size(s, a.gk->mr, &count);
      a.ind = malloc(count * sizeof(float *));
      zero = calloc(cin, sizeof(float));
      wick_f32_conv_indirection_init(s, a.gk->mr, a.in, zero, a.ind);
    }
  }
  double t = time_median(run_conv, &a);
  double flops = 2.0 * s->out_h * s->out_w * cout * (double)kk;
  double gf = flops / t * 1e-9;
  char shape[64];
  snprintf(shape, sizeof shape, "%dx%dx%d k%d s%d -> %d", h, h, cin, k, stride, cout);
  const char *kind = dw       ? (k == 3   ? "dwconv3x3"
                                 : k == 5 ? "dwconv5x5"
                                          : "dwconv")
                     : a.gemm ? "gemm"
                              : "igemm";
  if (!dw && a.gemm)
    printf("%-8s %-10s %-28s M=%-6d K=%-5zu N=%-5d %8.1f us %7.1f GFLOP/s %5.1f%%\n", model, kind,
           shape, s->out_h * s->out_w, kk, cout, t * 1e6, gf, 100.0 * gf / peak);
  else
    printf("%-8s %-10s %-28s %-26s %8.1f us %7.1f GFLOP/s %5.1f%%\n", model, kind, shape, "",
           t * 1e6, gf, 100.0 * gf / peak);
  free(a.in), free(a.out), free(w), free(bias), free(a.packed), free(a.ind), free(zero);
}

static void bench_fc(const wick_f32_kernels *kern, double peak, const char *model, int32_t m,
                     int32_t k, int32_t n) {
  conv_arg a;
  memset(&a, 0, sizeof a);
  a.kern = kern;
  a.gemm = true;
  wick_conv_shape *s = &a.s;
  s->batch = 1, s->in_h = m, s->in_w = 1, s->in_c = k, s->out_c = n;
  a.in = rand_buf((size_t)m * k);
  a.out = rand_buf((size_t)m * n);
  float *w = rand_buf((size_t)n * k);
  a.gk = wick_f32_gemm_kernel_for(kern, (size_t)n);
  a.packed = rand_buf(wick_f32_gemm_packed_size(n, k, a.gk->nr));
  wick_f32_gemm_pack(n, k, a.gk->nr, w, NULL, a.packed);
  double t = time_median(run_conv, &a);
  double gf = 2.0 * m * n * (double)k / t * 1e-9;
  printf("%-8s %-10s %-28s M=%-6d K=%-5d N=%-5d %8.1f us %7.1f GFLOP/s %5.1f%%\n", model, "fc", "",
         m, k, n, t * 1e6, gf, 100.0 * gf / peak);
  free(a.in), free(a.out), free(w), free(a.packed);
}

/* ---------------------------------------------------------------- int8 */

typedef struct q8_arg {
  const wick_q8_kernels *kern;
  wick_conv_shape s;
  bool gemm, dw, fc;
  int8_t *in, *out, *zero;
  void *packed;
  const int8_t **ind;
  wick_q8_output o;
} q8_arg;

static void run_q8(void *p) {
  q8_arg *a = p;
  const wick_conv_shape *s = &a->s;
  if (a->dw)
    a->kern->dwconv(s, 3, a->in, a->packed, a->out, &a->o, 0, s->out_h);
  else if (a->gemm) {
    /* as the op runs it: the input flipped to u8 once, then the u8 kernels */
    const size_t m = (size_t)s->batch * s->in_h * s->in_w;
    wick_q8_prepare_input(a->kern, m * (size_t)s->in_c, a->in, 3, a->zero);
    wick_q8_gemm(a->kern, 0, m, s->out_c, s->in_c, a->zero,
                 (size_t)s->in_c * wick_q8_input_bytes(a->kern), true, a->packed, a->out, s->out_c,
                 &a->o);
  } else
    wick_q8_conv_igemm(a->kern, s, a->ind, true, a->packed, a->out, &a->o, 0,
                       wick_q8_conv_tiles(s, a->kern->mr));
}

static int8_t *rand_i8(size_t n) {
  int8_t *p = aligned_alloc(64, (n + 63) / 64 * 64);
  for (size_t i = 0; i < n; i++) p[i] = (int8_t)((i * 2654435761u) >> 13);
  return p;
}

/* An int8 conv / depthwise layer (SAME padding) or, with fc, an m x k x n FC. */
static void bench_q8(const wick_q8_kernels *kern, double peak, const char *model, int32_t h,
                     int32_t cin, int32_t cout, int32_t k, int32_t stride, bool dw, bool fc) {
  if (dw && kern->dwconv == NULL) return; /* the reference kernel runs there */
  q8_arg a;
  memset(&a, 0, sizeof a);
  a.kern = kern;
  wick_conv_shape *s = &a.s;
  s->batch = 1, s->in_h = h, s->in_w = fc ? 1 : h, s->in_c = cin, s->out_c = cout;
  s->k_h = s->k_w = k, s->stride_h = s->stride_w = stride, s->dilation_h = s->dilation_w = 1;
  s->out_h = (h + stride - 1) / stride, s->out_w = fc ? 1 : s->out_h;
  int32_t pad_total = (s->out_h - 1) * stride + k - h;
  if (pad_total < 0) pad_total = 0;
  s->pad_top = s->pad_left = pad_total / 2;
  s->groups = dw ? cin : 1, s->multiplier = 1;
  const size_t taps = (size_t)k * k, kk = taps * (dw ? 1 : cin);
  a.in = rand_i8((size_t)s->in_h * s->in_w * cin);
  a.out = rand_i8((size_t)s->out_h * s->out_w * cout);
  int8_t *w = rand_i8((size_t)cout * kk);
  int32_t *mult = malloc((size_t)cout * sizeof(int32_t)),
          *shift = malloc((size_t)cout * sizeof(int32_t));
  double *scale = calloc((size_t)cout + 64, sizeof(double));
  for (int32_t c = 0; c < cout; c++) mult[c] = 1300000000 + c, shift[c] = -8, scale[c] = 1e-3;
  int64_t *rq64 = malloc(wick_q8_rq64_words((size_t)cout) * sizeof(int64_t));
  wick_q8_rq64_prepare((size_t)cout, shift, rq64); /* as the conv ops prepare it */
  a.o = (wick_q8_output){3, -128, 127, fc ? scale : NULL, dw ? NULL : rq64, false, false};
  a.dw = dw;
  a.gemm = !dw && k == 1 && stride == 1;
  size_t bytes;
  if (dw) {
    wick_q8_dwconv_packed_size(cout, taps, kern->dw_cr, &bytes);
    a.packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
    wick_q8_dwconv_pack(cout, taps, kern->dw_cr, w, NULL, 3, mult, shift, a.packed);
  } else {
    wick_q8_gemm_packed_size(kern, cout, taps, cin, &bytes);
    a.packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
    wick_q8_gemm_pack(kern, cout, taps, cin, w, NULL, 3, fc ? NULL : mult, fc ? NULL : shift,
                      a.packed);
    if (a.gemm) {
      a.zero = rand_i8((size_t)s->in_h * s->in_w * cin * 2); /* the prepared input */
    } else {
      size_t count;
      wick_q8_conv_indirection_size(s, kern->mr, &count);
      a.ind = malloc(count * sizeof(int8_t *));
      /* a.in stands for the prepared input (its values do not matter; the u8
       * kernels read up to WICK_Q8_ROW_PAD bytes past its last row) */
      free(a.in);
      a.in = rand_i8((size_t)s->in_h * s->in_w * cin * wick_q8_input_bytes(kern) + WICK_Q8_ROW_PAD);
      a.zero = calloc(wick_q8_zero_row_bytes(kern, (size_t)cin), 1);
      wick_q8_conv_indirection_init(s, kern->mr, a.in, wick_q8_input_bytes(kern), a.zero, a.ind);
    }
  }
  double t = time_median(run_q8, &a);
  double ops = 2.0 * s->out_h * s->out_w * cout * (double)kk, g = ops / t * 1e-9;
  char shape[64];
  snprintf(shape, sizeof shape, "%dx%dx%d k%d s%d -> %d", h, s->in_w, cin, k, stride, cout);
  const char *kind = fc ? "fc" : dw ? "dwconv" : a.gemm ? "gemm" : "igemm";
  printf("%-8s %-10s %-28s %8.1f us %7.1f GOP/s %5.1f%%\n", model, kind, shape, t * 1e6, g,
         100.0 * g / peak);
  free(a.in), free(a.out), free(w), free(a.packed), free(a.ind), free(a.zero), free(mult);
  free(shift), free(scale), free(rq64);
}

static void bench_q8_all(const char *isa) {
  const wick_q8_kernels *kern = wick_q8_kernels_for_isa(isa);
  if (kern == NULL) {
    printf("\n%s (int8): not available on this CPU\n", isa);
    return;
  }
  /* AVX2 (VPMADDWD, 2 MACs per int32 lane) against its fp32 FMA peak: the
   * same lane count and port pressure, so comparable percentages. */
  const bool vnni = strcmp(isa, "avx512vnni") == 0;
  const double peak = measure_peak(vnni ? "avx512vnni" : "avx2");
  printf("\n%s int8 (gemm %zux%zu, dw %zu channels): measured %s peak %.1f GOP/s\n", kern->isa,
         kern->mr, kern->nr, kern->dw_cr, vnni ? "VPDPBUSD" : "fp32 FMA", peak);
  bench_q8(kern, peak, "mnv2", 224, 3, 32, 3, 2, false, false);
  bench_q8(kern, peak, "mnv2", 112, 32, 16, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 112, 16, 96, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 56, 24, 144, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 56, 144, 24, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 28, 192, 32, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 14, 64, 384, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 14, 576, 96, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 7, 960, 160, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 7, 320, 1280, 1, 1, false, false);
  bench_q8(kern, peak, "mnv2", 112, 32, 32, 3, 1, true, false);
  bench_q8(kern, peak, "mnv2", 112, 96, 96, 3, 2, true, false);
  bench_q8(kern, peak, "mnv2", 56, 144, 144, 3, 1, true, false);
  bench_q8(kern, peak, "mnv2", 28, 192, 192, 3, 1, true, false);
  bench_q8(kern, peak, "mnv2", 14, 576, 576, 3, 1, true, false);
  bench_q8(kern, peak, "mnv2", 7, 960, 960, 3, 1, true, false);
  bench_q8(kern, peak, "mnv2", 1, 1280, 1000, 1, 1, false, true);
  /* all-MiniLM-L6-v2 (4 x 32 tokens): attention projections, the MLP's two FCs */
  bench_q8(kern, peak, "minilm", 128, 384, 384, 1, 1, false, true);
  bench_q8(kern, peak, "minilm", 128, 384, 1536, 1, 1, false, true);
  bench_q8(kern, peak, "minilm", 128, 1536, 384, 1, 1, false, true);
  if (quick) return;
  bench_q8(kern, peak, "resnet50", 224, 3, 64, 7, 2, false, false);
  bench_q8(kern, peak, "resnet50", 56, 64, 64, 1, 1, false, false);
  bench_q8(kern, peak, "resnet50", 56, 64, 64, 3, 1, false, false);
  bench_q8(kern, peak, "resnet50", 56, 64, 256, 1, 1, false, false);
  bench_q8(kern, peak, "resnet50", 28, 128, 128, 3, 1, false, false);
  bench_q8(kern, peak, "resnet50", 14, 256, 256, 3, 1, false, false);
  bench_q8(kern, peak, "resnet50", 14, 1024, 256, 1, 1, false, false);
  bench_q8(kern, peak, "resnet50", 7, 512, 512, 3, 1, false, false);
  bench_q8(kern, peak, "resnet50", 7, 2048, 512, 1, 1, false, false);
  bench_q8(kern, peak, "resnet50", 1, 2048, 1000, 1, 1, false, true);
}

/* ---------------------------------------------------------------- elementwise */

typedef struct elem_arg {
  const wick_f32_kernels *kern;
  int what; /* 0: unary, 1: binary per-channel, 2: mean over [mid, inner], 3: softmax */
  int kind;
  size_t n, inner;
  float *in, *in2, *out;
  wick_f32_binary_plan plan;
} elem_arg;

static void run_elem(void *p) {
  elem_arg *a = p;
  switch (a->what) {
    case 0: a->kern->unary[a->kind](a->n, a->in, a->out); break;
    case 1:
      wick_f32_binary_run(a->kern->binary[a->kind], &a->plan, a->in, a->in2, a->out, -INFINITY,
                          INFINITY);
      break;
    case 2: a->kern->sum_mid(a->n / a->inner, a->inner, 1.0f, a->in, a->out, 0, 1); break;
    default: a->kern->softmax(a->inner, 1.0f, a->in, a->out, 0, a->n / a->inner); break;
  }
}

static void bench_elem(const wick_f32_kernels *kern, const char *model, const char *name, int what,
                       int kind, size_t n, size_t inner) {
  if (kern->unary[0] == NULL) return; /* this ISA has no elementwise kernels */
  elem_arg a;
  memset(&a, 0, sizeof a);
  a.kern = kern, a.what = what, a.kind = kind, a.n = n, a.inner = inner;
  a.in = rand_buf(n), a.in2 = rand_buf(inner), a.out = rand_buf(n);
  if (what == 1) {
    wick_broadcast bc;
    memset(&bc, 0, sizeof bc);
    bc.rank = 2, bc.dims[0] = (int32_t)(n / inner), bc.dims[1] = (int32_t)inner;
    bc.a_strides[0] = (int64_t)inner, bc.a_strides[1] = 1, bc.b_strides[1] = 1;
    wick_f32_binary_plan_make(&bc, &a.plan);
  }
  double t = time_median(run_elem, &a);
  char shape[64];
  snprintf(shape, sizeof shape, "%zu x %zu", n / inner, inner);
  printf("%-8s %-10s %-28s %-26s %8.1f us %7.2f Gelem/s\n", model, name, shape, "", t * 1e6,
         (double)n / t * 1e-9);
  free(a.in), free(a.in2), free(a.out);
}

int main(int argc, char **argv) {
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else {
      fprintf(stderr, "usage: bench_kernels [--isa avx512|avx2|avx512vnni] [--quick]\n");
      return 2;
    }
  }
  char desc[256];
  wick_cpu_describe(wick_cpu_features(), desc, sizeof desc);
  printf("cpu features: %s\n", desc);
  for (size_t i = 0; i < wick_f32_kernels_count(); i++) { /* the inventory, best first */
    bool runnable;
    const wick_f32_kernels *kern = wick_f32_kernels_at(i, &runnable);
    if (only && strcmp(only, kern->isa) != 0) continue;
    if (!runnable) {
      printf("\n%s: not available on this CPU\n", kern->isa);
      continue;
    }
    double peak = measure_peak(kern->isa);
    char narrow[32] = "none";
    if (kern->gemm_narrow.nr)
      snprintf(narrow, sizeof narrow, "%zux%zu", kern->gemm_narrow.mr, kern->gemm_narrow.nr);
    printf("\n%s (gemm %zux%zu, narrow %s, dw %zu channels): measured FMA peak %.1f GFLOP/s\n",
           kern->isa, kern->gemm.mr, kern->gemm.nr, narrow, kern->dw_cr, peak);
    /* MobileNetV2 (224x224): first conv, 1x1 expand/project, depthwise, classifier */
    bench_layer(kern, peak, "mnv2", 224, 3, 32, 3, 2, false);
    bench_layer(kern, peak, "mnv2", 112, 32, 16, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 112, 16, 96, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 56, 24, 144, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 28, 192, 32, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 14, 64, 384, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 14, 576, 96, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 7, 960, 160, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 7, 320, 1280, 1, 1, false);
    bench_layer(kern, peak, "mnv2", 112, 32, 32, 3, 1, true);
    bench_layer(kern, peak, "mnv2", 112, 96, 96, 3, 2, true);
    bench_layer(kern, peak, "mnv2", 56, 144, 144, 3, 1, true);
    bench_layer(kern, peak, "mnv2", 28, 192, 192, 3, 1, true);
    bench_layer(kern, peak, "mnv2", 14, 576, 576, 3, 1, true);
    bench_layer(kern, peak, "mnv2", 7, 960, 960, 3, 1, true);
    bench_fc(kern, peak, "mnv2", 1, 1280, 1000);
    /* EfficientNet-B0: 5x5 depthwise (strides 1 and 2), swish, squeeze-excite, pooling */
    if (kern->dwconv5x5) {
      bench_layer(kern, peak, "effb0", 56, 144, 144, 5, 2, true);
      bench_layer(kern, peak, "effb0", 28, 240, 240, 5, 1, true);
      bench_layer(kern, peak, "effb0", 14, 672, 672, 5, 1, true);
      bench_layer(kern, peak, "effb0", 14, 672, 672, 5, 2, true);
      bench_layer(kern, peak, "effb0", 7, 1152, 1152, 5, 1, true);
    }
    bench_elem(kern, "effb0", "silu", 0, WICK_F32_SILU, 112 * 112 * 96, 96);
    bench_elem(kern, "effb0", "logistic", 0, WICK_F32_LOGISTIC, 112 * 112 * 96, 96);
    bench_elem(kern, "effb0", "mul/chan", 1, WICK_F32_MUL, 56 * 56 * 144, 144);
    bench_elem(kern, "effb0", "mean", 2, 0, 56 * 56 * 144, 144);
    bench_elem(kern, "vit", "gelu", 0, WICK_F32_GELU, 197 * 3072, 3072);
    bench_elem(kern, "bert", "gelu_tanh", 0, WICK_F32_GELU_TANH, 128 * 3072, 3072);
    bench_elem(kern, "bert", "softmax", 3, 0, 12 * 128 * 128, 128);
    bench_elem(kern, "mnv3", "hard_swish", 0, WICK_F32_HARD_SWISH, 112 * 112 * 16, 16);
    if (quick) continue;
    /* ResNet-50: stem, bottleneck 1x1s and 3x3s of each stage, classifier */
    bench_layer(kern, peak, "resnet50", 224, 3, 64, 7, 2, false);
    bench_layer(kern, peak, "resnet50", 56, 64, 64, 1, 1, false);
    bench_layer(kern, peak, "resnet50", 56, 64, 64, 3, 1, false);
    bench_layer(kern, peak, "resnet50", 56, 64, 256, 1, 1, false);
    bench_layer(kern, peak, "resnet50", 28, 128, 128, 3, 1, false);
    bench_layer(kern, peak, "resnet50", 28, 512, 128, 1, 1, false);
    bench_layer(kern, peak, "resnet50", 14, 256, 256, 3, 1, false);
    bench_layer(kern, peak, "resnet50", 14, 1024, 256, 1, 1, false);
    bench_layer(kern, peak, "resnet50", 7, 512, 512, 3, 1, false);
    bench_layer(kern, peak, "resnet50", 7, 2048, 512, 1, 1, false);
    bench_layer(kern, peak, "resnet50", 7, 512, 2048, 1, 1, false);
    bench_fc(kern, peak, "resnet50", 1, 2048, 1000);
  }
  for (size_t i = 0; i < wick_q8_kernels_count(); i++) { /* the int8 inventory */
    const char *isa = wick_q8_kernels_at(i, NULL)->isa;
    if (!only || strcmp(only, isa) == 0) bench_q8_all(isa);
  }
  return 0;
}
