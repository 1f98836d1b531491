"""Differential tests of LOG_SOFTMAX and L2_NORMALIZATION (src/ops/normalization.c) against LiteRT,
through the single-op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import (
    UNSUPPORTED,
    In,
    check,
    fails,
    litert_refuses,
    rand_from,
)

r = rand_from(np.random.default_rng(1234))


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
