"""Per-op conversion tests: tiny modules, each exercising one ATen op (and its variants),
converted and compared against PyTorch eager on LiteRT — and on wick's runtime when it is built.

Tolerance: 1e-5 * max(1, max|ref|) for single fp32 ops (docs/testing.md).  A few composite lowerings
state a looser bound next to the case with the reason (e.g. erf's polynomial, 1.5e-7 abs).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import wick
from wick.tflite.binary_ops import arithmetic_ops, compare_ops
from wick.tflite.unary_ops import unary_ops

from .util import check, run_litert, to_numpy

torch.manual_seed(0)


class Fn(nn.Module):
    def __init__(self, fn, *mods):
        super().__init__()
        self.fn = fn
        self.mods = nn.ModuleList(mods)

    def forward(self, *xs):
        return self.fn(*xs)


def r(*shape, lo=-2.0, hi=2.0):
    return torch.rand(*shape) * (hi - lo) + lo


def pos(*shape):
    return torch.rand(*shape) * 2 + 0.1


def ints(*shape, lo=-5, hi=6, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


# (id, module, inputs, tolerance)
CASES = []


def case(name, fn, *inputs, tol=1e-5):
    mod = fn if isinstance(fn, nn.Module) else Fn(fn)
    CASES.append(pytest.param(mod, inputs, tol, id=name))


# ---- elementwise arithmetic ------------------------------------------------------------------
case("add_broadcast", lambda x, y: x + y, r(2, 3, 4), r(3, 4))
case("add_scalar", lambda x: x + 1.5, r(2, 3))
case("add_alpha", lambda x, y: torch.add(x, y, alpha=2.0), r(2, 3), r(2, 3))
case("sub", lambda x, y: x - y, r(4, 1, 5), r(3, 1))
case("rsub_scalar", lambda x: 2.0 - x, r(3, 4))
case("mul", lambda x, y: x * y, r(2, 3, 4), r(1, 3, 1))
case("mul_scalar", lambda x: x * -3.0, r(5))
case("div", lambda x, y: x / y, r(2, 3), pos(2, 3))
case("div_scalar", lambda x: x / 7.0, r(2, 3))
case("div_floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), r(3, 4) * 5, pos(3, 4))
case("div_trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), r(3, 4) * 5, pos(3, 4))
case(
    "floordiv_int", lambda x: torch.div(x, 3, rounding_mode="floor"), ints(3, 4, dtype=torch.int32)
)
case("remainder", lambda x: torch.remainder(x, 1.5), r(3, 4) * 4)
case("remainder_int", lambda x: x % 4, ints(10, dtype=torch.int32))
case("fmod", lambda x: torch.fmod(x, 1.5), r(3, 4) * 4)
case("pow2", lambda x: x**2, r(3, 4))
case("pow3", lambda x: x**3, r(3, 4))
case("pow_half", lambda x: x**0.5, pos(3, 4))
case("pow_frac", lambda x: x**1.7, pos(3, 4))
case("pow_tensor", lambda x, y: torch.pow(x, y), pos(3, 4), r(3, 4))
# the plain ones (maximum, minimum): one per arithmetic record of the runtime's
# src/kernels/reference/binary_ops.inc that names an ATen op, drawn from its DOMAIN
for _op in arithmetic_ops():
    if _op.aten is not None:
        _f, _mk = getattr(torch, _op.aten), pos if _op.domain == "POSITIVE" else r
        case(_op.aten, lambda x, y, f=_f: f(x, y), _mk(3, 4), _mk(4))
case(
    "int_add_mul", lambda x, y: x * 3 + y, ints(2, 5, dtype=torch.int32), ints(5, dtype=torch.int32)
)
case("int64_arith", lambda x: x * 2 - 7, ints(2, 5))

# ---- comparisons and logic ---------------------------------------------------------------------
# one per comparison and logical record of binary_ops.inc that names an ATen op
for _op in compare_ops(logical=False):
    if _op.aten is not None:
        _f = getattr(torch, _op.aten)
        case(f"{_op.aten}_tensor", lambda x, y, f=_f: f(x, y), r(3, 4).round(), r(4).round())
        case(f"{_op.aten}_scalar", lambda x, f=_f: f(x, 0.5), r(3, 4))
for _op in compare_ops(logical=True):
    if _op.aten is not None:
        _f = getattr(torch, _op.aten)
        case(_op.aten, lambda x, y, f=_f: f(x > 0, y > 0), r(3, 4), r(3, 4))
case("logical_xor", lambda x, y: torch.logical_xor(x > 0, y > 0), r(3, 4), r(3, 4))
case("logical_not", lambda x: torch.logical_not(x > 0), r(3, 4))
case("bitwise_not_bool", lambda x: ~(x > 0), r(3, 4))
case("where", lambda c, x, y: torch.where(c > 0, x, y), r(3, 1), r(3, 4), r(4))
case("where_scalar", lambda x: torch.where(x > 0, x, 0.0), r(3, 4))
case("masked_fill", lambda x: x.masked_fill(x < 0, -1e4), r(3, 4))

# ---- unary math ------------------------------------------------------------------------------------
# the plain ones (relu, sigmoid, ..., ceil, round): one per record of the runtime's
# src/kernels/reference/unary_ops.inc that names an ATen op, drawn from its DOMAIN
for _op in unary_ops():
    if _op.aten is not None:
        _f, _mk = getattr(torch, _op.aten), pos if _op.domain == "POSITIVE" else r
        case(_op.aten, lambda x, f=_f: f(x), _mk(3, 5))
# the composite ones
for _n, _f, _mk in [
    ("trunc", torch.trunc, r),
    ("sign", torch.sign, r),
    ("reciprocal", torch.reciprocal, pos),
    ("log1p", torch.log1p, pos),
    ("expm1", torch.expm1, r),
    ("log2", torch.log2, pos),
    ("log10", torch.log10, pos),
    ("tan", torch.tan, lambda *s: r(*s, lo=-1.2, hi=1.2)),
    ("atan", torch.atan, r),
    ("asin", torch.asin, lambda *s: r(*s, lo=-0.95, hi=0.95)),
    ("acos", torch.acos, lambda *s: r(*s, lo=-0.95, hi=0.95)),
    ("sinh", torch.sinh, r),
    ("cosh", torch.cosh, r),
    ("asinh", torch.asinh, r),
    ("acosh", torch.acosh, lambda *s: r(*s, lo=1.1, hi=3.0)),
    ("atanh", torch.atanh, lambda *s: r(*s, lo=-0.9, hi=0.9)),
]:
    case(_n, lambda x, f=_f: f(x), _mk(3, 5))
# erf: Abramowitz-Stegun polynomial, |error| <= 1.5e-7 absolute by construction
case("erf", torch.erf, r(3, 5), tol=5e-7)
case("atan2", torch.atan2, r(3, 4), r(3, 4))
case("atan2_broadcast", torch.atan2, r(2, 3, 4), r(4))
case(
    "bitwise_xor_int32",
    lambda x, y: x ^ y,
    ints(3, 4, dtype=torch.int32),
    ints(4, dtype=torch.int32),
)
case(
    "bitwise_xor_int8",
    lambda x, y: torch.bitwise_xor(x, y),
    ints(2, 5, dtype=torch.int8),
    ints(2, 5, dtype=torch.int8),
)
case("isnan", lambda x: torch.isnan(torch.log(x)), r(3, 4))
case("isinf", lambda x: torch.isinf(1.0 / x.round()), r(3, 4))

# ---- activations -------------------------------------------------------------------------------------
case("clamp", lambda x: torch.clamp(x, -0.5, 0.7), r(3, 4))
case("clamp_min", lambda x: torch.clamp(x, min=0.2), r(3, 4))
case("clamp_max", lambda x: torch.clamp(x, max=0.2), r(3, 4))
case("clamp_tensor", lambda x, lo, hi: torch.clamp(x, lo, hi), r(3, 4), r(4) - 1, r(4) + 1)
case("relu6", F.relu6, r(3, 4) * 4)
case("hardtanh", lambda x: F.hardtanh(x, -2.0, 3.0), r(3, 4) * 4)
case("hardtanh_n1_1", F.hardtanh, r(3, 4) * 2)
case("leaky_relu", lambda x: F.leaky_relu(x, 0.1), r(3, 4))
case("elu", F.elu, r(3, 4))
case("elu_alpha", lambda x: F.elu(x, 0.5), r(3, 4))
case("selu", F.selu, r(3, 4))
case("gelu", F.gelu, r(3, 4))
case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), r(3, 4))
case("silu", F.silu, r(3, 4))
case("hardswish", F.hardswish, r(3, 4) * 4)
case("hardsigmoid", F.hardsigmoid, r(3, 4) * 4)
case("softplus", F.softplus, r(3, 4) * 10)
case("mish", F.mish, r(3, 4))
case("prelu", nn.PReLU(4), r(2, 4, 3, 3))
case("prelu_single", nn.PReLU(), r(2, 4))

# ---- data movement -----------------------------------------------------------------------------------
case("view", lambda x: x.view(4, 6), r(2, 3, 4))
case("reshape_infer", lambda x: x.reshape(-1, 2), r(2, 3, 4))
case("flatten", lambda x: torch.flatten(x, 1), r(2, 3, 4))
case("permute", lambda x: x.permute(2, 0, 1), r(2, 3, 4))
case("transpose", lambda x: x.transpose(-1, -2), r(2, 3, 4))
case("expand", lambda x: x.expand(2, 3, 4), r(3, 1))
case("expand_lead", lambda x: x.expand(5, 3), r(3))
case("unsqueeze_squeeze", lambda x: x.unsqueeze(1).squeeze(-1), r(3, 1))
case("slice", lambda x: x[:, 1:3], r(3, 5))
case("slice_step", lambda x: x[:, ::2, 1:], r(2, 7, 4))
case("slice_neg", lambda x: x[..., -3:-1], r(2, 6))
case("select", lambda x: x[:, 2], r(3, 4, 5))
case("select_neg", lambda x: x[-1], r(3, 4))
case("narrow", lambda x: x.narrow(1, 1, 2), r(2, 5))
case("cat", lambda x, y: torch.cat([x, y], 1), r(2, 3), r(2, 4))
case("cat_neg", lambda x, y: torch.cat([x, y, x], -1), r(2, 3, 1), r(2, 3, 2))
case("stack", lambda x, y: torch.stack([x, y], 1), r(2, 3), r(2, 3))
case("split", lambda x: torch.split(x, [1, 3], dim=1), r(2, 4))
case("chunk", lambda x: torch.chunk(x, 3, dim=0), r(6, 2))
case("unbind", lambda x: torch.unbind(x, 1), r(2, 3))
case("pad_const", lambda x: F.pad(x, (1, 2, 0, 1)), r(1, 2, 3, 4))
case("pad_value", lambda x: F.pad(x, (1, 1), value=-2.0), r(2, 3))
case("pad_negative", lambda x: F.pad(x, (-1, 2)), r(2, 5))
case("pad_reflect", lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), r(1, 2, 4, 5))
case("pad_replicate", lambda x: F.pad(x, (2, 1, 1, 2), mode="replicate"), r(1, 2, 4, 5))
case("flip", lambda x: torch.flip(x, [0, 2]), r(2, 3, 4))
case("roll", lambda x: torch.roll(x, 2, 1), r(2, 5))
case("roll_flat", lambda x: torch.roll(x, 3), r(2, 5))
case("repeat", lambda x: x.repeat(2, 1, 3), r(3, 2))
case("to_int", lambda x: (x * 10).to(torch.int32), r(3, 4))
case("to_float", lambda x: x.to(torch.float32) * 0.5, ints(3, 4, dtype=torch.int32))
case("to_bool", lambda x: x.round().bool(), r(3, 4))
case("index_select", lambda x: torch.index_select(x, 1, torch.tensor([2, 0, 2])), r(3, 4))
case("index_tensor", lambda x, i: x[i], r(5, 3), torch.tensor([4, 0, 2]))
case("index_neg", lambda x: x[torch.tensor([-1, 0])], r(5, 3))
case("index_dim1", lambda x, i: x[:, i], r(3, 5, 2), torch.tensor([[1, 4], [0, 0]]))
case("index_two", lambda x, i, j: x[i, j], r(4, 5, 2), torch.tensor([1, 3]), torch.tensor([0, 4]))
case(
    "index_two_mid",
    lambda x, i, j: x[:, i, j],
    r(2, 4, 5, 3),
    torch.tensor([1, 3]),
    torch.tensor([0, 4]),
)
case("gather", lambda x, i: torch.gather(x, 1, i), r(3, 5), torch.randint(0, 5, (3, 2)))
case("embedding", nn.Embedding(10, 4), torch.tensor([[1, 2, 9], [0, 0, 5]]))
case("slice_scatter", lambda x, y: torch.slice_scatter(x, y, 1, 1, 3), r(2, 5), r(2, 2))
case("select_scatter", lambda x, y: torch.select_scatter(x, y, 0, 1), r(3, 4), r(4))
case("index_put", lambda x, v: x.index_put((torch.tensor([0, 2]),), v), r(4, 3), r(2, 3))
case(
    "scatter",
    lambda x, s: x.scatter(1, torch.tensor([[0, 2], [1, 3], [4, 0]]), s),
    r(3, 5),
    r(3, 4),
)
case("scatter_value", lambda x: x.scatter(0, torch.tensor([[2, 0, 1]]), -7.0), r(3, 3))
case(
    "scatter_add",
    lambda x, s: x.scatter_add(1, torch.tensor([[0, 0], [1, 3], [4, 4]]), s),
    r(3, 5),
    r(3, 2),
)
case(
    "scatter_reduce_sum",
    lambda x, s: x.scatter_reduce(0, torch.tensor([[0, 1], [0, 2]]), s, "sum"),
    r(3, 2),
    r(2, 2),
)
case("diagonal", lambda x: torch.diagonal(x), r(4, 4))
case("diagonal_offset", lambda x: torch.diagonal(x, 1, 0, 2), r(3, 2, 5))
case("diag_embed_neg", lambda x: torch.diagonal(x, -1), r(4, 3))
case("index_fill", lambda x: x.index_fill(1, torch.tensor([0, 2]), 3.0), r(2, 4))
case("new_full", lambda x: x + x.new_full((3, 4), 1.5), r(3, 4))
case("arange_add", lambda x: x + torch.arange(4, dtype=torch.float32), r(3, 4))
case("zeros_like", lambda x: torch.zeros_like(x) + x, r(3, 4))
case("full", lambda x: x + torch.full((3, 4), 2.5), r(3, 4))
case("contiguous_clone", lambda x: x.t().contiguous().clone(), r(3, 4))

# ---- reductions ----------------------------------------------------------------------------------------
case("sum", lambda x: x.sum(1), r(2, 3, 4))
case("sum_keep", lambda x: x.sum((0, 2), keepdim=True), r(2, 3, 4))
case("sum_all", lambda x: x.sum(), r(2, 3))
case("mean", lambda x: x.mean(-1), r(2, 3, 4))
case("mean_all", lambda x: x.mean(), r(2, 3))
case("amax", lambda x: x.amax(1), r(2, 3, 4))
case("amin_keep", lambda x: x.amin(-1, keepdim=True), r(2, 3, 4))
case("prod", lambda x: x.prod(1), r(2, 3, 4))
case("any", lambda x: (x > 1.5).any(1), r(3, 4))
case("all", lambda x: (x > -1.5).all(-1), r(3, 4))
case("argmax", lambda x: x.argmax(1), r(3, 4))
case("argmax_keep", lambda x: x.argmax(-1, keepdim=True), r(3, 4))
case("argmax_flat", lambda x: x.argmax(), r(3, 4))
case("argmin", lambda x: x.argmin(0), r(3, 4))
case("max_dim", lambda x: x.max(1), r(3, 4))
case("min_dim_keep", lambda x: torch.min(x, -1, keepdim=True), r(3, 4))
case("max_all", lambda x: x.max(), r(3, 4))
case("var", lambda x: x.var(1), r(3, 4))
case("var_unbiased0", lambda x: x.var(-1, unbiased=False, keepdim=True), r(3, 4))
case("std", lambda x: x.std(0), r(3, 4))
case("cumsum", lambda x: x.cumsum(1), r(3, 4))
case("cumsum_int", lambda x: x.cumsum(0), ints(5, 2, dtype=torch.int32))
case("topk", lambda x: torch.topk(x, 2, dim=1), r(3, 6))
case("topk_smallest_dim0", lambda x: torch.topk(x, 2, dim=0, largest=False), r(5, 3))
case("sort", lambda x: torch.sort(x, 1, descending=True), r(3, 6))
case("sort_asc", lambda x: torch.sort(x, -1).values, r(3, 6))
case("logsumexp", lambda x: torch.logsumexp(x, 1), r(3, 6))
case("norm", lambda x: torch.linalg.vector_norm(x, dim=-1), r(3, 6))
case("normalize", lambda x: F.normalize(x, dim=1), r(3, 6))

# ---- neural network ops --------------------------------------------------------------------------------
case("linear", nn.Linear(6, 4), r(3, 6))
case("linear_3d", nn.Linear(6, 4), r(2, 3, 6))
case("linear_nobias", nn.Linear(6, 4, bias=False), r(3, 6))
case("matmul_2d", lambda x, y: x @ y, r(3, 4), r(4, 5))
case("bmm", torch.bmm, r(2, 3, 4), r(2, 4, 5))
case("matmul_bcast", lambda x, y: x @ y, r(2, 2, 3, 4), r(4, 5))
case("matmul_bcast_b", lambda x, y: x @ y, r(2, 3, 4), r(1, 4, 5))
case("conv1d", nn.Conv1d(3, 4, 3, padding=1), r(2, 3, 10))
case("conv1d_stride", nn.Conv1d(3, 4, 5, stride=2), r(1, 3, 16))
case("conv2d", nn.Conv2d(3, 4, 3), r(1, 3, 8, 8))
case("conv2d_same_pad", nn.Conv2d(3, 4, 3, padding=1), r(2, 3, 7, 9))
case("conv2d_stride2_pad", nn.Conv2d(3, 4, 3, stride=2, padding=1), r(1, 3, 8, 8))
case("conv2d_stride2_odd", nn.Conv2d(3, 4, 3, stride=2, padding=1), r(1, 3, 9, 9))
case("conv2d_asym", nn.Conv2d(3, 4, (3, 5), stride=(1, 2), padding=(1, 2)), r(1, 3, 8, 9))
case("conv2d_dilation", nn.Conv2d(3, 4, 3, padding=2, dilation=2), r(1, 3, 9, 9))
case("conv2d_nobias", nn.Conv2d(3, 4, 1, bias=False), r(1, 3, 5, 5))
case("conv2d_padding_same", nn.Conv2d(3, 4, 4, padding="same"), r(1, 3, 8, 8))
case("conv2d_groups", nn.Conv2d(4, 6, 3, padding=1, groups=2), r(1, 4, 6, 6))
case("depthwise", nn.Conv2d(4, 4, 3, padding=1, groups=4), r(1, 4, 6, 6))
case("depthwise_mult", nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3), r(1, 3, 8, 8))
case("depthwise_dilated", nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=4), r(1, 4, 8, 8))
case("conv_transpose", nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1), r(1, 4, 5, 5))
case(
    "conv_transpose_outpad",
    nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
    r(1, 4, 5, 5),
)
case("conv_transpose_nopad", nn.ConvTranspose2d(2, 3, 3, stride=1), r(1, 2, 4, 4))
case("conv3d", nn.Conv3d(2, 3, 3, padding=1), r(1, 2, 4, 5, 6))
case("conv3d_stride", nn.Conv3d(2, 3, (1, 3, 3), stride=(1, 2, 2)), r(1, 2, 3, 7, 7))
case(
    "conv3d_dilation_same",
    nn.Conv3d(2, 4, 3, padding="same", dilation=(1, 2, 1), bias=False),
    r(2, 2, 4, 6, 5),
)
case("conv_transpose3d", nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1), r(1, 3, 3, 4, 2))
case(
    "conv_transpose3d_output_padding",
    nn.ConvTranspose3d(
        2, 3, (2, 3, 3), stride=(1, 2, 3), padding=(0, 1, 1), output_padding=(0, 1, 2)
    ),
    r(2, 2, 2, 3, 3),
)
case(
    "conv_transpose3d_dilation",
    nn.ConvTranspose3d(2, 2, 2, stride=1, dilation=2, bias=False),
    r(1, 2, 3, 3, 3),
)
case("maxpool", nn.MaxPool2d(2), r(1, 3, 8, 8))
case("maxpool_k3s2p1", nn.MaxPool2d(3, 2, 1), r(1, 3, 8, 8))
case("maxpool_ceil", nn.MaxPool2d(3, 2, ceil_mode=True), r(1, 3, 8, 8))
case("maxpool1d", nn.MaxPool1d(2), r(1, 3, 8))
case("avgpool", nn.AvgPool2d(2), r(1, 3, 8, 8))
case("avgpool_pad", nn.AvgPool2d(3, 2, 1), r(1, 3, 8, 8))
case("avgpool_pad_exclude", nn.AvgPool2d(3, 1, 1, count_include_pad=False), r(1, 3, 7, 7))
case("avgpool_pad_exclude_s2", nn.AvgPool2d(3, 2, 1, count_include_pad=False), r(1, 3, 8, 8))
case("avgpool_ceil", nn.AvgPool2d(3, 2, ceil_mode=True), r(1, 3, 8, 8))
case("avgpool1d", nn.AvgPool1d(2), r(1, 3, 8))
case("adaptive_avg_1", nn.AdaptiveAvgPool2d(1), r(2, 3, 5, 7))
case("maxpool3d", nn.MaxPool3d(2), r(1, 2, 4, 6, 6))
case("avgpool3d", nn.AvgPool3d((1, 2, 2), stride=(1, 2, 1)), r(1, 2, 3, 6, 5))
case("adaptive_avg3d_1", nn.AdaptiveAvgPool3d(1), r(1, 2, 3, 4, 5))
case("cdist", lambda a, b: torch.cdist(a, b), r(2, 4, 3), r(2, 5, 3))
case("cdist_p1", lambda a, b: torch.cdist(a, b, p=1.0), r(4, 3), r(5, 3))
case("pdist", lambda a: torch.pdist(a), r(5, 3))
case(
    "embedding_bag_mean", nn.EmbeddingBag(10, 4, mode="mean"), torch.tensor([[1, 2, 9], [0, 0, 5]])
)
case("embedding_bag_sum", nn.EmbeddingBag(10, 4, mode="sum"), torch.tensor([[1, 2], [3, 9]]))
case("adaptive_avg_div", nn.AdaptiveAvgPool2d((2, 3)), r(1, 3, 4, 6))
case("adaptive_avg_nondiv", nn.AdaptiveAvgPool2d((3, 2)), r(1, 3, 7, 5))
case("upsample_nearest", nn.Upsample(scale_factor=2), r(1, 3, 4, 5))
case("upsample_nearest_size", lambda x: F.interpolate(x, size=(7, 9)), r(1, 3, 4, 5))
case("upsample_bilinear", nn.Upsample(scale_factor=2, mode="bilinear"), r(1, 3, 4, 5))
case(
    "upsample_bilinear_ac",
    nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
    r(1, 3, 4, 5),
)
case(
    "upsample_bilinear_size",
    lambda x: F.interpolate(x, size=(7, 3), mode="bilinear"),
    r(1, 3, 4, 5),
)
case(
    "upsample_bilinear_frac",
    lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
    r(1, 3, 4, 5),
)
case("pixel_shuffle", nn.PixelShuffle(2), r(1, 8, 3, 4))
case(
    "grid_sample",
    lambda x, g: F.grid_sample(x, g, align_corners=False),
    r(1, 3, 4, 5),
    r(1, 3, 4, 2, lo=-1.2, hi=1.2),
)
case(
    "grid_sample_border_ac",
    lambda x, g: F.grid_sample(x, g, padding_mode="border", align_corners=True),
    r(2, 3, 4, 5),
    r(2, 3, 4, 2, lo=-1.2, hi=1.2),
)
case(
    "grid_sample_nearest",
    lambda x, g: F.grid_sample(x, g, mode="nearest"),
    r(1, 3, 4, 5),
    r(1, 3, 4, 2, lo=-1.2, hi=1.2),
)
case("upsample_bicubic", lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), r(1, 3, 4, 5))
case(
    "upsample_nearest_exact",
    lambda x: F.interpolate(x, size=(7, 9), mode="nearest-exact"),
    r(1, 3, 4, 5),
)
case("interp_area", lambda x: F.interpolate(x, size=(3, 2), mode="area"), r(1, 3, 4, 5))
case("interp_linear1d", lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), r(1, 3, 5))
case("pixel_unshuffle", nn.PixelUnshuffle(2), r(1, 2, 4, 6))
case("layer_norm", nn.LayerNorm(6), r(2, 3, 6))
case("layer_norm_2d", nn.LayerNorm([3, 6], elementwise_affine=False), r(2, 3, 6))
case("group_norm", nn.GroupNorm(2, 4), r(2, 4, 3, 3))
case("instance_norm", nn.InstanceNorm2d(3, affine=True), r(2, 3, 4, 4))
case("batch_norm_1d", nn.BatchNorm1d(4), r(2, 4, 5))
case("batch_norm_2d_alone", nn.BatchNorm2d(3), r(2, 3, 4, 4))
case("softmax", lambda x: F.softmax(x, -1), r(2, 3, 5))
case("softmax_dim1", lambda x: F.softmax(x, 1), r(2, 3, 5))
case("log_softmax", lambda x: F.log_softmax(x, -1), r(2, 5))
case(
    "sdpa",
    lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
    r(1, 2, 4, 8),
    r(1, 2, 5, 8),
    r(1, 2, 5, 8),
)
case(
    "sdpa_causal",
    lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    r(1, 2, 4, 8),
    r(1, 2, 4, 8),
    r(1, 2, 4, 8),
)
case("mha", nn.MultiheadAttention(8, 2, batch_first=True), r(1, 4, 8), r(1, 4, 8), r(1, 4, 8))
case("dropout_eval", nn.Dropout(0.5), r(3, 4))
case(
    "flatten_fc",
    nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(4 * 3 * 2, 5)),
    r(2, 3, 5, 4),
)


class _Cond(nn.Module):
    """torch.cond -> IF with the branches as subgraphs (a conv inside one branch)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return torch.cond(
            x.mean() > 0, lambda t: torch.relu(self.conv(t)), lambda t: t * -2.0, (x,)
        )


