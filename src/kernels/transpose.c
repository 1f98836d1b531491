/*
 * transpose.c — the blocked 2-D transpose behind TRANSPOSE (and every
 * strided copy whose two innermost dimensions swap): portable C, plus the
 * 128-bit vectors every CPU of an architecture has (SSE2 on x86-64, Advanced
 * SIMD on AArch64) for bytes: 16 x 16 blocks in registers, four rounds of
 * interleaves (int8 attention's key transpose [4, 32, 12, 32] ->
 * [4, 12, 32, 32] took 31 us with the scalar tile on a Zen 3, as long as
 * fp32's).
 *
 * After wick_copy_plan_simplify, the common layout permutations end in two
 * dimensions [A, B] where the source is contiguous along A and the
 * destination along B: NCHW <-> NHWC ([C, HW] <-> [HW, C]), ShuffleNet's
 * channel shuffle ([HW, 2, C/2] -> [HW, C/2, 2]), attention head splits.
 * The reference copies such a plan B elements at a time with strided reads
 * (a row per outer step: 2 elements for the channel shuffle). Here each outer
 * step copies the whole A x B tile in blocks of 16 A-rows: 16 contiguous
 * reads per B, writes landing in the same 16 destination rows while they are
 * in L1. Results are identical to the reference (a copy).
 */
#include <string.h>

#include "kernels/kernels.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define HAVE_V16 1
typedef __m128i v16;
#define V16_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V16_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), v)
#define ZIP_LO8 _mm_unpacklo_epi8
#define ZIP_HI8 _mm_unpackhi_epi8
#define ZIP_LO16 _mm_unpacklo_epi16
#define ZIP_HI16 _mm_unpackhi_epi16
#define ZIP_LO32 _mm_unpacklo_epi32
#define ZIP_HI32 _mm_unpackhi_epi32
#define ZIP_LO64 _mm_unpacklo_epi64
#define ZIP_HI64 _mm_unpackhi_epi64
#elif defined(__aarch64__)
#include <arm_neon.h>
#define HAVE_V16 1
typedef uint8x16_t v16;
#define V16_LOAD(p) vld1q_u8(p)
#define V16_STORE(p, v) vst1q_u8(p, v)
#define ZIP_AS(W, HALF, a, b) \
  vreinterpretq_u8_u##W(vzip##HALF##q_u##W(vreinterpretq_u##W##_u8(a), vreinterpretq_u##W##_u8(b)))
#define ZIP_LO8(a, b) vzip1q_u8(a, b)
#define ZIP_HI8(a, b) vzip2q_u8(a, b)
#define ZIP_LO16(a, b) ZIP_AS(16, 1, a, b)
#define ZIP_HI16(a, b) ZIP_AS(16, 2, a, b)
#define ZIP_LO32(a, b) ZIP_AS(32, 1, a, b)
#define ZIP_HI32(a, b) ZIP_AS(32, 2, a, b)
#define ZIP_LO64(a, b) ZIP_AS(64, 1, a, b)
#define ZIP_HI64(a, b) ZIP_AS(64, 2, a, b)
#endif

#define BLOCK 16

#ifdef HAVE_V16
/* One 16 x 16 block of bytes: source rows i (16 consecutive a's each, sb apart) to destination
 * rows a (16 consecutive i's each, da apart). Interleaving rows pairwise as bytes, then
 * 2-byte, 4-byte and 8-byte groups gathers column c of the block into one vector:
 *   after round 1, x[i] / x[8 + i]  = rows 2i, 2i+1 of columns 0-7 / 8-15 (2 bytes each)
 *   after round 2, y[4q + j]        = rows 4j..4j+3 of columns 4q..4q+3 (4 bytes each)
 *   after round 3, z[4q + 0 / 1]    = rows 0-7 of columns 4q, 4q+1 / 4q+2, 4q+3 (8 bytes each),
 *                  z[4q + 2 / 3]    = rows 8-15 of the same
 *   round 4: column 4q + c of rows 0-15. */
static void block16_u8(const uint8_t *s, int64_t sb, uint8_t *d, int64_t da) {
  v16 r[16], x[16], y[16], z[16];
  for (int i = 0; i < 16; i++) r[i] = V16_LOAD(s + i * sb);
  for (int i = 0; i < 8; i++) {
    x[i] = ZIP_LO8(r[2 * i], r[2 * i + 1]);
    x[8 + i] = ZIP_HI8(r[2 * i], r[2 * i + 1]);
  }
  for (int j = 0; j < 4; j++) {
    y[j] = ZIP_LO16(x[2 * j], x[2 * j + 1]);
    y[4 + j] = ZIP_HI16(x[2 * j], x[2 * j + 1]);
    y[8 + j] = ZIP_LO16(x[8 + 2 * j], x[9 + 2 * j]);
    y[12 + j] = ZIP_HI16(x[8 + 2 * j], x[9 + 2 * j]);
  }
  for (int q = 0; q < 4; q++) {
    z[4 * q] = ZIP_LO32(y[4 * q], y[4 * q + 1]);
    z[4 * q + 1] = ZIP_HI32(y[4 * q], y[4 * q + 1]);
    z[4 * q + 2] = ZIP_LO32(y[4 * q + 2], y[4 * q + 3]);
    z[4 * q + 3] = ZIP_HI32(y[4 * q + 2], y[4 * q + 3]);
  }
  for (int q = 0; q < 4; q++) {
    V16_STORE(d + (4 * q) * da, ZIP_LO64(z[4 * q], z[4 * q + 2]));
    V16_STORE(d + (4 * q + 1) * da, ZIP_HI64(z[4 * q], z[4 * q + 2]));
    V16_STORE(d + (4 * q + 2) * da, ZIP_LO64(z[4 * q + 1], z[4 * q + 3]));
    V16_STORE(d + (4 * q + 3) * da, ZIP_HI64(z[4 * q + 1], z[4 * q + 3]));
  }
}

