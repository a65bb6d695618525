"""Opening report files: UTF-8, no newline translation, lone surrogates escaped, not fatal."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

__all__ = ["open_report"]


def open_report(path: Path) -> TextIO:
    r"""Open ``path`` for writing a text report.

    Lone surrogates (which UTF-8 cannot encode) are written as ``\udXXX``: inside a JSON
    string that is the very escape JSON uses, so the text reads back unchanged; elsewhere it
    shows the character visibly instead of crashing the writer.
    """
    return open(path, "w", encoding="utf-8", errors="backslashreplace", newline="")
