"""wick against its peers, one run on one machine: ``make bench`` (= ``python -m bench.peers``).

    .venv/bin/python -m bench.peers                  # every model, threads 1 and 2, writes the doc
    .venv/bin/python -m bench.peers --quick          # 4 models + 3 third-party files, fewer runs
    .venv/bin/python -m bench.peers --set thirdparty --files ConvNeXt --no-doc   # see thirdparty.py
    .venv/bin/python -m bench.peers --models resnet18 mobilenet_v2_int8 --threads 1 --no-doc

Peers: wick (its C runtime through the Python binding's handle: one ctypes call per inference),
LiteRT's interpreter (ai-edge-litert, default XNNPACK delegate) on the very .tflite file wick
runs (written by wick's converter), ONNX Runtime (CPU provider) on the model exported by
torch.onnx.export, ExecuTorch with the XNNPACK backend (its own venv, .venv-executorch), and
PyTorch eager.  int8 rows (the PT2E-quantized model) run wick and LiteRT on the same int8 file,
ORT and ExecuTorch on that PT2E model's own exports (QDQ ONNX, XNNPACK QS8 .pte).

Protocol, per model and thread count: one fresh worker process per peer (bench/peers/worker.py),
started one after the other; each reports its cold start (load + prepare + first inference; at the
first thread count the median over --cold-samples fresh processes) and
writes its first and (after the timed runs) its last outputs, which are compared with PyTorch
eager's (max |diff| of both; a fast but wrong row shows).  Then warm-up, then R rounds; in each round every peer runs one inference, in an
order rotated every round, with a short idle gap between peers (so that a peer's spinning idle
threads do not run into the next one's turn), so background load hits all peers alike; each
peer's turn starts with an untimed inference (--lead-in), so that every timed run follows the
peer's own run, not another peer's.
Reported: median and p90 of the wall-clock times, the ratio wick / LiteRT of the medians and its
geometric mean over the models, cold start, and the peak RSS of each worker (max RSS of the
process; also beside it the part above the RSS after imports, since the Python packages a peer
needs differ widely: torch alone is ~400 MB).

Then the third-party set (thirdparty.py): .tflite files others made (the Keras applications
converted by TensorFlow, mediapipe's files; the corpus cache of tests/corpus), wick and LiteRT on
the same file by the same method, with a per-op profile of every file where wick is slower.

Results: build/bench-cache/results.json, and docs/performance.md (report.py) unless --no-doc.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import artifacts, models, report, thirdparty

REPO = artifacts.REPO
PEERS = ("wick", "litert", "ort", "executorch", "torch")
PEER_NAMES = {
    "wick": "wick",
    "litert": "LiteRT",
    "ort": "ONNX Runtime",
    "executorch": "ExecuTorch",
    "torch": "PyTorch eager",
}
# PyTorch eager of a PT2E model runs fake-quantized float ops: not a peer for int8 speed.
INT8_PEERS = ("wick", "litert", "ort", "executorch")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# workers


class WorkerError(RuntimeError):
    pass


class Worker:
    """One peer's worker process for one model and thread count."""

    def __init__(self, peer: str, model_file: str, inputs: str, threads: int, tmp: str, env):
        """Starts the process; it imports its runtime, then waits for :meth:`load`."""
        self.peer = peer
        self.outputs = os.path.join(tmp, f"{peer}-out.npz")
        self._stderr = open(os.path.join(tmp, f"{peer}-stderr.txt"), "w+")
        cmd = [artifacts.python_for(peer), "-m", "bench.peers.worker", peer, model_file, inputs]
        self.proc = subprocess.Popen(
            cmd + [str(threads), self.outputs],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        self.rss_base_mb = self.cold_ms = None

    def imported(self) -> None:
        self.rss_base_mb = self._reply(timeout=600)["rss_base_mb"]

    def load(self) -> None:
        """Cold start: load + prepare + first inference, timed in the worker."""
        self.cold_ms = self._ask("load", timeout=600)["cold_ms"]

    def _reply(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.kill()
            self._stderr.seek(0)
            tail = [ln for ln in self._stderr.read().splitlines() if ln.strip()][-3:]
            why = "timed out" if not ready else f"exited ({self.proc.poll()})"
            raise WorkerError(f"{self.peer} worker {why}: {' | '.join(tail)[-300:]}")
        msg = json.loads(line)
        if "error" in msg:
            self.kill()
            raise WorkerError(msg["error"])
        return msg

    def _ask(self, cmd: str, timeout: float) -> dict:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._reply(timeout)

    def run(self, n: int = 1, lead_in: int = 0) -> tuple[list[float], list[float]]:
        """lead_in untimed inferences, then n timed ones: (wall ms, process CPU ms) of each."""
        r = self._ask(f"run {n} {lead_in}", timeout=300)
        return r["ms"], r["cpu_ms"]

    def peak_rss_mb(self) -> float:
        return self._ask("stats", timeout=60)["peak_rss_mb"]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self._stderr.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def worker_env(peer: str) -> dict:
    env = dict(os.environ)
    paths = [REPO] if peer == "executorch" else [REPO, os.path.join(REPO, "python")]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if peer == "torch":
        # libgomp's idle workers spin for milliseconds after each parallel region; in the
        # interleaved loop that would be the next peer's time.
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


# ---------------------------------------------------------------------------------------------
# one model


def _model_file(files: artifacts.ModelFiles, peer: str) -> str:
    if peer in ("wick", "litert"):
        return files.tflite()
    return {"ort": files.onnx, "executorch": files.pte, "torch": files.torch_module}[peer]()


def _max_abs_diff(got_path: str, ref: list[np.ndarray]) -> float:
    with np.load(got_path) as z:
        got = [z[f"arr_{i}"] for i in range(len(z.files))]
    if len(got) != len(ref):
        return math.inf
    worst = 0.0
    for g, r in zip(got, ref, strict=True):
        if g.size != r.size:
            return math.inf
        diff = np.abs(g.reshape(r.shape).astype(np.float64) - r.astype(np.float64))
        worst = max(worst, float(diff.max()) if diff.size else 0.0)
    return worst


def _p90(xs: list[float]) -> float:
    return float(np.percentile(xs, 90))


def measure(model, files, peers, threads: int, opts) -> dict:
    """One model at one thread count: cold start, outputs, interleaved timing of all peers."""
    res = {"peers": {}}
    with np.load(files.reference()) as z:
        ref = [z[f"arr_{i}"] for i in range(len(z.files))]
    res["ref_max_abs"] = max(float(np.abs(r).max()) for r in ref)
    workers = []
    with tempfile.TemporaryDirectory(prefix="wick-bench-") as tmp:
        try:
            # All workers import their runtimes at once (that is not measured: 1-20 s each),
            # then load one after the other, so no cold start overlaps another worker's work.
            starting = []
            for peer in peers:
                entry = res["peers"].setdefault(peer, {})
                try:
                    path = _model_file(files, peer)
                    env = worker_env(peer)
                    starting.append(Worker(peer, path, files.inputs(), threads, tmp, env))
                except (RuntimeError, OSError) as e:
                    entry["error"] = str(e)
            for w in starting:
                entry = res["peers"][w.peer]
                try:
                    w.imported()
                except WorkerError as e:
                    entry["error"] = str(e)
                    continue
                workers.append(w)
            for w in list(workers):
                entry = res["peers"][w.peer]
                try:
                    w.load()
                except WorkerError as e:
                    entry["error"] = str(e)
                    workers.remove(w)
                    continue
                entry["cold_ms"] = w.cold_ms
                entry["rss_base_mb"] = w.rss_base_mb
                entry["max_abs_diff"] = _max_abs_diff(w.outputs, ref)
            _interleave(workers, res, opts)
            for w in workers:
                entry = res["peers"][w.peer]
                try:
                    entry["peak_rss_mb"] = w.peak_rss_mb()
                    last = _max_abs_diff(w.outputs[: -len(".npz")] + ".last.npz", ref)
                    entry["max_abs_diff"] = max(entry["max_abs_diff"], last)
                except WorkerError as e:
                    entry["error"] = str(e)
        finally:
            for w in starting:
                w.close()
        if threads == opts.threads[0] and opts.cold_samples > 1:
            _more_cold_samples(workers, res, files, threads, tmp, opts.cold_samples - 1)
    for peer, entry in res["peers"].items():
        if "error" in entry:
            _log(f"    {peer}: {entry['error']}")
    return res


def _more_cold_samples(workers, res, files, threads: int, tmp: str, n: int) -> None:
    """Starts n more fresh workers per peer that only load (after the timed runs, one load at a
    time): one cold start is a single sample, easily hit by the VM's page-fault or scheduling
    hiccups, so the table reports the median of all of them (``cold_ms_samples`` in the JSON)."""
    for w0 in workers:
        entry = res["peers"][w0.peer]
        if "error" in entry:
            continue
        samples = [entry["cold_ms"]]
        extra = []
        try:
            for i in range(n):
                sub = os.path.join(tmp, f"cold{i}")
                os.makedirs(sub, exist_ok=True)
                extra.append(
                    Worker(
                        w0.peer,
                        _model_file(files, w0.peer),
                        files.inputs(),
                        threads,
                        sub,
                        worker_env(w0.peer),
                    )
                )
            for w in extra:
                w.imported()
            for w in extra:
                w.load()
                samples.append(w.cold_ms)
        except (WorkerError, RuntimeError, OSError) as e:
            _log(f"    {w0.peer}: extra cold-start sample failed: {e}")
        finally:
            for w in extra:
                w.close()
        entry["cold_ms_samples"] = samples
        entry["cold_ms"] = statistics.median(samples)


def _interleave(workers: list[Worker], res: dict, opts) -> None:
    """Warm-up, then rounds: in each, every peer's turn is opts.lead_in untimed inferences and
    one timed one, in an order rotated every round.  The lead-in makes every timed run follow
    the same peer's own run (the steady state that ``wick bench`` and LiteRT's benchmark tool
    measure), not another peer's: a run right after another process's long turn can be slower
    (caches holding the other's data, idle threads and vCPUs asleep), and how long that turn was
    depends on the peer and the file, so two files of one runtime were not measured alike
    (bench/README.md).  Without a lead-in the
    runs that followed another peer's turn are also summarized apart (``after_other``)."""
    est = {}
    alive = []
    for w in workers:  # warm-up: at least opts.warmup runs and 0.2 s
        try:
            t, ms = time.perf_counter(), []
            while len(ms) < opts.warmup or time.perf_counter() - t < 0.2:
                ms += w.run(1)[0]
            est[w.peer] = statistics.median(ms)
            alive.append(w)
        except WorkerError as e:
            res["peers"][w.peer]["error"] = str(e)
    if not alive:
        return
    if opts.runs:
        rounds = opts.runs
    else:
        per_round = sum(est.values()) * (1 + opts.lead_in) + opts.gap_ms * len(alive)
        rounds = int(min(opts.max_runs, max(opts.min_runs, opts.budget_s * 1e3 / per_round)))
    wall = {w.peer: [] for w in alive}
    cpu = {w.peer: [] for w in alive}
    after_other = {w.peer: [] for w in alive}  # per timed run: did another peer's turn precede it
    gap = opts.gap_ms / 1e3
    last = alive[-1].peer  # the warm-up ran the peers in this order
    for r in range(rounds):
        k = r % len(alive)
        for w in alive[k:] + alive[:k]:
            if w.peer not in wall:
                continue
            try:
                ms, cpu_ms = w.run(1, opts.lead_in)
                wall[w.peer] += ms
                cpu[w.peer] += cpu_ms
                after_other[w.peer] += [not opts.lead_in and last != w.peer] * len(ms)
            except WorkerError as e:
                res["peers"][w.peer]["error"] = str(e)
                del wall[w.peer]
            last = w.peer
            if gap:
                time.sleep(gap)
    for peer, ms in wall.items():
        entry = res["peers"][peer]
        entry.update(runs=len(ms), median_ms=statistics.median(ms), p90_ms=_p90(ms))
        entry.update(min_ms=min(ms), cpu_median_ms=statistics.median(cpu[peer]))
        other = [m for m, o in zip(ms, after_other[peer], strict=True) if o]
        own = [m for m, o in zip(ms, after_other[peer], strict=True) if not o]
        if other and own:
            entry.update(after_other_median_ms=statistics.median(other))
            entry.update(after_self_median_ms=statistics.median(own))


# ---------------------------------------------------------------------------------------------
# the run


def available_peers(wanted) -> tuple[list[str], dict]:
    """The peers that can run here, and why the others cannot."""
    ok, why = [], {}
    for peer in wanted:
        try:
            if peer == "wick":
                from wick import runtime

                runtime._library()
            elif peer == "litert":
                import ai_edge_litert.interpreter  # noqa: F401
            elif peer == "ort":
                import onnxruntime  # noqa: F401
            elif peer == "executorch" and not os.path.exists(artifacts.ET_PYTHON):
                raise RuntimeError(
                    "no .venv-executorch (bash bench/peers/setup_executorch.sh makes it)"
                )
            ok.append(peer)
        except Exception as e:
            why[peer] = f"{type(e).__name__}: {e}"
    return ok, why


def versions(peers) -> dict:
    from importlib import metadata

    def v(d):
        try:
            return metadata.version(d)
        except metadata.PackageNotFoundError:
            return "not installed"

    out = {"python": platform.python_version()}
    try:
        from wick import runtime

        out["wick"] = runtime._library().wick_version().decode()
    except Exception as e:
        out["wick"] = f"unavailable ({e})"
    commit = subprocess.run(
        ["git", "-C", REPO, "log", "-1", "--format=%h %cd", "--date=short"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    out["wick commit"] = commit + (" (+ uncommitted changes)" if dirty else "")
    for d in ("ai-edge-litert", "onnxruntime", "onnx", "onnxscript", "torch", "torchvision"):
        out[d] = v(d)
    out["timm"], out["transformers"], out["torchao"] = v("timm"), v("transformers"), v("torchao")
    et = artifacts.et_version()
    out["executorch"] = (
        et.replace("-torch", " (.venv-executorch, torch ") + ")" if "-" in et else et
    )
    out["numpy"] = v("numpy")
    return out


def machine() -> dict:
    info = {"cpu": platform.processor() or "?", "cores": os.cpu_count()}
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and info["cpu"] in ("?", "x86_64"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                if line.startswith(("flags", "Features")) and not flags:
                    flags = set(line.split(":", 1)[1].split())
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    isa = [
        f
        for f in ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                  "avx512dq", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile",
                  "asimd", "asimddp", "sve")
        if f in flags
    ]  # fmt: skip
    info["isa"] = " ".join(isa)
    info["kernel"] = platform.release()
    return info


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="4 models and 3 third-party files, ~3 s per model and count",
    )
    ap.add_argument(
        "--set",
        choices=("all", "converted", "thirdparty"),
        default="all",
        help="the wick-converted models, the third-party corpus files, or both (default, unless "
        "only --models or only --files/--tflite is given; only a run of both writes the doc)",
    )
    ap.add_argument("--models", nargs="+", help="model keys (default: all; see models.py)")
    ap.add_argument(
        "--files",
        nargs="+",
        help="third-party corpus entries whose name contains one of these (default: every "
        "cached one; see thirdparty.py)",
    )
    ap.add_argument("--tflite", nargs="+", help="more third-party .tflite files, by path")
    ap.add_argument(
        "--profile-above",
        type=float,
        default=1.0,
        help="per-op profile of every third-party file whose wick / LiteRT ratio is above this",
    )
    ap.add_argument("--profile-runs", type=int, default=20, help="profiled runs per profile")
    ap.add_argument("--peers", nargs="+", default=list(PEERS), choices=PEERS)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--runs", type=int, default=0, help="fixed rounds (default: by time budget)")
    ap.add_argument("--budget-s", type=float, default=None, help="timed seconds per model+count")
    ap.add_argument("--min-runs", type=int, default=None)
    ap.add_argument("--max-runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument(
        "--cold-samples",
        type=int,
        default=3,
        help="fresh processes per peer whose cold start is measured (median reported)",
    )
    ap.add_argument("--gap-ms", type=float, default=1.0, help="idle time between two peers' runs")
    ap.add_argument(
        "--lead-in",
        type=int,
        default=1,
        help="untimed inferences at the start of each peer's turn, so that every timed run "
        "follows the peer's own run (0: the timed run follows the previous peer's turn)",
    )
    ap.add_argument("--cache", default=os.path.join(REPO, "build", "bench-cache"))
    ap.add_argument("--json", default=None, help="results file (default: <cache>/results.json)")
    ap.add_argument("--doc", default=os.path.join(REPO, "docs", "performance.md"))
    ap.add_argument("--no-doc", action="store_true", help="do not write docs/performance.md")
    a = ap.parse_args(argv)
    # naming models or files narrows the default run to that set
    picked_tp = bool(a.files or a.tflite)
    if a.set == "all" and a.models and not picked_tp:
        a.set = "converted"
    elif a.set == "all" and picked_tp and not a.models:
        a.set = "thirdparty"
    if a.budget_s is None:
        a.budget_s = 3.0 if a.quick else 8.0
    if a.min_runs is None:
        a.min_runs = 10 if a.quick else 20
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    t_start = time.perf_counter()
    if a.set == "thirdparty":
        selected = []
    elif a.models:
        selected = [models.get(k) for k in a.models]
    else:
        selected = [m for m in models.MODELS if m.quick or not a.quick]
    peers, unavailable = available_peers(a.peers)
    for p, why in unavailable.items():
        _log(f"peer {p} unavailable: {why}")
    run = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python -m bench.peers " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "versions": versions(peers),
        "peers": peers,
        "unavailable": unavailable,
        "threads": a.threads,
        "protocol": {
            "budget_s": a.budget_s,
            "min_runs": a.min_runs,
            "max_runs": a.max_runs,
            "runs": a.runs,
            "warmup": a.warmup,
            "gap_ms": a.gap_ms,
            "lead_in": a.lead_in,
            "cold_samples": a.cold_samples,
        },
        "set": a.set,
        "profile_runs": a.profile_runs,
        "models": [],
    }
    # 1. the files every peer runs (cached in build/bench-cache)
    t_files = time.perf_counter()
    all_files = {}
    for m in selected:
        _log(f"files for {m.name}")
        files = all_files[m.key] = artifacts.ModelFiles(m, a.cache, log=_log)
        for peer in [p for p in peers if p in INT8_PEERS] if m.int8 else peers:
            try:
                files.reference()
                files.inputs()
                if peer == "executorch":
                    files.pt2()  # lowered below, all models in one process
                else:
                    _model_file(files, peer)
            except RuntimeError:
                pass  # cached; reported per row below
        files._built = None  # free the module
    if "executorch" in peers:
        artifacts.make_ptes(list(all_files.values()), log=_log)
    run["files_s"] = time.perf_counter() - t_files
    # 2. the measurements
    load_before = os.getloadavg()
    for m in selected:
        _log(f"{m.name}")
        files = all_files[m.key]
        row = {"key": m.key, "name": m.name, "int8": m.int8, "by_threads": {}, "files": {}}
        try:
            files.reference()
        except RuntimeError as e:
            row["error"] = str(e)
            run["models"].append(row)
            continue
        mp = [p for p in peers if p in INT8_PEERS] if m.int8 else peers
        row["load"] = os.getloadavg()[0]
        for t in a.threads:
            res = measure(m, files, mp, t, a)
            row["by_threads"][str(t)] = res
            _log("  " + report.one_line(res, t))
        for name in ("model.tflite", "model.onnx", "model.pte"):
            p = os.path.join(files.dir, name)
            if os.path.exists(p) and not os.path.exists(p + ".err"):
                row["files"][name] = os.path.getsize(p)
        if os.path.exists(os.path.join(files.dir, "model.pte.info")):
            with open(os.path.join(files.dir, "model.pte.info")) as f:
                row["executorch_delegation"] = f.read()
        run["models"].append(row)
    # 3. the third-party files (bench/peers/thirdparty.py)
    if a.set in ("all", "thirdparty"):
        run["thirdparty"] = thirdparty.run_set(a, peers, measure, report.one_line)
    run["load_average"] = {"start": load_before, "end": os.getloadavg()}
    run["wall_s"] = time.perf_counter() - t_start
    out = a.json or os.path.join(a.cache, "results.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(run, f, indent=1)
    text = report.render(run)
    print(text)
    if not a.no_doc and a.set != "all":
        _log(f"--set {a.set}: {a.doc} not written (it holds both sets; --set all writes it)")
    elif not a.no_doc:
        with open(a.doc, "w") as f:
            f.write(text)
        _log(f"wrote {a.doc}")
    _log(f"results in {out}; {run['wall_s'] / 60:.1f} min")
    return 0
