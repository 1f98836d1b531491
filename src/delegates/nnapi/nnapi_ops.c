/*
 * nnapi_ops.c — the TFLite -> NNAPI mapping of the NNAPI delegate.
 *
 * One function per operator family checks that the operator, as the prepared
 * graph has it (types, quantization, shapes, options, constant data), has an
 * exact NNAPI counterpart at the runtime's feature level, and — given a model
 * builder — emits it. The same code path decides and builds, so an accepted
 * operator is built as it was judged. Anything NNAPI cannot express exactly at
 * the level is declined with the reason (shown in the delegation report);
 * nothing is approximated.
 *
 * Conventions of the mapping:
 *   - layout: NHWC everywhere (NNAPI's default; the NCHW flag is never set);
 *   - padding: always explicit (left, right, top, bottom) computed from
 *     TFLite's SAME/VALID rule (before = total / 2), and the output size that
 *     padding gives is checked against the prepared output;
 *   - fused activations: TFLite's NONE/RELU/RELU_N1_TO_1/RELU6 are NNAPI's
 *     FuseCode 0..3; TANH and SIGN_BIT are declined;
 *   - types: float32 -> TENSOR_FLOAT32; uint8 per-tensor -> QUANT8_ASYMM (27);
 *     int8 per-tensor -> QUANT8_ASYMM_SIGNED (30); int8 per-channel filters ->
 *     QUANT8_SYMM_PER_CHANNEL (29, zero points 0, channel dim 0 for CONV_2D
 *     and 3 for DEPTHWISE_CONV_2D); int32 biases -> TENSOR_INT32 with scale
 *     input scale x filter scale (0 for per-channel), checked against the file
 *     (relative 1e-5) and declined when it differs;
 *   - the level-27/28 rule output scale > input scale x filter scale of
 *     quantized CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, and the MUL
 *     rule output scale > product of input scales, are checked.
 * Lowerings for older levels (each exact): a float MEAN over H and W of an
 * NHWC tensor is an AVERAGE_POOL_2D over the whole plane (plus a RESHAPE when
 * keep_dims is false), and a float MEAN over any other run of adjacent axes is
 * RESHAPE to [1, outer, reduced, inner], AVERAGE_POOL_2D over the reduced
 * width, RESHAPE — so level 27 takes global average pooling and a layer norm's
 * means; a float SUB below 28 is ADD(a, MUL(b, -1)) (negation by -1 is exact,
 * and a + (-b) is a - b in IEEE arithmetic), and SQUARED_DIFFERENCE uses it;
 * SQUEEZE and EXPAND_DIMS are RESHAPEs.
 *
 * The helpers every mapping uses (reading types and options, emitting operands
 * and operations) are in nnapi_operands.c, declared in nnapi_map.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delegates/nnapi/nnapi_map.h"

/* TFLite builtin operator codes (the schema's BuiltinOperator). */
enum {
  TFL_ADD = 0,
  TFL_AVERAGE_POOL_2D = 1,
  TFL_DEPTH_TO_SPACE = 5,
  TFL_SPACE_TO_DEPTH = 26,
  TFL_TRANSPOSE = 39,
  TFL_EXP = 47,
  TFL_MAXIMUM = 55,
  TFL_MINIMUM = 57,
  TFL_NEG = 59,
  TFL_SLICE = 65,
  TFL_SIN = 66,
  TFL_LOG = 73,
  TFL_SQRT = 75,
  TFL_RSQRT = 76,
  TFL_SQUARED_DIFFERENCE = 99,
  TFL_ABS = 101,
  TFL_CONCATENATION = 2,
  TFL_CONV_2D = 3,
  TFL_DEPTHWISE_CONV_2D = 4,
  TFL_DEQUANTIZE = 6,
  TFL_FULLY_CONNECTED = 9,
  TFL_LOGISTIC = 14,
  TFL_MAX_POOL_2D = 17,
  TFL_MUL = 18,
  TFL_RELU = 19,
  TFL_RELU_N1_TO_1 = 20,
  TFL_RELU6 = 21,
  TFL_RESHAPE = 22,
  TFL_RESIZE_BILINEAR = 23,
  TFL_SOFTMAX = 25,
  TFL_TANH = 28,
  TFL_PAD = 34,
  TFL_MEAN = 40,
  TFL_SUB = 41,
  TFL_DIV = 42,
  TFL_L2_NORMALIZATION = 11,
  TFL_SQUEEZE = 43,
  TFL_STRIDED_SLICE = 45,
  TFL_PRELU = 54,
  TFL_EXPAND_DIMS = 70,
  TFL_RESIZE_NEAREST_NEIGHBOR = 97,
  TFL_QUANTIZE = 114,
  TFL_HARD_SWISH = 117,
  TFL_LESS = 58,
  TFL_GREATER = 61,
  TFL_GREATER_EQUAL = 62,
  TFL_LESS_EQUAL = 63,
  TFL_SELECT = 64,
  TFL_EQUAL = 71,
  TFL_NOT_EQUAL = 72,
  TFL_SUM = 74,
  TFL_LOGICAL_OR = 84,
  TFL_LOGICAL_AND = 86,
  TFL_LOGICAL_NOT = 87,
  TFL_REDUCE_ANY = 91,
  TFL_SELECT_V2 = 123,
  TFL_BATCH_MATMUL = 126,
  TFL_BROADCAST_TO = 130,
  TFL_REDUCE_ALL = 140,
  TFL_GELU = 150,
  TFL_CUSTOM = 32,
  TFL_CAST = 53,
  TFL_IF = 118,
  TFL_WHILE = 119
};

/* ------------------------------------------------------------ convolution */

/* Explicit padding for one spatial axis from TFLite's rule, checked against the
 * prepared output size. */
static bool explicit_padding(map_ctx *c, int padding_same, int in, int k, int stride, int dilation,
                             int out, int32_t *before, int32_t *after) {
  int64_t eff = (int64_t)(k - 1) * dilation + 1;
  int64_t total = 0;
  if (padding_same) {
    total = (int64_t)(out - 1) * stride + eff - in;
    if (total < 0) total = 0;
  }
  *before = (int32_t)(total / 2);
  *after = (int32_t)(total - total / 2);
  int64_t nn_out = (in + total - eff) / stride + 1;
  if (in + total < eff || nn_out != out)
    DECLINE("%s: padding gives %lld outputs, the graph has %d", c->op, (long long)nn_out, out);
  return true;
}

/* The bias scale NNAPI needs and whether the file's agrees. */
static bool bias_scale_ok(map_ctx *c, const wick_tensor *bias, size_t i, double expected) {
  float s = 0;
  int64_t zp = 0;
  if (!wick_tensor_quantization_at(bias, i, &s, &zp)) return true; /* unquantized int32: by rule */
  if (zp != 0) DECLINE("%s bias zero point %lld (NNAPI: 0)", c->op, (long long)zp);
  if (fabs((double)s - expected) > 1e-5 * expected)
    DECLINE("%s bias scale %g is not input scale x filter scale %g", c->op, (double)s, expected);
  return true;
}

