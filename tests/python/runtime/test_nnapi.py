"""The NNAPI delegate (docs/nnapi.md) against the test NNAPI implementation
(tests/nnapi/, libwick_test_nnapi.so, built with the C tests next to libwick.so).

One written model per operator form, run at feature levels 27, 28, 29, 30, 31 and 1000008
(the test runtime's level: $WICK_TEST_NNAPI_FEATURE_LEVEL), through the Python binding:

* the operator runs on NNAPI exactly from the level whose NDK reference has its form (the
  types, parameters and quantization rules), and below that it stays on the CPU with a reason
  naming the level (or the rule);
* outputs equal the CPU-only run's within 1e-5 * max(1, |ref|) for float (the test runtime
  sums in its own order) and bit for bit for 8-bit (its integer arithmetic is TFLite's);
* the test runtime rejected nothing the delegate built and saw no call of a function its
  level lacks (its counters, read through ctypes: the runtime_counters fixture of conftest.py).

Also: no library (every operator declined with the reason, outputs bit-identical), injected
failures through $WICK_TEST_NNAPI_FAIL (bit-identical to CPU-only), the level cap, and the
CLI (--delegate nnapi, --nnapi-feature-level). Whole models (the shared set and the corpus's
MobileNetV2) are the C test tests/nnapi/test_nnapi_delegate.c.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wick
from tests.python.oracles.litert import run_litert
from wick.runtime import library_path
from wick.tflite.writer import ModelWriter

LEVELS = [27, 28, 29, 30, 31, 1000008]


def _test_library() -> Path | None:
    env = os.environ.get("WICK_TEST_NNAPI_LIBRARY")
    if env:
        return Path(env)
    p = library_path().parent / "tests" / "nnapi" / "libwick_test_nnapi.so"
    return p if p.exists() else None


LIB = _test_library()
pytestmark = pytest.mark.skipif(
    LIB is None,
    reason="no libwick_test_nnapi.so next to libwick.so (build the C tests: cmake --build build)",
)


# ---------------------------------------------------------------- written models


def _q(scale, zp):
    return dict(scale=[scale], zero_point=[zp])


class Case:
    """A one- or two-operator model, its inputs, and the first level NNAPI takes it at
    (None: never), with a substring of the reason below it."""

    def __init__(self, name, build, since, why=None):
        self.name, self.build, self.since, self.why = name, build, since, why


def _conv(
    dtype,
    *,
    depthwise=False,
    padding="SAME",
    stride=1,
    dilation=1,
    act="RELU6",
    per_channel=False,
    bias=True,
):
    def build():
        rng = np.random.default_rng(7)
        w = ModelWriter()
        sg = w.add_subgraph(name="main")
        cin, cout = 4, 8 if not depthwise else 8
        k = 3
        if dtype == "float32":
            qi = qo = qf = None
        elif dtype == "uint8":
            qi, qo, qf = _q(0.05, 120), _q(0.2, 110), _q(0.01, 130)
        else:
            qi, qo = _q(0.05, -3), _q(0.2, 5)
            if per_channel:
                qf = dict(
                    scale=list(rng.uniform(0.005, 0.02, cout)),
                    zero_point=[0] * cout,
                    quantized_dimension=3 if depthwise else 0,
                )
            else:
                qf = _q(0.01, 0)
        x = sg.add_tensor("x", [1, 9, 9, cin], dtype, quant=qi)
        fshape = (1, k, k, cout) if depthwise else (cout, k, k, cin)
        if dtype == "float32":
            f = sg.add_constant("f", rng.standard_normal(fshape).astype(np.float32) * 0.3)
            b = sg.add_constant("b", rng.standard_normal(cout).astype(np.float32))
        else:
            info = np.iinfo(np.dtype(dtype))
            fv = rng.integers(info.min, info.max, fshape).astype(dtype)
            f = sg.add_constant("f", fv, quant=qf)
            fs = np.asarray(qf["scale"], dtype=np.float32)
            bs = (np.float32(qi["scale"][0]) * fs).astype(np.float32)
            bq = dict(
                scale=[float(s) for s in bs] if per_channel else [float(bs[0])],
                zero_point=[0] * (cout if per_channel else 1),
            )
            b = sg.add_constant("b", rng.integers(-500, 500, cout).astype(np.int32), quant=bq)
        eff = (k - 1) * dilation + 1
        o = -(-9 // stride) if padding == "SAME" else (9 - eff) // stride + 1
        y = sg.add_tensor("y", [1, o, o, cout], dtype, quant=qo)
        opts = dict(
            padding=padding,
            stride_w=stride,
            stride_h=stride,
            fused_activation_function=act,
            dilation_w_factor=dilation,
            dilation_h_factor=dilation,
        )
        if depthwise:
            opts["depth_multiplier"] = cout // cin
        sg.add_operator(
            "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D",
            [x, f, b if bias else None],
            [y],
            options=opts,
        )
        sg.set_inputs([x])
        sg.set_outputs([y])
        return w.finish()

    return build


def _single(op, in_specs, out_spec, options=None, consts=()):
    """One operator on inputs [(shape, dtype, quant)] (and constant arrays after them)."""

    def build():
        w = ModelWriter()
        sg = w.add_subgraph(name="main")
        ins = [sg.add_tensor(f"x{i}", s, d, quant=q) for i, (s, d, q) in enumerate(in_specs)]
        cs = [sg.add_constant(f"c{i}", np.asarray(c)) for i, c in enumerate(consts)]
        shape, dtype, quant = out_spec
        y = sg.add_tensor("y", shape, dtype, quant=quant)
        sg.add_operator(op, ins + cs, [y], options=options)
        sg.set_inputs(ins)
        sg.set_outputs([y])
        return w.finish()

    return build


F = "float32"
U8q, I8q = _q(0.05, 128), _q(0.05, 0)


def _prelu(dtype, x_shape, alpha, qx=None, qa=None, qy=None, alpha_input=False):
    """PRELU of an input of x_shape by `alpha` (an array: a constant, or with alpha_input a second
    graph input of its shape), quantized by qx / qa / qy."""

    def build():
        w = ModelWriter()
        sg = w.add_subgraph(name="main")
        x = sg.add_tensor("x", x_shape, dtype, quant=qx)
        a_arr = np.asarray(alpha).astype(dtype)
        if alpha_input:
            a = sg.add_tensor("alpha", list(a_arr.shape), dtype, quant=qa)
        else:
            a = sg.add_constant("alpha", a_arr, quant=qa)
        y = sg.add_tensor("y", x_shape, dtype, quant=qy)
        sg.add_operator("PRELU", [x, a], [y])
        sg.set_inputs([x, a] if alpha_input else [x])
        sg.set_outputs([y])
        return w.finish()

    return build


def _strided_slice(dtype, x_shape, y_shape, begin, end, strides, q=None, **masks):
    """STRIDED_SLICE of an input of x_shape with constant begin / end / strides and the masks."""

    def build():
        w = ModelWriter()
        sg = w.add_subgraph(name="main")
        x = sg.add_tensor("x", x_shape, dtype, quant=q)
        consts = [sg.add_constant(n, np.array(v, np.int32)) for n, v in
                  (("begin", begin), ("end", end), ("strides", strides))]  # fmt: skip
        y = sg.add_tensor("y", y_shape, dtype, quant=q)
        sg.add_operator("STRIDED_SLICE", [x, *consts], [y], options=dict(masks))
        sg.set_inputs([x])
        sg.set_outputs([y])
        return w.finish()

    return build


_ALPHA3 = np.array([[[0.25, -0.5, 1.5]]], np.float32)  # [1, 1, 3]: per channel, as Keras writes it
_ALPHA3_U8 = np.array([[[140, 90, 200]]], np.uint8)
_ALPHA3_I8 = np.array([[[12, -38, 72]]], np.int8)
# PRELU, STRIDED_SLICE, float16 inputs: also checked against LiteRT
# (test_new_operators_match_litert)
LITERT_CASES = [
    Case("prelu_f32_channels", _prelu(F, [1, 4, 5, 3], _ALPHA3), 29, "level 29"),
    Case("prelu_f32_whole_alpha", _prelu(F, [2, 6], np.linspace(-1, 1, 12).reshape(2, 6)), 29),
    Case(
        "prelu_f32_runtime_alpha",
        _prelu(F, [2, 3, 4], np.zeros((3, 1), np.float32), alpha_input=True),
        29,
    ),
    Case(
        "prelu_uint8",
        _prelu("uint8", [1, 4, 5, 3], _ALPHA3_U8, _q(0.05, 128), _q(0.01, 128), _q(0.04, 100)),
        29,
        "level 29",
    ),
    Case(
        "prelu_int8",
        _prelu("int8", [1, 4, 5, 3], _ALPHA3_I8, _q(0.05, -3), _q(0.02, 0), _q(0.06, 10)),
        30,
        "level 30",
    ),
    Case(  # scales where TFLite's float-formed multiplier and NNAPI's double-formed one give
        # different outputs for 3 of the input / alpha pairs a run-time alpha allows
        "prelu_uint8_requantization_differs",
        _prelu(
            "uint8",
            [2, 16],
            np.zeros((2, 16), np.uint8),
            _q(0.053706832230091095, 174),
            _q(0.1962103694677353, 91),
            _q(0.1434810757637024, 5),
            alpha_input=True,
        ),
        None,
        "requantization differs by a step",
    ),
    # a run-time float16 tensor to float32 (29: NNAPI's CAST from TENSOR_FLOAT16, exact)
    Case(
        "dequantize_f16_to_f32",
        _single("DEQUANTIZE", [([3, 7], "float16", None)], ([3, 7], F, None)),
        29,
        "level 29",
    ),
    Case(
        "cast_f16_to_f32",
        _single(
            "CAST",
            [([2, 3, 4], "float16", None)],
            ([2, 3, 4], F, None),
            dict(in_data_type="FLOAT16", out_data_type="FLOAT32"),
        ),
        29,
        "level 29",
    ),
    Case(
        "strided_slice_f32_strides",
        _strided_slice(F, [2, 7, 9, 3], [2, 3, 3, 3], [0, 1, 0, 0], [2, 7, 9, 3], [1, 2, 3, 1]),
        27,
    ),
    Case(
        "strided_slice_f32_negative",  # negative indices, a reversed axis reaching element 0
        _strided_slice(F, [4, 9], [2, 5], [-3, -1], [-1, -10], [1, -2]),
        27,
    ),
    Case(
        "strided_slice_f32_masks_shrink",  # x[:, 2, ::-3] of [3, 5, 8]: the shrunk axis dropped
        _strided_slice(
            F,
            [3, 5, 8],
            [3, 3],
            [5, 2, 0],
            [0, 3, 0],
            [1, 1, -3],
            begin_mask=0b101,
            end_mask=0b101,
            shrink_axis_mask=0b010,
        ),  # fmt: skip
        27,
    ),
    Case(
        "strided_slice_f32_all_shrunk",  # x[1, 2]: a scalar
        _strided_slice(F, [3, 4], [], [1, 2], [2, 3], [1, 1], shrink_axis_mask=3),
        27,
    ),
    Case(
        "strided_slice_f32_short_spec",  # fewer entries than axes: the rest whole
        _strided_slice(F, [4, 6, 2], [2, 6, 2], [1], [100], [2]),
        27,
    ),
    Case(
        "strided_slice_uint8",
        _strided_slice("uint8", [2, 8, 3], [2, 4, 3], [0, 1, 0], [2, 8, 3], [1, 2, 1], q=U8q),
        27,
    ),
    Case(
        "strided_slice_int8",
        _strided_slice("int8", [2, 8, 3], [2, 4, 3], [0, 1, 0], [2, 8, 3], [1, 2, 1], q=I8q),
        30,
        "level 30",
    ),
    Case(
        "strided_slice_ellipsis",
        _strided_slice(F, [2, 3, 8], [2, 3, 4], [0, 0], [0, 8], [1, 2], ellipsis_mask=1),
        None,
        "ellipsis_mask",
    ),
    Case(
        "strided_slice_new_axis",
        _strided_slice(F, [3, 8], [1, 3, 8], [0, 0, 0], [1, 3, 8], [1, 1, 1], new_axis_mask=1),
        None,
        "new_axis_mask",
    ),
    Case(
        "strided_slice_offset",
        _strided_slice(F, [3, 8], [2, 4], [1, 2], [2, 4], [1, 1], offset=True),
        None,
        "offset form",
    ),
]

CASES = [
    Case("conv_f32_same", _conv(F), 27),
    Case("conv_f32_valid_stride2", _conv(F, padding="VALID", stride=2, act="NONE"), 27),
    Case("conv_f32_dilated", _conv(F, dilation=2, padding="VALID"), 29, "level 29"),
    Case("conv_f32_no_bias", _conv(F, bias=False, act="RELU"), 27),
    Case("conv_f32_tanh_fused", _conv(F, act="TANH"), None, "fused TANH"),
    Case("dwconv_f32_mult2", _conv(F, depthwise=True), 27),
    Case("conv_uint8", _conv("uint8"), 27),
    Case("dwconv_uint8_stride2", _conv("uint8", depthwise=True, stride=2), 27),
    Case("conv_int8_per_tensor", _conv("int8"), 30, "level 30"),
    Case("conv_int8_per_channel", _conv("int8", per_channel=True), 30, "level 30"),
    Case("dwconv_int8_per_channel", _conv("int8", depthwise=True, per_channel=True), 30),
    Case(
        "add_f32_broadcast",
        _single(
            "ADD",
            [([2, 3, 4], F, None), ([4], F, None)],
            ([2, 3, 4], F, None),
            dict(fused_activation_function="RELU"),
        ),
        27,
    ),
    Case(
        "mul_f32",
        _single(
            "MUL",
            [([2, 4], F, None), ([2, 4], F, None)],
            ([2, 4], F, None),
            dict(fused_activation_function="NONE"),
        ),
        27,
    ),
    Case(
        "sub_f32",
        _single(
            "SUB",
            [([2, 4], F, None), ([1, 4], F, None)],
            ([2, 4], F, None),
            dict(fused_activation_function="NONE"),
        ),
        27,  # below 28: ADD of the negated operand (MUL by -1), exact
    ),
    Case(
        "sub_f32_scalar_relu",
        _single(
            "SUB",
            [([2, 3, 4], F, None)],
            ([2, 3, 4], F, None),
            dict(fused_activation_function="RELU"),
            consts=[np.float32(0.5)],
        ),
        27,
    ),
    Case(
        "div_f32",
        _single(
            "DIV",
            [([2, 4], F, None), ([1, 4], F, None)],
            ([2, 4], F, None),
            dict(fused_activation_function="NONE"),
        ),
        28,
        "level 28",
    ),
    Case(
        "l2_normalization_f32_rank4",
        _single("L2_NORMALIZATION", [([1, 2, 3, 5], F, None)], ([1, 2, 3, 5], F, None)),
        27,
    ),
    Case(
        "l2_normalization_f32_rank2",
        _single("L2_NORMALIZATION", [([6, 7], F, None)], ([6, 7], F, None)),
        27,  # RESHAPEd to rank 4 and back
    ),
    Case(
        "add_uint8",
        _single(
            "ADD",
            [([2, 8], "uint8", _q(0.05, 128)), ([2, 8], "uint8", _q(0.03, 100))],
            ([2, 8], "uint8", _q(0.07, 120)),
            dict(fused_activation_function="RELU6"),
        ),
        27,
    ),
    Case(
        "add_int8",
        _single(
            "ADD",
            [([2, 8], "int8", _q(0.05, 3)), ([8], "int8", _q(0.03, -7))],
            ([2, 8], "int8", _q(0.07, 1)),
            dict(fused_activation_function="NONE"),
        ),
        30,
        "level 30",
    ),
    Case(
        "mul_uint8",
        _single(
            "MUL",
            [([2, 8], "uint8", _q(0.05, 128)), ([2, 8], "uint8", _q(0.03, 100))],
            ([2, 8], "uint8", _q(0.01, 120)),
            dict(fused_activation_function="NONE"),
        ),
        27,
    ),
    Case(
        "sub_uint8",
        _single(
            "SUB",
            [([2, 8], "uint8", _q(0.05, 128)), ([2, 8], "uint8", _q(0.03, 100))],
            ([2, 8], "uint8", _q(0.07, 120)),
            dict(fused_activation_function="NONE"),
        ),
        29,
        "level 29",
    ),
    Case(
        "avgpool_f32_same",
        _single(
            "AVERAGE_POOL_2D",
            [([1, 7, 7, 3], F, None)],
            ([1, 4, 4, 3], F, None),
            dict(
                padding="SAME",
                stride_w=2,
                stride_h=2,
                filter_width=3,
                filter_height=3,
                fused_activation_function="NONE",
            ),
        ),
        27,
    ),
    Case(
        "maxpool_f32_valid",
        _single(
            "MAX_POOL_2D",
            [([1, 7, 7, 3], F, None)],
            ([1, 3, 3, 3], F, None),
            dict(
                padding="VALID",
                stride_w=2,
                stride_h=2,
                filter_width=2,
                filter_height=2,
                fused_activation_function="RELU",
            ),
        ),
        27,
    ),
    Case(
        "avgpool_uint8_same",
        _single(
            "AVERAGE_POOL_2D",
            [([1, 7, 7, 3], "uint8", U8q)],
            ([1, 4, 4, 3], "uint8", U8q),
            dict(
                padding="SAME",
                stride_w=2,
                stride_h=2,
                filter_width=3,
                filter_height=3,
                fused_activation_function="NONE",
            ),
        ),
        27,
    ),
    Case(
        "avgpool_int8_same",
        _single(
            "AVERAGE_POOL_2D",
            [([1, 7, 7, 3], "int8", I8q)],
            ([1, 4, 4, 3], "int8", I8q),
            dict(
                padding="SAME",
                stride_w=2,
                stride_h=2,
                filter_width=3,
                filter_height=3,
                fused_activation_function="NONE",
            ),
        ),
        30,
    ),
    Case(
        "fc_f32",
        _single(
            "FULLY_CONNECTED",
            [([3, 6], F, None)],
            ([3, 5], F, None),
            dict(fused_activation_function="RELU"),
            consts=[
                np.linspace(-1, 1, 30, dtype=np.float32).reshape(5, 6),
                np.arange(5, dtype=np.float32),
            ],
        ),
        27,
    ),
    Case(
        "reshape_f32",
        _single(
            "RESHAPE",
            [([2, 3, 4], F, None)],
            ([6, 4], F, None),
            consts=[np.array([6, 4], np.int32)],
        ),
        27,
    ),
    Case(
        "squeeze_uint8",
        _single("SQUEEZE", [([1, 3, 1, 4], "uint8", U8q)], ([3, 4], "uint8", U8q)),
        27,
    ),
    Case(
        "softmax_f32",
        _single("SOFTMAX", [([3, 10], F, None)], ([3, 10], F, None), dict(beta=0.7)),
        27,
    ),
    Case(
        "softmax_f32_rank3",
        _single("SOFTMAX", [([2, 3, 10], F, None)], ([2, 3, 10], F, None), dict(beta=1.0)),
        29,
        "level 29",
    ),
    Case(
        "softmax_uint8",
        _single(
            "SOFTMAX",
            [([2, 100], "uint8", _q(0.1, 128))],
            ([2, 100], "uint8", _q(1 / 256, 0)),
            dict(beta=1.0),
        ),
        27,
    ),
    Case(
        "softmax_uint8_long_rows",
        _single(
            "SOFTMAX",
            [([1, 1000], "uint8", _q(0.002, 128))],
            ([1, 1000], "uint8", _q(1 / 256, 0)),
            dict(beta=1.0),
        ),
        None,
        "more than 511",
    ),
    Case(
        "concat_f32",
        _single(
            "CONCATENATION",
            [([2, 3], F, None), ([2, 5], F, None)],
            ([2, 8], F, None),
            dict(axis=-1, fused_activation_function="NONE"),
        ),
        27,
    ),
    Case(
        "concat_uint8_rescaled",
        _single(
            "CONCATENATION",
            [([2, 3], "uint8", _q(0.05, 128)), ([2, 5], "uint8", _q(0.1, 100))],
            ([2, 8], "uint8", _q(0.1, 110)),
            dict(axis=1, fused_activation_function="NONE"),
        ),
        29,
        "level 29",
    ),
    Case("relu6_f32", _single("RELU6", [([4, 5], F, None)], ([4, 5], F, None)), 27),
    Case("relu_uint8", _single("RELU", [([4, 5], "uint8", U8q)], ([4, 5], "uint8", U8q)), 27),
    Case("logistic_f32", _single("LOGISTIC", [([4, 5], F, None)], ([4, 5], F, None)), 27),
    Case(
        "logistic_uint8",
        _single("LOGISTIC", [([4, 5], "uint8", U8q)], ([4, 5], "uint8", _q(1 / 256, 0))),
        27,
    ),
    Case(
        "tanh_uint8",
        _single("TANH", [([4, 5], "uint8", U8q)], ([4, 5], "uint8", _q(1 / 128, 128))),
        29,
        "level 29",
    ),
    Case(
        "hard_swish_f32",
        _single("HARD_SWISH", [([4, 5], F, None)], ([4, 5], F, None)),
        30,
        "level 30",
    ),
    Case(
        "mean_f32_hw",
        _single(
            "MEAN",
            [([1, 5, 6, 3], F, None)],
            ([1, 3], F, None),
            dict(keep_dims=False),
            consts=[np.array([1, 2], np.int32)],
        ),
        27,
    ),
    Case(
        "mean_f32_hw_keep",
        _single(
            "MEAN",
            [([1, 5, 6, 3], F, None)],
            ([1, 1, 1, 3], F, None),
            dict(keep_dims=True),
            consts=[np.array([1, 2], np.int32)],
        ),
        27,
    ),
    Case(
        "mean_f32_last",
        _single(
            "MEAN",
            [([2, 5, 6], F, None)],
            ([2, 5], F, None),
            dict(keep_dims=False),
            consts=[np.array([-1], np.int32)],
        ),
        27,  # below 28: RESHAPE, AVERAGE_POOL_2D over the axis, RESHAPE
    ),
    Case(
        "mean_f32_middle_keep",
        _single(
            "MEAN",
            [([2, 3, 4, 5], F, None)],
            ([2, 1, 1, 5], F, None),
            dict(keep_dims=True),
            consts=[np.array([2, 1], np.int32)],
        ),
        27,
    ),
    Case(
        "mean_f32_apart",
        _single(
            "MEAN",
            [([2, 3, 4, 5], F, None)],
            ([3, 5], F, None),
            dict(keep_dims=False),
            consts=[np.array([0, 2], np.int32)],
        ),
        28,
        "level 28",
    ),
    Case(
        "mean_uint8",
        _single(
            "MEAN",
            [([1, 4, 4, 8], "uint8", U8q)],
            ([1, 8], "uint8", U8q),
            dict(keep_dims=False),
            consts=[np.array([1, 2], np.int32)],
        ),
        28,
        "level 28",
    ),
    Case(
        "pad_f32",
        _single(
            "PAD",
            [([1, 3, 3, 2], F, None)],
            ([1, 4, 6, 2], F, None),
            consts=[np.array([[0, 0], [1, 0], [1, 2], [0, 0]], np.int32)],
        ),
        28,
        "level 28",
    ),
    Case(
        "pad_uint8",
        _single(
            "PAD",
            [([1, 3, 3, 2], "uint8", U8q)],
            ([1, 4, 6, 2], "uint8", U8q),
            consts=[np.array([[0, 0], [1, 0], [1, 2], [0, 0]], np.int32)],
        ),
        29,
        "level 29",
    ),
    Case(
        "resize_bilinear_f32",
        _single(
            "RESIZE_BILINEAR",
            [([1, 3, 4, 2], F, None)],
            ([1, 6, 7, 2], F, None),
            dict(),
            consts=[np.array([6, 7], np.int32)],
        ),
        27,
    ),
    Case(
        "resize_bilinear_f32_half_pixel",
        _single(
            "RESIZE_BILINEAR",
            [([1, 3, 4, 2], F, None)],
            ([1, 6, 8, 2], F, None),
            dict(half_pixel_centers=True),
            consts=[np.array([6, 8], np.int32)],
        ),
        30,
        "level 30",
    ),
    Case(
        "resize_nearest_f32",
        _single(
            "RESIZE_NEAREST_NEIGHBOR",
            [([1, 3, 4, 2], F, None)],
            ([1, 6, 8, 2], F, None),
            dict(),
            consts=[np.array([6, 8], np.int32)],
        ),
        29,
        "level 29",
    ),
    Case(
        "quantize_f32_uint8",
        _single("QUANTIZE", [([4, 5], F, None)], ([4, 5], "uint8", _q(0.01, 128))),
        29,
        "level 29",
    ),
    Case(
        "dequantize_uint8", _single("DEQUANTIZE", [([4, 5], "uint8", U8q)], ([4, 5], F, None)), 27
    ),
    Case(
        "dequantize_int8",
        _single("DEQUANTIZE", [([4, 5], "int8", I8q)], ([4, 5], F, None)),
        30,
        "level 30",
    ),
    Case(
        "fc_f32_keep_num_dims",
        _single(
            "FULLY_CONNECTED",
            [([2, 3, 6], F, None)],
            ([2, 3, 5], F, None),
            dict(fused_activation_function="NONE", keep_num_dims=True),
            consts=[np.linspace(-1, 1, 30, dtype=np.float32).reshape(5, 6)],
        ),
        27,
    ),
    Case(
        "add_f32_scalar_constant",
        _single(
            "ADD",
            [([2, 4], F, None)],
            ([2, 4], F, None),
            dict(fused_activation_function="NONE"),
            consts=[np.array(0.5, np.float32)],
        ),
        27,
    ),
    Case(
        "transpose_uint8",
        _single(
            "TRANSPOSE",
            [([2, 3, 4], "uint8", U8q)],
            ([4, 2, 3], "uint8", U8q),
            consts=[np.array([2, 0, 1], np.int32)],
        ),
        27,  # 27: EMBEDDING_LOOKUP of the permuted rows; 28: TRANSPOSE
    ),
    Case(
        "transpose_f32_heads",  # [1, S, H, D] -> [1, H, S, D]: the attention's head split
        _single(
            "TRANSPOSE",
            [([1, 6, 4, 8], F, None)],
            ([1, 4, 6, 8], F, None),
            consts=[np.array([0, 2, 1, 3], np.int32)],
        ),
        27,
    ),
    Case(
        "slice_f32",
        _single(
            "SLICE",
            [([3, 5, 4], F, None)],
            ([2, 3, 4], F, None),
            consts=[np.array([1, 1, 0], np.int32), np.array([2, 3, -1], np.int32)],
        ),
        29,
    ),
    Case("exp_f32", _single("EXP", [([3, 4], F, None)], ([3, 4], F, None)), 29),
    Case("rsqrt_f32", _single("RSQRT", [([3, 4], F, None)], ([3, 4], F, None)), 29),
    Case("abs_f32", _single("ABS", [([3, 4], F, None)], ([3, 4], F, None)), 29),
    Case(
        "maximum_f32",
        _single("MAXIMUM", [([3, 4], F, None), ([4], F, None)], ([3, 4], F, None)),
        29,
    ),
    Case(
        "minimum_uint8",
        _single(
            "MINIMUM",
            [([3, 4], "uint8", U8q), ([3, 4], "uint8", U8q)],
            ([3, 4], "uint8", U8q),
        ),
        29,
    ),
    Case(
        "squared_difference_f32",
        _single("SQUARED_DIFFERENCE", [([3, 4], F, None), ([3, 4], F, None)], ([3, 4], F, None)),
        27,
    ),
    Case(
        "space_to_depth_f32",
        _single(
            "SPACE_TO_DEPTH",
            [([1, 4, 6, 3], F, None)],
            ([1, 2, 3, 12], F, None),
            dict(block_size=2),
        ),
        27,
    ),
    Case(
        "depth_to_space_uint8",
        _single(
            "DEPTH_TO_SPACE",
            [([1, 2, 3, 12], "uint8", U8q)],
            ([1, 4, 6, 3], "uint8", U8q),
            dict(block_size=2),
        ),
        27,
    ),
    # ---- the attention core: BATCH_MATMUL (feature level 6; below it DEPTHWISE_CONV_2D with
    # the second operand as the filter, TRANSPOSEs for several batches or an adjoint: at 27
    # EMBEDDING_LOOKUPs)
    Case(
        "bmm_f32_one_matrix",
        _single("BATCH_MATMUL", [([2, 3, 4], F, None), ([4, 5], F, None)], ([2, 3, 5], F, None)),
        27,
    ),
    Case(
        "bmm_f32_batches",
        _single("BATCH_MATMUL", [([3, 4, 5], F, None), ([3, 5, 2], F, None)], ([3, 4, 2], F, None)),
        27,
    ),
    Case(
        "bmm_f32_rank4_adj_y",  # q @ k^T of 2 heads
        _single(
            "BATCH_MATMUL",
            [([1, 2, 3, 4], F, None), ([1, 2, 5, 4], F, None)],
            ([1, 2, 3, 5], F, None),
            dict(adj_y=True),
        ),
        27,
    ),
    Case(
        "bmm_f32_adj_x",
        _single(
            "BATCH_MATMUL",
            [([2, 4, 3], F, None), ([2, 4, 5], F, None)],
            ([2, 3, 5], F, None),
            dict(adj_x=True),
        ),
        27,
    ),
    Case(
        "bmm_f32_constant_same_matrix_adj_y",
        _single(
            "BATCH_MATMUL",
            [([2, 3, 4], F, None)],
            ([2, 3, 5], F, None),
            dict(adj_y=True),
            consts=[np.stack([np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)] * 2)],
        ),
        27,  # one matrix for every batch: its filter written transposed, no TRANSPOSE
    ),
    Case(
        "bmm_f32_constant_batches",
        _single(
            "BATCH_MATMUL",
            [([2, 3, 4], F, None)],
            ([2, 3, 5], F, None),
            consts=[np.linspace(-1, 1, 40, dtype=np.float32).reshape(2, 4, 5)],
        ),
        27,
    ),
    Case(
        "bmm_f32_broadcast_both_ways",
        _single(
            "BATCH_MATMUL",
            [([2, 1, 3, 4], F, None), ([1, 2, 4, 5], F, None)],
            ([2, 2, 3, 5], F, None),
        ),
        None,
        "broadcast",
    ),
    # ---- GELU: the tanh form op by op (27), the erf form with erfc's rational bound (29)
    Case(
        "gelu_tanh_f32",
        _single("GELU", [([3, 40], F, None)], ([3, 40], F, None), dict(approximate=True)),
        27,
    ),
    Case(
        "gelu_erf_f32",
        _single("GELU", [([3, 40], F, None)], ([3, 40], F, None), dict(approximate=False)),
        29,
    ),
    # ---- comparisons, logic, reductions and SELECT (29): an attention mask's operators
    Case(
        "equal_f32_scalar",
        _single(
            "EQUAL", [([2, 3, 4], F, None)], ([2, 3, 4], "bool", None), consts=[np.float32(1.0)]
        ),
        29,
    ),
    Case(
        "less_int32_broadcast",
        _single("LESS", [([2, 3], "int32", None), ([3], "int32", None)], ([2, 3], "bool", None)),
        29,
    ),
    Case(
        "greater_equal_uint8",
        _single(
            "GREATER_EQUAL",
            [([3, 4], "uint8", U8q), ([3, 4], "uint8", U8q)],
            ([3, 4], "bool", None),
        ),
        29,
    ),
    Case(
        "greater_uint8_quantized_differently",
        _single(
            "GREATER",
            [([3, 4], "uint8", U8q), ([3, 4], "uint8", _q(0.1, 128))],
            ([3, 4], "bool", None),
        ),
        None,
        "quantized differently",
    ),
    Case(
        "not_equal_bool",
        _single(
            "NOT_EQUAL", [([3, 4], "bool", None), ([3, 4], "bool", None)], ([3, 4], "bool", None)
        ),
        29,
    ),
    Case(
        "logical_and_broadcast",
        _single(
            "LOGICAL_AND",
            [([1, 1, 4, 1], "bool", None), ([2, 1, 1, 4], "bool", None)],
            ([2, 1, 4, 4], "bool", None),
        ),
        29,
    ),
    Case(
        "logical_not",
        _single("LOGICAL_NOT", [([2, 5], "bool", None)], ([2, 5], "bool", None)),
        29,
    ),
    Case(
        "reduce_any_keep_dims",
        _single(
            "REDUCE_ANY",
            [([2, 3, 4], "bool", None)],
            ([2, 3, 1], "bool", None),
            dict(keep_dims=True),
            consts=[np.array([-1], np.int32)],
        ),
        29,
    ),
    Case(
        "sum_f32",
        _single(
            "SUM",
            [([2, 3, 4], F, None)],
            ([3], F, None),
            dict(keep_dims=False),
            consts=[np.array([0, 2], np.int32)],
        ),
        29,
    ),
    Case(
        "select_v2_broadcast_condition",  # PyTorch's guard for rows of all -inf logits
        _single(
            "SELECT_V2",
            [([1, 2, 3, 1], "bool", None), ([1, 2, 3, 4], F, None), ([1, 2, 3, 4], F, None)],
            ([1, 2, 3, 4], F, None),
        ),
        29,
    ),
    Case(
        "select_v2_scalar_values",  # an attention mask's 0 / -inf
        _single(
            "SELECT_V2",
            [([2, 1, 3, 3], "bool", None)],
            ([2, 1, 3, 3], F, None),
            consts=[np.float32(0.0), np.float32(-np.inf)],
        ),
        29,
    ),
    Case(
        "broadcast_to_f32",  # a mean pooling's count, spread over the features
        _single(
            "BROADCAST_TO",
            [([4, 1], F, None)],
            ([2, 4, 6], F, None),
            consts=[np.array([2, 4, 6], np.int32)],
        ),
        29,
    ),
    Case(
        "broadcast_to_bool",
        _single(
            "BROADCAST_TO",
            [([3, 1], "bool", None)],
            ([3, 5], "bool", None),
            consts=[np.array([3, 5], np.int32)],
        ),
        29,
    ),
    Case(
        "select_rows_uint8",  # declined: NNAPI reshapes no bool tensor to align the condition
        _single(
            "SELECT",
            [([3], "bool", None), ([3, 4], "uint8", U8q), ([3, 4], "uint8", U8q)],
            ([3, 4], "uint8", U8q),
        ),
        None,
        "1-D condition of rows",
    ),
    *LITERT_CASES,
]


def _inputs(rt, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for d in rt.inputs:
        if d.dtype.kind == "f":
            out.append(rng.uniform(-4, 4, d.shape).astype(d.dtype))
        elif d.dtype.kind == "b":
            out.append(rng.integers(0, 2, d.shape).astype(bool))
        else:
            info = np.iinfo(d.dtype)
            out.append(rng.integers(info.min, info.max, d.shape, endpoint=True).astype(d.dtype))
    return out


def _outputs(rt, xs):
    y = rt(*xs)
    return [np.asarray(v) for v in (y if isinstance(y, list | tuple) else [y])]


def _assert_match(got, ref, what):
    for g, r in zip(got, ref, strict=True):
        assert g.dtype == r.dtype and g.shape == r.shape, what
        if r.dtype.kind == "f":
            # the test runtime sums in its own order: last-bit differences only
            tol = 1e-5 * np.maximum(1.0, np.abs(r.astype(np.float64)))
            close = np.abs(g.astype(np.float64) - r) <= tol
            both_nan = np.isnan(g) & np.isnan(r)  # RSQRT, LOG of negatives
            assert np.all(close | both_nan | (g == r)), f"{what}: {g} vs {r}"
        else:
            assert np.array_equal(g, r), f"{what}: {int((g != r).sum())} of {g.size} differ"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_operator_at_every_level(case, monkeypatch, runtime_counters):
    data = case.build()
    cpu = wick.load(data)
    xs = _inputs(cpu)
    ref = _outputs(cpu, xs)
    for level in LEVELS:
        monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
        runtime_counters.wick_test_nnapi_reset_counters()
        rt = wick.load(data, delegate=f"nnapi:library={LIB}")
        got = _outputs(rt, xs)
        records = rt.delegation
        on = [r for r in records if r.delegate == "nnapi"]
        want_on = case.since is not None and level >= case.since
        what = f"{case.name} at level {level}"
        if want_on:
            assert len(on) == len(records), f"{what}: {records}"
        else:
            assert not on, f"{what}: on NNAPI below its level: {records}"
            # below its level the reason names the level; never: the rule it breaks
            why = "needs NNAPI feature level" if case.since is not None else case.why
            assert any(why in r.reason for r in records), f"{what}: {records}"
        for r in records:
            assert "failed" not in r.reason, f"{what}: {r}"
        assert runtime_counters.wick_test_nnapi_rejections() == 0, (
            what,
            runtime_counters.wick_test_nnapi_last_error(),
        )
        assert runtime_counters.wick_test_nnapi_misuses() == 0, (
            what,
            runtime_counters.wick_test_nnapi_last_error(),
        )
        _assert_match(got, ref, what)


@pytest.mark.parametrize("case", LITERT_CASES, ids=[c.name for c in LITERT_CASES])
def test_new_operators_match_litert(case, monkeypatch, runtime_counters):
    """PRELU, STRIDED_SLICE and float16-to-float32 op by op against LiteRT, exactly (8-bit bit for bit; float too:
    each is a copy or one multiply per element): the NNAPI form on the test runtime at its first
    level and the latest, and the CPU, give LiteRT's outputs."""
    data = case.build()
    cpu = wick.load(data)
    for seed in range(2):
        xs = _inputs(cpu, seed)
        # PRELU on LiteRT's reference kernels (its 8-bit bit for bit); STRIDED_SLICE and the
        # float16 conversions, copies, on the default resolver (the reference one lacks
        # STRIDED_SLICE's newer versions: ellipsis, offset)
        ref = run_litert(data, xs, reference=case.name.startswith("prelu"))
        runs = [("cpu", cpu)]
        for level in sorted({case.since or 1000008, 1000008}):
            monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
            runs.append((f"level {level}", wick.load(data, delegate=f"nnapi:library={LIB}")))
        for what, rt in runs:
            if what != "cpu" and case.since is not None:
                assert all(r.delegate == "nnapi" for r in rt.delegation), rt.delegation
            for g, r in zip(_outputs(rt, xs), ref, strict=True):
                r = np.asarray(r)
                assert g.dtype == r.dtype and g.shape == r.shape, (case.name, what, g, r)
                assert np.array_equal(g, r), f"{case.name} ({what}): {g} vs LiteRT {r}"
    assert runtime_counters.wick_test_nnapi_rejections() == 0, (
        runtime_counters.wick_test_nnapi_last_error()
    )


