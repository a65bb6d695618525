"""CSV (``.csv``) and TSV (``.tsv``, ``.tab``): a header, then one row a record.

TSV, CSV with tabs between the fields, is read here too. Cells are text: an empty cell is an
empty text, and CSV has no null (the converter's ``null_output`` marker names failed
requests). A record may span lines inside a quoted cell; each row is named by the line it
starts on, and a record may be at most ``max_line_bytes`` long. Quoting follows RFC 4180
strictly, as Python's ``csv`` module does with ``strict=True``: a quote that opens a field must
stand at its start and close at its end; a problem is reported at the line where the quoted
field starts.

The file is read in blocks of whole records. Where a block's quotes all follow the rules
(checked on the positions of its quote characters) it is parsed by ``pyarrow.csv``, every cell
as text; otherwise, and for every error, the rest of the file is read by Python's ``csv``
module, which names the place. Both give equal batches.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from .._exceptions import InputError
from ._bounds import too_many_columns
from ._files import HashedReader, line_too_long
from ._read import Piece, PieceRead, ReadSettings
from ._source import Rows, decode
from ._vector import RowBuilder, arrow_batch, numbers

__all__ = ["read", "rows"]

UNIT = "line"
STREAM = "lines"
BOUNDS = ("max_line_bytes", "max_columns")
#: Whether blocks may be parsed by pyarrow (the tests switch it off to compare the paths).
ARROW = True

_BLOCK = 8 << 20
_QUOTE, _NEWLINE, _RETURN = 0x22, 0x0A, 0x0D


# -- the file as blocks of whole records ---------------------------------------------------


class _Block:
    """Whole records of a file: their bytes, the first line, where each record ends."""

    __slots__ = ("clean", "data", "ends", "line")

    def __init__(self, data: bytes, line: int, ends: np.ndarray, clean: bool) -> None:
        self.data = data
        self.line = line
        #: The position of each record's end (its line end, or the end of the data).
        self.ends = ends
        #: Whether every quote of the block follows the rules (the boundaries are sure).
        self.clean = clean


def _blocks(
    reader: HashedReader, state: PieceRead, name: str, limit: int, delimiter: str
) -> Iterator[_Block]:
    """The file's bytes in blocks of whole records.

    Records end where the quotes say; once a block breaks the quoting rules its record ends
    are unknown, and blocks end at line ends (Python's csv reads them).

    Raises:
        InputError: a record longer than ``max_line_bytes``.
    """
    sep = ord(delimiter)
    rest = b""
    line = 1
    first = True
    clean = True
    while True:
        block = reader.read(_BLOCK)
        state.feed(block)
        if first and block:
            first = False
            if block.startswith(codecs.BOM_UTF8):
                block = block[len(codecs.BOM_UTF8) :]
        data = rest + block if rest else block
        if not data:
            return
        ends, ok = _record_ends(data, sep) if clean else (_line_ends(data), False)
        clean = clean and ok
        if block:
            cut = int(ends[-1]) + 1 if len(ends) else 0
            if cut == 0:
                if len(data) > limit:
                    what = "record" if clean else "line"
                    raise line_too_long(name, line, limit, what=what)
                rest = data
                continue
            data, rest = (data[:cut], data[cut:]) if cut < len(data) else (data, b"")
            if len(rest) > limit:
                raise line_too_long(name, line + data.count(b"\n"), limit, what="record")
        else:
            rest = b""
            if clean and data.count(b'"') % 2:
                clean = False  # a quoted field never closed: Python's csv names it
                ends = _line_ends(data)
            if not len(ends) or int(ends[-1]) != len(data) - 1:
                ends = np.append(ends, len(data))  # the last record, without a line end
        yield _Block(data, line, ends, clean)
        line += data.count(b"\n")
        if not block:
            return


def _line_ends(data: bytes) -> np.ndarray:
    return np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE)


def _record_ends(data: bytes, sep: int) -> tuple[np.ndarray, bool]:
    """The line ends of ``data`` that end a record, and whether every quote is in place.

    In a file that follows the rules, quotes come in pairs around a field (``""`` inside one
    is a pair too), so a line end ends a record exactly when an even number of quotes comes
    before it. A quote that opens must follow a delimiter or a line end; one that closes must
    precede one (or another quote, for ``""``).
    """
    codes = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(codes == _NEWLINE)
    # Python's csv takes a lone \r for a line end outside quotes, pyarrow for part of a cell
    lone_return = data.count(b"\r") != data.count(b"\r\n")
    quotes = np.flatnonzero(codes == _QUOTE)
    m = len(quotes)
    if not m:
        return newlines, not lone_return
    last = len(data) - 1
    before = codes[np.maximum(quotes - 1, 0)]
    after = codes[np.minimum(quotes + 1, last)]
    at_start = (quotes == 0) | (before == sep) | (before == _NEWLINE) | (before == _RETURN)
    at_end = (quotes == last) | (after == sep) | (after == _NEWLINE) | (after == _RETURN)
    # the two quotes of a "" inside a quoted field: one closes, the next opens again
    after_quote = np.zeros(m, dtype=bool)
    after_quote[1:] = quotes[1:] == quotes[:-1] + 1
    before_quote = np.zeros(m, dtype=bool)
    before_quote[:-1] = after_quote[1:]
    opens = np.arange(m) % 2 == 0
    fine = np.where(opens, at_start | after_quote, at_end | before_quote)
    even = np.searchsorted(quotes, newlines) % 2 == 0
    return newlines[even], bool(fine.all()) and not lone_return


# -- the header ---------------------------------------------------------------------------


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


# -- Python's csv module: the row path ------------------------------------------------------


class _Records:
    """CSV records from lines of bytes, each with the line it starts on (strict quoting).

    Lines are decoded one at a time, so a bad byte is named at its line.
    """

    def __init__(
        self, lines: Iterable[bytes], name: str, fmt: str, delimiter: str, lineno: int = 0
    ) -> None:
        self.name = name
        self.fmt = fmt
        self.lineno = lineno
        self.previous = lineno
        self._lines = lines
        self.reader = csv.reader(self._decoded(), delimiter=delimiter, strict=True)

    def _decoded(self) -> Iterator[str]:
        for raw in self._lines:
            self.lineno += 1
            yield decode(raw, self.name, first_line=self.lineno, bom=False)

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
            if "field larger than field limit" in str(exc):
                raise line_too_long(name, start, csv.field_size_limit(), what="record") from None
            raise InputError.at(
                name,
                self.lineno,
                None,
                f"bad {kind} quoting ({exc}). A field holding quotes, delimiters or line breaks "
                'must be quoted, with inner quotes doubled ("").',
            ) from None
        self.previous = self.lineno
        return start, fields


def _split_lines(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines (each with its line feed) of consecutive blocks of bytes.

    Only a line feed ends a line, as for a file read line by line: a lone carriage return
    inside a quoted cell does not shift the line numbers.
    """
    rest = b""
    for block in blocks:
        data = rest + block if rest else block
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            yield data[start : end + 1]
            start = end + 1
        rest = data[start:]
    if rest:
        yield rest


class _Table:
    """What reading a CSV file keeps: its header and the settings of its rows."""

    def __init__(self, name: str, fmt: str) -> None:
        self.name = name
        self.fmt = fmt
        self.delimiter = "\t" if fmt == "tsv" else ","
        self.header: list[str] | None = None
        self.header_line = 0

    def records(self, blocks: Iterable[bytes], lineno: int = 0) -> _Records:
        """The records of consecutive blocks of bytes, the first after line ``lineno``."""
        return _Records(_split_lines(blocks), self.name, self.fmt, self.delimiter, lineno)

    def take_header(self, records: _Records) -> bool:
        """Read the header from ``records``; False when they end first."""
        while self.header is None:
            line, fields = records.next()
            if fields is None:
                return False
            if fields:
                self.header = _check_header(fields, self.name, line)
                self.header_line = line
        return True

    def python_rows(self, records: _Records, size: int) -> Iterator[Rows]:
        """The rows of ``records`` (after the header), ``size`` at a time."""
        assert self.header is not None
        columns, width = self.header, len(self.header)
        sep = "tabs" if self.delimiter == "\t" else "commas"
        rows: list[dict[str, Any]] = []
        lines: list[int] = []
        while True:
            start, fields = records.next()
            if fields is None:
                break
            if not fields:
                continue  # a blank line
            if len(fields) != width:
                raise InputError.at(
                    self.name,
                    start,
                    None,
                    f"the row has {len(fields)} fields, the header (line {self.header_line}) "
                    f"has {width}. Quote fields that contain {sep}.",
                )
            rows.append(dict(zip(columns, fields)))
            lines.append(start)
            if len(rows) >= size:
                yield Rows(self.name, rows, lines)
                rows, lines = [], []
        if rows:
            yield Rows(self.name, rows, lines)


# -- reading --------------------------------------------------------------------------------


def _start(
    piece: Piece, settings: ReadSettings, state: PieceRead
) -> tuple[_Table, Iterator[_Block]]:
    """What reading a CSV or TSV file begins with: its table, and its blocks of records."""
    limit = settings.limits.max_line_bytes
    csv.field_size_limit(limit)  # Python's csv default, 128 kB, is below outputs'
    table = _Table(piece.name, piece.format)
    return table, _blocks(state.open(), state, piece.name, limit, table.delimiter)


def rows(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[Rows]:
    """The rows of a CSV or TSV file through Python's csv module, parsed but not converted."""
    table, blocks = _start(piece, settings, state)
    records = table.records(block.data for block in blocks)
    if not table.take_header(records):
        raise _no_header(piece.name)
    yield from table.python_rows(records, settings.batch_rows)


def _no_header(name: str) -> InputError:
    return InputError.at(
        name, 1, None, "the file is empty: it holds no rows to score (and no header row)."
    )


def read(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[pa.RecordBatch]:
    """The canonical batches of a CSV or TSV piece (a whole file)."""
    name = piece.name
    table, blocks = _start(piece, settings, state)
    converter = settings.converter()
    builder = RowBuilder(converter, max_columns=settings.limits.max_columns)
    size = settings.batch_rows
    for block in blocks:
        if not (ARROW and block.clean and _utf8(block.data)):
            # From here on Python's csv reads the file: it names every problem's place.
            records = table.records(chain([block.data], (b.data for b in blocks)), block.line - 1)
            if not table.take_header(records):
                raise _no_header(name)
            if table.header is not None and converter.header is None:
                _check_table(converter, table, settings)
            yield from state.built(builder, table.python_rows(records, size))
            return
        starts = np.empty(len(block.ends), dtype=np.int64)
        starts[0] = 0
        starts[1:] = block.ends[:-1] + 1
        lengths = block.ends - starts
        codes = np.frombuffer(block.data, dtype=np.uint8)
        ends_at = np.minimum(np.maximum(block.ends - 1, 0), max(len(block.data) - 1, 0))
        empty = (lengths == 0) | ((lengths == 1) & (codes[ends_at] == _RETURN))
        kept = np.flatnonzero(~empty)
        if not len(kept):
            continue
        newlines = _line_ends(block.data)
        record_lines = block.line + np.searchsorted(newlines, starts[kept])
        if table.header is None:
            first = int(kept[0])
            text = block.data[starts[first] : block.ends[first]]
            table.take_header(table.records([text], int(record_lines[0]) - 1))
            _check_table(converter, table, settings)
            kept, record_lines = kept[1:], record_lines[1:]
            if not len(kept):
                continue
        body = block.data[starts[int(kept[0])] :]
        batch = _arrow_records(body, table, converter, record_lines, state) if len(body) else None
        if batch is None:
            python = table.records([body], int(record_lines[0]) - 1)
            yield from state.built(builder, table.python_rows(python, size))
            continue
        yield from state.sliced(batch, size)
    if table.header is None:
        raise _no_header(name)


def _check_table(converter: Any, table: _Table, settings: ReadSettings) -> None:
    """Check the header against the mapping, and its width against ``max_columns``."""
    assert table.header is not None
    converter.check_header(table.header, table.name, table.header_line)
    limit = settings.limits.max_columns
    if len(set(table.header) - converter.role_columns) > limit:
        raise too_many_columns(table.name, table.header_line, limit)


def _utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _arrow_records(
    body: bytes,
    table: _Table,
    converter: Any,
    record_lines: np.ndarray,
    state: PieceRead,
) -> pa.RecordBatch | None:
    assert table.header is not None
    header = table.header
    try:
        parsed = pa_csv.read_csv(
            pa.BufferReader(body),
            read_options=pa_csv.ReadOptions(
                column_names=header, block_size=len(body) + 1, use_threads=False
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=table.delimiter,
                quote_char='"',
                double_quote=True,
                escape_char=False,
                newlines_in_values=True,
                ignore_empty_lines=True,
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(header, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                check_utf8=True,
            ),
        )
    except (pa.ArrowException, ValueError):
        return None  # a row of the wrong width, say: Python's csv names it
    if parsed.num_rows != len(record_lines):
        return None
    lines = numbers(record_lines.astype(np.int64))
    return arrow_batch(
        parsed,
        converter,
        lines=lines,
        first_row=state.first_row + state.n_rows,
        absent=None,
    )
