/*
 * quantization.h — the shared requantization module of the quantized
 * (int8 / legacy uint8 / int16-activation) operators, and the entry points
 * of their implementations.
 *
 * Parameters follow LiteRT's reference kernels bit for bit (docs/format.md,
 * "int8 quantization"): a real multiplier is computed in double from the float
 * scales, then split with frexp into a Q31 mantissa and a power-of-two
 * exponent (wick_quantize_multiplier). Kernels apply it with the "double
 * rounding" of src/kernels/reference/quantized.c. Activation clamps are
 * quantized with the output's scale and zero point.
 *
 * Invariants: every function here validates what it reads from the file
 * (parameters present, scales positive and finite, zero points inside the
 * type, multipliers representable) and fails with the op's name otherwise.
 *
 * Routing: the float-only op files (conv_2d.c, fully_connected.c, ...) call
 * wick_quant_routed() at the top of their prepare and invoke and hand the
 * node to the *_quantized entry points below when it is true; everything
 * quantized lives in the *_quantized.c files next to them.
 */
#ifndef WICK_OPS_QUANTIZATION_H
#define WICK_OPS_QUANTIZATION_H

#include "kernels/reference/reference.h"
#include "ops/op_common.h"

/* Per-tensor quantization of one tensor, checked. */
typedef struct wick_qparams {
  float scale;
  int32_t zero_point;
} wick_qparams;

/* True when input `i` is a quantized activation the quantized paths own:
 * int8, uint8 or int16 with quantization parameters. Hybrid ops (float
 * activations, int8 weights) and integer tensors without parameters stay on
 * the float files' paths (which refuse them or treat them as plain integers). */
WICK_INTERNAL bool wick_quant_routed(const wick_op_ctx *ctx, size_t i);
/* True for int8, uint8 and int16. */
WICK_INTERNAL bool wick_quant_is_q_type(wick_dtype t);
/* The type's range: [-128, 127], [0, 255], [-32768, 32767], int32. */
WICK_INTERNAL void wick_quant_type_range(wick_dtype t, int32_t *lo, int32_t *hi);

/* Reads the per-tensor parameters of `t` (named `what` in messages): present,
 * scale[0] positive and finite, zero_point[0] inside the type's range (for
 * int32 inside int32). Per-channel parameters are refused unless
 * `allow_per_channel` (then element 0 is returned). */
WICK_INTERNAL wick_status wick_quant_params(const wick_op_ctx *ctx, const wick_tensor *t,
                                            const char *what, bool allow_per_channel,
                                            wick_qparams *out);

/* LiteRT's QuantizeMultiplier: m = q * 2^shift with q in [0.5, 1) rounded
 * (half away from zero) to a Q31 integer; a mantissa that rounds to 2^31 is
 * halved (shift + 1); shift < -31 gives (0, 0). m must be finite and >= 0. */
WICK_INTERNAL void wick_quantize_multiplier(double m, int32_t *multiplier, int32_t *shift);
/* wick_quantize_multiplier, failing unless m is finite, >= 0 and its shift
 * is at most `max_shift` (kernels left-shift by it). */
WICK_INTERNAL wick_status wick_quant_multiplier(const wick_op_ctx *ctx, double m, int32_t max_shift,
                                                const char *what, int32_t *multiplier,
                                                int32_t *shift);

/* The clamp range of fused activation `act` on the quantized output (LiteRT's
 * CalculateActivationRangeQuantized): zero_point + round(bound / scale)
 * computed in float, intersected with the type's range. TANH and SIGN_BIT
 * give the full range, as NONE. */
WICK_INTERNAL wick_status wick_quant_activation_range(const wick_op_ctx *ctx, wick_activation act,
                                                      wick_dtype type, wick_qparams out,
                                                      int32_t *lo, int32_t *hi);

/* MUL's parameters for inputs quantized q1, q2 and output qo of `type` with fused activation
 * `act`, as LiteRT: the multiplier s1 s2 / s_out computed in float
 * (src/ops/elementwise_quantized.c). */
WICK_INTERNAL wick_status wick_qmul_params_make(const wick_op_ctx *ctx, wick_qparams q1,
                                                wick_qparams q2, wick_qparams qo,
                                                wick_activation act, wick_dtype type,
                                                wick_qmul_params *m);

/* An 8-bit LOGISTIC node that fuse.c gave a swish (wick_node_fusion.q8_swish): one table pass
 * writing the MUL's output (src/ops/activations_quantized.c). */
WICK_INTERNAL wick_status wick_q8_swish_invoke(const wick_op_ctx *ctx);

/* Filter scales of a conv-like op, checked: `filter` has either one scale or
 * `channels` scales along dimension `axis`; each finite and >= 0. Returns a
 * pointer to `channels` scales in op memory (broadcast when per-tensor). */
WICK_INTERNAL wick_status wick_quant_filter_scales(const wick_op_ctx *ctx,
                                                   const wick_tensor *filter, int32_t channels,
                                                   int32_t axis, const float **scales);

