"""Blockwise int4 FULLY_CONNECTED (TFLite's BlockwiseQuantization, as wick.llm's "int4" writes
it; src/ops/fully_connected.c): several input rows (an LLM's prefill) run the kernel's GEMM form
(src/kernels/q4.h: a group of eight outputs unpacked once, the float steps in the kernel), one
row the one-row form (AVX2, AArch64: the weights as they lie, kernel "blockwise int4 gemv") or the
per-output block sums. Both must give the bytes of the portable path
(WICK_FORCE_REFERENCE=1: the reference block sums and the op's float code) — for blocks of 32
to 256 values, 1 to 64 rows, output counts that are and are not multiples of eight, with and
without bias, with a fused RELU6, at 1 and 3 threads — and agree with LiteRT (XNNPACK's
qd8 x qb4w, whose arithmetic both follow) within float tolerance.
"""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.converter.passes.weights import pack_int4
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(44)


def _has_avx2() -> bool:
    """Whether wick's AVX2 int4 kernel runs here (its one-row form must then be the one used)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    # a cap (src/kernels/cpu.h) at an x86-64 level keeps AVX2; "reference" (or "none") hides it
    if os.environ.get("WICK_MAX_ISA") and os.environ["WICK_MAX_ISA"] not in (
        "avx2",
        "avx512",
        "avx512vnni",
        "avx512amx",
    ):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx2" in line for line in f)
    except OSError:
        return False


_AVX2 = _has_avx2()


def _bf16(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def int4_fc(m, n, k, bs, *, bias=True, activation="NONE"):
    """x [m, k] -> FULLY_CONNECTED with int4 weights [n, k] in blocks of bs (float16 scales
    that bfloat16 represents, as wick.llm stores them)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [m, k], np.float32)
    values = RNG.integers(-8, 8, (n, k)).astype(np.int8)
    scales = _bf16(RNG.uniform(0.001, 0.05, (n, k // bs))).astype(np.float16)
    st = sg.add_constant("scales", scales)
    wt = sg.add_packed_constant(
        "w", [n, k], "int4", pack_int4(values), quant=dict(block_scales=st, block_size=bs)
    )
    ins = [x, wt]
    if bias:
        ins.append(sg.add_constant("b", RNG.standard_normal(n).astype(np.float32)))
    y = sg.add_tensor("y", [m, n], np.float32)
    sg.add_operator("FULLY_CONNECTED", ins, [y], {"fused_activation_function": activation})
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def run(data, x, monkeypatch, num_threads=1, reference=False):
    with monkeypatch.context() as mp:
        if reference:
            mp.setenv("WICK_FORCE_REFERENCE", "1")
        runner = wick.load(data, num_threads=num_threads).signature(None)
        return runner(x)[0], runner.op_kernels()[0]


@pytest.mark.parametrize("bs", [32, 64, 128, 256])
@pytest.mark.parametrize("m, n", [(1, 16), (2, 13), (5, 40), (13, 24), (64, 72)])
def test_int4_fully_connected_equals_the_portable_path(bs, m, n, monkeypatch):
    k = bs * (3 if bs < 256 else 2)
    data = int4_fc(m, n, k, bs, bias=m % 2 == 1, activation="RELU6" if m == 13 else "NONE")
    x = (RNG.standard_normal((m, k)) * 2).astype(np.float32)
    x[0, :3] = [0.0, 40.0, -3.0]  # an outlier: the row's range and zero point move
    want, kind = run(data, x, monkeypatch, reference=True)
    assert kind == ("generic", "blockwise int4"), kind
    for threads in (1, 3):
        got, kind = run(data, x, monkeypatch, num_threads=threads)
        # one row runs the kernel's one-row form on the weights as they lie (AVX2)
        assert kind[1] == ("blockwise int4 gemv" if m == 1 and _AVX2 else "blockwise int4"), kind
        assert got.tobytes() == want.tobytes(), (threads, np.abs(got - want).max())
    compare([got], run_litert(data, [x]))
