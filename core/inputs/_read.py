"""Sources, parts and part readers: files into canonical Arrow batches, once, in parts.

::

    source = open_source("outputs.jsonl", columns={"output": "response"})
    for part in source.parts(4):          # picklable: a worker reads its own
        reader = read_part(part)
        for batch in reader.batches():    # canonical batches (itemscore._schema)
            ...
        reader.sha256, reader.n_rows, reader.keys()
    checks = source.checks()              # in the driver: the whole-source checks
    checks.add(keys_of_each_part_in_order)
    checks.finish(needing=["exact_match"])
    source.close()

A *source* is one file, a list of files, a glob or a folder, in one format. A *part* is what one
worker reads: a byte range of a JSON lines file (split at line starts), a group of row groups
of a Parquet file, or one whole file (CSV, TSV, JSON and harness logs are never split inside a
file). :meth:`Source.parts` plans them by reading every file once, sequentially, hashing as it
reads: it finds the split offsets, each part's first line and first row number (so that the
worker's messages name the right line and rows without an id get their number in the whole
source) and each part's SHA-256; :meth:`Source.whole` is the source as one part, planned by
nothing. A :class:`PartReader` hashes the bytes it reads; when a planned part's hash differs,
the file changed while it was read: an input error.

A source that is not a regular file (a pipe, ``/dev/stdin``) is copied once into a private
file first (:mod:`._files`); its format is sniffed from the copy. A URL (``s3://...``,
``file://...``) is opened through fsspec (:mod:`._fs`) by whoever reads it: the driver to plan
the parts, each worker for its own part, with the same hashes, line numbers and checks.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pyarrow as pa

from .._exceptions import (
    ConfigError,
    InputError,
    OptionError,
    describe_exception,
    did_you_mean,
    one_of,
)
from .._schema import LINE, METADATA
from ._bounds import DEFAULT_LIMITS, Limits, too_many_columns
from ._checks import KEY_SCHEMA, SourceChecks, key_columns
from ._convert import Converter
from ._files import Copy, copy_stream, is_regular, remove_copy
from ._formats import REGISTRY, detect_format
from ._fs import is_url, listing
from ._fs import stamp as file_stamp
from ._source import Rows

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "Part",
    "PartReader",
    "Piece",
    "ReadSettings",
    "Source",
    "open_source",
    "read_part",
]

#: The most rows a batch holds (a reader's blocks give fewer: about 45,000 QA rows in 8 MiB).
DEFAULT_BATCH_ROWS = 65_536


@attrs.frozen(kw_only=True)
class ReadSettings:
    """How a source's rows become items: the same in the driver and in every worker."""

    #: Role -> column name.
    columns: tuple[tuple[str, str], ...] = ()
    #: Split text answers at this string.
    answer_delimiter: str | None = None
    #: An output equal to this text is a failed request.
    null_output: str | None = None
    #: The bounds of lines, records and documents.
    limits: Limits = DEFAULT_LIMITS
    #: The format reader's own options (harness logs: ``filter``, ``scorer``...).
    options: tuple[tuple[str, Any], ...] = ()
    #: The most rows per batch.
    batch_rows: int = DEFAULT_BATCH_ROWS
    #: Harness logs read together: each id is qualified by its task (``TASK/ID``), since every
    #: harness numbers its samples from 1 in every task.
    qualify_ids: bool = False

    def converter(self) -> Converter:
        """A fresh converter with these settings."""
        return Converter(
            dict(self.columns),
            answer_delimiter=self.answer_delimiter,
            null_output=self.null_output,
        )


