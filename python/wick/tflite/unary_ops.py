"""The float unary math ops (RELU ... SIGN), read from their records in the runtime's
``src/kernels/reference/unary_ops.inc``.

That file holds one line per op — its C kernel, version and flags for the runtime, and what the
converter and the tests need: the ATen op it lowers from, the values the tests draw and the oracle
they compare with. The C side includes it; this module reads the same lines, so the converter's
lowering rules (``converter/lower/elementwise.py``), the layout pass's list of unary ops
(``converter/passes/layout.py``) and the test cases (``tests/python/ops/test_unary.py``,
``tests/python/converter/test_ops.py``) are derived from it, and adding a plain op there needs no
Python edit. The field meanings are stated at the top of the .inc file.

The file is looked up in the package (``wick/_data/unary_ops.inc``, where a wheel installs it:
CMakeLists.txt) and then in the source tree the package sits in (a checkout, an editable install):
``wick.tflite.op_records`` reads it.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

from . import op_records

FILE_NAME = "unary_ops.inc"
CANDIDATES = op_records.candidates(FILE_NAME)

DOMAINS = ("REAL", "POSITIVE", "HALVES")
RESULTS = ("EXACT", "APPROX")
FIELDS = 12


class UnaryOp(NamedTuple):
    """One record of unary_ops.inc."""

    name: str  # the TFLite builtin name (CEIL)
    symbol: str  # the lowercase name of its C record, wick_op_<symbol>
    kernel: str  # the float32 C expression of x
    version: int  # newest version the runtime implements
    flags: str  # the C record's flags: a C expression of WICK_OP_* (src/core/op_api.h), or 0
    types: str  # the element types the runtime accepts (F32, F32_I16_I32, ...)
    sweep_lo: float  # the C op sweep's input range
    sweep_hi: float
    result: str  # EXACT or APPROX (the op sweep's comparison)
    domain: str  # REAL, POSITIVE or HALVES: what the Python tests draw
    aten: str | None  # the ATen op lowered to it alone (`<aten>.default`), or None
    numpy: str | None  # the numpy oracle (an expression of x) when LiteRT's reference lacks it

    @property
    def litert_reference(self) -> bool:
        """Whether LiteRT's reference resolver (BUILTIN_REF) registers the op."""
        return self.numpy is None


def parse(text: str, source: str = FILE_NAME) -> tuple[UnaryOp, ...]:
    """The records of an unary_ops.inc text; ValueError naming the line of a malformed one."""
    records = []
    for _, f, where in op_records.records(text, {"WICK_UNARY_F32": FIELDS}, source):
        head = op_records.head(f, where)
        flags, types, lo, hi, result, domain, aten, oracle = f[4:]
        op_records.check_choice("result", result, RESULTS, where)
        op_records.check_choice("domain", domain, DOMAINS, where)
        if oracle != "LITERT_REF" and not re.fullmatch(r'"[^"\\]*"', oracle):
            raise ValueError(f"{where}: oracle {oracle!r}: LITERT_REF or a string")
        aten_op = None if aten == "NO_ATEN" else aten
        numpy = None if oracle == "LITERT_REF" else oracle[1:-1]
        records.append(
            UnaryOp(*head, flags, types, float(lo), float(hi), result, domain, aten_op, numpy)
        )
    op_records.check_unique([r.name for r in records], source)
    return tuple(records)


def path() -> Path:
    """Where unary_ops.inc is (the package's copy first)."""
    return op_records.path(FILE_NAME)


@functools.cache
def unary_ops() -> tuple[UnaryOp, ...]:
    """Every record of unary_ops.inc, in its order (the order of the runtime's enum)."""
    p = path()
    return parse(p.read_text(), str(p))
