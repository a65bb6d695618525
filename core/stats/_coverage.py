"""Coverage receipts: how often an interval of each kind covers the truth, here.

Exact for proportions (sums of binomial probabilities over the counts), simulated for means
(resamples of the values taken as the population); and the flags tables raise when a receipt
falls below the floor of its level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._exceptions import ConfigError
from . import _intervals
from ._bootstrap import _BOOTSTRAP_BLOCK, _COUNTED_ADVANTAGE
from ._estimate import Estimate
from ._intervals import _wilson_score, _z
from ._intervals import check as _check_method
from ._mean import _auto_mean_method, _spread_bounds
from ._numbers import (
    _EPS,
    _as_values,
    _check_bounds,
    _check_confidence,
    _check_positive_int,
    _check_seed,
)
from ._ratio import auto_ratio_method, ratio, ratio_interval
from ._tally import Tally

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: How far below its nominal level a receipt may fall before it is flagged: one point
#: (:func:`coverage_floor`).
COVERAGE_MARGIN = 0.01
#: The floor at the default 95% level (:func:`coverage_floor` of 0.95).
COVERAGE_FLOOR = 0.94


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


def _window(
    n: int, p_low: float, p_high: float, method: str, confidence: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The counts ``k`` that carry all but 1e-22 of ``Binomial(n, p)`` for p in the range.

    With the bounds of ``method``'s interval at each (``auto``: the method it takes at ``n``).
    """
    worst = 0.25 if p_low <= 0.5 <= p_high else max(p * (1 - p) for p in (p_low, p_high))
    sd = math.sqrt(n * worst)
    lo = max(0, math.floor(n * p_low - _COVERAGE_SDS * sd) - 1)
    hi = min(n, math.ceil(n * p_high + _COVERAGE_SDS * sd) + 1)
    k = np.arange(lo, hi + 1, dtype=np.float64)
    if method == "auto":
        method = auto_ratio_method(n)[0]
    low, high = ratio_interval(k, np.full(k.shape, float(n)), method, confidence)
    # Monotone in k for every method (the Wald bounds after clipping too); rounding in the
    # last place is smoothed so that the search in :func:`_covering` stays exact.
    return k, np.maximum.accumulate(low), np.maximum.accumulate(high)


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
    # The last L(k) <= p (L(k) < p from below) and the first U(k) >= p (U(k) > p from above).
    last = np.searchsorted(low, p, side="left" if side < 0 else "right") - 1
    first = np.searchsorted(high, p, side="right" if side > 0 else "left")
    k_last = np.where(last >= 0, k[np.clip(last, 0, k.size - 1)], k[0] - 1.0)
    k_first = np.where(first < k.size, k[np.clip(first, 0, k.size - 1)], k[-1] + 1.0)
    mass = _binomial_cdf(k_last, n, p) - _binomial_cdf(k_first - 1.0, n, p)
    return np.asarray(np.where(k_first <= k_last, np.clip(mass, 0.0, 1.0), 0.0), np.float64)


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
    k, low, high = _window(n, float(shares.min()), float(shares.max()), method, confidence)
    return _covering(k, low, high, n, shares.ravel()).reshape(shares.shape)


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
    low, high = float(low), float(high)
    k, lows, highs = _window(n, low, high, method, confidence)
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
        spread = _spread_bounds(m, sd / math.sqrt(n), n, method, confidence)
        return _bounded(*spread, m, constant, n, confidence, bounds)
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
    spread = _spread_bounds(m, sd / math.sqrt(n), n, method, confidence)
    return _bounded(*spread, m, constant, n, confidence, bounds)


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
    (``numpy.random.default_rng((seed, 22))``, drawing from the values in ascending order, so
    the same values in any order and the same seed give the same receipt), computes each
    sample's interval by ``method`` (with ``bounds``, clipped and with the Wilson bound when a
    sample does not vary, as :func:`mean` does) and counts how often it contains the mean of
    ``values``: the coverage the interval has if the data look like the sample. Bootstrap and
    BCa intervals are simulated with :data:`COVERAGE_INNER_RESAMPLES` resamples each.
    Repetitions default to :data:`COVERAGE_REPETITIONS`, fewer when a sample is so large that
    they would draw more than 4.2 million values (at least 100); samples are drawn in blocks
    of about a million values, so memory stays bounded. A normal or t interval of values with
    at most ``n / 8`` distinct ones is simulated from multinomial counts of the distinct values
    (the same distribution of resamples), and the budget counts distinct values instead of
    ``n``.

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
    if x.size < 2:
        raise ConfigError(f"Simulated coverage needs at least two values, got {x.size}.")
    if repetitions is not None:
        repetitions = _check_positive_int(repetitions, "repetitions")
    return _tally_coverage(Tally.of(x), method, confidence, checked, seed, repetitions)


