"""Decomposed tanh-form GELU fusion at prepare (src/core/fuse.c, fuse_gelu_tanh):

    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))

written as MUL / POW / ADD / TANH nodes (wick's converter and TensorFlow's write the builtin
GELU; TensorFlow decomposes a hand-written ``x * x * x`` form, which test_tf_form copies node for
node) runs as the vectorized GELU_TANH: in the epilogue of the FULLY_CONNECTED / convolution that
produces x when nothing else reads x, else in the chain's first node; every other node is
skipped. The vectorized kernel is not the chain's order of operations: fused and unfused
(WICK_NO_FUSION=1) agree within GELU_TANH's error bound (src/kernels/template/elementwise.h:
16 ulp + |2u| 2^-21 relative; the chain's 1 + tanh(u) cancels for x < -5, there the fused result
is the accurate one), both are compared with the formula in float64 and with LiteRT. Near misses
(another constant, an intermediate read elsewhere, no 0.5) must not fuse.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(3)
K1 = math.sqrt(2 / math.pi)
K2 = 0.044715
SHAPE = [2, 5, 24]


class Graph:
    """A one-subgraph float model built node by node (x: the input, or an FC's output)."""

    def __init__(self, fc=False):
        self.w = ModelWriter()
        self.sg = self.w.add_subgraph()
        self.input = self.sg.add_tensor("in", SHAPE, np.float32)
        self.x, self.n, self.extra = self.input, 0, []
        if fc:
            k = SHAPE[-1]
            wt = self.const(RNG.standard_normal([k, k]).astype(np.float32) / math.sqrt(k))
            b = self.const(RNG.standard_normal([k]).astype(np.float32))
            self.x = self.op("FULLY_CONNECTED", [self.input, wt, b], {"keep_num_dims": True})

    def const(self, v):
        self.n += 1
        return self.sg.add_constant(f"c{self.n}", np.asarray(v, dtype=np.float32))

    def op(self, name, inputs, options=None):
        self.n += 1
        t = self.sg.add_tensor(f"t{self.n}", SHAPE, np.float32)
        self.sg.add_operator(name, inputs, [t], options)
        return t

    def finish(self, y):
        self.sg.set_inputs([self.input])
        self.sg.set_outputs([y, *self.extra])
        return self.w.finish()


def tf_form(g, k1=K1, k2=K2, half=0.5, expose=None):
    """TensorFlow's converter on 0.5*x*(1+tanh(k1*(x+k2*x*x*x))), node for node."""
    x = g.x
    h = g.op("MUL", [x, g.const(half)])
    t1 = g.op("MUL", [x, g.const(k2)])
    t2 = g.op("MUL", [t1, x])
    t3 = g.op("MUL", [t2, x])
    u = g.op("ADD", [x, t3])
    v = g.op("MUL", [u, g.const(k1)])
    w = g.op("TANH", [v])
    z = g.op("ADD", [w, g.const(1.0)])
    if expose == "tanh":
        g.extra.append(w)
    return g.op("MUL", [h, z])


def pow_form(g, k1=K1, k2=K2, half=0.5, expose=None):
    """The other grouping: POW(x, 3), constants first, 0.5 applied to (1 + tanh)."""
    x = g.x
    p = g.op("POW", [x, g.const(3.0)])
    t = g.op("MUL", [g.const(k2), p])
    u = g.op("ADD", [t, x])
    v = g.op("MUL", [g.const(k1), u])
    w = g.op("TANH", [v])
    z = g.op("ADD", [g.const(1.0), w])
    if expose == "tanh":
        g.extra.append(z)
    if half is None:
        return g.op("MUL", [x, z])
    return g.op("MUL", [x, g.op("MUL", [z, g.const(half)])])


def gelu64(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1 + np.tanh(K1 * (x + K2 * x**3)))


def run(data, feed, monkeypatch):
    """(fused outputs, names of the fused run's operators that ran, unfused outputs, operator
    count); every operator runs unfused."""
    fused = wick.load(data).signature(None)
    got = fused(feed)
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_FUSION", "1")
        unfused = wick.load(data).signature(None)
        want = unfused(feed)
    unfused_profile = unfused.profile()
    assert all(ns > 0 for _, ns in unfused_profile)
    return got, [name for name, ns in fused.profile() if ns > 0], want, len(unfused_profile)


def feed():
    x = RNG.standard_normal(SHAPE).astype(np.float32) * 3
    x.flat[:4] = [-9.0, -5.5, 0.0, 7.0]
    return x


@pytest.mark.parametrize("form", [tf_form, pow_form])
@pytest.mark.parametrize("fc", [False, True])
def test_decomposed_gelu_fuses(form, fc, monkeypatch):
    g = Graph(fc=fc)
    data = g.finish(form(g))
    x = feed()
    got, ran, want, _ = run(data, x, monkeypatch)
    # in the FC's epilogue, or one node of the chain running the kernel
    assert ran == ["FULLY_CONNECTED"] if fc else len(ran) == 1, ran
    np.testing.assert_allclose(got[0], want[0], rtol=4e-6, atol=2e-6)
    if not fc:
        np.testing.assert_allclose(got[0], gelu64(x), rtol=4e-6, atol=1e-7)
    compare(got, run_litert(data, [x]))


@pytest.mark.parametrize(
    "form, kw",
    [
        (tf_form, dict(k2=0.0447)),  # another cubic coefficient
        (tf_form, dict(k1=0.8)),  # another tanh scale
        (tf_form, dict(half=0.25)),
        (tf_form, dict(expose="tanh")),  # an intermediate read elsewhere
        (pow_form, dict(expose="tanh")),
        (pow_form, dict(half=None)),  # x (1 + tanh(...)): twice GELU
    ],
)
def test_near_miss_does_not_fuse(form, kw, monkeypatch):
    g = Graph()
    data = g.finish(form(g, **kw))
    x = feed()
    got, ran, want, count = run(data, x, monkeypatch)
    assert got[0].tobytes() == want[0].tobytes()
    assert len(ran) == count, ran
    compare(got, run_litert(data, [x]))
