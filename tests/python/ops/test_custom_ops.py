"""Differential tests of the custom operators wick runs (src/ops/custom_op_table.inc).

These are the custom ops stock LiteRT's default Python interpreter runs out of the box:

* ``Convolution2DTransposeBias`` (MediaPipe): LiteRT runs it only through its XNNPACK delegate
  (the default interpreter), not with its reference resolver, so the oracle is the default one.
  Float outputs within 1e-5 * max(1, max|ref|) (XNNPACK sums in another order).
* ``TFLite_Detection_PostProcess`` (SSD box decoding + NMS, in LiteRT's BuiltinOpResolver): the
  same kernel in LiteRT's reference and default resolvers. Scores are drawn without ties, so the
  order of equal scores (LiteRT's std::partial_sort leaves it unspecified) never matters; boxes
  within 1e-5 (decoding in double, then float), classes, scores and counts exactly. Output slots
  LiteRT leaves unwritten (past the detections) are not compared.

Malformed options (a short struct, broken FlexBuffers, a bad stride) must fail with a clear error;
an unknown custom op still fails at prepare, naming it.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import wick
from tests.python.ops._harness import MALFORMED, UNSUPPORTED, compare
from tests.python.oracles.litert import run_litert, tolerance_check
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(2024)
ROOT = Path(__file__).resolve().parents[3]
MEDIAPIPE = Path("/work/cache/mp/mediapipe/modules")


def _custom_model(code, operands, outputs, options):
    """A one-op file: `operands` {name: ("in" | "c", array)} in operand order (run-time inputs or
    stored constants); `outputs` [(shape, dtype)]. Returns (bytes, feeds)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    ins, graph_inputs, feeds = [], [], []
    for name, (kind, value) in operands.items():
        if kind == "in":
            t = sg.add_tensor(name, list(value.shape), value.dtype)
            graph_inputs.append(t)
            feeds.append(value)
        else:
            t = sg.add_constant(name, value)
        ins.append(t)
    outs = [sg.add_tensor(f"out{j}", list(shape), dt) for j, (shape, dt) in enumerate(outputs)]
    sg.add_operator("CUSTOM", ins, outs, custom_code=code, custom_options=options)
    sg.set_inputs(graph_inputs)
    sg.set_outputs(outs)
    return w.finish(), feeds


# ----------------------------------------------------------------------------------------------
# Convolution2DTransposeBias
# ----------------------------------------------------------------------------------------------

SAME, VALID = 1, 2


def _tconv_bias(shape, out_c, k, strides, padding, options=None, weights_in=False, arrays=None):
    n, h, wd, c = shape
    x, wt, b = arrays or (
        RNG.standard_normal(shape).astype(np.float32),
        RNG.standard_normal((out_c, k[0], k[1], c)).astype(np.float32),
        RNG.standard_normal(out_c).astype(np.float32),
    )
    sw, sh = strides
    if padding == SAME:
        oh, ow = h * sh, wd * sw
    else:
        oh, ow = (h - 1) * sh + k[0], (wd - 1) * sw + k[1]
    if options is None:
        options = struct.pack("<3i", padding, sw, sh)
    return _custom_model(
        "Convolution2DTransposeBias",
        {"x": ("in", x), "w": ("in" if weights_in else "c", wt), "b": ("c", b)},
        [((n, oh, ow, out_c), np.float32)],
        options,
    )


TCONV_CASES = [
    # (input NHWC, out_c, kernel, (stride_w, stride_h), padding)
    ((1, 4, 5, 3), 2, (3, 3), (2, 2), SAME),
    ((1, 4, 5, 3), 2, (3, 3), (2, 2), VALID),
    ((1, 8, 8, 16), 8, (4, 4), (2, 2), SAME),  # the selfie-segmentation decoder's shape family
    ((2, 3, 4, 5), 7, (2, 3), (1, 2), SAME),
    ((1, 5, 3, 4), 3, (2, 2), (3, 1), VALID),  # kernel smaller than the stride
    ((1, 6, 6, 1), 1, (1, 1), (1, 1), SAME),
    ((1, 7, 9, 24), 33, (5, 3), (2, 3), SAME),  # odd sizes: GEMM tile remainders
    ((1, 2, 2, 2), 4, (4, 4), (2, 2), VALID),
]


@pytest.mark.parametrize("shape,out_c,k,strides,padding", TCONV_CASES)
def test_convolution2d_transpose_bias(shape, out_c, k, strides, padding):
    data, feeds = _tconv_bias(shape, out_c, k, strides, padding)
    ref = run_litert(data, feeds)  # XNNPACK: the reference resolver lacks this op
    compare(wick.load(data)(*feeds), ref)
    compare(wick.load(data, reference=True)(*feeds), ref, what="reference-kernel output")


