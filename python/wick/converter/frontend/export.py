"""Run torch.export on a module and decompose to core ATen (stage 1 of the pipeline).

Invariant of the result: an ``ExportedProgram`` whose graph holds only core-ATen operators
(plus ``getitem`` and symbolic-size nodes), with parameters/buffers/constants lifted to
placeholders.  The module is exported in eval mode; a module found in training mode gets a
warning (dropout and batch-norm statistics would differ) and is switched to eval.
"""

from __future__ import annotations

import warnings

import torch

from ..errors import ConversionError

# Ops that torch's default decomposition table would break into many small pieces but that
# map to one TFLite operator each; keep them whole.
_KEEP = (
    "aten.upsample_nearest2d.vec",
    "aten.upsample_bilinear2d.vec",
    "aten.upsample_nearest2d.default",
    "aten.upsample_bilinear2d.default",
    "aten.pixel_shuffle.default",
    "aten.pixel_unshuffle.default",
    "aten._prelu_kernel.default",  # PRELU (the decomposition is GREATER, MUL and SELECT_V2)
)


def _decomp_table():
    table = torch.export.default_decompositions()
    for name in _KEEP:
        _, op, overload = name.split(".")
        packet = getattr(torch.ops.aten, op, None)
        if packet is None or not hasattr(packet, overload):
            continue
        table.pop(getattr(packet, overload), None)
    return table


def export_module(
    module: torch.nn.Module, args: tuple, kwargs: dict | None = None, dynamic_shapes=None
) -> torch.export.ExportedProgram:
    if not isinstance(module, torch.nn.Module):
        raise ConversionError(
            f"wick.convert expects a torch.nn.Module, got {type(module).__name__}",
            hint="wrap functions in a small nn.Module whose forward calls them",
        )
    was_training = module.training
    try:
        module.eval()
        switchable = True
    except NotImplementedError:
        # exported GraphModules (torch.export(...).module(), PT2E convert_pt2e output) have
        # their mode baked in and refuse eval()/train()
        switchable = False
    if switchable and was_training:
        warnings.warn(
            f"{type(module).__name__} is in training mode; wick converts it in eval mode "
            "(call model.eval() first to silence this)",
            stacklevel=5,  # the caller of wick.convert (convert -> _convert -> _convert_graph)
        )
    if not isinstance(args, tuple):
        args = (args,)
    try:
        with torch.no_grad():
            ep = torch.export.export(
                module, args, kwargs or {}, dynamic_shapes=dynamic_shapes, strict=False
            )
            ep = ep.run_decompositions(_decomp_table())
    except ConversionError:
        raise
    except Exception as e:  # torch.export's own errors: report them with context
        raise ConversionError(
            f"torch.export failed: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}",
            hint="the model must be exportable with torch.export.export(model, args, strict=False); "
            "data-dependent Python control flow is the usual cause",
        ) from e
    finally:
        if switchable:
            module.train(was_training)  # leave the caller's module as it was
    return ep
