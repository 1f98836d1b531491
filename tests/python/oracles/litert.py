"""LiteRT (the reference TFLite interpreter) as a test oracle.

``run_litert`` runs a .tflite file with ``ai_edge_litert.interpreter.Interpreter`` and returns its
outputs as an :class:`Outputs` list (also carrying the output names).

Input and output ORDER (the part that is easy to get wrong):

* ``signature=None`` (default): the model's first subgraph, addressed directly. Inputs and outputs
  are in the subgraph's ``inputs`` / ``outputs`` vector order, exactly as stored in the file; the
  names are tensor names. A dict of inputs is keyed by tensor name.
* ``signature="serving_default"`` (or any key): the SignatureDef's subgraph. Inputs and outputs are
  in the order of the SignatureDef's ``inputs`` / ``outputs`` vectors *as stored in the file*
  (LiteRT's own signature runner returns a dict ordered by name, which we do not use for order);
  the names are the signature names. A dict of inputs is keyed by signature input name.

``reference=True`` selects LiteRT's reference kernels (``OpResolverType.BUILTIN_REF``, no XNNPACK):
the bit-exact oracle for integer kernels. The default resolver uses XNNPACK where it can.

This module does not import TensorFlow.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ModelLike = bytes | bytearray | memoryview | str | os.PathLike


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _model_bytes(model: ModelLike) -> bytes:
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    return Path(model).read_bytes()


def make_interpreter(model: ModelLike, num_threads: int = 1, reference: bool = False):
    """An ``ai_edge_litert`` Interpreter for ``model`` (bytes or a path); not yet allocated."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kwargs = {
        "num_threads": num_threads,
        "experimental_op_resolver_type": (
            OpResolverType.BUILTIN_REF if reference else OpResolverType.AUTO
        ),
    }
    if isinstance(model, (bytes, bytearray, memoryview)):
        return Interpreter(model_content=bytes(model), **kwargs)
    return Interpreter(model_path=os.fspath(model), **kwargs)


# --------------------------------------------------------------------------------------------
# File-level facts read from the flatbuffer (order of signature entries, op histogram)
# --------------------------------------------------------------------------------------------


def _schema():
    from ai_edge_litert import schema_py_generated as schema

    return schema


def _root(model: ModelLike):
    return _schema().Model.GetRootAs(_model_bytes(model), 0)


def _str(b) -> str:
    return b.decode("utf-8") if isinstance(b, bytes) else (b or "")


def signature_order(model: ModelLike) -> dict[str, dict]:
    """Per signature key: ``{"subgraph": i, "inputs": [(name, tensor)], "outputs": [...]}``,
    in the order the file stores them."""
    m = _root(model)
    out = {}
    for i in range(m.SignatureDefsLength()):
        sd = m.SignatureDefs(i)
        ins = [
            (_str(sd.Inputs(j).Name()), sd.Inputs(j).TensorIndex())
            for j in range(sd.InputsLength())
        ]
        outs = [
            (_str(sd.Outputs(j).Name()), sd.Outputs(j).TensorIndex())
            for j in range(sd.OutputsLength())
        ]
        out[_str(sd.SignatureKey())] = {
            "subgraph": sd.SubgraphIndex(),
            "inputs": ins,
            "outputs": outs,
        }
    return out


_BUILTIN_NAMES: dict[int, str] | None = None


def builtin_name(code: int) -> str:
    """Name of a builtin operator code (``3`` -> ``"CONV_2D"``)."""
    global _BUILTIN_NAMES
    if _BUILTIN_NAMES is None:
        ops = _schema().BuiltinOperator
        _BUILTIN_NAMES = {v: k for k, v in vars(ops).items() if not k.startswith("_")}
    return _BUILTIN_NAMES.get(code, f"BUILTIN_{code}")


def op_histogram(model: ModelLike, versions: bool = False, subgraph: int | None = None) -> dict:
    """Count operators by builtin name (custom ops as ``CUSTOM:<code>``), over all subgraphs or
    one. With ``versions=True`` keys are ``"NAME/vN"``. Sorted by count, then name."""
    m = _root(model)
    names = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = builtin_name(code)
        if name == "CUSTOM":
            name = f"CUSTOM:{_str(oc.CustomCode())}"
        if versions:
            name = f"{name}/v{oc.Version()}"
        names.append(name)
    counts: Counter = Counter()
    sgs = range(m.SubgraphsLength()) if subgraph is None else [subgraph]
    for s in sgs:
        sg = m.Subgraphs(s)
        for k in range(sg.OperatorsLength()):
            counts[names[sg.Operators(k).OpcodeIndex()]] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorInfo:
    name: str  # signature name in signature mode, tensor name otherwise
    tensor_name: str
    index: int  # tensor index in its subgraph
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]  # -1 marks a dynamic dim
    dtype: np.dtype
    scale: float  # 0.0 when not quantized (per-tensor view; per-axis is in quantization)
    zero_point: int
    quantization: dict  # LiteRT's quantization_parameters


