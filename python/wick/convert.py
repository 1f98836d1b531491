"""Public converter entry point: ``wick.convert(module, args) -> wick.Model``.

Pipeline (each stage in its own module, each stating its invariant):

    1. frontend/export.py     torch.export + core-ATen decompositions
    2. frontend/importer.py   -> wick IR (ir.py)
    3. passes (ATen level)    dce, const_fold, batchnorm, int_range
    4. lower/                 one table ATen op -> TFLite builtins (logical layout)
    5. passes (TFLite level)  tfl_fold (weight layouts), layout (transpose sinking), fuse,
                              cleanup
    6. serialize.py + tflite/writer.py  -> .tflite bytes

Unsupported constructs raise ``ConversionError`` (op, source line, hint); wick never writes a
file that computes something else.
"""

from __future__ import annotations

import os
import sys
import types
import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ._optional import require
from .converter.errors import ConversionError

__all__ = ["convert", "ConversionError", "Model", "Signature", "TensorSpec"]


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple  # -1 for dynamic dims
    dtype: str  # numpy dtype name


class Signature:
    """One entry point of a converted model (a subgraph with its SignatureDef).

    ``model["decode"](*inputs)`` runs it on wick's C runtime and returns what the module
    returns: torch tensors in the module's output structure, constants (``None``) in place;
    ``.run(*inputs)`` returns the flat list of numpy arrays instead (torch.export's output
    order).  Inputs may be numpy arrays or torch tensors; with ``channels_last_io`` 4-d float
    inputs/outputs are NHWC."""

    def __init__(
        self,
        model: Model,
        key: str,
        inputs,
        outputs,
        channels_last_io: bool = False,
        structure=None,
    ):
        self._model = model
        self.key = key
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.channels_last_io = channels_last_io
        self._structure = structure  # (pytree TreeSpec, leaves) of the module's result, or None

    def _prepare(self, inputs) -> list[np.ndarray]:
        if len(inputs) != len(self.inputs):
            raise ValueError(
                f"signature {self.key!r} takes {len(self.inputs)} inputs, got {len(inputs)}"
            )
        out = []
        for x, spec in zip(inputs, self.inputs, strict=True):
            if hasattr(x, "detach"):
                x = x.detach().cpu().numpy()
            out.append(np.asarray(np.asarray(x, dtype=spec.dtype), order="C"))
        return out

    def run(self, *inputs) -> list[np.ndarray]:
        """The file's outputs as a flat list of numpy arrays (torch.export's output order)."""
        runner = self._model._runtime_for().signature(self.key)  # (the runtime caches it)
        return list(runner(*self._prepare(inputs)))

    def __call__(self, *inputs):
        """Like the module: torch tensors in the module's output structure (a tensor, tuple,
        list, dict, ...), constants such as ``None`` back in their places."""
        flat = self.run(*inputs)
        import torch

        tensors = [torch.from_numpy(a) for a in flat]
        if self._structure is None:  # (no structure recorded: a flat tuple)
            return tensors[0] if len(tensors) == 1 else tuple(tensors)
        from torch.utils import _pytree

        spec, leaves = self._structure
        values = [tensors[x] if kind == "tensor" else x for kind, x in leaves]
        return _pytree.tree_unflatten(values, spec)

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name}:{s.dtype}{list(s.shape)}" for s in self.inputs)
        outs = ", ".join(f"{s.name}:{s.dtype}{list(s.shape)}" for s in self.outputs)
        return f"<wick.Signature {self.key!r} ({ins}) -> ({outs})>"


