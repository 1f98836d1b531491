"""The Python binding of the wick C runtime (ctypes over ``libwick.so``).

    import wick
    m = wick.load("model.tflite")          # or bytes
    outputs = m(x)                          # numpy in, list of numpy out
    outputs = m(image=x)                    # inputs by name
    m.inputs, m.outputs, m.signatures       # details
    m.signature("decode")(tokens)           # another signature of the same file
    m["decode"](tokens)                     # the same
    d = wick.load("model.tflite", signature="decode")   # calling d runs "decode"
    m.reset_variables()                     # state (tf.Variable, LSTM) as at load
    s = wick.load("llm.tflite", shared_variables=True)  # one state for all signatures
    r = wick.load("model.tflite", delegate="reference")  # a delegate takes what it can
    r.delegation                            # where each operator runs, and why

Errors from the C library become :class:`WickError` carrying the C message and
status name.

Which ``libwick.so`` is loaded (:func:`library_path`), first match wins:

1. ``$WICK_LIBRARY``, when set: an explicit choice overrides everything (the test
   scripts point it at ``build/`` or the sanitizer build ``build-asan/``);
2. ``wick/_lib/libwick.so`` inside this package: what a wheel or ``pip install .``
   carries (built by CMakeLists.txt through scikit-build-core);
3. ``build/libwick.so`` in the repository this package sits in (``python/wick`` ->
   ``build/``): the editable install of ``make setup``, which runs no CMake itself.

The ``wick`` command's C tool is the ``wick`` executable next to that library. A
library whose ``wick_version()`` is not this package's ``__version__`` is refused.

Invariants: a :class:`Runtime` owns one C model (immutable, shared by all of
its signature runners); each runner owns one C interpreter and is meant for
one thread at a time. Arrays passed in are copied; arrays returned are copies.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "load",
    "Runtime",
    "SignatureRunner",
    "WickError",
    "TensorDetail",
    "DelegationRecord",
    "library_path",
]

_DTYPES = {
    0: np.float32,
    1: np.float16,
    2: np.int32,
    3: np.uint8,
    4: np.int64,
    6: np.bool_,
    7: np.int16,
    8: np.complex64,
    9: np.int8,
    10: np.float64,
}
_STATUS = {
    1: "invalid argument",
    2: "malformed model",
    3: "unsupported operator",
    4: "out of memory",
    5: "i/o error",
    6: "cancelled",
    7: "invalid input value",
}


class WickError(RuntimeError):
    """An error reported by the wick C runtime; ``status`` is its status name."""

    def __init__(self, status: int, message: str):
        self.status = _STATUS.get(status, f"status {status}")
        self.code = status
        super().__init__(f"{self.status}: {message}" if message else self.status)


class _ErrorInfo(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 512)]


class _DelegationRow(ctypes.Structure):
    """wick_delegation_row (wick.h): one row of the delegation report."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("parent", ctypes.c_int64),
        ("role", ctypes.c_char_p),
        ("subgraph", ctypes.c_size_t),
        ("op", ctypes.c_size_t),
        ("op_name", ctypes.c_char_p),
        ("delegate", ctypes.c_char_p),
        ("partition", ctypes.c_int),
        ("reason", ctypes.c_char_p),
        ("note", ctypes.c_char_p),
    ]


class _Allocator(ctypes.Structure):
    _fields_ = [("alloc", ctypes.c_void_p), ("free", ctypes.c_void_p), ("user", ctypes.c_void_p)]


# The option structs open with struct_size (sizeof the struct as the caller built it): the
# library reads the fields that size covers and refuses a struct it cannot read, so a binding
# and a library from different versions of wick.h fail with a message instead of misreading.
class _ModelOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("allocator", _Allocator),
        ("log", ctypes.c_void_p),
        ("log_user", ctypes.c_void_p),
        ("copy_buffer", ctypes.c_int),
        ("memory_limit_bytes", ctypes.c_size_t),
    ]


class _InterpreterOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("num_threads", ctypes.c_int),
        ("memory_limit_bytes", ctypes.c_size_t),
        ("force_reference_kernels", ctypes.c_int),
        ("allocator", _Allocator),
        ("log", ctypes.c_void_p),
        ("log_user", ctypes.c_void_p),
        ("weight_cache_path", ctypes.c_char_p),
        ("share_variables_with", ctypes.c_void_p),
        ("delegates", ctypes.c_void_p),
        ("num_delegates", ctypes.c_size_t),
    ]


