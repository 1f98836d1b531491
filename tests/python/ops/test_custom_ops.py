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
from tests.corpus import sources
from tests.python.ops._harness import MALFORMED, UNSUPPORTED, compare
from tests.python.oracles.litert import run_litert, tolerance_check
from wick.tflite.writer import ModelWriter

RNG = np.random.default_rng(2024)
ROOT = Path(__file__).resolve().parents[3]


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
    [("selfie_segmentation", 0), ("selfie_segmentation_landscape", 2)],
)
def test_selfie_segmentation(name, seed):
    entry = next(e for e in sources.ENTRIES if e.source == "mediapipe" and e.name == name)
    path = entry.path(sources.corpus_dir())
    if not sources.cached(entry):
        pytest.skip(
            f"{path} is not in the corpus cache ($WICK_CORPUS_DIR; `python -m tests.corpus` "
            "fetches the pinned mediapipe wheel's files)"
        )
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


# ----------------------------------------------------------------------------------------------
# TFLite_Detection_PostProcess
# ----------------------------------------------------------------------------------------------

DETECT = "TFLite_Detection_PostProcess"


def _detect_options(**kw):
    from flatbuffers import flexbuffers

    opts = dict(
        max_detections=10,
        max_classes_per_detection=1,
        detections_per_class=5,
        use_regular_nms=False,
        nms_score_threshold=0.3,
        nms_iou_threshold=0.5,
        num_classes=5,
        y_scale=10.0,
        x_scale=10.0,
        h_scale=5.0,
        w_scale=5.0,
    )
    opts.update(kw)
    return bytes(flexbuffers.Dumps({k: v for k, v in opts.items() if v is not None}))


def _detect_arrays(rng, n, cols, box_len=4):
    """Anchors on a jittered grid (so boxes overlap and NMS matters) and distinct scores."""
    g = int(np.ceil(np.sqrt(n)))
    cy, cx = np.divmod(np.arange(n), g)
    anchors = np.stack(
        [
            (cy + 0.5) / g + rng.uniform(-0.05, 0.05, n),
            (cx + 0.5) / g + rng.uniform(-0.05, 0.05, n),
            rng.uniform(0.2, 0.5, n),
            rng.uniform(0.2, 0.5, n),
        ],
        1,
    ).astype(np.float32)
    enc = (rng.standard_normal((1, n, box_len)) * 1.5).astype(np.float32)
    scores = rng.permutation(n * cols).reshape(1, n, cols).astype(np.float32) / (n * cols)
    return enc, scores, anchors


def _detect_model(enc, scores, anchors, options, max_det=10, max_cls=1, const_anchors=True):
    d = max_det * max_cls
    return _custom_model(
        DETECT,
        {
            "boxes": ("in", enc),
            "scores": ("in", scores),
            "anchors": ("c" if const_anchors else "in", anchors),
        },
        [((1, d, 4), np.float32), ((1, d), np.float32), ((1, d), np.float32), ((1,), np.float32)],
        options,
    )


def _compare_detections(got, ref, max_cls, num_classes, regular):
    """Compares the slots LiteRT writes: the first num_detections detections (times the classes
    each carries in fast mode); the rest of LiteRT's outputs is uninitialized memory."""
    assert [g.shape for g in got] == [np.asarray(r).shape for r in ref]
    count = int(ref[3][0])
    assert got[3][0] == ref[3][0], f"num_detections {got[3][0]} != LiteRT {ref[3][0]}"
    if regular:
        slots = np.arange(count)
    else:
        cats = min(max_cls, num_classes)
        slots = (np.arange(count)[:, None] * max_cls + np.arange(cats)[None, :]).ravel()
    gb, rb = got[0][0, slots], np.asarray(ref[0])[0, slots]
    t = tolerance_check(gb, rb, rel=1e-5)
    assert t, t.message
    np.testing.assert_array_equal(got[1][0, slots], np.asarray(ref[1])[0, slots])
    np.testing.assert_array_equal(got[2][0, slots], np.asarray(ref[2])[0, slots])
    # Slots past the detections are zero on wick.
    rest = np.setdiff1d(np.arange(got[1].shape[1]), slots)
    assert not got[1][0, rest].any() and not got[2][0, rest].any() and not got[0][0, rest].any()
    return count


DETECT_CASES = [
    # (boxes, num_classes, background column, max_detections, max_classes, regular, dpc, box_len)
    (60, 5, True, 10, 1, False, 5, 4),
    (60, 5, True, 10, 3, False, 5, 4),
    (60, 5, False, 10, 2, False, 5, 4),
    (40, 3, True, 6, 5, False, 5, 6),  # max_classes > num_classes; keypoint columns ignored
    (60, 5, True, 10, 1, True, 5, 4),
    (60, 5, False, 12, 1, True, 3, 4),
    (100, 8, True, 20, 1, True, 100, 4),
    (30, 1, True, 5, 1, True, 2, 4),
]


