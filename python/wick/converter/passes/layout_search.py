"""Layout search: try NHWC islands where local transpose sinking gets stuck.

Sinking (layout.py) only moves a transpose past one op at a time, so it stops at a merge point
whose other operand has no transpose to cancel against — e.g. after a channel shuffle, where a
tensor feeds both a convolution (which wants NHWC) and a concatenation with a convolution's
NHWC output.  For each such tensor x (a 4-d tensor consumed both by TRANSPOSE(0,2,3,1) and by
something else) this pass tries the identity rewrite

    x  ->  TRANSPOSE(TRANSPOSE(x, 0,2,3,1), 0,3,1,2)   for the non-transpose consumers

on a copy of the graph (x's existing TRANSPOSE(0,2,3,1) consumers merged into the new one, so
that it can hoist into x's producer), lets sinking/hoisting/cleanup run, and keeps the copy only
when it has fewer transposes (ties broken by fewer transposed elements).

Invariant: the result computes exactly what the input graph computes and never has more
transposes than it.
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph
from .cleanup import cleanup
from .layout import _Sinker, hoist_transposes, perm_of, sink_transposes

_TO_NHWC = [0, 2, 3, 1]
_TO_NCHW = [0, 3, 1, 2]


def transpose_cost(g: TGraph) -> tuple[int, int]:
    ts = [op for op in g.ops if op.op == "TRANSPOSE"]
    return len(ts), sum(max(op.outputs[0].numel, 0) for op in ts)


def _candidates(g: TGraph):
    """4-d tensors where sinking got stuck: RESHAPE(TRANSPOSE(...)) results (a channel shuffle
    back to NCHW) and inputs of an NCHW->NHWC transpose that also have other consumers."""
    out = []
    for op in g.ops:
        x = None
        if op.op == "RESHAPE" and op.outputs[0].rank == 4:
            p = op.inputs[0].producer
            if p is not None and p.op == "TRANSPOSE":
                x = op.outputs[0]
        elif op.op == "TRANSPOSE" and perm_of(op) == _TO_NHWC:
            x = op.inputs[0]
            if not [u for u in g.users_of(x) if u.op != "TRANSPOSE"]:
                x = None
        if x is None or x.is_const or x.rank != 4 or x.name in out:
            continue
        out.append(x.name)
    return out


def _try(g: TGraph, name: str) -> TGraph | None:
    h = g.clone()
    xs = [t for op in h.ops for t in op.outputs if t.name == name] + [
        t for t in h.inputs if t.name == name
    ]
    if len(xs) != 1:
        return None
    x = xs[0]
    others = [u for u in h.users_of(x) if u.op != "TRANSPOSE"]
    if not others:
        return None
    nhwc = h.tensor(x.name + "/nhwc_try", [x.shape[p] for p in _TO_NHWC], x.dtype, like=x)
    fwd = h.add(
        "TRANSPOSE", [x, h.const(nhwc.name + "/perm", np.asarray(_TO_NHWC, np.int32))], [nhwc]
    )
    back = h.tensor(x.name + "/nchw_try", x.shape, x.dtype, like=x)
    bwd = h.add(
        "TRANSPOSE", [nhwc, h.const(back.name + "/perm", np.asarray(_TO_NCHW, np.int32))], [back]
    )
    for u in others:
        for i, t in enumerate(u.inputs):
            if t is x:
                h.set_input(u, i, back)
    for u in h.users_of(x):  # x's own NCHW->NHWC transposes become the new one (CSE), so that
        if u is not fwd and u.op == "TRANSPOSE" and perm_of(u) == _TO_NHWC:  # fwd can hoist
            h.replace_uses(u.outputs[0], nhwc)
            h.remove(u)
    if h.is_output(x):
        h.outputs = [back if t is x else t for t in h.outputs]
    h.toposort()
    # hoist the new NCHW->NHWC transpose into x's producer and sink the NHWC->NCHW one into
    # x's consumers first; a plain sink would simply cancel the pair we just inserted
    hoist_transposes(h, only=[fwd])
    if bwd in h.ops:
        _Sinker(h).sink(bwd)
    sink_transposes(h)
    cleanup(h, transposes_to_reshapes=False)
    sink_transposes(h)
    cleanup(h, transposes_to_reshapes=False)
    return h


def search_layouts(g: TGraph, max_trials: int = 64) -> int:
    cleanup(g, transposes_to_reshapes=False)
    best = transpose_cost(g)
    accepted = 0
    tried: set[str] = set()
    for _ in range(max_trials):
        cands = [c for c in _candidates(g) if c not in tried]
        if not cands:
            break
        name = cands[0]
        tried.add(name)
        h = _try(g, name)
        if h is None:
            continue
        cost = transpose_cost(h)
        if cost < best:
            g.replace_with(h)
            best = cost
            accepted += 1
    return accepted
