"""`wick quantize` on the command line (python/wick/cli.py): a factory's model quantized with
calibration batches, the plan printed with --report, the file written; it runs on wick
bit-exact with LiteRT's reference kernels (in a child process), and bad requests are refused
with a usage error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import wick
from tests.python.oracles import litert as litert_oracle

REPO = Path(__file__).resolve().parents[3]


def small_cnn():
    """The factory the CLI imports: a depthwise-separable block with an SE gate and a head."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.pw = torch.nn.Conv2d(16, 24, 1)
            self.se = torch.nn.Linear(24, 24)
            self.head = torch.nn.Linear(24, 10)

        def forward(self, x):
            y = torch.relu(self.stem(x))
            y = torch.nn.functional.hardswish(self.pw(torch.relu(self.dw(y))))
            g = torch.sigmoid(self.se(y.mean((2, 3))))
            return self.head((y * g[:, :, None, None]).mean((2, 3)))

    return Net()


def _cli(*args, check=True):
    return subprocess.run(
        [sys.executable, "-m", "wick.cli", "quantize", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=check,
        timeout=600,
    )


def test_quantize_cli_writes_a_file_that_matches_litert(tmp_path):
    out = tmp_path / "cnn.tflite"
    r = _cli(
        "tests.python.quantize.test_quantize_cli:small_cnn",
        "--input", "1x3x16x16", "--calibration", "4", "--report", "-q", "-o", str(out),
    )  # fmt: skip
    assert out.exists() and "wrote" in r.stdout, r.stdout + r.stderr
    # the per-layer plan names the model's layers and the whole model's cosine
    for layer in ("stem", "dw", "head"):
        assert re.search(rf"^\s*{layer}\s+int8\s", r.stdout, re.M), r.stdout
    assert "whole model: cosine" in r.stdout, r.stdout
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    runner = wick.load(str(out)).signature(None)
    feeds = [x] if runner.inputs[0].dtype == np.float32 else None
    if feeds is None:
        pytest.skip("the file takes integer inputs; this test feeds float")
    got = runner(*feeds)
    ref = litert_oracle.run_litert(out.read_bytes(), feeds, reference=True)
    for g, w in zip(got, ref, strict=True):
        assert np.array_equal(g, w) or np.abs(g - w).max() <= 1e-6 * max(1.0, np.abs(w).max())


@pytest.mark.parametrize(
    "args,message",
    [
        (["--scheme", "int3"], "--scheme must be one of"),
        (["--accuracy-target", "high"], "--accuracy-target takes a cosine"),
        # the old spelling (never in README/docs) is refused with the new name, not taken for
        # wick convert's device --target
        (["--target", "0.99"], "is --accuracy-target"),
        (["--smooth", "strong"], "--smooth takes auto, none or an alpha"),
        (["--smooth", "1.5"], "--smooth alpha must be in [0, 1]"),
    ],
)
def test_quantize_cli_refuses_bad_requests(args, message):
    r = _cli(
        "tests.python.quantize.test_quantize_cli:small_cnn", "--input", "1x3x8x8", *args,
        check=False,
    )  # fmt: skip
    assert r.returncode == 2 and message in r.stderr, r.stderr
