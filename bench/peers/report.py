"""Renders a bench.peers run (the results JSON) as docs/performance.md."""

from __future__ import annotations

import json
import math
import sys

ORDER = ("wick", "litert", "ort", "executorch", "torch")
NAMES = {
    "wick": "wick",
    "litert": "LiteRT",
    "ort": "ONNX Runtime",
    "executorch": "ExecuTorch",
    "torch": "PyTorch eager",
}


def _ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def one_line(res: dict, threads: int) -> str:
    parts = []
    for p in ORDER:
        e = res["peers"].get(p)
        if e is None:
            continue
        parts.append(f"{p} {_ms(e['median_ms'])}" if "median_ms" in e else f"{p} error")
    ratio = _ratio(res)
    tail = f"  wick/LiteRT {ratio:.2f}" if ratio else ""
    return f"{threads}T: " + ", ".join(parts) + " ms" + tail


def _ratio(res: dict, peer: str = "litert", key: str = "median_ms"):
    w, p = res["peers"].get("wick", {}), res["peers"].get(peer, {})
    if key in w and key in p and p[key] > 0:
        return w[key] / p[key]
    return None


class _Notes:
    """Footnotes for errors: the same message gets the same number."""

    def __init__(self):
        self.items: list[str] = []

    def ref(self, msg: str) -> str:
        msg = " ".join(msg.split())
        if msg not in self.items:
            self.items.append(msg)
        return f"[{self.items.index(msg) + 1}]"


def _cell(res: dict, peer: str, notes: _Notes, fmt) -> str:
    e = res["peers"].get(peer)
    if e is None:
        return "—"
    if "error" in e and "median_ms" not in e:
        return "error " + notes.ref(e["error"])
    return fmt(e)


def _lead_in_text(lead_in: int) -> str:
    """How a peer's turn in a round is made (the harness's --lead-in)."""
    if not lead_in:
        return "one timed inference, right after the previous peer's turn"
    runs = "one untimed inference" if lead_in == 1 else f"{lead_in} untimed inferences"
    return (
        f"{runs} and then one timed one, so that every timed run follows the same peer's own "
        "run (the steady state that `wick bench` and LiteRT's benchmark tool measure) and not "
        "another peer's turn, whose length depends on that peer and file (see bench/README.md)"
    )


