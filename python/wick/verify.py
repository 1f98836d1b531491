"""The converter's self-check: run the file it just wrote and compare it with PyTorch.

``wick.convert`` (and ``wick.quantize``) call :func:`verify_model` after writing a model, unless
asked not to (``verify=False``). Every signature is loaded on wick's C runtime and run on the
sample inputs the user gave; its outputs are compared with the module's eager outputs on the
same inputs:

* a file that wick's own runtime refuses (load, prepare or invoke fails) raises
  :class:`ConversionError` — the converter must never hand over a file that does not run;
* an output further from PyTorch than the scheme's bar warns with :class:`VerificationWarning`,
  naming the worst output and a hint at the culprit: the same file is run again on the
  reference kernels with fusion off, which tells a lowering problem (the file computes
  something else) from a runtime kernel problem (only the optimized path is off).

Bars, relative to max(1, max|ref|) of each float output: ``float32`` 1e-3 (ten times the test
suite's fp32 bar, so that legitimate reassociation never warns), ``float16`` weights 3e-2,
``int8`` weights or int8 graphs 0.1, ``int4`` (blockwise) weights 0.3; a module with float16/bfloat16 inputs is held to at least
the float16 bar. Integer and bool outputs must be equal.
"""

from __future__ import annotations

import warnings

import numpy as np

from .converter.errors import ConversionError

BARS = {"float32": 1e-3, "float16": 3e-2, "int8": 0.1, "int4": 0.3}


class VerificationWarning(UserWarning):
    """The converted file runs, but its outputs are further from PyTorch's than expected."""


def _tensor_leaves(args, kwargs):
    import torch
    from torch.utils import _pytree

    leaves = _pytree.tree_leaves((tuple(args), dict(kwargs or {})))
    return [x for x in leaves if isinstance(x, torch.Tensor)]


def _numpy(x) -> np.ndarray:
    """A tensor as numpy; half types (bfloat16 has no numpy type) as float32."""
    import torch

    x = x.detach().cpu()
    if x.dtype in (torch.bfloat16, torch.float16):
        x = x.float()
    return x.numpy()


def _eager_outputs(module, args, kwargs):
    import torch
    from torch.utils import _pytree

    with torch.no_grad():
        result = module(*args, **(kwargs or {}))
    return [x for x in _pytree.tree_leaves(result) if isinstance(x, torch.Tensor)]


def _to_file_layout(x: np.ndarray, channels_last_io: bool) -> np.ndarray:
    if channels_last_io and x.ndim == 4 and x.dtype.kind == "f":
        return np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1)))
    return x


def _from_file_layout(x: np.ndarray, channels_last_io: bool) -> np.ndarray:
    if channels_last_io and x.ndim == 4 and x.dtype.kind == "f":
        return np.transpose(x, (0, 3, 1, 2))
    return x


def _worst(got, ref, bar):
    """(index, relative error, description) of the worst output over the bar, or None."""
    worst = None
    for i, (g, r) in enumerate(zip(got, ref, strict=True)):
        if g.shape != r.shape:
            return i, float("inf"), f"shape {list(g.shape)}, PyTorch {list(r.shape)}"
        if r.size == 0:
            continue
        if r.dtype.kind in "biu" or g.dtype.kind in "biu":
            n = int(np.sum(g.astype(np.int64) != r.astype(np.int64)))
            if n and (worst is None or worst[1] < float("inf")):
                worst = (i, float("inf"), f"{n} of {r.size} values differ")
            continue
        scale = max(1.0, float(np.nanmax(np.abs(r))) if np.isfinite(r).any() else 1.0)
        both_nan = np.isnan(g) & np.isnan(r)
        same_inf = np.isinf(r) & (g == r)
        diff = np.where(both_nan | same_inf, 0.0, np.abs(g.astype(np.float64) - r))
        err = float(np.nan_to_num(diff, nan=np.inf).max()) / scale
        if err > bar and (worst is None or err > worst[1]):
            worst = (i, err, f"max |error| {err * scale:.3g} (max |PyTorch| {scale:.3g})")
    return worst


def verify_model(model, specs, *, channels_last_io: bool, scheme: str, reference_fn=None):
    """Runs every signature of ``model`` on wick against its module (see the module doc).

    ``specs``: [(key, module, args, kwargs)] as given to convert. ``scheme``: a key of BARS.
    ``reference_fn`` (optional): key -> the eager module to compare with, when it is not the
    converted one (wick.quantize compares its int8 file with the PT2E reference module)."""
    from . import runtime

    bar = BARS[scheme]
    data = model.tflite_bytes
    for key, module, args, kwargs in specs:
        sig = model[key]
        leaves = _tensor_leaves(args, kwargs)
        feeds = [_to_file_layout(_numpy(x), channels_last_io) for x in leaves]
        half = any(x.is_floating_point() and x.element_size() == 2 for x in leaves)
        try:
            got = [
                _from_file_layout(np.asarray(g), channels_last_io)
                for g in sig.run(*feeds)  # (wick's default kernels)
            ]
        except runtime.WickError as e:
            raise ConversionError(
                f"the converted file does not run on wick's runtime: {e}",
                hint="this is a converter bug: please report it with the model; "
                "wick.convert(..., verify=False) returns the file anyway",
            ) from e
        ref_module = reference_fn(key) if reference_fn else module
        try:
            ref = [_numpy(r) for r in _eager_outputs(ref_module, args, kwargs)]
        except Exception:  # noqa: BLE001 - a module that cannot run eagerly again: nothing to compare
            continue
        if len(ref) != len(got):
            continue  # (outputs that are constants or aliases: the structure differs, not values)
        # (a half-precision module: its eager outputs are only that precise)
        sig_bar = max(bar, BARS["float16"]) if half else bar
        worst = _worst(got, ref, sig_bar)
        if worst is None:
            continue
        i, _, what = worst
        name = sig.outputs[i].name if i < len(sig.outputs) else str(i)
        hint = _culprit_hint(data, key, feeds, ref, sig_bar, channels_last_io)
        where = f" signature {key!r}," if len(model.signatures) > 1 else ""
        warnings.warn(
            f"wick.convert:{where} output {i} ({name}) of the converted file differs from "
            f"PyTorch on the sample inputs: {what}; the bar for {scheme} is "
            f"{sig_bar:g} * max(1, max|PyTorch|). {hint}",
            VerificationWarning,
            stacklevel=3,
        )


def _culprit_hint(data, key, feeds, ref, bar, channels_last_io) -> str:
    from . import runtime

    try:  # (forcing the reference kernels also turns fusion off)
        rt = runtime.load(data, reference=True)
        plain = [
            _from_file_layout(np.asarray(g), channels_last_io) for g in rt.signature(key)(*feeds)
        ]
    except runtime.WickError:
        return "The reference kernels refuse the file."
    if _worst(plain, ref, bar) is None:
        return (
            "On the reference kernels (no fusion) the file agrees: the optimized kernels or "
            "fusion are at fault (run with WICK_FORCE_REFERENCE=1 meanwhile; please report it)."
        )
    return (
        "The reference kernels give the same difference: the conversion computes something "
        "else; debug_dir= writes the graph after every stage to find the op."
    )
