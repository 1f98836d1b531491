"""The self-contained page: Document + dot layouts -> one HTML file (inline CSS, JSON, JS).

The page needs no network and no server: ``viewer.css`` and ``viewer.js`` (next to this file)
are inlined, the graph travels as one JSON block (``<script type="application/json">``), and
the script draws it as SVG. Nothing in the page is computed from the network or the clock.

Payload (what viewer.js reads; keep the two in step)::

    {"title", "kind", "meta", "counts": {tag: n}, "views": [gid], "profile": bool,
     "graphs": {gid: {"title", "notes", "w", "h", "labels",
                      "nodes": [{"id", "op", "kind", "label", "sub", "name", "cat", "tags",
                                 "x", "y", "w", "h", "subs": {role: gid}, "idx", "src",
                                 "attrs", "ins": [T], "outs": [T], "prof"}],
                      "edges": [{"s": node index, "t": node index, "label", "tensor",
                                 "p": [x, y, ...], "a": [x, y], "l": [x, y]}]}}}
    T = {"name", "shape", "dtype", "const", "q": text, "stats", "from": node id, "to": [ids]}
"""

from __future__ import annotations

import html
import json
import math
from importlib import resources
from typing import Any

from .document import Document, Graph, Node, TensorInfo, format_shape

__all__ = ["render_html", "payload", "category"]

# Node colour families (viewer.css: .c-<family>). Names are TFLite builtins or ATen base names.
_FAMILIES = {
    "conv": """CONV_2D DEPTHWISE_CONV_2D TRANSPOSE_CONV CONV_3D CONV_3D_TRANSPOSE FULLY_CONNECTED
        BATCH_MATMUL STABLEHLO_CONVOLUTION STABLEHLO_DOT_GENERAL convolution _convolution conv1d
        conv2d conv3d conv_transpose2d linear mm addmm bmm baddbmm matmul einsum
        scaled_dot_product_attention _scaled_dot_product_flash_attention_for_cpu""",
    "act": """RELU RELU6 RELU_N1_TO_1 RELU_0_TO_1 LOGISTIC TANH GELU HARD_SWISH ELU LEAKY_RELU
        PRELU SOFTMAX LOG_SOFTMAX relu relu_ relu6 sigmoid gelu hardswish hardsigmoid silu
        softmax _softmax log_softmax _log_softmax tanh hardtanh elu leaky_relu clamp mish""",
    "pool": """AVERAGE_POOL_2D MAX_POOL_2D L2_POOL_2D MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD
        REDUCE_ANY REDUCE_ALL ARG_MAX ARG_MIN avg_pool2d max_pool2d max_pool2d_with_indices
        adaptive_avg_pool2d _adaptive_avg_pool2d mean sum amax amin argmax argmin prod
        var_mean var std""",
    "norm": """L2_NORMALIZATION LOCAL_RESPONSE_NORMALIZATION native_layer_norm layer_norm
        batch_norm _native_batch_norm_legit_no_training native_group_norm group_norm rms_norm""",
    "shape": """RESHAPE SQUEEZE EXPAND_DIMS CONCATENATION SLICE STRIDED_SLICE PACK UNPACK SPLIT
        SPLIT_V GATHER GATHER_ND PAD PADV2 MIRROR_PAD TILE BROADCAST_TO SHAPE FILL RANGE CAST
        SPACE_TO_DEPTH DEPTH_TO_SPACE RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR REVERSE_V2
        DYNAMIC_UPDATE_SLICE EMBEDDING_LOOKUP SELECT SELECT_V2 ZEROS_LIKE ONES_LIKE
        STABLEHLO_BROADCAST_IN_DIM STABLEHLO_CONCATENATE STABLEHLO_SLICE view reshape
        _unsafe_view cat slice select unsqueeze squeeze expand flatten clone contiguous index
        index_select gather pad constant_pad_nd split split_with_sizes chunk embedding
        _to_copy to alias detach repeat full zeros ones arange upsample_nearest2d
        upsample_bilinear2d unbind stack where""",
}
_FAMILY_OF = {op: fam for fam, ops in _FAMILIES.items() for op in ops.split()}


