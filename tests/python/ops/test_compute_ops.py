"""Differential tests of wick's compute operators against LiteRT: TRANSPOSE_CONV, BATCH_MATMUL,
ARG_MAX/ARG_MIN, LOG_SOFTMAX, L2_NORMALIZATION, CUMSUM, RESIZE_BILINEAR,
RESIZE_NEAREST_NEIGHBOR, and STABLEHLO_COMPOSITE on real litert-torch files.

Float32 outputs must be within 1e-5 * max(1, max|ref|) of LiteRT (default resolver, which runs
XNNPACK where it can: a different summation order); integer outputs and the pixel-picking of
the resize ops must be identical. The bilinear resize is also checked *bit-exact* against
LiteRT's reference kernels, because wick evaluates the same float formula in the same order.
Each op has malformed-parameter cases asserting a WickError that names the problem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flatbuffers import flexbuffers

import wick
from tests.python.ops._harness import (
    FLOAT_REL,
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
from tests.python.oracles.litert import run_litert, tolerance_check
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(1234)
F32 = ["float32"]


def r(shape, dtype="float32", **kw):
    return rand(RNG, shape, dtype, **kw)


def i32(*v):
    return np.array(v, np.int32)


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


# ============================================================================ BATCH_MATMUL


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 3, 4), (4, 5)),  # rank mismatch: rhs broadcast
        ((3, 4), (2, 4, 5)),  # rank mismatch: lhs broadcast
        ((2, 1, 3, 4), (1, 3, 4, 5)),  # both broadcast
        ((1, 2, 1, 3, 4), (2, 1, 3, 4, 1)),  # rank 5, n = 1
        ((1, 1, 4), (3, 4, 2)),
        ((2, 1, 7), (2, 7, 1)),  # m = n = 1
        ((3, 37, 70), (3, 70, 45)),  # GEMM tile remainders (MR, NR)
        ((2, 130, 96), (96, 200)),  # several GEMM tasks per batch, broadcast rhs
    ],
)
@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul(a_shape, b_shape, adj):
    adj_x, adj_y = adj
    a, b = r(a_shape), r(b_shape)
    if adj_x:
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2))
    if adj_y:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2))
    opts = dict(adj_x=adj_x, adj_y=adj_y)
    (got,) = check("BATCH_MATMUL", [In(a), In(b)], opts)
    # and with a constant rhs (LiteRT caches a transposed copy then)
    check("BATCH_MATMUL", [In(a), C(b)], opts)
    want = np.matmul(np.swapaxes(a, -1, -2) if adj_x else a, np.swapaxes(b, -1, -2) if adj_y else b)
    assert got.shape == want.shape


def test_batch_matmul_rank6_against_numpy():
    """Rank 6 is beyond what LiteRT's kernel accepts; numpy is the oracle there."""
    a, b = r((2, 1, 2, 1, 3, 4)), r((1, 3, 1, 2, 4, 5))
    data, feeds = build("BATCH_MATMUL", [In(a), In(b)], dict(adj_x=False, adj_y=False))
    (got,) = wick.load(data)(*feeds)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    t = tolerance_check(got, want, rel=FLOAT_REL)
    assert t, t.message


@pytest.mark.parametrize(
    "a_shape, b_shape, opts, match",
    [
        ((3, 4), (5, 6), {}, "inner dimensions differ"),
        ((2, 3, 4), (3, 4, 5), {}, "does not broadcast"),
        ((4,), (4, 5), {}, "rank >= 2"),
        ((3, 4), (3, 5), dict(adj_y=True), "inner dimensions differ"),
    ],
)
def test_batch_matmul_malformed(a_shape, b_shape, opts, match):
    fails(
        "BATCH_MATMUL",
        [In(r(a_shape)), In(r(b_shape))],
        dict(adj_x=False, adj_y=False) | opts,
        status=MALFORMED,
        match=match,
    )


def test_batch_matmul_int8_is_refused():
    fails(
        "BATCH_MATMUL",
        [In(r((2, 3), "int8")), In(r((3, 2), "int8"))],
        dict(adj_x=False, adj_y=False),
        status=UNSUPPORTED,
        match="float32 only",
    )


