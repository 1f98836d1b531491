/*
 * test_kernels.c — every optimized kernel against the reference kernels, on
 * edge shapes, for every ISA the host can run (the others are skipped with a
 * message).
 *
 * Tolerance: the optimized kernels add the same products in a different order
 * (FMA, vector lanes, bias first), so fp32 results differ by rounding only.
 * Each output must satisfy |got - ref| <= 1e-5 * (|bias| + sum |a_i * w_i|)
 * + 1e-30: the sum of absolute terms bounds the reassociation error
 * (about K * 2^-24 relative to it; 1e-5 allows K up to ~170 worst case, and in
 * practice the errors are random-walk and far smaller). The clamp bounds are
 * exact. Every shape runs with no activation, ReLU and ReLU6.
 *
 * Run: build-<name>/tests/unit/test_kernels (ctest runs it too).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/kernels.h"

static int failures, checks;
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static float frand(void) {
  rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
  return (float)((double)(rng_state >> 40) / (double)(1u << 24) * 2.0 - 1.0);
}

static float *rand_buf(size_t n) {
  float *p = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; i++) p[i] = frand();
  return p;
}

static const float act_lo[3] = {-INFINITY, 0.0f, 0.0f};
static const float act_hi[3] = {INFINITY, INFINITY, 6.0f};

/* Compares n outputs; `mag` holds the sum of absolute terms of each. */
static void compare(const char *what, const float *got, const float *ref, const double *mag,
                    size_t n, size_t stride, size_t rows, size_t cols) {
  (void)n;
  checks++;
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++) {
      size_t i = r * stride + c;
      double err = fabs((double)got[i] - (double)ref[i]);
      double tol = 1e-5 * mag[r * cols + c] + 1e-30;
      if (!(err <= tol)) {
        failures++;
        fprintf(stderr, "FAIL %s: [%zu,%zu] got %.9g want %.9g (tol %.3g)\n", what, r, c,
                (double)got[i], (double)ref[i], tol);
        return;
      }
    }
}

/* ------------------------------------------------------------------ GEMM */

static void test_gemm_shape(const char *isa, const wick_f32_gemm_kernel *kern, size_t m, size_t n,
                            size_t k, int act,
                            bool with_bias, size_t a_pad, size_t c_pad) {
  size_t a_stride = k + a_pad, c_stride = n + c_pad;
  float *a = rand_buf(m * a_stride), *w = rand_buf(n * k), *bias = rand_buf(n);
  float *packed = malloc(wick_f32_gemm_packed_size(n, k, kern->nr) * sizeof(float));
  wick_f32_gemm_pack(n, k, kern->nr, w, with_bias ? bias : NULL, packed);
  float *got = malloc(m * c_stride * sizeof(float)), *ref = malloc(m * n * sizeof(float));
  float *dense_a = malloc((m * k > 0 ? m * k : 1) * sizeof(float));
  double *mag = malloc(m * n * sizeof(double));
  for (size_t i = 0; i < m * c_stride; i++) got[i] = 12345.0f; /* padding must survive */
  for (size_t i = 0; i < m; i++) memcpy(dense_a + i * k, a + i * a_stride, k * sizeof(float));
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = with_bias ? fabs(bias[j]) : 0.0;
      for (size_t p = 0; p < k; p++) s += fabs((double)dense_a[i * k + p] * w[j * k + p]);
      mag[i * n + j] = s;
    }
  wick_f32_fully_connected__reference((int64_t)m, (int64_t)n, (int64_t)k, dense_a, w,
                                      with_bias ? bias : NULL, ref, act_lo[act], act_hi[act]);
  wick_f32_gemm(kern, m, n, k, a, a_stride, packed, got, c_stride, act_lo[act], act_hi[act]);
  char what[128];
  snprintf(what, sizeof what, "%s gemm %zux%zu m=%zu n=%zu k=%zu act=%d bias=%d", isa, kern->mr,
           kern->nr, m, n, k, act, with_bias);
  /* compare row by row (got has stride c_stride, ref n) */
  checks++;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      double err = fabs((double)got[i * c_stride + j] - ref[i * n + j]);
      if (!(err <= 1e-5 * mag[i * n + j] + 1e-30)) {
        failures++;
        fprintf(stderr, "FAIL %s: [%zu,%zu] got %.9g want %.9g\n", what, i, j,
                (double)got[i * c_stride + j], (double)ref[i * n + j]);
        goto done;
      }
    }
    for (size_t j = n; j < c_stride; j++)
      if (got[i * c_stride + j] != 12345.0f) {
        failures++;
        fprintf(stderr, "FAIL %s: wrote past column %zu in row %zu\n", what, n, i);
        goto done;
      }
  }
done:
  free(a), free(w), free(bias), free(packed), free(got), free(ref), free(dense_a), free(mag);
}

