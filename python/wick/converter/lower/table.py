"""THE lowering table: ATen op (``name.overload``, e.g. ``convolution.default``) -> rule.

A rule is ``rule(ctx, node)``: it emits TFLite builtin ops only (so stock LiteRT runs every
file) and binds the node's outputs (see context.py).  The table is assembled from the sections
kept next to their rules — elementwise.py, nn.py, norm.py, resize.py, shape.py, reduce.py, quant.py — and
nowhere else; an op missing here fails conversion with ConversionError naming the op and the
source line.

Ops that only exist to carry symbolic sizes or assertions are handled by the driver
(lower/__init__.py), not here. The TFLite ops the rules emit are not listed again: the converter
tests check that every op in a converted file is one the wick runtime registers
(src/ops/op_table.inc) and a builtin of wick.tflite.ops.
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


def lookup(op_name: str):
    """Rule for an op name as printed by ir.op_name ('aten.add.Tensor'; other namespaces keep
    their prefix: 'quantized_decomposed.quantize_per_tensor.default')."""
    key = op_name[5:] if op_name.startswith("aten.") else op_name
    return LOWERINGS.get(key)


def supported_ops() -> list[str]:
    return sorted(k if k.startswith("quantized_decomposed.") else f"aten.{k}" for k in LOWERINGS)