@pytest.mark.parametrize("n,classes,background,max_det,max_cls,regular,dpc,box_len", DETECT_CASES)
@pytest.mark.parametrize("reference", [True, False])
def test_detection_postprocess(
    n, classes, background, max_det, max_cls, regular, dpc, box_len, reference
):
    rng = np.random.default_rng(n * 100 + classes * 10 + max_cls + regular)
    enc, scores, anchors = _detect_arrays(rng, n, classes + background, box_len)
    opts = _detect_options(
        max_detections=max_det,
        max_classes_per_detection=max_cls,
        detections_per_class=dpc,
        use_regular_nms=regular,
        num_classes=classes,
    )
    data, feeds = _detect_model(enc, scores, anchors, opts, max_det, max_cls)
    ref = run_litert(data, feeds, reference=reference)
    count = _compare_detections(wick.load(data)(*feeds), ref, max_cls, classes, regular)
    assert count > 0


def test_detection_postprocess_uint8():
    """uint8 encodings, anchors and scores (a quantized SSD's tail), distinct score codes."""
    rng = np.random.default_rng(5)
    n, classes = 50, 4
    enc_f, _, anchors_f = _detect_arrays(rng, n, classes + 1)
    scores_q = rng.permutation(256)[: n * (classes + 1)].reshape(1, n, classes + 1)
    w = ModelWriter()
    sg = w.add_subgraph()
    enc_q = np.clip(np.round(enc_f / 0.05) + 128, 0, 255).astype(np.uint8)
    anc_q = np.clip(np.round(anchors_f / 0.01), 0, 255).astype(np.uint8)
    te = sg.add_tensor("boxes", [1, n, 4], np.uint8, quant=dict(scale=[0.05], zero_point=[128]))
    ts = sg.add_tensor(
        "scores", [1, n, classes + 1], np.uint8, quant=dict(scale=[1 / 256], zero_point=[0])
    )
    ta = sg.add_constant("anchors", anc_q, quant=dict(scale=[0.01], zero_point=[0]))
    outs = [
        sg.add_tensor(f"o{i}", s, np.float32)
        for i, s in enumerate([[1, 10, 4], [1, 10], [1, 10], [1]])
    ]
    opts = _detect_options(num_classes=classes, use_regular_nms=False, nms_score_threshold=0.2)
    sg.add_operator("CUSTOM", [te, ts, ta], outs, custom_code=DETECT, custom_options=opts)
    sg.set_inputs([te, ts])
    sg.set_outputs(outs)
    data = w.finish()
    feeds = [enc_q, scores_q.astype(np.uint8)]
    ref = run_litert(data, feeds, reference=True)
    assert _compare_detections(wick.load(data)(*feeds), ref, 1, classes, False) > 0


def test_detection_postprocess_default_keys():
    """detections_per_class (100) and use_regular_nms (false) may be left out."""
    rng = np.random.default_rng(9)
    enc, scores, anchors = _detect_arrays(rng, 40, 4)
    opts = _detect_options(num_classes=3, detections_per_class=None, use_regular_nms=None)
    data, feeds = _detect_model(enc, scores, anchors, opts)
    _compare_detections(wick.load(data)(*feeds), run_litert(data, feeds), 1, 3, False)


@pytest.mark.parametrize(
    "options,match",
    [
        (b"", r"not a well-formed FlexBuffers map"),
        (b"\x01\x02", r"not a well-formed FlexBuffers map"),
        (b"\xff" * 40, r"not a well-formed FlexBuffers map"),
        (struct.pack("<3i", 1, 2, 2), r"FlexBuffers"),
        ("vector", r"must be a FlexBuffers map"),
        (dict(max_detections=None), r'lack "max_detections"'),
        (dict(y_scale=None), r'lack "y_scale"'),
        (dict(num_classes="five"), r'"num_classes" is not a number'),
        (dict(max_detections=-1), r"max_detections -1 is negative"),
        (dict(max_classes_per_detection=0), r"max_classes_per_detection 0 must be positive"),
        (dict(use_regular_nms=True, detections_per_class=0), r"detections_per_class 0"),
        (dict(nms_iou_threshold=0.0), r"nms_iou_threshold 0 is outside"),
        (dict(nms_iou_threshold=1.5), r"nms_iou_threshold 1.5 is outside"),
        (dict(num_classes=2), r"class_predictions have 5 columns; num_classes 2"),
        (dict(max_detections=2**31 - 1, max_classes_per_detection=4), r"overflows"),
        (dict(max_detections=2**40), r"out of range"),
    ],
)
def test_detection_postprocess_malformed(options, match):
    from flatbuffers import flexbuffers

    rng = np.random.default_rng(3)
    enc, scores, anchors = _detect_arrays(rng, 20, 5)
    if isinstance(options, dict):
        options = _detect_options(**{"num_classes": 4, **options})
    elif options == "vector":
        options = bytes(flexbuffers.Dumps([1, 2, 3]))
    data, feeds = _detect_model(enc, scores, anchors, options)
    with pytest.raises(wick.WickError, match=MALFORMED) as e:
        wick.load(data)(*feeds)
    assert f"{DETECT} (operator 0)" in str(e.value)
    assert re.search(match, str(e.value)), str(e.value)


