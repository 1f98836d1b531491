"""Differential tests: unary elementwise ops, activations, CAST, DEQUANTIZE, QUANTIZE.

Each case writes a one-operator .tflite file, runs it on wick and on LiteRT, and compares.

Oracles and tolerances
----------------------
* LiteRT's reference kernels (``reference=True``, BUILTIN_REF) are the oracle wherever LiteRT
  registers one. Its default kernels (XNNPACK) flush denormals to zero, use their own polynomial
  exp/sin/cos/erf/tanh (SIN/COS of 1e10 are off by thousands, EXP(NaN) is 0) and quantize with a
  multiply by 1/scale and ties-to-even; the reference kernels are plain IEEE / libm code, which is
  what wick implements.
* ELU, CEIL and ROUND have no reference registration in LiteRT: they are compared with the
  default kernels on normal values and with numpy's IEEE formulas on special values (denormals
  are where XNNPACK differs: it flushes them). Which op is which, the numpy formula and the
  values each op draws are its record in src/kernels/reference/unary_ops.inc.
* float32: ``|wick - ref| <= 1e-5 * max(1, max|ref|)`` on finite values (transcendental
  functions may differ in the last bits between libm versions and Eigen); NaN positions,
  infinities and the sign of zeros must be identical. On this machine the reference kernels and
  wick agree bit for bit for every op except GELU (LiteRT evaluates erf/tanh in float32 with
  Eigen's approximations; wick in double, rounded once).
* Integers, bools, float16 bit patterns and quantized values: exact.

Where wick defines behaviour that LiteRT leaves undefined or differs on purpose:
* CAST float -> integer saturates and maps NaN to 0 (LiteRT 2.x gives the type's maximum for NaN).
* QUANTIZE saturates ±inf/huge values to the type's range and maps NaN to the zero point
  (LiteRT's reference kernel hits an undefined float->int conversion there: -128 on x86).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import wick
from tests.python.ops import _harness as H
from wick.tflite.unary_ops import unary_ops
from wick.tflite.writer import ModelWriter

FLOAT_REL = 1e-5

SPECIAL = np.array(
    [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1e-45,
        -1e-45,
        1e-40,
        -3e-39,
        1.1754944e-38,
        3.4e38,
        -3.4e38,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.0,
        -3.0,
        6.0,
        1.0,
        -1.0,
        8.5,
        16.7,
        -9.5,
        20.0,
        -20.0,
        88.8,
        -104.0,
        100.0,
        -100.0,
        1e10,
        -1e10,
        8388609.0,
        -8388609.5,
    ],
    np.float32,
)


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def model(
    op,
    inputs,
    out_dtype=None,
    options=None,
    *,
    in_quant=None,
    out_quant=None,
    consts=(),
    version=None,
    out_shape=None,
):
    """One-op model. `inputs`: arrays; indices in `consts` are stored as constants."""
    w = ModelWriter()
    sg = w.add_subgraph()
    ids, graph_inputs = [], []
    for k, x in enumerate(inputs):
        q = in_quant if k == 0 else None
        if k in consts:
            t = sg.add_constant(f"c{k}", x, quant=q)
        else:
            t = sg.add_tensor(f"in{k}", list(x.shape), x.dtype, quant=q)
            graph_inputs.append(t)
        ids.append(t)
    shape = list(inputs[0].shape) if out_shape is None else out_shape
    y = sg.add_tensor("y", shape, out_dtype or inputs[0].dtype, quant=out_quant)
    sg.add_operator(op, ids, [y], options=options, version=version)
    sg.set_inputs(graph_inputs)
    sg.set_outputs([y])
    feeds = [x for k, x in enumerate(inputs) if k not in consts]
    return w.finish(), feeds


def run_litert(data, feeds, reference=False):
    """LiteRT's outputs (its reference resolver, or its default interpreter), run by the
    single-op harness's child process (tests/python/ops/_harness.py); a failure naming LiteRT's
    reason when it cannot run the file (every file here is one it runs)."""
    which = "reference" if reference else "default"
    outs = H.peer(data, feeds, which)
    assert not isinstance(outs, str), f"LiteRT {which} cannot run this file: {outs}"
    return outs


def run_both(data, feeds, reference=True):
    got = wick.load(data)(*feeds)[0]
    ref = run_litert(data, feeds, reference=reference)[0]
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    return got, ref


def assert_float_match(got, ref, rel=FLOAT_REL, exact_zeros=True):
    """NaNs, infinities and (with exact_zeros) zero signs identical; finite values within
    rel*max(1, max|ref|)."""
    got = np.asarray(got, np.float32)
    ref = np.asarray(ref, np.float32)
    assert got.shape == ref.shape
    gn, rn = np.isnan(got), np.isnan(ref)
    assert np.array_equal(gn, rn), f"NaN positions differ:\nwick {got}\nref  {ref}"
    ok = ~rn
    g, r = got[ok], ref[ok]
    assert np.array_equal(np.isinf(g), np.isinf(r)) and np.array_equal(
        g[np.isinf(g)], r[np.isinf(r)]
    ), f"infinities differ:\nwick {got}\nref  {ref}"
    zero = (r == 0) if exact_zeros else np.zeros(r.shape, bool)
    assert np.array_equal(np.signbit(g[zero]), np.signbit(r[zero])) and np.all(g[zero] == 0), (
        f"zeros differ:\nwick {g[zero]}\nref  {r[zero]}"
    )
    fin = np.isfinite(r)
    if fin.any():
        bound = rel * max(1.0, float(np.max(np.abs(r[fin]))))
        err = float(np.max(np.abs(g[fin].astype(np.float64) - r[fin])))
        assert err <= bound, f"max error {err} > {bound}:\nwick {got}\nref  {ref}"


def assert_exact(got, ref):
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert got.tobytes() == ref.tobytes(), f"\nwick {got}\nref  {ref}"


def wick_fails(data, feeds, match):
    with pytest.raises(wick.WickError) as e:
        wick.load(data)(*feeds)
    assert re.search(match, str(e.value)), str(e.value)
    return e.value


# ------------------------------------------------------------------------------------------
# float unary math and parameterless activations
# ------------------------------------------------------------------------------------------

# Every float unary math op, from its record in src/kernels/reference/unary_ops.inc (the order of
# the runtime's enum): the values it draws (DOMAIN) and its oracle (LiteRT's reference resolver,
# or a numpy expression where that resolver lacks the op).
UNARY_OPS = unary_ops()
FLOAT_OPS = [op.name for op in UNARY_OPS]
NO_REF = {op.name for op in UNARY_OPS if not op.litert_reference}  # e.g. ELU, CEIL, ROUND
POSITIVE = {op.name for op in UNARY_OPS if op.domain == "POSITIVE"}
HALVES = {op.name for op in UNARY_OPS if op.domain == "HALVES"}
# Ops whose zero results LiteRT's default kernels sign differently per CPU (see below).
LITERT_ZERO_SIGN = {"ELU"}


def _numpy_oracle(expression):
    """A record's numpy statement of the IEEE formula (an expression of x), as a function."""
    code = compile(expression, "unary_ops.inc", "eval")
    return lambda x: eval(code, {"np": np}, {"x": x})


