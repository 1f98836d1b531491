"""The single-op harness: one-operator files on wick against LiteRT's two interpreters.

A case builds a one-operator .tflite file with the writer (:func:`build`), runs it on wick twice
(its default kernel selection, and with the reference kernels forced) and on the *peers* —
LiteRT's default interpreter (``"default"``: optimized kernels, XNNPACK) and LiteRT's reference
resolver (``"reference"``: ``OpResolverType.BUILTIN_REF``, the bit-exact specification of the
integer kernels); a third, ``"builtin"`` (LiteRT's builtin kernels without XNNPACK,
``BUILTIN_WITHOUT_DEFAULT_DELEGATES``), is for ops XNNPACK runs differently and the reference
resolver lacks (test_shape_ops.py) — and compares (:func:`check`): float32 within
``1e-5 * max(1, max|ref|)`` (single fp32 ops summing in another order), everything else
bit-exact (same dtype, shape, bytes).

The peers run in a child process (:class:`LiteRTWorker`, started once and restarted after a
crash): LiteRT aborts the process on some files (a CHECK in a kernel's prepare). A peer that
crashes or refuses the file *cannot run* it: the case is compared with the other peers and a
:class:`PeerCannotRun` warning names the peer and its reason (pytest's closing line counts the
warnings); when no peer can run, the case is skipped with the reasons — never a silent pass.

Operands are constants (``C`` or a bare array: stored in the file, so wick usually folds the op
at prepare) or graph inputs (``In``: fed at run time); either may carry quantization
(``quant=dict(scale=..., zero_point=...)``; ``Q`` and ``QC`` spell it as arguments, per-channel
when ``scale`` is a list). An axis/shape/size operand given as ``In`` exercises the deferred
path: prepare returns WICK_STATUS_DEFER and the op is prepared again at invoke, where a bad value
must fail with "invalid input value". Outputs are dtypes, or ``(dtype, scale, zero_point)``.

The op tests (tests/python/ops/test_<op>.py) hold their cases to these rules: float32 outputs
within 1e-5 * max(1, max|ref|) of LiteRT (its default interpreter, XNNPACK where it applies: a
different summation order, and its reference resolver, where each runs the file); integer and
bool outputs identical. Malformed-parameter cases assert a WickError whose message names the
problem (:func:`fails`); values only known at run time must fail at invoke with "invalid input
value". Each test file draws its random operands from its own seeded stream (:func:`rand_from`).

Used by the op tests (tests/python/ops/) and the runtime tests that build single ops.
"""

from __future__ import annotations

import io
import os
import re
import select
import struct
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import wick
from tests.python.oracles.litert import run_litert as run_litert  # for in-process callers
from tests.python.oracles.litert import tolerance_check
from wick.tflite.writer import ModelWriter

FLOAT_REL = 1e-5  # fp32 single-op bar (summation order differs from LiteRT's kernels)
INVALID_INPUT = "invalid input value"
MALFORMED = "malformed model"
UNSUPPORTED = "unsupported operator"
PEERS = ("default", "reference")  # the two peers check() uses unless told otherwise
REPO = Path(__file__).resolve().parents[3]


class PeerCannotRun(UserWarning):
    """A peer (LiteRT's default interpreter or reference resolver) crashed on or refused a case."""


# ------------------------------------------------------------------------------- operands


class In:
    """An operand fed at run time (a graph input), optionally quantized."""

    def __init__(self, value, dtype=None, quant=None):
        self.value = np.asarray(value, dtype=dtype)
        self.quant = quant


class C:
    """A constant operand stored in the file, optionally quantized."""

    def __init__(self, value, dtype=None, quant=None):
        self.value = np.asarray(value, dtype=dtype)
        self.quant = quant


def quant(scale, zp=0, axis=0) -> dict:
    """Quantization parameters: per-tensor, or per-channel along ``axis`` when ``scale`` is a
    list (``zp`` a list or one value for every channel)."""
    if isinstance(scale, (list, tuple, np.ndarray)):
        zps = zp if isinstance(zp, (list, tuple, np.ndarray)) else [zp] * len(scale)
        return dict(
            scale=[float(s) for s in scale],
            zero_point=[int(z) for z in zps],
            quantized_dimension=axis,
        )
    return dict(scale=float(scale), zero_point=int(zp))


def Q(value, scale, zp=0, axis=0):
    """A quantized graph input."""
    return In(value, quant=quant(scale, zp, axis))


def QC(value, scale, zp=0, axis=0):
    """A quantized constant (weights, bias)."""
    return C(value, quant=quant(scale, zp, axis))


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


def rand_from(rng):
    """``r(shape, dtype="float32", **kw)``: :func:`rand` drawing from ``rng``."""

    def r(shape, dtype="float32", **kw):
        return rand(rng, shape, dtype, **kw)

    return r


