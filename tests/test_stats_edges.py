"""Edges of the statistics: ``auto`` at small n, judge corrections on small slices, the flag.

Each simulation is seeded and counts how often an interval contains a known truth; the
figures of docs/aggregation.md and docs/judges.md come from these tests (printed with ``-s``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
import pytest
import scipy.stats
from statsmodels.stats.proportion import proportion_confint

from itemscore import aggregate
from itemscore.metrics_builtin.judge._correction import prediction_powered

#: Repetitions of the small-n simulations: a coverage of 84% and one of 93% are then
#: eleven Monte Carlo standard errors apart.
REPS = 2000

#: Samplers of the small-n simulations, with their true mean.
DISTRIBUTIONS: dict[str, tuple[Callable[[np.random.Generator, int], np.ndarray], float]] = {
    "normal": (lambda rng, n: rng.normal(size=n), 0.0),
    "exponential": (lambda rng, n: rng.exponential(size=n), 1.0),
}

#: The coverage ``auto`` must reach for each distribution: Student t's on normal data, and on
#: exponential data at least the t interval's known coverage (it cannot do better: the skew
#: of five exponential values is beyond any symmetric interval), well above BCa's.
AUTO_FLOOR = {
    ("normal", 5): 0.93,
    ("normal", 10): 0.93,
    ("normal", 20): 0.93,
    ("exponential", 5): 0.85,
    ("exponential", 10): 0.87,
    ("exponential", 20): 0.895,
}


def _simulated(name: str, n: int, method: str) -> float:
    """The share of REPS seeded samples of ``n`` whose ``method`` interval holds the mean."""
    draw, truth = DISTRIBUTIONS[name]
    rng = np.random.default_rng((n, len(name)))
    hits = 0
    for rep in range(REPS):
        est = aggregate.mean(draw(rng, n), method, seed=rep)
        assert est.low is not None
        assert est.high is not None
        hits += est.low <= truth <= est.high
    return hits / REPS


@pytest.mark.parametrize(("name", "n"), sorted(AUTO_FLOOR))
def test_auto_mean_covers_at_small_n(name: str, n: int) -> None:
    """Below 30 values auto takes t, which covers 93%+ of normal means where BCa took 83-92%."""
    coverage = _simulated(name, n, "auto")
    print(f"auto, {name}, n={n}: {coverage:.3f}")
    assert coverage >= AUTO_FLOOR[(name, n)]


@pytest.mark.parametrize("n", [2, 5, 10, 20, 29])
def test_auto_mean_at_small_n_is_scipys_t_interval(n: int) -> None:
    """auto's interval below 30 values is scipy.stats.t.interval to 1e-12, whatever the skew."""
    for x in (
        np.random.default_rng(n).exponential(size=n),
        np.random.default_rng(n).normal(3.0, 2.0, size=n),
    ):
        est = aggregate.mean(x, "auto")
        ref = scipy.stats.t.interval(0.95, n - 1, loc=x.mean(), scale=scipy.stats.sem(x))
        assert est.method == f"t (auto: n = {n} < 30)"
        assert (est.low, est.high) == pytest.approx(ref, abs=1e-12)


def test_auto_mean_keeps_bca_only_near_a_bound_from_30_values() -> None:
    """From 30 values: BCa when the mean is within 3 se of a bound, t elsewhere (unchanged)."""
    near = aggregate.mean([1.0] * 58 + [0.5, 0.0], "auto", bounds=(0.0, 1.0))
    assert near.method == "bca (auto: mean within 3 se of a bound)"
    small_near = aggregate.mean([1.0] * 18 + [0.5, 0.0], "auto", bounds=(0.0, 1.0))
    assert small_near.method == "t (auto: n = 20 < 30)"
    assert small_near.high == 1.0  # clipped to the bound, as every bounded interval
    coverage, _ = aggregate.mean_coverage(np.arange(12.0), "auto")
    t_coverage, _ = aggregate.mean_coverage(np.arange(12.0), "t")
    assert coverage == t_coverage  # the receipt simulates the method auto took
    assert math.isfinite(coverage)


# -- every interval: the flag reads the worst coverage, not the coverage at the estimate -------


def _receipted(k: int, n: int, method: str = "wilson") -> aggregate.Estimate:
    est = aggregate.ratio(k, n, method)
    return attrs.evolve(est, extra=aggregate.coverage_receipt(est, kind="ratio"))


def _binomial_coverage(n: int, method: str, shares: np.ndarray) -> np.ndarray:
    """Exact coverage at each share from statsmodels' bounds and scipy's pmf, every k."""
    k = np.arange(n + 1)
    low, high = proportion_confint(k, n, alpha=0.05, method=method)
    pmf = scipy.stats.binom.pmf(k[None, :], n, shares[:, None])
    inside = (low[None, :] <= shares[:, None]) & (shares[:, None] <= high[None, :])
    return np.asarray((pmf * inside).sum(axis=1))


