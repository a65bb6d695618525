"""items.parquet written batch by batch on the writer's thread: order, errors, giving up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itemscore import ItemResult
from itemscore._columns import ScoreColumn, score_type
from itemscore._schema import items_to_batch
from itemscore.engine._store import ItemsWriter, score_field


def _filled(n: int, status: str, reason: str | None) -> pa.StructArray:
    return ScoreColumn.filled("m", n, status, reason).array()


def _batch(start: int, n: int) -> pa.RecordBatch:
    return items_to_batch([ItemResult(id=f"q{i}", output=str(i)) for i in range(start, start + n)])


def test_batches_arrive_in_order_with_their_scores(tmp_path: Path) -> None:
    path = tmp_path / "items.parquet"
    writer = ItemsWriter(path, ["m"])
    for k in range(5):
        writer.write(_batch(10 * k, 10), {"m": _filled(10, "skip" if k % 2 else "error", f"r{k}")})
    writer.close()
    table = pq.read_table(path)
    assert table.column("id").to_pylist() == [f"q{i}" for i in range(50)]
    reasons = table.column(score_field("m")).combine_chunks().field("reason").to_pylist()
    assert reasons == [f"r{i // 10}" for i in range(50)]
    assert writer.rows == 50


def test_an_error_of_the_writers_thread_is_raised_by_close(tmp_path: Path) -> None:
    path = tmp_path / "gone" / "items.parquet"  # its folder does not exist
    writer = ItemsWriter(path, ["m"])
    writer.write(_batch(0, 3), {"m": _filled(3, "skip", None)})
    with pytest.raises(FileNotFoundError):
        writer.close()


def test_an_empty_run_gets_a_file_that_says_what_a_row_holds(tmp_path: Path) -> None:
    path = tmp_path / "items.parquet"
    ItemsWriter(path, ["m"]).close()
    schema = pq.read_schema(path)
    assert schema.field(score_field("m")).type == score_type()
    assert pq.read_metadata(path).num_rows == 0


def test_abort_removes_the_file_even_after_a_failed_write(tmp_path: Path) -> None:
    path = tmp_path / "items.parquet"
    writer = ItemsWriter(path, ["m"])
    writer.write(_batch(0, 3), {"m": _filled(3, "skip", None)})
    with pytest.raises(ValueError, match="length"):  # lengths differ
        writer.write(_batch(3, 2), {"m": _filled(3, "skip", None)})
    writer.abort()
    assert not path.exists()


def test_reading_items_back_holds_one_row_group_not_the_file(tmp_path: Path) -> None:
    """A report reading the first rows of items.parquet does not read the whole file ahead."""
    from itemscore.engine._table import ItemSource

    path = tmp_path / "items.parquet"
    writer = ItemsWriter(path, ["m"])
    noise = np.random.default_rng(0)
    for k in range(40):  # 40 row groups of random hex: 4.5 MB on disk
        texts = [noise.bytes(100).hex() for _ in range(1000)]
        batch = items_to_batch([ItemResult(id=f"q{k}-{i}", output=t) for i, t in enumerate(texts)])
        writer.write(batch, {"m": _filled(1000, "skip", None)})
    writer.close()
    assert path.stat().st_size > 4_000_000
    before = pa.total_allocated_bytes()
    batches = ItemSource.of_parquet(path).batches(500)
    first = next(batches)
    held = pa.total_allocated_bytes() - before
    assert first.num_rows == 500
    assert held < 2_000_000, held  # read ahead, the whole file would be in it
    batches.close()


def test_a_loaded_report_set_has_the_fingerprints_of_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fingerprints read back batch by batch equal the run's, so compare pairs the same."""
    import json

    from click.testing import CliRunner

    import itemscore
    from itemscore.cli import cli
    from itemscore.engine import _table

    rows = [
        {"id": str(i), "output": "a", "input": None if i % 3 else f"q{i}", "expected": e}
        for i, e in enumerate(["a", ["a", "b"], "", None, "é", ["x"], "a", "b"] * 5)
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    run = CliRunner().invoke(cli, ["score", str(data), "-m", "answered_rate", "--out", str(out)])
    assert run.exit_code == 0, run.output
    fresh = itemscore.score(str(data), metrics=["answered_rate"])
    monkeypatch.setattr(_table, "ROWS_BATCH", 7)  # several batches, cut mid-file
    saved = itemscore.RunResult.load_json(out / "results.json")
    column = _table.FINGERPRINT
    assert (
        saved.table.keys.column(column).to_pylist() == fresh.table.keys.column(column).to_pylist()
    )
    assert len(set(saved.table.keys.column(column).to_pylist())) > 3
