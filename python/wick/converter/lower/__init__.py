"""Lowering: wick IR (ATen ops) -> TFLite-level graph (lower/tfl.py), one rule per ATen op.

``lower_graph`` walks the IR in order and applies the rule from table.py to every node.  Graph
inputs keep their PyTorch dtype at the interface (int64 stays int64; index consumers cast to
int32 themselves); outputs are cast back to the PyTorch dtype where lowering chose a narrower
one (int64 values proven to fit int32).
"""

from __future__ import annotations

import operator

import torch

from ..errors import ConversionError
from ..ir import Graph, Value
from .context import Ctx, torch_to_tfl
from .table import LOWERINGS, lookup, supported_ops
from .tfl import TGraph, TTensor

_IGNORED = {
    "aten._assert_tensor_metadata.default",
    "aten._assert_scalar.default",
    "aten.sym_constrain_range_for_size.default",
    "aten.sym_constrain_range.default",
    "aten._assert_async.msg",
}


_SYM_OPS = {
    operator.mul: "MUL",
    operator.add: "ADD",
    operator.sub: "SUB",
    operator.floordiv: "FLOOR_DIV",
    operator.mod: "FLOOR_MOD",
}


def _lower_sym(ctx: Ctx, node) -> None:
    """Arithmetic on symbolic sizes (``s0 * 2`` …) as int32 scalar ops."""
    op = _SYM_OPS[node.target]

    def operand(x):
        if isinstance(x, Value):
            return ctx.cast(ctx.t(x), "int32")
        return ctx.scalar(int(x), "int32")

    a, b = operand(node.args[0]), operand(node.args[1])
    opts = dict(fused_activation_function="NONE") if op in ("MUL", "ADD", "SUB") else None
    ctx.bind(node.out, ctx.emit(op, [a, b], [], "int32", opts))


def _lower_sym_size(ctx: Ctx, node) -> None:
    x, dim = node.args[0], int(node.args[1])
    X = ctx.t(x)
    dim %= X.rank
    shape = ctx.emit("SHAPE", [X], [X.rank], "int32", dict(out_type="int32"))
    one = ctx.emit("SLICE", [shape, ctx.i32([dim], "begin"), ctx.i32([1], "size")], [1], "int32")
    ctx.bind(node.out, ctx.reshape(one, []))


def _lower_cond(ctx: Ctx, node) -> None:
    """torch.cond -> IF with the two branches as subgraphs (inputs: the non-constant operands,
    in order; constants stay inside each branch)."""
    pred, operands = node.args
    P = ctx.t(pred)
    if P.dtype != "bool":
        P = ctx.binary("NOT_EQUAL", P, ctx.scalar(0, P.dtype), "bool")
    if P.shape not in ([], [1]):
        P = ctx.reshape(P, [])
    subs = [lower_graph(b) for b in node.meta["branches"]]
    ins = [P]
    for v in operands:
        if isinstance(v, Value) and not v.is_const:
            ins.append(ctx.cast(ctx.t(v), torch_to_tfl(v.dtype)))
    outs = ctx.emit_multi(
        "IF",
        ins,
        [(ctx.shape(o), torch_to_tfl(o.dtype)) for o in node.outputs],
        dict(then_subgraph_index=subs[0], else_subgraph_index=subs[1]),
    )
    ctx.tg.subgraphs += subs
    for o, t in zip(node.outputs, outs, strict=True):
        ctx.bind(o, t)


def _lower_while(ctx: Ctx, node) -> None:
    """torch while_loop -> WHILE.  Loop variables: the carried values, then the non-constant
    additional inputs, which the body passes through unchanged (TFLite subgraphs only see their
    inputs); constant additional inputs stay inside both subgraphs."""
    carried, additional = node.args
    cond_g, body_g = node.meta["branches"]
    extra = [v for v in additional if isinstance(v, Value) and not v.is_const]
    cond_t, body_t = lower_graph(cond_g), lower_graph(body_g)
    n_carried = len(carried)
    # the body returns only the carried values: append the pass-through inputs
    for t, name in zip(body_t.inputs[n_carried:], body_t.input_names[n_carried:], strict=True):
        body_t.outputs.append(t)
        body_t.output_names.append(f"pass_{name}")
    if cond_t.outputs and cond_t.outputs[0].dtype != "bool":
        raise ctx.error("while_loop condition must be a boolean")
    ins, outs = [], []
    for v in list(carried) + extra:
        if not isinstance(v, Value):
            raise ctx.error("while_loop carries a non-tensor value")
        ins.append(ctx.cast(ctx.t(v), torch_to_tfl(v.dtype)))
        outs.append((ctx.shape(v), torch_to_tfl(v.dtype)))
    res = ctx.emit_multi(
        "WHILE", ins, outs, dict(cond_subgraph_index=cond_t, body_subgraph_index=body_t)
    )
    ctx.tg.subgraphs += [cond_t, body_t]
    for o, t in zip(node.outputs, res[:n_carried], strict=True):
        ctx.bind(o, t)


def lower_graph(g: Graph) -> TGraph:
    tg = TGraph()
    ctx = Ctx(g, tg)
    for v, name in zip(g.inputs, g.input_names, strict=True):
        dt = torch_to_tfl(v.dtype)
        shape = [d if isinstance(d, int) else -1 for d in v.shape]
        t = TTensor(name, shape, dt)
        tg.inputs.append(t)
        tg.input_names.append(name)
        ctx._map[id(v)] = t
    for node in g.nodes:
        name = node.op_name
        if name in _IGNORED:
            continue
        if node.target in _SYM_OPS:
            ctx.node = node
            _lower_sym(ctx, node)
            continue
        if name == "aten.sym_size.int":
            ctx.node = node
            _lower_sym_size(ctx, node)
            continue
        if node.target is torch.ops.higher_order.cond:
            ctx.node = node
            _lower_cond(ctx, node)
            continue
        if node.target is torch.ops.higher_order.while_loop:
            ctx.node = node
            _lower_while(ctx, node)
            continue
        rule = lookup(name)
        if rule is None:
            raise ConversionError(
                f"no TFLite lowering for {name}",
                op=name,
                source=node.source(),
                hint="see wick.converter.lower.supported_ops() for what converts; "
                "rewrite this part of the model with supported ops or open an issue",
            )
        ctx.node = node
        try:
            rule(ctx, node)
        except ConversionError as e:
            if e.source is None and node.source():
                raise ConversionError(
                    str(e).split("\n")[0], op=e.op or name, source=node.source(), hint=e.hint
                ) from e
            raise
        for o in node.outputs:
            if (o.users or g.is_output(o)) and not ctx.has(o):
                raise node.error(f"internal: rule for {name} did not produce {o.name}")
    ctx.node = None
    for v, name in zip(g.outputs, g.output_names, strict=True):
        t = ctx.t(v)
        want = torch_to_tfl(v.dtype)
        if t.dtype != want:
            t = ctx.cast(t, want)
        tg.outputs.append(t)
        tg.output_names.append(name)
    return tg


__all__ = ["lower_graph", "LOWERINGS", "supported_ops", "TGraph", "TTensor", "torch"]
