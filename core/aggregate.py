"""Aggregates with confidence intervals: the statistics every metric shares.

Every function returns an :class:`~itemscore.Estimate` whose numbers are plain Python floats:

- :func:`ratio` -- a proportion ``k / n`` (ok among ok + fail) with a Wilson, Wald ("normal"),
  Clopper-Pearson, Jeffreys or Agresti-Coull interval; :func:`ratio_interval` is the same
  computation over arrays, for many groups or bootstrap samples at once.
- :func:`mean` -- an arithmetic mean with a normal, Student t or percentile-bootstrap interval.
- :func:`geomean` -- a geometric mean with the normal (or t) interval of the logs, exponentiated.
- :func:`percentiles` -- several percentiles of the values, in ``extra``.
- :func:`cluster_mean` and :func:`cluster_ratio` -- a mean or a proportion of items that come in
  clusters (passages, templates, conversations), with cluster-robust standard errors.
- :func:`macro_mean` -- the unweighted mean over groups of the group means, with an interval.
- :func:`resample_counts` and :func:`percentile_interval` -- building blocks for metrics with a
  custom shape (F1 from a confusion matrix): resample the cells, recompute, take percentiles.

Options (method, confidence level...) are validated before any data is looked at. ``n = 0``
gives ``value=None`` and is handled before any numerical routine is called.

The normal quantile comes from :class:`statistics.NormalDist` (cached per confidence level), so
Wilson, Wald and Agresti-Coull intervals never import scipy; scipy is imported lazily, only by the
methods that need a beta or t quantile. Results agree with ``statsmodels`` and ``scipy.stats`` to
1e-12, except the Jeffreys bounds at ``k = 0`` and ``k = n`` (see :func:`ratio`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import attrs
import numpy as np

from . import _intervals
from ._exceptions import ConfigError
from ._intervals import _percentile_bounds, _t_bounds, _wilson_score, _z, level, ratio_bounds
from ._intervals import check as _check_method
from ._records import EMPTY, Estimate

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "COVERAGE_FLOOR",
    "COVERAGE_MARGIN",
    "GEOMEAN_METHODS",
    "MEAN_METHODS",
    "RATIO_METHODS",
    "auto_ratio_method",
    "cluster_mean",
    "cluster_ratio",
    "coverage_flag",
    "coverage_floor",
    "coverage_receipt",
    "coverage_shortfall",
    "geomean",
    "macro_mean",
    "mean",
    "mean_coverage",
    "percentile_interval",
    "percentiles",
    "ratio",
    "ratio_coverage",
    "ratio_coverage_min",
    "ratio_interval",
    "resample_counts",
    "wilson_bound",
]

#: Interval methods of :func:`ratio` and :func:`ratio_interval` (the table of
#: :mod:`itemscore._intervals` when the module was imported); the first is the default.
RATIO_METHODS: tuple[str, ...] = _intervals.names("ratio")
#: Interval methods of :func:`mean`; the first is the default.
MEAN_METHODS: tuple[str, ...] = _intervals.names("mean")
#: Interval methods of :func:`geomean`; the first is the default.
GEOMEAN_METHODS: tuple[str, ...] = _intervals.names("geomean")

#: ``auto`` for a proportion: the exact mid-p interval below this many trials...
AUTO_MIDP_BELOW = 15
#: ...Jeffreys below this many, Wilson from here on (Brown, Cai and DasGupta 2001).
AUTO_WILSON_FROM = 40
#: ``auto`` for a mean: Student t below this many values, whatever the data (the bootstrap
#: then sees too few distinct resamples: BCa covers 84% of normal means at n = 5, t 96%);
#: from here on t when the mean is at least :data:`AUTO_BOUND_SES` standard errors from both
#: bounds, BCa bootstrap otherwise.
AUTO_T_FROM = 30
#: See :data:`AUTO_T_FROM`.
AUTO_BOUND_SES = 3.0
#: How far below its nominal level a receipt may fall before it is flagged: one point
#: (:func:`coverage_floor`).
COVERAGE_MARGIN = 0.01
#: The floor at the default 95% level (:func:`coverage_floor` of 0.95).
COVERAGE_FLOOR = 0.94

# Elements (indices) drawn per bootstrap block: 2**20 int64 indices plus the gathered float64
# values stay near 16 MB whatever the sample size, instead of n * n_resamples at once.
_BOOTSTRAP_BLOCK = 1 << 20

#: Machine epsilon of float64: the unit the rounding bounds of spreads are counted in.
_EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------- validation


def _check_confidence(confidence: object) -> float:
    # numpy scalars would print as np.float64(...): messages show them as the float they are.
    shown = str(confidence) if type(confidence) is int else None
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real):
        raise TypeError(
            f"`confidence` ({confidence!r}) must be a number, not {type(confidence).__name__}."
        )
    value = float(confidence)
    if not 0.0 < value < 1.0:  # also rejects NaN
        raise ConfigError(f"`confidence` ({shown or repr(value)}) must be in (0, 1).")
    return value


def _check_count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` ({value!r}) must be an integer, not {type(value).__name__}.")
    return int(value)


def _check_positive_int(value: object, name: str) -> int:
    count = _check_count(value, name)
    if count < 1:
        raise ConfigError(f"`{name}` ({count}) must be at least 1.")
    return count


def _check_seed(seed: object) -> int:
    value = _check_count(seed, "seed")
    if value < 0:
        raise ConfigError(f"`seed` ({value}) must be a non-negative integer.")
    return value


def _as_values(values: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    """``values`` as a 1-D float64 array of finite numbers."""
    if isinstance(values, (str, bytes)):
        raise TypeError("`values` must be a sequence of numbers, not a string.")
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`values` must be a sequence of numbers: {exc}.") from None
    if array.ndim != 1:
        raise ValueError(f"`values` must be one-dimensional, got shape {array.shape}.")
    finite = np.isfinite(array)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        first = float(array[bad[0]])
        raise ValueError(
            f"`values` holds {_plural(bad.size, 'non-finite value')} (NaN or infinity); "
            f"the first is {first!r} at index {int(bad[0])}."
        )
    return array


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _are(count: int) -> str:
    return "is" if count == 1 else "are"


# --------------------------------------------------------------------------- ratio


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


def _as_counts(value: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(value)
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        raise TypeError(f"`{name}` must hold integers, not {array.dtype} values.")
    floats = array.astype(np.float64)
    if np.issubdtype(array.dtype, np.floating):
        bad = np.flatnonzero(floats != np.floor(floats))  # NaN and infinity fail this too
        if bad.size:
            raise TypeError(
                f"`{name}` must hold integers; got {float(floats.flat[bad[0]])!r} at flat index "
                f"{int(bad[0])}."
            )
    return floats


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
      ``(1 - confidence)/2`` and ``(1 + confidence)/2`` percentiles of their means. The same
      values, seed and ``n_resamples`` give the same interval. Resamples are drawn in blocks,
      so memory stays bounded (about 16 MB) for any ``n``; time grows as ``n · n_resamples``.

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
    n = int(x.size)
    if n == 0:
        return Estimate(value=None, n=0, method=method, confidence=confidence)
    m, sd = _mean_sd(x)
    if checked_bounds is not None:
        _check_within(x, checked_bounds)
        if sd == 0.0:
            return _wilson_bound(m, float(n), n, checked_bounds, confidence)
    name = method
    if method == "auto":
        method, name = _auto_mean_method(m, sd, n, checked_bounds)
    if n == 1:
        return Estimate(value=m, n=1, method=name, confidence=confidence)
    entry = _intervals.METHODS[method]
    low: float | None
    high: float | None
    if entry.bootstrap is not None:
        scale = _scale_of(x)
        means = _bootstrap_means(x / scale, n_resamples, seed) * scale
        low, high = entry.bootstrap(x, m, means, confidence)
    else:
        low, high = _spread_bounds(m, sd / math.sqrt(n), n, method, confidence)
    if checked_bounds is not None and low is not None and high is not None:
        low, high = max(low, checked_bounds[0]), min(high, checked_bounds[1])
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


# Above this magnitude, sums and squares of a few values can overflow float64.
_LARGE = 1e150


def _scale_of(x: NDArray[np.float64]) -> float:
    """1.0, or the largest magnitude in ``x`` when its sums or squares could overflow."""
    biggest = float(np.max(np.abs(x))) if x.size else 0.0
    return biggest if biggest > _LARGE else 1.0


def _mean_sd(x: NDArray[np.float64]) -> tuple[float, float]:
    """Mean and sample standard deviation (``ddof=1``; 0 for one value), overflow-safe."""
    scale = _scale_of(x)
    y = x / scale if scale != 1.0 else x
    m = float(np.mean(y))
    sd = float(np.std(y, ddof=1)) if y.size > 1 else 0.0
    if sd != 0.0 and bool(np.all(y == y[0])):
        sd = 0.0  # rounding in np.std can leave 1e-17 for identical values
    return m * scale, sd * scale


def _check_bounds(bounds: object) -> tuple[float, float] | None:
    if bounds is None:
        return None
    try:
        pair = tuple(float(b) for b in bounds)  # type: ignore[attr-defined]
        if len(pair) != 2:
            raise ValueError
    except (TypeError, ValueError):
        raise TypeError(f"`bounds` ({bounds!r}) must be a pair of numbers (lo, hi).") from None
    if not (math.isfinite(pair[0]) and math.isfinite(pair[1]) and pair[0] < pair[1]):
        raise ConfigError(f"`bounds` ({bounds!r}) must be two finite numbers with lo < hi.")
    return pair[0], pair[1]


def _check_within(x: NDArray[np.float64], bounds: tuple[float, float]) -> None:
    bad = np.flatnonzero((x < bounds[0]) | (x > bounds[1]))
    if bad.size:
        raise ValueError(
            f"`values` holds {_plural(bad.size, 'value')} outside `bounds` {bounds!r}; the "
            f"first is {float(x[bad[0]])!r} at index {int(bad[0])}."
        )


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


def _spread_bounds(
    m: float, se: float, n: int, method: str, confidence: float
) -> tuple[float, float]:
    """``m + q·se`` for the quantiles ``q`` of a spread method (normal, t) of the table."""
    quantiles = _intervals.METHODS[method].spread
    assert quantiles is not None  # checked: a mean or geomean method without a bootstrap
    q_low, q_high = quantiles(n, confidence)
    return m + q_low * se, m + q_high * se


def _bootstrap_means(x: NDArray[np.float64], n_resamples: int, seed: int) -> NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    n = x.size
    block = max(1, _BOOTSTRAP_BLOCK // n)
    means = np.empty(n_resamples, dtype=np.float64)
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


# --------------------------------------------------------------------------- clusters, groups


def _cluster_codes(clusters: Sequence[str | None], n: int) -> tuple[NDArray[np.intp], int]:
    """One integer code per item and the number of clusters; ``None`` is a cluster of its own."""
    if isinstance(clusters, (str, bytes)):
        raise TypeError("`clusters` must be a sequence of cluster names, not a string.")
    if len(clusters) != n:
        raise ValueError(
            f"`clusters` has {len(clusters)} entries but there are {n} values; give one "
            "cluster per value (None: the value is a cluster of its own)."
        )
    index: dict[object, int] = {}
    singles = 0

    def code(name: str | None) -> int:
        nonlocal singles
        if name is None:
            singles += 1
            return -singles
        return index.setdefault(name, len(index))

    raw = np.fromiter(map(code, clusters), dtype=np.intp, count=n)
    # Singletons (negative codes) come after the named clusters.
    codes = np.where(raw < 0, len(index) - 1 - raw, raw)
    return codes, len(index) + singles


#: How a clustered interval says it fell back: no spread between the clusters, or one cluster.
_NO_SPREAD = "no spread: 1 trial per cluster"
_ONE_CLUSTER = "1 cluster: 1 trial, normal quantile"


def _cluster_sums(
    x: NDArray[np.float64], m: float, codes: NDArray[np.intp], n_clusters: int
) -> NDArray[np.float64]:
    """Per cluster, the sum ``S_g`` of ``x - m``; all exactly 0 when all are rounding noise.

    Every cluster of the same mean has ``S_g = 0`` in exact arithmetic, but in floating point
    ``[1, 0, 1]`` three times gives sums of 1e-16 and a standard error of 2.6e-17: an interval
    of zero width that claims a certainty no data give. Each computed ``S_g`` is off by at
    most about ``n_g`` roundings of the values and ``n_g`` times the rounding of ``m``
    (``(n_g + log2 n)`` units of ``eps · max|x|`` each), so sums within four times that bound
    of 0 are taken as 0. A real spread below that bound cannot be told from rounding, and the
    fallback it then gets (one trial per cluster) errs on the wide side.
    """
    sums = np.bincount(codes, weights=x - m, minlength=n_clusters)
    sizes = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    biggest = float(np.max(np.abs(x))) if x.size else 0.0
    noise = 4.0 * _EPS * biggest * sizes * (sizes + math.log2(max(x.size, 1)) + 1.0)
    if bool(np.all(np.abs(sums) <= noise)):
        return np.zeros(n_clusters)
    return np.asarray(sums, dtype=np.float64)


def _cluster_se(
    x: NDArray[np.float64], m: float, codes: NDArray[np.intp], n_clusters: int
) -> float:
    """The cluster-robust standard error of the mean of ``x``.

    ``sqrt(G/(G-1) · Σ_g S_g²) / n`` with ``S_g`` the sum of ``x - m`` over cluster ``g``: the
    sandwich estimator of OLS on a constant with statsmodels' default small-sample factor
    ``G/(G-1) · (n-1)/(n-k)`` (``k = 1`` regressor, so the second factor is 1). Exactly 0 when
    every ``S_g`` is rounding noise (see :func:`_cluster_sums`).
    """
    sums = _cluster_sums(x, m, codes, n_clusters)
    return math.sqrt(n_clusters / (n_clusters - 1) * float(np.dot(sums, sums))) / x.size


def _cluster_quantile(n_clusters: int, confidence: float) -> tuple[float, float]:
    """The two-sided quantile of a clustered interval and the normal tail it cuts off.

    With ``G >= 2`` clusters the clusters are the sample: the quantile is t(G-1)'s, used as it
    is by the closed forms (Wilson, Wald, Agresti-Coull), and the beta quantiles
    (Clopper-Pearson, Jeffreys) take its normal tail ``Φ(-t)``, computed from ``erfc`` so that
    a tail of 1e-37 (2 clusters) is not lost to ``1 - confidence``-style rounding. With one
    cluster t(0) does not exist and the normal quantile is used.
    """
    if n_clusters < 2:
        return _z(confidence), (1.0 - confidence) / 2.0
    t = -_t_bounds(n_clusters - 1, confidence)[0]
    return t, 0.5 * math.erfc(t / math.sqrt(2.0))


def cluster_mean(
    values: Sequence[float] | NDArray[np.float64],
    clusters: Sequence[str | None],
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """The mean of values that come in clusters, with a cluster-robust interval.

    Items of one cluster (questions about one passage, variants of one template, turns of one
    conversation) are not independent: treating them as independent understates the standard
    error. With ``m`` the mean, ``G`` the number of clusters and ``S_g`` the sum of ``x - m``
    over cluster ``g``, the standard error is

        ``se = sqrt(G/(G-1) · Σ_g S_g²) / n``,

    equal to statsmodels ``OLS(x, ones).fit(cov_type="cluster", cov_kwds={"groups": g})`` (its
    default small-sample correction ``G/(G-1) · (n-1)/(n-1)``), and the interval is
    ``m ± t(G-1)·se``, as that fit gives with ``use_t=True``: with few clusters, the clusters
    are the sample size. ``extra`` holds ``n_clusters``, ``se_cluster`` and ``design_effect``
    (``se²`` over the naive ``s²/n``; 1 for independent items, larger with intra-cluster
    correlation). A value whose cluster is ``None`` is a cluster of its own.

    Fallbacks, each named in ``method``: when every cluster has the same mean (``se = 0``,
    rounding noise included) and ``bounds`` are given, the interval is the Wilson bound of
    :func:`mean` with one trial per cluster and the t(G-1) quantile
    (``"wilson-cluster (no spread: 1 trial per cluster)"``); without ``bounds`` it is the
    point ``[m, m]`` (``"cluster-t (no spread)"``). With one cluster there is no t quantile:
    the Wilson bound over 1 trial at the normal quantile with ``bounds``, no interval without.

    Args:
        values: The scored values; every one must be finite.
        clusters: One cluster name (or ``None``) per value.
        confidence: Confidence level of the interval, in (0, 1).
        bounds: The range ``(lo, hi)`` every value lies in, or ``None``.

    Returns:
        ``Estimate(value=m, low, high, n, method="cluster-t", extra={...})``; ``value=None``
        when ``values`` is empty.

    Raises:
        ConfigError: ``confidence`` or ``bounds`` is not valid (a ``ValueError``).
        ValueError: ``values`` holds NaN or infinity, or ``clusters`` has another length.
        TypeError: ``values`` does not hold numbers.
    """
    confidence = _check_confidence(confidence)
    checked_bounds = _check_bounds(bounds)
    x = _as_values(values)
    n = int(x.size)
    codes, n_clusters = _cluster_codes(clusters, n)
    if n == 0:
        return Estimate(value=None, n=0, method="cluster-t", confidence=confidence)
    if checked_bounds is not None:
        _check_within(x, checked_bounds)
    scale = _scale_of(x)
    y = x / scale if scale != 1.0 else x
    m_scaled, sd_scaled = _mean_sd(y)
    m = m_scaled * scale
    se = _cluster_se(y, m_scaled, codes, n_clusters) * scale if n_clusters > 1 else 0.0
    naive = sd_scaled * scale / math.sqrt(n)
    # No spread between clusters: the design effect cannot be estimated; the fallback below
    # counts each cluster as one trial, which is a design effect of n / G.
    design_effect = (se / naive) ** 2 if se > 0.0 else n / n_clusters
    extra = {
        "n_clusters": float(n_clusters),
        "se_cluster": se,
        "design_effect": design_effect,
    }
    z, _ = _cluster_quantile(n_clusters, confidence)
    if checked_bounds is not None and se == 0.0:
        why = _NO_SPREAD if n_clusters > 1 else _ONE_CLUSTER
        return _wilson_bound(
            m,
            float(n_clusters),
            n,
            checked_bounds,
            confidence,
            extra,
            z=z,
            method=f"wilson-cluster ({why})",
        )
    if n_clusters < 2:
        return Estimate(
            value=m,
            n=n,
            method="cluster-t (1 cluster: no interval)",
            confidence=confidence,
            extra=extra,
        )
    low, high = m - z * se, m + z * se
    if checked_bounds is not None:
        low, high = max(low, checked_bounds[0]), min(high, checked_bounds[1])
    return Estimate(
        value=m,
        low=low,
        high=high,
        n=n,
        method="cluster-t" if se > 0.0 else "cluster-t (no spread)",
        confidence=confidence,
        extra=extra,
    )


def cluster_ratio(
    successes: Sequence[bool] | NDArray[np.bool_] | NDArray[np.float64],
    clusters: Sequence[str | None],
    *,
    method: str = "wilson",
    confidence: float = 0.95,
) -> Estimate:
    """A proportion of items that come in clusters, with a cluster-robust interval.

    ``successes`` holds one 0/1 (or bool) per scored item. The value is ``k / n``; the
    standard error ``se`` is :func:`cluster_mean`'s on the 0/1 values (statsmodels' OLS
    cluster standard error). The design effect ``deff = se² / (p(1-p)/n)`` turns ``n`` into an
    effective sample size ``n / deff`` (Kish), and the interval is ``method``'s interval of
    :func:`ratio` for ``p`` over that many trials, with the t(G-1) quantile in place of the
    normal one (``"normal"``: ``p ± t·se``; Clopper-Pearson and Jeffreys cut off the normal
    tail of that quantile). ``extra`` holds ``n_clusters``, ``se_cluster`` and
    ``design_effect``.

    Fallbacks, each named in ``method``: when the clusters show no spread (``p`` is 0 or 1,
    or every cluster has the same share, rounding noise included) the design effect cannot
    be estimated and each cluster counts as one trial, never fewer trials than clusters
    (``"wilson-cluster (no spread: 1 trial per cluster)"``); with one cluster, one trial at
    the normal quantile (``"wilson-cluster (1 cluster: 1 trial, normal quantile)"``).

    Args:
        successes: One 0/1 per scored item.
        clusters: One cluster name (or ``None``: a cluster of its own) per item.
        method: One of :data:`RATIO_METHODS`.
        confidence: Confidence level of the interval, in (0, 1).

    Returns:
        ``Estimate(value=k / n, low, high, n, method=f"{method}-cluster", extra={...})``.

    Raises:
        ConfigError: ``method`` or ``confidence`` is not valid (a ``ValueError``).
        ValueError: a value is not 0 or 1, or ``clusters`` has another length.
    """
    method = _check_method(method, "ratio")
    confidence = _check_confidence(confidence)
    x = _as_values(np.asarray(successes, dtype=np.float64))
    bad = np.flatnonzero((x != 0.0) & (x != 1.0))
    if bad.size:
        raise ValueError(
            f"`successes` must hold 0 or 1; got {float(x[bad[0]])!r} at index {int(bad[0])}."
        )
    n = int(x.size)
    codes, n_clusters = _cluster_codes(clusters, n)
    name = f"{method}-cluster"
    if n == 0:
        return Estimate(value=None, n=0, method=name, confidence=confidence)
    p = float(np.mean(x))
    se = _cluster_se(x, p, codes, n_clusters) if n_clusters > 1 else 0.0
    binomial = p * (1.0 - p) / n
    spread = binomial > 0.0 and se > 0.0
    design_effect = se * se / binomial if spread else n / n_clusters
    n_eff = n / design_effect
    extra = {"n_clusters": float(n_clusters), "se_cluster": se, "design_effect": design_effect}
    z, tail = _cluster_quantile(n_clusters, confidence)
    if method == "auto":
        method, auto_name = auto_ratio_method(n_eff)
        name = f"{method}-cluster{auto_name[len(method) :]}"
    # The t(G-1) quantile for the closed forms, its normal tail for the beta quantiles.
    low, high = ratio_bounds(method)(p * n_eff, n_eff, _intervals.Level(1.0 - 2.0 * tail, z, tail))
    low = min(max(low, 0.0), p)
    high = max(min(high, 1.0), p)
    if not spread:
        name = f"{name} ({_NO_SPREAD if n_clusters > 1 else _ONE_CLUSTER})"
    return Estimate(
        value=p, low=low, high=high, n=n, method=name, confidence=confidence, extra=extra
    )


def macro_mean(
    values: Sequence[float] | NDArray[np.float64],
    groups: Sequence[str | None],
    *,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """The unweighted mean over groups of the group means (the macro average), with an interval.

    Next to the pooled (micro) mean, where a group of 900 items outweighs one of 10, the macro
    value gives every group the same weight. For a ratio metric pass 0/1 values. With ``K``
    groups of ``n_g`` items, means ``m_g`` and sample variances ``s_g²``:

        ``value = Σ m_g / K``,  ``se² = Σ s_g² / n_g / K²``,  interval ``value ± z·se``:

    the groups are fixed strata, each mean has its own sampling error. A group of one item has
    no variance of its own and borrows the pooled within-group variance. With ``bounds``, the
    interval is clipped to them and, when it would have zero width, is the Wilson bound of
    :func:`mean` over the effective ``K² / Σ(1/n_g)`` trials. Values whose group is ``None``
    are left out. ``extra`` holds ``n_groups``.

    Args:
        values: One finite value per item.
        groups: One group name (or ``None``) per value.
        confidence: Confidence level of the interval, in (0, 1).
        bounds: The range ``(lo, hi)`` every value lies in, or ``None``.

    Returns:
        ``Estimate(value, low, high, n=items in a group, method="macro-normal",
        extra={"n_groups": K})``; ``value=None`` when no value has a group.

    Raises:
        ConfigError: ``confidence`` or ``bounds`` is not valid (a ``ValueError``).
        ValueError: ``values`` holds NaN or infinity, or ``groups`` has another length.
    """
    confidence = _check_confidence(confidence)
    checked_bounds = _check_bounds(bounds)
    x = _as_values(values)
    if isinstance(groups, (str, bytes)) or len(groups) != x.size:
        raise ValueError(
            f"`groups` must hold one group name (or None) per value; got "
            f"{len(groups)} for {x.size} values."
        )
    if checked_bounds is not None:
        _check_within(x, checked_bounds)
    index: dict[str, int] = {}
    codes = np.fromiter(
        (-1 if g is None else index.setdefault(g, len(index)) for g in groups),
        dtype=np.intp,
        count=x.size,
    )
    keep = codes >= 0
    x, codes = x[keep], codes[keep]
    k = len(index)
    if k == 0:
        return Estimate(value=None, n=0, method="macro-normal", confidence=confidence)
    scale = _scale_of(x)
    y = x / scale
    sizes = np.bincount(codes, minlength=k).astype(np.float64)
    means = np.bincount(codes, weights=y, minlength=k) / sizes
    resid = y - means[codes]
    ss = np.bincount(codes, weights=resid * resid, minlength=k)
    # The mean of three values 0.1 is not 0.1 in floating point: a group of equal values has
    # residuals of a few roundings, not 0. Sums of squares within that bound are no spread, so
    # such groups never give an interval of zero width.
    biggest = float(np.max(np.abs(y))) if y.size else 0.0
    ss = np.where(ss <= sizes * (4.0 * _EPS * biggest * (sizes + 1.0)) ** 2, 0.0, ss)
    df = sizes - 1.0
    pooled = float(ss.sum() / df.sum()) if df.sum() > 0 else 0.0
    variances = np.where(sizes > 1, ss / np.maximum(df, 1.0), pooled)
    value = float(means.mean()) * scale
    se = math.sqrt(float(np.sum(variances / sizes))) / k * scale
    extra = {"n_groups": float(k)}
    n = int(x.size)
    if checked_bounds is not None and se == 0.0:
        n_eff = k * k / float(np.sum(1.0 / sizes))
        estimate = _wilson_bound(value, n_eff, n, checked_bounds, confidence, extra)
        return attrs.evolve(estimate, method="macro-wilson")
    z = _z(confidence)
    low, high = value - z * se, value + z * se
    if checked_bounds is not None:
        low, high = max(low, checked_bounds[0]), min(high, checked_bounds[1])
    return Estimate(
        value=value,
        low=low,
        high=high,
        n=n,
        method="macro-normal",
        confidence=confidence,
        extra=extra,
    )


# --------------------------------------------------------------------------- percentiles


def _check_qs(qs: Sequence[float]) -> tuple[float, ...]:
    if isinstance(qs, (str, bytes)) or not isinstance(qs, Sequence):
        raise TypeError(f"`qs` ({qs!r}) must be a sequence of numbers.")
    items: Sequence[object] = qs
    checked: list[float] = []
    for q in items:
        if isinstance(q, bool) or not isinstance(q, numbers.Real):
            raise TypeError(f"`qs` holds {q!r}, which is not a number.")
        if not 0.0 <= float(q) <= 100.0:  # also rejects NaN
            raise ConfigError(f"`qs` ({q!r}) must be between 0 and 100.")
        checked.append(float(q))
    if not checked:
        raise ConfigError("`qs` must hold at least one percentile.")
    return tuple(checked)


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


# --------------------------------------------------------------------------- building blocks


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


# --------------------------------------------------------------------------- coverage receipts

#: Standard deviations of ``Binomial(n, p)`` either side of ``np`` that coverage sums span;
#: the probability left outside is below 1e-22.
_COVERAGE_SDS = 10.0
#: Repetitions of a simulated coverage receipt when the budget below allows them.
COVERAGE_REPETITIONS = 2000
#: Resamples of the inner bootstrap when a bootstrap interval's coverage is simulated.
COVERAGE_INNER_RESAMPLES = 500
#: Values drawn by one simulated receipt at most: repetitions shrink for large samples (to
#: no fewer than :data:`_MIN_REPETITIONS`), and the receipt records how many it made.
_COVERAGE_DRAWS = 1 << 22
_MIN_REPETITIONS = 100


def _base_method(method: str) -> str:
    """The interval method of a method name: ``"jeffreys (auto: n = 23 < 40)"`` -> jeffreys."""
    return method.split(" (", 1)[0]


def _binomial_cdf(k: NDArray[np.float64], n: int, p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``, element by element (k may lie outside 0..n)."""
    from scipy.special import betainc

    inside = (k >= 0) & (k < n)
    safe = np.where(inside, k, 0.0)
    values = betainc(n - safe, safe + 1.0, 1.0 - p)
    return np.asarray(np.where(k >= n, 1.0, np.where(inside, values, 0.0)), np.float64)


