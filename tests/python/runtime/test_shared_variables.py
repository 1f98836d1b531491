"""``wick.load(..., shared_variables=True)`` (wick_interpreter_options.share_variables_with):
the signatures of one model, each run by its own interpreter, see one set of resource
variables — as LiteRT's signature runners of one interpreter do — and only when asked."""

import numpy as np
import pytest

import wick
from wick.runtime import WickError
from wick.tflite.writer import ModelWriter


def _write_read_model() -> bytes:
    """Signature "write" stores x[2] in variable "kv"; signature "read" returns it."""
    w = ModelWriter()
    for key in ("write", "read"):
        sg = w.add_subgraph(name=key)
        h = sg.add_tensor("handle", [], "resource")
        sg.add_operator("VAR_HANDLE", [], [h], options=dict(container="", shared_name="kv"))
        v = sg.add_tensor("x" if key == "write" else "v", [2], "float32")
        if key == "write":
            sg.add_operator("ASSIGN_VARIABLE", [h, v], [])
            sg.set_inputs([v])
            sg.set_outputs([])
            w.add_signature(key, sg, inputs={"x": v}, outputs={})
        else:
            sg.add_operator("READ_VARIABLE", [h], [v])
            sg.set_inputs([])
            sg.set_outputs([v])
            w.add_signature(key, sg, inputs={}, outputs={"v": v})
    return w.finish()


def test_signatures_share_variables_only_when_asked():
    data = _write_read_model()
    x = np.asarray([1.5, -2.0], np.float32)

    shared = wick.load(data, signature="write", shared_variables=True)
    shared(x)
    np.testing.assert_array_equal(shared["read"]()[0], x)
    shared.reset_variables()
    with pytest.raises(WickError, match="before any assignment"):
        shared["read"]()

    separate = wick.load(data, signature="write")
    separate(x)
    with pytest.raises(WickError, match="before any assignment"):
        separate["read"]()


def _cache_model(variant: str) -> bytes:
    """Signature "set": variable "c" = x[4, 6]. Signature "step": the LLM cache pattern
    c' = DYNAMIC_UPDATE_SLICE(READ(c), u[1, 6], start); ASSIGN(c, c'); out = RESHAPE(c') twice
    (the planner keeps c' in the variable's own storage). Variants that must keep copy
    semantics: "output" also returns c' itself, "reread" reads c again after the assignment,
    "late" assigns before a second update (row 0) of the same group. Signature "get" reads c."""
    w = ModelWriter()
    for key in ("set", "step", "get"):
        sg = w.add_subgraph(name=key)
        h = sg.add_tensor("handle", [], "resource")
        sg.add_operator("VAR_HANDLE", [], [h], options=dict(container="", shared_name="c"))
        if key == "get":
            v = sg.add_tensor("v", [4, 6], "float32")
            sg.add_operator("READ_VARIABLE", [h], [v])
            sg.set_inputs([])
            sg.set_outputs([v])
            w.add_signature(key, sg, inputs={}, outputs={"v": v})
            continue
        if key == "set":
            x = sg.add_tensor("x", [4, 6], "float32")
            sg.add_operator("ASSIGN_VARIABLE", [h, x], [])
            sg.set_inputs([x])
            sg.set_outputs([])
            w.add_signature(key, sg, inputs={"x": x}, outputs={})
            continue
        u = sg.add_tensor("u", [1, 6], "float32")
        start = sg.add_tensor("start", [2], "int32")
        c = sg.add_tensor("c", [4, 6], "float32")
        y = sg.add_tensor("y", [4, 6], "float32")
        flat = sg.add_tensor("flat", [24], "float32")
        out = sg.add_tensor("out", [48], "float32")
        shape = sg.add_constant("shape", np.asarray([24], np.int32))
        sg.add_operator("READ_VARIABLE", [h], [c])
        sg.add_operator("DYNAMIC_UPDATE_SLICE", [c, u, start], [y])
        last = y
        if variant == "late":
            sg.add_operator("ASSIGN_VARIABLE", [h, y], [])
            last = sg.add_tensor("y2", [4, 6], "float32")
            sg.add_operator(
                "DYNAMIC_UPDATE_SLICE",
                [y, u, shape_zero := sg.add_constant("zero", np.asarray([0, 0], np.int32))],
                [last],
            )
            del shape_zero
        else:
            sg.add_operator("ASSIGN_VARIABLE", [h, y], [])
        sg.add_operator("RESHAPE", [last, shape], [flat], options=dict(new_shape=[24]))
        # a reader that writes elsewhere (an elementwise op would write over the cache in
        # place, which keeps it out of the variable)
        sg.add_operator(
            "CONCATENATION",
            [flat, flat],
            [out],
            options=dict(axis=0, fused_activation_function="NONE"),
        )
        outs = {"out": out}
        if variant == "output":
            outs["y"] = last
        if variant == "reread":
            again = sg.add_tensor("again", [4, 6], "float32")
            sg.add_operator("READ_VARIABLE", [h], [again])
            outs["again"] = again
        sg.set_inputs([u, start])
        sg.set_outputs(list(outs.values()))
        w.add_signature(key, sg, inputs={"u": u, "start": start}, outputs=outs)
    return w.finish()


@pytest.mark.parametrize("variant", ["plain", "output", "reread", "late"])
@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "copies"])
def test_cache_update_in_the_variable(variant, in_place, monkeypatch):
    """The READ -> DYNAMIC_UPDATE_SLICE -> ASSIGN pattern gives what copying gives, step after
    step and across a reset, whether its storage is the variable's own (the planner's choice)
    or not; the shared variable's value is what the steps left."""
    monkeypatch.setenv("WICK_NO_IN_PLACE", "0" if in_place else "1")
    rt = wick.load(_cache_model(variant), signature="set", shared_variables=True)
    rng = np.random.default_rng(3)
    for _ in range(2):  # the second round after a reset
        state = rng.standard_normal((4, 6)).astype(np.float32)
        rt(state)
        for row in (1, 3, 0, 9):  # 9: clamped to the last row, as DYNAMIC_UPDATE_SLICE does
            u = rng.standard_normal((1, 6)).astype(np.float32)
            got = rt["step"](u, np.asarray([row, 0], np.int32))
            state[min(row, 3)] = u[0]
            seen = state.copy()
            if variant == "late":  # the output sees the second update, the variable does not
                seen[0] = u[0]
            np.testing.assert_array_equal(got[0], np.concatenate([seen.reshape(-1)] * 2))
            if variant == "output":
                np.testing.assert_array_equal(got[1], state)
            np.testing.assert_array_equal(rt["get"]()[0], state)
        if variant == "reread":
            np.testing.assert_array_equal(got[1], state)
        rt.reset_variables()
    if variant == "plain" and in_place:  # the cache is not in the arena, unlike "output"'s
        arena = rt["step"].arena_bytes
        other = wick.load(_cache_model("output"), signature="set", shared_variables=True)
        assert arena + 4 * 6 * 4 <= other["step"].arena_bytes, (arena, other["step"].arena_bytes)
