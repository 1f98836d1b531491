"""``wick.quantize``: a PyTorch module -> an int8 (or fp16-weight) ``wick.Model``.

    model = wick.quantize(module, sample_args, calibration=batches)          # static int8
    model = wick.quantize(module, sample_args, scheme="dynamic_int8")        # int8 weights
    model = wick.quantize(module, sample_args, scheme="fp16")                # fp16 weights

Schemes:

* ``"int8"`` — static full-integer int8 on torch's PT2E flow: ``torch.export`` ->
  ``prepare_pt2e`` with wick's own quantizer (quantizer.py) -> one forward pass per calibration
  batch -> ``convert_pt2e`` -> ``wick.convert``.  The file takes float inputs, quantizes them
  once, runs int8 kernels and dequantizes the outputs.  Ops that stay float inside the int8
  region (``skip=`` asks for some) are listed in ``Model.float_islands``, with a warning
  naming each op and its source line unless the user asked for them.  ``target=`` (cosine to
  the float model on the calibration data, default 0.99) runs a per-layer sensitivity pass
  (sensitivity.py) that keeps the layers int8 or raises them to 16x8 (int16 activations, int8
  weights; specs.py) or float, the cheapest mix meeting the target; ``report=True`` prints it
  per layer (scheme, error against float, cost); ``target=None`` is int8 everywhere.
* ``"dynamic_int8"`` — dynamic-range quantization as TFLite's converter does it: weights of
  FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D (>= 1024 elements) stored int8 symmetric per
  output channel, activations float; TFLite's hybrid kernels quantize the activations at run
  time (fully connected rows with a zero point, as TensorFlow writes them).  No calibration.
* ``"fp16"`` — float16 weight constants, each followed by a DEQUANTIZE to float32 (as TFLite's
  converter writes float16 quantization).  No calibration.

Calibration batches are checked against ``sample_args`` (count, arity, tensor dtype and shape)
before any export or calibration work; a mismatch raises ``CalibrationError`` (a
``wick.ConversionError`` and a ``ValueError``).
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Iterable

from .._optional import require
from ..converter.errors import ConversionError

SCHEMES = ("int8", "dynamic_int8", "fp16")
# the SmoothQuant alphas smooth="auto" tries (0: no smoothing); SmolLM2's MLP blocks with real
# weights (all int8, cosine of the MLP output on held-apart text): 0 -> 0.863, 0.5 -> 0.895,
# 0.8 -> 0.929
SMOOTH_ALPHAS = (0.0, 0.5, 0.8)

__all__ = ["quantize", "CalibrationError", "SCHEMES"]


class CalibrationError(ConversionError, ValueError):
    """Calibration data that does not fit the model's sample inputs."""


def _describe(x) -> str:
    import torch

    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}"
    return type(x).__name__


def check_calibration(calibration, sample_args: tuple, dynamic_shapes=None) -> list[tuple]:
    """The calibration batches as a list of argument tuples; raises CalibrationError when one
    does not match ``sample_args`` (tensors: same dtype, and same shape unless
    ``dynamic_shapes`` is given; other arguments: equal)."""
    import numpy as np
    import torch

    if calibration is None:
        raise CalibrationError(
            "static int8 quantization needs calibration data",
            hint="pass calibration=[(x1,), (x2,), ...]: a few representative input tuples",
        )
    if isinstance(calibration, (torch.Tensor, np.ndarray)):
        raise CalibrationError(
            "calibration must be an iterable of input tuples, not a single tensor",
            hint="wrap it: calibration=[(x,)] (or iterate over a batch dimension yourself)",
        )
    try:
        batches = list(calibration)
    except TypeError as e:
        raise CalibrationError(
            f"calibration must be an iterable of input tuples, got {type(calibration).__name__}"
        ) from e
    if not batches:
        raise CalibrationError(
            "calibration is empty: int8 parameters need at least one batch",
            hint="pass a few representative input tuples (a DataLoader works too)",
        )
    out = []
    n = len(sample_args)
    for i, b in enumerate(batches):
        if isinstance(b, (torch.Tensor, np.ndarray)):
            b = (b,)
        elif isinstance(b, list):
            b = tuple(b)
        elif not isinstance(b, tuple):
            raise CalibrationError(
                f"calibration batch {i} is a {type(b).__name__}; expected a tuple of {n} input(s)"
            )
        if len(b) != n:
            raise CalibrationError(
                f"calibration batch {i} has {len(b)} input(s); the model's sample_args have {n}",
                hint="each batch is one tuple of model inputs, in sample_args order",
            )
        args = []
        for j, (x, s) in enumerate(zip(b, sample_args, strict=True)):
            if isinstance(s, torch.Tensor):
                if isinstance(x, np.ndarray):
                    x = torch.from_numpy(x)
                if not isinstance(x, torch.Tensor):
                    raise CalibrationError(
                        f"calibration batch {i}, input {j}: expected a tensor like "
                        f"{_describe(s)}, got {_describe(x)}"
                    )
                if x.dtype != s.dtype:
                    raise CalibrationError(
                        f"calibration batch {i}, input {j}: dtype {_describe(x)} does not "
                        f"match the sample input {_describe(s)}",
                        hint=f"convert it: x.to({s.dtype})",
                    )
                if dynamic_shapes is None and tuple(x.shape) != tuple(s.shape):
                    raise CalibrationError(
                        f"calibration batch {i}, input {j}: shape {_describe(x)} does not "
                        f"match the sample input {_describe(s)}",
                        hint="the int8 model is exported for the sample shape; give batches "
                        "of that shape (or pass dynamic_shapes=)",
                    )
                if x.dim() != s.dim():
                    raise CalibrationError(
                        f"calibration batch {i}, input {j}: rank {x.dim()} does not match "
                        f"the sample input {_describe(s)}"
                    )
            elif x != s:
                raise CalibrationError(
                    f"calibration batch {i}, input {j}: {x!r} differs from the sample "
                    f"argument {s!r} (non-tensor arguments are fixed at export)"
                )
            args.append(x)
        out.append(tuple(args))
    return out


