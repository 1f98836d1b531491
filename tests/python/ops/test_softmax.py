"""Differential tests of SOFTMAX (src/ops/softmax.c) against LiteRT, through the single-op harness
(tests/python/ops/_harness.py).

Float32 outputs must be within 1e-5 * max(1, max|ref|) of LiteRT (its default interpreter,
XNNPACK where it applies: a different summation order, and its reference resolver, where each
runs the file); integer and bool outputs must be identical. Malformed-parameter cases assert a
WickError whose message names the problem; values only known at run time must fail at invoke
with "invalid input value".
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import (
    In,
    check,
    rand,
)

RNG = np.random.default_rng(4321)


def r(shape, dtype="float32", **kw):
    return rand(RNG, shape, dtype, **kw)


# ============================================================================ SOFTMAX


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.7, 0.0])
@pytest.mark.parametrize("shape", [(10,), (3, 7), (2, 3, 5), (2, 2, 3, 4)])
def test_softmax(beta, shape):
    check("SOFTMAX", [In(r(shape) * 5)], dict(beta=beta))


def test_softmax_large_values():
    x = np.array([[1e4, 1e4 - 1, -1e4], [88, 89, 90], [-1e30, 0, 1e30]], np.float32)
    check("SOFTMAX", [In(x)], dict(beta=1.0))
