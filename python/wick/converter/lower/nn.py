"""Lowering rules for neural-network ATen ops: convolution, pooling, matrix products and softmax
(resizing, pixel shuffles and grid sampling are in resize.py; normalization in norm.py).

Layout: PyTorch tensors are NCHW; TFLite's spatial kernels are NHWC.  Rules here wrap each
spatial op in an explicit pair  TRANSPOSE(0,2,3,1) → op → TRANSPOSE(0,3,1,2)  and leave every
other tensor in logical layout; the layout pass (passes/layout.py) cancels the pairs between
consecutive spatial ops.  Weights are transposed with TRANSPOSE ops too and tfl_fold turns those
into constants in the target layout (conv OIHW→OHWI, depthwise OIHW→[1,H,W,C·M]).

Padding (docs/format.md): PyTorch pads symmetrically, TFLite SAME puts the odd pixel at the end.
``choose_padding`` uses SAME or VALID only when they provably give the same windows, and
otherwise emits an explicit PAD/PADV2 followed by VALID.
"""

from __future__ import annotations

import numpy as np
import torch

from ..ir import Node, Value
from .context import Ctx
from .elementwise import emit_binary

NCHW_TO_NHWC = [0, 2, 3, 1]
NHWC_TO_NCHW = [0, 3, 1, 2]


# ---- padding ---------------------------------------------------------------------------------


