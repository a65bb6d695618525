"""JSON lines (``.jsonl``, ``.ndjson``): one JSON object per line, read as a stream of blocks.

Every non-blank line must be exactly one JSON object: a second value on the line, a line that
is not an object, a string that does not close on its line, a key given twice in one object,
or a lone surrogate escape is an error naming ``FILE:LINE:COLUMN``. A line may be at most
``max_line_bytes`` long (64 MiB unless set): a longer one, or a stream that never ends a line,
is an error naming its line, found without holding more than about that much.

The file is read in blocks of whole lines (2 MiB). A block is parsed by pyarrow's JSON reader
when that is certain to give what the row path gives (every line an object starting at its
first byte, no line nested deeper than pyarrow can take, one row per line, every text valid
UTF-8 and every array whole, every column of a kind the Arrow path converts); otherwise, and
for every error, by the row path: ``json`` on each line, then the same builder on the rows
(:mod:`._vector`). Both give equal batches.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator, Mapping
from json.scanner import make_scanner
from typing import Any

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from .._exceptions import InputError
from ._files import check_lines, line_too_long
from ._read import Piece, PieceRead, Planned, ReadSettings
from ._source import (
    Rows,
    decode,
    find_lone_surrogate,
    json_kind,
    refuse_repeated_key,
    surrogate_error,
)
from ._vector import RowBuilder, arrow_batch, collector_paused, numbers

__all__ = ["locate", "parse_line", "plan", "read", "rows"]

#: How a row's place is named.
UNIT = "line"
#: How a stream of this format is bounded while it is copied.
STREAM = "lines"
#: The bounds this reader keeps (reader options).
BOUNDS = ("max_line_bytes", "max_columns")

_BLOCK = 2 << 20  # bytes read at a time: large enough to amortise, small enough to stream
#: Whether blocks may be parsed by pyarrow (the tests switch it off to compare the paths).
ARROW = True
# pyarrow's JSON parser recurses: it crashes on a line nested about 30,000 levels deep. A line
# with this many brackets goes to Python's parser, which refuses what it cannot read.
_DEEP = 4096
_SPACE = " \t\r"
_OPEN_BRACE = 0x7B
_scan: Any = make_scanner(json.JSONDecoder())  # type: ignore[arg-type] # typeshed: a class
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def read(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[pa.RecordBatch]:
    """The canonical batches of a JSON lines piece (a file, or a range of its lines)."""
    converter = settings.converter()
    builder = RowBuilder(converter, max_columns=settings.limits.max_columns)
    pinned: dict[str, pa.DataType] = {}
    size = settings.batch_rows
    for data, line in _blocks(piece, settings, state):
        row = state.first_row + state.n_rows
        batch = (
            _arrow_block(data, line, row, converter, pinned, settings.limits.max_columns)
            if ARROW
            else None
        )
        if batch is not None:
            yield from state.sliced(batch, size)
            continue
        chunks = _row_chunks(data, line, piece.name, size)
        while True:
            # Parsing and building make many objects and free none: a collection pass would
            # walk them all for nothing (a quarter of the row path's time, measured).
            with collector_paused():
                chunk = next(chunks, None)
                if chunk is None:
                    break
                batch = builder.build(chunk, state.first_row + state.n_rows)
            state.n_rows += len(chunk.rows)
            yield batch


def rows(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[Rows]:
    """The rows of a piece, parsed but not converted (what a suite's ``items()`` reads)."""
    for data, line in _blocks(piece, settings, state):
        yield from _row_chunks(data, line, piece.name, settings.batch_rows)


# -- blocks of whole lines ---------------------------------------------------------------


def _blocks(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[tuple[bytes, int]]:
    """``(bytes of whole lines, number of their first line)``, block after block.

    Raises:
        InputError: a line past ``max_line_bytes``.
    """
    reader = state.open()
    limit = settings.limits.max_line_bytes
    name = piece.name
    line = piece.first_line
    rest = b""
    at_start = piece.start == 0
    while True:
        block = reader.read(_BLOCK)
        state.feed(block)
        if at_start and block:
            at_start = False
            if block.startswith(codecs.BOM_UTF8):
                block = block[len(codecs.BOM_UTF8) :]
        if block:
            data = rest + block if rest else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # no line end yet: read on, within the bound
                if len(data) > limit:
                    raise line_too_long(name, line, limit)
                rest = data
                continue
            if cut < len(data):
                data, rest = data[:cut], data[cut:]
            else:
                rest = b""
            if len(rest) > limit:
                raise line_too_long(name, line + data.count(b"\n"), limit)
        else:
            data, rest = rest, b""
            if not data:
                return
        if len(data) > limit:
            check_lines(data, name, line, 0, limit)
        yield data, line
        line += data.count(b"\n")
        if not block:
            return


# -- the Arrow path ----------------------------------------------------------------------


def _arrow_block(
    data: bytes,
    line: int,
    row: int,
    converter: Any,
    pinned: dict[str, pa.DataType],
    max_columns: int,
) -> pa.RecordBatch | None:
    """The canonical batch of ``data`` through pyarrow, or None: the row path must read it."""
    codes = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(codes == 10)
    if not data.endswith(b"\n"):
        ends = np.append(ends, len(data))
    n = len(ends)
    if n == 0:
        return None
    starts = np.empty(n, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if (codes[np.minimum(starts, len(data) - 1)] != _OPEN_BRACE).any():
        return None  # a blank line, an indented line or one that is not an object
    lengths = ends - starts
    for index in np.flatnonzero(lengths >= _DEEP):
        segment = data[starts[index] : ends[index]]
        if segment.count(b"[") + segment.count(b"{") >= _DEEP:
            return None
    table = _parse(data, pinned)
    if table is None or table.num_rows != n:
        return None  # two values on one line, or a parse pyarrow refused
    if table.num_columns > max_columns + len(converter.role_columns):
        return None  # the row path names the row past the bound
    try:
        # Every text valid UTF-8 (pyarrow's JSON parser does not check), and every array
        # whole: pyarrow 26 builds a list that starts with null with too few values.
        table.validate(full=True)
    except pa.ArrowInvalid:
        return None

    def absent(column: str, indices: np.ndarray) -> np.ndarray:
        # A key is a quote after "{" or "," (and space) before ":"; a quote inside a text is
        # escaped, so this finds exactly the keys of the line's objects. A nested object
        # would mislead it, but any nested object sends the block to the row path anyway.
        search = _key(column).search
        return np.array(
            [search(data, starts[i], ends[i]) is None for i in indices.tolist()], dtype=bool
        )

    lines = numbers(np.arange(line, line + n, dtype=np.int64))
    return arrow_batch(table, converter, lines=lines, first_row=row, absent=absent)


def _parse(data: bytes, pinned: dict[str, pa.DataType]) -> pa.Table | None:
    """``data`` parsed by pyarrow; columns it took for dates are read again as text."""
    read_options = pa_json.ReadOptions(use_threads=False, block_size=len(data) + 1)
    for _ in range(2):
        parse_options = pa_json.ParseOptions(
            explicit_schema=pa.schema(list(pinned.items())) if pinned else None,
            unexpected_field_behavior="infer",
        )
        try:
            table = pa_json.read_json(
                pa.BufferReader(data), read_options=read_options, parse_options=parse_options
            )
        except (pa.ArrowException, UnicodeDecodeError, ValueError):
            return None
        dates = [f.name for f in table.schema if pa.types.is_temporal(f.type)]
        if not dates:
            return _in_order(table, data, pinned) if pinned else table
        if any(name in pinned for name in dates):
            return None
        pinned.update(dict.fromkeys(dates, pa.string()))
    return None


def _key(column: str) -> re.Pattern[bytes]:
    """A key as it stands in a line: after ``{`` or ``,``, before ``:`` (see ``absent``)."""
    return re.compile(
        rb"[{,]\s*" + re.escape(json.dumps(column, ensure_ascii=False).encode()) + rb"\s*:"
    )


def _in_order(table: pa.Table, data: bytes, pinned: Mapping[str, Any]) -> pa.Table | None:
    """A table parsed with pinned columns, its columns as the rows give them.

    pyarrow puts the pinned columns first, and adds those no row of the block has: each column
    goes where its key first stands, and a pinned column no line names is dropped. None: a key
    that may be written with escapes, which this cannot find (the row path reads the block).
    """
    found: dict[str, int] = {}
    escapes = b"\\u" in data
    for name in table.column_names:
        match = _key(name).search(data)
        if match is not None:
            found[name] = match.start()
        elif escapes or name not in pinned:
            return None
    return table.select(sorted(found, key=found.__getitem__))


# -- the row path ------------------------------------------------------------------------


def _row_chunks(data: bytes, line: int, name: str, size: int) -> Iterator[Rows]:
    """The rows of ``data`` parsed one line at a time, ``size`` rows per chunk."""
    text = decode(data, name, first_line=line, bom=False)
    pieces = text.split("\n")
    if not pieces[-1]:
        pieces.pop()  # the text ends with a line break, not with an empty line
    scan = _scan
    rows: list[dict[str, Any]] = []
    kept: list[int] = []
    append_row, append_kept = rows.append, kept.append
    for offset, piece in enumerate(pieces):
        # The common line read here; parse_line reads any other and names what is wrong.
        try:
            row, end = scan(piece, 0)
        except Exception:  # noqa: BLE001 - parse_line below says what the problem is
            end = -1
        if end == len(piece) and type(row) is dict:
            if piece.count(":") != len(row) or "\\u" in piece:
                _check_row(piece, row, name, line + offset, 0)
            append_row(row)
        elif not piece or piece.isspace():
            continue
        else:
            append_row(parse_line(piece, name, line + offset))
        append_kept(offset)
        if len(rows) >= size:
            yield _chunk(name, rows, kept, line, pieces)
            rows, kept = [], []
            append_row, append_kept = rows.append, kept.append
    if rows:
        yield _chunk(name, rows, kept, line, pieces)


def _chunk(name: str, rows: list[Any], kept: list[int], line: int, pieces: list[str]) -> Rows:
    return Rows(name, rows, [line + k for k in kept], "line", [pieces[k] for k in kept])


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
    _check_row(line, row, name, lineno, start)
    return row


def _check_row(line: str, row: dict[str, Any], name: str, lineno: int, start: int) -> None:
    """Refuse a key that stands twice, or a lone surrogate, in the object read from ``line``.

    Raises:
        InputError: at the place of either.
    """
    if line.count(":") != len(row) and _may_repeat(line, row):
        refuse_repeated_key(name, line, lineno, start=start)
    if "\\u" in line and _MAYBE_SURROGATE.search(line) is not None:
        found = find_lone_surrogate(row)
        if found is not None:
            raise surrogate_error(name, line, found, lineno)


def _may_repeat(line: str, row: dict[str, Any]) -> bool:
    """Whether a key of ``line`` may stand twice (False: it is sure none does).

    Each key stands once before a colon. In a flat row whose texts hold no escapes, the
    colons of the line are those of its keys and those inside its texts: as many as that
    means no key stood twice (a lost duplicate would leave its colon). Anything else (an
    object inside, an escape) is read again, watching every object.
    """
    if "\\u" in line:
        return True
    colons = len(row) + sum(key.count(":") for key in row)
    for value in row.values():
        kind = type(value)
        if kind is str:
            colons += value.count(":")
        elif kind is list:
            for element in value:
                if type(element) is str:
                    colons += element.count(":")
                elif type(element) in (dict, list):
                    return True
        elif kind is dict:
            return True
    return line.count(":") != colons


def _bad(name: str, lineno: int, column: int, message: str) -> InputError:
    return InputError.at(
        name,
        lineno,
        column,
        f"not valid JSON ({message}). Each line of a JSON lines file must be one complete "
        "JSON object.",
    )


# -- planning parts and placing errors -------------------------------------------------------

_BLANK_HINTS = (b"\n\n", b"\n\r", b"\n ", b"\n\t")


def plan(
    path: str, name: str, fmt: str, k: int, settings: ReadSettings, digest: Any
) -> Iterator[Planned]:
    """Split a file into about ``k`` pieces at line starts, reading it once.

    Each piece knows its first line, its first row (counted from 1 in this file) and the
    SHA-256 of its bytes, and is yielded as soon as its end is found; ``digest`` takes every
    byte of the file.
    """
    import hashlib

    from ._fs import open_binary
    from ._fs import size as file_size

    size = file_size(path)
    whole = Piece(path=path, name=name, format=fmt)
    targets = [size * i // k for i in range(1, k)]
    reader = open_binary(path)  # closed below; the digests hash every byte
    piece_digest = hashlib.sha256()
    start, first_line, first_row = 0, 1, 1
    lines = rows = 0  # of the current piece so far
    blank = True  # the line in progress (begun in an earlier block) is blank so far
    pos = 0
    try:
        while True:
            data = reader.read(_BLOCK)
            if not data:
                break
            digest.update(data)
            offset = 0
            while targets and targets[0] < pos + len(data):
                at = data.find(b"\n", max(targets[0] - pos - 1, offset))
                if at < 0:
                    targets[0] = pos + len(data)  # split at the first line end after this block
                    break
                cut = at + 1
                segment = data[offset:cut]
                piece_digest.update(segment)
                done, newlines, blank = _count(segment, blank)
                lines, rows = lines + newlines, rows + done
                targets.pop(0)
                if pos + cut >= size:
                    offset = cut
                    break
                piece = attrs.evolve(
                    whole,
                    start=start,
                    stop=pos + cut,
                    first_line=first_line,
                    first_row=first_row,
                    sha256=piece_digest.hexdigest(),
                )
                yield Planned((piece,), rows, pos + cut - start)
                start, first_line, first_row = pos + cut, first_line + lines, first_row + rows
                lines = rows = 0
                piece_digest = hashlib.sha256()
                offset = cut
                while targets and targets[0] < start:
                    targets.pop(0)
            segment = data[offset:]
            piece_digest.update(segment)
            done, newlines, blank = _count(segment, blank)
            lines, rows = lines + newlines, rows + done
            pos += len(data)
    finally:
        reader.close()
    rows += not blank  # a last line without a line end
    piece = attrs.evolve(
        whole,
        start=start,
        first_line=first_line,
        first_row=first_row,
        sha256=piece_digest.hexdigest(),
    )
    yield Planned((piece,), rows, size - start)


def _count(data: bytes, blank: bool) -> tuple[int, int, bool]:
    """``(rows ended, line ends, line in progress blank)`` of ``data``.

    ``blank``: the line in progress when ``data`` starts is blank so far.
    """
    newlines = data.count(b"\n")
    if newlines == 0:
        return 0, 0, blank and (not data or data.isspace())
    # Every line end followed by an object's brace (or by the end of ``data``): no blank line
    # after the first, known in one pass instead of a search for each hint (a second, measured).
    braced = data.count(b"\n{") + data.endswith(b"\n") == newlines
    if not braced and any(hint in data for hint in _BLANK_HINTS):
        first, *middle, last = data.split(b"\n")
        done = 0 if blank and (not first or first.isspace()) else 1
        done += sum(1 for piece in middle if piece and not piece.isspace())
        return done, newlines, not last or last.isspace()
    done = newlines
    head = data.find(b"\n")
    if blank and (head == 0 or data[:head].isspace()):
        done -= 1
    last = data[data.rfind(b"\n") + 1 :]
    return done, newlines, not last or last.isspace()


def locate(
    path: str, name: str, line: int, key: str | None, settings: ReadSettings
) -> tuple[str, str | None, int | None, int | None]:
    """``FILE:LINE:COLUMN`` of ``key`` on line ``line`` (the file is read up to it)."""
    from ._fs import open_binary

    text = ""
    with open_binary(path) as handle:
        for number, raw in enumerate(handle, 1):
            if number == line:
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if number == 1:
                    text = text.removeprefix("\ufeff")
                break
    chunk = Rows(name, [None], [line], "line", [text])
    where_path, at_line, column = chunk.position(0, key)
    return chunk.where(0, key), where_path, at_line, column
