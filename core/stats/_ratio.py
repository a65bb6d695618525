"""Proportions: :func:`ratio` for one ``k / n``, :func:`ratio_interval` for many at once.

Both read their bounds from the table of interval methods (:mod:`._intervals`); ``auto``
picks a method by the number of trials (:func:`auto_ratio_method`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _intervals
from ._estimate import Estimate
from ._intervals import check as _check_method
from ._intervals import level, ratio_bounds
from ._numbers import _are, _as_counts, _check_confidence, _check_count, _plural

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: Interval methods of :func:`ratio` and :func:`ratio_interval` (the table of
#: :mod:`itemscore.stats._intervals` when the module was imported); the first is the default.
RATIO_METHODS: tuple[str, ...] = _intervals.names("ratio")

#: ``auto`` for a proportion: the exact mid-p interval below this many trials...
AUTO_MIDP_BELOW = 15
#: ...Jeffreys below this many, Wilson from here on (Brown, Cai and DasGupta 2001).
AUTO_WILSON_FROM = 40


def ratio(k: int, n: int, method: str = "wilson", confidence: float = 0.95) -> Estimate:
    """The proportion ``k / n`` with a confidence interval.

    For a metric, ``k`` counts the items scored ok and ``n`` those scored ok or fail; skipped
    items and errors are in neither.

    Methods, with ``p = k / n`` and ``z`` the two-sided normal quantile of ``confidence``:

    - ``"wilson"`` (default): the score interval,
      ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``.
    - ``"normal"``: the Wald interval ``p ± z·sqrt(p(1-p)/n)``; degenerate at ``k = 0`` and
      ``k = n``, poor near 0 and 1 and for small ``n``.
    - ``"clopper-pearson"``: the exact interval from beta quantiles; conservative. The lower end
      is 0 at ``k = 0`` and the upper end 1 at ``k = n``.
    - ``"jeffreys"``: the central interval of the Beta(k + 1/2, n - k + 1/2) posterior.
    - ``"agresti-coull"``: the Wald interval around ``(k + z²/2) / (n + z²)`` with ``n + z²``
      trials.

    The numbers agree with ``statsmodels.stats.proportion.proportion_confint`` (methods
    ``"wilson"``, ``"normal"``, ``"beta"``, ``"jeffreys"``, ``"agresti_coull"``) to 1e-12, with
    two guarantees: every interval lies within [0, 1] (statsmodels clips Wilson, Wald and
    Agresti-Coull to [0, 1] too, and itemscore clips them the same way) and every interval
    contains ``k / n``, which statsmodels does not guarantee. The second only changes Jeffreys
    at ``k = 0`` (lower end 0 instead of a positive beta quantile) and ``k = n`` (upper end 1),
    the boundary modification of Brown, Cai and DasGupta (2001), and absorbs rounding of one
    ulp at the edges of Wilson.

    Args:
        k: Successes, between 0 and ``n``.
        n: Trials (scored items); 0 gives ``value=None`` and no interval.
        method: One of :data:`RATIO_METHODS`.
        confidence: Confidence level of the interval, in (0, 1).

    Returns:
        ``Estimate(value=k / n, low, high, n=n, method=method, confidence=confidence)``.

    Raises:
        ConfigError: ``method`` or ``confidence`` is not valid (a ``ValueError``).
        ValueError: ``n`` is negative, or ``k`` is not between 0 and ``n``.
        TypeError: ``k`` or ``n`` is not an integer.
    """
    method = _check_method(method, "ratio")
    confidence = _check_confidence(confidence)
    k = _check_count(k, "k")
    n = _check_count(n, "n")
    if n < 0:
        raise ValueError(f"`n` ({n}) must be a non-negative integer.")
    if not 0 <= k <= n:
        raise ValueError(f"`k` ({k}) must be between 0 and `n` ({n}).")
    if n == 0:
        return Estimate(value=None, n=0, method=method, confidence=confidence)

    p = k / n
    name = method
    if method == "auto":
        method, name = auto_ratio_method(n)
    low, high = ratio_bounds(method)(float(k), float(n), level(confidence))
    low = min(max(low, 0.0), p)
    high = max(min(high, 1.0), p)
    return Estimate(value=p, low=low, high=high, n=n, method=name, confidence=confidence)


def auto_ratio_method(n: float) -> tuple[str, str]:
    """The interval method ``"auto"`` takes for a proportion over ``n`` trials, and its name.

    Below :data:`AUTO_MIDP_BELOW` trials the exact mid-p interval, below
    :data:`AUTO_WILSON_FROM` Jeffreys, then Wilson: the choice Brown, Cai and DasGupta (2001)
    recommend, checked here on the grid n = 5...1000, p = 0.01...0.99 (docs/aggregation.md).
    The method depends on ``n`` only, never on ``k``: a family of intervals that switched
    method with ``k`` would not be monotone in ``k``, and its coverage dips (to 93.3% for
    Wilson from ``5 <= k <= n - 5`` and Jeffreys elsewhere).

    Returns:
        ``(method, name)``: the method, and the name the estimate records, with the reason,
        e.g. ``("jeffreys", "jeffreys (auto: n = 23 < 40)")``.
    """
    shown = f"{int(n)}" if float(n).is_integer() else f"{n:.1f}"
    if n < AUTO_MIDP_BELOW:
        return "mid-p", f"mid-p (auto: n = {shown} < {AUTO_MIDP_BELOW})"
    if n < AUTO_WILSON_FROM:
        return "jeffreys", f"jeffreys (auto: n = {shown} < {AUTO_WILSON_FROM})"
    return "wilson", f"wilson (auto: n = {shown} >= {AUTO_WILSON_FROM})"


def ratio_interval(
    k: ArrayLike, n: ArrayLike, method: str = "wilson", confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Intervals for many proportions ``k / n`` at once, element by element.

    The formulas, the clipping to [0, 1] and the containment of ``k / n`` are those of
    :func:`ratio`. One Wilson call over 10,000 groups costs about as much as 35 scalar calls.

    Args:
        k: Successes; any shape that broadcasts against ``n``; integer values.
        n: Trials; integer values; where ``n == 0`` both bounds are NaN.
        method: One of :data:`RATIO_METHODS`.
        confidence: Confidence level of the intervals, in (0, 1).

    Returns:
        ``(low, high)``: two float64 arrays of the broadcast shape of ``k`` and ``n``.

    Raises:
        ConfigError: ``method`` or ``confidence`` is not valid (a ``ValueError``).
        ValueError: the shapes do not broadcast, an ``n`` is negative or a ``k`` is not between
            0 and its ``n``.
        TypeError: ``k`` or ``n`` holds values that are not integers.
    """
    method = _check_method(method, "ratio")
    confidence = _check_confidence(confidence)
    k_a = _as_counts(k, "k")
    n_a = _as_counts(n, "n")
    try:
        k_a, n_a = np.broadcast_arrays(k_a, n_a)
    except ValueError:
        raise ValueError(
            f"`k` (shape {k_a.shape}) and `n` (shape {n_a.shape}) cannot be broadcast together."
        ) from None
    bad = np.flatnonzero(n_a < 0)
    if bad.size:
        raise ValueError(
            f"`n` must be non-negative; {_plural(bad.size, 'value')} {_are(bad.size)} not, "
            f"the first is {int(n_a.flat[bad[0]])} at flat index {int(bad[0])}."
        )
    bad = np.flatnonzero((k_a < 0) | (k_a > n_a))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"`k` must be between 0 and `n`; {_plural(bad.size, 'pair')} {_are(bad.size)} not, "
            f"the first is `k` ({int(k_a.flat[i])}) with `n` ({int(n_a.flat[i])}) at flat index "
            f"{i}."
        )

    empty = n_a == 0
    n_s = np.where(empty, 1.0, n_a)  # any positive stand-in: those results become NaN below
    p = k_a / n_s
    if method == "auto":
        low, high = _auto_bounds_array(k_a, n_s, confidence)
    else:
        low, high = ratio_bounds(method, array=True)(k_a, n_s, level(confidence))
    low = np.minimum(np.clip(low, 0.0, 1.0), p)
    high = np.maximum(np.clip(high, 0.0, 1.0), p)
    # np.where (not item assignment) so that scalar inputs give 0-d arrays, not numpy scalars.
    return (
        np.where(empty, np.nan, low).astype(np.float64, copy=False),
        np.where(empty, np.nan, high).astype(np.float64, copy=False),
    )


def _auto_bounds_array(
    k: NDArray[np.float64], n: NDArray[np.float64], confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``auto``'s bounds over arrays: each element by the method its ``n`` takes."""
    low = np.empty(np.broadcast(k, n).shape)
    high = np.empty_like(low)
    k, n = np.broadcast_arrays(k, n)
    choice = np.where(n < AUTO_MIDP_BELOW, 0, np.where(n < AUTO_WILSON_FROM, 1, 2))
    for code, method in enumerate(("mid-p", "jeffreys", "wilson")):
        where = choice == code
        if where.any():
            bounds = ratio_bounds(method, array=True)
            low[where], high[where] = bounds(k[where], n[where], level(confidence))
    return low, high
