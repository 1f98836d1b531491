"""Quantized operators (int8, legacy uint8, int16 activations) against LiteRT's reference kernels.

Each case is a one-operator .tflite file with quantization parameters, built with the writer,
run on wick (default kernels and forced reference kernels) and on LiteRT with its reference
resolver (``BUILTIN_REF``), and compared BIT-EXACT: same dtype, shape and bytes. LiteRT's default
resolver (XNNPACK, optimized kernels) may differ by one step; its reference kernels are the
specification wick's quantized kernels follow (docs/format.md, "int8 quantization").

Operands: ``Q(value, scale, zp)`` is a quantized graph input, ``QC(...)`` a quantized constant
(weights, bias: per-channel when ``scale`` is a list, along ``axis``), a bare array a plain
constant (axes, shapes). Outputs are ``(dtype, scale, zero_point)``. Building, running LiteRT
(in the harness's child process) and comparing are the single-op harness's
(tests/python/ops/_harness.py).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import wick
from tests.python.ops import _harness as H
from tests.python.ops._harness import QC, Q, compare
from wick.tflite.writer import ModelWriter

RNG_SEED = 1234


# The single-op harness (tests/python/ops/_harness.py) with this file's argument order: outputs
# (dtype, scale, zero_point) come before the options, and comparisons are bit-exact.


def build(op, operands, outs, options=None, version=None):
    return H.build(op, operands, options, outs=outs, version=version)


def exact(got, ref, what):
    compare(got, ref, what, exact=True)


def litert(data, feeds, which="reference"):
    """LiteRT's outputs from one peer (in the harness's child process); a skip naming the reason
    when that peer cannot run the file."""
    return H.run_peers(data, feeds, (which,))[which]


def check(op, operands, outs, options=None, version=None):
    """wick (default and reference kernels) == LiteRT's reference kernels, bit for bit (its
    default interpreter may round one step differently)."""
    data, feeds = build(op, operands, outs, options, version)
    return H.check_file(data, feeds, peers=("reference",), exact=True)


def fails(op, operands, outs, match, options=None, status=None):
    return H.fails(op, operands, options, match=match, status=status, outs=outs)


def rnd(rng, shape, dtype, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def act(name):
    return dict(fused_activation_function=name)


ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]

# ------------------------------------------------------------------------------------- conv


def conv_case(
    rng,
    kind,
    dtype,
    in_shape,
    out_c,
    k,
    stride,
    padding,
    dilation,
    activation,
    per_channel=True,
    groups=1,
    bias_dtype="int32",
    out_scale=None,
):
    n, h, w, cin = in_shape
    depthwise = kind == "DEPTHWISE_CONV_2D"
    in_s, in_zp = 0.043, {"int8": -7, "uint8": 131, "int16": 0}[dtype]
    if depthwise:
        fshape, axis = (1, k, k, out_c), 3
    else:
        fshape, axis = (out_c, k, k, cin // groups), 0
    if dtype == "uint8":
        filt = QC(rnd(rng, fshape, np.uint8), 0.0071, 119)
        w_scales = [0.0071] * out_c
    else:
        filt_v = rnd(rng, fshape, np.int8, -127, 127)
        w_scales = list(rng.uniform(0.002, 0.02, out_c)) if per_channel else [0.011] * out_c
        filt = QC(filt_v, w_scales if per_channel else 0.011, 0, axis)
    bias_scales = [np.float32(in_s) * np.float32(s) for s in w_scales]
    bdt = np.int64 if bias_dtype == "int64" else np.int32
    bias = QC(
        rnd(rng, (out_c,), bdt, -3000, 3000),
        bias_scales if dtype != "uint8" else bias_scales[0],
        0,
        0,
    )
    x = Q(rnd(rng, in_shape, np.dtype(dtype)), in_s, in_zp)
    opts = dict(
        padding=padding,
        stride_w=stride,
        stride_h=stride,
        fused_activation_function=activation,
        dilation_w_factor=dilation,
        dilation_h_factor=dilation,
    )
    if depthwise:
        opts["depth_multiplier"] = out_c // cin
    elif dtype == "int16" and bias_dtype == "int32":
        opts["quantized_bias_type"] = "INT32"
    out_s = out_scale or {"int8": 0.09, "uint8": 0.12, "int16": 0.0009}[dtype]
    out_zp = {"int8": 3, "uint8": 117, "int16": 0}[dtype]
    return [x, filt, bias], (dtype, out_s, out_zp), opts


CONV_VARIANTS = [
    # dtype, in_shape, out_c, k, stride, padding, dilation, activation, per_channel, groups
    ("int8", (1, 9, 9, 8), 16, 3, 1, "SAME", 1, "NONE", True, 1),
    ("int8", (2, 10, 7, 6), 5, 3, 2, "VALID", 1, "RELU", True, 1),
    ("int8", (1, 8, 8, 4), 8, 1, 1, "VALID", 1, "RELU6", True, 1),
    ("int8", (1, 11, 9, 3), 4, 3, 2, "SAME", 2, "RELU_N1_TO_1", False, 1),
    ("int8", (1, 6, 6, 8), 4, 3, 1, "SAME", 1, "NONE", True, 2),
    ("uint8", (1, 9, 8, 5), 6, 3, 1, "SAME", 1, "RELU6", False, 1),
    ("uint8", (2, 7, 7, 3), 4, 2, 2, "VALID", 1, "NONE", False, 1),
    ("int16", (1, 7, 9, 8), 6, 3, 1, "SAME", 1, "NONE", True, 1),
    ("int16", (1, 8, 6, 4), 5, 3, 2, "VALID", 1, "RELU", True, 1),
]


@pytest.mark.parametrize(
    "variant", CONV_VARIANTS, ids=lambda v: f"{v[0]}-{v[5]}-s{v[4]}-d{v[6]}-{v[7]}-g{v[9]}"
)
def test_conv_2d(variant):
    dtype, shape, out_c, k, stride, pad, dil, activation, per_channel, groups = variant
    rng = np.random.default_rng(RNG_SEED)
    bias_dtype = "int64" if dtype == "int16" else "int32"
    ops, out, opts = conv_case(
        rng,
        "CONV_2D",
        dtype,
        shape,
        out_c,
        k,
        stride,
        pad,
        dil,
        activation,
        per_channel,
        groups,
        bias_dtype,
    )
    check("CONV_2D", ops, out, opts)


def test_conv_2d_16x8_int32_bias():
    rng = np.random.default_rng(RNG_SEED)
    ops, out, opts = conv_case(
        rng, "CONV_2D", "int16", (1, 6, 6, 4), 3, 3, 1, "SAME", 1, "NONE", bias_dtype="int32"
    )
    check("CONV_2D", ops, out, opts)


DW_VARIANTS = [
    ("int8", (1, 9, 9, 8), 8, 3, 1, "SAME", 1, "NONE"),
    ("int8", (2, 10, 7, 4), 8, 3, 2, "VALID", 1, "RELU6"),
    ("int8", (1, 9, 9, 3), 6, 5, 1, "SAME", 2, "RELU"),
    ("uint8", (1, 8, 8, 5), 5, 3, 2, "SAME", 1, "RELU_N1_TO_1"),
    ("int16", (1, 7, 7, 4), 4, 3, 1, "SAME", 1, "NONE"),
]


@pytest.mark.parametrize(
    "variant", DW_VARIANTS, ids=lambda v: f"{v[0]}-{v[5]}-s{v[4]}-m{v[2] // v[1][3]}-{v[7]}"
)
def test_depthwise_conv_2d(variant):
    dtype, shape, out_c, k, stride, pad, dil, activation = variant
    rng = np.random.default_rng(RNG_SEED)
    bias_dtype = "int64" if dtype == "int16" else "int32"
    ops, out, opts = conv_case(
        rng,
        "DEPTHWISE_CONV_2D",
        dtype,
        shape,
        out_c,
        k,
        stride,
        pad,
        dil,
        activation,
        dtype != "uint8",
        1,
        bias_dtype,
    )
    check("DEPTHWISE_CONV_2D", ops, out, opts)


# Shapes big enough for the optimized int8 kernels' tiles (src/kernels/q8.h: 7x32 GEMM tiles,
# 16-channel depthwise blocks, K not a multiple of 4) with a nonzero input zero point on padded
# borders. Each runs bit-exact against LiteRT's reference kernels and within one step of
# LiteRT's default (XNNPACK) kernels, which requantize in float.
OPT_INT8_CASES = [
    # kind, in_shape, out_c, k, stride, padding, dilation, activation
    ("CONV_2D", (1, 15, 13, 40), 70, 1, 1, "VALID", 1, "NONE"),
    ("CONV_2D", (1, 12, 13, 33), 40, 3, 2, "SAME", 1, "RELU6"),
    ("CONV_2D", (2, 9, 9, 3), 32, 3, 1, "SAME", 1, "RELU"),
    ("CONV_2D", (1, 10, 11, 17), 9, 5, 1, "SAME", 2, "NONE"),
    ("DEPTHWISE_CONV_2D", (1, 20, 19, 40), 40, 3, 1, "SAME", 1, "RELU6"),
    ("DEPTHWISE_CONV_2D", (1, 21, 20, 33), 33, 3, 2, "SAME", 1, "NONE"),
    ("DEPTHWISE_CONV_2D", (1, 14, 15, 24), 24, 5, 2, "SAME", 1, "RELU"),
    ("DEPTHWISE_CONV_2D", (1, 11, 12, 18), 18, 3, 1, "SAME", 2, "NONE"),
]


def within_one_step_of_litert(data, feeds, got, which):
    for g, r in zip(got, litert(data, feeds, which), strict=True):
        d = np.abs(g.astype(np.int64) - np.asarray(r).astype(np.int64))
        assert d.max() <= 1, f"{int((d > 1).sum())} values differ from LiteRT {which} by > 1"


def within_one_step_of_litert_default(data, feeds, got):
    within_one_step_of_litert(data, feeds, got, "default")


@pytest.mark.parametrize(
    "case", OPT_INT8_CASES, ids=lambda v: f"{v[0]}-{v[1][3]}to{v[2]}-k{v[3]}-s{v[4]}-d{v[6]}"
)
def test_optimized_int8_conv_shapes(case):
    kind, shape, out_c, k, stride, pad, dil, activation = case
    rng = np.random.default_rng(RNG_SEED)
    ops, out, opts = conv_case(
        rng, kind, "int8", shape, out_c, k, stride, pad, dil, activation, out_scale=0.5
    )
    data, feeds = build(kind, ops, out, opts)
    ref = litert(data, feeds)
    got = wick.load(data)(*feeds)
    exact(got, ref, "wick")
    assert len(np.unique(got[0])) > 10, "a saturated output would prove nothing"
    within_one_step_of_litert_default(data, feeds, got)


@pytest.mark.parametrize("shape,n", [((1, 1280), 1000), ((9, 130), 33), ((3, 7), 70)])
def test_optimized_int8_fully_connected(shape, n):
    rng = np.random.default_rng(RNG_SEED)
    k = shape[-1]
    ws = list(rng.uniform(0.003, 0.03, n))
    w = QC(rnd(rng, (n, k), np.int8, -127, 127), ws, 0)
    bsc = [float(np.float32(0.031) * np.float32(s)) for s in ws]
    b = QC(rnd(rng, (n,), np.int32, -4000, 4000), bsc)
    x = Q(rnd(rng, shape, np.int8), 0.031, -9)
    data, feeds = build("FULLY_CONNECTED", [x, w, b], ("int8", 0.02 * np.sqrt(k), 6), act("NONE"))
    ref = litert(data, feeds)
    got = wick.load(data)(*feeds)
    exact(got, ref, "wick")
    within_one_step_of_litert_default(data, feeds, got)


@pytest.mark.parametrize(
    "sa,sb", [((1, 9, 9, 40), (1, 9, 9, 40)), ((1, 5, 6, 33), (1, 1, 1, 33)), ((40,), (3, 40))]
)
def test_optimized_int8_mul(sa, sb):
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, sa, np.int8), 0.05, 4)
    b = Q(rnd(rng, sb, np.int8), 0.0039, -128)
    data, feeds = build("MUL", [a, b], ("int8", 0.02, -3), act("NONE"))
    ref = litert(data, feeds)
    got = wick.load(data)(*feeds)
    exact(got, ref, "wick")
    within_one_step_of_litert_default(data, feeds, got)


# x -> LOGISTIC -> MUL(x, sigmoid) (swish, as TensorFlow converts Keras' EfficientNets with full
# integer quantization) runs as one table of the MUL's answers in the LOGISTIC node (src/core/
# fuse.c): int8 and uint8, either MUL order, a fused activation, lengths around the vector steps;
# bit-exact with LiteRT's reference kernels at 1 and 2 threads, and the same graph with a second
# reader of the sigmoid (no fusion) gives the same bytes.
SWISH_CASES = [
    # dtype, shape, (x scale, x zp), (out scale, out zp), sigmoid first, activation
    ("int8", (1, 13, 11, 24), (0.05, -20), (0.03, -100), False, "NONE"),
    ("int8", (1, 7, 7, 33), (0.11, 5), (0.04, -128), True, "RELU6"),
    ("int8", (75,), (0.002, 127), (0.0015, 0), False, "NONE"),
    ("uint8", (2, 9, 9, 16), (0.06, 128), (0.03, 10), True, "NONE"),
    ("uint8", (31,), (0.2, 3), (0.25, 20), False, "RELU"),
]


def _swish_file(dtype, shape, qx, qo, sigmoid_first, activation, second_reader=False):
    mw = ModelWriter()
    sg = mw.add_subgraph()
    dt = np.dtype(dtype)
    x = sg.add_tensor("x", list(shape), dt, quant=H.quant(*qx))
    s = sg.add_tensor("s", list(shape), dt, quant=H.quant(1 / 256, -128 if dtype == "int8" else 0))
    y = sg.add_tensor("y", list(shape), dt, quant=H.quant(*qo))
    sg.add_operator("LOGISTIC", [x], [s])
    sg.add_operator("MUL", [s, x] if sigmoid_first else [x, s], [y], options=act(activation))
    outs = [y]
    if second_reader:  # the sigmoid read twice: nothing fuses
        s2 = sg.add_tensor("s2", list(shape), dt, quant=H.quant(*qo))
        sg.add_operator("MUL", [s, s], [s2], options=act("NONE"))
        outs.append(s2)
    sg.set_inputs([x])
    sg.set_outputs(outs)
    return mw.finish()


@pytest.mark.parametrize("case", SWISH_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[5]}-sf{int(c[4])}")
def test_int8_swish_runs_as_one_table(case):
    dtype, shape, qx, qo, sigmoid_first, activation = case
    rng = np.random.default_rng(RNG_SEED)
    xv = rnd(rng, shape, np.dtype(dtype))
    data = _swish_file(dtype, shape, qx, qo, sigmoid_first, activation)
    kernels = wick.load(data).signature(None).op_kernels()
    assert kernels == [("optimized", "q8 swish table"), ("fused", "")], kernels
    got = H.check_file(data, [xv], peers=("reference",), exact=True)
    assert len(np.unique(got[0])) > 5, "a saturated output would prove little"
    exact(wick.load(data, num_threads=2)(xv), got, "wick, 2 threads")
    unfused = _swish_file(dtype, shape, qx, qo, sigmoid_first, activation, second_reader=True)
    assert wick.load(unfused).signature(None).op_kernels()[1][1] != "", "the MUL must run"
    exact(wick.load(unfused)(xv)[:1], got, "wick, not fused")


@pytest.mark.parametrize("n", [1, 17, 75264])
def test_optimized_int8_add(n):
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, (n,), np.int8), 0.047, -3)
    b = Q(rnd(rng, (n,), np.int8), 0.021, 11)
    data, feeds = build("ADD", [a, b], ("int8", 0.06, -5), act("RELU"))
    ref = litert(data, feeds)
    got = wick.load(data)(*feeds)
    exact(got, ref, "wick")
    within_one_step_of_litert_default(data, feeds, got)


TCONV_VARIANTS = [
    # dtype, in_shape, out_hw, out_c, k, stride, padding, per_channel
    ("int8", (1, 4, 5, 3), (8, 10), 4, 3, 2, "SAME", True),
    ("int8", (2, 3, 3, 2), (7, 7), 3, 3, 2, "VALID", False),
    ("uint8", (1, 4, 4, 3), (8, 8), 2, 2, 2, "SAME", False),
    ("int16", (1, 1, 5, 6), (2, 10), 4, 3, 2, "SAME", True),
    # int8 on the phase form (stride x stride sub-convolutions): stride 1, the 4x4/2 of
    # upsampling decoders with rows wider than a tile, stride 3 with a 5x5 filter, and a
    # filter smaller than the stride (no tap reaches some pixels: the reference kernel)
    ("int8", (2, 5, 6, 8), (5, 6), 5, 3, 1, "SAME", True),
    ("int8", (1, 6, 13, 16), (12, 26), 24, 4, 2, "SAME", True),
    ("int8", (1, 4, 9, 3), (14, 29), 7, 5, 3, "VALID", False),
    ("int8", (1, 3, 4, 2), (9, 12), 3, 2, 3, "VALID", True),
]


@pytest.mark.parametrize(
    "variant", TCONV_VARIANTS, ids=lambda v: f"{v[0]}-{v[6]}-s{v[5]}-pc{int(v[7])}"
)
def test_transpose_conv(variant):
    dtype, shape, (oh, ow), out_c, k, stride, pad, per_channel = variant
    rng = np.random.default_rng(RNG_SEED)
    in_s, in_zp = 0.05, {"int8": 9, "uint8": 127, "int16": 0}[dtype]
    fshape = (out_c, k, k, shape[3])
    if dtype == "uint8":
        w, ws = QC(rnd(rng, fshape, np.uint8), 0.01, 131), [0.01] * out_c
    else:
        ws = list(rng.uniform(0.003, 0.03, out_c)) if per_channel else [0.012] * out_c
        w = QC(rnd(rng, fshape, np.int8, -127, 127), ws if per_channel else 0.012)
    bdt = np.int64 if dtype == "int16" else np.int32
    bsc = [float(np.float32(in_s) * np.float32(x)) for x in ws]
    b = QC(rnd(rng, (out_c,), bdt, -2000, 2000), bsc if per_channel else bsc[0])
    x = Q(rnd(rng, shape, np.dtype(dtype)), in_s, in_zp)
    out_shape = np.array([shape[0], oh, ow, out_c], np.int32)
    out = (
        dtype,
        {"int8": 0.08, "uint8": 0.1, "int16": 0.002}[dtype],
        {"int8": -6, "uint8": 120, "int16": 0}[dtype],
    )
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, fused_activation_function="NONE")
    check("TRANSPOSE_CONV", [out_shape, w, x, b], out, opts)


def test_transpose_conv_split_over_threads():
    """Large enough (~5.5 M multiply-adds) that its output rows split over the threads: every
    thread count gives the bytes of one thread, and LiteRT's reference result."""
    rng = np.random.default_rng(RNG_SEED)
    ws = list(rng.uniform(0.003, 0.03, 24))
    w = QC(rnd(rng, (24, 4, 4, 32), np.int8, -127, 127), ws)
    b = QC(
        rnd(rng, (24,), np.int32, -2000, 2000),
        [float(np.float32(0.05) * np.float32(s)) for s in ws],
    )
    x = Q(rnd(rng, (2, 14, 16, 32), np.int8), 0.05, 9)
    out_shape = np.array([2, 28, 32, 24], np.int32)
    opts = dict(padding="SAME", stride_w=2, stride_h=2, fused_activation_function="NONE")
    data, feeds = build("TRANSPOSE_CONV", [out_shape, w, x, b], ("int8", 0.08, -6), opts)
    one = wick.load(data, num_threads=1)(*feeds)
    for threads in (2, 3):
        assert wick.load(data, num_threads=threads)(*feeds)[0].tobytes() == one[0].tobytes()
    exact(one, litert(data, feeds), "wick")


