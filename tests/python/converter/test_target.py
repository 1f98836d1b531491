"""wick.convert(..., target="nnapi:N") (python/wick/target.py, converter/passes/target.py):

* the report is the NNAPI delegate's own plan (plan_level=N): for a model with a level-29 and
  a level-30 operator it lists exactly what levels 27, 29 and 30 decline, with the delegate's
  reasons, and it equals what the delegate takes from the test NNAPI runtime of that level;
* planning never opens a library ($WICK_NNAPI_LIBRARY pointing nowhere: the plan still works);
* the lowerings for level 27 (HARD_SWISH, DIV by a constant, PAD/PADV2) leave no such
  operator and keep the outputs (PyTorch within the converter's bar); the NCHW input's
  TRANSPOSE is lowered only above the 2^20 elements the delegate's exact level-27 TRANSPOSE
  (EMBEDDING_LOOKUP) takes — at the boundary the plan of the plain file agrees, and both
  forms run on LiteRT, on wick's CPU and on the level-27 test runtime with PyTorch's results;
* torchvision's MobileNetV2 and MobileNetV3-Small with target="nnapi:27" run as one partition
  on the level-27 test runtime, outputs equal to the CPU's within 1e-5 relative and to PyTorch
  within the whole-model bar (1e-4);
* PyTorch's TransformerEncoderLayer: with target="nnapi:27" only the attention core stays on
  the CPU; converted plainly it runs whole on NNAPI from level 29 (the level-29 and level-6
  test runtimes: outputs equal to the CPU's and LiteRT's);
* bad target strings raise ValueError naming the accepted forms (the CLI: a usage error).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import wick
from wick.target import TargetWarning, parse_target, plan

from ..runtime.test_nnapi import LIB  # the test NNAPI implementation, or None

needs_test_nnapi = pytest.mark.skipif(
    LIB is None,
    reason="no libwick_test_nnapi.so next to libwick.so (build the C tests: cmake --build build)",
)


class Levels(torch.nn.Module):
    """CONV_2D (27), ABS (29), RESIZE_BILINEAR with half-pixel centers (30)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        y = torch.abs(self.conv(x))
        return torch.nn.functional.interpolate(y, scale_factor=2, mode="bilinear")


def _convert(module, x, **kw):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TargetWarning)
        return wick.convert(module.eval(), (x,), progress=False, **kw)


def _delegated(data: bytes, level: int, monkeypatch):
    """What the NNAPI delegate really takes from the level-`level` test runtime."""
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    return rt, [r.delegate is not None for r in rt.delegation]


def test_parse_target():
    assert parse_target("nnapi") == ("nnapi", 27)
    assert parse_target("nnapi:29") == ("nnapi", 29)
    assert parse_target("NNAPI:1000008") == ("nnapi", 1000008)
    for bad in ("gpu", "nnapi:12", "nnapi:", "nnapi:x", "nnapi:26", "", "vulkan:1"):
        with pytest.raises(ValueError, match=r'"nnapi:N"'):
            parse_target(bad)


def test_bad_target_raises_before_converting():
    with pytest.raises(ValueError, match=r"unknown target 'nnapi:7'.*27 \(Android 8\.1\)"):
        wick.convert(Levels(), (torch.randn(1, 3, 8, 8),), target="nnapi:7")


@pytest.mark.parametrize(
    "level, declined",
    [
        (
            27,
            {
                ("ABS", "ABS needs NNAPI feature level 29 (the plan is for 27 (Android 8.1))"),
                (
                    "RESIZE_BILINEAR",
                    "align_corners or half_pixel_centers needs NNAPI feature level 30 "
                    "(the plan is for 27 (Android 8.1))",
                ),
            },
        ),
        (
            29,
            {
                (
                    "RESIZE_BILINEAR",
                    "align_corners or half_pixel_centers needs NNAPI feature level 30 "
                    "(the plan is for 29 (Android 10))",
                )
            },
        ),
        (30, set()),
    ],
)
def test_report_lists_what_the_level_declines(level, declined, monkeypatch):
    model = _convert(
        Levels(), torch.randn(1, 3, 8, 8), channels_last_io=True, target=f"nnapi:{level}"
    )
    r = model.target_report
    assert r.level == level and r.target == f"nnapi:{level}"
    assert {(d.op, d.reason) for d in r.declined} == declined
    assert r.total == sum(model.op_counts.values())
    assert r.taken == r.total - len(declined)
    assert r.runs_whole == (not declined)
    text = str(r)
    assert f"would run {r.taken} of {r.total} operators" in text
    for op, reason in declined:
        assert f"1 x {op}" in text and reason in text
    if LIB is not None:  # the plan is what the delegate takes from a level-N runtime
        rt, on = _delegated(model.tflite_bytes, level, monkeypatch)
        planned = [any(i in p for p in r.partitions) for i in range(r.total)]
        assert on == planned
        assert {
            (x.op, x.reason.replace("the runtime offers", "the plan is for")[len("nnapi: ") :])
            for x in rt.delegation
            if x.delegate is None
        } == declined


