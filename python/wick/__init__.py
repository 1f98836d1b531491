"""wick: take PyTorch models to devices (torch.export -> .tflite converter + C runtime)."""

__version__ = "0.1.0"

from .runtime import DelegationRecord, Runtime, WickError, load  # noqa: E402,F401  (no torch)


def __getattr__(name):
    # Converter entry points load lazily so `import wick` stays light (no torch import).
    # Note: importing the submodule wick.convert binds the *module* as attribute `convert`
    # of this package; we then rebind the public names to the function and classes.
    if name in ("convert", "ConversionError", "Model"):
        import importlib

        mod = importlib.import_module(".convert", __name__)
        g = globals()
        g["convert"], g["ConversionError"], g["Model"] = mod.convert, mod.ConversionError, mod.Model
        return g[name]
    if name == "VerificationWarning":  # wick.convert's self-check (wick.verify)
        from .verify import VerificationWarning

        globals()[name] = VerificationWarning
        return VerificationWarning
    if name == "TargetWarning":  # wick.convert(..., target="nnapi:27"): not all would run
        from .target import TargetWarning

        globals()[name] = TargetWarning
        return TargetWarning
    if name == "quantize":  # wick.quantize: PT2E int8 / dynamic-range / fp16 (lazy: torch)
        import importlib

        mod = importlib.import_module(".quantize", __name__)
        globals()["quantize"] = mod  # the package is callable: wick.quantize(module, ...)
        return mod
    if name == "visualize":  # wick.graph: offline HTML view of a model (lazy: no torch import)
        return __import__(f"{__name__}.graph", fromlist=["visualize"]).visualize
    raise AttributeError(f"module 'wick' has no attribute {name!r}")
