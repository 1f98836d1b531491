"""Checks of the test oracles themselves (tests/python/oracles): the Keras-built .tflite files
generate and run in LiteRT, and LiteRT agrees with Keras, so later parity tests can trust them.

Big models (ResNet50, DenseNet121, EfficientNetB0) are marked ``slow`` (deselect with
``-m "not slow"``); every model comes from the on-disk cache (``WICK_MODEL_CACHE``), so only the
first run pays for generation (~45 s for the three big ones on 2 cores).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.python.oracles import keras_models as km
from tests.python.oracles import litert as lr

CLASSIFIERS = ["mobilenet_v2", "mobilenet_v3_small", "resnet50", "efficientnet_b0", "densenet121"]

# Signature ("serving_default") output shapes, in Keras output order.
EXPECTED_OUTPUTS = {
    **{n: [(1, 1000)] for n in CLASSIFIERS},
    "transformer_block": [(1, 16, 64)],
    "tiny_cnn": [(1, 10)],
    "mlp": [(1, 5), (1, 1)],
    "embedding_mlp": [(1, 3)],
}

# Ops each file must contain (a regression guard on what the converter emits).
EXPECTED_OPS = {
    "mobilenet_v2": {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MEAN", "FULLY_CONNECTED", "SOFTMAX"},
    "mobilenet_v3_small": {"CONV_2D", "DEPTHWISE_CONV_2D", "HARD_SWISH", "MUL", "SOFTMAX"},
    "resnet50": {"CONV_2D", "ADD", "PAD", "MAX_POOL_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"},
    "efficientnet_b0": {"CONV_2D", "DEPTHWISE_CONV_2D", "LOGISTIC", "MUL", "MEAN", "SOFTMAX"},
    "densenet121": {"CONV_2D", "CONCATENATION", "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX"},
    "transformer_block": {"FULLY_CONNECTED", "BATCH_MATMUL", "SOFTMAX", "GELU", "TRANSPOSE"},
    "tiny_cnn": {"CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D", "SOFTMAX"},
    "mlp": {"FULLY_CONNECTED", "TANH", "LOGISTIC"},
    "embedding_mlp": {"GATHER", "CONCATENATION", "FULLY_CONNECTED"},
}


def _param(name):
    marks = [pytest.mark.slow] if name in km.BIG_NAMES else []
    return pytest.param(name, marks=marks, id=name)


ALL_DEFAULT = [_param(n) for n in km.DEFAULT_NAMES]


@pytest.fixture(scope="session")
def model_path():
    """name -> cached .tflite path (generated on first use)."""
    return km.get_model_path


def test_registry_covers_expectations():
    assert set(EXPECTED_OUTPUTS) == set(km.DEFAULT_NAMES) == set(EXPECTED_OPS)


@pytest.mark.parametrize("name", ALL_DEFAULT)
def test_model_generates_and_runs(name, model_path):
    path = model_path(name)
    data = path.read_bytes()
    assert data[4:8] == b"TFL3"

    hist = lr.op_histogram(data)
    assert EXPECTED_OPS[name] <= set(hist), f"{name}: ops {hist}"
    assert not any(k.startswith("CUSTOM") for k in hist), f"{name}: custom ops {hist}"

    sig = "serving_default"
    xs = lr.random_inputs(data, seed=0, signature=sig)
    outs = lr.run_litert(data, xs, signature=sig)
    assert outs.names == [f"output_{i}" for i in range(len(outs))]
    assert [o.shape for o in outs] == EXPECTED_OUTPUTS[name]
    for o in outs:
        assert o.dtype == np.float32
        assert np.isfinite(o).all(), f"{name}: non-finite output"
    if name in CLASSIFIERS:
        np.testing.assert_allclose(outs[0].sum(), 1.0, rtol=1e-4)

    # Subgraph order holds the same tensors (possibly permuted: see test_mlp_output_order).
    by_subgraph = lr.run_litert(data, lr.random_inputs(data, seed=0))
    assert sorted(o.shape for o in by_subgraph) == sorted(EXPECTED_OUTPUTS[name])

    # The reference kernels agree with the default (XNNPACK) kernels on float models.
    ref = lr.run_litert(data, xs, signature=sig, reference=True)
    for i, (g, r) in enumerate(zip(outs, ref, strict=True)):
        res = lr.tolerance_check(g, r, rel=1e-4, name=f"{name}[{i}] xnnpack vs reference")
        assert res, res.message


def _keras_outputs(model, xs_by_name):
    if len(model.inputs) == 1:  # Keras warns when a single input comes in a dict
        y = model(xs_by_name[model.inputs[0].name], training=False)
    else:
        y = model({t.name: xs_by_name[t.name] for t in model.inputs}, training=False)
    return [np.asarray(o) for o in (y if isinstance(y, (list, tuple)) else [y])]


@pytest.mark.parametrize("reference", [False, True], ids=["xnnpack", "reference"])
@pytest.mark.parametrize("name", ["tiny_cnn", "mlp", "embedding_mlp", "transformer_block"])
def test_litert_matches_keras(name, reference):
    """The oracle itself: LiteRT on the converted file == Keras on the same model, within 1e-4."""
    model = km.build_keras(name, seed=0)
    data = km.convert(model)
    sig = "serving_default"
    xs = lr.random_inputs(data, seed=3, signature=sig)
    names = [t.name for t in lr.input_details(data, sig)]
    got = lr.run_litert(data, dict(zip(names, xs, strict=True)), signature=sig, reference=reference)
    want = _keras_outputs(model, dict(zip(names, xs, strict=True)))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        res = lr.tolerance_check(g, w, rel=1e-4, name=f"{name}[{i}]")
        assert res, res.message
        assert np.argmax(g) == np.argmax(w)


def test_cached_file_is_what_build_gives(model_path):
    """Generation is deterministic: a fresh build+convert equals the cached bytes."""
    assert km.generate("tiny_cnn", seed=0) == model_path("tiny_cnn").read_bytes()
    assert km.generate("tiny_cnn", seed=1) != model_path("tiny_cnn").read_bytes()


def test_mlp_output_order(model_path):
    """Subgraph output order is NOT Keras order for this file; signature order is."""
    data = model_path("mlp").read_bytes()
    (x,) = lr.random_inputs(data, seed=0)
    by_sig = lr.run_litert(data, [x], signature="serving_default")
    by_sub = lr.run_litert(data, [x])
    assert by_sig.names == ["output_0", "output_1"]
    assert [o.shape for o in by_sig] == [(1, 5), (1, 1)]
    order = lr.signature_order(data)["serving_default"]
    sub_outs = [t.index for t in lr.output_details(data)]
    # Map each signature output to its position in the subgraph's outputs and compare values.
    for (_, tensor), arr in zip(order["outputs"], by_sig, strict=True):
        np.testing.assert_array_equal(by_sub[sub_outs.index(tensor)], arr)


def test_input_dict_and_order(model_path):
    data = model_path("embedding_mlp").read_bytes()
    sub = lr.input_details(data)
    sig = lr.input_details(data, "serving_default")
    assert [t.dtype for t in sub] == [np.dtype(np.int32), np.dtype(np.float32)]  # Keras order
    assert [t.name for t in sig] == ["features", "tokens"]  # the converter sorts by name
    xs = lr.random_inputs(data, seed=5)
    tokens = xs[0]
    assert tokens.dtype == np.int32 and tokens.min() >= 0 and tokens.max() < 16
    a = lr.run_litert(data, xs)
    b = lr.run_litert(data, {t.name: x for t, x in zip(sub, xs, strict=True)})
    c = lr.run_litert(data, {"tokens": xs[0], "features": xs[1]}, signature="serving_default")
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[0], c[0])
    with pytest.raises(TypeError, match="dtype"):
        lr.run_litert(data, [xs[0].astype(np.int64), xs[1]])
    with pytest.raises(ValueError, match="missing"):
        lr.run_litert(data, {"tokens": xs[0]}, signature="serving_default")


def test_random_inputs_seeded(model_path):
    data = model_path("tiny_cnn").read_bytes()
    a, b, c = (lr.random_inputs(data, seed=s) for s in (7, 7, 8))
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    u = lr.random_inputs(data, seed=7, float_dist="uniform")[0]
    assert u.dtype == np.float32 and u.shape == (1, 32, 32, 3) and np.abs(u).max() <= 1.0


def test_cache_and_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("WICK_MODEL_CACHE", str(tmp_path / "cache"))
    p = km.get_model_path("mlp")
    assert p.parent == tmp_path / "cache" and p.exists()
    assert km.versions()[0] in p.name

    def boom(*a, **k):
        raise AssertionError("regenerated despite the cache")

    monkeypatch.setattr(km, "generate", boom)
    assert km.get_model("mlp") == p.read_bytes()
    monkeypatch.undo()

    out = tmp_path / "out"
    assert km.main(["--out", str(out), "mlp"]) == 0
    assert (out / "mlp.tflite").read_bytes() == p.read_bytes()


def test_tolerance_check():
    ref = np.array([1.0, -2.0, 0.5], np.float32)
    assert lr.tolerance_check(ref, ref)
    r = lr.tolerance_check(ref + np.float32(1e-4), ref)  # bound = 1e-4 * 2
    assert r and r.bound == pytest.approx(2e-4)
    r = lr.tolerance_check(ref + np.float32(1e-3), ref)
    assert not r and r.max_abs_err == pytest.approx(1e-3, rel=1e-3) and "worst at" in r.message
    small = np.array([1e-3, 2e-3])  # max|ref| < 1: the bound is rel * 1
    assert lr.tolerance_check(small + 5e-5, small)
    assert not lr.tolerance_check(np.array([np.nan, 0.0]), np.array([1.0, 0.0]))
    assert lr.tolerance_check(np.array([np.inf, 0.0]), np.array([np.inf, 0.0]))
    assert not lr.tolerance_check(np.array([-np.inf, 0.0]), np.array([np.inf, 0.0]))
    assert not lr.tolerance_check(np.zeros((2, 3)), np.zeros((3, 2)))
    with pytest.raises(AssertionError, match="max abs err"):
        lr.assert_close(ref + 1, ref)
