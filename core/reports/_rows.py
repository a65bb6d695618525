"""The items of a run with their scores: what the per-item reports iterate over.

Every per-item report reads the run table through :func:`score_rows`, one batch of items at a
time, never an :class:`~itemscore.ItemScore` object per score.
"""

from __future__ import annotations

from collections.abc import Iterator

from .._records import ItemResult
from .._result import RunResult
from ..engine._table import Score

__all__ = ["STATUS_NAMES", "Score", "score_rows"]

#: Status names by state code.
STATUS_NAMES: tuple[str, ...] = ("ok", "fail", "skip", "error")


def score_rows(result: RunResult) -> Iterator[tuple[ItemResult, list[tuple[str, Score]]]]:
    """Each item (its own fields; ignore its ``scores``) with its scores by label, in order."""
    return result.table.rows()
