"""Tests for itemscore.compare: parity with statsmodels/scipy, Newcombe's example, coverage."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import scipy.stats
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

import itemscore
from itemscore import Comparison, ConfigError, ItemResult, RunResult, compare, score
from itemscore.comparison import significant_leaders
from itemscore.metrics_builtin.f1 import F1
from itemscore.stats._paired import adjust_pvalues, mcnemar_exact, mde, newcombe_paired, paired_t
from itemscore.stats._tally import Tally

TOL = 1e-10


def _items(
    model: str,
    correct: np.ndarray,
    *,
    words: np.ndarray | None = None,
    clusters: list[str] | None = None,
    groups: list[str] | None = None,
) -> list[ItemResult]:
    """Items whose exact_match is ``correct[i]``; token_f1 varies with ``words``."""
    out = []
    for i, ok in enumerate(correct.tolist()):
        extra = "" if words is None else " x" * int(words[i])
        output = ("answer" if ok else "wrong") + extra
        kwargs: dict[str, Any] = {}
        if groups is not None:
            kwargs["group"] = groups[i]
        out.append(ItemResult(id=f"q{i}", output=output, expected="answer", model=model, **kwargs))
    return out


def _run(a: np.ndarray, b: np.ndarray, **kwargs: Any) -> RunResult:
    items = _items("a", a, **kwargs) + _items("b", b, **kwargs)
    return score(items, ["exact_match", "token_f1"], suite_id="t")


# --------------------------------------------------------------------------- parity


@pytest.mark.parametrize("seed", range(20))
def test_mcnemar_matches_statsmodels(seed: int) -> None:
    """The exact McNemar p-value equals statsmodels mcnemar(exact=True) to 1e-10."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 60, size=(2, 2))
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact(int(table[0, 1]), int(table[1, 0])) == pytest.approx(expected, abs=TOL)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    """No discordant pair: no evidence of a difference, p = 1."""
    assert mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize("seed", range(10))
def test_compare_ratio_uses_mcnemar_on_the_paired_table(seed: int) -> None:
    """compare() on exact_match gives statsmodels' McNemar p of the paired 2x2 table."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 120))
    a = rng.random(n) < 0.6
    b = np.where(rng.random(n) < 0.7, a, rng.random(n) < 0.5)
    (c,) = compare(_run(a, b), metrics=["exact_match"])
    table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
    assert c.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, abs=TOL)
    assert c.difference == pytest.approx(b.mean() - a.mean(), abs=TOL)
    assert (c.value_a, c.value_b) == pytest.approx((a.mean(), b.mean()), abs=TOL)
    assert c.n_pairs == n
    assert c.method == "mcnemar-exact, newcombe-10"


@pytest.mark.parametrize("seed", range(10))
def test_paired_t_matches_scipy(seed: int) -> None:
    """Paired t interval and p-value equal scipy.stats.ttest_rel to 1e-10."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 300))
    a = rng.normal(0.5, 0.2, n)
    b = a + rng.normal(0.03, 0.1, n)
    mean, se, low, high, p = paired_t(Tally.of(b - a))
    ref = scipy.stats.ttest_rel(b, a)
    ci = ref.confidence_interval(0.95)
    assert p == pytest.approx(ref.pvalue, abs=TOL)
    assert (low, high) == pytest.approx((ci.low, ci.high), abs=TOL)
    assert mean / se == pytest.approx(ref.statistic, abs=1e-8)


@pytest.mark.parametrize("seed", range(5))
def test_compare_mean_metric_is_ttest_rel(seed: int) -> None:
    """compare() on token_f1 (a mean) gives ttest_rel on the per-item values."""
    rng = np.random.default_rng(seed)
    n = 60
    a, b = rng.random(n) < 0.5, rng.random(n) < 0.6
    result = _run(a, b, words=rng.integers(0, 4, n))
    (c,) = compare(result, metrics=["token_f1"])
    va = [i.scores["token_f1"].value for i in result.items if i.model == "a"]
    vb = [i.scores["token_f1"].value for i in result.items if i.model == "b"]
    ref = scipy.stats.ttest_rel(vb, va)
    assert c.p_value == pytest.approx(ref.pvalue, abs=TOL)
    assert c.ci_low == pytest.approx(ref.confidence_interval().low, abs=TOL)
    assert c.method == "paired-t"


