/*
 * avx512amx/q8_conv.c — int8 CONV_2D on AMX-INT8 tiles (TDPBUSD: u8 x s8 dot
 * products of 4 bytes into int32, 16 x 16 outputs per instruction).
 * Compiled with the AVX-512 VNNI flags plus -mamx-tile -mamx-int8; called
 * only when q8_select.c saw AMX-INT8 (cpu.c also asked Linux for the tile
 * state).
 *
 * Layouts (the gathered rows, the packed B tiles, the padding) are in q8.h,
 * "AMX convolutions". Per block of 32 pixels and panel of 32 channels, four
 * C tiles (2 x 2 of 16 x 16 int32) start at zero and take per 64 bytes of K
 * two A tiles (the block's rows) and two B tiles (the panel's two halves):
 * four TDPBUSD. Then the tiles go to a 32 x 32 int32 buffer and the
 * AVX-512 output stage (avx512vnni/q8_requant.h) adds the corrected bias,
 * requantizes, clamps and stores. The gathered inputs are x + 128 (the
 * unsigned trick of q8.h), so padding holds the flipped zero point and the
 * bias correction is the VNNI kernels'.
 *
 * Loop order: a group of blocks (wick_q8_conv_amx_group, about 384 KB of
 * gathered rows) is gathered once, then each panel runs over every block of
 * the group, so a panel's weights (up to 147 KB for a 3x3x512 filter) are
 * read once per group, from L1/L2, instead of once per block.
 */
#include "kernels/avx512vnni/q8_requant.h"

/* The tile instructions exist in 64-bit mode only: a 32-bit x86 build
 * compiles this file empty, and q8_select.c (x86-64 tables only) never
 * names the kernel. GCC spells the feature macros __AMX_INT8__ and
 * __AMX_TILE__, Clang __AMXINT8__ and __AMXTILE__. */
#if defined(__x86_64__) && (defined(__AMX_INT8__) || defined(__AMXINT8__)) && \
    (defined(__AMX_TILE__) || defined(__AMXTILE__))

#define MB WICK_Q8_AMX_MB     /* pixels per block: two 16-row A tiles */
#define NR 32                 /* channels per panel: two 16-column B tiles */
#define KSTEP 64              /* bytes of K per TDPBUSD */
#define GROUP_STRIDE (4 * NR) /* bytes of one 4-byte group of all NR channels */
#define HEADER_BYTES (4 * WICK_Q8_HEADER * NR)
#define B_PREFETCH (2 * 16 * GROUP_STRIDE) /* bytes ahead: two K steps */

