"""Coverage receipts and ``ci_method="auto"``: exact binomial sums, simulations, the grid proof.

The references are computed here from scipy's binomial distribution (the full sum over
``k = 0...n``) and from the definitions, never from the functions under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from itemscore import ItemResult, aggregate, score
from itemscore.aggregate import (
    mean_coverage,
    ratio_coverage,
    ratio_coverage_min,
    ratio_interval,
)

FIXED = ("wilson", "normal", "clopper-pearson", "jeffreys", "agresti-coull", "mid-p")


def _full_sum(n: int, p: np.ndarray, method: str, confidence: float = 0.95) -> np.ndarray:
    """``Σ_{k=0..n} Binom(k; n, p)·1[L(k) <= p <= U(k)]`` with scipy's pmf, every k."""
    k = np.arange(n + 1)
    low, high = ratio_interval(k, np.full(n + 1, n), method, confidence)
    pmf = scipy.stats.binom.pmf(k[None, :], n, p[:, None])
    inside = (low[None, :] <= p[:, None]) & (p[:, None] <= high[None, :])
    return np.asarray((pmf * inside).sum(axis=1))


@pytest.mark.parametrize("method", [*FIXED, "auto"])
@pytest.mark.parametrize("n", [1, 2, 5, 14, 39, 40, 101, 1000])
def test_exact_coverage_equals_the_full_binomial_sum(n: int, method: str) -> None:
    """The windowed betainc sum equals scipy's full sum over every k to 1e-9 (in fact 1e-14)."""
    p = np.linspace(0.0, 1.0, 201)
    assert np.max(np.abs(ratio_coverage(n, p, method) - _full_sum(n, p, method))) < 1e-9


@pytest.mark.parametrize("confidence", [0.8, 0.99])
def test_exact_coverage_at_other_levels(confidence: float) -> None:
    """The level is the interval's: the sums agree at 80% and 99% too."""
    p = np.linspace(0.005, 0.995, 67)
    for n in (7, 60, 333):
        got = ratio_coverage(n, p, "wilson", confidence)
        assert np.max(np.abs(got - _full_sum(n, p, "wilson", confidence))) < 1e-9


def test_a_run_records_the_exact_receipt() -> None:
    """Each ratio measurement (and each group's) carries the exact coverage at its n and p̂."""
    rng = np.random.default_rng(5)
    items = [
        ItemResult(
            id=str(i),
            output="yes" if rng.random() < 0.8 else "no",
            expected="yes",
            group="a" if i < 23 else "b",
        )
        for i in range(140)
    ]
    for method in ("wilson", "auto"):
        result = score(items, ["exact_match"], ci_method=method)
        for m in (
            result.measurements["default.exact_match"],
            *result.measurements["default.exact_match"].groups.values(),
        ):
            k = m.counts["ok"]
            expected = _full_sum(m.n, np.array([k / m.n]), aggregate._base_method(m.ci_method))
            assert m.extra["coverage"] == pytest.approx(float(expected[0]), abs=1e-9)
            assert m.extra["coverage_min"] <= m.extra["coverage"]
        group_a = result.measurements["default.exact_match"].groups["a"]
        if method == "auto":
            assert group_a.ci_method == "jeffreys (auto: n = 23 < 40)"


@pytest.mark.parametrize(("k", "n", "method"), [(3, 10, "wilson"), (40, 57, "jeffreys"),
                                                (0, 30, "wilson"), (7, 7, "mid-p"),
                                                (12, 200, "clopper-pearson")])  # fmt: skip
def test_the_worst_coverage_inside_the_interval_is_the_infimum(k: int, n: int, method: str) -> None:
    """coverage_min is never above the full sum anywhere in the interval, and is approached."""
    est = aggregate.ratio(k, n, method)
    assert est.low is not None
    assert est.high is not None
    worst = ratio_coverage_min(n, est.low, est.high, method)
    grid = np.linspace(est.low, est.high, 20001)
    dense = _full_sum(n, grid, method)
    assert worst <= float(dense.min()) + 1e-12
    # Just beyond each jump: a grid point 1e-9 past a bound sees the one-sided limit.
    lows, highs = ratio_interval(np.arange(n + 1), np.full(n + 1, n), method)
    jumps = np.concatenate([lows, highs])
    jumps = jumps[(jumps > est.low) & (jumps < est.high)]
    near = np.clip(np.concatenate([jumps - 1e-9, jumps + 1e-9, [est.low, est.high]]), 0, 1)
    assert worst == pytest.approx(float(_full_sum(n, near, method).min()), abs=1e-6)


def test_mean_coverage_is_seeded_and_matches_a_direct_simulation() -> None:
    """The simulated receipt of a t interval equals a loop with scipy's t interval.

    The samples are drawn from the values in ascending order, so the order they are given in
    does not change the receipt.
    """
    x = np.random.default_rng(2).exponential(size=25)
    coverage, reps = mean_coverage(x, "t", seed=4)
    assert (coverage, reps) == mean_coverage(x[::-1], "t", seed=4)
    rng = np.random.default_rng((4, 22))
    hits = 0
    ordered = np.sort(x)
    for _ in range(reps):
        s = ordered[rng.integers(0, x.size, size=(1, x.size))][0]
        low, high = scipy.stats.t.interval(0.95, s.size - 1, s.mean(), scipy.stats.sem(s))
        hits += low <= x.mean() <= high
    assert coverage == hits / reps