# numpy statements of the IEEE formulas, for special values of the NO_REF ops.
NUMPY_F32 = {op.name: _numpy_oracle(op.numpy) for op in UNARY_OPS if op.numpy is not None}

SHAPES = [(), (1,), (7,), (2, 3), (1, 4, 5, 3), (2, 1, 3, 1, 2)]


def _float_input(op, shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    if op in POSITIVE:
        x = np.abs(x) + np.float32(0.01)
    if op in HALVES:
        x = np.round(x * 2).astype(np.float32) / 2 if x.size else x  # many exact .5 ties
    return x


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_unary_random(op, shape):
    x = _float_input(op, shape, seed=len(shape) * 31 + len(op))
    # Rank 0 as a constant: the Python binding cannot feed 0-d inputs yet (ascontiguousarray
    # makes them 1-d).
    data, feeds = model(op, [np.asarray(x)], consts=(0,) if shape == () else ())
    got, ref = run_both(data, feeds, reference=op not in NO_REF)
    assert_float_match(got, ref)


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_unary_special_values(op):
    """NaN, ±inf, ±0, denormals, huge magnitudes, exact ties."""
    data, feeds = model(op, [SPECIAL])
    got = wick.load(data)(*feeds)[0]
    if op in NO_REF:
        with np.errstate(all="ignore"):
            expect = NUMPY_F32[op](SPECIAL).astype(np.float32)
        assert_float_match(got, expect, rel=1e-6)
        # LiteRT's default kernels agree except on denormal inputs (flushed to zero there) and,
        # for ELU, on the sign of ELU(-0): XNNPACK's AVX2 kernel gives +0, its AVX-512 one and
        # NumPy's expm1 (checked exactly above) -0. Zero signs are checked against NumPy.
        normal = ~((SPECIAL != 0) & (np.abs(SPECIAL) < np.finfo(np.float32).tiny))
        ref = run_litert(data, feeds)[0]
        assert_float_match(got[normal], ref[normal], exact_zeros=op not in LITERT_ZERO_SIGN)
    else:
        ref = run_litert(data, feeds, reference=True)[0]
        assert_float_match(got, ref, rel=1e-6)


def test_documented_special_results():
    """The results reference.h promises (wick_unary_op), independent of any oracle."""
    x = np.array([-1.0, -0.0, 0.0, np.nan, -0.5, 0.5, -1.5, 2.5, -2.5], np.float32)

    def run(op):
        data, feeds = model(op, [x])
        return wick.load(data)(*feeds)[0]

    log = run("LOG")
    assert np.isnan(log[0]) and log[1] == -np.inf and log[2] == -np.inf and np.isnan(log[3])
    sq = run("SQRT")
    assert np.isnan(sq[0]) and np.signbit(sq[1]) and sq[1] == 0 and sq[2] == 0
    rs = run("RSQRT")
    assert rs[1] == -np.inf and rs[2] == np.inf
    relu = run("RELU")
    assert np.signbit(relu[1]) and np.isnan(relu[3]) and relu[0] == 0
    rnd = run("ROUND")
    assert list(rnd[4:]) == [-0.0, 0.0, -2.0, 2.0, -2.0] and np.signbit(rnd[4])
    sign = run("SIGN")
    assert sign[0] == -1 and not np.signbit(sign[1]) and sign[1] == 0 and np.isnan(sign[3])
    neg = run("NEG")
    assert np.signbit(neg[2]) and not np.signbit(neg[1])


def test_float_unary_empty_tensor():
    x = np.zeros((2, 0, 3), np.float32)
    data, feeds = model("TANH", [x])
    got = wick.load(data)(*feeds)[0]
    assert got.shape == (2, 0, 3) and got.dtype == np.float32


def test_float_unary_constant_input_is_folded():
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    data, feeds = model("LOGISTIC", [x], consts=(0,))
    got, ref = run_both(data, feeds)
    assert_float_match(got, ref)


# ------------------------------------------------------------------------------------------
# integer and bool variants
# ------------------------------------------------------------------------------------------

INT_CASES = [
    ("ABS", "int32"),
    ("ABS", "int16"),
    ("NEG", "int32"),
    ("NEG", "int64"),
    ("SIGN", "int32"),
    ("ZEROS_LIKE", "int32"),
    ("ZEROS_LIKE", "int64"),
]


@pytest.mark.parametrize("op,dtype", INT_CASES)
def test_int_unary(op, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    x = np.concatenate(
        [
            np.array([0, 1, -1, info.max, info.min, info.min + 1], dtype),  # MIN wraps
            rng.integers(info.min, info.max, size=30, dtype=dtype, endpoint=True),
        ]
    ).reshape(4, 9)
    data, feeds = model(op, [x])
    # ABS int32 is version 5, which LiteRT's reference resolver does not register.
    got, ref = run_both(data, feeds, reference=False)
    assert_exact(got, ref)


def test_zeros_like_float():
    data, feeds = model("ZEROS_LIKE", [SPECIAL.reshape(5, 7)])
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)


def test_logical_not():
    x = np.random.default_rng(1).integers(0, 2, size=(3, 5)).astype(bool)
    data, feeds = model("LOGICAL_NOT", [x])
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)


