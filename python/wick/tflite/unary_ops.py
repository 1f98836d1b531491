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
CMakeLists.txt) and then in the source tree the package sits in (a checkout, an editable install).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import NamedTuple

FILE_NAME = "unary_ops.inc"
_HERE = Path(__file__).resolve().parent
CANDIDATES = (
    _HERE.parent / "_data" / FILE_NAME,
    _HERE.parents[2] / "src" / "kernels" / "reference" / FILE_NAME,
)

DOMAINS = ("REAL", "POSITIVE", "HALVES")
RESULTS = ("EXACT", "APPROX")
FIELDS = 12


class UnaryOp(NamedTuple):
    """One record of unary_ops.inc."""

    name: str  # the TFLite builtin name (CEIL)
    symbol: str  # the lowercase name of its C record, wick_op_<symbol>
    kernel: str  # the float32 C expression of x
    version: int  # newest version the runtime implements
    flags: str  # the C record's flags (WICK_OP_ELEMENTWISE or 0)
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


def _strip_comments(text: str) -> str:
    """The text without /* */ and // comments (string literals kept), newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text[i] == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _split_args(args: str) -> list[str]:
    """Macro arguments: split at the commas outside parentheses and string literals."""
    fields, depth, start, i = [], 0, 0, 0
    while i < len(args):
        c = args[i]
        if c == '"':
            i = args.index('"', i + 1)
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            fields.append(args[start:i].strip())
            start = i + 1
        i += 1
    fields.append(args[start:].strip())
    return fields


def parse(text: str, source: str = FILE_NAME) -> tuple[UnaryOp, ...]:
    """The records of an unary_ops.inc text; ValueError naming the line of a malformed one."""
    records = []
    for lineno, line in enumerate(_strip_comments(text).splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        m = re.fullmatch(r"WICK_UNARY_F32\((.*)\)", line)
        if m is None:
            raise ValueError(f"{source}:{lineno}: not a WICK_UNARY_F32(...) record: {line}")
        f = _split_args(m.group(1))
        if len(f) != FIELDS:
            raise ValueError(f"{source}:{lineno}: {len(f)} fields, a record has {FIELDS}")
        name, symbol, kernel, version, flags, types, lo, hi, result, domain, aten, oracle = f
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or symbol != name.lower():
            raise ValueError(f"{source}:{lineno}: name {name!r} / symbol {symbol!r}")
        if result not in RESULTS:
            raise ValueError(f"{source}:{lineno}: result {result!r} unknown (one of {RESULTS})")
        if domain not in DOMAINS:
            raise ValueError(f"{source}:{lineno}: domain {domain!r} unknown (one of {DOMAINS})")
        if oracle != "LITERT_REF" and not re.fullmatch(r'"[^"\\]*"', oracle):
            raise ValueError(f"{source}:{lineno}: oracle {oracle!r}: LITERT_REF or a string")
        records.append(
            UnaryOp(
                name=name,
                symbol=symbol,
                kernel=kernel,
                version=int(version),
                flags=flags,
                types=types,
                sweep_lo=float(lo),
                sweep_hi=float(hi),
                result=result,
                domain=domain,
                aten=None if aten == "NO_ATEN" else aten,
                numpy=None if oracle == "LITERT_REF" else oracle[1:-1],
            )
        )
    names = [r.name for r in records]
    if len(set(names)) != len(names):
        raise ValueError(f"{source}: an op has two records")
    return tuple(records)


def path() -> Path:
    """Where unary_ops.inc is (the package's copy first)."""
    for p in CANDIDATES:
        if p.is_file():
            return p
    raise FileNotFoundError(
        f"{FILE_NAME} is neither in the wick package nor in its source tree; looked in "
        + ", ".join(str(p) for p in CANDIDATES)
    )


@functools.cache
def unary_ops() -> tuple[UnaryOp, ...]:
    """Every record of unary_ops.inc, in its order (the order of the runtime's enum)."""
    p = path()
    return parse(p.read_text(), str(p))
