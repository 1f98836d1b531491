"""Differential tests of stateful models: resource variables (VAR_HANDLE, ASSIGN_VARIABLE,
READ_VARIABLE) initialised by CALL_ONCE, against LiteRT over several invokes.

Two sources of files:

* TensorFlow's converter (``experimental_enable_resource_variables``) on tf.Modules whose state
  is a tf.Variable: an accumulator with a counter, and a streaming 1-D convolution whose state is
  the last K-1 input frames. The converter writes a CALL_ONCE that runs an init subgraph
  assigning the initial values, and VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE in the main
  subgraph. TensorFlow runs in a child process; skipped (visibly) without tensorflow.
* Files written here with ``wick.tflite.writer``: variables shared across subgraphs, two
  CALL_ONCE nodes on one init subgraph, assignments that change a variable's shape, and the
  malformed cases (subgraph indices, cycles, arity, types, reading a variable never assigned).

Every step's outputs must equal LiteRT's (float32 within 1e-5 relative, the harness bar; the
graphs are small and in practice bit-identical), on LiteRT's default and reference resolvers
and wick's default and reference kernels. ``reset_variables()`` must make the next steps equal
those of a fresh LiteRT interpreter (LiteRT's own reset_all_variables does not clear resource
variables or re-run CALL_ONCE: measured, its outputs continue from the old state).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import INVALID_INPUT, MALFORMED, compare
from tests.python.oracles.litert import make_interpreter
from tests.python.oracles.tf_child import tf_convert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(7)
STEPS = 5


# ============================================================================ helpers


def litert_steps(data, feeds, reference=False, signature=False):
    """Outputs of one LiteRT interpreter over a sequence of invokes. ``feeds``: one list of
    input arrays per step (subgraph input order), or with ``signature`` one dict by name; the
    outputs are lists in subgraph order, or dicts by signature name."""
    it = make_interpreter(data, reference=reference)
    if signature:
        runner = it.get_signature_runner()
        return [{k: np.array(v) for k, v in runner(**f).items()} for f in feeds]
    it.allocate_tensors()
    out = []
    for step in feeds:
        for d, x in zip(it.get_input_details(), step, strict=True):
            if tuple(d["shape"]) != x.shape:
                it.resize_tensor_input(d["index"], x.shape)
                it.allocate_tensors()
        for d, x in zip(it.get_input_details(), step, strict=True):
            it.set_tensor(d["index"], x)
        it.invoke()
        out.append([np.array(it.get_tensor(d["index"])) for d in it.get_output_details()])
    return out


def wick_steps(model, feeds, signature=False):
    """The same on a loaded wick model (state carried from call to call)."""
    if signature:
        names = [d.name for d in model.outputs]
        return [dict(zip(names, model(**f), strict=True)) for f in feeds]
    return [model(*f) for f in feeds]


def compare_steps(got, ref, what):
    assert len(got) == len(ref)
    for step, (g, r) in enumerate(zip(got, ref, strict=True)):
        if isinstance(r, dict):
            assert sorted(g) == sorted(r), f"{what}: outputs {sorted(g)} != LiteRT {sorted(r)}"
            g, r = [g[k] for k in sorted(r)], [r[k] for k in sorted(r)]
        compare(g, r, what=f"{what}, step {step}, output")


def check_stateful(data, feeds, signature=False, litert_reference=True):
    """N steps on wick (default and reference kernels) equal N steps on LiteRT (default and,
    unless told otherwise, reference resolvers); then reset_variables() and N steps again equal
    a fresh LiteRT interpreter's N steps. Returns LiteRT's outputs."""
    ref = litert_steps(data, feeds, signature=signature)
    refs = [("LiteRT default", ref)]
    if litert_reference:
        refs.append(
            ("LiteRT reference", litert_steps(data, feeds, reference=True, signature=signature))
        )
    for reference in (False, True):
        m = wick.load(data, reference=reference)
        got = wick_steps(m, feeds, signature)
        for name, r in refs:
            compare_steps(got, r, f"wick reference={reference} vs {name}")
        m.reset_variables()
        compare_steps(
            wick_steps(m, feeds, signature), ref, f"wick reference={reference} after reset"
        )
    return ref


# ============================================================================ TensorFlow files


# TensorFlow runs in a child process (tests/python/oracles/tf_child.py says why).
_TF_MODELS = r"""
import sys
import numpy as np
import tensorflow as tf


