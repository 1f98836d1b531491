"""torch.cat whose inputs are all empty along the concatenation axis (streaming models such as
torchaudio's Emformer build empty memory/right-context tensors): the result is an empty
constant, and the graph around it converts and matches eager on LiteRT and on wick."""

import numpy as np
import pytest
import torch
from torch import nn

from .util import check, wick_runtime_available


class EmptyThenFull(nn.Module):
    def forward(self, x):
        empty = torch.cat([x[:, :0], x[:, :0] * 2], dim=1)  # (2, 0, 5)
        return torch.cat([empty, x, empty], dim=1) * 3, empty.sum(dim=1) + 1


def test_cat_of_empty_tensors_converts_and_matches():
    x = torch.randn(2, 4, 5)
    model, _ = check(EmptyThenFull(), x)  # LiteRT vs eager
    if not wick_runtime_available():
        pytest.skip("wick runtime not built")
    with torch.no_grad():
        ref = [r.numpy() for r in EmptyThenFull()(x)]
    got = model.run(x.numpy())
    assert len(got) == len(ref)
    for g, r in zip(got, ref, strict=True):
        assert g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=0, atol=1e-6)
