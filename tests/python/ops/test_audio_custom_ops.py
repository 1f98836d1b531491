"""Differential tests of the audio custom operators in LiteRT's BuiltinOpResolver:
``AudioSpectrogram`` and ``Mfcc`` (src/ops/audio.c, src/kernels/reference/audio.c).

Single-op files (custom op, FlexBuffers options) run on wick (default and reference kernels) and
on LiteRT's default interpreter and its reference resolver; float outputs agree within
1e-4 * max(1, max|ref|) (both compute in double and round to float, so the real spread is a few
ulps). Malformed options, shapes and types fail with a clear error, never a crash.
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


def _check(data, feeds, ref_also=True):
    """Runs on wick (both kernel sets) and LiteRT (both resolvers); returns wick's output."""
    got = wick.load(data)(*feeds)
    got_ref = wick.load(data, reference=True)(*feeds)
    for reference in (False, True) if ref_also else (False,):
        want = run_litert(data, feeds, reference=reference)
        for g, r in zip(got + got_ref, want + want, strict=True):
            g, r = np.asarray(g), np.asarray(r)
            assert g.shape == r.shape and g.dtype == r.dtype
            if r.size:
                tol = REL * max(1.0, float(np.max(np.abs(r))))
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
