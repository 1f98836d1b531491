/*
 * select.c — reference SELECT / SELECT_V2 (movement.h): out = cond ? x : y
 * over a broadcast iteration space, element by element.
 */
#include <string.h>

#include "kernels/reference/movement.h"

void wick_select__reference(size_t esize, const wick_select_shape *s, const bool *cond,
                            const void *x, const void *y, void *out) {
  const uint8_t *xb = x, *yb = y;
  uint8_t *o = out;
  int32_t r = s->rank;
  int64_t total = 1;
  for (int32_t k = 0; k < r; k++) total *= s->dims[k];
  int64_t idx[WICK_MAX_RANK] = {0};
  int64_t ci = 0, xi = 0, yi = 0;
  for (int64_t e = 0; e < total; e++) {
    const uint8_t *src = cond[ci] ? xb + xi * (int64_t)esize : yb + yi * (int64_t)esize;
    memcpy(o + e * (int64_t)esize, src, esize);
    for (int32_t k = r - 1; k >= 0; k--) {
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
