"""Which operators of the third-party corpus still run on wick's scalar reference kernels
(issue 16 item 3): every file of tests/corpus made by others — the .tflite files of mediapipe
0.10.21 and the Keras applications converted by TensorFlow (fp32, dynamic-range, fp16, int8) —
that is in the corpus cache ($WICK_CORPUS_DIR, default ~/.cache/wick/corpus) is loaded and run
once, and the operators whose kernel is "reference" (wick_interpreter_op_kernel, the binding's
``op_kernels()``) are listed per file as "OP" or "OP (path)", the path the op named (e.g.
"CONV_2D (grouped)", "LOGISTIC (int8)"). The union must stay within ALLOWED.

Nothing is built here: files not in the cache are a visible skip naming them
(`.venv/bin/python -m tests.corpus --all` builds the whole corpus). A file wick refuses (a
custom op stock LiteRT does not run either) is reported and left out. With the reference
kernels forced (WICK_FORCE_REFERENCE=1, WICK_MAX_ISA=none) every op is on the reference path:
the test is skipped then.
"""

from __future__ import annotations

import os
import platform
import sys
from collections import Counter

import pytest

from tests.corpus import sources

# The reference paths the cached corpus hit when this was written (AVX2 machine, 49 of 162
# files cached: all mediapipe files, ten Keras applications in up to four forms). The list
# should shrink over time to rare ops only: when an op gets an optimized path, delete its line;
# a new line needs a reason. A machine with more ISA (AVX-512 VBMI: the int8 table lookups)
# hits a subset of these.
ALLOWED = {
    # issue 16 item 2 — common in real files, to be optimized:
    "LOGISTIC (int8)",  # the int8 table lookup: vectorized on AVX2 and AVX-512, not NEON yet
    "GELU (int8)",  # ditto
    "HARD_SWISH (int8)",  # MobileNetV3 int8: the reference fixed-point arithmetic
    # rare or small:
    "STRIDED_SLICE",  # strided copies (mediapipe hand_recrop: two tiny slices)
}
# Vectorized on x86 only (AVX2 and AVX-512 tables); AArch64 still runs them on the reference.
if platform.machine() not in ("x86_64", "AMD64"):
    ALLOWED |= {
        "SQUARED_DIFFERENCE (int8)",  # TensorFlow's layer norm, int8 (ConvNeXt int8)
        "RSQRT (int8)",  # ditto (the 8-bit table kernel)
        "NEG",  # float32 NEG (ConvNeXt int8's float layer-norm fragment)
    }

ENTRIES = [e for e in sources.ENTRIES if e.source in ("mediapipe", "keras")]
FORCED = os.environ.get("WICK_FORCE_REFERENCE") == "1" or os.environ.get("WICK_MAX_ISA") == "none"


def _cached():
    root = sources.corpus_dir()
    return {e.name: e.path(root) for e in ENTRIES if sources.cached(e, root)}


def reference_ops(path) -> tuple[Counter, str | None]:
    """The reference-path operators of one file after one run ("OP" or "OP (path)": count),
    or why wick cannot load it."""
    import wick

    try:
        runner = wick.load(str(path)).signature(None)
    except wick.WickError as e:
        return Counter(), str(e)
    # one invoke (zero inputs): operators whose shapes depend on values are prepared there
    rows = runner.profile(kernels=True)
    found = Counter()
    for name, _, (kind, path_name) in rows:
        if kind == "reference":
            found[f"{name} ({path_name})" if path_name else name] += 1
    return found, None


def test_corpus_files_missing_from_the_cache():
    missing = [e.name for e in ENTRIES if e.name not in _cached()]
    if missing:
        pytest.skip(
            f"{len(missing)} of {len(ENTRIES)} third-party corpus files are not in "
            f"{sources.corpus_dir()} (python -m tests.corpus --all builds them): "
            + ", ".join(missing)
        )


# slow: one run of each of ~160 real files (~3 minutes; far longer under the sanitizers, whose
# run in CI skips slow tests; the CI subset of the corpus runs there in test_corpus.py)
@pytest.mark.slow
@pytest.mark.skipif(FORCED, reason="the reference kernels are forced: every op is on them")
def test_reference_paths_are_within_the_allow_list():
    paths = _cached()
    if not paths:
        pytest.skip(f"no third-party corpus file in {sources.corpus_dir()}")
    per_file, refused, seen = {}, {}, Counter()
    for name, path in paths.items():
        found, why = reference_ops(path)
        if why:
            refused[name] = why
            continue
        per_file[name] = found
        seen.update(dict.fromkeys(found, 1))
    # the listing, shown with -s or on failure
    for name, found in per_file.items():
        if found:
            print(f"{name}: " + ", ".join(f"{op} x{n}" for op, n in sorted(found.items())))
    for name, why in refused.items():
        print(f"{name}: wick refuses it: {why}", file=sys.stderr)
    new = {op: [f for f, found in per_file.items() if op in found] for op in seen}
    new = {op: files for op, files in new.items() if op not in ALLOWED}
    assert not new, (
        "operators on the reference path that the allow-list does not name (optimize them, or "
        f"add them to ALLOWED with a reason): {new}"
    )
