"""CSV (``.csv``) and TSV (``.tsv``, ``.tab``): a header row, then one row per item.

Read as a stream, line by line. Cells are text: an empty cell is an empty text, and CSV has no
null (the converter's ``null_output`` marker names failed requests). Quoting problems are
reported at the line where the quoted field starts.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


class _Lines:
    """The file's lines, decoded one at a time so a bad byte is named at its line."""

    def __init__(self, path: Path, name: str) -> None:
        self.handle = path.open("rb")
        self.name = name
        self.lineno = 0

    def __iter__(self) -> Iterator[str]:
        with self.handle:
            for raw in self.handle:
                self.lineno += 1
                yield decode(raw, self.name, first_line=self.lineno, bom=self.lineno == 1)


def _open(path: Path, name: str, delimiter: str, fmt: str, chunk_size: int) -> RowSource:
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    source = _Lines(path, name)
    reader = csv.reader(iter(source), delimiter=delimiter, strict=True)
    state = {"previous": 0}

    def next_record() -> tuple[int, list[str] | None]:
        start = state["previous"] + 1
        try:
            fields = next(reader, None)
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise InputError.at(
                    name,
                    start,
                    None,
                    f"bad {fmt.upper()} quoting: a quoted field that starts on this line is "
                    'never closed. Close the quote, and double quotes inside it ("").',
                ) from None
            raise InputError.at(
                name,
                reader.line_num,
                None,
                f"bad {fmt.upper()} quoting ({exc}). A field holding quotes, delimiters or line "
                'breaks must be quoted, with inner quotes doubled ("").',
            ) from None
        state["previous"] = reader.line_num
        return start, fields

    header: list[str] | None = None
    header_line = 0
    while header is None:
        header_line, fields = next_record()
        if fields is None:
            source.handle.close()
            raise InputError.at(
                name, 1, None, "the file is empty: it holds no rows to score (and no header row)."
            )
        if fields:
            header = _check_header(fields, name, header_line)
    columns: list[str] = header
    sep = "tabs" if delimiter == "\t" else "commas"

    def chunks() -> Iterator[Rows]:
        rows: list[dict[str, Any]] = []
        lines: list[int] = []
        width = len(columns)
        while True:
            start, fields = next_record()
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
