"""Differential tests of CONCATENATION (src/ops/concatenation.c) against LiteRT, through the
single-op harness (tests/python/ops/_harness.py).

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


# ============================================================================ CONCATENATION


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_concatenation(n, axis, dtype):
    base = [2, 3, 4]
    ins = []
    for k in range(n):
        s = list(base)
        s[axis] = k + 1
        ins.append(In(r(tuple(s), dtype)) if k % 2 == 0 else r(tuple(s), dtype))
    check("CONCATENATION", ins, dict(axis=axis, fused_activation_function="NONE"))


@pytest.mark.parametrize("dtype", ["int64", "bool", "int8", "uint8"])
def test_concatenation_types(dtype):
    check("CONCATENATION", [In(r((2, 2), dtype)), In(r((2, 3), dtype))], dict(axis=-1))


def test_concatenation_zero_size_input():
    check("CONCATENATION", [In(r((2, 0))), In(r((2, 3)))], dict(axis=1))


@pytest.mark.parametrize(
    "shapes, axis, match",
    [
        ([(2, 3), (3, 3)], 1, "differs from input 0 in dimension 0"),
        ([(2, 3), (2, 3, 1)], 0, "rank 3"),
        ([(2, 3), (2, 3)], 2, "axis 2 is outside rank 2"),
        ([(2, 3), (2, 3)], -3, "axis -3 is outside rank 2"),
    ],
)
def test_concatenation_malformed(shapes, axis, match):
    fails(
        "CONCATENATION", [In(r(s)) for s in shapes], dict(axis=axis), status=MALFORMED, match=match
    )


def test_concatenation_mixed_types():
    fails(
        "CONCATENATION",
        [In(r((2, 3))), In(r((2, 3), "int32"))],
        dict(axis=0),
        status=MALFORMED,
        match="input 1 has type int32",
    )
