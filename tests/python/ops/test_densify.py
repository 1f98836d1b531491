"""DENSIFY and sparse constants (``Tensor.sparsity``) against LiteRT.

Each case stores a dense array in the file as sparse (``encode`` below: per traversal level
DENSE or SPARSE_CSR, optional blocks through ``block_map``, index vectors of int32 / uint16 /
uint8) and runs DENSIFY on it, on wick (default and reference kernels) and on LiteRT (default
and reference resolvers). DENSIFY copies stored values, so every dtype must match bit for bit,
and must equal the dense array we encoded. Sparse FULLY_CONNECTED weights (which wick densifies
at prepare, where LiteRT runs a sparse kernel) are compared within the fp32 single-op bar.
Malformed metadata written through the same writer must be refused at load with a message that
names the tensor and the field; an op other than DENSIFY / FULLY_CONNECTED reading a sparse
tensor is refused as unsupported.
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest

import wick
from tests.python.ops._harness import MALFORMED, UNSUPPORTED, compare
from tests.python.oracles.litert import run_litert
from wick.tflite.writer import ModelWriter


def encode(dense, formats, order=None, block_map=(), block_sizes=(), index_dtype="int32"):
    """(values, sparsity) storing ``dense`` with one format per traversal level ("D" / "S").

    Levels follow LiteRT's layout: the tensor's dims in ``order`` (a blocked dim walks its
    block count), then the block dims (block k of dim ``block_map[k]``, size
    ``block_sizes[k]``). A SPARSE_CSR level keeps the indices whose sub-block holds a non-zero.
    """
    dense = np.asarray(dense)
    rank = dense.ndim
    order = list(range(rank + len(block_map))) if order is None else list(order)
    bsize = dict(zip(block_map, block_sizes, strict=True))
    # Split every blocked dim d into (d / b, b): axis 2*d is the outer index, 2*d + 1 the inner.
    split = []
    for d, n in enumerate(dense.shape):
        b = bsize.get(d, 1)
        split += [n // b, b]
    a = dense.reshape(split)
    axes = [2 * v if v < rank else 2 * block_map[v - rank] + 1 for v in order]
    rest = [i for i in range(2 * rank) if i not in axes]  # the unblocked dims' size-1 inner axes
    a = a.transpose(axes + rest).reshape([a.shape[i] for i in axes])
    positions = [()]
    dims = []
    for level, fmt in enumerate(formats):
        extent = a.shape[level]
        if fmt == "D":
            positions = [p + (i,) for p in positions for i in range(extent)]
            dims.append({"format": "DENSE", "dense_size": extent})
            continue
        segments, indices, nxt = [0], [], []
        for p in positions:
            for i in range(extent):
                if np.any(a[p + (i,)] != 0):
                    indices.append(i)
                    nxt.append(p + (i,))
            segments.append(len(indices))
        positions = nxt
        dims.append(
            {
                "format": "SPARSE_CSR",
                # dense_size is unused on a SPARSE_CSR level (TF's converter writes 0) except
                # where it gives a block size
                "dense_size": extent if level >= rank else 0,
                "array_segments": np.array(segments, index_dtype),
                "array_indices": np.array(indices, index_dtype),
            }
        )
    values = np.array([a[p] for p in positions], dense.dtype).reshape(-1)
    sparsity = {"traversal_order": order, "block_map": list(block_map), "dim_metadata": dims}
    return values, sparsity


def sparse_array(rng, shape, dtype, density=0.3, block=None):
    """Random array with about ``density`` non-zeros (whole blocks of ``block`` when given)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
    else:
        x = rng.integers(-128, 128, shape).astype(dtype)
        x[x == 0] = 1
    if block is None:
        mask = rng.random(shape) < density
    else:
        coarse = [n // b for n, b in zip(shape, block, strict=True)]
        mask = rng.random(coarse) < density
        for ax, b in enumerate(block):
            mask = np.repeat(mask, b, axis=ax)
    return np.where(mask, x, np.zeros((), dtype)).astype(dtype)


def densify_model(shape, values, sparsity, quant=None):
    w = ModelWriter()
    sg = w.add_subgraph()
    k = sg.add_sparse_constant("k", shape, values, sparsity, quant)
    y = sg.add_tensor("y", list(shape), values.dtype)
    sg.add_operator("DENSIFY", [k], [y])
    sg.set_inputs([])
    sg.set_outputs([y])
    return w.finish()


def consumer_model(shape, values, sparsity, quant=None):
    """x + float(DENSIFY(k)): LiteRT's default resolver (XNNPACK) fails to invoke a graph whose
    output is DENSIFY's, so it sees the dense tensor through an ADD of a run-time zero input
    (after a DEQUANTIZE for float16 / int8)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", list(shape), "float32")
    k = sg.add_sparse_constant("k", shape, values, sparsity, quant)
    kd = sg.add_tensor("k_dense", list(shape), values.dtype, quant)
    sg.add_operator("DENSIFY", [k], [kd])
    if values.dtype != np.float32:
        kf = sg.add_tensor("k_float", list(shape), "float32")
        sg.add_operator("DEQUANTIZE", [kd], [kf])
        kd = kf
    y = sg.add_tensor("y", list(shape), "float32")
    sg.add_operator("ADD", [x, kd], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def check_densify(dense, formats, litert=True, **kw):
    """DENSIFY alone: wick (both kernel sets) equals the encoded array and LiteRT's reference
    resolver bit for bit; DENSIFY -> ADD: wick equals LiteRT's default resolver."""
    values, sparsity = encode(dense, formats, **kw)
    quant = {"scale": 0.5, "zero_point": 3} if dense.dtype == np.int8 else None
    data = densify_model(dense.shape, values, sparsity, quant)
    got = wick.load(data)()
    assert got[0].tobytes() == dense.tobytes(), "wick's DENSIFY differs from the encoded array"
    compare(wick.load(data, reference=True)(), [dense], what="reference-kernel output")
    if not litert:
        return
    compare(got, run_litert(data, [], reference=True))
    data = consumer_model(dense.shape, values, sparsity, quant)
    feeds = [np.zeros(dense.shape, np.float32)]
    ref = run_litert(data, feeds)
    compare(wick.load(data)(*feeds), ref)
    compare(wick.load(data, reference=True)(*feeds), ref, what="reference-kernel output")


RNG_SEED = 0

CASES = {
    # name: (shape, formats, encode kwargs, block for the random pattern)
    "1d-csr": ((13,), "S", {}, None),
    "2d-dense-csr": ((6, 9), "DS", {}, None),
    "2d-csr-dense": ((6, 9), "SD", {}, None),
    "2d-csr-csr": ((7, 5), "SS", {}, None),
    "2d-csc": ((6, 9), "DS", {"order": [1, 0]}, None),
    "3d-dense-csr-dense": ((3, 5, 4), "DSD", {}, None),
    "3d-permuted": ((3, 5, 4), "DSS", {"order": [2, 0, 1]}, None),
    "4d-conv-weights": ((8, 1, 1, 24), "DDDS", {}, None),  # MediaPipe's fp16 1x1 conv layout
    "block-1x4": (
        (4, 16),
        "DSD",
        {"block_map": [1], "block_sizes": [4]},
        (1, 4),
    ),
    "block-2x2": (
        (6, 8),
        "DSDD",
        {"block_map": [0, 1], "block_sizes": [2, 2]},
        (2, 2),
    ),
    # A SPARSE_CSR level inside the blocks: LiteRT 2.3.0's DENSIFY dies of SIGFPE on it (both
    # resolvers), so only the encoded array is the oracle here. TF's converter keeps block
    # levels DENSE.
    "block-csr-inside": (
        (4, 12),
        "DSS",
        {"block_map": [1], "block_sizes": [3], "litert": False},
        (1, 3),
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_densify(case, dtype):
    shape, formats, kw, block = CASES[case]
    rng = np.random.default_rng(zlib.crc32(f"{case}-{dtype}".encode()))
    check_densify(sparse_array(rng, shape, dtype, block=block), formats, **kw)


@pytest.mark.parametrize("index_dtype", ["int32", "uint16", "uint8"])
def test_densify_index_vectors(index_dtype):
    rng = np.random.default_rng(1)
    dense = sparse_array(rng, (5, 40), "float32", density=0.5)
    check_densify(dense, "DS", index_dtype=index_dtype)
    check_densify(dense, "SS", index_dtype=index_dtype)


def test_densify_all_dense():
    check_densify(np.arange(1, 13, dtype=np.float32).reshape(3, 4), "SS")


def test_densify_all_zero():
    """Nothing stored: the buffer is empty. LiteRT refuses that DENSIFY (its input is then not
    a constant); wick reads it as a constant whose dense form is all zeros."""
    dense = np.zeros((3, 4), np.float32)
    values, sparsity = encode(dense, "DS")
    assert values.size == 0
    got = wick.load(densify_model(dense.shape, values, sparsity))()
    assert got[0].tobytes() == dense.tobytes()


def test_densify_feeds_a_graph():
    """DENSIFY -> DEQUANTIZE (fp16) -> FULLY_CONNECTED with a run-time input: the shape of
    MediaPipe's sparse detectors, folded at prepare on wick."""
    rng = np.random.default_rng(2)
    wdense = sparse_array(rng, (6, 10), "float16")
    values, sparsity = encode(wdense, "DS")
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 10], "float32")
    k = sg.add_sparse_constant("k", [6, 10], values, sparsity)
    kd = sg.add_tensor("k_dense", [6, 10], "float16")
    kf = sg.add_tensor("k_float", [6, 10], "float32")
    y = sg.add_tensor("y", [2, 6], "float32")
    sg.add_operator("DENSIFY", [k], [kd])
    sg.add_operator("DEQUANTIZE", [kd], [kf])
    sg.add_operator("FULLY_CONNECTED", [x, kf, -1], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    feeds = [rng.standard_normal((2, 10)).astype(np.float32)]
    for reference in (False, True):
        ref = run_litert(data, feeds, reference=reference)
        compare(wick.load(data)(*feeds), ref)
        compare(wick.load(data, reference=True)(*feeds), ref, what="reference-kernel output")


@pytest.mark.parametrize(
    "formats,kw,block",
    [("DS", {}, None), ("DSD", {"block_map": [1], "block_sizes": [4]}, (1, 4))],
    ids=["random-sparse", "block-1x4"],
)
def test_sparse_fully_connected_weights(formats, kw, block):
    """FULLY_CONNECTED reading sparse float weights directly (LiteRT's sparse FC path, both
    layouts it runs); wick densifies them at prepare. Oracle: LiteRT's reference resolver only:
    its default resolver hands the node to XNNPACK, which reads the stored values as if they
    were dense (NaN and 1e35 outputs with ai_edge_litert 2.x)."""
    rng = np.random.default_rng(3)
    wdense = sparse_array(rng, (8, 16), "float32", block=block)
    values, sparsity = encode(wdense, formats, **kw)
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [3, 16], "float32")
    k = sg.add_sparse_constant("k", [8, 16], values, sparsity)
    b = sg.add_constant("b", rng.standard_normal(8).astype(np.float32))
    y = sg.add_tensor("y", [3, 8], "float32")
    sg.add_operator("FULLY_CONNECTED", [x, k, b], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    feeds = [rng.standard_normal((3, 16)).astype(np.float32)]
    ref = run_litert(data, feeds, reference=True)
    compare(wick.load(data)(*feeds), ref)
    compare(wick.load(data, reference=True)(*feeds), ref, what="reference-kernel output")


def test_sparse_input_of_other_ops_is_unsupported():
    dense = np.array([[0, 1, 0], [2, 0, 0]], np.float32)
    values, sparsity = encode(dense, "DS")
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 3], "float32")
    k = sg.add_sparse_constant("k", [2, 3], values, sparsity)
    y = sg.add_tensor("y", [2, 3], "float32")
    sg.add_operator("ADD", [x, k], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    with pytest.raises(wick.WickError) as e:
        wick.load(w.finish())(np.zeros((2, 3), np.float32))
    msg = str(e.value)
    assert UNSUPPORTED in msg and "input 1 (k) is a sparse tensor" in msg, msg


def _malformed(mutate):
    dense = np.array([[0, 0, 5, 0], [6, 0, 0, 7]], np.float32)
    values, sparsity = encode(dense, "DS")
    values = mutate(values, sparsity)
    return densify_model(dense.shape, values, sparsity)


BROKEN = {
    "segment out of range": (
        lambda v, s: s["dim_metadata"][1]["array_segments"].__setitem__(1, 7) or v,
        r"\(k\)\.sparsity\.dim_metadata\[1\]\.array_segments\[1\] = 7 is out of range",
    ),
    "index beyond dense size": (
        lambda v, s: s["dim_metadata"][1]["array_indices"].__setitem__(2, 4) or v,
        r"\(k\)\.sparsity\.dim_metadata\[1\]\.array_indices\[2\] = 4 is beyond the level's size 4",
    ),
    "value count mismatch": (
        lambda v, s: v[:2],
        r"\(k\): constant buffer \d+ holds 8 bytes but the sparsity metadata stores 3 values",
    ),
    "segments end early": (
        lambda v, s: s["dim_metadata"][1]["array_segments"].__setitem__(2, 2) or v,
        r"array_segments ends at 2 but there are 3 indices",
    ),
    "segments decrease": (
        lambda v, s: (
            s["dim_metadata"][1].__setitem__("array_segments", np.array([0, 3, 2, 3], np.int32))
            or v
        ),
        r"array_segments has 4 entries; the level above has 2 positions",
    ),
    "traversal order out of range": (
        lambda v, s: s.__setitem__("traversal_order", [0, 2]) or v,
        r"\(k\)\.sparsity\.traversal_order\[1\] = 2",
    ),
    "dim_metadata count": (
        lambda v, s: s["dim_metadata"].pop() and v,
        r"\(k\)\.sparsity\.dim_metadata has 1 entries; rank 2 plus 0 blocked dims needs 2",
    ),
    "block_map dim out of range": (
        lambda v, s: (
            s.update(
                block_map=[5],
                traversal_order=[0, 1, 2],
                dim_metadata=s["dim_metadata"] + [{"format": "DENSE", "dense_size": 2}],
            )
            or v
        ),
        r"\(k\)\.sparsity\.block_map\[0\] = 5 is not a dim",
    ),
    "block size zero": (
        lambda v, s: (
            s.update(
                block_map=[1],
                traversal_order=[0, 1, 2],
                dim_metadata=s["dim_metadata"] + [{"format": "DENSE", "dense_size": 0}],
            )
            or v
        ),
        r"\(k\)\.sparsity\.dim_metadata\[2\]\.dense_size 0: a block size must be >= 1",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_malformed_sparsity_is_refused(case):
    mutate, pattern = BROKEN[case]
    data = _malformed(mutate)
    with pytest.raises(wick.WickError) as e:
        wick.load(data)()
    msg = str(e.value)
    assert MALFORMED in msg, msg
    assert re.search(pattern, msg), msg
