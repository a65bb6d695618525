"""The items of a run with their scores: what the per-item reports iterate over.

Every per-item report reads the run table through :func:`score_rows`, one batch of items at a
time; equal scores of a label are one shared :class:`~itemscore.ItemScore`.
"""

from __future__ import annotations

from collections.abc import Iterator

from .._records import ItemResult
from .._result import RunResult

__all__ = ["score_rows"]


def score_rows(result: RunResult) -> Iterator[ItemResult]:
    """Each item with its scores (``item.scores``, one per label), in order."""
    return result.table.rows()