def i32(*v):
    """An int32 vector of the values (shapes, axes, sizes)."""
    return np.array(v, np.int32)


# ---------------------------------------------------------------------------------- build


def build(
    op,
    operands,
    options=None,
    *,
    outs=None,
    n_out=1,
    out_dtypes=None,
    out_shapes=None,
    version=None,
):
    """A one-op model. Returns (bytes, run-time feeds in graph-input order).

    ``outs``: one entry per output, a dtype or ``(dtype, scale, zero_point)``; without it,
    ``out_dtypes`` (dtypes) or ``n_out`` outputs of the first operand's dtype. Output shapes are
    declared [1] unless ``out_shapes`` gives them (both runtimes compute them; LiteRT's SLICE
    checks them)."""
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
            t = sg.add_tensor(f"in{k}", list(x.value.shape), x.value.dtype, quant=x.quant)
            graph_inputs.append(t)
            feeds.append(x.value)
        else:
            t = sg.add_constant(f"c{k}", x.value, quant=x.quant)
        ins.append(t)
    if outs is None:
        outs = list(out_dtypes) if out_dtypes is not None else [first_dtype] * n_out
    elif isinstance(outs, tuple) and len(outs) == 3 and isinstance(outs[1], (float, int)):
        outs = [outs]  # one (dtype, scale, zero_point)
    shapes = [[1]] * len(outs) if out_shapes is None else [list(sh) for sh in out_shapes]
    out_ts = []
    for j, (o, shape) in enumerate(zip(outs, shapes, strict=True)):
        if isinstance(o, tuple):
            dt, s, z = o
            out_ts.append(sg.add_tensor(f"out{j}", shape, dt, quant=quant(s, z)))
        else:
            out_ts.append(sg.add_tensor(f"out{j}", shape, o))
    sg.add_operator(op, ins, out_ts, options=options, version=version)
    sg.set_inputs(graph_inputs)
    sg.set_outputs(out_ts)
    return w.finish(), feeds


# ---------------------------------------------------------------------------------- peers

_WORKER = r"""
import io, os, struct, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
out = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)  # anything LiteRT prints goes to stderr, not into the replies
from tests.python.oracles.litert import run_litert


def run_builtin(model, feeds):
    # LiteRT's builtin kernels without the XNNPACK delegate; 0-d feeds stay 0-d and empty
    # outputs come back as zeros (get_tensor refuses them)
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_content=model, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    details = it.get_input_details()
    for d, a in zip(details, feeds):
        if tuple(d["shape"]) != a.shape:
            it.resize_tensor_input(d["index"], list(a.shape))
    it.allocate_tensors()
    for d, a in zip(details, feeds):
        it.set_tensor(d["index"], a)
    it.invoke()
    return [np.zeros(d["shape"], d["dtype"]) if 0 in d["shape"] else
            np.array(it.get_tensor(d["index"])) for d in it.get_output_details()]


inp = sys.stdin.buffer
while True:
    head = inp.read(8)
    if len(head) < 8:
        break
    req = np.load(io.BytesIO(inp.read(struct.unpack("<Q", head)[0])), allow_pickle=True)
    try:
        feeds = [req[f"in{i}"] for i in range(int(req["n"]))]
        which = str(req["peer"])
        if which == "builtin":
            outs = run_builtin(req["model"].tobytes(), feeds)
        else:
            outs = run_litert(req["model"].tobytes(), feeds, reference=which == "reference")
        reply = dict(ok=1, n=len(outs), **{f"out{i}": o for i, o in enumerate(outs)})
    except Exception as e:
        reply = dict(ok=0, why=f"{type(e).__name__}: {e}"[:400])
    buf = io.BytesIO()
    np.savez(buf, **reply)
    out.write(struct.pack("<Q", len(buf.getvalue())) + buf.getvalue())
    out.flush()
"""


