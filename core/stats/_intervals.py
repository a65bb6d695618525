"""The table of interval methods: one entry per method, everything else reads it.

Each :class:`IntervalMethod` in :data:`METHODS` carries the bounds of a method (for a proportion,
a mean or both, scalar and over arrays), the name tables show and a line of documentation.
:mod:`itemscore.aggregate` computes with it, the command line lists its names and help, the
reports show its display names and Every Eval Ever files take the kind of aggregate from it.
Adding a method is one entry here (and its row in docs/aggregation.md). ``auto`` is not an
entry: it is the rule in :mod:`itemscore.aggregate` that picks one entry by the data.

This module sits low: it imports numpy, scipy (lazily, only for the methods that need a beta
or t quantile) and the exceptions, nothing else of the package.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from .._exceptions import ConfigError, did_you_mean, one_of

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: The name of the rule that chooses a method by the data (not an entry of :data:`METHODS`).
AUTO = "auto"


class Level(NamedTuple):
    """A confidence level in the three forms the bounds use."""

    #: The confidence level, in (0, 1).
    confidence: float
    #: The two-sided quantile (normal, or Student t for clusters).
    z: float
    #: The probability of each tail, ``(1 - confidence) / 2`` (or the normal tail of ``z``).
    tail: float


def level(confidence: float) -> Level:
    """The :class:`Level` of a checked ``confidence``: the normal quantile and tails."""
    return Level(confidence, _z(confidence), (1.0 - confidence) / 2.0)


#: ``(k, n, level) -> (low, high)``, unclipped, ``n`` positive: floats or float64 arrays.
RatioBounds = Callable[[Any, Any, Level], tuple[Any, Any]]
#: ``(degrees of freedom, confidence) -> (q_low, q_high)``: a mean's interval is ``m + q·se``.
SpreadQuantiles = Callable[[int, float], tuple[float, float]]
#: ``(distinct values, their counts, mean, bootstrap means, confidence) -> (low, high)``.
BootstrapBounds = Callable[
    ["NDArray[np.float64]", "NDArray[np.int64]", float, "NDArray[np.float64]", float],
    tuple[float, float],
]
#: ``(samples, row means, bootstrap means per row, confidence) -> (lows, highs)``.
BootstrapRows = Callable[
    ["NDArray[np.float64]", "NDArray[np.float64]", "NDArray[np.float64]", float],
    tuple["NDArray[np.float64]", "NDArray[np.float64]"],
]


@dataclass(frozen=True)
class IntervalMethod:
    """One interval method: its bounds for each kind of aggregate, its names and its doc.

    A proportion method gives ``ratio_array`` (and ``ratio``, a faster scalar form, or the
    array form on 0-d arrays serves); a mean method either ``spread`` (an interval
    ``m + q·se``, which geometric means use too, on the logs) or ``bootstrap`` and
    ``bootstrap_rows`` (from resampled means).
    """

    #: How tables name the method.
    display: str
    #: One line for the help and the docs.
    doc: str
    ratio: RatioBounds | None = None
    ratio_array: RatioBounds | None = None
    spread: SpreadQuantiles | None = None
    bootstrap: BootstrapBounds | None = None
    bootstrap_rows: BootstrapRows | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The aggregates that take the method: ``"ratio"``, ``"mean"``, ``"geomean"``."""
        kinds = ("ratio",) if self.ratio_array is not None else ()
        if self.spread is not None:
            return (*kinds, "mean", "geomean")
        return (*kinds, "mean") if self.bootstrap is not None else kinds


def names(kind: str) -> tuple[str, ...]:
    """The methods of ``kind`` in table order, then ``auto``; the first is the default."""
    return (*(name for name, method in METHODS.items() if kind in method.kinds), AUTO)


def check(method: object, kind: str) -> str:
    """``method`` when it is a method of ``kind`` (or ``auto``).

    Raises:
        ConfigError: it is not; the message lists the methods and the closest one.
    """
    choices = names(kind)
    if isinstance(method, str) and method in choices:
        return method
    hint = did_you_mean(method, choices) if isinstance(method, str) else ""
    raise ConfigError(f"`method` ({method!r}) must be one of {one_of(choices)}.{hint}")


def ratio_bounds(method: str, *, array: bool = False) -> RatioBounds:
    """The scalar (or array) proportion bounds of a checked method that is not ``auto``."""
    entry = METHODS[method]
    bounds = entry.ratio_array
    if bounds is None:
        raise ConfigError(f"The interval method {method!r} has no bounds for a proportion.")
    if array or entry.ratio is not None:
        return bounds if array else entry.ratio  # type: ignore[return-value]

    def scalar(k: float, n: float, at: Level) -> tuple[float, float]:
        lows, highs = bounds(np.asarray(k), np.asarray(n), at)
        return float(lows), float(highs)

    return scalar


