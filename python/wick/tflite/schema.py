"""TFLite schema facts as plain data (schema version 3, file identifier ``TFL3``).

Everything here is a *fact of the file format*: operator code numbers, tensor type numbers,
enum values, and for every builtin-options table the union type number and its fields
(name, field id, storage type, default).  They were transcribed from the public TFLite schema
(``tensorflow/compiler/mlir/lite/schema/schema.fbs``); no code is generated from it at runtime.

Conventions used below
----------------------
* Scalar storage types are numpy-style names: ``bool int8 uint8 int16 uint16 int32 uint32
  int64 uint64 float32 float64``; ``string`` is a flatbuffer string; ``[T]`` is a vector of T.
* A field whose values come from an enum keeps its storage type in ``type`` and names the enum
  in ``enum`` (see ``ENUMS``), so a writer may accept either the enum member's name or its number.
* Union type numbers are 1 + position in the schema's union; ``union`` says which union:
  1 = ``Operator.builtin_options`` (field ids 3/4), 2 = ``Operator.builtin_options_2`` (11/12).
* Deprecated fields are omitted from ``OptionsTable.fields`` but keep their ids (ids are *not*
  positions in the field list).
* ``OP_OPTIONS`` maps an operator name to the name of the options table its operator carries.
  Operators absent from it carry no builtin options.

The operators themselves (code, options table, versions) are one table, ``ops.OPS``;
``BUILTIN_OPERATORS`` and ``OP_OPTIONS`` are views of it. The builtin-options tables
(``OPTIONS_TABLES``) live in ``options.py`` and are re-exported here.

Where to look next: ``writer.py`` (builds files from these facts); docs/format.md (their meaning).
"""

from __future__ import annotations

from .ops import OPS

# re-exported: the options tables are schema facts too
from .options import OP_OPTIONS as OP_OPTIONS
from .options import OPTIONS_TABLES as OPTIONS_TABLES
from .options import OptionField as OptionField
from .options import OptionsTable as OptionsTable
from .options import options_table as options_table

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3


# BuiltinOperator: operator name -> builtin code, and back (views of ops.OPS, the one table).
BUILTIN_OPERATORS: dict[str, int] = {op.name: op.code for op in OPS}
BUILTIN_OPERATOR_NAMES: dict[int, str] = {op.code: op.name for op in OPS}

# TensorType: type name -> number stored in Tensor.type.
TENSOR_TYPES: dict[str, int] = {
    "FLOAT32": 0,
    "FLOAT16": 1,
    "INT32": 2,
    "UINT8": 3,
    "INT64": 4,
    "STRING": 5,
    "BOOL": 6,
    "INT16": 7,
    "COMPLEX64": 8,
    "INT8": 9,
    "FLOAT64": 10,
    "COMPLEX128": 11,
    "UINT64": 12,
    "RESOURCE": 13,
    "VARIANT": 14,
    "UINT32": 15,
    "UINT16": 16,
    "INT4": 17,
    "BFLOAT16": 18,
    "INT2": 19,
    "UINT4": 20,
    "FLOAT8_E4M3FN": 21,
    "FLOAT8_E5M2": 22,
}
TENSOR_TYPE_NAMES: dict[int, str] = {v: k for k, v in TENSOR_TYPES.items()}

