"""The Python binding: loading from bytes and paths, errors carrying the C
message, inputs by name, resizing, several signatures in one file."""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter


def two_signature_model() -> bytes:
    """`add` computes x + y; `mul` computes x * y, in separate subgraphs."""
    w = ModelWriter(description="two signatures")
    for key, op in (("add", "ADD"), ("mul", "MUL")):
        sg = w.add_subgraph(name=key)
        x = sg.add_tensor("x", [2, 3], "float32")
        y = sg.add_tensor("y", [2, 3], "float32")
        z = sg.add_tensor("z", [2, 3], "float32")
        sg.add_operator(op, [x, y], [z], options=dict(fused_activation_function="NONE"))
        sg.set_inputs([x, y])
        sg.set_outputs([z])
        w.add_signature(key, sg, inputs={"lhs": x, "rhs": y}, outputs={"out": z})
    return w.finish()


def test_signatures_run_their_own_subgraph_and_match_litert():
    data = two_signature_model()
    m = wick.load(data)
    assert m.signatures == ["add", "mul"]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2.0, np.float32)
    for key, want in (("add", a + b), ("mul", a * b)):
        runner = m.signature(key)
        assert [d.name for d in runner.inputs] == ["lhs", "rhs"]
        got = runner(lhs=a, rhs=b)[0]
        np.testing.assert_array_equal(got, want)
        ref = run_litert(data, {"lhs": a, "rhs": b}, signature=key)
        np.testing.assert_array_equal(got, ref[0])


def test_load_from_path_equals_load_from_bytes(tmp_path):
    data = two_signature_model()
    p = tmp_path / "m.tflite"
    p.write_bytes(data)
    a = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(wick.load(p)(a, a)[0], wick.load(data)(a, a)[0])


@pytest.mark.parametrize(
    "blob, words",
    [
        (b"", "too short"),
        (b"\x08\x00\x00\x00TFL3", "out of bounds"),
        (b"\x0c\x00\x00\x00XXXX" + bytes(16), 'not "TFL3"'),
    ],
)
def test_malformed_bytes_raise_with_the_c_message(blob, words):
    with pytest.raises(wick.WickError) as e:
        wick.load(blob)
    assert e.value.status == "malformed model"
    assert words in str(e.value)


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(wick.WickError) as e:
        wick.load(tmp_path / "nope.tflite")
    assert e.value.status == "i/o error"


def test_wrong_inputs_raise_type_errors():
    m = wick.load(two_signature_model())
    a = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match="missing inputs"):
        m(a)
    with pytest.raises(TypeError, match="no input named"):
        m(a, nope=a)


def test_resizing_an_input_reprepares_the_graph():
    """A dynamic batch dimension (shape_signature -1) can be resized at call time."""
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [1, 4], "float32", shape_signature=[-1, 4])
    k = sg.add_constant("k", np.arange(4, dtype=np.float32))
    y = sg.add_tensor("y", [1, 4], "float32", shape_signature=[-1, 4])
    sg.add_operator("MUL", [x, k], [y], options=dict(fused_activation_function="NONE"))
    sg.set_inputs([x])
    sg.set_outputs([y])
    m = wick.load(w.finish())
    for batch in (1, 5, 2):
        a = np.random.default_rng(batch).standard_normal((batch, 4)).astype(np.float32)
        np.testing.assert_array_equal(m(a)[0], a * np.arange(4, dtype=np.float32))
    with pytest.raises(wick.WickError, match="fixed"):
        m(np.ones((2, 5), np.float32))


