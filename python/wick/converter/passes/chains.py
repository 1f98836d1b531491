"""Merge chains of TRANSPOSE/RESHAPE ops into RESHAPE -> TRANSPOSE -> RESHAPE.

A chain of data-movement ops (each intermediate used only by the next) is a fixed permutation
of the input's elements.  Tracking the input as a sequence of "atoms" — factors of its dims,
refined whenever a reshape splits one — every reshape regroups atoms and every transpose
permutes groups, so the whole chain equals

    RESHAPE(x, atom sizes) -> TRANSPOSE(atom permutation) -> RESHAPE(output shape)

with at most one transpose (none when the permutation is the identity once size-1 atoms are
dropped and atoms that stay adjacent are coalesced).  Attention blocks exported from PyTorch
(view / transpose / reshape around the head split) shrink this way.

Invariant: after ``merge_chains(g)`` no TRANSPOSE or RESHAPE feeds another TRANSPOSE/RESHAPE
through a single-use tensor unless merging would not remove a transpose; values are unchanged.
Static shapes only.
"""

from __future__ import annotations

import numpy as np

from ..lower.tfl import TGraph, TOp
from .layout import perm_of

_MOVE = ("TRANSPOSE", "RESHAPE")
_MAX_RANK = 6


def _chain_from(g: TGraph, last: TOp) -> list[TOp]:
    chain = [last]
    while True:
        x = chain[0].inputs[0]
        p = x.producer
        if p is None or p.op not in _MOVE or len(g.users_of(x)) != 1 or g.is_output(x):
            break
        if p.op == "TRANSPOSE" and perm_of(p) is None:
            break
        if p.op == "RESHAPE" and (p.inputs[1] is None or not p.inputs[1].is_const):
            break
        chain.insert(0, p)
    return chain


