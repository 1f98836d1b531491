/*
 * tile.c — TILE and BROADCAST_TO: repeat the input to a larger shape. Any
 * fixed-size type.
 *
 *   TILE(input, multiples)      out.dims[i] = in.dims[i] * multiples[i],
 *                               multiples >= 0 (int32/int64, one per dim).
 *                               Every product and the element count are
 *                               computed in 64 bits and checked against
 *                               INT32_MAX per dim and WICK_MAX_ELEMENTS in
 *                               total (zero dims aside) before anything is
 *                               sized (the TFLite TILE CVE overflowed
 *                               exactly here).
 *   BROADCAST_TO(input, shape)  numpy broadcasting of the input to `shape`
 *                               (rank >= the input's; each input dim is 1 or
 *                               equal to its target dim; the target's
 *                               non-zero dims multiply to at most
 *                               WICK_MAX_ELEMENTS, checked before planning).
 *
 * Both are one strided copy. TILE views the output [.., m_i * d_i, ..] as
 * [.., m_i, d_i, ..] (row-major identical), reading input stride 0 along
 * each m_i: up to 2 * WICK_MAX_RANK plan dims, which simplification merges.
 * BROADCAST_TO reads stride 0 along broadcast dims. A run-time multiples or
 * shape tensor defers the op to invoke.
 */
#include "format/schema.h"
#include "ops/movement.h"

static wick_status tile_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *mult;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &mult));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t n = 0;
  WICK_TRY(movement_int_vector(ctx, mult, "multiples", &n));
  WICK_CHECK(ctx, n == in->rank, "multiples has %lld entries for an input of rank %d", (long long)n,
             in->rank);
  if (movement_unknown(ctx, mult)) return WICK_STATUS_DEFER;
  int32_t rank = in->rank, dims[WICK_MAX_RANK];
  int64_t in_strides[WICK_MAX_RANK], total = 1;
  movement_strides(rank, in->dims, in_strides);
  wick_copy_plan *p = movement_new_plan(ctx);
  if (p == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  p->rank = 2 * rank;
  for (int32_t i = 0; i < rank; i++) {
    int64_t m = wick_read_int(mult, i), d = 0;
    WICK_CHECK_VALUE(ctx, m >= 0, "multiples[%d] = %lld is negative", i, (long long)m);
    WICK_CHECK_VALUE(ctx, wick_mul_i64(m, in->dims[i], &d) && d <= INT32_MAX,
                     "dimension %d (%d x %lld) overflows", i, in->dims[i], (long long)m);
    /* Zero dims aside (their product is 0, yet the plan's strides multiply
     * the other dims), so dense_dst below cannot overflow. */
    WICK_CHECK_VALUE(ctx, wick_mul_i64(total, d ? d : 1, &total) && total <= WICK_MAX_ELEMENTS,
                     "the tiled element count overflows");
    dims[i] = (int32_t)d;
    p->dims[2 * i] = m;
    p->dims[2 * i + 1] = in->dims[i];
    p->src_strides[2 * i] = 0;
    p->src_strides[2 * i + 1] = in_strides[i];
  }
  wick_copy_plan_dense_dst(p);
  wick_copy_plan_simplify(p);
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

static wick_status broadcast_to_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *shape;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &shape));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t n = 0;
  WICK_TRY(movement_int_vector(ctx, shape, "shape", &n));
  WICK_CHECK(ctx, n >= in->rank && n <= WICK_MAX_RANK,
             "shape has %lld entries; it needs between the input's rank %d and %d", (long long)n,
             in->rank, WICK_MAX_RANK);
  if (movement_unknown(ctx, shape)) return WICK_STATUS_DEFER;
  int32_t rank = (int32_t)n, dims[WICK_MAX_RANK];
  int64_t in_strides[WICK_MAX_RANK], span = 1;
  movement_strides(in->rank, in->dims, in_strides);
  wick_copy_plan *p = movement_new_plan(ctx);
  if (p == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  p->rank = rank;
  for (int32_t i = 0; i < rank; i++) {
    int64_t want = wick_read_int(shape, i);
    WICK_CHECK_VALUE(ctx, want >= 0 && want <= INT32_MAX, "shape[%d] = %lld is not a valid size", i,
                     (long long)want);
    int32_t k = i - (rank - in->rank); /* the input dim aligned with i, if any */
    int32_t have = k >= 0 ? in->dims[k] : 1;
    WICK_CHECK_VALUE(ctx, have == want || have == 1,
                     "input dimension %d of size %d does not broadcast to %lld", k, have,
                     (long long)want);
    /* Checked before the plan's strides are computed from these dims. */
    WICK_CHECK_VALUE(ctx, wick_mul_i64(span, want ? want : 1, &span) && span <= WICK_MAX_ELEMENTS,
                     "the broadcast element count overflows");
    dims[i] = (int32_t)want;
    p->dims[i] = want;
    p->src_strides[i] = (k >= 0 && have != 1) ? in_strides[k] : 0;
  }
  wick_copy_plan_dense_dst(p);
  wick_copy_plan_simplify(p);
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

const wick_op_def wick_op_tile = {"TILE", WICK_BUILTIN_TILE, 3, tile_prepare, movement_run_plan, 0};
const wick_op_def wick_op_broadcast_to = {"BROADCAST_TO",       WICK_BUILTIN_BROADCAST_TO, 3,
                                          broadcast_to_prepare, movement_run_plan,         0};
