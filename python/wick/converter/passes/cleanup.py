"""Cleanup on the TFLite-level graph.

Invariants after ``cleanup(g)``:
* no TRANSPOSE that only moves size-1 dims (it became a RESHAPE), no identity TRANSPOSE;
* no RESHAPE to the shape it already has, no RESHAPE of a RESHAPE;
* no two ops that compute the same thing from the same inputs (common subexpressions merged);
* every op contributes to a graph output; ops are in topological order.
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph
from .layout import is_identity, is_pure_reshape, perm_of


def _simplify(g: TGraph, to_reshape: bool) -> bool:
    changed = False
    for op in list(g.ops):
        if op not in g.ops:
            continue
        if op.op == "TRANSPOSE":
            q = perm_of(op)
            if q is None:
                continue
            x, y = op.inputs[0], op.outputs[0]
            if is_identity(q):
                g.replace_uses(y, x)
                g.remove(op)
                changed = True
            elif (
                to_reshape and is_pure_reshape(x.shape, q) and sum(1 for d in y.shape if d < 0) <= 1
            ):
                op.op = "RESHAPE"
                g.set_input(op, 1, g.const(y.name + "/shape", np.asarray(y.shape, np.int32)))
                changed = True
        elif op.op == "RESHAPE":
            x, y = op.inputs[0], op.outputs[0]
            if x.shape == y.shape and sum(1 for d in y.shape if d < 0) <= 1:
                g.replace_uses(y, x)
                g.remove(op)
                changed = True
                continue
            p = x.producer
            if p is not None and p.op == "RESHAPE":
                g.set_input(op, 0, p.inputs[0])
                changed = True
    return changed


def _quant_key(t):
    """A tensor's quantization parameters as a hashable value (None when not quantized)."""
    q = t.quant
    if not q:
        return None
    return tuple(
        (k, tuple(np.asarray(v).reshape(-1).tolist()) if not np.isscalar(v) else v)
        for k, v in sorted(q.items())
    )


def _key(op):
    """Ops with equal keys compute the same tensor: same op, options, inputs (small constants
    by value and quantization: two int8 constants with equal bytes but different scales are
    different numbers) and output quantization (QUANTIZE to two scales is two tensors)."""
    parts = [op.op, tuple(sorted((k, repr(v)) for k, v in op.options.items()))]
    for t in op.inputs:
        if t is None:
            parts.append(None)
        elif t.is_const and t.numel <= 64:
            parts.append(("c", t.dtype, tuple(t.shape), t.data.tobytes(), _quant_key(t)))
        else:
            parts.append(t.id)
    parts.append(tuple(_quant_key(t) for t in op.outputs))
    return tuple(parts)


def _cse(g: TGraph) -> bool:
    seen = {}
    changed = False
    g.toposort()
    for op in list(g.ops):
        if len(op.outputs) != 1:
            continue
        k = _key(op)
        prev = seen.get(k)
        if prev is None:
            seen[k] = op
            continue
        y = op.outputs[0]
        if prev.outputs[0].shape != y.shape or prev.outputs[0].dtype != y.dtype:
            continue
        g.replace_uses(y, prev.outputs[0])
        g.remove(op)
        changed = True
    return changed


def cleanup(g: TGraph, transposes_to_reshapes: bool = True) -> None:
    """``transposes_to_reshapes=False`` before the layout pass: a TRANSPOSE that only moves
    size-1 dims must stay a TRANSPOSE there so that it can still sink and cancel."""
    for _ in range(20):
        a = _simplify(g, transposes_to_reshapes)
        b = _cse(g)
        g.dce()
        if not (a or b):
            break
    g.toposort()
