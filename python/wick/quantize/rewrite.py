"""Graph rewrites that run before wick's quantizer annotates a model (``transform_for_annotation``).

Input: the graph of ``torch.export.export(module, args).module()`` (pre-dispatch ATen ops:
``aten.linear``, ``aten.conv2d``, ``aten.layer_norm``, …).  Output: the same computation in
which every op that TFLite has no single int8 kernel for, but whose pieces it has, is spelled
out in those pieces, so each piece gets its own quantization parameters:

    silu(x)                    -> x * sigmoid(x)                     (LOGISTIC, MUL)
    hardsigmoid(x)             -> relu6(x + 3) * (1/6)               (ADD, RELU6, MUL)
    layer_norm(x, w, b)        -> d = x - mean(x); d * rsqrt(d^T d + C eps) * (w sqrt(C)) + b
                                  (over one axis of C elements; d^T d a BATCH_MATMUL per row;
                                  over several axes: d * rsqrt(mean(d*d) + eps) * w + b)
    scaled_dot_product_attention(q, k, v, mask)
                               -> softmax(q @ k^T * scale + mask) @ v
                                  (a boolean mask: softmax(where(mask, q @ k^T * scale, -inf)) @ v;
                                  a row with every key masked then gets uniform weights where
                                  torch's kernel gives zeros — only an all-padding sequence)
    x / c (c a number)         -> x * (1/c)
    gelu(x) (int16 precision)  -> x * sigmoid(x * (a + b x^2))         (tanh form; MUL, LOGISTIC)

and every number operand of add/sub/mul becomes a 0-d tensor constant (a ``get_attr``), so the
quantizer can give it int8 parameters like any other operand (TFLite's int8 ADD/MUL read two
int8 tensors).  New nodes copy the replaced node's ``stack_trace`` and ``nn_module_stack`` (error
messages and ``skip=`` filters keep pointing at the user's module) and carry a ``val`` computed
with the graph's fake tensors.  The rewritten graph computes the same function in float.
"""

from __future__ import annotations

import math

import torch
from torch.fx import GraphModule, Node

aten = torch.ops.aten

_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node")


def _val(a):
    return a.meta["val"] if isinstance(a, Node) else a


def _fake_mode(node: Node):
    for a in [node, *node.all_input_nodes]:
        v = a.meta.get("val")
        if isinstance(v, torch.Tensor) and hasattr(v, "fake_mode"):
            return v.fake_mode
    return None


class _Builder:
    """Emits call_function nodes before ``anchor`` with metadata copied from it."""

    def __init__(self, gm: GraphModule, anchor: Node):
        self.gm, self.anchor = gm, anchor
        self.mode = _fake_mode(anchor)

    def __call__(self, target, *args, **kwargs) -> Node:
        g = self.gm.graph
        with g.inserting_before(self.anchor):
            n = g.call_function(target, args, kwargs)
        for k in _META:
            if k in self.anchor.meta:
                n.meta[k] = self.anchor.meta[k]
        fa = torch.fx.node.map_aggregate(args, _val)
        fk = torch.fx.node.map_aggregate(kwargs, _val)
        if self.mode is not None:
            with self.mode:
                n.meta["val"] = target(*fa, **fk)
        else:
            n.meta["val"] = target(*fa, **fk)
        return n

    def const(self, value: float) -> Node:
        """A 0-d float tensor constant registered on the module (a get_attr node)."""
        name = _fresh_attr(self.gm, "_wick_scalar_")
        t = torch.tensor(float(value))
        self.gm.register_buffer(name, t)
        with self.gm.graph.inserting_before(self.anchor):
            n = self.gm.graph.get_attr(name)
        n.meta["val"] = self.mode.from_tensor(t, static_shapes=True) if self.mode else t
        return n


def _fresh_attr(gm: GraphModule, prefix: str) -> str:
    i = 0
    while hasattr(gm, f"{prefix}{i}"):
        i += 1
    return f"{prefix}{i}"


