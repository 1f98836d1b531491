"""Conversion errors name the ATen op, the user's source line and a hint; training-mode modules
convert in eval mode with a warning; nothing unsupported silently produces a file."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

import wick


class FFT(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.fft.rfft(y)  # no TFLite builtin: must fail here


class MaskIndex(nn.Module):
    def forward(self, x):
        return x[x > 0]


def test_unsupported_op_names_op_line_and_hint():
    with pytest.raises(wick.ConversionError) as ei:
        wick.convert(FFT().eval(), (torch.randn(4, 8),))
    e = ei.value
    assert e.op == "aten._fft_r2c.default"
    assert e.source is not None and "test_errors.py" in e.source and "rfft" in e.source
    assert e.hint
    assert "aten._fft_r2c.default" in str(e) and "test_errors.py" in str(e)


def test_data_dependent_shape_is_refused():
    with pytest.raises(wick.ConversionError) as ei:
        wick.convert(MaskIndex().eval(), (torch.randn(4, 8),))
    assert "x[x > 0]" in ei.value.source
    assert "torch.where" in ei.value.hint


def test_training_mode_warns_and_converts_eval():
    m = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5))
    m.train()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model = wick.convert(m, (torch.randn(2, 3),))
    assert any("training mode" in str(x.message) for x in w)
    assert m.training  # the caller's module is left as it was
    assert model.op_counts == {"FULLY_CONNECTED": 1}


def test_not_a_module():
    with pytest.raises(wick.ConversionError):
        wick.convert(lambda x: x + 1, (torch.randn(2),))


def test_model_object_api(tmp_path):
    model = wick.convert(nn.Linear(3, 2).eval(), (torch.randn(1, 3),))
    path = tmp_path / "m.tflite"
    model.export(path)
    data = path.read_bytes()
    assert data == model.tflite_bytes and data[4:8] == b"TFL3"
    text = model.summary()
    assert "FULLY_CONNECTED" in text and "input" in text
    assert model.inputs[0].shape == (1, 3) and model.outputs[0].dtype == "float32"
    assert callable(wick.convert)
    import wick.convert as convert_module  # the module is callable too

    assert convert_module(nn.ReLU(), (torch.randn(2),)).op_counts == {"RELU": 1}


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x):
        self.steps.add_(1)
        return x + self.steps


def test_buffer_mutation_is_refused():
    with pytest.raises(wick.ConversionError) as ei:
        wick.convert(Counter().eval(), (torch.randn(3),))
    assert "stateless" in str(ei.value) and "input" in ei.value.hint


def test_debug_dir_writes_stage_view(tmp_path):
    pytest.importorskip("wick.graph")
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()).eval()
    wick.convert(net, (torch.randn(1, 3, 8, 8),), debug_dir=tmp_path / "dbg")
    stages = (tmp_path / "dbg" / "stages.txt").read_text()
    for name in ("exported", "imported", "lowered", "after layout", "final"):
        assert name in stages