# ---------------------------------------------------------------------------- fully connected

FC_VARIANTS = [
    # dtype, in_shape, n, per_channel, weights zp, bias, keep_num_dims, activation
    ("int8", (4, 32), 16, False, 0, True, False, "NONE"),
    ("int8", (3, 5, 24), 10, True, 0, True, True, "RELU"),
    ("int8", (6, 16), 7, False, 3, False, False, "RELU6"),
    ("int8", (2, 3, 8), 5, True, 0, False, False, "NONE"),
    ("uint8", (5, 20), 9, False, 121, True, False, "NONE"),
    ("uint8", (2, 12), 4, False, 128, True, False, "RELU"),
    ("int16", (4, 24), 8, True, 0, "int64", False, "NONE"),
    ("int16", (3, 16), 6, False, 0, False, False, "RELU6"),
    # 16x8 on the packed kernel (or the widened-weight rows): several 255-pair / 256-product
    # blocks, row and column tails (int64 bias; int32 bias with large sums disagrees with
    # LiteRT on the reference kernel too: an open bug, see issue 17)
    ("int16", (3, 600), 5, True, 0, "int64", False, "NONE"),
    ("int16", (9, 1100), 33, True, 0, "int64", False, "RELU"),
]


@pytest.mark.parametrize(
    "variant",
    FC_VARIANTS,
    ids=lambda v: f"{v[0]}-pc{int(v[3])}-zp{v[4]}-b{v[5]}-k{int(v[6])}-{v[7]}",
)
def test_fully_connected(variant):
    dtype, shape, n, per_channel, wzp, bias, keep, activation = variant
    rng = np.random.default_rng(RNG_SEED)
    k = shape[-1]
    in_s, in_zp = 0.031, {"int8": 5, "uint8": 140, "int16": 0}[dtype]
    if dtype == "uint8":
        w = QC(rnd(rng, (n, k), np.uint8), 0.0093, wzp)
        ws = [0.0093] * n
    else:
        ws = list(rng.uniform(0.003, 0.03, n)) if per_channel else [0.013] * n
        w = QC(
            rnd(rng, (n, k), np.int8, -127, 127),
            ws if per_channel else 0.013,
            wzp if not per_channel else 0,
        )
    b = None
    if bias:
        bdt = np.int64 if bias == "int64" else np.int32
        bsc = [float(np.float32(in_s) * np.float32(s)) for s in ws]
        b = QC(rnd(rng, (n,), bdt, -4000, 4000), bsc if per_channel else bsc[0])
    x = Q(rnd(rng, shape, np.dtype(dtype)), in_s, in_zp)
    out = (
        dtype,
        {"int8": 0.17, "uint8": 0.21, "int16": 0.0011}[dtype],
        {"int8": -4, "uint8": 120, "int16": 0}[dtype],
    )
    opts = dict(fused_activation_function=activation, keep_num_dims=keep)
    check("FULLY_CONNECTED", [x, w, b], out, opts)


BMM_VARIANTS = [
    # lhs dtype, rhs dtype, lhs shape, rhs shape, adj_x, adj_y, rhs constant
    ("int8", "int8", (2, 3, 8), (2, 8, 5), False, False, False),
    ("int8", "int8", (3, 1, 4, 6), (2, 5, 6), False, True, True),
    ("int8", "int8", (2, 7, 3), (7, 4), True, False, True),
    # large enough for the int8 GEMM microkernels (attention's QK^T shape; adj_x, broadcast rhs)
    ("int8", "int8", (2, 16, 24), (2, 20, 24), False, True, False),
    ("int8", "int8", (3, 24, 9), (24, 17), True, False, True),
    ("int16", "int8", (4, 16), (16, 8), False, False, True),
    ("int16", "int8", (2, 3, 9), (2, 5, 9), False, True, False),
    ("int16", "int16", (2, 6, 4), (4, 3), False, False, False),
]


@pytest.mark.parametrize(
    "variant", BMM_VARIANTS, ids=lambda v: f"{v[0]}x{v[1]}-ax{int(v[4])}-ay{int(v[5])}-c{int(v[6])}"
)
def test_batch_matmul(variant):
    lt, rt, ls, rs, adj_x, adj_y, const = variant
    rng = np.random.default_rng(RNG_SEED)
    int16 = lt == "int16"
    a = Q(rnd(rng, ls, np.dtype(lt)), 0.0004 if int16 else 0.05, 0 if int16 else -9)
    bv = rnd(rng, rs, np.dtype(rt), -127 if rt == "int8" else None)
    b = (QC if const else Q)(bv, 0.01 if rt == "int8" else 0.0003, 0 if int16 else 4)
    out = (lt, 0.002 if int16 else 0.3, 0 if int16 else 11)
    check("BATCH_MATMUL", [a, b], out, dict(adj_x=adj_x, adj_y=adj_y))


