"""Differential tests of the custom operators in LiteRT's BuiltinOpResolver besides
TFLite_Detection_PostProcess: ``AudioSpectrogram`` and ``Mfcc`` (src/ops/audio.c,
src/kernels/reference/audio.c) and ``NumericVerify`` (src/ops/numeric_verify.c).

Single-op files (custom op, FlexBuffers options) run on wick (default and reference kernels) and
on LiteRT's default interpreter and its reference resolver; float outputs agree within
1e-4 * max(1, max|ref|) (both compute in double and round to float, so the real spread is a few
ulps; measured: bit-exact). ``NumericVerify`` is bit-exact with LiteRT's reference resolver;
LiteRT's default kernels dequantize with other float roundings, so against them its output is
within a few ulps of the dequantized values. Malformed options, shapes and types fail with a
clear error, never a crash.
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import MALFORMED, UNSUPPORTED
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(7)
REL = 1e-4


def _flex(options):
    from flatbuffers import flexbuffers

    return bytes(flexbuffers.Dumps(options))


def _model(ops, inputs, outputs, constants=None):
    """A file of custom ops. `inputs` {name: array} (graph inputs, fed in order), `constants`
    {name: array}; `ops` [(code, [operand names], [output names], options bytes)]; `outputs`
    {name: (shape, dtype)} (the graph's outputs: the last op's). Returns (bytes, feeds)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    t, feeds = {}, []
    for name, value in inputs.items():
        t[name] = sg.add_tensor(name, list(value.shape), value.dtype)
        feeds.append(value)
    for name, value in (constants or {}).items():
        t[name] = sg.add_constant(name, value)
    for name, (shape, dt) in outputs.items():
        t[name] = sg.add_tensor(name, list(shape), dt)
    for code, ins, outs, options in ops:
        for o in outs:
            if o not in t:
                t[o] = sg.add_tensor(o, [1], np.float32)
        sg.add_operator(
            "CUSTOM",
            [t[n] for n in ins],
            [t[n] for n in outs],
            custom_code=code,
            custom_options=options,
        )
    sg.set_inputs([t[n] for n in inputs])
    sg.set_outputs([t[n] for n in outputs])
    return w.finish(), feeds


def _check(data, feeds, default_atol=0.0):
    """Runs on wick (both kernel sets) and LiteRT (both resolvers); returns wick's output.
    `default_atol` widens the bar against LiteRT's default kernels only."""
    got = wick.load(data)(*feeds)
    got_ref = wick.load(data, reference=True)(*feeds)
    for reference in (False, True):
        want = run_litert(data, feeds, reference=reference)
        for g, r in zip(got + got_ref, want + want, strict=True):
            g, r = np.asarray(g), np.asarray(r)
            assert g.shape == r.shape and g.dtype == r.dtype
            if r.size:
                tol = REL * max(1.0, float(np.max(np.abs(r))))
                tol = tol if reference else max(tol, default_atol)
                np.testing.assert_allclose(g, r, rtol=0, atol=tol)
    return got[0]


# ----------------------------------------------------------------------------------------------
# AudioSpectrogram
# ----------------------------------------------------------------------------------------------


def _fft_len(window):
    n = 1
    while n < window:
        n *= 2
    return n


def _spectrogram(samples, channels, window, stride, squared, x=None, options=None):
    x = RNG.standard_normal((samples, channels)).astype(np.float32) if x is None else x
    frames = 0 if samples < window else 1 + (samples - window) // stride
    bins = _fft_len(window) // 2 + 1
    if options is None:
        options = _flex({"window_size": window, "stride": stride, "magnitude_squared": squared})
    return _model(
        [("AudioSpectrogram", ["x"], ["y"], options)],
        {"x": x},
        {"y": ((channels, frames, bins), np.float32)},
    )


@pytest.mark.parametrize(
    "samples, channels, window, stride, squared",
    [
        (1000, 1, 256, 128, True),  # power-of-two window
        (1000, 1, 256, 128, False),
        (1600, 1, 480, 160, False),  # 30 ms / 10 ms at 16 kHz: fft 512
        (777, 2, 100, 37, True),  # multi-channel, odd sizes
        (777, 3, 100, 37, False),
        (300, 1, 2, 1, False),  # smallest window
        (513, 2, 513, 1, True),  # window = samples: one frame, fft 1024
        (2000, 1, 64, 200, False),  # stride > window: gaps between frames
        (100, 2, 200, 10, False),  # window > samples: no frames
    ],
)
def test_audio_spectrogram(samples, channels, window, stride, squared):
    data, feeds = _spectrogram(samples, channels, window, stride, squared)
    _check(data, feeds)


