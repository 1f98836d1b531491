"""Latency of .tflite files on wick and on LiteRT (XNNPACK), interleaved in one process so both
see the same machine load.

    .venv/bin/python bench/litert_bench.py build/model-cache/mobilenet_v2-s0-*.tflite [--runs 20]
    WICK_LIBRARY=$PWD/build-perf/libwick.so .venv/bin/python bench/litert_bench.py ... --wick

Same protocol as `wick bench`: seeded random inputs, warm-up runs, then N invokes. Without
--wick only LiteRT runs. With --wick, each round runs one wick invoke then one LiteRT invoke, and
both wall time and the calling thread's CPU time (time.thread_time: not counting time the thread
spent preempted by other processes, which dominates on a shared machine) are reported as medians,
with the wick / LiteRT ratio. Both get the same --threads (default 1: the calling thread only).
With more threads, thread CPU time counts the calling thread only; the process CPU time
(time.process_time: every thread, workers' spinning included) is printed too, and wall time is
the figure to compare when the machine is quiet. wick runs through one ctypes call of
wick_interpreter_invoke, as in the peer benchmark (the runner's invoke() also copies the outputs
into new arrays: ~20-30 us per call).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _litert(path: str, threads: int):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=path, num_threads=threads)
    it.allocate_tensors()
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(d["shape"]).astype(d["dtype"]) for d in it.get_input_details()]
    for d, x in zip(it.get_input_details(), feeds, strict=True):
        it.set_tensor(d["index"], x)
    return it.invoke, feeds


def _wick(path: str, feeds, threads: int):
    import wick

    runtime = wick.load(path, num_threads=threads)
    runner = runtime.signature(None)
    runner(*feeds)  # sets the inputs (and warms up once)
    lib, handle = runner._lib, runner._it

    def invoke():
        if lib.wick_interpreter_invoke(handle):
            runner.invoke()  # raises the interpreter's error

    return runtime, invoke


def _timed(fn) -> tuple[float, float, float]:
    w0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
    fn()
    w1, c1, p1 = time.perf_counter(), time.thread_time(), time.process_time()
    return (w1 - w0) * 1e3, (c1 - c0) * 1e3, (p1 - p0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--wick", action="store_true", help="also run wick, interleaved")
    a = ap.parse_args()
    for m in a.models:
        lite, feeds = _litert(m, a.threads)
        runners = {"litert": lite}
        if a.wick:
            keep, runners["wick"] = _wick(
                m, feeds, a.threads
            )  # keep: the runtime must outlive its runner
        for _ in range(a.warmup):
            for fn in runners.values():
                fn()
        times = {k: [] for k in runners}
        for _ in range(a.runs):
            for k, fn in runners.items():
                times[k].append(_timed(fn))
        print(m)
        med = {}
        for k, t in times.items():
            wall, cpu, proc = ([x[i] for x in t] for i in range(3))
            med[k] = tuple(statistics.median(v) for v in (wall, cpu, proc))
            print(
                f"  {k:7s} wall: min {min(wall):8.3f} median {med[k][0]:8.3f} ms   "
                f"thread CPU: min {min(cpu):8.3f} median {med[k][1]:8.3f} ms"
                + (f"   process CPU: median {med[k][2]:8.3f} ms" if a.threads > 1 else "")
            )
        if a.wick:
            r = [med["wick"][i] / med["litert"][i] for i in range(3)]
            print(
                f"  wick / litert (median): wall {r[0]:.2f}  thread CPU {r[1]:.2f}"
                + (f"  process CPU {r[2]:.2f}" if a.threads > 1 else "")
            )


if __name__ == "__main__":
    main()
