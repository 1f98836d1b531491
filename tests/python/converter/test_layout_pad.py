"""The input TRANSPOSE goes above a PAD (passes/layout.py, hoist_transposes_above_pads).

A first convolution whose PyTorch padding is not TFLite SAME (stride 2, even input) gets an
explicit PAD.  Sinking moves the input's NCHW->NHWC transpose below that PAD, where it is stuck
in front of the convolution; moving it back up transposes the unpadded input and leaves
PAD -> CONV_2D, which wick's runtime folds into the convolution's padding.  The file must still
match PyTorch eager (on LiteRT, through ``check``, and on wick), the PAD must follow the
TRANSPOSE, and wick must skip a zero PAD (0 ns in the profile) — and run a PADV2 that pads
with another value, whose counts (asymmetric here) the hoist permuted into NHWC.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import wick

from .util import check

torch.manual_seed(0)


class Stem(nn.Module):
    def __init__(self, pad_value):
        super().__init__()
        self.pad_value = pad_value
        padding = 1 if pad_value is None else 0
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=padding)
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)

    def forward(self, x):
        if self.pad_value is not None:  # asymmetric, H and W differ
            x = nn.functional.pad(x, (1, 2, 0, 3), value=self.pad_value)
        return self.dw(torch.relu(self.conv(x)))


@pytest.mark.parametrize("pad_value, pad_op", [(None, "PAD"), (0.5, "PADV2")])
def test_input_transpose_moves_above_the_stem_pad(pad_value, pad_op):
    module = Stem(pad_value).eval()
    x = torch.randn(2, 3, 16, 20)
    model, _ = check(module, x, tol=1e-4)
    runner = wick.load(model.tflite_bytes).signature(None)
    prof = runner.profile()
    ops = [name for name, _ in prof]
    assert ops.index("TRANSPOSE") < ops.index(pad_op) < ops.index("CONV_2D"), ops
    assert ops.count("TRANSPOSE") == 2, ops  # the input's, and the output's back to NCHW
    skipped = [ns == 0 for name, ns in prof if name == pad_op]
    assert skipped and all(skipped) == (pad_value is None) and any(skipped) == all(skipped), prof
    with torch.no_grad():
        want = module(x).numpy()
    got = runner(np.ascontiguousarray(x.numpy()))[0]
    assert np.abs(got - want).max() <= 1e-4 * max(1.0, float(np.abs(want).max()))