def _info(name: str, d: dict) -> TensorInfo:
    scale, zp = d.get("quantization", (0.0, 0))
    return TensorInfo(
        name=name,
        tensor_name=d["name"],
        index=int(d["index"]),
        shape=tuple(int(x) for x in d["shape"]),
        shape_signature=tuple(int(x) for x in d.get("shape_signature", d["shape"])),
        dtype=np.dtype(d["dtype"]),
        scale=float(scale),
        zero_point=int(zp),
        quantization=d.get("quantization_parameters", {}),
    )


def _io(interp, model: ModelLike, signature: str | None):
    """(inputs, outputs, runner) as TensorInfo lists in the documented order."""
    if signature is None:
        ins = [_info(d["name"], d) for d in interp.get_input_details()]
        outs = [_info(d["name"], d) for d in interp.get_output_details()]
        return ins, outs, None
    order = signature_order(model)
    if signature not in order:
        raise KeyError(f"no signature {signature!r}; the file has {sorted(order)}")
    runner = interp.get_signature_runner(signature)
    ind, outd = runner.get_input_details(), runner.get_output_details()
    ins = [_info(n, ind[n]) for n, _ in order[signature]["inputs"]]
    outs = [_info(n, outd[n]) for n, _ in order[signature]["outputs"]]
    return ins, outs, runner


def input_details(model: ModelLike, signature: str | None = None) -> list[TensorInfo]:
    """The model's inputs in ``run_litert`` order (see module docstring)."""
    interp = make_interpreter(model)
    return _io(interp, model, signature)[0]


def output_details(model: ModelLike, signature: str | None = None) -> list[TensorInfo]:
    """The model's outputs in ``run_litert`` order (shapes as declared, before any resize)."""
    interp = make_interpreter(model)
    interp.allocate_tensors()
    return _io(interp, model, signature)[1]


def random_inputs(
    model: ModelLike,
    seed: int = 0,
    signature: str | None = None,
    float_dist: str = "normal",
    int_range: tuple[int, int] = (0, 16),
) -> list[np.ndarray]:
    """Seeded inputs matching each input's dtype and shape, in ``run_litert`` order.

    * floats (f16/f32/f64): N(0, 1) (``float_dist="normal"``) or U[-1, 1] (``"uniform"``);
    * quantized int8/uint8/int16 inputs (nonzero scale): the whole type range;
    * other integers: uniform in ``int_range`` = [lo, hi) — small, so indices stay valid;
    * bool: fair coin.

    Dynamic dims (-1 in shape_signature) take the size LiteRT reports (usually 1).
    """
    rng = np.random.default_rng(seed)
    arrays = []
    for t in input_details(model, signature):
        shape, dt = t.shape, t.dtype
        if dt.kind == "f":
            if float_dist == "normal":
                a = rng.standard_normal(shape)
            elif float_dist == "uniform":
                a = rng.uniform(-1.0, 1.0, shape)
            else:
                raise ValueError(f"float_dist must be 'normal' or 'uniform', not {float_dist!r}")
            a = a.astype(dt)
        elif dt == np.bool_:
            a = rng.integers(0, 2, shape).astype(np.bool_)
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            if t.scale != 0.0 and dt.itemsize <= 2:
                lo, hi = int(info.min), int(info.max) + 1
            else:
                lo, hi = max(int_range[0], int(info.min)), min(int_range[1], int(info.max) + 1)
            a = rng.integers(lo, hi, shape, dtype=np.int64).astype(dt)
        elif dt.kind == "c":
            a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
        else:
            raise TypeError(f"random_inputs: unsupported input dtype {dt} for {t.name!r}")
        arrays.append(np.asarray(a, order="C"))
    return arrays


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


class Outputs(list):
    """A list of output arrays (in the documented order) that also knows their names."""

    def __init__(self, arrays: Sequence[np.ndarray], names: Sequence[str]):
        super().__init__(arrays)
        self.names = list(names)

    def as_dict(self) -> dict[str, np.ndarray]:
        return dict(zip(self.names, self, strict=True))


def _order_inputs(
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray], infos: list[TensorInfo]
) -> list[np.ndarray]:
    names = [t.name for t in infos]
    if isinstance(inputs, Mapping):
        missing = [n for n in names if n not in inputs]
        extra = [k for k in inputs if k not in names]
        if missing or extra:
            raise ValueError(
                f"input names: missing {missing}, unexpected {extra}; model has {names}"
            )
        arrays = [inputs[n] for n in names]
    else:
        arrays = list(inputs)
        if len(arrays) != len(infos):
            raise ValueError(f"model has {len(infos)} inputs {names}, got {len(arrays)} arrays")
    out = []
    for a, t in zip(arrays, infos, strict=True):
        a = np.asarray(a)
        if a.dtype != t.dtype:
            raise TypeError(f"input {t.name!r}: dtype {a.dtype}, model wants {t.dtype}")
        out.append(np.asarray(a, order="C"))
    return out