def test_cond_both_branches():
    m = _Cond().eval()
    model, _ = check(m, torch.rand(1, 3, 6, 6) + 0.1)  # true branch at export
    assert "IF" in model.op_counts
    for sign in (1.0, -1.0):
        x = (torch.rand(1, 3, 6, 6) + 0.1) * sign
        ref = m(x).detach().numpy()
        got = run_litert(model.tflite_bytes, [x.numpy()], [s.name for s in model.inputs])[0]
        np.testing.assert_allclose(got, ref, atol=1e-5)
        if _wick_runtime() is not None:
            np.testing.assert_allclose(model.run(x.numpy())[0], ref, atol=1e-5)


class _While(nn.Module):
    """torch while_loop -> WHILE (cond/body subgraphs; the runtime bound n is a model input)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, n):
        from torch._higher_order_ops.while_loop import while_loop

        return while_loop(
            lambda i, y: i < n.sum(),
            lambda i, y: (i + 1, torch.tanh(self.lin(y))),
            (torch.zeros((), dtype=torch.int64), x),
        )


def test_while_loop():
    m = _While().eval()
    model = wick.convert(m, (torch.randn(2, 4), torch.tensor([3])))
    assert "WHILE" in model.op_counts
    for k in (0, 1, 4):
        x, n = torch.randn(2, 4), torch.tensor([k])
        got = run_litert(model.tflite_bytes, [x.numpy(), n.numpy()], [s.name for s in model.inputs])
        ref = m(x, n)
        assert int(got[0]) == k
        np.testing.assert_allclose(got[1], ref[1].detach().numpy(), atol=1e-5)
        if _wick_runtime() is not None:
            mine = model.run(x.numpy(), n.numpy())
            assert int(mine[0]) == k
            np.testing.assert_allclose(mine[1], ref[1].detach().numpy(), atol=1e-5)


class _Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(6, 8, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


case("lstm", _Recurrent(nn.LSTM), r(2, 4, 6))
case("gru", _Recurrent(nn.GRU), r(2, 4, 6))
case("rnn_tanh", _Recurrent(nn.RNN), r(2, 4, 6))


def _args(inputs):
    return tuple(x.clone() for x in inputs)


def _bn_init(mod):
    if getattr(mod, "_bn_initialized", False):
        return mod  # keep the statistics the cached conversion was made with
    mod._bn_initialized = True
    for m in mod.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-1, 1)
    return mod


_CONVERTED: dict[int, object] = {}  # id(module) -> wick.Model, shared by the LiteRT and wick tests


@pytest.mark.parametrize("mod,inputs,tol", CASES)
def test_op_litert(mod, inputs, tol):
    model, _ = check(_bn_init(mod), *_args(inputs), tol=tol)
    _CONVERTED[id(mod)] = model


def _wick_runtime():
    try:
        from wick import runtime

        runtime.library_path()
        return runtime
    except Exception:
        return None


@pytest.mark.parametrize("mod,inputs,tol", CASES)
def test_op_wick(mod, inputs, tol):
    runtime = _wick_runtime()
    if runtime is None:
        pytest.skip("wick runtime library not built")
    import wick

    mod = _bn_init(mod).eval()
    args = _args(inputs)
    model = _CONVERTED.get(id(mod)) or wick.convert(mod, args)
    with torch.no_grad():
        from .util import flat_outputs

        ref = [to_numpy(t) for t in flat_outputs(mod(*args))]
    got = model.run(*[to_numpy(a) for a in args])  # (a file wick refuses is a failure)
    for g, rf in zip(got, ref, strict=True):
        assert g.shape == rf.shape
        if not np.issubdtype(rf.dtype, np.floating):
            np.testing.assert_array_equal(g.astype(rf.dtype), rf)
        else:
            scale = max(1.0, float(np.abs(rf).max()) if rf.size else 1.0)
            assert float(np.abs(g - rf).max()) <= tol * scale


def test_litert_helper_roundtrip():
    # sanity of the test helper itself: a two-input, two-output model keeps I/O order
    model, _ = check(Fn(lambda x, y: (x - y, x * 2)), r(2, 3), r(2, 3))
    a, b = r(2, 3), r(2, 3)
    out = run_litert(model.tflite_bytes, [a.numpy(), b.numpy()], [s.name for s in model.inputs])
    np.testing.assert_allclose(out[0], (a - b).numpy(), rtol=1e-6)
    np.testing.assert_allclose(out[1], (a * 2).numpy(), rtol=1e-6)


def test_emitted_ops_exist_in_runtime():
    """Every op in the files of CASES (the conversions the tests above made are reused; any case
    they did not run is converted here) is a builtin of the op-facts table (wick.tflite.ops) and
    one the runtime registers (src/ops/op_table.inc): the converter never writes an op wick
    cannot run."""
    import re
    from pathlib import Path

    import wick
    from wick.tflite.ops import BY_NAME

    used = set()
    for case_param in CASES:
        mod, inputs, _ = case_param.values
        key = id(_bn_init(mod))
        if key not in _CONVERTED:
            _CONVERTED[key] = wick.convert(mod.eval(), _args(inputs))
        used |= set(_CONVERTED[key].op_counts)
    assert used <= set(BY_NAME), sorted(used - set(BY_NAME))
    table = Path(__file__).resolve().parents[3] / "src" / "ops" / "op_table.inc"
    runtime_ops = set(re.findall(r"^WICK_OP\((\w+),", table.read_text(), re.M))
    missing = sorted(used - runtime_ops)
    assert not missing, f"the converter emitted ops the wick runtime lacks: {missing}"
