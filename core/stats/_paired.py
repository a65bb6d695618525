"""Paired tests and intervals behind :func:`itemscore.compare`, on plain arrays and counts.

Each function is one textbook procedure with its reference in the docstring; the test suite
checks each against statsmodels or scipy (or the worked example of the paper) to 1e-10, the
exact McNemar p-value to 1e-12 up to ten million discordant pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._clusters import _cluster_codes
from ._intervals import _t_bounds, _wilson_score, _z
from ._numbers import _EPS
from ._tally import Tally

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ADJUSTMENTS",
    "adjust_pvalues",
    "beta_posterior_difference",
    "bootstrap_p",
    "connor_mde",
    "exact_floor",
    "is_constant",
    "mcnemar_exact",
    "mcnemar_mde",
    "mcnemar_power",
    "mde",
    "mover",
    "newcombe_paired",
    "paired_t",
    "sign_counts",
    "sign_test",
    "t_interval",
    "wilson_difference",
]

#: Multiple-comparison adjustments of :func:`adjust_pvalues`; the first is the default.
ADJUSTMENTS: tuple[str, ...] = ("holm", "bh", "none")

#: Power the minimum detectable effect is computed for.
POWER = 0.80


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs ``b`` and ``c``.

    Under the null, each of the ``b + c`` discordant pairs goes either way with probability
    1/2: ``p = min(1, 2 · P(X <= min(b, c)))`` with ``X ~ Binomial(b + c, 1/2)``, as
    statsmodels ``mcnemar(table, exact=True)``. No discordant pair gives ``p = 1``.

    ``P(X <= k)`` is the regularized incomplete beta ``I_{1/2}(n - k, k + 1)`` of
    ``scipy.special.betainc`` (Boost's ``ibeta`` from scipy 1.11 on), which agrees with
    statsmodels and ``scipy.stats.binomtest`` to 1e-12 up to ``b + c = 10^7``; cephes'
    ``bdtr`` drifts by up to 4e-8 there. A p-value below the smallest float is 0.0, a real
    number like any other: read it with ``is None``, never with ``or``.
    """
    n = b + c
    k = min(b, c)
    if n == 0 or 2 * k >= n:
        return 1.0
    from scipy.special import betainc

    return float(min(1.0, 2.0 * betainc(n - k, k + 1, 0.5)))


def sign_test(n_plus: int, n_minus: int) -> float:
    """The exact two-sided sign test: ``n_plus`` pairs favour one side, ``n_minus`` the other.

    Pairs without a difference carry no evidence and are left out; the p-value is the exact
    McNemar one of the two counts (:func:`mcnemar_exact`).
    """
    return mcnemar_exact(n_plus, n_minus)


def sign_counts(
    values_a: NDArray[np.float64],
    values_b: NDArray[np.float64],
    codes: NDArray[np.intp] | None = None,
) -> tuple[int, int]:
    """How many pairs (or clusters, with ``codes``) favour b, and how many favour a.

    A pair favours b when ``value_b - value_a > 0`` beyond the rounding of the two values
    (eight units in the last place of the larger); a cluster when the sum of its pairs'
    differences does, beyond the rounding of that sum.
    """
    diffs = values_b - values_a
    noise = 8.0 * _EPS * np.maximum(np.abs(values_a), np.abs(values_b))
    if codes is not None:
        n_clusters = int(codes.max()) + 1 if codes.size else 0
        sizes = np.bincount(codes, minlength=n_clusters)
        noise = np.asarray(np.bincount(codes, weights=noise, minlength=n_clusters) * sizes, float)
        diffs = np.asarray(np.bincount(codes, weights=diffs, minlength=n_clusters), float)
    diffs = np.where(np.abs(diffs) <= noise, 0.0, diffs)
    return int(np.count_nonzero(diffs > 0)), int(np.count_nonzero(diffs < 0))


