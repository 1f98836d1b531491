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
* a failing setOperandValueFromModel falls back to the CPU with identical outputs;
* the delegation report lists the operators inside the subgraphs (rows after the signature's,
  each with its parent row, role, subgraph and index): on NNAPI with their IF / WHILE, or on the
  CPU saying so and what keeps each one off NNAPI on its own (the level its mapping needs),
  through ``rt.delegation``, the C accessor's bounds and ``wick inspect``; it stops at 65536
  rows inside subgraphs (a fan-out of copies under an IF prepared only at invoke);
* IF / WHILE whose shapes change at invoke (branches of different shapes, a growing loop
  variable, a branch whose output shape is known only at invoke, inputs whose shapes are) are
  never offered, with the exact reason, and the CPU runs them with LiteRT's outputs.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import wick
from tests.python.ops.test_control_flow import if_model, while_feeds, while_model
from tests.python.oracles.litert import run_litert
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
        (
            lambda: if_model(else_shape=(4, 3)),
            "IF",
            "output shape known only at invoke (the then and else subgraphs give output 0 "
            "different shapes, [2, 3] and [4, 3])",
        ),
        (
            lambda: while_model(grow=True),
            "WHILE",
            "output shape known only at invoke (the body changes loop variable 2 from [2, 3] "
            "to [4, 3])",
        ),
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


# ---------------------------------------------------------------- the report inside subgraphs

NESTED_ROWS = [  # (index, parent, role, subgraph, op_index, op) of _while_inside_if
    (0, -1, "", 0, 0, "IF"),
    (1, 0, "then", 1, 0, "WHILE"),
    (2, 0, "else", 2, 0, "MUL"),
    (3, 1, "cond", 3, 0, "LESS"),
    (4, 1, "body", 4, 0, "ADD"),
    (5, 1, "body", 4, 1, "ADD"),
]


def _own_reason(record, records):
    """What follows the row's placement phrase: why NNAPI would not take the operator alone."""
    parent = records[record.parent]
    where = (
        f"in the {record.role} subgraph of {parent.op} (row {parent.index}), which runs on the CPU"
    )
    assert record.reason.startswith(where), record
    return record.reason[len(where) :]


@pytest.mark.parametrize("level", LEVELS)
def test_report_lists_the_operators_inside(level, monkeypatch, runtime_counters):
    """A WHILE in an IF branch: six rows at every level. From 30 all run on NNAPI in the IF's
    partition (the inner WHILE with its own note); below, on the CPU, each with its own
    reason: the WHILE needs 30, LESS 29 (the mapping table), the int32 loop-counter ADD 30, the
    float ADD and MUL none.  Outputs equal CPU-only's."""
    data = _while_inside_if()
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    records = rt.delegation
    got = [(r.index, r.parent, r.role, r.subgraph, r.op_index, r.op) for r in records]
    assert got == NESTED_ROWS, records
    if level >= 30:
        assert all(r.delegate == "nnapi" and r.partition == 0 and r.reason == "" for r in records)
        assert records[1].note == "NNAPI WHILE with its cond and body as NNAPI models", records[1]
        assert all(r.note == "" for r in records[2:]), records
    else:
        assert "IF (NNAPI's IF) needs NNAPI feature level 30" in records[0].reason, records[0]
        assert all(r.delegate is None and r.partition == -1 and r.note == "" for r in records)
        own = {r.index: _own_reason(r, records) for r in records[1:]}
        offers = f"(the runtime offers {level} "
        assert own[1].startswith("; nnapi: WHILE (NNAPI's WHILE) needs NNAPI feature level 30 ")
        if level < 29:
            assert own[3] == f"; nnapi: LESS needs NNAPI feature level 29 {offers}" + (
                "(Android 8.1))" if level == 27 else "(Android 9))"
            ), own[3]
        else:
            assert own[3] == "", own[3]
        assert own[4].startswith("; nnapi: int32 ADD, SUB and MUL needs NNAPI feature level 30 ")
        assert offers in own[1] and offers in own[4], own
        assert own[2] == "" and own[5] == "", own
    x0 = np.array([1.0, -2.0, 0.5], np.float32)
    feeds = [np.array(True), np.array(3, I32), x0]
    _assert_match(_outputs(rt, feeds), _outputs(wick.load(data), feeds), f"level {level}")
    assert runtime_counters.wick_test_nnapi_rejections() == 0


