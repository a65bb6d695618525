"""The items of a run with their scores as columns: what the per-item reports iterate over.

A run keeps each metric's scores as one column (state codes, values, reasons, extras); building
an :class:`~itemscore.ItemResult` with an :class:`~itemscore.ItemScore` per metric for every
item costs more than writing it. The per-item reports read the columns directly when the run
has them, and fall back to the item records otherwise (results loaded from a file).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .._columns import ScoreColumn
from .._items import ScoredItems
from .._records import ItemResult
from .._result import RunResult

__all__ = ["STATUS_NAMES", "Score", "score_rows"]

#: Status names by ScoreColumn state code.
STATUS_NAMES: tuple[str, ...] = ("ok", "fail", "skip", "error")

#: One score as ``(state code, value, reason, extra)``; ``extra`` ``None`` when empty.
Score = tuple[int, "float | None", "str | None", "Mapping[str, Any] | None"]
_CODE = {name: code for code, name in enumerate(STATUS_NAMES)}


def _columns(items: Sequence[ItemResult]) -> list[ScoreColumn] | None:
    """The score columns behind ``items``, when they are a run's plain columnar items."""
    if not isinstance(items, ScoredItems) or getattr(items, "_keep_scores", True):
        return None
    columns = list(getattr(items, "_columns", {}).values())
    if not all(isinstance(c, ScoreColumn) for c in columns):
        return None
    return columns


def score_rows(result: RunResult) -> Iterator[tuple[ItemResult, list[tuple[str, Score]]]]:
    """Each item (its own fields; ignore its ``scores``) with its scores by label, in order."""
    items = result.items
    columns = _columns(items)
    if columns is None:
        for item in items:
            yield (
                item,
                [
                    (label, (_CODE[s.status.value], s.value, s.reason, s.extra or None))
                    for label, s in item.scores.items()
                ],
            )
        return
    assert isinstance(items, ScoredItems)
    base: Sequence[ItemResult] = items._items  # the items the columns score
    prepared = [
        (
            c.label,
            c.states,
            c.values,
            c.reasons if c.reasons is not None else None,
            c.extras if c.extras is not None else None,
        )
        for c in columns
    ]
    for index, item in enumerate(base):
        yield (
            item,
            [
                (
                    label,
                    (
                        states[index],
                        values[index],
                        None if reasons is None else reasons[index],
                        None if extras is None else extras[index],
                    ),
                )
                for label, states, values, reasons, extras in prepared
            ],
        )
