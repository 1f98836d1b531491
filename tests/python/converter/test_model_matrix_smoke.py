"""The fast CI subset of the model coverage matrix (bench/coverage; the full matrix is
`.venv/bin/python -m bench.coverage.matrix`, its table docs/coverage.md).

Same row runner as the matrix (``bench.coverage.matrix.run_row``: realistic random init, eager
reference, wick.convert, wick runtime and LiteRT), on a few rows at reduced input size so each
stays well under 20 s.  Bar (docs/testing.md, fp32 whole model): max abs error
<= 1e-4 * max(1, max|ref|) and the same argmax, on wick and on LiteRT."""

from __future__ import annotations

import os
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

pytest.importorskip("ai_edge_litert")

from bench.coverage import matrix, models  # noqa: E402

# (row, input size override or None)
SMOKE = [
    ("tv/mobilenet_v2", 96),
    ("tv/resnet18", 64),
    ("hf/bert", None),
    ("hf/vit", None),
]


@pytest.fixture
def one_thread():
    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("name,size", SMOKE, ids=[n for n, _ in SMOKE])
def test_matrix_row(name, size, one_thread):
    if name.startswith("hf/"):
        pytest.importorskip("transformers")
    row = models.get_row(name)
    res = matrix.run_row(row, size=size)
    assert res["converted"], res.get("error")
    assert res["max_ref"] > 1e-2, f"degenerate reference scale {res['max_ref']:.2e}"
    assert res["wick_ok"], f"wick: {res.get('wick_why')} (err {res.get('wick_err')})"
    assert res["litert_ok"], f"LiteRT: {res.get('litert_why')} (err {res.get('litert_err')})"
    assert res["status"] == "pass"
    if row.tier == "torchvision-cls":
        # CNNs: TRANSPOSE only at the model boundary (NCHW input -> NHWC)
        assert res["transposes"] <= 1, res["transposes"]
