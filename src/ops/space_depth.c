/*
 * space_depth.c — DEPTH_TO_SPACE and SPACE_TO_DEPTH on NHWC tensors of any
 * fixed-size type, block size b >= 1 (never divide by an unchecked b).
 *
 *   DEPTH_TO_SPACE  [N, H, W, C] -> [N, H*b, W*b, C/(b*b)], C % (b*b) == 0:
 *                   out[n, h*b + i, w*b + j, c] = in[n, h, w, (i*b + j)*C' + c]
 *   SPACE_TO_DEPTH  [N, H, W, C] -> [N, H/b, W/b, C*b*b], H % b == W % b == 0:
 *                   out[n, h, w, (i*b + j)*C + c] = in[n, h*b + i, w*b + j, c]
 *
 * Each is a 6-D transpose written as one strided copy over the output
 * viewed as [N, H, b, W, b, C'] (depth-to-space) or [N, H', W', b, b, C]
 * (space-to-depth). Output sizes are checked in 64 bits.
 */
#include "format/schema.h"
#include "ops/movement.h"

static wick_status space_depth_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 1, 1, 1));
  wick_tensor *in;
  WICK_TRY(wick_require_input(ctx, 0, &in));
  WICK_TRY(movement_check_type(ctx, in, "input"));
  WICK_CHECK(ctx, in->rank == 4, "input must be 4-D NHWC, not rank %d", in->rank);
  int64_t b = ctx->params->block_size;
  WICK_CHECK(ctx, b >= 1, "block_size must be >= 1, not %lld", (long long)b);
  int64_t n = in->dims[0], h = in->dims[1], w = in->dims[2], c = in->dims[3];
  int64_t bb = b * b; /* b <= INT32_MAX: fits */
  bool to_space = wick_op_builtin(ctx) == WICK_BUILTIN_DEPTH_TO_SPACE;
  wick_copy_plan *p = movement_new_plan(ctx);
  if (p == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  int32_t dims[4];
  p->rank = 6;
  if (to_space) {
    WICK_CHECK(ctx, c % bb == 0, "depth %lld is not a multiple of block_size^2 = %lld",
               (long long)c, (long long)bb);
    int64_t oc = c / bb, oh = h * b, ow = w * b; /* h, w, b < 2^31: products fit */
    WICK_CHECK(ctx, oh <= INT32_MAX && ow <= INT32_MAX, "output size overflows");
    dims[0] = (int32_t)n, dims[1] = (int32_t)oh, dims[2] = (int32_t)ow, dims[3] = (int32_t)oc;
    /* output [n, h, i, w, j, c'] <- input offset n*HWC + h*WC + w*C + (i*b + j)*C' + c' */
    const int64_t pd[6] = {n, h, b, w, b, oc};
    const int64_t ps[6] = {h * w * c, w * c, b * oc, c, oc, 1};
    for (int k = 0; k < 6; k++) p->dims[k] = pd[k], p->src_strides[k] = ps[k];
  } else {
    WICK_CHECK(ctx, h % b == 0 && w % b == 0,
               "height %lld and width %lld must be multiples of block_size %lld", (long long)h,
               (long long)w, (long long)b);
    int64_t oh = h / b, ow = w / b, oc = 0;
    WICK_CHECK(ctx, wick_mul_i64(c, bb, &oc) && oc <= INT32_MAX, "output depth overflows");
    dims[0] = (int32_t)n, dims[1] = (int32_t)oh, dims[2] = (int32_t)ow, dims[3] = (int32_t)oc;
    /* output [n, h', w', i, j, c] <- input [n, h'*b + i, w'*b + j, c] */
    const int64_t pd[6] = {n, oh, ow, b, b, c};
    const int64_t ps[6] = {h * w * c, b * w * c, b * c, w * c, c, 1};
    for (int k = 0; k < 6; k++) p->dims[k] = pd[k], p->src_strides[k] = ps[k];
  }
  wick_copy_plan_dense_dst(p);
  wick_copy_plan_simplify(p);
  return wick_op_set_output(ctx, 0, in->type, 4, dims);
}

const wick_op_def wick_op_depth_to_space = {"DEPTH_TO_SPACE",    WICK_BUILTIN_DEPTH_TO_SPACE, 2,
                                            space_depth_prepare, movement_run_plan,           0};
const wick_op_def wick_op_space_to_depth = {"SPACE_TO_DEPTH",    WICK_BUILTIN_SPACE_TO_DEPTH, 2,
                                            space_depth_prepare, movement_run_plan,           0};
