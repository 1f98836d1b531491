"""Lowering rules for reductions, scans and selections: sum/mean/prod/amax/amin/any, argmax,
max.dim, var, cumsum, topk, sort.

Reduced dims are normalized (empty list or None = all dims); ``keepdim`` maps to TFLite's
``keep_dims``.  Sums of bool/int8/int16 tensors accumulate in int32 (torch promotes to int64;
the int-range pass proves int32 suffices or the output stays int64 via a final cast).
"""

from __future__ import annotations

import numpy as np

from ..ir import Node
from .context import Ctx
from .elementwise import emit_binary


def _dims(dims, rank: int) -> list[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank for d in dims}) if rank else []


def _reduce(ctx: Ctx, op: str, X, dims, keep: bool, out_shape, dtype=None):
    if X.rank == 0 or not dims:
        return ctx.reshape(X, out_shape)
    shape = [1 if i in dims else d for i, d in enumerate(X.shape)]
    if not keep:
        shape = [d for i, d in enumerate(X.shape) if i not in dims]
    y = ctx.emit(op, [X, ctx.i32(dims, "axes")], shape, dtype or X.dtype, dict(keep_dims=keep))
    return ctx.reshape(y, out_shape)


def _reducer(op: str, bool_op: str | None = None):
    def rule(ctx: Ctx, node: Node):
        a = ctx.args(node)
        X = ctx.t(a.self)
        dims = _dims(getattr(a, "dim", None), X.rank)
        keep = bool(getattr(a, "keepdim", False))
        dt = ctx.dtype(node.out)
        if op in ("SUM", "REDUCE_PROD") and X.dtype in ("bool", "int8", "int16", "uint8"):
            X = ctx.cast(X, "int32")
        elif op == "MEAN" or dt.startswith("float"):
            X = ctx.cast(X, dt)
        if X.dtype == "bool" and bool_op is not None:
            y = _reduce(ctx, bool_op, X, dims, keep, ctx.shape(node.out))
        else:
            y = _reduce(ctx, op, X, dims, keep, ctx.shape(node.out))
        ctx.bind(node.out, y)

    return rule