class Model:
    """A converted model: the .tflite bytes plus what is needed to call it.

    One signature (``wick.convert(module, args)``, key ``serving_default``): ``model(*inputs)``
    runs it and returns what the module returns (torch tensors, same structure),
    ``model.run(*inputs)`` the flat list of numpy outputs, ``model.inputs`` / ``model.outputs`` describe it.  Several signatures
    (``wick.convert({"encode": (...), "decode": (...)})``): ``model.signatures`` lists the keys,
    ``model["decode"](*inputs)`` runs one; they share one file and one copy of their weights.
    Everything runs on wick's C runtime (``wick.runtime``); ``.export(path)`` writes the file
    that stock LiteRT runs as well (``Interpreter.get_signature_runner(key)``).
    ``num_threads`` (default 1) is the runtime's thread count; setting it takes effect on the
    next call."""

    def __init__(
        self,
        tflite_bytes: bytes,
        signatures: dict[str, tuple],  # key -> (inputs, outputs[, output structure])
        *,
        channels_last_io: bool = False,
        op_counts: dict | None = None,
        float_islands: list | None = None,
    ):
        self.tflite_bytes = tflite_bytes if isinstance(tflite_bytes, bytes) else bytes(tflite_bytes)
        self.channels_last_io = channels_last_io
        self.op_counts = dict(op_counts or {})
        # ops computing in float between a DEQUANTIZE and a QUANTIZE (int8 models):
        # (TFLite op, "file:line in func: code" or None)
        self.float_islands = list(float_islands or [])
        self.scheme = "float32"  # "int8", "dynamic_int8", "blockwise_int4" or "fp16"
        self.reference = None  # wick.quantize(scheme="int8"): the PT2E reference module
        self._signatures = {
            key: Signature(self, key, *spec[:2], channels_last_io, *spec[2:3])
            for key, spec in signatures.items()
        }
        self._runtime = None
        self._num_threads = 1
        # wick.convert(..., target=): the wick.target.TargetReport (a dict by key for several
        # signatures), else None
        self.target_report = None
        self._target_lowerings: dict = {}

    @property
    def num_threads(self) -> int:
        return self._num_threads

    @num_threads.setter
    def num_threads(self, n: int) -> None:
        if n != self._num_threads:
            self._num_threads = int(n)
            self._runtime = None  # the next call makes an interpreter with the new count

    # ---- signatures --------------------------------------------------------------------------
    @property
    def signatures(self) -> list[str]:
        """The signature keys, in file order (subgraph order)."""
        return list(self._signatures)

    def signature(self, key: str) -> Signature:
        try:
            return self._signatures[key]
        except KeyError:
            raise KeyError(f"no signature {key!r}; this model has {self.signatures}") from None

    def __getitem__(self, key: str) -> Signature:
        return self.signature(key)

    def _only(self) -> Signature:
        if len(self._signatures) != 1:
            raise TypeError(
                f"this model has {len(self._signatures)} signatures {self.signatures}: "
                "pick one, e.g. model[" + repr(self.signatures[0]) + "](...)"
            )
        return next(iter(self._signatures.values()))

    @property
    def inputs(self) -> list[TensorSpec]:
        return self._only().inputs

    @property
    def outputs(self) -> list[TensorSpec]:
        return self._only().outputs

    # ---- files -------------------------------------------------------------------------------
    def export(self, path: str | os.PathLike) -> None:
        """Write the .tflite file."""
        with open(path, "wb") as f:
            f.write(self.tflite_bytes)

    def __bytes__(self) -> bytes:
        return self.tflite_bytes

    @property
    def size(self) -> int:
        return len(self.tflite_bytes)

    # ---- running -----------------------------------------------------------------------------
    def _runtime_for(self):
        if self._runtime is None:
            from . import runtime  # the ctypes binding over libwick (loaded lazily)

            self._runtime = runtime.load(self.tflite_bytes, num_threads=self._num_threads)
        return self._runtime

    def __call__(self, *inputs):
        """Runs the model like the module: torch tensors in the module's output structure."""
        return self._only()(*inputs)

    def run(self, *inputs) -> list[np.ndarray]:
        """Runs the model; the outputs as a flat list of numpy arrays."""
        return self._only().run(*inputs)

    # ---- reporting ---------------------------------------------------------------------------
    def summary(self) -> str:
        lines = [f"wick.Model: {self.size / 1024:.1f} KiB .tflite"]
        several = len(self._signatures) > 1
        for sig in self._signatures.values():
            if several:
                lines.append(f"  signature {sig.key!r}:")
            pad = "  " if several else ""
            for kind, specs in (("input", sig.inputs), ("output", sig.outputs)):
                for s in specs:
                    lines.append(f"  {pad}{kind:6s} {s.name}: {s.dtype}{list(s.shape)}")
        if self.scheme == "int8" or self.float_islands:
            isl = ", ".join(op for op, _ in self.float_islands) or "none"
            lines.insert(1, f"  float islands in the int8 model: {isl}")
        total = sum(self.op_counts.values())
        lines.append(f"  {total} operators" + (" (all signatures):" if several else ":"))
        for op, n in sorted(self.op_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {op:28s} {n}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if len(self._signatures) == 1:
            ins = ", ".join(f"{s.name}:{s.dtype}{list(s.shape)}" for s in self.inputs)
            return f"<wick.Model ({ins}) {self.size} bytes, {sum(self.op_counts.values())} ops>"
        return (
            f"<wick.Model signatures {self.signatures} {self.size} bytes, "
            f"{sum(self.op_counts.values())} ops>"
        )


def _channels_last(tg) -> None:
    """Declare 4-d float inputs/outputs NHWC: the boundary transposes move into the interface
    (and the layout pass then cancels them against the first/last convolution's)."""
    from .converter.lower.tfl import TTensor

    for k, t in enumerate(list(tg.inputs)):
        if t.rank != 4 or not t.dtype.startswith("float"):
            continue
        nhwc = TTensor(t.name, [t.shape[0], t.shape[2], t.shape[3], t.shape[1]], t.dtype)
        perm = tg.const(t.name + "/to_nchw", np.asarray([0, 3, 1, 2], np.int32))
        tg.add("TRANSPOSE", [nhwc, perm], [t], position=0)
        t.name = t.name + "/nchw"
        tg.inputs[k] = nhwc
    for k, t in enumerate(list(tg.outputs)):
        if t.rank != 4 or not t.dtype.startswith("float"):
            continue
        nhwc = tg.tensor(
            tg.output_names[k], [t.shape[0], t.shape[2], t.shape[3], t.shape[1]], t.dtype
        )
        perm = tg.const(tg.output_names[k] + "/to_nhwc", np.asarray([0, 2, 3, 1], np.int32))
        tg.add("TRANSPOSE", [t, perm], [nhwc])
        tg.outputs[k] = nhwc


class _Stages:
    """Forwards stage snapshots to wick.graph.StageRecorder when ``debug_dir`` is given;
    a failing debug view never fails the conversion."""

    def __init__(self, debug_dir):
        self.rec = None
        if debug_dir is not None:
            try:
                from .graph import StageRecorder

                self.rec = StageRecorder(debug_dir)
            except Exception as e:  # pragma: no cover - optional viewer
                warnings.warn(f"wick: no conversion stage view ({e})", stacklevel=3)

    def add(self, name, obj):
        if self.rec is None:
            return
        try:
            self.rec.add(name, obj)
        except Exception as e:  # pragma: no cover
            warnings.warn(f"wick: stage view {name!r} failed ({e})", stacklevel=3)

    def write(self):
        if self.rec is not None:
            try:
                self.rec.write()
            except Exception as e:  # pragma: no cover
                warnings.warn(f"wick: writing the stage view failed ({e})", stacklevel=3)


PROGRESS_AFTER_S = 2.0  # progress=None: stay quiet unless the conversion runs longer than this


class _Progress:
    """Concise stage lines on stderr (``wick.convert:  3.1 s  lowering 812 nodes``).

    ``mode`` True: print every line as its stage starts; False: never; None (the default):
    collect lines and print them (the earlier ones at once) only when the conversion has run
    for ``PROGRESS_AFTER_S`` — a timer thread does that mid-stage, so a slow torch.export is
    announced while it runs, and short conversions (tests, library use) print nothing."""

    def __init__(self, mode: bool | None):
        import threading
        import time

        self._clock = time.perf_counter
        self._t0 = self._clock()
        self._mode = mode
        self._live = mode is True
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._timer = None
        if mode is None:
            self._timer = threading.Timer(PROGRESS_AFTER_S, self._go_live)
            self._timer.daemon = True
            self._timer.start()

    def _emit(self, line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def _go_live(self) -> None:
        with self._lock:
            if self._live or self._mode is False:
                return
            self._live = True
            for line in self._pending:
                self._emit(line)
            self._pending = []

    def __call__(self, message: str) -> None:
        if self._mode is False:
            return
        elapsed = self._clock() - self._t0
        line = f"wick.convert: {elapsed:5.1f} s  {message}"
        if not self._live and elapsed >= PROGRESS_AFTER_S:
            self._go_live()
        with self._lock:
            if self._live:
                self._emit(line)
            else:
                self._pending.append(line)

    def close(self) -> None:
        """The conversion is over: no more lines (unprinted ones are dropped)."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._mode = False
            self._pending = []


def _return_freed_memory() -> None:
    """Hand memory that the stages just freed back to the OS (glibc keeps freed heap pages
    mapped otherwise, so each stage's garbage — folded weights in their old layout, float64
    temporaries — would add to the next stage's peak RSS).  A no-op where there is no glibc."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
            _malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


def _method_module(fn):
    """A bound method of an nn.Module (``model.prefill``) as a module whose forward calls it,
    so that torch.export lifts the owner's parameters and buffers."""
    import inspect

    import torch

    class BoundMethod(torch.nn.Module):
        def __init__(self, owner, name):
            super().__init__()
            self.owner = owner
            self.method = name
            self.training = owner.training  # (the owner's mode decides the training warning)

        def forward(self, *args, **kwargs):
            return getattr(self.owner, self.method)(*args, **kwargs)

    wrapper = BoundMethod(fn.__self__, fn.__name__)
    # torch.export names the inputs after forward's parameters: give it the method's own
    # (a class per wrapper, so setting the signature on its forward touches nothing else)
    BoundMethod.forward.__signature__ = inspect.signature(fn.__func__)
    return wrapper


def _signature_specs(module, args, kwargs, dynamic_shapes):
    """[(key, module, args, kwargs, dynamic_shapes)] from either calling form of convert."""
    import inspect
    from collections.abc import Mapping

    if not isinstance(module, Mapping):
        if args is None:
            raise TypeError("wick.convert(module, args): example inputs are required")
        return [("serving_default", module, args, kwargs, dynamic_shapes)]
    if args is not None or kwargs is not None:
        raise TypeError(
            "with several signatures give each its inputs: "
            "wick.convert({'encode': (module, args), 'decode': (module2, args2, kwargs2)})"
        )
    if not module:
        raise ValueError("wick.convert({...}): no signatures given")
    if dynamic_shapes is not None and (
        not isinstance(dynamic_shapes, Mapping) or set(dynamic_shapes) - set(module)
    ):
        raise TypeError(
            "with several signatures, dynamic_shapes is a dict {signature key: "
            "torch.export dynamic_shapes}, keyed by the signatures' keys"
        )
    specs = []
    for key, spec in module.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"signature keys are non-empty strings, got {key!r}")
        if not isinstance(spec, tuple) or len(spec) not in (2, 3):
            raise TypeError(
                f"signature {key!r}: expected (module, args) or (module, args, kwargs), "
                f"got {type(spec).__name__}"
            )
        m, a = spec[0], spec[1]
        kw = spec[2] if len(spec) == 3 else None
        ds = dynamic_shapes.get(key) if dynamic_shapes is not None else None
        specs.append((key, m, a, kw, ds))
    return [
        (key, _method_module(m) if inspect.ismethod(m) and _is_module(m.__self__) else m, a, kw, ds)
        for key, m, a, kw, ds in specs
    ]


def _is_module(obj) -> bool:
    import torch

    return isinstance(obj, torch.nn.Module)


def _convert_graph(
    module,
    args,
    kwargs,
    dynamic_shapes,
    channels_last_io,
    stages,
    label,
    say,
    weights="float32",
    target_level=None,
    lowered=None,
):
    """One signature through stages 1-5: export, import, ATen passes, lowering, TFLite passes.
    Returns the TFLite-level graph (lower/tfl.py) and the module's output structure.
    ``target_level``: an NNAPI feature level to lower for (passes/target.py), counting what it
    rewrote in the Counter ``lowered``."""
    from .converter.frontend import export_module, import_program
    from .converter.lower import lower_graph
    from .converter.passes.batchnorm import fold_batchnorm
    from .converter.passes.chains import merge_chains
    from .converter.passes.cleanup import cleanup
    from .converter.passes.const_fold import const_fold
    from .converter.passes.dce import dce
    from .converter.passes.fuse import fuse_activations
    from .converter.passes.int_range import int_ranges
    from .converter.passes.layout import hoist_transposes_above_pads, sink_transposes
    from .converter.passes.layout_search import search_layouts
    from .converter.passes.patterns import recover_patterns
    from .converter.passes.quantize import quantize_ops
    from .converter.passes.tfl_fold import tfl_fold
    from .converter.passes.weights import compress_weights

    if not isinstance(args, tuple):
        args = (args,)
    say(f"{label}export {type(module).__name__} (torch.export, core-ATen decompositions)")
    ep = export_module(module, args, kwargs, dynamic_shapes)
    stages.add(label + "exported", ep)
    say(f"{label}import {sum(1 for n in ep.graph.nodes if n.op == 'call_function')} ATen nodes")
    g = import_program(ep)
    del ep
    stages.add(label + "imported", g)
    say(f"{label}ATen passes on {len(g.nodes)} nodes (constant folding, batch-norm, patterns)")

    def aten_passes(graph):
        for node in graph.nodes:
            for branch in node.meta.get("branches", ()):
                aten_passes(branch)  # torch.cond bodies
        dce(graph)
        const_fold(graph)
        fold_batchnorm(graph)
        const_fold(graph)
        recover_patterns(graph)
        dce(graph)
        int_ranges(graph)

    aten_passes(g)
    _return_freed_memory()
    stages.add(label + "after ATen passes (fold, batch-norm, patterns, int ranges)", g)
    say(f"{label}lowering {len(g.nodes)} nodes to TFLite builtins")
    tg = lower_graph(g)
    g.release_constants()  # the folded weights live on in tg only (in TFLite layout)
    structure = (g.output_spec, list(g.output_leaves)) if g.output_spec is not None else None
    del g
    say(f"{label}layout passes on {sum(len(x.ops) for x in tg.all_graphs())} TFLite ops")
    if channels_last_io:
        _channels_last(tg)
    stages.add(label + "lowered", tg)
    for sub in tg.all_graphs():
        tfl_fold(sub)
        cleanup(sub, transposes_to_reshapes=False)
    stages.add(label + "after weight layouts", tg)
    for sub in tg.all_graphs():
        sink_transposes(sub)
        if merge_chains(sub):
            sink_transposes(sub)
        search_layouts(sub)
        hoist_transposes_above_pads(sub)
        tfl_fold(sub)
    stages.add(label + "after layout", tg)
    _return_freed_memory()
    say(f"{label}fusion and cleanup")
    for sub in tg.all_graphs():
        fuse_activations(sub)
        quantize_ops(sub)
        cleanup(sub)
    stages.add(label + "after fusion, int8 and cleanup", tg)
    if target_level is not None:
        from .converter.passes.target import lower_for_nnapi

        for sub in tg.all_graphs():
            done = lower_for_nnapi(sub, target_level)
            if done:
                cleanup(sub)
            if lowered is not None:
                lowered.update(done)
        stages.add(label + f"lowered for NNAPI feature level {target_level}", tg)
    if weights != "float32":
        for sub in tg.all_graphs():
            compress_weights(sub, weights)
        stages.add(label + f"{weights} weights", tg)
    return tg, structure


def convert(
    module,
    args=None,
    kwargs=None,
    *,
    dynamic_shapes=None,
    channels_last_io: bool = False,
    description: str = "wick",
    debug_dir=None,
    progress: bool | None = None,
    weights: str = "float32",
    verify: bool = True,
    target: str | None = None,
) -> Model:
    """Convert a PyTorch module to a standard .tflite model.

    ``wick.convert(module, args, kwargs=None)``: one signature, ``serving_default``.
    ``args``/``kwargs`` are example inputs (as for torch.export); ``dynamic_shapes`` is passed
    to torch.export.  With ``channels_last_io`` every 4-d float input and output is NHWC.

    ``wick.convert({"encode": (encoder, args), "decode": (decoder, args, kwargs), ...})``:
    one file with one subgraph and SignatureDef per key, in the dict's order.  A module may
    be a bound method of a module (``(model.prefill, args)``).  Constants with the same bytes
    (the same weight used by several signatures) are stored once and shared.
    ``dynamic_shapes`` is then ``{key: dynamic_shapes of that signature}``.

    ``debug_dir``: write a page with the graph after every stage there (wick.graph, see
    docs/graph.md).  ``progress``: stage lines on stderr — True always, False never, None
    (default) only once the conversion has taken more than 2 s.  ``weights``: ``"float32"``;
    ``"int8"`` stores fully connected / convolution weights int8 per output channel for
    TFLite's hybrid kernels (dynamic-range quantization); ``"int4"`` stores fully connected
    weights int4 in blocks of 32 with float16 scales (TFLite's blockwise quantization; the rest
    as ``"int8"``); ``"float16"`` stores float constants as float16 + DEQUANTIZE
    (``wick.quantize`` exposes int8 and float16 as schemes).

    ``target``: ``"nnapi:N"`` (or ``"nnapi"``, level 27) converts for Android's NNAPI at
    feature level N: where the level lacks an operator and an equivalent exists in operators it
    has, the converter emits that (HARD_SWISH below 30, PAD below 28, an NCHW input's
    TRANSPOSE below 28, division by a constant; docs/nnapi.md), and after converting it asks
    the NNAPI delegate, in its planning mode (no NNAPI library needed), what the level would
    run: the report (operators taken, partitions, each operator not taken and why) is printed
    on stderr (unless ``progress=False``), kept as ``model.target_report``
    (wick.target.TargetReport; a dict by signature key for several signatures), and a model
    that would not run whole warns (``wick.target.TargetWarning``).

    ``verify`` (default on): the written file is run on wick's runtime on the sample inputs and
    compared with the module's outputs (wick.verify): a file the runtime refuses raises
    ConversionError, outputs beyond the bar warn (``wick.VerificationWarning``) naming the
    worst output and whether the conversion or the runtime's optimized kernels are at fault.

    Needs PyTorch (``pip install "wick[convert]"``); without it this raises
    ``ModuleNotFoundError`` saying so."""
    from .target import parse_target

    target_name, target_level = parse_target(target) if target is not None else (None, None)
    require("torch", "wick.convert")
    from .converter.passes.weights import WEIGHT_MODES

    if weights not in WEIGHT_MODES:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_MODES)}, not {weights!r}")
    specs = _signature_specs(module, args, kwargs, dynamic_shapes)
    several = len(specs) > 1
    say = _Progress(progress)
    try:
        model = _convert(
            specs, several, channels_last_io, description, debug_dir, say, weights, target_level
        )
    finally:
        say.close()
    if verify:
        from .verify import verify_model

        verify_model(
            model,
            [(key, m, a, kw) for key, m, a, kw, _ in specs],
            channels_last_io=channels_last_io,
            scheme=weights,
        )
    if target is not None:
        _report_target(model, target, target_level, progress)
    return model