def category(n: Node) -> str:
    """The colour family of a node: io, control, transpose, qdq, conv, act, pool, norm, shape,
    math (the default: elementwise arithmetic and everything else)."""
    if n.kind != "op":
        return "io"
    if n.subgraphs:
        return "control"
    if "transpose" in n.tags:
        return "transpose"
    if "qdq" in n.tags:
        return "qdq"
    op = n.op
    if op.startswith("aten.") and op.count(".") >= 1:
        op = op.split(".")[1]
    return _FAMILY_OF.get(op, "math")


# ------------------------------------------------------------------------------ the payload


def _num(v: float) -> str:
    if v == 0 or (1e-3 <= abs(v) < 1e5):
        return f"{v:.4g}"
    return f"{v:.3e}"


def _quant_text(q: dict | None) -> str:
    if not q:
        return ""
    parts = []
    scale, zp = q.get("scale") or [], q.get("zero_point") or []
    if len(scale) == 1:
        parts.append(f"scale {_num(scale[0])}")
        if zp:
            parts.append(f"zero point {zp[0]}")
    elif scale:
        dim = q.get("quantized_dimension", 0)
        parts.append(
            f"per-channel (axis {dim}): {len(scale)} scales {_num(min(scale))}…{_num(max(scale))}"
        )
        if zp:
            lo, hi = min(zp), max(zp)
            parts.append(f"zero point {lo}" if lo == hi else f"zero points {lo}…{hi}")
    if q.get("min") and q.get("max") and len(q["min"]) == 1:
        parts.append(f"range [{_num(q['min'][0])}, {_num(q['max'][0])}]")
    if q.get("details"):
        parts.append(str(q["details"]))
    return " · ".join(parts)


