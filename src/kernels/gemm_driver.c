/*
 * gemm_driver.c — tiles FULLY_CONNECTED / 1x1 convolutions (GEMM) and general
 * convolutions (indirect GEMM) over the microkernels chosen by select.c.
 *
 * Loop order: output channels in blocks whose packed weights fit in about
 * half of L2 (so every row tile re-reads them from L2, not L3), then row
 * tiles of MR, and the microkernel walks the block's NR-wide panels. A row
 * tile of A (MR x K) stays in L1 across the panels. A last row tile of fewer
 * rows runs the ISA's row-tail kernel when it has one (kernels.h, tail_gemm:
 * same bits, without the FMAs of repeated rows).
 *
 * Threads: wick_f32_gemm_tasks_init / wick_f32_conv_igemm_tasks_init cut
 * that loop nest into independent tasks (one column block x a run of row
 * tiles, in the serial loop's order; an even number of them, see split()) that an op hands to
 * wick_parallel_for. Task boundaries fall on MR-row tiles and NR-column panels, so each output
 * element is computed by the same microkernel call with the same K order
 * however the tasks are spread over threads: results are bit-identical for
 * any thread count. wick_f32_gemm / wick_f32_conv_igemm run all tasks in
 * order on the calling thread.
 *
 * An optional epilogue (tasks.ep: a fused activation / residual add, see
 * src/core/fuse.c) runs on each MR x NB tile right after the microkernel
 * wrote it, while it is in L1.
 *
 * The indirection buffer of a convolution (layout in kernels.h) depends on
 * the input's address; the op rebuilds it when that address changes.
 *
 * TODO: the indirection buffer costs k_h * k_w pointers per output pixel and
 * lives as long as the prepared graph: ~1 MB for MobileNetV2's first conv,
 * 5 MB for ResNet-50's 7x7 stem, but ~19 MB per 3x3 conv at 512x512. Large
 * inputs want the pointers of one row tile built at invoke into scratch
 * (cheap next to the tile's K x N FMAs unless cin and N are tiny).
 */

#include "kernels/kernels.h"

/* Bytes of packed weights a column block may hold (L2 is 1 MiB per core on
 * the reference machine, 256 KiB-2 MiB on most others). */
#define BLOCK_BYTES ((size_t)384 * 1024)

static size_t column_block(size_t m, size_t mr, size_t n, size_t k, size_t nr) {
  /* One row tile reads each weight once whatever the blocks: one block, so the one-row kernel
   * can walk several panels at once (split() still halves it for two tasks). */
  if (m <= mr) return n;
  size_t panel_bytes = (k + 1) * nr * sizeof(float);
  size_t panels = BLOCK_BYTES / panel_bytes;
  if (panels < 1) panels = 1;
  size_t nb = panels * nr;
  if (nb >= n) return n;
  /* Even blocks: avoid a thin last block. */
  size_t blocks = (n + nb - 1) / nb;
  size_t per = (n + blocks - 1) / blocks;
  return (per + nr - 1) / nr * nr;
}

/* PRELU over n elements in place, the first of channel ch: the PRELU kernel's
 * x >= 0 ? x : x * alpha (wick_f32_prelu_select), wrapping around the channels. */
static void prelu_in_place(wick_f32_prelu_fn prelu, float *x, size_t n, const float *alpha,
                           size_t channels, size_t ch) {
  while (n > 0) {
    const size_t run = channels - ch < n ? channels - ch : n;
    const float *a = alpha + ch;
    if (prelu != NULL) {
      prelu(run, x, a, x);
      x += run, n -= run, ch = 0;
      continue;
    }
    for (size_t i = 0; i < run; i++) x[i] = wick_f32_prelu_select(x[i], a[i]);
    x += run, n -= run, ch = 0;
  }
}