def test_logical_not_nonzero_bytes_are_true():
    """A bool *input* may hold any non-zero byte: it reads as true (wick's rule).
    A bool *constant* must hold 0 or 1: the loader refuses anything else."""
    raw = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)
    data, feeds = model("LOGICAL_NOT", [raw])
    got = wick.load(data)(*feeds)[0]
    assert got.view(np.uint8).tolist() == [1, 0, 0, 0]
    data, _ = model("LOGICAL_NOT", [raw], consts=(0,))
    with pytest.raises(wick.WickError, match="must be 0 or 1"):
        wick.load(data)


@pytest.mark.parametrize(
    "op,x,match",
    [
        ("SQUARE", np.arange(4, dtype=np.int32), r"int32 is not supported \(float32\)"),
        ("ABS", np.arange(4, dtype=np.int64), r"int64 is not supported"),
        ("SIGN", np.arange(4, dtype=np.int64), r"int64 is not supported"),
        ("LOGICAL_NOT", np.arange(4, dtype=np.float32), r"float32 is not supported \(bool\)"),
        ("EXP", np.arange(4, dtype=np.int32), r"int32 is not supported"),
    ],
)
def test_unsupported_types_are_refused(op, x, match):
    data, feeds = model(op, [x])
    wick_fails(data, feeds, match)


