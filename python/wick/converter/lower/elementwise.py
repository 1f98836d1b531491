"""Lowering rules for elementwise ATen ops: arithmetic, comparisons, logic, math, activations.

Every rule computes in the dtype of the ATen output (comparisons: in the promoted input dtype)
and relies on TFLite's numpy-style broadcasting.  Ops without a TFLite builtin are composed
from builtins with the identities stated next to each rule.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...tflite.binary_ops import arithmetic_ops, compare_ops
from ...tflite.unary_ops import unary_ops
from ..ir import Node, Value
from .context import Ctx, torch_to_tfl


def operand(ctx: Ctx, x, dtype: str):
    if isinstance(x, Value):
        return ctx.cast(ctx.t(x), dtype)
    if isinstance(x, torch.Tensor):
        return ctx.const(x.detach().numpy().astype(dtype), dtype)
    return ctx.scalar(x, dtype)


def _fold_binary(op: str, a, b):
    """Numpy result when both operands are constants (keeps constant chains out of the file)."""
    if not (a.is_const and b.is_const):
        return None
    f = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}.get(op)
    if f is None:
        return None
    return f(a.data, b.data).astype(a.dtype)


def emit_binary(ctx: Ctx, op: str, a, b, dtype: str | None = None, options=None):
    folded = _fold_binary(op, a, b)
    if folded is not None and dtype in (None, a.dtype):
        return ctx.const(folded, a.dtype)
    if op in ("ADD", "SUB", "MUL", "DIV") and options is None:
        options = dict(fused_activation_function="NONE")
    return ctx.binary(op, a, b, dtype, options)


# ---- arithmetic ------------------------------------------------------------------------------


def _arith(op: str):
    def rule(ctx: Ctx, node: Node):
        out = node.out
        dt = ctx.dtype(out)
        a, b = node.args[0], node.args[1]
        alpha = node.kwargs.get("alpha", 1)
        A, B = operand(ctx, a, dt), operand(ctx, b, dt)
        if alpha != 1:
            B = emit_binary(ctx, "MUL", B, ctx.scalar(alpha, dt))
        ctx.bind(out, emit_binary(ctx, op, A, B))

    return rule


def lower_div(ctx: Ctx, node: Node):
    out = node.out
    dt = ctx.dtype(out)
    mode = node.kwargs.get("rounding_mode")
    A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
    if mode is None:
        if dt.startswith("int"):
            raise ctx.error("true division producing an integer tensor")
        ctx.bind(out, emit_binary(ctx, "DIV", A, B))
    elif mode == "floor":
        ctx.bind(out, ctx.binary("FLOOR_DIV", A, B))
    elif mode == "trunc":
        if dt.startswith("float"):
            q = emit_binary(ctx, "DIV", A, B)
            ctx.bind(out, trunc(ctx, q))
        else:
            # trunc(a/b) = sign(a*b) * floor(|a| / |b|)
            q = ctx.binary("FLOOR_DIV", ctx.unary("ABS", A), ctx.unary("ABS", B))
            s = ctx.unary("SIGN", emit_binary(ctx, "MUL", A, B))
            ctx.bind(out, emit_binary(ctx, "MUL", q, s))
    else:
        raise ctx.error(f"unknown rounding_mode {mode!r}")


def trunc(ctx: Ctx, x):
    # trunc(x) = sign(x) * floor(|x|)
    return emit_binary(ctx, "MUL", ctx.unary("SIGN", x), ctx.unary("FLOOR", ctx.unary("ABS", x)))


def lower_trunc(ctx: Ctx, node: Node):
    ctx.bind(node.out, trunc(ctx, ctx.t(node.args[0])))


def lower_remainder(ctx: Ctx, node: Node):
    # Python-style remainder (sign of divisor) == TFLite FLOOR_MOD
    dt = ctx.dtype(node.out)
    A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
    ctx.bind(node.out, ctx.binary("FLOOR_MOD", A, B))


def lower_fmod(ctx: Ctx, node: Node):
    # C-style fmod (sign of dividend): a - trunc(a/b) * b
    dt = ctx.dtype(node.out)
    A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
    if dt.startswith("float"):
        q = trunc(ctx, emit_binary(ctx, "DIV", A, B))
    else:
        q0 = ctx.binary("FLOOR_DIV", ctx.unary("ABS", A), ctx.unary("ABS", B))
        q = emit_binary(ctx, "MUL", q0, ctx.unary("SIGN", emit_binary(ctx, "MUL", A, B)))
    ctx.bind(node.out, emit_binary(ctx, "SUB", A, emit_binary(ctx, "MUL", q, B)))


def lower_pow(ctx: Ctx, node: Node):
    out = node.out
    dt = ctx.dtype(out)
    base, exp = node.args[0], node.args[1]
    if isinstance(base, Value) and not isinstance(exp, Value):
        x = ctx.cast(ctx.t(base), dt)
        e = float(exp)
        if e == 1:
            ctx.bind(out, x)
            return
        if e == 2:
            ctx.bind(out, emit_binary(ctx, "MUL", x, x))
            return
        if e == 3:
            ctx.bind(out, emit_binary(ctx, "MUL", emit_binary(ctx, "MUL", x, x), x))
            return
        if e == 0.5 and dt.startswith("float"):
            ctx.bind(out, ctx.unary("SQRT", x))
            return
        if e == -0.5 and dt.startswith("float"):
            ctx.bind(out, ctx.unary("RSQRT", x))
            return
        if e == -1 and dt.startswith("float"):
            ctx.bind(out, emit_binary(ctx, "DIV", ctx.scalar(1.0, dt), x))
            return
    A, B = operand(ctx, base, dt), operand(ctx, exp, dt)
    ctx.bind(out, ctx.binary("POW", A, B))


def _plain_binary(op: str):
    """Both operands in the output's dtype, one op (maximum, minimum, ...)."""

    def rule(ctx: Ctx, node: Node):
        dt = ctx.dtype(node.out)
        A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
        ctx.bind(node.out, ctx.binary(op, A, B))

    return rule


