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
 * Run: build-<name>/tests/unit/test_kernels (ctest runs it too). Scaffolding
 * (counters, random stream, conv shapes and sweep) shared with
 * test_q8_kernels.c: kernel_test.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/kernels.h"

#define KERNEL_TEST_SEED 0x9e3779b97f4a7c15u
#include "kernel_test.h"

static float frand(void) {
  return (float)((double)(rng_step() >> 40) / (double)(1u << 24) * 2.0 - 1.0);
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
        fail("%s: [%zu,%zu] got %.9g want %.9g (tol %.3g)", what, r, c, (double)got[i],
             (double)ref[i], tol);
        return;
      }
    }
}

/* ------------------------------------------------------------------ GEMM */

static void test_gemm_shape(const char *isa, const wick_f32_gemm_kernel *kern, size_t m, size_t n,
                            size_t k, int act, bool with_bias, size_t a_pad, size_t c_pad) {
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
        fail("%s: [%zu,%zu] got %.9g want %.9g", what, i, j, (double)got[i * c_stride + j],
             (double)ref[i * n + j]);
        goto done;
      }
    }
    for (size_t j = n; j < c_stride; j++)
      if (got[i * c_stride + j] != 12345.0f) {
        fail("%s: wrote past column %zu in row %zu", what, n, i);
        goto done;
      }
  }
done:
  free(a), free(w), free(bias), free(packed), free(got), free(ref), free(dense_a), free(mag);
}

/* Every GEMM tile of the ISA (main and narrow), every M, N, K in the edge set. */
/* The packed layout itself, against its definition in kernels.h: per panel
 * of nr columns one bias row, then row p holds w[j0 + j][p]; columns past n
 * are zero. Covers the block transpose (full panels, k % 4 == 0 or not) and
 * the scalar rows and tail panel. */
static void test_gemm_pack_layout(void) {
  static const size_t nrs[] = {8, 16, 32};
  static const size_t ns[] = {1, 7, 16, 33, 64};
  static const size_t ks[] = {1, 3, 4, 5, 8, 19};
  for (size_t a = 0; a < sizeof nrs / sizeof *nrs; a++)
    for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
      for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
        const size_t nr = nrs[a], n = ns[b], k = ks[c];
        float *w = rand_buf(n * k), *bias = rand_buf(n);
        size_t floats = wick_f32_gemm_packed_size(n, k, nr);
        float *packed = malloc(floats * sizeof(float));
        wick_f32_gemm_pack(n, k, nr, w, bias, packed);
        checks++;
        for (size_t i = 0; i < floats; i++) {
          size_t panel = i / ((k + 1) * nr), row = i / nr % (k + 1), j = i % nr;
          size_t col = panel * nr + j;
          float want = col >= n ? 0.0f : row == 0 ? bias[col] : w[col * k + row - 1];
          if (memcmp(&packed[i], &want, sizeof want) != 0) {
            fail("gemm pack nr=%zu n=%zu k=%zu: float %zu is %g, want %g", nr, n, k, i,
                 (double)packed[i], (double)want);
            break;
          }
        }
        free(w);
        free(bias);
        free(packed);
      }
}

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
    printf("%s gemm %zux%zu: %s\n", all->isa, kern->mr, kern->nr, verdict(before));
  }
}

/* The in-place tiles (wick_f32_kernels.gemm_inplace / gemm_inplace_1: the fused attention
 * reads the key/value cache with them) against the main tile on the same b packed with a zero
 * bias: the same bits (kernels.h), for every row count up to MR, whole panels of any count,
 * k with and without a tail of 4, b rows wider than the call's columns, a clamp, and the
 * output row padding left alone. */
