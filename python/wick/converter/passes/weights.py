"""Weight compression of a float graph: dynamic-range int8 (hybrid kernels) and float16.

Runs after all other TFLite passes on a float model (``wick.convert(weights=...)``).

``"int8"`` — the constant float32 weights of FULLY_CONNECTED, CONV_2D (without groups) and
DEPTHWISE_CONV_2D become int8, symmetric, zero point 0, one scale per output channel (dim 0;
dim 3 for depthwise) = max|w_c| / 127, values round(w / scale) in [-127, 127].  The ops keep
float32 activations, bias and output: TFLite's hybrid kernels, which quantize the input at run
time (fully connected: per row, symmetric; convolutions: per image, asymmetric) and rescale
the int32 sums in float.  Weights smaller than ``MIN_ELEMENTS`` (TFLite's converter default
threshold: 1024) or with one output channel stay float.  BATCH_MATMUL keeps float weights
(wick's runtime has no hybrid BATCH_MATMUL yet).

``"float16"`` — every float32 constant with more than one element is stored as float16 and
read through a DEQUANTIZE (float16 -> float32) op, as TFLite's float16 quantization writes it.

Invariant: the graph computes the same function up to the weight rounding (at most half a
step of each channel's int8 grid, or float16's relative 2^-11).
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph

WEIGHT_MODES = ("float32", "int8", "float16")
MIN_ELEMENTS = 1024
_HYBRID = {"FULLY_CONNECTED": 0, "CONV_2D": 0, "DEPTHWISE_CONV_2D": 3}  # op -> channel dim


def _int8_weights(g: TGraph) -> int:
    n = 0
    done: dict[int, object] = {}
    for op in g.ops:
        axis = _HYBRID.get(op.op)
        if axis is None:
            continue
        if len(op.inputs) < 2 or op.inputs[0] is None or op.inputs[0].dtype != "float32":
            continue
        w = op.inputs[1]
        if w is None or not w.is_const or w.dtype != "float32" or w.numel < MIN_ELEMENTS:
            continue
        if op.outputs[0].dtype != "float32" or w.shape[axis] < 2:
            continue
        if op.op == "CONV_2D" and (op.inputs[0].rank != 4 or w.shape[3] != op.inputs[0].shape[3]):
            continue  # grouped: TFLite's hybrid CONV_2D has no groups
        q = done.get(id(w))
        if q is None:
            data = np.asarray(w.data, np.float64)
            red = tuple(i for i in range(data.ndim) if i != axis)
            amax = np.abs(data).max(axis=red)
            scale = np.where(amax > 0, amax / 127.0, 1.0)
            shape = [1] * data.ndim
            shape[axis] = -1
            qd = np.clip(np.round(data / scale.reshape(shape)), -127, 127).astype(np.int8)
            q = g.const(w.name + "/int8", qd)
            q.quant = dict(
                scale=[float(s) for s in scale.astype(np.float32)],
                zero_point=[0] * len(scale),
                quantized_dimension=axis,
            )
            done[id(w)] = q
        g.set_input(op, 1, q)
        n += 1
    return n


def _float16_weights(g: TGraph) -> int:
    n = 0
    done: dict[int, object] = {}
    for op in list(g.ops):
        if op.op == "DEQUANTIZE":
            continue
        for i, t in enumerate(op.inputs):
            if t is None or not t.is_const or t.dtype != "float32" or t.numel <= 1:
                continue
            f = done.get(id(t))
            if f is None:
                h = g.const(t.name + "/fp16", np.asarray(t.data, np.float16))
                f = g.tensor(t.name + "/fp32", t.shape, "float32")
                g.add("DEQUANTIZE", [h], [f], origin=op.origin, position=0)
                done[id(t)] = f
            g.set_input(op, i, f)
            n += 1
    return n


def compress_weights(g: TGraph, mode: str) -> int:
    """Apply ``mode`` (see the module docstring) to ``g``; returns the number of operands
    rewritten."""
    if mode == "float32":
        return 0
    n = _int8_weights(g) if mode == "int8" else _float16_weights(g)
    g.dce()
    return n
