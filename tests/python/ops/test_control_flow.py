"""Differential tests of IF and WHILE (operators that run other subgraphs) against LiteRT.

Each model is written with several subgraphs (``wick.tflite.writer``) and run on LiteRT and on
wick (default and reference kernels); outputs must be identical (float32 within 1e-5 relative:
the bodies are elementwise, so in practice bit-identical). Covered: both IF branches, branches
whose outputs differ in shape (dynamic IF), WHILE with zero, one and many iterations, a body that
changes the shape of a loop variable every iteration (as LiteRT allows), a WHILE nested in an IF
branch, and cancellation of a loop that never ends. The malformed cases assert the error that
names the problem: subgraph indices, cycles, input/output counts and types, the condition's type
and shape.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import wick
from tests.python.ops._harness import MALFORMED, compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(99)
I32 = np.int32


def run_both(data, feeds):
    """LiteRT's outputs, compared with wick's (default and reference kernels)."""
    ref = run_litert(data, feeds)
    compare(wick.load(data)(*feeds), ref)
    compare(wick.load(data, reference=True)(*feeds), ref, what="reference-kernel output")
    return ref


def refuses(data, feeds, match):
    with pytest.raises(wick.WickError) as e:
        wick.load(data)(*feeds)
    assert match in str(e.value), str(e.value)
    return e.value


# ============================================================================ IF


def if_model(
    shape=(2, 3),
    *,
    else_shape=None,
    cond_dtype="bool",
    cond_shape=(),
    then_index=1,
    else_index=2,
    then_inputs=1,
    out_dtype="float32",
    const_input=False,
):
    """main: IF(c, x) -> y. then: y = x + k (k a constant); else: y = x * x, or, with
    else_shape, x tiled to that shape (a shape the then branch does not give)."""
    w = ModelWriter()
    main, then, other = w.add_subgraph("main"), w.add_subgraph("then"), w.add_subgraph("else")
    c = main.add_tensor("c", list(cond_shape), cond_dtype)
    x = main.add_tensor("x", list(shape), "float32")
    y = main.add_tensor("y", list(shape), out_dtype)
    main.add_operator(
        "IF",
        [c, x],
        [y],
        options=dict(then_subgraph_index=then_index, else_subgraph_index=else_index),
    )
    main.set_inputs([c, x])
    main.set_outputs([y])

    if const_input:
        a = then.add_constant("a", np.ones(shape, np.float32))
    else:
        a = then.add_tensor("a", list(shape), "float32")
    extra = [then.add_tensor("a2", list(shape), "float32") for _ in range(then_inputs - 1)]
    k = then.add_constant("k", RNG.standard_normal(shape).astype(np.float32))
    b = then.add_tensor("b", list(shape), "float32")
    then.add_operator("ADD", [a, k], [b])
    then.set_inputs([a] + extra)
    then.set_outputs([b])

    a = other.add_tensor("a", list(shape), "float32")
    if else_shape is None:
        b = other.add_tensor("b", list(shape), "float32")
        other.add_operator("MUL", [a, a], [b])
    else:
        mult = [e // s for e, s in zip(else_shape, shape, strict=True)]
        b = other.add_tensor("b", list(else_shape), "float32")
        other.add_operator("TILE", [a, other.add_constant("m", np.array(mult, I32))], [b])
    other.set_inputs([a])
    other.set_outputs([b])
    return w.finish()


@pytest.mark.parametrize("taken", [True, False])
def test_if_branches(taken):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    ref = run_both(if_model(), [np.array(taken), x])
    assert ref[0].shape == (2, 3)


@pytest.mark.parametrize("taken", [True, False])
def test_if_branches_with_different_output_shapes(taken):
    """The else branch tiles x to [4, 3]: the IF output's shape depends on the condition."""
    data = if_model(else_shape=(4, 3))
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    ref = run_both(data, [np.array(taken), x])
    assert ref[0].shape == ((2, 3) if taken else (4, 3))


def test_if_condition_of_shape_1_and_repeated_invokes():
    data = if_model(cond_shape=(1,))
    runner = wick.load(data)
    for taken in (True, False, False, True):
        x = RNG.standard_normal((2, 3)).astype(np.float32)
        compare(runner(np.array([taken]), x), run_litert(data, [np.array([taken]), x]))


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(cond_dtype="float32"), "the condition must be one bool, not float32"),
        (dict(cond_shape=(2,)), "with 2 elements"),
        (dict(then_inputs=2), "then subgraph 1 takes 2 inputs; the node passes 1"),
        (
            dict(out_dtype="int32"),
            "output 0 is declared int32 but the then subgraph returns float32",
        ),
        (dict(const_input=True), "input 0 of then subgraph 1 is a constant or a variable"),
    ],
)
def test_if_malformed(kw, match):
    e = refuses(
        if_model(**kw),
        [np.zeros(kw.get("cond_shape", ()), bool), np.zeros((2, 3), np.float32)],
        match,
    )
    assert e.status == MALFORMED


