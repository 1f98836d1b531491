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

from .converter.errors import ConversionError

__all__ = ["convert", "ConversionError", "Model", "TensorSpec"]


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple  # -1 for dynamic dims
    dtype: str  # numpy dtype name


class Model:
    """A converted model: the .tflite bytes plus what is needed to call it.

    ``model(*inputs)`` runs on wick's C runtime (``wick.runtime``) and returns a list of numpy
    arrays, one per model output, in torch.export's flattened output order.  Inputs may be
    numpy arrays or torch tensors; with ``channels_last_io`` 4-d inputs/outputs are NHWC.
    ``num_threads`` (default 1) is the runtime's thread count; setting it takes effect on the
    next call."""

    def __init__(
        self,
        tflite_bytes: bytes,
        inputs: list[TensorSpec],
        outputs: list[TensorSpec],
        *,
        channels_last_io: bool = False,
        op_counts: dict | None = None,
    ):
        self.tflite_bytes = bytes(tflite_bytes)
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.channels_last_io = channels_last_io
        self.op_counts = dict(op_counts or {})
        self._runtime = None
        self._num_threads = 1

    @property
    def num_threads(self) -> int:
        return self._num_threads

    @num_threads.setter
    def num_threads(self, n: int) -> None:
        if n != self._num_threads:
            self._num_threads = int(n)
            self._runtime = None  # the next call makes an interpreter with the new count

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
    def _prepare(self, inputs) -> list[np.ndarray]:
        if len(inputs) != len(self.inputs):
            raise ValueError(f"model takes {len(self.inputs)} inputs, got {len(inputs)}")
        out = []
        for x, spec in zip(inputs, self.inputs, strict=True):
            if hasattr(x, "detach"):
                x = x.detach().cpu().numpy()
            out.append(np.asarray(np.asarray(x, dtype=spec.dtype), order="C"))
        return out

    def __call__(self, *inputs) -> list[np.ndarray]:
        if self._runtime is None:
            from . import runtime  # the ctypes binding over libwick (loaded lazily)

            self._runtime = runtime.load(self.tflite_bytes, num_threads=self._num_threads)
        return list(self._runtime(*self._prepare(inputs)))

    # ---- reporting ---------------------------------------------------------------------------
    def summary(self) -> str:
        lines = [f"wick.Model: {self.size / 1024:.1f} KiB .tflite"]
        for kind, specs in (("input", self.inputs), ("output", self.outputs)):
            for s in specs:
                lines.append(f"  {kind:6s} {s.name}: {s.dtype}{list(s.shape)}")
        total = sum(self.op_counts.values())
        lines.append(f"  {total} operators:")
        for op, n in sorted(self.op_counts.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {op:28s} {n}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name}:{s.dtype}{list(s.shape)}" for s in self.inputs)
        return f"<wick.Model ({ins}) {self.size} bytes, {sum(self.op_counts.values())} ops>"


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


def convert(
    module,
    args,
    kwargs=None,
    *,
    dynamic_shapes=None,
    channels_last_io: bool = False,
    description: str = "wick",
    debug_dir=None,
) -> Model:
    """Convert a PyTorch module to a standard .tflite model.

    ``args``/``kwargs`` are example inputs (as for torch.export); ``dynamic_shapes`` is passed
    to torch.export.  With ``channels_last_io`` every 4-d float input and output is NHWC.
    ``debug_dir``: write a page with the graph after every stage there (wick.graph, see
    docs/graph.md)."""
    from .converter.frontend import export_module, import_program
    from .converter.lower import lower_graph
    from .converter.passes.batchnorm import fold_batchnorm
    from .converter.passes.chains import merge_chains
    from .converter.passes.cleanup import cleanup
    from .converter.passes.const_fold import const_fold
    from .converter.passes.dce import dce
    from .converter.passes.fuse import fuse_activations
    from .converter.passes.int_range import int_ranges
    from .converter.passes.layout import sink_transposes
    from .converter.passes.layout_search import search_layouts
    from .converter.passes.patterns import recover_patterns
    from .converter.passes.quantize import quantize_ops
    from .converter.passes.tfl_fold import tfl_fold
    from .converter.serialize import serialize

    if not isinstance(args, tuple):
        args = (args,)
    stages = _Stages(debug_dir)
    ep = export_module(module, args, kwargs, dynamic_shapes)
    stages.add("exported", ep)
    g = import_program(ep)
    stages.add("imported", g)

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
    stages.add("after ATen passes (fold, batch-norm, patterns, int ranges)", g)
    tg = lower_graph(g)
    if channels_last_io:
        _channels_last(tg)
    stages.add("lowered", tg)
    for sub in tg.all_graphs():
        tfl_fold(sub)
        cleanup(sub, transposes_to_reshapes=False)
    stages.add("after weight layouts", tg)
    for sub in tg.all_graphs():
        sink_transposes(sub)
        if merge_chains(sub):
            sink_transposes(sub)
        search_layouts(sub)
        tfl_fold(sub)
    stages.add("after layout", tg)
    for sub in tg.all_graphs():
        fuse_activations(sub)
        quantize_ops(sub)
        cleanup(sub)
    stages.add("after fusion, int8 and cleanup", tg)
    ins = [
        TensorSpec(n, tuple(t.shape), t.dtype)
        for n, t in zip(tg.input_names, tg.inputs, strict=True)
    ]
    outs = [
        TensorSpec(n, tuple(t.shape), t.dtype)
        for n, t in zip(tg.output_names, tg.outputs, strict=True)
    ]
    data = serialize(tg, description)
    stages.add("final", data)
    stages.write()
    counts = Counter(op.op for sub in tg.all_graphs() for op in sub.ops)
    return Model(data, ins, outs, channels_last_io=channels_last_io, op_counts=counts)


class _CallableModule(types.ModuleType):
    """``wick.convert`` may be this module (after ``import wick.convert``) or the function;
    make both callable the same way."""

    def __call__(self, *args, **kwargs):
        return convert(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
