/*
 * test_q4_kernels.c — the blockwise int4 FULLY_CONNECTED kernels
 * (src/kernels/q4.h): every kernel this CPU runs (its row layout and block
 * sums) against the reference loop (exact int32 equality) on edge shapes —
 * one to nine rows, 1 to 19 blocks (the AVX2 kernel reduces eight at a time, the NEON ones
 * four rows at a time),
 * blocks of 2 to 256 values, extreme weights (-8, 7), inputs (-128, 127) and
 * zero points; the GEMM form (a group of eight outputs unpacked once, the
 * float steps included) against the reference sums followed by the op's
 * float code (bit-identical floats) for 1 to 19 rows (one call takes up to eight), blocks of 32
 * to 256,
 * with and without bias and clamp, and the one-row form (gemv: the weights as they lie) on
 * each of those rows (a kernel may have either form: plain NEON has the one-row form alone); and
 * the dynamic row quantization on rows that are all zero, all positive, all negative, and hold NaN
 * and infinities (no undefined conversion, values in range), and bfloat16 rounding (ties to even).
 *
 * Run: build/tests/unit/test_q4_kernels (ctest runs it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/q4.h"

#define KERNEL_TEST_SEED 0x6a09e667f3bcc909u
#include "kernel_test.h"

static int32_t irand(int32_t lo, int32_t hi) {
  return lo + (int32_t)((uint32_t)(rng_step() >> 33) % (uint32_t)(hi - lo + 1));
}

/* Block sums of `kern` on rows prepared from x_q - zp (xd) and zp, against the reference. */
static void check_block_sums(const wick_q4_kernel *kern, size_t m, size_t k, size_t bs,
                             bool extreme) {
  int16_t *xd = malloc(m * k * sizeof *xd);
  int32_t *zp = malloc(m * sizeof *zp);
  const size_t cols = 3; /* weight rows per call */
  uint8_t *w = malloc(cols * k / 2);
  const size_t nb = k / bs, count = cols * m * nb;
  int32_t *want = malloc(count * sizeof *want), *got = malloc(count * sizeof *got);
  for (size_t i = 0; i < m; i++) {
    zp[i] = extreme ? (i % 2 ? 127 : -128) : irand(-128, 127);
    for (size_t p = 0; p < k; p++) {
      /* x_q in [-128, 127]: xd = x_q - zp; extreme rows hit both ends */
      int32_t xq = extreme ? (p % 3 ? 127 : -128) : irand(-128, 127);
      xd[i * k + p] = (int16_t)(xq - zp[i]);
    }
  }
  for (size_t i = 0; i < cols * k / 2; i++)
    w[i] = extreme ? (i % 2 ? 0x88 : 0x77) : (uint8_t)irand(0, 255);
  const wick_q4_kernel *ref = wick_q4_kernel_reference();
  const size_t rs = ref->row_bytes(k, bs), ks = kern->row_bytes(k, bs);
  uint8_t *ref_rows = calloc(m, rs), *rows = calloc(m, ks);
  for (size_t i = 0; i < m; i++) {
    ref->prepare(k, bs, xd + i * k, zp[i], ref_rows + i * rs);
    kern->prepare(k, bs, xd + i * k, zp[i], rows + i * ks);
  }
  ref->sums(m, k, bs, ref_rows, rs, cols, w, want);
  /* the reference's sums are the definition: check one by hand */
  int32_t direct = 0;
  for (size_t p = 0; p < bs; p++) {
    int32_t nib = (w[p / 2] >> (p % 2 ? 4 : 0)) & 15;
    direct += xd[p] * (nib >= 8 ? nib - 16 : nib);
  }
  checks++;
  if (direct != want[0]) fail("reference block sum %d, by hand %d", want[0], direct);
  memset(got, 0x5a, count * sizeof *got);
  kern->sums(m, k, bs, rows, ks, cols, w, got);
  checks++;
  if (memcmp(want, got, count * sizeof *got) != 0)
    fail("%s block sums m=%zu k=%zu bs=%zu%s differ from the reference", kern->isa, m, k, bs,
         extreme ? " (extreme)" : "");
  free(xd), free(zp), free(w), free(want), free(got), free(ref_rows), free(rows);
}