def _window(n: int, p_low: float, p_high: float) -> NDArray[np.float64]:
    """The counts ``k`` that carry all but 1e-22 of ``Binomial(n, p)`` for p in the range."""
    worst = 0.25 if p_low <= 0.5 <= p_high else max(p * (1 - p) for p in (p_low, p_high))
    sd = math.sqrt(n * worst)
    lo = max(0, math.floor(n * p_low - _COVERAGE_SDS * sd) - 1)
    hi = min(n, math.ceil(n * p_high + _COVERAGE_SDS * sd) + 1)
    return np.arange(lo, hi + 1, dtype=np.float64)


def _covering(
    k: NDArray[np.float64],
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    n: int,
    p: NDArray[np.float64],
    side: int = 0,
) -> NDArray[np.float64]:
    """``Σ_k Binom(k; n, p)·1[L(k) <= p <= U(k)]`` over the window ``k``, for each ``p``.

    The bounds of every method here are non-decreasing in ``k``, so the intervals that cover
    ``p`` are the consecutive counts from the first whose upper end reaches ``p`` to the last
    whose lower end does not pass it, and the sum is a difference of two binomial
    distribution functions (``betainc``). ``side``: ``+1`` for the limit from above ``p``
    (bounds equal to ``p`` count as below it), ``-1`` from below, ``0`` at ``p`` itself.
    """
    if side > 0:
        last = np.searchsorted(low, p, side="right") - 1  # L(k) <= p < p+
        first = np.searchsorted(high, p, side="right")  # U(k) > p
    elif side < 0:
        last = np.searchsorted(low, p, side="left") - 1  # L(k) < p
        first = np.searchsorted(high, p, side="left")  # U(k) >= p
    else:
        last = np.searchsorted(low, p, side="right") - 1
        first = np.searchsorted(high, p, side="left")
    k_last = np.where(last >= 0, k[np.clip(last, 0, k.size - 1)], k[0] - 1.0)
    k_first = np.where(first < k.size, k[np.clip(first, 0, k.size - 1)], k[-1] + 1.0)
    mass = _binomial_cdf(k_last, n, p) - _binomial_cdf(k_first - 1.0, n, p)
    return np.asarray(np.where(k_first <= k_last, np.clip(mass, 0.0, 1.0), 0.0), np.float64)