class Acc(tf.Module):
    # total += x; count += 1; steps = 3 steps + 1

    def __init__(self):
        self.total = tf.Variable(tf.constant([1.0, -2.0, 3.0, 0.5]), name="total")
        self.count = tf.Variable(2.0, name="count")
        self.steps = tf.Variable(tf.constant(7, tf.int32), name="steps")

    @tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
    def __call__(self, x):
        self.total.assign_add(x)
        self.count.assign_add(1.0)
        self.steps.assign(self.steps * 3 + 1)
        return {"mean": self.total / self.count, "count": self.count + 0.0,
                "steps": self.steps + 0}


K, C, T, F = 3, 4, 5, 6
rng = np.random.default_rng(3)


class Stream(tf.Module):
    # the state is the last K-1 frames; each call convolves state ++ x

    def __init__(self):
        self.w = tf.constant(rng.standard_normal((K, C, F)).astype(np.float32))
        self.state = tf.Variable(rng.standard_normal((1, K - 1, C)).astype(np.float32),
                                 name="state")

    @tf.function(input_signature=[tf.TensorSpec([1, T, C], tf.float32)])
    def __call__(self, x):
        buf = tf.concat([self.state, x], axis=1)
        y = tf.nn.conv1d(buf, self.w, stride=1, padding="VALID")
        self.state.assign(buf[:, -(K - 1):, :])
        return {"y": tf.nn.relu(y)}


m = {"acc": Acc, "stream": Stream}[sys.argv[1]]()
conv = tf.lite.TFLiteConverter.from_concrete_functions([m.__call__.get_concrete_function()], m)
conv.experimental_enable_resource_variables = True
open(sys.argv[2], "wb").write(conv.convert())
"""


def tf_file(name: str) -> bytes:
    """The TensorFlow-converted file ``name`` ("acc" or "stream"), made in a child process."""
    return tf_convert(_TF_MODELS, name)


def ops_of(data):
    from tests.python.oracles.litert import op_histogram

    return op_histogram(data)


def test_tf_accumulator_and_counter():
    """total += x; count += 1; returns total / count and count. Non-zero initial values come
    from the CALL_ONCE init subgraph."""
    data = tf_file("acc")
    hist = ops_of(data)
    for op in ("CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"):
        assert op in hist, hist
    feeds = [{"x": RNG.standard_normal(4).astype(np.float32)} for _ in range(STEPS)]
    ref = check_stateful(data, feeds, signature=True)
    assert ref[-1]["count"] == 2.0 + STEPS  # the state did carry across invokes
    assert ref[0]["steps"] == 22


def test_tf_streaming_conv():
    """A streaming 1-D convolution: the state is the last K-1 frames (a tf.Variable with a
    non-zero initial value); each call convolves state ++ x and keeps the new tail."""
    t, c = 5, 4
    data = tf_file("stream")
    assert "CONV_2D" in ops_of(data)
    feeds = [{"x": RNG.standard_normal((1, t, c)).astype(np.float32)} for _ in range(STEPS)]
    check_stateful(data, feeds, signature=True)


# ============================================================================ written files


def var(sg, name, container=""):
    """A VAR_HANDLE for `name` in subgraph `sg`; returns the handle tensor."""
    h = sg.add_tensor(f"h_{name}", [], "resource")
    sg.add_operator("VAR_HANDLE", [], [h], options=dict(container=container, shared_name=name))
    return h


def counter_model(*, init_value=(1.0, 2.0, 3.0), calls=1, init_index=1, second_init=False):
    """main: CALL_ONCE(init) [x calls]; v = read(acc) + x; assign(acc, v); y = read(acc).
    init: assign(acc, init_value). With second_init, a second init subgraph assigns another
    variable that main also reads (out z)."""
    w = ModelWriter()
    main, init = w.add_subgraph("main"), w.add_subgraph("init")
    n = len(init_value)
    x = main.add_tensor("x", [n], "float32")
    for _ in range(calls):
        main.add_operator("CALL_ONCE", [], [], options=dict(init_subgraph_index=init_index))
    h = var(main, "acc")
    r = main.add_tensor("r", [n], "float32")
    s = main.add_tensor("s", [n], "float32")
    y = main.add_tensor("y", [n], "float32")
    main.add_operator("READ_VARIABLE", [h], [r])
    main.add_operator("ADD", [r, x], [s])
    main.add_operator("ASSIGN_VARIABLE", [h, s], [])
    for _ in range(calls - 1):  # runs again mid-graph: must not re-initialise
        main.add_operator("CALL_ONCE", [], [], options=dict(init_subgraph_index=init_index))
    main.add_operator("READ_VARIABLE", [h], [y])
    outs = [y]
    if second_init:
        init2 = w.add_subgraph("init2")
        main.add_operator("CALL_ONCE", [], [], options=dict(init_subgraph_index=2))
        z = main.add_tensor("z", [2], "int32")
        main.add_operator("READ_VARIABLE", [var(main, "k", container="c")], [z])
        init2.add_operator(
            "ASSIGN_VARIABLE",
            [var(init2, "k", container="c"), init2.add_constant("k0", np.array([5, -6], np.int32))],
            [],
        )
        init2.set_inputs([])
        init2.set_outputs([])
        outs.append(z)
    init.add_operator(
        "ASSIGN_VARIABLE",
        [var(init, "acc"), init.add_constant("v0", np.array(init_value, np.float32))],
        [],
    )
    init.set_inputs([])
    init.set_outputs([])
    main.set_inputs([x])
    main.set_outputs(outs)
    return w.finish()


def step_feeds(n=3):
    return [[RNG.standard_normal(n).astype(np.float32)] for _ in range(STEPS)]


def test_variable_shared_across_subgraphs():
    feeds = step_feeds()
    ref = check_stateful(counter_model(), feeds)
    expect = np.array([1.0, 2.0, 3.0], np.float32) + np.cumsum([f[0] for f in feeds], axis=0)
    np.testing.assert_allclose(ref[-1][0], expect[-1], rtol=1e-6)


def test_two_call_once_nodes_run_the_init_subgraph_once():
    check_stateful(counter_model(calls=2), step_feeds())


def test_two_init_subgraphs_and_containers():
    check_stateful(counter_model(second_init=True), step_feeds())


def test_reset_variables_matches_a_fresh_interpreter_mid_sequence():
    data = counter_model()
    feeds = step_feeds()
    m = wick.load(data)
    wick_steps(m, feeds[:3])
    m.reset_variables()
    m.reset_variables()  # twice is the same as once
    compare_steps(wick_steps(m, feeds), litert_steps(data, feeds), "after a mid-sequence reset")


def shape_model(out_dynamic=True):
    """main: assign(v, x); y = read(v). x has a dynamic length; y's declared shape is dynamic
    (follows the variable) or static [3]."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [None], "float32")
    h = var(main, "v")
    y = main.add_tensor("y", [None] if out_dynamic else [3], "float32")
    main.add_operator("ASSIGN_VARIABLE", [h, x], [])
    main.add_operator("READ_VARIABLE", [h], [y])
    main.set_inputs([x])
    main.set_outputs([y])
    return w.finish()


