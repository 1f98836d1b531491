/*
 * logical.c — portable fast paths for the comparison / boolean ops around
 * masked softmax in exported transformers (EQUAL x scalar, REDUCE_ANY over
 * the last axis, SELECT_V2 with a per-row condition): the reference kernels
 * recompute a broadcast index per element; these walk whole rows (SELECT on
 * bytes hands each row to a vector blend, kernels.h's select8). Results are
 * identical to the reference (comparisons, byte tests and copies).
 */
#include <string.h>

#include "kernels/kernels.h"

/* Every element of the rows, each comparison's KERNEL (src/kernels/reference/binary_ops.inc) of
 * x and y. */
#define CMP_ROWS(KERNEL)                                               \
  for (size_t i = 0; i < p->dims[0]; i++)                              \
    for (size_t j = 0; j < p->dims[1]; j++) {                          \
      const float *xs = a + i * p->a_strides[0] + j * p->a_strides[1]; \
      const float *ys = b + i * p->b_strides[0] + j * p->b_strides[1]; \
      bool *o = out + (i * p->dims[1] + j) * n;                        \
      if (p->form == WICK_F32_VV)                                      \
        for (size_t k = 0; k < n; k++) {                               \
          const float x = xs[k], y = ys[k];                            \
          o[k] = (KERNEL);                                             \
        }                                                              \
      else if (p->form == WICK_F32_VS)                                 \
        for (size_t k = 0; k < n; k++) {                               \
          const float x = xs[k], y = ys[0];                            \
          o[k] = (KERNEL);                                             \
        }                                                              \
      else                                                             \
        for (size_t k = 0; k < n; k++) {                               \
          const float x = xs[0], y = ys[k];                            \
          o[k] = (KERNEL);                                             \
        }                                                              \
    }

/* The comparisons only: the logical ops take bools, never these float rows. */
bool wick_f32_compare_plan(wick_compare_op op, const wick_f32_binary_plan *p, const float *a,
                           const float *b, bool *out) {
  const size_t n = p->dims[2];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfloat-equal"
  switch (op) {
#define WICK_COMPARE(NAME, name, KERNEL, ...) \
  case WICK_COMPARE_##NAME:                   \
    CMP_ROWS(KERNEL);                         \
    return true;
#include "kernels/reference/binary_ops.inc"
    default: return false;
  }
#pragma GCC diagnostic pop
}

void wick_bool_reduce_mid(bool is_any, size_t outer, size_t mid, size_t inner, const bool *in,
                          bool *out) {
  const uint8_t *x = (const uint8_t *)in;
  for (size_t o = 0; o < outer; o++)
    for (size_t i = 0; i < inner; i++) {
      bool acc = !is_any;
      const uint8_t *p = x + o * mid * inner + i;
      for (size_t r = 0; r < mid; r++) {
        if ((p[r * inner] != 0) == is_any) {
          acc = is_any;
          break;
        }
      }
      out[o * inner + i] = acc;
    }
}

/* One row of n elements of a fixed size: dst[e] = c[e * cs] ? x[e * xs] : y[e * ys] (strides
 * in elements; a typed load and store per element instead of a memcpy call). The unit-stride
 * forms (the attention mask's condition and scores with a scalar filler) get loops of their
 * own that the compiler vectorizes. */
#define SELECT_RUN(NAME, T)                                                                \
  static void NAME(int64_t n, const uint8_t *c, int64_t cs, const uint8_t *xv, int64_t xs, \
                   const uint8_t *yv, int64_t ys, uint8_t *dv) {                           \
    const T *xp = (const T *)(const void *)xv, *yp = (const T *)(const void *)yv;          \
    T *d = (T *)(void *)dv;                                                                \
    if (cs == 1 && xs == 1 && ys == 0) {                                                   \
      const T fill = yp[0];                                                                \
      for (int64_t e = 0; e < n; e++) d[e] = c[e] ? xp[e] : fill;                          \
    } else if (cs == 1 && xs == 1 && ys == 1) {                                            \
      for (int64_t e = 0; e < n; e++) d[e] = c[e] ? xp[e] : yp[e];                         \
    } else {                                                                               \
      for (int64_t e = 0; e < n; e++) d[e] = c[e * cs] ? xp[e * xs] : yp[e * ys];          \
    }                                                                                      \
  }
