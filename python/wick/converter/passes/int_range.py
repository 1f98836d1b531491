"""Integer value ranges, so that int64 tensors can be stored as int32 where that is exact.

Invariant: after ``int_ranges(g)``, an integer Value has ``meta["range"] = (lo, hi)`` only when
every element it can hold at runtime provably lies in [lo, hi].  Lowering stores an int64 Value
as int32 exactly when its range fits int32 (``lower.context.fits_int32``); everything else
stays int64.  Model inputs have no range (the caller may pass anything); index consumers
(embedding, gather, index) cast them to int32 themselves, which is exact for every index that
is in bounds.

Rules: constants -> their min/max; arange/argmax/topk indices/sort indices -> the index domain;
sizes -> [0, 2^31); data movement (view, permute, cat, slice, gather …) -> union of the data
inputs; add/sub/mul/neg/abs/clamp/div-floor/remainder/where/min/max -> interval arithmetic;
sum/cumsum -> interval times the reduced element count; casts from narrower ints and bool ->
that type's range.
"""

from __future__ import annotations

import math

import torch

from ..ir import Graph, Value

_INT = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)
_TYPE_RANGE = {
    torch.bool: (0, 1),
    torch.uint8: (0, 255),
    torch.int8: (-128, 127),
    torch.int16: (-(2**15), 2**15 - 1),
    torch.int32: (-(2**31), 2**31 - 1),
}
_MOVE = {
    "view",
    "_unsafe_view",
    "reshape",
    "permute",
    "expand",
    "clone",
    "slice",
    "select",
    "squeeze",
    "unsqueeze",
    "cat",
    "stack",
    "alias",
    "flip",
    "roll",
    "repeat",
    "index",
    "index_select",
    "gather",
    "t",
    "transpose",
    "narrow",
    "split_with_sizes",
    "split",
    "unbind",
    "constant_pad_nd",
    "amax",
    "amin",
    "max",
    "min",
    "_to_copy",
    "lift_fresh_copy",
    "contiguous",
    "detach",
}


def _r(v) -> tuple[int, int] | None:
    if isinstance(v, Value):
        if v.dtype in _TYPE_RANGE:
            return v.meta.get("range", _TYPE_RANGE[v.dtype])
        return v.meta.get("range")
    if isinstance(v, bool):
        return (int(v), int(v))
    if isinstance(v, int):
        return (v, v)
    if isinstance(v, float) and v.is_integer():
        return (int(v), int(v))
    return None


def _union(rs):
    rs = list(rs)
    if not rs or any(r is None for r in rs):
        return None
    return (min(r[0] for r in rs), max(r[1] for r in rs))


def _mul(a, b):
    ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return (min(ps), max(ps))


