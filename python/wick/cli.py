"""The ``wick`` command.

    wick demo                               convert a built-in PyTorch model, run it, compare
    wick convert PKG.MOD:FACTORY --input 1x3x224x224 [-o m.tflite] [--dynamic ...]
                 [--target nnapi:27] [-q]
    wick quantize PKG.MOD:FACTORY --input 1x3x224x224 [--scheme int8] [--accuracy-target 0.99]
                  [--calibration N | --calibration-npz F.npz] [--report] [-o m.tflite]
    wick inspect | run | bench | generate M.tflite ... (the C tool; see `wick inspect --help`)
    wick graph M.tflite [-o M.html] [--profile TRACE.json]   offline HTML view of the graph

``inspect``, ``run``, ``bench`` and ``generate`` are served by the C command-line tool that
is built with the library (``wick/_lib/wick`` in an installed package,
``build/wick`` in a checkout: the one next to the library the binding loads),
so they behave identically from C-only installs. ``convert``, ``quantize`` and ``demo`` need
PyTorch (``pip install "wick[convert]"``); the other commands do not. Exit
status: 0 success, 1 model/runtime/conversion error or a missing optional
package, 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from pathlib import Path

from ._optional import MissingDependency, require

C_COMMANDS = ("inspect", "run", "bench", "generate", "version")


def _c_tool() -> Path:
    """The C tool next to the library the binding loads (wick.runtime.library_path)."""
    from .runtime import WickError, library_path

    try:
        lib = library_path()
    except WickError as e:
        raise SystemExit(f"wick: {e}") from None
    for cand in (lib.parent / "wick", lib.parent.parent / "wick"):
        if cand.exists() and os.access(cand, os.X_OK) and cand.is_file():
            return cand
    raise SystemExit(
        f"wick: the C tool was not found next to {lib}: in a checkout run `make build`, "
        "else reinstall the wick package"
    )


def _parse_shape(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad shape {text!r}: use e.g. 1x3x224x224") from None


def _load_factory(spec: str):
    if ":" not in spec:
        raise SystemExit(f"wick convert: expected PACKAGE.MODULE:FACTORY, got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise SystemExit(f"wick convert: cannot import {mod_name}: {e}") from None
    factory = getattr(mod, attr, None)
    if factory is None:
        raise SystemExit(f"wick convert: {mod_name} has no attribute {attr}")
    return factory


def _add_factory_arguments(p: argparse.ArgumentParser) -> None:
    """The model arguments of convert and quantize: the factory and its input shapes."""
    p.add_argument("factory", help="PACKAGE.MODULE:FACTORY, e.g. torchvision.models:mobilenet_v2")
    p.add_argument(
        "--input",
        action="append",
        type=_parse_shape,
        required=True,
        help="shape of one float32 input, e.g. 1x3x224x224 (repeat for more inputs)",
    )


def _add_output_arguments(p: argparse.ArgumentParser) -> None:
    """The last arguments of convert and quantize: the output path and --quiet."""
    p.add_argument("-o", "--output", default=None, help="output path (default: FACTORY.tflite)")
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no stage progress on stderr (shown by default)"
    )


def _factory_model(args, torch):
    """The factory's model (a module in eval mode) and one random sample of its input shapes."""
    model = _load_factory(args.factory)()
    if isinstance(model, torch.nn.Module):
        model.eval()  # factories build modules in training mode; deployment wants eval
    return model, tuple(torch.randn(*s) for s in args.input)


def _export(m, out: str, t0: float) -> None:
    """Writes the converted model to out and says so, with the time since t0."""
    m.export(out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes) in {time.perf_counter() - t0:.1f} s")


def cmd_convert(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="wick convert",
        description="Convert a PyTorch model that a factory builds into a .tflite file.",
    )
    _add_factory_arguments(p)
    p.add_argument(
        "--dynamic",
        action="append",
        default=[],
        help="INPUT_INDEX:DIM[:MIN:MAX] marks a dynamic dimension, e.g. 0:0 (batch)",
    )
    p.add_argument(
        "--channels-last-io",
        action="store_true",
        help="take and return NHWC tensors (no transposes at the boundary)",
    )
    p.add_argument(
        "--target",
        default=None,
        help='convert for a device: "nnapi:N" (NNAPI feature level N, e.g. nnapi:27 for '
        'Android 8.1; "nnapi" is 27): lowerings the level supports, and a report of what it '
        "would not run and why",
    )
    _add_output_arguments(p)
    args = p.parse_args(argv)
    if args.target is not None:
        from .target import parse_target

        try:
            parse_target(args.target)
        except ValueError as e:
            p.error(str(e))

    torch = require("torch", "wick convert")
    from . import ConversionError, convert

    model, sample = _factory_model(args, torch)
    dynamic = None
    if args.dynamic:
        dynamic = [dict() for _ in sample]
        for spec in args.dynamic:
            parts = spec.split(":")
            i, d = int(parts[0]), int(parts[1])
            lo = int(parts[2]) if len(parts) > 2 else 1
            hi = int(parts[3]) if len(parts) > 3 else 1 << 16
            dynamic[i][d] = torch.export.Dim(f"in{i}_d{d}", min=lo, max=hi)
        dynamic = tuple(dynamic)
    out = args.output or (args.factory.split(":")[1] + ".tflite")
    t0 = time.perf_counter()
    try:
        m = convert(
            model,
            sample,
            dynamic_shapes=dynamic,
            channels_last_io=args.channels_last_io,
            progress=not args.quiet,
            target=args.target,
        )
    except ConversionError as e:
        print(f"wick convert: {e}", file=sys.stderr)
        return 1
    _export(m, out, t0)
    return 0


