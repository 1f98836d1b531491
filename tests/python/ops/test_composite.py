"""Differential tests of STABLEHLO_COMPOSITE on real litert-torch files (src/ops/composite.c)
against LiteRT, through the single-op harness (tests/python/ops/_harness.py).

Outputs and failures are held to the harness's rules for op tests (its docstring).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from flatbuffers import flexbuffers

import wick
from tests.python.ops._harness import (
    FLOAT_REL,
    UNSUPPORTED,
    rand_from,
)
from tests.python.oracles.litert import run_litert, tolerance_check
from wick.tflite.writer import ModelWriter

r = rand_from(np.random.default_rng(1234))


# ============================================================================ STABLEHLO_COMPOSITE

MODELS = Path(__file__).resolve().parents[4] / "shared" / "models"


def _composite_model(inner_rank: int = 2):
    """A hand-written composite: main calls subgraph 1 (y = x * 2 + c) through a composite."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    dec = w.add_subgraph("decomposition")
    shape = [2, 3] if inner_rank == 2 else [6]
    x = main.add_tensor("x", shape, "float32")
    y = main.add_tensor("y", shape, "float32")
    main.add_operator(
        "STABLEHLO_COMPOSITE",
        [x],
        [y],
        options=dict(
            name="test.double_plus",
            decomposition_subgraph_index=1,
            composite_attributes=bytes(flexbuffers.Dumps({})),
            version=0,
        ),
    )
    main.set_inputs([x])
    main.set_outputs([y])
    dx = dec.add_tensor("dx", shape, "float32")
    two = dec.add_constant("two", np.float32(2.0))
    c = dec.add_constant("c", np.arange(shape[-1], dtype=np.float32))
    t = dec.add_tensor("t", shape, "float32")
    dy = dec.add_tensor("dy", shape, "float32")
    dec.add_operator("MUL", [dx, two], [t], options=dict(fused_activation_function="NONE"))
    dec.add_operator("ADD", [t, c], [dy], options=dict(fused_activation_function="NONE"))
    dec.set_inputs([dx])
    dec.set_outputs([dy])
    return w.finish()


def test_composite_handwritten():
    data = _composite_model()
    x = r((2, 3))
    ref = run_litert(data, [x])
    got = wick.load(data)(x)
    t = tolerance_check(got[0], ref[0], rel=FLOAT_REL)
    assert t, t.message
    np.testing.assert_allclose(got[0], x * 2 + np.arange(3), rtol=1e-6)


def test_composite_runs_twice():
    m = wick.load(_composite_model())
    for _ in range(3):
        x = r((2, 3))
        np.testing.assert_allclose(m(x)[0], x * 2 + np.arange(3), rtol=1e-6)


COMPOSITE_ATTRS = bytes(flexbuffers.Dumps({}))


def _composite(sg, ins, outs, index, name="test.composite"):
    sg.add_operator(
        "STABLEHLO_COMPOSITE",
        ins,
        outs,
        options=dict(
            name=name,
            decomposition_subgraph_index=index,
            composite_attributes=COMPOSITE_ATTRS,
            version=0,
        ),
    )


