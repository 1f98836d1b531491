"""Test helpers: convert a module, run the file on LiteRT (and on wick when its runtime is
built) and compare against PyTorch eager.

Tolerances follow docs/testing.md ("Parity bars"): single ops 1e-5 * max(1, max|ref|), whole
models 1e-4 * ….
"""

from __future__ import annotations

import numpy as np
import torch

import wick

try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:  # pragma: no cover
    Interpreter = None


def wick_runtime_available() -> bool:
    try:
        from wick import runtime  # noqa: F401
    except Exception:
        return False
    try:
        runtime.load  # noqa: B018
        return True
    except Exception:
        return False


def run_litert(data: bytes, inputs, names=None) -> list[np.ndarray]:
    """Run through the serving_default signature.  ``names`` are the model's input names in
    order (wick.Model.inputs); LiteRT lists signature inputs alphabetically, so feed by name."""
    it = Interpreter(model_content=data)
    runner = it.get_signature_runner("serving_default")
    if names is None:
        names = [d["name"] for d in it.get_input_details()]
    out = runner(**dict(zip(names, inputs, strict=True)))
    return [out[k] for k in sorted(out, key=lambda s: int(s.split("_")[-1]))]


def to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def flat_outputs(y):
    if isinstance(y, torch.Tensor):
        return [y]
    if isinstance(y, (list, tuple)):
        out = []
        for i in y:
            out += flat_outputs(i)
        return out
    if isinstance(y, dict):
        out = []
        for v in y.values():
            out += flat_outputs(v)
        return out
    return []


def check(module, *args, tol=1e-5, channels_last_io=False, inputs=None, **convert_kwargs):
    """Convert, run on LiteRT, compare with eager; returns (model, max_err_ratio)."""
    module = module.eval()
    with torch.no_grad():
        ref = [to_numpy(r) for r in flat_outputs(module(*args))]
    model = wick.convert(module, args, channels_last_io=channels_last_io, **convert_kwargs)
    feed = [
        to_numpy(a) for a in (inputs if inputs is not None else args) if isinstance(a, torch.Tensor)
    ]
    if channels_last_io:
        feed = [np.transpose(x, (0, 2, 3, 1)) if x.ndim == 4 else x for x in feed]
    feed = [
        np.ascontiguousarray(x.astype(s.dtype)) for x, s in zip(feed, model.inputs, strict=True)
    ]
    got = run_litert(model.tflite_bytes, feed, [s.name for s in model.inputs])
    if channels_last_io:
        got = [np.transpose(g, (0, 3, 1, 2)) if g.ndim == 4 else g for g in got]
    assert len(got) == len(ref), (len(got), len(ref))
    worst = 0.0
    for g, r in zip(got, ref, strict=True):
        assert g.shape == r.shape, (g.shape, r.shape)
        if r.dtype == np.bool_ or np.issubdtype(r.dtype, np.integer):
            np.testing.assert_array_equal(g.astype(r.dtype), r)
            continue
        scale = max(1.0, float(np.abs(r).max()) if r.size else 1.0)
        err = float(np.abs(g.astype(np.float64) - r.astype(np.float64)).max()) if r.size else 0.0
        worst = max(worst, err / scale)
        assert err <= tol * scale, f"max abs err {err:.3g} > {tol:g} * {scale:.3g}"
    return model, worst
