"""Weight statistics shown in a node's details: min/max/mean/std, share of zeros, a histogram.

``array_stats`` works on any numpy array; the .tflite reader first dequantizes integer weights
((q - zero_point) * scale, per channel where the file says so) and keeps the raw integer range.
Computed once at generation time with numpy; the page only displays them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["array_stats", "dequantize"]


def array_stats(x: np.ndarray, bins: int = 24) -> dict[str, Any] | None:
    """Statistics of the values of ``x`` (booleans: the count of true values)."""
    x = np.asarray(x)
    out: dict[str, Any] = {"count": int(x.size)}
    if x.size == 0:
        return out
    if x.dtype == np.bool_:
        out["true"] = int(x.sum())
        return out
    if x.dtype.kind not in "biuf":
        return None
    xf = x.astype(np.float64) if x.dtype.kind != "f" or x.dtype.itemsize < 4 else x.reshape(-1)
    xf = xf.reshape(-1)
    if xf.dtype.kind == "f":
        finite = np.isfinite(xf)
        if not finite.all():
            out["nonfinite"] = int((~finite).sum())
            xf = xf[finite]
            if xf.size == 0:
                return out
    lo, hi = float(xf.min()), float(xf.max())
    with np.errstate(all="ignore"):  # (extreme weights: an infinite std is a fine answer)
        out.update(
            min=lo,
            max=hi,
            mean=float(xf.mean(dtype=np.float64)),
            std=float(xf.std(dtype=np.float64)),
            zeros=float(np.count_nonzero(xf == 0) / xf.size),
        )
        if hi > lo and xf.size > 1:
            out["hist"] = _histogram(xf, lo, hi, bins)
    return out


def _histogram(x: np.ndarray, lo: float, hi: float, bins: int) -> list[int]:
    """Counts in ``bins`` equal bins over [lo, hi] (hi > lo, all finite). np.histogram fails
    on ranges near float rounding ("Too many bins for data range", real weights do that) and
    on ranges whose width overflows."""
    x = x.astype(np.float64)
    if np.isfinite(hi - lo):
        pos = (x - lo) / (hi - lo)  # in [0, 1]
    else:  # (a width beyond float64: halves of finite values never overflow)
        pos = (x / 2 - lo / 2) / (hi / 2 - lo / 2)
    idx = np.clip(np.floor(pos * bins), 0, bins - 1).astype(np.int64)
    return np.bincount(idx, minlength=bins).tolist()


def dequantize(raw: np.ndarray, shape, quant: dict) -> np.ndarray | None:
    """Real values of integer weights, or None when the parameters do not fit the tensor."""
    scale = np.asarray(quant.get("scale", []), np.float64)
    if scale.size == 0:
        return None
    zp = np.asarray(quant.get("zero_point", [0] * len(scale)), np.float64)
    if len(zp) != len(scale):
        zp = np.resize(zp, len(scale))
    x = raw.astype(np.float64)
    if len(scale) == 1:
        return (x - zp[0]) * scale[0]
    shape = tuple(shape or ())
    dim = int(quant.get("quantized_dimension", 0))
    if not shape or int(np.prod(shape)) != raw.size:
        return None
    if not (0 <= dim < len(shape) and shape[dim] == len(scale)):
        # Some converters write a quantized_dimension that does not fit the tensor (a bias of
        # shape [C] with dimension 3): use the only axis of the right size, if there is one.
        axes = [a for a, d in enumerate(shape) if d == len(scale)]
        if len(axes) != 1:
            return None
        dim = axes[0]
    bshape = [1] * len(shape)
    bshape[dim] = len(scale)
    return (x.reshape(shape) - zp.reshape(bshape)) * scale.reshape(bshape)
