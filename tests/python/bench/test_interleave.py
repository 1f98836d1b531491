"""The peer benchmark's interleaved rounds (bench/peers/harness.py, _interleave) with stand-in
workers: each peer's turn starts with the --lead-in untimed inferences, so every timed run
follows the peer's own run; without a lead-in the runs that came right after another peer's
turn are summarized apart.  No runtime runs here; speed is not asserted."""

from __future__ import annotations

from types import SimpleNamespace

from bench.peers import harness


class _StandIn:
    """A worker that records its run commands; its time says who ran just before it."""

    def __init__(self, peer: str, log: list):
        self.peer, self._log = peer, log

    def run(self, n: int = 1, lead_in: int = 0):
        after_other = bool(self._log) and self._log[-1][0] != self.peer and not lead_in
        self._log.append((self.peer, n, lead_in))
        ms = [2.0 if after_other else 1.0] * n
        return ms, ms


def _opts(lead_in: int):
    return SimpleNamespace(warmup=1, runs=6, gap_ms=0.0, lead_in=lead_in)


def _interleave(lead_in: int):
    log: list = []
    workers = [_StandIn("wick", log), _StandIn("litert", log)]
    res = {"peers": {"wick": {}, "litert": {}}}
    harness._interleave(workers, res, _opts(lead_in))
    return res["peers"], log


def test_every_turn_starts_with_the_lead_in():
    peers, log = _interleave(lead_in=1)
    timed = [run for run in log if run[2]]  # the warm-up runs have no lead-in
    assert len(timed) == 12 and all(n == 1 and lead == 1 for _, n, lead in timed)
    assert log[-12:] == timed
    for entry in peers.values():
        assert entry["runs"] == 6 and entry["median_ms"] == 1.0
        assert "after_other_median_ms" not in entry


def test_without_lead_in_runs_after_another_peer_are_told_apart():
    peers, log = _interleave(lead_in=0)
    assert all(lead == 0 for _, _, lead in log)
    for entry in peers.values():
        assert entry["runs"] == 6
        assert entry["after_other_median_ms"] == 2.0 and entry["after_self_median_ms"] == 1.0
