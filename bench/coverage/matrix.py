"""The Tier-1 model coverage matrix (docs/testing.md; issue 3 item 7).

    .venv/bin/python -m bench.coverage.matrix                      # every row, + litert-torch
    .venv/bin/python -m bench.coverage.matrix --subset tv/resnet18 hf/bert timm
    .venv/bin/python -m bench.coverage.matrix --report-only        # rewrite the doc from JSON

Each row runs in a fresh subprocess (isolation; per-row peak RSS from ``wait4``; a timeout and
an RSS cap per row).  The child builds the model (``models.build``: seeded random weights
through ``wick.zoo.realistic_init_``), runs PyTorch eager for the reference, converts with
``wick.convert`` (time; peak RSS beyond the RSS measured right before converting, after
``gc.collect()`` and ``malloc_trim``, via ``/proc/self/clear_refs`` + ``VmHWM``), runs the bytes on wick's C runtime and on LiteRT's
``Interpreter``, compares both against eager, and counts TRANSPOSE operators in the file: all
of them, and the layout ones (NCHW <-> NHWC channel moves, ``is_layout_perm``) apart from the
model's own permutes (ShuffleNet's channel shuffle, attention head split/merge).
Then the same row goes through litert-torch in its own venv (``litert_torch_peer.py``).
torchaudio rows run their child in ``.venv-torchaudio`` (``setup_torchaudio.sh``: torch 2.9.1,
as no torchaudio exists for wick's torch) and have no litert-torch peer.

Bar (docs/testing.md, fp32 whole model): max abs error <= 1e-4 * max(1, max|ref|) on every
output, and for classifiers the same argmax.

Results accumulate in a JSON file (``--json``, default build/coverage.json), written after
every row, so an interrupted run resumes (``--resume``) and the doc can be regenerated.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOL = 1e-4
TRANSPOSE = 39  # BuiltinOperator.TRANSPOSE
PEER_PY = os.path.join(REPO, ".venv-litert-torch", "bin", "python")
# torchaudio rows run under torch 2.9.1 + torchaudio 2.9.1 (no torchaudio for torch 2.14.1):
AUDIO_PY = os.path.join(REPO, ".venv-torchaudio", "bin", "python")
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_RSS_GB = 8.0


# ---------------------------------------------------------------------------------------------
# process memory


def _status_kb(field: str, pid: str = "self") -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_mb() -> float:
    return _status_kb("VmRSS") / 1024


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_mb() -> float:
    return _status_kb("VmHWM") / 1024


def release_heap() -> None:
    """Return free heap pages to the OS (glibc ``malloc_trim``) before measuring the baseline:
    otherwise garbage left by building the model and the eager run sits in the RSS, the
    converter reuses it for free, and a converter that frees its own garbage looks worse."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


# ---------------------------------------------------------------------------------------------
# the .tflite file: operator counts, read by wick's one Python flatbuffer reader
# (wick.graph.tflite_reader: numpy + flatbuffers, no converter, no runtime library)


def _operators(data: bytes) -> list[tuple[int, list | None]]:
    """(builtin code, permutation) of every operator in every subgraph of a .tflite flatbuffer;
    the permutation is read for TRANSPOSE ops with a constant perm, else None."""
    import numpy as np

    if os.path.join(REPO, "python") not in sys.path:
        sys.path.insert(0, os.path.join(REPO, "python"))
    from wick.graph.tflite_reader import read_tflite
    from wick.tflite import schema as S

    data = bytes(data)
    out = []
    for sg in read_tflite(data, stats=False).subgraphs:
        for op in sg.operators:
            code = -1 if op.custom else S.BUILTIN_OPERATORS.get(op.op, -1)
            perm = None
            if code == TRANSPOSE and len(op.inputs) > 1 and 0 <= op.inputs[1] < len(sg.tensors):
                t = sg.tensors[op.inputs[1]]
                if t.constant and t.nbytes and t.nbytes % 4 == 0:
                    raw = data[t.offset : t.offset + t.nbytes]
                    perm = [int(p) for p in np.frombuffer(raw, "<i4")]
            out.append((code, perm))
    return out


def builtin_op_codes(data: bytes) -> list[int]:
    """The builtin code of every operator in every subgraph of a .tflite flatbuffer."""
    return [code for code, _ in _operators(data)]


