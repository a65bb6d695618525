"""items.parquet written batch by batch on the writer's thread: order, errors, giving up."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemscore import ItemResult
from itemscore._schema import items_to_batch
from itemscore.engine._scores import SCORE_TYPE, filled
from itemscore.engine._store import ItemsWriter, score_field


def _batch(start: int, n: int) -> pa.RecordBatch:
    return items_to_batch([ItemResult(id=f"q{i}", output=str(i)) for i in range(start, start + n)])


def test_batches_arrive_in_order_with_their_scores(tmp_path: Path) -> None:
    path = tmp_path / "items.parquet"
    writer = ItemsWriter(path, ["m"])
    for k in range(5):
        writer.write(_batch(10 * k, 10), {"m": filled(10, "skip" if k % 2 else "error", f"r{k}")})
    writer.close()
    table = pq.read_table(path)
    assert table.column("id").to_pylist() == [f"q{i}" for i in range(50)]
    reasons = table.column(score_field("m")).combine_chunks().field("reason").to_pylist()
    assert reasons == [f"r{i // 10}" for i in range(50)]
    assert writer.rows == 50


def test_an_error_of_the_writers_thread_is_raised_by_close(tmp_path: Path) -> None:
    path = tmp_path / "gone" / "items.parquet"  # its folder does not exist
    writer = ItemsWriter(path, ["m"])
    writer.write(_batch(0, 3), {"m": filled(3, "skip", None)})
    with pytest.raises(FileNotFoundError):
        writer.close()


def test_an_empty_run_gets_a_file_that_says_what_a_row_holds(tmp_path: Path) -> None:
    path = tmp_path / "items.parquet"
    ItemsWriter(path, ["m"]).close()
    schema = pq.read_schema(path)
    assert schema.field(score_field("m")).type == SCORE_TYPE
    assert pq.read_metadata(path).num_rows == 0


def test_abort_removes_the_file_even_after_a_failed_write(tmp_path: Path) -> None:
    path = tmp_path / "items.parquet"
    writer = ItemsWriter(path, ["m"])
    writer.write(_batch(0, 3), {"m": filled(3, "skip", None)})
    with pytest.raises(ValueError, match="length"):  # lengths differ
        writer.write(_batch(3, 2), {"m": filled(3, "skip", None)})
    writer.abort()
    assert not path.exists()
