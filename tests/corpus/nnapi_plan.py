"""The NNAPI plan of every real file in the corpus: ``python -m tests.corpus.nnapi_plan``.

For each .tflite file already in the corpus cache (``mediapipe/``, ``keras/``, ``minilm/``; this
builds nothing) and each NNAPI feature level of LEVELS, the NNAPI delegate's planning mode
(``wick.target.plan``: ``plan_level=N``, no library opened, nothing run) says how many operators
a level-N runtime would take and in how many partitions; the decline reasons are counted across
the corpus (the level in a reason's "(the plan is for N ...)" tail dropped, so one reason counts
once at every level).  Cheap: every file is loaded and planned, never executed.

    python -m tests.corpus.nnapi_plan            # print the section
    python -m tests.corpus.nnapi_plan --write    # and replace it in docs/nnapi.md

The section sits between the NNAPI_PLAN_BEGIN / NNAPI_PLAN_END comments of docs/nnapi.md.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

from .sources import corpus_dir

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "nnapi.md"
BEGIN = "<!-- NNAPI_PLAN_BEGIN: written by python -m tests.corpus.nnapi_plan --write -->"
END = "<!-- NNAPI_PLAN_END -->"
LEVELS = (27, 29, 31)
SOURCES = ("mediapipe", "keras", "minilm")
TOP_REASONS = 20
FOLDED = "(computed at prepare)"


def corpus_files(root: Path) -> list[Path]:
    return [p for s in SOURCES for p in sorted((root / s).glob("*.tflite"))]


def general_reason(op: str, reason: str) -> str:
    """A decline reason without what varies from level to level or file to file."""
    reason = re.sub(r" \((the plan is for|the runtime offers) [^()]*\([^()]*\)\)", "", reason)
    reason = re.sub(r"the graph already has \d+ partitions", "the graph already has N partitions",
                    reason)  # fmt: skip
    reason = re.sub(r"a partition of \d+ nodes?, given up", "a partition of N nodes, given up",
                    reason)  # fmt: skip
    return reason if reason.startswith(op) else f"{op}: {reason}"


def plan_corpus(root: Path):
    """[(file, total, {level: (taken, partitions)} or an error)], {level: Counter(reason)}."""
    from wick.target import plan

    rows, reasons = [], {lv: Counter() for lv in LEVELS}
    for path in corpus_files(root):
        data = path.read_bytes()
        per_level, total = {}, 0
        try:
            for lv in LEVELS:
                r = plan(data, lv)
                total = r.total
                per_level[lv] = (r.taken, len(r.partitions))
                for d in r.declined:
                    # a constant the runtime computes at prepare (a DEQUANTIZE of fp16 weights,
                    # a SHAPE) is no operator to decline: counted apart
                    folded = d.reason.endswith("computed at prepare")
                    reasons[lv][FOLDED if folded else general_reason(d.op, d.reason)] += 1
        except Exception as e:  # a file wick cannot load is listed with why
            per_level = f"not planned: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        rows.append((path.relative_to(root).as_posix(), total, per_level))
    return rows, reasons


def render(rows, reasons, seconds: float) -> str:
    head = " | ".join(f"level {lv}" for lv in LEVELS)
    out = [
        BEGIN,
        "",
        f"Every file of the corpus cache ({', '.join(s + '/' for s in SOURCES)}: "
        f"{len(rows)} files) planned at levels {', '.join(map(str, LEVELS))}: operators "
        "NNAPI would take of the total, and (in parentheses) the partitions it would compile. "
        f"Planning only (`plan_level=N`, no library, nothing run): {seconds:.0f} s for the lot.",
        "",
        f"| file | operators | {head} |",
        "|---|---:|" + "---:|" * len(LEVELS),
    ]
    whole = Counter()
    for name, total, per_level in rows:
        if isinstance(per_level, str):
            out.append(f"| {name} | | {per_level} |" + " |" * (len(LEVELS) - 1))
            continue
        cells = []
        for lv in LEVELS:
            taken, parts = per_level[lv]
            cells.append(f"{taken} ({parts})")
            whole[lv] += taken == total and parts <= 1
        out.append(f"| {name} | {total} | " + " | ".join(cells) + " |")
    planned = sum(1 for r in rows if not isinstance(r[2], str))
    out += [
        "",
        "Files NNAPI would run whole (every operator, one partition): "
        + ", ".join(f"{whole[lv]} of {planned} at {lv}" for lv in LEVELS)
        + ".",
        "",
        f"The {TOP_REASONS} most frequent reasons for declining an operator, counted over the "
        "operators of every file:",
        "",
        f"| reason | {head} |",
        "|---|" + "---:|" * len(LEVELS),
    ]
    everywhere = Counter()
    for lv in LEVELS:
        everywhere.update(reasons[lv])
    folded = everywhere.pop(FOLDED, 0) // len(LEVELS)
    for reason, _ in everywhere.most_common(TOP_REASONS):
        cells = " | ".join(str(reasons[lv][reason]) for lv in LEVELS)
        out.append(f"| {reason.replace('|', '/')} | {cells} |")
    out += [
        "",
        f"Not counted above as declines: {folded} operators the runtime computes once at prepare "
        "(constant DEQUANTIZEs of fp16 weights, SHAPE, ...; in the totals, on the CPU). "
        "'accepted, but the graph already has N partitions': the delegate took the operator but "
        "the runtime's cap of 64 partitions per graph was reached; 'a partition of N nodes, given "
        "up for larger ones': one of the smaller partitions the runtime gave up at the cap so that "
        "larger ones get a slot (docs/delegates.md).",
        "",
        END,
    ]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.corpus.nnapi_plan", description=__doc__)
    ap.add_argument("--write", action="store_true", help="replace the section in docs/nnapi.md")
    args = ap.parse_args(argv)
    root = corpus_dir()
    if not corpus_files(root):
        print(f"no corpus files under {root} (python -m tests.corpus builds them)", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    rows, reasons = plan_corpus(root)
    text = render(rows, reasons, time.perf_counter() - t0)
    print(text)
    if args.write:
        doc = DOC.read_text()
        if BEGIN not in doc or END not in doc:
            print(f"{DOC} has no {BEGIN} ... {END} section", file=sys.stderr)
            return 1
        start, stop = doc.index(BEGIN), doc.index(END) + len(END)
        DOC.write_text(doc[:start] + text + doc[stop:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
