"""Shared harness for the differential operator tests (test_core_ops.py, test_compute_ops.py).

A case builds a one-operator .tflite file with the writer, runs it on wick and on LiteRT's
interpreter, and compares: float32 within ``1e-5 * max(1, max|ref|)`` (single fp32 ops that sum
in a different order than LiteRT's kernels or XNNPACK), everything else bit-exact (same dtype,
shape and bytes).

Operands are constants (``C`` or a bare array: stored in the file, so wick usually folds the op
at prepare) or graph inputs (``In``: fed at run time). An axis/shape/size operand given as ``In``
exercises the deferred path: prepare returns WICK_STATUS_DEFER and the op is prepared again at
invoke, where a bad value must fail with "invalid input value".
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import wick
from tests.python.oracles.litert import run_litert, tolerance_check
from wick.tflite.writer import ModelWriter

FLOAT_REL = 1e-5  # fp32 single-op bar (summation order differs from LiteRT's kernels)
INVALID_INPUT = "invalid input value"
MALFORMED = "malformed model"
UNSUPPORTED = "unsupported operator"


class In:
    """An operand fed at run time (a graph input)."""

    def __init__(self, value, dtype=None):
        self.value = np.asarray(value, dtype=dtype)


class C:
    """A constant operand stored in the file."""

    def __init__(self, value, dtype=None):
        self.value = np.asarray(value, dtype=dtype)


def rand(rng, shape, dtype="float32", lo=-1000, hi=1000):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, lo), min(info.max, hi), size=shape, endpoint=True).astype(
        dtype
    )


def build(op, operands, options=None, *, n_out=1, out_dtypes=None, version=None):
    """A one-op model. Returns (bytes, run-time feeds in graph-input order)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    ins, graph_inputs, feeds = [], [], []
    first_dtype = None
    for k, x in enumerate(operands):
        if x is None:
            ins.append(-1)
            continue
        if not isinstance(x, (In, C)):
            x = C(x)
        if first_dtype is None:
            first_dtype = x.value.dtype
        if isinstance(x, In):
            t = sg.add_tensor(f"in{k}", list(x.value.shape), x.value.dtype)
            graph_inputs.append(t)
            feeds.append(x.value)
        else:
            t = sg.add_constant(f"c{k}", x.value)
        ins.append(t)
    if out_dtypes is None:
        out_dtypes = [first_dtype] * n_out
    outs = [sg.add_tensor(f"out{j}", [1], dt) for j, dt in enumerate(out_dtypes)]
    sg.add_operator(op, ins, outs, options=options, version=version)
    sg.set_inputs(graph_inputs)
    sg.set_outputs(outs)
    return w.finish(), feeds


def compare(got, ref, what="output"):
    """float32: within FLOAT_REL; other dtypes: identical bytes."""
    assert len(got) == len(ref), f"{len(got)} outputs, LiteRT has {len(ref)}"
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        r = np.asarray(r)
        assert g.dtype == r.dtype, f"{what} {j}: dtype {g.dtype} != LiteRT {r.dtype}"
        assert g.shape == r.shape, f"{what} {j}: shape {g.shape} != LiteRT {r.shape}"
        if g.dtype == np.float32:
            t = tolerance_check(g, r, rel=FLOAT_REL, name=f"{what} {j}")
            assert t, t.message
        else:
            assert g.tobytes() == r.tobytes(), f"{what} {j} differs:\nwick {g}\nLiteRT {r}"


def check(op, operands, options=None, *, reference=False, **kw):
    """Runs on LiteRT (``reference=True``: its reference kernels, no XNNPACK) and on wick twice,
    with its default kernel selection and with the reference kernels forced, and compares both
    with LiteRT. Returns wick's (default) outputs."""
    data, feeds = build(op, operands, options, **kw)
    ref = run_litert(data, feeds, reference=reference)
    got = wick.load(data)(*feeds)
    compare(got, ref)
    compare(wick.load(data, reference=True)(*feeds), ref, what="reference-kernel output")
    return got


def fails(op, operands, options=None, match=None, status=None, **kw):
    """wick must refuse (at load/prepare, or at invoke for run-time values) with a message."""
    data, feeds = build(op, operands, options, **kw)
    with pytest.raises(wick.WickError) as e:
        wick.load(data)(*feeds)
    if match:
        assert re.search(match, str(e.value)), str(e.value)
    if status:
        assert e.value.status == status, str(e.value)
    return e.value


def litert_refuses(op, operands, options=None, **kw) -> bool:
    """True when LiteRT fails to prepare or run the one-op model."""
    data, feeds = build(op, operands, options, **kw)
    try:
        run_litert(data, feeds)
    except Exception:  # noqa: BLE001 - LiteRT raises RuntimeError/ValueError variants
        return True
    return False
