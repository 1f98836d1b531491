"""The conformance check of one corpus file: "if stock LiteRT runs it, wick runs it and agrees".

For each signature (or subgraph 0) of the file, with seeded inputs that fit each input's type
and range (``litert_child.model_inputs``):

* LiteRT runs it in a child process twice: its reference kernels (``BUILTIN_REF``) and its
  default interpreter (XNNPACK). Either may crash or refuse: that is recorded, not fatal.
* wick runs it in this process at 1 and 2 threads; the two must be bit-identical.
* The oracle is LiteRT's reference kernels, or its default interpreter where the reference
  kernels cannot run the file. Float outputs: within 1e-4 * max(1, max|ref|); where LiteRT's two
  kernel sets disagree with each other by more than that, the bar for that output is
  SPREAD_FACTOR (4) times their disagreement and the table says so. A float output that a
  SOFTMAX computes and that misses its bar is judged by its logits instead (the SOFTMAX's input,
  made an output of a patched copy of the file, run the same way): a softmax of logits ~1000
  apart by a few units turns their float rounding into percent-level probability changes
  (as on random-weight Keras EfficientNetV2B3 while its BatchNorms kept random statistics:
  logits agreed within LiteRT's own spread, the probabilities did not), so the logits are what
  the runtimes compute. Integer outputs:
  bit-exact with the reference kernels (within one step of the default interpreter when only
  it runs).
* Files with a PyTorch reference (``<name>.ref.npz``) are also compared with PyTorch:
  all-MiniLM-L6-v2's embeddings by cosine (>= 0.9999 fp32, >= 0.999 fp16, >= 0.99
  dynamic_int8 and int8); SmolLM2's logits within 1e-3 * max(1, max|ref|) with every position's greedy
  token equal.

``wick graph`` must also draw the file (``wick.visualize``). A result is ``pass``, ``fail``
(with the reason), ``no oracle`` (LiteRT's two kernel sets disagree by more than INCONCLUSIVE
on an output, as on random-weight EfficientNetV2-M/L while their BatchNorms kept random
statistics and their activations reached 1e5 (sources.KERAS_BN_FROM_DATA): no bar can be drawn
from them, so the file neither passes nor fails; wick's run is still checked for
errors and 1-/2-thread identity), or ``peer cannot run`` (LiteRT runs neither
way; wick's own outcome is still recorded).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FLOAT_REL = 1e-4
# Where LiteRT's reference kernels and its default interpreter disagree by s > FLOAT_REL on an
# output (a deep model amplifying summation-order differences: MediaPipe's pose landmark
# segmentation output, 2.4e-4), wick — a third summation order — is held to SPREAD_FACTOR * s.
SPREAD_FACTOR = 4.0
# ... unless they disagree by more than this (relative to max(1, |ref|)): then there is no oracle.
INCONCLUSIVE = 0.1


class NoOracle(Exception):
    """LiteRT's two kernel sets disagree too much on an output to judge wick by them."""


COSINE_BARS = {"fp32": 0.9999, "fp16": 0.999, "dynamic_int8": 0.99, "int8": 0.99}


@dataclass
class Result:
    name: str
    source: str
    ops: str = ""
    status: str = "fail"  # pass | fail | no oracle | peer cannot run | not built
    detail: str = ""
    notes: list[str] = field(default_factory=list)


def op_summary(data: bytes, top: int = 6) -> str:
    from wick.graph.tflite_reader import read_tflite

    try:
        f = read_tflite(data, stats=False)
    except Exception as e:  # noqa: BLE001 - a table cell, never a failure
        return f"(unreadable: {e})"
    counts = Counter(op.op for sg in f.subgraphs for op in sg.operators)
    parts = [f"{op} {n}" for op, n in counts.most_common(top)]
    rest = len(counts) - top
    return ", ".join(parts) + (f", +{rest} kinds" if rest > 0 else "")


def _max_rel(a: np.ndarray, b: np.ndarray) -> float:
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    if a.size == 0:
        return 0.0
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    d = np.where(same, 0.0, np.abs(a.astype(np.float64) - b.astype(np.float64)))
    return float(np.nan_to_num(d, nan=np.inf).max()) / scale