def test_report_inside_a_declined_if_names_the_blocking_operator(monkeypatch):
    """At the latest level the IF is declined for its else branch's FLOOR: the FLOOR row says
    why on its own, the then branch's ADD (which NNAPI would take) only where it runs; with a
    second delegate, each one's reason."""
    data = _if_with_floor()
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "1000008")
    records = wick.load(data, delegate=f"nnapi:library={LIB}").delegation
    assert [(r.op, r.role) for r in records] == [("IF", ""), ("ADD", "then"), ("FLOOR", "else")]
    assert records[0].reason == "nnapi: IF's else subgraph: FLOOR has no NNAPI mapping in wick yet"
    assert _own_reason(records[1], records) == ""
    assert _own_reason(records[2], records) == "; nnapi: FLOOR has no NNAPI mapping in wick yet"
    # every delegate is asked, in priority order ("reference" takes ADD, not FLOOR)
    records = wick.load(data, delegate=[f"nnapi:library={LIB}", "reference"]).delegation
    assert _own_reason(records[1], records) == ""
    assert _own_reason(records[2], records) == (
        "; nnapi: FLOOR has no NNAPI mapping in wick yet; reference: op FLOOR is not implemented"
    )


def test_report_inside_follows_the_partition(monkeypatch):
    """The inner rows share their WHILE's partition: planned only (plan_level=30: the reason
    and the notes of a plan), and, after an invoke failure, on the CPU with its reason."""
    data = while_model()
    records = wick.load(data, delegate="nnapi:plan_level=30").delegation
    assert [r.op for r in records] == ["WHILE", "LESS", "ADD", "MUL", "ADD"]
    assert all(r.delegate is None and r.partition == 0 for r in records), records
    assert all(r.reason.startswith("nnapi: planned only: ") for r in records), records
    assert records[0].note.startswith("NNAPI WHILE with its cond and body as NNAPI models")
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "30")
    monkeypatch.setenv("WICK_TEST_NNAPI_FAIL", "ANeuralNetworksExecution_compute:*")
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    assert all(r.delegate == "nnapi" for r in rt.delegation), rt.delegation
    feeds = while_feeds(3)
    _assert_match(_outputs(rt, feeds), _outputs(wick.load(data), feeds), "after the failure")
    after = rt.delegation
    assert all(r.delegate is None and r.partition == 0 for r in after), after
    assert all("invoke failed" in r.reason and r.reason == after[0].reason for r in after), after


def test_report_rows_without_delegates_and_the_c_accessor():
    """No delegates: the rows are there, each without a reason. The C accessor refuses a row
    out of range, a NULL row and a struct smaller than its first version."""
    from wick.runtime import _DelegationRow

    rt = wick.load(_while_inside_if())
    records = rt.delegation
    assert [(r.index, r.parent, r.role, r.subgraph, r.op_index, r.op) for r in records] == (
        NESTED_ROWS
    )
    assert all(r.delegate is None and r.reason == "" and r.partition == -1 for r in records)
    lib, it = rt._default._lib, rt._default._it
    assert lib.wick_interpreter_delegation_row_count(it) == 6
    assert lib.wick_interpreter_op_count(it) == 1
    row = _DelegationRow(struct_size=ctypes.sizeof(_DelegationRow))
    assert lib.wick_interpreter_delegation_row(it, 5, ctypes.byref(row)) == 0
    assert (row.parent, row.role, row.op_name) == (1, b"body", b"ADD")
    invalid = 1  # WICK_ERR_INVALID_ARGUMENT (wick.h)
    assert lib.wick_interpreter_delegation_row(it, 6, ctypes.byref(row)) == invalid
    assert lib.wick_interpreter_delegation_row(it, 0, None) == invalid
    row.struct_size = ctypes.sizeof(_DelegationRow) - 1
    assert lib.wick_interpreter_delegation_row(it, 0, ctypes.byref(row)) == invalid