def _arg(node: Node, i: int, name: str, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _replace(node: Node, new: Node) -> None:
    node.replace_all_uses_with(new)
    node.graph.erase_node(node)


def _silu(b: _Builder, n: Node) -> Node:
    x = n.args[0]
    return b(aten.mul.Tensor, x, b(aten.sigmoid.default, x))


def _hardsigmoid(b: _Builder, n: Node) -> Node:
    x = n.args[0]
    y = b(aten.hardtanh.default, b(aten.add.Tensor, x, 3.0), 0.0, 6.0)
    return b(aten.mul.Tensor, y, 1.0 / 6.0)


def _layer_norm(b: _Builder, n: Node) -> Node:
    x = n.args[0]
    shape = list(_arg(n, 1, "normalized_shape"))
    w, bias = _arg(n, 2, "weight"), _arg(n, 3, "bias")
    eps = float(_arg(n, 4, "eps", 1e-5))
    rank = _val(x).dim()
    axes = list(range(rank - len(shape), rank))
    mean = b(aten.mean.dim, x, axes, True)
    d = b(aten.sub.Tensor, x, mean)
    if len(axes) == 1:
        # the sum of squares as a matrix product d^T d per row: the integer kernel multiplies
        # and accumulates exactly and rounds once, where quantizing d * d first loses every
        # small square next to an outlier channel's (BERT's residual stream has some ~200x
        # the typical value).  rsqrt(sum + C eps) * sqrt(C) = rsqrt(mean + eps); sqrt(C)
        # goes into the weight.
        c = shape[0]
        ss = b(
            aten.matmul.default, b(aten.unsqueeze.default, d, -2), b(aten.unsqueeze.default, d, -1)
        )
        ss = b(aten.squeeze.dim, ss, -1)
        y = b(aten.mul.Tensor, d, b(aten.rsqrt.default, b(aten.add.Tensor, ss, c * eps)))
        w = _scaled_parameter(b, w, math.sqrt(c))
        if w is None:
            y = b(aten.mul.Tensor, y, math.sqrt(c))
    else:
        var = b(aten.mean.dim, b(aten.mul.Tensor, d, d), axes, True)
        y = b(aten.mul.Tensor, d, b(aten.rsqrt.default, b(aten.add.Tensor, var, eps)))
    if w is not None:
        y = b(aten.mul.Tensor, y, w)
    if bias is not None:
        y = b(aten.add.Tensor, y, bias)
    return y


def _scaled_parameter(b: _Builder, w, factor: float):
    """A new constant ``w * factor`` for a constant (get_attr) ``w``; a MUL node for others;
    None for None."""
    if w is None:
        return None
    if isinstance(w, Node) and w.op == "get_attr":
        value = _get_attr(b.gm, w.target).detach() * factor
        name = _fresh_attr(b.gm, "_wick_scaled_")
        b.gm.register_buffer(name, value)
        with b.gm.graph.inserting_before(b.anchor):
            node = b.gm.graph.get_attr(name)
        node.meta["val"] = b.mode.from_tensor(value, static_shapes=True) if b.mode else value
        return node
    return b(aten.mul.Tensor, w, factor)


def _get_attr(gm: GraphModule, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _sdpa(b: _Builder, n: Node) -> Node | None:
    q, k, v = n.args[:3]
    mask = _arg(n, 3, "attn_mask")
    if float(_arg(n, 4, "dropout_p", 0.0)) != 0.0 or _arg(n, 5, "is_causal", False):
        return None  # keep it whole (and float)
    if _arg(n, 7, "enable_gqa", False):
        return None
    scale = _arg(n, 6, "scale")
    if scale is None:
        scale = 1.0 / math.sqrt(_val(q).shape[-1])
    s = b(aten.matmul.default, q, b(aten.transpose.int, k, -2, -1))
    s = b(aten.mul.Tensor, s, float(scale))
    if mask is not None and _val(mask).dtype == torch.bool:
        # a boolean mask (HuggingFace's sdpa path): masked scores become -inf, which the int8
        # SELECT_V2 writes as the lowest level of the scores' range
        s = b(aten.where.self, mask, s, b.const(-math.inf))
    elif mask is not None:
        s = b(aten.add.Tensor, s, mask)
    return b(aten.matmul.default, b(aten.softmax.int, s, -1), v)


_GELU_A = 2.0 * math.sqrt(2.0 / math.pi)  # 0.5 (1 + tanh(u)) = sigmoid(2u)
_GELU_B = _GELU_A * 0.044715


def _gelu_16(b: _Builder, n: Node) -> Node:
    """GELU for int16 activations (LiteRT has no int16 GELU kernel): the tanh form
    x * sigmoid(x (a + b x^2)) (MUL, ADD, LOGISTIC), within 5e-4 of the erf form."""
    x = n.args[0]
    inner = b(aten.add.Tensor, b(aten.mul.Tensor, b(aten.mul.Tensor, x, x), _GELU_B), _GELU_A)
    return b(aten.mul.Tensor, x, b(aten.sigmoid.default, b(aten.mul.Tensor, x, inner)))


def _div(b: _Builder, n: Node) -> Node | None:
    x, c = n.args[0], n.args[1]
    if isinstance(c, Node) or not isinstance(c, (int, float)) or c == 0 or n.kwargs:
        return None
    return b(aten.mul.Tensor, x, 1.0 / float(c))


_DECOMPOSE = {
    aten.silu.default: _silu,
    aten.silu_.default: _silu,
    aten.hardsigmoid.default: _hardsigmoid,
    aten.hardsigmoid_.default: _hardsigmoid,
    aten.layer_norm.default: _layer_norm,
    aten.scaled_dot_product_attention.default: _sdpa,
    aten.div.Tensor: _div,
    aten.div_.Tensor: _div,
}

_SCALAR_OPERANDS = {
    aten.add.Tensor,
    aten.add_.Tensor,
    aten.sub.Tensor,
    aten.sub_.Tensor,
    aten.mul.Tensor,
    aten.mul_.Tensor,
}


def decompose_for_int8(gm: GraphModule, int16=None) -> GraphModule:
    """Apply the rewrites in the module docstring in place; returns ``gm``.  ``int16(node)``:
    True for the ops that will compute with int16 activations (GELU is then spelled out)."""
    for n in list(gm.graph.nodes):
        if n.op != "call_function":
            continue
        rule = _DECOMPOSE.get(n.target)
        if n.target == aten.gelu.default and int16 is not None and int16(n):
            rule = _gelu_16
        if rule is None:
            continue
        new = rule(_Builder(gm, n), n)
        if new is not None:
            _replace(n, new)
    for n in list(gm.graph.nodes):
        if n.op != "call_function" or n.target not in _SCALAR_OPERANDS:
            continue
        if not isinstance(n.meta.get("val"), torch.Tensor) or not n.meta["val"].is_floating_point():
            continue
        b = _Builder(gm, n)
        args = list(n.args)
        changed = False
        for i, a in enumerate(args[:2]):
            if isinstance(a, (int, float)) and not isinstance(a, bool):
                args[i] = b.const(a)
                changed = True
        if changed and n.kwargs.get("alpha", 1) == 1:
            n.args = tuple(args)
    gm.graph.eliminate_dead_code()
    gm.graph.lint()
    gm.recompile()
    return gm