def int_ranges(g: Graph) -> None:
    for v in g.inputs:
        v.meta.pop("range", None)

    def const_range(v: Value):
        if v.const is not None and v.dtype in _INT and "range" not in v.meta:
            c = v.const
            v.meta["range"] = (int(c.min()), int(c.max())) if c.numel() else (0, 0)

    for node in g.nodes:
        for v in node.inputs:
            const_range(v)
        out = node.outputs[0] if node.outputs else None
        if out is None:
            continue
        if out.meta.get("scalar"):
            # symbolic sizes and arithmetic on them: tensor sizes, which fit int32
            out.meta["range"] = (-(2**31), 2**31 - 1)
            continue
        name = node.target._schema.name.split("::")[-1] if hasattr(node.target, "_schema") else ""
        a = node.args
        r = None
        if name in ("arange",):
            ov = node.target._overloadname
            bounds = [0, a[0]] if ov == "default" else [a[0], a[1]]
            if any(isinstance(x, Value) for x in bounds):
                r = (-(2**31), 2**31 - 1)  # symbolic sizes
            elif all(isinstance(x, (int, float)) for x in bounds):
                r = (math.floor(min(bounds)), math.ceil(max(bounds)))
        elif name in ("argmax", "argmin"):
            src = a[0]
            r = (0, max(1, _numel(src)) - 1) if src.is_static else (0, 2**31 - 1)
        elif name in ("sym_size", "sym_numel", "sym_stride", "sym_storage_offset"):
            r = (0, 2**31 - 1)
        elif name in ("topk", "sort", "max", "min") and len(node.outputs) > 1:
            src = a[0]
            n = _numel(src) if src.is_static else 2**31 - 1
            node.outputs[1].meta["range"] = (0, max(n, 1) - 1)
            r = _r(src) if src.dtype in _INT else None
        elif name in ("add", "sub"):
            x, y = _r(a[0]), _r(a[1]) if len(a) > 1 else None
            alpha = node.kwargs.get("alpha", 1)
            if x and y and isinstance(alpha, int):
                y = _mul(y, (alpha, alpha))
                r = (x[0] + y[0], x[1] + y[1]) if name == "add" else (x[0] - y[1], x[1] - y[0])
        elif name == "mul":
            x, y = _r(a[0]), _r(a[1])
            if x and y:
                r = _mul(x, y)
        elif name == "neg":
            x = _r(a[0])
            r = (-x[1], -x[0]) if x else None
        elif name == "abs":
            x = _r(a[0])
            r = (0, max(abs(x[0]), abs(x[1]))) if x else None
        elif name in ("clamp", "clip"):
            x = _r(a[0])
            lo = a[1] if len(a) > 1 else node.kwargs.get("min")
            hi = a[2] if len(a) > 2 else node.kwargs.get("max")
            if x:
                lo_r, hi_r = _r(lo) if lo is not None else None, _r(hi) if hi is not None else None
                r = (max(x[0], lo_r[0]) if lo_r else x[0], min(x[1], hi_r[1]) if hi_r else x[1])
                if r[0] > r[1]:
                    r = (r[1], r[1])
        elif name in ("div",) and node.kwargs.get("rounding_mode") == "floor":
            x, y = _r(a[0]), _r(a[1])
            if x and y and y[0] > 0:
                r = (min(x[0], x[0] // y[1]), max(x[1], x[1] // y[0]) if x[1] > 0 else x[1] // y[1])
        elif name in ("remainder", "fmod"):
            y = _r(a[1])
            if y:
                m = max(abs(y[0]), abs(y[1]))
                r = (-m, m)
        elif name in ("where",):
            r = _union([_r(a[1]), _r(a[2])])
        elif name in ("maximum", "minimum"):
            r = _union([_r(a[0]), _r(a[1])])
        elif name in ("sum", "cumsum"):
            x = _r(a[0])
            if x and a[0].is_static:
                n = _numel(a[0])
                r = (min(0, x[0] * n), max(0, x[1] * n))
        elif name in ("full", "scalar_tensor", "fill"):
            val = a[1] if name in ("full", "fill") else a[0]
            r = _r(val)
        elif name in ("full_like",):
            r = _r(a[1])
        elif name in ("zeros_like", "zeros", "empty", "empty_like", "new_zeros"):
            r = (0, 0)
        elif name in ("ones_like", "ones", "new_ones"):
            r = (1, 1)
        elif name in _MOVE:
            srcs = [x for x in node.inputs if x.dtype in _INT]
            if (
                srcs
                and len(srcs) == len([x for x in node.inputs if x is not None])
                or name in ("index", "gather", "index_select")
            ):
                data = [node.inputs[0]] if name in ("index", "gather", "index_select") else srcs
                r = _union(_r(x) for x in data) if all(x.dtype in _INT for x in data) else None
        if r is not None:
            for o in node.outputs:
                if o.dtype in _INT and "range" not in o.meta:
                    o.meta["range"] = (int(r[0]), int(r[1]))


def _numel(v: Value) -> int:
    n = 1
    for d in v.shape:
        n *= int(d)
    return n