/* Per-channel multipliers in_scale * filter_scale[c] / out_scale (products in
 * double, as LiteRT's PopulateConvolutionQuantizationParams), allocated in op
 * memory. */
WICK_INTERNAL wick_status wick_quant_channel_multipliers(const wick_op_ctx *ctx, float in_scale,
                                                         const float *filter_scales,
                                                         int32_t channels, float out_scale,
                                                         int32_t max_shift, int32_t **multiplier,
                                                         int32_t **shift);

/* LiteRT's CheckedLog2: true when x is a power of two within 1e-3 in log2
 * (computed in float); *log2 = the rounded exponent. */
WICK_INTERNAL bool wick_quant_checked_log2(float x, int32_t *log2);

/* The requantization of a conv-like op (CONV_2D, DEPTHWISE_CONV_2D,
 * TRANSPOSE_CONV): checks the types (int8/int8, uint8/uint8, int16/int8),
 * parameters, filter zero points and bias (int32; int64 too for int16), and
 * fills `p` (per-channel multipliers along `filter_axis`, offsets, the
 * activation clamp). *acc64: accumulate in 64 bits (int64 bias, or int16
 * without bias as LiteRT). (conv_2d_quantized.c) */
WICK_INTERNAL wick_status wick_conv_quant_params(wick_op_ctx *ctx, const wick_tensor *in,
                                                 const wick_tensor *filter, const wick_tensor *bias,
                                                 const wick_tensor *out, int32_t out_c,
                                                 int32_t filter_axis, wick_activation activation,
                                                 wick_qconv_params *p, bool *acc64);
/* The output stage of the int8 convolution kernels (kernels/q8.h) for these
 * parameters; with `fused_constants`, also the per-channel constants of the
 * fused requantization (wick_q8_rq64_prepare), in memory of this node.
 * (conv_2d_quantized.c; used by TRANSPOSE_CONV too) */
struct wick_q8_output;
WICK_INTERNAL wick_status wick_conv_q8_output(const wick_op_ctx *ctx, const wick_qconv_params *p,
                                              size_t out_c, bool fused_constants,
                                              struct wick_q8_output *out);

/* ---------------------------------------------------------------- entry points */

/* CONV_2D / DEPTHWISE_CONV_2D (conv_2d_quantized.c) */
WICK_INTERNAL wick_status wick_conv_prepare_quantized(wick_op_ctx *ctx, bool depthwise);
WICK_INTERNAL wick_status wick_conv_invoke_quantized(wick_op_ctx *ctx);
/* FULLY_CONNECTED (fully_connected_quantized.c) */
WICK_INTERNAL wick_status wick_fc_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_fc_invoke_quantized(wick_op_ctx *ctx);
/* ADD SUB MUL MAXIMUM MINIMUM (elementwise_quantized.c) */
WICK_INTERNAL wick_status wick_binary_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_binary_invoke_quantized(wick_op_ctx *ctx);
/* AVERAGE_POOL_2D MAX_POOL_2D (pool_2d_quantized.c) */
WICK_INTERNAL wick_status wick_pool_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_pool_invoke_quantized(wick_op_ctx *ctx);
/* SOFTMAX LOGISTIC TANH HARD_SWISH RELU* LEAKY_RELU GELU (activations_quantized.c) */
WICK_INTERNAL wick_status wick_activation_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_activation_invoke_quantized(wick_op_ctx *ctx);
/* PRELU (activations_quantized.c) */
WICK_INTERNAL wick_status wick_prelu_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_prelu_invoke_quantized(wick_op_ctx *ctx);
/* MEAN SUM REDUCE_MAX REDUCE_MIN (reduce_quantized.c) */
WICK_INTERNAL wick_status wick_reduce_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_reduce_invoke_quantized(wick_op_ctx *ctx);
/* CONCATENATION with inputs quantized differently from the output
 * (concatenation_quantized.c); wick_concat_needs_requantize() decides. */
WICK_INTERNAL bool wick_concat_needs_requantize(const wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_concat_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_concat_invoke_quantized(wick_op_ctx *ctx);
/* BATCH_MATMUL (batch_matmul_quantized.c) */
WICK_INTERNAL wick_status wick_bmm_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_bmm_invoke_quantized(wick_op_ctx *ctx);
/* RESIZE_BILINEAR (resize_quantized.c) */
WICK_INTERNAL wick_status wick_resize_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_resize_invoke_quantized(wick_op_ctx *ctx);
/* TRANSPOSE_CONV (transpose_conv_quantized.c) */
WICK_INTERNAL wick_status wick_tconv_prepare_quantized(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_tconv_invoke_quantized(wick_op_ctx *ctx);
/* QUANTIZE with an integer input: requantization (requantize.c) */
WICK_INTERNAL wick_status wick_requantize_prepare(wick_op_ctx *ctx);
WICK_INTERNAL wick_status wick_requantize_invoke(wick_op_ctx *ctx);

#endif /* WICK_OPS_QUANTIZATION_H */
