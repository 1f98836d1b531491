"""Outlier migration (SmoothQuant-style scaling) on an exported graph, before int8 calibration.

Real activations have a few input channels with values far larger than the rest (the output of
a LayerNorm or RMSNorm with a large gain, the hot channels of a residual stream); per-tensor int8
spends its 256 levels on those and rounds every other channel to a few steps.  The weights that
read those channels are small and evenly spread.  Dividing input channel j of the activation by
s_j and multiplying column j of every weight that reads it by s_j computes the same function in
exact arithmetic and moves the range from the activation into the weights (which are quantized
per output channel, so a larger column costs them little):

    s_j = max|X_j|^alpha / max_k |W_kj|^(1 - alpha)            (Xiao et al., SmoothQuant, 2022)

The division is folded into the producer's per-channel constants, so the converted file holds
the same ops as without smoothing (a standard TFLite file; nothing is added at run time).  The
producers this pass folds into:

* ``aten.layer_norm(x, shape, weight, bias)`` over the last dimension: weight and bias / s;
* ``aten.mul(x, gain)`` with a constant 1-D gain over the last dimension (RMSNorm's ``weight *
  hidden``, as HuggingFace writes it): gain / s;
* a gated product ``aten.mul(act(gate), aten.linear(x, W, b))`` (Llama's SiLU-gated MLP) whose
  linear only the product reads: W's rows and b / s (the product is linear in that operand);

when every user of the producer is ``aten.linear`` with a constant weight (otherwise another
reader would see the scaled values: a residual connection that reads a post-LN output, as in
BERT, rules its LayerNorm out).  Constants shared with other nodes are copied first; the user's
module is never modified.  ``smooth(gm, batches, alpha)`` returns the number of producers scaled.
"""

from __future__ import annotations

import torch
from torch.fx import GraphModule, Node

aten = torch.ops.aten

# an activation channel whose calibration range is below this is left as it is (s_j = 1)
_TINY = 1e-5


def _constant(gm: GraphModule, n) -> torch.Tensor | None:
    """The tensor a ``get_attr`` node reads (its target may be a dotted path), else None."""
    if not (isinstance(n, Node) and n.op == "get_attr"):
        return None
    obj = gm
    for part in n.target.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, torch.Tensor) else None


def _linear_weight(gm: GraphModule, u: Node, x: Node) -> Node | None:
    """The weight node of ``u`` when ``u`` is ``linear(x, W[, b])`` with a constant W."""
    if u.op != "call_function" or u.target != aten.linear.default or u.args[0] is not x:
        return None
    w = u.args[1]
    t = _constant(gm, w)
    if t is None or t.dim() != 2 or any(a is x for a in u.args[1:]):
        return None
    return w


def _gated_linear(gm: GraphModule, p: Node) -> Node | None:
    """The linear operand of a gated product ``p = act(gate) * linear(x, W[, b])`` that only
    ``p`` reads, with a constant W (and b), else None."""
    a, b = p.args
    if a is b:
        return None
    for lin in (b, a):
        if (
            isinstance(lin, Node)
            and lin.op == "call_function"
            and lin.target == aten.linear.default
            and len(lin.users) == 1
            and all(_constant(gm, k) is not None for k in lin.args[1:] if k is not None)
        ):
            return lin
    return None


def _producer_constants(gm: GraphModule, p: Node) -> list[tuple[Node, Node]] | None:
    """The constants of ``p`` that smoothing divides, each with the op that reads it, or None
    if ``p`` is not a producer this pass folds into.  A constant's last axis runs over the
    channels (a linear weight's first: its rows are the output channels)."""
    if p.op != "call_function":
        return None
    if p.target == aten.layer_norm.default:
        shape = p.args[1] if len(p.args) > 1 else None
        consts = [a for a in p.args[2:4] if a is not None]
        if not shape or len(shape) != 1 or len(p.args) < 3 or _constant(gm, p.args[2]) is None:
            return None  # over several dimensions, or without a gain to divide
        if any(_constant(gm, a) is None for a in consts):
            return None
        return [(a, p) for a in consts]
    if p.target == aten.mul.Tensor and len(p.args) == 2:
        for a, other in ((p.args[0], p.args[1]), (p.args[1], p.args[0])):
            t = _constant(gm, a)
            if t is not None and t.dim() == 1 and isinstance(other, Node):
                return [(a, p)]
        lin = _gated_linear(gm, p)
        if lin is not None:
            return [(k, lin) for k in lin.args[1:3] if k is not None]
    return None


