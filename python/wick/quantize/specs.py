"""Quantization specs of wick's PT2E quantizer: what each activation precision means in TFLite.

Three activation precisions (``PRECISIONS``), chosen per op (quantizer.py, sensitivity.py):

* ``"int8"`` — int8 asymmetric per-tensor activations, TFLite's full-integer scheme;
* ``"int16"`` — TFLite's 16x8 mode: int16 symmetric per-tensor activations (zero point 0, as
  LiteRT's int16 kernels require) with the same int8 per-channel weights; LiteRT has 16x8 kernels
  for FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, BATCH_MATMUL, ADD, SUB, MUL, MEAN, SOFTMAX,
  LOGISTIC, TANH and the data-movement ops, not for GELU (spelled out at int16 as
  x * sigmoid(...), rewrite.py) or HARD_SWISH (``INT16_OPS``); RSQRT stays float in an int16
  layer (``FLOAT_AT_INT16``: LiteRT's int16 table is too coarse for a layer norm's variance);
* ``"float"`` — no annotation: the op stays float between DEQUANTIZE and QUANTIZE.

Weights are always int8 symmetric per output channel in [-127, 127].  Observers ignore
non-finite values (``FiniteMinMaxObserver``): an attention mask's ``-inf`` filler is clamped to
the lowest level of the scores' range by the quantize step instead of stretching the range.
"""

from __future__ import annotations

import torch
from torchao.quantization.pt2e.observer import (
    HistogramObserver,
    MinMaxObserver,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import FixedQParamsQuantizationSpec, QuantizationSpec

aten = torch.ops.aten
EPS = {"int8": 2**-12, "int16": 2**-20}  # the smallest scale an observer gives
PRECISIONS = ("int8", "int16", "float")
COST = {"int8": 1.0, "int16": 2.0, "float": 4.0}  # bytes per activation element

# ops whose int16 (16x8) TFLite kernel exists in LiteRT and in wick
INT16_OPS = {
    aten.conv1d.default,
    aten.conv2d.default,
    aten.conv1d.padding,
    aten.conv2d.padding,
    aten.linear.default,
    aten.add.Tensor,
    aten.add_.Tensor,
    aten.sub.Tensor,
    aten.sub_.Tensor,
    aten.mul.Tensor,
    aten.mul_.Tensor,
    aten.matmul.default,
    aten.bmm.default,
    aten.mean.dim,
    aten.mean.default,
    aten.softmax.int,
    aten._softmax.default,
    aten.sigmoid.default,
    aten.sigmoid_.default,
    aten.tanh.default,
    aten.tanh_.default,
    aten.relu.default,
    aten.relu_.default,
    aten.where.self,
    aten.gelu.default,  # spelled out in the tanh form at int16 (rewrite.py)
}


# ops that compute in float when their layer asks for int16: LiteRT's int16 RSQRT is a
# 513-entry table interpolated over the whole int16 input range, wrong by up to 10x for inputs
# below ~1/256 of the range (a layer norm's sum of squares spans 300x in BERT: tokens with and
# without the outlier channel); its [.., 1] per-row tensor costs nothing in float
FLOAT_AT_INT16 = {aten.rsqrt.default}


def effective_precision(target, precision: str) -> str:
    """The precision an op with ``target`` computes at when its layer asks for ``precision``:
    int16 becomes int8 where there is no 16x8 kernel, float for FLOAT_AT_INT16."""
    if precision == "int16":
        if target in FLOAT_AT_INT16:
            return "float"
        if target not in INT16_OPS:
            return "int8"
    return precision


def _finite(x: torch.Tensor) -> torch.Tensor:
    x = x.detach()
    if x.is_floating_point() and not torch.isfinite(x).all():
        x = x[torch.isfinite(x)]
    return x


class FiniteMinMaxObserver(MinMaxObserver):
    """TFLite's calibrator (running min and max) over the finite values only."""

    def forward(self, x_orig):
        x = _finite(x_orig)
        if x.numel():
            super().forward(x)
        return x_orig


class FiniteHistogramObserver(HistogramObserver):
    """torchao's histogram observer (MSE-optimal range) over the finite values only."""

    def forward(self, x_orig):
        x = _finite(x_orig)
        if x.numel():
            super().forward(x)
        return x_orig


def observer_class(observer: str):
    if observer == "minmax":
        return FiniteMinMaxObserver
    if observer == "histogram":
        return FiniteHistogramObserver
    raise ValueError(f"observer must be 'minmax' or 'histogram', not {observer!r}")


def activation_spec(precision: str, observer: str = "minmax") -> QuantizationSpec:
    ctr = observer_class(observer).with_args(eps=EPS.get(precision, EPS["int8"]))
    if precision == "int16":
        return QuantizationSpec(
            dtype=torch.int16,
            quant_min=-(2**15),
            quant_max=2**15 - 1,
            qscheme=torch.per_tensor_symmetric,
            observer_or_fake_quant_ctr=ctr,
        )
    if precision != "int8":
        raise ValueError(f"no activation spec for precision {precision!r}")
    return QuantizationSpec(
        dtype=torch.int8,
        quant_min=-128,
        quant_max=127,
        qscheme=torch.per_tensor_affine,
        observer_or_fake_quant_ctr=ctr,
    )


def weight_spec(axis: int) -> QuantizationSpec:
    return QuantizationSpec(
        dtype=torch.int8,
        quant_min=-127,
        quant_max=127,
        qscheme=torch.per_channel_symmetric,
        ch_axis=axis,
        observer_or_fake_quant_ctr=PerChannelMinMaxObserver.with_args(eps=EPS["int8"]),
    )


# the fixed output parameters of TFLite's LOGISTIC, SOFTMAX and TANH kernels
FIXED_INT8 = {"sigmoid": (1 / 256, -128), "softmax": (1 / 256, -128), "tanh": (1 / 128, 0)}
FIXED_INT16 = {"sigmoid": (1 / 32768, 0), "softmax": (1 / 32768, 0), "tanh": (1 / 32768, 0)}


def fixed_spec(kind: str, precision: str) -> FixedQParamsQuantizationSpec:
    if precision == "int16":
        scale, zp = FIXED_INT16[kind]
        return FixedQParamsQuantizationSpec(
            dtype=torch.int16,
            scale=scale,
            zero_point=zp,
            quant_min=-(2**15),
            quant_max=2**15 - 1,
            qscheme=torch.per_tensor_symmetric,
        )
    scale, zp = FIXED_INT8[kind]
    return FixedQParamsQuantizationSpec(
        dtype=torch.int8,
        scale=scale,
        zero_point=zp,
        quant_min=-128,
        quant_max=127,
        qscheme=torch.per_tensor_affine,
    )


def spec_precision(spec) -> str | None:
    """ "int8" / "int16" for a spec with a dtype, else None (shared specs)."""
    dt = getattr(spec, "dtype", None)
    return {torch.int8: "int8", torch.int16: "int16"}.get(dt)
