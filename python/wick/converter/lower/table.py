"""THE lowering table: ATen op (``name.overload``, e.g. ``convolution.default``) -> rule.

A rule is ``rule(ctx, node)``: it emits TFLite builtin ops only (so stock LiteRT runs every
file) and binds the node's outputs (see context.py).  The table is assembled from the sections
kept next to their rules — elementwise.py, nn.py, norm.py, resize.py, shape.py, reduce.py, quant.py — and
nowhere else; an op missing here fails conversion with ConversionError naming the op and the
source line.

Ops that only exist to carry symbolic sizes or assertions are handled by the driver
(lower/__init__.py), not here.
"""

from __future__ import annotations

from . import elementwise, nn, norm, quant, reduce, resize, shape

LOWERINGS: dict = {}
for _section in (
    elementwise.RULES,
    nn.RULES,
    norm.RULES,
    resize.RULES,
    shape.RULES,
    reduce.RULES,
    quant.RULES,
):
    for _k, _v in _section.items():
        if _k in LOWERINGS:
            raise AssertionError(f"duplicate lowering for {_k}")
        LOWERINGS[_k] = _v


# Every TFLite builtin that lowering or the TFLite-level passes can put in a file.  The converter
# tests check that converted models use nothing else, and compare this set with the runtime's
# src/ops/op_table.inc so the two halves agree about what exists.
EMITTED_OPS = frozenset(
    """
    ABS ADD ARG_MAX ARG_MIN ATAN2 AVERAGE_POOL_2D BATCH_MATMUL BITWISE_XOR BROADCAST_TO CAST
    CEIL CONCATENATION CONV_2D CONV_3D CONV_3D_TRANSPOSE COS CUMSUM DEPTHWISE_CONV_2D DEQUANTIZE DIV ELU EQUAL EXP FILL FLOOR
    FLOOR_DIV FLOOR_MOD FULLY_CONNECTED GATHER IF GATHER_ND GELU GREATER GREATER_EQUAL HARD_SWISH
    LEAKY_RELU LESS LESS_EQUAL LOG LOGICAL_AND LOGICAL_NOT LOGICAL_OR LOGISTIC LOG_SOFTMAX
    MAXIMUM MAX_POOL_2D MEAN MINIMUM MIRROR_PAD MUL NEG NOT_EQUAL PACK PAD PADV2 POW PRELU QUANTIZE RANGE
    REDUCE_ALL REDUCE_ANY REDUCE_MAX REDUCE_MIN REDUCE_PROD RELU RELU6 RELU_N1_TO_1 RESHAPE
    RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR REVERSE_V2 ROUND RSQRT SCATTER_ND SELECT_V2 SHAPE
    SIGN SIN SLICE SOFTMAX SQRT STRIDED_SLICE SUB SUM TANH TILE TOPK_V2 TRANSPOSE WHILE
    TRANSPOSE_CONV
    """.split()
)


def lookup(op_name: str):
    """Rule for an op name as printed by ir.op_name ('aten.add.Tensor'; other namespaces keep
    their prefix: 'quantized_decomposed.quantize_per_tensor.default')."""
    key = op_name[5:] if op_name.startswith("aten.") else op_name
    return LOWERINGS.get(key)


def supported_ops() -> list[str]:
    return sorted(k if k.startswith("quantized_decomposed.") else f"aten.{k}" for k in LOWERINGS)
