"""TSV (``.tsv``, ``.tab``): CSV with tabs between the fields (see :mod:`.csv`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from . import csv
from ._read import Piece, PieceRead, Planned, ReadSettings
from ._source import Rows

__all__ = ["plan", "read", "rows"]

UNIT = csv.UNIT
STREAM = csv.STREAM
BOUNDS = csv.BOUNDS


def read(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[pa.RecordBatch]:
    """The canonical batches of a TSV piece (a whole file)."""
    yield from csv.batches(piece, settings, state, "\t")


def rows(piece: Piece, settings: ReadSettings, state: PieceRead) -> Iterator[Rows]:
    """The rows of a TSV file, parsed but not converted."""
    yield from csv.row_chunks(piece, settings, state, "\t")


def plan(
    path: str, name: str, fmt: str, k: int, settings: ReadSettings, digest: Any
) -> Iterator[Planned]:
    """A TSV file is one piece; its rows are counted as it is hashed."""
    del k
    yield csv.plan_file(path, name, fmt, settings, digest, "\t")