# ---- comparisons and logic -------------------------------------------------------------------


def _compute_dtype(a, b) -> str:
    ta = a.dtype if isinstance(a, Value) else None
    tb = b.dtype if isinstance(b, Value) else None
    if ta is not None and tb is not None:
        pt = torch.promote_types(ta, tb)
    else:
        t = ta or tb
        other = b if ta is not None else a
        if isinstance(other, float) and not t.is_floating_point:
            pt = torch.float32
        elif isinstance(other, bool) or t == torch.bool:
            pt = t if isinstance(other, bool) else torch.int32
        else:
            pt = t
    s = torch_to_tfl(pt)
    if s == "int64":
        for v in (a, b):
            if isinstance(v, Value) and v.dtype == torch.int64:
                from .context import fits_int32

                if not fits_int32(v):
                    return "int64"
        return "int32"
    return s


def _compare(op: str):
    def rule(ctx: Ctx, node: Node):
        a, b = node.args[0], node.args[1]
        dt = _compute_dtype(a, b)
        A, B = operand(ctx, a, dt), operand(ctx, b, dt)
        ctx.bind(node.out, ctx.binary(op, A, B, "bool"))

    return rule


def _logical(op: str):
    def rule(ctx: Ctx, node: Node):
        A, B = operand(ctx, node.args[0], "bool"), operand(ctx, node.args[1], "bool")
        ctx.bind(node.out, ctx.binary(op, A, B, "bool"))

    return rule


def lower_logical_not(ctx: Ctx, node: Node):
    ctx.bind(node.out, ctx.unary("LOGICAL_NOT", operand(ctx, node.args[0], "bool")))


def _bitwise(op: str):
    def rule(ctx: Ctx, node: Node):
        if node.out.dtype != torch.bool:
            if op == "NOT_EQUAL":  # xor on integers
                dt = ctx.dtype(node.out)
                A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
                ctx.bind(node.out, ctx.binary("BITWISE_XOR", A, B))
                return
            raise ctx.error(
                "bitwise and/or on integer tensors has no TFLite builtin",
                hint="use boolean tensors (logical ops) instead",
            )
        A, B = operand(ctx, node.args[0], "bool"), operand(ctx, node.args[1], "bool")
        ctx.bind(node.out, ctx.binary(op, A, B, "bool"))

    return rule


def lower_bitwise_not(ctx: Ctx, node: Node):
    if node.out.dtype != torch.bool:
        # ~x == -x - 1 for two's complement integers
        dt = ctx.dtype(node.out)
        x = ctx.t(node.args[0])
        ctx.bind(node.out, emit_binary(ctx, "SUB", ctx.unary("NEG", x), ctx.scalar(1, dt)))
        return
    ctx.bind(node.out, ctx.unary("LOGICAL_NOT", ctx.t(node.args[0])))