def test_quantized_input_is_refused_with_type_named():
    x = np.zeros((2, 3), np.int8)
    data, feeds = model(
        "EXP",  # (quantized RELU is implemented in activations_quantized.c)
        [x],
        in_quant=dict(scale=[0.1], zero_point=[0]),
        out_quant=dict(scale=[0.1], zero_point=[0]),
    )
    wick_fails(data, feeds, r"quantized int8 is not supported")


def test_output_type_mismatch_is_refused():
    x = np.ones(4, np.float32)
    data, feeds = model("TANH", [x], out_dtype="int32")
    wick_fails(data, feeds, r"declared int32 but the op produces float32")


def test_wrong_arity_is_refused():
    w = ModelWriter()
    sg = w.add_subgraph()
    a = sg.add_tensor("a", [3], "float32")
    b = sg.add_tensor("b", [3], "float32")
    y = sg.add_tensor("y", [3], "float32")
    sg.add_operator("EXP", [a, b], [y])
    sg.set_inputs([a, b])
    sg.set_outputs([y])
    wick_fails(w.finish(), [np.ones(3, np.float32)] * 2, r"EXP.*takes 1\.\.1 inputs")


# ------------------------------------------------------------------------------------------
# activations with parameters: LEAKY_RELU, GELU, PRELU
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.2, -2.0, 0.0, 1.5])
@pytest.mark.parametrize("special", [False, True])
def test_leaky_relu(alpha, special):
    x = (
        SPECIAL
        if special
        else (np.random.default_rng(5).standard_normal((2, 3, 4)) * 3).astype(np.float32)
    )
    data, feeds = model("LEAKY_RELU", [x], options=dict(alpha=alpha))
    got, ref = run_both(data, feeds)
    assert_float_match(got, ref, rel=1e-6)


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("special", [False, True])
def test_gelu(approximate, special):
    # LiteRT computes in float32 with Eigen's erf/tanh approximations; wick in double.
    x = (
        SPECIAL
        if special
        else (np.random.default_rng(6).standard_normal((3, 17)) * 3).astype(np.float32)
    )
    data, feeds = model("GELU", [x], options=dict(approximate=approximate))
    got, ref = run_both(data, feeds)
    # LiteRT's 1 + erf(x) cancels to 0 below x ~ -4 where the true value is a tiny negative:
    # zeros are compared by tolerance, not sign, here.
    assert_float_match(got, ref, exact_zeros=False)
    # And against the formula in float64 (GELU's definition), rounded once. The tanh form is
    # written as x / (1 + exp(-2u)) (= x/2 (1 + tanh u)): 1 + tanh(u) cancels in double below
    # x ~ -5.5, where wick's vectorized kernel returns the tiny correct value.
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if approximate:
            u = np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64**3)
            expect = np.where(
                np.isinf(x64), 0.5 * x64 * (1 + np.tanh(u)), x64 / (1 + np.exp(-2 * u))
            )
        else:
            expect = 0.5 * x64 * np.vectorize(math.erfc)(-x64 / np.sqrt(2))
    assert_float_match(got, expect.astype(np.float32), rel=1e-6)


