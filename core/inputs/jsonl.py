"""JSON lines (``.jsonl``, ``.ndjson``): one JSON object per line, read as a stream.

Every non-blank line must be exactly one JSON object: a second value on the line, a line that
is not an object, a string that does not close on its line, or a lone surrogate escape is an
error naming ``FILE:LINE:COLUMN``. The file is read in blocks and parsed line by line, so
memory holds one chunk of rows at a time, whatever the file's size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from json.scanner import make_scanner
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
    surrogate_error,
    surrogate_offset,
)

__all__ = ["parse_line", "read"]

_BLOCK = 4 << 20  # bytes read at a time: large enough to amortise, small enough to stream
_SPACE = " \t\r"
_scan: Any = make_scanner(json.JSONDecoder())  # type: ignore[arg-type] # typeshed: a class
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def read(path: Path, name: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> RowSource:
    """Open a JSON lines file; its rows are parsed as the chunks are iterated."""
    return RowSource(name, "jsonl", None, _chunks(path, name, chunk_size))


def _chunks(path: Path, name: str, chunk_size: int) -> Iterator[Rows]:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    texts: list[str] = []
    lineno = 0
    first = True
    rest = b""
    with path.open("rb") as handle:
        while True:
            block = handle.read(_BLOCK)
            if block:
                data = rest + block
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # a line longer than a block: read on
                    rest = data
                    continue
                data, rest = data[:cut], data[cut:]
            else:
                data, rest = rest, b""
                if not data:
                    break
            text = decode(data, name, first_line=lineno + 1, bom=first)
            first = False
            pieces = text.split("\n")
            if not pieces[-1]:
                pieces.pop()  # the text ends with a line break, not with an empty line
            for line in pieces:
                lineno += 1
                if not line or line.isspace():
                    continue
                rows.append(parse_line(line, name, lineno))
                lines.append(lineno)
                texts.append(line)
                if len(rows) >= chunk_size:
                    yield Rows(name, rows, lines, "line", texts)
                    rows, lines, texts = [], [], []
            if not block:
                break
    if rows:
        yield Rows(name, rows, lines, "line", texts)


def parse_line(line: str, name: str, lineno: int) -> dict[str, Any]:
    """The one JSON object on ``line``.

    Raises:
        InputError: anything else, at ``name:lineno:COLUMN``.
    """
    start = 0
    if line[0] in _SPACE:
        start = len(line) - len(line.lstrip(_SPACE))
    try:
        row, end = _scan(line, start)
    except StopIteration as stop:
        raise _bad(name, lineno, stop.value + 1, "Expecting value") from None
    except json.JSONDecodeError as exc:
        raise _bad(name, lineno, exc.colno, exc.msg) from None
    except RecursionError:
        raise InputError.at(
            name,
            lineno,
            start + 1,
            "the JSON value is nested too deeply to read (more than about 1,000 levels of [ "
            "and {). Each line must be one flat-enough object.",
        ) from None
    except ValueError as exc:  # an integer beyond Python's digit limit
        raise InputError.at(
            name,
            lineno,
            start + 1,
            f"a number on this line cannot be read ({exc}). "
            "Write long numbers, such as ids, as strings.",
        ) from None
    if end != len(line) and not line[end:].isspace():
        raise _bad(name, lineno, end + 1, "Extra data")
    if type(row) is not dict:
        raise InputError.at(
            name,
            lineno,
            start + 1,
            f"each line must be a JSON object ({{...}}), not {json_kind(row)}.",
        )
    if "\\u" in line and _MAYBE_SURROGATE.search(line) is not None:
        found = find_lone_surrogate(row)
        if found is not None:
            column = surrogate_offset(line) + 1
            where = f"{name}:{lineno}:{column}"
            raise surrogate_error(where, found, path=name, line=lineno, column=column)
    return row


def _bad(name: str, lineno: int, column: int, message: str) -> InputError:
    return InputError.at(
        name,
        lineno,
        column,
        f"not valid JSON ({message}). Each line of a JSON lines file must be one complete "
        "JSON object.",
    )