def test_the_receipt_of_a_skewed_small_mean_says_it_undercovers() -> None:
    """A normal interval on 12 skewed values covers well below 95%, and is flagged.

    A third of the resamples hold no 1 at all, so their interval has zero width at 0: the
    coverage is at most ``1 - (11/12)^12 = 0.65``.
    """
    x = np.array([0.0] * 11 + [1.0])
    est = aggregate.mean(x, "normal")
    receipt = aggregate.coverage_receipt(est, kind="mean", values=x)
    assert receipt["coverage"] <= 1 - (11 / 12) ** 12 + 0.03
    assert receipt["coverage_high"] < 0.94
    flag = aggregate.coverage_flag(est.__class__(**{**_fields(est), "extra": receipt}))
    assert flag is not None
    assert flag.startswith("interval covers ")
    assert "simulated" in flag


def _fields(est: aggregate.Estimate) -> dict[str, object]:
    return {k: getattr(est, k) for k in ("value", "low", "high", "n", "method", "confidence")}


def test_no_receipt_for_what_it_cannot_vouch_for() -> None:
    """No interval, clusters, or an interval ratio() does not recompute: no receipt."""
    assert aggregate.coverage_receipt(aggregate.Estimate(value=0.5, n=10), kind="ratio") == {}
    clustered = aggregate.cluster_ratio([1, 0, 1, 1], ["a", "a", "b", "b"])
    assert aggregate.coverage_receipt(clustered, kind="ratio") == {}
    made_up = aggregate.Estimate(value=0.5, low=0.1, high=0.9, n=10, method="wilson")
    assert aggregate.coverage_receipt(made_up, kind="ratio") == {}
    assert aggregate.coverage_flag(made_up) is None


# --------------------------------------------------------------------------- the grid proof

#: Shares of the grid: 0.01 ... 0.99.
PS = np.round(np.arange(0.01, 1.0, 0.01), 2)


def local_coverage(n: int, method: str) -> np.ndarray:
    """Locally averaged coverage (Brown, Cai and DasGupta 2002) at each share of :data:`PS`.

    The pointwise coverage of a discrete interval oscillates with p; its average over a window
    of one standard error of p̂, ``p ± sqrt(p(1-p)/n)`` (kept inside (0, 1)), is the coverage
    a user whose truth is only known to that precision gets.
    """
    h = np.minimum(np.sqrt(PS * (1 - PS) / n), np.minimum(PS, 1 - PS))
    grid = PS[:, None] + h[:, None] * np.linspace(-1.0, 1.0, 201)[None, :]
    return np.asarray(ratio_coverage(n, grid, method).mean(axis=1))


def _grid_summary(ns: list[int], method: str) -> tuple[float, float]:
    """The lowest local coverage anywhere, and the highest where 94-96% can be asked for."""
    lowest, highest = 1.0, 0.0
    for n in ns:
        c = local_coverage(n, method)
        lowest = min(lowest, float(c.min()))
        # With fewer than two expected successes (or failures) an interval that contains p̂
        # covers with at least P(k = 0) = (1 - p)^n: over-coverage there is no method's choice.
        askable = np.minimum(n * PS, n * (1 - PS)) >= 2
        if n >= aggregate.AUTO_MIDP_BELOW and askable.any():
            highest = max(highest, float(c[askable].max()))
    return lowest, highest


GRID_N = [5, 6, 7, 8, 10, 12, 14, 15, 17, 20, 25, 30, 35, 39, 40, 45, 50, 60, 75, 100, 150,
          200, 300, 500, 750, 1000]  # fmt: skip


def test_auto_covers_94_to_96_percent_where_fixed_methods_do_not() -> None:
    """auto: local coverage >= 94% everywhere, <= 96% where asked; each fixed method fails one."""
    lowest, highest = _grid_summary(GRID_N, "auto")
    assert lowest >= 0.94
    assert highest <= 0.96
    for method in FIXED:
        low, high = _grid_summary(GRID_N, method)
        assert low < 0.94 or high > 0.96, method


@pytest.mark.slow
def test_auto_on_every_n_from_5_to_1000() -> None:
    """The same proof on every n from 5 to 300, and every fifth n up to 1000."""
    lowest, highest = _grid_summary([*range(5, 301), *range(305, 1001, 5)], "auto")
    assert lowest >= 0.94
    assert highest <= 0.96