def render(run: dict) -> str:
    peers = [p for p in ORDER if p in run["peers"] or p in run["unavailable"]]
    notes = _Notes()
    m, v = run["machine"], run["versions"]
    la = run.get("load_average", {})
    out = [
        "# Performance: wick against its peers",
        "",
        "Written by `make bench` (`.venv/bin/python -m bench.peers`, see bench/README.md) — do "
        "not edit by hand, run it again.",
        "",
        f"* **Date**: {run['date']}; command: `{run['command'].strip()}`; "
        f"{run.get('wall_s', 0) / 60:.1f} min.",
        f"* **Load average** (1/5/15 min) at the start {_la(la.get('start'))}, at the end "
        f"{_la(la.get('end'))} on {m.get('cores')} cores"
        + (
            f" (1-min average when each model started: {_load_range(run)})"
            if _load_range(run)
            else ""
        )
        + ": "
        + (
            "**the machine was shared and busy: the absolute numbers are noisy; the ratios, "
            "measured interleaved in the same run, much less so**."
            if la
            and max([la["start"][0], la["end"][0]] + [r.get("load", 0) for r in run["models"]])
            > 0.5 * (m.get("cores") or 1)
            else "quiet."
        ),
        f"* **Machine**: {m.get('cpu')}, {m.get('cores')} logical cores, "
        f"{m.get('memory_gib', '?')} GiB, Linux {m.get('kernel')}; ISA: {m.get('isa')}.",
        "* **Versions**: " + "; ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "",
        "## How it is measured",
        "",
        "* One fresh worker process per peer, model and thread count (bench/peers/worker.py). "
        "**Cold start** is measured in it: load + prepare + first inference, wall clock, "
        "library imports excluded; the table gives the median over "
        f"{run['protocol'].get('cold_samples', 1)} such fresh processes per peer (at the first "
        "thread count; the extra ones only load, one at a time, after the timed runs). **Peak RSS** is that process's max RSS after all its runs; "
        "in brackets the part above its RSS after imports (a Python process with torch "
        "imported starts near 0.5–1 GB, one with only numpy and the runtime near 40 MB).",
        "* **Latency**: warm-up, then rounds in which every peer runs "
        + _lead_in_text(run["protocol"].get("lead_in", 0))
        + ", in an order rotated every round with a "
        f"{run['protocol']['gap_ms']:g} ms idle gap between peers, so background load hits all "
        "peers alike. Each time is the **wall clock** of one invoke on inputs already in place "
        "(time.perf_counter around the peer's lowest-overhead entry point: wick through one "
        "ctypes call of `wick_interpreter_invoke`, LiteRT `Interpreter.invoke`, ONNX Runtime "
        "`run_with_iobinding`, ExecuTorch `Method.execute`, PyTorch `module(x)` under "
        "`inference_mode`). Tables give the **median / p90**; rounds per model: "
        + (
            f"{run['protocol']['runs']} fixed."
            if run["protocol"]["runs"]
            else f"as many as fit {run['protocol']['budget_s']:g} s "
            f"(at least {run['protocol']['min_runs']}, at most {run['protocol']['max_runs']})."
        ),
        "* **Same files**: wick and LiteRT run the same .tflite, written by wick's converter "
        "from the PyTorch model (default options: NCHW input, as the PyTorch model takes it); "
        "ONNX Runtime runs `torch.onnx.export(model)` (dynamo exporter, CPU provider, all graph "
        "optimizations); ExecuTorch runs the same `torch.export` program lowered with "
        "`XnnpackPartitioner`; PyTorch eager runs the module itself. Models have seeded random "
        "weights with realistic normalisation statistics (`wick.zoo.realistic_init_`), batch 1.",
        "* **int8** rows: the model quantized with PT2E (torchao's XNNPACK quantizer config: "
        "int8 per-tensor activations, per-channel symmetric weights); wick and LiteRT (XNNPACK "
        "QS8) run wick's full-integer .tflite; ONNX Runtime and ExecuTorch run their own export "
        "of the same quantized program; the reference is the PT2E program in PyTorch "
        "(float arithmetic between quantize/dequantize steps), so a few output quantization "
        "steps of difference are expected.",
        "* **Threads**: each peer's own option (wick and LiteRT `num_threads`, ORT "
        "`intra_op_num_threads` with spinning off, ExecuTorch's XNNPACK thread pool size, "
        "`torch.set_num_threads` with `OMP_WAIT_POLICY=PASSIVE`).",
        "* **Third-party set** (bench/peers/thirdparty.py): .tflite files others made — the "
        "Keras applications converted by TensorFlow's converter (fp32, dynamic-range int8 "
        "weights, fp16 weights, full int8; random weights) and the .tflite files of "
        "mediapipe 0.10.21 — from the corpus cache of tests/corpus (the files not built there "
        "are listed at the end). wick and LiteRT run the same file on the same seeded inputs "
        "by the method above; the output check is wick against LiteRT. A file's kind comes "
        "from its tensors: int8 (integer inputs), dynamic (int8 weights, float activations), "
        "fp16 (float16 weights), fp32. Every file where wick is slower than LiteRT gets a "
        "per-op profile (each operator's fastest of "
        f"{run.get('profile_runs', 20)} profiled runs, with the kernel it runs; `!` marks "
        "the reference and generic kernels).",
        "",
    ]
    out += _summary(run)
    if run["models"]:
        out += ["# The wick-converted set", ""]
        for t in run["threads"]:
            out += _latency_table(run, peers, str(t), notes)
        out += _cold_rss_tables(run, peers, notes)
        out += _check_table(run, peers, notes)
    dele = [(r["name"], r.get("executorch_delegation")) for r in run["models"]]
    if any(d for _, d in dele):
        out += ["## ExecuTorch delegation (XNNPACK partitioner)", ""]
        out += [f"* {name}: {d}" for name, d in dele if d]
        out.append("")
    if "thirdparty" in run:
        out += _thirdparty(run, notes)
    if run["unavailable"]:
        out += ["## Peers that did not run", ""]
        out += [f"* {NAMES[p]}: {why}" for p, why in run["unavailable"].items()]
        out.append("")
    if notes.items:
        out += ["## Errors", ""]
        out += [f"{i + 1}. {msg}" for i, msg in enumerate(notes.items)]
        out.append("")
    return "\n".join(out)


def _load_range(run) -> str:
    xs = [row["load"] for row in run["models"] if "load" in row]
    return f"{min(xs):.1f}–{max(xs):.1f}" if xs else ""


