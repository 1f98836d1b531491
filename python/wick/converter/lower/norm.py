"""Lowering rules for normalization ATen ops: layer norm, group norm and batch norm (running
statistics folded into a per-channel scale and shift, or the batch's own statistics), written as
MEAN / SUB / MUL / RSQRT / ADD chains (wick's runtime fuses the layer-norm form back).
"""

from __future__ import annotations

import numpy as np
import torch

from ..ir import Node
from .context import Ctx
from .elementwise import emit_binary

# ---- normalization -----------------------------------------------------------------------------


def _normalize(ctx: Ctx, X, axes, eps):
    """(x - mean) * rsqrt(var + eps) over ``axes``; returns (y, mean, rstd) (keep_dims)."""
    red_shape = [1 if i in axes else d for i, d in enumerate(X.shape)]
    ax = ctx.i32(axes, "axes")
    mean = ctx.emit("MEAN", [X, ax], red_shape, X.dtype, dict(keep_dims=True))
    d = emit_binary(ctx, "SUB", X, mean)
    var = ctx.emit(
        "MEAN", [emit_binary(ctx, "MUL", d, d), ax], red_shape, X.dtype, dict(keep_dims=True)
    )
    rstd = ctx.unary("RSQRT", emit_binary(ctx, "ADD", var, ctx.scalar(eps, X.dtype)))
    return emit_binary(ctx, "MUL", d, rstd), mean, rstd


def lower_layer_norm(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.input)
    k = len(a.normalized_shape)
    axes = list(range(X.rank - k, X.rank))
    y, mean, rstd = _normalize(ctx, X, axes, float(a.eps))
    if a.weight is not None:
        y = emit_binary(ctx, "MUL", y, ctx.t(a.weight))
    if a.bias is not None:
        y = emit_binary(ctx, "ADD", y, ctx.t(a.bias))
    ctx.bind(node.outputs[0], y)
    for i, t in ((1, mean), (2, rstd)):
        if len(node.outputs) > i and node.outputs[i].users:
            ctx.bind(node.outputs[i], ctx.reshape(t, ctx.shape(node.outputs[i])))


def lower_group_norm(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.input)
    n, c = X.shape[0], X.shape[1]
    g = int(a.group)
    xg = ctx.reshape(X, [n, g, (c // g) * int(np.prod(X.shape[2:]))])
    y, mean, rstd = _normalize(ctx, xg, [2], float(a.eps))
    y = ctx.reshape(y, X.shape)
    bshape = [c] + [1] * (X.rank - 2)
    if a.weight is not None:
        y = emit_binary(ctx, "MUL", y, ctx.reshape(ctx.t(a.weight), bshape))
    if a.bias is not None:
        y = emit_binary(ctx, "ADD", y, ctx.reshape(ctx.t(a.bias), bshape))
    ctx.bind(node.outputs[0], y)
    for i, t in ((1, mean), (2, rstd)):
        if len(node.outputs) > i and node.outputs[i].users:
            ctx.bind(node.outputs[i], ctx.reshape(t, ctx.shape(node.outputs[i])))


def lower_batch_norm(ctx: Ctx, node: Node):
    # _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
    # momentum, eps): y = x * scale + shift per channel (dim 1)
    x, w, b, mean, var, _mom, eps = node.args[:7]
    X = ctx.t(x)
    c = X.shape[1]
    bshape = [c] + [1] * (X.rank - 2)
    if all(v is None or v.is_const for v in (w, b, mean, var)):
        g = w.const.double() if w is not None else torch.ones(c, dtype=torch.float64)
        be = b.const.double() if b is not None else torch.zeros(c, dtype=torch.float64)
        scale = g / torch.sqrt(var.const.double() + eps)
        shift = be - mean.const.double() * scale
        S = ctx.const(scale.numpy().astype(np.float32).reshape(bshape))
        T = ctx.const(shift.numpy().astype(np.float32).reshape(bshape))
    else:
        V = ctx.reshape(ctx.t(var), bshape)
        M = ctx.reshape(ctx.t(mean), bshape)
        S = ctx.unary("RSQRT", emit_binary(ctx, "ADD", V, ctx.scalar(eps, X.dtype)))
        if w is not None:
            S = emit_binary(ctx, "MUL", S, ctx.reshape(ctx.t(w), bshape))
        T = ctx.unary("NEG", emit_binary(ctx, "MUL", M, S))
        if b is not None:
            T = emit_binary(ctx, "ADD", T, ctx.reshape(ctx.t(b), bshape))
    y = emit_binary(ctx, "ADD", emit_binary(ctx, "MUL", X, S), T)
    ctx.bind(node.outputs[0], y)
    for o in node.outputs[1:]:
        if o.users:
            raise ctx.error("batch-norm statistics outputs are not supported")


def lower_batch_norm_batch_stats(ctx: Ctx, node: Node):
    # _native_batch_norm_legit(.no_stats): normalize with the statistics of this batch over
    # every dim but the channel dim 1 (instance norm exports this way)
    a = ctx.args(node)
    X = ctx.t(a.input)
    c = X.shape[1]
    axes = [i for i in range(X.rank) if i != 1]
    y, mean, rstd = _normalize(ctx, X, axes, float(a.eps))
    bshape = [c] + [1] * (X.rank - 2)
    if a.weight is not None:
        y = emit_binary(ctx, "MUL", y, ctx.reshape(ctx.t(a.weight), bshape))
    if a.bias is not None:
        y = emit_binary(ctx, "ADD", y, ctx.reshape(ctx.t(a.bias), bshape))
    ctx.bind(node.outputs[0], y)
    for i, t in ((1, mean), (2, rstd)):
        if len(node.outputs) > i and node.outputs[i].users:
            ctx.bind(node.outputs[i], ctx.reshape(t, ctx.shape(node.outputs[i])))


RULES = {
    "native_layer_norm.default": lower_layer_norm,
    "native_group_norm.default": lower_group_norm,
    "_native_batch_norm_legit_no_training.default": lower_batch_norm,
    "_native_batch_norm_legit.no_stats": lower_batch_norm_batch_stats,
    "_native_batch_norm_legit.default": lower_batch_norm_batch_stats,
}