def test_cli_inspect_prints_the_rows_inside(tmp_path):
    model = tmp_path / "nested.tflite"
    model.write_bytes(_while_inside_if())
    env = dict(os.environ, WICK_TEST_NNAPI_FEATURE_LEVEL="27")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "wick.cli",
            "inspect",
            str(model),
            "--delegate",
            f"nnapi:library={LIB}",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    out = r.stdout
    assert "0 of 1 operators on delegates, 0 partitions; inside subgraphs, 0 of 5" in out, out
    lines = out[out.index("placement") :].splitlines()[1:]
    names = [line[8:33].rstrip() for line in lines]
    assert names == [
        "IF",
        "  then: WHILE",
        "    cond: LESS",
        "    body: ADD",
        "    body: ADD",
        "  else: MUL",
    ], out
    assert "nnapi: LESS needs NNAPI feature level 29" in lines[2], lines[2]
    assert lines[2].split()[0] == "3", lines[2]


# ---------------------------------------------------------------- shapes known only at invoke


def _fill_growing_loop(cond, body):
    """The cond and body of a WHILE over (i, n, x): while i < n, i + 1 and x doubled along
    axis 0 (x grows from [1, 2]: its shape is known only at invoke)."""
    ci = [cond.add_tensor(k, s, d) for k, s, d in (("i", [], "int32"), ("n", [], "int32"))]
    ci.append(cond.add_tensor("x", [1, 2], "float32"))
    r = cond.add_tensor("r", [], "bool")
    cond.add_operator("LESS", ci[:2], [r])
    cond.set_inputs(ci)
    cond.set_outputs([r])
    bi = [body.add_tensor(k, s, d) for k, s, d in (("i", [], "int32"), ("n", [], "int32"))]
    bi.append(body.add_tensor("x", [1, 2], "float32"))
    i1, x1 = body.add_tensor("i1", [], "int32"), body.add_tensor("x1", [2, 2], "float32")
    body.add_operator("ADD", [bi[0], body.add_constant("one", np.array(1, I32))], [i1])
    body.add_operator("CONCATENATION", [bi[2], bi[2]], [x1], options=dict(axis=0))
    body.set_inputs(bi)
    body.set_outputs([i1, bi[1], x1])


def _growing_while_into_if():
    """(writer, main, then, else): main runs a WHILE that grows x ([1, 2] doubling along axis 0
    while i < n), then IF(c, x) on its output (subgraphs 3 and 4, left for the caller to fill):
    the IF's inputs have shapes known only at invoke."""
    w = ModelWriter()
    main, cond, body = w.add_subgraph("main"), w.add_subgraph("cond"), w.add_subgraph("body")
    then, other = w.add_subgraph("then"), w.add_subgraph("else")
    c = main.add_tensor("c", [], "bool")
    ins = [main.add_tensor("i", [], "int32"), main.add_tensor("n", [], "int32")]
    ins.append(main.add_tensor("x", [1, 2], "float32"))
    outs = [main.add_tensor(k, s, d) for k, s, d in (("i2", [], "int32"), ("n2", [], "int32"))]
    outs.append(main.add_tensor("x2", [1, 2], "float32"))
    main.add_operator(
        "WHILE", ins, outs, options=dict(cond_subgraph_index=1, body_subgraph_index=2)
    )
    y = main.add_tensor("y", [1, 2], "float32")
    main.add_operator(
        "IF", [c, outs[2]], [y], options=dict(then_subgraph_index=3, else_subgraph_index=4)
    )
    main.set_inputs([c, *ins])
    main.set_outputs([y])
    _fill_growing_loop(cond, body)
    return w, main, then, other


