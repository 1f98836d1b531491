"""Write TFLite-level graphs (lower/tfl.py) as one .tflite file with wick.tflite.writer.

Invariants of the file: one subgraph per signature, in the order given (subgraph 0 is the
first signature; a single graph is "main" with signature "serving_default"), then one subgraph
per torch.cond / while_loop body (referenced by IF/WHILE options); a SignatureDef per
signature whose input and output names are its graph's; constants with identical bytes are
one buffer, shared by every subgraph that uses them (the writer deduplicates by content);
every graph output is produced by an operator (an output that is a constant, a graph input or
a repeated tensor gets its own RESHAPE-to-same-shape copy, since runtimes expect distinct,
computed output tensors); tensor names are unique within a subgraph.
"""

from __future__ import annotations

import numpy as np

from ..tflite.writer import ModelWriter
from .lower.tfl import TGraph, TTensor, all_tensors


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


def serialize(
    graphs: TGraph | list[tuple[str, TGraph]],
    description: str = "wick",
    *,
    consume: bool = False,
    metadata: dict[str, bytes] | None = None,
) -> bytes:
    """``graphs``: one graph (signature ``serving_default``) or ``[(signature key, graph)]``.

    ``consume``: the graphs are not used afterwards — their constants are handed to the writer,
    which frees each one once it is in the file (peak memory: the file plus what is left).
    ``metadata``: named byte strings for the file's Model.metadata (runtimes ignore them)."""
    if isinstance(graphs, TGraph):
        graphs = [("serving_default", graphs)]
    mains = [g for _, g in graphs]
    bodies = [b for g in mains for b in g.all_graphs()[1:]]
    ordered = mains + bodies
    gindex = {id(x): i for i, x in enumerate(ordered)}
    w = ModelWriter(description=description)
    names = ["main"] if len(mains) == 1 else [key for key, _ in graphs]
    names += [f"branch_{len(mains) + i}" for i in range(len(bodies))]
    writers = [w.add_subgraph(n) for n in names]
    for i, (tg, sg) in enumerate(zip(ordered, writers, strict=True)):
        _write_graph(tg, sg, gindex)
        if i < len(graphs):
            w.add_signature(
                graphs[i][0],
                sg,
                inputs=dict(zip(tg.input_names, sg._inputs, strict=True)),
                outputs=dict(zip(tg.output_names, sg._outputs, strict=True)),
            )
    for name, data in (metadata or {}).items():
        w.add_metadata(name, data)
    if consume:
        for tg in ordered:
            for t in all_tensors(tg):
                t.data = None  # the writer holds the only reference now
    return w.finish(release=consume)


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
        quant = t.quant
        if quant and "block_scales" in quant:  # blockwise: the scales tensor's index
            quant = dict(quant, block_scales=idx(quant["block_scales"]))
        name = _unique(t.name, used)
        if t.is_const and t.dtype == "int4":  # data: the packed bytes
            i = sg.add_packed_constant(name, t.shape, "int4", t.data, quant)
        elif t.is_const:
            i = sg.add_constant(name, t.data, quant=quant)
        else:
            i = sg.add_tensor(name, [None if d < 0 else d for d in t.shape], t.dtype, quant=quant)
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
