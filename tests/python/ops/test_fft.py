"""Differential tests of RFFT2D and the complex64 element ops REAL, IMAG and COMPLEX_ABS against
LiteRT: what TensorFlow's converter emits for tf.signal.rfft / rfft2d / stft with tf.abs,
tf.math.real and tf.math.imag (checked with TF 2.x: stft -> ... RFFT2D, RESHAPE, COMPLEX_ABS;
tf.complex, tf.math.conj and tf.math.angle do not convert without TF Select).

Tolerances:
* RFFT2D: ``1e-4 * max(1, max|ref|)`` over the complex output (the op's parity contract, room
  for a float-precision kernel at length 2048). The reference kernel computes in double as
  LiteRT does and in practice equals LiteRT to the last bit or nearly; ``test_rfft2d_is_double``
  pins that with 1e-6 against numpy's float64 DFT.
* REAL / IMAG: identical bytes. COMPLEX_ABS: 1e-6 relative (both call a hypot).
"""

from __future__ import annotations

import numpy as np
import pytest

import wick
from tests.python.ops._harness import (
    INVALID_INPUT,
    MALFORMED,
    UNSUPPORTED,
    C,
    In,
    build,
    fails,
    litert_refuses,
)
from tests.python.oracles.litert import op_histogram, run_litert, tolerance_check
from tests.python.oracles.tf_child import tf_convert

RNG = np.random.default_rng(4242)
FFT_REL = 1e-4
C64 = np.complex64


def signal(shape):
    return RNG.standard_normal(shape).astype(np.float32)