class LiteRTWorker:
    """LiteRT in a long-lived child process: one request at a time, restarted after a crash."""

    TIMEOUT_S = 600

    def __init__(self):
        self._proc = None
        self._stderr = None

    def _start(self):
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(REPO)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )

    def _read(self, n: int) -> bytes:
        chunks, left, fd = [], n, self._proc.stdout.fileno()
        while left:
            ready, _, _ = select.select([fd], [], [], self.TIMEOUT_S)
            if not ready:
                raise TimeoutError(f"LiteRT took over {self.TIMEOUT_S} s")
            b = os.read(fd, left)
            if not b:
                raise EOFError
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks)

    def _died(self) -> str:
        code = self._proc.wait()
        self._stderr.seek(0)
        lines = [ln for ln in self._stderr.read().decode(errors="replace").splitlines() if ln]
        self._proc = None
        if code < 0:
            return f"crashed with signal {-code}" + (f" ({lines[-1][:200]})" if lines else "")
        return (lines[-1] if lines else f"exited with status {code}")[:400]

    def run(self, data: bytes, feeds, which: str):
        """Peer ``which``'s outputs, or a string saying why it cannot run the file."""
        if self._proc is None:
            self._start()
        buf = io.BytesIO()
        arrays = {f"in{i}": np.asarray(a) for i, a in enumerate(feeds)}
        np.savez(buf, model=np.frombuffer(data, np.uint8), n=len(feeds), peer=which, **arrays)
        try:
            self._proc.stdin.write(struct.pack("<Q", len(buf.getvalue())) + buf.getvalue())
            self._proc.stdin.flush()
            size = struct.unpack("<Q", self._read(8))[0]
            reply = np.load(io.BytesIO(self._read(size)), allow_pickle=True)
        except TimeoutError as e:
            self._proc.kill()
            self._died()
            return str(e)
        except (EOFError, BrokenPipeError):
            return self._died()
        if not int(reply["ok"]):
            return str(reply["why"])
        return [reply[f"out{i}"] for i in range(int(reply["n"]))]


_worker = LiteRTWorker()


def peer(data: bytes, feeds, which: str):
    """Run the file on one peer (``"default"``, ``"reference"`` or ``"builtin"``): its outputs,
    or a string saying why the peer cannot run it."""
    if which not in (*PEERS, "builtin"):
        raise ValueError(f"unknown peer {which!r}, expected one of {PEERS} or 'builtin'")
    return _worker.run(data, feeds, which)


def run_peers(data: bytes, feeds, peers=PEERS) -> dict[str, list]:
    """The outputs of every peer that can run the file; a :class:`PeerCannotRun` warning for each
    one that cannot, and a skip (with the reasons) when none can."""
    results, cannot = {}, {}
    for which in peers:
        r = peer(data, feeds, which)
        if isinstance(r, str):
            cannot[which] = r
            warnings.warn(f"LiteRT {which} cannot run this case: {r}", PeerCannotRun, stacklevel=3)
        else:
            results[which] = r
    if not results:
        pytest.skip(
            "no peer can run this case: " + "; ".join(f"{k}: {v}" for k, v in cannot.items())
        )
    return results


# -------------------------------------------------------------------------------- compare


def compare(got, ref, what="output", *, exact=False):
    """float32: within FLOAT_REL (``exact=True``: identical bytes); other dtypes: identical
    bytes, with the count and size of the differences in the message."""
    assert len(got) == len(ref), f"{len(got)} outputs, LiteRT has {len(ref)}"
    for j, (g, r) in enumerate(zip(got, ref, strict=True)):
        r = np.asarray(r)
        assert g.dtype == r.dtype, f"{what} {j}: dtype {g.dtype} != LiteRT {r.dtype}"
        assert g.shape == r.shape, f"{what} {j}: shape {g.shape} != LiteRT {r.shape}"
        if g.dtype == np.float32 and not exact:
            t = tolerance_check(g, r, rel=FLOAT_REL, name=f"{what} {j}")
            assert t, t.message
        elif g.tobytes() != r.tobytes():
            if g.dtype.kind in "iub":
                d = g.astype(np.int64) - r.astype(np.int64)
                raise AssertionError(
                    f"{what} {j}: {int((d != 0).sum())} of {d.size} values differ (max "
                    f"{int(np.abs(d).max())})\nwick   {g.ravel()[:12]}\nLiteRT {r.ravel()[:12]}"
                )
            raise AssertionError(f"{what} {j} differs:\nwick {g}\nLiteRT {r}")


def check_file(data: bytes, feeds, *, peers=PEERS, exact=False):
    """wick (default kernels, then reference kernels forced) against every peer that can run the
    file. Returns wick's default outputs."""
    got = wick.load(data)(*feeds)
    mine = wick.load(data, reference=True)(*feeds)
    for which, ref in run_peers(data, feeds, peers).items():
        compare(got, ref, f"wick vs LiteRT {which}: output", exact=exact)
        compare(mine, ref, f"wick reference kernels vs LiteRT {which}: output", exact=exact)
    return got


def check(op, operands, options=None, *, peers=PEERS, reference=None, exact=False, **kw):
    """Builds the one-op file and checks it (:func:`check_file`). ``reference=True`` is
    ``peers=("reference",)``, ``reference=False`` is ``peers=("default",)``."""
    if reference is not None:
        peers = ("reference",) if reference else ("default",)
    data, feeds = build(op, operands, options, **kw)
    return check_file(data, feeds, peers=peers, exact=exact)


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


def litert_refuses(op, operands, options=None, *, which="default", **kw) -> bool:
    """True when the LiteRT peer ``which`` cannot prepare or run the one-op model."""
    data, feeds = build(op, operands, options, **kw)
    return isinstance(peer(data, feeds, which), str)