def _calibration_batches(args, shapes, torch):
    """The calibration inputs: the arrays of an .npz file (one per model input, in order, each
    [N, *shape]), or N batches of seeded standard-normal values."""
    if args.calibration_npz:
        import numpy as np

        with np.load(args.calibration_npz) as z:
            arrays = [z[k] for k in z.files]
        if len(arrays) != len(shapes):
            raise SystemExit(
                f"wick quantize: {args.calibration_npz} holds {len(arrays)} arrays for "
                f"{len(shapes)} inputs (one array per input, [N, *shape] each)"
            )
        n = len(arrays[0])
        for a, shape in zip(arrays, shapes, strict=True):
            if len(a) != n or tuple(a.shape[1:]) != tuple(shape):
                raise SystemExit(
                    f"wick quantize: calibration array of shape {a.shape} does not stack "
                    f"{n} inputs of shape {tuple(shape)}"
                )
        return [tuple(torch.from_numpy(a[i]).float() for a in arrays) for i in range(n)]
    g = torch.Generator().manual_seed(0)
    return [tuple(torch.randn(*s, generator=g) for s in shapes) for _ in range(args.calibration)]


def cmd_quantize(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="wick quantize",
        description="Quantize a PyTorch model that a factory builds and convert it into a "
        ".tflite file (wick.quantize).",
    )
    _add_factory_arguments(p)
    p.add_argument(
        "--scheme",
        default="int8",
        help="int8 (static, calibrated: default), dynamic_int8 (int8 weights) or fp16",
    )
    p.add_argument(
        "--accuracy-target",
        default="0.99",
        help="int8: the cosine to the float model the plan must keep on the calibration data "
        "(default 0.99; 'none': int8 everywhere, no search) — wick.quantize's target=",
    )
    # `wick convert --target` is the device (nnapi:N); quantize's cosine was --target once
    p.add_argument("--target", dest="old_target", default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--calibration",
        type=int,
        default=8,
        help="int8: this many batches of seeded standard-normal inputs (default 8)",
    )
    p.add_argument(
        "--calibration-npz",
        default=None,
        help="int8: calibration inputs instead: one array per model input, [N, *shape] each",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print the plan: per layer the scheme, its error against float and its cost",
    )
    p.add_argument(
        "--smooth",
        default="auto",
        help="int8: SmoothQuant outlier migration: auto (default with an accuracy target: the "
        "alpha that errs least), an alpha in [0, 1], or none — wick.quantize's smooth=",
    )
    _add_output_arguments(p)
    args = p.parse_args(argv)
    if args.smooth.lower() in ("none", "auto"):
        smooth = None if args.smooth.lower() == "none" else "auto"
    else:
        try:
            smooth = float(args.smooth)
        except ValueError:
            p.error(f"--smooth takes auto, none or an alpha in [0, 1]; not {args.smooth!r}")
        if not 0.0 <= smooth <= 1.0:
            p.error(f"--smooth alpha must be in [0, 1], not {smooth}")
    if args.old_target is not None:
        p.error(
            "wick quantize's accuracy target is --accuracy-target (a cosine such as 0.99, or "
            "none); --target names a device in wick convert (nnapi:N)"
        )
    if args.accuracy_target.lower() == "none":
        target = None
    else:
        try:
            target = float(args.accuracy_target)
        except ValueError:
            p.error(
                "--accuracy-target takes a cosine such as 0.99, or none; "
                f"not {args.accuracy_target!r}"
            )

    torch = require("torch", "wick quantize")
    from . import ConversionError
    from .quantize import SCHEMES, quantize

    if args.scheme not in SCHEMES:
        p.error(f"--scheme must be one of {', '.join(SCHEMES)}, not {args.scheme!r}")
    model, sample = _factory_model(args, torch)
    extra = {}
    if args.scheme == "int8":
        extra = {
            "calibration": _calibration_batches(args, args.input, torch),
            "target": target,
            "report": args.report,
            "smooth": smooth,
        }
    out = args.output or (args.factory.split(":")[1] + ".tflite")
    t0 = time.perf_counter()
    try:
        m = quantize(model, sample, scheme=args.scheme, progress=not args.quiet, **extra)
    except ConversionError as e:
        print(f"wick quantize: {e}", file=sys.stderr)
        return 1
    if args.report and args.scheme != "int8":
        print(f"(scheme {args.scheme}: every weight tensor alike; no per-layer plan to report)")
    _export(m, out, t0)
    return 0


def cmd_demo(argv: list[str]) -> int:
    from .demo import main as demo_main

    return demo_main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd in C_COMMANDS:
        tool = str(_c_tool())
        os.execv(tool, [tool, cmd, *rest])
    try:
        if cmd == "convert":
            return cmd_convert(rest)
        if cmd == "quantize":
            return cmd_quantize(rest)
        if cmd == "graph":
            from .graph.cli import main as graph_main

            return graph_main(rest)
        if cmd == "demo":
            return cmd_demo(rest)
    except MissingDependency as e:  # e.g. `wick convert` where only `pip install wick` ran
        print(f"wick: {e}", file=sys.stderr)
        return 1
    print(f"wick: unknown command {cmd!r} (try `wick --help`)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