@pytest.mark.parametrize("approximate, level", [(True, 27), (False, 29)])
def test_gelu_over_the_whole_float_range(approximate, level, monkeypatch, runtime_counters):
    """GELU built from NNAPI operations (NNAPI has none), on 20001 values over [-20, 20], powers
    of ten to 1e30 of both signs and the special values: equal to the CPU within 1e-5 *
    max(1, |ref|), the same infinities (+inf -> +inf; -inf -> NaN for the erf form, as TFLite's
    0.5 x erfc(-x/sqrt2)), NaN -> NaN, -0 -> -0."""
    values = np.concatenate(
        [
            np.linspace(-20, 20, 20001, dtype=np.float32),
            np.float32([10.0**k for k in range(-30, 31, 3)]),
            -np.float32([10.0**k for k in range(-30, 31, 3)]),
            np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38]),
        ]
    ).astype(np.float32)
    data = _single(
        "GELU", [([values.size], F, None)], ([values.size], F, None), dict(approximate=approximate)
    )()
    ref = wick.load(data)(values)
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    assert all(r.delegate == "nnapi" for r in rt.delegation), rt.delegation
    # not silent: the report says the GELU is composed, and its bound
    bound = "1.5e-7" if approximate else "1.4e-7"
    note = rt.delegation[0].note
    assert note.startswith("composed") and f"within {bound} x max(1, |GELU|)" in note, note
    # and a plan says it too (the operator would run so on a device of that level)
    (planned,) = wick.load(data, delegate=f"nnapi:plan_level={level}").delegation
    assert planned.delegate is None and "planned only" in planned.reason, planned
    assert planned.note == note, planned
    got = np.asarray(rt(values))
    assert runtime_counters.wick_test_nnapi_rejections() == 0, (
        runtime_counters.wick_test_nnapi_last_error()
    )
    ref = np.asarray(ref)
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    close = np.abs(got.astype(np.float64) - ref) <= 1e-5 * np.maximum(1.0, np.abs(ref))
    bad = ~(same | close)
    assert not bad.any(), list(zip(values[bad], got[bad], ref[bad], strict=True))[:10]
    assert np.array_equal(np.signbit(got[ref == 0]), np.signbit(ref[ref == 0]))


