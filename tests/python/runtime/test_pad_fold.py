"""PAD folding at prepare (src/core/fuse.c): a PAD / PADV2 whose only reader is a CONV_2D or
DEPTHWISE_CONV_2D, padding only H and W with what implicit convolution padding reads (0.0, or
the zero point), is skipped and the convolution reads the PAD's input with the counts added to
its own padding.

Each model (x -> PAD -> conv) runs three ways: wick folded, wick with WICK_NO_FUSION=1 (the
same optimized kernels, every operator on its own) — which must agree byte for byte — and
LiteRT (float within the single-op tolerance, quantized exact). The profile shows whether the
PAD ran: a folded PAD takes 0 ns.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(7)
IN_SCALE, IN_ZP, OUT_SCALE, OUT_ZP = 0.05, 3, 0.2, -5


def _quant(scale, zp):
    return dict(scale=float(scale), zero_point=int(zp))


def _add_pad(sg, shape, pads, pad_channels, dtype, quant, v2_value):
    """Adds input x (NHWC `shape`) -> PAD, or PADV2 filling `v2_value`, padding H and W by
    `pads` (top, bottom, left, right) and C by `pad_channels`; returns (x, padded)."""
    batch, h, wd, c = shape
    x = sg.add_tensor("x", shape, dtype, quant=quant)
    top, bottom, left, right = pads
    paddings = np.array([[0, 0], [top, bottom], [left, right], [0, pad_channels]], dtype=np.int32)
    padded = [batch, h + top + bottom, wd + left + right, c + pad_channels]
    t = sg.add_tensor("padded", padded, dtype, quant=quant)
    pad_in = [x, sg.add_constant("paddings", paddings)]
    if v2_value is not None:
        value = np.array(v2_value, dtype=dtype)
        pad_in.append(sg.add_constant("value", value, quant=quant))
    sg.add_operator("PADV2" if v2_value is not None else "PAD", pad_in, [t])
    return x, t


def pad_conv_model(
    *,
    kind="float",  # float | int8 (per-channel) | hybrid (float activations, int8 filter)
    batch=1,
    hw=(11, 9),
    cin=4,
    cout=6,
    k=3,
    stride=1,
    dilation=1,
    padding="VALID",
    pads=(1, 1, 1, 1),  # top, bottom, left, right
    depthwise=False,
    multiplier=1,
    pad_channels=0,
    v2_value=None,  # PADV2 with this fill (raw value of the input's type)
    second_reader=False,  # the PAD's output is also a graph output
):
    """x -> PAD -> CONV_2D / DEPTHWISE_CONV_2D; returns (bytes, feed)."""
    q = kind == "int8"
    act_dtype = np.int8 if q else np.float32
    act_quant = _quant(IN_SCALE, IN_ZP) if q else None
    w = ModelWriter()
    sg = w.add_subgraph()
    shape = [batch, hw[0], hw[1], cin]
    x, t = _add_pad(sg, shape, pads, pad_channels, act_dtype, act_quant, v2_value)

    c = cin + pad_channels
    oc = c * multiplier if depthwise else cout
    wshape = [1, k, k, oc] if depthwise else [oc, k, k, c]
    axis = 3 if depthwise else 0
    if kind == "float":
        filt = sg.add_constant("w", RNG.standard_normal(wshape).astype(np.float32))
        bias = sg.add_constant("b", RNG.standard_normal(oc).astype(np.float32))
    else:
        wq = RNG.integers(-127, 128, size=wshape).astype(np.int8)
        wscale = RNG.uniform(0.002, 0.02, size=oc)
        filt = sg.add_constant(
            "w", wq, quant=dict(scale=list(wscale), zero_point=[0] * oc, quantized_dimension=axis)
        )
        if q:
            b = RNG.integers(-2000, 2000, size=oc).astype(np.int32)
            bq = dict(scale=list(wscale * IN_SCALE), zero_point=[0] * oc)
            bias = sg.add_constant("b", b, quant=bq)
        else:
            bias = sg.add_constant("b", RNG.standard_normal(oc).astype(np.float32))
    y = sg.add_tensor("y", [1], act_dtype, quant=_quant(OUT_SCALE, OUT_ZP) if q else None)
    opts = dict(
        padding=padding,
        stride_h=stride,
        stride_w=stride,
        dilation_h_factor=dilation,
        dilation_w_factor=dilation,
        fused_activation_function="NONE",
    )
    if depthwise:
        opts["depth_multiplier"] = multiplier
    sg.add_operator("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [t, filt, bias], [y], opts)
    sg.set_inputs([x])
    sg.set_outputs([y, t] if second_reader else [y])
    if q:
        feed = RNG.integers(-128, 128, size=shape).astype(np.int8)
    else:
        feed = RNG.standard_normal(shape).astype(np.float32)
    return w.finish(), feed


def run_both(data, feed, monkeypatch, num_threads=1):
    """(folded outputs, folded profile, unfolded outputs), the latter with WICK_NO_FUSION=1."""
    folded = wick.load(data, num_threads=num_threads).signature(None)
    got = folded(feed)
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_FUSION", "1")
        unfolded = wick.load(data, num_threads=num_threads).signature(None)
        want = unfolded(feed)
        unfolded_profile = unfolded.profile()
    assert all(ns > 0 for name, ns in unfolded_profile if name.startswith("PAD")), unfolded_profile
    return got, folded.profile(), want


def litert(data, feed, kind):
    return run_litert(data, [feed], reference=kind == "int8")


def pad_skipped(profile):
    return [ns for name, ns in profile if name.startswith("PAD")] == [0]


FOLDS = {
    # MobileNet's stride-2 block: explicit symmetric pad, VALID conv
    "conv3_s2": dict(k=3, stride=2, pads=(1, 1, 1, 1)),
    "conv5_s1_asymmetric": dict(k=5, pads=(0, 2, 1, 3)),
    "conv7_s2_same": dict(k=7, stride=2, padding="SAME", pads=(3, 3, 3, 3), hw=(16, 13)),
    "conv3_pad_beyond_kernel": dict(k=3, pads=(4, 0, 0, 5)),
    "conv1x1_padded": dict(k=1, pads=(1, 0, 0, 1)),
    "conv3_dilated_batch2": dict(k=3, dilation=2, pads=(2, 1, 2, 1), batch=2),
    "dw3_s2": dict(depthwise=True, k=3, stride=2, pads=(0, 1, 0, 1), cin=8),
    "dw5_s1_multiplier": dict(depthwise=True, k=5, multiplier=2, pads=(2, 2, 1, 3)),
    "dw7_s2_same": dict(depthwise=True, k=7, stride=2, padding="SAME", pads=(1, 2, 3, 0), cin=16),
    "dw3_s1_batch3_same": dict(depthwise=True, k=3, padding="SAME", pads=(1, 1, 1, 1), batch=3),
    "padv2_zero": dict(k=3, stride=2, v2_value=0.0),
}


@pytest.mark.parametrize("case", sorted(FOLDS))
@pytest.mark.parametrize("kind", ["float", "int8", "hybrid"])
def test_pad_folds_into_the_convolution(case, kind, monkeypatch):
    kw = dict(FOLDS[case])
    if kw.get("v2_value") is not None and kind == "int8":
        kw["v2_value"] = IN_ZP  # the zero point is what implicit int8 padding reads
    data, feed = pad_conv_model(kind=kind, **kw)
    got, prof, want = run_both(data, feed, monkeypatch)
    assert pad_skipped(prof), prof
    for g, w_ in zip(got, want, strict=True):
        assert g.dtype == w_.dtype and g.shape == w_.shape
        assert g.tobytes() == w_.tobytes(), f"folded differs from unfolded: {np.abs(g - w_).max()}"
    if kind != "hybrid":  # LiteRT's hybrid conv quantizes differently (see conv_2d.c)
        compare(got, litert(data, feed, kind))


@pytest.mark.parametrize("kind", ["float", "int8"])
def test_folded_pad_is_bit_identical_across_threads(kind, monkeypatch):
    data, feed = pad_conv_model(kind=kind, k=3, stride=2, pads=(1, 2, 1, 1), hw=(64, 48), cin=16)
    one = wick.load(data)(feed)
    got, prof, want = run_both(data, feed, monkeypatch, num_threads=3)
    assert pad_skipped(prof), prof
    assert one[0].tobytes() == got[0].tobytes() == want[0].tobytes()


KEPT = {
    "two_readers": dict(second_reader=True),
    "pads_channels": dict(pad_channels=2),
    "padv2_nonzero_float": dict(v2_value=1.5),
    "padv2_negative_zero_float": dict(v2_value=-0.0),
}


@pytest.mark.parametrize("case", sorted(KEPT))
def test_pad_that_is_not_implicit_padding_stays(case, monkeypatch):
    data, feed = pad_conv_model(k=3, stride=2, **KEPT[case])
    got, prof, want = run_both(data, feed, monkeypatch)
    assert not pad_skipped(prof), prof
    for g, w_ in zip(got, want, strict=True):
        assert g.tobytes() == w_.tobytes()
    compare(got, litert(data, feed, "float"))


def test_int8_padv2_with_another_value_than_the_zero_point_stays(monkeypatch):
    data, feed = pad_conv_model(kind="int8", k=3, stride=2, v2_value=IN_ZP + 1)
    got, prof, want = run_both(data, feed, monkeypatch)
    assert not pad_skipped(prof), prof
    assert got[0].tobytes() == want[0].tobytes()
    compare(got, litert(data, feed, "int8"))


def pad_pool_model(
    *,
    kind="float",
    pool="MAX_POOL_2D",
    k=3,
    stride=2,
    padding="VALID",
    pads=(1, 0, 1, 0),
    v2_value=None,
    batch=1,
    hw=(12, 11),
    c=5,
    nan=False,
):
    """x -> PAD / PADV2 -> MAX_POOL_2D | AVERAGE_POOL_2D; returns (bytes, feed)."""
    q = kind == "int8"
    dtype = np.int8 if q else np.float32
    quant = _quant(IN_SCALE, IN_ZP) if q else None
    w = ModelWriter()
    sg = w.add_subgraph()
    shape = [batch, hw[0], hw[1], c]
    x, t = _add_pad(sg, shape, pads, 0, dtype, quant, v2_value)
    y = sg.add_tensor("y", [1], dtype, quant=quant)
    opts = dict(
        padding=padding,
        stride_h=stride,
        stride_w=stride,
        filter_height=k,
        filter_width=k,
        fused_activation_function="NONE",
    )
    sg.add_operator(pool, [t], [y], opts)
    sg.set_inputs([x])
    sg.set_outputs([y])
    if q:
        feed = RNG.integers(-128, 128, size=shape).astype(np.int8)
    else:
        feed = RNG.standard_normal(shape).astype(np.float32)
        if nan:  # a NaN and -inf in windows that also touch the padding
            feed[0, 0, 0, 0] = np.nan
            feed[0, 0, 1, 1] = -np.inf
            feed[0, -1, -1, 2] = np.nan
    return w.finish(), feed


POOL_FOLDS = {
    "max3_s2_topleft": dict(),
    "max2_s2_asymmetric_same": dict(k=2, padding="SAME", pads=(0, 3, 2, 1)),
    "max2_pad_beyond_window": dict(k=2, stride=1, pads=(3, 2, 0, 4)),  # windows of padding only
    "max3_s1_batch2_nan": dict(stride=1, pads=(1, 1, 1, 1), batch=2, nan=True),
}


@pytest.mark.parametrize("case", sorted(POOL_FOLDS))
@pytest.mark.parametrize("kind", ["float", "int8"])
def test_lowest_value_pad_folds_into_max_pool(case, kind, monkeypatch):
    kw = dict(POOL_FOLDS[case])
    if kind == "int8":
        kw.pop("nan", None)
    data, feed = pad_pool_model(kind=kind, v2_value=-np.inf if kind == "float" else -128, **kw)
    got, prof, want = run_both(data, feed, monkeypatch)
    assert pad_skipped(prof), prof
    assert got[0].tobytes() == want[0].tobytes()
    if not kw.get("nan"):  # LiteRT's max of a window holding NaN depends on its kernel
        compare(got, litert(data, feed, kind))


POOL_KEPT = {
    "max_after_zero_pad": dict(kind="float"),
    "max_after_lowest_finite": dict(kind="float", v2_value=np.finfo(np.float32).min),
    "max_after_zero_point_pad": dict(kind="int8"),  # fills 3, not -128
    "average_after_zero_pad": dict(kind="float", pool="AVERAGE_POOL_2D"),
}


@pytest.mark.parametrize("case", sorted(POOL_KEPT))
def test_pad_that_a_pool_would_read_differently_stays(case, monkeypatch):
    kw = POOL_KEPT[case]
    data, feed = pad_pool_model(**kw)
    got, prof, want = run_both(data, feed, monkeypatch)
    assert not pad_skipped(prof), prof
    assert got[0].tobytes() == want[0].tobytes()
    compare(got, litert(data, feed, kw["kind"]))
