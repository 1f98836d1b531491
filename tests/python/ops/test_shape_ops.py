"""Differential tests of wick's shape and data-movement operators against LiteRT.

Every case builds a one-operator .tflite file with the writer, runs it on wick and on LiteRT's
interpreter, and requires *bit-identical* outputs (same shape, dtype and bytes): these ops only
move elements, so there is no rounding to tolerate (RANGE's float output is accumulated the way
LiteRT does it, so it is bit-exact too).

Operands are either constants (``C``, baked into the file: the op is usually folded at prepare)
or graph inputs (``In``, fed at run time). Giving a shape/begin/axis/perm operand as ``In``
exercises the deferred path: prepare cannot know the output shape, returns WICK_STATUS_DEFER and
the op is prepared again at invoke, where bad values must fail with "invalid input value".

Malformed-parameter cases assert that wick raises ``WickError`` whose message names the problem.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import wick
from tests.python.ops import _harness as H
from tests.python.ops._harness import INVALID_INPUT, MALFORMED, C, In, build
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(0)

# Types a data-movement op must handle alike (it never looks at the values).
ALL_TYPES = ["float32", "int32", "int64", "bool", "int8", "uint8", "int16", "float16"]


def rand(shape, dtype="float32"):
    """Random values of any supported dtype (distinct enough to catch misplaced elements)."""
    return H.rand(RNG, shape, dtype)


def invoke(runner, feeds):
    for i, a in enumerate(feeds):
        if np.ndim(a) == 0:
            t = runner._lib.wick_interpreter_input(runner._it, i)
            a = np.asarray(a)
            assert runner._lib.wick_tensor_copy_from(t, a.ctypes.data, a.nbytes) == 0
        else:
            runner._set_input(i, a)
    return runner.invoke()


def run_wick(data, feeds, memory_limit=0):
    """wick.load(data)(*feeds), except that 0-d feeds are copied in directly (the binding's
    np.ascontiguousarray turns a 0-d array into shape (1,), which a rank-0 input refuses) and
    the interpreter is destroyed before the model."""
    rt = wick.load(data, memory_limit=memory_limit)
    runner = rt.signature(None)
    try:
        return invoke(runner, feeds)
    finally:
        # Runtime and runner reference each other; when the garbage collector breaks that
        # cycle it may destroy the model before the interpreter (a use-after-free under ASan).
        # Destroy the interpreter first, explicitly.
        runner.__del__()


def run_ref(data, feeds):
    """LiteRT's outputs from its builtin kernels without the XNNPACK delegate (the harness's
    "builtin" peer, in its child process: TFLite's op semantics; XNNPACK differs, e.g. it ignores
    begin_mask in some STRIDED_SLICE cases, and BUILTIN_REF lacks newer op versions such as
    RANGE 2). 0-d feeds stay 0-d. Raises RuntimeError with LiteRT's reason when it cannot run
    the file."""
    outs = H.peer(data, feeds, "builtin")
    if isinstance(outs, str):
        raise RuntimeError(outs)
    return outs


def check(op, operands, options=None, expect=None, **kw):
    """Runs on wick and LiteRT; requires identical outputs. Returns wick's outputs.

    wick handles every fixed-size type where LiteRT supports only some (e.g. no bool PACK), and
    a few generalisations (REVERSE_V2 of non-adjacent axes): when LiteRT refuses the case as
    unsupported, ``expect`` (the operands' numpy values -> list of
    expected arrays) is the oracle instead."""
    data, feeds = build(op, operands, options, **kw)
    try:
        ref = run_ref(data, feeds)
    except RuntimeError as e:
        if expect is None or not re.search(r"(?i)type|supported", str(e)):
            raise
        ref = expect(*[x.value if isinstance(x, (In, C)) else np.asarray(x) for x in operands])
    got = run_wick(data, feeds)
    assert len(got) == len(ref)
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        r = np.asarray(r)
        assert g.dtype == r.dtype, f"output {j}: dtype {g.dtype} != LiteRT {r.dtype}"
        assert g.shape == r.shape, f"output {j}: shape {g.shape} != LiteRT {r.shape}"
        assert g.tobytes() == r.tobytes(), f"output {j} differs:\nwick {g}\nLiteRT {r}"
    return got


def fails(op, operands, options=None, match=None, status=None, **kw):
    """wick must refuse (at load/prepare, or at invoke for run-time values) with a message."""
    data, feeds = build(op, operands, options, **kw)
    with pytest.raises(wick.WickError) as e:
        run_wick(data, feeds)
    if match:
        assert re.search(match, str(e.value)), str(e.value)
    if status:
        assert e.value.status == status, str(e.value)
    return e.value


# ============================================================================ TRANSPOSE


@pytest.mark.parametrize(
    "shape,perm",
    [
        ((3, 4), (1, 0)),
        ((2, 3, 4), (2, 0, 1)),
        ((2, 3, 4, 5), (0, 3, 1, 2)),
        ((2, 3, 4, 5), (0, 2, 3, 1)),
        ((2, 3, 1, 4, 2), (4, 2, 0, 3, 1)),
        ((2, 1, 3, 2, 2, 3), (5, 0, 4, 1, 3, 2)),
        ((2, 3, 4), (0, 1, 2)),  # identity
        ((1, 5, 1, 3), (2, 0, 3, 1)),  # moves only size-1 dims around
        ((7,), (0,)),
    ],
)
def test_transpose(shape, perm):
    check("TRANSPOSE", [In(rand(shape)), C(np.array(perm, np.int32))])


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_transpose_types(dtype):
    check("TRANSPOSE", [In(rand((2, 3, 4), dtype)), C(np.array([1, 2, 0], np.int32))])


def test_transpose_runtime_perm():
    check("TRANSPOSE", [In(rand((2, 3, 4))), In(np.array([2, 0, 1], np.int32))])


def test_transpose_constant_folded():
    check("TRANSPOSE", [C(rand((3, 2))), C(np.array([1, 0], np.int32))])


@pytest.mark.parametrize(
    "perm,match", [((0, 0, 1), "not a permutation"), ((0, 3, 1), "outside"), ((0, 1), "entries")]
)
def test_transpose_bad_perm(perm, match):
    fails("TRANSPOSE", [In(rand((2, 3, 4))), C(np.array(perm, np.int32))], match=match)


def test_transpose_bad_runtime_perm():
    fails(
        "TRANSPOSE",
        [In(rand((2, 3, 4))), In(np.array([2, 2, 1], np.int32))],
        match="not a permutation",
        status=INVALID_INPUT,
    )


# ============================================================================ SQUEEZE / EXPAND_DIMS


@pytest.mark.parametrize(
    "shape,dims",
    [
        ((1, 3, 1, 4), []),
        ((1, 3, 1, 4), [0]),
        ((1, 3, 1, 4), [-2]),
        ((1, 3, 1, 4), [0, 2]),
        ((1, 1), []),
        ((3, 4), []),
    ],
)
def test_squeeze(shape, dims):
    check("SQUEEZE", [In(rand(shape))], {"squeeze_dims": dims})


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
def test_squeeze_types(dtype):
    check("SQUEEZE", [In(rand((2, 1, 3), dtype))], {"squeeze_dims": [1]})


@pytest.mark.parametrize("dims,match", [([1], "not 1"), ([5], "outside")])
def test_squeeze_bad(dims, match):
    fails("SQUEEZE", [In(rand((1, 3, 1)))], {"squeeze_dims": dims}, match=match)


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -4])
def test_expand_dims(axis):
    check("EXPAND_DIMS", [In(rand((2, 3, 4))), C(np.array(axis, np.int32))])


@pytest.mark.parametrize("dtype", ["int8", "bool", "int64"])
def test_expand_dims_types_int64_axis(dtype):
    check("EXPAND_DIMS", [In(rand((2, 3), dtype)), C(np.array([1], np.int64))])


def test_expand_dims_scalar():
    check("EXPAND_DIMS", [In(np.float32(3.5)), C(np.array(0, np.int32))])


def test_expand_dims_runtime_axis():
    check("EXPAND_DIMS", [In(rand((2, 3))), In(np.array(-1, np.int32))])
    fails(
        "EXPAND_DIMS",
        [In(rand((2, 3))), In(np.array(4, np.int32))],
        match="outside",
        status=INVALID_INPUT,
    )


def test_expand_dims_bad_axis():
    fails(
        "EXPAND_DIMS",
        [In(rand((2, 3))), C(np.array(-4, np.int32))],
        match="outside",
        status=MALFORMED,
    )


# ============================================================================ SHAPE


@pytest.mark.parametrize("out_type", ["int32", "int64"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), (1, 1, 7, 1, 2)])
def test_shape(shape, out_type):
    check("SHAPE", [In(rand(shape, "int8"))], {"out_type": out_type}, out_dtypes=[out_type])


def test_shape_bad_out_type():
    fails(
        "SHAPE",
        [In(rand((2, 3)))],
        {"out_type": "float32"},
        out_dtypes=["float32"],
        match="out_type",
    )


# ============================================================================ FILL


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_fill(dtype):
    check("FILL", [C(np.array([2, 3, 1], np.int32)), C(rand((), dtype))], out_dtypes=[dtype])


@pytest.mark.parametrize("dims_dtype", ["int32", "int64"])
def test_fill_runtime_dims(dims_dtype):
    check("FILL", [In(np.array([3, 4], dims_dtype)), In(np.float32(2.5))], out_dtypes=["float32"])
    check("FILL", [In(np.array([0, 4], dims_dtype)), C(np.int32(7))], out_dtypes=["int32"])


def test_fill_bad_dims():
    fails(
        "FILL",
        [In(np.array([3, -1], np.int32)), C(np.float32(1))],
        match="dims\\[1\\]",
        status=INVALID_INPUT,
        out_dtypes=["float32"],
    )
    fails(
        "FILL",
        [C(np.array([3, -1], np.int32)), C(np.float32(1))],
        match="dims\\[1\\]",
        status=MALFORMED,
        out_dtypes=["float32"],
    )
    fails(
        "FILL",
        [C(np.array([3], np.int32)), C(np.array([1.0], np.float32))],
        match="scalar",
        out_dtypes=["float32"],
    )


# ============================================================================ RANGE


@pytest.mark.parametrize(
    "start,limit,delta",
    [(0, 10, 1), (3, 18, 4), (10, 0, -3), (-5, 5, 2), (7, 8, 100), (0, 1, 1), (4, 4, 1)],
)
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_range(start, limit, delta, dtype):
    check(
        "RANGE", [C(np.array(start, dtype)), C(np.array(limit, dtype)), C(np.array(delta, dtype))]
    )


@pytest.mark.parametrize("args", [(0.1, 2.3, 0.2), (1.0, -1.0, -0.15), (-3.0, 100.0, 0.7)])
def test_range_float_accumulation(args):
    check("RANGE", [In(np.float32(a)) for a in args])


def test_range_int64_extremes():
    big = np.iinfo(np.int64)
    check("RANGE", [In(np.int64(big.max - 5)), In(np.int64(big.max)), In(np.int64(2))])
    check("RANGE", [In(np.int64(big.min)), In(np.int64(big.min + 3)), In(np.int64(1))])


@pytest.mark.parametrize(
    "args,match",
    [((0, 10, 0), "delta is 0"), ((0, 10, -1), "moves away"), ((10, 0, 1), "moves away")],
)
def test_range_bad(args, match):
    fails("RANGE", [In(np.int32(a)) for a in args], match=match, status=INVALID_INPUT)
    fails("RANGE", [C(np.float32(a)) for a in args], match=match, status=MALFORMED)


def test_range_too_big():
    big = np.iinfo(np.int64)
    fails(
        "RANGE",
        [In(np.int64(big.min)), In(np.int64(big.max)), In(np.int64(1))],
        match="elements",
        status=INVALID_INPUT,
    )
    fails(
        "RANGE",
        [In(np.float32(0)), In(np.float32(1e30)), In(np.float32(1e-30))],
        match="too many",
        status=INVALID_INPUT,
    )


# ============================================================================ SLICE


def slice_shape(shape, begin, size):
    return [d - b if s == -1 else s for d, b, s in zip(shape, begin, size, strict=True)]


@pytest.mark.parametrize(
    "shape,begin,size",
    [
        ((4, 5), (1, 2), (2, 3)),
        ((4, 5), (0, 0), (-1, -1)),
        ((4, 5), (3, 1), (1, -1)),
        ((2, 3, 4, 5), (1, 0, 2, 1), (1, 3, 2, 3)),
        ((2, 3, 4, 5, 2), (0, 1, 1, 0, 1), (2, 2, -1, 5, 1)),
        ((6,), (2,), (0,)),
    ],
)
def test_slice(shape, begin, size):
    check(
        "SLICE",
        [In(rand(shape)), C(np.array(begin, np.int32)), C(np.array(size, np.int32))],
        out_shapes=[slice_shape(shape, begin, size)],
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_slice_types(dtype):
    check(
        "SLICE",
        [In(rand((3, 4), dtype)), C(np.array([1, 1], np.int64)), C(np.array([2, -1], np.int64))],
        out_shapes=[(2, 3)],
    )


def test_slice_runtime_begin_size():
    x = rand((4, 5, 6))
    check(
        "SLICE",
        [In(x), In(np.array([1, 0, 2], np.int32)), In(np.array([2, -1, 3], np.int32))],
        out_shapes=[(2, 5, 3)],
    )
    fails(
        "SLICE",
        [In(x), In(np.array([1, 0, 5], np.int32)), In(np.array([2, -1, 3], np.int32))],
        match="does not fit",
        status=INVALID_INPUT,
    )
    fails(
        "SLICE",
        [In(x), In(np.array([-1, 0, 0], np.int32)), In(np.array([1, 1, 1], np.int32))],
        match="outside",
        status=INVALID_INPUT,
    )


@pytest.mark.parametrize(
    "begin,size,match",
    [
        ((0, 6), (1, 1), "outside"),
        ((0, 0), (5, 1), "does not fit"),
        ((0, 0), (-2, 1), "does not fit"),
        ((0,), (1,), "entries"),
    ],
)
def test_slice_bad(begin, size, match):
    fails(
        "SLICE",
        [In(rand((4, 5))), C(np.array(begin, np.int32)), C(np.array(size, np.int32))],
        match=match,
        status=MALFORMED,
    )


# ============================================================================ STRIDED_SLICE


def ss(x, begin, end, strides, runtime=(), **masks):
    """Operands of a STRIDED_SLICE; names in `runtime` become graph inputs."""
    ops = {"begin": begin, "end": end, "strides": strides}
    vals = [In(x)]
    for k in ("begin", "end", "strides"):
        v = np.array(ops[k], np.int32)
        vals.append(In(v) if k in runtime else C(v))
    return vals, masks


SS_CASES = [
    # shape, begin, end, strides, masks
    ((4, 5), (1, 0), (3, 5), (1, 2), {}),
    ((6,), (5,), (0,), (-2,), {}),
    ((6,), (-1,), (-7,), (-1,), {}),  # full reverse via clamping
    ((6,), (-100,), (100,), (1,), {}),  # clamping both ends
    ((6,), (4,), (1,), (1,), {}),  # empty
    ((4, 5), (2, 3), (0, 0), (1, 1), {"begin_mask": 1, "end_mask": 2}),
    ((4, 5), (2, 3), (0, 0), (-1, -2), {"begin_mask": 3, "end_mask": 3}),
    ((3, 4, 5), (1, 0, 2), (2, 4, 3), (1, 1, 1), {"shrink_axis_mask": 5}),
    ((3, 4, 5), (-1, 1, -2), (0, 3, 0), (1, 1, 1), {"shrink_axis_mask": 5}),
    ((3, 4, 5), (0, 1, 0), (0, 3, 0), (1, 1, 1), {"shrink_axis_mask": 7}),  # scalar out
    ((2, 3, 4, 5), (0, 1), (0, 3), (1, 1), {"ellipsis_mask": 1}),  # [..., 1:3]
    ((2, 3, 4, 5), (1, 0, 1), (2, 0, 3), (1, 1, 1), {"ellipsis_mask": 2}),  # [1:2, ..., 1:3]
    ((2, 3, 4, 5), (1, 0), (2, 0), (1, 1), {"ellipsis_mask": 2, "shrink_axis_mask": 1}),
    ((3, 4), (0, 1, 0), (0, 3, 0), (1, 1, 1), {"new_axis_mask": 1, "end_mask": 4}),
    ((3, 4), (1, 0, 0), (3, 0, 0), (1, 1, 1), {"new_axis_mask": 2, "end_mask": 4}),
    ((3, 4, 5), (0, 0, 1), (0, 0, 3), (1, 1, 1), {"new_axis_mask": 1, "ellipsis_mask": 2}),
    ((3, 4, 5), (1,), (3,), (1,), {}),  # fewer spec entries than dims
    ((2, 3), (0, 1, 1), (0, 2, 3), (1, 1, 1), {"ellipsis_mask": 1}),  # ellipsis of no dims
    ((2, 3), (0, 0, 1), (0, 1, 3), (1, 1, 1), {"ellipsis_mask": 2}),
    ((2, 3, 4, 5, 6), (0, 1, 0, 4, 5), (2, 3, 4, 0, 0), (1, 1, 2, -1, -2), {}),
    ((2, 2, 3, 2, 2), (1, 0, 2, 0, 0), (2, 2, 0, 2, 2), (1, 1, -1, 1, 1), {}),
]


@pytest.mark.parametrize("shape,begin,end,strides,masks", SS_CASES)
def test_strided_slice(shape, begin, end, strides, masks):
    vals, opts = ss(rand(shape), begin, end, strides, **masks)
    check("STRIDED_SLICE", vals, opts)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_strided_slice_types(dtype):
    vals, opts = ss(rand((4, 6), dtype), (3, 0), (0, 6), (-1, 2))
    check("STRIDED_SLICE", vals, opts)


@pytest.mark.parametrize(
    "shape,begin,end,strides",
    [
        ((4, 5), (1, 2), (2, 3), (1, 1)),
        ((4, 5), (-3, 0), (2, 5), (1, 2)),
        ((6,), (5,), (-4,), (-2,)),
        ((3, 4, 5), (2, 1, 0), (1, 2, 5), (1, 1, 1)),
    ],
)
def test_strided_slice_offset(shape, begin, end, strides):
    vals, opts = ss(rand(shape), begin, end, strides, offset=True)
    check("STRIDED_SLICE", vals, opts)
    # begin known only at run time: the shape comes from end/strides alone
    vals, opts = ss(rand(shape), begin, end, strides, runtime=("begin",), offset=True)
    check("STRIDED_SLICE", vals, opts)


def test_strided_slice_offset_out_of_range():
    vals, opts = ss(rand((4, 5)), (3, 0), (2, 5), (1, 1), runtime=("begin",), offset=True)
    fails("STRIDED_SLICE", vals, opts, match="does not fit", status=INVALID_INPUT)
    vals, opts = ss(rand((4, 5)), (3, 0), (2, 5), (1, 1), offset=True)
    fails("STRIDED_SLICE", vals, opts, match="does not fit", status=MALFORMED)


@pytest.mark.parametrize("runtime", [("begin",), ("end",), ("begin", "end", "strides")])
def test_strided_slice_runtime(runtime):
    vals, opts = ss(rand((5, 6)), (1, -1), (4, 0), (2, -2), runtime=runtime, shrink_axis_mask=0)
    check("STRIDED_SLICE", vals, opts)
    vals, opts = ss(
        rand((5, 6)), (1, 0), (4, 0), (1, 1), runtime=runtime, shrink_axis_mask=1, end_mask=2
    )
    check("STRIDED_SLICE", vals, opts)


def test_strided_slice_bad():
    vals, opts = ss(rand((4, 5)), (0, 0), (4, 5), (1, 0))
    fails("STRIDED_SLICE", vals, opts, match="strides\\[1\\] is 0", status=MALFORMED)
    vals, opts = ss(rand((4, 5)), (0, 0), (4, 5), (1, 0), runtime=("strides",))
    fails("STRIDED_SLICE", vals, opts, match="strides\\[1\\] is 0", status=INVALID_INPUT)
    vals, opts = ss(rand((4, 5)), (4, 0), (5, 5), (1, 1), shrink_axis_mask=1)
    fails("STRIDED_SLICE", vals, opts, match="shrink_axis index 4", status=MALFORMED)
    vals, opts = ss(rand((4, 5)), (0, 0, 0), (1, 1, 1), (1, 1, 1))
    fails("STRIDED_SLICE", vals, opts, match="entries")
    vals, opts = ss(rand((4, 5)), (0, 0), (1, 1), (1, 1), ellipsis_mask=3)
    fails("STRIDED_SLICE", vals, opts, match="more than one")


# ============================================================================ SPLIT / SPLIT_V


@pytest.mark.parametrize(
    "shape,axis,num",
    [((6, 4), 0, 3), ((6, 4), 1, 2), ((2, 3, 8), -1, 4), ((5,), 0, 1), ((2, 6, 3), 1, 6)],
)
def test_split(shape, axis, num):
    check(
        "SPLIT",
        [C(np.array(axis, np.int32)), In(rand(shape))],
        {"num_splits": num},
        out_dtypes=["float32"] * num,
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_split_types(dtype):
    check(
        "SPLIT",
        [C(np.array(1, np.int32)), In(rand((2, 4), dtype))],
        {"num_splits": 2},
        out_dtypes=[dtype] * 2,
        expect=lambda a, x: np.split(x, 2, axis=1),
    )


def test_split_runtime_axis():
    x = rand((4, 6))
    check(
        "SPLIT", [In(np.array(1, np.int32)), In(x)], {"num_splits": 3}, out_dtypes=["float32"] * 3
    )
    fails(
        "SPLIT",
        [In(np.array(2, np.int32)), In(x)],
        {"num_splits": 3},
        out_dtypes=["float32"] * 3,
        match="outside",
        status=INVALID_INPUT,
    )
    fails(
        "SPLIT",
        [In(np.array(0, np.int32)), In(x)],
        {"num_splits": 3},
        out_dtypes=["float32"] * 3,
        match="equal pieces",
        status=INVALID_INPUT,
    )


def test_split_bad():
    fails(
        "SPLIT",
        [C(np.array(0, np.int32)), In(rand((4,)))],
        {"num_splits": 0},
        out_dtypes=["float32"],
        match="num_splits must be positive",
    )
    fails(
        "SPLIT",
        [C(np.array(0, np.int32)), In(rand((4,)))],
        {"num_splits": 3},
        out_dtypes=["float32"] * 3,
        match="equal pieces",
        status=MALFORMED,
    )
    fails(
        "SPLIT",
        [C(np.array(0, np.int32)), In(rand((4,)))],
        {"num_splits": 2},
        out_dtypes=["float32"] * 3,
        match="outputs",
    )


@pytest.mark.parametrize(
    "shape,sizes,axis",
    [
        ((6, 4), (1, 2, 3), 0),
        ((6, 4), (3, -1), 1),
        ((2, 7, 3), (0, 7), -2),
        ((5,), (-1,), 0),
        ((3, 5), (2, 0, -1), 1),
    ],
)
def test_split_v(shape, sizes, axis):
    n = len(sizes)
    check(
        "SPLIT_V",
        [In(rand(shape)), C(np.array(sizes, np.int32)), C(np.array(axis, np.int32))],
        {"num_splits": n},
        out_dtypes=["float32"] * n,
    )


@pytest.mark.parametrize("dtype", ["int64", "bool", "int8", "float16"])
def test_split_v_types(dtype):
    check(
        "SPLIT_V",
        [In(rand((5, 2), dtype)), C(np.array([2, 3], np.int32)), C(np.array(0, np.int32))],
        {"num_splits": 2},
        out_dtypes=[dtype] * 2,
        expect=lambda x, s, a: np.split(x, [2], axis=0),
    )


def test_split_v_runtime():
    x = rand((6, 4))
    check(
        "SPLIT_V",
        [In(x), In(np.array([4, -1], np.int32)), In(np.array(0, np.int32))],
        {"num_splits": 2},
        out_dtypes=["float32"] * 2,
    )
    fails(
        "SPLIT_V",
        [In(x), In(np.array([-1, -1], np.int32)), In(np.array(0, np.int32))],
        {"num_splits": 2},
        out_dtypes=["float32"] * 2,
        match="more than one -1",
        status=INVALID_INPUT,
    )
    fails(
        "SPLIT_V",
        [In(x), In(np.array([7, -1], np.int32)), In(np.array(0, np.int32))],
        {"num_splits": 2},
        out_dtypes=["float32"] * 2,
        match="not a valid size",
        status=INVALID_INPUT,
    )


@pytest.mark.parametrize(
    "sizes,match", [((2, 2), "add up to 4, not"), ((3, -2), "not a valid"), ((2,), "entries")]
)
def test_split_v_bad(sizes, match):
    fails(
        "SPLIT_V",
        [In(rand((6,))), C(np.array(sizes, np.int32)), C(np.array(0, np.int32))],
        {"num_splits": 2},
        out_dtypes=["float32"] * 2,
        match=match,
    )


# ============================================================================ PACK / UNPACK


@pytest.mark.parametrize(
    "shape,n,axis",
    [((2, 3), 3, 0), ((2, 3), 2, 1), ((2, 3), 4, 2), ((2, 3), 2, -1), ((), 3, 0), ((4,), 1, 0)],
)
def test_pack(shape, n, axis):
    check("PACK", [In(rand(shape)) for _ in range(n)], {"values_count": n, "axis": axis})


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_pack_types(dtype):
    check(
        "PACK",
        [In(rand((2, 2), dtype)), C(rand((2, 2), dtype))],
        {"values_count": 2, "axis": 1},
        expect=lambda a, b: [np.stack([a, b], axis=1)],
    )


def test_pack_bad():
    fails(
        "PACK",
        [In(rand((2, 3))), In(rand((3, 2)))],
        {"values_count": 2, "axis": 0},
        match="shape differs",
    )
    fails(
        "PACK",
        [In(rand((2, 3))), In(rand((2, 3)))],
        {"values_count": 3, "axis": 0},
        match="values_count",
    )
    fails(
        "PACK",
        [In(rand((2, 3))), In(rand((2, 3)))],
        {"values_count": 2, "axis": 3},
        match="outside",
    )


@pytest.mark.parametrize(
    "shape,axis", [((3, 2), 0), ((3, 2), 1), ((2, 3, 4), -1), ((4,), 0), ((2, 1, 3), 1)]
)
def test_unpack(shape, axis):
    n = shape[axis]
    check("UNPACK", [In(rand(shape))], {"num": n, "axis": axis}, n_out=n)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_unpack_types(dtype):
    check(
        "UNPACK",
        [In(rand((2, 3), dtype))],
        {"num": 3, "axis": 1},
        n_out=3,
        expect=lambda x: [x[:, k] for k in range(3)],
    )


def test_unpack_bad():
    fails("UNPACK", [In(rand((3, 2)))], {"num": 2, "axis": 0}, n_out=2, match="num is 2")
    fails("UNPACK", [In(rand((3, 2)))], {"num": 3, "axis": 2}, n_out=3, match="outside")


# ============================================================================ TILE / BROADCAST_TO


@pytest.mark.parametrize(
    "shape,mult",
    [
        ((2, 3), (1, 1)),
        ((2, 3), (2, 3)),
        ((2, 1, 3), (1, 4, 1)),
        ((3,), (5,)),
        ((2, 3), (0, 2)),
        ((1, 2, 1, 2, 1), (2, 1, 3, 1, 2)),
    ],
)
def test_tile(shape, mult):
    check("TILE", [In(rand(shape)), C(np.array(mult, np.int32))])


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_tile_types(dtype):
    check(
        "TILE",
        [In(rand((2, 2), dtype)), C(np.array([2, 1], np.int64))],
        expect=lambda x, m: [np.tile(x, m)],
    )


def test_tile_runtime_multiples():
    check("TILE", [In(rand((2, 3))), In(np.array([3, 2], np.int32))])
    fails(
        "TILE",
        [In(rand((2, 3))), In(np.array([3, -2], np.int32))],
        match="negative",
        status=INVALID_INPUT,
    )


def test_tile_overflow():
    # The TFLite TILE CVE: an element count that overflows int32 must be refused, not wrap.
    fails(
        "TILE",
        [In(rand((4, 4))), In(np.array([2**30, 2**30], np.int32))],
        match="overflow",
        status=INVALID_INPUT,
    )
    fails(
        "TILE",
        [In(rand((4, 4))), C(np.array([2**29, 1], np.int32))],
        match="overflows",
        status=MALFORMED,
    )
    fails("TILE", [In(rand((4, 4))), C(np.array([2**62, 1], np.int64))], match="overflows")
    fails("TILE", [In(rand((4, 4))), C(np.array([2, 1, 1], np.int32))], match="entries")


@pytest.mark.parametrize(
    "shape,to",
    [
        ((3,), (2, 3)),
        ((2, 1), (2, 4)),
        ((1, 3, 1), (2, 2, 3, 5)),
        ((2, 3), (2, 3)),
        ((1,), (0, 3)),
        ((), (2, 2)),
    ],
)
def test_broadcast_to(shape, to):
    check("BROADCAST_TO", [In(rand(shape)), C(np.array(to, np.int32))])


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_broadcast_to_types(dtype):
    check(
        "BROADCAST_TO",
        [In(rand((1, 3), dtype)), C(np.array([2, 3], np.int64))],
        expect=lambda x, s: [np.broadcast_to(x, s)],
    )


def test_broadcast_to_runtime_shape():
    check("BROADCAST_TO", [In(rand((3, 1))), In(np.array([2, 3, 4], np.int32))])
    fails(
        "BROADCAST_TO",
        [In(rand((3, 1))), In(np.array([2, 4, 4], np.int32))],
        match="does not broadcast",
        status=INVALID_INPUT,
    )


def test_broadcast_to_bad():
    fails("BROADCAST_TO", [In(rand((3, 2))), C(np.array([3], np.int32))], match="entries")
    fails("BROADCAST_TO", [In(rand((3, 2))), C(np.array([3, -2], np.int32))], match="not a valid")


# ============================================================================ REVERSE_V2


@pytest.mark.parametrize(
    "shape,axes",
    [
        ((5,), [0]),
        ((3, 4), [1]),
        ((3, 4), [0]),
        ((2, 3, 4), [-1]),
        ((2, 3, 4), [1]),
        ((2, 1, 4, 3), [2]),
        ((3, 4), [0, 1]),
        ((2, 3, 4), [0, 2]),
    ],
)
def test_reverse_v2(shape, axes):
    check(
        "REVERSE_V2",
        [In(rand(shape)), C(np.array(axes, np.int32))],
        expect=lambda x, a: [np.flip(x, tuple(a))],
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_reverse_v2_types(dtype):
    check(
        "REVERSE_V2",
        [In(rand((3, 4), dtype)), C(np.array([1], np.int32))],
        expect=lambda x, a: [x[:, ::-1]],
    )


def test_reverse_v2_runtime_axis():
    check("REVERSE_V2", [In(rand((3, 4))), In(np.array([0], np.int32))])
    fails(
        "REVERSE_V2",
        [In(rand((3, 4))), In(np.array([2], np.int32))],
        match="outside",
        status=INVALID_INPUT,
    )


def test_reverse_v2_bad():
    fails(
        "REVERSE_V2",
        [In(rand((3, 4))), C(np.array([-3], np.int32))],
        match="outside",
        status=MALFORMED,
    )
    fails("REVERSE_V2", [In(rand((3, 4))), C(np.array([1, -1], np.int32))], match="twice")


# ============================================================================ DEPTH_TO_SPACE / SPACE_TO_DEPTH


@pytest.mark.parametrize(
    "shape,b", [((1, 2, 3, 8), 2), ((2, 1, 1, 9), 3), ((1, 2, 2, 5), 1), ((2, 3, 2, 12), 2)]
)
def test_depth_to_space(shape, b):
    check("DEPTH_TO_SPACE", [In(rand(shape))], {"block_size": b})


@pytest.mark.parametrize(
    "shape,b", [((1, 4, 6, 2), 2), ((2, 3, 3, 1), 3), ((1, 2, 2, 5), 1), ((2, 4, 2, 3), 2)]
)
def test_space_to_depth(shape, b):
    check("SPACE_TO_DEPTH", [In(rand(shape))], {"block_size": b})


def np_d2s(x, b):
    n, h, w, c = x.shape
    return (
        x.reshape(n, h, w, b, b, c // (b * b))
        .transpose(0, 1, 3, 2, 4, 5)
        .reshape(n, h * b, w * b, c // (b * b))
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_space_depth_types(dtype):
    x = rand((1, 2, 2, 8), dtype)
    check("DEPTH_TO_SPACE", [In(x)], {"block_size": 2}, expect=lambda v: [np_d2s(v, 2)])
    y = np_d2s(x, 2)
    check("SPACE_TO_DEPTH", [In(y)], {"block_size": 2}, expect=lambda v: [x])


@pytest.mark.parametrize(
    "op,shape,b,match",
    [
        ("DEPTH_TO_SPACE", (1, 2, 2, 6), 2, "not a multiple"),
        ("DEPTH_TO_SPACE", (1, 2, 2, 4), 0, "block_size must be"),
        ("DEPTH_TO_SPACE", (1, 2, 2, 4), -2, "block_size must be"),
        ("SPACE_TO_DEPTH", (1, 3, 2, 4), 2, "multiples of block_size"),
        ("SPACE_TO_DEPTH", (1, 2, 2, 4), 0, "block_size must be"),
        ("SPACE_TO_DEPTH", (2, 2, 4), 2, "4-D"),
    ],
)
def test_space_depth_bad(op, shape, b, match):
    fails(op, [In(rand(shape))], {"block_size": b}, match=match)


# ============================================================================ MIRROR_PAD


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize(
    "shape,pads",
    [
        ((5,), [[2, 3]]),
        ((3, 4), [[1, 2], [3, 0]]),
        ((2, 3, 4), [[0, 1], [2, 2], [1, 3]]),
        ((1, 4, 4, 2), [[0, 0], [1, 1], [2, 2], [0, 0]]),
    ],
)
def test_mirror_pad(shape, pads, mode):
    lim = 1 if mode == "REFLECT" else 0  # REFLECT needs pad < dim, SYMMETRIC pad <= dim
    pads = [[min(p, d - lim) for p in pr] for pr, d in zip(pads, shape, strict=True)]
    check("MIRROR_PAD", [In(rand(shape)), C(np.array(pads, np.int32))], {"mode": mode})


def test_mirror_pad_edges():
    # SYMMETRIC allows a padding equal to the dim, REFLECT one less.
    check(
        "MIRROR_PAD",
        [In(rand((3, 2))), C(np.array([[3, 3], [2, 0]], np.int64))],
        {"mode": "SYMMETRIC"},
    )
    check(
        "MIRROR_PAD",
        [In(rand((3, 2))), C(np.array([[2, 2], [1, 1]], np.int32))],
        {"mode": "REFLECT"},
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_mirror_pad_types(dtype):
    check(
        "MIRROR_PAD",
        [In(rand((3, 3), dtype)), C(np.array([[1, 2], [2, 1]], np.int32))],
        {"mode": "REFLECT"},
        expect=lambda x, p: [np.pad(x, p, mode="reflect")],
    )


def test_mirror_pad_runtime_paddings():
    x = rand((3, 4))
    check("MIRROR_PAD", [In(x), In(np.array([[1, 1], [2, 3]], np.int32))], {"mode": "REFLECT"})
    fails(
        "MIRROR_PAD",
        [In(x), In(np.array([[3, 0], [0, 0]], np.int32))],
        {"mode": "REFLECT"},
        match="before padding 3 of dimension 0",
        status=INVALID_INPUT,
    )


@pytest.mark.parametrize(
    "mode,pads,match",
    [
        ("REFLECT", [[3, 0], [0, 0]], "must be in \\[0, 2\\] for REFLECT"),
        ("SYMMETRIC", [[0, 4], [0, 0]], "must be in \\[0, 3\\] for SYMMETRIC"),
        ("SYMMETRIC", [[-1, 0], [0, 0]], "before padding -1"),
    ],
)
def test_mirror_pad_bad(mode, pads, match):
    fails(
        "MIRROR_PAD",
        [In(rand((3, 2))), C(np.array(pads, np.int32))],
        {"mode": mode},
        match=match,
        status=MALFORMED,
    )


def test_mirror_pad_bad_shape():
    fails(
        "MIRROR_PAD",
        [In(rand((3, 2))), C(np.array([[1, 1]], np.int32))],
        {"mode": 0},
        match="\\[2, 2\\]",
    )
    fails(
        "MIRROR_PAD", [In(rand((3, 2))), C(np.zeros((2, 2), np.int32))], {"mode": 5}, match="mode 5"
    )


# ============================================================================ DYNAMIC_UPDATE_SLICE


@pytest.mark.parametrize(
    "shape,ushape,start",
    [
        ((4, 5), (2, 3), (1, 1)),
        ((4, 5), (2, 3), (3, 4)),  # clamped to (2, 2)
        ((4, 5), (2, 3), (-1, -7)),  # clamped to (0, 0)
        ((4, 5), (4, 5), (2, 2)),  # full overwrite
        ((2, 3, 4), (1, 3, 2), (1, 0, 1)),
        ((6,), (0,), (3,)),
    ],
)
def test_dynamic_update_slice(shape, ushape, start):
    check(
        "DYNAMIC_UPDATE_SLICE", [In(rand(shape)), In(rand(ushape)), In(np.array(start, np.int32))]
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_dynamic_update_slice_types(dtype):
    def expect(x, u, s):
        y = x.copy()
        y[1:3, 2:4] = u
        return [y]

    check(
        "DYNAMIC_UPDATE_SLICE",
        [In(rand((4, 5), dtype)), In(rand((2, 2), dtype)), C(np.array([1, 2], np.int64))],
        expect=expect,
    )


def test_dynamic_update_slice_bad():
    fails(
        "DYNAMIC_UPDATE_SLICE",
        [In(rand((4, 5))), In(rand((5, 1))), C(np.array([0, 0], np.int32))],
        match="larger",
    )
    fails(
        "DYNAMIC_UPDATE_SLICE",
        [In(rand((4, 5))), In(rand((2,))), C(np.array([0], np.int32))],
        match="rank",
    )
    fails(
        "DYNAMIC_UPDATE_SLICE",
        [In(rand((4, 5))), In(rand((2, 2), "int32")), C(np.array([0, 0], np.int32))],
        match="update is int32",
    )


# ============================================================================ GATHER


@pytest.mark.parametrize(
    "pshape,ishape,axis,batch_dims",
    [
        ((5, 3), (4,), 0, 0),
        ((5, 3), (2, 2), 0, 0),
        ((3, 5, 2), (4,), 1, 0),
        ((3, 5, 2), (2, 3), -1, 0),
        ((2, 5, 3), (2, 4), 1, 1),
        ((2, 3, 5, 2), (2, 3, 4), 2, 2),
        ((2, 3, 5, 2), (2, 4), 2, 1),
        ((2, 3, 5, 2), (2, 4), -2, -1),
        ((4,), (), 0, 0),  # scalar index
        ((4, 3), (0,), 0, 0),  # no indices
    ],
)
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_gather(pshape, ishape, axis, batch_dims, itype):
    n = pshape[axis]
    idx = RNG.integers(0, n, size=ishape).astype(itype)
    check("GATHER", [In(rand(pshape)), In(idx)], {"axis": axis, "batch_dims": batch_dims})
    check("GATHER", [In(rand(pshape)), C(idx)], {"axis": axis, "batch_dims": batch_dims})


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_gather_types(dtype):
    idx = np.array([2, 0, 2], np.int32)
    check(
        "GATHER",
        [In(rand((3, 4), dtype)), In(idx)],
        {"axis": 1},
        expect=lambda p, i: [np.take(p, i, axis=1)],
    )


def test_gather_int16_indices():
    idx = np.array([[1, 0], [2, 2]], np.int16)
    check("GATHER", [In(rand((3, 4))), In(idx)], {"axis": 0})


@pytest.mark.parametrize("bad", [-1, 5, 2**31 - 1])
def test_gather_bad_runtime_index(bad):
    fails(
        "GATHER",
        [In(rand((5, 3))), In(np.array([0, bad], np.int32))],
        {"axis": 0},
        match=f"index {bad} .* outside \\[0, 5\\)",
        status=INVALID_INPUT,
    )


def test_gather_bad_runtime_index_int64():
    fails(
        "GATHER",
        [In(rand((5, 3))), In(np.array([-(2**40)], np.int64))],
        {"axis": 0},
        match="outside",
        status=INVALID_INPUT,
    )


def test_gather_bad():
    fails(
        "GATHER",
        [In(rand((5, 3))), C(np.array([0, 5], np.int32))],
        {"axis": 0},
        match="outside \\[0, 5\\)",
        status=MALFORMED,
    )
    fails(
        "GATHER",
        [In(rand((5, 3))), In(np.array([0], np.int32))],
        {"axis": 2},
        match="axis 2 is outside",
    )
    fails(
        "GATHER",
        [In(rand((2, 5, 3))), In(np.zeros((3, 2), np.int32))],
        {"axis": 1, "batch_dims": 1},
        match="batch dimension 0 differs",
    )
    fails(
        "GATHER",
        [In(rand((2, 5, 3))), In(np.zeros((2, 2), np.int32))],
        {"axis": 0, "batch_dims": 1},
        match="batch_dims",
    )
    fails(
        "GATHER",
        [In(rand((5, 3))), In(np.zeros(2, np.float32))],
        {"axis": 0},
        match="indices must be",
    )


# ============================================================================ GATHER_ND


@pytest.mark.parametrize(
    "pshape,ishape",
    [
        ((4, 5), (3, 2)),
        ((4, 5), (3, 1)),
        ((4, 5, 6), (2, 2, 2)),
        ((4, 5, 6), (3,)),
        ((4, 5, 6), (2, 3)),
        ((3, 2), (0, 2)),
    ],
)
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_gather_nd(pshape, ishape, itype):
    depth = ishape[-1]
    idx = np.stack([RNG.integers(0, pshape[k], size=ishape[:-1]) for k in range(depth)], -1)
    idx = idx.astype(itype).reshape(ishape)
    check("GATHER_ND", [In(rand(pshape)), In(idx)])
    check("GATHER_ND", [C(rand(pshape)), C(idx)])


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_gather_nd_types(dtype):
    idx = np.array([[1, 0], [0, 2]], np.int32)
    check("GATHER_ND", [In(rand((2, 3, 2), dtype)), In(idx)], expect=lambda p, i: [p[tuple(i.T)]])


def test_gather_nd_bad():
    fails(
        "GATHER_ND",
        [In(rand((4, 5))), In(np.array([[1, 5]], np.int32))],
        match="index 5 .* outside \\[0, 5\\)",
        status=INVALID_INPUT,
    )
    fails(
        "GATHER_ND",
        [In(rand((4, 5))), In(np.array([[-1, 0]], np.int32))],
        match="index -1",
        status=INVALID_INPUT,
    )
    fails(
        "GATHER_ND",
        [In(rand((4, 5))), C(np.array([[4, 0]], np.int32))],
        match="index 4",
        status=MALFORMED,
    )
    fails(
        "GATHER_ND",
        [In(rand((4, 5))), In(np.zeros((2, 3), np.int32))],
        match="larger than params' rank",
    )


# ============================================================================ EMBEDDING_LOOKUP


@pytest.mark.parametrize("vshape,n", [((6, 4), 3), ((5, 2, 3), 4), ((3, 1), 0)])
def test_embedding_lookup(vshape, n):
    ids = RNG.integers(0, vshape[0], size=n).astype(np.int32)
    check("EMBEDDING_LOOKUP", [In(ids), In(rand(vshape))], out_dtypes=["float32"])
    check("EMBEDDING_LOOKUP", [C(ids), C(rand(vshape))], out_dtypes=["float32"])


def hybrid_model(ids, values, scales):
    w = ModelWriter()
    sg = w.add_subgraph()
    i = sg.add_tensor("ids", list(ids.shape), "int32")
    v = sg.add_constant(
        "values",
        values,
        quant={"scale": scales, "zero_point": [0] * len(scales), "quantized_dimension": 0},
    )
    o = sg.add_tensor("out", [len(ids)] + list(values.shape[1:]), "float32")
    sg.add_operator("EMBEDDING_LOOKUP", [i, v], [o])
    sg.set_inputs([i])
    sg.set_outputs([o])
    return w.finish()


@pytest.mark.parametrize("per_row", [False, True])
def test_embedding_lookup_hybrid(per_row):
    values = RNG.integers(-127, 128, size=(5, 3)).astype(np.int8)
    scales = list(RNG.uniform(0.01, 0.2, size=5)) if per_row else [0.037]
    ids = np.array([4, 0, 2, 2], np.int32)
    data = hybrid_model(ids, values, scales)
    (got,) = run_wick(data, [ids])
    (ref,) = run_ref(data, [ids])
    assert got.tobytes() == ref.tobytes(), (got, ref)


@pytest.mark.parametrize("dtype", ["int32", "int8", "bool", "int64", "float16"])
def test_embedding_lookup_raw_types(dtype):
    ids = np.array([1, 0, 1], np.int32)
    check(
        "EMBEDDING_LOOKUP",
        [In(ids), In(rand((2, 3), dtype))],
        out_dtypes=[dtype],
        expect=lambda i, v: [v[i]],
    )


def test_embedding_lookup_bad():
    fails(
        "EMBEDDING_LOOKUP",
        [In(np.array([0, 6], np.int32)), In(rand((6, 4)))],
        out_dtypes=["float32"],
        match="index 6 .* outside \\[0, 6\\)",
        status=INVALID_INPUT,
    )
    fails(
        "EMBEDDING_LOOKUP",
        [In(np.array([-1], np.int32)), In(rand((6, 4)))],
        out_dtypes=["float32"],
        match="index -1",
        status=INVALID_INPUT,
    )
    fails(
        "EMBEDDING_LOOKUP",
        [In(np.array([0], np.int32)), In(rand((6,)))],
        out_dtypes=["float32"],
        match="rank >= 2",
    )
    fails(
        "EMBEDDING_LOOKUP",
        [In(np.array([0], np.int32)), In(rand((6, 2), "int32"))],
        out_dtypes=["float32"],
        match="not supported",
    )


# ============================================================================ SELECT / SELECT_V2


@pytest.mark.parametrize(
    "cshape,xshape",
    [((2, 3), (2, 3)), ((), (2, 3)), ((2,), (2, 3)), ((4,), (4,)), ((3,), (3, 2, 2))],
)
def test_select(cshape, xshape):
    check(
        "SELECT",
        [In(rand(cshape, "bool")), In(rand(xshape)), In(rand(xshape))],
        out_dtypes=["float32"],
    )


@pytest.mark.parametrize(
    "cshape,xshape,yshape",
    [
        ((2, 3), (2, 3), (2, 3)),
        ((2, 1), (1, 3), (2, 3)),
        ((), (2, 3), (3,)),
        ((3,), (2, 1), ()),
        ((2, 1, 3), (4, 1), (1, 4, 3)),
        ((1, 2, 1, 1, 3), (2, 1, 1, 1), (3,)),
    ],
)
def test_select_v2(cshape, xshape, yshape):
    check(
        "SELECT_V2",
        [In(rand(cshape, "bool")), In(rand(xshape)), In(rand(yshape))],
        out_dtypes=["float32"],
    )


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_select_types(dtype):
    check(
        "SELECT_V2",
        [In(rand((2, 3), "bool")), In(rand((2, 3), dtype)), C(rand((3,), dtype))],
        out_dtypes=[dtype],
        expect=lambda c, x, y: [np.where(c, x, y)],
    )


@pytest.mark.parametrize(
    "cshape,xshape,yshape",
    [
        ((4, 1, 32, 32), (4, 12, 32, 32), ()),  # MiniLM's mask over the heads' scores
        ((2, 3, 77), (), (2, 3, 77)),  # a scalar x, rows with a vector tail
        ((5, 47), (5, 47), (5, 47)),
        ((3, 1), (3, 40), (3, 40)),  # a condition per row (whole-row copies)
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool"])
def test_select_v2_bytes(cshape, xshape, yshape, dtype):
    """SELECT_V2 on bytes: dimensions merged into long rows, each on the vector blend (the
    kernel is checked), against LiteRT and numpy."""
    data, feeds = build(
        "SELECT_V2",
        [In(rand(cshape, "bool")), In(rand(xshape, dtype)), In(rand(yshape, dtype))],
        out_dtypes=[dtype],
    )
    assert wick.load(data).signature(None).op_kernels()[0] == ("optimized", "byte blend rows")
    check(
        "SELECT_V2",
        [In(feeds[0]), In(feeds[1]), In(feeds[2])],
        out_dtypes=[dtype],
        expect=lambda c, x, y: [np.where(c, x, y)],
    )


def test_select_bad():
    fails(
        "SELECT",
        [In(rand((3,), "bool")), In(rand((2, 3))), In(rand((2, 3)))],
        out_dtypes=["float32"],
        match="condition must",
    )
    fails(
        "SELECT",
        [In(rand((2, 3), "bool")), In(rand((2, 3))), In(rand((3,)))],
        out_dtypes=["float32"],
        match="same shape",
    )
    fails(
        "SELECT_V2",
        [In(rand((2,), "bool")), In(rand((2, 3))), In(rand((3,)))],
        out_dtypes=["float32"],
        match="do not broadcast",
    )
    fails(
        "SELECT_V2",
        [In(rand((3,), "float32")), In(rand((3,))), In(rand((3,)))],
        out_dtypes=["float32"],
        match="condition must be bool",
    )
    fails(
        "SELECT_V2",
        [In(rand((3,), "bool")), In(rand((3,))), In(rand((3,), "int32"))],
        out_dtypes=["float32"],
        match="y is int32",
    )


def _random_strided_slice(seed):
    """A random STRIDED_SLICE spec (masks included) on a random input."""
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 6, size=rank))
    n = int(rng.integers(1, rank + 1))
    begin = rng.integers(-7, 7, size=n)
    end = rng.integers(-7, 7, size=n)
    strides = rng.choice([-3, -2, -1, 1, 2, 3], size=n)
    masks = {k: int(rng.integers(0, 2**n)) for k in ("begin_mask", "end_mask")}
    if rng.random() < 0.3:
        masks["shrink_axis_mask"] = int(rng.integers(0, 2**n))
    if rng.random() < 0.2:
        masks["ellipsis_mask"] = 1 << int(rng.integers(0, n))
    elif rng.random() < 0.2:
        masks["new_axis_mask"] = int(rng.integers(0, 2**n))
    return shape, begin, end, strides, masks


@pytest.mark.parametrize("seed", range(200))
def test_strided_slice_random(seed):
    """Random specs against LiteRT. Where LiteRT's result is not well defined (a shrink index
    out of range, a shrink with a negative stride: it clamps or writes nothing) wick refuses
    or takes the element at begin instead, so those specs only have to fail cleanly."""
    shape, begin, end, strides, masks = _random_strided_slice(seed)
    vals, opts = ss(rand(shape), begin, end, strides, **masks)
    data, feeds = build("STRIDED_SLICE", vals, opts)
    try:
        ref = run_ref(data, feeds)
    except (RuntimeError, ValueError):
        ref = None  # LiteRT refuses the spec (e.g. more than 5 dims after new axes)
    try:
        got = run_wick(data, feeds)
    except wick.WickError as e:
        assert re.search("shrink_axis index|entries|maximum", str(e)), str(e)
        return
    shrink = masks.get("shrink_axis_mask", 0)
    if ref is None or any(shrink >> k & 1 and strides[k] < 0 for k in range(len(strides))):
        return
    assert got[0].shape == ref[0].shape and got[0].tobytes() == ref[0].tobytes(), (
        shape,
        begin,
        end,
        strides,
        masks,
        got[0],
        ref[0],
    )


# ============================================================================ graphs, repeated invokes


def test_dynamic_shapes_across_invokes():
    """One interpreter, several invokes whose run-time values change the output shapes."""
    data, _ = build("RANGE", [In(np.int32(0)), In(np.int32(1)), In(np.int32(1))])
    rt = wick.load(data)
    runner = rt.signature(None)
    try:
        for limit, delta in [(5, 1), (17, 3), (0, 1), (9, 2), (-4, -1)]:
            feeds = [np.int32(0), np.int32(limit), np.int32(delta)]
            (got,) = invoke(runner, feeds)
            assert np.array_equal(got, np.arange(0, limit, delta, dtype=np.int32))
        with pytest.raises(wick.WickError, match="delta is 0"):
            invoke(runner, [np.int32(0), np.int32(3), np.int32(0)])
        (got,) = invoke(runner, [np.int32(2), np.int32(4), np.int32(1)])  # usable after an error
        assert got.tolist() == [2, 3]
    finally:
        runner.__del__()

    x = rand((2, 3, 4))
    data, _ = build("TRANSPOSE", [In(x), In(np.array([0, 1, 2], np.int32))])
    rt = wick.load(data)
    runner = rt.signature(None)
    try:
        for perm in [(2, 0, 1), (0, 1, 2), (1, 2, 0), (2, 1, 0)]:
            (got,) = invoke(runner, [x, np.array(perm, np.int32)])
            assert (
                got.tobytes() == np.transpose(x, perm).tobytes()
                and got.shape == x.transpose(perm).shape
            )
    finally:
        runner.__del__()


def test_dynamic_chain():
    """SHAPE -> FILL -> TILE (by a run-time multiples) -> STRIDED_SLICE: every op downstream of a
    deferred one is prepared at invoke too."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [None, None], "float32")
    m = sg.add_tensor("m", [2], "int32")
    shp = sg.add_tensor("shape", [2], "int32")
    filled = sg.add_tensor("filled", [1], "float32")
    tiled = sg.add_tensor("tiled", [1], "float32")
    out = sg.add_tensor("out", [1], "float32")
    val = sg.add_constant("val", np.float32(1.5))
    sg.add_operator("SHAPE", [x], [shp], {"out_type": "int32"})
    sg.add_operator("FILL", [shp, val], [filled])
    sg.add_operator("TILE", [filled, m], [tiled])
    b = sg.add_constant("b", np.array([1, 0], np.int32))
    e = sg.add_constant("e", np.array([0, 5], np.int32))
    st = sg.add_constant("s", np.array([1, 2], np.int32))
    sg.add_operator("STRIDED_SLICE", [tiled, b, e, st], [out], {"end_mask": 1})
    sg.set_inputs([x, m])
    sg.set_outputs([out])
    data = w.finish()
    for xs, ms in [((2, 3), (2, 1)), ((4, 1), (1, 7))]:
        feeds = [rand(xs), np.array(ms, np.int32)]
        got = run_wick(data, feeds)
        ref = run_ref(data, feeds)
        assert got[0].shape == ref[0].shape and got[0].tobytes() == ref[0].tobytes()