def exact_floor(n_differing: int) -> float:
    """The smallest two-sided p-value any exact paired test can give on these pairs.

    Under the null that the two models are exchangeable, each of the ``m`` pairs whose two
    scores differ may be swapped: ``2^m`` equally likely relabellings, the observed one and
    its mirror the most extreme, so no exact test (sign test, McNemar, paired permutation) can
    give less than ``2 / 2^m``. Pairs whose scores are equal look the same either way.
    """
    return 1.0 if n_differing <= 1 else min(1.0, 2.0 ** (1 - n_differing))


def is_constant(values: NDArray[np.float64], scale: float) -> bool:
    """Whether ``values`` are all equal up to the rounding of numbers of size ``scale``.

    Per-item scores carry the rounding of the arithmetic that made them: ``(a + 0.1) - a``
    is not the same float for every ``a``. A spread within eight units in the last place of
    ``scale`` (the largest magnitude of the numbers the values came from) is no spread.
    """
    if values.size < 2:
        return True
    return float(np.ptp(values)) <= 8.0 * _EPS * scale


def _wilson(k: float, n: float, confidence: float, z: float | None = None) -> tuple[float, float]:
    quantile = _z(confidence) if z is None else z
    low, high = _wilson_score(k, n, quantile, math.sqrt)
    p = k / n
    return min(max(low, 0.0), p), max(min(high, 1.0), p)


def mover(
    difference: float,
    side_a: tuple[float, float, float],
    side_b: tuple[float, float, float],
) -> tuple[float, float]:
    """The interval of ``value_b - value_a`` from each side's own interval (MOVER, no correlation).

    With ``(v, l, u)`` the value and interval of each side, the bounds are
    ``d - sqrt((v_b - l_b)² + (u_a - v_a)²)`` and ``d + sqrt((u_b - v_b)² + (v_a - l_a)²)``:
    Newcombe's square-and-add (Zou and Donner 2008, "method of variance estimates
    recovery") without the correlation term, which only narrows the interval when the sides
    are positively correlated, as paired scores are. For two Wilson intervals it is
    Newcombe's method 10 with ``φ = 0``.
    """
    va, la, ua = side_a
    vb, lb, ub = side_b
    return (
        difference - math.hypot(vb - lb, ua - va),
        difference + math.hypot(ub - vb, va - la),
    )


def wilson_difference(
    share_a: float, share_b: float, n: float, confidence: float, z: float | None = None
) -> tuple[float, float]:
    """:func:`mover` of the Wilson intervals of two shares in [0, 1] over ``n`` trials each.

    The interval of a paired difference whose pairs show no spread (every pair, or every
    cluster, differs by the same amount): the binomial variance bounds that of any variable
    in [0, 1], so the interval is never too narrow, and never of zero width. ``z``: the
    quantile (default: the normal one of ``confidence``; t(G-1) for ``n = G`` clusters).
    """
    la, ua = _wilson(share_a * n, n, confidence, z)
    lb, ub = _wilson(share_b * n, n, confidence, z)
    low, high = mover(share_b - share_a, (share_a, la, ua), (share_b, lb, ub))
    return max(low, -1.0), min(high, 1.0)


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

    def root(x: float, y: float) -> float:
        return math.sqrt(max(0.0, x**2 - 2 * phi * x * y + y**2))

    low, high = theta - root(p1 - l1, u2 - p2), theta + root(p2 - l2, u1 - p1)
    return theta, max(low, -1.0), min(high, 1.0)


#: Points of the quadrature over the discordant share in :func:`beta_posterior_difference`.
_POSTERIOR_POINTS = 2048


