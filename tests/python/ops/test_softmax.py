"""Differential tests of SOFTMAX (src/ops/softmax.c) against LiteRT, through the single-op harness
(tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import (
    In,
    check,
    rand_from,
)

r = rand_from(np.random.default_rng(4321))


# ============================================================================ SOFTMAX


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.7, 0.0])
@pytest.mark.parametrize("shape", [(10,), (3, 7), (2, 3, 5), (2, 2, 3, 4)])
def test_softmax(beta, shape):
    check("SOFTMAX", [In(r(shape) * 5)], dict(beta=beta))


def test_softmax_large_values():
    x = np.array([[1e4, 1e4 - 1, -1e4], [88, 89, 90], [-1e30, 0, 1e30]], np.float32)
    check("SOFTMAX", [In(x)], dict(beta=1.0))
