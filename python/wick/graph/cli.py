"""`wick graph MODEL.tflite [-o MODEL.html] [--profile TRACE.json]`: write the offline page.

Exit status (as the other wick commands): 0 written, 1 model/trace/Graphviz error (nothing is
written), 2 usage error. A malformed file gets the C verifier's message in the same form as
`wick inspect`: ``wick: PATH: malformed model: ...``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="wick graph",
        description="Write one self-contained HTML page that shows the model's graph: zoom and "
        "pan, details on click, search, shapes on edges, expandable composites and control "
        "flow, highlights of transposes, quantize/dequantize and float islands. Needs "
        "Graphviz (`dot`) at generation time; the page itself needs nothing.",
    )
    p.add_argument("model", help="a .tflite file (or a .pt2 file from torch.export.save)")
    p.add_argument("-o", "--output", help="the page to write (default: MODEL.html)")
    p.add_argument(
        "--profile",
        metavar="TRACE.json",
        help="colour operators by time from `wick bench MODEL --trace TRACE.json`",
    )
    p.add_argument("--title", help="title of the page (default: the file name)")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2

    from .. import runtime
    from . import GraphvizNotFound, LayoutError, load_tflite, to_document, write_html
    from .from_tflite import ProfileError, apply_profile
    from .layout import dot_or_none
    from .tflite_reader import TFLiteReadError

    model = Path(args.model)
    out = Path(args.output) if args.output else model.with_suffix(".html")
    if out.resolve() == model.resolve():
        print("wick graph: the output would overwrite the model; pass -o", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        builtin_layout = dot_or_none() is None  # (a bad $WICK_DOT fails before reading)
        if model.suffix == ".pt2":
            if args.profile:
                print("wick graph: --profile needs a .tflite model", file=sys.stderr)
                return 2
            doc = to_document(model, args.title)
        else:
            data = model.read_bytes()
            doc, f = load_tflite(data, args.title or model.name)
            if args.profile:
                apply_profile(doc, f, args.profile)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            write_html(doc, out)
        for w in caught:
            print(f"wick graph: {w.message}", file=sys.stderr)
    except OSError as e:
        where = e.filename or model
        print(f"wick: {model}: i/o error: cannot open {where}: {e.strerror or e}", file=sys.stderr)
        return 1
    except runtime.WickError as e:
        print(f"wick: {model}: {e}", file=sys.stderr)
        return 1
    except TFLiteReadError as e:
        print(f"wick: {model}: malformed model: {e}", file=sys.stderr)
        return 1
    except (GraphvizNotFound, LayoutError, ProfileError) as e:
        print(f"wick graph: {e}", file=sys.stderr)
        return 1
    n_ops = sum(len(g.ops) for g in doc.graphs)
    size = os.path.getsize(out)
    print(
        f"wrote {out} ({n_ops} ops in {len(doc.graphs)} graph(s), {size / 1024:.0f} KiB) "
        f"in {time.perf_counter() - t0:.2f} s"
        + (
            "; Graphviz is not installed: built-in layout (install graphviz for dot's)"
            if builtin_layout
            else ""
        )
    )
    return 0