@pytest.mark.parametrize(
    "ls,rs,zps",
    [
        ((48, 32, 32), (48, 32, 32), (-10, -1, 43)),  # MiniLM's QK^T (K transposed before)
        ((48, 32, 32), (48, 32, 32), (-128, 5, 36)),  # ... and P V (softmax output zp -128)
        ((2, 3, 9, 33), (2, 3, 33, 40), (3, 0, -7)),  # odd k, a panel remainder, rhs zp 0
        ((5, 17, 16), (16, 48), (0, 127, 0)),  # a broadcast rhs, rhs - zp down to -255
    ],
    ids=str,
)
def test_batch_matmul_attention_shapes(ls, rs, zps):
    """int8 BATCH_MATMUL at attention shapes, whose rhs (an activation) is packed per batch from
    whole rows: on the GEMM kernel, one and two threads, bit for bit with LiteRT's reference."""
    rng = np.random.default_rng(RNG_SEED + 3)
    a = Q(rnd(rng, ls, np.int8), 0.119, zps[0])
    b = Q(rnd(rng, rs, np.int8), 0.0745, zps[1])
    data, feeds = build("BATCH_MATMUL", [a, b], ("int8", 3.05, zps[2]), dict(adj_y=False))
    kind, name = wick.load(data).signature(None).op_kernels()[0]
    assert (kind, name) == ("optimized", "q8 gemm"), (kind, name)
    ref = litert(data, feeds)
    for threads in (1, 2):
        exact(wick.load(data, num_threads=threads)(*feeds), ref, f"wick, {threads} threads")


@pytest.mark.parametrize("lt, adj_x", [("int8", False), ("int16", True)])
def test_batch_matmul_split_over_threads(lt, adj_x):
    """Large enough (~1.6 M multiply-adds, broadcast batches) that its output rows split over
    the threads, with tasks that start inside a batch: every thread count gives the bytes of
    one thread, and LiteRT's reference result."""
    rng = np.random.default_rng(RNG_SEED)
    int16 = lt == "int16"
    ls = (3, 1, 40, 33) if adj_x else (3, 1, 33, 40)
    a = Q(rnd(rng, ls, np.dtype(lt)), 0.0004 if int16 else 0.05, 0 if int16 else -9)
    b = Q(rnd(rng, (2, 40, 200), np.int8, -127), 0.01, 0 if int16 else 4)
    out = (lt, 0.002 if int16 else 0.3, 0 if int16 else 11)
    data, feeds = build("BATCH_MATMUL", [a, b], out, dict(adj_x=adj_x, adj_y=False))
    one = wick.load(data, num_threads=1)(*feeds)
    for threads in (2, 3):
        assert wick.load(data, num_threads=threads)(*feeds)[0].tobytes() == one[0].tobytes()
    exact(one, litert(data, feeds), "wick")


def test_batch_matmul_per_channel_rhs_is_refused():
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, (4, 8), np.int16), 0.0004, 0)
    b = QC(rnd(rng, (8, 3), np.int8), [0.01, 0.02, 0.03], 0, axis=1)
    fails(
        "BATCH_MATMUL",
        [a, b],
        ("int16", 0.002, 0),
        r"per-channel quantized rhs \(3 scales\)",
        dict(adj_x=False, adj_y=False),
        UNSUPPORTED,
    )


# ------------------------------------------------------------------------- add / sub / mul

BINARY_VARIANTS = [
    # op, dtype, shape_a, shape_b, scales (a, b, out), zps, activation, pot_scale_int16
    ("ADD", "int8", (2, 3, 4), (2, 3, 4), (0.05, 0.02, 0.06), (3, -10, -2), "NONE", True),
    ("ADD", "int8", (2, 1, 4, 5), (3, 1, 5), (0.011, 0.04, 0.05), (-128, 7, 0), "RELU", True),
    ("ADD", "int8", (4, 6), (1,), (0.1, 0.1, 0.2), (0, 0, -128), "RELU6", True),
    ("ADD", "uint8", (3, 7), (3, 7), (0.03, 0.05, 0.07), (128, 100, 90), "NONE", True),
    ("ADD", "uint8", (2, 3, 4), (4,), (0.2, 0.01, 0.15), (0, 255, 10), "RELU_N1_TO_1", True),
    ("ADD", "int16", (4, 5), (4, 5), (0.00013, 0.00021, 0.0003), (0, 0, 0), "NONE", False),
    ("ADD", "int16", (2, 3, 4), (3, 1), (0.001, 0.0007, 0.002), (0, 0, 0), "RELU", True),
    ("ADD", "int16", (3, 8), (3, 8), (2.0**-12, 2.0**-10, 2.0**-10), (0, 0, 0), "NONE", True),
    ("SUB", "int8", (2, 3, 4), (3, 4), (0.05, 0.03, 0.08), (1, -3, 5), "NONE", True),
    ("SUB", "uint8", (5, 6), (5, 1), (0.02, 0.02, 0.04), (130, 120, 128), "RELU", True),
    ("SUB", "int16", (6, 4), (6, 4), (0.0005, 0.0004, 0.0009), (0, 0, 0), "NONE", False),
    ("SUB", "int16", (4, 8), (8,), (2.0**-13, 2.0**-11, 2.0**-11), (0, 0, 0), "NONE", True),
    ("MUL", "int8", (2, 3, 4), (2, 3, 4), (0.05, 0.04, 0.01), (2, -5, 1), "NONE", True),
    ("MUL", "int8", (2, 1, 5), (3, 1), (0.1, 0.2, 0.5), (0, 0, -20), "RELU6", True),
    ("MUL", "uint8", (4, 5), (5,), (0.03, 0.06, 0.02), (128, 117, 100), "NONE", True),
    ("MUL", "int16", (3, 4, 5), (4, 5), (0.0003, 0.0002, 0.00001), (0, 0, 0), "NONE", True),
    ("MUL", "int8", (8,), (8,), (0.5, 0.5, 0.01), (0, 0, 0), "NONE", True),  # multiplier > 1
]


@pytest.mark.parametrize(
    "variant",
    BINARY_VARIANTS,
    ids=lambda v: f"{v[0]}-{v[1]}-{'x'.join(map(str, v[2]))}-{'x'.join(map(str, v[3]))}-{v[6]}",
)
def test_binary(variant):
    op, dtype, sa, sb, scales, zps, activation, pot = variant
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, sa, np.dtype(dtype)), scales[0], zps[0])
    b = Q(rnd(rng, sb, np.dtype(dtype)), scales[1], zps[1])
    opts = act(activation)
    if op in ("ADD", "SUB"):
        opts["pot_scale_int16"] = pot
    check(op, [a, b], (dtype, scales[2], zps[2]), opts)


@pytest.mark.parametrize(
    "op,sa,sb",
    [
        ("MUL", (1, 128, 128, 3), (3,)),  # Keras Rescaling / Normalization on an image
        ("SUB", (1, 128, 128, 3), (1, 1, 1, 3)),
        ("ADD", (1, 40, 40, 3), (1,)),  # a scalar
        ("SUB", (3,), (1, 90, 90, 3)),  # the row is input 0
        ("MUL", (2, 33, 700), (700,)),  # a row longer than the tile
        ("ADD", (1, 61, 61, 17), (17,)),  # rows straddle every 64-element chunk
    ],
)
def test_int8_broadcast_row_on_the_kernels(op, sa, sb):
    # int8 ADD / SUB / MUL of a tensor by a row of its last dimension or a scalar run the q8
    # kernels against a tiled row (split over threads at any phase of the row): bit-exact with
    # LiteRT's reference kernels at 1 and 2 threads (they ran the reference loop, ~10 ns/element).
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, sa, np.int8), 0.03, -5)
    b = QC(rnd(rng, sb, np.int8), 0.02, 7)
    data, feeds = build(op, [a, b], ("int8", 0.05, 3), act("NONE"))
    ref = litert(data, feeds)
    for threads in (1, 2):
        exact(wick.load(data, num_threads=threads)(*feeds), ref, f"wick, {threads} threads")


# MUL on the kernels in both 8-bit types, every broadcast form they take: equal shapes, a row of
# the last dimension (squeeze-excite's [1, H, W, C] x [1, 1, 1, C]) or a scalar on either side,
# the planned broadcasts ([N, HW, C] x [N, 1, C]); zero points at the ends of the type. Bit-exact
# with LiteRT's reference kernels at 1 and 2 threads.
MUL8_SHAPES = [
    # shape a, shape b, wick's path
    ((1, 9, 9, 40), (1, 9, 9, 40), ""),
    ((1, 12, 12, 33), (1, 1, 1, 33), " broadcast row"),
    ((1, 1, 1, 48), (1, 7, 7, 48), " broadcast row"),  # the row is input 0
    ((3, 37), (1,), " broadcast row"),  # a scalar
    ((2, 5, 3, 40), (2, 1, 3, 40), " broadcast runs"),
]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize(
    "case", MUL8_SHAPES, ids=lambda c: f"{'x'.join(map(str, c[0]))}-{'x'.join(map(str, c[1]))}"
)
def test_mul_8bit_kernels(case, dtype):
    sa, sb, path = case
    rng = np.random.default_rng(RNG_SEED + MUL8_SHAPES.index(case))
    dt = np.dtype(dtype)
    zps = (-128, 0, -3) if dtype == "int8" else (0, 128, 131)
    a = Q(rnd(rng, sa, dt), 0.05, zps[0])
    vb = rnd(rng, sb, dt)
    if vb.size == 1:  # a positive scalar, so that RELU6 does not clamp the whole output
        vb = np.full(sb, zps[1] + 40, dt)
    b = Q(vb, 0.04, zps[1])
    data, feeds = build("MUL", [a, b], (dtype, 0.3, zps[2]), act("RELU6"))
    kind, name = wick.load(data).signature(None).op_kernels()[0]
    assert (kind, name) == ("optimized", ("q8" if dtype == "int8" else "u8") + path), (kind, name)
    got = H.check_file(data, feeds, peers=("reference",), exact=True)
    assert len(np.unique(got[0])) > 5, "a saturated output would prove little"
    exact(wick.load(data, num_threads=2)(*feeds), got, "wick, 2 threads")


# ADD / SUB of int8 and uint8 on the add8 kernels (src/kernels/q8.h): each input's rescale in
# 32-bit arithmetic, exact for the 256 values an input holds only while the input's shift is
# down to about -11 (left shift 20: its scale at most ~2^11 times finer than the other's), which
# wick checks value by value at prepare; past that, int8 keeps the kernels that rescale in 64
# bits and uint8 the reference. Every broadcast form: equal shapes, a row of the last dimension
# or a scalar (known or run-time, on either side), the planned broadcasts (per-row scalars as
# layer norm's, [N, HW, C] op [N, 1, C]), and the forms that stay on the reference (more than
# three loops, inner runs under 16 elements). Bit-exact with LiteRT's reference kernels at 1 and
# 2 threads; within one step of its builtin kernels (optimized, no XNNPACK) and its default
# interpreter (XNNPACK), which round some sums one step differently from LiteRT's own reference
# (int8 and uint8 ADD, and SUB with an input 2^22 finer than the other).
ADD8_SHAPES = [
    # shape a, shape b, constant operand b?, wick's path
    ((3, 37, 41), (3, 37, 41), False, "add8"),
    ((2, 33, 50), (50,), True, "add8 broadcast row"),
    ((2, 33, 50), (50,), False, "add8 broadcast row"),
    ((700,), (3, 700), False, "add8 broadcast row"),  # the row is input 0, longer than the tile
    ((4, 37), (1,), True, "add8 broadcast row"),  # a scalar
    ((4, 37), (), False, "add8 broadcast row"),
    ((4, 32, 384), (4, 32, 1), False, "add8 broadcast runs"),  # layer norm's x - mean
    ((4, 32, 1), (4, 32, 384), False, "add8 broadcast runs"),  # the scalar is input 0
    ((4, 32, 384), (1, 32, 384), True, "add8 broadcast runs"),  # position embeddings
    ((2, 5, 3, 40), (2, 1, 3, 40), False, "add8 broadcast runs"),
    ((2, 3, 4, 5, 6), (2, 1, 4, 1, 6), False, None),  # four loops: the reference
    ((6, 5, 3), (6, 1, 3), False, None),  # inner runs of 3: the reference
]
ADD8_SCALES = {
    "add8": ((0.05, 0.021, 0.06), (0.0031, 0.04, 0.05)),  # both shift ranges of the form
    "wide": ((0.5, 0.5 / 5e6, 0.7), (0.5 / 5e6, 0.5, 0.6)),  # 2^22 apart: no 32-bit form
}


def _add8_case(op, dtype, sa, sb, const_b, scales, zps, activation, seed):
    rng = np.random.default_rng(seed)
    a = Q(rnd(rng, sa, np.dtype(dtype)), scales[0], zps[0])
    mk = QC if const_b else Q
    vb = rnd(rng, sb, np.dtype(dtype))
    if vb.size == 1:  # a scalar near zero, so that no activation clamps the whole output
        vb = np.full(sb, zps[1] + 1, np.dtype(dtype))
    b = mk(vb, scales[1], zps[1])
    return build(op, [a, b], (dtype, scales[2], zps[2]), act(activation))


