"""The items of a run with their scores as columns: what the per-item reports iterate over.

A run keeps each metric's scores as one column (state codes, values, reasons, extras); building
an :class:`~itemscore.ItemResult` with an :class:`~itemscore.ItemScore` per metric for every
item costs more than writing it. The per-item reports read the columns directly when the run
has them, and fall back to the item records otherwise (results loaded from a file).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .._columns import ScoreColumn
from .._items import ScoredItems
from .._records import ItemResult
from .._result import RunResult

__all__ = ["STATUS_NAMES", "Score", "column_rows", "score_rows"]

#: Status names by ScoreColumn state code.
STATUS_NAMES: tuple[str, ...] = ("ok", "fail", "skip", "error")

#: One score as ``(state code, value, reason, extra)``; ``extra`` ``None`` when empty.
Score = tuple[int, "float | None", "str | None", "Mapping[str, Any] | None"]
_CODE = {name: code for code, name in enumerate(STATUS_NAMES)}


def score_rows(result: RunResult) -> Iterator[tuple[ItemResult, list[tuple[str, Score]]]]:
    """Each item (its own fields; ignore its ``scores``) with its scores by label, in order."""
    items = result.items
    columns = items.score_columns() if isinstance(items, ScoredItems) else None
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
    yield from column_rows(items.unscored, columns)


def column_rows(
    items: Iterable[ItemResult], columns: Sequence[ScoreColumn]
) -> Iterator[tuple[ItemResult, list[tuple[str, Score]]]]:
    """Each of ``items`` with its scores from ``columns`` (one per label, aligned)."""
    prepared = [(c.label, c.states, c.values, c.reasons, c.extras) for c in columns]
    for index, item in enumerate(items):
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