@pytest.mark.parametrize(
    "in_shape,alpha_shape",
    [
        ((1, 4, 4, 3), (3,)),
        ((1, 4, 4, 3), (1, 1, 3)),
        ((2, 4, 4, 3), (4, 4, 3)),
        ((1, 4, 4, 3), (1, 4, 1, 1)),
        ((2, 5), (1,)),
        ((2, 5), ()),
        ((6,), (6,)),
        ((1, 96, 96, 32), (1, 1, 32)),  # MediaPipe's size: the row loop split into tasks
        ((1, 40, 40, 16), (1,)),  # a scalar alpha on the row loop
    ],
    ids=str,
)
@pytest.mark.parametrize("alpha_const", [True, False])
def test_prelu(in_shape, alpha_shape, alpha_const):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(in_shape).astype(np.float32)
    x.flat[0] = -0.0
    alpha = rng.uniform(-1, 1, alpha_shape).astype(np.float32)
    # (a rank-0 alpha is always a constant: the binding cannot feed 0-d inputs yet)
    data, feeds = model("PRELU", [x, alpha], consts=(1,) if alpha_const or not alpha.ndim else ())
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)  # one multiply: bit-exact
    assert_exact(wick.load(data, num_threads=2)(*feeds)[0], ref)


def test_prelu_rank5_against_numpy():
    # LiteRT's PRELU broadcasts through a 4-D helper; rank 5 is checked with numpy.
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 1, 3, 2, 4)).astype(np.float32)
    alpha = rng.uniform(-1, 1, (1, 3, 1, 4)).astype(np.float32)
    data, feeds = model("PRELU", [x, alpha], consts=(1,))
    got = wick.load(data)(*feeds)[0]
    assert_exact(got, np.where(x >= 0, x, x * alpha).astype(np.float32))


@pytest.mark.parametrize(
    "in_shape,alpha_shape,match",
    [
        ((1, 4, 4, 3), (5,), r"do not broadcast"),
        ((1, 4, 4, 3), (2, 4, 4, 3), r"must broadcast into the input's shape"),
        ((4, 3), (1, 4, 3), r"must broadcast into the input's shape"),
    ],
)
def test_prelu_bad_alpha_shape(in_shape, alpha_shape, match):
    x = np.ones(in_shape, np.float32)
    alpha = np.ones(alpha_shape, np.float32)
    data, feeds = model("PRELU", [x, alpha], consts=(1,))
    wick_fails(data, feeds, "PRELU.*" + match)


def test_prelu_alpha_type_must_match():
    x = np.ones((2, 3), np.float32)
    alpha = np.ones(3, np.int32)
    data, feeds = model("PRELU", [x, alpha], consts=(1,))
    wick_fails(data, feeds, r"alpha type int32 is not supported")


def test_gelu_int16_refused():
    # (int8/uint8 GELU is implemented and tested in test_quantized_ops.py)
    x = np.zeros(4, np.int16)
    data, feeds = model(
        "GELU",
        [x],
        in_quant=dict(scale=[0.1], zero_point=[0]),
        out_quant=dict(scale=[0.1], zero_point=[0]),
    )
    wick_fails(data, feeds, r"GELU.*int16 GELU is not implemented")


# ------------------------------------------------------------------------------------------
# CAST
# ------------------------------------------------------------------------------------------

