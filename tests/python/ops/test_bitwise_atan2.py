"""Differential tests of BITWISE_XOR and ATAN2 against LiteRT (the converter emits them for
integer ``^`` and for atan2/atan/asin/acos).

BITWISE_XOR broadcasts (numpy rules) over int8, uint8, int16 and int32: outputs must be
identical to LiteRT's. ATAN2 takes two float32 or float64 tensors of the same shape; float32 must
be within 1e-5 * max(1, max|ref|) (both call the C library's atan2f). LiteRT checks only that the
ranks agree and then reads both operands with y's shape, so wick refuses different shapes.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import MALFORMED, UNSUPPORTED, C, In, build, check, fails, rand_from
from tests.python.oracles.litert import run_litert

RNG = np.random.default_rng(2718)


r = rand_from(RNG)


def full_range(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


# ============================================================================ BITWISE_XOR


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32"])
@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 4), (3, 4)),
        ((2, 3, 4), (4,)),
        ((3, 1), (1, 5)),
        ((), (2, 3)),
        ((1, 2, 1, 3), (2, 1, 1)),
    ],
)
def test_bitwise_xor(dtype, shapes):
    a, b = full_range(shapes[0], dtype), full_range(shapes[1], dtype)
    check("BITWISE_XOR", [In(a), In(b)])
    check("BITWISE_XOR", [In(a), C(b)])


def test_bitwise_xor_constant_folds():
    a, b = full_range((5,), "int32"), full_range((5,), "int32")
    got = check("BITWISE_XOR", [C(a), C(b)])
    np.testing.assert_array_equal(got[0], a ^ b)


def test_bitwise_xor_rank5_broadcast():
    # LiteRT's broadcasting kernel stops at rank 4 without broadcasting; same shapes run flat
    a, b = full_range((2, 1, 3, 1, 2), "int16"), full_range((2, 1, 3, 1, 2), "int16")
    check("BITWISE_XOR", [In(a), In(b)])
    a, b = full_range((2, 1, 3, 1, 2), "int16"), full_range((3, 1, 1), "int16")
    got = wick.load(build("BITWISE_XOR", [In(a), In(b)])[0])(a, b)
    np.testing.assert_array_equal(got[0], a ^ b)


@pytest.mark.parametrize(
    "operands, match, status",
    [
        (
            [In(np.zeros((2, 3), np.float32)), In(np.zeros((2, 3), np.float32))],
            "float32",
            UNSUPPORTED,
        ),
        ([In(np.zeros((2, 3), np.int64)), In(np.zeros((2, 3), np.int64))], "int64", UNSUPPORTED),
        (
            [In(np.zeros((2, 3), np.int32)), In(np.zeros((2, 3), np.int16))],
            "types differ",
            MALFORMED,
        ),
        ([In(np.zeros((2, 3), np.int32)), In(np.zeros((4,), np.int32))], "broadcast", MALFORMED),
    ],
)
def test_bitwise_xor_malformed(operands, match, status):
    fails("BITWISE_XOR", operands, match=match, status=status)


# ============================================================================ ATAN2


@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (2, 3, 4, 5)])
def test_atan2(shape):
    check("ATAN2", [In(r(shape)), In(r(shape))])


def test_atan2_quadrants_and_specials():
    ys = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.inf, np.nan, 2.0, 1e-30])
    xs = np.array([0.0, 0.0, -0.0, -0.0, -1.0, -1.0, np.inf, -np.inf, 3.0, 1.0, np.nan, -1e30])
    check("ATAN2", [In(ys.astype(np.float32)), In(xs.astype(np.float32))])


def test_atan2_float64():
    y, x = r((3, 5)).astype(np.float64), r((3, 5)).astype(np.float64)
    data, feeds = build("ATAN2", [In(y), In(x)])
    ref = run_litert(data, feeds)
    for reference in (False, True):
        got = wick.load(data, reference=reference)(*feeds)
        assert got[0].dtype == np.float64
        np.testing.assert_array_equal(got[0], ref[0])


def test_atan2_constant_x():
    check("ATAN2", [In(r((4, 3))), C(np.ones((4, 3), np.float32))])


@pytest.mark.parametrize(
    "operands, match, status",
    [
        (
            [In(np.zeros((2, 3), np.float32)), In(np.zeros((3,), np.float32))],
            "same shape",
            MALFORMED,
        ),
        (
            [In(np.zeros((2, 3), np.float32)), In(np.zeros((3, 2), np.float32))],
            "same shape",
            MALFORMED,
        ),
        ([In(np.zeros((2, 3), np.float32)), In(np.zeros((2, 3), np.float64))], "differ", MALFORMED),
        ([In(np.zeros((2, 3), np.int32)), In(np.zeros((2, 3), np.int32))], "int32", UNSUPPORTED),
    ],
)
def test_atan2_malformed(operands, match, status):
    fails("ATAN2", operands, match=match, status=status)