def test_detection_postprocess_mutated_options_never_crash():
    """Every single-byte change of a valid options map loads and runs, or fails cleanly."""
    rng = np.random.default_rng(4)
    enc, scores, anchors = _detect_arrays(rng, 20, 5)
    good = _detect_options(num_classes=4)
    outcomes = set()
    for i in range(len(good)):
        for v in (0x00, 0xFF, good[i] ^ 0x01, good[i] ^ 0x80):
            opts = bytearray(good)
            opts[i] = v
            data, feeds = _detect_model(enc, scores, anchors, bytes(opts))
            try:
                wick.load(data)(*feeds)
                outcomes.add("ok")
            except wick.WickError as e:
                outcomes.add(e.status)
    assert "ok" in outcomes and len(outcomes) > 1


def test_detection_postprocess_bad_anchor():
    """A negative anchor height decodes to ymin > ymax: LiteRT's invoke fails, so does wick's."""
    rng = np.random.default_rng(6)
    enc, scores, anchors = _detect_arrays(rng, 20, 5)
    anchors[7, 2] = -0.3
    data, feeds = _detect_model(
        enc, scores, anchors, _detect_options(num_classes=4), const_anchors=False
    )
    feeds = [enc, scores, anchors]
    with pytest.raises(wick.WickError, match="decoded box 7 has ymin > ymax"):
        wick.load(data)(*feeds)
    with pytest.raises(RuntimeError):
        run_litert(data, feeds, reference=True)


@pytest.mark.parametrize("regular", [False, True])
def test_detection_postprocess_fewer_than_max(regular):
    """A high score threshold and a tight IoU bar: NMS, not max_detections, sets the count."""
    rng = np.random.default_rng(11)
    enc, scores, anchors = _detect_arrays(rng, 80, 4)
    opts = _detect_options(
        num_classes=3,
        max_detections=50,
        use_regular_nms=regular,
        detections_per_class=50,
        nms_score_threshold=0.7,
        nms_iou_threshold=0.1,
    )
    data, feeds = _detect_model(enc, scores, anchors, opts, max_det=50)
    for reference in (True, False):
        ref = run_litert(data, feeds, reference=reference)
        count = _compare_detections(wick.load(data)(*feeds), ref, 1, 3, regular)
        assert 0 < count < 50


def test_detection_postprocess_no_boxes():
    enc = np.zeros((1, 0, 4), np.float32)
    scores = np.zeros((1, 0, 4), np.float32)
    anchors = np.zeros((0, 4), np.float32)
    data, feeds = _detect_model(enc, scores, anchors, _detect_options(num_classes=3))
    got = wick.load(data)(*feeds)
    assert got[3][0] == 0 and not got[0].any() and got[0].shape == (1, 10, 4)


def test_inspect_prints_the_ops_of_a_file_it_cannot_run(tmp_path):
    # The op list matters most when an operator stops the interpreter: inspect prints it all,
    # marks the unsupported kind and why, then reports the error (exit 1).
    exe = Path(os.environ.get("WICK_CLI", ROOT / "build" / "wick"))
    if not exe.exists():
        pytest.skip(f"the wick CLI {exe} is not built")
    x = np.ones((2, 2), np.float32)
    data, _ = _custom_model("MyMadeUpOp", {"x": ("in", x)}, [((2, 2), np.float32)], b"\x00")
    f = tmp_path / "unknown.tflite"
    f.write_bytes(data)
    p = subprocess.run([str(exe), "inspect", str(f)], capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert re.search(r"MyMadeUpOp\s+1\s+UNSUPPORTED \(v1\): custom operator", p.stdout), p.stdout
    assert "signatures" in p.stdout and 'custom operator "MyMadeUpOp"' in p.stderr