static void test_gemm_inplace(const wick_f32_kernels *all) {
  if (all->gemm_inplace == NULL || all->gemm_inplace_1 == NULL) return;
  const int before = failures;
  const wick_f32_gemm_kernel *kern = &all->gemm;
  const size_t nr = kern->nr;
  static const size_t panels[] = {1, 2, 3, 4, 5, 9};
  static const size_t depths[] = {1, 3, 4, 7, 64, 67};
  for (size_t m = 1; m <= kern->mr; m++)
    for (size_t ip = 0; ip < sizeof panels / sizeof panels[0]; ip++)
      for (size_t ik = 0; ik < sizeof depths / sizeof depths[0]; ik++) {
        const size_t nc = panels[ip] * nr, kc = depths[ik], b_stride = nc + 3 * nr + 5;
        const size_t a_stride = kc + 2, c_stride = nc + 3;
        const int act = (int)((m + ip + ik) % 3);
        float *a = rand_buf(m * a_stride), *b = rand_buf(kc * b_stride);
        float *packed = malloc(wick_f32_gemm_packed_size(nc, kc, nr) * sizeof(float));
        wick_f32_gemm_pack_kn_strided(nc, kc, nr, b, b_stride, packed);
        float *got = malloc(m * c_stride * sizeof(float));
        float *want = malloc(m * c_stride * sizeof(float));
        for (int one = 0; one < (m == 1 ? 2 : 1); one++) {
          for (size_t i = 0; i < m * c_stride; i++) got[i] = want[i] = 12345.0f;
          (one ? kern->gemm_1 : kern->gemm)(m, nc, kc, a, a_stride, packed, want, c_stride,
                                            act_lo[act], act_hi[act]);
          (one ? all->gemm_inplace_1 : all->gemm_inplace)(m, nc, kc, a, a_stride, b, b_stride, got,
                                                          c_stride, act_lo[act], act_hi[act]);
          checks++;
          if (memcmp(got, want, m * c_stride * sizeof(float)) != 0)
            fail("%s gemm_inplace%s m=%zu nc=%zu kc=%zu act=%d: not the packed tile's bits",
                 all->isa, one ? "_1" : "", m, nc, kc, act);
        }
        free(a), free(b), free(packed), free(got), free(want);
      }
  printf("%s gemm in place (%zux%zu, 1x%zu): %s\n", all->isa, kern->mr, nr, nr, verdict(before));
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

/* The GEMM tile a conv case runs on (conv_sweep's argument). */
typedef struct conv_tile {
  const char *isa;
  const wick_f32_gemm_kernel *kern;
} conv_tile;

static void test_conv_shape(const void *arg, const wick_conv_shape *s, int act) {
  const char *isa = ((const conv_tile *)arg)->isa;
  const wick_f32_gemm_kernel *kern = ((const conv_tile *)arg)->kern;
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
  char label[64], what[200];
  snprintf(label, sizeof label, "%s %zux%zu conv", isa, kern->mr, kern->nr);
  describe_shape(what, sizeof what, label, s);
  snprintf(what + strlen(what), sizeof what - strlen(what), " act=%d", act);
  compare(what, got, ref, mag, out_n, out_n, 1, out_n);
  free(in), free(f), free(bias), free(packed), free(ind), free(zero), free(got), free(ref);
  free(mag);
}

static void test_conv_tile(const char *isa, const wick_f32_gemm_kernel *kern) {
  const int before = failures;
  static const int32_t chans[5] = {1, 3, 8, 17, 33};
  const conv_tile tile = {isa, kern};
  conv_sweep(chans, test_conv_shape, &tile);
  printf("%s conv (igemm %zux%zu): %s\n", isa, kern->mr, kern->nr, verdict(before));
}

static void test_conv(const wick_f32_kernels *all) {
  test_conv_tile(all->isa, &all->gemm);
  if (all->gemm_narrow.nr != 0) test_conv_tile(all->isa, &all->gemm_narrow);
}

/* The row-tail kernels (wick_f32_gemm_kernel.tail_gemm / tail_igemm) only skip the FMAs of
 * repeated rows: every M whose last tile has 2..MR-1 rows gives the same bits as the tile
 * without tails (the kernels above were checked against the reference through the driver, tails
 * included), for GEMM and for a 3x3 convolution's indirect GEMM. */
static void test_gemm_tails_tile(const char *isa, const wick_f32_gemm_kernel *kern) {
  bool any = false;
  for (size_t r = 0; r < WICK_GEMM_TAIL_ROWS; r++)
    any = any || kern->tail_gemm[r] != NULL || kern->tail_igemm[r] != NULL;
  if (!any) return;
  const int before = failures;
  wick_f32_gemm_kernel plain = *kern;
  memset(plain.tail_gemm, 0, sizeof plain.tail_gemm);
  memset(plain.tail_igemm, 0, sizeof plain.tail_igemm);
  const size_t n = 2 * kern->nr + 5, k = 37;
  for (size_t m = 1; m <= 3 * kern->mr; m++) {
    float *a = rand_buf(m * k), *w = rand_buf(n * k), *bias = rand_buf(n);
    float *packed = malloc(wick_f32_gemm_packed_size(n, k, kern->nr) * sizeof(float));
    wick_f32_gemm_pack(n, k, kern->nr, w, bias, packed);
    float *got = malloc(m * n * sizeof(float)), *want = malloc(m * n * sizeof(float));
    wick_f32_gemm(kern, m, n, k, a, k, packed, got, n, -INFINITY, INFINITY);
    wick_f32_gemm(&plain, m, n, k, a, k, packed, want, n, -INFINITY, INFINITY);
    checks++;
    if (memcmp(got, want, m * n * sizeof(float)) != 0)
      fail("%s gemm %zux%zu row tails m=%zu: not bit-identical to the full tile", isa, kern->mr,
           kern->nr, m);
    free(a), free(w), free(bias), free(packed), free(got), free(want);
  }
  /* 3x3 convolution, pad 1, on w x 1 images: m = w output pixels */
  for (int32_t width = 1; width <= 3 * (int32_t)kern->mr; width++) {
    const int32_t cin = 5, cout = (int32_t)kern->nr + 3;
    const wick_conv_shape s = {1, 1, width, cin, 1, width, cout, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    const size_t kk = 9 * (size_t)cin, out_n = (size_t)width * (size_t)cout;
    float *in = rand_buf((size_t)width * cin), *f = rand_buf((size_t)cout * kk);
    float *bias = rand_buf((size_t)cout), *zero = calloc((size_t)cin, sizeof(float));
    float *packed = malloc(wick_f32_gemm_packed_size((size_t)cout, kk, kern->nr) * sizeof(float));
    wick_f32_gemm_pack((size_t)cout, kk, kern->nr, f, bias, packed);
    size_t count;
    if (!wick_f32_conv_indirection_size(&s, kern->mr, &count)) abort();
    const float **ind = malloc(count * sizeof(float *));
    wick_f32_conv_indirection_init(&s, kern->mr, in, zero, ind);
    float *got = malloc(out_n * sizeof(float)), *want = malloc(out_n * sizeof(float));
    wick_f32_conv_igemm(kern, &s, ind, packed, got, 0.0f, 6.0f);
    wick_f32_conv_igemm(&plain, &s, ind, packed, want, 0.0f, 6.0f);
    checks++;
    if (memcmp(got, want, out_n * sizeof(float)) != 0)
      fail("%s igemm %zux%zu row tails m=%d: not bit-identical to the full tile", isa, kern->mr,
           kern->nr, (int)width);
    free(in), free(f), free(bias), free(zero), free(packed), free(ind), free(got), free(want);
  }
  printf("%s gemm %zux%zu row tails: %s\n", isa, kern->mr, kern->nr, verdict(before));
}

static void test_gemm_tails(const wick_f32_kernels *all) {
  test_gemm_tails_tile(all->isa, &all->gemm);
  if (all->gemm_narrow.nr != 0) test_gemm_tails_tile(all->isa, &all->gemm_narrow);
}

/* ------------------------------------------------------------------ CONV_2D (Winograd) */

/* Winograd F(4x4, 3x3) rounds in its transforms too, so it is checked
 * against an exact (double) convolution with a looser bound than the 1e-5
 * above: |got - exact| <= WINOGRAD_TOL * (|bias| + sum |a_i * w_i|). The
 * worst ratio measured on these shapes (and on ResNet-18/50's layers with
 * random and trained data, docs/architecture.md) is ~3e-6 (the direct kernels:
 * ~6e-7); the bound leaves ~10x of margin. */
#define WINOGRAD_TOL 3e-5

/* out = bias + sum in * f in double, and the sum of absolute terms. */
static void conv_exact(const wick_conv_shape *s, const float *in, const float *f, const float *bias,
                       double *exact, double *mag) {
  for (int32_t n = 0; n < s->batch; n++)
    for (int32_t y = 0; y < s->out_h; y++)
      for (int32_t x = 0; x < s->out_w; x++)
        for (int32_t o = 0; o < s->out_c; o++) {
          double acc = bias ? bias[o] : 0.0, abs_acc = bias ? fabs(bias[o]) : 0.0;
          for (int32_t ky = 0; ky < s->k_h; ky++) {
            int32_t iy = y - s->pad_top + ky;
            if (iy < 0 || iy >= s->in_h) continue;
            for (int32_t kx = 0; kx < s->k_w; kx++) {
              int32_t ix = x - s->pad_left + kx;
              if (ix < 0 || ix >= s->in_w) continue;
              const float *ip = in + (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c;
              const float *wp = f + (((int64_t)o * s->k_h + ky) * s->k_w + kx) * s->in_c;
              for (int32_t i = 0; i < s->in_c; i++) {
                const double t = (double)ip[i] * wp[i];
                acc += t;
                abs_acc += fabs(t);
              }
            }
          }
          const size_t at = (((size_t)n * s->out_h + y) * s->out_w + x) * s->out_c + o;
          exact[at] = acc;
          mag[at] = abs_acc;
        }
}

/* The worst |got - clamp(exact)| / magnitude over n outputs. */
static double worst_ratio(const float *got, const double *exact, const double *mag, size_t n,
                          int act) {
  double worst = 0.0;
  for (size_t i = 0; i < n; i++) {
    double want = fmin(fmax(exact[i], act_lo[act]), act_hi[act]);
    double r = fabs((double)got[i] - want) / (mag[i] + 1e-30);
    if (!(r <= worst)) worst = r; /* NaN sticks */
  }
  return worst;
}

/* Runs a Winograd convolution of `s` (scale: input values in [0, scale) when
 * `relu_input`, else (-scale, scale); filter (-1, 1) / sqrt(9 * in_c)) and
 * checks it; also runs the tasks in reverse order on two scratch "threads"
 * and checks the bits match. Returns the worst error ratio (and, when
 * igemm_worst is not NULL, the indirect GEMM's on the same data). */
static double test_winograd_shape(const wick_f32_kernels *all, const wick_conv_shape *s, int act,
                                  bool with_bias, bool relu_input, double *igemm_worst) {
  const wick_f32_gemm_kernel *gk = wick_f32_gemm_kernel_for(all, (size_t)s->out_c);
  const size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  const size_t out_n = (size_t)s->batch * s->out_h * s->out_w * s->out_c;
  const size_t k = 9 * (size_t)s->in_c;
  float *in = rand_buf(in_n), *f = rand_buf((size_t)s->out_c * k), *bias = rand_buf(s->out_c);
  const float fscale = (float)(1.0 / sqrt((double)k));
  for (size_t i = 0; i < (size_t)s->out_c * k; i++) f[i] *= fscale;
  if (relu_input)
    for (size_t i = 0; i < in_n; i++) in[i] = fabsf(in[i]);
  wick_f32_winograd_tasks t;
  size_t floats;
  if (!wick_f32_winograd_plan(&t, all, gk, s) || !wick_f32_winograd_packed_size(s, gk->nr, &floats))
    abort();
  float *packed = malloc(floats * sizeof(float));
  wick_f32_winograd_pack(s, gk->nr, f, with_bias ? bias : NULL, packed);
  float *got = malloc((out_n + 2) * sizeof(float)), *again = malloc(out_n * sizeof(float));
  double *exact = malloc(out_n * sizeof(double)), *mag = malloc(out_n * sizeof(double));
  got[0] = got[out_n + 1] = 12345.0f;
  t.input = in, t.packed = packed, t.lo = act_lo[act], t.hi = act_hi[act];
  t.scratch = malloc(2 * t.scratch_floats * sizeof(float));
  t.output = got + 1;
  for (size_t i = 0; i < t.tasks; i++) wick_f32_winograd_run_task(&t, i, 0);
  t.output = again;
  for (size_t i = t.tasks; i-- > 0;) wick_f32_winograd_run_task(&t, i, i % 2);
  conv_exact(s, in, f, with_bias ? bias : NULL, exact, mag);
  char what[200];
  describe_shape(what, sizeof what, all->isa, s);
  snprintf(what + strlen(what), sizeof what - strlen(what), " winograd act=%d", act);
  const double worst = worst_ratio(got + 1, exact, mag, out_n, act);
  checks++;
  if (!(worst <= WINOGRAD_TOL))
    fail("%s: error %.3g x magnitude (bound %g)", what, worst, WINOGRAD_TOL);
  check_guards(what, got[0] == 12345.0f && got[out_n + 1] == 12345.0f);
  checks++;
  if (memcmp(got + 1, again, out_n * sizeof(float)) != 0)
    fail("%s: tasks in another order on other threads changed the bits", what);
  if (igemm_worst != NULL) {
    float *direct = malloc(wick_f32_gemm_packed_size(s->out_c, k, gk->nr) * sizeof(float));
    wick_f32_gemm_pack(s->out_c, k, gk->nr, f, with_bias ? bias : NULL, direct);
    size_t count;
    if (!wick_f32_conv_indirection_size(s, gk->mr, &count)) abort();
    const float **ind = malloc(count * sizeof(float *));
    float *zero = calloc(s->in_c, sizeof(float));
    wick_f32_conv_indirection_init(s, gk->mr, in, zero, ind);
    wick_f32_conv_igemm(gk, s, ind, direct, again, act_lo[act], act_hi[act]);
    *igemm_worst = worst_ratio(again, exact, mag, out_n, act);
    free(direct), free(ind), free(zero);
  }
  free(in), free(f), free(bias), free(packed), free(got), free(again), free(exact), free(mag);
  free(t.scratch);
  return worst;
}

static void test_winograd(const wick_f32_kernels *all) {
  if (all->winograd_input == NULL) {
    printf("%s winograd: none for this ISA (the indirect GEMM runs)\n", all->isa);
    return;
  }
  int before = failures, act = 0;
  double worst = 0.0;
  /* tile remainders (sides 1-13), VALID / SAME / lopsided padding, channel tails */
  static const int32_t sides[] = {1, 2, 3, 4, 5, 6, 7, 9, 13};
  static const int32_t chans[][2] = {{1, 1}, {3, 7}, {16, 16}, {17, 33}, {64, 70}, {5, 130}};
  static const int32_t pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 0, 2}, {0, 1, 1, 0}};
  wick_conv_shape s;
  for (size_t ic = 0; ic < sizeof chans / sizeof *chans; ic++)
    for (size_t ih = 0; ih < sizeof sides / sizeof *sides; ih++)
      for (size_t ip = 0; ip < 4; ip++) {
        const int32_t h = sides[ih], w = sides[(ih + ic + ip) % 9], *p = pads[ip];
        make_shape(&s, (ic + ih) % 3 == 0 ? 2 : 1, h, w, chans[ic][0], chans[ic][1], 3, 3, 1, 1, 1,
                   1, p[0], p[1], p[2], p[3]);
        if (s.out_h <= 0 || s.out_w <= 0) continue;
        double r = test_winograd_shape(all, &s, act, (ih + ip) % 4 != 0, ip % 2 == 1, NULL);
        worst = r > worst ? r : worst;
        act = (act + 1) % 3;
      }
  printf("%s winograd F(4x4,3x3) edge shapes: %s (worst error %.2g x magnitude)\n", all->isa,
         verdict(before), worst);
  /* ResNet-18/50 layers (SAME), on signed and on ReLU-like (non-negative) inputs */
  static const int32_t layers[][2] = {{56, 64}, {28, 128}, {14, 256}, {7, 512}};
  for (size_t i = 0; i < sizeof layers / sizeof *layers; i++)
    for (int relu_input = 0; relu_input <= 1; relu_input++) {
      before = failures;
      const int32_t side = layers[i][0], c = layers[i][1];
      make_shape(&s, 1, side, side, c, c, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
      double direct;
      double r = test_winograd_shape(all, &s, 0, true, relu_input, &direct);
      printf("%s winograd %dx%dx%d->%d %s inputs: %s (error %.2g x magnitude; igemm %.2g)\n",
             all->isa, side, side, c, c, relu_input ? "non-negative" : "signed", verdict(before), r,
             direct);
    }
}

/* ------------------------------------------------------------------ DEPTHWISE_CONV_2D */

/* Runs `fn` on shape `s` (multiplier 1) in two row ranges split at `split`
 * of the rows (a thread pool's view), against the reference. */
static void test_dw_shape(const wick_f32_kernels *kern, wick_f32_dwconv_fn fn, const char *name,
                          const wick_conv_shape *s, int act, bool with_bias) {
  if (s->out_h <= 0 || s->out_w <= 0) return;
  size_t in_n = (size_t)s->batch * s->in_h * s->in_w * s->in_c;
  size_t out_n = (size_t)s->batch * s->out_h * s->out_w * s->out_c;
  size_t taps = (size_t)s->k_h * s->k_w;
  float *in = rand_buf(in_n), *f = rand_buf(taps * (size_t)s->out_c), *bias = rand_buf(s->out_c);
  size_t blocks = ((size_t)s->out_c + kern->dw_cr - 1) / kern->dw_cr;
  float *packed = malloc(blocks * (taps + 1) * kern->dw_cr * sizeof(float));
  wick_f32_dwconv_pack(s->out_c, kern->dw_cr, taps, f, with_bias ? bias : NULL, packed);
  /* one guard element each side catches writes outside the output */
  float *got = malloc((out_n + 2) * sizeof(float)), *ref = malloc(out_n * sizeof(float));
  double *mag = malloc(out_n * sizeof(double));
  got[0] = got[out_n + 1] = 12345.0f;
  wick_f32_depthwise_conv2d__reference(s, in, f, with_bias ? bias : NULL, ref, act_lo[act],
                                       act_hi[act]);
  conv_magnitudes(s, in, f, with_bias ? bias : NULL, mag, true);
  const wick_f32_dwconv_args args = {s, in, packed, got + 1, act_lo[act], act_hi[act], NULL};
  size_t rows = (size_t)s->batch * s->out_h, split = rows / 3;
  fn(&args, 0, split);
  fn(&args, split, rows);
  char what[200];
  snprintf(what, sizeof what,
           "%s %s n=%d %dx%dx%d k=%dx%d s=%d,%d d=%d,%d pad=%d,%d out=%dx%d act=%d", kern->isa,
           name, s->batch, s->in_h, s->in_w, s->in_c, s->k_h, s->k_w, s->stride_h, s->stride_w,
           s->dilation_h, s->dilation_w, s->pad_top, s->pad_left, s->out_h, s->out_w, act);
  compare(what, got + 1, ref, mag, out_n, out_n, 1, out_n);
  check_guards(what, got[0] == 12345.0f && got[out_n + 1] == 12345.0f);
  free(in), free(f), free(bias), free(packed), free(got), free(ref), free(mag);
}

/* Square k x k filters at strides 1-2 over the edge set of sizes, channel
 * counts (tails of 8 and 16) and paddings. */
static void test_dw_square(const wick_f32_kernels *kern, wick_f32_dwconv_fn fn, const char *name,
                           int32_t k, int32_t dil) {
  if (fn == NULL) {
    printf("%s %s: none for this ISA (the reference kernel runs)\n", kern->isa, name);
    return;
  }
  int before = failures, act = 0;
  static const int32_t chans[] = {1, 3, 8, 15, 16, 17, 31, 33, 64, 100};
  static const int32_t sides[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 20};
  wick_conv_shape s;
  for (size_t ic = 0; ic < 10; ic++)
    for (size_t ih = 0; ih < 10; ih++)
      for (int32_t sh = 1; sh <= 2; sh++)
        for (int32_t sw = 1; sw <= 2; sw++)
          for (int32_t pad = 0; pad < 4; pad++) {
            /* pad 0: VALID; 1: SAME-like (k/2 each side); 2: TF SAME at stride 2 (one less
             * before); 3: lopsided (k-1 before, 0 after) */
            int32_t h = sides[ih], w = sides[(ih + ic + (size_t)pad) % 10];
            int32_t before_pad[4] = {0, k / 2, k / 2 - 1, k - 1},
                    after_pad[4] = {0, k / 2, k / 2, 0};
            size_t pw = (size_t)(pad + sw) % 4;
            make_shape(&s, ic % 3 == 0 ? 2 : 1, h, w, chans[ic], chans[ic], k, k, sh, sw, dil, dil,
                       before_pad[pad], after_pad[pad], before_pad[pw], after_pad[pw]);
            s.groups = s.in_c;
            test_dw_shape(kern, fn, name, &s, act, (ic + ih) % 5 != 0);
            act = (act + 1) % 3;
          }
  /* wide rows (>= 3 register blocks of interior pixels: the pixel-block-outer path) */
  static const int32_t wide_c[] = {5, 17, 33, 40};
  for (size_t ic = 0; ic < 4; ic++)
    for (int32_t st = 1; st <= 2; st++)
      for (int32_t pad = 0; pad <= 1; pad++) {
        int32_t p = pad * (k / 2);
        make_shape(&s, 1, k + 1, 24 * st + 7 + (int32_t)ic + k, wide_c[ic], wide_c[ic], k, k, st,
                   st, dil, dil, p, p, p, p);
        s.groups = s.in_c;
        test_dw_shape(kern, fn, name, &s, act, true);
        act = (act + 1) % 3;
      }
  printf("%s %s k=%d dil=%d: %s\n", kern->isa, name, k, dil, verdict(before));
}

static void test_dwconv(const wick_f32_kernels *kern) {
  test_dw_square(kern, kern->dwconv3x3, "dwconv3x3", 3, 1);
  test_dw_square(kern, kern->dwconv5x5, "dwconv5x5", 5, 1);
  test_dw_square(kern, kern->dwconv, "dwconv", 3, 1);
  test_dw_square(kern, kern->dwconv, "dwconv", 5, 2);
  int before = failures, act = 0;
  wick_conv_shape s;
  if (kern->dwconv == NULL || kern->dwconv5x5 == NULL) return;
  /* the generic kernel: non-square filters, strides 1-3, dilations 1-3 */
  static const int32_t ks[][2] = {{1, 1}, {2, 2}, {1, 7}, {7, 1}, {3, 5}, {7, 7}};
  for (size_t kk = 0; kk < 6; kk++)
    for (int32_t st = 1; st <= 3; st++)
      for (int32_t dil = 1; dil <= 3; dil++)
        for (int32_t c = 5; c <= 40; c += 35) {
          int32_t kh = ks[kk][0], kw = ks[kk][1], p = (int32_t)(kk + (size_t)st) % 3;
          make_shape(&s, 1 + (int32_t)kk % 2, 9 + st, 30 - 2 * (int32_t)kk, c, c, kh, kw, st,
                     4 - st, dil, 1 + (dil + 1) % 3, p, p, p, 3 - p);
          s.groups = c;
          test_dw_shape(kern, kern->dwconv, "dwconv", &s, act, kk % 2 == 0);
          act = (act + 1) % 3;
        }
  printf("%s dwconv (any size, stride, dilation): %s\n", kern->isa, verdict(before));
  /* model shapes: MobileNetV2 3x3, EfficientNet-B0 5x5 */
  static const conv_case models[] = {{1, 112, 112, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
                                     {1, 113, 113, 96, 96, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 2},
                                     {1, 28, 28, 240, 240, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0},
                                     {1, 56, 56, 144, 144, 5, 5, 2, 2, 1, 1, 1, 2, 1, 2, 0}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    const bool five = models[i].kh == 5;
    case_shape(&models[i], true, &s);
    test_dw_shape(kern, five ? kern->dwconv5x5 : kern->dwconv3x3, five ? "dwconv5x5" : "dwconv3x3",
                  &s, models[i].act, true);
  }
}

/* ------------------------------------------------------------------ elementwise */

/* Distance in representable floats (+0 and -0 are the same point). */
static int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
  return oa > ob ? oa - ob : ob - oa;
}

static bool same_bits_or_nan(float a, float b) {
  if (a != a || b != b) return a != a && b != b;
  return memcmp(&a, &b, 4) == 0;
}

/* The inputs every unary kernel is swept over: a dense grid of [-200, 200],
 * log-spaced magnitudes from 1e-40 to 1e38 of both signs, and special values
 * (zeros, infinities, NaN, denormals, the cutoffs of the formulas). */
static float *unary_inputs(size_t *n_out) {
  static const float special[] = {0.0f,
                                  -0.0f,
                                  INFINITY,
                                  -INFINITY,
                                  NAN,
                                  1e-45f,
                                  -1e-45f,
                                  1e-39f,
                                  -1e-39f,
                                  1.17549435e-38f,
                                  3.4028235e38f,
                                  -3.4028235e38f,
                                  9.0f,
                                  -9.0f,
                                  9.0000010f,
                                  -9.0000010f,
                                  16.619047164916992188f,
                                  16.61905f,
                                  88.72283f,
                                  88.72284f,
                                  89.0f,
                                  -87.33654f,
                                  -103.97f,
                                  -104.0f,
                                  -150.0f,
                                  0.625f,
                                  -0.625f,
                                  0.62499994f,
                                  40.0f,
                                  -40.0f,
                                  3.0f,
                                  -3.0f,
                                  6.0f};
  const size_t grid = 400001, logs = 2 * 2000, ns = sizeof special / sizeof special[0];
  float *x = malloc((grid + logs + ns) * sizeof(float));
  size_t n = 0;
  for (size_t i = 0; i < grid; i++)
    x[n++] = (float)(-200.0 + 400.0 * (double)i / (double)(grid - 1));
  for (size_t i = 0; i < logs / 2; i++) {
    float m = (float)pow(10.0, -40.0 + 78.0 * (double)i / (double)(logs / 2 - 1));
    x[n++] = m;
    x[n++] = -m;
  }
  for (size_t i = 0; i < ns; i++) x[n++] = special[i];
  *n_out = n;
  return x;
}

typedef struct unary_case {
  wick_f32_unary_kind kind;
  const char *name;
  int64_t ulps; /* bound stated in template/elementwise.h; 0: bit-identical */
} unary_case;

static void unary_reference(wick_f32_unary_kind kind, size_t n, const float *x, float *y) {
  switch (kind) {
    case WICK_F32_RELU: wick_f32_unary__reference(WICK_UNARY_RELU, (int64_t)n, x, y); return;
    case WICK_F32_RELU6: wick_f32_unary__reference(WICK_UNARY_RELU6, (int64_t)n, x, y); return;
    case WICK_F32_RELU_N1_TO_1:
      wick_f32_unary__reference(WICK_UNARY_RELU_N1_TO_1, (int64_t)n, x, y);
      return;
    case WICK_F32_RELU_0_TO_1:
      wick_f32_unary__reference(WICK_UNARY_RELU_0_TO_1, (int64_t)n, x, y);
      return;
    case WICK_F32_LOGISTIC:
      wick_f32_unary__reference(WICK_UNARY_LOGISTIC, (int64_t)n, x, y);
      return;
    case WICK_F32_SILU: /* the LOGISTIC + MUL pattern it replaces */
      wick_f32_unary__reference(WICK_UNARY_LOGISTIC, (int64_t)n, x, y);
      for (size_t i = 0; i < n; i++) y[i] *= x[i];
      return;
    case WICK_F32_TANH: wick_f32_unary__reference(WICK_UNARY_TANH, (int64_t)n, x, y); return;
    case WICK_F32_EXP: wick_f32_unary__reference(WICK_UNARY_EXP, (int64_t)n, x, y); return;
    case WICK_F32_HARD_SWISH:
      wick_f32_unary__reference(WICK_UNARY_HARD_SWISH, (int64_t)n, x, y);
      return;
    case WICK_F32_GELU: wick_f32_gelu__reference((int64_t)n, false, x, y); return;
    case WICK_F32_GELU_TANH: wick_f32_gelu__reference((int64_t)n, true, x, y); return;
    case WICK_F32_NEG: wick_f32_unary__reference(WICK_UNARY_NEG, (int64_t)n, x, y); return;
    case WICK_F32_ABS: wick_f32_unary__reference(WICK_UNARY_ABS, (int64_t)n, x, y); return;
    case WICK_F32_UNARY_COUNT: break;
  }
}

static void test_unary(const wick_f32_kernels *kern) {
  if (kern->unary[0] == NULL) return; /* no elementwise kernels for this ISA */
  static const unary_case cases[] = {{WICK_F32_RELU, "relu", 0},
                                     {WICK_F32_RELU6, "relu6", 0},
                                     {WICK_F32_RELU_N1_TO_1, "relu_n1_to_1", 0},
                                     {WICK_F32_RELU_0_TO_1, "relu_0_to_1", 0},
                                     {WICK_F32_HARD_SWISH, "hard_swish", 0},
                                     {WICK_F32_EXP, "exp", 3},
                                     {WICK_F32_LOGISTIC, "logistic", 4},
                                     {WICK_F32_SILU, "silu", 5},
                                     {WICK_F32_TANH, "tanh", 4},
                                     {WICK_F32_GELU, "gelu", 16},
                                     {WICK_F32_GELU_TANH, "gelu_tanh", 16},
                                     {WICK_F32_NEG, "neg", 0},
                                     {WICK_F32_ABS, "abs", 0}};
  size_t n;
  float *x = unary_inputs(&n);
  float *ref = malloc(n * sizeof(float)), *got = malloc((n + 2) * sizeof(float));
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const unary_case *uc = &cases[c];
    int before = failures;
    int64_t worst = 0;
    unary_reference(uc->kind, n, x, ref);
    got[0] = got[n + 1] = 12345.0f;
    kern->unary[uc->kind](n, x, got + 1);
    checks++;
    for (size_t i = 0; i < n; i++) {
      float g = got[i + 1], r = ref[i];
      bool ok;
      if (uc->ulps == 0) {
        ok = same_bits_or_nan(g, r);
      } else if (r != r || g != g) {
        ok = r != r && g != g;
      } else {
        int64_t bound = uc->ulps;
        if (uc->kind == WICK_F32_GELU_TANH) { /* + |2u| * 2^-21 relative */
          double u = 0.7978845608 * ((double)x[i] + 0.044715 * (double)x[i] * x[i] * x[i]);
          if (fabs(u) < 1e6) bound += (int64_t)(8.0 * fabs(u));
        }
        int64_t d = ulp_distance(g, r);
        if (g == 0.0f && r == 0.0f && signbit(g) != signbit(r)) d = INT64_MAX; /* -0 vs +0 */
        double err = fabs((double)g - r), ax = fabs((double)x[i]);
        ok = d <= bound || (fabs((double)r) < 1.17549435e-38 && err <= 1.17549435e-38);
        /* SILU: logistic(x) below FLT_MIN is a denormal in both paths, each
         * rounded to 2^-149; the product carries |x| times that */
        if (uc->kind == WICK_F32_SILU && x[i] < -87.0f) ok = ok || err <= ax * 0x1p-148;
        /* GELU_TANH: the reference's 1 + tanh(u) is off by up to 2^-53 in
         * double (it cancels to 0 below x = -5.5); wick computes the small
         * x / (1 + e^-2u) directly */
        if (uc->kind == WICK_F32_GELU_TANH) ok = ok || err <= ax * 0x1p-52;
        if (ok && d > worst && d <= bound) worst = d;
      }
      if (!ok) {
        fail("%s %s(%.9g): got %.9g want %.9g (%lld ulp, bound %lld)", kern->isa, uc->name,
             (double)x[i], (double)g, (double)r, (long long)ulp_distance(g, r),
             (long long)uc->ulps);
        break;
      }
    }
    if (got[0] != 12345.0f || got[n + 1] != 12345.0f) {
      fail("%s %s: wrote outside the output", kern->isa, uc->name);
    }
    /* every tail length, in place: lane-wise, so bit-identical to the sweep's results */
    for (size_t len = 0; len <= 40 && failures == before; len++) {
      float buf[48], want[48];
      for (size_t i = 0; i < 48; i++) {
        size_t k = (i * 7919 + len * 104729) % n;
        buf[i] = x[k];
        want[i] = i < len ? got[k + 1] : x[k];
      }
      kern->unary[uc->kind](len, buf, buf);
      checks++;
      for (size_t i = 0; i < 48; i++)
        if (!same_bits_or_nan(buf[i], want[i])) {
          fail("%s %s: length %zu in place, element %zu", kern->isa, uc->name, len, i);
          break;
        }
    }
    printf("%s %s: %s (worst %lld ulp over %zu inputs, bound %lld)\n", kern->isa, uc->name,
           verdict(before), (long long)worst, n, (long long)uc->ulps);
  }
  free(x), free(ref), free(got);
}

static float special_rand(void) {
  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3.0f, 6.0f};
  float r = frand();
  if (r > 0.9f) return sp[(size_t)((r - 0.9f) * 79.9f) % 8];
  return r * 10.0f;
}

