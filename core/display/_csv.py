"""The one CSV writer of every report: exact floats, RFC 4180 quoting, cells made inert.

Cells are neutralised against CSV injection as OWASP recommends: a text cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so a spreadsheet
shows it as text instead of running it as a formula. A text that is a plain number (``-1``,
``+0.5``) is left alone: it cannot run anything. Numbers itemscore computes are never touched,
so negative values stay numbers; a float is written as ``repr`` writes it, the shortest text
that reads back as the same float.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["csv_text", "guard_cell"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def guard_cell(text: str) -> str:
    """``text`` made inert for spreadsheets: a leading ``'`` when it could start a formula.

    Example:
        >>> guard_cell("=HYPERLINK(1)"), guard_cell("-1.5"), guard_cell("model-a")
        ("'=HYPERLINK(1)", '-1.5', 'model-a')
    """
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):  # bool too: True, False
        return str(value)
    text = guard_cell(str(value))
    # RFC 4180. (Python's csv writer leaves a lone "\r" unquoted when lines end in "\n".)
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """The text of a CSV file: ``header``, then each row; every line ends with a line feed."""
    lines = [",".join(map(_cell, header))]
    lines.extend(",".join(map(_cell, row)) for row in rows)
    return "\n".join(lines) + "\n"
