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
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(0)

# Types a data-movement op must handle alike (it never looks at the values).
ALL_TYPES = ["float32", "int32", "int64", "bool", "int8", "uint8", "int16", "float16"]


class In:
    """An operand fed at run time (a graph input)."""

    def __init__(self, value, dtype=None):
        self.value = np.asarray(value, dtype=dtype)


class C:
    """A constant operand stored in the file."""

    def __init__(self, value, dtype=None):
        self.value = np.asarray(value, dtype=dtype)


def rand(shape, dtype="float32"):
    """Random values of any supported dtype (distinct enough to catch misplaced elements)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(bool)
    if dtype.kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def build(op, operands, options=None, *, n_out=1, out_dtypes=None, version=None):
    """A one-op model. Returns (bytes, run-time feeds in graph-input order)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    ins, graph_inputs, feeds = [], [], []
    first_dtype = None
    for k, x in enumerate(operands):
        if x is None:
            ins.append(-1)
            continue
        if not isinstance(x, (In, C)):
            x = C(x)
        if first_dtype is None:
            first_dtype = x.value.dtype
        if isinstance(x, In):
            t = sg.add_tensor(f"in{k}", list(x.value.shape), x.value.dtype)
            graph_inputs.append(t)
            feeds.append(x.value)
        else:
            t = sg.add_constant(f"c{k}", x.value)
        ins.append(t)
    if out_dtypes is None:
        out_dtypes = [first_dtype] * n_out
    outs = [sg.add_tensor(f"out{j}", [1], dt) for j, dt in enumerate(out_dtypes)]
    sg.add_operator(op, ins, outs, options=options, version=version)
    sg.set_inputs(graph_inputs)
    sg.set_outputs(outs)
    return w.finish(), feeds


def check(op, operands, options=None, **kw):
    """Runs on wick and LiteRT; requires identical outputs. Returns wick's outputs."""
    data, feeds = build(op, operands, options, **kw)
    ref = run_litert(data, feeds)
    got = wick.load(data)(*feeds)
    assert len(got) == len(ref)
    for j, (g, r) in enumerate(zip(got, ref)):
        r = np.asarray(r)
        assert g.dtype == r.dtype, f"output {j}: dtype {g.dtype} != LiteRT {r.dtype}"
        assert g.shape == r.shape, f"output {j}: shape {g.shape} != LiteRT {r.shape}"
        assert g.tobytes() == r.tobytes(), f"output {j} differs:\nwick {g}\nLiteRT {r}"
    return got


def fails(op, operands, options=None, match=None, status=None, **kw):
    """wick must refuse (at load/prepare, or at invoke for run-time values) with a message."""
    data, feeds = build(op, operands, options, **kw)
    with pytest.raises(wick.WickError) as e:
        wick.load(data)(*feeds)
    if match:
        assert re.search(match, str(e.value)), str(e.value)
    if status:
        assert e.value.status == status, str(e.value)
    return e.value


INVALID_INPUT = "invalid input value"
MALFORMED = "malformed model"


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
