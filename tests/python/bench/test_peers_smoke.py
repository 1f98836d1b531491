"""The peer benchmark harness (bench/peers, `make bench`) does not rot: one tiny model, one
thread, two timed rounds, on wick, LiteRT and PyTorch eager (the peers in wick's .venv that
need no slow export), into a temporary cache; no doc is written.  Speed is never asserted
here; the checks are that every peer produced timings and outputs matching PyTorch eager."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ai_edge_litert")


def test_harness_times_and_checks_every_peer(tmp_path, capsys):
    from bench.peers import harness

    doc = tmp_path / "performance.md"
    argv = ["--models", "smoke", "--threads", "1", "--runs", "2", "--warmup", "1"]
    argv += ["--cold-samples", "2"]
    argv += ["--peers", "wick", "litert", "torch", "--cache", str(tmp_path / "cache")]
    argv += ["--doc", str(doc), "--no-doc"]
    assert harness.main(argv) == 0
    assert not doc.exists()
    run = json.loads((tmp_path / "cache" / "results.json").read_text())
    assert run["unavailable"] == {}
    assert run["set"] == "converted" and "thirdparty" not in run  # --models narrows the run
    (row,) = run["models"]
    res = row["by_threads"]["1"]
    assert set(res["peers"]) == {"wick", "litert", "torch"}
    for peer, e in res["peers"].items():
        assert "error" not in e, (peer, e)
        assert e["runs"] == 2 and 0 < e["median_ms"] <= e["p90_ms"], (peer, e)
        assert e["cold_ms"] > 0 and e["peak_rss_mb"] >= e["rss_base_mb"] > 0, (peer, e)
        # cold start: the median of two fresh processes' samples
        assert len(e["cold_ms_samples"]) == 2, (peer, e)
        assert e["cold_ms"] == pytest.approx(sum(e["cold_ms_samples"]) / 2), (peer, e)
        # first and last outputs against PyTorch eager (fp32 rounding only)
        assert e["max_abs_diff"] <= 1e-4 * max(1.0, res["ref_max_abs"]), (peer, e)
    text = capsys.readouterr().out
    assert "| smoke CNN |" in text and "wick / LiteRT" in text
