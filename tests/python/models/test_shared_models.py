"""Real .tflite files no one here wrote (the team's shared folder, ../shared/models), run on wick
and on LiteRT's REFERENCE kernels (``BUILTIN_REF``) with the same seeded random inputs.

Bar: integer outputs bit-exact (wick's quantized kernels follow LiteRT's reference kernels bit for
bit); float outputs within 1e-4 * max(1, max|ref|) (whole models sum in other orders).

A file LiteRT runs must run on wick: a refusal, a missing operator included, fails the test.
Files the oracle itself cannot run (LiteRT crashes or refuses them) are skipped with the reason,
after checking that wick either runs them or refuses them with an error (never crashes).

Oracle adjustments, both derived from the file rather than listed per model:
* LiteRT refuses tensors whose ``quantized_dimension`` lies outside their rank (person_detect's
  biases); the oracle gets a copy with those fields set to 0, wick the original bytes.
* A graph input that is TRANSPOSE_CONV's output_shape operand is fed the declared output shape
  (random integers are not a valid shape).
* A file with blockwise-quantized tensors (TFLite's BlockwiseQuantization: int4 FULLY_CONNECTED
  weights) runs on LiteRT's default interpreter: its reference resolver has no blockwise kernel
  and outputs zeros; the default one runs XNNPACK's qd8 x qb4w kernel, which wick follows.

LiteRT runs in a child process: some of these files crash it (abort, segfault).

A second test mutates the quantization parameters of the small quantized files (hostile scales,
zero points, quantized dimensions) and requires wick to run or refuse each copy, never crash.
The folder is located by $WICK_SHARED_MODELS or ../shared/models next to the repository; the
module is skipped when it is absent (someone who clones the project alone).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

import wick
from tests.python.oracles import litert
from tests.python.oracles.litert_child import (
    _schema,
    model_inputs,
    oracle_bytes,
    run_oracle,
    signatures,
)

REPO = Path(__file__).resolve().parents[3]
MODELS = Path(os.environ.get("WICK_SHARED_MODELS", REPO.parent / "shared" / "models"))
if not MODELS.is_dir():
    pytest.skip(
        f"shared models folder {MODELS} is absent (set WICK_SHARED_MODELS)", allow_module_level=True
    )

# Files LiteRT runs that wick still refuses, each with the reason: an expected failure that is
# strict (the day wick runs one, the test fails until it leaves this list) and counted as an
# xfail in the closing line.
KNOWN_GAPS = {
    "static_w8_a16_quantized_q_einsum.tflite": "int16 x per-channel int8 BATCH_MATMUL: LiteRT "
    "runs it but outputs zeros (it has no per-channel integer BATCH_MATMUL); wick refuses it "
    "rather than agree with zeros",
}
FILES = [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[name]))
    if name in KNOWN_GAPS
    else name
    for name in sorted(p.name for p in MODELS.glob("*.tflite"))
]
FLOAT_REL = 1e-4
SEED = 0


def has_blockwise_quantization(data: bytes) -> bool:
    """Whether any tensor carries BlockwiseQuantization details (LiteRT's reference kernels
    ignore them: the oracle is then its default interpreter)."""
    schema = _schema()
    m = schema.Model.GetRootAs(data, 0)
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for t in range(sg.TensorsLength()):
            q = sg.Tensors(t).Quantization()
            if (
                q is not None
                and q.DetailsType() == schema.QuantizationDetails.BlockwiseQuantization
            ):
                return True
    return False


def compare(name: str, got, ref) -> None:
    assert len(got) == len(ref), f"{name}: {len(got)} outputs, LiteRT has {len(ref)}"
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        assert g.dtype == r.dtype and g.shape == r.shape, (
            f"{name} output {j}: {g.dtype}{g.shape}, LiteRT {r.dtype}{r.shape}"
        )
        if g.dtype.kind == "f":
            t = litert.tolerance_check(g, r, rel=FLOAT_REL, name=f"{name} output {j}")
            assert t.ok, t.message
        else:
            diff = g.astype(np.int64) - r.astype(np.int64)
            assert not diff.any(), (
                f"{name} output {j}: {int((diff != 0).sum())} of {diff.size} values differ "
                f"(max {int(np.abs(diff).max())})"
            )


@pytest.mark.parametrize("file", FILES)
def test_shared_model_matches_litert_reference(file):
    data = (MODELS / file).read_bytes()
    sigs = signatures(data)
    try:
        runtime = wick.load(data)
        runners = [runtime.signature(s) for s in sigs]
    except wick.WickError as e:
        runners, wick_error = None, e
    else:
        wick_error = None
    fixed, _ = oracle_bytes(data)
    reference = not has_blockwise_quantization(data)
    for sig, runner in zip(sigs, runners or [None] * len(sigs), strict=True):
        inputs = model_inputs(fixed, sig, SEED)
        ref, why = run_oracle(fixed, inputs, sig, reference=reference)
        if ref is None:
            pytest.skip(
                f"LiteRT cannot run {file} (the oracle): {why}; wick "
                + (f"refuses it: {wick_error}" if wick_error else "loads it")
            )
        # LiteRT runs it, so wick must: a refusal (a missing operator included) is a failure.
        assert wick_error is None, f"wick refuses {file}, which LiteRT runs: {wick_error}"
        got = runner(*inputs)
        compare(f"{file} [{sig or 'subgraph 0'}]", got, ref)


def _quant_fields(data: bytes) -> list[tuple[str, int]]:
    """Byte positions of every scale (float32), zero point (int64) and quantized_dimension."""
    schema = _schema()
    m = schema.Model.GetRootAs(data, 0)
    spots = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for t in range(sg.TensorsLength()):
            q = sg.Tensors(t).Quantization()
            if q is None:
                continue
            if q._tab.Offset(8):
                v = q._tab.Vector(q._tab.Offset(8))
                spots += [("f", v + 4 * i) for i in range(q.ScaleLength())]
            if q._tab.Offset(10):
                v = q._tab.Vector(q._tab.Offset(10))
                spots += [("q", v + 8 * i) for i in range(q.ZeroPointLength())]
            if q._tab.Offset(16):
                spots.append(("i", q._tab.Pos + q._tab.Offset(16)))
    return spots


QUANT_FILES = [
    f
    for f in (
        "hello_world_int8.tflite",
        "conv8.tflite",
        "keyword_scrambled.tflite",
        "micro_speech_lstm.tflite",
        "simple_quantized_ops.tflite",
        "person_detect.tflite",
    )
    if f in FILES
]


@pytest.mark.parametrize("file", QUANT_FILES)
def test_mutated_quantization_parameters_are_refused_or_run(file):
    """Hostile scales (0, negative, NaN, inf, denormal, huge), zero points outside every type and
    out-of-range quantized dimensions: wick runs the file or refuses it with an error, never
    crashes (the sanitizer build turns any undefined behaviour here into a failure)."""
    import random

    data = (MODELS / file).read_bytes()
    spots = _quant_fields(data)
    inputs = litert.random_inputs(oracle_bytes(data)[0], seed=SEED)
    rng = random.Random(file)
    floats = [
        0.0,
        -0.0,
        -1.0,
        float("nan"),
        float("inf"),
        -float("inf"),
        1e-45,
        3.4e38,
        1e-20,
        1e20,
    ]
    ints = [-1, 128, 255, 256, -129, 32767, -32768, 65535, 2**31 - 1, -(2**31), 2**40]
    for _ in range(25):
        buf = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            kind, pos = rng.choice(spots)
            if kind == "f":
                struct.pack_into("<f", buf, pos, rng.choice(floats))
            elif kind == "q":
                struct.pack_into("<q", buf, pos, rng.choice(ints))
            else:
                struct.pack_into("<i", buf, pos, rng.choice([-1, 1, 3, 7, 1 << 30]))
        try:
            wick.load(bytes(buf))(*inputs)
        except wick.WickError:
            pass
