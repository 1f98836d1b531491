"""The lowering context: what a lowering rule uses to turn one ATen node into TFLite ops.

A rule reads its node's arguments (``ctx.args(node)`` binds them to the ATen schema, defaults
included), fetches input tensors with ``ctx.t(value)`` (constants are materialized on demand,
cached per Value), emits TFLite ops with ``ctx.emit`` and the small helpers below (reshape,
transpose, cast …), and binds each ATen output Value to the TFLite tensor holding it with
``ctx.bind``.  Rules work in logical (PyTorch) layout; see tfl.py for the layout invariant.

Dtypes: torch dtypes map to TFLite dtypes one to one, except int64 (stored as int32 when the
int-range pass proved the values fit, else kept int64) and float64 / float16 / bfloat16
(computed and stored as float32: TFLite kernels compute in fp32; the weights' values are kept
exactly, and a half model's file takes and returns float32).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from ..errors import ConversionError
from ..ir import Graph, Node, Value
from .tfl import TGraph, TTensor, np_name

_TORCH_TO_TFL = {
    torch.float32: "float32",
    torch.float16: "float32",  # fp16/bf16 models compute in float32 (TFLite kernels are fp32)
    torch.float64: "float32",
    torch.bfloat16: "float32",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def fits_int32(v: Value) -> bool:
    r = v.meta.get("range")
    return r is not None and r[0] >= INT32_MIN and r[1] <= INT32_MAX


def tfl_dtype(v: Value) -> str:
    if v.dtype not in _TORCH_TO_TFL:
        raise ConversionError(f"unsupported dtype {v.dtype} for value {v.name}")
    if v.dtype == torch.int64 and fits_int32(v):
        return "int32"
    return _TORCH_TO_TFL[v.dtype]


def torch_to_tfl(dt: torch.dtype) -> str:
    return _TORCH_TO_TFL[dt]


def const_array(t: torch.Tensor, dtype: str) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.float()
    arr = t.numpy()
    if dtype == "int32" and arr.dtype == np.int64:
        if arr.size and (arr.min() < INT32_MIN or arr.max() > INT32_MAX):
            raise ConversionError("int64 constant does not fit int32")
    return np.asarray(arr.astype(dtype, copy=False), order="C")


class Ctx:
    def __init__(self, graph: Graph, tg: TGraph):
        self.graph = graph
        self.tg = tg
        self._map: dict[int, TTensor] = {}
        self.node: Node | None = None

    # ---- errors ------------------------------------------------------------------------------
    def error(self, message: str, hint: str | None = None) -> ConversionError:
        if self.node is not None:
            return self.node.error(message, hint)
        return ConversionError(message, hint=hint)

    # ---- arguments ---------------------------------------------------------------------------
    def args(self, node: Node) -> SimpleNamespace:
        """Bind node.args/kwargs to the op's schema argument names (defaults filled in)."""
        schema = node.target._schema
        out = {}
        pos = list(node.args)
        for i, a in enumerate(schema.arguments):
            if i < len(pos) and not a.kwarg_only:
                out[a.name] = pos[i]
            elif a.name in node.kwargs:
                out[a.name] = node.kwargs[a.name]
            elif a.has_default_value():
                out[a.name] = a.default_value
            else:
                out[a.name] = None
        return SimpleNamespace(**out)

    # ---- values <-> tensors ------------------------------------------------------------------
    def t(self, v: Value) -> TTensor:
        t = self._map.get(id(v))
        if t is not None:
            return t
        if v.const is not None:
            dt = tfl_dtype(v)
            t = self.tg.const(v.name, const_array(v.const, dt))
            self._map[id(v)] = t
            return t
        raise self.error(f"internal: value {v.name} used before it was lowered")

    def bind(self, v: Value, t: TTensor) -> None:
        want = tfl_dtype(v)
        if t.dtype != want:
            t = self.cast(t, want)
        self._map[id(v)] = t

    def has(self, v: Value) -> bool:
        return id(v) in self._map

    def dtype(self, v: Value) -> str:
        return tfl_dtype(v)

    def shape(self, v: Value) -> list[int]:
        """Shape of an ATen Value with -1 for dynamic dims (fine for bookkeeping; use
        ``static_shape`` when the numbers become data)."""
        return [d if isinstance(d, int) else -1 for d in v.shape]

    def static_shape(self, v: Value) -> list[int]:
        if not v.is_static:
            raise self.error(
                f"dynamic shape {list(v.shape)} is not supported here",
                hint="export with static shapes for this part of the model",
            )
        return [int(d) for d in v.shape]

    def shape_vector(self, parts) -> TTensor:
        """An int32 shape vector from ints and rank-0 integer Values (symbolic sizes).  Constant
        when at most one entry is unknown (it becomes -1, which RESHAPE infers)."""
        if all(isinstance(p, int) for p in parts):
            return self.i32(parts)
        pieces, buf = [], []
        for p in parts:
            if isinstance(p, int):
                buf.append(p)
                continue
            if buf:
                pieces.append(self.i32(buf))
                buf = []
            t = p if isinstance(p, TTensor) else self.t(p)
            t = self.cast(t, "int32")
            pieces.append(self.reshape(t, [1]))
        if buf:
            pieces.append(self.i32(buf))
        return self.emit(
            "CONCATENATION",
            pieces,
            [len(parts)],
            "int32",
            dict(axis=0, fused_activation_function="NONE"),
        )

    # ---- emitting ----------------------------------------------------------------------------
    def name(self, suffix: str = "") -> str:
        base = self.node.name if self.node is not None else "wick"
        return f"{base}{'/' + suffix if suffix else ''}"

    def emit(self, op: str, inputs, shape, dtype: str, options=None, name=None) -> TTensor:
        out = self.tg.tensor(name or self.name(op.lower()), shape, dtype)
        self.tg.add(op, inputs, [out], options, origin=self.node)
        return out

    def emit_multi(self, op: str, inputs, outs, options=None) -> list[TTensor]:
        ts = [self.tg.tensor(self.name(f"{op.lower()}_{i}"), s, d) for i, (s, d) in enumerate(outs)]
        self.tg.add(op, inputs, ts, options, origin=self.node)
        return ts

    def const(self, data, dtype: str | None = None, name: str = "const") -> TTensor:
        arr = np.asarray(data)
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        elif arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            arr = arr.astype(np.int32)
        return self.tg.const(self.name(name), arr)

    def i32(self, values, name: str = "shape") -> TTensor:
        return self.const(np.asarray(values, dtype=np.int32).reshape(-1), "int32", name)

    def scalar(self, x, dtype: str) -> TTensor:
        return self.const(np.asarray(x, dtype=dtype), dtype, "scalar")

    def dim_of(self, x: TTensor, i: int):
        """Size of dim i of x: an int when static, else a rank-0 int32 tensor (SHAPE/SLICE)."""
        if x.shape[i] >= 0:
            return x.shape[i]
        shape = self.emit("SHAPE", [x], [x.rank], "int32", dict(out_type="int32"))
        one = self.emit(
            "SLICE", [shape, self.i32([i], "begin"), self.i32([1], "size")], [1], "int32"
        )
        return self.reshape(one, [])

    # ---- small op helpers --------------------------------------------------------------------
    def reshape(self, x: TTensor, shape) -> TTensor:
        shape = [int(d) for d in shape]
        unknown = sum(1 for d in shape if d < 0)
        if list(x.shape) == shape:
            return x  # same dims (dynamic ones come from the same source in every caller)
        if unknown > 1:
            raise self.error(
                f"reshape to {shape} with several dynamic dims",
                hint="make all but one of these dims static when exporting",
            )
        return self.emit("RESHAPE", [x, self.i32(shape)], shape, x.dtype)

    def reshape_value(self, x: TTensor, src: Value, out: Value) -> TTensor:
        """RESHAPE x (the lowered ``src``) to the shape of ATen Value ``out``.  With several
        dynamic dims the target shape is built at runtime, taking each symbolic output dim
        from the input dim with the same symbolic expression."""
        shape = self.shape(out)
        if sum(1 for d in shape if d < 0) <= 1:
            return self.reshape(x, shape)
        parts = []
        for d in out.shape:
            if isinstance(d, int):
                parts.append(d)
                continue
            j = next((j for j, e in enumerate(src.shape) if e == d), None)
            if j is None:
                raise self.error(
                    f"reshape to {list(out.shape)}: cannot find the size {d} in the input",
                    hint="make all but one of these dims static when exporting",
                )
            parts.append(self.dim_of(x, j))
        return self.emit("RESHAPE", [x, self.shape_vector(parts)], shape, x.dtype)

    def transpose(self, x: TTensor, perm) -> TTensor:
        perm = [int(p) for p in perm]
        if perm == list(range(len(perm))):
            return x
        shape = [x.shape[p] for p in perm]
        return self.emit("TRANSPOSE", [x, self.i32(perm, "perm")], shape, x.dtype)

    def cast(self, x: TTensor, dtype: str) -> TTensor:
        if x.dtype == dtype:
            return x
        if x.is_const:
            return self.tg.const(x.name + f"_{dtype}", x.data.astype(dtype))
        return self.emit(
            "CAST", [x], x.shape, dtype, dict(in_data_type=x.dtype, out_data_type=dtype)
        )

    def binary(self, op: str, a: TTensor, b: TTensor, dtype: str | None = None, options=None):
        shape = broadcast_shapes(a.shape, b.shape)
        return self.emit(op, [a, b], shape, dtype or a.dtype, options)

    def unary(self, op: str, a: TTensor, options=None) -> TTensor:
        return self.emit(op, [a], a.shape, a.dtype, options)


def broadcast_shapes(a, b) -> list[int]:
    r = max(len(a), len(b))
    a = [1] * (r - len(a)) + list(a)
    b = [1] * (r - len(b)) + list(b)
    out = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif x == -1 or y == -1:
            out.append(-1)
        else:
            raise ConversionError(f"shapes {a} and {b} do not broadcast")
    return out


def np_dtype_name(dt) -> str:
    return np_name(dt)
