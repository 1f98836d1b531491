"""Integer kernels for PT2E-quantized models: DEQUANTIZE -> op -> QUANTIZE becomes an int8 op.

After lowering (lower/quant.py) a PT2E model is a float graph with explicit QUANTIZE and
DEQUANTIZE ops: exactly the reference semantics, but float kernels everywhere.  This pass
establishes:

    No float op whose data inputs all come from DEQUANTIZE (per-tensor int8) and whose output
    goes only to QUANTIZE remains when TFLite has an int8 kernel for it: the op reads the int8
    tensors directly and writes the QUANTIZE's int8 output.  Conv / depthwise / fully connected
    take the int8 weights (symmetric, per-channel on TFLite's channel dim) and an int32 bias
    quantized with scale s_in * s_w[c].  Ops that only move data (max pool, reshape, transpose,
    slice, pad) also run in int8 when followed by no QUANTIZE: the DEQUANTIZE moves after them.
    DEQUANTIZE -> QUANTIZE pairs left over vanish (same parameters) or become one int8->int8
    QUANTIZE (requantize).

int16 activations (TFLite's 16x8 mode: symmetric int16 activations, int8 weights, int64 bias)
follow the same rules where LiteRT has a 16x8 kernel (``_INT16``): every data input and the output
of one op share one integer type; DEQUANTIZE -> QUANTIZE between int8 and int16 becomes a
requantizing QUANTIZE.  int16 ADD/SUB get ``pot_scale_int16 = false`` (general scales).

Numerics: an int8 kernel computes the same integer sums as the reference and rounds once at
its output, so results agree with the PT2E reference within about one output step per layer
(docs/format.md: LiteRT's default kernels may differ from its reference kernels by 1 LSB as well).
Ops without a clear int8 mapping stay float between their DEQUANTIZE/QUANTIZE — always correct.
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph, TOp, TTensor

_WEIGHTED = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3, "FULLY_CONNECTED": 0, "TRANSPOSE_CONV": 0}
# (data, weights, bias) input positions; TRANSPOSE_CONV takes (output_shape, weights, input, bias)
_OPERANDS = {"TRANSPOSE_CONV": (2, 1, 3)}
# ops whose int8 kernel takes any input/output parameters (it requantizes internally)
_REQUANT = {
    "ADD",
    "SUB",
    "MUL",
    "MEAN",
    "SUM",
    "HARD_SWISH",
    "GELU",
    "RSQRT",
    "LEAKY_RELU",
    "RELU",
    "RELU6",
    "BATCH_MATMUL",
}
# int8 kernels that work on the raw values: every input's parameters must equal the output's
# (LiteRT checks this for concatenation, max/min, resize, pooling, data movement)
_SAME = {
    "MAX_POOL_2D",
    "AVERAGE_POOL_2D",
    "RESHAPE",
    "TRANSPOSE",
    "SLICE",
    "STRIDED_SLICE",
    "PAD",
    "PADV2",
    "SQUEEZE",
    "SPACE_TO_DEPTH",
    "DEPTH_TO_SPACE",
    "GATHER",
    "CONCATENATION",
    "MAXIMUM",
    "MINIMUM",
    "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR",
    "SELECT_V2",
}
# kernels with fixed output parameters, per integer type
_FIXED = {"LOGISTIC": (1 / 256, -128), "SOFTMAX": (1 / 256, -128), "TANH": (1 / 128, 0)}
_FIXED16 = {"LOGISTIC": (2**-15, 0), "SOFTMAX": (2**-15, 0), "TANH": (2**-15, 0)}
# int16 (16x8) kernels: every other op stays int8-only here (RSQRT too: LiteRT's int16 RSQRT
# table is too coarse for the inputs wick's quantizer gives it, which asks for it in float)
_INT16 = {
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "FULLY_CONNECTED",
    "TRANSPOSE_CONV",
    "ADD",
    "SUB",
    "MUL",
    "MEAN",
    "SUM",
    "RELU",
    "RELU6",
    "BATCH_MATMUL",
    "LOGISTIC",
    "SOFTMAX",
    "TANH",
    "MAX_POOL_2D",
    "AVERAGE_POOL_2D",
    "RESHAPE",
    "TRANSPOSE",
    "SLICE",
    "STRIDED_SLICE",
    "PAD",
    "PADV2",
    "SQUEEZE",
    "GATHER",
    "CONCATENATION",
    "MAXIMUM",
    "MINIMUM",
    "SELECT_V2",
}
_QTYPES = ("int8", "int16")
_DATA_INPUTS = {
    "PAD": 1,
    "PADV2": 1,
    "RESHAPE": 1,
    "TRANSPOSE": 1,
    "SLICE": 1,
    "STRIDED_SLICE": 1,
    "MEAN": 1,
    "SUM": 1,
    "GATHER": 1,
    "RESIZE_BILINEAR": 1,
    "RESIZE_NEAREST_NEIGHBOR": 1,
}
# ops whose data inputs do not start at input 0: (first, end); the others are constant
# parameters, except SELECT_V2's condition (a bool tensor, input 0)
_DATA_RANGE = {"SELECT_V2": (1, 3)}


def _per_tensor(q) -> tuple[float, int] | None:
    if q is None or len(q.get("scale", [])) != 1:
        return None
    return float(q["scale"][0]), int(q["zero_point"][0])


def _dq_source(g: TGraph, t: TTensor | None):
    """The int8 / int16 per-tensor tensor that DEQUANTIZE turned into ``t``, else None."""
    if t is None or t.producer is None or t.producer.op != "DEQUANTIZE":
        return None
    src = t.producer.inputs[0]
    if src.dtype not in _QTYPES or _per_tensor(src.quant) is None:
        return None
    return src


def _q_consumer(g: TGraph, y: TTensor):
    """(int8 / int16 output, QUANTIZE ops) when every user of ``y`` is a QUANTIZE with one
    parameter set and type, and ``y`` is not a graph output; else None."""
    users = g.users_of(y)
    if not users or g.is_output(y) or any(u.op != "QUANTIZE" for u in users):
        return None
    outs = [u.outputs[0] for u in users]
    params = {_per_tensor(o.quant) for o in outs}
    if len(params) != 1 or None in params or len({o.dtype for o in outs}) != 1:
        return None
    if outs[0].dtype not in _QTYPES:
        return None
    return outs[0], users


def _int_types_ok(op: TOp, srcs: list[TTensor], out: TTensor) -> bool:
    """Data inputs and output share one integer type, int16 only where the op has a 16x8
    kernel, and int16 tensors are symmetric (zero point 0, as LiteRT's int16 kernels need)."""
    if any(s.dtype != out.dtype for s in srcs):
        return False
    if out.dtype == "int16":
        if op.op not in _INT16:
            return False
        if any(_per_tensor(t.quant)[1] != 0 for t in [*srcs, out]):
            return False
    return True


def _close(a, b) -> bool:
    return a is not None and b is not None and np.isclose(a[0], b[0], rtol=1e-6) and a[1] == b[1]


def _retarget(g: TGraph, op: TOp, out: TTensor, quants: list[TOp]) -> None:
    """Make ``op`` produce ``out`` (the QUANTIZE result) and drop the QUANTIZE ops."""
    first = quants[0].outputs[0]
    for qop in quants:
        o = qop.outputs[0]
        g.remove(qop)
        if o is not first:
            g.replace_uses(o, first)
    old = op.outputs[0]
    op.outputs[0] = first
    first.producer = op
    old.producer = None


def _weighted(g: TGraph, op: TOp) -> bool:
    xi, wi, bi = _OPERANDS.get(op.op, (0, 1, 2))
    if op.op == "TRANSPOSE_CONV" and (op.inputs[0] is None or not op.inputs[0].is_const):
        return False
    x = _dq_source(g, op.inputs[xi])
    w_t = op.inputs[wi]
    if x is None or w_t is None or w_t.producer is None or w_t.producer.op != "DEQUANTIZE":
        return False
    w = w_t.producer.inputs[0]
    if not w.is_const or w.dtype != "int8" or w.quant is None:
        return False
    if any(int(z) != 0 for z in w.quant.get("zero_point", [0])):
        return False  # TFLite int8 weights are symmetric
    n_out = w.shape[_WEIGHTED[op.op]]
    scales = [float(s) for s in w.quant["scale"]]
    axis = int(w.quant.get("quantized_dimension", 0))
    if len(scales) > 1 and axis != _WEIGHTED[op.op]:
        return False
    q = _q_consumer(g, op.outputs[0])
    if q is None:
        return False
    out, quants = q
    if not _int_types_ok(op, [x], out):
        return False
    s_in = _per_tensor(x.quant)[0]
    s_w = np.asarray(scales if len(scales) > 1 else scales * n_out, np.float64)
    b_t = op.inputs[bi] if len(op.inputs) > bi else None
    if b_t is not None and not b_t.is_const:
        return False
    bias = b_t.data.astype(np.float64) if b_t is not None else np.zeros(n_out)
    bscale = s_in * s_w
    bq = np.round(bias / bscale)
    wide = x.dtype == "int16"  # 16x8 kernels take an int64 bias
    if not wide and np.abs(bq).max(initial=0) >= 2**31:
        return False
    bname = (b_t.name if b_t is not None else op.outputs[0].name) + ("/int64" if wide else "/int32")
    bt = g.const(bname, bq.astype(np.int64 if wide else np.int32))
    bt.quant = dict(scale=[float(v) for v in bscale], zero_point=[0] * n_out, quantized_dimension=0)
    g.set_input(op, xi, x)
    g.set_input(op, wi, w)
    if len(op.inputs) > bi:
        g.set_input(op, bi, bt)
    else:
        op.inputs.append(bt)
        bt.users.append(op)
    _retarget(g, op, out, quants)
    return True


def _elementwise(g: TGraph, op: TOp) -> bool:
    first, end = _DATA_RANGE.get(op.op, (0, _DATA_INPUTS.get(op.op, len(op.inputs))))
    data = op.inputs[first:end]
    srcs = [_dq_source(g, t) for t in data]
    if any(s is None for s in srcs) or len(op.outputs) != 1:
        return False
    rest = [t for i, t in enumerate(op.inputs) if not first <= i < end]
    if op.op == "SELECT_V2":
        if op.inputs[0] is None or op.inputs[0].dtype != "bool":
            return False
        rest = rest[1:]
    if any(t is not None and not t.is_const for t in rest):
        return False
    q = _q_consumer(g, op.outputs[0])
    if q is None:
        return False
    out, quants = q
    if not _int_types_ok(op, srcs, out):
        return False
    oq = _per_tensor(out.quant)
    if op.op in _SAME and not all(_close(oq, _per_tensor(s.quant)) for s in srcs):
        if op.op != "CONCATENATION":
            return False
        # bring each input to the output's parameters first (int8 -> int8 QUANTIZE): the same
        # rounding the reference does when it quantizes the concatenated floats
        srcs = [s if _close(oq, _per_tensor(s.quant)) else _requantize(g, s, out, op) for s in srcs]
    for i, s in enumerate(srcs):
        g.set_input(op, first + i, s)
    if op.op in ("ADD", "SUB") and out.dtype == "int16":
        op.options["pot_scale_int16"] = False  # general scales (LiteRT's ADD v3 / SUB v5)
    fixed_params = (_FIXED16 if out.dtype == "int16" else _FIXED).get(op.op)
    if fixed_params is not None and not _close(oq, fixed_params):
        # the integer kernel has fixed output parameters: produce those, then requantize
        fs, fz = fixed_params
        fixed = g.tensor(out.name + "/fixed", out.shape, out.dtype)
        fixed.quant = dict(scale=[fs], zero_point=[fz])
        _retarget(g, op, out, quants)
        op.outputs[0] = fixed
        fixed.producer = op
        out.producer = None
        g.add("QUANTIZE", [fixed], [out], origin=op.origin)
        return True
    _retarget(g, op, out, quants)
    return True


def _requantize(g: TGraph, src: TTensor, like: TTensor, op: TOp) -> TTensor:
    t = g.tensor(src.name + "/rq", src.shape, like.dtype, like=like)
    g.add("QUANTIZE", [src], [t], origin=op.origin)
    return t


def _sink_dequantize(g: TGraph, op: TOp) -> bool:
    """data-movement op on a DEQUANTIZE output, not followed by QUANTIZE: run it in int8 and
    dequantize after it."""
    if op.op not in _SAME or len(op.outputs) != 1:
        return False
    if op.op in ("AVERAGE_POOL_2D", "CONCATENATION", "MAXIMUM", "MINIMUM", "RESIZE_BILINEAR"):
        return False  # several inputs, or rounding: only with a QUANTIZE after them
    src = _dq_source(g, op.inputs[0])
    if src is None or any(t is not None and not t.is_const for t in op.inputs[1:]):
        return False
    if src.dtype == "int16" and op.op not in _INT16:
        return False
    if op.op == "PADV2" and not _padv2_value_to_int8(g, op, src):
        return False
    y = op.outputs[0]
    yq = g.tensor(y.name + "/" + src.dtype, y.shape, src.dtype, like=src)
    g.set_input(op, 0, src)
    op.outputs[0] = yq
    yq.producer = op
    y.producer = None
    g.add("DEQUANTIZE", [yq], [y], origin=op.origin)
    return True


_MOVE = {"RESHAPE", "TRANSPOSE", "SQUEEZE", "EXPAND_DIMS", "SLICE", "STRIDED_SLICE", "GATHER"}


def _hoist_quantize(g: TGraph, qop: TOp) -> bool:
    """QUANTIZE(data_movement(y)) -> data_movement(QUANTIZE(y)): quantizing is elementwise, so
    it commutes with moving data; the QUANTIZE then sits right after the op that made y."""
    y = qop.inputs[0]
    mv = y.producer
    if mv is None or mv.op not in _MOVE or y.dtype != "float32":
        return False
    if len(g.users_of(y)) != 1 or g.is_output(y):
        return False
    if any(t is not None and not t.is_const for t in mv.inputs[1:]):
        return False
    x = mv.inputs[0]
    out = qop.outputs[0]
    xq = g.tensor(x.name + "/q", x.shape, out.dtype, like=out)
    g.add("QUANTIZE", [x], [xq], origin=qop.origin)
    g.set_input(mv, 0, xq)
    g.remove(qop)
    mv.outputs[0] = out
    out.producer = mv
    y.producer = None
    return True


def _padv2_value_to_int8(g: TGraph, op: TOp, src: TTensor) -> bool:
    """PADV2's float pad value in src's int8 domain (-inf, the max-pool padding, is qmin)."""
    v = op.inputs[2]
    if v is None or not v.is_const or v.numel != 1:
        return False
    s, z = _per_tensor(src.quant)
    f = float(v.data.reshape(-1)[0])
    info = np.iinfo(src.dtype)
    q = int(info.min) if f == -np.inf else int(np.clip(np.round(f / s) + z, info.min, info.max))
    if f != -np.inf and not np.isclose((q - z) * s, f, atol=s * 1e-3):
        return False  # the value is not on src's grid: the integer pad would change results
    c = g.const(v.name + "/" + src.dtype, np.asarray(q, src.dtype).reshape(v.shape))
    c.quant = dict(src.quant)
    g.set_input(op, 2, c)
    return True


_ACT_FUSE = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL"}


def _fuse_int8_activations(g: TGraph) -> int:
    """int8 op -> RELU/RELU6 (same parameters on both sides of the activation): fuse it, the
    clamp then happens in the op's requantization exactly as the separate kernel would."""
    n = 0
    for act in list(g.ops):
        if act not in g.ops or act.op not in ("RELU", "RELU6", "RELU_N1_TO_1"):
            continue
        x, y = act.inputs[0], act.outputs[0]
        p = x.producer
        if p is None or p.op not in _ACT_FUSE or x.dtype != "int8" or y.dtype != "int8":
            continue
        if p.options.get("fused_activation_function", "NONE") not in ("NONE", 0):
            continue
        if not _close(_per_tensor(x.quant), _per_tensor(y.quant)):
            continue
        if len(g.users_of(x)) != 1 or g.is_output(x):
            continue
        p.options["fused_activation_function"] = act.op
        g.remove(act)
        p.outputs[0] = y
        y.producer = p
        x.producer = None
        n += 1
    return n


def _pairs(g: TGraph) -> int:
    """DEQUANTIZE -> QUANTIZE: nothing (same parameters) or one int8->int8 QUANTIZE."""
    n = 0
    for qop in list(g.ops):
        if qop not in g.ops or qop.op != "QUANTIZE":
            continue
        src = _dq_source(g, qop.inputs[0])
        if src is None:
            continue
        out = qop.outputs[0]
        if out.dtype == src.dtype and _close(_per_tensor(out.quant), _per_tensor(src.quant)):
            g.replace_uses(out, src)
            g.remove(qop)
        else:
            g.set_input(qop, 0, src)
        n += 1
    return n


def quantize_ops(g: TGraph) -> int:
    """Apply the rewrites above until nothing changes; returns the number of rewrites."""
    total = 0
    for _ in range(100):
        n = 0
        for op in list(g.ops):
            if op not in g.ops or not op.outputs or op.outputs[0].dtype != "float32":
                continue
            if op.op in _WEIGHTED:
                n += _weighted(g, op)
            elif op.op in _REQUANT or op.op in _SAME or op.op in _FIXED:
                if not _elementwise(g, op):
                    n += _sink_dequantize(g, op)
                else:
                    n += 1
        for qop in list(g.ops):
            if qop in g.ops and qop.op == "QUANTIZE" and _per_tensor(qop.outputs[0].quant):
                n += _hoist_quantize(g, qop)
        n += _pairs(g)
        n += _fuse_int8_activations(g)
        g.dce()
        total += n
        if not n:
            break
    g.toposort()
    return total


def float_islands(g: TGraph) -> list[tuple[str, str | None]]:
    """Ops that still compute in float inside an int8 region: reachable from the DEQUANTIZE of
    an int8 activation and reaching a QUANTIZE, through float ops only.  Returns
    (TFLite op, the user's source line or None) in graph order; empty for float models and
    fully integer ones."""
    down: set[int] = set()
    stack = [
        u
        for op in g.ops
        if op.op == "DEQUANTIZE" and not op.inputs[0].is_const
        for u in g.users_of(op.outputs[0])
    ]
    while stack:
        op = stack.pop()
        if id(op) in down or op.op == "QUANTIZE":
            continue
        down.add(id(op))
        for t in op.outputs:
            stack.extend(g.users_of(t))
    up: set[int] = set()
    stack = [
        t.producer
        for op in g.ops
        if op.op == "QUANTIZE" and op.inputs[0].dtype.startswith("float")
        for t in op.inputs[:1]
        if t.producer is not None
    ]
    while stack:
        op = stack.pop()
        if op is None or id(op) in up or op.op == "DEQUANTIZE":
            continue
        up.add(id(op))
        stack.extend(t.producer for t in op.inputs if t is not None and t.producer is not None)
    out = []
    for op in g.ops:
        if id(op) in down and id(op) in up and op.op not in ("QUANTIZE", "DEQUANTIZE"):
            src = op.origin.source() if op.origin is not None else None
            out.append((op.op, src))
    return out
