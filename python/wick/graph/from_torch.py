"""PyTorch-side graphs as the viewer's Document: a ``torch.export.ExportedProgram`` (its ATen FX
graph), and the converter's two IRs (the ATen-level ``converter.ir.Graph`` and the TFLite-level
``converter.lower.tfl.TGraph``) so every conversion stage is drawn by the same viewer.

The converter IRs are read duck-typed (attributes only, no import of the converter): they are
snapshotted at the moment of the call, because passes rewrite them in place.

ExportedProgram: ``call_function`` nodes are the ops (``aten.convolution.default``); user inputs
and outputs are io nodes; parameters, buffers and lifted constants are not drawn but listed in
their consumers' details with weight statistics; ``getitem`` projections are folded into edges.
Each op shows its ``nn.Module`` path (``layer1.0.conv1``) and the user's source line.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .document import Document, Edge, Graph, Node, TensorInfo
from .stats import array_stats

__all__ = ["document_from_exported_program", "graph_from_ir", "graph_from_tgraph", "torch_dtype"]

_SHORT = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float64": "f64",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "complex64": "c64",
    "qint8": "qint8",
    "quint8": "quint8",
}


def torch_dtype(dt) -> str:
    name = str(dt).replace("torch.", "")
    return _SHORT.get(name, name)


def _dims(shape) -> tuple:
    out = []
    for d in shape:
        try:
            out.append(int(d))
        except Exception:  # a symbolic dim
            out.append(str(d))
    return tuple(out)


def _torch_stats(t) -> dict | None:
    try:
        import torch

        if t.is_quantized:
            t = t.dequantize()
        if t.dtype in (torch.bfloat16, torch.float16):
            t = t.float()
        return array_stats(t.detach().cpu().numpy())
    except Exception:  # fake / meta / exotic tensors carry no values
        return None


def _user_frame(stack: str | None) -> str | None:
    if not stack:
        return None
    try:
        from ..converter.errors import user_frame
    except Exception:
        return None
    return user_frame(stack)


def _short_value(v: Any) -> Any:
    """Non-tensor FX arguments as displayable values."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_short_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _short_value(x) for k, x in v.items()}
    return str(v).replace("torch.", "")


# ------------------------------------------------------------------------ ExportedProgram


def _op_name(target) -> str:
    schema = getattr(target, "_schema", None)
    if schema is not None:
        ns_name = schema.name  # "aten::convolution"
        ns, _, base = ns_name.partition("::")
        return f"{ns}.{base}.{getattr(target, '_overloadname', 'default')}"
    return getattr(target, "__name__", str(target))