# ============================================================================ ARG_MAX / ARG_MIN


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "int8", "uint8"])
@pytest.mark.parametrize("out_type", ["int32", "int64"])
@pytest.mark.parametrize(
    "shape, axis", [((3, 4, 5), 1), ((3, 4, 5), -1), ((6,), 0), ((2, 3, 1, 4), 2), ((4, 3), -2)]
)
def test_arg_minmax(op, dtype, out_type, shape, axis):
    # small value range: many ties, which must resolve to the first index
    x = r(shape, dtype, lo=-3, hi=3)
    for axis_t in ("int32", "int64"):
        ops = [In(x), np.array([axis], axis_t)]
        opts = dict(output_type=out_type)
        if dtype != "int64":
            check(op, ops, opts, out_dtypes=[out_type])
            continue
        # LiteRT refuses int64 data ("only float32, int types and bool"); numpy is the oracle
        data, feeds = build(op, ops, opts, out_dtypes=[out_type])
        (got,) = wick.load(data)(*feeds)
        want = (np.argmax if op == "ARG_MAX" else np.argmin)(x, axis=axis).astype(out_type)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
def test_arg_minmax_runtime_axis_and_scalar_axis(op):
    x = r((3, 5, 2))
    check(op, [In(x), In(np.array([1], np.int32))], dict(output_type="int32"), out_dtypes=["int32"])
    check(op, [In(x), np.array(-1, np.int32)], dict(output_type="int64"), out_dtypes=["int64"])


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
def test_arg_minmax_ties_and_extremes(op):
    x = np.array([[1, 1, 1], [-np.inf, 5, 5], [np.inf, np.inf, 0], [0, -0.0, 0]], np.float32)
    (got,) = check(op, [In(x), i32(1)], dict(output_type="int32"), out_dtypes=["int32"])
    want = np.argmax(x, 1) if op == "ARG_MAX" else np.argmin(x, 1)
    np.testing.assert_array_equal(got, want)


def test_arg_max_bool():
    x = r((4, 6), "bool")
    check("ARG_MAX", [In(x), i32(1)], dict(output_type="int32"), out_dtypes=["int32"])


@pytest.mark.parametrize("axis", [3, -4])
def test_arg_minmax_bad_axis(axis):
    fails(
        "ARG_MAX",
        [In(r((2, 3, 4))), i32(axis)],
        dict(output_type="int32"),
        out_dtypes=["int32"],
        status=MALFORMED,
        match=f"axis {axis} is outside rank 3",
    )
    fails(
        "ARG_MIN",
        [In(r((2, 3, 4))), In(i32(axis))],
        dict(output_type="int32"),
        out_dtypes=["int32"],
        status=INVALID_INPUT,
        match=f"axis {axis} is outside rank 3",
    )


def test_arg_minmax_malformed():
    fails(
        "ARG_MAX",
        [In(r((2, 3))), i32(0, 1)],
        dict(output_type="int32"),
        out_dtypes=["int32"],
        match="one value",
    )
    fails(
        "ARG_MAX",
        [In(r((2, 3))), i32(1)],
        dict(output_type="float32"),
        out_dtypes=["float32"],
        match="output_type must be int32 or int64",
    )
    fails(
        "ARG_MAX",
        [In(r((2, 3))), i32(1)],
        dict(output_type="int64"),
        out_dtypes=["int32"],
        match="declared int32 but the op produces int64",
    )
    fails(
        "ARG_MAX",
        [In(r((2, 0, 3))), i32(1)],
        dict(output_type="int32"),
        out_dtypes=["int32"],
        match="empty",
    )


# ============================================================================ LOG_SOFTMAX


@pytest.mark.parametrize("shape", [(7,), (3, 10), (2, 3, 17), (2, 2, 2, 1), (1, 1000)])
def test_log_softmax(shape):
    check("LOG_SOFTMAX", [In(r(shape) * 10)])


def test_log_softmax_extreme_values():
    x = np.array([[1e30, 0, -1e30], [-80, -80, -80], [100, 100.5, 99]], np.float32)
    check("LOG_SOFTMAX", [In(x)])


def test_log_softmax_malformed():
    fails("LOG_SOFTMAX", [In(r((3, 4), "int32"))], status=UNSUPPORTED, match="int32")


# ============================================================================ L2_NORMALIZATION


@pytest.mark.parametrize("shape", [(7,), (3, 10), (2, 3, 17), (2, 2, 2, 5)])
def test_l2_normalization(shape):
    check("L2_NORMALIZATION", [In(r(shape))], dict(fused_activation_function="NONE"))


