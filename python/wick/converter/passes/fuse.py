"""Activation fusion on the TFLite-level graph.

Invariant: no float RELU / RELU6 / RELU_N1_TO_1 op directly follows an op that has a
``fused_activation_function`` option set to NONE (conv, depthwise conv, fully connected,
add/sub/mul/div, pooling) when the producer's output has no other user and is not a graph
output; such pairs become the producer with the activation fused.
"""

from __future__ import annotations

from ..lower.tfl import TGraph

_ACT = {"RELU": "RELU", "RELU6": "RELU6", "RELU_N1_TO_1": "RELU_N1_TO_1"}
_FUSIBLE = {
    "CONV_2D",
    "DEPTHWISE_CONV_2D",
    "FULLY_CONNECTED",
    "ADD",
    "SUB",
    "MUL",
    "DIV",
    "AVERAGE_POOL_2D",
    "MAX_POOL_2D",
}


def fuse_activations(g: TGraph) -> int:
    n = 0
    for act in list(g.ops):
        if act.op not in _ACT or act not in g.ops:
            continue
        x = act.inputs[0]
        p = x.producer
        if p is None or p.op not in _FUSIBLE or x.dtype != "float32":
            continue
        if p.options.get("fused_activation_function", "NONE") not in ("NONE", 0):
            continue
        if len(g.users_of(x)) != 1 or g.is_output(x):
            continue
        p.options["fused_activation_function"] = _ACT[act.op]
        y = act.outputs[0]
        g.remove(act)
        p.outputs[0] = y
        y.producer = p
        x.producer = None
        n += 1
    return n