static bool map_conv(map_ctx *c, bool depthwise) {
  int32_t ii = nn_in_index(c, 0), fi = nn_in_index(c, 1), oi = nn_out_index(c, 0);
  int32_t bi = wick_delegate_graph_node_input_count(c->g, c->node) > 2 ? nn_in_index(c, 2) : -1;
  nn_type in, out;
  if (!nn_value_type(c, ii, "input", false, &in) || !nn_value_type(c, oi, "output", false, &out))
    return false;
  const wick_tensor *x = nn_tensor(c, ii), *f = nn_tensor(c, fi), *y = nn_tensor(c, oi);
  const wick_tensor *bias = nn_tensor(c, bi);
  if (f == NULL) DECLINE("%s filter is absent", c->op);
  if (nn_rank(x) != 4 || nn_rank(f) != 4 || nn_rank(y) != 4)
    DECLINE("%s on rank %zu (NNAPI: rank 4)", c->op, nn_rank(x));
  if (in.code != out.code) DECLINE("%s input and output types differ", c->op);
  int in_c = nn_dim(x, 3), out_c = nn_dim(y, 3);
  if (depthwise) {
    if (nn_dim(f, 0) != 1 || nn_dim(f, 3) != out_c || out_c % in_c != 0)
      DECLINE("%s filter shape does not match its input/output channels", c->op);
  } else if (nn_dim(f, 3) != in_c || nn_dim(f, 0) != out_c) {
    DECLINE("%s is a grouped convolution (NNAPI's CONV_2D is not)", c->op);
  }
  /* the filter and bias types */
  wick_dtype fdt = wick_tensor_dtype(f);
  size_t fq = wick_tensor_quantization_count(f);
  bool per_channel = false;
  double in_scale = in.scale;
  if (in.code == ANEURALNETWORKS_TENSOR_FLOAT32) {
    if (fdt != WICK_DTYPE_FLOAT32 || fq != 0)
      DECLINE("%s: a filter of %s on float input (hybrid: not an NNAPI form)", c->op,
              wick_dtype_name(fdt));
    if (bias && (wick_tensor_dtype(bias) != WICK_DTYPE_FLOAT32 || nn_rank(bias) != 1))
      DECLINE("%s bias is not float32", c->op);
  } else {
    wick_dtype want =
        in.code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    if (fq > 1 && fdt == WICK_DTYPE_INT8) {
      per_channel = true;
      NEED_LEVEL(29, "a per-channel quantized filter");
      int32_t axis = wick_tensor_quantization_axis(f);
      if (axis != (depthwise ? 3 : 0) || fq != (size_t)out_c)
        DECLINE("%s per-channel filter on axis %d (NNAPI: axis %d, one scale per output)", c->op,
                (int)axis, depthwise ? 3 : 0);
      for (size_t k = 0; k < fq; k++) {
        float s;
        int64_t zp;
        wick_tensor_quantization_at(f, k, &s, &zp);
        if (zp != 0 || !(s > 0))
          DECLINE("%s per-channel filter zero point %lld (NNAPI: 0)", c->op, (long long)zp);
      }
    } else if (fq != 1 || fdt != want) {
      DECLINE("%s filter is %s%s with %s input", c->op, fq > 1 ? "per-channel " : "",
              wick_dtype_name(fdt), wick_dtype_name(want));
    }
    if (bias != NULL) {
      if (wick_tensor_dtype(bias) != WICK_DTYPE_INT32 || nn_rank(bias) != 1)
        DECLINE("%s bias is %s (NNAPI: int32)", c->op, wick_dtype_name(wick_tensor_dtype(bias)));
      for (size_t k = 0; k < (per_channel ? fq : 1); k++) {
        float fs;
        int64_t fzp;
        wick_tensor_quantization_at(f, k, &fs, &fzp);
        if (!bias_scale_ok(c, bias, per_channel ? k : 0, in_scale * (double)fs)) return false;
        if (!per_channel && c->level < 29 && !((double)out.scale > in_scale * (double)fs))
          DECLINE("%s: levels 27 and 28 need output scale > input scale x filter scale", c->op);
      }
    }
    if (!per_channel && bias == NULL && c->level < 29) {
      float fs;
      int64_t fzp;
      wick_tensor_quantization_at(f, 0, &fs, &fzp);
      if (!((double)out.scale > in_scale * (double)fs))
        DECLINE("%s: levels 27 and 28 need output scale > input scale x filter scale", c->op);
    }
  }
  if (bias != NULL && nn_dim(bias, 0) != out_c)
    DECLINE("%s bias size differs from the channels", c->op);
  int32_t fuse;
  if (!nn_fuse_code(c, &fuse)) return false;
  int same = nn_option_int(c, WICK_OPTION_PADDING, 1) == 0;
  int sw = nn_option_int(c, WICK_OPTION_STRIDE_W, 1),
      sh = nn_option_int(c, WICK_OPTION_STRIDE_H, 1);
  int dw = nn_option_int(c, WICK_OPTION_DILATION_W, 1),
      dh = nn_option_int(c, WICK_OPTION_DILATION_H, 1);
  if (sw < 1 || sh < 1 || dw < 1 || dh < 1) DECLINE("%s stride or dilation below 1", c->op);
  bool dilated = dw != 1 || dh != 1;
  if (dilated) NEED_LEVEL(29, "a dilated convolution");
  int32_t pl, pr, pt, pb;
  if (!explicit_padding(c, same, nn_dim(x, 2), nn_dim(f, 2), sw, dw, nn_dim(y, 2), &pl, &pr) ||
      !explicit_padding(c, same, nn_dim(x, 1), nn_dim(f, 1), sh, dh, nn_dim(y, 1), &pt, &pb))
    return false;
  if (nn_dim(y, 0) != nn_dim(x, 0)) DECLINE("%s batch changes", c->op);
  if (c->b == NULL) return true;

  int32_t ops[14];
  size_t n = 0;
  ops[n++] = nn_graph_operand(c, ii);
  ops[n++] = nn_graph_operand(c, fi);
  nn_type bias_type = {ANEURALNETWORKS_TENSOR_FLOAT32, 0, 0};
  if (in.code != ANEURALNETWORKS_TENSOR_FLOAT32) {
    float fs = 0;
    int64_t fzp;
    wick_tensor_quantization_at(f, 0, &fs, &fzp);
    bias_type = (nn_type){ANEURALNETWORKS_TENSOR_INT32, per_channel ? 0.0f : in.scale * fs, 0};
  }
  if (bias != NULL) {
    ops[n++] = nn_graph_operand_as(c, bi, &bias_type);
  } else { /* NNAPI needs a bias: zeros of the bias type */
    void *zeros = calloc((size_t)out_c, 4);
    if (zeros == NULL) DECLINE("out of memory building %s", c->op);
    uint32_t bd = (uint32_t)out_c;
    ops[n++] = nn_const_tensor(c, bias_type, &bd, 1, zeros, (size_t)out_c * 4);
    free(zeros);
  }
  ops[n++] = nn_scalar_i32(c, pl);
  ops[n++] = nn_scalar_i32(c, pr);
  ops[n++] = nn_scalar_i32(c, pt);
  ops[n++] = nn_scalar_i32(c, pb);
  ops[n++] = nn_scalar_i32(c, sw);
  ops[n++] = nn_scalar_i32(c, sh);
  if (depthwise) ops[n++] = nn_scalar_i32(c, out_c / in_c);
  ops[n++] = nn_scalar_i32(c, fuse);
  if (dilated) {
    ops[n++] = nn_scalar_bool(c, false); /* NHWC */
    ops[n++] = nn_scalar_i32(c, dw);
    ops[n++] = nn_scalar_i32(c, dh);
  }
  return nn_operation_to(c, depthwise ? ANEURALNETWORKS_DEPTHWISE_CONV_2D : ANEURALNETWORKS_CONV_2D,
                         ops, n, oi);
}

static bool map_fully_connected(map_ctx *c) {
  int32_t ii = nn_in_index(c, 0), wi = nn_in_index(c, 1), oi = nn_out_index(c, 0);
  int32_t bi = wick_delegate_graph_node_input_count(c->g, c->node) > 2 ? nn_in_index(c, 2) : -1;
  nn_type in, out;
  if (!nn_value_type(c, ii, "input", false, &in) || !nn_value_type(c, oi, "output", false, &out))
    return false;
  const wick_tensor *x = nn_tensor(c, ii), *w = nn_tensor(c, wi), *y = nn_tensor(c, oi),
                    *bias = nn_tensor(c, bi);
  if (w == NULL || nn_rank(w) != 2) DECLINE("%s weights are not 2-D", c->op);
  if (nn_option_int(c, WICK_OPTION_WEIGHTS_FORMAT, 0) != 0)
    DECLINE("%s with shuffled weights", c->op);
  if (in.code != out.code) DECLINE("%s input and output types differ", c->op);
  if (nn_rank(x) < 2) DECLINE("%s input of rank 1 (NNAPI: at least 2)", c->op);
  int units = nn_dim(w, 0), size = nn_dim(w, 1);
  int64_t elements = 1;
  for (size_t d = 0; d < nn_rank(x); d++) elements *= nn_dim(x, d);
  if (size <= 0 || elements % size != 0) DECLINE("%s input size does not divide", c->op);
  /* NNAPI's output is [batch, units]; TFLite's keep_num_dims form (the input's
   * leading dimensions kept) is that, reshaped */
  bool flat = nn_rank(y) == 2 && nn_dim(y, 0) == elements / size && nn_dim(y, 1) == units;
  bool kept = nn_rank(y) == nn_rank(x) && nn_dim(y, nn_rank(y) - 1) == units &&
              nn_dim(x, nn_rank(x) - 1) == size;
  for (size_t d = 0; kept && d + 1 < nn_rank(y); d++) kept = nn_dim(y, d) == nn_dim(x, d);
  if (!flat && !kept) DECLINE("%s output shape is neither [batch, units] nor kept", c->op);
  wick_dtype wdt = wick_tensor_dtype(w);
  size_t wq = wick_tensor_quantization_count(w);
  if (in.code == ANEURALNETWORKS_TENSOR_FLOAT32) {
    if (wdt != WICK_DTYPE_FLOAT32 || wq != 0)
      DECLINE("%s with %s weights on float input (hybrid: not an NNAPI form)", c->op,
              wick_dtype_name(wdt));
    if (bias && wick_tensor_dtype(bias) != WICK_DTYPE_FLOAT32) DECLINE("%s bias type", c->op);
  } else {
    wick_dtype want =
        in.code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? WICK_DTYPE_UINT8 : WICK_DTYPE_INT8;
    if (wq > 1) DECLINE("%s per-channel weights (NNAPI's FULLY_CONNECTED: per-tensor)", c->op);
    if (wq != 1 || wdt != want)
      DECLINE("%s weights are %s with %s input", c->op, wick_dtype_name(wdt),
              wick_dtype_name(want));
    float ws;
    int64_t wzp;
    wick_tensor_quantization_at(w, 0, &ws, &wzp);
    double product = (double)in.scale * (double)ws;
    if (bias) {
      if (wick_tensor_dtype(bias) != WICK_DTYPE_INT32) DECLINE("%s bias is not int32", c->op);
      if (!bias_scale_ok(c, bias, 0, product)) return false;
    }
    if (c->level < 29 && !((double)out.scale > product))
      DECLINE("%s: levels 27 and 28 need output scale > input scale x weights scale", c->op);
  }
  if (bias && (nn_rank(bias) != 1 || nn_dim(bias, 0) != units)) DECLINE("%s bias shape", c->op);
  int32_t fuse;
  if (!nn_fuse_code(c, &fuse)) return false;
  if (c->b == NULL) return true;
  int32_t ops[4];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_graph_operand(c, wi);
  nn_type bias_type = {ANEURALNETWORKS_TENSOR_FLOAT32, 0, 0};
  if (in.code != ANEURALNETWORKS_TENSOR_FLOAT32) {
    float ws;
    int64_t wzp;
    wick_tensor_quantization_at(w, 0, &ws, &wzp);
    bias_type = (nn_type){ANEURALNETWORKS_TENSOR_INT32, in.scale * ws, 0};
  }
  if (bias) {
    ops[2] = nn_graph_operand_as(c, bi, &bias_type);
  } else {
    void *zeros = calloc((size_t)units, 4);
    if (zeros == NULL) DECLINE("out of memory building %s", c->op);
    uint32_t bd = (uint32_t)units;
    ops[2] = nn_const_tensor(c, bias_type, &bd, 1, zeros, (size_t)units * 4);
    free(zeros);
  }
  ops[3] = nn_scalar_i32(c, fuse);
  int32_t o = nn_graph_operand(c, oi);
  if (flat) return nn_operation(c, ANEURALNETWORKS_FULLY_CONNECTED, ops, 4, &o, 1);
  uint32_t fd[2] = {(uint32_t)(elements / size), (uint32_t)units};
  int32_t rows = nn_temp_operand(c, out, fd, 2);
  if (!nn_operation(c, ANEURALNETWORKS_FULLY_CONNECTED, ops, 4, &rows, 1)) return false;
  int32_t shape[4];
  uint32_t r = (uint32_t)nn_rank(y);
  for (uint32_t d = 0; d < r; d++) shape[d] = nn_dim(y, d);
  int32_t rs[2] = {rows, nn_const_i32_vector(c, shape, r)};
  return nn_operation(c, ANEURALNETWORKS_RESHAPE, rs, 2, &o, 1);
}

