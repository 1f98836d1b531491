"""Differential tests of the first operators (the lead's core set) against LiteRT:
CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE/MAX_POOL_2D, SOFTMAX, RESHAPE,
CONCATENATION, PAD/PADV2, the reductions, and the binary ops of elementwise_binary.c.

Float32 outputs must be within 1e-5 * max(1, max|ref|) of LiteRT's default resolver (XNNPACK
where it applies: a different summation order); integer and bool outputs must be identical.
Each op also has malformed-parameter cases asserting a WickError whose message names the problem;
values only known at run time (a shape or axes input fed by the caller, an integer divisor) must
fail at invoke with "invalid input value".
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    INVALID_INPUT,
    MALFORMED,
    UNSUPPORTED,
    C,
    In,
    build,
    check,
    compare,
    fails,
    litert_refuses,
    rand,
)
from tests.python.oracles.litert import run_litert

RNG = np.random.default_rng(4321)
ACTS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]


def r(shape, dtype="float32", **kw):
    return rand(RNG, shape, dtype, **kw)


def i32(*v):
    return np.array(v, np.int32)


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
        ((1, 2, 2, 1), (1, 3, 3, 1)),  # filter larger than the input (SAME only)
    ],
)
@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_conv2d_odd_sizes(x_shape, w_shape, pad):
    opts = dict(padding=pad, stride_h=2, stride_w=1)
    if pad == "VALID" and (w_shape[1] > x_shape[1] or w_shape[2] > x_shape[2]):
        return  # output would be empty; nothing to compare
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


# ============================================================================ FULLY_CONNECTED


@pytest.mark.parametrize("x_shape", [(3, 8), (2, 3, 8), (1, 8), (2, 2, 2, 8)])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("bias", ["const", "absent_slot", "no_slot"])
def test_fully_connected(x_shape, keep, bias):
    w = r((5, 8))
    ins = [In(r(x_shape)), w]
    if bias == "const":
        ins.append(r((5,)))
    elif bias == "absent_slot":
        ins.append(None)
    check("FULLY_CONNECTED", ins, dict(keep_num_dims=keep))


def test_fully_connected_flattening_input():
    """Without keep_num_dims the input is any shape whose size is a multiple of K."""
    check("FULLY_CONNECTED", [In(r((2, 3, 4))), r((6, 12)), r((6,))], dict(keep_num_dims=False))


@pytest.mark.parametrize("act", ACTS[:4])
def test_fully_connected_activations(act):
    check(
        "FULLY_CONNECTED",
        [In(r((4, 6)) * 3), r((3, 6)), r((3,))],
        dict(fused_activation_function=act),
    )


def test_fully_connected_runtime_weights():
    check("FULLY_CONNECTED", [In(r((4, 6))), In(r((3, 6))), In(r((3,)))], {})


@pytest.mark.parametrize(
    "x_shape, w_shape, b_shape, opts, match",
    [
        ((3, 7), (5, 8), (5,), {}, "does not split into rows of 8"),
        ((3, 8), (5, 8), (4,), {}, "bias has 4 elements"),
        ((3, 8), (5, 8, 1), (5,), {}, "weights must have rank 2"),
        ((2, 12), (5, 8), (5,), dict(keep_num_dims=True), "keep_num_dims"),
    ],
)
def test_fully_connected_malformed(x_shape, w_shape, b_shape, opts, match):
    fails(
        "FULLY_CONNECTED",
        [In(r(x_shape)), r(w_shape), r(b_shape)],
        opts,
        status=MALFORMED,
        match=match,
    )


# ============================================================================ POOLING


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("pad", ["SAME", "VALID"])
@pytest.mark.parametrize(
    "k, s",
    [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 3)), ((5, 5), (3, 3)), ((1, 1), (2, 2))],
)
def test_pool(op, pad, k, s):
    x = r((2, 9, 8, 3))
    opts = dict(padding=pad, filter_height=k[0], filter_width=k[1], stride_h=s[0], stride_w=s[1])
    check(op, [In(x)], opts)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("act", ["RELU", "RELU_N1_TO_1", "RELU6"])
def test_pool_activations(op, act):
    opts = dict(
        padding="SAME",
        filter_height=3,
        filter_width=3,
        stride_h=2,
        stride_w=2,
        fused_activation_function=act,
    )
    check(op, [In(r((1, 7, 7, 2)) * 4)], opts)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize(
    "opts, match",
    [
        (dict(filter_height=0), "filter size 0"),
        (dict(stride_w=0), "stride 0"),
        (dict(padding=7), "unknown padding 7"),
    ],
)
def test_pool_malformed(op, opts, match):
    base = dict(padding="SAME", filter_height=2, filter_width=2, stride_h=2, stride_w=2)
    fails(op, [In(r((1, 4, 4, 1)))], base | opts, status=MALFORMED, match=match)


# ============================================================================ SOFTMAX


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.7, 0.0])
@pytest.mark.parametrize("shape", [(10,), (3, 7), (2, 3, 5), (2, 2, 3, 4)])
def test_softmax(beta, shape):
    check("SOFTMAX", [In(r(shape) * 5)], dict(beta=beta))


def test_softmax_large_values():
    x = np.array([[1e4, 1e4 - 1, -1e4], [88, 89, 90], [-1e30, 0, 1e30]], np.float32)
    check("SOFTMAX", [In(x)], dict(beta=1.0))


# ============================================================================ RESHAPE


@pytest.mark.parametrize(
    "x_shape, new",
    [
        ((2, 3, 4), [4, -1]),
        ((2, 3, 4), [24]),
        ((6,), [1, 2, 1, 3]),
        ((2, 3, 4), [-1]),
        ((1, 1), []),
    ],
)
@pytest.mark.parametrize("how", ["input", "option", "both", "runtime"])
def test_reshape(x_shape, new, how):
    x = r(x_shape)
    shape = np.array(new, np.int32)
    if how == "input":
        check("RESHAPE", [In(x), shape])
    elif how == "option":
        if not new:
            return  # an empty new_shape option reads as "absent"
        check("RESHAPE", [In(x)], dict(new_shape=new))
    elif how == "both":  # the shape input wins
        check("RESHAPE", [In(x), shape], dict(new_shape=[int(np.prod(x_shape))]))
    else:
        check("RESHAPE", [In(x), In(shape)])


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "int8"])
def test_reshape_types(dtype):
    check("RESHAPE", [In(r((3, 4), dtype)), i32(2, 6)])


@pytest.mark.parametrize(
    "new, match",
    [
        ([5, -1], "cannot infer"),
        ([-1, -1], "more than one -1"),
        ([7], "cannot reshape 24"),
        ([2, -3, 4], "dimension 1 is -3"),
    ],
)
def test_reshape_malformed(new, match):
    x = r((2, 3, 4))
    fails("RESHAPE", [In(x), np.array(new, np.int32)], status=MALFORMED, match=match)
    fails("RESHAPE", [In(x), In(np.array(new, np.int32))], status=INVALID_INPUT, match=match)


def test_reshape_empty_shape_tensor():
    """An empty shape tensor means a scalar (LiteRT), even when new_shape is also given..."""
    x = r((1, 1))
    e = np.array([], np.int32)
    (got,) = check("RESHAPE", [In(x), e])
    assert got.shape == ()
    check("RESHAPE", [In(x), e], dict(new_shape=[1]))
    check("RESHAPE", [In(x), In(e)])


def test_reshape_legacy_empty_shape_tensor_with_new_shape():
    """...but when the input does not hold one element LiteRT fails, and wick falls back to
    new_shape: legacy converters paired new_shape with a dummy empty shape tensor."""
    x = r((2, 3))
    ops, opts = [In(x), np.array([], np.int32)], dict(new_shape=[3, 2])
    assert litert_refuses("RESHAPE", ops, opts)
    data, feeds = build("RESHAPE", ops, opts)
    np.testing.assert_array_equal(wick.load(data)(*feeds)[0], x.reshape(3, 2))


def test_reshape_rank_cap():
    fails("RESHAPE", [In(r((1,))), np.ones(9, np.int32)], match="exceeds")


# ============================================================================ CONCATENATION


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_concatenation(n, axis, dtype):
    base = [2, 3, 4]
    ins = []
    for k in range(n):
        s = list(base)
        s[axis] = k + 1
        ins.append(In(r(tuple(s), dtype)) if k % 2 == 0 else r(tuple(s), dtype))
    check("CONCATENATION", ins, dict(axis=axis, fused_activation_function="NONE"))


@pytest.mark.parametrize("dtype", ["int64", "bool", "int8", "uint8"])
def test_concatenation_types(dtype):
    check("CONCATENATION", [In(r((2, 2), dtype)), In(r((2, 3), dtype))], dict(axis=-1))


def test_concatenation_zero_size_input():
    check("CONCATENATION", [In(r((2, 0))), In(r((2, 3)))], dict(axis=1))


@pytest.mark.parametrize(
    "shapes, axis, match",
    [
        ([(2, 3), (3, 3)], 1, "differs from input 0 in dimension 0"),
        ([(2, 3), (2, 3, 1)], 0, "rank 3"),
        ([(2, 3), (2, 3)], 2, "axis 2 is outside rank 2"),
        ([(2, 3), (2, 3)], -3, "axis -3 is outside rank 2"),
    ],
)
def test_concatenation_malformed(shapes, axis, match):
    fails(
        "CONCATENATION", [In(r(s)) for s in shapes], dict(axis=axis), status=MALFORMED, match=match
    )


def test_concatenation_mixed_types():
    fails(
        "CONCATENATION",
        [In(r((2, 3))), In(r((2, 3), "int32"))],
        dict(axis=0),
        status=MALFORMED,
        match="input 1 has type int32",
    )


# ============================================================================ PAD / PADV2


@pytest.mark.parametrize(
    "x_shape, pads",
    [
        ((2, 3), [[1, 2], [0, 3]]),
        ((4,), [[3, 0]]),
        ((1, 2, 3, 2), [[0, 0], [1, 1], [2, 0], [0, 1]]),
        ((2, 1, 2, 1, 2), [[1, 0], [0, 1], [0, 0], [2, 2], [1, 1]]),
        ((2, 3), [[0, 0], [0, 0]]),
        ((2, 4, 5, 3), [[0, 0], [1, 1], [1, 2], [0, 0]]),  # NHWC image: W x C runs
        ((2, 3, 4, 2), [[0, 0], [2, 0], [0, 0], [0, 0]]),  # H only: H x W x C runs
    ],
)
@pytest.mark.parametrize("pad_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_pad(x_shape, pads, pad_dtype, dtype):
    p = np.array(pads, pad_dtype)
    x = r(x_shape, dtype)
    check("PAD", [In(x), p])
    value = np.array(7, dtype) if dtype == "int32" else np.array(-2.5, np.float32)
    check("PADV2", [In(x), p, value])


def test_pad_runtime_paddings():
    x = r((2, 3))
    check("PAD", [In(x), In(np.array([[1, 0], [2, 1]], np.int32))])
    check("PADV2", [In(x), In(np.array([[0, 2], [1, 1]], np.int32)), In(np.float32(3.5))])


@pytest.mark.parametrize("dtype", ["int64", "int8", "bool"])
def test_pad_other_types(dtype):
    check("PAD", [In(r((2, 2), dtype)), np.array([[1, 1], [0, 2]], np.int32)])


def test_pad_malformed():
    x = r((2, 3))
    fails("PAD", [In(x), np.array([[1, -1], [0, 0]], np.int32)], status=MALFORMED, match="negative")
    fails(
        "PAD",
        [In(x), In(np.array([[1, 0], [-2, 0]], np.int32))],
        status=INVALID_INPUT,
        match="negative",
    )
    fails("PAD", [In(x), np.array([[1, 1]], np.int32)], status=MALFORMED, match=r"\[2, 2\]")
    fails(
        "PADV2",
        [In(x), np.array([[1, 1], [1, 1]], np.int32), np.array([1, 2], np.float32)],
        status=MALFORMED,
        match="scalar",
    )


# ============================================================================ REDUCTIONS

REDUCERS = ["MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD"]


@pytest.mark.parametrize("op", REDUCERS)
@pytest.mark.parametrize("axes", [[1], [-1], [0, 2], [-3, 1], [2, 0, 1], [1, -2], []])
@pytest.mark.parametrize("keep", [False, True])
def test_reduce(op, axes, keep):
    x = r((3, 4, 5))
    if op == "REDUCE_PROD":
        x = (x * 0.3 + 1).astype(np.float32)  # keep products near 1
    check(op, [In(x), np.array(axes, np.int32)], dict(keep_dims=keep))


@pytest.mark.parametrize("op", REDUCERS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_reduce_ints(op, dtype):
    x = r((2, 3, 4), dtype, lo=-9, hi=9)
    if op == "REDUCE_PROD":
        x = r((2, 3, 4), dtype, lo=-3, hi=3)
    if (
        dtype == "int64"
        and op == "MEAN"
        and litert_refuses(op, [In(x), i32(1)], dict(keep_dims=False))
    ):
        pytest.skip("LiteRT has no int64 MEAN")
    check(op, [In(x), i32(1, 2)], dict(keep_dims=False))
    check(op, [In(x), i32(0)], dict(keep_dims=True))


@pytest.mark.parametrize("op", REDUCERS)
def test_reduce_int64_axes(op):
    """LiteRT only takes int32 axes; wick also takes int64 (same result)."""
    x = r((2, 3, 4))
    opts = dict(keep_dims=True)
    ref_data, feeds = build(op, [In(x), i32(0, -1)], opts)
    data, _ = build(op, [In(x), np.array([0, -1], np.int64)], opts)
    compare(wick.load(data)(*feeds), run_litert(ref_data, feeds))


@pytest.mark.parametrize("op", REDUCERS)
def test_reduce_runtime_axes_and_scalar_axis(op):
    x = r((2, 3, 4))
    check(op, [In(x), In(i32(0, 2))], dict(keep_dims=True))
    check(op, [In(x), np.int32(-1)], dict(keep_dims=False))


def test_reduce_rank4_several_axes():
    check("MEAN", [In(r((2, 5, 6, 3))), i32(1, 2)], dict(keep_dims=True))
    check("SUM", [In(r((2, 5, 6, 3))), i32(3, 0, 1)], dict(keep_dims=False))


@pytest.mark.parametrize("op", REDUCERS)
def test_reduce_bad_axis(op):
    fails(
        op,
        [In(r((2, 3))), i32(2)],
        dict(keep_dims=False),
        status=MALFORMED,
        match="axis 2 is outside rank 2",
    )
    fails(
        op,
        [In(r((2, 3))), In(i32(-3))],
        dict(keep_dims=False),
        status=INVALID_INPUT,
        match="axis -3 is outside rank 2",
    )


# ============================================================================ BINARY OPS

ARITH = [
    "ADD",
    "SUB",
    "MUL",
    "DIV",
    "MAXIMUM",
    "MINIMUM",
    "SQUARED_DIFFERENCE",
    "FLOOR_DIV",
    "FLOOR_MOD",
    "POW",
]
COMPARE = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]
ACT_OPS = {"ADD", "SUB", "MUL", "DIV"}
BCAST = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),  # rank mismatch, both broadcast
    ((1,), (2, 2, 3)),
    ((), (3, 2)),  # scalar
    ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),  # rank 5
    ((3, 1), (1, 0)),  # empty
]


def _opts(op, act="NONE"):
    return dict(fused_activation_function=act) if op in ACT_OPS else None


def _floats(op, shape):
    x = r(shape)
    if op == "POW":
        return np.abs(x) + 0.5
    if op in ("DIV", "FLOOR_DIV", "FLOOR_MOD"):
        return np.where(np.abs(x) < 0.25, 0.75, x).astype(np.float32)
    return x


@pytest.mark.parametrize("op", ARITH)
@pytest.mark.parametrize("shapes", BCAST)
def test_binary_float(op, shapes):
    a, b = _floats(op, shapes[0]), _floats(op, shapes[1])
    check(op, [In(a), In(b)], _opts(op))
    check(op, [In(a), C(b)], _opts(op))


@pytest.mark.parametrize("op", sorted(ACT_OPS))
@pytest.mark.parametrize("act", ["RELU", "RELU_N1_TO_1", "RELU6"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_binary_activations(op, act, dtype):
    a, b = r((3, 4), dtype, lo=-9, hi=9), r((4,), dtype, lo=1, hi=9)
    if dtype == "float32":
        a = a * 4
    if dtype == "int32" and op == "DIV" and litert_refuses(op, [In(a), In(b)], _opts(op, act)):
        pytest.skip("LiteRT refuses int32 DIV with a fused activation")
    check(op, [In(a), In(b)], _opts(op, act))


@pytest.mark.parametrize(
    "op",
    [
        "ADD",
        "SUB",
        "MUL",
        "MAXIMUM",
        "MINIMUM",
        "SQUARED_DIFFERENCE",
        "FLOOR_DIV",
        "FLOOR_MOD",
        "DIV",
    ],
)
@pytest.mark.parametrize("shapes", BCAST[:6])
def test_binary_int32(op, shapes):
    a = r(shapes[0], "int32", lo=-50, hi=50)
    b = r(shapes[1], "int32", lo=-7, hi=7)
    if op in ("FLOOR_DIV", "FLOOR_MOD", "DIV"):
        b = np.where(b == 0, 3, b).astype(np.int32)
    check(op, [In(a), In(b)], _opts(op))


@pytest.mark.parametrize(
    "op", ["ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "FLOOR_DIV", "FLOOR_MOD"]
)
def test_binary_int64(op):
    a = r((3, 4), "int64", lo=-50, hi=50)
    b = r((4,), "int64", lo=-7, hi=7)
    b = np.where(b == 0, 5, b).astype(np.int64)
    if not litert_refuses(op, [In(a), In(b)], _opts(op)):
        check(op, [In(a), In(b)], _opts(op))
        return
    # LiteRT 2.3 has no int64 FLOOR_DIV: numpy (same floor semantics) is the oracle
    data, feeds = build(op, [In(a), In(b)], _opts(op))
    (got,) = wick.load(data)(*feeds)
    fn = {"FLOOR_DIV": np.floor_divide, "FLOOR_MOD": np.mod}[op]
    np.testing.assert_array_equal(got, fn(a, b))


def test_floor_div_mod_negative_operands():
    """Every sign combination, exact multiples included: floor semantics, sign of the divisor."""
    a = np.array([7, -7, 7, -7, 6, -6, 0, 1, -1, 2**31 - 1, -(2**31)], np.int32)
    b = np.array([2, 2, -2, -2, 3, -3, 5, -5, 5, 2, 3], np.int32)
    (fd,) = check("FLOOR_DIV", [In(a), In(b)])
    (fm,) = check("FLOOR_MOD", [In(a), In(b)])
    np.testing.assert_array_equal(fd, np.floor_divide(a, b))
    np.testing.assert_array_equal(fm, np.mod(a, b))
    x, y = a.astype(np.float32), b.astype(np.float32)
    check("FLOOR_DIV", [In(x), In(y)])
    check("FLOOR_MOD", [In(x), In(y)])


def test_int_div_truncates():
    a = np.array([7, -7, 7, -7, 1, -1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 3], np.int32)
    (got,) = check("DIV", [In(a), In(b)], _opts("DIV"))
    np.testing.assert_array_equal(got, [3, -3, -3, 3, 0, 0])


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV", "FLOOR_MOD"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_division_by_zero(op, dtype):
    a = np.array([1, 2, 3], dtype)
    b = np.array([1, 0, 2], dtype)
    fails(op, [In(a), In(b)], _opts(op), status=INVALID_INPUT, match="division by zero")
    fails(op, [In(a), C(b)], _opts(op), status=INVALID_INPUT, match="division by zero")


def test_int_pow():
    a = r((3, 4), "int32", lo=-5, hi=5)
    b = r((3, 4), "int32", lo=0, hi=6)
    check("POW", [In(a), In(b)])


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_maximum_minimum_nan(op):
    """LiteRT has no consistent NaN rule here: its reference kernel returns the second operand
    when either is NaN, XNNPACK (the default) the first. wick propagates NaN like numpy's
    np.maximum / np.minimum (IEEE maximum); numpy is the oracle."""
    a = np.array([np.nan, 1, np.nan, -np.inf, 0.5], np.float32)
    b = np.array([1, np.nan, np.nan, 2, -0.5], np.float32)
    data, feeds = build(op, [In(a), In(b)])
    (got,) = wick.load(data)(*feeds)
    np.testing.assert_array_equal(got, (np.maximum if op == "MAXIMUM" else np.minimum)(a, b))


@pytest.mark.parametrize("op", COMPARE)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "int8", "uint8", "bool"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (3, 1)), ((), (4,))])
def test_compare(op, dtype, shapes):
    a, b = r(shapes[0], dtype, lo=-3, hi=3), r(shapes[1], dtype, lo=-3, hi=3)
    if dtype in ("int8", "uint8") or (dtype == "bool" and op not in ("EQUAL", "NOT_EQUAL")):
        # LiteRT aborts the whole process on these (unquantized int8/uint8 comparisons expect
        # quantization parameters; ordered bool comparisons are unsupported): numpy is the oracle
        data, feeds = build(op, [In(a), In(b)], out_dtypes=["bool"])
        (got,) = wick.load(data)(*feeds)
        fn = {
            "EQUAL": np.equal,
            "NOT_EQUAL": np.not_equal,
            "LESS": np.less,
            "LESS_EQUAL": np.less_equal,
            "GREATER": np.greater,
            "GREATER_EQUAL": np.greater_equal,
        }[op]
        want = fn(a, b)
        assert got.dtype == np.bool_ and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        return
    check(op, [In(a), In(b)], out_dtypes=["bool"])


@pytest.mark.parametrize("op", COMPARE)
def test_compare_float_specials(op):
    a = np.array([np.nan, 0.0, -0.0, np.inf, 1, np.nan], np.float32)
    b = np.array([np.nan, -0.0, 0.0, np.inf, np.nan, 1], np.float32)
    check(op, [In(a), In(b)], out_dtypes=["bool"])


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 1, 3), (4, 1)), ((), (5,))])
def test_logical(op, shapes):
    check(op, [In(r(shapes[0], "bool")), In(r(shapes[1], "bool"))])


@pytest.mark.parametrize(
    "op, a, b, opts, status, match",
    [
        (
            "ADD",
            ((2, 3), "float32"),
            ((4,), "float32"),
            _opts("ADD"),
            MALFORMED,
            r"shapes \[2,3\] and \[4\] do not broadcast",
        ),
        ("MUL", ((2, 3), "float32"), ((2, 3), "int32"), _opts("MUL"), MALFORMED, "types differ"),
        (
            "ADD",
            ((2, 3), "float32"),
            ((2, 3), "float32"),
            dict(fused_activation_function=9),
            MALFORMED,
            "unknown fused activation 9",
        ),
        ("LOGICAL_AND", ((2,), "int32"), ((2,), "int32"), None, MALFORMED, "must be bool"),
        ("SUB", ((2,), "int8"), ((2,), "int8"), _opts("SUB"), UNSUPPORTED, "int8"),
        ("LESS", ((3,), "float32"), ((2,), "float32"), None, MALFORMED, "do not broadcast"),
    ],
)
def test_binary_malformed(op, a, b, opts, status, match):
    out = ["bool"] if op in COMPARE or op.startswith("LOGICAL") else None
    fails(op, [In(r(*a)), In(r(*b))], opts, status=status, match=match, out_dtypes=out)
