"""Delegates through the Python binding (docs/delegates.md): ``wick.load(..., delegate=)`` and
``rt.delegation``, with the built-in test delegate "reference" (wick's reference kernels on
private buffers) on the team's shared models, a few real files of the corpus when it is built,
and a model written here; and the CLI's ``--delegate``.

Bars, each with its reason:
* when every prepare or every invoke fails (through the options or the environment), outputs
  are bit-identical to a CPU-only run, on both invokes: a partition that fails runs the very
  CPU kernels a CPU-only interpreter runs, in the same invoke;
* with the partitions on the delegate, or some on it and some fallen back (the first prepare or
  invoke fails), outputs are bit-identical to a CPU-only run with forced reference kernels
  when the CPU part runs them too (the delegate calls the same reference kernels on the same
  values), and within 1e-4 * max(1, max|ref|) of the optimized CPU run (kernels that sum in
  other orders);
* the report has one record per operator, a reason for every operator on the CPU and none for
  those on the delegate.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wick
from wick.tflite.writer import ModelWriter

REPO = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("WICK_SHARED_MODELS", REPO.parent / "shared" / "models"))
CORPUS = Path.home() / ".cache" / "wick" / "corpus"
# Small float files of the corpus (when it is built) with many ops the delegate takes.
CORPUS_FILES = [
    "keras/MobileNetV2_fp32.tflite",
    "mediapipe/face_detection_short_range.tflite",
    "minilm/all-MiniLM-L6-v2_fp32.tflite",
]


def _written_model() -> bytes:
    """x[2, 8] -> FULLY_CONNECTED(relu) -> ADD c -> LOGISTIC -> MUL (squares) -> SOFTMAX, with
    a MEAN (which the delegate does not take) reading the middle of the chain: one partition,
    the MEAN ordered after it."""
    rng = np.random.default_rng(3)
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [2, 8], "float32")
    weights = sg.add_constant("w", rng.standard_normal((6, 8)).astype(np.float32))
    bias = sg.add_constant("b", rng.standard_normal(6).astype(np.float32))
    fc = sg.add_tensor("fc", [2, 6], "float32")
    sg.add_operator(
        "FULLY_CONNECTED", [x, weights, bias], [fc], options=dict(fused_activation_function="RELU")
    )
    c = sg.add_constant("c", rng.standard_normal(6).astype(np.float32))
    added = sg.add_tensor("added", [2, 6], "float32")
    sg.add_operator("ADD", [fc, c], [added], options=dict(fused_activation_function="NONE"))
    axis = sg.add_constant("axis", np.array([1], dtype=np.int32))
    mean = sg.add_tensor("mean", [2], "float32")
    sg.add_operator("MEAN", [added, axis], [mean], options=dict(keep_dims=False))
    sig = sg.add_tensor("sig", [2, 6], "float32")
    sg.add_operator("LOGISTIC", [added], [sig])
    prod = sg.add_tensor("prod", [2, 6], "float32")
    sg.add_operator("MUL", [sig, sig], [prod], options=dict(fused_activation_function="NONE"))
    y = sg.add_tensor("y", [2, 6], "float32")
    sg.add_operator("SOFTMAX", [prod], [y], options=dict(beta=1.0))
    sg.set_inputs([x])
    sg.set_outputs([y, mean])
    return w.finish()


def _models() -> list:
    params = [pytest.param(("written", _written_model()), id="written")]
    if SHARED.is_dir():
        for p in sorted(SHARED.glob("*.tflite")):
            params.append(pytest.param(("shared", p), id=p.name))
    for rel in CORPUS_FILES:
        p = CORPUS / rel
        if p.exists():
            params.append(pytest.param(("corpus", p), id=rel))
    return params


def _inputs(rt: wick.Runtime, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for d in rt.inputs:
        shape = tuple(max(s, 1) for s in d.shape)
        if d.dtype.kind == "f":
            out.append(rng.uniform(-1, 1, shape).astype(d.dtype))
        elif d.dtype.kind == "b":
            out.append(rng.integers(0, 2, shape).astype(d.dtype))
        else:
            out.append(rng.integers(0, 4, shape).astype(d.dtype))
    return out


def _run(source, **kwargs):
    """(runtime, outputs of two calls) or (None, the WickError)."""
    try:
        rt = wick.load(source, **kwargs)
        xs = _inputs(rt)
        return rt, [rt(*xs), rt(*xs)]
    except wick.WickError as e:
        return None, e


def _same(got, want, what):
    assert len(got) == len(want), what
    for j, (g, r) in enumerate(zip(got, want, strict=True)):
        assert g.dtype == r.dtype and g.shape == r.shape, f"{what} output {j}"
        assert np.array_equal(g, r, equal_nan=True), (
            f"{what} output {j}: {int((g != r).sum())} of {g.size} values differ"
        )


def _close(got, want, what):
    for j, (g, r) in enumerate(zip(got, want, strict=True)):
        if g.dtype.kind != "f":
            assert np.array_equal(g, r), f"{what} output {j}"
            continue
        scale = max(1.0, float(np.nanmax(np.abs(r))) if r.size else 1.0)
        err = float(np.nanmax(np.abs(g.astype(np.float64) - r))) if r.size else 0.0
        assert err <= 1e-4 * scale, f"{what} output {j}: error {err:g} (scale {scale:g})"


@pytest.mark.parametrize("model", _models())
def test_fallback_and_delegation_match_the_cpu(model):
    kind, path = model
    source = path if kind == "written" else str(path)
    cpu_rt, cpu = _run(source)
    if cpu_rt is None:
        # A model wick's CPU cannot run fails the same way with a delegate: every node is
        # prepared for the CPU first.
        rt, err = _run(source, delegate="reference")
        assert rt is None and err.status == cpu.status, (cpu, err)
        return
    assert cpu_rt.delegation and all(r.delegate is None for r in cpu_rt.delegation)
    assert all(r.reason == "" for r in cpu_rt.delegation), "no delegates: no reasons"

    for config in ("fail_prepare=1000", "fail_invoke=1000"):
        rt, outs = _run(source, delegate=f"reference:{config}")
        assert rt is not None, f"{config}: {outs}"
        _same(outs[0], cpu[0], f"{config}, first invoke")
        _same(outs[1], cpu[1], f"{config}, second invoke")
        if config == "fail_prepare=1000":
            assert all(r.delegate is None for r in rt.delegation)
            for r in rt.delegation:
                if r.partition >= 0:
                    assert "prepare failed: injected failure" in r.reason, r
        if config == "fail_invoke=1000":
            assert all(r.delegate is None for r in rt.delegation)

    drt, outs = _run(source, delegate="reference")
    assert drt is not None, outs
    records = drt.delegation
    assert [r.index for r in records] == list(range(len(records)))
    for r in records:
        if r.delegate is not None:
            assert r.delegate == "reference" and r.partition >= 0 and r.reason == "", r
        else:
            assert r.reason, f"{r}: on the CPU without a reason"
    _close(outs[0], cpu[0], "delegated vs optimized CPU")
    # Some partitions on the delegate, some fallen back (the first prepare or invoke fails):
    # with the CPU on its reference kernels too, every mix gives the same bits.
    _, ref_cpu = _run(source, reference=True)
    for config in ("", ":fail_invoke=1", ":fail_prepare=1"):
        rt, outs = _run(source, delegate="reference" + config, reference=True)
        _same(outs[0], ref_cpu[0], f"reference{config} vs the CPU's reference kernels")
        _same(outs[1], ref_cpu[1], f"reference{config} vs the CPU's reference kernels, again")
    if kind == "written":
        on = [r.op for r in records if r.delegate]
        assert on == ["FULLY_CONNECTED", "ADD", "LOGISTIC", "MUL", "SOFTMAX"], records
        assert len({r.partition for r in records if r.delegate}) == 1, records
        mean = next(r for r in records if r.op == "MEAN")
        assert "MEAN is not implemented" in mean.reason, mean
        kinds = drt.signature(None).op_kernels()
        assert [k for k, r in zip(kinds, records, strict=True) if r.delegate] == [
            ("delegated", "reference")
        ] * 5, kinds
        assert kinds[records.index(mean)][0] != "delegated"
        times = drt.signature(None).profile()
        on = [t for (_, t), r in zip(times, records, strict=True) if r.delegate]
        assert on[0] > 0 and on[1:] == [0] * 4, times  # the partition's time is on its first


def test_environment_fault_injection(monkeypatch):
    data = _written_model()
    _, cpu = _run(data)
    monkeypatch.setenv("WICK_REFERENCE_FAIL_INVOKE", "1")
    rt, outs = _run(data, delegate="reference")
    _same(outs[0], cpu[0], "env fail_invoke=1")
    assert all(r.delegate is None for r in rt.delegation)
    assert "invoke failed: injected failure" in rt.delegation[0].reason
    monkeypatch.setenv("WICK_REFERENCE_FAIL_INVOKE", "0")
    monkeypatch.setenv("WICK_REFERENCE_FAIL_PREPARE", "1")
    rt, outs = _run(data, delegate="reference")
    _same(outs[0], cpu[0], "env fail_prepare=1")
    assert "prepare failed: injected failure" in rt.delegation[0].reason


def test_accept_set_minimum_and_priority():
    data = _written_model()
    _, cpu = _run(data)
    rt, outs = _run(data, delegate="reference:ops=ADD,SOFTMAX")
    _close(outs[0], cpu[0], "ops=ADD,SOFTMAX")
    on = {r.op: r for r in rt.delegation}
    assert on["ADD"].delegate == "reference" and on["SOFTMAX"].delegate == "reference"
    assert "not in the accept set" in on["LOGISTIC"].reason
    assert on["ADD"].partition != on["SOFTMAX"].partition  # LOGISTIC and MUL run between
    rt, _ = _run(data, delegate="reference:ops=ADD,SOFTMAX;min_partition_nodes=2")
    assert all(r.delegate is None for r in rt.delegation)
    assert "below its minimum of 2" in {r.op: r for r in rt.delegation}["ADD"].reason
    # two delegates in priority order: the second takes what the first declines
    rt, outs = _run(data, delegate=["reference:ops=ADD", "reference:ops=SOFTMAX,LOGISTIC,MUL"])
    parts = {r.op: r.partition for r in rt.delegation}
    assert parts["ADD"] >= 0 and parts["SOFTMAX"] >= 0 and parts["ADD"] != parts["SOFTMAX"]
    _close(outs[0], cpu[0], "two delegates")


def _singles_then_a_run(singles=70, run=10) -> bytes:
    """`singles` ADDs each followed by a LOGISTIC (which the delegate is not offered: ops=ADD),
    then `run` ADDs in a row: singles + 1 partitions would be needed, one more than the cap."""
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    one = sg.add_constant("one", np.ones(4, np.float32))
    cur = x = sg.add_tensor("x", [4], "float32")
    for k in range(singles):
        a = sg.add_tensor(f"a{k}", [4], "float32")
        sg.add_operator("ADD", [cur, one], [a], options=dict(fused_activation_function="NONE"))
        cur = sg.add_tensor(f"l{k}", [4], "float32")
        sg.add_operator("LOGISTIC", [a], [cur])
    for k in range(run):
        a = sg.add_tensor(f"r{k}", [4], "float32")
        sg.add_operator("ADD", [cur, one], [a], options=dict(fused_activation_function="NONE"))
        cur = a
    sg.set_inputs([x])
    sg.set_outputs([cur])
    return w.finish()


def test_partition_cap_prefers_the_larger_partitions():
    """70 one-ADD partitions, then a run of 10 ADDs: the sweep alone fills the 64 slots with the
    first 64 single ADDs (64 nodes on the delegate, the run capped); the runtime then keeps the
    64 largest partitions — the run and the first 63 singles, 73 nodes — the others with the
    reason; outputs as the CPU's."""
    data = _singles_then_a_run()
    _, cpu = _run(data)
    rt, outs = _run(data, delegate="reference:ops=ADD")
    _close(outs[0], cpu[0], "cap")
    adds = [r for r in rt.delegation if r.op == "ADD"]
    on = [r for r in adds if r.delegate == "reference"]
    assert len(on) == 63 + 10, [r.reason for r in adds if r.delegate is None]
    assert len({r.partition for r in on}) == 64
    assert all(r.delegate == "reference" for r in adds[-10:])  # the run
    given_up = [r for r in adds if r.delegate is None]
    assert given_up == adds[63:70], given_up
    assert all("a partition of 1 node, given up for larger ones" in r.reason for r in given_up)
    # when giving up small partitions would not put more nodes on the delegate, the first plan
    # stands: 80 singles, no run (the 16 past the cap with the cap's reason)
    rt, _ = _run(_singles_then_a_run(singles=80, run=1), delegate="reference:ops=ADD")
    adds = [r for r in rt.delegation if r.op == "ADD"]
    assert [r.delegate for r in adds] == ["reference"] * 64 + [None] * 17
    assert all("the graph already has 64 partitions" in r.reason for r in adds[64:]), adds[64:]