def test_warning_and_printed_report(capsys):
    torch.manual_seed(0)
    with pytest.warns(TargetWarning, match="would not run 2 of"):
        model = wick.convert(
            Levels().eval(), (torch.randn(1, 3, 8, 8),), channels_last_io=True, target="nnapi"
        )
    err = capsys.readouterr().err
    assert "nnapi: NNAPI feature level 27 (Android 8.1) would run" in err
    assert "ABS needs NNAPI feature level 29" in err
    assert model.target_report.level == 27


def test_planning_opens_no_library(monkeypatch):
    monkeypatch.setenv("WICK_NNAPI_LIBRARY", "/nonexistent/libneuralnetworks.so")
    model = _convert(Levels(), torch.randn(1, 3, 8, 8), channels_last_io=True, target="nnapi:30")
    assert model.target_report.runs_whole
    r = plan(model.tflite_bytes, 29)
    assert r.taken == r.total - 1 and r.declined[0].op == "RESIZE_BILINEAR"
    # the same delegate without planning finds no library
    rt = wick.load(model.tflite_bytes, delegate="nnapi")
    assert all("NNAPI is not available" in x.reason for x in rt.delegation)


class Lowered(torch.nn.Module):
    """Every level-27 lowering of a small image: PAD (stride-2 conv), PADV2 (max pool padding),
    hardswish, hardsigmoid (its / 6); its NCHW input's TRANSPOSE stays (the delegate's)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        y = torch.nn.functional.hardswish(self.conv(x))
        y = self.pool(y)
        y = y * torch.nn.functional.hardsigmoid(y)
        return self.fc(y.mean((2, 3)))


def test_lowerings_for_level_27(monkeypatch):
    torch.manual_seed(0)
    module = Lowered().eval()
    x = torch.randn(1, 3, 16, 16) * 4
    plain = _convert(module, x)
    assert {"PAD", "HARD_SWISH", "TRANSPOSE"} <= set(plain.op_counts), plain.op_counts
    model = _convert(module, x, target="nnapi:27")
    for op in ("PAD", "PADV2", "HARD_SWISH", "DIV"):
        assert op not in model.op_counts, model.op_counts
    # 3 x 16 x 16 elements: the delegate's level-27 TRANSPOSE takes it as it is
    assert model.op_counts.get("TRANSPOSE") == 1, model.op_counts
    assert "TRANSPOSE" not in model.target_report.lowerings
    assert model.target_report.runs_whole, str(model.target_report)
    assert model.target_report.lowerings.get("HARD_SWISH") == 1
    with torch.no_grad():
        ref = module(x).numpy()
    got = model.run(x.numpy())[0]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5 * max(1.0, np.abs(ref).max()))
    # at 30 HARD_SWISH stays (NNAPI has it), and so does the PAD (28)
    model30 = _convert(module, x, target="nnapi:30")
    assert "HARD_SWISH" in model30.op_counts and "PAD" in model30.op_counts


@needs_test_nnapi
@pytest.mark.parametrize("name", ["mobilenet_v2", "mobilenet_v3_small"])
def test_torchvision_mobilenet_runs_whole_at_27(name, monkeypatch):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    module = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    model = _convert(module, x, target="nnapi:27")
    report = model.target_report
    assert report.runs_whole and report.taken == report.total, str(report)
    # the 3 x 224 x 224 input's TRANSPOSE is the delegate's (an EMBEDDING_LOOKUP at 27)
    assert report.lowerings.get("PAD") == 5 and "TRANSPOSE" not in report.lowerings
    assert model.op_counts.get("TRANSPOSE") == 1, model.op_counts
    rt, on = _delegated(model.tflite_bytes, 27, monkeypatch)
    assert all(on) and {r.partition for r in rt.delegation} == {0}
    got = rt(x.numpy())[0]
    cpu = wick.load(model.tflite_bytes)(x.numpy())[0]
    np.testing.assert_allclose(got, cpu, rtol=0, atol=1e-5 * max(1.0, np.abs(cpu).max()))
    with torch.no_grad():
        ref = module(x).numpy()
    np.testing.assert_allclose(cpu, ref, rtol=0, atol=1e-4 * max(1.0, np.abs(ref).max()))


class ImageHead(torch.nn.Module):
    """An NCHW image in, no image out (so the input's TRANSPOSE is the only one)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, stride=2)

    def forward(self, x):
        return torch.relu(self.conv(x)).mean((2, 3))


@pytest.mark.parametrize(
    "shape, lowered",
    [((1, 4, 512, 512), False), ((1, 4, 512, 513), True)],
    ids=["2^20 elements", "above 2^20"],
)
def test_nchw_input_transpose_at_27(shape, lowered, monkeypatch):
    """The NCHW input's TRANSPOSE (perm 0,2,3,1 moves the last axis: one EMBEDDING_LOOKUP row
    per element) is lowered to the identity CONV_2D exactly when the delegate's level-27
    TRANSPOSE would not take it: above NN_LOOKUP_MAX_ROWS (2^20) elements.  The plain file's
    plan says the same, with the delegate's reason.  Either way target="nnapi:27" runs whole at
    27, and the file gives PyTorch's results on wick's CPU, on LiteRT and on the level-27 test
    runtime (for these finite inputs: the two forms differ only for NaN, infinities and -0)."""
    torch.manual_seed(0)
    module = ImageHead().eval()
    x = torch.randn(*shape)
    plain = _convert(module, x)
    assert plain.op_counts.get("TRANSPOSE") == 1, plain.op_counts
    declined = {d.op: d.reason for d in plan(plain.tflite_bytes, 27).declined}
    if lowered:
        assert declined == {
            "TRANSPOSE": "TRANSPOSE (of this many rows, below 28) needs NNAPI feature level 28 "
            "(the plan is for 27 (Android 8.1))"
        }, declined
    else:
        assert declined == {}, declined
    model = _convert(module, x, target="nnapi:27")
    report = model.target_report
    assert report.runs_whole, str(report)
    assert report.lowerings == ({"TRANSPOSE": 1} if lowered else {}), report.lowerings
    assert ("TRANSPOSE" in model.op_counts) == (not lowered), model.op_counts
    assert ("CONV_2D" in model.op_counts) and model.op_counts["CONV_2D"] == 1 + lowered
    _check_numerics(module, x, plain, model)
    if LIB is not None:
        rt, on = _delegated(model.tflite_bytes, 27, monkeypatch)
        assert all(on) and {r.partition for r in rt.delegation} == {0}, rt.delegation
        got = rt(x.numpy())[0]
        cpu = model.run(x.numpy())[0]
        np.testing.assert_allclose(got, cpu, rtol=0, atol=1e-5 * max(1.0, np.abs(cpu).max()))


def test_cli_bad_target(capsys):
    from wick.cli import main

    with pytest.raises(SystemExit) as e:
        main(["convert", "torch.nn:Identity", "--input", "1x3", "--target", "gpu"])
    assert e.value.code == 2
    assert "unknown target 'gpu'" in capsys.readouterr().err


class MatmulByConstant(torch.nn.Module):
    """bmm of x by a constant expanded over the batch (as a Hugging Face attention output
    projection converts): a BATCH_MATMUL with a constant right side."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 6))

    def forward(self, x):
        return torch.relu(torch.bmm(x, self.w.expand(x.shape[0], 8, 6)))


def _check_numerics(module, x, plain, lowered, *, bar=1e-5):
    """The lowered file against PyTorch, against the unlowered file on wick's CPU, and against
    LiteRT running the lowered file."""
    from tests.python.oracles import litert as litert_oracle

    with torch.no_grad():
        ref = module(x).numpy()
    got = lowered.run(x.numpy())[0]
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(got, ref, rtol=0, atol=bar * scale)
    np.testing.assert_allclose(got, plain.run(x.numpy())[0], rtol=0, atol=bar * scale)
    lite = litert_oracle.run_litert(lowered.tflite_bytes, [x.numpy()])[0]
    np.testing.assert_allclose(got, lite, rtol=0, atol=bar * scale)


def test_batch_matmul_by_a_constant_is_fully_connected():
    torch.manual_seed(0)
    module = MatmulByConstant().eval()
    x = torch.randn(3, 5, 8)
    plain = _convert(module, x)
    assert "BATCH_MATMUL" in plain.op_counts, plain.op_counts
    model = _convert(module, x, target="nnapi:27")
    assert "BATCH_MATMUL" not in model.op_counts, model.op_counts
    assert model.target_report.lowerings.get("BATCH_MATMUL") == 1
    assert model.target_report.runs_whole, str(model.target_report)
    _check_numerics(module, x, plain, model)


@needs_test_nnapi
def test_transformer_block_at_27(monkeypatch):
    """PyTorch's TransformerEncoderLayer(64, 4): the packed q/k/v projection's three SLICEs
    become FULLY_CONNECTEDs of the picked weight rows, each layer norm's RSQRT an
    L2_NORMALIZATION; the attention core's TRANSPOSEs are EMBEDDING_LOOKUPs at 27 and its two
    BATCH_MATMULs of run-time operands DEPTHWISE_CONV_2Ds between them, so what stays on the
    CPU is PyTorch's guard for rows of -inf logits (level 29), each with the delegate's reason.
    Outputs: PyTorch, the unlowered file, LiteRT, and the level-27 test runtime agree."""
    torch.manual_seed(0)
    module = torch.nn.TransformerEncoderLayer(64, 4, batch_first=True).eval()
    x = torch.randn(1, 16, 64)
    plain = _convert(module, x)
    before = plan(plain.tflite_bytes, 27)
    model = _convert(module, x, target="nnapi:27")
    r = model.target_report
    assert r.lowerings == {"SLICE": 3, "RSQRT": 2}, r.lowerings
    for op in ("SLICE", "RSQRT"):
        assert op not in model.op_counts, model.op_counts
    assert len(r.declined) < len(before.declined) and len(r.partitions) < len(before.partitions)
    assert sorted(d.op for d in r.declined) == sorted(
        ["EQUAL", "LOGICAL_NOT", "LOGICAL_NOT", "REDUCE_ANY", "SELECT_V2"]
    ), str(r)
    assert len(r.partitions) == 2, str(r)
    # not silent: the composed forms are in the report with the delegate's note
    noted = {n.op for n in r.notes}
    assert {"BATCH_MATMUL", "MEAN", "L2_NORMALIZATION"} <= noted, str(r)
    assert "taken as another form" in str(r), str(r)
    assert all(d.reason for d in r.declined)
    _check_numerics(module, x, plain, model)
    rt, on = _delegated(model.tflite_bytes, 27, monkeypatch)
    assert on == [any(i in p for p in r.partitions) for i in range(r.total)]
    got = rt(x.numpy())[0]
    cpu = wick.load(model.tflite_bytes)(x.numpy())[0]
    np.testing.assert_allclose(got, cpu, rtol=0, atol=1e-5 * max(1.0, np.abs(cpu).max()))


@needs_test_nnapi
def test_transformer_block_runs_whole_from_29(monkeypatch):
    """The same block converted plainly: from level 29 NNAPI takes all of it in one partition —
    the attention's BATCH_MATMULs (DEPTHWISE_CONV_2D with the second operand as the filter below
    feature level 6, NNAPI's BATCH_MATMUL from it), its TRANSPOSEs and PyTorch's guard for rows
    of -inf logits (EQUAL, LOGICAL_NOT, REDUCE_ANY, SELECT_V2); at 28 (with target="nnapi:28"
    for the SLICEs and RSQRTs) only the guard's five operators stay on the CPU.  Delegated outputs equal the CPU's within 1e-5 and LiteRT's
    within the converter's bar."""
    from tests.python.oracles import litert as litert_oracle

    torch.manual_seed(0)
    module = torch.nn.TransformerEncoderLayer(64, 4, batch_first=True).eval()
    x = torch.randn(1, 16, 64)
    plain = _convert(module, x)
    for level in (29, 30, 31, 1000006):
        assert plan(plain.tflite_bytes, level).runs_whole, (
            level,
            str(plan(plain.tflite_bytes, 29)),
        )
    at28 = _convert(module, x, target="nnapi:28").target_report
    assert sorted(d.op for d in at28.declined) == sorted(
        ["EQUAL", "LOGICAL_NOT", "LOGICAL_NOT", "REDUCE_ANY", "SELECT_V2"]
    ), str(at28)
    cpu = wick.load(plain.tflite_bytes)(x.numpy())[0]
    lite = litert_oracle.run_litert(plain.tflite_bytes, [x.numpy()])[0]
    bar = max(1.0, float(np.abs(cpu).max()))
    for level in (28, 29, 1000008):
        rt, on = _delegated(plain.tflite_bytes, level, monkeypatch)
        assert all(on) == (level >= 29), (level, rt.delegation)
        assert all("failed" not in r.reason for r in rt.delegation), rt.delegation
        got = rt(x.numpy())[0]
        np.testing.assert_allclose(got, cpu, rtol=0, atol=1e-5 * bar)
        np.testing.assert_allclose(got, lite, rtol=0, atol=1e-5 * bar)


def test_layer_norm_lowering_keeps_eps_and_affine():
    """A LayerNorm over 48 values (not a power of two: sqrt(n) rounds) with small-variance
    rows, where eps matters, and its gamma/beta folded into the FULLY_CONNECTED."""
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.LayerNorm(48, eps=1e-3)).eval()
    with torch.no_grad():
        module[0].weight.uniform_(0.5, 2.0)
        module[0].bias.uniform_(-1.0, 1.0)
    x = torch.randn(2, 5, 48)
    x[0] *= 1e-2  # variance ~1e-4 < eps
    plain = _convert(module, x)
    model = _convert(module, x, target="nnapi:27")
    assert model.target_report.lowerings == {"RSQRT": 1}, model.target_report.lowerings
    assert model.target_report.runs_whole, str(model.target_report)
    assert "L2_NORMALIZATION" in model.op_counts and "RSQRT" not in model.op_counts
    _check_numerics(module, x, plain, model)
    # at 29 RSQRT is NNAPI's own: no lowering
    assert _convert(module, x, target="nnapi:29").target_report.lowerings == {}


