"""Weight compression of a float graph: dynamic-range int8 (hybrid kernels) and float16.

Runs after all other TFLite passes on a float model (``wick.convert(weights=...)``).

``"int8"`` — the constant float32 weights of FULLY_CONNECTED, CONV_2D (without groups) and
DEPTHWISE_CONV_2D become int8, symmetric, zero point 0, one scale per output channel (dim 0;
dim 3 for depthwise) = max|w_c| / 127, values round(w / scale) in [-127, 127].  The ops keep
float32 activations, bias and output: TFLite's hybrid kernels, which quantize the input at run
time (fully connected: per row with a zero point, ``asymmetric_quantize_inputs`` as TensorFlow's
converter writes it; convolutions: per image, asymmetric) and rescale the int32 sums in float.
Symmetric rows lose accuracy on LLM activations with outliers (SmolLM2-135M perplexity +3.9 %
against float, +0.7 % asymmetric; docs/llm.md).  Weights smaller than ``MIN_ELEMENTS`` (TFLite's converter default
threshold: 1024) or with one output channel stay float.  BATCH_MATMUL keeps float weights
(wick's runtime has no hybrid BATCH_MATMUL yet).

``"int4"`` — the constant float32 weights [N, K] of FULLY_CONNECTED become int4 in blocks of
``BLOCK_SIZE`` (32) along K, symmetric, one float16 scale per block (TFLite's
BlockwiseQuantization details, as LiteRT's own LLM converter writes them; LiteRT runs them
on XNNPACK, wick on its blockwise kernel): the block's value of largest magnitude lands on -8
when it is negative (scale = |w| / 8) and on +7 when positive (scale = w / 7), so that negative
extremes use the 16th level; the scale is rounded to a bfloat16 value (LiteRT's CPU kernel keeps
block scales in bfloat16, so it and wick use exactly the stored scale) and stays positive
(LiteRT's XNNPACK refuses negative scales, which would let every block use -8 as llama.cpp's
Q4_0 does); values round(w / scale) in [-8, 7]. SmolLM2-135M, weights only (fake-quantized in
PyTorch): perplexity 41.0 float -> 54.1, against 60.0 with max|w| / 7 (and 47.3 with Q4_0's
negative scales). Fully connected weights whose K is not a
multiple of the block and the convolutions get the int8 treatment above.

``"int4_llm"`` (``wick.llm.convert(quantize="int4")``) — ``"int4"`` except for the fully
connected layers an LLM's accuracy is most sensitive to, which get the int8 treatment: the LM
head (the fully connected layer with the most output rows: the vocabulary), the feed-forward
down projections (the ones whose K, the MLP's intermediate size, is the largest) and every
fully connected layer of the first two and the last decoder layer (delimited by the down
projections, in graph order) — llama.cpp's Q4_K_M likewise keeps its output and ``ffn_down``
tensors and its outer layers at higher precision. SmolLM2-135M, weights fake-quantized in
PyTorch, perplexity against float 21.04: all int4 27.00 (+28 %), this recipe 22.08 (+4.9 %),
LM head and down projections alone 22.86 (+8.7 %).

``"float16"`` — every float32 constant with more than one element is stored as float16 and
read through a DEQUANTIZE (float16 -> float32) op, as TFLite's float16 quantization writes it.

Invariant: the graph computes the same function up to the weight rounding (at most half a
step of each channel's int8 grid or each block's int4 grid, or float16's relative 2^-11).
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph, TTensor

WEIGHT_MODES = ("float32", "int8", "int4", "float16")  # what wick.convert(weights=) takes
LLM_INT4 = "int4_llm"  # wick.llm's int4 recipe (module docstring)
BLOCK_SIZE = 32
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
        if op.op == "FULLY_CONNECTED":
            op.options["asymmetric_quantize_inputs"] = True
        n += 1
    return n


def _bfloat16_values(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def blockwise_int4(w: np.ndarray, block: int = BLOCK_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """``w`` [N, K] float (K a multiple of ``block``) -> (int4 values [N, K] as int8 in
    [-8, 7], float16 scales [N, K / block]); see the module docstring."""
    n, k = w.shape
    blocks = np.asarray(w, np.float32).reshape(n, k // block, block)
    at = np.abs(blocks).argmax(axis=2)
    extreme = np.take_along_axis(blocks, at[:, :, None], axis=2)[:, :, 0]  # signed
    # the extreme onto -8 when it is negative, +7 when positive: scales stay positive (LiteRT's
    # XNNPACK refuses negative ones)
    scale = np.where(extreme < 0, -extreme / 8.0, extreme / 7.0)
    scale16 = _bfloat16_values(np.where(scale > 0, scale, 1.0).astype(np.float32))
    scale16 = scale16.astype(np.float16)
    used = _bfloat16_values(scale16.astype(np.float32)).astype(np.float64)  # what kernels use
    safe = np.where(used > 0, used, 1.0)[:, :, None]  # (a scale fp16 flushes to 0: zeros)
    q = np.where(used[:, :, None] > 0, np.rint(blocks / safe), 0)
    return np.clip(q, -8, 7).astype(np.int8).reshape(n, k), scale16


def pack_int4(q: np.ndarray) -> np.ndarray:
    """int4 values (int8 in [-8, 7], an even count) -> bytes, element 2i in the low nibble."""
    u = (np.asarray(q, np.int8).reshape(-1, 2).astype(np.uint8)) & 0x0F
    return (u[:, 0] | (u[:, 1] << 4)).astype(np.uint8)


def _blockwise_candidates(g: TGraph) -> list:
    """The FULLY_CONNECTED ops of ``g`` whose weights int4 blockwise can take."""
    found = []
    for op in g.ops:
        if op.op != "FULLY_CONNECTED" or len(op.inputs) < 2 or op.inputs[0] is None:
            continue
        w = op.inputs[1]
        if op.inputs[0].dtype != "float32" or op.outputs[0].dtype != "float32":
            continue
        if w is None or not w.is_const or w.dtype != "float32" or w.numel < MIN_ELEMENTS:
            continue
        if w.rank == 2 and w.shape[1] % BLOCK_SIZE == 0:
            found.append(op)
    return found


def _llm_int8_layers(fcs: list) -> set[int]:
    """ids of the ops ``"int4_llm"`` keeps at int8 (module docstring), of ``fcs`` in graph
    order."""
    if not fcs:
        return set()
    head = max(fcs, key=lambda op: op.inputs[1].shape[0])
    k_max = max(op.inputs[1].shape[1] for op in fcs)
    downs = [i for i, op in enumerate(fcs) if op.inputs[1].shape[1] == k_max and op is not head]
    keep = {id(head)} | {id(fcs[i]) for i in downs}
    if len(downs) >= 4:  # the first two decoder layers end at the second down projection
        keep |= {id(op) for op in fcs[: downs[1] + 1]}
        keep |= {id(op) for op in fcs[downs[-2] + 1 :] if op is not head}
    return keep


def _int4_weights(g: TGraph, llm: bool = False) -> int:
    n = 0
    done: dict[int, object] = {}
    fcs = _blockwise_candidates(g)
    int8 = _llm_int8_layers(fcs) if llm else set()
    for op in fcs:
        if id(op) in int8:
            continue
        w = op.inputs[1]
        q = done.get(id(w))
        if q is None:
            values, scales = blockwise_int4(np.asarray(w.data, np.float32))
            st = g.const(w.name + "/int4_scales", scales)
            q = TTensor(w.name + "/int4", list(w.shape), "int4", data=pack_int4(values))
            q.quant = dict(block_scales=st, block_size=BLOCK_SIZE)
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
    if mode in ("int4", LLM_INT4):
        n = _int4_weights(g, llm=mode == LLM_INT4) + _int8_weights(g)
    else:
        n = _int8_weights(g) if mode == "int8" else _float16_weights(g)
    g.dce()
    return n
