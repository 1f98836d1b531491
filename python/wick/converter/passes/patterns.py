"""Peephole rewrites on the ATen-level graph that recover ops the decompositions split up.

Invariant: after ``recover_patterns(g)``
* no ``clamp(clamp(x, min=a), max=b)`` chain remains whose inner result has no other user
  (it is one ``clamp(x, a, b)``, which lowers to RELU6 / RELU_N1_TO_1 when it can);
* ``x * clamp(x + 3, 0, 6) / 6`` (hardswish as decomposed by torch) is one
  ``aten.hardswish`` node, lowered to TFLite HARD_SWISH.
Both rewrites compute the same function (up to float rounding of the same formula).
"""

from __future__ import annotations

import torch

from ..ir import Graph, Node, Value

aten = torch.ops.aten


def _single_use(g: Graph, v: Value) -> bool:
    return len(set(map(id, v.users))) == 1 and not g.is_output(v)


def _scalar(x, value) -> bool:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x) == value
    if isinstance(x, Value) and x.is_const and x.const.numel() == 1:
        return float(x.const.reshape(())) == value
    return False


def _clamp_bounds(node: Node):
    a = list(node.args) + [None] * (3 - len(node.args))
    lo = node.kwargs.get("min", a[1])
    hi = node.kwargs.get("max", a[2])
    return a[0], lo, hi


def _merge_clamps(g: Graph) -> int:
    n = 0
    for node in list(g.nodes):
        if node.target is not aten.clamp.default or node not in g.nodes:
            continue
        x, lo, hi = _clamp_bounds(node)
        p = x.producer if isinstance(x, Value) else None
        if p is None or p.target is not aten.clamp.default or not _single_use(g, x):
            continue
        px, plo, phi = _clamp_bounds(p)
        if isinstance(plo, Value) or isinstance(phi, Value):
            continue
        if isinstance(lo, Value) or isinstance(hi, Value):
            continue
        if (plo is None) == (lo is None) or (phi is None) == (hi is None):
            continue  # only merge a min-only clamp with a max-only clamp (either order)
        new_lo = plo if plo is not None else lo
        new_hi = hi if hi is not None else phi
        if plo is None:  # inner clamps max first: min(max(min(x, hi0), lo)) != clamp if lo>hi0
            if new_lo is not None and new_hi is not None and new_lo > new_hi:
                continue
        g.remove_node(node)
        p.args = (px, new_lo, new_hi)
        p.kwargs = {}
        out = node.outputs[0]
        g.replace_uses(out, p.outputs[0])
        n += 1
    return n


def _hardswish(g: Graph) -> int:
    n = 0
    for div in list(g.nodes):
        if div not in g.nodes or div.target not in (aten.div.Tensor, aten.mul.Tensor):
            continue
        if len(div.args) < 2:
            continue
        num, d = div.args[0], div.args[1]
        if div.target is aten.div.Tensor and not _scalar(d, 6.0):
            continue
        if div.target is aten.mul.Tensor and not _scalar(d, 1.0 / 6.0):
            continue
        if not isinstance(num, Value) or num.producer is None:
            continue
        mul = num.producer
        if mul.target is not aten.mul.Tensor or not _single_use(g, num):
            continue
        for xi in (0, 1):
            x, c = mul.args[xi], mul.args[1 - xi]
            if not isinstance(c, Value) or c.producer is None:
                continue
            clamp = c.producer
            if clamp.target is not aten.clamp.default or not _single_use(g, c):
                continue
            cx, lo, hi = _clamp_bounds(clamp)
            if not (_scalar(lo, 0.0) and _scalar(hi, 6.0)):
                continue
            add = cx.producer if isinstance(cx, Value) else None
            if add is None or add.target is not aten.add.Tensor or not _single_use(g, cx):
                continue
            if (
                add.args[0] is not x
                or not _scalar(add.args[1], 3.0)
                or add.kwargs.get("alpha", 1) != 1
            ):
                continue
            out = div.outputs[0]
            node = Node(div.name + "_hardswish", aten.hardswish.default, (x,), {}, div.stack_trace)
            new = Value(out.name + "_hs", out.shape, out.dtype)
            g.add_node(node, [new], position=g.nodes.index(div))
            g.replace_uses(out, new)
            for dead in (div, mul, clamp, add):
                g.remove_node(dead)
            n += 1
            break
    return n


def recover_patterns(g: Graph) -> int:
    return _merge_clamps(g) + _hardswish(g)