@attrs.frozen(kw_only=True)
class Piece:
    """A file, or a part of one, to be read in one go."""

    #: What to open (a private copy, for a stream).
    path: str
    #: How messages name the file.
    name: str
    #: The input format's name.
    format: str
    #: This file's index among the source's files (for the whole-source checks).
    file: int = 0
    #: The first byte (JSON lines).
    start: int = 0
    #: The end, or ``None``: the end of the file.
    stop: int | None = None
    #: The row groups to read (Parquet), or ``None``: all.
    row_groups: tuple[int, ...] | None = None
    #: The line (or row) number of the piece's first line.
    first_line: int = 1
    #: The row number (in the whole source) of the piece's first row; ``None``: the next one
    #: after the previous piece of the same part.
    first_row: int | None = None
    #: The SHA-256 of the piece's bytes, as planned; ``None``: not planned.
    sha256: str | None = None
    #: The file's size and modification time (ns; ``None`` for a URL) when it was planned;
    #: ``None``: not planned.
    stamp: tuple[int, int | None] | None = None
    #: The SHA-256 of the file's footer as planned (Parquet: where its row groups are).
    footer: str | None = None


@attrs.frozen(kw_only=True)
class Part:
    """What one worker reads: pieces of files in the source's order (picklable)."""

    #: The pieces, in order.
    pieces: tuple[Piece, ...]
    #: How rows become items.
    settings: ReadSettings
    #: The part's position among the source's parts.
    index: int = 0


class PartReader:
    """Reads one part into canonical batches, hashing what it reads.

    ``sha256``, ``n_bytes``, ``n_rows`` and :meth:`keys` are complete once :meth:`batches` is
    exhausted. ``sha256`` is that of the bytes read (for several files, of their bytes one
    after the other).
    """

    def __init__(self, part: Part) -> None:
        self.part = part
        #: Bytes read.
        self.n_bytes = 0
        #: Rows read.
        self.n_rows = 0
        #: ``(name, sha256, n_bytes)`` of each piece read.
        self.files: list[tuple[str, str, int]] = []
        self._digest = hashlib.sha256()
        self._keys: list[pa.RecordBatch] = []
        self._fields: set[str] = set()

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the bytes read (of the one piece, when there is one)."""
        if len(self.files) == 1:
            return self.files[0][1]
        return self._digest.hexdigest()

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The part's canonical batches, in order.

        Raises:
            InputError: a malformed file (naming its place), or one that changed while read.
        """
        row = 1
        for piece in self.part.pieces:
            first_row = piece.first_row if piece.first_row is not None else row
            state = PieceRead(piece, first_row, self._digest if len(self.part.pieces) > 1 else None)
            module = REGISTRY[piece.format].module()
            check_stamp(piece)
            try:
                for batch in module.read(piece, self.part.settings, state):
                    self.n_rows += batch.num_rows
                    self._keys.append(key_columns(batch, piece.file))
                    self._count_columns(batch, piece)
                    yield batch
            finally:
                state.close()
            state.finish()
            check_stamp(piece)  # the hash covers the piece's bytes; this, the rest of the file
            self.n_bytes += state.n_bytes
            self.files.append((piece.name, state.sha256, state.n_bytes))
            row = first_row + state.n_rows

    def _count_columns(self, batch: pa.RecordBatch, piece: Piece) -> None:
        """Refuse a part whose batches, together, hold more than ``max_columns`` keys."""
        if METADATA in batch.schema.names:
            self._fields.update(field.name for field in batch.schema.field(METADATA).type)
        limit = self.part.settings.limits.max_columns
        if len(self._fields) > limit:
            line = batch.column(LINE)[0].as_py() if batch.num_rows else None
            raise too_many_columns(piece.name, line, limit, REGISTRY[piece.format].unit)

    def keys(self) -> pa.Table:
        """The key columns of every batch read (:func:`~._checks.key_columns`)."""
        return pa.Table.from_batches(self._keys, schema=KEY_SCHEMA)


