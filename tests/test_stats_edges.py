"""Edges of the statistics: ``auto`` at small n, judge corrections on small slices, the flag.

Each simulation is seeded and counts how often an interval contains a known truth; the
figures of docs/aggregation.md and docs/judges.md come from these tests (printed with ``-s``).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator

import attrs
import numpy as np
import pytest
import scipy.stats
from rich.console import Console
from statsmodels.stats.proportion import proportion_confint

from itemscore import ItemResult, aggregate, score
from itemscore._terminal import result_tables
from itemscore.metrics_builtin.judge._correction import ppi_receipt, prediction_powered
from itemscore.metrics_builtin.judge.stub import StubReply, StubRequest, StubServer

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
    judge_half = scipy.stats.t.ppf(0.975, 499) * f_u.std(ddof=1) / math.sqrt(500)
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


# -- prediction-powered inference on a small human-labelled slice -------------------------------

#: A 1-5 judge that grades every 5 as a 3: the human grades' shares, and the true mean on [0, 1].
GRADE_SHARES = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
GRADE_TRUTH = float(np.dot(GRADE_SHARES, np.arange(5) / 4))


def _paper_interval(f_u: np.ndarray, f_l: np.ndarray, y_l: np.ndarray) -> tuple[float, float]:
    """The interval PPI gave before: ``θ ± z·se``, nothing more (written out here)."""
    r = y_l - f_l
    theta = f_u.mean() + r.mean()
    se = math.sqrt(f_u.var(ddof=1) / f_u.size + r.var(ddof=1) / r.size)
    return theta - 1.959963984540054 * se, theta + 1.959963984540054 * se


@pytest.mark.parametrize(("labels", "before_below"), [(10, 0.85), (20, 0.92), (30, None)])
def test_ppi_covers_with_a_small_labelled_slice(labels: int, before_below: float | None) -> None:
    """1,000 items, 10-30 labelled, every 5 graded 3: PPI covers 93%+ where it covered 78-89%.

    The slices without a single 5 (20% of those of 10) used to give the rectifier a variance
    of 0 and an interval at the judge's biased mean; the rule-of-three bound and Welch's t
    quantile now cover them.
    """
    rng = np.random.default_rng(labels)
    human = rng.choice(5, size=(REPS, 1000), p=GRADE_SHARES)
    y = human / 4
    f = np.where(human == 4, 2, human) / 4
    before = after = 0
    for rep in range(REPS):
        f_u, f_l, y_l = f[rep, labels:], f[rep, :labels], y[rep, :labels]
        low, high = _paper_interval(f_u, f_l, y_l)
        before += low <= GRADE_TRUTH <= high
        found = prediction_powered(f_u, f_l, y_l)
        after += found["ppi_low"] <= GRADE_TRUTH <= found["ppi_high"]
    print(f"PPI, {labels} labels: before {before / REPS:.3f}, now {after / REPS:.3f}")
    if before_below is not None:
        assert before / REPS < before_below
    assert after / REPS >= 0.93


def test_ppi_with_spread_on_both_sides_is_welchs_t_interval() -> None:
    """θ ± t(df)·se with Welch's df: scipy's ttest_ind(f_u, -r, equal_var=False) to 1e-12."""
    rng = np.random.default_rng(8)
    f_u = rng.integers(0, 5, 300) / 4
    f_l = rng.integers(0, 5, 12) / 4
    y_l = np.clip(f_l + rng.choice([-0.25, 0.0, 0.25, 0.5], 12), 0.0, 1.0)
    found = prediction_powered(f_u, f_l, y_l)
    ref = scipy.stats.ttest_ind(f_u, -(y_l - f_l), equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert found["ppi_df"] == pytest.approx(ref.df, abs=1e-9)
    assert found["ppi_df"] < 20  # the slice's 12 items, not the 300, set the quantile
    assert (found["ppi_low"], found["ppi_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert found["ppi"] == pytest.approx(f_u.mean() + (y_l - f_l).mean(), abs=1e-15)


def _direct_receipt(f_u: np.ndarray, f_l: np.ndarray, y_l: np.ndarray, reps: int) -> float:
    """Resample both sides with replacement, call prediction_powered, count (a plain loop)."""
    rng = np.random.default_rng(99)
    truth = f_u.mean() + (y_l - f_l).mean()
    hits = 0
    for _ in range(reps):
        u = f_u[rng.integers(0, f_u.size, f_u.size)]
        pick = rng.integers(0, f_l.size, f_l.size)
        found = prediction_powered(u, f_l[pick], y_l[pick])
        hits += found["ppi_low"] <= truth <= found["ppi_high"]
    return hits / reps


#: A judge that grades almost everything 1 (0 on [0, 1]): 47 judge-only items, 44 of them 1,
#: and a slice of 55 where the human disagrees 4 times. The mean sits near the bound with a
#: long right tail, where a symmetric interval covers about 88%: the receipt must say so.
ALONE = np.array([0.0] * 44 + [0.25, 0.25, 1.0])
SLICE_JUDGE = np.array([0.0] * 51 + [0.25, 0.25, 0.0, 0.0])
SLICE_HUMAN = np.array([0.0] * 51 + [0.0, 0.0, 0.25, 0.5])


def test_the_ppi_receipt_is_the_coverage_of_its_resamples() -> None:
    """The receipt agrees with a loop over resamples to its Monte Carlo error, and is seeded."""
    receipt = ppi_receipt(ALONE, SLICE_JUDGE, SLICE_HUMAN, seed=1)
    assert receipt == ppi_receipt(ALONE, SLICE_JUDGE, SLICE_HUMAN, seed=1)
    assert receipt["ppi_coverage_reps"] == 2000
    direct = _direct_receipt(ALONE, SLICE_JUDGE, SLICE_HUMAN, 2000)
    noise = math.sqrt(2 * direct * (1 - direct) / 2000)
    assert abs(receipt["ppi_coverage"] - direct) < 4 * noise
    assert receipt["ppi_coverage"] < receipt["ppi_coverage_high"] < 0.94


def test_a_small_slice_of_the_scenario_gets_a_clean_receipt() -> None:
    """Ten labels, one 5 graded 3 among them, 1,000 judge-only items: far above the floor."""
    alone = np.random.default_rng(0).integers(0, 5, 1000) / 4
    receipt = ppi_receipt(alone, np.full(10, 0.5), np.array([1.0] + [0.5] * 9))
    assert receipt["ppi_coverage"] >= 0.95


@pytest.fixture(scope="module")
def kind_judge() -> Iterator[StubServer]:
    """A 1-5 judge that grades item i as GRADED[i]."""

    def grade(request: StubRequest) -> StubReply:
        index = int(request.last_message.split("<item-")[1].split(">")[0])
        return StubReply.verdict(int(GRADED[index]))

    with StubServer(grade) as stub:
        yield stub


#: The judge's grades on 1-5: the slice above, then the judge-only items.
GRADED = np.concatenate([SLICE_JUDGE, ALONE]) * 4 + 1


def test_the_corrected_row_carries_its_receipt_and_is_flagged(kind_judge: StubServer) -> None:
    """The judge-corrected row has coverage, coverage_high, coverage_reps; below 94%: ‡."""
    items = [
        ItemResult(
            id=f"q{i}",
            output=f"answer <item-{i}>",
            metadata={"human": int(SLICE_HUMAN[i] * 4 + 1)} if i < SLICE_HUMAN.size else {},
        )
        for i in range(GRADED.size)
    ]
    judge = {"name": "llm_judge", "model": "stub", "base_url": kind_judge.base_url,
             "api_key_env": None, "cache": False, "scale": "1-5"}  # fmt: skip
    result = score(items, [judge])
    naive = result.measurements["default.llm_judge"]
    row = naive.derived["llm_judge_corrected"]
    receipt = ppi_receipt(ALONE, SLICE_JUDGE, SLICE_HUMAN, seed=result.settings.seed)
    assert row.extra["coverage"] == receipt["ppi_coverage"]
    assert row.extra["coverage_high"] == receipt["ppi_coverage_high"] < 0.94
    assert row.extra["coverage_reps"] == 2000
    # The naive row keeps it under the corrected score's prefix, never as its own receipt.
    assert naive.extra["ppi_coverage"] == receipt["ppi_coverage"]
    assert naive.extra.get("coverage") != receipt["ppi_coverage"]
    flag = aggregate.coverage_flag(row)
    assert flag == f"interval covers {100 * receipt['ppi_coverage']:.1f}% simulated (< 94%)"
    console = Console(width=300, file=io.StringIO(), color_system=None)
    for table in result_tables(result, width=300):
        console.print(table)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    corrected = next(line for line in text.splitlines() if "judge-corrected" in line)
    assert "\u2021[" in corrected