/* The byte tile in 16 x 16 blocks; the strips past the last whole block element by element. */
static void tile_u8(const uint8_t *s, uint8_t *d, int64_t na, int64_t nb, int64_t sb, int64_t da) {
  const int64_t fa = na / 16 * 16, fb = nb / 16 * 16;
  for (int64_t a0 = 0; a0 < fa; a0 += 16) {
    for (int64_t b0 = 0; b0 < fb; b0 += 16) block16_u8(s + a0 + b0 * sb, sb, d + a0 * da + b0, da);
    for (int64_t b = fb; b < nb; b++)
      for (int64_t a = a0; a < a0 + 16; a++) d[a * da + b] = s[a + b * sb];
  }
  for (int64_t b = 0; b < nb; b++)
    for (int64_t a = fa; a < na; a++) d[a * da + b] = s[a + b * sb];
}
#endif

bool wick_strided_copy_is_transpose(const wick_copy_plan *p) {
  const int32_t r = p->rank;
  return r >= 2 && p->src_strides[r - 2] == 1 && p->dst_strides[r - 1] == 1 &&
         p->src_strides[r - 1] != 1 && p->dims[r - 1] > 1;
}

#define TILE(T)                                                            \
  do {                                                                     \
    const T *s_ = (const T *)s;                                            \
    T *d_ = (T *)d;                                                        \
    for (int64_t a0 = 0; a0 < na; a0 += BLOCK) {                           \
      const int64_t a1 = na - a0 < BLOCK ? na : a0 + BLOCK;                \
      for (int64_t b = 0; b < nb; b++)                                     \
        for (int64_t a = a0; a < a1; a++) d_[a * da + b] = s_[a + b * sb]; \
    }                                                                      \
  } while (0)

/* Interleaves NB planes of T (NB = 2..4, source rows sb apart) into
 * contiguous groups of NB: an image's few channels going NCHW -> NHWC
 * (bytes for uint8 images, floats for fp32 ones). A fixed group size and no
 * blocking let the compiler vectorize the interleave or at least keep it to
 * NB streaming reads and one sequential write stream (the blocked loop
 * writes one element every NB, block row by block row: 1x3x224x224 fp32
 * took ~100-200 us that way, ~4% of MobileNetV3-Small). */
#define INTERLEAVE(T, NB)                                                   \
  do {                                                                      \
    const T *s_ = (const T *)s;                                             \
    T *d_ = (T *)d;                                                         \
    for (int64_t a = 0; a < na; a++)                                        \
      for (int64_t b = 0; b < (NB); b++) d_[a * (NB) + b] = s_[a + b * sb]; \
  } while (0)

static void tile(size_t esize, const uint8_t *s, uint8_t *d, int64_t na, int64_t nb, int64_t sb,
                 int64_t da) {
  if ((esize == 1 || esize == 4) && da == nb && nb >= 2 && nb <= 4) {
    if (esize == 1) {
      if (nb == 2) INTERLEAVE(uint8_t, 2);
      if (nb == 3) INTERLEAVE(uint8_t, 3);
      if (nb == 4) INTERLEAVE(uint8_t, 4);
    } else {
      if (nb == 2) INTERLEAVE(uint32_t, 2);
      if (nb == 3) INTERLEAVE(uint32_t, 3);
      if (nb == 4) INTERLEAVE(uint32_t, 4);
    }
    return;
  }
#ifdef HAVE_V16
  if (esize == 1 && na >= 16 && nb >= 16) {
    tile_u8(s, d, na, nb, sb, da);
    return;
  }
#endif
  switch (esize) {
    case 1: TILE(uint8_t); break;
    case 2: TILE(uint16_t); break;
    case 4: TILE(uint32_t); break;
    case 8: TILE(uint64_t); break;
    default:
      for (int64_t a = 0; a < na; a++)
        for (int64_t b = 0; b < nb; b++)
          memcpy(d + (a * da + b) * (int64_t)esize, s + (a + b * sb) * (int64_t)esize, esize);
  }
}

void wick_strided_copy_transpose(size_t esize, const wick_copy_plan *p, const void *src,
                                 void *dst) {
  const int32_t r = p->rank;
  for (int32_t k = 0; k < r; k++)
    if (p->dims[k] == 0) return;
  const uint8_t *s = (const uint8_t *)src + p->src_offset * (int64_t)esize;
  uint8_t *d = (uint8_t *)dst + p->dst_offset * (int64_t)esize;
  const int64_t na = p->dims[r - 2], nb = p->dims[r - 1];
  const int64_t sb = p->src_strides[r - 1], da = p->dst_strides[r - 2];
  int64_t outer = 1;
  for (int32_t k = 0; k < r - 2; k++) outer *= p->dims[k];
  int64_t idx[WICK_COPY_MAX_RANK] = {0};
  int64_t so = 0, dof = 0;
  for (int64_t o = 0; o < outer; o++) {
    tile(esize, s + so * (int64_t)esize, d + dof * (int64_t)esize, na, nb, sb, da);
    for (int32_t k = r - 3; k >= 0; k--) {
      so += p->src_strides[k];
      dof += p->dst_strides[k];
      if (++idx[k] < p->dims[k]) break;
      so -= p->src_strides[k] * p->dims[k];
      dof -= p->dst_strides[k] * p->dims[k];
      idx[k] = 0;
    }
  }
}
