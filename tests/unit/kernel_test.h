/*
 * kernel_test.h — the scaffolding shared by the kernel tests (test_kernels.c
 * for fp32, test_q8_kernels.c for int8): the failure and check counters, the
 * seeded random stream, conv shapes given by their paddings, the igemm conv
 * sweep both run, broadcasts built as the ops build them, and the summary.
 *
 * Header-only (static inline): include it once, from the test's .c file,
 * after defining KERNEL_TEST_SEED (each test keeps its own random stream).
 */
#ifndef WICK_TEST_KERNEL_TEST_H
#define WICK_TEST_KERNEL_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/reference/reference.h"

#ifndef KERNEL_TEST_SEED
#error "define KERNEL_TEST_SEED (the test's random seed) before including kernel_test.h"
#endif

static int failures, checks;

/* Records a failure: prints "FAIL <message>" on stderr. */
__attribute__((format(printf, 1, 2))) static inline void fail(const char *fmt, ...) {
  failures++;
  va_list ap;
  va_start(ap, fmt);
  fputs("FAIL ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* One check that a kernel left the guard elements around its output alone. */
static inline void check_guards(const char *what, bool intact) {
  checks++;
  if (!intact) fail("%s: wrote outside the output", what);
}

/* The verdict printed after a group of checks started with `before` failures. */
static inline const char *verdict(int before) { return failures == before ? "ok" : "FAILED"; }

/* Prints the totals; the test's exit status. */
static inline int finish(void) {
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}

/* ------------------------------------------------------------------ random stream */

static uint64_t rng_state = KERNEL_TEST_SEED;

/* One step of the 64-bit LCG; callers take its high bits. */
static inline uint64_t rng_step(void) {
  rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
  return rng_state;
}

/* ------------------------------------------------------------------ conv shapes */

static inline int32_t out_size(int32_t in, int32_t k, int32_t stride, int32_t dil,
                               int32_t pad_total) {
  int32_t eff = (k - 1) * dil + 1;
  int32_t o = (in + pad_total - eff) / stride + 1;
  return o < 0 ? 0 : o;
}

/* A groups-1 conv shape from its sizes and explicit paddings (top, bottom,
 * left, right); depthwise callers set groups themselves. */
static inline void make_shape(wick_conv_shape *s, int32_t batch, int32_t h, int32_t w, int32_t cin,
                              int32_t cout, int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                              int32_t dh, int32_t dw, int32_t pt, int32_t pb, int32_t pl,
                              int32_t pr) {
  memset(s, 0, sizeof *s);
  s->batch = batch, s->in_h = h, s->in_w = w, s->in_c = cin, s->out_c = cout;
  s->k_h = kh, s->k_w = kw, s->stride_h = sh, s->stride_w = sw, s->dilation_h = dh;
  s->dilation_w = dw, s->pad_top = pt, s->pad_left = pl, s->groups = 1, s->multiplier = 1;
  s->out_h = out_size(h, kh, sh, dh, pt + pb);
  s->out_w = out_size(w, kw, sw, dw, pl + pr);
}

/* One row of a table of conv cases: make_shape's arguments and the fused
 * activation (0 none, 1 ReLU, 2 ReLU6). */
typedef struct conv_case {
  int32_t batch, h, w, cin, cout, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
  int act;
} conv_case;

/* The case's shape; depthwise (multiplier 1) sets groups = channels. */
static inline void case_shape(const conv_case *c, bool depthwise, wick_conv_shape *s) {
  make_shape(s, c->batch, c->h, c->w, c->cin, c->cout, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw,
             c->pt, c->pb, c->pl, c->pr);
  if (depthwise) s->groups = s->in_c;
}

/* Runs one conv shape with a fused activation. */
typedef void (*conv_shape_fn)(const void *arg, const wick_conv_shape *s, int act);

/* The igemm conv sweep: 5 input depths (`chans`, the test's choice of tails)
 * x 5 output depths x 6 filter sizes x strides 1-3 x 3 paddings, dilation 2
 * on every third, the activation cycling; then MobileNet / ResNet-like
 * layers (the stem with TF SAME padding, a 3x3 SAME layer, a 1x1 pixel). */
static inline void conv_sweep(const int32_t chans[5], conv_shape_fn run, const void *arg) {
  static const int32_t couts[] = {1, 7, 16, 33, 70};
  static const int32_t ks[][2] = {{1, 1}, {3, 3}, {1, 3}, {5, 5}, {7, 7}, {2, 2}};
  static const conv_case models[] = {{1, 32, 32, 3, 32, 3, 3, 2, 2, 1, 1, 0, 1, 0, 1, 2},
                                     {1, 14, 14, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                     {1, 1, 1, 5, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}};
  wick_conv_shape s;
  int act = 0;
  for (size_t ic = 0; ic < 5; ic++)
    for (size_t oc = 0; oc < 5; oc++)
      for (size_t kk = 0; kk < 6; kk++)
        for (int32_t stride = 1; stride <= 3; stride++)
          for (int32_t pad = 0; pad <= 2; pad++) {
            const int32_t dil = (ic + oc + kk) % 3 == 0 ? 2 : 1;
            make_shape(&s, (ic + oc) % 2 + 1, 5 + (int32_t)ic, 9 - (int32_t)oc, chans[ic],
                       couts[oc], ks[kk][0], ks[kk][1], stride, stride == 3 ? 1 : stride, dil, 1,
                       pad, pad == 2 ? 1 : pad, pad == 1 ? 0 : pad, pad);
            run(arg, &s, act);
            act = (act + 1) % 3;
          }
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    case_shape(&models[i], false, &s);
    run(arg, &s, models[i].act);
  }
}

/* "n=.. HxWxC->C' k=.. s=.. d=.. pad=.. out=.." of a conv shape, after `label`. */
static inline void describe_shape(char *buf, size_t size, const char *label,
                                  const wick_conv_shape *s) {
  snprintf(buf, size, "%s n=%d %dx%dx%d->%d k=%dx%d s=%d,%d d=%d,%d pad=%d,%d out=%dx%d", label,
           s->batch, s->in_h, s->in_w, s->in_c, s->out_c, s->k_h, s->k_w, s->stride_h, s->stride_w,
           s->dilation_h, s->dilation_w, s->pad_top, s->pad_left, s->out_h, s->out_w);
}

/* ------------------------------------------------------------------ broadcasts */

/* Builds the broadcast of a (rank ra) and b (rank rb) like the ops do. */
static inline void make_broadcast(wick_broadcast *bc, int32_t ra, const int32_t *da, int32_t rb,
                                  const int32_t *db) {
  memset(bc, 0, sizeof *bc);
  bc->rank = ra > rb ? ra : rb;
  for (int32_t i = 0; i < bc->rank; i++) {
    int32_t ia = i - (bc->rank - ra), ib = i - (bc->rank - rb);
    int32_t x = ia >= 0 ? da[ia] : 1, y = ib >= 0 ? db[ib] : 1;
    bc->dims[i] = x > y ? x : y;
  }
  int64_t sa = 1, sb = 1;
  for (int32_t i = bc->rank - 1; i >= 0; i--) {
    int32_t ia = i - (bc->rank - ra), ib = i - (bc->rank - rb);
    int32_t x = ia >= 0 ? da[ia] : 1, y = ib >= 0 ? db[ib] : 1;
    bc->a_strides[i] = x == 1 ? 0 : sa;
    bc->b_strides[i] = y == 1 ? 0 : sb;
    sa *= x, sb *= y;
  }
}

#endif /* WICK_TEST_KERNEL_TEST_H */
