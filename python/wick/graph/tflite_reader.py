"""Read a .tflite file into plain Python objects, for viewing (not for running).

    read_tflite(data) -> TFLiteFile
        .subgraphs[i].operators[j]   op type, options (decoded), input/output tensor indices,
                                     the subgraphs it calls (composite decomposition, WHILE/IF ...)
        .subgraphs[i].tensors[k]     name, shape, dtype, quantization, constant?, weight stats
        .signatures                  key -> subgraph index, input/output names
        .metadata, .description, .version

Every fact of the format (field ids, op codes, option tables, enums) comes from
``wick.tflite.schema``; navigation uses the ``flatbuffers`` runtime's ``Table``. Nothing here
imports TensorFlow.

Trust: this reader assumes the bytes passed the wick C verifier first (``validate_with_runtime``
does that, so a bad file gets exactly the message `wick inspect` prints). Without the C library
it still refuses out-of-range offsets with :class:`TFLiteReadError` (every flatbuffer access is
wrapped), but its checks are not the verifier's.

Where to look next: ``from_tflite.py`` turns a TFLiteFile into the viewer's generic graph.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from flatbuffers import number_types as N
from flatbuffers.table import Table

from ..tflite import schema as S
from ..tflite.ops import name_of
from .stats import array_stats, dequantize

__all__ = [
    "TFLiteFile",
    "TFLiteReadError",
    "Operator",
    "Subgraph",
    "Tensor",
    "Signature",
    "read_tflite",
    "validate_with_runtime",
    "weight_stats",
]


class TFLiteReadError(ValueError):
    """The bytes are not a .tflite file this reader can walk."""


# numpy dtypes of TensorType values whose constants we can summarize.
_NP = {
    "FLOAT32": np.float32,
    "FLOAT16": np.float16,
    "FLOAT64": np.float64,
    "INT32": np.int32,
    "INT64": np.int64,
    "INT16": np.int16,
    "INT8": np.int8,
    "UINT8": np.uint8,
    "UINT16": np.uint16,
    "UINT32": np.uint32,
    "UINT64": np.uint64,
    "BOOL": np.bool_,
}

# Short dtype spellings for edge labels.
SHORT_DTYPE = {
    "FLOAT32": "f32",
    "FLOAT16": "f16",
    "FLOAT64": "f64",
    "BFLOAT16": "bf16",
    "INT32": "i32",
    "INT64": "i64",
    "INT16": "i16",
    "INT8": "i8",
    "INT4": "i4",
    "INT2": "i2",
    "UINT8": "u8",
    "UINT16": "u16",
    "UINT32": "u32",
    "UINT64": "u64",
    "UINT4": "u4",
    "BOOL": "bool",
    "STRING": "str",
    "COMPLEX64": "c64",
    "COMPLEX128": "c128",
    "RESOURCE": "resource",
    "VARIANT": "variant",
    "FLOAT8_E4M3FN": "f8e4m3",
    "FLOAT8_E5M2": "f8e5m2",
}

# Options fields that name subgraphs, per options table: how an operator calls other subgraphs.
SUBGRAPH_FIELDS = {
    "StableHLOCompositeOptions": ("decomposition_subgraph_index",),
    "WhileOptions": ("cond_subgraph_index", "body_subgraph_index"),
    "StablehloWhileOptions": ("cond_subgraph_index", "body_subgraph_index"),
    "IfOptions": ("then_subgraph_index", "else_subgraph_index"),
    "CallOnceOptions": ("init_subgraph_index",),
    "CallOptions": ("subgraph",),
    "StablehloReduceOptions": ("body_subgraph_index",),
    "StablehloReduceWindowOptions": ("body_subgraph_index",),
    "StablehloScatterOptions": ("update_computation_subgraph_index",),
    "StablehloSortOptions": ("comparator_subgraph_index",),
    "StablehloCaseOptions": ("branch_subgraph_indices",),
}

# (union, union type number) -> options table name
_TABLE_BY_UNION = {(t.union, t.type): name for name, t in S.OPTIONS_TABLES.items()}
_ENUM_NAMES = {e: {v: k for k, v in members.items()} for e, members in S.ENUMS.items()}
_SCALAR = {
    "bool": N.BoolFlags,
    "int8": N.Int8Flags,
    "uint8": N.Uint8Flags,
    "int16": N.Int16Flags,
    "uint16": N.Uint16Flags,
    "int32": N.Int32Flags,
    "uint32": N.Uint32Flags,
    "int64": N.Int64Flags,
    "uint64": N.Uint64Flags,
    "float32": N.Float32Flags,
    "float64": N.Float64Flags,
}


class _Tab:
    """A flatbuffers Table addressed by *field id* (vtable slot = 4 + 2 * id)."""

    __slots__ = ("t",)

    def __init__(self, buf, pos: int):
        self.t = Table(buf, pos)

    def _off(self, fid: int) -> int:
        return self.t.Offset(4 + 2 * fid)

    def has(self, fid: int) -> bool:
        return self._off(fid) != 0

    def scalar(self, fid: int, kind: str, default=0):
        o = self._off(fid)
        return self.t.Get(_SCALAR[kind], self.t.Pos + o) if o else default

    def string(self, fid: int) -> str | None:
        o = self._off(fid)
        if not o:
            return None
        return self.t.String(self.t.Pos + o).decode("utf-8", errors="replace")

    def table(self, fid: int) -> _Tab | None:
        o = self._off(fid)
        return _Tab(self.t.Bytes, self.t.Indirect(self.t.Pos + o)) if o else None

    def tables(self, fid: int) -> list[_Tab]:
        o = self._off(fid)
        if not o:
            return []
        start, n = self.t.Vector(o), self.t.VectorLen(o)
        return [_Tab(self.t.Bytes, self.t.Indirect(start + 4 * i)) for i in range(n)]

    def array(self, fid: int, kind: str) -> np.ndarray | None:
        o = self._off(fid)
        if not o:
            return None
        start, n = self.t.Vector(o), self.t.VectorLen(o)
        dt = np.dtype(kind).newbyteorder("<")
        end = start + n * dt.itemsize
        if end > len(self.t.Bytes):
            raise TFLiteReadError(f"vector at {start} runs past the end of the file")
        return np.frombuffer(self.t.Bytes, dtype=dt, count=n, offset=start)

    def byte_span(self, fid: int) -> tuple[int, int] | None:
        """(offset, length) of a [ubyte] vector in the file, without copying."""
        o = self._off(fid)
        if not o:
            return None
        start, n = self.t.Vector(o), self.t.VectorLen(o)
        if start + n > len(self.t.Bytes):
            raise TFLiteReadError(f"byte vector at {start} runs past the end of the file")
        return start, n

    def strings(self, fid: int) -> list[str]:
        o = self._off(fid)
        if not o:
            return []
        start, n = self.t.Vector(o), self.t.VectorLen(o)
        return [self.t.String(start + 4 * i).decode("utf-8", errors="replace") for i in range(n)]


# ---------------------------------------------------------------------------------- data model


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str  # TensorType name, e.g. "FLOAT32"
    shape_signature: tuple[int, ...] | None = None  # -1 marks a dynamic dim
    buffer: int = 0
    is_variable: bool = False
    sparse: bool = False
    quant: dict | None = None  # scale/zero_point lists, quantized_dimension, min/max
    constant: bool = False  # has data in the file
    nbytes: int = 0  # bytes of constant data
    offset: int = 0  # where the constant data starts in the file
    stats: dict | None = None  # weight statistics of constants (see weight_stats)

    @property
    def short_dtype(self) -> str:
        return SHORT_DTYPE.get(self.dtype, self.dtype.lower())

    @property
    def is_quantized(self) -> bool:
        return bool(self.quant and self.quant.get("scale"))


@dataclass
class Operator:
    index: int
    op: str  # builtin name, or the custom code for CUSTOM ops
    version: int
    inputs: list[int]  # tensor indices, -1 = optional input absent
    outputs: list[int]
    options: dict[str, Any] = field(default_factory=dict)
    options_table: str | None = None
    custom: bool = False
    calls: dict[str, int] = field(default_factory=dict)  # role -> subgraph index
    intermediates: list[int] = field(default_factory=list)


@dataclass
class Subgraph:
    index: int
    name: str
    tensors: list[Tensor]
    operators: list[Operator]
    inputs: list[int]
    outputs: list[int]


@dataclass
class Signature:
    key: str
    subgraph: int
    inputs: dict[str, int]  # signature name -> tensor index
    outputs: dict[str, int]


@dataclass
class TFLiteFile:
    version: int
    description: str
    subgraphs: list[Subgraph]
    signatures: list[Signature]
    metadata: dict[str, int]  # name -> byte size
    size: int

    def callers(self) -> dict[int, list[tuple[int, int, str]]]:
        """subgraph index -> [(calling subgraph, operator index, role)]."""
        out: dict[int, list[tuple[int, int, str]]] = {}
        for sg in self.subgraphs:
            for op in sg.operators:
                for role, idx in op.calls.items():
                    out.setdefault(idx, []).append((sg.index, op.index, role))
        return out


# ------------------------------------------------------------------------------------ reading


def validate_with_runtime(data: bytes) -> None:
    """Load (parse + verify) the bytes with wick's C library, exactly as `wick inspect` does its
    first step; raise :class:`wick.WickError` with the verifier's message on a bad file.

    Only the *load* step runs: a viewer must also show files whose operators wick cannot run
    yet, so interpreter creation (which would reject unsupported operators) is skipped. When
    the C library is not installed, nothing is checked here (the reader's own checks remain)."""
    import ctypes

    from .. import runtime

    try:
        lib = runtime._library()
    except (runtime.WickError, OSError):
        return
    err = runtime._ErrorInfo()
    handle = ctypes.c_void_p()
    buf = ctypes.c_char_p(bytes(data))
    st = lib.wick_model_load_buffer(buf, len(data), None, err, ctypes.byref(handle))
    if st:
        raise runtime.WickError(st, err.message.decode(errors="replace"))
    lib.wick_model_destroy(handle)


def read_tflite(data: bytes | bytearray | memoryview, *, stats: bool = True) -> TFLiteFile:
    """Parse a .tflite file. ``stats`` computes weight statistics of every constant tensor."""
    data = bytes(data)
    try:
        return _read(data, stats)
    except TFLiteReadError:
        raise
    except (struct.error, IndexError, ValueError, TypeError, OverflowError) as e:
        raise TFLiteReadError(f"cannot read the flatbuffer: {e}") from None


def _read(data: bytes, stats: bool) -> TFLiteFile:
    if len(data) < 8:
        raise TFLiteReadError(f"{len(data)} bytes is too short for a .tflite file")
    if data[4:8] != S.FILE_IDENTIFIER:
        raise TFLiteReadError(f"file identifier is {data[4:8]!r}, expected {S.FILE_IDENTIFIER!r}")
    root = _Tab(data, struct.unpack_from("<I", data, 0)[0])
    F = S.CORE_FIELDS["Model"]
    version = root.scalar(F["version"], "uint32")
    description = root.string(F["description"]) or ""

    buffers = []  # (offset, length) in the file, or None
    for b in root.tables(F["buffers"]):
        span = b.byte_span(S.CORE_FIELDS["Buffer"]["data"])
        if span is None or span[1] == 0:
            off = b.scalar(S.CORE_FIELDS["Buffer"]["offset"], "uint64")
            size = b.scalar(S.CORE_FIELDS["Buffer"]["size"], "uint64")
            span = (off, size) if off > 1 and size and off + size <= len(data) else None
        buffers.append(span)

    opcodes = []  # (name, version, custom)
    FC = S.CORE_FIELDS["OperatorCode"]
    for oc in root.tables(F["operator_codes"]):
        code = max(
            oc.scalar(FC["deprecated_builtin_code"], "int8"), oc.scalar(FC["builtin_code"], "int32")
        )
        version_ = oc.scalar(FC["version"], "int32", 1)
        name = name_of(code)
        if name == "CUSTOM":
            opcodes.append((oc.string(FC["custom_code"]) or "CUSTOM", version_, True))
        else:
            opcodes.append((name, version_, False))

    subgraphs = [
        _read_subgraph(i, sg, opcodes, buffers, data, stats)
        for i, sg in enumerate(root.tables(F["subgraphs"]))
    ]

    signatures = []
    FS, FT = S.CORE_FIELDS["SignatureDef"], S.CORE_FIELDS["TensorMap"]

    def tmap(sd: _Tab, fid: int) -> dict[str, int]:
        return {
            (m.string(FT["name"]) or ""): m.scalar(FT["tensor_index"], "uint32")
            for m in sd.tables(fid)
        }

    for sd in root.tables(F["signature_defs"]):
        signatures.append(
            Signature(
                sd.string(FS["signature_key"]) or "",
                sd.scalar(FS["subgraph_index"], "uint32"),
                tmap(sd, FS["inputs"]),
                tmap(sd, FS["outputs"]),
            )
        )

    metadata = {}
    FM = S.CORE_FIELDS["Metadata"]
    for m in root.tables(F["metadata"]):
        b = m.scalar(FM["buffer"], "uint32")
        span = buffers[b] if b < len(buffers) else None
        metadata[m.string(FM["name"]) or ""] = span[1] if span else 0
    return TFLiteFile(version, description, subgraphs, signatures, metadata, len(data))


def _read_subgraph(index, sg: _Tab, opcodes, buffers, data: bytes, stats: bool) -> Subgraph:
    F = S.CORE_FIELDS["SubGraph"]
    FT = S.CORE_FIELDS["Tensor"]
    FQ = S.CORE_FIELDS["QuantizationParameters"]
    tensors = []
    for ti, t in enumerate(sg.tables(F["tensors"])):
        shape = t.array(FT["shape"], "int32")
        sig = t.array(FT["shape_signature"], "int32")
        dtype = S.TENSOR_TYPE_NAMES.get(t.scalar(FT["type"], "int8"), "UNKNOWN")
        q = t.table(FT["quantization"])
        quant = None
        if q is not None:
            quant = {}
            for key, kind in (("scale", "float32"), ("zero_point", "int64")):
                a = q.array(FQ[key], kind)
                if a is not None and len(a):
                    quant[key] = a.tolist()
            for key in ("min", "max"):
                a = q.array(FQ[key], "float32")
                if a is not None and len(a):
                    quant[key] = a.tolist()
            if "scale" in quant and len(quant["scale"]) > 1:
                quant["quantized_dimension"] = q.scalar(FQ["quantized_dimension"], "int32")
            if q.has(FQ["details"]):
                quant["details"] = "custom/blockwise quantization details present"
            quant = quant or None
        buf = t.scalar(FT["buffer"], "uint32")
        span = buffers[buf] if 0 < buf < len(buffers) else None
        tensor = Tensor(
            index=ti,
            name=t.string(FT["name"]) or f"tensor_{ti}",
            shape=tuple(int(d) for d in shape) if shape is not None else (),
            dtype=dtype,
            shape_signature=tuple(int(d) for d in sig) if sig is not None else None,
            buffer=buf,
            is_variable=bool(t.scalar(FT["is_variable"], "bool", False)),
            sparse=t.has(FT["sparsity"]),
            quant=quant,
            constant=span is not None,
            nbytes=span[1] if span else 0,
            offset=span[0] if span else 0,
        )
        if stats and span is not None:
            tensor.stats = weight_stats(data, span, tensor)
        tensors.append(tensor)

    FO = S.CORE_FIELDS["Operator"]
    operators = []
    for oi, o in enumerate(sg.tables(F["operators"])):
        code = o.scalar(FO["opcode_index"], "uint32")
        name, version, custom = opcodes[code] if code < len(opcodes) else (f"?{code}", 1, False)
        ins = o.array(FO["inputs"], "int32")
        outs = o.array(FO["outputs"], "int32")
        inter = o.array(FO["intermediates"], "int32")
        op = Operator(
            oi,
            name,
            version,
            ins.tolist() if ins is not None else [],
            outs.tolist() if outs is not None else [],
            custom=custom,
            intermediates=inter.tolist() if inter is not None else [],
        )
        if custom:
            span = o.byte_span(FO["custom_options"])
            if span:
                op.options = _custom_options(data, span)
        else:
            for union, fid in ((1, FO["builtin_options"]), (2, FO["builtin_options_2"])):
                utype = o.scalar(fid, "uint8")
                tab = o.table(fid + 1) if utype else None
                tname = _TABLE_BY_UNION.get((union, utype))
                if tab is None or tname is None:
                    continue
                op.options_table = tname
                op.options = _decode_options(tab, S.OPTIONS_TABLES[tname])
                for role in SUBGRAPH_FIELDS.get(tname, ()):
                    v = op.options.get(role)
                    if isinstance(v, list):
                        for k, idx in enumerate(v):
                            op.calls[f"{role}[{k}]"] = int(idx)
                    elif v is not None:
                        op.calls[role.replace("_subgraph_index", "").replace("_index", "")] = int(v)
        operators.append(op)
    ins = sg.array(F["inputs"], "int32")
    outs = sg.array(F["outputs"], "int32")
    return Subgraph(
        index,
        sg.string(F["name"]) or "",
        tensors,
        operators,
        ins.tolist() if ins is not None else [],
        outs.tolist() if outs is not None else [],
    )


def _decode_options(tab: _Tab, table: S.OptionsTable) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in table.fields:
        if f.type == "string":
            v = tab.string(f.id)
        elif f.type.startswith("["):
            kind = f.type[1:-1]
            if kind == "uint8" and f.name == "composite_attributes":
                span = tab.byte_span(f.id)
                v = _flex(tab.t.Bytes, span) if span else None
            else:
                a = tab.array(f.id, kind)
                v = a.tolist() if a is not None else None
        else:
            v = tab.scalar(f.id, f.type, f.default)
            if f.enum:
                v = _ENUM_NAMES.get(f.enum, {}).get(v, v)
            elif f.type == "float32":
                v = float(np.float32(v))
        if v is not None:
            out[f.name] = v
    return out


def _flex(data: bytes, span) -> Any:
    from flatbuffers import flexbuffers

    raw = bytes(data[span[0] : span[0] + span[1]])
    try:
        return _plain(flexbuffers.Loads(raw))
    except Exception:  # any undecodable blob is shown as its size, never fatal
        return f"<{len(raw)} bytes>"


def _custom_options(data: bytes, span) -> dict[str, Any]:
    decoded = _flex(data, span)
    if isinstance(decoded, dict):
        return decoded
    return {"custom_options": f"<{span[1]} bytes>"}


def _plain(v):
    """flexbuffer values -> JSON-friendly Python values (bytes shown by size, long lists cut)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        items = [_plain(x) for x in v[:64]]
        return items + ([f"... {len(v)} items"] if len(v) > 64 else [])
    if isinstance(v, (bytes, bytearray)):
        return f"<{len(v)} bytes>"
    if isinstance(v, float):
        return float(v)
    return v


# ------------------------------------------------------------------------------ weight stats


def weight_stats(data: bytes, span: tuple[int, int], t: Tensor) -> dict | None:
    """Statistics of a constant tensor's values (see ``stats.array_stats``).

    Quantized integer weights are summarized as *real* values ((q - zero_point) * scale, per
    channel along ``quantized_dimension``); the raw integer range is kept as ``qmin``/``qmax``.
    Returns None for types numpy cannot view (int4, strings, ...). Statistics never fail a
    page: values numpy cannot summarize give None, not an error about the file."""
    try:
        return _weight_stats(data, span, t)
    except (ValueError, TypeError, OverflowError, FloatingPointError, MemoryError):
        return None


def _weight_stats(data: bytes, span: tuple[int, int], t: Tensor) -> dict | None:
    np_dtype = _NP.get(t.dtype)
    if np_dtype is None:
        return None
    dt = np.dtype(np_dtype).newbyteorder("<")
    off, n = span
    count = n // dt.itemsize
    if count == 0:
        return None
    # Constant buffers are often only 4-byte aligned: frombuffer copies nothing and numpy
    # handles unaligned views, so no cast to a wider type happens here.
    raw = np.frombuffer(data, dtype=dt, count=count, offset=off)
    if t.is_quantized and raw.dtype.kind in "iu":
        x = dequantize(raw, t.shape, t.quant or {})
        out = array_stats(x) if x is not None else {"count": int(count)}
        out["qmin"], out["qmax"] = int(raw.min()), int(raw.max())
        if x is not None:
            out["dequantized"] = True
        return out
    return array_stats(raw)
