"""The whole-source duplicate search: bucket by bucket (a large source) as in one hash table."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itemscore import InputError
from itemscore.inputs import _checks
from itemscore.inputs._checks import KEY_SCHEMA, SourceChecks

Row = tuple[str, "str | None", "int | None"]

ROWS = st.lists(
    st.tuples(
        st.text(alphabet="ab\u00e9\U0001f600_1", max_size=6),
        st.sampled_from([None, None, "m", "n"]),
        st.sampled_from([None, None, 1, 2]),
    ),
    min_size=1,
    max_size=80,
)


def _keys(rows: list[Row], cut: int) -> list[pa.Table]:
    """The rows' key columns in batches cut every ``cut`` rows, each a slice of one table."""
    whole = pa.table(
        {
            "id": [r[0] for r in rows],
            "model": pa.array([r[1] for r in rows], pa.string()),
            "attempt": pa.array([r[2] for r in rows], pa.int64()),
            "answered": [True] * len(rows),
            "_line": list(range(1, len(rows) + 1)),
            "_file": pa.array([0] * len(rows), pa.int32()),
        },
        schema=KEY_SCHEMA,
    )
    return [whole.slice(start, cut) for start in range(0, len(rows), cut)]


def _outcome(tables: list[pa.Table]) -> str | None:
    checks = SourceChecks("d.jsonl", "line", ["d.jsonl"])
    for table in tables:
        checks.add(table)
    try:
        checks.finish()
    except InputError as exc:
        return str(exc)
    return None


def _first_repeat(rows: list[Row]) -> int | None:
    seen: set[Row] = set()
    for index, row in enumerate(rows):
        if row in seen:
            return index
        seen.add(row)
    return None


@settings(max_examples=150, deadline=None)
@given(rows=ROWS, cut=st.integers(1, 30))
def test_the_search_bucket_by_bucket_finds_the_repeat_one_table_finds(
    rows: list[Row], cut: int
) -> None:
    whole = _outcome(_keys(rows, cut))
    with mock.patch.object(_checks, "BUCKET_ROWS", 0):  # every source goes bucket by bucket
        bucketed = _outcome(_keys(rows, cut))
    assert bucketed == whole
    repeat = _first_repeat(rows)
    if repeat is None:
        assert whole is None
    else:
        assert whole is not None
        assert whole.startswith(f"d.jsonl:{repeat + 1}: column 'id': the id {rows[repeat][0]!r} ")


def test_equal_ids_share_a_bucket_wherever_their_chunks_start() -> None:
    ids = [f"item-{n % 300}" for n in range(2_000)] + ["", "é", "\U0001f600"] * 5
    chunks = pa.chunked_array([pa.array(ids).slice(0, 1_013), pa.array(ids).slice(1_013)])
    buckets = _checks._buckets(chunks)
    assert buckets.dtype == np.uint8
    assert len(buckets) == len(ids)
    by_id: dict[str, set[int]] = {}
    for ident, bucket in zip(ids, buckets.tolist()):
        by_id.setdefault(ident, set()).add(bucket)
    assert all(len(found) == 1 for found in by_id.values())
    assert len(set(buckets.tolist())) >= 12  # the ids spread over the buckets


@pytest.mark.parametrize("plain", [True, False])
def test_a_large_source_is_searched_in_buckets(plain: bool) -> None:
    """Past BUCKET_ROWS rows the search filters one bucket at a time, and still names the repeat."""
    n = 3_000
    rows: list[Row] = [(f"q{i}", None if plain else "m", None) for i in range(n)]
    rows[2_500] = rows[17]
    calls: list[int] = []
    unique = _checks._unique

    def counted(keys: pa.Table) -> bool:
        calls.append(keys.num_rows)
        return unique(keys)

    with (
        mock.patch.object(_checks, "BUCKET_ROWS", 1_000),
        mock.patch.object(_checks, "_unique", counted),
    ):
        message = _outcome(_keys(rows, 700))
    assert message is not None
    whose = "" if plain else " for model 'm'"
    assert message.startswith(
        f"d.jsonl:2501: column 'id': the id 'q17' appears twice{whose} (first at line 18)"
    )
    assert len(calls) > 1
    assert max(calls) < n // 4
