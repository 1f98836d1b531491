"""Differential tests of the binary ops of src/ops/elementwise_binary.c against LiteRT, through the
single-op harness (tests/python/ops/_harness.py).

The arithmetic, comparison and logical ops, the values each arithmetic op draws, which take a
fused activation, and the numpy oracles are their records in
src/kernels/reference/binary_ops.inc (read by wick.tflite.binary_ops): a plain op added there is
tested here with no edit.

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    INVALID_INPUT,
    MALFORMED,
    UNSUPPORTED,
    C,
    In,
    build,
    check,
    fails,
    litert_refuses,
    rand_from,
)
from wick.tflite.binary_ops import arithmetic_ops, compare_ops, records

r = rand_from(np.random.default_rng(4321))


# ============================================================================ BINARY OPS

RECORDS = {op.name: op for op in records()}
ARITH = [op.name for op in arithmetic_ops()]
COMPARE = [op.name for op in compare_ops(logical=False)]
LOGICAL = [op.name for op in compare_ops(logical=True)]
ACT_OPS = {op.name for op in arithmetic_ops() if op.activation}
# the records' TYPES: which arithmetic ops run on int32 and int64
INT_ARITH = [op.name for op in arithmetic_ops() if op.types != "F32"]


def oracle(op: str, a, b):
    """The record's numpy oracle on a and b."""
    return eval(RECORDS[op].numpy, {"np": np, "x": a, "y": b})  # the record's text


BCAST = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),  # rank mismatch, both broadcast
    ((1,), (2, 2, 3)),
    ((), (3, 2)),  # scalar
    ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),  # rank 5
    ((3, 1), (1, 0)),  # empty
]


def _opts(op, act="NONE"):
    return dict(fused_activation_function=act) if op in ACT_OPS else None


def _floats(op, shape):
    """Values of the record's DOMAIN."""
    x = r(shape)
    if RECORDS[op].domain == "POSITIVE":
        return np.abs(x) + 0.5
    if RECORDS[op].domain == "NONZERO":
        return np.where(np.abs(x) < 0.25, 0.75, x).astype(np.float32)
    return x


@pytest.mark.parametrize("op", ARITH)
@pytest.mark.parametrize("shapes", BCAST)
def test_binary_float(op, shapes):
    a, b = _floats(op, shapes[0]), _floats(op, shapes[1])
    check(op, [In(a), In(b)], _opts(op))
    check(op, [In(a), C(b)], _opts(op))