/* The LDTILECFG operand (palette 1): eight tiles of 16 rows x 64 bytes. */
typedef struct tile_config {
  uint8_t palette, start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;

static void configure_tiles(void) {
  tile_config c;
  memset(&c, 0, sizeof c);
  c.palette = 1;
  for (size_t t = 0; t < 8; t++) {
    c.colsb[t] = KSTEP;
    c.rows[t] = 16;
  }
  _tile_loadconfig(&c);
}

/* Bits [a, b) of a 64-bit mask, a and b clamped to [0, 64]. */
static inline uint64_t bit_range(int64_t a, int64_t b) {
  a = a < 0 ? 0 : (a > 64 ? 64 : a);
  b = b < 0 ? 0 : (b > 64 ? 64 : b);
  if (b <= a) return 0;
  const uint64_t below_b = b == 64 ? ~(uint64_t)0 : ((uint64_t)1 << b) - 1;
  return below_b & ~(((uint64_t)1 << a) - 1);
}

/* What the gathers of one call share (q8.h, "AMX convolutions"). They read
 * the raw int8 input and flip it to x + 128 on the way (XOR 0x80), reading
 * exactly the bytes of each run; the rounding of a run to 4 bytes gets
 * 0x80 (times zero weights). */
typedef struct gather_plan {
  const wick_conv_shape *s;
  const uint8_t *in;
  size_t kc, run, run4, k; /* k = k_h * run4: where a row's zero tail starts */
  __mmask64 load_tail;     /* the last partial vector of a run: run % 64 bytes */
  __mmask64 store_tail;    /* run4 % 64 bytes */
  __mmask64 zero_tail;     /* the row's tail: kp - k (< 64) bytes */
  __m512i flip, fill;      /* 0x80 in every byte; the raw zero point */
} gather_plan;

/* dst[0, n) = flipped bytes at src + [0, n) inside [lo, hi), the flipped
 * zero point outside them (bytes outside are never read: masked loads do
 * not fault). `src` is an address only: it may lie before the input when
 * the filter hangs over the left edge, so it is carried as an integer. */
static inline void copy_run(const gather_plan *g, uint8_t *dst, uintptr_t src, int64_t lo,
                            int64_t hi) {
  const size_t n = g->run4;
  for (size_t c0 = 0; c0 < n; c0 += 64) {
    const int64_t c = (int64_t)c0;
    const __mmask64 store = (__mmask64)bit_range(0, (int64_t)(n - c0));
    const __mmask64 load = store & (__mmask64)bit_range(lo - c, hi - c);
    const __m512i v = _mm512_mask_loadu_epi8(g->fill, load, (const void *)(src + c0));
    _mm512_mask_storeu_epi8(dst + c0, store, _mm512_xor_si512(v, g->flip));
  }
}

/* A run wholly inside the image: whole vectors, then the tails. */
static inline void copy_inside(const gather_plan *g, uint8_t *dst, const uint8_t *src) {
  size_t c = 0;
  for (; c + 64 <= g->run; c += 64)
    _mm512_storeu_si512(dst + c, _mm512_xor_si512(_mm512_loadu_si512(src + c), g->flip));
  if (c < g->run4)
    _mm512_mask_storeu_epi8(dst + c, g->store_tail,
                            _mm512_xor_si512(_mm512_maskz_loadu_epi8(g->load_tail, src + c),
                                             g->flip));
}

/* Rows of pixels [p0, p1), `kp` bytes apart: per filter row, the run of
 * k_w * in_c input bytes rounded up to run4, then zeros up to kp. */
static void gather_rows(const gather_plan *g, size_t p0, size_t p1, size_t kp, uint8_t *dst) {
  const wick_conv_shape *s = g->s;
  const size_t ow = (size_t)s->out_w, oh = (size_t)s->out_h, kc = g->kc;
  size_t x = p0 % ow, y = p0 / ow % oh, n = p0 / ow / oh;
  for (size_t p = p0; p < p1; p++, dst += kp) {
    _mm512_mask_storeu_epi8(dst + g->k, g->zero_tail, _mm512_setzero_si512());
    const int64_t ix0 = (int64_t)x * s->stride_w - s->pad_left;
    const int64_t first = ix0 < 0 ? -ix0 : 0;    /* taps left of the image */
    const int64_t past = (int64_t)s->in_w - ix0; /* taps before the right edge */
    const int64_t last = past < s->k_w ? past : s->k_w;
    const int64_t lo = first * (int64_t)kc, hi = last * (int64_t)kc; /* bytes inside */
    const bool inside = first == 0 && last == s->k_w;
    const uint8_t *image = g->in + n * (size_t)s->in_h * (size_t)s->in_w * kc;
    int64_t iy = (int64_t)y * s->stride_h - s->pad_top;
    uint8_t *d = dst;
    for (int32_t ky = 0; ky < s->k_h; ky++, d += g->run4, iy += s->dilation_h) {
      if (iy < 0 || iy >= s->in_h || lo >= hi) {
        copy_run(g, d, 0, 0, 0);
        continue;
      }
      const uint8_t *row = image + (size_t)iy * (size_t)s->in_w * kc;
      if (inside)
        copy_inside(g, d, row + (size_t)ix0 * kc);
      else
        copy_run(g, d, (uintptr_t)row + (uintptr_t)(ix0 * (int64_t)kc), lo, hi);
    }
    if (++x == ow) {
      x = 0;
      if (++y == oh) y = 0, n++;
    }
  }
}

/* Tiles 0-3 = rows a (stride kp) x panel b: issued to the tile unit, which
 * works through them while the core goes on (store_tiles waits for them). */
static void multiply_block(const uint8_t *a, size_t kp, const int8_t *b) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const uint8_t *a1 = a + 16 * kp;
  for (size_t k = 0; k < kp; k += KSTEP, b += 16 * GROUP_STRIDE) {
    /* the weights of the step after next (streamed from L2 or memory once
     * per group of blocks); may point past the panels: prefetches never fault */
    for (size_t line = 0; line < 16 * GROUP_STRIDE; line += 64)
      _mm_prefetch((const char *)b + B_PREFETCH + line, _MM_HINT_T0);
    _tile_loadd(4, a + k, kp);
    _tile_loadd(6, b, GROUP_STRIDE);
    _tile_loadd(7, b + 64, GROUP_STRIDE);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_loadd(5, a1 + k, kp);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
}

/* acc (32 x 32 int32, rows 128 bytes apart) = tiles 0-3. */
static void store_tiles(int32_t *acc) {
  _tile_stored(0, acc, 4 * NR);
  _tile_stored(1, acc + 16, 4 * NR);
  _tile_stored(2, acc + 16 * NR, 4 * NR);
  _tile_stored(3, acc + 16 * NR + 16, 4 * NR);
}

/* c rows [0, rows) x channels [0, nc) = requant(acc + bias'). */
static void store_block(const int32_t *acc, const int8_t *header, const int64_t *rq64,
                        const wick_q8_output *o, size_t rows, size_t nc, int8_t *c,
                        size_t c_stride) {
  const int32_t *h = (const int32_t *)(const void *)header;
  for (size_t v = 0; v < 2 && nc > 16 * v; v++) {
    const size_t left = nc - 16 * v;
    const __m512i bias = _mm512_loadu_si512(h + 16 * v);
    const q8_rq64 q = q8_rq64_load(h + 16 * v, NR, rq64 ? rq64 + WICK_Q8_RQ64_WORDS * v : NULL, o);
    const int32_t *src = acc + 16 * v;
    int8_t *dst = c + 16 * v;
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      __m512i x[4];
      for (size_t i = 0; i < 4; i++)
        x[i] = q8_requant64(_mm512_add_epi32(_mm512_loadu_si512(src + (r + i) * NR), bias), &q);
      const __m512i b = q8_narrow64_x4(x[0], x[1], x[2], x[3], &q);
      q8_store16(dst + r * c_stride, _mm512_castsi512_si128(b), left);
      q8_store16(dst + (r + 1) * c_stride, _mm512_extracti32x4_epi32(b, 1), left);
      q8_store16(dst + (r + 2) * c_stride, _mm512_extracti32x4_epi32(b, 2), left);
      q8_store16(dst + (r + 3) * c_stride, _mm512_extracti32x4_epi32(b, 3), left);
    }
    for (; r < rows; r++) {
      const __m512i x = _mm512_add_epi32(_mm512_loadu_si512(src + r * NR), bias);
      q8_store16(dst + r * c_stride, q8_narrow64(q8_requant64(x, &q), &q), left);
    }
  }
}