def test_l2_normalization_zero_and_tiny_rows():
    """LiteRT divides by max(norm, 1e-6): an all-zero row gives zeros, a tiny one is scaled."""
    x = np.array([[0, 0, 0, 0], [1e-8, 0, -1e-8, 0], [3, 4, 0, 0], [1e-3, 0, 0, 0]], np.float32)
    (got,) = check("L2_NORMALIZATION", [In(x)], dict(fused_activation_function="NONE"))
    np.testing.assert_array_equal(got[0], 0)
    np.testing.assert_allclose(got[1], x[1] / 1e-6, rtol=1e-6)


def test_l2_normalization_activation_refused():
    assert litert_refuses(
        "L2_NORMALIZATION", [In(r((2, 3)))], dict(fused_activation_function="RELU")
    )
    fails(
        "L2_NORMALIZATION",
        [In(r((2, 3)))],
        dict(fused_activation_function="RELU"),
        status=UNSUPPORTED,
        match="fused activation",
    )


# ============================================================================ CUMSUM


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(
    "shape, axis", [((9,), 0), ((3, 4, 5), 1), ((3, 4, 5), -1), ((3, 4, 5), 0), ((2, 1, 3), -2)]
)
def test_cumsum(dtype, exclusive, reverse, shape, axis):
    x = r(shape, dtype, lo=-50, hi=50)
    check("CUMSUM", [In(x), i32(axis)], dict(exclusive=exclusive, reverse=reverse))


def test_cumsum_runtime_axis_and_int_wrap():
    x = np.array([[2**31 - 1, 1, 5], [-(2**31), -1, 3]], np.int32)
    check("CUMSUM", [In(x), In(i32(1))], dict(exclusive=False, reverse=False))


def test_cumsum_malformed():
    fails(
        "CUMSUM",
        [In(r((2, 3))), i32(2)],
        dict(exclusive=False, reverse=False),
        status=MALFORMED,
        match="axis 2 is outside rank 2",
    )
    fails(
        "CUMSUM",
        [In(r((2, 3))), In(i32(-3))],
        dict(exclusive=False, reverse=False),
        status=INVALID_INPUT,
        match="axis -3 is outside rank 2",
    )
    fails(
        "CUMSUM",
        [In(r((2, 3))), np.array([1.0], np.float32)],
        dict(exclusive=False, reverse=False),
        match="axis must be int32 or int64",
    )
    fails(
        "CUMSUM",
        [In(r((2, 3), "int8")), i32(0)],
        dict(exclusive=False, reverse=False),
        status=UNSUPPORTED,
        match="int8",
    )


# ============================================================================ RESIZE


