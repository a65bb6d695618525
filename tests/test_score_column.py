"""The one score column: every way of building one gives the same scores, item by item."""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from itemscore import ItemScore, ScoreColumn, Status
from itemscore._columns import score_type
from itemscore._records import CODE, STATE_NAMES, STATES

_NESTED = {"matched": "Paris", "spans": [[0, 5], [7, 9]], "detail": {"f1": 0.5, "ok": True}}

#: One of each state, with reasons and nested extras on some.
SCORES = [
    ItemScore(metric="m", status=Status.OK, value=1.0, extra=_NESTED),
    ItemScore(metric="m", status=Status.FAIL, value=0.0, reason="no answer found"),
    ItemScore(metric="m", status=Status.SKIP, reason="no answer key"),
    ItemScore(metric="m", status=Status.ERROR, reason="ValueError: bad"),
    ItemScore(metric="m", status=Status.OK, value=0.25, extra={"unicode": "é ✓", "n": [1, 2.5]}),
    ItemScore(metric="m", status=Status.FAIL, value=0.5),
]


def _fields(column: ScoreColumn) -> list[tuple[Any, ...]]:
    return [(s.metric, s.status, s.value, s.reason, dict(s.extra)) for s in column]


def _plain(score: ItemScore) -> tuple[Any, ...]:
    return ("m", score.status, score.value, score.reason, dict(score.extra))


def _built(label: str) -> ScoreColumn:
    return ScoreColumn(
        label,
        bytes(CODE[s.status] for s in SCORES),
        [s.value for s in SCORES],
        [s.reason for s in SCORES],
        [s.extra or None for s in SCORES],
    )


def test_the_status_table_is_the_enum_order() -> None:
    assert tuple(Status) == STATES
    assert STATE_NAMES == ("ok", "fail", "skip", "error")
    assert [CODE[s] for s in Status] == [0, 1, 2, 3]
    assert (ScoreColumn.OK, ScoreColumn.FAIL, ScoreColumn.SKIP, ScoreColumn.ERROR) == (0, 1, 2, 3)
    assert CODE["skip"] == CODE[Status.SKIP]


def test_every_form_gives_the_same_scores_item_by_item() -> None:
    """Lists, from_scores, an Arrow round trip and a pickle round trip agree on every field."""
    expected = [_plain(s) for s in SCORES]
    built = _built("m")
    from_scores = ScoreColumn.from_scores("m", SCORES)
    arrow = ScoreColumn.of_arrow("m", from_scores.arrow)
    chunked = ScoreColumn.of_arrow(
        "m", pa.chunked_array([built.arrow.slice(0, 2), built.arrow.slice(2)])
    )
    pickled = pickle.loads(pickle.dumps(from_scores))
    for column in (built, from_scores, arrow, chunked, pickled):
        assert _fields(column) == expected
        assert [_plain(column[i]) for i in range(len(SCORES))] == expected
        assert _plain(column[-1]) == expected[-1]
        assert column.states == bytes([0, 1, 2, 3, 0, 1])
        assert column == SCORES  # equal to the list of records
    assert built.arrow.type == score_type()
    assert built.arrow.equals(from_scores.arrow)
    assert built.arrow.field("extra")[0].as_py() == (
        '{"matched": "Paris", "spans": [[0, 5], [7, 9]], "detail": {"f1": 0.5, "ok": true}}'
    )
    with pytest.raises(IndexError):
        built[len(SCORES)]


def test_columns_without_reasons_or_extras_read_none() -> None:
    column = ScoreColumn("m", bytes([0, 1]), [1.0, 0.0])
    assert column.reasons is None
    assert column.extras is None
    assert [s.extra for s in column] == [{}, {}]
    again = pickle.loads(pickle.dumps(column))
    assert again.reasons is None
    assert again.extras is None


def test_a_column_refuses_lists_of_other_lengths() -> None:
    with pytest.raises(ValueError, match="3 states was given 2 values"):
        ScoreColumn("m", bytes([0, 1, 2]), [1.0, 0.0])


def test_without_extras_leaves_them_out_unencoded() -> None:
    built = _built("m")
    bare = built.without_extras()
    assert bare.extras is None
    assert bare.arrow.field("extra").null_count == len(SCORES)
    assert bare.arrow.field("reason").equals(built.arrow.field("reason"))
    assert built.array(extras=False).equals(bare.arrow)


def test_take_concat_and_filled() -> None:
    column = ScoreColumn.from_scores("m", SCORES)
    picked = [4, 0, 3, 3]
    expected = [_plain(SCORES[i]) for i in picked]
    assert _fields(column.take(picked)) == expected
    assert _fields(_built("m").take(picked)) == expected  # extras not yet encoded
    joined = ScoreColumn.concat("m", [column.take([0, 1]), _built("m").take([2, 3, 4, 5])])
    assert _fields(joined) == [_plain(s) for s in SCORES]
    assert isinstance(joined.arrow, pa.ChunkedArray)
    assert _fields(ScoreColumn.concat("m", [column])) == _fields(column)
    filled = ScoreColumn.filled("m", 3, "error", "lost")
    assert [(s.status, s.value, s.reason) for s in filled] == [(Status.ERROR, None, "lost")] * 3
    assert filled.counts() == {Status.OK: 0, Status.FAIL: 0, Status.SKIP: 0, Status.ERROR: 3}


def test_counts_and_scored_values_agree_with_a_plain_count() -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, size=500)
    scores = [
        ItemScore(metric="m", status=STATES[c], value=float(i % 7) / 7 if c <= 1 else None)
        for i, c in enumerate(codes.tolist())
    ]
    column = ScoreColumn.from_scores("m", scores)
    counted = Counter(s.status for s in scores)
    assert column.counts() == {s: counted.get(s, 0) for s in Status}
    plain = [s.value for s in scores if s.status.scored]
    values = column.scored_values()
    assert isinstance(values, np.ndarray)
    assert values.tolist() == plain
    assert column.scored_clusters([str(i) for i in range(500)]) == [
        str(i) for i, s in enumerate(scores) if s.status.scored
    ]
    empty = ScoreColumn("m", b"", [])
    assert empty.counts() == dict.fromkeys(Status, 0)
    assert empty.scored_values().size == 0
    assert list(empty) == []
