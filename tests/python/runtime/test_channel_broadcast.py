"""Per-channel broadcasts over many rows (src/ops/parallel.c, repeated_rows): squeeze-excite
gating MUL(x [N, H, W, C], gate [N, 1, 1, C]) and biases over few channels. For C up to 256 the
channel vector is repeated into a buffer so one kernel call covers many rows; each element still
sees one IEEE operation on the same two values, so the results equal NumPy's float32 broadcast
exactly (any thread count), and LiteRT's within the float tolerance. Both operand orders (the
broadcast one first matters for SUB and DIV) and batches (the gate changes per image) are
covered, and channel counts around the cutoff.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(5)
NUMPY = {"MUL": np.multiply, "ADD": np.add, "SUB": np.subtract, "DIV": np.divide}


def gate_model(op, shape, gate_first):
    """x [N, H, W, C] op gate [N, 1, 1, C] (or gate op x), both inputs."""
    n, _, _, c = shape
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", shape, np.float32)
    g = sg.add_tensor("gate", [n, 1, 1, c], np.float32)
    y = sg.add_tensor("y", shape, np.float32)
    sg.add_operator(op, [g, x] if gate_first else [x, g], [y])
    sg.set_inputs([x, g])
    sg.set_outputs([y])
    return w.finish()


@pytest.mark.parametrize("op", ["MUL", "ADD", "SUB", "DIV"])
@pytest.mark.parametrize("gate_first", [False, True])
@pytest.mark.parametrize(
    "shape",
    [(1, 56, 56, 16), (2, 9, 7, 3), (1, 5, 5, 1), (1, 6, 7, 255), (2, 4, 4, 256), (1, 3, 3, 257)],
)
@pytest.mark.parametrize("threads", [1, 3])
def test_per_channel_broadcast_is_exact(op, gate_first, shape, threads):
    x = RNG.standard_normal(shape).astype(np.float32)
    gate = RNG.uniform(0.5, 2.0, size=(shape[0], 1, 1, shape[3])).astype(np.float32)
    data = gate_model(op, list(shape), gate_first)
    got = wick.load(data, num_threads=threads)(x, gate)
    a, b = (gate, x) if gate_first else (x, gate)
    want = NUMPY[op](a, b)
    assert got[0].tobytes() == want.tobytes()
    compare(got, run_litert(data, [x, gate]))
