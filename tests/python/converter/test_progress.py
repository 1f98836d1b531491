"""Conversion progress on stderr (docs/converter.md): stage lines when asked (progress=True,
and `wick convert` by default), never with progress=False, and by default only once a
conversion has run longer than ``wick.convert.PROGRESS_AFTER_S`` — the tests move that
threshold instead of converting something slow."""

from __future__ import annotations

import importlib

import torch
from torch import nn

import wick
from wick import cli

convert_module = importlib.import_module("wick.convert")


def _convert(**kw):
    return wick.convert(nn.Linear(3, 2).eval(), (torch.randn(1, 3),), **kw)


def _stage_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wick.convert:")]


def test_progress_true_prints_every_stage(capsys):
    _convert(progress=True)
    lines = _stage_lines(capsys.readouterr().err)
    text = "\n".join(lines)
    for stage in ("export Linear", "import", "ATen passes", "lowering", "layout", "writing"):
        assert stage in text, text
    assert " s  done: " in lines[-1], lines[-1]
    assert "1 ops" in lines[-1] and "0 TRANSPOSE" in lines[-1], lines[-1]


def test_default_is_quiet_for_a_fast_conversion(capsys, monkeypatch):
    monkeypatch.setattr(convert_module, "PROGRESS_AFTER_S", 1e9)
    _convert()
    assert capsys.readouterr().err == ""


def test_default_speaks_up_when_slow(capsys, monkeypatch):
    monkeypatch.setattr(convert_module, "PROGRESS_AFTER_S", 0.0)  # "slow" from the start
    _convert()
    lines = _stage_lines(capsys.readouterr().err)
    assert any("export Linear" in x for x in lines), lines  # the earlier lines come too
    assert "done: " in lines[-1], lines


def test_progress_false_is_silent_even_when_slow(capsys, monkeypatch):
    monkeypatch.setattr(convert_module, "PROGRESS_AFTER_S", 0.0)
    _convert(progress=False)
    assert capsys.readouterr().err == ""


def test_several_signatures_label_their_stages(capsys):
    m = nn.Linear(3, 2).eval()
    wick.convert({"a": (m, (torch.randn(1, 3),)), "b": (m, (torch.randn(4, 3),))}, progress=True)
    text = capsys.readouterr().err
    assert "a: export Linear" in text and "b: lowering" in text, text


def test_cli_convert_shows_progress_unless_quiet(tmp_path, capsys):
    out = tmp_path / "tanh.tflite"
    assert cli.main(["convert", "torch.nn:Tanh", "--input", "2x3", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert _stage_lines(captured.err), captured.err
    assert out.exists() and "wrote" in captured.out
    assert cli.main(["convert", "torch.nn:Tanh", "--input", "2x3", "-o", str(out), "-q"]) == 0
    assert _stage_lines(capsys.readouterr().err) == []