@pytest.mark.parametrize("op", sorted(ACT_OPS))
@pytest.mark.parametrize("act", ["RELU", "RELU_N1_TO_1", "RELU6"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_binary_activations(op, act, dtype):
    a, b = r((3, 4), dtype, lo=-9, hi=9), r((4,), dtype, lo=1, hi=9)
    if dtype == "float32":
        a = a * 4
    if dtype == "int32" and op == "DIV" and litert_refuses(op, [In(a), In(b)], _opts(op, act)):
        pytest.skip("LiteRT refuses int32 DIV with a fused activation")
    check(op, [In(a), In(b)], _opts(op, act))


@pytest.mark.parametrize("op", [op for op in INT_ARITH if op != "POW"])  # POW: test_int_pow
@pytest.mark.parametrize("shapes", BCAST[:6])
def test_binary_int32(op, shapes):
    a = r(shapes[0], "int32", lo=-50, hi=50)
    b = r(shapes[1], "int32", lo=-7, hi=7)
    if op in ("FLOOR_DIV", "FLOOR_MOD", "DIV"):
        b = np.where(b == 0, 3, b).astype(np.int32)
    check(op, [In(a), In(b)], _opts(op))


@pytest.mark.parametrize(
    "op", ["ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "FLOOR_DIV", "FLOOR_MOD"]
)
def test_binary_int64(op):
    a = r((3, 4), "int64", lo=-50, hi=50)
    b = r((4,), "int64", lo=-7, hi=7)
    b = np.where(b == 0, 5, b).astype(np.int64)
    if not litert_refuses(op, [In(a), In(b)], _opts(op)):
        check(op, [In(a), In(b)], _opts(op))
        return
    # LiteRT 2.3 has no int64 FLOOR_DIV: the record's numpy oracle (same floor semantics) is
    data, feeds = build(op, [In(a), In(b)], _opts(op))
    (got,) = wick.load(data)(*feeds)
    np.testing.assert_array_equal(got, oracle(op, a, b))


def test_floor_div_mod_negative_operands():
    """Every sign combination, exact multiples included: floor semantics, sign of the divisor."""
    a = np.array([7, -7, 7, -7, 6, -6, 0, 1, -1, 2**31 - 1, -(2**31)], np.int32)
    b = np.array([2, 2, -2, -2, 3, -3, 5, -5, 5, 2, 3], np.int32)
    (fd,) = check("FLOOR_DIV", [In(a), In(b)])
    (fm,) = check("FLOOR_MOD", [In(a), In(b)])
    np.testing.assert_array_equal(fd, np.floor_divide(a, b))
    np.testing.assert_array_equal(fm, np.mod(a, b))
    x, y = a.astype(np.float32), b.astype(np.float32)
    check("FLOOR_DIV", [In(x), In(y)])
    check("FLOOR_MOD", [In(x), In(y)])


def test_int_div_truncates():
    a = np.array([7, -7, 7, -7, 1, -1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 3], np.int32)
    (got,) = check("DIV", [In(a), In(b)], _opts("DIV"))
    np.testing.assert_array_equal(got, [3, -3, -3, 3, 0, 0])


@pytest.mark.parametrize("op", ["DIV", "FLOOR_DIV", "FLOOR_MOD"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_division_by_zero(op, dtype):
    a = np.array([1, 2, 3], dtype)
    b = np.array([1, 0, 2], dtype)
    fails(op, [In(a), In(b)], _opts(op), status=INVALID_INPUT, match="division by zero")
    fails(op, [In(a), C(b)], _opts(op), status=INVALID_INPUT, match="division by zero")


def test_int_pow():
    a = r((3, 4), "int32", lo=-5, hi=5)
    b = r((3, 4), "int32", lo=0, hi=6)
    check("POW", [In(a), In(b)])


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_maximum_minimum_nan(op):
    """LiteRT has no consistent NaN rule here: its reference kernel returns the second operand
    when either is NaN, XNNPACK (the default) the first. wick propagates NaN like numpy's
    np.maximum / np.minimum (IEEE maximum); numpy is the oracle."""
    a = np.array([np.nan, 1, np.nan, -np.inf, 0.5], np.float32)
    b = np.array([1, np.nan, np.nan, 2, -0.5], np.float32)
    data, feeds = build(op, [In(a), In(b)])
    (got,) = wick.load(data)(*feeds)
    np.testing.assert_array_equal(got, oracle(op, a, b))


@pytest.mark.parametrize("op", COMPARE)
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "int8", "uint8", "bool"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (3, 1)), ((), (4,))])
def test_compare(op, dtype, shapes):
    a, b = r(shapes[0], dtype, lo=-3, hi=3), r(shapes[1], dtype, lo=-3, hi=3)
    if dtype in ("int8", "uint8") or (dtype == "bool" and op not in ("EQUAL", "NOT_EQUAL")):
        # LiteRT aborts the whole process on these (unquantized int8/uint8 comparisons expect
        # quantization parameters; ordered bool comparisons are unsupported): numpy is the oracle
        data, feeds = build(op, [In(a), In(b)], out_dtypes=["bool"])
        (got,) = wick.load(data)(*feeds)
        want = oracle(op, a, b)
        assert got.dtype == np.bool_ and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        return
    check(op, [In(a), In(b)], out_dtypes=["bool"])


@pytest.mark.parametrize("op", COMPARE)
def test_compare_float_specials(op):
    a = np.array([np.nan, 0.0, -0.0, np.inf, 1, np.nan], np.float32)
    b = np.array([np.nan, -0.0, 0.0, np.inf, np.nan, 1], np.float32)
    check(op, [In(a), In(b)], out_dtypes=["bool"])


@pytest.mark.parametrize("op", LOGICAL)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 1, 3), (4, 1)), ((), (5,))])
def test_logical(op, shapes):
    check(op, [In(r(shapes[0], "bool")), In(r(shapes[1], "bool"))])


@pytest.mark.parametrize("op", ARITH + COMPARE + LOGICAL)
def test_record_oracle_is_wick(op):
    """Each record's numpy ORACLE computes what wick computes: float32 values of its DOMAIN
    (comparisons: a few integers, so that ties happen; logical ops: bools), broadcast."""
    if op in LOGICAL:
        a, b = r((3, 4), "bool"), r((4,), "bool")
    elif op in COMPARE:
        a, b = r((3, 4), lo=-3, hi=3).round(), r((4,), lo=-3, hi=3).round()
    else:
        a, b = _floats(op, (3, 4)), _floats(op, (4,))
    data, feeds = build(
        op, [In(a), In(b)], _opts(op), out_dtypes=["bool"] if op not in ARITH else None
    )
    (got,) = wick.load(data)(*feeds)
    want = oracle(op, a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    if op in ARITH and RECORDS[op].result == "APPROX":
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "op, a, b, opts, status, match",
    [
        (
            "ADD",
            ((2, 3), "float32"),
            ((4,), "float32"),
            _opts("ADD"),
            MALFORMED,
            r"shapes \[2,3\] and \[4\] do not broadcast",
        ),
        ("MUL", ((2, 3), "float32"), ((2, 3), "int32"), _opts("MUL"), MALFORMED, "types differ"),
        (
            "ADD",
            ((2, 3), "float32"),
            ((2, 3), "float32"),
            dict(fused_activation_function=9),
            MALFORMED,
            "unknown fused activation 9",
        ),
        ("LOGICAL_AND", ((2,), "int32"), ((2,), "int32"), None, MALFORMED, "must be bool"),
        ("SUB", ((2,), "int8"), ((2,), "int8"), _opts("SUB"), UNSUPPORTED, "int8"),
        ("LESS", ((3,), "float32"), ((2,), "float32"), None, MALFORMED, "do not broadcast"),
    ],
)
def test_binary_malformed(op, a, b, opts, status, match):
    out = ["bool"] if op in COMPARE or op.startswith("LOGICAL") else None
    fails(op, [In(r(*a)), In(r(*b))], opts, status=status, match=match, out_dtypes=out)
