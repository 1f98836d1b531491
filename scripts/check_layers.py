#!/usr/bin/env python3
"""check_layers.py — fails when a C file under src/ includes across a layer the wrong way.

The runtime's layers, lowest first (docs/architecture.md):

    base     visibility, limits, checked arithmetic, memory, messages      src/base
    format   the TFLite schema, the verifying reader, the verified model   src/format
    kernels  compute on raw pointers; knows no model, graph or op          src/kernels
    core     models, interpreters, graphs, planning, fusion, threads       src/core
    ops      the operators, each through the op interface only             src/ops
    llm      text generation over the public API (include/wick/llm.h)      src/llm
    delegates  built-in delegates: the graph only through the public        src/delegates
             delegate API of wick.h, compute through the kernels; the core
             never includes them (they are reached through wick_delegate)

A file may include its own layer and those listed for it below, plus the public header
(wick/...) and system headers. An op includes exactly one core header, core/op_api.h.
Run by `make lint`; prints every violation and exits 1 if there is any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

ALLOWED = {
    "base": {"base"},
    "format": {"base", "format"},
    "kernels": {"kernels"},
    "core": {"base", "format", "kernels", "core"},
    "ops": {"base", "format", "kernels", "ops"},
    "llm": {"llm"},
    "delegates": {"kernels", "delegates"},
}
# Single headers a layer may include from a layer it otherwise may not.
ALLOWED_FILES = {"ops": {"core/op_api.h"}}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def violations() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".c", ".h", ".inc"):
            continue
        layer = path.relative_to(SRC).parts[0]
        if layer not in ALLOWED:
            found.append(f"{path.relative_to(SRC.parent)}: in no known layer ({layer})")
            continue
        for target in INCLUDE.findall(path.read_text()):
            top = target.split("/")[0]
            if top == "wick" or "/" not in target:
                continue  # the public header; a file's own neighbours
            if top in ALLOWED[layer] or target in ALLOWED_FILES.get(layer, ()):
                continue
            found.append(f"{path.relative_to(SRC.parent)}: {layer} includes {target}")
    return found


def main() -> int:
    bad = violations()
    for line in bad:
        print(line)
    if bad:
        print(f"check_layers: {len(bad)} include(s) cross a layer the wrong way")
        return 1
    print("check_layers: every include respects the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
