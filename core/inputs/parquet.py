"""Parquet (``.parquet``, ``.pq``), through pyarrow, one row group at a time.

Parquet files from others are untrusted: pyarrow before 14.0.1 runs code stored in a crafted
file when it reads the schema (CVE-2023-47248), so older versions are refused unless
``pyarrow_hotfix`` is installed, and a column declaring a pickled Python extension type
(``arrow.py_extension_type``) is refused before any data is read.

What is parsed is what is hashed: the reader reads the file from its start, in order, keeping
the bytes of the row group it parses next (and the footer, read first and compared at the end),
so a file that changes while it is read is found out. A part of a file is a run of row groups
(:func:`plan` groups them by size); each part carries the SHA-256 of the footer it was planned
from, and its reader refuses a file whose footer is another (a file rewritten since: its row
groups are no longer the planned ones).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import io
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .._exceptions import ConfigError, InputError
from ._bounds import too_many_columns
from ._files import HashedReader
from ._fs import open_binary
from ._fs import size as file_size
from ._read import Piece, PieceRead, Planned, ReadSettings
from ._source import Rows
from ._vector import arrow_batch, numbers

__all__ = ["FIXED_VERSION", "plan", "read", "rows"]

UNIT = "row"
STREAM = "document"  # read whole from its footer back: a stream is copied, within max_json_bytes
BOUNDS = ("max_json_bytes", "max_columns")

#: The first pyarrow release that does not unpickle extension types from files.
FIXED_VERSION = (14, 0, 1)
_PICKLED_EXTENSION = b"arrow.py_extension_type"
_EXTENSION_NAME = b"ARROW:extension:name"
_TAIL = 64 << 10  # what pyarrow reads first: the footer of every file but huge schemas
_SKIP = 8 << 20  # bytes hashed at a time between row groups


class _Seen(io.RawIOBase):
    """The file as pyarrow sees it.

    The bytes this reader read (and hashed) are served from memory; a read elsewhere (a page
    index, between row groups) goes to the file.
    """

    def __init__(self, path: str, size: int) -> None:
        super().__init__()
        self._file = open_binary(path)
        self._size = size
        self._pos = 0
        self.segments: dict[int, bytes] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 0:
            self._pos = offset
        elif whence == 1:
            self._pos += offset
        else:
            self._pos = self._size + offset
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = self._size - self._pos
        for start, data in self.segments.items():
            if start <= self._pos and self._pos + size <= start + len(data):
                out = data[self._pos - start : self._pos - start + size]
                self._pos += len(out)
                return out
        self._file.seek(self._pos)
        out = self._file.read(size)
        self._pos += len(out)
        return out

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._file.close()
        super().close()


def _open(path: str, name: str) -> tuple[Any, _Seen, bytes, int]:
    """``(ParquetFile, the file as pyarrow sees it, its tail, its size)``, schema checked.

    The tail holds the whole footer, and pyarrow parses the footer from it: what
    the footer's SHA-256 (of this tail) pins is what the row groups are found by.

    Raises:
        ConfigError: pyarrow older than 14.0.1 without ``pyarrow_hotfix``.
        InputError: not a Parquet file, or a column of a pickled Python extension type.
    """
    pq = _pyarrow_parquet(name)
    size = file_size(path)
    seen = _Seen(path, size)
    with open_binary(path) as handle:
        start = max(0, size - _TAIL)
        handle.seek(start)
        tail = handle.read(size - start)
        footer = _footer_length(tail)
        if len(tail) < footer <= size:  # a schema past the first read: the rest of it too
            handle.seek(size - footer)
            tail = handle.read(footer)
    seen.segments[size - len(tail)] = tail
    try:
        handle = pq.ParquetFile(seen, pre_buffer=True)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own types for bad files
        seen.close()
        raise InputError.at(name, None, None, f"not a readable Parquet file ({exc}).") from None
    for field in handle.schema_arrow:
        metadata = field.metadata or {}
        if metadata.get(_EXTENSION_NAME) == _PICKLED_EXTENSION:
            seen.close()
            raise InputError.at(
                name,
                None,
                None,
                f"column {field.name!r} declares a pickled Python extension type "
                "(arrow.py_extension_type); reading it could run code from the file, so "
                "itemscore refuses it. Rewrite the column as plain data.",
            )
    return handle, seen, tail, size


def _footer_length(tail: bytes) -> int:
    """The length of the footer ``tail`` ends with (metadata, its length, ``PAR1``); 0: none."""
    if len(tail) < 8 or tail[-4:] != b"PAR1":
        return 0  # not Parquet: pyarrow says so when it opens it
    return int.from_bytes(tail[-8:-4], "little") + 8


def _read_to(
    reader: HashedReader, cursor: int, end: int, name: str, *feeds: Callable[[bytes], Any]
) -> int:
    """Read the bytes from ``cursor`` (where ``reader`` is) to ``end``, each fed to ``feeds``.

    Raises:
        InputError: the file ends first: it changed since it was opened.
    """
    while cursor < end:
        data = reader.read(min(_SKIP, end - cursor))
        if not data:
            raise _changed(name)
        for feed in feeds:
            feed(data)
        cursor += len(data)
    return cursor


def _ends_with(reader: HashedReader, feed: Callable[[bytes], Any], tail: bytes) -> bool:
    """Read ``reader`` to its end, each byte fed to ``feed``; whether it ends as ``tail`` does."""
    rest = b""
    while data := reader.read(_SKIP):
        feed(data)
        rest = (rest + data)[-len(tail) :]
    return not rest or tail[-len(rest) :] == rest


def _group_range(metadata: Any, index: int) -> tuple[int, int]:
    """The bytes ``[start, end)`` of a row group's column chunks."""
    group = metadata.row_group(index)
    start, end = None, 0
    for column in range(group.num_columns):
        chunk = group.column(column)
        first = chunk.data_page_offset
        if chunk.has_dictionary_page and chunk.dictionary_page_offset:
            first = min(first, chunk.dictionary_page_offset)
        start = first if start is None else min(start, first)
        end = max(end, first + chunk.total_compressed_size)
    return (start or 0), end