@pytest.mark.parametrize("op", ["TRANSPOSE", "GATHER", "STRIDED_SLICE", "TILE"])
def test_quantized_passthrough(op):
    """int8 tensors with quantization parameters move unchanged (output keeps input params)."""
    q = {"scale": 0.05, "zero_point": -3}
    w = ModelWriter()
    sg = w.add_subgraph()
    xv = rand((3, 4), "int8")
    x = sg.add_tensor("x", [3, 4], "int8", quant=q)
    o = sg.add_tensor("o", [1], "int8", quant=q)
    if op == "TRANSPOSE":
        ins, opts = [x, sg.add_constant("p", np.array([1, 0], np.int32))], None
    elif op == "GATHER":
        ins, opts = [x, sg.add_constant("i", np.array([2, 0], np.int32))], {"axis": 0}
    elif op == "TILE":
        ins, opts = [x, sg.add_constant("m", np.array([2, 1], np.int32))], None
    else:
        ins = [x] + [
            sg.add_constant(k, np.array(v, np.int32))
            for k, v in (("b", [0, 1]), ("e", [3, 4]), ("s", [2, 2]))
        ]
        opts = {}
    sg.add_operator(op, ins, [o], opts)
    sg.set_inputs([x])
    sg.set_outputs([o])
    data = w.finish()
    got, ref = run_wick(data, [xv]), run_ref(data, [xv])
    assert got[0].shape == ref[0].shape and got[0].tobytes() == ref[0].tobytes()


