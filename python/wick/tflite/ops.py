"""One record per TFLite builtin operator: its name, builtin code, options table, newest version
the writer declares and the rule that picks the lowest version a use needs.

This is the converter package's only table of operator facts. The writer (``writer.py``), the
version logic (:func:`min_version`; the rules live in ``versions.py``) and the graph viewer
(``wick.graph.tflite_reader``) read it, and the views ``schema.BUILTIN_OPERATORS``,
``schema.BUILTIN_OPERATOR_NAMES`` and ``options.OP_OPTIONS`` are derived from it.
tests/python/test_op_facts.py holds it to the runtime: codes against ``src/format/schema.h`` (and
LiteRT's own schema when installed), names against ``src/ops/op_table.inc``, and each version the
writer may declare against the versions the wick library runs.

A row is ``Op(name, code, options, newest, rule)``:

* ``code`` — the schema's BuiltinOperator number (``CUSTOM`` = 32 is the escape for custom ops);
* ``options`` — the options table (``options.OPTIONS_TABLES``) its operator carries, or None;
* ``newest`` — the newest version ``rule`` returns (1 without a rule); :func:`min_version`
  refuses a rule that returns more, so a new rule row cannot outgrow the number;
* ``rule`` — ``rule(OpSig) -> version`` (``versions.py``), or None when every use is version 1.

Adding a builtin op the schema already lists (every op up to the schema's newest is here) means
editing its row only when it needs a version rule.

Where to look next: ``versions.py`` (the rules and their published table), ``writer.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from . import versions as V
from .versions import OpSig


class Op(NamedTuple):
    """The facts about one builtin operator."""

    name: str
    code: int
    options: str | None = None  # options table name, None when the op carries no options
    newest: int = 1  # newest version the writer declares (the largest value `rule` returns)
    rule: Callable[[OpSig], int] | None = None  # lowest version for a use; None: always 1


# fmt: off
OPS: tuple[Op, ...] = (
    Op("ADD", 0, "AddOptions", 6, V.add),
    Op("AVERAGE_POOL_2D", 1, "Pool2DOptions", 3, V.I8_I16),
    Op("CONCATENATION", 2, "ConcatenationOptions", 5, V.ByInput({"int4": 5, "uint32": 4, "int16": 3, "int8": 2})),
    Op("CONV_2D", 3, "Conv2DOptions", 8, V.conv_2d),
    Op("DEPTHWISE_CONV_2D", 4, "DepthwiseConv2DOptions", 7, V.depthwise_conv_2d),
    Op("DEPTH_TO_SPACE", 5, "DepthToSpaceOptions", 2, V.I8),
    Op("DEQUANTIZE", 6, "DequantizeOptions", 8, V.dequantize),
    Op("EMBEDDING_LOOKUP", 7, None, 4, V.embedding_lookup),
    Op("FLOOR", 8, None),
    Op("FULLY_CONNECTED", 9, "FullyConnectedOptions", 14, V.fully_connected),
    Op("HASHTABLE_LOOKUP", 10, None),
    Op("L2_NORMALIZATION", 11, "L2NormOptions", 2, V.l2_normalization),
    Op("L2_POOL_2D", 12, "Pool2DOptions"),
    Op("LOCAL_RESPONSE_NORMALIZATION", 13, "LocalResponseNormalizationOptions"),
    Op("LOGISTIC", 14, None, 3, V.I8_I16),
    Op("LSH_PROJECTION", 15, "LSHProjectionOptions"),
    Op("LSTM", 16, "LSTMOptions"),
    Op("MAX_POOL_2D", 17, "Pool2DOptions", 3, V.I8_I16),
    Op("MUL", 18, "MulOptions", 8, V.mul),
    Op("RELU", 19, None, 3, V.ByInput({"int16": 3, "int8": 2, "uint8": 2})),
    Op("RELU_N1_TO_1", 20, None),
    Op("RELU6", 21, None, 3, V.I8_I16),
    Op("RESHAPE", 22, "ReshapeOptions"),
    Op("RESIZE_BILINEAR", 23, "ResizeBilinearOptions", 4, V.resize_bilinear),
    Op("RNN", 24, "RNNOptions"),
    Op("SOFTMAX", 25, "SoftmaxOptions", 3, V.I8_I16),
    Op("SPACE_TO_DEPTH", 26, "SpaceToDepthOptions", 2, V.I8),
    Op("SVDF", 27, "SVDFOptions"),
    Op("TANH", 28, None, 3, V.I8_I16),
    Op("CONCAT_EMBEDDINGS", 29, "ConcatEmbeddingsOptions"),
    Op("SKIP_GRAM", 30, "SkipGramOptions"),
    Op("CALL", 31, "CallOptions"),
    Op("CUSTOM", 32, None),
    Op("EMBEDDING_LOOKUP_SPARSE", 33, "EmbeddingLookupSparseOptions"),
    Op("PAD", 34, "PadOptions", 5, V.pad),
    Op("UNIDIRECTIONAL_SEQUENCE_RNN", 35, "SequenceRNNOptions"),
    Op("GATHER", 36, "GatherOptions", 7, V.gather),
    Op("BATCH_TO_SPACE_ND", 37, "BatchToSpaceNDOptions", 4, V.space_batch_nd),
    Op("SPACE_TO_BATCH_ND", 38, "SpaceToBatchNDOptions", 4, V.space_batch_nd),
    Op("TRANSPOSE", 39, "TransposeOptions", 8, V.transpose),
    Op("MEAN", 40, "ReducerOptions", 3, V.I8_I16),
    Op("SUB", 41, "SubOptions", 5, V.sub),
    Op("DIV", 42, "DivOptions", 2, V.div),
    Op("SQUEEZE", 43, "SqueezeOptions", 2, V.ByInput({"string": 2})),
    Op("UNIDIRECTIONAL_SEQUENCE_LSTM", 44, "UnidirectionalSequenceLSTMOptions"),
    Op("STRIDED_SLICE", 45, "StridedSliceOptions", 8, V.strided_slice),
    Op("BIDIRECTIONAL_SEQUENCE_RNN", 46, "BidirectionalSequenceRNNOptions"),
    Op("EXP", 47, "ExpOptions", 2, V.I8_OR_I16),
    Op("TOPK_V2", 48, "TopKV2Options", 3, V.topk_v2),
    Op("SPLIT", 49, "SplitOptions", 4, V.ByInput({"int16": 4, "int32": 3, "int8": 2}, k=1)),
    Op("LOG_SOFTMAX", 50, "LogSoftmaxOptions", 2, V.I8),
    Op("DELEGATE", 51, None),
    Op("BIDIRECTIONAL_SEQUENCE_LSTM", 52, "BidirectionalSequenceLSTMOptions"),
    Op("CAST", 53, "CastOptions", 8, V.cast),
    Op("PRELU", 54, None),
    Op("MAXIMUM", 55, "MaximumMinimumOptions", 4, V.maximum_minimum),
    Op("ARG_MAX", 56, "ArgMaxOptions", 3, V.ByInput({"bool": 3, "int8": 2})),
    Op("MINIMUM", 57, "MaximumMinimumOptions", 4, V.maximum_minimum),
    Op("LESS", 58, "LessOptions", 3, V.I8_I16),
    Op("NEG", 59, "NegOptions"),
    Op("PADV2", 60, "PadV2Options", 5, V.pad),
    Op("GREATER", 61, "GreaterOptions", 2, V.I8),
    Op("GREATER_EQUAL", 62, "GreaterEqualOptions", 3, V.I8_I16),
    Op("LESS_EQUAL", 63, "LessEqualOptions", 2, V.I8),
    Op("SELECT", 64, "SelectOptions", 4, V.select),
    Op("SLICE", 65, "SliceOptions", 7, V.slice_op),
    Op("SIN", 66, None),
    Op("TRANSPOSE_CONV", 67, "TransposeConvOptions", 5, V.transpose_conv),
    Op("SPARSE_TO_DENSE", 68, "SparseToDenseOptions", 3, V.ByInput({"int8": 3, "uint8": 3, "int64": 2}, k=2)),
    Op("TILE", 69, "TileOptions", 3, V.ByInput({"int8": 3, "string": 2})),
    Op("EXPAND_DIMS", 70, "ExpandDimsOptions"),
    Op("EQUAL", 71, "EqualOptions", 5, V.ByInput({"int16": 5, "string": 3, "int8": 2})),
    Op("NOT_EQUAL", 72, "NotEqualOptions", 4, V.ByInput({"int16": 4, "string": 3, "int8": 2})),
    Op("LOG", 73, None, 2, V.I8_OR_I16),
    Op("SUM", 74, "ReducerOptions", 2, V.I8),
    Op("SQRT", 75, None, 2, V.I8_OR_I16),
    Op("RSQRT", 76, None, 3, V.I8_I16),
    Op("SHAPE", 77, "ShapeOptions"),
    Op("POW", 78, "PowOptions"),
    Op("ARG_MIN", 79, "ArgMinOptions", 3, V.ByInput({"bool": 3, "int8": 2})),
    Op("FAKE_QUANT", 80, "FakeQuantOptions", 2, V.fake_quant),
    Op("REDUCE_PROD", 81, "ReducerOptions", 2, V.I8_OR_I16),
    Op("REDUCE_MAX", 82, "ReducerOptions", 3, V.I8_I16),
    Op("PACK", 83, "PackOptions", 4, V.ByInput({"int8": 2, "int16": 3, "uint32": 4})),
    Op("LOGICAL_OR", 84, "LogicalOrOptions"),
    Op("ONE_HOT", 85, "OneHotOptions"),
    Op("LOGICAL_AND", 86, "LogicalAndOptions"),
    Op("LOGICAL_NOT", 87, "LogicalNotOptions"),
    Op("UNPACK", 88, "UnpackOptions", 5, V.ByInput({"int8": 2, "uint8": 2, "bool": 3, "int16": 4, "float16": 5, "bfloat16": 5})),
    Op("REDUCE_MIN", 89, "ReducerOptions", 3, V.I8_I16),
    Op("FLOOR_DIV", 90, "FloorDivOptions", 3, V.ByInput({"int16": 3, "int8": 3, "float32": 2})),
    Op("REDUCE_ANY", 91, "ReducerOptions"),
    Op("SQUARE", 92, "SquareOptions"),
    Op("ZEROS_LIKE", 93, "ZerosLikeOptions"),
    Op("FILL", 94, "FillOptions", 4, V.fill),
    Op("FLOOR_MOD", 95, "FloorModOptions", 2, V.ByInput({"int16": 2, "int8": 2})),
    Op("RANGE", 96, "RangeOptions", 2, V.ByInput({"int64": 2})),
    Op("RESIZE_NEAREST_NEIGHBOR", 97, "ResizeNearestNeighborOptions", 4, V.resize_nearest_neighbor),
    Op("LEAKY_RELU", 98, "LeakyReluOptions", 2, V.ByInput({"int16": 2})),
    Op("SQUARED_DIFFERENCE", 99, "SquaredDifferenceOptions", 2, V.I8),
    Op("MIRROR_PAD", 100, "MirrorPadOptions", 3, V.I8_I16),
    Op("ABS", 101, "AbsOptions", 5, V.abs_op),
    Op("SPLIT_V", 102, "SplitVOptions", 2, V.I8),
    Op("UNIQUE", 103, "UniqueOptions"),
    Op("CEIL", 104, None),
    Op("REVERSE_V2", 105, "ReverseV2Options", 3, V.ByInput({"int8": 3, "bool": 2})),
    Op("ADD_N", 106, "AddNOptions"),
    Op("GATHER_ND", 107, "GatherNdOptions", 5, V.gather_nd),
    Op("COS", 108, "CosOptions"),
    Op("WHERE", 109, "WhereOptions", 2, V.where),
    Op("RANK", 110, "RankOptions"),
    Op("ELU", 111, None),
    Op("REVERSE_SEQUENCE", 112, "ReverseSequenceOptions"),
    Op("MATRIX_DIAG", 113, "MatrixDiagOptions"),
    Op("QUANTIZE", 114, "QuantizeOptions", 5, V.quantize),
    Op("MATRIX_SET_DIAG", 115, "MatrixSetDiagOptions"),
    Op("ROUND", 116, None),
    Op("HARD_SWISH", 117, "HardSwishOptions"),
    Op("IF", 118, "IfOptions"),
    Op("WHILE", 119, "WhileOptions"),
    Op("NON_MAX_SUPPRESSION_V4", 120, "NonMaxSuppressionV4Options"),
    Op("NON_MAX_SUPPRESSION_V5", 121, "NonMaxSuppressionV5Options"),
    Op("SCATTER_ND", 122, "ScatterNdOptions"),
    Op("SELECT_V2", 123, "SelectV2Options", 2, V.ByInput({"uint32": 2})),
    Op("DENSIFY", 124, "DensifyOptions"),
    Op("SEGMENT_SUM", 125, "SegmentSumOptions"),
    Op("BATCH_MATMUL", 126, "BatchMatMulOptions", 4, V.batch_matmul),
    Op("PLACEHOLDER_FOR_GREATER_OP_CODES", 127, None),
    Op("CUMSUM", 128, "CumsumOptions"),
    Op("CALL_ONCE", 129, "CallOnceOptions"),
    Op("BROADCAST_TO", 130, "BroadcastToOptions", 3, V.broadcast_to),
    Op("RFFT2D", 131, "Rfft2dOptions"),
    Op("CONV_3D", 132, "Conv3DOptions"),
    Op("IMAG", 133, None),
    Op("REAL", 134, None),
    Op("COMPLEX_ABS", 135, None),
    Op("HASHTABLE", 136, "HashtableOptions"),
    Op("HASHTABLE_FIND", 137, "HashtableFindOptions"),
    Op("HASHTABLE_IMPORT", 138, "HashtableImportOptions"),
    Op("HASHTABLE_SIZE", 139, "HashtableSizeOptions"),
    Op("REDUCE_ALL", 140, "ReducerOptions"),
    Op("CONV_3D_TRANSPOSE", 141, "Conv3DOptions"),
    Op("VAR_HANDLE", 142, "VarHandleOptions"),
    Op("READ_VARIABLE", 143, "ReadVariableOptions"),
    Op("ASSIGN_VARIABLE", 144, "AssignVariableOptions"),
    Op("BROADCAST_ARGS", 145, None),
    Op("RANDOM_STANDARD_NORMAL", 146, "RandomOptions"),
    Op("BUCKETIZE", 147, "BucketizeOptions"),
    Op("RANDOM_UNIFORM", 148, "RandomOptions"),
    Op("MULTINOMIAL", 149, "RandomOptions"),
    Op("GELU", 150, "GeluOptions", 2, V.ByInput({"int8": 2, "uint8": 2})),
    Op("DYNAMIC_UPDATE_SLICE", 151, "DynamicUpdateSliceOptions", 6, V.dynamic_update_slice),
    Op("RELU_0_TO_1", 152, None),
    Op("UNSORTED_SEGMENT_PROD", 153, "UnsortedSegmentProdOptions"),
    Op("UNSORTED_SEGMENT_MAX", 154, "UnsortedSegmentMaxOptions"),
    Op("UNSORTED_SEGMENT_SUM", 155, "UnsortedSegmentSumOptions"),
    Op("ATAN2", 156, "ATan2Options"),
    Op("UNSORTED_SEGMENT_MIN", 157, "UnsortedSegmentMinOptions"),
    Op("SIGN", 158, "SignOptions", 2, V.ByInput({"int32": 2})),
    Op("BITCAST", 159, "BitcastOptions"),
    Op("BITWISE_XOR", 160, "BitwiseXorOptions"),
    Op("RIGHT_SHIFT", 161, "RightShiftOptions"),
    Op("STABLEHLO_LOGISTIC", 162, None),
    Op("STABLEHLO_ADD", 163, None),
    Op("STABLEHLO_DIVIDE", 164, None),
    Op("STABLEHLO_MULTIPLY", 165, None),
    Op("STABLEHLO_MAXIMUM", 166, None),
    Op("STABLEHLO_RESHAPE", 167, None),
    Op("STABLEHLO_CLAMP", 168, None),
    Op("STABLEHLO_CONCATENATE", 169, "StablehloConcatenateOptions"),
    Op("STABLEHLO_BROADCAST_IN_DIM", 170, "StablehloBroadcastInDimOptions"),
    Op("STABLEHLO_CONVOLUTION", 171, "StablehloConvolutionOptions"),
    Op("STABLEHLO_SLICE", 172, "StablehloSliceOptions"),
    Op("STABLEHLO_CUSTOM_CALL", 173, "StablehloCustomCallOptions"),
    Op("STABLEHLO_REDUCE", 174, "StablehloReduceOptions"),
    Op("STABLEHLO_ABS", 175, None),
    Op("STABLEHLO_AND", 176, None),
    Op("STABLEHLO_COSINE", 177, None),
    Op("STABLEHLO_EXPONENTIAL", 178, None),
    Op("STABLEHLO_FLOOR", 179, None),
    Op("STABLEHLO_LOG", 180, None),
    Op("STABLEHLO_MINIMUM", 181, None),
    Op("STABLEHLO_NEGATE", 182, None),
    Op("STABLEHLO_OR", 183, None),
    Op("STABLEHLO_POWER", 184, None),
    Op("STABLEHLO_REMAINDER", 185, None),
    Op("STABLEHLO_RSQRT", 186, None),
    Op("STABLEHLO_SELECT", 187, None),
    Op("STABLEHLO_SUBTRACT", 188, None),
    Op("STABLEHLO_TANH", 189, None),
    Op("STABLEHLO_SCATTER", 190, "StablehloScatterOptions"),
    Op("STABLEHLO_COMPARE", 191, "StablehloCompareOptions"),
    Op("STABLEHLO_CONVERT", 192, None),
    Op("STABLEHLO_DYNAMIC_SLICE", 193, "StablehloDynamicSliceOptions"),
    Op("STABLEHLO_DYNAMIC_UPDATE_SLICE", 194, None),
    Op("STABLEHLO_PAD", 195, "StablehloPadOptions"),
    Op("STABLEHLO_IOTA", 196, "StablehloIotaOptions"),
    Op("STABLEHLO_DOT_GENERAL", 197, "StablehloDotGeneralOptions"),
    Op("STABLEHLO_REDUCE_WINDOW", 198, "StablehloReduceWindowOptions"),
    Op("STABLEHLO_SORT", 199, "StablehloSortOptions"),
    Op("STABLEHLO_WHILE", 200, "StablehloWhileOptions"),
    Op("STABLEHLO_GATHER", 201, "StablehloGatherOptions"),
    Op("STABLEHLO_TRANSPOSE", 202, "StablehloTransposeOptions"),
    Op("DILATE", 203, "DilateOptions"),
    Op("STABLEHLO_RNG_BIT_GENERATOR", 204, "StablehloRngBitGeneratorOptions"),
    Op("REDUCE_WINDOW", 205, "ReduceWindowOptions"),
    Op("STABLEHLO_COMPOSITE", 206, "StableHLOCompositeOptions"),
    Op("STABLEHLO_SHIFT_LEFT", 207, "StablehloShiftLeftOptions"),
    Op("STABLEHLO_CBRT", 208, None),
    Op("STABLEHLO_CASE", 209, "StablehloCaseOptions"),
)
# fmt: on

BY_NAME: dict[str, Op] = {op.name: op for op in OPS}
BY_CODE: dict[int, Op] = {op.code: op for op in OPS}


def name_of(code: int) -> str:
    """The operator name of a builtin code; ``BUILTIN_<code>`` for codes newer than this table."""
    op = BY_CODE.get(code)
    return op.name if op is not None else f"BUILTIN_{code}"


def min_version(sig: OpSig) -> int:
    """The lowest version of ``sig.op`` that covers the features in ``sig`` (1 when no rule)."""
    op = BY_NAME[sig.op]
    if op.rule is None:
        return 1
    version = op.rule(sig)
    if not 1 <= version <= op.newest:
        raise AssertionError(
            f"{sig.op}: the version rule returned {version}, outside 1..{op.newest} (ops.py)"
        )
    return version