CAST_TYPES = ["float32", "float16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]


def _cast_values(src, seed):
    """Values every destination represents without saturation, plus a few edge ones."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(src)
    if dt == np.bool_:
        return rng.integers(0, 2, 24).astype(bool)
    if dt.kind == "f":
        v = np.concatenate([rng.uniform(-127, 127, 18), [0.0, -0.0, 0.5, -0.99, 126.75, 1e-3]])
        return v.astype(dt)
    info = np.iinfo(dt)
    v = np.concatenate(
        [rng.integers(info.min, info.max, 20, endpoint=True), [0, 1, info.min, info.max]]
    )
    return v.astype(dt)


@pytest.mark.parametrize("dst", CAST_TYPES)
@pytest.mark.parametrize("src", CAST_TYPES)
def test_cast_pairs(src, dst):
    x = _cast_values(src, seed=CAST_TYPES.index(src) * 10 + CAST_TYPES.index(dst)).reshape(4, 6)
    data, feeds = model("CAST", [x], out_dtype=dst)
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)


@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "int32", "int64", "bool", "float16"])
@pytest.mark.parametrize("src", ["float32", "float64"])
def test_cast_float_special_values(src, dst):
    """Truncation toward zero, saturation at the type's range, ±inf; NaN -> 0 (wick's rule)."""
    x = np.array(
        [
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            1e-45,
            0.7,
            -0.7,
            127.9,
            128.0,
            -128.9,
            -129.0,
            255.9,
            256.0,
            32767.9,
            -32768.9,
            65519.9,
            65520.0,
            2147483647.0,
            2147483648.0,
            -2147483904.0,
            1e10,
            -1e10,
            9.3e18,
            -9.3e18,
            3.4e38,
            -3.4e38,
        ],
        np.float64,
    ).astype(src)
    data, feeds = model("CAST", [x], out_dtype=dst)
    got, ref = run_both(data, feeds)
    nan = np.isnan(x)
    if np.dtype(dst).kind in "iu":
        assert np.all(got[nan] == 0)  # LiteRT 2.x: the type's maximum
        assert_exact(got[~nan], ref[~nan])
    else:
        assert_exact(got, ref) if dst == "bool" else assert_exact(
            got.view(np.uint16), ref.view(np.uint16)
        )


def test_cast_float32_to_float16_rounding():
    """Round to nearest even around every float16 binade, subnormals, overflow; vs numpy."""
    rng = np.random.default_rng(9)
    h = rng.integers(0, 0x7C00, 4000).astype(np.uint16).view(np.float16).astype(np.float32)
    nxt = np.nextafter(h, np.float32(np.inf))
    halves = h + (np.spacing(h.astype(np.float16)).astype(np.float32) / 2)  # exact ties
    x = np.concatenate([h, -h, nxt, halves, -halves, [65504, 65519.99, 65520, 6e-8, 2.9e-8, 3e-8]])
    x = x.astype(np.float32)
    data, feeds = model("CAST", [x], out_dtype="float16")
    got = wick.load(data)(*feeds)[0]
    assert_exact(got.view(np.uint16), x.astype(np.float16).view(np.uint16))
    ref = run_litert(data, feeds, reference=True)[0]
    assert_exact(got.view(np.uint16), ref.view(np.uint16))


def test_cast_float16_to_float32_all_bit_patterns():
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    data, feeds = model("CAST", [h], out_dtype="float32")
    got = wick.load(data)(*feeds)[0]
    exp = h.astype(np.float32)
    nan = np.isnan(exp)
    assert np.array_equal(np.isnan(got), nan)
    assert_exact(got[~nan], exp[~nan])


def test_cast_nonzero_bool_bytes_read_as_one():
    raw = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)
    data, feeds = model("CAST", [raw], out_dtype="int32")
    assert wick.load(data)(*feeds)[0].tolist() == [0, 1, 1, 1]


@pytest.mark.parametrize("dst", ["string", "complex64"])
def test_cast_unsupported_type(dst):
    x = np.ones(3, np.float32)
    try:
        data, feeds = model("CAST", [x], out_dtype=dst)
    except ValueError:
        pytest.skip("the writer cannot express this type")
    wick_fails(data, feeds, r"CAST.*output type \w+ is not supported")


def test_cast_version_too_new_is_refused():
    x = np.ones(3, np.float32)
    data, feeds = model("CAST", [x], out_dtype="int32", version=7)
    wick_fails(data, feeds, r"CAST.*version 7")


# ------------------------------------------------------------------------------------------
# DEQUANTIZE
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype,scale,zp",
    [
        ("int8", 0.037, 5),
        ("int8", 1.5e-3, -128),
        ("uint8", 0.1, 128),
        ("uint8", 2.0, 0),
        ("int16", 0.00012, 0),
        ("int16", 3.0517578e-05, 0),
    ],
)
@pytest.mark.parametrize("const", [False, True])
def test_dequantize_per_tensor(dtype, scale, zp, const):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(10)
    q = np.concatenate([[info.min, info.max, 0, 1], rng.integers(info.min, info.max, 60)]).astype(
        dtype
    )
    q = q.reshape(2, 4, 8)
    data, feeds = model(
        "DEQUANTIZE",
        [q],
        out_dtype="float32",
        in_quant=dict(scale=[scale], zero_point=[zp]),
        consts=(0,) if const else (),
    )
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)


@pytest.mark.parametrize(
    "shape,axis", [((3, 4), 0), ((2, 5), 1), ((4, 2, 2, 3), 3), ((3, 2, 4), 1)]
)
@pytest.mark.parametrize("const", [False, True])
def test_dequantize_per_channel(shape, axis, const):
    rng = np.random.default_rng(11)
    q = rng.integers(-128, 127, shape, endpoint=True).astype(np.int8)
    n = shape[axis]
    scale = rng.uniform(1e-3, 0.5, n).astype(np.float32).tolist()
    zp = rng.integers(-5, 5, n).tolist()
    data, feeds = model(
        "DEQUANTIZE",
        [q],
        out_dtype="float32",
        consts=(0,) if const else (),
        in_quant=dict(scale=scale, zero_point=zp, quantized_dimension=axis),
    )
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)


@pytest.mark.parametrize("const", [False, True])
def test_dequantize_float16(const):
    bits = np.arange(0, 65536, 7, dtype=np.uint32).astype(np.uint16)
    h = bits.view(np.float16)
    data, feeds = model("DEQUANTIZE", [h], out_dtype="float32", consts=(0,) if const else ())
    got = wick.load(data)(*feeds)[0]
    ref = run_litert(data, feeds, reference=True)[0]
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    assert_exact(got[~nan], ref[~nan])


def test_dequantize_without_quantization_is_refused():
    q = np.zeros(4, np.int8)
    data, feeds = model("DEQUANTIZE", [q], out_dtype="float32")
    wick_fails(data, feeds, r"DEQUANTIZE.*input \(int8\) has no quantization parameters")


def test_dequantize_zero_point_outside_int32_is_refused():
    q = np.zeros(4, np.int8)
    data, feeds = model(
        "DEQUANTIZE", [q], out_dtype="float32", in_quant=dict(scale=[0.5], zero_point=[2**40])
    )
    wick_fails(data, feeds, r"zero_point\[0\] = 1099511627776 is outside int32")


def test_dequantize_per_channel_after_resize_is_refused():
    """The verifier checked the declared shape; a resized input must be checked again."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor(
        "x",
        [2, 3],
        "int8",
        shape_signature=[2, -1],
        quant=dict(scale=[0.1, 0.2, 0.3], zero_point=[0, 0, 0], quantized_dimension=1),
    )
    y = sg.add_tensor("y", [2, 3], "float32", shape_signature=[2, -1])
    sg.add_operator("DEQUANTIZE", [x], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    rt = wick.load(w.finish())
    q = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    assert rt(q)[0].shape == (2, 3)
    with pytest.raises(wick.WickError, match=r"3 per-channel scales for dimension 1 of size 4"):
        rt(np.zeros((2, 4), np.int8))


def test_dequantize_float_input_is_refused():
    data, feeds = model("DEQUANTIZE", [np.zeros(3, np.float32)], out_dtype="float32")
    wick_fails(data, feeds, r"input type float32 is not supported")


# ------------------------------------------------------------------------------------------
# QUANTIZE
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype,scale,zp",
    [
        ("int8", 0.1, 3),
        ("int8", 0.02, -128),
        ("int8", 0.5, 0),
        ("uint8", 0.1, 128),
        ("uint8", 0.05, 0),
        ("int16", 0.001, 0),
        ("int16", 3.0517578e-05, 0),
    ],
)
def test_quantize_per_tensor(dtype, scale, zp):
    rng = np.random.default_rng(12)
    info = np.iinfo(dtype)
    s = np.float32(scale)
    span = (info.max - info.min) * float(s)
    x = rng.uniform(-span, span, 200).astype(np.float32)
    ties = ((np.arange(-40, 40) + 0.5) * s).astype(
        np.float32
    )  # x/scale lands on .5 (or next to it)
    x = np.concatenate([x, ties, [0.0, -0.0, 1e-30, -1e-30]]).astype(np.float32)
    data, feeds = model(
        "QUANTIZE", [x], out_dtype=dtype, out_quant=dict(scale=[scale], zero_point=[zp])
    )
    got, ref = run_both(data, feeds)  # reference: round half away from zero, like wick
    assert_exact(got, ref)