@pytest.mark.parametrize("scales", ["add8", "wide"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize(
    "case", ADD8_SHAPES, ids=lambda c: f"{'x'.join(map(str, c[0]))}-{'x'.join(map(str, c[1]))}"
)
def test_add_sub_8bit_kernels(case, op, dtype, scales):
    sa, sb, const_b, path = case
    i = ADD8_SHAPES.index(case)
    acts = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
    activation = acts[i % len(acts)]
    zps = (-7, 20, 3) if dtype == "int8" else (121, 140, 125)
    for k, sc in enumerate(ADD8_SCALES[scales]):
        data, feeds = _add8_case(
            op, dtype, sa, sb, const_b, sc, zps, activation, RNG_SEED + 2 * i + k
        )
        kind, name = wick.load(data).signature(None).op_kernels()[0]
        if path is not None and scales == "add8":
            want = ("u8 " if dtype == "uint8" else "q8 ") + path
            assert (kind, name) == ("optimized", want), (kind, name)
        else:
            assert "add8" not in name, (kind, name)
            if dtype == "uint8":
                assert kind == "reference", (kind, name)
        got = H.check_file(data, feeds, peers=("reference",), exact=True)
        for which in ("builtin", "default"):
            within_one_step_of_litert(data, feeds, got, which)
        # (RELU_N1_TO_1 keeps two or three values; with "wide" scales the finer input hardly
        # moves the output)
        if activation != "RELU_N1_TO_1" and scales != "wide":
            assert len(np.unique(got[0])) > 5, "a saturated output would prove little"
        exact(wick.load(data, num_threads=2)(*feeds), got, "wick, 2 threads")


def test_binary_constant_operand():
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, (2, 6), np.int8), 0.02, -3)
    b = QC(rnd(rng, (6,), np.int8), 0.07, 9)
    check("ADD", [a, b], ("int8", 0.05, 1), act("NONE"))


# ------------------------------------------------------------------------------------ pools

POOL_VARIANTS = [
    ("AVERAGE_POOL_2D", "int8", (1, 9, 9, 4), 3, 2, "SAME", "NONE"),
    ("AVERAGE_POOL_2D", "int8", (2, 8, 7, 3), 2, 2, "VALID", "RELU"),
    ("AVERAGE_POOL_2D", "uint8", (1, 7, 7, 5), 3, 1, "SAME", "RELU6"),
    ("AVERAGE_POOL_2D", "int16", (1, 6, 6, 2), 3, 2, "SAME", "NONE"),
    ("MAX_POOL_2D", "int8", (1, 9, 9, 4), 3, 2, "SAME", "NONE"),
    ("MAX_POOL_2D", "uint8", (2, 8, 6, 3), 2, 2, "VALID", "RELU"),
    ("MAX_POOL_2D", "int16", (1, 7, 5, 2), 3, 1, "SAME", "RELU6"),
]


@pytest.mark.parametrize(
    "variant", POOL_VARIANTS, ids=lambda v: f"{v[0]}-{v[1]}-k{v[3]}s{v[4]}-{v[5]}-{v[6]}"
)
def test_pool(variant):
    op, dtype, shape, k, stride, pad, activation = variant
    rng = np.random.default_rng(RNG_SEED)
    s, zp = {"int8": (0.05, -20), "uint8": (0.04, 128), "int16": (0.001, 0)}[dtype]
    x = Q(rnd(rng, shape, np.dtype(dtype)), s, zp)
    opts = dict(
        padding=pad,
        stride_w=stride,
        stride_h=stride,
        filter_width=k,
        filter_height=k,
        fused_activation_function=activation,
    )
    check(op, [x], (dtype, s, zp), opts)


# ----------------------------------------------------------------------------- activations

SOFTMAX_VARIANTS = [
    ("int8", "int8", (3, 10), 0.1, 1.0),
    ("int8", "int8", (2, 4, 33), 0.5, 0.7),
    ("int8", "int8", (4, 7), 0.003, 1.0),
    ("int8", "int16", (3, 12), 0.2, 1.0),
    ("uint8", "uint8", (5, 9), 0.08, 1.0),
    ("uint8", "int16", (2, 6), 0.3, 2.0),
    ("int16", "int16", (3, 20), 0.0005, 1.0),
    ("int16", "int16", (2, 3, 7), 0.002, 0.5),
]


@pytest.mark.parametrize("variant", SOFTMAX_VARIANTS, ids=lambda v: f"{v[0]}-{v[1]}-{v[3]}-b{v[4]}")
def test_softmax(variant):
    it, ot, shape, scale, beta = variant
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, shape, np.dtype(it)), scale, {"int8": 3, "uint8": 128, "int16": 0}[it])
    out = {
        "int8": ("int8", 1 / 256, -128),
        "uint8": ("uint8", 1 / 256, 0),
        "int16": ("int16", 1 / 65536, -32768),
    }[ot]
    if it == "int16":
        out = ("int16", 1 / 32768, 0)
    check("SOFTMAX", [x], out, dict(beta=beta))


@pytest.mark.parametrize(
    "shape", [(4, 12, 32, 32), (3, 13, 20), (2, 9, 256), (1, 5, 300), (2, 3, 7)], ids=str
)
@pytest.mark.parametrize("it,ot", [("int8", "int8"), ("int8", "int16"), ("uint8", "uint8")])
def test_softmax_attention_rows(shape, it, ot):
    """8-bit SOFTMAX over attention-score rows (MiniLM's [4, 12, 32, 32] at its scale): the table
    kernel's blocks of 8 short rows, a block remainder, row tails, the longest short row (256)
    and one longer. On the optimized kernel, bit for bit with LiteRT's reference kernels; with
    its default interpreter too for 8-bit outputs (16-bit ones: its float exp table rounds a few
    values one step away)."""
    rng = np.random.default_rng(RNG_SEED)
    zp = {"int8": 43, "uint8": 171}[it]
    v = rnd(rng, shape, np.dtype(it))
    v.reshape(-1, shape[-1])[::5] = zp  # rows of one value (every exp is 1)
    x = Q(v, 0.54, zp)
    data, feeds = build("SOFTMAX", [x], SOFTMAX_OUTPUTS[ot], dict(beta=1.0))
    kind, name = wick.load(data).signature(None).op_kernels()[0]
    assert (kind, name) == ("optimized", "exp table rows"), (kind, name)
    got = H.check_file(data, feeds, peers=("reference",), exact=True)
    default = np.asarray(litert(data, feeds, "default")[0], np.int64)
    steps = np.abs(got[0].astype(np.int64) - default).max()
    assert steps <= (1 if ot == "int16" else 0), steps


LUT_VARIANTS = [
    ("LOGISTIC", "int8", 0.06, -4, (1 / 256, -128)),
    ("LOGISTIC", "int8", 0.001, 100, (1 / 256, -128)),
    ("LOGISTIC", "uint8", 0.1, 128, (1 / 256, 0)),
    ("TANH", "int8", 0.03, 0, (1 / 128, 0)),
    ("TANH", "int8", 0.2, -50, (0.009, 5)),
    ("TANH", "uint8", 0.05, 120, (1 / 128, 128)),
    ("HARD_SWISH", "int8", 0.05, -3, (0.03, -60)),
    ("HARD_SWISH", "int8", 0.2, 0, (0.1, -20)),
    ("HARD_SWISH", "uint8", 0.04, 128, (0.025, 30)),
    ("RELU", "int8", 0.05, -3, (0.04, -128)),
    ("RELU", "uint8", 0.02, 100, (0.03, 0)),
    ("RELU", "int16", 0.001, 0, (0.0005, 0)),
    ("RELU6", "int8", 0.1, 10, (6 / 255, -128)),
    ("RELU6", "int16", 0.0004, 0, (0.0003, 0)),
    ("RELU_N1_TO_1", "int8", 0.02, 0, (1 / 127, 0)),
    ("RELU_0_TO_1", "uint8", 0.01, 20, (1 / 255, 0)),
]


@pytest.mark.parametrize("variant", LUT_VARIANTS, ids=lambda v: f"{v[0]}-{v[1]}-{v[2]}-{v[3]}")
def test_elementwise_activation(variant):
    op, dtype, s, zp, (os_, ozp) = variant
    x = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)  # every value
    if dtype == "int16":
        x = x[::37]
    check(op, [Q(x.reshape(1, -1), s, zp)], (dtype, os_, ozp))


# int16 scales: the power-of-two special cases (2^-12 for both, 2^-11 for TANH), scales whose
# rescale needs a shift of 1 to 24, and one whose multiplier alone exceeds 2^15 (shift 0).
SIGMOID16_SCALES = [2**-12, 2**-11, 0.0005, 1 / 3000, 2e-5, 1e-7, 0.03, 1.0, 3.0]


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("scale", SIGMOID16_SCALES)
def test_int16_logistic_tanh_every_value(op, scale):
    """Every int16 input, bit-exact with LiteRT's reference kernels (its default kernels take
    another fixed-point path for power-of-two scales and differ from its own reference there)."""
    x = np.arange(-32768, 32768).astype(np.int16)
    check(op, [Q(x.reshape(1, -1), scale, 0)], ("int16", 1 / 32768, 0))


def test_int16_logistic_tanh_refusals():
    x = Q(np.zeros((1, 4), np.int16), 0.001, 0)
    fails("LOGISTIC", [x], ("int16", 1 / 16384, 0), "output scale 1/32768")
    fails("TANH", [x], ("int16", 0.0001, 0), "output scale 1/32768")
    for scale in (50.0, 1e-15):
        q = Q(np.zeros((1, 4), np.int16), scale, 0)
        fails("TANH", [q], ("int16", 1 / 32768, 0), "out of range")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
@pytest.mark.parametrize("alpha", [0.2, 1.7, -0.3])
def test_leaky_relu(dtype, alpha):
    x = np.arange(
        np.iinfo(dtype).min, np.iinfo(dtype).max + 1, 1 if dtype != "int16" else 37
    ).astype(dtype)
    zp_in, zp_out = {"int8": (-5, 10), "uint8": (120, 100), "int16": (0, 0)}[dtype]
    s_in = 0.0005 if dtype == "int16" else 0.05
    check(
        "LEAKY_RELU",
        [Q(x.reshape(1, -1), s_in, zp_in)],
        (dtype, s_in * 1.3, zp_out),
        dict(alpha=alpha),
    )


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(dtype, approximate):
    x = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype)
    zp_in, zp_out = (3, -100) if dtype == "int8" else (128, 28)
    check(
        "GELU",
        [Q(x.reshape(1, -1), 0.03, zp_in)],
        (dtype, 0.02, zp_out),
        dict(approximate=approximate),
    )


@pytest.mark.parametrize("zp_in,s_in,s_out,zp_out", [(-128, 0.02, 0.05, -128), (-7, 0.3, 0.004, 3)])
def test_rsqrt_int8(zp_in, s_in, s_out, zp_out):
    """Every int8 value at or above the zero point (RSQRT is defined for x >= 0 only): LiteRT's
    fixed-point inverse square root, zero mapped to 127."""
    x = np.arange(zp_in, 128).astype(np.int8)
    check("RSQRT", [Q(x.reshape(1, -1), s_in, zp_in)], ("int8", s_out, zp_out))


@pytest.mark.parametrize("s_in,s_out", [(0.004, 3e-5), (1.5, 0.0001), (2e-6, 0.02)])
def test_rsqrt_int16(s_in, s_out):
    """Every int16 value >= 0 (zero points 0): LiteRT's interpolated 513-entry table of
    1/sqrt built in float (zero maps to 32767 * s_out), outputs saturating at 32767."""
    x = np.arange(0, 32768).astype(np.int16)
    check("RSQRT", [Q(x.reshape(1, -1), s_in, 0)], ("int16", s_out, 0))


def test_rsqrt_int16_negative_input_fails_at_invoke():
    fails(
        "RSQRT",
        [Q(np.asarray([[3, -9, 4]], np.int16), 0.1, 0)],
        ("int16", 0.05, 0),
        "only defined for positive values",
    )


