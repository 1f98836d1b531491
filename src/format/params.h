/*
 * params.h — decoded operator options, one plain struct per option family.
 *
 * src/format/options.c fills a wick_op_params from an operator's builtin
 * options table at load time (so every option is verified before prepare);
 * the op files in src/ops read them. Nothing here knows field ids.
 */
#ifndef WICK_OPS_PARAMS_H
#define WICK_OPS_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "wick/wick.h"

/* Fused activation functions, numbered as the schema's ActivationFunctionType. */
typedef enum wick_activation {
  WICK_ACT_NONE = 0,
  WICK_ACT_RELU = 1,
  WICK_ACT_RELU_N1_TO_1 = 2,
  WICK_ACT_RELU6 = 3,
  WICK_ACT_TANH = 4,
  WICK_ACT_SIGN_BIT = 5
} wick_activation;

typedef enum wick_padding { WICK_PADDING_SAME = 0, WICK_PADDING_VALID = 1 } wick_padding;

/* CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, CONV_3D, CONV_3D_TRANSPOSE (the _d
 * fields: 3-D only) */
typedef struct wick_conv_params {
  wick_padding padding;
  int32_t stride_w, stride_h, stride_d;
  int32_t dilation_w, dilation_h, dilation_d;
  int32_t depth_multiplier; /* depthwise only; informational */
  wick_activation activation;
} wick_conv_params;

/* AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D */
typedef struct wick_pool_params {
  wick_padding padding;
  int32_t stride_w, stride_h;
  int32_t filter_w, filter_h;
  wick_activation activation;
} wick_pool_params;

typedef struct wick_fully_connected_params {
  wick_activation activation;
  int32_t weights_format; /* 0 = default; others are unsupported */
  bool keep_num_dims;
  bool asymmetric_quantize_inputs;
} wick_fully_connected_params;

typedef struct wick_strided_slice_params {
  int32_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
  bool offset;
} wick_strided_slice_params;

typedef struct wick_lstm_params {
  wick_activation activation;
  float cell_clip, proj_clip;
  bool time_major;
  bool asymmetric_quantize_inputs;
} wick_lstm_params;

/* VAR_HANDLE: the variable's key. Both point into the model ("" when absent)
 * and may hold NUL bytes: compare them by length. */
typedef struct wick_var_handle_params {
  const char *container, *shared_name;
  size_t container_len, shared_name_len;
} wick_var_handle_params;

/* Up to WICK_MAX_RANK integers from a vector option (RESHAPE new_shape,
 * SQUEEZE squeeze_dims). `present` is false when the option was absent. */
typedef struct wick_int_list {
  bool present;
  int32_t count;
  int32_t values[WICK_MAX_RANK];
} wick_int_list;

/* The options of one operator. Which member is valid is decided by the
 * operator's builtin code; members not set keep the defaults of
 * wick_params_defaults(). */
typedef struct wick_op_params {
  wick_activation activation; /* ADD SUB MUL DIV CONCATENATION L2_NORMALIZATION SVDF */
  wick_conv_params conv;
  wick_pool_params pool;
  wick_fully_connected_params fc;
  wick_strided_slice_params strided_slice;
  wick_lstm_params lstm;
  wick_int_list int_list; /* RESHAPE new_shape, SQUEEZE squeeze_dims */
  int32_t axis;           /* CONCATENATION GATHER PACK UNPACK ONE_HOT */
  int32_t count;          /* SPLIT/SPLIT_V num_splits, PACK values_count, UNPACK num, SVDF rank */
  int32_t batch_dims;     /* GATHER */
  int32_t block_size;     /* SPACE_TO_DEPTH DEPTH_TO_SPACE */
  int32_t mode;           /* MIRROR_PAD: 0 REFLECT, 1 SYMMETRIC */
  int32_t out_type;       /* ARG_MAX ARG_MIN SHAPE (a wick_dtype); CAST out type */
  bool keep_dims;         /* MEAN SUM REDUCE_* */
  bool align_corners;     /* RESIZE_* */
  bool half_pixel_centers;
  bool adj_x, adj_y;       /* BATCH_MATMUL */
  bool asymmetric_inputs;  /* BATCH_MATMUL asymmetric_quantize_inputs (hybrid form) */
  bool exclusive, reverse; /* CUMSUM */
  bool approximate;        /* GELU */
  bool pot_scale_int16;    /* ADD SUB */
  float alpha;             /* LEAKY_RELU */
  float beta;              /* SOFTMAX */
  int32_t subgraph[2]; /* CALL / STABLEHLO_COMPOSITE decomposition / IF then,else / WHILE cond,body
                          / CALL_ONCE init; -1 none */
  const char *name;    /* STABLEHLO_COMPOSITE name (points into the model), or NULL */
  wick_var_handle_params var; /* VAR_HANDLE */
} wick_op_params;

#endif /* WICK_OPS_PARAMS_H */