def test_assignment_changes_the_variable_shape():
    """A later assignment may change the variable's shape (LiteRT's ResourceVariable::AssignFrom
    takes the value's dims and bytes), and a READ_VARIABLE whose output shape is dynamic follows
    it. Compared with LiteRT's default resolver only: its reference resolver (measured, ai-edge-
    litert in this venv) keeps the first shape and overwrites a prefix ([20, 21, 12] after
    [10..14] then [20, 21])."""
    data = shape_model()
    feeds = [[np.arange(n, dtype=np.float32) + 10 * n] for n in (3, 5, 5, 2, 0, 4)]
    ref = check_stateful(data, feeds, litert_reference=False)
    assert [r[0].shape for r in ref] == [(3,), (5,), (5,), (2,), (0,), (4,)]


def test_static_read_of_a_reshaped_variable_is_refused():
    """wick sizes a READ_VARIABLE output that the file declares static at prepare (so the nodes
    after it are planned once); a variable of another shape is then an error naming both
    shapes (LiteRT would resize the output)."""
    m = wick.load(shape_model(out_dynamic=False))
    np.testing.assert_array_equal(m(np.arange(3, dtype=np.float32))[0], [0, 1, 2])
    with pytest.raises(wick.WickError) as e:
        m(np.arange(5, dtype=np.float32))
    assert INVALID_INPUT in str(e.value)
    assert 'variable "v" holds shape [5], but the file declares the output [3]' in str(e.value)


