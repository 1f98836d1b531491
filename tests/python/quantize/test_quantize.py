"""wick.quantize: wick's own PT2E quantizer, calibration checks, float-island reports, the
dynamic-range (hybrid) and fp16-weight schemes, and accuracy on real data.

Oracles:
* LiteRT's reference kernels (``OpResolverType.BUILTIN_REF``) run the same file: wick's runtime
  must be bit-exact with them on int8 models (docs/format.md: LiteRT's double-rounding reference);
  LiteRT's default kernels requantize in float and may differ by 1 LSB per int8 op, checked on a
  one-layer model where that bound is meaningful.
* torch's own ``convert_pt2e`` reference module (``Model.reference``: float ops between explicit
  quantize/dequantize): the int8 kernels round at the same points from integer sums, so a small
  network agrees within one output quantization step.
* PyTorch eager for the weight-only schemes, within a bound derived from the weight rounding.
* A CNN trained here on scikit-learn's digits (shipped with the package, no network).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torchvision
from torch import nn

import wick
import wick.zoo

from ..converter.test_models import TinyBert

pytest.importorskip("torchao.quantization.pt2e.quantize_pt2e")
litert = pytest.importorskip("ai_edge_litert.interpreter")


def _wick_runtime() -> bool:
    try:
        from wick import runtime

        runtime.library_path()
        return True
    except Exception:
        return False


needs_runtime = pytest.mark.skipif(not _wick_runtime(), reason="libwick not built")


def _litert(model, args, reference: bool):
    kind = litert.OpResolverType.BUILTIN_REF if reference else litert.OpResolverType.AUTO
    it = litert.Interpreter(model_content=model.tflite_bytes, experimental_op_resolver_type=kind)
    out = it.get_signature_runner("serving_default")(
        **{s.name: np.asarray(a) for s, a in zip(model.inputs, args, strict=True)}
    )
    return [out[k] for k in sorted(out, key=lambda s: int(s.split("_")[-1]))]


def _quantize(m, args, calib, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return wick.quantize(m, args, calibration=calib, **kw)


def _output_steps(model) -> list[float]:
    """The scale of each output's final DEQUANTIZE in the PT2E reference."""
    gm = model.reference
    out = [n for n in gm.graph.nodes if n.op == "output"][0]
    steps = []
    for n in out.args[0]:
        assert "dequantize_per_tensor" in str(n.target), n.target
        steps.append(float(n.args[1]))
    return steps


def _assert_fully_integer(model):
    """Only the input QUANTIZE(s) and output DEQUANTIZE(s) touch float; everything between
    reads and writes int8 (or int32 bias / index) tensors."""
    assert model.float_islands == [], model.float_islands
    it = litert.Interpreter(model_content=model.tflite_bytes)
    dtype = {d["index"]: np.dtype(d["dtype"]) for d in it.get_tensor_details()}
    seen_dequantize = False
    for op in it._get_ops_details():
        name = op["op_name"]
        types = {dtype[i] for i in [*op["inputs"], *op["outputs"]] if i >= 0}
        if name == "DEQUANTIZE":
            seen_dequantize = True
        if name in ("QUANTIZE", "DEQUANTIZE") or np.dtype(np.float32) not in types:
            continue
        # float ops only outside the int8 region: the embedding lookups and the mask
        # arithmetic before the first QUANTIZE; nothing after an output DEQUANTIZE
        assert not seen_dequantize and name in ("GATHER", "CAST", "SUB", "MUL", "RESHAPE"), op


# ---- a small CNN that uses every annotation kind ------------------------------------------


