"""JSON (``.json``): one list of objects, ``[{...}, {...}]``.

The whole document is parsed (JSON has no line structure to stream on); each element's
line and column are kept for messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._exceptions import InputError
from ._source import (
    DEFAULT_CHUNK_SIZE,
    Rows,
    RowSource,
    decode,
    find_lone_surrogate,
    json_kind,
    line_column,
    surrogate_error,
    surrogate_offset,
)

__all__ = ["read"]

_WHITESPACE = " \t\r\n"


def read(path: Path, name: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> RowSource:
    """Open a JSON file holding a list of objects."""
    return RowSource(name, "json", None, _chunks(path, name, chunk_size))


def _chunks(path: Path, name: str, chunk_size: int) -> Iterator[Rows]:
    text = decode(path.read_bytes(), name)
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
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    texts: list[str] = []
    columns: list[int] = []
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
            found = find_lone_surrogate(row) if "\\u" in source else None
            if found is not None:
                at_line, at_column = line_column(
                    source, surrogate_offset(source), line, pos - line_start + 1
                )
                raise surrogate_error(
                    f"{name}:{at_line}:{at_column}",
                    found,
                    path=name,
                    line=at_line,
                    column=at_column,
                )
            rows.append(row)
            lines.append(line)
            texts.append(source)
            columns.append(pos - line_start + 1)
            if len(rows) >= chunk_size:
                yield Rows(name, rows, lines, "line", texts, columns)
                rows, lines, texts, columns = [], [], [], []
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
    if rows:
        yield Rows(name, rows, lines, "line", texts, columns)
