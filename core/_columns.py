"""``ScoreColumn``: one metric's scores for a run's items, stored as columns.

A run moves its scores as one column per metric label: state codes (one byte per item),
values, reasons and extras. Shards come back from workers in this form and are concatenated;
aggregates count states with ``bytes.count`` and read values without touching an object per
item. An :class:`~itemscore.ItemScore` is built only when someone reads one.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, overload

from ._records import EMPTY, ItemScore, Status

__all__ = ["CODE", "STATES", "ScoreColumn"]

#: The states by code: a column stores ``STATES.index(status)`` per item.
STATES: tuple[Status, ...] = (Status.OK, Status.FAIL, Status.SKIP, Status.ERROR)
#: The code of each state (plain strings too, so ``"ok"`` and ``Status.OK`` share one entry).
CODE: dict[Status | str, int] = {s: i for i, s in enumerate(STATES)}
OK, FAIL, SKIP, ERROR = range(4)

_new = object.__new__
_set = object.__setattr__
_status_of = operator.attrgetter("status")
_value_of = operator.attrgetter("value")
_reason_of = operator.attrgetter("reason")
_extra_of = operator.attrgetter("extra")


class ScoreColumn(Sequence[ItemScore]):
    """One metric's scores, one entry per item, in item order.

    ``reasons`` and ``extras`` are ``None`` when no item has one (the common case); an empty
    ``extra`` is stored as ``None``. A metric's ``score_items`` may return a column instead of
    a list of scores: state codes (:attr:`OK`, :attr:`FAIL`, :attr:`SKIP`, :attr:`ERROR`),
    values (a finite number for ok and fail, ``None`` otherwise), and optionally reasons and
    extras; no :class:`~itemscore.ItemScore` is built until someone reads one.
    """

    __slots__ = ("extras", "label", "reasons", "states", "values")

    #: State codes, as stored in :attr:`states`.
    OK: ClassVar[int] = 0
    FAIL: ClassVar[int] = 1
    SKIP: ClassVar[int] = 2
    ERROR: ClassVar[int] = 3

    def __init__(
        self,
        label: str,
        states: bytes | bytearray,
        values: list[float | None],
        reasons: list[str | None] | None = None,
        extras: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        #: The metric's label in the run.
        self.label = label
        #: One state code per item (see :data:`STATES`).
        self.states = states
        #: One value per item (``None`` for skip and error).
        self.values = values
        #: One reason per item, or ``None`` when no item has one.
        self.reasons = reasons
        #: One ``extra`` per item (``None``: empty), or ``None`` when no item has one.
        self.extras = extras

    # -- building ------------------------------------------------------------------------

    @classmethod
    def from_scores(cls, label: str, scores: Sequence[ItemScore]) -> ScoreColumn:
        """A column holding ``scores`` (their own ``metric`` is ignored: the label wins)."""
        states = bytes(map(CODE.__getitem__, map(_status_of, scores)))
        values = list(map(_value_of, scores))
        reasons: list[str | None] | None = list(map(_reason_of, scores))
        if reasons is not None and reasons.count(None) == len(reasons):
            reasons = None
        extras: list[Mapping[str, Any] | None] | None = list(map(_extra_of, scores))
        if extras is not None:
            empty = extras.count(EMPTY)
            if empty == len(extras):
                extras = None
            elif empty:
                extras = [e or None for e in extras]
        return cls(label, states, values, reasons, extras)

    @classmethod
    def filled(cls, label: str, n: int, status: Status, reason: str | None) -> ScoreColumn:
        """``n`` equal value-less scores (skip or error) with one reason."""
        return cls(label, bytes([CODE[status]]) * n, [None] * n, [reason] * n, None)

    @classmethod
    def concat(cls, label: str, parts: Sequence[ScoreColumn]) -> ScoreColumn:
        """One column from consecutive parts (shards), in order."""
        if len(parts) == 1:
            part = parts[0]
            return cls(label, part.states, part.values, part.reasons, part.extras)
        states = b"".join(bytes(p.states) for p in parts)
        values: list[float | None] = []
        for p in parts:
            values.extend(p.values)
        reasons: list[str | None] | None = None
        if any(p.reasons is not None for p in parts):
            reasons = []
            for p in parts:
                reasons.extend(p.reasons if p.reasons is not None else [None] * len(p))
        extras: list[Mapping[str, Any] | None] | None = None
        if any(p.extras is not None for p in parts):
            extras = []
            for p in parts:
                extras.extend(p.extras if p.extras is not None else [None] * len(p))
        return cls(label, states, values, reasons, extras)

    def take(self, indices: Sequence[int]) -> ScoreColumn:
        """The scores of the items at ``indices``, in that order."""
        get_values = self.values.__getitem__
        states = self.states
        return ScoreColumn(
            self.label,
            bytes([states[i] for i in indices]),
            list(map(get_values, indices)),
            None if self.reasons is None else list(map(self.reasons.__getitem__, indices)),
            None if self.extras is None else list(map(self.extras.__getitem__, indices)),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            ScoreColumn,
            (self.label, bytes(self.states), self.values, self.reasons, self.extras),
        )

    # -- reading -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.states)

    @overload
    def __getitem__(self, index: int) -> ItemScore: ...

    @overload
    def __getitem__(self, index: slice) -> list[ItemScore]: ...

    def __getitem__(self, index: int | slice) -> ItemScore | list[ItemScore]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        code = self.states[index]  # raises IndexError past the end
        if index < 0:
            index += len(self.states)
        score = _new(ItemScore)
        _set(score, "metric", self.label)
        _set(score, "value", self.values[index])
        _set(score, "status", STATES[code])
        _set(score, "reason", None if self.reasons is None else self.reasons[index])
        extra = None if self.extras is None else self.extras[index]
        _set(score, "extra", extra or EMPTY)
        return score

    def __iter__(self) -> Iterator[ItemScore]:
        return map(self.__getitem__, range(len(self.states)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment] # compared by content, like a list

    def __repr__(self) -> str:
        return f"<ScoreColumn {self.label!r}: {len(self)} scores>"

    def counts(self) -> dict[Status, int]:
        """Items in each of the four states."""
        states = bytes(self.states)
        return {status: states.count(code) for code, status in enumerate(STATES)}

    def scored_extras(self) -> list[Mapping[str, Any]]:
        """The ``extra`` of every scored (ok and fail) item, in order.

        Equal verdicts of a batch are often one shared mapping, so counting by identity is cheap.
        """
        states = self.states
        extras = self.extras
        if extras is None:
            return [EMPTY] * (states.count(OK) + states.count(FAIL))
        return [e or EMPTY for s, e in zip(states, extras) if s <= FAIL]

    def scored_clusters(self, clusters: Sequence[str | None]) -> list[str | None]:
        """The entries of ``clusters`` (one per item) of the scored items, in order."""
        return [c for s, c in zip(self.states, clusters) if s <= FAIL]

    def scored_outcomes(
        self, clusters: Sequence[str | None]
    ) -> tuple[list[bool], list[str | None]]:
        """For the scored items: whether each is ok (not fail), and each one's cluster."""
        pairs = [(s == OK, c) for s, c in zip(self.states, clusters) if s <= FAIL]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def scored_values(self) -> list[float]:
        """The values of the scored (ok and fail) items, in order."""
        values = self.values
        if None not in values:
            return values  # type: ignore[return-value] # no None: every item is scored
        return [v for v in values if v is not None]


def columns_of(label: str, scores: Iterable[ItemScore] | ScoreColumn) -> ScoreColumn:
    """``scores`` as a column (a column is returned as it is)."""
    if isinstance(scores, ScoreColumn):
        return scores
    return ScoreColumn.from_scores(label, list(scores))
