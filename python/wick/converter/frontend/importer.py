"""Turn a (decomposed) torch.export program into wick's IR.

Invariants of the result (see ir.py): parameters, buffers and lifted constants become constant
Values; user inputs become ``Graph.inputs`` in the flattened order torch.export uses; user outputs
become ``Graph.outputs``; ``getitem`` disappears (tuple outputs are split into Values); every
Node keeps the FX stack trace for error messages.  Non-tensor user inputs were specialized by
torch.export and arrive as constants.
"""

from __future__ import annotations

import operator

import torch
from torch.export.graph_signature import InputKind, OutputKind

from ..errors import ConversionError
from ..ir import Graph, Node, Sym, Value


def _dim(d) -> int | Sym:
    if isinstance(d, int):
        return d
    if isinstance(d, torch.SymInt):
        node = d.node
        if node.is_nested_int():
            raise ConversionError("nested (jagged) tensors are not supported")
        expr = node.expr
        if getattr(expr, "is_number", False):
            return int(expr)  # specialized
        hint = node.hint if node.has_hint() else None
        return Sym(str(expr), int(hint) if hint is not None else 1)
    return int(d)


def _value_from_meta(name: str, val) -> Value:
    if isinstance(val, torch.Tensor):
        v = Value(name, tuple(_dim(d) for d in val.shape), val.dtype)
        # memory layout at export time (for as_strided).  Never call int() on a symbolic
        # stride: that would specialize the symbol in torch's shape environment.
        stride = [_dim(s) for s in val.stride()]
        if all(isinstance(s, int) for s in stride):
            v.meta["stride"] = tuple(stride)
        return v
    raise TypeError(type(val))


def import_program(ep: torch.export.ExportedProgram) -> Graph:
    g = Graph()
    env: dict[torch.fx.Node, object] = {}
    sig = ep.graph_signature
    specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
    state = ep.state_dict
    constants = ep.constants

    for fx in ep.graph.nodes:
        if fx.op == "placeholder":
            spec = specs.get(fx.name)
            val = fx.meta.get("val")
            if spec is not None and spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                t = state[spec.target] if spec.target in state else constants[spec.target]
                env[fx] = Value(fx.name, tuple(t.shape), t.dtype, const=t.detach())
            elif spec is not None and spec.kind in (InputKind.CONSTANT_TENSOR,):
                t = constants[spec.target]
                if not isinstance(t, torch.Tensor):
                    raise ConversionError(f"unsupported lifted constant {spec.target}: {type(t)}")
                env[fx] = Value(fx.name, tuple(t.shape), t.dtype, const=t.detach())
            elif spec is not None and spec.kind == InputKind.TOKEN:
                env[fx] = None
            elif isinstance(val, torch.Tensor):
                v = _value_from_meta(fx.name, val)
                g.inputs.append(v)
                g.input_names.append(fx.name)
                env[fx] = v
            else:
                env[fx] = val  # specialized scalar
            continue
        if fx.op == "output":
            outs = fx.args[0]
            out_specs = sig.output_specs
            for spec, o in zip(out_specs, outs, strict=True):
                if spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION):
                    raise ConversionError(
                        f"the model updates {spec.target or spec.arg.name} in place during "
                        "forward; a .tflite file is stateless and would silently lose it",
                        hint="pass the state in as an input and return the new state as an output",
                    )
                if spec.kind != OutputKind.USER_OUTPUT:
                    continue
                v = env[o] if isinstance(o, torch.fx.Node) else o
                if v is None or type(v) in (bool, int, float, str):
                    # a constant leaf of the output structure (wav2vec2's (x, None)): the file
                    # has no tensor for it; wick.Model puts the value back in its place
                    g.output_leaves.append(("constant", v))
                    continue
                if not isinstance(v, Value):
                    raise ConversionError(
                        f"model output {spec.arg} is not a tensor ({type(v).__name__})",
                        hint="return tensors (or constants such as None) from forward",
                    )
                g.output_leaves.append(("tensor", len(g.outputs)))
                g.outputs.append(v)
                g.output_names.append(f"output_{len(g.output_names)}")
            g.output_spec = ep.call_spec.out_spec
            continue
        if fx.op == "get_attr":
            env[fx] = getattr(ep.graph_module, fx.target)
            continue
        if fx.op != "call_function":
            raise ConversionError(f"unsupported FX node kind {fx.op} ({fx.name})")
        _import_call(g, fx, env)
    return g


