"""``summary.csv``: one row per model and measurement, then its groups; floats written exactly.

Written by the one CSV writer (:mod:`itemscore.display._csv`): cells neutralised against CSV
injection, floats exact.
"""

from __future__ import annotations

from pathlib import Path

from .._result import RunResult
from ..display._csv import csv_text
from ..summary._summary import summary_columns, summary_rows
from ._files import open_report

__all__ = ["FILENAME", "summary_csv", "write"]

#: The file this format writes.
FILENAME = "summary.csv"


def summary_csv(result: RunResult) -> str:
    """The text of ``summary.csv``: the summary rows with a header."""
    columns = summary_columns(result)
    return csv_text(columns, ([row[c] for c in columns] for row in summary_rows(result)))


def write(result: RunResult, path: Path) -> None:
    """Write ``summary.csv`` for ``result`` to ``path``."""
    with open_report(path) as handle:
        handle.write(summary_csv(result))
