"""Attention fusion at prepare (src/core/fuse.c: fuse_attention; src/ops/attention.c): an
attention over a key/value cache — BATCH_MATMUL(q, kt), optional soft-capping steps (DIV, TANH,
MUL by constants), ADD of a mask, SOFTMAX, BATCH_MATMUL with the values, as wick.llm writes it —
runs as one kernel in the first BATCH_MATMUL, over the key positions the mask leaves visible.

Each hand-built model runs fused and with WICK_NO_ATTENTION_FUSION=1 (the nodes on their own):
the outputs must be the same bytes, at 1 and 3 threads, for causal masks at several positions,
sliding windows, rows that see nothing, -inf masks and visible values far below zero; the
fused node's multiply-accumulates (the work it did, wick_interpreter_op_macs) follow the
visible part, not the cache length; LiteRT runs the file within float tolerance. Near misses
(an intermediate read elsewhere, a constant key operand, an adjoint operand) must not fuse.
"""

from __future__ import annotations

import os
import platform

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(20)
LOW = np.finfo(np.float32).min  # wick.llm's masked value


def attention_model(
    b,
    m,
    d,
    s,
    dv,
    *,
    softcap=None,
    mask_rows=True,
    mask_first=False,
    expose_probs=False,
    constant_keys=None,
    adj_y=False,
    beta=1.0,
):
    """q [1, b, m, d], kt [1, b, d, s] (or [1, b, s, d] with adj_y), mask [1, 1, m or 1, s],
    v [1, b, s, dv] -> out [1, b, m, dv]. Returns (file bytes, input names)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    n = [0]

    def t(name, shape):
        return sg.add_tensor(name, list(shape), np.float32)

    def op(name, inputs, shape, options=None):
        n[0] += 1
        out = t(f"t{n[0]}", shape)
        sg.add_operator(name, inputs, [out], options)
        return out

    def const(value):
        n[0] += 1
        return sg.add_constant(f"c{n[0]}", np.asarray(value, np.float32))

    q = t("q", [1, b, m, d])
    kshape = [1, b, s, d] if adj_y else [1, b, d, s]
    kt = sg.add_constant("kt", constant_keys) if constant_keys is not None else t("kt", kshape)
    mask = t("mask", [1, 1, m if mask_rows else 1, s])
    v = t("v", [1, b, s, dv])
    scores = op("BATCH_MATMUL", [q, kt], [1, b, m, s], {"adj_x": False, "adj_y": adj_y})
    if softcap is not None:
        scores = op("DIV", [scores, const(softcap)], [1, b, m, s])
        scores = op("TANH", [scores], [1, b, m, s])
        scores = op("MUL", [const(softcap), scores], [1, b, m, s])
    z = op("ADD", [mask, scores] if mask_first else [scores, mask], [1, b, m, s])
    p = op("SOFTMAX", [z], [1, b, m, s], {"beta": beta})
    out = op("BATCH_MATMUL", [p, v], [1, b, m, dv], {"adj_x": False, "adj_y": False})
    inputs = [q] + ([] if constant_keys is not None else [kt]) + [mask, v]
    sg.set_inputs(inputs)
    sg.set_outputs([out, p] if expose_probs else [out])
    names = ["q"] + ([] if constant_keys is not None else ["kt"]) + ["mask", "v"]
    return w.finish(), names


def causal_mask(m, s, last, group=1, window=None):
    """[1, 1, m, s]: row r (token r % (m // group) of its group) sees positions up to
    last + r % (m // group), and within `window` of it."""
    per = m // group
    rows = last + np.arange(m) % per
    cols = np.arange(s)
    visible = cols[None, :] <= rows[:, None]
    if window is not None:
        visible &= cols[None, :] > rows[:, None] - window
    return np.where(visible, 0.0, LOW).astype(np.float32)[None, None]


def feeds(b, m, d, s, dv, mask, adj_y=False):
    kshape = (1, b, s, d) if adj_y else (1, b, d, s)
    return {
        "q": RNG.standard_normal((1, b, m, d)).astype(np.float32),
        "kt": RNG.standard_normal(kshape).astype(np.float32),
        "mask": mask,
        "v": RNG.standard_normal((1, b, s, dv)).astype(np.float32),
    }


def run(data, feed, names, monkeypatch, num_threads=1, fused=True):
    """(outputs, op names that ran, kernel (kind, name) per op, macs per op)."""
    with monkeypatch.context() as mp:
        if not fused:
            mp.setenv("WICK_NO_ATTENTION_FUSION", "1")
        runner = wick.load(data, num_threads=num_threads).signature(None)
        args = [feed[k] for k in names]
        out = runner(*args)
        profile = runner.profile()
        return out, [n for n, ns in profile if ns > 0], runner.op_kernels(), runner.op_macs()


def check_identical(data, feed, names, monkeypatch, threads=(1, 3)):
    want, ran, _, _ = run(data, feed, names, monkeypatch, fused=False)
    assert ran.count("BATCH_MATMUL") == 2, ran
    for n in threads:
        got, ran, kernels, macs = run(data, feed, names, monkeypatch, num_threads=n)
        assert ran == ["BATCH_MATMUL"], ran
        assert kernels[0] in (("optimized", "attention"), ("optimized", "attention in place"))
        for g, w_ in zip(got, want, strict=True):
            assert g.tobytes() == w_.tobytes(), f"{n} threads: max diff {np.abs(g - w_).max()}"
    return got, macs


# (b, m, d, s, dv): decode (m = query heads per kv head), prefill tiles, an odd m whose last
# row is alone in its GEMM tile (m % 6 == 1, m % 7 == 1), d and dv below the panel width, a
# cache length that is not a multiple of 16; in place on AVX-512 (panels of 32): one query row
# per head (the one-row kernel), and 8 rows (a 7-row tile, then a row alone in its tile)
SHAPES = [
    (3, 3, 64, 512, 64),
    (2, 16, 16, 64, 16),
    (1, 13, 8, 100, 8),
    (2, 43, 32, 96, 24),
    (2, 1, 64, 128, 32),
    (1, 8, 32, 64, 64),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("softcap", [None, 5.0])
def test_fused_attention_is_bit_identical(shape, softcap, monkeypatch):
    b, m, d, s, dv = shape
    data, names = attention_model(b, m, d, s, dv, softcap=softcap)
    for last in (0, 5, 17, s // 2, s - m, s - 1):
        mask = causal_mask(m, s, last)
        got, _ = check_identical(data, feeds(b, m, d, s, dv, mask), names, monkeypatch)
    feed = feeds(b, m, d, s, dv, mask)
    got, _ = check_identical(data, feed, names, monkeypatch, threads=(1,))
    compare(got, run_litert(data, [feed[k] for k in names]))


def test_fused_attention_masks(monkeypatch):
    """Grouped rows (the query heads of one kv head, prefill rows), sliding windows, -inf
    instead of the float minimum, a row that sees nothing (uniform over every position in the
    unfused computation: that tile is not cut), a visible value far below zero (not cut), and
    the mask operand first in the ADD."""
    b, m, d, s, dv = 2, 12, 16, 80, 16
    cases = [
        causal_mask(m, s, 9, group=3),
        causal_mask(m, s, 40, window=5),
        np.where(causal_mask(m, s, 20) == 0, 0.0, -np.inf).astype(np.float32),
    ]
    nothing = causal_mask(m, s, 30)
    nothing[0, 0, 4] = LOW
    cases.append(nothing)
    far = causal_mask(m, s, 30)
    far[0, 0, 7, 3] = -1e38
    cases.append(far)
    for mask_first in (False, True):
        data, names = attention_model(b, m, d, s, dv, mask_first=mask_first)
        for mask in cases:
            check_identical(data, feeds(b, m, d, s, dv, mask), names, monkeypatch)
    # one mask row for every query row
    data, names = attention_model(b, m, d, s, dv, mask_rows=False)
    check_identical(data, feeds(b, m, d, s, dv, causal_mask(1, s, 33)), names, monkeypatch)


def test_fused_attention_work_follows_the_visible_positions(monkeypatch):
    """A decode-shaped step (3 query rows per kv head, 512 cache positions) at position p: the
    fused node's multiply-accumulates cover at least p + 1 positions and at most p + 32 (one
    panel of the widest GEMM kernel, 32 columns on AVX-512; 16 on AVX2), never the whole cache
    below that."""
    b, m, d, s, dv = 3, 3, 64, 512, 64
    data, names = attention_model(b, m, d, s, dv)
    per_position = b * m * (d + dv)
    for p in (0, 15, 16, 100, 300, 480, 511):
        mask = np.where(np.arange(s) <= p, 0.0, LOW).astype(np.float32)
        mask = np.broadcast_to(mask, (1, 1, m, s)).copy()
        _, ran, kernels, macs = run(data, feeds(b, m, d, s, dv, mask), names, monkeypatch)
        assert ran == ["BATCH_MATMUL"], ran
        positions = macs[0] / per_position
        assert positions == int(positions), macs[0]
        assert p + 1 <= positions <= min(s, p + 32), (p, positions)
    # the unfused nodes do the whole cache every time
    _, _, _, macs = run(data, feeds(b, m, d, s, dv, mask), names, monkeypatch, fused=False)
    assert macs[0] == b * m * d * s


def _cpu_flags() -> set[str]:
    if platform.machine() not in ("x86_64", "AMD64") or os.environ.get("WICK_MAX_ISA"):
        return set()
    try:
        with open("/proc/cpuinfo") as f:
            return next((set(line.split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return set()


def _float_isa() -> str | None:
    """The float kernel set wick picks here on x86: "avx512" (F, VL, BW, DQ: src/kernels/cpu.c),
    "avx2", or None (another architecture, none of them, or capped by WICK_MAX_ISA)."""
    flags = _cpu_flags()
    if {"avx512f", "avx512vl", "avx512bw", "avx512dq"} <= flags:
        return "avx512"
    return "avx2" if "avx2" in flags else None


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fused_attention_reads_the_cache_in_place(shape, monkeypatch):
    """Where the kernels have an in-place form (AVX2, panels of 16; AVX-512, panels of 32 and
    the main 7x32 tile, so a value width of 16 or less, which takes the narrow 14x16 tile,
    packs; NEON, panels of 8, is checked under qemu: test_aarch64_qemu.py) and the panels
    are whole (the cache length and dv multiples of the panel width), the fused attention reads
    the keys and values where they lie: kernel "attention in place". Else it packs them."""
    b, m, d, s, dv = shape
    data, names = attention_model(b, m, d, s, dv)
    _, _, kernels, _ = run(data, feeds(b, m, d, s, dv, causal_mask(m, s, 5)), names, monkeypatch)
    isa = _float_isa()
    if isa is None:
        assert kernels[0][1] in ("attention", "attention in place"), kernels
        return
    nr = 32 if isa == "avx512" else 16
    in_place = s % nr == 0 and dv % nr == 0 and (isa == "avx2" or dv > 16)
    assert kernels[0] == ("optimized", "attention in place" if in_place else "attention")


@pytest.mark.parametrize("shape", [(3, 3, 64, 512, 64), (2, 12, 16, 80, 16), (2, 43, 32, 96, 24)])
def test_fused_sliding_window_computes_its_window(shape, monkeypatch):
    """A sliding-window layer (window w) at position p: the fused node starts at the first
    position any of a tile's rows sees (rounded down to the panel alignment, 16 on AVX2 and 32
    on AVX-512; packed, per batch the smallest), so its work is about the window, not p; the
    bytes stay those of the unfused nodes."""
    b, m, d, s, dv = shape
    data, names = attention_model(b, m, d, s, dv)
    window = 7
    for last in (0, 6, 20, s // 2, s - m):
        mask = causal_mask(m, s, last, window=window)
        _, macs = check_identical(data, feeds(b, m, d, s, dv, mask), names, monkeypatch)
        positions = macs[0] / (b * m * (d + dv))
        if m <= 6:  # one tile per batch: every row's window within 2 alignments
            assert positions <= window + m + 2 * 32, (last, positions)
        if last >= 64 + window:
            assert positions < last, (last, positions)


def test_fused_prefill_tiles_stop_at_their_last_token(monkeypatch):
    """A 64-token prefill at position 0 of a 512-position cache: the tiles of early tokens see
    few positions, so the work is about half the 64 x 64 square, not 64 x 512."""
    b, m, d, s, dv = 1, 64, 32, 512, 32
    data, names = attention_model(b, m, d, s, dv)
    mask = causal_mask(m, s, 0)
    _, macs = check_identical(data, feeds(b, m, d, s, dv, mask), names, monkeypatch)
    positions = macs[0] / (b * m * (d + dv))
    assert 32 <= positions <= 64, positions


@pytest.mark.parametrize(
    "near_miss",
    ["expose_probs", "constant_keys", "adj_y"],
)
def test_near_misses_do_not_fuse(near_miss, monkeypatch):
    b, m, d, s, dv = 2, 3, 16, 48, 16
    kwargs = {near_miss: True}
    if near_miss == "constant_keys":
        kwargs[near_miss] = RNG.standard_normal((1, b, d, s)).astype(np.float32)
    data, names = attention_model(b, m, d, s, dv, **kwargs)
    feed = feeds(b, m, d, s, dv, causal_mask(m, s, 10), adj_y=near_miss == "adj_y")
    _, ran, kernels, _ = run(data, feed, names, monkeypatch)
    assert ran.count("BATCH_MATMUL") == 2 and "SOFTMAX" in ran, ran
    assert not any(k[1].startswith("attention") for k in kernels), kernels