RESIZE_SHAPES = [
    (3, 4, 7, 9),
    (4, 4, 8, 8),
    (5, 7, 3, 2),
    (1, 1, 3, 3),
    (3, 3, 1, 1),
    (6, 5, 6, 5),
    (2, 3, 5, 1),
    (10, 13, 17, 29),
]
MODES = [(False, False), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half", "align+half"])
@pytest.mark.parametrize("hw", RESIZE_SHAPES)
def test_resize_bilinear(mode, hw):
    ac, hp = mode
    ih, iw, oh, ow = hw
    x = r((2, ih, iw, 3))
    opts = dict(align_corners=ac, half_pixel_centers=hp)
    ops = [In(x), i32(oh, ow)]
    if ac and hp:  # LiteRT refuses this combination; so does wick
        assert litert_refuses("RESIZE_BILINEAR", ops, opts)
        fails("RESIZE_BILINEAR", ops, opts, status=MALFORMED, match="cannot both be set")
        return
    check("RESIZE_BILINEAR", ops, opts)
    # bit-exact against LiteRT's reference kernel (same formula, same evaluation order)
    data, feeds = build("RESIZE_BILINEAR", ops, opts)
    ref = run_litert(data, feeds, reference=True)[0]
    got = wick.load(data)(*feeds)[0]
    assert got.tobytes() == ref.tobytes()


@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half", "align+half"])
@pytest.mark.parametrize("hw", RESIZE_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int16"])
def test_resize_nearest(mode, hw, dtype):
    ac, hp = mode
    ih, iw, oh, ow = hw
    x = r((2, ih, iw, 3), dtype)
    check(
        "RESIZE_NEAREST_NEIGHBOR",
        [In(x), i32(oh, ow)],
        dict(align_corners=ac, half_pixel_centers=hp),
    )


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_resize_runtime_size(op):
    x = r((1, 4, 5, 2))
    check(op, [In(x), In(i32(7, 3))], dict(align_corners=False, half_pixel_centers=True))
    fails(
        op,
        [In(x), In(i32(0, 3))],
        dict(align_corners=False, half_pixel_centers=False),
        status=INVALID_INPUT,
        match="must be positive",
    )


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize(
    "x_shape, size, match",
    [
        ((1, 4, 4, 2), i32(-2, 3), "must be positive"),
        ((1, 4, 4, 2), i32(2, 3, 4), "2 values"),
        ((4, 4, 2), i32(2, 3), "rank 4"),
        ((1, 0, 4, 2), i32(2, 3), "empty"),
    ],
)
def test_resize_malformed(op, x_shape, size, match):
    fails(
        op,
        [In(r(x_shape)), size],
        dict(align_corners=False, half_pixel_centers=False),
        status=MALFORMED,
        match=match,
    )


# ============================================================================ STABLEHLO_COMPOSITE

MODELS = Path(__file__).resolve().parents[4] / "shared" / "models"


def _composite_model(inner_rank: int = 2):
    """A hand-written composite: main calls subgraph 1 (y = x * 2 + c) through a composite."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    dec = w.add_subgraph("decomposition")
    shape = [2, 3] if inner_rank == 2 else [6]
    x = main.add_tensor("x", shape, "float32")
    y = main.add_tensor("y", shape, "float32")
    main.add_operator(
        "STABLEHLO_COMPOSITE",
        [x],
        [y],
        options=dict(
            name="test.double_plus",
            decomposition_subgraph_index=1,
            composite_attributes=bytes(flexbuffers.Dumps({})),
            version=0,
        ),
    )
    main.set_inputs([x])
    main.set_outputs([y])
    dx = dec.add_tensor("dx", shape, "float32")
    two = dec.add_constant("two", np.float32(2.0))
    c = dec.add_constant("c", np.arange(shape[-1], dtype=np.float32))
    t = dec.add_tensor("t", shape, "float32")
    dy = dec.add_tensor("dy", shape, "float32")
    dec.add_operator("MUL", [dx, two], [t], options=dict(fused_activation_function="NONE"))
    dec.add_operator("ADD", [t, c], [dy], options=dict(fused_activation_function="NONE"))
    dec.set_inputs([dx])
    dec.set_outputs([dy])
    return w.finish()


def test_composite_handwritten():
    data = _composite_model()
    x = r((2, 3))
    ref = run_litert(data, [x])
    got = wick.load(data)(x)
    t = tolerance_check(got[0], ref[0], rel=FLOAT_REL)
    assert t, t.message
    np.testing.assert_allclose(got[0], x * 2 + np.arange(3), rtol=1e-6)


def test_composite_runs_twice():
    m = wick.load(_composite_model())
    for _ in range(3):
        x = r((2, 3))
        np.testing.assert_allclose(m(x)[0], x * 2 + np.arange(3), rtol=1e-6)


COMPOSITE_ATTRS = bytes(flexbuffers.Dumps({}))


def _composite(sg, ins, outs, index, name="test.composite"):
    sg.add_operator(
        "STABLEHLO_COMPOSITE",
        ins,
        outs,
        options=dict(
            name=name,
            decomposition_subgraph_index=index,
            composite_attributes=COMPOSITE_ATTRS,
            version=0,
        ),
    )


def _affine_subgraph(w, shape, scale, offset, nested_index=None):
    """A decomposition y = x * scale + offset (the MUL done by a nested composite when
    nested_index is given)."""
    sg = w.add_subgraph(f"affine{len(w._subgraphs)}")
    x = sg.add_tensor("x", shape, "float32")
    t = sg.add_tensor("t", shape, "float32")
    y = sg.add_tensor("y", shape, "float32")
    if nested_index is None:
        sg.add_operator(
            "MUL",
            [x, sg.add_constant("s", np.float32(scale))],
            [t],
            options=dict(fused_activation_function="NONE"),
        )
    else:
        _composite(sg, [x], [t], nested_index, name="test.inner")
    sg.add_operator(
        "ADD",
        [t, sg.add_constant("o", np.float32(offset))],
        [y],
        options=dict(fused_activation_function="NONE"),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return sg


def test_composite_nested_and_shared():
    """main: two composites calling subgraph 1, which calls subgraph 2 through a composite."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    shape = [3, 4]
    x = main.add_tensor("x", shape, "float32")
    h = main.add_tensor("h", shape, "float32")
    y = main.add_tensor("y", shape, "float32")
    _composite(main, [x], [h], 1)
    _composite(main, [h], [y], 1)
    main.set_inputs([x])
    main.set_outputs([y])
    _affine_subgraph(w, shape, 1.0, 0.5, nested_index=2)  # 1: inner(x) + 0.5
    _affine_subgraph(w, shape, 3.0, 0.0)  # 2: 3x
    data = w.finish()
    xv = r(shape)
    got = wick.load(data)(xv)[0]
    np.testing.assert_allclose(got, (xv * 3 + 0.5) * 3 + 0.5, rtol=1e-6)
    t = tolerance_check(got, run_litert(data, [xv])[0], rel=FLOAT_REL)
    assert t, t.message


def test_composite_prepared_at_invoke():
    """The composite's input shape comes from a RESHAPE with a run-time shape: the node is
    prepared at every invoke and must reuse (re-prepare) one child graph."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [12], "float32")
    shp = main.add_tensor("shape", [2], "int32")
    h = main.add_tensor("h", [1], "float32")
    y = main.add_tensor("y", [1], "float32")
    main.add_operator("RESHAPE", [x, shp], [h])
    _composite(main, [h], [y], 1)
    main.set_inputs([x, shp])
    main.set_outputs([y])
    _affine_subgraph(w, [1, 1], 2.0, 1.0)
    data = w.finish()
    m = wick.load(data)
    for s in ([3, 4], [2, 6], [12, 1], [3, 4]):
        xv = r((12,))
        (got,) = m(xv, np.array(s, np.int32))
        np.testing.assert_allclose(got, xv.reshape(s) * 2 + 1, rtol=1e-6)


def test_composite_resized_input():
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [None, 4], "float32")
    y = main.add_tensor("y", [None, 4], "float32")
    _composite(main, [x], [y], 1)
    main.set_inputs([x])
    main.set_outputs([y])
    _affine_subgraph(w, [1, 4], -1.0, 2.0)
    data = w.finish()
    m = wick.load(data)
    for n in (1, 5, 2):
        xv = r((n, 4))
        np.testing.assert_allclose(m(xv)[0], 2 - xv, rtol=1e-6)


def test_composite_malformed():
    def model(outputs=1, dec_dtype="float32", index=1):
        w = ModelWriter()
        main = w.add_subgraph("main")
        x = main.add_tensor("x", [2, 3], "float32")
        outs = [main.add_tensor(f"y{k}", [2, 3], "float32") for k in range(outputs)]
        _composite(main, [x], outs, index)
        main.set_inputs([x])
        main.set_outputs(outs)
        dec = w.add_subgraph("dec")
        dx = dec.add_tensor("dx", [2, 3], dec_dtype)
        dy = dec.add_tensor("dy", [2, 3], dec_dtype)
        dec.add_operator("ADD", [dx, dx], [dy], options=dict(fused_activation_function="NONE"))
        dec.set_inputs([dx])
        dec.set_outputs([dy])
        return w.finish()

    x = r((2, 3))
    with pytest.raises(wick.WickError, match="has 2 outputs but subgraph 1 returns 1"):
        wick.load(model(outputs=2))(x)
    with pytest.raises(wick.WickError, match="does not match the type"):
        wick.load(model(dec_dtype="int32"))(x)
    with pytest.raises(wick.WickError, match="subgraph"):
        wick.load(model(index=7))(x)
    with pytest.raises(wick.WickError, match="cycle|calls itself"):
        wick.load(model(index=0))(x)


def _skip_if_missing(path: Path):
    if not path.exists():
        pytest.skip(f"{path} is absent (shared model folder not available)")


def _run_real(name: str):
    path = MODELS / name
    _skip_if_missing(path)
    data = path.read_bytes()
    from tests.python.oracles.litert import random_inputs

    feeds = random_inputs(data, seed=0)
    ref = run_litert(data, feeds)
    try:
        got = wick.load(data)(*feeds)
    except wick.WickError as e:
        if e.status == UNSUPPORTED and "is not supported by wick" in str(e):
            pytest.skip(f"{name} needs an op wick lacks: {e}")
        raise
    assert len(got) == len(ref)
    for g, rr in zip(got, ref, strict=True):
        t = tolerance_check(g, rr, rel=1e-4)  # whole-model bar (several fp32 ops)
        assert t, t.message


@pytest.mark.parametrize(
    "name",
    ["l2_norm_composite.tflite", "simple_group_norm_op.tflite", "norm.tflite", "rope.tflite"],
)
def test_real_models(name):
    _run_real(name)