def beta_posterior_difference(
    only_first: int, only_second: int, n: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """The Bayesian interval of a paired difference of proportions, and P(second > first).

    The four cells of the paired table get the Jeffreys prior Dirichlet(1/2, 1/2, 1/2, 1/2),
    so their posterior is Dirichlet(cells + 1/2). The difference of the success rates is
    ``δ = π_second - π_first = S·(2Q - 1)`` with ``S = π_first + π_second`` the discordant
    share and ``Q = π_second / S`` the split of the discordant pairs; by the neutrality of the
    Dirichlet they are independent, ``S ~ Beta(b + c + 1, n - b - c + 1)`` and
    ``Q ~ Beta(c + 1/2, b + 1/2)`` (``b = only_first``, ``c = only_second``). Then

        ``P(second > first) = P(Q > 1/2)``, and ``P(δ <= t) = E_S[F_Q((1 + t/S) / 2)]``,

    the expectation taken by the midpoint rule on 2,048 quantiles of ``S``; the interval's
    ends are the ``(1 ∓ confidence)/2`` quantiles of ``δ``, solved by bisection. Agrees with a
    million Dirichlet draws to their Monte Carlo error (tests). Deterministic: no seed.

    Returns:
        ``(low, high, p_second_better)``.
    """
    from scipy.special import betainc, betaincinv

    b, c = float(only_first), float(only_second)
    u = (np.arange(_POSTERIOR_POINTS) + 0.5) / _POSTERIOR_POINTS
    shares = betaincinv(b + c + 1.0, n - b - c + 1.0, u)
    a_q, b_q = c + 0.5, b + 0.5
    better = float(1.0 - betainc(a_q, b_q, 0.5))

    alpha = (1.0 - confidence) / 2.0
    levels = np.array([alpha, 1.0 - alpha])
    lo, hi = np.full(2, -1.0), np.full(2, 1.0)
    for _ in range(48):  # both ends at once, to 1e-14
        mid = 0.5 * (lo + hi)
        x = np.clip((1.0 + mid[:, None] / shares[None, :]) / 2.0, 0.0, 1.0)
        below = betainc(a_q, b_q, x).mean(axis=1) < levels
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    ends = 0.5 * (lo + hi)
    return float(ends[0]), float(ends[1]), better


def paired_t(
    differences: Tally, confidence: float = 0.95
) -> tuple[float, float, float, float, float]:
    """Paired t interval and two-sided p-value of the mean of ``differences`` (a tally).

    ``d̄ ± t(n-1) · s_d / sqrt(n)`` and ``p = 2 · P(T > |d̄ / (s_d / sqrt(n))|)``, as
    ``scipy.stats.ttest_rel(b, a)`` (``n >= 2`` and ``s_d > 0``). The differences come as a
    :class:`~itemscore.stats._tally.Tally`, so that pairs counted part by part give the same
    numbers as pairs held at once.

    Returns:
        ``(mean, se, low, high, p)``.
    """
    n = differences.n
    mean, sd = differences.mean_sd()
    se = sd / math.sqrt(n)
    return (mean, se, *t_interval(mean, se, n - 1, confidence))


def t_interval(mean: float, se: float, df: int, confidence: float) -> tuple[float, float, float]:
    """``mean ± t(df)·se`` and the two-sided p-value of ``t = mean / se``: ``(low, high, p)``."""
    from scipy.special import stdtr

    t_low, t_high = _t_bounds(df, confidence)
    p = float(2.0 * stdtr(df, -abs(mean / se)))
    return mean + t_low * se, mean + t_high * se, p


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


#: Expected discordant pairs up to which :func:`mcnemar_mde` solves the exact power; above,
#: Connor's closed form, its large-sample limit, is within 0.4% of it and costs nothing.
EXACT_POWER_LIMIT = 10_000


def _rejection_edges(m: NDArray[np.int64], alpha: float) -> NDArray[np.int64]:
    """Per number of discordant pairs ``m``, the largest ``r`` the exact test rejects at.

    The two-sided exact McNemar test at level ``alpha`` rejects when the smaller side ``k``
    has ``2 · P(X <= k) < alpha`` (``X ~ Binomial(m, 1/2)``, the rule ``p < alpha`` of
    :attr:`Comparison.significant`): for ``k <= r``. ``-1`` where no split is significant.
    Starts from the normal approximation and steps to the exact edge, all ``m`` at once.
    """
    from scipy.special import betainc

    def below(r: NDArray[np.int64]) -> NDArray[np.bool_]:
        inside = (r >= 0) & (2 * r < m)
        cdf = betainc(np.where(inside, m - r, 1), np.where(inside, r + 1, 1), 0.5)
        return np.asarray(inside & (cdf < alpha / 2), dtype=np.bool_)

    z = _z(1.0 - alpha)
    guess = np.floor(m / 2 - z * np.sqrt(m) / 2 - 0.5).astype(np.int64)
    r = np.clip(guess, -1, np.maximum((m - 1) // 2, -1))
    while True:
        up = below(r + 1)
        if not up.any():
            break
        r = r + up
    while True:
        down = (r >= 0) & ~below(r)
        if not down.any():
            break
        r = r - down
    return r


def mcnemar_power(n: int, discordant_share: float, difference: float, confidence: float) -> float:
    """The exact power of the two-sided exact McNemar test (:func:`mcnemar_exact`).

    ``n`` pairs, each discordant with probability ``ψ = discordant_share``, and ``δ =
    difference`` the true difference of the two success rates, the share of pairs only the
    candidate gets right minus the share only the baseline does (``|δ| <= ψ``).
    The number of discordant pairs is ``M ~ Binomial(n, ψ)``; given ``M = m``, the pairs
    favouring the candidate are ``K ~ Binomial(m, q)`` with ``q = (ψ + δ) / (2ψ)``, and the
    test rejects when ``min(K, m - K) <= r_m`` (:func:`_rejection_edges`). So

        ``power = Σ_m P(M = m) · (P(K <= r_m) + P(K >= m - r_m))``,

    both binomial tails from ``scipy.special.betainc``, over the ``m`` within 8 standard
    deviations of ``nψ`` (the rest weighs less than 1e-14).
    """
    if n <= 0 or discordant_share <= 0.0:
        return 0.0
    return _power_curve(n, discordant_share, confidence)(abs(difference))


def _power_curve(n: int, psi: float, confidence: float) -> Callable[[float], float]:
    """:func:`mcnemar_power` of one ``(n, ψ)`` as a function of ``δ``.

    The likely numbers of discordant pairs ``m``, their binomial probabilities and the
    rejection edges are found once; each ``δ`` then costs two ``betainc`` calls.
    """
    from scipy.special import betainc

    sd = math.sqrt(n * psi * (1.0 - psi))
    lo = max(0, math.floor(n * psi - 8.0 * sd) - 2)
    hi = min(n, math.ceil(n * psi + 8.0 * sd) + 2)
    m = np.arange(lo, hi + 1, dtype=np.int64)

    def cdf(k: NDArray[np.int64]) -> NDArray[np.float64]:
        inside = (k >= 0) & (k < n)
        values = betainc(np.where(inside, n - k, 1), np.where(inside, k + 1, 1), 1.0 - psi)
        return np.asarray(np.where(k >= n, 1.0, np.where(inside, values, 0.0)), np.float64)

    weights = cdf(m) - cdf(m - 1)
    edges = _rejection_edges(m, 1.0 - confidence)
    live = edges >= 0
    mm, rr, weights = m[live], edges[live], weights[live]

    def power(delta: float) -> float:
        q = min(1.0, (psi + delta) / (2.0 * psi))
        tails = betainc(mm - rr, rr + 1, 1.0 - q) + betainc(mm - rr, rr + 1, q)
        return float(np.dot(weights, tails))

    return power


def connor_mde(n: int, discordant_share: float, confidence: float, power: float = POWER) -> float:
    """Connor's (1987) minimum detectable difference for McNemar's test.

    Connor's sample size ``n = (z_a·sqrt(ψ) + z_b·sqrt(ψ - δ²))² / δ²`` (``z_a`` the
    two-sided normal quantile of ``confidence``, ``z_b`` that of ``power``, ``ψ`` the share of
    discordant pairs) solved for ``δ``:
    ``δ = sqrt(ψ) · (√n·z_a + z_b·sqrt(n - z_a² + z_b²)) / (n + z_b²)``.

    Connor, R. J. (1987). Sample size for testing differences in proportions for the
    paired-sample design. Biometrics 43, 207-211.
    """
    from statistics import NormalDist

    za, zb = _z(confidence), NormalDist().inv_cdf(power)
    root = math.sqrt(max(n - za * za + zb * zb, 0.0))
    return math.sqrt(discordant_share) * (math.sqrt(n) * za + zb * root) / (n + zb * zb)


def mcnemar_mde(n: int, discordant: int, confidence: float, power: float = POWER) -> float | None:
    """The smallest true difference the exact McNemar test detects with ``power``.

    ``n`` pairs of which ``discordant`` disagree; the share ``ψ = discordant / n`` is taken
    as the truth, and the MDE is the ``δ`` whose :func:`mcnemar_power` is ``power``. Only ``ψ``
    enters, never the observed difference: a difference of the success rates moves pairs
    from one discordant cell to the other, not out of the discordant ones. ``δ`` cannot
    exceed ``ψ`` (every discordant pair one way); when even that is detected with less than
    ``power`` (20 pairs, 3 discordant: at least 6 are needed for any ``p < 0.05``), there is no
    MDE: ``None``. Above :data:`EXACT_POWER_LIMIT` expected discordant pairs,
    :func:`connor_mde`.
    """
    if n <= 0 or discordant <= 0:
        return None
    psi = discordant / n
    if n * psi > EXACT_POWER_LIMIT:
        return min(connor_mde(n, psi, confidence, power), psi)
    power_of = _power_curve(n, psi, confidence)

    def gap(delta: float) -> float:
        return power_of(delta) - power

    hi, f_hi = psi, gap(psi)
    if f_hi < 0.0:
        return None
    lo, f_lo = 0.0, gap(0.0)
    if f_lo >= 0.0:  # only at a level so lax that chance alone rejects: detect anything
        return 0.0
    # Illinois regula falsi: power is smooth and increasing in δ, so it brackets and converges
    # in a few evaluations where bisection would need forty.
    side = 0
    for _ in range(100):
        mid = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2.0
        f_mid = gap(mid)
        if f_mid >= 0.0:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2.0
            side = 1
        else:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2.0
            side = -1
        if hi - lo <= 1e-12 * psi or abs(f_mid) < 1e-13:
            break
    return hi


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


def bootstrap_p(diffs: NDArray[np.float64], n_differing: int | None = None) -> float:
    """Two-sided bootstrap p-value of ``difference = 0``: twice the smaller tail share.

    ``p = min(1, 2 · min(1 + #(d <= 0), 1 + #(d >= 0)) / (B + 1))`` over the ``B`` resampled
    differences: below ``alpha`` exactly when 0 lies outside the percentile interval (up to the
    ``+1``, which keeps ``p`` above 0 for a finite number of resamples). With
    ``n_differing`` (the pairs whose two scores differ), never below :func:`exact_floor`:
    resamples of five pairs can all favour one side although no test on five pairs can give
    less than 1/16.
    """
    b = diffs.size
    below = int(np.count_nonzero(diffs <= 0.0))
    above = int(np.count_nonzero(diffs >= 0.0))
    p = min(1.0, 2.0 * (1 + min(below, above)) / (b + 1))
    return p if n_differing is None else max(p, exact_floor(n_differing))


def cluster_codes(clusters: Sequence[str | None]) -> tuple[NDArray[np.intp], int]:
    """Integer codes per item and the number of clusters (``None``: a cluster of its own)."""
    return _cluster_codes(clusters, len(clusters))