static void test_binary(const wick_f32_kernels *kern) {
  if (kern->unary[0] == NULL) return;    /* no elementwise kernels for this ISA */
  static const int32_t shapes[][2][5] = {/* {rank, dims...} of a, then of b */
                                         {{4, 2, 3, 5, 17}, {4, 2, 3, 5, 17}},
                                         {{3, 4, 7, 33}, {3, 1, 1, 33}},
                                         {{3, 4, 7, 33}, {3, 4, 7, 1}},
                                         {{4, 2, 9, 9, 20}, {4, 2, 1, 1, 20}},
                                         {{2, 5, 19}, {0}},
                                         {{1, 1}, {2, 7, 3}},
                                         {{3, 3, 1, 5}, {3, 1, 4, 1}},
                                         {{4, 1, 56, 56, 144}, {4, 1, 1, 1, 144}},
                                         {{2, 128, 768}, {2, 128, 1}},
                                         {{1, 768}, {2, 128, 768}},
                                         {{1, 3}, {1, 3}},
                                         {{4, 2, 1, 3, 1}, {4, 1, 2, 1, 3}}};
  static const wick_binary_op ops[] = {WICK_BINARY_ADD,
                                       WICK_BINARY_SUB,
                                       WICK_BINARY_MUL,
                                       WICK_BINARY_DIV,
                                       WICK_BINARY_MAXIMUM,
                                       WICK_BINARY_MINIMUM,
                                       WICK_BINARY_SQUARED_DIFFERENCE};
  static const wick_f32_binary_kind kinds[] = {WICK_F32_ADD,
                                               WICK_F32_SUB,
                                               WICK_F32_MUL,
                                               WICK_F32_DIV,
                                               WICK_F32_MAXIMUM,
                                               WICK_F32_MINIMUM,
                                               WICK_F32_SQUARED_DIFFERENCE};
  int before = failures, act = 0, planned = 0;
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
    wick_broadcast bc;
    make_broadcast(&bc, shapes[sh][0][0], &shapes[sh][0][1], shapes[sh][1][0], &shapes[sh][1][1]);
    wick_f32_binary_plan plan;
    if (!wick_f32_binary_plan_make(&bc, &plan)) continue; /* reference only (4 loops) */
    planned++;
    size_t na = 1, nb = 1, no = 1;
    for (int32_t i = 0; i < shapes[sh][0][0]; i++) na *= (size_t)shapes[sh][0][1 + i];
    for (int32_t i = 0; i < shapes[sh][1][0]; i++) nb *= (size_t)shapes[sh][1][1 + i];
    for (int32_t i = 0; i < bc.rank; i++) no *= (size_t)bc.dims[i];
    float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float));
    float *got = malloc((no + 1) * sizeof(float)), *ref = malloc(no * sizeof(float));
    for (size_t i = 0; i < na; i++) a[i] = special_rand();
    for (size_t i = 0; i < nb; i++) b[i] = special_rand();
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      got[no] = 12345.0f;
      wick_f32_binary__reference(ops[o], &bc, a, b, ref, act_lo[act], act_hi[act]);
      wick_f32_binary_run(kern->binary[kinds[o]], &plan, a, b, got, act_lo[act], act_hi[act]);
      checks++;
      for (size_t i = 0; i <= no; i++)
        if (i == no ? got[i] != 12345.0f : !same_bits_or_nan(got[i], ref[i])) {
          fail("%s binary op %d shape %zu act %d: [%zu] got %.9g want %.9g", kern->isa, (int)ops[o],
               sh, act, i, (double)got[i], (double)ref[i]);
          break;
        }
      act = (act + 1) % 3;
    }
    free(a), free(b), free(got), free(ref);
  }
  checks++;
  if (planned != (int)(sizeof shapes / sizeof shapes[0]) - 1) {
    fail("%s: %d of the binary shapes planned (want all but the 4-loop one)", kern->isa, planned);
  }
  printf("%s binary (bit-identical, %d broadcast shapes): %s\n", kern->isa, planned,
         verdict(before));
}

