"""JSON (``.json``): one list of objects, ``[{...}, {...}]``.

The whole document is parsed (JSON has no line structure to stream on), so a file may be at
most ``max_json_bytes`` (1 GiB unless set); each element's line and column are kept for
messages. A key given twice in one object is an error, as in JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from typing import Any

import pyarrow as pa

from .._exceptions import InputError
from ._read import Piece, PieceRead, ReadSettings
from ._source import (
    Rows,
    decode,
    find_lone_surrogate,
    json_kind,
    line_column,
    refuse_repeated_key,
    surrogate_error,
)
from ._vector import RowBuilder

__all__ = ["locate", "read", "rows"]

UNIT = "line"
STREAM = "document"
BOUNDS = ("max_json_bytes", "max_columns")

_WHITESPACE = " \t\r\n"


def read(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[pa.RecordBatch]:
    """The canonical batches of a JSON file."""
    builder = RowBuilder(settings.converter(), max_columns=settings.limits.max_columns)
    yield from state.built(builder, rows(piece, settings, state))


def rows(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[Rows]:
    """The objects of the file's list, ``batch_rows`` at a time."""
    limit = settings.limits.max_json_bytes
    reader = state.open()
    data = reader.read(limit + 1)
    state.feed(data)
    if len(data) > limit:
        raise InputError.at(
            piece.name,
            None,
            None,
            f"the file is larger than {limit:,} bytes (the bound max_json_bytes); a JSON file "
            "is parsed whole, so it is bounded. Write the rows as JSON lines (.jsonl), which "
            f"are read as a stream, or raise the bound: --read-option max_json_bytes={limit * 4}.",
        )
    yield from _chunks(decode(data, piece.name), piece.name, settings.batch_rows)


def _chunks(text: str, name: str, chunk_size: int) -> Iterator[Rows]:
    elements = _elements(text, name)
    while chunk := list(islice(elements, chunk_size)):
        rows, lines, columns, texts = map(list, zip(*chunk))
        yield Rows(name, rows, lines, "line", texts, columns)


def _elements(text: str, name: str) -> Iterator[tuple[dict[str, Any], int, int, str]]:
    """``(object, line, column, its text)`` of each element of the list in ``text``."""
    decoder = json.JSONDecoder()

    def fail(pos: int, message: str) -> InputError:
        return InputError.at(name, *line_column(text, pos), message)

    def skip_space(pos: int) -> int:
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        return pos

    pos = skip_space(0)
    if pos >= len(text) or text[pos] != "[":
        raise fail(
            pos,
            "a JSON data file must hold a list of objects ([{...}, {...}]). "
            "For one object per line, name the file .jsonl or pass --format jsonl.",
        )
    line, line_start, counted = 1, 0, 0  # line count kept incrementally: O(n) over the file
    pos = skip_space(pos + 1)
    if pos < len(text) and text[pos] == "]":
        pos += 1
    else:
        while True:
            try:
                row, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise InputError.at(
                    name, exc.lineno, exc.colno, f"not valid JSON ({exc.msg})."
                ) from None
            except RecursionError:
                raise fail(
                    pos, "the element is nested too deeply to read (more than about 1,000 levels)."
                ) from None
            except ValueError as exc:  # an integer beyond Python's digit limit
                raise fail(
                    pos, f"a number cannot be read ({exc}). Write long numbers as strings."
                ) from None
            if type(row) is not dict:
                raise fail(
                    pos, f"each element of the list must be an object, not {json_kind(row)}."
                )
            newlines = text.count("\n", counted, pos)
            if newlines:
                line += newlines
                line_start = text.rfind("\n", counted, pos) + 1
            counted = pos
            source = text[pos:end]
            column = pos - line_start + 1
            if source.count(":") != len(row):
                refuse_repeated_key(name, source, line, column)
            found = find_lone_surrogate(row) if "\\u" in source else None
            if found is not None:
                raise surrogate_error(name, source, found, line, column)
            yield row, line, column, source
            pos = skip_space(end)
            if pos < len(text) and text[pos] == ",":
                pos = skip_space(pos + 1)
                continue
            if pos < len(text) and text[pos] == "]":
                pos += 1
                break
            raise fail(pos, "not valid JSON (expected ',' or ']' after an element of the list).")
    pos = skip_space(pos)
    if pos < len(text):
        raise fail(pos, "not valid JSON (extra data after the list).")


def locate(
    path: str, name: str, line: int, key: str | None, settings: ReadSettings
) -> tuple[str, str | None, int | None, int | None]:
    """``FILE:LINE:COLUMN`` of ``key`` in the element that starts on line ``line``."""
    from ._fs import open_binary

    with open_binary(path) as handle:
        text = decode(handle.read(settings.limits.max_json_bytes + 1), name)
    for _row, at_line, column, source in _elements(text, name):
        if at_line == line:
            chunk = Rows(name, [None], [line], "line", [source], [column])
            where_path, found_line, found_column = chunk.position(0, key)
            return chunk.where(0, key), where_path, found_line, found_column
    return f"{name}:{line}", name, line, None
