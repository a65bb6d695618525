"""Tests for itemscore.stats._paired: the exact McNemar test at scale, its power and MDE, floors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.contingency_tables import mcnemar

from itemscore.stats._paired import (
    EXACT_POWER_LIMIT,
    bootstrap_p,
    connor_mde,
    exact_floor,
    is_constant,
    mcnemar_exact,
    mcnemar_mde,
    mcnemar_power,
    mover,
    sign_counts,
    sign_test,
    wilson_difference,
)

# --------------------------------------------------------------------------- exact McNemar


def _splits() -> list[tuple[int, int]]:
    """Discordant splits (b, c) up to b + c = 10^7, from p = 1 down to p far below 1e-12."""
    out = []
    for total in (11, 1_000, 100_001, 1_000_000, 5_000_000, 10_000_000):
        sd = math.sqrt(total) / 2
        for z in (0.0, 0.3, 1.0, 2.0, 3.0, 5.0, 8.0):
            k = max(0, int(total / 2 - z * sd))
            if (k, total - k) not in out:
                out.append((k, total - k))
    return out


@pytest.mark.parametrize(("b", "c"), _splits(), ids=lambda v: str(v))
def test_mcnemar_exact_agrees_with_statsmodels_up_to_ten_million(b: int, c: int) -> None:
    """The exact p equals statsmodels mcnemar(exact=True) and scipy binomtest to 1e-12."""
    expected = mcnemar([[0, b], [c, 0]], exact=True).pvalue
    p = mcnemar_exact(b, c)
    assert type(p) is float
    assert p == pytest.approx(expected, abs=1e-12, rel=1e-9)
    assert mcnemar_exact(c, b) == p  # two-sided: the order does not matter
    assert p == pytest.approx(scipy.stats.binomtest(min(b, c), b + c).pvalue, abs=1e-12, rel=1e-9)


def test_mcnemar_exact_small_tables_and_ties() -> None:
    """Ties and the empty table give 1; one-sided splits 2 / 2^n, as statsmodels."""
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(7, 7) == 1.0
    assert mcnemar_exact(0, 5) == 2 / 2**5
    for b in range(12):
        for c in range(12):
            expected = mcnemar([[3, b], [c, 4]], exact=True).pvalue
            assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-15)


def test_mcnemar_exact_underflows_to_zero_not_to_missing() -> None:
    """Above about 1,075 to 0 the p-value is below the smallest float: 0.0, a number."""
    assert mcnemar_exact(1100, 0) == 0.0
    assert mcnemar_exact(1000, 0) == pytest.approx(2.0 ** (1 - 1000), rel=1e-12)


# --------------------------------------------------------------------------- power and MDE


def _simulated_power(
    n: int, psi: float, delta: float, confidence: float, reps: int, seed: int
) -> float:
    """Share of simulated tables where statsmodels' exact McNemar p is below 1 - confidence."""
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, 1 - psi], size=reps)
    b, c = cells[:, 0], cells[:, 1]
    k, m = np.minimum(b, c), b + c
    # statsmodels' exact McNemar, vectorised: min(1, 2 * Binomial(m, 1/2).cdf(k)); 1 when m = 0.
    p = np.where(m > 0, np.minimum(1.0, 2.0 * scipy.stats.binom.cdf(k, m, 0.5)), 1.0)
    return float(np.mean(p < 1.0 - confidence))


MDE_CASES = [
    (18, 16, 0.95),  # the demo's exact_match row: 13 to 3 of 18
    (60, 15, 0.95),
    (200, 60, 0.95),
    (1_000, 200, 0.95),
    (400, 120, 0.99),
    (60_000, 15_000, 0.95),  # past EXACT_POWER_LIMIT: Connor's formula
]