def _report_target(model: Model, target: str, level: int, progress) -> None:
    """Plans the converted file at NNAPI feature level ``level`` (wick.target.plan) for every
    signature, keeps the report(s) on the model, prints and warns (see convert's ``target``)."""
    from .target import TargetWarning, plan

    reports = {}
    for key in model.signatures:
        r = plan(model.tflite_bytes, level, signature=key, target=target)
        r.lowerings = dict(model._target_lowerings.get(key, {}))
        reports[key] = r
    model.target_report = next(iter(reports.values())) if len(reports) == 1 else reports
    for key, r in reports.items():
        label = f"{key}: " if len(reports) > 1 else ""
        if progress is not False:
            print(f"wick.convert: {label}{r}", file=sys.stderr)
        if not r.runs_whole:
            warnings.warn(
                f"{label}{target}: NNAPI feature level {level} would not run "
                f"{r.total - r.taken} of {r.total} operators ({len(r.partitions)} partitions); "
                "model.target_report says which and why",
                TargetWarning,
                stacklevel=3,
            )


def _convert(
    specs, several, channels_last_io, description, debug_dir, say, weights, target_level=None
) -> Model:
    from .converter.passes.quantize import float_islands
    from .converter.serialize import serialize

    stages = _Stages(debug_dir)
    graphs = []
    structures = {}
    lowerings = {}
    for key, m, a, kw, ds in specs:
        label = f"{key}: " if several else ""
        lowerings[key] = Counter()
        tg, structures[key] = _convert_graph(
            m,
            a,
            kw,
            ds,
            channels_last_io,
            stages,
            label,
            say,
            weights,
            target_level=target_level,
            lowered=lowerings[key],
        )
        graphs.append((key, tg))

    def spec_list(names, tensors):
        return [TensorSpec(n, tuple(t.shape), t.dtype) for n, t in zip(names, tensors, strict=True)]

    sigs = {
        key: (
            spec_list(tg.input_names, tg.inputs),
            spec_list(tg.output_names, tg.outputs),
            structures[key],
        )
        for key, tg in graphs
    }
    counts = Counter(op.op for _, tg in graphs for sub in tg.all_graphs() for op in sub.ops)
    islands = [i for _, tg in graphs for sub in tg.all_graphs() for i in float_islands(sub)]
    weight_bytes = _constant_bytes(g for _, tg in graphs for g in tg.all_graphs())
    say(f"writing {sum(counts.values())} ops, {weight_bytes / 2**20:.1f} MB of constants")
    data = serialize(graphs, description, consume=True)  # (frees constants as it writes them)
    del graphs
    _return_freed_memory()
    stages.add("final", data)
    stages.write()
    say(
        f"done: {len(data) / 2**20:.1f} MB, {sum(counts.values())} ops, "
        f"{counts.get('TRANSPOSE', 0)} TRANSPOSE"
    )
    model = Model(
        data, sigs, channels_last_io=channels_last_io, op_counts=counts, float_islands=islands
    )
    model._target_lowerings = lowerings
    if weights != "float32":
        model.scheme = {"int8": "dynamic_int8", "int4": "blockwise_int4", "float16": "fp16"}[
            weights
        ]
    return model


def _constant_bytes(graphs) -> int:
    seen: set[int] = set()
    total = 0
    for g in graphs:
        for op in g.ops:
            for t in op.inputs:
                if t is not None and t.is_const and id(t) not in seen:
                    seen.add(id(t))
                    total += t.data.nbytes
    return total


class _CallableModule(types.ModuleType):
    """``wick.convert`` may be this module (after ``import wick.convert``) or the function;
    make both callable the same way."""

    def __call__(self, *args, **kwargs):
        return convert(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