def test_audio_spectrogram_default_magnitude_squared():
    """magnitude_squared may be left out: LiteRT reads it as false."""
    data, feeds = _spectrogram(
        500, 1, 100, 50, False, options=_flex({"window_size": 100, "stride": 50})
    )
    _check(data, feeds)


def test_audio_spectrogram_sine_peak():
    """A sine at bin 16 of a 256-point window peaks there (the layout is [channel, frame, bin])."""
    n = np.arange(2048)
    x = np.stack([np.sin(2 * np.pi * 16 * n / 256), np.sin(2 * np.pi * 40 * n / 256)], axis=1)
    data, feeds = _spectrogram(2048, 2, 256, 256, False, x=x.astype(np.float32))
    got = _check(data, feeds)
    assert got.shape == (2, 8, 129)
    assert (np.argmax(got[0], axis=1) == 16).all() and (np.argmax(got[1], axis=1) == 40).all()


@pytest.mark.parametrize(
    "options, match",
    [
        ({"stride": 10, "magnitude_squared": False}, 'lack "window_size"'),
        ({"window_size": 16, "magnitude_squared": False}, 'lack "stride"'),
        ({"window_size": 1, "stride": 1}, "window_size 1 must be >= 2"),
        ({"window_size": 0, "stride": 1}, "window_size 0 must be >= 2"),
        ({"window_size": -16, "stride": 1}, "window_size -16 must be >= 2"),
        ({"window_size": 16, "stride": 0}, "stride 0 must be >= 1"),
        ({"window_size": 16, "stride": -3}, "stride -3 must be >= 1"),
        ({"window_size": 1 << 40, "stride": 1}, "out of range"),
        ({"window_size": "16", "stride": 1}, '"window_size" is not a number'),
        ({"window_size": 16, "stride": 1, "magnitude_squared": "yes"}, '"magnitude_squared"'),
        ([16, 8], "must be a FlexBuffers map"),
        (b"\x01\x02", "not a well-formed FlexBuffers map"),
        (b"", "not a well-formed FlexBuffers map"),
    ],
)
def test_audio_spectrogram_malformed_options(options, match):
    options = options if isinstance(options, bytes) else _flex(options)
    data, feeds = _spectrogram(200, 1, 16, 8, False, options=options)
    with pytest.raises(wick.WickError, match=MALFORMED) as e:
        wick.load(data)(*feeds)
    assert "AudioSpectrogram" in str(e.value) and match in str(e.value)


def test_audio_spectrogram_huge_window_unsupported():
    options = _flex({"window_size": (1 << 30) + 1, "stride": 1})
    data, feeds = _spectrogram(200, 1, 16, 8, False, options=options)
    with pytest.raises(wick.WickError, match=UNSUPPORTED):
        wick.load(data)(*feeds)


@pytest.mark.parametrize(
    "shape, dtype", [((100,), np.float32), ((2, 50, 1), np.float32), ((100, 1), np.int32)]
)
def test_audio_spectrogram_bad_input(shape, dtype):
    x = np.zeros(shape, dtype)
    options = _flex({"window_size": 16, "stride": 8})
    data, feeds = _model(
        [("AudioSpectrogram", ["x"], ["y"], options)], {"x": x}, {"y": ((1, 1, 9), np.float32)}
    )
    with pytest.raises(wick.WickError, match="AudioSpectrogram"):
        wick.load(data)(*feeds)


def test_audio_spectrogram_mutated_options_never_crash():
    """Every single-byte corruption of a valid options map loads or fails cleanly."""
    good = _flex({"window_size": 16, "stride": 8, "magnitude_squared": True})
    for i in range(len(good)):
        for v in (0x00, 0xFF, 0x7F, good[i] ^ 0x10):
            bad = good[:i] + bytes([v]) + good[i + 1 :]
            data, feeds = _spectrogram(64, 1, 16, 8, True, options=bad)
            try:
                wick.load(data)(*feeds)
            except wick.WickError as e:
                assert "AudioSpectrogram" in str(e)


# ----------------------------------------------------------------------------------------------
# Mfcc
# ----------------------------------------------------------------------------------------------