def _simulate(chain: list[TOp]):
    """Returns (atom sizes in input order, atom order at the output, output shape) or None."""
    x = chain[0].inputs[0]
    if any(d < 0 for d in x.shape):
        return None
    sizes: dict[int, int] = {}
    nid = [0]

    def new(sz):
        sizes[nid[0]] = sz
        nid[0] += 1
        return nid[0] - 1

    start = [[new(d)] for d in x.shape]
    dims = [list(d) for d in start]
    refs = [start, dims]

    def split(atom: int, first: int):
        a, b = new(first), new(sizes[atom] // first)
        for lst in refs:
            for d in lst:
                if atom in d:
                    i = d.index(atom)
                    d[i : i + 1] = [a, b]
        return a, b

    for op in chain:
        out = op.outputs[0]
        if any(d < 0 for d in out.shape):
            return None
        if op.op == "TRANSPOSE":
            q = perm_of(op)
            dims[:] = [dims[i] for i in q]
            continue
        flat = [a for d in dims for a in d]
        new_dims = []
        k = 0
        for want in out.shape:
            cur, prod = [], 1
            while prod < want:
                if k >= len(flat):
                    return None
                a = flat[k]
                if prod * sizes[a] <= want:
                    cur.append(a)
                    prod *= sizes[a]
                    k += 1
                else:
                    need = want // prod
                    if want % prod or sizes[a] % need:
                        return None
                    first, second = split(a, need)
                    flat[k : k + 1] = [first, second]
                    cur.append(first)
                    prod *= need
                    k += 1
            if prod != want:
                return None
            new_dims.append(cur)
        # trailing size-1 atoms attach to the last dim
        while k < len(flat):
            if sizes[flat[k]] != 1 or not new_dims:
                return None
            new_dims[-1].append(flat[k])
            k += 1
        dims[:] = new_dims
    in_atoms = [a for d in start for a in d]
    out_atoms = [a for d in dims for a in d]
    return (
        [sizes[a] for a in in_atoms],
        [in_atoms.index(a) for a in out_atoms],
        list(chain[-1].outputs[0].shape),
    )


def _coalesce(sizes, order):
    """Drop size-1 atoms and merge atoms that stay adjacent (and in order) in the output.
    Returns (shape to reshape the input to, permutation)."""
    kept = [i for i in range(len(sizes)) if sizes[i] != 1]
    pos = {i: k for k, i in enumerate(kept)}
    seq = [pos[i] for i in order if sizes[i] != 1]
    runs: list[list[int]] = []
    for k in seq:
        if runs and runs[-1][-1] + 1 == k:
            runs[-1].append(k)
        else:
            runs.append([k])
    by_start = sorted(runs, key=lambda run: run[0])
    in_shape = [int(np.prod([sizes[kept[k]] for k in run])) for run in by_start]
    perm = [by_start.index(run) for run in runs]
    return in_shape, perm


def _lift_over_fc(g: TGraph) -> int:
    """TRANSPOSE(FC_keep(y)) with a transpose keeping the last dim, where y comes from a
    reshape/transpose chain: FC with keep_num_dims works row by row, so the transpose can go
    before it and join the chain (one transpose for attention's head merge)."""
    n = 0
    for t in list(g.ops):
        if t not in g.ops or t.op != "TRANSPOSE":
            continue
        q = perm_of(t)
        z = t.inputs[0]
        fc = z.producer
        if (
            q is None
            or fc is None
            or fc.op != "FULLY_CONNECTED"
            or not fc.options.get("keep_num_dims")
            or q[-1] != len(q) - 1
            or len(g.users_of(z)) != 1
            or g.is_output(z)
        ):
            continue
        y = fc.inputs[0]
        chain = (
            _chain_from(g, y.producer) if y.producer is not None and y.producer.op in _MOVE else []
        )
        if (
            not chain
            or not any(c.op == "TRANSPOSE" for c in chain)
            or len(g.users_of(y)) != 1
            or g.is_output(y)
        ):
            continue
        yt = g.tensor(y.name + "/lifted", [y.shape[d] for d in q], y.dtype, like=y)
        g.add(
            "TRANSPOSE",
            [y, g.const(yt.name + "/perm", np.asarray(q, np.int32))],
            [yt],
            origin=t.origin,
        )
        w = t.outputs[0]
        g.remove(t)
        g.set_input(fc, 0, yt)
        fc.outputs[0] = w
        w.producer = fc
        n += 1
    if n:
        g.toposort()
    return n


def merge_chains(g: TGraph) -> int:
    merged = _lift_over_fc(g)
    for op in list(g.ops):
        if op not in g.ops or op.op not in _MOVE:
            continue
        y = op.outputs[0]
        nxt = g.users_of(y)
        if len(nxt) == 1 and nxt[0].op in _MOVE and not g.is_output(y):
            continue  # not the end of a chain
        chain = _chain_from(g, op)
        n_t = sum(1 for c in chain if c.op == "TRANSPOSE")
        if len(chain) < 2 or n_t == 0:
            continue
        sim = _simulate(chain)
        if sim is None:
            continue
        sizes, order, out_shape = sim
        in_shape, perm = _coalesce(sizes, order)
        identity = perm == list(range(len(perm)))
        if not identity and (n_t < 2 or len(perm) > _MAX_RANK):
            continue  # would not remove a transpose
        x = chain[0].inputs[0]
        for c in reversed(chain):
            g.remove(c)
        cur = x
        if not identity:
            if list(cur.shape) != in_shape:
                r = g.tensor(y.name + "/atoms", in_shape, x.dtype, like=x)
                g.add(
                    "RESHAPE",
                    [cur, g.const(r.name + "/shape", np.asarray(in_shape, np.int32))],
                    [r],
                    origin=op.origin,
                )
                cur = r
            t = g.tensor(y.name + "/perm_atoms", [in_shape[p] for p in perm], x.dtype, like=x)
            g.add(
                "TRANSPOSE",
                [cur, g.const(t.name + "/perm", np.asarray(perm, np.int32))],
                [t],
                origin=op.origin,
            )
            cur = t
        g.add(
            "RESHAPE",
            [cur, g.const(y.name + "/shape", np.asarray(out_shape, np.int32))],
            [y],
            origin=op.origin,
        )
        merged += 1
    if merged:
        g.toposort()
    return merged
