"""Lowering rules for data-movement ATen ops: views, permutes, slicing, concatenation, padding,
indexing, gathers and dtype casts.

All rules work on static shapes taken from the ATen output Values (the export already computed
them); dims are normalized (negative → positive, slice bounds clamped) exactly as PyTorch does.
"""

from __future__ import annotations

import numpy as np
import torch

from ..ir import Node, Value
from .context import Ctx

_INT_MAX = 2**63 - 1


def _identity(ctx: Ctx, node: Node):
    x = node.args[0]
    ctx.bind(node.out, ctx.reshape(ctx.t(x), ctx.shape(node.out)))


def lower_view(ctx: Ctx, node: Node):
    X = ctx.t(node.args[0])
    out = ctx.shape(node.out)
    if sum(1 for d in out if d < 0) <= 1:
        ctx.bind(node.out, ctx.reshape(X, out))
        return
    if (
        all(isinstance(sz, int) and sz >= 0 or isinstance(sz, Value) for sz in node.args[1])
        is False
    ):
        ctx.bind(node.out, ctx.reshape_value(X, node.args[0], node.out))
        return
    # several dynamic dims: the target shape comes from the symbolic sizes in the arguments
    sizes = list(node.args[1])
    parts = [s if isinstance(s, int) else s for s in sizes]
    shape_t = ctx.shape_vector(parts)
    ctx.bind(node.out, ctx.emit("RESHAPE", [X, shape_t], out, X.dtype))


def lower_permute(ctx: Ctx, node: Node):
    x, dims = node.args[0], node.args[1]
    r = x.rank
    ctx.bind(node.out, ctx.transpose(ctx.t(x), [d % r for d in dims]))


def lower_expand(ctx: Ctx, node: Node):
    x = node.args[0]
    X = ctx.t(x)
    out = ctx.shape(node.out)
    if tuple(x.shape) == tuple(node.out.shape):
        ctx.bind(node.out, X)  # no-op expand (symbolic dims compare by expression)
        return
    if all(d >= 0 for d in out) and X.numel == int(np.prod(out)):
        ctx.bind(node.out, ctx.reshape(X, out))
        return
    if any(d < 0 for d in out):
        # dynamic: sizes come from the symbolic arguments; -1 keeps the input's (runtime) dim
        lead = len(out) - X.rank
        parts = []
        for i, sz in enumerate(node.args[1]):
            if isinstance(sz, int) and sz == -1:
                parts.append(ctx.dim_of(X, i - lead))
            else:
                parts.append(sz)
        # BROADCAST_TO aligns a lower-rank input to the right, as numpy does
        ctx.bind(node.out, ctx.emit("BROADCAST_TO", [X, ctx.shape_vector(parts)], out, X.dtype))
        return
    if X.rank < len(out):
        X = ctx.reshape(X, [1] * (len(out) - X.rank) + X.shape)
    n_out = int(np.prod(out))
    if X.is_const and n_out <= max(4 * X.numel, 1 << 14):
        ctx.bind(node.out, ctx.const(np.broadcast_to(X.data, out).copy(), X.dtype))
        return
    # large broadcasts of constants stay runtime BROADCAST_TOs (never bloat the file); a
    # matmul that consumes an expanded weight reads the small constant directly (nn.py)
    ctx.bind(node.out, ctx.emit("BROADCAST_TO", [X, ctx.i32(out)], out, X.dtype))


def _norm_slice(n: int, start, end, step):
    start = 0 if start is None else int(start)
    end = n if end is None else int(end)
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return start, end, int(step or 1)