# --------------------------------------------------------------------------- quantiles


@functools.lru_cache(maxsize=64)
def _z(confidence: float) -> float:
    """The two-sided normal quantile ``z`` with ``P(|Z| <= z) = confidence``.

    ``statistics.NormalDist`` (Wichura's AS 241, relative error below 1e-15 against
    ``scipy.special.ndtri``) keeps scipy out of the Wilson/Wald/Agresti-Coull path.
    """
    return -NormalDist().inv_cdf((1.0 - confidence) / 2.0)


def _t_bounds(df: int, confidence: float) -> tuple[float, float]:
    """Lower and upper t quantiles of a central interval, as ``scipy.stats.t.interval`` does."""
    from scipy.special import stdtrit

    return (
        float(stdtrit(df, (1.0 - confidence) / 2.0)),
        float(stdtrit(df, (1.0 + confidence) / 2.0)),
    )


def _normal_quantiles(df: int, confidence: float) -> tuple[float, float]:
    z = _z(confidence)
    return -z, z


# --------------------------------------------------------------------------- proportions

_Num = TypeVar("_Num", float, "NDArray[np.float64]")


def _wilson_score(k: _Num, n: _Num, z: float, sqrt: Callable[[_Num], _Num]) -> tuple[_Num, _Num]:
    """Wilson bounds, unclipped, for scalars (``math.sqrt``) or arrays (``np.sqrt``) alike.

    One formula serves both, so that the scalar and array paths can never disagree. ``n``
    must be positive. ``z`` is the quantile itself (normal, or Student t for clusters), never a
    confidence level: turning a t quantile into a normal level loses it to rounding (12.7 for
    2 clusters is a level of 1 - 6e-37, which is 1.0 in floating point).
    """
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    dist = z * sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    return center - dist, center + dist


def _wald(k: _Num, n: _Num, z: float, sqrt: Callable[[_Num], _Num]) -> tuple[_Num, _Num]:
    """Wald bounds, unclipped, as :func:`_wilson_score`."""
    p = k / n
    dist = z * sqrt(p * (1.0 - p) / n)
    return p - dist, p + dist


def _agresti_coull(k: _Num, n: _Num, z: float, sqrt: Callable[[_Num], _Num]) -> tuple[_Num, _Num]:
    """Agresti-Coull bounds: Wald around the shifted share, with z² more trials."""
    z2 = z * z
    n_c = n + z2
    p_c = (k + z2 / 2.0) / n_c
    dist = z * sqrt(p_c * (1.0 - p_c) / n_c)
    return p_c - dist, p_c + dist


def _closed(
    form: Callable[[Any, Any, float, Callable[[Any], Any]], tuple[Any, Any]],
) -> tuple[RatioBounds, RatioBounds]:
    """The scalar (``math.sqrt``) and array (``np.sqrt``) bounds of a closed form."""

    def bounds(sqrt: Callable[[Any], Any]) -> RatioBounds:
        return lambda k, n, at: form(k, n, at.z, sqrt)

    return bounds(math.sqrt), bounds(np.sqrt)


