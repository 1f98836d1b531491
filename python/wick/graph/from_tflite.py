"""A .tflite file (read by ``tflite_reader``) as the viewer's Document, and a Chrome-trace
profile (from `wick bench --trace`) joined onto it.

One Graph per subgraph, id ``sg<i>``: operators are nodes ``op<j>`` (j = operator index),
subgraph inputs/outputs are nodes ``in<k>``/``out<k>``, and every non-constant tensor that one
node writes and another reads is an edge labelled with its shape and dtype. Constant tensors
(weights) are not drawn: they appear in their consumer's details with weight statistics.
An operator that calls subgraphs (STABLEHLO_COMPOSITE, WHILE, IF, CALL_ONCE, StableHLO
reduce/sort ...) names them in ``Node.subgraphs`` and expands in place in the page.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .document import Document, Edge, Graph, Node, TensorInfo
from .tflite_reader import SHORT_DTYPE, Subgraph, Tensor, TFLiteFile

__all__ = ["ProfileError", "document_from_tflite", "apply_profile", "short_name"]


# Path components that name an operation rather than a layer ("batchnorm/add_1", "Relu").
_GENERIC = re.compile(
    r"^(batchnorm|add|add_?n|addv2|mul|sub|div|relu6?|conv2d|conv|biasadd|matmul|einsum|squeeze|"
    r"reshape|pad|mean|sum|max|min|maxpool2d|avgpool2d|maxpool|avgpool|softmax|sigmoid|tanh|"
    r"transpose|concat(v2)?|identity|readvariableop\d*|fakequant\w*|cast|shape|slice|"
    r"stridedslice|strided_slice|gelu|erf|rsqrt|sqrt|pow|square|exp|log|neg|abs|sin|cos|"
    r"convolution|depthwise\w*|call|partitionedcall|statefulpartitionedcall|nhwc|nchw|conv_2d|"
    r"padv2|max_pool_2d|average_pool_2d)(_?\d+)?$",
    re.IGNORECASE,
)


def short_name(name: str, limit: int = 30) -> str:
    """A readable tail of a long TF-style tensor name, cut from the left to ``limit`` chars:
    of the first ';'-part, the innermost component that names a layer (not an op such as
    "batchnorm" or "add_1"), followed by the last component when that one differs
    ("conv2_block1_0_bn_1/add_1", "mha_1/Softmax", "ROPE/sin")."""
    first = name.split(";", 1)[0]
    parts = [p for p in first.split("/") if p]
    if not parts:
        tail = first
    else:
        layer = next((p for p in reversed(parts[:-1]) if not _GENERIC.match(p)), None)
        if layer is None and len(parts) > 1:
            layer = parts[0]  # all generic ("relu_1/relu/nhwc"): the outermost names the node
        tail = parts[-1] if layer is None else f"{layer}/{parts[-1]}"
    return tail if len(tail) <= limit else "…" + tail[-(limit - 1) :]


def _tensor_info(t: Tensor) -> TensorInfo:
    shape = t.shape
    if t.shape_signature is not None and len(t.shape_signature) == len(t.shape):
        shape = tuple(-1 if s < 0 else d for d, s in zip(t.shape, t.shape_signature, strict=True))
    extra = {"type": t.dtype}
    if t.is_variable:
        extra["variable"] = True
    if t.sparse:
        extra["sparse"] = True
    if t.constant:
        extra["bytes"] = t.nbytes
    return TensorInfo(
        name=t.name,
        shape=shape,
        dtype=SHORT_DTYPE.get(t.dtype, t.dtype.lower()),
        quant=t.quant,
        const=t.constant,
        stats=t.stats,
        index=t.index,
        extra=extra,
    )


def _graph(f: TFLiteFile, sg: Subgraph, titles: dict[int, str], sig_names) -> Graph:
    infos = [_tensor_info(t) for t in sg.tensors]

    def info(i: int) -> TensorInfo | None:
        return infos[i] if 0 <= i < len(infos) else None

    g = Graph(f"sg{sg.index}", titles[sg.index], short=sg.name or f"subgraph {sg.index}")
    producer: dict[int, str] = {}
    in_names, out_names = sig_names.get(sg.index, ({}, {}))
    for k, ti in enumerate(sg.inputs):
        t = info(ti)
        if t is None:
            continue
        label = in_names.get(ti) or t.name
        g.nodes.append(Node(f"in{k}", "input", name=t.name, kind="input", label=label, outputs=[t]))
        producer[ti] = f"in{k}"
    for op in sg.operators:
        nid = f"op{op.index}"
        attrs = dict(op.options)
        label, sublabel = op.op, ""
        if op.op == "STABLEHLO_COMPOSITE" and isinstance(op.options.get("name"), str):
            label, sublabel = op.options["name"], "composite"
        outs = [info(i) for i in op.outputs]
        node = Node(
            nid,
            op.op,
            name=outs[0].name if outs and outs[0] else "",
            label=label,
            sublabel=sublabel,
            attrs=attrs,
            inputs=[info(i) if i >= 0 else None for i in op.inputs],
            outputs=[t for t in outs if t is not None],
            subgraphs={role: f"sg{idx}" for role, idx in op.calls.items()},
            index=op.index,
        )
        if not node.sublabel:
            node.sublabel = short_name(node.name) if node.name else ""
        node.attrs["version"] = op.version
        if op.custom:
            node.attrs["custom"] = True
        g.nodes.append(node)
        for i in op.outputs:
            if i >= 0:
                producer[i] = nid
    seen = set()
    for op in sg.operators:
        nid = f"op{op.index}"
        for i in op.inputs:
            src = producer.get(i)
            if src is None or (src, nid, i) in seen:
                continue
            seen.add((src, nid, i))
            t = infos[i]
            g.edges.append(Edge(src, nid, t.label, t.name))
    for k, ti in enumerate(sg.outputs):
        t = info(ti)
        if t is None:
            continue
        label = out_names.get(ti) or t.name
        g.nodes.append(
            Node(f"out{k}", "output", name=t.name, kind="output", label=label, inputs=[t])
        )
        src = producer.get(ti)
        if src is not None:
            g.edges.append(Edge(src, f"out{k}", t.label, t.name))
    g.notes = {"tensors": len(sg.tensors)}
    return g


def document_from_tflite(f: TFLiteFile, title: str = "model.tflite") -> Document:
    callers = f.callers()
    sig_of = {}
    sig_names: dict[int, tuple[dict, dict]] = {}
    for s in f.signatures:
        sig_of.setdefault(s.subgraph, []).append(s.key)
        sig_names[s.subgraph] = (
            {i: n for n, i in s.inputs.items()},
            {i: n for n, i in s.outputs.items()},
        )
    titles = {}
    for sg in f.subgraphs:
        t = sg.name or f"subgraph {sg.index}"
        if sg.index in sig_of:
            t += " · signature " + ", ".join(sig_of[sg.index])
        if sg.index in callers:
            csg, cop, role = callers[sg.index][0]
            t += f" · {role} of op {cop} in subgraph {csg}"
        titles[sg.index] = t
    doc = Document(title, kind="tflite")
    doc.graphs = [_graph(f, sg, titles, sig_names) for sg in f.subgraphs]
    # The selector lists top-level subgraphs first (signatures, subgraph 0), then the ones that
    # operators call (they are also reachable by expanding their caller).
    top = [g.id for g, sg in zip(doc.graphs, f.subgraphs, strict=True) if sg.index not in callers]
    called = [g.id for g, sg in zip(doc.graphs, f.subgraphs, strict=True) if sg.index in callers]
    doc.views = top + called
    doc.meta = {
        "file": title,
        "bytes": f.size,
        "schema version": f.version,
        "description": f.description,
        "subgraphs": len(f.subgraphs),
        "operators": sum(len(sg.operators) for sg in f.subgraphs),
        "signatures": [s.key for s in f.signatures],
    }
    if f.metadata:
        doc.meta["metadata"] = {k: f"{v} bytes" for k, v in f.metadata.items()}
    return doc


# ---------------------------------------------------------------------------------- profiles


class ProfileError(ValueError):
    """A trace that cannot be read, or that was not recorded on this model."""


def _load_trace(path: str | os.PathLike) -> dict[int, tuple[str, float]]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ProfileError(f"cannot read the trace {path}: {e}") from None
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise ProfileError(f"{path}: no traceEvents list (expected `wick bench --trace` output)")
    per_op: dict[int, tuple[str, float]] = {}
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph", "X") != "X":
            continue
        idx = (ev.get("args") or {}).get("index")
        if not isinstance(idx, int) or isinstance(idx, bool):
            continue
        try:
            dur = float(ev.get("dur", 0))
        except (TypeError, ValueError):
            raise ProfileError(f"{path}: event {idx} has a bad duration") from None
        name = str(ev.get("name", ""))
        prev = per_op.get(idx)
        per_op[idx] = (name, dur + (prev[1] if prev else 0.0))
    if not per_op:
        raise ProfileError(f"{path}: no operator events (args.index) in the trace")
    return per_op


def apply_profile(doc: Document, f: TFLiteFile, path: str | os.PathLike) -> str:
    """Join `wick bench --trace` events (``args.index`` = operator index of the profiled
    subgraph) onto the nodes; returns the graph id they were joined to.

    The trace does not say which subgraph ran (the first signature's, or subgraph 0), so the
    subgraph whose operators match the events' count and names is chosen; a trace recorded on
    another model is refused rather than drawn wrongly."""
    per_op = _load_trace(path)
    candidates = []
    if f.signatures:
        candidates.append(f.signatures[0].subgraph)
    candidates += [i for i in range(len(f.subgraphs)) if i not in candidates]
    problems = []
    for si in candidates:
        sg = f.subgraphs[si]
        if max(per_op) >= len(sg.operators):
            problems.append(
                f"subgraph {si} has {len(sg.operators)} operators, the trace has index {max(per_op)}"
            )
            continue
        bad = [
            (i, name, sg.operators[i].op)
            for i, (name, _) in sorted(per_op.items())
            if not _same_op(name, sg.operators[i])
        ]
        if bad:
            i, name, op = bad[0]
            problems.append(f"subgraph {si}: event {i} is {name} but operator {i} is {op}")
            continue
        total = sum(d for _, d in per_op.values()) or 1.0
        g = doc.graph(f"sg{si}")
        order = sorted(per_op, key=lambda i: -per_op[i][1])
        rank = {i: r + 1 for r, i in enumerate(order)}
        for n in g.ops:
            if n.index in per_op:
                us = per_op[n.index][1]
                n.profile = {"us": us, "share": us / total, "rank": rank[n.index]}
        doc.meta["profile"] = {
            "trace": os.path.basename(os.fspath(path)),
            "subgraph": si,
            "total": f"{total / 1000:.3f} ms",
            "operators timed": len(per_op),
        }
        return g.id
    raise ProfileError(
        f"the trace {path} does not match this model ({'; '.join(problems[:2])}); "
        "record it with `wick bench MODEL.tflite --trace FILE.json` on the same file"
    )


def _same_op(event_name: str, op) -> bool:
    return event_name == op.op or (op.custom and event_name in ("CUSTOM", op.op))
