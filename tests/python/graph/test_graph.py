"""wick.graph without a browser: the .tflite reader, the page's content (every operator, edges
with shapes, highlights, subgraphs, profile), bad input (same error as `wick inspect`, exit 1,
no page written), the generic node/edge API, and PyTorch-side sources.

Browser checks (rendering, search, console errors, screenshots) are in test_graph_browser.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wick
from tests.python.graph import models
from wick import graph as wg
from wick.graph.stats import array_stats
from wick.graph.tflite_reader import TFLiteReadError, read_tflite

SHARED = Path(__file__).resolve().parents[4] / "shared" / "models"
WICK = [sys.executable, "-m", "wick.cli"]


def shared(name: str) -> Path:
    p = SHARED / name
    if not p.exists():
        pytest.skip(f"{p} absent (shared real-model folder not available)")
    return p


def payload(page: Path) -> dict:
    m = re.search(
        r'<script type="application/json" id="wick-data">(.*?)</script>', page.read_text(), re.S
    )
    assert m, "no data block in the page"
    return json.loads(m.group(1))


def run(*args):
    return subprocess.run([*WICK, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tiny_cnn():
    from tests.python.oracles import keras_models

    return Path(keras_models.get_model_path("tiny_cnn"))


# ------------------------------------------------------------------------------- the reader


def test_reader_composite_decomposition_and_attributes():
    f = read_tflite(shared("l2_norm_composite.tflite").read_bytes())
    assert len(f.subgraphs) == 2
    (op,) = f.subgraphs[0].operators
    assert op.op == "STABLEHLO_COMPOSITE"
    assert op.options["name"] == "odml.l2_norm"
    assert op.options["composite_attributes"]["axis"] == -1  # flexbuffer decoded
    assert op.calls == {"decomposition": 1}
    assert [o.op for o in f.subgraphs[1].operators] == ["MUL", "SUM", "ADD", "RSQRT", "MUL"]
    assert f.callers() == {1: [(0, 0, "decomposition")]}


def test_reader_quantization_and_weight_stats():
    f = read_tflite(shared("person_detect.tflite").read_bytes())
    sg = f.subgraphs[0]
    conv = sg.operators[0]
    w = sg.tensors[conv.inputs[1]]
    assert w.dtype == "INT8" and w.constant and w.is_quantized
    assert len(w.quant["scale"]) == w.shape[3] and w.quant["quantized_dimension"] == 3
    s = w.stats
    assert s["dequantized"] and s["count"] == int(np.prod(w.shape))
    assert -127 <= s["qmin"] <= s["qmax"] <= 127
    assert s["min"] <= s["mean"] <= s["max"] and s["std"] >= 0 and sum(s["hist"]) == s["count"]
    x = sg.tensors[conv.inputs[0]]
    assert not x.constant and x.quant["zero_point"] == [-1]


def test_reader_float_weight_stats_match_numpy(tiny_cnn):
    data = tiny_cnn.read_bytes()
    f = read_tflite(data)
    consts = [t for t in f.subgraphs[0].tensors if t.constant and t.dtype == "FLOAT32"]
    assert consts
    for t in consts:
        x = np.frombuffer(data, "<f4", t.nbytes // 4, t.offset).astype(np.float64)
        assert x.size == int(np.prod(t.shape)) == t.stats["count"]
        assert t.stats["min"] == x.min() and t.stats["max"] == x.max()
        np.testing.assert_allclose(
            [t.stats["mean"], t.stats["std"]], [x.mean(), x.std()], rtol=1e-6, atol=1e-9
        )
        assert t.stats["zeros"] == np.count_nonzero(x == 0) / x.size
        assert sum(t.stats.get("hist", [x.size])) == x.size


@pytest.mark.parametrize(
    "values",
    [
        np.array([1.0, 1.0 + 2**-52]),  # TF's NASNetMobile has weights this close: numpy's
        np.array([1e30, 1e30 * (1 + 1e-7)], np.float32),  # histogram raised "Too many bins
        np.array([0.0, 5e-324]),  # for data range", reported as a malformed file
        np.array([-3.4e38, 3.4e38], np.float32),
        np.array([-1.7e308, 1.7e308]),
    ],
)
def test_weight_stats_never_fail_on_extreme_ranges(values):
    s = array_stats(values)
    assert s["hist"][0] == 1 and s["hist"][-1] == 1 and sum(s["hist"]) == values.size


def test_reader_signatures_and_control_flow():
    f = read_tflite(models.while_model())
    assert [s.key for s in f.signatures] == ["serving_default"]
    assert f.signatures[0].inputs == {"i": 0, "x": 1}
    (w, _) = f.subgraphs[0].operators
    assert w.op == "WHILE" and w.calls == {"cond": 1, "body": 2}


def test_reader_refuses_garbage_with_its_own_error():
    with pytest.raises(TFLiteReadError):
        read_tflite(b"\x08\x00\x00\x00TFL3")
    with pytest.raises(TFLiteReadError):
        read_tflite(b"\x00" * 16)


# ---------------------------------------------------------------------------------- the page


def test_page_has_every_operator_edges_with_shapes_and_no_network(tiny_cnn, tmp_path):
    out = tmp_path / "m.html"
    p = run("graph", tiny_cnn, "-o", out)
    assert p.returncode == 0, p.stderr
    assert "wrote" in p.stdout
    f = read_tflite(tiny_cnn.read_bytes(), stats=False)
    d = payload(out)
    g = d["graphs"]["sg0"]
    ops = [n for n in g["nodes"] if n["kind"] == "op"]
    assert len(ops) == len(f.subgraphs[0].operators)
    assert [n["op"] for n in ops] == [o.op for o in f.subgraphs[0].operators]
    assert all(isinstance(n["x"], float | int) and n["w"] > 0 for n in g["nodes"])
    labels = {e["label"] for e in g["edges"]}
    assert "1×32×32×3 f32" in labels  # the image input, shape and dtype on the edge
    assert all(len(e["p"]) >= 4 for e in g["edges"])  # every edge was routed by dot
    text = out.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text and "<link" not in text and "src=" not in text


def test_page_composite_is_an_expandable_node(tmp_path):
    out = wg.visualize(shared("l2_norm_composite.tflite"), tmp_path / "c.html")
    d = payload(out)
    assert d["views"] == ["sg0", "sg1"]
    (op,) = [n for n in d["graphs"]["sg0"]["nodes"] if n["kind"] == "op"]
    assert op["subs"] == {"decomposition": "sg1"} and op["label"] == "odml.l2_norm"
    assert op["cat"] == "control"
    assert len([n for n in d["graphs"]["sg1"]["nodes"] if n["kind"] == "op"]) == 5


def test_page_highlights_transposes_qdq_and_float_islands(tmp_path):
    out = wg.visualize(models.float_island_model(), tmp_path / "q.html")
    d = payload(out)
    assert d["counts"] == {"transpose": 1, "qdq": 4, "float-island": 1}
    tags = {n["op"]: n.get("tags", []) for n in d["graphs"]["sg0"]["nodes"] if n["kind"] == "op"}
    assert tags["LOGISTIC"] == ["float-island"]
    assert tags["TRANSPOSE"] == ["transpose"]  # float, but after the last int8 op: no island


def test_page_profile_from_wick_bench_trace(tiny_cnn, tmp_path):
    trace = tmp_path / "t.json"
    p = run("bench", tiny_cnn, "--runs", 2, "--warmup", 0, "--trace", trace)
    if p.returncode != 0:
        pytest.skip(f"wick bench unavailable: {p.stderr}")
    out = tmp_path / "p.html"
    p = run("graph", tiny_cnn, "--profile", trace, "-o", out)
    assert p.returncode == 0, p.stderr
    d = payload(out)
    assert d["profile"] is True
    ops = [n for n in d["graphs"]["sg0"]["nodes"] if n["kind"] == "op"]
    assert all("prof" in n for n in ops)
    assert abs(sum(n["prof"]["share"] for n in ops) - 1.0) < 1e-6
    assert sorted(n["prof"]["rank"] for n in ops) == list(range(1, len(ops) + 1))


def test_profile_of_another_model_is_refused(tiny_cnn, tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text(
        json.dumps({"traceEvents": [{"name": "WHILE", "ph": "X", "dur": 5, "args": {"index": 0}}]})
    )
    out = tmp_path / "p.html"
    p = run("graph", tiny_cnn, "--profile", trace, "-o", out)
    assert p.returncode == 1 and "does not match" in p.stderr
    assert not out.exists()


# ------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "blob",
    [b"\x08\x00\x00\x00TFL3", b"not a model at all", b"\x10\x00\x00\x00TFL3" + b"\xff" * 40],
)
def test_malformed_file_same_error_as_inspect_exit_1_and_no_page(blob, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(blob)
    out = tmp_path / "bad.html"
    g = run("graph", bad, "-o", out)
    i = run("inspect", bad)
    assert g.returncode == 1 and i.returncode == 1
    assert g.stderr.strip() == i.stderr.strip()  # the C verifier's message, same form
    assert "malformed model" in g.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]  # no temporary file left either


def test_malformed_bytes_raise_wick_error(tmp_path):
    with pytest.raises(wick.WickError, match="malformed model"):
        wg.visualize(b"\x08\x00\x00\x00TFL3", tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


def test_existing_page_is_left_alone_when_generation_fails(tmp_path, monkeypatch):
    out = tmp_path / "m.html"
    out.write_text("old page")

    def boom(doc, jobs=None):
        raise wg.LayoutError("dot failed on purpose")

    monkeypatch.setattr("wick.graph.layout.layout_document", boom)
    with pytest.raises(wg.LayoutError):
        wg.visualize(models.while_model(), out)
    assert out.read_text() == "old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.html"]


def test_missing_dot_says_how_to_install(tmp_path):
    env = dict(os.environ, WICK_DOT=str(tmp_path / "no-dot-here"))
    model = tmp_path / "w.tflite"
    model.write_bytes(models.while_model())
    p = subprocess.run(
        [*WICK, "graph", str(model), "-o", str(tmp_path / "w.html")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 1
    assert "apt-get install graphviz" in p.stderr
    assert not (tmp_path / "w.html").exists()


@pytest.mark.parametrize("misbehaviour", ["sleep 30", "kill -SEGV $$"])
def test_dot_that_hangs_or_crashes_falls_back_to_the_built_in_layout(misbehaviour, tmp_path):
    # Graphviz 2.43 spends hours on some valid 600-node graphs and crashes with some options:
    # the page is still written, with the built-in layout and a line on stderr saying so.
    fake = tmp_path / "dot"
    fake.write_text(f"#!/bin/sh\n{misbehaviour}\n")
    fake.chmod(0o755)
    env = dict(os.environ, WICK_DOT=str(fake), WICK_DOT_TIMEOUT="1")
    model = tmp_path / "w.tflite"
    model.write_bytes(models.while_model())
    out = tmp_path / "w.html"
    p = subprocess.run(
        [*WICK, "graph", str(model), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "drawn with the built-in layered layout instead" in p.stderr
    assert out.exists() and "wrote" in p.stdout


def test_usage_errors_exit_two(tmp_path):
    assert run("graph").returncode == 2
    assert run("graph", "m.tflite", "--bogus").returncode == 2
    assert run("graph", "--help").returncode == 0


# ------------------------------------------------------------------- generic API and torch


def test_generic_node_edge_api(tmp_path):
    g = wg.build_graph(
        "g",
        "after fusion",
        [
            {"id": "in", "op": "input", "kind": "input", "label": "x"},
            {"id": "a", "op": "CONV_2D", "attrs": {"stride": 2}},
            {"id": "b", "op": "RELU"},
        ],
        [("in", "a", "1×8×8×3 f32"), ("a", "b", "1×4×4×16 f32")],
    )
    out = wg.visualize(g, tmp_path / "g.html")
    d = payload(out)
    nodes = d["graphs"]["g"]["nodes"]
    assert [n["op"] for n in nodes] == ["input", "CONV_2D", "RELU"]
    assert nodes[1]["attrs"] == {"stride": 2}
    assert [e["label"] for e in d["graphs"]["g"]["edges"]] == ["1×8×8×3 f32", "1×4×4×16 f32"]
    bad = wg.Document("t", [wg.build_graph("g", "t", [{"id": "a", "op": "X"}], [("a", "zz")])])
    with pytest.raises(ValueError, match="names no node"):
        bad.validate()


def _small_module():
    import torch

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            y = torch.relu(self.conv(x)).mean((2, 3))
            return torch.softmax(self.fc(y), -1), y.max(dim=1)

    return M().eval(), (torch.randn(1, 3, 16, 16),)


def test_exported_program_is_drawn_as_aten_ops(tmp_path):
    import torch

    m, args = _small_module()
    ep = torch.export.export(m, args)
    out = wick.visualize(ep, tmp_path / "ep.html")
    d = payload(out)
    g = d["graphs"]["aten"]
    calls = [
        n for n in ep.graph.nodes if n.op == "call_function" and "getitem" not in str(n.target)
    ]
    ops = [n for n in g["nodes"] if n["kind"] == "op"]
    assert len(ops) == len(calls)
    conv = next(n for n in ops if n["op"].startswith("aten.conv"))
    assert conv["attrs"]["module"] == "conv" and "test_graph.py" in conv["src"]
    w = next(t for t in conv["ins"] if t.get("const"))
    assert w["shape"] == "8×3×3×3" and w["stats"]["count"] == 216
    assert {n["label"] for n in g["nodes"] if n["kind"] == "output"} >= {"softmax"}
    assert any(e["label"] == "1×8×16×16 f32" for e in g["edges"])
    # a saved .pt2 through the command line (a model whose outputs torch.export can save)
    seq = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()
    torch.export.save(torch.export.export(seq, args), tmp_path / "m.pt2")
    p = run("graph", tmp_path / "m.pt2", "-o", tmp_path / "pt2.html")
    assert p.returncode == 0, p.stderr
    g2 = payload(tmp_path / "pt2.html")["graphs"]["aten"]
    assert [n["label"] for n in g2["nodes"] if n["kind"] == "op"] == ["conv2d", "relu"]


def test_converted_model_and_stage_recorder(tmp_path):
    import torch

    m, args = _small_module()
    model = wick.convert(m, args)
    out = wick.visualize(model, tmp_path / "m.html")
    assert len([n for n in payload(out)["graphs"]["sg0"]["nodes"] if n["kind"] == "op"]) == sum(
        model.op_counts.values()
    )
    rec = wg.StageRecorder(tmp_path / "debug")
    rec.add("exported", torch.export.export(m, args))
    rec.add("final", model.tflite_bytes)
    page = rec.write()
    d = payload(page)
    assert d["kind"] == "stages" and len(d["views"]) == 2
    assert [d["graphs"][v]["title"] for v in d["views"]] == ["00 exported", "01 final"]
    assert (tmp_path / "debug" / "stages.txt").read_text().count("ops") == 2
    assert wg.StageRecorder(None).write() is None  # disabled: no-op


def test_page_without_graphviz_uses_the_built_in_layout(tiny_cnn, tmp_path):
    # A fresh machine has no Graphviz: `wick graph` must still draw every graph.
    out = tmp_path / "m.html"
    env = {k: v for k, v in os.environ.items() if k != "WICK_DOT"}
    env["PATH"] = str(tmp_path)  # (no dot here; the interpreter is called by its full path)
    p = subprocess.run(
        [*WICK, "graph", str(tiny_cnn), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert "built-in layout" in p.stdout and out.stat().st_size > 0


def test_built_in_layout_places_every_node_in_rank_order():
    from wick.graph.layered import layout_graph
    from wick.graph.layout import node_size

    data = models.while_model()
    doc, _ = wg.load_tflite(data, "while")
    for g in doc.graphs:
        lay = layout_graph(g, {n.id: node_size(n) for n in g.nodes})
        assert set(lay["nodes"]) == {n.id for n in g.nodes}
        assert len(lay["edges"]) == len(g.edges)
        boxes = list(lay["nodes"].values())
        for i, (x, y, w, h) in enumerate(boxes):  # no two boxes overlap
            assert 0 <= x - w / 2 and x + w / 2 <= lay["w"] and 0 <= y - h / 2 <= lay["h"]
            for x2, y2, w2, h2 in boxes[i + 1 :]:
                assert abs(x - x2) >= (w + w2) / 2 or abs(y - y2) >= (h + h2) / 2
        for e in g.edges:  # edges run downward (the graphs are acyclic)
            assert lay["nodes"][e.src][1] < lay["nodes"][e.dst][1]