def lower_where(ctx: Ctx, node: Node):
    cond, a, b = node.args
    dt = ctx.dtype(node.out)
    C = operand(ctx, cond, "bool")
    A, B = operand(ctx, a, dt), operand(ctx, b, dt)
    shape = ctx.shape(node.out)
    ctx.bind(node.out, ctx.emit("SELECT_V2", [C, A, B], shape, dt))


# ---- unary math ------------------------------------------------------------------------------


def _unary(op: str, float_only: bool = True):
    def rule(ctx: Ctx, node: Node):
        dt = ctx.dtype(node.out)
        x = ctx.cast(ctx.t(node.args[0]), dt)
        ctx.bind(node.out, ctx.unary(op, x))

    return rule


def _composite(fn):
    """Rule from a function f(ctx, x_tensor, dtype) -> tensor (x cast to the output dtype)."""

    def rule(ctx: Ctx, node: Node):
        dt = ctx.dtype(node.out)
        x = ctx.cast(ctx.t(node.args[0]), dt)
        ctx.bind(node.out, fn(ctx, x, dt))

    return rule


def _c(ctx, v, dt):
    return ctx.scalar(v, dt)


def _mul(ctx, a, b):
    return emit_binary(ctx, "MUL", a, b)


def _add(ctx, a, b):
    return emit_binary(ctx, "ADD", a, b)


def _sub(ctx, a, b):
    return emit_binary(ctx, "SUB", a, b)


def _div(ctx, a, b):
    return emit_binary(ctx, "DIV", a, b)


def erf(ctx: Ctx, x, dt):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): erf(x) = sign(x) * (1 - poly(t) e^{-x^2}),
    # t = 1 / (1 + p|x|)
    p, a1, a2, a3, a4, a5 = (
        0.3275911,
        0.254829592,
        -0.284496736,
        1.421413741,
        -1.453152027,
        1.061405429,
    )
    ax = ctx.unary("ABS", x)
    t = _div(ctx, _c(ctx, 1.0, dt), _add(ctx, _mul(ctx, ax, _c(ctx, p, dt)), _c(ctx, 1.0, dt)))
    poly = _c(ctx, a5, dt)
    for coef in (a4, a3, a2, a1):
        poly = _add(ctx, _mul(ctx, poly, t), _c(ctx, coef, dt))
    poly = _mul(ctx, poly, t)
    e = ctx.unary("EXP", ctx.unary("NEG", _mul(ctx, x, x)))
    y = _sub(ctx, _c(ctx, 1.0, dt), _mul(ctx, poly, e))
    return _mul(ctx, ctx.unary("SIGN", x), y)


def _reciprocal(ctx, x, dt):
    return _div(ctx, _c(ctx, 1.0, dt), x)


def _log1p(ctx, x, dt):
    return ctx.unary("LOG", _add(ctx, x, _c(ctx, 1.0, dt)))


def _expm1(ctx, x, dt):
    return _sub(ctx, ctx.unary("EXP", x), _c(ctx, 1.0, dt))


def _log2(ctx, x, dt):
    return _mul(ctx, ctx.unary("LOG", x), _c(ctx, 1.0 / math.log(2.0), dt))


def _log10(ctx, x, dt):
    return _mul(ctx, ctx.unary("LOG", x), _c(ctx, 1.0 / math.log(10.0), dt))


def _tan(ctx, x, dt):
    return _div(ctx, ctx.unary("SIN", x), ctx.unary("COS", x))


def _atan(ctx, x, dt):
    # TFLite ATAN2 does not broadcast: give it a full-shape constant
    return ctx.binary("ATAN2", x, ctx.const(np.ones(x.shape, dt), dt))


def _sqrt_1mx2(ctx, x, dt):
    return ctx.unary("SQRT", _sub(ctx, _c(ctx, 1.0, dt), _mul(ctx, x, x)))


def _asin(ctx, x, dt):
    return ctx.binary("ATAN2", x, _sqrt_1mx2(ctx, x, dt))


def _acos(ctx, x, dt):
    return ctx.binary("ATAN2", _sqrt_1mx2(ctx, x, dt), x)


def _sinh(ctx, x, dt):
    ep, en = ctx.unary("EXP", x), ctx.unary("EXP", ctx.unary("NEG", x))
    return _mul(ctx, _sub(ctx, ep, en), _c(ctx, 0.5, dt))


