"""Differential tests of ARG_MAX and ARG_MIN (src/ops/arg_minmax.c) against LiteRT, through the
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
    fails,
    i32,
    rand_from,
)

r = rand_from(np.random.default_rng(1234))


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
