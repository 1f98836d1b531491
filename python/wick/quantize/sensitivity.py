"""Per-layer sensitivity: the cheapest mix of int8 / int16 (16x8) / float that meets a target.

A *layer* is the innermost module an op comes from (``bert.encoder.layer.0.attention.self.query``,
``...intermediate.intermediate_act_fn``; ops of the model's own ``forward`` form the layer
``(top)``); all its ops share one activation precision (specs.py).

``Simulation`` exports the model once, annotates every op at int8 (quantizer.py), calibrates the
observers once, then evaluates any assignment {layer: precision} by running that calibrated
graph with each observer replaced by fake quantization on each of its edges, at the precision
the converted file will have there: ``min(producer's, consumer's)`` (an int16 producer read by
an int8 op is requantized to int8; a float side does not quantize), with int16 parameters
computed from the same statistics (symmetric, as the int16 spec).  One evaluation is one float
forward per calibration batch; no export, prepare or convert.

The error of an assignment is ``1 - cosine`` between its outputs and the float model's on the
calibration batches (each sample's outputs flattened; the worst sample counts).  A plan for
``target`` keeps that error within ``MARGIN`` (half) of ``1 - target``: inputs the observers
never saw err more.

``search`` (the greedy plan):

1. all int8; done when it meets the target;
2. each layer's sensitivity: the error with only that layer quantized (int8, and int16 where
   the layer has 16x8 kernels), every other layer float;
3. raise the most sensitive layers to int16 (where it is smaller than their int8 error), the
   fewest that meet the target (bisection over the sensitivity order);
4. if all of them at int16 still miss, keep the layers most sensitive at their best integer
   precision float, again the fewest (bisection).

Cost: per op, its work (multiply-accumulates for matrix products and convolutions, otherwise
output elements) times COST[precision] (bytes per activation: int8 1, int16 2, float 4);
reported relative to the all-int8 model.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from dataclasses import dataclass, field
from operator import getitem

import torch
from torch.fx import GraphModule, Node

from .specs import COST, EPS, INT16_OPS, effective_precision

aten = torch.ops.aten
_PRECISION = "wick_precision"
_ORDER = {"int8": 0, "int16": 1}
# the plan meets this fraction of the error budget on the calibration data: inputs it was not
# calibrated on err more (all-MiniLM-L6-v2: 1.5x on held-apart sentences)
MARGIN = 0.5


def layer_of(n: Node) -> str:
    """The innermost module path of ``n`` ("(top)" for the root module's own ops)."""
    stack = n.meta.get("nn_module_stack") or {}
    if not stack:
        return "(top)"
    path = str(list(stack.values())[-1][0])
    if path.startswith("L['self']."):
        path = path[len("L['self'].") :]
    return path or "(top)"


# ---- fake quantization on one edge ----------------------------------------------------------


def _is_observer(m) -> bool:
    from torchao.quantization.pt2e.observer import ObserverBase

    return isinstance(m, ObserverBase)


class _EdgeQuant(torch.nn.Module):
    """Quantize-dequantize with a calibrated observer's parameters at the edge's precision
    (``self.precision``: None = pass through, "int8", "int16")."""

    def __init__(self, observer):
        super().__init__()
        self.observer = observer
        self.precision: str | None = "int8"
        self._params: dict[str, tuple] = {}

    def params(self, precision: str):
        if precision not in self._params:
            self._params[precision] = _qparams(self.observer, precision)
        return self._params[precision]

    def forward(self, x):
        if self.precision is None or not x.is_floating_point():
            return x
        scale, zp, qmin, qmax, axis = self.params(self.precision)
        if axis is None:
            q = torch.clamp(torch.round(x * (1.0 / scale)) + zp, qmin, qmax)
            return (q - zp) * scale
        shape = [1] * x.dim()
        shape[axis] = -1
        s, z = scale.reshape(shape), zp.reshape(shape)
        q = torch.clamp(torch.round(x / s) + z, qmin, qmax)
        return (q - z) * s


def _qparams(obs, precision: str):
    """(scale, zero point, qmin, qmax, channel axis or None) of ``obs`` at ``precision``."""
    from torchao.quantization.pt2e.observer import FixedQParamsObserver, PerChannelMinMaxObserver

    if isinstance(obs, PerChannelMinMaxObserver):  # weights: int8 per channel at any precision
        s, z = obs.calculate_qparams()
        return s.float(), z.float(), obs.quant_min, obs.quant_max, obs.ch_axis
    if precision == "int16":
        if isinstance(obs, FixedQParamsObserver):
            return 2.0**-15, 0.0, -(2**15), 2**15 - 1, None
        wide = copy.deepcopy(obs)  # the same statistics, int16 symmetric parameters
        wide.dtype, wide.qscheme = torch.int16, torch.per_tensor_symmetric
        wide.quant_min, wide.quant_max = -(2**15), 2**15 - 1
        wide.eps = torch.tensor([EPS["int16"]], dtype=torch.float32)
        s, z = wide.calculate_qparams()
        return float(s.reshape(-1)[0]), 0.0, -(2**15), 2**15 - 1, None
    s, z = obs.calculate_qparams()
    return float(s.reshape(-1)[0]), float(z.reshape(-1)[0]), obs.quant_min, obs.quant_max, None


# ---- layers and the simulation ---------------------------------------------------------------


@dataclass
class Layer:
    name: str
    ops: list[str] = field(default_factory=list)  # the annotated ops' names
    targets: set = field(default_factory=set)
    work: float = 0.0  # multiply-accumulates or output elements, summed over its ops

    @property
    def int16_ok(self) -> bool:
        return any(t in INT16_OPS for t in self.targets)

    def options(self) -> list[str]:
        return ["int8", "int16", "float"] if self.int16_ok else ["int8", "float"]


def _work(n: Node) -> float:
    v = n.meta.get("val")
    numel = float(v.numel()) if isinstance(v, torch.Tensor) else 0.0
    if n.target in (aten.linear.default, aten.matmul.default, aten.bmm.default):
        x = n.args[0].meta.get("val") if isinstance(n.args[0], Node) else None
        if isinstance(x, torch.Tensor) and x.dim():
            return numel * x.shape[-1]
    if n.target in (aten.conv1d.default, aten.conv2d.default, aten.conv1d.padding):
        w = n.args[1].meta.get("val") if isinstance(n.args[1], Node) else None
        if isinstance(w, torch.Tensor):
            return numel * w[0].numel()
    return numel


def _samples(outputs) -> list[torch.Tensor]:
    flat = [o for o in torch.utils._pytree.tree_leaves(outputs) if isinstance(o, torch.Tensor)]
    flat = [o.detach().double() for o in flat if o.is_floating_point()]
    if not flat:
        return []
    batch = {o.shape[0] if o.dim() >= 2 else None for o in flat}
    if len(batch) == 1 and None not in batch:
        n = batch.pop()
        return [torch.cat([o[i].reshape(-1) for o in flat]) for i in range(n)]
    return [torch.cat([o.reshape(-1) for o in flat])]


def min_cosine(got, ref) -> float:
    """The worst per-sample cosine between two models' outputs."""
    worst = 1.0
    for a, b in zip(_samples(got), _samples(ref), strict=True):
        na, nb = a.norm(), b.norm()
        if na == 0 or nb == 0:
            c = 1.0 if na == nb else 0.0
        else:
            c = float(a @ b / (na * nb))
        worst = min(worst, c if math.isfinite(c) else -1.0)
    return worst


class Simulation:
    """One export, annotation (all int8), calibration; then ``error({layer: precision})``."""

    def __init__(self, module, exported: GraphModule, batches, quantizer_factory):
        """``exported``: ``module`` as export_for_quantization returns it (perhaps smoothed);
        the float reference is ``module`` itself."""
        from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

        self.batches = batches
        self.exported = exported
        with torch.no_grad():
            self.reference = [module(*b) for b in batches]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prepared = prepare_pt2e(copy.deepcopy(self.exported), quantizer_factory(None))
            with torch.no_grad():
                for b in batches:
                    prepared(*b)
        self.calibrated = prepared  # all int8: convert_pt2e(calibrated) is the int8 model
        self.sim = copy.deepcopy(prepared)
        self.layers: dict[str, Layer] = {}
        self.edges: list[tuple[_EdgeQuant, Node | None, Node | None]] = []
        self._build()
        self.evaluations = 0
        self.seconds = 0.0

    def _build(self) -> None:
        gm: GraphModule = self.sim
        g = gm.graph
        for n in g.nodes:
            if n.op == "call_function" and _PRECISION in n.meta and not _passthrough(n):
                lay = self.layers.setdefault(layer_of(n), Layer(layer_of(n)))
                lay.ops.append(n.name)
                lay.targets.add(n.target)
                lay.work += _work(n)
        k = 0
        for o in list(g.nodes):
            if o.op != "call_module" or not _is_observer(gm.get_submodule(o.target)):
                continue
            obs = gm.get_submodule(o.target)
            x = o.args[0]
            producer = _producer(gm, x)
            for u in list(o.users):
                eq = _EdgeQuant(obs)
                name = f"_wick_edge_{k}"
                k += 1
                gm.add_module(name, eq)
                with g.inserting_before(u):
                    e = g.call_module(name, (x,))
                e.meta = dict(o.meta)
                u.replace_input_with(o, e)
                self.edges.append((eq, producer, u if u.op == "call_function" else None))
            g.erase_node(o)
        for name, _ in list(gm.named_children()):
            if name.startswith("activation_post_process_"):
                delattr(gm, name)
        g.lint()
        gm.recompile()

    def precision_of_node(self, n: Node | None, assign: dict[str, str]) -> str | None:
        """The precision ``n`` computes at under ``assign`` (None: not quantized, or float).
        Data movement takes its source's precision, or its own layer's after a float op."""
        for _ in range(10_000):
            if n is None or n.op != "call_function" or _PRECISION not in n.meta:
                return None
            if not _passthrough(n):
                return effective_precision(n.target, assign.get(layer_of(n), "int8"))
            src = _data_input(n)
            if src is None or src.op != "call_function" or _PRECISION not in src.meta:
                return assign.get(layer_of(n), "int8")
            n = src
        return None

    def _set(self, assign: dict[str, str]) -> None:
        """Each edge at min(producer's, consumer's) precision; unquantized when both sides are
        float (a weight or constant read by a float op: its consumer alone)."""
        for eq, producer, consumer in self.edges:
            sides = [
                s
                for s in (
                    self.precision_of_node(producer, assign),
                    self.precision_of_node(consumer, assign),
                )
                if s in _ORDER
            ]
            eq.precision = min(sides, key=_ORDER.__getitem__) if sides else None

    def error(self, assign: dict[str, str]) -> float:
        """1 - the worst per-sample cosine to float on the calibration batches."""
        t = time.perf_counter()
        self._set(assign)
        worst = 1.0
        with torch.no_grad():
            for b, ref in zip(self.batches, self.reference, strict=True):
                worst = min(worst, min_cosine(self.sim(*b), ref))
        self.evaluations += 1
        self.seconds += time.perf_counter() - t
        return 1.0 - worst

    def cost(self, assign: dict[str, str]) -> float:
        """Work-weighted bytes per activation, relative to the all-int8 model."""
        base = sum(lay.work for lay in self.layers.values()) or 1.0
        return sum(lay.work * COST[assign.get(n, "int8")] for n, lay in self.layers.items()) / base


def _passthrough(n: Node) -> bool:
    """Ops that take their input's parameters (quantizer.py's shared annotations)."""
    from .quantizer import _CAT, _SHARED, _SPLIT

    t = n.target
    return t in _SHARED or t in _CAT or t in _SPLIT or t == aten.where.self or t is getitem


def _data_input(n: Node) -> Node | None:
    a = n.args[1] if n.target == aten.where.self else n.args[0]
    if isinstance(a, (list, tuple)):
        a = a[0] if a else None
    while isinstance(a, Node) and a.op == "call_module":  # an edge or observer
        a = a.args[0]
    return a if isinstance(a, Node) else None


def _producer(gm: GraphModule, x) -> Node | None:
    """The op that computes ``x`` (through observer chains), or None for inputs/constants."""
    while isinstance(x, Node) and x.op == "call_module":
        x = x.args[0]
    if isinstance(x, Node) and x.op == "call_function":
        return x
    return None


# ---- the search --------------------------------------------------------------------------------


@dataclass
class LayerChoice:
    name: str
    precision: str
    error: float  # 1 - cosine with only this layer at its precision (others float)
    errors: dict[str, float]  # the same per candidate precision
    cost: float  # its share of the work-weighted cost, relative to the all-int8 model


@dataclass
class Plan:
    target: float  # the cosine asked for
    layers: list[LayerChoice]
    cosine: float  # simulated, on the calibration batches
    cost: float  # relative to the all-int8 model
    evaluations: int
    seconds: float
    final_cosine: float | None = None  # the converted PT2E reference on the calibration data
    # smooth="auto": the all-int8 error of each SmoothQuant alpha tried (0: none); the least won
    smoothing: dict[float, float] = field(default_factory=dict)
    smooth_alpha: float | None = None  # the alpha chosen (0.0: none), None: not searched

    def assignment(self) -> dict[str, str]:
        return {c.name: c.precision for c in self.layers}

    def mix(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.layers:
            out[c.precision] = out.get(c.precision, 0) + 1
        return out

    def format(self) -> str:
        w = max([len(c.name) for c in self.layers] + [5])
        lines = [
            f"wick.quantize: target cosine {self.target:.4g} (planned for "
            f"{1 - (1 - self.target) * MARGIN:.4g} on the calibration data); "
            f"chosen mix {self.mix()} (16x8 = int16 activations, int8 weights)",
            f"{'layer':<{w}}  scheme  error vs float  cost",
        ]
        for c in self.layers:
            scheme = {"int8": "int8", "int16": "16x8", "float": "float"}[c.precision]
            lines.append(f"{c.name:<{w}}  {scheme:<6}  {c.error:14.2e}  {c.cost:5.3f}")
        if self.smoothing:
            tried = ", ".join(f"{a:g}: {e:.2e}" for a, e in self.smoothing.items())
            lines.append(
                f"SmoothQuant alpha {self.smooth_alpha:g} (all-int8 error per alpha tried, "
                f"0 = none: {tried})"
            )
        got = self.final_cosine if self.final_cosine is not None else self.cosine
        lines.append(
            f"whole model: cosine {got:.5f} to float (simulated {self.cosine:.5f}), cost "
            f"{self.cost:.2f}x the all-int8 model; {self.evaluations} evaluations in "
            f"{self.seconds:.1f} s"
        )
        return "\n".join(lines)


def search(sim: Simulation, target: float, explain: bool = False) -> Plan:
    """The cheapest assignment (greedy, see the module docstring) meeting ``target``.
    ``explain``: also measure each layer's own error when all-int8 meets the target (the
    report's column; otherwise the search measures it anyway)."""
    names = list(sim.layers)
    base = {n: "int8" for n in names}
    err_all8 = sim.error(base)
    errors: dict[str, dict[str, float]] = {n: {} for n in names}
    floor = (1.0 - target) * MARGIN
    if err_all8 <= floor:
        return _plan(sim, base, errors, target, 1.0 - err_all8, explain)
    for n in names:
        for p in sim.layers[n].options():
            if p != "float":
                errors[n][p] = sim.error({m: ("float" if m != n else p) for m in names})
        errors[n]["float"] = 0.0

    def best_int(n: str) -> str:
        e = errors[n]
        return "int16" if "int16" in e and e["int16"] < e["int8"] else "int8"

    order = sorted(names, key=lambda n: -errors[n]["int8"])
    raise_ = [n for n in order if best_int(n) == "int16"]

    def with_int16(k: int) -> dict[str, str]:
        a = dict(base)
        for n in raise_[:k]:
            a[n] = "int16"
        return a

    k, err = _fewest(lambda k: sim.error(with_int16(k)), len(raise_), floor)
    assign = with_int16(k)
    if err > floor:
        widened = with_int16(len(raise_))
        order_f = sorted(names, key=lambda n: -errors[n][best_int(n)])

        def with_float(j: int) -> dict[str, str]:
            a = dict(widened)
            for n in order_f[:j]:
                a[n] = "float"
            return a

        j, err = _fewest(lambda j: sim.error(with_float(j)), len(order_f), floor)
        assign = with_float(j)
    return _plan(sim, assign, errors, target, 1.0 - err, True)


def _fewest(error_of, n: int, floor: float) -> tuple[int, float]:
    """The smallest k in [0, n] with error_of(k) <= floor (bisection; errors shrink with k,
    roughly), and its error; n and its error when none meets it."""
    lo, hi = 0, n
    cache: dict[int, float] = {}

    def e(k: int) -> float:
        if k not in cache:
            cache[k] = error_of(k)
        return cache[k]

    if e(hi) > floor:
        return hi, e(hi)
    while lo < hi:
        mid = (lo + hi) // 2
        if e(mid) <= floor:
            hi = mid
        else:
            lo = mid + 1
    return hi, e(hi)


def _plan(sim: Simulation, assign, errors, target: float, cosine: float, explain: bool) -> Plan:
    base = sum(lay.work for lay in sim.layers.values()) or 1.0
    layers = []
    for n, lay in sim.layers.items():
        p = assign.get(n, "int8")
        e = errors.get(n, {})
        if explain and p not in e and p != "float":
            e[p] = sim.error({m: ("float" if m != n else p) for m in sim.layers})
        err = 0.0 if p == "float" else e.get(p, math.nan)
        layers.append(LayerChoice(n, p, err, dict(e), lay.work * COST[p] / base))
    return Plan(target, layers, cosine, sim.cost(assign), sim.evaluations, round(sim.seconds, 1))
