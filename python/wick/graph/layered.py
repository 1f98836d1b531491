"""A plain layered layout, used when Graphviz's ``dot`` is not installed.

Same output as ``layout._layout_graph`` (see layout.py's docstring), computed in Python:

* ranks: the longest path from a source (edges that close a cycle are ignored for ranking);
* order within a rank: first appearance, then alternating downward / upward barycentre sweeps
  (each node moves toward the mean position of its neighbours in the ranks next to it);
* x: nodes packed left to right in that order, then pulled toward the mean x of their
  neighbours while keeping the order and a minimum gap; each rank is centred;
* edges: one cubic curve from the bottom of the source box to the top of the destination box
  (edges that skip ranks may cross boxes: dot routes around them, this layout does not);
  edge labels are left to the page (``labels`` False), which puts them mid-curve.

Quality is below dot's on large graphs, but every page works on a machine with no Graphviz.
"""

from __future__ import annotations

from collections import defaultdict

from .document import Graph

NODE_GAP, RANK_GAP, MARGIN, ARROW = 24.0, 40.0, 8.0, 6.0


def _ranks(n: int, edges: list[tuple[int, int]]) -> list[int]:
    succ = defaultdict(list)
    for s, d in edges:
        succ[s].append(d)
    order, state = [], [0] * n  # 0 new, 1 on the stack, 2 done
    back = set()
    for root in range(n):
        if state[root]:
            continue
        stack = [(root, iter(succ[root]))]
        state[root] = 1
        while stack:
            v, it = stack[-1]
            for w in it:
                if state[w] == 0:
                    state[w] = 1
                    stack.append((w, iter(succ[w])))
                    break
                if state[w] == 1:
                    back.add((v, w))
            else:
                state[v] = 2
                order.append(v)
                stack.pop()
    rank = [0] * n
    for v in reversed(order):  # topological order of the acyclic part
        for w in succ[v]:
            if (v, w) not in back and rank[w] < rank[v] + 1:
                rank[w] = rank[v] + 1
    return rank


def layout_graph(g: Graph, sizes: dict[str, tuple[float, float]]) -> dict:
    if not g.nodes:
        return {"w": 100.0, "h": 40.0, "nodes": {}, "edges": [], "labels": False}
    index = {n.id: k for k, n in enumerate(g.nodes)}
    n = len(g.nodes)
    edges = [(index[e.src], index[e.dst]) for e in g.edges]
    rank = _ranks(n, edges)
    layers: list[list[int]] = [[] for _ in range(max(rank) + 1)]
    for v in range(n):
        layers[rank[v]].append(v)
    preds, succs = defaultdict(list), defaultdict(list)
    for s, d in edges:
        if s != d:
            preds[d].append(s)
            succs[s].append(d)
    pos = [0.0] * n
    for layer in layers:
        for i, v in enumerate(layer):
            pos[v] = float(i)
    for sweep in range(8):
        down = sweep % 2 == 0
        for layer in layers if down else reversed(layers):
            near = preds if down else succs

            def key(v, near=near):
                ns = near[v]
                return sum(pos[u] for u in ns) / len(ns) if ns else pos[v]

            layer.sort(key=key)
            for i, v in enumerate(layer):
                pos[v] = float(i)
    width = [sizes[g.nodes[v].id][0] for v in range(n)]
    x = [0.0] * n
    for layer in layers:
        cursor = 0.0
        for v in layer:
            x[v] = cursor + width[v] / 2
            cursor += width[v] + NODE_GAP
    for sweep in range(6):
        near = preds if sweep % 2 == 0 else succs
        for layer in layers:
            want = [sum(x[u] for u in near[v]) / len(near[v]) if near[v] else x[v] for v in layer]
            for i, v in enumerate(layer):  # left to right: the order and the gap hold
                lo = (
                    x[layer[i - 1]] + (width[layer[i - 1]] + width[v]) / 2 + NODE_GAP
                    if i
                    else -1e18
                )
                x[v] = max(want[i], lo)
            for i in range(len(layer) - 2, -1, -1):  # right to left: undo overshoot
                v, r = layer[i], layer[i + 1]
                x[v] = min(x[v], x[r] - (width[v] + width[r]) / 2 - NODE_GAP)
    left = min(x[v] - width[v] / 2 for v in range(n))
    x = [xv - left + MARGIN for xv in x]
    total_w = max(x[v] + width[v] / 2 for v in range(n)) + MARGIN
    y, top = [0.0] * n, MARGIN
    for layer in layers:
        h = max(sizes[g.nodes[v].id][1] for v in layer)
        for v in layer:
            y[v] = top + h / 2
        top += h + RANK_GAP
    total_h = top - RANK_GAP + MARGIN
    nodes = {
        g.nodes[v].id: [round(x[v], 1), round(y[v], 1), *sizes[g.nodes[v].id]] for v in range(n)
    }
    out_edges = []
    for s, d in edges:
        x0, y0 = x[s], y[s] + sizes[g.nodes[s].id][1] / 2
        x1, tip = x[d], y[d] - sizes[g.nodes[d].id][1] / 2
        y1 = tip - ARROW
        if y1 <= y0:  # a back edge or a self loop: around the right side
            x0 = x1 = max(x[s] + width[s] / 2, x[d] + width[d] / 2) + NODE_GAP / 2
            y0, y1, tip = y[s], y[d] - ARROW, y[d]
        mid = (y0 + y1) / 2
        pts = [x0, y0, x0, mid, x1, mid, x1, y1]
        out_edges.append(
            {"p": [round(p, 1) for p in pts], "a": [round(x1, 1), round(tip, 1)], "l": None}
        )
    return {
        "w": round(total_w, 1),
        "h": round(total_h, 1),
        "nodes": nodes,
        "edges": out_edges,
        "labels": False,
    }
