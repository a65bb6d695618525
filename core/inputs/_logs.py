"""Harness logs (lm-eval, inspect_ai) into canonical batches: records through the row path.

A records reader (``read_lm_eval``, ``read_inspect``, or any registered with
``records=True``) opens the file itself and returns, or yields as it reads, dicts keyed by role
(``id``, ``output``, ``expected``...) and by metadata name. A reader that *yields* them may
mark a document it could not read with ``"error": reason``: that reason goes to the batch's
``_error`` column (the item is scored ``error``), not to metadata. (A reader that returns a
list is of the older form, whose ``error`` is metadata like any key.)

Since the reader opens the file itself, the file is hashed by reading it once before, and its
size and modification time are compared after: a log that changed meanwhile is an error.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa

from .._exceptions import InputError
from ._formats import REGISTRY
from ._read import Piece, PieceRead, ReadSettings
from ._source import Rows
from ._vector import RowBuilder

__all__ = ["read", "rows"]

UNIT = "record"
STREAM = "document"
BOUNDS = ("max_json_bytes", "max_columns")  # a stream's copy; the records' keys


def _records(piece: Piece, settings: ReadSettings) -> Any:
    reader = REGISTRY[piece.format].load()
    records = reader(Path(piece.path), **dict(settings.options))
    if not settings.qualify_ids:
        return records
    qualified = (_qualified(record) for record in records)
    return list(qualified) if isinstance(records, list) else qualified


def _qualified(record: Any) -> Any:
    """A record whose id names its task too (``TASK/ID``): several logs read together."""
    if isinstance(record, dict) and record.get("id") is not None and record.get("group"):
        return {**record, "id": f"{record['group']}/{record['id']}"}
    return record


def _hash(path: str, *feeds: Any) -> tuple[str, int, tuple[int, int]]:
    """``(SHA-256, size, (size, time of change) as opened)``; each of ``feeds`` takes every byte."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        before = os.fstat(handle.fileno())
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            for feed in feeds:
                feed(block)
            size += len(block)
    return digest.hexdigest(), size, (before.st_size, before.st_mtime_ns)


def _chunks(piece: Piece, settings: ReadSettings, state: PieceRead, records: Any) -> Iterator[Rows]:
    """``records``, ``batch_rows`` at a time, numbered from 1; the file is hashed first."""
    sha256, size, stamp = _hash(piece.path, state.feed)
    records = iter(records)
    first = 1
    while chunk := list(islice(records, settings.batch_rows)):
        yield Rows(piece.name, chunk, range(first, first + len(chunk)), "record")
        first += len(chunk)
    after = os.stat(piece.path)
    if (after.st_size, after.st_mtime_ns) != stamp:
        raise InputError.at(
            piece.name,
            None,
            None,
            "the file changed while it was read (its size or time of change is no longer what "
            "it was when reading began). Let whatever writes it finish, then run again.",
        )
    state.hashed(sha256, size)


def rows(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[Rows]:
    """The log's records, ``batch_rows`` at a time, numbered from 1."""
    yield from _chunks(piece, settings, state, _records(piece, settings))


def read(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[pa.RecordBatch]:
    """The canonical batches of a harness log."""
    records = _records(piece, settings)
    error_key = None if isinstance(records, list) else "error"
    builder = RowBuilder(
        settings.converter(), error_key=error_key, max_columns=settings.limits.max_columns
    )
    yield from state.built(builder, _chunks(piece, settings, state, records))