def run_litert(
    model: ModelLike,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    signature: str | None = None,
    num_threads: int = 1,
    reference: bool = False,
) -> Outputs:
    """Run ``model`` (bytes or path) in LiteRT and return its outputs.

    Returns an :class:`Outputs` (a ``list[np.ndarray]`` with ``.names`` and ``.as_dict()``), in
    subgraph output order, or SignatureDef output order when ``signature`` is given — see the
    module docstring. Inputs must have exactly the model's dtypes (no silent casts); a shape that
    differs from the declared one resizes that input first (valid for dynamic dims).
    """
    interp = make_interpreter(model, num_threads=num_threads, reference=reference)
    ins, outs, runner = _io(interp, model, signature)
    arrays = _order_inputs(inputs, ins)
    if runner is not None:
        result = runner(**{t.name: a for t, a in zip(ins, arrays, strict=True)})
        return Outputs([np.array(result[t.name]) for t in outs], [t.name for t in outs])
    resized = False
    for t, a in zip(ins, arrays, strict=True):
        if a.shape != t.shape:
            interp.resize_tensor_input(t.index, list(a.shape))
            resized = True
    interp.allocate_tensors()
    for t, a in zip(ins, arrays, strict=True):
        interp.set_tensor(t.index, a)
    interp.invoke()
    if resized:  # output shapes may have changed
        outs = [_info(d["name"], d) for d in interp.get_output_details()]
    return Outputs([np.array(interp.get_tensor(t.index)) for t in outs], [t.name for t in outs])


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tolerance:
    ok: bool
    max_abs_err: float  # inf for a shape mismatch or a NaN/inf where ref is finite
    bound: float  # rel * max(1, max|ref|)
    message: str

    def __bool__(self) -> bool:
        return self.ok


def tolerance_check(got, ref, rel: float = 1e-4, name: str = "output") -> Tolerance:
    """Check ``max|got - ref| <= rel * max(1, max|ref|)`` (the parity bar of docs/testing.md).

    Returns a truthy/falsy :class:`Tolerance` with the error and a message for asserts::

        r = tolerance_check(got, ref); assert r, r.message

    Shapes must match exactly. Non-finite values must match exactly (same positions and values).
    """
    g = np.asarray(got)
    r = np.asarray(ref)
    if g.shape != r.shape:
        return Tolerance(
            False, float("inf"), float("nan"), f"{name}: shape {g.shape} != ref {r.shape}"
        )
    wide = np.complex128 if np.iscomplexobj(g) or np.iscomplexobj(r) else np.float64
    g64, r64 = g.astype(wide), r.astype(wide)
    finite = np.isfinite(r64)
    scale = float(np.max(np.abs(r64[finite]))) if finite.any() else 0.0
    bound = rel * max(1.0, scale)
    if r64.size == 0:
        return Tolerance(True, 0.0, bound, f"{name}: empty")
    with np.errstate(invalid="ignore", over="ignore"):
        nonfinite_mismatch = ~finite & ~((g64 == r64) | (np.isnan(g64) & np.isnan(r64)))
        diff = np.where(finite, np.abs(g64 - r64), 0.0)
    diff = np.where(np.isnan(diff), np.inf, diff)  # NaN in got where ref is finite
    err = float(np.max(diff))
    if nonfinite_mismatch.any():
        err = float("inf")
    ok = err <= bound
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    msg = (
        f"{name}: max abs err {err:.3g} {'<=' if ok else '>'} bound {bound:.3g} "
        f"(rel {rel:g}, max|ref| {scale:.3g}, shape {g.shape}"
    )
    if not ok and worst != ():
        msg += f", worst at {tuple(int(i) for i in worst)}: got {g[worst].item()!r} ref {r[worst].item()!r}"
    if nonfinite_mismatch.any():
        msg += f", {int(nonfinite_mismatch.sum())} non-finite ref values differ"
    return Tolerance(ok, err, bound, msg + ")")


def assert_close(got, ref, rel: float = 1e-4, name: str = "output") -> float:
    """``tolerance_check`` that raises AssertionError; returns the max abs error."""
    r = tolerance_check(got, ref, rel, name)
    if not r:
        raise AssertionError(r.message)
    return r.max_abs_err


__all__ = [
    "Outputs",
    "TensorInfo",
    "Tolerance",
    "assert_close",
    "builtin_name",
    "input_details",
    "make_interpreter",
    "op_histogram",
    "output_details",
    "random_inputs",
    "run_litert",
    "signature_order",
    "tolerance_check",
]
