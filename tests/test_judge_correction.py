"""Judge-corrected scores: Rogan-Gladen and prediction-powered inference against a known truth.

Each simulation draws 2,000 benchmarks whose true labels and judge errors are known, scores
them as the judge would, and counts how often each interval contains the truth. The figures
of docs/judges.md come from these tests (printed with ``-s``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from itemscore import ItemScore, MetricContext
from itemscore.metrics_builtin.judge import LlmJudge
from itemscore.metrics_builtin.judge._correction import prediction_powered, rogan_gladen

REPETITIONS = 2000

#: (true pass rate, judge sensitivity, judge specificity, items, human-labelled slice)
SCENARIOS = [
    (0.6, 0.85, 0.90, 1000, 200),
    (0.1, 0.90, 0.90, 1000, 200),
    (0.8, 0.90, 0.70, 2000, 150),
]


@pytest.mark.slow
@pytest.mark.parametrize(("theta", "se", "sp", "n", "m"), SCENARIOS)
def test_rogan_gladen_covers_where_the_naive_interval_misses(
    theta: float, se: float, sp: float, n: int, m: int
) -> None:
    """The judge's own Wilson interval misses the truth; the corrected one covers 94-96%."""
    rng = np.random.default_rng(int(1000 * theta + m))
    truth = rng.random((REPETITIONS, n)) < theta
    noise = rng.random((REPETITIONS, n))
    judge = np.where(truth, noise < se, noise >= sp)
    naive = corrected = 0
    for r in range(REPETITIONS):
        k = int(judge[r].sum())
        low, high = proportion_confint(k, n, method="wilson")
        naive += low <= theta <= high
        found = rogan_gladen(int(judge[r, m:].sum()), n - m, truth[r, :m], judge[r, :m], seed=r)
        corrected += found["corrected_low"] <= theta <= found["corrected_high"]
    print(f"theta={theta} Se={se} Sp={sp} n={n} slice={m}: naive {naive / REPETITIONS:.3f}, "
          f"corrected {corrected / REPETITIONS:.3f}")  # fmt: skip
    assert naive / REPETITIONS < 0.5
    assert 0.94 <= corrected / REPETITIONS <= 0.96


def test_rogan_gladen_point_and_rates_are_the_formula() -> None:
    """Se, Sp and θ = (q + Sp - 1)/(Se + Sp - 1) from the counts, computed by hand here."""
    human = [1] * 40 + [0] * 20
    judge = [1] * 34 + [0] * 6 + [1] * 3 + [0] * 17
    found = rogan_gladen(300, 500, human, judge)
    se, sp, q = 34 / 40, 17 / 20, 300 / 500
    assert found["judge_sensitivity"] == pytest.approx(se, abs=1e-15)
    assert found["judge_specificity"] == pytest.approx(sp, abs=1e-15)
    assert found["corrected"] == pytest.approx((q + sp - 1) / (se + sp - 1), abs=1e-15)
    assert found["corrected_low"] < found["corrected"] < found["corrected_high"]


def test_a_judge_no_better_than_chance_is_not_corrected() -> None:
    """Se + Sp <= 1: the formula means nothing, so there is no corrected score."""
    found = rogan_gladen(50, 100, [1, 1, 0, 0], [1, 0, 1, 0])
    assert "corrected" not in found
    assert found["judge_sensitivity"] == 0.5


def test_prediction_powered_covers_where_the_naive_interval_misses() -> None:
    """A 1-5 judge one point too kind a third of the time: PPI covers 94-96%, naive misses."""
    rng = np.random.default_rng(23)
    n, m = 1000, 150
    probs = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    theta = float(np.dot(probs, (np.arange(1, 6) - 1) / 4))
    naive = ppi = 0
    for _ in range(REPETITIONS):
        human = rng.choice(np.arange(1, 6), size=n, p=probs)
        kind = rng.random(n) < 1 / 3
        judge = np.clip(human + kind, 1, 5)
        y, f = (human - 1) / 4, (judge - 1) / 4
        half = 1.959963984540054 * f.std(ddof=1) / math.sqrt(n)
        naive += f.mean() - half <= theta <= f.mean() + half
        found = prediction_powered(f[m:], f[:m], y[:m])
        ppi += found["ppi_low"] <= theta <= found["ppi_high"]
    print(f"1-5 scale, n={n} slice={m}: naive {naive / REPETITIONS:.3f}, "
          f"ppi {ppi / REPETITIONS:.3f}")  # fmt: skip
    assert naive / REPETITIONS < 0.5
    assert 0.94 <= ppi / REPETITIONS <= 0.96


