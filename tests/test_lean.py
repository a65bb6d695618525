"""All-null columns share one array per type: same values and types, no buffers of their own."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pyarrow as pa

import itemscore
from itemscore import _lean
from itemscore._columns import ScoreColumn, score_type
from itemscore._lean import SHARED_ROWS, from_ipc, lean, nulls, to_ipc


def _data_address(array: pa.Array) -> int:
    """The address of the buffer holding an array's offsets (strings) or values."""
    buffer = array.buffers()[1]
    assert buffer is not None
    return int(buffer.address)


def test_an_all_null_column_becomes_a_slice_of_the_shared_array() -> None:
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "model": pa.nulls(3, pa.string()),
            "attempt": pa.nulls(3, pa.int64()),
            "group": pa.array([None, "g", None], pa.string()),
        }
    )
    leaner = lean(table)
    assert leaner.equals(table)
    assert leaner.schema == table.schema
    for name in ("id", "group"):  # what has values is kept as it is
        kept = _data_address(leaner.column(name).chunk(0))
        assert kept == _data_address(table.column(name).chunk(0))
    assert lean(lean(table)) is not None
    plain = pa.table({"id": ["a"]})
    assert lean(plain) is plain  # nothing to make lean: the same table
    shared = nulls(10, pa.string())
    assert _data_address(leaner.column("model").chunk(0)) == _data_address(shared)
    assert _data_address(leaner.column("attempt").chunk(0)) == _data_address(nulls(1, pa.int64()))
    assert lean(pa.table({"id": ["x"]})).column(0).chunk(0).equals(pa.array(["x"]))


def test_a_score_column_without_reasons_or_extras_shares_them() -> None:
    column = ScoreColumn.from_scores(
        "m", [itemscore.ItemScore.ok(1.0), itemscore.ItemScore.fail(0.0)]
    ).array()
    assert column.field("reason").buffers()[1].size >= 8  # plain: offsets of its own
    leaner = lean(column)
    assert leaner.type == score_type()
    assert leaner.equals(column)
    assert leaner.field("status") is not None
    assert _data_address(leaner.field("reason")) == _data_address(nulls(1, pa.string()))
    assert _data_address(leaner.field("extra")) == _data_address(nulls(1, pa.string()))
    with_reason = ScoreColumn.from_scores(
        "m", [itemscore.ItemScore.skip("no answer"), itemscore.ItemScore.ok(1.0)]
    ).array()
    kept = lean(with_reason)
    assert kept.field("reason").equals(with_reason.field("reason"))


def test_a_long_null_chunk_becomes_several_shared_slices() -> None:
    n = 2 * SHARED_ROWS + 5
    column = pa.chunked_array([pa.nulls(n, pa.string()), pa.array(["x"])])
    leaner = lean(column)
    assert leaner.equals(column)
    assert [len(c) for c in leaner.chunks] == [SHARED_ROWS, SHARED_ROWS, 5, 1]
    assert len({_data_address(c) for c in leaner.chunks[:3]}) == 1


def test_lean_columns_pickle_through_ipc_at_their_own_size() -> None:
    table = lean(pa.table({"model": pa.nulls(1_000, pa.string())}))
    assert len(pickle.dumps(table)) > SHARED_ROWS  # a pickle carries the whole shared buffer
    assert len(to_ipc(table).to_pybytes()) < 6_000  # its own 1,000 rows of offsets
    restored = from_ipc(to_ipc(table))
    assert restored.equals(table)
    assert _data_address(restored.column(0).chunk(0)) == _data_address(nulls(1, pa.string()))


def test_a_score_column_of_a_run_pickles_small_and_equal(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    rows = [{"id": f"q{i}", "output": "a", "expected": ["a"]} for i in range(2_000)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = itemscore.score(data, ["exact_match"])
    keys = result.table.keys
    assert _data_address(keys.column("model").chunk(0)) == _data_address(nulls(1, pa.string()))
    column = result.table.score("exact_match")
    assert isinstance(column, ScoreColumn)
    copy = pickle.loads(pickle.dumps(column))
    assert copy.arrow.equals(column.arrow)
    assert copy.counts() == column.counts()
    assert len(pickle.dumps(column)) < SHARED_ROWS  # the shared arrays are 4 bytes a row


def test_nulls_past_the_shared_rows_are_made_plainly() -> None:
    big = nulls(SHARED_ROWS + 1, pa.string())
    assert len(big) == SHARED_ROWS + 1
    assert _data_address(big) != _data_address(nulls(1, pa.string()))
    assert _lean._shared[pa.string()] is not None
