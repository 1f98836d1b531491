"""IF and WHILE on the NNAPI delegate (docs/nnapi.md, "Control flow") against the test NNAPI
implementation (tests/nnapi/test_nnapi_ops_flow.c computes NNAPI's IF and WHILE itself).

The models are those of tests/python/ops/test_control_flow.py (checked there against LiteRT)
plus a WHILE nested in an IF branch and an IF whose branch holds an operator NNAPI lacks. At
feature levels 27, 28, 29, 30, 31 and 1000008:

* from level 30 the IF / WHILE runs on NNAPI (the report names the delegate and notes the
  referenced models), below it it stays on the CPU with "needs NNAPI feature level 30";
* outputs equal CPU-only's (int32 exactly, float within 1e-5 * max(1, |ref|)) for both
  branches and for loops of 0, 1 and 7 iterations;
* the test runtime rejected nothing and saw no call its level lacks;
* nodes whose output shapes change at invoke (branches of different shapes, a growing loop
  variable) and subgraphs with an operator NNAPI cannot run stay on the CPU with the reason;
* a failing setOperandValueFromModel falls back to the CPU with identical outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops.test_control_flow import if_model, while_feeds, while_model
from tests.python.runtime.test_nnapi import LEVELS, LIB, _assert_match
from wick.tflite.writer import ModelWriter

pytestmark = pytest.mark.skipif(
    LIB is None,
    reason="no libwick_test_nnapi.so next to libwick.so (build the C tests: cmake --build build)",
)

I32 = np.int32
RNG = np.random.default_rng(3)


def _outputs(rt, xs):
    y = rt(*xs)
    return [np.asarray(v) for v in (y if isinstance(y, list | tuple) else [y])]


def _check_levels(data, feeds_list, op, monkeypatch, counters, since=30):
    """Runs `data` on each feed set at every level: `op` on NNAPI from `since`, on the CPU
    below it with the level in the reason; outputs equal to CPU-only."""
    cpu = wick.load(data)
    refs = [_outputs(cpu, xs) for xs in feeds_list]
    for level in LEVELS:
        monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
        counters.wick_test_nnapi_reset_counters()
        rt = wick.load(data, delegate=f"nnapi:library={LIB}")
        what = f"{op} at level {level}"
        record = next(r for r in rt.delegation if r.op == op)
        if level >= since:
            assert record.delegate == "nnapi", f"{what}: {rt.delegation}"
            assert f"NNAPI {op} with its" in record.note, record
        else:
            assert record.delegate is None, f"{what}: {rt.delegation}"
            assert "needs NNAPI feature level 30" in record.reason, record
        for xs, ref in zip(feeds_list, refs, strict=True):
            _assert_match(_outputs(rt, xs), ref, what)
        for r in rt.delegation:
            assert "failed" not in r.reason, f"{what}: {r}"
        assert counters.wick_test_nnapi_rejections() == 0, (
            what,
            counters.wick_test_nnapi_last_error(),
        )
        assert counters.wick_test_nnapi_misuses() == 0, (
            what,
            counters.wick_test_nnapi_last_error(),
        )


def test_if_runs_on_nnapi_from_30(monkeypatch, runtime_counters):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    feeds = [[np.array(True), x], [np.array(False), x], [np.array([True]), -x]]
    _check_levels(if_model(), feeds[:2], "IF", monkeypatch, runtime_counters)
    _check_levels(if_model(cond_shape=(1,)), [feeds[2]], "IF", monkeypatch, runtime_counters)


def test_while_runs_on_nnapi_from_30(monkeypatch, runtime_counters):
    """cond i < n; body i + 1 (int32 ADD, 30), n passed through (an identity in NNAPI: a model
    output may not be its input), x * 1.5 + 0.25."""
    feeds = [while_feeds(n) for n in (0, 1, 7)]
    _check_levels(while_model(), feeds, "WHILE", monkeypatch, runtime_counters)


def _while_inside_if():
    """main: IF(c, n, x); then: WHILE over (i = 0, n, x) doubling x; else: x * x (as
    test_control_flow.test_while_inside_if_branch)."""
    w = ModelWriter()
    main, then, other = w.add_subgraph("main"), w.add_subgraph("then"), w.add_subgraph("else")
    cond, body = w.add_subgraph("cond"), w.add_subgraph("body")
    c = main.add_tensor("c", [], "bool")
    n = main.add_tensor("n", [], "int32")
    x = main.add_tensor("x", [3], "float32")
    y = main.add_tensor("y", [3], "float32")
    main.add_operator(
        "IF", [c, n, x], [y], options=dict(then_subgraph_index=1, else_subgraph_index=2)
    )
    main.set_inputs([c, n, x])
    main.set_outputs([y])
    tn, tx = then.add_tensor("n", [], "int32"), then.add_tensor("x", [3], "float32")
    zero = then.add_constant("zero", np.array(0, I32))
    outs = [
        then.add_tensor(f"o{k}", s, d)
        for k, (s, d) in enumerate([([], "int32"), ([], "int32"), ([3], "float32")])
    ]
    then.add_operator(
        "WHILE", [zero, tn, tx], outs, options=dict(cond_subgraph_index=3, body_subgraph_index=4)
    )
    then.set_inputs([tn, tx])
    then.set_outputs([outs[2]])
    en, ex = other.add_tensor("n", [], "int32"), other.add_tensor("x", [3], "float32")
    ey = other.add_tensor("y", [3], "float32")
    other.add_operator("MUL", [ex, ex], [ey])
    other.set_inputs([en, ex])
    other.set_outputs([ey])
    ci = [cond.add_tensor(k, s, d) for k, s, d in (("i", [], "int32"), ("n", [], "int32"))]
    ci.append(cond.add_tensor("x", [3], "float32"))
    r = cond.add_tensor("r", [], "bool")
    cond.add_operator("LESS", ci[:2], [r])
    cond.set_inputs(ci)
    cond.set_outputs([r])
    bi = [body.add_tensor(k, s, d) for k, s, d in (("i", [], "int32"), ("n", [], "int32"))]
    bi.append(body.add_tensor("x", [3], "float32"))
    i1, x1 = body.add_tensor("i1", [], "int32"), body.add_tensor("x1", [3], "float32")
    body.add_operator("ADD", [bi[0], body.add_constant("one", np.array(1, I32))], [i1])
    body.add_operator("ADD", [bi[2], bi[2]], [x1])
    body.set_inputs(bi)
    body.set_outputs([i1, bi[1], x1])
    return w.finish()


def test_while_nested_in_an_if_branch(monkeypatch, runtime_counters):
    """The then branch's WHILE becomes an NNAPI WHILE inside the then model (models nest)."""
    x0 = np.array([1.0, -2.0, 0.5], np.float32)
    feeds = [[np.array(t), np.array(k, I32), x0] for t, k in ((True, 3), (False, 3), (True, 0))]
    _check_levels(_while_inside_if(), feeds, "IF", monkeypatch, runtime_counters)