class PieceRead:
    """What a format's reader keeps while it reads one piece: its hash, bytes and rows."""

    def __init__(self, piece: Piece, first_row: int, part_digest: Any = None) -> None:
        self.piece = piece
        #: The row number of the piece's first row.
        self.first_row = first_row
        #: Rows read so far.
        self.n_rows = 0
        self._readers: list[Any] = []
        self._part_digest = part_digest
        self._sha: str | None = None
        self._n_bytes = 0

    def open(self) -> Any:
        """The piece's bytes as a :class:`~._files.HashedReader` (one per piece)."""
        from ._files import HashedReader

        reader = HashedReader(self.piece.path, self.piece.start, self.piece.stop)
        self._readers.append(reader)
        return reader

    def hashed(self, sha256: str, n_bytes: int) -> None:
        """Record a piece hashed by its reader itself (Parquet, harness logs)."""
        self._sha, self._n_bytes = sha256, n_bytes

    def feed(self, data: bytes) -> None:
        """Bytes read, for the hash of a part of several pieces."""
        if self._part_digest is not None:
            self._part_digest.update(data)

    def built(self, builder: Any, chunks: Iterable[Rows]) -> Iterator[pa.RecordBatch]:
        """The batches a :class:`~._vector.RowBuilder` makes of ``chunks``, rows counted."""
        for chunk in chunks:
            yield builder.build(chunk, self.first_row + self.n_rows)
            self.n_rows += len(chunk.rows)

    def sliced(self, batch: pa.RecordBatch, size: int) -> Iterator[pa.RecordBatch]:
        """``batch`` in slices of at most ``size`` rows, its rows counted."""
        self.n_rows += batch.num_rows
        for offset in range(0, batch.num_rows, size):
            yield batch.slice(offset, size)

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the piece's bytes."""
        if self._sha is not None:
            return self._sha
        return self._readers[0].sha256 if self._readers else hashlib.sha256().hexdigest()

    @property
    def n_bytes(self) -> int:
        """How many bytes were read."""
        if self._sha is not None:
            return self._n_bytes
        return sum(reader.n_bytes for reader in self._readers)

    def close(self) -> None:
        """Close what was opened to read the piece."""
        for reader in self._readers:
            reader.close()

    def finish(self) -> None:
        """Close the piece; check its hash against the planned one.

        Raises:
            InputError: the bytes read are not those planned: the file changed meanwhile.
        """
        self.close()
        planned = self.piece.sha256
        if planned is not None and planned != self.sha256:
            raise InputError.at(
                self.piece.name,
                None,
                None,
                "the file changed while it was read (its bytes no longer have the SHA-256 "
                "taken when the run began). Let whatever writes it finish, then run again.",
            )


def changed_since_planned(name: str, why: str) -> InputError:
    """The error for a file that is no longer the one its parts were planned from."""
    return InputError.at(
        name,
        None,
        None,
        f"the file changed while it was read ({why}), so its parts would mix two versions "
        "of it. Let whatever writes it finish (or score a copy of it), then run again.",
    )


def check_stamp(piece: Piece) -> None:
    """Check that a planned piece's file still has the size and time it was planned with.

    Raises:
        InputError: the file changed (or is gone) since its parts were planned.
    """
    if piece.stamp is None:
        return
    try:
        now = file_stamp(piece.path)
    except OSError as exc:
        reason = describe_exception(exc, one_line=True).rstrip(".")
        raise changed_since_planned(
            piece.name, f"it can no longer be looked at ({reason})"
        ) from None
    if now != piece.stamp:
        raise changed_since_planned(
            piece.name,
            "its size or modification time is not what it was when its parts were planned",
        )


def read_part(part: Part) -> PartReader:
    """A reader of ``part`` (in a worker or in the driver)."""
    return PartReader(part)