def _if_after_growing_while():
    """main: WHILE grows x ([1, 2] doubling along axis 0), then IF(c, x): then x + 1, else
    x * x — the IF's inputs have shapes known only at invoke."""
    w, main, then, other = _growing_while_into_if()
    for sub, op in ((then, "ADD"), (other, "MUL")):
        a, b = sub.add_tensor("a", [1, 2], "float32"), sub.add_tensor("b", [1, 2], "float32")
        second = sub.add_constant("one", np.ones((1, 2), np.float32)) if op == "ADD" else a
        sub.add_operator(op, [a, second], [b])
        sub.set_inputs([a])
        sub.set_outputs([b])
    return w.finish()


def _if_with_growing_branch():
    """main: IF(c, i, n, x): then a WHILE growing x ([1, 2] doubling along axis 0) — its
    output shape is known only at invoke —, else x * x."""
    w = ModelWriter()
    main, then, other = w.add_subgraph("main"), w.add_subgraph("then"), w.add_subgraph("else")
    cond, body = w.add_subgraph("cond"), w.add_subgraph("body")
    c = main.add_tensor("c", [], "bool")
    ins = [main.add_tensor("i", [], "int32"), main.add_tensor("n", [], "int32")]
    ins.append(main.add_tensor("x", [1, 2], "float32"))
    y = main.add_tensor("y", [1, 2], "float32")
    main.add_operator(
        "IF", [c, *ins], [y], options=dict(then_subgraph_index=1, else_subgraph_index=2)
    )
    main.set_inputs([c, *ins])
    main.set_outputs([y])
    ti = [then.add_tensor(k, s, d) for k, s, d in (("i", [], "int32"), ("n", [], "int32"))]
    ti.append(then.add_tensor("x", [1, 2], "float32"))
    to = [then.add_tensor(k, s, d) for k, s, d in (("i2", [], "int32"), ("n2", [], "int32"))]
    to.append(then.add_tensor("x2", [1, 2], "float32"))
    then.add_operator("WHILE", ti, to, options=dict(cond_subgraph_index=3, body_subgraph_index=4))
    then.set_inputs(ti)
    then.set_outputs([to[2]])
    ei = [other.add_tensor(k, s, d) for k, s, d in (("i", [], "int32"), ("n", [], "int32"))]
    ei.append(other.add_tensor("x", [1, 2], "float32"))
    ey = other.add_tensor("y", [1, 2], "float32")
    other.add_operator("MUL", [ei[2], ei[2]], [ey])
    other.set_inputs(ei)
    other.set_outputs([ey])
    _fill_growing_loop(cond, body)
    return w.finish()


def _feeds_if_while(taken, n):
    x = RNG.standard_normal((1, 2)).astype(np.float32)
    return [np.array(taken), np.array(0, I32), np.array(n, I32), x]


@pytest.mark.parametrize(
    "build, op, why, feeds",
    [
        (
            lambda: if_model(else_shape=(4, 3)),
            "IF",
            "(the then and else subgraphs give output 0 different shapes, [2, 3] and [4, 3])",
            [[np.array(t), RNG.standard_normal((2, 3)).astype(np.float32)] for t in (True, False)],
        ),
        (
            lambda: while_model(grow=True),
            "WHILE",
            "(the body changes loop variable 2 from [2, 3] to [4, 3])",
            [while_feeds(n) for n in (0, 1, 3)],
        ),
        (
            _if_with_growing_branch,
            "IF",
            "(the then subgraph's output 0 has a shape known only at invoke)",
            [_feeds_if_while(t, n) for t, n in ((True, 0), (True, 2), (False, 2))],
        ),
        (
            _if_after_growing_while,
            "IF",
            "(its inputs' shapes are known only at invoke)",
            [_feeds_if_while(t, n) for t, n in ((True, 0), (True, 2), (False, 3))],
        ),
    ],
    ids=["if-branch-shapes", "while-growing", "if-growing-branch", "if-after-growing-while"],
)
def test_dynamic_control_flow_is_declined_exactly_and_runs_on_the_cpu(
    build, op, why, feeds, monkeypatch, runtime_counters
):
    """Shapes that change at invoke: the IF / WHILE is never offered (the delegate API offers
    only nodes whose output shapes are fixed at prepare), at every level, with the reason that
    says which output and why; the CPU runs it, with LiteRT's outputs (exact: elementwise
    bodies), over repeated invokes of other shapes; the test runtime saw nothing."""
    data = build()
    for level in (27, 30, 1000008):
        monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
        runtime_counters.wick_test_nnapi_reset_counters()
        rt = wick.load(data, delegate=f"nnapi:library={LIB}")
        record = next(r for r in rt.delegation if r.op == op and r.parent < 0)
        assert record.reason == f"output shape known only at invoke {why}", record
        assert all(r.delegate is None for r in rt.delegation), rt.delegation
        for xs in feeds:
            got = _outputs(rt, xs)
            ref = run_litert(data, xs)
            for g, r in zip(got, ref, strict=True):
                assert g.shape == r.shape and np.array_equal(g, r), (level, xs, g, r)
        assert runtime_counters.wick_test_nnapi_rejections() == 0


