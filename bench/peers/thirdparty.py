"""The third-party set of the peer benchmark (issue 16): .tflite files that others made.

    .venv/bin/python -m bench.peers --set thirdparty                 # every cached corpus file
    .venv/bin/python -m bench.peers --set thirdparty --files ConvNeXt face_landmark --no-doc
    .venv/bin/python -m bench.peers --set thirdparty --tflite my.tflite --no-doc

Files: the corpus of tests/corpus (tests/corpus/sources.py) made by others — the Keras
applications converted by TensorFlow's converter in four forms (fp32, dynamic-range int8
weights, fp16 weights, full int8) and every .tflite file of mediapipe 0.10.21 — as far as they
are in the corpus cache ($WICK_CORPUS_DIR, default ~/.cache/wick/corpus; `python -m tests.corpus
--all` builds it, ~2 h cold). Nothing is built here: the missing files are listed in the results
and in the doc. ``--tflite PATH`` measures other files instead (with ``--files``: as well).
Beside the set (not in its geomeans): issue 17's int8 MiniLM against its fp32 file (MINILM below;
``--files MiniLM`` measures only those).

Method: the one of the wick-converted set (harness.measure): per file and thread count, a fresh
worker process per runtime (wick, LiteRT with its default XNNPACK delegate), both on the same
file and the same seeded inputs (float inputs uniform in [-1, 1], integer inputs uniform over
their range), cold start (load + prepare + first inference), warm-up, interleaved rounds, the
ratio of the medians, CPU time, peak RSS (VmHWM) of each worker. The output check is wick
against LiteRT's default interpreter run in this process on the same inputs (there is no
PyTorch model behind these files).

Kind of a file, from its tensors: ``int8`` (integer inputs: full-integer quantized), ``dynamic``
(int8 weights, float activations), ``fp16`` (float16 weights), else ``fp32``; geometric means are
per kind. For every file whose wick / LiteRT ratio is above ``--profile-above`` (default 1.0) at a
thread count, a per-op profile is taken through the binding (each operator's fastest of
``--profile-runs`` profiled runs, with the kernel it runs: wick_interpreter_op_kernel), printed
like `wick bench --profile` and kept in the results.
"""

from __future__ import annotations

import hashlib
import os
import sys

import numpy as np

