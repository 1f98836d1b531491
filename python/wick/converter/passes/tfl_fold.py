"""Constant folding on the TFLite-level graph.

Invariant: no op whose inputs are all constant (and whose semantics are data movement, casts or
exact float arithmetic that numpy reproduces bit for bit) remains; its output becomes a
constant.  This is where weight layouts land: lowering writes ``TRANSPOSE(weight_OIHW, 0,2,3,1)``
and this pass turns it into the OHWI constant that CONV_2D reads.
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph, TOp


def _perm(op: TOp):
    return [int(p) for p in op.inputs[1].data.reshape(-1)]


def _eval(op: TOp):
    ins = [t.data if t is not None else None for t in op.inputs]
    out = op.outputs[0]
    name = op.op
    if name == "TRANSPOSE":
        return np.transpose(ins[0], _perm(op))
    if name == "RESHAPE":
        return ins[0].reshape(out.shape)
    if name in ("SQUEEZE", "EXPAND_DIMS"):
        return ins[0].reshape(out.shape)
    if name == "CAST":
        return ins[0].astype(out.dtype)
    if name in ("ADD", "SUB", "MUL", "DIV") and op.options.get(
        "fused_activation_function", "NONE"
    ) in ("NONE", 0):
        f = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": np.divide}[name]
        if name == "DIV" and not out.dtype.startswith("float"):
            return None
        return f(ins[0], ins[1]).astype(out.dtype)
    if name == "NEG":
        return np.negative(ins[0])
    if name == "CONCATENATION":
        return np.concatenate(ins, axis=op.options["axis"])
    if name == "SLICE":
        begin, size = ins[1].reshape(-1), ins[2].reshape(-1)
        sl = tuple(
            slice(int(b), int(b) + (int(s) if s >= 0 else ins[0].shape[i]))
            for i, (b, s) in enumerate(zip(begin, size, strict=True))
        )
        return ins[0][sl]
    if name == "PAD":
        return np.pad(ins[0], ins[1].astype(np.int64))
    if name == "GATHER" and op.options.get("batch_dims", 0) == 0:
        return np.take(ins[0], ins[1].astype(np.int64), axis=op.options["axis"])
    if name == "BROADCAST_TO":
        return np.broadcast_to(ins[0], out.shape).copy()
    if name == "TILE":
        return np.tile(ins[0], ins[1].reshape(-1).astype(np.int64))
    return None


def _through_dequantize(g: TGraph) -> int:
    """TRANSPOSE(DEQUANTIZE(int8 constant)) -> DEQUANTIZE(transposed constant), remapping the
    per-channel dimension, so quantized weights land in the filter layout like float ones."""
    n = 0
    for op in list(g.ops):
        if op.op != "TRANSPOSE" or op not in g.ops or not op.inputs[1].is_const:
            continue
        d = op.inputs[0].producer
        if d is None or d.op != "DEQUANTIZE" or not d.inputs[0].is_const:
            continue
        if len(g.users_of(op.inputs[0])) != 1 or g.is_output(op.inputs[0]):
            continue
        perm = _perm(op)
        c = d.inputs[0]
        q = dict(c.quant or {})
        if len(q.get("scale", [])) > 1:
            q["quantized_dimension"] = perm.index(int(q.get("quantized_dimension", 0)))
        nc = g.const(c.name + "/t", np.transpose(c.data, perm))
        nc.quant = q
        out = op.outputs[0]
        g.remove(op)
        g.remove(d)
        g.add("DEQUANTIZE", [nc], [out], origin=d.origin)
        n += 1
    if n:
        g.toposort()
    return n


def tfl_fold(g: TGraph) -> int:
    n = _through_dequantize(g)
    for op in list(g.ops):
        if len(op.outputs) != 1 or not all(t is None or t.is_const for t in op.inputs):
            continue
        if not op.inputs or op.inputs[0] is None:
            continue
        out = op.outputs[0]
        in_bytes = sum(t.data.nbytes for t in op.inputs if t is not None)
        out_bytes = out.numel * np.dtype(out.dtype).itemsize
        if out_bytes > max(1 << 16, 4 * in_bytes):
            continue  # folding would bloat the file (e.g. a broadcast of a weight)
        res = _eval(op)
        if res is None:
            continue
        res = np.asarray(np.asarray(res).astype(out.dtype).reshape(out.shape), order="C")
        c = g.const(out.name, res)
        g.replace_uses(out, c)
        g.remove(op)
        for t in op.inputs:  # a weight in its old layout: free it now, not when the pass ends
            if t is not None and t.is_const and not t.users and not g.is_output(t):
                t.data = None
        n += 1
    return n