def test_rsqrt_int8_negative_input_fails_at_invoke():
    fails(
        "RSQRT",
        [Q(np.asarray([[3, -9, 4]], np.int8), 0.1, -5)],
        ("int8", 0.05, 0),
        "only defined for positive values",
    )


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("activation", ["NONE", "RELU"])
@pytest.mark.parametrize("asymmetric", [False, True])
def test_fully_connected_hybrid(per_channel, bias, activation, asymmetric):
    """float32 input, int8 symmetric weights (TFLite's dynamic-range form): the input rows are
    quantized at run time, symmetric or asymmetric (asymmetric_quantize_inputs, what
    TensorFlow's converter writes: Keras EfficientNetV2's dynamic-range file was refused).
    Against LiteRT's reference kernels within float rounding of the final rescale (the int32
    sums are identical; LiteRT's optimized portable loop may sum the float products in another
    order)."""
    rng = np.random.default_rng(RNG_SEED)
    m, k, n = 3, 37, 6
    x = rng.standard_normal((m, k)).astype(np.float32)
    x[1] = 0.0  # a zero row: scale 1, output = bias
    x[2] += 0.7  # an off-centre row: a nonzero asymmetric zero point
    ws = list(rng.uniform(0.003, 0.03, n)) if per_channel else 0.013
    w = QC(rnd(rng, (n, k), np.int8, -127, 127), ws, 0)
    b = rng.standard_normal(n).astype(np.float32) if bias else None
    data = _float_fc(x, w, b, activation, asymmetric)
    ref = litert(data, [x])[0]
    for reference in (False, True):
        got = wick.load(data, reference=reference)(x)[0]
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("asymmetric", [False, True])
@pytest.mark.parametrize(
    "lhs_shape,rhs_shape,adj_x,adj_y",
    [
        ((2, 5, 37), (37, 9), False, False),  # 2-D rhs broadcast over the lhs batch
        ((2, 37, 5), (2, 9, 37), True, True),  # both transposed, batched rhs
        ((1, 3, 4, 70), (3, 1, 70, 20), False, False),  # broadcast both ways
        ((8, 2000), (2000, 16), False, False),  # the float offset correction
        ((4, 32, 384), (384, 384), False, False),  # MiniLM's attention projection (GEMM form)
        ((3, 7, 40), (24, 40), False, True),  # an [N, K] rhs on the GEMM form
    ],
)
def test_batch_matmul_hybrid(per_channel, asymmetric, lhs_shape, rhs_shape, adj_x, adj_y):
    """float32 lhs, int8 symmetric constant rhs (one scale or one per output column): each lhs
    row quantized at run time, symmetric or with asymmetric_quantize_inputs (LiteRT's
    EvalHybrid). Against LiteRT's reference kernels, bit-exact."""
    rng = np.random.default_rng(RNG_SEED)
    x = (rng.standard_normal(lhs_shape) + 0.3).astype(np.float32)
    x.reshape(-1, lhs_shape[-1])[0] = 0.0  # a zero row (scale 1, zero output)
    x.reshape(-1, lhs_shape[-1])[-1] = np.abs(x.reshape(-1, lhs_shape[-1])[-1])  # all positive
    long_k = lhs_shape[-1] == 2000
    if long_k:  # int32 sums past 2^24 (inexact in float), an offset that is no power of 2
        x = rng.uniform(0.8, 1.0, lhs_shape).astype(np.float32)
        x[..., 7] = -0.3
    n_axis = len(rhs_shape) - (2 if adj_y else 1)
    n = rhs_shape[n_axis]
    scales = list(rng.uniform(0.003, 0.03, n)) if per_channel else 0.013
    w = QC(rnd(rng, rhs_shape, np.int8, 90 if long_k else -127, 127), scales, 0, axis=n_axis)
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(x.shape), np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    sg.add_operator(
        "BATCH_MATMUL",
        [xin, sg.add_constant("w", w.value, quant=w.quant)],
        [out],
        options=dict(adj_x=adj_x, adj_y=adj_y, asymmetric_quantize_inputs=asymmetric),
    )
    sg.set_inputs([xin])
    sg.set_outputs([out])
    data = mw.finish()
    ref = litert(data, [x])[0]
    np.testing.assert_array_equal(wick.load(data, reference=True)(x)[0], ref)
    for threads in (1, 3):
        got = wick.load(data, num_threads=threads)(x)[0]
        assert got.shape == ref.shape
        np.testing.assert_array_equal(got, ref)


def test_batch_matmul_hybrid_rejects_misplaced_scales():
    """Per-channel scales must run along the rhs's output (N) dimension."""
    w = QC(np.ones((4, 3), np.int8), [0.1] * 4, 0, axis=0)
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", [2, 4], np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    sg.add_operator("BATCH_MATMUL", [xin, sg.add_constant("w", w.value, quant=w.quant)], [out])
    sg.set_inputs([xin])
    sg.set_outputs([out])
    with pytest.raises(wick.WickError, match="scales on dimension 0"):
        wick.load(mw.finish())


def _float_fc(x, w, b, activation, asymmetric=False):
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(x.shape), np.float32)
    wt = sg.add_constant("w", w.value, quant=w.quant)
    bt = sg.add_constant("b", b) if b is not None else -1
    out = sg.add_tensor("y", [1], np.float32)
    options = dict(act(activation), asymmetric_quantize_inputs=asymmetric)
    sg.add_operator("FULLY_CONNECTED", [xin, wt, bt], [out], options=options)
    sg.set_inputs([xin])
    sg.set_outputs([out])
    return mw.finish()


@pytest.mark.parametrize("depthwise", [False, True])
@pytest.mark.parametrize(
    "padding,stride,dilation", [("SAME", 1, 1), ("VALID", 2, 1), ("SAME", 1, 2)]
)
def test_conv_hybrid(depthwise, padding, stride, dilation):
    """float32 input, int8 per-channel filter: each image quantized at run time (asymmetric,
    LiteRT's EvalHybridPerChannel); against LiteRT's reference kernels within float rounding."""
    rng = np.random.default_rng(RNG_SEED)
    cin, cout = 3, 6
    x = (rng.standard_normal((2, 7, 8, cin)) + 0.3).astype(np.float32)
    x[1] = np.abs(x[1])  # an all-positive image: offset -128
    fshape = (1, 3, 3, cout) if depthwise else (cout, 3, 3, cin)
    w = QC(
        rnd(rng, fshape, np.int8, -127, 127),
        list(rng.uniform(0.003, 0.03, cout)),
        0,
        axis=3 if depthwise else 0,
    )
    b = rng.standard_normal(cout).astype(np.float32)
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(x.shape), np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    opts = dict(
        padding=padding,
        stride_w=stride,
        stride_h=stride,
        dilation_w_factor=dilation,
        dilation_h_factor=dilation,
        fused_activation_function="RELU6",
    )
    if depthwise:
        opts["depth_multiplier"] = 2
    sg.add_operator(
        "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D",
        [xin, sg.add_constant("w", w.value, quant=w.quant), sg.add_constant("b", b)],
        [out],
        options=opts,
    )
    sg.set_inputs([xin])
    sg.set_outputs([out])
    data = mw.finish()
    ref = litert(data, [x])[0]
    for reference in (False, True):
        got = wick.load(data, reference=reference)(x)[0]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("depthwise", [False, True])
@pytest.mark.parametrize(
    "padding,stride,dilation", [("SAME", 1, 1), ("VALID", 2, 1), ("SAME", 2, 2)]
)
def test_conv_hybrid_blocked_matches_the_reference_kernel(depthwise, padding, stride, dilation):
    """The optimized hybrid CONV_2D (im2col blocks of 16 pixels, int32 dot kernels, the image's
    zero point in padding taps and taken out with the filter row sums) and DEPTHWISE_CONV_2D
    (channels innermost, rows over the threads) give the reference kernel's bytes at 1 and 3
    threads, on ResNet / MobileNet-like layers (k = 3*3*37: kernel tails)."""
    rng = np.random.default_rng(RNG_SEED)
    cin, cout = 37, 37 if depthwise else 70
    x = (rng.standard_normal((2, 19, 23, cin)) * 2 + 0.5).astype(np.float32)
    fshape = (1, 3, 3, cout) if depthwise else (cout, 3, 3, cin)
    w = QC(
        rnd(rng, fshape, np.int8, -127, 127),
        list(rng.uniform(0.003, 0.03, cout)),
        axis=3 if depthwise else 0,
    )
    b = rng.standard_normal(cout).astype(np.float32)
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(x.shape), np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    opts = dict(
        padding=padding,
        stride_w=stride,
        stride_h=stride,
        dilation_w_factor=dilation,
        dilation_h_factor=dilation,
        fused_activation_function="RELU",
    )
    wt = sg.add_constant("w", w.value, quant=w.quant)
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    if depthwise:
        opts["depth_multiplier"] = 1
    sg.add_operator(op, [xin, wt, sg.add_constant("b", b)], [out], options=opts)
    sg.set_inputs([xin])
    sg.set_outputs([out])
    data = mw.finish()
    want = wick.load(data, reference=True)(x)[0]
    for threads in (1, 3):
        got = wick.load(data, num_threads=threads)(x)[0]
        assert got.tobytes() == want.tobytes(), f"{threads} threads"
    ref = litert(data, [x])[0]
    np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize(
    "op,kernel,stride,padding",
    [
        ("CONV_2D", 1, 1, "SAME"),  # pointwise: quantized straight into the GEMM's rows
        ("CONV_2D", 1, 2, "VALID"),
        ("CONV_2D", 3, 1, "SAME"),
        ("DEPTHWISE_CONV_2D", 3, 1, "SAME"),
    ],
)
@pytest.mark.parametrize("positive", [False, True])
def test_conv_hybrid_large_images_split_the_quantization(op, kernel, stride, padding, positive):
    """Images of 100k+ floats (DenseNet-sized): the image's range and its quantization run in
    parts over the threads (src/ops/hybrid.c, wick_hybrid_quantize_image) and a 1x1 stride-1
    convolution quantizes straight into the GEMM's rows; the same bytes as the reference kernel
    at 1, 2 and 3 threads, an all-positive image (zero point -128) included."""
    rng = np.random.default_rng(RNG_SEED)
    cin = 67
    cout = cin if op == "DEPTHWISE_CONV_2D" else 40
    x = (rng.standard_normal((2, 41, 39, cin)) * 3 - 0.5).astype(np.float32)
    if positive:
        x = np.abs(x)
    x[1, 7, 5, 3] = 40.0  # the second image's range from one pixel
    fshape = (1, kernel, kernel, cout) if op == "DEPTHWISE_CONV_2D" else (cout, kernel, kernel, cin)
    w = QC(
        rnd(rng, fshape, np.int8, -127, 127),
        list(rng.uniform(0.003, 0.03, cout)),
        axis=3 if op == "DEPTHWISE_CONV_2D" else 0,
    )
    b = rng.standard_normal(cout).astype(np.float32)
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(x.shape), np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    opts = dict(padding=padding, stride_w=stride, stride_h=stride, fused_activation_function="NONE")
    if op == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = 1
    wt = sg.add_constant("w", w.value, quant=w.quant)
    sg.add_operator(op, [xin, wt, sg.add_constant("b", b)], [out], options=opts)
    sg.set_inputs([xin])
    sg.set_outputs([out])
    data = mw.finish()
    want = wick.load(data, reference=True)(x)[0]
    for threads in (1, 2, 3):
        got = wick.load(data, num_threads=threads)(x)[0]
        assert got.tobytes() == want.tobytes(), f"{threads} threads"
    ref = litert(data, [x])[0]
    np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize(
    "shape,kernel,stride,padding",
    [
        ((1, 6, 3, 5), 5, 1, "SAME"),  # narrower than the kernel: taps off both sides
        ((1, 7, 2, 4), 5, 2, "SAME"),
        ((2, 9, 11, 3), 3, 3, "SAME"),
        ((1, 8, 9, 6), 4, 1, "VALID"),
        ((1, 5, 12, 7), 7, 2, "SAME"),
    ],
)
def test_conv_hybrid_patch_rows_at_the_edges(shape, kernel, stride, padding):
    """The GEMM form's patches copy each kernel row's inside taps at once and fill the taps
    off either side with the image's zero point: the reference kernel's bytes."""
    rng = np.random.default_rng(RNG_SEED)
    cin, cout = shape[-1], 5
    x = (rng.standard_normal(shape) * 2 + 0.7).astype(np.float32)
    w = QC(
        rnd(rng, (cout, kernel, kernel, cin), np.int8, -127, 127),
        list(rng.uniform(0.003, 0.03, cout)),
        axis=0,
    )
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(shape), np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    opts = dict(padding=padding, stride_w=stride, stride_h=stride, fused_activation_function="NONE")
    wt = sg.add_constant("w", w.value, quant=w.quant)
    b = sg.add_constant("b", rng.standard_normal(cout).astype(np.float32))
    sg.add_operator("CONV_2D", [xin, wt, b], [out], options=opts)
    sg.set_inputs([xin])
    sg.set_outputs([out])
    data = mw.finish()
    want = wick.load(data, reference=True)(x)[0]
    got = wick.load(data)(x)[0]
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(
    "cin,cout,kernel,padding",
    [
        (24, 24, 7, "SAME"),  # Keras ConvNeXt's 7x7 depthwise, written as a grouped CONV_2D
        (8, 6, 3, "VALID"),  # 2 groups of 4 input channels, 3 outputs each
    ],
)
def test_conv_hybrid_grouped(cin, cout, kernel, padding):
    """Grouped hybrid CONV_2D (TF's dynamic-range Keras ConvNeXt): one channel per group runs
    the depthwise rows on the transposed filter, others the reference kernel; the same bytes
    at 1 and 2 threads as wick's reference kernel, and LiteRT's answer within float rounding."""
    rng = np.random.default_rng(RNG_SEED)
    groups = 2 if cin != cout else cin
    x = (rng.standard_normal((2, 11, 9, cin)) * 2 + 0.5).astype(np.float32)
    w = QC(
        rnd(rng, (cout, kernel, kernel, cin // groups), np.int8, -127, 127),
        list(rng.uniform(0.003, 0.03, cout)),
        axis=0,
    )
    b = rng.standard_normal(cout).astype(np.float32)
    mw = ModelWriter()
    sg = mw.add_subgraph()
    xin = sg.add_tensor("x", list(x.shape), np.float32)
    out = sg.add_tensor("y", [1], np.float32)
    opts = dict(padding=padding, stride_w=1, stride_h=1, fused_activation_function="NONE")
    wt = sg.add_constant("w", w.value, quant=w.quant)
    sg.add_operator("CONV_2D", [xin, wt, sg.add_constant("b", b)], [out], options=opts)
    sg.set_inputs([xin])
    sg.set_outputs([out])
    data = mw.finish()
    want = wick.load(data, reference=True)(x)[0]
    for threads in (1, 2):
        got = wick.load(data, num_threads=threads)(x)[0]
        assert got.tobytes() == want.tobytes(), f"{threads} threads"
    for reference in (True, False):
        ref = litert(data, [x], "reference" if reference else "default")[0]
        np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize(
    "dtype,alpha_shape", [("int8", (3,)), ("int8", (1, 1, 3)), ("uint8", (2, 1, 3))]
)
def test_prelu(dtype, alpha_shape):
    rng = np.random.default_rng(RNG_SEED)
    zp = -4 if dtype == "int8" else 130
    x = Q(rnd(rng, (2, 4, 3), np.dtype(dtype)), 0.05, zp)
    a = QC(rnd(rng, alpha_shape, np.dtype(dtype)), 0.01, 0 if dtype == "int8" else 120)
    check("PRELU", [x, a], (dtype, 0.04, zp), None)


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_maximum_minimum(op, dtype):
    rng = np.random.default_rng(RNG_SEED)
    s, zp = (0.001, 0) if dtype == "int16" else (0.05, 7)
    a = Q(rnd(rng, (2, 3, 4), np.dtype(dtype)), s, zp)
    b = Q(rnd(rng, (3, 1), np.dtype(dtype)), s, zp)
    check(op, [a, b], (dtype, s, zp), None)


@pytest.mark.parametrize(
    "sa,sb,scales,zps",
    [
        # TF's layer norm in Keras ConvNeXt int8: (x - mean(x))^2 with the mean a column
        ((1, 14, 14, 96), (1, 14, 14, 1), (0.05, 0.02, 0.04), (-3, 5, -128)),
        ((2, 3, 4), (2, 3, 4), (0.02, 0.05, 0.003), (10, -7, -120)),
        ((3, 1, 5), (4, 1), (0.1, 0.1, 0.5), (0, 0, -128)),
        # a channel row on either side, a scalar (the kernels' tiled-row path)
        ((1, 6, 6, 40), (1, 1, 1, 40), (0.03, 0.03, 0.01), (4, -9, -128)),
        ((1, 1, 24), (3, 5, 24), (0.02, 0.06, 0.02), (0, 3, -100)),
        ((1, 7, 9, 33), (1,), (0.04, 0.01, 0.02), (-20, 12, -128)),
    ],
)
def test_squared_difference_int8(sa, sb, scales, zps):
    # int8 SQUARED_DIFFERENCE (LiteRT's version 2): bit-exact with its reference kernel.
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, sa, np.int8), scales[0], zps[0])
    b = Q(rnd(rng, sb, np.int8), scales[1], zps[1])
    check("SQUARED_DIFFERENCE", [a, b], ("int8", scales[2], zps[2]), None, version=2)


