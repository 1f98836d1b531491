"""Differential tests of CONV_3D and CONV_3D_TRANSPOSE (float32, NDHWC) against LiteRT.

Outputs must be within 1e-5 * max(1, max|ref|) of LiteRT (whose optimized kernel sums in another
order): strides, dilations, SAME/VALID padding, fused activations, with and without bias, weights
as constants and as run-time inputs. The transpose's output_shape must be consistent with the
input (as wick requires for TRANSPOSE_CONV); malformed cases assert the error naming the problem.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    INVALID_INPUT,
    MALFORMED,
    UNSUPPORTED,
    In,
    build,
    check,
    compare,
    fails,
    rand,
    run_litert,
)

RNG = np.random.default_rng(777)
F32 = ["float32"]


def r(shape, dtype="float32"):
    return rand(RNG, shape, dtype)


def opts(pad="VALID", stride=(1, 1, 1), dilation=(1, 1, 1), act="NONE"):
    return dict(
        padding=pad,
        stride_d=stride[0],
        stride_h=stride[1],
        stride_w=stride[2],
        dilation_d_factor=dilation[0],
        dilation_h_factor=dilation[1],
        dilation_w_factor=dilation[2],
        fused_activation_function=act,
    )


# ============================================================================ CONV_3D


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1, 1), (2, 2, 2), (1, 2, 3)])
@pytest.mark.parametrize("dilation", [(1, 1, 1), (2, 1, 2)])
def test_conv3d_geometry(pad, stride, dilation):
    x, w, b = r((2, 5, 6, 7, 3)), r((3, 2, 3, 3, 4)), r((4,))
    check("CONV_3D", [In(x), w, b], opts(pad, stride, dilation), out_dtypes=F32)


def test_conv3d_split_over_threads_matches_one_thread():
    """Large enough (~7 M multiply-adds) that its output depth planes split over the threads:
    every thread count gives the bytes of one thread, and LiteRT's result."""
    x, w, b = r((2, 12, 14, 14, 8)), r((3, 3, 3, 8, 8)), r((8,))
    data, feeds = build("CONV_3D", [In(x), w, b], opts("SAME", stride=(1, 1, 1)))
    one = wick.load(data, num_threads=1)(*feeds)[0]
    for threads in (2, 3):
        assert wick.load(data, num_threads=threads)(*feeds)[0].tobytes() == one.tobytes()
    compare([one], run_litert(data, feeds))


@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
def test_conv3d_activations(act):
    x, w, b = r((1, 4, 4, 4, 2)), r((2, 2, 2, 2, 3)), r((3,))
    check("CONV_3D", [In(x), w, b], opts("SAME", act=act), out_dtypes=F32)


def test_conv3d_no_bias_and_runtime_weights():
    x, w = r((1, 3, 4, 5, 2)), r((1, 3, 3, 2, 5))
    check("CONV_3D", [In(x), w], opts("SAME"), out_dtypes=F32)
    check("CONV_3D", [In(x), In(w), In(r((5,)))], opts("VALID", (1, 2, 1)), out_dtypes=F32)


def test_conv3d_pointwise_and_window_larger_than_input():
    check("CONV_3D", [In(r((2, 3, 3, 3, 4))), r((1, 1, 1, 4, 6))], opts(), out_dtypes=F32)
    # SAME with a kernel larger than the input: every tap but the centre is padding
    check("CONV_3D", [In(r((1, 2, 2, 2, 1))), r((5, 5, 5, 1, 2))], opts("SAME"), out_dtypes=F32)