/* ------------------------------------------------------------ elementwise */

/* -t for float graph tensor t, as MUL(t, -1) into a temporary operand (level
 * 27 has neither NEG nor SUB): exact, as negation is. */
static int32_t nn_negated(map_ctx *c, int32_t t) {
  const wick_tensor *x = nn_tensor(c, t);
  uint32_t dims[4] = {1, 1, 1, 1}, r = (uint32_t)nn_rank(x);
  for (uint32_t d = 0; d < r; d++) dims[d] = (uint32_t)nn_dim(x, d);
  const nn_type f32 = {ANEURALNETWORKS_TENSOR_FLOAT32, 0, 0};
  const float minus_one = -1.0f;
  const uint32_t one = 1;
  int32_t ops[3];
  ops[0] = nn_graph_operand(c, t);
  ops[1] = nn_const_tensor(c, f32, &one, 1, &minus_one, sizeof minus_one);
  ops[2] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  int32_t out = nn_temp_operand(c, f32, dims, r ? r : 1);
  return nn_operation(c, ANEURALNETWORKS_MUL, ops, 3, &out, 1) ? out : -1;
}

static bool mul_requantization_agrees(const nn_type *a, const nn_type *b, const nn_type *out);

static bool map_binary(map_ctx *c, int32_t code) {
  nn_type a, b, out;
  const wick_tensor *first = nn_tensor(c, nn_in_index(c, 0));
  if (first != NULL && wick_tensor_dtype(first) == WICK_DTYPE_INT32 &&
      code != ANEURALNETWORKS_DIV) {
    /* int32 ADD, SUB, MUL: NNAPI's TENSOR_INT32 form (30), no fused activation (a loop
     * counter in a WHILE body) */
    NEED_LEVEL(30, "int32 ADD, SUB and MUL");
    c->allow_scalar = true;
    if (!nn_value_type(c, nn_in_index(c, 0), "first input", true, &a) ||
        !nn_value_type(c, nn_in_index(c, 1), "second input", true, &b) ||
        !nn_value_type(c, nn_out_index(c, 0), "output", true, &out))
      return false;
    if (nn_option_int(c, WICK_OPTION_FUSED_ACTIVATION, 0) != 0)
      DECLINE("int32 %s with a fused activation (NNAPI: none for int32)", c->op);
  } else if (!nn_binary_types(c, &a, &b, &out)) {
    return false;
  }
  if (a.code != b.code || a.code != out.code) DECLINE("%s operand types differ", c->op);
  /* float SUB below 28: ADD(a, MUL(b, -1)) */
  bool negate_b = code == ANEURALNETWORKS_SUB && c->level < 28;
  if (code == ANEURALNETWORKS_SUB && a.code != ANEURALNETWORKS_TENSOR_FLOAT32)
    NEED_LEVEL(a.code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? 29 : 30, "quantized SUB");
  if (code == ANEURALNETWORKS_DIV) {
    if (a.code != ANEURALNETWORKS_TENSOR_FLOAT32) DECLINE("quantized DIV (NNAPI: float)");
    NEED_LEVEL(28, "DIV");
  }
  if (code == ANEURALNETWORKS_MUL && nn_is_quant8(a.code) &&
      !((double)out.scale > (double)a.scale * (double)b.scale))
    DECLINE("quantized MUL needs output scale > product of the input scales");
  if (code == ANEURALNETWORKS_MUL && nn_is_quant8(a.code) &&
      !mul_requantization_agrees(&a, &b, &out))
    DECLINE(
        "quantized MUL whose requantization differs by a step between TFLite (multiplier "
        "in float) and NNAPI's reference (float product of the input scales / output "
        "scale in double) for some pair of inputs at these scales");
  /* broadcasting: NNAPI's rule is numpy's, as TFLite's (ranks up to 4) */
  const wick_tensor *ta = nn_tensor(c, nn_in_index(c, 0)), *tb = nn_tensor(c, nn_in_index(c, 1));
  const wick_tensor *to = nn_tensor(c, nn_out_index(c, 0));
  size_t ra = nn_rank(ta), rb = nn_rank(tb), ro = nn_rank(to);
  for (size_t k = 0; k < ro; k++) {
    int da = k < ro - ra ? 1 : nn_dim(ta, k - (ro - ra)),
        db = k < ro - rb ? 1 : nn_dim(tb, k - (ro - rb));
    int want = da > db ? da : db;
    if ((da != db && da != 1 && db != 1) || nn_dim(to, k) != want)
      DECLINE("%s shapes do not broadcast as NNAPI does", c->op);
  }
  if (ra > ro || rb > ro) DECLINE("%s output rank below an input's", c->op);
  int32_t fuse;
  if (!nn_fuse_code(c, &fuse)) return false;
  if (c->b == NULL) return true;
  int32_t ops[3];
  ops[0] = nn_graph_operand(c, nn_in_index(c, 0));
  ops[1] = negate_b ? nn_negated(c, nn_in_index(c, 1)) : nn_graph_operand(c, nn_in_index(c, 1));
  ops[2] = nn_scalar_i32(c, fuse);
  return nn_operation_to(c, negate_b ? ANEURALNETWORKS_ADD : code, ops, 3, nn_out_index(c, 0));
}

/* RELU, RELU1, RELU6, LOGISTIC, TANH, HARD_SWISH: one input, same shape. */
static bool map_unary(map_ctx *c, int32_t code) {
  int32_t ii, oi;
  nn_type in, out;
  c->allow_scalar = true;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (in.code != out.code) DECLINE("%s input and output types differ", c->op);
  if (nn_is_quant8(in.code)) {
    bool u8 = in.code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
    switch (code) {
      case ANEURALNETWORKS_LOGISTIC:
        if (out.scale != 1.0f / 256 || out.zp != (u8 ? 0 : -128))
          DECLINE("quantized LOGISTIC needs output scale 1/256, zero point %d", u8 ? 0 : -128);
        break;
      case ANEURALNETWORKS_TANH:
        NEED_LEVEL(29, "quantized TANH");
        if (out.scale != 1.0f / 128 || out.zp != (u8 ? 128 : 0))
          DECLINE("quantized TANH needs output scale 1/128, zero point %d", u8 ? 128 : 0);
        break;
      case ANEURALNETWORKS_HARD_SWISH:
        DECLINE("quantized HARD_SWISH (NNAPI's integer rounding is not pinned to TFLite's)");
      default:
        if (!nn_same_quant(&in, &out))
          DECLINE("quantized %s with different input and output scales (NNAPI: the same)", c->op);
    }
  }
  if (code == ANEURALNETWORKS_HARD_SWISH) NEED_LEVEL(30, "HARD_SWISH");
  if (c->b == NULL) return true;
  int32_t i = nn_graph_operand(c, ii);
  return nn_operation_to(c, code, &i, 1, oi);
}

/* ------------------------------------------------------------ pooling */

static bool map_pool(map_ctx *c, int32_t code) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  const wick_tensor *x = nn_tensor(c, ii), *y = nn_tensor(c, oi);
  if (nn_rank(x) != 4 || nn_rank(y) != 4) DECLINE("%s on rank %zu (NNAPI: 4)", c->op, nn_rank(x));
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  int32_t fuse;
  if (!nn_fuse_code(c, &fuse)) return false;
  int same = nn_option_int(c, WICK_OPTION_PADDING, 1) == 0;
  int sw = nn_option_int(c, WICK_OPTION_STRIDE_W, 1),
      sh = nn_option_int(c, WICK_OPTION_STRIDE_H, 1);
  int fw = nn_option_int(c, WICK_OPTION_FILTER_W, 1),
      fh = nn_option_int(c, WICK_OPTION_FILTER_H, 1);
  if (sw < 1 || sh < 1 || fw < 1 || fh < 1) DECLINE("%s stride or filter below 1", c->op);
  int32_t pl, pr, pt, pb;
  if (!explicit_padding(c, same, nn_dim(x, 2), fw, sw, 1, nn_dim(y, 2), &pl, &pr) ||
      !explicit_padding(c, same, nn_dim(x, 1), fh, sh, 1, nn_dim(y, 1), &pt, &pb))
    return false;
  if (c->b == NULL) return true;
  int32_t ops[10];
  size_t n = 0;
  ops[n++] = nn_graph_operand(c, ii);
  ops[n++] = nn_scalar_i32(c, pl);
  ops[n++] = nn_scalar_i32(c, pr);
  ops[n++] = nn_scalar_i32(c, pt);
  ops[n++] = nn_scalar_i32(c, pb);
  ops[n++] = nn_scalar_i32(c, sw);
  ops[n++] = nn_scalar_i32(c, sh);
  ops[n++] = nn_scalar_i32(c, fw);
  ops[n++] = nn_scalar_i32(c, fh);
  ops[n++] = nn_scalar_i32(c, fuse);
  return nn_operation_to(c, code, ops, n, oi);
}

/* ------------------------------------------------------------ shapes */

static bool map_reshape(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  c->allow_scalar = true;
  if (!nn_in_out_types(c, true, &ii, &oi, &in, &out)) return false;
  if (!nn_same_quant(&in, &out)) DECLINE("%s changes the type or quantization", c->op);
  if (in.code == ANEURALNETWORKS_TENSOR_INT32)
    DECLINE("%s of int32 (NNAPI: float and 8-bit)", c->op);
  if (c->b == NULL) return true;
  const wick_tensor *y = nn_tensor(c, oi);
  int32_t shape[4] = {1, 1, 1, 1};
  uint32_t r = (uint32_t)nn_rank(y);
  for (uint32_t d = 0; d < r; d++) shape[d] = nn_dim(y, d);
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_const_i32_vector(c, shape, r ? r : 1);
  return nn_operation_to(c, ANEURALNETWORKS_RESHAPE, ops, 2, oi);
}