def test_squared_difference_int8_multiplier_above_one_is_refused():
    # (2 max(s1, s2))^2 / (2^14 s_out) >= 1: LiteRT aborts the process; wick refuses.
    a = Q(np.zeros((2, 3), np.int8), 1.0, 0)
    fails(
        "SQUARED_DIFFERENCE",
        [a, Q(np.zeros((2, 3), np.int8), 1.0, 0)],
        ("int8", 1e-5, 0),
        r"the output: requantization multiplier .* is too large",
        None,
        UNSUPPORTED,
    )


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
def test_reduce_max_min(op):
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, (2, 5, 3), np.int8), 0.05, 2)
    check(op, [x, np.array([1, -1], np.int32)], ("int8", 0.05, 2), dict(keep_dims=True))


def test_maximum_with_requantizing_output_is_refused():
    a = Q(np.zeros((2, 3), np.int8), 0.05, 0)
    fails(
        "MAXIMUM",
        [a, Q(np.zeros((2, 3), np.int8), 0.05, 0)],
        ("int8", 0.1, 0),
        r"quantized differently from the output are not supported",
        None,
        UNSUPPORTED,
    )


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8"])
@pytest.mark.parametrize(
    "size,align,half",
    [((8, 10), False, False), ((7, 5), False, True), ((9, 9), True, False), ((2, 3), False, True)],
    ids=["up", "half-pixel", "align-corners", "down"],
)
def test_resize_bilinear(dtype, size, align, half):
    rng = np.random.default_rng(RNG_SEED)
    s, zp = {"int8": (0.05, -3), "int16": (0.001, 0), "uint8": (0.04, 128)}[dtype]
    x = Q(rnd(rng, (2, 4, 5, 3), np.dtype(dtype)), s, zp)
    check(
        "RESIZE_BILINEAR",
        [x, np.array(size, np.int32)],
        (dtype, s, zp),
        dict(align_corners=align, half_pixel_centers=half),
    )


# ---------------------------------------------------------------------------- reductions

MEAN_VARIANTS = [
    ("MEAN", "int8", (1, 7, 7, 16), [1, 2], True, (0.05, -10), (0.02, 3)),
    # Large enough that the blocked sum splits over threads (two images, 20 column runs each).
    ("MEAN", "int8", (2, 7, 7, 1280), [1, 2], True, (0.05, -10), (0.02, 3)),
    ("MEAN", "int8", (2, 5, 6), [-1], False, (0.1, 0), (0.1, 0)),
    ("MEAN", "int8", (3, 4, 5), [0, 2], False, (0.03, 20), (0.05, -7)),
    ("MEAN", "uint8", (2, 6, 6, 3), [1, 2], True, (0.04, 128), (0.01, 100)),
    ("MEAN", "int16", (2, 9, 4), [1], False, (0.001, 0), (0.0005, 0)),
    ("MEAN", "int8", (2, 3, 4), [1, 1, -2], True, (0.05, 1), (0.05, 1)),
    ("MEAN", "int8", (2, 7, 6, 40), [1, 2], False, (0.07, -128), (0.01, 9)),
    # The column-sum kernels (8-bit, the reduced axes followed by others): more than 256 rows
    # (the 16-bit partial sums flushed), columns in steps of 32, 16 and single ones.
    ("MEAN", "int8", (1, 40, 40, 144), [1, 2], True, (0.05, -10), (0.02, 3)),
    ("MEAN", "uint8", (1, 17, 17, 53), [1, 2], True, (0.04, 128), (0.01, 100)),
    ("MEAN", "uint8", (2, 300, 48), [1], False, (0.03, 0), (0.02, 250)),
    ("MEAN", "int8", (3, 20, 7), [1], True, (0.05, 127), (0.05, -128)),
    ("SUM", "uint8", (4, 5), [0], True, (0.02, 120), (0.08, 60)),
    ("SUM", "uint8", (2, 3, 4), [1, 2], False, (0.01, 130), (0.05, 125)),
]


@pytest.mark.parametrize(
    "variant",
    MEAN_VARIANTS,
    ids=lambda v: f"{v[0]}-{v[1]}-ax{'_'.join(map(str, v[3]))}-k{int(v[4])}",
)
def test_reduce(variant):
    op, dtype, shape, axes, keep, (s, zp), (os_, ozp) = variant
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, shape, np.dtype(dtype)), s, zp)
    check(op, [x, np.array(axes, np.int32)], (dtype, os_, ozp), dict(keep_dims=keep))


def test_sum_int8_matches_the_uint8_reference_shifted():
    """LiteRT's reference SUM reads int8 data as uint8 (a bug), so int8 SUM is checked through
    uint8: shifting values and zero points by 128 leaves (q - zp) unchanged, so the int8 result
    is the uint8 reference result minus 128."""
    rng = np.random.default_rng(RNG_SEED)
    x8 = rnd(rng, (3, 4, 5), np.int8)
    axes = np.array([1], np.int32)
    data, feeds = build("SUM", [Q(x8, 0.01, 2), axes], ("int8", 0.05, -3), dict(keep_dims=False))
    got = wick.load(data)(*feeds)[0]
    xu = (x8.astype(np.int16) + 128).astype(np.uint8)
    ref = check("SUM", [Q(xu, 0.01, 130), axes], ("uint8", 0.05, 125), dict(keep_dims=False))[0]
    np.testing.assert_array_equal(got.astype(np.int16), ref.astype(np.int16) - 128)


# ------------------------------------------------------------------- requantize / concat / shape


REQUANT_VARIANTS = [
    ("int8", "int8", (0.05, 3), (0.02, -5)),
    ("int8", "uint8", (0.05, -128), (0.05, 0)),
    ("uint8", "int8", (0.03, 128), (0.07, -1)),
    ("int8", "int16", (0.05, 3), (0.0004, 0)),
    ("int16", "int8", (0.0005, 0), (0.03, 4)),
    ("int16", "int16", (0.0005, 0), (0.0003, 0)),
    ("int16", "int32", (1 / 65536, -32768), (1 / 32768, 0)),
]


@pytest.mark.parametrize("variant", REQUANT_VARIANTS, ids=lambda v: f"{v[0]}-{v[1]}")
def test_quantize_requantizes_integers(variant):
    it, ot, (s, zp), (os_, ozp) = variant
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, (3, 17), np.dtype(it)), s, zp)
    check("QUANTIZE", [x], (ot, os_, ozp))


def test_concatenation_uint8_requantizes_inputs():
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, (2, 3, 4), np.uint8), 0.05, 128)
    b = Q(rnd(rng, (2, 2, 4), np.uint8), 0.02, 100)
    c = Q(rnd(rng, (2, 1, 4), np.uint8), 0.1, 0)
    check("CONCATENATION", [a, b, c], ("uint8", 0.1, 120), dict(axis=1))


def test_concatenation_int8_same_parameters_copies():
    rng = np.random.default_rng(RNG_SEED)
    a = Q(rnd(rng, (2, 3), np.int8), 0.05, 1)
    b = Q(rnd(rng, (2, 5), np.int8), 0.05, 1)
    check("CONCATENATION", [a, b], ("int8", 0.05, 1), dict(axis=-1))


def test_concatenation_int8_requantizes_like_uint8():
    """LiteRT refuses int8 inputs quantized differently from the output; wick requantizes them
    with the formula LiteRT uses for uint8 (float32 arithmetic), clamped to int8."""
    rng = np.random.default_rng(RNG_SEED)
    av, bv = rnd(rng, (2, 3), np.int8), rnd(rng, (2, 4), np.int8)
    data, feeds = build(
        "CONCATENATION", [Q(av, 0.05, 3), Q(bv, 0.2, -9)], ("int8", 0.1, -1), dict(axis=1)
    )
    got = wick.load(data)(*feeds)[0]

    def rescale(q, s, zp):
        scale = np.float32(s) * (np.float32(1) / np.float32(0.1))
        bias = np.float32(-zp) * scale
        f = q.astype(np.float32) * scale + bias
        v = (np.sign(f) * np.floor(np.abs(f) + np.float32(0.5))).astype(np.int32) - 1  # roundf
        return np.clip(v, -128, 127).astype(np.int8)

    want = np.concatenate([rescale(av, 0.05, 3), rescale(bv, 0.2, -9)], axis=1)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["RESHAPE", "SQUEEZE"])
