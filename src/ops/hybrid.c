/*
 * hybrid.c — the GEMM form of the hybrid ops (hybrid.h): packing the
 * constant int8 weights once, quantizing rows on the vector kernels into the
 * op's scratch (shared by all ops: a model's hybrid layers hold no rows of
 * their own), and the raw int32 GEMM split over the threads with the op's
 * rescale per block; and the hybrid CONV_2D's quantization of a whole image
 * as one row, its range and its values in parts over the threads.
 */
#include "ops/hybrid.h"

#include "kernels/reference/reference.h"

wick_status wick_hybrid_gemm_prepare(wick_op_ctx *ctx, wick_hybrid_gemm *h, size_t m, size_t n,
                                     size_t k, const int8_t *w, bool w_kn, uint32_t slot,
                                     bool *ready) {
  *ready = false;
  const wick_q8_kernels *q8 = wick_q8_kernels_select(wick_op_force_reference(ctx));
  if (q8 == NULL || m == 0 || n == 0) return WICK_OK;
  size_t bytes, prepared, sums, scratch, qbytes, rows_bytes;
  if (!wick_q8_gemm_packed_size(q8, n, 1, k, &bytes) || !wick_mul_size(m, k, &qbytes) ||
      !wick_add_size(qbytes, 63, &rows_bytes) ||
      !wick_mul_size(qbytes, wick_q8_input_bytes(q8), &prepared) ||
      !wick_add_size(prepared, 63, &prepared) || !wick_mul_size(m, n, &sums) ||
      !wick_mul_size(sums, sizeof(int32_t), &sums) ||
      !wick_add_size(rows_bytes & ~(size_t)63, prepared & ~(size_t)63, &scratch) ||
      !wick_add_size(scratch, sums, &scratch))
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "hybrid GEMM sizes overflow");
  bool cached;
  /* A function of the weights, n, k and the panel width alone: interpreters sharing state
   * hold one copy (wick_op_packed_shared). */
  const void *sources[1] = {w};
  const int64_t shape[2] = {(int64_t)n, (int64_t)k};
  void *packed =
      wick_op_packed_shared(ctx, sources, 1, shape, 2, slot, (uint32_t)q8->nr, bytes, &cached);
  h->weight_sums = wick_op_alloc(ctx, n * sizeof(uint32_t));
  h->row_scales = wick_op_alloc(ctx, m * sizeof(float));
  h->row_offsets = wick_op_alloc(ctx, m * sizeof(int32_t));
  if (packed == NULL || h->weight_sums == NULL || h->row_scales == NULL || h->row_offsets == NULL)
    return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory packing the weights");
  if (!cached) {
    const int8_t *rows = w;
    if (w_kn) { /* the packing reads [n, k]: a transposed copy, made only when the packing
                 * is not already in the weight cache; it lives with the prepared data */
      int8_t *t = wick_op_alloc(ctx, k * n > 0 ? k * n : 1); /* (fits: packed_size) */
      if (t == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
      for (size_t c = 0; c < n; c++)
        for (size_t i = 0; i < k; i++) t[c * k + i] = w[i * n + c];
      rows = t;
    }
    wick_q8_gemm_pack(q8, n, 1, k, rows, NULL, 0, NULL, NULL, packed);
  }
  /* the sums in the order memory holds the weights (wrapping: the order does not matter) */
  if (w_kn) {
    memset(h->weight_sums, 0, n * sizeof(uint32_t));
    for (size_t i = 0; i < k; i++)
      for (size_t c = 0; c < n; c++) h->weight_sums[c] += (uint32_t)(int32_t)w[i * n + c];
  } else {
    for (size_t c = 0; c < n; c++) {
      uint32_t sum = 0;
      for (size_t i = 0; i < k; i++) sum += (uint32_t)(int32_t)w[c * k + i];
      h->weight_sums[c] = sum;
    }
  }
  h->m = m, h->n = n, h->k = k;
  h->rows_u8 = false; /* the op sets it when it writes its rows so */
  h->q8 = q8;
  h->f32 = wick_f32_kernels_select(false);
  h->packed = packed;
  h->prepared_offset = rows_bytes & ~(size_t)63;
  h->acc_offset = h->prepared_offset + (prepared & ~(size_t)63);
  h->scratch_bytes = scratch;
  wick_op_request_scratch(ctx, scratch);
  *ready = true;
  return WICK_OK;
}

