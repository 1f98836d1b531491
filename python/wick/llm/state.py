"""The KV cache moves from the signature's inputs/outputs into resource variables.

After lowering, a signature graph (step.py) reads every cache as an input and returns every
updated cache as an output. This rewrite, on the TFLite-level graph, makes the cache state of
the runtime instead, with the standard TFLite resource-variable operators that LiteRT and
wick run (the ones TensorFlow's converter writes for tf.Variable):

    CALL_ONCE(init)                       first op: on the first invoke of any signature of
                                          the interpreter, runs the init subgraph below
    h = VAR_HANDLE("k_cache_3")           one variable per cache, keyed by name: every
    k = READ_VARIABLE(h)                  signature naming it reaches the same variable
    ... k replaces the cache input ...
    ASSIGN_VARIABLE(h, k')                k' = the cache output (DYNAMIC_UPDATE_SLICE of k)

    init subgraph: per cache, ASSIGN_VARIABLE(VAR_HANDLE(name), FILL(shape, 0.0))
                   (one FILL per distinct shape)

The signature's inputs become (tokens, input_pos), its output the logits. Variables belong to
the interpreter: on LiteRT, the signature runners of one interpreter share them; on wick, the
interpreters of one model share them with ``wick_interpreter_options.share_variables_with``
(``wick.load(..., shared_variables=True)``). Resetting the variables re-arms CALL_ONCE, so the
next invoke starts from an empty (zero) cache.

Cost per invoke, per cache: as written, READ_VARIABLE copies the variable out and
ASSIGN_VARIABLE copies the updated cache back (LiteRT does: two copies of the whole cache per
step). wick's planner recognizes the pattern (src/core/plan.c, bindable_group) and keeps the
read value, its in-place update and the aliases of it in the variable's own storage: nothing is
copied, DYNAMIC_UPDATE_SLICE writes the new rows only.

Next: conversion.py (drives this), cache.py (the update op).
"""

from __future__ import annotations

import numpy as np

from ..converter.lower.tfl import TGraph


def cache_names(num_layers: int) -> list[str]:
    """Variable names in the order of step.py's cache arguments."""
    names = []
    for i in range(num_layers):
        names += [f"k_cache_{i}", f"v_cache_{i}"]
    return names


def init_graph(variables: list[tuple[str, list[int]]], dtype: str = "float32") -> TGraph:
    """The CALL_ONCE body: every (name, shape) variable assigned zeros (FILL, so the file holds
    no cache-sized constant)."""
    g = TGraph()
    zero = g.const("zero", np.asarray(0, dtype))
    zeros = {}
    for name, shape in variables:
        key = tuple(shape)
        if key not in zeros:
            dims = g.const(f"shape_{len(zeros)}", np.asarray(shape, np.int32))
            zeros[key] = g.tensor(f"zeros_{len(zeros)}", shape, dtype)
            g.add("FILL", [dims, zero], [zeros[key]])
        h = g.tensor(name + "/handle", [], "resource")
        g.add("VAR_HANDLE", [], [h], {"container": "", "shared_name": name})
        g.add("ASSIGN_VARIABLE", [h, zeros[key]], [])
    return g


def caches_to_variables(
    tg: TGraph, names: list[str], init: TGraph, *, num_plain_inputs: int = 2
) -> None:
    """Rewrites ``tg`` in place: inputs ``[plain..., caches...]`` and outputs
    ``[logits, caches...]`` (caches in ``names`` order) -> inputs ``[plain...]``, output
    ``[logits]``, caches in variables (see the module docstring). ``init`` is the shared
    init subgraph (owned by the first signature's graph, referenced by every CALL_ONCE)."""
    cache_in = tg.inputs[num_plain_inputs:]
    cache_out = tg.outputs[1:]
    if len(cache_in) != len(names) or len(cache_out) != len(names):
        raise AssertionError(
            f"expected {len(names)} cache inputs and outputs, got {len(cache_in)} and "
            f"{len(cache_out)}"
        )
    tg.add("CALL_ONCE", [], [], {"init_subgraph_index": init}, position=0)
    at = 1
    for name, t_in, t_out in zip(names, cache_in, cache_out, strict=True):
        if t_out is t_in:
            raise AssertionError(f"cache {name} is returned unchanged")
        h = tg.tensor(name + "/handle", [], "resource")
        tg.add("VAR_HANDLE", [], [h], {"container": "", "shared_name": name}, position=at)
        value = tg.tensor(name, list(t_in.shape), t_in.dtype)
        tg.add("READ_VARIABLE", [h], [value], position=at + 1)
        at += 2
        tg.replace_uses(t_in, value)
        # right after the update: the readers of the new cache come later, so the update's
        # output is not read after them and a runtime may alias it (a RESHAPE of it is free)
        producer = t_out.producer
        after = tg.ops.index(producer) + 1 if producer is not None else len(tg.ops)
        tg.add("ASSIGN_VARIABLE", [h, t_out], [], position=after)
    tg.inputs = tg.inputs[:num_plain_inputs]
    tg.input_names = tg.input_names[:num_plain_inputs]
    tg.outputs = tg.outputs[:1]
    tg.output_names = ["logits"]


def rename_inputs(tg: TGraph, names: list[str]) -> None:
    for t, name in zip(tg.inputs, names, strict=True):
        t.name = name
    tg.input_names = list(names)