def _mfcc_options(upper=4000, lower=20, fb=40, dct=13, **extra):
    opts = {
        "upper_frequency_limit": upper,
        "lower_frequency_limit": lower,
        "filterbank_channel_count": fb,
        "dct_coefficient_count": dct,
        **extra,
    }
    return _flex({k: v for k, v in opts.items() if v is not None})


def _mfcc(shape, rate, options, spec=None, rate_const=False, rate_shape=(1,), dct=None):
    spec = (RNG.standard_normal(shape) ** 2 * 10).astype(np.float32) if spec is None else spec
    r = np.full(rate_shape, rate, np.int32)
    inputs, consts = {"spec": spec}, {}
    (consts if rate_const else inputs)["rate"] = r
    out = (shape[0], shape[1], dct or 13)
    return _model(
        [("Mfcc", ["spec", "rate"], ["y"], options)], inputs, {"y": (out, np.float32)}, consts
    )


@pytest.mark.parametrize(
    "shape, rate, upper, lower, fb, dct",
    [
        ((1, 10, 257), 16000, 4000, 20, 40, 13),  # TensorFlow's defaults
        ((2, 5, 129), 8000, 3000, 300, 20, 20),  # dct = filterbank, 2 channels
        ((1, 4, 513), 44100, 11025, 0, 64, 30),
        ((1, 3, 33), 16000, 7000, 100, 60, 12),  # more channels than bins (some always 0)
        ((3, 2, 2), 16000, 8000, 1, 1, 1),  # smallest: 2 bins, 1 channel
        ((1, 6, 129), 8000, 4000, 20, 40, 13),  # upper = Nyquist: the last bin counts
        ((1, 6, 129), 8000, 5000, 20, 40, 13),  # upper above Nyquist: LiteRT gives up, all 0
        ((1, 6, 129), 8000, 3999.7, 19.9, 40, 13),  # float limits truncate toward zero
    ],
)
def test_mfcc(shape, rate, upper, lower, fb, dct):
    data, feeds = _mfcc(shape, rate, _mfcc_options(upper, lower, fb, dct), dct=dct)
    got = _check(data, feeds)
    assert got.shape == (shape[0], shape[1], dct)
    if upper == 5000:
        assert not got.any()


def test_mfcc_constant_scalar_rate_and_zero_bins():
    """A constant scalar sample rate; all-zero frames hit the log floor (log 1e-12)."""
    spec = (RNG.standard_normal((1, 4, 129)) ** 2).astype(np.float32)
    spec[0, 1] = 0
    data, feeds = _mfcc(
        spec.shape, 8000, _mfcc_options(), spec=spec, rate_const=True, rate_shape=()
    )
    _check(data, feeds)


def test_mfcc_default_lower_limit():
    """lower_frequency_limit may be left out: LiteRT reads it as 0, a valid value."""
    data, feeds = _mfcc((1, 3, 129), 8000, _mfcc_options(lower=None))
    _check(data, feeds)


