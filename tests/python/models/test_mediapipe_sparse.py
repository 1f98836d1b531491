"""MediaPipe's sparse detectors (mediapipe 0.10.x wheel, ``mediapipe/modules``) on wick and on
LiteRT's default interpreter: fp16 weights stored sparse (SPARSE_CSR on the input-channel level)
-> DENSIFY -> DEQUANTIZE -> CONV_2D. Bar: within 1e-4 * max(1, max|ref|) (whole float models
sum in other orders).

The files are not in the repository. They are found through $WICK_MEDIAPIPE_MODULES (a folder
holding ``face_detection/`` and ``pose_detection/``) or an installed ``mediapipe`` package; the
test is skipped, with that reason, when neither has them.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

import wick
from tests.python.oracles import litert

FILES = [
    "face_detection/face_detection_full_range_sparse.tflite",
    "pose_detection/pose_detection.tflite",
]
FLOAT_REL = 1e-4


def _modules_dir() -> Path | None:
    env = os.environ.get("WICK_MEDIAPIPE_MODULES")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("mediapipe")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "modules"
    return None


@pytest.mark.parametrize("name", FILES)
def test_sparse_detector_matches_litert(name):
    root = _modules_dir()
    if root is None or not (root / name).is_file():
        pytest.skip(
            f"{name} not found (set WICK_MEDIAPIPE_MODULES to mediapipe/modules of the "
            f"mediapipe wheel, or install mediapipe); looked in {root}"
        )
    path = root / name
    ops = litert.op_histogram(path)
    assert ops.get("DENSIFY", 0) > 0, f"{name} has no DENSIFY: {ops}"
    feeds = litert.random_inputs(path, seed=0)
    ref = litert.run_litert(path, feeds)
    got = wick.load(str(path))(*feeds)
    assert len(got) == len(ref)
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        t = litert.tolerance_check(g, np.asarray(r), rel=FLOAT_REL, name=f"{name} output {j}")
        assert t, t.message
