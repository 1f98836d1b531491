"""The TFLite-level graph that lowering produces and the late passes rewrite.

    TGraph ── ops: [TOp(op="CONV_2D", inputs=[TTensor|None], outputs=[TTensor], options={...})]
       └── inputs / outputs: [TTensor]     TTensor(shape, dtype, data=np.ndarray|None)

Invariants:
* Ops and options are TFLite builtins with exactly the operand conventions of the file format
  (docs/format.md): the graph can be written as-is by ``serialize.py``.
* Right after lowering, every tensor is in its *logical* (PyTorch) layout except inside the
  explicit TRANSPOSE pairs that lowering puts around layout-specific ops (CONV_2D, pools,
  resize …, which are NHWC).  The layout pass then moves and cancels transposes; it keeps the
  computed values identical.
* ``shape`` entries are ints; -1 marks a dynamic dim (serialized as shape_signature).
* ``dtype`` is a numpy-style name ("float32", "int32", "bool" …).  A tensor with ``data`` is a
  constant; ``data.shape == shape`` and ``data.dtype == dtype``.
* ``ops`` may be out of order while a pass runs; ``toposort()`` restores a valid order
  (stable with respect to the existing order).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np


class TTensor:
    __slots__ = ("id", "name", "shape", "dtype", "data", "quant", "producer", "users")
    _ids = itertools.count()

    def __init__(self, name: str, shape, dtype: str, data: np.ndarray | None = None, quant=None):
        self.id = next(TTensor._ids)
        self.name = name
        self.shape = [int(d) for d in shape]
        self.dtype = dtype
        self.data = data
        self.quant = quant
        self.producer: TOp | None = None
        self.users: list[TOp] = []

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self) -> str:
        c = " const" if self.is_const else ""
        return f"t{self.id}:{self.dtype}{self.shape}{c}"


class TOp:
    __slots__ = ("op", "inputs", "outputs", "options", "origin")

    def __init__(self, op: str, inputs, outputs, options=None, origin=None):
        self.op = op
        self.inputs: list[TTensor | None] = list(inputs)
        self.outputs: list[TTensor] = list(outputs)
        self.options: dict = dict(options or {})
        self.origin = origin  # the ATen ir.Node this op was lowered from (for errors/naming)

    @property
    def out(self) -> TTensor:
        return self.outputs[0]

    def __repr__(self) -> str:
        return f"{self.outputs} = {self.op}({self.inputs}, {self.options})"


class TGraph:
    def __init__(self):
        self.ops: list[TOp] = []
        self.inputs: list[TTensor] = []
        self.outputs: list[TTensor] = []
        self.input_names: list[str] = []
        self.output_names: list[str] = []
        self.subgraphs: list[TGraph] = []  # branch bodies (IF), referenced by op options

    def all_graphs(self) -> list[TGraph]:
        """This graph and every nested branch graph, depth first (self first)."""
        out = [self]
        for sg in self.subgraphs:
            out += sg.all_graphs()
        return out

    # ---- construction ----------------------------------------------------------------------
    def tensor(self, name: str, shape, dtype: str, like: TTensor | None = None) -> TTensor:
        """A new activation tensor; ``like``: inherit its quantization (data movement keeps
        int8 parameters; a per-channel dimension is not remapped, activations are per-tensor)."""
        t = TTensor(name, shape, dtype)
        if like is not None and like.quant is not None:
            t.quant = dict(like.quant)
        return t

    def const(self, name: str, data) -> TTensor:
        arr = np.asarray(np.asarray(data), order="C")
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        return TTensor(name, arr.shape, _np_name(arr.dtype), data=arr)

    def add(self, op: str, inputs, outputs, options=None, origin=None, position=None) -> TOp:
        o = TOp(op, inputs, outputs, options, origin)
        for t in o.inputs:
            if t is not None:
                t.users.append(o)
        for t in o.outputs:
            t.producer = o
        if position is None:
            self.ops.append(o)
        else:
            self.ops.insert(position, o)
        return o

    # ---- rewriting ---------------------------------------------------------------------------
    def set_input(self, op: TOp, i: int, t: TTensor | None) -> None:
        old = op.inputs[i]
        if old is not None and op in old.users:
            old.users.remove(op)
        op.inputs[i] = t
        if t is not None:
            t.users.append(op)

    def replace_uses(self, old: TTensor, new: TTensor) -> None:
        for op in list(old.users):
            for i, t in enumerate(op.inputs):
                if t is old:
                    self.set_input(op, i, new)
        self.outputs = [new if t is old else t for t in self.outputs]

    def remove(self, op: TOp) -> None:
        for t in op.inputs:
            if t is not None and op in t.users:
                t.users.remove(op)
        for t in op.outputs:
            if t.producer is op:
                t.producer = None
        self.ops.remove(op)

    def is_output(self, t: TTensor) -> bool:
        return any(t is o for o in self.outputs)

    def is_input(self, t: TTensor) -> bool:
        return any(t is o for o in self.inputs)

    def toposort(self) -> None:
        order = {id(op): i for i, op in enumerate(self.ops)}
        done: set[int] = set()
        out: list[TOp] = []

        def visit(op: TOp, stack: set[int]):
            if id(op) in done:
                return
            if id(op) in stack:
                raise AssertionError("cycle in TFLite graph")
            stack.add(id(op))
            preds = [t.producer for t in op.inputs if t is not None and t.producer is not None]
            for p in sorted(preds, key=lambda p: order.get(id(p), 0)):
                visit(p, stack)
            stack.discard(id(op))
            done.add(id(op))
            out.append(op)

        for op in list(self.ops):
            visit(op, set())
        self.ops = out

    def dce(self) -> None:
        """Drop ops none of whose outputs reach a graph output."""
        self.toposort()  # the backward sweep below needs consumers after producers
        live: set[int] = {id(t) for t in self.outputs}
        keep: list[TOp] = []
        for op in reversed(self.ops):
            if any(id(t) in live for t in op.outputs):
                keep.append(op)
                for t in op.inputs:
                    if t is not None:
                        live.add(id(t))
            else:
                for t in op.inputs:
                    if t is not None and op in t.users:
                        t.users.remove(op)
        self.ops = keep[::-1]

    def clone(self) -> TGraph:
        """A structural copy (new ops and tensors, constant data shared) for trial rewrites."""
        tmap: dict[int, TTensor] = {}

        def T(t):
            if t is None:
                return None
            n = tmap.get(id(t))
            if n is None:
                n = TTensor(t.name, t.shape, t.dtype, t.data, t.quant)
                tmap[id(t)] = n
            return n

        h = TGraph()
        h.inputs = [T(t) for t in self.inputs]
        for op in self.ops:
            h.add(
                op.op,
                [T(t) for t in op.inputs],
                [T(t) for t in op.outputs],
                dict(op.options),
                op.origin,
            )
        h.outputs = [T(t) for t in self.outputs]
        h.input_names = list(self.input_names)
        h.output_names = list(self.output_names)
        h.subgraphs = list(self.subgraphs)
        return h

    def replace_with(self, other: TGraph) -> None:
        self.__dict__.update(other.__dict__)

    def users_of(self, t: TTensor) -> list[TOp]:
        return list(dict.fromkeys(t.users))

    def count(self, op: str) -> int:
        return sum(1 for o in self.ops if o.op == op)

    def __str__(self) -> str:
        lines = [f"inputs: {self.inputs}"]
        lines += [f"  {o!r}" for o in self.ops]
        lines.append(f"outputs: {self.outputs}")
        return "\n".join(lines)


def _np_name(dt) -> str:
    n = np.dtype(dt).name
    return "bool" if n == "bool_" else n


def np_name(dt) -> str:
    return _np_name(dt)


def all_tensors(g: TGraph) -> Iterable[TTensor]:
    seen = set()
    for t in g.inputs:
        if id(t) not in seen:
            seen.add(id(t))
            yield t
    for op in g.ops:
        for t in list(op.inputs) + list(op.outputs):
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                yield t