def _if_with_floor():
    """IF(c, x): then x + 1, else FLOOR(x) (an operator the NNAPI delegate does not map)."""
    w = ModelWriter()
    main, then, other = w.add_subgraph("main"), w.add_subgraph("then"), w.add_subgraph("else")
    c, x = main.add_tensor("c", [], "bool"), main.add_tensor("x", [4], "float32")
    y = main.add_tensor("y", [4], "float32")
    main.add_operator("IF", [c, x], [y], options=dict(then_subgraph_index=1, else_subgraph_index=2))
    main.set_inputs([c, x])
    main.set_outputs([y])
    a, b = then.add_tensor("a", [4], "float32"), then.add_tensor("b", [4], "float32")
    then.add_operator("ADD", [a, then.add_constant("one", np.ones(4, np.float32))], [b])
    then.set_inputs([a])
    then.set_outputs([b])
    a, b = other.add_tensor("a", [4], "float32"), other.add_tensor("b", [4], "float32")
    other.add_operator("FLOOR", [a], [b])
    other.set_inputs([a])
    other.set_outputs([b])
    return w.finish()


@pytest.mark.parametrize(
    "build, op, why",
    [
        (lambda: if_model(else_shape=(4, 3)), "IF", "output shape known only at invoke"),
        (lambda: while_model(grow=True), "WHILE", "output shape known only at invoke"),
        (_if_with_floor, "IF", "IF's else subgraph: FLOOR has no NNAPI mapping"),
        (
            lambda: while_model(cond_out_shape=(1,)),
            "WHILE",
            "WHILE's cond subgraph: RESHAPE of int32",
        ),
    ],
    ids=["if-dynamic", "while-growing", "if-floor", "while-int32-reshape"],
)
def test_declined_with_the_reason(build, op, why, monkeypatch, runtime_counters):
    data = build()
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "1000008")
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    record = next(r for r in rt.delegation if r.op == op)
    assert record.delegate is None and why in record.reason, record
    cpu = wick.load(data)
    xs = [np.array(False)] + [RNG.standard_normal(d.shape).astype(d.dtype) for d in cpu.inputs[1:]]
    if op == "WHILE":
        xs = while_feeds(2)
    _assert_match(_outputs(rt, xs), _outputs(cpu, xs), op)
    assert runtime_counters.wick_test_nnapi_rejections() == 0


@pytest.mark.parametrize(
    "function",
    ["ANeuralNetworksModel_setOperandValueFromModel", "ANeuralNetworksExecution_compute"],
)
def test_failures_fall_back_bit_identically(function, monkeypatch):
    data = while_model()
    feeds = while_feeds(5)
    ref = _outputs(wick.load(data), feeds)
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "30")
    monkeypatch.setenv("WICK_TEST_NNAPI_FAIL", f"{function}:*")
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    got = _outputs(rt, feeds)
    for g, r in zip(got, ref, strict=True):
        assert np.array_equal(g, r)
    assert all(r.delegate is None for r in rt.delegation), rt.delegation
    assert any("failed" in r.reason for r in rt.delegation), rt.delegation
