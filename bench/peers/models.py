"""The model set of the peer benchmark (issue 5 item 1, issue 6 item 4).

Every model is built with seeded random weights through :func:`wick.zoo.realistic_init_` (so
activations and outputs have a trained model's scale and the output check between peers
means something) and a seeded example input, batch 1.  Nothing is downloaded: torchvision
models with ``weights=None``, timm with ``pretrained=False``, HuggingFace models from configs.

``int8`` models are the float model quantized with torch's PT2E flow (torchao's
prepare_pt2e/convert_pt2e, XNNPACK quantizer config: int8 asymmetric per-tensor activations,
symmetric per-channel weights; calibrated on seeded random inputs), which wick's converter turns
into a full-integer .tflite (see tests/python/converter/test_quantized.py).

This module runs in wick's ``.venv`` only (the other peers get files, never modules).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch

SEED = 0
SEQ = 128  # DistilBERT sequence length


@dataclass(frozen=True)
class BenchModel:
    name: str  # the table's label
    key: str  # cache and command-line key
    source: str  # "tv", "timm", "hf-distilbert", "dcgan", "smoke"
    builder: str  # builder name within its source
    int8: bool = False  # PT2E int8: runs on wick and LiteRT only (same file)
    quick: bool = False  # part of --quick


MODELS = (
    BenchModel("MobileNetV2", "mobilenet_v2", "tv", "mobilenet_v2", quick=True),
    BenchModel("MobileNetV3-Large", "mobilenet_v3_large", "tv", "mobilenet_v3_large"),
    BenchModel("MobileNetV3-Small", "mobilenet_v3_small", "tv", "mobilenet_v3_small", quick=True),
    BenchModel("EfficientNet-B0", "efficientnet_b0", "tv", "efficientnet_b0"),
    BenchModel("ResNet-18", "resnet18", "tv", "resnet18", quick=True),
    BenchModel("ResNet-50", "resnet50", "tv", "resnet50"),
    BenchModel("SqueezeNet 1.1", "squeezenet1_1", "tv", "squeezenet1_1"),
    BenchModel("ShuffleNetV2 x1.0", "shufflenet_v2_x1_0", "tv", "shufflenet_v2_x1_0"),
    BenchModel("ViT-Tiny/16 (timm)", "vit_tiny", "timm", "vit_tiny_patch16_224"),
    BenchModel(f"DistilBERT-base, seq {SEQ}", "distilbert", "hf-distilbert", "distilbert"),
    BenchModel(
        "MobileNetV2 int8", "mobilenet_v2_int8", "tv", "mobilenet_v2", int8=True, quick=True
    ),
    BenchModel("ResNet-18 int8", "resnet18_int8", "tv", "resnet18", int8=True),
    # A decoder: the transposed convolutions of generators and segmentation heads. (No int8
    # row: PT2E's XNNPACK quantizer scales conv_transpose2d weights per *input* channel, which
    # an int8 TRANSPOSE_CONV cannot express, so the file keeps float TRANSPOSE_CONVs between
    # DEQUANTIZE ops and would not measure the int8 kernels.)
    BenchModel("DCGAN generator, 64x64", "dcgan", "dcgan", "dcgan"),
)
# Not in the default set: a tiny CNN for the harness's smoke test (tests/python/bench).
SMOKE = BenchModel("smoke CNN", "smoke", "smoke", "smoke")
ALL = MODELS + (SMOKE,)


def get(key: str) -> BenchModel:
    for m in ALL:
        if m.key == key:
            return m
    raise KeyError(f"unknown model {key!r}; known: {', '.join(m.key for m in ALL)}")


class _Logits(torch.nn.Module):
    """Returns the logits tensor of a HuggingFace model's output (export-friendly)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, ids):
        return self.inner(ids).logits


class _SmokeCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.relu(self.c2(y)).mean((2, 3))
        return self.fc(y)


class _DCGANGenerator(torch.nn.Module):
    """The DCGAN generator (Radford et al. 2015, as in PyTorch's examples/dcgan): a 100-d
    latent through five 4x4 transposed convolutions (stride 1, then 2) to a 64x64 RGB image."""

    def __init__(self, nz: int = 100, ngf: int = 64):
        super().__init__()
        nn = torch.nn
        chans = [nz, ngf * 8, ngf * 4, ngf * 2, ngf]
        layers: list[nn.Module] = []
        for i, (cin, cout) in enumerate(zip(chans, chans[1:], strict=False)):
            layers += [
                nn.ConvTranspose2d(
                    cin, cout, 4, 1 if i == 0 else 2, 0 if i == 0 else 1, bias=False
                ),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
            ]
        layers += [nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, z):
        return self.main(z)


@torch.no_grad()
def _no_zero_weights_(m: torch.nn.Module) -> None:
    """A zero-initialised weight (a classification head) would make the output identically
    zero and the output check vacuous: give it a random 1/sqrt(fan_in) init instead."""
    g = torch.Generator().manual_seed(SEED + 2)
    for p in m.parameters():
        if p.dim() >= 2 and not p.any():
            p.copy_(torch.randn(p.shape, generator=g) / p[0].numel() ** 0.5)


def _float_module(m: BenchModel) -> tuple[torch.nn.Module, tuple]:
    from wick.zoo import realistic_init_

    torch.manual_seed(SEED)
    g = torch.Generator().manual_seed(SEED + 1)
    if m.source == "tv":
        import torchvision

        module = torchvision.models.get_model(m.builder, weights=None)
        args = (torch.randn(1, 3, 224, 224, generator=g),)
    elif m.source == "timm":
        import timm

        module = timm.create_model(m.builder, pretrained=False)
        args = (torch.randn(1, 3, 224, 224, generator=g),)
    elif m.source == "hf-distilbert":
        import transformers as T

        cfg = T.DistilBertConfig(num_labels=2)  # distilbert-base: 6 layers, dim 768, 12 heads
        module = _Logits(T.DistilBertForSequenceClassification(cfg))
        args = (torch.randint(1, cfg.vocab_size, (1, SEQ), generator=g),)
    elif m.source == "dcgan":
        module = _DCGANGenerator()
        args = (torch.randn(1, 100, 1, 1, generator=g),)
    elif m.source == "smoke":
        module = _SmokeCNN()
        args = (torch.randn(1, 3, 32, 32, generator=g),)
    else:
        raise KeyError(m.source)
    module = module.eval()
    realistic_init_(module, SEED)
    _no_zero_weights_(module)
    return module, args


def _quantize(module: torch.nn.Module, args: tuple, calibration: int = 8) -> torch.nn.Module:
    from torchao.quantization.pt2e import quantize_pt2e as pt2e
    from torchao.testing.pt2e import _xnnpack_quantizer as xq

    warnings.filterwarnings("ignore")
    gm = torch.export.export(module, args, strict=False).module()
    quantizer = xq.XNNPACKQuantizer().set_global(
        xq.get_symmetric_quantization_config(is_per_channel=True)
    )
    gm = pt2e.prepare_pt2e(gm, quantizer)
    g = torch.Generator().manual_seed(SEED + 3)
    with torch.no_grad():
        for _ in range(calibration):
            gm(*[torch.randn(a.shape, generator=g) for a in args])
    return pt2e.convert_pt2e(gm)


def build(m: BenchModel) -> tuple[torch.nn.Module, tuple]:
    """(eval-mode module, example args); for int8 models the PT2E-quantized module."""
    module, args = _float_module(m)
    if m.int8:
        module = _quantize(module, args)
    return module, args