/* The float steps of src/ops/fully_connected.c (blockwise_columns) on reference sums. */
static float finish_output(const int32_t *sums, size_t nb, size_t t, const float *scales,
                           float row_scale, const float *bias, float lo, float hi) {
  float acc = 0.0f;
  for (size_t b = 0; b < nb; b++)
    acc += (float)sums[b * WICK_Q4_GROUP + t] * scales[b * WICK_Q4_GROUP + t];
  float y = acc * row_scale + (bias ? bias[t] : 0.0f);
  return y < lo ? lo : (y > hi ? hi : y);
}

/* The GEMM form of `kern` for m rows x one group of outputs against the reference. */
static void check_gemm(const wick_q4_kernel *kern, size_t m, size_t k, size_t bs, bool extreme,
                       bool with_bias, bool clamp) {
  const size_t nb = k / bs, g = WICK_Q4_GROUP;
  int16_t *xd = malloc(m * k * sizeof *xd);
  int32_t *zp = malloc(m * sizeof *zp);
  uint8_t *w = malloc(g * k / 2);
  float *scales = malloc(nb * g * sizeof *scales), *row_scales = malloc(m * sizeof(float));
  float bias[WICK_Q4_GROUP];
  for (size_t i = 0; i < m; i++) {
    zp[i] = extreme ? (i % 2 ? 127 : -128) : irand(-128, 127);
    row_scales[i] = (float)irand(1, 1000) / 3071.0f;
    for (size_t p = 0; p < k; p++) {
      int32_t xq = extreme ? (p % 3 ? 127 : -128) : irand(-128, 127);
      xd[i * k + p] = (int16_t)(xq - zp[i]);
    }
  }
  for (size_t i = 0; i < g * k / 2; i++)
    w[i] = extreme ? (i % 2 ? 0x88 : 0x77) : (uint8_t)irand(0, 255);
  for (size_t i = 0; i < nb * g; i++)
    scales[i] = wick_q4_bf16_round((float)irand(-5000, 5000) / 65536.0f);
  for (size_t t = 0; t < g; t++) bias[t] = (float)irand(-300, 300) / 7.0f;
  const float lo = clamp ? 0.0f : -INFINITY, hi = clamp ? 6.0f : INFINITY;
  const wick_q4_kernel *ref = wick_q4_kernel_reference();
  const size_t rs = ref->row_bytes(k, bs), ks = kern->row_bytes(k, bs);
  uint8_t *ref_rows = calloc(m, rs), *rows = calloc(m, ks);
  for (size_t i = 0; i < m; i++) {
    ref->prepare(k, bs, xd + i * k, zp[i], ref_rows + i * rs);
    kern->prepare(k, bs, xd + i * k, zp[i], rows + i * ks);
  }
  int32_t *sums = malloc(m * nb * g * sizeof *sums);
  ref->sums(m, k, bs, ref_rows, rs, g, w, sums);
  float *want = malloc(m * g * sizeof *want), *got = malloc(m * g * sizeof *got);
  for (size_t i = 0; i < m; i++)
    for (size_t t = 0; t < g; t++)
      want[i * g + t] = finish_output(sums + i * nb * g, nb, t, scales, row_scales[i],
                                      with_bias ? bias : NULL, lo, hi);
  if (kern->gemv != NULL) { /* the one-row form, row by row */
    memset(got, 0x5a, m * g * sizeof *got);
    for (size_t i = 0; i < m; i++)
      kern->gemv(k, bs, rows + i * ks, row_scales[i], w, scales, with_bias ? bias : NULL, lo, hi,
                 got + i * g);
    checks++;
    if (memcmp(want, got, m * g * sizeof *got) != 0)
      fail("%s gemv m=%zu k=%zu bs=%zu%s%s%s differs from the reference", kern->isa, m, k, bs,
           extreme ? " (extreme)" : "", with_bias ? " (bias)" : "", clamp ? " (clamp)" : "");
  }
  void *unpacked = NULL;
  if (kern->gemm != NULL) { /* (plain NEON has the one-row form alone) */
    unpacked = malloc(kern->unpacked_bytes(k, bs));
    kern->unpack(k, bs, w, unpacked);
    memset(got, 0x5a, m * g * sizeof *got);
    for (size_t r0 = 0; r0 < m; r0 += WICK_Q4_GEMM_ROWS) {
      const size_t rows_now = m - r0 < WICK_Q4_GEMM_ROWS ? m - r0 : WICK_Q4_GEMM_ROWS;
      kern->gemm(rows_now, k, bs, rows + r0 * ks, ks, row_scales + r0, unpacked, scales,
                 with_bias ? bias : NULL, lo, hi, got + r0 * g, g);
    }
    checks++;
    if (memcmp(want, got, m * g * sizeof *got) != 0)
      fail("%s gemm m=%zu k=%zu bs=%zu%s%s%s differs from the reference", kern->isa, m, k, bs,
           extreme ? " (extreme)" : "", with_bias ? " (bias)" : "", clamp ? " (clamp)" : "");
  }
  free(xd), free(zp), free(w), free(scales), free(row_scales), free(ref_rows), free(rows);
  free(sums), free(want), free(got), free(unpacked);
}

