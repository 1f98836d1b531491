"""One peer runtime running one model file in its own process: the measuring end of bench.peers.

    python -m bench.peers.worker PEER MODEL_FILE INPUTS_NPZ THREADS OUTPUTS_NPZ

The harness starts one worker per (peer, model, thread count), each a fresh process, so that
cold start and peak RSS are the peer's own, and so that peers whose packages conflict can run
from their own virtual environment (ExecuTorch from ``.venv-executorch``).  At start the
worker imports its runtime and reports ``{"rss_base_mb"}`` (its RSS after imports).  Then it
serves commands on stdin, one JSON reply per line:

    load     cold start = load + prepare + set inputs + first inference (wall clock); writes
             the first outputs to OUTPUTS_NPZ (the harness compares them with PyTorch eager);
             reply {"cold_ms"}
    run N [L]  L untimed inferences (the lead-in, default 0), then N timed ones, reply
             {"ms": [...], "cpu_ms": [...]}: the wall clock of each (time.perf_counter) and
             the CPU time the whole process used meanwhile (time.process_time: all its
             threads, not counting time it was preempted)
    stats    reply {"peak_rss_mb": ...} (the process's max RSS so far: VmHWM), and write the
             outputs of the last inference to OUTPUTS_NPZ with ".last" before ".npz" (a
             runtime that overwrites its inputs while running shows there)
    quit

Each timed inference is the runtime's invoke on inputs already in place, through the peer's
lowest-overhead Python entry point (no input copy, no output allocation where the API allows):

    wick       ctypes call of wick_interpreter_invoke (the C runtime through the binding's
               handle: one foreign call, ~1 us; outputs stay in the arena)
    litert     Interpreter.invoke() (ai-edge-litert, default XNNPACK delegate)
    ort        InferenceSession.run_with_iobinding() (inputs and outputs bound once)
    executorch Method.execute() of the XNNPACK-lowered .pte (returns output tensors)
    torch      module(*inputs) under torch.inference_mode()

This file imports only the standard library and numpy at module level: it runs in any of the
peers' environments.  The protocol has its own pipe (a dup of the original stdout); fd 1 is
pointed at stderr so that libraries printing to stdout cannot corrupt it.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class WickPeer:
    def __init__(self, path: str, threads: int):
        from wick import runtime

        self._rt = runtime.load(path, num_threads=threads)
        self._runner = self._rt.signature(None)
        self._lib = self._runner._lib
        self._handle = self._runner._it
        self._out = None

    def set_inputs(self, feeds):
        for i, (x, d) in enumerate(zip(feeds, self._runner.inputs, strict=True)):
            self._runner._set_input(i, x.astype(d.dtype, copy=False))

    def run(self):
        st = self._lib.wick_interpreter_invoke(self._handle)
        if st:
            self._runner._fail(st)

    def outputs(self):
        return self._runner.invoke()


class LiteRTPeer:
    def __init__(self, path: str, threads: int):
        from ai_edge_litert.interpreter import Interpreter

        self._it = Interpreter(model_path=path, num_threads=threads)
        self._it.allocate_tensors()
        self.run = self._it.invoke

    def set_inputs(self, feeds):
        for x, d in zip(feeds, self._it.get_input_details(), strict=True):
            self._it.set_tensor(d["index"], x.astype(d["dtype"], copy=False))

    def outputs(self):
        return [self._it.get_tensor(d["index"]) for d in self._it.get_output_details()]


class OrtPeer:
    _TYPES = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32}

    def __init__(self, path: str, threads: int):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle workers must not spin into the next peer's turn in the interleaved loop.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._ort = ort
        self._sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self._bind = self._sess.io_binding()
        for o in self._sess.get_outputs():
            self._bind.bind_output(o.name, "cpu")
        self._keep = []

    def set_inputs(self, feeds):
        self._keep = []
        for x, i in zip(feeds, self._sess.get_inputs(), strict=True):
            arr = np.ascontiguousarray(x.astype(self._TYPES.get(i.type, x.dtype), copy=False))
            self._keep.append(arr)
            self._bind.bind_cpu_input(i.name, arr)

    def run(self):
        self._sess.run_with_iobinding(self._bind)

    def outputs(self):
        return [np.array(o) for o in self._bind.copy_outputs_to_cpu()]


class ExecuTorchPeer:
    def __init__(self, path: str, threads: int):
        import torch  # noqa: F401  (the runtime's tensors)
        from executorch.extension.pybindings import portable_lib
        from executorch.runtime import Runtime

        portable_lib._unsafe_reset_threadpool(threads)
        self._program = Runtime.get().load_program(path)
        self._method = self._program.load_method("forward")
        self._inputs = []
        self._out = None

    def set_inputs(self, feeds):
        import torch

        self._inputs = [torch.from_numpy(np.ascontiguousarray(x)) for x in feeds]

    def run(self):
        self._out = self._method.execute(self._inputs)

    def outputs(self):
        self.run()
        return [o.numpy().copy() for o in self._out]


class TorchPeer:
    def __init__(self, path: str, threads: int):
        import torch

        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)
        self._torch = torch
        self._module = torch.load(path, weights_only=False).eval()
        self._inputs = []
        self._out = None

    def set_inputs(self, feeds):
        self._inputs = [self._torch.from_numpy(np.ascontiguousarray(x)) for x in feeds]

    def run(self):
        with self._torch.inference_mode():
            self._out = self._module(*self._inputs)

    def outputs(self):
        self.run()
        out = self._out if isinstance(self._out, (tuple, list)) else [self._out]
        return [o.numpy().copy() for o in out]


PEERS = {
    "wick": WickPeer,
    "litert": LiteRTPeer,
    "ort": OrtPeer,
    "executorch": ExecuTorchPeer,
    "torch": TorchPeer,
}


def _preimport(peer: str) -> None:
    """Imports the peer's libraries before the cold-start clock starts (import time is not
    part of loading a model); the torch peer also needs the model classes' packages."""
    if peer == "wick":
        from wick import runtime

        runtime._library()
    elif peer == "litert":
        import ai_edge_litert.interpreter  # noqa: F401
    elif peer == "ort":
        import onnxruntime  # noqa: F401
    elif peer == "executorch":
        import executorch.runtime  # noqa: F401
    elif peer == "torch":
        import torch  # noqa: F401

        for mod in ("torchvision", "timm", "transformers"):
            try:
                __import__(mod)
            except ImportError:
                pass


