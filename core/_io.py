"""Moved to :mod:`itemscore.inputs`; these names stay importable from here for a while."""

from __future__ import annotations

from .inputs import (
    FORMATS,
    ROLES,
    check_columns,
    detect_format,
    parse_column_map,
    read_items,
)
from .inputs import decode as _decode

__all__ = [
    "FORMATS",
    "ROLES",
    "_decode",
    "check_columns",
    "detect_format",
    "parse_column_map",
    "read_items",
]