/* ABS EXP LOG NEG RSQRT SIN SQRT: float32 from level 29. */
static bool map_float_unary(map_ctx *c, int32_t code) {
  int32_t ii, oi;
  nn_type in, out;
  c->allow_scalar = true;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (in.code != ANEURALNETWORKS_TENSOR_FLOAT32 || out.code != in.code)
    DECLINE("quantized %s (NNAPI: float only)", c->op);
  NEED_LEVEL(29, c->op);
  if (c->b == NULL) return true;
  int32_t i = nn_graph_operand(c, ii);
  return nn_operation_to(c, code, &i, 1, oi);
}

/* MAXIMUM, MINIMUM (29): float, or 8-bit with every operand quantized alike (TFLite
 * compares the raw values then). */
static bool map_minmax(map_ctx *c, int32_t code) {
  nn_type a, b, out;
  if (!nn_binary_types(c, &a, &b, &out)) return false;
  if (!nn_same_quant(&a, &b) || !nn_same_quant(&a, &out))
    DECLINE("%s with operands quantized differently", c->op);
  NEED_LEVEL(29, c->op);
  if (c->b == NULL) return true;
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, nn_in_index(c, 0));
  ops[1] = nn_graph_operand(c, nn_in_index(c, 1));
  return nn_operation_to(c, code, ops, 2, nn_out_index(c, 0));
}

/* ---- PRELU's requantization, as TFLite and NNAPI's reference CPU path compute it: both take
 * x >= 0 ? x * (in / out) : x * a * (in * alpha / out) with a Q31 multiplier and a shift
 * (TFLite's QuantizeMultiplier, MultiplyByQuantizedMultiplier), but TFLite forms the real
 * multipliers in float and NNAPI's reference in double. */
typedef struct q31 {
  int32_t m, shift;
} q31;

static q31 q31_of(double real) {
  q31 q = {0, 0};
  if (!(real > 0) || !(real < 1e30)) return q;
  int e;
  double f = frexp(real, &e);
  int64_t fixed = (int64_t)round(f * 2147483648.0);
  if (fixed == ((int64_t)1 << 31)) {
    fixed /= 2;
    e++;
  }
  if (e < -31) return q;
  q.m = (int32_t)fixed;
  q.shift = e;
  return q;
}

/* round(x * m * 2^(shift - 31)): the doubling high multiply rounded to nearest, then the
 * rounding right shift (ties away from zero). */
static int32_t q31_apply(int32_t x, q31 q) {
  int left = q.shift > 0 ? q.shift : 0, right = q.shift > 0 ? 0 : -q.shift;
  if (left > 31) return x > 0 ? INT32_MAX : x < 0 ? INT32_MIN : 0; /* saturates either way */
  int64_t shifted = (int64_t)x * ((int64_t)1 << left);
  if (shifted > INT32_MAX || shifted < INT32_MIN) return shifted > 0 ? INT32_MAX : INT32_MIN;
  int64_t ab = shifted * q.m;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  int32_t high = (int32_t)((ab + nudge) / ((int64_t)1 << 31));
  if (right <= 0) return high;
  if (right > 31) return 0;
  int64_t mask = ((int64_t)1 << right) - 1, rem = (int64_t)high & mask;
  int64_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (int32_t)(((int64_t)high >> right) + (rem > threshold ? 1 : 0));
}

/* Whether TFLite's float-formed and NNAPI's double-formed multipliers give the same 8-bit output
 * for every input value and every alpha value the operator can see (the alpha tensor's values
 * when constant, else all 256): a proof by exhaustion, at most 256 x 256 cases. */
static bool prelu_requantization_agrees(const nn_type *in, const nn_type *alpha, const nn_type *out,
                                        const wick_tensor *alpha_tensor) {
  q31 pos_f = q31_of((double)(in->scale / out->scale));
  q31 pos_d = q31_of((double)in->scale / (double)out->scale);
  q31 neg_f = q31_of((double)(in->scale * alpha->scale / out->scale));
  q31 neg_d = q31_of((double)(in->scale * alpha->scale) / (double)out->scale);
  bool u8 = in->code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
  int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
#define NN_CLAMP(v) ((v) < lo ? lo : (v) > hi ? hi : (v))
  for (int32_t x = lo; x <= hi; x++) {
    int32_t v = x - in->zp;
    if (v < 0) continue;
    if (NN_CLAMP(q31_apply(v, pos_f) + out->zp) != NN_CLAMP(q31_apply(v, pos_d) + out->zp))
      return false;
  }
  bool seen[256] = {false};
  const void *data = wick_tensor_is_constant(alpha_tensor) ? wick_tensor_data(alpha_tensor) : NULL;
  size_t n = data ? wick_tensor_byte_size(alpha_tensor) : 256;
  for (size_t k = 0; k < n; k++) {
    int32_t a =
        data ? (u8 ? ((const uint8_t *)data)[k] : ((const int8_t *)data)[k]) : lo + (int32_t)k;
    if (seen[a - lo]) continue;
    seen[a - lo] = true;
    for (int32_t x = lo; x <= hi; x++) {
      int32_t v = x - in->zp;
      if (v >= 0) continue;
      int32_t p = v * (a - alpha->zp);
      if (NN_CLAMP(q31_apply(p, neg_f) + out->zp) != NN_CLAMP(q31_apply(p, neg_d) + out->zp))
        return false;
    }
  }
#undef NN_CLAMP
  return true;
}

/* Whether 8-bit MUL's one multiplier gives the same output in both derivations: TFLite's
 * (in1 x in2 / out, all in float) and NNAPI's reference CPU path's (the float product in1 x in2,
 * then divided by out in double). Both apply it as q31_apply to (a - za) x (b - zb), every pair
 * of 8-bit inputs is tried (256 x 256 cases); the comparison is before the fused activation's
 * clamp to a narrower range, so agreement here is agreement with any activation. */
static bool mul_requantization_agrees(const nn_type *a, const nn_type *b, const nn_type *out) {
  q31 tflite = q31_of((double)(a->scale * b->scale / out->scale));
  q31 nnapi = q31_of((double)(a->scale * b->scale) / (double)out->scale);
  if (tflite.m == nnapi.m && tflite.shift == nnapi.shift) return true;
  bool u8 = a->code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
  int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  for (int32_t x = lo; x <= hi; x++)
    for (int32_t y = lo; y <= hi; y++) {
      int32_t p = (x - a->zp) * (y - b->zp);
      int32_t vt = q31_apply(p, tflite) + out->zp, vn = q31_apply(p, nnapi) + out->zp;
      vt = vt < lo ? lo : vt > hi ? hi : vt;
      vn = vn < lo ? lo : vn > hi ? hi : vn;
      if (vt != vn) return false;
    }
  return true;
}

/* PRELU (29): x >= 0 ? x : alpha * x with alpha broadcast into x's shape (NNAPI broadcasts both
 * ways; TFLite's output has the input's shape, so alpha must not widen it). 8-bit: the
 * requantization must give TFLite's results for every possible input (see above). */
static bool map_prelu(map_ctx *c) {
  nn_type in, alpha, out;
  if (!nn_binary_types(c, &in, &alpha, &out)) return false;
  if (in.code != alpha.code || in.code != out.code) DECLINE("%s operand types differ", c->op);
  const wick_tensor *x = nn_tensor(c, nn_in_index(c, 0)), *a = nn_tensor(c, nn_in_index(c, 1));
  const wick_tensor *y = nn_tensor(c, nn_out_index(c, 0));
  size_t rx = nn_rank(x), ra = nn_rank(a);
  if (rx < 1) DECLINE("%s of a scalar (NNAPI: rank 1 and up)", c->op);
  if (ra > rx || nn_rank(y) != rx) DECLINE("%s: alpha of a higher rank than its input", c->op);
  for (size_t k = 0; k < rx; k++) {
    int dx = nn_dim(x, k), da = k < rx - ra ? 1 : nn_dim(a, k - (rx - ra));
    if ((da != dx && da != 1) || nn_dim(y, k) != dx)
      DECLINE("%s: alpha does not broadcast into the input's shape", c->op);
  }
  if (nn_is_quant8(in.code) && !prelu_requantization_agrees(&in, &alpha, &out, a))
    DECLINE(
        "quantized PRELU whose requantization differs by a step between TFLite (multipliers "
        "formed in float) and NNAPI's reference (in double) for some input at these scales");
  NEED_LEVEL(29, "PRELU");
  if (c->b == NULL) return true;
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, nn_in_index(c, 0));
  ops[1] = nn_graph_operand(c, nn_in_index(c, 1));
  return nn_operation_to(c, ANEURALNETWORKS_PRELU, ops, 2, nn_out_index(c, 0));
}

/* SQUARED_DIFFERENCE (float): SUB (below 28 ADD of the negated b), then MUL of
 * the difference by itself: the same two roundings as TFLite's (a - b) * (a - b). */
static bool map_squared_difference(map_ctx *c) {
  nn_type a, b, out;
  if (!nn_binary_types(c, &a, &b, &out)) return false;
  if (a.code != ANEURALNETWORKS_TENSOR_FLOAT32 || b.code != a.code || out.code != a.code)
    DECLINE("quantized SQUARED_DIFFERENCE (no NNAPI form)");
  if (c->b == NULL) return true;
  const wick_tensor *y = nn_tensor(c, nn_out_index(c, 0));
  uint32_t dims[4] = {1, 1, 1, 1}, r = (uint32_t)nn_rank(y);
  for (uint32_t d = 0; d < r; d++) dims[d] = (uint32_t)nn_dim(y, d);
  int32_t diff = nn_temp_operand(c, out, dims, r ? r : 1);
  bool negate_b = c->level < 28; /* SUB as ADD(a, MUL(b, -1)) */
  int32_t sub[3];
  sub[0] = nn_graph_operand(c, nn_in_index(c, 0));
  sub[1] = negate_b ? nn_negated(c, nn_in_index(c, 1)) : nn_graph_operand(c, nn_in_index(c, 1));
  sub[2] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  if (!nn_operation(c, negate_b ? ANEURALNETWORKS_ADD : ANEURALNETWORKS_SUB, sub, 3, &diff, 1))
    return false;
  int32_t mul[3] = {diff, diff, nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE)};
  return nn_operation_to(c, ANEURALNETWORKS_MUL, mul, 3, nn_out_index(c, 0));
}

