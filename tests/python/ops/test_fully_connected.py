"""Differential tests of FULLY_CONNECTED (src/ops/fully_connected.c) against LiteRT, through the
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
ACTS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]


# ============================================================================ FULLY_CONNECTED


@pytest.mark.parametrize("x_shape", [(3, 8), (2, 3, 8), (1, 8), (2, 2, 2, 8)])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("bias", ["const", "absent_slot", "no_slot"])
def test_fully_connected(x_shape, keep, bias):
    w = r((5, 8))
    ins = [In(r(x_shape)), w]
    if bias == "const":
        ins.append(r((5,)))
    elif bias == "absent_slot":
        ins.append(None)
    check("FULLY_CONNECTED", ins, dict(keep_num_dims=keep))


def test_fully_connected_flattening_input():
    """Without keep_num_dims the input is any shape whose size is a multiple of K."""
    check("FULLY_CONNECTED", [In(r((2, 3, 4))), r((6, 12)), r((6,))], dict(keep_num_dims=False))


@pytest.mark.parametrize("act", ACTS[:4])
def test_fully_connected_activations(act):
    check(
        "FULLY_CONNECTED",
        [In(r((4, 6)) * 3), r((3, 6)), r((3,))],
        dict(fused_activation_function=act),
    )


def test_fully_connected_runtime_weights():
    check("FULLY_CONNECTED", [In(r((4, 6))), In(r((3, 6))), In(r((3,)))], {})


@pytest.mark.parametrize(
    "x_shape, w_shape, b_shape, opts, match",
    [
        ((3, 7), (5, 8), (5,), {}, "does not split into rows of 8"),
        ((3, 8), (5, 8), (4,), {}, "bias has 4 elements"),
        ((3, 8), (5, 8, 1), (5,), {}, "weights must have rank 2"),
        ((2, 12), (5, 8), (5,), dict(keep_num_dims=True), "keep_num_dims"),
    ],
)
def test_fully_connected_malformed(x_shape, w_shape, b_shape, opts, match):
    fails(
        "FULLY_CONNECTED",
        [In(r(x_shape)), r(w_shape), r(b_shape)],
        opts,
        status=MALFORMED,
        match=match,
    )
