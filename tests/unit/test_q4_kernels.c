/*
 * test_q4_kernels.c — the blockwise int4 FULLY_CONNECTED kernels
 * (src/kernels/q4.h): every block-sum kernel this CPU runs against the
 * reference loop (exact int32 equality) on edge shapes — one to nine rows
 * (past the AVX2 kernel's four), blocks of 2 to 256 values (odd multiples of
 * 32 and sizes the vector kernel leaves to the loop), extreme weights (-8, 7)
 * and inputs (+-255); and the dynamic row quantization on rows that are all
 * zero, all positive, all negative, and hold NaN and infinities (no undefined
 * conversion, values in range), and bfloat16 rounding (ties to even).
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

static void check_block_sums(wick_q4_block_sums_fn fn, const char *isa, size_t m, size_t k,
                             size_t bs, bool extreme) {
  int16_t *x = malloc(m * k * sizeof *x);
  uint8_t *w = malloc(k / 2);
  int32_t *want = malloc(m * (k / bs) * sizeof *want), *got = malloc(m * (k / bs) * sizeof *got);
  for (size_t i = 0; i < m * k; i++)
    x[i] = (int16_t)(extreme ? (i % 3 ? 255 : -255) : irand(-255, 255));
  for (size_t i = 0; i < k / 2; i++)
    w[i] = extreme ? (i % 2 ? 0x88 : 0x77) : (uint8_t)irand(0, 255);
  wick_q4_block_sums__reference(m, k, bs, x, w, want);
  memset(got, 0x5a, m * (k / bs) * sizeof *got);
  fn(m, k, bs, x, w, got);
  checks++;
  if (memcmp(want, got, m * (k / bs) * sizeof *got) != 0)
    fail("%s block sums m=%zu k=%zu bs=%zu%s differ from the reference", isa, m, k, bs,
         extreme ? " (extreme)" : "");
  free(x), free(w), free(want), free(got);
}

static void check_quantize(const char *what, const float *x, size_t k) {
  int16_t q[64];
  float scale = wick_q4_quantize_row(k, x, q);
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

int main(void) {
  const char *isa;
  wick_q4_block_sums_fn best = wick_q4_block_sums_select(false, &isa);
  wick_q4_block_sums_fn ref = wick_q4_block_sums_select(true, NULL);
  static const size_t blocks[] = {2, 16, 32, 64, 96, 128, 256};
  int before = failures;
  for (size_t m = 1; m <= 9; m++)
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
      for (size_t nb = 1; nb <= 3; nb++) {
        check_block_sums(best, isa, m, blocks[b] * nb, blocks[b], false);
        check_block_sums(best, isa, m, blocks[b] * nb, blocks[b], m == 5);
      }
  check_block_sums(ref, "reference", 3, 64, 32, true);
  printf("block sums (%s): %s\n", isa, verdict(before));

  before = failures;
  float zeros[8] = {0}, pos[8], neg[8], mixed[64];
  for (int i = 0; i < 8; i++) pos[i] = 0.5f + (float)i, neg[i] = -0.25f * (float)(i + 1);
  for (int i = 0; i < 64; i++) mixed[i] = (float)irand(-1000, 3000) / 977.0f;
  check_quantize("zeros", zeros, 8);
  check_quantize("positive", pos, 8);
  check_quantize("negative", neg, 8);
  check_quantize("mixed", mixed, 64);
  float odd[6] = {1.0f, NAN, -2.0f, INFINITY, 3.0f, -INFINITY};
  check_quantize("nan and inf", odd, 6);
  float zs = wick_q4_quantize_row(8, zeros, (int16_t[8]){0});
  checks++;
  if (zs != 1.0f) fail("an all-zero row has scale %g, not 1", (double)zs);
  /* bfloat16: 1 + 2^-8 ties to 1 (even), 1 + 3 * 2^-8 ties up to 1 + 2^-6 */
  checks += 2;
  if (wick_q4_bf16_round(1.0f + 0x1p-8f) != 1.0f) fail("bf16 tie to even (down)");
  if (wick_q4_bf16_round(1.0f + 3 * 0x1p-8f) != 1.0f + 0x1p-6f) fail("bf16 tie to even (up)");
  printf("row quantization, bfloat16: %s\n", verdict(before));
  return finish();
}
