"""Calling a wick.Model returns what the module returns: torch tensors in the module's output
structure, non-tensor leaves (None, numbers) back in place; the file holds only the tensors
(LiteRT sees exactly those), and ``Model.run`` gives them as a flat numpy list."""

import numpy as np
import torch
from torch import nn

import wick

from .util import run_litert


class Nested(nn.Module):
    def forward(self, x):
        return {"a": x * 2, "b": (x + 1, None), "n": 3, "c": [x.sum(-1)]}


class FeaturesAndNone(nn.Module):  # wav2vec2-style (features, lengths=None)
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(5, 4)

    def forward(self, x):
        return self.proj(x), None


def test_nested_structure_with_constants_matches_eager():
    x = torch.randn(2, 5)
    m = Nested().eval()
    model = wick.convert(m, (x,))
    got, ref = model(x), m(x)
    assert set(got) == set(ref) and got["n"] == 3 and got["b"][1] is None
    for g, r in ((got["a"], ref["a"]), (got["b"][0], ref["b"][0]), (got["c"][0], ref["c"][0])):
        assert isinstance(g, torch.Tensor) and g.shape == r.shape
        torch.testing.assert_close(g, r, rtol=0, atol=1e-6)
    flat = model.run(x.numpy())
    assert len(flat) == len(model.outputs) == 3  # only the tensors are in the file
    lite = run_litert(model.tflite_bytes, [x.numpy()], [s.name for s in model.inputs])
    for a, b in zip(flat, lite, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_single_tensor_and_none_leaf():
    x = torch.randn(3, 5)
    m = FeaturesAndNone().eval()
    model = wick.convert(m, (x,))
    y, none = model(x)
    assert none is None
    with torch.no_grad():
        torch.testing.assert_close(y, m(x)[0], rtol=1e-5, atol=1e-5)
    single = wick.convert(nn.Linear(5, 2).eval(), (x,))
    out = single(x)
    assert isinstance(out, torch.Tensor) and out.shape == (3, 2)
