/*
 * options.c — decodes an operator's builtin options table into wick_op_params.
 *
 * Decoding is keyed by the union type the file declares, not by the operator:
 * a file that pairs an operator with the wrong options table gets that
 * table's fields, and the op's prepare then rejects whatever makes no sense
 * (a zero stride, an unknown padding). Unknown option types are ignored, as
 * FlatBuffers readers must. Every read is bounds-checked; a malformed table
 * makes the load fail with the option's name.
 */
#include <string.h>

#include "format/model.h"
#include "format/flatbuffer.h"
#include "format/schema.h"

WICK_INTERNAL int wick_format_read_options(const wick_fb_table *op_table, int32_t builtin,
                                           wick_op_params *params, char *what, size_t what_size);
WICK_INTERNAL void wick_params_defaults(wick_op_params *params);

void wick_params_defaults(wick_op_params *p) {
  memset(p, 0, sizeof *p);
  p->conv.dilation_w = 1;
  p->conv.dilation_h = 1;
  p->conv.dilation_d = 1;
  p->pot_scale_int16 = true;
  p->out_type = WICK_DTYPE_INT32;
  p->subgraph[0] = -1;
  p->subgraph[1] = -1;
  p->var.container = "";
  p->var.shared_name = "";
}

/* Small readers that record which field failed. */
typedef struct opt_reader {
  const wick_fb_table *t;
  bool ok;
  const char *bad;
} opt_reader;

static int32_t get_i32(opt_reader *o, int id, int32_t dflt, const char *name) {
  int32_t v = dflt;
  if (!wick_fb_i32(o->t, id, dflt, &v) && o->ok) {
    o->ok = false;
    o->bad = name;
  }
  return v;
}

static int32_t get_i8(opt_reader *o, int id, int8_t dflt, const char *name) {
  int8_t v = dflt;
  if (!wick_fb_i8(o->t, id, dflt, &v) && o->ok) {
    o->ok = false;
    o->bad = name;
  }
  return v;
}

static bool get_bool(opt_reader *o, int id, bool dflt, const char *name) {
  uint8_t v = dflt;
  if (!wick_fb_u8(o->t, id, dflt, &v) && o->ok) {
    o->ok = false;
    o->bad = name;
  }
  return v != 0;
}

static float get_f32(opt_reader *o, int id, float dflt, const char *name) {
  float v = dflt;
  if (!wick_fb_f32(o->t, id, dflt, &v) && o->ok) {
    o->ok = false;
    o->bad = name;
  }
  return v;
}

/* A string option: "" when absent (the schema's default); *len_out its byte
 * length (it may hold NUL bytes). */
static const char *get_string(opt_reader *o, int id, size_t *len_out, const char *name) {
  const char *v = NULL;
  size_t len = 0;
  int rc = wick_fb_string_field(o->t, id, &v, &len);
  if (rc < 0 && o->ok) {
    o->ok = false;
    o->bad = name;
  }
  if (rc <= 0) {
    v = "";
    len = 0;
  }
  *len_out = len;
  return v;
}

static void get_int_list(opt_reader *o, int id, wick_int_list *out, const char *name) {
  wick_fb_vector v;
  int rc = wick_fb_vector_field(o->t, id, 4, &v);
  if (rc < 0 || (rc > 0 && v.len > WICK_MAX_RANK)) {
    if (o->ok) {
      o->ok = false;
      o->bad = name;
    }
    return;
  }
  out->present = rc > 0;
  out->count = rc > 0 ? (int32_t)v.len : 0;
  for (int32_t i = 0; i < out->count; i++) out->values[i] = wick_fb_vec_i32(&v, (uint32_t)i);
}

static void read_conv(opt_reader *o, wick_conv_params *c) {
  c->padding = (wick_padding)get_i8(o, CONV_PADDING, 0, "padding");
  c->stride_w = get_i32(o, CONV_STRIDE_W, 0, "stride_w");
  c->stride_h = get_i32(o, CONV_STRIDE_H, 0, "stride_h");
  c->activation = (wick_activation)get_i8(o, CONV_ACTIVATION, 0, "fused_activation_function");
  c->dilation_w = get_i32(o, CONV_DILATION_W, 1, "dilation_w_factor");
  c->dilation_h = get_i32(o, CONV_DILATION_H, 1, "dilation_h_factor");
}