def lower_any(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    if X.dtype != "bool":
        X = ctx.binary("NOT_EQUAL", X, ctx.scalar(0, X.dtype), "bool")
    dims = _dims(getattr(a, "dim", None), X.rank)
    keep = bool(getattr(a, "keepdim", False))
    ctx.bind(node.out, _reduce(ctx, "REDUCE_ANY", X, dims, keep, ctx.shape(node.out)))


def _arg(op: str):
    def rule(ctx: Ctx, node: Node):
        a = ctx.args(node)
        X = ctx.t(a.self)
        out_shape = ctx.shape(node.out)
        if a.dim is None:
            X = ctx.reshape(X, [X.numel])
            dim = 0
        else:
            dim = a.dim % max(X.rank, 1)
        if X.rank == 0:
            ctx.bind(node.out, ctx.const(np.zeros(out_shape, np.int32), "int32"))
            return
        if X.dtype == "bool":
            X = ctx.cast(X, "int32")
        shape = [d for i, d in enumerate(X.shape) if i != dim]
        y = ctx.emit(op, [X, ctx.i32([dim], "axis")], shape, "int32", dict(output_type="int32"))
        ctx.bind(node.out, ctx.reshape(y, out_shape))

    return rule


def lower_max_dim(ctx: Ctx, node: Node, red="REDUCE_MAX", arg="ARG_MAX"):
    a = ctx.args(node)
    X = ctx.t(a.self)
    dim = a.dim % max(X.rank, 1)
    keep = bool(a.keepdim)
    vals = _reduce(ctx, red, X, [dim], keep, ctx.shape(node.outputs[0]))
    ctx.bind(node.outputs[0], vals)
    if len(node.outputs) > 1 and (node.outputs[1].users or ctx.graph.is_output(node.outputs[1])):
        shape = [d for i, d in enumerate(X.shape) if i != dim]
        idx = ctx.emit(arg, [X, ctx.i32([dim], "axis")], shape, "int32", dict(output_type="int32"))
        ctx.bind(node.outputs[1], ctx.reshape(idx, ctx.shape(node.outputs[1])))


def lower_min_dim(ctx: Ctx, node: Node):
    lower_max_dim(ctx, node, "REDUCE_MIN", "ARG_MIN")


def lower_var(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.cast(ctx.t(a.self), ctx.dtype(node.out))
    dims = _dims(a.dim, X.rank)
    correction = a.correction if a.correction is not None else 1
    if hasattr(a, "unbiased") and a.unbiased is not None and not hasattr(a, "correction"):
        correction = 1 if a.unbiased else 0
    n = int(np.prod([X.shape[d] for d in dims])) if dims else 1
    keep = bool(a.keepdim)
    ax = ctx.i32(dims, "axes")
    mshape = [1 if i in dims else d for i, d in enumerate(X.shape)]
    mean = ctx.emit("MEAN", [X, ax], mshape, X.dtype, dict(keep_dims=True))
    d = emit_binary(ctx, "SUB", X, mean)
    sq = emit_binary(ctx, "MUL", d, d)
    s = _reduce(ctx, "SUM", sq, dims, keep, ctx.shape(node.out))
    denom = max(n - float(correction), 0.0)
    scale = (1.0 / denom) if denom > 0 else float("nan")
    ctx.bind(node.out, emit_binary(ctx, "MUL", s, ctx.scalar(scale, X.dtype)))


def lower_cumsum(ctx: Ctx, node: Node):
    a = ctx.args(node)
    dt = ctx.dtype(node.out)
    X = ctx.t(a.self)
    if X.dtype in ("bool", "int8", "int16", "uint8") or X.dtype != dt:
        X = ctx.cast(X, "int32" if not dt.startswith("float") else dt)
    dim = a.dim % max(X.rank, 1)
    y = ctx.emit(
        "CUMSUM",
        [X, ctx.i32([dim], "axis")],
        X.shape,
        X.dtype,
        dict(exclusive=False, reverse=False),
    )
    ctx.bind(node.out, y)


def _topk_last(ctx: Ctx, X, k: int, largest: bool):
    src = X if largest else ctx.unary("NEG", X)
    vals, idx = ctx.emit_multi(
        "TOPK_V2",
        [src, ctx.scalar(k, "int32")],
        [(X.shape[:-1] + [k], X.dtype), (X.shape[:-1] + [k], "int32")],
    )
    if not largest:
        vals = ctx.unary("NEG", vals)
    return vals, idx


def lower_topk(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    r = X.rank
    dim = a.dim % r
    k = int(a.k)
    perm = list(range(r))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    Xt = ctx.transpose(X, perm)
    vals, idx = _topk_last(ctx, Xt, k, bool(a.largest))
    ctx.bind(node.outputs[0], ctx.transpose(vals, perm))
    if node.outputs[1].users or ctx.graph.is_output(node.outputs[1]):
        ctx.bind(node.outputs[1], ctx.transpose(idx, perm))


def lower_sort(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    r = X.rank
    dim = a.dim % r
    perm = list(range(r))
    perm[dim], perm[-1] = perm[-1], perm[dim]
    Xt = ctx.transpose(X, perm)
    vals, idx = _topk_last(ctx, Xt, Xt.shape[-1], bool(a.descending))
    ctx.bind(node.outputs[0], ctx.transpose(vals, perm))
    if node.outputs[1].users or ctx.graph.is_output(node.outputs[1]):
        ctx.bind(node.outputs[1], ctx.transpose(idx, perm))


RULES = {
    "sum.dim_IntList": _reducer("SUM"),
    "sum.default": _reducer("SUM"),
    "mean.dim": _reducer("MEAN"),
    "mean.default": _reducer("MEAN"),
    "prod.dim_int": _reducer("REDUCE_PROD"),
    "prod.default": _reducer("REDUCE_PROD"),
    "amax.default": _reducer("REDUCE_MAX", "REDUCE_ANY"),
    "max.default": _reducer("REDUCE_MAX", "REDUCE_ANY"),
    "min.default": _reducer("REDUCE_MIN", "REDUCE_ALL"),
    "amin.default": _reducer("REDUCE_MIN", "REDUCE_ALL"),
    "any.dim": lower_any,
    "any.dims": lower_any,
    "any.default": lower_any,
    "argmax.default": _arg("ARG_MAX"),
    "argmin.default": _arg("ARG_MIN"),
    "max.dim": lower_max_dim,
    "min.dim": lower_min_dim,
    "var.correction": lower_var,
    "var.dim": lower_var,
    "cumsum.default": lower_cumsum,
    "topk.default": lower_topk,
    "sort.default": lower_sort,
}