@pytest.mark.parametrize("method", ["holm", "bh"])
@pytest.mark.parametrize("seed", range(10))
def test_adjustments_match_multipletests(method: str, seed: int) -> None:
    """Holm and Benjamini-Hochberg equal statsmodels multipletests to 1e-10, ties included."""
    rng = np.random.default_rng(seed)
    p = rng.random(int(rng.integers(1, 30))) ** 3
    if p.size > 3:
        p[1] = p[2]
    ref = multipletests(p, method={"holm": "holm", "bh": "fdr_bh"}[method])[1]
    np.testing.assert_allclose(adjust_pvalues(p, method), ref, atol=TOL, rtol=0)


def test_newcombe_matches_the_paper() -> None:
    """Newcombe (1998), Table II, example (a) 36/12/2/0: method 10 gives 0.0569 to 0.3404."""
    theta, low, high = newcombe_paired(36, 12, 2, 0)
    assert theta == pytest.approx(0.2, abs=1e-12)
    assert (round(low, 4), round(high, 4)) == (0.0569, 0.3404)


def test_newcombe_matches_fagerland_et_al() -> None:
    """Fagerland, Lydersen & Laake (2017), Cavo et al. data: -0.0621 (-0.1186 to -0.0046)."""
    theta, low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(theta, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)


def test_newcombe_edges_stay_in_range() -> None:
    """All pairs agreeing, or all discordant one way, still give a proper interval in [-1, 1]."""
    for cells in [(10, 0, 0, 0), (0, 0, 0, 10), (0, 10, 0, 0), (0, 0, 10, 0), (1, 0, 0, 0)]:
        theta, low, high = newcombe_paired(*cells)
        assert -1.0 <= low <= theta <= high <= 1.0
        assert high > low


@pytest.mark.parametrize("seed", range(5))
def test_clustered_paired_difference_matches_statsmodels(seed: int) -> None:
    """With clusters, the paired difference's SE is statsmodels' OLS cluster SE."""
    rng = np.random.default_rng(seed)
    n, g = 150, 15
    codes = rng.integers(0, g, n)
    a = rng.random(n) < 0.5
    b = rng.random(n) < rng.uniform(0.3, 0.9, g)[codes]
    items = [
        attrs_evolve(item, metadata={}, cluster=f"c{codes[i % n]}")
        for i, item in enumerate(_items("a", a) + _items("b", b))
    ]
    result = score(items, ["exact_match"], suite_id="t")
    (c,) = compare(result)
    d = b.astype(float) - a.astype(float)
    fit = sm.OLS(d, np.ones((n, 1))).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    assert c.method == "cluster-paired-t"
    assert c.extra["se_cluster"] == pytest.approx(float(fit.bse[0]), abs=TOL)
    assert c.p_value == pytest.approx(float(fit.pvalues[0]), abs=TOL)
    low, high = fit.conf_int()[0]
    assert (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=TOL)


def attrs_evolve(item: ItemResult, **changes: Any) -> ItemResult:
    """``item`` with ``changes``; skips the test when items carry no ``cluster`` yet."""
    import attrs

    if "cluster" not in attrs.fields_dict(ItemResult):
        pytest.skip("ItemResult has no `cluster` field in this build")
    return attrs.evolve(item, **changes)


def test_mde_formula() -> None:
    """mde = (q(1 - alpha/2) + q(0.8)) * se, normal or t."""
    z = scipy.stats.norm.ppf
    assert mde(0.1, 0.95) == pytest.approx((z(0.975) + z(0.8)) * 0.1, abs=TOL)
    t = scipy.stats.t.ppf
    assert mde(0.1, 0.9, df=12) == pytest.approx((t(0.95, 12) + t(0.8, 12)) * 0.1, abs=TOL)


# --------------------------------------------------------------------------- coverage


SETTINGS = [(0.5, 0.5, 0.0), (0.6, 0.7, 0.3), (0.8, 0.85, 0.6), (0.3, 0.2, 0.5), (0.9, 0.95, 0.2)]


def _cells(p_a: float, p_b: float, rho: float) -> list[float]:
    both = p_a * p_b + rho * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    return [both, p_b - both, p_a - both, 1 - p_a - p_b + both]  # both, only b, only a, neither