/* A block whose accumulators wait in a buffer for the output stage. */
typedef struct pending {
  const int32_t *acc;
  const int8_t *panel;
  const int64_t *rq64;
  size_t rows, nc;
  int8_t *c;
} pending;

static void finish(const pending *p, const wick_q8_output *o, size_t c_stride) {
  if (p->acc) store_block(p->acc, p->panel, p->rq64, o, p->rows, p->nc, p->c, c_stride);
}

void wick_q8_conv_amx__avx512amx(const wick_conv_shape *s, const int8_t *input, int32_t zp,
                                 const void *packed, int8_t *output, const wick_q8_output *o,
                                 size_t m0, size_t m1, size_t n0, size_t n1, void *work) {
  if (m0 >= m1 || n0 >= n1) return;
  size_t taps, kc;
  wick_q8_conv_amx_pack_dims(s, &taps, &kc);
  const size_t run4 = (kc + 3) & ~(size_t)3;
  const size_t kp = wick_q8_conv_amx_row_bytes(s), group = wick_q8_conv_amx_group(s);
  const size_t n = (size_t)s->out_c, panel_bytes = HEADER_BYTES + taps * run4 * NR;
  /* two accumulator buffers: the output stage of one block runs on the
   * vector units while the tile unit multiplies the next */
  int32_t *acc[2] = {work, (int32_t *)work + MB * NR};
  uint8_t *rows = (uint8_t *)work + 2 * 4 * MB * NR;
  const gather_plan gp = {.s = s,
                          .in = (const uint8_t *)input,
                          .kc = (size_t)s->in_c,
                          .run = kc,
                          .run4 = run4,
                          .k = taps * run4,
                          .load_tail = (__mmask64)bit_range(0, (int64_t)(kc % 64)),
                          .store_tail = (__mmask64)bit_range(0, (int64_t)(run4 % 64)),
                          .zero_tail = (__mmask64)bit_range(0, (int64_t)(kp - taps * run4)),
                          .flip = _mm512_set1_epi8((char)0x80),
                          .fill = _mm512_set1_epi8((char)zp)};
  pending prev = {0};
  size_t turn = 0;
  configure_tiles();
  for (size_t g0 = m0; g0 < m1; g0 += group * MB) {
    const size_t g1 = m1 - g0 < group * MB ? m1 : g0 + group * MB;
    gather_rows(&gp, g0, g1, kp, rows);
    for (size_t j = n0; j < n1; j += NR) {
      const int8_t *panel = (const int8_t *)packed + j / NR * panel_bytes;
      const int64_t *rq64 = o->rq64 ? o->rq64 + j / 16 * WICK_Q8_RQ64_WORDS : NULL;
      const size_t nc = n1 - j < NR ? n1 - j : NR;
      for (size_t b0 = g0; b0 < g1; b0 += MB, turn ^= 1) {
        multiply_block(rows + (b0 - g0) * kp, kp, panel + HEADER_BYTES);
        finish(&prev, o, n);
        store_tiles(acc[turn]);
        prev =
            (pending){acc[turn], panel, rq64, g1 - b0 < MB ? g1 - b0 : MB, nc, output + b0 * n + j};
      }
    }
  }
  finish(&prev, o, n);
  _tile_release();
}

#else
typedef int wick_q8_conv_amx_unavailable; /* a translation unit needs a declaration */
#endif