static void test_softmax_and_sums(const wick_f32_kernels *kern) {
  if (kern->unary[0] == NULL) return; /* no elementwise kernels for this ISA */
  int before = failures;
  static const size_t cols[] = {1, 3, 16, 17, 100, 1000};
  for (size_t c = 0; c < 6; c++)
    for (int bi = 0; bi < 2; bi++) {
      size_t rows = 5, n = rows * cols[c];
      float beta = bi ? 0.5f : 1.0f;
      float *x = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
      float *ref = malloc(n * sizeof(float));
      for (size_t i = 0; i < n; i++) x[i] = frand() * 20.0f;
      wick_f32_softmax__reference((int64_t)rows, (int64_t)cols[c], beta, x, ref);
      kern->softmax(cols[c], beta, x, got, 0, 2);
      kern->softmax(cols[c], beta, x, got, 2, rows);
      checks++;
      for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - ref[i]) <= 1e-5 * fabs((double)ref[i]) + 1e-37)) {
          fail("%s softmax cols=%zu [%zu]: got %.9g want %.9g", kern->isa, cols[c], i,
               (double)got[i], (double)ref[i]);
          break;
        }
      free(x), free(got), free(ref);
    }
  /* MEAN over the middle axes of [outer, mid, inner] */
  static const int32_t shapes[][4] = {{1, 7, 7, 1280}, {2, 14, 14, 17},  {1, 112, 112, 32},
                                      {3, 5, 1, 1},    {1, 1, 128, 768}, {2, 3, 4, 5}};
  for (size_t sh = 0; sh < 6; sh++) {
    const int32_t *d = shapes[sh];
    bool reduced[4] = {false, true, true, false};
    if (d[3] == 1 || d[1] == 1) reduced[1] = false, reduced[2] = true, reduced[3] = d[3] != 1;
    size_t outer, mid, inner;
    if (!wick_f32_reduce_plan_make(4, d, reduced, &outer, &mid, &inner)) {
      fail("%s: reduce plan for shape %zu", kern->isa, sh);
      continue;
    }
    size_t n = (size_t)d[0] * d[1] * d[2] * d[3], on = outer * inner;
    float *x = malloc(n * sizeof(float)), *got = malloc(on * sizeof(float));
    float *ref = malloc(on * sizeof(float));
    double *mag = calloc(on, sizeof(double));
    for (size_t i = 0; i < n; i++) x[i] = frand();
    wick_reduce__reference(WICK_REDUCE_MEAN, WICK_DTYPE_FLOAT32, 4, d, reduced, x, ref);
    for (size_t o = 0; o < outer; o++)
      for (size_t r = 0; r < mid; r++)
        for (size_t i = 0; i < inner; i++)
          mag[o * inner + i] += fabs((double)x[(o * mid + r) * inner + i]) / (double)mid;
    kern->sum_mid(mid, inner, 1.0f / (float)mid, x, got, 0, outer);
    char what[96];
    snprintf(what, sizeof what, "%s mean shape %zu", kern->isa, sh);
    compare(what, got, ref, mag, on, on, 1, on);
    free(x), free(got), free(ref), free(mag);
  }
  printf("%s softmax, mean: %s\n", kern->isa, verdict(before));
}

