"""Lowering rules for resizing ATen ops: nearest and bilinear upsampling (RESIZE_* where TFLite's
sampling matches PyTorch's, else a separable interpolation matrix), pixel shuffle / unshuffle,
and grid sampling. Layout and padding conventions as nn.py.
"""

from __future__ import annotations

import numpy as np
import torch

from ..ir import Node
from .context import Ctx
from .elementwise import emit_binary
from .nn import NCHW_TO_NHWC, NHWC_TO_NCHW, separable_linear

# ---- resizing --------------------------------------------------------------------------------


def _interp_matrix(fn, n_in: int, n_out: int, scale) -> np.ndarray:
    """The (n_out, n_in) matrix of PyTorch's 1-d interpolation along H, measured by running the
    ATen op on a one-hot basis (so it is exactly PyTorch's coordinate rule)."""
    basis = torch.eye(n_in, dtype=torch.float64).reshape(1, n_in, n_in, 1)
    if scale is None:
        out = fn(basis, [n_out, 1], None)
    else:
        out = fn(basis, None, [scale, 1.0])
    if out.shape[2] != n_out:
        raise AssertionError("interpolation matrix size mismatch")
    return out[0, :, :, 0].T.numpy()


def _resize(ctx: Ctx, node: Node, bilinear: bool):
    a = ctx.args(node)
    x = a.input
    X = ctx.t(x)
    n, c, H, W = X.shape
    out = ctx.shape(node.out)
    oh, ow = out[2], out[3]
    scales = list(a.scale_factors) if a.scale_factors else None
    align = bool(getattr(a, "align_corners", False)) if bilinear else False
    # TFLite's coordinate rule: src = dst * in/out (nearest, no flags), half-pixel for
    # bilinear without align_corners; PyTorch uses 1/scale when scale factors are given.
    exact_scale = scales is None or (oh == H * scales[0] and ow == W * scales[1])
    if bilinear:
        op_ok = align or exact_scale
    else:
        op_ok = exact_scale
    if op_ok:
        xh = ctx.transpose(X, NCHW_TO_NHWC)
        size = ctx.i32([oh, ow], "size")
        if bilinear:
            opts = dict(align_corners=align, half_pixel_centers=not align)
            yh = ctx.emit("RESIZE_BILINEAR", [xh, size], [n, oh, ow, c], X.dtype, opts)
        else:
            yh = ctx.emit(
                "RESIZE_NEAREST_NEIGHBOR",
                [xh, size],
                [n, oh, ow, c],
                X.dtype,
                dict(align_corners=False, half_pixel_centers=False),
            )
        ctx.bind(node.out, ctx.transpose(yh, NHWC_TO_NCHW))
        return
    if bilinear:

        def fn(b, size, sc):
            return torch.ops.aten.upsample_bilinear2d.vec(b, size, align, sc)
    else:

        def fn(b, size, sc):
            return torch.ops.aten.upsample_nearest2d.vec(b, size, sc)

    mh = _interp_matrix(fn, H, oh, scales[0] if scales else None)
    mw = _interp_matrix(fn, W, ow, scales[1] if scales else None)
    ctx.bind(node.out, separable_linear(ctx, X, mh, mw))


def lower_upsample_nearest2d(ctx: Ctx, node: Node):
    _resize(ctx, node, bilinear=False)


def lower_upsample_bilinear2d(ctx: Ctx, node: Node):
    _resize(ctx, node, bilinear=True)


def lower_pixel_shuffle(ctx: Ctx, node: Node):
    x, r = node.args[0], int(node.args[1])
    X = ctx.t(x)
    *lead, c, h, w = X.shape
    oc = c // (r * r)
    b = int(np.prod(lead)) if lead else 1
    y = ctx.reshape(X, [b, oc, r, r, h, w])
    y = ctx.transpose(y, [0, 1, 4, 2, 5, 3])
    ctx.bind(node.out, ctx.reshape(y, ctx.shape(node.out)))


