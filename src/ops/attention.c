/*
 * attention.c — runs the attention over a key/value cache that src/core/fuse.c recognized
 * (wick_attention_fusion: BATCH_MATMUL, optional elementwise steps, ADD of a mask, SOFTMAX,
 * BATCH_MATMUL) in its first BATCH_MATMUL node, over the key positions the mask leaves
 * visible (kernels/attention.c says why the result is bit-identical to the unfused nodes'):
 *
 *   1. per batch and tile of query rows (the scores GEMM's MR rows, as the unfused
 *      BATCH_MATMUL tiles them), the extent e: every visible column of the tile's mask rows,
 *      rounded up to the layout's alignment; per batch the largest;
 *      and the start: the first column any of its rows sees, rounded down (a sliding
 *      window's first position; 0 for a causal mask); per batch the smallest;
 *   2. per batch (tasks over the threads): the key columns and value rows [start, e) packed
 *      (the batch's smallest start and largest extent) — or nothing, where the kernels read
 *      the cache in place (AVX2, AVX-512, NEON: wick_f32_attention.inplace), each tile
 *      from its own start;
 *   3. per batch and tile (tasks): the scores of the tile's rows over [start, e), the steps,
 *      the mask, the softmax, all on the tile while it is in L1, then the tile's output rows
 *      over e positions (panel by panel of the values, each row by the microkernel the
 *      unfused BATCH_MATMUL would use for it: the one-row kernel for a last row alone in its
 *      tile).
 *
 * So a decode step at position p costs ~p of the cache's positions (a sliding layer's: its
 * window), and a prefill's tiles stop at their own last token (the causal triangle). The node's
 * multiply-accumulates (wick_interpreter_op_macs) are those of the last invoke: the tiles' rows x
 * (e - start) x (d + dv). Every output is computed by one task with a fixed sequence of operations:
 * bit-identical for any thread count.
 */
#include <math.h>
#include <string.h>

#include "core/op_api.h"
#include "kernels/kernels.h"
#include "ops/op_common.h"

typedef struct attention_job {
  const wick_f32_attention *a;
  const wick_attention_fusion *f;
  const float *q, *kt, *v, *mask;
  float *out;
  uint8_t *scratch;
  const size_t *extents; /* per batch: one per tile, then the batch's largest */
  const size_t *starts;  /* per batch: one per tile, then the batch's smallest */
  /* the scores' view the ADD sees (rows: all dims but the last) and the mask's element stride
   * along each of them (0: broadcast) */
  int32_t view_rank;
  int32_t view_dims[WICK_MAX_RANK];
  size_t mask_strides[WICK_MAX_RANK];
} attention_job;

/* The mask row of scores row `row` (of batches x m). */
static const float *mask_row(const attention_job *j, size_t row) {
  size_t off = 0;
  for (int32_t k = j->view_rank - 2; k >= 0; k--) {
    off += (row % (size_t)j->view_dims[k]) * j->mask_strides[k];
    row /= (size_t)j->view_dims[k];
  }
  return j->mask + off;
}

static float *keys_of(const attention_job *j, size_t b) {
  return (float *)(void *)(j->scratch + j->a->keys_at) + b * j->a->keys_floats;
}

static float *values_of(const attention_job *j, size_t b) {
  return (float *)(void *)(j->scratch + j->a->values_at) + b * j->a->values_floats;
}

static void pack_task(void *arg, size_t b, size_t thread) {
  (void)thread;
  const attention_job *j = arg;
  const wick_f32_attention *a = j->a;
  const size_t last = b * (a->tiles + 1) + a->tiles;
  wick_f32_attention_pack(a, j->kt + b * a->d * a->s, j->v + b * a->s * a->dv, j->starts[last],
                          j->extents[last], keys_of(j, b), values_of(j, b));
}

/* The steps, the mask and the softmax on one row of e scores, as the unfused nodes compute
 * them. */
