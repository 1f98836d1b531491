"""Differential tests of PAD and PADV2 (src/ops/pad.c) against LiteRT, through the single-op
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
    fails,
    rand_from,
)

r = rand_from(np.random.default_rng(4321))


# ============================================================================ PAD / PADV2


@pytest.mark.parametrize(
    "x_shape, pads",
    [
        ((2, 3), [[1, 2], [0, 3]]),
        ((4,), [[3, 0]]),
        ((1, 2, 3, 2), [[0, 0], [1, 1], [2, 0], [0, 1]]),
        ((2, 1, 2, 1, 2), [[1, 0], [0, 1], [0, 0], [2, 2], [1, 1]]),
        ((2, 3), [[0, 0], [0, 0]]),
        ((2, 4, 5, 3), [[0, 0], [1, 1], [1, 2], [0, 0]]),  # NHWC image: W x C runs
        ((2, 3, 4, 2), [[0, 0], [2, 0], [0, 0], [0, 0]]),  # H only: H x W x C runs
        # channels only (MediaPipe's residual blocks): runs of 16, 32, 64 and 20 bytes
        ((1, 4, 4, 4), [[0, 0], [0, 0], [0, 0], [2, 2]]),
        ((1, 6, 5, 8), [[0, 0], [0, 0], [0, 0], [0, 8]]),
        ((2, 3, 16), [[0, 0], [0, 0], [3, 1]]),
        ((1, 3, 3, 5), [[0, 0], [0, 0], [0, 0], [1, 0]]),
    ],
)
@pytest.mark.parametrize("pad_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_pad(x_shape, pads, pad_dtype, dtype):
    p = np.array(pads, pad_dtype)
    x = r(x_shape, dtype)
    check("PAD", [In(x), p])
    value = np.array(7, dtype) if dtype == "int32" else np.array(-2.5, np.float32)
    check("PADV2", [In(x), p, value])


def test_pad_runtime_paddings():
    x = r((2, 3))
    check("PAD", [In(x), In(np.array([[1, 0], [2, 1]], np.int32))])
    check("PADV2", [In(x), In(np.array([[0, 2], [1, 1]], np.int32)), In(np.float32(3.5))])


@pytest.mark.parametrize("dtype", ["int64", "int8", "bool"])
def test_pad_other_types(dtype):
    check("PAD", [In(r((2, 2), dtype)), np.array([[1, 1], [0, 2]], np.int32)])
    check("PAD", [In(r((2, 5, 7), dtype)), np.array([[0, 0], [0, 0], [0, 9]], np.int32)])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_channel_pad_split_over_threads(threads):
    """Channel padding of a 128x128x8 image (rows split over the threads, each task filling its
    block and copying the runs in) is np.pad's, for PAD and PADV2's non-byte fill."""
    x = r((1, 128, 128, 8), "float32")
    p = np.array([[0, 0], [0, 0], [0, 0], [3, 5]], np.int32)
    for op, extra, fill in (("PAD", [], 0.0), ("PADV2", [np.array(1.5, np.float32)], 1.5)):
        data, feeds = build(op, [In(x), p, *extra])
        got = wick.load(data, num_threads=threads)(*feeds)[0]
        want = np.pad(x, [(0, 0), (0, 0), (0, 0), (3, 5)], constant_values=fill)
        assert got.tobytes() == want.tobytes()


def test_pad_malformed():
    x = r((2, 3))
    fails("PAD", [In(x), np.array([[1, -1], [0, 0]], np.int32)], status=MALFORMED, match="negative")
    fails(
        "PAD",
        [In(x), In(np.array([[1, 0], [-2, 0]], np.int32))],
        status=INVALID_INPUT,
        match="negative",
    )
    fails("PAD", [In(x), np.array([[1, 1]], np.int32)], status=MALFORMED, match=r"\[2, 2\]")
    fails(
        "PADV2",
        [In(x), np.array([[1, 1], [1, 1]], np.int32), np.array([1, 2], np.float32)],
        status=MALFORMED,
        match="scalar",
    )
