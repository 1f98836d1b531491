"""TFLite_Detection_PostProcess (the SSD box decoder + NMS custom operator) on the NNAPI delegate
as DETECTION_POSTPROCESSING (docs/nnapi.md, "Detection post-processing"), against the test NNAPI
implementation (tests/nnapi/test_nnapi_ops_detection.c computes it with its own code).

The files are those of tests/python/ops/test_custom_ops.py (checked there against LiteRT). At
feature levels 27, 28, 29, 30, 31 and 1000008: the forms whose NNAPI fields mean the same (a
background column, fast NMS with one class per detection, or regular NMS) run on NNAPI from 29
with a note, below it on the CPU with "needs NNAPI feature level 29"; outputs equal CPU-only's
(boxes within 1e-5 * max(1, |ref|), classes, scores and counts exactly); the test runtime
rejected nothing. The other forms stay on the CPU with the reason: no background column, fast
NMS with several classes per detection, run-time anchors.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops.test_custom_ops import (
    DETECT_CASES,
    _detect_arrays,
    _detect_model,
    _detect_options,
)
from tests.python.runtime.test_nnapi import LEVELS, LIB, _assert_match

pytestmark = pytest.mark.skipif(
    LIB is None,
    reason="no libwick_test_nnapi.so next to libwick.so (build the C tests: cmake --build build)",
)


def _case(n, classes, background, max_det, max_cls, regular, dpc, box_len, **kw):
    rng = np.random.default_rng(n * 100 + classes * 10 + max_cls + regular)
    enc, scores, anchors = _detect_arrays(rng, n, classes + background, box_len)
    opts = _detect_options(
        max_detections=max_det,
        max_classes_per_detection=max_cls,
        detections_per_class=dpc,
        use_regular_nms=regular,
        num_classes=classes,
    )
    return _detect_model(enc, scores, anchors, opts, max_det, max_cls, **kw)


def _mapped(case):
    _, _, background, _, max_cls, regular, _, _ = case
    return background and (regular or max_cls == 1)


MAPPED = [c for c in DETECT_CASES if _mapped(c)]
DECLINED = [
    (c, "max_classes_per_detection" if not c[5] and c[4] != 1 else "score columns")
    for c in DETECT_CASES
    if not _mapped(c)
]


@pytest.mark.parametrize(
    "case", MAPPED, ids=[f"{c[0]}x{c[1]}-{'reg' if c[5] else 'fast'}" for c in MAPPED]
)
def test_mapped_forms_match_the_cpu(case, monkeypatch, runtime_counters):
    data, feeds = _case(*case)
    ref = [np.asarray(v) for v in wick.load(data)(*feeds)]
    assert ref[3][0] > 0
    for level in LEVELS:
        monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
        runtime_counters.wick_test_nnapi_reset_counters()
        rt = wick.load(data, delegate=f"nnapi:library={LIB}")
        (record,) = rt.delegation
        what = f"{case} at level {level}"
        if level >= 29:
            assert record.delegate == "nnapi", f"{what}: {record}"
            assert "DETECTION_POSTPROCESSING" in record.note, record
        else:
            assert record.delegate is None and "needs NNAPI feature level 29" in record.reason
        got = [np.asarray(v) for v in rt(*feeds)]
        _assert_match(got, ref, what)
        assert runtime_counters.wick_test_nnapi_rejections() == 0, (
            what,
            runtime_counters.wick_test_nnapi_last_error(),
        )
        assert runtime_counters.wick_test_nnapi_misuses() == 0


@pytest.mark.parametrize("case, why", DECLINED, ids=[f"{c[0]}-{w[:10]}" for c, w in DECLINED])
def test_other_forms_stay_on_the_cpu(case, why, monkeypatch, runtime_counters):
    data, feeds = _case(*case)
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "1000008")
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    (record,) = rt.delegation
    assert record.delegate is None and why in record.reason, record
    ref = [np.asarray(v) for v in wick.load(data)(*feeds)]
    for g, r in zip(rt(*feeds), ref, strict=True):
        np.testing.assert_array_equal(np.asarray(g), r)


def test_run_time_anchors_stay_on_the_cpu(monkeypatch):
    data, feeds = _case(60, 5, True, 10, 1, False, 5, 4, const_anchors=False)
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "30")
    (record,) = wick.load(data, delegate=f"nnapi:library={LIB}").delegation
    assert record.delegate is None and "run-time anchors" in record.reason, record