def _compare(
    got, ref, other, ref_is_reference: bool, notes: list[str], skip: frozenset = frozenset()
) -> str | None:
    """None when wick's outputs meet the bar, else why not. ``other``: LiteRT's other kernel
    set's outputs (for the documented per-output tolerance), or None. Outputs in ``skip`` are
    not compared (judged by their logits)."""
    if len(got) != len(ref):
        return f"{len(got)} outputs, LiteRT has {len(ref)}"
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        if j in skip:
            continue
        if g.dtype != r.dtype or g.shape != r.shape:
            return f"output {j}: {g.dtype}{g.shape}, LiteRT {r.dtype}{r.shape}"
        if g.dtype.kind == "f":
            bar = FLOAT_REL
            if other is not None and j < len(other) and other[j].shape == r.shape:
                spread = _max_rel(other[j], r)
                if spread > INCONCLUSIVE:
                    raise NoOracle(
                        f"output {j}: LiteRT's kernel sets disagree by {spread:.1e} x max(1,|ref|)"
                        f" (wick differs from LiteRT's reference kernels by {_max_rel(g, r):.1e})"
                    )
                if spread > FLOAT_REL:
                    bar = SPREAD_FACTOR * spread
                    notes.append(
                        f"output {j}: LiteRT's kernel sets differ by {spread:.1e}, wick by "
                        f"{_max_rel(g, r):.1e} (bar {bar:.1e})"
                    )
            err = _max_rel(g, r)
            if err > bar:
                return f"output {j}: max error {err:.2e} x max(1,|ref|) > {bar:.1e}"
        elif g.dtype.kind == "c":
            scale = max(1.0, float(np.abs(r).max()) if r.size else 1.0)
            err = float(np.abs(g - r).max()) / scale if r.size else 0.0
            if err > FLOAT_REL:
                return f"output {j}: complex error {err:.2e}"
        else:
            diff = np.abs(g.astype(np.int64) - r.astype(np.int64))
            worst = int(diff.max()) if diff.size else 0
            if worst > (0 if ref_is_reference else 1):
                return f"output {j}: {int((diff != 0).sum())} of {diff.size} values differ (max {worst})"
            if worst:
                notes.append(f"output {j}: within 1 step of LiteRT's default kernels")
    return None


def check_file(path: Path, name: str, source: str) -> Result:
    import wick
    from tests.python.oracles.litert_child import (
        model_inputs,
        oracle_bytes,
        run_oracle,
        signatures,
    )

    data = path.read_bytes()
    res = Result(name, source, op_summary(data))
    fixed, patched = oracle_bytes(data)
    if patched:
        res.notes.append(f"LiteRT gets {patched} quantized_dimension field(s) set to 0")
    try:
        sigs = signatures(fixed)
    except Exception as e:  # noqa: BLE001
        sigs = [None]
        res.notes.append(f"signatures unreadable by LiteRT's schema: {e}")
    try:
        rt1 = wick.load(data, num_threads=1)
        rt2 = wick.load(data, num_threads=2)
        wick_error = None
    except wick.WickError as e:
        rt1 = rt2 = None
        wick_error = str(e)
    for sig in sigs:
        label = f"[{sig}] " if sig and len(sigs) > 1 else ""
        try:
            inputs = model_inputs(fixed, sig)
        except Exception as e:  # noqa: BLE001
            res.detail = f"{label}inputs: {e}"
            return res
        ref, why_ref = run_oracle(fixed, inputs, sig, reference=True)
        dflt, why_dflt = run_oracle(fixed, inputs, sig, reference=False)
        if ref is None and dflt is None:
            res.status = "peer cannot run"
            res.detail = f"{label}LiteRT: {why_ref or why_dflt}; wick " + (
                f"refuses it: {wick_error}" if wick_error else "loads it"
            )
            return res
        if ref is None:
            res.notes.append(f"LiteRT's reference kernels cannot run it ({why_ref})")
        if dflt is None:
            res.notes.append(f"LiteRT's default interpreter cannot run it ({why_dflt})")
        if wick_error:
            res.detail = f"wick refuses it: {wick_error}"
            return res
        try:
            got = rt1.signature(sig)(*inputs)
            got2 = rt2.signature(sig)(*inputs)
        except wick.WickError as e:
            res.detail = f"{label}wick fails at invoke: {e}"
            return res
        if any(a.tobytes() != b.tobytes() for a, b in zip(got, got2, strict=True)):
            res.detail = f"{label}wick's 1- and 2-thread outputs differ"
            return res
        oracle, other = (ref, dflt) if ref is not None else (dflt, None)
        try:
            softmax = _softmax_outputs(fixed, sig, got, oracle, other)
            why = _compare(got, oracle, other, ref is not None, res.notes, frozenset(softmax))
            for j, logits in softmax.items():
                prob_err = _max_rel(got[j], oracle[j])
                why = why or _compare_logits(
                    logits, sig, j, inputs, prob_err, run_oracle, res.notes
                )
        except NoOracle as e:
            res.status = "no oracle"
            res.detail = f"{label}{e}"
            return res
        if why:
            res.detail = f"{label}{why}"
            return res
    why = _draw(path)
    if why:
        res.detail = why
        return res
    torch_ref = path.with_suffix(".ref.npz")
    if torch_ref.is_file():
        why = _compare_with_pytorch(rt1, torch_ref, name, res.notes)
        if why:
            res.detail = why
            return res
    res.status = "pass"
    return res


def _softmax_outputs(data: bytes, sig, got, oracle, other) -> dict[int, bytes]:
    """The float outputs that miss their bar (as ``_compare`` judges them) and that a SOFTMAX
    computes: output index -> a copy of the file whose output is that SOFTMAX's input."""
    found = {}
    for j, (g, r) in enumerate(zip(got, oracle, strict=False)):
        if g.dtype.kind != "f" or g.shape != r.shape or g.dtype != r.dtype:
            continue
        try:
            if _compare([g], [r], None if other is None else [other[j]], False, []) is None:
                continue
        except NoOracle:
            pass  # judged by the logits, if any
        patched = _logits_file(data, sig, j)
        if patched is not None:
            found[j] = patched
    return found


