"""Elementwise ops in place (src/core/plan.c): an elementwise node that is the last reader of an
input of its output's shape and type writes over that input. The results must be the same bytes
as with every output in its own buffer (WICK_NO_IN_PLACE=1) at any thread count, the arena must
shrink, inputs that are read again later must keep their values, and LiteRT agrees.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(11)
SHAPE = [1, 23, 29, 19]  # 12673 elements: uneven chunks per thread, vector tails


def float_chain():
    """x -> ADD bias -> TANH -> MUL x -> MAXIMUM(gate, .) -> SQUARED_DIFFERENCE x -> LOGISTIC
    -> SUB(., t) -> ABS, where t = EXP(a) is read again by the SUB: TANH must not overwrite a
    (EXP still reads it), and the SUB may take either dead operand."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", SHAPE, np.float32)
    gate = sg.add_tensor("gate", [1, 1, 1, SHAPE[3]], np.float32)
    bias = sg.add_constant("bias", RNG.standard_normal(SHAPE[3]).astype(np.float32))
    names = ["a", "b", "t", "c", "d", "e", "f", "g", "y"]
    a, b, t, c, d, e, f, g, y = (sg.add_tensor(n, SHAPE, np.float32) for n in names)
    sg.add_operator("ADD", [x, bias], [a])
    sg.add_operator("TANH", [a], [b])
    sg.add_operator("EXP", [a], [t])
    sg.add_operator("MUL", [b, x], [c])
    sg.add_operator("MAXIMUM", [gate, c], [d])
    sg.add_operator("SQUARED_DIFFERENCE", [d, x], [e])
    sg.add_operator("LOGISTIC", [e], [f])
    sg.add_operator("SUB", [f, t], [g])
    sg.add_operator("ABS", [g], [y])
    sg.set_inputs([x, gate])
    sg.set_outputs([y])
    return w.finish()


def int8_chain():
    """int8 x -> ADD y0 (rescales) -> MUL -> LOGISTIC -> ADD x (x read again at the end)."""
    w = ModelWriter()
    sg = w.add_subgraph()

    def q(scale, zp):
        return {"scale": [scale], "zero_point": [zp]}

    x = sg.add_tensor("x", SHAPE, np.int8, q(0.05, 3))
    z = sg.add_tensor("z", SHAPE, np.int8, q(0.04, -7))
    a = sg.add_tensor("a", SHAPE, np.int8, q(0.08, 1))
    b = sg.add_tensor("b", SHAPE, np.int8, q(0.1, -2))
    s = sg.add_tensor("s", SHAPE, np.int8, q(1 / 256, -128))
    y = sg.add_tensor("y", SHAPE, np.int8, q(0.06, 5))
    sg.add_operator("ADD", [x, z], [a])
    sg.add_operator("MUL", [a, z], [b])
    sg.add_operator("LOGISTIC", [b], [s])
    sg.add_operator("ADD", [s, x], [y])
    sg.set_inputs([x, z])
    sg.set_outputs([y])
    return w.finish()


def run(data, inputs, threads, monkeypatch, in_place):
    monkeypatch.setenv("WICK_NO_IN_PLACE", "0" if in_place else "1")
    rt = wick.load(data, num_threads=threads)
    return rt(*inputs), rt.signature(None).arena_bytes


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_float_chain_in_place_is_exact(threads, monkeypatch):
    data = float_chain()
    inputs = [
        RNG.standard_normal(SHAPE).astype(np.float32),
        RNG.standard_normal([1, 1, 1, SHAPE[3]]).astype(np.float32),
    ]
    got, arena = run(data, inputs, threads, monkeypatch, True)
    want, arena_apart = run(data, inputs, threads, monkeypatch, False)
    assert got[0].tobytes() == want[0].tobytes()
    # 8 intermediates of 50 KB: apart, at least three live at once (a, t and the chain);
    # in place, the chain reuses a's and then t's buffer
    assert arena < arena_apart, (arena, arena_apart)
    compare(got, run_litert(data, inputs))


@pytest.mark.parametrize("threads", [1, 3])
def test_int8_chain_in_place_is_exact(threads, monkeypatch):
    data = int8_chain()
    inputs = [RNG.integers(-128, 128, SHAPE, dtype=np.int8) for _ in range(2)]
    got, arena = run(data, inputs, threads, monkeypatch, True)
    want, arena_apart = run(data, inputs, threads, monkeypatch, False)
    assert got[0].tobytes() == want[0].tobytes()
    assert arena < arena_apart, (arena, arena_apart)
    compare(got, run_litert(data, inputs, reference=True))