def _midp_array(
    k: NDArray[np.float64], n: NDArray[np.float64], at: Level
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The exact mid-p interval of ``k`` successes in ``n`` trials, element by element.

    With ``g(p) = P(X > k) + P(X = k)/2`` for ``X ~ Binomial(n, p)`` (increasing in ``p``),
    the lower end solves ``g(L) = alpha/2`` and the upper end ``g(U) = 1 - alpha/2``; ``L = 0``
    at ``k = 0`` and ``U = 1`` at ``k = n`` (Lancaster 1961; Agresti and Gottard 2007). The
    tails are regularized incomplete betas, ``P(X >= j) = I_p(j, n - j + 1)``, which extend to
    the fractional ``n`` of an effective sample size. Solved by bisection on all elements at
    once, to the last bit.
    """
    from scipy.special import betainc

    alpha = (1.0 - at.confidence) / 2.0
    k, n = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64))
    at_zero, at_n = k <= 0.0, k >= n
    # Stand-in shape parameters where a tail is fixed (P(X >= 0) = 1, P(X > n) = 0) keep
    # betainc's arguments positive.
    a_least, b_least = np.where(at_zero, 1.0, k), np.where(at_zero, 1.0, n - k + 1.0)
    a_above, b_above = np.where(at_n, 1.0, k + 1.0), np.where(at_n, 1.0, n - k)

    def g(p: NDArray[np.float64]) -> NDArray[np.float64]:
        at_least = np.where(at_zero, 1.0, betainc(a_least, b_least, p))
        above = np.where(at_n, 0.0, betainc(a_above, b_above, p))
        return np.asarray(0.5 * (at_least + above), np.float64)

    def solve(target: float) -> NDArray[np.float64]:
        lo = np.zeros(k.shape)
        hi = np.ones(k.shape)
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            below = g(mid) < target
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        return 0.5 * (lo + hi)

    low = np.where(at_zero, 0.0, solve(alpha))
    high = np.where(at_n, 1.0, solve(1.0 - alpha))
    return np.asarray(low, np.float64), np.asarray(high, np.float64)


# Beta quantiles: ``at.tail`` is the probability of each tail, ``(1 - confidence) / 2``:
# passing the tail itself, not the confidence, keeps a tail of 1e-40 (a t quantile of 2
# clusters) exact. The upper quantile is taken from the mirrored distribution
# (1 - X ~ Beta(b, a)), which is as accurate as the complement and works with every scipy the
# package supports.


def _clopper_pearson_array(
    k: NDArray[np.float64], n: NDArray[np.float64], at: Level
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    from scipy.special import betaincinv

    at_zero = k == 0
    at_n = k == n
    # Stand-in shape parameters where a beta quantile is undefined (a = 0 or b = 0); the
    # bound there is fixed to 0 or 1 afterwards, as statsmodels does.
    low = betaincinv(np.where(at_zero, 1.0, k), n - k + 1.0, at.tail)
    high = 1.0 - betaincinv(np.where(at_n, 1.0, n - k), k + 1.0, at.tail)
    low = np.where(at_zero, 0.0, low)
    high = np.where(at_n, 1.0, high)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def _jeffreys_array(
    k: NDArray[np.float64], n: NDArray[np.float64], at: Level
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    from scipy.special import betaincinv

    low = betaincinv(k + 0.5, n - k + 0.5, at.tail)
    high = 1.0 - betaincinv(n - k + 0.5, k + 0.5, at.tail)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


# --------------------------------------------------------------------------- bootstrap


def _percentile_bounds(values: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """numpy's linear percentiles ``(1 - confidence)/2`` and ``(1 + confidence)/2``."""
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(values, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(low), float(high)


def _percentile(
    values: NDArray[np.float64],
    counts: NDArray[np.int64],
    m: float,
    means: NDArray[np.float64],
    confidence: float,
) -> tuple[float, float]:
    return _percentile_bounds(means, confidence)


def _bca_interval(
    values: NDArray[np.float64],
    counts: NDArray[np.int64],
    m: float,
    means: NDArray[np.float64],
    confidence: float,
) -> tuple[float, float]:
    """The BCa interval of the mean from its bootstrap ``means`` (Efron 1987).

    As ``scipy.stats.bootstrap(method="BCa")``: the bias correction ``z0 = Φ⁻¹(share of
    resampled means below m, ties counting half)``, the acceleration
    ``a = Σ d³ / (6 (Σ d²)^1.5)`` from the jackknife means' deviations ``d`` from their mean,
    and the percentiles ``Φ(z0 + (z0 + z)/(1 - a(z0 + z)))`` of the resampled means for
    ``z = ±Φ⁻¹(1 - alpha/2)``. When every resampled mean is on one side of ``m`` (``z0``
    infinite) the interval is the range of the resampled means and ``m``.
    """
    from scipy.special import ndtri

    b = means.size
    share = (np.count_nonzero(means < m) + np.count_nonzero(means <= m)) / (2.0 * b)
    if not 0.0 < share < 1.0:
        return min(float(means.min()), m), max(float(means.max()), m)
    z0 = float(ndtri(share))
    weights = counts.astype(np.float64)
    n = float(weights.sum())
    jack = (float(np.dot(weights, values)) - values) / (n - 1)  # leaving out one of each value
    d = float(np.dot(weights, jack)) / n - jack
    ss = float(np.dot(weights, d * d))
    accel = float(np.dot(weights, d**3)) / (6.0 * ss**1.5) if ss > 0.0 else 0.0
    tails = _bca_tails(z0, accel, (1.0 - confidence) / 2.0)
    low, high = np.percentile(means, [100.0 * float(tails[0]), 100.0 * float(tails[1])])
    return float(low), float(high)


def _bca_tails(z0: _Num, accel: _Num, alpha: float) -> list[_Num]:
    """BCa's percentiles ``Φ(z0 + (z0 + z)/(1 - a(z0 + z)))`` for ``z = ±Φ⁻¹(alpha)``."""
    from scipy.special import ndtr, ndtri

    z = float(ndtri(alpha))
    return [ndtr(z0 + (z0 + q) / (1.0 - accel * (z0 + q))) for q in (z, -z)]


def _bootstrap_rows(
    samples: NDArray[np.float64],
    m: NDArray[np.float64],
    boot: NDArray[np.float64],
    confidence: float,
    *,
    bca: bool,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile or BCa intervals of many samples at once (:func:`_bca_interval` per row).

    ``boot[r]`` holds the bootstrap means of ``samples[r]``, whose own mean is ``m[r]``.
    """
    from scipy.special import ndtri

    rows, b = boot.shape
    alpha = (1.0 - confidence) / 2.0
    tails = np.tile([alpha, 1.0 - alpha], (rows, 1))
    degenerate = np.zeros(rows, dtype=bool)
    if bca:
        n = samples.shape[1]
        below = np.count_nonzero(boot < m[:, None], axis=1)
        at_most = np.count_nonzero(boot <= m[:, None], axis=1)
        share = (below + at_most) / (2.0 * b)
        degenerate = (share <= 0.0) | (share >= 1.0)
        z0 = ndtri(np.clip(share, 1e-300, 1.0 - 1e-16))
        jack = (samples.sum(axis=1, keepdims=True) - samples) / (n - 1)
        d = jack.mean(axis=1, keepdims=True) - jack
        ss = np.sum(d * d, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            accel = np.where(ss > 0.0, np.sum(d**3, axis=1) / (6.0 * ss**1.5), 0.0)
        tails[:, 0], tails[:, 1] = _bca_tails(z0, accel, alpha)
    ordered = np.sort(boot, axis=1)
    # numpy's linear percentile, row by row: the value at rank q·(B - 1), interpolated.
    rank = tails * (b - 1)
    below_rank = np.clip(np.floor(rank).astype(np.intp), 0, b - 1)
    above_rank = np.clip(below_rank + 1, 0, b - 1)
    weight = rank - below_rank
    lower = np.take_along_axis(ordered, below_rank, axis=1)
    upper = np.take_along_axis(ordered, above_rank, axis=1)
    bounds = lower + weight * (upper - lower)
    low = np.where(degenerate, np.minimum(ordered[:, 0], m), bounds[:, 0])
    high = np.where(degenerate, np.maximum(ordered[:, -1], m), bounds[:, 1])
    return low, high


# --------------------------------------------------------------------------- the table

_WILSON, _WALD, _AGRESTI_COULL = map(_closed, (_wilson_score, _wald, _agresti_coull))

#: Every interval method, by name, in the order help and errors list them; for each kind of
#: aggregate the first that takes it is its default. Fields: display name, doc line, bounds.
METHODS: dict[str, IntervalMethod] = {
    "wilson": IntervalMethod(
        "Wilson", "the Wilson score interval of a proportion (the default)", *_WILSON
    ),
    "normal": IntervalMethod(
        "normal",
        "the normal interval: Wald's p ± z·se for a proportion, m ± z·se for a mean",
        *_WALD,
        spread=_normal_quantiles,
    ),
    "clopper-pearson": IntervalMethod(
        "Clopper-Pearson",
        "the exact interval of a proportion from beta quantiles; never covers less than its level",
        ratio_array=_clopper_pearson_array,
    ),
    "jeffreys": IntervalMethod(
        "jeffreys",
        "the central interval of the Jeffreys Beta(k + 1/2, n - k + 1/2) posterior",
        ratio_array=_jeffreys_array,
    ),
    "agresti-coull": IntervalMethod(
        "agresti-coull",
        "the Wald interval around (k + z²/2) / (n + z²) over n + z² trials",
        *_AGRESTI_COULL,
    ),
    "mid-p": IntervalMethod(
        "mid-p",
        "the exact mid-p interval of a proportion (binomial tails, the observed count halved)",
        ratio_array=_midp_array,
    ),
    "t": IntervalMethod("t", "the Student t interval of a mean, m ± t(n-1)·se", spread=_t_bounds),
    "bootstrap": IntervalMethod(
        "bootstrap",
        "the percentile bootstrap of a mean (seeded resamples)",
        bootstrap=_percentile,
        bootstrap_rows=functools.partial(_bootstrap_rows, bca=False),
    ),
    "bca": IntervalMethod(
        "bca",
        "the bias-corrected and accelerated (BCa) bootstrap of a mean",
        bootstrap=_bca_interval,
        bootstrap_rows=functools.partial(_bootstrap_rows, bca=True),
    ),
}
