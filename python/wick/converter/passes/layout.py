"""Layout pass: sink TRANSPOSE ops through layout-agnostic ops and cancel inverse pairs.

After lowering, every spatial op sits between TRANSPOSE(NCHW→NHWC) and TRANSPOSE(NHWC→NCHW)
(see lower/nn.py).  This pass establishes:

    No TRANSPOSE can be moved further down: each remaining one feeds a graph output or an op
    that cannot absorb it (matrix products, ops on other-ranked data, …).  Consequently a CNN
    whose body is conv/pool/elementwise/concat/pad/mean keeps TRANSPOSE only at its input
    (and its 4-d outputs), and none when the I/O is declared channels-last.

Moving ``T = TRANSPOSE(a, q)`` below a consumer ``C(T(a), …)`` rewrites it as ``T'(C'(a, …))``:

    elementwise (unary, binary, select)   C' = C; other operands are permuted (constants at
                                          conversion time, same-perm transposes by taking their
                                          input, rank-deficient operands by a RESHAPE when that
                                          is a pure reshape); T' = T
    reductions, arg-max, cumsum, reverse  axes remapped through q; without keep_dims T' drops
                                          the reduced dims (often becoming the identity)
    concat, pad, slice, tile, broadcast   axis / per-dim parameters permuted through q
    softmax, topk                         only when q keeps the last axis last
    reshape                               when every group of merged/split dims is contiguous
                                          and ordered in a's physical layout; T' is then the
                                          induced permutation of the reshaped dims
    transpose                             composed; the identity disappears

Every rewrite is an exact identity of the computed values, so the pass cannot change results.
Conventions: ``TRANSPOSE(x, q)`` has output dim i = input dim q[i].
"""

from __future__ import annotations

import numpy as np

from ...tflite import binary_ops
from ...tflite.unary_ops import unary_ops
from ..lower.tfl import TGraph, TOp, TTensor