def test_graph_inputs_are_never_overwritten(monkeypatch):
    """wick.h promises inputs keep their values across invokes: an op whose only reader of a graph
    input it is must still write a buffer of its own."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", SHAPE, np.float32)
    y = sg.add_tensor("y", SHAPE, np.float32)
    sg.add_operator("NEG", [x], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    rt = wick.load(w.finish())
    x0 = RNG.standard_normal(SHAPE).astype(np.float32)
    first = rt(x0)[0]
    second = rt(x0)[0]
    assert first.tobytes() == second.tobytes() == (-x0).tobytes()


def reshape_chain():
    """x -> ADD bias -> RESHAPE [23*29, 19] -> EXPAND_DIMS -> SQUEEZE -> TANH -> RESHAPE back:
    every reshaping op shares its input's buffer (same bytes, another shape), so its copy is a
    no-op; an int8 RESHAPE also keeps its own copy-free bytes."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", SHAPE, np.float32)
    bias = sg.add_constant("bias", RNG.standard_normal(SHAPE[3]).astype(np.float32))
    flat = [SHAPE[1] * SHAPE[2], SHAPE[3]]
    a = sg.add_tensor("a", SHAPE, np.float32)
    b = sg.add_tensor("b", flat, np.float32)
    c = sg.add_tensor("c", [1] + flat, np.float32)
    d = sg.add_tensor("d", flat, np.float32)
    e = sg.add_tensor("e", flat, np.float32)
    y = sg.add_tensor("y", SHAPE, np.float32)
    sg.add_operator("ADD", [x, bias], [a])
    sg.add_operator("RESHAPE", [a, sg.add_constant("s1", np.array(flat, np.int32))], [b])
    sg.add_operator("EXPAND_DIMS", [b, sg.add_constant("ax", np.array(0, np.int32))], [c])
    sg.add_operator("SQUEEZE", [c], [d], options=dict(squeeze_dims=[0]))
    sg.add_operator("TANH", [d], [e])
    sg.add_operator("RESHAPE", [e, sg.add_constant("s2", np.array(SHAPE, np.int32))], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


@pytest.mark.parametrize("threads", [1, 2])
def test_reshapes_share_their_input_buffer(threads, monkeypatch):
    data = reshape_chain()
    inputs = [RNG.standard_normal(SHAPE).astype(np.float32)]
    got, arena = run(data, inputs, threads, monkeypatch, True)
    want, arena_apart = run(data, inputs, threads, monkeypatch, False)
    assert got[0].tobytes() == want[0].tobytes()
    # 50 KB tensors: apart, producer and consumer of each copy are live together; shared, the
    # whole chain (but the graph output) is one buffer
    assert arena < arena_apart, (arena, arena_apart)
    compare(got, run_litert(data, inputs))


def test_shape_of_a_static_tensor_folds_and_keeps_the_graph_static():
    """SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE (TensorFlow's squeeze-excite blocks write
    this): SHAPE reads only its input's shape, so with a static shape it folds at prepare and the
    RESHAPE and everything after it are planned statically (in the arena) instead of being
    prepared again at every invoke (Keras EfficientNetV2-B0 int8: 9.8 -> 2.7 ms)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, 8, 8, 16], np.float32)
    shape = sg.add_tensor("shape", [4], np.int32)
    batch = sg.add_tensor("batch", [], np.int32)
    target = sg.add_tensor("target", [4], np.int32)
    r = sg.add_tensor("r", [1, 1, 1, 1024], np.float32)
    y = sg.add_tensor("y", [1, 1, 1, 1024], np.float32)
    sg.add_operator("SHAPE", [x], [shape], options=dict(out_type="INT32"))
    sg.add_operator(
        "STRIDED_SLICE",
        [
            shape,
            *(
                sg.add_constant(n, np.array(v, np.int32))
                for n, v in (("b", [0]), ("e", [1]), ("s", [1]))
            ),
        ],
        [batch],
        options=dict(shrink_axis_mask=1),
    )
    ones = [sg.add_constant(f"one{i}", np.array(1, np.int32)) for i in range(2)]
    sg.add_operator(
        "PACK",
        [batch, *ones, sg.add_constant("c", np.array(1024, np.int32))],
        [target],
        options=dict(values_count=4, axis=0),
    )
    sg.add_operator("RESHAPE", [x, target], [r])
    sg.add_operator("TANH", [r], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    xin = RNG.standard_normal([1, 8, 8, 16]).astype(np.float32)
    rt = wick.load(data)
    got = rt(xin)
    compare(got, run_litert(data, [xin]))
    # the RESHAPE and TANH outputs are planned (a dynamic node's output lives outside the arena)
    assert rt.signature(None).arena_bytes >= 2 * 1024 * 4, rt.signature(None).arena_bytes


def update_chain(reread: bool):
    """x -> ADD bias -> a -> DYNAMIC_UPDATE_SLICE(a, u, start) -> y -> MUL x -> z; with
    ``reread`` a is read again after the update (SUB z - a), so the update must not write over
    it."""
    w = ModelWriter()
    sg = w.add_subgraph()
    shape = [2, 37, 19]
    x = sg.add_tensor("x", shape, np.float32)
    u = sg.add_tensor("u", [1, 5, 19], np.float32)
    start = sg.add_tensor("start", [3], np.int32)
    bias = sg.add_constant("bias", RNG.standard_normal(19).astype(np.float32))
    a, y, z = (sg.add_tensor(n, shape, np.float32) for n in "ayz")
    sg.add_operator("ADD", [x, bias], [a])
    sg.add_operator("DYNAMIC_UPDATE_SLICE", [a, u, start], [y])
    sg.add_operator("MUL", [y, x], [z])
    out = z
    if reread:
        out = sg.add_tensor("d", shape, np.float32)
        sg.add_operator("SUB", [z, a], [out])
    sg.set_inputs([x, u, start])
    sg.set_outputs([out])
    return w.finish(), shape


@pytest.mark.parametrize("reread", [False, True], ids=["operand-dies", "operand-read-again"])
def test_dynamic_update_slice_in_place(reread, monkeypatch):
    """The update writes over its dead operand (the arena shrinks) and over nothing that is
    read again; the results are the same bytes as with every output in its own buffer and
    match LiteRT."""
    data, shape = update_chain(reread)
    inputs = [
        RNG.standard_normal(shape).astype(np.float32),
        RNG.standard_normal([1, 5, 19]).astype(np.float32),
        np.asarray([1, 30, 0], np.int32),  # clamped to 32 on the middle axis
    ]
    got, arena = run(data, inputs, 1, monkeypatch, in_place=True)
    ref, arena_ref = run(data, inputs, 1, monkeypatch, in_place=False)
    np.testing.assert_array_equal(got[0], ref[0])
    if not reread:
        assert arena < arena_ref, (arena, arena_ref)
    compare(got, run_litert(data, inputs))