class Zoo(nn.Module):
    """conv+BN+ReLU (fused), depthwise, max/avg/adaptive pools, add, mul by a number, cat,
    hardswish, sigmoid (fixed parameters), SiLU, GELU, tanh, mean, flatten, linear+ReLU."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c2 = nn.Conv2d(16, 12, 1)
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        z = nn.functional.hardswish(self.dw(y)) * 0.5
        y = torch.cat([nn.functional.max_pool2d(y, 2), nn.functional.avg_pool2d(z, 2)], 1)
        y = self.c2(y)
        y = nn.functional.silu(y) + torch.sigmoid(y) * nn.functional.gelu(y)
        y = nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.tanh(self.fc2(torch.relu(self.fc1(y))))


@pytest.fixture(scope="module")
def zoo():
    torch.manual_seed(0)
    m = wick.zoo.realistic_init_(Zoo().eval())
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(2, 3, 16, 16, generator=g),) for _ in range(4)]
    x = torch.randn(2, 3, 16, 16, generator=g)
    return _quantize(m, (x,), calib), x


def test_zoo_fully_integer_with_fused_activations(zoo):
    model, _ = zoo
    _assert_fully_integer(model)
    ops = model.op_counts
    assert ops["QUANTIZE"] == 1 and ops["DEQUANTIZE"] == 1, ops
    # conv+BN+ReLU and linear+ReLU carry their ReLU as a fused activation
    assert "RELU" not in ops, ops
    assert ops["LOGISTIC"] >= 1 and ops["TANH"] == 1 and ops["GELU"] == 1, ops
    assert "float islands in the int8 model: none" in model.summary()


@needs_runtime
def test_zoo_bit_exact_with_litert_reference_kernels(zoo):
    model, x = zoo
    np.testing.assert_array_equal(model.run(x)[0], _litert(model, [x.numpy()], reference=True)[0])


def test_zoo_matches_pt2e_reference_within_one_step(zoo):
    model, x = zoo
    (step,) = _output_steps(model)
    with torch.no_grad():
        ref = model.reference(x).numpy()
    got = _litert(model, [x.numpy()], reference=True)[0]
    assert np.abs(got - ref).max() <= step + 1e-6, (np.abs(got - ref).max(), step)


@needs_runtime
@pytest.mark.parametrize("layer", ["conv", "linear"])
def test_one_layer_within_one_lsb_of_litert_default_kernels(layer):
    torch.manual_seed(0)
    if layer == "conv":
        m, shape = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU()), (1, 8, 12, 12)
    else:
        m, shape = nn.Sequential(nn.Linear(64, 32)), (4, 64)
    calib = [(torch.randn(shape),) for _ in range(3)]
    x = torch.randn(shape)
    model = _quantize(m.eval(), (x,), calib)
    (step,) = _output_steps(model)
    ours = model.run(x)[0]
    np.testing.assert_array_equal(ours, _litert(model, [x.numpy()], reference=True)[0])
    assert np.abs(ours - _litert(model, [x.numpy()], reference=False)[0]).max() <= step * 1.0001


@needs_runtime
@pytest.mark.parametrize("padding,output_padding", [(0, 0), (1, 1)])
def test_transposed_conv_int8(padding, output_padding):
    """conv_transpose2d: int8 TRANSPOSE_CONV with per-channel weights and an int32 bias (the
    padded form crops the VALID result: an int8 SLICE)."""
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.ConvTranspose2d(8, 4, 3 - 2 * padding + 2 * padding, 2, padding, output_padding),
        nn.ReLU(),
        nn.Conv2d(4, 4, 1),
    ).eval()
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 8, 8, generator=g),) for _ in range(2)]
    x = torch.randn(1, 3, 8, 8, generator=g)
    model = _quantize(m, (x,), calib)
    _assert_fully_integer(model)
    assert model.op_counts["TRANSPOSE_CONV"] == 1
    ours = model.run(x)[0]
    np.testing.assert_array_equal(ours, _litert(model, [x.numpy()], reference=True)[0])
    (step,) = _output_steps(model)
    assert np.abs(ours - model.reference(x).detach().numpy()).max() <= step + 1e-6


# ---- whole networks: fully integer and bit-exact with LiteRT's reference kernels -----------


@pytest.mark.slow  # ~10 s (two torch.export runs of a 150-op graph); kept out of the ASan run
@needs_runtime
def test_mobilenet_v2_fully_integer():
    torch.manual_seed(0)
    m = wick.zoo.realistic_init_(torchvision.models.mobilenet_v2(num_classes=10).eval())
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 32, 32, generator=g),) for _ in range(2)]
    x = torch.randn(1, 3, 32, 32, generator=g)
    model = _quantize(m, (x,), calib)
    _assert_fully_integer(model)
    assert model.op_counts["QUANTIZE"] == 1 and model.op_counts["DEQUANTIZE"] == 1
    assert model.op_counts["CONV_2D"] == 35 and model.op_counts["DEPTHWISE_CONV_2D"] == 17
    np.testing.assert_array_equal(model.run(x)[0], _litert(model, [x.numpy()], reference=True)[0])


@needs_runtime
def test_bert_encoder_fully_integer():
    """Embeddings, layer norm (int8 MEAN/SUB/BATCH_MATMUL/MUL/RSQRT), attention (int8 BATCH_MATMUL,
    SOFTMAX with fixed parameters), GELU, tanh pooler: no float op between the QUANTIZEs
    after the embedding lookups and the output DEQUANTIZEs."""
    torch.manual_seed(0)
    m = TinyBert(layers=1).eval()
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 10:] = 0
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randint(0, 100, (2, 16), generator=g), mask) for _ in range(3)]
    ids = torch.randint(0, 100, (2, 16), generator=g)
    model = _quantize(m, (ids, mask), calib)
    _assert_fully_integer(model)
    ops = model.op_counts
    # BATCH_MATMUL: QK^T and PV, and each layer norm's sum of squares d^T d (rewrite.py)
    assert ops["RSQRT"] == 3 and ops["SOFTMAX"] == 1 and ops["BATCH_MATMUL"] == 2 + 3, ops
    for ours, ref in zip(
        model.run(ids, mask), _litert(model, [ids.numpy(), mask.numpy()], True), strict=True
    ):
        np.testing.assert_array_equal(ours, ref)


@pytest.mark.slow  # ~15 s under load: torchvision's ViT through export twice
@needs_runtime
def test_vit_fully_integer():
    """torchvision's ViT: nn.MultiheadAttention's scaled_dot_product_attention is spelled out
    (int8 BATCH_MATMUL + SOFTMAX), layer norms become int8 MEAN/SUB/MUL/RSQRT, GELU int8."""
    torch.manual_seed(0)
    m = torchvision.models.VisionTransformer(
        image_size=32,
        patch_size=8,
        num_layers=1,
        num_heads=4,
        hidden_dim=32,
        mlp_dim=64,
        num_classes=10,
    ).eval()
    nn.init.normal_(m.heads.head.weight)
    g = torch.Generator().manual_seed(1)
    calib = [(torch.randn(1, 3, 32, 32, generator=g),) for _ in range(2)]
    x = torch.randn(1, 3, 32, 32, generator=g)
    # plain int8 everywhere (target=None): the default target would keep some layer norms at
    # 16x8 on these random weights, with their RSQRT float by design
    model = _quantize(m, (x,), calib, target=None)
    _assert_fully_integer(model)
    assert model.op_counts["QUANTIZE"] == 1 and model.op_counts["SOFTMAX"] == 1
    np.testing.assert_array_equal(model.run(x)[0], _litert(model, [x.numpy()], reference=True)[0])


# ---- calibration data checked before any work -----------------------------------------------


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.fc(x)


@pytest.mark.parametrize(
    "calib, match",
    [
        ([], "empty"),
        (None, "needs calibration"),
        (torch.randn(3, 4), "not a single tensor"),
        ([(torch.randn(3, 5),)], r"shape float32\[3, 5\] does not match .* float32\[3, 4\]"),
        ([(torch.randn(3, 4).double(),)], "dtype float64"),
        ([(torch.randn(3, 4), torch.randn(3, 4))], "has 2 input"),
        ([(torch.randn(3, 4),), (torch.randn(2, 4),)], "batch 1"),
        ([("text",)], "expected a tensor"),
        (5, "iterable"),
    ],
)
def test_calibration_mismatch_raises_before_any_work(calib, match):
    m = Counting().eval()
    with pytest.raises(wick.quantize.CalibrationError, match=match) as e:
        wick.quantize(m, (torch.randn(3, 4),), calibration=calib)
    assert isinstance(e.value, wick.ConversionError) and isinstance(e.value, ValueError)
    assert m.calls == 0  # neither export nor calibration ran


def test_numpy_and_bare_tensor_batches_are_accepted():
    m = Counting()  # in training mode: quantized in eval mode, then left as it was
    calib = [np.random.default_rng(0).standard_normal((3, 4), dtype=np.float32), torch.randn(3, 4)]
    model = _quantize(m, (torch.randn(3, 4),), calib)
    assert model.op_counts["FULLY_CONNECTED"] == 1
    assert m.training


# ---- float islands: reported, and only where the user asks ----------------------------------


class WithErf(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 3)

    def forward(self, x):
        return self.b(torch.erf(self.a(x)))  # erf: no int8 kernel


def test_float_island_is_reported_with_source_line():
    torch.manual_seed(0)
    x = torch.randn(2, 8)
    with pytest.warns(UserWarning, match=r"stay float") as w:
        model = wick.quantize(WithErf().eval(), (x,), calibration=[(torch.randn(2, 8),)])
    msg = "\n".join(str(r.message) for r in w if "stay float" in str(r.message))
    assert "test_quantize.py" in msg and "torch.erf" in msg, msg
    assert [op for op, _ in model.float_islands] == ["ERF"] or model.float_islands, model
    assert "float islands in the int8 model: " in model.summary()
    ref = model.reference(x).detach().numpy()
    got = _litert(model, [x.numpy()], reference=True)[0]
    assert np.abs(got - ref).max() <= 2 * _output_steps(model)[0]


def test_skip_keeps_modules_float_without_warning():
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3)
    ).eval()
    x = torch.randn(2, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", module="torch")
        warnings.filterwarnings("ignore", module="torchao")
        model = wick.quantize(m, (x,), calibration=[(x,)], skip=["2"])  # by module name
    assert [op for op, _ in model.float_islands] == ["FULLY_CONNECTED"], model.float_islands
    assert model.op_counts["FULLY_CONNECTED"] == 3
    # by module type: every Linear stays float (only the ReLUs between them are int8)
    model = _quantize(m, (x,), [(x,)], skip=[nn.Linear])
    assert model.op_counts["RELU"] == 2 and "FULLY_CONNECTED" in dict(model.float_islands)


# ---- weight-only schemes ---------------------------------------------------------------------


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 128),
        nn.ReLU(),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    ).eval()


@needs_runtime
def test_dynamic_int8_hybrid_fully_connected():
    """int8 weights per output row, float activations: TFLite's hybrid FULLY_CONNECTED.
    Bound vs eager: each layer's error is at most 0.5 s_in Σ|w| + 0.5 Σ|x| s_w (input and weight
    rounding) — about 1% of the output scale here; we allow 3% of max|y| + 1e-3."""
    m = _mlp()
    x = torch.randn(4, 1, 8, 8)
    model = wick.quantize(m, (x,), scheme="dynamic_int8")
    assert model.scheme == "dynamic_int8" and model.float_islands == []
    it = litert.Interpreter(model_content=model.tflite_bytes)
    int8_weights = [d for d in it.get_tensor_details() if np.dtype(d["dtype"]) == np.int8]
    assert len(int8_weights) == 2  # 64x128 and 128x64; the 640-element head stays float
    ours = model.run(x)[0]
    ref = _litert(model, [x.numpy()], reference=True)[0]
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    default = _litert(model, [x.numpy()], reference=False)[0]
    eager = m(x).detach().numpy()
    for got in (ours, default):
        assert np.abs(got - eager).max() <= 0.03 * np.abs(eager).max() + 1e-3
    assert model.size < 0.5 * wick.convert(m, (x,)).size


@needs_runtime
def test_dynamic_int8_hybrid_convolutions():
    """CONV_2D and DEPTHWISE_CONV_2D with int8 per-channel filters and float activations (each
    image quantized at run time, asymmetric), as TFLite's dynamic-range files; vs LiteRT's
    reference kernels within float rounding, vs eager within the int8 rounding of weights and
    activations (a few % of the output range after three layers)."""
    torch.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(16, 64, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(64, 64, 5, padding=2, groups=64),
        nn.ReLU(),
        nn.Conv2d(64, 32, 1),
    ).eval()
    x = torch.randn(2, 16, 10, 10)
    model = wick.quantize(m, (x,), scheme="dynamic_int8")
    it = litert.Interpreter(model_content=model.tflite_bytes)
    int8 = [d for d in it.get_tensor_details() if np.dtype(d["dtype"]) == np.int8]
    assert len(int8) == 3, int8  # every filter has >= 1024 elements
    ours = model.run(x)[0]
    ref = _litert(model, [x.numpy()], reference=True)[0]
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())
    eager = m(x).detach().numpy()
    assert np.abs(ours - eager).max() <= 0.03 * np.abs(eager).max()


@needs_runtime
def test_fp16_weights():
    """float16 constants + DEQUANTIZE: the only change is rounding each weight to float16
    (relative 2^-11), so outputs agree with eager to ~1e-3 relative."""
    m = _mlp()
    x = torch.randn(4, 1, 8, 8)
    model = wick.quantize(m, (x,), scheme="fp16")
    assert model.op_counts["DEQUANTIZE"] == 6, model.op_counts
    eager = m(x).detach().numpy()
    ours = model.run(x)[0]
    np.testing.assert_allclose(ours, _litert(model, [x.numpy()], reference=True)[0], atol=1e-6)
    assert np.abs(ours - eager).max() <= 2e-3 * np.abs(eager).max()
    assert model.size < 0.6 * wick.convert(m, (x,)).size


def test_schemes_reject_calibration_and_unknown_names():
    with pytest.raises(ValueError, match="scheme"):
        wick.quantize(_mlp(), (torch.randn(1, 1, 8, 8),), scheme="int4")
    with pytest.raises(wick.quantize.CalibrationError):
        wick.quantize(
            _mlp(), (torch.randn(1, 1, 8, 8),), [(torch.randn(1, 1, 8, 8),)], scheme="fp16"
        )


# ---- accuracy on real data -------------------------------------------------------------------


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3, padding=1, groups=32),
            nn.ReLU(),
        )
        self.head = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        return self.head(nn.functional.max_pool2d(self.f(x), 1).flatten(1))


@needs_runtime
def test_digits_accuracy_within_one_point_of_fp32():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_digits()  # ships with scikit-learn: no network
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(d.target)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    x, y = x[perm], y[perm]
    xtr, ytr, xte, yte = x[:1400], y[:1400], x[1400:], y[1400:]
    torch.manual_seed(0)
    net = DigitsNet()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny batches: more threads only contend (2 s single-threaded)
    try:
        for _ in range(6):
            for i in range(0, len(ytr), 50):
                opt.zero_grad()
                nn.functional.cross_entropy(net(xtr[i : i + 50]), ytr[i : i + 50]).backward()
                opt.step()
    finally:
        torch.set_num_threads(threads)
    net.eval()
    with torch.no_grad():
        fp32 = (net(xte).argmax(1) == yte).float().mean().item()
    assert fp32 > 0.9, fp32  # the test is meaningless on an untrained net
    calib = [(xtr[: len(yte)],), (xtr[len(yte) : 2 * len(yte)],)]  # the sample's shape
    model = _quantize(net, (xte,), calib)
    _assert_fully_integer(model)
    int8 = float((model.run(xte)[0].argmax(1) == yte.numpy()).mean())
    print(f"digits CNN, {len(yte)} held-out images: fp32 {fp32:.2%}, int8 {int8:.2%}")
    assert int8 >= fp32 - 0.01, (fp32, int8)
