/*
 * q8_driver.c — tiles int8 GEMMs (FULLY_CONNECTED, 1x1 convolutions) and
 * indirect GEMMs (other convolutions) over the microkernels chosen by
 * q8_select.c. Same loop order and column blocking as the fp32 driver
 * (gemm_driver.c): output channels in blocks whose packed weights fit in
 * about half of L2, then row tiles of MR. Every entry point takes a range of
 * rows (or row tiles) so that callers can split the work into independent
 * parts.
 */
#include "kernels/q8.h"

#define BLOCK_BYTES ((size_t)384 * 1024)

/* Bytes of one NR-column panel for `taps` taps of kc inputs (q8.h); w16: int16 pairs. */
static size_t panel_bytes(const wick_q8_kernels *kern, size_t taps, size_t kc, bool w16) {
  const size_t per_tap =
      kern->i16 ? ((kc + 1) & ~(size_t)1) * (w16 ? 2 : 1) : (kc + 3) & ~(size_t)3;
  return (4 * WICK_Q8_HEADER + taps * per_tap) * kern->nr;
}

static size_t column_block(size_t n, size_t pb, size_t nr) {
  size_t panels = BLOCK_BYTES / pb;
  if (panels < 1) panels = 1;
  size_t nb = panels * nr;
  if (nb >= n) return n;
  size_t blocks = (n + nb - 1) / nb;
  size_t per = (n + blocks - 1) / blocks;
  return (per + nr - 1) / nr * nr;
}

/* The output stage of the column block starting at n0. */
static wick_q8_output block_output(const wick_q8_output *o, size_t n0) {
  wick_q8_output b = *o;
  if (b.fc_scale) b.fc_scale += n0;
  if (b.rq64) b.rq64 += n0 / 16 * WICK_Q8_RQ64_WORDS; /* n0 is a multiple of nr */
  return b;
}

void wick_q8_flip_sign(size_t n, const int8_t *in, int8_t *out) {
  const uint8_t *src = (const uint8_t *)in;
  uint8_t *dst = (uint8_t *)out;
  for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)(src[i] ^ 0x80u);
}

void wick_q8_gemm_cols(const wick_q8_kernels *kern, size_t m0, size_t m1, size_t n0, size_t n1,
                       size_t n, size_t k, const int8_t *a, size_t a_stride, bool a_u8,
                       const void *packed, int8_t *c, size_t c_stride, const wick_q8_output *o) {
  (void)n;
  const wick_q8_gemm_ukernel_fn full = a_u8 ? kern->gemm_u8 : kern->gemm;
  const wick_q8_gemm_ukernel_fn one = a_u8 ? kern->gemm_u8_1 : kern->gemm_1;
  const size_t mr = kern->mr, nr = kern->nr;
  const size_t pb = panel_bytes(kern, 1, k, o->w16);
  const size_t nb = column_block(n1 - n0, pb, nr);
  const size_t es = o->raw ? sizeof(int32_t) : 1; /* bytes per output element */
  for (size_t b0 = n0; b0 < n1; b0 += nb) {
    const size_t nc = n1 - b0 < nb ? n1 - b0 : nb;
    const int8_t *w = (const int8_t *)packed + b0 / nr * pb;
    const wick_q8_output bo = block_output(o, b0);
    for (size_t r = m0; r < m1; r += mr) {
      const size_t rows = m1 - r < mr ? m1 - r : mr;
      wick_q8_gemm_ukernel_fn fn = rows == 1 ? one : full;
      if (a_u8 && rows > 1 && rows <= 4 && kern->gemm_u8_4) fn = kern->gemm_u8_4;
      fn(rows, nc, k, a + r * a_stride, a_stride, w, c + r * c_stride + b0 * es, c_stride, &bo);
    }
  }
}

