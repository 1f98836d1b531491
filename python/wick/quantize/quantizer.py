"""wick's PT2E quantizer: the TFLite int8 scheme (docs/format.md) as annotations.

A torchao ``Quantizer`` subclass for ``prepare_pt2e``.  After ``transform_for_annotation``
(rewrite.py: composite ops spelled out, number operands made tensors) ``annotate`` marks every
op that has a TFLite int8 kernel so that, after ``convert_pt2e``, it sits between
dequantize/quantize pairs which the converter (passes/quantize.py) turns into that kernel:

* weighted ops — conv1d/conv2d (incl. depthwise), conv_transpose2d and linear: activation input int8
  asymmetric per-tensor, weight int8 symmetric per-channel in [-127, 127] on the output-channel
  dim, bias left float (the converter writes it as int32 with scale s_in * s_w[c]);
* arithmetic — add, sub, mul, matmul/bmm, mean, hardswish, GELU, rsqrt, relu/relu6 standing
  alone: every tensor input and the output get their own observed parameters;
* fixed output parameters — sigmoid and softmax (1/256, -128), tanh (1/128, 0);
* pass-through — pools (max, average, adaptive average), concatenation, reshape/view/flatten,
  permute/transpose, pad, slicing/select, (un)squeeze, dropout, clone, split: the output (and the
  other concatenation inputs) share the first input's parameters, so the int8 kernel moves raw
  values;
* fusion — conv/linear/add/mul whose only user is relu/relu6 leave their own output
  unobserved and the activation carries the output parameters: the file gets the fused
  activation, as TFLite's converter writes it.

* attention masks — ``where(mask, scores, -inf)`` (rewrite.py's boolean-mask attention): the
  output and the filler share the scores' parameters (an int8/int16 SELECT_V2).

Every annotation is at an activation precision (specs.py): ``precision(node)`` picks int8
(default), int16 (16x8) or float per op; an input produced at another precision gets its own
observer (the file requantizes with a QUANTIZE).  Ops not listed (or excluded with ``skip``) get
no annotation and stay float; their consumers quantize their inputs again.  ``wick.quantize``
reports such float islands after conversion.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable

import torch
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e.quantizer import (
    QuantizationAnnotation,
    QuantizationSpec,
    Quantizer,
    SharedQuantizationSpec,
)

from .rewrite import decompose_for_int8
from .specs import PRECISIONS, activation_spec, effective_precision, fixed_spec, weight_spec

aten = torch.ops.aten
_KEY = "quantization_annotation"
_PRECISION = "wick_precision"  # node.meta: the activation precision the node was annotated at

_WEIGHTED = {
    aten.conv1d.default: 0,
    aten.conv2d.default: 0,
    aten.conv1d.padding: 0,
    aten.conv2d.padding: 0,
    aten.linear.default: 0,
    aten.conv_transpose2d.input: 1,  # weight [in, out/groups, kh, kw]: output channels on dim 1
}
_ARITH = {
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
    aten.hardswish.default,
    aten.hardswish_.default,
    aten.gelu.default,
    aten.rsqrt.default,
    aten.relu.default,
    aten.relu_.default,
    aten.relu6.default,
    aten.leaky_relu.default,
    aten.leaky_relu_.default,
}
_FIXED = {
    aten.sigmoid.default: "sigmoid",
    aten.sigmoid_.default: "sigmoid",
    aten.softmax.int: "softmax",
    aten._softmax.default: "softmax",
    aten.tanh.default: "tanh",
    aten.tanh_.default: "tanh",
}
_SHARED = {
    aten.max_pool2d.default,
    aten.max_pool1d.default,
    aten.avg_pool2d.default,
    aten.avg_pool1d.default,
    aten.adaptive_avg_pool2d.default,
    aten.adaptive_avg_pool1d.default,
    aten.reshape.default,
    aten.view.default,
    aten.flatten.using_ints,
    aten.unflatten.int,
    aten.permute.default,
    aten.transpose.int,
    aten.t.default,
    aten.pad.default,
    aten.constant_pad_nd.default,
    aten.slice.Tensor,
    aten.select.int,
    aten.narrow.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.squeeze.default,
    aten.unsqueeze.default,
    aten.contiguous.default,
    aten.clone.default,
    aten.dropout.default,
    aten.dropout_.default,
    aten.expand.default,
    aten.hardtanh.default,
    aten.hardtanh_.default,
    aten.pixel_shuffle.default,
    aten.pixel_unshuffle.default,
    aten.upsample_nearest2d.vec,
}
_CAT = {aten.cat.default, aten.concat.default}
_SPLIT = {aten.split.Tensor, aten.split_with_sizes.default, aten.chunk.default, aten.unbind.int}
# activations the int8 conv / fully connected / add / mul kernels apply in their requantization
_FUSABLE = {aten.relu.default, aten.relu_.default, aten.relu6.default}
_FUSE_INTO = (set(_WEIGHTED) - {aten.conv_transpose2d.input}) | {
    aten.add.Tensor,
    aten.add_.Tensor,
    aten.sub.Tensor,
    aten.sub_.Tensor,
    aten.mul.Tensor,
    aten.mul_.Tensor,
}


def _is_float_tensor(a) -> bool:
    v = a.meta.get("val") if isinstance(a, Node) else None
    return isinstance(v, torch.Tensor) and v.is_floating_point()


def _is_relu6(n: Node) -> bool:
    if n.target in (aten.hardtanh.default, aten.hardtanh_.default):
        lo = n.args[1] if len(n.args) > 1 else n.kwargs.get("min_val", -1.0)
        hi = n.args[2] if len(n.args) > 2 else n.kwargs.get("max_val", 1.0)
        return float(lo) == 0.0 and float(hi) == 6.0
    return n.target in _FUSABLE


def _module_filter(skip: Iterable) -> Callable[[Node], bool]:
    """True for nodes that come from a module the user asked to keep float: ``skip`` holds
    module types, qualified module names (``"layers.0.attn"``) or predicates on FX nodes."""
    types, names, preds = [], [], []
    for s in skip:
        if isinstance(s, type):
            types.append(f"{s.__module__}.{s.__qualname__}")
        elif isinstance(s, str):
            names.append(s)
        elif callable(s):
            preds.append(s)
        else:
            raise TypeError(f"skip= entries are module types, module names or callables, not {s!r}")

    def skipped(n: Node) -> bool:
        stack = n.meta.get("nn_module_stack") or {}
        for path, t in stack.values():
            tname = t if isinstance(t, str) else f"{t.__module__}.{t.__qualname__}"
            if tname in types:
                return True
            path = str(path)
            for nm in names:
                if path == nm or path.startswith(nm + ".") or path == f"L['self'].{nm}":
                    return True
        return any(p(n) for p in preds)

    return skipped


class WickQuantizer(Quantizer):
    """Static int8 (``observer``: ``"minmax"`` as TFLite's calibrator, or ``"histogram"``), with
    a per-op activation precision: ``precision(node)`` -> ``"int8"`` (the default), ``"int16"``
    (TFLite's 16x8 mode, where the op has an int16 kernel) or ``"float"`` (not annotated)."""

    def __init__(
        self,
        observer: str = "minmax",
        skip: Iterable = (),
        precision: Callable[[Node], str | None] | None = None,
    ):
        super().__init__()
        self.observer = observer
        self.acts = {p: activation_spec(p, observer) for p in ("int8", "int16")}
        self.act = self.acts["int8"]
        self.skipped = _module_filter(skip)
        self.precision = precision

    def weight_spec(self, axis: int) -> QuantizationSpec:
        return weight_spec(axis)

    def precision_of(self, n: Node) -> str:
        """The activation precision ``n`` gets: "int8", "int16" or "float"."""
        if self.skipped(n):
            return "float"
        p = (self.precision(n) if self.precision is not None else None) or "int8"
        if p not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {p!r}")
        return effective_precision(n.target, p)

    # ---- Quantizer interface ---------------------------------------------------------------
    def transform_for_annotation(self, model: GraphModule) -> GraphModule:
        return decompose_for_int8(model, int16=lambda n: self.precision_of(n) == "int16")

    def validate(self, model: GraphModule) -> None:
        pass

    def annotate(self, model: GraphModule) -> GraphModule:
        fused_act: set[Node] = set()
        for n in model.graph.nodes:
            if n.op != "call_function" or n in fused_act or self.skipped(n):
                continue
            if not _is_float_tensor(n) and n.target not in _SPLIT:
                continue
            t = n.target
            if t in _SHARED:
                self._shared(n)
            elif t in _CAT:
                self._cat(n)
            elif t in _SPLIT:
                self._split(n)
            elif t == aten.where.self:
                self._where(n)
            elif t in _WEIGHTED or t in _ARITH or t in _FIXED or _is_relu6(n):
                p = self.precision_of(n)
                if p == "float":
                    continue
                n.meta[_PRECISION] = p
                if t in _WEIGHTED:
                    self._weighted(n, p, fused_act)
                elif t in _ARITH or _is_relu6(n):
                    self._arith(n, p, fused_act)
                elif t in _FIXED:
                    self._annotate(n, self._float_inputs(n)[:1], fixed_spec(_FIXED[t], p), p)
        return model

    # ---- annotators ------------------------------------------------------------------------
    @staticmethod
    def _float_inputs(n: Node) -> list[Node]:
        seen = []
        for a in n.all_input_nodes:
            if _is_float_tensor(a) and a not in seen:
                seen.append(a)
        return seen

    def _annotate(self, n: Node, inputs, output, precision: str, specs=None) -> None:
        qmap = {a: (specs or {}).get(a, self._input_spec(a, precision)) for a in inputs}
        n.meta[_KEY] = QuantizationAnnotation(
            input_qspec_map=qmap, output_qspec=output, _annotated=True
        )

    def _input_spec(self, a: Node, precision: str):
        """An input already quantized by its producer at this precision reads the producer's
        parameters (a fixed-parameter sigmoid output feeding a mul stays at 1/256, no
        requantize); otherwise it gets its own observer at this precision (after a producer of
        another precision: a requantizing QUANTIZE)."""
        ann = a.meta.get(_KEY)
        if ann is not None and ann.output_qspec is not None and _out_precision(a) == precision:
            return SharedQuantizationSpec(a)
        return self.acts[precision]

    def _fused_activation(self, n: Node, precision: str) -> Node | None:
        """The relu/relu6 that will be fused into ``n`` (its only user), else None."""
        if n.target not in _FUSE_INTO or len(n.users) != 1:
            return None
        (u,) = n.users
        if u.op != "call_function" or not _is_relu6(u):
            return None
        if u.args[0] is not n or self.precision_of(u) != precision:
            return None
        return u

    def _output_or_fuse(self, n: Node, precision: str, fused_act: set[Node]):
        act = self._fused_activation(n, precision)
        if act is None:
            return self.acts[precision]
        fused_act.add(act)
        act.meta[_PRECISION] = precision
        act.meta[_KEY] = QuantizationAnnotation(output_qspec=self.acts[precision], _annotated=True)
        return None

    def _weighted(self, n: Node, precision: str, fused_act: set[Node]) -> None:
        x, w = n.args[0], n.args[1]
        if not (_is_float_tensor(x) and isinstance(w, Node) and w.op == "get_attr"):
            # a weight computed at run time: a matrix product of two activations
            self._arith(n, precision, fused_act)
            return
        specs = {x: self.acts[precision], w: self.weight_spec(_WEIGHTED[n.target])}
        out = self._output_or_fuse(n, precision, fused_act)
        self._annotate(n, [x, w], out, precision, specs)

    def _arith(self, n: Node, precision: str, fused_act: set[Node]) -> None:
        out = self._output_or_fuse(n, precision, fused_act)
        self._annotate(n, self._float_inputs(n), out, precision)

    def _source_precision(self, x: Node) -> str | None:
        """The precision ``x`` is quantized at by its producer, or None (a float producer)."""
        return _out_precision(x) if x.meta.get(_KEY) is not None else None

    def _shared(self, n: Node) -> None:
        """Data movement: the output shares the input's parameters (the producer's precision;
        after a float producer, the precision ``n`` itself is given)."""
        x = n.args[0]
        if not _is_float_tensor(x):
            return
        p = self._source_precision(x) or self.precision_of(n)
        if p == "float":
            return
        n.meta[_PRECISION] = p
        self._annotate(n, [x], SharedQuantizationSpec((x, n)), p)

    def _where(self, n: Node) -> None:
        """where(cond, x, fill) (an attention mask; fill usually -inf): SELECT_V2 on the
        integer values, the output and the filler sharing x's parameters (a -inf filler
        becomes the lowest level of x's range)."""
        cond, x, y = n.args[:3]
        if not (_is_float_tensor(x) and isinstance(y, Node) and _is_float_tensor(y)):
            return
        if isinstance(cond, Node) and _is_float_tensor(cond):
            return
        p = self._source_precision(x) or self.precision_of(n)
        if p == "float":
            return
        n.meta[_PRECISION] = p
        share = SharedQuantizationSpec((x, n))
        specs = {x: self._input_spec(x, p), y: share}
        self._annotate(n, [x, y], share, p, specs)

    def _cat(self, n: Node) -> None:
        inputs = [a for a in n.args[0] if _is_float_tensor(a)]
        if not inputs:
            return
        first = inputs[0]
        p = self._source_precision(first) or self.precision_of(n)
        if p == "float":
            return
        n.meta[_PRECISION] = p
        share = SharedQuantizationSpec((first, n))
        specs = {a: share for a in inputs[1:]}
        specs[first] = self.acts[p]
        self._annotate(n, list(dict.fromkeys(inputs)), share, p, specs)

    def _split(self, n: Node) -> None:
        x = n.args[0]
        if not _is_float_tensor(x):
            return
        p = self._source_precision(x) or self.precision_of(n)
        if p == "float":
            return
        n.meta[_PRECISION] = p
        self._annotate(n, [x], None, p)
        share = SharedQuantizationSpec((x, n))
        for u in n.users:
            if u.op == "call_function" and u.target is operator.getitem and _is_float_tensor(u):
                u.meta[_PRECISION] = p
                u.meta[_KEY] = QuantizationAnnotation(output_qspec=share, _annotated=True)


def _out_precision(a: Node) -> str:
    return a.meta.get(_PRECISION, "int8")
