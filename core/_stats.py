"""Paired tests and intervals behind :func:`itemscore.compare`, on plain arrays and counts.

Each function is one textbook procedure with its reference in the docstring; the test suite
checks each against statsmodels or scipy (or the worked example of the paper) to 1e-10.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from .aggregate import _closed_form, _t_bounds, _z

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ADJUSTMENTS",
    "adjust_pvalues",
    "mcnemar_exact",
    "mde",
    "newcombe_paired",
    "paired_t",
    "t_two_sided_p",
]

Adjustment = Literal["holm", "bh", "none"]
#: Multiple-comparison adjustments of :func:`adjust_pvalues`; the first is the default.
ADJUSTMENTS: tuple[str, ...] = ("holm", "bh", "none")

#: Power the minimum detectable effect is computed for.
POWER = 0.80


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs ``b`` and ``c``.

    Under the null, each of the ``b + c`` discordant pairs goes either way with probability
    1/2: ``p = min(1, 2 · P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``, as
    statsmodels ``mcnemar(table, exact=True)``. No discordant pair gives ``p = 1``.
    """
    n = b + c
    if n == 0:
        return 1.0
    from scipy.special import bdtr

    return float(min(1.0, 2.0 * bdtr(min(b, c), n, 0.5)))


def _wilson(k: float, n: float, confidence: float) -> tuple[float, float]:
    low, high = _closed_form(k, n, "wilson", _z(confidence), math.sqrt)
    p = k / n
    return min(max(low, 0.0), p), max(min(high, 1.0), p)


def newcombe_paired(
    both: int, only_first: int, only_second: int, neither: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """Newcombe's hybrid score interval for a paired difference of proportions (1998, method 10).

    The four cells count the pairs where both succeed, only the first, only the second, or
    neither. With ``p1 = (both + only_first) / n``, ``p2 = (both + only_second) / n``,
    ``(l1, u1)`` and ``(l2, u2)`` their Wilson intervals and ``φ`` the correlation of the two
    outcomes (``(AD - BC) / sqrt(EFGH)``, moved to 0 by ``n/2`` when positive, 0 when a
    margin is empty), the interval for ``θ = p1 - p2`` is

        ``θ - sqrt((p1-l1)² - 2φ(p1-l1)(u2-p2) + (u2-p2)²)``,
        ``θ + sqrt((p2-l2)² - 2φ(p2-l2)(u1-p1) + (u1-p1)²)``.

    Newcombe, R. G. (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. Statistics in Medicine 17, 2635-2650.

    Returns:
        ``(θ, low, high)``.
    """
    a, b, c, d = both, only_first, only_second, neither
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = _wilson(a + b, n, confidence)
    l2, u2 = _wilson(a + c, n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if margins > 0:
        cross = a * d - b * c
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    theta = p1 - p2
    low = theta - math.sqrt(
        max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    )
    high = theta + math.sqrt(
        max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    )
    return theta, max(low, -1.0), min(high, 1.0)


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of a t statistic with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(2.0 * stdtr(df, -abs(t)))


def paired_t(
    differences: NDArray[np.float64], confidence: float = 0.95
) -> tuple[float, float, float, float, float]:
    """Paired t interval and two-sided p-value of the mean of ``differences``.

    ``d̄ ± t(n-1) · s_d / sqrt(n)`` and ``p = 2 · P(T > |d̄ / (s_d / sqrt(n))|)``, as
    ``scipy.stats.ttest_rel(b, a)`` (``n >= 2`` and ``s_d > 0``).

    Returns:
        ``(mean, se, low, high, p)``.
    """
    n = differences.size
    mean = float(differences.mean())
    se = float(differences.std(ddof=1)) / math.sqrt(n)
    t_low, t_high = _t_bounds(n - 1, confidence)
    return mean, se, mean + t_low * se, mean + t_high * se, t_two_sided_p(mean / se, n - 1)


def mde(se: float, confidence: float, df: float | None = None, power: float = POWER) -> float:
    """The minimum detectable effect: the true difference a two-sided test finds with ``power``.

    ``mde = (q(1 - alpha/2) + q(power)) · se`` with ``alpha = 1 - confidence``, ``se`` the standard
    error of the paired difference and ``q`` the quantiles of the test's reference
    distribution: Student t with ``df`` degrees of freedom, or the normal when ``df`` is None.
    """
    if df is None:
        from statistics import NormalDist

        return (_z(confidence) + NormalDist().inv_cdf(power)) * se
    from scipy.special import stdtrit

    return (_t_bounds(int(df), confidence)[1] + float(stdtrit(df, power))) * se


def adjust_pvalues(pvalues: ArrayLike, method: str = "holm") -> NDArray[np.float64]:
    """p-values adjusted for multiple comparisons, as statsmodels ``multipletests``.

    - ``"holm"``: Holm's step-down: the ``i``-th smallest of ``m`` becomes
      ``max_{j<=i} min(1, (m - j + 1) · p_(j))``; controls the family-wise error rate.
    - ``"bh"``: Benjamini-Hochberg: ``min_{j>=i} min(1, m · p_(j) / j)``; controls the
      false discovery rate.
    - ``"none"``: the p-values as they are.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0 or method == "none":
        return np.array(p, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    else:
        scaled = ranked * m / np.arange(1, m + 1)
        adjusted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = adjusted
    return out


def percentile_p(diffs: NDArray[np.float64]) -> float:
    """Two-sided bootstrap p-value of ``difference = 0``: twice the smaller tail share.

    ``p = min(1, 2 · min(1 + #(d <= 0), 1 + #(d >= 0)) / (B + 1))`` over the ``B`` resampled
    differences: below ``alpha`` exactly when 0 lies outside the percentile interval (up to the
    ``+1``, which keeps ``p`` above 0 for a finite number of resamples).
    """
    b = diffs.size
    below = int(np.count_nonzero(diffs <= 0.0))
    above = int(np.count_nonzero(diffs >= 0.0))
    return min(1.0, 2.0 * (1 + min(below, above)) / (b + 1))


def cluster_codes(clusters: Sequence[str | None]) -> tuple[NDArray[np.intp], int]:
    """Integer codes per item and the number of clusters (``None``: a cluster of its own)."""
    from .aggregate import _cluster_codes

    return _cluster_codes(clusters, len(clusters))