def dynamic_batch_embedding(seq=16, vocab=100, width=8):
    """The start of a converted BERT with a dynamic batch: ids and mask are int64 [-1, seq];
    CAST(ids) -> int32 indices for GATHER(word table), SHAPE(ids) (a second reader of ids) ->
    FILL 0 -> GATHER(type table), ADD, then times CAST(mask) as float [-1, seq, 1]."""
    rng = np.random.default_rng(11)
    w = ModelWriter()
    sg = w.add_subgraph()
    dyn = [-1, seq]
    ids = sg.add_tensor("ids", [1, seq], np.int64, shape_signature=dyn)
    mask = sg.add_tensor("mask", [1, seq], np.int64, shape_signature=dyn)
    word_table = rng.standard_normal((vocab, width)).astype(np.float32)
    type_table = rng.standard_normal((2, width)).astype(np.float32)
    words = sg.add_constant("words", word_table)
    types = sg.add_constant("types", type_table)
    zero = sg.add_constant("zero", np.array(0, np.int32))
    shape3 = sg.add_constant("shape3", np.array([-1, seq, 1], np.int32))
    emb_shape = [1, seq, width]
    emb_sig = [-1, seq, width]
    idx = sg.add_tensor("idx", [1, seq], np.int32, shape_signature=dyn)
    emb = sg.add_tensor("emb", emb_shape, np.float32, shape_signature=emb_sig)
    shp = sg.add_tensor("shp", [2], np.int32)
    zeros = sg.add_tensor("zeros", [1, seq], np.int32, shape_signature=dyn)
    tok = sg.add_tensor("tok", emb_shape, np.float32, shape_signature=emb_sig)
    summed = sg.add_tensor("summed", emb_shape, np.float32, shape_signature=emb_sig)
    maskf = sg.add_tensor("maskf", [1, seq], np.float32, shape_signature=dyn)
    mask3 = sg.add_tensor("mask3", [1, seq, 1], np.float32, shape_signature=[-1, seq, 1])
    y = sg.add_tensor("y", emb_shape, np.float32, shape_signature=emb_sig)
    none = dict(fused_activation_function="NONE")
    sg.add_operator("CAST", [ids], [idx])
    sg.add_operator("GATHER", [words, idx], [emb], options=dict(axis=0))
    sg.add_operator("SHAPE", [ids], [shp], options=dict(out_type="int32"))
    sg.add_operator("FILL", [shp, zero], [zeros])
    sg.add_operator("GATHER", [types, zeros], [tok], options=dict(axis=0))
    sg.add_operator("ADD", [emb, tok], [summed], options=none)
    sg.add_operator("CAST", [mask], [maskf])
    sg.add_operator("RESHAPE", [maskf, shape3], [mask3])
    sg.add_operator("MUL", [summed, mask3], [y], options=none)
    sg.set_inputs([ids, mask])
    sg.set_outputs([y])
    return w.finish(), word_table, type_table


@pytest.mark.parametrize("mode", ["optimized", "no_in_place", "reference"])
def test_resizing_one_input_keeps_the_others(mode, monkeypatch):
    """Each call resizes and writes the inputs in turn, and every resize re-plans the arena the
    inputs live in: ids written before mask is resized must survive it (src/core/interpreter.c,
    save_inputs). They did not, on any kernels: with in place the new plan moved ids, so batch 2
    of a converted BERT gathered garbage indices; elsewhere it passed only while the new arena
    happened to hold the old bytes at the same place. A fresh interpreter per batch size and
    one interpreter going through several sizes; numpy is the reference (exact: gathers and
    a multiply by 0 or 1)."""
    monkeypatch.setenv("WICK_NO_IN_PLACE", "1" if mode == "no_in_place" else "0")
    data, words, types = dynamic_batch_embedding()
    kw = {"reference": True} if mode == "reference" else {}
    shared = wick.load(data, **kw)
    for batch in (2, 3, 1, 4, 2):
        rng = np.random.default_rng(batch)
        ids = rng.integers(0, 100, (batch, 16)).astype(np.int64)
        mask = (rng.random((batch, 16)) < 0.7).astype(np.int64)
        want = (words[ids] + types[0]) * mask[..., None].astype(np.float32)
        for m in (wick.load(data, **kw), shared):
            np.testing.assert_array_equal(m(ids, mask)[0], want, err_msg=f"batch {batch}")


