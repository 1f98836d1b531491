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