def test_shape_ops_pass_quantized_values_through(op):
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, (1, 4, 1, 6), np.int8), 0.05, -3)
    if op == "RESHAPE":
        check(op, [x, np.array([4, 6], np.int32)], ("int8", 0.05, -3))
    else:
        check(op, [x], ("int8", 0.05, -3), dict(squeeze_dims=[0, 2]))


# ------------------------------------------------------------------------------- malformed

MALFORMED = "malformed model"
UNSUPPORTED = "unsupported operator"


def test_missing_output_quantization_is_refused():
    rng = np.random.default_rng(RNG_SEED)
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 4], "int8", quant=dict(scale=0.1, zero_point=0))
    k = sg.add_constant("w", rnd(rng, (3, 4), np.int8), quant=dict(scale=0.1, zero_point=0))
    y = sg.add_tensor("y", [2, 3], "int8")
    sg.add_operator("FULLY_CONNECTED", [x, k, -1], [y], options=act("NONE"))
    sg.set_inputs([x])
    sg.set_outputs([y])
    with pytest.raises(wick.WickError, match=r"output \(int8\) has no quantization parameters"):
        wick.load(w.finish())(np.zeros((2, 4), np.int8))


def test_zero_scale_is_refused():
    x = Q(np.zeros((2, 3), np.int8), 0.0, 0)
    fails(
        "ADD",
        [x, Q(np.zeros((2, 3), np.int8), 0.1, 0)],
        ("int8", 0.1, 0),
        r"input 0: scale 0 must be positive",
        act("NONE"),
        MALFORMED,
    )


def test_zero_point_outside_type_is_refused():
    x = Q(np.zeros((2, 3), np.uint8), 0.1, 300)
    fails(
        "MUL",
        [x, Q(np.zeros((2, 3), np.uint8), 0.1, 0)],
        ("uint8", 0.1, 0),
        r"zero point 300 is outside the uint8 range",
        act("NONE"),
        MALFORMED,
    )


def test_int16_nonzero_zero_point_is_refused():
    rng = np.random.default_rng(RNG_SEED)
    ops, out, opts = conv_case(
        rng, "CONV_2D", "int16", (1, 5, 5, 2), 2, 3, 1, "SAME", 1, "NONE", bias_dtype="int64"
    )
    ops[0].quant["zero_point"] = 5
    fails("CONV_2D", ops, out, r"int16 activations must have zero points 0", opts, UNSUPPORTED)


def test_per_channel_count_mismatch_is_refused():
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, (1, 4, 4, 2), np.int8), 0.1, 0)
    # 3 scales along dimension 3 (size 3) of a filter with 4 output channels
    filt = QC(rnd(rng, (4, 3, 3, 3), np.int8), [0.1, 0.1, 0.1], 0, axis=3)
    x = Q(rnd(rng, (1, 4, 4, 3), np.int8), 0.1, 0)
    bias = QC(np.zeros(4, np.int32), 0.01)
    fails(
        "CONV_2D",
        [x, filt, bias],
        ("int8", 0.1, 0),
        r"3 per-channel scales for 4 output channels",
        dict(
            padding="SAME",
            stride_w=1,
            stride_h=1,
            fused_activation_function="NONE",
            dilation_w_factor=1,
            dilation_h_factor=1,
        ),
        MALFORMED,
    )


def test_asymmetric_int8_weights_are_refused():
    rng = np.random.default_rng(RNG_SEED)
    ops, out, opts = conv_case(
        rng, "CONV_2D", "int8", (1, 5, 5, 2), 2, 3, 1, "SAME", 1, "NONE", per_channel=False
    )
    ops[1].quant["zero_point"] = 4
    fails("CONV_2D", ops, out, r"int8 weights must be symmetric", opts, UNSUPPORTED)


def test_bias_length_mismatch_is_refused():
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, (2, 4), np.int8), 0.1, 0)
    w = QC(rnd(rng, (3, 4), np.int8), 0.1)
    b = QC(np.zeros(5, np.int32), 0.01)
    fails(
        "FULLY_CONNECTED",
        [x, w, b],
        ("int8", 0.1, 0),
        r"bias has 5 elements for 3 outputs",
        act("NONE"),
        MALFORMED,
    )


def test_softmax_output_parameters_are_checked():
    x = Q(np.zeros((2, 4), np.int8), 0.1, 0)
    fails(
        "SOFTMAX",
        [x],
        ("int8", 0.1, -128),
        r"int8 output scale must be 1/256",
        dict(beta=1.0),
        MALFORMED,
    )


def test_huge_requantization_multiplier_is_refused():
    x = Q(np.zeros((2, 3), np.int8), 1e30, 0)
    fails(
        "MUL",
        [x, Q(np.zeros((2, 3), np.int8), 1e30, 0)],
        ("int8", 1e-30, 0),
        r"requantization multiplier .* (too large|not finite)",
        act("NONE"),
    )


def test_unsupported_pair_is_refused_with_types_named():
    x = Q(np.zeros((2, 3), np.int8), 0.1, 0)
    fails(
        "QUANTIZE",
        [x],
        ("int32", 0.1, 0),
        r"requantizing int8 to int32 is not supported",
        status=UNSUPPORTED,
    )


# ------------------------------------------------------------------------------------- SVDF


def svdf_model(
    integer, batch=2, input_size=6, filters=8, memory=4, rank=2, bias=True, activation="NONE"
):
    rng = np.random.default_rng(RNG_SEED)
    units = filters // rank
    w = ModelWriter()
    sg = w.add_subgraph()
    if integer:
        x = sg.add_tensor("x", [batch, input_size], "int8", quant=dict(scale=0.05, zero_point=-3))
        wf = sg.add_constant(
            "wf",
            rnd(rng, (filters, input_size), np.int8, -127, 127),
            quant=dict(scale=0.01, zero_point=0),
        )
        wt = sg.add_constant(
            "wt",
            rnd(rng, (filters, memory), np.int16, -20000, 20000),
            quant=dict(scale=0.0003, zero_point=0),
        )
        b = (
            sg.add_constant(
                "b", rnd(rng, (units,), np.int32, -5000, 5000), quant=dict(scale=1e-6, zero_point=0)
            )
            if bias
            else -1
        )
        st = sg.add_tensor(
            "state",
            [batch, filters * memory],
            "int16",
            quant=dict(scale=0.002, zero_point=0),
            is_variable=True,
        )
        y = sg.add_tensor("y", [batch, units], "int8", quant=dict(scale=0.03, zero_point=5))
    else:
        x = sg.add_tensor("x", [batch, input_size], "float32")
        wf = sg.add_constant("wf", rng.standard_normal((filters, input_size)).astype(np.float32))
        wt = sg.add_constant("wt", rng.standard_normal((filters, memory)).astype(np.float32))
        b = sg.add_constant("b", rng.standard_normal(units).astype(np.float32)) if bias else -1
        st = sg.add_tensor("state", [batch, filters * memory], "float32", is_variable=True)
        y = sg.add_tensor("y", [batch, units], "float32")
    sg.add_operator(
        "SVDF",
        [x, wf, wt, b, st],
        [y],
        options=dict(rank=rank, fused_activation_function=activation),
        version=3 if integer else 1,
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


@pytest.mark.parametrize(
    "integer,rank,bias,activation",
    [
        (True, 2, True, "RELU"),
        (True, 1, False, "RELU"),
        (False, 2, True, "NONE"),
        (False, 1, False, "RELU"),
    ],
    ids=["int8-r2-bias", "int8-r1", "float32-r2-bias", "float32-r1-relu"],
)
def test_svdf_state_over_several_invokes(integer, rank, bias, activation):
    """The state carries over between invokes: compare every step with one LiteRT interpreter.
    (LiteRT's integer SVDF requires RELU and does not apply it; wick matches.)"""
    from tests.python.oracles.litert import make_interpreter

    data = svdf_model(integer, rank=rank, bias=bias, activation=activation)
    rng = np.random.default_rng(7)
    lite = make_interpreter(data, reference=True)
    lite.allocate_tensors()
    i_in, i_out = lite.get_input_details()[0]["index"], lite.get_output_details()[0]["index"]
    runner = wick.load(data)
    for step in range(5):
        x = rnd(rng, (2, 6), np.int8) if integer else rng.standard_normal((2, 6)).astype(np.float32)
        lite.set_tensor(i_in, x)
        lite.invoke()
        ref = lite.get_tensor(i_out)
        got = runner(x)[0]
        if integer:
            exact([got], [ref], f"step {step}")
        else:
            np.testing.assert_allclose(
                got, ref, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(ref).max()))
            )


def test_svdf_rank_must_divide_filters():
    data = svdf_model(True, filters=8, rank=3)
    with pytest.raises(wick.WickError, match=r"rank 3 must be positive and divide the 8 filters"):
        wick.load(data)(np.zeros((2, 6), np.int8))


# ----------------------------------------------------------------------- integer LSTM


def lstm_model(
    batch=2,
    time=3,
    n_in=5,
    n_cell=4,
    time_major=False,
    cifg=False,
    cell_clip=0.0,
    in_zp=-7,
    state_zp=-3,
    cell_scale=2.0**-11,
    seed=RNG_SEED,
):
    """A UNIDIRECTIONAL_SEQUENCE_LSTM in LiteRT's 8x8_16 integer scheme."""
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    sg = w.add_subgraph()
    shape = [time, batch, n_in] if time_major else [batch, time, n_in]
    in_s, state_s = 0.05, 0.008
    x = sg.add_tensor("x", shape, "int8", quant=dict(scale=in_s, zero_point=in_zp))
    ins = [x]
    for g in range(4):  # input-to-gate weights i f c o
        if g == 0 and cifg:
            ins.append(-1)
            continue
        ins.append(
            sg.add_constant(
                f"w{g}",
                rnd(rng, (n_cell, n_in), np.int8, -127, 127),
                quant=dict(scale=float(rng.uniform(0.002, 0.01)), zero_point=0),
            )
        )
    for g in range(4):  # recurrent weights
        if g == 0 and cifg:
            ins.append(-1)
            continue
        ins.append(
            sg.add_constant(
                f"r{g}",
                rnd(rng, (n_cell, n_cell), np.int8, -127, 127),
                quant=dict(scale=float(rng.uniform(0.002, 0.01)), zero_point=0),
            )
        )
    ins += [-1, -1, -1]  # no peephole
    for g in range(4):
        if g == 0 and cifg:
            ins.append(-1)
            continue
        ins.append(
            sg.add_constant(
                f"b{g}",
                rnd(rng, (n_cell,), np.int32, -3000, 3000),
                quant=dict(scale=1e-5, zero_point=0),
            )
        )
    ins += [-1, -1]  # no projection
    hs = sg.add_tensor(
        "h",
        [batch, n_cell],
        "int8",
        quant=dict(scale=state_s, zero_point=state_zp),
        is_variable=True,
    )
    cs = sg.add_tensor(
        "c", [batch, n_cell], "int16", quant=dict(scale=cell_scale, zero_point=0), is_variable=True
    )
    ins += [hs, cs, -1, -1, -1, -1]
    inter = [sg.add_tensor(f"i{k}", [0], "float32") for k in range(4)]
    inter.append(
        sg.add_tensor("hidden", [0], "int8", quant=dict(scale=state_s, zero_point=state_zp))
    )
    y = sg.add_tensor(
        "y", shape[:-1] + [n_cell], "int8", quant=dict(scale=state_s, zero_point=state_zp)
    )
    sg.add_operator(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        ins,
        [y],
        intermediates=inter,
        version=1,
        options=dict(
            fused_activation_function="TANH",
            cell_clip=cell_clip,
            proj_clip=0.0,
            time_major=time_major,
            asymmetric_quantize_inputs=False,
        ),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish(), shape


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(time_major=True),
        dict(cifg=True),
        dict(cell_clip=3.0, cell_scale=2.0**-12),
        dict(batch=1, time=6, in_zp=0, state_zp=0, cell_scale=2.0**-10),
        dict(n_in=9, n_cell=7, state_zp=5),
    ],
    ids=["batch-major", "time-major", "cifg", "clip", "zp0", "sizes"],
)
def test_lstm_integer_over_several_invokes(kw):
    """Outputs of every invoke (the states carry over) against one LiteRT interpreter."""
    from tests.python.oracles.litert import make_interpreter

    data, shape = lstm_model(**kw)
    rng = np.random.default_rng(3)
    lite = make_interpreter(data, reference=True)
    lite.allocate_tensors()
    i_in, i_out = lite.get_input_details()[0]["index"], lite.get_output_details()[0]["index"]
    runner = wick.load(data)
    for step in range(3):
        x = rnd(rng, shape, np.int8)
        lite.set_tensor(i_in, x)
        lite.invoke()
        exact([runner(x)[0]], [lite.get_tensor(i_out)], f"step {step}")