static void read_options1(opt_reader *o, uint8_t type, wick_op_params *p) {
  switch (type) {
    case OPT_CONV_2D: read_conv(o, &p->conv); break;
    case OPT_DEPTHWISE_CONV_2D:
      p->conv.padding = (wick_padding)get_i8(o, DWCONV_PADDING, 0, "padding");
      p->conv.stride_w = get_i32(o, DWCONV_STRIDE_W, 0, "stride_w");
      p->conv.stride_h = get_i32(o, DWCONV_STRIDE_H, 0, "stride_h");
      p->conv.depth_multiplier = get_i32(o, DWCONV_DEPTH_MULTIPLIER, 0, "depth_multiplier");
      p->conv.activation =
          (wick_activation)get_i8(o, DWCONV_ACTIVATION, 0, "fused_activation_function");
      p->conv.dilation_w = get_i32(o, DWCONV_DILATION_W, 1, "dilation_w_factor");
      p->conv.dilation_h = get_i32(o, DWCONV_DILATION_H, 1, "dilation_h_factor");
      break;
    case OPT_TRANSPOSE_CONV:
      p->conv.padding = (wick_padding)get_i8(o, TCONV_PADDING, 0, "padding");
      p->conv.stride_w = get_i32(o, TCONV_STRIDE_W, 0, "stride_w");
      p->conv.stride_h = get_i32(o, TCONV_STRIDE_H, 0, "stride_h");
      p->conv.activation =
          (wick_activation)get_i8(o, TCONV_ACTIVATION, 0, "fused_activation_function");
      break;
    case OPT_CONV_3D: /* CONV_3D and CONV_3D_TRANSPOSE */
      p->conv.padding = (wick_padding)get_i8(o, CONV3D_PADDING, 0, "padding");
      p->conv.stride_d = get_i32(o, CONV3D_STRIDE_D, 0, "stride_d");
      p->conv.stride_w = get_i32(o, CONV3D_STRIDE_W, 0, "stride_w");
      p->conv.stride_h = get_i32(o, CONV3D_STRIDE_H, 0, "stride_h");
      p->conv.activation =
          (wick_activation)get_i8(o, CONV3D_ACTIVATION, 0, "fused_activation_function");
      p->conv.dilation_d = get_i32(o, CONV3D_DILATION_D, 1, "dilation_d_factor");
      p->conv.dilation_w = get_i32(o, CONV3D_DILATION_W, 1, "dilation_w_factor");
      p->conv.dilation_h = get_i32(o, CONV3D_DILATION_H, 1, "dilation_h_factor");
      break;
    case OPT_POOL_2D:
      p->pool.padding = (wick_padding)get_i8(o, POOL_PADDING, 0, "padding");
      p->pool.stride_w = get_i32(o, POOL_STRIDE_W, 0, "stride_w");
      p->pool.stride_h = get_i32(o, POOL_STRIDE_H, 0, "stride_h");
      p->pool.filter_w = get_i32(o, POOL_FILTER_W, 0, "filter_width");
      p->pool.filter_h = get_i32(o, POOL_FILTER_H, 0, "filter_height");
      p->pool.activation =
          (wick_activation)get_i8(o, POOL_ACTIVATION, 0, "fused_activation_function");
      break;
    case OPT_FULLY_CONNECTED:
      p->fc.activation = (wick_activation)get_i8(o, FC_ACTIVATION, 0, "fused_activation_function");
      p->fc.weights_format = get_i8(o, FC_WEIGHTS_FORMAT, 0, "weights_format");
      p->fc.keep_num_dims = get_bool(o, FC_KEEP_NUM_DIMS, false, "keep_num_dims");
      p->fc.asymmetric_quantize_inputs =
          get_bool(o, FC_ASYMMETRIC_QUANTIZE, false, "asymmetric_quantize_inputs");
      break;
    case OPT_SOFTMAX: p->beta = get_f32(o, 0, 0.0f, "beta"); break;
    case OPT_CONCATENATION:
      p->axis = get_i32(o, 0, 0, "axis");
      p->activation = (wick_activation)get_i8(o, 1, 0, "fused_activation_function");
      break;
    case OPT_ADD:
    case OPT_SUB:
      p->activation = (wick_activation)get_i8(o, 0, 0, "fused_activation_function");
      p->pot_scale_int16 = get_bool(o, 1, true, "pot_scale_int16");
      break;
    case OPT_MUL:
    case OPT_DIV:
    case OPT_L2_NORM:
      p->activation = (wick_activation)get_i8(o, 0, 0, "fused_activation_function");
      break;
    case OPT_RESHAPE:
    case OPT_SQUEEZE:
      get_int_list(o, 0, &p->int_list, type == OPT_RESHAPE ? "new_shape" : "squeeze_dims");
      break;
    case OPT_RESIZE_BILINEAR:
      p->align_corners = get_bool(o, 2, false, "align_corners");
      p->half_pixel_centers = get_bool(o, 3, false, "half_pixel_centers");
      break;
    case OPT_RESIZE_NEAREST_NEIGHBOR:
      p->align_corners = get_bool(o, 0, false, "align_corners");
      p->half_pixel_centers = get_bool(o, 1, false, "half_pixel_centers");
      break;
    case OPT_SPACE_TO_DEPTH:
    case OPT_DEPTH_TO_SPACE: p->block_size = get_i32(o, 0, 0, "block_size"); break;
    case OPT_GATHER:
      p->axis = get_i32(o, 0, 0, "axis");
      p->batch_dims = get_i32(o, 1, 0, "batch_dims");
      break;
    case OPT_REDUCER: p->keep_dims = get_bool(o, 0, false, "keep_dims"); break;
    case OPT_STRIDED_SLICE:
      p->strided_slice.begin_mask = get_i32(o, STRIDED_SLICE_BEGIN_MASK, 0, "begin_mask");
      p->strided_slice.end_mask = get_i32(o, STRIDED_SLICE_END_MASK, 0, "end_mask");
      p->strided_slice.ellipsis_mask = get_i32(o, STRIDED_SLICE_ELLIPSIS_MASK, 0, "ellipsis_mask");
      p->strided_slice.new_axis_mask = get_i32(o, STRIDED_SLICE_NEW_AXIS_MASK, 0, "new_axis_mask");
      p->strided_slice.shrink_axis_mask =
          get_i32(o, STRIDED_SLICE_SHRINK_AXIS_MASK, 0, "shrink_axis_mask");
      p->strided_slice.offset = get_bool(o, STRIDED_SLICE_OFFSET, false, "offset");
      break;
    case OPT_SPLIT:
    case OPT_SPLIT_V: p->count = get_i32(o, 0, 0, "num_splits"); break;
    case OPT_CAST: p->out_type = get_i8(o, 1, 0, "out_data_type"); break;
    case OPT_ARG_MAX:
    case OPT_ARG_MIN:
    case OPT_SHAPE: p->out_type = get_i8(o, 0, WICK_DTYPE_INT32, "output_type"); break;
    case OPT_PACK:
      p->count = get_i32(o, 0, 0, "values_count");
      p->axis = get_i32(o, 1, 0, "axis");
      break;
    case OPT_UNPACK:
      p->count = get_i32(o, 0, 0, "num");
      p->axis = get_i32(o, 1, 0, "axis");
      break;
    case OPT_ONE_HOT: p->axis = get_i32(o, 0, 0, "axis"); break;
    case OPT_LEAKY_RELU: p->alpha = get_f32(o, 0, 0.0f, "alpha"); break;
    case OPT_SVDF:
      p->count = get_i32(o, 0, 0, "rank");
      p->activation = (wick_activation)get_i8(o, 1, 0, "fused_activation_function");
      break;
    case OPT_MIRROR_PAD: p->mode = get_i8(o, 0, 0, "mode"); break;
    case OPT_BATCH_MATMUL:
      p->adj_x = get_bool(o, 0, false, "adj_x");
      p->adj_y = get_bool(o, 1, false, "adj_y");
      p->asymmetric_inputs = get_bool(o, 2, false, "asymmetric_quantize_inputs");
      break;
    case OPT_CUMSUM:
      p->exclusive = get_bool(o, 0, false, "exclusive");
      p->reverse = get_bool(o, 1, false, "reverse");
      break;
    case OPT_GELU: p->approximate = get_bool(o, 0, false, "approximate"); break;
    case OPT_CALL: p->subgraph[0] = get_i32(o, 0, 0, "subgraph"); break;
    case OPT_CALL_ONCE: p->subgraph[0] = get_i32(o, 0, 0, "init_subgraph_index"); break;
    case OPT_VAR_HANDLE:
      p->var.container = get_string(o, VAR_HANDLE_CONTAINER, &p->var.container_len, "container");
      p->var.shared_name =
          get_string(o, VAR_HANDLE_SHARED_NAME, &p->var.shared_name_len, "shared_name");
      break;
    case OPT_IF:
      p->subgraph[0] = get_i32(o, 0, 0, "then_subgraph_index");
      p->subgraph[1] = get_i32(o, 1, 0, "else_subgraph_index");
      break;
    case OPT_WHILE:
      p->subgraph[0] = get_i32(o, 0, 0, "cond_subgraph_index");
      p->subgraph[1] = get_i32(o, 1, 0, "body_subgraph_index");
      break;
    case OPT_UNIDIRECTIONAL_SEQUENCE_LSTM:
      p->lstm.activation =
          (wick_activation)get_i8(o, LSTM_ACTIVATION, 0, "fused_activation_function");
      p->lstm.cell_clip = get_f32(o, LSTM_CELL_CLIP, 0.0f, "cell_clip");
      p->lstm.proj_clip = get_f32(o, LSTM_PROJ_CLIP, 0.0f, "proj_clip");
      p->lstm.time_major = get_bool(o, LSTM_TIME_MAJOR, false, "time_major");
      p->lstm.asymmetric_quantize_inputs =
          get_bool(o, LSTM_ASYMMETRIC_QUANTIZE, false, "asymmetric_quantize_inputs");
      break;
    default: break; /* options wick does not read */
  }
}

