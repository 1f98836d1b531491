/*
 * op_common.h — helpers shared by the operator files in src/ops: argument
 * checks that fail with the op's name, broadcasting, axes, padding and fused
 * activation ranges. Operator files include this and their kernels' headers;
 * they never touch flatbuffers or the graph's internals beyond wick_op_ctx.
 */
#ifndef WICK_OPS_OP_COMMON_H
#define WICK_OPS_OP_COMMON_H

#include <math.h>
#include <string.h>

#include "core/op_api.h"
#include "format/flexbuffer.h"
#include "kernels/kernels.h"

/* Fails the op with WICK_ERR_MALFORMED_MODEL unless `cond` holds. */
#define WICK_CHECK(ctx, cond, ...)                                                  \
  do {                                                                              \
    if (!(cond)) return wick_op_fail((ctx), WICK_ERR_MALFORMED_MODEL, __VA_ARGS__); \
  } while (0)

/* Fails with WICK_ERR_UNSUPPORTED_OP unless `cond` holds. */
#define WICK_CHECK_SUPPORTED(ctx, cond, ...)                                       \
  do {                                                                             \
    if (!(cond)) return wick_op_fail((ctx), WICK_ERR_UNSUPPORTED_OP, __VA_ARGS__); \
  } while (0)

/* Propagates a non-OK status. */
#define WICK_TRY(expr)                          \
  do {                                          \
    wick_status wick_try_ = (expr);             \
    if (wick_try_ != WICK_OK) return wick_try_; \
  } while (0)

/* Checks the input/output counts: inputs in [min_in, max_in], outputs == n_out. */
WICK_INTERNAL wick_status wick_check_arity(const wick_op_ctx *ctx, size_t min_in, size_t max_in,
                                           size_t n_out);
/* Input i, which must be present. */
WICK_INTERNAL wick_status wick_require_input(const wick_op_ctx *ctx, size_t i, wick_tensor **out);
/* Requires input i to hold data known at prepare (a constant or folded). */
WICK_INTERNAL bool wick_input_known(const wick_op_ctx *ctx, size_t i);

/* Numpy broadcasting of two shapes; fails naming both shapes. */
WICK_INTERNAL wick_status wick_broadcast_shapes(const wick_op_ctx *ctx, const wick_tensor *a,
                                                const wick_tensor *b, int32_t *rank_out,
                                                int32_t *dims_out);
/* Element strides of `t` viewed in an output of rank `rank`: 0 on broadcast dims. */
WICK_INTERNAL void wick_broadcast_strides(const wick_tensor *t, int32_t rank,
                                          const int32_t *out_dims, int64_t *strides);
/* Maps a possibly negative axis into [0, rank). */
WICK_INTERNAL wick_status wick_normalize_axis(const wick_op_ctx *ctx, int64_t axis, int32_t rank,
                                              int32_t *out);

/* SAME/VALID output size and leading padding for one spatial dimension. */
WICK_INTERNAL wick_status wick_conv_output_size(const wick_op_ctx *ctx, wick_padding padding,
                                                int32_t in, int32_t filter, int32_t stride,
                                                int32_t dilation, int32_t *out,
                                                int32_t *pad_before);

/* A convolution's spatial geometry: given s's input size, filter, strides
 * and dilations, sets out_h, out_w, pad_top and pad_left for `padding`. A
 * PAD folded into the node (src/core/fuse.c) counts as part of the input:
 * the output size is the padded input's, and the PAD's leading counts are
 * added to the leading padding (its trailing counts are implied by in_h/in_w
 * and out_h/out_w, as SAME's are). */
WICK_INTERNAL wick_status wick_conv_spatial(const wick_op_ctx *ctx, wick_padding padding,
                                            wick_conv_shape *s);
/* The same for a pool (dilation 1); a PAD folds only into MAX_POOL_2D. */
WICK_INTERNAL wick_status wick_pool_spatial(const wick_op_ctx *ctx, wick_padding padding,
                                            wick_pool_shape *s);

/* Fails with WICK_ERR_UNSUPPORTED_OP unless `t` (named `what`, e.g. "the
 * input") is float32: for the ops that run on float32 only. */
WICK_INTERNAL wick_status wick_require_float32(const wick_op_ctx *ctx, const wick_tensor *t,
                                               const char *what);
/* An optional bias (NULL passes) must hold one value per output channel. */
WICK_INTERNAL wick_status wick_check_bias_length(const wick_op_ctx *ctx, const wick_tensor *bias,
                                                 int32_t out_c);

