"""``items.parquet``: a run's items and scores appended batch by batch, zstd-compressed.

One row per item: the item columns (``id``, ``output``, ``expected``, ``input``, ``group``,
``model``, ``cluster``, ``attempt``, ``metadata`` as a struct of the other columns) and one
struct column ``score:<label>`` per metric label (``status`` 0 ok, 1 fail, 2 skip, 3 error;
``value``; ``reason``; ``extra`` as JSON text). Written as a run goes, so a large run's items
are never all in memory; a file given up (the run failed) is removed.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

__all__ = ["SCORE_PREFIX", "ItemsWriter", "score_field"]

#: The prefix of a label's score column (``score:<label>``).
SCORE_PREFIX = "score:"
#: Rows per row group: a reader reads one row group at a time.
ROW_GROUP = 64 * 1024


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

                empty = {label: pa.array([], _score_type()) for label in self.labels}
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


def _score_type() -> pa.DataType:
    from ._scores import SCORE_TYPE

    return SCORE_TYPE
