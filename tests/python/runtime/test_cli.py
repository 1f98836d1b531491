"""The `wick` command: inspect, run and bench on a TensorFlow-converted model,
exit statuses, and .npy round trips checked against the Python binding."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import wick
from tests.python.oracles import keras_models

WICK = [sys.executable, "-m", "wick.cli"]


def run(*args, check_rc=None):
    p = subprocess.run([*WICK, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check_rc is not None:
        assert p.returncode == check_rc, p.stdout + p.stderr
    return p


@pytest.fixture(scope="module")
def cnn():
    return keras_models.get_model_path("tiny_cnn")


@pytest.mark.parametrize("cmd", ["inspect", "run", "bench"])
def test_help_exits_zero(cmd):
    p = run(cmd, "--help", check_rc=0)
    assert "usage: wick " + cmd in p.stdout


def test_inspect_lists_io_ops_and_memory(cnn):
    p = run("inspect", cnn, check_rc=0)
    for word in ("serving_default", "CONV_2D", "DEPTHWISE_CONV_2D", "arena", "MACs", "float32"):
        assert word in p.stdout


def test_run_writes_npy_outputs_equal_to_the_binding(cnn, tmp_path):
    m = wick.load(cnn)
    x = np.random.default_rng(0).standard_normal(m.inputs[0].shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    run(
        "run",
        cnn,
        "--input",
        f"{m.inputs[0].name}={tmp_path / 'x.npy'}",
        "--output-dir",
        tmp_path / "out",
        check_rc=0,
    )
    files = sorted((tmp_path / "out").glob("*.npy"))
    assert len(files) == len(m.outputs)
    np.testing.assert_array_equal(np.load(files[0]), m(x)[0])


def test_run_without_inputs_uses_seeded_random_values(cnn, tmp_path):
    run("run", cnn, "--output-dir", tmp_path / "a", "--seed", 3, check_rc=0)
    run("run", cnn, "--output-dir", tmp_path / "b", "--seed", 3, check_rc=0)
    a, b = sorted((tmp_path / "a").glob("*.npy")), sorted((tmp_path / "b").glob("*.npy"))
    np.testing.assert_array_equal(np.load(a[0]), np.load(b[0]))


def test_bench_reports_latency_and_memory(cnn):
    p = run("bench", cnn, "--runs", 3, "--warmup", 1, "--profile", check_rc=0)
    for word in ("median", "p90", "cold start", "peak RSS", "CONV_2D", "slow paths"):
        assert word in p.stdout
    # the kernel column: each operator's path (wick_interpreter_op_kernel), ! on slow ones
    rows = [ln for ln in p.stdout.splitlines() if re.match(r"^\d+\s+CONV_2D\s", ln)]
    assert rows and all(
        re.search(r"\s(optimized|! generic|! reference|unmarked|folded|fused)( \(.*\))?$", ln)
        for ln in rows
    ), rows


def test_threads_flag_reaches_the_runtime_and_keeps_outputs_bit_identical(cnn, tmp_path):
    for n in (1, 3):
        run("run", cnn, "--output-dir", tmp_path / str(n), "--seed", 5, "--threads", n, check_rc=0)
    one, three = sorted((tmp_path / "1").glob("*.npy")), sorted((tmp_path / "3").glob("*.npy"))
    assert one and len(one) == len(three)
    for a, b in zip(one, three, strict=True):
        assert np.load(a).tobytes() == np.load(b).tobytes()
    p = run("bench", cnn, "--runs", 2, "--warmup", 1, "--threads", 2, "--profile", check_rc=0)
    assert re.search(r"^threads\s+2$", p.stdout, re.M) and "per-op min" in p.stdout


def test_malformed_model_exits_one_with_a_message(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x08\x00\x00\x00TFL3")
    p = run("inspect", bad, check_rc=1)
    assert "malformed model" in p.stderr


def test_memory_limit_caps_the_load(cnn):
    p = run("inspect", cnn, "--memory-limit", 1024, check_rc=1)
    assert "out of memory" in p.stderr and "memory_limit_bytes (1024)" in p.stderr
    run("inspect", cnn, "--memory-limit", 64 << 20, check_rc=0)


def test_usage_errors_exit_two(cnn):
    assert run("inspect").returncode == 2
    assert run("run", cnn, "--no-such-flag").returncode == 2
    assert run("frobnicate").returncode == 2