/* Every GEMM tile of the ISA (main and narrow), every M, N, K in the edge set. */
static void test_gemm(const wick_f32_kernels *all) {
  static const size_t sizes[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100};
  const size_t ns = sizeof sizes / sizeof sizes[0];
  const wick_f32_gemm_kernel *tiles[2] = {&all->gemm, &all->gemm_narrow};
  for (size_t t = 0; t < 2; t++) {
    const wick_f32_gemm_kernel *kern = tiles[t];
    if (kern->nr == 0) continue;
    int before = failures, act = 0;
    for (size_t im = 0; im < ns; im++)
      for (size_t in = 0; in < ns; in++)
        for (size_t ik = 0; ik < ns; ik++) {
          test_gemm_shape(all->isa, kern, sizes[im], sizes[in], sizes[ik], act,
                          (im + in + ik) % 4 != 0, 0, 0);
          act = (act + 1) % 3;
        }
    /* strided A and C, and a block split of N (large K x N exceeds one column block) */
    test_gemm_shape(all->isa, kern, 9, 33, 17, 2, true, 5, 3);
    test_gemm_shape(all->isa, kern, 15, 1000, 1280, 0, true, 0, 0);
    test_gemm_shape(all->isa, kern, 50, 515, 400, 1, true, 3, 1);
    printf("%s gemm %zux%zu: %s\n", all->isa, kern->mr, kern->nr,
           failures == before ? "ok" : "FAILED");
  }
}

/* ------------------------------------------------------------------ CONV_2D (igemm) */

static void conv_magnitudes(const wick_conv_shape *s, const float *in, const float *f,
                            const float *bias, double *mag, bool depthwise) {
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t o = 0; o < s->out_c; o++) {
          double acc = bias ? fabs(bias[o]) : 0.0;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            int32_t iy = y * s->stride_h - s->pad_top + ky * s->dilation_h;
            if (iy < 0 || iy >= s->in_h) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              int32_t ix = x * s->stride_w - s->pad_left + kx * s->dilation_w;
              if (ix < 0 || ix >= s->in_w) continue;
              const float *ip = in + (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c;
              if (depthwise) {
                acc += fabs((double)ip[o] * f[(ky * s->k_w + kx) * s->out_c + o]);
              } else {
                const float *wp = f + (((int64_t)o * s->k_h + ky) * s->k_w + kx) * s->in_c;
                for (int32_t i = 0; i < s->in_c; i++) acc += fabs((double)ip[i] * wp[i]);
              }
            }
          }
          mag[(((int64_t)n * s->out_h + y) * s->out_w + x) * s->out_c + o] = acc;
        }
}

static int32_t out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t pad_total) {
  int32_t eff = (k - 1) * dil + 1;
  int32_t o = (in + pad_total - eff) / stride + 1;
  return o < 0 ? 0 : o;
}

static void make_shape(wick_conv_shape *s, int32_t batch, int32_t h, int32_t w, int32_t cin,
                       int32_t cout, int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t dh,
                       int32_t dw, int32_t pt, int32_t pb, int32_t pl, int32_t pr) {
  memset(s, 0, sizeof *s);
  s->batch = batch, s->in_h = h, s->in_w = w, s->in_c = cin, s->out_c = cout;
  s->k_h = kh, s->k_w = kw, s->stride_h = sh, s->stride_w = sw, s->dilation_h = dh;
  s->dilation_w = dw, s->pad_top = pt, s->pad_left = pl, s->groups = 1, s->multiplier = 1;
  s->out_h = out_size(h, kh, sh, dh, pt + pb);
  s->out_w = out_size(w, kw, sw, dw, pl + pr);
}

static void test_conv_shape(const char *isa, const wick_f32_gemm_kernel *kern,
                            const wick_conv_shape *s, int act) {
  if (s->out_h <= 0 || s->out_w <= 0) return;
  size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  size_t out_n = (size_t)s->batch * s->out_h * s->out_w * s->out_c;
  size_t k = (size_t)s->k_h * s->k_w * s->in_c;
  float *in = rand_buf(in_n), *f = rand_buf((size_t)s->out_c * k), *bias = rand_buf(s->out_c);
  float *packed = malloc(wick_f32_gemm_packed_size(s->out_c, k, kern->nr) * sizeof(float));
  wick_f32_gemm_pack(s->out_c, k, kern->nr, f, bias, packed);
  size_t count;
  if (!wick_f32_conv_indirection_size(s, kern->mr, &count)) abort();
  const float **ind = malloc(count * sizeof(float *));
  float *zero = calloc(s->in_c, sizeof(float));
  wick_f32_conv_indirection_init(s, kern->mr, in, zero, ind);
  float *got = malloc(out_n * sizeof(float)), *ref = malloc(out_n * sizeof(float));
  double *mag = malloc(out_n * sizeof(double));
  wick_f32_conv2d__reference(s, in, f, bias, ref, act_lo[act], act_hi[act]);
  conv_magnitudes(s, in, f, bias, mag, false);
  wick_f32_conv_igemm(kern, s, ind, packed, got, act_lo[act], act_hi[act]);
  char what[200];
  snprintf(what, sizeof what,
           "%s %zux%zu conv n=%d %dx%dx%d->%d k=%dx%d s=%d,%d d=%d,%d pad=%d,%d out=%dx%d act=%d",
           isa, kern->mr, kern->nr, s->batch, s->in_h, s->in_w, s->in_c, s->out_c, s->k_h, s->k_w, s->stride_h,
           s->stride_w, s->dilation_h, s->dilation_w, s->pad_top, s->pad_left, s->out_h, s->out_w,
           act);
  compare(what, got, ref, mag, out_n, out_n, 1, out_n);
  free(in), free(f), free(bias), free(packed), free(ind), free(zero), free(got), free(ref);
  free(mag);
}

