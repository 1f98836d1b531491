/*
 * transpose.c — TRANSPOSE: out.dims[i] = in.dims[perm[i]], any fixed-size
 * type, any rank up to WICK_MAX_RANK.
 *
 * perm (int32/int64, 1-D, length = rank) must be a true permutation of
 * [0, rank): every value in range and none repeated — checked at prepare,
 * or at invoke when perm is a run-time tensor (the op is then deferred).
 * The copy is one strided plan: output index i reads input stride
 * strides[perm[i]]; simplification turns identity permutations and moves of
 * size-1 dimensions into a single memcpy.
 */
#include "format/schema.h"
#include "ops/movement.h"

static wick_status transpose_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 2, 2, 1));
  wick_tensor *in, *perm;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(wick_require_input(ctx, 1, &perm));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  int64_t n = 0;
  WICK_TRY(movement_int_vector(ctx, perm, "perm", &n));
  WICK_CHECK(ctx, n == in->rank, "perm has %lld entries for an input of rank %d", (long long)n,
             in->rank);
  if (movement_unknown(ctx, perm)) return WICK_STATUS_DEFER;
  int32_t rank = in->rank;
  int64_t in_strides[WICK_MAX_RANK];
  movement_strides(rank, in->dims, in_strides);
  bool seen[WICK_MAX_RANK] = {false};
  int32_t dims[WICK_MAX_RANK];
  wick_copy_plan *p = movement_new_plan(ctx);
  if (p == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  p->rank = rank;
  for (int32_t i = 0; i < rank; i++) {
    int64_t v = wick_read_int(perm, i);
    WICK_CHECK_VALUE(ctx, v >= 0 && v < rank, "perm[%d] = %lld is outside [0, %d)", i, (long long)v,
                     rank);
    WICK_CHECK_VALUE(ctx, !seen[v], "perm repeats %lld: not a permutation", (long long)v);
    seen[v] = true;
    dims[i] = in->dims[v];
    p->dims[i] = dims[i];
    p->src_strides[i] = in_strides[v];
  }
  wick_copy_plan_dense_dst(p);
  wick_copy_plan_simplify(p);
  return wick_op_set_output(ctx, 0, in->type, rank, dims);
}

const wick_op_def wick_op_transpose = {"TRANSPOSE",       WICK_BUILTIN_TRANSPOSE, 8,
                                       transpose_prepare, movement_run_plan,      0};