def _groups(
    piece: Piece, settings: ReadSettings, state: PieceRead
) -> Iterator[tuple[pa.Table, int]]:
    """``(row group as a table, number of its first row in the file)``, in order."""
    handle, seen, tail, size = _open(piece.path, piece.name)
    if piece.footer is not None and hashlib.sha256(tail).hexdigest() != piece.footer:
        seen.close()
        raise _changed(piece.name, "its footer is not the one its parts were planned from")
    metadata = handle.metadata
    groups: Sequence[int] = (
        piece.row_groups if piece.row_groups is not None else range(metadata.num_row_groups)
    )
    reader = HashedReader(piece.path, piece.start, piece.stop)
    cursor = piece.start
    row = piece.first_line
    try:
        for index in groups:
            start, end = _group_range(metadata, index)
            if start < cursor or end > size:
                raise _changed(piece.name)
            cursor = _read_to(reader, cursor, start, piece.name, state.feed)  # hashed, not kept
            data = reader.read(end - start)
            state.feed(data)
            if len(data) != end - start:
                raise _changed(piece.name)
            cursor = end
            seen.segments[start] = data
            try:
                table = handle.read_row_group(index, use_threads=False)
            except (OSError, UnicodeDecodeError, ValueError, pa.ArrowException) as exc:
                raise InputError(
                    f"{piece.name}: row {row} and after cannot be read ({exc}).",
                    path=piece.name,
                    line=row,
                ) from None
            finally:
                del seen.segments[start]
            yield table, row
            row += table.num_rows
        # The whole file: the rest, footer included, read and compared.
        if piece.stop is None and not _ends_with(reader, state.feed, tail):
            raise _changed(piece.name, _MOVED)
        state.hashed(reader.sha256, reader.n_bytes)
    finally:
        reader.close()
        seen.close()


_MOVED = "its row groups are no longer where its footer said"


def _changed(name: str, why: str = _MOVED) -> InputError:
    return InputError.at(
        name,
        None,
        None,
        f"the file changed while it was read ({why}). Let whatever writes it finish (or "
        "score a copy of it), then run again.",
    )


