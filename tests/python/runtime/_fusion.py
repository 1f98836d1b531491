"""Shared by the fusion tests: run a file with wick's fusions and again with WICK_NO_FUSION=1."""

from __future__ import annotations

import wick


def fused_and_unfused(data, feed, monkeypatch, threads=1):
    """The outputs with fusion on (checked byte-equal to the unfused run's, every unfused op of
    which must have run) and the fused run's profile."""
    fused = wick.load(data, num_threads=threads).signature(None)
    got = fused(*feed)
    prof = fused.profile()
    with monkeypatch.context() as m:
        m.setenv("WICK_NO_FUSION", "1")
        unfused = wick.load(data, num_threads=threads).signature(None)
        want = unfused(*feed)
        assert all(ns > 0 for _, ns in unfused.profile()), unfused.profile()
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    return got, prof
