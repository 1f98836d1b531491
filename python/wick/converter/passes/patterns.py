"""Peephole rewrites on the ATen-level graph that recover ops the decompositions split up.

Invariant: after ``recover_patterns(g)``
* no ``clamp(clamp(x, min=a), max=b)`` chain remains whose inner result has no other user
  (it is one ``clamp(x, a, b)``, which lowers to RELU6 / RELU_N1_TO_1 when it can);
* ``x * clamp(x + 3, 0, 6) / 6`` (hardswish as decomposed by torch) is one
  ``aten.hardswish`` node, lowered to TFLite HARD_SWISH;
* ``view -> addmm/mm -> view`` around a constant weight on an N-d input (nn.Linear on 3-d
  activations) is one ``aten.linear`` node, lowered to FULLY_CONNECTED with keep_num_dims.
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


_VIEW = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def _linear(g: Graph) -> int:
    """view(x, [M, K]) -> addmm/mm(·, W) -> view(·, lead + [N])  with x = lead + [K]
    becomes aten.linear(x, W.T, b): one FULLY_CONNECTED with keep_num_dims, no reshapes."""
    n = 0
    for mm in list(g.nodes):
        if mm not in g.nodes or mm.target not in (aten.addmm.default, aten.mm.default):
            continue
        if mm.target is aten.addmm.default:
            if len(mm.args) != 3 or mm.kwargs.get("beta", 1) != 1 or mm.kwargs.get("alpha", 1) != 1:
                continue
            bias, m1, m2 = mm.args
            if not (isinstance(bias, Value) and bias.is_const and bias.const.dim() == 1):
                continue
        else:
            bias = None
            m1, m2 = mm.args
        if not (isinstance(m2, Value) and m2.is_const and m2.rank == 2):
            continue  # (PT2E weights stay addmm: their permute feeds FULLY_CONNECTED directly)
        v_in = m1.producer if isinstance(m1, Value) else None
        if v_in is None or v_in.target not in _VIEW or not _single_use(g, m1):
            continue
        x = v_in.args[0]
        out = mm.outputs[0]
        users = list(dict.fromkeys(out.users))
        if len(users) != 1 or g.is_output(out) or users[0].target not in _VIEW:
            continue
        v_out = users[0]
        if not (isinstance(x, Value) and x.is_static and x.rank >= 3 and v_out.out.is_static):
            continue
        k = m2.shape[0]
        lead = tuple(v_out.out.shape[:-1])
        if v_out.out.shape[-1] != m2.shape[1] or tuple(m1.shape) != (int(np_prod(lead)), k):
            continue
        # x must be lead + (anything multiplying to K): then view(x, lead + [K]) is exact
        if tuple(x.shape[: len(lead)]) != lead or int(np_prod(x.shape[len(lead) :])) != k:
            continue
        if tuple(x.shape) != lead + (k,):
            vnode = Node(
                v_in.name + "_lead", aten.view.default, (x, list(lead) + [k]), {}, v_in.stack_trace
            )
            xv = Value(v_in.out.name + "_lead", lead + (k,), x.dtype)
            g.add_node(vnode, [xv], position=g.nodes.index(v_in))
            x = xv
        w = g.constant(m2.name + "_t", m2.const.t().contiguous())
        args = (x, w) if bias is None else (x, w, bias)
        node = Node(mm.name + "_linear", aten.linear.default, args, {}, mm.stack_trace)
        new = Value(v_out.out.name + "_lin", v_out.out.shape, v_out.out.dtype)
        g.add_node(node, [new], position=g.nodes.index(v_out))
        g.replace_uses(v_out.out, new)
        for dead in (v_out, mm, v_in):
            g.remove_node(dead)
        n += 1
    return n


def np_prod(xs) -> int:
    p = 1
    for d in xs:
        p *= int(d)
    return p


def recover_patterns(g: Graph) -> int:
    return _merge_clamps(g) + _hardswish(g) + _linear(g)