@pytest.mark.parametrize(("n", "discordant", "confidence"), MDE_CASES, ids=str)
def test_mcnemar_mde_has_the_power_it_claims(
    n: int, discordant: int, confidence: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """The exact test's simulated power at the reported MDE is 0.80 (± 0.015, 20,000 tables)."""
    mde = mcnemar_mde(n, discordant, confidence)
    assert mde is not None
    psi = discordant / n
    assert 0 < mde <= psi
    power = _simulated_power(n, psi, mde, confidence, reps=20_000, seed=n)
    with capsys.disabled():
        print(
            f"\nMcNemar MDE n={n} discordant={discordant}: {mde:.4f}, simulated power {power:.3f}"
        )
    assert power == pytest.approx(0.80, abs=0.015)
    # Solved exactly up to the limit; past it, Connor's formula is within 0.005 of 0.80.
    tolerance = 1e-6 if discordant <= EXACT_POWER_LIMIT else 0.005
    assert mcnemar_power(n, psi, mde, confidence) == pytest.approx(0.80, abs=tolerance)


@pytest.mark.parametrize(
    ("n", "psi", "delta"), [(30, 0.4, 0.3), (250, 0.2, 0.08), (2000, 0.1, 0.0)]
)
def test_mcnemar_power_matches_simulation(n: int, psi: float, delta: float) -> None:
    """The exact power sum equals the simulated rejection rate (± 0.012), at δ = 0 the size."""
    exact = mcnemar_power(n, psi, delta, 0.95)
    assert exact == pytest.approx(_simulated_power(n, psi, delta, 0.95, 20_000, 7), abs=0.012)
    if delta == 0.0:
        assert exact < 0.05  # the exact test keeps its level


def test_mcnemar_mde_depends_on_the_discordant_share_only() -> None:
    """The observed split does not enter compare's MDE: only n and the discordant count do."""
    import itemscore

    def mde_of(a_only: int, b_only: int) -> float | None:
        items = [
            itemscore.ItemResult(
                id=str(k), model=model, expected="yes",
                output="no" if (model == "b" and k < a_only)
                or (model == "a" and a_only <= k < a_only + b_only) else "yes",
            )
            for k in range(120)
            for model in ("a", "b")
        ]  # fmt: skip
        (comparison,) = itemscore.compare(itemscore.score(items, ["exact_match"]), baseline="a")
        assert comparison.method.startswith("mcnemar")
        return comparison.mde

    assert mde_of(25, 5) == mde_of(15, 15) == mde_of(5, 25) == mcnemar_mde(120, 30, 0.95)
    assert mcnemar_mde(120, 30, 0.95) < mcnemar_mde(120, 40, 0.95)  # type: ignore[operator]


def test_mcnemar_mde_is_none_when_no_split_can_be_significant_often_enough() -> None:
    """20 pairs, 3 discordant: at least 6 are needed for p < 0.05, so no MDE; none without any."""
    assert mcnemar_mde(20, 3, 0.95) is None
    assert mcnemar_mde(20, 0, 0.95) is None
    assert mcnemar_power(20, 0.15, 0.15, 0.95) < 0.8


def test_connor_solves_connors_sample_size_relation() -> None:
    """Put back into n = (z_a·√ψ + z_b·√(ψ - δ²))² / δ², Connor's δ gives n again."""
    za, zb = scipy.stats.norm.isf(0.025), scipy.stats.norm.ppf(0.8)
    for n, psi in [(50, 0.3), (500, 0.1), (10_000, 0.45)]:
        delta = connor_mde(n, psi, 0.95)
        size = (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2
        assert size == pytest.approx(n, rel=1e-10)


def test_exact_mde_approaches_connor_at_large_n() -> None:
    """The exact test is conservative: its MDE is above Connor's, by < 0.4% at the switch."""
    n = 4 * EXACT_POWER_LIMIT
    exact = mcnemar_mde(n, EXACT_POWER_LIMIT, 0.95)
    closed = connor_mde(n, 0.25, 0.95)
    assert exact is not None
    assert closed < exact < closed * 1.004
    small = mcnemar_mde(100, 20, 0.95)
    assert small is not None
    assert small > connor_mde(100, 0.2, 0.95) * 1.02


# --------------------------------------------------------------------------- exact floors


def test_sign_test_is_the_binomial_test() -> None:
    """The sign test equals scipy's two-sided binomial test on the pairs that differ."""
    for plus, minus in [(5, 0), (9, 3), (20, 21), (0, 0)]:
        expected = scipy.stats.binomtest(plus, plus + minus).pvalue if plus + minus else 1.0
        assert sign_test(plus, minus) == pytest.approx(expected, abs=1e-12)


def test_exact_floor_is_the_most_extreme_sign_test() -> None:
    """2 / 2^m is what every pair one way gives in the sign test."""
    for m in range(30):
        assert exact_floor(m) == pytest.approx(sign_test(m, 0) if m else 1.0, rel=1e-12)


def test_bootstrap_p_never_goes_below_the_exact_floor() -> None:
    """All resamples above 0: 2/(B+1) alone, but at least 2/2^m with m differing pairs."""
    diffs = np.linspace(0.1, 0.9, 2000)
    assert bootstrap_p(diffs) == pytest.approx(2 / 2001)
    assert bootstrap_p(diffs, 3) == 0.25
    assert bootstrap_p(diffs, 40) == pytest.approx(2 / 2001)


def test_is_constant_sees_through_rounding() -> None:
    """(a + 0.1) - a differs by ulps between values of a: that is no spread."""
    a = np.array([0.2, 0.4, 0.5, 0.6, 0.8])
    diffs = (a + 0.1) - a
    assert np.ptp(diffs) > 0
    assert is_constant(diffs, 1.0)
    assert not is_constant(np.array([0.1, 0.1 + 1e-12]), 1.0)


def test_sign_counts_by_pair_and_by_cluster() -> None:
    """Pairs (or clusters) favouring each side, differences within rounding left out."""
    a = np.array([0.3, 0.1, 0.2, 0.0, 0.5])
    b = np.array([0.3, 0.2, 0.1, 0.0, 0.7])
    assert sign_counts(a, b) == (2, 1)
    codes = np.array([0, 0, 0, 1, 1])
    assert sign_counts(a, b, codes) == (1, 0)  # cluster 0 nets to 0 up to rounding
    a2, b2 = np.array([0.1, 0.2, 0.0]), np.array([0.0, 0.0, 0.3])
    assert sign_counts(a2, b2, np.array([0, 0, 0])) == (0, 0)


def test_wilson_difference_is_newcombe_without_correlation() -> None:
    """Square-and-add of two Wilson intervals: Newcombe's method 10 where φ = 0."""
    from itemscore.stats._paired import newcombe_paired

    # 0 both, 2 only b, 0 only a, 0 neither: an empty margin makes φ = 0.
    theta, low, high = newcombe_paired(0, 2, 0, 0)
    assert wilson_difference(0.0, 1.0, 2, 0.95) == pytest.approx((low, high), abs=1e-14)
    assert theta == 1.0
    wide = mover(0.1, (0.5, 0.4, 0.6), (0.6, 0.5, 0.7))
    assert wide == pytest.approx((0.1 - math.hypot(0.1, 0.1), 0.1 + math.hypot(0.1, 0.1)))


# --------------------------------------------------------------------------- Beta posterior


@pytest.mark.parametrize(("only_first", "only_second", "n"), [(3, 9, 40), (0, 5, 12), (7, 7, 60)])
def test_beta_posterior_matches_dirichlet_draws(only_first: int, only_second: int, n: int) -> None:
    """The quadrature's quantiles and P(second > first) equal a million Dirichlet draws."""
    from itemscore.stats._paired import beta_posterior_difference

    low, high, better = beta_posterior_difference(only_first, only_second, n)
    both = (n - only_first - only_second) // 2
    cells = np.array([both, only_first, only_second, n - both - only_first - only_second]) + 0.5
    draws = np.random.default_rng(1).dirichlet(cells, size=1_000_000)
    delta = draws[:, 2] - draws[:, 1]
    ref_low, ref_high = np.quantile(delta, [0.025, 0.975])
    assert (low, high) == pytest.approx((ref_low, ref_high), abs=2e-3)
    assert better == pytest.approx(float(np.mean(delta > 0)), abs=2e-3)


def test_compare_auto_takes_the_posterior_below_100_pairs() -> None:
    """ci_method auto: the posterior interval and P(B > A) for 40 pairs; Newcombe for 150."""
    from itemscore import ItemResult, compare, score

    def run(n: int) -> Any:
        rng = np.random.default_rng(n)
        a, b = rng.random(n) < 0.6, rng.random(n) < 0.75
        items = [
            ItemResult(id=str(i), output="y" if ok else "n", expected="y", model=model)
            for model, oks in (("a", a), ("b", b))
            for i, ok in enumerate(oks.tolist())
        ]
        return score(items, ["exact_match"], ci_method="auto")

    (small,) = compare(run(40), baseline="a")
    assert small.method == "mcnemar-exact, beta-posterior (auto: n = 40 < 100)"
    assert 0.0 < small.extra["p_b_better"] < 1.0
    assert small.ci_low is not None
    assert small.ci_high is not None
    assert small.ci_low <= small.difference <= small.ci_high
    (large,) = compare(run(150), baseline="a")
    assert large.method == "mcnemar-exact, newcombe-10 (auto: n = 150 >= 100)"
    assert "p_b_better" not in large.extra


@pytest.mark.slow
def test_the_posterior_interval_covers_its_difference() -> None:
    """Over 2,000 paired tables of 20 items, the 95% posterior interval covers 93-97%."""
    from itemscore.stats._paired import beta_posterior_difference

    rng = np.random.default_rng(7)
    probs = np.array([0.45, 0.10, 0.25, 0.20])  # both, only a, only b, neither
    truth = probs[2] - probs[1]
    tables = rng.multinomial(20, probs, size=2000)
    cache: dict[tuple[int, int], tuple[float, float, float]] = {}
    hits = 0
    for _, b, c, _ in tables.tolist():
        if (b, c) not in cache:
            cache[(b, c)] = beta_posterior_difference(b, c, 20)
        low, high, _ = cache[(b, c)]
        hits += low <= truth <= high
    assert 0.93 <= hits / 2000 <= 0.97
