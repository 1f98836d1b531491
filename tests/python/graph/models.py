"""Small .tflite files built with wick's writer for the graph tests: control flow (WHILE with
cond/body subgraphs) and a quantized chain with a float island (DEQUANTIZE -> float op ->
QUANTIZE between int8 ops)."""

from __future__ import annotations

import numpy as np

from wick.tflite import ModelWriter

Q = {"scale": [0.05], "zero_point": [0]}


def float_island_model() -> bytes:
    """x f32 -> QUANTIZE -> ADD(i8) -> DEQUANTIZE -> LOGISTIC(f32) -> QUANTIZE -> ADD(i8)
    -> DEQUANTIZE -> y: LOGISTIC is the float island; a TRANSPOSE at the end as well."""
    w = ModelWriter(description="float island test")
    sg = w.add_subgraph("main")
    x = sg.add_tensor("x", [1, 4, 4, 8], "float32")
    xq = sg.add_tensor("xq", [1, 4, 4, 8], "int8", quant=Q)
    c = sg.add_constant("c", np.arange(8, dtype=np.int8).reshape(1, 1, 1, 8), quant=Q)
    a1 = sg.add_tensor("block/add_q", [1, 4, 4, 8], "int8", quant=Q)
    d1 = sg.add_tensor("block/dequant", [1, 4, 4, 8], "float32")
    s1 = sg.add_tensor("block/sigmoid", [1, 4, 4, 8], "float32")
    q2 = sg.add_tensor("block/requant", [1, 4, 4, 8], "int8", quant=Q)
    a2 = sg.add_tensor("block/add2_q", [1, 4, 4, 8], "int8", quant=Q)
    y0 = sg.add_tensor("y_nhwc", [1, 4, 4, 8], "float32")
    perm = sg.add_constant("perm", np.array([0, 3, 1, 2], np.int32))
    y = sg.add_tensor("y", [1, 8, 4, 4], "float32")
    sg.add_operator("QUANTIZE", [x], [xq])
    sg.add_operator("ADD", [xq, c], [a1], options={"fused_activation_function": "NONE"})
    sg.add_operator("DEQUANTIZE", [a1], [d1])
    sg.add_operator("LOGISTIC", [d1], [s1])
    sg.add_operator("QUANTIZE", [s1], [q2])
    sg.add_operator("ADD", [q2, a1], [a2], options={"fused_activation_function": "NONE"})
    sg.add_operator("DEQUANTIZE", [a2], [y0])
    sg.add_operator("TRANSPOSE", [y0, perm], [y])
    sg.set_inputs([x])
    sg.set_outputs([y])
    w.add_signature("serving_default", sg, inputs={"x": x}, outputs={"y": y})
    return w.finish()


def while_model() -> bytes:
    """i = 0; while i < 10: i = i + 1 ... with a float accumulator: WHILE(cond=1, body=2)."""
    w = ModelWriter(description="while test")
    main = w.add_subgraph("main")
    cond = w.add_subgraph("cond")
    body = w.add_subgraph("body")
    i0 = main.add_tensor("i0", [1], "int32")
    x0 = main.add_tensor("x0", [1, 4], "float32")
    i1 = main.add_tensor("i_final", [1], "int32")
    x1 = main.add_tensor("x_final", [1, 4], "float32")
    y = main.add_tensor("y", [1, 4], "float32")
    main.add_operator(
        "WHILE", [i0, x0], [i1, x1], options={"cond_subgraph_index": 1, "body_subgraph_index": 2}
    )
    main.add_operator("RELU", [x1], [y])
    main.set_inputs([i0, x0])
    main.set_outputs([y])

    ci = cond.add_tensor("i", [1], "int32")
    cx = cond.add_tensor("x", [1, 4], "float32")
    lim = cond.add_constant("limit", np.array([10], np.int32))
    cb = cond.add_tensor("keep_going", [1], "bool")
    cond.add_operator("LESS", [ci, lim], [cb])
    cond.set_inputs([ci, cx])
    cond.set_outputs([cb])

    bi = body.add_tensor("i", [1], "int32")
    bx = body.add_tensor("x", [1, 4], "float32")
    one = body.add_constant("one", np.array([1], np.int32))
    step = body.add_constant("step", np.full((1, 4), 0.5, np.float32))
    bi2 = body.add_tensor("i_next", [1], "int32")
    bx2 = body.add_tensor("x_next", [1, 4], "float32")
    body.add_operator("ADD", [bi, one], [bi2], options={"fused_activation_function": "NONE"})
    body.add_operator("ADD", [bx, step], [bx2], options={"fused_activation_function": "NONE"})
    body.set_inputs([bi, bx])
    body.set_outputs([bi2, bx2])
    w.add_signature("serving_default", main, inputs={"i": i0, "x": x0}, outputs={"y": y})
    return w.finish()
