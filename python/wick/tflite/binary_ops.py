"""The elementwise binary ops — arithmetic (ADD ... FLOOR_MOD), comparisons (EQUAL ...
GREATER_EQUAL) and logical (LOGICAL_AND, LOGICAL_OR) — read from their records in the runtime's
``src/kernels/reference/binary_ops.inc``.

That file holds one line per op — its C kernel, version and flags for the runtime, and what the
converter and the tests need: the ATen op it lowers from, the values the tests draw and the numpy
oracle. The C side includes it; this module reads the same lines, so the converter's lowering
rules (``converter/lower/elementwise.py``), the layout pass's list of elementwise n-ary ops
(``converter/passes/layout.py``) and the test cases (``tests/python/ops/test_elementwise_binary.py``,
``tests/python/converter/test_ops.py``) are derived from it, and adding a plain op there needs
no Python edit. The field meanings are stated at the top of the .inc file; it is found and read
as ``wick.tflite.op_records`` says.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

from . import op_records

FILE_NAME = "binary_ops.inc"

TYPES = ("F32", "F32_I32_I64", "F32_I32_I64_C64")
OPTIONS = ("ACTIVATION", "NONE")
RESULTS = ("EXACT", "APPROX")
DOMAINS = ("REAL", "NONZERO", "POSITIVE")
ARITHMETIC_FIELDS = 15
COMPARE_FIELDS = 6


class BinaryOp(NamedTuple):
    """One WICK_BINARY_F32 record: an arithmetic op."""

    name: str  # the TFLite builtin name (MAXIMUM)
    symbol: str  # the lowercase name of its C record, wick_op_<symbol>
    kernel: str  # the float32 C expression of x and y
    version: int  # newest version the runtime implements
    flags: str  # the C record's flags: a C expression of WICK_OP_* (src/core/op_api.h), or 0
    types: str  # the element types the runtime accepts (F32, F32_I32_I64, ...)
    activation: bool  # its options hold a fused activation (OPTIONS ACTIVATION)
    a_lo: float  # the C op sweep's input ranges
    a_hi: float
    b_lo: float
    b_hi: float
    result: str  # EXACT or APPROX (the op sweep's comparison)
    domain: str  # REAL, NONZERO or POSITIVE: what the Python tests draw
    aten: str | None  # the ATen op lowered to it alone, or None
    numpy: str  # the numpy oracle, an expression of the arrays x and y


class CompareOp(NamedTuple):
    """One WICK_COMPARE or WICK_LOGICAL record: a comparison or a logical op (bool output)."""

    name: str
    symbol: str
    kernel: str  # the C expression of x and y
    version: int
    aten: str | None
    numpy: str
    logical: bool  # a WICK_LOGICAL record: bool inputs only


def _oracle(field: str, where: str) -> str:
    if not re.fullmatch(r'"[^"\\]*"', field):
        raise ValueError(f"{where}: oracle {field!r}: a numpy expression in a string")
    return field[1:-1]


def _aten(field: str) -> str | None:
    return None if field == "NO_ATEN" else field


def parse(text: str, source: str = FILE_NAME) -> tuple[BinaryOp | CompareOp, ...]:
    """The records of a binary_ops.inc text, in its order; ValueError naming the line of a
    malformed one."""
    macros = {
        "WICK_BINARY_F32": ARITHMETIC_FIELDS,
        "WICK_COMPARE": COMPARE_FIELDS,
        "WICK_LOGICAL": COMPARE_FIELDS,
    }
    out: list[BinaryOp | CompareOp] = []
    for macro, f, where in op_records.records(text, macros, source):
        head = op_records.head(f, where)
        if macro != "WICK_BINARY_F32":
            aten, oracle = f[4:]
            logical = macro == "WICK_LOGICAL"
            out.append(CompareOp(*head, _aten(aten), _oracle(oracle, where), logical))
            continue
        flags, types, options, a_lo, a_hi, b_lo, b_hi, result, domain, aten, oracle = f[4:]
        op_records.check_choice("types", types, TYPES, where)
        op_records.check_choice("options", options, OPTIONS, where)
        op_records.check_choice("result", result, RESULTS, where)
        op_records.check_choice("domain", domain, DOMAINS, where)
        ranges = (float(a_lo), float(a_hi), float(b_lo), float(b_hi))
        activation = options == "ACTIVATION"
        numpy = _oracle(oracle, where)
        out.append(
            BinaryOp(*head, flags, types, activation, *ranges, result, domain, _aten(aten), numpy)
        )
    op_records.check_unique([r.name for r in out], source)
    return tuple(out)


def path() -> Path:
    """Where binary_ops.inc is (the package's copy first)."""
    return op_records.path(FILE_NAME)


@functools.cache
def records() -> tuple[BinaryOp | CompareOp, ...]:
    """Every record of binary_ops.inc, in its order (the order of the runtime's enums)."""
    p = path()
    return parse(p.read_text(), str(p))


def arithmetic_ops() -> tuple[BinaryOp, ...]:
    """The arithmetic records (ADD ... FLOOR_MOD)."""
    return tuple(r for r in records() if isinstance(r, BinaryOp))


def compare_ops(*, logical: bool) -> tuple[CompareOp, ...]:
    """The comparisons (EQUAL ... GREATER_EQUAL), or with logical=True LOGICAL_AND, LOGICAL_OR."""
    return tuple(r for r in records() if isinstance(r, CompareOp) and r.logical == logical)
