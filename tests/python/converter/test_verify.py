"""wick.convert's self-check (python/wick/verify.py): the written file is run on wick's runtime
and compared with PyTorch on the sample inputs — a file the runtime refuses raises, a file that
computes something else warns with the worst output and the culprit's side."""

from __future__ import annotations

import sys
import warnings

import pytest
import torch

import wick
from wick.runtime import WickError

_CALLS = [0]


class Drift(torch.nn.Module):
    """Python state (a global call count) baked in at export: the self-check's eager call
    computes something else than the file."""

    def forward(self, x):
        _CALLS[0] += 1
        return x * float(_CALLS[0])


def test_agreeing_file_converts_without_a_warning():
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", wick.VerificationWarning)
        wick.convert(m.eval(), (torch.randn(2, 8),))


def test_a_file_that_computes_something_else_warns_and_names_the_side():
    with pytest.warns(wick.VerificationWarning) as rec:
        model = wick.convert(Drift().eval(), (torch.randn(3, 5),))
    msg = str(rec[0].message)
    assert "output 0" in msg and "max |error|" in msg, msg
    assert "the conversion computes something else" in msg, msg
    assert model.run(torch.ones(3, 5).numpy())[0].max() == 1.0  # (the file is still returned)


def test_verify_false_skips_the_check():
    with warnings.catch_warnings():
        warnings.simplefilter("error", wick.VerificationWarning)
        wick.convert(Drift().eval(), (torch.randn(3, 5),), verify=False)


def test_a_file_the_runtime_refuses_raises(monkeypatch):
    import wick.convert  # noqa: F401  (the module, for its Signature class)

    convert_module = sys.modules["wick.convert"]

    def refuse(self, *inputs):
        raise WickError(1, "unsupported operator: FAKE (operator 0)")

    monkeypatch.setattr(convert_module.Signature, "run", refuse)
    with pytest.raises(wick.ConversionError, match="does not run on wick's runtime"):
        wick.convert(torch.nn.ReLU().eval(), (torch.randn(4),))