/* MAX_POOL_2D / AVERAGE_POOL_2D: bit-identical to the reference on edge
 * shapes (channel tails, windows past the borders, global pools). */
static void test_pools(const wick_f32_kernels *kern) {
  if (kern->max_pool == NULL) return;
  int before = failures, act = 0;
  static const int32_t chans[] = {1, 5, 8, 16, 17, 64};
  static const int32_t ks[][2] = {{1, 1}, {2, 2}, {3, 3}, {3, 2}, {7, 7}};
  for (size_t ic = 0; ic < 6; ic++)
    for (size_t kk = 0; kk < 5; kk++)
      for (int32_t st = 1; st <= 2; st++)
        for (int32_t pad = 0; pad <= 1; pad++) {
          wick_pool_shape s;
          memset(&s, 0, sizeof s);
          s.batch = 1 + (int32_t)(ic % 2), s.in_h = 7 + (int32_t)kk, s.in_w = 9 - (int32_t)kk;
          s.channels = chans[ic], s.k_h = ks[kk][0], s.k_w = ks[kk][1];
          s.stride_h = st, s.stride_w = st, s.pad_top = pad * (s.k_h / 2);
          s.pad_left = pad * (s.k_w / 2);
          s.out_h = (s.in_h + 2 * s.pad_top - s.k_h) / st + 1;
          s.out_w = (s.in_w + 2 * s.pad_left - s.k_w) / st + 1;
          if (s.out_h <= 0 || s.out_w <= 0) continue;
          size_t in_n = (size_t)s.batch * s.in_h * s.in_w * s.channels;
          size_t out_n = (size_t)s.batch * s.out_h * s.out_w * s.channels;
          float *in = malloc(in_n * sizeof(float)), *got = malloc((out_n + 1) * sizeof(float));
          float *ref = malloc(out_n * sizeof(float));
          for (size_t i = 0; i < in_n; i++) in[i] = special_rand();
          for (int is_max = 0; is_max <= 1; is_max++) {
            got[out_n] = 12345.0f;
            (is_max ? wick_f32_max_pool__reference
                    : wick_f32_average_pool__reference)(&s, in, ref, act_lo[act], act_hi[act]);
            (is_max ? kern->max_pool : kern->average_pool)(&s, in, got, act_lo[act], act_hi[act]);
            checks++;
            for (size_t i = 0; i <= out_n; i++)
              if (i == out_n ? got[i] != 12345.0f : !same_bits_or_nan(got[i], ref[i])) {
                fail("%s %s pool c=%d k=%dx%d s=%d pad=%d: [%zu] got %.9g want %.9g", kern->isa,
                     is_max ? "max" : "average", s.channels, s.k_h, s.k_w, st, pad, i,
                     (double)got[i], (double)ref[i]);
                break;
              }
            act = (act + 1) % 3;
          }
          free(in), free(got), free(ref);
        }
  printf("%s max/average pool (bit-identical): %s\n", kern->isa, verdict(before));
}

/* The blocked 2-D transpose (portable): byte-identical to the reference
 * strided copy on the layout permutations of the benchmark models, for every
 * element size, including a split of the outermost dimension (threads). */
static void test_transpose(void) {
  static const int32_t shapes[][6] = {/* rank, dims..., then perm below */
                                      {5, 1, 28, 28, 2, 58},
                                      {4, 1, 3, 24, 22},
                                      {4, 1, 24, 22, 3},
                                      {3, 197, 3, 64},
                                      {2, 5, 7},
                                      {3, 17, 1, 33},
                                      {4, 2, 3, 5, 7},
                                      {4, 2, 4, 5, 3},
                                      {4, 1, 2, 9, 11},
                                      /* MiniLM's keys [4, 32, 12, 32] -> [4, 12, 32, 32] (16x16
                                       * byte blocks), and blocks with remainders both ways */
                                      {4, 4, 32, 12, 32},
                                      {3, 2, 37, 50},
                                      {2, 16, 35}};
  static const int32_t perms[][5] = {{0, 1, 2, 4, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 0, 2},
                                     {1, 0},          {2, 1, 0},    {3, 1, 0, 2}, {0, 2, 3, 1},
                                     {0, 2, 3, 1},    {0, 2, 3, 1}, {0, 2, 1},    {1, 0}};
  static const size_t esizes[] = {1, 2, 4, 8};
  int before = failures, transposes = 0;
  for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
    for (size_t e = 0; e < 4; e++) {
      const int32_t rank = shapes[t][0];
      const int32_t *dims = &shapes[t][1];
      wick_copy_plan plan;
      memset(&plan, 0, sizeof plan);
      plan.rank = rank;
      int64_t in_strides[6], s = 1, n = 1;
      for (int32_t i = rank - 1; i >= 0; i--) in_strides[i] = s, s *= dims[i];
      for (int32_t i = 0; i < rank; i++) {
        plan.dims[i] = dims[perms[t][i]];
        plan.src_strides[i] = in_strides[perms[t][i]];
        n *= dims[i];
      }
      wick_copy_plan_dense_dst(&plan);
      wick_copy_plan_simplify(&plan);
      if (!wick_strided_copy_is_transpose(&plan)) continue;
      transposes++;
      size_t bytes = (size_t)n * esizes[e];
      uint8_t *in = malloc(bytes), *got = malloc(bytes + 1), *ref = malloc(bytes);
      for (size_t i = 0; i < bytes; i++) in[i] = (uint8_t)(i * 2654435761u >> 13);
      got[bytes] = 0xA5;
      wick_strided_copy__reference(esizes[e], &plan, in, ref);
      /* two ranges of the outermost dimension, as parallel.c splits it */
      wick_copy_plan lo = plan, hi = plan;
      lo.dims[0] = plan.dims[0] / 2;
      hi.dims[0] = plan.dims[0] - lo.dims[0];
      hi.src_offset += lo.dims[0] * plan.src_strides[0];
      hi.dst_offset += lo.dims[0] * plan.dst_strides[0];
      if (lo.dims[0] > 0) wick_strided_copy_transpose(esizes[e], &lo, in, got);
      wick_strided_copy_transpose(esizes[e], &hi, in, got);
      checks++;
      if (memcmp(got, ref, bytes) != 0 || got[bytes] != 0xA5) {
        fail("transpose case %zu esize %zu differs from the reference", t, esizes[e]);
      }
      free(in), free(got), free(ref);
    }
  checks++;
  if (transposes < 20) {
    fail("only %d transpose plans took the blocked path", transposes);
  }
  printf("transpose (blocked 2-D, %d plans): %s\n", transposes, verdict(before));
}

/* Comparisons, REDUCE_ANY/ALL and SELECT row walks (portable, logical.c):
 * identical to the reference on broadcast shapes, NaN included. */