def main(argv: list[str]) -> int:
    peer, model, inputs, threads, outputs = argv
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints go to stderr

    def reply(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    def fail(e: Exception) -> int:  # reported to the harness, which marks the row
        reply({"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
        return 1

    try:
        _preimport(peer)
        with np.load(inputs) as z:
            feeds = [z[f"arr_{i}"] for i in range(len(z.files))]
    except Exception as e:
        return fail(e)
    reply({"rss_base_mb": _rss_mb("VmRSS")})
    p = None
    wall, cpu = time.perf_counter, time.process_time
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "load":
            try:
                t0 = wall()
                p = PEERS[peer](model, int(threads))
                p.set_inputs(feeds)
                p.run()
                cold = (wall() - t0) * 1e3
                np.savez(outputs, *p.outputs())
            except Exception as e:
                return fail(e)
            reply({"cold_ms": cold})
        elif cmd[0] == "run":
            ms, cpu_ms = [], []
            run = p.run
            for _ in range(int(cmd[2]) if len(cmd) > 2 else 0):
                run()
            for _ in range(int(cmd[1])):
                t, c = wall(), cpu()
                run()
                ms.append((wall() - t) * 1e3)
                cpu_ms.append((cpu() - c) * 1e3)
            reply({"ms": ms, "cpu_ms": cpu_ms})
        elif cmd[0] == "stats":
            # VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across execve, so a
            # worker would inherit the harness's peak (torch imported: ~700 MB).
            peak = _rss_mb("VmHWM")
            np.savez(outputs[: -len(".npz")] + ".last.npz", *p.outputs())
            reply({"peak_rss_mb": peak})
        elif cmd[0] == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
