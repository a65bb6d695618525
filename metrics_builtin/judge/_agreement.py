"""Is the judge right? Cohen's kappa between judge and human verdicts, and the judge with itself.

Kappa is computed exactly as scikit-learn's ``cohen_kappa_score(human, judge, labels=points,
weights=...)`` with ``points`` every verdict of the scale: unweighted on the pass/fail scale,
quadratically weighted on the ordinal 1-5 and 1-10 scales (a 2 against a 5 costs nine times a
4 against a 5). The interval is a seeded percentile bootstrap over items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from itemscore import aggregate

__all__ = ["KappaResult", "cohen_kappa", "kappa_with_interval"]

Weights = Literal["linear", "quadratic"] | None

#: Bootstrap resamples of the kappa interval.
N_RESAMPLES = 2000
# Resamples computed per numpy pass, which bounds memory at _CHUNK x n indices.
_CHUNK = 100


def _weight_matrix(k: int, weights: Weights) -> NDArray[np.float64]:
    if weights is None:
        return np.ones((k, k)) - np.eye(k)
    grid = np.add.outer(np.zeros(k), np.arange(k, dtype=np.float64))
    diff = grid - grid.T
    return np.asarray(np.abs(diff) if weights == "linear" else diff**2, dtype=np.float64)


def _kappas(confusions: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Kappa of each ``k x k`` confusion table in ``confusions`` (shape ``(..., k, k)``)."""
    total = confusions.sum(axis=(-2, -1))
    rows = confusions.sum(axis=-1)  # human's marginals
    cols = confusions.sum(axis=-2)  # judge's marginals
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / total[..., None, None]
        observed_cost = (w * confusions).sum(axis=(-2, -1))
        expected_cost = (w * expected).sum(axis=(-2, -1))
        out: NDArray[np.float64] = 1.0 - observed_cost / expected_cost
    return np.where(expected_cost > 0, out, np.nan)


def _codes(human: Sequence[float], judge: Sequence[float], points: Sequence[int]) -> NDArray:  # type: ignore[type-arg]
    index = {float(p): i for i, p in enumerate(points)}
    k = len(points)
    return np.array([index[float(h)] * k + index[float(j)] for h, j in zip(human, judge)])


def confusion_table(
    human: Sequence[float], judge: Sequence[float], points: Sequence[int]
) -> NDArray[np.float64]:
    """Counts of (human verdict, judge verdict) pairs; rows are the human's verdicts."""
    k = len(points)
    codes = _codes(human, judge, points)
    return np.bincount(codes, minlength=k * k).reshape(k, k).astype(np.float64)


def cohen_kappa(
    human: Sequence[float], judge: Sequence[float], points: Sequence[int], weights: Weights = None
) -> float | None:
    """Cohen's kappa of two raters over the categories ``points``; ``None`` when undefined.

    Equal to ``sklearn.metrics.cohen_kappa_score(human, judge, labels=points,
    weights=weights)``. Undefined (``None``) with no pairs, or when chance agreement is
    already perfect (both raters always gave one and the same verdict).
    """
    if not human:
        return None
    w = _weight_matrix(len(points), weights)
    value = float(_kappas(confusion_table(human, judge, points), w))
    return None if np.isnan(value) else value


class KappaResult:
    """Kappa, its bootstrap interval, and the confusion table it came from."""

    def __init__(
        self,
        value: float | None,
        low: float | None,
        high: float | None,
        confusion: NDArray[np.float64],
        n: int,
    ) -> None:
        #: The kappa, or ``None`` when undefined.
        self.value = value
        #: Lower end of the bootstrap interval.
        self.low = low
        #: Upper end of the bootstrap interval.
        self.high = high
        #: Rows: the human's verdicts; columns: the judge's, both in scale order.
        self.confusion = confusion
        #: Items with both verdicts.
        self.n = n


def kappa_with_interval(
    human: Sequence[float],
    judge: Sequence[float],
    points: Sequence[int],
    weights: Weights,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> KappaResult:
    """Kappa with a percentile-bootstrap interval (items resampled with replacement, seeded).

    Resamples on which kappa is undefined are left out of the interval.
    """
    k = len(points)
    n = len(human)
    confusion = confusion_table(human, judge, points)
    value = cohen_kappa(human, judge, points, weights)
    if value is None or n < 2:
        return KappaResult(value, None, None, confusion, n)
    w = _weight_matrix(k, weights)
    codes = _codes(human, judge, points)
    rng = np.random.default_rng(seed)
    samples = np.empty(n_resamples)
    for start in range(0, n_resamples, _CHUNK):
        rows = min(_CHUNK, n_resamples - start)
        drawn = codes[rng.integers(0, n, size=(rows, n))]
        drawn += (np.arange(rows) * k * k)[:, None]
        tables = np.bincount(drawn.ravel(), minlength=rows * k * k).reshape(rows, k, k)
        samples[start : start + rows] = _kappas(tables.astype(np.float64), w)
    low, high = aggregate.percentile_interval(samples, confidence)
    return KappaResult(value, low, high, confusion, n)