static void test_logical(void) {
  int before = failures;
  static const int32_t shapes[][2][5] = {{{4, 1, 3, 17, 17}, {0}},
                                         {{4, 1, 3, 17, 17}, {4, 1, 3, 17, 17}},
                                         {{3, 4, 7, 33}, {3, 4, 7, 1}},
                                         {{1, 1}, {2, 7, 3}},
                                         {{3, 3, 1, 5}, {3, 1, 4, 1}}};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
    wick_broadcast bc;
    make_broadcast(&bc, shapes[sh][0][0], &shapes[sh][0][1], shapes[sh][1][0], &shapes[sh][1][1]);
    wick_f32_binary_plan plan;
    if (!wick_f32_binary_plan_make(&bc, &plan)) continue;
    size_t na = 1, nb = 1, no = 1;
    for (int32_t i = 0; i < shapes[sh][0][0]; i++) na *= (size_t)shapes[sh][0][1 + i];
    for (int32_t i = 0; i < shapes[sh][1][0]; i++) nb *= (size_t)shapes[sh][1][1 + i];
    for (int32_t i = 0; i < bc.rank; i++) no *= (size_t)bc.dims[i];
    float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float));
    bool *got = malloc(no), *ref = malloc(no);
    for (size_t i = 0; i < na; i++) a[i] = (float)(int)(special_rand() / 3.0f);
    for (size_t i = 0; i < nb; i++) b[i] = (float)(int)(special_rand() / 3.0f);
    for (int op = WICK_COMPARE_EQUAL; op <= WICK_COMPARE_GREATER_EQUAL; op++) {
      wick_compare__reference((wick_compare_op)op, WICK_DTYPE_FLOAT32, &bc, a, b, ref);
      checks++;
      if (!wick_f32_compare_plan((wick_compare_op)op, &plan, a, b, got) ||
          memcmp(got, ref, no) != 0) {
        fail("compare op %d shape %zu differs from the reference", op, sh);
      }
    }
    free(a), free(b), free(got), free(ref);
  }
  /* REDUCE_ANY / REDUCE_ALL over contiguous axes, mostly-false and mostly-true inputs */
  static const int32_t rdims[][4] = {{1, 3, 197, 197}, {2, 5, 1, 7}, {3, 4, 5, 6}, {1, 1, 1, 9}};
  for (size_t t = 0; t < 4; t++)
    for (int dense = 0; dense <= 1; dense++)
      for (int is_any = 0; is_any <= 1; is_any++) {
        const int32_t *d = rdims[t];
        bool reduced[4] = {false, false, t % 2 == 0, true};
        size_t outer, mid, inner, n = (size_t)d[0] * d[1] * d[2] * d[3];
        if (!wick_f32_reduce_plan_make(4, d, reduced, &outer, &mid, &inner)) continue;
        bool *in = malloc(n), *got = malloc(outer * inner), *ref = malloc(outer * inner);
        for (size_t i = 0; i < n; i++) in[i] = dense ? frand() > -0.995f : frand() > 0.995f;
        wick_reduce__reference(is_any ? WICK_REDUCE_ANY : WICK_REDUCE_ALL, WICK_DTYPE_BOOL, 4, d,
                               reduced, in, ref);
        wick_bool_reduce_mid(is_any, outer, mid, inner, in, got);
        checks++;
        if (memcmp(got, ref, outer * inner) != 0) {
          fail("reduce %s shape %zu differs from the reference", is_any ? "any" : "all", t);
        }
        free(in), free(got), free(ref);
      }
  /* SELECT rows: condition per row, per element, scalar; x/y full or broadcast; bytes also on
   * every select8 kernel the host runs (attention's mask over heads, rows with vector tails,
   * scalar x or y) */
  static const int32_t sel[][3][4] = {/* dims of cond, x, y (rank 4) */
                                      {{1, 3, 197, 1}, {1, 3, 197, 197}, {1, 3, 197, 197}},
                                      {{1, 3, 5, 7}, {1, 3, 5, 7}, {1, 1, 1, 7}},
                                      {{1, 1, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}},
                                      {{2, 1, 4, 1}, {2, 3, 4, 5}, {1, 1, 1, 1}},
                                      {{4, 1, 32, 32}, {4, 12, 32, 32}, {1, 1, 1, 1}},
                                      {{1, 2, 3, 77}, {1, 1, 1, 1}, {1, 2, 3, 77}},
                                      {{1, 1, 5, 47}, {1, 1, 5, 47}, {1, 1, 5, 47}},
                                      {{1, 1, 1, 31}, {1, 1, 1, 31}, {1, 1, 1, 1}}};
  const size_t cases = sizeof sel / sizeof sel[0];
  for (size_t t = 0; t < cases; t++)
    for (size_t esize = 1; esize <= 8; esize *= 2) {
      wick_select_shape ss;
      memset(&ss, 0, sizeof ss);
      ss.rank = 4;
      int64_t sc = 1, sx = 1, sy = 1, total = 1;
      for (int32_t k = 3; k >= 0; k--) {
        int32_t dc = sel[t][0][k], dx = sel[t][1][k], dy = sel[t][2][k];
        ss.dims[k] = dc > dx ? (dc > dy ? dc : dy) : (dx > dy ? dx : dy);
        ss.cond_strides[k] = dc == 1 ? 0 : sc;
        ss.x_strides[k] = dx == 1 ? 0 : sx;
        ss.y_strides[k] = dy == 1 ? 0 : sy;
        sc *= dc, sx *= dx, sy *= dy, total *= ss.dims[k];
      }
      bool *cond = malloc((size_t)sc);
      uint8_t *x = malloc((size_t)sx * esize), *y = malloc((size_t)sy * esize);
      uint8_t *got = malloc((size_t)total * esize), *ref = malloc((size_t)total * esize);
      for (int64_t i = 0; i < sc; i++) cond[i] = frand() > 0.0f;
      for (size_t i = 0; i < (size_t)sx * esize; i++) x[i] = (uint8_t)(i * 7 + 1);
      for (size_t i = 0; i < (size_t)sy * esize; i++) y[i] = (uint8_t)(i * 13 + 200);
      wick_select__reference(esize, &ss, cond, x, y, ref);
      for (size_t i = 0; i <= (esize == 1 ? wick_f32_kernels_count() : 0); i++) {
        wick_select8_fn select8 = NULL; /* i == 0: the portable rows */
        const char *isa = "portable";
        if (i > 0) {
          bool runnable;
          const wick_f32_kernels *kern = wick_f32_kernels_at(i - 1, &runnable);
          if (!runnable || kern->select8 == NULL) continue;
          select8 = kern->select8, isa = kern->isa;
        }
        memset(got, 0xEE, (size_t)total * esize);
        wick_select_rows(esize, &ss, cond, x, y, got, select8);
        checks++;
        if (memcmp(got, ref, (size_t)total * esize) != 0)
          fail("select case %zu esize %zu (%s) differs from the reference", t, esize, isa);
      }
      if (esize == 1) { /* the vector blend alone over one run, against the portable form */
        uint8_t *one = malloc((size_t)total);
        for (size_t i = 0; i < wick_f32_kernels_count(); i++) {
          bool runnable;
          const wick_f32_kernels *kern = wick_f32_kernels_at(i, &runnable);
          /* one run: the condition whole, each value whole or a scalar */
          if (!runnable || kern->select8 == NULL || sc != total || (sx != 1 && sx != total) ||
              (sy != 1 && sy != total))
            continue;
          const bool xs = sx == 1, ys = sy == 1;
          wick_select8((size_t)total, cond, x, xs, y, ys, one);
          kern->select8((size_t)total, cond, x, xs, y, ys, got);
          checks++;
          if (memcmp(got, one, (size_t)total) != 0)
            fail("select8 %s case %zu differs from the portable blend", kern->isa, t);
        }
        free(one);
      }
      free(cond), free(x), free(y), free(got), free(ref);
    }
  printf("compare, reduce any/all, select rows: %s\n", verdict(before));
}

/* ------------------------------------------------------------------ quantize */

/* Inputs for QUANTIZE with `scale`: random magnitudes, exact halves and their
 * neighbours, values beyond the 8-bit range and float's, NaN, ±inf, -0. */
static float quantize_input(size_t i, float scale) {
  const float r = frand();
  switch (i % 8) {
    case 0: return r * 200.0f * scale;
    case 1: return ((float)(int)(r * 300.0f) + 0.5f) * scale; /* a half (exact for 2^k scales) */
    case 2:
      return nextafterf(((float)(int)(r * 300.0f) + 0.5f) * scale, r > 0 ? INFINITY : -INFINITY);
    case 3: return r * 3.0e38f;
    case 4: return r * 2.0f;
    case 5: {
      static const float sp[] = {NAN,        INFINITY,    -INFINITY,   -0.0f,
                                 0.0f,       1e-40f,      0.49999997f, -0.49999997f,
                                 8388608.5f, 16777216.0f, -8388607.5f, 2.5f,
                                 -2.5f,      127.5f,      -128.5f,     255.5f};
      return sp[(size_t)((r + 1.0f) * 7.99f)];
    }
    default: return special_rand() * scale * 50.0f;
  }
}

static void test_quantize8(const wick_f32_kernels *kern) {
  if (kern->quantize8 == NULL || kern->dequantize8 == NULL) return;
  static const float scales[] = {1.0f,    0.5f,   1.0f / 3.0f, 0.0078125f,
                                 0.0203f, 1e-30f, 3.0e38f,     1.4e-45f};
  static const int32_t zps[] = {-128, 0, 5, 127, 200, 255, -65536, 65536, 300};
  static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 100, 1027};
  int bad = 0;
  for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
    for (size_t zi = 0; zi < sizeof zps / sizeof zps[0]; zi++)
      for (int is_unsigned = 0; is_unsigned < 2; is_unsigned++)
        for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni++) {
          const size_t n = sizes[ni];
          float scale = scales[si];
          int32_t zp = zps[zi];
          const wick_dtype type = is_unsigned ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
          const wick_quant_layout layout = {(int64_t)n, 1, 1, &scale, &zp};
          float *x = malloc((n + 1) * sizeof(float));
          uint8_t *got = malloc(n + 1), *ref = malloc(n + 1);
          for (size_t i = 0; i < n; i++) x[i] = quantize_input(i, scale);
          memset(got, 0xA5, n + 1);
          kern->quantize8(n, x, got, scale, zp, is_unsigned);
          wick_quantize__reference(type, &layout, x, ref);
          checks++;
          for (size_t i = 0; i < n; i++)
            if (got[i] != ref[i] && bad++ < 5)
              fprintf(stderr,
                      "FAIL: %s quantize8 %s scale %g zp %d: x[%zu] = %.9g -> %d, "
                      "reference %d\n",
                      kern->isa, is_unsigned ? "uint8" : "int8", (double)scale, zp, i, (double)x[i],
                      got[i], ref[i]);
          if (got[n] != 0xA5 && bad++ < 5)
            fprintf(stderr, "FAIL: %s quantize8 wrote past %zu elements\n", kern->isa, n);
          /* DEQUANTIZE of every byte value (cycled), same parameters */
          float *fg = malloc((n + 1) * sizeof(float)), *fr = malloc((n + 1) * sizeof(float));
          for (size_t i = 0; i < n; i++) ref[i] = (uint8_t)(i * 37u + si);
          fg[n] = 42.0f;
          kern->dequantize8(n, ref, fg, scale, zp, is_unsigned);
          wick_dequantize__reference(type, &layout, ref, fr);
          checks++;
          for (size_t i = 0; i < n; i++)
            if (!same_bits_or_nan(fg[i], fr[i]) && bad++ < 5)
              fprintf(stderr,
                      "FAIL: %s dequantize8 scale %g zp %d: q = %d -> %.9g, "
                      "reference %.9g\n",
                      kern->isa, (double)scale, zp, ref[i], (double)fg[i], (double)fr[i]);
          if (fg[n] != 42.0f && bad++ < 5)
            fprintf(stderr, "FAIL: %s dequantize8 wrote past %zu elements\n", kern->isa, n);
          free(x), free(got), free(ref), free(fg), free(fr);
        }
  failures += bad;
}