def test_zero_of_forty_is_flagged_by_its_worst_coverage() -> None:
    """0 of 40, Wilson: 100% at p̂ = 0 but 83.7% for shares just above it: flagged."""
    est = _receipted(0, 40)
    assert est.extra["coverage"] == 1.0
    assert est.high is not None
    shares = np.linspace(1e-9, est.high, 4001)
    worst = float(_binomial_coverage(40, "wilson", shares).min())
    assert worst < 0.84
    assert est.extra["coverage_min"] == pytest.approx(worst, abs=2e-3)
    assert aggregate.coverage_flag(est) == f"interval covers {100 * worst:.1f}% at worst (< 94%)"
    assert aggregate.coverage_shortfall(est) == f"{100 * worst:.1f}% at worst"


def test_the_flag_is_decided_on_coverage_min_for_every_exact_receipt() -> None:
    """A receipt at 95% at its estimate and 90% at worst is flagged; 95% and 94.5% is not."""
    made = aggregate.Estimate(value=0.3, low=0.2, high=0.4, n=80, method="wilson")
    high = attrs.evolve(made, extra={"coverage": 0.95, "coverage_min": 0.90})
    assert aggregate.coverage_flag(high) == "interval covers 90.0% at worst (< 94%)"
    fine = attrs.evolve(made, extra={"coverage": 0.95, "coverage_min": 0.945})
    assert aggregate.coverage_flag(fine) is None
    # Clopper-Pearson never covers less than its level: no flag even where Wilson has one.
    assert aggregate.coverage_flag(_receipted(0, 40, "clopper-pearson")) is None
    assert aggregate.coverage_flag(_receipted(0, 40, "wilson")) is not None


def test_a_simulated_receipt_is_still_flagged_only_beyond_its_noise() -> None:
    """Means carry no coverage_min: their flag still needs coverage_high below the floor."""
    made = aggregate.Estimate(value=0.3, low=0.2, high=0.4, n=80, method="t")
    noisy = {"coverage": 0.935, "coverage_high": 0.945, "coverage_reps": 2000.0}
    assert aggregate.coverage_flag(attrs.evolve(made, extra=noisy)) is None
    low = {**noisy, "coverage_high": 0.939}
    assert aggregate.coverage_flag(attrs.evolve(made, extra=low)) == (
        "interval covers 93.5% simulated (< 94%)"
    )


# -- prediction-powered inference: never of zero width, never silently NaN ----------------------


def test_ppi_of_values_that_do_not_vary_is_not_a_point() -> None:
    """[0.5] * 100 everywhere: Wilson over 100 for the judge's mean, rule of three for y - f."""
    found = prediction_powered([0.5] * 100, [0.5] * 100, [0.5] * 100)
    low, high = proportion_confint(50, 100, alpha=0.05, method="wilson")
    judge_half = 0.5 - low
    assert high - 0.5 == pytest.approx(judge_half, abs=1e-12)
    # Rule of three: 100 agreeing items leave at most a share 1 - 0.05^(1/100) that differ,
    # each by at most the width of the range (1), on either side.
    rectifier_half = 1.0 - 0.05 ** (1 / 100)
    half = math.hypot(judge_half, rectifier_half)
    assert found["ppi"] == 0.5
    assert found["ppi_low"] == pytest.approx(0.5 - half, abs=1e-12)
    assert found["ppi_high"] == pytest.approx(0.5 + half, abs=1e-12)


def test_ppi_when_only_the_slice_agrees_exactly() -> None:
    """Judge and human agree on all ten: the rectifier's interval is the rule of three, 0.26."""
    f_u = np.random.default_rng(3).integers(0, 5, 500) / 4
    found = prediction_powered(f_u, [0.25, 0.5] * 5, [0.25, 0.5] * 5)
    judge_half = 1.959963984540054 * f_u.std(ddof=1) / math.sqrt(500)
    share = 1.0 - 0.05 ** (1 / 10)
    assert share == pytest.approx(0.2589, abs=1e-4)
    half = math.hypot(judge_half, share)
    assert found["ppi_low"] == pytest.approx(max(f_u.mean() - half, 0.0), abs=1e-12)
    assert found["ppi_high"] == pytest.approx(f_u.mean() + half, abs=1e-12)


@pytest.mark.parametrize("which", ["judge_unlabelled", "judge_labelled", "human_labelled"])
def test_ppi_refuses_nan_and_names_the_input(which: str) -> None:
    """A NaN is refused with the input, the index and what to do; never a NaN interval."""
    inputs = {
        "judge_unlabelled": [0.25, 0.5, 0.75],
        "judge_labelled": [0.5, 0.75, 1.0],
        "human_labelled": [0.5, 0.5, 1.0],
    }
    inputs[which] = [*inputs[which][:2], math.nan]
    with pytest.raises(ValueError, match=rf"^`{which}` holds 1 value\(s\) that are NaN") as info:
        prediction_powered(**inputs)
    assert "at index 2" in str(info.value)


def test_ppi_refuses_a_slice_whose_two_sides_differ_in_length() -> None:
    """Human and judge values of the slice pair by position: unequal lengths are an error."""
    with pytest.raises(
        ValueError, match="`human_labelled` has 2 values but `judge_labelled` has 3"
    ):
        prediction_powered([0.5, 0.75], [0.5, 0.75, 1.0], [0.5, 0.5])
