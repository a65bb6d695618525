"""Paired bootstrap of two means, for metrics whose aggregate is a mean with its own interval.

``rouge``, ``brier`` and ``ece`` override ``aggregate`` (for their intervals and extras), so
``compare`` resamples them with the paired bootstrap; this module gives them a vectorised one:
the pairs scored on both sides are resampled with replacement (whole clusters with clusters,
a cluster's mean then weighted by its size), both means recomputed on every resample.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from itemscore import ItemScore, ScoreColumn

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["paired_mean_bootstrap", "paired_means", "scored_pairs"]

# Indices drawn per block: about 16 MB of indices and gathered values.
_BLOCK = 1 << 20


def _scored(scores: Sequence[ItemScore | None]) -> NDArray[np.bool_]:
    if isinstance(scores, ScoreColumn):
        return np.frombuffer(bytes(scores.states), dtype=np.uint8) <= ScoreColumn.FAIL
    return np.fromiter(
        (s is not None and s.status.scored for s in scores), dtype=bool, count=len(scores)
    )


def scored_pairs(
    scores_a: Sequence[ItemScore | None],
    scores_b: Sequence[ItemScore | None],
    value: Callable[[ItemScore], float],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """Both sides' values on the items scored on both sides, and those items' positions."""
    both = np.flatnonzero(_scored(scores_a) & _scored(scores_b))
    a = np.fromiter((value(scores_a[i]) for i in both.tolist()), np.float64, both.size)
    b = np.fromiter((value(scores_b[i]) for i in both.tolist()), np.float64, both.size)
    return a, b, both


def _cluster_sums(
    values: Sequence[NDArray[np.float64]], clusters: Sequence[str | None]
) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    codes: dict[Any, int] = {}
    index = np.fromiter(
        (
            codes.setdefault(c if c is not None else (i,), len(codes))
            for i, c in enumerate(clusters)
        ),
        dtype=np.intp,
        count=len(clusters),
    )
    sizes = np.bincount(index, minlength=len(codes)).astype(np.float64)
    sums = [np.bincount(index, weights=v, minlength=len(codes)).astype(np.float64) for v in values]
    return sums, sizes


def _blocks(n: int, n_resamples: int, seed: int) -> Iterator[NDArray[np.int64]]:
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK // max(n, 1))
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - start), n))


def paired_mean_bootstrap(
    values_a: NDArray[np.float64],
    values_b: NDArray[np.float64],
    n_resamples: int,
    seed: int,
    clusters: Sequence[str | None] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Both means on ``n_resamples`` paired resamples (``numpy.random.default_rng(seed)``)."""
    n = values_a.size
    if n == 0:
        empty = np.full(n_resamples, np.nan)
        return empty, empty.copy()
    if clusters is None or all(c is None for c in clusters):
        out_a, out_b = [], []
        for idx in _blocks(n, n_resamples, seed):
            out_a.append(values_a[idx].mean(axis=1))
            out_b.append(values_b[idx].mean(axis=1))
        return np.concatenate(out_a), np.concatenate(out_b)
    (sums_a, sums_b), sizes = _cluster_sums([values_a, values_b], clusters)
    out_a, out_b = [], []
    for idx in _blocks(sizes.size, n_resamples, seed):
        counts = sizes[idx].sum(axis=1)
        out_a.append(sums_a[idx].sum(axis=1) / counts)
        out_b.append(sums_b[idx].sum(axis=1) / counts)
    return np.concatenate(out_a), np.concatenate(out_b)


def paired_means(
    scores_a: Sequence[ItemScore | None],
    scores_b: Sequence[ItemScore | None],
    value: Callable[[ItemScore], float],
    n_resamples: int,
    seed: int,
    clusters: Sequence[str | None] | None,
) -> tuple[float | None, float | None, NDArray[np.float64], NDArray[np.float64]]:
    """What a mean metric's ``paired_bootstrap`` returns: both means and their resamples.

    ``value`` reads an item's value from its score; ``clusters`` (one per item) are picked
    for the pairs scored on both sides.
    """
    a, b, both = scored_pairs(scores_a, scores_b, value)
    picked = None if clusters is None else [clusters[i] for i in both.tolist()]
    samples_a, samples_b = paired_mean_bootstrap(a, b, n_resamples, seed, picked)
    if a.size == 0:
        return None, None, samples_a, samples_b
    return float(a.mean()), float(b.mean()), samples_a, samples_b
