"""Where a run's items are (:class:`ItemSource`), and the key columns read from them.

The keys — ``id``, ``model``, ``group``, ``cluster``, ``attempt`` and each item's content
fingerprint — are what aggregation, pairing and group tables need of the items: read from a
list of :class:`~itemscore.ItemResult`, from Arrow item columns, or from the Parquet file (or
folder of parts) that holds them (:class:`StoredKeys`). The run table
(:mod:`itemscore.engine._table`) holds them beside the scores.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pyarrow as pa

from .._hashing import text_buffers
from .._records import ItemResult
from .._schema import ITEM_COLUMNS, batch_to_items, strings
from ._store import PartFile, score_field

__all__ = [
    "FINGERPRINT",
    "KEY_COLUMNS",
    "KEY_TYPES",
    "OPTIONAL_KEYS",
    "ROWS_BATCH",
    "ItemSource",
    "StoredKeys",
    "fingerprints",
    "keys_of",
]

#: The columns every table keeps in memory.
KEY_COLUMNS: tuple[str, ...] = ("id", "model", "group", "cluster", "attempt")
#: The key columns items may leave empty (``id`` never is).
OPTIONAL_KEYS: tuple[str, ...] = KEY_COLUMNS[1:]
#: Items built at a time when a table is read row by row.
ROWS_BATCH = 8192

KEY_TYPES = {
    "id": pa.string(),
    "model": pa.string(),
    "group": pa.string(),
    "cluster": pa.string(),
    "attempt": pa.int64(),
}


def keys_of(source: Sequence[ItemResult] | pa.RecordBatch | pa.Table) -> pa.Table:
    """The key columns of items (a list) or of item columns (Arrow), with their fingerprints.

    Arrow columns that hold a ``fingerprint`` column already keep it.
    """
    if isinstance(source, (pa.RecordBatch, pa.Table)):
        names = set(source.schema.names)
        n = source.num_rows
        columns = {
            key: source.column(key) if key in names else pa.nulls(n, kind)
            for key, kind in KEY_TYPES.items()
        }
        if FINGERPRINT in names:
            columns[FINGERPRINT] = source.column(FINGERPRINT)
            return pa.table(columns)
        inputs = source.column("input") if "input" in names else pa.nulls(n, pa.string())
        answers = source.column("expected") if "expected" in names else pa.nulls(n, _ANSWERS)
    else:
        columns = {
            key: strings([getattr(item, key) for item in source])
            if kind == pa.string()
            else pa.array([getattr(item, key) for item in source], type=kind)
            for key, kind in KEY_TYPES.items()
        }
        inputs = strings([item.input for item in source])
        answers = pa.array([item.expected for item in source], _ANSWERS)
    columns[FINGERPRINT] = fingerprints(inputs, answers)
    return pa.table(columns)


#: The key column of each item's content fingerprint (see :func:`fingerprints`).
FINGERPRINT = "fingerprint"


def fingerprints(
    inputs: pa.Array | pa.ChunkedArray, answers: pa.Array | pa.ChunkedArray
) -> pa.Array:
    """Each item's content fingerprint: what says two items with one id are one question.

    64 bits: the CRC-32 of its ``input`` and that of its answer key (``expected``, the answers
    joined by a unit separator, U+001F), each ``0`` when missing (and ``1`` where the CRC is
    ``0``). Comparisons pair items by id and refuse a pair whose fingerprints differ in a part
    both sides have. Each text is read where Arrow holds it: none becomes a Python string.
    """
    import pyarrow.compute as pc

    joined = pc.binary_join(answers, pa.scalar("\x1f", answers.type.value_type))
    no_answers = pc.fill_null(pc.equal(pc.list_value_length(answers), 0), True)
    high = _crcs(inputs, pc.is_null(inputs))
    low = _crcs(joined, no_answers)
    return pa.array((high << np.uint64(32)) | low, pa.uint64())


def _crcs(texts: pa.Array | pa.ChunkedArray, missing: Any) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """The CRC-32 of each text (``1`` for ``0``), ``0`` where ``missing``."""
    crc = zlib.crc32
    out: list[int] = []
    for chunk in texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]:
        n = len(chunk)
        if n == 0 or chunk.null_count == n:
            out += [0] * n
            continue
        offsets, data_buffer = text_buffers(chunk)
        data = memoryview(data_buffer if data_buffer is not None else b"")
        out += [crc(data[a:b]) or 1 for a, b in itertools.pairwise(offsets.tolist())]
    found = np.array(out, dtype=np.uint64)
    found[np.asarray(missing.to_numpy(zero_copy_only=False), dtype=bool)] = 0
    return found


_ANSWERS = pa.list_(pa.string())


@attrs.frozen
class StoredKeys:
    """The keys of a table whose items file holds them: read from it when asked for.

    A run whose workers wrote ``items.parquet/`` leaves its keys there, as it leaves its
    scores: ten million ids and fingerprints are 220 MB the run's own measurements never read.
    """

    #: Rows.
    n_rows: int
    #: The keys among ``model``, ``group``, ``cluster`` and ``attempt`` that some item has.
    present: frozenset[str]


@attrs.frozen(kw_only=True, eq=False, repr=False)
class ItemSource:
    """Where a table's items are: a list, Arrow columns, a Parquet file, or nowhere.

    Build one with :meth:`of_list`, :meth:`of_arrow` or :meth:`of_parquet`; ``None`` in
    place of one means the items were not kept.
    """

    #: The items given from Python, if they were.
    listed: Sequence[ItemResult] | None = None
    #: Item columns held in memory.
    arrow: pa.Table | None = None
    #: The Parquet file (or folder of parts) the items are read from, if they live there.
    path: Path | None = None
    #: The parts of a folder of Parquet parts, in order; ``None`` for one file.
    parts: tuple[PartFile, ...] | None = None

    @classmethod
    def of_list(cls, items: Sequence[ItemResult]) -> ItemSource:
        """Items given from Python, used as they are."""
        return cls(listed=items)

    @classmethod
    def of_arrow(cls, table: pa.Table) -> ItemSource:
        """Item columns held in memory."""
        return cls(arrow=table)

    @classmethod
    def of_parquet(cls, path: Path, parts: Sequence[PartFile] | None = None) -> ItemSource:
        """Item columns (and score columns) in a Parquet file, read when needed.

        With ``parts``, ``path`` is a folder and the items are in its files ``parts``, in
        that order.
        """
        return cls(path=path, parts=None if parts is None else tuple(parts))

    @property
    def files(self) -> list[Path]:
        """The Parquet files the items are in, in order (none: the items are not in files)."""
        if self.path is None:
            return []
        if self.parts is None:
            return [self.path]
        return [self.path / part.file for part in self.parts]

    def batches(
        self, size: int = ROWS_BATCH, scores: Sequence[str] = ()
    ) -> Iterator[pa.RecordBatch | list[ItemResult]]:
        """The items in consecutive batches: Arrow item columns, or slices of the list.

        ``scores``: labels whose score columns a Parquet file's batches bring along.
        """
        if self.listed is not None:
            for start in range(0, len(self.listed), size):
                yield list(self.listed[start : start + size])
            return
        if self.arrow is not None:
            present = [c for c in ITEM_COLUMNS if c in self.arrow.schema.names]
            yield from self.arrow.select(present).to_batches(size)
            return
        assert self.path is not None
        import pyarrow.parquet as pq

        # pre_buffer (pyarrow's default) would read every row group's bytes ahead: the whole
        # file in memory (40 MB of a 1M-item run) for a report that reads 20,000 rows.
        for path in self.files:
            with pq.ParquetFile(path, pre_buffer=False) as handle:
                columns = [c for c in ITEM_COLUMNS if c in handle.schema_arrow.names]
                columns += [score_field(label) for label in scores]
                yield from handle.iter_batches(batch_size=size, columns=columns)

    def item_lists(self, size: int = ROWS_BATCH) -> Iterator[list[ItemResult]]:
        """The items as :class:`~itemscore.ItemResult` records, batch by batch."""
        for batch in self.batches(size):
            yield batch if isinstance(batch, list) else batch_to_items(batch)
