"""``results.xlsx``: a Summary sheet (as ``summary.csv``) and the items, written with XlsxWriter.

XlsxWriter (the optional ``xlsx`` extra) streams each sheet row by row in its
``constant_memory`` mode, so memory stays bounded however many items a run has. It is told
never to read text as a formula, a link or a number, and every text is written with
``write_string``: no text from the data can ever become a formula, in the header or anywhere
else. Characters XML cannot hold (controls, lone surrogates) are shown as visible escapes;
texts are cut at Excel's limit of 32,767 characters.

Excel opens at most 1,048,576 rows a sheet: the items continue on ``Outputs (2)``,
``Outputs (3)``..., each with the header row.

XlsxWriter spends 6 to 17 µs on each cell in Python, 60 to 170 µs on an item with three
metrics (ten cells; measured at loads 2 to 4 on 2 cores): more than every other report
together. So when the default set is written (no format named) for a run of more than
:data:`ITEM_LIMIT` items, the Outputs sheet holds only the first :data:`ITEM_LIMIT` (0.3 to
0.9 s of writing): the export asks :func:`item_limit`, prints :func:`limit_notice` on
standard error, and the header row of the sheet carries :func:`limit_note`, which points to
``items.parquet`` (every item, always in the default set). The Summary sheet is always
complete. Naming the format (``--report xlsx``, ``export(..., ["xlsx"])``) writes every
item, however long that takes.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._records import STATE_NAMES, STATES, ItemResult
from .._result import RunResult
from ..summary._summary import summary_columns, summary_rows

if TYPE_CHECKING:
    from xlsxwriter.format import Format
    from xlsxwriter.workbook import Workbook
    from xlsxwriter.worksheet import Worksheet

__all__ = [
    "FILENAME",
    "ITEM_LIMIT",
    "MAX_ROWS",
    "item_limit",
    "limit_note",
    "limit_notice",
    "write",
]

#: The file this format writes.
FILENAME = "results.xlsx"
#: Excel's row limit per sheet (the header included).
MAX_ROWS = 1_048_576
#: Items the Outputs sheet holds when the default set is written (see :func:`item_limit`).
ITEM_LIMIT = 5_000
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


def item_limit(explicit: bool, n_items: int) -> int | None:
    """How many items the Outputs sheet holds: ``None`` for all of them.

    Args:
        explicit: Whether ``xlsx`` was named among the formats (``--report xlsx``); then
            every item is written, however many.
        n_items: The number of items of the run.

    Returns:
        :data:`ITEM_LIMIT` when the format was not named and the run has more items,
        else ``None``.

    Example:
        >>> item_limit(False, 1_000_000), item_limit(True, 1_000_000), item_limit(False, 10)
        (5000, None, None)
    """
    if explicit or n_items <= ITEM_LIMIT:
        return None
    return ITEM_LIMIT


def limit_note(n_items: int, limit: int) -> str:
    """The note in the workbook when its Outputs sheet holds only the first ``limit`` items."""
    return (
        f"This sheet holds the first {limit:,} of {n_items:,} items; every item is in "
        "items.parquet (write every item here with --report xlsx)."
    )


def limit_notice(n_items: int, limit: int) -> str:
    """The notice on standard error when ``results.xlsx`` holds only the first ``limit`` items."""
    return (
        f"Note: results.xlsx holds the first {limit:,} of {n_items:,} items in its Outputs "
        "sheet (its Summary is complete); every item is in items.parquet. Name the format to "
        "write every item: --report xlsx (with the other formats you want), or "
        'export(..., formats=[..., "xlsx"]).'
    )


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _text(value: str) -> str:
    """``value`` with what XML cannot hold as visible escapes, cut at Excel's cell limit."""
    if value.isascii() and value.isprintable() and len(value) <= _MAX_CELL:
        return value
    return _NOT_XML.sub(_escape, value)[:_MAX_CELL]


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