def test_auto_picks_by_n_and_names_why() -> None:
    """The method string records the choice and its reason."""
    assert aggregate.ratio(2, 9, "auto").method == "mid-p (auto: n = 9 < 15)"
    assert aggregate.ratio(2, 23, "auto").method == "jeffreys (auto: n = 23 < 40)"
    assert aggregate.ratio(2, 40, "auto").method == "wilson (auto: n = 40 >= 40)"
    near = aggregate.mean([1.0] * 58 + [0.5, 0.0], "auto", bounds=(0.0, 1.0))
    assert near.method == "bca (auto: mean within 3 se of a bound)"
    middle = aggregate.mean(np.linspace(0.1, 0.9, 60), "auto", bounds=(0.0, 1.0))
    assert middle.method == "t (auto: n = 60 >= 30)"
    assert aggregate.geomean([1.0, 2.0, 4.0], "auto").method == "t (auto: logs of a geometric mean)"


def test_mid_p_bounds_solve_their_defining_equations() -> None:
    """L: P(X > k) + P(X = k)/2 = alpha/2 at L; U: P(X < k) + P(X = k)/2 = alpha/2 at U."""
    binom = scipy.stats.binom
    for n in (1, 4, 13, 60):
        for k in range(n + 1):
            est = aggregate.ratio(k, n, "mid-p")
            assert est.low is not None
            assert est.high is not None
            if k > 0:
                upper_tail = binom.sf(k, n, est.low) + 0.5 * binom.pmf(k, n, est.low)
                assert upper_tail == pytest.approx(0.025, abs=1e-12)
            else:
                assert est.low == 0.0
            if k < n:
                lower_tail = binom.cdf(k - 1, n, est.high) + 0.5 * binom.pmf(k, n, est.high)
                assert lower_tail == pytest.approx(0.025, abs=1e-12)
            else:
                assert est.high == 1.0


def test_bca_equals_scipy() -> None:
    """The BCa interval equals scipy.stats.bootstrap(method="BCa") on the same resamples.

    The resamples are drawn from the values in ascending order.
    """
    for seed in range(3):
        x = np.random.default_rng(seed).lognormal(size=27)
        est = aggregate.mean(x, "bca", seed=seed)
        ref = scipy.stats.bootstrap(
            (np.sort(x),), np.mean, method="BCa", n_resamples=2000, rng=np.random.default_rng(seed)
        ).confidence_interval
        assert (est.low, est.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert math.isfinite(aggregate.mean([0.0, 0.0, 1.0], "bca").high or math.nan)


def _exact_t_coverage(values: np.ndarray, bounds: tuple[float, float] | None) -> float:
    """The exact coverage of the t interval under resampling: every multinomial outcome."""
    from itertools import product

    from statsmodels.stats.proportion import proportion_confint

    distinct, counts = np.unique(values, return_counts=True)
    n, m = values.size, values.mean()
    law = scipy.stats.multinomial(n, counts / n)
    total = 0.0
    for drawn in product(range(n + 1), repeat=distinct.size - 1):
        if sum(drawn) > n:
            continue
        outcome = np.array([*drawn, n - sum(drawn)])
        sample = np.repeat(distinct, outcome)
        if np.count_nonzero(outcome) == 1 and bounds is not None:
            share = (sample[0] - bounds[0]) / (bounds[1] - bounds[0])
            lo, hi = proportion_confint(share * n, n, alpha=0.05, method="wilson")
            low = bounds[0] + min(lo, share) * (bounds[1] - bounds[0])
            high = bounds[0] + max(hi, share) * (bounds[1] - bounds[0])
        elif np.count_nonzero(outcome) == 1:
            low = high = sample[0]
        else:
            low, high = scipy.stats.t.interval(0.95, n - 1, sample.mean(), scipy.stats.sem(sample))
            if bounds is not None:
                low, high = max(low, bounds[0]), min(high, bounds[1])
        total += law.pmf(outcome) * (low <= m <= high)
    return float(total)


@pytest.mark.parametrize(
    ("values", "bounds"),
    [
        (np.array([0.0] * 19 + [1.0] * 5), (0.0, 1.0)),
        (np.array([0.0] * 30 + [0.5] * 6 + [1.0] * 4), None),
        (np.array([0.0] * 30 + [0.5] * 6 + [1.0] * 4), (0.0, 1.0)),
    ],
)
def test_a_receipt_of_few_distinct_values_has_the_exact_resampling_coverage(
    values: np.ndarray, bounds: tuple[float, float] | None
) -> None:
    """Values with few distinct ones are resampled as counts: the coverage is still exact.

    The reference sums, over every multinomial outcome of the resample, its probability
    (scipy) times whether scipy's t interval (statsmodels' Wilson bound for a resample that
    does not vary) covers the mean; the simulation must fall within four Monte Carlo errors.
    """
    assert np.unique(values).size * aggregate._COUNTED_ADVANTAGE <= values.size
    exact = _exact_t_coverage(values, bounds)
    coverage, reps = mean_coverage(values, "t", bounds=bounds, seed=3, repetitions=20_000)
    assert reps == 20_000
    assert abs(coverage - exact) <= 4 * math.sqrt(exact * (1 - exact) / reps)
