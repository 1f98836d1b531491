"""The LLM kernels of AArch64 run by the cross-built `wick` (`make test-aarch64` builds it in
build-aarch64/) under qemu-aarch64, as whole operators:

* the fused attention (NEON: the in-place 8x8 / 1x8 tiles, src/kernels/neon/gemm.c) on
  test_attention_fusion.py's hand-built models, fused and with WICK_NO_ATTENTION_FUSION=1 (the
  nodes on their own, the packed 8x8 / 1x8 GEMM): the same output bytes at 1 and 3 threads,
  for causal masks, a sliding window and grouped rows; the fused node reads the cache in place
  ("attention in place") where the cache length and the value width are multiples of the
  panel width (8), else packs;
* blockwise int4 FULLY_CONNECTED (src/kernels/neon/q4_blocks.h: the GEMM form for several
  rows, the one-row form "blockwise int4 gemv" for one) on test_fully_connected_int4.py's
  models, with SDOT (qemu's default CPU) and without (QEMU_CPU=cortex-a72: plain NEON), at 1
  and 3 threads: the bytes of the portable path (WICK_FORCE_REFERENCE=1).

qemu's timings mean nothing: nothing here is timed. `make test-aarch64` runs this file after
the cross build; elsewhere it is skipped, with the reason, where qemu-aarch64 or the AArch64
build is missing or older than the C sources."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.python.ops.test_fully_connected_int4 import int4_fc
from tests.python.runtime.test_attention_fusion import attention_model, causal_mask, feeds

ROOT = Path(__file__).resolve().parents[3]
WICK = ROOT / "build-aarch64" / "wick"
SYSROOT = "/usr/aarch64-linux-gnu"


def _why_not_runnable():
    """Why this module cannot run here, or None: qemu missing, no AArch64 build, or a build
    older than the C sources (a stale binary would test yesterday's kernels)."""
    if shutil.which("qemu-aarch64") is None:
        return "needs qemu-aarch64 (Debian: qemu-user)"
    if not WICK.exists():
        return "needs build-aarch64/wick (make test-aarch64 builds it)"
    built = WICK.stat().st_mtime
    newer = [p for p in (ROOT / "src").rglob("*.[ch]") if p.stat().st_mtime > built]
    if newer:
        return f"build-aarch64/wick is older than {newer[0].relative_to(ROOT)} (make test-aarch64)"
    return None


_WHY_NOT = _why_not_runnable()
pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")


def _wick(args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    for name in ("WICK_MAX_ISA", "WICK_FORCE_REFERENCE", "QEMU_CPU"):
        if name not in (env_extra or {}):
            env.pop(name, None)
    cmd = ["qemu-aarch64", "-L", SYSROOT, str(WICK), *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout


def _run(model, inputs, out_dir, threads, env_extra=None):
    args = ["run", str(model), "--threads", str(threads), "--output-dir", str(out_dir)]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    _wick(args, env_extra)
    return {p.name: p.read_bytes() for p in sorted(Path(out_dir).glob("*.npy"))}


# (b, m, d, s, dv): a decode step (3 query rows per kv head), an 8-row tile and a row alone in
# the next, one query row (the one-row kernel), panels of 8 but not 16, and a cache length
# that is not a multiple of 8 (packed)
SHAPES = [
    (3, 3, 64, 512, 64),
    (1, 9, 32, 64, 64),
    (2, 1, 64, 128, 32),
    (2, 12, 16, 40, 8),
    (1, 13, 8, 100, 8),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_neon_attention_in_place_is_bit_identical(shape, tmp_path):
    b, m, d, s, dv = shape
    data, names = attention_model(b, m, d, s, dv)
    model = tmp_path / "attention.tflite"
    model.write_bytes(data)
    profile = _wick(["bench", str(model), "--runs", "1", "--warmup", "0", "--profile"])
    in_place = s % 8 == 0 and dv % 8 == 0
    kernel = "attention in place" if in_place else "attention)"
    assert f"optimized ({kernel}" in profile, profile
    masks = [causal_mask(m, s, s // 2), causal_mask(m, s, s - m, window=17)]
    if m % 3 == 0:
        masks.append(causal_mask(m, s, 5, group=3))
    for i, mask in enumerate(masks):
        feed = feeds(b, m, d, s, dv, mask)
        inputs = {}
        for name in names:
            inputs[name] = tmp_path / f"{name}{i}.npy"
            np.save(inputs[name], feed[name])
        unfused = {"WICK_NO_ATTENTION_FUSION": "1"}
        want = _run(model, inputs, tmp_path / f"unfused{i}", 1, unfused)
        assert want, "no outputs written"
        for threads in (1, 3):
            got = _run(model, inputs, tmp_path / f"fused{i}_{threads}", threads)
            assert got == want, f"mask {i}, {threads} threads: not the unfused nodes' bytes"


@pytest.mark.parametrize(
    "bs, m, n", [(32, 1, 24), (64, 1, 13), (32, 2, 16), (128, 9, 20), (64, 19, 40)]
)
def test_neon_int4_fully_connected_equals_the_portable_path(bs, m, n, tmp_path):
    k = bs * 3
    rng = np.random.default_rng(m * 1000 + n)
    model = tmp_path / "int4.tflite"
    model.write_bytes(
        int4_fc(m, n, k, bs, bias=m % 2 == 1, activation="RELU6" if m == 9 else "NONE")
    )
    x = (rng.standard_normal((m, k)) * 2).astype(np.float32)
    x[0, :3] = [0.0, 40.0, -3.0]  # an outlier: the row's range and zero point move
    inputs = {"x": tmp_path / "x.npy"}
    np.save(inputs["x"], x)
    want = _run(model, inputs, tmp_path / "reference", 1, {"WICK_FORCE_REFERENCE": "1"})
    assert want, "no outputs written"
    # one row: the one-row form wherever eight outputs are left (a last group of fewer takes the
    # block sums)
    kernel = "blockwise int4 gemv" if m == 1 else "blockwise int4)"
    for cpu in ("max", "cortex-a72"):  # with SDOT; without (plain NEON)
        env = {"QEMU_CPU": cpu}
        profile = _wick(["bench", str(model), "--runs", "1", "--warmup", "0", "--profile"], env)
        assert f"optimized ({kernel}" in profile, profile
        for threads in (1, 3):
            got = _run(model, inputs, tmp_path / f"{cpu}_{threads}", threads, env)
            assert got == want, f"{cpu}, {threads} threads: not the portable path's bytes"
