"""The whole-source duplicate search over hashed keys: the same repeat the exact keys name."""

from __future__ import annotations

from pathlib import Path
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


def _digests(tables: list[pa.Table], folder: str | None = None) -> str | None:
    """The outcome with each part given as its digest, read again only when asked."""
    checks = SourceChecks("d.jsonl", "line", ["d.jsonl"], folder=folder)
    for table in tables:
        checks.add(_checks.KeyDigest.of(table), lambda table=table: table)  # type: ignore[misc]
    try:
        checks.finish()
    except InputError as exc:
        return str(exc)
    return None


@settings(max_examples=150, deadline=None)
@given(rows=ROWS, cut=st.integers(1, 30))
def test_the_hashed_search_names_the_first_repeat(rows: list[Row], cut: int) -> None:
    whole = _outcome(_keys(rows, cut))
    assert _digests(_keys(rows, cut)) == whole
    repeat = _first_repeat(rows)
    if repeat is None:
        assert whole is None
    else:
        assert whole is not None
        assert whole.startswith(f"d.jsonl:{repeat + 1}: column 'id': the id {rows[repeat][0]!r} ")


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, cut=st.integers(1, 30))
def test_digests_kept_in_a_folder_and_added_in_any_order_name_the_same_repeat(
    rows: list[Row], cut: int
) -> None:
    """Parts whose reads finish out of order, their hashes kept in files: the same outcome."""
    import tempfile

    tables = _keys(rows, cut)
    with tempfile.TemporaryDirectory() as folder:
        assert _digests(tables[::-1], folder) == _outcome(tables)
        sizes = SourceChecks("d.jsonl", "line", ["d.jsonl"], folder=folder + "/again")
        Path(folder, "again").mkdir()
        for table in tables:
            sizes.add(table)
        plain = SourceChecks("d.jsonl", "line", ["d.jsonl"])
        for table in tables:
            plain.add(table)
        assert sizes.question_sizes() == plain.question_sizes()


@settings(max_examples=100, deadline=None)
@given(rows=ROWS, cut=st.integers(1, 30))
def test_hashes_that_meet_by_chance_are_told_apart_by_the_exact_keys(
    rows: list[Row], cut: int
) -> None:
    """Every key hashed to one value: the exact search alone decides, and decides right."""
    with mock.patch.object(_checks, "mix", lambda z: np.zeros_like(z)):
        collided = _outcome(_keys(rows, cut))
    assert collided == _outcome(_keys(rows, cut))


def test_equal_keys_hash_alike_wherever_their_chunks_and_slices_start() -> None:
    ids = [f"item-{n % 300}" for n in range(2_000)] + ["", "\u00e9", "\U0001f600", None] * 5
    whole = pa.array(ids, pa.string())
    chunks = pa.chunked_array([whole.slice(0, 1_013), whole.slice(1_013)])
    hashes = _checks.text_hashes(chunks)
    assert hashes.dtype == np.uint64
    assert np.array_equal(hashes, _checks.text_hashes(whole))
    by_id: dict[str | None, set[int]] = {}
    for ident, value in zip(ids, hashes.tolist()):
        by_id.setdefault(ident, set()).add(value)
    assert all(len(found) == 1 for found in by_id.values())
    assert len({next(iter(found)) for found in by_id.values()}) == len(by_id)  # none collide


def test_a_missing_attempt_hashes_alike_in_a_part_with_attempts_and_one_without() -> None:
    """The same key, with no attempt, in a part that has none and one that has some."""
    (whole,) = _keys([("q1", "m", None), ("q2", "m", 1), ("q1", "m", None)], 3)
    first, second = whole.slice(0, 1), whole.slice(1)
    assert _checks.KeyDigest.of(first).attempts is None
    assert _checks.KeyDigest.of(second).attempts is not None
    message = _digests([first, second])
    assert message is not None
    assert message.startswith("d.jsonl:3: column 'id': the id 'q1' appears twice for model 'm'")


def test_the_exact_keys_are_read_again_only_for_the_parts_whose_hashes_repeat() -> None:
    rows: list[Row] = [(f"q{i}", "m", None) for i in range(3_000)]
    rows[2_500] = rows[2_017]
    tables = _keys(rows, 700)
    asked: list[int] = []
    checks = SourceChecks("d.jsonl", "line", ["d.jsonl"])
    for index, table in enumerate(tables):
        checks.add(
            _checks.KeyDigest.of(table),
            lambda index=index, table=table: asked.append(index) or table,  # type: ignore[misc]
        )
    with pytest.raises(InputError) as caught:
        checks.finish()
    assert str(caught.value).startswith(
        "d.jsonl:2501: column 'id': the id 'q2017' appears twice for model 'm' (first at line 2018)"
    )
    assert asked == [2, 3]  # rows 2017 and 2500 are in the third and fourth part of 700
    clean = SourceChecks("d.jsonl", "line", ["d.jsonl"])
    for table in _keys([(f"q{i}", None, None) for i in range(3_000)], 700):
        clean.add(_checks.KeyDigest.of(table), lambda: pytest.fail("read again"))
    clean.finish()


def test_question_sizes_count_the_attempts_of_each_model_and_id() -> None:
    checks = SourceChecks("d.jsonl", "line", ["d.jsonl"])
    rows: list[Row] = [("a", "m", 1), ("a", "m", 2), ("a", "n", 1), ("b", "m", None)]
    for table in _keys(rows, 3):
        checks.add(table)
    assert checks.question_sizes() == (1, 2)
    plain = SourceChecks("d.jsonl", "line", ["d.jsonl"])
    plain.add(_keys([("a", None, None), ("b", None, None)], 2)[0])
    assert plain.question_sizes() is None
