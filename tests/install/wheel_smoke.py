"""The Python half of wheel_smoke.sh, run by the fresh environment's interpreter after
``pip install wick-*.whl`` (no torch): the installed package loads its own libwick, writes a
small model with wick.tflite.writer (numpy + flatbuffers only), runs it on the default and the
reference kernels against a numpy reference, and refuses the converter with a message naming
``pip install "wick[convert]"``. Writes the model to the path given (the shell half runs the
``wick`` command on it).

    python wheel_smoke.py OUT.tflite
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import wick
from wick.runtime import library_path
from wick.tflite.writer import ModelWriter


def conv_model(kernel: np.ndarray, bias: np.ndarray) -> bytes:
    """x [1, 8, 8, 3] -> CONV_2D 3x3 SAME (+ bias, RELU) -> y [1, 8, 8, 4]."""
    w = ModelWriter(description="wheel smoke")
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [1, 8, 8, 3], "float32")
    k = sg.add_constant("k", kernel)
    b = sg.add_constant("b", bias)
    y = sg.add_tensor("y", [1, 8, 8, 4], "float32")
    sg.add_operator(
        "CONV_2D",
        [x, k, b],
        [y],
        options=dict(padding="SAME", stride_w=1, stride_h=1, fused_activation_function="RELU"),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    w.add_signature("serving_default", sg, inputs={"x": x}, outputs={"y": y})
    return w.finish()


def conv_reference(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """NHWC convolution, OHWI kernel, stride 1, SAME padding, then RELU (float64)."""
    kh, kw = kernel.shape[1:3]
    padded = np.pad(x.astype(np.float64), ((0, 0), (kh // 2,) * 2, (kw // 2,) * 2, (0, 0)))
    out = np.zeros(x.shape[:3] + (kernel.shape[0],))
    for i in range(kh):
        for j in range(kw):
            window = padded[:, i : i + x.shape[1], j : j + x.shape[2], :]
            out += np.einsum("nhwc,oc->nhwo", window, kernel[:, i, j, :].astype(np.float64))
    return np.maximum(out + bias, 0.0)


def main() -> int:
    out = Path(sys.argv[1])
    lib = library_path()
    package = Path(wick.__file__).resolve().parent
    assert lib.resolve() == package / "_lib" / "libwick.so", f"loaded {lib}, not the wheel's"
    assert (package / "_lib" / "wick").is_file(), "the wheel carries no C `wick` tool"

    rng = np.random.default_rng(0)
    kernel = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    out.write_bytes(conv_model(kernel, bias))

    x = rng.standard_normal((1, 8, 8, 3)).astype(np.float32)
    want = conv_reference(x, kernel, bias)
    for reference in (False, True):
        m = wick.load(out, reference=reference)
        assert [t.name for t in m.inputs] == ["x"] and [t.name for t in m.outputs] == ["y"]
        (got,) = m(x)
        assert got.shape == (1, 8, 8, 4) and got.dtype == np.float32, (got.shape, got.dtype)
        err = float(np.max(np.abs(got - want)))
        assert err < 1e-4, f"reference={reference}: max |wick - numpy| = {err}"

    try:
        wick.convert(None, ())
    except ModuleNotFoundError as e:
        assert 'pip install "wick[convert]"' in str(e), str(e)
    else:
        raise AssertionError("wick.convert ran without torch")
    assert "torch" not in sys.modules, "something imported torch"
    print(f"wheel smoke (python): wick {wick.__version__} from {lib}: load + run ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
