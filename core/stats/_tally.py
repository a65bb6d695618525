"""Tallies: a sample of values held as its distinct values and how often each occurs.

A :class:`Tally` is what a mean, its interval, its coverage receipt and a macro mean over
groups need of their values, and two tallies of disjoint samples merge by adding their counts.
Its form is canonical — distinct values in ascending order, each with its count — so every
number computed from it is the same to the bit however the sample was cut into parts: a run
scored serially, by two workers or on a cluster gives one mean. Right-or-wrong scores, token
F1 and most per-item metrics take a few thousand distinct values at most, so a tally of ten
million scores is small; values that never repeat cost two numbers each.

:func:`tally_rows` is the same over many tallies at once: rows of (key, value, count), one
key per (model, group), sorted and summed; :class:`TallyRows` adds them up a part at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ._numbers import _LARGE

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Tally", "TallyRows", "tally_rows"]


@attrs.frozen(eq=False)
class Tally:
    """Finite values as their distinct values (ascending) and the count of each."""

    values: NDArray[np.float64]
    counts: NDArray[np.int64]

    @classmethod
    def of(cls, values: NDArray[np.float64]) -> Tally:
        """The tally of finite ``values`` (checked by the caller); ``-0.0`` counts as ``0.0``."""
        distinct, counts = np.unique(np.asarray(values, np.float64) + 0.0, return_counts=True)
        return cls(distinct, counts.astype(np.int64, copy=False))

    @classmethod
    def merged(cls, tallies: Iterable[Tally]) -> Tally:
        """The tally of the union of the samples ``tallies`` count."""
        found = list(tallies)
        if len(found) == 1:
            return found[0]
        return cls.summed(
            np.concatenate([t.values for t in found] or [np.empty(0)]),
            np.concatenate([t.counts for t in found] or [np.empty(0, np.int64)]),
        )

    @classmethod
    def summed(cls, values: NDArray[np.float64], counts: NDArray[np.int64]) -> Tally:
        """The tally of values each counted ``counts`` times (in any order, repeats added)."""
        _, distinct, summed = tally_rows(np.zeros(len(values), np.int64), values, counts)
        return cls(distinct, summed)

    @property
    def n(self) -> int:
        """How many values the tally counts."""
        return int(self.counts.sum())

    @property
    def scale(self) -> float:
        """1.0, or the largest magnitude when squares of the values could overflow or vanish."""
        if not self.values.size:
            return 1.0
        biggest = max(abs(float(self.values[0])), abs(float(self.values[-1])))
        return biggest if biggest > _LARGE or 0.0 < biggest < 1.0 / _LARGE else 1.0

    def mean_sd(self) -> tuple[float, float]:
        """The mean and the sample standard deviation (``ddof=1``; 0 for one value).

        Sums are :func:`math.fsum` of each distinct value times its count, so the mean rests on
        one rounding per distinct value, whatever the order the values came in.
        """
        n = self.n
        if len(self.values) == 1:
            return float(self.values[0]), 0.0
        scale = self.scale
        y = self.values / scale if scale != 1.0 else self.values
        m = _fsum(y, self.counts) / n
        sd = math.sqrt(_fsum(y, self.counts, m) / (n - 1))
        return m * scale, sd * scale

    def expanded(self) -> NDArray[np.float64]:
        """Every value, as many times as it occurs, in ascending order."""
        return np.repeat(self.values, self.counts)


#: Values summed at a time by :func:`_fsum` (their Python floats are made a block at a time).
_BLOCK = 1 << 16


def _fsum(
    values: NDArray[np.float64], counts: NDArray[np.int64], center: float | None = None
) -> float:
    """``fsum(counts * values)`` exactly rounded, or ``fsum(counts * (values - center)**2)``.

    Each product of a value and its count is summed exactly, as four products of halves
    (Veltkamp's split of the value, the count cut at 2**26), so that a sum whose terms cancel
    is still correctly rounded; squared deviations are all positive and need no such care.
    Python floats are made a block at a time.
    """

    def terms() -> Iterator[float]:
        for start in range(0, len(values), _BLOCK):
            y = values[start : start + _BLOCK]
            c = counts[start : start + _BLOCK]
            if center is not None:
                y = y - center
                yield from (y * y * c).tolist()
                continue
            ones = c == 1
            yield from y[ones].tolist()
            y, c = y[~ones], c[~ones]
            t = y * _SPLIT
            high = t - (t - y)
            low = y - high
            c_high = (c >> 26 << 26).astype(np.float64)
            c_low = (c & ((1 << 26) - 1)).astype(np.float64)
            for part in (high * c_high, high * c_low, low * c_high, low * c_low):
                yield from part.tolist()

    return math.fsum(terms())


#: Veltkamp's constant: ``t = v·(2**27 + 1)`` splits ``v`` into two halves of 26 bits.
_SPLIT = float(2**27 + 1)


def tally_rows(
    keys: NDArray[np.int64], values: NDArray[np.float64], counts: NDArray[np.int64] | None = None
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Rows of (key, value, count) summed: one row per distinct (key, value), sorted by both.

    ``counts`` defaults to one per row. The result of rows already summed, concatenated with
    more, summed again, equals the rows summed at once: tallies of parts merge by addition.
    """
    values = np.asarray(values, np.float64) + 0.0
    size = len(values)
    if size == 0:
        return keys[:0], values, np.empty(0, np.int64)
    if keys[0] == keys[-1] and not bool(np.any(keys != keys[0])):  # one key: sort the values
        if counts is None:
            distinct, found = np.unique(values, return_counts=True)
        else:
            order = np.argsort(values)
            ordered = values[order]
            starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
            distinct = ordered[starts]
            found = np.add.reduceat(np.asarray(counts, np.int64)[order], starts)
        return np.full(len(distinct), keys[0]), distinct, found.astype(np.int64, copy=False)
    order = np.lexsort((values, keys))
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(
        np.concatenate(([True], (keys[1:] != keys[:-1]) | (values[1:] != values[:-1])))
    )
    if counts is None:
        summed: Any = np.diff(np.append(starts, size))
    else:
        summed = np.add.reduceat(np.asarray(counts, np.int64)[order], starts)
    return keys[starts], values[starts], summed.astype(np.int64, copy=False)


@attrs.define(eq=False)
class TallyRows:
    """Rows of (key, value, count) added a part at a time: :func:`tally_rows` of them all.

    Parts are summed together again once they outgrow twice the last sum (and 2**20 rows), so
    memory follows the distinct rows, and the result is the same to the bit however cut.
    """

    pieces: list[tuple[Any, Any, Any]] = attrs.field(factory=list)
    kept: int = 0
    last: int = 0

    def add(self, keys: NDArray[np.int64], values: NDArray[np.float64]) -> None:
        """Tally one part's rows (one count each)."""
        self.pieces.append(tally_rows(keys, values))
        self.kept += len(self.pieces[-1][0])
        if self.kept > max(2 * self.last, 1 << 20):
            self.kept = self.last = len(self.summed()[0])

    def summed(self) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
        """Every row added so far, summed (and kept so, as the one part)."""
        if not self.pieces:
            return np.empty(0, np.int64), np.empty(0), np.empty(0, np.int64)
        if len(self.pieces) > 1:
            self.pieces = [tally_rows(*(np.concatenate(column) for column in zip(*self.pieces)))]
        return self.pieces[0]
