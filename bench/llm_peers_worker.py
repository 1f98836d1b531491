"""One LLM runtime in its own process: the measuring end of bench/llm_peers.py.

    PYTHON bench/llm_peers_worker.py RUNTIME MODEL_FILE PROMPT_JSON THREADS

RUNTIME is one of

    wick      the C generator (include/wick/llm.h: wick_llm_create / wick_llm_append /
              wick_llm_logits) through ctypes on the Python binding's libwick: one foreign call
              per prompt and per new token, the cache kept in the C runtime
    llamacpp  llama.cpp's C API (llama_decode on llama_batch_get_one, llama_get_logits_ith)
              through llama-cpp-python's ctypes layer, run with the python of its own venv
    litert    stock LiteRT (ai-edge-litert, default XNNPACK delegate) on wick's file, through
              its signature runners (prefill_<n>, decode), which share the KV cache variables
    torch     PyTorch eager: the HuggingFace model (the directory bench/llm_peers.py saved)
              with its DynamicCache, logits_to_keep=1

The worker imports only the standard library and numpy at module level (it runs in the
llama.cpp venv too).  It reports {"rss_base_mb"} after importing its runtime, then serves
commands on stdin, one JSON reply per line on its own pipe (fd 1 points at stderr, so that
libraries printing to stdout cannot corrupt it):

    load           open the model and make the context / interpreters: {"load_ms", "info"}
    prefill N      empty the cache, write the prompt's first N tokens and pick the first new
                   token greedily (argmax of the last logits): time to first token, wall and
                   process CPU (all threads): {"ms", "cpu_ms", "token"}
    decode P M     empty the cache, write P prompt tokens (not timed), then M greedy steps (pick
                   the argmax, append it): {"ms", "cpu_ms"} of the M steps, "tokens": the first
                   new token (the prompt's) and the M picked after it
    stats          {"peak_rss_mb"}: the process's VmHWM (getrusage's ru_maxrss would carry the
                   parent's peak across execve)
    quit

Every runtime does the same work per command: the same prompt ids, one argmax over the
vocabulary per new token, end-of-sequence ignored.
"""

from __future__ import annotations

import ctypes
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


class WickRuntime:
    """wick's C generator: one wick_llm over the file, all signatures sharing one cache."""

    def __init__(self, path: str, threads: int):
        from wick import runtime

        lib = runtime._library()
        P, S = ctypes.c_void_p, ctypes.c_size_t

        class Options(ctypes.Structure):
            _fields_ = [("struct_size", S), ("num_threads", ctypes.c_int)]

        sigs = {
            "wick_llm_create": (
                [P, ctypes.POINTER(Options), ctypes.POINTER(runtime._ErrorInfo), ctypes.POINTER(P)],
                ctypes.c_int,
            ),
            "wick_llm_destroy": ([P], None),
            "wick_llm_last_error": ([P], ctypes.c_char_p),
            "wick_llm_vocab_size": ([P], S),
            "wick_llm_reset": ([P], ctypes.c_int),
            "wick_llm_append": ([P, ctypes.POINTER(ctypes.c_int32), S], ctypes.c_int),
            "wick_llm_logits": ([P], ctypes.POINTER(ctypes.c_float)),
        }
        for name, (args, res) in sigs.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = res
        err = runtime._ErrorInfo()
        self._model = ctypes.c_void_p()
        st = lib.wick_model_load_file(os.fsencode(path), None, err, ctypes.byref(self._model))
        if st:
            raise RuntimeError(f"wick_model_load_file: {err.message.decode()}")
        opts = Options(ctypes.sizeof(Options), threads)
        self._llm = ctypes.c_void_p()
        st = lib.wick_llm_create(self._model, ctypes.byref(opts), err, ctypes.byref(self._llm))
        if st:
            raise RuntimeError(f"wick_llm_create: {err.message.decode()}")
        self._lib = lib
        self.vocab = lib.wick_llm_vocab_size(self._llm)
        self.info = {"library": runtime.library_path().as_posix()}

    def reset(self) -> None:
        if self._lib.wick_llm_reset(self._llm):
            raise RuntimeError(self._lib.wick_llm_last_error(self._llm).decode())

    def append(self, ids: np.ndarray) -> int:
        ptr = ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        if self._lib.wick_llm_append(self._llm, ptr, len(ids)):
            raise RuntimeError(self._lib.wick_llm_last_error(self._llm).decode())
        logits = np.ctypeslib.as_array(self._lib.wick_llm_logits(self._llm), (self.vocab,))
        return int(logits.argmax())


