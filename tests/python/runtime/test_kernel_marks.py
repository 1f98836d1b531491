"""Which kernel each operator runs (wick_interpreter_op_kernel; the binding's ``op_kernels()``
and ``profile(kernels=True)``; the column of `wick bench --profile`): the op records its path at
prepare, so a file that falls onto a slow path shows.

One-op files built with the test writer: a plain convolution takes an optimized kernel, a
grouped one (not one channel per group) the reference kernel, PRELU with alpha varying along a
middle axis the reference broadcast, per-channel PRELU the generic row loop; forcing the
reference kernels marks every op "reference"; a folded node says "folded". On a CPU without
wick's vector kernels (WICK_MAX_ISA=none) the optimized cases are skipped, saying so.
"""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest

import wick
from tests.python.ops._harness import C, In, Q, build

RNG = np.random.default_rng(11)
NO_VECTOR_KERNELS = os.environ.get("WICK_MAX_ISA") == "none" or os.environ.get(
    "WICK_FORCE_REFERENCE"
) in ("1",)


def kernels(data, **load):
    rt = wick.load(data, **load)
    return rt.signature(None).op_kernels()


def conv(groups):
    x = RNG.standard_normal((1, 8, 8, 8)).astype(np.float32)
    w = RNG.standard_normal((8, 3, 3, 8 // groups)).astype(np.float32)
    b = np.zeros(8, np.float32)
    opts = dict(padding="SAME", stride_h=1, stride_w=1)
    return build("CONV_2D", [In(x), C(w), C(b)], opts)[0]


@pytest.mark.skipif(NO_VECTOR_KERNELS, reason="wick's vector kernels are turned off here")
def test_plain_conv_is_optimized():
    ((kind, name),) = kernels(conv(1))
    assert (kind, name) in {("optimized", "igemm"), ("optimized", "winograd")}


def test_grouped_conv_is_reference():
    # 2 groups of 4 channels: no optimized path yet (issue 16)
    assert kernels(conv(2)) == [("reference", "grouped")]


def test_forced_reference_marks_everything():
    assert kernels(conv(1), reference=True) == [("reference", "")]


def prelu(alpha_shape):
    x = RNG.standard_normal((1, 4, 5, 6)).astype(np.float32)
    a = RNG.standard_normal(alpha_shape).astype(np.float32)
    return build("PRELU", [In(x), C(a)])[0]


def test_prelu_paths():
    # channel rows: the kernel tables' vector PRELU where the CPU has one (x86), else portable C
    vector = platform.machine() in ("x86_64", "AMD64") and os.environ.get("WICK_MAX_ISA") != "none"
    assert kernels(prelu((1, 1, 6))) == [("optimized" if vector else "generic", "channel rows")]
    assert kernels(prelu((4, 1, 1))) == [("reference", "broadcast")]


@pytest.mark.skipif(
    NO_VECTOR_KERNELS or platform.machine() not in ("x86_64", "AMD64"),
    reason="the int8 SQUARED_DIFFERENCE, 8-bit table and float NEG kernels are x86 vector kernels",
)
def test_layer_norm_paths():
    # TensorFlow's int8 layer norm (Keras ConvNeXt): (x - mean)^2 over a [1, H, W, 1] mean, the
    # RSQRT of the variance, and the float NEG of the mean
    x = RNG.integers(-128, 128, (1, 4, 4, 32)).astype(np.int8)
    m = RNG.integers(-128, 128, (1, 4, 4, 1)).astype(np.int8)
    sqdiff = build("SQUARED_DIFFERENCE", [Q(x, 0.05, 3), Q(m, 0.05, 3)], outs=[("int8", 0.1, -128)])
    assert kernels(sqdiff[0]) == [("optimized", "q8 broadcast runs")]
    rsqrt = build("RSQRT", [Q(np.abs(m), 0.02, -128)], outs=[("int8", 0.05, -128)])
    assert kernels(rsqrt[0]) == [("optimized", "q8 table")]
    neg = build("NEG", [In(RNG.standard_normal((1, 4, 4, 1)).astype(np.float32))])
    assert kernels(neg[0]) == [("optimized", "")]


def test_folded_and_profile_columns():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    data, feeds = build("ADD", [C(x), C(x)])  # both inputs constant: folded at prepare
    runner = wick.load(data).signature(None)
    assert runner.op_kernels() == [("folded", "")]
    ((name, ns, kernel),) = runner.profile(kernels=True)
    assert name == "ADD" and ns == 0 and kernel == ("folded", "")
    ((name, ns),) = runner.profile()  # the two-column form callers unpack stays as it was
