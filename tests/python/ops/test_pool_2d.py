"""Differential tests of AVERAGE_POOL_2D and MAX_POOL_2D (src/ops/pool_2d.c) against LiteRT,
through the single-op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import (
    MALFORMED,
    In,
    check,
    fails,
    rand_from,
)

r = rand_from(np.random.default_rng(4321))


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
