/*
 * fused.c — runs the multi-node patterns src/core/fuse.c replaced by one
 * kernel in one of their nodes (wick_node_fusion in src/core/op_api.h):
 *
 * A decomposed GELU (tanh form) runs the vectorized GELU_TANH over its input
 * (error bound in src/kernels/template/elementwise.h).
 *
 * A decomposed layer normalization (wick_norm_fusion) runs as one pass per row.
 * Each row of `inner` floats is computed with the same vectorized kernels,
 * the same operands and the same order of operations as the unfused nodes
 * (the mid-axis sum of MEAN, the binary kernels of SUB / MUL / ADD /
 * SQUARED_DIFFERENCE, RSQRT as 1 / sqrtf), so the fused result is
 * bit-identical to WICK_NO_FUSION=1 with the optimized kernels; what it saves
 * is eight to ten passes over the tensor and their intermediate tensors.
 * The row stays in L1 between the steps. One scratch row per thread holds the
 * squares, then the per-element scale.
 *
 * A per-channel affine (wick_affine_fusion: MUL by a channel constant, then ADD of one with
 * ADD's clamp) runs per block of whole rows: the MUL kernel into the output, then the ADD
 * kernel over the same block in place while it is in L1, with the nodes' operand orders —
 * bit-identical to the two nodes. Rows of fewer than AFFINE_BLOCK / 2 channels go several
 * to a kernel call against scale and shift repeated in a stack buffer (as parallel.c does for
 * small per-channel broadcasts).
 *
 * An attention over a key/value cache (wick_attention_fusion) runs in
 * src/ops/attention.c, an 8-bit swish (wick_node_fusion.q8_swish) in
 * src/ops/activations_quantized.c.
 */
#include <math.h>
#include <string.h>

#include "core/op_api.h"
#include "kernels/kernels.h"
#include "ops/op_common.h"
#include "ops/parallel.h"
#include "ops/quantization.h"

typedef struct norm_job {
  const wick_f32_kernels *k;
  const wick_norm_fusion *f;
  const float *x, *gamma, *beta;
  float *y, *scratch;
} norm_job;

/* out = a op b over n elements, unclamped (the fused nodes have no activation). */
static void binary(const norm_job *j, int op, int form, size_t n, const float *a, const float *b,
                   float *out) {
  j->k->binary[op][form](n, a, b, out, -INFINITY, INFINITY);
}

/* The row mean as MEAN computes it: the mid-axis sum scaled by 1 / n. */
static float row_mean(const norm_job *j, size_t n, const float *row) {
  float m;
  j->k->sum_mid(n, 1, 1.0f / (float)n, row, &m, 0, 1);
  return m;
}

static void norm_rows(void *arg, size_t begin, size_t end, size_t thread) {
  const norm_job *j = arg;
  const wick_norm_fusion *f = j->f;
  const size_t n = f->inner;
  float *tmp = j->scratch + thread * n;
  for (size_t r = begin; r < end; r++) {
    const float *x = j->x + r * n;
    float *y = j->y + r * n;
    float mean = row_mean(j, n, x);
    if (f->form == WICK_NORM_CENTERED) {
      binary(j, WICK_F32_SUB, WICK_F32_VS, n, x, &mean, y); /* d */
      binary(j, WICK_F32_MUL, WICK_F32_VV, n, y, y, tmp);
      float rs = 1.0f / sqrtf(row_mean(j, n, tmp) + f->eps);
      binary(j, WICK_F32_MUL, WICK_F32_VS, n, y, &rs, y);
      if (j->gamma) binary(j, WICK_F32_MUL, WICK_F32_VV, n, y, j->gamma, y);
      if (j->beta) binary(j, WICK_F32_ADD, WICK_F32_VV, n, y, j->beta, y);
      continue;
    }
    /* SCALED */
    float neg_mean = -mean;
    binary(j, WICK_F32_SQUARED_DIFFERENCE, WICK_F32_VS, n, x, &mean, tmp);
    float rs = 1.0f / sqrtf(row_mean(j, n, tmp) + f->eps);
    if (j->gamma) {
      binary(j, WICK_F32_MUL, WICK_F32_VS, n, j->gamma, &rs, tmp); /* s */
      binary(j, WICK_F32_MUL, WICK_F32_VV, n, x, tmp, y);
      binary(j, WICK_F32_MUL, WICK_F32_VS, n, tmp, &neg_mean, tmp);
      if (j->beta) binary(j, WICK_F32_ADD, WICK_F32_VV, n, tmp, j->beta, tmp);
      binary(j, WICK_F32_ADD, WICK_F32_VV, n, y, tmp, y);
    } else {
      float shift = neg_mean * rs;
      binary(j, WICK_F32_MUL, WICK_F32_VS, n, x, &rs, y);
      if (j->beta) {
        binary(j, WICK_F32_ADD, WICK_F32_VS, n, j->beta, &shift, tmp);
        binary(j, WICK_F32_ADD, WICK_F32_VV, n, y, tmp, y);
      } else {
        binary(j, WICK_F32_ADD, WICK_F32_VS, n, y, &shift, y);
      }
    }
  }
}

