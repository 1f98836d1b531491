"""Whole models from TensorFlow's converter (files no one here wrote), run on
wick and compared with LiteRT's interpreter on the same seeded inputs.

Bar (docs/testing.md): fp32 outputs within 1e-4 * max(1, max|ref|) of LiteRT. The
classifiers are compared on their logits (``*_logits`` variants): with random
weights a softmax output is nearly uniform and would hide errors.

Full-integer files (``*_int8``, TensorFlow's post-training quantization with a
representative dataset): bit-exact with LiteRT's reference kernels
(``BUILTIN_REF``), and close to its default (XNNPACK) kernels, which requantize
in float and so differ by one step per layer: within one step on MobileNetV2;
through ResNet50's 53 convolutions (and EfficientNetB0's 65) LiteRT's own two
kernel sets drift up to a few steps apart, so there the bound is 3 steps and a
mean below one.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.oracles import keras_models, litert

SMALL = ["tiny_cnn", "mlp", "embedding_mlp", "transformer_block"]
BIG = [
    "mobilenet_v2_logits",
    "mobilenet_v3_small_logits",
    "efficientnet_b0_logits",
    "resnet50_logits",
    "densenet121_logits",
]


def _compare(name: str, seed: int = 0) -> None:
    path = keras_models.get_model_path(name)
    # wick binds the file's first signature; LiteRT runs the same signature, with
    # inputs and outputs in the order the file stores them.
    inputs = litert.random_inputs(path, seed=seed, signature="serving_default")
    ref = litert.run_litert(path, inputs, signature="serving_default")
    got = wick.load(path)(*inputs)
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.shape == r.shape and g.dtype == r.dtype
        check = litert.tolerance_check(g, r, rel=1e-4)
        assert check.ok, f"{name}: {check.message}"


def _compare_int8(name: str, max_step: int, mean_step: float) -> None:
    path = keras_models.get_model_path(name)
    model = wick.load(path)
    threaded = wick.load(path, num_threads=3)  # the kernels' tasks split by shape only
    for seed in (0, 1):
        inputs = litert.random_inputs(path, seed=seed, signature="serving_default")
        assert all(x.dtype == np.int8 for x in inputs)
        ref = litert.run_litert(path, inputs, signature="serving_default", reference=True)
        default = litert.run_litert(path, inputs, signature="serving_default")
        got = model(*inputs)
        for g, t in zip(got, threaded(*inputs), strict=True):
            assert g.tobytes() == t.tobytes(), f"{name}: 3 threads differ from 1"
        for g, r, x in zip(got, ref, default, strict=True):
            assert g.dtype == np.int8 and g.shape == r.shape
            assert len(np.unique(g)) > 20, f"{name}: output nearly constant, proves nothing"
            diff = g.astype(np.int64) - r.astype(np.int64)
            assert not diff.any(), (
                f"{name}: {int((diff != 0).sum())} of {diff.size} outputs differ from LiteRT's "
                f"reference kernels (max {int(np.abs(diff).max())})"
            )
            step = np.abs(g.astype(np.int64) - x.astype(np.int64))
            assert step.max() <= max_step and step.mean() < mean_step, (
                f"{name}: vs LiteRT default kernels max {int(step.max())}, mean {step.mean():.3f}"
            )


def test_full_int8_mobilenet_v2_matches_litert():
    _compare_int8("mobilenet_v2_int8", max_step=1, mean_step=1.0)


@pytest.mark.slow
def test_full_int8_resnet50_matches_litert():
    _compare_int8("resnet50_int8", max_step=3, mean_step=1.0)


@pytest.mark.slow
def test_full_int8_efficientnet_b0_matches_litert():
    """Swish (LOGISTIC x MUL), squeeze-excite (MEAN, channel-broadcast MUL), 5x5 depthwise."""
    _compare_int8("efficientnet_b0_int8", max_step=3, mean_step=1.0)


@pytest.mark.parametrize("name", SMALL)
def test_small_keras_model_matches_litert(name):
    _compare(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", BIG)
def test_keras_application_matches_litert(name):
    _compare(name)


def test_signature_names_and_order_follow_the_file():
    path = keras_models.get_model_path("embedding_mlp")
    m = wick.load(path)
    assert m.signatures == ["serving_default"]
    sig = litert.signature_order(path)["serving_default"]
    assert [d.name for d in m.inputs] == [name for name, _ in sig["inputs"]]
    assert [d.name for d in m.outputs] == [name for name, _ in sig["outputs"]]
    # Inputs by name give the same result as inputs by position.
    inputs = litert.random_inputs(path, seed=1, signature="serving_default")
    by_pos = m(*inputs)
    by_name = m(**{d.name: x for d, x in zip(m.inputs, inputs, strict=True)})
    for a, b in zip(by_pos, by_name, strict=True):
        np.testing.assert_array_equal(a, b)