@pytest.mark.parametrize(
    "then_index, else_index, match",
    [
        (7, 2, "refers to subgraph 7 of 3"),
        (1, -3, "has no else subgraph (index -3)"),
        (0, 2, "subgraph 0 calls itself"),
    ],
)
def test_if_bad_subgraph_index(then_index, else_index, match):
    data = if_model(then_index=then_index, else_index=else_index)
    with pytest.raises(wick.WickError) as e:
        wick.load(data)
    assert match in str(e.value) and e.value.status == MALFORMED, str(e.value)


# ============================================================================ WHILE


def while_model(
    shape=(2, 3),
    *,
    grow=False,
    cond_index=1,
    body_index=2,
    cond_out="bool",
    cond_out_shape=(),
    body_returns=3,
    body_type_i="int32",
    n_outputs=3,
    always=False,
    empty_body=False,
):
    """main: WHILE(i, n, x) -> (i', n', x'). cond: i < n. body: i + 1, n, and x * 1.5 + 0.25, or
    with ``grow``, x concatenated with itself along axis 0 (the shape doubles every iteration).
    ``always``: the cond subgraph returns a constant true (the loop never ends); ``empty_body``:
    the body has no operators and returns its inputs."""
    w = ModelWriter()
    main, cond, body = w.add_subgraph("main"), w.add_subgraph("cond"), w.add_subgraph("body")
    ins = [
        main.add_tensor("i", [], "int32"),
        main.add_tensor("n", [], "int32"),
        main.add_tensor("x", list(shape), "float32"),
    ]
    outs = [
        main.add_tensor("i_out", [], "int32"),
        main.add_tensor("n_out", [], "int32"),
        main.add_tensor("x_out", list(shape), "float32"),
    ][:n_outputs]
    main.add_operator(
        "WHILE",
        ins,
        outs,
        options=dict(cond_subgraph_index=cond_index, body_subgraph_index=body_index),
    )
    main.set_inputs(ins)
    main.set_outputs(outs)

    ci = [
        cond.add_tensor("i", [], "int32"),
        cond.add_tensor("n", [], "int32"),
        cond.add_tensor("x", list(shape), "float32"),
    ]
    if always:
        r = cond.add_constant("yes", np.array(True))
    else:
        r = cond.add_tensor("r", list(cond_out_shape), cond_out)
        if cond_out == "bool":
            a, b = ci[0], ci[1]
            if cond_out_shape != ():
                one = cond.add_tensor("i_1", [1], "int32")
                cond.add_operator(
                    "RESHAPE", [ci[0], cond.add_constant("s", np.array([1], I32))], [one]
                )
                a = cond.add_tensor("i_b", list(cond_out_shape), "int32")
                reps = cond.add_constant("reps", np.array(cond_out_shape, I32))
                cond.add_operator("TILE", [one, reps], [a])
            cond.add_operator("LESS", [a, b], [r])
        else:
            cond.add_operator("CAST", [ci[0]], [r])
    cond.set_inputs(ci)
    cond.set_outputs([r])

    bi = [
        body.add_tensor("i", [], body_type_i),
        body.add_tensor("n", [], "int32"),
        body.add_tensor("x", list(shape), "float32"),
    ]
    if empty_body:
        body.set_inputs(bi)
        body.set_outputs(bi)
        return w.finish()
    i1 = body.add_tensor("i1", [], body_type_i)
    body.add_operator("ADD", [bi[0], body.add_constant("one", np.array(1, body_type_i))], [i1])
    if grow:
        x1 = body.add_tensor("x1", [2 * shape[0]] + list(shape[1:]), "float32")
        body.add_operator("CONCATENATION", [bi[2], bi[2]], [x1], options=dict(axis=0))
    else:
        t = body.add_tensor("t", list(shape), "float32")
        x1 = body.add_tensor("x1", list(shape), "float32")
        body.add_operator(
            "MUL", [bi[2], body.add_constant("k", np.full(shape, 1.5, np.float32))], [t]
        )
        body.add_operator(
            "ADD", [t, body.add_constant("b", np.full(shape, 0.25, np.float32))], [x1]
        )
    body.set_inputs(bi)
    body.set_outputs([i1, bi[1], x1][:body_returns])
    return w.finish()


def while_feeds(n, shape=(2, 3)):
    return [np.array(0, I32), np.array(n, I32), RNG.standard_normal(shape).astype(np.float32)]


