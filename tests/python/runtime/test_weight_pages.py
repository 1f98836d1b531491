"""Packed float weights are not resident twice (wick_op_release_input, src/core/op_ctx.c):
a FULLY_CONNECTED that packs its float32 weights at prepare lets the file's pages of those
weights go when the model is mapped from a file, so the process holds the packed copy alone;
a model given as bytes in memory keeps its bytes (they are the caller's) and still computes the
same outputs.

Measured in a child process (VmRSS from /proc, Linux only): a 64 MB weight matrix, loaded from
a path, prepared and run, adds about 64 MB (the packed copy), not 128 MB.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import wick
from wick.tflite.writer import ModelWriter

N, K = 4096, 4096  # 64 MB of float32 weights


def fc_model(n=N, k=K, seed=0):
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, k], np.float32)
    wt = sg.add_constant("w", rng.standard_normal((n, k)).astype(np.float32))
    y = sg.add_tensor("y", [1, n], np.float32)
    sg.add_operator("FULLY_CONNECTED", [x, wt], [y], {})
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    import wick

    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024

    before = rss_mb()
    runner = wick.load(sys.argv[1]).signature(None)
    y = runner(np.ones((1, int(sys.argv[2])), np.float32))[0]
    print(rss_mb() - before, float(y.sum()))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads VmRSS from /proc")
def test_file_pages_of_packed_weights_leave_memory(tmp_path):
    path = tmp_path / "fc.tflite"
    data = fc_model()
    path.write_bytes(data)
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(K)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.split()
    grew, total = float(out[0]), float(out[1])
    weights_mb = N * K * 4 / 2**20
    assert grew < 1.4 * weights_mb, f"RSS grew by {grew:.0f} MB for {weights_mb:.0f} MB of weights"
    # the same outputs from the bytes in memory (nothing released there)
    want = wick.load(data).signature(None)(np.ones((1, K), np.float32))[0]
    assert abs(float(want.sum()) - total) <= 1e-3 * max(1.0, abs(total))