def is_layout_perm(perm) -> bool:
    """A channel move between channels-first and channels-last (NCHW <-> NHWC, NCL <-> NLC,
    NCDHW <-> NDHWC): what a converter inserts around spatial kernels.  Every other permutation
    (ShuffleNet's channel shuffle, attention head split/merge) is the model's own data movement.
    A model permute that happens to be such a channel move counts as layout too, so this count
    never hides a layout transpose."""
    if perm is None:
        return True  # unknown (non-constant) permutation: count it against the converter
    r = len(perm)
    return r >= 3 and perm in ([0, *range(2, r), 1], [0, r - 1, *range(1, r - 1)])


def transpose_counts(data: bytes) -> tuple[int, int]:
    """(TRANSPOSE operators, those of them that are layout channel moves) in a .tflite file."""
    perms = [perm for code, perm in _operators(data) if code == TRANSPOSE]
    return len(perms), sum(1 for p in perms if is_layout_perm(p))


def count_transposes(data: bytes) -> int:
    return transpose_counts(data)[0]


# ---------------------------------------------------------------------------------------------
# comparisons


def flat_outputs(y) -> list:
    import torch

    if isinstance(y, torch.Tensor):
        return [y]
    if isinstance(y, (list, tuple)):
        return [t for i in y for t in flat_outputs(i)]
    if isinstance(y, dict):
        return [t for v in y.values() for t in flat_outputs(v)]
    if hasattr(y, "to_tuple"):
        return flat_outputs(y.to_tuple())
    return []


def compare(got: list, ref: list, classifier: bool) -> dict:
    """max abs error, the bar and the argmax check of `got` (numpy) against `ref` (numpy)."""
    import numpy as np

    if len(got) != len(ref):
        return {"err": None, "ok": False, "why": f"{len(got)} outputs, expected {len(ref)}"}
    worst_ratio, worst_err, argmax_ok = 0.0, 0.0, None
    for g, r in zip(got, ref, strict=True):
        g = np.asarray(g)
        if tuple(g.shape) != tuple(r.shape):
            return {"err": None, "ok": False, "why": f"shape {g.shape} != {r.shape}"}
        if r.size == 0:
            continue
        if r.dtype == np.bool_ or np.issubdtype(r.dtype, np.integer):
            err = float(np.abs(g.astype(np.int64) - r.astype(np.int64)).max())
            scale = 1.0
        else:
            err = float(np.abs(g.astype(np.float64) - r.astype(np.float64)).max())
            if not np.isfinite(err):
                err = float("inf")
            scale = max(1.0, float(np.abs(r).max()))
        worst_err = max(worst_err, err)
        worst_ratio = max(worst_ratio, err / scale)
    if classifier and ref and ref[0].ndim >= 1 and ref[0].size:
        r0 = ref[0].reshape(-1, ref[0].shape[-1])
        g0 = np.asarray(got[0]).reshape(-1, ref[0].shape[-1])
        argmax_ok = bool((r0.argmax(-1) == g0.argmax(-1)).all())
    ok = worst_ratio <= TOL and argmax_ok is not False
    why = None
    if not ok:
        why = "argmax differs" if worst_ratio <= TOL else f"err/scale {worst_ratio:.2e} > {TOL:g}"
    return {"err": worst_err, "ratio": worst_ratio, "argmax_ok": argmax_ok, "ok": ok, "why": why}