static bool map_softmax(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (in.code != out.code) DECLINE("%s input and output types differ", c->op);
  size_t r = nn_rank(nn_tensor(c, ii));
  if (r != 2 && r != 4) NEED_LEVEL(29, "SOFTMAX on a tensor of rank other than 2 and 4");
  double beta = 1;
  wick_delegate_graph_node_option(c->g, c->node, WICK_OPTION_BETA, &beta);
  if (!(beta > 0)) DECLINE("%s beta %g (NNAPI: positive)", c->op, beta);
  if (nn_is_quant8(in.code)) {
    bool u8 = in.code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
    if (out.scale != 1.0f / 256 || out.zp != (u8 ? 0 : -128))
      DECLINE("quantized SOFTMAX needs output scale 1/256, zero point %d", u8 ? 0 : -128);
    /* TFLite's fixed-point form; its float-table fallback for tiny input scales
     * is not what NNAPI specifies. */
    if (!(beta * (double)in.scale * (double)(1 << 26) > 1.0))
      DECLINE("quantized SOFTMAX with beta x input scale below 2^-26");
    /* Past 511 values a row's sum of exps (Q12.19) can need a final shift
     * beyond 31 bits, where TFLite's reference is undefined and wick's CPU
     * clamps: the results may differ there. */
    const wick_tensor *x = nn_tensor(c, ii);
    if (nn_dim(x, nn_rank(x) - 1) > 511)
      DECLINE(
          "quantized SOFTMAX over rows of %d values (more than 511: TFLite's fixed-point "
          "rounding is undefined there)",
          (int)nn_dim(x, nn_rank(x) - 1));
  }
  if (c->b == NULL) return true;
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_scalar_f32(c, (float)beta);
  return nn_operation_to(c, ANEURALNETWORKS_SOFTMAX, ops, 2, oi);
}

static bool map_concatenation(map_ctx *c) {
  size_t n = wick_delegate_graph_node_input_count(c->g, c->node);
  int32_t oi = nn_out_index(c, 0);
  nn_type out;
  if (!nn_value_type(c, oi, "output", false, &out)) return false;
  if (n < 1 || n > 15) DECLINE("%s of %zu inputs", c->op, n);
  bool differ = false;
  for (size_t i = 0; i < n; i++) {
    nn_type in;
    if (!nn_value_type(c, nn_in_index(c, i), "input", false, &in)) return false;
    if (in.code != out.code) DECLINE("%s input types differ", c->op);
    if (!nn_same_quant(&in, &out)) differ = true;
  }
  if (differ && out.code == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM)
    NEED_LEVEL(29, "uint8 CONCATENATION with inputs quantized unlike the output");
  int32_t fuse;
  if (!nn_fuse_code(c, &fuse)) return false;
  if (fuse != ANEURALNETWORKS_FUSED_NONE) DECLINE("%s with a fused activation", c->op);
  int axis = nn_option_int(c, WICK_OPTION_AXIS, 0);
  int r = (int)nn_rank(nn_tensor(c, oi));
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) DECLINE("%s axis out of range", c->op);
  if (c->b == NULL) return true;
  int32_t ops[16];
  for (size_t i = 0; i < n; i++) ops[i] = nn_graph_operand(c, nn_in_index(c, i));
  ops[n] = nn_scalar_i32(c, axis);
  return nn_operation_to(c, ANEURALNETWORKS_CONCATENATION, ops, n + 1, oi);
}

/* The constant int32 values of input i (axes, paddings), or NULL with a reason. */
static const int32_t *const_ints(map_ctx *c, size_t i, size_t *count) {
  const wick_tensor *t = nn_tensor(c, nn_in_index(c, i));
  if (t == NULL || !wick_tensor_is_constant(t) || wick_tensor_dtype(t) != WICK_DTYPE_INT32 ||
      wick_tensor_data(t) == NULL) {
    snprintf(c->why, c->why_size, "%s with %s axes or paddings (NNAPI here: constant int32)", c->op,
             t && !wick_tensor_is_constant(t) ? "run-time" : "non-int32");
    return NULL;
  }
  *count = wick_tensor_byte_size(t) / 4;
  return wick_tensor_data(t);
}

/* A float MEAN over the adjacent axes lo..hi as RESHAPE to [1, outer, reduced,
 * inner], AVERAGE_POOL_2D of width `reduced` (no padding, stride 1: each output
 * the sum of its row divided by the count, as MEAN), RESHAPE to the output. */
static bool mean_as_pool(map_ctx *c, int32_t ii, int32_t oi, nn_type type, int lo, int hi) {
  const wick_tensor *x = nn_tensor(c, ii), *y = nn_tensor(c, oi);
  int64_t outer = 1, width = 1, inner = 1;
  for (int a = 0; a < (int)nn_rank(x); a++)
    *(a < lo ? &outer : a <= hi ? &width : &inner) *= nn_dim(x, a);
  if (outer > INT32_MAX || width > INT32_MAX || inner > INT32_MAX)
    DECLINE("%s of a tensor too large for NNAPI's dimensions", c->op);
  int32_t view[4] = {1, (int32_t)outer, (int32_t)width, (int32_t)inner};
  uint32_t view_dims[4] = {1, (uint32_t)outer, (uint32_t)width, (uint32_t)inner};
  uint32_t pooled_dims[4] = {1, (uint32_t)outer, 1, (uint32_t)inner};
  int32_t rs[2];
  rs[0] = nn_graph_operand(c, ii);
  rs[1] = nn_const_i32_vector(c, view, 4);
  int32_t viewed = nn_temp_operand(c, type, view_dims, 4);
  if (!nn_operation(c, ANEURALNETWORKS_RESHAPE, rs, 2, &viewed, 1)) return false;
  int32_t ops[10];
  size_t n = 0;
  ops[n++] = viewed;
  for (int k = 0; k < 4; k++) ops[n++] = nn_scalar_i32(c, 0); /* no padding */
  ops[n++] = nn_scalar_i32(c, 1);                             /* strides */
  ops[n++] = nn_scalar_i32(c, 1);
  ops[n++] = nn_scalar_i32(c, (int32_t)width); /* the filter: the reduced axes */
  ops[n++] = nn_scalar_i32(c, 1);
  ops[n++] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  int32_t pooled = nn_temp_operand(c, type, pooled_dims, 4);
  if (!nn_operation(c, ANEURALNETWORKS_AVERAGE_POOL_2D, ops, n, &pooled, 1)) return false;
  int32_t shape[4] = {1, 1, 1, 1};
  uint32_t yr = (uint32_t)nn_rank(y);
  for (uint32_t d = 0; d < yr; d++) shape[d] = nn_dim(y, d);
  rs[0] = pooled;
  rs[1] = nn_const_i32_vector(c, shape, yr ? yr : 1);
  return nn_operation_to(c, ANEURALNETWORKS_RESHAPE, rs, 2, oi);
}

/* L2_NORMALIZATION (float, over the last axis; NNAPI 27 takes rank 4 only, so
 * other ranks are RESHAPEd to [1, 1, rows, depth] and back). NNAPI's formula is
 * x / sqrt(sum(x^2)); TFLite divides by max(that root, 1e-6): the two agree
 * unless a vector's norm is below 1e-6 (documented in docs/nnapi.md). */
static bool map_l2_normalization(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (in.code != ANEURALNETWORKS_TENSOR_FLOAT32 || out.code != in.code)
    DECLINE("quantized L2_NORMALIZATION (NNAPI's integer rounding is not pinned to TFLite's)");
  int32_t fuse;
  if (!nn_fuse_code(c, &fuse)) return false;
  if (fuse != ANEURALNETWORKS_FUSED_NONE) DECLINE("%s with a fused activation", c->op);
  const wick_tensor *x = nn_tensor(c, ii);
  size_t r = nn_rank(x);
  NOTE(
      "NNAPI's x / sqrt(sum x^2) has no floor where TFLite divides by max(norm, 1e-6): "
      "equal unless a vector's norm is below 1e-6");
  if (c->b == NULL) return true;
  if (r == 4) {
    int32_t i = nn_graph_operand(c, ii);
    return nn_operation_to(c, ANEURALNETWORKS_L2_NORMALIZATION, &i, 1, oi);
  }
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < r; d++) rows *= nn_dim(x, d);
  int32_t depth = nn_dim(x, r - 1);
  if (rows > INT32_MAX) DECLINE("%s of a tensor too large for NNAPI's dimensions", c->op);
  int32_t view[4] = {1, 1, (int32_t)rows, depth};
  uint32_t view_dims[4] = {1, 1, (uint32_t)rows, (uint32_t)depth};
  int32_t rs[2];
  rs[0] = nn_graph_operand(c, ii);
  rs[1] = nn_const_i32_vector(c, view, 4);
  int32_t viewed = nn_temp_operand(c, in, view_dims, 4);
  if (!nn_operation(c, ANEURALNETWORKS_RESHAPE, rs, 2, &viewed, 1)) return false;
  int32_t normed = nn_temp_operand(c, in, view_dims, 4);
  if (!nn_operation(c, ANEURALNETWORKS_L2_NORMALIZATION, &viewed, 1, &normed, 1)) return false;
  int32_t shape[4];
  for (size_t d = 0; d < r; d++) shape[d] = nn_dim(x, d);
  rs[0] = normed;
  rs[1] = nn_const_i32_vector(c, shape, (uint32_t)r);
  return nn_operation_to(c, ANEURALNETWORKS_RESHAPE, rs, 2, oi);
}

