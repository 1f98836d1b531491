"""Lowerings for a target (``wick.convert(..., target="nnapi:N")``) on the TFLite-level graph.

Invariant: after ``lower_for_nnapi(g, level)``, float32 operators that NNAPI feature level
``level`` does not take, and that have an equivalent in operators it does take, are replaced by
that equivalent; everything else is unchanged.  The rewrites (each counted by TFLite op name):

* HARD_SWISH (NNAPI 30) below 30: ``ADD(x, 3)`` with a fused RELU6, ``MUL(x, ·)``,
  ``MUL(·, 1/6)`` — TFLite computes ``(x * relu6(x + 3)) / 6``; the last step multiplies by
  the float nearest 1/6 instead of dividing (NNAPI's DIV is 28), within a rounding step.
* DIV by a constant (wick's NNAPI delegate maps no DIV): MUL by the reciprocal constant
  (exact for powers of two, else within a rounding step) — hardsigmoid's ``/ 6``.
* PAD and PADV2 (NNAPI PAD is 28; PADV2 is not mapped) below 28: CONCATENATION of constant
  slabs of the pad value before and after the input, one per padded axis — exact.
* TRANSPOSE NCHW -> NHWC (perm 0,2,3,1; NNAPI TRANSPOSE is 28) below 28, for C <= 16
  channels (an image input): RESHAPE to [N, C, H*W, 1], CONV_2D with the identity filter
  [C, C, 1, 1] (kernel height C, VALID: output [N, 1, H*W, C]), RESHAPE to [N, H, W, C].
  Equal for finite inputs (each output is one input times 1.0 plus zeros; a -0.0 becomes
  +0.0); a NaN or infinity in one channel makes the pixel's other channels NaN.

Quantized and dynamic-shape operators are left alone (the report names them).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..lower.tfl import TGraph, TOp, TTensor
from .layout import perm_of

_MAX_TRANSPOSE_CHANNELS = 16


def _float_static(*ts: TTensor) -> bool:
    return all(
        t is not None and t.dtype == "float32" and not t.quant and all(d >= 0 for d in t.shape)
        for t in ts
    )


def _hard_swish(g: TGraph, op: TOp) -> bool:
    x, y = op.inputs[0], op.outputs[0]
    if not _float_static(x, y):
        return False
    g.remove(op)
    r = TTensor(y.name + "/relu6", x.shape, "float32")
    g.add(
        "ADD",
        [x, g.const(y.name + "/three", np.float32(3.0))],
        [r],
        dict(fused_activation_function="RELU6"),
        op.origin,
    )
    xr = TTensor(y.name + "/x_relu6", x.shape, "float32")
    g.add("MUL", [x, r], [xr], dict(fused_activation_function="NONE"), op.origin)
    sixth = g.const(y.name + "/sixth", np.float32(1.0) / np.float32(6.0))
    g.add("MUL", [xr, sixth], [y], dict(fused_activation_function="NONE"), op.origin)
    return True


def _div_by_constant(g: TGraph, op: TOp) -> bool:
    a, b, y = op.inputs[0], op.inputs[1], op.outputs[0]
    if not _float_static(a, b, y) or not b.is_const or a.is_const:
        return False
    data = b.data.astype(np.float32)
    if not np.all(np.isfinite(data)) or np.any(data == 0):
        return False
    with np.errstate(all="ignore"):
        recip = (np.float32(1.0) / data).astype(np.float32)
    if not np.all(np.isfinite(recip)):
        return False
    op.op = "MUL"
    g.set_input(op, 1, g.const(b.name + "/reciprocal", recip))
    return True


def _pad(g: TGraph, op: TOp) -> bool:
    x, y = op.inputs[0], op.outputs[0]
    pads = op.inputs[1]
    if not _float_static(x, y) or pads is None or not pads.is_const or x.rank > 4:
        return False
    value = np.float32(0.0)
    if op.op == "PADV2":
        v = op.inputs[2] if len(op.inputs) > 2 else None
        if v is not None:
            if not v.is_const or v.numel != 1:
                return False
            value = np.float32(v.data.reshape(-1)[0])
    p = pads.data.reshape(-1, 2).astype(np.int64)
    if p.shape[0] != x.rank or np.any(p < 0):
        return False
    axes = [k for k in range(x.rank) if p[k, 0] or p[k, 1]]
    if not axes:
        return False
    g.remove(op)
    cur = x
    for j, k in enumerate(axes):
        pieces = []
        for side, n in (("before", p[k, 0]), ("after", p[k, 1])):
            if n == 0:
                continue
            shape = list(cur.shape)
            shape[k] = int(n)
            pieces.append((side, g.const(f"{y.name}/pad{k}_{side}", np.full(shape, value))))
        ins = [t for side, t in pieces if side == "before"] + [cur]
        ins += [t for side, t in pieces if side == "after"]
        shape = list(cur.shape)
        shape[k] += int(p[k, 0] + p[k, 1])
        out = y if j == len(axes) - 1 else TTensor(f"{y.name}/pad{k}", shape, "float32")
        g.add(
            "CONCATENATION",
            ins,
            [out],
            dict(axis=k, fused_activation_function="NONE"),
            op.origin,
        )
        cur = out
    return True


def _transpose_nchw_to_nhwc(g: TGraph, op: TOp) -> bool:
    x, y = op.inputs[0], op.outputs[0]
    if not _float_static(x, y) or x.rank != 4 or perm_of(op) != [0, 2, 3, 1]:
        return False
    n, c, h, w = x.shape
    if c > _MAX_TRANSPOSE_CHANNELS or c < 2:
        return False  # (C == 1 is a reshape: cleanup made it one already)
    g.remove(op)
    rows = TTensor(y.name + "/rows", [n, c, h * w, 1], "float32")
    g.add(
        "RESHAPE",
        [x, g.const(y.name + "/rows_shape", np.asarray(rows.shape, np.int32))],
        [rows],
        {},
        op.origin,
    )
    # filter OHWI [C, C, 1, 1]: output channel o reads input row o
    identity = np.eye(c, dtype=np.float32).reshape(c, c, 1, 1)
    picked = TTensor(y.name + "/picked", [n, 1, h * w, c], "float32")
    g.add(
        "CONV_2D",
        [rows, g.const(y.name + "/identity", identity)]
        + [g.const(y.name + "/zero_bias", np.zeros(c, np.float32))],
        [picked],
        dict(
            padding="VALID",
            stride_w=1,
            stride_h=1,
            dilation_w_factor=1,
            dilation_h_factor=1,
            fused_activation_function="NONE",
        ),
        op.origin,
    )
    g.add(
        "RESHAPE",
        [picked, g.const(y.name + "/shape", np.asarray(y.shape, np.int32))],
        [y],
        {},
        op.origin,
    )
    return True


def lower_for_nnapi(g: TGraph, level: int) -> Counter:
    """Rewrites g for NNAPI feature level ``level`` (see the module doc); returns how many
    operators of each TFLite name were lowered differently."""
    done: Counter = Counter()
    for op in list(g.ops):
        name = op.op
        if name == "HARD_SWISH" and level < 30:
            changed = _hard_swish(g, op)
        elif name == "DIV":
            changed = _div_by_constant(g, op)
        elif name in ("PAD", "PADV2") and (level < 28 or name == "PADV2"):
            changed = _pad(g, op)
        elif name == "TRANSPOSE" and level < 28:
            changed = _transpose_nchw_to_nhwc(g, op)
        else:
            changed = False
        if changed:
            done[name] += 1
    if done:
        g.toposort()
    return done