@pytest.mark.parametrize("n", [0, 1, 7, 2000])
def test_while_iterations(n):
    feeds = while_feeds(n)
    ref = run_both(while_model(), feeds)
    assert int(ref[0]) == max(n, 0)


def test_while_negative_bound_runs_zero_times():
    feeds = while_feeds(-5)
    ref = run_both(while_model(), feeds)
    np.testing.assert_array_equal(ref[2], feeds[2])


@pytest.mark.parametrize("n", [0, 1, 4])
def test_while_body_changes_shape(n):
    """x doubles along axis 0 each iteration: [1, 2] -> [2**n, 2]."""
    data = while_model(shape=(1, 2), grow=True)
    feeds = while_feeds(n, (1, 2))
    ref = run_both(data, feeds)
    assert ref[2].shape == (2**n, 2)


def test_while_changing_shape_repeated_invokes():
    data = while_model(shape=(1, 2), grow=True)
    runner = wick.load(data)
    for n in (3, 0, 5, 1):
        feeds = while_feeds(n, (1, 2))
        compare(runner(*feeds), run_litert(data, feeds))


def test_while_condition_of_shape_1():
    run_both(while_model(cond_out_shape=(1,)), while_feeds(3))


@pytest.mark.parametrize("empty_body", [False, True])
def test_while_can_be_cancelled(empty_body):
    """A loop whose cond is a constant true never ends; the cancel flag stops it (with an empty
    body, WHILE's own per-iteration check is the only one that runs)."""
    runner = wick.load(while_model(always=True, empty_body=empty_body)).signature(None)
    errors = []

    def run():
        try:
            runner(*while_feeds(0))
        except wick.WickError as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.2)
    assert thread.is_alive()
    runner._lib.wick_interpreter_cancel(runner._it)
    thread.join(10)
    assert not thread.is_alive()
    assert len(errors) == 1 and errors[0].status == "cancelled", errors
    if empty_body:
        assert "loop iteration" in str(errors[0]), str(errors[0])
    # the interpreter stays usable: cancel applies to one invoke
    ok = wick.load(while_model()).signature(None)
    assert int(ok(*while_feeds(3))[0]) == 3


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(cond_index=2, body_index=2), "cond and body are the same subgraph 2"),
        (dict(n_outputs=2), "has 3 inputs but 2 outputs"),
        (dict(body_returns=2), "body subgraph 2 returns 2 outputs; the node needs 3"),
        (dict(cond_out="float32"), "the cond subgraph returns float32, not bool"),
        (dict(cond_out_shape=(2,)), "one bool of shape [] or [1]"),
        (dict(body_type_i="int64"), "input 0 does not match the type of subgraph 2's input"),
    ],
)
def test_while_malformed(kw, match):
    e = refuses(while_model(**kw), while_feeds(2), match)
    assert e.status == MALFORMED


@pytest.mark.parametrize(
    "cond_index, body_index, match",
    [
        (5, 2, "refers to subgraph 5 of 3"),
        (1, 0, "subgraph 0 calls itself"),
        (-1, 2, "has no cond subgraph"),
    ],
)
def test_while_bad_subgraph_index(cond_index, body_index, match):
    data = while_model(cond_index=cond_index, body_index=body_index)
    with pytest.raises(wick.WickError) as e:
        wick.load(data)(*while_feeds(1))
    assert match in str(e.value) and e.value.status == MALFORMED, str(e.value)


# ============================================================================ nesting


def test_while_inside_if_branch():
    """main: IF(c, n, x); then: WHILE over (i = 0, n, x) returning x; else: x * x."""
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

    ci = [
        cond.add_tensor("i", [], "int32"),
        cond.add_tensor("n", [], "int32"),
        cond.add_tensor("x", [3], "float32"),
    ]
    r = cond.add_tensor("r", [], "bool")
    cond.add_operator("LESS", ci[:2], [r])
    cond.set_inputs(ci)
    cond.set_outputs([r])

    bi = [
        body.add_tensor("i", [], "int32"),
        body.add_tensor("n", [], "int32"),
        body.add_tensor("x", [3], "float32"),
    ]
    i1, x1 = body.add_tensor("i1", [], "int32"), body.add_tensor("x1", [3], "float32")
    body.add_operator("ADD", [bi[0], body.add_constant("one", np.array(1, I32))], [i1])
    body.add_operator("ADD", [bi[2], bi[2]], [x1])
    body.set_inputs(bi)
    body.set_outputs([i1, bi[1], x1])
    data = w.finish()

    x0 = np.array([1.0, -2.0, 0.5], np.float32)
    for taken, k in ((True, 3), (False, 3), (True, 0)):
        ref = run_both(data, [np.array(taken), np.array(k, I32), x0])
        np.testing.assert_array_equal(ref[0], x0 * 2**k if taken else x0 * x0)
