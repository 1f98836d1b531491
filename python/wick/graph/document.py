"""The viewer's generic graph: what every source (a .tflite file, a torch ExportedProgram, the
converter's IR after a pass) is turned into before layout and rendering.

    Document ── graphs: [Graph]          one per subgraph / conversion stage; ``views`` lists
       │                                 the ones offered in the page's selector
       └── Graph ── nodes: [Node]        ops (kind "op") and graph inputs/outputs
                 └─ edges: [Edge]        producer -> consumer, labelled "1×56×56×64 f32"

    Node.inputs / Node.outputs: [TensorInfo]  (shape, dtype, quantization, weight stats)
    Node.subgraphs: {role: graph id}          an op that *contains* graphs (a composite's
                                              decomposition, WHILE cond/body): drawn as a
                                              collapsed node that expands in place

Invariants: node ids are unique within a graph; every Edge names two nodes of its graph;
``Node.subgraphs`` names graphs of the same Document. Only nodes of kind "op" are operators
(the page marks them with ``data-op``; inputs/outputs get ``data-io``).

This is the API a producer of graphs uses (see ``build_graph`` for the shortest path, and
docs/graph.md for the hook the converter calls with ``debug_dir``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Document",
    "Edge",
    "Graph",
    "Node",
    "TensorInfo",
    "annotate",
    "build_graph",
    "format_shape",
]

FLOAT_DTYPES = {"f32", "f16", "bf16", "f64", "float32", "float16", "bfloat16", "float64"}
QUANT_INT_DTYPES = {"i8", "u8", "i16", "i4", "u4", "int8", "uint8", "int16", "qint8", "quint8"}
TRANSPOSE_OPS = {"TRANSPOSE", "STABLEHLO_TRANSPOSE"}
QDQ_OPS = {"QUANTIZE", "DEQUANTIZE"}


def format_shape(shape) -> str:
    if shape is None:
        return "?"
    if len(shape) == 0:
        return "scalar"
    return "×".join("?" if (isinstance(d, int) and d < 0) else str(d) for d in shape)


@dataclass
class TensorInfo:
    """One tensor as the viewer shows it: on edges, and in a node's details."""

    name: str
    shape: tuple | None = None  # ints; strings for symbolic dims; None when unknown
    dtype: str = ""  # short spelling: f32 i8 u8 i32 bool ...
    quant: dict | None = None  # scale / zero_point (lists), quantized_dimension, min/max
    const: bool = False  # data known at conversion time / stored in the file
    stats: dict | None = None  # weight statistics of constants (min max mean std zeros hist)
    index: int | None = None  # tensor index in its subgraph (TFLite)
    extra: dict = field(default_factory=dict)  # anything else worth showing

    @property
    def label(self) -> str:
        return f"{format_shape(self.shape)} {self.dtype}".strip()

    @property
    def quantized(self) -> bool:
        return bool(self.quant and self.quant.get("scale")) or (self.dtype in ("qint8", "quint8"))


@dataclass
class Node:
    id: str
    op: str  # op type: "CONV_2D", "aten.convolution.default", "input", "output"
    name: str = ""  # full name (output tensor, FX node ...)
    kind: str = "op"  # "op" | "input" | "output"
    label: str = ""  # first line in the box; defaults to op
    sublabel: str = ""  # second line; defaults to a short form of name
    attrs: dict[str, Any] = field(default_factory=dict)  # options shown in the details
    inputs: list[TensorInfo | None] = field(default_factory=list)  # None: optional, absent
    outputs: list[TensorInfo] = field(default_factory=list)
    subgraphs: dict[str, str] = field(default_factory=dict)  # role -> Graph.id
    tags: list[str] = field(default_factory=list)  # transpose, qdq, float-island ...
    index: int | None = None  # operator index in its subgraph (joins a profile)
    source: str | None = None  # the user's source line (PyTorch), when known
    profile: dict | None = None  # {"us": time, "share": fraction of the total}


@dataclass
class Edge:
    src: str
    dst: str
    label: str = ""  # "1×56×56×64 f32"
    tensor: str = ""  # tensor name (details, search)


@dataclass
class Graph:
    id: str
    title: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)  # shown under the title
    short: str = ""  # a short name (frame headers of expanded subgraphs); defaults to title

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def ops(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "op"]


