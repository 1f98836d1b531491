"""Reading the runtime's op record files (``src/kernels/reference/*_ops.inc``).

Such a file holds one C macro call per op — ``WICK_UNARY_F32(...)`` in ``unary_ops.inc``,
``WICK_BINARY_F32(...)``, ``WICK_COMPARE(...)`` and ``WICK_LOGICAL(...)`` in ``binary_ops.inc`` —
that the C side includes and this module reads, so the converter and the tests are derived from
the same lines as the runtime (``wick.tflite.unary_ops``, ``wick.tflite.binary_ops``).

A record is one line: its fields are split at the commas outside parentheses and string
literals; comments and preprocessor lines are ignored. A file is looked up in the package
(``wick/_data/<file>``, where a wheel installs it: CMakeLists.txt) and then in the source tree
the package sits in (a checkout, an editable install).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def candidates(file_name: str) -> tuple[Path, ...]:
    """Where a record file may be, the package's copy first."""
    return (
        _HERE.parent / "_data" / file_name,
        _HERE.parents[2] / "src" / "kernels" / "reference" / file_name,
    )


def path(file_name: str) -> Path:
    """The record file's path; FileNotFoundError naming the places looked in."""
    places = candidates(file_name)
    for p in places:
        if p.is_file():
            return p
    raise FileNotFoundError(
        f"{file_name} is neither in the wick package nor in its source tree; looked in "
        + ", ".join(str(p) for p in places)
    )


def strip_comments(text: str) -> str:
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


def split_args(args: str) -> list[str]:
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


def records(text: str, macros: dict[str, int], source: str) -> Iterator[tuple[str, list[str], str]]:
    """(macro, fields, where) of each record of a file's text, where is ``source:line``.

    ``macros`` maps each record macro to its number of fields; ValueError naming the line of
    anything else, or of a record with another number of fields.
    """
    names = " or ".join(f"{m}(...)" for m in macros)
    for lineno, line in enumerate(strip_comments(text).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source}:{lineno}"
        m = re.fullmatch(r"(\w+)\((.*)\)", line)
        if m is None or m.group(1) not in macros:
            raise ValueError(f"{where}: not a {names} record: {line}")
        fields = split_args(m.group(2))
        if len(fields) != macros[m.group(1)]:
            raise ValueError(f"{where}: {len(fields)} fields, a record has {macros[m.group(1)]}")
        yield m.group(1), fields, where


def head(fields: list[str], where: str) -> tuple[str, str, str, int]:
    """The four fields every record opens with: NAME (a builtin's upper-case name), its symbol
    (that name in lower case), KERNEL (a C expression) and VERSION (a number)."""
    name, symbol, kernel, version = fields[:4]
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or symbol != name.lower():
        raise ValueError(f"{where}: name {name!r} / symbol {symbol!r}")
    return name, symbol, kernel, int(version)


def check_choice(field: str, value: str, choices: tuple[str, ...], where: str) -> None:
    if value not in choices:
        raise ValueError(f"{where}: {field} {value!r} unknown (one of {choices})")


def check_unique(names: list[str], source: str) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"{source}: an op has two records")
