"""Frontend: PyTorch module -> torch.export program (core ATen) -> wick IR.

``export_module`` runs torch.export and the core-ATen decompositions; ``import_program`` turns
the resulting FX graph into ``wick.converter.ir.Graph``.
"""

from .export import export_module
from .importer import import_program  # noqa: E402

__all__ = ["export_module", "import_program"]
