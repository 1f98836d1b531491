"""Differential tests of BATCH_MATMUL (src/ops/batch_matmul.c) against LiteRT, through the single-
op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    FLOAT_REL,
    MALFORMED,
    UNSUPPORTED,
    C,
    In,
    build,
    check,
    fails,
    rand_from,
)
from tests.python.oracles.litert import tolerance_check

r = rand_from(np.random.default_rng(1234))


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
