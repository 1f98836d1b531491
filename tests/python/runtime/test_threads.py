"""Threads through the Python API: converted models give bit-identical outputs for
num_threads 1, 2, 3, 4 and 7 (``wick.load(num_threads=...)`` and ``Model.num_threads``), and
the multi-threaded results still match PyTorch eager.

The models are sized so that every parallel path splits into several tasks: indirect-GEMM,
Winograd and 1x1 convolutions, 3x3 depthwise, pooling, linear layers and attention
(BATCH_MATMUL)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import wick
from tests.python.ops._harness import C, In, build
from tests.python.oracles.litert import run_litert

THREAD_COUNTS = (1, 2, 3, 4, 7)


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 32, 3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.pw = torch.nn.Conv2d(32, 64, 1)
        self.grouped = torch.nn.Conv2d(64, 64, 3, padding=1, groups=4)
        self.pool = torch.nn.MaxPool2d(2)
        self.avg = torch.nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.fc = torch.nn.Linear(64, 40)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(self.dw(x))
        x = self.pw(x)
        x = self.grouped(x)
        x = self.avg(self.pool(x))
        x = x.flatten(2).transpose(1, 2)  # [N, HW, C]
        return self.fc(x)


class Attention(torch.nn.Module):
    def __init__(self, dim=96, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        return self.out((a @ v).transpose(1, 2).reshape(b, t, d))


class SmallSpatial(torch.nn.Module):
    """MobileNet's last stages: 14x14 and 7x7 inverted residuals, whose 1x1 convolutions have
    few row tiles and whose depthwise convolutions have few rows (odd counts, 7 rows in 7 tasks),
    then a depthwise convolution with a residual add (a fused epilogue over the whole output)."""

    def __init__(self):
        super().__init__()
        self.expand14 = torch.nn.Conv2d(64, 384, 1)
        self.dw14 = torch.nn.Conv2d(384, 384, 3, stride=2, padding=1, groups=384)
        self.project = torch.nn.Conv2d(384, 160, 1)
        self.expand7 = torch.nn.Conv2d(160, 960, 1)
        self.dw7 = torch.nn.Conv2d(960, 960, 3, padding=1, groups=960)
        self.project7 = torch.nn.Conv2d(960, 160, 1)
        self.dw_res = torch.nn.Conv2d(160, 160, 3, padding=1, groups=160)

    def forward(self, x):
        x = self.project(torch.nn.functional.relu6(self.dw14(torch.relu(self.expand14(x)))))
        y = torch.nn.functional.relu6(self.dw7(torch.nn.functional.relu6(self.expand7(x))))
        x = x + self.project7(y)
        return self.dw_res(x) + x


class ResBlock(torch.nn.Module):
    """A ResNet basic block on a 30x30 map (8x8 Winograd tiles, the last row and column of them
    cut short): 3x3 convolutions with ReLU and with a fused residual add + ReLU."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(24, 40, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(40, 24, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv2(torch.relu(self.conv1(x))) + x)


