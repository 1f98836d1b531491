"""TFLite builtin-options tables as plain data: for every options table, its union and union
type number and its fields (name, field id, storage type, default, enum), and which table each
builtin operator carries (``OP_OPTIONS``, a view of ``ops.OPS``). Conventions as described in
``schema.py``, which re-exports these.
"""

from __future__ import annotations

from typing import NamedTuple

from .ops import BY_NAME, OPS


class OptionField(NamedTuple):
    """One field of an options table."""

    name: str
    id: int
    type: str  # storage type, "[T]" for vectors, "string"
    default: object  # None for vectors/strings (absent)
    enum: str | None = None  # name in ENUMS when the field holds an enum value


class OptionsTable(NamedTuple):
    """A builtin-options table: which union it belongs to, its union type number, its fields."""

    union: int  # 1 = builtin_options, 2 = builtin_options_2
    type: int  # union type number (1 + position in the union)
    fields: tuple[OptionField, ...]


_F = OptionField

# Options table name -> OptionsTable.
OPTIONS_TABLES: dict[str, OptionsTable] = {
    "Conv2DOptions": OptionsTable(
        1,
        1,
        (
            _F("padding", 0, "int8", 0, "Padding"),
            _F("stride_w", 1, "int32", 0),
            _F("stride_h", 2, "int32", 0),
            _F("fused_activation_function", 3, "int8", 0, "ActivationFunctionType"),
            _F("dilation_w_factor", 4, "int32", 1),
            _F("dilation_h_factor", 5, "int32", 1),
            _F("quantized_bias_type", 6, "int8", 0, "TensorType"),
        ),
    ),
    "DepthwiseConv2DOptions": OptionsTable(
        1,
        2,
        (
            _F("padding", 0, "int8", 0, "Padding"),
            _F("stride_w", 1, "int32", 0),
            _F("stride_h", 2, "int32", 0),
            _F("depth_multiplier", 3, "int32", 0),
            _F("fused_activation_function", 4, "int8", 0, "ActivationFunctionType"),
            _F("dilation_w_factor", 5, "int32", 1),
            _F("dilation_h_factor", 6, "int32", 1),
        ),
    ),
    "ConcatEmbeddingsOptions": OptionsTable(
        1,
        3,
        (
            _F("num_channels", 0, "int32", 0),
            _F("num_columns_per_channel", 1, "[int32]", None),
            _F("embedding_dim_per_channel", 2, "[int32]", None),
        ),
    ),
    "LSHProjectionOptions": OptionsTable(
        1,
        4,
        (_F("type", 0, "int8", 0, "LSHProjectionType"),),
    ),
    "Pool2DOptions": OptionsTable(
        1,
        5,
        (
            _F("padding", 0, "int8", 0, "Padding"),
            _F("stride_w", 1, "int32", 0),
            _F("stride_h", 2, "int32", 0),
            _F("filter_width", 3, "int32", 0),
            _F("filter_height", 4, "int32", 0),
            _F("fused_activation_function", 5, "int8", 0, "ActivationFunctionType"),
        ),
    ),
    "SVDFOptions": OptionsTable(
        1,
        6,
        (
            _F("rank", 0, "int32", 0),
            _F("fused_activation_function", 1, "int8", 0, "ActivationFunctionType"),
            _F("asymmetric_quantize_inputs", 2, "bool", False),
        ),
    ),
    "RNNOptions": OptionsTable(
        1,
        7,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("asymmetric_quantize_inputs", 1, "bool", False),
        ),
    ),
    "FullyConnectedOptions": OptionsTable(
        1,
        8,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("weights_format", 1, "int8", 0, "FullyConnectedOptionsWeightsFormat"),
            _F("keep_num_dims", 2, "bool", False),
            _F("asymmetric_quantize_inputs", 3, "bool", False),
            _F("quantized_bias_type", 4, "int8", 0, "TensorType"),
        ),
    ),
    "SoftmaxOptions": OptionsTable(
        1,
        9,
        (_F("beta", 0, "float32", 0.0),),
    ),
    "ConcatenationOptions": OptionsTable(
        1,
        10,
        (
            _F("axis", 0, "int32", 0),
            _F("fused_activation_function", 1, "int8", 0, "ActivationFunctionType"),
        ),
    ),
    "AddOptions": OptionsTable(
        1,
        11,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("pot_scale_int16", 1, "bool", True),
        ),
    ),
    "L2NormOptions": OptionsTable(
        1,
        12,
        (_F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),),
    ),
    "LocalResponseNormalizationOptions": OptionsTable(
        1,
        13,
        (
            _F("radius", 0, "int32", 0),
            _F("bias", 1, "float32", 0.0),
            _F("alpha", 2, "float32", 0.0),
            _F("beta", 3, "float32", 0.0),
        ),
    ),
    "LSTMOptions": OptionsTable(
        1,
        14,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("cell_clip", 1, "float32", 0.0),
            _F("proj_clip", 2, "float32", 0.0),
            _F("kernel_type", 3, "int8", 0, "LSTMKernelType"),
            _F("asymmetric_quantize_inputs", 4, "bool", False),
        ),
    ),
    "ResizeBilinearOptions": OptionsTable(
        1,
        15,
        (
            _F("align_corners", 2, "bool", False),
            _F("half_pixel_centers", 3, "bool", False),
        ),
    ),
    "CallOptions": OptionsTable(
        1,
        16,
        (_F("subgraph", 0, "uint32", 0),),
    ),
    "ReshapeOptions": OptionsTable(
        1,
        17,
        (_F("new_shape", 0, "[int32]", None),),
    ),
    "SkipGramOptions": OptionsTable(
        1,
        18,
        (
            _F("ngram_size", 0, "int32", 0),
            _F("max_skip_size", 1, "int32", 0),
            _F("include_all_ngrams", 2, "bool", False),
        ),
    ),
    "SpaceToDepthOptions": OptionsTable(
        1,
        19,
        (_F("block_size", 0, "int32", 0),),
    ),
    "EmbeddingLookupSparseOptions": OptionsTable(
        1,
        20,
        (_F("combiner", 0, "int8", 0, "CombinerType"),),
    ),
    "MulOptions": OptionsTable(
        1,
        21,
        (_F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),),
    ),
    "PadOptions": OptionsTable(1, 22, ()),
    "GatherOptions": OptionsTable(
        1,
        23,
        (
            _F("axis", 0, "int32", 0),
            _F("batch_dims", 1, "int32", 0),
        ),
    ),
    "BatchToSpaceNDOptions": OptionsTable(1, 24, ()),
    "SpaceToBatchNDOptions": OptionsTable(1, 25, ()),
    "TransposeOptions": OptionsTable(1, 26, ()),
    "ReducerOptions": OptionsTable(
        1,
        27,
        (_F("keep_dims", 0, "bool", False),),
    ),
    "SubOptions": OptionsTable(
        1,
        28,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("pot_scale_int16", 1, "bool", True),
        ),
    ),
    "DivOptions": OptionsTable(
        1,
        29,
        (_F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),),
    ),
    "SqueezeOptions": OptionsTable(
        1,
        30,
        (_F("squeeze_dims", 0, "[int32]", None),),
    ),
    "SequenceRNNOptions": OptionsTable(
        1,
        31,
        (
            _F("time_major", 0, "bool", False),
            _F("fused_activation_function", 1, "int8", 0, "ActivationFunctionType"),
            _F("asymmetric_quantize_inputs", 2, "bool", False),
        ),
    ),
    "StridedSliceOptions": OptionsTable(
        1,
        32,
        (
            _F("begin_mask", 0, "int32", 0),
            _F("end_mask", 1, "int32", 0),
            _F("ellipsis_mask", 2, "int32", 0),
            _F("new_axis_mask", 3, "int32", 0),
            _F("shrink_axis_mask", 4, "int32", 0),
            _F("offset", 5, "bool", False),
        ),
    ),
    "ExpOptions": OptionsTable(1, 33, ()),
    "TopKV2Options": OptionsTable(1, 34, ()),
    "SplitOptions": OptionsTable(
        1,
        35,
        (_F("num_splits", 0, "int32", 0),),
    ),
    "LogSoftmaxOptions": OptionsTable(1, 36, ()),
    "CastOptions": OptionsTable(
        1,
        37,
        (
            _F("in_data_type", 0, "int8", 0, "TensorType"),
            _F("out_data_type", 1, "int8", 0, "TensorType"),
        ),
    ),
    "DequantizeOptions": OptionsTable(1, 38, ()),
    "MaximumMinimumOptions": OptionsTable(1, 39, ()),
    "ArgMaxOptions": OptionsTable(
        1,
        40,
        (_F("output_type", 0, "int8", 0, "TensorType"),),
    ),
    "LessOptions": OptionsTable(1, 41, ()),
    "NegOptions": OptionsTable(1, 42, ()),
    "PadV2Options": OptionsTable(1, 43, ()),
    "GreaterOptions": OptionsTable(1, 44, ()),
    "GreaterEqualOptions": OptionsTable(1, 45, ()),
    "LessEqualOptions": OptionsTable(1, 46, ()),
    "SelectOptions": OptionsTable(1, 47, ()),
    "SliceOptions": OptionsTable(1, 48, ()),
    "TransposeConvOptions": OptionsTable(
        1,
        49,
        (
            _F("padding", 0, "int8", 0, "Padding"),
            _F("stride_w", 1, "int32", 0),
            _F("stride_h", 2, "int32", 0),
            _F("fused_activation_function", 3, "int8", 0, "ActivationFunctionType"),
            _F("quantized_bias_type", 4, "int8", 0, "TensorType"),
        ),
    ),
    "SparseToDenseOptions": OptionsTable(
        1,
        50,
        (_F("validate_indices", 0, "bool", False),),
    ),
    "TileOptions": OptionsTable(1, 51, ()),
    "ExpandDimsOptions": OptionsTable(1, 52, ()),
    "EqualOptions": OptionsTable(1, 53, ()),
    "NotEqualOptions": OptionsTable(1, 54, ()),
    "ShapeOptions": OptionsTable(
        1,
        55,
        (_F("out_type", 0, "int8", 0, "TensorType"),),
    ),
    "PowOptions": OptionsTable(1, 56, ()),
    "ArgMinOptions": OptionsTable(
        1,
        57,
        (_F("output_type", 0, "int8", 0, "TensorType"),),
    ),
    "FakeQuantOptions": OptionsTable(
        1,
        58,
        (
            _F("min", 0, "float32", 0.0),
            _F("max", 1, "float32", 0.0),
            _F("num_bits", 2, "int32", 0),
            _F("narrow_range", 3, "bool", False),
        ),
    ),
    "PackOptions": OptionsTable(
        1,
        59,
        (
            _F("values_count", 0, "int32", 0),
            _F("axis", 1, "int32", 0),
        ),
    ),
    "LogicalOrOptions": OptionsTable(1, 60, ()),
    "OneHotOptions": OptionsTable(
        1,
        61,
        (_F("axis", 0, "int32", 0),),
    ),
    "LogicalAndOptions": OptionsTable(1, 62, ()),
    "LogicalNotOptions": OptionsTable(1, 63, ()),
    "UnpackOptions": OptionsTable(
        1,
        64,
        (
            _F("num", 0, "int32", 0),
            _F("axis", 1, "int32", 0),
        ),
    ),
    "FloorDivOptions": OptionsTable(1, 65, ()),
    "SquareOptions": OptionsTable(1, 66, ()),
    "ZerosLikeOptions": OptionsTable(1, 67, ()),
    "FillOptions": OptionsTable(1, 68, ()),
    "BidirectionalSequenceLSTMOptions": OptionsTable(
        1,
        69,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("cell_clip", 1, "float32", 0.0),
            _F("proj_clip", 2, "float32", 0.0),
            _F("merge_outputs", 3, "bool", False),
            _F("time_major", 4, "bool", True),
            _F("asymmetric_quantize_inputs", 5, "bool", False),
        ),
    ),
    "BidirectionalSequenceRNNOptions": OptionsTable(
        1,
        70,
        (
            _F("time_major", 0, "bool", False),
            _F("fused_activation_function", 1, "int8", 0, "ActivationFunctionType"),
            _F("merge_outputs", 2, "bool", False),
            _F("asymmetric_quantize_inputs", 3, "bool", False),
        ),
    ),
    "UnidirectionalSequenceLSTMOptions": OptionsTable(
        1,
        71,
        (
            _F("fused_activation_function", 0, "int8", 0, "ActivationFunctionType"),
            _F("cell_clip", 1, "float32", 0.0),
            _F("proj_clip", 2, "float32", 0.0),
            _F("time_major", 3, "bool", False),
            _F("asymmetric_quantize_inputs", 4, "bool", False),
            _F("diagonal_recurrent_tensors", 5, "bool", False),
        ),
    ),
    "FloorModOptions": OptionsTable(1, 72, ()),
    "RangeOptions": OptionsTable(1, 73, ()),
    "ResizeNearestNeighborOptions": OptionsTable(
        1,
        74,
        (
            _F("align_corners", 0, "bool", False),
            _F("half_pixel_centers", 1, "bool", False),
        ),
    ),
    "LeakyReluOptions": OptionsTable(
        1,
        75,
        (_F("alpha", 0, "float32", 0.0),),
    ),
    "SquaredDifferenceOptions": OptionsTable(1, 76, ()),
    "MirrorPadOptions": OptionsTable(
        1,
        77,
        (_F("mode", 0, "int8", 0, "MirrorPadMode"),),
    ),
    "AbsOptions": OptionsTable(1, 78, ()),
    "SplitVOptions": OptionsTable(
        1,
        79,
        (_F("num_splits", 0, "int32", 0),),
    ),
    "UniqueOptions": OptionsTable(
        1,
        80,
        (_F("idx_out_type", 0, "int8", 2, "TensorType"),),
    ),
    "ReverseV2Options": OptionsTable(1, 81, ()),
    "AddNOptions": OptionsTable(1, 82, ()),
    "GatherNdOptions": OptionsTable(1, 83, ()),
    "CosOptions": OptionsTable(1, 84, ()),
    "WhereOptions": OptionsTable(1, 85, ()),
    "RankOptions": OptionsTable(1, 86, ()),
    "ReverseSequenceOptions": OptionsTable(
        1,
        87,
        (
            _F("seq_dim", 0, "int32", 0),
            _F("batch_dim", 1, "int32", 0),
        ),
    ),
    "MatrixDiagOptions": OptionsTable(1, 88, ()),
    "QuantizeOptions": OptionsTable(1, 89, ()),
    "MatrixSetDiagOptions": OptionsTable(1, 90, ()),
    "HardSwishOptions": OptionsTable(1, 91, ()),
    "IfOptions": OptionsTable(
        1,
        92,
        (
            _F("then_subgraph_index", 0, "int32", 0),
            _F("else_subgraph_index", 1, "int32", 0),
        ),
    ),
    "WhileOptions": OptionsTable(
        1,
        93,
        (
            _F("cond_subgraph_index", 0, "int32", 0),
            _F("body_subgraph_index", 1, "int32", 0),
        ),
    ),
    "DepthToSpaceOptions": OptionsTable(
        1,
        94,
        (_F("block_size", 0, "int32", 0),),
    ),
    "NonMaxSuppressionV4Options": OptionsTable(1, 95, ()),
    "NonMaxSuppressionV5Options": OptionsTable(1, 96, ()),
    "ScatterNdOptions": OptionsTable(1, 97, ()),
    "SelectV2Options": OptionsTable(1, 98, ()),
    "DensifyOptions": OptionsTable(1, 99, ()),
    "SegmentSumOptions": OptionsTable(1, 100, ()),
    "BatchMatMulOptions": OptionsTable(
        1,
        101,
        (
            _F("adj_x", 0, "bool", False),
            _F("adj_y", 1, "bool", False),
            _F("asymmetric_quantize_inputs", 2, "bool", False),
        ),
    ),
    "CumsumOptions": OptionsTable(
        1,
        102,
        (
            _F("exclusive", 0, "bool", False),
            _F("reverse", 1, "bool", False),
        ),
    ),
    "CallOnceOptions": OptionsTable(
        1,
        103,
        (_F("init_subgraph_index", 0, "int32", 0),),
    ),
    "BroadcastToOptions": OptionsTable(1, 104, ()),
    "Rfft2dOptions": OptionsTable(1, 105, ()),
    "Conv3DOptions": OptionsTable(
        1,
        106,
        (
            _F("padding", 0, "int8", 0, "Padding"),
            _F("stride_d", 1, "int32", 0),
            _F("stride_w", 2, "int32", 0),
            _F("stride_h", 3, "int32", 0),
            _F("fused_activation_function", 4, "int8", 0, "ActivationFunctionType"),
            _F("dilation_d_factor", 5, "int32", 1),
            _F("dilation_w_factor", 6, "int32", 1),
            _F("dilation_h_factor", 7, "int32", 1),
        ),
    ),
    "HashtableOptions": OptionsTable(
        1,
        107,
        (
            _F("table_id", 0, "int32", 0),
            _F("key_dtype", 1, "int8", 0, "TensorType"),
            _F("value_dtype", 2, "int8", 0, "TensorType"),
        ),
    ),
    "HashtableFindOptions": OptionsTable(1, 108, ()),
    "HashtableImportOptions": OptionsTable(1, 109, ()),
    "HashtableSizeOptions": OptionsTable(1, 110, ()),
    "VarHandleOptions": OptionsTable(
        1,
        111,
        (
            _F("container", 0, "string", None),
            _F("shared_name", 1, "string", None),
        ),
    ),
    "ReadVariableOptions": OptionsTable(1, 112, ()),
    "AssignVariableOptions": OptionsTable(1, 113, ()),
    "RandomOptions": OptionsTable(
        1,
        114,
        (
            _F("seed", 0, "int64", 0),
            _F("seed2", 1, "int64", 0),
        ),
    ),
    "BucketizeOptions": OptionsTable(
        1,
        115,
        (_F("boundaries", 0, "[float32]", None),),
    ),
    "GeluOptions": OptionsTable(
        1,
        116,
        (_F("approximate", 0, "bool", False),),
    ),
    "DynamicUpdateSliceOptions": OptionsTable(1, 117, ()),
    "UnsortedSegmentProdOptions": OptionsTable(1, 118, ()),
    "UnsortedSegmentMaxOptions": OptionsTable(1, 119, ()),
    "UnsortedSegmentMinOptions": OptionsTable(1, 120, ()),
    "UnsortedSegmentSumOptions": OptionsTable(1, 121, ()),
    "ATan2Options": OptionsTable(1, 122, ()),
    "SignOptions": OptionsTable(1, 123, ()),
    "BitcastOptions": OptionsTable(1, 124, ()),
    "BitwiseXorOptions": OptionsTable(1, 125, ()),
    "RightShiftOptions": OptionsTable(1, 126, ()),
    "StablehloConcatenateOptions": OptionsTable(
        2,
        1,
        (_F("dimension", 0, "int64", 0),),
    ),
    "StablehloBroadcastInDimOptions": OptionsTable(
        2,
        2,
        (_F("broadcast_dimensions", 0, "[int64]", None),),
    ),
    "StablehloSliceOptions": OptionsTable(
        2,
        3,
        (
            _F("start_indices", 0, "[int64]", None),
            _F("limit_indices", 1, "[int64]", None),
            _F("strides", 2, "[int64]", None),
        ),
    ),
    "StablehloConvolutionOptions": OptionsTable(
        2,
        4,
        (
            _F("window_strides", 0, "[int64]", None),
            _F("padding", 1, "[int64]", None),
            _F("lhs_dilation", 2, "[int64]", None),
            _F("rhs_dilation", 3, "[int64]", None),
            _F("window_reversal", 4, "[bool]", None),
            _F("input_batch_dimension", 5, "int64", 0),
            _F("input_feature_dimension", 6, "int64", 0),
            _F("input_spatial_dimensions", 7, "[int64]", None),
            _F("kernel_input_feature_dimension", 8, "int64", 0),
            _F("kernel_output_feature_dimension", 9, "int64", 0),
            _F("kernel_spatial_dimensions", 10, "[int64]", None),
            _F("output_batch_dimension", 11, "int64", 0),
            _F("output_feature_dimension", 12, "int64", 0),
            _F("output_spatial_dimensions", 13, "[int64]", None),
            _F("feature_group_count", 14, "int64", 0),
            _F("batch_group_count", 15, "int64", 0),
            _F("precision_config", 16, "[uint32]", None, "StablehloPrecisionConfig"),
        ),
    ),
    "StablehloCustomCallOptions": OptionsTable(
        2,
        5,
        (
            _F("call_target_name", 0, "string", None),
            _F("has_side_effect", 1, "bool", False),
            _F("backend_config", 2, "string", None),
            _F("api_version", 3, "int32", 0),
            _F("called_computations", 4, "[int32]", None),
            _F("custom_attributes", 5, "[uint8]", None),
        ),
    ),
    "StablehloReduceOptions": OptionsTable(
        2,
        6,
        (
            _F("dimensions", 0, "[int64]", None),
            _F("body_subgraph_index", 1, "int32", 0),
        ),
    ),
    "StablehloScatterOptions": OptionsTable(
        2,
        7,
        (
            _F("indices_are_sorted", 0, "bool", False),
            _F("update_window_dims", 1, "[int64]", None),
            _F("inserted_window_dims", 2, "[int64]", None),
            _F("scatter_dims_to_operand_dims", 3, "[int64]", None),
            _F("index_vector_dim", 4, "int64", 0),
            _F("unique_indices", 5, "bool", False),
            _F("update_computation_subgraph_index", 6, "int32", 0),
        ),
    ),
    "StablehloCompareOptions": OptionsTable(
        2,
        8,
        (
            _F("comparison_direction", 0, "uint32", 0, "StablehloComparisonDirection"),
            _F("compare_type", 1, "uint32", 0, "StablehloComparisonType"),
        ),
    ),
    "StablehloDynamicSliceOptions": OptionsTable(
        2,
        9,
        (_F("slice_sizes", 0, "[int64]", None),),
    ),
    "StablehloPadOptions": OptionsTable(
        2,
        10,
        (
            _F("edge_padding_low", 0, "[int64]", None),
            _F("edge_padding_high", 1, "[int64]", None),
            _F("interior_padding", 2, "[int64]", None),
        ),
    ),
    "StablehloIotaOptions": OptionsTable(
        2,
        11,
        (_F("iota_dimension", 0, "int64", 0),),
    ),
    "StablehloDotGeneralOptions": OptionsTable(
        2,
        12,
        (
            _F("lhs_batching_dimensions", 0, "[int64]", None),
            _F("rhs_batching_dimensions", 1, "[int64]", None),
            _F("lhs_contracting_dimensions", 2, "[int64]", None),
            _F("rhs_contracting_dimensions", 3, "[int64]", None),
            _F("precision_config", 4, "[uint32]", None, "StablehloPrecisionConfig"),
        ),
    ),
    "StablehloReduceWindowOptions": OptionsTable(
        2,
        13,
        (
            _F("window_dimensions", 0, "[int64]", None),
            _F("window_strides", 1, "[int64]", None),
            _F("base_dilations", 2, "[int64]", None),
            _F("window_dilations", 3, "[int64]", None),
            _F("padding", 4, "[int64]", None),
            _F("body_subgraph_index", 5, "int32", 0),
        ),
    ),
    "StablehloSortOptions": OptionsTable(
        2,
        14,
        (
            _F("dimension", 0, "int64", 0),
            _F("is_stable", 1, "bool", False),
            _F("comparator_subgraph_index", 2, "int32", 0),
        ),
    ),
    "StablehloWhileOptions": OptionsTable(
        2,
        15,
        (
            _F("cond_subgraph_index", 0, "int32", 0),
            _F("body_subgraph_index", 1, "int32", 0),
        ),
    ),
    "StablehloGatherOptions": OptionsTable(
        2,
        16,
        (
            _F("offset_dims", 0, "[int64]", None),
            _F("collapsed_slice_dims", 1, "[int64]", None),
            _F("start_index_map", 2, "[int64]", None),
            _F("index_vector_dim", 3, "int64", 0),
            _F("slice_sizes", 4, "[int64]", None),
            _F("indices_are_sorted", 5, "bool", False),
        ),
    ),
    "StablehloTransposeOptions": OptionsTable(
        2,
        17,
        (_F("permutation", 0, "[int64]", None),),
    ),
    "DilateOptions": OptionsTable(2, 18, ()),
    "StablehloRngBitGeneratorOptions": OptionsTable(
        2,
        19,
        (_F("algorithm", 0, "int8", 0, "RngAlgorithm"),),
    ),
    "ReduceWindowOptions": OptionsTable(
        2,
        20,
        (_F("reduce_function", 0, "int32", 0, "ReduceWindowFunction"),),
    ),
    "StableHLOCompositeOptions": OptionsTable(
        2,
        21,
        (
            _F("name", 0, "string", None),
            _F("decomposition_subgraph_index", 1, "int32", 0),
            _F("composite_attributes", 2, "[uint8]", None),
            _F("composite_attributes_format", 3, "int8", 0, "CustomOptionsFormat"),
            _F("version", 4, "int32", 0),
        ),
    ),
    "StablehloShiftLeftOptions": OptionsTable(2, 22, ()),
    "StablehloCaseOptions": OptionsTable(
        2,
        23,
        (_F("branch_subgraph_indices", 0, "[int32]", None),),
    ),
}

# Operator name -> options table name (operators without options are absent): a view of ops.OPS.
OP_OPTIONS: dict[str, str] = {op.name: op.options for op in OPS if op.options is not None}


def options_table(op: str) -> OptionsTable | None:
    """The options table of a builtin operator name, or None when it carries no options."""
    record = BY_NAME.get(op)
    return OPTIONS_TABLES[record.options] if record and record.options else None