def candidates(gm: GraphModule) -> list[tuple[Node, list[Node], list[Node]]]:
    """(producer, the constants it is divided through, the weight nodes of the linears reading
    it) for every producer whose only users are linears with constant weights over its last
    dimension."""
    out = []
    for p in gm.graph.nodes:
        consts = _producer_constants(gm, p)
        if not consts or not p.users:
            continue
        weights = [_linear_weight(gm, u, p) for u in p.users]
        if any(w is None for w in weights):
            continue
        c = _constant(gm, weights[0]).shape[1]
        if any(_constant(gm, w).shape[1] != c for w in weights):
            continue
        if any(_channels(gm, k, reader, p) != c for k, reader in consts):
            continue
        if any(set(k.users) - {reader} for k, reader in consts):
            continue  # a constant node that another op reads too
        if any(set(w.users) - set(p.users) for w in weights):
            continue
        out.append((p, consts, weights))
    return out


def _channels(gm: GraphModule, k: Node, reader: Node, p: Node) -> int:
    """How many channels constant ``k`` has along the axis smoothing scales."""
    t = _constant(gm, k)
    return t.shape[0] if reader is not p else t.shape[-1]


def _channel_ranges(gm: GraphModule, nodes: list[Node], batches) -> dict[Node, torch.Tensor]:
    """max |value| per last-dimension channel of each node's output over the batches."""
    ranges: dict[Node, torch.Tensor] = {}
    wanted = set(nodes)

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            if n in wanted and isinstance(r, torch.Tensor):
                m = r.detach().abs().reshape(-1, r.shape[-1]).amax(dim=0).float()
                ranges[n] = m if n not in ranges else torch.maximum(ranges[n], m)
            return r

    with torch.no_grad():
        for b in batches:
            Recorder(gm).run(*b)
    return ranges


def _own_copy(gm: GraphModule, n: Node, t: torch.Tensor) -> None:
    """Give get_attr node ``n`` its own constant ``t`` (a new attribute: a constant that other
    nodes or the user's module share is never written)."""
    base = f"_wick_smoothed_{n.target.replace('.', '_')}"
    k = 0
    while hasattr(gm, f"{base}_{k}"):
        k += 1
    gm.register_buffer(f"{base}_{k}", t)
    n.target = f"{base}_{k}"


def smooth(gm: GraphModule, batches, alpha: float = 0.5) -> int:
    """Scale the activations of every foldable producer of ``gm`` (see the module doc) by
    1 / s and its readers' weight columns by s, with ranges observed on ``batches``; returns
    how many producers were scaled.  ``gm`` computes the same function afterwards (up to float
    rounding)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"smooth alpha must be in [0, 1], not {alpha}")
    found = candidates(gm)
    if not found:
        return 0
    ranges = _channel_ranges(gm, [p for p, _, _ in found], batches)
    replaced = set()
    done = 0
    for p, consts, weights in found:
        x = ranges.get(p)
        if x is None:
            continue
        w = torch.stack([_constant(gm, n).detach().abs().amax(dim=0).float() for n in weights])
        w = w.amax(dim=0)
        s = x.clamp(min=_TINY).pow(alpha) / w.clamp(min=_TINY).pow(1.0 - alpha)
        s = torch.where((x > _TINY) & (w > _TINY), s, torch.ones_like(s))
        replaced.update([n.target for n, _ in consts] + [n.target for n in weights])
        for n, reader in consts:
            t = _constant(gm, n)
            d = s.to(t.dtype)
            if reader is not p and t.dim() == 2:  # a gated linear's weight: its rows
                d = d[:, None]
            _own_copy(gm, n, (t.detach() / d).contiguous())
        for n in weights:
            t = _constant(gm, n)
            _own_copy(gm, n, (t.detach() * s.to(t.dtype)[None, :]).contiguous())
        done += 1
    still_read = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
    for target in replaced - still_read:  # the originals no node reads any more
        owner, _, name = target.rpartition(".")
        delattr(gm.get_submodule(owner) if owner else gm, name)
    gm.recompile()
    return done
