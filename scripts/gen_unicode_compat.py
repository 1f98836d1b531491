#!/usr/bin/env python3
"""gen_unicode_compat.py — writes src/llm/unicode_compat.h: the tables that the NFKD, NFKC and
Lowercase normalizers of src/llm/tokenizer.c add to the NFC ones (unicode_nfc.h, whose NFD part
they share), as HuggingFace ``tokenizers`` computes them:

* ``compat_decomp`` + ``compat_decomp_pool``: the full compatibility decomposition (NFKD of the
  character alone, already recursive) of every character whose NFKD differs from its NFD,
  sorted by code point; the others decompose canonically (unicode_nfc.h's table);
* ``lower_ranges``: the simple lowercase mappings as runs ``{first, last, stride, delta}``: every
  ``stride``-th code point from ``first`` to ``last`` lowercases to itself + ``delta`` (A-Z is
  one run, Latin Extended-A's alternating pairs a few). The one full mapping longer than one
  character, U+0130 -> "i\u0307", is tokenizer.c's.

Unicode versions, as ``tokenizers`` 0.23.3 has them (tests/python/llm/test_tokenizer_normalizers.py
compares every code point):

* NFKD / NFKC: its normalization crate (unicode-normalization-alignments 0.1.12) has Unicode 9.0
  tables, as for NFC (scripts/gen_unicode_nfc.py says more): decompositions of the characters of
  age <= 9.0 only (U+1F16A decomposes, U+1F16C of Unicode 12 does not), taken from Unicode 16's
  data (the stability policy keeps an assigned character's decomposition fixed).
* Lowercase: tokenizers lowercases each character with Rust's ``char::to_lowercase`` (full
  mappings, no final-sigma rule: "ΣΑΣ" -> "σασ"), which has Unicode 17.0 in the Rust that
  built it (U+A7CB, new in 16.0, lowercases to U+0264; U+A7CE, new in 17.0, to U+A7CF). The
  mappings of characters of Unicode 14 and earlier come from Python 3.11's ``str.lower``
  (Unicode 14.0; case pairs are stable); the uppercase letters added in 15.0-17.0 (Garay, Beria
  Erfe, U+1C89, U+A7CB, ...) get the small letter of the same name in unicodedata2's Unicode
  17 data.

Regenerate (with the same Python 3.11 as the venv, unicodedataplus 16 as for the NFC tables and
unicodedata2 17):

    python -m pip install --target /tmp/ud "unicodedataplus==16.0.0.post1" "unicodedata2==17.0.1"
    PYTHONPATH=/tmp/ud python scripts/gen_unicode_compat.py > src/llm/unicode_compat.h
    clang-format -i src/llm/unicode_compat.h
"""

from __future__ import annotations

import sys
import unicodedata

UNICODE_VERSION = "16.0.0"
NORMALIZATION_AGE = (9, 0)  # tokenizers' unicode-normalization-alignments 0.1.12
PYTHON_UNICODE = "14.0.0"  # Python 3.11's str.lower
LOWERCASE_VERSION = "17.0.0"  # Rust's char::to_lowercase in tokenizers 0.23.3
HANGUL_SYLLABLES = range(0xAC00, 0xAC00 + 11172)


def _age(ud, ch: str) -> tuple[int, int] | None:
    a = ud.age(ch)
    if not a or "." not in a:  # "Unassigned"
        return None
    major, minor = a.split(".")[:2]
    return int(major), int(minor)


def compat_decompositions(ud) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF or c in HANGUL_SYLLABLES:
            continue
        ch = chr(c)
        age = _age(ud, ch)
        if age is None or age > NORMALIZATION_AGE:
            continue
        nfkd = ud.normalize("NFKD", ch)
        if nfkd != ud.normalize("NFD", ch):
            out[c] = [ord(x) for x in nfkd]
    return out


def lowercase(ud2) -> dict[int, int]:
    """Single-character lowercase mappings (U+0130 left out: tokenizer.c has it)."""
    out: dict[int, int] = {}
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF or c == 0x130:
            continue
        ch = chr(c)
        if unicodedata.category(ch) != "Cn":  # known to Python's Unicode 14
            low = ch.lower()
            assert len(low) == 1, hex(c)
        elif ud2.category(ch) == "Lu":  # an uppercase letter of Unicode 15-17
            name = ud2.name(ch)
            assert "CAPITAL" in name, name
            low = ud2.lookup(name.replace("CAPITAL", "SMALL"))
        else:
            continue
        if low != ch:
            out[c] = ord(low)
    return out