def crandom(shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(C64)


def rfft2d(x, fft_length, const_len=True):
    length = np.asarray(fft_length, np.int32)
    return build("RFFT2D", [In(x), C(length) if const_len else In(length)], out_dtypes=[C64])


def check_close(data, feeds, rel, exact=False):
    """wick (default and forced-reference kernels) vs LiteRT (default and reference)."""
    got = wick.load(data)(*feeds)[0]
    got_ref = wick.load(data, reference=True)(*feeds)[0]
    for reference in (False, True):
        want = run_litert(data, feeds, reference=reference)[0]
        for g, what in ((got, "wick"), (got_ref, "wick reference")):
            assert g.dtype == want.dtype and g.shape == want.shape, (what, g.dtype, g.shape)
            if exact:
                assert g.tobytes() == want.tobytes(), what
            else:
                t = tolerance_check(g, want, rel=rel, name=f"{what} vs LiteRT ref={reference}")
                assert t, t.message
    return got


# ============================================================================ RFFT2D


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
def test_rfft_1d(n):
    """tf.signal.rfft: H = 1, W = fft_length[1]."""
    x = signal((3, 1, n))
    got = check_close(*rfft2d(x, [1, n]), FFT_REL)
    assert got.shape == (3, 1, n // 2 + 1)


@pytest.mark.parametrize(
    "shape, fft_length",
    [
        ((4, 1, 100), [1, 64]),  # crop the width
        ((4, 1, 100), [1, 128]),  # pad the width
        ((1, 400), [1, 512]),  # an STFT frame padded to 512
        ((8, 16), [8, 16]),  # 2-D, exact
        ((5, 3), [8, 16]),  # 2-D, pad both
        ((70, 40), [32, 16]),  # 2-D, crop both
        ((10, 40), [16, 32]),  # crop one, pad the other
        ((2, 3, 32, 32), [32, 32]),  # batch dims
        ((2, 1, 3, 7, 9), [4, 8]),  # rank 5
        ((4, 2), [1, 2]),  # the smallest width the FFT library takes in LiteRT
        ((1, 2048), [1, 2048]),
        ((2, 2048, 4), [2048, 4]),  # a long column FFT
    ],
)
def test_rfft2d_shapes(shape, fft_length):
    got = check_close(*rfft2d(signal(shape), fft_length), FFT_REL)
    assert got.shape == shape[:-2] + (fft_length[0], fft_length[1] // 2 + 1)


def test_rfft2d_is_double():
    """The reference kernel works in double (as LiteRT's does): within ~1 float ulp of the
    exact DFT at length 2048 and 64 x 64, where float butterflies would drift further."""
    for shape, fft_length in (((2, 1, 2048), (1, 2048)), ((3, 64, 64), (64, 64))):
        x = signal(shape)
        got = wick.load(rfft2d(x, fft_length)[0])(x)[0]
        want = np.fft.rfft2(x.astype(np.float64), s=fft_length)
        t = tolerance_check(got, want, rel=1e-6, name=str(shape))
        assert t, t.message


def test_rfft2d_empty_and_degenerate():
    # a zero batch dim: empty output; an empty row: all-zero spectrum
    check_close(*rfft2d(signal((0, 4, 8)), [4, 8]), FFT_REL)
    got = wick.load(rfft2d(signal((2, 0, 8)), [4, 8])[0])(signal((2, 0, 8)))[0]
    assert got.shape == (2, 4, 5) and not got.any()


def test_rfft2d_width_one_is_the_dft():
    """fft_length[1] == 1: LiteRT's FFT library returns values that are not the DFT (1-1j for
    the one-sample input 1); wick returns the DFT, checked against numpy."""
    x = signal((3, 4, 5))
    got = wick.load(rfft2d(x, [4, 1])[0])(x)[0]
    t = tolerance_check(got, np.fft.rfft2(x, s=(4, 1)), rel=1e-6)
    assert t, t.message


def test_rfft2d_fft_length_at_run_time():
    """A fft_length that is a graph input is read at invoke, as LiteRT does."""
    x = signal((3, 10, 12))
    data, feeds = rfft2d(x, [8, 16], const_len=False)
    got = check_close(data, feeds, FFT_REL)
    assert got.shape == (3, 8, 9)
    rt = wick.load(data)
    for bad, match in (([8, 12], "powers of two"), ([0, 16], ">= 1"), ([8, -16], ">= 1")):
        with pytest.raises(wick.WickError) as e:
            rt(x, np.array(bad, np.int32))
        assert INVALID_INPUT in str(e.value) and match in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "fft_length, match, status",
    [
        ([6, 8], r"fft_length\[0\] is 6: RFFT2D takes only powers of two", UNSUPPORTED),
        ([8, 12], r"fft_length\[1\] is 12: RFFT2D takes only powers of two", UNSUPPORTED),
        ([0, 8], r"fft_length\[0\] is 0: lengths must be >= 1", MALFORMED),
        ([8, -2147483648], r"fft_length\[1\] is -2147483648", MALFORMED),
    ],
)
def test_rfft2d_bad_lengths(fft_length, match, status):
    x = signal((4, 8))
    operands = [In(x), C(np.array(fft_length, np.int32))]
    assert litert_refuses("RFFT2D", operands, out_dtypes=[C64])
    fails("RFFT2D", operands, match=match, status=status, out_dtypes=[C64])


@pytest.mark.parametrize(
    "operands, out_dtype, match, status",
    [
        ([In(signal((4, 8))), C(np.array([4, 8, 1], np.int32))], C64, r"shape \[2\]", MALFORMED),
        ([In(signal((4, 8))), C(np.array([[4, 8]], np.int32))], C64, r"shape \[2\]", MALFORMED),
        ([In(signal((4, 8))), C(np.array([4, 8], np.int64))], C64, "must be int32", MALFORMED),
        ([In(signal((8,))), C(np.array([1, 8], np.int32))], C64, "rank >= 2", MALFORMED),
        (
            [In(np.zeros((4, 8), np.int32)), C(np.array([4, 8], np.int32))],
            C64,
            "float32",
            UNSUPPORTED,
        ),
        (
            [In(signal((4, 8))), C(np.array([4, 8], np.int32))],
            np.float32,
            "complex64",
            MALFORMED,
        ),
    ],
)
def test_rfft2d_malformed(operands, out_dtype, match, status):
    fails("RFFT2D", operands, match=match, status=status, out_dtypes=[out_dtype])


def test_rfft2d_arity():
    fails("RFFT2D", [In(signal((4, 8)))], match="input", status=MALFORMED, out_dtypes=[C64])


# ============================================================================ REAL, IMAG, COMPLEX_ABS

SPECIAL = np.array(
    [
        0,
        -0.0,
        1j,
        -3 + 4j,
        3e38 + 3e38j,
        1e-30 + 1e-30j,
        np.inf,
        -np.inf * 1j,
        np.nan,
        1 + np.nan * 1j,
    ],
    C64,
)


@pytest.mark.parametrize("op", ["REAL", "IMAG", "COMPLEX_ABS"])
@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 33), (0, 4)])
def test_complex_part(op, shape):
    x = crandom(shape)
    exact = op != "COMPLEX_ABS"
    got = check_close(*build(op, [In(x)], out_dtypes=[np.float32]), 1e-6, exact=exact)
    want = {"REAL": x.real, "IMAG": x.imag, "COMPLEX_ABS": np.abs(x)}[op]
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("op", ["REAL", "IMAG", "COMPLEX_ABS"])
def test_complex_part_special_values(op):
    # COMPLEX_ABS: |3e38 + 3e38j| overflows float to inf; tiny parts do not underflow to 0
    check_close(*build(op, [In(SPECIAL)], out_dtypes=[np.float32]), 1e-6, exact=op != "COMPLEX_ABS")


@pytest.mark.parametrize("op", ["REAL", "IMAG", "COMPLEX_ABS"])
def test_complex_part_constant(op):
    """A complex64 constant in the file (the op is folded at prepare)."""
    data, feeds = build(op, [C(crandom((3, 5)))], out_dtypes=[np.float32])
    got = wick.load(data)(*feeds)[0]
    want = run_litert(data, feeds)[0]
    t = tolerance_check(got, want, rel=1e-6)
    assert t, t.message


