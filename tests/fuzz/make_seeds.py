#!/usr/bin/env python3
"""Seed corpus for the wick fuzz targets.

Usage: make_seeds.py OUT_DIR [--max-bytes N] [--value-header FILE --value-seeds DIR]
                     [--cache-header FILE --cache-seeds DIR]

Writes into OUT_DIR:
  * every $WICK_SHARED_MODELS/*.tflite (default: shared/models beside the repository) no larger than
    --max-bytes (default 1 MiB: bigger files make every mutation slow), copied unchanged;
  * tiny single-op and few-op models built with ``wick.tflite.writer`` — one per op family
    wick runs, small enough (a few hundred bytes) that mutations reach every field often.

With --value-header/--value-seeds it also writes the fixed models of the fuzz_input_values
target (VALUE_MODELS below: one operator whose indices, shapes, permutations, sizes, pads,
multiples, axes or divisors are *graph inputs*, so only the kernels' run-time checks stand
between fuzzed values and memory) as a C header, and one seed per model holding valid values.
With --cache-header/--cache-seeds, likewise the models of fuzz_weight_cache (CACHE_MODELS:
ops that pack their weights) and its seeds (two bytes each: model and flags).

Seeds only need to be valid-looking; the fuzzers find the broken ones. Each writer model is
built in its own try block so a writer change that rejects one recipe costs that seed only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from wick.tflite import binary_ops  # noqa: E402
from wick.tflite.unary_ops import unary_ops  # noqa: E402
from wick.tflite.writer import ModelWriter  # noqa: E402


def f32(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32)


def unary(op, shape=(1, 4, 4, 3), dtype="float32", options=None, out_shape=None):
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", list(shape), dtype)
    y = sg.add_tensor("y", list(out_shape or shape), dtype)
    sg.add_operator(op, [x], [y], options=options)
    sg.set_inputs([x])
    sg.set_outputs([y])
    w.add_signature("serving_default", sg, inputs={"x": x}, outputs={"y": y})
    return w.finish()


def binary(op, a=(1, 4, 3), b=(3,), dtype="float32", out_dtype=None, options=None):
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", list(a), dtype)
    k = sg.add_constant("k", (np.arange(int(np.prod(b))) % 3 + 1).reshape(b).astype(dtype))
    out = list(np.broadcast_shapes(tuple(a), tuple(b)))
    y = sg.add_tensor("y", out, out_dtype or dtype)
    sg.add_operator(op, [x, k], [y], options=options)
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def with_const(op, x_shape, const, out_shape, options=None, dtype="float32"):
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", list(x_shape), dtype)
    c = sg.add_constant("c", const)
    y = sg.add_tensor("y", list(out_shape), dtype)
    sg.add_operator(op, [x, c], [y], options=options)
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def conv():
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, 5, 5, 2], "float32")
    k = sg.add_constant("k", f32(3, 3, 3, 2))
    b = sg.add_constant("b", f32(3, seed=1))
    y = sg.add_tensor("y", [1, 3, 3, 3], "float32")
    sg.add_operator(
        "CONV_2D",
        [x, k, b],
        [y],
        options=dict(padding="SAME", stride_w=2, stride_h=2, fused_activation_function="RELU"),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def depthwise():
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, 4, 4, 2], "float32")
    k = sg.add_constant("k", f32(1, 3, 3, 4))
    b = sg.add_constant("b", f32(4, seed=2))
    y = sg.add_tensor("y", [1, 2, 2, 4], "float32")
    sg.add_operator(
        "DEPTHWISE_CONV_2D",
        [x, k, b],
        [y],
        options=dict(padding="VALID", stride_w=1, stride_h=1, depth_multiplier=2),
    )
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def fully_connected():
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 6], "float32")
    k = sg.add_constant("w", f32(4, 6))
    b = sg.add_constant("b", f32(4, seed=3))
    y = sg.add_tensor("y", [2, 4], "float32")
    sg.add_operator("FULLY_CONNECTED", [x, k, b], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def pool(op):
    return unary(
        op,
        (1, 4, 4, 2),
        out_shape=(1, 2, 2, 2),
        options=dict(padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2),
    )


def concat():
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    a = sg.add_tensor("a", [2, 3], "float32")
    b = sg.add_tensor("b", [2, 2], "float32")
    y = sg.add_tensor("y", [2, 5], "float32")
    sg.add_operator("CONCATENATION", [a, b], [y], options=dict(axis=1))
    sg.set_inputs([a, b])
    sg.set_outputs([y])
    return w.finish()


def composite():
    w = ModelWriter(description="seed")
    main = w.add_subgraph("main")
    dec = w.add_subgraph("decomposition")
    x = main.add_tensor("x", [2, 3], "float32")
    y = main.add_tensor("y", [2, 3], "float32")
    a = dec.add_tensor("a", [2, 3], "float32")
    b = dec.add_tensor("b", [2, 3], "float32")
    dec.add_operator("ADD", [a, a], [b])
    dec.set_inputs([a])
    dec.set_outputs([b])
    main.add_operator(
        "STABLEHLO_COMPOSITE",
        [x],
        [y],
        options=dict(name="seed.double", decomposition_subgraph_index=1),
    )
    main.set_inputs([x])
    main.set_outputs([y])
    return w.finish()


def op_model(
    op, inputs, out_shape, out_dtype="float32", options=None, n_out=1, quant=None, custom=None
):
    """One operator. `inputs`: ("in", shape, dtype) graph inputs or numpy arrays (constants);
    output shapes need not be exact (wick's prepare sets them); `quant` applies to every
    activation tensor (int8 seeds); `custom` (code, options bytes) makes it a CUSTOM op."""
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    ins, graph_ins = [], []
    for k, spec in enumerate(inputs):
        if isinstance(spec, tuple):
            t = sg.add_tensor(f"in{k}", list(spec[1]), spec[2], quant=quant)
            graph_ins.append(t)
        else:
            t = sg.add_constant(f"c{k}", spec)
        ins.append(t)
    outs = [sg.add_tensor(f"out{k}", list(out_shape), out_dtype, quant=quant) for k in range(n_out)]
    if custom is not None:
        sg.add_operator("CUSTOM", ins, outs, custom_code=custom[0], custom_options=custom[1])
    else:
        sg.add_operator(op, ins, outs, options=options)
    sg.set_inputs(graph_ins)
    sg.set_outputs(outs)
    return w.finish()


def flex(options):
    from flatbuffers import flexbuffers

    return bytes(flexbuffers.Dumps(options))


def quantize():
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 4], "float32")
    q = sg.add_tensor("q", [2, 4], "int8", quant=dict(scale=[0.05], zero_point=[-1]))
    y = sg.add_tensor("y", [2, 4], "float32")
    sg.add_operator("QUANTIZE", [x], [q])
    sg.add_operator("DEQUANTIZE", [q], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def int8_softmax():
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 5], "int8", quant=dict(scale=[0.1], zero_point=[0]))
    y = sg.add_tensor("y", [2, 5], "int8", quant=dict(scale=[1.0 / 256], zero_point=[-128]))
    sg.add_operator("SOFTMAX", [x], [y], options=dict(beta=1.0))
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def while_loop():
    """i < 5: (i + 1, x * 2) — cond and body subgraphs."""
    w = ModelWriter(description="seed")
    main, cond, body = w.add_subgraph("main"), w.add_subgraph("cond"), w.add_subgraph("body")
    i0 = main.add_tensor("i", [], "int32")
    x0 = main.add_tensor("x", [2, 3], "float32")
    i1 = main.add_tensor("i_out", [], "int32")
    x1 = main.add_tensor("x_out", [2, 3], "float32")
    main.add_operator(
        "WHILE", [i0, x0], [i1, x1], options=dict(cond_subgraph_index=1, body_subgraph_index=2)
    )
    main.set_inputs([i0, x0])
    main.set_outputs([i1, x1])
    ci = cond.add_tensor("i", [], "int32")
    cx = cond.add_tensor("x", [2, 3], "float32")
    lim = cond.add_constant("limit", np.array(5, np.int32))
    c = cond.add_tensor("c", [], "bool")
    cond.add_operator("LESS", [ci, lim], [c])
    cond.set_inputs([ci, cx])
    cond.set_outputs([c])
    bi = body.add_tensor("i", [], "int32")
    bx = body.add_tensor("x", [2, 3], "float32")
    one = body.add_constant("one", np.array(1, np.int32))
    bi1 = body.add_tensor("i1", [], "int32")
    bx1 = body.add_tensor("x1", [2, 3], "float32")
    body.add_operator("ADD", [bi, one], [bi1])
    body.add_operator("ADD", [bx, bx], [bx1])
    body.set_inputs([bi, bx])
    body.set_outputs([bi1, bx1])
    return w.finish()


def if_then_else():
    """c ? x + x : x * x."""
    w = ModelWriter(description="seed")
    main, then, other = w.add_subgraph("main"), w.add_subgraph("then"), w.add_subgraph("else")
    c = main.add_tensor("c", [], "bool")
    x = main.add_tensor("x", [2, 3], "float32")
    y = main.add_tensor("y", [2, 3], "float32")
    main.add_operator("IF", [c, x], [y], options=dict(then_subgraph_index=1, else_subgraph_index=2))
    main.set_inputs([c, x])
    main.set_outputs([y])
    for sg, op in ((then, "ADD"), (other, "MUL")):
        a = sg.add_tensor("x", [2, 3], "float32")
        b = sg.add_tensor("y", [2, 3], "float32")
        sg.add_operator(op, [a, a], [b])
        sg.set_inputs([a])
        sg.set_outputs([b])
    return w.finish()


def variables():
    """tf.Variable state as TensorFlow's converter writes it: CALL_ONCE runs an init subgraph
    that assigns v0; main reads v, adds x, assigns and reads it back."""
    w = ModelWriter(description="seed")
    main, init = w.add_subgraph("main"), w.add_subgraph("init")
    main.add_operator("CALL_ONCE", [], [], options=dict(init_subgraph_index=1))
    handles = []
    for sg in (main, init):
        h = sg.add_tensor("h", [], "resource")
        sg.add_operator("VAR_HANDLE", [], [h], options=dict(container="", shared_name="v"))
        handles.append(h)
    x = main.add_tensor("x", [3], "float32")
    r = main.add_tensor("r", [3], "float32")
    s = main.add_tensor("s", [3], "float32")
    y = main.add_tensor("y", [3], "float32")
    main.add_operator("READ_VARIABLE", [handles[0]], [r])
    main.add_operator("ADD", [r, x], [s])
    main.add_operator("ASSIGN_VARIABLE", [handles[0], s], [])
    main.add_operator("READ_VARIABLE", [handles[0]], [y])
    main.set_inputs([x])
    main.set_outputs([y])
    init.add_operator("ASSIGN_VARIABLE", [handles[1], init.add_constant("v0", f32(3))], [])
    init.set_inputs([])
    init.set_outputs([])
    return w.finish()


Q_ACT = dict(scale=[0.05], zero_point=[2])


def int8_weights(*shape, axis=0, seed=0):
    """Per-channel int8 weights along `axis` and their quantization."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, size=shape).astype(np.int8)
    return w, dict(scale=[0.01 * (k + 1) for k in range(shape[axis])], quantized_dimension=axis)


def int8_layer(op, x_shape, w_shape, bias_n, out_shape, options=None, axis=0):
    """An int8 layer with constant weights (and bias); TRANSPOSE_CONV takes its constant
    output_shape first and the input third."""
    w = ModelWriter(description="seed")
    sg = w.add_subgraph()
    x = sg.add_tensor("x", list(x_shape), "int8", quant=Q_ACT)
    wv, wq = int8_weights(*w_shape, axis=axis)
    k = sg.add_constant("w", wv, quant=wq)
    ins = [x, k]
    if op == "TRANSPOSE_CONV":
        ins = [sg.add_constant("shape", np.array(out_shape, np.int32)), k, x]
    if bias_n:
        bq = dict(scale=[0.05 * s for s in wq["scale"]], quantized_dimension=0)
        ins.append(sg.add_constant("b", np.arange(bias_n, dtype=np.int32) * 7, quant=bq))
    y = sg.add_tensor("y", list(out_shape), "int8", quant=dict(scale=[0.1], zero_point=[-3]))
    sg.add_operator(op, ins, [y], options=options)
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def densify():
    """x + DENSIFY(k): k [4, 8] stored as 1x4 blocks, CSR over the block columns (uint8
    segments and indices), so mutations reach every sparsity field."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [4, 8])
    sparsity = {
        "traversal_order": [0, 1, 2],
        "block_map": [1],
        "dim_metadata": [
            {"format": "DENSE", "dense_size": 4},
            {
                "format": "SPARSE_CSR",
                "array_segments": np.array([0, 1, 2, 2, 4], np.uint8),
                "array_indices": np.array([0, 1, 0, 1], np.uint8),
            },
            {"format": "DENSE", "dense_size": 4},
        ],
    }
    k = sg.add_sparse_constant("k", [4, 8], f32(16), sparsity)
    kd = sg.add_tensor("k_dense", [4, 8])
    y = sg.add_tensor("y", [4, 8])
    sg.add_operator("DENSIFY", [k], [kd])
    sg.add_operator("ADD", [x, kd], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def fx(*shape):
    return ("in", shape, "float32")


def binary_dtype(op) -> str:
    return "bool" if getattr(op, "logical", False) else "float32"


def binary_out(op) -> str | None:
    """bool for the comparisons and logical ops, else the input's type."""
    return "bool" if isinstance(op, binary_ops.CompareOp) else None


# the unary math ops of the runtime's src/kernels/reference/unary_ops.inc, and these
UNARY = [op.name for op in unary_ops()] + ["GELU", "ZEROS_LIKE", "LOG_SOFTMAX"]

I32 = np.int32
EXTRA = {
    "audio_spectrogram": lambda: op_model(
        "CUSTOM",
        [("in", (40, 2), "float32")],
        (2, 3, 9),
        custom=("AudioSpectrogram", flex({"window_size": 16, "stride": 8, "magnitude_squared": 1})),
    ),
    "numeric_verify": lambda: op_model(
        "CUSTOM",
        [("in", (2, 3), "int8"), ("in", (2, 3), "float32")],
        (2, 3),
        quant=None,
        custom=("NumericVerify", flex({"tolerance": 5.0, "log_if_failed": True})),
    ),
    "mfcc": lambda: op_model(
        "CUSTOM",
        [("in", (1, 3, 33), "float32"), np.array([8000], I32)],
        (1, 3, 4),
        custom=(
            "Mfcc",
            flex(
                {
                    "upper_frequency_limit": 3000,
                    "lower_frequency_limit": 20,
                    "filterbank_channel_count": 8,
                    "dct_coefficient_count": 4,
                }
            ),
        ),
    ),
    "leaky_relu": lambda: op_model("LEAKY_RELU", [fx(2, 3)], (2, 3), options=dict(alpha=0.2)),
    "prelu": lambda: op_model("PRELU", [fx(1, 2, 3), f32(3)], (1, 2, 3)),
    "cast": lambda: op_model("CAST", [fx(2, 3)], (2, 3), "int32"),
    "densify": densify,
    "logical_not": lambda: op_model("LOGICAL_NOT", [("in", (4,), "bool")], (4,), "bool"),
    "arg_max": lambda: op_model(
        "ARG_MAX", [fx(2, 5), np.array([1], I32)], (2,), "int32", options=dict(output_type="int32")
    ),
    "arg_min": lambda: op_model(
        "ARG_MIN", [fx(2, 5), np.array([0], I32)], (5,), "int32", options=dict(output_type="int32")
    ),
    "batch_matmul": lambda: op_model("BATCH_MATMUL", [fx(2, 3, 4), f32(2, 4, 5)], (2, 3, 5)),
    "broadcast_to": lambda: op_model("BROADCAST_TO", [fx(1, 3), np.array([4, 3], I32)], (4, 3)),
    "cumsum": lambda: op_model("CUMSUM", [fx(2, 4), np.array(1, I32)], (2, 4)),
    "rfft2d": lambda: op_model(
        "RFFT2D", [fx(2, 3, 6), np.array([4, 8], I32)], (2, 4, 5), "complex64"
    ),
    "complex_abs": lambda: op_model("COMPLEX_ABS", [("in", (2, 3), "complex64")], (2, 3)),
    "real": lambda: op_model("REAL", [("in", (2, 3), "complex64")], (2, 3)),
    "imag": lambda: op_model("IMAG", [("in", (2, 3), "complex64")], (2, 3)),
    "depth_to_space": lambda: op_model(
        "DEPTH_TO_SPACE", [fx(1, 2, 2, 8)], (1, 4, 4, 2), options=dict(block_size=2)
    ),
    "space_to_depth": lambda: op_model(
        "SPACE_TO_DEPTH", [fx(1, 4, 4, 2)], (1, 2, 2, 8), options=dict(block_size=2)
    ),
    "dynamic_update_slice": lambda: op_model(
        "DYNAMIC_UPDATE_SLICE", [fx(4, 4), f32(2, 2), np.array([1, 1], I32)], (4, 4)
    ),
    "embedding_lookup": lambda: op_model(
        "EMBEDDING_LOOKUP", [("in", (3,), "int32"), f32(5, 2)], (3, 2)
    ),
    "expand_dims": lambda: op_model("EXPAND_DIMS", [fx(2, 3), np.array([1], I32)], (2, 1, 3)),
    "fill": lambda: op_model("FILL", [np.array([2, 3], I32), ("in", (), "float32")], (2, 3)),
    "gather": lambda: op_model(
        "GATHER", [fx(5, 3), np.array([4, 0, 2], I32)], (3, 3), options=dict(axis=0)
    ),
    "gather_nd": lambda: op_model("GATHER_ND", [fx(4, 3), np.array([[1], [3]], I32)], (2, 3)),
    "l2_norm": lambda: op_model("L2_NORMALIZATION", [fx(2, 4)], (2, 4)),
    "mirror_pad": lambda: op_model(
        "MIRROR_PAD",
        [fx(3, 4), np.array([[1, 1], [2, 2]], I32)],
        (5, 8),
        options=dict(mode="REFLECT"),
    ),
    "padv2": lambda: op_model(
        "PADV2", [fx(2, 3), np.array([[1, 0], [0, 2]], I32), np.array(7, np.float32)], (3, 5)
    ),
    "pack": lambda: op_model(
        "PACK", [fx(2, 3), fx(2, 3)], (2, 2, 3), options=dict(values_count=2, axis=1)
    ),
    "unpack": lambda: op_model("UNPACK", [fx(3, 2)], (2,), n_out=3, options=dict(num=3, axis=0)),
    "range": lambda: op_model(
        "RANGE", [np.array(0, I32), ("in", (), "int32"), np.array(2, I32)], (5,), "int32"
    ),
    "reverse": lambda: op_model("REVERSE_V2", [fx(3, 4), np.array([1], I32)], (3, 4)),
    "resize_bilinear": lambda: op_model(
        "RESIZE_BILINEAR",
        [fx(1, 2, 3, 2), np.array([4, 6], I32)],
        (1, 4, 6, 2),
        options=dict(half_pixel_centers=True),
    ),
    "resize_nearest": lambda: op_model(
        "RESIZE_NEAREST_NEIGHBOR", [fx(1, 2, 3, 2), np.array([5, 5], I32)], (1, 5, 5, 2)
    ),
    "select_v2": lambda: op_model(
        "SELECT_V2", [("in", (2, 3), "bool"), f32(2, 3), f32(1, 3)], (2, 3)
    ),
    "conv_3d": lambda: op_model(
        "CONV_3D",
        [fx(1, 3, 4, 4, 2), f32(2, 2, 2, 2, 3), f32(3)],
        (1, 2, 2, 2, 3),
        options=dict(padding="SAME", stride_d=1, stride_h=2, stride_w=2),
    ),
    "conv_3d_transpose": lambda: op_model(
        "CONV_3D_TRANSPOSE",
        [np.array([1, 4, 4, 4, 2], I32), f32(2, 2, 2, 2, 3), fx(1, 2, 2, 2, 3)],
        (1, 4, 4, 4, 2),
        options=dict(padding="SAME", stride_d=2, stride_h=2, stride_w=2),
    ),
    "scatter_nd": lambda: op_model(
        "SCATTER_ND",
        [("in", (3, 1), "int32"), ("in", (3, 2), "float32"), np.array([4, 2], I32)],
        (4, 2),
    ),
    "topk_v2": lambda: op_model(
        "TOPK_V2", [("in", (3, 6), "int32"), np.array(2, I32)], (3, 2), "int32", n_out=2
    ),
    "select": lambda: op_model("SELECT", [("in", (4,), "bool"), fx(4), f32(4)], (4,)),
    "shape": lambda: op_model(
        "SHAPE", [fx(2, 3, 4)], (3,), "int32", options=dict(out_type="int32")
    ),
    "slice": lambda: op_model(
        "SLICE", [fx(4, 5), np.array([1, 2], I32), np.array([2, -1], I32)], (2, 3)
    ),
    "split": lambda: op_model(
        "SPLIT", [np.array(1, I32), fx(2, 6)], (2, 2), n_out=3, options=dict(num_splits=3)
    ),
    "split_v": lambda: op_model(
        "SPLIT_V",
        [fx(2, 6), np.array([1, 5], I32), np.array(1, I32)],
        (2, 3),
        n_out=2,
        options=dict(num_splits=2),
    ),
    "squeeze": lambda: op_model("SQUEEZE", [fx(1, 3, 1)], (3,), options=dict(squeeze_dims=[0, 2])),
    "strided_slice": lambda: op_model(
        "STRIDED_SLICE",
        [fx(5, 6), np.array([1, 0], I32), np.array([5, 6], I32), np.array([2, 3], I32)],
        (2, 2),
        options=dict(begin_mask=0, end_mask=2, shrink_axis_mask=0),
    ),
    "tile": lambda: op_model("TILE", [fx(2, 3), np.array([2, 2], I32)], (4, 6)),
    "transpose_conv": lambda: op_model(
        "TRANSPOSE_CONV",
        [np.array([1, 4, 4, 2], I32), f32(2, 3, 3, 3), fx(1, 2, 2, 3)],
        (1, 4, 4, 2),
        options=dict(padding="SAME", stride_w=2, stride_h=2),
    ),
    "quantize": lambda: quantize(),
    "int8_add": lambda: op_model(
        "ADD",
        [("in", (2, 4), "int8"), ("in", (2, 4), "int8")],
        (2, 4),
        "int8",
        quant=dict(scale=[0.05], zero_point=[3]),
    ),
    "int8_avg_pool": lambda: op_model(
        "AVERAGE_POOL_2D",
        [("in", (1, 4, 4, 2), "int8")],
        (1, 2, 2, 2),
        "int8",
        quant=dict(scale=[0.1], zero_point=[-2]),
        options=dict(padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2),
    ),
    "int8_softmax": lambda: int8_softmax(),
    "while": while_loop,
    "if": if_then_else,
    "variables": variables,
    "int8_conv": lambda: int8_layer(
        "CONV_2D",
        (1, 5, 5, 2),
        (3, 3, 3, 2),
        3,
        (1, 3, 3, 3),
        options=dict(padding="SAME", stride_w=2, stride_h=2),
    ),
    "int8_depthwise": lambda: int8_layer(
        "DEPTHWISE_CONV_2D",
        (1, 4, 4, 2),
        (1, 3, 3, 2),
        2,
        (1, 4, 4, 2),
        options=dict(padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1),
        axis=3,
    ),
    "int8_fully_connected": lambda: int8_layer("FULLY_CONNECTED", (2, 6), (4, 6), 4, (2, 4)),
    "int8_transpose_conv_const": lambda: int8_layer(
        "TRANSPOSE_CONV",
        (1, 3, 3, 2),
        (3, 4, 4, 2),
        3,
        (1, 6, 6, 3),
        options=dict(padding="SAME", stride_w=2, stride_h=2),
    ),
    "int8_transpose_conv": lambda: op_model(
        "TRANSPOSE_CONV",
        [np.array([1, 4, 4, 2], I32), ("in", (2, 3, 3, 3), "int8"), ("in", (1, 2, 2, 3), "int8")],
        (1, 4, 4, 2),
        "int8",
        quant=dict(scale=[0.05], zero_point=[0]),  # weights are activations here: symmetric
        options=dict(padding="SAME", stride_w=2, stride_h=2),
    ),
    "int8_batch_matmul": lambda: op_model(
        "BATCH_MATMUL",
        [("in", (2, 3, 4), "int8"), ("in", (2, 4, 5), "int8")],
        (2, 3, 5),
        "int8",
        quant=Q_ACT,
    ),
    "int8_resize_bilinear": lambda: op_model(
        "RESIZE_BILINEAR",
        [("in", (1, 2, 3, 2), "int8"), np.array([4, 6], I32)],
        (1, 4, 6, 2),
        "int8",
        quant=Q_ACT,
        options=dict(half_pixel_centers=True),
    ),
    "int8_resize_nearest": lambda: op_model(
        "RESIZE_NEAREST_NEIGHBOR",
        [("in", (1, 2, 3, 2), "int8"), np.array([3, 5], I32)],
        (1, 3, 5, 2),
        "int8",
        quant=Q_ACT,
    ),
    "int8_logistic": lambda: op_model(
        "LOGISTIC",
        [("in", (2, 4), "int8")],
        (2, 4),
        "int8",
        quant=dict(scale=[1.0 / 256], zero_point=[-128]),
    ),
    "int8_tanh": lambda: op_model(
        "TANH",
        [("in", (2, 4), "int8")],
        (2, 4),
        "int8",
        quant=dict(scale=[1.0 / 128], zero_point=[0]),
    ),
    # 16x8 mode: int16 activations (zero point 0, output scale 2^-15 here for both tensors)
    "int16_logistic": lambda: op_model(
        "LOGISTIC",
        [("in", (2, 4), "int16")],
        (2, 4),
        "int16",
        quant=dict(scale=[1.0 / 32768], zero_point=[0]),
    ),
    "int16_tanh": lambda: op_model(
        "TANH",
        [("in", (2, 4), "int16")],
        (2, 4),
        "int16",
        quant=dict(scale=[1.0 / 32768], zero_point=[0]),
    ),
    "int8_hard_swish": lambda: op_model(
        "HARD_SWISH", [("in", (2, 4), "int8")], (2, 4), "int8", quant=Q_ACT
    ),
    "int8_leaky_relu": lambda: op_model(
        "LEAKY_RELU", [("in", (2, 4), "int8")], (2, 4), "int8", quant=Q_ACT, options=dict(alpha=0.1)
    ),
    "int8_concat": lambda: op_model(
        "CONCATENATION",
        [("in", (2, 3), "int8"), ("in", (2, 2), "int8")],
        (2, 5),
        "int8",
        quant=Q_ACT,
        options=dict(axis=1),
    ),
    "int8_mean": lambda: op_model(
        "MEAN",
        [("in", (1, 3, 3, 4), "int8"), np.array([1, 2], I32)],
        (1, 4),
        "int8",
        quant=Q_ACT,
    ),
}


RECIPES = {
    "add_broadcast": lambda: binary("ADD", options=dict(fused_activation_function="RELU6")),
    "sub_int32": lambda: binary("SUB", dtype="int32"),
    "mul": lambda: binary("MUL", (2, 1, 3), (4, 1)),
    "div_int32": lambda: binary("DIV", dtype="int32"),
    "floor_mod_int64": lambda: binary("FLOOR_MOD", dtype="int64"),
    "less_bool": lambda: binary("LESS", out_dtype="bool"),
    "logical_and": lambda: binary("LOGICAL_AND", dtype="bool"),
    "bitwise_xor_int8": lambda: binary("BITWISE_XOR", (2, 1, 3), (4, 1), dtype="int8"),
    "atan2": lambda: binary("ATAN2", (2, 3), (2, 3)),
    "conv": conv,
    "depthwise": depthwise,
    "fully_connected": fully_connected,
    "max_pool": lambda: pool("MAX_POOL_2D"),
    "average_pool": lambda: pool("AVERAGE_POOL_2D"),
    "softmax": lambda: unary("SOFTMAX", (2, 5), options=dict(beta=1.0)),
    "reshape": lambda: with_const(
        "RESHAPE", (2, 6), np.array([3, -1], np.int32), (3, 4), options=dict(new_shape=[3, 4])
    ),
    "mean": lambda: with_const(
        "MEAN", (2, 3, 4), np.array([1, -1], np.int32), (2, 1, 1), options=dict(keep_dims=True)
    ),
    "sum": lambda: with_const("SUM", (2, 3, 4), np.array([0], np.int32), (3, 4)),
    "pad": lambda: with_const("PAD", (2, 3), np.array([[1, 0], [2, 1]], np.int32), (3, 6)),
    "concat": concat,
    "transpose": lambda: with_const(
        "TRANSPOSE", (2, 3, 4), np.array([2, 0, 1], np.int32), (4, 2, 3)
    ),
    "composite": composite,
    **{f"unary_{op.lower()}": (lambda op=op: op_model(op, [fx(2, 3)], (2, 3))) for op in UNARY},
    # each op of the runtime's src/kernels/reference/binary_ops.inc, float32 (bool for the
    # logical ops) against a broadcast constant
    **{
        f"binary_{op.symbol}": (
            lambda op=op: binary(op.name, dtype=binary_dtype(op), out_dtype=binary_out(op))
        )
        for op in binary_ops.records()
    },
    **EXTRA,
}


# ---------------------------------------------------------------- fuzz_input_values models
#
# Each entry: name -> (model bytes, valid input arrays in graph-input order). The values come
# from the fuzzer at run time, so they are graph inputs, never constants. APPEND ONLY: the
# first byte of a fuzz_input_values input selects a model by its position in this list, so
# reordering would change what old findings mean.


def ix(*shape, dtype="int32"):
    return ("in", shape, dtype)


def value_model(op, inputs, out_shape, out_dtype="float32", options=None, n_out=1, quant=None):
    """Like op_model, returning (bytes, valid values) where `inputs` entries are
    (shape, dtype, valid value) graph inputs or numpy constants."""
    specs, valid = [], []
    for spec in inputs:
        if isinstance(spec, tuple):
            shape, dtype, value = spec
            specs.append(("in", shape, dtype))
            valid.append(np.asarray(value, dtype=np.dtype(dtype)).reshape(shape))
        else:
            specs.append(spec)
    return op_model(op, specs, out_shape, out_dtype, options, n_out, quant), valid


def vin(shape, dtype="int32", value=None, seed=0):
    """A graph input with a valid value (random floats when value is None)."""
    if value is None:
        value = f32(*shape, seed=seed) if dtype == "float32" else np.zeros(shape)
    return (tuple(shape), dtype, value)


VALUE_MODELS = {
    "gather": lambda: value_model(
        "GATHER", [vin((5, 3), "float32"), vin((3,), value=[4, 0, 2])], (3, 3), options=dict(axis=0)
    ),
    "gather_axis1_i64": lambda: value_model(
        "GATHER",
        [vin((2, 4, 3), "float32"), vin((2, 2), "int64", [[3, 0], [1, 2]])],
        (2, 2, 2, 3),
        options=dict(axis=1),
    ),
    "gather_batch_dims": lambda: value_model(
        "GATHER",
        [vin((2, 5), "float32"), vin((2, 3), value=[[0, 4, 1], [2, 2, 3]])],
        (2, 3),
        options=dict(axis=1, batch_dims=1),
    ),
    "gather_nd": lambda: value_model(
        "GATHER_ND", [vin((4, 3), "float32"), vin((2, 1), value=[[1], [3]])], (2, 3)
    ),
    "gather_nd_full": lambda: value_model(
        "GATHER_ND", [vin((3, 4, 2), "float32"), vin((2, 3), value=[[0, 1, 1], [2, 3, 0]])], (2,)
    ),
    "embedding_lookup": lambda: value_model(
        "EMBEDDING_LOOKUP", [vin((3,), value=[4, 0, 1]), f32(5, 2)], (3, 2)
    ),
    "reshape": lambda: value_model(
        "RESHAPE", [vin((2, 6), "float32"), vin((3,), value=[3, -1, 2])], (3, 2, 2)
    ),
    "broadcast_to": lambda: value_model(
        "BROADCAST_TO", [vin((1, 3), "float32"), vin((3,), value=[2, 4, 3])], (2, 4, 3)
    ),
    "resize_bilinear": lambda: value_model(
        "RESIZE_BILINEAR",
        [vin((1, 2, 3, 2), "float32"), vin((2,), value=[4, 6])],
        (1, 4, 6, 2),
        options=dict(half_pixel_centers=True),
    ),
    "resize_nearest": lambda: value_model(
        "RESIZE_NEAREST_NEIGHBOR",
        [vin((1, 3, 2, 1), "float32"), vin((2,), value=[5, 5])],
        (1, 5, 5, 1),
        options=dict(align_corners=True),
    ),
    "transpose": lambda: value_model(
        "TRANSPOSE", [vin((2, 3, 4), "float32"), vin((3,), value=[2, 0, 1])], (4, 2, 3)
    ),
    "slice": lambda: value_model(
        "SLICE",
        [vin((4, 5), "float32"), vin((2,), value=[1, 2]), vin((2,), value=[2, -1])],
        (2, 3),
    ),
    "strided_slice": lambda: value_model(
        "STRIDED_SLICE",
        [
            vin((5, 6), "float32"),
            vin((2,), value=[4, 0]),
            vin((2,), value=[0, 6]),
            vin((2,), value=[-2, 3]),
        ],
        (2, 2),
        options=dict(begin_mask=0, end_mask=0, shrink_axis_mask=0),
    ),
    "strided_slice_masks": lambda: value_model(
        "STRIDED_SLICE",
        [
            vin((3, 4, 5), "float32"),
            vin((3,), value=[1, 0, 1]),
            vin((3,), value=[2, 3, 5]),
            vin((3,), value=[1, 1, 2]),
        ],
        (4, 2),
        options=dict(begin_mask=2, end_mask=4, shrink_axis_mask=1, ellipsis_mask=0),
    ),
    "pad": lambda: value_model(
        "PAD", [vin((2, 3), "float32"), vin((2, 2), value=[[1, 0], [2, 1]])], (3, 6)
    ),
    "padv2": lambda: value_model(
        "PADV2",
        [vin((2, 3), "float32"), vin((2, 2), value=[[0, 1], [1, 1]]), vin((), "float32", 7.0)],
        (3, 5),
    ),
    "mirror_pad": lambda: value_model(
        "MIRROR_PAD",
        [vin((3, 4), "float32"), vin((2, 2), value=[[1, 1], [2, 2]])],
        (5, 8),
        options=dict(mode="REFLECT"),
    ),
    "tile": lambda: value_model("TILE", [vin((2, 3), "float32"), vin((2,), value=[2, 2])], (4, 6)),
    "fill": lambda: value_model("FILL", [vin((2,), value=[2, 3]), vin((), "float32", 1.5)], (2, 3)),
    "range": lambda: value_model(
        "RANGE", [vin((), value=0), vin((), value=10), vin((), value=3)], (4,), "int32"
    ),
    "range_float": lambda: value_model(
        "RANGE",
        [vin((), "float32", 0.5), vin((), "float32", 2.0), vin((), "float32", 0.25)],
        (6,),
    ),
    "expand_dims": lambda: value_model(
        "EXPAND_DIMS", [vin((2, 3), "float32"), vin((1,), value=[1])], (2, 1, 3)
    ),
    "split": lambda: value_model(
        "SPLIT",
        [vin((), value=1), vin((2, 6), "float32")],
        (2, 2),
        n_out=3,
        options=dict(num_splits=3),
    ),
    "split_v": lambda: value_model(
        "SPLIT_V",
        [vin((2, 6), "float32"), vin((2,), value=[1, 5]), vin((), value=1)],
        (2, 3),
        n_out=2,
        options=dict(num_splits=2),
    ),
    "reverse": lambda: value_model(
        "REVERSE_V2", [vin((3, 4), "float32"), vin((1,), value=[1])], (3, 4)
    ),
    "arg_max": lambda: value_model(
        "ARG_MAX",
        [vin((2, 5), "float32"), vin((1,), value=[1])],
        (2,),
        "int32",
        options=dict(output_type="int32"),
    ),
    "mean": lambda: value_model(
        "MEAN",
        [vin((2, 3, 4), "float32"), vin((2,), value=[1, -1])],
        (2, 1, 1),
        options=dict(keep_dims=True),
    ),
    "reduce_prod": lambda: value_model(
        "REDUCE_PROD", [vin((2, 3), "float32"), vin((1,), value=[0])], (3,)
    ),
    "cumsum": lambda: value_model(
        "CUMSUM", [vin((2, 4), "float32"), vin((), value=1)], (2, 4), options=dict(reverse=True)
    ),
    "rfft2d": lambda: value_model(
        "RFFT2D", [vin((2, 3, 6), "float32"), vin((2,), value=[4, 8])], (2, 4, 5), "complex64"
    ),
    "dynamic_update_slice": lambda: value_model(
        "DYNAMIC_UPDATE_SLICE",
        [vin((4, 4), "float32"), vin((2, 2), "float32", seed=1), vin((2,), value=[1, 3])],
        (4, 4),
    ),
    "div_int32": lambda: value_model(
        "DIV", [vin((4,), value=[7, -7, 9, 1]), vin((4,), value=[2, 3, -4, 1])], (4,), "int32"
    ),
    "floor_div_int32": lambda: value_model(
        "FLOOR_DIV", [vin((4,), value=[7, -7, 9, 1]), vin((4,), value=[2, 3, -4, 1])], (4,), "int32"
    ),
    "floor_mod_int64": lambda: value_model(
        "FLOOR_MOD",
        [vin((3,), "int64", [7, -7, 9]), vin((3,), "int64", [2, 3, -4])],
        (3,),
        "int64",
    ),
    "transpose_conv": lambda: value_model(
        "TRANSPOSE_CONV",
        [vin((4,), value=[1, 4, 4, 2]), f32(2, 3, 3, 3), vin((1, 2, 2, 3), "float32")],
        (1, 4, 4, 2),
        options=dict(padding="SAME", stride_w=2, stride_h=2),
    ),
    "cast_float_to_int": lambda: value_model(
        "CAST", [vin((6,), "float32", [1.5, -2.5, 1e10, -1e10, 0.0, 3.0])], (6,), "int32"
    ),
    "cast_float_to_uint8": lambda: value_model(
        "CAST", [vin((4,), "float32", [1.5, 300.0, -4.0, 0.0])], (4,), "uint8"
    ),
    "select_v2": lambda: value_model(
        "SELECT_V2",
        [vin((2, 3), "bool", [[1, 0, 1], [0, 0, 1]]), vin((2, 3), "float32"), f32(1, 3)],
        (2, 3),
    ),
    "pow_int32": lambda: value_model(
        "POW", [vin((3,), value=[2, -3, 5]), vin((3,), value=[3, 2, 0])], (3,), "int32"
    ),
    "squared_difference_int32": lambda: value_model(
        "SQUARED_DIFFERENCE", [vin((2,), value=[5, -3]), vin((2,), value=[1, 4])], (2,), "int32"
    ),
    "int8_softmax_values": lambda: (
        int8_softmax(),
        [np.array([[1, 2, 3, 4, 5], [-128, 0, 127, 5, 5]], np.int8)],
    ),
    "scatter_nd": lambda: value_model(
        "SCATTER_ND",
        [
            vin((3, 2), value=[[0, 1], [2, 0], [0, 1]]),
            vin((3,), "float32"),
            vin((2,), value=[3, 2]),
        ],
        (3, 2),
    ),
    "topk_v2": lambda: value_model(
        "TOPK_V2",
        [vin((2, 5), "int32", np.arange(10) % 3), vin((), value=3)],
        (2, 3),
        "int32",
        n_out=2,
    ),
}


def write_model_header(header: Path, array: str, models: dict[str, bytes], source: str) -> None:
    """Models as a C header: `array` lists {name, data, size} for each, in order."""
    lines = [
        f"/* Generated by tests/fuzz/make_seeds.py ({source}); do not edit. */",
        "#include <stddef.h>",
    ]
    table = []
    for k, (name, data) in enumerate(models.items()):
        body = ",".join(str(b) for b in data)
        lines.append(f"static const unsigned char {array}_{k}[] = {{{body}}};")
        table.append(f'  {{"{name}", {array}_{k}, sizeof {array}_{k}}},')
    lines.append(
        f"static const struct {{ const char *name; const unsigned char *data; size_t size; }} {array}[] = {{"
    )
    lines += table
    lines.append("};")
    header.write_text("\n".join(lines) + "\n")


def write_value_models(header: Path, seeds: Path) -> None:
    """The fuzz_input_values models as a C header, and one seed per model: byte 0 selects
    the model, byte 1 holds the flags (0: no resize), then the valid input values."""
    seeds.mkdir(parents=True, exist_ok=True)
    models = {}
    for k, (name, recipe) in enumerate(VALUE_MODELS.items()):
        models[name], valid = recipe()
        seed = bytes([k, 0]) + b"".join(
            np.ascontiguousarray(v).astype(v.dtype.newbyteorder("<")).tobytes() for v in valid
        )
        (seeds / f"values_{name}").write_bytes(seed)
    write_model_header(header, "wick_value_models", models, "VALUE_MODELS")
    print(f"make_seeds: {len(models)} value models -> {header}, seeds -> {seeds}")


# The fuzz_weight_cache models: writer recipes whose ops pack constant weights at prepare
# (append only: a seed's byte 0 selects by position).
CACHE_MODELS = [
    "conv",
    "fully_connected",
    "int8_conv",
    "int8_fully_connected",
    "batch_matmul",
    "int8_batch_matmul",
    "depthwise",
    "transpose_conv",
]


def write_cache_models(header: Path, seeds: Path) -> None:
    """The fuzz_weight_cache models as a C header, and seeds: byte 0 selects the model,
    byte 1 the flags (fuzz_weight_cache.c). [k, 7] is model k's valid cache file with its
    identity and checksums kept right; [k, 6] an empty file."""
    seeds.mkdir(parents=True, exist_ok=True)
    models = {name: RECIPES[name]() for name in CACHE_MODELS}
    for k, name in enumerate(models):
        (seeds / f"cache_{name}_valid").write_bytes(bytes([k, 7]))
        (seeds / f"cache_{name}_empty").write_bytes(bytes([k, 6]))
    write_model_header(header, "wick_cache_models", models, "CACHE_MODELS")
    print(f"make_seeds: {len(models)} cache models -> {header}, seeds -> {seeds}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--max-bytes", type=int, default=1 << 20)
    ap.add_argument("--value-header", type=Path, help="write the fuzz_input_values models here")
    ap.add_argument("--value-seeds", type=Path, help="write the fuzz_input_values seeds here")
    ap.add_argument("--cache-header", type=Path, help="write the fuzz_weight_cache models here")
    ap.add_argument("--cache-seeds", type=Path, help="write the fuzz_weight_cache seeds here")
    args = ap.parse_args()
    if (args.value_header is None) != (args.value_seeds is None):
        ap.error("--value-header and --value-seeds go together")
    if (args.cache_header is None) != (args.cache_seeds is None):
        ap.error("--cache-header and --cache-seeds go together")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    shared = Path(os.environ.get("WICK_SHARED_MODELS", ROOT.parent / "shared" / "models"))
    copied = 0
    for f in sorted(shared.glob("*.tflite")):
        if f.stat().st_size <= args.max_bytes:
            shutil.copyfile(f, out / f"shared_{f.name}")
            copied += 1
    built, failed = 0, []
    for name, recipe in RECIPES.items():
        try:
            data = recipe()
        except Exception as e:  # a recipe the writer refuses costs that seed only
            failed.append(f"{name}: {e}")
            continue
        (out / f"writer_{name}.tflite").write_bytes(data)
        built += 1
    print(f"make_seeds: {copied} shared models, {built} writer models -> {out}")
    for f in failed:
        print(f"make_seeds: skipped {f}")
    if args.value_header is not None:
        write_value_models(args.value_header, args.value_seeds)  # a failure here is fatal
    if args.cache_header is not None:
        write_cache_models(args.cache_header, args.cache_seeds)  # a failure here is fatal
    return 0


if __name__ == "__main__":
    sys.exit(main())
