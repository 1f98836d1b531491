"""Whole-model conversion: torchvision CNNs, a small ViT and a BERT-class encoder, compared with
PyTorch eager on LiteRT (and wick's runtime when built).

Bar (docs/testing.md, "Parity bars"): max abs error <= 1e-4 * max(1, max|ref|) and the same
argmax for classifiers.  Layout bar: CNNs carry TRANSPOSE only at their boundary (one, on the
input), and none with channels_last_io=True.  Random weights (no downloads); BatchNorm
statistics are randomized so that batch-norm folding is actually exercised.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torchvision
from torch import nn

import wick

from .util import check, to_numpy

TOL = 1e-4


def _randomize_bn(m: nn.Module) -> nn.Module:
    g = torch.Generator().manual_seed(0)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
            mod.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            mod.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            mod.bias.data.copy_(torch.rand(n, generator=g) * 0.2 - 0.1)
    return m.eval()


CNNS = [
    ("resnet18", 224),
    ("mobilenet_v2", 224),
    ("efficientnet_b0", 224),
    ("mobilenet_v3_small", 224),
    ("shufflenet_v2_x0_5", 128),
]


@pytest.mark.parametrize("name,size", CNNS, ids=[c[0] for c in CNNS])
def test_cnn(name, size):
    torch.manual_seed(0)
    m = _randomize_bn(getattr(torchvision.models, name)(weights=None))
    x = torch.randn(1, 3, size, size)
    model, err = check(m, x, tol=TOL)
    ops = model.op_counts
    if name == "shufflenet_v2_x0_5":
        # one TRANSPOSE per channel shuffle (16, the model's own permutation) + the input
        assert ops.get("TRANSPOSE", 0) == 1 + 16, ops
    else:
        assert ops.get("TRANSPOSE", 0) == 1, ops
    assert "CONV_2D" in ops
    from .util import run_litert

    got = run_litert(model.tflite_bytes, [x.numpy()], [s.name for s in model.inputs])[0]
    with torch.no_grad():
        ref = m(x).numpy()
    assert got.argmax() == ref.argmax()


def test_channels_last_io_has_no_transpose():
    m = _randomize_bn(torchvision.models.mobilenet_v2(weights=None))
    x = torch.randn(1, 3, 96, 96)
    model, _ = check(m, x, tol=TOL, channels_last_io=True)
    assert model.op_counts.get("TRANSPOSE", 0) == 0, model.op_counts
    assert model.inputs[0].shape == (1, 96, 96, 3)


def test_channels_last_io_image_to_image():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, padding=1)
            self.b = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)
            self.bn = nn.BatchNorm2d(8)

        def forward(self, x):
            return self.b(torch.relu(self.bn(self.a(x))))

    model, _ = check(_randomize_bn(Net()), torch.randn(1, 3, 16, 16), channels_last_io=True)
    assert model.op_counts.get("TRANSPOSE", 0) == 0, model.op_counts
    assert model.outputs[0].shape == (1, 32, 32, 4)


def test_vit_small():
    torch.manual_seed(0)
    m = torchvision.models.VisionTransformer(
        image_size=32,
        patch_size=8,
        num_layers=2,
        num_heads=4,
        hidden_dim=64,
        mlp_dim=128,
        num_classes=10,
    ).eval()
    nn.init.normal_(m.heads.head.weight)  # torchvision zero-inits the head: outputs would be 0
    model, _ = check(m, torch.randn(2, 3, 32, 32), tol=TOL)
    # projections are FULLY_CONNECTED (no weight copies from expand), never BATCH_MATMUL on weights
    assert model.op_counts.get("FULLY_CONNECTED", 0) == 2 * 4 + 1, model.op_counts
    assert model.size < 2 * 4 * sum(p.numel() for p in m.parameters()), model.size
    # the input transpose + per layer: q/k/v head split (3) and head merge (1)
    assert model.op_counts.get("TRANSPOSE", 0) <= 1 + 2 * 4, model.op_counts


class BertLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.h = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, bias):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)

        def heads(t):
            return t.view(b, s, self.h, d // self.h).transpose(1, 2)

        q, k, v = heads(q), heads(k), heads(v)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.h) + bias
        ctx = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))


class TinyBert(nn.Module):
    """BERT-base architecture at a small size: word/position/type embeddings, post-LN encoder
    layers with GELU, additive attention mask, tanh pooler."""

    def __init__(self, vocab=100, d=64, layers=2, heads=4, ff=128, max_len=32):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.tok_type = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(d, heads, ff) for _ in range(layers))
        self.pool = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.word(input_ids) + self.pos(pos) + self.tok_type(torch.zeros_like(input_ids))
        x = self.ln(x)
        bias = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, bias)
        return x, torch.tanh(self.pool(x[:, 0]))


def test_bert_encoder():
    torch.manual_seed(0)
    m = TinyBert().eval()
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 10:] = 0
    model, _ = check(m, ids, mask, tol=TOL)
    assert [s.dtype for s in model.inputs] == ["int64", "int64"]


def test_wick_runtime_resnet18():
    try:
        from wick import runtime

        runtime.library_path()
    except Exception:
        pytest.skip("wick runtime library not built")
    m = _randomize_bn(torchvision.models.resnet18(weights=None))
    x = torch.randn(1, 3, 64, 64)
    model = wick.convert(m, (x,))
    got = model.run(x)[0]
    with torch.no_grad():
        ref = to_numpy(m(x))
    scale = max(1.0, float(np.abs(ref).max()))
    assert float(np.abs(got - ref).max()) <= TOL * scale


# ---- dynamic shapes (tier 2) ---------------------------------------------------------------------


def _run_dynamic(m, example, dynamic_shapes, feeds):
    from .util import run_litert

    model = wick.convert(m, example, dynamic_shapes=dynamic_shapes)
    for f in feeds:
        with torch.no_grad():
            ref = m(*f)
        ref = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        got = run_litert(model.tflite_bytes, [t.numpy() for t in f], [s.name for s in model.inputs])
        for g, r in zip(got, ref, strict=True):
            r = r.numpy()
            assert g.shape == r.shape
            assert float(np.abs(g - r).max()) <= TOL * max(1.0, float(np.abs(r).max()))
    return model


def test_dynamic_batch_cnn():
    batch = torch.export.Dim("batch", min=1, max=64)
    m = _randomize_bn(torchvision.models.resnet18(weights=None))
    model = _run_dynamic(
        m,
        (torch.randn(2, 3, 64, 64),),
        ({0: batch},),
        [(torch.randn(1, 3, 64, 64),), (torch.randn(3, 3, 64, 64),)],
    )
    assert model.inputs[0].shape == (-1, 3, 64, 64)
    assert model.op_counts.get("TRANSPOSE", 0) == 1


def test_dynamic_batch_and_sequence_encoder():
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("seq", min=2, max=32)
    m = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0).eval()
    model = _run_dynamic(
        m,
        (torch.randn(2, 10, 32),),
        ({0: batch, 1: seq},),
        [(torch.randn(1, 5, 32),), (torch.randn(3, 17, 32),)],
    )
    assert model.inputs[0].shape == (-1, -1, 32)


def test_dynamic_batch_bert():
    batch = torch.export.Dim("batch", min=1, max=64)
    m = TinyBert().eval()
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    _run_dynamic(
        m,
        (ids, mask),
        ({0: batch}, {0: batch}),
        [(torch.randint(0, 100, (3, 16)), torch.ones(3, 16, dtype=torch.int64))],
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_half_precision_model(dtype):
    """Half models compute in float32 in the file (TFLite kernels are fp32) on the model's exact
    weights: they match an fp32 copy of the same weights at the fp32 bar, and the half eager
    model at the fp16/bf16 bar (~1e-2 relative, docs/testing.md)."""
    from .util import run_litert

    def net():
        return nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU6(),
            nn.Conv2d(16, 16, 3, padding=1, groups=16),
            nn.BatchNorm2d(16),
            nn.ReLU6(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(16, 10),
        )

    torch.manual_seed(0)
    m = _randomize_bn(net()).to(dtype)
    x = torch.randn(1, 3, 32, 32).to(dtype)
    model = wick.convert(m, (x,))
    assert model.inputs[0].dtype == "float32"
    got = run_litert(model.tflite_bytes, [x.float().numpy()], [s.name for s in model.inputs])[0]
    m32 = net().eval()
    m32.load_state_dict({k: v.float() for k, v in m.state_dict().items()})
    with torch.no_grad():
        ref32 = m32(x.float()).numpy()
        ref_half = m(x).float().numpy()
    assert np.abs(got - ref32).max() <= TOL * max(1.0, np.abs(ref32).max())
    if np.isfinite(ref_half).all():
        assert np.abs(got - ref_half).max() <= 2e-2 * np.abs(ref_half).max()


def test_hf_bert_dynamic_batch_and_sequence():
    """transformers' BERT (small config) with symbolic batch and sequence: masks are built with
    multi-tensor advanced indexing and symbolic slices of position buffers."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    bert = transformers.BertModel(cfg).eval()

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = bert

        def forward(self, ids, mask):
            return self.m(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state

    b = torch.export.Dim("b", min=1, max=8)
    s = torch.export.Dim("s", min=2, max=64)
    ids = torch.randint(0, 100, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    feeds = []
    for shp in [(1, 5), (3, 20)]:
        m2 = torch.ones(*shp, dtype=torch.int64)
        m2[0, -2:] = 0
        feeds.append((torch.randint(0, 100, shp), m2))
    model = _run_dynamic(Wrap().eval(), (ids, mask), ({0: b, 1: s}, {0: b, 1: s}), feeds)
    assert model.inputs[0].shape == (-1, -1)


def test_hf_bart_int64_token_shift_runs_on_wick_and_litert():
    """BART's shift_tokens_right writes the int64 input ids into a zero int64 tensor
    (slice_scatter); the constant is narrowed to int32, and the spliced ids must be cast to it
    (the file once held an int32/int64 CONCATENATION that wick refused)."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BartConfig(
        vocab_size=1000,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_position_embeddings=64,
    )
    bart = transformers.BartModel(cfg).eval()

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = bart

        def forward(self, ids):
            return self.m(input_ids=ids).last_hidden_state

    ids = torch.randint(4, 1000, (1, 16))
    model, _ = check(Wrap().eval(), ids, tol=1e-4)  # (LiteRT)
    with torch.no_grad():
        ref = Wrap()(ids).numpy()
    got = model.run(ids.numpy())[0]  # wick
    assert np.abs(got - ref).max() <= 1e-4 * max(1.0, np.abs(ref).max())