class LlamaCppRuntime:
    """llama.cpp through llama-cpp-python's low-level ctypes API (no Python-side sampler or
    score buffers): one llama_decode per prompt (n_batch = n_ubatch = n_ctx) and per token."""

    def __init__(self, path: str, threads: int, n_ctx: int):
        import llama_cpp as L

        @ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
        def quiet(level, text, user):
            pass

        self._quiet = quiet  # kept alive: llama.cpp holds the pointer
        L.llama_log_set(quiet, None)
        L.llama_backend_init()
        mp = L.llama_model_default_params()
        self._model = L.llama_model_load_from_file(path.encode(), mp)
        if not self._model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        cp = L.llama_context_default_params()
        cp.n_ctx = cp.n_batch = cp.n_ubatch = n_ctx
        cp.n_threads = cp.n_threads_batch = threads
        cp.no_perf = True
        self._ctx = L.llama_init_from_model(self._model, cp)
        if not self._ctx:
            raise RuntimeError("llama.cpp cannot make a context")
        self._L = L
        self._mem = L.llama_get_memory(self._ctx)
        self.vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(self._model))
        desc = ctypes.create_string_buffer(256)
        L.llama_model_desc(self._model, desc, len(desc))
        self.info = {
            "version": getattr(L, "__version__", "?"),
            "model": desc.value.decode(),
            "model_bytes": int(L.llama_model_size(self._model)),
            "system": L.llama_print_system_info().decode().strip(),
            "flash_attn_type": int(cp.flash_attn_type),
        }

    def reset(self) -> None:
        self._L.llama_memory_clear(self._mem, True)

    def append(self, ids: np.ndarray) -> int:
        L = self._L
        ptr = ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        rc = L.llama_decode(self._ctx, L.llama_batch_get_one(ptr, len(ids)))
        if rc:
            raise RuntimeError(f"llama_decode returned {rc}")
        logits = np.ctypeslib.as_array(L.llama_get_logits_ith(self._ctx, -1), (self.vocab,))
        return int(logits.argmax())


class LiteRTRuntime:
    """Stock LiteRT on wick's file: prefill_<n> and decode signature runners of one
    interpreter (they share its variables, the KV cache).  The cache is not zeroed between
    commands: each command writes its positions from 0, and a position attends only to the
    positions up to itself."""

    def __init__(self, path: str, threads: int):
        from ai_edge_litert.interpreter import Interpreter

        self._it = Interpreter(model_path=path, num_threads=threads)
        self._runners = {k: self._it.get_signature_runner(k) for k in self._it.get_signature_list()}
        self._pos = 0
        self.info = {}

    def reset(self) -> None:
        self._pos = 0

    def append(self, ids: np.ndarray) -> int:
        key = "decode" if len(ids) == 1 else f"prefill_{len(ids)}"
        out = self._runners[key](
            tokens=ids.reshape(1, -1), input_pos=np.asarray([self._pos], np.int32)
        )
        self._pos += len(ids)
        return int(out["logits"][0].argmax())


class TorchRuntime:
    """PyTorch eager: the HuggingFace model's own forward with a DynamicCache."""

    def __init__(self, path: str, threads: int):
        import torch
        from transformers import AutoModelForCausalLM, DynamicCache

        torch.set_num_threads(threads)
        self._torch = torch
        self._cache_type = DynamicCache
        self._model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        self._cache = None
        self.info = {"torch": torch.__version__}

    def reset(self) -> None:
        self._cache = self._cache_type()

    def append(self, ids: np.ndarray) -> int:
        torch = self._torch
        with torch.inference_mode():
            out = self._model(
                input_ids=torch.from_numpy(ids.astype(np.int64)).reshape(1, -1),
                past_key_values=self._cache,
                use_cache=True,
                logits_to_keep=1,
            )
        self._cache = out.past_key_values
        return int(out.logits[0, -1].argmax())


def _preimport(runtime: str) -> None:
    """The runtime's packages, imported before the load is timed."""
    if runtime == "wick":
        from wick import runtime as rt

        rt._library()
    elif runtime == "llamacpp":
        import llama_cpp  # noqa: F401
    elif runtime == "litert":
        import ai_edge_litert.interpreter  # noqa: F401
    elif runtime == "torch":
        import torch  # noqa: F401
        import transformers  # noqa: F401


def main(argv: list[str]) -> int:
    runtime, path, prompt_json, threads = argv[0], argv[1], argv[2], int(argv[3])
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def reply(obj) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        with open(prompt_json) as f:
            meta = json.load(f)
        prompt = np.asarray(meta["ids"], np.int32)
        _preimport(runtime)
    except Exception as e:
        reply({"error": f"{type(e).__name__}: {e}"})
        return 1
    reply({"rss_base_mb": _rss_mb("VmRSS")})
    rt = None
    wall, cpu = time.perf_counter, time.process_time
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == "load":
                t = wall()
                if runtime == "wick":
                    rt = WickRuntime(path, threads)
                elif runtime == "llamacpp":
                    rt = LlamaCppRuntime(path, threads, int(meta["n_ctx"]))
                elif runtime == "litert":
                    rt = LiteRTRuntime(path, threads)
                elif runtime == "torch":
                    rt = TorchRuntime(path, threads)
                else:
                    raise ValueError(f"unknown runtime {runtime!r}")
                reply({"load_ms": (wall() - t) * 1e3, "info": rt.info})
            elif cmd[0] == "prefill":
                n = int(cmd[1])
                rt.reset()
                t, c = wall(), cpu()
                token = rt.append(prompt[:n])
                reply({"ms": (wall() - t) * 1e3, "cpu_ms": (cpu() - c) * 1e3, "token": token})
            elif cmd[0] == "decode":
                p, m = int(cmd[1]), int(cmd[2])
                rt.reset()
                token = rt.append(prompt[:p])
                tokens = [token]
                one = np.zeros(1, np.int32)
                t, c = wall(), cpu()
                for _ in range(m):
                    one[0] = token
                    token = rt.append(one)
                    tokens.append(token)
                ms, cpu_ms = (wall() - t) * 1e3, (cpu() - c) * 1e3
                reply({"ms": ms, "cpu_ms": cpu_ms, "tokens": tokens})
            elif cmd[0] == "stats":
                reply({"peak_rss_mb": _rss_mb("VmHWM"), "rss_mb": _rss_mb("VmRSS")})
            elif cmd[0] == "quit":
                break
            else:
                raise ValueError(f"unknown command {line.strip()!r}")
        except Exception as e:
            reply({"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