def test_corpus_nnapi_plan_script(tmp_path, monkeypatch):
    """tests/corpus/nnapi_plan.py on a corpus of two written files: one row per file and
    level, the reasons without their level tail, the section replaced between its markers."""
    from tests.corpus import nnapi_plan

    (tmp_path / "keras").mkdir()
    (tmp_path / "keras" / "levels.tflite").write_bytes(
        _convert(Levels(), torch.randn(1, 3, 8, 8), channels_last_io=True).tflite_bytes
    )
    (tmp_path / "minilm").mkdir()
    (tmp_path / "minilm" / "broken.tflite").write_bytes(b"not a model")
    monkeypatch.setenv("WICK_CORPUS_DIR", str(tmp_path))
    rows, reasons = nnapi_plan.plan_corpus(tmp_path)
    assert [r[0] for r in rows] == ["keras/levels.tflite", "minilm/broken.tflite"]
    name, total, per_level = rows[0]
    assert per_level == {27: (total - 2, 1), 29: (total - 1, 1), 31: (total, 1)}
    assert rows[1][2].startswith("not planned: ")
    assert reasons[27]["ABS needs NNAPI feature level 29"] == 1
    assert reasons[31] == {}
    doc = tmp_path / "nnapi.md"
    doc.write_text(f"# x\n\n{nnapi_plan.BEGIN}\nold\n{nnapi_plan.END}\n\ntail\n")
    monkeypatch.setattr(nnapi_plan, "DOC", doc)
    assert nnapi_plan.main(["--write"]) == 0
    text = doc.read_text()
    assert "old" not in text and text.endswith(f"{nnapi_plan.END}\n\ntail\n")
    assert (
        f"| keras/levels.tflite | {total} | {total - 2} (1) | {total - 1} (1) | {total} (1) |"
        in (text)
    )
