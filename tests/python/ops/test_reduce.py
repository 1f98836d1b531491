"""Differential tests of the reductions (src/ops/reduce.c) against LiteRT, through the single-op
harness (tests/python/ops/_harness.py).

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
    litert_refuses,
    rand_from,
)
from tests.python.oracles.litert import run_litert

r = rand_from(np.random.default_rng(4321))


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