class Decoder(torch.nn.Module):
    """A segmentation head as MediaPipe's: a 2x bilinear upsampling, its output rows split over
    the threads."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.act = torch.nn.ReLU()
        self.up = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)

    def forward(self, x):
        return self.up(self.act(self.conv(x)))


CASES = {
    "decoder": (Decoder, (1, 8, 64, 64)),
    "convnet": (ConvNet, (1, 3, 96, 96)),
    "resblock": (ResBlock, (2, 24, 30, 30)),
    "small_spatial": (SmallSpatial, (1, 64, 14, 14)),
    "attention": (Attention, (2, 128, 96)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_are_bit_identical_for_any_thread_count(name):
    make, shape = CASES[name]
    torch.manual_seed(0)
    module = make().eval()
    x = torch.randn(*shape)
    m = wick.convert(module, (x,))
    data = bytes(m)
    outs = {}
    for n in THREAD_COUNTS:
        outs[n] = wick.load(data, num_threads=n)(x.numpy())
    for n in THREAD_COUNTS[1:]:
        for got, want in zip(outs[n], outs[1], strict=True):
            assert got.tobytes() == want.tobytes(), f"{name}: {n} threads differ from 1 thread"
    # ... and the threaded result is the right one.
    with torch.no_grad():
        ref = module(x).numpy()
    np.testing.assert_allclose(outs[4][0], ref, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref).max()))


def test_winograd_can_be_turned_off(monkeypatch):
    """WICK_NO_WINOGRAD=1 keeps the 3x3 convolutions on the indirect GEMM: other bits, the same
    values within the parity tolerance (error bound: docs/architecture.md)."""
    torch.manual_seed(2)
    module = ResBlock().eval()
    x = torch.randn(2, 24, 30, 30)
    data = bytes(wick.convert(module, (x,)))
    winograd = wick.load(data)(x.numpy())[0]
    monkeypatch.setenv("WICK_NO_WINOGRAD", "1")
    direct = wick.load(data)(x.numpy())[0]
    assert winograd.tobytes() != direct.tobytes()
    with torch.no_grad():
        ref = module(x).numpy()
    for got in (winograd, direct):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref).max()))


def test_model_num_threads_property_reaches_the_runtime():
    torch.manual_seed(1)
    module = ConvNet().eval()
    x = torch.randn(1, 3, 64, 64)
    m = wick.convert(module, (x,))
    one = m.run(x)[0]
    m.num_threads = 3
    assert m.num_threads == 3
    three = m.run(x)[0]
    assert m._runtime._threads == 3
    assert one.tobytes() == three.tobytes()


@pytest.mark.parametrize(
    "shape, perm",
    [((3, 64, 70, 33), (0, 2, 3, 1)), ((1, 197, 12, 64), (0, 2, 1, 3)), ((600_000,), (0,))],
)
def test_large_transposes_split_over_threads_match_numpy(shape, perm):
    """Copies split along the plan's outer dimension (several tasks at these sizes): every
    element lands where numpy puts it, at any thread count."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    data, _ = build("TRANSPOSE", [In(x), C(np.array(perm, np.int32))])
    want = np.transpose(x, perm)
    for n in (1, 2, 3):
        (got,) = wick.load(data, num_threads=n)(x)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["PAD", "PADV2"])
def test_large_pads_split_over_threads_match_numpy(op):
    """PAD writes each output row once (fill, or fill around the input row), rows split over
    the threads: ResNet-50's stem and stage pads are this size."""
    x = np.random.default_rng(1).standard_normal((2, 114, 114, 64)).astype(np.float32)
    pads = np.array([[0, 1], [1, 2], [3, 1], [0, 2]], np.int32)
    value = np.float32(1.5) if op == "PADV2" else np.float32(0)
    operands = [In(x), C(pads)] + ([C(np.array(value, np.float32))] if op == "PADV2" else [])
    data, _ = build(op, operands)
    want = np.pad(x, pads, constant_values=value)
    for n in (1, 2, 3):
        (got,) = wick.load(data, num_threads=n)(x)
        np.testing.assert_array_equal(got, want)


def test_large_concatenation_split_over_threads_matches_numpy():
    rng = np.random.default_rng(2)
    parts = [rng.standard_normal((2, 56, 56, c)).astype(np.float32) for c in (32, 48, 16)]
    data, _ = build("CONCATENATION", [In(p) for p in parts], dict(axis=3))
    want = np.concatenate(parts, axis=3)
    for n in (1, 2, 3):
        (got,) = wick.load(data, num_threads=n)(*parts)
        np.testing.assert_array_equal(got, want)