static void check_quantize(const char *what, const float *x, size_t k) {
  int16_t q[64];
  int32_t zp;
  float scale = wick_q4_quantize_row(k, x, q, &zp);
  checks++;
  if (zp < -128 || zp > 127) fail("quantize %s: zero point %d", what, zp);
  checks++;
  if (!(scale > 0.0f) && !isinf(scale)) fail("quantize %s: scale %g", what, (double)scale);
  for (size_t i = 0; i < k; i++) {
    checks++;
    if (q[i] < -255 || q[i] > 255) fail("quantize %s: value %zu is %d", what, i, q[i]);
    /* finite rows: the value comes back within half a step */
    if (isfinite(scale) && isfinite(x[i]) && fabsf((float)q[i] * scale - x[i]) > scale * 0.5001f)
      fail("quantize %s: value %zu (%g) comes back as %g", what, i, (double)x[i],
           (double)((float)q[i] * scale));
  }
}

/* A kernel's vector row quantization against wick_q4_quantize_row: the same scale, zero point
 * and values, for lengths around the vector widths and rows with NaN, infinities, -0 and
 * all-equal values. */
static void check_quantize_kernel(const wick_q4_kernel *kern) {
  static const size_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 576};
  float x[576];
  int16_t want[576], got[576];
  for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
    for (int variant = 0; variant < 6; variant++) {
      const size_t k = lengths[l];
      for (size_t i = 0; i < k; i++) {
        const float v = (float)irand(-100000, 100000) / (variant == 1 ? 7.0f : 977.0f);
        x[i] = variant == 2 ? fabsf(v) : (variant == 3 ? -fabsf(v) : v);
      }
      if (variant == 4) x[k / 2] = NAN, x[k - 1] = -0.0f;
      if (variant == 5) {
        for (size_t i = 0; i < k; i++) x[i] = 0.0f;
        x[0] = k > 1 ? INFINITY : 0.0f;
      }
      int32_t zp_want, zp_got;
      memset(got, 0x5a, sizeof got);
      const float s_want = wick_q4_quantize_row(k, x, want, &zp_want);
      const float s_got = kern->quantize_row(k, x, got, &zp_got);
      checks++;
      if (memcmp(&s_want, &s_got, sizeof s_got) != 0 || zp_want != zp_got ||
          memcmp(want, got, k * sizeof *got) != 0)
        fail("%s quantize_row k=%zu variant %d differs from wick_q4_quantize_row", kern->isa, k,
             variant);
    }
}

