"""Minimum operator versions: which (op, version) a TFLite file must declare for the features used.

LiteRT looks up the exact (builtin code, version) pair of every OperatorCode and refuses the file
when its resolver lacks it, so a writer must declare the *lowest* version whose semantics cover
what the operator does, never a newer one.  The rules below are the published versioning rules
of the TFLite converter, restated as data about an operator's signature: the dtypes of its
inputs/outputs, whether a weight is per-channel quantized, and a few option values.  The first
matching row wins (rows are listed per op in the order they are tested).

Notation: ``in0``/``in1``/``out0`` are the dtypes of input 0/1 and output 0; "hybrid" means
float32 activations with int8 weights and float32 output; "pc" = per-channel quantized weight
(more than one scale); "bcast5" = the two inputs differ in shape and some input has rank > 4.

=========================  =====  =========================================================
op                         ver    when
=========================  =====  =========================================================
CONV_2D                    8      in0 int16, in1 int8, out int16, quantized_bias_type set
                           6      grouped (input channels != filter input channels)
                           4      in0, in1, out int16
                           3      in0, in1, out int8
                           7      in0 int8, in1 int4, out int8
                           5 / 2  hybrid, pc / per-tensor
                           1      otherwise (float32)
DEPTHWISE_CONV_2D          5      in0, in1 int16
                           6 / 4  hybrid, pc / per-tensor
                           3      in0, in1, out int8
                           7      in0 int8, in1 int4
                           2      dilation_w_factor or dilation_h_factor != 1
                           1      otherwise
FULLY_CONNECTED            14     in1 int2;  13: int16 act + int4 weight
                           12     hybrid, pc
                           11     int16/int8/int16 with quantized_bias_type
                           7      in0, in1, out int16
                           6      exactly 2 inputs (no bias slot at all)
                           5      keep_num_dims
                           4      in0, in1, out int8
                           10     int8 act + int4 weight
                           9 / 3  hybrid, asymmetric_quantize_inputs / not
                           2      weights_format SHUFFLED4x16INT8
                           1      otherwise
ADD                        6 float16; 5 int16 not quantized; 4 int64; 3 int16 with
                           pot_scale_int16 false; 2 int8; else 1
SUB                        5 int16 with pot_scale_int16 false; 4 int64; 3 bcast5; 2 int8; 1
MUL                        8 float16; 7 int16 not quantized or uint32; 6 complex64; 5 int64;
                           4 int16; 3 quantized with s_in0*s_in1/s_out >= 1; 2 int8; 1
DIV                        2 bcast5; 1
MAXIMUM, MINIMUM           4 int16; 3 bcast5; 2 int8; 1
MAX_POOL_2D, AVERAGE_POOL  3 int16; 2 int8; 1
TRANSPOSE                  8 rank > 6 or bfloat16; 7 int4; 6 rank 6; 5 int16; 4 rank 5;
                           3 bool; 2 int8; 1
TRANSPOSE_CONV             5 int16 with quantized_bias_type; 4 fused activation;
                           3 bias input present; 2 weights int8; 1
GATHER                     7 in0 int4; 6 indices int16; 5 batch_dims != 0; 4 int16; 3 bool;
                           2 int8; 1
SPLIT (data is input 1)    4 int16; 3 int32; 2 int8; 1
SLICE                      7 int4; 6 uint32; 5 rank > 4; 4 int16; 3 string; 2 int8; 1
STRIDED_SLICE              8 offset; 7 uint32; 6 ellipsis/new_axis mask; 5 string;
                           4 rank > 4; 3 bool; 2 int8; 1
PAD, PADV2                 5 bool; 4 rank > 4; 3 int16; 2 int8; 1
CONCATENATION              5 int4; 4 uint32; 3 int16; 2 int8; 1
SOFTMAX, MEAN, MIRROR_PAD,
REDUCE_MAX, REDUCE_MIN,
RELU6, RSQRT               3 int16; 2 int8; 1
RELU                       3 int16; 2 int8/uint8; 1
ABS                        5 int32; 4 int16 (3 if quantized); 2 int8/uint8; 1
TANH, LOGISTIC             3 int16; 2 int8; 1
EXP, LOG, SQRT,
REDUCE_PROD                2 int8/int16; 1
SUM, LOG_SOFTMAX, GREATER,
LESS_EQUAL, SPACE_TO_DEPTH,
DEPTH_TO_SPACE, SPLIT_V,
SQUARED_DIFFERENCE         2 int8; 1
LESS, GREATER_EQUAL        3 int16; 2 int8; 1
EQUAL                      5 int16; 3 string; 2 int8; 1
NOT_EQUAL                  4 int16; 3 string; 2 int8; 1
ARG_MAX, ARG_MIN           3 bool; 2 int8; 1
SELECT                     4 uint32; 3 any input rank 5; 2 int8; 1
SELECT_V2                  2 uint32; 1
RESIZE_BILINEAR            4 int16; 3 half_pixel_centers; 2 int8; 1
RESIZE_NEAREST_NEIGHBOR    4 int16; 3 half_pixel_centers or align_corners; 2 int8; 1
PACK                       2 int8; 3 int16; 4 uint32; 1
UNPACK                     2 int8/uint8; 3 bool; 4 int16; 5 float16/bfloat16; 1
TILE                       3 int8; 2 string; 1
SQUEEZE                    2 string; 1
SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND          4 int16; 3 rank != 4; 2 int8; 1
GATHER_ND                  5 bool; 4 indices int16; 3 int16; 2 string; 1
BATCH_MATMUL               3 int16; 2 int8; 4 hybrid asymmetric; 1
FILL                       4 value float16; 3 value int8/int16; 2 value bool/string; 1
LEAKY_RELU                 2 int16; 1
RANGE                      2 int64; 1
FLOOR_DIV                  3 int8/int16; 2 float32; 1
FLOOR_MOD                  2 int8/int16; 1
BROADCAST_TO               3 int8/int16; 2 (version 1 does not exist)
CAST                       7 bfloat16; 5 float64/float16; 4 uint16; 3 int8; 2 uint32; 1
WHERE                      1 bool condition; 2 otherwise
GELU                       2 int8/uint8; 1
DYNAMIC_UPDATE_SLICE       6 bfloat16; 5 int4; 4 int16; 3 float16; 2 int64 indices; 1
DEQUANTIZE                 6 int4; 3 int16/float16; 5 / 2 int8 pc / per-tensor; 1
QUANTIZE                   4 int4; 3 pc; 2 int16 output; 1
TOPK_V2                    3 int16; 2 int8; 1
REVERSE_V2                 3 int8; 2 bool; 1
SIGN                       2 int32; 1
L2_NORMALIZATION           2 int8 output; 1
FAKE_QUANT                 2 narrow_range; 1
SPARSE_TO_DENSE            3 int8/uint8 values; 2 int64 values; 1
EMBEDDING_LOOKUP           4 int4 / pc; 1
everything else            1
=========================  =====  =========================================================

The rules are the functions below; ``ops.py`` names each op's rule and the newest version it
declares (one record per op), and ``ops.min_version`` applies them.

Where to look next: ``ops.py`` (the table), ``writer.py`` (calls ``ops.min_version`` for
``add_operator(version=None)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TensorSig:
    """What the version rules need to know about one operand."""

    dtype: str  # numpy-style name: float32, int8, ...
    shape: tuple[int, ...] = ()
    scales: tuple[float, ...] = ()  # quantization scales (empty when not quantized)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1

    @property
    def quantized(self) -> bool:
        return len(self.scales) > 0


_ABSENT = TensorSig("none")


@dataclass
class OpSig:
    op: str
    inputs: list[TensorSig] = field(default_factory=list)  # absent optional inputs: dtype "none"
    outputs: list[TensorSig] = field(default_factory=list)
    options: dict = field(default_factory=dict)  # numeric option values by field name

    def i(self, k: int) -> str:
        return self.inputs[k].dtype if k < len(self.inputs) else "none"

    def o(self, k: int) -> str:
        return self.outputs[k].dtype if k < len(self.outputs) else "none"

    def opt(self, name: str, default=0):
        return self.options.get(name, default)

    def hybrid(self, w: int = 1) -> bool:
        return self.i(0) == "float32" and self.i(w) == "int8" and self.o(0) == "float32"

    def all3(self, a: str, b: str, c: str) -> bool:
        return self.i(0) == a and self.i(1) == b and self.o(0) == c

    def bcast5(self) -> bool:
        if len(self.inputs) < 2:
            return False
        return self.inputs[0].shape != self.inputs[1].shape and max(t.rank for t in self.inputs) > 4


def conv_2d(s: OpSig) -> int:
    if s.all3("int16", "int8", "int16") and s.opt("quantized_bias_type"):
        return 8
    if len(s.inputs) > 1 and s.inputs[0].rank == 4 and s.inputs[1].rank == 4:
        if s.inputs[0].shape[3] != s.inputs[1].shape[3] and s.inputs[0].shape[3] > 0:
            return 6
    if s.i(0) == "int16" and s.i(1) == "int16":
        return 4
    if s.all3("int8", "int8", "int8"):
        return 3
    if s.all3("int8", "int4", "int8"):
        return 7
    if s.hybrid():
        return 5 if s.inputs[1].per_channel else 2
    return 1


def depthwise_conv_2d(s: OpSig) -> int:
    if s.i(0) == "int16" and s.i(1) == "int16":
        return 5
    if s.hybrid():
        return 6 if s.inputs[1].per_channel else 4
    if s.all3("int8", "int8", "int8"):
        return 3
    if s.all3("int8", "int4", "int8"):
        return 7
    if s.opt("dilation_w_factor", 1) != 1 or s.opt("dilation_h_factor", 1) != 1:
        return 2
    return 1


def fully_connected(s: OpSig) -> int:
    if s.i(1) == "int2":
        return 14
    if s.all3("int16", "int4", "int16"):
        return 13
    if s.hybrid() and s.inputs[1].per_channel:
        return 12
    if s.all3("int16", "int8", "int16") and s.opt("quantized_bias_type"):
        return 11
    if s.all3("int16", "int16", "int16"):
        return 7
    if len(s.inputs) == 2:
        return 6
    if s.opt("keep_num_dims"):
        return 5
    if s.all3("int8", "int8", "int8"):
        return 4
    if s.all3("int8", "int4", "int8"):
        return 10
    if s.hybrid():
        return 9 if s.opt("asymmetric_quantize_inputs") else 3
    if s.opt("weights_format") == 1:
        return 2
    return 1


def mul(s: OpSig) -> int:
    t = s.i(0)
    q = s.inputs[0].quantized if s.inputs else False
    if t == "float16":
        return 8
    if (t == "int16" and not q) or t == "uint32":
        return 7
    if t == "complex64":
        return 6
    if t == "int64":
        return 5
    if t == "int16":
        return 4
    if len(s.inputs) >= 2 and s.inputs[0].quantized and s.inputs[1].quantized and s.outputs:
        if s.outputs[0].quantized:
            s0, s1, so = s.inputs[0].scales[0], s.inputs[1].scales[0], s.outputs[0].scales[0]
            if s0 and s1 and so and s0 * s1 / so >= 1.0:
                return 3
    if t == "int8":
        return 2
    return 1


def add(s: OpSig) -> int:
    t = s.i(0)
    q = s.inputs[0].quantized if s.inputs else False
    if t == "float16":
        return 6
    if t == "int16" and not q:
        return 5
    if t == "int64":
        return 4
    if t == "int16" and s.o(0) == "int16" and not s.opt("pot_scale_int16", True):
        return 3
    return 2 if t == "int8" else 1


def sub(s: OpSig) -> int:
    t = s.i(0)
    if t == "int16" and s.o(0) == "int16" and not s.opt("pot_scale_int16", True):
        return 5
    if t == "int64":
        return 4
    if s.bcast5():
        return 3
    return 2 if t == "int8" else 1


def transpose(s: OpSig) -> int:
    t, r = s.i(0), s.inputs[0].rank
    if r > 6 or t == "bfloat16":
        return 8
    if t == "int4":
        return 7
    if r > 5:
        return 6
    if t == "int16":
        return 5
    if r > 4:
        return 4
    return {"bool": 3, "int8": 2}.get(t, 1)


def transpose_conv(s: OpSig) -> int:
    # inputs: (output_shape, weights, input, bias)
    if s.i(0) == "int16" and s.i(1) == "int8" and s.o(0) == "int16":
        if s.opt("quantized_bias_type"):
            return 5
    if s.opt("fused_activation_function"):
        return 4
    if len(s.inputs) == 4 and s.i(3) != "none":
        return 3
    return 2 if s.i(1) == "int8" else 1


def gather(s: OpSig) -> int:
    if s.i(0) == "int4":
        return 7
    if s.i(1) == "int16":
        return 6
    if s.opt("batch_dims"):
        return 5
    return {"int16": 4, "bool": 3, "int8": 2}.get(s.i(0), 1)


def slice_op(s: OpSig) -> int:
    t = s.i(0)
    if t == "int4":
        return 7
    if t == "uint32":
        return 6
    if s.inputs[0].rank > 4:
        return 5
    return {"int16": 4, "string": 3, "int8": 2}.get(t, 1)


def strided_slice(s: OpSig) -> int:
    t = s.i(0)
    if s.opt("offset"):
        return 8
    if t == "uint32":
        return 7
    if s.opt("ellipsis_mask") or s.opt("new_axis_mask"):
        return 6
    if t == "string":
        return 5
    if s.inputs[0].rank > 4:
        return 4
    return {"bool": 3, "int8": 2}.get(t, 1)


def pad(s: OpSig) -> int:
    t = s.i(0)
    if t == "bool":
        return 5
    if s.inputs[0].rank > 4:
        return 4
    return {"int16": 3, "int8": 2}.get(t, 1)


def resize_bilinear(s: OpSig) -> int:
    if s.i(0) == "int16":
        return 4
    if s.opt("half_pixel_centers"):
        return 3
    return 2 if s.i(0) == "int8" else 1


def resize_nearest_neighbor(s: OpSig) -> int:
    if s.i(0) == "int16":
        return 4
    if s.opt("half_pixel_centers") or s.opt("align_corners"):
        return 3
    return 2 if s.i(0) == "int8" else 1


def maximum_minimum(s: OpSig) -> int:
    if s.i(0) == "int16" and s.o(0) == "int16":
        return 4
    if s.bcast5():
        return 3
    return 2 if s.i(0) == "int8" else 1


def select(s: OpSig) -> int:
    if s.i(0) == "uint32":
        return 4
    if any(t.rank == 5 for t in s.inputs[:3]):
        return 3
    return 2 if s.i(0) == "int8" else 1


def abs_op(s: OpSig) -> int:
    t = s.i(0)
    if t == "int32":
        return 5
    if t == "int16":
        return 3 if s.inputs[0].quantized else 4
    return 2 if t in ("int8", "uint8") else 1


def space_batch_nd(s: OpSig) -> int:
    if s.i(0) == "int16":
        return 4
    if s.inputs[0].rank != 4:
        return 3
    return 2 if s.i(0) == "int8" else 1


def fill(s: OpSig) -> int:
    t = s.i(1)
    if t == "float16":
        return 4
    if t in ("int8", "int16"):
        return 3
    if t in ("bool", "string"):
        return 2
    return 1


def cast(s: OpSig) -> int:
    a, b = s.i(0), s.o(0)

    def either(*ts):
        return a in ts or b in ts

    if either("int2", "uint4"):
        return 8
    if either("bfloat16"):
        return 7
    if a == "int4" and b == "float32":
        return 6
    if either("float64", "float16"):
        return 5
    if either("uint16"):
        return 4
    if either("int8"):
        return 3
    if either("uint32"):
        return 2
    return 1


def batch_matmul(s: OpSig) -> int:
    if s.i(0) == "int16":
        return 3
    if s.i(0) == "int8":
        return 2
    if s.hybrid() and s.opt("asymmetric_quantize_inputs"):
        return 4
    return 1


def dequantize(s: OpSig) -> int:
    t = s.i(0)
    if t == "uint4":
        return 8
    if t == "int2":
        return 7
    if t == "int4":
        return 6
    if t in ("int16", "float16"):
        return 3
    if t == "int8":
        return 5 if s.inputs[0].per_channel else 2
    return 1


def quantize(s: OpSig) -> int:
    if "uint4" in (s.i(0), s.o(0)):
        return 5
    if "int4" in (s.i(0), s.o(0)):
        return 4
    if s.outputs and s.outputs[0].per_channel:
        return 3
    return 2 if s.o(0) == "int16" else 1


def dynamic_update_slice(s: OpSig) -> int:
    t = s.i(0)
    table = {"bfloat16": 6, "int4": 5, "int16": 4, "float16": 3}
    if t in table:
        return table[t]
    return 2 if s.i(2) == "int64" else 1


def div(s: OpSig) -> int:
    return 2 if s.bcast5() else 1


def gather_nd(s: OpSig) -> int:
    if s.i(0) == "bool":
        return 5
    if s.i(1) == "int16":
        return 4
    return {"int16": 3, "string": 2}.get(s.i(0), 1)


def broadcast_to(s: OpSig) -> int:
    return 3 if s.i(0) in ("int8", "int16") else 2


def where(s: OpSig) -> int:
    return 1 if s.i(0) == "bool" else 2


def topk_v2(s: OpSig) -> int:
    if "int16" in (s.i(0), s.i(1), s.o(1)):
        return 3
    return 2 if s.i(0) == "int8" else 1


def l2_normalization(s: OpSig) -> int:
    return 2 if s.o(0) == "int8" else 1


def fake_quant(s: OpSig) -> int:
    return 2 if s.opt("narrow_range") else 1


def embedding_lookup(s: OpSig) -> int:
    if s.i(1) == "int4" or (len(s.inputs) > 1 and s.inputs[1].per_channel):
        return 4
    return 1


class ByInput:
    """The common rule: the version depends only on input ``k``'s dtype (``table``; 1 else)."""

    def __init__(self, table: dict[str, int], k: int = 0):
        self.table, self.k = dict(table), k

    def __call__(self, s: OpSig) -> int:
        return self.table.get(s.i(self.k), 1)

    @property
    def newest(self) -> int:
        return max([1, *self.table.values()])

    def __repr__(self) -> str:
        return f"ByInput({self.table}, k={self.k})"


I8_I16 = ByInput({"int16": 3, "int8": 2})  # 3 int16; 2 int8; 1
I8 = ByInput({"int8": 2})  # 2 int8; 1
I8_OR_I16 = ByInput({"int8": 2, "int16": 2})  # 2 int8/int16; 1