# One input, one output, element i from element i: the unary math ops of the runtime's
# src/kernels/reference/unary_ops.inc (RELU ... SIGN) and these.
UNARY = {op.name for op in unary_ops()} | {
    "GELU",
    "LEAKY_RELU",
    "CAST",
    "LOGICAL_NOT",
    "DEQUANTIZE",
    "QUANTIZE",
    "ZEROS_LIKE",
}
# Elementwise over broadcast inputs: the arithmetic, comparison and logical ops of the runtime's
# src/kernels/reference/binary_ops.inc and these.
NARY = {op.name for op in binary_ops.records()} | {
    "SELECT_V2",
    "ATAN2",
    "PRELU",
    "BITWISE_XOR",
}
REDUCE = {"MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "REDUCE_ANY", "REDUCE_ALL"}
LAST_AXIS = {"SOFTMAX", "LOG_SOFTMAX", "L2_NORMALIZATION"}


def inverse(q):
    inv = [0] * len(q)
    for i, p in enumerate(q):
        inv[p] = i
    return inv


def is_identity(q) -> bool:
    return list(q) == list(range(len(q)))


def is_pure_reshape(shape, q) -> bool:
    """TRANSPOSE(x of `shape`, q) only moves size-1 dims: it is a RESHAPE."""
    kept = [p for p in q if shape[p] != 1]
    return kept == sorted(kept)


def perm_of(op: TOp):
    t = op.inputs[1]
    if t is None or not t.is_const:
        return None
    return [int(p) for p in t.data.reshape(-1)]


class _Sinker:
    def __init__(self, g: TGraph):
        self.g = g

    # ---- helpers -------------------------------------------------------------------------
    def new_transpose(self, src: TTensor, q, dst: TTensor, origin) -> TOp:
        pt = self.g.const(dst.name + "/perm", np.asarray(q, np.int32))
        return self.g.add("TRANSPOSE", [src, pt], [dst], origin=origin)

    def reroute(self, c: TOp, q_out) -> None:
        """Give C fresh outputs in physical layout and re-create its old outputs as
        TRANSPOSE(new, q_out) (nothing is inserted when q_out is the identity)."""
        if is_identity(q_out):
            return
        inv = inverse(q_out)
        for i, o in enumerate(c.outputs):
            phys = self.g.tensor(o.name + "/nhwc", [o.shape[j] for j in inv], o.dtype, like=o)
            phys.producer = c
            c.outputs[i] = phys
            o.producer = None
            self.new_transpose(phys, q_out, o, c.origin)

    def const_like(self, t: TTensor, data: np.ndarray) -> TTensor:
        c = self.g.const(t.name + "/p", np.asarray(data, order="C"))
        if t.quant is not None and len(t.quant.get("scale", [])) <= 1:
            c.quant = dict(t.quant)
        return c

    def permute_operand(
        self, x: TTensor, q, r: int, b: TTensor, a: TTensor, c: TOp, dry: bool = False
    ):
        """Return x expressed in a's physical layout (for an r-d elementwise op), or None.
        With ``dry`` only report whether that is possible (nothing is created)."""
        inv = inverse(q)
        if x is b:
            return a
        if x.is_const:
            if dry:
                return x
            data = x.data.reshape([1] * (r - x.rank) + list(x.shape))
            return self.const_like(x, np.transpose(data, inv))
        if x.numel == 1 and x.rank <= r and all(d == 1 for d in x.shape):
            return x
        p = x.producer
        if p is not None and p.op == "TRANSPOSE" and x.rank == r and perm_of(p) == list(q):
            return p.inputs[0]
        if x.rank <= r and all(d >= 0 for d in x.shape):
            aligned = [1] * (r - x.rank) + list(x.shape)
            if is_pure_reshape(aligned, inv):
                if dry:
                    return x
                shape = [aligned[j] for j in inv]
                rt = self.g.tensor(x.name + "/r", shape, x.dtype, like=x)
                st = self.g.const(x.name + "/rs", np.asarray(shape, np.int32))
                self.g.add("RESHAPE", [x, st], [rt], origin=c.origin)
                return rt
        return None

    # ---- the move ----------------------------------------------------------------------------
    def sink(self, t: TOp) -> bool:
        g = self.g
        q = perm_of(t)
        if q is None:
            return False
        a, b = t.inputs[0], t.outputs[0]
        changed = False
        for c in g.users_of(b):
            if c not in g.ops:
                continue
            if self.sink_into(c, t, q, a, b):
                changed = True
        if not b.users and not g.is_output(b) and t in g.ops:
            g.remove(t)
            changed = True
        return changed

    def sink_into(self, c: TOp, t: TOp, q, a: TTensor, b: TTensor) -> bool:
        g = self.g
        r = len(q)
        op = c.op
        if op == "TRANSPOSE":
            if c.inputs[0] is not b:
                return False
            q2 = perm_of(c)
            if q2 is None:
                return False
            comp = [q[i] for i in q2]
            if is_identity(comp):
                out = c.outputs[0]
                g.replace_uses(out, a)
                g.remove(c)
                return True
            g.set_input(c, 0, a)
            g.set_input(c, 1, g.const(c.outputs[0].name + "/perm", np.asarray(comp, np.int32)))
            return True
        if op in UNARY:
            if c.inputs[0] is not b:
                return False
            g.set_input(c, 0, a)
            self.reroute(c, q)
            return True
        if op in NARY:
            if c.outputs[0].rank != r or b.rank != r:
                return False
            if any(self.permute_operand(x, q, r, b, a, c, dry=True) is None for x in c.inputs):
                return False
            new = [self.permute_operand(x, q, r, b, a, c) for x in c.inputs]
            for i, y in enumerate(new):
                g.set_input(c, i, y)
            self.reroute(c, q)
            return True
        if op in REDUCE or op in ("ARG_MAX", "ARG_MIN"):
            if c.inputs[0] is not b or not c.inputs[1].is_const:
                return False
            axes = sorted({int(x) % r for x in c.inputs[1].data.reshape(-1)})
            axes_a = sorted(q[i] for i in axes)
            keep = bool(c.options.get("keep_dims", False)) if op in REDUCE else False
            g.set_input(c, 0, a)
            g.set_input(c, 1, g.const(c.inputs[1].name + "/p", np.asarray(axes_a, np.int32)))
            if keep:
                self.reroute(c, q)
            else:
                rest_logical = [i for i in range(r) if i not in axes]
                rest_phys = [j for j in range(r) if j not in axes_a]
                pos = {j: k for k, j in enumerate(rest_phys)}
                self.reroute(c, [pos[q[i]] for i in rest_logical])
            return True
        if op in LAST_AXIS or op == "TOPK_V2":
            if c.inputs[0] is not b or q[-1] != r - 1:
                return False
            g.set_input(c, 0, a)
            self.reroute(c, q)
            return True
        if op == "FULLY_CONNECTED":
            # FC with keep_num_dims maps the last dim only: transposes of the others commute
            if (
                c.inputs[0] is not b
                or not c.options.get("keep_num_dims")
                or q[-1] != r - 1
                or any(x is b for x in c.inputs[1:])
            ):
                return False
            g.set_input(c, 0, a)
            self.reroute(c, q)
            return True
        if op == "BATCH_MATMUL":
            # matmul over the last two dims: transposes of the batch dims commute when the other
            # operand is transposed the same way or is a 2-d (broadcast) matrix
            if (
                r < 3
                or q[-2:] != [r - 2, r - 1]
                or c.options.get("adj_x")
                or c.options.get("adj_y")
            ):
                return False
            other = 1 if c.inputs[0] is b else 0
            if c.inputs[1 - other] is not b:
                return False
            x = c.inputs[other]
            if x is b:
                y = a
            elif x.rank == 2:
                y = x
            elif (
                x.producer is not None
                and x.producer.op == "TRANSPOSE"
                and x.rank == r
                and perm_of(x.producer) == list(q)
            ):
                y = x.producer.inputs[0]
            else:
                return False
            g.set_input(c, 1 - other, a)
            g.set_input(c, other, y)
            self.reroute(c, q)
            return True
        if op in ("CUMSUM", "REVERSE_V2"):
            if c.inputs[0] is not b or not c.inputs[1].is_const:
                return False
            axes = [q[int(x) % r] for x in c.inputs[1].data.reshape(-1)]
            g.set_input(c, 0, a)
            g.set_input(
                c,
                1,
                g.const(
                    c.inputs[1].name + "/p", np.asarray(axes, np.int32).reshape(c.inputs[1].shape)
                ),
            )
            self.reroute(c, q)
            return True
        if op == "CONCATENATION":
            if c.outputs[0].rank != r:
                return False
            if any(x.rank != r for x in c.inputs):
                return False
            if any(self.permute_operand(x, q, r, b, a, c, dry=True) is None for x in c.inputs):
                return False
            new = [self.permute_operand(x, q, r, b, a, c) for x in c.inputs]
            for i, y in enumerate(new):
                g.set_input(c, i, y)
            c.options["axis"] = q[c.options["axis"] % r]
            self.reroute(c, q)
            return True
        if op in ("PAD", "PADV2", "MIRROR_PAD"):
            if c.inputs[0] is not b or not c.inputs[1].is_const:
                return False
            pads = c.inputs[1].data.reshape(r, 2)
            new = np.zeros_like(pads)
            for i in range(r):
                new[q[i]] = pads[i]
            g.set_input(c, 0, a)
            g.set_input(c, 1, g.const(c.inputs[1].name + "/p", new))
            self.reroute(c, q)
            return True
        if op in ("SLICE", "STRIDED_SLICE", "TILE", "BROADCAST_TO"):
            if c.inputs[0] is not b or not all(x.is_const for x in c.inputs[1:]):
                return False
            if op == "STRIDED_SLICE" and any(
                c.options.get(m, 0)
                for m in (
                    "ellipsis_mask",
                    "new_axis_mask",
                    "shrink_axis_mask",
                    "begin_mask",
                    "end_mask",
                )
            ):
                return False
            if op == "BROADCAST_TO" and c.inputs[1].numel != r:
                return False
            g.set_input(c, 0, a)
            for k in range(1, len(c.inputs)):
                v = c.inputs[k].data.reshape(-1)
                new = np.zeros_like(v)
                for i in range(r):
                    new[q[i]] = v[i]
                g.set_input(c, k, g.const(c.inputs[k].name + "/p", new))
            self.reroute(c, q)
            return True
        if op == "GATHER":
            if c.inputs[0] is not b or c.inputs[1].rank != 1 or c.options.get("batch_dims", 0):
                return False
            axis = c.options.get("axis", 0) % r
            g.set_input(c, 0, a)
            c.options["axis"] = q[axis]
            self.reroute(c, q)
            return True
        if op in ("SPLIT", "SPLIT_V"):
            data_i = 1 if op == "SPLIT" else 0
            axis_i = 0 if op == "SPLIT" else 2
            if c.inputs[data_i] is not b or not c.inputs[axis_i].is_const:
                return False
            axis = int(c.inputs[axis_i].data.reshape(-1)[0]) % r
            g.set_input(c, data_i, a)
            g.set_input(
                c,
                axis_i,
                g.const(
                    c.inputs[axis_i].name + "/p",
                    np.asarray(q[axis], np.int32).reshape(c.inputs[axis_i].shape),
                ),
            )
            self.reroute(c, q)
            return True
        if op == "RESHAPE":
            if c.inputs[0] is not b:
                return False
            out = c.outputs[0]
            if sum(1 for d in out.shape if d < 0) > 1:
                return False
            res = reshape_through(a.shape, q, out.shape)
            if res is None:
                return self.flatten_into_fc(c, q, a, b)
            phys_shape, q_out = res
            g.set_input(c, 0, a)
            g.set_input(c, 1, g.const(out.name + "/shape", np.asarray(phys_shape, np.int32)))
            c.options.pop("new_shape", None)
            self.reroute(c, q_out)
            return True
        return False

    def flatten_into_fc(self, c: TOp, q, a: TTensor, b: TTensor) -> bool:
        """RESHAPE(TRANSPOSE(a), [N, K]) whose result reaches only FULLY_CONNECTED layers with
        constant weights, directly or through elementwise ops with scalar operands (the NCHW
        flatten before a classifier, ``x.view(N, -1) @ W``, ``flatten → ReLU → Linear``):
        flatten ``a`` as it is and permute the weight columns instead, so no transpose runs.
        Such elementwise ops commute with a column permutation: they see permuted columns."""
        g = self.g
        out = c.outputs[0]
        if out.rank != 2 or q[0] != 0 or any(d < 0 for d in a.shape[1:]):
            return False
        if out.shape[1] != int(np.prod(a.shape[1:])):
            return False
        users = _flatten_fc_users(g, out)
        if users is None:
            return False
        g.set_input(c, 0, a)
        done: dict[int, TTensor] = {}
        for u in users:
            w = u.inputs[1]
            if id(w) not in done:  # one permuted copy per weight, however many FCs share it
                done[id(w)] = self.const_like(w, _permute_fc_columns(w.data, a.shape, q))
            g.set_input(u, 1, done[id(w)])
        return True


def _flatten_fc_users(g: TGraph, out: TTensor):
    """The FULLY_CONNECTED ops that consume ``out`` (rank 2) directly or through elementwise
    ops (unary, or with scalar constants), all with constant 2-d weights; None if anything
    else sees ``out``'s columns."""
    fcs: list[TOp] = []
    todo = [out]
    while todo:
        t = todo.pop()
        users = g.users_of(t)
        if not users or g.is_output(t):
            return None
        for u in users:
            elementwise = (u.op in UNARY and u.inputs[0] is t) or (
                u.op in NARY
                and all(x is t or (x is not None and x.is_const and x.numel == 1) for x in u.inputs)
            )
            if elementwise and len(u.outputs) == 1:
                if u.outputs[0].shape != t.shape:
                    return None
                todo.append(u.outputs[0])
                continue
            if u.op != "FULLY_CONNECTED" or u.inputs[0] is not t or len(u.inputs) < 2:
                return None
            w = u.inputs[1]
            if w is None or not w.is_const or w.rank != 2 or w.shape[1] != t.shape[1]:
                return None
            if u.options.get("keep_num_dims") and u.outputs[0].rank != 2:
                return None
            fcs.append(u)
    return fcs


def factor_groups(a, b):
    """Split RESHAPE a -> b (non-singleton dims only) into groups (a_dims, b_dims) whose sizes
    multiply to the same number; None when the shapes do not factor."""
    a_nz = [i for i in range(len(a)) if a[i] != 1]
    b_nz = [k for k in range(len(b)) if b[k] != 1]
    groups = []
    i = k = 0
    while i < len(a_nz) or k < len(b_nz):
        gi, gk = [], []
        pi = po = 1
        # a dynamic dim (-1) can only map to a dynamic dim, on its own
        da = i < len(a_nz) and a[a_nz[i]] < 0
        db = k < len(b_nz) and b[b_nz[k]] < 0
        if da or db:
            if not (da and db):
                return None
            groups.append(([a_nz[i]], [b_nz[k]]))
            i += 1
            k += 1
            continue
        while True:
            take_a = pi <= po and i < len(a_nz)
            if take_a and a[a_nz[i]] < 0:
                return None  # a dynamic dim inside a merged group
            if not take_a and k < len(b_nz) and b[b_nz[k]] < 0:
                return None
            if take_a:
                pi *= a[a_nz[i]]
                gi.append(a_nz[i])
                i += 1
            elif k < len(b_nz):
                po *= b[b_nz[k]]
                gk.append(b_nz[k])
                k += 1
            else:
                return None
            if pi == po and gi and gk:
                break
        groups.append((gi, gk))
    return groups


def _permute_fc_columns(w: np.ndarray, phys, q) -> np.ndarray:
    """FC weight ``w`` [O, K] whose columns follow the flatten of TRANSPOSE(a, q) (logical
    order), re-ordered to follow the flatten of ``a`` itself (physical order, shape
    ``phys``): one strided copy, no index arrays."""
    logical = [int(phys[q[i]]) for i in range(len(q))]
    inv = inverse(q)
    wl = w.reshape([w.shape[0]] + logical[1:])
    # physical dim k (>= 1) is logical dim inv[k]: axis inv[k] of wl (axis 0 is the rows)
    return np.ascontiguousarray(
        np.transpose(wl, [0] + [inv[k] for k in range(1, len(q))]).reshape(w.shape)
    )


def reshape_through(phys, q, out):
    """Express RESHAPE(TRANSPOSE(a, q), out) as TRANSPOSE(RESHAPE(a, phys_out), q_out).

    Returns (phys_out, q_out) or None when some merged/split group of dims is not contiguous
    and ordered in a's physical layout."""
    r = len(q)
    logical = [phys[q[i]] for i in range(r)]
    groups = factor_groups(logical, out)
    if groups is None:
        return None
    in_nz = [i for i in range(r) if logical[i] != 1]
    nz_phys = sorted(q[i] for i in in_nz)
    rank_in_nz = {p: n for n, p in enumerate(nz_phys)}
    for gi, _ in groups:
        ps = [rank_in_nz[q[i]] for i in gi]
        if ps != list(range(ps[0], ps[0] + len(ps))):
            return None
    groups.sort(key=lambda gr: rank_in_nz[q[gr[0][0]]])
    order = [kk for _, gk in groups for kk in gk]
    for kk in range(len(out)):
        if out[kk] == 1:
            if kk == 0:
                order.insert(0, kk)
            else:
                order.insert(order.index(kk - 1) + 1, kk)
    pos = {kk: n for n, kk in enumerate(order)}
    phys_out = [out[kk] for kk in order]
    q_out = [pos[kk] for kk in range(len(out))]
    return phys_out, q_out


def transpose_above_reshape(y_shape, z_shape, q):
    """Express TRANSPOSE(RESHAPE(y, z_shape), q) as RESHAPE(TRANSPOSE(y, qy), ...).

    Returns qy, or None when q does not keep every reshape group contiguous and ordered."""
    groups = factor_groups(y_shape, z_shape)
    if groups is None:
        return None
    gid = {}
    for n, (_, gk) in enumerate(groups):
        for j, kk in enumerate(gk):
            gid[kk] = (n, j)
    seq = [gid[kk] for kk in q if z_shape[kk] != 1]
    order = []
    k = 0
    while k < len(seq):
        n, j = seq[k]
        size = len(groups[n][1])
        if j != 0 or [s for s in seq[k : k + size]] != [(n, t) for t in range(size)]:
            return None
        order.append(n)
        k += size
    body = [d for n in order for d in groups[n][0]]
    first = min(body) if body else len(y_shape)
    lead = [d for d in range(first) if y_shape[d] == 1]
    return lead + body + [d for d in range(first, len(y_shape)) if y_shape[d] == 1]


def hoist_transposes(g: TGraph, only=None) -> int:
    """Move TRANSPOSE(RESHAPE(TRANSPOSE(x))) to RESHAPE(TRANSPOSE(TRANSPOSE(x))) so that the two
    transposes merge (channel shuffles become one transpose).  ``only``: restrict to these ops."""
    n = 0
    for t in list(g.ops) if only is None else list(only):
        if t.op != "TRANSPOSE" or t not in g.ops:
            continue
        q = perm_of(t)
        z = t.inputs[0]
        rsh = z.producer
        if q is None or rsh is None or len(g.users_of(z)) != 1 or g.is_output(z):
            continue
        if rsh.op != "RESHAPE":
            continue
        if g.is_output(z):
            continue
        y = rsh.inputs[0]
        if y.producer is None or y.producer.op != "TRANSPOSE" or len(g.users_of(y)) != 1:
            continue
        if sum(1 for d in w.shape if d < 0) > 1 if (w := t.outputs[0]) else False:
            continue
        qy = transpose_above_reshape(y.shape, z.shape, q)
        if qy is None:
            continue
        yt = g.tensor(y.name + "/hoisted", [y.shape[d] for d in qy], y.dtype, like=y)
        g.add(
            "TRANSPOSE",
            [y, g.const(yt.name + "/perm", np.asarray(qy, np.int32))],
            [yt],
            origin=t.origin,
        )
        w = t.outputs[0]
        g.remove(t)
        g.remove(rsh)
        g.add(
            "RESHAPE",
            [yt, g.const(w.name + "/shape", np.asarray(w.shape, np.int32))],
            [w],
            origin=t.origin,
        )
        n += 1
    return n


PADS = ("PAD", "PADV2", "MIRROR_PAD")


def hoist_transposes_above_pads(g: TGraph) -> int:
    """Rewrite TRANSPOSE(PAD(x, p), q) as PAD(TRANSPOSE(x, q), p permuted through q) when the
    padded tensor has no other use.  Sinking moves a transpose below a pad; when it gets stuck
    right after it (the NCHW->NHWC transpose of a graph input in front of a padded first
    convolution), moving it back up transposes the smaller tensor and puts the PAD next to the
    convolution, where the runtime folds it into the convolution's padding.  Run after sinking
    (which would move the transpose down again).  An exact identity, like every rewrite here."""
    n = 0
    for t in list(g.ops):
        if t.op != "TRANSPOSE" or t not in g.ops:
            continue
        q = perm_of(t)
        b = t.inputs[0]
        pad = b.producer
        if q is None or pad is None or pad.op not in PADS or g.is_output(b):
            continue
        if len(g.users_of(b)) != 1 or not pad.inputs[1].is_const:
            continue
        x = pad.inputs[0]
        pads = pad.inputs[1].data.reshape(len(q), 2)
        xt = g.tensor(x.name + "/hoisted", [x.shape[p] for p in q], x.dtype, like=x)
        pos = g.ops.index(pad)
        w = t.outputs[0]
        g.remove(t)
        g.remove(pad)
        perm = g.const(xt.name + "/perm", np.asarray(q, np.int32))
        g.add("TRANSPOSE", [x, perm], [xt], origin=t.origin, position=pos)
        new_pads = g.const(pad.inputs[1].name + "/p", np.asarray(pads[q], pads.dtype))
        g.add(pad.op, [xt, new_pads, *pad.inputs[2:]], [w], pad.options, pad.origin, pos + 1)
        n += 1
    return n


def sink_transposes(g: TGraph, max_rounds: int = 10000) -> int:
    s = _Sinker(g)
    moves = 0
    for _ in range(max_rounds):
        changed = False
        for op in list(g.ops):
            if op.op == "TRANSPOSE" and op in g.ops and s.sink(op):
                changed = True
                moves += 1
        if not changed:
            if hoist_transposes(g):
                continue
            break
    return moves
