"""The TFLite writer against LiteRT: single-op files load and compute what numpy says.

LiteRT (ai_edge_litert) is the oracle for the file format; numpy is the oracle for arithmetic.
Float tolerances are 1e-5 relative (single fp32 ops with different summation order).
"""

from __future__ import annotations

import numpy as np
import pytest

from wick.tflite import schema
from wick.tflite.ops import min_version
from wick.tflite.versions import OpSig, TensorSig
from wick.tflite.writer import ModelWriter

Interpreter = pytest.importorskip("ai_edge_litert.interpreter").Interpreter

RNG = np.random.default_rng(0)


def run(data: bytes, *inputs: np.ndarray) -> list[np.ndarray]:
    it = Interpreter(model_content=data)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs, strict=True):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def close(a, b, tol=1e-5):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max())))


def test_schema_facts():
    assert schema.BUILTIN_OPERATORS["ADD"] == 0
    assert schema.BUILTIN_OPERATORS["STABLEHLO_COMPOSITE"] == 206
    assert len(schema.BUILTIN_OPERATORS) >= 208
    assert schema.OPTIONS_TABLES["Conv2DOptions"].type == 1
    assert schema.OPTIONS_TABLES["Pool2DOptions"].type == 5
    assert schema.OPTIONS_TABLES["FullyConnectedOptions"].type == 8
    assert schema.OPTIONS_TABLES["AddOptions"].type == 11
    t = schema.OPTIONS_TABLES["StableHLOCompositeOptions"]
    assert (t.union, t.type) == (2, 21)
    assert schema.OP_OPTIONS["MAX_POOL_2D"] == "Pool2DOptions"
    assert schema.OP_OPTIONS["MEAN"] == "ReducerOptions"
    # deprecated fields keep their ids: ResizeBilinear's align_corners is field 2
    f = {f.name: f.id for f in schema.OPTIONS_TABLES["ResizeBilinearOptions"].fields}
    assert f == {"align_corners": 2, "half_pixel_centers": 3}
    assert schema.CORE_FIELDS["Operator"]["builtin_options_2"] == 11


def test_add_broadcast():
    w = ModelWriter(description="add")
    sg = w.add_subgraph()
    a = sg.add_tensor("a", [2, 3, 4], "float32")
    b = sg.add_tensor("b", [1, 4], np.float32)
    y = sg.add_tensor("y", [2, 3, 4], "float32")
    sg.add_operator("ADD", [a, b], [y], options=dict(fused_activation_function="NONE"))
    sg.set_inputs([a, b])
    sg.set_outputs([y])
    data = w.finish()
    assert data[4:8] == b"TFL3"
    xa = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    xb = RNG.standard_normal((1, 4)).astype(np.float32)
    (out,) = run(data, xa, xb)
    close(out, xa + xb)


def test_add_fused_relu6_with_constant():
    w = ModelWriter()
    sg = w.add_subgraph()
    a = sg.add_tensor("a", [4, 5], "float32")
    c = sg.add_constant("c", np.full((5,), 2.5, np.float32))
    y = sg.add_tensor("y", [4, 5], "float32")
    sg.add_operator("ADD", [a, c], [y], options=dict(fused_activation_function="RELU6"))
    sg.set_inputs([a])
    sg.set_outputs([y])
    x = RNG.standard_normal((4, 5)).astype(np.float32) * 4
    (out,) = run(w.finish(), x)
    close(out, np.clip(x + 2.5, 0, 6))


def _conv_ref(x, w, b, stride, pad_before):
    # x NHWC, w OHWI; explicit zero padding already chosen by the caller.
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    (pt, pb), (pl, pr) = pad_before
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    oh = (xp.shape[1] - kh) // stride + 1
    ow = (xp.shape[2] - kw) // stride + 1
    y = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            y[:, i, j, :] = np.einsum("nhwc,ohwc->no", patch, w)
    return (y + b).astype(np.float32)