/* Convolution geometry, shared by the float and quantized operator files.
 *
 * CONV_2D / DEPTHWISE_CONV_2D (input NHWC; filter OHWI, or [1, kh, kw, C*M]
 * when depthwise): checks the ranks, the input depth against the filter
 * (groups, or the depth multiplier), the bias length (bias may be NULL: the
 * caller checks it elsewhere) and fills all of *s, the output size and
 * padding included (wick_conv_spatial). */
WICK_INTERNAL wick_status wick_conv2d_geometry(const wick_op_ctx *ctx, const wick_tensor *in,
                                               const wick_tensor *filter, const wick_tensor *bias,
                                               bool depthwise, wick_conv_shape *s);
/* Sets output 0 of CONV_2D / DEPTHWISE_CONV_2D ([N, oH, oW, Cout] of `type`)
 * and the node's multiply-accumulates. */
WICK_INTERNAL wick_status wick_conv2d_set_output(const wick_op_ctx *ctx, const wick_conv_shape *s,
                                                 bool depthwise, wick_dtype type);
/* TRANSPOSE_CONV (output_shape int32 [4], weights OHWI, input NHWC): checks
 * the ranks, output_shape's type and length, the channels and the strides
 * and fills *s but for the output size and padding, which come from the
 * values of output_shape (wick_tconv_output). `oshape` NULL: an op without
 * output_shape (MediaPipe's Convolution2DTransposeBias; wick_tconv_output_dims). */
WICK_INTERNAL wick_status wick_tconv_geometry(const wick_op_ctx *ctx, const wick_tensor *oshape,
                                              const wick_tensor *filter, const wick_tensor *in,
                                              wick_conv_shape *s);
/* Reads TRANSPOSE_CONV's output_shape (WICK_STATUS_DEFER while it is not
 * known), checks it against the batch, the output channels and, through the
 * forward conv of the same padding, the input's height and width; sets the
 * output size and padding of *s, output 0 (of type `type`) and the node's
 * multiply-accumulates. A bad run-time value is WICK_ERR_INVALID_INPUT. */
WICK_INTERNAL wick_status wick_tconv_output(const wick_op_ctx *ctx, const wick_tensor *oshape,
                                            const wick_tensor *in, wick_dtype type,
                                            wick_conv_shape *s);
/* wick_tconv_output for the requested output dims `want` (NHWC); `bad` is the
 * status of a mismatch. want NULL: the size the padding implies, as XNNPACK's
 * deconvolution computes it: SAME in * stride, VALID (in - 1) * stride + k. */
WICK_INTERNAL wick_status wick_tconv_output_dims(const wick_op_ctx *ctx, const int32_t *want,
                                                 wick_status bad, const wick_tensor *in,
                                                 wick_dtype type, wick_conv_shape *s);

/* The clamp range of a fused activation on float values. */
WICK_INTERNAL wick_status wick_activation_range_f32(const wick_op_ctx *ctx, wick_activation act,
                                                    float *lo, float *hi);

/* The epilogue fusion gave this node (src/core/fuse.c), as kernel
 * arguments; false (and *ep cleared) when nothing is fused. */
WICK_INTERNAL bool wick_op_fused_epilogue(const wick_op_ctx *ctx, wick_f32_epilogue *ep);
/* Runs the fused epilogue over the whole output 0, split over the threads in
 * 64-aligned chunks of elements: for the paths whose kernels do not take one
 * (reference, quantized-weight, a depthwise residual). No-op if none. */
WICK_INTERNAL wick_status wick_op_run_fused_epilogue(const wick_op_ctx *ctx);
/* Runs the attention fuse.c recognized on this node (wick_attention_fusion; src/ops/attention.c).
 */
WICK_INTERNAL wick_status wick_attention_invoke(const wick_op_ctx *ctx);

/* A custom operator's FlexBuffers options as a map (wick_op_custom_options), or a
 * "malformed model" failure naming the problem. */
WICK_INTERNAL wick_status wick_op_flex_options(const wick_op_ctx *ctx, wick_flex_map *m);
/* An int32 option `key` of a FlexBuffers map: `dflt` when absent if `dflt` >= 0, else
 * required; out of the int32 range is malformed. */
WICK_INTERNAL wick_status wick_op_flex_int32(const wick_op_ctx *ctx, const wick_flex_map *m,
                                             const char *key, int64_t dflt, int32_t *out);
/* The failure for option `key` read with status `st` (absent, wrong type or malformed). */
WICK_INTERNAL wick_status wick_op_flex_fail(const wick_op_ctx *ctx, const char *key,
                                            wick_flex_status st);

#endif /* WICK_OPS_OP_COMMON_H */