def delta_runs(mapping: dict[int, int]) -> list[tuple[int, int, int, int]]:
    """(first, last, stride, delta) runs covering ``mapping`` exactly."""
    runs: list[list[int]] = []
    for c in sorted(mapping):
        d = mapping[c] - c
        if runs:
            first, last, stride, delta = runs[-1]
            if delta == d and ((first == last and c - last in (1, 2)) or c - last == stride):
                runs[-1] = [first, c, c - last, delta]
                continue
        runs.append([c, c, 1, d])
    return [tuple(r) for r in runs]


def main() -> None:
    import unicodedata2 as ud2
    import unicodedataplus as ud

    if ud2.unidata_version != LOWERCASE_VERSION:
        sys.exit(f"unicodedata2 has Unicode {ud2.unidata_version}, not {LOWERCASE_VERSION}")
    if ud.unidata_version != UNICODE_VERSION:
        sys.exit(f"unicodedataplus has Unicode {ud.unidata_version}, not {UNICODE_VERSION}")
    if unicodedata.unidata_version != PYTHON_UNICODE:
        sys.exit(f"this Python has Unicode {unicodedata.unidata_version}, not {PYTHON_UNICODE}")
    decomp = compat_decompositions(ud)
    lower = lowercase(ud2)
    runs = delta_runs(lower)
    for first, last, stride, delta in runs:  # the runs say exactly the mapping
        assert all(lower.get(c) == c + delta for c in range(first, last + 1, stride))
        assert all(c not in lower for c in range(first, last + 1) if (c - first) % stride)
    assert sum(len(range(a, b + 1, s)) for a, b, s, _ in runs) == len(lower)
    pool: list[int] = []
    entries = []
    for c in sorted(decomp):
        entries.append((c, len(pool), len(decomp[c])))
        pool += decomp[c]
    longest = max(len(v) for v in decomp.values())
    assert len(pool) < 65536 and longest <= 18
    # tokenizer.c's room: 6 code points and 11 UTF-8 bytes per byte of the text at most
    for c, v in decomp.items():
        size = len(chr(c).encode())
        assert len(v) <= 6 * size and len("".join(map(chr, v)).encode()) <= 11 * size, hex(c)
    age = f"{NORMALIZATION_AGE[0]}.{NORMALIZATION_AGE[1]}.0"
    p = print
    p("/*")
    p(" * unicode_compat.h — GENERATED by scripts/gen_unicode_compat.py (its header says")
    p(" * how to regenerate and why the versions); do not edit. The compatibility")
    p(f" * decompositions of Unicode {age} (NFKD, NFKC: the characters whose NFKD is not")
    p(" * their NFD) and the simple lowercase mappings of Unicode 17.0 as runs, as")
    p(" * HuggingFace tokenizers normalizes; sorted for binary search. Included by")
    p(" * tokenizer.c only, after unicode_nfc.h.")
    p(" */")
    p("#ifndef WICK_LLM_UNICODE_COMPAT_H")
    p("#define WICK_LLM_UNICODE_COMPAT_H")
    p()
    p("#include <stdint.h>")
    p()
    p("typedef struct lower_run {")
    p("  uint32_t first, last; /* inclusive */")
    p("  uint8_t stride;       /* every stride-th code point from first maps */")
    p("  int32_t delta;        /* to itself + delta */")
    p("} lower_run;")
    p()
    p(f"#define COMPAT_LONGEST {longest} /* code points of the longest decomposition */")
    p(f"#define COMPAT_DECOMP_COUNT {len(entries)}")
    p("static const nfc_decomposition compat_decomp[COMPAT_DECOMP_COUNT] = {")
    for c, s, n in entries:
        p(f"    {{0x{c:X}, {s}, {n}}},")
    p("};")
    p(f"static const uint32_t compat_decomp_pool[{len(pool)}] = {{")
    p("    " + ", ".join(f"0x{x:X}" for x in pool))
    p("};")
    p()
    p(f"#define LOWER_RUN_COUNT {len(runs)}")
    p("static const lower_run lower_runs[LOWER_RUN_COUNT] = {")
    for a, b, s, d in runs:
        p(f"    {{0x{a:X}, 0x{b:X}, {s}, {d}}},")
    p("};")
    p()
    p("#endif")


if __name__ == "__main__":
    main()
