"""What every reader hands to the converter: rows in chunks, each knowing where it came from."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from json.scanner import make_scanner
from typing import Any

import attrs

from .._exceptions import InputError

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "RowSource",
    "Rows",
    "decode",
    "escape_name",
    "find_lone_surrogate",
    "json_kind",
    "line_column",
    "refuse_repeated_key",
    "show",
    "surrogate_error",
    "surrogate_offset",
]

#: Rows per chunk when a reader streams a file (about 2 MB of JSON lines of typical outputs).
DEFAULT_CHUNK_SIZE = 10_000


@attrs.define(slots=True)
class Rows:
    """Consecutive rows of one source, with what is needed to say where each row came from."""

    #: The source as the user named it (used in messages).
    name: str
    #: The rows, as mappings from column name to value (from Python: anything, checked later).
    rows: list[Any]
    #: Per row: its first line in the file, or its row (record) number for formats without lines.
    lines: Sequence[int]
    #: ``"line"`` for text files; ``"row"`` (Parquet, DataFrames, dicts) or ``"record"`` otherwise.
    unit: str = "line"
    #: Per row of a JSON format: its source text, searched for a key to name its column.
    texts: list[str] | None = None
    #: Per row with ``texts``: the column (1-based) where its text starts on its first line.
    first_columns: list[int] | None = None

    def where(self, index: int, key: str | None = None) -> str:
        """``FILE:LINE:COLUMN`` of row ``index`` (of ``key`` in it, when it can be found)."""
        path, line, column = self.position(index, key)
        if path is None:  # rows handed over in Python: no file to name
            return f"Row {line}"
        if self.unit != "line":
            return f"{path}: {self.unit} {line}"
        if column is None:
            named = f": column {key!r}" if key is not None else ""
            return f"{path}:{line}{named}"
        return f"{path}:{line}:{column}"

    def position(self, index: int, key: str | None = None) -> tuple[str | None, int, int | None]:
        """The place :meth:`where` names, as ``(path, line, column)``.

        ``path`` is ``None`` for rows handed over in Python; ``column`` is ``None`` where the
        format has no columns (CSV, Parquet).
        """
        line = self.lines[index]
        if not self.name:
            return None, line, None
        if self.unit != "line" or self.texts is None:
            return self.name, line, None
        text = self.texts[index]
        column = self.first_columns[index] if self.first_columns is not None else 1
        offset = 0
        if key is not None:
            found = text.find(json.dumps(key, ensure_ascii=False))
            if found < 0:  # the key is written with escapes: fall back to the row's start
                found = text.find(json.dumps(key))
            offset = max(found, 0)
        return (self.name, *line_column(text, offset, line, column))


@attrs.define
class RowSource:
    """A data source opened by a reader: its header (when it has one) and its rows in chunks.

    The chunks are produced as they are iterated, so a large file is never held at once.
    """

    #: The source as the user named it.
    name: str
    #: The format's name (``"jsonl"``, ``"csv"``...).
    format: str
    #: The header of formats that have one (CSV, TSV, Parquet, DataFrames); ``None`` otherwise.
    columns: list[str] | None
    #: The rows, chunk by chunk.
    chunks: Iterable[Rows]
    #: How a row's place is named when the format has no lines: ``"row"`` or ``"record"``.
    unit: str = "line"

    def __iter__(self) -> Iterator[Rows]:
        return iter(self.chunks)


def line_column(text: str, offset: int, line: int = 1, column: int = 1) -> tuple[int, int]:
    """``(line, column)`` of ``offset`` in ``text``, whose first character is at ``line:column``."""
    newlines = text.count("\n", 0, offset)
    if newlines:
        return line + newlines, offset - text.rfind(chr(10), 0, offset)
    return line, column + offset


def decode(data: bytes, name: str, *, first_line: int = 1, bom: bool = True) -> str:
    """``data`` as text, strictly UTF-8 (a leading byte-order mark is dropped).

    Raises:
        InputError: a byte that is not UTF-8, named at its line and character column.
    """
    if bom and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise InputError(
            f"{name}:{line}:{column}: the file is not valid UTF-8 (byte 0x{data[exc.start]:02x}). "
            "Save it as UTF-8 and try again.",
            path=name,
            line=line,
            column=column,
        ) from None


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def find_lone_surrogate(value: Any) -> str | None:
    r"""The first text (key or value) inside ``value`` holding a lone surrogate, or ``None``.

    JSON's ``\\ud800`` escapes decode to characters that UTF-8 cannot encode; no writer can
    save them, so readers refuse them.
    """
    if type(value) is str:
        return value if _SURROGATE.search(value) else None
    if type(value) is dict:
        for key, item in value.items():
            found = find_lone_surrogate(key) or find_lone_surrogate(item)
            if found is not None:
                return found
    elif type(value) is list:
        for item in value:
            found = find_lone_surrogate(item)
            if found is not None:
                return found
    return None


def surrogate_error(name: str, text: str, found: str, line: int, column: int = 1) -> InputError:
    """The error for ``found``, a text holding a lone surrogate escape, read from JSON ``text``.

    ``text`` starts at ``line:column`` of the file ``name``; the error names the escape's place.
    """
    at_line, at_column = line_column(text, surrogate_offset(text), line, column)
    return InputError.at(
        name,
        at_line,
        at_column,
        f"the text {show(found)} holds a lone surrogate escape (\\ud800-\\udfff without its "
        "pair), which is not a character and cannot be written as UTF-8. Fix the escape in the "
        "file, or remove it.",
    )


def surrogate_offset(text: str) -> int:
    """Offset of the first surrogate escape in JSON ``text`` (0 when none is found)."""
    for match in _SURROGATE_ESCAPE.finditer(text):
        escape = match.group()[-6:]
        code = int(escape[2:], 16)
        start = match.end() - 6
        if code >= 0xDC00:
            before = text[start - 6 : start]
            paired = before[:2] == "\\u" and 0xD800 <= _hex(before[2:]) < 0xDC00
            if not paired:
                return start
        else:
            after = text[match.end() : match.end() + 6]
            if not (after[:2] == "\\u" and 0xDC00 <= _hex(after[2:]) <= 0xDFFF):
                return start
    return 0


def _hex(text: str) -> int:
    try:
        return int(text, 16)
    except ValueError:
        return -1


def show(value: Any) -> str:
    """A value as JSON writes it (``true``, ``1.5``, ``"a"``), shortened for messages."""
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (TypeError, ValueError):  # a number too long for str(), a mapping with odd keys
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row = dict(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)
    return row


_scan_pairs: Any = make_scanner(json.JSONDecoder(object_pairs_hook=_pairs))  # type: ignore[arg-type]


def refuse_repeated_key(name: str, text: str, line: int, column: int = 1, start: int = 0) -> None:
    """Raise when one object of the JSON value at ``text[start:]`` gives a key twice.

    The value was read once already (it is valid JSON); this second reading watches every
    object's keys, which the plain one cannot, so callers run it only when a key may repeat.
    ``text`` starts at ``line:column`` of the file ``name``; the error names the second
    occurrence (a key written with escapes, which cannot be found as written, where ``text``
    starts).

    Raises:
        InputError: the key given twice, at its place.
    """
    try:
        _scan_pairs(text, start)
    except _Repeated as found:
        key = found.key
    else:
        return
    written = re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:"
    places = list(re.finditer(written, text))
    offset = places[1].start() if len(places) > 1 else 0
    at_line, at_column = line_column(text, offset, line, column)
    raise InputError.at(
        name,
        at_line,
        at_column,
        f"the key {key!r} appears twice in one object. JSON readers disagree on which value "
        "wins, so itemscore reads neither: keep one of the two.",
    )


def escape_name(name: str) -> str:
    r"""A name from a data file (a key, a header, a column) as it may appear in a message.

    Characters a terminal could act on are shown as escapes: C0 and C1 controls (``\x1b``
    starts CSI and OSC sequences), DEL, bidirectional and other format controls (``\u202e``),
    line and paragraph separators, and lone surrogates; every other character is kept, so
    that names in any script stay readable. Quotes are not added.
    """
    if name.isprintable():
        return name
    return repr(name)[1:-1]


def json_kind(value: object) -> str:
    """``an object``, ``a list``, ``a number``...: the JSON kind of ``value``, for messages."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"