def test_errors_name_the_problem():
    data = _written_model()
    with pytest.raises(wick.WickError, match='no delegate called "vulkan"'):
        wick.load(data, delegate="vulkan")
    with pytest.raises(wick.WickError, match="no setting fail_everything"):
        wick.load(data, delegate="reference:fail_everything=1")
    with pytest.raises(TypeError):
        wick.load(data, delegate=[3])


def test_cli_prints_the_partition_plan(tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_written_model())

    def wick_cli(*args):
        cmd = [sys.executable, "-m", "wick.cli", *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    p = wick_cli("inspect", path, "--delegate", "reference")
    assert p.returncode == 0, p.stderr
    assert "delegation   5 of 6 operators on delegates, 1 partition" in p.stdout, p.stdout
    assert "partition 0: 5 operators on reference" in p.stdout, p.stdout
    assert re.search(r"MEAN\s+cpu\s+reference: op MEAN is not implemented", p.stdout), p.stdout
    p = wick_cli("inspect", path, "--delegate", "reference:fail_prepare=1")
    assert p.returncode == 0 and "prepare failed: injected failure" in p.stdout, p.stdout
    assert "runs on the CPU" in p.stderr, p.stderr  # the fallback's log line
    p = wick_cli("run", path, "--delegate", "reference:fail_invoke=1")
    assert p.returncode == 0 and "invoke failed: injected failure" in p.stderr, p.stderr
    p = wick_cli("inspect", path, "--delegate", "vulkan")
    assert p.returncode == 2 and 'no delegate called "vulkan"' in p.stderr, p.stderr