def _fan_out_under_a_dynamic_if(chain=600, ifs=64):
    """main: a growing WHILE, then IF(c, x) on its output — prepared only at invoke. then: `ifs`
    IFs in a row, each running subgraph B as both branches; else: x + 1. B: `chain` ADDs. The
    report would list 2 * ifs copies of B (76800 rows): it stops at 65536 inner rows."""
    w, main, then, other = _growing_while_into_if()
    b = w.add_subgraph("b")
    tc, tx = then.add_constant("yes", np.array(True)), then.add_tensor("x", [1, 2], "float32")
    cur = tx
    for k in range(ifs):
        nxt = then.add_tensor(f"t{k}", [1, 2], "float32")
        then.add_operator(
            "IF", [tc, cur], [nxt], options=dict(then_subgraph_index=5, else_subgraph_index=5)
        )
        cur = nxt
    then.set_inputs([tx])
    then.set_outputs([cur])
    ea, eb = other.add_tensor("a", [1, 2], "float32"), other.add_tensor("b", [1, 2], "float32")
    other.add_operator("ADD", [ea, other.add_constant("one", np.ones((1, 2), np.float32))], [eb])
    other.set_inputs([ea])
    other.set_outputs([eb])
    ba = b.add_tensor("a", [1, 2], "float32")
    one = b.add_constant("one", np.ones((1, 2), np.float32))
    cur = ba
    for k in range(chain):
        nxt = b.add_tensor(f"b{k}", [1, 2], "float32")
        b.add_operator("ADD", [cur, one], [nxt])
        cur = nxt
    b.set_inputs([ba])
    b.set_outputs([cur])
    return w.finish()


def test_report_rows_are_capped():
    """Under a dynamic IF (prepared only at invoke, so no instance cap at create yet) 128 copies
    of a 600-operator subgraph: the report lists whole subgraphs up to 65536 inner rows (the
    WHILE's, the then branch's 64 IFs, the else branch's ADD, then 109 copies), and the model
    still runs (with and without the delegate: the same outputs)."""
    data = _fan_out_under_a_dynamic_if()
    records = wick.load(data, delegate="nnapi:plan_level=30").delegation
    # the WHILE's cond and body (1 + 2), the IF's branches (64 + 1), 109 copies of 600
    assert len(records) == 2 + 3 + 64 + 1 + 109 * 600, len(records)
    assert [r.op for r in records[:2]] == ["WHILE", "IF"]
    assert all(r.parent <= r.index - 1 for r in records[2:])
    assert records[-1].subgraph == 5 and records[-1].op_index == 599, records[-1]
    assert "which runs on the CPU" in records[-1].reason, records[-1]
    feeds = [np.array(True), np.array(0, I32), np.array(2, I32), np.ones((1, 2), np.float32)]
    got = _outputs(wick.load(data, delegate="nnapi:plan_level=30"), feeds)
    ref = _outputs(wick.load(data), feeds)
    assert got[0].shape == (4, 2) and np.array_equal(got[0], ref[0])
    assert np.all(got[0] == 1 + 64 * 600), got[0]
