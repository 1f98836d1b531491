"""The files each peer runs, made once from the PyTorch model and cached in build/bench-cache.

Per model (directory ``<cache>/<model key>/``):

    inputs.npz     the seeded example inputs (every peer runs these)
    reference.npz  PyTorch eager outputs on them (the output check's reference)
    model.tflite   wick.convert(module, args): wick and LiteRT run this same file
    model.onnx     torch.onnx.export(module, args) (the dynamo exporter) for ONNX Runtime
    model.pt2      torch.export.export(module, args), lowered in .venv-executorch to
    model.pte      an ExecuTorch program with the XNNPACK backend (et_export.py, all models
                   in one process: make_ptes)
    model.torch    the pickled module (torch.save) for the PyTorch eager peer (float models)

Each file has a ``.key`` beside it: a digest of what it was made from (the model recipe in
models.py, the versions of the packages involved, and for the .tflite the converter's source).
A file whose key no longer matches is made again; a failure is cached too (``.err``), with the
same key, so a peer that cannot take a model is not retried on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import warnings
from importlib import metadata

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ET_PYTHON = os.path.join(REPO, ".venv-executorch", "bin", "python")


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "-"


def _digest_files(paths) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.encode())
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def _sources(root: str) -> list[str]:
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.endswith(".py")]
    return out


def recipe_digest(key: str) -> str:
    pkgs = ("torch", "torchvision", "timm", "transformers", "torchao")
    here = os.path.join(REPO, "bench", "peers", "models.py")
    zoo = os.path.join(REPO, "python", "wick", "zoo.py")
    parts = [key, _digest_files([here, zoo])] + [f"{p}={_version(p)}" for p in pkgs]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def converter_digest() -> str:
    wick_py = os.path.join(REPO, "python", "wick")
    files = _sources(os.path.join(wick_py, "converter")) + _sources(os.path.join(wick_py, "tflite"))
    return _digest_files(files + [os.path.join(wick_py, "convert.py")])


class ModelFiles:
    """Makes (or finds in the cache) one model's files; ``path(kind)`` returns the file or
    raises RuntimeError with the reason it could not be made."""

    def __init__(self, model, cache_dir: str, log=print):
        self.model = model
        self.dir = os.path.join(cache_dir, model.key)
        os.makedirs(self.dir, exist_ok=True)
        self.log = log
        self.recipe = recipe_digest(model.key)
        self._built = None

    # -- the module, built lazily (only when some file is missing) --------------------------
    def module(self):
        if self._built is None:
            from . import models

            t = time.perf_counter()
            self._built = models.build(self.model)
            self.log(f"  built {self.model.key} in {time.perf_counter() - t:.1f} s")
        return self._built

    def _file(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _cached(self, name: str, key: str):
        """The cached file, None when it must be (re)made; raises the cached failure."""
        path, stamp, err = self._file(name), self._file(name + ".key"), self._file(name + ".err")
        if os.path.exists(stamp) and open(stamp).read() == key:
            if os.path.exists(err):
                raise RuntimeError(open(err).read())
            if os.path.exists(path):
                return path
        return None

    def _make(self, name: str, key: str, make) -> str:
        got = self._cached(name, key)
        if got:
            return got
        path, stamp, err = self._file(name), self._file(name + ".key"), self._file(name + ".err")
        for p in (path, stamp, err):
            if os.path.exists(p):
                os.remove(p)
        t = time.perf_counter()
        try:
            make(path)
        except Exception as e:
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            self._record(name, key, msg)
            self.log(f"  {name}: FAILED ({msg[:200]})")
            raise RuntimeError(msg[:400]) from e
        self._record(name, key, None)
        self.log(f"  made {name} in {time.perf_counter() - t:.1f} s")
        return path

    def _record(self, name: str, key: str, error: str | None) -> None:
        """Stamps a made file with its key, or caches why it could not be made."""
        if error is not None:
            with open(self._file(name + ".err"), "w") as f:
                f.write(error[:400])
        with open(self._file(name + ".key"), "w") as f:
            f.write(key)

    # -- the files ---------------------------------------------------------------------------
    def inputs(self) -> str:
        def make(path):
            _, args = self.module()
            np.savez(path, *[a.detach().numpy() for a in args])

        return self._make("inputs.npz", self.recipe, make)

    def reference(self) -> str:
        def make(path):
            import torch

            module, args = self.module()
            with torch.no_grad():
                out = module(*args)
            out = out if isinstance(out, (tuple, list)) else [out]
            np.savez(path, *[o.detach().numpy() for o in out])

        return self._make("reference.npz", self.recipe, make)

    def tflite(self) -> str:
        def make(path):
            import wick

            module, args = self.module()
            wick.convert(module, args).export(path)

        return self._make("model.tflite", f"{self.recipe}-{converter_digest()}", make)

    def onnx(self) -> str:
        def make(path):
            import torch

            module, args = self.module()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(
                    module, args, path, dynamo=True, external_data=False, verbose=False
                )

        key = f"{self.recipe}-onnx{_version('onnx')}-onnxscript{_version('onnxscript')}"
        return self._make("model.onnx", key, make)

    def pt2(self) -> str:
        def make(path):
            import torch

            module, args = self.module()
            torch.export.save(torch.export.export(module, args), path)

        return self._make("model.pt2", self.recipe, make)

    def pte_key(self) -> str:
        return f"{self.recipe}-et{et_version()}"

    def pte(self) -> str:
        """The ExecuTorch program, made beforehand by :func:`make_ptes` (one process for all
        models: importing executorch's exporter alone takes ~10-40 s)."""
        if not os.path.exists(ET_PYTHON):
            raise RuntimeError(NO_ET_VENV)
        got = self._cached("model.pte", self.pte_key())
        if got is None:
            raise RuntimeError(getattr(self, "pte_error", "model.pte was not made (make_ptes)"))
        return got

    def torch_module(self) -> str:
        def make(path):
            import torch

            module, _ = self.module()
            torch.save(module, path)

        return self._make("model.torch", self.recipe, make)


NO_ET_VENV = (
    "no .venv-executorch: bash bench/peers/setup_executorch.sh makes it "
    "(build/executorch-setup.log says why it failed, if it did)"
)


def make_ptes(all_files: list[ModelFiles], log=print) -> None:
    """Lowers every model whose .pte is missing or stale, in one .venv-executorch process;
    each model's failure is cached in its own .err (et_export reports one JSON line each)."""
    if not os.path.exists(ET_PYTHON):
        return
    todo = []
    for f in all_files:
        try:
            if f._cached("model.pte", f.pte_key()) is None:
                todo.append(f)
        except RuntimeError:
            pass  # a cached failure
    jobs = []
    for f in todo:
        for ext in ("", ".key", ".err"):
            if os.path.exists(f._file("model.pte" + ext)):
                os.remove(f._file("model.pte" + ext))
        try:
            jobs += [f.pt2(), f._file("model.pte")]
        except RuntimeError as e:
            f._record("model.pte", f.pte_key(), f"no torch.export program: {e}")
    if not jobs:
        return
    log(f"lowering {len(jobs) // 2} model(s) to ExecuTorch/XNNPACK in .venv-executorch ...")
    t = time.perf_counter()
    r = subprocess.run(
        [ET_PYTHON, "-m", "bench.peers.et_export", *jobs],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": REPO},
        capture_output=True,
        text=True,
        timeout=3600,
    )
    done = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            msg = json.loads(line)
            done[msg["pte"]] = msg
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    crash = lines[-1] if lines else f"exit {r.returncode}"
    for f in todo:
        msg = done.get(f._file("model.pte"))
        if msg is None:  # the process died: not cached, the next run tries again
            f.pte_error = f"et_export failed: {crash}"[:400]
        elif "error" in msg:
            f._record("model.pte", f.pte_key(), msg["error"])
        else:
            f._record("model.pte", f.pte_key(), None)
            with open(f._file("model.pte.info"), "w") as out:
                out.write(msg["delegation"])
            log(f"  {f.model.key}: .pte made in {msg['s']:.1f} s; {msg['delegation']}")
    log(f"  ExecuTorch lowering took {time.perf_counter() - t:.0f} s")


_ET_VERSION = None


def et_version() -> str:
    global _ET_VERSION
    if _ET_VERSION is None:
        if not os.path.exists(ET_PYTHON):
            _ET_VERSION = "-"
        else:
            r = subprocess.run(
                [ET_PYTHON, "-c", "from importlib import metadata as m; "
                 "print(m.version('executorch'), m.version('torch'))"],
                capture_output=True, text=True,
            )  # fmt: skip
            _ET_VERSION = r.stdout.strip().replace(" ", "-torch") or "-"
    return _ET_VERSION


def python_for(peer: str) -> str:
    return ET_PYTHON if peer == "executorch" else sys.executable