def quantize(
    module,
    sample_args,
    calibration: Iterable | None = None,
    *,
    scheme: str = "int8",
    kwargs=None,
    skip: Iterable = (),
    observer: str = "minmax",
    dynamic_shapes=None,
    channels_last_io: bool = False,
    debug_dir=None,
    progress: bool | None = None,
    verify: bool = True,
    target: float | None = 0.99,
    report: bool = False,
    smooth: float | str | None = "auto",
):
    """Quantize ``module`` and convert it; returns a ``wick.Model`` to call and ``export()``.

    ``sample_args``: example inputs (as for ``wick.convert``).  ``calibration``: an iterable of
    input tuples (``"int8"`` only).  ``skip``: module types, qualified module names or FX-node
    predicates to keep float (``"int8"``).  ``observer``: ``"minmax"`` (TFLite's calibrator) or
    ``"histogram"``.  ``progress``: as for ``wick.convert``.  The returned model's
    ``reference`` is the PT2E reference module (``convert_pt2e``'s output, float ops between
    quantize/dequantize) for ``"int8"``.  ``verify``: as for ``wick.convert`` (the int8 file is
    compared with that reference module).  ``target``: the cosine to the float model the
    ``"int8"`` plan must keep on the calibration data (None: int8 everywhere, no search);
    ``report``: print the plan.  The plan is ``Model.quantization_plan`` (None without a
    target).  ``smooth``: migrate activation outliers into the weights before calibration
    (SmoothQuant, smooth.py) with this alpha in [0, 1]; ``"auto"`` (with a ``target``): the
    alpha among ``SMOOTH_ALPHAS`` (0 = off) whose all-int8 simulation errs least, reported in
    the plan; None: off.  ``Model.smoothed`` is the number of producers whose readers were
    rescaled.

    Needs PyTorch, and torchao for ``"int8"`` (``pip install "wick[convert]"``); without them
    this raises ``ModuleNotFoundError`` saying so."""
    torch = require("torch", "wick.quantize")

    from ..convert import convert

    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}")
    if not isinstance(sample_args, tuple):
        sample_args = (sample_args,)
    if scheme != "int8":
        if calibration is not None:
            raise CalibrationError(f"scheme {scheme!r} takes no calibration data")
        return convert(
            module,
            sample_args,
            kwargs,
            dynamic_shapes=dynamic_shapes,
            channels_last_io=channels_last_io,
            debug_dir=debug_dir,
            progress=progress,
            weights={"dynamic_int8": "int8", "fp16": "float16"}[scheme],
            verify=verify,
        )
    if kwargs:
        raise ConversionError("wick.quantize(scheme='int8') takes positional sample_args only")
    batches = check_calibration(calibration, sample_args, dynamic_shapes)
    skip = tuple(skip)

    require("torchao", "static int8 quantization (wick.quantize scheme 'int8')")
    from .quantizer import WickQuantizer  # imports torchao

    def factory(precision):
        return WickQuantizer(observer=observer, skip=skip, precision=precision)

    plan = None
    was_training = isinstance(module, torch.nn.Module) and module.training
    if was_training:
        try:
            module.eval()  # quantize the inference graph (dropout off, batch-norm statistics)
        except NotImplementedError:  # exported GraphModules have their mode baked in
            was_training = False
    try:
        gm = export_for_quantization(module, sample_args, dynamic_shapes)
        smoothed = 0
        if smooth is not None and smooth != "auto":
            from .smooth import smooth as migrate_outliers

            smoothed = migrate_outliers(gm, batches, float(smooth))
        if target is None:
            reference = _calibrate(gm, factory(None), batches)
        else:
            reference, plan, smoothed = _plan_and_calibrate(
                module, gm, factory, batches, float(target), report, smooth == "auto", smoothed
            )
    finally:
        if was_training:
            module.train()
    model = convert(
        reference,
        sample_args,
        dynamic_shapes=dynamic_shapes,
        channels_last_io=channels_last_io,
        debug_dir=debug_dir,
        progress=progress,
        verify=False,
    )
    if verify:  # the integer file against the PT2E reference module, at the int8 bar
        from ..verify import verify_model

        verify_model(
            model,
            [("serving_default", reference, sample_args, None)],
            channels_last_io=channels_last_io,
            scheme="int8",
        )
    model.reference = reference
    model.scheme = "int8"
    model.quantization_plan = plan
    model.smoothed = smoothed
    if report and plan is not None:
        print(plan.format())
    chosen = [c.name for c in plan.layers if c.precision == "float"] if plan else []
    # RSQRT in a 16x8 layer is float by design (specs.FLOAT_AT_INT16): no warning for those
    by_design = {"RSQRT"} if plan and any(c.precision == "int16" for c in plan.layers) else set()
    unexpected = [(op, src) for op, src in model.float_islands if op not in by_design]
    if unexpected and not skip:
        lines = "\n".join(f"  {op}  ({src or 'no source line'})" for op, src in unexpected)
        why = (
            f" (target={target} keeps {len(chosen)} layer(s) float: {', '.join(chosen)}; "
            "report=True shows why)"
            if chosen
            else ""
        )
        warnings.warn(
            f"wick.quantize: {len(unexpected)} op(s) stay float inside the int8 "
            f"model{why}:\n{lines}",
            stacklevel=2,
        )
    return model


