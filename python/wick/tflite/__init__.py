"""TFLite file facts (``schema``), operator versions (``versions``) and the writer (``writer``)."""

from .writer import ModelWriter, SubGraphWriter

__all__ = ["ModelWriter", "SubGraphWriter"]