def _import_call(g: Graph, fx: torch.fx.Node, env: dict) -> None:
    """Import one call_function FX node into ``g`` (shared by the main graph and branches)."""
    if fx.target is operator.getitem:
        src, idx = fx.args
        env[fx] = env[src][idx]
        return

    def m(a):
        if isinstance(a, torch.fx.Node):
            return env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(m(x) for x in a)
        if isinstance(a, dict):
            return {k: m(x) for k, x in a.items()}
        return a

    if fx.target is torch.ops.higher_order.cond:
        _import_cond(g, fx, env, m)
        return
    if fx.target is torch.ops.higher_order.while_loop:
        _import_while(g, fx, env, m)
        return
    args = m(fx.args)
    kwargs = m(fx.kwargs)
    node = Node(fx.name, fx.target, args, kwargs, fx.meta.get("stack_trace"))
    _add_with_outputs(g, node, fx, env)


def _add_with_outputs(g: Graph, node: Node, fx: torch.fx.Node, env: dict) -> None:
    val = fx.meta.get("val")
    if isinstance(val, (tuple, list)):
        outs = []
        for i, x in enumerate(val):
            if isinstance(x, torch.Tensor):
                outs.append(_value_from_meta(f"{fx.name}_{i}", x))
            else:
                outs.append(Value(f"{fx.name}_{i}_none", (), torch.float32))
        g.add_node(node, outs)
        env[fx] = outs
    elif isinstance(val, torch.Tensor):
        v = _value_from_meta(fx.name, val)
        g.add_node(node, [v])
        env[fx] = v
    elif isinstance(val, (torch.SymInt, int, float, bool, torch.SymFloat, torch.SymBool)):
        # symbolic-size arithmetic (sym_size, operator.mul on SymInts …): a rank-0 value
        dt = torch.float32 if isinstance(val, (float, torch.SymFloat)) else torch.int64
        if isinstance(val, (bool, torch.SymBool)):
            dt = torch.bool
        v = Value(fx.name, (), dt)
        v.meta["scalar"] = True
        g.add_node(node, [v])
        env[fx] = v
    elif val is None:
        # side-effect-only nodes (asserts): keep for the DCE pass to drop
        g.add_node(node, [])
        env[fx] = None
    else:
        raise node.error(f"unsupported node result type {type(val).__name__}")


def import_branch(gm: torch.fx.GraphModule, operands: list) -> Graph:
    """A torch.cond branch as its own Graph.  Placeholders bind to the operands: constant
    operands (parameters) stay constants inside the branch, the others become branch inputs
    (in operand order)."""
    bg = Graph()
    env: dict = {}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(operands):
        raise ConversionError("torch.cond branch arity does not match its operands")
    for ph, opnd in zip(placeholders, operands, strict=True):
        if isinstance(opnd, Value) and opnd.is_const:
            env[ph] = Value(ph.name, opnd.shape, opnd.dtype, const=opnd.const)
        elif isinstance(opnd, Value):
            v = Value(ph.name, opnd.shape, opnd.dtype)
            v.meta.update({k: opnd.meta[k] for k in ("range",) if k in opnd.meta})
            bg.inputs.append(v)
            bg.input_names.append(ph.name)
            env[ph] = v
        else:
            env[ph] = opnd
    for fx in gm.graph.nodes:
        if fx.op == "placeholder":
            continue
        if fx.op == "output":
            outs = fx.args[0] if isinstance(fx.args[0], (list, tuple)) else [fx.args[0]]
            for o in outs:
                v = env[o] if isinstance(o, torch.fx.Node) else o
                if not isinstance(v, Value):
                    raise ConversionError("torch.cond branches must return tensors")
                bg.outputs.append(v)
                bg.output_names.append(f"output_{len(bg.output_names)}")
            continue
        if fx.op == "get_attr":
            env[fx] = getattr(gm, fx.target)
            continue
        _import_call(bg, fx, env)
    return bg


def _import_while(g: Graph, fx: torch.fx.Node, env: dict, m) -> None:
    cond_gm, body_gm, carried, additional = fx.args[:4]
    carried = list(m(tuple(carried)))
    additional = list(m(tuple(additional)))
    operands = carried + additional
    graphs = [
        import_branch(env[b] if isinstance(b, torch.fx.Node) else b, operands)
        for b in (cond_gm, body_gm)
    ]
    node = Node(fx.name, fx.target, (carried, additional), {}, fx.meta.get("stack_trace"))
    node.meta["branches"] = graphs  # [cond, body]: the passes treat them like cond branches
    node.meta["while"] = True
    _add_with_outputs(g, node, fx, env)


def _import_cond(g: Graph, fx: torch.fx.Node, env: dict, m) -> None:
    pred, true_gm, false_gm, operands = fx.args
    ops = list(m(tuple(operands)))
    branches = [
        import_branch(env[b] if isinstance(b, torch.fx.Node) else b, ops)
        for b in (true_gm, false_gm)
    ]
    node = Node(fx.name, fx.target, (m(pred), ops), {}, fx.meta.get("stack_trace"))
    node.meta["branches"] = branches
    _add_with_outputs(g, node, fx, env)