# ---------------------------------------------------------------- fallback, options, CLI


def _mixed_model():
    """CONV_2D -> MEAN -> FULLY_CONNECTED -> SOFTMAX, float: a small classifier."""
    rng = np.random.default_rng(5)
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [1, 8, 8, 3], F)
    f = sg.add_constant("f", rng.standard_normal((6, 3, 3, 3)).astype(np.float32))
    b = sg.add_constant("b", rng.standard_normal(6).astype(np.float32))
    c = sg.add_tensor("c", [1, 8, 8, 6], F)
    sg.add_operator(
        "CONV_2D",
        [x, f, b],
        [c],
        options=dict(padding="SAME", stride_w=1, stride_h=1, fused_activation_function="RELU6"),
    )
    m = sg.add_tensor("m", [1, 6], F)
    sg.add_operator(
        "MEAN",
        [c, sg.add_constant("ax", np.array([1, 2], np.int32))],
        [m],
        options=dict(keep_dims=False),
    )
    wt = sg.add_constant("w", rng.standard_normal((4, 6)).astype(np.float32))
    fc = sg.add_tensor("fc", [1, 4], F)
    sg.add_operator(
        "FULLY_CONNECTED", [m, wt, None], [fc], options=dict(fused_activation_function="NONE")
    )
    y = sg.add_tensor("y", [1, 4], F)
    sg.add_operator("SOFTMAX", [fc], [y], options=dict(beta=1.0))
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def test_no_library_declines_everything_with_the_reason():
    data = _mixed_model()
    cpu = wick.load(data)
    xs = _inputs(cpu)
    rt = wick.load(data, delegate="nnapi:library=/nonexistent/libneuralnetworks.so")
    assert all(r.delegate is None for r in rt.delegation)
    assert all("NNAPI is not available" in r.reason for r in rt.delegation), rt.delegation
    for g, r in zip(_outputs(rt, xs), _outputs(cpu, xs), strict=True):
        assert np.array_equal(g, r)


