"""CSV (``.csv``) and TSV (``.tsv``, ``.tab``): a header row, then one row per item.

Read as a stream, line by line. Cells are text: an empty cell is an empty text, and CSV has no
null (the converter's ``null_output`` marker names failed requests). Quoting problems are
reported at the line where the quoted field starts.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from .._exceptions import InputError
from ._source import DEFAULT_CHUNK_SIZE, Rows, RowSource, decode

__all__ = ["read_csv", "read_tsv"]

_FIELD_LIMIT = 2**31 - 1  # model outputs can be longer than csv's default 128 kB


def read_csv(path: Path, name: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> RowSource:
    """Open a comma-separated file; the header is read now, the rows as chunks are iterated."""
    return _open(path, name, ",", "csv", chunk_size)


def read_tsv(path: Path, name: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> RowSource:
    """Open a tab-separated file."""
    return _open(path, name, "\t", "tsv", chunk_size)


class _Records:
    """The CSV records of an open file from ``offset`` on, each with the line it starts on.

    Lines are decoded one at a time, so a bad byte is named at its line.
    """

    def __init__(
        self, handle: BinaryIO, name: str, fmt: str, delimiter: str, lineno: int = 0
    ) -> None:
        self.handle = handle
        self.name = name
        self.fmt = fmt
        self.lineno = lineno
        self.previous = lineno
        self.reader = csv.reader(self._lines(), delimiter=delimiter, strict=True)

    def _lines(self) -> Iterator[str]:
        for raw in self.handle:
            self.lineno += 1
            yield decode(raw, self.name, first_line=self.lineno, bom=self.lineno == 1)

    def next(self) -> tuple[int, list[str] | None]:
        """``(first line, fields)`` of the next record; ``fields`` is ``None`` at the end."""
        name, kind = self.name, self.fmt.upper()
        start = self.previous + 1
        try:
            fields = next(self.reader, None)
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise InputError.at(
                    name,
                    start,
                    None,
                    f"bad {kind} quoting: a quoted field that starts on this line is never "
                    'closed. Close the quote, and double quotes inside it ("").',
                ) from None
            raise InputError.at(
                name,
                self.lineno,
                None,
                f"bad {kind} quoting ({exc}). A field holding quotes, delimiters or line breaks "
                'must be quoted, with inner quotes doubled ("").',
            ) from None
        self.previous = self.lineno
        return start, fields


def _open(path: Path, name: str, delimiter: str, fmt: str, chunk_size: int) -> RowSource:
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    # The header is read now and the file closed; the rows reopen it where the header ended,
    # so no handle stays open when the rows are never read (a header the converter refuses).
    header: list[str] | None = None
    header_line = 0
    with path.open("rb") as handle:
        records = _Records(handle, name, fmt, delimiter)
        while header is None:
            header_line, fields = records.next()
            if fields is None:
                raise InputError.at(
                    name,
                    1,
                    None,
                    "the file is empty: it holds no rows to score (and no header row).",
                )
            if fields:
                header = _check_header(fields, name, header_line)
        offset, lineno = handle.tell(), records.lineno
    columns: list[str] = header
    sep = "tabs" if delimiter == "\t" else "commas"

    def chunks() -> Iterator[Rows]:
        rows: list[dict[str, Any]] = []
        lines: list[int] = []
        width = len(columns)
        with path.open("rb") as handle:
            handle.seek(offset)
            records = _Records(handle, name, fmt, delimiter, lineno)
            while True:
                start, fields = records.next()
                if fields is None:
                    break
                if not fields:
                    continue  # a blank line
                if len(fields) != width:
                    raise InputError.at(
                        name,
                        start,
                        None,
                        f"the row has {len(fields)} fields, the header (line {header_line}) has "
                        f"{width}. Quote fields that contain {sep}.",
                    )
                rows.append(dict(zip(columns, fields)))
                lines.append(start)
                if len(rows) >= chunk_size:
                    yield Rows(name, rows, lines)
                    rows, lines = [], []
        if rows:
            yield Rows(name, rows, lines)

    return RowSource(name, fmt, columns, chunks())


def _check_header(fields: list[str], name: str, line: int) -> list[str]:
    seen: set[str] = set()
    for index, field in enumerate(fields, 1):
        if not field.strip():
            raise InputError.at(
                name, line, None, f"header field {index} is empty; name every column."
            )
        if field in seen:
            raise InputError.at(
                name,
                line,
                None,
                f"the header names column {field!r} twice; column names must be unique.",
            )
        seen.add(field)
    return fields
