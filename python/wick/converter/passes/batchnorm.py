"""Fold inference batch-norm into the preceding convolution.

Invariant: no ``_native_batch_norm_legit_no_training`` node directly consumes the output of a
``convolution`` whose weight (and bias) are constant and whose output has no other user; such
pairs become one convolution with

    w' = w * gamma / sqrt(var + eps)      (per output channel)
    b' = (b - mean) * gamma / sqrt(var + eps) + beta

computed in float64 and rounded once to the weight dtype (a block of output channels at a
time, so the float64 temporaries stay small next to the weight).  Batch-norms that cannot be
folded are lowered on their own (as a multiply and an add).
"""

from __future__ import annotations

import torch

from ..ir import Graph

_BN = torch.ops.aten._native_batch_norm_legit_no_training.default
_CONV = torch.ops.aten.convolution.default
_BLOCK = 1 << 18  # weight elements per float64 block (2 MB)


def fold_batchnorm(g: Graph) -> int:
    folded = 0
    for bn in list(g.nodes):
        if bn.target is not _BN:
            continue
        x, gamma, beta, mean, var, _momentum, eps = bn.args
        conv = x.producer
        if conv is None or conv.target is not _CONV:
            continue
        if len(x.users) != 1 or g.is_output(x):
            continue
        if any(bn.outputs[i].users for i in (1, 2)):
            continue
        if not all(v is None or v.is_const for v in (gamma, beta, mean, var)):
            continue
        inp, w, b, stride, padding, dilation, transposed, out_pad, groups = conv.args
        if not w.is_const or (b is not None and not b.is_const):
            continue
        cout = w.shape[1] * groups if transposed else w.shape[0]
        wc = w.const
        g64 = gamma.const.double() if gamma is not None else torch.ones(cout, dtype=torch.float64)
        b64 = beta.const.double() if beta is not None else torch.zeros(cout, dtype=torch.float64)
        scale = g64 / torch.sqrt(var.const.double() + eps)
        if transposed:
            # weight (Cin, Cout/groups, k...): output channel o = group*(Cout/g) + j
            cin, cpg = wc.shape[0], wc.shape[1]
            s = scale.reshape(groups, 1, cpg).expand(groups, cin // groups, cpg).reshape(cin, cpg)
            s = s.reshape(cin, cpg, *([1] * (wc.dim() - 2)))
        else:
            s = scale.reshape(-1, *([1] * (wc.dim() - 1)))
        # half-precision models compute in float32 in the file: keep the folded values in fp32
        dt = torch.float32 if w.dtype in (torch.float16, torch.bfloat16) else w.dtype
        w_new = torch.empty(wc.shape, dtype=dt)
        step = max(1, _BLOCK // max(1, wc.numel() // max(1, wc.shape[0])))
        for i in range(0, wc.shape[0], step):  # dim 0 of w and s line up in both layouts
            w_new[i : i + step] = (wc[i : i + step].double() * s[i : i + step]).to(dt)
        b_old = b.const.double() if b is not None else torch.zeros(cout, dtype=torch.float64)
        b_new = (b_old - mean.const.double()) * scale + b64
        wv = g.constant(w.name + "_bnfold", w_new)
        bv = g.constant(bn.name + "_bias", b_new.to(dt))
        for v in (w, b):
            if v is not None:
                while conv in v.users:
                    v.users.remove(conv)
        conv.args = (inp, wv, bv, stride, padding, dilation, transposed, out_pad, groups)
        wv.users.append(conv)
        bv.users.append(conv)
        g.replace_uses(bn.outputs[0], x)
        g.remove_node(bn)
        folded += 1
    return folded
