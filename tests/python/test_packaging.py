"""The package without its optional dependencies: the runtime side usable with torch absent —
``import wick``, ``wick.load``, the ``wick`` command's C and graph commands — while the
converter says how to get torch (wick/_optional.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Runs in a child interpreter where `import torch` fails as it does where torch is not
# installed (None in sys.modules makes the import raise ModuleNotFoundError).
_WITHOUT_TORCH = textwrap.dedent(
    """
    import sys
    for name in ("torch", "torchao", "torchvision"):
        sys.modules[name] = None
    import numpy as np
    import wick
    from wick.cli import main
    from wick.tflite.writer import ModelWriter

    w = ModelWriter(description="no torch")
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [2, 3], "float32")
    y = sg.add_tensor("y", [2, 3], "float32")
    sg.add_operator("RELU", [x], [y])
    sg.set_inputs([x]); sg.set_outputs([y])
    w.add_signature("serving_default", sg, inputs={"x": x}, outputs={"y": y})
    path = sys.argv[1] + "/relu.tflite"
    open(path, "wb").write(w.finish())

    (got,) = wick.load(path)(np.array([[-1, 0, 1], [2, -3, 4]], np.float32))
    assert got.tolist() == [[0, 0, 1], [2, 0, 4]], got
    assert main(["graph", path, "-o", sys.argv[1] + "/relu.html"]) == 0
    for call in (lambda: wick.convert(None, ()), lambda: wick.quantize(None, ())):
        try:
            call()
        except ModuleNotFoundError as e:
            assert e.name == "torch" and 'pip install "wick[convert]"' in str(e), e
        else:
            raise AssertionError("ran without torch")
    assert main(["convert", "torchvision.models:mobilenet_v2", "--input", "1x3x8x8"]) == 1
    assert main(["demo"]) == 1
    print("ok")
    """
)


def test_runtime_binding_and_commands_work_without_torch(tmp_path):
    p = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout + p.stderr
    assert p.stderr.count('pip install "wick[convert]"') == 2, p.stderr  # convert, demo
    assert "Traceback" not in p.stderr, p.stderr


def test_the_c_commands_need_no_torch(tmp_path):
    """`wick inspect` execs the C tool next to the library before anything imports torch."""
    code = "import sys; sys.modules['torch'] = None; from wick.cli import main; main(['version'])"
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert p.returncode == 0 and p.stdout.startswith("wick "), p.stdout + p.stderr
