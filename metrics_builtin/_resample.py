"""Resampling of per-item sufficient statistics, exactly as sacrebleu's significance tests do.

sacrebleu (``sacrebleu/significance.py``) draws bootstrap resamples with
``numpy.random.default_rng(seed).choice(n, size=(n_resamples, n))``, sums each resample's
sentence statistics in float32 (``np.array(stats, dtype="float32")[idx].sum(0)``) and scores
the sums; approximate randomisation draws ``rng.integers(2, size=(n_trials, n), dtype=bool)``
and swaps the two systems' statistics where it is true (``pos @ a + ~pos @ b``). The functions
here draw the same numbers from the same generator, in blocks of bounded memory, and hand back
the same sums:

- integer statistics (BLEU's and chrF's counts) are summed exactly (counts of each item in a
  resample, times the statistics) and cast to float32, which is what sacrebleu's float32 sums
  are while every sum stays below 2**24 (16.7 million n-grams or characters);
- other statistics (TER's average reference lengths) are gathered and summed in float32 in the
  order of the draws, as sacrebleu sums them.

Clusters (``ItemResult.cluster``) are resampled whole: the statistics of a cluster's items are
summed first and the cluster is the unit drawn (or swapped).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "ar_p_value",
    "bootstrap_sums",
    "by_cluster",
    "estimate_ci",
    "order_statistic_interval",
    "paired_bs_p_value",
    "swapped_sums",
]

# Elements per block: the indices (or selectors) and what is gathered stay near 16 MB.
_BLOCK = 1 << 21


def by_cluster(
    stats: NDArray[np.generic], clusters: Sequence[str | None] | None
) -> NDArray[np.generic]:
    """``stats`` (one row per item) summed per cluster, in order of first appearance.

    An item whose cluster is ``None`` is a cluster of its own. Without clusters, ``stats``.
    """
    if clusters is None or all(c is None for c in clusters):
        return stats
    index: dict[str, int] = {}
    codes = np.empty(len(clusters), dtype=np.intp)
    n = 0
    for i, name in enumerate(clusters):
        if name is None:
            codes[i] = n
            n += 1
        else:
            code = index.get(name)
            if code is None:
                code = index[name] = n
                n += 1
            codes[i] = code
    out = np.zeros((n, stats.shape[1]), dtype=stats.dtype)
    np.add.at(out, codes, stats)
    return out


def _is_integer(stats: NDArray[np.generic]) -> bool:
    return stats.dtype.kind in "iub"


def bootstrap_sums(
    stats: Sequence[NDArray[np.generic]], n_resamples: int, seed: int
) -> Iterator[list[NDArray[np.float32]]]:
    """For each block of resamples, each system's float32 sums, ``(rows, k)`` each.

    All systems (``stats``, one ``(n, k)`` array each, rows aligned) are resampled with the
    same indices, as sacrebleu's paired bootstrap resamples the baseline and the system.
    """
    n = stats[0].shape[0]
    rng = np.random.default_rng(seed)
    integer = all(_is_integer(s) for s in stats)
    exact = [np.asarray(s, dtype=np.float64) for s in stats] if integer else []
    as32 = [] if integer else [np.asarray(s, dtype=np.float32) for s in stats]
    width = max(s.shape[1] for s in stats)
    rows = max(1, _BLOCK // (n * (1 if integer else width)))
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        idx = rng.choice(n, size=(size, n), replace=True)
        if integer:
            offsets = (np.arange(size) * n)[:, np.newaxis]
            counts = np.bincount((idx + offsets).ravel(), minlength=size * n)
            weights = counts.reshape(size, n).astype(np.float64)
            yield [(weights @ s).astype(np.float32) for s in exact]
        else:
            yield [s[idx].sum(axis=1, dtype=np.float32) for s in as32]


def swapped_sums(
    stats_a: NDArray[np.generic], stats_b: NDArray[np.generic], n_trials: int, seed: int
) -> Iterator[tuple[NDArray[np.generic], NDArray[np.generic]]]:
    """Approximate randomisation trials: per block, the two pseudo-systems' summed statistics.

    Trial ``t`` swaps item ``i`` between the systems where ``pos[t, i]`` is true, with ``pos``
    drawn as sacrebleu draws it; the sums are ``pos @ a + ~pos @ b`` and ``~pos @ a + pos @ b``
    (int64 for integer statistics, float64 otherwise). Blocks hold a multiple of 32 trials, so
    that the boolean draws come out of the generator exactly as one draw of them all would.
    """
    n = stats_a.shape[0]
    rng = np.random.default_rng(seed)
    integer = _is_integer(stats_a) and _is_integer(stats_b)
    dtype = np.int64 if integer else np.float64
    a = np.asarray(stats_a, dtype=dtype)
    b = np.asarray(stats_b, dtype=dtype)
    rows = max(32, (_BLOCK // max(n, 1)) // 32 * 32)
    if integer:
        # One product in float64 (BLAS; exact, the sums being whole numbers far below 2^53)
        # instead of four integer products, which numpy does without BLAS: seconds a compare.
        diff = a.astype(np.float64) - b.astype(np.float64)
        total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    for start in range(0, n_trials, rows):
        size = min(rows, n_trials - start)
        pos = rng.integers(2, size=(size, n), dtype=bool)
        if integer:
            first = np.rint(pos.astype(np.float64) @ diff).astype(np.int64) + total_b
            yield first, total_a + total_b - first
            continue
        neg = ~pos
        yield pos @ a + neg @ b, neg @ a + pos @ b


def estimate_ci(scores: NDArray[np.floating[Any]]) -> tuple[float, float]:
    """sacrebleu's ``estimate_ci``: the mean of the scores and half their 95% spread.

    The bounds are the order statistics ``n // 40`` and ``n - n // 40 - 1`` of the sorted
    scores; the half-width is half their distance.
    """
    ordered = np.sort(scores)
    n = ordered.size
    lower = n // 40
    low, high = ordered[lower], ordered[n - lower - 1]
    # In the scores' own dtype, as sacrebleu computes them (float32 for chrF and TER).
    return float(ordered.mean()), float(0.5 * (high - low))


def order_statistic_interval(
    scores: NDArray[np.float64], confidence: float
) -> tuple[float | None, float | None]:
    """sacrebleu's interval at any level: two order statistics of the sorted scores.

    They are ``floor(n (1 - confidence) / 2)`` and its mirror; at 95% these are the bounds
    :func:`estimate_ci` takes its half-width from.
    """
    finite = np.sort(scores[np.isfinite(scores)])
    n = finite.size
    if n == 0:
        return None, None
    lower = int(np.floor(n * (1.0 - confidence) / 2.0 + 1e-9))
    return float(finite[lower]), float(finite[n - lower - 1])


def paired_bs_p_value(
    scores_a: NDArray[np.float64], scores_b: NDArray[np.float64], observed: float
) -> float:
    """sacrebleu's paired bootstrap p-value (Koehn 2004, as Moses computes it).

    The absolute resampled differences, centred on their mean, are compared with the observed
    absolute difference: ``(#{centred > observed} + 1) / (n + 1)``.
    """
    differences = np.abs(scores_b - scores_a)
    centred = differences - differences.mean()
    return _p_value(centred, observed)


def ar_p_value(
    scores_a: NDArray[np.float64], scores_b: NDArray[np.float64], observed: float
) -> float:
    """sacrebleu's approximate randomisation p-value: ``(#{|a - b| > observed} + 1) / (n + 1)``."""
    return _p_value(np.abs(scores_a - scores_b), observed)


def _p_value(statistics: NDArray[np.float64], observed: float) -> float:
    # multeval's rule (sacrebleu cites it): a strict ">", and +1 on both sides so that the
    # test never rejects more often than its level.
    count = int(np.sum(statistics > observed))
    return (count + 1) / (statistics.size + 1)