def _cosh(ctx, x, dt):
    ep, en = ctx.unary("EXP", x), ctx.unary("EXP", ctx.unary("NEG", x))
    return _mul(ctx, _add(ctx, ep, en), _c(ctx, 0.5, dt))


def _asinh(ctx, x, dt):
    # asinh(x) = sign(x) * log(|x| + sqrt(x^2 + 1))  (odd symmetry keeps negative x accurate)
    ax = ctx.unary("ABS", x)
    r = ctx.unary("SQRT", _add(ctx, _mul(ctx, x, x), _c(ctx, 1.0, dt)))
    return _mul(ctx, ctx.unary("SIGN", x), ctx.unary("LOG", _add(ctx, ax, r)))


def _acosh(ctx, x, dt):
    r = ctx.unary("SQRT", _sub(ctx, _mul(ctx, x, x), _c(ctx, 1.0, dt)))
    return ctx.unary("LOG", _add(ctx, x, r))


def _atanh(ctx, x, dt):
    one = _c(ctx, 1.0, dt)
    q = _div(ctx, _add(ctx, one, x), _sub(ctx, one, x))
    return _mul(ctx, ctx.unary("LOG", q), _c(ctx, 0.5, dt))


def _isnan(ctx: Ctx, node: Node):
    x = ctx.t(node.args[0])
    ctx.bind(node.out, ctx.binary("NOT_EQUAL", x, x, "bool"))


def _isinf(ctx: Ctx, node: Node):
    x = ctx.t(node.args[0])
    inf = ctx.scalar(np.inf, x.dtype)
    ctx.bind(node.out, ctx.binary("EQUAL", ctx.unary("ABS", x), inf, "bool"))


def lower_sign(ctx: Ctx, node: Node):
    dt = ctx.dtype(node.out)
    x = ctx.t(node.args[0])
    if dt == "bool":
        ctx.bind(node.out, x)
        return
    if dt not in ("float32", "int32"):
        x = ctx.cast(x, "float32")
    ctx.bind(node.out, ctx.unary("SIGN", x))


def broadcast_to(ctx: Ctx, x, shape):
    shape = list(shape)
    if x.shape == shape:
        return x
    if x.is_const:
        return ctx.const(
            np.broadcast_to(x.data.reshape([1] * (len(shape) - x.rank) + x.shape), shape).copy(),
            x.dtype,
        )
    if x.rank < len(shape):
        x = ctx.reshape(x, [1] * (len(shape) - x.rank) + x.shape)
    return ctx.emit("BROADCAST_TO", [x, ctx.i32(shape)], shape, x.dtype)


def lower_atan2(ctx: Ctx, node: Node):
    # TFLite ATAN2 needs equal shapes
    dt = ctx.dtype(node.out)
    shape = ctx.shape(node.out)
    A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
    ctx.bind(
        node.out, ctx.binary("ATAN2", broadcast_to(ctx, A, shape), broadcast_to(ctx, B, shape))
    )


# ---- activations -----------------------------------------------------------------------------


def clamp_tensor(ctx: Ctx, x, lo, hi):
    """clamp(x, lo, hi) with scalar bounds, using the fused-activation-friendly ops."""
    dt = x.dtype
    if lo is not None and hi is not None and dt == "float32":
        if lo == 0 and hi == 6:
            return ctx.unary("RELU6", x)
        if lo == -1 and hi == 1:
            return ctx.unary("RELU_N1_TO_1", x)
    if lo is not None and hi is None and lo == 0 and dt == "float32":
        return ctx.unary("RELU", x)
    # torch: clamp(x, lo, hi) = min(max(x, lo), hi)  (hi wins when lo > hi)
    y = x
    if lo is not None:
        y = ctx.binary("MAXIMUM", y, ctx.scalar(lo, dt))
    if hi is not None:
        y = ctx.binary("MINIMUM", y, ctx.scalar(hi, dt))
    return y


def lower_clamp(ctx: Ctx, node: Node):
    a = ctx.args(node)
    dt = ctx.dtype(node.out)
    x = ctx.cast(ctx.t(a.self), dt)
    ctx.bind(node.out, clamp_tensor(ctx, x, a.min, a.max))


def lower_clamp_tensor(ctx: Ctx, node: Node):
    a = ctx.args(node)
    dt = ctx.dtype(node.out)
    y = ctx.cast(ctx.t(a.self), dt)
    if a.min is not None:
        y = ctx.binary("MAXIMUM", y, operand(ctx, a.min, dt))
    if a.max is not None:
        y = ctx.binary("MINIMUM", y, operand(ctx, a.max, dt))
    ctx.bind(node.out, y)