@pytest.mark.parametrize(
    "function",
    [
        "ANeuralNetworksModel_create",
        "ANeuralNetworksModel_addOperation",
        "ANeuralNetworksModel_finish",
        "ANeuralNetworksCompilation_finish",
        "ANeuralNetworksExecution_create",
        "ANeuralNetworksExecution_setInput",
        "ANeuralNetworksExecution_compute",
        "ANeuralNetworksExecution_startCompute",
    ],
)
def test_injected_failures_fall_back_bit_identically(function, monkeypatch):
    data = _mixed_model()
    cpu = wick.load(data)
    xs = _inputs(cpu)
    ref = _outputs(cpu, xs)
    level = "27" if function == "ANeuralNetworksExecution_startCompute" else "30"
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", level)
    monkeypatch.setenv("WICK_TEST_NNAPI_FAIL", f"{function}:*")
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    for _ in range(2):
        for g, r in zip(_outputs(rt, xs), ref, strict=True):
            assert np.array_equal(g, r), function
    assert all(r.delegate is None for r in rt.delegation), rt.delegation
    assert any(function in r.reason for r in rt.delegation), rt.delegation


@pytest.mark.parametrize(
    "function", ["ANeuralNetworksModel_addOperation", "ANeuralNetworksExecution_compute"]
)
def test_prelu_and_strided_slice_fall_back_bit_identically(function, monkeypatch):
    """A PRELU and a STRIDED_SLICE in one partition (level 29): every call of `function` failing
    puts them back on the CPU with its outputs, bit for bit."""
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    x = sg.add_tensor("x", [1, 4, 6, 3], F)
    p = sg.add_tensor("p", [1, 4, 6, 3], F)
    sg.add_operator("PRELU", [x, sg.add_constant("alpha", _ALPHA3)], [p])
    consts = [sg.add_constant(n, np.array(v, np.int32)) for n, v in
              (("b", [0, 3, 5, 0]), ("e", [1, 0, 0, 3]), ("s", [1, -2, -2, 1]))]  # fmt: skip
    y = sg.add_tensor("y", [1, 2, 3, 3], F)
    sg.add_operator("STRIDED_SLICE", [p, *consts], [y], options=dict(end_mask=0b0110))
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    cpu = wick.load(data)
    xs = _inputs(cpu)
    ref = _outputs(cpu, xs)
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "29")
    on = wick.load(data, delegate=f"nnapi:library={LIB}")
    assert [r.partition for r in on.delegation] == [0, 0], on.delegation
    _assert_match(_outputs(on, xs), ref, "on NNAPI")
    monkeypatch.setenv("WICK_TEST_NNAPI_FAIL", f"{function}:*")
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    for _ in range(2):
        for g, r in zip(_outputs(rt, xs), ref, strict=True):
            assert np.array_equal(g, r), function
    assert all(r.delegate is None for r in rt.delegation), rt.delegation
    assert any(function in r.reason for r in rt.delegation), rt.delegation


