"""Differential tests of TRANSPOSE_CONV (src/ops/transpose_conv.c) against LiteRT, through the
single-op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    INVALID_INPUT,
    MALFORMED,
    In,
    build,
    check,
    compare,
    fails,
    i32,
    rand_from,
)
from tests.python.oracles.litert import run_litert

r = rand_from(np.random.default_rng(1234))
F32 = ["float32"]


# ============================================================================ TRANSPOSE_CONV


def tconv_out(h, k, s, pad):
    """The TF output size of a transpose conv (the forward conv maps it back to h)."""
    return h * s if pad == "SAME" else (h - 1) * s + k


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (3, 2), (1, 3)])
@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
def test_transpose_conv(pad, stride, act):
    sh, sw = stride
    x, w, b = r((2, 5, 4, 3)), r((4, 3, 2, 3)), r((4,))
    oh, ow = tconv_out(5, 3, sh, pad), tconv_out(4, 2, sw, pad)
    opts = dict(padding=pad, stride_h=sh, stride_w=sw, fused_activation_function=act)
    check("TRANSPOSE_CONV", [i32(2, oh, ow, 4), w, In(x), b], opts, out_dtypes=F32)


@pytest.mark.parametrize(
    "case",
    [
        # (input HxW, kernel, stride, output HxW, padding): SAME outputs smaller than H*s
        ((5, 5), (3, 3), (2, 2), (9, 9), "SAME"),
        ((4, 3), (4, 4), (2, 3), (7, 8), "SAME"),
        ((3, 3), (2, 2), (2, 2), (7, 7), "VALID"),  # VALID with a spare row/col
        ((1, 1), (1, 1), (1, 1), (1, 1), "VALID"),
        ((6, 2), (5, 1), (1, 1), (6, 2), "SAME"),
        ((2, 2), (1, 1), (3, 3), (6, 6), "SAME"),  # stride > kernel: holes in the output
    ],
)
@pytest.mark.parametrize("bias", [True, False])
def test_transpose_conv_shapes(case, bias):
    (h, w_), (kh, kw), (sh, sw), (oh, ow), pad = case
    x, w = r((1, h, w_, 2)), r((3, kh, kw, 2))
    ins = [i32(1, oh, ow, 3), w, In(x)] + ([r((3,))] if bias else [])
    check("TRANSPOSE_CONV", ins, dict(padding=pad, stride_h=sh, stride_w=sw), out_dtypes=F32)


def test_transpose_conv_runtime_output_shape_and_weights():
    """output_shape and weights as graph inputs: the node is prepared at invoke."""
    x, w = r((1, 3, 3, 2)), r((2, 3, 3, 2))
    opts = dict(padding="SAME", stride_h=2, stride_w=2)
    check("TRANSPOSE_CONV", [In(i32(1, 6, 5, 2)), In(w), In(x), r((2,))], opts, out_dtypes=F32)


def test_transpose_conv_reference_kernels():
    x, w = r((2, 4, 4, 3)), r((5, 3, 3, 3))
    opts = dict(padding="SAME", stride_h=2, stride_w=2, fused_activation_function="RELU")
    check(
        "TRANSPOSE_CONV", [i32(2, 8, 8, 5), w, In(x), r((5,))], opts, out_dtypes=F32, reference=True
    )


@pytest.mark.parametrize(
    "x_shape, w_shape, stride, pad",
    [
        # 0.6 MB of GEMM result per input row: rounds of 10 output rows
        ((1, 20, 96, 24), (96, 4, 4, 24), 2, "SAME"),
        # a stride-1 3x3 with two images: rounds of 20 rows that share two input rows
        ((2, 30, 40, 16), (128, 3, 3, 16), 1, "SAME"),
        # stride above the kernel: output rows that no input row reaches (bias only)
        ((1, 9, 7, 5), (6, 2, 2, 5), 3, "VALID"),
    ],
)
def test_transpose_conv_gemm_rounds_and_threads(x_shape, w_shape, stride, pad):
    """The GEMM form of TRANSPOSE_CONV in rounds of output rows (wick's 4 MiB round budget),
    split over threads: every thread count gives the bytes of one thread, and LiteRT's result."""
    n, h, w_, _ = x_shape
    out_c, kh, kw, _ = w_shape
    oh, ow = tconv_out(h, kh, stride, pad), tconv_out(w_, kw, stride, pad)
    opts = dict(padding=pad, stride_h=stride, stride_w=stride, fused_activation_function="RELU6")
    operands = [i32(n, oh, ow, out_c), r(w_shape), In(r(x_shape)), r((out_c,))]
    data, feeds = build("TRANSPOSE_CONV", operands, opts, out_dtypes=F32)
    one = wick.load(data, num_threads=1)(*feeds)[0]
    for threads in (2, 3):
        assert wick.load(data, num_threads=threads)(*feeds)[0].tobytes() == one.tobytes()
    compare([one], run_litert(data, feeds))
    compare(wick.load(data, reference=True)(*feeds), run_litert(data, feeds))


@pytest.mark.parametrize(
    "oshape, w_shape, opts, match",
    [
        (i32(1, 9, 9, 4), (4, 3, 3, 2), dict(stride_h=2, stride_w=2), None),  # needs 5x5 input
        (i32(1, 8, 8, 3), (4, 3, 3, 2), dict(stride_h=2, stride_w=2), "output channels"),
        (i32(2, 8, 8, 4), (4, 3, 3, 2), dict(stride_h=2, stride_w=2), "batch"),
        (i32(1, 8, 8), (4, 3, 3, 2), dict(stride_h=2, stride_w=2), "4 values"),
        (i32(1, 8, 8, 4), (4, 3, 3, 3), dict(stride_h=2, stride_w=2), "input channels"),
        (i32(1, 8, 8, 4), (4, 3, 3, 2), dict(stride_h=0, stride_w=2), "stride"),
        (i32(1, -8, 8, 4), (4, 3, 3, 2), dict(stride_h=2, stride_w=2), "negative"),
    ],
)
def test_transpose_conv_malformed(oshape, w_shape, opts, match):
    opts = dict(padding="SAME", **opts)
    e = fails(
        "TRANSPOSE_CONV",
        [oshape, r(w_shape), In(r((1, 4, 4, 2)))],
        opts,
        out_dtypes=F32,
        status=MALFORMED,
        match=match,
    )
    if match is None:
        assert "does not match the input 4x4" in str(e)


def test_transpose_conv_bad_runtime_output_shape():
    fails(
        "TRANSPOSE_CONV",
        [In(i32(1, 11, 8, 4)), r((4, 3, 3, 2)), In(r((1, 4, 4, 2)))],
        dict(padding="SAME", stride_h=2, stride_w=2),
        out_dtypes=F32,
        status=INVALID_INPUT,
        match="does not match the input",
    )


def test_transpose_conv_bias_length():
    fails(
        "TRANSPOSE_CONV",
        [i32(1, 8, 8, 4), r((4, 3, 3, 2)), In(r((1, 4, 4, 2))), r((3,))],
        dict(padding="SAME", stride_h=2, stride_w=2),
        out_dtypes=F32,
        match="bias has 3",
    )