int wick_format_read_options(const wick_fb_table *op_table, int32_t builtin, wick_op_params *params,
                             char *what, size_t what_size) {
  (void)builtin;
  uint8_t type = 0, type2 = 0;
  if (!wick_fb_u8(op_table, OPERATOR_BUILTIN_OPTIONS_TYPE, 0, &type) ||
      !wick_fb_u8(op_table, OPERATOR_BUILTIN_OPTIONS_2_TYPE, 0, &type2)) {
    wick_format_message(what, what_size, "malformed options type");
    return 0;
  }
  wick_fb_table t;
  if (type != OPT_NONE) {
    int rc = wick_fb_table_field(op_table, OPERATOR_BUILTIN_OPTIONS, &t);
    if (rc < 0) {
      wick_format_message(what, what_size, "builtin_options: bad table offset");
      return 0;
    }
    if (rc > 0) {
      opt_reader o = {&t, true, NULL};
      read_options1(&o, type, params);
      if (!o.ok) {
        wick_format_message(what, what_size, "field %s is malformed", o.bad);
        return 0;
      }
    }
  }
  if (type2 == OPT2_STABLEHLO_COMPOSITE) {
    int rc = wick_fb_table_field(op_table, OPERATOR_BUILTIN_OPTIONS_2, &t);
    if (rc < 0) {
      wick_format_message(what, what_size, "builtin_options_2: bad table offset");
      return 0;
    }
    if (rc > 0) {
      opt_reader o = {&t, true, NULL};
      params->subgraph[0] =
          get_i32(&o, COMPOSITE_DECOMPOSITION_SUBGRAPH, 0, "decomposition_subgraph_index");
      const char *name = NULL;
      if (wick_fb_string_field(&t, COMPOSITE_NAME, &name, NULL) < 0 && o.ok) {
        o.ok = false;
        o.bad = "name";
      }
      params->name = name;
      if (!o.ok) {
        wick_format_message(what, what_size, "field %s is malformed", o.bad);
        return 0;
      }
    }
  }
  return 1;
}
