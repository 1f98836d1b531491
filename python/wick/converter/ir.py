"""wick's graph IR: an ATen-level dataflow graph in SSA form (stage 2 of the pipeline).

    Graph ── nodes (topological order) ── Node(target=aten op, args/kwargs with Values,
       │                                       outputs=[Value...], stack_trace)
       └── inputs: [Value]  outputs: [Value]

Invariants:
* ``Graph.nodes`` is in topological order; every Value has at most one producer Node (``None``
  for graph inputs and constants) and knows its users.
* A Value carries the logical (PyTorch, e.g. NCHW) shape and torch dtype of the tensor it
  names, and ``const`` (a torch.Tensor) when its content is known at conversion time
  (parameters, buffers, lifted constants, folded results).
* Tuple-returning ATen ops (max_pool2d_with_indices, native_layer_norm, split …) have one
  output Value per element; FX ``getitem`` nodes do not exist here.
* ``args``/``kwargs`` keep the ATen schema's structure, with Values where FX had Nodes.
  Non-tensor arguments (ints, floats, lists, dtypes …) stay as Python values.
* Dims are ints, or ``Sym`` for a symbolic (dynamic) dim.

Where to look next: frontend/importer.py builds it; passes/ rewrite it; lower/ consumes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from .errors import ConversionError, user_frame


@dataclass(frozen=True)
class Sym:
    """A symbolic dimension (from torch.export dynamic shapes): its expression and hint."""

    expr: str
    hint: int

    def __repr__(self) -> str:
        return self.expr


Dim = int | Sym


class Value:
    __slots__ = ("name", "shape", "dtype", "const", "producer", "index", "users", "meta")

    def __init__(self, name: str, shape: tuple, dtype: torch.dtype, const=None):
        self.name = name
        self.shape: tuple[Dim, ...] = tuple(shape)
        self.dtype = dtype
        self.const: torch.Tensor | None = const
        self.producer: Node | None = None
        self.index = 0  # output position in the producer
        self.users: list[Node] = []
        self.meta: dict = {}

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def __repr__(self) -> str:
        c = " const" if self.is_const else ""
        return f"%{self.name}:{str(self.dtype).replace('torch.', '')}{list(self.shape)}{c}"


def _map_structure(x, fn):
    if isinstance(x, Value):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map_structure(i, fn) for i in x)
    if isinstance(x, dict):
        return {k: _map_structure(v, fn) for k, v in x.items()}
    return x


def iter_values(x) -> Iterator[Value]:
    if isinstance(x, Value):
        yield x
    elif isinstance(x, (list, tuple)):
        for i in x:
            yield from iter_values(i)
    elif isinstance(x, dict):
        for v in x.values():
            yield from iter_values(v)


class Node:
    __slots__ = ("name", "target", "args", "kwargs", "outputs", "stack_trace", "meta")

    def __init__(self, name: str, target: Any, args: tuple, kwargs: dict, stack_trace=None):
        self.name = name
        self.target = target
        self.args = tuple(args)
        self.kwargs = dict(kwargs)
        self.outputs: list[Value] = []
        self.stack_trace: str | None = stack_trace
        self.meta: dict = {}

    @property
    def op_name(self) -> str:
        return op_name(self.target)

    @property
    def inputs(self) -> list[Value]:
        """Tensor inputs in argument order (with repeats)."""
        return list(iter_values(self.args)) + list(iter_values(self.kwargs))

    @property
    def out(self) -> Value:
        return self.outputs[0]

    def source(self) -> str | None:
        return user_frame(self.stack_trace)

    def error(self, message: str, hint: str | None = None) -> ConversionError:
        return ConversionError(message, op=self.op_name, source=self.source(), hint=hint)

    def __repr__(self) -> str:
        outs = ", ".join(map(repr, self.outputs))
        return f"{outs} = {self.op_name}({self.args}, {self.kwargs})"


def op_name(target) -> str:
    """'aten.add.Tensor', 'quantized_decomposed.quantize_per_tensor.default', or the Python
    function's name for FX's operator.* nodes."""
    if isinstance(target, torch._ops.OpOverload):
        ns, name = target._schema.name.split("::")
        return f"{ns}.{name}.{target._overloadname}"
    return getattr(target, "__name__", str(target))


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    input_names: list[str] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)
    # the module's output structure (main graph only): torch.export's out_spec (a pytree
    # TreeSpec) and per leaf ("tensor", index into outputs) or ("constant", value)
    output_spec: object = None
    output_leaves: list = field(default_factory=list)
    _counter: int = 0

    # ---- construction ----------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        self._counter += 1
        return f"{base}_{self._counter}"

    def add_node(self, node: Node, outputs: list[Value], position: int | None = None) -> Node:
        node.outputs = outputs
        for i, v in enumerate(outputs):
            v.producer = node
            v.index = i
        for v in node.inputs:
            v.users.append(node)
        if position is None:
            self.nodes.append(node)
        else:
            self.nodes.insert(position, node)
        return node

    def constant(self, name: str, tensor: torch.Tensor) -> Value:
        t = tensor.detach()
        return Value(self.fresh(name), tuple(t.shape), t.dtype, const=t)

    # ---- rewriting ---------------------------------------------------------------------------
    def replace_uses(self, old: Value, new: Value) -> None:
        """Make every user of ``old`` (and the graph outputs) use ``new`` instead."""
        if old is new:
            return
        for user in list(old.users):
            user.args = _map_structure(user.args, lambda v: new if v is old else v)
            user.kwargs = _map_structure(user.kwargs, lambda v: new if v is old else v)
            new.users.append(user)
        old.users = []
        self.outputs = [new if v is old else v for v in self.outputs]

    def remove_node(self, node: Node) -> None:
        for v in node.inputs:
            while node in v.users:
                v.users.remove(node)
        self.nodes.remove(node)

    def is_output(self, v: Value) -> bool:
        return any(v is o for o in self.outputs)

    def release_constants(self) -> None:
        """Drop every Value's ``const`` (here and in nested branch graphs).  For after lowering:
        TFLite ops keep their ATen node as ``origin`` (for names and source lines), which would
        otherwise keep every folded weight alive next to its TFLite-layout copy."""
        for node in self.nodes:
            for v in [*iter_values(node.args), *iter_values(node.kwargs), *node.outputs]:
                v.const = None
            for branch in node.meta.get("branches", ()):
                branch.release_constants()
        for v in self.inputs:
            v.const = None

    def __str__(self) -> str:
        lines = [f"inputs: {self.inputs}"]
        lines += [f"  {n!r}" for n in self.nodes]
        lines.append(f"outputs: {self.outputs}")
        return "\n".join(lines)