def test_convolution2d_transpose_bias_runtime_weights():
    """XNNPACK wants constant weights, so LiteRT cannot run weights fed at run time; wick's
    reference kernel can: compare with the same arrays stored as constants on LiteRT."""
    arrays = (
        RNG.standard_normal((1, 4, 4, 3)).astype(np.float32),
        RNG.standard_normal((5, 3, 3, 3)).astype(np.float32),
        RNG.standard_normal(5).astype(np.float32),
    )
    data, feeds = _tconv_bias((1, 4, 4, 3), 5, (3, 3), (2, 2), SAME, weights_in=True, arrays=arrays)
    const, const_feeds = _tconv_bias((1, 4, 4, 3), 5, (3, 3), (2, 2), SAME, arrays=arrays)
    compare(wick.load(data)(*feeds), run_litert(const, const_feeds))


@pytest.mark.parametrize(
    "options,match",
    [
        (b"", r"custom_options hold 0 bytes"),
        (struct.pack("<2i", SAME, 2), r"custom_options hold 8 bytes.*needs 12"),
        (struct.pack("<3i", 0, 2, 2), r"padding 0 .*neither SAME"),
        (struct.pack("<3i", 7, 2, 2), r"padding 7 .*neither SAME"),
        (struct.pack("<3i", SAME, 0, 2), r"strides 2 x 0 must be positive"),
        (struct.pack("<3i", VALID, 2, -3), r"strides -3 x 2 must be positive"),
        (struct.pack("<3i", SAME, 2**30, 2**30), r"output size overflows"),
    ],
)
def test_convolution2d_transpose_bias_malformed(options, match):
    data, feeds = _tconv_bias((1, 4, 5, 3), 2, (3, 3), (2, 2), SAME, options=options)
    with pytest.raises(wick.WickError, match=MALFORMED) as e:
        wick.load(data)(*feeds)
    assert "Convolution2DTransposeBias (operator 0)" in str(e.value)
    assert re.search(match, str(e.value)), str(e.value)


def test_convolution2d_transpose_bias_longer_struct():
    """Newer TfLiteTransposeConvParams append fields: the first three are the ones read."""
    opts = struct.pack("<5i", SAME, 2, 1, 0, 0)
    data, feeds = _tconv_bias((1, 3, 4, 2), 3, (3, 2), (2, 1), SAME, options=opts)
    compare(wick.load(data)(*feeds), run_litert(data, feeds))


def test_convolution2d_transpose_bias_arity():
    x = RNG.standard_normal((1, 2, 2, 2)).astype(np.float32)
    wt = RNG.standard_normal((3, 2, 2, 2)).astype(np.float32)
    data, feeds = _custom_model(
        "Convolution2DTransposeBias",
        {"x": ("in", x), "w": ("c", wt)},
        [((1, 4, 4, 3), np.float32)],
        struct.pack("<3i", SAME, 2, 2),
    )
    with pytest.raises(wick.WickError, match="Convolution2DTransposeBias"):
        wick.load(data)(*feeds)


# Seeds whose blocky image gives a non-trivial mask (max 0.30 and 0.08; most images give < 0.01).
@pytest.mark.parametrize(
    "name,seed",
    [("selfie_segmentation.tflite", 0), ("selfie_segmentation_landscape.tflite", 2)],
)
def test_selfie_segmentation(name, seed):
    path = MEDIAPIPE / "selfie_segmentation" / name
    if not path.exists():
        pytest.skip(f"{path} is absent (the unpacked mediapipe wheel in /work/cache)")
    data = path.read_bytes()
    # A blocky image in [0, 1] (the model's input range); pixel noise yields near-zero masks
    # that would make the comparison vacuous.
    from tests.python.oracles.litert import make_interpreter

    _, h, w, _ = make_interpreter(data).get_input_details()[0]["shape"]
    coarse = np.random.default_rng(seed).uniform(0, 1, (1, 8, 8, 3)).astype(np.float32)
    feeds = [np.repeat(np.repeat(coarse, h // 8, 1), w // 8, 2)]
    ref = run_litert(data, feeds)
    got = wick.load(data)(*feeds)
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert np.abs(r).max() > 0.05, "the input should give a non-trivial mask"
        t = tolerance_check(g, r, rel=1e-4)  # whole-model bar (many fp32 ops)
        assert t, t.message


# ----------------------------------------------------------------------------------------------
# Unknown custom ops and `wick inspect`
# ----------------------------------------------------------------------------------------------


def test_unknown_custom_op_fails_at_prepare():
    x = np.ones((2, 2), np.float32)
    data, _ = _custom_model("MyMadeUpOp", {"x": ("in", x)}, [((2, 2), np.float32)], b"\x00")
    with pytest.raises(wick.WickError, match=UNSUPPORTED) as e:
        wick.load(data)
    assert 'custom operator "MyMadeUpOp" is not supported by wick' in str(e.value)


def test_inspect_lists_custom_name(tmp_path):
    exe = Path(os.environ.get("WICK_CLI", ROOT / "build" / "wick"))
    if not exe.exists():
        pytest.skip(f"the wick CLI {exe} is not built")
    data, _ = _tconv_bias((1, 4, 5, 3), 2, (3, 3), (2, 2), SAME)
    f = tmp_path / "tconv_bias.tflite"
    f.write_bytes(data)
    out = subprocess.run([str(exe), "inspect", str(f)], capture_output=True, text=True, check=True)
    assert "Convolution2DTransposeBias" in out.stdout, out.stdout
