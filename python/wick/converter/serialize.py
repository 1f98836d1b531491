"""Write a TFLite-level graph (lower/tfl.py) as a .tflite file with wick.tflite.writer.

Invariants of the file: subgraph 0 "main" (then one subgraph per torch.cond branch, referenced
by IF options) and one signature "serving_default" whose input and output names are the
graph's; every graph output is produced by an operator (an output
that is a constant, a graph input or a repeated tensor gets its own RESHAPE-to-same-shape
copy, since runtimes expect distinct, computed output tensors); tensor names are unique.
"""

from __future__ import annotations

import numpy as np

from ..tflite.writer import ModelWriter
from .lower.tfl import TGraph, TTensor


def _unique(name: str, used: set[str]) -> str:
    base = name or "t"
    n, i = base, 1
    while n in used:
        n = f"{base}_{i}"
        i += 1
    used.add(n)
    return n


def _fix_outputs(g: TGraph) -> None:
    seen: set[int] = set()
    for k, t in enumerate(list(g.outputs)):
        if t.producer is not None and id(t) not in seen and not g.is_input(t):
            seen.add(id(t))
            continue
        copy = g.tensor(g.output_names[k], t.shape, t.dtype, like=t)
        shape = g.const(g.output_names[k] + "/shape", np.asarray(t.shape, np.int32))
        g.add("RESHAPE", [t, shape], [copy])
        g.outputs[k] = copy
        seen.add(id(copy))


def serialize(g: TGraph, description: str = "wick") -> bytes:
    graphs = g.all_graphs()
    gindex = {id(x): i for i, x in enumerate(graphs)}
    w = ModelWriter(description=description)
    writers = [w.add_subgraph("main" if i == 0 else f"branch_{i}") for i in range(len(graphs))]
    for i, (tg, sg) in enumerate(zip(graphs, writers, strict=True)):
        _write_graph(tg, sg, gindex)
        if i == 0:
            w.add_signature(
                "serving_default",
                sg,
                inputs=dict(zip(tg.input_names, sg._inputs, strict=True)),
                outputs=dict(zip(tg.output_names, sg._outputs, strict=True)),
            )
    return w.finish()


def _write_graph(g: TGraph, sg, gindex: dict) -> None:
    _fix_outputs(g)
    g.toposort()
    index: dict[int, int] = {}
    used: set[str] = set()

    def idx(t: TTensor | None) -> int:
        if t is None:
            return -1
        i = index.get(id(t))
        if i is not None:
            return i
        name = _unique(t.name, used)
        if t.is_const:
            i = sg.add_constant(name, t.data, quant=t.quant)
        else:
            i = sg.add_tensor(name, [None if d < 0 else d for d in t.shape], t.dtype, quant=t.quant)
        index[id(t)] = i
        return i

    ins = [idx(t) for t in g.inputs]
    for op in g.ops:
        if op.op == "RESHAPE" and op.inputs[1] is not None and op.inputs[1].is_const:
            # mirror the shape into ReshapeOptions.new_shape: LiteRT reads an empty shape
            # tensor (reshape to a scalar) as "no shape tensor" and falls back to the option
            op.options["new_shape"] = [int(d) for d in op.inputs[1].data.reshape(-1)]
        opts = {k: (gindex[id(v)] if isinstance(v, TGraph) else v) for k, v in op.options.items()}
        sg.add_operator(
            op.op, [idx(t) for t in op.inputs], [idx(t) for t in op.outputs], options=opts
        )
    outs = [idx(t) for t in g.outputs]
    sg.set_inputs(ins)
    sg.set_outputs(outs)
