"""Differential tests of RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (src/ops/resize.c) against
LiteRT, through the single-op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).

The pixel-picking of the resize ops must be identical, and the bilinear resize is also checked
bit-exact against LiteRT's reference kernels: wick evaluates the same float formula in the same
order.
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
from tests.python.oracles.litert import run_litert

r = rand_from(np.random.default_rng(1234))


# ============================================================================ RESIZE


RESIZE_SHAPES = [
    (3, 4, 7, 9),
    (4, 4, 8, 8),
    (5, 7, 3, 2),
    (1, 1, 3, 3),
    (3, 3, 1, 1),
    (6, 5, 6, 5),
    (2, 3, 5, 1),
    (10, 13, 17, 29),
]
MODES = [(False, False), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half", "align+half"])
@pytest.mark.parametrize("hw", RESIZE_SHAPES)
def test_resize_bilinear(mode, hw):
    ac, hp = mode
    ih, iw, oh, ow = hw
    x = r((2, ih, iw, 3))
    opts = dict(align_corners=ac, half_pixel_centers=hp)
    ops = [In(x), i32(oh, ow)]
    if ac and hp:  # LiteRT refuses this combination; so does wick
        assert litert_refuses("RESIZE_BILINEAR", ops, opts)
        fails("RESIZE_BILINEAR", ops, opts, status=MALFORMED, match="cannot both be set")
        return
    check("RESIZE_BILINEAR", ops, opts)
    # bit-exact against LiteRT's reference kernel (same formula, same evaluation order)
    data, feeds = build("RESIZE_BILINEAR", ops, opts)
    ref = run_litert(data, feeds, reference=True)[0]
    got = wick.load(data)(*feeds)[0]
    assert got.tobytes() == ref.tobytes()


@pytest.mark.parametrize("mode", MODES, ids=["plain", "align", "half", "align+half"])
@pytest.mark.parametrize("hw", RESIZE_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int16"])
def test_resize_nearest(mode, hw, dtype):
    ac, hp = mode
    ih, iw, oh, ow = hw
    x = r((2, ih, iw, 3), dtype)
    check(
        "RESIZE_NEAREST_NEIGHBOR",
        [In(x), i32(oh, ow)],
        dict(align_corners=ac, half_pixel_centers=hp),
    )


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_resize_runtime_size(op):
    x = r((1, 4, 5, 2))
    check(op, [In(x), In(i32(7, 3))], dict(align_corners=False, half_pixel_centers=True))
    fails(
        op,
        [In(x), In(i32(0, 3))],
        dict(align_corners=False, half_pixel_centers=False),
        status=INVALID_INPUT,
        match="must be positive",
    )


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize(
    "x_shape, size, match",
    [
        ((1, 4, 4, 2), i32(-2, 3), "must be positive"),
        ((1, 4, 4, 2), i32(2, 3, 4), "2 values"),
        ((4, 4, 2), i32(2, 3), "rank 4"),
        ((1, 0, 4, 2), i32(2, 3), "empty"),
    ],
)
def test_resize_malformed(op, x_shape, size, match):
    fails(
        op,
        [In(r(x_shape)), size],
        dict(align_corners=False, half_pixel_centers=False),
        status=MALFORMED,
        match=match,
    )
