"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED at sizes that reach every optimized-kernel
path (src/kernels/: GEMM and indirect-GEMM tiles and their remainders, the depthwise 3x3 narrow
and wide-row paths with channel tails), compared with LiteRT and with wick's own reference
kernels (``check`` runs both wick paths).

Float32 tolerance: 1e-5 * max(1, max|ref|), the single-op bar of the harness: the optimized
kernels sum the same products in another order (FMA, vector lanes) than the reference and than
XNNPACK. The kernel-level edge cases (every M/N/K remainder, every ISA the host has) are in
tests/unit/test_kernels.c; this file checks the op wiring: which path prepare picks, the packed
weights, the indirection buffer, strides, padding and fused activations end to end.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import In, check, rand

RNG = np.random.default_rng(2468)


def r(shape):
    return rand(RNG, shape)


# 1x1 stride-1 convs run as a plain GEMM; N below, at, and above one 32-wide panel.
@pytest.mark.parametrize("cout", [16, 33, 100])
@pytest.mark.parametrize("act", ["NONE", "RELU6"])
def test_conv_1x1_gemm(cout, act):
    x, w, b = r((1, 9, 11, 24)), r((cout, 1, 1, 24)), r((cout,))
    check(
        "CONV_2D",
        [In(x), w, b],
        dict(padding="SAME", stride_h=1, stride_w=1, fused_activation_function=act),
    )


# Everything else through the indirection buffer: strides, padding, dilation, 1x1 stride 2.
@pytest.mark.parametrize(
    "k,stride,dil,pad",
    [
        (3, 1, 1, "SAME"),
        (3, 2, 1, "SAME"),
        (3, 2, 1, "VALID"),
        (5, 1, 2, "SAME"),
        (1, 2, 1, "VALID"),
        (7, 2, 1, "SAME"),
    ],
)
def test_conv_igemm(k, stride, dil, pad):
    x, w, b = r((2, 15, 13, 19)), r((37, k, k, 19)), r((37,))
    check(
        "CONV_2D",
        [In(x), w, b],
        dict(
            padding=pad,
            stride_h=stride,
            stride_w=stride,
            dilation_h_factor=dil,
            dilation_w_factor=dil,
            fused_activation_function="RELU",
        ),
    )


def test_conv_input_address_changes():
    """The indirection buffer is rebuilt when the input moves; running twice with different
    inputs through one loaded model exercises the cached path with new data."""
    import wick
    from tests.python.ops._harness import build, compare
    from tests.python.oracles.litert import run_litert

    w, b = r((8, 3, 3, 5)), r((8,))
    data, _ = build(
        "CONV_2D", [In(r((1, 10, 10, 5))), w, b], dict(padding="SAME", stride_h=1, stride_w=1)
    )
    model = wick.load(data)
    for _ in range(2):
        x = r((1, 10, 10, 5))
        compare(model(x), run_litert(data, [x]))


# Depthwise 3x3: narrow rows (channel block outer) and wide rows (>= 24 interior pixels),
# channel counts with 16- and 8-lane tails, strides 1 and 2, both paddings.
@pytest.mark.parametrize("shape", [(1, 7, 7, 33), (1, 6, 60, 17), (2, 9, 31, 40)])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("pad", ["SAME", "VALID"])
def test_depthwise_3x3(shape, stride, pad):
    c = shape[3]
    x, w, b = r(shape), r((1, 3, 3, c)), r((c,))
    check(
        "DEPTHWISE_CONV_2D",
        [In(x), w, b],
        dict(
            padding=pad,
            stride_h=stride,
            stride_w=stride,
            depth_multiplier=1,
            fused_activation_function="RELU6",
        ),
    )


# Depthwise shapes beyond the register-blocked 3x3: multiplier 2 (the input expanded into
# scratch, then the multiplier-1 kernel), the register-blocked 5x5, and dilation (the generic
# kernel).
@pytest.mark.parametrize("case", ["multiplier", "5x5", "dilation"])
def test_depthwise_reference_fallbacks(case):
    x = r((1, 8, 8, 6))
    if case == "multiplier":
        w, b, opts = r((1, 3, 3, 12)), r((12,)), dict(depth_multiplier=2)
    elif case == "5x5":
        w, b, opts = r((1, 5, 5, 6)), r((6,)), dict(depth_multiplier=1)
    else:
        w, b, opts = (
            r((1, 3, 3, 6)),
            r((6,)),
            dict(depth_multiplier=1, dilation_h_factor=2, dilation_w_factor=2),
        )
    check("DEPTHWISE_CONV_2D", [In(x), w, b], dict(padding="SAME", stride_h=1, stride_w=1, **opts))


# FULLY_CONNECTED: one row (the 1xNR kernel), a row remainder, N past one column block, and
# N <= 16 (the narrow tile where the ISA has one).
@pytest.mark.parametrize(
    "m,k,n", [(1, 1280, 1000), (9, 33, 70), (15, 600, 700), (1, 64, 10), (20, 33, 16)]
)
def test_fully_connected(m, k, n):
    check(
        "FULLY_CONNECTED",
        [In(r((m, k))), r((n, k)), r((n,))],
        dict(fused_activation_function="RELU"),
    )
