"""THE lowering table: ATen op (``name.overload``, e.g. ``convolution.default``) -> rule.

A rule is ``rule(ctx, node)``: it emits TFLite builtin ops only (so stock LiteRT runs every
file) and binds the node's outputs (see context.py).  The table is assembled from the sections
kept next to their rules — elementwise.py, nn.py, shape.py, reduce.py — and nowhere else; an
op missing here fails conversion with ConversionError naming the op and the source line.

Ops that only exist to carry symbolic sizes or assertions are handled by the driver
(lower/__init__.py), not here.
"""

from __future__ import annotations

from . import elementwise, nn, reduce, shape

LOWERINGS: dict = {}
for _section in (elementwise.RULES, nn.RULES, shape.RULES, reduce.RULES):
    for _k, _v in _section.items():
        if _k in LOWERINGS:
            raise AssertionError(f"duplicate lowering for {_k}")
        LOWERINGS[_k] = _v


def lookup(op_name: str):
    """Rule for an ATen op name as printed by ir.op_name ('aten.add.Tensor')."""
    key = op_name[5:] if op_name.startswith("aten.") else op_name
    return LOWERINGS.get(key)


def supported_ops() -> list[str]:
    return sorted(f"aten.{k}" for k in LOWERINGS)
