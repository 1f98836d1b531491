"""No TRANSPOSE beyond the model boundary where an NHWC feature map is flattened into a Linear
layer (docs/converter.md, "Layout"): the layout pass flattens the NHWC tensor as it is and
permutes the constant weight's input columns instead.  Also the ShuffleNet stage boundaries,
where only the model's own channel shuffles may remain.

Every converted file is checked against PyTorch eager on LiteRT *and* on wick's runtime (bar of
docs/testing.md for whole models: 1e-4 * max(1, max|ref|)); TRANSPOSE counts are read from the
converted model (default: one, on the input; channels_last_io=True: none).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
import torchvision
from torch import nn

import wick

from .util import flat_outputs, run_litert, to_numpy

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from bench.coverage.matrix import transpose_counts  # noqa: E402  (the matrix's T / TL columns)

TOL = 1e-4


def _convert_and_compare(module, x, *, channels_last_io=False):
    """Convert, run the file on LiteRT and on wick, compare both with eager; return the model."""
    module = module.eval()
    with torch.no_grad():
        ref = [to_numpy(r) for r in flat_outputs(module(x))]
    model = wick.convert(module, (x,), channels_last_io=channels_last_io)
    feed = to_numpy(x)
    if channels_last_io:
        feed = np.ascontiguousarray(np.transpose(feed, (0, 2, 3, 1)))
    results = {
        "litert": run_litert(model.tflite_bytes, [feed], [s.name for s in model.inputs]),
        "wick": model.run(feed),
    }
    for runtime, got in results.items():
        assert len(got) == len(ref), runtime
        for g, r in zip(got, ref, strict=True):
            assert g.shape == r.shape, (runtime, g.shape, r.shape)
            scale = max(1.0, float(np.abs(r).max()))
            err = float(np.abs(g.astype(np.float64) - r).max())
            assert err <= TOL * scale, f"{runtime}: max abs err {err:.3g} > {TOL} * {scale:.3g}"
    return model


class _Head(nn.Module):
    """conv features (NHWC inside the file) → some flatten → some Linear-like head."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d((4, 4))  # a no-op on the 4x4 map below
        self.fc = nn.Linear(8 * 4 * 4, 10)
        self.fc2 = nn.Linear(8 * 4 * 4, 5)
        self.w = nn.Parameter(torch.randn(8 * 4 * 4, 6))

    def forward(self, x):
        f = torch.relu(self.conv(x))
        if self.kind == "adaptive_noop":
            return self.fc(torch.flatten(self.pool(f), 1))
        if self.kind == "relu_between":
            return self.fc(torch.relu(torch.flatten(f, 1) - 0.5).neg())
        if self.kind == "matmul":
            return f.reshape(f.shape[0], -1) @ self.w
        if self.kind == "two_heads":
            z = f.view(f.size(0), -1)
            return self.fc(z), self.fc2(torch.tanh(z))
        raise AssertionError(self.kind)


@pytest.mark.parametrize("kind", ["adaptive_noop", "relu_between", "matmul", "two_heads"])
def test_flatten_into_linear_has_no_transpose(kind):
    torch.manual_seed(0)
    m = _Head(kind)
    x = torch.randn(2, 3, 4, 4)
    model = _convert_and_compare(m, x)
    assert model.op_counts.get("TRANSPOSE", 0) == 1, model.op_counts  # the NCHW input
    assert "AVERAGE_POOL_2D" not in model.op_counts, model.op_counts
    model = _convert_and_compare(m, x, channels_last_io=True)
    assert model.op_counts.get("TRANSPOSE", 0) == 0, model.op_counts


def test_flatten_also_returned_stays_correct():
    """The flattened NCHW features are an output too: their column order is observable, so the
    transpose must stay (and the numbers stay right)."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.fc = nn.Linear(4 * 5 * 5, 3)

        def forward(self, x):
            z = torch.flatten(self.conv(x), 1)
            return self.fc(z), z

    torch.manual_seed(0)
    model = _convert_and_compare(Net(), torch.randn(1, 3, 5, 5))
    assert model.op_counts.get("TRANSPOSE", 0) == 2, model.op_counts


def test_alexnet_one_transpose():
    """AlexNet at its default 224x224: 6x6 feature map, the 6x6 adaptive pool is a no-op, the
    NHWC map flattens straight into classifier[1] (its columns permuted at conversion)."""
    torch.manual_seed(0)
    m = torchvision.models.alexnet(weights=None)
    model = _convert_and_compare(m, torch.randn(1, 3, 224, 224))
    assert model.op_counts.get("TRANSPOSE", 0) == 1, model.op_counts
    assert transpose_counts(model.tflite_bytes) == (1, 1)  # the input's NCHW -> NHWC
    assert "AVERAGE_POOL_2D" not in model.op_counts, model.op_counts


def test_vgg11_transposes():
    """VGG11's features at 64x64 (a 2x2 map, adaptive-pooled to 7x7 by two interpolation
    matmuls), then flatten → Linear.  The classifier is narrowed to 64 hidden units to keep the
    test fast (its 25088-column first layer, the one whose columns get permuted, stays)."""
    torch.manual_seed(0)
    m = torchvision.models.vgg11(weights=None)
    m.classifier[0] = nn.Linear(512 * 7 * 7, 64)
    m.classifier[3] = nn.Linear(64, 64)
    m.classifier[6] = nn.Linear(64, 10)
    x = torch.randn(1, 3, 64, 64)
    model = _convert_and_compare(m, x)
    assert model.op_counts.get("TRANSPOSE", 0) == 1, model.op_counts
    model = _convert_and_compare(m, x, channels_last_io=True)
    assert model.op_counts.get("TRANSPOSE", 0) == 0, model.op_counts


def test_shufflenet_only_channel_shuffles_remain():
    """ShuffleNetV2's channel shuffle (view → transpose(1, 2) → view) is a permutation the model
    itself computes: one TRANSPOSE per shuffle stays (16 in x0_5).  Every layout transpose
    around it cancels, including at the stride-2 stage boundaries (test_models.py checks the
    default I/O: 1 + 16)."""
    torch.manual_seed(0)
    m = torchvision.models.shufflenet_v2_x0_5(weights=None)
    model = _convert_and_compare(m, torch.randn(1, 3, 64, 64), channels_last_io=True)
    assert model.op_counts.get("TRANSPOSE", 0) == 16, model.op_counts
    # the coverage matrix tells them apart: 16 TRANSPOSEs in all, none of them a layout one
    assert transpose_counts(model.tflite_bytes) == (16, 0)
