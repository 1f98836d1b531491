"""Channel-affine fusion at prepare (src/core/fuse.c, fuse_channel_affine; src/ops/fused.c):
MUL(x, scale) -> ADD(., shift) [RELU | RELU6 | RELU_N1_TO_1] with scale and shift constants of
one value per channel — TensorFlow's BatchNormalization where it could not fold into a
convolution (Keras DenseNet after each CONCATENATION, ResNet50V2's pre-activations) — runs in
the MUL node as one pass; the ADD is skipped (0 ns in the profile, kernel "fused").

Each model runs fused, with WICK_NO_FUSION=1 (the same kernels, each node on its own: the fused
pass repeats their operations on the same operands in the same order, so byte-identical) and on
LiteRT (within the float tolerance). Near misses must not fuse (every node runs).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from tests.python.runtime._fusion import fused_and_unfused
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(5)


def ran(profile):
    return [name for name, ns in profile if ns > 0]


def affine_model(
    shape,
    act="RELU",
    scale_first=False,
    shift_first=False,
    scale_shape=None,
    shift_shape=None,
    scale_input=False,
    expose_product=False,
    mul_act="NONE",
    concat=True,
):
    """x = CONCATENATION(a, b) (DenseNet's; plain input when not `concat`), then
    MUL(x, scale) -> ADD(., shift, act) -> output, x also an output (it has another reader)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    c = shape[-1]
    inputs = []
    if concat:
        a_shape = list(shape[:-1]) + [c - c // 3]
        b_shape = list(shape[:-1]) + [c // 3]
        a = sg.add_tensor("a", a_shape, np.float32)
        b = sg.add_tensor("b", b_shape, np.float32)
        x = sg.add_tensor("x", list(shape), np.float32)
        sg.add_operator("CONCATENATION", [a, b], [x], {"axis": len(shape) - 1})
        inputs += [a, b]
    else:
        x = sg.add_tensor("x", list(shape), np.float32)
        inputs.append(x)
    sshape = scale_shape or [1] * (len(shape) - 1) + [c]
    if scale_input:
        s = sg.add_tensor("s", sshape, np.float32)
        inputs.append(s)
    else:
        s = sg.add_constant("s", RNG.uniform(0.2, 2.0, sshape).astype(np.float32))
    t = sg.add_tensor("t", list(shape), np.float32)
    sg.add_operator(
        "MUL", [s, x] if scale_first else [x, s], [t], {"fused_activation_function": mul_act}
    )
    bshape = shift_shape or [c]
    sh = sg.add_constant("shift", RNG.standard_normal(bshape).astype(np.float32))
    y = sg.add_tensor("y", list(shape), np.float32)
    sg.add_operator(
        "ADD", [sh, t] if shift_first else [t, sh], [y], {"fused_activation_function": act}
    )
    sg.set_inputs(inputs)
    sg.set_outputs([y, x] + ([t] if expose_product else []))
    return w.finish()


def run(data, feed, monkeypatch, threads=1):
    got, prof = fused_and_unfused(data, feed, monkeypatch, threads)
    compare(got, run_litert(data, list(feed)))
    return prof


def make_feed(shape, concat=True, scale_input=False):
    c = shape[-1]
    if concat:
        parts = [
            list(shape[:-1]) + [c - c // 3],
            list(shape[:-1]) + [c // 3],
        ]
    else:
        parts = [list(shape)]
    feed = [(RNG.standard_normal(p) * 2).astype(np.float32) for p in parts]
    if scale_input:
        feed.append(RNG.uniform(0.2, 2.0, [1] * (len(shape) - 1) + [c]).astype(np.float32))
    return feed


@pytest.mark.parametrize(
    "shape",
    [
        (1, 9, 7, 3),  # few channels: many rows per kernel call
        (1, 16, 16, 96),  # DenseNet's first block
        (1, 5, 6, 600),  # more channels than the repeated block: one row per call
        (2, 4, 4, 40),  # two images
        (3, 17),  # rank 2
    ],
)
@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
def test_channel_affine_fuses(shape, act, monkeypatch):
    data = affine_model(shape, act=act)
    prof = run(data, make_feed(shape), monkeypatch)
    assert ran(prof) == ["CONCATENATION", "MUL"], prof


@pytest.mark.parametrize("scale_first", [False, True])
@pytest.mark.parametrize("shift_first", [False, True])
def test_operand_orders_fuse(scale_first, shift_first, monkeypatch):
    shape = (1, 8, 8, 24)
    data = affine_model(shape, scale_first=scale_first, shift_first=shift_first)
    prof = run(data, make_feed(shape), monkeypatch)
    assert ran(prof) == ["CONCATENATION", "MUL"], prof


def test_channel_vectors_of_rank_one_fuse(monkeypatch):
    shape = (1, 6, 6, 32)
    data = affine_model(shape, scale_shape=[32], shift_shape=[1, 1, 1, 32], concat=False)
    prof = run(data, make_feed(shape, concat=False), monkeypatch)
    assert ran(prof) == ["MUL"], prof


def test_fused_affine_is_bit_identical_across_threads(monkeypatch):
    shape = (1, 64, 64, 72)  # large enough to split
    data = affine_model(shape)
    feed = make_feed(shape)
    one = wick.load(data, num_threads=1).signature(None)(*feed)
    prof = run(data, feed, monkeypatch, threads=3)
    three = wick.load(data, num_threads=3).signature(None)(*feed)
    assert ran(prof) == ["CONCATENATION", "MUL"], prof
    for a, b in zip(one, three, strict=True):
        assert a.tobytes() == b.tobytes()


def test_special_values_match_the_unfused_nodes(monkeypatch):
    shape = (1, 4, 4, 16)
    data = affine_model(shape, concat=False)
    x = (RNG.standard_normal(shape) * 2).astype(np.float32)
    x.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 3e38, -3e38]
    fused = wick.load(data).signature(None)
    got = fused(x)
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_FUSION", "1")
        want = wick.load(data).signature(None)(x)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    assert ran(fused.profile()) == ["MUL"], fused.profile()


@pytest.mark.parametrize(
    "kw",
    [
        dict(scale_input=True),  # scale not a constant
        dict(expose_product=True),  # MUL's output read elsewhere (a graph output)
        dict(mul_act="RELU"),  # MUL with its own activation
        dict(scale_shape=[1, 1, 1, 1]),  # one scale for all channels: not per channel
        dict(shift_shape=[1, 8, 8, 24]),  # a shift per element, not per channel
    ],
)
def test_near_miss_does_not_fuse(kw, monkeypatch):
    shape = (1, 8, 8, 24)
    data = affine_model(shape, **kw)
    prof = run(data, make_feed(shape, scale_input=kw.get("scale_input", False)), monkeypatch)
    assert len(ran(prof)) == len(prof), prof
