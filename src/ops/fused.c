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
 * An attention over a key/value cache (wick_attention_fusion) runs in
 * src/ops/attention.c, an 8-bit swish (wick_node_fusion.q8_swish) in
 * src/ops/activations_quantized.c.
 */
#include <math.h>

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

wick_status wick_fused_invoke(const wick_op_ctx *ctx) {
  const wick_node_fusion *fu = wick_op_fusion(ctx);
  if (fu->attention.on) return wick_attention_invoke(ctx);
  if (fu->q8_swish != 0) return wick_q8_swish_invoke(ctx);
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
