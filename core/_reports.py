"""Kept for imports written before report formats moved to :mod:`itemscore.reports`."""

from __future__ import annotations

from .reports import (
    BUILTIN_FORMATS,
    available_formats,
    check_out_dir,
    export,
    resolve_formats,
)

__all__ = ["BUILTIN_FORMATS", "available_formats", "check_out_dir", "export", "resolve_formats"]
