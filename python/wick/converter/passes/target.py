"""Lowerings for a target (``wick.convert(..., target="nnapi:N")``) on the TFLite-level graph.

Invariant: after ``lower_for_nnapi(g, level)``, float32 operators that NNAPI feature level
``level`` does not take, and that have an equivalent in operators it does take, are replaced by
that equivalent; everything else is unchanged.  The rewrites (each counted by TFLite op name):

* HARD_SWISH (NNAPI 30) below 30: ``ADD(x, 3)`` with a fused RELU6, ``MUL(x, ·)``,
  ``MUL(·, 1/6)`` — TFLite computes ``(x * relu6(x + 3)) / 6``; the last step multiplies by
  the float nearest 1/6 instead of dividing (NNAPI's DIV is 28), within a rounding step.
* DIV by a constant below 28 (NNAPI's DIV is 28): MUL by the reciprocal constant (exact for
  powers of two, else within a rounding step) — hardsigmoid's ``/ 6``.
* PAD and PADV2 (NNAPI PAD is 28; PADV2 is not mapped) below 28: CONCATENATION of constant
  slabs of the pad value before and after the input, one per padded axis — exact.
* TRANSPOSE NCHW -> NHWC (perm 0,2,3,1; NNAPI TRANSPOSE is 28) below 28, for C <= 16
  channels (an image input) of more than 2^20 elements: RESHAPE to [N, C, H*W, 1], CONV_2D
  with the identity filter [C, C, 1, 1] (kernel height C, VALID: output [N, 1, H*W, C]),
  RESHAPE to [N, H, W, C].  Equal for finite inputs (each output is one input times 1.0 plus
  zeros; a -0.0 becomes +0.0); a NaN or infinity in one channel makes the pixel's other
  channels NaN.  Smaller ones stay TRANSPOSEs: the delegate runs them at 27 exactly, as an
  EMBEDDING_LOOKUP of one row per element (up to NN_LOOKUP_MAX_ROWS, 2^20, rows:
  src/delegates/nnapi/nnapi_map.h), NaNs, infinities and -0.0 copied as they are.
* BATCH_MATMUL by a constant right side that is the same matrix for every batch (at any level:
  FULLY_CONNECTED is the form drivers know best; the delegate would take the BATCH_MATMUL too,
  as NNAPI's from feature level 6, below as a DEPTHWISE_CONV_2D): FULLY_CONNECTED with the
  transposed constant as weights, keep_num_dims — the same dot products.
* SLICE (NNAPI 29) below 29, of a FULLY_CONNECTED's output (directly or through a RESHAPE)
  that keeps every row and picks the same columns from each (a packed query/key/value
  projection split in three): FULLY_CONNECTED with only those weight rows and bias entries,
  RESHAPE to the slice's shape — the same dot products, exact.
* A layer norm's normalisation below 29 (RSQRT is 29): ``d * RSQRT(MEAN(d * d) + eps)`` over
  the last axis of n values, with d = x - MEAN(x), becomes ``L2_NORMALIZATION`` (27) of d with
  one more element sqrt(n * eps) appended (CONCATENATION), so the sum of squares is
  n * (var + eps), then a FULLY_CONNECTED whose weights are sqrt(n) (times the layer norm's
  gamma, when a constant MUL follows; its beta, when a constant ADD follows, is the bias) on
  the diagonal and 0 for the appended element.  Within a few rounding steps (other rounding
  order; the diagonal FC adds exact zeros for finite values); TFLite's 1e-6 floor of the
  norm never applies (the appended element alone is sqrt(n * eps) >= 1e-6, checked).

Quantized and dynamic-shape operators are left alone (the report names them).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..lower.tfl import TGraph, TOp, TTensor
from .layout import perm_of

_MAX_TRANSPOSE_CHANNELS = 16
# The NNAPI delegate's level-27 TRANSPOSE (EMBEDDING_LOOKUP) takes at most this many rows
# (NN_LOOKUP_MAX_ROWS in src/delegates/nnapi/nnapi_map.h); an NCHW -> NHWC TRANSPOSE moves the
# last axis, so its rows are its elements.
_NNAPI_LOOKUP_MAX_ROWS = 1 << 20


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
    if n * c * h * w <= _NNAPI_LOOKUP_MAX_ROWS:
        return False  # the delegate's exact level-27 TRANSPOSE takes it
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


def _fc(g: TGraph, x: TTensor, weights: np.ndarray, bias, y: TTensor, origin, act="NONE"):
    """FULLY_CONNECTED(x, constant weights [units, size], bias or None) -> y (keep_num_dims
    when y has rank > 2)."""
    w = g.const(y.name + "/fc_weights", np.ascontiguousarray(weights, np.float32))
    b = None if bias is None else g.const(y.name + "/fc_bias", np.asarray(bias, np.float32))
    return g.add(
        "FULLY_CONNECTED",
        [x, w, b],
        [y],
        dict(
            fused_activation_function=act,
            weights_format="DEFAULT",
            keep_num_dims=y.rank > 2,
            asymmetric_quantize_inputs=False,
        ),
        origin,
    )


def _batch_matmul_const_rhs(g: TGraph, op: TOp) -> bool:
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    if not _float_static(x, w, y) or not w.is_const or x.rank < 2 or w.rank < 2:
        return False
    if op.options.get("adj_x"):
        return False
    data = w.data.astype(np.float32)
    mat = data.reshape(-1, *data.shape[-2:])
    if not all(np.array_equal(mat[0], m) for m in mat[1:]):
        return False  # a different matrix per batch
    mat = mat[0] if op.options.get("adj_y") else mat[0].T  # [N, K]
    if list(y.shape) != list(x.shape[:-1]) + [mat.shape[0]] or x.shape[-1] != mat.shape[1]:
        return False  # the batch is broadcast over the constant's dims, not x's
    g.remove(op)
    _fc(g, x, mat, None, y, op.origin)
    return True


def _slice_begin_size(op: TOp):
    begin, size = op.inputs[1], op.inputs[2]
    if begin is None or size is None or not begin.is_const or not size.is_const:
        return None
    x, y = op.inputs[0], op.outputs[0]
    b = [int(v) for v in begin.data.reshape(-1)]
    n = [int(v) for v in size.data.reshape(-1)]
    if len(b) != x.rank or len(n) != x.rank:
        return None
    n = [x.shape[k] - b[k] if n[k] == -1 else n[k] for k in range(x.rank)]
    if n != list(y.shape):
        return None
    return tuple(slice(b[k], b[k] + n[k]) for k in range(x.rank))


def _slice_of_fully_connected(g: TGraph, op: TOp) -> bool:
    x, y = op.inputs[0], op.outputs[0]
    where = _slice_begin_size(op)
    if where is None or not _float_static(x, y):
        return False
    fc = x.producer
    if fc is not None and fc.op == "RESHAPE":
        fc = fc.inputs[0].producer
    if fc is None or fc.op != "FULLY_CONNECTED" or len(fc.inputs) < 2:
        return False
    src, w, f = fc.inputs[0], fc.inputs[1], fc.outputs[0]
    bias = fc.inputs[2] if len(fc.inputs) > 2 else None
    if not _float_static(src, w, f) or not w.is_const or (bias is not None and not bias.is_const):
        return False
    if f.numel != x.numel or fc.options.get("weights_format", "DEFAULT") != "DEFAULT":
        return False
    units = w.shape[0]
    rows = f.numel // units
    # which element of the FC's output [rows, units] each element of the slice is
    picked = np.arange(f.numel).reshape(x.shape)[where].reshape(-1)
    if rows == 0 or picked.size % rows:
        return False
    picked = picked.reshape(rows, -1)
    cols = picked[0] % units
    if not np.array_equal(picked // units, np.broadcast_to(np.arange(rows)[:, None], picked.shape)):
        return False  # not every row, in order
    if not np.array_equal(picked % units, np.broadcast_to(cols, picked.shape)):
        return False
    g.remove(op)
    out_shape = list(src.shape[:-1]) + [cols.size] if fc.options.get("keep_num_dims") else None
    if out_shape is None or src.rank < 2:
        out_shape = [rows, cols.size]
    part = TTensor(y.name + "/columns", out_shape, "float32")
    act = fc.options.get("fused_activation_function", "NONE")
    _fc(g, src, w.data[cols], None if bias is None else bias.data[cols], part, op.origin, act)
    g.add(
        "RESHAPE",
        [part, g.const(y.name + "/shape", np.asarray(y.shape, np.int32))],
        [y],
        {},
        op.origin,
    )
    return True


def _const_vector(t: TTensor | None, n: int):
    """The n values of a float constant that broadcasts along the last axis only, or None."""
    if t is None or not t.is_const or t.dtype != "float32" or t.numel not in (1, n):
        return None
    if t.numel == n and t.shape[-1:] != [n]:
        return None
    return np.broadcast_to(t.data.astype(np.float32).reshape(-1), (n,))


def _last_axis_mean(op: TOp | None) -> TTensor | None:
    """The input of a MEAN over the last axis with keep_dims, else None."""
    if op is None or op.op != "MEAN" or not op.options.get("keep_dims"):
        return None
    x, axes = op.inputs[0], op.inputs[1]
    if axes is None or not axes.is_const or axes.numel != 1:
        return None
    a = int(axes.data.reshape(-1)[0])
    return x if a in (-1, x.rank - 1) else None


def _layer_norm(g: TGraph, op: TOp) -> bool:
    """op: the MUL(d, RSQRT(ADD(MEAN(MUL(d, d)), eps))) of a layer norm."""
    if op.op != "MUL" or len(op.inputs) != 2:
        return False
    for d, r in (op.inputs, op.inputs[::-1]):  # noqa: B007 (d is used after the loop)
        rs = r.producer if r is not None else None
        if rs is not None and rs.op == "RSQRT":
            break
    else:
        return False
    y = op.outputs[0]
    add = rs.inputs[0].producer
    if add is None or add.op != "ADD" or add.options.get("fused_activation_function") != "NONE":
        return False
    var, eps_t = add.inputs
    if eps_t is None or not eps_t.is_const:
        var, eps_t = eps_t, var
    if eps_t is None or not eps_t.is_const or eps_t.numel != 1 or var is None:
        return False
    sq_in = _last_axis_mean(var.producer)
    sq = sq_in.producer if sq_in is not None else None
    if sq is None or sq.op != "MUL" or sq.inputs[0] is not d or sq.inputs[1] is not d:
        return False
    if op.options.get("fused_activation_function", "NONE") != "NONE":
        return False
    if sq.options.get("fused_activation_function", "NONE") != "NONE":
        return False
    if not _float_static(d, y) or d.rank < 1 or list(y.shape) != list(d.shape):
        return False
    n = d.shape[-1]
    eps = float(eps_t.data.reshape(-1)[0])
    if not (n * eps >= 1e-12) or not np.isfinite(eps):
        return False  # TFLite's L2_NORMALIZATION floors the norm at 1e-6
    # a constant gamma (MUL) and beta (ADD) that follow fold into the FULLY_CONNECTED
    gamma = np.ones(n, np.float32)
    beta = None
    out, last = y, op
    users = g.users_of(y)
    if len(users) == 1 and users[0].op == "MUL" and not g.is_output(y):
        m = users[0]
        other = m.inputs[1] if m.inputs[0] is y else m.inputs[0]
        v = _const_vector(other, n)
        if v is not None and m.options.get("fused_activation_function", "NONE") == "NONE":
            if list(m.outputs[0].shape) == list(y.shape):
                gamma, out, last = v, m.outputs[0], m
    users = g.users_of(out)
    if last is not op and len(users) == 1 and users[0].op == "ADD" and not g.is_output(out):
        a = users[0]
        other = a.inputs[1] if a.inputs[0] is out else a.inputs[0]
        v = _const_vector(other, n)
        if v is not None and a.options.get("fused_activation_function", "NONE") == "NONE":
            if list(a.outputs[0].shape) == list(y.shape):
                beta, out, last = v, a.outputs[0], a
    # the new FULLY_CONNECTED produces `out`: its old producer goes, and the rest of the old
    # chain (RSQRT, the variance's MEAN, ...) is left dead for the cleanup that follows
    g.remove(last)
    extra = np.full(list(d.shape[:-1]) + [1], np.sqrt(np.float64(n) * eps), np.float32)
    joined = TTensor(out.name + "/with_eps", list(d.shape[:-1]) + [n + 1], "float32")
    g.add(
        "CONCATENATION",
        [d, g.const(out.name + "/eps_element", extra)],
        [joined],
        dict(axis=d.rank - 1, fused_activation_function="NONE"),
        op.origin,
    )
    normed = TTensor(out.name + "/l2", joined.shape, "float32")
    g.add("L2_NORMALIZATION", [joined], [normed], dict(fused_activation_function="NONE"))
    weights = np.zeros((n, n + 1), np.float32)
    weights[np.arange(n), np.arange(n)] = (gamma.astype(np.float64) * np.sqrt(n)).astype(np.float32)
    _fc(g, normed, weights, beta, out, op.origin)
    return True


def lower_for_nnapi(g: TGraph, level: int) -> Counter:
    """Rewrites g for NNAPI feature level ``level`` (see the module doc); returns how many
    operators of each TFLite name were lowered differently."""
    done: Counter = Counter()
    for op in list(g.ops):
        name = op.op
        if name == "HARD_SWISH" and level < 30:
            changed = _hard_swish(g, op)
        elif name == "DIV" and level < 28:
            changed = _div_by_constant(g, op)
        elif name in ("PAD", "PADV2") and (level < 28 or name == "PADV2"):
            changed = _pad(g, op)
        elif name == "TRANSPOSE" and level < 28:
            changed = _transpose_nchw_to_nhwc(g, op)
        elif name == "BATCH_MATMUL":
            changed = _batch_matmul_const_rhs(g, op)
        elif name == "SLICE" and level < 29:
            changed = _slice_of_fully_connected(g, op)
        elif name == "MUL" and level < 29 and op in g.ops:
            changed = _layer_norm(g, op)
            name = "RSQRT"  # a layer norm's
        else:
            changed = False
        if changed:
            done[name] += 1
    if done:
        g.toposort()
    return done
