"""Differential tests of CUMSUM (src/ops/cumsum.c) against LiteRT, through the single-op harness
(tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import (
    INVALID_INPUT,
    MALFORMED,
    UNSUPPORTED,
    In,
    check,
    fails,
    i32,
    rand_from,
)

r = rand_from(np.random.default_rng(1234))


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
