"""Seeded resampling: the bootstrap means of a sample, resampled counts, percentile intervals.

The bootstrap draws in blocks of :data:`_BOOTSTRAP_BLOCK` elements, so memory stays bounded
whatever the sample size; the same values and seed give the same resamples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._intervals import _percentile_bounds
from ._numbers import _as_counts, _check_confidence, _check_positive_int, _check_seed

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

# Elements (indices) drawn per bootstrap block: 2**20 int64 indices plus the gathered float64
# values stay near 16 MB whatever the sample size, instead of n * n_resamples at once.
_BOOTSTRAP_BLOCK = 1 << 20


def _bootstrap_means(
    values: NDArray[np.float64], counts: NDArray[np.int64], n_resamples: int, seed: int
) -> NDArray[np.float64]:
    """The means of ``n_resamples`` resamples of the sample that ``values`` and ``counts`` tally.

    Resamples are drawn with ``numpy.random.default_rng(seed)``: as multinomial counts of the
    distinct values when there are at most ``n / 8`` of them (the same distribution, ``d``
    draws per resample instead of ``n``), otherwise as ``n`` positions among the values in
    ascending order.
    """
    rng = np.random.default_rng(seed)
    n = int(counts.sum())
    means = np.empty(n_resamples, dtype=np.float64)
    if values.size * _COUNTED_ADVANTAGE <= n:
        shares = counts / n
        block = max(1, _BOOTSTRAP_BLOCK // values.size)
        for start in range(0, n_resamples, block):
            stop = min(start + block, n_resamples)
            means[start:stop] = rng.multinomial(n, shares, size=stop - start) @ values / n
        return means
    x = np.repeat(values, counts)
    block = max(1, _BOOTSTRAP_BLOCK // n)
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        rows = stop - start
        if rows * n <= _BOOTSTRAP_BLOCK:
            means[start:stop] = x[rng.integers(0, n, size=(rows, n))].mean(axis=1)
        else:
            # One resample larger than a block: sum it block by block.
            for row in range(start, stop):
                total = 0.0
                for lo in range(0, n, _BOOTSTRAP_BLOCK):
                    size = min(_BOOTSTRAP_BLOCK, n - lo)
                    total += float(x[rng.integers(0, n, size=size)].sum())
                means[row] = total / n
    return means


#: A sample of ``n`` values with at most ``n / 8`` distinct ones is resampled as multinomial
#: counts of its distinct values.
_COUNTED_ADVANTAGE = 8


def resample_counts(
    counts: ArrayLike, n_resamples: int = 2000, *, seed: int = 0
) -> NDArray[np.int64]:
    """Multinomial resamples of cell counts, for bootstrapping metrics built from counts.

    Resampling ``n`` items with replacement and recounting their cells (true positives, false
    positives...) is the same as drawing the cell counts from a multinomial with ``n`` trials
    and the observed proportions, which needs no item-level data. Compute the metric on every
    row, then take :func:`percentile_interval` of the results.

    Args:
        counts: Non-negative integer counts of each cell, one-dimensional.
        n_resamples: Number of resamples (rows).
        seed: Seed of ``numpy.random.default_rng``; the same seed gives the same rows.

    Returns:
        An ``(n_resamples, len(counts))`` int64 array; every row sums to ``sum(counts)``
        (all zeros when the counts are all zero).

    Raises:
        ConfigError: ``n_resamples`` or ``seed`` is not valid (a ``ValueError``).
        ValueError: ``counts`` is not one-dimensional or holds a negative count.
        TypeError: ``counts`` holds values that are not integers.
    """
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    seed = _check_seed(seed)
    cells = _as_counts(counts, "counts")
    if cells.ndim != 1:
        raise ValueError(f"`counts` must be one-dimensional, got shape {cells.shape}.")
    bad = np.flatnonzero(cells < 0)
    if bad.size:
        raise ValueError(
            f"`counts` must be non-negative; the first negative is {int(cells[bad[0]])} "
            f"at index {int(bad[0])}."
        )
    total = int(cells.sum())
    if total == 0:
        return np.zeros((n_resamples, cells.size), dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(total, cells / total, size=n_resamples)
    return np.asarray(draws, dtype=np.int64)


def percentile_interval(
    samples: ArrayLike, confidence: float = 0.95
) -> tuple[float | None, float | None]:
    """The central percentile interval of bootstrap ``samples``.

    The bounds are numpy's linear percentiles at ``(1 - confidence)/2`` and
    ``(1 + confidence)/2``. NaN samples (a metric undefined on some resample, such as 0/0) are
    left out.

    Args:
        samples: The statistic computed on each resample; any shape, flattened.
        confidence: Confidence level of the interval, in (0, 1).

    Returns:
        ``(low, high)`` as floats, or ``(None, None)`` when there is no sample that is not NaN.

    Raises:
        ConfigError: ``confidence`` is not valid (a ``ValueError``).
        TypeError: ``samples`` does not hold numbers.
    """
    confidence = _check_confidence(confidence)
    try:
        values = np.asarray(samples, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`samples` must hold numbers: {exc}.") from None
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None, None
    return _percentile_bounds(values, confidence)
