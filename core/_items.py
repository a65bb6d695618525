"""``ScoredItems``: a run's items with their scores, stored by column, built on access.

A run keeps its scores as one list per metric. The per-item records that carry them
(``ItemResult`` copies with ``scores`` filled in) are built the first time an item is read,
so a run that is only aggregated never pays for 100k copies, and one that is read pays once.

A streamed run's items are packed (:class:`~itemscore._packed.PackedItems`): then nothing is
kept once built, and iterating holds one chunk of items at a time, so a report over a million
items writes with flat memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import overload

from ._columns import ScoreColumn
from ._gc import gc_paused
from ._packed import PackedItems
from ._records import ItemResult, ItemScore

__all__ = ["ScoredItems"]


class ScoredItems(Sequence[ItemResult]):
    """The items of a run, in input order, each with one score per metric label."""

    __slots__ = ("_built", "_columns", "_items", "_keep_scores", "_packed")

    def __init__(
        self,
        items: Sequence[ItemResult],
        columns: Mapping[str, Sequence[ItemScore]],
        *,
        keep_scores: bool = False,
    ) -> None:
        self._items = items
        self._columns = dict(columns)
        self._keep_scores = keep_scores
        self._packed = isinstance(items, PackedItems)
        self._built: list[ItemResult | None] = [] if self._packed else [None] * len(items)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> ItemResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[ItemResult]: ...

    def __getitem__(self, index: int | slice) -> ItemResult | list[ItemResult]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if self._packed:
            if index < 0:
                index += len(self)
            return self._build(index)
        built = self._built[index]
        if built is None:
            built = self._built[index] = self._build(index)
        return built

    def __iter__(self) -> Iterator[ItemResult]:
        if self._packed:
            return self._stream()
        self._build_all()
        return iter(self._built)  # type: ignore[arg-type] # every slot is built

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment] # mutable cache, like a list

    def __repr__(self) -> str:
        return f"<ScoredItems: {len(self)} items x {len(self._columns)} metrics>"

    @property
    def unscored(self) -> Sequence[ItemResult]:
        """The items as the run received them (their ``scores`` not filled in), in order."""
        return self._items

    def score_columns(self) -> list[ScoreColumn] | None:
        """The run's score columns, one per label, aligned with :attr:`unscored`.

        ``None`` when the items' scores are not all in the columns (results recomputed on
        top of earlier scores keep those): read ``item.scores`` then.
        """
        if self._keep_scores:
            return None
        columns = list(self._columns.values())
        if not all(isinstance(c, ScoreColumn) for c in columns):
            return None
        return columns  # type: ignore[return-value] # every one checked

    def _stream(self) -> Iterator[ItemResult]:
        """Every item with its scores, built one chunk at a time and not kept."""
        columns = list(self._columns.items())
        keep = self._keep_scores
        for index, item in enumerate(self._items):
            row = dict(item.scores) if keep else {}
            for label, column in columns:
                row[label] = column[index]
            yield item.with_scores(row)

    def _build(self, index: int) -> ItemResult:
        item = self._items[index]
        row = dict(item.scores) if self._keep_scores else {}
        for label, column in self._columns.items():
            row[label] = column[index]
        return item.with_scores(row)

    def _build_all(self) -> None:
        built = self._built
        if None not in built:
            return
        with gc_paused():
            for index, done in enumerate(built):
                if done is None:
                    built[index] = self._build(index)
