"""Differential tests of RESHAPE (src/ops/reshape.c) against LiteRT, through the single-op harness
(tests/python/ops/_harness.py).

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
    litert_refuses,
    rand_from,
)

r = rand_from(np.random.default_rng(4321))


# ============================================================================ RESHAPE


@pytest.mark.parametrize(
    "x_shape, new",
    [
        ((2, 3, 4), [4, -1]),
        ((2, 3, 4), [24]),
        ((6,), [1, 2, 1, 3]),
        ((2, 3, 4), [-1]),
        ((1, 1), []),
    ],
)
@pytest.mark.parametrize("how", ["input", "option", "both", "runtime"])
def test_reshape(x_shape, new, how):
    x = r(x_shape)
    shape = np.array(new, np.int32)
    if how == "input":
        check("RESHAPE", [In(x), shape])
    elif how == "option":
        if not new:
            return  # an empty new_shape option reads as "absent"
        check("RESHAPE", [In(x)], dict(new_shape=new))
    elif how == "both":  # the shape input wins
        check("RESHAPE", [In(x), shape], dict(new_shape=[int(np.prod(x_shape))]))
    else:
        check("RESHAPE", [In(x), In(shape)])


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "int8"])
def test_reshape_types(dtype):
    check("RESHAPE", [In(r((3, 4), dtype)), i32(2, 6)])


@pytest.mark.parametrize(
    "new, match",
    [
        ([5, -1], "cannot infer"),
        ([-1, -1], "more than one -1"),
        ([7], "cannot reshape 24"),
        ([2, -3, 4], "dimension 1 is -3"),
    ],
)
def test_reshape_malformed(new, match):
    x = r((2, 3, 4))
    fails("RESHAPE", [In(x), np.array(new, np.int32)], status=MALFORMED, match=match)
    fails("RESHAPE", [In(x), In(np.array(new, np.int32))], status=INVALID_INPUT, match=match)


def test_reshape_empty_shape_tensor():
    """An empty shape tensor means a scalar (LiteRT), even when new_shape is also given..."""
    x = r((1, 1))
    e = np.array([], np.int32)
    (got,) = check("RESHAPE", [In(x), e])
    assert got.shape == ()
    check("RESHAPE", [In(x), e], dict(new_shape=[1]))
    check("RESHAPE", [In(x), In(e)])


def test_reshape_legacy_empty_shape_tensor_with_new_shape():
    """...but when the input does not hold one element LiteRT fails, and wick falls back to
    new_shape: legacy converters paired new_shape with a dummy empty shape tensor."""
    x = r((2, 3))
    ops, opts = [In(x), np.array([], np.int32)], dict(new_shape=[3, 2])
    assert litert_refuses("RESHAPE", ops, opts)
    data, feeds = build("RESHAPE", ops, opts)
    np.testing.assert_array_equal(wick.load(data)(*feeds)[0], x.reshape(3, 2))


def test_reshape_rank_cap():
    fails("RESHAPE", [In(r((1,))), np.ones(9, np.int32)], match="exceeds")
