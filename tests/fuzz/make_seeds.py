#!/usr/bin/env python3
"""Seed corpus for the wick fuzz targets.

Usage: make_seeds.py OUT_DIR [--max-bytes N]

Writes into OUT_DIR:
  * every /work/shared/models/*.tflite (or $WICK_SHARED_MODELS/*.tflite) no larger than
    --max-bytes (default 1 MiB: bigger files make every mutation slow), copied unchanged;
  * tiny single-op and few-op models built with ``wick.tflite.writer`` — one per op family
    wick runs, small enough (a few hundred bytes) that mutations reach every field often.

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
    sg.add_operator("CONV_2D", [x, k, b], [y],
                    options=dict(padding="SAME", stride_w=2, stride_h=2,
                                 fused_activation_function="RELU"))
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
    sg.add_operator("DEPTHWISE_CONV_2D", [x, k, b], [y],
                    options=dict(padding="VALID", stride_w=1, stride_h=1, depth_multiplier=2))
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
    return unary(op, (1, 4, 4, 2), out_shape=(1, 2, 2, 2),
                 options=dict(padding="VALID", stride_w=2, stride_h=2, filter_width=2,
                              filter_height=2))


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
    main.add_operator("STABLEHLO_COMPOSITE", [x], [y],
                      options=dict(name="seed.double", decomposition_subgraph_index=1))
    main.set_inputs([x])
    main.set_outputs([y])
    return w.finish()


RECIPES = {
    "add_broadcast": lambda: binary("ADD", options=dict(fused_activation_function="RELU6")),
    "sub_int32": lambda: binary("SUB", dtype="int32"),
    "mul": lambda: binary("MUL", (2, 1, 3), (4, 1)),
    "div_int32": lambda: binary("DIV", dtype="int32"),
    "floor_mod_int64": lambda: binary("FLOOR_MOD", dtype="int64"),
    "less_bool": lambda: binary("LESS", out_dtype="bool"),
    "logical_and": lambda: binary("LOGICAL_AND", dtype="bool"),
    "conv": conv,
    "depthwise": depthwise,
    "fully_connected": fully_connected,
    "max_pool": lambda: pool("MAX_POOL_2D"),
    "average_pool": lambda: pool("AVERAGE_POOL_2D"),
    "softmax": lambda: unary("SOFTMAX", (2, 5), options=dict(beta=1.0)),
    "reshape": lambda: with_const("RESHAPE", (2, 6), np.array([3, -1], np.int32), (3, 4),
                                  options=dict(new_shape=[3, 4])),
    "mean": lambda: with_const("MEAN", (2, 3, 4), np.array([1, -1], np.int32), (2, 1, 1),
                               options=dict(keep_dims=True)),
    "sum": lambda: with_const("SUM", (2, 3, 4), np.array([0], np.int32), (3, 4)),
    "pad": lambda: with_const("PAD", (2, 3), np.array([[1, 0], [2, 1]], np.int32), (3, 6)),
    "concat": concat,
    "transpose": lambda: with_const("TRANSPOSE", (2, 3, 4), np.array([2, 0, 1], np.int32),
                                    (4, 2, 3)),
    "composite": composite,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--max-bytes", type=int, default=1 << 20)
    args = ap.parse_args()
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