void wick_hybrid_gemm_quantize(const wick_hybrid_gemm *h, void *scratch, size_t r, const float *row,
                               bool asymmetric) {
  h->row_scales[r] =
      wick_hybrid_quantize_row(h->f32, h->k, row, wick_hybrid_gemm_rows(h, scratch) + r * h->k,
                               asymmetric, &h->row_offsets[r]);
}

wick_status wick_hybrid_gemm_run(const wick_op_ctx *ctx, const wick_hybrid_gemm *h,
                                 wick_q8_raw_finish_fn finish, void *arg) {
  uint8_t *scratch = wick_op_scratch(ctx);
  return wick_parallel_q8_gemm_raw(ctx, h->q8, h->m, h->n, h->k, wick_hybrid_gemm_rows(h, scratch),
                                   h->rows_u8, (int8_t *)(scratch + h->prepared_offset), h->packed,
                                   (int32_t *)(void *)(scratch + h->acc_offset), finish, arg);
}

/* ---- one image as one asymmetric row, split over the threads ---- */

#define QUANTIZE_BLOCK 64           /* elements per unit: every part starts vector-aligned */
#define QUANTIZE_WORK_PER_ELEMENT 8 /* a compare-select pass, then a multiply-round pass */
#define QUANTIZE_MAX_PARTS 32

typedef struct quantize_image_job {
  const wick_f32_kernels *f32;
  size_t n, units, parts;
  const float *x;
  int8_t *q;
  float inverse, offset;
  float lo[QUANTIZE_MAX_PARTS], hi[QUANTIZE_MAX_PARTS];
} quantize_image_job;

static void part_bounds(const quantize_image_job *j, size_t part, size_t *b, size_t *e) {
  *b = wick_split_begin(j->units, j->parts, part) * QUANTIZE_BLOCK;
  *e = wick_split_begin(j->units, j->parts, part + 1) * QUANTIZE_BLOCK;
  if (*e > j->n) *e = j->n;
}

static void range_part(void *arg, size_t part, size_t thread) {
  (void)thread;
  quantize_image_job *j = arg;
  size_t b, e;
  part_bounds(j, part, &b, &e);
  float lo = 0.0f, hi = 0.0f;
  j->f32->row_range(e - b, j->x + b, &lo, &hi);
  j->lo[part] = lo, j->hi[part] = hi;
}

static void quantize_part(void *arg, size_t part, size_t thread) {
  (void)thread;
  const quantize_image_job *j = arg;
  size_t b, e;
  part_bounds(j, part, &b, &e);
  j->f32->hybrid_quantize(e - b, j->x + b, j->q + b, j->inverse, j->offset, -128.0f);
}

wick_status wick_hybrid_quantize_image(const wick_op_ctx *ctx, const wick_f32_kernels *f32,
                                       size_t n, const float *x, int8_t *q, float *scale,
                                       int32_t *offset) {
  quantize_image_job j = {.f32 = f32, .n = n, .x = x, .q = q};
  j.units = n / QUANTIZE_BLOCK + (n % QUANTIZE_BLOCK != 0);
  j.parts = wick_split_count(j.units, QUANTIZE_BLOCK * QUANTIZE_WORK_PER_ELEMENT, WICK_TASK_GRAIN);
  if (j.parts > QUANTIZE_MAX_PARTS) j.parts = QUANTIZE_MAX_PARTS;
  if (f32 == NULL || j.parts <= 1) {
    *scale = wick_hybrid_quantize_row(f32, n, x, q, true, offset);
    return WICK_OK;
  }
  WICK_TRY(wick_parallel_for(ctx, j.parts, range_part, &j));
  /* the row's own loop in part order (min and max are order-free: the same values) */
  float lo = 0.0f, hi = 0.0f;
  for (size_t p = 0; p < j.parts; p++) {
    lo = j.lo[p] < lo ? j.lo[p] : lo;
    hi = j.hi[p] > hi ? j.hi[p] : hi;
  }
  *offset = 0;
  if (lo == hi) { /* wick_hybrid_quantize_row's constant row */
    memset(q, 0, n);
    *scale = 1.0f;
    return WICK_OK;
  }
  *scale = wick_hybrid_asymmetric_params(lo, hi, offset);
  j.inverse = 1.0f / *scale;
  j.offset = (float)*offset;
  return wick_parallel_for(ctx, j.parts, quantize_part, &j);
}
