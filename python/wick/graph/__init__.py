"""See the model: one self-contained, offline HTML page per graph (``wick graph``).

    wick.visualize("m.tflite", "m.html")              # a file, its bytes, or a wick.Model
    wick.visualize(exported_program, "aten.html")     # torch.export: the ATen graph
    wick graph m.tflite -o m.html [--profile trace.json]

Pipeline: a source becomes a ``Document`` (``document.py``: generic nodes/edges, the API any
producer can use), ``annotate`` tags transposes, quantize/dequantize and float islands,
Graphviz ``dot`` lays out every graph (``layout.py``), and ``html.py`` writes one page with the
layout, the details and a small script (``viewer.js``). Pages are written to a temporary file
and renamed, so a failure never leaves a half-written page.

Converter stages: ``StageRecorder`` snapshots the converter's IR after each pass and writes
every stage into one page (a stage selector), see docs/graph.md.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from .document import Document, Edge, Graph, Node, TensorInfo, annotate, build_graph
from .layout import GraphvizNotFound, LayoutError

__all__ = [
    "Document",
    "Edge",
    "Graph",
    "GraphvizNotFound",
    "LayoutError",
    "Node",
    "StageRecorder",
    "TensorInfo",
    "build_graph",
    "load_tflite",
    "render",
    "to_document",
    "visualize",
    "write_html",
]


def load_tflite(data: bytes, title: str = "model.tflite", *, validate: bool = True):
    """(Document, TFLiteFile) of .tflite bytes. With ``validate`` the wick C library verifies
    the bytes first: a bad file raises ``wick.WickError`` with the same message as
    `wick inspect`."""
    from .from_tflite import document_from_tflite
    from .tflite_reader import read_tflite, validate_with_runtime

    data = bytes(data)
    if validate:
        validate_with_runtime(data)
    f = read_tflite(data)
    return document_from_tflite(f, title), f


def _is_exported_program(obj) -> bool:
    return type(obj).__name__ == "ExportedProgram" and hasattr(obj, "graph_signature")


def to_document(obj: Any, title: str | None = None) -> Document:
    """Any supported source as a Document: a Document or Graph(s); a .tflite path, bytes, or
    ``wick.Model``; a ``torch.export.ExportedProgram`` (or a .pt2 file saved from one); the
    converter's IR or TFLite graph."""
    if isinstance(obj, Document):
        return obj
    if isinstance(obj, Graph):
        return Document(title or obj.title, [obj])
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(g, Graph) for g in obj):
        return Document(title or obj[0].title, list(obj))
    if isinstance(obj, (str, os.PathLike)):
        p = Path(obj)
        if p.suffix == ".pt2":  # a saved ExportedProgram (torch.export.save)
            from .._optional import require

            torch = require("torch", "a .pt2 file's graph")
            from .from_torch import document_from_exported_program

            return document_from_exported_program(torch.export.load(p), title or p.name)
        return load_tflite(p.read_bytes(), title or p.name)[0]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return load_tflite(bytes(obj), title or "model.tflite")[0]
    if hasattr(obj, "tflite_bytes"):  # wick.Model from wick.convert
        return load_tflite(obj.tflite_bytes, title or "converted model.tflite")[0]
    if _is_exported_program(obj):
        from .from_torch import document_from_exported_program

        return document_from_exported_program(obj, title or "ExportedProgram")
    if hasattr(obj, "ops") and hasattr(obj, "inputs") and hasattr(obj, "outputs"):
        from .from_torch import graph_from_tgraph

        return Document(title or "TFLite graph", [graph_from_tgraph(obj, "g", title or "graph")])
    if hasattr(obj, "nodes") and hasattr(obj, "inputs") and hasattr(obj, "outputs"):
        from .from_torch import graph_from_ir

        return Document(title or "wick IR", [graph_from_ir(obj, "g", title or "graph")])
    if type(obj).__module__.startswith("torch") and hasattr(obj, "forward"):
        raise TypeError(
            "wick.visualize takes a torch.export.ExportedProgram, not an nn.Module: "
            "call torch.export.export(module, example_args) first (or wick.convert)"
        )
    raise TypeError(f"wick.visualize cannot draw a {type(obj).__name__}")


def render(doc: Document) -> str:
    """The page's HTML text (runs Graphviz)."""
    from .html import render_html
    from .layout import layout_document

    doc.validate()
    counts = annotate(doc)
    layouts = layout_document(doc)
    return render_html(doc, layouts, counts)


def write_html(doc: Document, path: str | os.PathLike) -> Path:
    """Render and write the page atomically: a temporary file next to ``path``, renamed over
    it only when complete."""
    text = render(doc)
    return _write_atomic(Path(path), text)