/* QUANTIZE float32 -> int16 and DEQUANTIZE back (the 16x8 scheme's boundaries) against the
 * reference: the 8-bit test's inputs at scales that also reach past the int16 range, every
 * tail length; DEQUANTIZE of values over the whole int16 range. */
static void test_quantize16(const wick_f32_kernels *kern) {
  if (kern->quantize16 == NULL || kern->dequantize16 == NULL) return;
  static const float scales[] = {1.0f,   0.5f,    1.0f / 3.0f, 0.0078125f,       0.0203f,
                                 1e-30f, 3.0e38f, 1.4e-45f,    3.0517578125e-05f};
  static const int32_t zps[] = {0, -1, 7, -32768, 32767, -65536, 65536};
  static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 100, 1027};
  int bad = 0;
  for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
    for (size_t zi = 0; zi < sizeof zps / sizeof zps[0]; zi++)
      for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni++) {
        const size_t n = sizes[ni];
        float scale = scales[si];
        int32_t zp = zps[zi];
        const wick_quant_layout layout = {(int64_t)n, 1, 1, &scale, &zp};
        float *x = malloc((n + 1) * sizeof(float));
        int16_t *got = malloc((n + 1) * sizeof(int16_t));
        int16_t *ref = malloc((n + 1) * sizeof(int16_t));
        for (size_t i = 0; i < n; i++)
          x[i] = i % 3 == 2 ? quantize_input(i, scale) * 200.0f : quantize_input(i, scale);
        for (size_t i = 0; i <= n; i++) got[i] = 0x5A5A;
        kern->quantize16(n, x, got, scale, zp);
        wick_quantize__reference(WICK_DTYPE_INT16, &layout, x, ref);
        checks++;
        for (size_t i = 0; i < n; i++)
          if (got[i] != ref[i] && bad++ < 5)
            fprintf(stderr,
                    "FAIL: %s quantize16 scale %g zp %d: x[%zu] = %.9g -> %d, reference %d\n",
                    kern->isa, (double)scale, zp, i, (double)x[i], got[i], ref[i]);
        if (got[n] != 0x5A5A && bad++ < 5)
          fprintf(stderr, "FAIL: %s quantize16 wrote past %zu elements\n", kern->isa, n);
        float *fg = malloc((n + 1) * sizeof(float)), *fr = malloc((n + 1) * sizeof(float));
        for (size_t i = 0; i < n; i++)
          ref[i] = (int16_t)(i % 5 == 0 ? (i % 2 ? 32767 : -32768)
                                        : (int32_t)((i * 7919u + si) % 65536u) - 32768);
        fg[n] = 42.0f;
        kern->dequantize16(n, ref, fg, scale, zp);
        wick_dequantize__reference(WICK_DTYPE_INT16, &layout, ref, fr);
        checks++;
        for (size_t i = 0; i < n; i++)
          if (!same_bits_or_nan(fg[i], fr[i]) && bad++ < 5)
            fprintf(stderr,
                    "FAIL: %s dequantize16 scale %g zp %d: q = %d -> %.9g, reference %.9g\n",
                    kern->isa, (double)scale, zp, ref[i], (double)fg[i], (double)fr[i]);
        if (fg[n] != 42.0f && bad++ < 5)
          fprintf(stderr, "FAIL: %s dequantize16 wrote past %zu elements\n", kern->isa, n);
        free(x), free(got), free(ref), free(fg), free(fr);
      }
  failures += bad;
}

/* The hybrid ops' row quantization (wick_hybrid_quantize_row on these kernels) against the
 * reference, symmetric and asymmetric, on rows of QUANTIZE's edge inputs (halves and their
 * neighbours after the scaling, NaN, ±inf, -0) and on plain random rows, every tail length. */
static void test_hybrid_rows(const wick_f32_kernels *kern) {
  if (kern->row_range == NULL || kern->hybrid_quantize == NULL) return;
  static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 17, 33, 384, 1027};
  int bad = 0;
  for (int kind = 0; kind < 4; kind++)
    for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni++)
      for (int asymmetric = 0; asymmetric < 2; asymmetric++) {
        const size_t n = sizes[ni];
        float *x = malloc((n + 1) * sizeof(float));
        int8_t *got = malloc(n + 1), *ref = malloc(n + 1);
        for (size_t i = 0; i < n; i++)
          x[i] = kind == 0   ? frand() * 5.0f
                 : kind == 1 ? quantize_input(i + 1, 1.0f / 127.0f) /* no NaN first */
                 : kind == 2 ? (float)(int)(frand() * 127.0f) + 0.5f
                             : frand() * 1e-3f - 2e-3f; /* all negative */
        if (kind == 1 && n > 0 && x[0] != x[0]) x[0] = 1.0f;
        memset(got, 0x5A, n + 1);
        int32_t off_got = -7, off_ref = -7;
        const float s_got = wick_hybrid_quantize_row(kern, n, x, got, asymmetric, &off_got);
        const float s_ref = wick_hybrid_quantize_row(NULL, n, x, ref, asymmetric, &off_ref);
        checks++;
        if (!same_bits_or_nan(s_got, s_ref) || off_got != off_ref || got[n] != 0x5A ||
            (n && memcmp(got, ref, n) != 0)) {
          size_t i = 0;
          while (i < n && got[i] == ref[i]) i++;
          if (bad++ < 5)
            fprintf(stderr,
                    "FAIL: %s hybrid row kind %d n %zu %s: scale %.9g / %.9g, "
                    "offset %d / %d, first difference at %zu\n",
                    kern->isa, kind, n, asymmetric ? "asymmetric" : "symmetric", (double)s_got,
                    (double)s_ref, off_got, off_ref, i);
        }
        free(x), free(got), free(ref);
      }
  failures += bad;
}

/* The hybrid depthwise rows (multiplier 1) against wick_hybrid_depthwise_rows, bit for bit:
 * channel counts around the kernel's 16- and 8-wide blocks, 3x3 / 5x5 / 1x2 filters with
 * strides, dilations and padding, the image's zero point at both ends of the int8 range (the
 * largest products), -128 filter values, both rescale orders, with and without a bias,
 * clamped and not; outputs past the rows asked for stay untouched. */
static void test_hybrid_dwconv(const wick_f32_kernels *kern) {
  if (kern->hybrid_dwconv == NULL) return;
  static const int32_t channels[] = {1, 7, 8, 9, 16, 17, 24, 33, 144};
  static const int32_t filters[][6] = {/* k_h, k_w, stride, dilation, pad_top, pad_left */
                                       {3, 3, 1, 1, 1, 1}, {3, 3, 2, 1, 0, 1}, {5, 5, 1, 1, 2, 2},
                                       {5, 5, 2, 1, 1, 2}, {3, 3, 1, 2, 2, 2}, {1, 2, 3, 1, 0, 0}};
  static const int32_t offsets[] = {0, -128, 127, 5};
  int bad = 0;
  for (size_t ci = 0; ci < sizeof channels / sizeof channels[0]; ci++)
    for (size_t fi = 0; fi < sizeof filters / sizeof filters[0]; fi++)
      for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++) {
        const int32_t *f = filters[fi], c = channels[ci];
        wick_conv_shape s = {1,    9,    11,   c,    0,    0,    c, f[0], f[1],
                             f[2], f[2], f[3], f[3], f[4], f[5], 1, 1};
        s.out_h = (s.in_h + 2 * f[4] - ((f[0] - 1) * f[3] + 1)) / f[2] + 1;
        s.out_w = (s.in_w + 2 * f[5] - ((f[1] - 1) * f[3] + 1)) / f[2] + 1;
        const size_t image = (size_t)s.in_h * (size_t)s.in_w * (size_t)c;
        const size_t taps = (size_t)f[0] * (size_t)f[1], out_n = (size_t)s.out_h * s.out_w * c;
        int8_t *in = malloc(image), *w = malloc(taps * (size_t)c);
        float *scales = malloc((size_t)c * sizeof(float)), *bias = rand_buf((size_t)c);
        float *got = malloc(out_n * sizeof(float)), *ref = malloc(out_n * sizeof(float));
        uint32_t *acc = malloc((size_t)c * sizeof(uint32_t));
        for (size_t i = 0; i < image; i++)
          in[i] = (int8_t)(oi == 1 ? (i % 3 ? 127 : -128) : (int32_t)(rng_step() >> 56) - 128);
        for (size_t i = 0; i < taps * (size_t)c; i++)
          w[i] = (int8_t)(oi == 1 && i % 2 ? -128 : (int32_t)(rng_step() >> 56) - 128);
        for (int32_t i = 0; i < c; i++) scales[i] = (frand() + 1.5f) * 1e-3f;
        for (int variant = 0; variant < 4; variant++) {
          const bool conv_rescale = variant & 1, with_bias = variant & 2;
          const float lo = variant == 3 ? -0.25f : -INFINITY, hi = variant == 3 ? 2.0f : INFINITY;
          const float in_scale = 0.0123f * (float)(variant + 1);
          for (size_t i = 0; i < out_n; i++) got[i] = ref[i] = 42.0f;
          const int32_t y0 = variant == 2 ? 1 : 0, y1 = s.out_h - (variant == 2 && s.out_h > 2);
          kern->hybrid_dwconv(&s, in, offsets[oi], in_scale, w, scales, conv_rescale,
                              with_bias ? bias : NULL, got, lo, hi, y0, y1);
          wick_hybrid_depthwise_rows(&s, in, offsets[oi], in_scale, w, scales, conv_rescale,
                                     with_bias ? bias : NULL, ref, lo, hi, y0, y1, acc);
          checks++;
          for (size_t i = 0; i < out_n; i++)
            if (!same_bits_or_nan(got[i], ref[i])) {
              if (bad++ < 5)
                fprintf(stderr,
                        "FAIL: %s hybrid dwconv c %d filter %zu offset %d variant %d: "
                        "output %zu is %.9g, reference %.9g\n",
                        kern->isa, c, fi, offsets[oi], variant, i, (double)got[i], (double)ref[i]);
              break;
            }
        }
        free(in), free(w), free(scales), free(bias), free(got), free(ref), free(acc);
      }
  failures += bad;
}