def test_quantize_special_values_saturate():
    x = np.array(
        [np.nan, np.inf, -np.inf, 1e10, -1e10, 3.4e38, -3.4e38, 12.7, 12.75, -12.85], np.float32
    )
    data, feeds = model(
        "QUANTIZE", [x], out_dtype="int8", out_quant=dict(scale=[0.1], zero_point=[3])
    )
    got = wick.load(data)(*feeds)[0]
    assert got.tolist() == [3, 127, -128, 127, -128, 127, -128, 127, 127, -126]
    # LiteRT's reference kernel agrees on finite values that fit int32 after division.
    ref = run_litert(data, feeds, reference=True)[0]
    assert_exact(got[-3:], ref[-3:])


@pytest.mark.parametrize("shape,axis", [((3, 4), 0), ((2, 5), 1), ((2, 2, 3), 2)])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_quantize_per_channel(shape, axis, dtype):
    rng = np.random.default_rng(13)
    n = shape[axis]
    scale = rng.uniform(0.01, 0.2, n).astype(np.float32).tolist()
    zp = rng.integers(0, 10, n).tolist() if dtype == "uint8" else rng.integers(-5, 5, n).tolist()
    x = (rng.standard_normal(shape) * 5).astype(np.float32)
    data, feeds = model(
        "QUANTIZE",
        [x],
        out_dtype=dtype,
        out_quant=dict(scale=scale, zero_point=zp, quantized_dimension=axis),
    )
    got, ref = run_both(data, feeds)
    assert_exact(got, ref)