static bool map_mean(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (in.code != out.code) DECLINE("%s input and output types differ", c->op);
  size_t n;
  const int32_t *axes = const_ints(c, 1, &n);
  if (axes == NULL) return false;
  const wick_tensor *x = nn_tensor(c, ii);
  int r = (int)nn_rank(x);
  bool reduced[4] = {false, false, false, false};
  int32_t norm[4];
  size_t count = 0;
  for (size_t k = 0; k < n; k++) {
    int a = axes[k] < 0 ? axes[k] + r : axes[k];
    if (a < 0 || a >= r) DECLINE("%s axis %d out of range", c->op, (int)axes[k]);
    if (!reduced[a]) norm[count++] = a;
    reduced[a] = true;
  }
  if (count == 0) DECLINE("%s over no axes", c->op);
  int keep = nn_option_int(c, WICK_OPTION_KEEP_DIMS, 0) != 0;
  bool plane = r == 4 && count == 2 && reduced[1] && reduced[2];
  if (nn_is_quant8(in.code)) {
    /* NNAPI's quantized MEAN keeps the input's scale and zero point */
    if (!nn_same_quant(&in, &out))
      DECLINE("quantized MEAN whose output is quantized unlike its input (NNAPI: the same)");
  }
  /* below 28: float means as AVERAGE_POOL_2D — over the plane of NHWC, or over
   * a run of adjacent axes of a reshaped view */
  int lo = r, hi = -1;
  for (int a = 0; a < r; a++)
    if (reduced[a]) {
      lo = a < lo ? a : lo;
      hi = a;
    }
  bool adjacent = hi - lo + 1 == (int)count;
  bool pool = c->level < 28;
  if (pool) {
    if ((!plane && !adjacent) || in.code != ANEURALNETWORKS_TENSOR_FLOAT32)
      NEED_LEVEL(28, "MEAN (other than a float mean over adjacent axes)");
    NOTE(
        "composed: AVERAGE_POOL_2D over the reduced axes (NNAPI's MEAN is level 28); the "
        "same mean, its sum in the pool's order");
  }
  if (c->b == NULL) return true;
  if (pool && !plane) return mean_as_pool(c, ii, oi, in, lo, hi);
  int32_t o = nn_graph_operand(c, oi);
  if (!pool) {
    int32_t ops[3];
    ops[0] = nn_graph_operand(c, ii);
    ops[1] = nn_const_i32_vector(c, norm, (uint32_t)count);
    ops[2] = nn_scalar_i32(c, keep);
    return nn_operation(c, ANEURALNETWORKS_MEAN, ops, 3, &o, 1);
  }
  /* level 27: AVERAGE_POOL_2D over the whole plane, then RESHAPE unless keep_dims */
  int h = nn_dim(x, 1), w = nn_dim(x, 2);
  int32_t pooled = o;
  if (!keep) {
    uint32_t pd[4] = {(uint32_t)nn_dim(x, 0), 1, 1, (uint32_t)nn_dim(x, 3)};
    pooled = nn_temp_operand(c, in, pd, 4);
  }
  int32_t ops[10];
  size_t n_ops = 0;
  ops[n_ops++] = nn_graph_operand(c, ii);
  for (int k = 0; k < 4; k++) ops[n_ops++] = nn_scalar_i32(c, 0); /* no padding */
  ops[n_ops++] = nn_scalar_i32(c, 1);                             /* strides */
  ops[n_ops++] = nn_scalar_i32(c, 1);
  ops[n_ops++] = nn_scalar_i32(c, w); /* the filter: the whole plane */
  ops[n_ops++] = nn_scalar_i32(c, h);
  ops[n_ops++] = nn_scalar_i32(c, ANEURALNETWORKS_FUSED_NONE);
  if (!nn_operation(c, ANEURALNETWORKS_AVERAGE_POOL_2D, ops, n_ops, &pooled, 1)) return false;
  if (keep) return true;
  const wick_tensor *y = nn_tensor(c, oi);
  int32_t shape[4];
  uint32_t yr = (uint32_t)nn_rank(y);
  for (uint32_t d = 0; d < yr; d++) shape[d] = nn_dim(y, d);
  int32_t rs[2] = {pooled, nn_const_i32_vector(c, shape, yr)};
  return nn_operation(c, ANEURALNETWORKS_RESHAPE, rs, 2, &o, 1);
}

static bool map_pad(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  NEED_LEVEL(28, "PAD");
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  if (nn_is_quant8(in.code)) NEED_LEVEL(29, "quantized PAD (its pad value is undefined before 29)");
  if (wick_delegate_graph_node_input_count(c->g, c->node) > 2 && nn_in_index(c, 2) >= 0)
    DECLINE("%s with a constant value (PADV2)", c->op);
  size_t n;
  const int32_t *pads = const_ints(c, 1, &n);
  if (pads == NULL) return false;
  size_t r = nn_rank(nn_tensor(c, ii));
  if (n != 2 * r) DECLINE("%s paddings are not [rank, 2]", c->op);
  for (size_t k = 0; k < n; k++)
    if (pads[k] < 0) DECLINE("%s with negative padding", c->op);
  if (c->b == NULL) return true;
  uint32_t pd[2] = {(uint32_t)r, 2};
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_const_tensor(c, (nn_type){ANEURALNETWORKS_TENSOR_INT32, 0, 0}, pd, 2, pads,
                           n * sizeof(int32_t));
  return nn_operation_to(c, ANEURALNETWORKS_PAD, ops, 2, oi);
}

static bool map_transpose(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  size_t n;
  const int32_t *perm = const_ints(c, 1, &n);
  if (perm == NULL) return false;
  if (n != nn_rank(nn_tensor(c, ii))) DECLINE("%s permutation of the wrong length", c->op);
  bool seen[4] = {false, false, false, false};
  for (size_t d = 0; d < n; d++) {
    if (perm[d] < 0 || perm[d] >= (int32_t)n || seen[perm[d]])
      DECLINE("%s with a permutation that is not one", c->op);
    seen[perm[d]] = true;
  }
  uint32_t dims[4];
  uint32_t r = nn_dims_of(c, ii, dims);
  if (!nn_transpose_ok(c, in, dims, r, perm, "TRANSPOSE (of this many rows, below 28)"))
    return false;
  if (c->level < 28)
    NOTE(
        "TRANSPOSE as EMBEDDING_LOOKUP of the permuted rows (NNAPI's TRANSPOSE is level 28): "
        "a copy, exact");
  if (c->b == NULL) return true;
  int32_t i = nn_graph_operand(c, ii), o = nn_graph_operand(c, oi);
  if (i < 0 || o < 0) return false;
  return nn_transpose_into(c, i, in, dims, r, perm, o);
}

/* SLICE (29): begin from the file, the size as the prepared output's shape
 * (TFLite's -1 "to the end" resolved). */
static bool map_slice(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  NEED_LEVEL(29, "SLICE");
  size_t n;
  const int32_t *begin = const_ints(c, 1, &n);
  if (begin == NULL) return false;
  const wick_tensor *x = nn_tensor(c, ii), *y = nn_tensor(c, oi);
  if (n != nn_rank(x) || nn_rank(y) != n) DECLINE("%s begin of the wrong length", c->op);
  int32_t size[4];
  for (size_t d = 0; d < n; d++) {
    size[d] = nn_dim(y, d);
    if (begin[d] < 0 || begin[d] + size[d] > nn_dim(x, d)) DECLINE("%s outside its input", c->op);
  }
  if (c->b == NULL) return true;
  int32_t ops[3];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_const_i32_vector(c, begin, (uint32_t)n);
  ops[2] = nn_const_i32_vector(c, size, (uint32_t)n);
  return nn_operation_to(c, ANEURALNETWORKS_SLICE, ops, 3, oi);
}

/* STRIDED_SLICE (28; below it an EMBEDDING_LOOKUP of the selected rows). TFLite's spec (constant
 * begin, end, strides; begin, end and shrink masks) is resolved here as LiteRT resolves it — per
 * axis the first element, the stride and the count (negative indices from the end, clamping, the
 * masks) — and handed to NNAPI in a form with nothing left to interpret: begin the first element,
 * end just past the last one (for a negative stride that reaches element 0: the end mask bit), no
 * begin mask, a shrunk axis as [begin, begin + 1) with stride 1. TFLite's ellipsis and new-axis
 * masks and its offset form have no NNAPI counterpart: declined. */