SEED = 0
# Issue 17's speed bar, beside the set: all-MiniLM-L6-v2 (real weights, batch 4 x 32 tokens) as
# wick.quantize's default plan (int8, 16x8 where the accuracy target needs it) against its fp32
# file on wick, and against LiteRT on the same int8 file. wick made these files, so they are
# measured here but kept out of the third-party rows and geomeans; their inputs are the corpus
# build's tokenized sentences (<name>.ref.npz), not random ids.
MINILM = ("all-MiniLM-L6-v2_fp32", "all-MiniLM-L6-v2_int8")
# --quick: a few small files of each kind, those of them that are cached.
QUICK = ("MobileNetV3Small_fp32", "MobileNetV3Small_int8", "face_detection_short_range")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class CorpusFiles:
    """One third-party file as harness.measure sees a model's files: the .tflite both runtimes
    run, the seeded inputs and LiteRT's outputs on them (cached in <cache>/thirdparty/<name>/,
    keyed by the file's digest and the LiteRT version)."""

    def __init__(self, name: str, path: str, cache_dir: str):
        self.name = name
        self.path = str(path)
        with open(self.path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        self.dir = os.path.join(cache_dir, "thirdparty", f"{name}-{digest}")
        os.makedirs(self.dir, exist_ok=True)
        self._kind = None

    def tflite(self) -> str:
        return self.path

    def _interpreter(self):
        from ai_edge_litert.interpreter import Interpreter

        it = Interpreter(model_path=self.path, num_threads=1)
        it.allocate_tensors()
        return it

    def use_inputs(self, feeds: list[np.ndarray]) -> None:
        """These inputs instead of seeded random ones (cast to the file's input types)."""
        types = [np.dtype(d["dtype"]) for d in self._interpreter().get_input_details()]
        np.savez(
            os.path.join(self.dir, "inputs.npz"),
            *[np.asarray(x).astype(t) for x, t in zip(feeds, types, strict=True)],
        )

    def inputs(self) -> str:
        p = os.path.join(self.dir, "inputs.npz")
        if not os.path.exists(p):
            rng = np.random.default_rng(SEED)
            feeds = []
            for d in self._interpreter().get_input_details():
                dt, shape = np.dtype(d["dtype"]), tuple(d["shape"])
                if dt.kind == "f":
                    feeds.append(rng.uniform(-1.0, 1.0, shape).astype(dt))
                elif dt.kind in "iu" and d["quantization"][0] == 0.0:
                    # plain integers (token ids, indices, masks): small, so every index is
                    # valid (the oracles' rule, tests/python/oracles/litert.py random_inputs)
                    feeds.append(rng.integers(0, 16, shape).astype(dt))
                elif dt.kind in "iu":
                    info = np.iinfo(dt)
                    lo, hi = max(info.min, -128), min(info.max, 255)
                    feeds.append(rng.integers(lo, hi, shape, endpoint=True).astype(dt))
                else:
                    feeds.append(np.zeros(shape, dt))
            np.savez(p, *feeds)
        return p

    def reference(self) -> str:
        """LiteRT's default interpreter's outputs on the inputs (the output check's reference)."""
        from importlib import metadata

        key = metadata.version("ai-edge-litert")
        p = os.path.join(self.dir, f"litert-{key}.npz")
        if not os.path.exists(p):
            it = self._interpreter()
            with np.load(self.inputs()) as z:
                feeds = [z[f"arr_{i}"] for i in range(len(z.files))]
            for x, d in zip(feeds, it.get_input_details(), strict=True):
                it.set_tensor(d["index"], x)
            it.invoke()
            np.savez(p, *[it.get_tensor(d["index"]) for d in it.get_output_details()])
        return p

    def kind(self) -> str:
        if self._kind is None:
            it = self._interpreter()
            types = {np.dtype(t["dtype"]) for t in it.get_tensor_details()}
            ins = {np.dtype(d["dtype"]) for d in it.get_input_details()}
            if any(t.kind in "iu" and t.itemsize == 1 for t in ins):
                self._kind = "int8"
            elif np.dtype(np.int8) in types:
                self._kind = "dynamic"
            elif np.dtype(np.float16) in types:
                self._kind = "fp16"
            else:
                self._kind = "fp32"
        return self._kind


def select(names=None, quick: bool = False, extra=()) -> tuple[list[tuple[str, str, str]], list]:
    """([(name, source, path)] of the cached third-party corpus files chosen, [names of the
    chosen ones not in the cache]). names: substrings of entry names (default: all)."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from tests.corpus import sources

    root = sources.corpus_dir()
    entries = [e for e in sources.ENTRIES if e.source in ("mediapipe", "keras")]
    if extra and not names:  # only the files given by path
        entries = []
    elif quick and not names:
        names = list(QUICK)
        entries = [e for e in entries if e.name in names]
    elif names:
        entries = [e for e in entries if any(n in e.name for n in names)]
    chosen, missing = [], []
    for e in entries:
        if sources.cached(e, root):
            chosen.append((e.name, e.source, str(e.path(root))))
        else:
            missing.append(e.name)
    minilm = any(n in m for n in names or () for m in MINILM)
    if names and not extra and not chosen and not missing and not minilm:
        raise SystemExit(f"no third-party corpus entry matches {names}")
    for p in extra:
        chosen.append((os.path.splitext(os.path.basename(p))[0], "file", os.path.abspath(p)))
    return chosen, missing


def select_minilm(names=None, quick: bool = False, extra=()) -> list[tuple[str, str, str]]:
    """[(name, source, path)] of the cached MINILM files: all of them unless names, quick or
    extra (files by path) narrow the run to something else."""
    if quick or extra or (names and not any(n in m for n in names for m in MINILM)):
        return []
    from tests.corpus import sources

    root = sources.corpus_dir()
    entries = [e for e in sources.ENTRIES if e.name in MINILM]
    return [(e.name, e.source, str(e.path(root))) for e in entries if sources.cached(e, root)]


def profile(path: str, feeds, threads: int, runs: int) -> list[dict]:
    """Each operator's fastest of `runs` profiled invokes on wick (through the binding), with
    the kernel it runs."""
    from wick import runtime

    runner = runtime.load(path, num_threads=threads).signature(None)
    runner(*feeds)  # sets the inputs; prepares operators whose shapes depend on values
    best = None
    for _ in range(max(1, runs)):
        rows = runner.profile(kernels=True)
        if best is None:
            best = rows
        else:
            best = [(n, min(a, r[1]), k) for (n, a, k), r in zip(best, rows, strict=True)]
    return [{"op": n, "ns": ns, "kind": k, "path": p} for n, ns, (k, p) in best]


def format_profile(rows: list[dict], title: str) -> str:
    """`wick bench --profile`-style text: the slow-path total, then every operator."""
    total = sum(r["ns"] for r in rows) or 1
    slow = [r for r in rows if r["kind"] in ("reference", "generic")]
    slow_ns = sum(r["ns"] for r in slow)
    out = [
        f"--- {title}",
        f"per-op min   {total / 1e6:.3f} ms",
        f"slow paths   {slow_ns / 1e6:.3f} ms ({100 * slow_ns / total:.1f}%) in {len(slow)} "
        "operators on reference or generic kernels (marked !)",
        "",
        f"{'#':<5} {'op':<28} {'time(us)':>10} {'share':>7}  kernel",
    ]
    for i, r in enumerate(rows):
        mark = "! " if r["kind"] in ("reference", "generic") else ""
        path = f" ({r['path']})" if r["path"] else ""
        out.append(
            f"{i:<5} {r['op']:<28} {r['ns'] / 1e3:>10.1f} {100 * r['ns'] / total:>6.1f}%  "
            f"{mark}{r['kind']}{path}"
        )
    return "\n".join(out)


def by_op(rows: list[dict], top: int = 8) -> list[dict]:
    """The profile summed per (op, kernel kind, path), largest first."""
    total = sum(r["ns"] for r in rows) or 1
    sums = {}
    for r in rows:
        k = (r["op"], r["kind"], r["path"])
        n, c = sums.get(k, (0, 0))
        sums[k] = (n + r["ns"], c + 1)
    ranked = sorted(sums.items(), key=lambda kv: -kv[1][0])[:top]
    return [
        {"op": op, "kind": kind, "path": path, "count": c, "us": ns / 1e3, "share": ns / total}
        for (op, kind, path), (ns, c) in ranked
    ]


def run_set(opts, peers, measure, one_line) -> dict:
    """Measures the third-party files with `peers` (wick and LiteRT); returns the results."""
    peers = [p for p in peers if p in ("wick", "litert")]
    chosen, missing = select(opts.files, opts.quick, opts.tflite or ())
    out = {"peers": peers, "missing": missing, "files": []}
    if missing:
        _log(f"third-party corpus: {len(missing)} files not in the cache (python -m tests.corpus "
             f"--all builds them): {', '.join(missing)}")  # fmt: skip
    for name, source, path in chosen:
        out["files"].append(_measure_file(name, source, path, opts, peers, measure, one_line))
    minilm = select_minilm(opts.files, opts.quick, opts.tflite or ())
    if minilm:
        _log("issue 17: the int8 MiniLM against its fp32 file (wick) and LiteRT")
        out["minilm"] = [
            _measure_file(name, source, path, opts, peers, measure, one_line)
            for name, source, path in minilm
        ]
    return out


def _measure_file(name, source, path, opts, peers, measure, one_line) -> dict:
    """One file's row: its kind, and per thread count the peers' timings (and wick's per-op
    profile where it is slower than LiteRT)."""
    _log(f"{name} ({source})")
    row = {"name": name, "source": source, "path": path, "by_threads": {}, "profiles": {}}
    try:
        files = CorpusFiles(name, path, opts.cache)
        if source == "minilm":
            files.use_inputs(_minilm_feeds(path))
        row["kind"] = files.kind()
        files.inputs()
        files.reference()
    except Exception as e:  # noqa: BLE001 - LiteRT cannot open it: a row saying why
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        _log(f"  {row['error']}")
        return row
    row["load"] = os.getloadavg()[0]
    for t in opts.threads:
        res = measure(None, files, peers, t, opts)
        row["by_threads"][str(t)] = res
        _log("  " + one_line(res, t))
        w, lt = res["peers"].get("wick", {}), res["peers"].get("litert", {})
        ratio = w["median_ms"] / lt["median_ms"] if "median_ms" in w and "median_ms" in lt else 0
        if ratio > opts.profile_above and "median_ms" in w:
            with np.load(files.inputs()) as z:
                feeds = [z[f"arr_{i}"] for i in range(len(z.files))]
            try:
                rows = profile(path, feeds, t, opts.profile_runs)
            except Exception as e:  # noqa: BLE001 - reported, the timing row stays
                row["profiles"][str(t)] = {"error": f"{type(e).__name__}: {e}"}
                continue
            row["profiles"][str(t)] = {"ratio": ratio, "ops": rows}
            print(format_profile(rows, f"{name}, {t} thread(s): wick / LiteRT {ratio:.2f}"))
    return row


def _minilm_feeds(path: str) -> list[np.ndarray]:
    """The corpus build's tokenized sentences of a MiniLM file (ids, mask)."""
    with np.load(os.path.splitext(path)[0] + ".ref.npz") as z:
        return [z["ids"], z["mask"]]
