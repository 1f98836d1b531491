"""TFLite file facts (``schema``), one record per operator (``ops``: code, options table,
versions; rules in ``versions``) and the writer (``writer``)."""

from .writer import ModelWriter, SubGraphWriter

__all__ = ["ModelWriter", "SubGraphWriter"]