void wick_q8_gemm(const wick_q8_kernels *kern, size_t m0, size_t m1, size_t n, size_t k,
                  const int8_t *a, size_t a_stride, bool a_u8, const void *packed, int8_t *c,
                  size_t c_stride, const wick_q8_output *o) {
  wick_q8_gemm_cols(kern, m0, m1, 0, n, n, k, a, a_stride, a_u8, packed, c, c_stride, o);
}

size_t wick_q8_gemm_split_init(wick_q8_gemm_split *sp, const wick_q8_kernels *kern, size_t m,
                               size_t n, size_t k, uint64_t grain) {
  const size_t mr = kern->mr, nr = kern->nr;
  *sp = (wick_q8_gemm_split){.m = m, .n = n, .mr = mr, .nr = nr, .col_parts = 1};
  if (m == 0 || n == 0) return 0;
  sp->tiles = m / mr + (m % mr != 0);
  sp->panels = n / nr + (n % nr != 0);
  const uint64_t kk = k ? k : 1;
  sp->row_tasks = wick_split_count(sp->tiles, (uint64_t)mr * n * kk, grain);
  if (sp->row_tasks % 2 == 1 && sp->panels > 1) {
    /* One row task: cut the columns by the grain; a few: in two. */
    const uint64_t rows = m < mr ? m : mr;
    sp->col_parts = sp->row_tasks == 1 ? wick_split_count(sp->panels, rows * nr * kk, grain) : 2;
    if (sp->col_parts < 2) sp->col_parts = 2;
  }
  return sp->row_tasks * sp->col_parts;
}

void wick_q8_gemm_split_task(const wick_q8_gemm_split *sp, size_t t, size_t *m0, size_t *m1,
                             size_t *n0, size_t *n1) {
  const size_t cp = t / sp->row_tasks, rt = t % sp->row_tasks;
  const size_t r1 = wick_split_begin(sp->tiles, sp->row_tasks, rt + 1) * sp->mr;
  const size_t c1 = wick_split_begin(sp->panels, sp->col_parts, cp + 1) * sp->nr;
  *m0 = wick_split_begin(sp->tiles, sp->row_tasks, rt) * sp->mr;
  *m1 = r1 < sp->m ? r1 : sp->m;
  *n0 = wick_split_begin(sp->panels, sp->col_parts, cp) * sp->nr;
  *n1 = c1 < sp->n ? c1 : sp->n;
}

bool wick_q8_conv_indirection_size(const wick_conv_shape *s, size_t mr, size_t *count_out) {
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

size_t wick_q8_conv_tiles(const wick_conv_shape *s, size_t mr) {
  const size_t pixels = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w;
  return pixels / mr + (pixels % mr != 0);
}

void wick_q8_conv_indirection_init(const wick_conv_shape *s, size_t mr, const void *input,
                                   size_t elem_bytes, const void *zero_row, const int8_t **ind) {
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w;
  const size_t pixels = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w;
  const size_t tiles = wick_q8_conv_tiles(s, mr);
  for (size_t t = 0; t < tiles; t++)
    for (size_t r = 0; r < mr; r++) {
      const size_t pix = t * mr + r < pixels ? t * mr + r : pixels - 1;
      const size_t x = pix % (size_t)s->out_w, rest = pix / (size_t)s->out_w;
      const size_t y = rest % (size_t)s->out_h, n = rest / (size_t)s->out_h;
      for (size_t ky = 0; ky < (size_t)s->k_h; ky++) {
        const int64_t iy = (int64_t)y * s->stride_h - s->pad_top + (int64_t)ky * s->dilation_h;
        for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
          const int64_t ix = (int64_t)x * s->stride_w - s->pad_left + (int64_t)kx * s->dilation_w;
          const int8_t *p = zero_row;
          if (iy >= 0 && iy < s->in_h && ix >= 0 && ix < s->in_w)
            p = (const int8_t *)input +
                (((int64_t)n * s->in_h + iy) * s->in_w + ix) * s->in_c * (int64_t)elem_bytes;
          ind[(t * taps + ky * (size_t)s->k_w + kx) * mr + r] = p;
        }
      }
    }
}