def library_path() -> Path:
    """Where libwick.so is loaded from (see the module docstring for the order)."""
    env = os.environ.get("WICK_LIBRARY")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    candidates = [here / "_lib" / "libwick.so", here.parents[1] / "build" / "libwick.so"]
    for c in candidates:
        if c.exists():
            return c
    raise WickError(
        5,
        "libwick.so not found: in a checkout build it (`make build`), else reinstall the "
        "wick package or set WICK_LIBRARY; looked in " + ", ".join(str(c) for c in candidates),
    )


_lib = None


def _library():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(str(library_path()))
    P, S, INT, U64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint64
    sigs = {
        "wick_version": ([], ctypes.c_char_p),
        "wick_model_load_buffer": (
            [P, S, ctypes.POINTER(_ModelOptions), ctypes.POINTER(_ErrorInfo), ctypes.POINTER(P)],
            INT,
        ),
        "wick_model_load_file": (
            [
                ctypes.c_char_p,
                ctypes.POINTER(_ModelOptions),
                ctypes.POINTER(_ErrorInfo),
                ctypes.POINTER(P),
            ],
            INT,
        ),
        "wick_model_destroy": ([P], None),
        "wick_model_signature_count": ([P], S),
        "wick_model_signature_key": ([P, S], ctypes.c_char_p),
        "wick_model_description": ([P], ctypes.c_char_p),
        "wick_interpreter_create": (
            [
                P,
                ctypes.c_char_p,
                ctypes.POINTER(_InterpreterOptions),
                ctypes.POINTER(_ErrorInfo),
                ctypes.POINTER(P),
            ],
            INT,
        ),
        "wick_interpreter_destroy": ([P], None),
        "wick_interpreter_last_error": ([P], ctypes.c_char_p),
        "wick_interpreter_input_count": ([P], S),
        "wick_interpreter_output_count": ([P], S),
        "wick_interpreter_input": ([P, S], P),
        "wick_interpreter_output": ([P, S], P),
        "wick_interpreter_resize_input": ([P, S, ctypes.POINTER(ctypes.c_int32), S], INT),
        "wick_interpreter_resize_inputs": ([P, S, P, P, P], INT),
        "wick_interpreter_invoke": ([P], INT),
        "wick_interpreter_cancel": ([P], None),
        "wick_interpreter_reset_variables": ([P], INT),
        "wick_interpreter_arena_bytes": ([P], S),
        "wick_interpreter_weight_cache_state": ([P], INT),
        "wick_interpreter_weight_cache_hits": ([P], S),
        "wick_interpreter_weight_cache_message": ([P], ctypes.c_char_p),
        "wick_interpreter_op_count": ([P], S),
        "wick_interpreter_op_name": ([P, S], ctypes.c_char_p),
        "wick_interpreter_set_profiling": ([P, INT], None),
        "wick_interpreter_op_time_ns": ([P, S], U64),
        "wick_interpreter_op_kernel": ([P, S], ctypes.c_char_p),
        "wick_interpreter_op_kernel_name": ([P, S], ctypes.c_char_p),
        "wick_interpreter_op_macs": ([P, S], U64),
        "wick_tensor_name": ([P], ctypes.c_char_p),
        "wick_tensor_dtype": ([P], INT),
        "wick_tensor_rank": ([P], S),
        "wick_tensor_dim": ([P, S], ctypes.c_int32),
        "wick_tensor_byte_size": ([P], S),
        "wick_tensor_data": ([P], P),
        "wick_tensor_quantization": (
            [P, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int64)],
            INT,
        ),
        "wick_tensor_copy_from": ([P, P, S], INT),
        "wick_delegate_create": (
            [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_ErrorInfo), ctypes.POINTER(P)],
            INT,
        ),
        "wick_delegate_destroy": ([P], None),
        "wick_interpreter_op_delegate": ([P, S], ctypes.c_char_p),
        "wick_interpreter_op_partition": ([P, S], INT),
        "wick_interpreter_op_delegation_reason": ([P, S], ctypes.c_char_p),
        "wick_interpreter_op_delegation_note": ([P, S], ctypes.c_char_p),
        "wick_interpreter_partition_count": ([P], S),
        "wick_interpreter_delegation_row_count": ([P], S),
        "wick_interpreter_delegation_row": ([P, S, ctypes.POINTER(_DelegationRow)], INT),
        "wick_tensor_copy_to": ([P, P, S], INT),
        # the tokenizer in an LLM file (include/wick/llm.h; wick.llm.tokenizer)
        "wick_tokenizer_create": ([P, ctypes.POINTER(_ErrorInfo), ctypes.POINTER(P)], INT),
        "wick_tokenizer_destroy": ([P], None),
        "wick_tokenizer_vocab_size": ([P], S),
        "wick_tokenizer_encode": (
            [P, ctypes.c_char_p, S, ctypes.POINTER(ctypes.c_int32), S, ctypes.POINTER(S)],
            INT,
        ),
        "wick_tokenizer_decode": ([P, ctypes.c_int32, ctypes.c_char_p, S], S),
        "wick_tokenizer_is_added": ([P, ctypes.c_int32], INT),
        "wick_tokenizer_is_special": ([P, ctypes.c_int32], INT),
        "wick_tokenizer_is_byte": ([P, ctypes.c_int32], INT),
        "wick_tokenizer_decode_text": (
            [
                P,
                ctypes.POINTER(ctypes.c_int32),
                S,
                ctypes.c_uint,
                ctypes.c_char_p,
                S,
                ctypes.POINTER(S),
            ],
            INT,
        ),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
    from . import __version__

    built = lib.wick_version().decode()
    if built != __version__:  # the ctypes structs below mirror one version of wick.h
        raise OSError(
            f"{library_path()} is libwick {built}, but this wick package is {__version__}: "
            "rebuild the library (`make build`) or point WICK_LIBRARY at a matching one"
        )
    _lib = lib
    return lib


