"""Tier-1 model registry of the coverage matrix (docs/testing.md, issue 3 item 7).

A row is a name plus a recipe: ``build(row)`` returns ``(module, args)`` — an eval-mode module
with seeded random weights passed through :func:`wick.zoo.realistic_init_` (so outputs have
the scale of a trained model's and the parity bar means something) and seeded example inputs
at the model's default size, batch 1.  Nothing is downloaded: torchvision/timm models are built
with ``weights=None``/``pretrained=False``; input sizes come from the weight enums' transforms
metadata and timm's pretrained configs, which are plain Python data; HuggingFace models come
from small configs.

This module is imported by both the wick runner (``matrix.py``, wick's ``.venv``) and the
litert-torch peer (``litert_torch_peer.py``, ``.venv-litert-torch``), so it must not import
wick's converter or runtime — only ``wick.zoo`` (torch only).

Tiers (row.tier): ``torchvision-cls``, ``torchvision-seg``, ``hf``, ``timm``, ``torchaudio``.
torchaudio has no release for wick's torch (2.14.1), so its rows run in their own venv with
torch 2.9.1 + torchaudio 2.9.1 (``setup_torchaudio.sh``, ``.venv-torchaudio``): same wick
converter and runtime, older torch.export.  Their rows are listed without importing torchaudio.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import torch

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import wick.zoo  # noqa: F401
except ImportError:  # the litert-torch venv: wick.zoo (torch only) from the tree
    sys.path.append(os.path.join(_REPO, "python"))

TIERS = ("torchvision-cls", "torchvision-seg", "hf", "timm", "torchaudio")
SEED = 0


@dataclass(frozen=True)
class Row:
    name: str  # unique, "<source>/<model>", e.g. "tv/resnet18"
    tier: str
    model: str  # builder name within its source
    inputs: tuple = ()  # ((shape, dtype, high), ...); high is the int upper bound for ids
    classifier: bool = False  # bar also requires the same argmax (last axis of output 0)
    gflops: float = 0.0  # rough cost, for run ordering and timeouts only
    params_m: float = 0.0  # parameters, millions
    extra: dict = field(default_factory=dict, hash=False, compare=False)


def _img(size: int) -> tuple:
    return (((1, 3, size, size), "float32", None),)


# ---------------------------------------------------------------------------------------------
# torchvision


def _tv_rows() -> list[Row]:
    from torchvision import models as M

    rows = []
    for n in M.list_models(module=M):
        w = M.get_model_weights(n).DEFAULT
        crop = getattr(w.transforms(), "crop_size", None) or [224]
        rows.append(
            Row(
                f"tv/{n}",
                "torchvision-cls",
                n,
                _img(int(crop[0])),
                classifier=True,
                gflops=float(w.meta.get("_ops", 0.0)),
                params_m=w.meta.get("num_params", 0) / 1e6,
            )
        )
    for n in M.list_models(module=M.segmentation):
        w = M.get_model_weights(n).DEFAULT
        size = int(getattr(w.transforms(), "resize_size", None)[0])  # 520: the eval resize
        rows.append(
            Row(
                f"tv/{n}",
                "torchvision-seg",
                n,
                _img(size),
                gflops=float(w.meta.get("_ops", 0.0)),
                params_m=w.meta.get("num_params", 0) / 1e6,
            )
        )
    return rows


def _build_tv(row: Row):
    import torchvision
    from torchvision import models as M

    from wick.zoo import realistic_init_

    torch.manual_seed(SEED)
    kw = {"weights": None}
    if row.tier == "torchvision-seg":
        kw["weights_backbone"] = None
        m = M.get_model(row.model, **kw)
    else:
        if row.model in ("googlenet", "inception_v3"):
            kw["init_weights"] = True  # silences the warning; default init is the same
        size = row.inputs[0][0][-1]
        if row.model.startswith("vit_") and size != 224:
            kw["image_size"] = size  # ViT-H/14's weights are for 518: build it for that size
        m = torchvision.models.get_model(row.model, **kw)
    m = m.eval()
    realistic_init_(m, SEED)
    _no_zero_weights_(m)
    if row.tier == "torchvision-seg":
        m = _OutKey(m, "out")
    return m


@torch.no_grad()
def _no_zero_weights_(m: torch.nn.Module) -> None:
    """Some builders zero-initialise a weight (torchvision's ViT classification head), which
    makes the output identically 0 and any parity check vacuous; give such weights a random
    1/sqrt(fan_in) init instead."""
    g = torch.Generator().manual_seed(SEED + 2)
    for p in m.parameters():
        if p.dim() >= 2 and not p.any():
            fan_in = p[0].numel()
            p.copy_(torch.randn(p.shape, generator=g) / fan_in**0.5)


# ---------------------------------------------------------------------------------------------
# HuggingFace transformers, small configs

SEQ = 16


def _hf_rows() -> list[Row]:
    ids = (((1, SEQ), "int64", 1000),)
    return [
        Row("hf/bert", "hf", "bert", ids, classifier=True, gflops=0.01, params_m=0.2),
        Row("hf/distilbert", "hf", "distilbert", ids, classifier=True, gflops=0.01, params_m=0.2),
        Row("hf/mobilebert", "hf", "mobilebert", ids, classifier=True, gflops=0.01, params_m=0.3),
        Row("hf/gpt2", "hf", "gpt2", ids, gflops=0.01, params_m=0.2),
        Row("hf/vit", "hf", "vit", _img(64), classifier=True, gflops=0.02, params_m=0.1),
        Row("hf/deit", "hf", "deit", _img(64), classifier=True, gflops=0.02, params_m=0.1),
        Row("hf/mobilevit", "hf", "mobilevit", _img(128), classifier=True, gflops=0.3, params_m=1),
        Row(
            "hf/whisper_encoder",
            "hf",
            "whisper_encoder",
            (((1, 80, 2 * SEQ * 2), "float32", None),),
            gflops=0.01,
            params_m=0.2,
        ),
    ]


def _build_hf(row: Row):
    import transformers as T

    from wick.zoo import realistic_init_

    torch.manual_seed(SEED)
    small = dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        initializer_range=0.1,  # HF's 0.02 gives logits ~1e-2: too small for the bar to bite
    )
    text = dict(vocab_size=1000, max_position_embeddings=64, pad_token_id=0)
    k = row.model
    if k == "bert":
        m = T.BertForSequenceClassification(T.BertConfig(**small, **text, num_labels=10))
    elif k == "distilbert":
        cfg = T.DistilBertConfig(
            dim=64,
            n_layers=2,
            n_heads=4,
            hidden_dim=128,
            num_labels=10,
            initializer_range=0.1,
            **text,
        )
        m = T.DistilBertForSequenceClassification(cfg)
    elif k == "mobilebert":
        cfg = T.MobileBertConfig(
            **small,
            **text,
            embedding_size=32,
            intra_bottleneck_size=32,
            true_hidden_size=32,
            num_feedforward_networks=2,
            num_labels=10,
        )
        m = T.MobileBertForSequenceClassification(cfg)
    elif k == "gpt2":
        cfg = T.GPT2Config(
            vocab_size=1000,
            n_positions=64,
            n_embd=64,
            n_layer=2,
            n_head=4,
            initializer_range=0.1,
            bos_token_id=0,
            eos_token_id=0,
        )
        cfg.use_cache = False
        m = T.GPT2LMHeadModel(cfg)
    elif k == "vit":
        cfg = T.ViTConfig(**small, image_size=64, patch_size=8, num_labels=10)
        m = T.ViTForImageClassification(cfg)
    elif k == "deit":
        cfg = T.DeiTConfig(**small, image_size=64, patch_size=8, num_labels=10)
        m = T.DeiTForImageClassification(cfg)
    elif k == "mobilevit":
        cfg = T.MobileViTConfig(
            image_size=128,
            hidden_sizes=[64, 80, 96],
            neck_hidden_sizes=[16, 16, 24, 48, 64, 80, 320],
            num_labels=10,
            initializer_range=0.1,
        )
        m = T.MobileViTForImageClassification(cfg)
    elif k == "whisper_encoder":
        cfg = T.WhisperConfig(
            d_model=64,
            encoder_layers=2,
            encoder_attention_heads=4,
            encoder_ffn_dim=128,
            decoder_layers=1,
            decoder_attention_heads=4,
            decoder_ffn_dim=128,
            num_mel_bins=80,
            max_source_positions=2 * SEQ,
            vocab_size=1000,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            decoder_start_token_id=3,
            init_std=0.1,
        )
        from transformers.models.whisper.modeling_whisper import WhisperEncoder

        m = WhisperEncoder(cfg)
    else:
        raise KeyError(k)
    m = m.eval()
    realistic_init_(m, SEED)
    key = "last_hidden_state" if k == "whisper_encoder" else "logits"
    return _OutKey(m, key)


# ---------------------------------------------------------------------------------------------
# timm: one model per mobile/edge architecture family

TIMM = (
    "mobilenetv3_small_100",
    "mobilenetv4_conv_small",
    "efficientnet_lite0",
    "mnasnet_100",
    "tinynet_e",
    "ghostnetv2_100",
    "lcnet_050",
    "mobileone_s0",
    "repvit_m0_9",
    "fastvit_t8",
    "mobilevit_xxs",
    "mobilevitv2_050",
    "efficientformer_l1",
    "efficientformerv2_s0",
    "edgenext_xx_small",
    "levit_128s",
    "efficientvit_b0",
)


def _timm_rows() -> list[Row]:
    import timm

    rows = []
    for n in TIMM:
        cfg = timm.get_pretrained_cfg(n)
        size = int(cfg.input_size[-1]) if cfg is not None else 224
        rows.append(Row(f"timm/{n}", "timm", n, _img(size), classifier=True, gflops=0.5))
    return rows


def _build_timm(row: Row):
    import timm

    from wick.zoo import realistic_init_

    torch.manual_seed(SEED)
    m = timm.create_model(row.model, pretrained=False).eval()
    realistic_init_(m, SEED)
    _no_zero_weights_(m)
    return m


# ---------------------------------------------------------------------------------------------
# torchaudio encoders (run by .venv-torchaudio's python; see the module docstring)

AUDIO_1S = (((1, 16000), "float32", None),)  # one second of 16 kHz audio
FBANK = (((1, 64, 80), "float32", None),)  # 64 frames of 80 mel bins


def _ta_rows() -> list[Row]:
    return [
        Row("ta/wav2vec2_base", "torchaudio", "wav2vec2_base", AUDIO_1S, gflops=7, params_m=94),
        Row("ta/hubert_base", "torchaudio", "hubert_base", AUDIO_1S, gflops=7, params_m=94),
        Row("ta/wavlm_base", "torchaudio", "wavlm_base", AUDIO_1S, gflops=7, params_m=94),
        Row("ta/conformer", "torchaudio", "conformer", FBANK, gflops=0.1, params_m=1),
        Row("ta/emformer", "torchaudio", "emformer", FBANK, gflops=0.1, params_m=1),
        Row("ta/deepspeech", "torchaudio", "deepspeech", (((1, 1, 64, 80), "float32", None),),
            gflops=2, params_m=26),
        Row("ta/wav2letter", "torchaudio", "wav2letter", (((1, 1, 16000), "float32", None),),
            gflops=3, params_m=25),
    ]  # fmt: skip


class _FullLength(torch.nn.Module):
    """Calls an encoder that takes (features, lengths) with every sequence at full length
    (an input-independent lengths tensor), returning its first output."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.int64)
        return self.inner(x, lengths)[0]


class _First(torch.nn.Module):
    """The first output of a model returning (features, lengths-or-None)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)[0]


def _build_ta(row: Row):
    from torchaudio import models as ta

    from wick.zoo import realistic_init_

    torch.manual_seed(SEED)
    small = dict(input_dim=80, num_heads=4, ffn_dim=256, num_layers=4)
    m = {
        "wav2vec2_base": lambda: _First(ta.wav2vec2_base()),
        "hubert_base": lambda: _First(ta.hubert_base()),
        "wavlm_base": lambda: _First(ta.wavlm_base()),
        "conformer": lambda: _FullLength(ta.Conformer(**small, depthwise_conv_kernel_size=31)),
        "emformer": lambda: _FullLength(ta.Emformer(**small, segment_length=16)),
        "deepspeech": lambda: ta.DeepSpeech(n_feature=80),
        "wav2letter": lambda: ta.Wav2Letter(),
    }[row.model]().eval()
    realistic_init_(m, SEED)
    _no_zero_weights_(m)
    return m


# ---------------------------------------------------------------------------------------------


class _OutKey(torch.nn.Module):
    """Returns one tensor of a model's dict/ModelOutput result (export-friendly)."""

    def __init__(self, inner, key):
        super().__init__()
        self.inner = inner
        self.key = key

    def forward(self, x):
        return self.inner(x)[self.key]


def all_rows() -> list[Row]:
    rows = []
    for f in (_tv_rows, _hf_rows, _timm_rows, _ta_rows):
        try:
            rows += f()
        except ImportError as e:  # transformers/timm absent: those rows are just missing
            print(f"[models] skipping {f.__name__}: {e}", file=sys.stderr)
    return rows


def get_row(name: str) -> Row:
    for r in all_rows():
        if r.name == name:
            return r
    raise KeyError(name)


def make_inputs(row: Row, size_override: int | None = None):

    g = torch.Generator().manual_seed(SEED + 1)
    args = []
    for shape, dtype, high in row.inputs:
        if size_override is not None and len(shape) == 4:
            shape = (*shape[:2], size_override, size_override)
        if dtype.startswith("int"):
            args.append(torch.randint(0, high, shape, generator=g, dtype=getattr(torch, dtype)))
        else:
            args.append(torch.randn(shape, generator=g, dtype=getattr(torch, dtype)))
    return tuple(args)


def build(row: Row, size_override: int | None = None):
    """(module, args): eval-mode module with seeded realistic random weights + example inputs."""
    with torch.no_grad():
        if row.tier.startswith("torchvision"):
            m = _build_tv(row)
        elif row.tier == "hf":
            m = _build_hf(row)
        elif row.tier == "timm":
            m = _build_timm(row)
        elif row.tier == "torchaudio":
            m = _build_ta(row)
        else:
            raise KeyError(row.tier)
    return m.eval(), make_inputs(row, size_override)