@dataclass
class Document:
    title: str
    graphs: list[Graph] = field(default_factory=list)
    views: list[str] | None = None  # graph ids in the selector (None: every graph)
    meta: dict[str, Any] = field(default_factory=dict)  # file facts shown in the header
    kind: str = "graph"  # "tflite", "exported-program", "stages", ...

    def graph(self, graph_id: str) -> Graph:
        for g in self.graphs:
            if g.id == graph_id:
                return g
        raise KeyError(graph_id)

    def validate(self) -> None:
        ids = {g.id for g in self.graphs}
        if len(ids) != len(self.graphs):
            raise ValueError("graph ids must be unique")
        for g in self.graphs:
            nids = {n.id for n in g.nodes}
            if len(nids) != len(g.nodes):
                raise ValueError(f"graph {g.id!r}: node ids must be unique")
            for e in g.edges:
                if e.src not in nids or e.dst not in nids:
                    raise ValueError(f"graph {g.id!r}: edge {e.src}->{e.dst} names no node")
            for n in g.nodes:
                for role, sub in n.subgraphs.items():
                    if sub not in ids:
                        raise ValueError(f"node {n.id!r}: {role} names unknown graph {sub!r}")
        for v in self.views or ():
            if v not in ids:
                raise ValueError(f"view {v!r} is not a graph")


# -------------------------------------------------------------------------- a short builder


def build_graph(
    graph_id: str,
    title: str,
    nodes: Iterable[dict | Node],
    edges: Iterable[tuple | dict | Edge],
) -> Graph:
    """A Graph from plain data, for producers that do not want the dataclasses:

    build_graph("g", "after fusion",
                [{"id": "a", "op": "CONV_2D", "attrs": {"stride": 2}}, {"id": "b", "op": "RELU"}],
                [("a", "b", "1×8×8×16 f32")])
    """
    ns = [n if isinstance(n, Node) else Node(**n) for n in nodes]
    es = []
    for e in edges:
        if isinstance(e, Edge):
            es.append(e)
        elif isinstance(e, dict):
            es.append(Edge(**e))
        else:
            es.append(Edge(*e))
    return Graph(graph_id, title, ns, es)


# ------------------------------------------------------------------------------ highlights


def _is_quantized_op(n: Node) -> bool:
    ts = [t for t in list(n.inputs) + list(n.outputs) if t is not None and not t.const]
    return any(t.quantized and t.dtype in QUANT_INT_DTYPES for t in ts)


def _is_float_op(n: Node) -> bool:
    outs = [t for t in n.outputs if t is not None]
    return bool(outs) and all(t.dtype in FLOAT_DTYPES for t in outs)


def _tag(n: Node, tag: str) -> None:
    if tag not in n.tags:
        n.tags.append(tag)


def annotate(doc: Document) -> dict[str, int]:
    """Tag nodes for the page's highlights; returns the counts per tag.

    * ``transpose``: TRANSPOSE-like ops (also ATen permute/transpose).
    * ``qdq``: QUANTIZE / DEQUANTIZE (also ATen quantize/dequantize ops).
    * ``float-island``: in a graph with quantized ops, a float op that has a quantized op both
      upstream and downstream of it: the model leaves int8 for it and comes back (usually
      through a DEQUANTIZE ... QUANTIZE pair), which costs time and accuracy."""
    counts = {"transpose": 0, "qdq": 0, "float-island": 0}
    for g in doc.graphs:
        for n in g.ops:
            up = n.op.upper()
            base = up.split(".")[1] if up.startswith("ATEN.") and "." in up else up
            if up in TRANSPOSE_OPS or base in ("PERMUTE", "TRANSPOSE", "T"):
                _tag(n, "transpose")
            if up in QDQ_OPS or "QUANTIZE_PER" in up or "DEQUANTIZE" in up:
                _tag(n, "qdq")
        quant = {n.id for n in g.ops if _is_quantized_op(n) and "qdq" not in n.tags}
        if not quant:
            continue
        succ: dict[str, list[str]] = {}
        pred: dict[str, list[str]] = {}
        for e in g.edges:
            succ.setdefault(e.src, []).append(e.dst)
            pred.setdefault(e.dst, []).append(e.src)

        def reach(start: set[str], nxt: dict[str, list[str]]) -> set[str]:
            seen: set[str] = set()
            stack = list(start)
            while stack:
                x = stack.pop()
                for y in nxt.get(x, ()):
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            return seen

        below_quant = reach(quant, succ)  # nodes with a quantized op upstream
        above_quant = reach(quant, pred)  # nodes with a quantized op downstream
        for n in g.ops:
            if (
                n.id in below_quant
                and n.id in above_quant
                and "qdq" not in n.tags
                and n.id not in quant
                and _is_float_op(n)
            ):
                _tag(n, "float-island")
    for g in doc.graphs:
        for n in g.ops:
            for t in n.tags:
                counts[t] = counts.get(t, 0) + 1
    return counts
