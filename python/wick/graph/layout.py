"""Layered layout of each Graph by Graphviz ``dot``, run as a subprocess at generation time.

The page draws what dot computed; it never lays out anything itself (expanding a collapsed
subgraph only *stretches* the precomputed layout around it, see viewer.js ``warp``).

    layout_document(doc) -> {graph id: Layout}
    Layout = {"w", "h",                              size in points (1 SVG unit = 1 pt)
              "nodes": {node id: [cx, cy, w, h]},    y grows downwards (dot's is flipped)
              "edges": [{"p": [x0, y0, x1, y1, ...], "a": [x, y] | None, "l": [x, y] | None}]}
                        cubic B-spline control points   arrow tip    label centre

Node boxes get fixed sizes estimated from their text (``node_size``), so dot and the page
agree. Edge labels take part in the layout (dot leaves room for them) until a graph has more
than ``LABEL_EDGE_LIMIT`` edges; then the page places them at the middle of the curve.

``dot`` is found on PATH or through ``$WICK_DOT``; when it is not installed, the built-in
layered layout (layered.py) draws the page instead. It also draws any graph that dot does not
lay out within ``$WICK_DOT_TIMEOUT`` seconds (default 60; Graphviz 2.43 spent over 15 minutes
on a 622-node graph, DenseNet121 with fp16 weights) or on which dot crashes, with a warning.
A ``$WICK_DOT`` that names no executable raises ``GraphvizNotFound``, which says how to install Graphviz.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor

from .document import Document, Graph, Node

__all__ = [
    "GraphvizNotFound",
    "LayoutError",
    "dot_or_none",
    "find_dot",
    "layout_document",
    "node_size",
]

LABEL_EDGE_LIMIT = 1000
EDGE_FONT = 8.0  # points; viewer.css uses the same size


class GraphvizNotFound(RuntimeError):
    pass


class LayoutError(RuntimeError):
    pass


INSTALL_HINT = (
    "Graphviz's `dot` lays out the graph and was not found. Install it: "
    "`sudo apt-get install graphviz` (Debian/Ubuntu), `sudo dnf install graphviz` (Fedora), "
    "`brew install graphviz` (macOS) or `conda install graphviz`; or point $WICK_DOT at a dot "
    "binary."
)


def find_dot() -> str:
    path = dot_or_none()
    if not path:
        raise GraphvizNotFound(INSTALL_HINT)
    return path


def dot_or_none() -> str | None:
    """``dot``'s path, or None when Graphviz is not installed (the built-in layout then);
    a ``$WICK_DOT`` that names no executable is an error."""
    env = os.environ.get("WICK_DOT")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise GraphvizNotFound(f"$WICK_DOT={env} is not an executable. " + INSTALL_HINT)
    return shutil.which("dot")


# Text metrics: per-character advance (in em) of DejaVu Sans, the widest of the faces the page
# may get (measured in Chromium: bold capitals 0.73 em, bold lower case 0.66 em); narrower
# system fonts only leave a little more room.
def _text_width(text: str, size: float, bold: bool = False) -> float:
    em = 0.0
    for ch in text:
        if ch.isupper() or ch.isdigit() or ch in "_×":
            em += 0.74 if bold else 0.68
        elif ch in "ijl.,:;|!' ":
            em += 0.32
        else:
            em += 0.67 if bold else 0.58
    return em * size


LABEL_FONT, SUB_FONT = 11.0, 9.0
MIN_W, MAX_W = 64.0, 230.0


def node_size(n: Node) -> tuple[float, float]:
    label = n.label or n.op
    w = _text_width(label, LABEL_FONT, bold=True) if n.kind == "op" else _text_width(label, 10.5)
    if n.sublabel:
        w = max(w, min(_text_width(n.sublabel, SUB_FONT), MAX_W - 20))
    w = min(max(w + 22, MIN_W), MAX_W)
    if n.kind != "op":
        return w, 24.0
    return w, 34.0 if n.sublabel else 24.0


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def to_dot(g: Graph, sizes: dict[str, tuple[float, float]], edge_labels: bool) -> str:
    # Without labels in the layout the page puts them mid-curve: leave room between ranks.
    ranksep = 0.32 if edge_labels else 0.42
    lines = [
        "digraph G {",
        f'  graph [rankdir=TB nodesep=0.28 ranksep={ranksep} splines=true fontname="Helvetica"'
        " outputorder=edgesfirst];",
        '  node [shape=box fixedsize=true label="" fontname="Helvetica"];',
        f'  edge [fontname="Helvetica" fontsize={EDGE_FONT:g} arrowsize=0.6];',
    ]
    for k, n in enumerate(g.nodes):
        w, h = sizes[n.id]
        lines.append(f"  n{k} [width={w / 72:.4f} height={h / 72:.4f}];")
    index = {n.id: k for k, n in enumerate(g.nodes)}
    for k, e in enumerate(g.edges):
        attrs = f"id=e{k}"
        if edge_labels and e.label:
            attrs += f" label={_q(e.label)}"
        lines.append(f"  n{index[e.src]} -> n{index[e.dst]} [{attrs}];")
    lines.append("}")
    return "\n".join(lines)


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.replace(",", " ").split()]


class _DotGaveUp(Exception):
    """dot timed out or crashed on a valid graph: the built-in layout draws it instead."""


def _run_dot(dot: str, source: str, title: str) -> dict:
    timeout = float(os.environ.get("WICK_DOT_TIMEOUT", "60"))
    try:
        p = subprocess.run(
            [dot, "-Tjson0"], input=source.encode(), capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise _DotGaveUp(f"dot did not lay out {title!r} within {timeout:g} s") from None
    except OSError as e:
        raise GraphvizNotFound(f"cannot run {dot}: {e}. " + INSTALL_HINT) from None
    if p.returncode < 0:
        raise _DotGaveUp(f"dot crashed (signal {-p.returncode}) on {title!r}")
    if p.returncode != 0:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        raise LayoutError(f"dot failed on {title!r}: {' '.join(msg[-3:])}")
    return json.loads(p.stdout)


def _layered(g: Graph) -> dict:
    from .layered import layout_graph

    return layout_graph(g, {n.id: node_size(n) for n in g.nodes})


def _layout_graph(dot: str, g: Graph) -> dict:
    sizes = {n.id: node_size(n) for n in g.nodes}
    if not g.nodes:
        return {"w": 100.0, "h": 40.0, "nodes": {}, "edges": [], "labels": True}
    edge_labels = len(g.edges) <= LABEL_EDGE_LIMIT
    try:
        out = _run_dot(dot, to_dot(g, sizes, edge_labels), g.title)
    except _DotGaveUp as e:
        warnings.warn(f"{e}; drawn with the built-in layered layout instead", stacklevel=2)
        return _layered(g)
    bb = _floats(out["bb"])
    height = bb[3]
    nodes = {}
    for obj in out.get("objects", []):
        name = obj.get("name", "")
        if not name.startswith("n") or "pos" not in obj:
            continue
        k = int(name[1:])
        x, y = _floats(obj["pos"])
        w, h = sizes[g.nodes[k].id]
        nodes[g.nodes[k].id] = [round(x, 1), round(height - y, 1), w, h]
    edges: list[dict | None] = [None] * len(g.edges)
    for e in out.get("edges", []):
        eid = e.get("id", "")
        if not eid.startswith("e") or "pos" not in e:
            continue
        k = int(eid[1:])
        pts, arrow = [], None
        for tok in e["pos"].split(";")[0].split():
            if tok.startswith("e,"):
                ax, ay = _floats(tok[2:])
                arrow = [round(ax, 1), round(height - ay, 1)]
            elif tok.startswith("s,"):
                continue
            else:
                x, y = _floats(tok)
                pts += [round(x, 1), round(height - y, 1)]
        lp = None
        if "lp" in e:
            lx, ly = _floats(e["lp"])
            lp = [round(lx, 1), round(height - ly, 1)]
        edges[k] = {"p": pts, "a": arrow, "l": lp}
    return {
        "w": round(bb[2], 1),
        "h": round(height, 1),
        "nodes": nodes,
        "edges": [e or {"p": [], "a": None, "l": None} for e in edges],
        "labels": edge_labels,
    }


def layout_document(doc: Document, jobs: int | None = None) -> dict[str, dict]:
    """Lays out every graph (in parallel: each is its own dot process); without Graphviz,
    with the built-in layered layout."""
    dot = dot_or_none()
    if dot is None:
        return {g.id: _layered(g) for g in doc.graphs}
    jobs = jobs or min(4, os.cpu_count() or 1)
    graphs = sorted(doc.graphs, key=lambda g: -len(g.nodes))  # big ones first
    if len(graphs) <= 1 or jobs <= 1:
        return {g.id: _layout_graph(dot, g) for g in graphs}
    with ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(lambda g: _layout_graph(dot, g), graphs))
    return {g.id: r for g, r in zip(graphs, results, strict=True)}