@pytest.mark.parametrize(
    "scale,match",
    [
        (0.0, r"scale\[0\] = 0 must be positive and finite"),
        (-0.5, r"scale\[0\] = -0.5 must be positive and finite"),
        (float("inf"), r"must be positive and finite"),
        (float("nan"), r"must be positive and finite"),
    ],
)
def test_quantize_bad_scale_is_refused(scale, match):
    x = np.ones(3, np.float32)
    data, feeds = model(
        "QUANTIZE", [x], out_dtype="int8", out_quant=dict(scale=[scale], zero_point=[0])
    )
    wick_fails(data, feeds, r"QUANTIZE.*" + match)


def test_quantize_requantize_unsupported_pair_is_refused():
    # (requantization itself is tested in test_quantized_ops.py; int8 -> int32 is not a
    # pair LiteRT implements)
    x = np.zeros(3, np.int8)
    data, feeds = model(
        "QUANTIZE",
        [x],
        out_dtype="int32",
        in_quant=dict(scale=[0.1], zero_point=[0]),
        out_quant=dict(scale=[0.2], zero_point=[0]),
    )
    e = wick_fails(data, feeds, r"QUANTIZE.*requantizing int8 to int32 is not supported")
    assert e.code == 3  # WICK_ERR_UNSUPPORTED_OP


def test_quantize_output_without_parameters_is_refused():
    data, feeds = model("QUANTIZE", [np.ones(3, np.float32)], out_dtype="int8")
    wick_fails(data, feeds, r"output \(int8\) has no quantization parameters")


def test_quantize_dequantize_round_trip():
    """QUANTIZE then DEQUANTIZE in one graph (an activation fake-quant pair)."""
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [4, 8], "float32")
    q = sg.add_tensor("q", [4, 8], "int8", quant=dict(scale=[0.05], zero_point=[-3]))
    y = sg.add_tensor("y", [4, 8], "float32")
    sg.add_operator("QUANTIZE", [x], [q])
    sg.add_operator("DEQUANTIZE", [q], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    v = (np.random.default_rng(14).standard_normal((4, 8)) * 3).astype(np.float32)
    got = wick.load(data)(v)[0]
    ref = run_litert(data, [v], reference=True)[0]
    assert_exact(got, ref)