def test_prediction_powered_is_the_paper_formula() -> None:
    """θ = mean f(unlabelled) + mean(y - f)(labelled); se from both variances."""
    f_u = [0.5, 0.75, 1.0, 0.25, 0.5]
    f_l = [0.5, 1.0, 0.75]
    y_l = [0.25, 1.0, 0.5]
    found = prediction_powered(f_u, f_l, y_l)
    rect = np.subtract(y_l, f_l)
    assert found["ppi"] == pytest.approx(np.mean(f_u) + rect.mean(), abs=1e-15)
    se = math.sqrt(np.var(f_u, ddof=1) / 5 + np.var(rect, ddof=1) / 3)
    assert found["ppi_se"] == pytest.approx(se, abs=1e-15)


def _judge(scale: str) -> LlmJudge:
    return LlmJudge(
        model="m", base_url="http://127.0.0.1:9", api_key_env=None, cache=False, scale=scale
    )


def test_the_measurement_carries_the_corrected_score_beside_the_naive_one() -> None:
    """llm_judge's aggregate adds Se, Sp and the corrected pass rate, the method named."""
    metric = _judge("pass_fail")
    metric.bind("judge")
    scores = []
    rng = np.random.default_rng(4)
    for i in range(300):
        passed = bool(rng.random() < 0.7)
        extra: dict[str, object] = {"verdict": "pass" if passed else "fail"}
        if i < 60:
            extra["human"] = 1.0 if (passed if rng.random() < 0.85 else not passed) else 0.0
        status = "ok" if passed else "fail"
        scores.append(ItemScore(metric="judge", value=float(passed), status=status, extra=extra))
    estimate = metric.aggregate(scores, MetricContext())
    extra = estimate.extra
    human = [s.extra["human"] for s in scores[:60]]
    judged = [float(s.extra["verdict"] == "pass") for s in scores[:60]]
    expected = rogan_gladen(int(sum(s.value or 0 for s in scores[60:])), 240, human, judged)
    for key, value in expected.items():
        assert extra[key] == pytest.approx(value, abs=1e-15)
    assert extra["corrected_method[rogan-gladen-jeffreys]"] == 1.0
    assert extra["n_judge_only"] == 240
    assert estimate.value == pytest.approx(np.mean([s.value for s in scores]))


def test_a_numeric_scale_gets_the_prediction_powered_mean() -> None:
    """On 1-5, the human grade is rescaled to [0, 1] like the judge's and PPI is reported."""
    metric = _judge("1-5")
    metric.bind("judge")
    scores = []
    for i, (verdict, human) in enumerate([(5, 4), (3, 3), (4, 2), (2, 2), (5, None), (1, None),
                                          (3, None), (4, None)]):  # fmt: skip
        extra: dict[str, object] = {"verdict": float(verdict)}
        if human is not None:
            extra["human"] = float(human)
        scores.append(ItemScore(metric="judge", value=(verdict - 1) / 4, status="ok",
                                extra=extra))  # fmt: skip
        assert i < 8
    extra = metric.aggregate(scores, MetricContext()).extra
    expected = prediction_powered([1.0, 0.0, 0.5, 0.75], [1.0, 0.5, 0.75, 0.25],
                                  [0.75, 0.5, 0.25, 0.25])  # fmt: skip
    assert extra["ppi"] == pytest.approx(expected["ppi"], abs=1e-15)
    assert extra["corrected_method[prediction-powered]"] == 1.0