def lower_pixel_unshuffle(ctx: Ctx, node: Node):
    x, r = node.args[0], int(node.args[1])
    X = ctx.t(x)
    *lead, c, h, w = X.shape
    b = int(np.prod(lead)) if lead else 1
    y = ctx.reshape(X, [b, c, h // r, r, w // r, r])
    y = ctx.transpose(y, [0, 1, 3, 5, 2, 4])
    ctx.bind(node.out, ctx.reshape(y, ctx.shape(node.out)))


def lower_grid_sampler_2d(ctx: Ctx, node: Node):
    """grid_sample as gathers: unnormalize the grid, then for each tap (1 for nearest, 4 for
    bilinear) GATHER_ND the NHWC input at clamped integer coords, weight it, and zero the taps
    outside the image (padding 'zeros') or clamp the coords first (padding 'border')."""
    a = ctx.args(node)
    mode, pad, align = int(a.interpolation_mode), int(a.padding_mode), bool(a.align_corners)
    if mode not in (0, 1):
        raise ctx.error("grid_sample mode='bicubic' is not supported")
    if pad not in (0, 1):
        raise ctx.error("grid_sample padding_mode='reflection' is not supported")
    X = ctx.t(a.input)
    G = ctx.t(a.grid)
    n, c, h, w = ctx.static_shape(a.input)
    _, ho, wo, _ = ctx.static_shape(a.grid)
    f32 = "float32"

    def part(k):
        t = ctx.emit(
            "SLICE", [G, ctx.i32([0, 0, 0, k]), ctx.i32([n, ho, wo, 1])], [n, ho, wo, 1], f32
        )
        return ctx.reshape(t, [n, ho, wo])

    def unnorm(v, size):
        if align:  # ((v + 1) / 2) * (size - 1)
            return emit_binary(
                ctx,
                "MUL",
                emit_binary(ctx, "ADD", v, ctx.scalar(1.0, f32)),
                ctx.scalar((size - 1) / 2.0, f32),
            )
        # ((v + 1) * size - 1) / 2
        return emit_binary(
            ctx,
            "SUB",
            emit_binary(
                ctx,
                "MUL",
                emit_binary(ctx, "ADD", v, ctx.scalar(1.0, f32)),
                ctx.scalar(size / 2.0, f32),
            ),
            ctx.scalar(0.5, f32),
        )

    ix, iy = unnorm(part(0), w), unnorm(part(1), h)
    if pad == 1:
        ix = ctx.binary(
            "MINIMUM",
            ctx.binary("MAXIMUM", ix, ctx.scalar(0.0, f32)),
            ctx.scalar(float(w - 1), f32),
        )
        iy = ctx.binary(
            "MINIMUM",
            ctx.binary("MAXIMUM", iy, ctx.scalar(0.0, f32)),
            ctx.scalar(float(h - 1), f32),
        )
    xh = ctx.transpose(X, NCHW_TO_NHWC)
    batch = ctx.const(
        np.broadcast_to(np.arange(n, dtype=np.int32).reshape(n, 1, 1, 1), (n, ho, wo, 1)).copy(),
        "int32",
    )

    def tap(fy, fx):
        """Gather at float integer coords (fy, fx); returns (values NHWC, in-bounds mask)."""
        inside = None
        if pad == 0:
            conds = [
                ctx.binary("GREATER_EQUAL", fx, ctx.scalar(0.0, f32), "bool"),
                ctx.binary("LESS_EQUAL", fx, ctx.scalar(float(w - 1), f32), "bool"),
                ctx.binary("GREATER_EQUAL", fy, ctx.scalar(0.0, f32), "bool"),
                ctx.binary("LESS_EQUAL", fy, ctx.scalar(float(h - 1), f32), "bool"),
            ]
            inside = conds[0]
            for cnd in conds[1:]:
                inside = ctx.binary("LOGICAL_AND", inside, cnd, "bool")
        cx = ctx.binary(
            "MINIMUM",
            ctx.binary("MAXIMUM", fx, ctx.scalar(0.0, f32)),
            ctx.scalar(float(w - 1), f32),
        )
        cy = ctx.binary(
            "MINIMUM",
            ctx.binary("MAXIMUM", fy, ctx.scalar(0.0, f32)),
            ctx.scalar(float(h - 1), f32),
        )
        coords = ctx.emit(
            "CONCATENATION",
            [
                batch,
                ctx.reshape(ctx.cast(cy, "int32"), [n, ho, wo, 1]),
                ctx.reshape(ctx.cast(cx, "int32"), [n, ho, wo, 1]),
            ],
            [n, ho, wo, 3],
            "int32",
            dict(axis=3, fused_activation_function="NONE"),
        )
        vals = ctx.emit("GATHER_ND", [xh, coords], [n, ho, wo, c], f32)
        return vals, inside

    def weighted(vals, inside, wgt):
        if inside is not None:
            wgt = (
                emit_binary(ctx, "MUL", wgt, ctx.cast(inside, f32))
                if wgt is not None
                else ctx.cast(inside, f32)
            )
        if wgt is None:
            return vals
        return emit_binary(ctx, "MUL", vals, ctx.reshape(wgt, [n, ho, wo, 1]))

    if mode == 1:  # nearest: round half to even, like torch's nearbyint
        vals, inside = tap(ctx.unary("ROUND", iy), ctx.unary("ROUND", ix))
        out = weighted(vals, inside, None)
    else:
        x0, y0 = ctx.unary("FLOOR", ix), ctx.unary("FLOOR", iy)
        x1 = emit_binary(ctx, "ADD", x0, ctx.scalar(1.0, f32))
        y1 = emit_binary(ctx, "ADD", y0, ctx.scalar(1.0, f32))
        wx1, wy1 = emit_binary(ctx, "SUB", ix, x0), emit_binary(ctx, "SUB", iy, y0)
        wx0 = emit_binary(ctx, "SUB", ctx.scalar(1.0, f32), wx1)
        wy0 = emit_binary(ctx, "SUB", ctx.scalar(1.0, f32), wy1)
        out = None
        for fy, fx, wgt in (
            (y0, x0, emit_binary(ctx, "MUL", wy0, wx0)),
            (y0, x1, emit_binary(ctx, "MUL", wy0, wx1)),
            (y1, x0, emit_binary(ctx, "MUL", wy1, wx0)),
            (y1, x1, emit_binary(ctx, "MUL", wy1, wx1)),
        ):
            vals, inside = tap(fy, fx)
            term = weighted(vals, inside, wgt)
            out = term if out is None else emit_binary(ctx, "ADD", out, term)
    ctx.bind(node.out, ctx.transpose(out, NHWC_TO_NCHW))


RULES = {
    "upsample_nearest2d.vec": lower_upsample_nearest2d,
    "upsample_bilinear2d.vec": lower_upsample_bilinear2d,
    "pixel_shuffle.default": lower_pixel_shuffle,
    "pixel_unshuffle.default": lower_pixel_unshuffle,
    "grid_sampler_2d.default": lower_grid_sampler_2d,
}