@pytest.mark.parametrize("padding,stride", [("SAME", 1), ("VALID", 2), ("SAME", 2)])
def test_conv2d(padding, stride):
    x = RNG.standard_normal((1, 7, 7, 3)).astype(np.float32)
    k = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    if padding == "SAME":
        out_hw = -(-7 // stride)
        total = max(0, (out_hw - 1) * stride + 3 - 7)
        pads = ((total // 2, total - total // 2),) * 2
    else:
        out_hw = (7 - 3) // stride + 1
        pads = ((0, 0), (0, 0))
    w = ModelWriter()
    sg = w.add_subgraph()
    xi = sg.add_tensor("x", x.shape, "float32")
    ki = sg.add_constant("k", k)
    bi = sg.add_constant("b", bias)
    yi = sg.add_tensor("y", [1, out_hw, out_hw, 4], "float32")
    sg.add_operator(
        "CONV_2D",
        [xi, ki, bi],
        [yi],
        options=dict(padding=padding, stride_w=stride, stride_h=stride),
    )
    sg.set_inputs([xi])
    sg.set_outputs([yi])
    (out,) = run(w.finish(), x)
    close(out, _conv_ref(x, k, bias, stride, pads))


def test_softmax_beta_written_explicitly():
    # beta defaults to 0.0 in the schema; the writer writes the value it is given (1.0 here)
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [3, 10], "float32")
    y = sg.add_tensor("y", [3, 10], "float32")
    sg.add_operator("SOFTMAX", [x], [y], options=dict(beta=1.0))
    sg.set_inputs([x])
    sg.set_outputs([y])
    xv = RNG.standard_normal((3, 10)).astype(np.float32)
    (out,) = run(w.finish(), xv)
    e = np.exp(xv - xv.max(-1, keepdims=True))
    close(out, e / e.sum(-1, keepdims=True))


@pytest.mark.parametrize("keep_num_dims", [False, True])
def test_fully_connected(keep_num_dims):
    xv = RNG.standard_normal((2, 3, 8)).astype(np.float32)
    wt = RNG.standard_normal((5, 8)).astype(np.float32)
    bv = RNG.standard_normal(5).astype(np.float32)
    ref = xv @ wt.T + bv
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", xv.shape, "float32")
    wi = sg.add_constant("w", wt)
    bi = sg.add_constant("b", bv)
    y = sg.add_tensor("y", [2, 3, 5] if keep_num_dims else [6, 5], "float32")
    sg.add_operator("FULLY_CONNECTED", [x, wi, bi], [y], options=dict(keep_num_dims=keep_num_dims))
    sg.set_inputs([x])
    sg.set_outputs([y])
    assert w.operator_codes == [("FULLY_CONNECTED", 5 if keep_num_dims else 1)]
    (out,) = run(w.finish(), xv)
    close(out, ref if keep_num_dims else ref.reshape(6, 5))


def test_fully_connected_no_bias():
    xv = RNG.standard_normal((2, 8)).astype(np.float32)
    wt = RNG.standard_normal((5, 8)).astype(np.float32)
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", xv.shape, "float32")
    wi = sg.add_constant("w", wt)
    y = sg.add_tensor("y", [2, 5], "float32")
    sg.add_operator("FULLY_CONNECTED", [x, wi, -1], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    (out,) = run(w.finish(), xv)
    close(out, xv @ wt.T)


def test_two_signatures():
    w = ModelWriter()
    s0 = w.add_subgraph("double")
    x0 = s0.add_tensor("x", [4], "float32")
    y0 = s0.add_tensor("y", [4], "float32")
    s0.add_operator("ADD", [x0, x0], [y0])
    s0.set_inputs([x0])
    s0.set_outputs([y0])
    s1 = w.add_subgraph("square")
    x1 = s1.add_tensor("x", [4], "float32")
    y1 = s1.add_tensor("y", [4], "float32")
    s1.add_operator("MUL", [x1, x1], [y1])
    s1.set_inputs([x1])
    s1.set_outputs([y1])
    w.add_signature("double", s0, inputs={"inp": x0}, outputs={"out": y0})
    w.add_signature("square", s1, inputs={"inp": x1}, outputs={"out": y1})
    it = Interpreter(model_content=w.finish())
    assert set(it.get_signature_list()) == {"double", "square"}
    v = np.arange(4, dtype=np.float32)
    close(it.get_signature_runner("double")(inp=v)["out"], 2 * v)
    close(it.get_signature_runner("square")(inp=v)["out"], v * v)


def test_int8_quantized_tensor():
    # QUANTIZE float -> int8 then DEQUANTIZE back: checks scale/zero_point are read as written.
    scale, zp = 0.05, -3
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, 6], "float32")
    q = sg.add_tensor("q", [1, 6], "int8", quant=dict(scale=[scale], zero_point=[zp]))
    y = sg.add_tensor("y", [1, 6], "float32")
    sg.add_operator("QUANTIZE", [x], [q])
    sg.add_operator("DEQUANTIZE", [q], [y])
    sg.set_inputs([x])
    sg.set_outputs([q, y])
    assert w.operator_codes == [("QUANTIZE", 1), ("DEQUANTIZE", 2)]
    xv = np.array([[-1.0, -0.1, 0.0, 0.12, 2.0, 10.0]], np.float32)
    qv, yv = run(w.finish(), xv)
    ref_q = np.clip(np.round(xv / scale) + zp, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(qv, ref_q)
    close(yv, (ref_q.astype(np.float32) - zp) * scale)
    it = Interpreter(model_content=w.finish())
    details = {d["name"]: d for d in it.get_tensor_details()}
    assert details["q"]["quantization"] == pytest.approx((scale, zp))


def test_int8_per_channel_constant_dequantize():
    wq = RNG.integers(-127, 128, size=(3, 4)).astype(np.int8)
    scales = np.array([0.1, 0.2, 0.3], np.float32)
    w = ModelWriter()
    sg = w.add_subgraph()
    c = sg.add_constant(
        "w", wq, quant=dict(scale=scales, zero_point=[0, 0, 0], quantized_dimension=0)
    )
    y = sg.add_tensor("y", [3, 4], "float32")
    x = sg.add_tensor("x", [3, 4], "float32")
    z = sg.add_tensor("z", [3, 4], "float32")
    sg.add_operator("DEQUANTIZE", [c], [y])
    sg.add_operator("ADD", [x, y], [z])
    sg.set_inputs([x])
    sg.set_outputs([z])
    assert ("DEQUANTIZE", 5) in w.operator_codes
    (out,) = run(w.finish(), np.zeros((3, 4), np.float32))
    close(out, wq.astype(np.float32) * scales[:, None])


def test_external_buffers_large_model_path():
    # Force the >2 GB layout with a tiny threshold: data after the flatbuffer, offset/size.
    k = RNG.standard_normal((64, 32)).astype(np.float32)
    bias = RNG.standard_normal(64).astype(np.float32)
    w = ModelWriter(external_data_threshold=16)
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [2, 32], "float32")
    ki = sg.add_constant("k", k)
    bi = sg.add_constant("b", bias)
    y = sg.add_tensor("y", [2, 64], "float32")
    sg.add_operator("FULLY_CONNECTED", [x, ki, bi], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    kb = k.tobytes()
    pos = data.find(kb)
    assert pos > 0 and pos % 16 == 0
    xv = RNG.standard_normal((2, 32)).astype(np.float32)
    (out,) = run(data, xv)
    close(out, xv @ k.T + bias)
    # Same model in the normal layout has identical results.
    w.external_data_threshold = 1 << 40
    (out2,) = run(w.finish(), xv)
    np.testing.assert_array_equal(out, out2)


def test_constant_alignment_and_dedupe():
    w = ModelWriter()
    sg = w.add_subgraph()
    a = sg.add_constant("a", np.arange(3, dtype=np.int8))
    b = sg.add_constant("b", np.arange(7, dtype=np.float32))
    c = sg.add_constant("c", np.arange(7, dtype=np.float32))
    assert sg._tensors[b].buffer == sg._tensors[c].buffer != sg._tensors[a].buffer
    x = sg.add_tensor("x", [7], "float32")
    y = sg.add_tensor("y", [7], "float32")
    sg.add_operator("ADD", [x, b], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    data = w.finish()
    assert data.find(np.arange(7, dtype=np.float32).tobytes()) % 16 == 0


def test_dynamic_batch_shape_signature():
    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [None, 4], "float32")
    y = sg.add_tensor("y", [None, 4], "float32")
    sg.add_operator("RELU", [x], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    it = Interpreter(model_content=w.finish())
    d = it.get_input_details()[0]
    assert list(d["shape_signature"]) == [-1, 4]
    it.resize_tensor_input(d["index"], [3, 4])
    it.allocate_tensors()
    xv = RNG.standard_normal((3, 4)).astype(np.float32)
    it.set_tensor(d["index"], xv)
    it.invoke()
    close(it.get_tensor(it.get_output_details()[0]["index"]), np.maximum(xv, 0))


def test_custom_op_and_composite_are_written():
    w = ModelWriter()
    main = w.add_subgraph("main")
    dec = w.add_subgraph("decomp")
    dx = dec.add_tensor("x", [4], "float32")
    dy = dec.add_tensor("y", [4], "float32")
    dec.add_operator("LOGISTIC", [dx], [dy])
    dec.set_inputs([dx])
    dec.set_outputs([dy])
    x = main.add_tensor("x", [4], "float32")
    y = main.add_tensor("y", [4], "float32")
    main.add_operator(
        "STABLEHLO_COMPOSITE",
        [x],
        [y],
        options=dict(name="wick.sigmoid", decomposition_subgraph_index=1, version=0),
    )
    main.set_inputs([x])
    main.set_outputs([y])
    data = w.finish()
    # Read back with the generated reader from the LiteRT wheel (test oracle only).
    from ai_edge_litert import schema_py_generated as g

    m = g.Model.GetRootAs(data, 0)
    op = m.Subgraphs(0).Operators(0)
    assert op.BuiltinOptions2Type() == 21
    opts = g.StableHLOCompositeOptions()
    t = op.BuiltinOptions2()
    opts.Init(t.Bytes, t.Pos)
    assert opts.Name() == b"wick.sigmoid" and opts.DecompositionSubgraphIndex() == 1
    code = m.OperatorCodes(op.OpcodeIndex())
    assert code.BuiltinCode() == 206 and code.DeprecatedBuiltinCode() == 127

    w2 = ModelWriter()
    sg = w2.add_subgraph()
    x = sg.add_tensor("x", [4], "float32")
    y = sg.add_tensor("y", [4], "float32")
    sg.add_operator("CUSTOM", [x], [y], custom_code="WickFoo", custom_options=b"\x00")
    sg.set_inputs([x])
    sg.set_outputs([y])
    m2 = g.Model.GetRootAs(w2.finish(), 0)
    assert m2.OperatorCodes(0).CustomCode() == b"WickFoo"
    assert m2.OperatorCodes(0).BuiltinCode() == 32


def test_options_written_explicitly_and_checked():
    from ai_edge_litert import schema_py_generated as g

    w = ModelWriter()
    sg = w.add_subgraph()
    x = sg.add_tensor("x", [1, 4, 4, 2], "float32")
    y = sg.add_tensor("y", [1, 4, 4, 2], "float32")
    sg.add_operator("MAX_POOL_2D", [x], [y], options=dict(filter_width=1, filter_height=1))
    with pytest.raises(ValueError, match="unknown option"):
        sg.add_operator("MAX_POOL_2D", [x], [y], options=dict(stride=1))
    with pytest.raises(ValueError, match="enum"):
        sg.add_operator("MAX_POOL_2D", [x], [y], options=dict(padding="BOGUS"))
    sg.set_inputs([x])
    sg.set_outputs([y])
    m = g.Model.GetRootAs(w.finish(), 0)
    t = m.Subgraphs(0).Operators(0).BuiltinOptions()
    # every field of Pool2DOptions has a vtable entry, even padding=SAME(0) and strides 0
    vt = t.Pos - int.from_bytes(t.Bytes[t.Pos : t.Pos + 4], "little", signed=True)
    nfields = (int.from_bytes(t.Bytes[vt : vt + 2], "little") - 4) // 2
    entries = [
        int.from_bytes(t.Bytes[vt + 4 + 2 * i : vt + 6 + 2 * i], "little") for i in range(nfields)
    ]
    assert nfields == 6 and all(e != 0 for e in entries)


@pytest.mark.parametrize(
    "op,ins,outs,opts,ver",
    [
        ("CONV_2D", ["float32", "float32", "float32"], ["float32"], {}, 1),
        ("CONV_2D", ["int8", "int8", "int32"], ["int8"], {}, 3),
        ("DEPTHWISE_CONV_2D", ["float32", "float32"], ["float32"], {"dilation_w_factor": 2}, 2),
        ("DEPTHWISE_CONV_2D", ["int8", "int8"], ["int8"], {"dilation_w_factor": 2}, 3),
        (
            "FULLY_CONNECTED",
            ["float32", "float32", "float32"],
            ["float32"],
            {"keep_num_dims": 1},
            5,
        ),
        ("FULLY_CONNECTED", ["int8", "int8", "int32"], ["int8"], {}, 4),
        ("ADD", ["int64", "int64"], ["int64"], {}, 4),
        ("BROADCAST_TO", ["float32", "int32"], ["float32"], {}, 2),
        ("FLOOR_DIV", ["float32", "float32"], ["float32"], {}, 2),
        ("SOFTMAX", ["float32"], ["float32"], {}, 1),
        ("EXP", ["float32"], ["float32"], {}, 1),
    ],
)
def test_min_versions(op, ins, outs, opts, ver):
    sig = OpSig(op, [TensorSig(t, (1, 4, 4, 4)) for t in ins], [TensorSig(t) for t in outs], opts)
    assert min_version(sig) == ver