def test_level_cap_and_settings(monkeypatch, runtime_counters):
    data = _mixed_model()
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", "1000008")
    rt = wick.load(data, delegate=f"nnapi:library={LIB};feature_level=27")
    # level 27: MEAN over H, W is an AVERAGE_POOL_2D, so the whole classifier is one partition
    assert all(r.delegate == "nnapi" and r.partition == 0 for r in rt.delegation)
    rt = wick.load(data, delegate=f"nnapi:library={LIB};ops=CONV_2D,SOFTMAX")
    on = [r.op for r in rt.delegation if r.delegate]
    assert on == ["CONV_2D", "SOFTMAX"], rt.delegation
    assert "not in the ops= list" in rt.delegation[1].reason
    for config in ("preference=sustained_speed", "relaxed_fp16=1", "device=wick-test-npu"):
        rt = wick.load(data, delegate=f"nnapi:library={LIB};{config}")
        assert all(r.delegate == "nnapi" for r in rt.delegation), (config, rt.delegation)
    rt = wick.load(data, delegate=f"nnapi:library={LIB};device=no-such-device")
    assert "wick-test-cpu" in rt.delegation[0].reason, rt.delegation[0]
    with pytest.raises(wick.WickError, match="the first is 27"):
        wick.load(data, delegate="nnapi:feature_level=12")
    with pytest.raises(wick.WickError, match="no setting"):
        wick.load(data, delegate="nnapi:speed=11")
    assert runtime_counters.wick_test_nnapi_misuses() == 0


