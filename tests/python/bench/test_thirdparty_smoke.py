"""The third-party set of the peer benchmark (bench/peers/thirdparty.py, `make bench`) does not
rot: one small .tflite file (written here: a convolution, a PRELU, a mean; or, when it is in the
corpus cache, mediapipe's face_detection_short_range), one thread, two timed rounds, wick and
LiteRT, into a temporary cache; no doc is written. Speed is never asserted: the checks are that
both runtimes produced timings, cold starts, peak RSS and matching outputs, that the per-op
profile is taken (``--profile-above 0``: for every file) with each operator's kernel, and that
the report has the third-party tables."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert")


def small_file(path):
    from wick.tflite.writer import ModelWriter

    rng = np.random.default_rng(5)
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, 16, 16, 8], np.float32)
    f = sg.add_constant("f", rng.standard_normal((16, 3, 3, 8)).astype(np.float32) * 0.2)
    b = sg.add_constant("b", np.zeros(16, np.float32))
    c = sg.add_tensor("c", [1, 16, 16, 16], np.float32)
    sg.add_operator("CONV_2D", [x, f, b], [c], dict(padding="SAME", stride_h=1, stride_w=1))
    a = sg.add_constant("a", np.full((1, 1, 16), 0.25, np.float32))
    p = sg.add_tensor("p", [1, 16, 16, 16], np.float32)
    sg.add_operator("PRELU", [c, a], [p])
    axes = sg.add_constant("axes", np.array([1, 2], np.int32))
    y = sg.add_tensor("y", [1, 16], np.float32)
    sg.add_operator("MEAN", [p, axes], [y], dict(keep_dims=False))
    sg.set_inputs([x])
    sg.set_outputs([y])
    path.write_bytes(w.finish())
    return str(path)


def run(tmp_path, capsys, files):
    from bench.peers import harness

    argv = ["--set", "thirdparty", *files, "--threads", "1", "--runs", "2", "--warmup", "1"]
    argv += ["--cold-samples", "1", "--peers", "wick", "litert", "--profile-above", "0"]
    argv += ["--profile-runs", "2", "--cache", str(tmp_path / "cache"), "--no-doc"]
    assert harness.main(argv) == 0
    run = json.loads((tmp_path / "cache" / "results.json").read_text())
    return run, capsys.readouterr().out


def check(run, text, name):
    assert run["models"] == []  # the wick-converted set did not run
    (row,) = run["thirdparty"]["files"]
    assert row["name"] == name and "error" not in row, row
    res = row["by_threads"]["1"]
    assert set(res["peers"]) == {"wick", "litert"}
    for peer, e in res["peers"].items():
        assert "error" not in e, (peer, e)
        assert e["runs"] == 2 and 0 < e["median_ms"] <= e["p90_ms"], (peer, e)
        assert e["cold_ms"] > 0 and e["peak_rss_mb"] >= e["rss_base_mb"] > 0, (peer, e)
    assert res["peers"]["wick"]["max_abs_diff"] <= 1e-3 * max(1.0, res["ref_max_abs"])
    prof = row["profiles"]["1"]["ops"]
    assert prof and all(o["kind"] in {"optimized", "generic", "reference", "unmarked",
                                      "folded", "fused"} for o in prof)  # fmt: skip
    assert "per-op min" in text and "kernel" in text  # the printed profile
    assert "Third-party files: latency, 1 thread" in text and f"| {name} |" in text
    assert "geomean" in text and "Summary" in text


def test_thirdparty_set_on_a_small_file(tmp_path, capsys):
    path = small_file(tmp_path / "small.tflite")
    run_, text = run(tmp_path, capsys, ["--tflite", path])
    check(run_, text, "small")
    assert run_["thirdparty"]["files"][0]["kind"] == "fp32"
    ops = [
        (o["op"], o["kind"], o["path"])
        for o in run_["thirdparty"]["files"][0]["profiles"]["1"]["ops"]
    ]
    # the PRELU after the convolution runs in its epilogue: the profile says so
    assert ("PRELU", "fused", "") in ops, ops


def test_thirdparty_set_on_a_corpus_file(tmp_path, capsys):
    from bench.peers import thirdparty

    chosen, missing = thirdparty.select(["face_detection_short_range"])
    if not chosen:
        pytest.skip(f"not in the corpus cache (python -m tests.corpus builds it): {missing}")
    run_, text = run(tmp_path, capsys, ["--files", "face_detection_short_range"])
    check(run_, text, "face_detection_short_range")


def test_minilm_rows_beside_the_set():
    """Issue 17's rows (the int8 MiniLM against its fp32 file on wick and against LiteRT):
    chosen only when the run is not narrowed to other files, and rendered as their own table
    with the two ratios of medians (here from made-up timings: nothing runs)."""
    from bench.peers import report, thirdparty

    assert thirdparty.select_minilm(quick=True) == []
    assert thirdparty.select_minilm(["face_detection"]) == []
    assert thirdparty.select_minilm(extra=["x.tflite"]) == []

    def row(form, wick_ms, litert_ms):
        peers = {"wick": {"median_ms": wick_ms, "p90_ms": wick_ms + 1},
                 "litert": {"median_ms": litert_ms, "p90_ms": litert_ms + 1}}  # fmt: skip
        return {"name": f"all-MiniLM-L6-v2_{form}", "by_threads": {"1": {"peers": peers}}}

    run = {"threads": [1], "thirdparty": {"files": [], "missing": []}}
    run["thirdparty"]["minilm"] = [row("fp32", 30.0, 29.0), row("int8", 15.0, 300.0)]
    text = "\n".join(report._thirdparty(run, report._Notes()))
    assert "all-MiniLM-L6-v2 int8 (issue 17)" in text
    line = next(x for x in text.splitlines() if x.startswith("| 1 |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == "**2.00**" and cells[5] == "**20.00**", cells  # fp32 / int8, LiteRT / wick