def read(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[pa.RecordBatch]:
    """The canonical batches of a Parquet piece (a file, or some of its row groups)."""
    converter = settings.converter()
    checked = False
    size = settings.batch_rows
    for table, row in _groups(piece, settings, state):
        if not checked:
            names = [str(n) for n in table.column_names]
            converter.check_header(names, piece.name, None)
            limit = settings.limits.max_columns
            if len(set(names) - converter.role_columns) > limit:
                raise too_many_columns(piece.name, None, limit, UNIT)
            checked = True
        for batch in table.to_batches(max_chunksize=size):
            n = batch.num_rows
            if not n:
                continue

            canonical = arrow_batch(
                pa.Table.from_batches([batch]),
                converter,
                lines=numbers(np.arange(row, row + n, dtype=np.int64)),
                first_row=state.first_row + state.n_rows,
                absent=None,
                metadata_rule="arrow",
                # The values as Python reads them are the table's: a column the vectorised
                # rules are not sure of takes the converter's rule per value from them.
                rows=functools.partial(_python_rows, piece.name, batch, row),
            )
            assert canonical is not None  # with its rows at hand, no table is sent back
            state.n_rows += n
            row += n
            yield canonical


def rows(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[Rows]:
    """The rows of a Parquet piece as Python values."""
    for table, row in _groups(piece, settings, state):
        for batch in table.to_batches(max_chunksize=settings.batch_rows):
            yield _python_rows(piece.name, batch, row)
            row += batch.num_rows


def _python_rows(name: str, batch: pa.RecordBatch, row: int) -> Rows:
    """``batch``'s rows as Python values, the first row numbered ``row``."""
    return Rows(name, batch.to_pylist(), range(row, row + batch.num_rows), "row")


def plan(
    path: str, name: str, fmt: str, k: int, settings: ReadSettings, digest: Any
) -> Iterator[Planned]:
    """About ``k`` pieces of consecutive row groups of similar size, the file read once.

    Each piece is yielded once its bytes are hashed, with the bytes hashed since the last; the
    bytes after the last row group (the footer) come last, in no piece.
    """
    handle, seen, tail, size = _open(path, name)
    footer = hashlib.sha256(tail).hexdigest()
    try:
        metadata = handle.metadata
        ranges = [_group_range(metadata, i) for i in range(metadata.num_row_groups)]
        counts = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    finally:
        seen.close()
    groups = _split(ranges, k)
    reader = HashedReader(path)
    cursor = covered = 0
    row = 1
    try:
        for members in groups:
            start, stop = ranges[members[0]][0], ranges[members[-1]][1]
            cursor = _read_to(reader, cursor, start, name, digest.update)
            local = hashlib.sha256()
            cursor = _read_to(reader, cursor, stop, name, digest.update, local.update)
            piece = Piece(
                path=path,
                name=name,
                format=fmt,
                start=start,
                stop=stop,
                row_groups=tuple(members),
                first_line=row,
                first_row=row,
                sha256=local.hexdigest(),
                footer=footer,
            )
            rows = sum(counts[i] for i in members)
            yield Planned((piece,), rows, cursor - covered)
            row, covered = row + rows, cursor
        # The footer the pieces were planned from must be the one hashed last: a file
        # rewritten while it was planned has hashed pieces of two versions.
        if not _ends_with(reader, digest.update, tail) or reader.n_bytes != size:
            raise _changed(name, "its footer is not the one read when it was opened")
    finally:
        reader.close()
    # The footer, in no piece; a file without row groups is one piece of nothing.
    last = () if groups else (Piece(path=path, name=name, format=fmt, first_row=1),)
    yield Planned(last, 0, size - covered)


def _split(ranges: Sequence[tuple[int, int]], k: int) -> list[list[int]]:
    """Consecutive row groups in about ``k`` runs of similar byte size."""
    if not ranges:
        return []
    total = sum(end - start for start, end in ranges)
    target = max(1, total / max(1, k))
    runs: list[list[int]] = [[]]
    filled = 0
    for index, (start, end) in enumerate(ranges):
        if runs[-1] and filled + (end - start) / 2 > target * len(runs):
            runs.append([])
        runs[-1].append(index)
        filled += end - start
    return runs


def _pyarrow_parquet(name: str) -> Any:
    try:
        pa_module = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ConfigError(
            f"Reading {name} needs pyarrow's Parquet support, which this installation of "
            "pyarrow lacks. Reinstall it: pip install --force-reinstall 'pyarrow>=14.0.1'"
        ) from None
    if _version(getattr(pa_module, "__version__", "0")) < FIXED_VERSION:
        try:
            importlib.import_module("pyarrow_hotfix")
        except ImportError:
            raise ConfigError(
                f"pyarrow {pa_module.__version__} can run code hidden in a Parquet file "
                "(CVE-2023-47248), so itemscore does not read Parquet with it. Upgrade: "
                "pip install 'pyarrow>=14.0.1' (or install pyarrow_hotfix)."
            ) from None
    return pq


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:3]:
        match = re.match(r"\d+", part)
        parts.append(int(match.group()) if match else 0)
    return tuple(parts)
