"""TensorFlow's converter in a child process, for tests that need a file TensorFlow wrote.

TensorFlow and PyTorch loaded into one process crash it: after a test imported TensorFlow, a later
``torch.export`` segfaults importing triton (``pytest tests/python/ops/test_resource_variables.py
tests/python/runtime/test_layer_norm_fusion.py`` crashed every time). So a test hands a script to
:func:`tf_convert`, which runs it in a fresh interpreter and returns the bytes it wrote.

The script gets the output path as ``sys.argv[2]`` and a name as ``sys.argv[1]`` (one script can
hold several models and pick one by name). Without TensorFlow the test is skipped, with that
reason.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


def tf_convert(script: str, name: str = "", timeout: float = 600) -> bytes:
    """Runs ``script`` in a child Python with ``argv = [name, out_path]`` and returns the file it
    wrote at ``out_path``; a skip when TensorFlow is not installed."""
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("tensorflow is not installed: cannot make TensorFlow-converted files")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "m.tflite"
        p = subprocess.run(
            [sys.executable, "-c", script, name, str(out)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert p.returncode == 0, f"TensorFlow's converter failed:\n{p.stderr[-3000:]}"
        return out.read_bytes()