class Source:
    """A data source opened for reading: its files, format and settings.

    Close it (or use it in a ``with`` block) to remove the private copy of a stream, once its
    parts are read; a source never closed has it removed when the interpreter exits.
    """

    def __init__(
        self,
        name: str,
        format: str,
        files: Sequence[tuple[str, str]],
        settings: ReadSettings,
        copies: Sequence[Copy] = (),
    ) -> None:
        #: The source as messages name it.
        self.name = name
        #: The format's name.
        self.format = format
        #: ``(path to open, name in messages)`` of each file, in order.
        self.files = list(files)
        #: How rows become items.
        self.settings = settings
        self._copies = list(copies)
        _LEFT.update(copies)
        #: The hex SHA-256 of the source's bytes, once known (:meth:`parts`, or a stream's
        #: copy); for several files, of their bytes one after the other.
        self.sha256: str | None = copies[0].sha256 if len(copies) == 1 and len(files) == 1 else None
        #: The source's size in bytes, once known.
        self.n_bytes: int | None = copies[0].n_bytes if self.sha256 is not None else None

    @property
    def unit(self) -> str:
        """How a row's place is named: ``"line"``, ``"row"`` (Parquet) or ``"record"``."""
        return REGISTRY[self.format].unit

    def whole(self) -> Part:
        """The whole source as one part (nothing is read to plan it)."""
        pieces = tuple(
            Piece(path=path, name=name, format=self.format, file=index)
            for index, (path, name) in enumerate(self.files)
        )
        pieces = (attrs.evolve(pieces[0], first_row=1), *pieces[1:])
        return Part(pieces=pieces, settings=self.settings)

    def parts(self, n: int) -> list[Part]:
        """About ``n`` parts of similar size, planned by reading every file once.

        Raises:
            InputError: a file that cannot be split where it must (a line past the bound).
        """
        return list(self.iter_parts(n))

    def iter_parts(self, n: int) -> Iterator[Part]:
        """:meth:`parts`, each yielded as soon as it is planned (workers may start on it).

        :attr:`sha256` and :attr:`n_bytes` are known once the last part is.

        Raises:
            InputError: a file that cannot be split where it must (a line past the bound).
        """
        if n < 1:
            raise ConfigError(f"The number of parts ({n!r}) must be at least 1.")
        # Each file as it is before it is read: every piece carries it, and the file must keep
        # it while it is planned and while every part of it is read. A file rewritten in
        # place between two pieces would otherwise give parts of two versions, each piece
        # hashing as planned (a planned hash is of the bytes the planner saw).
        stamps = [file_stamp(path) for path, _ in self.files]
        target = max(1, sum(size for size, _ in stamps) // n)
        module = REGISTRY[self.format].module()
        plan = getattr(module, "plan", None) or functools.partial(_plan_whole, module)
        digest = hashlib.sha256()  # of every byte of every file, in order
        row, total, index = 1, 0, 0
        for file, ((path, name), stamp) in enumerate(zip(self.files, stamps)):
            k = max(1, round(stamp[0] / target))
            first_of_file = row
            planned: Planned
            for planned in plan(path, name, self.format, k, self.settings, digest):
                held = Piece(path=path, name=name, format=self.format, stamp=stamp)
                check_stamp(held)  # every byte hashed so far is of the file as stamped
                for piece in planned.pieces:
                    first = first_of_file + (piece.first_row or 1) - 1
                    piece = attrs.evolve(
                        piece, file=file, format=self.format, first_row=first, stamp=stamp
                    )
                    yield Part(pieces=(piece,), settings=self.settings, index=index)
                    index += 1
                row += planned.n_rows
                total += planned.n_bytes
        self.sha256 = digest.hexdigest()
        self.n_bytes = total

    def checks(self, folder: str | None = None) -> SourceChecks:
        """The whole-source checks, ready for the key columns of every part.

        ``folder``: where the rows' hashes wait for the checks (``None``: in memory).
        """
        mapped = dict(self.settings.columns)
        return SourceChecks(
            self.name,
            self.unit,
            [name for _, name in self.files],
            id_column=mapped.get("id", "id"),
            locate=self._locate if hasattr(REGISTRY[self.format].module(), "locate") else None,
            folder=folder,
        )

    def _locate(
        self, file: int, line: int, key: str | None
    ) -> tuple[str, str | None, int | None, int | None]:
        """The place of ``key`` on line ``line`` of a file, by its format's ``locate``."""
        path, name = self.files[file]
        found: tuple[str, str | None, int | None, int | None]
        found = REGISTRY[self.format].module().locate(path, name, line, key, self.settings)
        return found

    def close(self) -> None:
        """Remove the private copies of streams (parts of the source cannot be read after)."""
        for copy in self._copies:
            remove_copy(copy)
            _LEFT.discard(copy)
        self._copies.clear()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Copies of streams whose source was never closed: removed when the interpreter exits (not
#: when the source is collected: its parts may still be read by workers).
_LEFT: set[Copy] = set()


@atexit.register
def _remove_left() -> None:
    for copy in list(_LEFT):
        remove_copy(copy)
    _LEFT.clear()


@attrs.frozen
class Planned:
    """What planning one file found next: pieces, and the rows and bytes they cover.

    A format's ``plan`` yields these as it reads the file; the file's rows and bytes are
    their sums.
    """

    #: The pieces (``first_row`` counted from 1 within the file).
    pieces: tuple[Piece, ...]
    #: Rows in them.
    n_rows: int
    #: Bytes of the file read to find them (since the last).
    n_bytes: int


def _plan_whole(
    module: ModuleType,
    path: str,
    name: str,
    fmt: str,
    k: int,
    settings: ReadSettings,
    digest: Any,
) -> Iterator[Planned]:
    """A file of a format never split: one piece, its rows counted by reading them once."""
    del k
    piece = Piece(path=path, name=name, format=fmt, first_row=1)
    state = PieceRead(piece, 1, digest)  # the bytes read are the bytes hashed
    try:
        n = sum(len(chunk.rows) for chunk in module.rows(piece, settings, state))
    finally:
        state.close()
    state.finish()
    yield Planned((attrs.evolve(piece, sha256=state.sha256),), n, state.n_bytes)


# -- opening a source --------------------------------------------------------------------------


def open_source(
    path_or_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    format: str | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    answer_delimiter: str | None = None,
    null_output: str | None = None,
    name: str | None = None,
    limits: Limits | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    **reader_options: Any,
) -> Source:
    """Open a data source: one file, a list of files, a glob (``runs/*.jsonl``) or a folder.

    Nothing is parsed yet; options, the mapping and the format are checked now, and a stream is
    copied (see the module docstring).

    Args:
        path_or_paths: The file(s): local paths or URLs (``s3://...``, through fsspec).
        format: One of :data:`~itemscore.inputs.FORMATS`; ``None``: from each file's
            extension (and content, for harness logs).
        columns: Role -> column name.
        answer_delimiter: Split each text ``expected`` into several answers.
        null_output: An output equal to this text is a failed request.
        name: How messages name the source (default: its path as given); of several
            files, each is ``"<name> part K"`` (1, 2...) in their order.
        limits: The bounds (:class:`~._bounds.Limits`); reader options override them.
        batch_rows: The most rows per batch.
        reader_options: Options of the format's reader (and ``max_line_bytes``...).

    Raises:
        ConfigError: an unknown format, role or reader option; files of several formats.
        InputError: a stream past its bound; a glob or folder without data files.
        OSError: a file that cannot be read.
    """
    check_rows("batch_rows", batch_rows)
    # A converter is built to check the mapping and the delimiter before anything is read.
    Converter(columns, answer_delimiter=answer_delimiter, null_output=null_output)
    paths = expand(path_or_paths, format)
    options = dict(reader_options)
    bounds = (limits or DEFAULT_LIMITS).with_options(options)
    names = [os.fspath(path) for path in paths] if name is None else [name]
    if name is not None and len(paths) > 1:
        names = [f"{name} part {k}" for k in range(1, len(paths) + 1)]
    files: list[tuple[str, str]] = []
    copies: list[Copy] = []
    formats: list[str] = []
    try:
        for path, label in zip(paths, names):
            stream = not is_url(path) and not is_regular(path) and os.path.exists(path)
            # Standard input and `<(cat f)` have no extension: their copy's content tells.
            unnamed = stream and format is None and not Path(path).suffix
            fmt = "" if unnamed else detect_format(path, format)
            if is_url(path):
                _check_url_format(path, label, fmt)
            elif stream:
                copy = copy_stream(
                    path,
                    label,
                    REGISTRY[fmt].stream if fmt else "lines",  # type: ignore[arg-type]
                    max_line_bytes=bounds.max_line_bytes,
                    max_json_bytes=bounds.max_json_bytes,
                )
                copies.append(copy)
                if format is None:
                    from ._sniff import sniff

                    fmt = sniff(copy.path, fmt or _stream_format(copy, label, bounds))
                path = copy.path
            if format is not None and not is_url(path):
                _check_named_format(path, label, fmt)
            formats.append(fmt)
            files.append((os.fspath(path), label))
        if len(set(formats)) > 1:
            raise ConfigError(
                f"The files of one source must share a format; these hold "
                f"{one_of(dict.fromkeys(formats))}. Read them as separate sources, or name "
                "one format with --format."
            )
        fmt = formats[0]
        _check_options(fmt, reader_options)
    except BaseException:
        for copy in copies:
            remove_copy(copy)
        raise
    settings = ReadSettings(
        columns=tuple(dict(columns or {}).items()),
        answer_delimiter=answer_delimiter,
        null_output=null_output,
        limits=bounds,
        options=tuple(options.items()),
        batch_rows=batch_rows,
        qualify_ids=REGISTRY[fmt].records and len(files) > 1 and "id" not in dict(columns or {}),
    )
    label = name if name is not None else source_name(path_or_paths)
    return Source(label, fmt, files, settings, copies)


def check_rows(option: str, value: Any) -> None:
    """Refuse a number of rows (``batch_rows``, ``chunk_size``) that is not a whole number >= 1.

    Raises:
        ConfigError: naming the option and the value.
    """
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"`{option}` ({value!r}) must be a whole number of at least 1.")


def _stream_format(copy: Copy, name: str, bounds: Limits) -> str:
    """The format of a stream without an extension, from its copy's first bytes.

    Raises:
        InputError: a stream read whole (JSON, Parquet) larger than ``max_json_bytes``.
    """
    from ._sniff import content_format

    with open(copy.path, "rb") as handle:
        fmt = content_format(handle.read(1 << 20)) or "jsonl"  # empty: no rows, said later
    if REGISTRY[fmt].stream == "document" and copy.n_bytes > bounds.max_json_bytes:
        raise InputError.at(
            name,
            None,
            None,
            f"the stream holds {fmt} of {copy.n_bytes:,} bytes, more than a file read whole "
            f"may hold ({bounds.max_json_bytes:,} bytes, the bound max_json_bytes). If it is "
            f"meant, raise the bound, e.g. --read-option max_json_bytes={copy.n_bytes}.",
        )
    return fmt


#: How messages name the formats a data file's content can be told apart by.
_FORMAT_NAMES = {"jsonl": "JSON lines", "json": "JSON", "parquet": "Parquet", "csv": "CSV",
                 "tsv": "TSV"}  # fmt: skip


def _check_named_format(path: str, name: str, fmt: str) -> None:
    """Refuse a table format named for a file whose content is JSON or Parquet.

    Read as CSV, a JSON lines file has one column named after its first line, and the error
    that follows ("no 'output' column; the columns: {"id": 0, ...}") hides the cause.

    Raises:
        ConfigError: ``fmt`` is CSV or TSV and the file starts as JSON or Parquet does.
    """
    if fmt not in ("csv", "tsv"):
        return
    from ._sniff import content_format

    try:
        with open(path, "rb") as handle:
            looks = content_format(handle.read(1 << 16))
    except OSError:
        return  # the reader names the problem
    if looks not in ("jsonl", "json", "parquet"):
        return
    why = {
        "jsonl": "its first line is a JSON object",
        "json": "it starts as one JSON document",
        "parquet": "it starts with Parquet's magic bytes",
    }[looks]
    raise ConfigError(
        f"{name}: the format {fmt!r} was named (--format {fmt}), but the file looks like "
        f"{_FORMAT_NAMES[looks]}, not {_FORMAT_NAMES[fmt]}: {why}. Use --format {looks} "
        f"(format={looks!r} in Python), or leave the format out."
    )


def _check_url_format(url: str, name: str, fmt: str) -> None:
    """Refuse a harness log named by a URL: its harness's reader opens local files only.

    Raises:
        ConfigError: ``fmt`` is a records format (lm-eval, inspect, EEE).
    """
    if REGISTRY[fmt].records:
        raise ConfigError(
            f"{name}: a harness log ({fmt}) named by a URL. Harness logs are read by their "
            "harness's own reader, which opens local files only: download the log first "
            "(e.g. `aws s3 cp URL .` or `gcloud storage cp URL .`), then score the local copy."
        )


def source_name(path_or_paths: Any) -> str:
    """How messages name a source given as a path, or as a list of them."""
    if isinstance(path_or_paths, (str, os.PathLike)):
        return os.fspath(path_or_paths)
    return ", ".join(os.fspath(p) for p in path_or_paths)


def _check_options(fmt: str, given: Mapping[str, Any]) -> None:
    """Check the reader options given for ``fmt``: its reader's own, and the bounds it keeps.

    Raises:
        OptionError: an option the format's reader does not take, or a bound that does not
            apply to it.
    """
    entry = REGISTRY[fmt]
    own, bounds = entry.options(), list(entry.bounds)
    accepted = [*own, *bounds]
    for option in given:
        if option not in accepted:
            listed = f"its options are {one_of(own)}" if own else "it takes none"
            kept = f" It keeps the bounds {one_of(bounds)}, options too." if not own else ""
            raise OptionError(
                f"The {fmt} reader has no option {option!r}; {listed}."
                f"{did_you_mean(option, accepted)}{kept}",
                option=option,
                allowed=accepted,
            )


_HIDDEN = (".", "_")  # .crc, _SUCCESS, _metadata: what writers of partitioned data leave


def expand(
    path_or_paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    format: str | None = None,
) -> list[str]:
    """The files a source names: a file, a list, a glob or a folder (sorted, recursively).

    Each may be a local path or a URL (:mod:`._fs`). A folder or glob keeps the files whose
    extension names a format (or, with ``format``, that format's extensions); names starting
    with ``.`` or ``_`` are left out, and so is lm-eval's ``results_TIMESTAMP.json`` beside
    its samples files (the samples reader reads it).

    Raises:
        ConfigError: a URL that fsspec cannot read (fsspec or its backend missing).
        FileNotFoundError: a URL that names nothing.
        InputError: a glob or folder without such a file; an empty list.
    """
    if isinstance(path_or_paths, (str, os.PathLike)):
        given: list[str | os.PathLike[str]] = [path_or_paths]
    else:
        given = list(path_or_paths)
        if not given:
            raise InputError("The list of data files is empty: name at least one file.")
    out: list[str] = []
    for item in given:
        text = os.fspath(item)
        listed = listing(text)
        if listed is None:
            out.append(text)
            continue
        kind, found = listed
        kept: list[tuple[str, str]] = []
        for candidate in found:
            if Path(candidate).name.startswith(_HIDDEN):
                continue
            try:
                fmt = detect_format(candidate, format)
            except ConfigError:
                continue
            if format is not None and Path(candidate).suffix.lower() not in (
                REGISTRY[fmt].extensions or (Path(candidate).suffix.lower(),)
            ):
                continue
            kept.append((candidate, fmt))
        from ._sniff import lm_eval_results  # lm-eval's folder: its results file is no data

        record = lm_eval_results(kept)
        kept = [(candidate, fmt) for candidate, fmt in kept if candidate not in record]
        if not kept:
            raise InputError(
                f"The {kind} {text} holds no data file (none with an extension itemscore reads: "
                f"{', '.join(sorted({e for f in REGISTRY.values() for e in f.extensions}))})."
            )
        out += [candidate for candidate, _ in kept]
    return out
