"""Means of values: :func:`mean`, :func:`geomean`, :func:`percentiles`, and the Wilson bound.

The interval of a mean comes from the table of interval methods (:mod:`._intervals`): a
spread ``m + q·se`` (normal, t) or a bootstrap of the mean (percentile, BCa). Bounded values
that show no spread get :func:`wilson_bound`'s interval instead of one of zero width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from .._exceptions import ConfigError
from . import _intervals
from ._bootstrap import _bootstrap_means
from ._estimate import EMPTY, Estimate
from ._intervals import _Num, _wilson_score, _z
from ._intervals import check as _check_method
from ._numbers import (
    _as_values,
    _check_bounds,
    _check_confidence,
    _check_positive_int,
    _check_qs,
    _check_seed,
    _check_within,
    _plural,
)
from ._tally import Tally

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: Interval methods of :func:`mean`; the first is the default.
MEAN_METHODS: tuple[str, ...] = _intervals.names("mean")
#: Interval methods of :func:`geomean`; the first is the default.
GEOMEAN_METHODS: tuple[str, ...] = _intervals.names("geomean")

#: ``auto`` for a mean: Student t below this many values, whatever the data (the bootstrap
#: then sees too few distinct resamples: BCa covers 84% of normal means at n = 5, t 96%);
#: from here on t when the mean is at least :data:`AUTO_BOUND_SES` standard errors from both
#: bounds, BCa bootstrap otherwise.
AUTO_T_FROM = 30
#: See :data:`AUTO_T_FROM`.
AUTO_BOUND_SES = 3.0


# --------------------------------------------------------------------------- means


def mean(
    values: Sequence[float] | NDArray[np.float64],
    method: str = "normal",
    confidence: float = 0.95,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """The arithmetic mean of ``values`` with a confidence interval.

    Methods, with ``m`` the mean and ``se = s / sqrt(n)`` its standard error (``s`` the sample
    standard deviation, ``ddof=1``):

    - ``"normal"`` (default): ``m ± z·se``, as ``statsmodels`` ``DescrStatsW(x).zconfint_mean``.
    - ``"t"``: ``m ± t(n-1)·se``, as ``scipy.stats.t.interval(confidence, n - 1, m, se)``;
      wider than normal for small samples.
    - ``"bootstrap"``: the percentile bootstrap: ``n_resamples`` resamples with replacement
      drawn by ``numpy.random.default_rng(seed)``, the interval between the
      ``(1 - confidence)/2`` and ``(1 + confidence)/2`` percentiles of their means. Resamples
      are drawn from the values in ascending order, or as multinomial counts of the distinct
      values when there are at most ``n / 8`` of them (the same distribution), so the same
      values in any order, seed and ``n_resamples`` give the same interval. Resamples are
      drawn in blocks, so memory stays bounded (about 16 MB) for any ``n``; time grows as
      ``n · n_resamples`` (``d · n_resamples`` for ``d`` distinct values).

    Values whose sum would overflow (``mean([1e308, 1e308])``) are scaled by their largest
    magnitude first: a finite input always has a finite mean.

    **Bounded values.** With ``bounds=(lo, hi)`` (every value lies in it, as token F1 in [0, 1]),
    the interval is clipped to the bounds and never has zero width: when the values do not vary
    (the sample variance is 0, which includes ``n = 1``), no method can see any spread, so the
    interval is the Wilson score interval of the share ``(m - lo) / (hi - lo)`` with ``n``
    trials, mapped back to ``[lo, hi]``, and ``method`` is ``"wilson"``. A variable in [0, 1]
    with mean ``p`` has a variance of at most ``p(1 - p)``, the binomial one, so this bound is
    never narrower than what the data allow: 50 values of 1.0 give [0.929, 1], as 50 of 50 ok
    items do for a ratio.

    Args:
        values: The scored values; every one must be finite.
        method: One of :data:`MEAN_METHODS`.
        confidence: Confidence level of the interval, in (0, 1).
        seed: Seed of the bootstrap's random generator (non-negative); unused otherwise.
        n_resamples: Number of bootstrap resamples; unused otherwise.
        bounds: The range ``(lo, hi)`` every value lies in, or ``None`` (unbounded).

    Returns:
        ``Estimate(value=m, low, high, n=len(values), method=method, confidence=confidence)``;
        ``value=None`` when ``values`` is empty. Without ``bounds``, no interval
        (``low = high = None``) for a single value, whatever the method: one value says nothing
        about the spread; with ``bounds``, the Wilson bound above.

    Raises:
        ConfigError: ``method``, ``confidence``, ``seed`` or ``n_resamples`` is not valid (a
            ``ValueError``).
        ValueError: ``values`` is not one-dimensional or holds NaN or infinity.
        TypeError: ``values`` does not hold numbers.
    """
    method = _check_method(method, "mean")
    confidence = _check_confidence(confidence)
    seed = _check_seed(seed)
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    checked_bounds = _check_bounds(bounds)
    x = _as_values(values)
    if checked_bounds is not None:
        _check_within(x, checked_bounds)
    tally = Tally.of(x)
    return tally_mean(
        tally, method, confidence, bounds=checked_bounds, seed=seed, n_resamples=n_resamples
    )


def tally_mean(
    tally: Tally,
    method: str,
    confidence: float,
    *,
    bounds: tuple[float, float] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
) -> Estimate:
    """:func:`mean` of the values ``tally`` counts (arguments checked, values within bounds)."""
    n = tally.n
    if n == 0:
        return Estimate(value=None, n=0, method=method, confidence=confidence)
    m, sd = tally.mean_sd()
    if bounds is not None and sd == 0.0:
        return _wilson_bound(m, float(n), n, bounds, confidence)
    name = method
    if method == "auto":
        method, name = _auto_mean_method(m, sd, n, bounds)
    if n == 1:
        return Estimate(value=m, n=1, method=name, confidence=confidence)
    entry = _intervals.METHODS[method]
    low: float | None
    high: float | None
    if entry.bootstrap is not None:
        scale = tally.scale
        means = _bootstrap_means(tally.values / scale, tally.counts, n_resamples, seed) * scale
        low, high = entry.bootstrap(tally.values, tally.counts, m, means, confidence)
    else:
        low, high = _spread_bounds(m, sd / math.sqrt(n), n, method, confidence)
    if bounds is not None and low is not None and high is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(value=m, low=low, high=high, n=n, method=name, confidence=confidence)


def _auto_mean_method(
    m: float, sd: float, n: int, bounds: tuple[float, float] | None
) -> tuple[str, str]:
    """``auto``'s method for a mean, and the name with its reason.

    Below :data:`AUTO_T_FROM` values, Student t: simulated at n = 5, 10, 20 it covers
    95.6/94.9/94.6% of normal means and 89.8/89.0/91.4% of exponential ones, where BCa
    covers 83.9/90.7/92.6% and 81.9/86.4/90.5% (docs/aggregation.md); a bootstrap of a
    handful of values has too few distinct resamples to find the tails. From
    :data:`AUTO_T_FROM` values, t when the mean lies at least :data:`AUTO_BOUND_SES`
    standard errors inside the bounds (where t's symmetric interval fits); otherwise the BCa
    bootstrap, which follows the skew of values piled at a bound (50 values, each 1 with
    probability 0.9: t covers 85%, BCa 99%).
    """
    if n < AUTO_T_FROM:
        return "t", f"t (auto: n = {n} < {AUTO_T_FROM})"
    if bounds is not None:
        se = sd / math.sqrt(n)
        room = min(m - bounds[0], bounds[1] - m)
        if room < AUTO_BOUND_SES * se:
            return "bca", f"bca (auto: mean within {AUTO_BOUND_SES:g} se of a bound)"
    return "t", f"t (auto: n = {n} >= {AUTO_T_FROM})"


def wilson_bound(
    value: float,
    n: float,
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> Estimate:
    """The interval of a bounded statistic whose sample shows no spread.

    The Wilson score interval of the share ``(value - lo) / (hi - lo)`` over ``n`` trials,
    mapped back to ``[lo, hi]``: what :func:`mean` falls back to when bounded values do not
    vary, and what a metric with its own aggregate can use when its bootstrap collapses to a
    point (F1 of one item, or of items that are all right). ``n`` may be fractional (an
    effective sample size).

    Raises:
        ConfigError: ``confidence`` or ``bounds`` is not valid, or ``n`` is not positive.
    """
    confidence = _check_confidence(confidence)
    checked = _check_bounds(bounds)
    assert checked is not None
    if not n > 0:
        raise ConfigError(f"`n` ({n!r}) must be positive.")
    return _wilson_bound(float(value), float(n), round(n), checked, confidence)


def _wilson_bound(
    m: float,
    n_eff: float,
    n: int,
    bounds: tuple[float, float],
    confidence: float,
    extra: Mapping[str, float] | None = None,
    *,
    z: float | None = None,
    method: str = "wilson",
) -> Estimate:
    """The Wilson interval of the share ``(m - lo) / (hi - lo)`` over ``n_eff`` trials.

    The interval of a bounded mean that shows no spread (see :func:`mean`); ``z`` is the
    quantile (default: the normal one of ``confidence``).
    """
    lo, hi = bounds
    width = hi - lo
    p = min(max((m - lo) / width, 0.0), 1.0)
    quantile = _z(confidence) if z is None else z
    low, high = _wilson_score(p * n_eff, n_eff, quantile, math.sqrt)
    low, high = min(max(low, 0.0), p), max(min(high, 1.0), p)
    return Estimate(
        value=m,
        low=lo + low * width,
        high=lo + high * width,
        n=n,
        method=method,
        confidence=confidence,
        extra=extra or EMPTY,
    )


def _spread_bounds(m: _Num, se: _Num, n: int, method: str, confidence: float) -> tuple[_Num, _Num]:
    """``m + q·se`` for the quantiles ``q`` of a spread method (normal, t) of the table."""
    quantiles = _intervals.METHODS[method].spread
    assert quantiles is not None  # checked: a mean or geomean method without a bootstrap
    q_low, q_high = quantiles(n - 1, confidence)
    return m + q_low * se, m + q_high * se


def geomean(
    values: Sequence[float] | NDArray[np.float64],
    method: str = "normal",
    confidence: float = 0.95,
) -> Estimate:
    """The geometric mean of positive ``values`` with a confidence interval.

    The value is ``exp(mean(log x))``, as ``scipy.stats.gmean``. The interval is the normal
    (``"normal"``) or Student t (``"t"``) interval of the mean of ``log x``, exponentiated, so it
    is asymmetric around the value and always positive.

    Args:
        values: The scored values; every one must be finite and positive.
        method: One of :data:`GEOMEAN_METHODS`.
        confidence: Confidence level of the interval, in (0, 1).

    Returns:
        ``Estimate(value, low, high, n=len(values), method=method, confidence=confidence)``;
        ``value=None`` when ``values`` is empty, no interval for a single value.

    Raises:
        ConfigError: ``method`` or ``confidence`` is not valid (a ``ValueError``).
        ValueError: ``values`` is not one-dimensional, holds NaN or infinity, or holds a value
            that is zero or negative (the message says how many, and the first).
        TypeError: ``values`` does not hold numbers.
    """
    method = _check_method(method, "geomean")
    confidence = _check_confidence(confidence)
    name = method
    if method == "auto":
        method, name = "t", "t (auto: logs of a geometric mean)"
    x = _as_values(values)
    bad = np.flatnonzero(x <= 0)
    if bad.size:
        raise ValueError(
            f"`values` holds {_plural(bad.size, 'value')} <= 0 and the geometric mean needs "
            f"positive values; the first is {float(x[bad[0]])!r} at index {int(bad[0])}."
        )
    n = int(x.size)
    if n == 0:
        return Estimate(value=None, n=0, method=name, confidence=confidence)
    logs = np.log(x)
    m = float(np.mean(logs))
    value = math.exp(m)
    if n == 1:
        return Estimate(value=value, n=1, method=name, confidence=confidence)
    se = float(np.std(logs, ddof=1)) / math.sqrt(n)
    log_low, log_high = _spread_bounds(m, se, n, method, confidence)
    return Estimate(
        value=value,
        low=math.exp(log_low),
        high=math.exp(log_high),
        n=n,
        method=name,
        confidence=confidence,
    )


# --------------------------------------------------------------------------- percentiles


def percentiles(
    values: Sequence[float] | NDArray[np.float64], qs: Sequence[float] = (50, 90, 99)
) -> Estimate:
    """Percentiles of ``values`` (latency, cost, length...).

    Percentiles are numpy's default (``method="linear"``): the value at rank
    ``q/100 · (n - 1)``, interpolated linearly between neighbours.

    Args:
        values: The scored values; every one must be finite.
        qs: Percentiles to compute, each between 0 and 100.

    Returns:
        ``Estimate(value, n=len(values), method="none", extra={"p50": ..., "p90": ...})``:
        ``value`` is the percentile ``qs[0]``; ``extra`` holds every one, keyed
        ``f"p{q:g}"``. No interval. An empty ``values`` gives ``value=None`` and no extra.

    Raises:
        ConfigError: ``qs`` is empty or holds a value outside [0, 100] (a ``ValueError``).
        ValueError: ``values`` is not one-dimensional or holds NaN or infinity.
        TypeError: ``values`` or ``qs`` does not hold numbers.
    """
    checked = _check_qs(qs)
    x = _as_values(values)
    if x.size == 0:
        return Estimate(value=None, n=0)
    results = np.percentile(x, checked)
    extra = {f"p{q:g}": float(r) for q, r in zip(checked, results)}
    return Estimate(value=float(results[0]), n=int(x.size), extra=MappingProxyType(extra))
