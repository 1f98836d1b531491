"""Layer-norm fusion at prepare (src/core/fuse.c, src/ops/fused.c): a decomposed layer
normalization over trailing axes runs as one kernel in the MEAN node that starts it; the other
nodes of the chain are skipped (0 ns in the profile).

Two decompositions are recognized:

* wick's converter (torch ``LayerNorm``): d = SUB(x, mean); MUL(d, d) -> MEAN -> ADD eps ->
  RSQRT = r; MUL(d, r) [-> MUL gamma] [-> ADD beta];
* TensorFlow's converter (Keras ``LayerNormalization``, as tf.lite.TFLiteConverter writes it):
  NEG(mean); SQUARED_DIFFERENCE(x, mean) -> MEAN -> ADD eps -> RSQRT = r; [MUL(r, gamma)] = s;
  MUL(-mean, s) [-> ADD beta] = c; ADD(MUL(x, s), c).

Each model runs fused, with WICK_NO_FUSION=1 (the same kernels, every node on its own: the fused
kernel repeats their operations, so byte-identical) and on LiteRT (within the float tolerance).
Near misses — a wrong axis, an intermediate read elsewhere, gamma not constant or not one value
per row element, eps not constant — must not fuse (every node runs).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(11)


def run_both(data, feed, monkeypatch, num_threads=1):
    """(fused outputs, fused profile, unfused outputs, unfused profile)."""
    fused = wick.load(data, num_threads=num_threads).signature(None)
    got = fused(feed)
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_FUSION", "1")
        unfused = wick.load(data, num_threads=num_threads).signature(None)
        want = unfused(feed)
        unfused_profile = unfused.profile()
    assert all(ns > 0 for _, ns in unfused_profile), unfused_profile
    return got, fused.profile(), want


def ran(profile):
    """Names of the operators that ran."""
    return [name for name, ns in profile if ns > 0]


def unfused(prof):
    """No layer norm fused: every node ran, except that a chain's last MUL gamma -> ADD beta
    (one value per channel) may run as one channel affine in the MUL (test_channel_affine_fusion:
    the ADD at 0 ns right after a MUL that ran)."""
    for i, (name, ns) in enumerate(prof):
        if ns == 0:
            assert name == "ADD" and i > 0 and prof[i - 1][0] == "MUL", prof
            assert prof[i - 1][1] > 0, prof
    return True


def check(data, feed, monkeypatch, fuses, num_threads=1):
    got, prof, want = run_both(data, feed, monkeypatch, num_threads)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    if fuses:
        assert ran(prof) == ["MEAN"], prof
    else:
        assert unfused(prof)
    compare(got, run_litert(data, [feed]))
    return got


# ------------------------------------------------------------- torch LayerNorm via wick.convert


@pytest.mark.parametrize(
    "shape, normalized, affine",
    [
        ((1, 10, 16), (16,), True),
        ((2, 7, 33), (33,), True),
        ((1, 5, 6, 8), (6, 8), True),
        ((1, 9, 24), (24,), False),
    ],
)
def test_converted_torch_layer_norm_fuses(shape, normalized, affine, monkeypatch):
    torch.manual_seed(0)
    ln = nn.LayerNorm(normalized, eps=1e-5, elementwise_affine=affine).eval()
    if affine:
        with torch.no_grad():
            ln.weight.normal_()
            ln.bias.normal_()
    x = torch.randn(shape)
    data = bytes(wick.convert(ln, (x,)))
    got = check(data, x.numpy(), monkeypatch, fuses=True)
    with torch.no_grad():
        want = ln(x).numpy()
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-4)


def test_fused_layer_norm_is_bit_identical_across_threads(monkeypatch):
    ln = nn.LayerNorm(48).eval()
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    x = torch.randn(1, 37, 48)
    data = bytes(wick.convert(ln, (x,)))
    one = check(data, x.numpy(), monkeypatch, fuses=True)
    three = check(data, x.numpy(), monkeypatch, fuses=True, num_threads=3)
    assert one[0].tobytes() == three[0].tobytes()


# ------------------------------------------------------------- hand-built decompositions


class Graph:
    """A one-subgraph float model built node by node."""

    def __init__(self, shape):
        self.w = ModelWriter()
        self.sg = self.w.add_subgraph()
        self.shape = list(shape)
        self.x = self.sg.add_tensor("x", shape, np.float32)
        self.inputs, self.outputs, self.n = [self.x], [], 0

    def const(self, array):
        self.n += 1
        return self.sg.add_constant(f"c{self.n}", np.asarray(array))

    def op(self, name, inputs, shape, options=None):
        self.n += 1
        t = self.sg.add_tensor(f"t{self.n}", shape, np.float32)
        self.sg.add_operator(name, inputs, [t], options)
        return t

    def mean(self, t, axes, shape):
        return self.op(
            "MEAN", [t, self.const(np.array(axes, np.int32))], shape, {"keep_dims": True}
        )

    def finish(self, y):
        self.sg.set_inputs(self.inputs)
        self.sg.set_outputs([y, *self.outputs])
        return self.w.finish()


def row_shape(shape, axes):
    return [1 if d in axes else n for d, n in enumerate(shape)]


def eps_tensor(g, eps_input):
    if eps_input:  # eps fed at run time: not a constant
        e = g.sg.add_tensor("eps", [], np.float32)
        g.inputs.append(e)
        return e
    return g.const(np.float32(1e-5))


def row_param(g, shape, axes, kind):
    """gamma / beta: 'const' (one value per row element), 'scalar' (one value: broadcast, not a
    row constant), 'input' (not constant) or None."""
    if kind is None:
        return None
    pshape = [shape[d] if d in axes else 1 for d in range(min(axes), len(shape))]
    if kind == "scalar":
        return g.const(RNG.standard_normal([1]).astype(np.float32))
    if kind == "input":
        p = g.sg.add_tensor(f"p{g.n}", pshape, np.float32)
        g.inputs.append(p)
        return p
    return g.const(RNG.standard_normal(pshape).astype(np.float32))


def centered_model(
    shape=(1, 6, 20), axes=(2,), gamma="const", beta="const", expose=None, eps_input=False
):
    """wick's converter's form; `expose` names an intermediate that is also a graph output."""
    g = Graph(shape)
    rs = row_shape(shape, axes)
    mean = g.mean(g.x, list(axes), rs)
    d = g.op("SUB", [g.x, mean], shape)
    sq = g.op("MUL", [d, d], shape)
    var = g.mean(sq, list(axes), rs)
    ve = g.op("ADD", [var, eps_tensor(g, eps_input)], rs)
    r = g.op("RSQRT", [ve], rs)
    y = g.op("MUL", [d, r], shape)
    gm, bt = row_param(g, shape, axes, gamma), row_param(g, shape, axes, beta)
    if gm is not None:
        y = g.op("MUL", [y, gm], shape)
    if bt is not None:
        y = g.op("ADD", [y, bt], shape)
    g.outputs += [dict(mean=mean, d=d, r=r)[expose]] if expose else []
    return g.finish(y), g.inputs


def scaled_model(
    shape=(1, 6, 20), axes=(2,), gamma="const", beta="const", expose=None, eps_input=False
):
    """TensorFlow's converter's form (operand order as TFLiteConverter writes it)."""
    g = Graph(shape)
    rs = row_shape(shape, axes)
    mean = g.mean(g.x, list(axes), rs)
    neg = g.op("NEG", [mean], rs)
    sq = g.op("SQUARED_DIFFERENCE", [g.x, mean], shape)
    var = g.mean(sq, list(axes), rs)
    ve = g.op("ADD", [var, eps_tensor(g, eps_input)], rs)
    r = g.op("RSQRT", [ve], rs)
    gm, bt = row_param(g, shape, axes, gamma), row_param(g, shape, axes, beta)
    row = gamma in ("const", "input")  # s is then a full tensor, else one value per row
    s = g.op("MUL", [r, gm], shape if row else rs) if gm is not None else r
    c = g.op("MUL", [neg, s], shape if row else rs)
    if bt is not None:
        c = g.op("ADD", [c, bt], shape)
    a = g.op("MUL", [g.x, s], shape)
    y = g.op("ADD", [a, c], shape)
    g.outputs += [dict(mean=mean, s=s, c=c)[expose]] if expose else []
    return g.finish(y), g.inputs


def feed_for(shape):
    return (RNG.standard_normal(shape) * 3 + 1).astype(np.float32)


@pytest.mark.parametrize("builder", [centered_model, scaled_model])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(gamma=None),
        dict(beta=None),
        dict(gamma=None, beta=None),
        dict(shape=(2, 3, 4, 10), axes=(2, 3)),
        dict(shape=(1, 300), axes=(1,)),
    ],
)
def test_decomposed_layer_norm_fuses(builder, kw, monkeypatch):
    data, _ = builder(**kw)
    check(data, feed_for(kw.get("shape", (1, 6, 20))), monkeypatch, fuses=True)


@pytest.mark.parametrize("builder", [centered_model, scaled_model])
@pytest.mark.parametrize(
    "kw",
    [
        dict(shape=(1, 6, 20), axes=(1,)),  # not the trailing axis
        dict(expose="mean"),  # an intermediate read elsewhere
        dict(gamma="scalar", beta=None),  # one gamma for all elements (SCALED: no fusion)
    ],
)
def test_near_miss_does_not_fuse(builder, kw, monkeypatch):
    if builder is centered_model and kw.get("gamma") == "scalar":
        return  # fuses up to MUL(d, r): test_centered_scalar_gamma_stops_the_chain_before_it
    data, _ = builder(**kw)
    check(data, feed_for(kw.get("shape", (1, 6, 20))), monkeypatch, fuses=False)


@pytest.mark.parametrize("expose", ["d", "r"])
def test_centered_intermediate_read_elsewhere_does_not_fuse(expose, monkeypatch):
    data, _ = centered_model(expose=expose)
    check(data, feed_for((1, 6, 20)), monkeypatch, fuses=False)


@pytest.mark.parametrize("expose", ["s", "c"])
def test_scaled_intermediate_read_elsewhere_does_not_fuse(expose, monkeypatch):
    data, _ = scaled_model(expose=expose)
    check(data, feed_for((1, 6, 20)), monkeypatch, fuses=False)


def test_centered_scalar_gamma_stops_the_chain_before_it(monkeypatch):
    """MUL by a one-element gamma is not a row constant: the chain up to MUL(d, r) fuses and
    the MUL gamma and ADD beta after it run on their own."""
    data, _ = centered_model(gamma="scalar")
    x = feed_for((1, 6, 20))
    got, prof, want = run_both(data, x, monkeypatch)
    assert got[0].tobytes() == want[0].tobytes()
    assert ran(prof) == ["MEAN", "MUL", "ADD"], prof
    compare(got, run_litert(data, [x]))


@pytest.mark.parametrize("builder", [centered_model, scaled_model])
@pytest.mark.parametrize("kw", [dict(gamma="input"), dict(eps_input=True)])
def test_runtime_gamma_or_eps_does_not_fuse(builder, kw, monkeypatch):
    data, inputs = builder(**kw)
    x = feed_for((1, 6, 20))
    extra = (
        np.float32(1e-5) if kw.get("eps_input") else RNG.standard_normal([20]).astype(np.float32)
    )
    fused = wick.load(data).signature(None)
    got = fused(x, extra)
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_FUSION", "1")
        want = wick.load(data).signature(None)(x, extra)
    assert got[0].tobytes() == want[0].tobytes()
    prof = fused.profile()
    if builder is centered_model and "gamma" in kw:  # fuses up to MUL(d, r), as a scalar gamma
        assert ran(prof) == ["MEAN", "MUL", "ADD"], prof
    else:
        assert unfused(prof)
    compare(got, run_litert(data, [x, extra]))
