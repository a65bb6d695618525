"""ScoredItems: columnar scores, per-item records built on access."""

from __future__ import annotations

from itemscore import ItemResult, ItemScore
from itemscore._items import ScoredItems


def make() -> tuple[list[ItemResult], ScoredItems]:
    items = [ItemResult(id=str(i), output="x") for i in range(5)]
    columns = {
        "a": [ItemScore.ok("a") for _ in items],
        "b": [ItemScore.fail("b") for _ in items],
    }
    return items, ScoredItems(items, columns)


def test_items_carry_every_column() -> None:
    """Each item gets one score per column, in order."""
    items, scored = make()
    assert len(scored) == 5
    assert [i.id for i in scored] == [i.id for i in items]
    assert set(scored[2].scores) == {"a", "b"}
    assert scored[-1].id == "4"
    assert [i.id for i in scored[1:3]] == ["1", "2"]


def test_access_is_cached_and_equality_is_by_value() -> None:
    """An item read twice is the same object; equality compares items."""
    _, scored = make()
    assert scored[1] is scored[1]
    assert scored == list(scored)
    assert scored != list(scored)[:-1]
    assert (scored == "text") is False
    assert "5 items x 2 metrics" in repr(scored)


def test_keep_scores_merges_earlier_scores() -> None:
    """With keep_scores, earlier scores stay beside the new columns."""
    items = [ItemResult(id="1", output="x", scores={"old": ItemScore.ok("old")})]
    scored = ScoredItems(items, {"new": [ItemScore.fail("new")]}, keep_scores=True)
    assert set(scored[0].scores) == {"old", "new"}
    assert set(ScoredItems(items, {"new": [ItemScore.fail("new")]})[0].scores) == {"new"}