@pytest.mark.parametrize(
    "window, stride, squared, rate, fb, dct",
    [
        (480, 160, True, 16000, 40, 13),
        (256, 100, True, 8000, 26, 26),
        (100, 37, False, 8000, 20, 10),
    ],
)
def test_spectrogram_then_mfcc(window, stride, squared, rate, fb, dct):
    """The keyword-spotting front end: AudioSpectrogram -> Mfcc, two channels."""
    samples, channels = 4000, 2
    frames = 1 + (samples - window) // stride
    x = RNG.standard_normal((samples, channels)).astype(np.float32)
    spec_opts = _flex({"window_size": window, "stride": stride, "magnitude_squared": squared})
    data, feeds = _model(
        [
            ("AudioSpectrogram", ["x"], ["spec"], spec_opts),
            ("Mfcc", ["spec", "rate"], ["y"], _mfcc_options(rate // 2 - 100, 20, fb, dct)),
        ],
        {"x": x},
        {"y": ((channels, frames, dct), np.float32)},
        {"rate": np.array([rate], np.int32)},
    )
    _check(data, feeds)


@pytest.mark.parametrize(
    "options, match",
    [
        (dict(upper=None), 'lack "upper_frequency_limit"'),
        (dict(fb=None), 'lack "filterbank_channel_count"'),
        (dict(dct=None), 'lack "dct_coefficient_count"'),
        (dict(fb=0, dct=0), "filterbank_channel_count 0 must be >= 1"),
        (dict(fb=-4, dct=1), "filterbank_channel_count -4 must be >= 1"),
        (dict(dct=0), "dct_coefficient_count 0 must be in [1, filterbank_channel_count 40]"),
        (dict(dct=41), "dct_coefficient_count 41 must be in"),
        (dict(lower=-1), "lower_frequency_limit -1 is negative"),
        (dict(upper=20, lower=20), "upper_frequency_limit 20 must be above"),
        (dict(upper=100, lower=200), "upper_frequency_limit 100 must be above"),
        (dict(upper=1e19), "out of range"),
        (dict(upper=float("inf")), "out of range"),
        (dict(upper=float("nan")), "out of range"),
        (dict(fb=1 << 40), "out of range"),
        (dict(upper="4000"), '"upper_frequency_limit" is not a number'),
        (dict(dct=1.5), '"dct_coefficient_count" is not a number'),
    ],
)
def test_mfcc_malformed_options(options, match):
    data, feeds = _mfcc((1, 2, 129), 8000, _mfcc_options(**options))
    with pytest.raises(wick.WickError, match=MALFORMED) as e:
        wick.load(data)(*feeds)
    assert "Mfcc" in str(e.value) and match in str(e.value)


@pytest.mark.parametrize("rate", [0, -8000])
def test_mfcc_bad_sample_rate(rate):
    """A graph-input sample rate <= 0 fails the invoke; a constant one fails at load."""
    data, feeds = _mfcc((1, 2, 129), rate, _mfcc_options())
    m = wick.load(data)
    with pytest.raises(wick.WickError, match="invalid input value") as e:
        m(*feeds)
    assert f"sample_rate is {rate}" in str(e.value)
    data, feeds = _mfcc((1, 2, 129), rate, _mfcc_options(), rate_const=True)
    with pytest.raises(wick.WickError, match=MALFORMED):
        wick.load(data)(*feeds)


@pytest.mark.parametrize(
    "spec_shape, spec_dtype, rate_shape, rate_dtype, match",
    [
        ((2, 129), np.float32, (1,), np.int32, "rank 2"),
        ((1, 1, 2, 129), np.float32, (1,), np.int32, "rank 4"),
        ((1, 2, 1), np.float32, (1,), np.int32, "1 bins"),
        ((1, 2, 129), np.int32, (1,), np.int32, "float32"),
        ((1, 2, 129), np.float32, (1,), np.float32, "sample_rate must be int32"),
        ((1, 2, 129), np.float32, (2,), np.int32, "one value, not 2"),
    ],
)
def test_mfcc_bad_operands(spec_shape, spec_dtype, rate_shape, rate_dtype, match):
    options = _mfcc_options()
    data, feeds = _model(
        [("Mfcc", ["spec", "rate"], ["y"], options)],
        {"spec": np.ones(spec_shape, spec_dtype), "rate": np.full(rate_shape, 8000, rate_dtype)},
        {"y": ((1, 2, 13), np.float32)},
    )
    with pytest.raises(wick.WickError, match="Mfcc") as e:
        wick.load(data)(*feeds)
    assert match in str(e.value)


def test_mfcc_mutated_options_never_crash():
    good = _mfcc_options(upper=3000, lower=20, fb=8, dct=4)
    for i in range(len(good)):
        for v in (0x00, 0xFF, 0x7F, good[i] ^ 0x10):
            bad = good[:i] + bytes([v]) + good[i + 1 :]
            data, feeds = _mfcc((1, 2, 33), 8000, bad, dct=4)
            try:
                wick.load(data)(*feeds)
            except wick.WickError as e:
                assert "Mfcc" in str(e)


# ----------------------------------------------------------------------------------------------
# NumericVerify (src/ops/numeric_verify.c)
# ----------------------------------------------------------------------------------------------


def _verify(q, ref, options, quant=None, ref_shape=None):
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("q", list(q.shape), q.dtype, quant=quant)
    r = sg.add_tensor("ref", list(ref.shape if ref_shape is None else ref_shape), ref.dtype)
    y = sg.add_tensor("diff", list(q.shape), np.float32)
    sg.add_operator("CUSTOM", [x, r], [y], custom_code="NumericVerify", custom_options=options)
    sg.set_inputs([x, r])
    sg.set_outputs([y])
    return w.finish(), [q, ref]


def _quantized(dtype, shape, scale, zp):
    info = np.iinfo(dtype)
    q = RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    real = (q.astype(np.float64) - zp) * scale
    ref = (real + RNG.uniform(-0.4, 0.4, size=shape) * scale).astype(np.float32)
    return q, ref, dict(scale=[scale], zero_point=[zp])


@pytest.mark.parametrize(
    "dtype, scale, zp",
    [(np.int8, 0.05, -3), (np.uint8, 0.5, 127), (np.int16, 1e-3, 0), (np.int16, 0.37, 12)],
)
@pytest.mark.parametrize("tolerance, log", [(0.0, False), (5.0, True), (5.0, False), (0.05, True)])
def test_numeric_verify(dtype, scale, zp, tolerance, log):
    """Within tolerance (or not checking): the output is dequant(q) - ref, as LiteRT's."""
    q, ref, quant = _quantized(dtype, (3, 17), scale, zp)
    options = _flex({"tolerance": tolerance, "log_if_failed": log})
    data, feeds = _verify(q, ref, options, quant)
    _check(data, feeds, default_atol=_dequant_ulps(q, scale, zp))


def _dequant_ulps(q, scale, zp):
    """LiteRT's default kernels dequantize with float rounding steps of their own (as
    q * scale + (-zp * scale) in one case measured); its reference kernels, like wick, round
    scale * (q - zp) once. The two differ by a few ulps of the dequantized values."""
    return 4 * float(np.spacing(np.float32(np.max(np.abs((q.astype(np.float64) - zp) * scale)))))


def test_numeric_verify_float16_and_default_options():
    """float16 input, empty options (LiteRT reads tolerance 0, log_if_failed false)."""
    h = RNG.standard_normal((2, 3, 4)).astype(np.float16)
    ref = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    data, feeds = _verify(h, ref, _flex({}))
    _check(data, feeds)


def test_numeric_verify_mismatch_fails_like_litert():
    q, ref, quant = _quantized(np.int8, (4, 5), 0.1, 0)
    ref[2, 3] += 1.0  # 10 steps off, tolerance 2 steps
    data, feeds = _verify(q, ref, _flex({"tolerance": 2.0, "log_if_failed": True}), quant)
    with pytest.raises(wick.WickError, match="invalid input value") as e:
        wick.load(data)(*feeds)
    assert "NumericVerify" in str(e.value) and "element 13" in str(e.value)
    for reference in (False, True):
        with pytest.raises(Exception):  # noqa: B017 (whatever LiteRT's binding raises)
            run_litert(data, feeds, reference=reference)
    # The same file with log_if_failed off only reports the difference.
    data, feeds = _verify(q, ref, _flex({"tolerance": 2.0, "log_if_failed": False}), quant)
    got = _check(data, feeds, default_atol=_dequant_ulps(q, 0.1, 0))
    assert abs(got[2, 3] + 1.0) < 0.06


@pytest.mark.parametrize(
    "qdtype, rdtype, ref_shape, options, match",
    [
        (np.int32, np.float32, None, {}, "int8, uint8, int16 or float16"),
        (np.int8, np.int8, None, {}, "ref must be float32"),
        (np.int8, np.float32, (3, 4), {}, "ref has 12 elements, the input 6"),
        (np.int8, np.float32, None, {"tolerance": "x"}, '"tolerance" is not a number'),
        (np.int8, np.float32, None, {"log_if_failed": "x"}, '"log_if_failed" is not a number'),
        (np.int8, np.float32, None, [1.0], "must be a FlexBuffers map"),
        (np.int8, np.float32, None, b"\x00\x00\x80\x40", "not a well-formed FlexBuffers map"),
    ],
)
def test_numeric_verify_malformed(qdtype, rdtype, ref_shape, options, match):
    options = options if isinstance(options, bytes) else _flex(options)
    q = np.zeros((2, 3), qdtype)
    ref = np.zeros(ref_shape or (2, 3), rdtype)
    data, feeds = _verify(q, ref, options, dict(scale=[0.1], zero_point=[0]))
    with pytest.raises(wick.WickError, match="NumericVerify") as e:
        wick.load(data)(*feeds)
    assert match in str(e.value)


def test_numeric_verify_mutated_options_never_crash():
    good = _flex({"tolerance": 5.0, "log_if_failed": True})
    q, ref, quant = _quantized(np.int8, (2, 3), 0.1, 0)
    for i in range(len(good)):
        for v in (0x00, 0xFF, 0x7F, good[i] ^ 0x10):
            data, feeds = _verify(q, ref, good[:i] + bytes([v]) + good[i + 1 :], quant)
            try:
                wick.load(data)(*feeds)
            except wick.WickError as e:
                assert "NumericVerify" in str(e)
