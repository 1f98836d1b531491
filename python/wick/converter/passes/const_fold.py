"""Constant folding on the ATen-level graph.

Invariant: no remaining node has only constant tensor inputs, unless folding it would be wrong
(random ops) or wasteful (its result is much larger than its inputs, e.g. ``expand`` of a
constant: that stays a runtime broadcast).  Ops that depend only on an input's *shape*
(``zeros_like`` …) fold when the shape is static.  Folding runs the ATen op itself in eager
PyTorch, so folded values are exactly what PyTorch computes.
"""

from __future__ import annotations

import torch

from ..ir import Graph, Value, iter_values

_RANDOM = {
    "rand",
    "randn",
    "randperm",
    "randint",
    "bernoulli",
    "normal",
    "uniform",
    "native_dropout",
    "exponential",
    "multinomial",
    "rand_like",
    "randn_like",
    "randint_like",
}
# as_strided depends on the export-time memory layout (lower/shape.py); dequantize ops keep
# their int8 constants so the quantization pass can run int8 kernels on them
_NO_FOLD = {"as_strided", "dequantize_per_channel", "dequantize_per_tensor"}
_SHAPE_ONLY = {"full_like", "zeros_like", "ones_like", "empty_like"}
_MAX_GROWTH = 4
_SMALL = 1 << 16  # bytes: always fine to fold


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _base(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return target._schema.name.split("::")[-1]
    return ""


def const_fold(g: Graph) -> int:
    folded = 0
    for node in list(g.nodes):
        if not isinstance(node.target, torch._ops.OpOverload):
            continue
        base = _base(node.target)
        if base in _RANDOM or base in _NO_FOLD or not node.outputs:
            continue
        ins = node.inputs
        if base in _SHAPE_ONLY:
            src = ins[0] if ins else None
            if src is None or not src.is_static:
                continue
            proxy = {id(src): torch.empty(src.shape, dtype=src.dtype)}
        else:
            if not all(v.is_const for v in ins):
                continue
            proxy = {}
        if any(not v.is_static or v.meta.get("scalar") for v in node.outputs):
            continue

        def sub(x, proxy=proxy):
            if isinstance(x, Value):
                return proxy.get(id(x), x.const)
            if isinstance(x, (list, tuple)):
                return type(x)(sub(i) for i in x)
            return x

        args = sub(node.args)
        kwargs = sub(node.kwargs)
        try:
            with torch.no_grad():
                result = node.target(*args, **kwargs)
        except Exception:
            continue
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        if not all(isinstance(r, torch.Tensor) for r in results):
            continue
        in_bytes = sum(_nbytes(v.const) for v in ins if v.is_const)
        out_bytes = sum(_nbytes(r) for r in results)
        if out_bytes > _SMALL and out_bytes > _MAX_GROWTH * max(in_bytes, 1):
            continue
        if base == "empty":
            results = [torch.zeros_like(r) for r in results]
        for v, r in zip(node.outputs, results, strict=True):
            c = g.constant(v.name, r)
            c.meta.update(v.meta)
            g.replace_uses(v, c)
        g.remove_node(node)
        folded += 1
    return folded


def is_const_scalar(v) -> bool:
    return isinstance(v, Value) and v.is_const and v.const.numel() == 1


__all__ = ["const_fold", "iter_values", "is_const_scalar"]
