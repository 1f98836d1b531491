"""Binary op + clamp fusion at prepare (src/core/fuse.c, fuse_binary_clamp): a float ADD / SUB /
MUL / DIV without an activation whose output only a RELU, RELU6, RELU_N1_TO_1 or RELU_0_TO_1
reads takes that activation's bounds as its own clamp; the activation node is skipped (0 ns in
the profile). BlazeFace's residual ADDs, whose other operand is computed after the convolution
(so they cannot be its epilogue), are followed by a RELU this way.

Each model runs fused, with WICK_NO_FUSION=1 (each node on its own: the binary kernels clamp as
min(hi, max(lo, x)), as the activation kernels do, so byte-identical, NaN and -0 included) and
on LiteRT (within the float tolerance). Near misses must not fuse (every node runs).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from tests.python.runtime._fusion import fused_and_unfused
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(9)


def ran(profile):
    return [name for name, ns in profile if ns > 0]


def model(op, act, a_shape, b_shape, binary_act="NONE", expose=False, b_const=False):
    """y = act(op(a, b)); `expose` also makes op's output a graph output."""
    w = ModelWriter()
    sg = w.add_subgraph()
    a = sg.add_tensor("a", list(a_shape), np.float32)
    inputs = [a]
    if b_const:
        b = sg.add_constant("b", RNG.uniform(0.5, 2.0, b_shape).astype(np.float32))
    else:
        b = sg.add_tensor("b", list(b_shape), np.float32)
        inputs.append(b)
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    t = sg.add_tensor("t", out_shape, np.float32)
    sg.add_operator(op, [a, b], [t], {"fused_activation_function": binary_act})
    y = sg.add_tensor("y", out_shape, np.float32)
    sg.add_operator(act, [t], [y])
    sg.set_inputs(inputs)
    sg.set_outputs([y] + ([t] if expose else []))
    return w.finish()


def feeds(a_shape, b_shape, b_const=False, op="ADD"):
    a = (RNG.standard_normal(a_shape) * 4).astype(np.float32)
    if b_const:
        return [a]
    b = (RNG.standard_normal(b_shape) * 4).astype(np.float32)
    if op == "DIV":
        b = np.where(np.abs(b) < 0.25, 1.0, b).astype(np.float32)
    return [a, b]


def run(data, feed, monkeypatch, threads=1):
    return fused_and_unfused(data, feed, monkeypatch, threads)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV"])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1"])
def test_binary_op_takes_the_clamp(op, act, monkeypatch):
    shape = (1, 9, 10, 16)
    data = model(op, act, shape, shape)
    feed = feeds(shape, shape, op=op)
    got, prof = run(data, feed, monkeypatch)
    assert ran(prof) == [op], prof
    if act != "RELU_0_TO_1":  # (LiteRT's own kernels: the same clamps)
        compare(got, run_litert(data, feed))


@pytest.mark.parametrize(
    "a_shape, b_shape, b_const",
    [
        ((1, 6, 7, 24), (24,), True),  # a per-channel constant
        ((2, 5, 3), (1,), True),  # a scalar
        ((1, 4, 1, 8), (1, 1, 5, 8), False),  # both broadcast
        ((2, 3, 4, 5, 6), (2, 1, 4, 1, 6), False),  # more than three loops: the reference
    ],
)
def test_broadcast_forms_fuse(a_shape, b_shape, b_const, monkeypatch):
    data = model("ADD", "RELU", a_shape, b_shape, b_const=b_const)
    feed = feeds(a_shape, b_shape, b_const)
    got, prof = run(data, feed, monkeypatch)
    assert ran(prof) == ["ADD"], prof
    compare(got, run_litert(data, feed))


def test_special_values_and_threads(monkeypatch):
    shape = (1, 64, 64, 16)  # large enough to split
    data = model("ADD", "RELU6", shape, shape)
    a, b = feeds(shape, shape)
    a.flat[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 3e38, -3e38, 6.0]
    b.flat[:8] = [1.0, 1.0, 1.0, -0.0, -0.0, 3e38, -3e38, 0.0]
    one, prof = run(data, [a, b], monkeypatch)
    three, _ = run(data, [a, b], monkeypatch, threads=3)
    assert ran(prof) == ["ADD"], prof
    assert one[0].tobytes() == three[0].tobytes()


@pytest.mark.parametrize(
    "kw",
    [
        dict(binary_act="RELU6"),  # the op has its own activation
        dict(expose=True),  # its output read elsewhere (a graph output)
    ],
)
def test_near_miss_does_not_fuse(kw, monkeypatch):
    shape = (1, 5, 5, 8)
    data = model("ADD", "RELU", shape, shape, **kw)
    _, prof = run(data, feeds(shape, shape), monkeypatch)
    assert len(ran(prof)) == len(prof), prof


def test_other_activations_do_not_fuse(monkeypatch):
    shape = (1, 5, 5, 8)
    data = model("MUL", "TANH", shape, shape)
    _, prof = run(data, feeds(shape, shape), monkeypatch)
    assert ran(prof) == ["MUL", "TANH"], prof