def _module_path(fx) -> str:
    stack = fx.meta.get("nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1]
    path = path[0] if isinstance(path, tuple) else str(path)
    return path.replace("L['self'].", "").replace("L['self']", "")


def _info_from_val(name: str, val) -> TensorInfo:
    if hasattr(val, "shape") and hasattr(val, "dtype"):
        return TensorInfo(name, _dims(val.shape), torch_dtype(val.dtype))
    return TensorInfo(name, None, type(val).__name__)


def graph_from_exported_program(ep, graph_id: str = "aten", title: str = "ATen graph") -> Graph:
    """The FX graph of an ExportedProgram as one Graph."""
    from torch.export.graph_signature import InputKind

    sig = ep.graph_signature
    specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
    state, consts = ep.state_dict, getattr(ep, "constants", {}) or {}
    g = Graph(graph_id, title)
    src: dict[Any, str] = {}  # fx node -> graph node id producing it
    info: dict[Any, TensorInfo] = {}
    const_info: dict[Any, TensorInfo] = {}
    alias: dict[Any, Any] = {}  # getitem node -> (producer fx node)
    fx_nodes = list(ep.graph.nodes)
    for fx in fx_nodes:
        if fx.op == "placeholder":
            spec = specs.get(fx.name)
            val = fx.meta.get("val")
            kind = spec.kind if spec is not None else None
            if kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                target = spec.target
                t = state.get(target) if target in state else consts.get(target)
                ti = _info_from_val(target, t if t is not None else val)
                ti.const = True
                ti.extra["kind"] = str(kind).split(".")[-1].lower()
                if t is not None and hasattr(t, "detach"):
                    ti.stats = _torch_stats(t)
                const_info[fx] = ti
                continue
            ti = _info_from_val(fx.name, val)
            nid = f"in:{fx.name}"
            g.nodes.append(
                Node(nid, "input", name=fx.name, kind="input", label=fx.name, outputs=[ti])
            )
            src[fx], info[fx] = nid, ti
        elif fx.op == "call_function":
            if fx.target is operator.getitem:
                base, idx = fx.args[0], fx.args[1]
                alias[fx] = base
                info[fx] = _info_from_val(fx.name, fx.meta.get("val"))
                info[fx].extra["item"] = idx
                continue
            name = _op_name(fx.target)
            val = fx.meta.get("val")
            vals = val if isinstance(val, (list, tuple)) else [val]
            outs = [
                _info_from_val(fx.name if len(vals) == 1 else f"{fx.name}[{i}]", v)
                for i, v in enumerate(vals)
                if v is not None
            ]
            attrs: dict[str, Any] = {}
            inputs: list[TensorInfo | None] = []
            schema = getattr(fx.target, "_schema", None)
            argnames = [a.name for a in schema.arguments] if schema is not None else []
            for k, a in enumerate(fx.args):
                key = argnames[k] if k < len(argnames) else f"arg{k}"
                _collect(a, key, attrs, inputs, info, const_info)
            for key, a in fx.kwargs.items():
                _collect(a, key, attrs, inputs, info, const_info)
            module = _module_path(fx)
            nid = fx.name
            base = name.split(".")[1] if name.count(".") >= 2 else name
            node = Node(
                nid,
                name,
                name=fx.name,
                label=base,
                sublabel=module or fx.name,
                attrs=attrs,
                inputs=inputs,
                outputs=outs,
                source=_user_frame(fx.meta.get("stack_trace")),
            )
            if module:
                node.attrs["module"] = module
            g.nodes.append(node)
            src[fx], info[fx] = nid, outs[0] if outs else TensorInfo(fx.name)
        elif fx.op == "output":
            outs = fx.args[0] if isinstance(fx.args[0], (list, tuple)) else [fx.args[0]]
            specs_out = list(sig.output_specs)
            for k, o in enumerate(outs):
                if not hasattr(o, "op"):
                    continue
                kind = specs_out[k].kind if k < len(specs_out) else None
                label = str(getattr(specs_out[k].arg, "name", o.name)) if kind else o.name
                if kind is not None and "MUTATION" in str(kind):
                    label = f"{label} (mutation)"
                ti = info.get(o) or _info_from_val(o.name, o.meta.get("val"))
                nid = f"out:{k}"
                g.nodes.append(
                    Node(nid, "output", name=o.name, kind="output", label=label, inputs=[ti])
                )

    def producer(fx):
        while fx in alias:
            fx = alias[fx]
        return src.get(fx)

    seen = set()
    for fx in fx_nodes:
        if fx.op != "call_function" or fx in alias:
            continue
        for a in fx.all_input_nodes:
            p = producer(a)
            if p is None or (p, fx.name, a) in seen:
                continue
            seen.add((p, fx.name, a))
            ti = info.get(a)
            g.edges.append(Edge(p, fx.name, ti.label if ti else "", a.name))
    out_node = next((fx for fx in fx_nodes if fx.op == "output"), None)
    if out_node is not None:
        outs = (
            out_node.args[0] if isinstance(out_node.args[0], (list, tuple)) else [out_node.args[0]]
        )
        for k, o in enumerate(outs):
            if hasattr(o, "op") and producer(o) is not None:
                ti = info.get(o)
                g.edges.append(Edge(producer(o), f"out:{k}", ti.label if ti else "", o.name))
    return g


def _collect(a, key, attrs, inputs, info, const_info) -> None:
    """Split one FX argument into tensor inputs (Nodes) and displayable attributes."""
    if hasattr(a, "op") and hasattr(a, "meta"):  # an fx.Node
        inputs.append(const_info.get(a) or info.get(a) or _info_from_val(a.name, a.meta.get("val")))
        return
    if isinstance(a, (list, tuple)) and any(hasattr(x, "op") and hasattr(x, "meta") for x in a):
        for x in a:
            _collect(x, key, attrs, inputs, info, const_info)
        return
    attrs[key] = _short_value(a)


def document_from_exported_program(ep, title: str = "ExportedProgram") -> Document:
    g = graph_from_exported_program(ep)
    doc = Document(title, [g], kind="exported-program")
    doc.meta = {"source": "torch.export ExportedProgram", "operators": len(g.ops)}
    return doc


# ------------------------------------------------------------------- the converter's IRs


def graph_from_ir(ir, graph_id: str, title: str) -> Graph:
    """wick's ATen-level IR (``converter.ir.Graph``: nodes with target/args/outputs, Values with
    shape/dtype/const) as a Graph, snapshotted now."""
    g = Graph(graph_id, title)
    producer: dict[int, str] = {}

    def tinfo(v) -> TensorInfo:
        ti = TensorInfo(v.name, _dims(v.shape), torch_dtype(v.dtype))
        if getattr(v, "const", None) is not None:
            ti.const = True
            ti.stats = _torch_stats(v.const)
        return ti

    names = list(getattr(ir, "input_names", []) or [])
    for k, v in enumerate(ir.inputs):
        nid = f"in{k}"
        label = names[k] if k < len(names) else v.name
        g.nodes.append(
            Node(nid, "input", name=v.name, kind="input", label=label, outputs=[tinfo(v)])
        )
        producer[id(v)] = nid
    for k, n in enumerate(ir.nodes):
        op = n.op_name if hasattr(n, "op_name") else _op_name(n.target)
        base = op.split(".")[1] if op.count(".") >= 2 else op
        attrs: dict[str, Any] = {}
        for i, a in enumerate(n.args):
            if not _has_value(a):
                attrs[f"arg{i}"] = _short_value(a)
        for key, a in n.kwargs.items():
            if not _has_value(a):
                attrs[key] = _short_value(a)
        ins = [tinfo(v) for v in n.inputs]
        outs = [tinfo(v) for v in n.outputs]
        nid = f"n{k}"
        node = Node(
            nid,
            op,
            name=n.name,
            label=base,
            sublabel=n.name,
            attrs=attrs,
            inputs=ins,
            outputs=outs,
            index=k,
            source=_user_frame(getattr(n, "stack_trace", None)),
        )
        g.nodes.append(node)
        for v in n.outputs:
            producer[id(v)] = nid
    seen = set()
    for k, n in enumerate(ir.nodes):
        for v in n.inputs:
            p = producer.get(id(v))
            if p is None or (p, k, id(v)) in seen:
                continue
            seen.add((p, k, id(v)))
            g.edges.append(Edge(p, f"n{k}", tinfo(v).label, v.name))
    onames = list(getattr(ir, "output_names", []) or [])
    for k, v in enumerate(ir.outputs):
        nid = f"out{k}"
        label = onames[k] if k < len(onames) else v.name
        ti = tinfo(v)
        g.nodes.append(Node(nid, "output", name=v.name, kind="output", label=label, inputs=[ti]))
        if id(v) in producer:
            g.edges.append(Edge(producer[id(v)], nid, ti.label, v.name))
    return g


def _has_value(a) -> bool:
    if hasattr(a, "producer") and hasattr(a, "shape"):
        return True
    if isinstance(a, (list, tuple)):
        return any(_has_value(x) for x in a)
    if isinstance(a, dict):
        return any(_has_value(x) for x in a.values())
    return False


def graph_from_tgraph(tg, graph_id: str, title: str) -> Graph:
    """The converter's TFLite-level graph (``TGraph``: ops with op/inputs/outputs/options,
    TTensors with shape/dtype/data/quant) as a Graph, snapshotted now."""
    g = Graph(graph_id, title)
    producer: dict[int, str] = {}

    def tinfo(t) -> TensorInfo:
        dt = str(t.dtype)
        ti = TensorInfo(t.name, tuple(int(d) for d in t.shape), _SHORT.get(dt, dt))
        q = getattr(t, "quant", None)
        if q:
            ti.quant = {
                k: (list(np.atleast_1d(v).tolist()))
                for k, v in dict(q).items()
                if k in ("scale", "zero_point", "min", "max")
            }
            if "quantized_dimension" in dict(q):
                ti.quant["quantized_dimension"] = int(dict(q)["quantized_dimension"])
        data = getattr(t, "data", None)
        if data is not None:
            ti.const = True
            from .stats import dequantize

            arr = np.asarray(data)
            x = dequantize(arr, arr.shape, ti.quant) if ti.quant and arr.dtype.kind in "iu" else arr
            ti.stats = array_stats(x if x is not None else arr)
        return ti

    names = list(getattr(tg, "input_names", []) or [])
    for k, t in enumerate(tg.inputs):
        nid = f"in{k}"
        label = names[k] if k < len(names) else t.name
        g.nodes.append(
            Node(nid, "input", name=t.name, kind="input", label=label, outputs=[tinfo(t)])
        )
        producer[id(t)] = nid
    for k, op in enumerate(tg.ops):
        nid = f"op{k}"
        origin = getattr(op, "origin", None)
        outs = [tinfo(t) for t in op.outputs]
        node = Node(
            nid,
            op.op,
            name=outs[0].name if outs else "",
            label=op.op,
            attrs={key: _short_value(v) for key, v in (op.options or {}).items()},
            inputs=[tinfo(t) if t is not None else None for t in op.inputs],
            outputs=outs,
            index=k,
        )
        if origin is not None:
            node.attrs["lowered from"] = getattr(origin, "op_name", str(origin))
            node.sublabel = getattr(origin, "name", "")
            node.source = _user_frame(getattr(origin, "stack_trace", None))
        if not node.sublabel and node.name:
            from .from_tflite import short_name

            node.sublabel = short_name(node.name)
        g.nodes.append(node)
        for t in op.outputs:
            producer[id(t)] = nid
    seen = set()
    for k, op in enumerate(tg.ops):
        for t in op.inputs:
            if t is None:
                continue
            p = producer.get(id(t))
            if p is None or (p, k, id(t)) in seen:
                continue
            seen.add((p, k, id(t)))
            g.edges.append(Edge(p, f"op{k}", tinfo_label(t), t.name))
    onames = list(getattr(tg, "output_names", []) or [])
    for k, t in enumerate(tg.outputs):
        nid = f"out{k}"
        label = onames[k] if k < len(onames) else t.name
        g.nodes.append(
            Node(nid, "output", name=t.name, kind="output", label=label, inputs=[tinfo(t)])
        )
        if id(t) in producer:
            g.edges.append(Edge(producer[id(t)], nid, tinfo_label(t), t.name))
    return g


def tinfo_label(t) -> str:
    dt = str(t.dtype)
    return TensorInfo(t.name, tuple(int(d) for d in t.shape), _SHORT.get(dt, dt)).label