@pytest.mark.parametrize(("p_a", "p_b", "rho"), SETTINGS)
def test_newcombe_covers_nominal(
    p_a: float, p_b: float, rho: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nominal 95% paired-difference intervals cover 93-97% at n = 200."""
    rng = np.random.default_rng(11)
    tables = rng.multinomial(200, _cells(p_a, p_b, rho), size=3000)
    truth = p_b - p_a
    hits = 0
    for both, only_b, only_a, neither in tables.tolist():
        _, low, high = newcombe_paired(both, only_b, only_a, neither)
        hits += low <= truth <= high
    coverage = hits / len(tables)
    with capsys.disabled():
        print(f"\nNewcombe coverage p_a={p_a} p_b={p_b} rho={rho}: {coverage:.3f}")
    assert 0.93 <= coverage <= 0.97


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.8])
def test_paired_t_covers_nominal(rho: float) -> None:
    """The paired t interval of a mean difference covers 93-97% at n = 200."""
    rng = np.random.default_rng(12)
    reps, n = 2000, 200
    z = rng.normal(size=(reps, n))
    a = scipy.stats.norm.cdf(z)
    b = scipy.stats.norm.cdf(rho * z + math.sqrt(1 - rho * rho) * rng.normal(size=(reps, n)))
    b = b**1.2  # a true difference: E[U^1.2] - E[U] = 1/2.2 - 1/2
    truth = 1 / 2.2 - 0.5
    hits = 0
    for row_a, row_b in zip(a, b):
        _, _, low, high, _ = paired_t(Tally.of(row_b - row_a))
        hits += low <= truth <= high
    assert 0.93 <= hits / reps <= 0.97


# --------------------------------------------------------------------------- compare()


@pytest.fixture(scope="module")
def demo() -> RunResult:
    return itemscore.run(itemscore.get_suite("demo-sentiment"))


def test_compare_every_metric_of_the_demo(demo: RunResult) -> None:
    """One comparison per label, with groups, Holm-adjusted group p-values, and the methods."""
    out = compare(demo)
    assert [c.metric for c in out] == ["accuracy", "f1", "answered_rate"]
    assert {c.baseline for c in out} == {"model-a"}
    assert {c.candidate for c in out} == {"model-b"}
    by = {c.metric: c for c in out}
    assert by["f1"].method == "paired-bootstrap"
    assert by["accuracy"].method == "mcnemar-exact, newcombe-10"
    for c in out:
        assert isinstance(c, Comparison)
        assert c.difference == pytest.approx(c.value_b - c.value_a)  # type: ignore[operator]
        assert c.ci_low <= c.difference <= c.ci_high  # type: ignore[operator]
        assert c.p_adjusted == c.p_value  # one pair: a family of one
        assert set(c.groups) == {"books", "electronics", "kitchen"}
        raw = [g.p_value for g in c.groups.values()]
        adjusted = [g.p_adjusted for g in c.groups.values()]
        np.testing.assert_allclose(adjusted, multipletests(raw, method="holm")[1], atol=TOL)
    assert demo.compare() == out


def test_f1_bootstrap_is_seeded_and_vectorised(demo: RunResult) -> None:
    """The f1 paired bootstrap is reproducible, uses 2000 resamples and depends on the seed."""
    first = compare(demo, metrics=["f1"])[0]
    again = compare(demo, metrics=["f1"])[0]
    other = compare(demo, metrics=["f1"], seed=1)[0]
    assert first == again
    assert first.extra["n_resamples"] == 2000
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)


def test_f1_paired_bootstrap_matches_its_own_bootstrap() -> None:
    """Each side's resampled F1 has the spread of F1's own bootstrap of that side."""
    rng = np.random.default_rng(0)
    labels = ["x", "y", "z"]
    metric = F1()
    metric.bind("f1")
    gold = rng.choice(labels, 400)
    pred_a = np.where(rng.random(400) < 0.7, gold, rng.choice(labels, 400))
    pred_b = np.where(rng.random(400) < 0.8, pred_a, gold)  # b fixes some of a's mistakes

    def scores(pred: np.ndarray) -> list[Any]:
        return [
            metric.ok(extra={"gold": g, "pred": p})
            if g == p
            else metric.fail(extra={"gold": g, "pred": p})
            for g, p in zip(gold.tolist(), pred.tolist())
        ]

    ctx = itemscore.MetricContext(label="f1")
    _, _, a, b = metric.paired_bootstrap(scores(pred_a), scores(pred_b), ctx, n_resamples=4000)
    own = metric.aggregate(scores(pred_a), ctx)
    low, high = np.percentile(a, [2.5, 97.5])
    assert low == pytest.approx(own.low, abs=0.015)
    assert high == pytest.approx(own.high, abs=0.015)
    assert np.corrcoef(a, b)[0, 1] > 0.5  # paired: the same resampled ids on both sides
    _, _, same_a, same_b = metric.paired_bootstrap(scores(pred_a), scores(pred_a), ctx)
    np.testing.assert_array_equal(same_a, same_b)


def test_identical_models_differ_by_nothing() -> None:
    """Two models with the same outputs: difference 0, p = 1, for every kind of metric."""
    correct = np.array([True, False] * 20)
    items = _items("a", correct) + _items("b", correct)
    result = score(items, ["exact_match", "token_f1", "f1"], suite_id="t")
    for c in compare(result):
        assert c.difference == 0
        assert c.p_value == 1.0
        assert c.ci_low <= 0 <= c.ci_high  # type: ignore[operator]


def test_skip_error_and_missing_ids_are_unpaired() -> None:
    """Pairs with a skip on either side, and ids one side lacks, are left out and counted."""
    a = [ItemResult(id=f"q{i}", output="answer", expected="answer", model="a") for i in range(10)]
    b = [ItemResult(id=f"q{i}", output="answer", expected="answer", model="b") for i in range(8)]
    b[0] = ItemResult(id="q0", output="answer", expected=None, model="b")  # skip
    result = score(a + b, ["exact_match"], suite_id="t")
    (c,) = compare(result)
    assert c.n_pairs == 7
    assert c.n_unpaired == 3  # one skip, two ids only a has


def test_compare_two_results() -> None:
    """compare(run_a, run_b): the only model of each, tagged when the names are equal."""
    rng = np.random.default_rng(4)
    a, b = rng.random(50) < 0.5, rng.random(50) < 0.8
    run_a = score(_items("m", a), ["exact_match"], suite_id="t")
    run_b = score(_items("m", b), ["exact_match"], suite_id="t")
    (c,) = compare(run_a, run_b)
    assert (c.baseline, c.candidate) == ("m @ a", "m @ b")
    (same,) = compare(_run(a, b), metrics=["exact_match"])
    assert (c.difference, c.p_value, c.ci_low) == (same.difference, same.p_value, same.ci_low)


def test_baseline_and_several_models() -> None:
    """With three models, baseline= compares the others to it; Holm adjusts across pairs."""
    rng = np.random.default_rng(8)
    items = []
    for model, share in (("a", 0.5), ("b", 0.7), ("c", 0.55)):
        items += _items(model, rng.random(80) < share)
    result = score(items, ["exact_match"], suite_id="t")
    every = compare(result)
    assert [(c.baseline, c.candidate) for c in every] == [("a", "b"), ("a", "c"), ("b", "c")]
    np.testing.assert_allclose(
        [c.p_adjusted for c in every],
        multipletests([c.p_value for c in every], method="holm")[1],
        atol=TOL,
    )
    against_b = compare(result, "b")
    assert [(c.baseline, c.candidate) for c in against_b] == [("b", "a"), ("b", "c")]
    assert compare(result, baseline="b") == against_b
    bh = compare(result, baseline="b", adjust="bh")
    assert {c.adjustment for c in bh} == {"bh"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "modl-a"}, "Did you mean 'model-a'"),
        ({"metrics": ["acuracy"]}, "Did you mean 'accuracy'"),
        ({"adjust": "holms"}, "Did you mean 'holm'"),
        ({"confidence": 1.5}, r"must be in \(0, 1\)"),
    ],
)
def test_compare_rejects_bad_options(demo: RunResult, kwargs: dict[str, Any], message: str) -> None:
    """Unknown models, labels and adjustments are errors with a did-you-mean."""
    with pytest.raises(ConfigError, match=message):
        compare(demo, **kwargs)


def test_significant_leaders(demo: RunResult) -> None:
    """A model leads a metric only where its lead over every other model is significant."""
    leaders = significant_leaders(demo)
    by = {c.metric: c for c in compare(demo)}
    for label, c in by.items():
        if c.p_value is not None and c.p_value < 0.05:
            assert leaders[label] == "model-a"
        else:
            assert label not in leaders
    one = score(_items("a", np.array([True, False])), ["exact_match"])
    assert significant_leaders(one) == {}


# --------------------------------------------------------------------------- f1 edges


def test_f1_of_one_item_is_not_certain() -> None:
    """One right item: F1 = 1, but the interval is Wilson's [0.21, 1], not [1, 1]."""
    result = score([ItemResult(id="1", output="a", expected="a")], ["f1"])
    m = result.measurements["default.f1"]
    assert m.value == 1.0
    assert m.ci_low == pytest.approx(0.2065, abs=1e-4)
    assert m.ci_method == "wilson"


def test_f1_cluster_bootstrap_is_wider_with_correlated_clusters() -> None:
    """With clusters in the context, whole clusters are resampled: a wider interval."""
    metric = F1()
    metric.bind("f1")
    rng = np.random.default_rng(1)
    cluster_right = rng.random(20) < 0.6
    scores = []
    clusters = []
    for c in range(20):
        for _ in range(10):
            gold = "x" if rng.random() < 0.5 else "y"
            pred = gold if cluster_right[c] else ("y" if gold == "x" else "x")
            extra = {"gold": gold, "pred": pred}
            scores.append(metric.ok(extra=extra) if gold == pred else metric.fail(extra=extra))
            clusters.append(f"c{c}")
    plain = metric.aggregate(scores, itemscore.MetricContext(label="f1"))
    ctx = SimpleNamespace(seed=0, confidence=0.95, clusters=clusters)
    clustered = metric.aggregate(scores, ctx)  # type: ignore[arg-type]
    assert clustered.value == plain.value
    assert clustered.method == "cluster-bootstrap"
    width = clustered.high - clustered.low  # type: ignore[operator]
    assert width > 2 * (plain.high - plain.low)  # type: ignore[operator]


@pytest.mark.parametrize("seed", range(5))
def test_clustered_ratio_difference_matches_statsmodels(seed: int) -> None:
    """The clustered paired difference (arrays in, before any item carries clusters)."""
    from itemscore.comparison._ratio_mean import _ratio

    rng = np.random.default_rng(50 + seed)
    n, g = 200, 25
    codes = rng.integers(0, g, n)
    a = rng.random(n) < 0.5
    b = rng.random(n) < rng.uniform(0.3, 0.9, g)[codes]
    out = _ratio(a, b, [f"c{c}" for c in codes], 0.95)
    fit = sm.OLS(b.astype(float) - a, np.ones((n, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes}, use_t=True
    )
    assert out["method"] == "cluster-paired-t"
    assert out["extra"]["se_cluster"] == pytest.approx(float(fit.bse[0]), abs=TOL)
    assert out["p_value"] == pytest.approx(float(fit.pvalues[0]), abs=TOL)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx(tuple(fit.conf_int()[0]), abs=TOL)
    assert out["extra"]["n_clusters"] == len(set(codes.tolist()))


# ----------------------------------------------------------------- statistics at the edges


def test_a_lead_whose_p_underflows_is_still_significant() -> None:
    """1,100 to 0 discordant: the exact p is below the smallest float, 0.0, and the lead is bold."""
    from itemscore.summary._summary import bold_cells

    n = 1100
    result = _run(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    by = {c.metric: c for c in compare(result)}
    assert by["exact_match"].p_value == 0.0
    assert by["token_f1"].p_value == 0.0  # every pair +1: the sign test, 2 / 2^1100
    assert significant_leaders(result) == {"exact_match": "b", "token_f1": "b"}
    assert {("b", "exact_match"), ("b", "token_f1")} <= bold_cells(result)


def _em_and_f1(a: np.ndarray, b: np.ndarray) -> dict[str, Comparison]:
    result = score(_items("a", a) + _items("b", b), ["exact_match", "f1"], suite_id="t")
    return {c.metric: c for c in compare(result)}


def test_a_degenerate_bootstrap_falls_back_to_the_sign_test() -> None:
    """Two items, b right and a wrong on both: every resample gives F1 1 - 0 = 1.

    The bootstrap would say p = 2/(B+1) = 0.001 with the interval [1, 1]; exact_match on the
    same items says p = 0.5. F1 now says the same, and names why.
    """
    by = _em_and_f1(np.array([False, False]), np.array([True, True]))
    em, f1 = by["exact_match"], by["f1"]
    assert em.p_value == 0.5
    assert f1.p_value == 0.5
    assert f1.method == (
        "sign-test, mover (paired-bootstrap degenerate: every resample gives one difference)"
    )
    assert f1.ci_low is not None
    assert f1.ci_high is not None
    assert f1.ci_low < f1.ci_high
    # Each side's own F1 interval is its Wilson bound: square-and-add is Newcombe's with φ = 0.
    assert (f1.ci_low, f1.ci_high) == pytest.approx((em.ci_low, em.ci_high), abs=1e-12)


def test_a_bootstrap_p_is_never_below_what_the_pairs_can_support() -> None:
    """5 pairs, 3 of them differing (all for b): no exact test can give less than 2/2^3."""
    by = _em_and_f1(np.array([True, True, False, False, False]), np.ones(5, dtype=bool))
    em, f1 = by["exact_match"], by["f1"]
    assert em.p_value == 0.25
    assert f1.p_value is not None
    assert f1.p_value >= 0.25
    assert f1.extra["n_differing"] == 3
    assert f1.method == "paired-bootstrap (p raised to 2/2^m, m differing pairs)"


def test_mcnemar_mde_does_not_shrink_as_the_difference_grows() -> None:
    """Same pairs and discordant pairs, split 10/10 or 2/18: the same MDE, below the share."""
    from itemscore.stats._paired import mcnemar_mde

    even = np.array([True] * 10 + [False] * 10 + [True] * 30 + [False] * 50)
    even_b = np.array([False] * 10 + [True] * 10 + [True] * 30 + [False] * 50)
    skew = np.array([True] * 2 + [False] * 18 + [True] * 30 + [False] * 50)
    skew_b = np.array([False] * 2 + [True] * 18 + [True] * 30 + [False] * 50)
    (c_even,) = compare(_run(even, even_b), metrics=["exact_match"])
    (c_skew,) = compare(_run(skew, skew_b), metrics=["exact_match"])
    assert c_even.mde == c_skew.mde == mcnemar_mde(100, 20, 0.95)
    assert c_even.mde is not None
    assert c_even.mde <= 0.20


def test_mcnemar_mde_is_empty_when_the_discordance_cannot_reach_the_power() -> None:
    """20 pairs, 3 discordant (the issue's MDE 0.247 with 0.15 discordant): no MDE at all."""
    a = np.array([True] * 2 + [False] + [True] * 10 + [False] * 7)
    b = np.array([False] * 2 + [True] + [True] * 10 + [False] * 7)
    (c,) = compare(_run(a, b), metrics=["exact_match"])
    assert c.extra["only_baseline"] + c.extra["only_candidate"] == 3
    assert c.mde is None


def _clustered_items(a: np.ndarray, b: np.ndarray, clusters: list[str]) -> RunResult:
    items = [
        attrs_evolve(item, cluster=clusters[i % len(clusters)])
        for i, item in enumerate(_items("a", a) + _items("b", b))
    ]
    return score(items, ["exact_match", "token_f1"], suite_id="t")


def test_one_cluster_falls_back_to_the_iid_test_and_says_so() -> None:
    """All items in one cluster: no cluster-robust SE; the McNemar test, named as a fallback."""
    rng = np.random.default_rng(3)
    a, b = rng.random(40) < 0.4, rng.random(40) < 0.7
    plain = {c.metric: c for c in compare(_run(a, b))}
    one = {c.metric: c for c in compare(_clustered_items(a, b, ["c"] * 40))}
    em = one["exact_match"]
    assert em.method == "mcnemar-exact, newcombe-10 (1 cluster: items taken as independent)"
    assert (em.p_value, em.ci_low, em.ci_high) == (
        plain["exact_match"].p_value,
        plain["exact_match"].ci_low,
        plain["exact_match"].ci_high,
    )
    assert one["token_f1"].method.endswith("(1 cluster: items taken as independent)")


def test_clusters_without_spread_use_the_cluster_sign_test() -> None:
    """4 clusters, each a one-item win for b: se is 0 (not 2e-17), p = 2/2^4, never 1e-49."""
    a = np.zeros(12, dtype=bool)
    b = np.array([True, False, False] * 4)
    clusters = [f"c{i // 3}" for i in range(12)]
    by = {c.metric: c for c in compare(_clustered_items(a, b, clusters))}
    em = by["exact_match"]
    assert em.p_value == pytest.approx(2 / 2**4, abs=1e-15)
    assert em.extra["se_cluster"] == 0.0
    assert em.method == ("cluster-sign-test, cluster-wilson-bound (no spread between clusters)")
    assert em.ci_low is not None
    assert em.ci_high is not None
    assert em.ci_low < em.difference < em.ci_high  # type: ignore[operator]
    assert by["token_f1"].p_value == em.p_value


def test_differences_equal_up_to_rounding_are_no_spread() -> None:
    """b = a + 0.1 per item: the differences differ by ulps, and paired t said p = 1e-63."""
    from itemscore.comparison._ratio_mean import _mean

    a = np.array([0.2, 0.4, 0.5, 0.6, 0.8])
    out = _mean(a, a + 0.1, None, 0.95, (0.0, 1.0))
    assert out["method"] == "sign-test, newcombe-wilson-bound"
    assert out["p_value"] == pytest.approx(2 / 2**5, abs=1e-15)
    assert out["ci_low"] < out["difference"] < out["ci_high"]


def test_the_floor_counts_differing_pairs_in_long_columns_and_in_lists() -> None:
    """2,000 pairs of which 4 differ: the count reaches past the first few hundred pairs."""
    from itemscore.comparison._bootstrap import _differing_pairs

    a = np.array([True, False] * 1000)
    b = a.copy()
    b[[1, 777, 1501, 1999]] = True
    by = _em_and_f1(a, b)
    assert by["exact_match"].p_value == 0.125
    assert by["f1"].p_value is not None
    assert by["f1"].p_value >= 0.125
    assert by["f1"].extra["n_differing"] == 4
    f1 = F1()
    f1.bind("f1")
    list_a = [f1.ok() if ok else f1.fail() for ok in a.tolist()]
    list_b = [f1.ok() if ok else f1.fail() for ok in b.tolist()]
    rows = np.arange(2000)
    assert _differing_pairs(list_a, list_b, rows, 100) == 4
    assert _differing_pairs(list_a, list_b, rows, 3) == 3  # stops at the limit


def test_every_fallback_gives_plain_floats() -> None:
    """Degenerate, floored, clustered and one-cluster comparisons hold Python floats only."""
    results = [
        score(
            _items("a", np.zeros(2, dtype=bool)) + _items("b", np.ones(2, dtype=bool)),
            ["exact_match", "f1", "token_f1"],
            suite_id="t",
        ),
        _clustered_items(
            np.zeros(12, dtype=bool),
            np.array([True, False, False] * 4),
            [f"c{i // 3}" for i in range(12)],
        ),
        _clustered_items(np.array([True, False] * 10), np.ones(20, dtype=bool), ["c"] * 20),
    ]
    names = ("value_a", "value_b", "difference", "ci_low", "ci_high", "p_value", "mde")
    for result in results:
        for c in compare(result):
            for name in names:
                value = getattr(c, name)
                assert value is None or type(value) is float, (c.method, name, type(value))
            assert all(type(v) is float for v in c.extra.values()), c.extra


def test_the_loop_bootstrap_gives_the_same_resamples_from_a_score_column() -> None:
    """A metric's own aggregate resampled from score columns: the floats of the list path."""
    import numpy as np

    from itemscore import Estimate, ItemScore, Metric, MetricContext
    from itemscore._columns import ScoreColumn
    from itemscore.comparison._bootstrap import _loop_resamples

    class OwnMean(Metric):
        metric_id = "test_compare_own_mean"
        aggregation = "mean"

        def score_item(self, item: ItemResult, ctx: MetricContext) -> ItemScore:
            return self.ok(float(len(item.output or "")))

        def aggregate(self, scores: Any, ctx: MetricContext) -> Estimate:
            return super().aggregate(scores, ctx)

    metric = OwnMean()
    a = [metric.ok(float(i % 7)) for i in range(50)] + [metric.skip("x")]
    b = [metric.ok(float(i % 5)) for i in range(50)] + [metric.fail(0.0)]
    ctx = MetricContext(seed=3)
    listed = _loop_resamples(metric, a, b, ctx, 40, None)
    columns = _loop_resamples(
        metric, ScoreColumn.from_scores("m", a), ScoreColumn.from_scores("m", b), ctx, 40, None
    )
    assert np.array_equal(listed[0], columns[0], equal_nan=True)
    assert np.array_equal(listed[1], columns[1], equal_nan=True)