def test_large_elementwise_softmax_and_mean_split_over_threads_match_numpy():
    """The vectorized elementwise, softmax and mean kernels split over the threads (64-aligned
    element chunks, softmax rows, mean outer slices): right values, identical at 1-3 threads."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 56, 56, 48)).astype(np.float32)
    ch = rng.standard_normal(48).astype(np.float32)
    cases = [
        (build("LOGISTIC", [In(x)]), [x], 1 / (1 + np.exp(-x.astype(np.float64))), 1e-6),
        (build("ADD", [In(x), In(x[:, ::-1].copy())]), [x, x[:, ::-1].copy()], x + x[:, ::-1], 0),
        (build("MUL", [In(x), C(ch)]), [x], x * ch, 0),
        (
            build("SOFTMAX", [In(x.reshape(-1, 96))], dict(beta=1.0)),
            [x.reshape(-1, 96)],
            None,
            1e-6,
        ),
        (
            build("MEAN", [In(x), C(np.array([1, 2], np.int32))], dict(keep_dims=False)),
            [x],
            x.astype(np.float64).mean(axis=(1, 2)),
            1e-5,
        ),
    ]
    for (data, _), feeds, want, tol in cases:
        if want is None:  # softmax
            z = feeds[0].astype(np.float64)
            e = np.exp(z - z.max(axis=1, keepdims=True))
            want = e / e.sum(axis=1, keepdims=True)
        outs = [wick.load(data, num_threads=n)(*feeds)[0] for n in (1, 2, 3)]
        for got in outs:
            assert got.tobytes() == outs[0].tobytes()
            if tol == 0:
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


class SmallSpatialHead(SmallSpatial):
    """SmallSpatial then global pooling and a linear layer (a GEMM with one row)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(160, 1000)

    def forward(self, x):
        return self.fc(super().forward(x).mean((2, 3)))


def _int8_outputs_agree_over_threads(module, shape):
    """Quantize `module` (seed 0, 4 calibration inputs of `shape`), run it at every thread count
    and assert the outputs are the same bytes as at 1 thread; returns (file, input, outputs at 1)."""
    torch.manual_seed(0)
    module = module.eval()
    x = torch.randn(*shape)
    calib = [(torch.randn(*shape),) for _ in range(4)]
    data = bytes(wick.quantize(module, (x,), calibration=calib))
    outs = {n: wick.load(data, num_threads=n)(x.numpy()) for n in THREAD_COUNTS}
    for n in THREAD_COUNTS[1:]:
        for got, want in zip(outs[n], outs[1], strict=True):
            assert got.tobytes() == want.tobytes(), f"{n} threads differ from 1 thread"
    return data, x, outs[1]


def test_int8_outputs_are_bit_identical_for_any_thread_count():
    # The int8 GEMMs of the 7x7 stages and the one-row linear layer split their columns.
    _int8_outputs_agree_over_threads(SmallSpatialHead(), (1, 64, 14, 14))


class ResNetConvs(torch.nn.Module):
    """ResNet-18's int8 convolution shapes, small: a 7x7 stride-2 stem on 3 channels, a 3x3
    layer over many 32-pixel blocks, 3x3 stride-2 layers down to a 6x6 output (two blocks: the
    AMX convolution's tasks then cut the channels instead) and a 1x1 stride-2 shortcut."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 64, 7, stride=2, padding=3)
        self.c1 = torch.nn.Conv2d(64, 64, 3, padding=1)
        self.c2 = torch.nn.Conv2d(64, 128, 3, stride=2, padding=1)
        self.c3 = torch.nn.Conv2d(128, 256, 3, stride=2, padding=1)
        self.short = torch.nn.Conv2d(128, 256, 1, stride=2)

    def forward(self, x):
        x = torch.relu(self.c1(torch.relu(self.stem(x))))
        x = torch.relu(self.c2(x))
        return torch.relu(self.c3(x) + self.short(x))


def test_int8_convolutions_are_bit_identical_for_any_thread_count_and_match_litert():
    data, x, outs1 = _int8_outputs_agree_over_threads(ResNetConvs(), (1, 3, 48, 48))
    # LiteRT's reference kernels: the int8 arithmetic bit for bit
    want = run_litert(data, [x.numpy()], reference=True)
    for got, ref in zip(outs1, want, strict=True):
        np.testing.assert_array_equal(got, ref)
