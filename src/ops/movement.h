/*
 * movement.h — helpers shared by the data-movement operators (transpose.c,
 * slice.c, split.c, pack.c, tile.c, reverse.c, gather.c, select.c,
 * shape_ops.c, space_depth.c, mirror_pad.c, dynamic_update_slice.c).
 *
 * These ops copy bytes and work for every fixed-size type. Many read a
 * small integer tensor (a permutation, begin/size, axis, multiples, a shape)
 * whose values decide the output: when such a tensor is not known at prepare
 * (movement_unknown: no data yet, or a variable whose data changes) the op
 * returns WICK_STATUS_DEFER and the interpreter prepares it again at
 * invoke. A bad value is then a run-time input error, not a malformed file:
 * WICK_CHECK_VALUE picks WICK_ERR_INVALID_INPUT during invoke and
 * WICK_ERR_MALFORMED_MODEL during prepare.
 *
 * Most of these ops compute one wick_copy_plan at prepare and run it with
 * movement_run_plan at invoke.
 */
#ifndef WICK_OPS_MOVEMENT_H
#define WICK_OPS_MOVEMENT_H

#include "kernels/reference/movement.h"
#include "ops/op_common.h"
#include "ops/parallel.h"

static inline wick_status movement_value_status(const wick_op_ctx *ctx) {
  return wick_op_in_invoke(ctx) ? WICK_ERR_INVALID_INPUT : WICK_ERR_MALFORMED_MODEL;
}

/* Fails unless `cond` holds; the status depends on the phase (see above). */
#define WICK_CHECK_VALUE(ctx, cond, ...)                                              \
  do {                                                                                \
    if (!(cond)) return wick_op_fail((ctx), movement_value_status(ctx), __VA_ARGS__); \
  } while (0)

/* True when the values of `t` cannot be relied on now: no data yet, or a
 * variable (its data changes between invokes) while preparing. During a
 * prepare at invoke the data is current, so only NULL counts. Ops whose
 * output shape depends on such values return WICK_STATUS_DEFER. */
static inline bool movement_unknown(const wick_op_ctx *ctx, const wick_tensor *t) {
  return t->data == NULL || (t->info->is_variable && !wick_op_in_invoke(ctx));
}

/* Requires a type with a fixed element size (everything but strings). */
static inline wick_status movement_check_type(const wick_op_ctx *ctx, const wick_tensor *t,
                                              const char *what) {
  WICK_CHECK_SUPPORTED(ctx, wick_dtype_size(t->type) > 0, "%s type %s is not supported", what,
                       wick_dtype_name(t->type));
  return WICK_OK;
}

/* Requires an int32/int64 tensor of rank <= 1 and returns its element count. */
static inline wick_status movement_int_vector(const wick_op_ctx *ctx, const wick_tensor *t,
                                              const char *what, int64_t *count) {
  WICK_CHECK(ctx, wick_is_int_index_type(t->type), "%s must be int32 or int64, not %s", what,
             wick_dtype_name(t->type));
  WICK_CHECK(ctx, t->rank <= 1, "%s must be a 1-D tensor, not rank %d", what, t->rank);
  *count = wick_tensor_elements(t);
  return WICK_OK;
}

/* Row-major element strides of a shape. */
static inline void movement_strides(int32_t rank, const int32_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int32_t k = rank - 1; k >= 0; k--) {
    strides[k] = s;
    s *= dims[k];
  }
}

/* Allocates the node's plan (cleared) in its user data. */
static inline wick_copy_plan *movement_new_plan(const wick_op_ctx *ctx) {
  wick_copy_plan *p = wick_op_alloc(ctx, sizeof *p);
  if (p != NULL) {
    memset(p, 0, sizeof *p);
    wick_op_set_data(ctx, p);
  }
  return p;
}

/* Invoke for ops whose whole work is the plan in user_data: input 0 to
 * output 0. */
static inline wick_status movement_run_plan(wick_op_ctx *ctx) {
  const wick_copy_plan *p = wick_op_data(ctx);
  wick_tensor *in = wick_op_input(ctx, 0), *out = wick_op_output(ctx, 0);
  if (out->bytes == 0) return WICK_OK;
  return wick_parallel_strided_copy(ctx, wick_dtype_size(in->type), p, in->data, out->data);
}

/* Copies a block along one axis. Both tensors are viewed as
 * [outer, axis, inner]: src [outer, src_axis, inner] rows src_start..+len go
 * to dst [outer, dst_axis, inner] rows dst_start..+len (SPLIT, PACK, UNPACK).
 * Skips empty blocks, so NULL data is fine when nothing is copied. */
static inline void movement_copy_axis_block(size_t esize, int64_t outer, int64_t inner,
                                            int64_t src_axis, int64_t src_start, const void *src,
                                            int64_t dst_axis, int64_t dst_start, void *dst,
                                            int64_t len) {
  if (outer == 0 || inner == 0 || len == 0) return;
  wick_copy_plan p;
  memset(&p, 0, sizeof p);
  p.rank = 2;
  p.dims[0] = outer;
  p.dims[1] = len * inner;
  p.src_strides[0] = src_axis * inner;
  p.src_strides[1] = 1;
  p.dst_strides[0] = dst_axis * inner;
  p.dst_strides[1] = 1;
  p.src_offset = src_start * inner;
  p.dst_offset = dst_start * inner;
  wick_copy_plan_simplify(&p);
  wick_strided_copy__reference(esize, &p, src, dst);
}

/* outer = product of dims before `axis`, inner = product after it. */
static inline void movement_outer_inner(const int32_t *dims, int32_t rank, int32_t axis,
                                        int64_t *outer, int64_t *inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t i = 0; i < axis; i++) *outer *= dims[i];
  for (int32_t i = axis + 1; i < rank; i++) *inner *= dims[i];
}

#endif /* WICK_OPS_MOVEMENT_H */
