"""``items.parquet``: every item with every score, the per-item store of a report set.

One row per item: the item columns (``id``, ``output``, ``expected``, ``input``, ``group``,
``model``, ``cluster``, ``attempt``, ``metadata`` as a struct of the other columns) and one
struct column ``score:<label>`` per metric (``status`` as 0 ok, 1 fail, 2 skip, 3 error;
``value``; ``reason``; ``extra`` as JSON text). Compressed with zstd, written batch by batch.
``results.json`` refers to it by row count and SHA-256; any Parquet reader opens it (pandas,
DuckDB, Polars).
"""

from __future__ import annotations

from pathlib import Path

from .._result import RunResult

__all__ = ["FILENAME", "write"]

#: The file this format writes.
FILENAME = "items.parquet"


def write(result: RunResult, path: Path) -> None:
    """Write ``items.parquet`` for ``result`` to ``path``."""
    result.table.write_parquet(path)