static void finish_row(const attention_job *j, float *row, const float *mask, size_t e) {
  const wick_attention_fusion *f = j->f;
  const wick_f32_kernels *k = j->a->k;
  for (int32_t i = 0; i < f->num_steps; i++) {
    const float c = f->steps[i].value;
    switch (f->steps[i].kind) {
      case WICK_ATTENTION_UNARY: k->unary[f->steps[i].unary](e, row, row); break;
      case WICK_ATTENTION_MUL:
        if (f->steps[i].scalar_first)
          k->binary[WICK_F32_MUL][WICK_F32_SV](e, &c, row, row, -INFINITY, INFINITY);
        else
          k->binary[WICK_F32_MUL][WICK_F32_VS](e, row, &c, row, -INFINITY, INFINITY);
        break;
      case WICK_ATTENTION_DIV:
        k->binary[WICK_F32_DIV][WICK_F32_VS](e, row, &c, row, -INFINITY, INFINITY);
        break;
    }
  }
  if (f->mask_first)
    k->binary[WICK_F32_ADD][WICK_F32_VV](e, mask, row, row, -INFINITY, INFINITY);
  else
    k->binary[WICK_F32_ADD][WICK_F32_VV](e, row, mask, row, -INFINITY, INFINITY);
  k->softmax(e, f->beta, row, row, 0, 1);
}

/* Output rows [i0, i0 + rows) of batch b over the positions [start, e) (probs: the rows'
 * probabilities from position start), in place or panel by panel of the values (packed for
 * the batch's positions [sb, eb), sb = start). */
static void value_rows(const attention_job *j, size_t b, size_t i0, size_t rows, bool one_row,
                       const float *probs, size_t start, size_t e, size_t eb) {
  const wick_f32_attention *a = j->a;
  float *out = j->out + (b * a->m + i0) * a->dv;
  if (a->inplace) {
    const wick_f32_gemm_inplace_fn fn = one_row ? a->k->gemm_inplace_1 : a->k->gemm_inplace;
    fn(rows, a->dv, e - start, probs, a->s, j->v + (b * a->s + start) * a->dv, a->dv, out, a->dv,
       -INFINITY, INFINITY);
    return;
  }
  const wick_f32_gemm_kernel *kern = a->values;
  const wick_f32_gemm_ukernel_fn fn = one_row ? kern->gemm_1 : kern->gemm;
  const float *w = values_of(j, b);
  for (size_t c0 = 0; c0 < a->dv; c0 += kern->nr) {
    const size_t nc = a->dv - c0 < kern->nr ? a->dv - c0 : kern->nr;
    fn(rows, nc, e - start, probs, a->s, w + c0 / kern->nr * (eb - start + 1) * kern->nr, out + c0,
       a->dv, -INFINITY, INFINITY);
  }
}

static void tile_task(void *arg, size_t task, size_t thread) {
  const attention_job *j = arg;
  const wick_f32_attention *a = j->a;
  const size_t b = task / a->tiles, i0 = task % a->tiles * a->rows;
  const size_t rows = a->m - i0 < a->rows ? a->m - i0 : a->rows;
  const size_t *extents = j->extents + b * (a->tiles + 1);
  const size_t *starts = j->starts + b * (a->tiles + 1);
  const size_t e = extents[task % a->tiles], eb = extents[a->tiles];
  /* in place each tile from its own start; packed, the batch's */
  const size_t start = a->inplace ? starts[task % a->tiles] : starts[a->tiles];
  /* (columns stay where they are: column c of a row at scores + c) */
  float *scores = (float *)(void *)(j->scratch + a->scores_at) + thread * a->rows * a->s;
  const float *q = j->q + (b * a->m + i0) * a->d;
  if (a->inplace) {
    const wick_f32_gemm_inplace_fn fn = rows == 1 ? a->k->gemm_inplace_1 : a->k->gemm_inplace;
    fn(rows, e - start, a->d, q, a->d, j->kt + b * a->d * a->s + start, a->s, scores + start, a->s,
       -INFINITY, INFINITY);
  } else {
    const wick_f32_gemm_ukernel_fn fn = rows == 1 ? a->scores->gemm_1 : a->scores->gemm;
    fn(rows, e - start, a->d, q, a->d, keys_of(j, b), scores + start, a->s, -INFINITY, INFINITY);
  }
  for (size_t r = 0; r < rows; r++)
    finish_row(j, scores + r * a->s + start, mask_row(j, b * a->m + i0 + r) + start, e - start);
  /* the rows in runs within the values kernel's tiles (MR rows from row 0, as the unfused
   * BATCH_MATMUL cuts them): a tile of one row runs the one-row kernel there */
  const size_t mr = a->values->mr;
  for (size_t r = 0; r < rows;) {
    const size_t i = i0 + r, tile = i / mr * mr;
    const size_t tile_end = tile + mr < a->m ? tile + mr : a->m;
    const size_t n = (tile_end < i0 + rows ? tile_end : i0 + rows) - i;
    value_rows(j, b, i, n, tile_end - tile == 1, scores + r * a->s + start, start, e, eb);
    r += n;
  }
}