def lower_hardtanh(ctx: Ctx, node: Node):
    a = ctx.args(node)
    x = ctx.t(a.self)
    ctx.bind(node.out, clamp_tensor(ctx, x, float(a.min_val), float(a.max_val)))


def lower_leaky_relu(ctx: Ctx, node: Node):
    a = ctx.args(node)
    ctx.bind(node.out, ctx.unary("LEAKY_RELU", ctx.t(a.self), dict(alpha=float(a.negative_slope))))


def lower_elu(ctx: Ctx, node: Node):
    a = ctx.args(node)
    x = ctx.t(a.self)
    dt = x.dtype
    if a.alpha == 1 and a.scale == 1 and a.input_scale == 1:
        ctx.bind(node.out, ctx.unary("ELU", x))
        return
    # elu(x) = scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))
    neg = _mul(
        ctx,
        _expm1(ctx, _mul(ctx, x, _c(ctx, float(a.input_scale), dt)), dt),
        _c(ctx, float(a.alpha), dt),
    )
    cond = ctx.binary("GREATER", x, _c(ctx, 0.0, dt), "bool")
    y = ctx.emit("SELECT_V2", [cond, x, neg], x.shape, dt)
    if a.scale != 1:
        y = _mul(ctx, y, _c(ctx, float(a.scale), dt))
    ctx.bind(node.out, y)


def lower_gelu(ctx: Ctx, node: Node):
    a = ctx.args(node)
    approx = a.approximate == "tanh"
    ctx.bind(node.out, ctx.unary("GELU", ctx.t(a.self), dict(approximate=approx)))


def lower_prelu(ctx: Ctx, node: Node):
    x, w = node.args[0], node.args[1]
    X = ctx.t(x)
    W = ctx.t(w)
    # torch: weight has C elements (channel dim 1) or 1; TFLite alpha broadcasts from the right
    if W.numel > 1 and x.rank >= 2:
        shape = [1] * x.rank
        shape[1] = W.numel
        W = ctx.reshape(W, shape)
    ctx.bind(node.out, ctx.emit("PRELU", [X, W], ctx.shape(node.out), X.dtype))


def lower_silu(ctx: Ctx, node: Node):
    x = ctx.t(node.args[0])
    ctx.bind(node.out, _mul(ctx, x, ctx.unary("LOGISTIC", x)))


def lower_hardsigmoid(ctx: Ctx, node: Node):
    x = ctx.t(node.args[0])
    dt = x.dtype
    y = clamp_tensor(ctx, _add(ctx, x, _c(ctx, 3.0, dt)), 0.0, 6.0)
    ctx.bind(node.out, _mul(ctx, y, _c(ctx, 1.0 / 6.0, dt)))


def lower_hardswish(ctx: Ctx, node: Node):
    ctx.bind(node.out, ctx.unary("HARD_SWISH", ctx.t(node.args[0])))


def lower_softplus(ctx: Ctx, node: Node):
    a = ctx.args(node)
    x = ctx.t(a.self)
    dt = x.dtype
    beta, threshold = float(a.beta), float(a.threshold)
    bx = _mul(ctx, x, _c(ctx, beta, dt)) if beta != 1 else x
    # log(1 + exp(bx)) / beta, linear above threshold; computed stably as
    # max(bx, 0) + log(1 + exp(-|bx|))
    sp = _add(
        ctx,
        ctx.unary("RELU", bx),
        _log1p(ctx, ctx.unary("EXP", ctx.unary("NEG", ctx.unary("ABS", bx))), dt),
    )
    if beta != 1:
        sp = _mul(ctx, sp, _c(ctx, 1.0 / beta, dt))
    cond = ctx.binary("GREATER", bx, _c(ctx, threshold, dt), "bool")
    ctx.bind(node.out, ctx.emit("SELECT_V2", [cond, x, sp], x.shape, dt))