static bool map_strided_slice(map_ctx *c) {
  int32_t ii, oi;
  nn_type in, out;
  c->allow_scalar = true; /* every axis shrunk: TFLite's scalar is NNAPI's [1] */
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  const wick_tensor *x = nn_tensor(c, ii), *y = nn_tensor(c, oi);
  size_t r = nn_rank(x);
  if (r < 1) DECLINE("%s of a scalar", c->op);
  size_t nb, ne, ns;
  const int32_t *begin = const_ints(c, 1, &nb);
  if (begin == NULL) return false;
  const int32_t *end = const_ints(c, 2, &ne);
  if (end == NULL) return false;
  const int32_t *strides = const_ints(c, 3, &ns);
  if (strides == NULL) return false;
  uint32_t low = nb >= 31 ? 0x7fffffffu : (1u << nb) - 1; /* mask bits past the spec: ignored */
  if (nn_option_int(c, WICK_OPTION_ELLIPSIS_MASK, 0) & (int)low)
    DECLINE("%s with an ellipsis_mask (NNAPI's STRIDED_SLICE has none)", c->op);
  if (nn_option_int(c, WICK_OPTION_NEW_AXIS_MASK, 0) & (int)low)
    DECLINE("%s with a new_axis_mask (NNAPI's STRIDED_SLICE has none)", c->op);
  if (nb != ne || nb != ns || nb < 1 || nb > r)
    DECLINE("%s with %zu begin, %zu end and %zu strides for rank %zu", c->op, nb, ne, ns, r);
  int begin_mask = nn_option_int(c, WICK_OPTION_BEGIN_MASK, 0);
  int end_mask = nn_option_int(c, WICK_OPTION_END_MASK, 0);
  int shrink_mask = nn_option_int(c, WICK_OPTION_SHRINK_AXIS_MASK, 0) & (int)low;
  if (nn_option_int(c, WICK_OPTION_OFFSET, 0))
    DECLINE("%s in its offset form (end counted from begin: NNAPI's has none)", c->op);
  int32_t nb_[4], ne_[4], ns_[4];
  int64_t step_[4], count_[4];
  int32_t nn_end_mask = 0;
  size_t out_axis = 0;
  for (size_t k = 0; k < r; k++) {
    int64_t size = nn_dim(x, k), s = k < nb ? strides[k] : 1, start, count;
    bool shrink = (shrink_mask >> k) & 1;
    if (s == 0) DECLINE("%s with stride 0", c->op);
    if (k >= nb) { /* past the spec: the whole axis */
      start = 0;
      count = size;
    } else if (shrink) {
      if (s < 0)
        DECLINE("%s shrinks an axis with a negative stride (LiteRT writes nothing)", c->op);
      start = begin[k] < 0 ? (int64_t)begin[k] + size : begin[k];
      if ((begin_mask >> k) & 1) start = s > 0 ? 0 : size - 1;
      if (start < 0 || start >= size) DECLINE("%s shrinks an axis at an index outside it", c->op);
      count = 1;
    } else {
      start = begin[k] < 0 ? (int64_t)begin[k] + size : begin[k];
      start = s > 0 ? (start < 0      ? 0
                       : start > size ? size
                                      : start)
                    : (start < -1         ? -1
                       : start > size - 1 ? size - 1
                                          : start);
      if ((begin_mask >> k) & 1) start = s > 0 ? 0 : size - 1;
      int64_t stop = end[k] < 0 ? (int64_t)end[k] + size : end[k];
      stop = s > 0 ? (stop < 0      ? 0
                      : stop > size ? size
                                    : stop)
                   : (stop < -1         ? -1
                      : stop > size - 1 ? size - 1
                                        : stop);
      if ((end_mask >> k) & 1) stop = s > 0 ? size : -1;
      int64_t span = s > 0 ? stop - start : start - stop, m = s > 0 ? s : -s;
      count = span > 0 ? (span + m - 1) / m : 0;
      if (count == 0) DECLINE("%s selects nothing (NNAPI: no empty tensors)", c->op);
    }
    int64_t last = start + (count - 1) * s;
    step_[k] = s;
    count_[k] = count;
    nb_[k] = (int32_t)start;
    ns_[k] = shrink ? 1 : (int32_t)s;
    if (shrink || s > 0) {
      ne_[k] = (int32_t)(last + 1);
    } else if (last == 0) {
      ne_[k] = 0;
      nn_end_mask |= 1 << k;
    } else {
      ne_[k] = (int32_t)(last - 1);
    }
    if (!shrink) {
      if (out_axis >= nn_rank(y) || nn_dim(y, out_axis) != count)
        DECLINE("%s: the prepared output shape is not the slice's", c->op);
      out_axis++;
    }
  }
  if (out_axis != nn_rank(y)) DECLINE("%s: the prepared output shape is not the slice's", c->op);
  /* below 28: the input viewed as [rows, inner] (inner: the trailing axes taken whole), an
   * EMBEDDING_LOOKUP (27) of the selected rows in order, a RESHAPE to the output — a copy */
  bool lookup = c->level < 28;
  size_t t = r;
  while (t > 0 && nb_[t - 1] == 0 && step_[t - 1] == 1 && count_[t - 1] == nn_dim(x, t - 1)) t--;
  uint64_t rows_in = 1, rows_out = 1, inner = 1;
  for (size_t k = 0; k < r; k++) {
    if (k < t) {
      rows_in *= (uint64_t)nn_dim(x, k);
      rows_out *= (uint64_t)count_[k];
    } else {
      inner *= (uint64_t)nn_dim(x, k);
    }
  }
  if (lookup) {
    if (rows_out > NN_LOOKUP_MAX_ROWS || rows_in > INT32_MAX || inner > INT32_MAX)
      NEED_LEVEL(28, "STRIDED_SLICE (of this many rows, below 28)");
    NOTE(
        "STRIDED_SLICE as EMBEDDING_LOOKUP of the selected rows (NNAPI's STRIDED_SLICE is "
        "level 28): a copy, exact");
  }
  if (c->b == NULL) return true;
  if (lookup) {
    int32_t *index = malloc((size_t)rows_out * sizeof *index);
    if (index == NULL) DECLINE("out of memory building %s", c->op);
    uint64_t in_stride[4] = {0, 0, 0, 0}, stride = 1;
    for (size_t k = t; k-- > 0;) {
      in_stride[k] = stride;
      stride *= (uint64_t)nn_dim(x, k);
    }
    for (uint64_t o = 0; o < rows_out; o++) {
      uint64_t rest = o;
      int64_t row = 0;
      for (size_t k = t; k-- > 0;) { /* the output's index j over count_[k], last axis fastest */
        int64_t j = (int64_t)(rest % (uint64_t)count_[k]);
        rest /= (uint64_t)count_[k];
        row += (nb_[k] + j * step_[k]) * (int64_t)in_stride[k];
      }
      index[o] = (int32_t)row;
    }
    const uint32_t view[2] = {(uint32_t)rows_in, (uint32_t)inner};
    const uint32_t picked_dims[2] = {(uint32_t)rows_out, (uint32_t)inner};
    int32_t ops[2];
    ops[0] = nn_const_i32_vector(c, index, (uint32_t)rows_out);
    free(index);
    ops[1] = nn_reshaped(c, nn_graph_operand(c, ii), in, view, 2);
    int32_t picked = nn_temp_operand(c, in, picked_dims, 2);
    if (!nn_operation(c, ANEURALNETWORKS_EMBEDDING_LOOKUP, ops, 2, &picked, 1)) return false;
    uint32_t yd[4];
    uint32_t yr = nn_dims_of(c, oi, yd);
    int32_t shape[4];
    for (uint32_t d = 0; d < yr; d++) shape[d] = (int32_t)yd[d];
    ops[0] = picked;
    ops[1] = nn_const_i32_vector(c, shape, yr);
    return nn_operation_to(c, ANEURALNETWORKS_RESHAPE, ops, 2, oi);
  }
  int32_t ops[7];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_const_i32_vector(c, nb_, (uint32_t)r);
  ops[2] = nn_const_i32_vector(c, ne_, (uint32_t)r);
  ops[3] = nn_const_i32_vector(c, ns_, (uint32_t)r);
  ops[4] = nn_scalar_i32(c, 0);
  ops[5] = nn_scalar_i32(c, nn_end_mask);
  ops[6] = nn_scalar_i32(c, shrink_mask);
  return nn_operation_to(c, ANEURALNETWORKS_STRIDED_SLICE, ops, 7, oi);
}

/* SPACE_TO_DEPTH, DEPTH_TO_SPACE (27): NHWC, the same block order as TFLite's. */
static bool map_space_depth(map_ctx *c, int32_t code) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (nn_rank(nn_tensor(c, ii)) != 4)
    DECLINE("%s on rank %zu (NNAPI: 4)", c->op, nn_rank(nn_tensor(c, ii)));
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  int block = nn_option_int(c, WICK_OPTION_BLOCK_SIZE, 0);
  if (block < 1) DECLINE("%s block size %d", c->op, block);
  if (c->b == NULL) return true;
  int32_t ops[2];
  ops[0] = nn_graph_operand(c, ii);
  ops[1] = nn_scalar_i32(c, block);
  return nn_operation_to(c, code, ops, 2, oi);
}

static bool map_resize(map_ctx *c, bool nearest) {
  int32_t ii, oi;
  nn_type in, out;
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  const wick_tensor *x = nn_tensor(c, ii), *y = nn_tensor(c, oi);
  if (nn_rank(x) != 4 || nn_rank(y) != 4) DECLINE("%s on rank %zu (NNAPI: 4)", c->op, nn_rank(x));
  if (!nn_same_quant(&in, &out)) DECLINE("%s output quantized unlike its input", c->op);
  if (nearest) NEED_LEVEL(29, "RESIZE_NEAREST_NEIGHBOR");
  if (!nearest && nn_is_quant8(in.code))
    DECLINE("quantized RESIZE_BILINEAR (NNAPI's integer rounding is not pinned to TFLite's)");
  int align = nn_option_int(c, WICK_OPTION_ALIGN_CORNERS, 0);
  int half = nn_option_int(c, WICK_OPTION_HALF_PIXEL_CENTERS, 0);
  if (align || half) NEED_LEVEL(30, "align_corners or half_pixel_centers");
  if (c->b == NULL) return true;
  int32_t ops[6];
  size_t n = 0;
  ops[n++] = nn_graph_operand(c, ii);
  ops[n++] = nn_scalar_i32(c, nn_dim(y, 2));
  ops[n++] = nn_scalar_i32(c, nn_dim(y, 1));
  if (nearest || align || half) ops[n++] = nn_scalar_bool(c, false); /* NHWC */
  if (align || half) {
    ops[n++] = nn_scalar_bool(c, align != 0);
    ops[n++] = nn_scalar_bool(c, half != 0);
  }
  return nn_operation_to(c,
                         nearest ? ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR
                                 : ANEURALNETWORKS_RESIZE_BILINEAR,
                         ops, n, oi);
}

/* DEQUANTIZE or CAST of a run-time float16 tensor to float32 (29): NNAPI's CAST from
 * TENSOR_FLOAT16 to TENSOR_FLOAT32, exact (every half value is a float; NaN stays NaN). A
 * constant float16 tensor's DEQUANTIZE (fp16 weights) is computed at prepare, never offered. */