wick_status wick_attention_invoke(const wick_op_ctx *ctx) {
  const wick_attention_fusion *f = &wick_op_fusion(ctx)->attention;
  const wick_tensor *mask = wick_op_graph_tensor(ctx, f->mask);
  const wick_tensor *view = wick_op_graph_tensor(ctx, f->view);
  wick_f32_attention a;
  if (!wick_f32_attention_init(&a, wick_f32_kernels_select(false), f->batches, f->m, f->d, f->s,
                               f->dv, wick_op_num_threads(ctx)))
    return wick_op_fail(ctx, WICK_ERR_INVALID_ARGUMENT, "internal: fused attention layout");
  attention_job j = {.a = &a,
                     .f = f,
                     .q = wick_op_input(ctx, 0)->data,
                     .kt = wick_op_input(ctx, 1)->data,
                     .v = wick_op_graph_tensor(ctx, f->values)->data,
                     .mask = mask->data,
                     .out = wick_op_output(ctx, 0)->data,
                     .scratch = wick_op_scratch(ctx),
                     .view_rank = view->rank};
  /* the mask's strides along the view's dims, aligned from the right (fuse.c checked that each
   * of its dims is 1 or the view's) */
  size_t stride = (size_t)mask->dims[mask->rank - 1];
  for (int32_t i = view->rank - 2; i >= 0; i--) {
    const int32_t mi = i - (view->rank - mask->rank);
    const int32_t dim = mi >= 0 ? mask->dims[mi] : 1;
    j.view_dims[i] = view->dims[i];
    j.mask_strides[i] = dim == 1 ? 0 : stride;
    stride *= (size_t)dim;
  }
  /* 1. extents: per tile of each batch, then the batch's largest (a batch whose rows read
   * batch 0's mask rows has its extents) */
  size_t *extents = (size_t *)(void *)(j.scratch + a.extents_at);
  size_t *starts = extents + a.batches * (a.tiles + 1);
  for (size_t b = 0; b < a.batches; b++) {
    size_t *batch = extents + b * (a.tiles + 1), *largest = batch + a.tiles;
    size_t *first = starts + b * (a.tiles + 1), *smallest = first + a.tiles;
    bool like_first = b > 0;
    for (size_t i = 0; i < a.m && like_first; i++)
      like_first = mask_row(&j, b * a.m + i) == mask_row(&j, i);
    *largest = 0;
    *smallest = a.s;
    for (size_t t = 0; t < a.tiles; t++) {
      const size_t i0 = t * a.rows, rows = a.m - i0 < a.rows ? a.m - i0 : a.rows;
      if (like_first) {
        batch[t] = extents[t];
        first[t] = starts[t];
      } else {
        size_t e = 0, st = a.s;
        for (size_t i = i0; i < i0 + rows && (e < a.s || st > 0); i++) {
          size_t row_start;
          const size_t row =
              wick_f32_attention_row_span(mask_row(&j, b * a.m + i), a.s, &row_start);
          if (row > e) e = row;
          if (row_start < st) st = row_start;
        }
        batch[t] = wick_f32_attention_round(&a, e);
        first[t] = st / a.align * a.align;
        if (first[t] > batch[t]) first[t] = batch[t];
      }
      if (batch[t] > *largest) *largest = batch[t];
      if (first[t] < *smallest) *smallest = first[t];
    }
  }
  uint64_t macs = 0;
  for (size_t b = 0; b < a.batches; b++)
    for (size_t t = 0; t < a.tiles; t++) {
      const size_t i0 = t * a.rows, rows = a.m - i0 < a.rows ? a.m - i0 : a.rows;
      const size_t *first = starts + b * (a.tiles + 1);
      const size_t st = a.inplace ? first[t] : first[a.tiles];
      macs += (uint64_t)rows * (extents[b * (a.tiles + 1) + t] - st) * (a.d + a.dv);
    }
  j.extents = extents;
  j.starts = starts;
  wick_op_set_macs(ctx, macs);
  /* 2. the keys and values each batch needs, packed (nothing to do in place) */
  if (!a.inplace) WICK_TRY(wick_parallel_for(ctx, a.batches, pack_task, &j));
  /* 3. the tiles */
  return wick_parallel_for(ctx, a.batches * a.tiles, tile_task, &j);
}
