"""LiteRT as an oracle that may crash: run it in a child process, and feed it what it needs.

LiteRT's reference resolver aborts the whole process on some valid files (a CHECK in a kernel's
prepare) and its default interpreter refuses some files its reference kernels run, so the real-
file tests (test_shared_models, the corpus in tests/corpus) call it here: ``run_oracle`` returns
the outputs, or ``(None, reason)`` — "peer cannot run", never a crash of the test process.

Also the input preparation those tests share:

* ``oracle_bytes``: a copy whose out-of-range ``quantized_dimension`` fields are 0 (LiteRT
  refuses them; wick takes the original bytes);
* ``model_inputs``: seeded inputs that fit each input's type and range
  (``litert.random_inputs``), with TRANSPOSE_CONV output-shape inputs fed the declared shape.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.python.oracles import litert

REPO = Path(__file__).resolve().parents[3]


def _schema():
    from ai_edge_litert import schema_py_generated as schema

    return schema


def oracle_bytes(data: bytes) -> tuple[bytes, int]:
    """A copy whose out-of-range quantized_dimension fields are 0 (LiteRT refuses them)."""
    schema = _schema()
    buf = bytearray(data)
    m = schema.Model.GetRootAs(data, 0)
    patched = 0
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for t in range(sg.TensorsLength()):
            tensor = sg.Tensors(t)
            q = tensor.Quantization()
            if q is None:
                continue
            off = q._tab.Offset(16)  # vtable slot of field 6, quantized_dimension
            if off and not 0 <= q.QuantizedDimension() < max(tensor.ShapeLength(), 1):
                struct.pack_into("<i", buf, q._tab.Pos + off, 0)
                patched += 1
    return bytes(buf), patched


def shape_feeds(data: bytes, subgraph: int) -> dict[int, np.ndarray]:
    """Tensor index -> value for graph inputs that are TRANSPOSE_CONV output shapes."""
    schema = _schema()
    m = schema.Model.GetRootAs(data, 0)
    codes = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        codes.append(max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode()))
    sg = m.Subgraphs(subgraph)
    graph_inputs = {sg.Inputs(i) for i in range(sg.InputsLength())}
    feeds = {}
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        if codes[op.OpcodeIndex()] != schema.BuiltinOperator.TRANSPOSE_CONV:
            continue
        shape_t = op.Inputs(0)
        if shape_t in graph_inputs:
            out = sg.Tensors(op.Outputs(0))
            feeds[shape_t] = np.array([out.Shape(j) for j in range(out.ShapeLength())], np.int32)
    return feeds


def model_inputs(data: bytes, signature: str | None, seed: int = 0) -> list[np.ndarray]:
    inputs = litert.random_inputs(data, seed=seed, signature=signature)
    details = litert.input_details(data, signature=signature)
    subgraph = litert.signature_order(data)[signature]["subgraph"] if signature else 0
    special = shape_feeds(data, subgraph)
    for i, d in enumerate(details):
        if d.index in special and special[d.index].shape == inputs[i].shape:
            inputs[i] = special[d.index].astype(inputs[i].dtype)
    return inputs


def signatures(data: bytes) -> list[str | None]:
    keys = list(litert.signature_order(data))
    return keys or [None]


_CHILD = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
from tests.python.oracles.litert import run_litert
d = np.load(sys.argv[3])
n = int(d["n"])
sig = str(d["sig"]) or None
outs = run_litert(open(sys.argv[2], "rb").read(), [d[f"in{i}"] for i in range(n)],
                  signature=sig, reference=bool(int(d["ref"])), num_threads=int(d["threads"]))
np.savez(sys.argv[4], n=len(outs), **{f"out{i}": o for i, o in enumerate(outs)})
"""


def run_oracle(
    data: bytes, inputs, signature: str | None, reference: bool = True, threads: int = 1
):
    """LiteRT's outputs (its reference kernels, or its default interpreter with XNNPACK), or
    ``(None, reason)`` when LiteRT crashes or refuses the file."""
    with tempfile.TemporaryDirectory() as tmp:
        model, ins, outs = (Path(tmp) / n for n in ("m.tflite", "in.npz", "out.npz"))
        model.write_bytes(data)
        np.savez(
            ins,
            n=len(inputs),
            sig=signature or "",
            ref=int(reference),
            threads=threads,
            **{f"in{i}": a for i, a in enumerate(inputs)},
        )
        try:
            p = subprocess.run(
                [sys.executable, "-c", _CHILD, str(REPO), str(model), str(ins), str(outs)],
                capture_output=True,
                text=True,
                timeout=900,
            )
        except subprocess.TimeoutExpired:
            return None, "LiteRT took over 900 s"
        if p.returncode != 0:
            lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
            why = lines[-1] if lines else ""
            if p.returncode < 0:
                why = f"crashed with signal {-p.returncode}"
            return None, why[:400]
        with np.load(outs) as z:
            return [z[f"out{i}"] for i in range(int(z["n"]))], ""