def test_variable_memory_counts_against_the_limit():
    """ASSIGN_VARIABLE's storage is the interpreter's memory: with a cap that just fits
    prepare, storing a 4 MiB value fails with "out of memory" and leaves the model usable."""
    n = 1 << 20
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [n], "float32")
    y = main.add_tensor("y", [n], "float32")
    h = var(main, "big")
    main.add_operator("ABS", [x], [y])
    main.add_operator("ASSIGN_VARIABLE", [h, y], [])
    main.set_inputs([x])
    main.set_outputs([y])
    data = w.finish()
    feed = np.ones(n, np.float32)
    wick.load(data)(feed)  # no cap: fine
    limit = 8 << 20  # the arena holds x and y: 8 MiB
    while True:
        try:
            m = wick.load(data, memory_limit=limit)
            break
        except wick.WickError as e:
            assert "out of memory" in str(e)
            limit += 64 << 10
    with pytest.raises(wick.WickError) as e:
        m(feed)
    assert "out of memory" in str(e.value) and 'variable "big"' in str(e.value)


# ============================================================================ malformed


def refuses(data, feeds, match, status=MALFORMED):
    with pytest.raises(wick.WickError) as e:
        wick.load(data)(*feeds)
    assert status in str(e.value), str(e.value)
    assert match in str(e.value), str(e.value)


def litert_refuses(data, feeds):
    """LiteRT's reference resolver fails too (at load, allocate or invoke). (Its default
    resolver, measured on a READ_VARIABLE of a variable never assigned feeding an ADD, returns
    uninitialized memory instead of failing.)"""
    with pytest.raises((RuntimeError, ValueError)):
        litert_steps(data, [feeds], reference=True)


ZERO3 = [np.zeros(3, np.float32)]


def test_call_once_subgraph_out_of_range():
    refuses(counter_model(init_index=5), ZERO3, "(CALL_ONCE) refers to subgraph 5 of 2")


def test_call_once_negative_subgraph():
    refuses(counter_model(init_index=-1), ZERO3, "CALL_ONCE (operator 0): has no init subgraph")


def test_call_once_self_reference():
    refuses(counter_model(init_index=0), ZERO3, "subgraph 0 calls itself (a cycle)")


def test_call_once_init_subgraph_with_inputs():
    """LiteRT requires an init subgraph with no inputs and no outputs; so does wick."""
    w = ModelWriter()
    main, init = w.add_subgraph("main"), w.add_subgraph("init")
    x = main.add_tensor("x", [3], "float32")
    y = main.add_tensor("y", [3], "float32")
    main.add_operator("CALL_ONCE", [], [], options=dict(init_subgraph_index=1))
    main.add_operator("ABS", [x], [y])
    main.set_inputs([x])
    main.set_outputs([y])
    a = init.add_tensor("a", [3], "float32")
    b = init.add_tensor("b", [3], "float32")
    init.add_operator("ABS", [a], [b])
    init.set_inputs([a])
    init.set_outputs([b])
    data = w.finish()
    refuses(data, ZERO3, "init subgraph 1 takes 1 inputs; the node passes 0")


def test_read_before_assignment():
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [3], "float32")
    y = main.add_tensor("y", [3], "float32")
    z = main.add_tensor("z", [3], "float32")
    main.add_operator("READ_VARIABLE", [var(main, "never")], [y])
    main.add_operator("ADD", [x, y], [z])
    main.set_inputs([x])
    main.set_outputs([z])
    data = w.finish()
    litert_refuses(data, ZERO3)
    refuses(
        data,
        ZERO3,
        'READ_VARIABLE (operator 1): variable "never" is read before any assignment',
        status=INVALID_INPUT,
    )
    m = wick.load(data)  # and the interpreter is still usable afterwards
    for _ in range(2):
        with pytest.raises(wick.WickError):
            m(*ZERO3)