void wick_f32_epilogue_run(const wick_f32_epilogue *ep, size_t rows, size_t cols, float *c,
                           size_t stride, size_t offset) {
  /* the channel of each row's first element, stepped without dividing per row */
  if (stride == cols && rows > 1) {
    /* the tile's rows are contiguous (its columns are the whole row): one run of rows * cols,
     * one call of each kernel instead of one per row (an elementwise result either way) */
    cols *= rows;
    rows = 1;
  }
  const size_t channels = ep->alpha ? ep->channels : 1, step = stride % channels;
  size_t ch = offset % channels;
  for (size_t r = 0; r < rows; r++) {
    float *row = c + r * stride;
    if (ep->act) ep->act(cols, row, row);
    if (ep->residual) ep->add(cols, row, ep->residual + offset + r * stride, row, ep->lo, ep->hi);
    if (ep->alpha) prelu_in_place(ep->prelu, row, cols, ep->alpha, channels, ch);
    ch += step;
    if (ch >= channels) ch -= channels;
  }
}

/* Splits each column block's MR-row tiles into runs of about `grain`
 * multiply-accumulates (split.h; an even total task count). Tiles stay
 * MR-aligned, so every output is computed by the same microkernel call as in
 * one serial pass. */
static size_t split(wick_f32_gemm_tasks *t, uint64_t grain) {
  t->nb = column_block(t->m, t->kern->mr, t->n, t->k, t->kern->nr);
  t->col_blocks = t->n == 0 ? 0 : (t->n + t->nb - 1) / t->nb;
  t->tiles = (t->m + t->kern->mr - 1) / t->kern->mr;
  uint64_t tile_work = (uint64_t)t->kern->mr * t->nb * (t->k ? t->k : 1);
  t->row_tasks = wick_split_count(t->tiles, tile_work, grain);
  const size_t nr = t->kern->nr, panels = (t->n + nr - 1) / nr;
  if (grain != UINT64_MAX && t->col_blocks * t->row_tasks % 2 == 1 && panels > t->col_blocks) {
    /* An odd task count because there are few row tiles (7x7 and 14x14
     * convolutions: m = 49 is 7 tiles of 8): cut the columns into twice as
     * many NR-aligned blocks instead (7 tasks run as 4 + 3, 14 as 7 + 7). */
    const size_t blocks = 2 * t->col_blocks;
    t->nb = (panels + blocks - 1) / blocks * nr;
    t->col_blocks = (t->n + t->nb - 1) / t->nb;
  }
  return t->col_blocks * t->row_tasks;
}

size_t wick_f32_gemm_tasks_init(wick_f32_gemm_tasks *t, const wick_f32_gemm_kernel *kern, size_t m,
                                size_t n, size_t k, const float *a, size_t a_stride,
                                const float *packed, float *c, size_t c_stride, float lo, float hi,
                                uint64_t grain) {
  *t = (wick_f32_gemm_tasks){.kern = kern,
                             .m = m,
                             .n = n,
                             .k = k,
                             .a = a,
                             .a_stride = a_stride,
                             .packed = packed,
                             .c = c,
                             .c_stride = c_stride,
                             .lo = lo,
                             .hi = hi};
  return split(t, grain);
}

size_t wick_f32_conv_igemm_tasks_init(wick_f32_gemm_tasks *t, const wick_f32_gemm_kernel *kern,
                                      const wick_conv_shape *s, const float *const *ind,
                                      const float *packed, float *output, float lo, float hi,
                                      uint64_t grain) {
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w, kc = (size_t)s->in_c;
  *t = (wick_f32_gemm_tasks){
      .kern = kern,
      .m = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w,
      .n = (size_t)s->out_c,
      .k = taps * kc,
      .ind = ind,
      .kc = kc,
      .taps = taps,
      .packed = packed,
      .c = output,
      .c_stride = (size_t)s->out_c,
      .lo = lo,
      .hi = hi,
  };
  return split(t, grain);
}