static bool map_float16_to_float32(map_ctx *c) {
  int32_t ii = nn_in_index(c, 0), oi = nn_out_index(c, 0);
  const wick_tensor *x = nn_tensor(c, ii);
  nn_type out;
  if (!nn_value_type(c, oi, "output", false, &out)) return false;
  if (out.code != ANEURALNETWORKS_TENSOR_FLOAT32)
    DECLINE("%s from float16 to %s (NNAPI here: float16 to float32)", c->op,
            wick_dtype_name(wick_tensor_dtype(nn_tensor(c, oi))));
  if (x == NULL || nn_rank(x) != nn_rank(nn_tensor(c, oi))) DECLINE("%s changes the shape", c->op);
  for (size_t d = 0; d < nn_rank(x); d++)
    if (nn_dim(x, d) != nn_dim(nn_tensor(c, oi), d)) DECLINE("%s changes the shape", c->op);
  NEED_LEVEL(29, "a float16 tensor (NNAPI's TENSOR_FLOAT16)");
  if (c->b == NULL) return true;
  int32_t i = nn_graph_operand(c, ii);
  return nn_operation_to(c, ANEURALNETWORKS_CAST, &i, 1, oi);
}

static bool map_quantize(map_ctx *c, bool quantize) {
  int32_t ii, oi;
  nn_type in, out;
  const wick_tensor *first = nn_tensor(c, nn_in_index(c, 0));
  if (!quantize && first != NULL && wick_tensor_dtype(first) == WICK_DTYPE_FLOAT16 &&
      wick_tensor_quantization_count(first) == 0)
    return map_float16_to_float32(c);
  if (!nn_in_out_types(c, false, &ii, &oi, &in, &out)) return false;
  if (quantize) {
    NEED_LEVEL(29, "QUANTIZE");
    if (in.code != ANEURALNETWORKS_TENSOR_FLOAT32 || !nn_is_quant8(out.code))
      DECLINE("QUANTIZE between integer types (NNAPI: float to 8-bit only)");
  } else if (!nn_is_quant8(in.code) || out.code != ANEURALNETWORKS_TENSOR_FLOAT32) {
    DECLINE("DEQUANTIZE from %s (NNAPI here: 8-bit to float32)",
            in.code == ANEURALNETWORKS_TENSOR_FLOAT32 ? "float" : "this type");
  }
  if (c->b == NULL) return true;
  int32_t i = nn_graph_operand(c, ii);
  return nn_operation_to(c, quantize ? ANEURALNETWORKS_QUANTIZE : ANEURALNETWORKS_DEQUANTIZE, &i, 1,
                         oi);
}

bool wick_nnapi_map_node(const nnapi_library *lib, const wick_delegate_graph *graph, size_t node,
                         nnapi_builder *b, char *why, size_t why_size) {
  map_ctx ctx = {lib,   graph,    node,       b,
                 why,   why_size, lib->level, wick_delegate_graph_node_name(graph, node),
                 false, false};
  map_ctx *c = &ctx;
  if (c->op == NULL) c->op = "?";
  int32_t builtin = wick_delegate_graph_node_builtin(graph, node);
  if (builtin == TFL_IF || builtin == TFL_WHILE)
    return nn_map_control_flow(c, builtin == TFL_WHILE);
  if (builtin == TFL_CUSTOM && strcmp(c->op, "TFLite_Detection_PostProcess") == 0)
    return nn_map_detection_postprocess(c);
  if (wick_delegate_graph_node_output_count(graph, node) != 1)
    DECLINE("%s with %zu outputs", c->op, wick_delegate_graph_node_output_count(graph, node));
  switch (builtin) {
    case TFL_CONV_2D: return map_conv(c, false);
    case TFL_DEPTHWISE_CONV_2D: return map_conv(c, true);
    case TFL_FULLY_CONNECTED: return map_fully_connected(c);
    case TFL_ADD: return map_binary(c, ANEURALNETWORKS_ADD);
    case TFL_MUL: return map_binary(c, ANEURALNETWORKS_MUL);
    case TFL_SUB: return map_binary(c, ANEURALNETWORKS_SUB);
    case TFL_DIV: return map_binary(c, ANEURALNETWORKS_DIV);
    case TFL_L2_NORMALIZATION: return map_l2_normalization(c);
    case TFL_RELU: return map_unary(c, ANEURALNETWORKS_RELU);
    case TFL_RELU_N1_TO_1: return map_unary(c, ANEURALNETWORKS_RELU1);
    case TFL_RELU6: return map_unary(c, ANEURALNETWORKS_RELU6);
    case TFL_LOGISTIC: return map_unary(c, ANEURALNETWORKS_LOGISTIC);
    case TFL_TANH: return map_unary(c, ANEURALNETWORKS_TANH);
    case TFL_HARD_SWISH: return map_unary(c, ANEURALNETWORKS_HARD_SWISH);
    case TFL_AVERAGE_POOL_2D: return map_pool(c, ANEURALNETWORKS_AVERAGE_POOL_2D);
    case TFL_MAX_POOL_2D: return map_pool(c, ANEURALNETWORKS_MAX_POOL_2D);
    case TFL_RESHAPE:
    case TFL_SQUEEZE:
    case TFL_EXPAND_DIMS: return map_reshape(c);
    case TFL_SOFTMAX: return map_softmax(c);
    case TFL_CONCATENATION: return map_concatenation(c);
    case TFL_MEAN: return map_mean(c);
    case TFL_PAD: return map_pad(c);
    case TFL_RESIZE_BILINEAR: return map_resize(c, false);
    case TFL_RESIZE_NEAREST_NEIGHBOR: return map_resize(c, true);
    case TFL_ABS: return map_float_unary(c, ANEURALNETWORKS_ABS);
    case TFL_EXP: return map_float_unary(c, ANEURALNETWORKS_EXP);
    case TFL_LOG: return map_float_unary(c, ANEURALNETWORKS_LOG);
    case TFL_NEG: return map_float_unary(c, ANEURALNETWORKS_NEG);
    case TFL_RSQRT: return map_float_unary(c, ANEURALNETWORKS_RSQRT);
    case TFL_SIN: return map_float_unary(c, ANEURALNETWORKS_SIN);
    case TFL_SQRT: return map_float_unary(c, ANEURALNETWORKS_SQRT);
    case TFL_MAXIMUM: return map_minmax(c, ANEURALNETWORKS_MAXIMUM);
    case TFL_MINIMUM: return map_minmax(c, ANEURALNETWORKS_MINIMUM);
    case TFL_PRELU: return map_prelu(c);
    case TFL_SQUARED_DIFFERENCE: return map_squared_difference(c);
    case TFL_TRANSPOSE: return map_transpose(c);
    case TFL_SLICE: return map_slice(c);
    case TFL_STRIDED_SLICE: return map_strided_slice(c);
    case TFL_SPACE_TO_DEPTH: return map_space_depth(c, ANEURALNETWORKS_SPACE_TO_DEPTH);
    case TFL_DEPTH_TO_SPACE: return map_space_depth(c, ANEURALNETWORKS_DEPTH_TO_SPACE);
    case TFL_QUANTIZE: return map_quantize(c, true);
    case TFL_DEQUANTIZE: return map_quantize(c, false);
    case TFL_CAST: {
      const wick_tensor *x = nn_tensor(c, nn_in_index(c, 0));
      if (x != NULL && wick_tensor_dtype(x) == WICK_DTYPE_FLOAT16) return map_float16_to_float32(c);
      const wick_tensor *y = nn_tensor(c, nn_out_index(c, 0));
      wick_dtype from = x ? wick_tensor_dtype(x) : WICK_DTYPE_FLOAT32,
                 to = y ? wick_tensor_dtype(y) : WICK_DTYPE_FLOAT32;
      if (wick_dtype_size(from) == 8 || wick_dtype_size(to) == 8)
        DECLINE("%s from %s to %s (NNAPI has no 64-bit types)", c->op, wick_dtype_name(from),
                wick_dtype_name(to));
      DECLINE(
          "%s from %s to %s (NNAPI here: float16 to float32; its CAST does not state how it "
          "rounds or saturates)",
          c->op, wick_dtype_name(from), wick_dtype_name(to));
    }
    case TFL_BATCH_MATMUL: return nn_map_batch_matmul(c);
    case TFL_GELU: return nn_map_gelu(c);
    case TFL_EQUAL: return nn_map_comparison(c, ANEURALNETWORKS_EQUAL);
    case TFL_NOT_EQUAL: return nn_map_comparison(c, ANEURALNETWORKS_NOT_EQUAL);
    case TFL_LESS: return nn_map_comparison(c, ANEURALNETWORKS_LESS);
    case TFL_LESS_EQUAL: return nn_map_comparison(c, ANEURALNETWORKS_LESS_EQUAL);
    case TFL_GREATER: return nn_map_comparison(c, ANEURALNETWORKS_GREATER);
    case TFL_GREATER_EQUAL: return nn_map_comparison(c, ANEURALNETWORKS_GREATER_EQUAL);
    case TFL_LOGICAL_AND: return nn_map_logical(c, ANEURALNETWORKS_LOGICAL_AND);
    case TFL_LOGICAL_OR: return nn_map_logical(c, ANEURALNETWORKS_LOGICAL_OR);
    case TFL_LOGICAL_NOT: return nn_map_logical(c, ANEURALNETWORKS_LOGICAL_NOT);
    case TFL_REDUCE_ANY: return nn_map_reduce(c, ANEURALNETWORKS_REDUCE_ANY);
    case TFL_REDUCE_ALL: return nn_map_reduce(c, ANEURALNETWORKS_REDUCE_ALL);
    case TFL_SUM: return nn_map_reduce(c, ANEURALNETWORKS_REDUCE_SUM);
    case TFL_SELECT: return nn_map_select(c, false);
    case TFL_SELECT_V2: return nn_map_select(c, true);
    case TFL_BROADCAST_TO: return nn_map_broadcast_to(c);
    default: DECLINE("%s has no NNAPI mapping in wick yet", c->op);
  }
}
