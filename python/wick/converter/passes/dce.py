"""Dead code removal on the ATen-level graph.

Invariant: after ``dce(g)`` every node has at least one output that (transitively) reaches a
graph output.  Assertion-only nodes (``_assert_*``, ``sym_constrain_range*``) are dropped: they
only guard shapes that torch.export already specialized or bounded.
"""

from __future__ import annotations

from ..ir import Graph


def dce(g: Graph) -> None:
    live = {id(v) for v in g.outputs}
    keep = []
    for node in reversed(g.nodes):
        if any(id(v) in live for v in node.outputs):
            keep.append(node)
            for v in node.inputs:
                live.add(id(v))
        else:
            for v in node.inputs:
                while node in v.users:
                    v.users.remove(node)
    g.nodes = keep[::-1]
