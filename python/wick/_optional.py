"""The optional dependencies: the converter and the quantizer need PyTorch (and static int8
needs torchao), which ``pip install wick`` leaves out; ``pip install "wick[convert]"`` brings
them (pyproject.toml). The runtime, the binding and the ``wick inspect/run/bench/graph``
commands need only numpy and flatbuffers, so nothing on their paths imports torch.

Entry points that need an optional package call :func:`require` first, so a missing one is
one clear message naming the command that installs it, not an ImportError from deep inside.
"""

from __future__ import annotations

import importlib
from types import ModuleType

CONVERT_EXTRA = 'pip install "wick[convert]"'

# What brings each optional module (the names pip knows them by, where they differ).
_INSTALL = {
    "torch": CONVERT_EXTRA,
    "torchao": CONVERT_EXTRA,
    "torchvision": "pip install torchvision",
}


class MissingDependency(ModuleNotFoundError):
    """An optional package a wick feature needs is not installed; the message says how to
    install it. A ``ModuleNotFoundError`` (so an ``ImportError``) whose ``name`` is the module."""


def require(module: str, feature: str) -> ModuleType:
    """Import and return ``module``; if it is not installed raise :class:`MissingDependency`
    saying that ``feature`` needs it and how to install it. An ImportError from inside an
    installed package (a broken install) propagates unchanged."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        how = _INSTALL.get(module, f"pip install {module}")
        raise MissingDependency(
            f"{feature} needs {module}, which `pip install wick` does not install: {how}",
            name=module,
        ) from None
