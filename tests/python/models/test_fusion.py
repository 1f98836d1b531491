"""Graph-level fusion at prepare (src/core/fuse.c): activations (SiLU as LOGISTIC + MUL,
HARD_SWISH, LOGISTIC, TANH, GELU) and residual ADDs folded into the epilogue of the CONV_2D /
DEPTHWISE_CONV_2D / FULLY_CONNECTED that produces their input.

Each model is converted from PyTorch and run three ways: wick with its default kernels (fused),
wick with the reference kernels forced (fusion off: every op runs on its own), and LiteRT.
The fused run must agree with both within the whole-model fp32 tolerance, and the profile must
show the fused operators skipped (time 0) only where fusion is legal: an intermediate with a
second reader, or that is a graph output, keeps its operators.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import wick
from tests.python.converter.util import run_litert
from tests.python.oracles import litert as litert_oracle

torch.manual_seed(0)
TOL = 1e-4


class ConvAct(torch.nn.Module):
    def __init__(self, act, depthwise=False):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.dw = torch.nn.Conv2d(16, 16, 5, padding=2, groups=16)
        self.pw = torch.nn.Conv2d(16, 16, 1)
        self.act = act
        self.depthwise = depthwise

    def forward(self, x):
        y = self.act(self.conv(x))
        if self.depthwise:
            y = self.act(self.dw(y))
        return self.pw(y) + y  # residual add after a 1x1 conv


class Mlp(torch.nn.Module):
    def __init__(self, approximate, width=32, hidden=64):
        super().__init__()
        self.fc1 = torch.nn.Linear(width, hidden)
        self.fc2 = torch.nn.Linear(hidden, width)
        self.gelu = torch.nn.GELU(approximate=approximate)

    def forward(self, x):
        return self.fc2(self.gelu(self.fc1(x))) + x


class SharedIntermediate(torch.nn.Module):
    """The conv output feeds the SiLU and is also returned: nothing may be fused away."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)

    def forward(self, x):
        t = self.conv(x)
        return torch.nn.functional.silu(t), t * 2.0


class ResidualThenPrelu(torch.nn.Module):
    """MediaPipe's blocks: PRELU(conv(x) + x) -- the PRELU joins after the residual ADD."""

    def __init__(self, channels=16):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 1)
        self.dw = torch.nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.fc = torch.nn.Linear(channels, channels)
        self.prelu1 = torch.nn.PReLU(channels)
        self.prelu2 = torch.nn.PReLU(channels)
        self.prelu3 = torch.nn.PReLU()  # one alpha for every channel: not fused
        with torch.no_grad():
            for m in (self.prelu1, self.prelu2):
                m.weight.copy_(torch.linspace(-0.5, 0.75, channels))

    def forward(self, x):
        y = self.prelu1(self.conv(x) + x)
        y = self.prelu2(self.dw(y))
        return self.prelu3(self.fc(y.permute(0, 2, 3, 1)))


def _run_three_ways(module, x, scheme=None):
    if scheme is None:
        model = wick.convert(module.eval(), (x,))
    else:
        model = wick.quantize(module.eval(), (x,), scheme=scheme)
    data = model.tflite_bytes
    feeds = [x.numpy()]
    fused = wick.load(data).signature(None)
    got = fused(*feeds)
    unfused = wick.load(data, reference=True).signature(None)
    want = unfused(*feeds)
    if scheme is None:
        lite = run_litert(data, feeds, [d.name for d in fused.inputs])
    else:  # XNNPACK quantizes hybrid inputs its own way: the reference kernels are the oracle
        lite = litert_oracle.run_litert(data, feeds, reference=True)
    for g, w, li in zip(got, want, lite, strict=True):
        scale = max(1.0, float(np.abs(w).max()))
        assert np.abs(g - w).max() <= TOL * scale
        assert np.abs(g - li).max() <= TOL * scale
    return fused.profile(), unfused.profile()


def _skipped(profile):
    return [name for name, ns in profile if ns == 0]


@pytest.mark.parametrize(
    "act,skipped",
    [
        (torch.nn.SiLU(), {"LOGISTIC", "MUL", "ADD"}),
        (torch.nn.Hardswish(), {"HARD_SWISH", "ADD"}),
        (torch.nn.Sigmoid(), {"LOGISTIC", "ADD"}),
        (torch.nn.Tanh(), {"TANH", "ADD"}),
    ],
)
@pytest.mark.parametrize("depthwise", [False, True])
def test_conv_activation_and_residual_fused(act, skipped, depthwise):
    prof, ref_prof = _run_three_ways(ConvAct(act, depthwise), torch.randn(1, 8, 12, 10))
    assert set(_skipped(prof)) == skipped, prof
    assert _skipped(ref_prof) == [], ref_prof


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_fully_connected_gelu_and_residual_fused(approximate):
    prof, _ = _run_three_ways(Mlp(approximate), torch.randn(3, 5, 32))
    assert "GELU" in _skipped(prof) and "ADD" in _skipped(prof), prof


def test_hybrid_fully_connected_runs_its_fused_gelu_and_residual():
    # A dynamic-range (int8-weight) FULLY_CONNECTED is a fusion producer like the float one; its
    # kernel once returned without running the fused epilogue, so the GELU and the residual ADD
    # vanished from all-MiniLM-L6-v2's dynamic_int8 file (embedding cosine ~0.04). MiniLM's FFN
    # shapes: 384 -> 1536 -> 384 over 32 tokens.
    x = torch.randn(1, 32, 384) * 3.0
    prof, _ = _run_three_ways(Mlp("none", 384, 1536), x, scheme="dynamic_int8")
    assert "GELU" in _skipped(prof) and "ADD" in _skipped(prof), prof


def test_prelu_with_a_channel_alpha_joins_the_epilogue():
    prof, ref_prof = _run_three_ways(ResidualThenPrelu(), torch.randn(1, 16, 9, 7))
    names = [name for name, _ in prof]
    # the two per-channel PRELUs (after the residual ADD, after the depthwise conv) are fused;
    # the PRELU of one shared alpha stays an operator of its own
    assert _skipped(prof).count("PRELU") == 2 and names.count("PRELU") == 3, prof
    assert _skipped(ref_prof) == [], ref_prof


def test_intermediate_with_another_reader_is_not_fused():
    prof, _ = _run_three_ways(SharedIntermediate(), torch.randn(1, 8, 9, 9))
    assert _skipped(prof) == [], prof