def test_read_with_another_type():
    """The variable holds float32, the READ_VARIABLE output is int32 (LiteRT: types differ)."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [3], "float32")
    y = main.add_tensor("y", [3], "int32")
    h = var(main, "v")
    main.add_operator("ASSIGN_VARIABLE", [h, x], [])
    main.add_operator("READ_VARIABLE", [h], [y])
    main.set_inputs([x])
    main.set_outputs([y])
    data = w.finish()
    litert_refuses(data, ZERO3)
    refuses(data, ZERO3, 'variable "v" holds float32, but the output is int32', INVALID_INPUT)


def wrong_model(kind):
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [3], "float32")
    y = main.add_tensor("y", [3], "float32")
    if kind == "read_float_handle":
        main.add_operator("READ_VARIABLE", [x], [y])
    elif kind == "handle_not_resource":
        h = main.add_tensor("h", [], "int32")
        main.add_operator("VAR_HANDLE", [], [h], options=dict(shared_name="v"))
        main.add_operator("ABS", [x], [y])
    elif kind == "assign_one_input":
        main.add_operator("ASSIGN_VARIABLE", [var(main, "v")], [])
        main.add_operator("ABS", [x], [y])
    elif kind == "assign_with_output":
        z = main.add_tensor("z", [3], "float32")
        main.add_operator("ASSIGN_VARIABLE", [var(main, "v"), x], [z])
        main.add_operator("ABS", [z], [y])
    elif kind == "handle_with_input":
        h = main.add_tensor("h", [], "resource")
        main.add_operator("VAR_HANDLE", [x], [h], options=dict(shared_name="v"))
        main.add_operator("ABS", [x], [y])
    elif kind == "constant_handle":
        h = main.add_constant("h", np.array(0, np.int32))
        main._tensors[h].dtype = "resource"  # a handle the file supplies as data
        main.add_operator("READ_VARIABLE", [h], [y])
    elif kind == "variable_handle":
        h = main.add_tensor("h", [], "resource", is_variable=True)
        main.add_operator("READ_VARIABLE", [h], [y])
    elif kind == "handle_of_two":
        h = main.add_tensor("h", [2], "resource")
        main.add_operator("READ_VARIABLE", [h], [y])
        main.set_inputs([x, h])
        main.set_outputs([y])
        return w.finish()
    elif kind == "call_once_with_input":
        main.add_operator("CALL_ONCE", [x], [], options=dict(init_subgraph_index=1))
        main.add_operator("ABS", [x], [y])
        w.add_subgraph("init")
    main.set_inputs([x])
    main.set_outputs([y])
    return w.finish()


@pytest.mark.parametrize(
    "kind, match",
    [
        ("read_float_handle", "input 0 must be a resource handle (from VAR_HANDLE), not float32"),
        ("handle_not_resource", "VAR_HANDLE (operator 0): output 0 must be a resource tensor"),
        ("assign_one_input", "ASSIGN_VARIABLE (operator 1): takes 2..2 inputs, the file gives 1"),
        ("assign_with_output", "has 0 outputs, the file gives 1"),
        ("handle_with_input", "VAR_HANDLE (operator 0): takes 0..0 inputs, the file gives 1"),
        ("constant_handle", "input 0 is a constant or variable resource tensor"),
        ("variable_handle", "input 0 is a constant or variable resource tensor"),
        ("handle_of_two", "input 0 (a resource handle) holds 2 elements, not 1"),
        ("call_once_with_input", "CALL_ONCE (operator 0): takes 0..0 inputs, the file gives 1"),
    ],
)
def test_malformed(kind, match):
    data = wrong_model(kind)
    feeds = [np.zeros(3, np.float32)]
    if kind == "handle_of_two":
        feeds.append(np.zeros(2, np.int32))
    refuses(data, feeds, match)


@pytest.mark.parametrize("integer", [False, True], ids=["float32", "int8"])
def test_reset_zeroes_variable_tensors(integer):
    """reset_variables() also returns variable tensors (SVDF state here) to zero: every step
    before and after equals LiteRT's reference kernels with reset_all_variables() at the same
    point (for variable tensors the two resets agree)."""
    from tests.python.ops.test_quantized_ops import svdf_model

    data = svdf_model(integer, activation="RELU")
    rng = np.random.default_rng(11)
    feeds = [
        [rng.integers(-128, 128, (2, 6)).astype(np.int8)]
        if integer
        else [rng.standard_normal((2, 6)).astype(np.float32)]
        for _ in range(6)
    ]
    lite = make_interpreter(data, reference=True)
    lite.allocate_tensors()
    i_in, i_out = lite.get_input_details()[0]["index"], lite.get_output_details()[0]["index"]
    m = wick.load(data)
    for step, f in enumerate(feeds):
        if step == 3:
            lite.reset_all_variables()
            m.reset_variables()
        lite.set_tensor(i_in, f[0])
        lite.invoke()
        compare(m(*f), [lite.get_tensor(i_out)], what=f"step {step}")


def test_empty_read_before_assignment_still_fails():
    """A READ_VARIABLE whose declared output is empty still checks its variable (an op with
    empty outputs is otherwise skipped)."""
    w = ModelWriter()
    main = w.add_subgraph("main")
    x = main.add_tensor("x", [3], "float32")
    y = main.add_tensor("y", [0], "float32")
    z = main.add_tensor("z", [3], "float32")
    main.add_operator("READ_VARIABLE", [var(main, "never")], [y])
    main.add_operator("ABS", [x], [z])
    main.set_inputs([x])
    main.set_outputs([z, y])
    refuses(w.finish(), ZERO3, 'variable "never" is read before any assignment', INVALID_INPUT)