def test_memory_cap_fails_cleanly_and_a_sufficient_cap_works():
    from tests.python.oracles import keras_models

    path = keras_models.get_model_path("tiny_cnn")
    with pytest.raises(wick.WickError) as e:
        wick.load(path, memory_limit=4096)
    assert e.value.status == "out of memory"
    m = wick.load(path, memory_limit=16 << 20)
    x = np.zeros(m.inputs[0].shape, np.float32)
    np.testing.assert_array_equal(m(x)[0], wick.load(path)(x)[0])


def test_memory_cap_applies_to_the_load():
    """memory_limit caps the load itself (wick_model_options.memory_limit_bytes): a cap
    too small for the model's decoded tables fails in load, before any interpreter, with
    a message naming the cap, from bytes and from a path."""
    from tests.python.oracles import keras_models

    path = keras_models.get_model_path("tiny_cnn")
    data = path.read_bytes()
    for source in (path, data):
        with pytest.raises(wick.WickError, match=r"memory_limit_bytes \(1024\)") as e:
            wick.Runtime(source, memory_limit=1024)
        assert e.value.status == "out of memory"


def test_inputs_keep_their_values_across_invokes():
    """wick.h: "Inputs keep their values" — a second invoke without new inputs gives the same
    outputs. In this chain x -> a -> b -> y, b's lifetime does not overlap x's last read, so
    an arena planner that ends the input's lifetime there would place b over x."""
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    k = sg.add_constant("k", np.full(64, 0.5, np.float32))
    x = sg.add_tensor("x", [64], "float32")
    a = sg.add_tensor("a", [64], "float32")
    b = sg.add_tensor("b", [64], "float32")
    y = sg.add_tensor("y", [64], "float32")
    none = dict(fused_activation_function="NONE")
    sg.add_operator("ADD", [x, k], [a], options=none)
    sg.add_operator("MUL", [a, k], [b], options=none)
    sg.add_operator("ADD", [b, k], [y], options=none)
    sg.set_inputs([x])
    sg.set_outputs([y])
    m = wick.load(w.finish())
    runner = m.signature(None)
    v = np.arange(64, dtype=np.float32)
    first = runner(v)[0]
    np.testing.assert_array_equal(first, (v + 0.5) * 0.5 + 0.5)
    np.testing.assert_array_equal(runner.invoke()[0], first)


@pytest.mark.parametrize(
    "c_name, binding",
    [("wick_model_options", "_ModelOptions"), ("wick_interpreter_options", "_InterpreterOptions")],
)
def test_option_structs_mirror_the_header(c_name, binding):
    """The binding's ctypes structs list the header's fields in order (struct_size first), so
    the struct_size the binding sends is the size the library expects from this wick.h."""
    import re
    from pathlib import Path

    from wick import runtime

    header = (Path(__file__).parents[3] / "include" / "wick" / "wick.h").read_text()
    body = re.search(rf"typedef struct {c_name} \{{(.*?)\}} {c_name};", header, re.S)
    assert body, c_name
    text = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
    fields = re.findall(r"(\w+)\s*(?:\([^)]*\))?;", text)
    ours = [f[0] for f in getattr(runtime, binding)._fields_]
    assert ours == fields, (ours, fields)
    assert ours[0] == "struct_size"


def test_a_library_of_another_version_is_refused_with_both_versions(monkeypatch):
    """The ctypes structs mirror one wick.h; a libwick of another version is not misread."""
    from wick import runtime

    monkeypatch.setattr(runtime, "_lib", None)
    import wick as w

    monkeypatch.setattr(w, "__version__", "9.9.9")
    with pytest.raises(OSError, match=r"libwick 0\.1\.0, but this wick package is 9\.9\.9"):
        runtime._library()
