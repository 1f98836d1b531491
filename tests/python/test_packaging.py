"""The package as `pip install wick` ships it (pyproject.toml): one version in the three places
that state it (the binding refuses a libwick of another), torch only in the ``convert`` extra,
and the runtime side usable with torch absent — ``import wick``, ``wick.load``, the ``wick``
command's C and graph commands — while the converter says how to get torch (wick/_optional.py).
The wheel itself is built, installed into a fresh environment and run by
tests/install/wheel_smoke.sh (`make test-wheel`, in .ci/run)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import wick

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_pyproject_cmake_and_package_state_one_version():
    cmake = re.search(r"project\(wick VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    assert cmake, "CMakeLists.txt: project(wick VERSION ...) not found"
    assert _pyproject()["project"]["version"] == cmake.group(1) == wick.__version__


def test_torch_is_only_in_the_convert_extra_pinned_as_in_requirements():
    project = _pyproject()["project"]
    assert not [d for d in project["dependencies"] if d.startswith("torch")]
    pins = dict(
        line.split("==")
        for line in (ROOT / "requirements-dev.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    pins.update(
        line.split("==")
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    extra = dict(d.split("==") for d in project["optional-dependencies"]["convert"])
    assert extra["torch"] == pins["torch"] and extra["torchao"] == pins["torchao"], (extra, pins)


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


def test_wick_library_overrides_the_lookup(monkeypatch, tmp_path):
    from wick import runtime

    monkeypatch.setenv("WICK_LIBRARY", str(tmp_path / "libwick.so"))
    assert runtime.library_path() == tmp_path / "libwick.so"
    monkeypatch.delenv("WICK_LIBRARY")
    found = runtime.library_path()  # the package's wick/_lib/, else the checkout's build/
    package = Path(runtime.__file__).resolve().parent
    assert found in (package / "_lib" / "libwick.so", package.parents[1] / "build" / "libwick.so")