# ============================================================================ hostile values

BOUNDARY = [0, 1, -1, 2, -2, 2**31 - 1, -(2**31), 0x40000001, -0x40000001]


def _hostile_cases(seed):
    rng = np.random.default_rng(1000 + seed)

    def vec(n, dtype=np.int32):
        return np.array([BOUNDARY[int(k)] for k in rng.integers(0, len(BOUNDARY), size=n)], dtype)

    x = rand((2, 3, 4))
    ops = [
        ("TRANSPOSE", [In(x), In(vec(3))], None),
        ("SLICE", [In(x), In(vec(3)), In(vec(3))], None),
        (
            "STRIDED_SLICE",
            [In(x), In(vec(3)), In(vec(3)), In(vec(3))],
            {
                "begin_mask": int(rng.integers(0, 8)),
                "end_mask": int(rng.integers(0, 8)),
                "shrink_axis_mask": int(rng.integers(0, 8)),
                "offset": bool(rng.integers(0, 2)),
            },
        ),
        ("TILE", [In(x), In(vec(3))], None),
        ("BROADCAST_TO", [In(x), In(vec(4))], None),
        ("EXPAND_DIMS", [In(x), In(vec(1))], None),
        ("FILL", [In(vec(3)), C(np.float32(1))], None),
        ("RANGE", [In(vec(1)[0]), In(vec(1)[0]), In(vec(1)[0])], None),
        ("GATHER", [In(x), In(vec(5))], {"axis": int(rng.integers(-3, 3))}),
        ("GATHER_ND", [In(x), In(vec(4).reshape(2, 2))], None),
        ("MIRROR_PAD", [In(x), In(vec(6).reshape(3, 2))], {"mode": int(rng.integers(0, 2))}),
        ("SPLIT", [In(vec(1)[0]), In(x)], {"num_splits": 2}),
        ("SPLIT_V", [In(x), In(vec(2)), In(vec(1)[0])], {"num_splits": 2}),
        ("REVERSE_V2", [In(x), In(vec(2))], None),
        ("DYNAMIC_UPDATE_SLICE", [In(x), In(rand((1, 2, 3))), In(vec(3))], None),
        ("EMBEDDING_LOOKUP", [In(vec(3)), In(rand((4, 2)))], None),
    ]
    return ops


@pytest.mark.parametrize("seed", range(25))
def test_hostile_runtime_values(seed):
    """Boundary integers (the fuzzing dictionary's) as run-time shapes/indices: each op either
    runs or raises WickError with a message — never crashes (run this file under ASan+UBSan).
    A memory cap turns legal-but-huge outputs (FILL of 2**31 elements) into OOM errors."""
    for op, operands, options in _hostile_cases(seed):
        n_out = 2 if op.startswith("SPLIT") else 1
        out_dtypes = ["float32"] * n_out
        if op == "RANGE":
            out_dtypes = ["int32"]
        data, feeds = build(op, operands, options, n_out=n_out, out_dtypes=out_dtypes)
        try:
            run_wick(data, feeds, memory_limit=64 << 20)  # huge outputs: a clean OOM error
        except wick.WickError as e:
            assert str(e).strip(), op
        except ValueError as e:
            # numpy cannot even describe an empty output such as (0, 2**31-1, 2**31-1)
            assert "too big" in str(e), e