def test_cli_inspect_and_run(tmp_path):
    model = tmp_path / "m.tflite"
    model.write_bytes(_mixed_model())
    cli = [sys.executable, "-m", "wick.cli"]
    env = dict(os.environ, WICK_TEST_NNAPI_FEATURE_LEVEL="1000008")
    r = subprocess.run(
        [
            *cli,
            "inspect",
            str(model),
            "--delegate",
            f"nnapi:library={LIB}",
            "--nnapi-feature-level",
            "28",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert "feature level 28" in r.stderr, r.stderr
    assert "4 of 4 operators on delegates, 1 partition" in r.stdout, r.stdout
    r = subprocess.run(
        [*cli, "run", str(model), "--delegate", "nnapi:library=/nonexistent.so"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert "NNAPI is not available" in r.stderr, r.stderr
    r = subprocess.run(
        [*cli, "run", str(model), "--nnapi-feature-level", "27"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode != 0 and "needs --delegate nnapi" in r.stderr


def _uint8_mobilenet_block():
    """A MobileNet-style uint8 network as TensorFlow's legacy quantized files are built:
    CONV_2D (stride 2, RELU6) -> DEPTHWISE_CONV_2D (RELU6) -> CONV_2D 1x1 -> ADD (residual)
    -> AVERAGE_POOL_2D over the plane -> RESHAPE -> FULLY_CONNECTED -> SOFTMAX."""
    rng = np.random.default_rng(11)
    w = ModelWriter()
    sg = w.add_subgraph(name="main")
    u8 = "uint8"

    def weights(name, shape, scale, zp):
        return sg.add_constant(
            name, rng.integers(0, 256, shape).astype(np.uint8), quant=_q(scale, zp)
        )

    def bias(name, n, scale):
        return sg.add_constant(
            name, rng.integers(-300, 300, n).astype(np.int32), quant=_q(scale, 0)
        )

    x = sg.add_tensor("x", [1, 16, 16, 3], u8, quant=_q(0.02, 128))
    c1 = sg.add_tensor("c1", [1, 8, 8, 8], u8, quant=_q(0.05, 0))
    conv = dict(padding="SAME", stride_w=2, stride_h=2, fused_activation_function="RELU6")
    sg.add_operator(
        "CONV_2D",
        [
            x,
            weights("w1", (8, 3, 3, 3), 0.01, 120),
            bias("b1", 8, np.float32(0.02) * np.float32(0.01)),
        ],
        [c1],
        options=conv,
    )
    d = sg.add_tensor("d", [1, 8, 8, 8], u8, quant=_q(0.04, 0))
    sg.add_operator(
        "DEPTHWISE_CONV_2D",
        [
            c1,
            weights("w2", (1, 3, 3, 8), 0.02, 128),
            bias("b2", 8, np.float32(0.05) * np.float32(0.02)),
        ],
        [d],
        options=dict(conv, stride_w=1, stride_h=1, depth_multiplier=1),
    )
    p = sg.add_tensor("p", [1, 8, 8, 8], u8, quant=_q(0.06, 125))
    sg.add_operator(
        "CONV_2D",
        [
            d,
            weights("w3", (8, 1, 1, 8), 0.015, 127),
            bias("b3", 8, np.float32(0.04) * np.float32(0.015)),
        ],
        [p],
        options=dict(conv, stride_w=1, stride_h=1, fused_activation_function="NONE"),
    )
    a = sg.add_tensor("a", [1, 8, 8, 8], u8, quant=_q(0.08, 120))
    sg.add_operator("ADD", [p, c1], [a], options=dict(fused_activation_function="NONE"))
    g = sg.add_tensor("g", [1, 1, 1, 8], u8, quant=_q(0.08, 120))
    sg.add_operator(
        "AVERAGE_POOL_2D",
        [a],
        [g],
        options=dict(
            padding="VALID",
            stride_w=1,
            stride_h=1,
            filter_width=8,
            filter_height=8,
            fused_activation_function="NONE",
        ),
    )
    r = sg.add_tensor("r", [1, 8], u8, quant=_q(0.08, 120))
    sg.add_operator("RESHAPE", [g, sg.add_constant("shape", np.array([1, 8], np.int32))], [r])
    f = sg.add_tensor("f", [1, 5], u8, quant=_q(0.1, 128))
    sg.add_operator(
        "FULLY_CONNECTED",
        [r, weights("w4", (5, 8), 0.01, 128), bias("b4", 5, np.float32(0.08) * np.float32(0.01))],
        [f],
        options=dict(fused_activation_function="NONE"),
    )
    y = sg.add_tensor("y", [1, 5], u8, quant=_q(1 / 256, 0))
    sg.add_operator("SOFTMAX", [f], [y], options=dict(beta=1.0))
    sg.set_inputs([x])
    sg.set_outputs([y])
    return w.finish()


def test_uint8_mobilenet_block_is_one_partition_from_27(monkeypatch, runtime_counters):
    data = _uint8_mobilenet_block()
    cpu = wick.load(data)
    for seed in range(3):
        xs = _inputs(cpu, seed)
        ref = _outputs(cpu, xs)
        for level in LEVELS:
            monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
            rt = wick.load(data, delegate=f"nnapi:library={LIB}")
            assert all(r.delegate == "nnapi" and r.partition == 0 for r in rt.delegation), (
                level,
                rt.delegation,
            )
            _assert_match(_outputs(rt, xs), ref, f"uint8 block at level {level}, seed {seed}")
    assert runtime_counters.wick_test_nnapi_rejections() == 0


def test_compilation_cache_token(monkeypatch, tmp_path, runtime_counters):
    """cache_dir: from level 29 every partition's compilation gets the directory and a token
    that fingerprints the NNAPI model (the same model, the same token; another, another);
    below 29 the function is never called (a runtime there does not have it)."""
    runtime_counters.wick_test_nnapi_cache_calls.restype = ctypes.c_long
    token = (ctypes.c_uint8 * 32)()

    def load(data, level):
        monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
        runtime_counters.wick_test_nnapi_reset_counters()
        rt = wick.load(data, delegate=f"nnapi:library={LIB};cache_dir={tmp_path}")
        assert all(r.delegate == "nnapi" for r in rt.delegation), rt.delegation
        runtime_counters.wick_test_nnapi_last_cache_token(token)
        return runtime_counters.wick_test_nnapi_cache_calls(), bytes(token)

    data = _mixed_model()
    calls, first = load(data, 29)
    assert calls == 1 and any(first)
    assert load(data, 30) != (1, first)  # the level is part of the fingerprint
    assert load(data, 29) == (1, first)
    other = _uint8_mobilenet_block()
    assert load(other, 29)[1] != first
    assert load(data, 28)[0] == 0 and runtime_counters.wick_test_nnapi_misuses() == 0


# Quantized MUL's multiplier: TFLite forms in1 x in2 / out in float, NNAPI's reference CPU path
# divides the float product in1 x in2 by out in double. (scales, zero points a / b / out, dtype,
# whether every output agrees and the delegate takes the MUL.) The differing scales were found by
# search: 3 or 4 of the 65536 input pairs come out one step apart.
_MUL_SCALES = [
    ((0.05, 128), (0.04, 120), (0.1, 100), "uint8", True),
    (
        (0.13735826313495636, 199),
        (0.14164382219314575, 6),
        (0.2562257647514343, 117),
        "uint8",
        False,
    ),
    (
        (0.12520581483840942, 146),
        (0.17644472420215607, 204),
        (1.1991593837738037, 253),
        "uint8",
        False,
    ),
    ((0.05, -3), (0.02, 7), (0.03, 10), "int8", True),
]


@pytest.mark.parametrize("level", [27, 28, 29, 30, 31])
@pytest.mark.parametrize("qa, qb, qy, dtype, agrees", _MUL_SCALES)
def test_quantized_mul_multiplier_derivations(qa, qb, qy, dtype, agrees, level, monkeypatch,
                                              runtime_counters):  # fmt: skip
    """8-bit MUL on every pair of input values (a 256 x 256 grid) against LiteRT's reference
    kernels, bit for bit: taken where TFLite's float multiplier and NNAPI's double one give the
    same output for every pair (the test runtime computes NNAPI's form), declined with the reason
    where they differ by a step, CPU then; int8 from level 30."""
    data = _single(
        "MUL",
        [([256, 256], dtype, _q(*qa)), ([256, 256], dtype, _q(*qb))],
        ([256, 256], dtype, _q(*qy)),
        dict(fused_activation_function="NONE"),
    )()
    lo = np.iinfo(dtype).min
    grid = np.arange(256, dtype=np.int32) + lo
    xs = [np.repeat(grid, 256).reshape(256, 256).astype(dtype),
          np.tile(grid, 256).reshape(256, 256).astype(dtype)]  # fmt: skip
    ref = run_litert(data, xs, reference=True)
    monkeypatch.setenv("WICK_TEST_NNAPI_FEATURE_LEVEL", str(level))
    rt = wick.load(data, delegate=f"nnapi:library={LIB}")
    on = [r for r in rt.delegation if r.delegate == "nnapi"]
    if agrees and (dtype == "uint8" or level >= 30):
        assert len(on) == 1, rt.delegation
    else:
        assert not on, rt.delegation
        why = (
            "requantization differs by a step" if dtype == "uint8" else "needs NNAPI feature level"
        )
        assert any(why in r.reason for r in rt.delegation), rt.delegation
    got = _outputs(rt, xs)
    for g, r in zip(got, ref, strict=True):
        assert np.array_equal(g, np.asarray(r)), f"level {level}: {g} vs LiteRT {r}"
    assert runtime_counters.wick_test_nnapi_rejections() == 0, (
        runtime_counters.wick_test_nnapi_last_error()
    )