def slice_tensor(ctx: Ctx, X, dim: int, start: int, end: int, step: int = 1):
    shape = list(X.shape)
    if start == 0 and end == shape[dim] and step == 1:
        return X
    if step == 1:
        size = list(shape)  # -1 (dynamic dims) in SLICE's size means "to the end"
        size[dim] = end - start
        begin = [0] * X.rank
        begin[dim] = start
        return ctx.emit("SLICE", [X, ctx.i32(begin, "begin"), ctx.i32(size, "size")], size, X.dtype)
    begin = [0] * X.rank
    ends = list(shape)
    strides = [1] * X.rank
    begin[dim], ends[dim], strides[dim] = start, end, step
    out = list(shape)
    out[dim] = max(0, -(-(end - start) // step))
    return ctx.emit(
        "STRIDED_SLICE",
        [X, ctx.i32(begin, "begin"), ctx.i32(ends, "end"), ctx.i32(strides, "strides")],
        out,
        X.dtype,
        dict(
            begin_mask=0,
            end_mask=0,
            ellipsis_mask=0,
            new_axis_mask=0,
            shrink_axis_mask=0,
            offset=False,
        ),
    )


def lower_slice(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    dim = a.dim % X.rank
    if X.shape[dim] < 0 or isinstance(a.start, Value) or isinstance(a.end, Value):
        ctx.bind(node.out, _dynamic_slice(ctx, X, dim, a.start, a.end, a.step, node))
        return
    start, end, step = _norm_slice(X.shape[dim], a.start, a.end, a.step)
    ctx.bind(node.out, slice_tensor(ctx, X, dim, start, end, step))


def _dynamic_slice(ctx: Ctx, X, dim, start, end, step, node):
    """Slice along a dynamic dim or with symbolic bounds: STRIDED_SLICE whose begin/end come
    from the symbolic sizes at runtime, with begin/end masks for the other dims and open ends.
    Bounds are clamped like Python slices (STRIDED_SLICE clamps too)."""
    start = 0 if start is None else start
    step = int(step or 1)
    for b in (start, end):
        if isinstance(b, int) and b < 0 and b > -(2**62) and X.shape[dim] < 0:
            raise ctx.error("negative slice bounds on a dynamic dim are not supported")
    if isinstance(start, int) and start < 0:
        start += X.shape[dim]
    open_end = end is None or (isinstance(end, int) and end >= 2**62)
    if isinstance(end, int) and not open_end and end < 0:
        end += X.shape[dim]
    r = X.rank
    begin = [0] * r
    ends = [0] * r
    strides = [1] * r
    begin[dim] = start
    ends[dim] = 0 if open_end else end
    strides[dim] = step
    begin_mask = sum(1 << i for i in range(r) if i != dim)
    end_mask = sum(1 << i for i in range(r) if i != dim or open_end)
    return ctx.emit(
        "STRIDED_SLICE",
        [X, ctx.shape_vector(begin), ctx.shape_vector(ends), ctx.i32(strides, "strides")],
        ctx.shape(node.out),
        X.dtype,
        dict(
            begin_mask=begin_mask,
            end_mask=end_mask,
            ellipsis_mask=0,
            new_axis_mask=0,
            shrink_axis_mask=0,
            offset=False,
        ),
    )


def lower_select(ctx: Ctx, node: Node):
    x, dim, index = node.args[0], node.args[1], node.args[2]
    X = ctx.t(x)
    dim = dim % X.rank
    if index < 0:
        if X.shape[dim] < 0:
            raise ctx.error("negative index on a dynamic dim is not supported")
        index += X.shape[dim]
    y = slice_tensor(ctx, X, dim, index, index + 1)
    ctx.bind(node.out, ctx.reshape_value(y, x, node.out))


def lower_cat(ctx: Ctx, node: Node):
    tensors, dim = node.args[0], node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    out = ctx.shape(node.out)
    dt = ctx.dtype(node.out)
    dim = dim % len(out)
    ins = []
    for v in tensors:
        if v.is_static and 0 in v.shape and v.rank != len(out):
            continue  # legacy empty (0,) tensors are ignored by torch.cat
        if v.is_static and v.rank == len(out) and v.shape[dim] == 0:
            continue
        ins.append(ctx.cast(ctx.t(v), dt))
    if not ins:  # every input is empty: so is the result
        if any(d < 0 for d in out):
            raise ctx.error("concatenation of empty tensors with a dynamic result shape")
        ctx.bind(node.out, ctx.const(np.zeros(out, dt), dt))
        return
    if len(ins) == 1:
        ctx.bind(node.out, ins[0])
        return
    if all(t.is_const for t in ins):
        ctx.bind(node.out, ctx.const(np.concatenate([t.data for t in ins], dim), dt))
        return
    ctx.bind(
        node.out,
        ctx.emit("CONCATENATION", ins, out, dt, dict(axis=dim, fused_activation_function="NONE")),
    )


def lower_split_with_sizes(ctx: Ctx, node: Node):
    x, sizes = node.args[0], node.args[1]
    dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
    X = ctx.t(x)
    dim = dim % X.rank
    start = 0
    for o, s in zip(node.outputs, sizes, strict=True):
        if o.users or ctx.graph.is_output(o):
            ctx.bind(o, slice_tensor(ctx, X, dim, start, start + int(s)))
        start += int(s)


def lower_squeeze(ctx: Ctx, node: Node):
    x = node.args[0]
    ctx.bind(node.out, ctx.reshape_value(ctx.t(x), x, node.out))


def lower_to_copy(ctx: Ctx, node: Node):
    x = node.args[0]
    X = ctx.t(x)
    dt = ctx.dtype(node.out)
    if dt == X.dtype:
        ctx.bind(node.out, X)
        return
    if X.dtype.startswith("float") and not dt.startswith("float") and dt != "bool":
        # torch truncates toward zero; TFLite CAST float->int truncates as well
        pass
    ctx.bind(node.out, ctx.cast(X, dt))


def lower_copy(ctx: Ctx, node: Node):
    src = node.args[1]
    S = ctx.cast(ctx.t(src), ctx.dtype(node.out))
    out = ctx.static_shape(node.out)
    if S.shape != out:
        if S.rank < len(out):
            S = ctx.reshape(S, [1] * (len(out) - S.rank) + S.shape)
        if S.shape != out:
            S = ctx.emit("BROADCAST_TO", [S, ctx.i32(out)], out, S.dtype)
    ctx.bind(node.out, S)


def lower_constant_pad(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    pad = list(a.pad)
    r = X.rank
    pairs = [[0, 0] for _ in range(r)]
    for i in range(len(pad) // 2):
        pairs[r - 1 - i] = [int(pad[2 * i]), int(pad[2 * i + 1])]
    # negative padding crops
    for d, (b, e) in enumerate(pairs):
        if b < 0 or e < 0:
            X = slice_tensor(ctx, X, d, max(-b, 0), X.shape[d] - max(-e, 0))
            pairs[d] = [max(b, 0), max(e, 0)]
    if all(b == 0 and e == 0 for b, e in pairs):
        ctx.bind(node.out, X)
        return
    shape = [n + b + e for n, (b, e) in zip(X.shape, pairs, strict=True)]
    pz = ctx.const(np.asarray(pairs, np.int32), "int32", "paddings")
    value = float(a.value) if a.value is not None else 0.0
    if value == 0:
        y = ctx.emit("PAD", [X, pz], shape, X.dtype)
    else:
        y = ctx.emit("PADV2", [X, pz, ctx.scalar(value, X.dtype)], shape, X.dtype)
    ctx.bind(node.out, y)


def lower_reflection_pad(ctx: Ctx, node: Node):
    X = ctx.t(node.args[0])
    pad = list(node.args[1])
    r = X.rank
    pairs = [[0, 0] for _ in range(r)]
    for i in range(len(pad) // 2):
        pairs[r - 1 - i] = [int(pad[2 * i]), int(pad[2 * i + 1])]
    pz = ctx.const(np.asarray(pairs, np.int32), "int32", "paddings")
    ctx.bind(
        node.out,
        ctx.emit("MIRROR_PAD", [X, pz], ctx.shape(node.out), X.dtype, dict(mode="REFLECT")),
    )


def lower_replication_pad(ctx: Ctx, node: Node):
    # edge padding == gather with clamped indices along each padded dim
    X = ctx.t(node.args[0])
    pad = list(node.args[1])
    r = X.rank
    for i in range(len(pad) // 2):
        d = r - 1 - i
        b, e = int(pad[2 * i]), int(pad[2 * i + 1])
        if b == 0 and e == 0:
            continue
        n = X.shape[d]
        idx = np.clip(np.arange(-b, n + e), 0, n - 1).astype(np.int32)
        X = gather(ctx, X, ctx.const(idx, "int32", "indices"), d)
    ctx.bind(node.out, X)


def gather(ctx: Ctx, X, idx, axis: int):
    shape = X.shape[:axis] + idx.shape + X.shape[axis + 1 :]
    return ctx.emit("GATHER", [X, idx], shape, X.dtype, dict(axis=axis, batch_dims=0))


def _index_i32(ctx: Ctx, v: Value):
    t = ctx.t(v)
    if t.dtype == "bool":
        raise ctx.error(
            "boolean-mask indexing has a data-dependent shape",
            hint="use torch.where(mask, x, other) instead of x[mask]",
        )
    if t.dtype != "int32":
        # in-bounds indices are < the indexed size < 2^31, so int32 is exact
        t = ctx.cast(t, "int32")
    return t


def _wrap_negative(ctx: Ctx, idx, n: int, v: Value, x=None, dim: int = 0):
    """Python-style negative indices -> positive (n: the indexed dim; -1 when dynamic, then
    its runtime size is read from ``x``)."""
    r = v.meta.get("range")
    if r is not None and r[0] >= 0:
        return idx
    if idx.is_const and n >= 0:
        return ctx.const(np.where(idx.data < 0, idx.data + n, idx.data).astype(np.int32), "int32")
    if idx.is_const and (idx.data >= 0).all():
        return idx
    size = ctx.scalar(n, "int32") if n >= 0 else ctx.dim_of(x, dim)
    return ctx.binary("FLOOR_MOD", idx, size)


def lower_index_select(ctx: Ctx, node: Node):
    x, dim, index = node.args[0], node.args[1], node.args[2]
    X = ctx.t(x)
    dim = dim % X.rank
    idx = _wrap_negative(ctx, _index_i32(ctx, index), X.shape[dim], index, X, dim)
    ctx.bind(node.out, gather(ctx, X, idx, dim))


def lower_embedding(ctx: Ctx, node: Node):
    w, indices = node.args[0], node.args[1]
    W = ctx.t(w)
    idx = _index_i32(ctx, indices)
    ctx.bind(node.out, gather(ctx, W, idx, 0))


def lower_index(ctx: Ctx, node: Node):
    x, indices = node.args[0], list(node.args[1])
    X = ctx.t(x)
    r = X.rank
    pos = [i for i, v in enumerate(indices) if v is not None]
    if not pos:
        ctx.bind(node.out, X)
        return
    idxs = []
    for i in pos:
        v = indices[i]
        idxs.append(_wrap_negative(ctx, _index_i32(ctx, v), X.shape[i], v, X, i))
    out = ctx.shape(node.out)
    if len(pos) == 1:
        ctx.bind(node.out, ctx.reshape(gather(ctx, X, idxs[0], pos[0]), out))
        return
    # several index tensors: move indexed dims to the front, GATHER_ND with stacked indices
    bshape = broadcast_shapes_all([t.shape for t in idxs])
    rest = [i for i in range(r) if i not in pos]
    Xf = ctx.transpose(X, pos + rest)
    if all(d >= 0 for d in bshape):
        cols = []
        for t in idxs:
            if t.shape != bshape:
                t = ctx.reshape(t, [1] * (len(bshape) - t.rank) + t.shape)
                t = ctx.emit("BROADCAST_TO", [t, ctx.i32(bshape)], bshape, "int32")
            cols.append(t)
    else:
        # dynamic: broadcast by adding a zero tensor of the common (runtime) shape
        zero = None
        for t in idxs:
            z = ctx.binary(
                "MUL", t, ctx.scalar(0, "int32"), options=dict(fused_activation_function="NONE")
            )
            zero = (
                z
                if zero is None
                else ctx.binary("ADD", zero, z, options=dict(fused_activation_function="NONE"))
            )
        cols = [
            t
            if t.shape == bshape
            else ctx.binary("ADD", t, zero, options=dict(fused_activation_function="NONE"))
            for t in idxs
        ]
    coords = ctx.emit(
        "PACK", cols, bshape + [len(pos)], "int32", dict(values_count=len(cols), axis=len(bshape))
    )
    rest_shape = [X.shape[i] for i in rest]
    y = ctx.emit("GATHER_ND", [Xf, coords], bshape + rest_shape, X.dtype)
    contiguous = pos == list(range(pos[0], pos[0] + len(pos)))
    if contiguous and pos[0] > 0:
        # torch puts the broadcast dims where the first indexed dim was
        nb = len(bshape)
        lead = list(range(nb, nb + pos[0]))
        perm = lead + list(range(nb)) + list(range(nb + pos[0], nb + len(rest)))
        y = ctx.transpose(y, perm)
    ctx.bind(node.out, ctx.reshape(y, out))


def broadcast_shapes_all(shapes) -> list[int]:
    from .context import broadcast_shapes

    out = list(shapes[0])
    for sh in shapes[1:]:
        out = broadcast_shapes(out, sh)
    return out


def lower_gather(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    r = X.rank
    dim = a.dim % r
    idx = _wrap_negative(ctx, _index_i32(ctx, a.index), X.shape[dim], a.index, X, dim)
    same = all(a.index.shape[i] == a.self.shape[i] for i in range(r) if i != dim)
    if same and r >= 1:
        # take-along-axis: GATHER over the last axis with every other dim as a batch dim
        # (works with dynamic shapes; no coordinate tensor)
        perm = [i for i in range(r) if i != dim] + [dim]
        inv = [perm.index(i) for i in range(r)]
        Xt, It = ctx.transpose(X, perm), ctx.transpose(idx, perm)
        y = ctx.emit("GATHER", [Xt, It], It.shape, X.dtype, dict(axis=r - 1, batch_dims=r - 1))
        ctx.bind(node.out, ctx.transpose(y, inv))
        return
    coords = _coords(ctx, idx, dim, r)
    ctx.bind(node.out, ctx.emit("GATHER_ND", [X, coords], idx.shape, X.dtype))


def lower_flip(ctx: Ctx, node: Node):
    X = ctx.t(node.args[0])
    for d in node.args[1]:
        d = d % X.rank
        X = ctx.emit("REVERSE_V2", [X, ctx.i32([d], "axis")], X.shape, X.dtype)
    ctx.bind(node.out, X)


def lower_roll(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    shifts, dims = list(a.shifts), list(a.dims)
    if not dims:
        shape = X.shape
        X = ctx.reshape(X, [X.numel])
        X = _roll1(ctx, X, 0, shifts[0])
        ctx.bind(node.out, ctx.reshape(X, shape))
        return
    for s, d in zip(shifts, dims, strict=True):
        X = _roll1(ctx, X, d % X.rank, s)
    ctx.bind(node.out, X)


def _roll1(ctx: Ctx, X, d: int, s: int):
    n = X.shape[d]
    s = s % n if n else 0
    if s == 0:
        return X
    a = slice_tensor(ctx, X, d, n - s, n)
    b = slice_tensor(ctx, X, d, 0, n - s)
    return ctx.emit(
        "CONCATENATION", [a, b], X.shape, X.dtype, dict(axis=d, fused_activation_function="NONE")
    )


def lower_repeat(ctx: Ctx, node: Node):
    X = ctx.t(node.args[0])
    reps = [int(r) for r in node.args[1]]
    if X.rank < len(reps):
        X = ctx.reshape(X, [1] * (len(reps) - X.rank) + X.shape)
    out = ctx.shape(node.out)
    if all(r == 1 for r in reps):
        ctx.bind(node.out, X)
        return
    ctx.bind(node.out, ctx.emit("TILE", [X, ctx.i32(reps, "multiples")], out, X.dtype))


def lower_slice_scatter(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    S = ctx.cast(ctx.t(a.src), X.dtype)  # X may be a narrowed (int32) constant
    dim = a.dim % X.rank
    start, end, step = _norm_slice(X.shape[dim], a.start, a.end, a.step)
    if step != 1:
        raise ctx.error("slice_scatter with step != 1 is not supported")
    ctx.bind(node.out, _splice(ctx, X, S, dim, start, end))


def _splice(ctx: Ctx, X, S, dim, start, end):
    parts = []
    if start > 0:
        parts.append(slice_tensor(ctx, X, dim, 0, start))
    parts.append(S)
    if end < X.shape[dim]:
        parts.append(slice_tensor(ctx, X, dim, end, X.shape[dim]))
    if len(parts) == 1:
        return S
    return ctx.emit(
        "CONCATENATION", parts, X.shape, X.dtype, dict(axis=dim, fused_activation_function="NONE")
    )


def lower_select_scatter(ctx: Ctx, node: Node):
    x, src, dim, index = node.args[:4]
    X = ctx.t(x)
    dim = dim % X.rank
    index = index % X.shape[dim]
    shape = list(X.shape)
    shape[dim] = 1
    S = ctx.reshape(ctx.cast(ctx.t(src), X.dtype), shape)
    ctx.bind(node.out, _splice(ctx, X, S, dim, index, index + 1))


def lower_index_put(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    indices = list(a.indices)
    pos = [i for i, v in enumerate(indices) if v is not None]
    if len(pos) != 1:
        raise ctx.error("index_put with several index tensors is not supported")
    d = pos[0]
    iv = indices[d]
    if not iv.is_const or iv.dtype == torch.bool:
        raise ctx.error("index_put needs constant integer indices")
    idx = iv.const.reshape(-1).numpy().astype(np.int64) % X.shape[d]
    V = ctx.cast(ctx.t(a.values), X.dtype)
    # out[..., idx[j], ...] = values[..., j, ...]: build out with a GATHER from concat(X, V)
    vshape = X.shape[:d] + [len(idx)] + X.shape[d + 1 :]
    if V.shape != vshape:
        if V.rank < len(vshape):
            V = ctx.reshape(V, [1] * (len(vshape) - V.rank) + V.shape)
        V = ctx.emit("BROADCAST_TO", [V, ctx.i32(vshape)], vshape, V.dtype)
    if a.accumulate:
        raise ctx.error("index_put with accumulate=True is not supported")
    n = X.shape[d]
    sel = np.arange(n)
    for j, i in enumerate(idx):
        sel[i] = n + j
    cat = ctx.emit(
        "CONCATENATION",
        [X, V],
        X.shape[:d] + [n + len(idx)] + X.shape[d + 1 :],
        X.dtype,
        dict(axis=d, fused_activation_function="NONE"),
    )
    ctx.bind(node.out, gather(ctx, cat, ctx.const(sel.astype(np.int32), "int32"), d))


def lower_as_strided(ctx: Ctx, node: Node):
    """as_strided reads the input's *storage*: map every output element to the logical input
    element at that storage position, using the input's strides recorded at export time.
    Exact for dense inputs; the result is a RESHAPE when the map is the identity, else a
    GATHER with constant indices."""
    a = ctx.args(node)
    x: Value = a.self
    in_stride = x.meta.get("stride")
    if in_stride is None or not x.is_static:
        raise ctx.error("as_strided on a tensor with unknown memory layout")
    shape = [int(d) for d in x.shape]
    n = int(np.prod(shape)) if shape else 1
    grids = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int64)
    storage = (
        (np.asarray(in_stride, np.int64).reshape(-1, 1) * grids).sum(0)
        if shape
        else np.zeros(1, np.int64)
    )
    if len(np.unique(storage)) != n:
        raise ctx.error("as_strided on a tensor whose memory overlaps itself")
    lookup = {int(s): i for i, s in enumerate(storage)}
    out_shape = ctx.static_shape(node.out)
    offset = int(a.storage_offset or 0)
    og = (
        np.indices(out_shape).reshape(len(out_shape), -1)
        if out_shape
        else np.zeros((0, 1), np.int64)
    )
    pos = (
        offset + (np.asarray(a.stride, np.int64).reshape(-1, 1) * og).sum(0)
        if out_shape
        else np.full(1, offset)
    )
    try:
        idx = np.asarray([lookup[int(p)] for p in pos], np.int32)
    except KeyError:
        raise ctx.error("as_strided reads outside its input") from None
    X = ctx.reshape(ctx.t(x), [n])
    if len(idx) == n and np.array_equal(idx, np.arange(n)):
        ctx.bind(node.out, ctx.reshape(X, out_shape))
        return
    y = gather(ctx, X, ctx.const(idx, "int32", "indices"), 0)
    ctx.bind(node.out, ctx.reshape(y, out_shape))


def lower_arange(ctx: Ctx, node: Node):
    # static aranges were folded; this is the symbolic case (e.g. positions up to seq length)
    a = ctx.args(node)
    ov = node.target._overloadname
    start = 0 if ov == "default" else a.start
    end = a.end
    step = getattr(a, "step", 1) if ov == "start_step" else 1
    dt = ctx.dtype(node.out)

    def operand(x):
        if isinstance(x, Value):
            return ctx.reshape(ctx.cast(ctx.t(x), dt), [])
        return ctx.scalar(x, dt)

    ctx.bind(
        node.out,
        ctx.emit("RANGE", [operand(start), operand(end), operand(step)], ctx.shape(node.out), dt),
    )


def _fill(ctx: Ctx, node: Node, shape_t, value):
    dt = ctx.dtype(node.out)
    return ctx.emit("FILL", [shape_t, ctx.scalar(value, dt)], ctx.shape(node.out), dt)


def lower_full(ctx: Ctx, node: Node):
    dt = ctx.dtype(node.out)
    value = node.args[1]
    if not node.out.is_static:
        ctx.bind(node.out, _fill(ctx, node, ctx.shape_vector(list(node.args[0])), value))
        return
    out = ctx.static_shape(node.out)
    ctx.bind(node.out, ctx.const(np.full(out, value, dtype=dt), dt))


def _like(ctx: Ctx, node: Node, value):
    dt = ctx.dtype(node.out)
    if not node.out.is_static:
        X = ctx.t(node.args[0])
        shape_t = ctx.emit("SHAPE", [X], [X.rank], "int32", dict(out_type="int32"))
        ctx.bind(node.out, _fill(ctx, node, shape_t, value))
        return
    out = ctx.static_shape(node.out)
    ctx.bind(node.out, ctx.const(np.full(out, value, dtype=dt), dt))


def lower_full_like(ctx: Ctx, node: Node):
    _like(ctx, node, node.args[1])


def lower_zeros_like(ctx: Ctx, node: Node):
    _like(ctx, node, 0)


def lower_empty(ctx: Ctx, node: Node):
    # uninitialized memory in torch; zeros are one valid value of it
    _like_shape(ctx, node, 0)


def _like_shape(ctx: Ctx, node: Node, value):
    dt = ctx.dtype(node.out)
    if not node.out.is_static:
        ctx.bind(node.out, _fill(ctx, node, ctx.shape_vector(list(node.args[0])), value))
        return
    ctx.bind(node.out, ctx.const(np.full(ctx.static_shape(node.out), value, dtype=dt), dt))


def lower_fill(ctx: Ctx, node: Node):
    x, value = node.args[0], node.args[1]
    if isinstance(value, Value):
        X = ctx.t(x)
        v = ctx.reshape(ctx.cast(ctx.t(value), ctx.dtype(node.out)), [])
        shape_t = ctx.emit("SHAPE", [X], [X.rank], "int32", dict(out_type="int32"))
        ctx.bind(node.out, ctx.emit("FILL", [shape_t, v], ctx.shape(node.out), v.dtype))
        return
    _like(ctx, node, value)


def lower_scalar_tensor(ctx: Ctx, node: Node):
    dt = ctx.dtype(node.out)
    ctx.bind(node.out, ctx.const(np.asarray(node.args[0], dtype=dt), dt))


def _coords(ctx: Ctx, idx, dim: int, r: int):
    """GATHER_ND/SCATTER_ND coordinates for gather/scatter along ``dim``: every position of
    ``idx`` paired with its own index in the other dims (constant iotas) and idx along dim."""
    ishape = idx.shape
    cols = []
    for i in range(r):
        if i == dim:
            cols.append(ctx.reshape(idx, ishape + [1]))
        else:
            grid = np.broadcast_to(
                np.arange(ishape[i], dtype=np.int32).reshape(
                    [-1 if j == i else 1 for j in range(r)]
                ),
                ishape,
            )
            cols.append(ctx.const(np.asarray(grid, order="C").reshape(ishape + [1]), "int32"))
    return ctx.emit(
        "CONCATENATION", cols, ishape + [r], "int32", dict(axis=r, fused_activation_function="NONE")
    )


def _scatter_nd(ctx: Ctx, coords, updates, shape):
    return ctx.emit("SCATTER_ND", [coords, updates, ctx.i32(shape)], shape, updates.dtype)


def lower_scatter(ctx: Ctx, node: Node):
    """scatter(x, dim, index, src|value): SCATTER_ND builds the scattered values (summing
    duplicates, whose result torch leaves unspecified) and a hit mask; SELECT_V2 merges."""
    a = ctx.args(node)
    X = ctx.t(a.self)
    r = X.rank
    dim = a.dim % r
    shape = ctx.static_shape(node.out)
    idx = _wrap_negative(ctx, _index_i32(ctx, a.index), X.shape[dim], a.index)
    if idx.shape != [int(d) for d in a.index.shape]:
        raise ctx.error("internal: index shape")
    coords = _coords(ctx, idx, dim, r)
    ishape = idx.shape
    src = getattr(a, "src", None)
    if isinstance(src, Value):
        S = ctx.cast(ctx.t(src), X.dtype)
        if S.shape != ishape:
            S = slice_to(ctx, S, ishape)
    else:
        S = ctx.const(np.full(ishape, a.value, dtype=X.dtype), X.dtype)
    reduce = getattr(a, "reduce", None)
    if node.target._overloadname == "default" and node.op_name.endswith("scatter_add.default"):
        reduce = "add"
    if reduce in ("add", "sum"):
        include_self = getattr(a, "include_self", True)
        summed = _scatter_nd(ctx, coords, S, shape)
        if include_self is False:
            raise ctx.error("scatter_reduce with include_self=False is not supported")
        ctx.bind(
            node.out, ctx.binary("ADD", X, summed, options=dict(fused_activation_function="NONE"))
        )
        return
    if reduce is not None:
        raise ctx.error(f"scatter reduce={reduce!r} is not supported")
    vals = _scatter_nd(ctx, coords, S, shape)
    hits = _scatter_nd(ctx, coords, ctx.const(np.ones(ishape, np.int32), "int32"), shape)
    mask = ctx.binary("GREATER", hits, ctx.scalar(0, "int32"), "bool")
    ctx.bind(node.out, ctx.emit("SELECT_V2", [mask, vals, X], shape, X.dtype))


def slice_to(ctx: Ctx, S, shape):
    """torch's scatter reads src only where index has elements: crop src to index's shape."""
    return ctx.emit("SLICE", [S, ctx.i32([0] * S.rank), ctx.i32(shape)], list(shape), S.dtype)


def lower_diagonal(ctx: Ctx, node: Node):
    a = ctx.args(node)
    X = ctx.t(a.self)
    r = X.rank
    d1, d2 = a.dim1 % r, a.dim2 % r
    off = int(a.offset)
    shape = ctx.static_shape(a.self)
    rest = [i for i in range(r) if i not in (d1, d2)]
    Xt = ctx.transpose(X, [d1, d2] + rest)
    n1, n2 = shape[d1], shape[d2]
    i = (
        np.arange(max(0, -off), min(n1, n2 - off), dtype=np.int32)
        if n2 - off > 0
        else np.zeros(0, np.int32)
    )
    coords = np.stack([i, i + off], -1).astype(np.int32)
    y = ctx.emit(
        "GATHER_ND", [Xt, ctx.const(coords, "int32")], [len(i)] + [shape[k] for k in rest], X.dtype
    )
    # torch puts the diagonal last
    ctx.bind(node.out, ctx.transpose(y, list(range(1, len(rest) + 1)) + [0]))


def lower_alias(ctx: Ctx, node: Node):
    ctx.bind(node.out, ctx.t(node.args[0]))


RULES = {
    "view.default": lower_view,
    "_unsafe_view.default": lower_view,
    "reshape.default": lower_view,
    "permute.default": lower_permute,
    "expand.default": lower_expand,
    "squeeze.dim": lower_squeeze,
    "squeeze.dims": lower_squeeze,
    "squeeze.default": lower_squeeze,
    "unsqueeze.default": lower_squeeze,
    "slice.Tensor": lower_slice,
    "select.int": lower_select,
    "cat.default": lower_cat,
    "split_with_sizes.default": lower_split_with_sizes,
    "_to_copy.default": lower_to_copy,
    "clone.default": lower_alias,
    "alias.default": lower_alias,
    "lift_fresh_copy.default": lower_alias,
    "detach.default": lower_alias,
    "copy.default": lower_copy,
    "constant_pad_nd.default": lower_constant_pad,
    "reflection_pad1d.default": lower_reflection_pad,
    "reflection_pad2d.default": lower_reflection_pad,
    "reflection_pad3d.default": lower_reflection_pad,
    "replication_pad1d.default": lower_replication_pad,
    "replication_pad2d.default": lower_replication_pad,
    "replication_pad3d.default": lower_replication_pad,
    "index_select.default": lower_index_select,
    "embedding.default": lower_embedding,
    "index.Tensor": lower_index,
    "gather.default": lower_gather,
    "flip.default": lower_flip,
    "roll.default": lower_roll,
    "repeat.default": lower_repeat,
    "slice_scatter.default": lower_slice_scatter,
    "select_scatter.default": lower_select_scatter,
    "index_put.default": lower_index_put,
    "as_strided.default": lower_as_strided,
    "full.default": lower_full,
    "empty.memory_format": lower_empty,
    "empty_strided.default": lower_empty,
    "fill.Scalar": lower_fill,
    "fill.Tensor": lower_fill,
    "scalar_tensor.default": lower_scalar_tensor,
    "scatter.src": lower_scatter,
    "scatter.value": lower_scatter,
    "scatter_add.default": lower_scatter,
    "scatter_reduce.two": lower_scatter,
    "diagonal.default": lower_diagonal,
    "arange.default": lower_arange,
    "arange.start": lower_arange,
    "arange.start_step": lower_arange,
    "full_like.default": lower_full_like,
    "zeros_like.default": lower_zeros_like,
}

__all__ = ["RULES", "slice_tensor", "gather", "_identity", "_INT_MAX"]