def _write_atomic(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def visualize(
    obj: Any,
    path: str | os.PathLike,
    *,
    title: str | None = None,
    profile: str | os.PathLike | None = None,
) -> Path:
    """Write an offline HTML view of ``obj`` to ``path`` and return the path.

    ``obj``: a .tflite path or bytes, a ``wick.Model`` (from ``wick.convert``), a
    ``torch.export.ExportedProgram``, a ``wick.graph.Document``/``Graph``, or the converter's IR.
    ``profile``: a Chrome trace from `wick bench MODEL --trace FILE.json` (.tflite sources only)
    colours the operators by time."""
    if profile is not None:
        if isinstance(obj, (str, os.PathLike)):
            data, name = Path(obj).read_bytes(), Path(obj).name
        elif isinstance(obj, (bytes, bytearray, memoryview)):
            data, name = bytes(obj), "model.tflite"
        elif hasattr(obj, "tflite_bytes"):
            data, name = obj.tflite_bytes, "converted model.tflite"
        else:
            raise TypeError("profile= needs a .tflite source (path, bytes or wick.Model)")
        from .from_tflite import apply_profile

        doc, f = load_tflite(data, title or name)
        apply_profile(doc, f, profile)
    else:
        doc = to_document(obj, title)
    return write_html(doc, path)


# ------------------------------------------------------------------------ converter stages


class StageRecorder:
    """Snapshots of a conversion, one per stage, written as one page with a stage selector.

    The converter calls (see docs/graph.md)::

        rec = StageRecorder(debug_dir)          # debug_dir=None: every call is a no-op
        rec.add("exported", ep)                 # torch.export.ExportedProgram
        rec.add("imported", g)                  # converter.ir.Graph (ATen level)
        rec.add("after batchnorm folding", g)   # ... after any pass (snapshotted now)
        rec.add("lowered", tg)                  # converter.lower.tfl.TGraph
        rec.add("final", tflite_bytes)          # the file
        rec.write()                             # DIR/graph.html (+ DIR/stages.txt)

    ``add`` converts the IR immediately (passes rewrite it in place afterwards); it costs one
    walk of the graph and the weight statistics of its constants. ``write`` never raises for
    a missing Graphviz: conversion must not fail because a debug view could not be drawn; it
    returns None and leaves a note in stages.txt instead."""

    def __init__(self, debug_dir: str | os.PathLike | None, title: str = "conversion stages"):
        self.dir = Path(debug_dir) if debug_dir is not None else None
        self.title = title
        self.graphs: list[Graph] = []
        self.views: list[str] = []
        self.log: list[str] = []

    @property
    def enabled(self) -> bool:
        return self.dir is not None

    def add(self, name: str, obj: Any) -> None:
        if self.dir is None:
            return
        k = len(self.views)
        t0 = time.perf_counter()
        stage_title = f"{k:02d} {name}"
        prefix = f"s{k}_"
        if isinstance(obj, (bytes, bytearray, memoryview)) or hasattr(obj, "tflite_bytes"):
            data = obj.tflite_bytes if hasattr(obj, "tflite_bytes") else bytes(obj)
            doc = load_tflite(data, stage_title, validate=False)[0]
        elif isinstance(obj, Graph):
            doc = Document(stage_title, [obj])
        else:
            from .from_torch import graph_from_ir, graph_from_tgraph

            if _is_exported_program(obj):
                from .from_torch import graph_from_exported_program

                g = graph_from_exported_program(obj, "g", stage_title)
            elif hasattr(obj, "ops"):
                g = graph_from_tgraph(obj, "g", stage_title)
            else:
                g = graph_from_ir(obj, "g", stage_title)
            doc = Document(stage_title, [g])
        _prefix(doc, prefix)
        first = doc.views[0] if doc.views else doc.graphs[0].id
        for g in doc.graphs:
            if g.id == first:
                g.title = stage_title
        self.graphs += doc.graphs
        self.views.append(first)
        n_ops = len(doc.graph(first).ops)
        self.log.append(
            f"{stage_title}: {n_ops} ops ({time.perf_counter() - t0:.2f} s to snapshot)"
        )

    def document(self) -> Document:
        doc = Document(self.title, list(self.graphs), views=list(self.views), kind="stages")
        doc.meta = {"stages": len(self.views)}
        return doc

    def write(self) -> Path | None:
        if self.dir is None or not self.views:
            return None
        self.dir.mkdir(parents=True, exist_ok=True)
        out = None
        try:
            out = write_html(self.document(), self.dir / "graph.html")
        except (GraphvizNotFound, LayoutError) as e:
            self.log.append(f"graph.html not written: {e}")
        (self.dir / "stages.txt").write_text("\n".join(self.log) + "\n")
        return out


def _prefix(doc: Document, prefix: str) -> None:
    """Make graph ids unique across documents merged into one page."""
    for g in doc.graphs:
        g.id = prefix + g.id
        for n in g.nodes:
            n.subgraphs = {r: prefix + s for r, s in n.subgraphs.items()}
    if doc.views:
        doc.views = [prefix + v for v in doc.views]