# Enums used by options tables (and a few core tables): enum name -> {member: value}.
ENUMS: dict[str, dict[str, int]] = {
    "DimensionType": {"DENSE": 0, "SPARSE_CSR": 1},
    "StablehloPrecisionConfig": {"DEFAULT": 0, "HIGH": 1, "HIGHEST": 2},
    "StablehloComparisonDirection": {
        "STABLEHLO_COMPARISON_DIRECTION_EQ": 0,
        "STABLEHLO_COMPARISON_DIRECTION_NE": 1,
        "STABLEHLO_COMPARISON_DIRECTION_GE": 2,
        "STABLEHLO_COMPARISON_DIRECTION_GT": 3,
        "STABLEHLO_COMPARISON_DIRECTION_LE": 4,
        "STABLEHLO_COMPARISON_DIRECTION_LT": 5,
    },
    "StablehloComparisonType": {
        "STABLEHLO_COMPARISON_TYPE_NOTYPE": 0,
        "STABLEHLO_COMPARISON_TYPE_FLOAT": 1,
        "STABLEHLO_COMPARISON_TYPE_FLOAT_TOTAL_ORDER": 2,
        "STABLEHLO_COMPARISON_TYPE_SIGNED": 3,
        "STABLEHLO_COMPARISON_TYPE_UNSIGNED": 4,
    },
    "RngAlgorithm": {"DEFAULT": 0, "PHILOX": 1, "THREEFRY": 2},
    "Padding": {"SAME": 0, "VALID": 1},
    "ActivationFunctionType": {
        "NONE": 0,
        "RELU": 1,
        "RELU_N1_TO_1": 2,
        "RELU6": 3,
        "TANH": 4,
        "SIGN_BIT": 5,
    },
    "LSHProjectionType": {"UNKNOWN": 0, "SPARSE": 1, "DENSE": 2},
    "FullyConnectedOptionsWeightsFormat": {"DEFAULT": 0, "SHUFFLED4x16INT8": 1},
    "LSTMKernelType": {"FULL": 0, "BASIC": 1},
    "CombinerType": {"SUM": 0, "MEAN": 1, "SQRTN": 2},
    "MirrorPadMode": {"REFLECT": 0, "SYMMETRIC": 1},
    "ReduceWindowFunction": {
        "UNSUPPORTED": 0,
        "ADD": 1,
        "MUL": 2,
        "MINIMUM": 3,
        "MAXIMUM": 4,
        "ALL": 5,
        "ANY": 6,
    },
    "CustomOptionsFormat": {"FLEXBUFFERS": 0},
    "TensorType": TENSOR_TYPES,
    "BuiltinOperator": BUILTIN_OPERATORS,
}

# Field ids of the core tables (table -> field name -> id). Unions list their type field;
# the value field is id + 1.  Deprecated fields are omitted.
CORE_FIELDS: dict[str, dict[str, int]] = {
    "Model": {
        "version": 0,
        "operator_codes": 1,
        "subgraphs": 2,
        "description": 3,
        "buffers": 4,
        "metadata_buffer": 5,
        "metadata": 6,
        "signature_defs": 7,
        "external_buffer_groups": 8,
        "external_buffers": 9,
    },
    "SubGraph": {
        "tensors": 0,
        "inputs": 1,
        "outputs": 2,
        "operators": 3,
        "name": 4,
        "debug_metadata_index": 5,
    },
    "Tensor": {
        "shape": 0,
        "type": 1,
        "buffer": 2,
        "name": 3,
        "quantization": 4,
        "is_variable": 5,
        "sparsity": 6,
        "shape_signature": 7,
        "has_rank": 8,
        "variant_tensors": 9,
        "external_buffer": 10,
    },
    "Buffer": {"data": 0, "offset": 1, "size": 2},
    "OperatorCode": {
        "deprecated_builtin_code": 0,
        "custom_code": 1,
        "version": 2,
        "builtin_code": 3,
    },
    "Operator": {
        "opcode_index": 0,
        "inputs": 1,
        "outputs": 2,
        "builtin_options": 3,
        "custom_options": 5,
        "custom_options_format": 6,
        "mutating_variable_inputs": 7,
        "intermediates": 8,
        "large_custom_options_offset": 9,
        "large_custom_options_size": 10,
        "builtin_options_2": 11,
        "debug_metadata_index": 13,
    },
    "QuantizationParameters": {
        "min": 0,
        "max": 1,
        "scale": 2,
        "zero_point": 3,
        "details": 4,
        "quantized_dimension": 6,
    },
    "SignatureDef": {"inputs": 0, "outputs": 1, "signature_key": 2, "subgraph_index": 4},
    "TensorMap": {"name": 0, "tensor_index": 1},
    "Metadata": {"name": 0, "buffer": 1},
    "CustomQuantization": {"custom": 0},
}