RULES = {
    "add.Tensor": _arith("ADD"),
    "add.Scalar": _arith("ADD"),
    "sub.Tensor": _arith("SUB"),
    "sub.Scalar": _arith("SUB"),
    "rsub.Scalar": None,  # filled below
    "mul.Tensor": _arith("MUL"),
    "mul.Scalar": _arith("MUL"),
    "div.Tensor": lower_div,
    "div.Scalar": lower_div,
    "div.Tensor_mode": lower_div,
    "div.Scalar_mode": lower_div,
    "remainder.Tensor": lower_remainder,
    "remainder.Scalar": lower_remainder,
    "fmod.Tensor": lower_fmod,
    "fmod.Scalar": lower_fmod,
    "pow.Tensor_Scalar": lower_pow,
    "pow.Tensor_Tensor": lower_pow,
    "pow.Scalar": lower_pow,
    "logical_xor.default": _logical("NOT_EQUAL"),
    "logical_not.default": lower_logical_not,
    "bitwise_and.Tensor": _bitwise("LOGICAL_AND"),
    "bitwise_and.Scalar": _bitwise("LOGICAL_AND"),
    "bitwise_or.Tensor": _bitwise("LOGICAL_OR"),
    "bitwise_or.Scalar": _bitwise("LOGICAL_OR"),
    "bitwise_xor.Tensor": _bitwise("NOT_EQUAL"),
    "bitwise_xor.Scalar": _bitwise("NOT_EQUAL"),
    "bitwise_not.default": lower_bitwise_not,
    "where.self": lower_where,
    "trunc.default": lower_trunc,
    "sign.default": lower_sign,
    "erf.default": _composite(erf),
    "reciprocal.default": _composite(_reciprocal),
    "log1p.default": _composite(_log1p),
    "expm1.default": _composite(_expm1),
    "log2.default": _composite(_log2),
    "log10.default": _composite(_log10),
    "tan.default": _composite(_tan),
    "atan.default": _composite(_atan),
    "asin.default": _composite(_asin),
    "acos.default": _composite(_acos),
    "sinh.default": _composite(_sinh),
    "cosh.default": _composite(_cosh),
    "asinh.default": _composite(_asinh),
    "acosh.default": _composite(_acosh),
    "atanh.default": _composite(_atanh),
    "atan2.default": lower_atan2,
    "isnan.default": _isnan,
    "isinf.default": _isinf,
    "clamp.default": lower_clamp,
    "clamp.Tensor": lower_clamp_tensor,
    "hardtanh.default": lower_hardtanh,
    "leaky_relu.default": lower_leaky_relu,
    "elu.default": lower_elu,
    "gelu.default": lower_gelu,
    "_prelu_kernel.default": lower_prelu,
    "silu.default": lower_silu,
    "hardsigmoid.default": lower_hardsigmoid,
    "hardswish.default": lower_hardswish,
    "softplus.default": lower_softplus,
}


def _rsub(ctx: Ctx, node: Node):
    dt = ctx.dtype(node.out)
    alpha = node.kwargs.get("alpha", 1)
    A, B = operand(ctx, node.args[0], dt), operand(ctx, node.args[1], dt)
    if alpha != 1:
        A = emit_binary(ctx, "MUL", A, ctx.scalar(alpha, dt))
    ctx.bind(node.out, emit_binary(ctx, "SUB", B, A))


RULES["rsub.Scalar"] = _rsub
RULES["rsub.Tensor"] = _rsub

# The plain unary math ops (relu, sigmoid, exp, ceil, ...): one per record of the runtime's
# src/kernels/reference/unary_ops.inc that names an ATen op.
for _op in unary_ops():
    if _op.aten is not None:
        assert f"{_op.aten}.default" not in RULES, f"{_op.aten}: a rule of its own and a record"
        RULES[f"{_op.aten}.default"] = _unary(_op.name)

# The plain binary ops (maximum, eq, lt, logical_and, ...): one per record of the runtime's
# src/kernels/reference/binary_ops.inc that names an ATen op: its .Tensor and .Scalar overloads
# when torch has a .Tensor one (eq, lt, ...), else its .default (maximum, logical_and, ...).
for _rule, _records in (
    (_plain_binary, arithmetic_ops()),
    (_compare, compare_ops(logical=False)),
    (_logical, compare_ops(logical=True)),
):
    for _op in _records:
        if _op.aten is None:
            continue
        _overloads = getattr(torch.ops.aten, _op.aten).overloads()
        for _overload in ("Tensor", "Scalar") if "Tensor" in _overloads else ("default",):
            assert _overload in _overloads, f"torch has no aten.{_op.aten}.{_overload}"
            _key = f"{_op.aten}.{_overload}"
            assert _key not in RULES, f"{_key}: a rule of its own and a record"
            RULES[_key] = _rule(_op.name)