SELECT_RUN(select_run_u8, uint8_t)
SELECT_RUN(select_run_u16, uint16_t)
SELECT_RUN(select_run_u32, uint32_t)
#undef SELECT_RUN

void wick_select8(size_t n, const bool *cond, const uint8_t *x, bool x_scalar, const uint8_t *y,
                  bool y_scalar, uint8_t *out) {
  const uint8_t *c = (const uint8_t *)cond;
  for (size_t e = 0; e < n; e++) out[e] = c[e] ? x[x_scalar ? 0 : e] : y[y_scalar ? 0 : e];
}

void wick_select_rows(size_t esize, const wick_select_shape *s, const bool *cond, const void *x,
                      const void *y, void *out, wick_select8_fn select8) {
  const int32_t r = s->rank;
  const uint8_t *xb = x, *yb = y, *cb = (const uint8_t *)cond;
  uint8_t *o = out;
  if (r == 0) {
    memcpy(o, cb[0] ? xb : yb, esize);
    return;
  }
  for (int32_t k = 0; k < r; k++)
    if (s->dims[k] == 0) return;
  const int64_t n = s->dims[r - 1];
  const int64_t cs = s->cond_strides[r - 1], xs = s->x_strides[r - 1], ys = s->y_strides[r - 1];
  int64_t outer = 1;
  for (int32_t k = 0; k < r - 1; k++) outer *= s->dims[k];
  int64_t idx[WICK_MAX_RANK] = {0};
  int64_t ci = 0, xi = 0, yi = 0;
  const int64_t es = (int64_t)esize;
  for (int64_t row = 0; row < outer; row++) {
    uint8_t *dst = o + row * n * es;
    if (cs == 0) { /* one condition for the whole row */
      const uint8_t *src = cb[ci] ? xb + xi * es : yb + yi * es;
      const int64_t ss = cb[ci] ? xs : ys;
      if (ss == 1)
        memcpy(dst, src, (size_t)(n * es));
      else
        for (int64_t e = 0; e < n; e++) memcpy(dst + e * es, src + e * ss * es, esize);
    } else if (esize == 1 && select8 != NULL && cs == 1 && (xs == 0 || xs == 1) &&
               (ys == 0 || ys == 1)) {
      select8((size_t)n, (const bool *)(const void *)(cb + ci), xb + xi, xs == 0, yb + yi, ys == 0,
              dst);
    } else if (esize == 1) {
      select_run_u8(n, cb + ci, cs, xb + xi, xs, yb + yi, ys, dst);
    } else if (esize == 2) {
      select_run_u16(n, cb + ci, cs, xb + xi * 2, xs, yb + yi * 2, ys, dst);
    } else if (esize == 4) {
      select_run_u32(n, cb + ci, cs, xb + xi * 4, xs, yb + yi * 4, ys, dst);
    } else {
      for (int64_t e = 0; e < n; e++)
        memcpy(dst + e * es, cb[ci + e * cs] ? xb + (xi + e * xs) * es : yb + (yi + e * ys) * es,
               esize);
    }
    for (int32_t k = r - 2; k >= 0; k--) {
      ci += s->cond_strides[k];
      xi += s->x_strides[k];
      yi += s->y_strides[k];
      if (++idx[k] < s->dims[k]) break;
      ci -= s->cond_strides[k] * s->dims[k];
      xi -= s->x_strides[k] * s->dims[k];
      yi -= s->y_strides[k] * s->dims[k];
      idx[k] = 0;
    }
  }
}
