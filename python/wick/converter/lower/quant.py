"""Lowering rules for the PT2E quantization ops (``quantized_decomposed.*``).

torch.ao / torchao's ``convert_pt2e`` leaves a float graph with explicit quantize/dequantize
pairs: the *reference* semantics of an int8 model.  These rules lower it faithfully:

    quantize_per_tensor(x, s, z)        -> QUANTIZE  (float -> int8 tensor carrying s, z)
    dequantize_per_tensor(q, s, z)      -> DEQUANTIZE (the int8 tensor gets s, z)
    dequantize_per_channel(Wq, S, Z, a) -> DEQUANTIZE of an int8 constant with per-channel
                                           scales on dim a

so the lowered graph computes exactly the reference model in float between the quantization
points.  passes/quantize.py then turns DEQUANTIZE -> op -> QUANTIZE islands into int8 TFLite
kernels.  Quantization parameters are read from constants; dynamic (runtime-computed)
parameters are refused.
"""

from __future__ import annotations

import numpy as np
import torch

from ..ir import Node, Value
from .context import Ctx, torch_to_tfl


def _num(ctx: Ctx, v, what: str):
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, Value) and v.is_const and v.const.numel() == 1:
        return v.const.reshape(()).item()
    raise ctx.error(f"quantization {what} must be a constant")


def _same_quant(q, scale, zp) -> bool:
    return (
        q is not None
        and len(q.get("scale", [])) == 1
        and q.get("quantized_dimension", 0) == 0
        and np.isclose(q["scale"][0], scale, rtol=1e-7, atol=0)
        and int(q["zero_point"][0]) == zp
    )


def lower_quantize_per_tensor(ctx: Ctx, node: Node):
    x, scale, zp, qmin, qmax, dtype = node.args[:6]
    s, z = float(_num(ctx, scale, "scale")), int(_num(ctx, zp, "zero point"))
    qmin, qmax = int(_num(ctx, qmin, "quant_min")), int(_num(ctx, qmax, "quant_max"))
    dt = torch_to_tfl(dtype)
    info = np.iinfo(dt)
    if (qmin, qmax) != (info.min, info.max):
        raise ctx.error(f"quantize to [{qmin}, {qmax}] (TFLite QUANTIZE clamps to the {dt} range)")
    X = ctx.t(x)
    quant = dict(scale=[s], zero_point=[z])
    if X.is_const:
        q = torch.clamp(
            torch.round(torch.from_numpy(np.asarray(X.data, np.float32)) * (1.0 / s)) + z,
            qmin,
            qmax,
        ).to(dtype)
        t = ctx.tg.const(ctx.name("q"), q.numpy())
        t.quant = quant
        ctx.bind(node.out, t)
        return
    X = ctx.cast(X, "float32")
    out = ctx.emit("QUANTIZE", [X], X.shape, dt)
    out.quant = quant
    ctx.bind(node.out, out)


def lower_dequantize_per_tensor(ctx: Ctx, node: Node):
    xq, scale, zp = node.args[:3]
    s, z = float(_num(ctx, scale, "scale")), int(_num(ctx, zp, "zero point"))
    X = ctx.t(xq)
    if X.is_const:
        X = ctx.tg.const(ctx.name("qconst"), X.data)  # own tensor: its quant is set below
        X.quant = dict(scale=[s], zero_point=[z])
    elif X.quant is None:
        X.quant = dict(scale=[s], zero_point=[z])  # an int8 model input, say
    elif not _same_quant(X.quant, s, z):
        # the int8 bits read with other parameters: (q - z) * s in float
        f = ctx.cast(X, "float32")
        f = ctx.binary(
            "SUB",
            f,
            ctx.scalar(float(z), "float32"),
            options=dict(fused_activation_function="NONE"),
        )
        ctx.bind(
            node.out,
            ctx.binary(
                "MUL", f, ctx.scalar(s, "float32"), options=dict(fused_activation_function="NONE")
            ),
        )
        return
    ctx.bind(node.out, ctx.emit("DEQUANTIZE", [X], X.shape, "float32"))


def lower_dequantize_per_channel(ctx: Ctx, node: Node):
    wq, scales, zps, axis = node.args[:4]
    if not (
        isinstance(wq, Value) and wq.is_const and isinstance(scales, Value) and scales.is_const
    ):
        raise ctx.error("per-channel dequantize needs constant data and scales")
    data = wq.const.numpy()
    axis = int(axis) % data.ndim
    z = (
        zps.const.reshape(-1).tolist()
        if isinstance(zps, Value) and zps.is_const
        else [0] * data.shape[axis]
    )
    W = ctx.tg.const(ctx.name("qweight"), np.asarray(data, order="C"))
    W.quant = dict(
        scale=[float(v) for v in scales.const.reshape(-1).tolist()],
        zero_point=[int(v) for v in z],
        quantized_dimension=axis,
    )
    ctx.bind(node.out, ctx.emit("DEQUANTIZE", [W], list(data.shape), "float32"))


RULES = {
    "quantized_decomposed.quantize_per_tensor.default": lower_quantize_per_tensor,
    "quantized_decomposed.quantize_per_tensor.tensor": lower_quantize_per_tensor,
    "quantized_decomposed.quantize_per_tensor.tensor2": lower_quantize_per_tensor,
    "quantized_decomposed.dequantize_per_tensor.default": lower_dequantize_per_tensor,
    "quantized_decomposed.dequantize_per_tensor.tensor": lower_dequantize_per_tensor,
    "quantized_decomposed.dequantize_per_tensor.tensor2": lower_dequantize_per_tensor,
    "quantized_decomposed.dequantize_per_channel.default": lower_dequantize_per_channel,
}