def run_litert(data: bytes, inputs: list, names: list[str] | None) -> list:
    """Run through the serving_default signature, inputs fed by name, outputs in order."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=data, num_threads=1)
    runner = it.get_signature_runner("serving_default")
    if names is None:
        names = list(runner.get_input_details())
    details = runner.get_input_details()
    inputs = [  # a converter may narrow int64 inputs to int32 (litert-torch does)
        np.ascontiguousarray(np.asarray(x).astype(details[n]["dtype"])) if n in details else x
        for n, x in zip(names, inputs, strict=True)
    ]
    out = runner(**dict(zip(names, inputs, strict=True)))
    keys = sorted(out, key=lambda s: int(s.split("_")[-1]) if s.split("_")[-1].isdigit() else 0)
    res = [out[k] for k in keys]
    del runner, it
    return res


# ---------------------------------------------------------------------------------------------
# one row (in-process; the child entry point wraps it)


def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    line = s.splitlines()[0] if s else ""
    return f"{type(e).__name__}: {line}"[:300]


def run_row(row, *, size=None, litert=True, progress=None) -> dict:
    """Runs one matrix row in this process and returns its result dict.  `progress(res)` is
    called after every stage (the child uses it to leave partial results behind)."""
    import numpy as np
    import torch
    from bench.coverage import models

    torch.set_num_threads(1)
    res = {"name": row.name, "tier": row.tier, "stage": "build", "status": "error"}
    note = progress or (lambda r: None)

    def stage(s):
        res["stage"] = s
        note(res)

    stage("build")
    t0 = time.perf_counter()
    module, args = models.build(row, size)
    res["input"] = " ".join("x".join(map(str, a.shape)) for a in args)
    res["params_m"] = round(sum(p.numel() for p in module.parameters()) / 1e6, 2)
    stage("eager")
    with torch.no_grad():
        ref = [t.detach().numpy().copy() for t in flat_outputs(module(*args))]
    res["max_ref"] = max((float(np.abs(r).max()) for r in ref if r.size), default=0.0)
    res["build_s"] = round(time.perf_counter() - t0, 2)
    feed = [a.numpy() for a in args]

    import wick

    stage("convert")
    gc.collect()
    release_heap()
    base = rss_mb()
    exact = reset_peak()
    t0 = time.perf_counter()
    try:
        m = wick.convert(module, args)
    except Exception as e:
        res["convert_s"] = round(time.perf_counter() - t0, 2)
        msg = _first_line(e)
        res["exported"] = not msg.split(": ", 1)[-1].startswith("torch.export failed")
        res["converted"] = False
        res["error"] = msg
        res["error_op"] = getattr(e, "op", None)
        res["status"] = "export-fail" if not res["exported"] else "convert-fail"
        stage("done")
        return res
    res["convert_s"] = round(time.perf_counter() - t0, 2)
    res["convert_rss_mb"] = round(peak_mb() - base, 1)  # inexact (includes eager) if not `exact`
    res["rss_exact"] = exact
    res["base_rss_mb"] = round(base, 1)
    res["exported"] = res["converted"] = True
    data = m.tflite_bytes
    res["file_mb"] = round(len(data) / 2**20, 2)
    codes = builtin_op_codes(data)
    res["n_ops"] = len(codes)
    res["transposes"], res["layout_transposes"] = transpose_counts(data)
    names = [s.name for s in m.inputs]
    feed = [np.ascontiguousarray(x.astype(s.dtype)) for x, s in zip(feed, m.inputs, strict=True)]
    del module
    gc.collect()
    res["status"] = "fail"

    # LiteRT first: should wick's runtime crash the child, LiteRT's result is already saved
    if litert:
        stage("litert")
        t0 = time.perf_counter()
        try:
            got = run_litert(data, feed, names)
            res["litert_s"] = round(time.perf_counter() - t0, 2)
            c = compare(got, ref, row.classifier)
            res["litert_err"], res["litert_ok"] = c["err"], c["ok"]
            res["litert_argmax_ok"] = c.get("argmax_ok")
            if not c["ok"]:
                res["litert_why"] = c["why"]
        except Exception as e:
            res["litert_ok"] = False
            res["litert_why"] = _first_line(e)
        got = None

    stage("wick")
    t0 = time.perf_counter()
    try:
        rt = wick.load(data)
        got = rt(*feed)
        del rt
        res["wick_s"] = round(time.perf_counter() - t0, 2)
        c = compare(got, ref, row.classifier)
        res["wick_err"], res["wick_ok"] = c["err"], c["ok"]
        res["wick_argmax_ok"] = c.get("argmax_ok")
        if not c["ok"]:
            res["wick_why"] = c["why"]
    except Exception as e:
        res["wick_ok"] = False
        res["wick_why"] = _first_line(e)
    gc.collect()
    ok = res.get("wick_ok") and (res.get("litert_ok") or not litert)
    res["status"] = "pass" if ok else "fail"
    if res["max_ref"] == 0.0:  # an all-zero reference proves nothing
        res["status"], res["error"] = "fail", "degenerate reference: every output is 0"
    stage("done")
    return res


# ---------------------------------------------------------------------------------------------
# subprocess driver


def _write_json(path: str, obj) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def _child_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", required=True)
    ap.add_argument("--result", required=True)
    a = ap.parse_args(argv)
    from bench.coverage import models

    row = models.get_row(a.child)
    res = {"name": row.name, "tier": row.tier, "status": "error", "stage": "start"}
    try:
        res = run_row(row, progress=lambda r: _write_json(a.result, r))
    except Exception as e:
        res = json.load(open(a.result)) if os.path.exists(a.result) else res
        res["status"] = "error"
        res["error"] = _first_line(e)
        res["traceback"] = traceback.format_exc()[-2000:]
    _write_json(a.result, res)
    return 0


def run_subprocess(cmd: list[str], result_path: str, timeout: float, max_rss_gb: float, env):
    """Runs `cmd`, polling for timeout and RSS cap; returns (result dict, peak RSS MB, wall s)."""
    if os.path.exists(result_path):
        os.remove(result_path)
    t0 = time.time()
    p = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    killed = None
    stderr_tail = []
    # drain stderr in a thread so a chatty child never blocks
    import threading

    def drain():
        for line in p.stderr:
            stderr_tail.append(line.decode(errors="replace"))
            del stderr_tail[:-40]

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.time() - t0 > timeout and not killed:
            killed = f"timeout after {timeout:.0f} s"
        elif _status_kb("VmRSS", str(p.pid)) > max_rss_gb * 2**20 and not killed:
            killed = f"RSS cap {max_rss_gb:g} GB exceeded"
        if killed:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.5)
    p.returncode = os.waitstatus_to_exitcode(status)
    th.join(timeout=5)
    wall = time.time() - t0
    try:
        res = json.load(open(result_path))
    except (OSError, ValueError):
        res = {"stage": "start"}
    if killed:
        res["status"] = "timeout" if killed.startswith("timeout") else "oom"
        res["error"] = f"{killed} (in stage {res.get('stage')})"
    elif res.get("stage") != "done" and res.get("status") not in ("error",):
        res["status"] = "crash"
        tail = "".join(stderr_tail).strip().splitlines()
        res["error"] = f"exit {p.returncode} in stage {res.get('stage')}: " + (
            tail[-1][:200] if tail else ""
        )
    return res, ru.ru_maxrss / 1024, wall


def _snapshot(dest: str) -> dict:
    """Copies python/wick and libwick.so so a long run sees one version of each while other
    engineers keep editing and rebuilding the shared tree."""
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(
        os.path.join(REPO, "python", "wick"),
        os.path.join(dest, "wick"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    lib = os.path.realpath(os.path.join(REPO, "build", "libwick.so"))
    shutil.copy2(lib, os.path.join(dest, "libwick.so"))
    env = dict(os.environ)
    env["PYTHONPATH"] = dest + os.pathsep + REPO
    env["WICK_LIBRARY"] = os.path.join(dest, "libwick.so")
    return env


def timeout_for(row, base: float) -> float:
    return base + 1.0 * row.gflops  # the biggest rows (ViT-H/14 at 518: ~1000 GFLOPs) get more


def select(rows, subset: list[str] | None):
    if not subset:
        return rows
    out = []
    for r in rows:
        for s in subset:
            if r.name == s or r.tier == s or r.name.startswith(s.rstrip("/") + "/"):
                out.append(r)
                break
            if r.name.split("/", 1)[1] == s:
                out.append(r)
                break
    return out


# ---------------------------------------------------------------------------------------------
# versions and the report


def versions() -> dict:
    from importlib import metadata

    v = {}
    for pkg in ("torch", "torchvision", "transformers", "timm", "tensorflow-cpu", "ai-edge-litert"):
        try:
            v[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            v[pkg] = "not installed"
    try:
        commit = subprocess.run(
            ["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "python/wick"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        v["wick"] = commit + (" + uncommitted converter changes" if dirty else "")
    except OSError:
        v["wick"] = "?"
    if os.path.exists(PEER_PY):
        out = subprocess.run(
            [
                PEER_PY,
                "-c",
                "from importlib import metadata as m; print(m.version('litert-torch'))",
            ],
            capture_output=True,
            text=True,
        )
        v["litert-torch"] = out.stdout.strip() or "broken"
    else:
        v["litert-torch"] = "not installed"
    if os.path.exists(AUDIO_PY):
        out = subprocess.run(
            [
                AUDIO_PY,
                "-c",
                "from importlib import metadata as m; "
                "print(m.version('torch'), m.version('torchaudio'))",
            ],
            capture_output=True,
            text=True,
        )
        t, _, ta = out.stdout.strip().partition(" ")
        v["torchaudio"] = f"{ta} (with torch {t}, `.venv-torchaudio`)" if ta else "broken"
    else:
        v["torchaudio"] = "not installed"
    return v


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = _status_kb("MemTotal") or 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = int(line.split()[1])
    except OSError:
        pass
    return f"{platform.machine()}, {cpu}, {os.cpu_count()} cores (shared), {mem / 2**20:.0f} GiB RAM, Python {platform.python_version()}"


def main(argv=None) -> int:
    from bench.coverage import models, report

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--subset", nargs="*", help="row names, model names or tiers")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "coverage.md"))
    ap.add_argument("--json", default=os.path.join(REPO, "build", "coverage.json"))
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="per row, + 1 s/GFLOP")
    ap.add_argument("--max-rss-gb", type=float, default=DEFAULT_MAX_RSS_GB)
    ap.add_argument("--no-peer", action="store_true", help="skip litert-torch")
    ap.add_argument("--resume", action="store_true", help="keep rows already in --json")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--no-snapshot", action="store_true", help="run the live tree")
    ap.add_argument("--order", choices=("cost", "registry"), default="cost")
    a = ap.parse_args(argv)

    rows = select(models.all_rows(), a.subset)
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    db = {"rows": {}, "meta": {}}
    if (a.resume or a.report_only) and os.path.exists(a.json):
        db = json.load(open(a.json))
    if not a.report_only:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        if a.resume and a.subset and db.get("meta"):
            # a partial re-run into an existing table: keep the full run's header, log this one
            vers = versions()
            meta = db["meta"]
            for k, val in vers.items():
                meta.setdefault("versions", {}).setdefault(k, val)
            meta.setdefault("reruns", []).append(
                {"date": now, "rows": " ".join(a.subset), "wick": vers.get("wick", "?")}
            )
        else:
            db["meta"] = {
                "date": now,
                "machine": machine(),
                "versions": versions(),
                "timeout": f"{a.timeout:.0f} s + 1 s/GFLOP per row",
                "max_rss_gb": a.max_rss_gb,
            }
        env = dict(os.environ)
        if not a.no_snapshot:
            env = _snapshot(os.path.join(REPO, "build", "coverage-snapshot"))
        env.setdefault("OMP_NUM_THREADS", "1")
        env["TF_CPP_MIN_LOG_LEVEL"] = "2"
        peer = not a.no_peer and os.path.exists(PEER_PY)
        todo = sorted(rows, key=lambda r: r.gflops) if a.order == "cost" else rows
        tmp = os.path.join(REPO, "build", "coverage-tmp")
        os.makedirs(tmp, exist_ok=True)
        for k, row in enumerate(todo):
            entry = db["rows"].get(row.name, {})
            need_w = not (a.resume and "wick" in entry)
            need_p = peer and not (a.resume and "peer" in entry)
            if not (need_w or need_p):
                continue
            tmo = timeout_for(row, a.timeout)
            rp = os.path.join(tmp, row.name.replace("/", "__") + ".json")
            audio = row.tier == "torchaudio"
            need_p = need_p and not audio  # no torchaudio beside litert-torch's torch
            if need_w and audio and not os.path.exists(AUDIO_PY):
                entry["wick"] = {
                    "status": "not set up",
                    "error": "no .venv-torchaudio: run bash bench/coverage/setup_torchaudio.sh",
                }
                need_w = False
            if need_w:
                py = AUDIO_PY if audio else sys.executable
                cmd = [py, "-m", "bench.coverage.matrix", "--child", row.name]
                res, peak, wall = run_subprocess(cmd + ["--result", rp], rp, tmo, a.max_rss_gb, env)
                res["peak_rss_mb"], res["wall_s"] = round(peak, 1), round(wall, 1)
                entry["wick"] = res
                print(
                    f"[{k + 1}/{len(todo)}] {row.name:34s} wick  {res.get('status'):12s} "
                    f"{wall:7.1f} s  {res.get('error') or res.get('wick_why') or res.get('litert_why') or ''}",
                    flush=True,
                )
            if need_p:
                penv = {k2: v for k2, v in env.items() if k2 not in ("PYTHONPATH", "WICK_LIBRARY")}
                penv["PYTHONPATH"] = REPO
                cmd = [PEER_PY, os.path.join(REPO, "bench", "coverage", "litert_torch_peer.py")]
                res, peak, wall = run_subprocess(
                    cmd + [row.name, "--result", rp], rp, tmo, a.max_rss_gb, penv
                )
                res["peak_rss_mb"], res["wall_s"] = round(peak, 1), round(wall, 1)
                entry["peer"] = res
                print(
                    f"[{k + 1}/{len(todo)}] {row.name:34s} peer  {res.get('status'):12s} "
                    f"{wall:7.1f} s  {res.get('error') or res.get('why') or ''}",
                    flush=True,
                )
            db["rows"][row.name] = entry
            _write_json(a.json, db)
            report.write(db, models.all_rows(), a.out)
    report.write(db, models.all_rows(), a.out)
    print(f"wrote {a.out} and {a.json}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(_child_main(sys.argv[1:]))
    sys.exit(main())
