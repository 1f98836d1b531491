"""Differential tests of CONV_2D and DEPTHWISE_CONV_2D (src/ops/conv_2d.c) against LiteRT, through
the single-op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    MALFORMED,
    UNSUPPORTED,
    In,
    build,
    check,
    compare,
    fails,
    rand_from,
)
from tests.python.oracles.litert import run_litert

r = rand_from(np.random.default_rng(4321))
ACTS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]


# ============================================================================ CONV_2D


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (2, 1)])
@pytest.mark.parametrize("dilation", [(1, 1), (2, 2), (1, 3)])
def test_conv2d_geometry(pad, stride, dilation):
    x, w, b = r((2, 9, 7, 3)), r((4, 3, 2, 3)), r((4,))
    opts = dict(
        padding=pad,
        stride_h=stride[0],
        stride_w=stride[1],
        dilation_h_factor=dilation[0],
        dilation_w_factor=dilation[1],
    )
    check("CONV_2D", [In(x), w, b], opts)


@pytest.mark.parametrize("act", ACTS)
def test_conv2d_activations(act):
    x, w, b = r((1, 6, 6, 4)) * 3, r((5, 3, 3, 4)), r((5,))
    opts = dict(padding="SAME", stride_h=1, stride_w=1, fused_activation_function=act)
    check("CONV_2D", [In(x), w, b], opts)


def test_conv2d_runtime_bias_and_weights():
    x, w = r((1, 5, 5, 2)), r((3, 3, 3, 2))
    check("CONV_2D", [In(x), In(w), In(r((3,)))], dict(padding="SAME", stride_h=1, stride_w=1))


def no_bias_check(op, x, w, opts):
    """LiteRT 2.3 refuses float CONV_2D / DEPTHWISE_CONV_2D without a bias ("has_bias was not
    true", "optional but was expected"); wick reads both a missing and an absent (-1) bias as
    zero. The oracle is LiteRT with an explicit zero bias."""
    ref_data, feeds = build(
        op, [In(x), w, np.zeros(w.shape[0 if op == "CONV_2D" else 3], np.float32)], opts
    )
    ref = run_litert(ref_data, feeds)
    for ins in ([In(x), w], [In(x), w, None]):
        data, _ = build(op, ins, opts)
        compare(wick.load(data)(*feeds), ref)


def test_conv2d_no_bias():
    no_bias_check(
        "CONV_2D", r((1, 5, 5, 2)), r((3, 3, 3, 2)), dict(padding="SAME", stride_h=1, stride_w=1)
    )


@pytest.mark.parametrize(
    "x_shape, w_shape",
    [
        ((1, 7, 5, 3), (2, 7, 5, 3)),  # filter = whole input, VALID -> 1x1
        ((3, 1, 1, 1), (1, 1, 1, 1)),
        ((1, 11, 3, 5), (7, 4, 1, 5)),
        ((1, 2, 2, 1), (1, 3, 3, 1)),  # filter larger than the input: VALID's output is empty
    ],
)
@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_conv2d_odd_sizes(x_shape, w_shape, pad):
    opts = dict(padding=pad, stride_h=2, stride_w=1)
    check("CONV_2D", [In(r(x_shape)), r(w_shape), r((w_shape[0],))], opts)


@pytest.mark.parametrize("groups, cout", [(2, 4), (4, 8), (3, 3)])
def test_conv2d_groups(groups, cout):
    cin = 12 if groups == 3 else 8
    x, w, b = r((1, 6, 5, cin)), r((cout, 3, 3, cin // groups)), r((cout,))
    check("CONV_2D", [In(x), w, b], dict(padding="SAME", stride_h=1, stride_w=1))


@pytest.mark.parametrize(
    "size,k,stride,act",
    [(14, 7, 1, "NONE"), (9, 3, 2, "RELU6"), (12, 5, 1, "RELU"), (7, 7, 2, "NONE")],
)
def test_conv2d_one_channel_per_group_runs_as_depthwise(size, k, stride, act):
    # groups == in_c == out_c (Keras ConvNeXt's 7x7): the depthwise kernels on the transposed
    # filter, against LiteRT (default kernels: its reference CONV_2D has no groups) and
    # against wick's grouped reference kernel; 40 channels: a vector block and a tail
    c = 40
    x, w, b = r((2, size, size, c)), r((c, k, k, 1)), r((c,))
    opts = dict(padding="SAME", stride_h=stride, stride_w=stride, fused_activation_function=act)
    got = check("CONV_2D", [In(x), w, b], opts)
    data, feeds = build("CONV_2D", [In(x), w, b], opts)
    compare(wick.load(data, num_threads=2)(*feeds), [got[0]], what="2 threads")


@pytest.mark.parametrize(
    "x_shape, w_shape, b_shape, opts, match",
    [
        ((1, 5, 5, 4), (2, 3, 3, 3), (2,), {}, "multiple of the filter depth"),
        ((1, 5, 5, 4), (3, 3, 3, 2), (3,), {}, "do not split into 2 groups"),
        ((1, 5, 5, 2), (3, 3, 3, 2), (4,), {}, "bias has 4 elements"),
        ((1, 5, 5, 2), (3, 3, 3, 2), (3,), dict(stride_h=0), "stride 0"),
        ((1, 5, 5, 2), (3, 3, 3, 2), (3,), dict(dilation_w_factor=-1), "dilation -1"),
        ((5, 5, 2), (3, 3, 3, 2), (3,), {}, "rank 4"),
        ((1, 5, 5, 2), (3, 3, 3, 2), (3,), dict(fused_activation_function=9), "activation 9"),
        ((1, 5, 5, 0), (3, 3, 3, 1), (3,), {}, "input depth 0"),
    ],
)
def test_conv2d_malformed(x_shape, w_shape, b_shape, opts, match):
    opts = dict(padding="SAME", stride_h=1, stride_w=1) | opts
    fails("CONV_2D", [In(r(x_shape)), r(w_shape), r(b_shape)], opts, status=MALFORMED, match=match)


def test_conv2d_hybrid_filter_without_quantization_is_refused():
    # float input + int8 filter is a hybrid conv (supported with per-channel scales); without
    # the filter's scales prepare refuses it, naming float32
    fails(
        "CONV_2D",
        [In(r((1, 4, 4, 2), "float32")), r((3, 3, 3, 2), "int8"), r((3,))],
        dict(padding="SAME", stride_h=1, stride_w=1),
        status=UNSUPPORTED,
        match="float32 input with an int8 filter without quantization parameters",
    )


# ============================================================================ DEPTHWISE_CONV_2D


@pytest.mark.parametrize("mult", [1, 2, 3])
@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 2), (1, 2)])
def test_depthwise(mult, pad, stride):
    c = 3
    x, w, b = r((2, 8, 7, c)), r((1, 3, 3, c * mult)), r((c * mult,))
    opts = dict(padding=pad, stride_h=stride[0], stride_w=stride[1], depth_multiplier=mult)
    check("DEPTHWISE_CONV_2D", [In(x), w, b], opts)


@pytest.mark.parametrize("dilation", [(2, 2), (1, 3), (3, 1)])
@pytest.mark.parametrize("mult", [1, 2])
def test_depthwise_dilation(dilation, mult):
    x, w, b = r((1, 9, 9, 2)), r((1, 3, 2, 2 * mult)), r((2 * mult,))
    opts = dict(
        padding="SAME",
        stride_h=1,
        stride_w=1,
        depth_multiplier=mult,
        dilation_h_factor=dilation[0],
        dilation_w_factor=dilation[1],
    )
    check("DEPTHWISE_CONV_2D", [In(x), w, b], opts)


@pytest.mark.parametrize("act", ACTS)
def test_depthwise_activations(act):
    x, w = r((1, 5, 5, 4)) * 3, r((1, 3, 3, 4))
    opts = dict(
        padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1, fused_activation_function=act
    )
    check("DEPTHWISE_CONV_2D", [In(x), w, r((4,))], opts)


def test_depthwise_no_bias():
    no_bias_check(
        "DEPTHWISE_CONV_2D",
        r((1, 5, 5, 2)),
        r((1, 3, 3, 4)),
        dict(padding="SAME", stride_h=2, stride_w=1, depth_multiplier=2),
    )


@pytest.mark.parametrize(
    "x_shape, w_shape, match",
    [
        ((1, 5, 5, 4), (1, 3, 3, 6), "not a multiple of the input depth"),
        ((1, 5, 5, 4), (2, 3, 3, 4), r"\[1, H, W, C\*M\]"),
        ((1, 5, 5, 0), (1, 3, 3, 4), "not a multiple of the input depth 0"),
    ],
)
def test_depthwise_malformed(x_shape, w_shape, match):
    fails(
        "DEPTHWISE_CONV_2D",
        [In(r(x_shape)), r(w_shape), r((w_shape[3],))],
        dict(padding="SAME", stride_h=1, stride_w=1, depth_multiplier=1),
        status=MALFORMED,
        match=match,
    )
