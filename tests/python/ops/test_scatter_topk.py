"""Differential tests of SCATTER_ND and TOPK_V2 against LiteRT (the converter emits them for
scatter/index_put/scatter_add and for topk/sort-like lowerings).

SCATTER_ND writes zeros of ``shape`` and adds every update slice at its index: duplicate indices
sum (bool: OR), in index order, so float results are bit-identical to LiteRT's. wick checks each
index against its dimension (LiteRT only checks the flat offset): constant indices out of range
are a malformed model, run-time ones fail at invoke with "invalid input value".

TOPK_V2 returns the k largest of each last-axis row, largest first, equal values in index order
(LiteRT's TopContainer): values and indices must be identical to LiteRT's.
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
    i32,
    rand_from,
)
from tests.python.oracles.litert import run_litert

RNG = np.random.default_rng(31337)


r = rand_from(RNG)


# ============================================================================ SCATTER_ND


def scatter(indices, updates, shape, *, how="in"):
    """Operands with indices/updates fed at run time (``how="in"``) or stored in the file."""
    wrap = In if how == "in" else C
    return [wrap(np.asarray(indices, np.int32)), wrap(updates), C(np.asarray(shape, np.int32))]


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int32", "int64", "bool"])
@pytest.mark.parametrize("how", ["in", "const"])
def test_scatter_nd_dtypes(dtype, how):
    idx = [[0, 1], [2, 3], [1, 0], [2, 2]]
    check("SCATTER_ND", scatter(idx, r((4,), dtype), (3, 4), how=how), out_dtypes=[dtype])


@pytest.mark.parametrize(
    "idx_shape, shape",
    [
        ((5, 1), (6,)),  # element scatter into a vector
        ((3, 1), (4, 5)),  # row slices
        ((2, 2), (3, 4, 2)),  # [i, j] slices of the last axis
        ((2, 3, 2), (3, 4, 5)),  # batched indices: updates [2, 3, 5]
        ((4, 3), (2, 3, 4)),  # full-depth indices: scalar slices
        ((2, 0), (2, 3)),  # depth 0: every update is the whole output (summed)
    ],
)
def test_scatter_nd_geometry(idx_shape, shape):
    depth = idx_shape[-1]
    idx = np.zeros(idx_shape, np.int32)
    for k in range(depth):
        idx[..., k] = RNG.integers(0, shape[k], size=idx_shape[:-1])
    upd = r(tuple(idx_shape[:-1]) + tuple(shape[depth:]))
    check("SCATTER_ND", scatter(idx, upd, shape), out_dtypes=["float32"])


def test_scatter_nd_duplicates_sum_in_order():
    # the same row three times: LiteRT adds them in index order; so must wick (float bits)
    idx = [[1], [3], [1], [1], [0]]
    upd = np.array([[1e8, 1.0], [2.0, 3.0], [1.0, -1e8], [-1e8, 0.5], [7.0, 7.0]], np.float32)
    got = check("SCATTER_ND", scatter(idx, upd, (4, 2)), out_dtypes=["float32"])
    ref = np.zeros((4, 2), np.float32)
    for i, u in zip(idx, upd, strict=True):
        ref[i[0]] += u
    np.testing.assert_array_equal(got[0], ref)


def test_scatter_nd_int_duplicates_wrap():
    idx = [[0], [0], [0]]
    upd = np.array([100, 100, 100], np.int8)
    check("SCATTER_ND", scatter(idx, upd, (2,)), out_dtypes=["int8"])


def test_scatter_nd_runtime_shape():
    """A shape fed at run time: the node is prepared at invoke."""
    data, feeds = build(
        "SCATTER_ND",
        [In(i32([1], [0])), In(r((2, 3))), In(i32(3, 3))],
        out_dtypes=["float32"],
    )
    ref = run_litert(data, feeds)
    np.testing.assert_array_equal(wick.load(data)(*feeds)[0], ref[0])


@pytest.mark.parametrize("bad", [[[3]], [[-1]], [[1], [4]]])
def test_scatter_nd_runtime_index_out_of_range(bad):
    e = fails(
        "SCATTER_ND",
        scatter(bad, r((len(bad), 2)), (3, 2)),
        status=INVALID_INPUT,
        out_dtypes=["float32"],
    )
    assert "outside [0, 3)" in str(e), str(e)


def test_scatter_nd_index_inside_flat_range_but_outside_its_dimension():
    # [0, 5] in a [3, 4] output: flat offset 5 is inside (LiteRT writes [1, 1]); wick refuses
    e = fails(
        "SCATTER_ND",
        scatter([[0, 5]], r((1,)), (3, 4)),
        status=INVALID_INPUT,
        out_dtypes=["float32"],
    )
    assert "index 5" in str(e) and "outside [0, 4)" in str(e), str(e)


def test_scatter_nd_constant_index_out_of_range():
    fails(
        "SCATTER_ND",
        scatter([[7]], r((1, 2)), (3, 2), how="const"),
        match=r"outside \[0, 3\)",
        status=MALFORMED,
        out_dtypes=["float32"],
    )


@pytest.mark.parametrize(
    "operands, match, status",
    [
        # updates' leading dims must match indices' (2 != 3)
        (scatter(np.zeros((2, 1)), r((3, 2)), (4, 2)), "updates dimension 0", MALFORMED),
        # trailing dims must match shape[depth:]
        (scatter(np.zeros((2, 1)), r((2, 3)), (4, 2)), "output shape has 2", MALFORMED),
        # updates rank
        (scatter(np.zeros((2, 1)), r((2,)), (4, 2)), "rank", MALFORMED),
        # depth larger than the output rank
        (scatter(np.zeros((2, 3)), r((2,)), (4, 2)), "exceeds the output rank", MALFORMED),
        # negative output size
        (scatter(np.zeros((1, 1)), r((1, 2)), (-4, 2)), "not a valid size", MALFORMED),
        # shape must be 1-D with 1..8 entries
        ([In(i32([0])), In(r((1,))), C(np.zeros((1, 1), np.int32))], "1-D", MALFORMED),
        ([In(i32([0])), In(r((1,))), C(np.zeros((0,), np.int32))], "output rank", MALFORMED),
        # index types
        (
            [In(np.array([[0]], np.int64)), In(r((1,))), C(np.array([2], np.int64))],
            "int32",
            UNSUPPORTED,
        ),
        ([In(i32([0])), In(r((1,))), C(np.array([2], np.int64))], "one type", MALFORMED),
        ([In(i32([0])), In(r((1,), "int16")), C(i32(2))], "int16", UNSUPPORTED),
    ],
)
def test_scatter_nd_malformed(operands, match, status):
    dt = operands[1].value.dtype
    fails("SCATTER_ND", operands, match=match, status=status, out_dtypes=[dt])


# ============================================================================ TOPK_V2


def topk(x, k, *, k_dtype=np.int32, idx_dtype="int32", k_in=False):
    kk = np.array(k, k_dtype)
    return dict(
        operands=[In(x), In(kk) if k_in else C(kk)],
        n_out=2,
        out_dtypes=[x.dtype, idx_dtype],
    )


def run_topk(x, k, **kw):
    spec = topk(x, k, **kw)
    return check("TOPK_V2", spec.pop("operands"), **spec)


@pytest.mark.parametrize("dtype", ["float32", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("shape, k", [((7,), 3), ((3, 10), 10), ((2, 3, 5), 1), ((4, 6), 0)])
def test_topk(dtype, shape, k):
    run_topk(r(shape, dtype, lo=-50, hi=50), k)


def test_topk_ties_keep_index_order():
    x = np.array([[1, 3, 3, 2, 3, 1, 2], [0, 0, 0, 0, 0, 0, 0]], np.float32)
    vals, idx = run_topk(x, 5)
    np.testing.assert_array_equal(idx, [[1, 2, 4, 3, 6], [0, 1, 2, 3, 4]])
    x = RNG.integers(0, 3, size=(6, 40)).astype(np.int32)  # many ties, longer rows
    run_topk(x, 17)


def test_topk_long_rows():
    run_topk(r((3, 1000)), 50)


def test_topk_int16_k_and_indices():
    run_topk(r((2, 9), "int16"), 4, k_dtype=np.int16, idx_dtype="int16")


def test_topk_runtime_k():
    spec = topk(r((3, 8)), 5, k_in=True)
    check("TOPK_V2", spec.pop("operands"), **spec)


@pytest.mark.parametrize("k", [9, -1])
def test_topk_runtime_k_out_of_range(k):
    spec = topk(r((3, 8)), k, k_in=True)
    e = fails("TOPK_V2", spec.pop("operands"), status=INVALID_INPUT, **spec)
    assert "outside [0, 8]" in str(e), str(e)


@pytest.mark.parametrize(
    "x, k, kw, match, status",
    [
        (r((3, 4)), 5, {}, r"k = 5 is outside \[0, 4\]", MALFORMED),
        (r((3, 4)), -2, {}, "outside", MALFORMED),
        (np.float32(1.0), 1, {}, "rank >= 1", MALFORMED),
        (r((3, 4)), [1, 2], {}, "one value", MALFORMED),
        (r((3, 4)), 2, dict(k_dtype=np.int64), "int32 or int16", MALFORMED),
        (r((3, 4)), 2, dict(idx_dtype="int64"), "int32 or int16", MALFORMED),
        (r((3, 4), "bool"), 2, {}, "bool", UNSUPPORTED),
    ],
)
def test_topk_malformed(x, k, kw, match, status):
    spec = topk(np.asarray(x), k, **kw)
    fails("TOPK_V2", spec.pop("operands"), match=match, status=status, **spec)
