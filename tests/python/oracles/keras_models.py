"""Keras models with random weights, converted to .tflite by TensorFlow's own converter.

These files are *foreign* .tflite files: wick did not write them, so they exercise wick's reader
and kernels the way users' files will. Every model is built with seeded random weights
(``weights=None``; nothing is downloaded), a static batch of 1 and named inputs, then converted
with ``tf.lite.TFLiteConverter.from_keras_model`` (float32, no optimizations, builtin ops only).
The ``*_int8`` models are full-integer files instead: post-training quantization with a seeded
random representative dataset, int8 builtin ops only, int8 inputs and outputs (the converter's
per-channel symmetric int8 weights, asymmetric int8 activations and int32 biases).

Files are cached: ``get_model(name)`` writes ``<cache>/<name>-s<seed>-tf<tf>-keras<keras>-g<N>.tflite``
once and reads it afterwards. The cache dir is ``$WICK_MODEL_CACHE`` or ``<repo>/build/model-cache``.
Bump ``GENERATOR_VERSION`` when a builder changes so stale files are not reused.

CLI::

    .venv/bin/python -m tests.python.oracles.keras_models --out DIR [names...]
    .venv/bin/python -m tests.python.oracles.keras_models --list

TensorFlow is imported lazily (it takes seconds), so importing this module is cheap.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# Bump when any builder or the conversion settings change: it is part of the cache key.
GENERATOR_VERSION = 1

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_CACHE = REPO_ROOT / "build" / "model-cache"


def _import_tf():
    """Import TensorFlow + Keras 3 quietly, with deterministic CPU kernels."""
    if "tensorflow" not in sys.modules:
        # Only effective before TF is first imported; callers may override.
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
        if os.environ.get("TF_USE_LEGACY_KERAS", "") not in ("", "0"):
            raise RuntimeError("unset TF_USE_LEGACY_KERAS: these builders use Keras 3")
    import keras
    import tensorflow as tf

    return tf, keras


# --------------------------------------------------------------------------------------------
# Builders. Each returns an uncompiled keras.Model whose inputs have batch size 1 and stable
# names. They are called after keras.backend.clear_session() + keras.utils.set_random_seed(seed),
# so layer names and weights are reproducible.
# --------------------------------------------------------------------------------------------


def _image_input(keras, size=224, name="image"):
    return keras.Input(shape=(size, size, 3), batch_size=1, name=name)


def _mobilenet_v2(keras, logits=False, size=224):
    return keras.applications.MobileNetV2(
        input_tensor=_image_input(keras, size),
        weights=None,
        classifier_activation=None if logits else "softmax",
    )


def _mobilenet_v3_small(keras, logits=False):
    return keras.applications.MobileNetV3Small(
        input_tensor=_image_input(keras),
        weights=None,
        classifier_activation=None if logits else "softmax",
    )


def _resnet50(keras, logits=False, size=224):
    return keras.applications.ResNet50(
        input_tensor=_image_input(keras, size),
        weights=None,
        classifier_activation=None if logits else "softmax",
    )


def _efficientnet_b0(keras, logits=False, size=224):
    return keras.applications.EfficientNetB0(
        input_tensor=_image_input(keras, size),
        weights=None,
        classifier_activation=None if logits else "softmax",
    )


def _densenet121(keras, logits=False):
    return keras.applications.DenseNet121(
        input_tensor=_image_input(keras),
        weights=None,
        classifier_activation=None if logits else "softmax",
    )


def _transformer_block(keras, seq=16, d_model=64, heads=4, ffn=256, approximate_gelu=False):
    """Post-norm encoder block: x + MHA(x, x) -> LayerNorm -> x + FFN(x) -> LayerNorm."""
    L = keras.layers
    x = keras.Input(shape=(seq, d_model), batch_size=1, name="x")
    att = L.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads, name="mha")(x, x)
    h = L.LayerNormalization(epsilon=1e-6, name="ln1")(L.Add(name="res1")([x, att]))
    if approximate_gelu:

        def gelu(t):
            return keras.activations.gelu(t, approximate=True)

    else:
        gelu = "gelu"  # keras.activations.gelu: exact (erf) form by default
    f = L.Dense(ffn, activation=gelu, name="ffn1")(h)
    f = L.Dense(d_model, name="ffn2")(f)
    y = L.LayerNormalization(epsilon=1e-6, name="ln2")(L.Add(name="res2")([h, f]))
    return keras.Model(x, y, name="transformer_block")


def _tiny_cnn(keras):
    """Conv, depthwise conv, both pools, dense, softmax on a 32x32x3 image."""
    L = keras.layers
    x = keras.Input(shape=(32, 32, 3), batch_size=1, name="image")
    h = L.Conv2D(8, 3, padding="same", activation="relu", name="conv1")(x)
    h = L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6", name="dw1")(h)
    h = L.Conv2D(16, 1, padding="valid", name="pw1")(h)
    h = L.MaxPooling2D(2, name="maxpool")(h)
    h = L.Conv2D(16, 3, strides=2, padding="valid", activation="relu", name="conv2")(h)
    h = L.AveragePooling2D(2, padding="same", name="avgpool")(h)
    h = L.Flatten(name="flatten")(h)
    h = L.Dense(10, name="fc")(h)
    y = L.Softmax(name="softmax")(h)
    return keras.Model(x, y, name="tiny_cnn")


def _mlp(keras):
    """Dense stack with relu/tanh/sigmoid, two outputs (logits and a sigmoid head)."""
    L = keras.layers
    x = keras.Input(shape=(20,), batch_size=1, name="features")
    h = L.Dense(64, activation="relu", name="fc1")(x)
    h = L.Dense(32, activation="tanh", name="fc2")(h)
    logits = L.Dense(5, name="logits")(h)
    gate = L.Dense(1, activation="sigmoid", name="gate")(h)
    return keras.Model(x, [logits, gate], name="mlp")


def _embedding_mlp(keras):
    """Two inputs of different dtypes: int32 token ids (vocab 32) and float features."""
    L = keras.layers
    tokens = keras.Input(shape=(8,), batch_size=1, dtype="int32", name="tokens")
    feats = keras.Input(shape=(4,), batch_size=1, name="features")
    e = L.Embedding(32, 16, name="embed")(tokens)
    e = L.GlobalAveragePooling1D(name="pool")(e)
    h = L.Concatenate(name="concat")([e, feats])
    h = L.Dense(16, activation="relu", name="fc1")(h)
    y = L.Dense(3, name="out")(h)
    return keras.Model([tokens, feats], y, name="embedding_mlp")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    build: Callable  # (keras) -> keras.Model
    description: str
    tags: frozenset = field(default_factory=frozenset)  # "big", "small", "variant", "int8"


def _spec(name, build, description, *tags):
    return ModelSpec(name, build, description, frozenset(tags))


MODELS: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        _spec("mobilenet_v2", _mobilenet_v2, "keras.applications.MobileNetV2, 224x224x3"),
        _spec(
            "mobilenet_v3_small",
            _mobilenet_v3_small,
            "keras.applications.MobileNetV3Small, 224x224x3, with its Rescaling preprocessing",
        ),
        _spec("resnet50", _resnet50, "keras.applications.ResNet50, 224x224x3", "big"),
        _spec(
            "efficientnet_b0",
            _efficientnet_b0,
            "keras.applications.EfficientNetB0, 224x224x3, with its Rescaling+Normalization",
            "big",
        ),
        _spec("densenet121", _densenet121, "keras.applications.DenseNet121, 224x224x3", "big"),
        _spec(
            "transformer_block",
            _transformer_block,
            "MHA(4 heads) + LayerNorm + Dense FFN (exact GELU), seq 16, d_model 64, batch 1",
        ),
        _spec("tiny_cnn", _tiny_cnn, "conv/depthwise/max+avg pool/dense/softmax, 32x32x3", "small"),
        _spec("mlp", _mlp, "dense relu/tanh + logits and sigmoid heads (2 outputs)", "small"),
        _spec(
            "embedding_mlp",
            _embedding_mlp,
            "int32 tokens -> Embedding -> mean, concat float features -> dense (2 inputs)",
            "small",
        ),
        # Variants, generated only on request: logits heads make whole-model parity checks
        # meaningful (random-weight softmax outputs are near uniform, ~1e-3 each).
        _spec(
            "mobilenet_v2_logits",
            lambda k: _mobilenet_v2(k, logits=True),
            "MobileNetV2 without the final softmax",
            "variant",
        ),
        _spec(
            "mobilenet_v3_small_logits",
            lambda k: _mobilenet_v3_small(k, logits=True),
            "MobileNetV3Small without the final softmax",
            "variant",
        ),
        _spec(
            "resnet50_logits",
            lambda k: _resnet50(k, logits=True),
            "ResNet50 without the final softmax",
            "variant",
            "big",
        ),
        _spec(
            "efficientnet_b0_logits",
            lambda k: _efficientnet_b0(k, logits=True),
            "EfficientNetB0 without the final softmax",
            "variant",
            "big",
        ),
        _spec(
            "densenet121_logits",
            lambda k: _densenet121(k, logits=True),
            "DenseNet121 without the final softmax",
            "variant",
            "big",
        ),
        # Full-integer files (post-training int8 quantization, int8 input and output). Small
        # inputs keep conversion (calibration runs the float model) to seconds on a fresh cache.
        _spec(
            "mobilenet_v2_int8",
            lambda k: _mobilenet_v2(k, logits=True, size=96),
            "MobileNetV2 logits, 96x96x3, full int8 (representative dataset)",
            "variant",
            "int8",
        ),
        _spec(
            "resnet50_int8",
            lambda k: _resnet50(k, logits=True, size=64),
            "ResNet50 logits, 64x64x3, full int8 (representative dataset)",
            "variant",
            "int8",
        ),
        _spec(
            "efficientnet_b0_int8",
            lambda k: _efficientnet_b0(k, logits=True, size=64),
            "EfficientNetB0 logits, 64x64x3, full int8 (representative dataset)",
            "variant",
            "int8",
        ),
        _spec(
            "mobilenet_v2_224_int8",
            lambda k: _mobilenet_v2(k, logits=True),
            "MobileNetV2 logits, 224x224x3, full int8 (for benchmarks)",
            "variant",
            "int8",
        ),
        _spec(
            "transformer_block_tanh_gelu",
            lambda k: _transformer_block(k, approximate_gelu=True),
            "transformer_block with the tanh-approximate GELU",
            "variant",
        ),
    ]
}

DEFAULT_NAMES = [n for n, s in MODELS.items() if "variant" not in s.tags]
BIG_NAMES = [n for n, s in MODELS.items() if "big" in s.tags]
SMALL_NAMES = [n for n, s in MODELS.items() if "small" in s.tags]


def _spec_of(name: str) -> ModelSpec:
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


def randomize_constant_weights(model, seed: int = 0, spread: float = 0.1) -> int:
    """Replace every float weight that is still a constant (zeros or ones: biases, BatchNorm
    gamma/beta/moving stats, LayerNorm gamma/beta) by ``c + U(-spread, spread) * max(1, |c|)``.

    Default-initialized normalization layers are no-ops (mean 0, variance 1, beta 0) and the
    converter folds them away, leaving graphs unlike those of trained models; zero biases hide
    bias-handling bugs. Returns how many weights were changed. Variances stay positive.
    """
    rng = np.random.default_rng(seed)
    changed = 0
    for v in model.weights:
        value = np.asarray(v.numpy())
        if value.dtype.kind != "f" or value.size == 0 or not np.all(value == value.flat[0]):
            continue
        c = float(value.flat[0])
        noise = rng.uniform(-spread, spread, value.shape) * max(1.0, abs(c))
        v.assign((value + noise).astype(value.dtype))
        changed += 1
    return changed


def build_keras(name: str, seed: int = 0):
    """Build the named Keras model with weights drawn from ``seed`` (deterministic).

    Kernels use Keras' seeded initializers; constant-initialized weights are then randomized
    (see ``randomize_constant_weights``).
    """
    _, keras = _import_tf()
    keras.backend.clear_session()  # reset layer-name counters so names are reproducible
    keras.utils.set_random_seed(seed)
    model = _spec_of(name).build(keras)
    randomize_constant_weights(model, seed)
    return model


REPRESENTATIVE_SAMPLES = 4


def convert(model, int8: bool = False, seed: int = 0) -> bytes:
    """Convert a Keras model to .tflite bytes with TensorFlow's converter.

    ``from_keras_model`` exports a SavedModel (calling the model with ``training=False``) and
    converts that. Only TFLite builtin ops are allowed. Float32 with no optimization, or with
    ``int8`` full-integer post-training quantization calibrated on ``REPRESENTATIVE_SAMPLES``
    seeded uniform(-1, 1) inputs, int8 input and output tensors.
    """
    tf, _ = _import_tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = []
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    if int8:
        rng = np.random.default_rng(seed)
        shapes = [tuple(int(d) for d in t.shape) for t in model.inputs]

        def representative():
            for _ in range(REPRESENTATIVE_SAMPLES):
                yield [rng.uniform(-1.0, 1.0, s).astype(np.float32) for s in shapes]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    # The Keras 3 export path prints a summary of every endpoint argument; keep stdout clean.
    with contextlib.redirect_stdout(io.StringIO()):
        return conv.convert()


def generate(name: str, seed: int = 0) -> bytes:
    """Build and convert the named model, bypassing the cache."""
    return convert(build_keras(name, seed), int8="int8" in _spec_of(name).tags, seed=seed)


def versions() -> tuple[str, str]:
    """(tensorflow, keras) versions, read from package metadata without importing TF."""
    from importlib.metadata import PackageNotFoundError, version

    def v(*dists):
        for d in dists:
            try:
                return version(d)
            except PackageNotFoundError:
                pass
        return "unknown"

    return v("tensorflow-cpu", "tensorflow"), v("keras")


def cache_dir() -> Path:
    return Path(os.environ.get("WICK_MODEL_CACHE") or DEFAULT_CACHE)


def cache_path(name: str, seed: int = 0, directory: Path | None = None) -> Path:
    _spec_of(name)
    tfv, kv = versions()
    fname = f"{name}-s{seed}-tf{tfv}-keras{kv}-g{GENERATOR_VERSION}.tflite"
    return Path(directory or cache_dir()) / fname


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: concurrent writers just race to the same content
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def get_model_path(name: str, seed: int = 0, regenerate: bool = False) -> Path:
    """Path of the cached .tflite for ``name``, generating it first if absent."""
    path = cache_path(name, seed)
    if regenerate or not path.exists():
        _write_atomic(path, generate(name, seed))
    return path


def get_model(name: str, seed: int = 0, regenerate: bool = False) -> bytes:
    """The .tflite bytes for ``name`` (cached; see module docstring)."""
    return get_model_path(name, seed, regenerate).read_bytes()


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tests.python.oracles.keras_models",
        description="Generate Keras-built .tflite files (random weights) for wick's tests.",
    )
    p.add_argument("names", nargs="*", help="models to write (default: all but variants)")
    p.add_argument("--out", type=Path, help="directory to write <name>.tflite into")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--all", action="store_true", help="include the variant models")
    p.add_argument("--list", action="store_true", help="list the models and exit")
    p.add_argument("--ops", action="store_true", help="print each model's builtin-op histogram")
    args = p.parse_args(argv)

    if args.list:
        for s in MODELS.values():
            tags = f" [{', '.join(sorted(s.tags))}]" if s.tags else ""
            print(f"{s.name:28s} {s.description}{tags}")
        return 0
    if args.out is None:
        p.error("--out is required (or use --list)")
    names = args.names or (list(MODELS) if args.all else DEFAULT_NAMES)
    for n in names:
        _spec_of(n)

    from .litert import op_histogram

    args.out.mkdir(parents=True, exist_ok=True)
    print(f"tensorflow {versions()[0]}, keras {versions()[1]}, seed {args.seed}")
    for n in names:
        t0 = time.perf_counter()
        model = build_keras(n, args.seed)
        t1 = time.perf_counter()
        data = convert(model, int8="int8" in _spec_of(n).tags, seed=args.seed)
        t2 = time.perf_counter()
        dest = args.out / f"{n}.tflite"
        _write_atomic(dest, data)
        print(
            f"{n:28s} build {t1 - t0:6.1f}s  convert {t2 - t1:6.1f}s  "
            f"{len(data):>11,d} bytes  -> {dest}",
            flush=True,
        )
        if args.ops:
            hist = op_histogram(data)
            print("    " + ", ".join(f"{k}:{v}" for k, v in hist.items()), flush=True)
        del model
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "BIG_NAMES",
    "DEFAULT_NAMES",
    "GENERATOR_VERSION",
    "MODELS",
    "SMALL_NAMES",
    "ModelSpec",
    "build_keras",
    "cache_dir",
    "cache_path",
    "convert",
    "generate",
    "get_model",
    "get_model_path",
    "versions",
]
