"""Batch-norm folding into convolutions (passes/batchnorm.py) with the float64 work split into
blocks of output channels: force tiny blocks so every layout (plain, grouped, transposed)
folds over many blocks, and compare the converted files with eager on LiteRT."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from wick.converter.passes import batchnorm

from .util import check


def _bn(c: int) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(c)
    g = torch.Generator().manual_seed(c)
    bn.running_mean.copy_(torch.rand(c, generator=g) - 0.5)
    bn.running_var.copy_(torch.rand(c, generator=g) + 0.5)
    bn.weight.data.copy_(torch.rand(c, generator=g) + 0.5)
    bn.bias.data.copy_(torch.rand(c, generator=g) - 0.5)
    return bn


@pytest.mark.parametrize(
    "conv",
    [
        nn.Conv2d(4, 6, 3, padding=1),
        nn.Conv2d(4, 6, 3, padding=1, groups=2, bias=False),
        nn.ConvTranspose2d(4, 6, 4, stride=2, padding=1),
    ],
    ids=["conv", "grouped", "transposed"],
)
def test_folded_in_blocks(conv, monkeypatch):
    monkeypatch.setattr(batchnorm, "_BLOCK", 7)  # a block is one row of the weight
    torch.manual_seed(0)
    m = nn.Sequential(conv, _bn(6)).eval()
    model, _ = check(m, torch.randn(1, 4, 6, 6), tol=1e-5)
    assert "MUL" not in model.op_counts and "ADD" not in model.op_counts, model.op_counts