def _clean(v: Any, depth: int = 0) -> Any:
    """JSON-safe attribute values: no NaN/inf, no huge lists, no arbitrary objects."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return {str(k): _clean(x, depth + 1) for k, x in list(v.items())[:64]}
    if isinstance(v, (list, tuple)):
        items = [_clean(x, depth + 1) for x in list(v)[:32]]
        if len(v) > 32:
            items.append(f"… {len(v)} items")
        return items
    return str(v)


def _stats(s: dict | None) -> dict | None:
    if not s:
        return None
    return {k: (_clean(v) if k != "hist" else v) for k, v in s.items()}


def _tensor(t: TensorInfo | None, frm: str | None = None, to: list[str] | None = None) -> dict:
    if t is None:
        return {"name": "(none)", "absent": True}
    d: dict[str, Any] = {"name": t.name, "shape": format_shape(t.shape), "dtype": t.dtype}
    if t.const:
        d["const"] = True
    q = _quant_text(t.quant)
    if q:
        d["q"] = q
    if t.stats:
        d["stats"] = _stats(t.stats)
    if t.extra:
        d["extra"] = _clean(t.extra)
    if frm:
        d["from"] = frm
    if to:
        d["to"] = to
    return d


def _graph_payload(g: Graph, lay: dict) -> dict:
    index = {n.id: k for k, n in enumerate(g.nodes)}
    prod: dict[tuple[str, str], str] = {}  # (consumer, tensor) -> producer
    cons: dict[tuple[str, str], list[str]] = {}  # (producer, tensor) -> consumers
    for e in g.edges:
        prod[(e.dst, e.tensor)] = e.src
        cons.setdefault((e.src, e.tensor), []).append(e.dst)
    nodes = []
    for n in g.nodes:
        x, y, w, h = lay["nodes"].get(n.id, [0.0, 0.0, 60.0, 24.0])
        d: dict[str, Any] = {
            "id": n.id,
            "op": n.op,
            "kind": n.kind,
            "label": n.label or n.op,
            "sub": n.sublabel,
            "name": n.name,
            "cat": category(n),
            "x": x,
            "y": y,
            "w": w,
            "h": h,
        }
        if n.tags:
            d["tags"] = list(n.tags)
        if n.subgraphs:
            d["subs"] = dict(n.subgraphs)
        if n.index is not None:
            d["idx"] = n.index
        if n.source:
            d["src"] = n.source
        if n.attrs:
            d["attrs"] = _clean(n.attrs)
        ins = [_tensor(t, prod.get((n.id, t.name)) if t is not None else None) for t in n.inputs]
        outs = [_tensor(t, None, cons.get((n.id, t.name))) for t in n.outputs]
        if ins:
            d["ins"] = ins
        if outs:
            d["outs"] = outs
        if n.profile:
            d["prof"] = _clean(n.profile)
        nodes.append(d)
    edges = []
    for e, el in zip(g.edges, lay["edges"], strict=True):
        edges.append(
            {
                "s": index[e.src],
                "t": index[e.dst],
                "label": e.label,
                "tensor": e.tensor,
                "p": el["p"],
                "a": el["a"],
                "l": el["l"],
            }
        )
    return {
        "title": g.title,
        "short": g.short or g.title,
        "notes": _clean(g.notes),
        "w": lay["w"],
        "h": lay["h"],
        "labels": lay.get("labels", True),
        "nodes": nodes,
        "edges": edges,
    }


def payload(doc: Document, layouts: dict[str, dict], counts: dict[str, int]) -> dict:
    return {
        "title": doc.title,
        "kind": doc.kind,
        "meta": _clean(doc.meta),
        "counts": counts,
        "views": list(doc.views or [g.id for g in doc.graphs]),
        "profile": any(n.profile for g in doc.graphs for n in g.nodes),
        "graphs": {g.id: _graph_payload(g, layouts[g.id]) for g in doc.graphs},
    }


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _json_for_script(obj: Any) -> str:
    # '<' only occurs inside JSON strings, where \u003c is the same character: no "</script>"
    # or "<!--" can end the block early.
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="wick graph">
<title>{title} · wick graph</title>
<style>
{css}
</style>
</head>
<body>
<script>window.__wickErrors=[];window.addEventListener("error",function(e){{window.__wickErrors.push(String(e.message||e));}});</script>
<header id="bar">
  <div class="brand"><b>wick</b> graph</div>
  <div class="title" id="title"></div>
  <select id="view" title="subgraph / stage"></select>
  <div class="search"><input id="q" type="search" placeholder="Search op or name  ( / )" autocomplete="off" spellcheck="false"><span id="qn"></span><div id="qres"></div></div>
  <div class="legend" id="legend"></div>
  <div class="tools"><button id="xall" title="expand or collapse every composite / control-flow op">expand all</button><button id="zin" title="zoom in (+)">+</button><button id="zout" title="zoom out (-)">&minus;</button><button id="fit" title="fit (f)">fit</button></div>
</header>
<main>
  <div id="stage">
  <svg id="canvas" xmlns="http://www.w3.org/2000/svg" tabindex="0">
    <defs>
      <marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto" markerUnits="userSpaceOnUse"><path d="M0,1L10,5L0,9z" class="ah"/></marker>
      <marker id="arrh" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto" markerUnits="userSpaceOnUse"><path d="M0,1L10,5L0,9z" class="ahh"/></marker>
    </defs>
    <g id="viewport"></g>
  </svg>
  <canvas id="mini" title="overview: click or drag to move there"></canvas>
  </div>
  <aside id="panel"></aside>
</main>
<script type="application/json" id="wick-data">{data}</script>
<script>
{js}
</script>
</body>
</html>
"""


def render_html(doc: Document, layouts: dict[str, dict], counts: dict[str, int]) -> str:
    return _TEMPLATE.format(
        title=html.escape(doc.title),
        css=_asset("viewer.css"),
        js=_asset("viewer.js"),
        data=_json_for_script(payload(doc, layouts, counts)),
    )