def _same_ok(n: int, k: int, s: int, d: int, before: int, after: int) -> bool:
    eff = (k - 1) * d + 1
    out_pt = (n + before + after - eff) // s + 1
    out_same = -(-n // s)
    total = max(0, (out_same - 1) * s + eff - n)
    return out_pt == out_same and before == total // 2


def choose_padding(ctx: Ctx, x_nhwc, kernel, stride, dilation, pads, pad_value=0.0):
    """pads: [(before, after)] per spatial dim.  Returns (x_nhwc', 'SAME'|'VALID')."""
    if all(b == 0 and a == 0 for b, a in pads):
        return x_nhwc, "VALID"
    spatial = x_nhwc.shape[1:-1]
    if all(n > 0 for n in spatial) and all(
        _same_ok(n, k, s, d, b, a)
        for n, k, s, d, (b, a) in zip(spatial, kernel, stride, dilation, pads, strict=True)
    ):
        return x_nhwc, "SAME"
    return pad_nhwc(ctx, x_nhwc, pads, pad_value), "VALID"


def pad_nhwc(ctx: Ctx, x, pads, value=0.0):
    paddings = [[0, 0]] + [[int(b), int(a)] for b, a in pads] + [[0, 0]]
    shape = [x.shape[0]] + [n + b + a for n, (b, a) in zip(x.shape[1:-1], pads, strict=True)]
    shape.append(x.shape[-1])
    pz = ctx.const(np.asarray(paddings, np.int32), "int32", "paddings")
    if value == 0:
        return ctx.emit("PAD", [x, pz], shape, x.dtype)
    return ctx.emit("PADV2", [x, pz, ctx.scalar(value, x.dtype)], shape, x.dtype)


# ---- convolution -----------------------------------------------------------------------------


def _conv2d_nhwc(ctx: Ctx, xh, W, B, stride, pads, dilation, groups, out_c: int):
    """xh: NHWC input; W: logical OIHW filter tensor; B: bias (O,) tensor or None."""
    kh, kw = W.shape[2], W.shape[3]
    cin = xh.shape[3]
    if B is None:
        B = ctx.const(np.zeros(out_c, np.float32), "float32", "bias")
    if groups > 1 and groups == cin and out_c % cin == 0:
        mult = out_c // cin
        xp, padding = choose_padding(ctx, xh, (kh, kw), stride, dilation, pads)
        # depthwise filter [1, H, W, C*M]: OIHW with I=1 -> transpose (1,2,3,0)
        f = ctx.transpose(W, [1, 2, 3, 0])
        oh = _out_size(xp.shape[1], kh, stride[0], dilation[0], padding)
        ow = _out_size(xp.shape[2], kw, stride[1], dilation[1], padding)
        return ctx.emit(
            "DEPTHWISE_CONV_2D",
            [xp, f, B],
            [xh.shape[0], oh, ow, out_c],
            xh.dtype,
            dict(
                padding=padding,
                stride_w=stride[1],
                stride_h=stride[0],
                depth_multiplier=mult,
                dilation_w_factor=dilation[1],
                dilation_h_factor=dilation[0],
                fused_activation_function="NONE",
            ),
        )
    xp, padding = choose_padding(ctx, xh, (kh, kw), stride, dilation, pads)
    # OIHW -> OHWI; grouped convolution (CONV_2D v6) reads I = Cin / groups from the filter
    f = ctx.transpose(W, NCHW_TO_NHWC)
    oh = _out_size(xp.shape[1], kh, stride[0], dilation[0], padding)
    ow = _out_size(xp.shape[2], kw, stride[1], dilation[1], padding)
    return ctx.emit(
        "CONV_2D",
        [xp, f, B],
        [xh.shape[0], oh, ow, out_c],
        xh.dtype,
        dict(
            padding=padding,
            stride_w=stride[1],
            stride_h=stride[0],
            dilation_w_factor=dilation[1],
            dilation_h_factor=dilation[0],
            fused_activation_function="NONE",
        ),
    )


def _slice0(ctx: Ctx, t, start: int, size: int):
    if t.is_const:
        return ctx.const(t.data[start : start + size], t.dtype, "group")
    begin = [start] + [0] * (t.rank - 1)
    sizes = [size] + t.shape[1:]
    return ctx.emit("SLICE", [t, ctx.i32(begin), ctx.i32(sizes)], sizes, t.dtype)


def _out_size(n: int, k: int, s: int, d: int, padding: str) -> int:
    eff = (k - 1) * d + 1
    if padding == "SAME":
        return -(-n // s)
    return (n - eff) // s + 1


def lower_convolution(ctx: Ctx, node: Node):
    a = ctx.args(node)
    x: Value = a.input
    nsp = x.rank - 2
    stride, padding, dilation = list(a.stride), list(a.padding), list(a.dilation)
    if len(stride) == 1 and nsp > 1:
        stride = stride * nsp
    if len(padding) == 1 and nsp > 1:
        padding = padding * nsp
    if len(dilation) == 1 and nsp > 1:
        dilation = dilation * nsp
    X = ctx.t(x)
    W = ctx.t(a.weight)
    B = ctx.t(a.bias) if a.bias is not None else None
    out_shape = ctx.shape(node.out)
    if ctx.dtype(x) != "float32":
        raise ctx.error(f"convolution on {x.dtype} tensors is not supported (floating point only)")
    if nsp == 1:
        X = ctx.reshape(X, [X.shape[0], X.shape[1], 1, X.shape[2]])
        W = ctx.reshape(W, [W.shape[0], W.shape[1], 1, W.shape[2]])
        stride, padding, dilation = [1] + stride, [0] + padding, [1] + dilation
        out4 = [out_shape[0], out_shape[1], 1, out_shape[2]]
    elif nsp == 2:
        out4 = out_shape
    elif nsp == 3 and not a.transposed:
        ctx.bind(node.out, _conv3d(ctx, X, W, B, stride, padding, dilation, a.groups, out_shape))
        return
    elif nsp == 3:
        y = _conv3d_transpose(ctx, X, W, B, stride, padding, dilation, a.groups, out_shape)
        ctx.bind(node.out, y)
        return
    else:
        raise ctx.error(
            f"{nsp}-d {'transposed ' if a.transposed else ''}convolution is not supported",
            hint="1-d, 2-d and 3-d convolutions convert",
        )
    if a.transposed:
        Y = _conv_transpose(
            ctx, X, W, B, stride, padding, dilation, list(a.output_padding), a.groups, out4
        )
    else:
        xh = ctx.transpose(X, NCHW_TO_NHWC)
        pads = [(p, p) for p in padding]
        yh = _conv2d_nhwc(ctx, xh, W, B, stride, pads, dilation, a.groups, out4[1])
        if yh.shape != [out4[0], out4[2], out4[3], out4[1]]:
            raise ctx.error(f"internal: conv output {yh.shape} != expected {out4}")
        Y = ctx.transpose(yh, NHWC_TO_NCHW)
    ctx.bind(node.out, ctx.reshape(Y, out_shape))


def _conv3d(ctx: Ctx, X, W, B, stride, padding, dilation, groups, out_shape):
    """CONV_3D: input NDHWC, filter [D, H, W, I, O] (OIDHW -> transpose 2,3,4,1,0)."""
    if groups != 1:
        raise ctx.error("grouped 3-d convolution is not supported")
    out_c = W.shape[0]
    xh = ctx.transpose(X, [0, 2, 3, 4, 1])
    k = W.shape[2:]
    xp, pad = choose_padding(ctx, xh, k, stride, dilation, [(p, p) for p in padding])
    f = ctx.transpose(W, [2, 3, 4, 1, 0])
    if B is None:
        B = ctx.const(np.zeros(out_c, np.float32), "float32", "bias")
    sp = [_out_size(xp.shape[1 + i], k[i], stride[i], dilation[i], pad) for i in range(3)]
    yh = ctx.emit(
        "CONV_3D",
        [xp, f, B],
        [xh.shape[0]] + sp + [out_c],
        xh.dtype,
        dict(
            padding=pad,
            stride_d=stride[0],
            stride_h=stride[1],
            stride_w=stride[2],
            dilation_d_factor=dilation[0],
            dilation_h_factor=dilation[1],
            dilation_w_factor=dilation[2],
            fused_activation_function="NONE",
        ),
    )
    return ctx.reshape(ctx.transpose(yh, [0, 4, 1, 2, 3]), out_shape)


def _conv3d_transpose(ctx: Ctx, X, W, B, stride, padding, dilation, groups, out_shape):
    """CONV_3D_TRANSPOSE: input NDHWC, filter [D, H, W, O, I] (torch's (I, O, D, H, W) ->
    transpose 2,3,4,1,0). The op runs VALID over the full extent (n-1)*s + d*(k-1) + 1, then
    the result is cropped by ``padding`` at the start; output_padding rows past the full extent
    are zeros plus the bias (PAD, then the bias as an ADD)."""
    if groups != 1:
        raise ctx.error("grouped 3-d transposed convolution is not supported")
    n, out_c = X.shape[0], W.shape[1]
    k = W.shape[2:]
    xh = ctx.transpose(X, [0, 2, 3, 4, 1])
    f = ctx.transpose(W, [2, 3, 4, 1, 0])
    full = [(xh.shape[1 + i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 for i in range(3)]
    want = out_shape[2:]
    ends = [min(padding[i] + want[i], full[i]) for i in range(3)]
    need_pad = [padding[i] + want[i] - ends[i] for i in range(3)]
    zero_bias = ctx.const(np.zeros(out_c, np.float32), "float32", "bias")
    bias_in = B if (B is not None and not any(need_pad)) else zero_bias
    yh = ctx.emit(
        "CONV_3D_TRANSPOSE",
        [ctx.i32([n] + full + [out_c]), f, xh, bias_in],
        [n] + full + [out_c],
        X.dtype,
        dict(
            padding="VALID",
            stride_d=stride[0],
            stride_h=stride[1],
            stride_w=stride[2],
            dilation_d_factor=dilation[0],
            dilation_h_factor=dilation[1],
            dilation_w_factor=dilation[2],
            fused_activation_function="NONE",
        ),
    )
    if any(p > 0 for p in padding) or ends != full:
        size = [n] + [ends[i] - padding[i] for i in range(3)] + [out_c]
        yh = ctx.emit(
            "SLICE", [yh, ctx.i32([0] + list(padding) + [0]), ctx.i32(size)], size, X.dtype
        )
    if any(need_pad):
        yh = pad_nhwc(ctx, yh, [(0, p) for p in need_pad])
        if B is not None:
            yh = emit_binary(ctx, "ADD", yh, B)
    return ctx.reshape(ctx.transpose(yh, [0, 4, 1, 2, 3]), out_shape)


def _conv_transpose(ctx: Ctx, X, W, B, stride, padding, dilation, output_padding, groups, out4):
    if any(d != 1 for d in dilation):
        raise ctx.error("dilated transposed convolution is not supported")
    if groups != 1:
        raise ctx.error("grouped transposed convolution is not supported")
    n, cin, h, w = X.shape
    cout = W.shape[1]
    kh, kw = W.shape[2], W.shape[3]
    xh = ctx.transpose(X, NCHW_TO_NHWC)
    f = ctx.transpose(W, [1, 2, 3, 0])  # (Cin, Cout, kh, kw) -> (Cout, kh, kw, Cin)
    if B is None:
        B = ctx.const(np.zeros(cout, np.float32), "float32", "bias")
    oh, ow = out4[2], out4[3]
    same = True
    for n_in, k, s, p, o in zip((h, w), (kh, kw), stride, padding, (oh, ow), strict=True):
        total = max(0, (n_in - 1) * s + k - o)
        if not (o == n_in * s and p == total // 2):
            same = False
    opts = dict(stride_w=stride[1], stride_h=stride[0], fused_activation_function="NONE")
    if same:
        yh = ctx.emit(
            "TRANSPOSE_CONV",
            [ctx.i32([n, oh, ow, cout]), f, xh, B],
            [n, oh, ow, cout],
            X.dtype,
            dict(padding="SAME", **opts),
        )
    else:
        fh, fw = (h - 1) * stride[0] + kh, (w - 1) * stride[1] + kw
        full_bias = all(p >= op for p, op in zip(padding, output_padding, strict=True))
        bias_in = B if full_bias else ctx.const(np.zeros(cout, np.float32), "float32", "bias")
        yh = ctx.emit(
            "TRANSPOSE_CONV",
            [ctx.i32([n, fh, fw, cout]), f, xh, bias_in],
            [n, fh, fw, cout],
            X.dtype,
            dict(padding="VALID", **opts),
        )
        # crop `padding` at the start; the end keeps output_padding extra rows/cols
        ends = []
        need_pad = []
        for full, p, o in zip((fh, fw), padding, (oh, ow), strict=True):
            end = p + o
            ends.append(min(end, full))
            need_pad.append(max(0, end - full))
        yh = ctx.emit(
            "SLICE",
            [
                yh,
                ctx.i32([0, padding[0], padding[1], 0]),
                ctx.i32([n, ends[0] - padding[0], ends[1] - padding[1], cout]),
            ],
            [n, ends[0] - padding[0], ends[1] - padding[1], cout],
            X.dtype,
        )
        if any(need_pad):
            yh = pad_nhwc(ctx, yh, [(0, need_pad[0]), (0, need_pad[1])])
        if not full_bias:
            yh = emit_binary(ctx, "ADD", yh, B)
    return ctx.transpose(yh, NHWC_TO_NCHW)


# ---- pooling -----------------------------------------------------------------------------------


def _pool_geometry(n, k, s, p, ceil_mode, d=1):
    eff = (k - 1) * d + 1
    if ceil_mode:
        out = -(-(n + 2 * p - eff) // s) + 1
        if (out - 1) * s >= n + p:
            out -= 1
    else:
        out = (n + 2 * p - eff) // s + 1
    after = (out - 1) * s + eff - n - p
    return out, p, max(after, 0)


def _as_pair(v, default=None):
    v = list(v) if v is not None else []
    if not v:
        return list(default) if default is not None else None
    return v * 2 if len(v) == 1 else v


def lower_max_pool2d(ctx: Ctx, node: Node):
    a = ctx.args(node)
    if len(node.outputs) > 1 and node.outputs[1].users:
        raise ctx.error(
            "max_pool2d indices are not supported",
            hint="return_indices=True has no TFLite equivalent",
        )
    k = _as_pair(a.kernel_size)
    s = _as_pair(a.stride, k)
    p = _as_pair(a.padding)
    d = _as_pair(a.dilation)
    if any(x != 1 for x in d):
        raise ctx.error("dilated max pooling is not supported")
    X = ctx.t(a.self)
    squeeze = X.rank == 3
    if squeeze:
        X = ctx.reshape(X, [1] + X.shape)
    xh = ctx.transpose(X, NCHW_TO_NHWC)
    geo = [
        _pool_geometry(n, kk, ss, pp, a.ceil_mode)
        for n, kk, ss, pp in zip(xh.shape[1:3], k, s, p, strict=True)
    ]
    pads = [(b, af) for _, b, af in geo]
    if a.ceil_mode and any(af != b for _, b, af in geo):
        xh = pad_nhwc(ctx, xh, pads, -np.inf)
        padding = "VALID"
    else:
        xh, padding = choose_padding(ctx, xh, k, s, (1, 1), pads, -np.inf)
    oh, ow = geo[0][0], geo[1][0]
    yh = ctx.emit(
        "MAX_POOL_2D",
        [xh],
        [xh.shape[0], oh, ow, xh.shape[3]],
        xh.dtype,
        dict(
            padding=padding,
            stride_w=s[1],
            stride_h=s[0],
            filter_width=k[1],
            filter_height=k[0],
            fused_activation_function="NONE",
        ),
    )
    Y = ctx.transpose(yh, NHWC_TO_NCHW)
    if squeeze:
        Y = ctx.reshape(Y, Y.shape[1:])
    ctx.bind(node.outputs[0], Y)


def lower_avg_pool2d(ctx: Ctx, node: Node):
    a = ctx.args(node)
    k = _as_pair(a.kernel_size)
    s = _as_pair(a.stride, k)
    p = _as_pair(a.padding)
    X = ctx.t(a.self)
    squeeze = X.rank == 3
    if squeeze:
        X = ctx.reshape(X, [1] + X.shape)
    xh = ctx.transpose(X, NCHW_TO_NHWC)
    H, W = xh.shape[1], xh.shape[2]
    geo = [
        _pool_geometry(n, kk, ss, pp, a.ceil_mode)
        for n, kk, ss, pp in zip((H, W), k, s, p, strict=True)
    ]
    oh, ow = geo[0][0], geo[1][0]
    pads = [(b, af) for _, b, af in geo]
    opts = dict(
        stride_w=s[1],
        stride_h=s[0],
        filter_width=k[1],
        filter_height=k[0],
        fused_activation_function="NONE",
    )
    out_shape = [xh.shape[0], oh, ow, xh.shape[3]]
    no_pad = all(b == 0 and af == 0 for b, af in pads)
    if no_pad and a.divisor_override is None:
        yh = ctx.emit("AVERAGE_POOL_2D", [xh], out_shape, xh.dtype, dict(padding="VALID", **opts))
    elif (
        not a.count_include_pad
        and not a.ceil_mode
        and a.divisor_override is None
        and all(
            _same_ok(n, kk, ss, 1, pp, pp) for n, kk, ss, pp in zip((H, W), k, s, p, strict=True)
        )
    ):
        # SAME averages over in-bounds taps only == count_include_pad=False
        yh = ctx.emit("AVERAGE_POOL_2D", [xh], out_shape, xh.dtype, dict(padding="SAME", **opts))
    else:
        # zero-pad, average over the full window, then rescale each output position by
        # k*k / (PyTorch's divisor at that position)
        xp = pad_nhwc(ctx, xh, pads) if not no_pad else xh
        yh = ctx.emit("AVERAGE_POOL_2D", [xp], out_shape, xh.dtype, dict(padding="VALID", **opts))
        div = _avg_divisors(H, W, k, s, p, oh, ow, a.count_include_pad, a.divisor_override)
        scale = (k[0] * k[1] / div).astype(np.float32)
        if not np.allclose(scale, 1.0):
            yh = emit_binary(ctx, "MUL", yh, ctx.const(scale.reshape(1, oh, ow, 1), "float32"))
    Y = ctx.transpose(yh, NHWC_TO_NCHW)
    if squeeze:
        Y = ctx.reshape(Y, Y.shape[1:])
    ctx.bind(node.out, Y)


def _avg_divisors(H, W, k, s, p, oh, ow, count_include_pad, divisor_override):
    if divisor_override:
        return np.full((oh, ow), float(divisor_override))
    div = np.zeros((oh, ow))
    for i in range(oh):
        hs = i * s[0] - p[0]
        he = min(hs + k[0], H + p[0])
        for j in range(ow):
            ws = j * s[1] - p[1]
            we = min(ws + k[1], W + p[1])
            size = (he - hs) * (we - ws)
            if not count_include_pad:
                size = (min(he, H) - max(hs, 0)) * (min(we, W) - max(ws, 0))
            div[i, j] = size
    return div


def _adaptive_matrix(n_in: int, n_out: int) -> np.ndarray:
    m = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        start = (i * n_in) // n_out
        end = -(-((i + 1) * n_in) // n_out)
        m[i, start:end] = 1.0 / (end - start)
    return m


def lower_adaptive_avg_pool2d(ctx: Ctx, node: Node):
    x = node.args[0]
    X = ctx.t(x)
    squeeze = X.rank == 3
    if squeeze:
        X = ctx.reshape(X, [1] + X.shape)
    n, c, H, W = X.shape
    out = ctx.shape(node.out)
    oh, ow = out[-2], out[-1]
    if oh == H and ow == W:
        Y = X  # a no-op (VGG's 7x7 pool on a 7x7 map, AlexNet's 6x6 on 6x6)
    elif oh == 1 and ow == 1:
        Y = ctx.emit(
            "MEAN", [X, ctx.i32([2, 3], "axes")], [n, c, 1, 1], X.dtype, dict(keep_dims=True)
        )
    elif H % oh == 0 and W % ow == 0:
        kh, kw = H // oh, W // ow
        xh = ctx.transpose(X, NCHW_TO_NHWC)
        yh = ctx.emit(
            "AVERAGE_POOL_2D",
            [xh],
            [n, oh, ow, c],
            X.dtype,
            dict(
                padding="VALID",
                stride_w=kw,
                stride_h=kh,
                filter_width=kw,
                filter_height=kh,
                fused_activation_function="NONE",
            ),
        )
        Y = ctx.transpose(yh, NHWC_TO_NCHW)
    else:
        Y = separable_linear(ctx, X, _adaptive_matrix(H, oh), _adaptive_matrix(W, ow))
    if squeeze:
        Y = ctx.reshape(Y, Y.shape[1:])
    ctx.bind(node.out, Y)


def separable_linear(ctx: Ctx, X, mh: np.ndarray, mw: np.ndarray):
    """Y[n,c] = mh @ X[n,c] @ mw.T for NCHW X (adaptive pooling, interpolation by measured
    matrices), computed in NHWC like the other spatial ops so that the layout pass cancels the
    transposes around it: BATCH_MATMUL with the constant matrix on the left, broadcast over the
    batch, contracting H on [N, H, W*C] and then W on [N, oh, W, C].  An identity factor
    (a dim that does not change) is skipped."""
    n, c, H, W = X.shape
    oh, ow = mh.shape[0], mw.shape[0]
    y = ctx.transpose(X, NCHW_TO_NHWC)

    def left_matmul(x, m, lead, out_shape):
        mc = ctx.const(m.astype(np.float32).reshape([1] * lead + list(m.shape)))
        return _matmul(ctx, mc, x, out_shape)

    if not (oh == H and np.array_equal(mh, np.eye(H))):
        y = ctx.reshape(y, [n, H, W * c])
        y = left_matmul(y, mh, 1, [n, oh, W * c])
        y = ctx.reshape(y, [n, oh, W, c])
    if not (ow == W and np.array_equal(mw, np.eye(W))):
        y = left_matmul(y, mw, 2, [n, oh, ow, c])
    return ctx.transpose(y, NHWC_TO_NCHW)


def _pool3d(ctx: Ctx, node: Node, op: str):
    """3-d pooling as two 2-d poolings (TFLite has no 3-d pool builtin): over (H, W) on
    (N*D, H, W, C), then over D on (N, D, H'*W', C).  Max and unpadded average are separable
    over a box window, so this is exact."""
    a = ctx.args(node)
    k = list(a.kernel_size) * (3 if len(a.kernel_size) == 1 else 1)
    st = list(a.stride) or k
    st = st * (3 if len(st) == 1 else 1)
    pad = list(a.padding) * (3 if len(a.padding) == 1 else 1)
    if any(pad) or a.ceil_mode:
        raise ctx.error("3-d pooling with padding or ceil_mode is not supported")
    if op == "MAX_POOL_2D":
        if len(node.outputs) > 1 and node.outputs[1].users:
            raise ctx.error("max_pool3d indices are not supported")
        if any(d != 1 for d in (list(a.dilation) * (3 if len(a.dilation) == 1 else 1))):
            raise ctx.error("dilated 3-d max pooling is not supported")
    elif a.divisor_override:
        raise ctx.error("avg_pool3d divisor_override is not supported")
    X = ctx.t(a.self)
    n, c, d, h, w = ctx.static_shape(a.self)
    oh, ow = (h - k[1]) // st[1] + 1, (w - k[2]) // st[2] + 1
    od = (d - k[0]) // st[0] + 1
    xh = ctx.reshape(ctx.transpose(X, [0, 2, 3, 4, 1]), [n * d, h, w, c])
    opts = dict(padding="VALID", fused_activation_function="NONE")
    y = ctx.emit(
        op,
        [xh],
        [n * d, oh, ow, c],
        X.dtype,
        dict(stride_h=st[1], stride_w=st[2], filter_height=k[1], filter_width=k[2], **opts),
    )
    y = ctx.reshape(y, [n, d, oh * ow, c])
    y = ctx.emit(
        op,
        [y],
        [n, od, oh * ow, c],
        X.dtype,
        dict(stride_h=st[0], stride_w=1, filter_height=k[0], filter_width=1, **opts),
    )
    y = ctx.reshape(y, [n, od, oh, ow, c])
    ctx.bind(node.outputs[0], ctx.transpose(y, [0, 4, 1, 2, 3]))


def lower_max_pool3d(ctx: Ctx, node: Node):
    _pool3d(ctx, node, "MAX_POOL_2D")


def lower_avg_pool3d(ctx: Ctx, node: Node):
    _pool3d(ctx, node, "AVERAGE_POOL_2D")


def lower_adaptive_avg_pool3d(ctx: Ctx, node: Node):
    X = ctx.t(node.args[0])
    out = ctx.static_shape(node.out)
    if out[-3:] != [1, 1, 1]:
        raise ctx.error("adaptive_avg_pool3d is supported for output size 1 only")
    r = X.rank
    y = ctx.emit(
        "MEAN", [X, ctx.i32([r - 3, r - 2, r - 1], "axes")], out, X.dtype, dict(keep_dims=True)
    )
    ctx.bind(node.out, y)


def _pairwise(ctx: Ctx, A, B, p: float):
    """||a_i - b_j||_p for A (..., N, D), B (..., M, D) by broadcasting the difference."""
    *lead, nn_, dd = A.shape
    mm = B.shape[-2]
    a = ctx.reshape(A, lead + [nn_, 1, dd])
    b = ctx.reshape(B, lead + [1, mm, dd])
    diff = ctx.unary("ABS", ctx.binary("SUB", a, b, options=dict(fused_activation_function="NONE")))
    ax = ctx.i32([len(lead) + 2], "axes")
    shape = lead + [nn_, mm]
    if p == float("inf"):
        return ctx.emit("REDUCE_MAX", [diff, ax], shape, A.dtype, dict(keep_dims=False))
    if p == 1:
        return ctx.emit("SUM", [diff, ax], shape, A.dtype, dict(keep_dims=False))
    if p == 2:
        sq = emit_binary(ctx, "MUL", diff, diff)
        return ctx.unary("SQRT", ctx.emit("SUM", [sq, ax], shape, A.dtype, dict(keep_dims=False)))
    if p == 0:
        nz = ctx.cast(ctx.binary("NOT_EQUAL", diff, ctx.scalar(0.0, A.dtype), "bool"), A.dtype)
        return ctx.emit("SUM", [nz, ax], shape, A.dtype, dict(keep_dims=False))
    pw = ctx.binary("POW", diff, ctx.scalar(float(p), A.dtype))
    s_ = ctx.emit("SUM", [pw, ax], shape, A.dtype, dict(keep_dims=False))
    return ctx.binary("POW", s_, ctx.scalar(1.0 / float(p), A.dtype))


def lower_cdist(ctx: Ctx, node: Node):
    x1, x2, p = node.args[0], node.args[1], float(node.args[2])
    ctx.bind(node.out, _pairwise(ctx, ctx.t(x1), ctx.t(x2), p))


def lower_pdist(ctx: Ctx, node: Node):
    x = node.args[0]
    p = float(node.args[1]) if len(node.args) > 1 else 2.0
    X = ctx.t(x)
    n = X.shape[0]
    full = ctx.reshape(_pairwise(ctx, X, X, p), [n * n])
    iu = [i * n + j for i in range(n) for j in range(i + 1, n)]
    idx = ctx.const(np.asarray(iu, np.int32), "int32", "pairs")
    ctx.bind(
        node.out, ctx.emit("GATHER", [full, idx], [len(iu)], X.dtype, dict(axis=0, batch_dims=0))
    )


def lower_embedding_bag(ctx: Ctx, node: Node):
    """Bags of equal size (constant offsets 0, L, 2L …, what a 2-d input gives): gather the
    rows and reduce each bag (sum / mean / max)."""
    a = ctx.args(node)
    if a.per_sample_weights is not None:
        raise ctx.error("embedding_bag per_sample_weights is not supported")
    if not (isinstance(a.offsets, Value) and a.offsets.is_const):
        raise ctx.error("embedding_bag needs constant offsets")
    offs = a.offsets.const.reshape(-1).tolist()
    n_idx = int(a.indices.shape[0])
    if a.include_last_offset:
        offs = offs[:-1]
    bags = len(offs)
    size = n_idx // bags if bags else 0
    if offs != [i * size for i in range(bags)] or size * bags != n_idx or size == 0:
        raise ctx.error("embedding_bag is supported for equal-size bags only")
    if a.padding_idx is not None and a.padding_idx >= 0:
        raise ctx.error("embedding_bag padding_idx is not supported")
    W = ctx.t(a.weight)
    idx = ctx.t(a.indices)
    if idx.dtype != "int32":
        idx = ctx.cast(idx, "int32")
    rows = ctx.emit(
        "GATHER",
        [W, ctx.reshape(idx, [bags, size])],
        [bags, size, W.shape[1]],
        W.dtype,
        dict(axis=0, batch_dims=0),
    )
    op = {0: "SUM", 1: "MEAN", 2: "REDUCE_MAX"}[int(a.mode)]
    out = ctx.emit(
        op, [rows, ctx.i32([1], "axes")], [bags, W.shape[1]], W.dtype, dict(keep_dims=False)
    )
    ctx.bind(node.outputs[0], out)
    for o in node.outputs[1:]:
        if o.users or ctx.graph.is_output(o):
            raise ctx.error("embedding_bag auxiliary outputs are not supported")


# ---- matrix products -------------------------------------------------------------------------


def _f32(t: torch.Tensor) -> np.ndarray:
    """float32 numpy view of a constant (copies only when it must: dtype or layout)."""
    t = t.detach()
    if t.dtype != torch.float32:
        t = t.float()
    return t.numpy()


def _fc(ctx: Ctx, A, Wt_const: np.ndarray, bias, out_shape):
    W = ctx.const(np.asarray(Wt_const, order="C"), A.dtype, "weights")
    return ctx.emit(
        "FULLY_CONNECTED",
        [A, W, bias],
        out_shape,
        A.dtype,
        dict(fused_activation_function="NONE", keep_num_dims=len(out_shape) > 2),
    )


_WEIGHT_VIEWS = {
    "aten.permute.default",
    "aten.t.default",
    "aten.view.default",
    "aten.clone.default",
    "quantized_decomposed.dequantize_per_channel.default",
    "quantized_decomposed.dequantize_per_tensor.default",
}


def is_dequantized_weight(v) -> bool:
    """A non-constant Value that is a view/transpose of a dequantized constant (PT2E weights)."""
    cur = v
    seen_dq = False
    while isinstance(cur, Value) and not cur.is_const:
        p = cur.producer
        if p is None or p.op_name not in _WEIGHT_VIEWS:
            return False
        seen_dq |= p.op_name.startswith("quantized_decomposed.")
        cur = p.args[0]
    return seen_dq and isinstance(cur, Value) and cur.is_const


def lower_addmm(ctx: Ctx, node: Node):
    a = ctx.args(node)
    bias_v, m1, m2 = a.self, a.mat1, a.mat2
    beta, alpha = a.beta, a.alpha
    out_shape = ctx.shape(node.out)
    A = ctx.t(m1)
    bias_vec = None
    if isinstance(bias_v, Value) and bias_v.is_const and beta == 1:
        bc = bias_v.const
        if bc.dim() == 1 or (bc.dim() == 2 and bc.shape[0] == 1):
            if bc.numel() == out_shape[-1]:
                bias_vec = ctx.const(bc.reshape(-1).float().numpy(), "float32", "bias")
    if m2.is_const and A.dtype == "float32":
        wt = m2.const.T if alpha == 1 else m2.const.double().T * alpha
        y = _fc(ctx, A, _f32(wt), bias_vec, out_shape)
    elif is_dequantized_weight(m2) and alpha == 1 and m2.rank == 2:
        W = ctx.transpose(ctx.t(m2), [1, 0])  # cancels the permute of the weight later on
        y = ctx.emit(
            "FULLY_CONNECTED",
            [A, W, bias_vec],
            out_shape,
            A.dtype,
            dict(fused_activation_function="NONE", keep_num_dims=False),
        )
    else:
        y = _matmul(ctx, A, ctx.t(m2), out_shape)
        if alpha != 1:
            y = emit_binary(ctx, "MUL", y, ctx.scalar(alpha, y.dtype))
        if bias_vec is not None:
            y = emit_binary(ctx, "ADD", y, bias_vec)
    if bias_vec is None:
        B = ctx.t(bias_v)
        if beta != 1:
            B = emit_binary(ctx, "MUL", B, ctx.scalar(beta, B.dtype))
        y = emit_binary(ctx, "ADD", y, B)
    ctx.bind(node.out, y)


def lower_linear(ctx: Ctx, node: Node):
    x, w = node.args[0], node.args[1]
    b = node.args[2] if len(node.args) > 2 else None
    A = ctx.t(x)
    out_shape = ctx.shape(node.out)
    bias = ctx.t(b) if b is not None else None
    if w.is_const and A.dtype == "float32":
        W = ctx.const(w.const.float().numpy(), "float32", "weights")
    else:
        W = ctx.t(w)
    ctx.bind(
        node.out,
        ctx.emit(
            "FULLY_CONNECTED",
            [A, W, bias],
            out_shape,
            A.dtype,
            dict(fused_activation_function="NONE", keep_num_dims=len(out_shape) > 2),
        ),
    )


def _matmul(ctx: Ctx, A, B, out_shape):
    return ctx.emit(
        "BATCH_MATMUL",
        [A, B],
        out_shape,
        A.dtype,
        dict(adj_x=False, adj_y=False, asymmetric_quantize_inputs=False),
    )


def lower_mm(ctx: Ctx, node: Node):
    a, b = node.args[0], node.args[1]
    out_shape = ctx.shape(node.out)
    A = ctx.t(a)
    if b.is_const and A.dtype == "float32" and b.rank == 2:
        y = _fc(ctx, A, _f32(b.const.T), None, out_shape)
    elif is_dequantized_weight(b) and b.rank == 2:
        W = ctx.transpose(ctx.t(b), [1, 0])
        y = ctx.emit(
            "FULLY_CONNECTED",
            [A, W, None],
            out_shape,
            A.dtype,
            dict(fused_activation_function="NONE", keep_num_dims=False),
        )
    else:
        y = _matmul(ctx, A, ctx.cast(ctx.t(b), A.dtype), out_shape)
    ctx.bind(node.out, y)


_VIEWS = {
    "view.default",
    "_unsafe_view.default",
    "reshape.default",
    "expand.default",
    "clone.default",
    "alias.default",
}


def broadcast_const_matrix(v: Value):
    """If ``v`` (B, K, N) is a view/expand chain over a constant whose every batch slice is the
    same (K, N) matrix (how torch decomposes ``x3d @ W``), return that matrix."""
    if v.rank < 3:
        return None
    k, n = v.shape[-2], v.shape[-1]
    cur = v
    while not cur.is_const:
        p = cur.producer
        if p is None or p.op_name[5:] not in _VIEWS:
            return None
        src = p.args[0]
        if not isinstance(src, Value) or tuple(src.shape[-2:]) != (k, n):
            return None
        cur = src
    c = cur.const
    if c.dim() < 2 or tuple(c.shape[-2:]) != (k, n) or c.numel() != k * n:
        return None
    return c.reshape(k, n)


def lower_bmm(ctx: Ctx, node: Node):
    a, b = node.args[0], node.args[1]
    A = ctx.t(a)
    out_shape = ctx.shape(node.out)
    w = broadcast_const_matrix(b)
    if w is not None and A.dtype == "float32":
        ctx.bind(node.out, _fc(ctx, A, _f32(w.T), None, out_shape))
        return
    B = ctx.t(b)
    ctx.bind(node.out, _matmul(ctx, A, ctx.cast(B, A.dtype), out_shape))


# ---- softmax -----------------------------------------------------------------------------------


def _softmax_like(op: str):
    def rule(ctx: Ctx, node: Node):
        x, dim = node.args[0], int(node.args[1])
        X = ctx.cast(ctx.t(x), ctx.dtype(node.out))
        r = X.rank
        if r == 0:
            ctx.bind(
                node.out,
                ctx.const(np.zeros((), X.dtype) if op == "LOG_SOFTMAX" else np.ones((), X.dtype)),
            )
            return
        dim = dim % r
        opts = dict(beta=1.0) if op == "SOFTMAX" else None
        if dim == r - 1:
            ctx.bind(node.out, ctx.unary(op, X, opts))
            return
        perm = list(range(r))
        perm[dim], perm[-1] = perm[-1], perm[dim]
        y = ctx.unary(op, ctx.transpose(X, perm), opts)
        ctx.bind(node.out, ctx.transpose(y, perm))

    return rule


RULES = {
    "convolution.default": lower_convolution,
    "max_pool2d_with_indices.default": lower_max_pool2d,
    "avg_pool2d.default": lower_avg_pool2d,
    "_adaptive_avg_pool2d.default": lower_adaptive_avg_pool2d,
    "max_pool3d_with_indices.default": lower_max_pool3d,
    "avg_pool3d.default": lower_avg_pool3d,
    "_adaptive_avg_pool3d.default": lower_adaptive_avg_pool3d,
    "_cdist_forward.default": lower_cdist,
    "_pdist_forward.default": lower_pdist,
    "_embedding_bag.default": lower_embedding_bag,
    "addmm.default": lower_addmm,
    "linear.default": lower_linear,
    "mm.default": lower_mm,
    "bmm.default": lower_bmm,
    "_softmax.default": _softmax_like("SOFTMAX"),
    "_log_softmax.default": _softmax_like("LOG_SOFTMAX"),
}

__all__ = ["RULES", "choose_padding", "separable_linear"]
