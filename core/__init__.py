"""itemscore: evaluation metrics as plugins."""

from __future__ import annotations

from importlib.metadata import version as _version

__version__ = _version("itemscore")
__all__ = ["__version__"]