void wick_f32_gemm_run_task(const wick_f32_gemm_tasks *t, size_t task) {
  const size_t mr = t->kern->mr, nr = t->kern->nr;
  const size_t cb = task / t->row_tasks, rt = task % t->row_tasks;
  const size_t n0 = cb * t->nb;
  const size_t nc = t->n - n0 < t->nb ? t->n - n0 : t->nb;
  const float *w = t->packed + n0 / nr * (t->k + 1) * nr;
  const size_t tile_end = wick_split_begin(t->tiles, t->row_tasks, rt + 1);
  for (size_t tile = wick_split_begin(t->tiles, t->row_tasks, rt); tile < tile_end; tile++) {
    const size_t m0 = tile * mr;
    const size_t rows = t->m - m0 < mr ? t->m - m0 : mr;
    float *c = t->c + m0 * t->c_stride + n0;
    /* a last tile of fewer rows runs the ISA's row-tail kernel when it has one (kernels.h) */
    const bool tail = rows < mr && rows < WICK_GEMM_TAIL_ROWS;
    if (t->ind != NULL) {
      wick_f32_igemm_ukernel_fn fn = t->kern->igemm;
      if (tail && t->kern->tail_igemm[rows] != NULL) fn = t->kern->tail_igemm[rows];
      fn(rows, nc, t->kc, t->taps, t->ind + tile * t->taps * mr, w, c, t->c_stride, t->lo, t->hi);
    } else {
      wick_f32_gemm_ukernel_fn fn = rows == 1 ? t->kern->gemm_1 : t->kern->gemm;
      if (rows > 1 && tail && t->kern->tail_gemm[rows] != NULL) fn = t->kern->tail_gemm[rows];
      fn(rows, nc, t->k, t->a + m0 * t->a_stride, t->a_stride, w, c, t->c_stride, t->lo, t->hi);
    }
    if (t->ep) wick_f32_epilogue_run(t->ep, rows, nc, c, t->c_stride, m0 * t->c_stride + n0);
  }
}

void wick_f32_gemm(const wick_f32_gemm_kernel *kern, size_t m, size_t n, size_t k, const float *a,
                   size_t a_stride, const float *packed, float *c, size_t c_stride, float lo,
                   float hi) {
  wick_f32_gemm_tasks t;
  size_t tasks = wick_f32_gemm_tasks_init(&t, kern, m, n, k, a, a_stride, packed, c, c_stride, lo,
                                          hi, UINT64_MAX);
  for (size_t i = 0; i < tasks; i++) wick_f32_gemm_run_task(&t, i);
}

bool wick_f32_conv_indirection_size(const wick_conv_shape *s, size_t mr, size_t *count_out) {
  size_t pixels, tiles, taps, count;
  if (__builtin_mul_overflow((size_t)s->batch, (size_t)s->out_h, &pixels) ||
      __builtin_mul_overflow(pixels, (size_t)s->out_w, &pixels))
    return false;
  tiles = pixels / mr + (pixels % mr != 0);
  if (__builtin_mul_overflow((size_t)s->k_h, (size_t)s->k_w, &taps) ||
      __builtin_mul_overflow(tiles, mr, &count) || __builtin_mul_overflow(count, taps, &count))
    return false;
  *count_out = count;
  return true;
}

void wick_f32_conv_indirection_init(const wick_conv_shape *s, size_t mr, const float *input,
                                    const float *zero, const float **ind) {
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w;
  const size_t pixels = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w;
  const size_t tiles = pixels / mr + (pixels % mr != 0);
  for (size_t t = 0; t < tiles; t++) {
    for (size_t r = 0; r < mr; r++) {
      size_t pix = t * mr + r < pixels ? t * mr + r : pixels - 1;
      size_t x = pix % (size_t)s->out_w, rest = pix / (size_t)s->out_w;
      size_t y = rest % (size_t)s->out_h, n = rest / (size_t)s->out_h;
      for (size_t ky = 0; ky < (size_t)s->k_h; ky++) {
        int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
        for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
          int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
          const float *p = zero;
          if (iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w)
            p = input + (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c;
          ind[(t * taps + ky * (size_t)s->k_w + kx) * mr + r] = p;
        }
      }
    }
  }
}

void wick_f32_conv_igemm(const wick_f32_gemm_kernel *kern, const wick_conv_shape *s,
                         const float *const *ind, const float *packed, float *output, float lo,
                         float hi) {
  wick_f32_gemm_tasks t;
  size_t tasks =
      wick_f32_conv_igemm_tasks_init(&t, kern, s, ind, packed, output, lo, hi, UINT64_MAX);
  for (size_t i = 0; i < tasks; i++) wick_f32_gemm_run_task(&t, i);
}