def export_for_quantization(module, sample_args, dynamic_shapes=None):
    """``torch.export.export(module, sample_args, strict=False).module()``, or a
    ConversionError that says so."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchao/torch.export deprecation chatter
        try:
            return torch.export.export(
                module, sample_args, dynamic_shapes=dynamic_shapes, strict=False
            ).module()
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise ConversionError(
                f"torch.export failed: {type(e).__name__}: {first}",
                hint="the model must be exportable with torch.export.export(model, args, "
                "strict=False)",
            ) from e


def _calibrate(gm, quantizer, batches):
    """prepare_pt2e -> one forward per batch -> convert_pt2e, on an exported module."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchao deprecation chatter
        prepared = prepare_pt2e(gm, quantizer)
        with torch.no_grad():
            for b in batches:
                prepared(*b)
        return convert_pt2e(prepared)


def _plan_and_calibrate(module, exported, factory, batches, target, report, auto_smooth, smoothed):
    """The sensitivity search (sensitivity.py) on ``exported`` (``module`` exported, perhaps
    smoothed; with ``auto_smooth`` first the smoothing alpha whose all-int8 simulation errs
    least), then the PT2E reference module of its plan, the plan, and how many producers were
    smoothed."""
    import copy

    import torch
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    from .sensitivity import Simulation, layer_of, min_cosine, search
    from .smooth import candidates, smooth

    sim = Simulation(module, exported, batches, factory)
    tried, alpha = {}, None
    if auto_smooth and candidates(exported):
        names = list(sim.layers)
        best = (sim.error(dict.fromkeys(names, "int8")), 0.0, sim, 0)
        tried[0.0] = best[0]
        for alpha in SMOOTH_ALPHAS[1:]:
            gm = copy.deepcopy(exported)
            n = smooth(gm, batches, alpha)
            other = Simulation(module, gm, batches, factory)
            err = other.error(dict.fromkeys(names, "int8"))
            tried[alpha] = err
            if err < best[0]:
                best = (err, alpha, other, n)
        _, alpha, sim, smoothed = best
        exported = sim.exported
    plan = search(sim, target, explain=report)
    plan.smoothing, plan.smooth_alpha = tried, alpha
    assign = plan.assignment()
    if all(p == "int8" for p in assign.values()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = convert_pt2e(sim.calibrated)
    else:
        quantizer = factory(lambda n: assign.get(layer_of(n), "int8"))
        reference = _calibrate(copy.deepcopy(sim.exported), quantizer, batches)
    with torch.no_grad():
        plan.final_cosine = min(
            min_cosine(reference(*b), ref) for b, ref in zip(batches, sim.reference, strict=True)
        )
    return reference, plan, smoothed


class _CallableModule(types.ModuleType):
    """``wick.quantize`` is both this package and its main function."""

    def __call__(self, *args, **kwargs):
        return quantize(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
