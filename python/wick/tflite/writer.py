"""Build standard ``.tflite`` files (flatbuffer, identifier ``TFL3``, schema version 3).

A small builder API on top of the ``flatbuffers`` runtime package::

    w = ModelWriter(description="wick")
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [1, 8, 8, 3], "float32")
    k = sg.add_constant("k", np.ones((4, 3, 3, 3), np.float32))
    b = sg.add_constant("b", np.zeros(4, np.float32))
    y = sg.add_tensor("y", [1, 8, 8, 4], "float32")
    sg.add_operator("CONV_2D", [x, k, b], [y],
                    options=dict(padding="SAME", stride_w=1, stride_h=1))
    sg.set_inputs([x]); sg.set_outputs([y])
    w.add_signature("serving_default", sg, inputs={"x": x}, outputs={"y": y})
    data = w.finish()

Invariants of every file written here
-------------------------------------
* Tensors are plain ``int`` indices into their subgraph; ``-1`` (or ``None``) in an operator's
  inputs marks an absent optional input.
* Buffer 0 is the empty sentinel.  Every constant owns a buffer (byte-identical constants share
  one); activations use buffer 0.  Constant data is 16-byte aligned in the file.
* Every field of an operator's options table is written explicitly, defaults included
  (readers disagree about defaults: padding SAME, strides 0, softmax beta 0.0 bite).  Option
  names are checked against ``schema.OPTIONS_TABLES``; unknown names raise ``ValueError``.
  Enum-valued options take the member name (``"SAME"``, ``"RELU6"``, ``"float32"``) or number.
* Each OperatorCode carries ``deprecated_builtin_code = min(code, 127)`` and ``builtin_code``.
  ``version=None`` picks the lowest version that covers the features used (``ops.min_version``:
  each op's rule in ``ops.py``, the rules in ``versions.py``); LiteRT refuses versions it does
  not know, so never newer.
* When the constant data exceeds ``external_data_threshold`` bytes (default just under 2 GiB,
  the flatbuffer limit), *all* constant data goes after the flatbuffer, each buffer
  16-byte aligned, referenced by ``Buffer.offset`` (from the start of the file) and ``size``.

Where to look next: ``ops.py`` (one record per operator), ``schema.py`` (the other facts),
``versions.py`` (op version rules), docs/format.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import flatbuffers
import numpy as np

from . import schema
from .ops import BY_NAME, min_version, name_of
from .versions import OpSig, TensorSig

__all__ = ["ModelWriter", "SubGraphWriter", "tflite_type", "numpy_dtype"]

# numpy-style dtype name -> TFLite TensorType name.
_DTYPE_TO_TFL = {
    "float32": "FLOAT32",
    "float16": "FLOAT16",
    "int32": "INT32",
    "uint8": "UINT8",
    "int64": "INT64",
    "string": "STRING",
    "bool": "BOOL",
    "int16": "INT16",
    "complex64": "COMPLEX64",
    "int8": "INT8",
    "float64": "FLOAT64",
    "complex128": "COMPLEX128",
    "uint64": "UINT64",
    "resource": "RESOURCE",
    "variant": "VARIANT",
    "uint32": "UINT32",
    "uint16": "UINT16",
    "int4": "INT4",
    "bfloat16": "BFLOAT16",
}
_TFL_TO_DTYPE = {v: k for k, v in _DTYPE_TO_TFL.items()}

_ALIGN = 16
DEFAULT_EXTERNAL_THRESHOLD = 2**31 - 2**26  # leave room for the flatbuffer itself


def _dtype_name(dtype) -> str:
    """Normalize a dtype given as numpy dtype, numpy-style name or TFLite type name."""
    if isinstance(dtype, str):
        if dtype in _DTYPE_TO_TFL:
            return dtype
        if dtype.upper() in _TFL_TO_DTYPE:
            return _TFL_TO_DTYPE[dtype.upper()]
        if dtype == "bfloat16":
            return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError as e:
        raise ValueError(f"unknown tensor dtype {dtype!r}") from e
    if name == "bool_":
        name = "bool"
    if name not in _DTYPE_TO_TFL:
        raise ValueError(f"dtype {name!r} has no TFLite tensor type")
    return name


def tflite_type(dtype) -> int:
    """TFLite TensorType number for a dtype (numpy dtype, 'float32' or 'FLOAT32')."""
    return schema.TENSOR_TYPES[_DTYPE_TO_TFL[_dtype_name(dtype)]]


def numpy_dtype(tflite_type_number: int) -> np.dtype:
    """numpy dtype for a TFLite TensorType number (raises for types numpy lacks)."""
    return np.dtype(_TFL_TO_DTYPE[schema.TENSOR_TYPE_NAMES[tflite_type_number]])


class _Tensor:
    __slots__ = (
        "name",
        "shape",
        "dtype",
        "buffer",
        "quant",
        "shape_signature",
        "is_variable",
        "sparsity",
    )

    def __init__(self, name, shape, dtype, buffer, quant, shape_signature, is_variable):
        self.sparsity = None  # normalized SparsityParameters (add_sparse_constant) or None
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.buffer = buffer
        self.quant = quant
        self.shape_signature = shape_signature
        self.is_variable = is_variable


class _Operator:
    __slots__ = ("opcode", "inputs", "outputs", "options", "custom_options", "intermediates")

    def __init__(self, opcode, inputs, outputs, options, custom_options, intermediates):
        self.opcode = opcode
        self.inputs = inputs
        self.outputs = outputs
        self.options = options  # (OptionsTable, {field: value}) or None
        self.custom_options = custom_options
        self.intermediates = intermediates


def _enum_value(enum: str, value) -> int:
    if isinstance(value, str):
        members = schema.ENUMS[enum]
        if value in members:
            return members[value]
        if enum == "TensorType":
            return tflite_type(value)
        raise ValueError(f"{value!r} is not a member of enum {enum} ({sorted(members)})")
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        if enum == "TensorType":
            return tflite_type(value)
    return int(value)


def _normalize_options(op: str, options: Mapping | None):
    """Check option names against the op's table; return (table, {name: value}) with every
    scalar field filled (explicit value or the schema default)."""
    table = schema.options_table(op)
    options = dict(options or {})
    if table is None:
        if options:
            raise ValueError(f"operator {op} has no builtin options, got {sorted(options)}")
        return None
    known = {f.name: f for f in table.fields}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown} for {op} ({schema.OP_OPTIONS[op]}: {sorted(known)})"
        )
    values = {}
    for f in table.fields:
        v = options.get(f.name, f.default)
        if v is None:
            continue
        if f.enum is not None and not f.type.startswith("["):
            v = _enum_value(f.enum, v)
        values[f.name] = v
    return table, values


class SubGraphWriter:
    """One subgraph: tensors, operators, inputs and outputs.  Create with ``add_subgraph``."""

    def __init__(self, model: ModelWriter, index: int, name: str):
        self._model = model
        self.index = index
        self.name = name
        self._tensors: list[_Tensor] = []
        self._operators: list[_Operator] = []
        self._inputs: list[int] = []
        self._outputs: list[int] = []

    # ---- tensors -------------------------------------------------------------------------
    def add_tensor(
        self,
        name: str,
        shape: Sequence[int | None],
        dtype="float32",
        quant: Mapping | None = None,
        shape_signature: Sequence[int] | None = None,
        *,
        is_variable: bool = False,
        buffer: int = 0,
    ) -> int:
        """Add a tensor and return its index.  ``None`` or ``-1`` in ``shape`` marks a dynamic
        dimension: the stored shape uses 1 there and ``shape_signature`` gets -1.

        ``quant`` keys: ``scale``, ``zero_point``, ``quantized_dimension`` (and optionally
        ``min``, ``max``); scalars are accepted for per-tensor parameters. Blockwise
        quantization (TFLite's BlockwiseQuantization details, symmetric): ``block_scales``
        (the index of the scales tensor in this subgraph) and ``block_size``."""
        dims = [(-1 if d is None else int(d)) for d in shape]
        if shape_signature is None and any(d < 0 for d in dims):
            shape_signature = dims
        static = [1 if d < 0 else d for d in dims]
        if shape_signature is not None:
            shape_signature = [int(d) for d in shape_signature]
            if len(shape_signature) != len(static):
                raise ValueError(f"tensor {name}: shape_signature rank differs from shape")
        q = None
        if quant is not None:
            q = {k: quant[k] for k in quant}
            unknown = set(q) - {
                "scale",
                "zero_point",
                "quantized_dimension",
                "min",
                "max",
                "block_scales",
                "block_size",
            }
            if unknown:
                raise ValueError(f"tensor {name}: unknown quantization keys {sorted(unknown)}")
            for k in ("scale", "zero_point", "min", "max"):
                if k in q and np.ndim(q[k]) == 0:
                    q[k] = [q[k]]
            if "scale" in q and "zero_point" not in q:
                q["zero_point"] = [0] * len(q["scale"])
            n = len(q.get("scale", []))
            if n > 1:
                qd = int(q.get("quantized_dimension", 0))
                if not 0 <= qd < len(static) or static[qd] != n:
                    raise ValueError(
                        f"tensor {name}: {n} per-channel scales but dimension {qd} of "
                        f"shape {static} disagrees"
                    )
            if len(q.get("zero_point", [])) != n:
                raise ValueError(f"tensor {name}: scale and zero_point lengths differ")
        self._tensors.append(
            _Tensor(name, static, _dtype_name(dtype), buffer, q, shape_signature, bool(is_variable))
        )
        return len(self._tensors) - 1

    def add_constant(self, name: str, array, quant: Mapping | None = None, *, dtype=None) -> int:
        """Add a constant tensor holding ``array`` (dtype from the array unless given)."""
        arr = np.asarray(array)
        if dtype is not None:
            arr = arr.astype(np.dtype(_dtype_name(dtype)), copy=False)
        dt = _dtype_name(arr.dtype)
        data = np.asarray(arr, order="C").astype(arr.dtype.newbyteorder("<"), copy=False)
        buf = self._model._add_buffer(memoryview(data.reshape(-1)).cast("B"))
        return self.add_tensor(name, list(arr.shape), dt, quant, buffer=buf)

    def add_packed_constant(
        self, name: str, shape: Sequence[int], dtype: str, data, quant: Mapping | None = None
    ) -> int:
        """Add a constant whose buffer is the bytes of ``data`` (a uint8 array or bytes) as
        given (int4: two values a byte, the first in the low nibble) with the logical
        ``shape``."""
        raw = np.ascontiguousarray(
            np.frombuffer(data, np.uint8) if isinstance(data, bytes) else data
        )
        buf = self._model._add_buffer(memoryview(raw.reshape(-1)).cast("B"))
        return self.add_tensor(name, list(shape), dtype, quant, buffer=buf)

    def add_sparse_constant(
        self,
        name: str,
        shape: Sequence[int],
        values,
        sparsity: Mapping,
        quant: Mapping | None = None,
        *,
        dtype=None,
    ) -> int:
        """Add a constant stored sparse (``Tensor.sparsity``): ``values`` are the stored
        elements in traversal order (the buffer), ``shape`` the dense shape.

        ``sparsity`` keys: ``traversal_order`` (list), optional ``block_map`` (list), and
        ``dim_metadata``: one dict per traversal level with ``format`` (``"DENSE"`` or
        ``"SPARSE_CSR"``), ``dense_size`` (DENSE levels and block sizes) and, for SPARSE_CSR,
        ``array_segments`` / ``array_indices`` as numpy arrays whose dtype (int32, uint16 or
        uint8) picks the SparseIndexVector member.  Written as given, not validated: tests use
        this to write malformed metadata too."""
        arr = np.asarray(values).reshape(-1)
        if dtype is not None:
            arr = arr.astype(np.dtype(_dtype_name(dtype)), copy=False)
        data = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        buf = self._model._add_buffer(memoryview(data).cast("B"))
        t = self.add_tensor(name, list(shape), _dtype_name(arr.dtype), quant, buffer=buf)
        levels = []
        for dm in sparsity["dim_metadata"]:
            fmt = _enum_value("DimensionType", dm.get("format", "DENSE"))
            level = {"format": fmt, "dense_size": int(dm.get("dense_size", 0))}
            for key in ("array_segments", "array_indices"):
                if dm.get(key) is not None:
                    v = np.asarray(dm[key])
                    if v.dtype.name not in _INDEX_VECTOR:
                        raise ValueError(
                            f"tensor {name}: {key} dtype {v.dtype} (int32/uint16/uint8)"
                        )
                    level[key] = v
            levels.append(level)
        self._tensors[t].sparsity = {
            "traversal_order": [int(v) for v in sparsity["traversal_order"]],
            "block_map": [int(v) for v in sparsity.get("block_map") or []],
            "dim_metadata": levels,
        }
        return t

    def tensor_shape(self, t: int) -> list[int]:
        return list(self._tensors[t].shape)

    def tensor_dtype(self, t: int) -> str:
        return self._tensors[t].dtype

    @property
    def num_tensors(self) -> int:
        return len(self._tensors)

    # ---- operators -----------------------------------------------------------------------
    def add_operator(
        self,
        op: str,
        inputs: Iterable[int | None],
        outputs: Iterable[int],
        options: Mapping | None = None,
        version: int | None = None,
        *,
        custom_code: str | None = None,
        custom_options: bytes | None = None,
        intermediates: Iterable[int] = (),
    ) -> int:
        """Append an operator; return its index in this subgraph.

        ``op`` is a BuiltinOperator name, or ``"CUSTOM"`` with ``custom_code`` (custom ops
        get version 1 unless given and carry ``custom_options`` bytes as FlexBuffers)."""
        ins = [-1 if t is None else int(t) for t in inputs]
        outs = [int(t) for t in outputs]
        for t in ins + outs:
            if t < -1 or t >= len(self._tensors):
                raise ValueError(f"{op}: tensor index {t} out of range")
        if custom_code is not None and op != "CUSTOM":
            raise ValueError("custom_code requires op='CUSTOM'")
        if op == "CUSTOM":
            if not custom_code:
                raise ValueError("a CUSTOM operator needs custom_code")
            if options:
                raise ValueError("custom operators take custom_options bytes, not options")
            opts = None
            ver = 1 if version is None else int(version)
        else:
            if op not in BY_NAME:
                raise ValueError(f"unknown builtin operator {op!r}")
            opts = _normalize_options(op, options)
            if version is None:
                ver = min_version(self._signature(op, ins, outs, opts))
            else:
                ver = int(version)
        opcode = self._model._opcode(op, custom_code, ver)
        self._operators.append(
            _Operator(
                opcode,
                ins,
                outs,
                opts,
                bytes(custom_options) if custom_options is not None else None,
                [int(t) for t in intermediates],
            )
        )
        return len(self._operators) - 1

    def _sig(self, t: int) -> TensorSig:
        if t < 0:
            return TensorSig("none")
        ten = self._tensors[t]
        scales = tuple(ten.quant.get("scale", ())) if ten.quant else ()
        return TensorSig(ten.dtype, tuple(ten.shape), scales)

    def _signature(self, op, ins, outs, opts) -> OpSig:
        values = dict(opts[1]) if opts else {}
        return OpSig(op, [self._sig(t) for t in ins], [self._sig(t) for t in outs], values)

    def set_inputs(self, tensors: Iterable[int]) -> None:
        self._inputs = [int(t) for t in tensors]

    def set_outputs(self, tensors: Iterable[int]) -> None:
        self._outputs = [int(t) for t in tensors]


class ModelWriter:
    """Collects subgraphs, buffers, operator codes and signatures; ``finish()`` returns bytes."""

    def __init__(
        self,
        description: str = "wick",
        *,
        external_data_threshold: int = DEFAULT_EXTERNAL_THRESHOLD,
    ):
        self.description = description
        self.external_data_threshold = int(external_data_threshold)
        self._subgraphs: list[SubGraphWriter] = []
        self._buffers: list[bytes] = [b""]  # buffer 0: the empty sentinel
        self._buffer_index: dict[bytes, int] = {}
        self._opcodes: list[tuple[int, str | None, int]] = []
        self._opcode_index: dict[tuple[int, str | None, int], int] = {}
        self._signatures: list[tuple[str, int, dict, dict]] = []
        self._metadata: list[tuple[str, int]] = []
        self._released = False

    def add_subgraph(self, name: str = "main") -> SubGraphWriter:
        sg = SubGraphWriter(self, len(self._subgraphs), name)
        self._subgraphs.append(sg)
        return sg

    def add_signature(
        self,
        key: str,
        subgraph: SubGraphWriter,
        inputs: Mapping[str, int],
        outputs: Mapping[str, int],
    ) -> None:
        """Name a subgraph's inputs and outputs (``serving_default`` is the usual key)."""
        self._signatures.append((key, subgraph.index, dict(inputs), dict(outputs)))

    def add_metadata(self, name: str, data: bytes) -> None:
        """Attach a named metadata blob (stored as a buffer)."""
        self._metadata.append((name, self._add_buffer(bytes(data), dedupe=False)))

    # ---- internals -----------------------------------------------------------------------
    def _add_buffer(self, data, dedupe: bool = True) -> int:
        """Register constant bytes (bytes or a byte memoryview; kept by reference, not copied)."""
        if dedupe and len(data) > 0:
            key = hashlib.sha256(data).digest() + len(data).to_bytes(8, "little")
            idx = self._buffer_index.get(key)
            if idx is not None:
                return idx
            self._buffer_index[key] = len(self._buffers)
        self._buffers.append(data)
        return len(self._buffers) - 1

    def _opcode(self, op: str, custom_code: str | None, version: int) -> int:
        key = (BY_NAME[op].code, custom_code, version)
        idx = self._opcode_index.get(key)
        if idx is None:
            idx = len(self._opcodes)
            self._opcodes.append(key)
            self._opcode_index[key] = idx
        return idx

    @property
    def operator_codes(self) -> list[tuple[str, int]]:
        """(operator name or custom code, version) for every OperatorCode, in file order."""
        return [(cc if cc else name_of(code), ver) for code, cc, ver in self._opcodes]

    # ---- serialization -------------------------------------------------------------------
    def finish(self, *, release: bool = False) -> bytes:
        """Serialize the model.  Returns the complete file contents.

        ``release``: drop each constant's data as soon as it is in the output, so the memory
        peak is the output plus what is left to copy, not the output plus every constant; the
        writer cannot be finished again after that."""
        if self._released:
            raise RuntimeError("ModelWriter.finish(release=True) already consumed this writer")
        self._released = release
        total = sum(len(b) for b in self._buffers)
        if total <= self.external_data_threshold:
            return bytes(self._build(None, release))  # the one copy out of the builder
        # Large model: write the flatbuffer with placeholder offsets (nonzero, so the field
        # is present and the table layout is final), measure it, then rebuild with the real
        # offsets.  uint64 fields have fixed width, so the second build has the same size.
        sizes = [len(b) for b in self._buffers]
        fb = self._build([(1, s) for s in sizes])
        pos = _round_up(len(fb), _ALIGN)
        placement = []
        for s in sizes:
            if s == 0:
                placement.append((0, 0))
                continue
            placement.append((pos, s))
            pos = _round_up(pos + s, _ALIGN)
        fb2 = self._build(placement)
        if len(fb2) != len(fb):
            raise AssertionError("flatbuffer size changed between passes")
        out = bytearray(pos)
        _copy_into(out, 0, fb2)
        del fb, fb2
        for i, (off, s) in enumerate(placement):
            if s:
                _copy_into(out, off, self._buffers[i])
                if release:
                    self._buffers[i] = b""
        return bytes(out)

    def _build(self, external: list[tuple[int, int]] | None, release: bool = False) -> bytearray:
        # Size the builder so it never has to grow (growing copies everything built so far):
        # data, its alignment padding, and a generous allowance for the tables.
        n_items = len(self._buffers) + sum(
            len(sg._tensors) + len(sg._operators) for sg in self._subgraphs
        )
        data_bytes = 0 if external else sum(len(d) + _ALIGN + 8 for d in self._buffers)
        b = flatbuffers.Builder(65536 + 512 * n_items + data_bytes)
        # Buffers first (largest data, placed at the end of the file).
        buf_offs = []
        for i, data in enumerate(self._buffers):
            vec = None
            if external is None and len(data) > 0:
                vec = _byte_vector(b, data, _ALIGN)
                if release:
                    self._buffers[i] = data = b""  # in the builder now: free the constant
            b.StartObject(3)
            if vec is not None:
                b.PrependUOffsetTRelativeSlot(0, vec, 0)
            if external is not None and external[i][1] > 0:
                b.PrependUint64Slot(1, external[i][0], 0)
                b.PrependUint64Slot(2, external[i][1], 0)
            buf_offs.append(b.EndObject())
        buffers_vec = _table_vector(b, buf_offs)

        subgraph_offs = [self._build_subgraph(b, sg) for sg in self._subgraphs]
        subgraphs_vec = _table_vector(b, subgraph_offs)

        opcode_offs = []
        for code, custom, version in self._opcodes:
            cc = b.CreateString(custom) if custom else None
            b.StartObject(4)
            b.PrependInt32Slot(3, code, None)
            b.PrependInt32Slot(2, version, None)
            if cc is not None:
                b.PrependUOffsetTRelativeSlot(1, cc, 0)
            b.PrependInt8Slot(0, min(code, 127), None)
            opcode_offs.append(b.EndObject())
        opcodes_vec = _table_vector(b, opcode_offs)

        sig_offs = []
        for key, sg_index, ins, outs in self._signatures:
            in_vec = _table_vector(b, [_tensor_map(b, n, t) for n, t in ins.items()])
            out_vec = _table_vector(b, [_tensor_map(b, n, t) for n, t in outs.items()])
            key_s = b.CreateString(key)
            b.StartObject(5)
            b.PrependUint32Slot(4, sg_index, None)
            b.PrependUOffsetTRelativeSlot(2, key_s, 0)
            b.PrependUOffsetTRelativeSlot(1, out_vec, 0)
            b.PrependUOffsetTRelativeSlot(0, in_vec, 0)
            sig_offs.append(b.EndObject())
        sigs_vec = _table_vector(b, sig_offs) if sig_offs else None

        meta_vec = None
        if self._metadata:
            meta_offs = []
            for name, buf in self._metadata:
                n = b.CreateString(name)
                b.StartObject(2)
                b.PrependUint32Slot(1, buf, None)
                b.PrependUOffsetTRelativeSlot(0, n, 0)
                meta_offs.append(b.EndObject())
            meta_vec = _table_vector(b, meta_offs)

        desc = b.CreateString(self.description)
        b.StartObject(8)
        if sigs_vec is not None:
            b.PrependUOffsetTRelativeSlot(7, sigs_vec, 0)
        if meta_vec is not None:
            b.PrependUOffsetTRelativeSlot(6, meta_vec, 0)
        b.PrependUOffsetTRelativeSlot(4, buffers_vec, 0)
        b.PrependUOffsetTRelativeSlot(3, desc, 0)
        b.PrependUOffsetTRelativeSlot(2, subgraphs_vec, 0)
        b.PrependUOffsetTRelativeSlot(1, opcodes_vec, 0)
        b.PrependUint32Slot(0, schema.SCHEMA_VERSION, None)
        model = b.EndObject()
        b.Finish(model, file_identifier=schema.FILE_IDENTIFIER)
        return memoryview(b.Bytes)[b.Head() :]

    def _build_subgraph(self, b: flatbuffers.Builder, sg: SubGraphWriter) -> int:
        tensor_offs = [_build_tensor(b, t) for t in sg._tensors]
        tensors_vec = _table_vector(b, tensor_offs)
        op_offs = [_build_operator(b, op) for op in sg._operators]
        ops_vec = _table_vector(b, op_offs)
        in_vec = _int_vector(b, sg._inputs, np.int32)
        out_vec = _int_vector(b, sg._outputs, np.int32)
        name = b.CreateString(sg.name)
        b.StartObject(5)
        b.PrependUOffsetTRelativeSlot(4, name, 0)
        b.PrependUOffsetTRelativeSlot(3, ops_vec, 0)
        b.PrependUOffsetTRelativeSlot(2, out_vec, 0)
        b.PrependUOffsetTRelativeSlot(1, in_vec, 0)
        b.PrependUOffsetTRelativeSlot(0, tensors_vec, 0)
        return b.EndObject()


# ---- flatbuffer helpers ----------------------------------------------------------------------


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _copy_into(dst: bytearray, offset: int, data) -> None:
    """dst[offset:offset+len(data)] = data without a temporary: slice assignment into a
    bytearray first copies any non-bytearray value (a weight's memoryview) into a new one."""
    src = memoryview(data)
    if src.format != "B" or src.ndim != 1:
        src = src.cast("B")
    with memoryview(dst) as view:
        view[offset : offset + src.nbytes] = src


def _byte_vector(b: flatbuffers.Builder, data: bytes, align: int) -> int:
    b.StartVector(1, len(data), align)
    b.head = b.head - len(data)
    _copy_into(b.Bytes, b.head, data)
    return b.EndVector()


def _int_vector(b: flatbuffers.Builder, values, dtype) -> int:
    return b.CreateNumpyVector(np.asarray(list(values), dtype=dtype).reshape(-1))


def _table_vector(b: flatbuffers.Builder, offsets: list[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _tensor_map(b: flatbuffers.Builder, name: str, tensor: int) -> int:
    n = b.CreateString(name)
    b.StartObject(2)
    b.PrependUint32Slot(1, int(tensor), None)
    b.PrependUOffsetTRelativeSlot(0, n, 0)
    return b.EndObject()


# SparseIndexVector union member per numpy dtype: (union type, values element type)
_INDEX_VECTOR = {"int32": (1, np.int32), "uint16": (2, np.uint16), "uint8": (3, np.uint8)}


def _build_sparsity(b: flatbuffers.Builder, sp: dict) -> int:
    levels = []
    for dm in sp["dim_metadata"]:
        unions = {}
        for key, type_slot in (("array_segments", 2), ("array_indices", 4)):
            if key in dm:
                kind, dt = _INDEX_VECTOR[dm[key].dtype.name]
                vec = _int_vector(b, dm[key], dt)
                b.StartObject(1)
                b.PrependUOffsetTRelativeSlot(0, vec, 0)
                unions[type_slot] = (kind, b.EndObject())
        b.StartObject(6)
        for type_slot, (kind, table) in sorted(unions.items(), reverse=True):
            b.PrependUOffsetTRelativeSlot(type_slot + 1, table, 0)
            b.PrependUint8Slot(type_slot, kind, 0)
        b.PrependInt32Slot(1, dm["dense_size"], None)
        b.PrependInt8Slot(0, dm["format"], None)
        levels.append(b.EndObject())
    dims = _table_vector(b, levels)
    block_map = _int_vector(b, sp["block_map"], np.int32) if sp["block_map"] else None
    order = _int_vector(b, sp["traversal_order"], np.int32)
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(2, dims, 0)
    if block_map is not None:
        b.PrependUOffsetTRelativeSlot(1, block_map, 0)
    b.PrependUOffsetTRelativeSlot(0, order, 0)
    return b.EndObject()


def _build_tensor(b: flatbuffers.Builder, t: _Tensor) -> int:
    sparsity = _build_sparsity(b, t.sparsity) if t.sparsity is not None else None
    quant = None
    if t.quant:
        q = t.quant
        parts = {}
        for k, fid, dt in (
            ("min", 0, np.float32),
            ("max", 1, np.float32),
            ("scale", 2, np.float32),
        ):
            if k in q:
                parts[fid] = _int_vector(b, q[k], dt)
        if "zero_point" in q:
            parts[3] = _int_vector(b, q["zero_point"], np.int64)
        details = None
        if "block_scales" in q:  # BlockwiseQuantization: scales, zero_points (-1: none), size
            b.StartObject(3)
            b.PrependInt32Slot(2, int(q["block_size"]), None)
            b.PrependInt32Slot(1, -1, None)
            b.PrependInt32Slot(0, int(q["block_scales"]), None)
            details = b.EndObject()
        b.StartObject(7)
        if details is not None:
            b.PrependUOffsetTRelativeSlot(5, details, 0)
            b.PrependUint8Slot(4, 2, None)  # QuantizationDetails.BlockwiseQuantization
        b.PrependInt32Slot(6, int(q.get("quantized_dimension", 0)), None)
        for fid in sorted(parts, reverse=True):
            b.PrependUOffsetTRelativeSlot(fid, parts[fid], 0)
        quant = b.EndObject()
    sig = _int_vector(b, t.shape_signature, np.int32) if t.shape_signature is not None else None
    name = b.CreateString(t.name)
    shape = _int_vector(b, t.shape, np.int32)
    b.StartObject(9)
    b.PrependBoolSlot(8, True, None)  # has_rank: every tensor written here has a known rank
    if sig is not None:
        b.PrependUOffsetTRelativeSlot(7, sig, 0)
    if sparsity is not None:
        b.PrependUOffsetTRelativeSlot(6, sparsity, 0)
    if t.is_variable:
        b.PrependBoolSlot(5, True, False)
    if quant is not None:
        b.PrependUOffsetTRelativeSlot(4, quant, 0)
    b.PrependUOffsetTRelativeSlot(3, name, 0)
    b.PrependUint32Slot(2, t.buffer, None)
    b.PrependInt8Slot(1, tflite_type(t.dtype), None)
    b.PrependUOffsetTRelativeSlot(0, shape, 0)
    return b.EndObject()


_SCALAR_SLOT = {
    "bool": "PrependBoolSlot",
    "int8": "PrependInt8Slot",
    "uint8": "PrependUint8Slot",
    "int16": "PrependInt16Slot",
    "uint16": "PrependUint16Slot",
    "int32": "PrependInt32Slot",
    "uint32": "PrependUint32Slot",
    "int64": "PrependInt64Slot",
    "uint64": "PrependUint64Slot",
    "float32": "PrependFloat32Slot",
    "float64": "PrependFloat64Slot",
}


def _build_options(b: flatbuffers.Builder, table: schema.OptionsTable, values: dict) -> int:
    # Offsets (strings, vectors) must exist before the table starts.
    refs = {}
    for f in table.fields:
        if f.name not in values:
            continue
        v = values[f.name]
        if f.type == "string":
            refs[f.name] = b.CreateString(str(v))
        elif f.type.startswith("["):
            elem = f.type[1:-1]
            if f.enum is not None:
                v = [_enum_value(f.enum, x) for x in v]
            if elem == "uint8" and isinstance(v, bytes | bytearray):
                refs[f.name] = b.CreateByteVector(bytes(v))
            else:
                refs[f.name] = _int_vector(b, v, np.dtype(elem))
    n = max((f.id for f in table.fields), default=-1) + 1
    b.StartObject(n)
    for f in sorted(table.fields, key=lambda f: f.id, reverse=True):
        if f.name not in values:
            continue
        if f.name in refs:
            b.PrependUOffsetTRelativeSlot(f.id, refs[f.name], 0)
        else:
            v = values[f.name]
            v = (
                float(v)
                if f.type.startswith("float")
                else (bool(v) if f.type == "bool" else int(v))
            )
            # d=None: always write the field, even when it equals the schema default.
            getattr(b, _SCALAR_SLOT[f.type])(f.id, v, None)
    return b.EndObject()


def _build_operator(b: flatbuffers.Builder, op: _Operator) -> int:
    opts = None
    if op.options is not None:
        table, values = op.options
        opts = (table, _build_options(b, table, values))
    custom = b.CreateByteVector(op.custom_options) if op.custom_options is not None else None
    inter = _int_vector(b, op.intermediates, np.int32) if op.intermediates else None
    ins = _int_vector(b, op.inputs, np.int32)
    outs = _int_vector(b, op.outputs, np.int32)
    b.StartObject(13)
    if opts is not None and opts[0].union == 2:
        b.PrependUOffsetTRelativeSlot(12, opts[1], 0)
        b.PrependUint8Slot(11, opts[0].type, None)
    if inter is not None:
        b.PrependUOffsetTRelativeSlot(8, inter, 0)
    if custom is not None:
        b.PrependUOffsetTRelativeSlot(5, custom, 0)
        b.PrependInt8Slot(6, 0, None)  # FLEXBUFFERS
    if opts is not None and opts[0].union == 1:
        b.PrependUOffsetTRelativeSlot(4, opts[1], 0)
        b.PrependUint8Slot(3, opts[0].type, None)
    b.PrependUOffsetTRelativeSlot(2, outs, 0)
    b.PrependUOffsetTRelativeSlot(1, ins, 0)
    b.PrependUint32Slot(0, op.opcode, None)
    return b.EndObject()
