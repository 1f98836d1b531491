"""Seeded random graphs that mix spatial ops with permutes, reshapes, broadcasts, reductions,
slices and concatenations — the ops the layout passes move transposes through.  Every graph
must convert and match eager (single-op tolerance scaled by depth: 1e-5 * max(1, |ref|))."""

from __future__ import annotations

import random

import pytest
import torch
from torch import nn

from .util import check


class RandomNet(nn.Module):
    def __init__(self, seed: int):
        super().__init__()
        self.rng = random.Random(seed)
        self.convs = nn.ModuleList()
        self.plan = []
        c = 4
        for _ in range(8):
            kind = self.rng.choice(
                [
                    "conv",
                    "conv",
                    "relu",
                    "addc",
                    "mulb",
                    "perm",
                    "reshape",
                    "mean",
                    "cat",
                    "slice",
                    "softmax",
                    "pool",
                ]
            )
            if kind == "conv":
                k = self.rng.choice([1, 3])
                s = self.rng.choice([1, 1, 2])
                self.convs.append(
                    nn.Conv2d(c, c, k, stride=s, padding=k // 2, groups=self.rng.choice([1, c]))
                )
                self.plan.append(("conv", len(self.convs) - 1))
            else:
                self.plan.append((kind, self.rng.randrange(1 << 30)))

    def forward(self, x):
        for kind, arg in self.plan:
            r = random.Random(arg)
            n, c, h, w = x.shape
            if kind == "conv":
                x = self.convs[arg](x)
            elif kind == "relu":
                x = torch.relu(x)
            elif kind == "addc":
                shape = [r.choice([1, d]) for d in x.shape]
                numel = 1
                for d in shape:
                    numel *= d
                x = x + torch.linspace(-1, 1, numel).reshape(shape)
            elif kind == "mulb":
                x = x * torch.sigmoid(x.mean((2, 3), keepdim=True))
            elif kind == "perm":
                # a round trip through another layout (exported as permutes)
                p = r.choice([(0, 2, 3, 1), (0, 1, 3, 2), (0, 3, 1, 2)])
                inv = [p.index(i) for i in range(4)]
                x = (x.permute(*p) * 1.5).permute(*inv)
            elif kind == "reshape":
                x = x.reshape(n, c, h * w).transpose(1, 2)
                x = (x - x.mean(-1, keepdim=True)).transpose(1, 2).reshape(n, c, h, w)
            elif kind == "mean":
                x = x - x.mean(r.choice([1, 2, 3]), keepdim=True)
            elif kind == "cat":
                x = torch.cat([x, torch.tanh(x)], 1)[:, :c]
            elif kind == "slice":
                d = r.choice([2, 3])
                if x.shape[d] > 2:
                    x = torch.narrow(x, d, 1, x.shape[d] - 1)
            elif kind == "softmax":
                x = torch.softmax(x, r.choice([1, 3]))
            elif kind == "pool" and h >= 2 and w >= 2:
                x = nn.functional.max_pool2d(x, 2, ceil_mode=True)
        return x


@pytest.mark.parametrize("seed", range(12))
def test_random_layout_graph(seed):
    torch.manual_seed(seed)
    m = RandomNet(seed).eval()
    x = torch.randn(1, 4, 9, 8)
    check(m, x, tol=1e-5)
    check(m, x, tol=1e-5, channels_last_io=True)