def _la(x) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _latency_table(run, peers, t, notes) -> list[str]:
    n = int(t)
    head = ["model"] + [NAMES[p] for p in peers] + ["wick / LiteRT", "(CPU time)"]
    out = [
        f"## Latency, {n} thread{'s' if n > 1 else ''} (ms, median / p90 of wall time)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    ratios = {"fp32": [], "int8": []}
    cpu_ratios = {"fp32": [], "int8": []}
    vs_peer = {p: {"fp32": [], "int8": []} for p in peers}
    for row in run["models"]:
        res = row["by_threads"].get(t)
        if res is None:
            err = row.get("error")
            out.append(f"| {row['name']} | " + " | ".join(
                [f"error {notes.ref(err)}" if err else "—"] * (len(head) - 1)) + " |")  # fmt: skip
            continue
        kind = "int8" if row["int8"] else "fp32"
        cells = [row["name"]]
        for p in peers:

            def fmt(e):
                return f"{_ms(e['median_ms'])} / {_ms(e['p90_ms'])}"

            cells.append(_cell(res, p, notes, fmt))
            r = _ratio(res, p)
            if r and p != "wick":
                vs_peer[p][kind].append(r)
        r = _ratio(res)
        cells.append(f"**{r:.2f}**" if r else "—")
        if r:
            ratios[kind].append(r)
        rc = _ratio(res, key="cpu_median_ms")
        cells.append(f"({rc:.2f})" if rc else "—")
        if rc:
            cpu_ratios[kind].append(rc)
        out.append("| " + " | ".join(cells) + " |")
    for kind in ("fp32", "int8"):
        if not ratios[kind] and not any(vs_peer[p][kind] for p in peers):
            continue
        cells = [f"*geomean wick / peer, {kind}*", ""]
        for p in peers[1:]:
            xs = vs_peer[p][kind]
            cells.append(f"*{_geomean(xs):.2f}* ({len(xs)})" if xs else "—")
        g = _geomean(ratios[kind])
        cells.append(f"**{g:.2f}** ({len(ratios[kind])})" if ratios[kind] else "—")
        gc = _geomean(cpu_ratios[kind])
        cells.append(f"({gc:.2f})" if cpu_ratios[kind] else "—")
        out.append("| " + " | ".join(cells) + " |")
    out += [
        "",
        "Ratios are of medians; below 1 wick is faster. The geomean rows give wick / that peer "
        "over the models both ran (count in brackets). *(CPU time)*: the same ratio of the "
        "median CPU time the worker process used per inference (all its threads; time spent "
        "preempted by other processes not counted) — on a loaded machine a long inference is "
        "preempted more often than a short one, so the wall-clock ratio drifts away from 1 "
        "with the load, and this column is the steadier one"
        + (
            "; at 2 threads it counts both threads' work, including a thread pool's spinning."
            if n > 1
            else "."
        ),
        "",
    ]
    return out


def _cold_rss_tables(run, peers, notes) -> list[str]:
    t = str(run["threads"][0])
    out = []
    for title, fmt in (
        ("Cold start (ms: load + prepare + first inference, median of fresh processes)", _cold),
        ("Peak RSS (MB, fresh process; in brackets: above the RSS after imports)", _rss),
    ):
        head = ["model"] + [NAMES[p] for p in peers]
        out += [
            f"## {title}, {t} thread{'s' if t != '1' else ''}",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for row in run["models"]:
            res = row["by_threads"].get(t)
            if res is None:
                continue
            out.append(
                "| " + " | ".join([row["name"]] + [_cell(res, p, notes, fmt) for p in peers]) + " |"
            )
        out.append("")
    return out


def _cold(e) -> str:
    return _ms(e["cold_ms"]) if "cold_ms" in e else "—"


def _rss(e) -> str:
    if "peak_rss_mb" not in e:
        return "—"
    return f"{e['peak_rss_mb']:.0f} ({e['peak_rss_mb'] - e['rss_base_mb']:.0f})"


def _check_table(run, peers, notes) -> list[str]:
    t = str(run["threads"][0])
    shown = [p for p in peers if p != "torch"]
    head = ["model", "max \\|eager\\|"] + [NAMES[p] for p in shown]
    out = [
        "## Output check (max \\|peer − PyTorch eager\\| on the benchmark input)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for row in run["models"]:
        res = row["by_threads"].get(t)
        if res is None:
            continue
        cells = [row["name"], f"{res['ref_max_abs']:.3g}"]
        for p in shown:
            cells.append(_cell(res, p, notes, _diff))
        out.append("| " + " | ".join(cells) + " |")
    out += [
        "",
        "The worst of each peer's first inference and its last (after the timed runs, on the same inputs). PyTorch eager's own column is its run in a "
        "worker process, 0 up to thread-count effects, so it is not shown.",
        "",
    ]
    return out


def _diff(e) -> str:
    d = e.get("max_abs_diff")
    if d is None:
        return "—"
    return "**mismatch (shape/count)**" if math.isinf(d) else f"{d:.2g}"


if __name__ == "__main__":  # re-render a results file: python -m bench.peers.report RESULTS.json
    with open(sys.argv[1]) as f:
        print(render(json.load(f)))


# ---------------------------------------------------------------------------------------------
# both sets: the summary; the third-party set


KINDS = ("fp32", "fp16", "dynamic", "int8")


def _tp_ratios(run, t: str, key: str = "median_ms") -> dict:
    """kind -> wick / LiteRT ratios of the third-party files at thread count t."""
    out = {}
    for row in run.get("thirdparty", {}).get("files", []):
        res = row["by_threads"].get(t)
        r = _ratio(res, key=key) if res else None
        if r:
            out.setdefault(row["kind"], []).append(r)
    return out


def _summary(run) -> list[str]:
    ts = [str(t) for t in run["threads"]]
    head = ["set", "kind"] + [f"{t} thread{'s' if t != '1' else ''}" for t in ts] + ["files"]
    rows = []
    if run["models"]:
        for kind in ("fp32", "int8"):
            cells, n = [], 0
            for t in ts:
                xs = [
                    r
                    for row in run["models"]
                    if row["int8"] == (kind == "int8") and row["by_threads"].get(t)
                    for r in [_ratio(row["by_threads"][t])]
                    if r
                ]
                n = max(n, len(xs))
                cells.append(f"**{_geomean(xs):.2f}**" if xs else "—")
            if n:
                rows.append(["wick-converted", kind, *cells, str(n)])
    if "thirdparty" in run:
        per_t = {t: _tp_ratios(run, t) for t in ts}
        for kind in KINDS:
            if not any(kind in per_t[t] for t in ts):
                continue
            cells = [f"**{_geomean(per_t[t][kind]):.2f}**" if kind in per_t[t] else "—" for t in ts]
            n = max(len(per_t[t].get(kind, [])) for t in ts)
            rows.append(["third-party", kind, *cells, str(n)])
    if not rows:
        return []
    out = [
        "## Summary: geometric mean of wick / LiteRT (below 1: wick is faster)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    out.append("")
    return out


def _tp_ms(e) -> str:
    return f"{_ms(e['median_ms'])} / {_ms(e['p90_ms'])}"


def _thirdparty(run, notes) -> list[str]:
    tp = run["thirdparty"]
    files = tp["files"]
    out = ["# The third-party set", ""]
    if not files:  # only the MiniLM rows were asked for (--files MiniLM)
        return out + _minilm(run, notes)
    for t in [str(t) for t in run["threads"]]:
        n = int(t)
        head = ["file", "source", "kind", "wick", "LiteRT", "wick / LiteRT", "(CPU time)"]
        out += [
            f"## Third-party files: latency, {n} thread{'s' if n > 1 else ''} "
            "(ms, median / p90 of wall time)",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for row in files:
            res = row["by_threads"].get(t)
            if res is None:
                err = row.get("error")
                cells = [f"error {notes.ref(err)}" if err else "—"] * 4
                out.append(f"| {row['name']} | {row['source']} | {row.get('kind', '—')} | "
                           + " | ".join(cells) + " |")  # fmt: skip
                continue
            r, rc = _ratio(res), _ratio(res, key="cpu_median_ms")
            cells = [
                row["name"],
                row["source"],
                row["kind"],
                _cell(res, "wick", notes, _tp_ms),
                _cell(res, "litert", notes, _tp_ms),
                (f"**{r:.2f}**" if r <= 1.0 else f"**{r:.2f}** ⚠") if r else "—",
                f"({rc:.2f})" if rc else "—",
            ]
            out.append("| " + " | ".join(cells) + " |")
        wall, cpu = _tp_ratios(run, t), _tp_ratios(run, t, "cpu_median_ms")
        for kind in KINDS:
            if kind in wall:
                out.append(
                    f"| *geomean, {kind}* | | | | | **{_geomean(wall[kind]):.2f}** "
                    f"({len(wall[kind])}) | ({_geomean(cpu.get(kind, [])):.2f}) |"
                )
        everything = [r for xs in wall.values() for r in xs]
        if everything:
            above = sum(r > 1.0 for r in everything)
            out.append(f"| *geomean, all* | | | | | **{_geomean(everything):.2f}** "
                       f"({len(everything)}; {above} above 1.0) | |")  # fmt: skip
        out += ["", "⚠: wick is slower than LiteRT on this file (its profile is below).", ""]
    t = str(run["threads"][0])
    head = ["file", "wick cold", "LiteRT cold", "wick peak RSS", "LiteRT peak RSS",
            "max \\|wick − LiteRT\\|"]  # fmt: skip
    out += [
        f"## Third-party files: cold start (ms) and peak RSS (MB; in brackets above the RSS "
        f"after imports), {t} thread{'s' if t != '1' else ''}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for row in files:
        res = row["by_threads"].get(t)
        if res is None:
            continue
        cells = [row["name"]]
        cells += [_cell(res, p, notes, _cold) for p in ("wick", "litert")]
        cells += [_cell(res, p, notes, _rss) for p in ("wick", "litert")]
        cells.append(_cell(res, "wick", notes, _diff))
        out.append("| " + " | ".join(cells) + " |")
    out += [
        "",
        "The output check compares wick's first and last outputs with LiteRT's default "
        "interpreter on the same inputs (in the quantized files' integer units for int8 "
        "outputs).",
        "",
    ]
    profiled = [(row, t, p) for row in files for t, p in row.get("profiles", {}).items()]
    if profiled:
        out += [
            "## Third-party files where wick is slower: where the time goes",
            "",
            "Per file and thread count: the share of wick's per-op time on reference or "
            "generic kernels, and the operators summed by op and kernel, largest first (the "
            "whole per-op tables are printed by the run and kept in results.json).",
            "",
        ]
        from .thirdparty import by_op

        for row, t, p in profiled:
            if "error" in p:
                out.append(f"* **{row['name']}**, {t} thread(s): profile failed: {p['error']}")
                continue
            ops = p["ops"]
            total = sum(o["ns"] for o in ops) or 1
            slow = sum(o["ns"] for o in ops if o["kind"] in ("reference", "generic"))
            parts = [
                f"{o['op']} ×{o['count']} {o['us'] / 1e3:.2f} ms ({100 * o['share']:.0f}%, "
                + ("! " if o["kind"] in ("reference", "generic") else "")
                + o["kind"]
                + (f" {o['path']}" if o["path"] else "")
                + ")"
                for o in by_op(ops)
            ]
            out.append(
                f"* **{row['name']}**, {t} thread(s), wick / LiteRT {p['ratio']:.2f}: "
                f"{total / 1e6:.2f} ms per-op sum, {100 * slow / total:.0f}% on slow paths; "
                + "; ".join(parts)
            )
        out.append("")
    out += _minilm(run, notes)
    if tp.get("missing"):
        out += [
            "## Third-party corpus files not in the cache (not measured)",
            "",
            f"{len(tp['missing'])} files (`python -m tests.corpus --all` builds them): "
            + ", ".join(tp["missing"])
            + ".",
            "",
        ]
    return out


def _minilm(run, notes) -> list[str]:
    """Issue 17's speed bar: the int8 MiniLM against its fp32 file on wick (at least 1.5x faster)
    and against LiteRT on the same int8 file (faster), per thread count (thirdparty.MINILM)."""
    rows = {r["name"].rsplit("_", 1)[-1]: r for r in run["thirdparty"].get("minilm", [])}
    if not rows:
        return []
    head = ["threads", "wick fp32", "wick int8", "fp32 / int8 on wick (bar ≥ 1.5)", "LiteRT int8",
            "LiteRT / wick on int8 (bar > 1)", "LiteRT fp32"]  # fmt: skip
    out = [
        "## all-MiniLM-L6-v2 int8 (issue 17): against its fp32 file and LiteRT",
        "",
        "wick.quantize's default plan (int8, 16x8 layers where the accuracy target needs them; "
        "real weights, batch 4 x 32 tokens, tokenized sentences) and the fp32 file, both made "
        "by wick and kept out of the third-party rows above (ms, median / p90 of wall time).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]

    def med(form, t, peer):
        res = rows.get(form, {}).get("by_threads", {}).get(t) or {}
        return res.get("peers", {}).get(peer, {}).get("median_ms")

    for t in [str(t) for t in run["threads"]]:
        cells = [t]
        for form, peer in (("fp32", "wick"), ("int8", "wick")):
            res = rows.get(form, {}).get("by_threads", {}).get(t)
            cells.append(_cell(res, peer, notes, _tp_ms) if res else "—")
        wf, wi = med("fp32", t, "wick"), med("int8", t, "wick")
        cells.append(f"**{wf / wi:.2f}**" if wf and wi else "—")
        res = rows.get("int8", {}).get("by_threads", {}).get(t)
        cells.append(_cell(res, "litert", notes, _tp_ms) if res else "—")
        li = med("int8", t, "litert")
        cells.append(f"**{li / wi:.2f}**" if li and wi else "—")
        res = rows.get("fp32", {}).get("by_threads", {}).get(t)
        cells.append(_cell(res, "litert", notes, _tp_ms) if res else "—")
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]