/* The hybrid GEMM rescale against the ops' scalar loops (the expressions kernels.h gives),
 * both orders, with and without zero-point sums, per-channel scales and a bias, clamped and
 * not, sums near the int32 limits (the zero-point term wraps), every tail length. */
static void test_hybrid_rescale(const wick_f32_kernels *kern) {
  if (kern->hybrid_rescale == NULL) return;
  int bad = 0;
  for (size_t n = 0; n <= 37; n++)
    for (int variant = 0; variant < 16; variant++) {
      const bool conv_order = variant & 1, with_sums = variant & 2, with_bias = variant & 4,
                 clamped = variant & 8, per_channel = conv_order || n % 2;
      int32_t *acc = malloc((n + 1) * sizeof(int32_t));
      uint32_t *sums = malloc((n + 1) * sizeof(uint32_t));
      float *scales = malloc((n + 1) * sizeof(float)), *bias = rand_buf(n + 1);
      float *got = malloc((n + 1) * sizeof(float)), *ref = malloc((n + 1) * sizeof(float));
      for (size_t c = 0; c < n; c++) {
        acc[c] = c % 5 == 0 ? INT32_MAX - (int32_t)c : (int32_t)(rng_step() >> 40) - (1 << 23);
        sums[c] = (uint32_t)(rng_step() >> 32);
        scales[c] = (frand() + 1.5f) * 1e-4f;
      }
      const uint32_t offset = with_sums ? (uint32_t)-77 : 0;
      const float row_scale = 0.0371f, lo = clamped ? -3.0f : -INFINITY,
                  hi = clamped ? 5.0f : INFINITY;
      for (size_t c = 0; c < n; c++) {
        const uint32_t u = (uint32_t)acc[c] - (with_sums ? sums[c] * offset : 0u);
        const float d = (float)(int32_t)u;
        float y;
        if (conv_order) {
          y = d * scales[c] * row_scale;
          if (with_bias) y += bias[c];
        } else {
          y = with_bias ? bias[c] : 0.0f;
          y += d * (per_channel ? row_scale * scales[c] : row_scale);
        }
        ref[c] = y < lo ? lo : (y > hi ? hi : y);
      }
      got[n] = 42.0f;
      kern->hybrid_rescale(n, acc, with_sums ? sums : NULL, offset, per_channel ? scales : NULL,
                           row_scale, conv_order, with_bias ? bias : NULL, lo, hi, got);
      checks++;
      for (size_t c = 0; c <= n; c++)
        if (c == n ? got[n] != 42.0f : !same_bits_or_nan(got[c], ref[c])) {
          if (bad++ < 5)
            fprintf(stderr, "FAIL: %s hybrid rescale n %zu variant %d: output %zu differs\n",
                    kern->isa, n, variant, c);
          break;
        }
      free(acc), free(sums), free(scales), free(bias), free(got), free(ref);
    }
  failures += bad;
}

/* RESIZE_BILINEAR against the reference rows, bit for bit: up- and downscaling, both
 * coordinate conventions and neither, channel counts around the vector width, more columns
 * than one block of taps (template/resize.h), row ranges that start mid-image. */
static void test_resize_bilinear(const wick_f32_kernels *kern) {
  if (kern->resize_bilinear == NULL) return;
  static const int32_t sizes[][6] = {/* batch, in_h, in_w, channels, out_h, out_w */
                                     {1, 4, 5, 1, 8, 10},     {2, 7, 3, 9, 14, 301},
                                     {1, 16, 16, 16, 9, 7},   {1, 1, 1, 3, 5, 5},
                                     {1, 32, 32, 24, 64, 64}, {1, 5, 130, 17, 3, 129}};
  int bad = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
    for (int mode = 0; mode < 3; mode++) {
      const int32_t *z = sizes[si];
      const wick_resize_shape s = {z[0], z[1], z[2], z[3], z[4], z[5], mode == 1, mode == 2};
      const size_t in_n = (size_t)z[0] * z[1] * z[2] * z[3];
      const size_t out_n = (size_t)z[0] * z[4] * z[5] * z[3];
      float *in = rand_buf(in_n), *got = malloc(out_n * sizeof(float)),
            *ref = malloc(out_n * sizeof(float));
      for (size_t i = 0; i < out_n; i++) got[i] = ref[i] = 42.0f;
      const int64_t rows = (int64_t)z[0] * z[4], r0 = rows > 2 ? 1 : 0;
      kern->resize_bilinear(&s, in, got, r0, rows);
      wick_f32_resize_bilinear_rows__reference(&s, in, ref, r0, rows);
      checks++;
      for (size_t i = 0; i < out_n; i++)
        if (!same_bits_or_nan(got[i], ref[i])) {
          if (bad++ < 5)
            fprintf(stderr, "FAIL: %s resize_bilinear size %zu mode %d: output %zu %.9g / %.9g\n",
                    kern->isa, si, mode, i, (double)got[i], (double)ref[i]);
          break;
        }
      free(in), free(got), free(ref);
    }
  failures += bad;
}

/* PRELU against wick_f32_prelu_channels, bit for bit: random signs, -0, +-inf, NaN, every
 * tail length, in place and not. */
static void test_prelu(const wick_f32_kernels *kern) {
  if (kern->prelu == NULL) return;
  int bad = 0;
  for (size_t n = 0; n <= 41; n++)
    for (int in_place = 0; in_place < 2; in_place++) {
      float *x = rand_buf(n + 1), *alpha = rand_buf(n + 1), *got = malloc((n + 1) * sizeof(float));
      float *ref = malloc((n + 1) * sizeof(float));
      if (n > 3) x[1] = -0.0f, x[2] = NAN, x[3] = -INFINITY, alpha[0] = -2.5f;
      wick_f32_prelu_channels(1, (int64_t)n, x, alpha, ref);
      got[n] = 42.0f;
      if (in_place) {
        memcpy(got, x, n * sizeof(float));
        kern->prelu(n, got, alpha, got);
      } else {
        kern->prelu(n, x, alpha, got);
      }
      checks++;
      for (size_t i = 0; i <= n; i++)
        if (i == n ? got[n] != 42.0f : !same_bits_or_nan(got[i], ref[i])) {
          if (bad++ < 5) fprintf(stderr, "FAIL: %s prelu n %zu: element %zu\n", kern->isa, n, i);
          break;
        }
      free(x), free(alpha), free(got), free(ref);
    }
  failures += bad;
}

/* Every float16 bit pattern (NaN payloads, signaling ones included, subnormals, -0) converts
 * to the reference's float32 bits, at every offset of the 8-element steps and the tail. */
static void test_f16_to_f32(const wick_f32_kernels *kern) {
  if (kern->f16_to_f32 == NULL) return;
  const size_t count = 65536 + 7;
  uint16_t *h = malloc(count * sizeof(uint16_t));
  float *got = malloc((count + 1) * sizeof(float));
  for (size_t i = 0; i < count; i++) h[i] = (uint16_t)(i * 40503u); /* a permutation, then 7 */
  int bad = 0;
  for (size_t start = 0; start < 8; start++) {
    const size_t n = count - start;
    got[n] = 42.0f;
    kern->f16_to_f32(n, h + start, got);
    checks++;
    for (size_t i = 0; i <= n; i++) {
      const float want = i == n ? 42.0f : wick_f16_to_f32(h[start + i]);
      if (memcmp(&got[i], &want, sizeof want) != 0) {
        if (bad++ < 5)
          fprintf(stderr, "FAIL: %s f16_to_f32 start %zu: element %zu (0x%04x)\n", kern->isa, start,
                  i, i < n ? h[start + i] : 0);
        break;
      }
    }
  }
  failures += bad;
  free(h), free(got);
}

/* ------------------------------------------------------------------ main */

int main(void) {
  char desc[256];
  wick_cpu_describe(wick_cpu_detect(), desc, sizeof desc);
  printf("host features: %s\n", desc[0] ? desc : "(none)");
  uint32_t f = wick_cpu_detect();
  checks++;
  if ((f & WICK_CPU_AVX512VL) && !(f & WICK_CPU_AVX512F)) {
    fail("AVX512VL without AVX512F");
  }
  if (wick_f32_kernels_select(true) != NULL) {
    fail("forcing the reference kernels still selected optimized ones");
  }
  const wick_f32_kernels *best = wick_f32_kernels_select(false);
  printf("selected: %s\n", best ? best->isa : "reference");
#if defined(__aarch64__) && defined(__linux__)
  /* Every AArch64 Linux CPU has NEON: detection must find it unless capped. */
  checks++;
  if (getenv("WICK_MAX_ISA") == NULL && (best == NULL || strcmp(best->isa, "neon") != 0)) {
    fail("AArch64 host but the NEON kernels were not selected");
  }
#endif
  test_gemm_pack_layout();
  test_transpose();
  test_logical();
  /* every table of the inventory this CPU runs */
  for (size_t i = 0; i < wick_f32_kernels_count(); i++) {
    bool runnable;
    const wick_f32_kernels *kern = wick_f32_kernels_at(i, &runnable);
    if (!runnable) {
      printf("%s: skipped (this CPU lacks it)\n", kern->isa);
      continue;
    }
    test_gemm(kern);
    test_gemm_inplace(kern);
    test_conv(kern);
    test_gemm_tails(kern);
    test_winograd(kern);
    test_dwconv(kern);
    test_unary(kern);
    test_binary(kern);
    test_softmax_and_sums(kern);
    test_pools(kern);
    test_quantize8(kern);
    test_quantize16(kern);
    test_hybrid_rows(kern);
    test_hybrid_dwconv(kern);
    test_hybrid_rescale(kern);
    test_resize_bilinear(kern);
    test_prelu(kern);
    test_f16_to_f32(kern);
  }
  return finish();
}
