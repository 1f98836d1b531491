"""MediaPipe's sparse detectors (mediapipe 0.10.x wheel, ``mediapipe/modules``) on wick and on
LiteRT's default interpreter: fp16 weights stored sparse (SPARSE_CSR on the input-channel level)
-> DENSIFY -> DEQUANTIZE -> CONV_2D. Bar: within 1e-4 * max(1, max|ref|) (whole float models
sum in other orders).

The files are not in the repository: they come from the real-model corpus (tests/corpus: the
mediapipe 0.10.21 wheel fetched into $WICK_CORPUS_DIR, each file's SHA-256 pinned); the test
is skipped, with the reason, when the corpus cannot be built here (no package index).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.corpus import sources
from tests.python.oracles import litert

FILES = ["face_detection_full_range_sparse", "pose_detection"]
FLOAT_REL = 1e-4


def _corpus_file(name: str):
    entry = next(e for e in sources.ENTRIES if e.source == "mediapipe" and e.name == name)
    try:
        sources.build([entry], say=lambda m: None)
    except Exception as e:  # noqa: BLE001 - a visible skip with the reason
        pytest.skip(f"cannot fetch {sources.MEDIAPIPE} for {name}: {type(e).__name__}: {e}")
    return entry.path(sources.corpus_dir())


@pytest.mark.parametrize("name", FILES)
def test_sparse_detector_matches_litert(name):
    path = _corpus_file(name)
    ops = litert.op_histogram(path)
    assert ops.get("DENSIFY", 0) > 0, f"{name} has no DENSIFY: {ops}"
    feeds = litert.random_inputs(path, seed=0)
    ref = litert.run_litert(path, feeds)
    got = wick.load(str(path))(*feeds)
    assert len(got) == len(ref)
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        t = litert.tolerance_check(g, np.asarray(r), rel=FLOAT_REL, name=f"{name} output {j}")
        assert t, t.message
