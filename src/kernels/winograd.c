/*
 * winograd.c — fp32 CONV_2D 3x3 / stride 1 as Winograd F(4x4, 3x3): the
 * filter transform and packing (prepare) and the task driver (invoke). The
 * per-ISA input/output transforms are template/winograd.h; the algorithm and
 * its measured error in docs/architecture.md ("Winograd 3×3 convolutions").
 *
 * Each 4x4 block of output pixels (a tile) is computed from the 6x6 input
 * window around it as Y = A^T [ (G g G^T) . (B^T d B) ] A, summed over input
 * channels. The sum over channels of the element-wise products is, for each
 * of the 36 positions xi, a GEMM: M_xi [tiles x out_c] = V_xi [tiles x in_c]
 * x U_xi [in_c x out_c], run by the same microkernels as the direct
 * convolution. 36 multiply-adds per tile and channel pair instead of 144.
 *
 * Packed filter (floats):
 *
 *   [ bias, out_c rounded up to 16 ][ U_0 ][ U_1 ] ... [ U_35 ]
 *
 * each U_xi in the GEMM layout of kernels.h (NR-wide panels, a zero bias row,
 * then in_c rows). The transform runs in double and rounds once.
 */
#include <math.h>
#include <string.h>

#include "kernels/kernels.h"

#define TILE 4        /* output pixels per tile side */
#define WINDOW 6      /* input pixels per window side: TILE + 3 - 1 */
#define PLANES 36     /* WINDOW * WINDOW */
#define BIAS_ALIGN 16 /* floats */
/* Bytes of V + M scratch a task aims for: in L2 with the U_xi it reads. */
#define TASK_SCRATCH_BYTES ((size_t)1536 * 1024)

bool wick_f32_winograd_supported(const wick_f32_kernels *k, const wick_conv_shape *s) {
  return k != NULL && k->winograd_input != NULL && k->winograd_output != NULL && s->k_h == 3 &&
         s->k_w == 3 && s->stride_h == 1 && s->stride_w == 1 && s->dilation_h == 1 &&
         s->dilation_w == 1 && s->groups == 1 && s->in_c > 0 && s->out_c > 0;
}

static size_t bias_floats(size_t out_c) {
  return (out_c + BIAS_ALIGN - 1) / BIAS_ALIGN * BIAS_ALIGN;
}

bool wick_f32_winograd_packed_size(const wick_conv_shape *s, size_t nr, size_t *floats_out) {
  size_t plane, total;
  if (!wick_f32_gemm_packed_size_checked((size_t)s->out_c, (size_t)s->in_c, nr, &plane) ||
      __builtin_mul_overflow(plane, (size_t)PLANES, &total) ||
      __builtin_add_overflow(total, bias_floats((size_t)s->out_c), &total))
    return false;
  *floats_out = total;
  return true;
}

void wick_f32_winograd_pack(const wick_conv_shape *s, size_t nr, const float *filter,
                            const float *bias, float *packed) {
  static const double g_mat[WINDOW][3] = {
      {1.0 / 4, 0, 0},
      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
      {1.0 / 24, 1.0 / 12, 1.0 / 6},
      {1.0 / 24, -1.0 / 12, 1.0 / 6},
      {0, 0, 1},
  };
  const size_t in_c = (size_t)s->in_c, out_c = (size_t)s->out_c, nb = bias_floats(out_c);
  const size_t plane = wick_f32_gemm_packed_size(out_c, in_c, nr);
  memset(packed, 0, (nb + PLANES * plane) * sizeof(float));
  for (size_t o = 0; o < out_c; o++) packed[o] = bias ? bias[o] : 0.0f;
  for (size_t o = 0; o < out_c; o++) {
    /* column o of every U_xi: panel o / nr, lane o % nr, after the bias row */
    float *col = packed + nb + o / nr * (in_c + 1) * nr + nr + o % nr;
    for (size_t i = 0; i < in_c; i++) {
      double g[3][3], gg[WINDOW][3];
      for (size_t ky = 0; ky < 3; ky++)
        for (size_t kx = 0; kx < 3; kx++) g[ky][kx] = filter[((o * 3 + ky) * 3 + kx) * in_c + i];
      for (size_t l = 0; l < WINDOW; l++)
        for (size_t kx = 0; kx < 3; kx++)
          gg[l][kx] = g_mat[l][0] * g[0][kx] + g_mat[l][1] * g[1][kx] + g_mat[l][2] * g[2][kx];
      for (size_t l = 0; l < WINDOW; l++)
        for (size_t k = 0; k < WINDOW; k++) {
          const double u = gg[l][0] * g_mat[k][0] + gg[l][1] * g_mat[k][1] + gg[l][2] * g_mat[k][2];
          col[(l * WINDOW + k) * plane + i * nr] = (float)u;
        }
    }
  }
}