@pytest.mark.parametrize("op", ["REAL", "IMAG", "COMPLEX_ABS"])
def test_complex_part_bad_types(op):
    fails(op, [In(signal((3,)))], match="float32 is not supported", status=UNSUPPORTED)
    fails(op, [In(crandom((3,)))], match="float32", status=MALFORMED, out_dtypes=[C64])


# ============================================================================ TF-converted files


# TensorFlow runs in a child process (tests/python/oracles/tf_child.py says why): one script, a
# tf.function per name.
_TF_FUNCTIONS = r"""
import sys
import numpy as np
import tensorflow as tf


def log_spectrogram(audio):
    spec = tf.signal.stft(audio, 400, 160, 512, window_fn=tf.signal.hann_window)
    return tf.math.log(tf.abs(spec) + 1e-6)


def rfft_parts(x):
    f = tf.signal.rfft(x)
    return tf.math.real(f), tf.math.imag(f), tf.abs(f) ** 2


PHASE = np.exp(1j * np.linspace(0, 3, 65)).astype(np.complex64)


def complex_product(x):
    f = tf.signal.rfft(x)
    return tf.abs(f * f * tf.constant(PHASE))


fn, shape = {
    "log_spectrogram": (log_spectrogram, [1, 16000]),
    "rfft_parts": (rfft_parts, [4, 256]),
    "complex_product": (complex_product, [3, 128]),
}[sys.argv[1]]
concrete = tf.function(fn, input_signature=[tf.TensorSpec(shape, tf.float32)])
concrete = concrete.get_concrete_function()
data = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn).convert()
open(sys.argv[2], "wb").write(data)
"""


def _compare_converted(data, feeds, rel):
    got = wick.load(data)(*feeds)
    for reference in (False, True):
        want = run_litert(data, feeds, reference=reference)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            t = tolerance_check(g, w, rel=rel, name=f"LiteRT ref={reference}")
            assert t, t.message
    return got


def test_tf_log_spectrogram():
    """tf.signal.stft (400-sample Hann frames, hop 160, 512-point FFT) + abs + log on one second
    of 16 kHz audio: RESHAPE GATHER RESHAPE MUL PAD RESHAPE RFFT2D RESHAPE COMPLEX_ABS ADD LOG."""
    data = tf_convert(_TF_FUNCTIONS, "log_spectrogram")
    assert {"RFFT2D", "COMPLEX_ABS"} <= set(op_histogram(data)), op_histogram(data)
    audio = (0.3 * np.sin(np.arange(16000) * 0.07) + 0.05 * signal(16000)).astype(np.float32)
    got = _compare_converted(data, [audio[None]], FFT_REL)
    assert got[0].shape == (1, 98, 257)
    # the same spectrogram in numpy: 98 frames, periodic Hann window, 512-point real FFT
    frames = np.stack([audio[i * 160 : i * 160 + 400] for i in range(98)]).astype(np.float64)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    want = np.log(np.abs(np.fft.rfft(frames * hann, 512)) + 1e-6)[None].astype(np.float32)
    t = tolerance_check(got[0], want, rel=FFT_REL, name="vs numpy")
    assert t, t.message


def test_tf_rfft_real_imag_power():
    """tf.signal.rfft then real, imag and |X|^2: RFFT2D RESHAPE REAL IMAG COMPLEX_ABS MUL."""
    data = tf_convert(_TF_FUNCTIONS, "rfft_parts")
    got = _compare_converted(data, [signal((4, 256))], FFT_REL)
    assert [g.shape for g in got] == [(4, 129)] * 3


# ============================================================================ complex64 MUL


@pytest.mark.parametrize("shapes", [((2, 3, 5), (2, 3, 5)), ((2, 3, 5), (5,)), ((4, 1), (1, 3))])
def test_mul_complex64(shapes):
    """MUL on complex64 (LiteRT runs it; TF converts complex products to it). Finite inputs:
    both compute the float product (ar*br - ai*bi) + (ar*bi + ai*br)i; 1e-6 relative."""
    a, b = crandom(shapes[0]), crandom(shapes[1])
    check_close(*build("MUL", [In(a), In(b)]), 1e-6)
    check_close(*build("MUL", [In(a), C(b)]), 1e-6)


def test_mul_complex64_activation_refused():
    a = crandom((3,))
    fails(
        "MUL",
        [In(a), In(a)],
        options=dict(fused_activation_function="RELU"),
        match="complex64 with a fused activation",
        status=UNSUPPORTED,
    )
    fails("ADD", [In(a), In(a)], match="complex64 for MUL", status=UNSUPPORTED)


def test_tf_complex_product():
    """A spectrum times itself and times a constant complex phase, then abs: RFFT2D RESHAPE MUL
    MUL COMPLEX_ABS."""
    data = tf_convert(_TF_FUNCTIONS, "complex_product")
    assert op_histogram(data).get("MUL", 0) >= 1, op_histogram(data)
    _compare_converted(data, [signal((3, 128))], FFT_REL)