void wick_q8_conv_igemm(const wick_q8_kernels *kern, const wick_conv_shape *s,
                        const int8_t *const *ind, bool a_u8, const void *packed, int8_t *output,
                        const wick_q8_output *o, size_t t0, size_t t1) {
  const wick_q8_igemm_ukernel_fn fn = a_u8 ? kern->igemm_u8 : kern->igemm;
  const size_t mr = kern->mr, nr = kern->nr;
  const size_t taps = (size_t)s->k_h * (size_t)s->k_w, kc = (size_t)s->in_c;
  const size_t n = (size_t)s->out_c;
  const size_t pb = panel_bytes(kern, taps, kc, false);
  const size_t pixels = (size_t)s->batch * (size_t)s->out_h * (size_t)s->out_w;
  const size_t nb = column_block(n, pb, nr);
  for (size_t n0 = 0; n0 < n; n0 += nb) {
    const size_t nc = n - n0 < nb ? n - n0 : nb;
    const int8_t *w = (const int8_t *)packed + n0 / nr * pb;
    const wick_q8_output bo = block_output(o, n0);
    for (size_t t = t0; t < t1; t++) {
      const size_t m0 = t * mr;
      const size_t rows = pixels - m0 < mr ? pixels - m0 : mr;
      const wick_q8_igemm_ukernel_fn f =
          a_u8 && rows <= 4 && kern->igemm_u8_4 ? kern->igemm_u8_4 : fn;
      f(rows, nc, kc, taps, ind + t * taps * mr, w, output + m0 * n + n0, n, &bo);
    }
  }
}

/* ---- AMX convolutions (layouts in q8.h) ---- */

/* Gathered rows per group: a K-long panel is read once per this many. */
#define WICK_Q8_AMX_GATHER_BYTES ((size_t)384 * 1024)

bool wick_q8_conv_amx_supported(const wick_q8_kernels *kern, const wick_conv_shape *s) {
  /* below one 64-byte K step per pixel (MobileNetV2's 1x1 convs of 16-32
   * channels, its 3-channel 3x3 stem) the gathers and the padded K cost
   * more than the tiles save: the VNNI kernels are ~1.1-1.4x faster there */
  const uint64_t k = (uint64_t)s->k_h * (uint64_t)s->k_w * (uint64_t)s->in_c;
  return kern->conv_amx != NULL && kern->nr == 32 && s->groups == 1 && s->dilation_w == 1 &&
         k >= WICK_Q8_AMX_MIN_K;
}

void wick_q8_conv_amx_pack_dims(const wick_conv_shape *s, size_t *taps, size_t *kc) {
  *taps = (size_t)s->k_h;
  *kc = (size_t)s->k_w * (size_t)s->in_c;
}

size_t wick_q8_conv_amx_row_bytes(const wick_conv_shape *s) {
  size_t taps, kc;
  wick_q8_conv_amx_pack_dims(s, &taps, &kc);
  return (taps * ((kc + 3) & ~(size_t)3) + 63) & ~(size_t)63;
}

size_t wick_q8_conv_amx_group(const wick_conv_shape *s) {
  const size_t block = WICK_Q8_AMX_MB * wick_q8_conv_amx_row_bytes(s);
  const size_t blocks = wick_q8_conv_tiles(s, WICK_Q8_AMX_MB);
  size_t g = WICK_Q8_AMX_GATHER_BYTES / block;
  if (g < 1) g = 1;
  return g < blocks ? g : blocks;
}

size_t wick_q8_conv_amx_work_bytes(const wick_conv_shape *s) {
  /* two buffers of 32 x 32 int32 accumulators, then the gathered rows */
  return 2 * 4 * WICK_Q8_AMX_MB * 32 +
         wick_q8_conv_amx_group(s) * WICK_Q8_AMX_MB * wick_q8_conv_amx_row_bytes(s);
}