def _window_bounds(
    k: NDArray[np.float64], n: int, method: str, confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    low, high = ratio_interval(k, np.full(k.shape, float(n)), method, confidence)
    # Monotone in k for every method (the Wald bounds after clipping too); rounding in the
    # last place is smoothed so that the search above stays exact.
    return np.maximum.accumulate(low), np.maximum.accumulate(high)


def ratio_coverage(
    n: int, p: ArrayLike, method: str = "wilson", confidence: float = 0.95
) -> NDArray[np.float64]:
    """The exact coverage of ``method``'s interval over ``n`` trials at the true shares ``p``.

    ``C(p) = Σ_k Binom(k; n, p)·1[L(k) <= p <= U(k)]``: the probability that the interval
    computed from ``k ~ Binomial(n, p)`` contains ``p``. The bounds of every ``k`` within 10
    standard deviations of ``np`` come from one vectorised :func:`ratio_interval` call and the
    probabilities from differences of ``betainc``; the sum equals the full sum over
    ``k = 0...n`` to 1e-12.

    Args:
        n: Trials, at least 1.
        p: True shares in [0, 1], any shape.
        method: One of :data:`RATIO_METHODS` (``"auto"``: the method ``auto`` takes at ``n``).
        confidence: Confidence level of the interval, in (0, 1).

    Returns:
        The coverage at each ``p``, a float64 array of its shape.

    Raises:
        ConfigError: ``method`` or ``confidence`` is not valid, or ``n`` is below 1.
        ValueError: a ``p`` lies outside [0, 1].
    """
    method = _check_method(method, "ratio")
    confidence = _check_confidence(confidence)
    n = _check_positive_int(n, "n")
    shares = np.asarray(p, dtype=np.float64)
    if shares.size == 0:
        return np.asarray(shares.copy(), dtype=np.float64)
    if not bool(np.all((shares >= 0.0) & (shares <= 1.0))):
        raise ValueError("`p` must hold shares between 0 and 1.")
    if method == "auto":
        method = auto_ratio_method(n)[0]
    k = _window(n, float(shares.min()), float(shares.max()))
    low, high = _window_bounds(k, n, method, confidence)
    flat = shares.ravel()
    return _covering(k, low, high, n, flat).reshape(shares.shape)


def ratio_coverage_min(
    n: int, low: float, high: float, method: str = "wilson", confidence: float = 0.95
) -> float:
    """The smallest exact coverage of ``method`` over ``n`` trials for any share in [low, high].

    The worst case over the truths the interval itself finds plausible. ``C(p)`` jumps only
    at the bounds ``L(k)``, ``U(k)`` and between them is ``P(a <= X <= b)``, which rises and
    then falls in ``p``, so its infimum over the range is at a jump (approached from either
    side) or at an end: all of those are evaluated, none is missed.
    """
    method = _check_method(method, "ratio")
    confidence = _check_confidence(confidence)
    n = _check_positive_int(n, "n")
    if method == "auto":
        method = auto_ratio_method(n)[0]
    low, high = float(low), float(high)
    k = _window(n, low, high)
    lows, highs = _window_bounds(k, n, method, confidence)
    jumps = np.concatenate([lows, highs])
    jumps = np.unique(jumps[(jumps > low) & (jumps < high)])
    ends = np.array([low, high])
    values = [
        _covering(k, lows, highs, n, ends),
        _covering(k, lows, highs, n, ends[:1], side=+1),
        _covering(k, lows, highs, n, ends[1:], side=-1),
    ]
    if jumps.size:
        values += [_covering(k, lows, highs, n, jumps, side=s) for s in (-1, +1)]
    return float(min(float(v.min()) for v in values))


def _simulated_intervals(
    samples: NDArray[np.float64],
    method: str,
    confidence: float,
    bounds: tuple[float, float] | None,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The intervals :func:`mean` gives each row of ``samples`` (rows: resamples)."""
    rows, n = samples.shape
    m = samples.mean(axis=1)
    sd = samples.std(axis=1, ddof=1) if n > 1 else np.zeros(rows)
    constant = np.all(samples == samples[:, :1], axis=1)
    sd = np.where(constant, 0.0, sd)
    rows_bounds = _intervals.METHODS[method].bootstrap_rows
    if rows_bounds is None:
        return _bounded_intervals(m, sd, constant, n, method, confidence, bounds)
    inner = COVERAGE_INNER_RESAMPLES
    picks = rng.integers(0, n, size=(rows, inner, n))
    draws = np.take_along_axis(samples, picks.reshape(rows, -1), axis=1)
    boot = draws.reshape(rows, inner, n).mean(axis=2)
    low, high = rows_bounds(samples, m, boot, confidence)
    return _bounded(low, high, m, constant, n, confidence, bounds)


def _counted_intervals(
    distinct: NDArray[np.float64],
    counts: NDArray[np.int64],
    population_mean: float,
    method: str,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The normal or t intervals of resamples given as counts of each distinct value.

    ``counts[r, j]`` is how often resample ``r`` drew ``distinct[j]``: a resample of ``n``
    values with replacement is a multinomial draw of such counts, and its mean and standard
    deviation (all a normal or t interval reads) follow from them, with the sums taken about
    the population mean so that nothing cancels.
    """
    n = int(counts[0].sum())
    centred = distinct - population_mean
    first = counts @ centred
    second = counts @ (centred * centred)
    m = population_mean + first / n
    ss = np.maximum(second - first * first / n, 0.0)
    constant = np.count_nonzero(counts, axis=1) == 1
    sd = np.where(constant, 0.0, np.sqrt(ss / (n - 1)))
    return _bounded_intervals(m, sd, constant, n, method, confidence, bounds)


def _bounded_intervals(
    m: NDArray[np.float64],
    sd: NDArray[np.float64],
    constant: NDArray[np.bool_],
    n: int,
    method: str,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Normal or t intervals of samples of ``n`` with means ``m`` and deviations ``sd``."""
    quantiles = _intervals.METHODS[method].spread
    assert quantiles is not None  # the caller took this path for a spread method
    t_low, t_high = quantiles(n, confidence)
    se = sd / math.sqrt(n)
    return _bounded(m + t_low * se, m + t_high * se, m, constant, n, confidence, bounds)


def _bounded(
    low: NDArray[np.float64],
    high: NDArray[np.float64],
    m: NDArray[np.float64],
    constant: NDArray[np.bool_],
    n: int,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Intervals clipped to ``bounds``, with the Wilson bound for samples that do not vary."""
    if bounds is not None:
        low, high = np.maximum(low, bounds[0]), np.minimum(high, bounds[1])
        if constant.any():
            lo, hi = bounds
            share = np.clip((m[constant] - lo) / (hi - lo), 0.0, 1.0)
            w_low, w_high = _wilson_score(
                share * n, np.full(share.shape, float(n)), _z(confidence), np.sqrt
            )
            low[constant] = lo + np.minimum(np.clip(w_low, 0.0, 1.0), share) * (hi - lo)
            high[constant] = lo + np.maximum(np.clip(w_high, 0.0, 1.0), share) * (hi - lo)
    return low, high


def mean_coverage(
    values: Sequence[float] | NDArray[np.float64],
    method: str = "normal",
    confidence: float = 0.95,
    *,
    bounds: tuple[float, float] | None = None,
    seed: int = 0,
    repetitions: int | None = None,
) -> tuple[float, int]:
    """The simulated coverage of :func:`mean`'s interval, taking the values as the population.

    Draws ``repetitions`` samples of ``n`` values with replacement from ``values``
    (``numpy.random.default_rng((seed, 22))``, so the same values and seed give the same
    receipt), computes each sample's interval by ``method`` (with ``bounds``, clipped and
    with the Wilson bound when a sample does not vary, as :func:`mean` does) and counts how
    often it contains the mean of ``values``: the coverage the interval has if the data look
    like the sample. Bootstrap and BCa intervals are simulated with
    :data:`COVERAGE_INNER_RESAMPLES` resamples each. Repetitions default to
    :data:`COVERAGE_REPETITIONS`, fewer when a sample is so large that they would draw more
    than 4.2 million values (at least 100); samples are drawn in blocks of about a million
    values, so memory stays bounded. A normal or t interval of values with at most ``n / 8``
    distinct ones is simulated from multinomial counts of the distinct values (the same
    distribution of resamples), and the budget counts distinct values instead of ``n``.

    Returns:
        ``(coverage, repetitions)``.

    Raises:
        ConfigError: ``method``, ``confidence`` or ``bounds`` is not valid, or ``values``
            holds fewer than two values.
    """
    method = _check_method(method, "mean")
    confidence = _check_confidence(confidence)
    checked = _check_bounds(bounds)
    seed = _check_seed(seed)
    x = _as_values(values)
    n = int(x.size)
    if n < 2:
        raise ConfigError(f"Simulated coverage needs at least two values, got {n}.")
    scale = _scale_of(x)
    y = x / scale if scale != 1.0 else x
    m = float(np.mean(y))
    bounds_y = None if checked is None else (checked[0] / scale, checked[1] / scale)
    if method == "auto":
        _, sd = _mean_sd(y)
        method = _auto_mean_method(m, sd, n, bounds_y)[0]
    rng = np.random.default_rng((seed, 22))

    def intervals(rows: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        samples = y[rng.integers(0, n, size=(rows, n))]
        return _simulated_intervals(samples, method, confidence, bounds_y, rng)

    resampled = _intervals.METHODS[method].bootstrap is not None
    per_draw = n * (COVERAGE_INNER_RESAMPLES + 1 if resampled else 1)
    if not resampled:
        distinct, counts = np.unique(y, return_counts=True)
        if distinct.size * _COUNTED_ADVANTAGE <= n:
            # Drawing n values with replacement and counting each distinct one is one
            # multinomial draw with the values' shares: the same resamples, d draws each.
            shares = counts / n

            def intervals(rows: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
                drawn = rng.multinomial(n, shares, size=rows)
                return _counted_intervals(distinct, drawn, m, method, confidence, bounds_y)

            per_draw = int(distinct.size)
    if repetitions is None:
        repetitions = int(
            min(COVERAGE_REPETITIONS, max(_MIN_REPETITIONS, _COVERAGE_DRAWS // per_draw))
        )
    repetitions = _check_positive_int(repetitions, "repetitions")
    block = max(1, _BOOTSTRAP_BLOCK // per_draw)
    # The population mean sits on a bound of a sample interval only by rounding.
    tol = 4.0 * _EPS * max(1.0, abs(m))
    hits = 0
    for start in range(0, repetitions, block):
        low, high = intervals(min(block, repetitions - start))
        hits += int(np.count_nonzero((low <= m + tol) & (m - tol <= high)))
    return hits / repetitions, repetitions


#: A sample of ``n`` values with at most ``n / 8`` distinct ones is resampled as multinomial
#: counts of its distinct values (``d`` draws per resample instead of ``n``).
_COUNTED_ADVANTAGE = 8


def coverage_receipt(
    estimate: Estimate,
    *,
    kind: str,
    values: Sequence[float] | NDArray[np.float64] | None = None,
    bounds: tuple[float, float] | None = None,
    seed: int = 0,
) -> dict[str, float]:
    """The coverage receipt of an estimate: how often its kind of interval covers, here.

    - A proportion (``kind="ratio"``, an interval that :func:`ratio` recomputes from
      ``k = value·n``): the exact coverage at ``p = k/n`` (``coverage``,
      :func:`ratio_coverage`) and the smallest over the shares inside the interval
      (``coverage_min``, :func:`ratio_coverage_min`).
    - A mean (``kind="mean"``, the ``values`` it came from) or a geometric mean
      (``kind="geomean"``, positive values; the interval of the logs): the simulated coverage
      (:func:`mean_coverage`) as ``coverage``, its repetitions as ``coverage_reps`` and the
      upper end of the 95% Wilson interval of that share as ``coverage_high``, the Monte
      Carlo error a flag must clear.

    Returns:
        The keys above, or ``{}`` when the estimate has no interval, rests on clusters (its
        ``extra`` has ``n_clusters``), or was not made by these functions (a custom
        aggregate's interval that ``ratio`` does not recompute).
    """
    if estimate.value is None or estimate.low is None or estimate.high is None:
        return {}
    if "n_clusters" in estimate.extra or estimate.n < 1:
        return {}
    method = _base_method(estimate.method)
    if kind == "ratio":
        if method not in _intervals.names("ratio"):
            return {}
        n = estimate.n
        if not 0.0 <= estimate.value <= 1.0:  # not a share (a custom mean's interval)
            return {}
        k = round(estimate.value * n)
        if abs(k - estimate.value * n) > 1e-9 * n:
            return {}
        again = ratio(k, n, method, estimate.confidence)
        if (again.low, again.high) != (estimate.low, estimate.high):
            return {}
        return {
            "coverage": float(ratio_coverage(n, k / n, method, estimate.confidence)),
            "coverage_min": ratio_coverage_min(
                n, estimate.low, estimate.high, method, estimate.confidence
            ),
        }
    if kind not in ("mean", "geomean") or values is None:
        return {}
    x = _as_values(values)
    if x.size < 2 or method not in _intervals.names("mean"):
        return {}
    if kind == "geomean":
        if bool(np.any(x <= 0)):
            return {}
        x, bounds = np.log(x), None
    elif bounds is not None and (x.min() < bounds[0] or x.max() > bounds[1]):
        x = np.clip(x, *bounds)  # values outside would have failed the mean itself
    coverage, reps = mean_coverage(x, method, estimate.confidence, bounds=bounds, seed=seed)
    _, high = _wilson_score(coverage * reps, float(reps), _z(0.95), math.sqrt)
    return {
        "coverage": coverage,
        "coverage_high": min(max(high, coverage), 1.0),
        "coverage_reps": float(reps),
    }


def coverage_floor(confidence: float) -> float:
    """The coverage below which an interval of level ``confidence`` is flagged.

    One point (:data:`COVERAGE_MARGIN`) below the nominal level: 94% at 95%, 89% at 90%,
    98% at 99%. Rounded to six decimals, so that the floor at 95% is ``0.94`` and not
    ``0.9399999999999999``.
    """
    return max(round(confidence - COVERAGE_MARGIN, 6), 0.0)


def _floor_of(measurement: object, floor: float | None) -> float:
    """``floor``, or the floor of the measurement's own confidence level (95% when none)."""
    if floor is not None:
        return floor
    confidence = getattr(measurement, "confidence", None)
    if not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        confidence = 0.95
    return coverage_floor(confidence)


def coverage_flag(measurement: object, floor: float | None = None) -> str | None:
    """A short warning when a measurement's coverage receipt is below ``floor``, else ``None``.

    ``floor`` defaults to :func:`coverage_floor` of the measurement's own ``confidence``: an
    interval is flagged against the level it claims (94% for a 95% interval, 89% for a 90%
    one).

    For tables: exact receipts (proportions) are flagged when ``coverage_min``, the worst
    coverage for any truth inside the interval, is below the floor: the coverage at the
    estimate says nothing at ``p̂ = 0`` (a point truth is always covered, 1.0) although the
    truths the interval finds plausible are covered 84% of the time (0 of 40, Wilson).
    Simulated ones (means, judge corrections) are flagged only when the upper end of their
    Monte Carlo interval (``coverage_high``) is, so that simulation noise alone never raises
    a flag. Anything with an ``extra`` mapping is accepted (a ``Measurement`` or an
    ``Estimate``); one without a receipt gives ``None``.

    Returns:
        e.g. ``"interval covers 83.7% at worst (< 94%)"``,
        ``"interval covers 73.5% simulated (< 94%)"``, or ``None``.
    """
    floor = _floor_of(measurement, floor)
    shortfall = coverage_shortfall(measurement, floor)
    if shortfall is None:
        return None
    return f"interval covers {shortfall} (< {100 * floor:g}%)"


def coverage_shortfall(measurement: object, floor: float | None = None) -> str | None:
    """The coverage :func:`coverage_flag` flags, as text (``"83.7% at worst"``).

    ``floor`` as :func:`coverage_flag`'s. The figure is the one the flag is decided on:
    ``coverage_min`` when the receipt has one (exact receipts, ``"83.7% at worst"``), else
    the simulated ``coverage`` (flagged when even ``coverage_high`` is below the floor:
    ``"73.5% simulated"``), else ``coverage``.

    Returns:
        The receipt's coverage when it is flagged, else ``None``.
    """
    floor = _floor_of(measurement, floor)
    extra = getattr(measurement, "extra", None)
    if not isinstance(extra, Mapping) or "coverage" not in extra:
        return None
    if "coverage_min" in extra:
        shown = worst = float(extra["coverage_min"])
        how = " at worst"
    else:
        shown = float(extra["coverage"])
        worst = float(extra.get("coverage_high", shown))
        how = " simulated" if "coverage_reps" in extra else ""
    if worst >= floor:
        return None
    digits = 1  # never "covers 94.0% (< 94%)": as many digits as show it below the floor
    while digits < 6 and round(100 * shown, digits) >= 100 * floor:
        digits += 1
    return f"{100 * shown:.{digits}f}%{how}"