@pytest.mark.parametrize(
    "x_shape, w_shape, b_shape, o, match, status",
    [
        ((1, 4, 4, 4, 2), (2, 2, 2, 3, 4), None, opts(), "3 input channels", MALFORMED),
        ((1, 4, 4, 2), (2, 2, 2, 2, 4), None, opts(), "rank 5", MALFORMED),
        ((1, 4, 4, 4, 2), (2, 2, 2, 4), None, opts(), "rank 5", MALFORMED),
        ((1, 4, 4, 4, 2), (2, 2, 2, 2, 4), (3,), opts(), "bias has 3 elements", MALFORMED),
        ((1, 4, 4, 4, 2), (2, 2, 2, 2, 4), None, opts(stride=(0, 1, 1)), "stride", MALFORMED),
        ((1, 4, 4, 4, 2), (2, 2, 2, 2, 4), None, opts(dilation=(1, -1, 1)), "dilation", MALFORMED),
        ((1, 4, 4, 4, 2), (2, 0, 2, 2, 4), None, opts(), "filter size", MALFORMED),
    ],
)
def test_conv3d_malformed(x_shape, w_shape, b_shape, o, match, status):
    ops = [In(r(x_shape)), r(w_shape)] + ([r(b_shape)] if b_shape else [])
    fails("CONV_3D", ops, o, match=match, status=status, out_dtypes=F32)


def test_conv3d_int8_is_refused_cleanly():
    x = np.zeros((1, 2, 2, 2, 1), np.int8)
    fails("CONV_3D", [In(x), np.zeros((1, 1, 1, 1, 1), np.int8)], opts(), status=UNSUPPORTED)


# ============================================================================ CONV_3D_TRANSPOSE


def tconv_out(n, k, s, d, pad):
    eff = (k - 1) * d + 1
    return n * s if pad == "SAME" else (n - 1) * s + eff


@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [(1, 1, 1), (2, 2, 2), (1, 2, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv3d_transpose(pad, stride, bias):
    x, w = r((2, 3, 4, 2, 3)), r((2, 3, 2, 4, 3))  # filter [kd, kh, kw, Cout, Cin]
    out = [2] + [
        tconv_out(n, k, s, 1, pad) for n, k, s in zip((3, 4, 2), (2, 3, 2), stride, strict=True)
    ]
    ins = [np.array(out + [4], np.int32), w, In(x)] + ([r((4,))] if bias else [])
    check("CONV_3D_TRANSPOSE", ins, opts(pad, stride, act="RELU"), out_dtypes=F32)


def test_conv3d_transpose_runtime_output_shape():
    x, w = r((1, 2, 3, 3, 2)), r((3, 3, 3, 2, 2))
    oshape = np.array([1, 4, 6, 6, 2], np.int32)
    check("CONV_3D_TRANSPOSE", [In(oshape), w, In(x)], opts("SAME", (2, 2, 2)), out_dtypes=F32)
    bad = np.array([1, 9, 6, 6, 2], np.int32)
    fails(
        "CONV_3D_TRANSPOSE",
        [In(bad), w, In(x)],
        opts("SAME", (2, 2, 2)),
        match="does not map back",
        status=INVALID_INPUT,
        out_dtypes=F32,
    )


@pytest.mark.parametrize(
    "oshape, w_shape, match",
    [
        ([1, 5, 6, 6, 2], (3, 3, 3, 2, 2), "output depth 5 does not map back"),
        ([2, 4, 6, 6, 2], (3, 3, 3, 2, 2), "batch"),
        ([1, 4, 6, 6, 3], (3, 3, 3, 2, 2), "3 channels"),
        ([1, 4, 6, 6], (3, 3, 3, 2, 2), "5 values"),
        ([1, 4, 6, 6, 2], (3, 3, 3, 2, 5), "5 input channels"),
        ([1, -4, 6, 6, 2], (3, 3, 3, 2, 2), "not a valid size"),
    ],
)
def test_conv3d_transpose_malformed(oshape, w_shape, match):
    fails(
        "CONV_3D_TRANSPOSE",
        [np.array(oshape, np.int32), r(w_shape), In(r((1, 2, 3, 3, 2)))],
        opts("SAME", (2, 2, 2)),
        match=match,
        status=MALFORMED,
        out_dtypes=F32,
    )


def test_conv3d_transpose_dilation():
    x, w = r((1, 3, 3, 3, 2)), r((2, 3, 2, 3, 2))
    out = [1] + [tconv_out(3, k, 2, 2, "VALID") for k in (2, 3, 2)] + [3]
    check(
        "CONV_3D_TRANSPOSE",
        [np.array(out, np.int32), w, In(x), r((3,))],
        opts("VALID", (2, 2, 2), (2, 2, 2)),
        out_dtypes=F32,
    )