bool wick_f32_winograd_plan(wick_f32_winograd_tasks *t, const wick_f32_kernels *kern,
                            const wick_f32_gemm_kernel *gemm, const wick_conv_shape *s) {
  *t = (wick_f32_winograd_tasks){.kern = kern, .gemm = gemm, .s = s};
  t->tiles_h = ((size_t)s->out_h + TILE - 1) / TILE;
  t->tiles_w = ((size_t)s->out_w + TILE - 1) / TILE;
  size_t channels, per_tile;
  if (__builtin_mul_overflow(t->tiles_h, t->tiles_w, &t->tiles) ||
      __builtin_mul_overflow(t->tiles, (size_t)s->batch, &t->tiles) ||
      __builtin_add_overflow((size_t)s->in_c, (size_t)s->out_c, &channels) ||
      __builtin_mul_overflow(channels, PLANES * sizeof(float), &per_tile))
    return false;
  /* Blocks of MR-aligned tiles within the scratch budget; an even number of
   * them when there are several (two threads share them evenly). */
  const size_t mr = gemm->mr;
  size_t block = TASK_SCRATCH_BYTES / per_tile / mr * mr;
  if (block < mr) block = mr;
  size_t tasks = (t->tiles + block - 1) / block;
  if (tasks % 2 == 1 && (tasks > 1 || t->tiles >= 2 * mr)) tasks++;
  if (tasks == 0) tasks = 1;
  block = ((t->tiles + tasks - 1) / tasks + mr - 1) / mr * mr;
  t->block = block;
  t->tasks = (t->tiles + block - 1) / block;
  return !__builtin_mul_overflow(block, channels * PLANES, &t->scratch_floats);
}

void wick_f32_winograd_run_task(const wick_f32_winograd_tasks *t, size_t task, size_t thread) {
  const wick_conv_shape *s = t->s;
  const size_t in_c = (size_t)s->in_c, out_c = (size_t)s->out_c, mr = t->gemm->mr;
  const size_t t0 = task * t->block, t1 = t0 + t->block < t->tiles ? t0 + t->block : t->tiles;
  const size_t v_plane = t->block * in_c, m_plane = t->block * out_c;
  float *v = t->scratch + thread * t->scratch_floats, *m = v + PLANES * v_plane;
  t->kern->winograd_input(s, t->tiles_h, t->tiles_w, t->input, t0, t1, v, v_plane);
  const size_t nb = bias_floats(out_c);
  const size_t u_plane = wick_f32_gemm_packed_size(out_c, in_c, t->gemm->nr);
  for (size_t xi = 0; xi < PLANES; xi++) {
    const float *u = t->packed + nb + xi * u_plane;
    for (size_t r0 = 0; r0 < t1 - t0; r0 += mr) {
      const size_t rows = t1 - t0 - r0 < mr ? t1 - t0 - r0 : mr;
      t->gemm->gemm(rows, out_c, in_c, v + xi * v_plane + r0 * in_c, in_c, u,
                    m + xi * m_plane + r0 * out_c, out_c, -INFINITY, INFINITY);
    }
  }
  t->kern->winograd_output(s, t->tiles_h, t->tiles_w, m, m_plane, t->packed, t0, t1, t->output,
                           t->lo, t->hi);
  if (t->ep == NULL) return;
  const size_t per_image = t->tiles_h * t->tiles_w, row = (size_t)s->out_w * out_c;
  for (size_t i = t0; i < t1; i++) {
    const size_t n = i / per_image, oy = i % per_image / t->tiles_w * TILE;
    const size_t ox = i % t->tiles_w * TILE;
    const size_t rows = (size_t)s->out_h - oy < TILE ? (size_t)s->out_h - oy : TILE;
    const size_t cols = (size_t)s->out_w - ox < TILE ? (size_t)s->out_w - ox : TILE;
    const size_t offset = (n * (size_t)s->out_h + oy) * row + ox * out_c;
    wick_f32_epilogue_run(t->ep, rows, cols * out_c, t->output + offset, row, offset);
  }
}
