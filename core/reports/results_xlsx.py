"""``results.xlsx``: a Summary sheet (as ``summary.csv``) and the items, written with XlsxWriter.

XlsxWriter (the optional extra ``itemscore[xlsx]``) streams each sheet row by row in its
``constant_memory`` mode, so memory stays bounded however many items a run has. It is told
never to read text as a formula, a link or a number, and every text is written with
``write_string``: no text from the data can ever become a formula, in the header or anywhere
else. Characters XML cannot hold (controls, lone surrogates) are shown as visible escapes;
texts are cut at Excel's limit of 32,767 characters.

Excel opens at most 1,048,576 rows a sheet: the items continue on ``Outputs (2)``,
``Outputs (3)``..., each with the header row.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._result import RunResult
from ._rows import STATUS_NAMES, score_rows
from ._summary import SUMMARY_COLUMNS, summary_rows

if TYPE_CHECKING:
    from xlsxwriter.format import Format
    from xlsxwriter.worksheet import Worksheet

__all__ = ["FILENAME", "MAX_ROWS", "write"]

#: The file this format writes.
FILENAME = "results.xlsx"
#: Excel's row limit per sheet (the header included).
MAX_ROWS = 1_048_576
_MAX_CELL = 32_767  # Excel's limit on the characters of one cell
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
#: The workbook's creation date: fixed, so the same run gives the same bytes.
_CREATED = datetime.datetime(2000, 1, 1)
_OPTIONS = {
    "constant_memory": True,  # row by row through a temporary file: bounded memory
    "strings_to_formulas": False,
    "strings_to_urls": False,
    "strings_to_numbers": False,
    "nan_inf_to_errors": True,  # a NaN value shows as #NUM! instead of failing the export
}


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _text(value: str) -> str:
    """``value`` with what XML cannot hold as visible escapes, cut at Excel's cell limit."""
    if not value.isascii() or not value.isprintable():
        value = _NOT_XML.sub(_escape, value)
    return value[:_MAX_CELL]


def _row(
    sheet: Worksheet, row: int, values: Sequence[Any], formats: Sequence[Format | None]
) -> None:
    for col, (value, fmt) in enumerate(zip(values, formats)):
        if value is None:
            continue
        if isinstance(value, bool):
            sheet.write_boolean(row, col, value, fmt)
        elif isinstance(value, (int, float)):
            sheet.write_number(row, col, value, fmt)
        else:
            sheet.write_string(row, col, _text(str(value)), fmt)


def _labels(result: RunResult) -> list[str]:
    labels = list(result.labels)
    seen = set(labels)
    for item in result.items[:1]:
        for label in item.scores:
            if label not in seen:
                labels.append(label)
                seen.add(label)
    return labels


def write(result: RunResult, path: Path, *, max_rows: int = MAX_ROWS) -> None:
    """Write ``results.xlsx`` for ``result`` to ``path``.

    Args:
        result: The run.
        path: Where to write.
        max_rows: Rows per sheet, the header included (Excel's limit; smaller in tests).

    Raises:
        ImportError: XlsxWriter is not installed (``pip install 'itemscore[xlsx]'``).
    """
    import xlsxwriter

    n_items = len(result.items)
    book = xlsxwriter.Workbook(str(path), {**_OPTIONS, "use_zip64": n_items > 100_000})
    book.set_properties({"created": _CREATED})
    header_fmt = book.add_format({"bold": True, "pattern": 1, "bg_color": "#D9E1F2", "bottom": 1})
    decimal = book.add_format({"num_format": "0.0000"})
    integer = book.add_format({"num_format": "0"})
    percent = book.add_format({"num_format": "0%"})

    summary = book.add_worksheet("Summary")
    summary.freeze_panes(1, 0)
    summary.set_column(0, 0, 12.0)
    summary.set_column(1, 1, 18.0)
    summary.set_column(2, 2, 14.0)
    summary.set_column(3, 3, 12.0)
    summary.set_column(4, len(SUMMARY_COLUMNS) - 1, 10.0)
    formats: list[Format | None] = []
    for column in SUMMARY_COLUMNS:
        if column in ("value", "ci_low", "ci_high"):
            formats.append(decimal)
        elif column == "confidence":
            formats.append(percent)
        elif column in ("n", "ok", "fail", "skip", "error", "small_group"):
            formats.append(integer)
        else:
            formats.append(None)
    _row(summary, 0, SUMMARY_COLUMNS, [header_fmt] * len(SUMMARY_COLUMNS))
    for r, row in enumerate(summary_rows(result), 1):
        _row(summary, r, [row[c] for c in SUMMARY_COLUMNS], formats)

    labels = _labels(result)
    header = ["id", "model", "group", "input", "output", "expected"]
    for label in labels:
        header += [label, f"{label} status"]
    widths = [14.0, 14.0, 12.0, 40.0, 40.0, 24.0] + [12.0, 10.0] * len(labels)
    per_sheet = max_rows - 1
    n_sheets = max(1, -(-n_items // per_sheet))
    rows = score_rows(result)
    for index in range(n_sheets):
        sheet = book.add_worksheet("Outputs" if index == 0 else f"Outputs ({index + 1})")
        sheet.freeze_panes(1, 0)
        for col, width in enumerate(widths):
            sheet.set_column(col, col, width)
        _row(sheet, 0, header, [header_fmt] * len(header))
        write_string = sheet.write_string
        write_number = sheet.write_number
        columns = [(label, 6 + 2 * i) for i, label in enumerate(labels)]
        for r, (item, scores) in zip(range(1, per_sheet + 1), rows):
            expected = " | ".join(item.expected) if item.expected else None
            texts = (item.id, item.model, item.group, item.input, item.output, expected)
            for col, text in enumerate(texts):
                if text is not None:
                    write_string(r, col, _text(text))
            by_label = dict(scores)
            for label, col in columns:
                score = by_label.get(label)
                if score is None:
                    continue
                code, value = score[0], score[1]
                if value is not None:
                    write_number(r, col, value, decimal)
                write_string(r, col + 1, STATUS_NAMES[code])
    book.close()