def _logits_file(data: bytes, sig, j: int) -> bytes | None:
    """``data`` with output ``j`` of ``sig`` (or of subgraph 0) replaced by the input of the
    float SOFTMAX that computes it, or None when no SOFTMAX does. Patches the subgraph's output
    list and the signature's tensor index in place (same length: the file stays valid)."""
    import struct

    from ai_edge_litert import schema_py_generated as schema

    m = schema.Model.GetRootAs(data, 0)
    sub, tmap = 0, None
    if sig is not None:
        for k in range(m.SignatureDefsLength()):
            sd = m.SignatureDefs(k)
            if sd.SignatureKey().decode() == sig:
                sub = sd.SubgraphIndex()
                tmap = sd.Outputs(j) if j < sd.OutputsLength() else None
    sg = m.Subgraphs(sub)
    tensor = tmap.TensorIndex() if tmap is not None else sg.Outputs(j)
    source = None
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if op.OutputsLength() and op.Outputs(0) == tensor:
            code = m.OperatorCodes(op.OpcodeIndex())
            builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
            if builtin == schema.BuiltinOperator.SOFTMAX:
                source = op.Inputs(0)
    if source is None or sg.Tensors(source).Type() != schema.TensorType.FLOAT32:
        return None
    out = bytearray(data)
    start = sg._tab.Vector(sg._tab.Offset(8))  # Subgraph.outputs
    for k in range(sg.OutputsLength()):
        if sg.Outputs(k) == tensor:
            struct.pack_into("<i", out, start + 4 * k, source)
    if tmap is not None:
        struct.pack_into("<I", out, tmap._tab.Pos + tmap._tab.Offset(6), source)
    return bytes(out)


def _compare_logits(logits: bytes, sig, j, inputs, prob_err, run_oracle, notes) -> str | None:
    """Output ``j`` judged by its SOFTMAX's logits: the runtimes on the patched file, the same
    rule (``_compare``) on that one output."""
    import wick

    ref, _ = run_oracle(logits, inputs, sig, reference=True)
    dflt, _ = run_oracle(logits, inputs, sig, reference=False)
    if ref is None and dflt is None:
        return f"output {j}: LiteRT cannot run the file with the SOFTMAX's logits as output {j}"
    got = wick.load(logits, num_threads=1).signature(sig)(*inputs)
    oracle, other = (ref, dflt) if ref is not None else (dflt, None)
    sub_notes: list[str] = []
    why = _compare([got[j]], [oracle[j]], None if other is None else [other[j]], False, sub_notes)
    if why:
        return f"output {j} (a SOFTMAX): its logits: {why.split(': ', 1)[1]}"
    notes.append(
        f"output {j} is a SOFTMAX judged by its logits (up to {float(np.abs(oracle[j]).max()):.3g}):"
        f" wick {_max_rel(got[j], oracle[j]):.1e}"
        + (f", LiteRT's kernel sets {_max_rel(other[j], oracle[j]):.1e}" if other else "")
        + f" x max(1,|ref|) (the probabilities: wick {prob_err:.1e})"
    )
    return None


def _draw(path: Path) -> str | None:
    """`wick graph` must draw every file (its weight statistics and layout never fail)."""
    import tempfile

    import wick

    with tempfile.TemporaryDirectory() as tmp:
        try:
            wick.visualize(str(path), Path(tmp) / "page.html")
        except Exception as e:  # noqa: BLE001 - any failure is a finding
            return f"wick graph fails: {type(e).__name__}: {e}"
    return None


def _compare_with_pytorch(rt, ref_path: Path, name: str, notes: list[str]) -> str | None:
    with np.load(ref_path) as z:
        ref = dict(z)
    if "logits" in ref:  # a causal LM: logits within the fp32 bar, the same greedy tokens
        got = rt(ref["ids"])[0]
        err = _max_rel(got, ref["logits"])
        same = float(np.mean(got.argmax(-1) == ref["logits"].argmax(-1)))
        notes.append(f"logits within {err:.1e} of PyTorch; greedy tokens agree at {same:.0%}")
        if err > 1e-3 or same < 1.0:
            return f"PyTorch logits: max error {err:.2e}, greedy agreement {same:.0%}"
        return None
    ids, mask, want = ref["ids"], ref["mask"], ref["embeddings"]
    got = rt(ids, mask)[0]
    cos = float(
        np.min(
            np.sum(got * want, -1) / np.linalg.norm(got, axis=-1) / np.linalg.norm(want, axis=-1)
        )
    )
    form = next((f for f in COSINE_BARS if name.endswith("_" + f)), "fp32")
    notes.append(f"min cosine to PyTorch {cos:.5f} (bar {COSINE_BARS[form]})")
    if cos < COSINE_BARS[form]:
        return f"min cosine to PyTorch's embeddings {cos:.5f} < {COSINE_BARS[form]}"
    return None