def test_lstm_cell_scale_must_be_a_power_of_two():
    data, shape = lstm_model(cell_scale=0.0003)
    with pytest.raises(wick.WickError, match=r"cell state's scale .* must be a power of two"):
        wick.load(data)(np.zeros(shape, np.int8))


def lstm_float_model(
    batch=2,
    time=3,
    n_in=5,
    n_cell=4,
    time_major=False,
    cifg=False,
    cell_clip=0.0,
    activation="TANH",
):
    rng = np.random.default_rng(RNG_SEED)
    w = ModelWriter()
    sg = w.add_subgraph()
    shape = [time, batch, n_in] if time_major else [batch, time, n_in]
    f32 = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)  # noqa: E731
    x = sg.add_tensor("x", shape, "float32")
    ins = [x]
    ins += [
        -1 if (g == 0 and cifg) else sg.add_constant(f"w{g}", f32(n_cell, n_in)) for g in range(4)
    ]
    ins += [
        -1 if (g == 0 and cifg) else sg.add_constant(f"r{g}", f32(n_cell, n_cell)) for g in range(4)
    ]
    ins += [-1, -1, -1]
    ins += [-1 if (g == 0 and cifg) else sg.add_constant(f"b{g}", f32(n_cell)) for g in range(4)]
    ins += [-1, -1]
    hs = sg.add_tensor("h", [batch, n_cell], "float32", is_variable=True)
    cs = sg.add_tensor("c", [batch, n_cell], "float32", is_variable=True)
    ins += [hs, cs]
    y = sg.add_tensor("y", shape[:-1] + [n_cell], "float32")
    sg.add_operator(
        "UNIDIRECTIONAL_SEQUENCE_LSTM",
        ins,
        [y],
        version=1,
        options=dict(
            fused_activation_function=activation,
            cell_clip=cell_clip,
            proj_clip=0.0,
            time_major=time_major,
            asymmetric_quantize_inputs=False,
        ),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish(), shape


@pytest.mark.parametrize(
    "kw",
    [dict(), dict(time_major=True), dict(cifg=True), dict(cell_clip=0.5), dict(activation="RELU")],
    ids=["batch-major", "time-major", "cifg", "clip", "relu"],
)
def test_lstm_float_over_several_invokes(kw):
    from tests.python.oracles.litert import make_interpreter

    data, shape = lstm_float_model(**kw)
    rng = np.random.default_rng(3)
    lite = make_interpreter(data, reference=True)
    lite.allocate_tensors()
    i_in, i_out = lite.get_input_details()[0]["index"], lite.get_output_details()[0]["index"]
    runner = wick.load(data)
    for _ in range(3):
        x = rng.standard_normal(shape).astype(np.float32)
        lite.set_tensor(i_in, x)
        lite.invoke()
        ref = lite.get_tensor(i_out)
        np.testing.assert_allclose(
            runner(x)[0], ref, rtol=0, atol=1e-5 * max(1.0, float(np.abs(ref).max()))
        )


def test_a_long_lstm_sequence_can_be_cancelled():
    """The sequence runs as one task; the cancel flag is checked before every step, so a
    cancel mid-sequence stops this one-operator model (without the check it would finish and
    return OK: there is no next operator to check before)."""
    data, shape = lstm_float_model(batch=1, time=50000, n_in=64, n_cell=64)
    runner = wick.load(data).signature(None)
    errors = []

    def run():
        try:
            runner(np.zeros(shape, np.float32))
        except wick.WickError as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.1)
    assert thread.is_alive()
    runner._lib.wick_interpreter_cancel(runner._it)
    thread.join(30)
    assert not thread.is_alive()
    assert len(errors) == 1 and errors[0].status == "cancelled", errors
    assert "LSTM step" in str(errors[0]), str(errors[0])


SOFTMAX_OUTPUTS = {
    "int8": ("int8", 1 / 256, -128),
    "uint8": ("uint8", 1 / 256, 0),
    "int16": ("int16", 1 / 65536, -32768),
}


def _softmax_matches_litert_default(it, ot, shape, scale, beta):
    """One SOFTMAX file whose rows LiteRT's reference kernel cannot take: wick (optimized and
    reference kernels) bit for bit with LiteRT's default interpreter. Returns (feeds, ref)."""
    rng = np.random.default_rng(RNG_SEED)
    x = Q(rnd(rng, shape, np.dtype(it)), scale, {"int8": 3, "uint8": 128}[it])
    data, feeds = build("SOFTMAX", [x], SOFTMAX_OUTPUTS[ot], dict(beta=beta))
    ref = litert(data, feeds, "default")
    exact(wick.load(data)(*feeds), ref, "wick")
    exact(wick.load(data, reference=True)(*feeds), ref, "wick reference kernels")
    return feeds, ref


@pytest.mark.parametrize(
    "it,ot,shape,scale,beta",
    [
        # TensorFlow's full-int8 classifiers: a final SOFTMAX with beta * input scale ~ 8e-9
        ("int8", "int8", (1, 1000), 8e-9, 1.0),
        ("int8", "int8", (3, 17), 1e-9, 1.0),
        ("int8", "int16", (2, 33), 5e-9, 1.0),
        ("uint8", "uint8", (2, 10), 1e-8, 1.0),
    ],
)
def test_softmax_tiny_input_scale_runs_as_litert_default(it, ot, shape, scale, beta):
    # beta * input scale * 2^26 <= 1: LiteRT's reference kernel aborts the process (a CHECK in
    # its multiplier) and its default kernel runs a float exp table; wick takes that table form
    # and must match LiteRT's default interpreter bit for bit (it refused such files before).
    _softmax_matches_litert_default(it, ot, shape, scale, beta)


@pytest.mark.parametrize(
    "it,ot,shape,scale",
    [
        ("int8", "int8", (2, 1000), 0.00241),  # an ImageNet head over close logits
        ("uint8", "uint8", (1, 2048), 0.001),
        ("int8", "int8", (3, 600), 0.004),  # sums near 512: some rows round to 1
        ("int8", "int16", (2, 1000), 0.00241),  # 16-bit outputs keep their resolution
    ],
)
def test_softmax_long_rows_of_close_values_match_litert_default(it, ot, shape, scale):
    # When a row's exps sum to 512 or more, every 8-bit output (p * 256 < 0.5) is the type's
    # minimum. LiteRT's reference kernel aborts on these rows (its final shift passes 31 bits);
    # its default kernel outputs the minimum. wick clamped the shift to 31 and gave 1 instead of
    # 0 for about half the values.
    feeds, ref = _softmax_matches_litert_default(it, ot, shape, scale, 1.0)
    out = SOFTMAX_OUTPUTS[ot]
    real = np.exp(scale * (feeds[0].astype(np.float64) - feeds[0].max(-1, keepdims=True)))
    real /= real.sum(-1, keepdims=True)
    expected = np.round(real / out[1]) + out[2]
    assert np.abs(np.asarray(ref, np.float64) - expected).max() <= 1


# ------------------------------------------------------------------------------- comparisons

COMPARISONS = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize(
    "dtype,shapes,q1,q2",
    [
        ("int8", ((3, 37), (3, 37)), (0.05, -3), (0.07, 5)),
        ("int8", ((2, 3, 8), (8,)), (0.02, 0), (0.02, 0)),  # same parameters
        ("int8", ((4, 1, 5), (1, 3, 1)), (0.5, 10), (0.25, -20)),
        ("int8", ((3, 37), ()), (0.9999, -128), (0.013, 127)),
        ("uint8", ((3, 37), (3, 37)), (0.05, 128), (0.03, 100)),
        ("uint8", ((2, 3, 8), (3, 1)), (0.1, 0), (0.1, 255)),
    ],
    ids=lambda v: str(v).replace(" ", ""),
)
def test_comparison_rescales_like_litert(op, dtype, shapes, q1, q2):
    """Each input rescaled by its own scale (shifted left 8 bits, times the scale's Q31
    multiplier), then compared: bit-exact with both LiteRT interpreters. Values near each other
    in real terms so that equality and ties happen."""
    rng = np.random.default_rng(RNG_SEED)
    a = rnd(rng, shapes[0], np.dtype(dtype))
    # b close to a in real value: b = round(a_real / s2) + z2 + {-1, 0, 1}
    real = (a.astype(np.float64) - q1[1]) * q1[0]
    info = np.iinfo(dtype)
    near = np.round(real / q2[0]) + q2[1] + rng.integers(-1, 2, real.shape)
    b = np.clip(near, info.min, info.max).astype(dtype)
    b = b.reshape(-1)[: int(np.prod(shapes[1]))].reshape(shapes[1]) if shapes[1] != shapes[0] else b
    data, feeds = H.build(op, [Q(a, *q1), Q(b, *q2)], outs=["bool"])
    H.check_file(data, feeds, exact=True)


def test_comparison_int16():
    """Plain int16: raw values, as LiteRT (EQUAL at version 5, the current converter's int16
    version). Quantized int16 is refused: LiteRT rescales it in EQUAL and NOT_EQUAL only."""
    rng = np.random.default_rng(RNG_SEED)
    a, b = rnd(rng, (3, 9), np.int16, -5, 5), rnd(rng, (3, 9), np.int16, -5, 5)
    for op in ("EQUAL", "LESS", "GREATER_EQUAL"):
        data, feeds = H.build(op, [H.In(a), H.In(b)], outs=["bool"])
        H.check_file(data, feeds, exact=True)
    fails(
        "EQUAL", [Q(a, 0.5), Q(b, 0.25)], ["bool"], r"int16 with quantization", status=UNSUPPORTED
    )


def test_comparison_scale_of_one_or_more_is_refused():
    """LiteRT's integer rescale is undefined for a scale >= 1 (a negative rounding shift):
    wick refuses it at prepare, naming the scale."""
    x = np.zeros((4,), np.int8)
    fails("LESS", [Q(x, 1.5), Q(x, 0.5)], ["bool"], r"input 0's scale", status=UNSUPPORTED)
    fails("EQUAL", [Q(x, 0.5), Q(x, 1.0)], ["bool"], r"input 1's scale", status=UNSUPPORTED)


def test_comparison_of_quantized_and_plain_int8_is_refused():
    x = np.zeros((4,), np.int8)
    fails("LESS", [Q(x, 0.5), H.In(x)], ["bool"], r"input 1")


# ------------------------------------------------------------------------ L2_NORMALIZATION


@pytest.mark.parametrize(
    "shape,zp,scale",
    [((3, 37), 0, 0.05), ((2, 4, 16), -5, 0.01), ((5, 1), 7, 0.2), ((2, 300), -128, 0.003)],
    ids=str,
)
def test_l2_normalization_int8(shape, zp, scale):
    """LiteRT's integer kernel: 1/sqrt of the row's sum of squares as a fixed-point multiplier,
    output scale 1/128: bit-exact with both LiteRT interpreters."""
    rng = np.random.default_rng(RNG_SEED)
    x = rnd(rng, shape, np.int8)
    x[0] = zp  # a row of zeros in real terms: 1/sqrt(0) is LiteRT's maximum multiplier
    data, feeds = H.build("L2_NORMALIZATION", [Q(x, scale, zp)], {}, outs=[("int8", 1 / 128, 0)])
    H.check_file(data, feeds, exact=True)


def test_l2_normalization_int8_output_parameters_are_checked():
    x = np.ones((2, 8), np.int8)
    for out in (("int8", 1 / 64, 0), ("int8", 1 / 128, 3)):
        fails("L2_NORMALIZATION", [Q(x, 0.1)], [out], r"scale 1/128 and zero point 0", {})


# ------------------------------------------------------------------------------ ZEROS_LIKE


@pytest.mark.parametrize("quantized", [False, True])
def test_zeros_like_int8_is_refused_as_litert_refuses_it(quantized):
    """LiteRT's ZEROS_LIKE runs int32, int64 and float32 only (both interpreters fail at invoke
    on int8, quantized or not): wick refuses it at prepare, so the sweep's 'gap' is parity."""
    x = np.ones((2, 3), np.int8)
    operand = Q(x, 0.1, 3) if quantized else H.In(x)
    out = ("int8", 0.1, 3) if quantized else "int8"
    data, feeds = H.build("ZEROS_LIKE", [operand], outs=[out])
    for which in H.PEERS:
        assert "ZerosLike only currently supports" in str(H.peer(data, feeds, which))
    fails("ZEROS_LIKE", [operand], [out], r"int8", status=UNSUPPORTED)
