"""``summary.csv``: one row per model and measurement, then its groups; floats written exactly.

Cells are neutralised against CSV injection as OWASP recommends: a text cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so a spreadsheet
shows it as text instead of running it as a formula. A text that is a plain number (``-1``,
``+0.5``) is left alone: it cannot run anything. Numbers itemscore computes are never
touched, so negative values stay numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

from .._result import RunResult
from ..summary._summary import summary_columns, summary_rows
from ._files import open_report

__all__ = ["FILENAME", "guard_cell", "summary_csv", "write"]

#: The file this format writes.
FILENAME = "summary.csv"

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


def _number(value: float | None) -> str:
    # repr is the shortest text that reads back as the same float: exact, and stable.
    return "" if value is None else repr(float(value))


def _quote(cell: str) -> str:
    # RFC 4180. Python's csv writer leaves a lone "\r" unquoted when the line ends in "\n".
    if any(c in cell for c in ',"\r\n'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def summary_csv(result: RunResult) -> str:
    """The text of ``summary.csv``: the summary rows with a header."""
    columns = summary_columns(result)
    lines = [",".join(columns)]
    for row in summary_rows(result):
        cells = []
        for column in columns:
            value = row[column]
            if isinstance(value, float):
                cells.append(_number(value))
            elif isinstance(value, int):
                cells.append(str(value))
            else:
                cells.append("" if value is None else guard_cell(str(value)))
        lines.append(",".join(map(_quote, cells)))
    return "\n".join(lines) + "\n"


def write(result: RunResult, path: Path) -> None:
    """Write ``summary.csv`` for ``result`` to ``path``."""
    with open_report(path) as handle:
        handle.write(summary_csv(result))