int main(void) {
  const wick_q4_kernel *kernels[5] = {wick_q4_kernel_reference(), wick_q4_kernel_avx2(),
                                      wick_q4_kernel_avx512vnni(), wick_q4_kernel_neondot(),
                                      wick_q4_kernel_neon()};
  static const char *const names[5] = {"reference", "avx2", "avx512vnni", "neondot", "neon"};
  static const size_t blocks[] = {2, 16, 32, 64, 96, 128, 256};
  for (size_t t = 0; t < 5; t++) {
    const wick_q4_kernel *kern = kernels[t];
    if (kern == NULL) {
      printf("block sums (%s): skipped, this CPU or architecture lacks it\n", names[t]);
      continue;
    }
    int before = failures;
    for (size_t m = 1; m <= 9; m++)
      for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        if (kern != kernels[0] && blocks[b] % 32 != 0) continue; /* (select never picks it) */
        for (size_t nb = 1; nb <= 19; nb += (nb < 9 ? 1 : 5)) {  /* past 8: the grouped path */
          check_block_sums(kern, m, blocks[b] * nb, blocks[b], false);
          check_block_sums(kern, m, blocks[b] * nb, blocks[b], m == 5);
        }
      }
    printf("block sums (%s): %s\n", kern->isa, verdict(before));
    if (kern->quantize_row != NULL) {
      before = failures;
      check_quantize_kernel(kern);
      printf("row quantization (%s): %s\n", kern->isa, verdict(before));
    }
    if (kern->gemm == NULL && kern->gemv == NULL) continue;
    before = failures;
    static const size_t gemm_blocks[] = {32, 64, 96, 128, 256};
    for (size_t m = 1; m <= 19; m += (m < 10 ? 1 : 3)) /* (past 8: two calls, the tails) */
      for (size_t b = 0; b < sizeof gemm_blocks / sizeof gemm_blocks[0]; b++)
        for (size_t nb = 1; nb <= 10; nb += (nb < 4 ? 1 : 3)) {
          check_gemm(kern, m, gemm_blocks[b] * nb, gemm_blocks[b], false, m % 2 == 0, m == 3);
          check_gemm(kern, m, gemm_blocks[b] * nb, gemm_blocks[b], true, m % 3 == 0, false);
        }
    printf("%s (%s): %s\n",
           kern->gemm == NULL ? "gemv" : (kern->gemv != NULL ? "gemm and gemv" : "gemm"), kern->isa,
           verdict(before));
  }
  checks++;
  if (wick_q4_kernel_select(false, 48) != wick_q4_kernel_reference())
    fail("blocks of 48 must take the reference kernel");

  int before = failures;
  float zeros[8] = {0}, pos[8], neg[8], mixed[64];
  for (int i = 0; i < 8; i++) pos[i] = 0.5f + (float)i, neg[i] = -0.25f * (float)(i + 1);
  for (int i = 0; i < 64; i++) mixed[i] = (float)irand(-1000, 3000) / 977.0f;
  check_quantize("zeros", zeros, 8);
  check_quantize("positive", pos, 8);
  check_quantize("negative", neg, 8);
  check_quantize("mixed", mixed, 64);
  float odd[6] = {1.0f, NAN, -2.0f, INFINITY, 3.0f, -INFINITY};
  check_quantize("nan and inf", odd, 6);
  int32_t zzp;
  float zs = wick_q4_quantize_row(8, zeros, (int16_t[8]){0}, &zzp);
  checks++;
  if (zs != 1.0f) fail("an all-zero row has scale %g, not 1", (double)zs);
  /* bfloat16: 1 + 2^-8 ties to 1 (even), 1 + 3 * 2^-8 ties up to 1 + 2^-6 */
  checks += 2;
  if (wick_q4_bf16_round(1.0f + 0x1p-8f) != 1.0f) fail("bf16 tie to even (down)");
  if (wick_q4_bf16_round(1.0f + 3 * 0x1p-8f) != 1.0f + 0x1p-6f) fail("bf16 tie to even (up)");
  printf("row quantization, bfloat16: %s\n", verdict(before));
  return finish();
}
