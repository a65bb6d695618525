"""``items.parquet``: a run's items and scores appended batch by batch, zstd-compressed.

One row per item: the item columns (``id``, ``output``, ``expected``, ``input``, ``group``,
``model``, ``cluster``, ``attempt``, ``metadata`` as a struct of the other columns) and one
struct column ``score:<label>`` per metric label (``status`` 0 ok, 1 fail, 2 skip, 3 error;
``value``; ``reason``; ``extra`` as JSON text). Written as a run goes, so a large run's items
are never all in memory; a file given up (the run failed) is removed.

A run whose workers read its data writes ``items.parquet`` as a folder of parts instead
(``items.parquet/part-00000.parquet`` ..., the layout of Spark and pyarrow datasets): each
worker writes the rows of the part it read, in this same format, and the names' lexical
order is the items' order. :class:`PartFile` is what a results file records of each.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import attrs
import pyarrow as pa

from .._columns import score_type

__all__ = [
    "PART_NAME",
    "SCORE_PREFIX",
    "ItemsWriter",
    "PartFile",
    "file_sha256",
    "handle_sha256",
    "score_field",
]

#: The prefix of a label's score column (``score:<label>``).
SCORE_PREFIX = "score:"
#: Rows per row group: a reader reads one row group at a time.
ROW_GROUP = 64 * 1024
#: The name of the ``n``-th part of an ``items.parquet`` folder: ``PART_NAME.format(n)``.
PART_NAME = "part-{:05d}.parquet"


@attrs.frozen
class PartFile:
    """One part of an ``items.parquet`` folder: its file name, rows and SHA-256."""

    #: The file's name inside the folder (``part-00000.parquet``).
    file: str
    #: Its rows.
    rows: int
    #: The SHA-256 of its bytes, in hex.
    sha256: str

    def to_dict(self) -> dict[str, object]:
        """The part as ``results.json`` records it."""
        return {"file": self.file, "rows": self.rows, "sha256": self.sha256}


def file_sha256(path: Path | str) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    with open(path, "rb") as handle:
        return handle_sha256(handle)


def handle_sha256(handle: IO[bytes]) -> str:
    """The SHA-256 of the bytes of an open file from where it stands, in hex (1 MiB at a time)."""
    digest = hashlib.sha256()
    while block := handle.read(1 << 20):
        digest.update(block)
    return digest.hexdigest()


def score_field(label: str) -> str:
    r"""The Parquet column of a label's scores (a lone surrogate written as ``\udXXX``)."""
    # Surrogate pairs as the characters they make (as JSON reads a label back), lone ones
    # escaped (UTF-8 has none).
    paired = label.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return SCORE_PREFIX + paired.encode("utf-8", "backslashreplace").decode("utf-8")


class ItemsWriter:
    """Appends batches of items with their scores to one Parquet file.

    Args:
        path: The file (written anew).
        labels: The score columns, in order; every :meth:`write` gives one array per label.
    """

    def __init__(self, path: Path, labels: Sequence[str]) -> None:
        self.path = path
        self.labels = list(labels)
        self._writer: Any = None
        self.rows = 0
        # Compressing and writing a batch releases the GIL: one thread does it while the
        # next batch is scored, one batch at a time, so at most one waits in memory.
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "itemscore-items")
        self._pending: concurrent.futures.Future[None] | None = None

    def write(self, items: pa.RecordBatch, scores: Mapping[str, pa.Array]) -> None:
        """Append one batch of items (item columns) and its score columns.

        The batch is written by the writer's thread; an error of an earlier batch is raised
        here (or by :meth:`close`).
        """
        batch = self._batch(items, scores)
        self._wait()
        self.rows += batch.num_rows
        self._pending = self._thread.submit(self._write, batch)

    def write_batches(
        self, items: Sequence[pa.RecordBatch], scores: Mapping[str, Sequence[pa.Array]]
    ) -> None:
        """Append batches of items, each with its own array of each label's ``scores``."""
        for index, batch in enumerate(items):
            self.write(batch, {label: scores[label][index] for label in self.labels})

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _write(self, batch: pa.RecordBatch) -> None:
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, batch.schema, compression="zstd")
        self._writer.write_batch(batch, row_group_size=ROW_GROUP)

    def _batch(self, items: pa.RecordBatch, scores: Mapping[str, pa.Array]) -> pa.RecordBatch:
        names = list(items.schema.names)
        arrays = list(items.columns)
        for label in self.labels:
            names.append(score_field(label))
            column = scores[label]
            arrays.append(
                column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
            )
        return pa.RecordBatch.from_arrays(arrays, names=names)

    def close(self) -> None:
        """Finish the file (an empty run still gets one that says what a row holds)."""
        try:
            self._wait()
            if self._writer is None:
                from .._schema import items_to_batch

                empty = {label: pa.array([], score_type()) for label in self.labels}
                self._write(self._batch(items_to_batch([]), empty))
            self._writer.close()
            self._writer = None
        finally:
            self._thread.shutdown()

    def abort(self) -> None:
        """Stop writing and remove the file."""
        try:
            self._wait()
        except Exception:  # noqa: BLE001 - the file is given up either way
            pass
        finally:
            self._thread.shutdown()
            if self._writer is not None:
                try:
                    self._writer.close()
                finally:
                    self._writer = None
            self.path.unlink(missing_ok=True)