/* ---- per-channel affine ---- */

#define AFFINE_BLOCK 1024 /* floats of scale and shift repeated on the stack */
#define AFFINE_WORK_PER_ELEMENT 16

typedef struct affine_job {
  const wick_f32_kernels *k;
  const wick_affine_fusion *f;
  const float *x, *scale, *shift;
  float *y;
  size_t rows_per_call; /* rows of `channels` per kernel call */
} affine_job;

static void affine_rows(void *arg, size_t begin, size_t end, size_t thread) {
  (void)thread;
  const affine_job *j = arg;
  const wick_affine_fusion *f = j->f;
  const size_t c = f->channels;
  const wick_f32_binary_fn mul = j->k->binary[WICK_F32_MUL][WICK_F32_VV];
  const wick_f32_binary_fn add = j->k->binary[WICK_F32_ADD][WICK_F32_VV];
  float scale_rows[AFFINE_BLOCK], shift_rows[AFFINE_BLOCK];
  const float *s = j->scale, *b = j->shift;
  if (j->rows_per_call > 1) {
    for (size_t r = 0; r < j->rows_per_call; r++) {
      memcpy(scale_rows + r * c, j->scale, c * sizeof(float));
      memcpy(shift_rows + r * c, j->shift, c * sizeof(float));
    }
    s = scale_rows, b = shift_rows;
  }
  for (size_t r = begin; r < end;) {
    const size_t rows = end - r < j->rows_per_call ? end - r : j->rows_per_call;
    const size_t n = rows * c;
    const float *x = j->x + r * c;
    float *y = j->y + r * c;
    if (f->scale_first)
      mul(n, s, x, y, -INFINITY, INFINITY);
    else
      mul(n, x, s, y, -INFINITY, INFINITY);
    if (f->shift_first)
      add(n, b, y, y, f->lo, f->hi);
    else
      add(n, y, b, y, f->lo, f->hi);
    r += rows;
  }
}

static wick_status affine_invoke(const wick_op_ctx *ctx, const wick_affine_fusion *f) {
  const wick_tensor *x = wick_op_graph_tensor(ctx, f->input);
  const size_t c = f->channels, rows = c > 0 ? (size_t)wick_tensor_elements(x) / c : 0;
  if (rows == 0) return WICK_OK;
  affine_job j = {wick_f32_kernels_select(false),
                  f,
                  x->data,
                  wick_op_graph_tensor(ctx, f->scale)->data,
                  wick_op_graph_tensor(ctx, f->shift)->data,
                  wick_op_output(ctx, 0)->data,
                  c <= AFFINE_BLOCK / 2 ? AFFINE_BLOCK / c : 1};
  return wick_parallel_range(ctx, rows, (uint64_t)c * AFFINE_WORK_PER_ELEMENT, affine_rows, &j);
}

wick_status wick_fused_invoke(const wick_op_ctx *ctx) {
  const wick_node_fusion *fu = wick_op_fusion(ctx);
  if (fu->attention.on) return wick_attention_invoke(ctx);
  if (fu->q8_swish != 0) return wick_q8_swish_invoke(ctx);
  if (fu->affine.on) return affine_invoke(ctx, &fu->affine);
  if (fu->unary != 0) {
    const wick_tensor *in = wick_op_graph_tensor(ctx, fu->unary_input);
    const wick_tensor *out = wick_op_output(ctx, 0);
    wick_f32_unary_fn fn = wick_f32_kernels_select(false)->unary[fu->unary - 1];
    return wick_parallel_f32_unary(ctx, fn, (size_t)wick_tensor_elements(in), in->data, out->data);
  }
  const wick_norm_fusion *f = &fu->norm;
  const wick_tensor *x = wick_op_input(ctx, 0);
  wick_tensor *y = wick_op_output(ctx, 0);
  norm_job j = {wick_f32_kernels_select(false),
                f,
                x->data,
                f->gamma >= 0 ? wick_op_graph_tensor(ctx, f->gamma)->data : NULL,
                f->beta >= 0 ? wick_op_graph_tensor(ctx, f->beta)->data : NULL,
                y->data,
                wick_op_scratch(ctx)};
  size_t rows = (size_t)wick_tensor_elements(x) / f->inner;
  /* per row: about ten passes over its elements */
  return wick_parallel_range(ctx, rows, (uint64_t)f->inner * 10, norm_rows, &j);
}