def _affine_subgraph(w, shape, scale, offset, nested_index=None):
    """A decomposition y = x * scale + offset (the MUL done by a nested composite when
    nested_index is given)."""
    sg = w.add_subgraph(f"affine{len(w._subgraphs)}")
    x = sg.add_tensor("x", shape, "float32")
    t = sg.add_tensor("t", shape, "float32")
    y = sg.add_tensor("y", shape, "float32")
    if nested_index is None:
        sg.add_operator(
            "MUL",
            [x, sg.add_constant("s", np.float32(scale))],
            [t],
            options=dict(fused_activation_function="NONE"),
        )
    else:
        _composite(sg, [x], [t], nested_index, name="test.inner")
    sg.add_operator(
        "ADD",
        [t, sg.add_constant("o", np.float32(offset))],
        [y],
        options=dict(fused_activation_function="NONE"),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return sg


def test_composite_nested_and_shared():
    """main: two composites calling subgraph 1, which calls subgraph 2 through a composite."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    shape = [3, 4]
    x = main.add_tensor("x", shape, "float32")
    h = main.add_tensor("h", shape, "float32")
    y = main.add_tensor("y", shape, "float32")
    _composite(main, [x], [h], 1)
    _composite(main, [h], [y], 1)
    main.set_inputs([x])
    main.set_outputs([y])
    _affine_subgraph(w, shape, 1.0, 0.5, nested_index=2)  # 1: inner(x) + 0.5
    _affine_subgraph(w, shape, 3.0, 0.0)  # 2: 3x
    data = w.finish()
    xv = r(shape)
    got = wick.load(data)(xv)[0]
    np.testing.assert_allclose(got, (xv * 3 + 0.5) * 3 + 0.5, rtol=1e-6)
    t = tolerance_check(got, run_litert(data, [xv])[0], rel=FLOAT_REL)
    assert t, t.message


def test_composite_prepared_at_invoke():
    """The composite's input shape comes from a RESHAPE with a run-time shape: the node is
    prepared at every invoke and must reuse (re-prepare) one child graph."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [12], "float32")
    shp = main.add_tensor("shape", [2], "int32")
    h = main.add_tensor("h", [1], "float32")
    y = main.add_tensor("y", [1], "float32")
    main.add_operator("RESHAPE", [x, shp], [h])
    _composite(main, [h], [y], 1)
    main.set_inputs([x, shp])
    main.set_outputs([y])
    _affine_subgraph(w, [1, 1], 2.0, 1.0)
    data = w.finish()
    m = wick.load(data)
    for s in ([3, 4], [2, 6], [12, 1], [3, 4]):
        xv = r((12,))
        (got,) = m(xv, np.array(s, np.int32))
        np.testing.assert_allclose(got, xv.reshape(s) * 2 + 1, rtol=1e-6)


def test_composite_resized_input():
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [None, 4], "float32")
    y = main.add_tensor("y", [None, 4], "float32")
    _composite(main, [x], [y], 1)
    main.set_inputs([x])
    main.set_outputs([y])
    _affine_subgraph(w, [1, 4], -1.0, 2.0)
    data = w.finish()
    m = wick.load(data)
    for n in (1, 5, 2):
        xv = r((n, 4))
        np.testing.assert_allclose(m(xv)[0], 2 - xv, rtol=1e-6)


def test_composite_malformed():
    def model(outputs=1, dec_dtype="float32", index=1):
        w = ModelWriter()
        main = w.add_subgraph("main")
        x = main.add_tensor("x", [2, 3], "float32")
        outs = [main.add_tensor(f"y{k}", [2, 3], "float32") for k in range(outputs)]
        _composite(main, [x], outs, index)
        main.set_inputs([x])
        main.set_outputs(outs)
        dec = w.add_subgraph("dec")
        dx = dec.add_tensor("dx", [2, 3], dec_dtype)
        dy = dec.add_tensor("dy", [2, 3], dec_dtype)
        dec.add_operator("ADD", [dx, dx], [dy], options=dict(fused_activation_function="NONE"))
        dec.set_inputs([dx])
        dec.set_outputs([dy])
        return w.finish()

    x = r((2, 3))
    with pytest.raises(wick.WickError, match="has 2 outputs but subgraph 1 returns 1"):
        wick.load(model(outputs=2))(x)
    with pytest.raises(wick.WickError, match="does not match the type"):
        wick.load(model(dec_dtype="int32"))(x)
    with pytest.raises(wick.WickError, match="subgraph"):
        wick.load(model(index=7))(x)
    with pytest.raises(wick.WickError, match="cycle|calls itself"):
        wick.load(model(index=0))(x)


def _skip_if_missing(path: Path):
    if not path.exists():
        pytest.skip(f"{path} is absent (shared model folder not available)")


def _run_real(name: str):
    path = MODELS / name
    _skip_if_missing(path)
    data = path.read_bytes()
    from tests.python.oracles.litert import random_inputs

    feeds = random_inputs(data, seed=0)
    ref = run_litert(data, feeds)
    try:
        got = wick.load(data)(*feeds)
    except wick.WickError as e:
        if e.status == UNSUPPORTED and "is not supported by wick" in str(e):
            pytest.skip(f"{name} needs an op wick lacks: {e}")
        raise
    assert len(got) == len(ref)
    for g, rr in zip(got, ref, strict=True):
        t = tolerance_check(g, rr, rel=1e-4)  # whole-model bar (several fp32 ops)
        assert t, t.message


@pytest.mark.parametrize(
    "name",
    ["l2_norm_composite.tflite", "simple_group_norm_op.tflite", "norm.tflite", "rope.tflite"],
)
def test_real_models(name):
    _run_real(name)