def _write_summary(book: Workbook, header_fmt: Format, decimal: Format, result: RunResult) -> None:
    integer = book.add_format({"num_format": "0"})
    percent = book.add_format({"num_format": "0%"})
    summary = book.add_worksheet("Summary")
    summary.freeze_panes(1, 0)
    for col, width in enumerate((12.0, 18.0, 14.0, 12.0)):
        summary.set_column(col, col, width)
    columns = summary_columns(result)
    summary.set_column(4, len(columns) - 1, 10.0)
    formats: list[Format | None] = []
    for column in columns:
        if column in ("value", "ci_low", "ci_high"):
            formats.append(decimal)
        elif column == "confidence":
            formats.append(percent)
        elif column in ("n", *STATE_NAMES, "small_group", "n_attempts"):
            formats.append(integer)
        else:
            formats.append(None)
    _row(summary, 0, columns, [header_fmt] * len(columns))
    for r, row in enumerate(summary_rows(result), 1):
        _row(summary, r, [row[c] for c in columns], formats)


def write(
    result: RunResult, path: Path, *, max_rows: int = MAX_ROWS, max_items: int | None = None
) -> None:
    """Write ``results.xlsx`` for ``result`` to ``path``.

    Args:
        result: The run.
        path: Where to write.
        max_rows: Rows per sheet, the header included (Excel's limit; smaller in tests).
        max_items: Write only the first this many items (see :func:`item_limit`), with a
            note in the Outputs header saying where every item is; ``None``: every item.

    Raises:
        ImportError: XlsxWriter is not installed (``pip install XlsxWriter``).
    """
    import xlsxwriter

    n_items = len(result.items)
    shown = n_items if max_items is None else min(n_items, max_items)
    book = xlsxwriter.Workbook(str(path), {**_OPTIONS, "use_zip64": shown > 100_000})
    book.set_properties({"created": _CREATED})
    header_fmt = book.add_format({"bold": True, "pattern": 1, "bg_color": "#D9E1F2", "bottom": 1})
    note_fmt = book.add_format({"bold": True, "font_color": "#9C5700", "bg_color": "#FFEB9C"})
    decimal = book.add_format({"num_format": "0.0000"})
    _write_summary(book, header_fmt, decimal, result)

    # Read once, in order: the first row tells the labels beyond the configured ones.
    taken = islice(result.table.rows(), shown)
    first = next(taken, None)
    labels = list(result.labels)
    for label in first.scores if first is not None else ():
        if label not in labels:
            labels.append(label)
    rows: Iterator[ItemResult] = taken if first is None else chain((first,), taken)
    header = ["id", "model", "group", "input", "output", "expected"]
    for label in labels:
        header += [label, f"{label} status"]
    widths = [14.0, 14.0, 12.0, 40.0, 40.0, 24.0] + [12.0, 10.0] * len(labels)
    column_of = {label: 6 + 2 * i for i, label in enumerate(labels)}
    note = limit_note(n_items, shown) if shown < n_items else None
    per_sheet = max_rows - 1
    n_sheets = max(1, -(-shown // per_sheet))
    for index in range(n_sheets):
        sheet = book.add_worksheet("Outputs" if index == 0 else f"Outputs ({index + 1})")
        sheet.freeze_panes(1, 0)
        for col, width in enumerate(widths):
            sheet.set_column(col, col, width)
        _row(sheet, 0, header, [header_fmt] * len(header))
        if note is not None:
            sheet.write_string(0, len(header), note, note_fmt)
        _items(sheet, islice(rows, per_sheet), column_of, decimal)
    book.close()


def _items(
    sheet: Worksheet,
    rows: Iterable[ItemResult],
    column_of: dict[str, int],
    decimal: Format,
) -> None:
    """One row per item from row 1 on: the texts as string cells, each score's value and state."""
    write_string = sheet.write_string
    write_number = sheet.write_number
    names = {state: state.value for state in STATES}
    for r, item in enumerate(rows, 1):
        write_string(r, 0, _text(item.id))
        for col, text in ((1, item.model), (2, item.group), (3, item.input), (4, item.output)):
            if text is not None:
                write_string(r, col, _text(text))
        if item.expected:
            write_string(r, 5, _text(" | ".join(item.expected)))
        for label, score in item.scores.items():
            where = column_of.get(label)
            if where is None:
                continue
            value = score.value
            if value is not None:
                write_number(r, where, value, decimal)
            write_string(r, where + 1, names[score.status])