@dataclass(frozen=True)
class TensorDetail:
    """Name, dtype, shape and (per-tensor) quantization of an input or output."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    quantization: tuple[float, int] | None


@dataclass(frozen=True)
class DelegationRecord:
    """Where the operator of row ``index`` runs: ``delegate`` (its name) and ``partition`` (its
    number), or None and -1 on the CPU (a partition whose delegate failed keeps its number);
    ``reason`` says why it is not on a delegate ("" when it is); ``note``, for an operator on a
    delegate, how the delegate runs it when that is not the operator itself and how close that
    is (a GELU composed of NNAPI operations: its error bound), else "".

    The first rows are the signature's operators (``index`` is the operator's, ``parent`` -1).
    After them come the operators inside the subgraphs those run (an IF's ``role`` "then" and
    "else", a WHILE's "cond" and "body", ...): ``parent`` is the row of the operator running
    that subgraph, ``subgraph`` the model's subgraph index and ``op_index`` the operator's
    index in it (wick.h, wick_interpreter_delegation_row)."""

    index: int
    op: str
    delegate: str | None
    partition: int
    reason: str
    note: str = ""
    parent: int = -1
    role: str = ""
    subgraph: int = 0
    op_index: int = -1


def _delegate_specs(delegate) -> list[tuple[str, str]]:
    """``"name"``, ``"name:key=value;..."`` or a list of them -> [(name, config)]."""
    if delegate is None:
        return []
    items = [delegate] if isinstance(delegate, str) else list(delegate)
    specs = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise TypeError(f"a delegate is named by a string, got {item!r}")
        name, _, config = item.partition(":")
        specs.append((name, config))
    return specs


def _detail(lib, t) -> TensorDetail:
    code = lib.wick_tensor_dtype(t)
    shape = tuple(lib.wick_tensor_dim(t, i) for i in range(lib.wick_tensor_rank(t)))
    scale, zp = ctypes.c_float(), ctypes.c_int64()
    q = (scale.value, zp.value) if lib.wick_tensor_quantization(t, scale, zp) else None
    if q is not None:
        q = (float(scale.value), int(zp.value))
    return TensorDetail(
        lib.wick_tensor_name(t).decode(), np.dtype(_DTYPES.get(code, np.uint8)), shape, q
    )


class SignatureRunner:
    """One signature (or subgraph 0) of a model, prepared and ready to run."""

    def __init__(
        self,
        runtime: Runtime,
        key: str | None,
        num_threads: int,
        reference: bool,
        memory_limit: int = 0,
        weight_cache: str | os.PathLike | None = None,
        share_with: SignatureRunner | None = None,
    ):
        lib = _library()
        delegates = runtime._owner.delegates
        self._lib = lib
        self._owner = runtime._owner  # the C model outlives this interpreter
        self._state_owner = share_with  # whose variables this one uses: kept alive by us
        opts = _InterpreterOptions(struct_size=ctypes.sizeof(_InterpreterOptions))
        opts.num_threads = num_threads
        opts.force_reference_kernels = int(reference)
        opts.memory_limit_bytes = memory_limit
        if weight_cache is not None:
            opts.weight_cache_path = os.fsencode(weight_cache)  # copied by the call
        if share_with is not None:
            opts.share_variables_with = share_with._it
        if delegates:
            array = (ctypes.c_void_p * len(delegates))(*delegates)  # copied by the call
            opts.delegates = ctypes.cast(array, ctypes.c_void_p)
            opts.num_delegates = len(delegates)
        err = _ErrorInfo()
        handle = ctypes.c_void_p()
        st = lib.wick_interpreter_create(
            runtime._model, key.encode() if key else None, opts, err, ctypes.byref(handle)
        )
        if st:
            raise WickError(st, err.message.decode(errors="replace"))
        self._it = handle
        self._owner.acquire()
        self.key = key

    def __del__(self):
        it = getattr(self, "_it", None)
        if it:
            self._lib.wick_interpreter_destroy(it)
            self._it = None
            self._owner.release()

    def _fail(self, st: int):
        raise WickError(
            st, self._lib.wick_interpreter_last_error(self._it).decode(errors="replace")
        )

    @property
    def inputs(self) -> list[TensorDetail]:
        lib = self._lib
        n = lib.wick_interpreter_input_count(self._it)
        return [_detail(lib, lib.wick_interpreter_input(self._it, i)) for i in range(n)]

    @property
    def outputs(self) -> list[TensorDetail]:
        lib = self._lib
        n = lib.wick_interpreter_output_count(self._it)
        return [_detail(lib, lib.wick_interpreter_output(self._it, i)) for i in range(n)]

    @property
    def arena_bytes(self) -> int:
        return int(self._lib.wick_interpreter_arena_bytes(self._it))

    @property
    def weight_cache(self) -> tuple[str, int, str]:
        """What the packed-weight cache did at prepare: (state, buffers read from the file,
        message). state is "unused", "loaded", "written", "rejected" (damaged or mismatched:
        packed and rewrote it) or "failed" (packed; could not write it)."""
        lib = self._lib
        state = lib.wick_interpreter_weight_cache_state(self._it)
        names = ["unused", "loaded", "written", "rejected", "failed"]
        return (
            names[state] if 0 <= state < len(names) else str(state),
            int(lib.wick_interpreter_weight_cache_hits(self._it)),
            lib.wick_interpreter_weight_cache_message(self._it).decode(errors="replace"),
        )

    @property
    def delegation(self) -> list[DelegationRecord]:
        """The delegation report: one record per operator, the signature's first, then those
        inside the subgraphs they run (see :class:`DelegationRecord`), as of the last prepare
        (a partition whose invoke failed shows on the CPU since)."""
        lib, it = self._lib, self._it
        out = []
        for i in range(lib.wick_interpreter_delegation_row_count(it)):
            row = _DelegationRow(struct_size=ctypes.sizeof(_DelegationRow))
            st = lib.wick_interpreter_delegation_row(it, i, ctypes.byref(row))
            if st != 0:
                raise WickError(st, f"cannot read row {i} of the delegation report")
            out.append(
                DelegationRecord(
                    i,
                    row.op_name.decode(),
                    row.delegate.decode() if row.delegate else None,
                    int(row.partition),
                    row.reason.decode(errors="replace"),
                    row.note.decode(errors="replace"),
                    int(row.parent),
                    row.role.decode(),
                    int(row.subgraph),
                    int(row.op),
                )
            )
        return out

    def _input_array(self, i: int, value) -> np.ndarray:
        """`value` as a C-contiguous array of input i's dtype."""
        want = _detail(self._lib, self._lib.wick_interpreter_input(self._it, i))
        arr = np.asarray(value)
        if arr.dtype != want.dtype:
            if np.can_cast(arr.dtype, want.dtype, casting="same_kind") or arr.dtype.kind in "biuf":
                arr = arr.astype(want.dtype)
            else:
                raise TypeError(f"input {want.name!r} wants {want.dtype}, got {arr.dtype}")
        return np.asarray(arr, order="C")  # (ascontiguousarray would turn a scalar into [1])

    def _set_input(self, i: int, value) -> None:
        """Writes one input (resizing it if its shape changes)."""
        self._set_inputs({i: self._input_array(i, value)})

    def _set_inputs(self, arrays: dict[int, np.ndarray]) -> None:
        """Resizes every input whose shape changes in one call (inputs that share a dimension,
        such as ids and their mask, are never prepared with mismatched shapes), then writes them."""
        lib = self._lib
        resize = [
            (i, a)
            for i, a in arrays.items()
            if tuple(a.shape) != _detail(lib, lib.wick_interpreter_input(self._it, i)).shape
        ]
        if resize:
            n = len(resize)
            dims = [(ctypes.c_int32 * max(a.ndim, 1))(*a.shape) for _, a in resize]
            indices = (ctypes.c_size_t * n)(*[i for i, _ in resize])
            ranks = (ctypes.c_size_t * n)(*[a.ndim for _, a in resize])
            dim_ptrs = (ctypes.c_void_p * n)(*[ctypes.addressof(d) for d in dims])
            st = lib.wick_interpreter_resize_inputs(self._it, n, indices, dim_ptrs, ranks)
            if st:
                self._fail(st)
        for i, arr in arrays.items():
            t = lib.wick_interpreter_input(self._it, i)
            st = lib.wick_tensor_copy_from(t, arr.ctypes.data, arr.nbytes)
            if st:
                name = _detail(lib, t).name
                raise WickError(st, f"input {name!r}: {arr.nbytes} bytes do not fit the tensor")

    def __call__(self, *args, **kwargs) -> list[np.ndarray]:
        """Runs with inputs given positionally and/or by name; returns the outputs."""
        names = [d.name for d in self.inputs]
        if len(args) > len(names):
            raise TypeError(f"the model takes {len(names)} inputs, {len(args)} given")
        given = dict(enumerate(args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"no input named {k!r}; inputs are {names}")
            i = names.index(k)
            if i in given:
                raise TypeError(f"input {k!r} given twice")
            given[i] = v
        missing = [names[i] for i in range(len(names)) if i not in given]
        if missing:
            raise TypeError(f"missing inputs: {missing}")
        self._set_inputs({i: self._input_array(i, given[i]) for i in range(len(names))})
        return self.invoke()

    def invoke(self) -> list[np.ndarray]:
        lib = self._lib
        st = lib.wick_interpreter_invoke(self._it)
        if st:
            self._fail(st)
        results = []
        for i in range(lib.wick_interpreter_output_count(self._it)):
            t = lib.wick_interpreter_output(self._it, i)
            d = _detail(lib, t)
            out = np.empty(d.shape, dtype=d.dtype)
            if out.nbytes:
                st = lib.wick_tensor_copy_to(t, out.ctypes.data, out.nbytes)
                if st:
                    raise WickError(st, f"cannot read output {d.name!r}")
            results.append(out)
        return results

    def reset_variables(self) -> None:
        """Returns the model's state to what it was after loading: resource variables
        (tf.Variable state) lose their values and CALL_ONCE init subgraphs run again on the next
        call; variable tensors (LSTM/SVDF state) return to zero. The next call then gives what
        a freshly loaded model gives. State otherwise persists from call to call."""
        st = self._lib.wick_interpreter_reset_variables(self._it)
        if st:
            self._fail(st)

    def profile(self, kernels: bool = False) -> list[tuple]:
        """Runs once with per-op timing; returns (op name, nanoseconds) per operator, or with
        ``kernels=True`` (op name, nanoseconds, kernel) where kernel is :meth:`op_kernels`'s."""
        lib = self._lib
        lib.wick_interpreter_set_profiling(self._it, 1)
        try:
            self.invoke()
        finally:
            lib.wick_interpreter_set_profiling(self._it, 0)
        kinds = self.op_kernels() if kernels else None
        out = []
        for i in range(lib.wick_interpreter_op_count(self._it)):
            row = (
                lib.wick_interpreter_op_name(self._it, i).decode(),
                lib.wick_interpreter_op_time_ns(self._it, i),
            )
            out.append(row + (kinds[i],) if kinds is not None else row)
        return out

    def op_macs(self) -> list[int]:
        """Multiply-accumulates of each operator in one call: set when it was prepared, except
        for an attention over a key/value cache run as one kernel (kernel name "attention",
        or "attention in place" where it reads the cache without packing it),
        whose work depends on the positions its mask leaves visible: that of the last call."""
        lib = self._lib
        return [
            lib.wick_interpreter_op_macs(self._it, i)
            for i in range(lib.wick_interpreter_op_count(self._it))
        ]

    def op_kernels(self) -> list[tuple[str, str]]:
        """(kind, name) of the kernel each operator runs, chosen when it was prepared: kind is
        "optimized", "generic" (portable C, no ISA kernel), "reference" (the scalar reference
        kernels), "folded" (computed once at load), "fused" (another operator does its work),
        "delegated" (a delegate runs it; name is the delegate's) or "unmarked"; name a short
        name of the path ("igemm", "grouped", ...) or "".
        An operator whose shapes depend on input values is prepared at every call: call this
        after one."""
        lib = self._lib
        return [
            (
                lib.wick_interpreter_op_kernel(self._it, i).decode(),
                lib.wick_interpreter_op_kernel_name(self._it, i).decode(),
            )
            for i in range(lib.wick_interpreter_op_count(self._it))
        ]


class _ModelOwner:
    """Owns one C model (and the bytes it borrows), which must outlive every interpreter made
    from it. Python does not order finalizers when it collects garbage cycles (a runner held
    by a traceback, say), so the owner counts live interpreters: the model is destroyed by
    whichever comes last, the owner's finalizer or the last interpreter's release."""

    def __init__(self, lib, handle, data: bytes | None, delegates: list | None = None):
        self._lib = lib
        self.handle = handle
        self._bytes = data
        self.delegates = delegates or []  # C delegates: must outlive every interpreter too
        self._live = 0
        self._closed = False

    def acquire(self) -> None:
        self._live += 1

    def release(self) -> None:
        self._live -= 1
        self._maybe_destroy()

    def _maybe_destroy(self) -> None:
        if self._closed and self._live == 0 and self.handle:
            self._lib.wick_model_destroy(self.handle)
            self.handle = None
            for d in self.delegates:
                self._lib.wick_delegate_destroy(d)
            self.delegates = []

    def __del__(self):
        self._closed = True
        if getattr(self, "handle", None):
            self._maybe_destroy()


class Runtime:
    """A loaded model. Calling it runs its default signature: ``signature`` if given, else the
    first signature (or subgraph 0 of a file without signatures)."""

    def __init__(
        self,
        model: str | os.PathLike | bytes,
        num_threads: int = 1,
        reference: bool = False,
        memory_limit: int = 0,
        signature: str | None = None,
        weight_cache: str | os.PathLike | None = None,
        shared_variables: bool = False,
        delegate: str | list[str] | None = None,
    ):
        lib = _library()
        self._lib = lib
        err = _ErrorInfo()
        handle = ctypes.c_void_p()
        delegates = []
        for name, config in _delegate_specs(delegate):
            d = ctypes.c_void_p()
            st = lib.wick_delegate_create(name.encode(), config.encode(), err, ctypes.byref(d))
            if st:
                for made in delegates:
                    lib.wick_delegate_destroy(made)
                raise WickError(st, err.message.decode(errors="replace"))
            delegates.append(d.value)
        # zeroed: malloc/free, silent, borrow the bytes
        opts = _ModelOptions(struct_size=ctypes.sizeof(_ModelOptions))
        opts.memory_limit_bytes = memory_limit
        if isinstance(model, (bytes, bytearray, memoryview)):
            self._bytes = bytes(model)  # borrowed by the C model: keep it alive
            buf = ctypes.c_char_p(self._bytes)
            st = lib.wick_model_load_buffer(
                buf, len(self._bytes), ctypes.byref(opts), err, ctypes.byref(handle)
            )
        else:
            st = lib.wick_model_load_file(
                os.fsencode(model), ctypes.byref(opts), err, ctypes.byref(handle)
            )
        if st:
            for made in delegates:
                lib.wick_delegate_destroy(made)
            raise WickError(st, err.message.decode(errors="replace"))
        self._owner = _ModelOwner(lib, handle, getattr(self, "_bytes", None), delegates)
        self._model = handle
        self._threads = num_threads
        self._reference = reference
        self._memory_limit = memory_limit
        self._weight_cache = weight_cache
        self._shared_variables = shared_variables
        self._runners: dict[str | None, SignatureRunner] = {}
        self._default = self.signature(signature)

    def __del__(self):
        # Drop the runners first; the model goes with the last reference to _owner.
        self._runners = {}
        self._default = None

    @property
    def signatures(self) -> list[str]:
        n = self._lib.wick_model_signature_count(self._model)
        return [self._lib.wick_model_signature_key(self._model, i).decode() for i in range(n)]

    def signature(self, key: str | None) -> SignatureRunner:
        """The runner for signature `key` (None: the first signature, or subgraph 0)."""
        if key not in self._runners:
            # One cache file per interpreter: the default signature's runner (made first)
            # uses the path as given, any other signature the path + "." + its key.
            cache = self._weight_cache
            if cache is not None and self._runners:
                cache = os.fsdecode(cache) + "." + (key or "")
            # with shared_variables, every runner uses the first runner's variables
            first = next(iter(self._runners.values()), None)
            self._runners[key] = SignatureRunner(
                self,
                key,
                self._threads,
                self._reference,
                self._memory_limit,
                cache,
                share_with=first if self._shared_variables else None,
            )
        return self._runners[key]

    def __getitem__(self, key: str) -> SignatureRunner:
        """``m["decode"]``: the runner for that signature (as ``signature(key)``)."""
        return self.signature(key)

    @property
    def inputs(self) -> list[TensorDetail]:
        return self._default.inputs

    @property
    def outputs(self) -> list[TensorDetail]:
        return self._default.outputs

    @property
    def weight_cache(self) -> tuple[str, int, str]:
        """The default signature's weight cache report (see SignatureRunner.weight_cache)."""
        return self._default.weight_cache

    @property
    def delegation(self) -> list[DelegationRecord]:
        """The default signature's delegation report (see SignatureRunner.delegation)."""
        return self._default.delegation

    def __call__(self, *args, **kwargs) -> list[np.ndarray]:
        return self._default(*args, **kwargs)

    def reset_variables(self) -> None:
        """Resets the state of every signature runner made so far (each has its own
        interpreter, hence its own variables unless ``shared_variables``); see
        SignatureRunner.reset_variables."""
        for runner in self._runners.values():
            runner.reset_variables()


def load(
    model: str | os.PathLike | bytes,
    *,
    num_threads: int = 1,
    reference: bool = False,
    memory_limit: int = 0,
    signature: str | None = None,
    weight_cache: str | os.PathLike | None = None,
    shared_variables: bool = False,
    delegate: str | list[str] | None = None,
) -> Runtime:
    """Loads a .tflite file (path or bytes) into the wick runtime.

    ``num_threads`` (default 1: the calling thread only) starts ``num_threads - 1`` worker
    threads per interpreter that split large operators; -1 uses one per CPU. Outputs are
    bit-identical for every thread count.

    ``reference`` forces the portable reference kernels; ``memory_limit`` caps
    the bytes the load may allocate and, separately, the bytes each interpreter
    may allocate (0: no cap); going over it raises WickError("out of memory")
    rather than growing. ``signature`` picks the signature that calling the
    result runs (default: the first); every other one stays reachable as
    ``m[key]`` / ``m.signature(key)``.

    ``weight_cache`` names a file for the packed weights (the weights re-laid out for this
    CPU's kernels, most of prepare's time): the first load writes it, later loads of the
    same model by the same wick build read it instead of packing. A damaged or mismatched
    file is never used (it is rewritten); ``m.weight_cache`` reports what happened.
    Signatures other than the default one use the path + "." + their key.

    ``shared_variables``: every signature runner uses the resource variables (and CALL_ONCE
    state) of the first one made (the default signature's), as LiteRT's signature runners of
    one interpreter do, so the signatures of a stateful model (an LLM's ``prefill_N`` and
    ``decode`` over a KV cache held in variables) see one state. Default: each runner has its
    own (wick_interpreter_options.share_variables_with in wick.h).

    ``delegate``: a built-in delegate's name, ``"name:key=value;..."`` with its settings, or a
    list of them in priority order (``"reference"``, the test delegate, for now; see
    docs/delegates.md). Every signature runner offers its operators to them; what they decline
    or fail at runs on the CPU, never as an error. ``m.delegation`` reports where each
    operator runs and why.
    """
    return Runtime(
        model,
        num_threads=num_threads,
        reference=reference,
        memory_limit=memory_limit,
        signature=signature,
        weight_cache=weight_cache,
        shared_variables=shared_variables,
        delegate=delegate,
    )