def _tally_coverage(
    tally: Tally,
    method: str,
    confidence: float,
    bounds: tuple[float, float] | None,
    seed: int,
    repetitions: int | None = None,
) -> tuple[float, int]:
    """:func:`mean_coverage` of the values ``tally`` counts (arguments checked, n >= 2).

    The samples are drawn from the values in ascending order (a tally keeps no other), or as
    multinomial counts of the distinct values when there are few (at most ``n / 8``).
    """
    n = tally.n
    scale = tally.scale
    distinct = tally.values / scale if scale != 1.0 else tally.values
    mean, sd = tally.mean_sd()
    m = mean / scale
    bounds_y = None if bounds is None else (bounds[0] / scale, bounds[1] / scale)
    if method == "auto":
        method = _auto_mean_method(m, sd / scale, n, bounds_y)[0]
    rng = np.random.default_rng((seed, 22))
    resampled = _intervals.METHODS[method].bootstrap is not None
    if resampled or distinct.size * _COUNTED_ADVANTAGE > n:
        y = np.repeat(distinct, tally.counts)
        per_draw = n * (COVERAGE_INNER_RESAMPLES + 1 if resampled else 1)

        def intervals(rows: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            samples = y[rng.integers(0, n, size=(rows, n))]
            return _simulated_intervals(samples, method, confidence, bounds_y, rng)

    else:
        # Drawing n values with replacement and counting each distinct one is one
        # multinomial draw with the values' shares: the same resamples, d draws each.
        shares = tally.counts / n
        per_draw = int(distinct.size)

        def intervals(rows: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            drawn = rng.multinomial(n, shares, size=rows)
            return _counted_intervals(distinct, drawn, m, method, confidence, bounds_y)

    if repetitions is None:
        repetitions = int(
            min(COVERAGE_REPETITIONS, max(_MIN_REPETITIONS, _COVERAGE_DRAWS // per_draw))
        )
    block = max(1, _BOOTSTRAP_BLOCK // per_draw)
    # The population mean sits on a bound of a sample interval only by rounding.
    tol = 4.0 * _EPS * max(1.0, abs(m))
    hits = 0
    for start in range(0, repetitions, block):
        low, high = intervals(min(block, repetitions - start))
        hits += int(np.count_nonzero((low <= m + tol) & (m - tol <= high)))
    return hits / repetitions, repetitions


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
    return _receipt_of(*mean_coverage(x, method, estimate.confidence, bounds=bounds, seed=seed))


def tally_receipt(
    estimate: Estimate, tally: Tally, bounds: tuple[float, float] | None, seed: int
) -> dict[str, float]:
    """:func:`coverage_receipt` of a mean made of the values ``tally`` counts (within bounds)."""
    if estimate.value is None or estimate.low is None or estimate.high is None:
        return {}
    method = _base_method(estimate.method)
    if tally.n < 2 or method not in _intervals.names("mean"):
        return {}
    return _receipt_of(*_tally_coverage(tally, method, estimate.confidence, bounds, seed))


def _receipt_of(coverage: float, reps: int) -> dict[str, float]:
    """A simulated coverage and its repetitions as a receipt, with its Monte Carlo bound."""
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