static void test_conv_tile(const char *isa, const wick_f32_gemm_kernel *kern) {
  int before = failures, act = 0;
  static const int32_t chans[] = {1, 3, 8, 17, 33};
  static const int32_t couts[] = {1, 7, 16, 33, 70};
  static const int32_t ks[][2] = {{1, 1}, {3, 3}, {1, 3}, {5, 5}, {7, 7}, {2, 2}};
  wick_conv_shape s;
  for (size_t ic = 0; ic < 5; ic++)
    for (size_t oc = 0; oc < 5; oc++)
      for (size_t kk = 0; kk < 6; kk++)
        for (int32_t stride = 1; stride <= 3; stride++)
          for (int32_t pad = 0; pad <= 2; pad++) {
            int32_t kh = ks[kk][0], kw = ks[kk][1];
            int32_t dil = (ic + oc + kk) % 3 == 0 ? 2 : 1;
            make_shape(&s, (ic + oc) % 2 + 1, 5 + (int32_t)ic, 9 - (int32_t)oc, chans[ic],
                       couts[oc], kh, kw, stride, stride == 3 ? 1 : stride, dil, 1, pad,
                       pad == 2 ? 1 : pad, pad == 1 ? 0 : pad, pad);
            test_conv_shape(isa, kern, &s, act);
            act = (act + 1) % 3;
          }
  /* MobileNetV2 / ResNet-like shapes */
  make_shape(&s, 1, 32, 32, 3, 32, 3, 3, 2, 2, 1, 1, 0, 1, 0, 1);
  test_conv_shape(isa, kern, &s, 2);
  make_shape(&s, 1, 14, 14, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
  test_conv_shape(isa, kern, &s, 1);
  make_shape(&s, 1, 1, 1, 5, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0);
  test_conv_shape(isa, kern, &s, 0);
  printf("%s conv (igemm %zux%zu): %s\n", isa, kern->mr, kern->nr,
         failures == before ? "ok" : "FAILED");
}

static void test_conv(const wick_f32_kernels *all) {
  test_conv_tile(all->isa, &all->gemm);
  if (all->gemm_narrow.nr != 0) test_conv_tile(all->isa, &all->gemm_narrow);
}

/* ------------------------------------------------------------------ DEPTHWISE_CONV_2D 3x3 */

static void test_dw_shape(const wick_f32_kernels *kern, const wick_conv_shape *s, int act,
                          bool with_bias) {
  if (s->out_h <= 0 || s->out_w <= 0) return;
  size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  size_t out_n = (size_t)s->batch * s->out_h * s->out_w * s->out_c;
  float *in = rand_buf(in_n), *f = rand_buf(9 * (size_t)s->out_c), *bias = rand_buf(s->out_c);
  size_t blocks = ((size_t)s->out_c + kern->dw_cr - 1) / kern->dw_cr;
  float *packed = malloc(blocks * 10 * kern->dw_cr * sizeof(float));
  wick_f32_dwconv3x3_pack(s->out_c, kern->dw_cr, f, with_bias ? bias : NULL, packed);
  /* one guard element each side catches writes outside the output */
  float *got = malloc((out_n + 2) * sizeof(float)), *ref = malloc(out_n * sizeof(float));
  double *mag = malloc(out_n * sizeof(double));
  got[0] = got[out_n + 1] = 12345.0f;
  wick_f32_depthwise_conv2d__reference(s, in, f, with_bias ? bias : NULL, ref, act_lo[act],
                                       act_hi[act]);
  conv_magnitudes(s, in, f, with_bias ? bias : NULL, mag, true);
  kern->dwconv3x3(s, in, packed, got + 1, act_lo[act], act_hi[act]);
  char what[200];
  snprintf(what, sizeof what, "%s dwconv3x3 n=%d %dx%dx%d s=%d,%d pad=%d,%d out=%dx%d act=%d",
           kern->isa, s->batch, s->in_h, s->in_w, s->in_c, s->stride_h, s->stride_w, s->pad_top,
           s->pad_left, s->out_h, s->out_w, act);
  compare(what, got + 1, ref, mag, out_n, out_n, 1, out_n);
  checks++;
  if (got[0] != 12345.0f || got[out_n + 1] != 12345.0f) {
    failures++;
    fprintf(stderr, "FAIL %s: wrote outside the output\n", what);
  }
  free(in), free(f), free(bias), free(packed), free(got), free(ref), free(mag);
}

static void test_dwconv(const wick_f32_kernels *kern) {
  int before = failures, act = 0;
  static const int32_t chans[] = {1, 3, 8, 15, 16, 17, 31, 33, 64, 100};
  static const int32_t sides[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 20};
  wick_conv_shape s;
  for (size_t ic = 0; ic < 10; ic++)
    for (size_t ih = 0; ih < 10; ih++)
      for (int32_t sh = 1; sh <= 2; sh++)
        for (int32_t sw = 1; sw <= 2; sw++)
          for (int32_t pad = 0; pad < 4; pad++) {
            /* pad 0: VALID; 1: SAME-like (1,1); 2: TF SAME at stride 2 (0 before, 1 after);
             * 3: lopsided (2 before, 0 after) */
            static const int32_t before_pad[] = {0, 1, 0, 2}, after_pad[] = {0, 1, 1, 0};
            int32_t h = sides[ih], w = sides[(ih + ic + (size_t)pad) % 10];
            make_shape(&s, ic % 3 == 0 ? 2 : 1, h, w, chans[ic], chans[ic], 3, 3, sh, sw, 1, 1,
                       before_pad[pad], after_pad[pad], before_pad[(pad + (size_t)sw) % 4],
                       after_pad[(pad + (size_t)sw) % 4]);
            s.groups = s.in_c;
            test_dw_shape(kern, &s, act, (ic + ih) % 5 != 0);
            act = (act + 1) % 3;
          }
  /* wide rows (>= 24 interior pixels: the pixel-block-outer path) with channel tails */
  static const int32_t wide_c[] = {5, 17, 33, 40};
  for (size_t ic = 0; ic < 4; ic++)
    for (int32_t st = 1; st <= 2; st++)
      for (int32_t pad = 0; pad <= 1; pad++) {
        make_shape(&s, 1, 4, 24 * st + 7 + (int32_t)ic, wide_c[ic], wide_c[ic], 3, 3, st, st, 1,
                   1, pad, pad, pad, pad);
        s.groups = s.in_c;
        test_dw_shape(kern, &s, act, true);
        act = (act + 1) % 3;
      }
  /* MobileNetV2 shapes */
  make_shape(&s, 1, 112, 112, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
  s.groups = 32;
  test_dw_shape(kern, &s, 2, true);
  make_shape(&s, 1, 113, 113, 96, 96, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0);
  s.groups = 96;
  test_dw_shape(kern, &s, 2, true);
  printf("%s dwconv3x3: %s\n", kern->isa, failures == before ? "ok" : "FAILED");
}

/* ------------------------------------------------------------------ main */

int main(void) {
  char desc[256];
  wick_cpu_describe(wick_cpu_detect(), desc, sizeof desc);
  printf("host features: %s\n", desc[0] ? desc : "(none)");
  uint32_t f = wick_cpu_detect();
  checks++;
  if ((f & WICK_CPU_AVX512VL) && !(f & WICK_CPU_AVX512F)) {
    failures++;
    fprintf(stderr, "FAIL: AVX512VL without AVX512F\n");
  }
  if (wick_f32_kernels_select(true) != NULL) {
    failures++;
    fprintf(stderr, "FAIL: forcing the reference kernels still selected optimized ones\n");
  }
  const wick_f32_kernels *best = wick_f32_kernels_select(false);
  printf("selected: %s\n", best ? best->isa : "reference");
#if defined(__aarch64__) && defined(__linux__)
  /* Every AArch64 Linux CPU has NEON: detection must find it unless capped. */
  checks++;
  if (getenv("WICK_MAX_ISA") == NULL && (best == NULL || strcmp(best->isa, "neon") != 0)) {
    failures++;
    fprintf(stderr, "FAIL: AArch64 host but the NEON kernels were not selected\n");
  }
#endif
  static const char *isas[] = {"avx512", "avx2", "neon"};
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
    const wick_f32_kernels *kern = wick_f32_kernels_for_isa(isas[i]);
    if (kern == NULL) {
      printf("%s: skipped (this CPU or build lacks it)\n", isas[i]);
      continue;
    }
    test_gemm(kern);
    test_conv(kern);
    test_dwconv(kern);
  }
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
